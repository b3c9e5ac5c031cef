"""`#if` expressions, evaluated with three-valued logic against what one build knows.

A value is an int (C truth: nonzero) or None: undecidable (a macro whose value nobody knows,
`__has_include(...)`, anything this evaluator does not read). Object-like and function-like
macros of the environment are expanded first, as the preprocessor does; `defined X` is
answered before expansion.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from math import prod
from typing import Protocol

Value = bool | int | None

# ---- three-valued logic over ints (C truth: nonzero) ---------------------------------


def truth(v: Value) -> bool | None:
    return None if v is None else bool(v)


def not_(v: Value) -> Value:
    t = truth(v)
    return None if t is None else (not t)


def and_(a: Value, b: Value) -> Value:
    ta, tb = truth(a), truth(b)
    if ta is False or tb is False:
        return False
    if ta is None or tb is None:
        return None
    return True


def or_(a: Value, b: Value) -> Value:
    ta, tb = truth(a), truth(b)
    if ta is True or tb is True:
        return True
    if ta is None or tb is None:
        return None
    return False


class Scope(Protocol):
    """What one build knows about macros at one point of one file."""

    def is_defined(self, name: str) -> Value: ...

    def definition(self, name: str):
        """The `Macro` `name` certainly stands for here, or None (undefined or not known)."""

    def value(self, name: str) -> Value:
        """The value of an identifier that is no macro here: 0 if undefined, else None."""


# ---- tokens ------------------------------------------------------------------------------
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_TOKEN = re.compile(
    r"\s+|(?P<num>(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*(?![\w.]))|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|##|[-+*/%<>!~&|^?:(),#])|(?P<other>.)", re.S)
_MAX_EXPANSIONS = 200  # a macro that expands forever (mutual recursion hidden by arguments)


class _Undecidable(Exception):
    pass


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[tuple[str, str], ...]:
    """(kind, text) tokens of an expression or macro body; comments and line continuations dropped."""
    text = _COMMENT.sub(" ", text.replace("\\\r\n", " ").replace("\\\n", " "))
    found = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind is not None:
            word = m.group(kind)
            operator = _ALTERNATIVE_TOKENS.get(word) if kind == "id" else None
            found.append(("op", operator) if operator else (kind, word))
    return tuple(found)


# C++'s alternative spellings of operators (`#if defined(A) and defined(B)`): operators in
# C++ code, hip-clang's and nvcc's; `<iso646.h>` gives C the same as macros.
_ALTERNATIVE_TOKENS = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^",
                       "compl": "~", "not_eq": "!="}


def _number(text: str) -> int:
    digits = text.rstrip("uUlL")
    if len(digits) > 1 and digits.startswith("0") and digits.isdigit():
        return int(digits, 8)  # C octal `035000`
    return int(digits, 0)


# ---- expansion -----------------------------------------------------------------------------
def _expand(toks: list[tuple[str, str]], scope: Scope, hidden: frozenset[str], budget: list[int]) -> list:
    """Tokens with macros replaced and `defined` answered: ("n", int), ("u", None) or ("op", str)."""
    out: list = []
    i, n = 0, len(toks)
    while i < n:
        kind, text = toks[i]
        if kind == "num":
            try:
                out.append(("n", _number(text)))
            except ValueError:
                raise _Undecidable
            i += 1
        elif kind == "op":
            if text in ("#", "##"):
                raise _Undecidable
            out.append(("op", text))
            i += 1
        elif kind == "id":
            i = _expand_identifier(toks, i, scope, hidden, budget, out)
        else:
            raise _Undecidable  # a string, a character or float literal, stray bytes
    return out


def _expand_identifier(toks, i, scope: Scope, hidden, budget, out) -> int:
    name = toks[i][1]
    n = len(toks)
    if name == "defined":
        j = i + 1
        parenthesized = j < n and toks[j] == ("op", "(")
        if parenthesized:
            j += 1
        if j >= n or toks[j][0] != "id":
            raise _Undecidable
        value = scope.is_defined(toks[j][1])
        j += 1
        if parenthesized:
            if j >= n or toks[j] != ("op", ")"):
                raise _Undecidable
            j += 1
        out.append(("u", None) if value is None else ("n", int(bool(value))))
        return j
    macro = scope.definition(name) if name not in hidden else None
    call_args, after = _call_arguments(toks, i + 1)
    if macro is not None and macro.body is not None and (macro.params is None or call_args is not None):
        budget[0] -= 1
        if budget[0] < 0:
            raise _Undecidable
        body = macro.body_tokens()
        if macro.params is not None:
            body = _substitute(body, macro.params, call_args)
            i = after
        else:
            i += 1
        out.extend(_expand(body, scope, hidden | {name}, budget))
        return i
    if macro is not None or call_args is not None:
        # A macro of unknown value, or a call nobody defines here (`__has_include(<x>)`).
        out.append(("u", None))
        return after if call_args is not None else i + 1
    if name in ("true", "false"):
        out.append(("n", int(name == "true")))
        return i + 1
    value = scope.value(name)
    out.append(("u", None) if value is None else ("n", int(value)))
    return i + 1


def _call_arguments(toks, j: int):
    """The arguments (token lists) of a call whose `(` is at `j`, and the index after its `)`."""
    if j >= len(toks) or toks[j] != ("op", "("):
        return None, j
    depth, args, current = 0, [], []
    for k in range(j, len(toks)):
        tok = toks[k]
        if tok == ("op", "("):
            depth += 1
            if depth == 1:
                continue
        elif tok == ("op", ")"):
            depth -= 1
            if depth == 0:
                args.append(current)
                return args, k + 1
        elif tok == ("op", ",") and depth == 1:
            args.append(current)
            current = []
            continue
        current.append(tok)
    raise _Undecidable  # unbalanced


def _substitute(body, params: tuple[str, ...], args) -> list:
    if len(args) != len(params) and not (not params and args == [[]]):
        raise _Undecidable
    values = dict(zip(params, args))
    out = []
    for tok in body:
        if tok[0] == "id" and tok[1] in values:
            out.extend(values[tok[1]])
        else:
            out.append(tok)
    return out


# ---- evaluation ----------------------------------------------------------------------------
_BINARY = {  # operator -> precedence (higher binds tighter)
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}


_MAX_SHIFT = 64
_ARITHMETIC = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
}
_COMPARISONS = {
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b),
}


def c_binary(op: str, a: int, b: int) -> int | None:
    """`a op b` for an arithmetic or bitwise `op`, as C computes it on integers; None for
    another operator and for what C leaves undefined (division by zero, a shift out of range).
    Both `#if` arithmetic and the checks' constant evaluation (`checks.cpp`) use it."""
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncates towards zero
        return q if op == "/" else a - q * b
    if op in ("<<", ">>") and not 0 <= b < _MAX_SHIFT:
        return None
    operation = _ARITHMETIC.get(op)
    return operation(a, b) if operation is not None else None


