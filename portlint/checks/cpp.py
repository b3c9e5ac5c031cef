"""Small helpers for reading C/C++/CUDA trees, shared by the check modules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from portlint.nesting import bounded, left_chain

_INTEGER = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlLzZ]*)$")


def integer_value(node, source) -> int | None:
    """The value of an integer literal node (`32`, `0x20u`, `1'024`), else None."""
    if node is None or node.type != "number_literal":
        return None
    m = _INTEGER.match(source.node_text(node))
    if not m:
        return None
    digits = m.group(1).replace("'", "")
    try:
        return int(digits, 0) if not (digits.startswith("0") and digits.isdigit() and len(digits) > 1) else int(digits, 8)
    except ValueError:
        return None


def integer_suffix(node, source) -> str:
    m = _INTEGER.match(source.node_text(node))
    return m.group(2).lower() if m else ""


def callee_name(call, source) -> str | None:
    """`f` for `f(...)`, `f<T>(...)`, `ns::f(...)`; None for anything else."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return None
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name")
    if fn is not None and fn.type == "qualified_identifier":
        fn = fn.child_by_field_name("name")
    if fn is None or fn.type != "identifier":
        return None
    return source.node_text(fn)


def arguments(call) -> list:
    args = call.child_by_field_name("arguments")
    return [] if args is None else [a for a in args.named_children if a.type != "comment"]


