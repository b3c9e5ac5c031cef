"""The macro environment of a ROCm build and of a CUDA build.

Worked out once per scan, in the main process, before the per-file checks: hip-clang's
predefined macros, the defines PyTorch's extension builder adds, the build files' `-D`
defines, and the `#define`/`#undef` lines of project headers reached through `#include`
(beside the including file, then the build's include directories, then a unique file of
that name in the project), in include order. Each `#define` counts for a build as its arm
decides on that build: certainly defined, not at all, or maybe (an undecidable arm).

So a derived feature macro (`#if !defined(USE_HIP) && __CUDA_ARCH__ >= 800` then
`#define HAS_CP_ASYNC`) is never defined on ROCm, and a project ROCm macro (`#define X_HIP 1`
under `#if defined(__HIP_PLATFORM_AMD__)`, `0` in the `#else`) is 1 on ROCm and 0 on CUDA.

A header's own effect is worked out once, from the build's predefined macros and the
headers it includes itself (not the macros its includer defined before including it:
those are rare and would make every include site a walk of its own).

Each file then gets the part it needs (`FileEnvironment`: the macros named in its bytes,
as events by offset), small and picklable for the worker processes. The same object is the
one home of the shims: a macro the ROCm build defines over a CUDA name, or a function the
ROCm build defines with an intrinsic's name (`shim`, `rocm_function`).
"""

from __future__ import annotations

import bisect
import collections
import hashlib
import os
import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping, NamedTuple

import immutables

from portlint import hipify, targets
from portlint.build_model.expressions import Value, and_, evaluate, not_, or_, tokens, truth
from portlint.build_model.system_headers import is_system_header
from portlint.fileio import refused_by_os

# ---- predefined macros -------------------------------------------------------------------
# Macros a ROCm build defines, and ones it never defines (C/C++ preprocessor).
ROCM_DEFINED = frozenset(
    {"USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__",
     "HIP_VERSION", "__HIP_ROCclr__", "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR"}
)
ROCM_UNKNOWN = frozenset({"__HIP_DEVICE_COMPILE__", "__AMDGCN__", "__AMDGCN_WAVEFRONT_SIZE"})
# hip-clang is clang: what the ROCm build compiles as HIP meets clang's arms of a compiler
# chain (`#elif defined(__clang__)`). A CUDA build may also be clang (nvcc's host compiler,
# clang's CUDA mode), so on CUDA these stay unknown.
HIP_CLANG_DEFINED = frozenset({"__clang__", "__llvm__"})
# Host platforms a ROCm build never compiles for: macOS has no ROCm, and Windows has AMD's HIP
# SDK for Radeon GPUs only (`targets.windows_possible`). Read for a file's own conditions
# once the scan's targets are known (`FileEnvironment.scope`), not in the build model's walk.
MACOS_MACROS = frozenset({"__APPLE__", "__MACH__"})
WINDOWS_MACROS = frozenset({"_WIN32", "_WIN64", "_MSC_VER", "__MINGW32__", "__MINGW64__", "__CYGWIN__"})


_NOT_ON_ROCM = (MACOS_MACROS, MACOS_MACROS | WINDOWS_MACROS)


def platforms_not_on_rocm() -> frozenset[str]:
    return _NOT_ON_ROCM[0] if targets.windows_possible() else _NOT_ON_ROCM[1]


# Other compilers' names for themselves, which hip-clang never defines (on CUDA, nvcc's front
# end or its host compiler may be any of them).
NOT_HIP_CLANG = frozenset({"__EDG__", "__NVCOMPILER", "__PGI", "__PGIC__", "__INTEL_COMPILER", "__ICC",
                           "__INTEL_LLVM_COMPILER", "__IBMCPP__", "__xlC__", "__SUNPRO_CC", "__CRAYC"})
CUDA_DEFINED = frozenset(
    {"__CUDACC__", "__NVCC__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__",
     "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__"}
)
# The version macros of the CUDA libraries' own headers (`cublas_api.h`, `cusparse.h`, `cufft.h`,
# `curand.h`, `cusolver_common.h`, `cudnn_version.h`, NVTX's): the CUDA build has them where it
# includes those headers; ROCm's counterparts define none of them and hipify renames none
# (`data/hipify_names.tsv`), so `#if CUBLAS_VERSION >= 11000` is an arm ROCm never compiles.
# (RCCL and rocThrust define NCCL's and Thrust's version macros: not these.)
CUDA_LIBRARY_VERSIONS = frozenset(
    f"{library}_{part}" for library in ("CUBLAS", "CUSPARSE", "CUFFT", "CURAND", "CUSOLVER")
    for part in ("VERSION", "VER_MAJOR", "VER_MINOR", "VER_PATCH", "VER_BUILD")
) | {"CUDNN_VERSION", "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL", "NVTX_VERSION"}
CUDA_UNKNOWN = frozenset({"__CUDA_ARCH__", "__CUDA_ARCH_LIST__", "__CUDACC_RTC__", "__CUDA__"}) \
    | CUDA_LIBRARY_VERSIONS  # `__CUDA__`: clang in CUDA mode
CUDA_ONLY = CUDA_DEFINED | CUDA_UNKNOWN | {"__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"}
# Macros hip-clang's device pass defines per AMD target (`__gfx942__`, `__GFX9__`, `__gfx90a`,
# `__AMDGCN_CUMODE__`, ...): a CUDA build never defines them (their arms are PORT), the ROCm
# build only on some passes (unknown there).
AMD_TARGET_MACRO = re.compile(r"__(?:gfx[0-9a-f]+|GFX[0-9]+|AMDGCN\w*|AMDGPU\w*)(?:__)?")
# Feature macros named for an NVIDIA architecture (`CUTLASS_ARCH_MMA_SM100_SUPPORTED`,
# `CUTE_ARCH_TMA_SM90_ENABLED`): a CUDA library's headers set them from `__CUDA_ARCH__` (and
# nvcc's version), so a ROCm build never has them, unless the project or its build defines
# one itself (those are read first).
class _NvidiaArchFeature:
    """`fullmatch(name)`: is `name` such a feature macro (`X_SM100_SUPPORTED`, `X_SM90A_Y_ENABLED`)?
    Read by its `_`-separated words, not one regex: a pattern that searched a word for `_SM<nn>`
    and then for the suffix backtracked quadratically over long words."""

    _SUFFIXES = ("_SUPPORTED", "_ENABLED", "_ACTIVATED")
    _ARCH_WORD = re.compile(r"SM[0-9]{2,3}[A-Za-z]?")

    def fullmatch(self, name: str) -> bool:
        if not name.endswith(self._SUFFIXES):
            return False
        words = name.split("_")
        return any(self._ARCH_WORD.fullmatch(word) for word in words[1:-1])


NVIDIA_ARCH_FEATURE = _NvidiaArchFeature()

# What `torch.utils.cpp_extension` passes to every source of a CUDAExtension it builds
# (COMMON_HIP_FLAGS + COMMON_HIPCC_FLAGS on ROCm, COMMON_NVCC_FLAGS on CUDA).
TORCH_ROCM_DEFINES: Mapping[str, str | None] = {
    "__HIP_PLATFORM_AMD__": "1", "USE_ROCM": "1", "HIPBLAS_V2": None, "CUDA_HAS_FP16": "1",
    "__HIP_NO_HALF_OPERATORS__": "1", "__HIP_NO_HALF_CONVERSIONS__": "1",
}
TORCH_CUDA_DEFINES: Mapping[str, str | None] = {
    "__CUDA_NO_HALF_OPERATORS__": None, "__CUDA_NO_HALF_CONVERSIONS__": None,
    "__CUDA_NO_BFLOAT16_CONVERSIONS__": None, "__CUDA_NO_HALF2_OPERATORS__": None,
}


# ---- macros and what a build knows of them --------------------------------------------------
@dataclass(unsafe_hash=True)
class Macro:
    """A `#define` (or a `-D`) as one build sees it."""

    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str | None  # None: defined, value not known (`-DNAME` given elsewhere, a predefine)
    path: str = ""  # the defining file (absolute), "" for a predefine or a `-D`
    offset: int = 0

    def body_tokens(self):
        return tokens(self.body or "")

    @property
    def is_function_like(self) -> bool:
        return self.params is not None

    def uses_parameter(self, index: int) -> bool | None:
        """Does the body use parameter `index`? None when this is no function-like macro."""
        if self.params is None or index >= len(self.params):
            return None
        wanted = self.params[index]
        return any(kind == "id" and text == wanted for kind, text in self.body_tokens())


class _State:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self):  # one object per state, also after pickling
        return self._name


UNDEFINED = _State("UNDEFINED")  # certainly not defined here (`#undef`, a CUDA-only predefine)
MAYBE = _State("MAYBE")  # defined in (or undefined by) an arm this build may or may not take


@dataclass(frozen=True)
class OneOf:
    """What a header meets where it is included, when its includers disagree: each includer's
    own definition (`#define FFT_BACKEND 2` before one include, `3` before another) or
    UNDEFINED. A condition true (or false) under each of them is so in the header."""

    states: tuple  # of Macro or UNDEFINED, distinct, at most MAX_ALTERNATIVES


MAX_ALTERNATIVES = 4
State = Macro | _State | OneOf  # no entry at all: not known (a system header, `-D` flags elsewhere)


@dataclass(unsafe_hash=True)
class Base:
    """The macros a build defines before any source line: predefines and `-D` flags."""

    defined: Mapping[str, str | None]  # name -> value (None: not known)
    unknown: frozenset[str]
    undefined: frozenset[str]
    undefined_pattern: re.Pattern | _NvidiaArchFeature | None = None  # names no build of this kind defines

    def state(self, name: str) -> State | None:
        if name in self.defined:
            return Macro(name, None, self.defined[name])
        if name in self.undefined:
            return UNDEFINED
        if name in self.unknown:
            return MAYBE  # `__CUDA_ARCH__`: defined in the device pass only
        if self.undefined_pattern is not None and self.undefined_pattern.fullmatch(name):
            return UNDEFINED
        return None


def bases(rocm_macros: Iterable[str] = (), rocm_defines: Mapping[str, str | None] | None = None,
          cuda_defines: Mapping[str, str | None] | None = None,
          rocm_undefined: frozenset[str] = frozenset()) -> tuple[Base, Base]:
    """(ROCm, CUDA) bases: hip-clang's or nvcc's predefines, the build's `-D` defines and the
    configured `rocm-macros` (defined on ROCm only: that is what configuring one says);
    `rocm_undefined`: names a described ROCm build does not define (`FileEnvironment`)."""
    return _bases(frozenset(rocm_macros), tuple(sorted((rocm_defines or {}).items())),
                  tuple(sorted((cuda_defines or {}).items())), rocm_undefined)


