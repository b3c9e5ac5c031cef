"""Shared queries are matched in Python (`portlint.queries`): every one must give what
tree-sitter gives, match for match and in the same order, on every fixture, for the whole
tree, for subtrees and for the tree of macro bodies."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import tree_sitter

import portlint.registry  # noqa: F401 - registers the checks' shared queries
from portlint import project, queries, rocm_path
from portlint.checks import cpp
from portlint.checks.wavefront_size import _CANDIDATE_NAMES, _candidate_names
from portlint.source import CUDA, SourceFile
from portlint.triggers import Probe, nocase, trigger

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
C_FAMILY = re.compile(r"\.(cu|cuh|hip|cpp|cc|cxx|c|h|hpp|hh|hxx|inl|ipp|tpp)$")
FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and C_FAMILY.search(p.name))


def _shown(match: dict) -> list:
    return [(name, [(n.type, n.start_byte, n.end_byte) for n in nodes]) for name, nodes in sorted(match.items())]


@functools.cache
def _compiled_here(source: str) -> tree_sitter.Query:
    """Compiled apart from `queries.query`: the code under test must not learn of it."""
    return tree_sitter.Query(queries.language(CUDA), source)


def _tree_sitter(source: str, node) -> list:
    found = [m for _, m in tree_sitter.QueryCursor(_compiled_here(source)).matches(node)]
    found.sort(key=queries._first_start)
    return [_shown(m) for m in found]


@pytest.fixture(scope="module")
def unshared_sources() -> list[str]:
    """The query sources the checks ask but do not share: while one is not compiled, small
    trees have it matched in Python too. A scan of the fixtures with an unlimited budget
    asks (and reads) every one of them."""
    from portlint import engine
    from portlint.config import Config

    budget, compiled = queries.PYTHON_WALK_BUDGET, queries._COMPILED
    queries.PYTHON_WALK_BUDGET, queries._COMPILED = 10**12, {}  # whatever earlier tests compiled
    try:
        engine.scan([FIXTURES], Config(root=FIXTURES, timeout=0), jobs=1)
    finally:
        queries.PYTHON_WALK_BUDGET, queries._COMPILED = budget, compiled
    readable = sorted(source for source, parsed in queries._READABLE.items() if parsed is not None)
    assert len(readable) >= 10  # the checks' own: `(identifier) @id`, stores of masks, ...
    return readable


def _compare(root, sources=()) -> None:
    subtrees = queries.nodes(CUDA, "(function_definition) @f", root, "f")[:8]
    subtrees += [n for n in queries.nodes(CUDA, "(for_statement) @loop", root, "loop")[:4]]
    for source in (*queries._SHARED[CUDA], *sources):
        assert (CUDA, source) not in queries._COMPILED or source in queries._SHARED[CUDA]
        for node in [root, *subtrees]:
            ours = [_shown(m) for m in queries.matches(CUDA, source, node)]
            assert ours == _tree_sitter(source, node), (source, node.type, node.start_byte)


def test_the_queries_most_files_ask_are_shared() -> None:
    # Calls, conditional chains and function definitions are asked of nearly every parsed file:
    # they are answered from the one walk, not by a tree-sitter run each.
    for source in (cpp._ALL_CALLS, rocm_path._CHAIN_QUERY, project._FUNCTIONS):
        assert source in queries._SHARED[CUDA]
    # Every shared query can be answered for subtrees too (its outermost node is known).
    assert all(q.patterns for q in queries._SHARED[CUDA].values())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_python_matches_equal_tree_sitter_matches(path: Path, unshared_sources, monkeypatch) -> None:
    monkeypatch.setattr(queries, "PYTHON_WALK_BUDGET", 10**12)  # every tree matched in Python,
    monkeypatch.setattr(queries, "_COMPILED", {})  # whatever earlier tests compiled
    source = SourceFile(path.name, CUDA, path.read_bytes())
    _compare(source.tree.root_node, unshared_sources)
    macros = cpp.macro_tree(source)
    if macros is not None:
        _compare(macros, unshared_sources)


@pytest.mark.parametrize("path", FILES[::3], ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_a_walk_in_python_collects_what_the_walk_query_captures(path: Path) -> None:
    root = queries.parse(CUDA, path.read_bytes()).root_node
    for types in (queries._first_walk(CUDA), queries._COSTLY_TYPES, frozenset({"comment", "ERROR"})):
        captured = tree_sitter.QueryCursor(queries.query(CUDA, queries._walk_source(types))).captures(root)
        collected = queries._collect(root, types)
        # The same nodes; in source order (tree-sitter's is not always: its users sort).
        assert {t: {n.id for n in ns} for t, ns in collected.items()} == {t: {n.id for n in ns} for t, ns in captured.items()}
        assert all(ns == sorted(ns, key=queries._order) for ns in collected.values())


def test_a_query_is_compiled_once_small_trees_have_walked_its_budget(monkeypatch) -> None:
    monkeypatch.setattr(queries, "PYTHON_WALK_BUDGET", 300)
    monkeypatch.setattr(queries, "_WALKED_IN_PYTHON", {})
    source = "(return_statement) @r"  # asked by no check: neither shared nor compiled
    queries._COMPILED.pop((CUDA, source), None)
    small = b"int f() { return 1; }\n" * 5
    for _ in range(4):
        tree = queries.parse_indexed(CUDA, small)
        assert len(queries.nodes(CUDA, source, tree.root_node, "r")) == 5
        assert (CUDA, source) not in queries._COMPILED
    tree = queries.parse_indexed(CUDA, small * 4)  # past the budget: compiled from now on
    assert len(queries.nodes(CUDA, source, tree.root_node, "r")) == 20
    assert (CUDA, source) in queries._COMPILED


def test_a_tree_that_is_not_indexed_runs_the_query_in_tree_sitter() -> None:
    tree = queries.parse(CUDA, b"void f() { g(1); h(2); }\n")
    assert queries._index_of(tree.root_node) is None
    assert [n.text for n in queries.nodes(CUDA, cpp._ALL_CALLS, tree.root_node, "call")] == [b"g(1)", b"h(2)"]


@pytest.mark.parametrize("path", FILES[::7], ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_enclosing_function_equals_the_parent_walk(path: Path) -> None:
    def by_parents(node):
        node = node.parent
        while node is not None and node.type != "function_definition":
            node = node.parent
        return node

    tree = queries.parse_indexed(CUDA, path.read_bytes())
    pending = [tree.root_node]
    while pending:
        node = pending.pop()
        pending.extend(node.children)
        expected, found = by_parents(node), cpp.enclosing_function(node)
        assert (found.id if found else None) == (expected.id if expected else None)


def test_macro_bodies_parse_alone_as_in_the_blanked_file() -> None:
    data = (b"#define A(x) ((x) & 31)  // lane\n#define B __shfl_xor_sync(0xffffffff, v, 1)\n"
            b"int main() { return 0; }\n#define C(i) \\\n  ((i) >> 5)\n")
    source = SourceFile("m.cu", CUDA, data)
    root = cpp.macro_tree(source)
    shadow = bytearray(data.translate(cpp._BLANK_BUT_NEWLINES))
    for match in queries.matches(CUDA, cpp._MACRO_BODIES, source.tree.root_node):
        body, macro = match["body"][0], match["macro"][0]
        shadow[macro.start_byte] = ord(";")
        shadow[body.start_byte:body.end_byte] = data[body.start_byte:body.end_byte]
    whole = queries.parse(CUDA, bytes(shadow)).root_node

    def shape(node):
        return (node.type, node.start_byte, node.end_byte, tuple(shape(c) for c in node.children))

    assert [shape(c) for c in root.children] == [shape(c) for c in whole.children]


def test_candidate_names_equal_the_regex() -> None:
    for path in FILES:
        data = path.read_bytes()
        expected = [(m.start(), m.end(), m.group()) for m in _CANDIDATE_NAMES.finditer(data)]
        assert [(m.start(), m.end(), m.group()) for m in _candidate_names(data)] == expected, path


def test_probe_answers_like_a_plain_search() -> None:
    tokens = [b"__shfl", b"_sync", b"<<<", b"<<", b"/ 32", b"[32]", b".ptx", b"cub/", b"= hipError", b"warpSize"]
    for path in FILES:
        data = path.read_bytes()
        probe = Probe(data)
        for token in tokens:
            assert trigger(token).holds(probe) == (token in data), (path, token)
        for token in (b"lane", b"warp", b"tid"):
            assert nocase(token).holds(probe) == (token in data.lower()), (path, token)
