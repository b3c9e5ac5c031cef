"""The ROCm-path model: which parts of a file are compiled when building for ROCm.

Every conditional (`#if`/`#ifdef` chains in C, `if()` in CMake, `if` in setup.py,
`ifeq`/`ifdef` in Makefiles) is read
as a chain of arms. Each arm's condition is evaluated twice, with three-valued logic
(True, False, None = undecidable): once for a ROCm build and once for a CUDA build.

- An arm not taken on ROCm is DEAD: CUDA-only code, already handled by the port.
- An arm taken on ROCm but never on CUDA is PORT: the ROCm port itself.
- An undecidable arm before a PORT arm of the same chain is its CUDA alternative: DEAD.
- Everything else is LIVE, including every undecidable arm: portlint reports there.

The engine drops findings outside LIVE code, so no rule has to remember to.
"""

from __future__ import annotations

import ast
import bisect
import functools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum

from portlint import hipify, queries, targets
from portlint.nesting import bounded
from portlint.source import CMAKE, CUDA, MAKE, PYTHON, TEXT_LANGUAGES, SourceFile, module_nodes, module_parents

# The macro environments and the `#if` logic live in the build model; the names stay here
# for the rules that read them.
from portlint.build_model.expressions import Value, and_ as _and, not_ as _not, or_ as _or, truth as _truth  # noqa: E402
from portlint.build_model.macros import (  # noqa: E402
    CUDA_DEFINED, CUDA_ONLY, CUDA_UNKNOWN, EMPTY, HEADER_SUFFIXES, PLATFORM_NAME, ROCM_DEFINED, ROCM_UNKNOWN, Macro,
    backend_selectors, chain_outcomes, evaluate_directive, read_directives,
)


class Status(str, Enum):
    LIVE = "live"
    DEAD = "dead"
    PORT = "port"


@dataclass(unsafe_hash=True)
class Arm:
    start: int  # body bytes
    end: int
    rocm: Value
    cuda: Value


@dataclass(unsafe_hash=True)
class Condition:
    """A parsed `#if`/`#ifdef`/`#elif` condition, for rules about the guards themselves."""

    directive: str  # "#if", "#ifdef", "#ifndef", "#elif", "#elifdef", "#elifndef"
    node: object  # the directive's node (preproc_if, preproc_ifdef, preproc_elif, ...)
    condition: object  # the condition's node (an expression, or the macro name)
    macros: frozenset[str]  # every identifier the condition mentions


@dataclass
class RocmPathModel:
    ranges: list[tuple[int, int, Status]] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    rocm_macros: frozenset[str] = frozenset()  # project macros a ROCm build defines (configuration)

    # (len(ranges), segment starts, their statuses): see `_segments`; rebuilt when arms are added.
    _segments: tuple | None = field(default=None, init=False, repr=False, compare=False)
    # (len(conditions), condition starts, the conditions by start): see `condition_at`.
    _tests: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def status(self, offset: int) -> Status:
        """DEAD inside any DEAD range, else PORT inside any other range, else LIVE: a
        bisection (rules ask per function and launch; a file can have thousands of arms)."""
        segments = self._segments
        if segments is None or segments[0] != len(self.ranges):
            segments = self._segments = (len(self.ranges), *_segments(self.ranges))
        _, starts, statuses = segments
        i = bisect.bisect_right(starts, offset) - 1
        return statuses[i] if i >= 0 else Status.LIVE

    def is_live(self, offset: int) -> bool:
        return self.status(offset) is Status.LIVE

    def condition_at(self, offset: int) -> Condition | None:
        """The `#if`/`#elif`/`#ifdef` whose condition holds `offset` (a name tested there, not
        used), by bisection: conditions never nest in one another."""
        tests = self._tests
        if tests is None or tests[0] != len(self.conditions):
            ordered = sorted((c for c in self.conditions if c.condition is not None),
                             key=lambda c: c.condition.start_byte)
            tests = self._tests = (len(self.conditions), [c.condition.start_byte for c in ordered], ordered)
        _, starts, ordered = tests
        i = bisect.bisect_right(starts, offset) - 1
        return ordered[i] if i >= 0 and offset < ordered[i].condition.end_byte else None

    def add_chain(self, arms: list[Arm]) -> list[tuple]:
        """Add a chain's arms; returns each arm's (ROCm taken, CUDA taken, status)."""
        outcomes = chain_outcomes([(arm.rocm, arm.cuda) for arm in arms])
        for arm, (_, _, status) in zip(arms, outcomes):
            if status is not None and arm.end > arm.start:
                self.ranges.append((arm.start, arm.end, Status(status)))
        return outcomes


def _segments(ranges) -> tuple[list[int], list[Status]]:
    """The ranges (which may nest or overlap) cut where any of them starts or ends: the start
    of each piece and its status, in order."""
    changes: dict[int, list[int]] = {}  # offset -> [change in DEAD ranges open, in others]
    for start, end, status in ranges:
        if end <= start:
            continue
        which = 0 if status is Status.DEAD else 1
        changes.setdefault(start, [0, 0])[which] += 1
        changes.setdefault(end, [0, 0])[which] -= 1
    starts, statuses, dead, other = [], [], 0, 0
    for at in sorted(changes):
        dead += changes[at][0]
        other += changes[at][1]
        starts.append(at)
        statuses.append(Status.DEAD if dead else Status.PORT if other else Status.LIVE)
    return starts, statuses


def build(source: SourceFile, rocm_macros: frozenset[str] = frozenset()) -> RocmPathModel:
    """The model for one file, by its language."""
    if source.language in TEXT_LANGUAGES:
        return RocmPathModel(rocm_macros=rocm_macros)  # requirements, pyproject.toml: no conditionals
    builder = {CUDA: _build_cuda, CMAKE: _build_cmake, PYTHON: _build_python, MAKE: _build_make}[source.language]
    model = builder(source, rocm_macros)
    model.rocm_macros = rocm_macros
    return model


# ---- C / C++ / CUDA / HIP --------------------------------------------------------------
_CHAIN_QUERY = "[(preproc_if) (preproc_ifdef)] @chain"
_ALTERNATIVES = ("preproc_elif", "preproc_elifdef", "preproc_else")
# Every `#if`/`#ifdef`/`#ifndef` token matches this (tree-sitter's is `#[ \t]*if`; line
# continuations let in to be safe). A file without one has no chain: its model needs no
# query, which spares the tree walk of the first shared query when no other reader needs it.
_CHAIN_START = re.compile(rb"#[ \t\\\r\n]*if")


