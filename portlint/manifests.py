"""Requirements files and pyproject.toml read as text: comments, requirement lines, TOML strings.

Neither format has a tree-sitter grammar here, and neither needs one:

- A requirements file (pip's format, also pip-tools' `*.in` and constraint files) is a list
  of lines. `requirement_lines` follows pip's own rules (`pip/_internal/req/req_file.py`):
  a trailing backslash joins the next line, `#` at the start of a line or after whitespace
  starts a comment, and the words up to the first option (`--hash=...`) are the requirement.
  Option lines (`-r other.txt`, `-e .`, `--index-url ...`) are not requirements.
- pyproject.toml is parsed by `tomllib`; `toml_strings` only finds *where* its strings are,
  with the key path each one is the value of (`("project", "dependencies")`), by a scan that
  knows TOML's four string forms, comments, table headers, dotted keys, arrays and inline
  tables. String values are decoded by `tomllib` itself.
"""

from __future__ import annotations

import bisect
import re
import tomllib
from dataclasses import dataclass

# pip's COMMENT_RE: a `#` at the start of a line or after whitespace (so `x.whl#sha256=` is no comment).
# The blanks are matched from the start of their run only: from every blank it was quadratic.
_PIP_COMMENT = re.compile(r"(^|(?<!\s)\s+)#.*$")


@dataclass(unsafe_hash=True)
class RequirementLine:
    """The requirement part of one logical line of a requirements file."""

    text: str  # as pip reads it: continuation lines joined, comment and options removed
    start: int  # byte offset of its first character
    end: int  # byte offset just after its last character (on the last physical line it spans)


def _physical_lines(data: bytes):
    """(byte offset, text) of each line, without its line break."""
    offset = 0
    for raw in data.splitlines(keepends=True):
        yield offset, raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
        offset += len(raw)


def requirement_comments(data: bytes):
    """(byte offset of `#`, comment text) for each comment of a requirements file."""
    for offset, line in _physical_lines(data):
        m = _PIP_COMMENT.search(line)
        if m is not None:
            hash_at = line.index("#", m.start())
            yield offset + len(line[:hash_at].encode()), line[hash_at:]


def requirement_lines(data: bytes) -> list[RequirementLine]:
    """The requirements of a requirements file, in order (option lines left out)."""
    out = []
    chars: list[tuple[str, int]] = []  # the logical line so far: (character, byte offset)
    for offset, line in _physical_lines(data):
        positioned = _positioned(line, offset)
        if line.endswith("\\") and not _PIP_COMMENT.match(line):
            chars.extend(positioned[:-1])
            continue
        if _PIP_COMMENT.match(line):
            positioned = [(" ", offset)] + positioned  # pip: a comment line ends a continuation
        chars.extend(positioned)
        requirement = _requirement_of(chars)
        if requirement is not None:
            out.append(requirement)
        chars = []
    if chars:
        requirement = _requirement_of(chars)
        if requirement is not None:
            out.append(requirement)
    return out


def _positioned(line: str, offset: int) -> list[tuple[str, int]]:
    out = []
    for ch in line:
        out.append((ch, offset))
        offset += len(ch.encode("utf-8", errors="surrogateescape"))
    return out


def _requirement_of(chars: list[tuple[str, int]]) -> RequirementLine | None:
    text = "".join(c for c, _ in chars)
    m = _PIP_COMMENT.search(text)
    if m is not None:
        chars = chars[: m.start()]
        text = text[: m.start()]
    # pip's break_args_options: words up to the first one that starts with `-`.
    words = []
    for word in text.split(" "):
        if word.startswith("-"):
            break
        words.append(word)
    requirement = " ".join(words)
    stripped = requirement.strip()
    if not stripped:
        return None
    first = len(requirement) - len(requirement.lstrip())
    last = first + len(stripped) - 1
    end_char, end_offset = chars[last]
    return RequirementLine(stripped, chars[first][1], end_offset + len(end_char.encode("utf-8", errors="surrogateescape")))


# ---- TOML ------------------------------------------------------------------------------
@dataclass(unsafe_hash=True)
class TomlString:
    """A string value of a TOML document and the key path it belongs to."""

    value: str
    path: tuple[str, ...]  # table and key names down to the value (array positions left out)
    start: int  # byte offsets of the literal, quotes included
    end: int


@dataclass(unsafe_hash=True)
class _Token:
    kind: str  # "string", "word", "comment", "newline", or the punctuation itself
    start: int
    end: int
    text: str


_PUNCTUATION = frozenset("[]{}=,.")
_BARE_END = frozenset(" \t\r\n#[]{}=,.\"'")


