"""B and C in CMake: link targets, flags, definitions and paths that only a CUDA build has."""

from __future__ import annotations

import re

from portlint import queries
from portlint.checks.cmake_ast import (
    Command,
    byte_offset,
    commands,
    hip_language_commands,
    items,
    line_indent,
    property_values,
    rocm_branch_heads,
    values_reaching,
    word,
)
from portlint.checks.libraries import (
    CUDA_LIBRARIES,
    CUDA_RUNTIME_LIBRARIES,
    CudaLibrary,
    library_for_link_name,
)
from portlint.finding import Finding, at_node, finding
from portlint.fix import Edit, Fix
from portlint.rocm_path import Status
from portlint.source import CMAKE, SourceFile

# ---- C003: CUDA link targets ----------------------------------------------------------------
_LINK_COMMANDS = frozenset({"target_link_libraries", "link_libraries"})
# A variable named like a list of libraries is one even if this file never links it
# (a subdirectory's `set(EXTRA_LIBS ...)` is linked by its parent).
_LINK_VARIABLE = re.compile(r"(?:^|_)(?:LIBS|LIBRARIES)$", re.IGNORECASE)
# `${CUDA_LIBRARIES}`, `${CUDA_CUBLAS_LIBRARIES}`, `${CUDA_cublas_LIBRARY}`, `${CUDA_NVRTC_LIB}`,
# `${NCCL_LIBRARIES}`: the group names the library.
_LIBRARY_VARIABLE = re.compile(r"(?:CUDA_)?([A-Za-z0-9]+?)(?:_static)?_(?:LIB|LIBS|LIBRARY|LIBRARIES)",
                               re.IGNORECASE)
_CUDA_TARGET = re.compile(r"CUDA::(\w+)")
_LINK_FLAG = re.compile(r"-l(\w+)")
_LIBRARY_FILE = re.compile(r"(?:.*/)?lib(\w+?)(?:_static)?\.(?:so|a)(?:\.[\d.]+)?")
_ADD_TO_TARGET = re.compile(r"cuda_add_(\w+)_to_target")  # FindCUDA's cublas/cufft helpers
# A culprit can be swapped for a target name when it is a whole list item: alone in its
# argument, between `;`, or a generator expression's value (`$<BUILD_INTERFACE:CUDA::cublas>`).
_ITEM_START = (b"", b'"', b";", b":")
_ITEM_END = (b"", b'"', b";", b">")
_NORMAL_VARIABLE_REFS = "(variable_ref (normal_var (variable) @name)) @ref"
_LINK_NAME_BYTES = {b"cuda"} | {
    name.lower().encode() for lib in CUDA_LIBRARIES + CUDA_RUNTIME_LIBRARIES for name in lib.link_names
}


def check_cmake_cuda_link_target(source: SourceFile) -> list[Finding]:
    lowered = source.data.lower()
    if not any(name in lowered for name in _LINK_NAME_BYTES):
        return []
    all_commands = commands(source)
    direct = []
    for command in all_commands:
        if command.name in _LINK_COMMANDS:
            direct.extend(command.args)
        else:
            direct.extend(property_values(command, source, lambda p: p.endswith("LINK_LIBRARIES")))
    defined = {word(c.args[0], source) for c in all_commands if c.name == "add_library" and c.args}
    findings = []
    for arg in values_reaching(source, all_commands, direct, _LINK_VARIABLE.search):
        for start, end, text, lib in _link_culprits(arg, source):
            if text in defined:
                continue  # `add_library(CUDA::cublas ALIAS roc::hipblas)`: the project maps it
            findings.append(finding(source, start, end, _link_message(text, lib),
                                    _link_fix(source, arg, start, end, text, lib)))
    for command in all_commands:
        m = _ADD_TO_TARGET.fullmatch(command.name)
        lib = library_for_link_name(m.group(1)) if m else None
        if lib is not None:
            findings.append(at_node(source, command.node, _link_message(command.name, lib),
                                    _add_to_target_fix(source, command, lib)))
    return sorted(findings, key=lambda f: f.location.start_byte)


