"""W: how large a warp is, where the code decides it.

- Warp-size constants followed through the project (W001's cross-file part): each file
  contributes its definitions and uses as facts (`collect_warp_sizes`); the project check
  reports a hard-wired 32 once at its definition and at every use that does lane math.
- W007 per-warp counts computed with 32 (or sized with 64), W008 `warpSize` where a
  constant or the host is needed, W009 warp sizes that the host pass cannot know.
"""

from __future__ import annotations

import re
from dataclasses import replace

from portlint import queries
from portlint.build_model.macros import HEADER_SUFFIXES, read_directives
from portlint.checks.cpp import (
    IDENTIFIERS, ancestors_of, callee_name, enclosing_function, functions_by_name, identifiers_named, integer_value,
    macro_tree, memoized, named_descendants, strip_parens, words_named,
)
from portlint.checks.wavefront import (
    CONSTANT_ADVICE, HOST_ADVICE, _code_context, _feeds_shuffle, _index_kind, _is_thread_expr, _word_starts, _words,
    AncestorWalk, operations_with_literal,
)
from portlint.checks.launch import LaunchContext, launches
from portlint.checks.logical_warp import LogicalWarpNotes, warp_model
from portlint.build_model.macros import Macro
from portlint.finding import Finding, Related, Severity, at_node, finding
from portlint.fix import Fix
from portlint.project import LAUNCH_APIS, ProjectIndex, WarpSizeDefinition, WarpSizeUse, included_files, index_key
from portlint.rocm_path import RocmPathModel, Status
from portlint.source import CUDA, Location, SourceFile
from portlint.triggers import all_of, any_of, needs, nocase

# Macros that tell the device pass which GPU it compiles for; the host pass defines none of
# them (or, for `__AMDGCN_WAVEFRONT_SIZE`, a placeholder).
_ARCH_MACRO = re.compile(r"__(?:GFX\d+|gfx\w+|AMDGCN_WAVEFRONT_SIZE)(?:__)?")
# Things only device code touches: an unqualified function with none of them is host code.
_DEVICE_WORDS = (b"threadIdx", b"blockIdx", b"blockDim", b"gridDim", b"__shfl", b"__syncthreads", b"__ballot",
                 b"__lane_id", b"hipThreadIdx", b"__activemask", b"atomic")
# A project macro standing for `__device__`, `__global__`, `__host__ __device__`, ...
_QUALIFIER_WORD = re.compile(r"DEVICE|GLOBAL|KERNEL|HOST|INLINE")  # searched: a macro in a broken declaration
_QUALIFIER_MACRO = re.compile(rf"[A-Z0-9_]*(?:{_QUALIFIER_WORD.pattern})[A-Z0-9_]*")  # fullmatch-ed only


def function_space(function, source: SourceFile) -> str:
    """"device" (`__device__`/`__global__`), "host-device", "host" (`__host__`, or no qualifier
    and nothing device-only in it) or "unknown" (a project macro may qualify it)."""
    kinds = {c.type for c in function.children}
    if kinds & {"__device__", "__global__"}:
        return "host-device" if "__host__" in kinds else "device"
    if "__host__" in kinds:
        return "host"
    declarator = function.child_by_field_name("declarator")
    for child in function.children:
        if declarator is not None and child.start_byte >= declarator.start_byte:
            break
        if child.type == "ERROR" or (child.type in ("identifier", "type_identifier")
                                     and _QUALIFIER_MACRO.fullmatch(source.node_text(child))):
            return "unknown"
    previous = function.prev_sibling  # `C10_DEVICE void f()` may leave the macro in a broken declaration
    if previous is not None and previous.type in ("ERROR", "declaration") and previous.end_byte + 2 >= \
            function.start_byte and _QUALIFIER_WORD.search(source.node_text(previous)):
        return "unknown"
    body = source.data[function.start_byte:function.end_byte]
    return "unknown" if any(word in body for word in _DEVICE_WORDS) else "host"


_LAMBDAS = "(lambda_expression) @lambda"


def _in_lambda(node, source: SourceFile) -> bool:
    """Is `node` (of the main tree) in a lambda? Most files have none: a span test beats
    walking up from every node."""
    lambdas = memoized(source, "wavefront.lambdas", lambda s: queries.nodes(CUDA, _LAMBDAS, s.tree.root_node, "lambda"))
    return any(lambda_.start_byte <= node.start_byte and node.end_byte <= lambda_.end_byte for lambda_ in lambdas)


def _observed(use, ancestors, source: SourceFile) -> bool:
    """Does something observe the hardware width where a warp-size constant is used (the
    logical-warp model)? In a launch's configuration (`k<<<g, WARP_SIZE>>>`) that is the
    kernel launched: a kernel of this file by its model, any other kernel as if it did."""
    model = warp_model(source)
    for parent in ancestors:
        kernel = None
        if parent.type == "kernel_call_syntax" and parent.parent is not None:
            kernel = parent.parent.child_by_field_name("function")
        elif parent.type == "argument_list" and callee_name(parent.parent, source) in LAUNCH_APIS:
            kernel = next(iter(parent.named_children), None)
        elif parent.type == "template_argument_list" and parent.parent is not None and \
                parent.parent.type == "template_function" and parent.parent.parent is not None and \
                parent.parent.parent.type == "call_expression":
            # A template argument of a called template of this file (`softmax<32, threads / 32>
            # <<<g, b>>>(...)`): what its body does with it decides, as for a launch's configuration.
            template = parent.parent.child_by_field_name("name")
            observes = model.function_observes(source.node_text(template).rsplit("::", 1)[-1]) \
                if template is not None else None
            if observes is not None:  # (a template out of view: the code around it decides)
                return observes
            continue
        elif parent.type in ("compound_statement", "function_definition"):
            break
        if kernel is not None:
            observes = model.function_observes(source.node_text(kernel).split("<", 1)[0].rsplit("::", 1)[-1])
            return observes is not False
    return model.observes(use)


def _in_launch_configuration(ancestors, source: SourceFile) -> bool:
    """Is a node with these `ancestors` (innermost first) in a launch's configuration?"""
    for parent in ancestors:
        if parent.type == "kernel_call_syntax":
            return True
        if parent.type == "argument_list" and callee_name(parent.parent, source) in LAUNCH_APIS:
            return True
        if parent.type in ("compound_statement", "function_definition"):
            return False
    return False


# =========================================================================================
# What a warp-size constant is called and holds

# What a warp-size constant is called -> the value that assumes 32-lane warps.
_SIZE, _LOG2, _LANE_MASK = "size", "log2", "lane mask"
_HAZARD_VALUE = {_SIZE: 32, _LOG2: 5, _LANE_MASK: 31}
_MACRO_COMMENT = re.compile(r"//.*|/\*.*?\*/", re.S)
_MACRO_INTEGER = re.compile(r"\(*\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)*")


def _warp_constant_kind(name: str) -> str | None:
    """What a name says it holds: the warp size (`WARP_SIZE`, `kThreadsPerWarp`), its log2
    (`LOG_WARP_SIZE`), or the lane mask (`LANE_MASK`); None for anything else."""
    words = _words(name)
    found = set(words)
    pairs = set(zip(words, words[1:]))
    names_size = bool(found & {"warpsize", "warpsz"}) or any(
        a == "warp" and b in ("size", "sz", "width", "threads", "lanes") for a, b in pairs
    ) or any(w in ("threads", "lanes") and p == "per" and q == "warp" for w, p, q in zip(words, words[1:], words[2:]))
    if found & {"log", "shift", "bits"} and (names_size or "warp" in found):
        return _LOG2
    if "mask" in found and found & {"lane", "warp"} and not names_size:
        return _LANE_MASK
    return _SIZE if names_size else None


_WRITES = "[(assignment_expression left: (identifier) @name) (pointer_expression argument: (identifier) @name)]"


def _overwritten(name, source: SourceFile) -> bool:
    """Is a local's first value only a default? `int ws = 32;` then `ws = prop.warpSize;` or
    `hipDeviceGetAttribute(&ws, ...)`."""
    if name.parent is None or name.parent.type != "init_declarator":
        return False
    function = enclosing_function(name)
    text = source.node_text(name)
    return function is not None and any(
        source.node_text(n) == text and (n.parent.type == "assignment_expression" or n.parent.children[0].type == "&")
        for n in queries.nodes(CUDA, _WRITES, function, "name"))


def _definition_value(value, source: SourceFile) -> int | None:
    if value.type == "preproc_arg":
        m = _MACRO_INTEGER.fullmatch(_MACRO_COMMENT.sub("", source.node_text(value)).strip())
        return int(m.group(1), 0) if m else None
    value = strip_parens(value)
    if value.type == "initializer_list" and len(value.named_children) == 1:  # `kWarpSize{32}`
        value = value.named_children[0]
    return integer_value(value, source)


def _definition_message(name: str, kind: str, value: int) -> str:
    if kind == _LOG2:
        return f"`{name}` = {value} is log2 of a 32-lane warp; AMD wavefronts have 64."
    if kind == _LANE_MASK:
        return f"`{name}` = {value} masks lanes of a 32-lane warp; AMD wavefronts have 64."
    return f"`{name}` fixes the warp size at {value}; AMD wavefronts have 64 lanes."


