"""One translation unit parsed by libclang, in the passes the deep checks read.

Deep mode asks what the ROCm build compiles, so the main passes are HIP's: the device
pass (`--cuda-device-only`: device code, real kernel symbols) and the host pass
(`--cuda-host-only`: launches, host code, kernel stubs), both with `__HIP_PLATFORM_AMD__`
and `USE_ROCM` defined. The CUDA passes are parsed only when a project file mentions
`__CUDA_ARCH__`, to see which macros tell CUDA's device pass from its host pass (P001).

The PyPI `libclang` wheel ships `libclang.so` but none of clang's resource headers, so
every pass force-includes `prelude.h`, shadows the CUDA runtime headers (and the HIP ones,
unless the compile command names a ROCm include directory) with empty stand-ins, and
takes `<stddef.h>` and friends from gcc's include directory.
"""

from __future__ import annotations

import ctypes
import functools
import subprocess
from dataclasses import dataclass
from pathlib import Path

from portlint.deep.compile_db import CompileFlags

HERE = Path(__file__).resolve().parent
PRELUDE = HERE / "prelude.h"
CUDA_STAND_INS = HERE / "include" / "cuda"
ROCM_STAND_INS = HERE / "include" / "rocm"
GPU_ARCH = "gfx90a"  # a 64-lane CDNA target: `__GFX9__`, `__AMDGCN_WAVEFRONT_SIZE__` 64
CUDA_ARCH = "sm_80"


@dataclass(unsafe_hash=True)
class Pass:
    name: str
    flags: tuple[str, ...]


_HIP = ("-x", "hip", "-nogpuinc", "-nogpulib", f"--offload-arch={GPU_ARCH}", "-D__HIP_PLATFORM_AMD__", "-DUSE_ROCM")
_CUDA = ("-x", "cuda", "-nocudainc", "-nocudalib", f"--cuda-gpu-arch={CUDA_ARCH}")
HIP_DEVICE = Pass("hip-device", (*_HIP, "--cuda-device-only"))
HIP_HOST = Pass("hip-host", (*_HIP, "--cuda-host-only"))
CUDA_DEVICE = Pass("cuda-device", (*_CUDA, "--cuda-device-only"))
CUDA_HOST = Pass("cuda-host", (*_CUDA, "--cuda-host-only"))

# clang's binary operator kinds (`clang_getCursorBinaryOperatorKind`, CX_BinaryOperatorKind).
MUL, DIV, REM, ADD, SUB, SHL, SHR = 3, 4, 5, 6, 7, 8, 9
EQ, NE, AND, XOR, OR, ASSIGN = 15, 16, 17, 18, 19, 22
COMPOUND_ASSIGNMENTS = frozenset(range(23, 33))
_EVAL_INT, _EVAL_STRING = 1, 4


class LibclangUnavailable(Exception):
    """libclang could not be imported or loaded: one line for the user."""


class ParseFailure(Exception):
    """A translation unit libclang could not parse well enough to judge: one line."""


@functools.cache
def cindex():
    """The `clang.cindex` module with `libclang.so` loaded and the few C functions the
    Python bindings do not wrap (constant evaluation, operator kinds) declared."""
    try:
        from clang import cindex as module

        lib = module.conf.lib
    except Exception as exc:  # noqa: BLE001 - ImportError, LibclangError, OSError: all mean "no libclang"
        raise LibclangUnavailable(f"{type(exc).__name__}: {exc}".splitlines()[0]) from None
    for name, argtypes, restype in (
        ("clang_Cursor_Evaluate", [module.Cursor], ctypes.c_void_p),
        ("clang_EvalResult_getKind", [ctypes.c_void_p], ctypes.c_int),
        ("clang_EvalResult_isUnsignedInt", [ctypes.c_void_p], ctypes.c_uint),
        ("clang_EvalResult_getAsLongLong", [ctypes.c_void_p], ctypes.c_longlong),
        ("clang_EvalResult_getAsUnsigned", [ctypes.c_void_p], ctypes.c_ulonglong),
        ("clang_EvalResult_getAsStr", [ctypes.c_void_p], ctypes.c_char_p),
        ("clang_EvalResult_dispose", [ctypes.c_void_p], None),
        ("clang_getCursorBinaryOperatorKind", [module.Cursor], ctypes.c_int),
    ):
        function = getattr(lib, name, None)
        if function is None:
            raise LibclangUnavailable(f"libclang lacks {name} (libclang>=18 is needed)")
        function.argtypes, function.restype = argtypes, restype
    _tolerate_unknown_kinds(module)
    return module


