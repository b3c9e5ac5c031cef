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
declaration. `Probe` finds all declared tokens of a file in one pass.
"""

from __future__ import annotations

import re
from typing import Callable, Union

import ahocorasick


class _Vocabulary:
    """Every token a trigger may ask about, found in one pass over a file.

    One Aho-Corasick automaton (pyahocorasick) of the tokens in lower case runs over the
    file's lower-cased bytes; a search per token cost more than parsing the files it spared.
    A case-sensitive token found in lower case is then confirmed in the exact bytes (usually
    at its first occurrence)."""

    def __init__(self) -> None:
        self.exact: set[bytes] = set()  # tokens matched as written
        self.nocase: set[bytes] = set()  # tokens (lower case) matched in the lower-cased bytes
        self._automaton = None
        self._variants: dict[bytes, tuple[bytes, ...]] = {}  # lower case -> exact tokens
        self.snapshot: tuple[frozenset[bytes], frozenset[bytes]] = (frozenset(), frozenset())

    def add(self, token: bytes, nocase: bool = False) -> None:
        table = self.nocase if nocase else self.exact
        if token not in table:
            table.add(token)
            self._automaton = None

    def _build(self) -> None:
        variants: dict[bytes, list[bytes]] = {}
        for token in self.exact:
            variants.setdefault(token.lower(), []).append(token)
        automaton = ahocorasick.Automaton()
        for lowered in variants.keys() | self.nocase:
            automaton.add_word(lowered.decode("latin-1"), lowered)
        if len(automaton):
            automaton.make_automaton()
        self._automaton = automaton
        self._variants = {lowered: tuple(tokens) for lowered, tokens in variants.items()}
        self.snapshot = (frozenset(self.exact), frozenset(self.nocase))

    def scan(self, data: bytes, lowered: bytes) -> tuple[set[bytes], set[bytes]]:
        """(exact tokens present in `data`, nocase tokens present in `lowered`)."""
        if self._automaton is None:
            self._build()
        if not len(self._automaton):
            return set(), set()
        # latin-1 maps each byte to one character, so any bytes decode and match as bytes.
        # Each token with the end of its last occurrence, where its exact spelling is tried first.
        ends = {token: end for end, token in self._automaton.iter(lowered.decode("latin-1"))}
        exact = set()
        for lowered_token, end in ends.items():
            for token in self._variants.get(lowered_token, ()):
                # A token without letters is its own lower case: found already.
                if (token == lowered_token == token.upper() or data.startswith(token, end + 1 - len(token))
                        or token in data):
                    exact.add(token)
        return exact, set(ends)


_VOCABULARY = _Vocabulary()


class Probe:
    """One file's bytes: the first question finds every declared token (`_Vocabulary`);
    a token not declared through a trigger is searched directly."""

    __slots__ = ("data", "_lowered", "_seen", "_exact", "_nocase", "_looked_for")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._lowered: bytes | None = None
        self._seen: dict = {}
        self._exact: set[bytes] = set()
        self._nocase: set[bytes] = set()
        self._looked_for: tuple[frozenset[bytes], frozenset[bytes]] | None = None

    def _scan(self) -> None:
        self._lowered = self.data.lower()
        self._exact, self._nocase = _VOCABULARY.scan(self.data, self._lowered)
        self._looked_for = _VOCABULARY.snapshot

    def has_any(self, tokens: frozenset[bytes]) -> bool:
        """Does any of `tokens` occur as written?"""
        if self._looked_for is None:
            self._scan()
        if tokens <= self._looked_for[0]:
            return not self._exact.isdisjoint(tokens)
        return any(token in self.data for token in tokens)

    def has_any_nocase(self, tokens: frozenset[bytes]) -> bool:
        """Does any of `tokens` (lower case) occur in the lower-cased bytes?"""
        if self._looked_for is None:
            self._scan()
        if tokens <= self._looked_for[1]:
            return not self._nocase.isdisjoint(tokens)
        return any(token in self._lowered for token in tokens)

    def matches(self, pattern: re.Pattern) -> bool:
        found = self._seen.get(pattern)
        if found is None:
            found = self._seen[pattern] = pattern.search(self.data) is not None
        return found


class Trigger:
    """A condition on a file's bytes."""

    def holds(self, probe: Probe) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def atoms(self):
        """Every token this condition may read (for documentation and tests)."""
        return ()


class _Token(Trigger):
    __slots__ = ("token", "_as_set")

    def __init__(self, token: bytes) -> None:
        self.token = token
        self._as_set = frozenset((token,))
        _VOCABULARY.add(token)

    def holds(self, probe: Probe) -> bool:
        return probe.has_any(self._as_set)

    def atoms(self):
        return (self.token,)

    def __repr__(self) -> str:
        return repr(self.token)