_BASES: dict = {}


def _bases(rocm_macros: frozenset[str], rocm_defines: tuple, cuda_defines: tuple,
           rocm_undefined: frozenset[str]) -> tuple[Base, Base]:
    key = (rocm_macros, rocm_defines, cuda_defines, rocm_undefined)
    if key not in _BASES:
        rocm_names = ROCM_DEFINED | rocm_macros
        rocm_defined = {**dict.fromkeys(rocm_names | HIP_CLANG_DEFINED), **dict(rocm_defines)}
        cuda_defined = {**dict.fromkeys(CUDA_DEFINED), **dict(cuda_defines)}
        rocm = Base(rocm_defined, ROCM_UNKNOWN, (CUDA_ONLY | NOT_HIP_CLANG | rocm_undefined) - rocm_defined.keys(),
                    NVIDIA_ARCH_FEATURE)
        # A configured ROCm macro or a ROCm `-D` is not defined on CUDA, unless CUDA's defines it too.
        cuda_undefined = (rocm_names | ROCM_UNKNOWN | {n for n, _ in rocm_defines}) - cuda_defined.keys()
        cuda = Base(cuda_defined, CUDA_UNKNOWN, frozenset(cuda_undefined), AMD_TARGET_MACRO)
        _BASES[key] = (rocm, cuda)
    return _BASES[key]


class ScopeAt:
    """What one build knows at one point: its base, then the project's macros (`lookup`)."""

    def __init__(self, base: Base, lookup, values: Mapping[str, int | None] | None = None,
                 alternates: bool = False) -> None:
        self._base, self._lookup, self._values = base, lookup, values or {}
        # Whether any name here may be a `OneOf` (`FileEnvironment.alternates`): only then is
        # an undecided condition tried again under each alternative.
        self.alternates = alternates

    def state(self, name: str) -> State | None:
        if name in self._values:  # (a value of None: "what if it were undefined")
            value = self._values[name]
            return UNDEFINED if value is None else Macro(name, None, str(value))
        state = self._lookup(name)
        return state if state is not None else self._base.state(name)

    def is_defined(self, name: str) -> Value:
        state = self.state(name)
        if isinstance(state, Macro):
            return True
        if state is UNDEFINED:
            return False
        if isinstance(state, OneOf):
            defined = {isinstance(s, Macro) for s in state.states}
            return defined.pop() if len(defined) == 1 else None
        return None

    def alternatives(self, name: str) -> tuple | None:
        """The states a header's includers give `name` (`OneOf`), else None."""
        state = self.state(name)
        return state.states if isinstance(state, OneOf) else None

    def pinned(self, pins: Mapping[str, State]) -> "ScopeAt":
        """This scope with the names of `pins` taken as one of their alternatives each."""
        lookup = self._lookup
        return ScopeAt(self._base, lambda name: pins[name] if name in pins else lookup(name), self._values,
                       self.alternates)

    def definition(self, name: str) -> Macro | None:
        state = self.state(name)
        return state if isinstance(state, Macro) else None

    def value(self, name: str) -> Value:
        return 0 if self.state(name) is UNDEFINED else None


# ---- what the build model hands each file ----------------------------------------------------
ROCM, CUDA = 0, 1


@dataclass(unsafe_hash=True)
class FileEnvironment:
    """The macros one file may meet, per build, as (offset, state) events by name.

    `macros[build][name]` is a pair of tuples (offsets, states): from each offset on, the
    name has that state (a `Macro`, `UNDEFINED` or `MAYBE`). `functions` lists the
    functions with a CUDA intrinsic's spelling (`__vsub4`), and the CUDA API names a shim
    header defines as a function or type alias (`cublasFillMode_t`), that ROCm-compiled code
    defines, by the offset from which the file sees them.
    """

    macros: tuple[Mapping[str, tuple[tuple[int, ...], tuple]], Mapping[str, tuple[tuple[int, ...], tuple]]] = ({}, {})
    rocm_functions: Mapping[str, int] = field(default_factory=dict)
    rocm_defines: Mapping[str, str | None] = field(default_factory=dict)
    cuda_defines: Mapping[str, str | None] = field(default_factory=dict)
    # A header's status as a whole, from the places that include it: "port" when only ROCm
    # code includes it (a shim header), "dead" when only CUDA-only code does, else None.
    status: str | None = None
    # The build files describe the ROCm build, so `rocm_defines` are all it passes.
    rocm_build: bool = False
    # Names those build files define for other builds only (a CUDA-only arm): the ROCm
    # build does not define them (`BuildFiles.other_builds_define`).
    rocm_undefined: frozenset[str] = frozenset()
    # The hipify tools the ROCm build runs on this file before compiling it
    # (`BuildFiles.hipified`, `.hipify_tools`; empty: not hipified): rules judge the names
    # they map as their HIP counterparts (`portlint.hipify`), and the macros they rename
    # (`__CUDACC__`) are in `rocm_defines` as their HIP names are.
    hipified: frozenset[str] = frozenset()
    # A ROCm build surely compiles this file (a source it lists, or a header one includes)
    # and does not hipify it: hip-clang reads its includes as written.
    compiled_as_written: bool = False
    # CUDA toolkit headers (`hipify.TOOLKIT_HEADERS`) this file includes that a project file
    # of the same path stands in for (a compatibility header): the ROCm build finds those.
    project_headers: frozenset[str] = frozenset()
    # ROCm libraries' drop-in headers the ROCm build includes, by the offset from which this
    # file has them (its own `#include`, or that of a project header that includes one).
    rocm_headers: Mapping[str, int] = field(default_factory=dict)
    # A scanned file includes HIP's runtime header: the project has HIP code of its own, a
    # port, whether or not its build files describe the ROCm build.
    hip_code: bool = False
    # A CMake list file: where each build goes in it as the walk of the project's CMake tree
    # saw it, with the variables the lists read before it set (`BuildFiles.list_ranges`).
    list_ranges: tuple = ()
    # `rocm_undefined` with the host platforms' macros, by platform set (`scope`).
    _undefined: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @cached_property
    def alternates(self) -> bool:
        """Does a name of this file meet several definitions where it is included (`OneOf`)?"""
        return any(isinstance(state, OneOf) for build in self.macros for _, states in build.values()
                   for state in states)

    @cached_property
    def fingerprint(self) -> str:
        """Changes when anything the file was analysed under changes (the cache key)."""
        parts = [repr(sorted((n, o, s) for n, (o, s) in build.items())) for build in self.macros]
        parts += [repr(sorted(self.rocm_functions.items())), repr(sorted(self.rocm_defines.items())),
                  repr(sorted(self.cuda_defines.items())), repr(self.status), repr(self.rocm_build),
                  repr(sorted(self.rocm_undefined)), repr(self.hipified), repr(self.compiled_as_written),
                  repr(sorted(self.project_headers)), repr(sorted(self.rocm_headers.items())), repr(self.hip_code),
                  repr(self.list_ranges)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def state(self, name: str, offset: int, rocm: bool) -> State | None:
        """The project's word on `name` just before `offset` (None: it says nothing)."""
        events = self.macros[ROCM if rocm else CUDA].get(name)
        if events is None:
            return None
        offsets, states = events
        i = bisect.bisect_left(offsets, offset) - 1
        return states[i] if i >= 0 else None

    def scope(self, offset: int, rocm: bool, rocm_macros: Iterable[str] = (),
              values: Mapping[str, int] | None = None) -> ScopeAt:
        """What the ROCm (or CUDA) build knows just before byte `offset` of the file."""
        platforms = platforms_not_on_rocm()
        undefined = self._undefined.get(platforms)
        if undefined is None:  # (one union per file and platform set: `bases` keys on it)
            undefined = self._undefined[platforms] = self.rocm_undefined | platforms
        rocm_base, cuda_base = bases(rocm_macros, self.rocm_defines, self.cuda_defines, undefined)
        return ScopeAt(rocm_base if rocm else cuda_base, lambda name: self.state(name, offset, rocm), values,
                       self.alternates)

    # ---- shims: what rules call before judging a CUDA name -------------------------------
    def shim(self, name: str, offset: int) -> Macro | None:
        """The project macro the ROCm build certainly defines over `name` at `offset`: the
        ROCm build compiles its body, not the CUDA spelling a rule sees."""
        state = self.state(name, offset, rocm=True)
        return state if isinstance(state, Macro) and state.path else None

    def rocm_function(self, name: str, offset: int) -> bool:
        """Does ROCm-compiled project code define a function `name` this file sees at `offset`?"""
        at = self.rocm_functions.get(name)
        return at is not None and at <= offset

    def includes(self, header: str, offset: int) -> bool:
        """Has the ROCm build included the drop-in header `header` (`ROCM_DROP_IN_HEADERS`)
        for this file by `offset`?"""
        at = self.rocm_headers.get(header)
        return at is not None and at <= offset

    def is_project_rocm_macro(self, name: str, offset: int) -> bool:
        """Is `name` a project macro that tells the builds apart (`X_HIP`: 1 on ROCm, 0 on CUDA)?"""
        rocm, cuda = self.state(name, offset, True), self.state(name, offset, False)
        if rocm is None and cuda is None:
            return False
        if isinstance(rocm, Macro) and isinstance(cuda, Macro):
            return rocm.body != cuda.body
        if isinstance(rocm, OneOf) or isinstance(cuda, OneOf):
            return False
        return rocm is not cuda and MAYBE not in (rocm, cuda)


EMPTY = FileEnvironment()
EMPTY_IN_ROCM_BUILD = FileEnvironment(rocm_build=True)  # nothing defined, in a described ROCm build
# Nothing defined, by (`rocm_build`, `hip_code`): one shared environment each.
_NOTHING_DEFINED = {(False, False): EMPTY, (True, False): EMPTY_IN_ROCM_BUILD,
                    (False, True): FileEnvironment(hip_code=True),
                    (True, True): FileEnvironment(rocm_build=True, hip_code=True)}
# A kernel string a run-time compiler builds (NVRTC, hiprtc): it passes no defines of the
# project's, and compiles device code only, so hiprtc's device pass is all the ROCm build is.
RUNTIME_COMPILED = FileEnvironment(rocm_build=True, rocm_defines=immutables.Map({"__HIP_DEVICE_COMPILE__": "1"}))
# A PyTorch extension's source as its builder compiles it on ROCm (`load_inline`): hipified by
# PyTorch's map, with the builder's defines (which the model does not list).
TORCH_EXTENSION_SOURCE = FileEnvironment(hipified=frozenset({hipify.TORCH}))


# ---- reading directives --------------------------------------------------------------------
# From the `#`, which `re` skips to (a pattern that starts with `^` is tried at every byte);
# `read_directives` checks that only blanks stand before it on its line.
_DIRECTIVE = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef|include|include_next)\b")
_DIRECTIVE_REST = re.compile(rb"(?:[^\\\n]+|\\.)*", re.S)  # to the end of the line, continuations included
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.S)
# Linear from any start (no re-scan of a blank run; an include path is short).
_INCLUDE = re.compile(r'(?<!\s)\s*+(?:"([^"\n]{1,1024})"|<([^>\n]{1,1024})>)')
# A function whose name has a CUDA intrinsic's spelling (`__vsub4`, `__trap`), defined here.
# It opens with the literal `__` (the word boundary is a lookbehind after it), which the regex
# engine finds with a fast search; a leading `\b` made it try every byte of every file.
_INTRINSIC_DEFINITION = re.compile(
    rb"(__(?<!\w__)[A-Za-z]\w*)[ \t]*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)[ \t\r\n]*(?:const[ \t\r\n]*)?\{")