def _link_culprits(arg, source: SourceFile):
    """(start, end, text, library or None) for each CUDA library named in one link argument."""
    found = {}
    for match in queries.matches(CMAKE, _NORMAL_VARIABLE_REFS, arg):
        ref, name = match["ref"][0], source.node_text(match["name"][0])
        m = _LIBRARY_VARIABLE.fullmatch(name)
        lib = library_for_link_name(m.group(1)) if m else None
        if lib is not None:
            found[ref.start_byte] = (ref.start_byte, ref.end_byte, source.node_text(ref), lib)
    for start, end, text in items(arg, source):
        for m in _CUDA_TARGET.finditer(text):
            at = byte_offset(start, text, m.start())
            found.setdefault(at, (at, byte_offset(start, text, m.end()), m.group(), library_for_link_name(m.group(1))))
        bare = text.strip('"')
        offset = byte_offset(start, text, text.index(bare)) if bare else start
        flag = _LINK_FLAG.fullmatch(bare)
        library_file = _LIBRARY_FILE.fullmatch(bare) if "${" not in bare.rpartition("/")[2] else None
        name = flag.group(1) if flag else library_file.group(1) if library_file else bare
        lib = library_for_link_name(name)
        # A bare word links a library only as spelled on disk (`cublas`, not `CUBLAS`).
        if lib is not None and (flag or library_file or name in lib.link_names):
            found.setdefault(offset, (offset, offset + len(bare.encode("utf-8")), bare, lib))
    return [found[k] for k in sorted(found)]


def _link_message(text: str, lib: CudaLibrary | None) -> str:
    what = lib.name if lib is not None else "a library"
    return f"`{text}` links {what} from the CUDA toolkit, which ROCm builds lack."


def _link_fix(source: SourceFile, arg, start: int, end: int, text: str, lib: CudaLibrary | None) -> Fix:
    if lib is not None and lib.hip_library is not None:
        return Fix.advice(f"Link {lib.counterpart}'s `{lib.hip_library}` from `$ENV{{ROCM_PATH}}/lib` "
                          f"instead of `{text}`")
    if lib is None or lib.hip_target is None:
        return Fix.advice(f"Link the ROCm counterpart of `{text}` in an `if(USE_ROCM)` branch "
                          f"and keep `{text}` in its `else()`")
    title = f"Replace `{text}` with `{lib.hip_target}` after `find_package({lib.hip_package} REQUIRED)`"
    before = source.data[max(start - 1, arg.start_byte):start]
    after = source.data[end:min(end + 1, arg.end_byte)]
    if before not in _ITEM_START or after not in _ITEM_END:
        return Fix.advice(title)
    return Fix.unsafe(title, Edit(start, end, lib.hip_target))


def _add_to_target_fix(source: SourceFile, command: Command, lib: CudaLibrary) -> Fix:
    if lib.hip_target is None or not command.args:
        return Fix.advice(f"Link {lib.counterpart} instead of `{command.name}`")
    target = word(command.args[0], source)
    replacement = f"target_link_libraries({target} {lib.hip_target})"
    return Fix.unsafe(f"Replace `{command.name}({target})` with `{replacement}` after "
                      f"`find_package({lib.hip_package} REQUIRED)`",
                      Edit.replace(command.node, replacement))