def _definition_advice(name: str, kind: str) -> str:
    amd, nvidia = {_SIZE: (64, 32), _LOG2: (6, 5), _LANE_MASK: (63, 31)}[kind]
    device = {_SIZE: "warpSize", _LOG2: "__builtin_ctz(warpSize)", _LANE_MASK: "warpSize - 1"}[kind]
    return (f"Define `{name}` per platform: {amd} under `#if defined(__GFX8__) || defined(__GFX9__)`, "
            f"else {nvidia}; in device code use `{device}`, on the host query `hipDeviceAttributeWarpSize`")


# =========================================================================================
# Facts: warp-size definitions and uses, per file

# Words that every warp-size constant's name contains (see `_warp_constant_kind`): a byte
# search finds the candidates, the tree says what each one is.
_CANDIDATE_NAMES = re.compile(rb"(?i)\b\w*(?:warp|lane)\w*")
# Where a name gets its value: parent node type -> the field holding the value.
_VALUE_FIELDS = {
    "preproc_def": "value", "init_declarator": "value", "field_declaration": "default_value",
    "enumerator": "value", "optional_parameter_declaration": "default_value",
}
# A name declared without a value (a parameter, a plain local) is neither a definition nor a use.
_VALUELESS_DECLARATIONS = frozenset({"parameter_declaration", "declaration", "preproc_ifdef", "preproc_defined",
                                     "preproc_function_def", "pointer_declarator", "reference_declarator"})
# Statements and declarations end the walk from a use up to what it means.
_STATEMENT_LEVEL = frozenset({
    "expression_statement", "declaration", "field_declaration", "return_statement", "compound_statement",
    "function_definition", "translation_unit", "if_statement", "while_statement", "do_statement",
    "preproc_if", "preproc_ifdef", "preproc_elif", "template_argument_list", "preproc_def",
})


_WORD_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


class _Word:
    __slots__ = ("_data", "_start", "_end")

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self._data, self._start, self._end = data, start, end

    def group(self) -> bytes:
        return self._data[self._start:self._end]

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end


def _candidate_names(data: bytes):
    """What `_CANDIDATE_NAMES.finditer(data)` finds (whole words containing `warp` or `lane`,
    in any case), from the occurrences of those letters rather than a regex run at every word."""
    lowered = data.lower()
    spans = set()
    for needle in (b"warp", b"lane"):
        at = lowered.find(needle)
        while at != -1:
            start, end = at, at + len(needle)
            while start > 0 and data[start - 1] in _WORD_CHARS:
                start -= 1
            while end < len(data) and data[end] in _WORD_CHARS:
                end += 1
            spans.add((start, end))
            at = lowered.find(needle, end)
    return [_Word(data, start, end) for start, end in sorted(spans)]


def collect_warp_sizes(source: SourceFile, model: RocmPathModel):
    """([WarpSizeDefinition], [WarpSizeUse]) of one C-family file."""
    definitions: list[WarpSizeDefinition] = []
    scopes: list[tuple[str, int, int, Location]] = []  # local definitions: (name, start, end, location)
    uses = []
    root = source.tree.root_node
    kinds: dict[bytes, str | None] = {b"warpSize": _SIZE}
    # `warpSize` is the device's own (64 on AMD) unless the file defines a name of its own
    # that shadows it (`const int warpSize = 32;` in host code that shapes blocks): then its
    # uses here are that definition's.
    builtin_uses: list = []
    for match in _candidate_names(source.data):
        word = match.group()
        if word not in kinds:
            kinds[word] = _warp_constant_kind(word.decode())
        if kinds[word] is None:
            continue
        name = root.descendant_for_byte_range(match.start(), match.end())
        if name is None or name.type not in ("identifier", "field_identifier", "type_identifier") or \
                name.end_byte != match.end() or (name.type == "type_identifier" and name.parent.type != "type_descriptor"):
            continue  # in a comment, a string, a macro body
        parent = name.parent
        field = _VALUE_FIELDS.get(parent.type) if parent is not None else None
        value = parent.child_by_field_name(field) if field else None
        if value is not None and parent.child_by_field_name("name" if parent.type in ("preproc_def", "enumerator")
                                                             else "declarator") == name:
            definitions.append(_definition(source, model, name, value, kinds[word], scopes))
        elif parent is not None and parent.type not in _VALUELESS_DECLARATIONS and (
                name.type == "identifier" or parent.type == "type_descriptor"):  # `tiled_partition<WARP_SIZE>`
            (builtin_uses if word == b"warpSize" else uses).append(name)
    if builtin_uses and any(d.name == "warpSize" for d in definitions):
        file_wide = any(d.name == "warpSize" and not d.local for d in definitions)
        uses.extend(u for u in builtin_uses if file_wide or any(
            name == "warpSize" and start <= u.start_byte < end for name, start, end, _ in scopes))
    facts = _uses(source, model, uses, scopes)
    return definitions, facts + _literals_sizing_launches(source, model, facts)


# How far a launch's size is followed through the host function's local variables
# (`smem = (2 * rounded + ...) * sizeof(float)` with `rounded` from `CEIL_DIV(C, 32 * k)`).
_SIZE_DEPTH = 3


def _literals_sizing_launches(source: SourceFile, model: RocmPathModel, facts: list[WarpSizeUse]) -> list[WarpSizeUse]:
    """The literal 32s that size a launch (its grid, block or shared memory, directly or
    through the host function's local variables) of a kernel of this file that computes with
    a warp-size constant: the host's copy of the kernel's width, which has to change with the
    constant (a grid sized for 32-lane warps launches half the 64-lane ones; shared memory
    sized for them no longer matches the kernel's layout). Uses of the constant (`use.written`)."""
    computing = [u for u in facts if u.device and u.context in _REPORTED_USES]
    if not computing:
        return []
    context = LaunchContext.of(source)
    found: list[WarpSizeUse] = []
    seen: set[int] = set()  # lines: one place per line, as a reader changes it
    for launch in launches(source):
        function = enclosing_function(launch.call)
        name = context.kernel_name(launch)
        if function is None or name is None or function_space(function, source) != "host":
            continue
        constant = _constant_of_kernel(source, name, computing)
        if constant is None:
            continue
        arguments = [a for a in (launch.grid, launch.block, launch.shared_memory) if a is not None]
        for literal in _literals_32(source, context, arguments, launch.block):
            line = source.line_of(literal.start_byte)
            if line in seen:
                continue
            seen.add(line)
            found.append(WarpSizeUse(
                name=constant, location=source.location(literal.start_byte, literal.end_byte),
                file_digest=source.digest, context="launch", host=True, device=False, definition=None,
                status=model.status(literal.start_byte), sees=_macro_seen(source, constant, literal.start_byte),
                written=source.node_text(literal)))
    return found


def _constant_of_kernel(source: SourceFile, name: str, computing: list[WarpSizeUse]) -> str | None:
    """The warp-size constant that the one definition of kernel `name` in this file computes with."""
    definitions = functions_by_name(source).get(name, ())
    if len(definitions) != 1:
        return None
    kernel = definitions[0]
    names = {u.name for u in computing if kernel.start_byte <= u.location.start_byte < kernel.end_byte
             and u.definition is None}
    return names.pop() if len(names) == 1 else None


def _literals_32(source: SourceFile, context: LaunchContext, arguments: list, block) -> list:
    """Number literals of value 32 in `arguments` and in the initialisers of the local
    variables they name, followed `_SIZE_DEPTH` deep; a block written as a bare `32` is the
    block-size rules' (K002)."""
    found, visited = [], set()
    pending = [(a, 0) for a in arguments if not (a is block and integer_value(strip_parens(a), source) == 32)]
    while pending:
        expression, depth = pending.pop()
        if expression.id in visited:
            continue
        visited.add(expression.id)
        for node in named_descendants(expression):
            if node.type == "number_literal" and integer_value(node, source) == 32:
                found.append(node)
            elif node.type == "identifier" and depth < _SIZE_DEPTH:
                declarator = context.local_variable(node)
                value = declarator.child_by_field_name("value") if declarator is not None else None
                if value is not None:
                    pending.append((value, depth + 1))
    return sorted(found, key=lambda n: n.start_byte)


def _lost_function(definition, source: SourceFile):
    """The scope to search for a source file's declaration the parser could place in no
    function (an ERROR around it: a function opened differently in two `#if` arms), most
    likely a local: the whole file. None for a header's (code out of view may use it) or
    a declaration the parser placed at file scope (another file's macro may name it)."""
    if definition.type == "preproc_def" or source.absolute_path is None \
            or source.absolute_path.suffix.lower() in HEADER_SUFFIXES:
        return None
    return source.tree.root_node if any(a.type == "ERROR" for a in ancestors_of(definition)) else None