_CONDITIONALS = frozenset({"if", "ifdef", "ifndef"})
_ALTERNATIVES = frozenset({"elif", "elifdef", "elifndef", "else"})
# Deeper include chains are not walked for macros (generated code; Python's own stack is the limit).
MAX_INCLUDE_DEPTH = 200
# A macro defined more often than this in one file stops being followed (it is a counter or
# generated code, and each definition is an event every includer would carry).
MAX_DEFINITIONS = 64


class Directive(NamedTuple):  # a tuple: a file has hundreds, a scan tens of thousands
    kind: str
    offset: int
    text: str  # what follows the directive name, comments and continuations left in
    end: int  # where its line ends (continuations followed): the lines it guards start there


def read_directives(data: bytes) -> list[Directive]:
    """The preprocessor directives of a file, in order, skipping those inside block comments."""
    if b"#" not in data:
        return []
    comments: list[tuple[int, int]] = []
    if b"/*" in data:
        at = data.find(b"/*")
        while at != -1:  # `find` runs in C; a lazy `.*?` regex walks the bytes one by one
            end = data.find(b"*/", at + 2)
            end = len(data) if end == -1 else end + 2
            comments.append((at, end))
            at = data.find(b"/*", end)
    starts = [c[0] for c in comments]
    found = []
    m = _DIRECTIVE.search(data)
    while m is not None:
        hash_at = m.start()
        line = data.rfind(b"\n", 0, hash_at) + 1
        if line != hash_at and data[line:hash_at].strip(b" \t"):
            m = _DIRECTIVE.search(data, m.end())  # a `#` inside a line is no directive
            continue
        rest = _DIRECTIVE_REST.match(data, m.end())
        at = m.start(1)
        i = bisect.bisect_right(starts, at) - 1
        if i < 0 or comments[i][1] <= at:
            found.append(Directive(m.group(1).decode(), line, rest.group().decode("utf-8", "replace"), rest.end()))
        m = _DIRECTIVE.search(data, rest.end())
    return found


def include_names(data: bytes) -> tuple[str, ...]:
    """What a file's `#include` directives name (`"a/b.h"` and `<a/b.h>` alike), as the walk reads them."""
    return tuple(name for name, _ in included_names(data))


def included_names(data: bytes) -> list[tuple[str, int]]:
    """(name, offset of the directive's line) of each `#include` of a file, in order."""
    names = []
    for d in read_directives(data):
        if d.kind in ("include", "include_next") and (m := _INCLUDE.match(d.text)) is not None:
            names.append((m.group(1) or m.group(2), d.offset))
    return names


def _intrinsic_definitions(data: bytes) -> list[tuple[int, str]]:
    if b"__" not in data or b"{" not in data:
        return []
    return [(m.start(), m.group(1).decode()) for m in _INTRINSIC_DEFINITION.finditer(data)
            if m.group(1) not in _NOT_FUNCTIONS]


# A shim header's own definitions of CUDA API names over the ROCm libraries: type aliases
# (`typedef hipblasFillMode_t cublasFillMode_t;`, `using __nv_fp8_e4m3 = __hip_fp8_e4m3;`)
# and functions (`cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* h) { ... }`). Each
# opens with a literal the engine searches for; which names count is the hipify table's word.
_TYPEDEF = re.compile(rb"typedef\b[^;{}]{1,512};")
_USING_ALIAS = re.compile(rb"using[ \t]+(\w+)[ \t]*=")
_API_FUNCTION = re.compile(
    rb"cu(?<!\wcu)[A-Za-z]\w*[ \t]*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)[ \t\r\n]*(?:const[ \t\r\n]*)?\{")
_ALIAS_WORD = re.compile(rb"\w+")
# `namespace cub = hipcub;`: the CUDA library's namespace as the ROCm one (`hipify.NAMESPACES`);
# `namespace cub {`: a project's own namespace of that name.
_NAMESPACE_ALIAS = re.compile(rb"\bnamespace\s+(\w+)\s*=\s*(?:::\s*)?(\w+)\s*;")
_NAMESPACE_OPENING = re.compile(rb"\bnamespace\s+(\w+)\s*\{")
_COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)
# A forward declaration of a library's opaque type (`struct cublasContext;`): pointers to it
# (`cublasContext* handle() const`) compile without the library.
_FORWARD_DECLARATION = re.compile(rb"(?<!\w)(?:struct|class)[ \t]+(\w+)[ \t]*;")


def _api_definitions(data: bytes) -> list[tuple[int, str]]:
    """CUDA API names (HIPIFY-documented: `cublasFillMode_t`, `cusolverDnCreate`,
    `__nv_fp8_e4m3`) that this header defines as a type alias or a function, or declares as
    an opaque type (`struct cublasContext;`), and library namespaces it makes an alias of
    their ROCm port (`namespace cub = hipcub;`)."""
    found = []
    if b"typedef" in data:
        for m in _TYPEDEF.finditer(data):
            words = _ALIAS_WORD.findall(m.group())
            found.append((m.start(), words[-1].decode()))
    if b"using" in data:
        found += [(m.start(), m.group(1).decode()) for m in _USING_ALIAS.finditer(data)]
    if b"cu" in data:
        found += [(m.start(), m.group().split(b"(", 1)[0].strip().decode()) for m in _API_FUNCTION.finditer(data)]
    if b"struct" in data or b"class" in data:
        found += [(m.start(), m.group(1).decode()) for m in _FORWARD_DECLARATION.finditer(data)]
    documented = [(offset, name) for offset, name in found if hipify.documented(name)]
    return documented + (_library_namespaces(data) if b"namespace" in data else [])


def _library_namespaces(data: bytes) -> list[tuple[int, str]]:
    """A CUDA library namespace (`hipify.NAMESPACES`: `cub`) this header makes, at file scope
    and outside comments, an alias of its ROCm port (`namespace cub = hipcub;`) or a namespace
    of its own (`namespace cub {`)."""
    if not any(name.encode() in data for name in hipify.NAMESPACES):
        return []
    code = _COMMENT.sub(lambda m: b" " * len(m.group()), data)
    found = [(m.start(), m.group(1).decode()) for m in _NAMESPACE_ALIAS.finditer(code)
             if hipify.NAMESPACES.get(m.group(1).decode()) == m.group(2).decode()]
    found += [(m.start(), m.group(1).decode()) for m in _NAMESPACE_OPENING.finditer(code)
              if m.group(1).decode() in hipify.NAMESPACES]
    # (at file scope: `namespace mylib { namespace cub = hipcub; }` names `mylib::cub`)
    return [(at, name) for at, name in found if code.count(b"{", 0, at) == code.count(b"}", 0, at)]


_NOT_FUNCTIONS = frozenset({b"__attribute__", b"__launch_bounds__", b"__declspec", b"__asm__", b"__asm",
                            b"__volatile__", b"__builtin_expect", b"__if_exists"})


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text.replace("\\\r\n", " ").replace("\\\n", " "), flags=re.S)


def parse_define(text: str, path: str, offset: int) -> Macro | None:
    m = _DEFINE.match(text)
    if m is None:
        return None
    params = None
    if m.group(2) is not None:
        inner = m.group(2)[1:-1].strip()
        params = tuple(p.strip() for p in inner.split(",")) if inner else ()
    body = " ".join(_strip_comments(m.group(3)).split())
    return Macro(m.group(1), params, body, path, offset)


# ---- the chain logic shared with the ROCm-path model -----------------------------------------
def chain_outcomes(values: list[tuple[Value, Value]]) -> list[tuple[Value, Value, str | None]]:
    """For a chain of arms (ROCm value, CUDA value of each condition, `#else` = (True, True)):
    whether each build takes each arm, and the arm's status: "dead" (not taken on ROCm),
    "port" (taken on ROCm, never on CUDA) or None (live).

    An undecidable arm before a PORT arm of the same chain is its CUDA alternative: DEAD.
    """
    taken_rocm: Value = False
    taken_cuda: Value = False
    out: list[list] = []
    for rocm, cuda in values:
        on_rocm = and_(not_(taken_rocm), rocm)
        on_cuda = and_(not_(taken_cuda), cuda)
        status = "dead" if truth(on_rocm) is False else "port" if truth(on_cuda) is False else None
        out.append([on_rocm, on_cuda, status])
        taken_rocm, taken_cuda = or_(taken_rocm, rocm), or_(taken_cuda, cuda)
    statuses = [o[2] for o in out]
    if "port" in statuses:
        for i in range(statuses.index("port")):
            if out[i][2] is None:
                out[i][0], out[i][2] = False, "dead"
    return [tuple(o) for o in out]


def evaluate_directive(kind: str, text: str, scope) -> Value:
    """An `#if`/`#ifdef`/... condition (the text after the directive's name) in `scope`."""
    if kind in ("ifdef", "elifdef", "ifndef", "elifndef"):
        words = _strip_comments(text).split()
        if not words or not re.fullmatch(r"[A-Za-z_]\w*", words[0]):
            return None
        value = scope.is_defined(words[0])
        return not_(value) if kind.endswith("ndef") else value
    return evaluate(text, scope)


