"""Tree-sitter languages, the parser, and queries compiled once per language.

Captures come back sorted by `start_byte`: tree-sitter 0.26 returns them grouped by name.
"""

from __future__ import annotations

from functools import cache

import tree_sitter
import tree_sitter_cmake
import tree_sitter_cuda
import tree_sitter_make

_GRAMMARS = {
    "cuda": tree_sitter_cuda.language,
    "cmake": tree_sitter_cmake.language,
    "make": tree_sitter_make.language,
}


@cache
def language(name: str) -> tree_sitter.Language:
    return tree_sitter.Language(_GRAMMARS[name]())


@cache
def _parser(name: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(language(name))


def parse(name: str, data: bytes) -> tree_sitter.Tree:
    tree = _parser(name).parse(data)
    if name == "make" and b"\n\t" in data:
        tree = _make_lines_reparsed(tree, data)
    return tree


def _make_lines_reparsed(tree: tree_sitter.Tree, data: bytes) -> tree_sitter.Tree:
    """tree-sitter-make reads a tab-indented line with no rule before it (`\tCFLAGS += -O3`
    in an `ifdef` block, as llama.cpp's Makefile writes them) as a recipe line; GNU make
    reads a make line there. Parse again with those tabs as spaces (same byte offsets)."""
    for _ in range(3):
        orphans = [n for n in nodes("make", "(recipe_line) @line", tree.root_node, "line") if not _in_recipe(n)]
        if not orphans:
            break
        shadow = bytearray(data)
        for line in orphans:
            at = line.start_byte - 1
            while at >= 0 and shadow[at] in b" \t":
                if shadow[at] == 0x09:
                    shadow[at] = 0x20
                at -= 1
        data = bytes(shadow)
        tree = _parser("make").parse(data)
    return tree


def _in_recipe(node) -> bool:
    parent = node.parent
    while parent is not None and parent.type != "recipe":
        parent = parent.parent
    return parent is not None


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
