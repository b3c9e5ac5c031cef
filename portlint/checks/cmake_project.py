"""Cross-file facts about a CMake build, and their join into projects.

`collect` runs in the per-file pass and keeps only picklable facts of one list file: the
variables it assigns (each value with its flags and `${}` reads), the arguments that reach a
compiler or the linker ("sinks"), and the places that enable CUDA or HIP, choose GPU
architectures, force the C++ compiler, or include other list files. Every fact keeps the
ROCm-path status of where it stands.

`CMakeBuild.of(index)` joins the facts of a scan into projects:

- `include(cmake/flags.cmake)` puts a file into its includer's variable scope;
  `add_subdirectory(src)` makes `src/CMakeLists.txt` a child scope, which sees the variables
  of its parents. A `.cmake` file that nothing includes joins the scope of the nearest
  `CMakeLists.txt` above it; a `CMakeLists.txt` without `project()` that nothing adds becomes
  a child of the nearest one above it.
- A tree of scopes is one project. List files whose tree has no `project()` at all are
  fragments of one build and form one project together.
- A file included only from a CUDA-only arm (`else()` of `if(USE_ROCM)`) is CUDA-only as a
  whole: `Project.status` combines the status at the include site with the status inside
  the file, which is all the engine knows. Rules read it; they never re-evaluate conditions.
- `Project.reached()` follows values through variables across the scopes, the way
  `cmake_ast.values_reaching` does within one file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property

from portlint.checks.cmake_ast import (
    Command,
    _memoized,
    assignment,
    byte_offset,
    cached_commands,
    line_indent,
    referenced_variables_within,
    variable_refs,
    word,
)
from portlint.fix import Edit
from portlint.rocm_path import RocmPathModel, Status, project_languages
from portlint.shown_paths import shows_paths
from portlint.source import Location, SourceFile

# ---- where an argument's flags go (sink kinds) ---------------------------------------------
COMPILE = "compile"  # every compiler of a target or directory: add_compile_options, COMPILE_OPTIONS
LINK = "link"  # the linker: add_link_options, LINK_OPTIONS, CMAKE_SHARED_LINKER_FLAGS
SOURCE = "source"  # per-source COMPILE_OPTIONS / COMPILE_FLAGS: the compiler of those sources
CXX = "cxx"  # CMAKE_CXX_FLAGS / CMAKE_C_FLAGS: the C and C++ compiler
CUDA_ONLY = "cuda"  # CMAKE_CUDA_FLAGS, CUDA_NVCC_FLAGS, cuda_add_library(... OPTIONS ...)
HIP_ONLY = "hip"  # CMAKE_HIP_FLAGS, HIP_HIPCC_FLAGS, hip_add_library(... HIPCC_OPTIONS ...)

_VARIABLE_SINKS = (
    (re.compile(r"CMAKE_(?:CXX|C)_FLAGS(?:_\w+)?"), CXX),
    (re.compile(r"CMAKE_(?:SHARED|EXE|MODULE)_LINKER_FLAGS(?:_\w+)?"), LINK),
    (re.compile(r"(?:CMAKE_CUDA_FLAGS|CUDA_NVCC_FLAGS|HIP_NVCC_FLAGS)(?:_\w+)?"), CUDA_ONLY),
    (re.compile(r"(?:CMAKE_HIP_FLAGS|HIP_HIPCC_FLAGS|HIP_CLANG_FLAGS)(?:_\w+)?"), HIP_ONLY),
)


def sink_kind_of_variable(name: str) -> str | None:
    """The sink kind of a flags variable (`CMAKE_HIP_FLAGS_RELEASE` -> HIP_ONLY), else None."""
    for pattern, kind in _VARIABLE_SINKS:
        if pattern.fullmatch(name):
            return kind
    return None


# ---- what a place does (place kinds) ---------------------------------------------------------
ENABLE_HIP = "enable-hip"  # enable_language(HIP), project(... HIP)
HIP_SOURCES = "hip-sources"  # LANGUAGE HIP source property, hip_add_library/executable (FindHIP)
FIND_HIP = "find-hip"  # find_package(hip)
HIP_DEVICE = "hip-device"  # links hip::device: device code compiled for GPU_TARGETS
HIP_COMPILER = "hip-compiler"  # CMAKE_CXX_COMPILER set to hipcc / the ROCm clang
HIP_ARCH = "hip-arch"  # chooses gfx targets: CMAKE_HIP_ARCHITECTURES, GPU_TARGETS, --offload-arch, ...
CUDA_ARCH = "cuda-arch"  # CMAKE_CUDA_ARCHITECTURES, CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST
CUDA_LANGUAGE = "cuda-language"  # enable_language(CUDA), find_package(CUDA), cuda_add_library, ...
INCLUDE = "include"
SUBDIRECTORY = "subdirectory"
IPO = "ipo"  # INTERPROCEDURAL_OPTIMIZATION switched on with a constant
# The HIP runtime's target named in an arm only the ROCm build takes (`blt::hip_runtime` in
# `if(X_ENABLE_HIP)`): the build compiles HIP, though what enables the language is out of
# view (a build-system submodule, a toolchain file).
ROCM_ARM = "rocm-arm"
_HIP_RUNTIME_TARGETS = frozenset({"hip", "hip_runtime", "host", "device", "amdhip64"})

# Any of these is a HIP path through the build.
HIP_PATH = (ENABLE_HIP, HIP_SOURCES, FIND_HIP, HIP_DEVICE, HIP_COMPILER, ROCM_ARM)
# These compile HIP device code, so they need gfx targets (`find_package(hip)` alone may be
# for `hip::host`, the runtime API only).
HIP_DEVICE_CODE = (ENABLE_HIP, HIP_SOURCES, HIP_DEVICE, HIP_COMPILER)

HIP_ARCH_NAMES = frozenset({
    "CMAKE_HIP_ARCHITECTURES", "HIP_ARCHITECTURES", "GPU_TARGETS", "AMDGPU_TARGETS", "PYTORCH_ROCM_ARCH",
})
_HIP_ARCH_TEXT = re.compile(r"--offload-arch|--amdgpu-target|ENV\{PYTORCH_ROCM_ARCH\}")
_CUDA_ARCH_VARIABLES = frozenset({"CMAKE_CUDA_ARCHITECTURES", "TORCH_CUDA_ARCH_LIST"})
_CUDA_ARCH_PROPERTY = "CUDA_ARCHITECTURES"
_NVCC_FLAGS_VARIABLE = re.compile(r"CUDA_NVCC_FLAGS(?:_\w+)?")
_SEPARABLE = re.compile(r"(?:CMAKE_)?CUDA_SEPARABLE_COMPILATION")
_IPO_VARIABLE = re.compile(r"CMAKE_INTERPROCEDURAL_OPTIMIZATION(?:_\w+)?")
_IPO_PROPERTY = re.compile(r"INTERPROCEDURAL_OPTIMIZATION(?:_\w+)?")
_COMPILE_PROPERTY = re.compile(r"(?:INTERFACE_)?(?:COMPILE_OPTIONS|COMPILE_FLAGS)(?:_\w+)?")
_LINK_PROPERTY = re.compile(r"(?:INTERFACE_)?(?:LINK_OPTIONS|LINK_FLAGS)(?:_\w+)?")
# hipcc, amdclang++, or a clang++ from the ROCm tree: one compiler for C++ and HIP. The
# ROCm-tree form is anchored at the first `rocm`/`hip` (atomic): trying each occurrence of it
# with its own `.*` scan was quadratic in a word repeating it.
HIP_CLANG = re.compile(r"hipcc|amdclang\+\+|CMAKE_HIP_COMPILER|^(?>.*?(?:rocm|hip)).*clang\+\+", re.IGNORECASE)
TRUE_CONSTANTS = frozenset({"ON", "TRUE", "YES", "Y", "1"})
_FALSE_CONSTANTS = frozenset({"OFF", "FALSE", "NO", "N", "0", ""})

_COMPILE_COMMANDS = {"add_compile_options": 0, "target_compile_options": 1, "add_definitions": 0}
_LINK_COMMANDS = {"add_link_options": 0, "target_link_options": 1, "target_link_libraries": 1, "link_libraries": 0}
# FindCUDA / FindHIP commands: keyword -> sink kind of the options after it.
_OPTION_LISTS = {
    "cuda_add_library": {"OPTIONS": CUDA_ONLY}, "cuda_add_executable": {"OPTIONS": CUDA_ONLY},
    "cuda_compile": {"OPTIONS": CUDA_ONLY}, "cuda_compile_ptx": {"OPTIONS": CUDA_ONLY},
    "cuda_compile_fatbin": {"OPTIONS": CUDA_ONLY}, "cuda_compile_cubin": {"OPTIONS": CUDA_ONLY},
    "cuda_wrap_srcs": {"OPTIONS": CUDA_ONLY},
    "hip_add_library": {"HIPCC_OPTIONS": HIP_ONLY, "CLANG_OPTIONS": HIP_ONLY, "NVCC_OPTIONS": CUDA_ONLY},
    "hip_add_executable": {"HIPCC_OPTIONS": HIP_ONLY, "CLANG_OPTIONS": HIP_ONLY, "NVCC_OPTIONS": CUDA_ONLY},
}
_OPTION_LIST_ENDS = frozenset({"OPTIONS", "HIPCC_OPTIONS", "CLANG_OPTIONS", "NVCC_OPTIONS", "STATIC", "SHARED",
                               "MODULE", "EXCLUDE_FROM_ALL", "WIN32", "MACOSX_BUNDLE"})
_PROPERTY_COMMANDS = frozenset({
    "set_property", "set_target_properties", "set_source_files_properties", "set_directory_properties",
})
_SOURCE_SCOPE_KEYWORDS = frozenset({"DIRECTORY", "TARGET_DIRECTORY"})

# Words of an argument (between blanks, `;`, quotes and generator-expression punctuation).
_WORD = re.compile(r"[^\s;\"'<>:$]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a variable's name in an `if()` test
_LANGUAGE_CONDITION = re.compile(r"(?:COMPILE_LANGUAGE|COMPILE_LANG_AND_ID):([A-Za-z_,]+)")
_COMPILER_ID_CONDITION = re.compile(r"\b(CUDA|HIP)_COMPILER_ID\b")

# What `--fix` inserts before `enable_language(HIP)` / `project(... HIP)` (R003): a cache
# entry, so `-DCMAKE_HIP_ARCHITECTURES=...` on the command line still wins.
HIP_ARCH_CACHE_LINE = 'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942" CACHE STRING "AMD GPU targets")'
# What `--fix` adds next to `set(CMAKE_CUDA_ARCHITECTURES ...)` (C002), mirroring that line.
HIP_ARCH_LINE = 'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")'


# ---- facts -----------------------------------------------------------------------------------
@dataclass(unsafe_hash=True)
class Flag:
    """A word of an argument that starts with `-`, e.g. `-flto` in "${X} -O3 -flto"."""

    text: str
    location: Location
    # Languages of an enclosing `$<$<COMPILE_LANGUAGE:...>:...>`; None: no such condition.
    languages: frozenset[str] | None
    following: str  # the next word of the argument ("" at its end): `sm_80` after `-arch`


@dataclass(unsafe_hash=True)
class Value:
    """One argument given to a variable or a sink."""

    location: Location
    # Variables read with `${NAME}`, each with the languages of a generator expression around
    # it: `$<$<COMPILE_LANGUAGE:CUDA>:${FLAGS}>` hands FLAGS to CUDA compiles only.
    refs: tuple[tuple[str, frozenset[str] | None], ...]
    flags: tuple[Flag, ...]
    status: Status


@dataclass(unsafe_hash=True)
class Assignment:
    """`set`, `list(APPEND|PREPEND|INSERT)`, `string(APPEND|PREPEND|CONCAT)` or `option`."""

    variable: str
    location: Location  # the variable's name
    values: tuple[Value, ...]
    status: Status


@dataclass(unsafe_hash=True)
class Sink:
    """An argument whose flags reach a compiler or the linker."""

    kind: str
    via: str  # the command or property, as messages name it
    value: Value
    sources: tuple[str, ...] = ()  # SOURCE: the source files the property is set on


@dataclass(unsafe_hash=True)
class Place:
    """Something the build does at one place: enables HIP, picks GPU targets, includes a file."""

    kind: str
    text: str  # the culprit as messages show it, or the path an include names
    location: Location
    status: Status
    detail: str = ""  # what exactly (CUDA_LANGUAGE: which command), for messages and advice
    edit: Edit | None = None  # an insertion a fix may make for it
    edit_location: Location | None = None


@shows_paths("path")
@dataclass
class CMakeFacts:
    path: str
    absolute_path: str  # POSIX form, for resolving include() and add_subdirectory()
    digest: str
    defines_project: bool = False
    assignments: list[Assignment] = field(default_factory=list)
    sinks: list[Sink] = field(default_factory=list)
    places: list[Place] = field(default_factory=list)
    hip_sources: set[str] = field(default_factory=set)  # source words given `LANGUAGE HIP`


# ---- collecting one file ---------------------------------------------------------------------
def collect(source: SourceFile, model: RocmPathModel | None) -> CMakeFacts:
    absolute = source.absolute_path.as_posix() if source.absolute_path is not None else source.path
    facts = CMakeFacts(path=source.path, absolute_path=absolute, digest=source.digest)
    for command in cached_commands(source):
        status = model.status(command.node.start_byte) if model is not None else Status.LIVE
        _Collector(source, facts, command, status).run()
    if b"ARCH" in source.data or b"TARGETS" in source.data:
        _collect_arch_reads(source, model, facts)
    return facts


def _collect_arch_reads(source: SourceFile, model: RocmPathModel | None, facts: CMakeFacts) -> None:
    """`${CMAKE_HIP_ARCHITECTURES}` read anywhere but in `message()`: the build deals with its
    gfx targets (filters them, checks them, hands them on), even if the value comes from
    the command line or the environment."""
    for ref in variable_refs(source):
        name = source.node_text(ref)
        if name in HIP_ARCH_NAMES and not _in_message(ref, source):
            status = model.status(ref.start_byte) if model is not None else Status.LIVE
            facts.places.append(Place(HIP_ARCH, name, source.location(ref.start_byte, ref.end_byte), status))


def _in_message(node, source: SourceFile) -> bool:
    while node is not None and node.type not in _STATEMENTS:
        node = node.parent
    return (node is not None and node.type == "normal_command"
            and source.node_text(node.children[0]).lower() == "message")


_STATEMENTS = frozenset({"normal_command", "if_command", "elseif_command", "foreach_command", "while_command",
                         "function_command", "macro_command"})


class _Collector:
    """The facts of one command."""

    def __init__(self, source: SourceFile, facts: CMakeFacts, command: Command, status: Status) -> None:
        self.source, self.facts, self.command, self.status = source, facts, command, status
        self.words = command.words(source)

    def run(self) -> None:
        name, words, args = self.command.name, self.words, self.command.args
        self._assignment()
        if self.status is Status.PORT and name != "message":
            for arg, w in zip(args, words):
                namespace, _, target = w.rpartition("::")
                if namespace and target in _HIP_RUNTIME_TARGETS and (namespace != "hip" or target != "device"):
                    self._place(ROCM_ARM, arg, w)
        if name == "enable_language":
            for arg, w in zip(args, words):
                self._language(arg, w, "enable_language")
        elif name == "project" and args:
            self.facts.defines_project = True
            for i in project_languages(words):
                self._language(args[i], words[i], "project")
        elif name == "find_package" and words:
            if words[0] in ("hip", "HIP"):
                self._place(FIND_HIP, args[0], f"find_package({words[0]})")
            elif words[0] in ("CUDA", "CUDAToolkit"):
                self._place(CUDA_LANGUAGE, args[0], f"find_package({words[0]})", detail="find_package")
        elif name in ("include", "add_subdirectory") and args:
            self._place(INCLUDE if name == "include" else SUBDIRECTORY, args[0], words[0])
        if name in ("hip_add_library", "hip_add_executable"):
            self._place(HIP_SOURCES, self._identifier(), name)
        elif name in ("cuda_add_library", "cuda_add_executable"):
            self._place(CUDA_LANGUAGE, self._identifier(), name, detail="cuda_add")
        if name in _COMPILE_COMMANDS:
            self._sinks(COMPILE, args[_COMPILE_COMMANDS[name]:])
        elif name in _LINK_COMMANDS:
            self._sinks(LINK, args[_LINK_COMMANDS[name]:])
            for arg, w in zip(args, words):
                if "hip::device" in w:
                    self._place(HIP_DEVICE, arg, "hip::device")
        elif name in _OPTION_LISTS:
            self._option_lists(_OPTION_LISTS[name])
        elif name in _PROPERTY_COMMANDS:
            self._properties()
        if name != "message":
            for arg in args:
                text = self.source.node_text(arg)
                if ("arch" in text or "target" in text or "ARCH" in text) and _HIP_ARCH_TEXT.search(text):
                    self._place(HIP_ARCH, arg, text)

    # -- pieces
    def _identifier(self):
        return self.command.node.children[0]

    def _place(self, kind: str, node, text: str, detail: str = "", edit: Edit | None = None) -> None:
        source = self.source
        self.facts.places.append(Place(
            kind, text, source.location(node.start_byte, node.end_byte), self.status, detail, edit,
            source.location(edit.start, edit.end) if edit is not None else None))

    def _values(self, args) -> list[Value]:
        return make_values(self.source, args, self.status)

    def _sinks(self, kind: str, args, sources: tuple[str, ...] = (), via: str | None = None) -> None:
        via = via or self.command.name
        for value in self._values(args):
            self.facts.sinks.append(Sink(kind, via, value, sources))

    def _language(self, arg, language: str, command: str) -> None:
        shown = f"{command}(HIP)" if command == "enable_language" else "project(... HIP)"
        if language == "HIP":
            self._place(ENABLE_HIP, arg, shown, edit=_insert_before(self.source, self.command.node, HIP_ARCH_CACHE_LINE))
        elif language == "CUDA":
            self._place(CUDA_LANGUAGE, arg, shown.replace("HIP", "CUDA"), detail=command)

    def _assignment(self) -> None:
        command, source = self.command, self.source
        if command.name == "option" and len(command.args) >= 2:
            found = (self.words[0], command.args[2:3])
        else:
            found = assignment(command, source)
        if found is None:
            return
        variable, values = found
        name_arg = command.args[0] if command.name in ("set", "option") else command.args[1]
        self.facts.assignments.append(Assignment(
            variable, source.location(name_arg.start_byte, name_arg.end_byte),
            tuple(self._values(values)), self.status))
        bare = variable[4:-1] if variable.startswith("ENV{") and variable.endswith("}") else variable
        value_words = [word(v, source) for v in values]
        if bare in HIP_ARCH_NAMES:
            self._place(HIP_ARCH, name_arg, bare)
        elif bare in _CUDA_ARCH_VARIABLES and _is_set(value_words):
            edit = None
            if bare == "CMAKE_CUDA_ARCHITECTURES" and command.name in ("set", "list", "string"):
                edit = _insert_after(source, command.node, HIP_ARCH_LINE)
            self._place(CUDA_ARCH, name_arg, variable, edit=edit)
        elif _NVCC_FLAGS_VARIABLE.fullmatch(variable):
            self._place(CUDA_LANGUAGE, name_arg, variable, detail="nvcc-flags")
        elif _SEPARABLE.fullmatch(variable) and _is_true(value_words):
            self._place(CUDA_LANGUAGE, name_arg, variable, detail="separable")
        elif variable == "CMAKE_CXX_COMPILER" and value_words and HIP_CLANG.search(value_words[0]):
            self._place(HIP_COMPILER, name_arg, f"set(CMAKE_CXX_COMPILER {value_words[0]})")
        elif _IPO_VARIABLE.fullmatch(variable) and command.name == "set" and value_words[:1] \
                and value_words[0].upper() in TRUE_CONSTANTS and not self._under_ipo_check():
            self._place(IPO, name_arg, variable)

    def _under_ipo_check(self) -> bool:
        """Is the command inside an `if()` on the RESULT of this file's `check_ipo_supported`?
        That check builds a test project with every enabled language, HIP too: where GCC's
        C++ and clang's HIP objects cannot be linked with LTO it answers no, and IPO stays off."""
        results = _memoized(self.source, "ipo_check_results", _ipo_check_results)
        if not results:
            return False
        node = self.command.node.parent
        while node is not None:
            if node.type in ("if_condition", "elseif_command"):
                head = node.named_children[0] if node.type == "if_condition" and node.named_children else node
                test = head if head.type in ("if_command", "elseif_command") else None
                if test is not None and results & set(_NAME.findall(self.source.node_text(test))):
                    return True
            node = node.parent
        return False

    def _option_lists(self, keywords: dict[str, str]) -> None:
        kind, keyword = None, ""
        for arg, w in zip(self.command.args, self.words):
            if w in _OPTION_LIST_ENDS:
                kind, keyword = keywords.get(w), w
            elif kind is not None:
                self._sinks(kind, (arg,), via=f"{self.command.name}(... {keyword})")

    def _properties(self) -> None:
        command, words, args = self.command, self.words, self.command.args
        sources: tuple[str, ...] = ()
        if command.name == "set_property":
            if "PROPERTY" not in words:
                return
            at = words.index("PROPERTY")
            if words[:1] == ["SOURCE"]:
                sources = _source_words(words[1:at])
            pairs = [(at + 1, list(range(at + 2, len(words))))] if at + 1 < len(words) else []
        else:
            if "PROPERTIES" not in words:
                return
            at = words.index("PROPERTIES")
            if command.name == "set_source_files_properties":
                sources = _source_words(words[:at])
            pairs = [(i, [i + 1]) for i in range(at + 1, len(words) - 1, 2)]
        for key, value_indices in pairs:
            prop = words[key]
            values = [args[i] for i in value_indices]
            value_words = [words[i] for i in value_indices]
            if prop == "LANGUAGE" and value_words[:1] == ["HIP"]:
                self.facts.hip_sources.update(sources)
                self._place(HIP_SOURCES, values[0], "LANGUAGE HIP")
            elif _COMPILE_PROPERTY.fullmatch(prop):
                self._sinks(SOURCE if sources else COMPILE, values, sources, via=prop)
            elif _LINK_PROPERTY.fullmatch(prop):
                self._sinks(LINK, values, via=prop)
            elif prop == "HIP_ARCHITECTURES":
                self._place(HIP_ARCH, args[key], prop)
            elif prop == _CUDA_ARCH_PROPERTY and _is_set(value_words):
                self._place(CUDA_ARCH, args[key], prop)
            elif prop == "CUDA_SEPARABLE_COMPILATION" and _is_true(value_words):
                self._place(CUDA_LANGUAGE, args[key], prop, detail="separable")
            elif _IPO_PROPERTY.fullmatch(prop) and value_words[:1] and value_words[0].upper() in TRUE_CONSTANTS \
                    and not self._under_ipo_check():
                self._place(IPO, args[key], prop)