def c_operator(op: str, a: int, b: int) -> int | None:
    """`a op b` for any binary operator C has on integers: arithmetic and bitwise ones
    (`c_binary`), comparisons, `&&` and `||` (1 or 0)."""
    if op in _COMPARISONS:
        return _COMPARISONS[op](a, b)
    if op in ("&&", "||"):
        return int(bool(a) and bool(b)) if op == "&&" else int(bool(a) or bool(b))
    return c_binary(op, a, b)


def _arith(op: str, a: int, b: int) -> int:
    if op in _COMPARISONS:
        return _COMPARISONS[op](a, b)
    value = c_binary(op, a, b)
    if value is None:
        raise _Undecidable
    return value


class _Parser:
    def __init__(self, toks: list) -> None:
        self.toks, self.pos = toks, 0

    def peek(self):
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self):
        tok = self.peek()
        if tok is None:
            raise _Undecidable
        self.pos += 1
        return tok

    def expect(self, op: str) -> None:
        if self.take() != ("op", op):
            raise _Undecidable

    def ternary(self) -> Value:
        cond = self.binary(1)
        if self.peek() != ("op", "?"):
            return cond
        self.pos += 1
        yes = self.ternary()
        self.expect(":")
        no = self.ternary()
        t = truth(cond)
        if t is None:
            return yes if yes == no else None
        return yes if t else no

    def binary(self, floor: int) -> Value:
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None or tok[0] != "op" or _BINARY.get(tok[1], 0) < floor:
                return left
            op = tok[1]
            self.pos += 1
            right = self.binary(_BINARY[op] + 1)
            if op == "&&":
                left = and_(left, right)
            elif op == "||":
                left = or_(left, right)
            elif left is None or right is None:
                left = None
            else:
                left = _arith(op, int(left), int(right))

    def unary(self) -> Value:
        kind, text = self.take()
        if kind == "n":
            return text
        if kind == "u":
            return None
        if text == "(":
            value = self.ternary()
            self.expect(")")
            return value
        if text in ("!", "~", "-", "+"):
            arg = self.unary()
            if text == "!":
                return not_(arg)
            if arg is None:
                return None
            return {"~": ~int(arg), "-": -int(arg), "+": int(arg)}[text]
        raise _Undecidable


def evaluate(text: str, scope: Scope) -> Value:
    """The value of the `#if` expression `text` in `scope`; None when undecidable. A name a
    header's includers define differently (`ScopeAt.alternatives`) is tried as each of
    them: the value is the one they all give."""
    value = _evaluate_once(text, scope)
    if value is not None or not getattr(scope, "alternates", False):
        return value
    alternatives = scope.alternatives
    names = [(name, states) for name in dict.fromkeys(t[1] for t in tokens(text) if t[0] == "id")
             if (states := alternatives(name))]
    if not names or prod(len(states) for _, states in names) > _MAX_PINNED_CASES:
        return None
    values = set()
    for chosen in itertools.product(*(states for _, states in names)):
        values.add(_evaluate_once(text, scope.pinned({name: state for (name, _), state in zip(names, chosen)})))
        if None in values or len(values) > 1:
            return None
    return values.pop()


_MAX_PINNED_CASES = 16


def _evaluate_once(text: str, scope: Scope) -> Value:
    try:
        expanded = _expand(tokens(text), scope, frozenset(), [_MAX_EXPANSIONS])
        parser = _Parser(expanded)
        value = parser.ternary()
        if parser.pos != len(expanded):
            return None
        return value
    except (_Undecidable, RecursionError):
        return None