def _build_cuda(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    model = RocmPathModel()
    _add_amd_builtin_functions(source, model)
    environment = source.build if source.build is not None else EMPTY
    if environment.status is not None:  # a header only ROCm (or only CUDA) code includes
        model.ranges.append((0, len(source.data), Status(environment.status)))
    _add_arguments_rocm_leaves_out(source, model, environment)
    if not _CHAIN_START.search(source.data):
        return model
    configured_stop = {}  # arm node id -> ROCm surely takes it, on backend switches alone
    for chain in queries.nodes(CUDA, _CHAIN_QUERY, source.tree.root_node, "chain"):
        arms: list[Arm] = []
        arm_nodes = []
        switches_only = []
        node = chain
        while node is not None:
            directive = node.children[0].type if node.children else ""
            cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
            alternative = node.child_by_field_name("alternative")
            body_start = cond.end_byte if cond is not None else node.children[0].end_byte
            # The last arm ends at the chain's `#endif`: trailing comments attach to the head.
            body_end = alternative.start_byte if alternative is not None else _endif_start(chain)
            if directive == "#else":
                rocm = cuda = True
            else:
                # Each condition is read with the macros defined before it (its own file's
                # and those of the headers included above it).
                rocm = _eval_directive(directive, cond, source, environment.scope(node.start_byte, True, rocm_macros))
                cuda = _eval_directive(directive, cond, source, environment.scope(node.start_byte, False, rocm_macros))
                model.conditions.append(
                    Condition(directive, node, cond, frozenset(_identifiers(cond, source)))
                )
            arms.append(Arm(body_start, body_end, rocm, cuda))
            arm_nodes.append(node)
            # (an `#else` rests on the chain's conditions before it)
            switches_only.append(all(switches_only) if directive == "#else" else
                                 model.conditions[-1].macros <= environment.rocm_undefined)
            node = alternative if alternative is not None and alternative.type in _ALTERNATIVES else None
        outcomes = model.add_chain(arms)
        for arm_node, (on_rocm, _, _), switches in zip(arm_nodes, outcomes, switches_only):
            configured_stop[arm_node.id] = on_rocm is True and switches
        queries.known_in(source.tree, arm_nodes)  # rules ask where each condition stands
    if b"#error" in source.data or b"# error" in source.data:
        _stop_on_other_backends(source, model, configured_stop)
    if source.tree.root_node.has_error:
        _add_chains_the_tree_lost(source, model, environment, rocm_macros)
    return model


_ERRORS = '(preproc_call directive: (preproc_directive) @directive (#match? @directive "^#[ \t]*error$")) @call'
_ARM_NODES = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else"})


def _stop_on_other_backends(source: SourceFile, model: RocmPathModel, configured_stop: dict[int, bool]) -> None:
    """A file that stops with `#error` where the ROCm build surely stands, on conditions of the
    project's backend switches alone (`#if !defined(X_ENABLE_CUDA) #error ...`), belongs to
    another backend's configuration: a ROCm build never compiles it (DEAD). An `#error` on a
    compiler's macros (`#ifndef __CUDACC__`) is a hazard of the file instead, left to the
    rules."""
    for call in queries.nodes(CUDA, _ERRORS, source.tree.root_node, "call"):
        arms, node = [], call.parent
        while node is not None:
            if node.type in _ARM_NODES:
                arms.append(node)
            node = node.parent
        if arms and all(configured_stop.get(a.id, False) or _is_include_guard(a, source) for a in arms) \
                and any(configured_stop.get(a.id, False) for a in arms):
            model.ranges.append((0, len(source.data), Status.DEAD))
            return


def _is_include_guard(arm, source: SourceFile) -> bool:
    """`#ifndef NAME` whose first line inside is `#define NAME`."""
    if arm.type != "preproc_ifdef" or not source.node_text(arm.children[0]).endswith("ifndef"):
        return False
    name = arm.child_by_field_name("name")
    first = next((c for c in arm.named_children[1:] if c.type != "comment"), None)
    return name is not None and first is not None and first.type == "preproc_def" and \
        first.child_by_field_name("name") is not None and \
        source.node_text(first.child_by_field_name("name")) == source.node_text(name)


def _add_chains_the_tree_lost(source: SourceFile, model: RocmPathModel, environment, rocm_macros) -> None:
    """Conditionals the parse swallowed into an ERROR node (a macro call without `;` before
    `#ifdef`): read from the directives' text, as the macro walk reads them, so their arms
    are judged all the same. Only their ranges: rules about guards read parsed conditions."""
    data = source.data
    known = {data.rfind(b"\n", 0, chain.start_byte) + 1
             for chain in queries.nodes(CUDA, _CHAIN_QUERY, source.tree.root_node, "chain")}
    open_chains: list[tuple[bool, list, list]] = []  # (lost by the tree, arms so far, [kind, offset, text, body start])
    for directive in read_directives(data):
        kind, offset = directive.kind, directive.offset
        if kind in ("if", "ifdef", "ifndef"):
            open_chains.append((offset not in known, [], [kind, offset, directive.text, directive.end]))
        elif not open_chains:
            continue
        elif kind in ("elif", "elifdef", "elifndef", "else", "endif"):
            lost, arms, (arm_kind, arm_offset, text, start) = open_chains[-1]
            if lost:
                arms.append(_text_arm(arm_kind, arm_offset, text, start, offset, environment, rocm_macros))
            if kind == "endif":
                open_chains.pop()
                if lost:
                    model.add_chain(arms)
            else:
                open_chains[-1] = (lost, arms, [kind, offset, directive.text, directive.end])


def _text_arm(kind: str, offset: int, text: str, start: int, end: int, environment, rocm_macros) -> Arm:
    if kind == "else":
        return Arm(start, end, True, True)
    return Arm(start, end, evaluate_directive(kind, text, environment.scope(offset, True, rocm_macros)),
               evaluate_directive(kind, text, environment.scope(offset, False, rocm_macros)))


_AMD_BUILTIN = b"__builtin_amdgcn_"


def _add_arguments_rocm_leaves_out(source: SourceFile, model: RocmPathModel, environment) -> None:
    """An argument that the ROCm build's definition of a project macro leaves out is never
    compiled there (`AMREX_HIP_OR_CUDA(__shfl_down(x, o), __shfl_down_sync(m, x, o))` where a
    HIP arm defines `X_HIP_OR_CUDA(hip, cuda) hip`): DEAD. Macros the ROCm build may define
    otherwise (several definitions it may take) leave their arguments alone."""
    names = [name for name, (_, states) in (environment.macros[0] if environment.macros else {}).items()
             if any(_leaves_out_an_argument(state) for state in states)]
    root = None
    for name in names:
        spelled = name.encode()
        at = source.data.find(spelled)
        while at != -1:
            macro = environment.shim(name, at)
            if _leaves_out_an_argument(macro):
                root = root or source.tree.root_node
                node = root.descendant_for_byte_range(at, at + len(spelled))
                if node is not None and node.type == "identifier" and node.start_byte == at:
                    given = _macro_arguments(root, source.data, node.end_byte)
                    if given is not None and len(given) == len(macro.params):
                        model.ranges.extend((start, end, Status.DEAD)
                                            for index, (start, end) in enumerate(given) if macro.uses_parameter(index) is False)
            at = source.data.find(spelled, at + len(spelled))


_MACRO_PUNCTUATION = re.compile(rb"[(),]")
MAX_MACRO_ARGUMENTS_BYTES = 64 * 1024


def _macro_arguments(root, data: bytes, after_name: int) -> list[tuple[int, int]] | None:
    """The byte ranges of a macro invocation's arguments, split as the preprocessor splits
    them: at commas outside nested parentheses (braces and brackets do not protect a comma).
    The parser's tokens decide what is a parenthesis or a comma (not one inside a string, a
    character or a comment), also where the arguments are statements it cannot parse as a
    call. None: no invocation (no `(` next), or none that closes within the bound."""
    opening = after_name
    while opening < len(data) and data[opening] in b" \t\r\n\\":
        opening += 1
    if opening >= len(data) or data[opening] != ord("("):
        return None
    arguments, depth, start = [], 0, opening + 1
    for match in _MACRO_PUNCTUATION.finditer(data, opening, min(len(data), opening + MAX_MACRO_ARGUMENTS_BYTES)):
        at = match.start()
        token = root.descendant_for_byte_range(at, at + 1)
        if token is None or token.type != chr(data[at]):
            continue  # inside a string, a character or a comment
        if data[at] == ord("("):
            depth += 1
        elif data[at] == ord(")"):
            depth -= 1
            if depth == 0:
                arguments.append((start, at))
                return arguments
        elif depth == 1:
            arguments.append((start, at))
            start = at + 1
    return None


def _leaves_out_an_argument(macro) -> bool:
    return (isinstance(macro, Macro) and bool(macro.path) and bool(macro.params) and macro.body is not None
            and "..." not in macro.params and any(macro.uses_parameter(i) is False for i in range(len(macro.params))))


def _add_amd_builtin_functions(source: SourceFile, model: RocmPathModel) -> None:
    """A function that calls an AMDGPU builtin (`__builtin_amdgcn_mfma_*`, `_ds_bpermute`, ...)
    compiles only for AMD, whatever guards it: its body is PORT."""
    data = source.data
    at = data.find(_AMD_BUILTIN)
    root = source.tree.root_node if at != -1 else None
    done: set[int] = set()
    while at != -1:
        node = root.descendant_for_byte_range(at, at + len(_AMD_BUILTIN))
        if node is not None and node.type == "identifier":
            function = queries.nearest_ancestor(node, "function_definition")
            body = function.child_by_field_name("body") if function is not None else None
            if body is not None and body.id not in done:
                done.add(body.id)
                model.ranges.append((body.start_byte, body.end_byte, Status.PORT))
        at = data.find(_AMD_BUILTIN, at + 1)


def _endif_start(node) -> int:
    last = node.children[-1] if node.children else None
    if last is not None and last.type == "#endif":
        return last.start_byte
    return node.end_byte


def _identifiers(node, source: SourceFile):
    stack = [node] if node is not None else []
    while stack:  # a loop, not recursion: a condition of 1000 `||` terms is 1000 deep
        node = stack.pop()
        if node.type == "identifier":
            yield source.node_text(node)
        stack.extend(reversed(node.children))


def _eval_directive(directive: str, cond, source: SourceFile, scope) -> Value:
    if cond is None:
        return None
    return evaluate_directive(directive.lstrip("#").strip(), source.node_text(cond), scope)


# ---- CMake -----------------------------------------------------------------------------
_WORD = re.compile(r"[A-Za-z0-9]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _mentions(text: str, extra: frozenset[str]) -> tuple[bool, bool]:
    """Does `text` name ROCm/HIP or CUDA (as a word part, e.g. USE_ROCM, HIP_FOUND)?"""
    words = {w.upper() for w in _WORD.findall(text)}
    # A project ROCm macro counts as a whole name: `FAST` is not in `FAST_MATH`.
    rocm = bool(words & {"HIP", "ROCM", "AMDGPU", "HIPCC"}) or bool(extra & set(_NAME.findall(text)))
    cuda = bool(words & {"CUDA", "NVCC", "CUDATOOLKIT", "CUDNN"})
    return rocm, cuda


def mentions_cuda(text: str) -> bool:
    """Does `text` name CUDA as a word part (`CUDAToolkit`, `USE_CUDA`, `nvcc`)?"""
    return _mentions(text, frozenset())[1]


def mentions_rocm(text: str) -> bool:
    """Does `text` name ROCm or HIP as a word part (`torch.version.hip`, `IS_HIP_EXTENSION`,
    `use_rocm`; not `chip`)?"""
    return _mentions(text, frozenset())[0]


# Words that turn a platform name into its opposite: `SKIP_CUDA_BUILD`, `NO_HIP`.
_NEGATING_WORDS = frozenset({"SKIP", "NO", "DISABLE", "DISABLED", "WITHOUT"})


def _platform_atom(text: str, extra: frozenset[str]) -> tuple[Value, Value]:
    """(ROCm value, CUDA value) of a platform test that is true when it names its platform."""
    if {w.upper() for w in _WORD.findall(text)} & _NEGATING_WORDS:
        return None, None
    rocm, cuda = _mentions(text, extra)
    if rocm and not cuda:
        return True, False
    # A test that names CUDA (`CUDA_FOUND`, `torch.version.cuda`) says nothing certain about
    # either build (CPU builds, toolkits installed beside ROCm): undecidable in both.
    return None, None


def _build_cmake(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    model = CMakeWalk(source, rocm_macros).run()
    if source.build is not None:
        # The walk of the project's tree read the file with what the lists before it set
        # (`if(GMX_GPU_CUDA)` is false where only a CUDA module sets it): its dead and
        # one-build arms hold too.
        model.ranges.extend(r for r in source.build.list_ranges if r[2] is not Status.LIVE)
    return model


@dataclass(unsafe_hash=True)
class CMakeValue:
    """What a CMake variable may hold: its `;`-separated items, and whether the build surely
    holds exactly that (a plain `set` on a path the build takes) rather than a default the
    user may override (`option`, `CACHE`) or one of several values set on undecidable paths."""

    items: tuple[str, ...]
    definite: bool = True

    @property
    def text(self) -> str:
        return ";".join(self.items)


CMakeEnv = dict  # variable name -> CMakeValue; a name not in it is unknown

# Commands that only read their arguments: every other command may write a variable named
# by a bare argument (`string(REPLACE ... OUT)`, `find_library(VAR ...)`, `math(EXPR V ...)`).
CMAKE_READ_ONLY = frozenset({
    "message", "add_library", "add_executable", "cuda_add_library", "cuda_add_executable",
    "hip_add_library", "hip_add_executable", "target_sources", "target_link_libraries",
    "target_include_directories", "target_compile_definitions", "target_compile_options",
    "target_compile_features", "target_link_options", "target_link_directories",
    "include_directories", "link_directories", "link_libraries", "add_compile_definitions",
    "add_definitions", "add_compile_options", "add_link_options", "add_subdirectory", "install",
    "set_target_properties", "set_source_files_properties", "set_property", "enable_language",
    "project", "cmake_minimum_required", "add_dependencies", "add_custom_target",
    "add_custom_command", "add_test", "find_package", "include", "set", "option", "list",
    "unset", "file", "return",
})
_CMAKE_FALSE = frozenset({"0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND", ""})
_CMAKE_TRUE = frozenset({"1", "ON", "YES", "TRUE", "Y"})
# Values a backend switch compares with: `if(${GPU_BACKEND} STREQUAL "hip")`.
_ROCM_VALUES = frozenset({"HIP", "ROCM", "AMD", "AMDGPU", "HIPCC"})
_CUDA_VALUES = frozenset({"CUDA", "NVIDIA", "NVCC"})
_COMPARISONS = frozenset({"STREQUAL", "EQUAL", "MATCHES"})
_ORDERINGS = frozenset({"LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STRLESS", "STRGREATER",
                        "STRLESS_EQUAL", "STRGREATER_EQUAL", "VERSION_LESS", "VERSION_GREATER",
                        "VERSION_EQUAL", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL"})
# `${NAME}`, and `@NAME@` in a template `configure_file` copies (a package config file's
# `if(@PKG_ENABLE_CUDA@)`): the value NAME holds in the build that configures it.
_VARIABLE_REF = re.compile(r"\$\{([A-Za-z0-9_.+-]+)\}|@([A-Za-z_][A-Za-z0-9_]*)@")
# CMake's own host variables (`if(APPLE)`, `if(WIN32)`): macOS has no ROCm; Windows has it
# only for the Radeon targets of AMD's HIP SDK (`targets.windows_possible`).
_CMAKE_HOSTS_NOT_ON_ROCM = frozenset({"APPLE"})
_CMAKE_WINDOWS = frozenset({"WIN32", "MSVC", "MINGW", "CYGWIN"})


def cmake_truth(text: str) -> bool | None:
    """The truth of a value in `if(<constant>)`, or None for a name that is no constant."""
    word = text.upper()
    if word in _CMAKE_FALSE or word.endswith("-NOTFOUND"):
        return False
    if word in _CMAKE_TRUE or (word.lstrip("-").replace(".", "", 1).isdigit() and float(word) != 0):
        return True
    return None


class CMakeWalk:
    """Runs a CMake list file in order, as a ROCm build and as a CUDA build would, with the
    variables each build has set so far: `set(BUILD_HIP ON)` in the arm a ROCm build takes
    makes `if(BUILD_HIP)` true there, and `if(BUILD_CUDA)` dead. A variable set on an arm a
    build may or may not take becomes unknown; unknown names fall back to what they say
    (`USE_ROCM`). `on_command(command_node, name, rocm_taken, cuda_taken, rocm_env, cuda_env)`
    sees every command with whether each build surely (True), maybe (None) or never (False)
    runs it; the build-file reader uses it to follow `add_subdirectory` and source lists.
    """

    def __init__(self, source: SourceFile, extra: frozenset[str] = frozenset(),
                 rocm_env: CMakeEnv | None = None, cuda_env: CMakeEnv | None = None, on_command=None):
        self.source, self.extra = source, extra
        # The file's CUDA backend switches (`GINKGO_BUILD_CUDA` beside `GINKGO_BUILD_HIP`): the
        # ROCm build turns the HIP one on, never the CUDA one (`macros.backend_selectors`).
        self.selectors = frozenset(backend_selectors(PLATFORM_NAME.findall(source.text)))
        self.rocm_env = dict(rocm_env or {})
        self.cuda_env = dict(cuda_env or {})
        self.on_command = on_command
        self.model = RocmPathModel()
        self.in_function = 0  # inside function()/macro() bodies: their arguments are not known
        self.in_loop = 0  # inside foreach()/while() bodies: what they include is read once per pass
        self.on_loop_variable = None  # `on_loop_variable(name, rocm, cuda)`: a foreach sets `name`
        # (ROCm, CUDA) scopes of the list file whose `add_subdirectory` reads this one, which
        # `set(... PARENT_SCOPE)` writes; None where not known.
        self.parent_envs: tuple[CMakeEnv, CMakeEnv] | None = None
        self.in_block = 0  # inside block() bodies: a scope of their own, whose parent is not known here
        # A build whose configure would fail in an arm does not take it (`_if`): only where the
        # project has a ROCm build (in one that has none, that failure is the port's to fix).
        self.refuses_failing_arms = False
        self.functions: list[str] = []  # the function()/macro() bodies being walked, innermost last
        self.returned: tuple[bool, bool] = (False, False)  # did the last `if` chain surely `return()`, per build
        # Each command that builds HIP, with the CUDA-named variables the `if` arms around it
        # require unset (`if(NOT CUDAToolkit_FOUND AND ...)` around `enable_language(HIP)`);
        # where every such command of a tree requires one, the ROCm build is where it is unset.
        self.hip_sites: list[frozenset[str]] = []
        self.arm_negations: list[set[str]] = []  # those of the arms being walked, outermost first
        self.unrolling = False  # inside a `foreach` run once per item (`_unrolled`): none nested
        self._hip_switches: set[str] | None | bool = False  # (`_hip_path_switches`, made on first need)
        self.unrolled_passes = 0

    def run(self, rocm: Value = True, cuda: Value = True) -> RocmPathModel:
        """Walk the file; `rocm`/`cuda`: whether each build reads it at all (a subdirectory
        added from a CUDA-only arm is never read by a ROCm build)."""
        self._block(self.source.tree.root_node.children, rocm, cuda, self.rocm_env, self.cuda_env)
        return self.model

    # ---- statements ---------------------------------------------------------------------
    def _block(self, nodes, rocm: Value, cuda: Value, rocm_env: CMakeEnv, cuda_env: CMakeEnv) -> tuple[Value, Value]:
        """Run the nodes; returns whether each build goes on after them (False where a
        `message(FATAL_ERROR ...)` surely stops it). A `return()` a build surely reaches
        (`if(NOT CMAKE_CUDA_COMPILER) return() endif()`) ends the block, the rest of its
        function or list file, for that build alone: the run goes on after it."""
        returned = (False, False)
        for index, node in enumerate(nodes):
            kind = node.type
            if returned != (False, False):
                rocm_here, cuda_here = (False if returned[0] else rocm), (False if returned[1] else cuda)
                self._block([node], rocm_here, cuda_here, rocm_env, cuda_env)
                continue
            if kind == "normal_command":
                self._command(node, rocm, cuda, rocm_env, cuda_env)
            elif kind == "if_condition":
                # A guard (`if(NOT BACKEND STREQUAL "cuda") message(FATAL_ERROR ...)`) that
                # surely stops a build leaves the rest of the block to the other one.
                rocm, cuda = self._if(node, rocm, cuda, rocm_env, cuda_env)
                returned = self.returned
                if returned[0] and index + 1 < len(nodes):  # what follows, the ROCm build never runs
                    self.model.ranges.append((nodes[index + 1].start_byte, nodes[-1].end_byte, Status.DEAD))
            elif kind == "foreach_loop" and self._unrolled(node, rocm, cuda, rocm_env, cuda_env):
                pass  # (a loop over a list the lists give: each pass run with its item)
            elif kind in ("foreach_loop", "while_loop", "block_def"):
                body = _first(node, "body")
                if kind == "foreach_loop":
                    # The loop variable holds each item in turn: what it held before is gone.
                    header = _first(node, "foreach_command")
                    args = _first(header, "argument_list") if header is not None else None
                    for variable in _cmake_words(args, self.source)[:1] if args is not None else []:
                        for env in (rocm_env, cuda_env):
                            env.pop(variable, None)
                        if self.on_loop_variable is not None:
                            self.on_loop_variable(variable, rocm, cuda)
                if body is not None:  # runs zero or more times
                    self.in_loop += kind != "block_def"
                    self.in_block += kind == "block_def"
                    self._maybe(body.children, rocm, cuda, rocm_env, cuda_env)
                    self.in_loop -= kind != "block_def"
                    self.in_block -= kind == "block_def"
            elif kind in ("function_def", "macro_def"):
                body = _first(node, "body")
                if body is not None:  # runs where it is called, with the caller's variables
                    self.in_function += 1
                    self.functions.append(_defined_name(node, self.source))
                    self._block(body.children, _and(rocm, None), _and(cuda, None), {}, {})
                    self.functions.pop()
                    self.in_function -= 1
        return rocm, cuda

    def _unrolled(self, node, rocm: Value, cuda: Value, rocm_env: CMakeEnv, cuda_env: CMakeEnv) -> bool:
        """Run a `foreach` over items both builds surely know (`foreach(x a.cu b.cu)`,
        `foreach(x IN LISTS SRCS ITEMS c.cu)` where the lists set SRCS on the path taken) once
        per item, with the variable holding it, as CMake does: `add_executable(${x} ${x}.cu)`
        in the body names each source. Only a plain body (`_plain_loop_body`), not inside
        another loop run so, and up to `_MAX_UNROLLED` passes in a walk; the model keeps the
        ranges every pass agrees on. False (nothing run) where an item is not known or only a
        default the user may change, or the builds hold different ones."""
        header = _first(node, "foreach_command")
        args = _first(header, "argument_list") if header is not None else None
        body = _first(node, "body")
        words = _cmake_words(args, self.source) if args is not None else []
        if body is None or len(words) < 2 or self.in_function or self.unrolling:
            return False
        variable, rest = words[0], words[1:]
        if not _plain_loop_body(body, variable, self.source):
            return False
        sides = []
        for taken, env in ((rocm, rocm_env), (cuda, cuda_env)):
            if _truth(taken) is False:
                continue  # (a build that never runs the loop keeps no variables here)
            found = _loop_items(rest, env)
            if found is None:
                return False  # (items unknown, or a user may change them: the body's names stay unknown)
            sides.append(found)
        if not sides or any(items != sides[0] for items in sides) or not sides[0] \
                or self.unrolled_passes + len(sides[0]) > _MAX_UNROLLED:
            return False
        items = sides[0]
        self.unrolled_passes += len(items)
        if self.on_loop_variable is not None:
            self.on_loop_variable(variable, rocm, cuda)
        before = len(self.model.ranges)
        passes: list[list] = []
        self.in_loop += 1
        self.unrolling = True
        try:
            for item in items:
                for env in (rocm_env, cuda_env):
                    env[variable] = CMakeValue((item,))
                start = len(self.model.ranges)
                self._block(body.children, rocm, cuda, rocm_env, cuda_env)
                passes.append(self.model.ranges[start:])
        finally:
            self.in_loop -= 1
            self.unrolling = False
            for env in (rocm_env, cuda_env):
                env.pop(variable, None)
        agreed = set(passes[0]).intersection(*map(set, passes[1:]))
        del self.model.ranges[before:]
        self.model.ranges.extend(r for r in passes[0] if r in agreed)
        return True

    def _maybe(self, nodes, rocm: Value, cuda: Value, rocm_env: CMakeEnv, cuda_env: CMakeEnv) -> None:
        self._arm(nodes, _and(rocm, None), _and(cuda, None), rocm_env, cuda_env)

    def _arm(self, nodes, rocm: Value, cuda: Value, rocm_env: CMakeEnv, cuda_env: CMakeEnv) -> tuple[bool, bool]:
        """Nodes each build runs surely (True), maybe (None) or never (False). Returns whether
        each build that may run them surely stops in them (its configure fails there)."""
        envs = []
        for taken, env in ((rocm, rocm_env), (cuda, cuda_env)):
            envs.append(env if _truth(taken) is True else dict(env))
        # (what the arm writes above its scope, kept to take back where a build refuses it)
        parents = tuple(dict(env) for env in self.parent_envs) if self.parent_envs is not None else None
        after = self._block(nodes, rocm, cuda, envs[0], envs[1])
        stopped = tuple(self.refuses_failing_arms and _truth(taken) is None and after_taken is False
                        for taken, after_taken in zip((rocm, cuda), after))
        for side, (taken, env, arm_env) in enumerate(((rocm, rocm_env, envs[0]), (cuda, cuda_env, envs[1]))):
            if stopped[side]:  # the build that would stop there goes on without it
                if parents is not None:
                    self.parent_envs[side].clear()
                    self.parent_envs[side].update(parents[side])
            elif _truth(taken) is None:
                _merge_maybe(env, arm_env)
        return stopped

    def _if(self, chain, rocm: Value, cuda: Value, rocm_env: CMakeEnv, cuda_env: CMakeEnv) -> tuple[Value, Value]:
        """Run an `if` chain; returns whether each build goes on after it (False where it
        surely takes an arm that stops with `message(FATAL_ERROR ...)`)."""
        arms: list[tuple[Arm, object]] = []
        conditions: list[list[str]] = []  # each arm's condition words (`[]`: `else`)
        pending = None
        for child in chain.children:
            if child.type in ("if_command", "elseif_command", "else_command"):
                words = []
                if child.type == "else_command":
                    pending = (True, True)
                else:
                    args = child.child_by_field_name("arguments") or _first(child, "argument_list")
                    words = _cmake_words(args, self.source) if args is not None else []
                    pending = _eval_cmake(words, self.extra, rocm_env, cuda_env, self.selectors)
            elif child.type == "body" and pending is not None:
                arms.append((Arm(child.start_byte, child.end_byte, *pending), child))
                conditions.append(words)
                pending = None
        # An arm the ROCm build may take that requires the CUDA toolkit would stop its
        # configure run, which has none: it does not take it (whatever stands before that
        # command in the arm, too).
        arms = [(replace(arm, rocm=False), body)
                if _truth(arm.rocm) is None and self._needs_the_cuda_toolkit(body, words, rocm_env)
                else (arm, body) for (arm, body), words in zip(arms, conditions)]
        # Which arm each build runs, as `add_chain` reads the chain.
        rocm_before: Value = False
        cuda_before: Value = False
        rocm_takes, cuda_takes = [], []
        for arm, _ in arms:
            rocm_takes.append(_and(_not(rocm_before), arm.rocm))
            cuda_takes.append(_and(_not(cuda_before), arm.cuda))
            rocm_before, cuda_before = _or(rocm_before, arm.rocm), _or(cuda_before, arm.cuda)
        ports = [i for i, (r, c) in enumerate(zip(rocm_takes, cuda_takes)) if _truth(r) is not False and _truth(c) is False]
        if ports:  # an undecidable arm before the port is its CUDA alternative
            rocm_takes = [False if i < ports[0] and _truth(r) is None else r for i, r in enumerate(rocm_takes)]
        # The ROCm build is the one that builds HIP: an undecidable arm that enables HIP
        # (`if(WITH_GPU)` around `enable_language(HIP)`) is the one it takes, and no other.
        hip = [i for i, ((_, body), r) in enumerate(zip(arms, rocm_takes))
               if _truth(r) is None and self._enables_hip(body)]
        if len(hip) == 1:  # (two such arms: either may be the ROCm build's)
            hip = hip[0]
            rocm_takes = [True if i == hip else False if _truth(r) is None else r for i, r in enumerate(rocm_takes)]
            # The model reads the chain so too: the other undecidable arms are the CUDA build's.
            arms = [(replace(arm, rocm=False) if i != hip and _truth(r) is False and _truth(arm.rocm) is None
                     else arm, body) for i, ((arm, body), r) in enumerate(zip(arms, rocm_takes))]
        refused = []  # (arm, build): arms a build that took them would stop in
        for i, ((_, body), r, c) in enumerate(zip(arms, rocm_takes, cuda_takes)):
            self.arm_negations.append(_negated_cuda_names(conditions[i]))
            try:
                stopped = self._arm(body.children, _and(rocm, r), _and(cuda, c), rocm_env, cuda_env)
            finally:
                self.arm_negations.pop()
            refused.extend((i, side) for side, (stops, taken) in enumerate(zip(stopped, (r, c)))
                           if stops and _truth(taken) is None)
        # A build whose configure would fail in an arm does not take it (`if(WITH_NVSHMEM)`
        # around `if(NOT USE_CUDA) message(FATAL_ERROR ...)`): there the arm is dead, and a
        # switch that alone makes its condition is off for the rest of the lists.
        for i, side in refused:
            arm, body = arms[i]
            arms[i] = (replace(arm, rocm=False) if side == 0 else replace(arm, cuda=False), body)
            switch = _switch_of(conditions[i])
            if switch is not None and (i == 0 or all(_truth(t) is False for t in (rocm_takes, cuda_takes)[side][:i])):
                (rocm_env, cuda_env)[side][switch] = CMakeValue(("OFF",))
        self.model.add_chain([arm for arm, _ in arms])
        taken = [i for i, r in enumerate(rocm_takes) if _truth(_and(rocm, r)) is True]
        if len(taken) == 1:
            # A switch's variables (`set(BUILD_CPU ON)` in the CPU backend's arm) that the arm
            # the ROCm build takes leaves alone are unset there: the project sets them, the user
            # does not (an `option` or a cache entry the user may give is another matter).
            for i, (_, body) in enumerate(arms):
                if i != taken[0]:
                    for name in self._plain_sets(body):
                        rocm_env.setdefault(name, CMakeValue(()))
        stops = [(r, c) for (_, body), r, c in zip(arms, rocm_takes, cuda_takes) if self._stops(body)]
        rocm_stops = any(_truth(r) is True for r, _ in stops)
        cuda_stops = any(_truth(c) is True for _, c in stops)
        # (not an arm only the ROCm build takes: a test that names HIP, `if(TARGET hip_kernels)`,
        # `if(ARG_HIP_SOURCES)`, is only guessed true there, and a guessed return would end
        # the rest for it)
        returns = [(r, c) for (_, body), r, c in zip(arms, rocm_takes, cuda_takes) if self._stops(body, "return")]
        self.returned = (any(_truth(r) is True and _truth(c) is not False for r, c in returns),
                         any(_truth(c) is True and _truth(r) is not False for r, c in returns))
        return (False if rocm_stops else rocm), (False if cuda_stops else cuda)

    def _name_and_words(self, node) -> tuple[str, list[str]]:
        """A command's name (lower case, "" if none) and its argument words."""
        name_node, args = _first(node, "identifier"), _first(node, "argument_list")
        return (self.source.node_text(name_node).lower() if name_node is not None else "",
                _cmake_words(args, self.source) if args is not None else [])

    def _plain_sets(self, body) -> set[str]:
        """The variables an arm sets with a plain `set(NAME value)` (not a cache entry),
        nested `if`s included."""
        found, pending = set(), list(body.children)
        while pending:
            node = pending.pop()
            if node.type == "normal_command":
                name, words = self._name_and_words(node)
                if name == "set" and words and "CACHE" not in words[1:] and "PARENT_SCOPE" not in words[1:]:
                    found.add(words[0])
            elif node.type not in ("function_def", "macro_def"):
                pending.extend(node.children)
        return found

    def _stops(self, body, how: str = "message") -> bool:
        """Does the arm end the configure run (`message(FATAL_ERROR ...)` among its commands),
        or, `how="return"`, its function or list file (`return()`)?"""
        for node in body.children:
            if node.type == "normal_command":
                name, words = self._name_and_words(node)
                if how == "return" and name == "return":
                    return True
                if how == "message" and name == "message" and words[:1] == ["FATAL_ERROR"]:
                    return True
        return False

    def _needs_the_cuda_toolkit(self, body, condition: list[str], rocm_env: CMakeEnv) -> bool:
        """Does an arm of a project that builds for ROCm require the CUDA toolkit, which a
        ROCm build's configure run has none of: a command of its own (not of a nested arm) is
        `enable_language(CUDA)`, `find_package(CUDAToolkit REQUIRED)` or `find_package(CUDA
        REQUIRED)`? Only in a list file whose whole ROCm path is in view (a command building
        HIP, none in a function or macro body), and only for an arm whose condition and the
        conditions around it name none of the switches that path stands under (`if(APP_GPU)`
        where `if(APP_GPU)` also leads to `enable_language(HIP)`: the ROCm build turns that
        switch on, so what requires CUDA there is the port's to fix) nor an option on by
        default (a ROCm build with the defaults takes the arm)."""
        if not self.refuses_failing_arms:
            return False
        commands = (self._name_and_words(node) for node in body.children if node.type == "normal_command")
        if not any((name == "enable_language" and "CUDA" in words) or (
                name == "find_package" and words[:1] in (["CUDAToolkit"], ["CUDA"]) and "REQUIRED" in words[1:])
                for name, words in commands):
            return False
        hip_switches = self._hip_path_switches()
        if hip_switches is None:
            return False
        names = _condition_names(condition) | self._enclosing_condition_names(body)
        if names & hip_switches:
            return False
        # (an option or cache entry the user may change, on unless changed: `option(X ... ON)`)
        return not any(name in rocm_env and not rocm_env[name].definite and cmake_truth(rocm_env[name].text)
                       for name in names)

    def _enclosing_condition_names(self, node, negated: bool = True) -> set[str]:
        """The names the `if`/`elseif` conditions around `node` test."""
        found: set[str] = set()
        for ancestor in queries.ancestors(node):
            test = ancestor.prev_named_sibling if ancestor.type == "body" else None
            if test is not None and test.type in ("if_command", "elseif_command"):
                test_args = test.child_by_field_name("arguments") or _first(test, "argument_list")
                if test_args is not None:
                    found |= _condition_names(_cmake_words(test_args, self.source), negated=negated)
        return found

    def _hip_path_switches(self) -> set[str] | None:
        """The names the `if`/`elseif` conditions around this file's commands that build HIP
        test (not CUDA-named ones they require false, `NOT CUDAToolkit_FOUND`), or None where
        no command of the file builds HIP or one stands in a function or macro body."""
        if self._hip_switches is not False:
            return self._hip_switches
        found, any_site = set(), False
        for node in self._hip_building_commands(self.source.tree.root_node, into_functions=True):
            if any(a.type in ("function_def", "macro_def") for a in queries.ancestors(node)):
                self._hip_switches = None  # called from elsewhere: the switches around it are out of view
                return None
            any_site = True
            found |= self._enclosing_condition_names(node, negated=False)
        self._hip_switches = found if any_site else None
        return self._hip_switches

    def _enables_hip(self, body) -> bool:
        """Does a command of `body` (nested `if`s and loops included, not function bodies)
        build HIP (`builds_hip`)?"""
        return any(True for _ in self._hip_building_commands(body, into_functions=False))

    def _hip_building_commands(self, root, into_functions: bool):
        """The commands under `root` that build HIP (`builds_hip`), in function and macro
        bodies too where `into_functions`."""
        pending = list(root.children)
        while pending:
            node = pending.pop()
            if node.type == "normal_command":
                if builds_hip(*self._name_and_words(node)):
                    yield node
            elif into_functions or node.type not in ("function_def", "macro_def"):
                pending.extend(node.children)

    def _command(self, node, rocm: Value, cuda: Value, rocm_env: CMakeEnv, cuda_env: CMakeEnv) -> None:
        name_node = _first(node, "identifier")
        name = self.source.node_text(name_node).lower() if name_node is not None else ""
        args = _first(node, "argument_list")
        arguments = [a for a in args.children if a.type == "argument"] if args is not None else []
        if self.on_command is not None:
            self.on_command(node, name, arguments, rocm, cuda, rocm_env, cuda_env)
        if _truth(rocm) is not False and builds_hip(name, _cmake_words(args, self.source) if args is not None else []):
            self.hip_sites.append(frozenset().union(*self.arm_negations))
        unmet = self._dependencies_unmet(arguments, rocm_env, cuda_env) if name == "cmake_dependent_option" else None
        for side, (taken, env) in enumerate(((rocm, rocm_env), (cuda, cuda_env))):
            if unmet is not None and unmet[0][side] and _truth(taken) is True:
                env[unmet[1]] = CMakeValue((unmet[2],), definite=True)  # forced: the user cannot turn it on
            elif _truth(taken) is not False:
                parent = self.parent_envs[side] if self.parent_envs is not None and not (
                    self.in_function or self.in_block) else None
                _assign(name, arguments, self.source, env, parent, _truth(taken) is True)

    def _dependencies_unmet(self, arguments, rocm_env: CMakeEnv, cuda_env: CMakeEnv):
        """`cmake_dependent_option(<name> "<help>" <default> "<depends>" <force>)`: CMake
        sets <name> to <force> where a condition of <depends> (`;`-separated `if()`
        conditions) is false. ((ROCm build unmet, CUDA build unmet), name, force) with each
        build's verdict surely known (`ENABLE_CUDA` beside `ENABLE_HIP` is off in the ROCm
        build), else None (too few arguments)."""
        texts = [argument_text(a, self.source) for a in arguments]
        if len(texts) < 5:
            return None
        conditions = [c.split() for c in texts[3][0].split(";") if c.strip()]
        verdicts = [_eval_cmake(words, self.extra, rocm_env, cuda_env, self.selectors) for words in conditions]
        unmet = tuple(any(verdict[side] is False for verdict in verdicts) for side in (0, 1))
        return unmet, texts[0][0], texts[4][0]


_MAX_UNROLLED = 256  # passes of `foreach` bodies run one by one in a walk; past it, read once, undecided


_CMAKE_NAME_WORDS = re.compile(r"[\w.+-]+")


def _plain_loop_body(body, variable: str, source: SourceFile) -> bool:
    """Does the loop body only name things with its variable: no `break()`, `continue()` or
    `return()`, and no `if`/`elseif`/`while` that tests it (an item that decides an arm)?"""
    pending = list(body.children)
    while pending:
        node = pending.pop()
        if node.type == "normal_command":
            name_node = _first(node, "identifier")
            if name_node is not None and source.node_text(name_node).lower() in ("break", "continue", "return"):
                return False
        elif node.type in ("if_command", "elseif_command", "while_command"):
            if variable in _CMAKE_NAME_WORDS.findall(source.node_text(node)):  # `x`, `${x}`
                return False
        pending.extend(node.children)
    return True


def _loop_items(words: list[str], env: CMakeEnv) -> list[str] | None:
    """The items a `foreach(<var> <words>)` goes through where the build surely holds exactly
    those (not a default the user may override, nor values of undecided arms): plain items,
    or `IN LISTS <names> ITEMS <items>`. None otherwise, or for another form (`RANGE`,
    `ZIP_LISTS`)."""
    items: list[str] = []
    if words[0] in ("RANGE", "ZIP_LISTS"):
        return None
    mode = None if words[0] == "IN" else "ITEMS"
    for word in words[1:] if words[0] == "IN" else words:
        if word in ("LISTS", "ITEMS") and words[0] == "IN":
            mode = word
        elif mode == "LISTS":
            value = env.get(word)
            if value is None or not value.definite:
                return None
            items.extend(i for i in value.items if i)
        elif mode == "ITEMS":
            expanded, surely = _definite_expansion(word.strip('"'), env)
            if not surely:
                return None
            items.extend(expanded)
        else:
            return None
    return items


def _switch_of(words: list[str]) -> str | None:
    """The variable an `if()` condition tests alone (`if(X)`), else None. (`if(${X})` tests
    the variable X names, which holds a name, not a truth value.)"""
    return words[0] if len(words) == 1 and _NAME.fullmatch(words[0]) else None


def _defined_name(definition, source: SourceFile) -> str:
    """The name `function(NAME ...)` or `macro(NAME ...)` defines, lower case ("" if none)."""
    opening = next((c for c in definition.children if c.type in ("function_command", "macro_command")), None)
    args = _first(opening, "argument_list") if opening is not None else None
    words = _cmake_words(args, source) if args is not None else []
    return words[0].lower() if words else ""


def _merge_maybe(env: CMakeEnv, arm_env: CMakeEnv) -> None:
    """After an arm a build may or may not take: a changed variable may hold either value."""
    for name in set(env) | set(arm_env):
        before, after = env.get(name), arm_env.get(name)
        if before == after:
            continue
        items = tuple(dict.fromkeys((before.items if before else ()) + (after.items if after else ())))
        env[name] = CMakeValue(items, definite=False)


def argument_text(arg, source: SourceFile) -> tuple[str, bool]:
    """(value without quotes, quoted?) of an argument node."""
    inner = arg.named_children[0] if arg.named_children else arg
    text = source.node_text(inner)
    if inner.type == "quoted_argument":
        return text[1:-1], True
    if inner.type == "bracket_argument":
        return text, True
    return text, False


def variable_references(text: str) -> list[str]:
    """The variables `${NAME}` in an argument's text names (not those inside a nested one)."""
    return [braced or templated for braced, templated in _VARIABLE_REF.findall(text)]


def name_shape(text: str) -> tuple[str, ...] | None:
    """The literal parts of a name written with variables (`${PKG}_LIBRARIES` -> `("",
    "_LIBRARIES")`; a nested `${${P}_DIR}` is one variable), or None where a reference is
    left open. Read char by char: no pattern backtracks over a run of `${`."""
    parts, current, at = [], [], 0
    while at < len(text):
        if text.startswith("${", at):
            depth, at = 1, at + 2
            while at < len(text) and depth:
                depth += 1 if text.startswith("${", at) else -1 if text[at] == "}" else 0
                at += 2 if text.startswith("${", at) else 1
            if depth:
                return None
            parts.append("".join(current))
            current = []
        else:
            current.append(text[at])
            at += 1
    return (*parts, "".join(current))


def has_shape(name: str, shape: tuple[str, ...]) -> bool:
    """Does `name` fit a shape of `name_shape` (any text where a variable stood)?"""
    first, *middle, last = shape
    if not name.startswith(first) or not name.endswith(last) or len(name) < len(first) + len(last):
        return False
    at, end = len(first), len(name) - len(last)
    for part in middle:
        found = name.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def cmake_expand(text: str, env: CMakeEnv) -> tuple[list[str], bool]:
    """The `;`-separated items of an argument with each `${VAR}` replaced by what `env` holds
    (innermost first, so `${${P}_SOURCES}` works), and whether every reference was known."""
    complete = True
    for _ in range(16):  # nested references; a self-reference cannot loop for ever
        m = _VARIABLE_REF.search(text)
        if m is None:
            break
        value = env.get(m.group(1) or m.group(2))
        complete = complete and value is not None
        text = text[:m.start()] + (value.text if value is not None else "") + text[m.end():]
    else:
        complete = False
    return [item for item in text.split(";") if item], complete and "${" not in text


_VARIABLE_ALONE = re.compile(r"\$\{[A-Za-z0-9_]+\}")


def _top_level_split(text: str, separator: str, limit: int = -1) -> list[str]:
    """`text` split at `separator` outside generator expressions (`$<...>`)."""
    parts, start, i = [], 0, 0
    while i < len(text):
        if text.startswith("$<", i):
            close = _matching_close(text, i)
            i = len(text) if close < 0 else close + 1  # (an unclosed one runs to the end)
            continue
        if text[i] == separator and (limit < 0 or len(parts) < limit):
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _matching_close(text: str, start: int) -> int:
    """The index of the `>` that closes the `$<` at `start`, or -1."""
    depth, i = 0, start
    while i < len(text):
        if text.startswith("$<", i):
            depth += 1
            i += 2
            continue
        if text[i] == ">":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def conditional_items(text: str, extra: frozenset[str], rocm_env: CMakeEnv, cuda_env: CMakeEnv,
                      selectors: frozenset[str] = frozenset(), depth: int = 0) -> list[tuple[str, Value, Value]]:
    """The `;`-separated items of an argument (not yet expanded), each with whether the ROCm
    and the CUDA build surely (True), maybe (None) or never (False) keep it: the items of
    `$<cond:a;b>` where `cond` holds (`$<BOOL:${USE_ROCM}>`, `$<NOT:...>`, `$<AND:...>`,
    `$<OR:...>`, `0`, `1`, each variable read as `if()` reads it), those of
    `$<BUILD_INTERFACE:...>` always; any other generator expression is undecided."""
    out: list[tuple[str, Value, Value]] = []
    for item in _top_level_split(text, ";"):
        if not item:
            continue
        if not _one_generator_expression(item):
            out.append((item, True, True))
            continue
        parts = _top_level_split(item[2:-1], ":", 1)
        head = parts[0]
        if len(parts) == 2 and depth < 8 and (head.startswith("$<") or head in ("0", "1", "BUILD_INTERFACE")
                                                or _VARIABLE_ALONE.fullmatch(head)):
            rocm, cuda = (True, True) if head == "BUILD_INTERFACE" else \
                _genex_condition(head, extra, rocm_env, cuda_env, selectors, depth)
            for inner, r, c in conditional_items(parts[1], extra, rocm_env, cuda_env, selectors, depth + 1):
                out.append((inner, _and(rocm, r), _and(cuda, c)))
        else:  # `$<TARGET_PROPERTY:...>`, `$<CONFIG:Debug>` alone: a value the build computes
            out.append((item, None, None))
    return out


def _one_generator_expression(item: str) -> bool:
    """Is `item` one `$<...>` from its first character to its last?"""
    return item.startswith("$<") and _matching_close(item, 0) == len(item) - 1


def _genex_condition(text: str, extra: frozenset[str], rocm_env: CMakeEnv, cuda_env: CMakeEnv,
                     selectors: frozenset[str], depth: int) -> tuple[Value, Value]:
    """(ROCm, CUDA) value of a generator expression's condition."""
    if text in ("0", "1"):
        return (text == "1",) * 2
    if depth >= 8:
        return None, None
    if text.startswith("$<") and text.endswith(">") and ":" in text:
        head, _, body = text[2:-1].partition(":")
        if head == "BOOL":
            if "$<" in body or not body:
                return None, None
            if "${" not in body:  # a literal string: true unless CMake's false constants say otherwise
                literal = cmake_truth(body)
                return (True, True) if literal is None else (literal, literal)
            if not _VARIABLE_ALONE.fullmatch(body):
                return None, None  # (`${P}_CUDA`: a computed name)
            return _eval_cmake([body], extra, rocm_env, cuda_env, selectors)
        if head == "NOT":
            r, c = _genex_condition(body, extra, rocm_env, cuda_env, selectors, depth + 1)
            return _not(r), _not(c)
        if head in ("AND", "OR"):
            combine = _and if head == "AND" else _or
            values = [_genex_condition(part, extra, rocm_env, cuda_env, selectors, depth + 1)
                      for part in _top_level_split(body, ",")]
            r, c = values[0]
            for vr, vc in values[1:]:
                r, c = combine(r, vr), combine(c, vc)
            return r, c
        return None, None
    if _VARIABLE_ALONE.fullmatch(text):  # `$<${USE_ROCM}:...>`: the variable holds 0 or 1
        return _eval_cmake([text], extra, rocm_env, cuda_env, selectors)
    return None, None


def _definite_expansion(text: str, env: CMakeEnv) -> tuple[list[str], bool]:
    """`cmake_expand`, and whether the build surely holds that: every variable named is known
    and definite (`set(A ${B})` copies B's option default: a default, not a decision)."""
    items, complete = cmake_expand(text, env)
    return items, complete and all(env[n].definite for n in variable_references(text) if n in env)


def _assign(name: str, arguments, source: SourceFile, env: CMakeEnv, parent: CMakeEnv | None = None,
            surely: bool = True) -> None:
    """What `set`, `option`, `list(...)`, `unset` and other commands do to the variables.
    `parent`: the scope `set(... PARENT_SCOPE)` writes (the list file that added this one's
    folder), None where unknown (a function's caller); `surely`: the command surely runs."""
    texts = [argument_text(a, source) for a in arguments]
    words = [t for t, _ in texts]
    if name == "set" and words:
        var, values = words[0], []
        cached = forced = to_parent = False
        known = True
        for text, quoted in texts[1:]:
            if not quoted and text in ("CACHE", "PARENT_SCOPE"):
                cached = text == "CACHE"
                forced = "FORCE" in words
                to_parent = text == "PARENT_SCOPE"
                break
            items, complete = _definite_expansion(text, env)
            values.extend(items)
            known = known and complete
        if to_parent:  # the adding list file's scope, not this one
            if parent is not None:
                value = CMakeValue(tuple(values), definite=known)
                old = parent.get(var)
                parent[var] = value if surely else CMakeValue(
                    tuple(dict.fromkeys((old.items if old else ()) + value.items)), definite=False)
            return
        if cached and not forced:
            if var not in env or not env[var].definite:  # a default the user may override
                env[var] = CMakeValue(tuple(values), definite=False)
            return
        env[var] = CMakeValue(tuple(values), definite=known)
    elif name == "option" and words:
        if words[0] not in env or not env[words[0]].definite:
            default = words[2] if len(words) > 2 else "OFF"
            env[words[0]] = CMakeValue((default,), definite=False)
    elif name == "unset" and words:
        env[words[0]] = CMakeValue(())
    elif name == "list" and len(words) >= 2 and words[0] in ("APPEND", "PREPEND", "REMOVE_ITEM"):
        old = env.get(words[1])
        if old is None:
            old = CMakeValue(())  # an unset list is empty
        expanded = [_definite_expansion(text, env) for text in words[2:]]
        items = [i for found, _ in expanded for i in found]
        known = old.definite and all(complete for _, complete in expanded)
        if words[0] == "REMOVE_ITEM":
            env[words[1]] = CMakeValue(tuple(i for i in old.items if i not in items), known)
        else:
            new = items + list(old.items) if words[0] == "PREPEND" else list(old.items) + items
            env[words[1]] = CMakeValue(tuple(new), known)
    elif "hipif" in name and len(words) >= 2 and not texts[-1][1]:
        # hipify's CMake helpers (`get_hipified_list(<sources> <out>)`) list the hipified
        # copies of the sources they are given: the same files, as the ROCm build compiles them.
        env[words[-1]] = CMakeValue(tuple(i for text in words[:-1] for i in cmake_expand(text, env)[0]), definite=False)
    elif name not in CMAKE_READ_ONLY or name in ("list", "file"):
        # A command that may write a variable it names: what it holds is no longer known.
        for text, quoted in texts:
            if not quoted and text in env:
                env[text] = CMakeValue(env[text].items, definite=False)


def names_hip(name: str, words: list[str]) -> bool:
    """Does this CMake command name HIP as what it builds: `find_package(hip)`,
    `enable_language(HIP)`, `project(x ... HIP)`? (`name` in lower case, `words` its arguments.)"""
    if name == "find_package":
        return bool(words) and words[0] in ("hip", "HIP")
    if name == "enable_language":
        return "HIP" in words
    return name == "project" and any(words[i] == "HIP" for i in project_languages(words))


HIP_AMD_PLATFORM_MACROS = frozenset({"__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__"})


def requires_hip(name: str, words: list[str]) -> bool:
    """`names_hip`, and the build cannot go on without HIP: an optional `find_package(hip
    QUIET)` only probes for it."""
    return names_hip(name, words) and (name != "find_package" or "REQUIRED" in words[1:])


# What only a ROCm build's arm does: choose gfx targets, link HIP's or ROCm's own CMake
# targets, compile `.hip` sources, define the ROCm build's macros.
_HIP_TARGET_VARIABLES = frozenset({"CMAKE_HIP_ARCHITECTURES", "HIP_ARCHITECTURES", "GPU_TARGETS", "AMDGPU_TARGETS"})
_HIP_LINK_TARGET = re.compile(r"hip::(?:host|device|amdhip64|hiprtc)|roc::\w+")
_SOURCE_LISTS = frozenset({"add_executable", "add_library", "target_sources", "hip_add_library",
                           "hip_add_executable"})


def builds_hip(name: str, words: list[str]) -> bool:
    """Does this CMake command show its arm to be the ROCm build's: it requires HIP
    (`requires_hip`), sets gfx targets (`set(CMAKE_HIP_ARCHITECTURES ...)`), links `hip::device`
    or a `roc::` target, compiles a `.hip` source, or defines `USE_ROCM` or another macro only
    a ROCm build defines? (A CUDA build does none of these.)"""
    if requires_hip(name, words):
        return True
    if name == "set":
        return bool(words) and words[0] in _HIP_TARGET_VARIABLES
    if name in ("target_link_libraries", "link_libraries"):
        return any(_HIP_LINK_TARGET.fullmatch(w) for w in words)
    if name in _SOURCE_LISTS:
        return any(w.lower().endswith(".hip") for w in words[1:])
    if name in ("add_definitions", "add_compile_definitions"):
        return any(w.removeprefix("-D").split("=", 1)[0] in ROCM_DEFINED for w in words)
    return False


def project_languages(words: list[str]) -> list[int]:
    """Indices of the language words of `project(name [VERSION v] ... [LANGUAGES l...])`."""
    keywords = {"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"}
    if "LANGUAGES" in words:
        start = words.index("LANGUAGES") + 1
        end = next((i for i in range(start, len(words)) if words[i] in keywords), len(words))
        return list(range(start, end))
    end = next((i for i in range(1, len(words)) if words[i] in keywords), len(words))
    return list(range(1, end))  # `project(name CXX CUDA)`


def _first(node, kind: str):
    return next((c for c in node.children if c.type == kind), None)


def _cmake_words(args, source: SourceFile) -> list[str]:
    return [source.node_text(a) for a in args.children if a.type == "argument"]


def _eval_cmake(words: list[str], extra: frozenset[str], rocm_env: CMakeEnv | None = None,
                cuda_env: CMakeEnv | None = None, selectors: frozenset[str] = frozenset()) -> tuple[Value, Value]:
    """Evaluate `if()` arguments: NOT, AND, OR, parentheses; anything else is an atom, read
    with the variables each build holds (`rocm_env`, `cuda_env`) where they are known."""
    pos = 0

    def parse_or():
        nonlocal pos
        left = parse_and()
        while pos < len(words) and words[pos] == "OR":
            pos += 1
            right = parse_and()
            left = (_or(left[0], right[0]), _or(left[1], right[1]))
        return left

    def parse_and():
        nonlocal pos
        left = parse_not()
        while pos < len(words) and words[pos] == "AND":
            pos += 1
            right = parse_not()
            left = (_and(left[0], right[0]), _and(left[1], right[1]))
        return left

    @bounded((None, None))
    def parse_not():
        nonlocal pos
        if pos < len(words) and words[pos] == "NOT":
            pos += 1
            inner = parse_not()
            return (_not(inner[0]), _not(inner[1]))
        return parse_atom()

    @bounded((None, None))
    def parse_atom():
        nonlocal pos
        if pos >= len(words):
            return (None, None)
        if words[pos] == "(":
            pos += 1
            inner = parse_or()
            if pos < len(words) and words[pos] == ")":
                pos += 1
            return inner
        # An atom runs until the next logical operator (`A STREQUAL "HIP"` is one atom).
        start = pos
        while pos < len(words) and words[pos] not in ("AND", "OR", ")"):
            pos += 1
        return _cmake_atom(words[start:pos], extra, rocm_env or {}, cuda_env or {}, selectors)

    return parse_or()


# The words of an `if()` condition that are no variable: operators and boolean constants.
_CONDITION_KEYWORDS = _COMPARISONS | _ORDERINGS | frozenset({
    "AND", "OR", "NOT", "DEFINED", "COMMAND", "POLICY", "TARGET", "TEST", "EXISTS", "IS_DIRECTORY",
    "IS_ABSOLUTE", "IS_SYMLINK", "IS_NEWER_THAN", "IN_LIST", "PATH_EQUAL", "ON", "OFF", "TRUE", "FALSE", "YES", "NO"})


def _condition_names(words: list[str], negated: bool = True) -> set[str]:
    """The variable names an `if()` condition tests (`X`, `${X}`, `"${X}"`); `negated=False`
    leaves out the CUDA-named ones directly under a `NOT`."""
    names = set()
    for i, word in enumerate(words):
        if len(word) > 2 and word[0] == word[-1] == '"':
            word = word[1:-1]  # `if("${APP_GPU}")`
        name = _referenced_name(word) or word
        if name in _CONDITION_KEYWORDS or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        if not negated and i > 0 and words[i - 1] == "NOT" and mentions_cuda(name):
            continue  # `NOT CUDAToolkit_FOUND`: what the HIP path requires absent
        names.add(name)
    return names


def _negated_cuda_names(words: list[str]) -> set[str]:
    """The names an `if` condition that is a plain conjunction (no `OR`, no parentheses)
    requires unset and that name CUDA: `CUDAToolkit_FOUND` in `NOT CUDAToolkit_FOUND AND
    backend MATCHES "hip"`."""
    if "OR" in words or any(w in ("(", ")") for w in words):
        return set()
    conjuncts, current = [], []
    for word in words + ["AND"]:
        if word == "AND":
            conjuncts.append(current)
            current = []
        else:
            current.append(word)
    return {c[1] for c in conjuncts if len(c) == 2 and c[0] == "NOT" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c[1])
            and mentions_cuda(c[1])}


def _cmake_atom(atom: list[str], extra: frozenset[str], rocm_env: CMakeEnv, cuda_env: CMakeEnv,
                selectors: frozenset[str] = frozenset()) -> tuple[Value, Value]:
    if len(atom) == 3 and atom[1] in _ORDERINGS:
        # `HIP_VERSION VERSION_LESS "6.1"`: only a ROCm build has it, but either answer there.
        rocm, cuda = _platform_atom(" ".join(atom), extra)
        return (None if rocm is True else rocm), cuda
    if len(atom) == 3 and atom[1] in _COMPARISONS:
        selector = _backend_selector(atom)
        if selector is not None:
            return selector
        values = tuple(_compare(atom, env) for env in (rocm_env, cuda_env))
        if values != (None, None):
            return values
    elif len(atom) == 1:
        values = tuple(_variable_truth(atom[0], env) for env in (rocm_env, cuda_env))
        if values[0] is not None and values[1] is not None:
            return values
        name = _referenced_name(atom[0]) or atom[0]
        if name in _CMAKE_HOSTS_NOT_ON_ROCM or (name in _CMAKE_WINDOWS and not targets.windows_possible()):
            return False, values[1]  # `if(WIN32)`, `if(APPLE)`: a host ROCm does not build on
        fallback = (False, True) if name in selectors else _platform_atom(atom[0], extra)
        return (values[0] if values[0] is not None else fallback[0], values[1] if values[1] is not None else fallback[1])
    return _platform_atom(" ".join(atom), extra)


def _side(word: str, env: CMakeEnv) -> str | None:
    """A comparison operand's value where it is surely known: a literal, or a variable the
    build has set. A bare name is a variable when set (CMake's rule), else the name itself;
    only platform words and numbers are taken as literals when nothing is known of them."""
    if word.startswith('"') and word.endswith('"') and len(word) >= 2:
        text = word[1:-1]
        if "${" not in text:
            return text
        items, complete = cmake_expand(text, {k: v for k, v in env.items() if v.definite})
        return ";".join(items) if complete else None
    name = word[2:-1] if word.startswith("${") and word.endswith("}") else word
    value = env.get(name)
    if value is not None:
        return value.text if value.definite else None
    if word == name and (word.upper() in _ROCM_VALUES | _CUDA_VALUES or word.isdigit()):
        return word
    return None


def _compare(atom: list[str], env: CMakeEnv) -> Value:
    left, right = _side(atom[0], env), _side(atom[2], env)
    if left is None or right is None or atom[1] == "MATCHES":
        return None
    if atom[1] == "EQUAL":
        return left.strip() == right.strip() if left.strip().isdigit() and right.strip().isdigit() else None
    return left == right


def _backend_selector(atom: list[str]) -> tuple[Value, Value] | None:
    """`${GPU_BACKEND} STREQUAL "hip"`, `HIP_PLATFORM STREQUAL "nvidia"`, `X MATCHES "^(hip|rocm)$"`:
    a switch compared with a platform's name, true in that platform's build only. None when
    the comparison is not of that shape."""
    subject, value = atom[0], atom[2].strip('"')
    if subject.strip('"').upper() in _ROCM_VALUES | _CUDA_VALUES:
        subject, value = atom[2], atom[0].strip('"')
    if "${" not in subject and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", subject):
        return None
    names = [w.upper() for w in re.split(r"[|()^$]+", value) if w] if atom[1] == "MATCHES" else [value.upper()]
    # An unquoted constant named for its platform (`BUILD_VARIANT_ROCM`, `GPU_TARGET_CUDA`).
    names = [n.rsplit("_", 1)[-1] if "_" in n and not atom[2].startswith('"') else n for n in names]
    if names and all(n in _ROCM_VALUES for n in names):
        return True, False
    if names and all(n in _CUDA_VALUES for n in names):
        return False, True
    return None


def _referenced_name(word: str) -> str | None:
    """NAME where a word is one reference to it, `${NAME}` or a template's `@NAME@` (also
    quoted, `"@NAME@"`: configure_file writes the value inside the quotes)."""
    if len(word) > 2 and word[0] == word[-1] == '"' and word[1] == "@":
        word = word[1:-1]
    m = _VARIABLE_REF.fullmatch(word)
    return (m.group(1) or m.group(2)) if m is not None else None


def _variable_truth(word: str, env: CMakeEnv) -> Value:
    """`if(VAR)` / `if(${VAR})` with what the build holds, None when not surely known."""
    referenced = _referenced_name(word)
    if word.startswith('"') and referenced is None:
        return None
    expanded = referenced is not None
    value = env.get(referenced if expanded else word)
    if value is None or not value.definite:
        return None
    truth = cmake_truth(value.text)
    if truth is None:
        return None if expanded else True  # `if(VAR)`: set to a non-false value
    return truth


# ---- Python (setup.py) -----------------------------------------------------------------
def _build_python(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    model = RocmPathModel()
    try:
        tree = source.python_ast
    except SyntaxError:
        return model
    elif_heads: set[int] = set()
    resolve = PythonNames(tree)
    for node in module_nodes(tree):
        if isinstance(node, ast.If) and id(node) not in elif_heads:
            arms = []
            current = node
            every_arm_exits = True
            while True:
                value = _eval_python(current.test, rocm_macros, resolve)
                arms.append(Arm(*_stmts_range(source, current.body), *value))
                # `if CUDA_HOME is None: raise ...` fails the ROCm build there: what follows is
                # no CUDA-only code, the raise is the hazard.
                every_arm_exits = every_arm_exits and isinstance(current.body[-1], _EXITS) and not (
                    isinstance(current.body[-1], ast.Raise) and _tests_cuda_presence(current.test, resolve))
                if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
                    current = current.orelse[0]
                    elif_heads.add(id(current))
                    continue
                if current.orelse:
                    arms.append(Arm(*_stmts_range(source, current.orelse), True, True))
                elif every_arm_exits and (following := _statements_following(tree, node)):
                    # `if torch.version.hip: return rocm_flags` makes the rest of the block
                    # its `else` arm.
                    arms.append(Arm(*_stmts_range(source, following), True, True))
                break
            model.add_chain(arms)
        elif isinstance(node, ast.IfExp):
            value = _eval_python(node.test, rocm_macros, resolve)
            model.add_chain([
                Arm(*source.python_range(node.body), *value),
                Arm(*source.python_range(node.orelse), True, True),
            ])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
            runs = _runs_under_skip_decorators(node, rocm_macros, resolve)
            if runs != (True, True):
                model.add_chain([Arm(*_stmts_range(source, node.body), *runs)])
    # A builder class whose `is_compatible()` is False on ROCm (DeepSpeed's op builders): the
    # ROCm build never calls its other methods. (After the `if`s: its own tests read them.)
    for node in module_nodes(tree):
        if isinstance(node, ast.ClassDef):
            compatible = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "is_compatible"),
                              None)
            if compatible is not None and returns_false_on_rocm(
                    compatible, resolve, lambda s: model.status(source.python_range(s)[0]) is Status.DEAD):
                for member in node.body:
                    if member is not compatible:
                        model.add_chain([Arm(*source.python_range(member), False, None)])
    return model


# A test skipped on a condition (`@pytest.mark.skipif(cond)`, `@unittest.skipIf(cond)`) or run
# only under one (`@unittest.skipUnless(cond)`).
_SKIP_IF = frozenset({"skipif", "skipIf"})
_SKIP_UNLESS = frozenset({"skipUnless"})


def _runs_under_skip_decorators(node, rocm_macros: frozenset[str], resolve: "PythonNames") -> tuple[Value, Value]:
    """Whether each build runs a test its decorators may skip: `@pytest.mark.skipif(
    cupy.cuda.runtime.is_hip, ...)` is never run on ROCm. (True, True) without such a decorator."""
    rocm: Value = True
    cuda: Value = True
    for decorator in node.decorator_list:
        if not isinstance(decorator, ast.Call) or not decorator.args:
            continue
        name = decorator.func.attr if isinstance(decorator.func, ast.Attribute) else \
            decorator.func.id if isinstance(decorator.func, ast.Name) else ""
        if name not in _SKIP_IF and name not in _SKIP_UNLESS:
            continue
        r, c = _eval_python(decorator.args[0], rocm_macros, resolve)
        if name in _SKIP_IF:
            r, c = _not(r), _not(c)
        rocm, cuda = _and(rocm, r), _and(cuda, c)
    return rocm, cuda


def functions_called_only_off_rocm(source: SourceFile, status: Callable[[int], Status]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each top-level function of a Python or CMake file, or free
    function of a C-family one (`_cpp_functions`), that the file calls or names only where a
    ROCm build never goes: `None if hip_version else nvcc_version()`, a helper called only
    under `if CUDA_HOME is not None:`, a CMake function called only in `if(X_BUILD_CUDA)` arms,
    a device helper called only under `#if __CUDA_ARCH__ >= 800`, or only from such a function
    (as far as that goes).
    On ROCm its body never runs. A function the file never names outside its own body is not
    one (another module, an entry point or a test may call it); nor is one named where ROCm
    goes; nor a Python method, which a framework calls by a name (`run`) that other objects
    share. Whether other files name it is the caller's question (`engine`): this file alone
    cannot say. `status`: the ROCm-path status at an offset of the file (its model's)."""
    found = {CMAKE: _cmake_functions, PYTHON: _python_functions, CUDA: _cpp_functions}[source.language](source)
    if found is None:
        return []
    functions, references = found
    off_rocm: list[tuple[int, int, str]] = []
    changed = True
    while changed:  # a helper called only from helpers that are: until nothing more is found
        changed = False
        for start, end, name in functions:
            if (start, end, name) in off_rocm or not references.get(name):
                continue
            if all(status(at) is Status.DEAD or any(s <= at < e for s, e, _ in off_rocm)
                   for at in references[name]):
                off_rocm.append((start, end, name))
                changed = True
    return off_rocm


def _python_functions(source: SourceFile) -> tuple[list[tuple[int, int, str]], dict[str, list[int]]] | None:
    """A Python file's module-level functions (start, end, name) and the offsets where the file
    names each outside its own body."""
    try:
        tree = source.python_ast
    except (SyntaxError, RecursionError):
        return None
    functions = [(*source.python_range(n), n.name) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return None
    spans = {name: (start, end) for start, end, name in functions}
    references: dict[str, list[int]] = {}
    for node in module_nodes(tree):
        name = node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias) else None
        if name in spans and hasattr(node, "lineno"):
            at = source.python_range(node)[0]
            if not spans[name][0] <= at < spans[name][1]:  # its own recursion is no call from outside
                references.setdefault(name, []).append(at)
    return functions, references


_CPP_FUNCTIONS = "(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function"
_TU_LOCAL = ("static", "inline", "__forceinline__")


def _cpp_functions(source: SourceFile) -> tuple[list[tuple[int, int, str]], dict[str, list[int]]] | None:
    """A C-family file's free functions that only files including it can call (every function
    of a header; a source's `static` or `inline` ones), and the offsets where the file names
    each outside the function's definitions: in code, or in a macro's body (where the macro
    is used is not followed: the `#define` counts). Comments and strings name nothing."""
    header = posixpath.splitext(source.path)[1].lower() in HEADER_SUFFIXES
    spans: dict[str, list[tuple[int, int]]] = {}
    for match in queries.matches(CUDA, _CPP_FUNCTIONS, source.tree.root_node):
        function, name = match["function"][0], source.node_text(match["name"][0])
        if _platform_name(name):
            continue  # an overload of the toolkit's own (`__shfl_up_sync(unsigned, at::Half, ...)`)
        if header or any(source.node_text(c) in _TU_LOCAL for c in function.children
                         if c.type in ("storage_class_specifier", "type_qualifier")):
            spans.setdefault(name, []).append((function.start_byte, function.end_byte))
    if not spans:
        return None
    from portlint.checks.cpp import token_nodes  # (checks.cpp imports this module)

    defines = [d for d in read_directives(source.data) if d.kind == "define"]
    references: dict[str, list[int]] = {}
    for name, own in spans.items():
        # A name in code (not in comments or strings), or in a macro's body (at its `#define`).
        found = [n.start_byte for n in token_nodes(source, name.encode()) if source.node_text(n) == name]
        found += [d.offset for d in defines if name in _NAME.findall(d.text)]
        references[name] = [at for at in found if not any(s <= at < e for s, e in own)]
    functions = [(start, end, name) for name, own in spans.items() for start, end in own]
    return functions, references


def _platform_name(name: str) -> bool:
    """A name the compiler or the toolkit defines too: reserved (`__shfl_down_sync`,
    `_Float16`), or a CUDA API name hipify knows (`atomicAdd`, `cudaMemcpy`). Code anywhere,
    the toolkit's headers included, may call an overload of it by that name."""
    return name.startswith("__") or (name[:1] == "_" and name[1:2].isupper()) or hipify.documented(name)


def _cmake_functions(source: SourceFile) -> tuple[list[tuple[int, int, str]], dict[str, list[int]]] | None:
    """A CMake file's top-level `function()`/`macro()` definitions (start, end, lower-case
    name) and the offsets of the file's calls of each outside its own body (command names
    are case-insensitive)."""
    definitions = [n for n in source.tree.root_node.children if n.type in ("function_def", "macro_def")]
    functions = [(n.start_byte, n.end_byte, _defined_name(n, source)) for n in definitions]
    functions = [f for f in functions if f[2]]
    if not functions:
        return None
    spans = {name: (start, end) for start, end, name in functions}
    references: dict[str, list[int]] = {}
    stack = list(source.tree.root_node.children)
    while stack:
        node = stack.pop()
        if node.type == "normal_command":
            name = node.children[0].type == "identifier" and source.node_text(node.children[0]).lower()
            if name in spans and not spans[name][0] <= node.start_byte < spans[name][1]:
                references.setdefault(name, []).append(node.start_byte)
        stack.extend(node.children)
    return functions, references


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _statements_following(tree: ast.AST, statement: ast.stmt) -> list[ast.stmt]:
    """The statements after `statement` in its block."""
    parent = module_parents(tree).get(id(statement))
    for _, block in ast.iter_fields(parent) if parent is not None else ():
        if isinstance(block, list):
            for i, stmt in enumerate(block):
                if stmt is statement:
                    return block[i + 1:]
    return []


def _stmts_range(source: SourceFile, stmts: list[ast.stmt]) -> tuple[int, int]:
    # To the end of the last statement's line, so its trailing comment belongs to the arm.
    end = source.python_range(stmts[-1])[1]
    line = source.line_of(end)
    return source.python_range(stmts[0])[0], source.line_start(line) + len(source.line_bytes(line))


def python_condition(test: ast.expr, rocm_macros: frozenset[str] = frozenset(),
                     names: "PythonNames | None" = None) -> tuple[Value, Value]:
    """(ROCm value, CUDA value) of a Python test, as the model reads `if` tests (with `names`,
    `PythonNames(tree)`, also through the file's helpers). For rules that look at conditions
    the model does not cut into arms (`not IS_HIP_EXTENSION and ...`)."""
    return _eval_python(test, rocm_macros, names)


@bounded((None, None))
def _eval_python(test: ast.expr, extra: frozenset[str], resolve: "PythonNames | None" = None,
                 depth: int = 0) -> tuple[Value, Value]:
    if depth > 8:  # helpers calling helpers: give up rather than recurse without end
        return None, None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        r, c = _eval_python(test.operand, extra, resolve, depth + 1)
        return _not(r), _not(c)
    if isinstance(test, ast.IfExp):
        # `True if <test> else False`: the test, or its negation; `[...] if <test> else None`:
        # the arm each build takes, where it is decided.
        chosen = _eval_python(test.test, extra, resolve, depth + 1)
        then, otherwise = (_arm_truth(arm) for arm in (test.body, test.orelse))
        return tuple(then[i] if chosen[i] is True else otherwise[i] if chosen[i] is False
                     else then[i] if then[i] == otherwise[i] else _arm_test(chosen[i], then[i], otherwise[i])
                     for i in (0, 1))
    if isinstance(test, ast.BoolOp):
        values = [_eval_python(v, extra, resolve, depth + 1) for v in test.values]
        combine = _and if isinstance(test.op, ast.And) else _or
        r, c = values[0]
        for vr, vc in values[1:]:
            r, c = combine(r, vr), combine(c, vc)
        return r, c
    if (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))):
        r, c = _eval_python(test.left, extra, resolve, depth + 1)
        return (r, c) if isinstance(test.ops[0], ast.IsNot) else (_not(r), _not(c))
    if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "getattr"
            and len(test.args) >= 2 and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str)):
        # `getattr(torch.version, "hip", None)` reads as `torch.version.hip`
        attribute = ast.Attribute(value=test.args[0], attr=test.args[1].value, ctx=ast.Load())
        return _eval_python(ast.copy_location(attribute, test), extra, resolve, depth + 1)
    if _is_cuda_presence(test):
        # `CUDA_HOME`, `CUDA_VERSION`, `os.getenv("CUDA_HOME")`: torch finds no CUDA root on a
        # ROCm build host (nvcc absent), so these are None there.
        return False, True
    host = _host_platform_test(test)
    if host is not None:
        return host, None
    try:
        text = ast.unparse(test)
    except RecursionError:  # `ast.unparse` recurses: a test some hundred operators deep is unknown
        return None, None
    if re.search(r"\btorch\.version\.cuda\b", text) and not _mentions(text, extra)[0]:
        # None on ROCm builds of torch; a CPU-only torch cannot build a CUDAExtension at all.
        return False, True
    value = _platform_atom(text, extra)
    if value == (None, None) and isinstance(test, ast.Attribute):
        # `cupy.cuda.runtime.is_hip`: the module path is a namespace, the attribute the test.
        value = _platform_atom(test.attr, extra)
    if value == (None, None) and resolve is not None:
        # The project's own helpers and flags: `def _is_hip(): return torch.version.hip is not
        # None`, `use_cuda = not IS_ROCM` (each defined once in the file).
        definition = resolve.definition(test)
        if definition is not None:
            return _eval_python(definition, extra, resolve, depth + 1)
    return value


# A build script's tests of the host it runs on: `sys.platform == "win32"`, `os.name == "nt"`,
# `platform.system() == "Windows"`, torch's `IS_WINDOWS`, macOS's `"darwin"`.
_HOST_SUBJECTS = frozenset({"sys.platform", "os.name", "platform.system()"})
_WINDOWS_NAMES = frozenset({"win32", "nt", "windows", "cygwin", "msys"})
_MACOS_NAMES = frozenset({"darwin"})


def _host_platform_test(test: ast.expr) -> bool | None:
    """The ROCm build's answer to a test of the host platform where it is certain (False for
    "is it macOS?", and for "is it Windows?" unless a target runs there), else None."""
    try:
        return _host_platform_answer(test)
    except RecursionError:  # `ast.unparse` of an expression some hundred levels deep
        return None


def _host_platform_answer(test: ast.expr) -> bool | None:
    names = _MACOS_NAMES | (frozenset() if targets.windows_possible() else _WINDOWS_NAMES)
    if isinstance(test, (ast.Name, ast.Attribute)):
        name = test.id if isinstance(test, ast.Name) else test.attr
        return False if name == "IS_WINDOWS" and "nt" in names else (False if name == "IS_MACOS" else None)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and len(test.args) == 1 and isinstance(test.args[0], ast.Constant) and isinstance(test.args[0].value, str):
        subject, prefix = ast.unparse(test.func.value), test.args[0].value.lower()
        return False if subject == "sys.platform" and prefix and any(n.startswith(prefix) for n in names) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) \
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str) \
            and ast.unparse(test.left) in _HOST_SUBJECTS and test.comparators[0].value.lower() in names:
        return isinstance(test.ops[0], ast.NotEq)
    return None