def _ipo_check_results(source: SourceFile) -> frozenset[str]:
    """The RESULT variables of the file's `check_ipo_supported` calls."""
    if b"check_ipo_supported" not in source.data:
        return frozenset()
    found = set()
    for command in cached_commands(source):
        words = command.words(source)
        if command.name.lower() == "check_ipo_supported" and "RESULT" in words[:-1]:
            found.add(words[words.index("RESULT") + 1])
    return frozenset(found)


def make_values(source: SourceFile, args, status: Status) -> list[Value]:
    """The values of a command's arguments. A generator expression may span several
    (`$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda` `--expt-relaxed-constexpr>`): CMake joins
    the arguments with `;` before it evaluates them, so its condition covers each."""
    texts = [source.node_text(arg) for arg in args]
    joined = ";".join(texts)
    regions = _language_regions(joined) if "$<" in joined else []
    values, offset = [], 0
    for arg, text in zip(args, texts):
        values.append(_make_value(source, arg, status, text, regions, offset))
        offset += len(text) + 1
    return values


def _make_value(source: SourceFile, arg, status: Status, text: str, regions, offset: int) -> Value:
    """One argument's value; `regions` are the command's (`make_values`), `offset` where the
    argument starts in their text."""
    base = arg.start_byte
    words = list(_WORD.finditer(text))
    flags = []
    for i, m in enumerate(words):
        token = m.group()
        if len(token) < 2 or token[0] != "-":
            continue
        start, end = byte_offset(base, text, m.start()), byte_offset(base, text, m.end())
        following = words[i + 1].group() if i + 1 < len(words) else ""
        flags.append(Flag(token, source.location(start, end), _languages_at(regions, offset + m.start()), following))
    refs = ()
    if "${" in text:
        refs = tuple((name, _languages_at(regions, offset + len(source.data[base:start].decode("utf-8", errors="replace"))))
                     for name, start in referenced_variables_within(source, arg.start_byte, arg.end_byte))
    return Value(source.location(arg.start_byte, arg.end_byte), refs, tuple(flags), status)