# ---- switches: names whose definition a stretch of code needs --------------------------------
class _OnlyUndefined:
    """A scope that knows one thing: `name` is not defined (everything else is unknown)."""

    alternates = False

    def __init__(self, name: str) -> None:
        self.name = name

    def is_defined(self, name: str) -> Value:
        return False if name == self.name else None

    def definition(self, name: str):
        return None

    def value(self, name: str) -> Value:
        return 0 if name == self.name else None


_MAX_SWITCH_NAMES = 16
Gate = tuple[int, int, tuple[str, ...]]  # (start, end, names): compiled only where each name is defined


def switch_gates(data: bytes) -> tuple[Gate, ...]:
    """The stretches of a file that no build compiles unless a name is defined: the arms of
    `#ifdef NAME`, `#if defined(NAME) && ...`, `#if NAME` and the `#else` of `#ifndef NAME`
    (each arm's names: those whose absence surely leaves it out), and the `#if`/`#elif` lines
    whose own test needs them (a gate that never opens anywhere). The project pass asks which
    of these names nothing in the project ever sets (`engine._drop_under_unset_switches`)."""
    gates: list[Gate] = []
    chains: list[list[Directive]] = []  # open conditionals, innermost last

    def close_arm(chain: list[Directive], end: int) -> None:
        *earlier, last = chain
        if last.kind == "endif":
            return
        names = _names_an_arm_needs(earlier, last)
        if names:
            gates.append((last.end, end, names))

    for directive in read_directives(data):
        kind = directive.kind
        if kind in _CONDITIONALS:
            chains.append([directive])
        elif kind in _ALTERNATIVES and chains:
            close_arm(chains[-1], directive.offset)
            chains[-1].append(directive)
        elif kind == "endif" and chains:
            close_arm(chains.pop(), directive.offset)
        else:
            continue
        if kind in ("if", "elif") and len(candidates := _identifiers(directive.text)) <= _MAX_SWITCH_NAMES:
            names = tuple(n for n in candidates
                          if truth(evaluate_directive(kind, directive.text, _OnlyUndefined(n))) is False)
            if names:
                gates.append((directive.offset, directive.end, names))
    return tuple(gates)


# Names build systems set without the project writing them: CMake's and Python's release
# flags (`-DNDEBUG`), GCC's GNU-mode predefines, Visual Studio's project defaults.
_SET_BY_BUILD_SYSTEMS = frozenset({"NDEBUG", "linux", "unix", "WIN32", "WIN64"})


def set_outside_the_project(name: str) -> bool:
    """Is `name` one the toolchains, PyTorch's extension builds or build systems define (or
    are known not to define), rather than a switch of the project's own? True for reserved names
    (`_X`, `__x`: the implementation's), the predefines modelled here, the backend names
    (`USE_CUDA`, `GINKGO_BUILD_HIP`: the backend model's) and the CUDA names hipify documents."""
    return (name.startswith("_") or name in ROCM_DEFINED or name in ROCM_UNKNOWN or name in HIP_CLANG_DEFINED
            or name in MACOS_MACROS or name in WINDOWS_MACROS or name in NOT_HIP_CLANG or name in CUDA_ONLY
            or name in TORCH_ROCM_DEFINES or name in TORCH_CUDA_DEFINES or name in _SET_BY_BUILD_SYSTEMS
            or AMD_TARGET_MACRO.fullmatch(name) is not None or PLATFORM_NAME.fullmatch(name) is not None
            or hipify.documented(name))


def _names_an_arm_needs(earlier: list[Directive], arm: Directive) -> tuple[str, ...]:
    """The names whose absence surely leaves `arm` out: its own test false without it, or an
    earlier test of its chain true without it (`#ifndef NAME ... #else`)."""
    if len(earlier) > _MAX_SWITCH_NAMES:
        return ()
    candidates = dict.fromkeys(n for d in (*earlier, arm) for n in _identifiers(d.text))
    if len(candidates) > _MAX_SWITCH_NAMES:
        return ()  # (a chain that long or a test that wide is no switch: each name costs a pass over it)
    needed = []
    for name in candidates:
        scope = _OnlyUndefined(name)
        if any(truth(evaluate_directive(d.kind, d.text, scope)) is True for d in earlier) or (
                arm.kind != "else" and truth(evaluate_directive(arm.kind, arm.text, scope)) is False):
            needed.append(name)
    return tuple(needed)


def _identifiers(text: str) -> list[str]:
    return list(dict.fromkeys(t for kind, t in tokens(text) if kind == "id" and t != "defined"))


# ---- the walk ---------------------------------------------------------------------------------
@dataclass
class _Walk:
    """One file's macro events per build, and what it leaves defined (its exports)."""

    # per build: name -> its events (offsets, states), offsets ascending: the file's own, and
    # the macros each of its includes leaves defined among them (at the `#include`), found
    # through the includes when read (`_Index`).
    index: "tuple[_Index, _Index] | tuple[dict, dict]"
    # per build: name -> its state after the file (what includers take in), a persistent map
    final: "tuple[immutables.Map, immutables.Map] | tuple[dict, dict]"
    # name -> offset: intrinsic-named functions ROCm-compiled code defines, in the file or
    # in the headers it includes (at the offset of the `#include`)
    functions: dict
    # header -> offset: ROCm libraries' drop-in headers (`ROCM_DROP_IN_HEADERS`) that the
    # ROCm build includes here, or in the headers the file includes (at that `#include`)
    headers: dict = field(default_factory=dict)


# `BuildMacros._sources` values besides bytes and None (unreadable): not read yet; read once,
# then released (`release_bytes`).
_UNREAD = object()
_RELEASED = object()