def strip_parens(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def ancestors_of(node):
    """The parent of `node`, its parent, ... up to the root, in time linear in the levels
    climbed (see `queries.ancestors`)."""
    return queries.ancestors(node)


def named_descendants(node):
    """`node` and every named node below it (order not kept)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.named_children)


def enclosing_function(node):
    """The nearest `function_definition` around `node` (lambdas are looked through), else None."""
    found = queries.nearest_ancestor(node, "function_definition")
    if found is not NotImplemented:
        return found
    return next((a for a in ancestors_of(node) if a.type == "function_definition"), None)


# The smallest units a finding can stand for: a statement, a declaration, a loop's or a
# branch's condition (a `for` header's condition and update together).
_STATEMENT_UNITS = frozenset({
    "declaration", "expression_statement", "field_declaration", "return_statement", "condition_clause",
    "for_statement", "do_statement",
})


def statement_of(node):
    """The statement, declaration or condition `node` stands in, within its block (else None:
    a default argument, a template argument)."""
    for parent in ancestors_of(node):
        if parent.type in _STATEMENT_UNITS:
            return parent
        if parent.type in ("compound_statement", "function_definition", "translation_unit"):
            return None
    return None


# ---- integer constants -----------------------------------------------------------------
# Imported here, not at the top, so that this section stays an append to the module.
from portlint import queries  # noqa: E402
# `left op right` as C computes it on integers (None where C leaves it undefined), shared with `#if`.
from portlint.build_model.expressions import c_operator  # noqa: E402
from portlint.rocm_path import Status  # noqa: E402
from portlint.triggers import any_of  # noqa: E402

_CONSTANT_DEFINITIONS = """
[(preproc_def name: (identifier) @name value: (preproc_arg) @value) @definition
 (declaration (type_qualifier) declarator: (init_declarator
    declarator: (identifier) @name value: (_) @value)) @definition
 (enumerator name: (identifier) @name value: (_) @value) @definition]
"""
_CONST_QUALIFIERS = frozenset({"const", "constexpr"})


class _Snippet:
    """Bytes parsed on their own (a macro body), read like a SourceFile by the helpers."""

    def __init__(self, data: bytes):
        self.data = data

    def node_text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    @classmethod
    def expression(cls, text: bytes) -> "tuple[_Snippet, object] | None":
        """`text` parsed as the value of a declaration at file scope, and that value's node;
        None when it does not parse."""
        snippet = cls(b"int __portlint_value = (" + text + b"\n);")
        root = queries.parse("cuda", snippet.data).root_node
        if root.has_error:
            return None
        # The first declaration is the snippet's own: the value of its first declarator.
        # (Read from the tree, not with a query: a query costs 10 ms to compile, once per process.)
        declaration = root.named_children[0] if root.named_child_count else None
        if declaration is None or declaration.type != "declaration":
            return None
        declarator = declaration.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value") if declarator is not None and declarator.type == "init_declarator" else None
        return None if value is None else (snippet, value)


class IntegerConstants:
    """Integer constants of one file, as a ROCm build sees them.

    Knows `#define N <expr>`, `enum { N = <expr> }`, and `const`/`constexpr` variables at
    file or namespace scope or earlier in the function where they are used. Expressions of
    literals, such names, `+ - * / % << >> & | ^`, parentheses and casts are evaluated.
    Definitions in code dead on ROCm are ignored; a name with two different values, or one
    the function redeclares (a parameter, a non-const local), is unknown (None).
    Names the file leaves to the headers it includes: see `OpenConstants`.
    """

    def __init__(self, source):
        self.source = source
        self._by_name: dict[str, list[tuple[object, object]]] | None = None  # `_live_definitions`
        self._scoped: dict[str, list[tuple[object, object, object]]] = {}  # `_definitions`, by name
        self._declared: dict[tuple[int, str], bool] = {}  # (function id, name) -> `_declares`
        self._macro_values: dict[int, int | None] = {}

    def value(self, node, used: list | None = None) -> int | None:
        """The value of expression `node` where it stands; `used` collects definition nodes read."""
        return self._evaluate(node, self.source, node, used, frozenset())

    def is_number(self, name: str) -> bool:
        """Is `name` a macro the file defines once where the ROCm build compiles it, as one
        number literal (`#define ZERO 0.0f`: a float too, which `value` does not evaluate)?"""
        definitions = self._live_definitions().get(name, [])
        if len(definitions) != 1 or definitions[0][0].type != "preproc_def":
            return False
        parsed = _Snippet.expression(self.source.node_text(definitions[0][1]).encode())
        value = strip_parens(parsed[1]) if parsed is not None else None
        if value is not None and value.type == "unary_expression" and parsed[0].node_text(
                value.child_by_field_name("operator")) in ("-", "+"):
            value = strip_parens(value.child_by_field_name("argument"))  # `#define NEG_ONE -1`
        return value is not None and value.type == "number_literal"

    # ---- definitions --------------------------------------------------------------
    def _live_definitions(self) -> dict[str, list[tuple[object, object]]]:
        """name -> [(definition node, value node)], live on ROCm."""
        if self._by_name is None:
            self._by_name = {}
            model = self.source.rocm_path
            for match in queries.matches("cuda", _CONSTANT_DEFINITIONS, self.source.tree.root_node):
                definition, name, value = match["definition"][0], match["name"][0], match["value"][0]
                if definition.type == "declaration" and not _is_const(definition, self.source):
                    continue
                if model is not None and model.status(definition.start_byte) is Status.DEAD:
                    continue
                self._by_name.setdefault(self.source.node_text(name), []).append((definition, value))
        return self._by_name

    def _definitions(self, name: str) -> list[tuple[object, object, object]]:
        """[(definition, value, enclosing function or None)] of `name`, live on ROCm. The
        function is found only for the names read: most constants of a file are never
        looked up."""
        if name not in self._scoped:
            self._scoped[name] = [
                (definition, value, None if definition.type == "preproc_def" else enclosing_function(definition))
                for definition, value in self._live_definitions().get(name, ())]
        return self._scoped[name]

    def _definitions_of(self, name: str, use) -> list[tuple[object, object]]:
        """The definitions `name` may refer to at `use`: locals first, then file scope."""
        candidates = self._definitions(name)
        if not candidates:
            return []  # most names read are no constant: skip finding the function
        function = enclosing_function(use)
        local = [(d, v) for d, v, f in candidates
                 if function is not None and f is not None and f.id == function.id and d.start_byte < use.start_byte]
        if local:
            return local
        file_level = [(d, v) for d, v, f in candidates if f is None]
        hideable = any(d.type != "preproc_def" for d, _ in file_level)
        if hideable and function is not None and self._declares(function, name):
            # A parameter or a non-const local hides a file-level constant (not a macro).
            return [(d, v) for d, v in file_level if d.type == "preproc_def"]
        return file_level

    def _declares(self, function, name: str) -> bool:
        """Is `name` a parameter or a local of `function` that is no local constant?"""
        key = (function.id, name)
        if key not in self._declared:
            definitions = self._definitions(name)
            is_local_constant = any(f is not None and f.id == function.id for _, _, f in definitions)
            self._declared[key] = not is_local_constant and _declares_variable(self.source, function, name)
        return self._declared[key]

    def _resolve(self, name: str, use, used, resolving: frozenset[str]) -> int | None:
        if name in resolving:
            return None  # `#define A B` / `#define B A`
        values = set()
        definitions = self._definitions_of(name, use)
        for definition, value_node in definitions:
            if definition.type == "preproc_def":
                value = self._macro_value(value_node, name, resolving)
            else:
                value = self._evaluate(value_node, self.source, value_node, used, resolving | {name})
            values.add(value)
        if len(values) != 1 or None in values:
            return None
        if used is not None:
            used.extend(d for d, _ in definitions)
        return values.pop()

    def _macro_value(self, arg, name: str, resolving: frozenset[str]) -> int | None:
        """A macro body is text: parse it on its own as an expression."""
        if arg.id not in self._macro_values:
            self._macro_values[arg.id] = self.text_value(self.source.data[arg.start_byte:arg.end_byte],
                                                         resolving | {name})
        return self._macro_values[arg.id]

    def text_value(self, text: bytes, resolving: frozenset[str] = frozenset()) -> int | None:
        """The value of expression `text` (a macro body, a macro's expansion) at file scope:
        its names resolve as outside any function."""
        parsed = _Snippet.expression(text)
        if parsed is None:
            return None
        snippet, value = parsed
        return self._evaluate(value, snippet, self.source.tree.root_node, None, resolving)

    # ---- expressions --------------------------------------------------------------
    def _evaluate(self, node, text, use, used, resolving: frozenset[str]) -> int | None:
        return evaluate(node, text, lambda name: self._resolve(text.node_text(name), use, used, resolving))


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _word_spans(data: bytes, name: str, start: int = 0, end: int | None = None):
    """Where `name` is written as a whole word in bytes `start` to `end` of `data`: (start,
    end) of each. A byte search, not a regex: a pattern per name cost a compile per name, and
    scans ask for thousands of names."""
    needle, stop, size = name.encode(), len(data) if end is None else end, len(data)
    if not needle:
        return
    at = data.find(needle, start, stop)
    while at != -1:
        after = at + len(needle)
        if (at == 0 or data[at - 1] not in _WORD_BYTES) and (after >= size or data[after] not in _WORD_BYTES):
            yield at, after
        at = data.find(needle, at + 1, stop)


def identifiers_named(source, name: str, start: int = 0, end: int | None = None, node_type: str = "identifier"):
    """The `node_type` nodes `name` written in bytes `start` to `end` of the main tree (a byte
    search: a hit next to a letter, digit or `_` is part of a longer word and is skipped)."""
    root = source.tree.root_node
    for at, after in _word_spans(source.data, name, start, end):
        node = root.descendant_for_byte_range(at, after)
        if node is not None and node.type == node_type and node.start_byte == at and node.end_byte == after:
            yield node


# CUB's warp-level templates and the position of the template argument that gives their
# logical warp's width (`WarpReduce<T, 32>`; without it, the hardware warp).
CUB_LOGICAL_WARP_ARGUMENT = {
    "WarpReduce": 1, "WarpScan": 1, "WarpExchange": 2, "WarpMergeSort": 2, "WarpLoad": 3, "WarpStore": 3,
}
_TEMPLATE_OF_NAME = {"type_identifier": "template_type", "identifier": "template_function"}


def cub_warp_templates(source) -> list[tuple[str, object]]:
    """(name, template argument list) of each `WarpReduce<...>`, `cub::WarpScan<...>`, ... in
    the main tree, in source order: found where those names occur in the text."""
    def find(source) -> list[tuple[str, object]]:
        found = []
        for name in CUB_LOGICAL_WARP_ARGUMENT:
            for name_type, template_type in _TEMPLATE_OF_NAME.items():
                for node in identifiers_named(source, name, node_type=name_type):
                    template = node.parent
                    if template.type == template_type and template.child_by_field_name("name") == node:
                        args = template.child_by_field_name("arguments")
                        if args is not None and args.type == "template_argument_list":
                            found.append((node.start_byte, name, args))
        return [(name, args) for _, name, args in sorted(found, key=lambda f: f[0])]
    return memoized(source, "cub_warp_templates", find)


def function_declarator(function):
    """The `function_declarator` of a definition, below its pointer or reference declarators."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def function_name(function, source) -> str | None:
    """The plain name a definition gives its function (`k` of `ns::k<T>`), else None."""
    declarator = function_declarator(function)
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    while name is not None and name.type in ("qualified_identifier", "template_function"):
        name = name.child_by_field_name("name")
    return source.node_text(name) if name is not None and name.type in ("identifier", "field_identifier") else None


def lone_templates(source, offsets) -> list[tuple[int, int, str]]:
    """The function templates around `offsets` (findings) whose name the file writes only once,
    at their definition, as (start, end, name): nothing here calls or instantiates them, and
    hip-clang compiles a template's dependent code only where something does."""
    found: dict[int, tuple[int, int, str]] = {}
    root = source.tree.root_node
    for offset in offsets:
        node = root.descendant_for_byte_range(offset, offset)
        function = enclosing_function(node) if node is not None else None
        if function is None or function.id in found:
            continue
        template = function.parent
        name = function_name(function, source)
        if template is None or template.type != "template_declaration" or name is None \
                or name.startswith("operator") or words_named(source.data, name) != 1:
            continue
        found[function.id] = (template.start_byte, template.end_byte, name)
    return list(found.values())


def words_named(data: bytes, name: str) -> int:
    """How often `name` is written as a word (comments and strings included)."""
    return sum(1 for _ in _word_spans(data, name))


def functions_by_name(source) -> dict[str, list]:
    """The file's function definitions by their plain name, in source order."""
    def find(source) -> dict[str, list]:
        found: dict[str, list] = {}
        for function in queries.nodes("cuda", "(function_definition) @f", source.tree.root_node, "f"):
            name = function_name(function, source)
            if name is not None:
                found.setdefault(name, []).append(function)
        return found
    return memoized(source, "cpp.functions_by_name", find)


def template_instances(source, function, parameter: str) -> list | None:
    """The arguments this file's instantiations of `function`'s template give its template
    parameter `parameter` (`k<16><<<g, b>>>(...)`, `template __global__ void k<half>(...)`,
    a call that names its arguments), as nodes in source order, None for one that leaves it
    to a default or to deduction; None where `function` is no template with that parameter."""
    template = function.parent if function is not None else None
    if template is None or template.type != "template_declaration":
        return None
    parameters = template.child_by_field_name("parameters")
    position = next((i for i, p in enumerate(c for c in (parameters.named_children if parameters else ())
                                             if c.type != "comment")
                     if any(n.type in ("identifier", "type_identifier") and source.node_text(n) == parameter
                            for n in p.named_children)), None)
    declarator = function_declarator(function)
    own = declarator.child_by_field_name("declarator") if declarator is not None else None
    if position is None or own is None or own.type != "identifier":
        return None
    found = []
    for node in identifiers_named(source, source.node_text(own)):
        instance = node.parent
        if instance is None or instance.type != "template_function" or instance.child_by_field_name("name") != node:
            continue
        given = [a for a in instance.child_by_field_name("arguments").named_children if a.type != "comment"]
        found.append(given[position] if position < len(given) else None)
    return found


def _declares_variable(source, function, name: str) -> bool:
    """Does `function` declare a variable or parameter `name` (`int name`, `T name = …`,
    `T& name`)?"""
    for identifier in identifiers_named(source, name, function.start_byte, function.end_byte):
        parent = identifier.parent
        if parent.type == "reference_declarator":  # only in a parameter
            identifier, parent = parent, parent.parent
            if parent is None or parent.type != "parameter_declaration":
                continue
        elif parent.type not in ("init_declarator", "declaration", "parameter_declaration"):
            continue
        if any(d.id == identifier.id for d in parent.children_by_field_name("declarator")):
            return True
    return False


def _is_const(declaration, source) -> bool:
    return any(c.type == "type_qualifier" and source.node_text(c) in _CONST_QUALIFIERS for c in declaration.children)


# Every `#include` with its path (`<a.h>`, `"a.h"`, a macro): shared by the rules that read includes.
INCLUDES = "(preproc_include path: (_) @path) @include"


def includes(source):
    """(the directive, its path node) of each `#include` of the file, in order."""
    for match in queries.matches("cuda", INCLUDES, source.tree.root_node):
        yield match["include"][0], match["path"][0]


def include_path(path_node, source) -> str:
    """`cublas_v2.h` for the path of `#include <cublas_v2.h>` or `#include "cublas_v2.h"`."""
    return source.node_text(path_node).strip().strip('<>"').strip()


# ---- macro bodies as code ----------------------------------------------------------------
_MACRO_BODIES = ("[(preproc_def value: (preproc_arg) @body) "
                 "(preproc_function_def value: (preproc_arg) @body)] @macro")
_BLANK_BUT_NEWLINES = bytes(b if b == ord("\n") else ord(" ") for b in range(256))


def macro_bodies_root(source, needles: tuple[bytes, ...]):
    """The root of one parse of the macro bodies that contain one of `needles`, at the
    bodies' own byte offsets; None when no body qualifies.

    Macro bodies are opaque text in the main tree. Here everything else is blanked out
    (line breaks stay: they end `//` comments) and each body is preceded by a `;` written
    over its `#`, so nodes found in this tree can be reported and edited like nodes of
    the main tree (`#define LANE_ID (threadIdx.x & 31)`). They have no enclosing function.
    """
    if b"#define" not in source.data:
        return None
    bodies = [m for m in queries.matches("cuda", _MACRO_BODIES, source.tree.root_node)
              if any(n in source.data[m["body"][0].start_byte:m["body"][0].end_byte] for n in needles)]
    if not bodies:
        return None
    data = source.data
    shadow = bytearray(data.translate(_BLANK_BUT_NEWLINES))
    spans = []
    for match in bodies:
        body, macro = match["body"][0], match["macro"][0]
        shadow[macro.start_byte] = ord(";")
        shadow[body.start_byte:body.end_byte] = data[body.start_byte:body.end_byte]
        (row, column), end, end_point = macro.start_point, body.end_byte, body.end_point
        spans.append((macro.start_byte, macro.start_byte + 1, (row, column), (row, column + 1)))
        line_break = 2 if data[end:end + 2] == b"\r\n" else 1 if data[end:end + 1] == b"\n" else 0
        if line_break:  # it ends a `//` comment in the body
            end, end_point = end + line_break, (end_point[0] + 1, 0)
        spans.append((body.start_byte, end, body.start_point, end_point))
    # Only the bodies are parsed: the blanks between them would be lexed for nothing.
    spans.sort()
    return queries.parse_ranges("cuda", bytes(shadow), spans).root_node


# ---- per-file results shared by several checks -------------------------------------------
def memoized(source, key: str, compute):
    """`compute(source)`, run once per file and kept on the source for the other checks."""
    if key not in source.memo:
        source.memo[key] = compute(source)
    return source.memo[key]


_ALL_CALLS = "(call_expression function: (_) arguments: (argument_list)) @call"


def calls(source) -> list:
    """Every call in the file's main tree, in source order (one query, shared)."""
    return memoized(source, "calls", lambda s: queries.nodes("cuda", _ALL_CALLS, s.tree.root_node, "call"))


def calls_by_name(source) -> dict[str, list]:
    """name -> the calls of that function in the main tree, in source order.

    `f(...)`, `ns::f(...)` and `f<T>(...)` all count as calls of `f` (see `callee_name`).
    """
    def build(s) -> dict[str, list]:
        index: dict[str, list] = {}
        for call in calls(s):
            name = callee_name(call, s)
            if name is not None:
                index.setdefault(name, []).append(call)
        return index
    return memoized(source, "calls_by_name", build)


def calls_named(source, name: str) -> list:
    """`calls_by_name(source).get(name, [])`, found from the bytes of `name`: cheaper for one
    name than indexing every call of the file."""
    found = []
    for identifier in identifiers_named(source, name):
        # Climb `ns::name` and `name<T>` (as `callee_name` reads them) to the called function.
        function, parent = identifier, identifier.parent
        if parent.type == "qualified_identifier" and parent.child_by_field_name("name") == function:
            function, parent = parent, parent.parent
        if parent.type == "template_function" and parent.child_by_field_name("name") == function:
            function, parent = parent, parent.parent
        if parent.type != "call_expression" or parent.child_by_field_name("function") != function:
            continue
        if has_argument_list(parent):
            found.append(parent)
    return sorted(found, key=lambda call: (call.start_byte, -call.end_byte))


def has_argument_list(call) -> bool:
    """A call as `calls` reads calls: `f(...)`, not `T{...}`."""
    arguments_node = call.child_by_field_name("arguments")
    return arguments_node is not None and arguments_node.type == "argument_list"


def macro_calls_by_name(source) -> dict[str, list]:
    """Like `calls_by_name`, for calls written in `#define` bodies (read from `macro_tree`).

    The nodes stand at the bodies' own offsets (see `macro_bodies_root`) and have no
    enclosing function.
    """
    def build(s) -> dict[str, list]:
        root = macro_tree(s)
        index: dict[str, list] = {}
        if root is not None:
            for call in queries.nodes("cuda", _ALL_CALLS, root, "call"):
                name = callee_name(call, s)
                if name is not None:
                    index.setdefault(name, []).append(call)
        return index
    return memoized(source, "macro_calls_by_name", build)


_DEFINED_FUNCTIONS = """
(function_definition declarator: [
   (function_declarator declarator: [(identifier) (field_identifier)] @name)
   (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name))
   (reference_declarator (function_declarator declarator: [(identifier) (field_identifier)] @name))])
"""


def defined_functions(source) -> frozenset[str]:
    """Names of the functions this file defines (a project's own `__vadd4` is no CUDA intrinsic)."""
    def build(s) -> frozenset[str]:
        names = queries.nodes("cuda", _DEFINED_FUNCTIONS, s.tree.root_node, "name")
        return frozenset(s.node_text(n) for n in names)
    return memoized(source, "defined_functions", build)


_HIP_VERSION_MACRO = re.compile(r"HIP_VERSION\w*|ROCM_VERSION\w*|TORCH_HIP_VERSION")


def under_hip_version_test(node, source) -> bool:
    """Is `node` in an arm of an `#if` that tests the HIP or ROCm version
    (`#if !defined(__HIPCC__) || HIP_VERSION < 40400000`)? Such code was written for the
    ROCm releases it names: the model keeps it live (the version is unknown), but a rule
    about what a ROCm release lacks should not second-guess it. Read from the ROCm-path
    model's conditions (the names each `#if`/`#elif` tests)."""
    model = source.rocm_path
    return model is not None and any(
        condition.node.start_byte <= node.start_byte < condition.node.end_byte
        and any(_HIP_VERSION_MACRO.fullmatch(name) for name in condition.macros)
        for condition in model.conditions if condition.directive in ("#if", "#elif"))


# Trigger tokens of code `in_device_code` accepts: the qualifiers are keywords of the grammar.
DEVICE_CODE = any_of(b"__device__", b"__global__")


def in_device_code(node) -> bool:
    """Is `node` in a function marked `__device__` or `__global__` (`__host__ __device__` too)?"""
    function = enclosing_function(node)
    return function is not None and any(c.type in ("__device__", "__global__") for c in function.children)


# ---- declared types of variables ---------------------------------------------------------
from typing import NamedTuple  # noqa: E402


class Declared(NamedTuple):
    """What a declaration says about a variable, enough to tell a `float*` from an `int*`."""

    type: str  # as written, without qualifiers or `struct`: "float", "__half2", "texture<float, 1>"
    depth: int  # pointer and array levels: `float* p` and `float s[8]` are 1, `float** q` is 2


_ELABORATED = re.compile(r"^(?:struct|class|enum|union|typename)\s+")
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})