def _tolerate_unknown_kinds(module) -> None:
    """The bindings raise ValueError ("Unknown template argument kind 32") for any cursor,
    type or template-argument kind libclang has and they lack (`_Float16`, HIP's `__half`,
    is type kind 32): a kind they do not know becomes a placeholder that equals no known
    kind, so checks skip that node instead of losing the whole unit."""
    base = module.BaseEnumeration
    if getattr(base, "_portlint_tolerant", False):
        return
    known = base.from_id.__func__

    def from_id(cls, id):
        try:
            return known(cls, id)
        except ValueError:
            placeholder = cls(id)  # registers itself in `cls._kinds`
            setattr(cls, f"UNKNOWN_{id}", placeholder)  # `.name` looks kinds up in the class
            return placeholder

    base.from_id = classmethod(from_id)
    base._portlint_tolerant = True


@functools.cache
def _index():
    return cindex().Index.create()


@functools.cache
def gcc_include_dir() -> str | None:
    """gcc's own headers (`<stddef.h>`, `<stdint.h>`): the stand-in for clang's resource directory."""
    try:
        out = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    path = out.stdout.strip()
    return path if out.returncode == 0 and Path(path).is_dir() else None


@dataclass(unsafe_hash=True)
class HipHeaders:
    """An installed HIP (its `include/hip/hip_runtime.h`) and a clang resource directory
    holding `__clang_hip_runtime_wrapper.h`, which the wheel lacks."""

    rocm_path: Path  # the prefix: /opt/rocm, /usr
    resource_dir: Path
    version: str  # "5.2", from hip_version.h; "" if unknown

    def describe(self) -> str:
        version = f"HIP {self.version} " if self.version else "HIP "
        return f"{version}headers in {self.rocm_path / 'include'} (clang resources {self.resource_dir})"


ROCM_PREFIXES = (Path("/opt/rocm"), Path("/usr"))
_RESOURCE_GLOBS = ("/opt/rocm/llvm/lib/clang/*", "/opt/rocm/lib/llvm/lib/clang/*", "/usr/lib/clang/*",
                   "/usr/lib/llvm-*/lib/clang/*")


@functools.cache
def real_hip_headers() -> HipHeaders | None:
    """The installed HIP headers libclang can parse, else None (the stand-ins are used)."""
    import glob
    import re

    prefix = next((p for p in ROCM_PREFIXES if (p / "include" / "hip" / "hip_runtime.h").is_file()), None)
    if prefix is None:
        return None
    resources = sorted((Path(d) for g in _RESOURCE_GLOBS for d in glob.glob(g)
                        if (Path(d) / "include" / "__clang_hip_runtime_wrapper.h").is_file()),
                       key=lambda d: [int(n) for n in re.findall(r"\d+", d.name)] or [0], reverse=True)
    if not resources:
        return None
    version = ""
    try:
        text = (prefix / "include" / "hip" / "hip_version.h").read_text(errors="replace")
        numbers = [re.search(rf"#define\s+HIP_VERSION_{part}\s+(\d+)", text) for part in ("MAJOR", "MINOR")]
        version = ".".join(m.group(1) for m in numbers) if all(numbers) else ""
    except OSError:
        pass
    return HipHeaders(prefix, resources[0], version)


RUNTIME_HEADER = "hip/hip_runtime.h"


def real_arguments(flags: CompileFlags, mode: Pass, headers: HipHeaders, runtime: bool = False) -> list[str]:
    """A HIP pass as hipcc would run it on the hipified source: the real HIP headers and
    clang's HIP wrapper, no prelude, and each CUDA header hipify renames read as its HIP
    counterpart (`<cuda_runtime.h>` as `<hip/hip_runtime.h>`). `runtime`: the HIP runtime
    included first, as hipify adds it to a file that relied on nvcc's implicit include."""
    base = [f for f in mode.flags if f != "-nogpuinc"]
    forced = ["-include", RUNTIME_HEADER] if runtime else []
    return [*base, "-ferror-limit=0", "-resource-dir", str(headers.resource_dir),
            f"--rocm-path={headers.rocm_path}", "-I", str(hipified_cuda_headers()), "-I", str(CUDA_STAND_INS),
            *forced, *flags.arguments]


@functools.cache
def hipified_cuda_headers() -> Path:
    """A folder of one-line headers named as the CUDA headers hipify renames, each including
    the header hipify writes instead (`portlint.hipify.HEADERS`): hip-clang's view of a
    CUDA source after hipify, without a hipified copy of the project. Made once per
    process, removed at exit."""
    import atexit
    import shutil
    import tempfile

    from portlint import hipify

    folder = Path(tempfile.mkdtemp(prefix="portlint-hipified-headers-"))
    atexit.register(shutil.rmtree, folder, True)
    for cuda, hip in hipify.HEADERS.items():
        target = folder / cuda
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"#pragma once\n#include <{hip}>\n")
    return folder


def uses_real_rocm_headers(flags: CompileFlags) -> bool:
    return any((d / "hip" / "hip_runtime.h").is_file() for d in flags.include_dirs)