class BuildMacros:
    """The macro environments of one scan. `environment(path)` gives a file its part."""

    def __init__(self, sources: Mapping[str, bytes], rocm_macros: Iterable[str] = (),
                 rocm_defines: Mapping[str, str | None] | None = None,
                 cuda_defines: Mapping[str, str | None] | None = None,
                 include_dirs: Iterable[str] = (), project_files=(), read=None,
                 not_built: Iterable[str] = (), unread: Iterable[str] = (), rocm_build: bool = False,
                 rocm_undefined: frozenset[str] = frozenset(), build_defined: frozenset[str] = frozenset(),
                 hipified: bool | frozenset[str] = frozenset(), rocm_compiled: frozenset[str] = frozenset(),
                 hipify_tools: frozenset[str] = frozenset({hipify.HIPIFY}),
                 budget=None, includers_of: Mapping[str, Iterable[str]] | None = None) -> None:
        # The scanned C-family files (absolute posix paths): `sources` with their bytes, and
        # `unread`, read by `read(path)` when first needed (a warm scan may need none). `read`
        # also gives the bytes of a project header that was not scanned (explicit files), or None.
        self._sources: dict[str, bytes | None] = dict(sources)
        scanned = [*self._sources, *(p for p in unread if p not in self._sources)]
        self._scanned = frozenset(scanned)
        self._rocm_build = rocm_build
        # True: the ROCm build hipifies every file; else the sources it hipifies (their
        # headers are hipified with them: `hipified`).
        self._hipified_sources = hipified
        self._hipified: dict[str, bool] = {}
        self._hipify_tools = hipify_tools or frozenset({hipify.HIPIFY})
        # Sources a ROCm build surely compiles; their headers are compiled with them.
        self._rocm_compiled_sources = rocm_compiled
        self._rocm_compiled: dict[str, bool] = {}
        self._rocm_macros = frozenset(rocm_macros)
        self._rocm_defines = dict(rocm_defines or {})
        self._cuda_defines = dict(cuda_defines or {})
        self._rocm_undefined = frozenset(rocm_undefined)
        self._build_defined = frozenset(build_defined)  # names the build files define somewhere
        self._bases = bases(self._rocm_macros, self._rocm_defines, self._cuda_defines, self._rocm_undefined)
        self._hipify_bases = self._with_hipify(self._rocm_defines, self._rocm_undefined)
        self._include_dirs = tuple(include_dirs)
        self._read = read
        self._newest_read: tuple[str | None, bytes | None] = (None, None)  # (`release_bytes`)
        self._walked_hashes: dict[str, int] = {}
        self._walks: dict[str, _Walk] = {}
        self._translation_units = [p for p in scanned if not _is_header(p)]
        self._headers = [p for p in scanned if _is_header(p)]
        # Where each header is included: target -> [(including file, offset, ROCm value, CUDA value)].
        self._sites: dict[str, list[tuple[str, int, Value, Value]]] = {}
        self._entries: dict[tuple[str, str, int], State | None] = {}
        self._known_names: set[str] = set()
        self._reach: dict[str, tuple[Value, Value]] = {}
        self._walked_all = False
        self._too_deep = False
        self._tested_platform_names: set[str] = set()  # `X_ENABLE_CUDA` in an `#if` (backend_selectors)
        self._backend_selectors: frozenset[str] | None = None
        self._hip_switches: dict[str, str] | None = None
        self._switched = False  # `_switch_bases` ran
        self._hip_code = False  # a scanned file includes HIP's runtime header (`_switch_bases`)
        self._directives: dict[str, list] = {}  # read by `_switch_bases`, taken by the walk
        # Files no ROCm build compiles (the build files say so): what only they include is
        # not compiled for ROCm either. (Their own findings are the build files' business.)
        self._not_built = frozenset(not_built)
        self._active: list[str] = []
        # `project_files` may be a callable: walking the project around explicitly named
        # files costs time, so it waits for an include that only a file's name can resolve.
        self._project_files = project_files
        self._by_name: dict[str, list[str]] | None = None
        self._folders_by_name: dict[str, list[str]] = {}  # the project's folders by their last name
        self._listings: dict[str, frozenset[str]] = {}
        self._resolved: dict[tuple[str | None, str], str | None] = {}
        self.problems: list[tuple[str, str]] = []  # (path, message): one line each for stderr
        self._budget = budget  # `workers.Budget`: a walk past it raises `BudgetSpent`
        # Files named alone in a project: per header, the files that may include it (from the
        # include graph). Where a header is included is then found by walking those files,
        # when it is asked, not every file of the scan (`_sites_of`).
        self._includers_of = includers_of
        self._following = True  # `_sites_of` walks the includers (see `environment`)
        self._context_memo: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})

    # ---- includes -------------------------------------------------------------------------
    def _data(self, path: str) -> bytes | None:
        data = self._sources.get(path, _UNREAD)
        if data is _RELEASED:  # read again when asked (`release_bytes`); the newest read is kept
            if self._newest_read[0] != path:
                self._newest_read = (path, self._read(path) if self._read is not None else None)
            return self._newest_read[1]
        if data is not _UNREAD:
            return data
        data = self._read(path) if self._read is not None else None
        self._sources[path] = data
        return data

    def release_bytes(self) -> None:
        """Stop keeping the bytes of the files read so far (once walked, before workers fork:
        every forked worker counts the pages its parent holds). A file asked for again is read
        again, and only the newest read is kept: a worker asks for one file's bytes at a time."""
        # (a hash of each, to tell a file saved again since the walk read it: `changed_since_walk`)
        self._walked_hashes = {path: hash(data) for path, data in self._sources.items()
                               if data is not None and data is not _RELEASED} | self._walked_hashes
        self._sources = {path: None if data is None else _RELEASED for path, data in self._sources.items()}
        self._newest_read = (None, None)

    def changed_since_walk(self, path: str) -> bool:
        """Were the bytes of `path` read again after `release_bytes` other than those the walk
        read (saved again meanwhile)? Its macros would then be the old version's."""
        walked = self._walked_hashes.get(path)
        if walked is None or self._newest_read[0] != path:
            return False
        data = self._newest_read[1]
        return data is None or hash(data) != walked

    def files_read(self) -> list[str]:
        """Every file the walk read (or tried to), scanned or not."""
        return list(self._sources)

    def directories_listed(self) -> list[str]:
        """Every directory listed to resolve an `#include`."""
        return [d or "." for d in self._listings]

    def headers_read(self) -> list[str]:
        return [path for path in self._sources if path not in self._scanned]

    def bytes_read(self, path: str) -> bytes | None:
        """The bytes of `path` read so far (None: not read, or unreadable); released, they are
        read again (`changed_since_walk` then says whether they are still the walked ones)."""
        data = self._sources.get(path)
        return self._data(path) if data is _RELEASED else data

    def _exists(self, path: str) -> bool:
        if path in self._sources:
            return self._sources[path] is not None
        if path in self._scanned:  # discovered by the scan, not read yet
            return True
        if self._read is None:
            return False
        directory, name = posixpath.split(path)
        return name in self._files_in(directory)

    def _files_in(self, directory: str) -> frozenset[str]:
        """The regular files of a directory, listed once: an `#include` is looked for in
        every include directory, and a stat per candidate was most of a warm scan."""
        found = self._listings.get(directory)
        if found is None:
            try:
                with os.scandir(directory or ".") as entries:
                    found = frozenset(e.name for e in entries if _is_regular_file(e))
            except (OSError, ValueError):  # ValueError: a NUL in the path (`refused_by_os`)
                found = frozenset()
            self._listings[directory] = found
        return found

    def resolve(self, including: str, include: str, quoted: bool) -> str | None:
        """The project file `#include` names: beside the including file (quoted form), in an
        include directory of the build, else the one project file of that path's name."""
        # The answer depends on the including file's directory only (quoted form) or on
        # nothing but the name: files of one directory include the same headers.
        key = (posixpath.dirname(including) if quoted else None, include)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(including, include, quoted)
        return self._resolved[key]

    def _resolve(self, including: str, include: str, quoted: bool) -> str | None:
        if quoted:
            beside = posixpath.normpath(posixpath.join(posixpath.dirname(including), include))
            if self._exists(beside):
                return beside
        for directory in self._include_dirs:
            candidate = posixpath.normpath(posixpath.join(directory, include))
            if self._exists(candidate):
                return candidate
        wanted = posixpath.normpath(include)
        if wanted.startswith("..") or is_system_header(wanted):  # `<endian.h>`: the system's
            return None
        if self._by_name is None:
            self._by_name, self._folders_by_name = {}, {}
            files = self._project_files() if callable(self._project_files) else self._project_files
            readable = (p for p in (*self._scanned, *self._sources) if self._sources.get(p, b"") is not None)
            for known in dict.fromkeys((*readable, *files)):
                self._by_name.setdefault(posixpath.basename(known), []).append(known)
            for folder in {posixpath.dirname(known) for known in files}:
                self._folders_by_name.setdefault(posixpath.basename(folder), []).append(folder)
        folder, name = posixpath.split(wanted)
        if folder and not posixpath.splitext(name)[1]:
            # A header without extension (`<cuda/std/detail/__config>`, `<Eigen/Core>`) is not
            # a discovered C-family file: looked for below the project's folders that end the
            # longest part of its path (a folder that holds only such headers is not known).
            parts = wanted.split("/")
            matches = []
            for cut in range(len(parts) - 1, 0, -1):
                known = "/".join(parts[:cut])
                matches = [candidate for f in self._folders_by_name.get(parts[cut - 1], ())
                           if f == known or f.endswith("/" + known)
                           for candidate in [posixpath.join(f, *parts[cut:])]
                           if posixpath.basename(candidate) in self._files_in(posixpath.dirname(candidate))]
                if matches:
                    break
        else:
            matches = [p for p in self._by_name.get(name, ()) if p == wanted or p.endswith("/" + wanted)]
        return matches[0] if len(matches) == 1 else None

    # ---- walking a file ---------------------------------------------------------------------
    def walk(self, path: str) -> _Walk:
        walk = self._walks.get(path)
        if walk is not None:
            return walk
        if path in self._active:  # an include cycle: guarded headers make it harmless
            return _EMPTY_WALK
        if self._budget is not None:
            self._budget.check()
        if len(self._active) >= MAX_INCLUDE_DEPTH:
            if not self._too_deep:
                self._too_deep = True
                self.problems.append((path, f"included {MAX_INCLUDE_DEPTH} levels deep; its macros are not followed"))
            return _EMPTY_WALK  # not memoized: a shallower include reads it in full
        self._switch_bases()
        self._active.append(path)
        try:
            walk = self._walk(path)
        finally:
            self._active.pop()
        self._walks[path] = walk
        for index in walk.index:
            self._known_names.update(index)
        return walk

    def _walk(self, path: str) -> _Walk:
        data = self._data(path)
        if data is None:
            return _EMPTY_WALK
        directives = self._directives.pop(path, None)
        prescanned = directives is not None  # its tested platform names are in already
        if directives is None:
            directives = read_directives(data)
        # A TU's own definitions are its rules' business: only headers lend them to others.
        definitions, api_names = [], set()
        if _is_header(path):
            api = _api_definitions(data)
            api_names = {name for _, name in api}
            definitions = (_intrinsic_definitions(data) if b"__device__" in data else []) + api
        if not directives and not definitions:
            return _EMPTY_WALK
        chains = _chains(directives)
        walk_bases = self._hipify_bases if self._walked_hipified(path) else self._bases
        # per build: name -> its state so far; a persistent map (`_merge`): a file's final states
        # share their entries with those of the headers it includes.
        final = [immutables.Map().mutate(), immutables.Map().mutate()]
        named = (_Index(final[0]), _Index(final[1]))  # per build: name -> its events (`_Walk.index`)
        functions: dict[str, int] = {}
        headers: dict[str, int] = {}
        counts: dict[str, int] = {}
        # Per open conditional: (enclosing activity per build, arm outcomes, index of the arm).
        stack: list[tuple[tuple[Value, Value], list, int]] = []
        active: tuple[Value, Value] = (True, True)
        pending = sorted([(d.offset, 0, i) for i, d in enumerate(directives)]
                         + [(offset, 1, i) for i, (offset, _) in enumerate(definitions)])
        for offset, kind_order, index in pending:
            if kind_order == 1:  # a function with an intrinsic's name
                name = definitions[index][1]
                # An API shim may sit in one of several ROCm-only arms (a type per target):
                # whichever the ROCm build takes defines the name.
                rocm_only = name in api_names and truth(active[ROCM]) is None and truth(active[CUDA]) is False
                if (truth(active[ROCM]) is True or rocm_only) and name not in functions:
                    functions[name] = offset
                continue
            d = directives[index]
            if not prescanned and (d.kind in _CONDITIONALS or d.kind in _ALTERNATIVES):
                self._tested_platform_names.update(PLATFORM_NAME.findall(d.text))
            if d.kind in _CONDITIONALS:
                arms = chains.get(index, [index])
                scopes = [ScopeAt(walk_bases[b], final[b].get) for b in (ROCM, CUDA)]
                values = [(True, True) if directives[a].kind == "else" or _is_include_guard(directives, a) else
                          tuple(evaluate_directive(directives[a].kind, directives[a].text, scopes[b]) for b in (ROCM, CUDA))
                          for a in arms]
                outcomes = chain_outcomes(values)
                stack.append((active, outcomes, 0))
                active = (and_(active[0], outcomes[0][0]), and_(active[1], outcomes[0][1]))
            elif d.kind in _ALTERNATIVES:
                if not stack:
                    continue
                outer, outcomes, arm = stack[-1]
                arm += 1
                stack[-1] = (outer, outcomes, arm)
                taken = outcomes[arm] if arm < len(outcomes) else (None, None, None)
                active = (and_(outer[0], taken[0]), and_(outer[1], taken[1]))
            elif d.kind == "endif":
                if stack:
                    active = stack.pop()[0]
            elif d.kind == "define":
                macro = parse_define(d.text, path, d.offset)
                if macro is None:
                    continue
                counts[macro.name] = counts.get(macro.name, 0) + 1
                if counts[macro.name] > MAX_DEFINITIONS:
                    continue
                for b in (ROCM, CUDA):
                    if truth(active[b]) is False:
                        # A project macro this build never defines (a derived feature macro
                        # in a CUDA-only arm) is undefined there, unless a `-D` sets it.
                        if macro.name not in final[b] and walk_bases[b].state(macro.name) is None:
                            self._apply(final[b], named[b], d.offset, macro.name, UNDEFINED, True)
                        continue
                    self._apply(final[b], named[b], d.offset, macro.name, macro, active[b])
            elif d.kind == "undef":
                words = _strip_comments(d.text).split()
                if words:
                    for b in (ROCM, CUDA):
                        self._apply(final[b], named[b], d.offset, words[0], UNDEFINED, active[b])
            elif d.kind in ("include", "include_next"):
                m = _INCLUDE.match(d.text)
                if m is None or (truth(active[ROCM]) is False and truth(active[CUDA]) is False):
                    continue
                include = m.group(1) or m.group(2)
                if refused_by_os(include):  # no file has that name: one line, and the walk goes on
                    line = data.count(b"\n", 0, d.offset) + 1
                    self.problems.append((f"{path}:{line}", "the `#include` path holds a NUL byte, which no file "
                                                             "name can; that include is skipped"))
                    continue
                target = self.resolve(path, include, m.group(1) is not None)
                if target is None and include in ROCM_DROP_IN_HEADERS and truth(active[ROCM]) is not False:
                    headers.setdefault(include, d.offset)
                if target is None or target == path:
                    continue
                self._sites.setdefault(target, []).append((path, d.offset, active[ROCM], active[CUDA]))
                if self._budget is not None:  # a file's walk takes in its includes' macros: it can be long
                    self._budget.check()
                included = self.walk(target)
                for b in (ROCM, CUDA):  # the names the include leaves: the walk's hot path
                    t = truth(active[b])
                    brought = included.final[b]
                    if t is False or not brought:
                        continue
                    into = final[b].finish()
                    merged, changed, brings_new = _merge(into, brought, maybe=t is None)
                    final[b] = named[b].visible = merged.mutate()
                    # Names with a state here already: an event where the include changes it
                    # (`changed`). An include this build may skip leaves a name it brings as
                    # it was (the same definition either way: a header's guarded config seen
                    # again). The others (most: thousands under large headers) are the include's.
                    if changed or brings_new:
                        named[b].includes.append(_Included(d.offset, t is None, brought, into))
                if truth(active[ROCM]) is True:
                    for name in included.functions:
                        functions.setdefault(name, d.offset)
                if truth(active[ROCM]) is not False:
                    for header in included.headers:
                        headers.setdefault(header, d.offset)
        if counts and max(counts.values()) > MAX_DEFINITIONS:
            name = max(counts, key=counts.get)
            self.problems.append((path, f"`{name}` is defined {counts[name]} times; its later definitions are not followed"))
        for b in (ROCM, CUDA):
            final[b] = named[b].visible = final[b].finish()
        return _Walk(named, (final[0], final[1]), functions, headers)

    @staticmethod
    def _apply(final: immutables.MapMutation, index: _Index, offset: int, name: str, state: State,
               active: Value) -> None:
        t = truth(active)
        if t is False:
            return
        if t is None:
            state = MAYBE
        if final.get(name) is state:
            return
        final[name] = state
        index.add(name, offset, state)

    # ---- which builds reach a header ---------------------------------------------------------
    def _switch_bases(self) -> None:
        """Before the first walk: the platform switches every scanned file tests, so that the
        walk itself (which headers each build includes) reads the CUDA backend's switch as
        off and the HIP backend's as on in the ROCm build (`backend_selectors`,
        `hip_switches`), as each file's own conditions do. The directives read here are
        kept for the walk."""
        if self._switched:
            return
        self._switched = True
        for path in self._scanned:
            data = self._data(path)
            if not data or b"#" not in data:
                continue
            directives = self._directives[path] = read_directives(data)
            for d in directives:
                if d.kind in _CONDITIONALS or d.kind in _ALTERNATIVES:
                    self._tested_platform_names.update(PLATFORM_NAME.findall(d.text))
                elif d.kind == "include" and not self._hip_code and (m := _INCLUDE.match(d.text)) is not None:
                    self._hip_code = _names_hip_runtime(m.group(1) or m.group(2))
        selectors = frozenset(backend_selectors(self._tested_platform_names)) - self._rocm_defines.keys()
        switches = self._switch_names()
        if selectors or switches:
            self._bases = bases(self._rocm_macros, {**switches, **self._rocm_defines}, self._cuda_defines,
                                self._rocm_undefined | selectors)
            self._hipify_bases = self._with_hipify({**switches, **self._rocm_defines}, self._rocm_undefined | selectors)

    def _with_hipify(self, rocm_defines: dict, rocm_undefined: frozenset[str]) -> tuple[Base, Base]:
        """The bases of a file the ROCm build hipifies: the CUDA macros it renames
        (`__CUDACC__` -> `__HIPCC__`) are defined there."""
        return bases(self._rocm_macros, {**rocm_defines, **hipify.ROCM_DEFINES}, self._cuda_defines, rocm_undefined)

    def _walked_hipified(self, path: str) -> bool:
        """Is `path`, as this walk reaches it, hipified: a source the ROCm build hipifies, or a
        header included (now) from one. A header's walk is kept for every includer: a project
        that hipifies some sources and not others gets the first includer's view."""
        sources = self._hipified_sources
        return sources is True or (bool(sources) and (path in sources or (
            _is_header(path) and any(p in sources for p in self._active))))

    def walk_all(self) -> None:
        """Walk every scanned file (with files named alone: only those named; their
        includers are walked as `_sites_of` needs them)."""
        if not self._walked_all:
            self._walked_all = True
            for path in (*self._translation_units, *self._headers):
                if self._includers_of is None or path not in self._includers_by_walk:
                    self.walk(path)

    @cached_property
    def _includers_by_walk(self) -> frozenset[str]:
        """The files scanned only as includers of the named headers."""
        return frozenset(p for found in (self._includers_of or {}).values() for p in found)

    def _unwalked_includers(self, path: str) -> bool:
        """Has `path` includers the walk did not go through (its includers are not followed:
        `environment`)? Then the sites found so far do not say where it is compiled."""
        return not self._following and any(p not in self._walks for p in (self._includers_of or {}).get(path, ()))

    def _sites_of(self, path: str) -> list[tuple[str, int, Value, Value]]:
        """Where `path` is included: (including file, offset, ROCm value, CUDA value) each."""
        if self._includers_of is None:
            self.walk_all()
        elif self._following:
            for including in self._includers_of.get(path, ()):
                self.walk(including)
        else:  # the includers walked through (one stopped by the budget half-way is not)
            return [site for site in self._sites.get(path, ()) if site[0] in self._walks]
        return self._sites.get(path, [])

    def reach(self, path: str) -> tuple[Value, Value]:
        """(ROCm, CUDA): does each build compile `path`? A translation unit, or a header
        nobody includes, stands for itself; a header is compiled where its includes are."""
        known = self._known_reach(path)
        if known is None:
            self._settle_reach(path)
            known = self._reach[path]
        return known

    def _known_reach(self, path: str) -> tuple[Value, Value] | None:
        """`reach` where no includer has to be asked (or was asked already); else None."""
        if path in self._reach:
            return self._reach[path]
        if path in self._not_built:
            return False, True
        if not _is_header(path) or not self._sites_of(path) or self._unwalked_includers(path):
            return True, True  # (an includer not walked may compile it in either build)
        return None

    def _settle_reach(self, start: str) -> None:
        """`reach` of `start` and of every header its includers' chains pass through, a group
        of headers that include one another (an include cycle) at a time, includers' groups
        first (Tarjan's order), without recursion."""
        index: dict[str, int] = {start: 0}
        low: dict[str, int] = {start: 0}
        stack, on_stack = [start], {start}
        work = [(start, iter([site[0] for site in self._sites_of(start)]))]
        while work:
            node, includers = work[-1]
            for including in includers:
                if self._known_reach(including) is not None:
                    continue  # (answered: a translation unit, a header settled or nobody includes)
                if including not in index:
                    index[including] = low[including] = len(index)
                    stack.append(including)
                    on_stack.add(including)
                    work.append((including, iter([site[0] for site in self._sites_of(including)])))
                    break
                if including in on_stack:
                    low[node] = min(low[node], index[including])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while not group or group[-1] != node:
                        group.append(stack.pop())
                        on_stack.discard(group[-1])
                    self._settle_group(group)

    def _settle_group(self, group: list[str]) -> None:
        """`reach` of headers that include one another (or of one header), their includers
        outside the group settled: the least answers that hold along every include. Each
        answer only grows (False, then maybe, then True, per build), so an include passes
        on its includer's answer each time that grows, a few times at most: linear in the
        includes. A group that nothing outside includes stands for itself, as a header
        nobody includes."""
        members = set(group)
        reach: dict[str, tuple[Value, Value]] = {}
        passes_to: dict[str, list[tuple[str, Value, Value]]] = {}  # a member -> (member it includes, the include's values)
        outside = False
        for path in group:
            rocm: Value = False
            cuda: Value = False
            for including, _, on_rocm, on_cuda in self._sites_of(path):
                if including in members:
                    passes_to.setdefault(including, []).append((path, on_rocm, on_cuda))
                    continue
                outside = True
                outer = self._known_reach(including) or (True, True)  # (settled first: Tarjan's order)
                rocm = or_(rocm, and_(outer[ROCM], on_rocm))
                cuda = or_(cuda, and_(outer[CUDA], on_cuda))
            reach[path] = (rocm, cuda)
        if not outside:
            self._reach.update((path, (True, True)) for path in group)
            return
        pending = collections.deque(path for path in group if reach[path] != (False, False))
        queued = set(pending)
        while pending:
            path = pending.popleft()
            queued.discard(path)
            rocm, cuda = reach[path]
            for included, on_rocm, on_cuda in passes_to.get(path, ()):
                before = reach[included]
                after = (or_(before[ROCM], and_(rocm, on_rocm)), or_(before[CUDA], and_(cuda, on_cuda)))
                if after != before:
                    reach[included] = after
                    if included not in queued:
                        queued.add(included)
                        pending.append(included)
        self._reach.update(reach)

    def status(self, path: str) -> str | None:
        if path in self._not_built:
            return None  # reported (or not) by the build-file model, not as ROCm-path status
        rocm, cuda = self.reach(path)
        if truth(rocm) is False:
            return "dead"
        if truth(cuda) is False:
            return "port"
        return None

    # ---- what a header finds defined where it is included -----------------------------------
    def _index(self, path: str) -> tuple[dict, dict]:
        """Per build, name -> (offsets, states) of the file's own events (its includes too)."""
        return self.walk(path).index

    def _state_before(self, path: str, name: str, offset: int, build: int, depth: int) -> State | None:
        events = self._index(path)[build].get(name)
        if events is not None:
            events = _events(events, name)
            i = bisect.bisect_left(events[0], offset) - 1
            if i >= 0:
                return events[1][i]
        return self._entry_state(path, name, build, depth + 1)

    def _entry_state(self, path: str, name: str, build: int, depth: int = 0) -> State | None:
        """The state of `name` at every place the build includes header `path` (one
        definition, or undefined everywhere), else None."""
        key = (path, name, build)
        if key in self._entries:
            return self._entries[key]
        if depth >= MAX_INCLUDE_DEPTH:
            return None
        self._entries[key] = None  # an include cycle agrees on nothing
        if self._unwalked_includers(path):  # what the others define there is not known
            return None
        met: list = []  # the states the header meets, in order, without repeats
        for including, offset, on_rocm, on_cuda in self._sites_of(path) if _is_header(path) else ():
            if truth((on_rocm, on_cuda)[build]) is False or truth(self.reach(including)[build]) is False:
                continue  # this build does not include it there
            state = self._state_before(including, name, offset, build, depth)
            if state is None or state is MAYBE or isinstance(state, OneOf):
                met = []
                break
            if state not in met:
                met.append(state)
        agreed: State | None = None
        if len(met) == 1:
            agreed = met[0]
        elif 1 < len(met) <= MAX_ALTERNATIVES:
            agreed = OneOf(tuple(met))  # each includer's own: a condition decides where all agree
        self._entries[key] = agreed
        return agreed

    # ---- each file's part -----------------------------------------------------------------------
    def environment(self, path: str, follow_includers: bool = True) -> FileEnvironment:
        """The part of the environment `path` needs: the macros its bytes name (and those
        their bodies name), the intrinsic-named functions ROCm code defines, and the
        header's status from the places that include it.

        `follow_includers` False (files named alone: a file of the project context, read
        for the cross-file rules only): the places that include a header are those the walk
        found so far; no more of its includers are walked for it."""
        if follow_includers or self._includers_of is None:
            return self._environment(path)
        memo = self._reach, self._entries, self._hipified, self._rocm_compiled
        # Worked out from fewer sites: kept apart from the named files' answers.
        self._reach, self._entries, self._hipified, self._rocm_compiled = self._context_memo
        self._following = False
        try:
            return self._environment(path)
        finally:
            self._following = True
            self._reach, self._entries, self._hipified, self._rocm_compiled = memo

    def _environment(self, path: str) -> FileEnvironment:
        walk = self.walk(path)
        status = self.status(path)
        included = _is_header(path) and bool(self._sites_of(path))
        hipified = self.hipified(path)
        data = self._data(path) or b""
        # Where a ROCm build compiles the file as written, or the project has none yet (what
        # one that did would meet), the toolkit headers a project file stands in for.
        as_written = not hipified and self.compiled_on_rocm(path)
        project_headers = self._stand_ins(path, data) if as_written or not (hipified or self._rocm_build) \
            else frozenset()
        if walk is _EMPTY_WALK and not self._rocm_defines and not self._cuda_defines and not self._rocm_undefined \
                and status is None and not included and not hipified and not project_headers:
            return _NOTHING_DEFINED[self._rocm_build, self._hip_code]
        words = _Words(data)
        macros = ({}, {})
        own = self._index(path)
        candidates = ()
        if included:
            candidates = ([n for n in self._known_names if n.encode() in words] if len(self._known_names) <= _FEW_NAMES
                          else [n for n in (w.decode() for w in words.all()) if n in self._known_names])
        for b in (ROCM, CUDA):
            events = own[b]
            # What every place that includes this header defined before the include (a
            # shim header the includer read first), from offset -1: before the first line.
            before: dict[str, tuple] = {}
            for name in candidates:
                entry = self._entry_state(path, name, b)
                if entry is not None:
                    offsets, states = _events(events.get(name, ((), ())), name)
                    before[name] = ((-1, *offsets), (entry, *states))
            # The file's events, with `before` over them (not copied: they can be thousands).
            by_name = _Overlay(before, events) if before else events
            for n in _closure(words, by_name):
                offsets, states = _events(by_name[n], n)
                macros[b][n] = (tuple(offsets), tuple(states))
        functions = {n: o for n, o in walk.functions.items() if n.encode() in words}
        rocm_defines = {**self.hip_switches(), **self._rocm_defines}
        if hipified:
            rocm_defines.update(hipify.ROCM_DEFINES)
        return FileEnvironment(macros, functions, rocm_defines, self._cuda_defines, status, self._rocm_build,
                               self._rocm_undefined | self.backend_selectors(),
                               self._hipify_tools if hipified else frozenset(), as_written, project_headers,
                               dict(walk.headers), self._hip_code)

    def _stand_ins(self, path: str, data: bytes) -> frozenset[str]:
        """The CUDA toolkit headers `path` names that a project file of the same path stands in for."""
        return frozenset(h for h in hipify.TOOLKIT_HEADERS
                         if h.encode() in data and self.resolve(path, h, True) is not None)

    def backend_selectors(self) -> frozenset[str]:
        """The project's CUDA backend selectors: macros whose name says CUDA where a twin the
        project also tests says HIP or ROCm (`KOKKOS_ENABLE_CUDA` beside `KOKKOS_ENABLE_HIP`,
        `X_USE_CUDA` beside `X_USE_ROCM`). Configure turns on one backend of such a pair, so
        the ROCm build never defines the CUDA one (unless its own `-D` flags say otherwise)."""
        if self._backend_selectors is None:
            self.walk_all()
            self._backend_selectors = frozenset(backend_selectors(self._tested_platform_names)) - self._rocm_defines.keys()
        return self._backend_selectors

    def hip_switches(self) -> dict[str, str]:
        """The project's HIP backend switches the ROCm build turns on: tested macros named
        for that (`X_USE_HIP`, `X_ENABLE_HIP`, `X_USING_ROCM`, `USE_ROCM`), which a configure
        step or build helper defines for the HIP build, as the CUDA build defines `X_USE_CUDA`.
        Not a name the build files define themselves: where and when they do is their word."""
        if self._hip_switches is None:
            self.walk_all()
            self._hip_switches = self._switch_names()
        return self._hip_switches

    def _switch_names(self) -> dict[str, str]:
        return {name: "1" for name in sorted(self._tested_platform_names)
                if _HIP_SWITCH.search(name) and name not in self._build_defined}

    def hipified(self, path: str) -> bool:
        """Does the ROCm build hipify `path`: a source it hipifies, or a header one includes?"""
        if self._hipified_sources is True:
            return True
        return self._reached_from(path, self._hipified_sources, self._hipified)

    def compiled_on_rocm(self, path: str) -> bool:
        """Does a ROCm build surely compile `path`: a source it lists where it surely goes, or
        a header one of those includes where the ROCm build may take the include?"""
        return self._reached_from(path, self._rocm_compiled_sources, self._rocm_compiled)

    def _reached_from(self, path: str, sources: frozenset[str], known: dict[str, bool]) -> bool:
        """Is `path` one of `sources`, or a header included from one where the ROCm build may
        take the include (`known` memoizes)? A search up its includers, breadth first: the
        files on the chain from a source down to `path` are reached; where no chain comes
        from a source, every file the search met is not (all their chains were searched)."""
        if not sources:
            return False
        found = known.get(path)
        if found is not None:
            return found
        came_from: dict[str, str | None] = {path: None}  # a file met -> the file it includes on the way to `path`
        frontier = [path]
        while frontier:
            further = []
            for file in frontier:
                if known.get(file) or file in sources:
                    at: str | None = file
                    while at is not None:
                        known[at] = True
                        at = came_from[at]
                    return True
                if known.get(file) is False or not _is_header(file):
                    continue
                for including, _, rocm, _ in self._sites_of(file):
                    if rocm is not False and including not in came_from:
                        came_from[including] = file
                        further.append(including)
            frontier = further
        known.update(dict.fromkeys(came_from, False))
        return False