# ---- B002: LTO with two compilers ---------------------------------------------------------
_FLAG_COMMANDS = frozenset({
    "add_compile_options", "target_compile_options", "add_link_options", "target_link_options",
    "add_definitions", "target_link_libraries", "link_libraries",
})
# Flags for the C and C++ compiler and the linker; CUDA/HIP flags go to the GPU compiler.
_CXX_FLAG_VARIABLE = re.compile(r"CMAKE_(?:CXX|C|SHARED_LINKER|EXE_LINKER|MODULE_LINKER)_FLAGS(?:_\w+)?")
_FLAG_PROPERTY = re.compile(r"(?:INTERFACE_)?(?:COMPILE_OPTIONS|COMPILE_FLAGS|LINK_OPTIONS|LINK_FLAGS)(?:_\w+)?")
_LTO_FLAG = re.compile(r"(?<![\w-])-flto(?:=[\w-]+)?(?![\w-])")
_GPU_ONLY_GENEX = re.compile(r"COMPILE_LANGUAGE:(?:HIP|CUDA)\b")
_IPO_VARIABLE = re.compile(r"CMAKE_INTERPROCEDURAL_OPTIMIZATION(?:_\w+)?")
_IPO_PROPERTY = re.compile(r"INTERPROCEDURAL_OPTIMIZATION(?:_\w+)?")
_TRUE = frozenset({"ON", "TRUE", "YES", "Y", "1"})
# hipcc, amdclang++, or a clang++ from the ROCm tree: one compiler for C++ and HIP.
_HIP_CLANG = re.compile(r"hipcc|amdclang\+\+|CMAKE_HIP_COMPILER|(?:rocm|hip).*clang\+\+", re.IGNORECASE)
_LTO_FIX = ("Build C++ with the HIP compiler (`set(CMAKE_CXX_COMPILER ${ROCM_PATH}/llvm/bin/clang++)`) "
            "or drop `-flto` on the ROCm path")


def check_lto_mixed_compilers(source: SourceFile) -> list[Finding]:
    data = source.data
    if b"-flto" not in data and b"INTERPROCEDURAL_OPTIMIZATION" not in data.upper():
        return []
    all_commands = commands(source)
    if not hip_language_commands(source, all_commands) or _cxx_compiler_is_hip_clang(source, all_commands):
        return []
    findings = []
    direct = []
    for command in all_commands:
        if command.name in _FLAG_COMMANDS:
            direct.extend(command.args)
        direct.extend(property_values(command, source, _FLAG_PROPERTY.fullmatch))
    for arg in values_reaching(source, all_commands, direct, _CXX_FLAG_VARIABLE.fullmatch):
        for start, _, text in items(arg, source):
            if _GPU_ONLY_GENEX.search(text):
                continue
            for m in _LTO_FLAG.finditer(text):
                findings.append(finding(
                    source, byte_offset(start, text, m.start()), byte_offset(start, text, m.end()),
                    f"`{m.group()}` mixes GCC C++ and HIP clang LTO objects; the linked module loses symbols.",
                    Fix.advice(_LTO_FIX)))
    for command in all_commands:
        for node, name in _ipo_switches(command, source):
            findings.append(at_node(
                source, node,
                f"`{name}` mixes GCC C++ and HIP clang LTO objects; the linked module loses symbols.",
                Fix.advice(_LTO_FIX.replace("`-flto`", f"`{name}`"))))
    return sorted(findings, key=lambda f: f.location.start_byte)


def _ipo_switches(command: Command, source: SourceFile):
    """(node, name) where `command` turns interprocedural optimization on with a constant."""
    words = command.words(source)
    if command.name == "set" and len(words) >= 2 and _IPO_VARIABLE.fullmatch(words[0]):
        if words[1].upper() in _TRUE:
            yield command.args[0], words[0]
        return
    if command.name == "set_property" and "PROPERTY" in words:
        at = words.index("PROPERTY")
        if at + 2 < len(words) and _IPO_PROPERTY.fullmatch(words[at + 1]) and words[at + 2].upper() in _TRUE:
            yield command.args[at + 1], words[at + 1]
    elif command.name.endswith("_properties") and "PROPERTIES" in words:
        first = words.index("PROPERTIES") + 1
        for i in range(first, len(words) - 1, 2):
            if _IPO_PROPERTY.fullmatch(words[i]) and words[i + 1].upper() in _TRUE:
                yield command.args[i], words[i]


