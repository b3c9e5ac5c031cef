"""Trigger tokens: the bytes without which a check cannot fire (the engine's pre-filter).

A check declares them with the `needs` decorator; the engine parses a file only when some
enabled check's triggers (or a project-fact collector's, `project.EAGER_FACTS`) hold in its
bytes, and runs only the checks whose triggers hold. A check without a declaration always
runs. Declarations must be *necessary* conditions: a check may still find nothing where its
tokens occur, but it must never be able to fire where they do not.

    @needs(b"__launch_bounds__")                      # this substring occurs
    @needs(b"<<<", b"hipLaunchKernelGGL")             # any of them (arguments are alternatives)
    @needs(all_of(b"assert", any_of(b"__device__", b"__global__")), all_of(b"trap", b"asm"))
    @needs(nocase(b"warp", b"lane"))                  # in the lower-cased bytes (tokens lower case)
    @needs(re.compile(rb"__(?:trap|brkpt)"))          # a bytes pattern that `search`es

A longer token implies its substrings, so a shorter token shared by several names
(`b"LaunchKernel"` for `hipLaunchKernelGGL` and `cudaLaunchKernel`) is a valid, weaker
declaration. `Probe` evaluates each distinct token at most once per file.
"""

from __future__ import annotations

import re
from typing import Callable, Union


# Bytes that are not part of an identifier become spaces; `split()` then gives the words.
_WORD_BYTES = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == 0x5F) else 0x20 for c in range(256))
_WORD_RUN = re.compile(rb"\w+")


class Probe:
    """One file's bytes; each token's presence is computed at most once.

    A token made of identifier characters is looked up in the file's distinct words joined
    by spaces (about a seventh of the bytes): it occurs in the file exactly when it occurs in
    one of its words. Any other token is looked up in the bytes, once its longest run of
    identifier characters is known to occur (`b"/ 32"` needs `b"32"`).
    """

    __slots__ = ("data", "_lowered", "_seen", "_words", "_lowered_words")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._lowered: bytes | None = None
        self._seen: dict = {}
        self._words: bytes | None = None
        self._lowered_words: bytes | None = None

    def words(self) -> bytes:
        if self._words is None:
            self._words = b" ".join(set(self.data.translate(_WORD_BYTES).split()))
        return self._words

    def has(self, token: bytes) -> bool:
        found = self._seen.get(token)
        if found is None:
            kind = _kind(token)
            words = self._words
            if words is None and kind is not None:
                words = self.words()
            if kind is True:
                found = token in words
            else:
                found = (kind is None or kind in words) and token in self.data
            self._seen[token] = found
        return found

    def has_nocase(self, token: bytes) -> bool:
        key = ("nocase", token)
        found = self._seen.get(key)
        if found is None:
            kind = _kind(token)
            if kind is True:
                if self._lowered_words is None:
                    self._lowered_words = self.words().lower()
                found = token in self._lowered_words
            else:
                if self._lowered is None:
                    self._lowered = self.data.lower()
                found = token in self._lowered
            self._seen[key] = found
        return found

    def matches(self, pattern: re.Pattern) -> bool:
        found = self._seen.get(pattern)
        if found is None:
            found = self._seen[pattern] = pattern.search(self.data) is not None
        return found


_KINDS: dict[bytes, object] = {}


def _kind(token: bytes):
    """True for a token of identifier characters; else the longest such run in it, or None."""
    kind = _KINDS.get(token)
    if kind is None:
        runs = _WORD_RUN.findall(token)
        if runs and runs[0] == token:
            kind = True
        else:
            kind = max(runs, key=len) if runs else False
        _KINDS[token] = kind
    return None if kind is False else kind


class Trigger:
    """A condition on a file's bytes."""

    def holds(self, probe: Probe) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def atoms(self):
        """Every token this condition may read (for documentation and tests)."""
        return ()