# Names a build script holds the CUDA toolkit's root or version in.
_CUDA_PRESENCE_NAMES = frozenset({"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_VERSION", "CUDA_TOOLKIT_ROOT_DIR"})


def _is_cuda_presence(node: ast.expr) -> bool:
    """`CUDA_HOME`, `cpp_extension.CUDA_HOME`, `os.getenv("CUDA_HOME")`, `os.environ.get("CUDA_PATH")`."""
    if isinstance(node, ast.Name):
        return node.id in _CUDA_PRESENCE_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in _CUDA_PRESENCE_NAMES
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = ast.unparse(node.func)
        return func in ("os.getenv", "os.environ.get", "getenv", "environ.get") and node.args[0].value in _CUDA_PRESENCE_NAMES
    return False


def _tests_cuda_presence(test: ast.expr, resolve: "PythonNames", depth: int = 0) -> bool:
    """A test decided by whether the CUDA toolkit is found (`cuda_home is None`, `not CUDA_HOME`)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        test = test.left
    if _is_cuda_presence(test):
        return True
    definition = resolve.definition(test) if depth < 8 else None
    return definition is not None and _tests_cuda_presence(definition, resolve, depth + 1)


class PythonNames:
    """A build script's helpers without parameters (`def _is_hip():`, methods taking only
    `self`) and names assigned once: what a test calling or naming them stands for."""

    def __init__(self, tree: ast.AST):
        self._tree = tree
        self._functions: dict[str, list[ast.AST]] = {}
        # name -> [(value, the `if` whose body holds the assignment, or None)]
        self._assigned: dict[str, list[tuple[ast.expr | None, ast.If | None]]] = {}
        nodes = module_nodes(tree)
        guards = {id(child): node for node in nodes if isinstance(node, ast.If) for child in node.body}
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self._assigned.setdefault(target.id, []).append((node.value, guards.get(id(node))))
                    else:  # `a, b = f()`, `x[k] = v`: a value the model does not read
                        for name in (n for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)):
                            self._assigned.setdefault(name.id, []).append((None, None))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
                self._assigned.setdefault(node.target.id, []).append((None, None))  # more than one value

    # What only a flag set under a test after its default asks (`_flag`), made on that first
    # question: most build scripts never ask it, and these walks cost more than the rest.
    @functools.cached_property
    def _places(self) -> dict[int, tuple[int, int]]:
        """id(statement) -> (id of its statement list, its index there)."""
        return {id(statement): (id(block), i) for node in module_nodes(self._tree)
                for field in ("body", "orelse", "finalbody")
                for block in [getattr(node, field, None)] if isinstance(block, list)
                for i, statement in enumerate(block)}

    @functools.cached_property
    def _statements(self) -> dict[int, ast.AST]:
        """id(value) -> its assignment."""
        return {id(node.value): node for node in module_nodes(self._tree) if isinstance(node, ast.Assign)}

    @functools.cached_property
    def _bound_otherwise(self) -> set[str]:
        """Names bound some other way somewhere in the file (a parameter, a loop or `with`
        target, an import): another variable of the same name may be read where one is."""
        bound: set[str] = set()
        for node in module_nodes(self._tree):
            if isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                bound.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                bound.update(n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                bound.update(node.names)
        return bound

    def _flag(self, name: str) -> ast.expr | None:
        """What a name the file assigns stands for: its one value; or, for a flag given a
        default first (`is_rocm = False`), the one test that sets it: `is_rocm = <test>`
        (in a `try`, say), or `is_rocm = True` in the body of `if <test>:`."""
        values = self._assigned.get(name, [])
        if len(values) == 1:
            return values[0][0]
        set_by = [(value, guard) for value, guard in values if not _is_default(value)]
        if len(set_by) != 1 or len(set_by) == len(values) or set_by[0][0] is None:
            return None
        value, guard = set_by[0]
        if _is_bool(value, True):
            return guard.test if guard is not None else None
        if guard is None:
            return value
        # `sources = None` ... `if use_cutlass: sources = [...]`: the value where the test
        # holds, the default where it does not. Only where the default is set first and the
        # `if` follows it in the same statement list (no outer test, loop or `elif` around
        # the set), and no other variable of the name is read somewhere (a parameter).
        defaults = [v for v, _ in values if _is_default(v)]
        if len(defaults) != 1 or name in self._bound_otherwise:
            return None
        default_place = self._places.get(id(self._statements.get(id(defaults[0]))))
        guard_place = self._places.get(id(guard))
        if default_place is None or guard_place is None or default_place[0] != guard_place[0] \
                or default_place[1] >= guard_place[1]:
            return None  # (an `elif` is no statement of the default's list: it stays unknown)
        return ast.IfExp(test=guard.test, body=value, orelse=defaults[0])

    def definition(self, test: ast.expr) -> ast.expr | None:
        """The expression `test` stands for, or None."""
        if isinstance(test, ast.Name):
            return self._flag(test.id)
        if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
            return None
        func = test.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        functions = self._functions.get(name or "", [])
        if len(functions) != 1:
            return None
        function = functions[0]
        params = [*function.args.posonlyargs, *function.args.args]
        if len(params) > (1 if isinstance(func, ast.Attribute) else 0) or function.args.vararg or function.args.kwarg:
            return None
        returns = [n.value for n in own_nodes(function) if isinstance(n, ast.Return)]
        if not returns or any(r is None for r in returns):
            return None
        if _all_same(returns):
            return returns[0]
        body = function.body
        # `if torch.version.hip: return True` / `return False`
        if (len(body) == 2 and isinstance(body[0], ast.If) and not body[0].orelse and len(body[0].body) == 1
                and isinstance(body[0].body[0], ast.Return) and isinstance(body[1], ast.Return)):
            then, after = body[0].body[0].value, body[1].value
            if _is_bool(then, True) and _is_bool(after, False):
                return body[0].test
            if _is_bool(then, False) and _is_bool(after, True):
                return ast.UnaryOp(op=ast.Not(), operand=body[0].test)
        return None


def _arm_truth(node: ast.expr) -> tuple[Value, Value]:
    """(ROCm, CUDA) truth of an arm of a conditional expression: a constant's or a literal
    container's own, else unknown."""
    if isinstance(node, ast.Constant):
        return bool(node.value), bool(node.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return bool(node.elts), bool(node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return bool(node.keys), bool(node.keys)
    return None, None  # a value (`os.environ.get("PYTORCH_ROCM_ARCH")`), not a platform test


def _arm_test(test: Value, then: Value, otherwise: Value) -> Value:
    """An undecided test's conditional: `True if t else False` is `t` (`False if ...`, its
    negation); any other pair of arms is undecided."""
    if then is True and otherwise is False:
        return test
    if then is False and otherwise is True:
        return _not(test)
    return None


def _is_default(node: ast.expr | None) -> bool:
    """`False` or `None`: what a flag holds until a test sets it."""
    return isinstance(node, ast.Constant) and (node.value is None or node.value is False)


def _is_bool(node: ast.expr | None, value: bool) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def returns_false_on_rocm(function: ast.AST, names: "PythonNames", is_dead) -> bool:
    """Does the method (a builder's `is_compatible()`) surely return False on ROCm? Its body,
    in order, reaches a `return False` a ROCm build surely takes (`if self.is_rocm_pytorch():
    return False`, a `return not <ROCm test>`) before any `return` of something else;
    `is_dead(statement)`: the file's model says a ROCm build skips it."""
    for statement in function.body:
        if is_dead(statement):
            continue
        if isinstance(statement, ast.If):
            rocm, _ = python_condition(statement.test, names=names)
            arm = statement.body if rocm is True else statement.orelse if rocm is False else None
            if arm and isinstance(arm[-1], ast.Return) and falsy_constant(arm[-1].value):
                return True
        if isinstance(statement, ast.Return):
            return falsy_constant(statement.value) or python_condition(statement.value, names=names)[0] is False
        if any(isinstance(node, ast.Return) and not falsy_constant(node.value)
               for node in own_nodes(ast.Module(body=[statement], type_ignores=[]))):
            return False  # it may return True before
    return False


def falsy_constant(node: ast.expr | None) -> bool:
    """`return`, `return None`, `return False`, `return 0`: nothing true."""
    return node is None or (isinstance(node, ast.Constant) and not node.value)


def own_nodes(function: ast.AST):
    """The nodes of a function's body, not those of functions nested in it."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node)
                     if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))


def _all_same(exprs: list[ast.expr]) -> bool:
    first = ast.dump(exprs[0])
    return all(ast.dump(e) == first for e in exprs[1:])


# ---- Makefiles -------------------------------------------------------------------------
_MAKE_ARM_HEADS = ("elsif_directive", "else_directive")
# Values an `ifeq` compares a switch with: `ifeq ($(USE_ROCM),1)`, `ifeq ($(GPU),hip)`.
_MAKE_TRUE = frozenset({"1", "Y", "YES", "TRUE", "ON"})
_MAKE_FALSE = frozenset({"0", "N", "NO", "FALSE", "OFF"})
_MAKE_ROCM_VALUES = frozenset({"HIP", "ROCM", "AMD", "AMDGPU", "HIPCC"})
_MAKE_CUDA_VALUES = frozenset({"CUDA", "NVCC", "NVIDIA"})


# Words only one platform's build passes: an arm that holds them is that platform's build.
_MAKE_ROCM_WORDS = frozenset({"-lamdhip64", "-D__HIP_PLATFORM_AMD__"})
_MAKE_CUDA_WORDS = frozenset({"-lcudart", "-lcudart_static"})
# A file without any of these has no arm that builds HIP (`_make_backend_arms`).
MAKE_HIP_BUILD = re.compile(rb"(?i)hipcc|amdhip64|__HIP_PLATFORM_AMD__")


def _build_make(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    """`ifeq`/`ifneq`/`ifdef`/`ifndef` ... `else if...` ... `else` ... `endif` chains."""
    if b"if" not in source.data:
        return RocmPathModel()
    selectors = _make_platform_selectors(source)
    chains = _make_chains(source)
    model, arms = _make_model(chains, source, rocm_macros, selectors, {})
    decided = _make_backend_arms(source, chains, arms, model)
    return _make_model(chains, source, rocm_macros, selectors, decided)[0] if decided else model


def _make_chains(source: SourceFile) -> list[list[tuple[int, int, object]]]:
    """Each chain's arms: (body start, body end, condition node; None for `else`)."""
    chains = []
    for chain in queries.nodes(MAKE, "(conditional) @c", source.tree.root_node, "c"):
        head = chain.child_by_field_name("condition")
        if head is None:
            continue
        alternatives = [c for c in chain.children if c.type in _MAKE_ARM_HEADS]
        endif = next((c for c in chain.children if c.type == "endif"), None)
        head_end = alternatives[0].start_byte if alternatives else endif.start_byte if endif else chain.end_byte
        arms = [(head.end_byte, head_end, head)]
        for alt in alternatives:
            if alt.type == "else_directive":
                arms.append((alt.children[0].end_byte, alt.end_byte, None))
                continue
            cond = alt.child_by_field_name("condition")
            if cond is None:
                break
            arms.append((cond.end_byte, alt.end_byte, cond))
        chains.append(arms)
    return chains


def _make_model(chains, source: SourceFile, extra: frozenset[str], selectors: frozenset[str],
                decided: dict) -> tuple[RocmPathModel, list[list[Arm]]]:
    """The model of the chains, each condition evaluated, or as `decided` says
    (`_make_backend_arms`); and each chain's arms."""
    model, all_arms = RocmPathModel(), []
    for chain in chains:
        arms = []
        for start, end, cond in chain:
            value = (True, True) if cond is None else _decided_make_test(cond, source, decided)
            if value is None:
                value = _eval_make_directive(cond, source, extra, selectors)
            arms.append(Arm(start, end, *value))
        model.add_chain(arms)
        all_arms.append(arms)
    return model, all_arms


def _make_backend_arms(source: SourceFile, chains, arms_of_chains: list[list[Arm]],
                       model: RocmPathModel) -> dict:
    """The ROCm build is the one that compiles with hipcc: in a chain no condition decides, an
    arm that sets the compiler of the recipes that compile sources to hipcc (or links
    `-lamdhip64`, defines `__HIP_PLATFORM_AMD__`), beside an arm that sets it to nvcc (or
    links `-lcudart`), is the arm the ROCm build takes, and that one the CUDA build's (as
    `CMakeWalk._if` reads an arm that enables HIP). Returns what this says of the chains'
    conditions: by position, and by test for the file's other chains that make the same one
    (`ifdef HIPCONFIG` around `-lhipfft` or `-lcufft`). A Makefile with no hipcc arm gets
    nothing."""
    if not MAKE_HIP_BUILD.search(source.data):
        return {}
    open_chains = []
    for chain, arms in zip(chains, arms_of_chains):
        outcomes = chain_outcomes([(arm.rocm, arm.cuda) for arm in arms])
        statuses = [status for _, _, status in outcomes]
        # (a chain with a PORT arm, or one the ROCm build surely takes, is decided already)
        if None in statuses and "port" not in statuses and all(_truth(r) is not True for r, _, _ in outcomes):
            open_chains.append((chain, arms, outcomes))
    if not open_chains:
        return {}
    # Imported here: both modules import this one. The Makefile is read with the model so far
    # (every undecided arm live), so `compile_commands` sees each arm's compiler.
    from portlint.build_model.build_files import compile_commands
    from portlint.checks import make_ast
    makefile = make_ast.Makefile(source, model)
    compiles = [command for _, command in compile_commands(makefile, explicit=True)]
    compilers = {name for command in compiles for name in makefile.program_variables(command.program)}
    starts = [a.node.start_byte for a in makefile.assignments]  # (sorted)
    decided: dict = {}
    for chain, arms, outcomes in open_chains:
        sides = [_make_arm_platforms(makefile, compilers, compiles, starts, start, end)
                 if _truth(on_rocm) is None and _truth(on_cuda) is None else (False, False)
                 for (start, end, _), (on_rocm, on_cuda, _) in zip(chain, outcomes)]
        hip = [i for i, (rocm, cuda) in enumerate(sides) if rocm and not cuda]
        nvcc = [i for i, (rocm, cuda) in enumerate(sides) if cuda and not rocm]
        if len(hip) != 1 or not nvcc:  # (two hipcc arms: either may be the ROCm build's)
            continue
        rocm_arm, cuda_arm = hip[0], nvcc[0]
        for i, ((_, _, cond), arm) in enumerate(zip(chain, arms)):
            if cond is None:
                continue
            # Each build takes its arm: the conditions before it are false there, its own true.
            value = (True if i == rocm_arm else False if i < rocm_arm else arm.rocm,
                     True if i == cuda_arm else False if i < cuda_arm else arm.cuda)
            decided[("at", cond.start_byte)] = value
            test = _make_test(cond, source)
            if test is not None and _make_test_holds(test[0], chains, source, makefile):
                decided[test[0]] = (_not(value[0]), _not(value[1])) if test[1] else value
    return decided


def _make_arm_platforms(makefile, compilers: set[str], compiles, starts: list[int],
                        start: int, end: int) -> tuple[bool, bool]:
    """(builds HIP, builds CUDA): what the assignments and compile commands in `start:end`
    (nested arms included) set the recipes' compiler to, link or define."""
    rocm = cuda = False
    for a in makefile.assignments[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)]:
        if a.name in compilers and a.words:
            programs = makefile.programs(a.words[0])
            rocm, cuda = rocm or "hipcc" in programs, cuda or "nvcc" in programs
        texts = {w.text.split("=", 1)[0] for w in a.words}
        rocm, cuda = rocm or bool(texts & _MAKE_ROCM_WORDS), cuda or bool(texts & _MAKE_CUDA_WORDS)
    for command in compiles:
        if start <= command.line.start_byte < end:
            programs = makefile.command_programs(command)
            rocm, cuda = rocm or "hipcc" in programs, cuda or "nvcc" in programs
    return rocm, cuda


def _make_test(cond, source: SourceFile) -> tuple[tuple, bool] | None:
    """A condition as (what it tests, whether it is that test negated): `ifdef X` and
    `ifndef X` test one thing, as do `ifeq (A,B)` and `ifneq (B,A)`."""
    if cond.type in ("ifdef_directive", "ifndef_directive"):
        name = cond.child_by_field_name("variable")
        if name is None:
            return None
        return ("defined", source.node_text(name).strip()), cond.type == "ifndef_directive"
    if cond.type in ("ifeq_directive", "ifneq_directive"):
        sides = tuple(sorted(_make_arg(cond.child_by_field_name(f), source) for f in ("arg0", "arg1")))
        return ("equal", sides), cond.type == "ifneq_directive"
    return None


def _decided_make_test(cond, source: SourceFile, decided: dict) -> tuple[Value, Value] | None:
    if not decided:
        return None
    if ("at", cond.start_byte) in decided:
        return decided[("at", cond.start_byte)]
    test = _make_test(cond, source)
    if test is None or test[0] not in decided:
        return None
    value = decided[test[0]]
    return (_not(value[0]), _not(value[1])) if test[1] else value


def _make_test_holds(key: tuple, chains, source: SourceFile, makefile) -> bool:
    """Does the test have one answer in the whole file: nothing sets a variable it reads, and
    no `include` comes, after the first chain that makes it?"""
    from portlint.checks.cpp import named_descendants  # (both import this module)
    from portlint.checks.make_ast import reference_name
    first = min((cond for chain in chains for _, _, cond in chain
                 if cond is not None and (_make_test(cond, source) or (None,))[0] == key), key=lambda c: c.start_byte)
    names = {key[1]} if key[0] == "defined" else {
        name for node in named_descendants(first) if (name := reference_name(source, node)) is not None}
    return (not any(a.node.start_byte > first.start_byte for name in names for a in makefile.by_name.get(name, ()))
            and not any(word.start > first.start_byte for word in makefile.includes))


def _make_platform_selectors(source: SourceFile) -> frozenset[str]:
    """The expansions this Makefile compares with a ROCm value somewhere (`ifeq ($(BACKEND),hip)`):
    a variable that picks the platform, so its CUDA value (`ifeq ($(BACKEND),cuda)`) is the
    CUDA build's."""
    found = set()
    for node in queries.nodes(MAKE, "[(ifeq_directive) (ifneq_directive)] @d", source.tree.root_node, "d"):
        sides = _make_subject_and_value(*(_make_arg(node.child_by_field_name(f), source) for f in ("arg0", "arg1")))
        if sides is not None and sides[1].upper() in _MAKE_ROCM_VALUES:
            found.add(sides[0])
    return frozenset(found)


def _make_subject_and_value(left: str, right: str) -> tuple[str, str] | None:
    """(the expansion, the constant) an `ifeq` compares; None for two of a kind."""
    if ("$" in left) == ("$" in right):
        return None
    return (left, right) if "$" in left else (right, left)


def _eval_make_directive(node, source: SourceFile, extra: frozenset[str],
                         selectors: frozenset[str] = frozenset()) -> tuple[Value, Value]:
    if node.type in ("ifdef_directive", "ifndef_directive"):
        name = node.child_by_field_name("variable")
        value = _platform_atom(source.node_text(name), extra) if name is not None else (None, None)
        return value if node.type == "ifdef_directive" else (_not(value[0]), _not(value[1]))
    if node.type in ("ifeq_directive", "ifneq_directive"):
        left, right = (_make_arg(node.child_by_field_name(f), source) for f in ("arg0", "arg1"))
        return _eval_make_comparison(left, right, node.type == "ifeq_directive", extra, selectors)
    return None, None


def _make_arg(node, source: SourceFile) -> str:
    if node is None:
        return ""  # `ifeq (,$(X))`: the grammar leaves an empty argument out
    text = source.node_text(node).strip()
    return text[1:-1] if node.type == "string" and len(text) >= 2 else text


def _eval_make_comparison(left: str, right: str, equal: bool, extra: frozenset[str],
                          selectors: frozenset[str] = frozenset()) -> tuple[Value, Value]:
    """`ifeq (SUBJECT,VALUE)`: a platform switch, a tool probe or a platform name compared
    with a constant. Two constants, or two expansions, are undecidable."""
    sides = _make_subject_and_value(left, right)
    if sides is None:
        return None, None
    subject, value = sides
    named = _platform_atom(subject, extra)  # true when the subject names its platform and is set
    word = value.upper()
    if not value or word in _MAKE_FALSE:
        result = (_not(named[0]), _not(named[1]))  # `ifeq ($(USE_ROCM),)`, `ifeq ($(shell which hipcc),)`
    elif word in _MAKE_TRUE:
        result = named
    elif word in _MAKE_ROCM_VALUES:
        result = (True, False)  # `ifeq ($(GPU_BACKEND),hip)`
    elif word in _MAKE_CUDA_VALUES and _mentions(subject, extra)[0]:
        result = (False, True)  # `ifeq ($(HIP_PLATFORM),nvidia)`: HIP on the CUDA toolchain
    elif word in _MAKE_CUDA_VALUES and subject in selectors:
        result = (False, True)  # `ifeq ($(BACKEND),cuda)` beside an `ifeq ($(BACKEND),hip)` arm
    else:
        result = _platform_atom(f"{subject} {value}", extra)
    return result if equal else (_not(result[0]), _not(result[1]))


# ---- one C condition under other assumptions (for the guard rules) --------------------
def evaluate(condition: Condition, source: SourceFile, rocm: bool, values: dict[str, int] | None = None) -> Value:
    """`condition` as a ROCm (or CUDA) build decides it, with `values` defining macros.

    Guard rules ask "what if": a CUDA device pass for sm_90 is `values={"__CUDA_ARCH__": 900}`.
    """
    model = source.rocm_path
    environment = source.build if source.build is not None else EMPTY
    scope = environment.scope(condition.node.start_byte, rocm, model.rocm_macros if model is not None else (), values)
    return _eval_directive(condition.directive, condition.condition, source, scope)


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _CHAIN_QUERY,
)
