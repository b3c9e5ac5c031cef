"""Suppression comments.

- `// portlint: ignore[W001,W002]` on a line silences those rules there; alone on its line,
  it covers the next line. `portlint: ignore` without a list silences every rule.
- `// portlint: ignore-file[W001]` (anywhere) silences a rule in the whole file.
- clang-tidy's `// NOLINT(portlint-W001)` and `// NOLINTNEXTLINE(portlint-W001)`; globs
  such as `portlint-*` work, and a bare NOLINT silences everything, as in clang-tidy.
- `#` comments take the same forms in CMake, Python and Makefiles (where a comment may also
  end a variable assignment or a recipe line), requirements files (pip's comment rule) and
  pyproject.toml (`#` outside strings).
"""

from __future__ import annotations

import fnmatch
import io
import re
import tokenize
from dataclasses import dataclass, field

from portlint import manifests, queries
from portlint.ruledocs import load_all
from portlint.source import CMAKE, CUDA, MAKE, PYPROJECT, PYTHON, REQUIREMENTS, SourceFile
from portlint.ruledocs import load_all

ALL = "*"
_PORTLINT = re.compile(r"portlint:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?")
_NOLINT = re.compile(r"\b(NOLINTNEXTLINE|NOLINT)\b(?:\(([^)]*)\))?")
# A `//` comment that ends a line of a macro definition is part of its `preproc_arg` text.
_COMMENT_QUERY = {CUDA: "[(comment) @c (preproc_arg) @a]", CMAKE: "[(line_comment) (bracket_comment)] @c"}


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)  # 1-based line -> selectors
    whole_file: set[str] = field(default_factory=set)
    # (1-based line, selector) for selectors that name no rule (`ignore[W999]`): a typo
    # there silences nothing, so it is reported.
    unknown: list[tuple[int, str]] = field(default_factory=list)

    def add(self, line: int, selectors: set[str]) -> None:
        self.by_line.setdefault(line, set()).update(selectors)

    def covers(self, code: str, name: str, line: int) -> bool:
        doc = load_all().get(code)
        aliases = doc.aliases if doc is not None else ()  # a retired code still suppresses its successor
        for selectors in (self.whole_file, self.by_line.get(line, ())):
            if any(selects(s, code, name) or s in aliases for s in selectors):
                return True
        return False


def silenced(line: bytes, language: str, code: str) -> bytes | None:
    """`line` (without its line ending) with what silences rule `code` on it, an editor's
    quick fix: the code joins a `portlint: ignore[...]` list already there, else a comment
    ends the line (in C code, before a backslash that continues it). None where no comment
    can end the line: one a backslash continues outside C code."""
    text = line.decode("utf-8", "surrogateescape")
    existing = _PORTLINT.search(text)
    if existing is not None and existing.group(1) == "ignore" and existing.group(2) is not None:
        listed = existing.group(2)
        joined = f"{listed.rstrip()}, {code}" if listed.strip() else code
        return (text[:existing.start(2)] + joined + text[existing.end(2):]).encode("utf-8", "surrogateescape")
    body = text.rstrip()
    if body.endswith("\\"):
        if language != CUDA:
            return None
        return f"{body[:-1].rstrip()} /* portlint: ignore[{code}] */ \\".encode("utf-8", "surrogateescape")
    marker = "//" if language == CUDA else "#"
    return f"{body}  {marker} portlint: ignore[{code}]".encode("utf-8", "surrogateescape")


def selects(selector: str, code: str, name: str) -> bool:
    if selector == ALL:
        return True
    return selector in (code, name) or code.startswith(selector) or fnmatch.fnmatchcase(code, selector)


def is_known(selector: str) -> bool:
    """Whether `selector` can select some rule: `*`, a code, a name, a family prefix or a glob."""
    if selector == ALL:
        return True
    docs = load_all()
    return any(selects(selector, code, doc.name) for code, doc in docs.items())


