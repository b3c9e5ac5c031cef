"""Y, and the setup.py side of B and L: PyTorch-extension builds that break on ROCm.

On a ROCm build of PyTorch, `torch.utils.cpp_extension` compiles `.cu`/`.hip` sources with
hipcc and hands it the `nvcc` list of `extra_compile_args`; C++ sources get the `cxx` list
and GCC; `BuildExtension` adds `-DUSE_ROCM=1 -D__HIP_PLATFORM_AMD__=1` and takes the gfx
targets from `PYTORCH_ROCM_ARCH`. What reaches which argument is read by `python_build`.
"""

from __future__ import annotations

import ast
import re

from portlint.checks import nvcc_flags
from portlint.checks.libraries import library_for_link_name
from portlint.checks.python_build import BuildScript, StringArg, callee_name, dotted_name
from portlint.finding import Finding, Severity, finding
from portlint.fix import Edit, Fix
from portlint.source import SourceFile

ROCM_NVCC_LIST = "['-O3', '-DUSE_ROCM', '--offload-arch=gfx90a']"


def _words(args: list[StringArg], seen: set[tuple[int, int]]):
    """(string, word, index) for each word of `args` not yet seen (lists are shared by extensions)."""
    for arg in args:
        for word, index in arg.tokens():
            if (arg.start, index) not in seen:
                seen.add((arg.start, index))
                yield arg, word, index


def _flag_finding(source: SourceFile, arg: StringArg, index: int, token: str, message: str, fix: Fix,
                  **kwargs) -> Finding:
    start, end = arg.token_range(index, token)
    return finding(source, start, end, message, fix, **kwargs)


# ---- Y001 cudaextension-nvcc-args -----------------------------------------------------------
def check_cudaextension_nvcc_args(source: SourceFile) -> list[Finding]:
    if b"nvcc" not in source.data and b"offload-arch" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen_nvcc, seen_gcc = [], set(), set()
    for call in script.extension_calls():
        by_compiler = script.compile_args(call)
        for arg, token, index in _words(by_compiler.get("nvcc", []), seen_nvcc):
            flag = nvcc_flags.classify(token)
            if flag is not None:
                findings.append(_nvcc_flag_finding(source, arg, index, flag))
        # The `cxx` list, and a plain list (given to both compilers), reach GCC.
        for arg, token, index in _words(by_compiler.get("cxx", []) + by_compiler.get("all", []), seen_gcc):
            if nvcc_flags.is_offload_arch(token):
                findings.append(_flag_finding(
                    source, arg, index, token,
                    f"GCC compiles the `cxx` list and rejects `{token}`; hipcc never sees it.",
                    Fix.advice(f"Move `{token}` to the `nvcc` list, which hipcc compiles on ROCm")))
    return findings


def _nvcc_flag_finding(source: SourceFile, arg: StringArg, index: int, flag: nvcc_flags.NvccFlag) -> Finding:
    token = flag.spelling
    message = f"On ROCm the `nvcc` list goes to hipcc, {flag.effect.format(flag=f'`{token}`')}."
    branch = f"`'nvcc': {ROCM_NVCC_LIST} if torch.version.hip else [...]`"
    if flag.replacement is not None and arg.value_start is not None:
        start, end = arg.token_range(index, token)
        fix = Fix.unsafe(
            f"Replace `{token}` with `{flag.replacement}`, or keep it for nvcc and branch: {branch}",
            Edit(start, end, flag.replacement))
    else:
        fix = Fix.advice(f"Branch on `torch.version.hip` and, for hipcc, {flag.rocm}: {branch}")
    severity = Severity.ERROR if flag.picks_target else None
    return _flag_finding(source, arg, index, token, message, fix, severity=severity)


# ---- Y003 unpinned-triton -------------------------------------------------------------------
TRITON_DISTRIBUTIONS = frozenset({"triton", "pytorch-triton", "pytorch-triton-rocm"})
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)", re.S)
_EXACT = re.compile(r"===?\s*[^\s*,]+")


def check_unpinned_triton(source: SourceFile) -> list[Finding]:
    if b"triton" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen = [], set()
    for call in script.calls({"setup"}):
        requirements = script.strings(script.argument(call, "install_requires") + script.argument(call, "setup_requires"))
        for extra in script.dict_strings(script.argument(call, "extras_require")).values():
            requirements.extend(extra)
        for arg in requirements:
            if arg.start in seen or not _is_unpinned_triton(arg.value):
                continue
            seen.add(arg.start)
            findings.append(finding(
                source, arg.start, arg.end,
                f"Unpinned `{arg.value.strip()}` can replace torch's `pytorch-triton-rocm`; the skew crashes.",
                Fix.advice("Pin the triton your torch release was built with, e.g. "
                           "`'pytorch-triton-rocm==3.1.0' if torch.version.hip else 'triton==3.1.0'` for torch 2.5")))
    return findings