def _language_regions(text: str) -> list[tuple[int, int, frozenset[str] | None]]:
    """(start, end, languages) of each generator expression's value whose condition names
    compile languages: `$<$<COMPILE_LANGUAGE:CUDA>:...>` gives the `...` span and {CUDA}."""
    regions = []
    stack: list[list] = []  # [start of `$<`, index of its first top-level `:` or None]
    i = 0
    while i < len(text):
        if text.startswith("$<", i):
            stack.append([i, None])
            i += 2
            continue
        c = text[i]
        if stack and c == ":" and stack[-1][1] is None:
            stack[-1][1] = i
        elif stack and c == ">":
            start, colon = stack.pop()
            if colon is not None:
                languages = _condition_languages(text[start + 2:colon])
                if languages is not None:
                    regions.append((colon + 1, i, languages))
        i += 1
    return regions


def _condition_languages(condition: str) -> frozenset[str] | None:
    if "NOT:" in condition:
        return None  # `$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:...>`: every other language
    m = _LANGUAGE_CONDITION.search(condition)
    if m is not None:
        parts = m.group(1).split(",")
        # COMPILE_LANG_AND_ID:CUDA,NVIDIA names one language and then compiler ids.
        return frozenset(parts[:1] if "LANG_AND_ID" in m.group(0) else parts)
    m = _COMPILER_ID_CONDITION.search(condition)
    return frozenset({m.group(1)}) if m is not None else None