def _named_once(source: SourceFile, name: str, scope) -> bool:
    """Is a local's name written only where it is declared, in its block and in the file's
    macros (`#define LANE_OF(t) ((t) % warp_size)` may expand to a use)? `scope` None: a
    name others may see; the file's root: in the whole file (`_lost_function`), where each
    of several functions the parser lost may declare its own and use none."""
    if scope is None:
        return False
    block = source.data[scope.start_byte:scope.end_byte]
    defines = memoized(source, "define_bodies", lambda s: b"\n".join(
        d.text.encode() for d in read_directives(s.data) if d.kind == "define"))
    if words_named(defines, name):
        return False
    declared = sum(1 for node in identifiers_named(source, name, scope.start_byte, scope.end_byte)
                   if node.parent is not None and node.parent.type == "init_declarator"
                   and node.parent.child_by_field_name("declarator") == node)
    return words_named(block, name) == max(declared, 1)


def _parameter_names(function, source: SourceFile) -> set[str]:
    declarator = function.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    names = set()
    for parameter in parameters.named_children if parameters is not None else ():
        name = parameter.child_by_field_name("declarator")
        while name is not None and name.type != "identifier":
            name = name.child_by_field_name("declarator") or (name.named_children[0] if name.named_children else None)
        if name is not None:
            names.add(source.node_text(name))
    return names


def _definition(source: SourceFile, model: RocmPathModel, name, value, kind: str, scopes) -> WarpSizeDefinition:
    definition = name.parent
    if definition.type == "init_declarator" and definition.parent is not None:
        definition = definition.parent  # the declaration, with its qualifiers
    number = _definition_value(value, source)
    location = source.location(name.start_byte, name.end_byte)
    scope = _local_scope(definition)
    if scope is not None:
        scopes.append((source.node_text(name), name.start_byte, scope.end_byte, location))
    arch_by_condition = memoized(source, "arch_conditions", lambda s: {
        c.node.id: c.macros for c in model.conditions})
    return WarpSizeDefinition(
        name=source.node_text(name), location=location, file_digest=source.digest, kind=kind, value=number,
        # A local constant (`constexpr int warp_size = 32;` in a function) counts only where the
        # logical-warp model sees the hardware's width observed; a global one by its uses.
        hard_wired=number == _HAZARD_VALUE[kind] and not _overwritten(name, source) and (
            scope is None or warp_model(source).observes(definition)),
        arch_macros=_arch_macros(definition, value, source, arch_by_condition),
        local=scope is not None, status=model.status(definition.start_byte),
        scope_end=scope.end_byte if scope is not None else None,
        unnamed_after=_named_once(source, source.node_text(name), scope if scope is not None else
                                  _lost_function(definition, source)),
        macro=(str(source.absolute_path), source.line_start(source.line_of(definition.start_byte)))
        if definition.type == "preproc_def" and source.absolute_path is not None else None,
        member_of=_class_of_member(definition, source),
    )


_CLASSES = frozenset({"class_specifier", "struct_specifier", "union_specifier"})


def _class_of_member(definition, source: SourceFile) -> str | None:
    """The name of the class whose member `definition` declares ("" if unnamed), else None."""
    if definition.type != "field_declaration":
        return None
    body = definition.parent
    owner = body.parent if body is not None and body.type == "field_declaration_list" else None
    if owner is None or owner.type not in _CLASSES:
        return None
    name = owner.child_by_field_name("name")
    return _plain_class_name(source.node_text(name)) if name is not None else ""


def _plain_class_name(text: str) -> str:
    """`ns::Tile<T, 4>` -> `Tile`."""
    return text.split("<", 1)[0].rsplit("::", 1)[-1].strip()


def _how_named(use, ancestors, source: SourceFile) -> tuple[bool, bool, bool]:
    """(called, qualified, in_class) of a use, for `WarpSizeUse.may_see`."""
    node, qualified = use, False
    for parent in ancestors:
        if parent.type == "qualified_identifier" and parent.child_by_field_name("name") == node:
            qualified, node = True, parent
        elif parent.type == "template_function" and parent.child_by_field_name("name") == node:
            node = parent
        else:
            break
    called = node.parent is not None and node.parent.type == "call_expression" and \
        node.parent.child_by_field_name("function") == node
    in_class = False
    for a in ancestors:
        if a.type == "field_declaration_list":
            in_class = True
            break
        if a.type in ("function_definition", "declaration"):
            owner = _member_owner(a, source)
            if owner is not None:
                # A class's (its own members or a base's); a namespace the file opens is none.
                in_class = owner not in _namespaces(source)
                break
    return called, qualified, in_class


def _namespaces(source: SourceFile) -> frozenset[str]:
    """The names of the namespaces the file opens (`namespace ns {`)."""
    def find(s: SourceFile) -> frozenset[str]:
        return frozenset(s.node_text(n).rsplit("::", 1)[-1].strip()
                         for n in queries.nodes(CUDA, _NAMESPACE_NAMES, s.tree.root_node, "name"))
    return memoized(source, "namespace names", find)


_NAMESPACE_NAMES = "(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name)"


def _member_owner(definition, source: SourceFile) -> str | None:
    """`float& Mma::slot() { ... }`, `const int Geom::warps = 256 / warp_size;`: a member
    defined outside its class, whose body or initialiser C++ reads in the class's scope:
    the name that qualifies it (`Mma`); None for other definitions."""
    pending = [d for d in definition.children_by_field_name("declarator")]
    while pending:
        declarator = pending.pop()
        if declarator.type == "qualified_identifier":
            while (name := declarator.child_by_field_name("name")) is not None and name.type == "qualified_identifier":
                declarator = name  # `Outer::Inner::f`: the innermost scope owns it
            scope = declarator.child_by_field_name("scope")
            return _plain_class_name(source.node_text(scope)) if scope is not None else None
        if declarator.type in ("function_declarator", "pointer_declarator", "reference_declarator",
                               "init_declarator", "array_declarator", "parenthesized_declarator"):
            inner = declarator.child_by_field_name("declarator")
            pending.extend([inner] if inner is not None else declarator.named_children[:1])
    return None


def _uses(source: SourceFile, model: RocmPathModel, uses, scopes) -> list[WarpSizeUse]:
    """The uses that a project check reads: those that compute with the constant
    (`_REPORTED_USES`) or stand in host code (`check_arch_macro_warp_size_on_host`)."""
    facts = []
    functions: dict[int, tuple[str, set[str]]] = {}  # id -> (function_space, parameter names)
    walk = AncestorWalk(source.tree.root_node)  # `uses` come in source order
    for use in uses:
        text = source.node_text(use)
        bound = [loc for name, start, end, loc in scopes if name == text and start < use.start_byte < end]
        ancestors = walk.of(use)
        function = next((a for a in ancestors if a.type == "function_definition"), None)  # `enclosing_function`
        if function is not None and function.id not in functions:
            functions[function.id] = (function_space(function, source), _parameter_names(function, source))
        space, parameters = functions[function.id] if function is not None else ("unknown", set())
        if not bound and text in parameters:
            continue  # a parameter hides the global constant
        if any(a.type == "lambda_expression" for a in ancestors):
            space = "unknown"
        context = _use_context(use, source, ancestors)
        launch = _in_launch_configuration(ancestors, source)
        host = space == "host" or launch
        if launch and context == "other":
            context = "launch"  # `k<<<g, WARP_SIZE>>>`: the block is one warp of the kernel's
        kernels = ()
        if context in _REPORTED_USES and not _observed(use, ancestors, source):
            context = _UNOBSERVED
        elif context in _REPORTED_USES and host:
            kernels = _kernels_out_of_view(use, ancestors, source)
        if context not in _REPORTED_USES and context != _UNOBSERVED and not host:
            continue
        called, qualified, in_class = _how_named(use, ancestors, source)
        facts.append(WarpSizeUse(
            name=text, location=source.location(use.start_byte, use.end_byte), file_digest=source.digest,
            context=context, host=host, device=space == "device",
            definition=bound[-1] if bound else None, status=model.status(use.start_byte),
            sees=None if bound else _macro_seen(source, text, use.start_byte),
            kernels=kernels, called=called, qualified=qualified, in_class=in_class,
        ))
    return facts


def _kernels_out_of_view(use, ancestors, source: SourceFile) -> tuple[str, ...]:
    """For host code whose verdict rests on kernels of other files (a launch's configuration,
    host code where the file's only observers are launches of such kernels, or it has no
    device code): the names of the kernels, which the project pass judges by their own files'
    model (`_judged_by_kernels`); () where the verdict is this file's."""
    context = LaunchContext.of(source)
    model = warp_model(source)
    if _in_launch_configuration(ancestors, source):
        launch = next((found for found in launches(source)
                       if found.call.start_byte <= use.start_byte < found.call.end_byte), None)
        name = context.kernel_name(launch) if launch is not None else None
        return (name,) if name is not None and model.function_observes(name) is None else ()
    observers = model.observers(use)
    if not observers or not all(o.out_of_view for o in observers):
        return ()
    return context.launched_names  # host code mirrors the geometry of any kernel the file launches


def _macro_seen(source: SourceFile, name: str, offset: int) -> tuple[str, int] | None:
    """The project `#define` of `name` the ROCm build (else the CUDA build) sees at `offset`:
    in this file above it, or in a header included before it."""
    if source.build is None:
        return None
    for rocm in (True, False):
        macro = source.build.state(name, offset, rocm)
        if isinstance(macro, Macro) and macro.path:
            return macro.path, macro.offset
    return None