class _Token(Trigger):
    __slots__ = ("token",)

    def __init__(self, token: bytes) -> None:
        self.token = token

    def holds(self, probe: Probe) -> bool:
        return probe.has(self.token)

    def atoms(self):
        return (self.token,)

    def __repr__(self) -> str:
        return repr(self.token)


class _Nocase(Trigger):
    __slots__ = ("tokens",)

    def __init__(self, tokens: tuple[bytes, ...]) -> None:
        if any(t != t.lower() for t in tokens):
            raise ValueError(f"nocase tokens are written in lower case: {tokens!r}")
        self.tokens = tokens

    def holds(self, probe: Probe) -> bool:
        return any(probe.has_nocase(t) for t in self.tokens)

    def atoms(self):
        return self.tokens

    def __repr__(self) -> str:
        return f"nocase{self.tokens!r}"


class _Pattern(Trigger):
    __slots__ = ("pattern",)

    def __init__(self, pattern: re.Pattern) -> None:
        if not isinstance(pattern.pattern, bytes):
            raise TypeError("trigger patterns match bytes: compile them from rb'...'")
        self.pattern = pattern

    def holds(self, probe: Probe) -> bool:
        return probe.matches(self.pattern)

    def atoms(self):
        return (self.pattern,)

    def __repr__(self) -> str:
        return f"re({self.pattern.pattern!r})"


class _AnyOf(Trigger):
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Trigger, ...]) -> None:
        self.parts = parts

    def holds(self, probe: Probe) -> bool:
        return any(p.holds(probe) for p in self.parts)

    def atoms(self):
        return tuple(a for p in self.parts for a in p.atoms())

    def __repr__(self) -> str:
        return f"any_of{self.parts!r}"


class _AllOf(Trigger):
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Trigger, ...]) -> None:
        self.parts = parts

    def holds(self, probe: Probe) -> bool:
        return all(p.holds(probe) for p in self.parts)

    def atoms(self):
        return tuple(a for p in self.parts for a in p.atoms())

    def __repr__(self) -> str:
        return f"all_of{self.parts!r}"


class _Always(Trigger):
    def holds(self, probe: Probe) -> bool:
        return True

    def __repr__(self) -> str:
        return "ALWAYS"


ALWAYS: Trigger = _Always()
TokenLike = Union[bytes, re.Pattern, Trigger]


def trigger(token: TokenLike) -> Trigger:
    if isinstance(token, Trigger):
        return token
    if isinstance(token, bytes):
        if not token:
            raise ValueError("an empty trigger token always holds: leave the check undeclared instead")
        return _Token(token)
    if isinstance(token, re.Pattern):
        return _Pattern(token)
    raise TypeError(f"a trigger token is bytes, a compiled bytes pattern or a Trigger, not {token!r}")


def any_of(*tokens: TokenLike) -> Trigger:
    if not tokens:
        raise ValueError("any_of() needs at least one token")
    parts = tuple(trigger(t) for t in tokens)
    return parts[0] if len(parts) == 1 else _AnyOf(parts)


def all_of(*tokens: TokenLike) -> Trigger:
    if not tokens:
        raise ValueError("all_of() needs at least one token")
    parts = tuple(trigger(t) for t in tokens)
    return parts[0] if len(parts) == 1 else _AllOf(parts)


def nocase(*tokens: bytes) -> Trigger:
    """Any of `tokens` in the file's lower-cased bytes."""
    return _Nocase(tuple(tokens))


def needs(*tokens: TokenLike) -> Callable:
    """Declare a check's trigger tokens: it can fire only where one of the alternatives holds."""
    condition = any_of(*tokens)

    def mark(check: Callable) -> Callable:
        check.needs = condition
        return check

    return mark


def needs_of(check: Callable) -> Trigger:
    """The declared trigger of `check`; ALWAYS for an undeclared one."""
    return getattr(check, "needs", None) or ALWAYS