def declared_type_name(type_node, source) -> str:
    """A type as `Declared` holds it: one line, without `struct`/`union`/`class`/`typename`."""
    return _ELABORATED.sub("", " ".join(source.node_text(type_node).split()))


def _declarator_name(declarator):
    """(identifier node, pointer/array depth) of one declarator; None for function declarators."""
    depth = 0
    while declarator is not None and declarator.type != "identifier":
        kind = declarator.type
        if kind in ("pointer_declarator", "array_declarator"):
            depth += 1
            declarator = declarator.child_by_field_name("declarator")
        elif kind == "init_declarator":
            declarator = declarator.child_by_field_name("declarator")
        elif kind in ("reference_declarator", "parenthesized_declarator"):
            declarator = next(iter(declarator.named_children), None)
        else:
            return None  # a function, a function pointer, a structured binding
    return (declarator, depth) if declarator is not None else None


# Node types `_declarator_name` looks through, from a declarator down to its identifier.
_DECLARATOR_WRAPPERS = frozenset({
    "pointer_declarator", "array_declarator", "init_declarator", "reference_declarator", "parenthesized_declarator",
})
_DECLARATION_TYPES = frozenset({"declaration", "parameter_declaration", "optional_parameter_declaration"})


def _declared_variables(source, name: str) -> dict[int | None, Declared | None]:
    """function id (None: file scope) -> the declared type of `name` there; None where it has
    two.

    A declaration of `name` has `name` as an identifier in one of its declarators: each
    identifier `name` climbs through its declarator to the declaration (a query over every
    declaration of the file cost more).
    """
    scopes: dict[int | None, Declared | None] = {}
    for identifier in identifiers_named(source, name):
        declarator, declaration = identifier, identifier.parent
        while declaration is not None and declaration.type in _DECLARATOR_WRAPPERS:
            declarator, declaration = declaration, declaration.parent
        if declaration is None or declaration.type not in _DECLARATION_TYPES:
            continue
        type_node = declaration.child_by_field_name("type")
        if type_node is None or not type_node.is_named:
            continue  # not a declaration of a variable with a type
        if not any(d.id == declarator.id for d in declaration.children_by_field_name("declarator")):
            continue  # the name stands elsewhere in it: a size, an initial value
        named = _declarator_name(declarator)
        if named is None or named[0].id != identifier.id:
            continue  # e.g. a function declarator
        function = enclosing_function(declaration)
        if function is None and declaration.type != "declaration":
            continue  # a parameter of a prototype names nothing outside it
        found = Declared(declared_type_name(type_node, source), named[1])
        scope = function.id if function is not None else None
        scopes[scope] = found if scopes.get(scope, found) == found else None
    return scopes