def _languages_at(regions, index: int) -> frozenset[str] | None:
    inner = None
    for start, end, languages in regions:
        if start <= index < end and (inner is None or start >= inner[0]):
            inner = (start, languages)
    return inner[1] if inner is not None else None


def _source_words(words: list[str]) -> tuple[str, ...]:
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w in _SOURCE_SCOPE_KEYWORDS:
            skip = True
        elif w not in ("APPEND", "APPEND_STRING"):
            out.append(w)
    return tuple(out)


def _is_set(values: list[str]) -> bool:
    """A value that is not a false constant: `80 90`, `native`, but not `OFF`."""
    items = [i for v in values for i in v.split(";") if i.strip()]
    return bool(items) and not (len(items) == 1 and items[0].upper() in _FALSE_CONSTANTS)


def _is_true(values: list[str]) -> bool:
    return bool(values) and values[0].upper() in TRUE_CONSTANTS


def _insert_after(source: SourceFile, node, text: str) -> Edit | None:
    """An edit putting `text` on its own line after the line where `node` ends; None in a
    file that does not parse (see `parses`)."""
    if not parses(source):
        return None
    indent = line_indent(source, node.start_byte)
    line = source.line_of(node.end_byte)
    if line < source.line_of(len(source.data)):
        return Edit.insert(source.line_start(line + 1), f"{indent}{text}\n")
    return Edit.insert(len(source.data), f"\n{indent}{text}\n")