# A name with CUDA, HIP or ROCM as one of its `_`-separated words (`X_ENABLE_CUDA`).
# A CUDA word in a backend switch's name and the words its ROCm twin says instead: the
# platform itself, and each CUDA library beside its HIP wrapper and ROCm library (the pairs
# hipify maps: cuSPARSE -> hipSPARSE over rocSPARSE, NCCL -> RCCL, NVTX -> roctx).
BACKEND_TWINS: dict[str, tuple[str, ...]] = {
    "CUDA": ("HIP", "ROCM"),
    "CUBLAS": ("HIPBLAS", "ROCBLAS"),
    "CUBLASLT": ("HIPBLASLT",),
    "CUSPARSE": ("HIPSPARSE", "ROCSPARSE"),
    "CUSOLVER": ("HIPSOLVER", "ROCSOLVER"),
    "CURAND": ("HIPRAND", "ROCRAND"),
    "CUFFT": ("HIPFFT", "ROCFFT"),
    "CUB": ("HIPCUB", "ROCPRIM"),
    "CUDNN": ("MIOPEN",),
    "NCCL": ("RCCL",),
    "NVTX": ("ROCTX",),
}
_PLATFORM_WORDS = sorted({w for cuda, twins in BACKEND_TWINS.items() for w in (cuda, *twins)}, key=len, reverse=True)
# A preprocessor or CMake name with a platform or library word in it (`KOKKOS_ENABLE_CUDA`,
# `HYPRE_USING_ROCSPARSE`): the candidates `backend_selectors` pairs up.
PLATFORM_NAME = re.compile(r"\b(?=\w*(?:%s))[A-Za-z]\w*" % "|".join(_PLATFORM_WORDS))


