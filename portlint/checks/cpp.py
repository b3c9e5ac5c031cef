"""Small helpers for reading C/C++/CUDA trees, shared by the check modules."""

from __future__ import annotations

import re

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


def enclosing_function(node):
    """The nearest `function_definition` around `node` (lambdas are looked through), else None."""
    node = node.parent
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


# ---- integer constants -----------------------------------------------------------------
# Imported here, not at the top, so that this section stays an append to the module.
from portlint import queries  # noqa: E402
from portlint.rocm_path import Status  # noqa: E402

_CONSTANT_DEFINITIONS = """
[(preproc_def name: (identifier) @name value: (preproc_arg) @value) @definition
 (declaration (type_qualifier) declarator: (init_declarator
    declarator: (identifier) @name value: (_) @value)) @definition
 (enumerator name: (identifier) @name value: (_) @value) @definition]
"""
_LOCAL_NAMES = """
[(init_declarator declarator: (identifier) @name)
 (declaration declarator: (identifier) @name)
 (parameter_declaration declarator: (identifier) @name)
 (parameter_declaration declarator: (reference_declarator (identifier) @name))]
"""
_CONST_QUALIFIERS = frozenset({"const", "constexpr"})
_MAX_SHIFT = 64


class _Snippet:
    """Bytes parsed on their own (a macro body), read like a SourceFile by the helpers."""

    def __init__(self, data: bytes):
        self.data = data

    def node_text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