def _insert_before(source: SourceFile, node, text: str) -> Edit | None:
    """An edit putting `text` on its own line before the line where `node` starts; None in
    a file that does not parse (see `parses`)."""
    if not parses(source):
        return None
    line = source.line_of(node.start_byte)
    return Edit.insert(source.line_start(line), f"{line_indent(source, node.start_byte)}{text}\n")


def parses(source: SourceFile) -> bool:
    """Does the CMake file parse? In one that does not, an added line can land inside the
    broken command (`set(X 8` runs to the end of the file): the next scan would not see it
    and `--fix` would add it again on every pass, so such files get advice only."""
    return not source.tree.root_node.has_error


# ---- joining the files of a scan -------------------------------------------------------------
_RANK = {Status.DEAD: 0, Status.PORT: 1, Status.LIVE: 2}


def combine(outer: Status, inner: Status) -> Status:
    """The status of code with status `inner` in a file included from a place with `outer`."""
    if Status.DEAD in (outer, inner):
        return Status.DEAD
    if Status.PORT in (outer, inner):
        return Status.PORT
    return Status.LIVE


@dataclass(unsafe_hash=True)
class Reach:
    """How a value gets to a compiler: the sink's kind, what messages call it, its sources."""

    kind: str
    via: str
    sources: tuple[str, ...] = ()
    # Set when the value got there through `$<$<COMPILE_LANGUAGE:...>:${VAR}>`.
    languages: frozenset[str] | None = None

    def through(self, languages: frozenset[str] | None) -> "Reach":
        """This reach, for a value read inside a generator expression for `languages`."""
        if languages is None:
            return self
        narrowed = languages if self.languages is None else self.languages & languages
        return Reach(self.kind, self.via, self.sources, narrowed)