def _is_unpinned_triton(requirement: str) -> bool:
    m = _REQUIREMENT.fullmatch(requirement)
    if m is None:
        return False
    name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
    if name not in TRITON_DISTRIBUTIONS:
        return False
    spec = m.group(2).split(";", 1)[0].strip()
    if spec.startswith("@"):
        return False  # a direct URL names one build
    return not any(_EXACT.fullmatch(part.strip()) for part in spec.split(","))


# ---- Y004 rocm-arch-unset -------------------------------------------------------------------
CUDA_ARCH_VARIABLE = "TORCH_CUDA_ARCH_LIST"
# Any of these shows the build chooses its gfx targets.
ROCM_ARCH_MENTIONS = ("PYTORCH_ROCM_ARCH", "offload-arch", "amdgpu-target", "AMDGPU_TARGETS", "GPU_TARGETS",
                      "HIP_ARCHITECTURES", "GPU_ARCHS")


def check_rocm_arch_unset(source: SourceFile) -> list[Finding]:
    if CUDA_ARCH_VARIABLE.encode() not in source.data:
        return []
    script = BuildScript(source)
    strings = script.string_constants()
    if any(m in arg.value for arg in strings for m in ROCM_ARCH_MENTIONS):
        return []
    first = next((a for a in strings if a.value == CUDA_ARCH_VARIABLE and script.model.is_live(a.start)), None)
    if first is None:
        return []
    return [finding(
        source, first.start, first.end,
        f"Archs come from `{CUDA_ARCH_VARIABLE}` only; ROCm gfx targets are left to the build host.",
        Fix.advice("Choose the gfx targets on the ROCm path: "
                   "`os.environ.setdefault('PYTORCH_ROCM_ARCH', 'gfx90a;gfx942')` when `torch.version.hip`"))]


# ---- B002 lto-mixed-compilers (setup.py) ------------------------------------------------------
def check_lto_mixed_compilers(source: SourceFile) -> list[Finding]:
    if b"-flto" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen = [], set()
    for call in script.extension_calls():
        by_compiler = script.compile_args(call)
        if not _builds_device_code(call, by_compiler):
            continue
        for arg, token, index in _words([a for args in by_compiler.values() for a in args], seen):
            if nvcc_flags.is_lto(token):
                findings.append(_flag_finding(
                    source, arg, index, token,
                    f"`{token}` mixes GCC and hipcc's clang LTO objects; the `.so` can lose `PyInit_*`.",
                    Fix.advice(f"Drop `{token}` when `torch.version.hip`: "
                               f"`'cxx': ['-O3'] if torch.version.hip else ['-O3', '{token}']`")))
    return findings


def _builds_device_code(call: ast.Call, by_compiler: dict) -> bool:
    """A CUDAExtension, or an extension given an `nvcc` list: hipcc compiles part of it."""
    return callee_name(call) == "CUDAExtension" or "nvcc" in by_compiler


# ---- B003 missing-use-rocm (setup.py) ---------------------------------------------------------
ROCM_DEFINES = frozenset({"USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__"})
ROCM_PATH_NAMES = frozenset({"IS_HIP_EXTENSION", "ROCM_HOME", "version.hip"})  # last parts of a dotted name
ROCM_PATH_STRINGS = frozenset({"ROCM_HOME", "ROCM_PATH", "hipcc"})