class IntegerConstants:
    """Integer constants of one file, as a ROCm build sees them.

    Knows `#define N <expr>`, `enum { N = <expr> }`, and `const`/`constexpr` variables at
    file or namespace scope or earlier in the function where they are used. Expressions of
    literals, such names, `+ - * / % << >> & | ^`, parentheses and casts are evaluated.
    Definitions in code dead on ROCm are ignored; a name with two different values, or one
    the function redeclares (a parameter, a non-const local), is unknown (None).
    Later work can add definitions from included headers in `_definitions_of`.
    """

    def __init__(self, source):
        self.source = source
        self._by_name: dict[str, list[tuple[object, object, object]]] | None = None
        self._local_names: dict[int, set[str]] = {}
        self._macro_values: dict[int, int | None] = {}

    def value(self, node, used: list | None = None) -> int | None:
        """The value of expression `node` where it stands; `used` collects definition nodes read."""
        return self._evaluate(node, self.source, node, used, frozenset())

    # ---- definitions --------------------------------------------------------------
    def _definitions(self) -> dict[str, list[tuple[object, object, object]]]:
        """name -> [(definition node, value node, enclosing function or None)], live on ROCm."""
        if self._by_name is None:
            self._by_name = {}
            model = self.source.rocm_path
            for match in queries.matches("cuda", _CONSTANT_DEFINITIONS, self.source.tree.root_node):
                definition, name, value = match["definition"][0], match["name"][0], match["value"][0]
                if definition.type == "declaration" and not _is_const(definition, self.source):
                    continue
                if model is not None and model.status(definition.start_byte) is Status.DEAD:
                    continue
                function = None if definition.type == "preproc_def" else enclosing_function(definition)
                self._by_name.setdefault(self.source.node_text(name), []).append((definition, value, function))
        return self._by_name

    def _definitions_of(self, name: str, use) -> list[tuple[object, object]]:
        """The definitions `name` may refer to at `use`: locals first, then file scope."""
        candidates = self._definitions().get(name, [])
        function = enclosing_function(use)
        local = [(d, v) for d, v, f in candidates
                 if function is not None and f is not None and f.id == function.id and d.start_byte < use.start_byte]
        if local:
            return local
        file_level = [(d, v) for d, v, f in candidates if f is None]
        if function is not None and name in self._names_declared_in(function):
            # A parameter or a non-const local hides a file-level constant (not a macro).
            return [(d, v) for d, v in file_level if d.type == "preproc_def"]
        return file_level

    def _names_declared_in(self, function) -> set[str]:
        names = self._local_names.get(function.id)
        if names is None:
            names = {self.source.node_text(n) for n in queries.nodes("cuda", _LOCAL_NAMES, function, "name")}
            local_constants = {name for name, defs in self._definitions().items()
                               if any(f is not None and f.id == function.id for _, _, f in defs)}
            names -= local_constants
            self._local_names[function.id] = names
        return names

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
            snippet = _Snippet(b"int __portlint_value = (" + self.source.data[arg.start_byte:arg.end_byte] + b"\n);")
            tree = queries.parse("cuda", snippet.data)
            values = queries.nodes("cuda", "(init_declarator value: (_) @value)", tree.root_node, "value")
            # Names in a macro body resolve at file scope (the root node is outside any function).
            result = None
            if values and not tree.root_node.has_error:
                result = self._evaluate(values[0], snippet, self.source.tree.root_node, None, resolving | {name})
            self._macro_values[arg.id] = result
        return self._macro_values[arg.id]

    # ---- expressions --------------------------------------------------------------
    def _evaluate(self, node, text, use, used, resolving: frozenset[str]) -> int | None:
        node = strip_parens(node)
        if node is None:
            return None
        kind = node.type
        if kind == "number_literal":
            return integer_value(node, text)
        if kind in ("identifier", "type_identifier"):  # a type_identifier in `dim3 b(N)`'s vexing parse
            return self._resolve(text.node_text(node), use, used, resolving)
        if kind == "initializer_list" and len(node.named_children) == 1:  # `const int n{256}`
            return self._evaluate(node.named_children[0], text, use, used, resolving)
        if kind == "cast_expression":  # (unsigned)512
            return self._evaluate(node.child_by_field_name("value"), text, use, used, resolving)
        if kind == "call_expression":  # int(512), static_cast<int>(512)
            fn = node.child_by_field_name("function")
            args = arguments(node)
            is_cast = fn is not None and (fn.type in ("primitive_type", "sized_type_specifier")
                                          or text.node_text(fn).startswith("static_cast<"))
            return self._evaluate(args[0], text, use, used, resolving) if is_cast and len(args) == 1 else None
        if kind == "unary_expression":
            op = node.child_by_field_name("operator")
            arg = self._evaluate(node.child_by_field_name("argument"), text, use, used, resolving)
            if arg is None or op is None:
                return None
            return {"-": -arg, "+": arg}.get(op.type)
        if kind == "binary_expression":
            left = self._evaluate(node.child_by_field_name("left"), text, use, used, resolving)
            right = self._evaluate(node.child_by_field_name("right"), text, use, used, resolving)
            if left is None or right is None:
                return None
            return _binary(node.child_by_field_name("operator").type, left, right)
        return None


def _binary(op: str, left: int, right: int) -> int | None:
    if op in ("/", "%") and right == 0:
        return None
    if op in ("<<", ">>") and not 0 <= right < _MAX_SHIFT:
        return None
    # C division truncates toward zero; Python's `//` floors.
    quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1) if right else 0
    ops = {
        "+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
        "/": lambda: quotient, "%": lambda: left - quotient * right,
        "<<": lambda: left << right, ">>": lambda: left >> right,
        "&": lambda: left & right, "|": lambda: left | right, "^": lambda: left ^ right,
    }
    return ops[op]() if op in ops else None


def _is_const(declaration, source) -> bool:
    return any(c.type == "type_qualifier" and source.node_text(c) in _CONST_QUALIFIERS for c in declaration.children)


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
    shadow = bytearray(source.data.translate(_BLANK_BUT_NEWLINES))
    for match in bodies:
        body, macro = match["body"][0], match["macro"][0]
        shadow[macro.start_byte] = ord(";")
        shadow[body.start_byte:body.end_byte] = source.data[body.start_byte:body.end_byte]
    return queries.parse("cuda", bytes(shadow)).root_node