def _local_scope(definition):
    """The node a local definition is visible in (its function or template), else None."""
    if definition.type == "preproc_def":
        return None
    for parent in ancestors_of(definition):
        if parent.type in ("function_definition", "template_declaration", "lambda_expression"):
            return parent
        if parent.type in ("translation_unit", "namespace_definition", "field_declaration_list",
                           "linkage_specification"):
            return None
    return None


def _arch_macros(definition, value, source: SourceFile, arch_by_condition) -> tuple[str, ...]:
    """Architecture macros in the `#if` conditions around a definition, or in its value."""
    found = set(_ARCH_MACRO.findall(source.node_text(value)))
    for parent in ancestors_of(definition):
        found.update(m for m in arch_by_condition.get(parent.id, ()) if _ARCH_MACRO.fullmatch(m))
    return tuple(sorted(found))


def _use_context(use, source: SourceFile, ancestors: list) -> str:
    """What a use of a warp-size constant does: feeds a "shuffle", builds a "mask", does
    lane "arithmetic", bounds a "loop", strides one ("stride"), sizes an array ("array
    size"), or "other".
    `ancestors`: those of `use`, innermost first."""
    if _feeds_shuffle(use, source, ancestors):
        return "shuffle"
    child, found = use, "other"
    for parent in ancestors:
        kind = parent.type
        if kind == "array_declarator" and child == parent.child_by_field_name("size"):
            return "other" if _only_warp_slots(parent, source) else "array size"
        if kind == "for_statement":
            if child == parent.child_by_field_name("update"):
                return "stride"  # `i += WARP_SIZE`: follows the lane index, changes with the constant
            return "loop" if child != parent.child_by_field_name("body") else found
        if kind in ("preproc_if", "preproc_elif") and child == parent.child_by_field_name("condition"):
            return "other"  # `#if WARP_SIZE == 64`: a test, not a computation
        if kind == "template_argument_list" and _is_tile_template(parent.parent, source):
            return "tile"  # `tiled_partition<WARP_SIZE>(block)`
        if kind in _STATEMENT_LEVEL or kind == "argument_list":
            return found
        if found == "other" and kind == "binary_expression":
            operator = parent.child_by_field_name("operator").type
            found = "mask" if operator == "<<" and child == parent.child_by_field_name("right") else "arithmetic"
        elif found == "other" and kind == "assignment_expression" and child == parent.child_by_field_name("right"):
            found = "arithmetic" if parent.child_by_field_name("operator").type != "=" else "other"
        child = parent
    return found


def _is_tile_template(template, source: SourceFile) -> bool:
    """`tiled_partition<...>` or `thread_block_tile<...>` (maybe qualified)."""
    name = template.child_by_field_name("name") if template is not None else None
    return name is not None and source.node_text(name).rsplit("::", 1)[-1] in ("tiled_partition", "thread_block_tile")


def _only_warp_slots(array, source: SourceFile) -> bool:
    """Is the array indexed only by warp (`partial[warp_id]`), never by lane? Then 32 slots are
    an upper bound on any GPU. Arrays whose indexing is not seen here count as per-lane."""
    name = array.child_by_field_name("declarator")
    function = enclosing_function(array)
    if name is None or name.type != "identifier" or function is None:
        return False
    indices = [_index_of(s) for s in _subscripts(name, function, source)]
    return bool(indices) and all(i is not None and _is_warp_index(i, source) for i in indices)


# =========================================================================================
# W001, across files: a hard-wired warp size, at its definition and at its uses

# A use that computes with the constant where the logical-warp model sees nothing observe the
# hardware's width: a deliberate 32-lane grouping, right on AMD.
_UNOBSERVED = "unobserved"
_REPORTED_USES = {
    "shuffle": "feeds a shuffle",
    "mask": "builds a lane mask",
    "arithmetic": "does lane arithmetic",
    "loop": "bounds a loop over lanes",
    "array size": "sizes a per-lane array",
    "tile": "sizes a warp tile",
    "launch": "sizes the launch of a kernel",
}
# Enough related uses to find each file that computes with a constant; SARIF stays small.
_MAX_RELATED_USES = 50


def check_warp_size_through_project(index: ProjectIndex) -> list[Finding]:
    """Definitions that assume 32-lane warps, and each use that computes with them: a finding
    per place (each is a line to change, and a file scanned alone still says why), the
    definition with its uses related, each use with the definition related (its root cause,
    which `--group-root-causes` folds them into)."""
    groups: dict[object, list[WarpSizeDefinition]] = {}
    for definition in index.warp_size_definitions:
        if definition.status is not Status.DEAD:
            key = (definition.location.path, definition.name, definition.scope_end) if definition.local \
                else definition.name
            groups.setdefault(key, []).append(definition)
    # Another live value (64 under a HIP branch, `warpSize`) makes it a per-platform constant.
    wired = {key: definitions for key, definitions in groups.items() if all(d.hard_wired for d in definitions)}
    uses_of: dict[object, list[WarpSizeUse]] = {}
    local_group = {d.location: key for key, definitions in wired.items() for d in definitions if d.local}
    used_off_rocm: set = set()  # keys with uses only in code no ROCm build compiles
    for use in index.warp_size_uses_of({d.name for definitions in wired.values() for d in definitions}):
        key = local_group.get(use.definition, use.definition) if use.definition is not None else use.name
        if use.definition is None and not any(use.may_see(d) for d in wired.get(key, ())):
            continue  # another thing of the name: a function (`device::warp_size()`), another class's member
        if use.status is not Status.DEAD:
            uses_of.setdefault(key, []).append(use)
        elif use.location.path in index.not_built:  # (not a dead `#if` arm: a fix may bring that back)
            used_off_rocm.add(key)
    for key, uses in uses_of.items():
        uses_of[key] = [replace(u, context=_UNOBSERVED) if u.kernels and not _judged_by_kernels(index, u) else u
                        for u in uses]
    findings = []
    for key, definitions in wired.items():
        # A use in code only a ROCm build compiles is the port's own business.
        computing = [u for u in uses_of.get(key, ()) if (u.context in _REPORTED_USES or u.context == _UNOBSERVED)
                     and u.status is not Status.PORT]
        uses = [u for u in computing if u.context in _REPORTED_USES]
        seen_by = _definitions_seen(definitions, computing, index)
        for definition in definitions:
            own = [u for u in uses if definition in seen_by[id(u)]]
            logical = [u for u in computing if u.context == _UNOBSERVED and definition in seen_by[id(u)]]
            if not own and not logical and (computing or not uses_of.get(key) and (
                    definition.unnamed_after or key in used_off_rocm)):
                # The name's uses in view all see another definition of it, or it has none but
                # in code no ROCm build compiles, or it is a function's own constant nothing in
                # its scope uses: nothing in the ROCm build observes this 32.
                continue
            if not own and logical:
                # Every use is a logical warp that nothing 64 lanes wide observes: AMD computes
                # the same; a note where the width is written, its uses related.
                findings.append(Finding(
                    location=definition.location,
                    message=(f"`{definition.name}` is {definition.value}, used only as a 32-lane logical warp "
                             f"({_count(len(logical), 'use')}): nothing observes the 64-lane wavefront, so AMD "
                             "computes the same."),
                    fix=Fix.advice("Nothing to change for AMD; a name that says logical warp keeps the grouping "
                                   "deliberate where the code is edited later"),
                    severity=Severity.NOTE,
                    related=tuple(Related(u.location, f"`{u.name}` groups lanes here") for u in logical[:_MAX_RELATED_USES]),
                    matched=definition.name, file_digest=definition.file_digest, root=True,
                ))
                # Each use in another file, as the warning case's (grouping leaves one per file).
                findings.extend(Finding(
                    location=u.location,
                    message=f"`{u.name}` is {definition.value} where it groups lanes as a 32-lane logical warp; "
                            "nothing observes the 64-lane wavefront, so AMD computes the same.",
                    fix=Fix.advice("Nothing to change for AMD"), severity=Severity.NOTE,
                    related=(Related(definition.location, f"`{definition.name}` is defined as {definition.value} here"),),
                    matched=u.name, file_digest=u.file_digest,
                ) for u in logical if u.location.path != definition.location.path and (u.device or not u.host))
                continue
            # A definition only ROCm code makes (a shim's `#define WARP_SIZE 32` in the HIP
            # arm) is the hazard itself: reported there once, its uses related.
            shim = definition.status is Status.PORT
            message = (_shim_message if shim else _definition_message)(definition.name, definition.kind,
                                                                        definition.value)
            if own:
                files = {u.location.path for u in own}
                message += f" {_count(len(own), 'use')} in {_count(len(files), 'file')} compute with it."
            findings.append(Finding(
                location=definition.location, message=message,
                fix=Fix.advice(_definition_advice(definition.name, definition.kind)),
                severity=Severity.ERROR if any(u.context == "shuffle" for u in own) else None,
                related=tuple(_use_related(u) for u in own[:_MAX_RELATED_USES]),
                matched=definition.name, file_digest=definition.file_digest, in_port=shim, root=True,
            ))
        # Each use is a line to change: device code for the wavefront's width, host code for
        # the device's (a host pass never sees `__GFX9__`: it queries the device).
        for use in uses:
            seen = seen_by[id(use)]
            if all(d.status is Status.PORT for d in seen):
                continue  # the shim's own finding says it
            findings.append(Finding(
                location=use.location,
                message=f"`{use.written}` stands for `{use.name}` ({seen[0].value}) where it sizes the launch of a "
                        f"kernel that computes with `{use.name}`; it changes with `{use.name}`."
                if use.written is not None else
                f"`{use.name}` is {seen[0].value} where it {_REPORTED_USES[use.context]}; "
                "AMD wavefronts have 64 lanes.",
                fix=Fix.advice(f"Size it with `{use.name}` in place of `{use.written}`, so host and kernel agree "
                               "when the constant becomes per-platform" if use.written is not None
                               else _definition_advice(use.name, seen[0].kind)),
                severity=Severity.ERROR if use.context == "shuffle" else None,
                related=tuple(Related(d.location, f"`{d.name}` is defined as {d.value} here") for d in seen),
                matched=use.name, file_digest=use.file_digest,
            ))
    return findings