def _cxx_compiler_is_hip_clang(source: SourceFile, all_commands: list[Command]) -> bool:
    return any(
        c.name == "set" and len(c.args) >= 2 and word(c.args[0], source) == "CMAKE_CXX_COMPILER"
        and _HIP_CLANG.search(word(c.args[1], source))
        for c in all_commands
    )


# ---- B003: a ROCm build that never defines USE_ROCM --------------------------------------
_DEFINITION_PROPERTY = re.compile(r"(?:INTERFACE_)?COMPILE_DEFINITIONS(?:_\w+)?")
_DEFINE_FLAG = re.compile(r"(?:^|[\s;:>\"])-D([A-Za-z_]\w*)")
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*")
_CUDA_SELECTOR = re.compile(r"(?:^|_)(?:USE|WITH|ENABLE|HAVE|BUILD)_CUDA$")
_DEFINE_USE_ROCM = "add_compile_definitions(USE_ROCM)"


def check_missing_use_rocm(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(b in data for b in (b"HIP", b"hip", b"ROCM", b"rocm", b"ROCm")):
        return []
    all_commands = commands(source)
    # A subdirectory's CMakeLists inherits definitions from its parent, and an included
    # list file (`include(cmake/utils.cmake)`) may add them: neither is visible here, so
    # only a project file that includes none of its own decides.
    if (not any(c.name == "project" for c in all_commands)
            or any(_is_local_include(c, source) for c in all_commands)
            or _defines_platform_macro(source, all_commands)):
        return []
    model = source.rocm_path
    candidates = [c.node for c in hip_language_commands(source, all_commands)] + rocm_branch_heads(source)
    live = [n for n in candidates if model is None or model.status(n.start_byte) is Status.LIVE]
    if not live:
        return []
    head = min(live, key=lambda n: n.start_byte)
    what = source.node_text(head)
    if "\n" in what:
        what = what.split("(")[0] + "(...)"
    return [at_node(
        source, head,
        "ROCm build never defines `USE_ROCM`; `#ifdef USE_ROCM` code takes the CUDA branch.",
        Fix.unsafe(f"Add `{_DEFINE_USE_ROCM}` after `{what}`, so sources that test `USE_ROCM` "
                   "compile their ROCm branch",
                   _insert_after(source, head, _DEFINE_USE_ROCM)),
    )]


def _is_local_include(command: Command, source: SourceFile) -> bool:
    """`include(cmake/utils.cmake)`, not a CMake module such as `include(FetchContent)`."""
    if command.name != "include" or not command.args:
        return False
    path = word(command.args[0], source)
    return "/" in path or path.endswith(".cmake")


def _defines_platform_macro(source: SourceFile, all_commands: list[Command]) -> bool:
    """Does the file define `USE_ROCM`, `__HIP_PLATFORM_AMD__`, a project's own ROCm macro
    (`GGML_USE_HIP`, `WITH_ROCM`) or a CUDA selector (`USE_CUDA`) for the compiler? Each
    shows the convention the sources follow; with `USE_CUDA` the ROCm code is its `#else`."""
    for command in all_commands:
        if command.name == "add_compile_definitions":
            definitions = command.args
        elif command.name == "target_compile_definitions":
            definitions = command.args[1:]  # after the target's name
        else:
            definitions = property_values(command, source, _DEFINITION_PROPERTY.fullmatch)
        names = [_defined_name(item) for a in definitions for item in word(a, source).split(";")]
        names += [m.group(1) for a in command.args for m in _DEFINE_FLAG.finditer(word(a, source))]
        if any(name and (_is_rocm_macro(name) or _CUDA_SELECTOR.search(name)) for name in names):
            return True
    return False


def _defined_name(item: str) -> str | None:
    """`USE_ROCM` for `USE_ROCM`, `USE_ROCM=1`, `$<$<COMPILE_LANGUAGE:HIP>:USE_ROCM>`."""
    value = item.rstrip(">").rpartition(":")[2]  # a generator expression's value
    m = _MACRO_NAME.match(value)
    return m.group() if m else None


def _is_rocm_macro(name: str) -> bool:
    parts = {p.upper() for p in name.split("_")}
    return name == "__HIP_PLATFORM_AMD__" or bool(parts & {"HIP", "ROCM"})


def _insert_after(source: SourceFile, node, text: str) -> Edit:
    """An edit putting `text` on its own line after `node`, indented like the code there."""
    indent = line_indent(source, node.start_byte)
    if node.type in ("if_command", "elseif_command", "else_command"):
        body = node.next_sibling
        head_line = source.line_of(node.end_byte)
        # The body's first line of code (a trailing comment on the `if()` line belongs to it).
        children = body.named_children if body is not None else []
        first = next((c for c in children if source.line_of(c.start_byte) > head_line), None)
        indent = line_indent(source, first.start_byte) if first is not None else indent + "  "
    line = source.line_of(node.end_byte)
    if line < source.line_of(len(source.data)):
        return Edit.insert(source.line_start(line + 1), f"{indent}{text}\n")
    return Edit.insert(len(source.data), f"\n{indent}{text}\n")


# ---- B004: CUDA toolkit paths with no ROCm fallback ---------------------------------------
_CUDA_ROOT_NAMES = frozenset({
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDA_BIN_PATH", "CUDAToolkit_ROOT",
})
_CUDA_PATH_BYTES = (b"/usr/local/cuda",) + tuple(n.encode() for n in _CUDA_ROOT_NAMES)
_HARD_CODED_CUDA = re.compile(r"/usr/local/cuda(?:-[\d.]+)?(?![\w.-])")
_ROCM_FALLBACK = re.compile(r"ROCM_PATH|ROCM_HOME|ROCM_ROOT|HIP_PATH|/opt/rocm", re.IGNORECASE)
_ROOT_REFS = "(variable_ref [(normal_var (variable) @name) (env_var (variable) @name)]) @ref"
_TOOLKIT_PATH_FIX = ("Read the toolkit root from `$ENV{ROCM_PATH}` (default `/opt/rocm`) on the ROCm path, "
                     "and `unset CUDA_HOME` in ROCm builds")


def check_cuda_toolkit_path(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(b in data for b in _CUDA_PATH_BYTES) or _has_rocm_fallback(source):
        return []
    findings = []
    for command in commands(source):
        if command.name == "message":
            continue  # printing a path does not use it
        culprit = next((c for a in command.args for c in _toolkit_path_culprits(a, source)), None)
        if culprit is not None:
            start, end, message = culprit
            findings.append(finding(source, start, end, message, Fix.advice(_TOOLKIT_PATH_FIX)))
    return findings


def _has_rocm_fallback(source: SourceFile) -> bool:
    if not _ROCM_FALLBACK.search(source.text):
        return False
    arguments = queries.nodes(CMAKE, "(argument) @a", source.tree.root_node, "a")
    return any(_ROCM_FALLBACK.search(source.node_text(a)) for a in arguments)  # not in comments


def _toolkit_path_culprits(arg, source: SourceFile):
    """(start, end, message) for each CUDA toolkit root in one argument, in source order."""
    found = []
    for match in queries.matches(CMAKE, _ROOT_REFS, arg):
        ref, name = match["ref"][0], source.node_text(match["name"][0])
        if name in _CUDA_ROOT_NAMES:
            text = source.node_text(ref)
            if text.startswith("$ENV"):
                message = f"`{text}` without a `ROCM_PATH` fallback points ROCm builds at CUDA."
            else:
                message = f"`{text}` without a `ROCM_PATH` fallback finds no toolkit on ROCm."
            found.append((ref.start_byte, ref.end_byte, message))
    text = source.node_text(arg)
    for m in _HARD_CODED_CUDA.finditer(text):
        found.append((byte_offset(arg.start_byte, text, m.start()), byte_offset(arg.start_byte, text, m.end()),
                      f"Hard-coded `{m.group()}` has no `ROCM_PATH` fallback; ROCm is in `/opt/rocm`."))
    return sorted(found)