# A HIP backend switch's name: the last word says the platform, the one before it switches it.
_HIP_SWITCH = re.compile(r"(?:^|_)(?:USE|USING|ENABLE|ENABLED|WITH|BUILD)_(?:HIP|ROCM)$")


def backend_selectors(tested: Iterable[str]) -> set[str]:
    """The names among `tested` that say CUDA (or a CUDA library) where a twin in `tested`
    says HIP or ROCm (or that library's ROCm counterpart): `X_USE_CUDA` beside `X_USE_HIP`,
    `X_USING_CUSPARSE` beside `X_USING_ROCSPARSE`, and a platform word run into another
    (`TPL_ENABLE_CUDALIB` beside `TPL_ENABLE_HIPLIB`)."""
    tested = set(tested)
    found = set()
    for name in tested:
        if name.startswith("__"):
            continue
        words = name.split("_")
        for i, word in enumerate(words):
            if any("_".join([*words[:i], twin, *words[i + 1:]]) in tested for twin in _word_twins(word)):
                found.add(name)
                break
    return found


def _word_twins(word: str) -> list[str]:
    """`word` with its CUDA platform or library word, whole or at either end, said for ROCm."""
    if word in BACKEND_TWINS:
        return list(BACKEND_TWINS[word])
    return [twin + word[len(cuda):] if word.startswith(cuda) else word[:-len(cuda)] + twin
            for cuda, twins in BACKEND_TWINS.items() if word.startswith(cuda) or word.endswith(cuda)
            for twin in twins]


