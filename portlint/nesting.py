"""A bound on how deep portlint's recursive analyses of one tree may go.

Generated and macro-heavy code nests far deeper than people write (a 500-term sum is a
500-deep tree; a `#if` of 1000 `||` terms is 1000 deep), while Python stops at 1000 frames.
Functions that recurse over a tree are marked `@bounded(unknown)`: past `MAX_DEPTH` nested
calls of marked functions they answer `unknown` (None, False, ...: whatever the function
returns when it cannot tell) instead of going deeper, so a deep expression is "unknown" to
the rule that reads it, never a RecursionError that costs the rule the whole file.
Long left-deep chains (`a + b + c ...`) are better folded in a loop where they are common
(the constant and `#if` evaluators do); the bound is for what is left.
"""

from __future__ import annotations

import functools

# Nested calls of bounded functions, all of them together (they call each other). Each
# level costs up to about six Python frames (the wrapper, the function, helpers, a lambda or
# generator), so this stays inside Python's 1000 with the engine's and click's frames below.
MAX_DEPTH = 100
_depth = 0


def bounded(unknown):
    """Decorator: the function returns `unknown` when called more than `MAX_DEPTH` bounded
    calls deep. `unknown` must be what the function answers when it cannot tell; a type
    (`list`, `dict`, `set`) is called for a fresh one, as callers may add to it."""

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            global _depth
            if _depth >= MAX_DEPTH:
                return unknown() if isinstance(unknown, type) else unknown
            _depth += 1
            try:
                return function(*args, **kwargs)
            finally:
                _depth -= 1

        return wrapper

    return decorate


def left_chain(node) -> tuple[object, list[tuple[str, object]]]:
    """A tree-sitter chain of C binary expressions, which nests to the left (`a + b - c` is
    `(a + b) - c`), as its leftmost operand and the (operator, right operand) pairs in
    evaluation order, found in a loop: a 1000-term sum is 1000 levels deep. Parentheses
    around a left operand are looked through (they do not change the order)."""
    chain = []
    while node is not None and node.type == "binary_expression":
        operator = node.child_by_field_name("operator")
        chain.append((operator.type if operator is not None else "", node.child_by_field_name("right")))
        node = node.child_by_field_name("left")
        while node is not None and node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
    chain.reverse()
    return node, chain