def declared_type(source, identifier) -> Declared | None:
    """The declared type of the variable `identifier` names: a local or parameter of the
    enclosing function first, then a file-scope variable. None when unknown or ambiguous."""
    name = source.node_text(identifier)
    key = ("declared_variables", name)
    if key not in source.memo:
        source.memo[key] = _declared_variables(source, name)
    scopes = source.memo[key]
    function = enclosing_function(identifier)
    if function is not None and function.id in scopes:
        return scopes[function.id]
    return scopes.get(None)


def _descriptor_type(descriptor, source) -> Declared | None:
    """`float*` in a cast: (type, pointer levels) of a `type_descriptor`."""
    type_node = descriptor.child_by_field_name("type")
    if type_node is None:
        return None
    depth, declarator = 0, descriptor.child_by_field_name("declarator")
    while declarator is not None:
        if declarator.type in ("abstract_pointer_declarator", "abstract_array_declarator"):
            depth += 1
        elif declarator.type != "abstract_reference_declarator":
            return None
        declarator = declarator.child_by_field_name("declarator")
    return Declared(declared_type_name(type_node, source), depth)


@bounded(None)
def expression_type(source, node) -> Declared | None:
    """The type of simple expressions from declarations and casts: `p`, `&s[i]`, `*q`,
    `p + i`, `(float*)x`, `reinterpret_cast<float*>(x)`. None for anything else."""
    node = strip_parens(node)
    if node is None:
        return None
    kind = node.type
    if kind == "identifier":
        return declared_type(source, node)
    if kind == "pointer_expression":  # `&x` or `*p`
        inner = expression_type(source, node.child_by_field_name("argument"))
        if inner is None:
            return None
        step = 1 if node.child_by_field_name("operator").type == "&" else -1
        return inner._replace(depth=inner.depth + step) if inner.depth + step >= 0 else None
    if kind == "subscript_expression":
        inner = expression_type(source, node.child_by_field_name("argument"))
        return inner._replace(depth=inner.depth - 1) if inner is not None and inner.depth > 0 else None
    if kind == "binary_expression" and node.child_by_field_name("operator").type in ("+", "-"):
        left = expression_type(source, node.child_by_field_name("left"))
        if left is not None and left.depth > 0:
            return left  # pointer arithmetic keeps the pointer's type
        right = expression_type(source, node.child_by_field_name("right"))
        is_sum = node.child_by_field_name("operator").type == "+"
        return right if is_sum and right is not None and right.depth > 0 else None
    if kind == "cast_expression":
        descriptor = node.child_by_field_name("type")
        return _descriptor_type(descriptor, source) if descriptor is not None else None
    if kind == "call_expression":
        function = node.child_by_field_name("function")
        if function is not None and function.type == "template_function" and callee_name(node, source) in _CASTS:
            descriptors = [c for c in function.child_by_field_name("arguments").named_children
                           if c.type == "type_descriptor"]
            return _descriptor_type(descriptors[0], source) if len(descriptors) == 1 else None
    return None