def _toml_tokens(text: str) -> list[_Token]:
    """Tokens of a TOML document (character offsets). Unterminated strings run to the end."""
    tokens, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r":
            i += 1
        elif ch == "\n":
            tokens.append(_Token("newline", i, i + 1, ch))
            i += 1
        elif ch == "#":
            end = text.find("\n", i)
            end = n if end == -1 else end
            tokens.append(_Token("comment", i, end, text[i:end]))
            i = end
        elif text.startswith('"""', i) or text.startswith("'''", i):
            end = _multiline_end(text, i + 3, text[i] * 3, escapes=ch == '"')
            tokens.append(_Token("string", i, end, text[i:end]))
            i = end
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if ch == '"' and text[j] == "\\" else 1
            end = min(j + 1, n)
            tokens.append(_Token("string", i, end, text[i:end]))
            i = end
        elif ch in _PUNCTUATION:
            tokens.append(_Token(ch, i, i + 1, ch))
            i += 1
        else:
            j = i
            while j < n and text[j] not in _BARE_END:
                j += 1
            if j == i:  # a stray character: skip it
                j += 1
            tokens.append(_Token("word", i, j, text[i:j]))
            i = j
    return tokens


def _multiline_end(text: str, i: int, quotes: str, escapes: bool) -> int:
    n = len(text)
    while i < n:
        if escapes and text[i] == "\\":
            i += 2
            continue
        if text.startswith(quotes, i):
            end = i + 3
            # Up to two more quote characters belong to the string (`""""a""""`).
            while end < n and end - i < 5 and text[end] == quotes[0]:
                end += 1
            return end
        i += 1
    return n


def _decode_string(literal: str) -> str | None:
    try:
        value = tomllib.loads(f"v = {literal}")["v"]
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, str) else None


def toml_comments(data: bytes):
    """(byte offset of `#`, comment text) for each comment of a TOML document."""
    text = data.decode("utf-8", errors="surrogateescape")
    for token in _toml_tokens(text):
        if token.kind == "comment":
            yield len(text[: token.start].encode("utf-8", errors="surrogateescape")), token.text


def toml_strings(data: bytes) -> list[TomlString]:
    """Every string value of a TOML document with its key path, in file order.

    Meant for documents `tomllib` accepts; on others the paths may be incomplete.
    """
    text = data.decode("utf-8", errors="surrogateescape")
    tokens = [t for t in _toml_tokens(text) if t.kind != "comment"]
    byte_offset = _ByteOffsets(text)
    out: list[TomlString] = []
    pos = 0
    table: tuple[str, ...] = ()

    def skip_newlines(p: int) -> int:
        while p < len(tokens) and tokens[p].kind == "newline":
            p += 1
        return p

    def read_key(p: int) -> tuple[tuple[str, ...], int]:
        parts = []
        while p < len(tokens):
            t = tokens[p]
            if t.kind == "word":
                parts.append(t.text)
            elif t.kind == "string":
                parts.append(_decode_string(t.text) or "")
            else:
                break
            p += 1
            if p < len(tokens) and tokens[p].kind == ".":
                p += 1
                continue
            break
        return tuple(parts), p

    def read_value(p: int, path: tuple[str, ...]) -> int:
        p = skip_newlines(p)
        if p >= len(tokens):
            return p
        t = tokens[p]
        if t.kind == "string":
            value = _decode_string(t.text)
            if value is not None:
                out.append(TomlString(value, path, byte_offset(t.start), byte_offset(t.end)))
            return p + 1
        if t.kind == "[":
            p += 1
            while True:
                p = skip_newlines(p)
                if p >= len(tokens) or tokens[p].kind == "]":
                    return p + 1
                if tokens[p].kind == ",":
                    p += 1
                    continue
                before = p
                p = read_value(p, path)
                if p == before:
                    p += 1
        if t.kind == "{":
            p += 1
            while p < len(tokens) and tokens[p].kind != "}":
                if tokens[p].kind in (",", "newline"):
                    p += 1
                    continue
                key, after = read_key(p)
                if not key or after >= len(tokens) or tokens[after].kind != "=":
                    p = max(after, p + 1)
                    continue
                p = read_value(after + 1, path + key)
            return p + 1
        return p + 1  # a number, boolean, date or anything else

    while pos < len(tokens):
        t = tokens[pos]
        if t.kind == "newline":
            pos += 1
        elif t.kind == "[":
            double = pos + 1 < len(tokens) and tokens[pos + 1].kind == "["
            key, pos = read_key(pos + (2 if double else 1))
            table = key
            while pos < len(tokens) and tokens[pos].kind != "newline":
                pos += 1
        else:
            key, after = read_key(pos)
            if key and after < len(tokens) and tokens[after].kind == "=":
                pos = read_value(after + 1, table + key)
            else:
                pos = max(after, pos + 1)
            while pos < len(tokens) and tokens[pos].kind != "newline":
                pos += 1  # the rest of a broken line
    return out


class _ByteOffsets:
    """Character offset -> byte offset for one text (UTF-8), by line."""

    def __init__(self, text: str):
        self.text = text
        self.line_chars, self.line_bytes = [], []
        chars = nbytes = 0
        for line in text.splitlines(keepends=True) or [""]:
            self.line_chars.append(chars)
            self.line_bytes.append(nbytes)
            chars += len(line)
            nbytes += len(line.encode("utf-8", errors="surrogateescape"))

    def __call__(self, char_offset: int) -> int:
        line = bisect.bisect_right(self.line_chars, char_offset) - 1
        start = self.line_chars[line]
        return self.line_bytes[line] + len(self.text[start:char_offset].encode("utf-8", errors="surrogateescape"))