def flag_languages(flag: Flag, reach: Reach) -> frozenset[str] | None:
    """The compile languages a flag is limited to where it reaches a sink, if any."""
    return flag.languages if flag.languages is not None else reach.languages


class Project:
    """The list files of one CMake build tree, with their scopes."""

    def __init__(self, files: list[CMakeFacts], file_status: dict[str, Status], scope_of: dict[str, str],
                 visible: dict[str, list[CMakeFacts]]) -> None:
        self.files = files
        self._file_status = file_status
        self._scope_of = scope_of
        self._visible = visible

    def status(self, facts: CMakeFacts, local: Status) -> Status:
        """The status of a fact: where it stands in its file, and where the file is included."""
        return combine(self._file_status.get(facts.path, Status.LIVE), local)

    def places(self, *kinds: str, live_only: bool = False) -> list[tuple[CMakeFacts, Place]]:
        """Places of these kinds on the ROCm path (LIVE or PORT; only LIVE with `live_only`)."""
        found = []
        for facts in self.files:
            for place in facts.places:
                if place.kind in kinds:
                    status = self.status(facts, place.status)
                    if status is Status.LIVE or (status is Status.PORT and not live_only):
                        found.append((facts, place))
        return found

    def first(self, *kinds: str) -> tuple[CMakeFacts, Place] | None:
        for kind in kinds:  # in order of preference
            found = self.places(kind)
            if found:
                return found[0]
        return None

    @cached_property
    def hip_sources(self) -> frozenset[str]:
        return frozenset(w for facts in self.files for w in facts.hip_sources)

    @cached_property
    def has_hip(self) -> bool:
        return bool(self.places(*HIP_PATH))

    @cached_property
    def has_hip_arch(self) -> bool:
        return bool(self.places(HIP_ARCH))

    def _assignments_seen_from(self, scope: str, cache: dict) -> dict[str, list[tuple[CMakeFacts, Assignment]]]:
        if scope not in cache:
            table: dict[str, list] = {}
            for facts in self._visible.get(scope, ()):
                for a in facts.assignments:
                    if self.status(facts, a.status) is not Status.DEAD:
                        table.setdefault(a.variable, []).append((facts, a))
            cache[scope] = table
        return cache[scope]

    @cached_property
    def reached(self) -> list[tuple[CMakeFacts, Value, frozenset[Reach]]]:
        """Every value that reaches a sink on the ROCm path, with how: directly, through a
        flags variable (`CMAKE_CXX_FLAGS`), or through variables read with `${}` there.
        In file order, then source order."""
        queue: list[tuple[CMakeFacts, Value, Reach]] = []
        for facts in self.files:
            for sink in facts.sinks:
                if self.status(facts, sink.value.status) is not Status.DEAD:
                    queue.append((facts, sink.value, Reach(sink.kind, sink.via, sink.sources)))
            for a in facts.assignments:
                kind = sink_kind_of_variable(a.variable)
                if kind is not None and self.status(facts, a.status) is not Status.DEAD:
                    queue.extend((facts, v, Reach(kind, a.variable)) for v in a.values)
        tables: dict = {}
        seen: set = set()
        # (scope, variable, reach) read so far: each read queues every value of the variable,
        # so 2,000 lines of `set(X "${X} ...")` queued 2,000 values 2,000 times; once is enough.
        expanded: set = set()
        found: dict[tuple[str, int], tuple[CMakeFacts, Value, set]] = {}
        while queue:
            facts, value, reach = queue.pop()
            key = (facts.path, value.location.start_byte)
            if (key, reach) in seen:
                continue
            seen.add((key, reach))
            found.setdefault(key, (facts, value, set()))[2].add(reach)
            if not value.refs:
                continue
            scope = self._scope_of[facts.path]
            table = self._assignments_seen_from(scope, tables)
            for name, languages in value.refs:
                narrowed = reach.through(languages)
                if (scope, name, narrowed) in expanded:
                    continue
                expanded.add((scope, name, narrowed))
                for other, a in table.get(name, ()):
                    queue.extend((other, v, narrowed) for v in a.values)
        order = {facts.path: i for i, facts in enumerate(self.files)}
        return [(f, v, frozenset(r)) for (path, start), (f, v, r) in
                sorted(found.items(), key=lambda item: (order[item[0][0]], item[0][1]))]