def _judged_by_kernels(index: ProjectIndex, use: WarpSizeUse) -> bool:
    """Does any kernel `use.kernels` names observe the wavefront's width, by the logical-warp
    model of the file that defines it? A kernel defined nowhere in view, or more than once
    (overloads, other backends), or whose verdict rests on header widths, counts as one that does."""
    for name in use.kernels:
        definitions = [d for d in index.functions.get(name, ()) if d.has_global and d.status is not Status.DEAD]
        if len(definitions) != 1 or definitions[0].warp_observation is not False:
            return True
    return False


def _definitions_seen(definitions: list[WarpSizeDefinition], uses: list[WarpSizeUse],
                      index: ProjectIndex) -> dict[int, list]:
    """id(use) -> the definitions of its name it sees: the `#define` the build model says it
    sees; else (a C++ constant, a file the model does not reach) those of its own file; else
    those of the files it includes; else all of them. So each of several files' own
    `WARP_SIZE 32` counts only its own uses, and a header nothing of the use's includes (a
    test's, another extension's) is not its root cause."""
    by_macro = {d.macro: d for d in definitions if d.macro is not None}
    seen = {}
    for use in uses:
        macro = by_macro.get(use.sees) if use.sees is not None else None
        visible = [d for d in definitions if use.definition is not None or use.may_see(d)]
        same_file = [d for d in visible if d.location.path == use.location.path]
        if macro is None and not same_file and len(visible) > 1:
            reached = set(included_files(index, index_key(use.location.path)))
            same_file = [d for d in visible if index_key(d.location.path) in reached]
        seen[id(use)] = [macro] if macro is not None else same_file or visible
    return seen


def _shim_message(name: str, kind: str, value: int) -> str:
    what = {_SIZE: "", _LOG2: ", log2 of a 32-lane warp", _LANE_MASK: ", a 32-lane mask"}[kind]
    return f"ROCm-only code defines `{name}` as {value}{what}; AMD wavefronts have 64 lanes."


def _use_related(use: WarpSizeUse) -> Related:
    if use.written is not None:
        return Related(use.location, f"`{use.written}` stands for `{use.name}` here, sizing a launch")
    return Related(use.location, f"`{use.name}` {_REPORTED_USES[use.context]} here")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# =========================================================================================
# W007 per-warp-shared-sizing

_COUNT_WORDS = frozenset({"num", "n", "nr", "count", "cnt", "per", "total", "max"})
_THREAD_COUNT_WORDS = frozenset({"block", "blocksize", "threads", "thread", "nthreads", "cta", "blockdim"})
_NOT_THREADS = frozenset({"bytes", "bits", "elems", "elements", "rows", "cols", "heads", "items", "words", "size8"})
# A thread's own coordinate (`thread_row`, `thread_col`): a position in a tile, not a count.
_COORDINATE_WORDS = frozenset({"row", "col", "column", "idx", "index", "offset", "pos"})
# `X / 32`, `X >> 5` count 32-lane warps; `X / 64`, `X >> 6` count 64-lane ones.
_WARP_DIVISORS = {("/", 32): 32, (">>", 5): 32, ("/", 64): 64, (">>", 6): 64}
_DIVISORS = frozenset(divisor for _, divisor in _WARP_DIVISORS)
_SHARED_ARRAYS = """
(declaration (type_qualifier) @qualifier
  declarator: (array_declarator declarator: (identifier) @array size: (number_literal) @size)) @declaration
"""
_COUNT_ADVICE = ("Keep `/ 32` only as an array bound (an upper bound on every GPU); count the warps that "
                 "run with `blockDim.x / warpSize` (host: `hipDeviceAttributeWarpSize`)")
_SIZE_ADVICE = "Size per-warp arrays for 32-lane warps (`BLOCK / 32`, an upper bound on every GPU)"


def _names_warp_count(name: str) -> bool:
    """`WARPS_PER_BLOCK`, `kNumWarps`, `num_warps`, `nwarps`, `WARP_COUNT`."""
    words = set(_words(name))
    return bool(words & {"warps", "nwarps", "numwarps", "nwarp"}) or ("warp" in words and bool(words & _COUNT_WORDS))


def _names_thread_count(node, source: SourceFile) -> bool:
    """An expression over a block's thread count: `BLOCK`, `kBlockSize`, `NUM_THREADS + 31`."""
    names = [node] if node.type == "identifier" else queries.nodes(CUDA, IDENTIFIERS, node, "id")
    for name in names:
        words = set(_words(source.node_text(name)))
        if words & _THREAD_COUNT_WORDS and not words & _NOT_THREADS and not words & {"warp", "warps"} \
                and not (words & _COORDINATE_WORDS and not words & _COUNT_WORDS):
            return True
    return False


def _warp_count_receiver(expression, source: SourceFile):
    """The name a count initialises (`#define WARPS (B / 32)`, `constexpr int kWarps = B / 32`), else None."""
    node = expression
    for parent in ancestors_of(expression):
        if parent.type in ("parenthesized_expression", "cast_expression"):
            node = parent
            continue
        if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
            return parent.child_by_field_name("declarator")
        if parent.type in ("optional_parameter_declaration", "field_declaration"):
            return parent.child_by_field_name("declarator")
        return None
    return None


_TEMPLATE_ARGUMENT_NAMES = "(template_argument_list (type_descriptor type: (type_identifier) @id))"
# Constants made from a count, followed at most this many deep (a longer chain counts as a use).
_MAX_DERIVED = 16
# Expressions a derived constant's value is made of, from the count up to its declaration.
_VALUE_PARTS = frozenset({"binary_expression", "parenthesized_expression", "cast_expression", "qualified_identifier",
                          "unary_expression", "conditional_expression"})


def _declares(name) -> bool:
    """Is the identifier the name a declaration or `#define` gives (not a use)?"""
    parent = name.parent
    return parent is not None and (parent.type == "preproc_def" or (
        parent.type in ("init_declarator", "optional_parameter_declaration", "parameter_declaration", "declaration")
        and parent.child_by_field_name("declarator") == name))


def _derived_constant(use):
    """The name a use's value initialises: `kCols` of `kCols = 4 * kWarps` (a member, a local,
    an enumerator, `dim3 block(kWarps * 32)`), else None."""
    node = use
    for parent in ancestors_of(use):
        if parent.type in _VALUE_PARTS:
            node = parent
            continue
        target = None
        if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
            target = parent.child_by_field_name("declarator")
        elif parent.type == "field_declaration" and parent.child_by_field_name("default_value") == node:
            target = parent.child_by_field_name("declarator")
        elif parent.type == "enumerator" and parent.child_by_field_name("value") == node:
            target = parent.child_by_field_name("name")
        elif parent.type == "argument_list" and parent.parent is not None and parent.parent.type == "init_declarator":
            target = parent.parent.child_by_field_name("declarator")
        elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
            target = parent.child_by_field_name("left")
        return target if target is not None and target.type in ("identifier", "field_identifier") else None
    return None


def _passed_on(use) -> bool:
    """Is the count itself (`kWarps`, `Traits::kWarps`) an argument of a call or a template?
    The callee may compare it with warp indices out of sight."""
    node = use
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "qualified_identifier"):
        node = node.parent
    parent = node.parent
    if parent is not None and parent.type == "type_descriptor":
        parent = parent.parent
    return parent is not None and parent.type in ("argument_list", "template_argument_list")


# Bytes of a file with GPU code: device code, a launch, a thread index, a runtime call.
_GPU_FILE_MARKERS = (b"__global__", b"__device__", b"<<<", b"threadIdx", b"blockDim", b"cuda", b"hip", b"CUDA", b"HIP")