def arguments(flags: CompileFlags, mode: Pass) -> list[str]:
    args = [*mode.flags, "-w", "-ferror-limit=0", "-I", str(CUDA_STAND_INS)]
    if uses_real_rocm_headers(flags):
        args.append("-DPORTLINT_REAL_HEADERS")
    else:
        args += ["-I", str(ROCM_STAND_INS)]
    include = gcc_include_dir()
    if include is not None:
        args += ["-isystem", include]
    # The prelude comes first, before the project's own forced includes.
    return [*args, "-include", str(PRELUDE), *flags.arguments]


def parse(path: Path, flags: CompileFlags, mode: Pass, headers: HipHeaders | None = None, runtime: bool = False):
    """The translation unit of `path` in `mode` (with the stand-ins, or the real `headers`,
    with the HIP runtime included first if `runtime`); raises ParseFailure when it cannot be judged."""
    module = cindex()
    args = arguments(flags, mode) if headers is None else real_arguments(flags, mode, headers, runtime)
    options = module.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD if headers is None else 0
    try:
        tu = _index().parse(str(path), args=args, options=options)
    except module.TranslationUnitLoadError:
        raise ParseFailure("libclang could not parse it") from None
    syntax = next((d for d in tu.diagnostics if d.severity >= module.Diagnostic.Error
                   and d.location.file is not None and Path(d.location.file.name) == path
                   and d.category_name == "Parse Issue"), None)
    if syntax is not None:
        raise ParseFailure(f"line {syntax.location.line}: {syntax.spelling}")
    return tu


def missing_includes(tu) -> list[str]:
    """Headers the unit includes that none of its include directories holds."""
    return [d.spelling for d in tu.diagnostics if "file not found" in d.spelling]


# ---- reading cursors ------------------------------------------------------------------
def binary_operator(cursor) -> int:
    return cindex().conf.lib.clang_getCursorBinaryOperatorKind(cursor)


def _evaluate(cursor):
    if "type-parameter" in cursor.type.get_canonical().spelling:
        return None  # value-dependent: a template's pattern, nothing to evaluate
    lib = cindex().conf.lib
    result = lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(result)
        if kind == _EVAL_INT:
            if lib.clang_EvalResult_isUnsignedInt(result):
                return lib.clang_EvalResult_getAsUnsigned(result)
            return lib.clang_EvalResult_getAsLongLong(result)
        if kind == _EVAL_STRING:
            text = lib.clang_EvalResult_getAsStr(result)
            return text.decode("utf-8", "replace") if text is not None else None
        return None
    finally:
        lib.clang_EvalResult_dispose(result)


def evaluate_int(cursor) -> int | None:
    """The value clang computes for a constant integer expression (macros, constexpr
    functions, template arguments and static members included), else None."""
    value = _evaluate(cursor)
    return value if isinstance(value, int) else None


def evaluate_str(cursor) -> str | None:
    value = _evaluate(cursor)
    return value if isinstance(value, str) else None


def strip(cursor):
    """Through parentheses and the implicit nodes libclang leaves unexposed (casts, copies)."""
    kinds = cindex().CursorKind
    while cursor is not None and cursor.kind in (kinds.UNEXPOSED_EXPR, kinds.PAREN_EXPR):
        children = list(cursor.get_children())
        if len(children) != 1:
            break
        cursor = children[0]
    return cursor


def integer_bits(type_) -> int | None:
    """Width of an integer type (through typedefs), else None."""
    kinds = cindex().TypeKind
    canonical = type_.get_canonical()
    integers = (kinds.BOOL, kinds.CHAR_U, kinds.UCHAR, kinds.USHORT, kinds.UINT, kinds.ULONG, kinds.ULONGLONG,
                kinds.CHAR_S, kinds.SCHAR, kinds.SHORT, kinds.INT, kinds.LONG, kinds.LONGLONG, kinds.ENUM)
    if canonical.kind not in integers:
        return None
    size = canonical.get_size()
    return size * 8 if size > 0 else None


def attributes(cursor) -> set[str]:
    """`device`, `global`, `host` for a function's CUDA attributes."""
    kinds = cindex().CursorKind
    names = {kinds.CUDADEVICE_ATTR: "device", kinds.CUDAGLOBAL_ATTR: "global", kinds.CUDAHOST_ATTR: "host"}
    return {names[c.kind] for c in cursor.get_children() if c.kind in names}


def tokens(cursor) -> list[str]:
    """The cursor's token spellings; for a cursor that a macro expansion produced (an attribute
    from `__launch_bounds__(256)`), the tokens of the expansion as written."""
    spelled = [t.spelling for t in cursor.get_tokens()]
    if spelled:
        return spelled
    module = cindex()
    start, end = cursor.extent.start, cursor.extent.end
    if start.file is None or end.file is None or start.file.name != end.file.name:
        return []
    tu = cursor.translation_unit
    file = tu.get_file(start.file.name)
    extent = module.SourceRange.from_locations(module.SourceLocation.from_offset(tu, file, start.offset),
                                               module.SourceLocation.from_offset(tu, file, end.offset))
    return [t.spelling for t in tu.get_tokens(extent=extent)]


def first_token(cursor) -> str:
    return next(iter(tokens(cursor)), "")
