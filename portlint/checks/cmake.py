"""B, C and R in CMake: languages, flags, GPU targets, link targets, definitions and paths
that only a CUDA build has.

Rules whose decision needs the whole build (is HIP enabled in some other list file? does a
flag set in `cmake/flags.cmake` reach HIP compiles?) are project checks on the facts that
`cmake_project` collects per file; the others read one file.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace

from portlint import queries, rocm_path
from portlint.checks import nvcc_flags
from portlint.checks.cmake_ast import (
    Command,
    byte_offset,
    cached_commands,
    hip_language_commands,
    items,
    line_indent,
    property_values,
    referenced_variables,
    rocm_branch_heads,
    values_reaching,
    word,
)
from portlint.checks.libraries import (
    CUDA_LIBRARIES,
    CUDA_RUNTIME_LIBRARIES,
    CudaLibrary,
    is_library_search_flag,
    library_for_link_name,
    link_message,
)
from portlint.checks.cmake_project import (
    COMPILE,
    CUDA_LANGUAGE,
    CUDA_ONLY,
    CUDA_ARCH,
    CXX,
    ENABLE_HIP,
    FIND_HIP,
    HIP_ARCH_CACHE_LINE,
    HIP_ARCH_LINE,
    HIP_COMPILER,
    HIP_DEVICE,
    HIP_DEVICE_CODE,
    HIP_ONLY,
    HIP_SOURCES,
    IPO,
    LINK,
    SOURCE,
    parses,
    CMakeBuild,
    CMakeFacts,
    Flag,
    Place,
    Project,
    Reach,
    flag_languages,
)
from portlint.finding import Finding, Related, Severity, at_node, finding
from portlint.fix import Edit, Fix
from portlint.project import ProjectIndex, file_key
from portlint.rocm_path import Status
from portlint.source import CMAKE, Location, SourceFile

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


def finds_a_cuda_package(source: SourceFile) -> bool:
    """Is the file a find module of a CUDA package (`FindCUDAToolkit.cmake`, `FindNCCL.cmake`,
    often a project's copy of CMake's own)? Its toolkit paths and the `CUDA::` targets it
    defines are the search itself: the `find_package` that runs it is what C001 judges."""
    found = re.fullmatch(r"Find(\w+)\.cmake", posixpath.basename(source.path))
    return found is not None and (rocm_path.mentions_cuda(found.group(1))
                                  or library_for_link_name(found.group(1).lower()) is not None)


def check_cmake_cuda_link_target(source: SourceFile) -> list[Finding]:
    lowered = source.data.lower()
    if not any(name in lowered for name in _LINK_NAME_BYTES) or finds_a_cuda_package(source):
        return []
    all_commands = cached_commands(source)
    direct, dead = [], []
    for command in all_commands:
        links = (command.args if command.name in _LINK_COMMANDS
                 else property_values(command, source, lambda p: p.endswith("LINK_LIBRARIES")))
        # A link the ROCm build never runs (the `else()` of `if(USE_ROCM)`) is the CUDA build's.
        on_rocm = source.rocm_path is None or source.rocm_path.status(command.node.start_byte) is not Status.DEAD
        (direct if on_rocm else dead).extend(links)
    # A variable named like a library list is one even where this file never links it (a
    # parent links it), but not when this file links it only where the ROCm build never goes.
    linked = {name for arg in direct for name in referenced_variables(arg, source)}
    cuda_only = {name for arg in dead for name in referenced_variables(arg, source)} - linked
    defined = {word(c.args[0], source) for c in all_commands if c.name == "add_library" and c.args}
    findings = []
    by_command: dict[int, list] = {}  # one root cause per command: the libraries it links
    for arg in values_reaching(source, all_commands, direct,
                               lambda name: _LINK_VARIABLE.search(name) is not None and name not in cuda_only):
        for start, end, text, lib in _link_culprits(arg, source):
            if text in defined:
                continue  # `add_library(CUDA::cublas ALIAS roc::hipblas)`: the project maps it
            if _in_rocm_arm(source.data[arg.start_byte:start]):
                continue  # `$<IF:$<BOOL:${USE_ROCM}>,roc::hipblas,CUDA::cublas>`: the ROCm build has its own
            if source.rocm_path is not None and source.rocm_path.status(start) is Status.DEAD:
                continue  # `$<$<BOOL:${X_WITH_CUDA}>:CUDA::cublas>` where the ROCm build's X_WITH_CUDA is off
            command = arg.parent.parent if arg.parent is not None and arg.parent.parent is not None else arg
            by_command.setdefault(command.id, []).append(
                (start, end, text, lib, _link_fix(source, arg, start, end, text, lib)))
    for culprits in by_command.values():
        findings.append(_link_finding(source, culprits))
    for command in all_commands:
        m = _ADD_TO_TARGET.fullmatch(command.name)
        lib = library_for_link_name(m.group(1)) if m else None
        if lib is not None:
            findings.append(at_node(source, command.node, link_message([(command.name, lib)]),
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


_ROCM_IF = re.compile(rb"\$<IF:[^,]{0,256}(?:ROCM|HIP)[^,]{0,256},[^,>]{0,256},$", re.IGNORECASE)


def _in_rocm_arm(before: bytes) -> bool:
    """Whether a culprit preceded by `before` (its argument's text) is the CUDA value of a
    `$<IF:<ROCm test>,<ROCm item>,...>` generator expression."""
    return _ROCM_IF.search(before[-1024:]) is not None


def _link_finding(source: SourceFile, culprits: list) -> Finding:
    """One command's CUDA libraries: one finding at the first, the others related, their
    fixes one fix (an edit per library where each has one, else advice naming them all)."""
    start, end, text, lib, fix = culprits[0]
    if len(culprits) == 1:
        return finding(source, start, end, link_message([(text, lib)]), fix)
    edited = [c for c in culprits if c[4].edits]  # a ROCm target swapped in (`_link_fix`)
    by_hand = [c for c in culprits if not c[4].edits]
    parts = []
    if edited:
        pairs = ", ".join(f"`{c[2]}` -> `{c[3].hip_target}`" for c in edited)
        packages = ", ".join(dict.fromkeys(f"`find_package({c[3].hip_package} REQUIRED)`" for c in edited))
        parts.append(f"Link the ROCm counterparts on ROCm and keep the CUDA libraries for CUDA ({pairs}, each as "
                     f"`$<IF:$<BOOL:${{USE_ROCM}}>,rocm,cuda>`), with {packages} under `if(USE_ROCM)`")
    parts += [c[4].title for c in by_hand]
    title = "; ".join(parts)
    # One finding, one fix: it rewrites every library or none (a partial rewrite would leave
    # the finding standing with a message of its own).
    fix = Fix.unsafe(title, *(e for c in edited for e in c[4].edits)) if not by_hand else Fix.advice(title)
    related = tuple(Related(source.location(c[0], c[1]), f"`{c[2]}` is linked here too") for c in culprits[1:])
    return finding(source, start, end, link_message([(c[2], c[3]) for c in culprits]), fix, related=related)


def _link_fix(source: SourceFile, arg, start: int, end: int, text: str, lib: CudaLibrary | None) -> Fix:
    if lib is not None and lib.hip_library is not None:
        return Fix.advice(f"Link {lib.counterpart}'s `{lib.hip_library}` from `$ENV{{ROCM_PATH}}/lib` "
                          f"instead of `{text}`")
    if lib is None or lib.hip_target is None:
        return Fix.advice(f"Link the ROCm counterpart of `{text}` in an `if(USE_ROCM)` branch "
                          f"and keep `{text}` in its `else()`")
    # A ROCm arm inside the item: the CUDA build keeps linking `text`, the ROCm build (with
    # USE_ROCM set) links the counterpart; a generator expression evaluates one branch only.
    arm = f"$<IF:$<BOOL:${{USE_ROCM}}>,{lib.hip_target},{text}>"
    title = (f"Link `{lib.hip_target}` on ROCm and keep `{text}` for CUDA: `{arm}`, with "
             f"`find_package({lib.hip_package} REQUIRED)` under `if(USE_ROCM)`")
    before = source.data[max(start - 1, arg.start_byte):start]
    after = source.data[end:min(end + 1, arg.end_byte)]
    # A variable may hold a list (its `;` would split the expression), and a culprit inside
    # another generator expression or a string of several flags is no item of its own.
    if before not in _ITEM_START or after not in _ITEM_END or "$" in text or before == b":" or after == b">":
        return Fix.advice(title)
    return Fix.unsafe(title, Edit(start, end, arm))


def _add_to_target_fix(source: SourceFile, command: Command, lib: CudaLibrary) -> Fix:
    if lib.hip_target is None or not command.args:
        return Fix.advice(f"Link {lib.counterpart} instead of `{command.name}`")
    if _in_broken_code(command.node):
        # Where the parser lost the structure, an `if(USE_ROCM)` already around the command
        # may not be seen: wrapping it again would repeat on every `--fix`.
        return Fix.advice(f"Keep `{command.name}` for CUDA and link `{lib.hip_target}` in an `if(USE_ROCM)` arm")
    target = word(command.args[0], source)
    original = source.node_text(command.node)
    replacement = (f"if(USE_ROCM)\n  find_package({lib.hip_package} REQUIRED)\n  target_link_libraries({target} "
                   f"{lib.hip_target})\nelse()\n  {original}\nendif()")
    return Fix.unsafe(f"Keep `{command.name}({target})` for CUDA and link `{lib.hip_target}` in an "
                      f"`if(USE_ROCM)` arm", Edit.replace(command.node, replacement))


def _in_broken_code(node) -> bool:
    """Is `node` inside a region the parser could not read (an ERROR node)?"""
    node = node.parent
    while node is not None:
        if node.type == "ERROR":
            return True
        node = node.parent
    return False


# ---- B002: LTO with two compilers ---------------------------------------------------------
# Flags for the C and C++ compiler and the linker; CUDA/HIP flags go to the GPU compiler.
_LTO_SINKS = frozenset({COMPILE, LINK, SOURCE, CXX})
_HOST_LANGUAGES = frozenset({"C", "CXX"})
_LTO_FIX = ("Build C++ with the HIP compiler (`set(CMAKE_CXX_COMPILER ${ROCM_PATH}/llvm/bin/clang++)`) "
            "or drop `-flto` on the ROCm path")


def check_lto_mixed_compilers(index: ProjectIndex) -> list[Finding]:
    """LTO flags and IPO switches in a CMake project that compiles HIP with clang and C++ with
    the default compiler; the flag may be set in one list file and HIP enabled in another."""
    findings = []
    for project in CMakeBuild.of(index).projects:
        hip = project.first(ENABLE_HIP, HIP_SOURCES, FIND_HIP)
        if hip is None or project.places(HIP_COMPILER):
            continue
        hip_facts, hip_place = hip
        related = (Related(hip_place.location, f"`{hip_place.text}`: clang compiles the HIP sources"),)
        for facts, value, reaches in project.reached:
            for flag in value.flags:
                if not nvcc_flags.is_lto(flag.text) or not any(_reaches_host_compiler(flag, r) for r in reaches):
                    continue
                findings.append(project_finding(
                    facts, flag.location, flag.text,
                    f"`{flag.text}` mixes GCC C++ and HIP clang LTO objects; the linked module loses symbols.",
                    Fix.advice(_LTO_FIX), related=related))
        for facts, place in project.places(IPO):
            findings.append(project_finding(
                facts, place.location, place.text,
                f"`{place.text}` mixes GCC C++ and HIP clang LTO objects; the linked module loses symbols.",
                Fix.advice(_LTO_FIX.replace("`-flto`", f"`{place.text}`")), related=related))
    return findings


def _reaches_host_compiler(flag: Flag, reach: Reach) -> bool:
    """Does the flag get to the C/C++ compiler or the linker? `$<$<COMPILE_LANGUAGE:HIP>:-flto>`
    and `CMAKE_HIP_FLAGS` go to one compiler only."""
    languages = flag_languages(flag, reach)
    return reach.kind in _LTO_SINKS and (languages is None or bool(languages & _HOST_LANGUAGES))


def project_finding(facts: CMakeFacts, location: Location, matched: str, message: str, fix: Fix, *,
                    severity: Severity | None = None, related: tuple[Related, ...] = (),
                    edit_locations: tuple[Location, ...] = ()) -> Finding:
    """A project rule's finding in a CMake file; `edit_locations` are the regions of `fix.edits`."""
    assert len(edit_locations) == len(fix.edits)
    return Finding(location=location, message=message, fix=fix, severity=severity, related=related,
                   matched=matched, file_digest=facts.digest, edit_locations=edit_locations)


# ---- B003: a ROCm build that never defines USE_ROCM --------------------------------------
_DEFINITION_PROPERTY = re.compile(r"(?:INTERFACE_)?COMPILE_DEFINITIONS(?:_\w+)?")
_DEFINE_FLAG = re.compile(r"(?:^|[\s;:>\"])-D([A-Za-z_]\w*)")
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*")
_CUDA_SELECTOR = re.compile(r"(?:^|_)(?:USE|WITH|ENABLE|HAVE|BUILD)_CUDA$")
_DEFINE_USE_ROCM = "add_compile_definitions(USE_ROCM)"


@dataclass(frozen=True)
class OpenMissingUseRocm:
    """B003's finding in a CMake project file, which stands where a C-family file under its
    folder tests `USE_ROCM` (`check_missing_use_rocm_in_project`): without one, nothing
    reads the macro the build does not define."""

    folder: str  # the list file's folder, as `project.file_key` names files
    location: Location  # the finding's (`ProjectIndex.open_facts` keeps a reported file's)
    finding: Finding


def missing_use_rocm(source: SourceFile) -> list[OpenMissingUseRocm]:
    """The project facts of B003 (`_missing_use_rocm`)."""
    key = file_key(source)
    return [OpenMissingUseRocm(posixpath.dirname(key), f.location, f) for f in _missing_use_rocm(source)]


def check_missing_use_rocm_in_project(index: ProjectIndex) -> list[Finding]:
    """B003 where a source the CMake project holds tests `USE_ROCM` (its `#ifdef USE_ROCM` then
    takes the CUDA branch on ROCm), with the first such test related."""
    facts = index.open_facts(OpenMissingUseRocm)
    if not facts:
        return []
    tests = index.use_rocm_tests()
    findings = []
    for fact in facts:
        inside = [tests[key] for key in sorted(tests) if key.startswith(fact.folder.rstrip("/") + "/")]
        if inside:
            findings.append(replace(fact.finding, related=(Related(inside[0], "`USE_ROCM` is tested here"),)))
    return findings


def _missing_use_rocm(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(b in data for b in (b"HIP", b"hip", b"ROCM", b"rocm", b"ROCm")):
        return []
    all_commands = cached_commands(source)
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
    title = (f"Add `{_DEFINE_USE_ROCM}` after `{what}`, so sources that test `USE_ROCM` "
             "compile their ROCm branch")
    # A file that does not parse gets the advice only (`cmake_project.parses`).
    fix = Fix.unsafe(title, _insert_after(source, head, _DEFINE_USE_ROCM)) if parses(source) else Fix.advice(title)
    return [at_node(
        source, head,
        "ROCm build never defines `USE_ROCM`; `#ifdef USE_ROCM` code takes the CUDA branch.",
        fix,
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
        # A define passed only on the ROCm path is the project's ROCm macro, whatever its name.
        if any(names) and source.rocm_path is not None and source.rocm_path.status(command.node.start_byte) is Status.PORT:
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
# Directories `find_package(CUDAToolkit)` / FindCUDA set: the toolkit's own headers and libraries.
_CUDA_TOOLKIT_DIRS = frozenset({
    "CUDAToolkit_INCLUDE_DIRS", "CUDAToolkit_LIBRARY_DIR", "CUDAToolkit_LIBRARY_ROOT", "CUDAToolkit_BIN_DIR",
    "CUDA_INCLUDE_DIRS", "CUDA_TOOLKIT_INCLUDE", "CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES",
})
_CUDA_PATH_BYTES = (b"/usr/local/cuda",) + tuple(n.encode() for n in _CUDA_ROOT_NAMES | _CUDA_TOOLKIT_DIRS)
_HARD_CODED_CUDA = re.compile(r"/usr/local/cuda(?:-[\d.]+)?(?![\w.-])")
_ROCM_FALLBACK = re.compile(r"ROCM_PATH|ROCM_HOME|ROCM_ROOT|HIP_PATH|/opt/rocm", re.IGNORECASE)
_ROOT_REFS = "(variable_ref [(normal_var (variable) @name) (env_var (variable) @name)]) @ref"
_TOOLKIT_PATH_FIX = ("Read the toolkit root from `$ENV{ROCM_PATH}` (default `/opt/rocm`) on the ROCm path, "
                     "and `unset CUDA_HOME` in ROCm builds")


def check_cuda_toolkit_path(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(b in data for b in _CUDA_PATH_BYTES) or _has_rocm_fallback(source) or finds_a_cuda_package(source):
        return []
    findings = []
    for command in cached_commands(source):
        if command.name == "message":
            continue  # printing a path does not use it
        if _one_of_several_search_places(command, source):
            continue  # a find_*() that looks there among other places (an OpenCL or NCCL search)
        if command.name in _LIBRARY_SEARCH_COMMANDS:
            continue  # folders the linker searches (`is_library_search_flag`)
        culprit = next((c for a in command.args if not is_library_search_flag(word(a, source))
                        for c in _toolkit_path_culprits(a, source)), None)
        if culprit is not None:
            start, end, message = culprit
            findings.append(finding(source, start, end, message, Fix.advice(_TOOLKIT_PATH_FIX)))
    return findings


_LIBRARY_SEARCH_COMMANDS = frozenset({"link_directories", "target_link_directories"})
_FIND_COMMANDS = frozenset({"find_path", "find_library", "find_program", "find_file", "find_package"})
_SEARCH_KEYWORDS = frozenset({"PATHS", "HINTS"})
# Keywords that end a find command's PATHS/HINTS list.
_FIND_KEYWORDS = frozenset({
    "NAMES", "NAMES_PER_DIR", "HINTS", "PATHS", "PATH_SUFFIXES", "DOC", "REQUIRED", "NO_DEFAULT_PATH",
    "NO_PACKAGE_ROOT_PATH", "NO_CMAKE_PATH", "NO_CMAKE_ENVIRONMENT_PATH", "NO_SYSTEM_ENVIRONMENT_PATH",
    "NO_CMAKE_SYSTEM_PATH", "NO_CMAKE_INSTALL_PREFIX", "CMAKE_FIND_ROOT_PATH_BOTH", "ONLY_CMAKE_FIND_ROOT_PATH",
    "NO_CMAKE_FIND_ROOT_PATH", "ENV", "VALIDATOR", "NO_CACHE", "CONFIG", "MODULE", "QUIET", "COMPONENTS",
    "OPTIONAL_COMPONENTS", "NO_MODULE", "NO_POLICY_SCOPE", "EXACT", "GLOBAL", "NO_CMAKE_PACKAGE_REGISTRY",
    "NO_CMAKE_SYSTEM_PACKAGE_REGISTRY", "REGISTRY_VIEW", "CONFIGS",
})


def _one_of_several_search_places(command, source: SourceFile) -> bool:
    """Is every CUDA root in `command` one of several places a `find_*()` searches (`PATHS
    $ENV{CUDA_PATH} $ENV{AMDAPPSDKROOT}`)? Looking in CUDA's tree among others finds nothing
    there on ROCm and goes on; a search of the CUDA tree alone is still reported."""
    if command.name not in _FIND_COMMANDS:
        return False
    words = [word(a, source) for a in command.args]
    places: list[int] = []  # indices of the arguments listed as search places
    listing = False
    for i, text in enumerate(words):
        if text in _SEARCH_KEYWORDS:
            listing = True
        elif text in _FIND_KEYWORDS:
            listing = False
        elif listing:
            places.append(i)
    cuda = [i for i in places if _toolkit_path_culprits(command.args[i], source)]
    culprits_outside = any(_toolkit_path_culprits(a, source) for i, a in enumerate(command.args) if i not in places)
    return bool(cuda) and len(places) > len(cuda) and not culprits_outside


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
        if name in _CUDA_TOOLKIT_DIRS:
            text = source.node_text(ref)
            found.append((ref.start_byte, ref.end_byte,
                          f"`{text}` is a CUDA toolkit directory; a ROCm build has none and needs ROCm's."))
        elif name in _CUDA_ROOT_NAMES:
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


# ---- B001: nvcc-only flags ----------------------------------------------------------------
# `-arch` is also Apple clang's (`-arch arm64`): nvcc's takes a GPU.
_NVCC_ARCH_VALUE = re.compile(r"(?:sm|compute|lto)_\w+|native|all|all-major")
_HIP, _CUDA, _ANY = "hip", "cuda", "any"


def check_nvcc_only_flag(index: ProjectIndex) -> list[Finding]:
    """nvcc flags that reach HIP compiles (`CMAKE_HIP_FLAGS`, `$<COMPILE_LANGUAGE:HIP>`,
    options of every language in a HIP build, per-source options of `LANGUAGE HIP` sources),
    and, in a build with no HIP path yet, nvcc flags the port has to translate."""
    findings = []
    for project in CMakeBuild.of(index).projects:
        hipcc_cxx = bool(project.places(HIP_COMPILER))
        compiles_cuda = bool(project.places(CUDA_LANGUAGE))
        for facts, value, reaches in project.reached:
            for flag in value.flags:
                nvcc = nvcc_flags.classify(flag.text)
                if nvcc is None or not _is_nvcc_spelling(flag):
                    continue
                where = {r: _destinations(r, flag, project, hipcc_cxx) for r in reaches}
                goes = set().union(*where.values())
                to_hip = [r for r, d in where.items() if _HIP in d or (_ANY in d and project.has_hip)]
                if to_hip:
                    via = min(to_hip, key=lambda r: (r.kind != HIP_ONLY, r.via))
                    findings.append(_hip_flag_finding(facts, flag, nvcc, via, only_hip=goes == {_HIP}))
                elif not project.has_hip and (_CUDA in goes or (_ANY in goes and compiles_cuda)):
                    via = min(where, key=lambda r: (r.kind != CUDA_ONLY, r.via)).via
                    findings.append(_cuda_flag_finding(facts, flag, nvcc, via))
    return findings


def _is_nvcc_spelling(flag: Flag) -> bool:
    name, _, value = flag.text.partition("=")
    if name != "-arch":
        return True
    return bool(_NVCC_ARCH_VALUE.fullmatch(value or flag.following))


def _destinations(reach: Reach, flag: Flag, project: Project, hipcc_cxx: bool) -> set[str]:
    """Which compilers a flag reaches through one sink: HIP, CUDA, or any (every language)."""
    if reach.kind == HIP_ONLY:
        return {_HIP}
    if reach.kind == CUDA_ONLY:
        return {_CUDA}
    if reach.kind == CXX:
        return {_HIP} if hipcc_cxx else set()  # `set(CMAKE_CXX_COMPILER hipcc)`
    if reach.kind not in (COMPILE, SOURCE):
        return set()  # link options
    languages = flag_languages(flag, reach)
    if languages is not None:  # `$<$<COMPILE_LANGUAGE:CUDA>:...>`, around the flag or a `${}` of it
        return {d for lang, d in (("HIP", _HIP), ("CUDA", _CUDA)) if lang in languages}
    if reach.kind == SOURCE and project.hip_sources.intersection(reach.sources):
        return {_HIP}
    if reach.kind == SOURCE and reach.sources and all(s.lower().endswith(".cu") for s in reach.sources) \
            and not any(place.text.startswith("hip_add_") for _, place in project.places(HIP_SOURCES)):
        # CMake compiles a `.cu` source as CUDA; HIP compiles it only when told (`LANGUAGE
        # HIP`, FindHIP's `hip_add_library`), or compiles a hipified copy of another name.
        return {_CUDA}
    return {_ANY}


def _verdict(nvcc: nvcc_flags.NvccFlag) -> str:
    if "rejects" in nvcc.effect:
        return "clang rejects it"
    if "ignores" in nvcc.effect:
        return "clang ignores it"
    return "it does nothing there"


def _hip_flag_finding(facts: CMakeFacts, flag: Flag, nvcc: nvcc_flags.NvccFlag, via: Reach,
                      only_hip: bool) -> Finding:
    token = flag.text
    message = f"`{token}` reaches HIP compiles, and {_verdict(nvcc)}. It gets there through `{via.via}`."
    action = _rocm_action(nvcc, token)
    edits: tuple[Edit, ...] = ()
    if only_hip:
        title = action
        if nvcc.replacement is not None and not nvcc.picks_target:
            edits = (Edit(flag.location.start_byte, flag.location.end_byte, nvcc.replacement),)
    elif via.kind == HIP_ONLY:  # a flags variable: no generator expressions there
        title = f"In `{via.via}`, {_lower_first(action)}, and keep `{token}` in the CUDA flags only"
    else:
        title = (f"For HIP compiles, {_lower_first(action)}, and keep `{token}` for nvcc only: "
                 f"`$<$<COMPILE_LANGUAGE:CUDA>:{token}>`")
    fix = Fix.unsafe(title, *edits) if edits else Fix.advice(title)
    return project_finding(facts, flag.location, token, message, fix, severity=_flag_severity(nvcc),
                           edit_locations=(flag.location,) * len(edits))


def _rocm_action(nvcc: nvcc_flags.NvccFlag, token: str) -> str:
    """What to do with `token` for HIP, as an imperative: "Replace `-lineinfo` with ..."."""
    if nvcc.picks_target:
        return f'Drop `{token}` and choose gfx targets with `set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")`'
    if nvcc.replacement is not None:
        return f"Replace `{token}` with `{nvcc.replacement}`"
    rocm = nvcc.rocm
    if rocm.startswith("drop it"):
        return f"Drop `{token}`{rocm[len('drop it'):]}"
    if rocm.startswith("use "):
        return f"Use {rocm[4:]} instead of `{token}`"
    return rocm[0].upper() + rocm[1:]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _cuda_flag_finding(facts: CMakeFacts, flag: Flag, nvcc: nvcc_flags.NvccFlag, via: str) -> Finding:
    token = flag.text
    if nvcc.picks_target:
        message = (f"`{token}` picks an NVIDIA GPU, and the build has no HIP path with a gfx target. "
                   f"It reaches nvcc through `{via}`.")
        fix = Fix.advice(f"Keep `{token}` for nvcc and, on the ROCm path, choose gfx targets with "
                         '`set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")`')
    else:
        message = (f"`{token}` is an nvcc-only flag; on ROCm, {_verdict(nvcc)}. It reaches nvcc through "
                   f"`{via}`, and the build has no HIP path yet.")
        fix = Fix.advice(f"Keep `{token}` for nvcc and, for HIP compiles on the ROCm path, "
                         f"{_lower_first(_rocm_action(nvcc, token))}")
    return project_finding(facts, flag.location, token, message, fix, severity=_flag_severity(nvcc))


def _flag_severity(nvcc: nvcc_flags.NvccFlag) -> Severity | None:
    return nvcc.severity()


# ---- C001: the CUDA language with no HIP path -----------------------------------------------
_ENABLE_HIP_ADVICE = ("Enable HIP on the ROCm path (CMake >= 3.21): `if(USE_ROCM) enable_language(HIP) "
                      "else() enable_language(CUDA) endif()`, and build the `.cu` sources with "
                      "`set_source_files_properties(<sources> PROPERTIES LANGUAGE HIP)`")
_LANGUAGE_ADVICE = {
    "enable_language": _ENABLE_HIP_ADVICE,
    "project": _ENABLE_HIP_ADVICE.replace("`if(USE_ROCM)", "`project(<name> LANGUAGES CXX)` then `if(USE_ROCM)"),
    "find_package": ("Find HIP on the ROCm path: `if(USE_ROCM) find_package(hip REQUIRED) else() "
                     "find_package(CUDAToolkit REQUIRED) endif()`, and link `hip::host` where the CUDA runtime was"),
    "cuda_add": ("Replace `{text}(...)` with `{plain}(...)` and, on the ROCm path, add `enable_language(HIP)` and "
                 "`set_source_files_properties(<.cu sources> PROPERTIES LANGUAGE HIP)`"),
    "nvcc-flags": ("Give HIP compiles their own flags on the ROCm path: `CMAKE_HIP_FLAGS`, or "
                   "`target_compile_options(<target> PRIVATE $<$<COMPILE_LANGUAGE:HIP>:...>)`"),
    "separable": ("Compile and link HIP code with `-fgpu-rdc` on the ROCm path: "
                  "`target_compile_options(<target> PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)` and "
                  "`target_link_options(<target> PRIVATE -fgpu-rdc)`"),
}
_LANGUAGE_MESSAGE = {
    "enable_language": "`{text}` needs nvcc, and the build enables no HIP language for ROCm.",
    "project": "`{text}` needs nvcc, and the build enables no HIP language for ROCm.",
    "find_package": "`{text}` needs the CUDA toolkit, and the build never finds HIP for ROCm.",
    "cuda_add": "`{text}` compiles with nvcc through FindCUDA, and the build has no HIP path.",
    "nvcc-flags": "`{text}` only reaches nvcc, and the build has no HIP path for ROCm.",
    "separable": "`{text}` only affects nvcc, and the build has no HIP path for ROCm.",
}


def check_cmake_cuda_language(index: ProjectIndex) -> list[Finding]:
    """The CUDA language, FindCUDA and its variables in a CMake project with no HIP path in
    any of its list files."""
    findings = []
    for project in CMakeBuild.of(index).projects:
        if project.has_hip:
            continue
        for facts, place in project.places(CUDA_LANGUAGE, live_only=True):
            if place.detail == "nvcc-flags":
                continue  # B001 owns the flags of `CUDA_NVCC_FLAGS`; `find_package(CUDA)` is reported here
            plain = place.text.replace("cuda_", "", 1)
            findings.append(project_finding(
                facts, place.location, place.text, _LANGUAGE_MESSAGE[place.detail].format(text=place.text),
                Fix.advice(_LANGUAGE_ADVICE[place.detail].format(text=place.text, plain=plain))))
    return findings


# ---- C002: CUDA architectures with no HIP ones ----------------------------------------------
def check_cmake_cuda_architectures(index: ProjectIndex) -> list[Finding]:
    """`CMAKE_CUDA_ARCHITECTURES`, `CUDA_ARCHITECTURES`, `TORCH_CUDA_ARCH_LIST` in a CMake
    project that chooses no HIP architectures anywhere; an error when it builds HIP."""
    findings = []
    for project in CMakeBuild.of(index).projects:
        if project.has_hip_arch:
            continue
        hip = project.first(*HIP_DEVICE_CODE)
        related = (Related(hip[1].location, f"`{hip[1].text}` builds HIP code"),) if hip is not None else ()
        fixed = False
        for facts, place in project.places(CUDA_ARCH, live_only=True):
            name = place.text
            if hip is not None:
                message = f"`{name}` picks NVIDIA GPUs, and the HIP build sets no gfx target at all."
            else:
                message = f"`{name}` picks NVIDIA GPUs, and the build sets no HIP architectures."
            fix, edit_locations = _architectures_fix(place, first=not fixed)
            fixed = fixed or bool(fix.edits)
            findings.append(project_finding(
                facts, place.location, name, message, fix, related=related, edit_locations=edit_locations,
                severity=Severity.ERROR if hip is not None else None))
    return findings


def _architectures_fix(place: Place, first: bool) -> tuple[Fix, tuple[Location, ...]]:
    name = place.text
    if "TORCH_CUDA_ARCH_LIST" in name:
        return Fix.advice('Choose the ROCm targets next to it: `set(ENV{PYTORCH_ROCM_ARCH} "gfx90a;gfx942")` '
                          "for PyTorch builds, `CMAKE_HIP_ARCHITECTURES` for HIP targets"), ()
    if name == "CUDA_ARCHITECTURES":
        return Fix.advice('Set `HIP_ARCHITECTURES "gfx90a;gfx942"` on the target next to `CUDA_ARCHITECTURES`'), ()
    title = f"Add `{HIP_ARCH_LINE}` next to it"
    if first and place.edit is not None:
        # One line serves the whole build: only the first setting gets the edit.
        return Fix.unsafe(title, place.edit), (place.edit_location,)
    return Fix.advice(title), ()


# ---- R003: HIP with no gfx target; gfx000 ---------------------------------------------------
_GFX000 = re.compile(r"(?<![\w])gfx000(?![\w])")
# Commands that test for, remove or print `gfx000` rather than build for it.
_GFX000_HANDLERS = {
    "message": None,
    "list": frozenset({"REMOVE_ITEM", "REMOVE_DUPLICATES", "FILTER", "FIND"}),
    "string": frozenset({"REPLACE", "REGEX", "FIND", "COMPARE"}),
}


def check_missing_offload_arch(source: SourceFile) -> list[Finding]:
    """`gfx000` in a CMake file: what `rocm_agent_enumerator` prints with no GPU present."""
    if b"gfx000" not in source.data:
        return []
    findings = []
    for command in cached_commands(source):
        if command.name in _GFX000_HANDLERS:
            modes = _GFX000_HANDLERS[command.name]
            if modes is None or (command.args and word(command.args[0], source) in modes):
                continue
        for arg in command.args:
            text = source.node_text(arg)
            for m in _GFX000.finditer(text):
                findings.append(finding(
                    source, byte_offset(arg.start_byte, text, m.start()), byte_offset(arg.start_byte, text, m.end()),
                    "`gfx000` is what `rocm_agent_enumerator` reports without a GPU; no GPU runs it.",
                    Fix.advice("Replace `gfx000` with the targets the build supports, e.g. `gfx90a;gfx942`")))
    return findings


_OFFLOAD_ARCH_ADVICE = {
    HIP_DEVICE: ('Choose the targets before `find_package(hip)`: '
                 '`set(GPU_TARGETS "gfx90a;gfx942" CACHE STRING "AMD GPU targets")`'),
    HIP_SOURCES: ('Choose the targets before the HIP targets: `set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")`, '
                  "or `--offload-arch=gfx90a` in `HIP_HIPCC_FLAGS` with FindHIP"),
    HIP_COMPILER: "Add `--offload-arch=gfx90a --offload-arch=gfx942` to `CMAKE_CXX_FLAGS`",
}


def check_missing_offload_arch_in_project(index: ProjectIndex) -> list[Finding]:
    """A CMake project that builds HIP device code and chooses no gfx target in any list file."""
    findings = []
    for project in CMakeBuild.of(index).projects:
        if project.has_hip_arch:
            continue
        trigger = project.first(ENABLE_HIP, HIP_SOURCES, HIP_DEVICE, HIP_COMPILER)
        if trigger is None:
            continue
        facts, place = trigger
        message = (f"`{place.text}` sets no gfx target, so the configure command must "
                   "(`-DCMAKE_HIP_ARCHITECTURES=gfx90a;gfx942`); without one, CMake asks `rocm_agent_enumerator`, "
                   "which finds none on a CI machine.")
        if place.kind == ENABLE_HIP and place.edit is not None:
            fix = Fix.unsafe(f"Choose the targets before it: `{HIP_ARCH_CACHE_LINE}`", place.edit)
            edit_locations = (place.edit_location,)
        else:
            fix, edit_locations = Fix.advice(_OFFLOAD_ARCH_ADVICE.get(place.kind, _OFFLOAD_ARCH_ADVICE[HIP_SOURCES])), ()
        # The targets are the packager's choice at configure time, as a block size is the
        # tuner's: a note (gfx000 and single-target code objects stay warnings).
        findings.append(project_finding(facts, place.location, place.text, message, fix,
                                        edit_locations=edit_locations, severity=Severity.NOTE))
    return findings