class _PerWarpScan:
    def __init__(self, source: SourceFile):
        self.source = source
        self.gpu_file = any(marker in source.data for marker in _GPU_FILE_MARKERS)
        self.findings: list[Finding] = []
        self.logical = LogicalWarpNotes(source)  # warp counts of 32 lanes nothing observes: notes
        self._identifiers = None
        self._by_name: dict[str, list] | None = None

    def identifiers(self):
        if self._identifiers is None:
            self._identifiers = queries.nodes(CUDA, IDENTIFIERS, self.source.tree.root_node, "id")
        return self._identifiers

    def counts(self, root, in_macro: bool) -> None:
        source = self.source
        for division in operations_with_literal(source, root, _DIVISORS):
            op = division.child_by_field_name("operator").type
            lanes = _WARP_DIVISORS.get((op, integer_value(division.child_by_field_name("right"), source)))
            left = strip_parens(division.child_by_field_name("left"))
            if lanes is None or _is_thread_expr(left, source):
                continue  # `blockDim.x / 32` is W001's
            if in_macro:
                name = self._macro_name(division)
            else:
                receiver = _warp_count_receiver(division, source)
                name = source.node_text(receiver) if receiver is not None else None
            if not (_names_thread_count(left, source) or (name and _names_warp_count(name))):
                continue
            if name is None and not self.gpu_file:
                continue  # `block_size / 32` in C with no GPU code at all: a block of data
            array_size = any(a.type == "array_declarator" for a in ancestors_of(division))
            uses = self._uses(name, division) if name else []
            counted = [u for u in uses if not any(a.type == "array_declarator" for a in ancestors_of(u))]
            shown = " ".join(source.node_text(division).split())
            observed = warp_model(source).observes(division, True) if in_macro else \
                _observed(division, list(ancestors_of(division)), source)
            if lanes == 32 and (name is None and not array_size and observed or
                                name is not None and (hardware := self._hardware_warp_uses(name, division))):
                related = tuple(Related(source.location(u.start_byte, u.end_byte),
                                        f"`{name}` counts warps here") for u in hardware[:3]) if name else ()
                self.findings.append(at_node(
                    source, division, f"`{shown}` counts 32-lane warps; a block has half as many on AMD.",
                    Fix.advice(_COUNT_ADVICE), related=related))
            elif lanes == 32 and not array_size:
                self.logical.add(division)
            elif lanes == 64 and (array_size or len(uses) > len(counted)):
                self.findings.append(at_node(
                    source, division, f"`{shown}` counts 64-lane warps; 32-lane warps (CUDA, RDNA) need twice as many.",
                    Fix.advice(_SIZE_ADVICE)))

    def _macro_name(self, node) -> str | None:
        """The name of the `#define` whose body holds `node` (macro-tree offsets match the file's)."""
        found = self.source.tree.root_node.descendant_for_byte_range(node.start_byte, node.end_byte)
        while found is not None and found.type not in ("preproc_def", "preproc_function_def"):
            found = found.parent
        name = found.child_by_field_name("name") if found is not None else None
        return self.source.node_text(name) if name is not None else None

    def _uses(self, name: str, definition) -> list:
        return [n for n in self.identifiers() if self.source.node_text(n) == name
                and not (definition.start_byte <= n.start_byte < definition.end_byte)
                and n.parent is not None
                and n.parent.type not in ("init_declarator", "preproc_def", "optional_parameter_declaration")]

    def _hardware_warp_uses(self, name: str, definition) -> list:
        """The uses of the warp count `name`, and of the constants made from it (`kCols = 4 *
        kWarps`, `constexpr int w = Traits::kWarps;`, followed by name through the file), that
        meet the hardware's warps: in a function where the logical-warp model sees the hardware's
        width observed,
        in a launch's configuration (the grid a kernel splits by warps), passed on as such to a
        call or template, or where nothing follows them (a file-scope type). A count that only sizes tiles (columns per load, loads per chunk) in code that
        never asks the hardware about warps is a logical count: right on a 64-lane wavefront."""
        found, pending, seen = [], [(name, definition, None)], {(name, None)}
        while pending:
            current, skip, scope = pending.pop()
            for use in self._identifier_uses(current, skip):
                if scope is not None and not scope.start_byte <= use.start_byte < scope.end_byte:
                    continue  # another function's local of the same name
                if any(a.type in ("array_declarator", "static_assert_declaration") for a in ancestors_of(use)):
                    continue  # an upper bound; a compile-time check
                function = enclosing_function(use)
                if function is not None and warp_model(self.source).observes(use) or \
                        _in_launch_configuration(ancestors_of(use), self.source):
                    found.append(use)  # (a launch's grid meets the kernel's warps)
                    continue
                derived = _derived_constant(use)
                if derived is not None:
                    text = self.source.node_text(derived)
                    # A local (`const dim3 grid(n / kWarps)`) is read in its own function only.
                    local = enclosing_function(derived)
                    key = (text, local.id if local is not None else None)
                    if key not in seen and len(seen) < _MAX_DERIVED:
                        seen.add(key)
                        pending.append((text, derived, local))
                    elif key not in seen:
                        found.append(use)  # too long a chain to follow: as if it met warps
                    continue
                if function is None or _passed_on(use):
                    found.append(use)
        return sorted(found, key=lambda n: n.start_byte)

    def _identifier_uses(self, name: str, definition) -> list:
        if self._by_name is None:
            self._by_name = {}
            # `f<kWarps>()` holds a type_identifier where a count is passed to a template.
            arguments = queries.nodes(CUDA, _TEMPLATE_ARGUMENT_NAMES, self.source.tree.root_node, "id")
            for node in sorted([*self.identifiers(), *arguments], key=lambda n: n.start_byte):
                self._by_name.setdefault(self.source.node_text(node), []).append(node)
        return [n for n in self._by_name.get(name, ()) if not (definition.start_byte <= n.start_byte < definition.end_byte)
                and not _declares(n)]

    def shared_slots(self) -> None:
        """`__shared__ T s[32]` written per warp and read over 32 slots: slots 16–31 stay unset on AMD."""
        source = self.source
        for match in queries.matches(CUDA, _SHARED_ARRAYS, source.tree.root_node):
            if source.node_text(match["qualifier"][0]) != "__shared__":
                continue
            size = match["size"][0]
            if integer_value(size, source) != 32:
                continue
            function = enclosing_function(match["declaration"][0])
            name = source.node_text(match["array"][0])
            if function is None:
                continue
            subscripts = _subscripts(match["array"][0], function, source)
            written = any(_is_warp_index(_index_of(s), source) and _is_written(s) for s in subscripts)
            guards = [g for s in subscripts if not _is_written(s) for g in [_bound_32(s, source)] if g is not None]
            if written and guards:
                self.findings.append(at_node(
                    source, size, f"`{name}[32]` has a slot per 32-lane warp; reads of slots 16–31 get no "
                                  "AMD wavefront's value.",
                    Fix.advice(f"Read only the slots written: bound the read of `{name}` by "
                               "`blockDim.x / warpSize`, not 32"),
                    related=(Related(source.location(guards[0].start_byte, guards[0].end_byte),
                                     "every one of 32 slots is read here"),)))


def _subscripts(array, function, source: SourceFile) -> list:
    """The subscripts `a[...]` in `function` of the array that the identifier `array` names, in
    source order. Found where its name occurs in the function's text."""
    found = []
    for name in identifiers_named(source, source.node_text(array), function.start_byte, function.end_byte):
        subscript = name.parent
        if subscript.type == "subscript_expression" and subscript.child_by_field_name("argument") == name:
            found.append(subscript)
    return found


def _index_of(subscript):
    indices = subscript.child_by_field_name("indices")
    named = [c for c in indices.named_children if c.type != "comment"] if indices is not None else []
    return named[0] if len(named) == 1 else None


def _is_written(subscript) -> bool:
    parent = subscript.parent
    return parent is not None and parent.type == "assignment_expression" and \
        parent.child_by_field_name("left") == subscript


def _is_warp_index(node, source: SourceFile) -> bool:
    """`wid`, `warp_id`, `threadIdx.x / 32`, `tid >> 5`, `threadIdx.x / warpSize`."""
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return _index_kind(source.node_text(node)) == "warp"
    if node.type == "binary_expression" and node.child_by_field_name("operator").type in ("/", ">>"):
        right = strip_parens(node.child_by_field_name("right"))
        by_warp = integer_value(right, source) in (32, 5) or _warp_constant_kind(source.node_text(right)) == "size"
        return by_warp and _is_thread_expr(node.child_by_field_name("left"), source)
    return False


def _bound_32(subscript, source: SourceFile):
    """The `< 32` that guards or bounds a read (`threadIdx.x < 32 ? s[threadIdx.x] : 0`,
    `for (i = 0; i < 32; ++i) s[i]`), else None."""
    child = subscript
    for parent in ancestors_of(subscript):
        if parent.type == "function_definition":
            return None
        condition = None
        if parent.type in ("if_statement", "conditional_expression", "for_statement", "while_statement"):
            condition = parent.child_by_field_name("condition")
        if condition is not None and child != condition:
            for comparison in [strip_parens(condition.child_by_field_name("value") or condition)]:
                if comparison is not None and comparison.type == "binary_expression":
                    op = comparison.child_by_field_name("operator").type
                    right = comparison.child_by_field_name("right")
                    if (op, integer_value(right, source)) in (("<", 32), ("<=", 31)):
                        return comparison
        child = parent
    return None


# Bytes every shape needs: a division by 32 or 64 (or a shift by 5 or 6), or a `[32]` array.
_W007_BYTES = (b"/ 32", b"/32", b">> 5", b">>5", b"/ 64", b"/64", b">> 6", b">>6")
# A count also needs a name that starts a word of `_THREAD_COUNT_WORDS` on its divided side
# (`_names_thread_count`), or one of a warp count as its receiver (`_names_warp_count`).
_COUNT_NAMES = re.compile(_word_starts("block", "thread", "nthread", "cta", "warp", "nwarp", "numwarp").encode())