def parse(source: SourceFile) -> Suppressions:
    result = Suppressions()
    if b"portlint" not in source.data and b"NOLINT" not in source.data:
        return result
    for start, text in _comments(source):
        line = source.line_of(start) + 1
        own_line = not source.data[source.line_start(line - 1):start].strip()
        for match in _PORTLINT.finditer(text):
            selectors = _list(match.group(2))
            result.unknown.extend((line, s) for s in sorted(selectors) if not is_known(s))
            if match.group(1) == "ignore-file":
                result.whole_file |= selectors
            else:
                result.add(line, selectors)
                if own_line:
                    result.add(line + 1, selectors)
        for match in _NOLINT.finditer(text):
            selectors = _nolint_list(match.group(2))
            if not selectors:
                continue
            result.unknown.extend((line, s) for s in sorted(selectors) if not is_known(s))
            result.add(line + 1 if match.group(1) == "NOLINTNEXTLINE" else line, selectors)
    return result


def _list(raw: str | None) -> set[str]:
    if raw is None:
        return {ALL}
    return {s.strip() for s in raw.split(",") if s.strip()}


def _nolint_list(raw: str | None) -> set[str]:
    """Selectors aimed at portlint in a NOLINT list (`portlint-W001`, `portlint-*`)."""
    if raw is None:
        return {ALL}
    selectors = set()
    for item in (s.strip() for s in raw.split(",")):
        if item in ("*", "portlint-*", "portlint*"):
            selectors.add(ALL)
        elif item.startswith("portlint-"):
            selectors.add(item.removeprefix("portlint-"))
    return selectors


def _comments(source: SourceFile):
    if source.language == PYTHON:
        try:
            for tok in tokenize.tokenize(io.BytesIO(source.data).readline):
                if tok.type == tokenize.COMMENT:
                    yield source.python_offset(tok.start[0], len(
                        source.line_bytes(tok.start[0] - 1).decode("utf-8", "replace")[: tok.start[1]].encode()
                    )), tok.string
        except (tokenize.TokenError, SyntaxError):
            return
        return
    if source.language == MAKE:
        yield from _make_comments(source)
        return
    if source.language == REQUIREMENTS:
        yield from manifests.requirement_comments(source.data)  # pip's rule: `#` after whitespace
        return
    if source.language == PYPROJECT:
        yield from manifests.toml_comments(source.data)  # a TOML scan that skips strings
        return
    for name, node in queries.captures(source.language, _COMMENT_QUERY[source.language], source.tree.root_node):
        if name == "c":
            yield node.start_byte, source.node_text(node)
            continue
        # A macro's body: each of its lines from a `//` on (one inside a string literal
        # matters only if a suppression follows it).
        data, at = source.data, source.data.find(b"//", node.start_byte, node.end_byte)
        while at != -1:
            end = data.find(b"\n", at, node.end_byte)
            end = node.end_byte if end == -1 else end
            yield at, data[at:end].decode("utf-8", errors="replace")
            at = data.find(b"//", end, node.end_byte)


# Whole-line comments are nodes; a `#` that ends an assignment's value or a recipe line is
# part of that node's text (make strips the first, the shell the second).
_MAKE_COMMENT_QUERY = "[(comment) @c (variable_assignment value: (text) @v) (shell_text) @v]"


def _make_comments(source: SourceFile):
    for name, node in queries.captures(MAKE, _MAKE_COMMENT_QUERY, source.tree.root_node):
        if name == "c":
            yield node.start_byte, source.node_text(node)
            continue
        # The first `#` outside `$(...)` references and not escaped as `\#`.
        skip = [(c.start_byte, c.end_byte) for c in node.named_children]
        data = source.data
        at = data.find(b"#", node.start_byte, node.end_byte)
        while at != -1:
            if data[at - 1:at] != b"\\" and not any(s <= at < e for s, e in skip):
                yield at, data[at:node.end_byte].decode("utf-8", errors="replace")
                break
            at = data.find(b"#", at + 1, node.end_byte)