class _Nocase(Trigger):
    __slots__ = ("tokens", "_as_set")

    def __init__(self, tokens: tuple[bytes, ...]) -> None:
        if any(t != t.lower() for t in tokens):
            raise ValueError(f"nocase tokens are written in lower case: {tokens!r}")
        self.tokens = tokens
        self._as_set = frozenset(tokens)
        for token in tokens:
            _VOCABULARY.add(token, nocase=True)

    def holds(self, probe: Probe) -> bool:
        return probe.has_any_nocase(self._as_set)

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


# Bytes of a name as `_InName` reads it: letters, digits, `_`, `$` and any non-ASCII byte.
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$") | frozenset(range(0x80, 0x100))


class _InName(Trigger):
    """A name that holds `needle` (in any case) and that `pattern` matches, searched in the
    name alone. A pattern for "a word of a name" tried at every byte of a file costs ~0.2 ms
    a file; the needle's occurrences, each widened to its name, are few."""

    __slots__ = ("needle", "pattern")

    def __init__(self, needle: bytes, pattern: re.Pattern) -> None:
        if needle != needle.lower() or not isinstance(pattern.pattern, bytes):
            raise ValueError("in_name: a lower-case needle and a bytes pattern")
        self.needle, self.pattern = needle, pattern
        _VOCABULARY.add(needle, nocase=True)

    def holds(self, probe: Probe) -> bool:
        if not probe.has_any_nocase(frozenset((self.needle,))):
            return False
        key = (self.needle, self.pattern)
        found = probe._seen.get(key)
        if found is None:
            found = probe._seen[key] = self._search(probe.data, probe._lowered)
        return found

    def _search(self, data: bytes, lowered: bytes) -> bool:
        names_seen = set()
        at = lowered.find(self.needle)
        while at != -1:
            start, end = at, at + len(self.needle)
            while start > 0 and data[start - 1] in _NAME_BYTES:
                start -= 1
            while end < len(data) and data[end] in _NAME_BYTES:
                end += 1
            name = data[start:end]
            if name not in names_seen:
                names_seen.add(name)
                if self.pattern.search(name):
                    return True
            at = lowered.find(self.needle, end)
        return False

    def atoms(self):
        return (self.needle, self.pattern)

    def __repr__(self) -> str:
        return f"in_name({self.needle!r}, {self.pattern.pattern!r})"


class _AnyOf(Trigger):
    __slots__ = ("parts", "_tokens", "_others")

    def __init__(self, parts: tuple[Trigger, ...]) -> None:
        self.parts = parts
        # Plain tokens are answered together, by one set operation.
        self._tokens = frozenset(p.token for p in parts if isinstance(p, _Token))
        self._others = tuple(p for p in parts if not isinstance(p, _Token))

    def holds(self, probe: Probe) -> bool:
        return bool(self._tokens and probe.has_any(self._tokens)) or any(p.holds(probe) for p in self._others)

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


def in_name(needle: bytes, pattern: re.Pattern) -> Trigger:
    """A name (identifier) holding `needle` in any case, that `pattern` matches: `pattern`
    must only match within one name, so that searching each name alone is equivalent."""
    return _InName(needle, pattern)


def leading(first: bytes, pattern: bytes) -> re.Pattern:
    """`pattern`, searched only from the bytes a match can begin with (`first`, every one of
    them: the first byte each branch consumes). `re` skips ahead to a pattern's first byte
    when it can tell it, but not past a branch that opens with a look-behind or a
    case-insensitive group: it tries every position of the file instead. A leading class
    tells it (the same matches, about three times faster over real sources)."""
    return re.compile(b"(?=[" + re.escape(first) + b"])(?:" + pattern + b")")


def needs(*tokens: TokenLike) -> Callable:
    """Declare a check's trigger tokens: it can fire only where one of the alternatives holds."""
    condition = any_of(*tokens)

    def mark(check: Callable) -> Callable:
        check.needs = condition
        return check

    return mark


def only_where(applies: Callable) -> Callable:
    """Declare what a check needs of a file's build environment (`applies(source)`, asked
    before the file is parsed): a file that fails it is not parsed for this check's sake."""
    def mark(check: Callable) -> Callable:
        check.applies = applies
        return check

    return mark


def applies_to(check: Callable, source) -> bool:
    """Does `check`'s environment precondition (`only_where`) hold for `source`? True when it has none."""
    applies = getattr(check, "applies", None)
    return applies is None or applies(source)


def needs_of(check: Callable) -> Trigger:
    """The declared trigger of `check`; ALWAYS for an undeclared one."""
    return getattr(check, "needs", None) or ALWAYS