@needs(all_of(any_of(*_W007_BYTES), nocase(b"block", b"thread", b"cta", b"warp"), _COUNT_NAMES),
       all_of(b"__shared__", b"[32]"))
def check_per_warp_shared_sizing(source: SourceFile) -> list[Finding]:
    data = source.data
    has_counts = any(marker in data for marker in _W007_BYTES)
    has_slots = b"__shared__" in data and b"[32]" in data
    if not has_counts and not has_slots:
        return []
    scan = _PerWarpScan(source)
    if has_counts:
        scan.counts(source.tree.root_node, False)
        macros = macro_tree(source)
        if macros is not None:
            scan.counts(macros, True)
    if has_slots:
        scan.shared_slots()
    return scan.findings + scan.logical.findings()


# =========================================================================================
# W008 warpsize-not-constexpr

# A template argument `f<warpSize>` holds a type_identifier.
_WARP_SIZE_NAMES = '([(identifier) (type_identifier)] @name (#any-of? @name "warpSize" "C10_WARP_SIZE"))'
_LOCAL_WARP_SIZE = '(_ declarator: (identifier) @name (#eq? @name "warpSize"))'
_C10_HOST_ADVICE = "Read it at run time: `at::cuda::warp_size()` (or `hipDeviceGetAttribute(..., " \
                   "hipDeviceAttributeWarpSize, dev)`)"


@needs(b"warpSize", b"C10_WARP_SIZE")
def check_warpsize_not_constexpr(source: SourceFile) -> list[Finding]:
    if b"warpSize" not in source.data and b"C10_WARP_SIZE" not in source.data:
        return []
    root = source.tree.root_node
    findings = []
    spaces: dict[int, str] = {}
    shadowed: dict[int, bool] = {}
    for name in queries.nodes(CUDA, _WARP_SIZE_NAMES, root, "name"):
        text = source.node_text(name)
        if name.parent is not None and name.parent.type in _NAMING_ONLY:
            continue  # `#define C10_WARP_SIZE ...`, `#ifdef C10_WARP_SIZE`
        function = enclosing_function(name)
        if function is not None and function.id not in spaces:
            spaces[function.id] = function_space(function, source)
            # `int warpSize = prop.warpSize;` in a host function: a local of that name.
            shadowed[function.id] = bool(queries.nodes(CUDA, _LOCAL_WARP_SIZE, function, "name"))
        if function is not None and shadowed[function.id]:
            continue
        if _template_parameter(name, text, source):
            continue  # `template <int warpSize> struct warpReduce`: a constant of its own
        if text == "warpSize" and _project_member(name, source):
            continue  # `GpuConfig::warpSize`, a class's own `static constexpr int warpSize`
        if _names_a_member_through_macro(name, source):
            continue  # `SHOW_PROP(warpSize)` printing `#field` and `prop.field`: no variable read
        space = spaces[function.id] if function is not None else None
        if function is None and any(a.type == "ERROR" for a in ancestors_of(name)):
            space = "unknown"  # in code the parse could not place (a kernel it lost): no file scope known
        context = "constant" if _in_launch_bounds(name) else _code_context(name, source, False)
        if context == "constant":
            if text == "C10_WARP_SIZE" and space in ("device", "host-device", "unknown"):
                continue  # PyTorch defines a per-architecture constant for the device pass
            findings.append(at_node(source, name, f"`{text}` is not a constant expression on ROCm 7; "
                                                  "this needs one.", Fix.advice(CONSTANT_ADVICE)))
        elif space == "host" and not _in_lambda(name, source):
            if text == "warpSize":
                findings.append(at_node(source, name, "Host code reads `warpSize`, which ROCm defines only for "
                                                      "device code.", Fix.advice(HOST_ADVICE)))
            elif _defines_c10_warp_size(source) or _project_defines(source, text, name.start_byte):
                # the project's own definition (`#define C10_WARP_SIZE warpSize`), here or in a header
                findings.append(at_node(source, name, "Host code reads `C10_WARP_SIZE`, which is no device's "
                                                      "warp size on ROCm.", Fix.advice(_C10_HOST_ADVICE)))
            else:
                # PyTorch's: since 2.9 (the first with ROCm 7) the host pass reads the device's
                # width at run time (`at::cuda::warp_size()`); before, a fixed 64.
                findings.append(at_node(source, name, "Host code reads `C10_WARP_SIZE`: PyTorch 2.9 and later "
                                                      "read the device's warp size at run time, older ROCm builds "
                                                      "a fixed 64, wrong on 32-lane RDNA GPUs.",
                                        Fix.advice(_C10_HOST_ADVICE), severity=Severity.NOTE))
    return findings


def _project_member(name, source: SourceFile) -> bool:
    """Does `warpSize` name a project's own member, not HIP's builtin: qualified by a class or
    namespace (`GpuConfig::warpSize`, not `::warpSize`), or read in the body of a class that
    declares a member of that name where the ROCm build compiles it (`static constexpr int
    warpSize = 64;` and the `static_assert(warpSize == 64)` beside it)?"""
    parent = name.parent
    if parent is not None and parent.type == "qualified_identifier" and parent.child_by_field_name("name") == name:
        scope = parent.child_by_field_name("scope")
        if scope is not None and source.node_text(scope).strip(":"):
            return True
    model = source.rocm_path
    for ancestor in ancestors_of(name):
        if ancestor.type == "field_declaration_list" and any(
                source.node_text(n) == "warpSize" and (model is None or model.status(n.start_byte) is not Status.DEAD)
                for n in _field_declarators(ancestor)):
            return True  # (a member only the CUDA build declares leaves HIP's builtin in place)
    return False


def _field_declarators(body):
    """The declared names of a class body's own member declarations (also those in `#if`
    arms)."""
    for declaration in body.named_children:
        if declaration.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"):
            yield from _field_declarators(declaration)
        elif declaration.type == "field_declaration":
            for child in declaration.named_children:
                if child.type == "field_identifier":
                    yield child
                elif child.type == "init_declarator":
                    yield from (c for c in child.named_children if c.type == "field_identifier")


_FUNCTION_MACROS = """
[(preproc_function_def name: (identifier) @name parameters: (preproc_params) @params value: (preproc_arg) @body)
 (preproc_call directive: (preproc_directive) @directive argument: (preproc_arg) @undefined)]
"""
_WORD = re.compile(r"\w+")


def _code_of(body: str) -> str:
    """A macro body with its string and character literals and comments blanked (same
    length): the preprocessor substitutes no parameter there. One pass, left to right."""
    out = list(body)
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch in "\"'":
            j = i + 1
            while j < n and body[j] != ch and body[j] != "\n":
                j += 2 if body[j] == "\\" else 1
            end = min(j + 1, n)
        elif body.startswith("/*", i):
            j = body.find("*/", i + 2)
            end = n if j < 0 else j + 2
        elif body.startswith("//", i):
            j = body.find("\n", i)
            end = n if j < 0 else j
        else:
            i += 1
            continue
        out[i:end] = " " * (end - i)
        i = end
    return "".join(out)


def _names_a_member_through_macro(name, source: SourceFile) -> bool:
    """Is `name` an argument of a function-like macro of the file, the definition in effect
    there, that uses that parameter only as a member's or a qualified name (`prop.P`, `p->P`,
    `info::P`) or stringized (`#P`), maybe through another such macro? `GPU_PROP(warpSize)`
    printing `prop.warpSize` reads no `warpSize` variable."""
    arguments = name.parent
    if arguments is None or arguments.type != "argument_list" or arguments.parent is None \
            or arguments.parent.type != "call_expression":
        return False
    called = arguments.parent.child_by_field_name("function")
    if called is None or called.type != "identifier":
        return False
    given = [a for a in arguments.named_children if a.type != "comment"]
    position = next((i for i, a in enumerate(given) if a.id == name.id), None)
    if position is None:
        return False
    macros = source.memo.get("w008.function_macros")
    if macros is None:  # (once per file: many uses may ask)
        macros = source.memo["w008.function_macros"] = _function_macros(source)
    return _parameter_names_a_member(source.node_text(called), position, macros, name.start_byte, 0)


def _function_macros(source: SourceFile) -> dict[str, list]:
    """name -> [(offset, parameters, body)] of the file's function-like macros; an `#undef`
    as (offset, None, None)."""
    macros: dict[str, list] = {}
    for match in queries.matches(CUDA, _FUNCTION_MACROS, source.tree.root_node):
        if "name" in match:
            text = source.node_text(match["params"][0]).replace("\\\n", " ").strip().strip("()")
            params = [p.strip() for p in text.split(",")]
            macros.setdefault(source.node_text(match["name"][0]), []).append(
                (match["name"][0].start_byte, params, source.node_text(match["body"][0])))
        elif source.node_text(match["directive"][0]) == "#undef":
            undefined = match["undefined"][0]
            macros.setdefault(source.node_text(undefined).strip(), []).append((undefined.start_byte, None, None))
    return macros