class CMakeBuild:
    """The CMake projects of a scan."""

    def __init__(self, files: list[CMakeFacts]) -> None:
        self.projects = _group(files)

    @classmethod
    def of(cls, index) -> "CMakeBuild":
        """The build of a `ProjectIndex`, joined once for every project rule."""
        cached = index.__dict__.get("_cmake_build")
        if cached is None:
            cached = cls(list(getattr(index, "cmake_files", ())))
            index.__dict__["_cmake_build"] = cached
        return cached


def _group(files: list[CMakeFacts]) -> list[Project]:
    files = sorted(files, key=lambda f: (f.absolute_path.count("/"), f.absolute_path))
    by_path = {f.absolute_path: f for f in files}
    by_name: dict[str, list[CMakeFacts]] = {}
    for f in files:
        by_name.setdefault(os.path.basename(f.absolute_path), []).append(f)
    lists_by_dir = {_dir(f): f for f in files if _is_lists_file(f)}
    includes, subdirectories = [], []  # (from, to, status at the include site)
    for f in files:
        for place in f.places:
            if place.kind == INCLUDE:
                target = _resolve(place.text, f, by_path, by_name, module=True)
            elif place.kind == SUBDIRECTORY:
                target = _resolve(place.text.rstrip("/") + "/CMakeLists.txt", f, by_path, by_name, module=False)
            else:
                continue
            if target is not None and target is not f:
                (includes if place.kind == INCLUDE else subdirectories).append((f, target, place.status))

    by_path_key = {f.path: f for f in files}
    # Variable scopes: a CMakeLists.txt heads one; included files join their includer's.
    head: dict[str, CMakeFacts] = {f.path: f for f in files if _is_lists_file(f)}
    changed = True
    while changed:  # included files, transitively (an include chain is short)
        changed = False
        for source, target, _ in includes:
            if source.path in head and target.path not in head:
                head[target.path] = head[source.path]
                changed = True
    # A list file nothing includes (an initial cache, `cmake -C host-config.cmake`; a module
    # read through a variable) joins the nearest CMakeLists' scope, whose reads see its
    # variables; its own reads see only its own: several such files are alternatives.
    standalone = set()
    for f in files:
        if f.path not in head:
            above = _nearest_lists(_dir(f), lists_by_dir, include_self=True)
            head[f.path] = above if above is not None else f
            if above is not None:
                standalone.add(f.path)
    parent: dict[str, CMakeFacts] = {}
    for source, target, _ in subdirectories:
        scope, child = head[source.path], head[target.path]
        if child is target and child.path not in parent and not _is_ancestor(child, scope, parent):
            parent[child.path] = scope
    for f in files:
        if head[f.path] is f and f.path not in parent and _is_lists_file(f) and not f.defines_project:
            above = _nearest_lists(os.path.dirname(_dir(f)), lists_by_dir, include_self=True)
            if above is not None and not _is_ancestor(f, head[above.path], parent):
                parent[f.path] = head[above.path]

    members: dict[str, list[CMakeFacts]] = {}
    for f in files:
        members.setdefault(head[f.path].path, []).append(f)
    visible: dict[str, list[CMakeFacts]] = {}
    for scope in members:
        seen, chain, at = set(), [], scope
        while at is not None and at not in seen:
            seen.add(at)
            chain.extend(members.get(at, ()))
            up = parent.get(at)
            at = up.path if up is not None else None
        visible[scope] = chain
    for path in standalone:
        visible[path] = [by_path_key[path]]

    # Where each file is included from decides its status as a whole.
    file_status: dict[str, Status] = {}
    edges = includes + subdirectories
    targets = {t.path for _, t, _ in edges}
    for f in files:
        if f.path not in targets:
            file_status[f.path] = Status.LIVE
    for _ in range(len(files) + 1):
        changed = False
        for source, target, status in edges:
            outer = file_status.get(source.path)
            if outer is None:
                continue
            candidate = combine(outer, status)
            current = file_status.get(target.path)
            if current is None or _RANK[candidate] > _RANK[current]:
                file_status[target.path] = candidate
                changed = True
        if not changed:
            break

    # Projects: the trees of scopes; fragments without `project()` form one together.
    def root_of(scope: str) -> str:
        seen = set()
        while scope in parent and scope not in seen:
            seen.add(scope)
            scope = parent[scope].path
        return scope

    trees: dict[str, list[CMakeFacts]] = {}
    for f in files:
        trees.setdefault(root_of(head[f.path].path), []).append(f)
    projects, loose = [], []
    for root, tree in trees.items():
        if any(f.defines_project for f in tree):
            projects.append(tree)
        else:
            loose.extend(tree)
    if loose:
        projects.append(loose)
    scope_of = {f.path: f.path if f.path in standalone else head[f.path].path for f in files}
    return [Project(tree, file_status, scope_of, visible) for tree in projects]