# ---- sizes of types (`sizeof`, `__shared__` arrays) ---------------------------------------
# Sizes on the device (LP64 on both platforms); HIP's vector and half types match CUDA's.
_BASIC_SIZES = {
    "char": 1, "bool": 1, "char8_t": 1, "short": 2, "char16_t": 2, "int": 4, "char32_t": 4,
    "wchar_t": 4, "long": 8, "long long": 8, "float": 4, "double": 8,
}
_VECTOR_BASES = {
    "char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8,
    "longlong": 8, "ulonglong": 8, "float": 4, "double": 8,
}
TYPE_SIZES = {
    **{f"{prefix}int{bits}_t": bits // 8 for prefix in ("", "u") for bits in (8, 16, 32, 64)},
    "size_t": 8, "ssize_t": 8, "ptrdiff_t": 8, "intptr_t": 8, "uintptr_t": 8,
    **{f"{base}{n}": size * n for base, size in _VECTOR_BASES.items() for n in (1, 2, 3, 4)},
    "half": 2, "__half": 2, "half2": 4, "__half2": 4, "_Float16": 2, "__fp16": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "__hip_bfloat16": 2, "hip_bfloat16": 2, "__bf16": 2,
    "__nv_bfloat162": 4, "nv_bfloat162": 4, "__hip_bfloat162": 4,
    "c10::Half": 2, "at::Half": 2, "c10::BFloat16": 2, "at::BFloat16": 2,
    "__nv_fp8_e4m3": 1, "__nv_fp8_e5m2": 1, "__hip_fp8_e4m3": 1, "__hip_fp8_e5m2": 1,
}
_TYPE_NOISE = frozenset({"const", "volatile", "struct", "signed", "unsigned", "__restrict__"})


def type_size(text: str) -> int | None:
    """Bytes of a builtin, fixed-width, half or vector type as written (`unsigned int`,
    `std::uint8_t`, `float4`, `const __half`, `int*`); None for any other type."""
    if "*" in text:
        return 8
    words = [w for w in text.split() if w not in _TYPE_NOISE]
    if not words:
        return 4  # `unsigned`, `signed`
    if len(words) > 1 and words[-1] == "int":
        words = words[:-1]  # `long int`, `short int`, `long long int`
    name = " ".join(words).removeprefix("::").removeprefix("std::")
    return _BASIC_SIZES.get(name) or TYPE_SIZES.get(name)


def sizeof_value(node, text) -> int | None:
    """The value of `sizeof(T)` for a type `type_size` knows; None for `sizeof expr` or arrays."""
    operand = node.child_by_field_name("type") or (node.named_children[0] if node.named_children else None)
    if operand is None:
        return None
    if operand.type == "type_descriptor":
        if any(c.type == "abstract_array_declarator" for c in operand.named_children):
            return None
        return type_size(text.node_text(operand))
    inner = strip_parens(operand)
    # `sizeof(float4)` parses as a parenthesised name: only a known type name counts.
    if operand.type == "parenthesized_expression" and inner is not None and inner.type == "identifier":
        return TYPE_SIZES.get(text.node_text(inner))
    return None


# ---- expressions with names another file defines ------------------------------------------
# An expression a file cannot evaluate alone, kept as picklable data for the project pass:
# an int, `("name", n)` for a name the file does not define, `(op, a)` or `(op, a, b)`.
Expr = int | tuple
_LOCAL_TEMPLATE_PARAMETERS = "[(identifier) (type_identifier)] @name"


class OpenConstants(IntegerConstants):
    """`IntegerConstants` that also tells what stays open: names the file leaves to the
    headers it includes (`kBlock` from `launch_config.h`), kept in an `Expr`.

    A name is open only when the file has no definition of it on the ROCm path and it is
    not a parameter, local or template parameter where it is used.
    """

    def __init__(self, source):
        super().__init__(source)
        self._macro_expressions: dict[int, Expr | None] = {}

    def expression(self, node) -> Expr | None:
        """The value of `node` where it stands, or an `Expr` with open names, or None."""
        return self._expression(node, self.source, node, frozenset())

    def file_constants(self) -> list[tuple[str, object, Expr | None]]:
        """(name, definition node, value) of each definition outside functions, live on ROCm."""
        found = []
        for name in self._live_definitions():
            for definition, value_node, function in self._definitions(name):
                if function is not None:
                    continue
                if definition.type == "preproc_def":
                    value = self._macro_expression(value_node, name, frozenset())
                else:
                    value = self._expression(value_node, self.source, value_node, frozenset({name}))
                found.append((name, definition, value))
        return found

    @bounded(None)
    def _expression(self, node, text, use, resolving: frozenset[str]) -> Expr | None:
        value = self._evaluate(node, text, use, None, resolving)
        node = strip_parens(node)
        if value is not None or node is None:
            return value
        kind = node.type
        if kind in ("identifier", "type_identifier"):
            return self._name_expression(text.node_text(node), use, resolving)
        if kind == "initializer_list" and len(node.named_children) == 1:
            return self._expression(node.named_children[0], text, use, resolving)
        if kind == "cast_expression":
            return self._expression(node.child_by_field_name("value"), text, use, resolving)
        if kind == "unary_expression":
            op = node.child_by_field_name("operator")
            inner = self._expression(node.child_by_field_name("argument"), text, use, resolving)
            return None if inner is None or op is None or op.type not in ("+", "-") else (op.type, inner)
        if kind == "binary_expression":
            left = self._expression(node.child_by_field_name("left"), text, use, resolving)
            right = self._expression(node.child_by_field_name("right"), text, use, resolving)
            return None if left is None or right is None else (node.child_by_field_name("operator").type, left, right)
        return None

    def _name_expression(self, name: str, use, resolving: frozenset[str]) -> Expr | None:
        if name in resolving:
            return None
        definitions = self._definitions_of(name, use)
        if not definitions:
            return ("name", name) if self._is_open(name, use) else None
        if len(definitions) != 1:
            return None  # several definitions that do not share one value
        definition, value_node = definitions[0]
        if definition.type == "preproc_def":
            return self._macro_expression(value_node, name, resolving)
        return self._expression(value_node, self.source, value_node, resolving | {name})

    def _macro_expression(self, arg, name: str, resolving: frozenset[str]) -> Expr | None:
        value = self._macro_value(arg, name, resolving)
        if value is not None:
            return value
        if arg.id not in self._macro_expressions:
            parsed = _Snippet.expression(self.source.data[arg.start_byte:arg.end_byte])
            result = None
            if parsed is not None:
                result = self._expression(parsed[1], parsed[0], self.source.tree.root_node, resolving | {name})
            self._macro_expressions[arg.id] = result
        return self._macro_expressions[arg.id]

    def _is_open(self, name: str, use) -> bool:
        if name in self._live_definitions():
            return False  # defined here, but not where it is used
        function = enclosing_function(use)
        if function is not None and self._declares(function, name):
            return False
        if function is not None and _is_method(function):
            return False  # a class member of that name would be found first
        node = use.parent
        while node is not None:
            if node.type == "field_declaration_list":
                return False
            if node.type == "template_declaration":
                parameters = node.child_by_field_name("parameters")
                if parameters is not None and any(
                        self.source.node_text(n) == name
                        for n in queries.nodes("cuda", _LOCAL_TEMPLATE_PARAMETERS, parameters, "name")):
                    return False
            node = node.parent
        return True


def _is_method(function) -> bool:
    """An out-of-line member function definition: `void Launcher::run() { ... }`."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in ("identifier", "qualified_identifier"):
        declarator = declarator.child_by_field_name("declarator")
    return declarator is not None and declarator.type == "qualified_identifier"


@bounded(None)
def evaluate_expression(expr: Expr | None, lookup) -> int | None:
    """The value of an `Expr`, with `lookup(name)` giving the open names (None: unknown)."""
    if expr is None or isinstance(expr, int):
        return expr
    if expr[0] == "name":
        return lookup(expr[1])
    values = [evaluate_expression(e, lookup) for e in expr[1:]]
    if None in values:
        return None
    if len(values) == 1:
        return -values[0] if expr[0] == "-" else values[0]
    return c_operator(expr[0], *values)


@bounded(frozenset())
def open_names(expr: Expr | None) -> set[str]:
    if expr is None or isinstance(expr, int):
        return set()
    if expr[0] == "name":
        return {expr[1]}
    return set().union(*(open_names(e) for e in expr[1:]))


def open_constants(source) -> OpenConstants:
    """The file's constants, one instance shared by every check and the project facts."""
    return memoized(source, "open_constants", OpenConstants)


_NAME_TOKENS = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier"})


_IDENTIFIER_BYTES = queries.IDENTIFIER_BYTES
_IDENTIFIER_BYTES_ONE = frozenset(bytes([b]) for b in _IDENTIFIER_BYTES)


def named_elsewhere(data: bytes, name: bytes, own: int) -> bool:
    """Does `name` stand as a whole word anywhere in `data` (comments and macro bodies too)
    but at offset `own`?"""
    at = data.find(name)
    while at != -1:
        end = at + len(name)
        if at != own and (at == 0 or data[at - 1] not in _IDENTIFIER_BYTES) and \
                (end == len(data) or data[end] not in _IDENTIFIER_BYTES):
            return True
        at = data.find(name, end)
    return False


def token_nodes(source, needle: bytes) -> list:
    """Leaf nodes of the main tree that start with `needle` (`__managed__`, `__nv_fp8_e4m3`),
    in source order; never in comments, strings or macro bodies.

    A byte search, then the tree at each hit: far cheaper than a query over every
    identifier when the word is rare.
    """
    found, root, data = [], source.tree.root_node, source.data
    word = needle[:1] in _IDENTIFIER_BYTES_ONE
    start = data.find(needle)
    while start != -1:
        if word and start > 0 and data[start - 1] in _IDENTIFIER_BYTES:
            start = data.find(needle, start + len(needle))
            continue  # inside a longer word (`f` in `#ifdef`): no token starts here, and the tree is not asked
        node = root.descendant_for_byte_range(start, start + len(needle))
        is_name = node is not None and (not node.is_named or node.type in _NAME_TOKENS)
        if is_name and node.start_byte == start and node.child_count == 0:
            found.append(node)
        start = source.data.find(needle, start + len(needle))
    return found


def macro_tree(source):
    """The root of one parse of every `#define` body (see `macro_bodies_root`), shared by the
    checks that also read code written in macros; None without macro bodies."""
    return memoized(source, "macro_tree", lambda s: macro_bodies_root(s, (b"",)))


# ---- functions of one `return` ------------------------------------------------------------
@dataclass(unsafe_hash=True)
class ReturnFunction:
    """A function of the file whose body is one `return <expr>;` of its parameters
    (`int iDivUp(int a, int b) { return (a + b - 1) / b; }`)."""

    parameters: tuple[str, ...]
    value: object  # the returned expression's node


def return_functions(source) -> dict[str, ReturnFunction]:
    """The file's one-`return` functions by name, at file or namespace scope, live on ROCm;
    a name defined more than once (overloads, per-platform variants) is left out."""
    def find(s) -> dict[str, ReturnFunction]:
        found: dict[str, ReturnFunction | None] = {}
        pending = [s.tree.root_node]
        while pending:
            for node in pending.pop().named_children:
                if node.type in ("namespace_definition", "linkage_specification", "preproc_if", "preproc_ifdef",
                                 "preproc_else", "preproc_elif"):
                    body = node.child_by_field_name("body")
                    pending.append(body if body is not None else node)
                elif node.type == "function_definition" and b"return" in s.data[node.start_byte:node.end_byte]:
                    name, function = _return_function(node, s)
                    if name is not None:
                        found[name] = function if name not in found else None
        model = s.rocm_path
        return {name: f for name, f in found.items() if f is not None
                and (model is None or model.status(f.value.start_byte) is not Status.DEAD)}
    return memoized(source, "cpp.return_functions", find)


def _return_function(node, source) -> tuple[str | None, ReturnFunction | None]:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")
    body = node.child_by_field_name("body")
    if declarator is None or declarator.type != "function_declarator" or body is None:
        return None, None
    name = declarator.child_by_field_name("declarator")
    statements = [c for c in body.named_children if c.type != "comment"]
    if name is None or name.type != "identifier" or len(statements) != 1 or statements[0].type != "return_statement":
        return None, None
    returned = [c for c in statements[0].named_children if c.type != "comment"]
    parameters = []
    for parameter in declarator.child_by_field_name("parameters").named_children:
        if parameter.type == "comment":
            continue
        inner = parameter.child_by_field_name("declarator") if parameter.type == "parameter_declaration" else None
        if inner is None or inner.type != "identifier":
            return None, None  # `int*`, a default argument, `...`: not a plain value parameter
        parameters.append(source.node_text(inner))
    if len(returned) != 1:
        return None, None
    return source.node_text(name), ReturnFunction(tuple(parameters), returned[0])


@bounded(None)
def evaluate(node, text, name_value) -> int | None:
    """The integer value of expression `node` (of `text`: the source, or a snippet parsed on
    its own), with `name_value(identifier node)` giving each name's (None: unknown):
    literals, casts, `sizeof`, `+ - * / % << >> & | ^`, comparisons, `&& || !` and `?:`."""
    node = strip_parens(node)
    if node is None:
        return None
    kind = node.type
    if kind == "number_literal":
        return integer_value(node, text)
    if kind in ("identifier", "type_identifier"):  # a type_identifier in `dim3 b(N)`'s vexing parse
        return name_value(node)
    if kind == "initializer_list" and len(node.named_children) == 1:  # `const int n{256}`
        return evaluate(node.named_children[0], text, name_value)
    if kind == "cast_expression":  # (unsigned)512
        return evaluate(node.child_by_field_name("value"), text, name_value)
    if kind == "call_expression":  # int(512), static_cast<int>(512)
        fn = node.child_by_field_name("function")
        args = arguments(node)
        is_cast = fn is not None and (fn.type in ("primitive_type", "sized_type_specifier")
                                      or text.node_text(fn).startswith("static_cast<"))
        return evaluate(args[0], text, name_value) if is_cast and len(args) == 1 else None
    if kind == "unary_expression":
        operator = node.child_by_field_name("operator")
        value = evaluate(node.child_by_field_name("argument"), text, name_value)
        if value is None or operator is None:
            return None
        return {"-": -value, "+": value, "!": int(not value)}.get(operator.type)
    if kind == "conditional_expression":
        condition = evaluate(node.child_by_field_name("condition"), text, name_value)
        if condition is None:
            return None
        return evaluate(node.child_by_field_name("consequence" if condition else "alternative"), text, name_value)
    if kind == "binary_expression":
        # `a + b + c ...` nests to the left: fold the chain in a loop, not by recursion.
        leftmost, chain = left_chain(node)
        value = evaluate(leftmost, text, name_value)
        for operator, right in chain:
            if value is None:
                return None
            right_value = evaluate(right, text, name_value)
            value = None if right_value is None else c_operator(operator, value, right_value)
        return value
    if kind == "sizeof_expression":  # sizeof(float4), sizeof(int)
        return sizeof_value(node, text)
    return None


# Generic query sources the checks ask of small nodes (a function, an expression, a macro body).
IDENTIFIERS = "(identifier) @id"
STRING_PIECES = "[(string_content) (raw_string_content)] @text"

# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    "cuda",
    _CONSTANT_DEFINITIONS,
    _MACRO_BODIES,
    _ALL_CALLS,
    _DEFINED_FUNCTIONS,
)