def _is_regular_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()  # follows a symlink, as `os.path.isfile` does
    except OSError:
        return False


_EMPTY_WALK = _Walk(({}, {}), ({}, {}), {})
# The headers of ROCm libraries that keep the CUDA library's API names (RCCL keeps NCCL's
# `nccl*`): where the ROCm build includes one, the names need no change (`FileEnvironment.includes`).
ROCM_DROP_IN_HEADERS = frozenset({"rccl/rccl.h", "rccl.h"})
# HIP's runtime headers: code that includes one is HIP code (`FileEnvironment.hip_code`).
HIP_RUNTIME_HEADERS = frozenset({"hip/hip_runtime.h", "hip/hip_runtime_api.h"})


def _names_hip_runtime(header: str) -> bool:
    """`hip/hip_runtime.h`, also under a folder the project's include path starts higher up
    (`rocm/include/hip/hip_runtime_api.h`)."""
    return any(header == h or header.endswith("/" + h) for h in HIP_RUNTIME_HEADERS)


HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".ipp", ".tpp", ".inc"})


def _is_header(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in HEADER_SUFFIXES
# Bytes that are not part of an identifier become spaces: `split()` then gives the words.
_WORD_BYTES = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == 0x5F) else 0x20 for c in range(256))
_FEW_NAMES = 64  # names asked about one by one; more, and the file's words are listed once
# A line of names joined by newlines that is not one word of `_WORD_BYTES`'s kind (found in C).
_IRREGULAR_NAME = re.compile(r"^.*[^A-Za-z0-9_\n].*$", re.M)


class _Words:
    """Is a name a whole word of a file's bytes? A file is asked about a few names (those its
    own and its includes' directives define): searching for each costs less than listing
    every word of the file, until a name turns up often inside other words."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._budget = 4 * _FEW_NAMES  # occurrences looked at before the words are listed
        self._all: set[bytes] | None = None
        self._text: set[str] | None = None  # `_all`, decoded

    def __contains__(self, word: bytes) -> bool:
        if self._all is not None:
            return word in self._all
        return self._search(word, budgeted=True)

    def _search(self, word: bytes, budgeted: bool = False) -> bool:
        data, end = self._data, len(self._data)
        at = data.find(word)
        while at != -1:
            after = at + len(word)
            if (at == 0 or _WORD_BYTES[data[at - 1]] == 0x20) and (after == end or _WORD_BYTES[data[after]] == 0x20):
                return True
            if budgeted:
                self._budget -= 1
                if self._budget < 0:
                    return word in self.all()
            at = data.find(word, at + 1)
        return False

    def all(self) -> set[bytes]:
        if self._all is None:
            self._all = set(self._data.translate(_WORD_BYTES).split())
        return self._all

    def among(self, names: Iterable[str]) -> set[str]:
        """The `names` that are whole words of the file. Many names (a file under headers
        that define thousands of macros) are looked up in the file's words, listed once,
        rather than searched for one by one; a name with a character outside `[A-Za-z0-9_]`
        (never one of the listed words: `#undef X;`, a name in another script) is still
        searched for."""
        if len(names) <= _FEW_NAMES:
            return {n for n in names if n.encode() in self}
        text = self._text
        if text is None:
            text = self._text = {w.decode() for w in self.all()}
        found = text.intersection(names)
        found.update(n for n in _IRREGULAR_NAME.findall("\n".join(names)) if self._search(n.encode()))
        return found


_ABSENT = object()


def _merge(into: immutables.Map, brought: immutables.Map, maybe: bool) -> tuple[immutables.Map, list[str], bool]:
    """A file's final states after an include: `into`, the states so far, with `brought`, the
    included file's final states, over them (each name `brought` sets has its state, MAYBE
    where this build may skip the include and the states differ). Also the names `into` had
    whose state changes, and whether `brought` has names `into` had not. Read from the
    smaller side and built on the larger, whose entries the result shares."""
    changed: list[str] = []
    if len(into) <= len(brought):
        kept = {}  # names only `into` has
        for name, state in into.items():
            other = brought.get(name, _ABSENT)
            if other is _ABSENT:
                kept[name] = state
            elif other is not state and not (maybe and state is MAYBE):
                changed.append(name)
        brings_new = len(brought) > len(into) - len(kept)
        if not changed and not brings_new:
            return into, changed, False
        if maybe:
            result = into.mutate()
            for name in brought:
                if name not in into:
                    result[name] = MAYBE
            for name in changed:
                result[name] = MAYBE
            return result.finish(), changed, brings_new
        result = brought.mutate()
        for name, state in kept.items():
            result[name] = state
        return result.finish(), changed, brings_new
    new = []
    for name, other in brought.items():
        state = into.get(name, _ABSENT)
        if state is _ABSENT:
            new.append(name)
        elif other is not state and not (maybe and state is MAYBE):
            changed.append(name)
    if not changed and not new:
        return into, changed, False
    result = into.mutate()
    for name in (*changed, *new):
        result[name] = MAYBE if maybe else brought[name]
    return result.finish(), changed, bool(new)


class _Included:
    """An `#include` at `offset` in a walk's index (`_Index`): the names it brings (`brought`,
    the included file's final states) that the file had not seen (`before`: its final states
    just before the include) have their first event there, as do those whose state it changes.
    Their state there is the one the included file leaves them in, or MAYBE where this build
    may skip the include (`maybe`) and the states differ."""

    __slots__ = ("offset", "maybe", "brought", "before")

    def __init__(self, offset: int, maybe: bool, brought, before) -> None:
        self.offset, self.maybe, self.brought, self.before = offset, maybe, brought, before

    def event(self, name: str) -> State | None:
        """The state `name` takes here, or None where the include leaves it as it was."""
        state = self.brought.get(name, _ABSENT)
        if state is _ABSENT:
            return None
        before = self.before.get(name, _ABSENT)
        if before is _ABSENT:
            return MAYBE if self.maybe else state
        if state is before or (self.maybe and before is MAYBE):
            return None
        return MAYBE if self.maybe else state


class _Index:
    """A walk's index for one build, read as a mapping name -> (offsets, states), its events
    in file order: the file's own (`own`: a define, an undef) and those of its includes
    (`_Included`), worked out when a name is read. Under large headers a file sees thousands
    of names and an include changes many (a header a build may skip makes them MAYBE): a slot
    each, per file, was most of a large project's memory. The names are those of the walk's
    final states (`visible`): every event also sets a final state."""

    __slots__ = ("own", "includes", "visible")

    def __init__(self, visible) -> None:
        self.own: dict = {}  # name -> (offset, state), or ([offsets], [states]) from its second
        self.includes: list[_Included] = []  # in file order
        self.visible = visible

    def add(self, name: str, offset: int, state: State) -> None:
        """One of the file's own events (after those it has)."""
        entry = self.own.get(name)
        if entry is None:
            self.own[name] = (offset, state)
        elif type(entry[0]) is int:
            self.own[name] = ([entry[0], offset], [entry[1], state])
        else:
            entry[0].append(offset)
            entry[1].append(state)

    def get(self, name: str, default=None):
        if name not in self.visible:
            return default
        own = self.own.get(name)
        offsets, states = _events(own, name) if own is not None else ((), ())
        found = [(included.offset, state) for included in self.includes
                 if (state := included.event(name)) is not None]
        if not found:
            return (tuple(offsets), tuple(states)) if own is not None else default
        events = sorted([*zip(offsets, states), *found], key=lambda event: event[0])
        return tuple(o for o, _ in events), tuple(state for _, state in events)

    def __getitem__(self, name: str):
        entry = self.get(name)
        if entry is None:
            raise KeyError(name)
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self.visible

    def __iter__(self):
        return iter(self.visible)

    def __len__(self) -> int:
        return len(self.visible)


def _events(entry, name: str) -> tuple:
    """A walk index's entry for `name` as (offsets, states): an own event's pair, or lists."""
    return ((entry[0],), (entry[1],)) if type(entry[0]) is int else entry


class _Overlay:
    """Two mappings read as one, `top` over `under` (what `_closure` asks of a mapping)."""

    def __init__(self, top: dict, under: dict) -> None:
        self.top, self.under = top, under

    def __contains__(self, name: str) -> bool:
        return name in self.top or name in self.under

    def __getitem__(self, name: str):
        found = self.top.get(name)
        return found if found is not None else self.under[name]

    def among(self, words: "_Words") -> set[str]:
        return words.among(self.under) | words.among(self.top)


def _closure(words: "_Words", by_name: "Mapping[str, tuple[list, list]] | _Overlay") -> set[str]:
    """The names of `by_name` among `words`, with the names their bodies mention (expanded in `#if`)."""
    needed = by_name.among(words) if isinstance(by_name, _Overlay) else words.among(by_name)
    pending = list(needed)
    while pending:
        name = pending.pop()
        for state in _events(by_name[name], name)[1]:
            if isinstance(state, Macro) and state.body:
                for kind, text in state.body_tokens():
                    if kind == "id" and text in by_name and text not in needed:
                        needed.add(text)
                        pending.append(text)
    return needed


_GUARD_TEST = re.compile(r"\s*!\s*defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?\s*$")


def _is_include_guard(directives: list[Directive], index: int) -> bool:
    """`#ifndef X_H` (or `#if !defined(X_H)`) right before `#define X_H`: an include guard.
    A header is read once per walk, so its guard is open, whatever `X_H` is elsewhere."""
    d = directives[index]
    if index + 1 >= len(directives) or directives[index + 1].kind != "define":
        return False
    if d.kind == "ifndef":
        words = _strip_comments(d.text).split()
        name = words[0] if words else None
    elif d.kind == "if":
        m = _GUARD_TEST.match(_strip_comments(d.text))
        name = m.group(1) if m else None
    else:
        return False
    defined = _DEFINE.match(directives[index + 1].text)
    return name is not None and defined is not None and defined.group(1) == name


def _chains(directives: list[Directive]) -> dict[int, list[int]]:
    """Each `#if`/`#ifdef`/`#ifndef` (by index) -> the indexes of its arms' directives."""
    chains: dict[int, list[int]] = {}
    open_: list[list[int]] = []
    for i, d in enumerate(directives):
        if d.kind in _CONDITIONALS:
            arms = [i]
            chains[i] = arms
            open_.append(arms)
        elif d.kind in _ALTERNATIVES and open_:
            open_[-1].append(i)
        elif d.kind == "endif" and open_:
            open_.pop()
    return chains
