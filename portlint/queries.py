"""Tree-sitter languages, the parser, and queries compiled once per language.

Captures come back sorted by `start_byte`: tree-sitter 0.26 returns them grouped by name.
"""

from __future__ import annotations

from functools import cache

import tree_sitter
import tree_sitter_cmake
import tree_sitter_cuda

_GRAMMARS = {
    "cuda": tree_sitter_cuda.language,
    "cmake": tree_sitter_cmake.language,
}


@cache
def language(name: str) -> tree_sitter.Language:
    return tree_sitter.Language(_GRAMMARS[name]())


@cache
def _parser(name: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(language(name))


def parse(name: str, data: bytes) -> tree_sitter.Tree:
    return _parser(name).parse(data)


@cache
def query(lang: str, source: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(lang), source)


def captures(lang: str, source: str, node) -> list[tuple[str, tree_sitter.Node]]:
    """All captures of `source` under `node` as (name, node), in source order."""
    found = tree_sitter.QueryCursor(query(lang, source)).captures(node)
    pairs = [(name, n) for name, nodes in found.items() for n in nodes]
    pairs.sort(key=lambda p: (p[1].start_byte, -p[1].end_byte))
    return pairs


def nodes(lang: str, source: str, node, capture: str) -> list[tree_sitter.Node]:
    """The nodes of one capture name, in source order."""
    found = tree_sitter.QueryCursor(query(lang, source)).captures(node).get(capture, [])
    return sorted(found, key=lambda n: (n.start_byte, -n.end_byte))


def matches(lang: str, source: str, node) -> list[dict[str, list[tree_sitter.Node]]]:
    """Each match as {capture: [nodes]}, in order of the match's first node."""
    found = [m for _, m in tree_sitter.QueryCursor(query(lang, source)).matches(node)]
    found.sort(key=lambda m: min(n.start_byte for ns in m.values() for n in ns))
    return found