def check_missing_use_rocm(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(m.encode() in data for m in ("IS_HIP_EXTENSION", "ROCM_HOME", "ROCM_PATH", "version.hip", "hipcc")):
        return []
    script = BuildScript(source)
    extensions = script.extension_calls()
    # torch's BuildExtension defines USE_ROCM and __HIP_PLATFORM_AMD__ itself on ROCm.
    if not extensions or _mentions_build_extension(script) or _defines_rocm_macro(script):
        return []
    markers = [n for n in script.names() if _ends_with_any(dotted_name(n), ROCM_PATH_NAMES)]
    markers += [a.node for a in script.string_constants() if a.value in ROCM_PATH_STRINGS]
    if not markers:
        return []
    live = [n for n in markers + extensions if script.model.is_live(script.range(n)[0])]
    if not live:
        return []
    where = min(live, key=lambda n: script.range(n)[0])
    start, end = script.range(where)
    return [finding(
        source, start, end,
        "This ROCm build never defines `USE_ROCM`; `#ifdef USE_ROCM` code takes its CUDA branch.",
        Fix.advice("Define it on the ROCm path: `define_macros=[('USE_ROCM', '1'), ('__HIP_PLATFORM_AMD__', '1')]` "
                   "in the extension, or build with `cmdclass={'build_ext': BuildExtension}`"))]


def _ends_with_any(dotted: str | None, names: frozenset[str]) -> bool:
    return dotted is not None and any(dotted == n or dotted.endswith("." + n) for n in names)


def _mentions_build_extension(script: BuildScript) -> bool:
    for node in ast.walk(script.tree):
        if isinstance(node, ast.Name) and node.id == "BuildExtension":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "BuildExtension":
            return True
        if isinstance(node, ast.alias) and node.name == "BuildExtension":
            return True
    return False


def _defines_rocm_macro(script: BuildScript) -> bool:
    """`-DUSE_ROCM...` in any string, or a `('USE_ROCM', ...)` macro tuple, outside CUDA-only code."""
    for arg in script.string_constants():
        for token, _ in arg.tokens():
            if token.startswith("-D") and re.split(r"[=\s]", token[2:], 1)[0] in ROCM_DEFINES:
                return True
    for node in ast.walk(script.tree):
        if (isinstance(node, (ast.Tuple, ast.List)) and 1 <= len(node.elts) <= 2
                and isinstance(node.elts[0], ast.Constant) and node.elts[0].value in ROCM_DEFINES
                and not script.is_dead(node)):
            return True
    return False


# ---- B004 cuda-toolkit-path (setup.py) --------------------------------------------------------
CUDA_ROOT_NAMES = frozenset({"CUDA_HOME", "CUDA_PATH"})
ROCM_ROOT_MENTIONS = ("ROCM_PATH", "ROCM_HOME", "ROCM_ROOT", "HIP_PATH", "/opt/rocm")


def check_cuda_toolkit_path(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(m.encode() in data for m in (*CUDA_ROOT_NAMES, "/usr/local/cuda")):
        return []
    if any(m.encode() in data for m in ROCM_ROOT_MENTIONS) and _mentions_rocm_root(source):
        return []
    script = BuildScript(source)
    uses = []  # (node, culprit)
    for node in script.names():
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in CUDA_ROOT_NAMES:
            uses.append((node, name))
    for arg in script.string_constants():
        if arg.value in CUDA_ROOT_NAMES or arg.value.startswith("/usr/local/cuda"):
            uses.append((arg.node, arg.value))
    findings, statements = [], set()
    for node, culprit in sorted(uses, key=lambda u: script.range(u[0])[0]):
        statement = script.statement_of(node)
        if id(statement) in statements or not script.model.is_live(script.range(node)[0]):
            continue
        statements.add(id(statement))
        start, end = script.range(node)
        if culprit.startswith("/"):
            message = f"Hard-coded `{culprit}` has no ROCm fallback; ROCm installs to `/opt/rocm`."
        else:
            message = f"`{culprit}` has no ROCm fallback; on ROCm it is unset or names a stray CUDA."
        findings.append(finding(source, start, end, message, Fix.advice(
            "Take the ROCm root on the ROCm path: `ROCM_HOME if torch.version.hip else CUDA_HOME` "
            "(`os.environ.get('ROCM_PATH', '/opt/rocm')`), and leave `CUDA_HOME` unset in ROCm builds")))
    return findings


def _mentions_rocm_root(source: SourceFile) -> bool:
    """A ROCm root named in code (a name or a string), not only in a comment."""
    for node in ast.walk(source.python_ast):
        text = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                else node.name if isinstance(node, ast.alias) else None)
        if text is not None and any(m in text for m in ROCM_ROOT_MENTIONS):
            return True
    return False


# ---- L001 cuda-library (setup.py) -------------------------------------------------------------
def check_cuda_library(source: SourceFile) -> list[Finding]:
    if b"libraries" not in source.data and b"-l" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen = [], set()
    for call in script.extension_calls():
        for arg, word, index in _words(script.strings(script.argument(call, "libraries")), seen):
            findings.append(_library_finding(source, arg, index, word, word))
        for arg, word, index in _words(script.strings(script.argument(call, "extra_link_args")), seen):
            if word.startswith("-l") and len(word) > 2:
                findings.append(_library_finding(source, arg, index, word, word[2:]))
    return [f for f in findings if f is not None]


def _library_finding(source: SourceFile, arg: StringArg, index: int, written: str, name: str) -> Finding | None:
    """For `written` (`cublas` in `libraries`, `-lcublas` in link args) naming library `name`."""
    lib = library_for_link_name(name)
    if lib is None or lib.counterpart is None:
        return None
    rocm_name = lib.hip_library or ROCM_LINK_NAMES.get(lib.counterpart)
    if rocm_name is None:
        fix = Fix.advice(f"{lib.port} on the ROCm path")
    else:
        rocm_written = written.replace(name, rocm_name)
        fix = Fix.advice(f"Link {lib.counterpart} on the ROCm path: "
                         f"`'{rocm_written}' if torch.version.hip else '{written}'`")
    return _flag_finding(
        source, arg, index, written,
        f"`{written}` links {lib.name}, which ROCm lacks; the link fails (`-l{name}` not found).",
        fix, severity=lib.severity)


# The name to link for each ROCm counterpart in the shared table (`-l<name>`), where the
# table gives none itself.
ROCM_LINK_NAMES = {
    "hipBLAS": "hipblas", "hipBLASLt": "hipblaslt", "hipFFT": "hipfft", "hipSPARSE": "hipsparse",
    "hipSOLVER": "hipsolver", "hipRAND": "hiprand", "MIOpen": "MIOpen", "RCCL": "rccl",
    "HIP": "amdhip64", "hipRTC": "hiprtc",
}
