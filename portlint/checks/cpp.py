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
