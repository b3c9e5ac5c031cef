"""One scanned file: its bytes, a line index, and the parse tree built once on first use.

Checks see positions only as byte offsets; this module is the one place that turns them
into 1-based lines and columns (UTF-16 code units, as SARIF's `columnKind` says).
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import itertools
import re
import tomllib
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from typing import TYPE_CHECKING

from portlint import hipify, queries
from portlint.shown_paths import shows_paths

if TYPE_CHECKING:
    from portlint.build_model.macros import FileEnvironment
    from portlint.rocm_path import RocmPathModel

# Languages portlint reads, named as in rule front matter.
CUDA = "cuda"  # C, C++, CUDA and HIP, all through the tree-sitter CUDA grammar
CMAKE = "cmake"
PYTHON = "python"  # every .py file, read with `ast`
MAKE = "make"  # Makefile, GNUmakefile, *.mk, *.make (tree-sitter-make)
REQUIREMENTS = "requirements"  # requirements*.txt, pip-tools *.in, constraints: read line by line
PYPROJECT = "pyproject"  # pyproject.toml, read with tomllib
LANGUAGES = (CUDA, CMAKE, PYTHON, MAKE, REQUIREMENTS, PYPROJECT)
# Read as text by their own checks: no tree-sitter grammar, no parse tree.
TEXT_LANGUAGES = (REQUIREMENTS, PYPROJECT)
# A role some Python files have besides their language: setup.py and configured build
# scripts. Rules about builds register under it; the engine runs them on build scripts only.
BUILD_SCRIPT = "build-script"


# How many files this process has parsed, tree-sitter or `ast` (the cache tests count them).
files_parsed = 0


@shows_paths("path")
@dataclass(unsafe_hash=True)  # a value class (see the package's docstring)
class Location:
    """A region of a file, kept both as bytes (for edits) and as lines/columns (for reports).

    Lines are 1-based; columns are 1-based UTF-16 code units; `end_column` is exclusive.
    `snippet` is the text of the first line, for the human report.
    """

    path: str
    start_byte: int
    end_byte: int
    start_line: int
    start_column: int
    end_line: int
    end_column: int
    snippet: str = ""

    @classmethod
    def whole_file(cls, path: str) -> "Location":
        """A file as a whole, with no region (a binary such as a stale `.so`)."""
        return cls(path, 0, 0, 0, 0, 0, 0)

    @property
    def has_region(self) -> bool:
        return self.start_line > 0


@dataclass
class SourceFile:
    """The object every check receives.

    `path` is the path as it should be shown (relative to where the scan started); `root`
    anchors SARIF URIs. The tree is parsed lazily and only once.
    """

    path: str
    language: str
    data: bytes
    absolute_path: Path | None = None
    build_script: bool = False
    digest: str = field(init=False)
    # Set when bytes that are not UTF-8 were read as `?`: the one line that tells the user.
    decoding_note: str = field(default="", init=False, repr=False, compare=False)
    # The ROCm-path model, set by the engine before checks run. Rules about the guards
    # themselves (P001-P004) read its parsed `conditions`.
    rocm_path: "RocmPathModel | None" = field(default=None, init=False, repr=False)
    # The macros the ROCm and the CUDA build define where this file stands, and the shims
    # (`portlint.build_model.macros.FileEnvironment`), set by the engine before the model is
    # built; None when the scan has none (a snippet in a test).
    build: "FileEnvironment | None" = field(default=None, init=False, repr=False, compare=False)
    # Results several checks share (one query run per file), through `checks.cpp.memoized`.
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    # Line index -> its text, one string per line: see `_snippet`.
    _snippets: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    # Line index -> `_utf16_table` of the line, made on the first column asked for in it.
    _utf16_tables: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.digest = hashlib.sha256(self.data).hexdigest()

    @property
    def check_keys(self) -> tuple[str, ...]:
        """The registry keys whose checks run on this file: its language, and its role."""
        return (self.language, BUILD_SCRIPT) if self.build_script else (self.language,)

    # ---- text and positions -------------------------------------------------------
    @cached_property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="surrogateescape")

    @cached_property
    def _line_starts(self) -> list[int]:
        # From the lines' lengths: `split` and `accumulate` run in C, a `find` loop does not.
        lines = self.data.split(b"\n")
        return list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))

    def line_of(self, offset: int) -> int:
        """0-based line index containing byte `offset`."""
        return bisect.bisect_right(self._line_starts, offset) - 1

    def line_bytes(self, line: int) -> bytes:
        starts = self._line_starts
        end = starts[line + 1] if line + 1 < len(starts) else len(self.data)
        return self.data[starts[line]:end].rstrip(b"\r\n")

    def line_start(self, line: int) -> int:
        return self._line_starts[line]

    def _utf16_column(self, line: int, offset: int) -> int:
        start = self._line_starts[line]
        table = self._utf16_tables.get(line)
        if table is None:
            table = self._utf16_tables[line] = _utf16_table(self.line_bytes(line))
        if not table[0]:  # an ASCII line: one UTF-16 unit per byte
            return offset - start + 1
        ends, saved = table
        k = bisect.bisect_right(ends, offset - start)
        return offset - start - (saved[k - 1] if k else 0) + 1

    @cached_property
    def _ascii(self) -> bool:
        return self.data.isascii()

    def location(self, start: int, end: int | None = None) -> Location:
        end = start if end is None else end
        starts = self._line_starts
        start_line = bisect.bisect_right(starts, start) - 1
        # A region ending just after a newline ends on that line, not the next one.
        end_line = bisect.bisect_right(starts, end - 1) - 1 if end > start else start_line
        if self._ascii:  # one UTF-16 unit per byte: most files, and a location per fact of theirs
            start_column, end_column = start - starts[start_line] + 1, end - starts[end_line] + 1
        else:
            start_column, end_column = self._utf16_column(start_line, start), self._utf16_column(end_line, end)
        return Location(self.path, start, end, start_line + 1, start_column, end_line + 1, end_column,
                        self._snippet(start_line))

    def _snippet(self, line: int) -> str:
        # One string per line, shared by its locations: a kernel's name and insertion point
        # are on the same line, and pickled results (the cache) store a shared string once.
        snippet = self._snippets.get(line)
        if snippet is None:
            snippet = self._snippets[line] = self.line_bytes(line).decode("utf-8", errors="replace")
        return snippet

    def node_text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    # ---- what the ROCm build compiles in place of a CUDA name (the shims) ------------
    def shim(self, name: str, offset: int):
        """The project macro (`Macro`) the ROCm build defines over `name` where `offset`
        stands (`#define cublasSgemm hipblasSgemm` in a HIP-only header), or None. A rule
        judges what that macro compiles to, not the CUDA spelling it sees."""
        return self.build.shim(name, offset) if self.build is not None else None

    def shim_drops_argument(self, name: str, index: int, offset: int) -> bool:
        """Does the ROCm build's macro over the call `name(...)` at `offset` drop argument
        `index` (`#define __shfl_xor_sync(mask, v, o) __shfl_xor(v, o)`: the mask)?"""
        macro = self.shim(name, offset)
        return macro is not None and macro.uses_parameter(index) is False

    # ---- what hipify makes of a CUDA name, where the ROCm build hipifies the file ----
    @property
    def hipified(self) -> bool:
        """The ROCm build runs hipify on this file before hip-clang reads it."""
        return self.build is not None and self.build.hipified

    def hipified_name(self, name: str) -> str | None:
        """The name hip-clang reads for `name` in a hipified file (`cublasSgemm` ->
        `hipblasSgemm`); None where the file is not hipified or hipify leaves the name."""
        return hipify.hip_name(name, self.build.hipified) if self.hipified else None

    def hipified_header(self, include_path: str) -> str | None:
        """The header hip-clang reads for `#include <include_path>` in a hipified file."""
        return hipify.hip_header(include_path, self.build.hipified) if self.hipified else None

    def rocm_defines_function(self, name: str, offset: int) -> bool:
        """Does ROCm-compiled project code define `name` (`__vsub4` in a HIP arm, a shim
        header's `typedef hipblasFillMode_t cublasFillMode_t;`), or a macro over it, where
        `offset` stands? Then the ROCm build has it."""
        if self.build is None:
            return False
        return self.build.rocm_function(name, offset) or self.build.shim(name, offset) is not None

    # ---- parse trees --------------------------------------------------------------
    @cached_property
    def tree(self):
        """The tree-sitter tree (C family and CMake)."""
        global files_parsed
        files_parsed += 1
        return queries.parse_indexed(self.language, self.data)

    @cached_property
    def python_ast(self) -> ast.Module:
        """The `ast` module tree (Python). Raises SyntaxError, which the engine reports."""
        global files_parsed
        files_parsed += 1
        try:
            return parse_python(self.data, self.path)
        except MemoryError as exc:  # what Python's parser raises past its own nesting limit
            raise RecursionError("too deeply nested for Python's parser") from exc

    def python_offset(self, lineno: int, col_offset: int) -> int:
        """Byte offset of an `ast` position (1-based line, UTF-8 byte column)."""
        return self._line_starts[lineno - 1] + col_offset

    def python_range(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.python_offset(node.lineno, node.col_offset),
            self.python_offset(node.end_lineno, node.end_col_offset),
        )


def module_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of a parsed module, in `ast.walk`'s order, listed once: the build model and
    the Python rules each go through a whole module several times, and `ast.walk`'s
    generator costs more than the work done at each node."""
    nodes = tree.__dict__.get("_portlint_nodes")
    if nodes is None:
        nodes = _index_module(tree)[0]
    return nodes


def module_parents(tree: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> its parent, for every node of a parsed module but the module (made once)."""
    parents = tree.__dict__.get("_portlint_parents")
    if parents is None:
        parents = _index_module(tree)[1]
    return parents


def _index_module(tree: ast.AST) -> tuple[list[ast.AST], dict[int, ast.AST]]:
    """`module_nodes` and `module_parents` in one pass: breadth first, children in field
    order, as `ast.walk` goes (a loop over a list, without its three nested generators)."""
    nodes, parents = [tree], {}
    node_type = ast.AST
    at = 0
    while at < len(nodes):
        node = nodes[at]
        at += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                nodes.append(value)
                parents[id(value)] = node
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        nodes.append(item)
                        parents[id(item)] = node
    tree._portlint_nodes, tree._portlint_parents = nodes, parents
    return nodes, parents


def parse_python(data: bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, without the warnings Python prints about the scanned code itself (an
    invalid escape like `'\\O'` in a setup.py is the project's business, not a line of ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(data, filename=filename)


# One UTF-8 sequence, or a byte that starts none (decoded as one U+FFFD).
_UTF8_CHARACTER = re.compile(rb"[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf7][\x80-\xbf]{3}|[\x80-\xff]")


def _utf16_table(line: bytes) -> tuple[list[int], list[int]]:
    """Where a line's bytes and UTF-16 units part: the end (from the line start) of each
    non-ASCII character and how many bytes more than units the line has up to there. A
    column is then a bisection, not a decoding of the line up to it: a 5 MB line with a
    finding every few bytes would decode its start again for each of them."""
    ends, saved, total = [], [], 0
    if not line.isascii():
        for m in _UTF8_CHARACTER.finditer(line):
            length = m.end() - m.start()
            total += length - (2 if length == 4 else 1)  # 4 UTF-8 bytes are a surrogate pair
            ends.append(m.end())
            saved.append(total)
    return ends, saved


def count_syntax_errors(language: str, data: bytes) -> int:
    """How many syntax errors `data` has (a fix must not add any)."""
    if language in TEXT_LANGUAGES:
        try:
            text = data.decode("utf-8")
            if language == PYPROJECT:
                tomllib.loads(text)
            return 0
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return 1 << 30
    if language == PYTHON:
        try:
            parse_python(data)
            return 0
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # the last two: too deep to parse
            return 1 << 30
    root = queries.parse(language, data).root_node
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        elif node.has_error:
            stack.extend(node.children)
    return count