def _in_effect(macros: dict, macro: str, offset: int) -> list[tuple[list[str], str]]:
    """The definitions of `macro` a use at `offset` may expand: those since its last `#undef`
    before it (several where `#if` arms define it each their way); none where there is none."""
    before = sorted((entry for entry in macros.get(macro, []) if entry[0] < offset), key=lambda entry: entry[0])
    found = []
    for _, params, body in before:
        found = [] if params is None else [*found, (params, body)]
    return found


def _parameter_names_a_member(macro: str, position: int, macros: dict, offset: int, depth: int) -> bool:
    definitions = _in_effect(macros, macro, offset)
    return bool(definitions) and depth <= 4 and all(
        _names_a_member_in(params, body, position, macros, offset, depth) for params, body in definitions)


def _names_a_member_in(params: list[str], body: str, position: int, macros: dict, offset: int, depth: int) -> bool:
    if position >= len(params) or params[position] in ("", "..."):
        return False
    parameter = params[position]
    text = _code_of(body)
    uses = [m for m in _WORD.finditer(text) if m.group() == parameter]
    if not uses:
        return False
    for use in uses:
        before = text[:use.start()].rstrip()
        if before.endswith("#") and not before.endswith("##"):
            continue  # `#P`: the name as a string
        if before.endswith("##") or re.search(r"[\w#]\s*$", before):
            return False  # pasted into another token, or after a word (`return P`)
        if (before.endswith(".") and not re.search(r"\d\.$", before)) or re.search(r"(?<![-])->$", before):
            continue  # `prop.P`, `p->P`
        if before.endswith("::") and re.search(r"[\w>]\s*::$", before):
            continue  # `info::P`, not the global `::P`
        caller = _enclosing_macro_call(text, use.start())
        if caller is None or not _parameter_names_a_member(caller[0], caller[1], macros, offset, depth + 1):
            return False
    return True


def _enclosing_macro_call(text: str, at: int) -> tuple[str, int] | None:
    """(callee, argument position) of the call whose argument list holds `text[at]` directly."""
    depth, commas = 0, 0
    for i in range(at - 1, -1, -1):
        ch = text[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                callee = re.search(r"([A-Za-z_]\w*)\s*$", text[:i])
                return (callee.group(1), commas) if callee else None
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
    return None


def _project_defines(source: SourceFile, name: str, offset: int) -> bool:
    """Does the project say anything about `name` where the ROCm build reads it here (a
    header that defines it, in any arm, or undefines it)? Then the value is the project's,
    judged as before, and only PyTorch's own is the note."""
    return source.build is not None and source.build.state(name, offset, True) is not None


def _defines_c10_warp_size(source: SourceFile) -> bool:
    return memoized(source, "defines_c10_warp_size", lambda s: any(
        d.kind == "define" and d.text.split("(", 1)[0].split(None, 1)[:1] == ["C10_WARP_SIZE"]
        for d in read_directives(s.data)))


def _template_parameter(name, text: str, source: SourceFile) -> bool:
    """Does a template around `name` declare a parameter of that name (or is `name` one)?"""
    for ancestor in ancestors_of(name):
        if ancestor.type == "template_declaration":
            parameters = ancestor.child_by_field_name("parameters")
            if parameters is not None and any(
                    source.node_text(n) == text for n in queries.nodes(CUDA, _TEMPLATE_PARAMETER, parameters, "name")):
                return True
    return False


_TEMPLATE_PARAMETER = "(_ declarator: (identifier) @name)"
_NAMING_ONLY = frozenset({"preproc_def", "preproc_function_def", "preproc_ifdef", "preproc_defined"})


def _in_launch_bounds(node) -> bool:
    return any(a.type == "launch_bounds" for a in ancestors_of(node))


# =========================================================================================
# W009 arch-macro-warp-size

_WAVEFRONT_MACRO_ADVICE = ("Read the size where it is known: `warpSize` in device code, "
                           "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)` on the host; "
                           "in `#if`, test `defined(__GFX8__) || defined(__GFX9__)`")
_HOST_USE_ADVICE = ("Query the size on the host: `hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`; "
                    "for `__launch_bounds__` use the upper bound 64")


@needs(b"__AMDGCN_WAVEFRONT_SIZE")
def check_arch_macro_warp_size(source: SourceFile) -> list[Finding]:
    """Every `__AMDGCN_WAVEFRONT_SIZE` outside comments and strings (in code, `#if`, `#define`)."""
    data = source.data
    if b"__AMDGCN_WAVEFRONT_SIZE" not in data:
        return []
    findings = []
    root = source.tree.root_node
    at = data.find(b"__AMDGCN_WAVEFRONT_SIZE")
    while at != -1:
        end = at + len(b"__AMDGCN_WAVEFRONT_SIZE")
        if data[end:end + 2] == b"__":
            end += 2
        node = root.descendant_for_byte_range(at, end)
        if node is not None and node.type not in ("comment", "string_content", "string_literal",
                                                  "system_lib_string") and not _kept_from_newer_llvm(node, source):
            written = data[at:end].decode()
            findings.append(finding(source, at, end,
                                    f"`{written}` is deprecated and gone from newer LLVM (ROCm 7.2).",
                                    Fix.advice(_WAVEFRONT_MACRO_ADVICE)))
        at = data.find(b"__AMDGCN_WAVEFRONT_SIZE", end)
    return findings


_WAVEFRONT_MACROS = frozenset({"__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"})  # removed together
_DIRECTIVES = frozenset({"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"})


def _kept_from_newer_llvm(node, source: SourceFile) -> bool:
    """Is this mention one a compiler without the macro never compiles, with another way taken
    then? The `defined(__AMDGCN_WAVEFRONT_SIZE)` test itself and the code of its arm, when the
    chain has an `#elif`/`#else` for when it is gone; the `#else` of an `#ifndef` test."""
    child = node
    for parent in ancestors_of(node):
        if parent.type in _DIRECTIVES:
            test = parent.child_by_field_name("condition") or parent.child_by_field_name("name")
            alternative = parent.child_by_field_name("alternative")
            requires, excludes = _tests_defined(parent, test, source)
            if child == alternative:
                if excludes:
                    return True  # `#ifndef X ... #else <use> #endif`
            elif requires and alternative is not None:
                return True  # the test, or its arm: `#if defined(X) <use> #elif ... #endif`
            elif excludes and child == test and parent.named_child_count > 1:
                return True  # `#ifndef X <the alternative> #endif`: the test alone
        child = parent
    return False


def _tests_defined(directive, test, source: SourceFile) -> tuple[bool, bool]:
    """(the arm needs the wavefront macro defined, the arm needs it undefined) for one directive."""
    if test is None:
        return False, False
    if directive.type in ("preproc_ifdef", "preproc_elifdef"):
        named = source.node_text(test) in _WAVEFRONT_MACROS
        negated = directive.children[0].type in ("#ifndef", "#elifndef")
        return named and not negated, named and negated
    test = strip_parens(test)
    if test.type == "unary_expression" and test.child_by_field_name("operator").type == "!":
        return False, _requires_defined(test.child_by_field_name("argument"), source)
    return _requires_defined(test, source), False


def _requires_defined(test, source: SourceFile) -> bool:
    """`defined(X)`, or `defined(X) && ...`, for one of the wavefront macros."""
    test = strip_parens(test)
    if test is None:
        return False
    if test.type == "preproc_defined":
        return any(source.node_text(c) in _WAVEFRONT_MACROS for c in test.named_children)
    if test.type == "binary_expression" and test.child_by_field_name("operator").type == "&&":
        return _requires_defined(test.child_by_field_name("left"), source) or \
            _requires_defined(test.child_by_field_name("right"), source)
    return False


def check_arch_macro_warp_size_on_host(index: ProjectIndex) -> list[Finding]:
    """A warp size picked by architecture macros, used by host code: the host pass defines no
    `__GFX9__` (it sees the `#else` value) and only a placeholder `__AMDGCN_WAVEFRONT_SIZE`."""
    chosen: dict[str, list[WarpSizeDefinition]] = {}
    for definition in index.warp_size_definitions:
        if definition.arch_macros and not definition.local and definition.status is not Status.DEAD:
            chosen.setdefault(definition.name, []).append(definition)
    findings = []
    for use in index.warp_size_uses_of(chosen.keys()):
        definitions = [d for d in chosen.get(use.name, ()) if use.may_see(d)]
        if not definitions or not use.host or use.definition is not None or use.status is Status.DEAD \
                or use.written is not None:
            continue
        macro = definitions[0].arch_macros[0]
        findings.append(Finding(
            location=use.location,
            message=f"Host code uses `{use.name}`, chosen by `{macro}`, which only the device pass sees.",
            fix=Fix.advice(_HOST_USE_ADVICE),
            related=tuple(Related(d.location, f"`{d.name}` is chosen by `{', '.join(d.arch_macros)}` here")
                          for d in definitions),
            matched=use.name, file_digest=use.file_digest,
        ))
    return findings


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _WRITES,
    _LAMBDAS,
    _SHARED_ARRAYS,
    _TEMPLATE_ARGUMENT_NAMES,
    _WARP_SIZE_NAMES,
    _LOCAL_WARP_SIZE,
)