def _dir(facts: CMakeFacts) -> str:
    return os.path.dirname(facts.absolute_path)


def _is_lists_file(facts: CMakeFacts) -> bool:
    return os.path.basename(facts.absolute_path) == "CMakeLists.txt"


def _nearest_lists(directory: str, lists_by_dir: dict[str, CMakeFacts], include_self: bool) -> CMakeFacts | None:
    at = directory if include_self else os.path.dirname(directory)
    while True:
        if at in lists_by_dir:
            return lists_by_dir[at]
        up = os.path.dirname(at)
        if up == at:
            return None
        at = up


def _is_ancestor(candidate: CMakeFacts, scope: CMakeFacts, parent: dict[str, CMakeFacts]) -> bool:
    """Is `candidate` the scope `scope` or one of its parents? (No cycles in the tree.)"""
    at, seen = scope, set()
    while at is not None and at.path not in seen:
        if at.path == candidate.path:
            return True
        seen.add(at.path)
        at = parent.get(at.path)
    return False


_DIRECTORY_VARIABLE = re.compile(r"^\$\{[A-Za-z_]*(?:DIR|ROOT|PATH)\}/?")


def _resolve(text: str, including: CMakeFacts, by_path: dict[str, CMakeFacts],
             by_name: dict[str, list[CMakeFacts]], module: bool) -> CMakeFacts | None:
    """The scanned file `include(text)` / `add_subdirectory()` names, seen from `including`.

    `${CMAKE_CURRENT_SOURCE_DIR}/`-style prefixes are dropped; a relative path is tried in
    the including file's directory and then above it (include() reads paths relative to the
    directory being configured); a bare module name (`include(Flags)`) is any scanned
    `Flags.cmake`, the nearest one first.
    """
    path = text.replace("\\", "/")
    while True:
        stripped = _DIRECTORY_VARIABLE.sub("", path, count=1)
        if stripped == path:
            break
        path = stripped
    if not path or "${" in path:
        return None
    if module and "/" not in path and not path.endswith(".cmake"):
        return _nearest(by_name.get(path + ".cmake", []), including)
    if os.path.isabs(path):
        return by_path.get(os.path.normpath(path))
    at = _dir(including)
    while True:
        candidate = by_path.get(os.path.normpath(os.path.join(at, path)))
        if candidate is not None:
            return candidate
        up = os.path.dirname(at)
        if up == at:
            break
        at = up
    suffix = "/" + os.path.normpath(path).lstrip("./")
    candidates = by_name.get(os.path.basename(suffix), [])
    return _nearest([f for f in candidates if f.absolute_path.endswith(suffix)], including)


def _nearest(candidates: list[CMakeFacts], including: CMakeFacts) -> CMakeFacts | None:
    if not candidates:
        return None
    here = _dir(including)
    return max(candidates, key=lambda f: (len(os.path.commonpath([here, _dir(f)])), -len(f.absolute_path)))
