"""Tree-sitter languages, the parser, and queries compiled once per language.

Captures come back sorted by `start_byte`: tree-sitter 0.26 returns them grouped by name.

Shared queries: every tree-sitter query compiles in 7-14 ms against the CUDA grammar and
each run walks the whole tree, so a file read by dozens of queries paid dozens of walks.
A query source registered with `shared(lang, src)` (at import time, next to where a check
defines it) is instead matched in Python (`_Pattern`, the subset of the query language the
checks use: node types, fields, child patterns, alternations, `(_)`, anonymous nodes,
captures and the `#eq?`, `#any-of?`, `#match?` predicates) against the nodes of its outermost
types. Those nodes come from one walk per tree: a single query of bare node types, run on
the first shared request for a tree parsed with `parse_indexed`. A request on a subtree keeps
the matches whose outermost node lies inside it, as a query run on the subtree would. Other
queries, and trees not parsed with `parse_indexed`, run in tree-sitter, except while a query
is not worth compiling yet (`_in_python`): then small trees are walked, and other queries
matched, in Python too. `tests/test_queries.py` checks that both give the same matches, in the same order.
`precompile()` prepares everything up front: the engine calls it before forking workers.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
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
    if name == "make" and b"#" in data and b"$" in data:
        data = _make_hashes_in_calls_masked(data)
    if name == "cuda" and b"__has_include" in data:
        data = _has_include_arguments_masked(data)
    tree = _parser(name).parse(data)
    if name == "make" and b"\n\t" in data:
        tree = _make_lines_reparsed(tree, data)
    return tree


_HAS_INCLUDE = b"__has_include"
IDENTIFIER_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _has_include_arguments_masked(data: bytes) -> bytes:
    """tree-sitter-cpp's preprocessor expressions take no header name: `#if
    __has_include(<cuda_fp8.h>)` (or `"x.h"`, or `__has_include_next`) is an ERROR there, and
    the `#else`/`#endif` after it attach to the wrong `#if` (an `#ifdef X_USE_CUDA` around it
    then ends early, and its CUDA-only code reads as compiled on ROCm). Parse with the header
    name's punctuation as `_` (`__has_include(_cuda_fp8_h_)`, a call the grammar reads; same
    byte offsets: node text is read from the file's own bytes)."""
    shadow = None
    at = data.find(_HAS_INCLUDE)
    while at != -1:
        opening = at + len(_HAS_INCLUDE)
        while opening < len(data) and data[opening] in IDENTIFIER_BYTES:  # `__has_include_next`
            opening += 1
        while opening < len(data) and data[opening] in b" \t":
            opening += 1
        newline = data.find(b"\n", opening)
        end = data.find(b")", opening, newline if newline != -1 else len(data))
        if opening < len(data) and data[opening] == ord("(") and end != -1:
            argument = data[opening + 1:end].strip()
            if argument[:1] in (b"<", b'"'):
                if shadow is None:
                    shadow = bytearray(data)
                for i in range(opening + 1, end):
                    if shadow[i] not in IDENTIFIER_BYTES and shadow[i] not in b" \t":
                        shadow[i] = 0x5F
        at = data.find(_HAS_INCLUDE, opening)
    return bytes(shadow) if shadow is not None else data


_MAKE_CLOSERS = {ord("("): ord(")"), ord("{"): ord("}")}
_MAKE_LOGICAL_LINE = re.compile(rb"(?:[^\n]*\\\n)*[^\n]*\n?")  # backslash-continued lines as one


def _make_hashes_in_calls_masked(data: bytes) -> bytes:
    """GNU make reads `#` inside a variable reference or function call literally
    (`$(error see https://example.org/doc#section)`); tree-sitter-make starts a comment there
    and loses the rest of the file. Parse with such a `#` as `_` (same byte offsets: node
    text is read from the file's own bytes)."""
    shadow = None
    for line in _MAKE_LOGICAL_LINE.finditer(data):
        text = line.group()
        if b"#" not in text or b"$" not in text:
            continue
        closers: list[int] = []  # what closes each open reference or parenthesis, innermost last
        previous = 0
        for at, byte in enumerate(text, line.start()):
            if byte in _MAKE_CLOSERS and (closers or previous == 0x24):  # `$(`, `${`, or a bracket inside one
                closers.append(_MAKE_CLOSERS[byte])
            elif closers and byte == closers[-1]:
                closers.pop()
            elif byte == 0x23 and closers and previous != 0x5C:
                if shadow is None:
                    shadow = bytearray(data)
                shadow[at] = 0x5F
            previous = byte
    return bytes(shadow) if shadow is not None else data


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


def query(lang: str, source: str) -> tree_sitter.Query:
    compiled = _COMPILED.get((lang, source))
    if compiled is None:
        compiled = _COMPILED[lang, source] = tree_sitter.Query(language(lang), source)
    return compiled


# ---- compile, or walk in Python -------------------------------------------------------------
# Compiling a tree-sitter query costs 7-14 ms against the CUDA grammar whatever its size (its
# analysis visits the grammar's parse states), once per process; walking a tree in Python
# costs about 2 µs a node. So while a query is not compiled, small trees are walked (and
# matched) in Python, until the nodes walked that way for it add up to about what compiling
# costs; then it is compiled. A run on one small file (the pre-commit case) compiles none of
# its queries; a whole scan pays at most twice the compile for each.
PYTHON_WALK_BUDGET = 5000  # nodes per query
_COMPILED: dict[tuple[str, str], tree_sitter.Query] = {}  # (language, source) -> query
_WALKED_IN_PYTHON: dict[object, int] = {}  # query key -> nodes walked in Python for it so far


def _in_python(key, nodes: int) -> bool:
    """Whether to answer query `key` on a tree of `nodes` nodes in Python (it is not compiled,
    and the budget is not spent); counts the nodes against the budget."""
    spent = _WALKED_IN_PYTHON.get(key, 0) + nodes
    if spent > PYTHON_WALK_BUDGET:
        return False
    _WALKED_IN_PYTHON[key] = spent
    return True


def _collect(root, types: frozenset[str]) -> dict[str, list]:
    """The named nodes of `types` under `root`, what the query `_walk_source(types)` finds,
    without compiling it: in the tree's preorder (the query's order is not always sorted;
    what reads the buckets sorts them)."""
    found: dict[str, list] = {}
    cursor = root.walk()
    while True:
        node = cursor.node
        kind = node.type
        if kind in types and node.is_named:
            if kind in found:
                found[kind].append(node)
            else:
                found[kind] = [node]
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _order(node) -> tuple[int, int]:
    return (node.start_byte, -node.end_byte)


def _first_start(match: dict) -> int:
    return min(n.start_byte for ns in match.values() for n in ns)


def captures(lang: str, source: str, node) -> list[tuple[str, tree_sitter.Node]]:
    """All captures of `source` under `node` as (name, node), in source order."""
    shared = _shared_matches(lang, source, node)
    if shared is None:
        found_by_name = tree_sitter.QueryCursor(query(lang, source)).captures(node)
        pairs = [(name, n) for name, nodes in found_by_name.items() for n in nodes]
    else:
        found, inside = shared
        by_name: dict[str, list] = {}
        for i in inside:
            for name, n in found.captures[i]:
                by_name.setdefault(name, []).append(n)
        pairs = [(name, n) for name, nodes in by_name.items() for n in nodes]
    pairs.sort(key=lambda p: (p[1].start_byte, -p[1].end_byte))
    return pairs


def nodes(lang: str, source: str, node, capture: str) -> list[tree_sitter.Node]:
    """The nodes of one capture name, in source order."""
    shared = _shared_matches(lang, source, node)
    if shared is None:
        return sorted(tree_sitter.QueryCursor(query(lang, source)).captures(node).get(capture, []), key=_order)
    found, inside = shared
    if inside is found.everything:
        return list(found.nodes(capture))
    captures = found.captures
    return sorted((n for i in inside for name, n in captures[i] if name == capture), key=_order)


def matches(lang: str, source: str, node) -> list[dict[str, list[tree_sitter.Node]]]:
    """Each match as {capture: [nodes]}, in order of the match's first node."""
    shared = _shared_matches(lang, source, node)
    if shared is None:
        found = [m for _, m in tree_sitter.QueryCursor(query(lang, source)).matches(node)]
        found.sort(key=_first_start)
        return found
    found, inside = shared
    return found.dicts(inside)


# ---- shared queries: matched in Python against one walk per tree ---------------------------
_SHARED: dict[str, dict[str, "_Query"]] = {}  # language -> {query source: its parsed patterns}
# Trees parsed with `parse_indexed`, newest last. An index keeps its tree alive (so no other
# tree can reuse its node ids) until it is evicted.
_INDEXES: "OrderedDict[int, _TreeIndex]" = OrderedDict()
_NEWEST_FIRST: tuple = ()  # the same indexes, newest first
MAX_INDEXED_TREES = 8


# Node types so frequent that collecting them costs more than most files need: walked only
# for a tree whose queries ask for them (the first walk takes the other types).
_COSTLY_TYPES = frozenset({
    "identifier", "type_identifier", "field_identifier", "string_content", "preproc_arg", "qualified_identifier",
    "using_declaration", "namespace_alias_definition", "field_expression", "unary_expression", "subscript_expression",
    # Asked for by checks that few files trigger: on the bench corpus, binary expressions were
    # a third of the first walk's nodes (132,000), read in 119 of 1,044 trees.
    "binary_expression", "init_declarator", "assignment_expression", "template_argument_list", "pointer_expression",
})


def shared(lang: str, *sources: str) -> str:
    """Match these query sources in Python from one walk per tree; returns the first."""
    table = _SHARED.setdefault(lang, {})
    for source in sources:
        if source not in table:
            parsed = _Query(source)
            if parsed.patterns:  # a source the matcher cannot read stays a tree-sitter query
                table[source] = parsed
    return sources[0]


def precompile() -> None:
    """Build parsers and the first walk query of each language now (before workers fork)."""
    for lang in _GRAMMARS:
        _parser(lang)
        if _SHARED.get(lang):
            query(lang, _walk_source(_first_walk(lang)))


def _first_walk(lang: str) -> frozenset[str]:
    return _types_of_shared(lang, len(_SHARED[lang]))


@cache
def _types_of_shared(lang: str, registered: int) -> frozenset[str]:
    """The first walk's types once `registered` queries are shared (a new one recomputes)."""
    return frozenset(t for q in _SHARED[lang].values() for t in q.root_types) - _COSTLY_TYPES


def _walk_source(types: frozenset[str]) -> str:
    """One query of bare node types, each captured under its own name: a walk that collects
    the nodes of those types, already sorted into one list per type."""
    return " ".join(f"({t}) @{t}" for t in sorted(types))


class _TreeIndex:
    """One tree's nodes of the shared patterns' outermost types, and matches found so far."""

    def __init__(self, lang: str, tree, data: bytes) -> None:
        self.lang, self.tree, self.data = lang, tree, data  # the bytes parsed, at the nodes' offsets
        self.buckets: dict[str, list] = {}
        self.walked: frozenset[str] = frozenset()
        self.found: dict[str, _Found] = {}
        self.spans: dict[str, tuple] = {}  # node type -> its nodes by start, for `nearest_ancestor`
        self.ids: set[int] = {tree.root_node.id}  # of nodes known to be in the tree: how `_index_of` finds it
        self.parents: dict[int, object] = {tree.root_node.id: None}  # node id -> parent, for `ancestors`
        self.all_parents = False  # `parents` has every node of the tree
        self.steps = 0  # levels walked down by `learn_path`

    def learn_path(self, node) -> bool:
        """Enter the parents of `node` and of all its ancestors, walking down from the root once
        (as each `Node.parent` call does internally); False if `node` is not found that way.
        Once the paths walked add up to the tree's size (deep trees: long else-if chains), the
        parents of all nodes are entered instead, in one walk: the whole stays linear."""
        current, parents, target = self.tree.root_node, self.parents, node.id
        while current.id != target:
            child = current.child_with_descendant(node)
            if child is None or child.id == current.id:
                return False
            parents[child.id] = current
            current = child
            self.steps += 1
        if self.steps > self.tree.root_node.descendant_count and not self.all_parents:
            self.all_parents = True
            stack = [self.tree.root_node]
            while stack:
                parent = stack.pop()
                for child in parent.children:
                    parents[child.id] = parent
                    if child.child_count:
                        stack.append(child)
        return True

    def walk(self, types: frozenset[str]) -> None:
        """Collect the nodes of `types` not collected yet (the first walk: all but costly ones)."""
        if self.walked and types <= self.walked:
            return
        missing = types - self.walked
        if not self.walked:
            missing |= _first_walk(self.lang)
        # Each type is walked once, so its list is complete as tree-sitter returns it.
        root = self.tree.root_node
        walk = _walk_source(missing)
        if (self.lang, walk) not in _COMPILED and _in_python((self.lang, walk), root.descendant_count):
            self.buckets.update(_collect(root, missing))
        else:
            self.buckets.update(tree_sitter.QueryCursor(query(self.lang, walk)).captures(root))
        self.walked |= missing

    def matches(self, source: str, query: "_Query", node) -> tuple["_Found", list[int]]:
        """The query's matches in this tree, and the numbers of those under `node`."""
        found = self.found.get(source)
        if found is None:
            self.walk(query.root_types)
            found = self.found[source] = _Found(*query.run(self.buckets, self.tree, self.data))
        if node.parent is None:
            return found, found.everything
        return found, found.under(node)


class _Found:
    """One query's matches in one tree, in tree-sitter's order, with what the wrappers need."""

    def __init__(self, captures: list[list], roots: list) -> None:
        self.captures, self.roots = captures, roots
        self.everything = range(len(captures))
        self._by_start: tuple[list, list] | None = None
        self._dicts: list | None = None
        self._all_dicts: list | None = None
        self._firsts: list | None = None
        self._nodes: dict[str, list] = {}

    def under(self, node) -> list[int]:
        if self._by_start is None:
            by_start = sorted((root.start_byte, i) for i, root in enumerate(self.roots))
            self._by_start = ([start for start, _ in by_start], [i for _, i in by_start])
        starts, order = self._by_start
        lo = bisect.bisect_left(starts, node.start_byte)
        hi = bisect.bisect_right(starts, node.end_byte)
        roots = self.roots
        return sorted(i for i in order[lo:hi] if _within(roots[i], node))

    def nodes(self, capture: str) -> list:
        """Every match's nodes of `capture`, in source order (the whole tree's, kept)."""
        found = self._nodes.get(capture)
        if found is None:
            found = self._nodes[capture] = sorted(
                (n for match in self.captures for name, n in match if name == capture), key=_order)
        return found

    def dicts(self, inside) -> list[dict]:
        """The matches numbered `inside` as {capture: [nodes]}, by their first node (stable)."""
        if self._dicts is None:
            self._dicts = [None] * len(self.captures)
            self._firsts = [None] * len(self.captures)
        if inside is self.everything:
            if self._all_dicts is None:
                self._all_dicts = self._sorted(inside)
            return list(self._all_dicts)
        return self._sorted(inside)

    def _sorted(self, inside) -> list[dict]:
        dicts, firsts, captures = self._dicts, self._firsts, self.captures
        keyed = []
        for i in inside:
            as_dict = dicts[i]
            if as_dict is None:
                as_dict = dicts[i] = {}
                first = None
                for name, n in captures[i]:
                    start = n.start_byte
                    if first is None or start < first:
                        first = start
                    if name in as_dict:
                        as_dict[name].append(n)
                    else:
                        as_dict[name] = [n]
                firsts[i] = first
            keyed.append((firsts[i], i, as_dict))
        keyed.sort(key=_two)
        return [as_dict for _, _, as_dict in keyed]


def nearest_ancestor(node, type: str):
    """The nearest ancestor of `node` of node type `type` (None if there is none), found from
    the walk of its tree (each `Node.parent` call descends from the root); `NotImplemented`
    when the tree is not indexed."""
    index = _index_of(node)
    if index is None:
        return NotImplemented
    entry = index.spans.get(type)
    if entry is None:
        index.walk(frozenset({type}))
        candidates = sorted(index.buckets.get(type, ()), key=lambda n: (n.start_byte, -n.end_byte))
        reach, furthest = [], -1
        for candidate in candidates:
            furthest = max(furthest, candidate.end_byte)
            reach.append(furthest)
        entry = index.spans[type] = (candidates, [c.start_byte for c in candidates], reach)
    candidates, starts, reach = entry
    start, end = node.start_byte, node.end_byte
    for j in range(bisect.bisect_right(starts, start) - 1, -1, -1):
        if reach[j] < end:
            return None  # nothing that starts earlier reaches this far
        candidate = candidates[j]
        if candidate.end_byte < end or candidate.id == node.id:
            continue
        if start > candidate.start_byte and end < candidate.end_byte:
            return candidate  # strictly inside: a descendant (and the innermost, as it starts last)
        return next((a for a in ancestors(node) if a.type == type), None)  # a shared boundary: ask the tree
    return None


_UNKNOWN = object()


def ancestors(node):
    """The parent of `node`, its parent, ... up to the root. Each `Node.parent` call descends
    from the root, so climbing k levels that way costs k times the depth (an else-if chain
    of 800 arms is 2,400 deep); here the parents come from a table kept per indexed tree,
    filled by one walk down per path, and a climb costs one step per level."""
    index = _index_of(node)
    if index is None:  # a tree parsed on its own (a macro body): it is small
        node = node.parent
        while node is not None:
            yield node
            node = node.parent
        return
    parents = index.parents
    while True:
        parent = parents.get(node.id, _UNKNOWN)
        if parent is _UNKNOWN:
            parent = parents[node.id] = node.parent  # most often a node already in the table
            if parent is not None and parent.id not in parents:
                index.learn_path(parent)
        if parent is None:
            return
        yield parent
        node = parent


def _within(root, node) -> bool:
    """Is `root` `node` or one of its descendants?"""
    if root.end_byte > node.end_byte or root.start_byte < node.start_byte:
        return False
    if (root.start_byte, root.end_byte) != (node.start_byte, node.end_byte):
        return True
    # The same span: `node` itself, a descendant, or an ancestor of `node`.
    while root is not None and (root.start_byte, root.end_byte) == (node.start_byte, node.end_byte):
        if root.id == node.id:
            return True
        root = root.parent
    return False


def parse_indexed(lang: str, data: bytes) -> tree_sitter.Tree:
    """`parse`, and register the tree for shared queries."""
    return _indexed(lang, parse(lang, data), data)


def _indexed(lang: str, tree: tree_sitter.Tree, data: bytes) -> tree_sitter.Tree:
    global _NEWEST_FIRST
    if _SHARED.get(lang):
        _INDEXES[tree.root_node.id] = _TreeIndex(lang, tree, data)
        while len(_INDEXES) > MAX_INDEXED_TREES:
            _INDEXES.popitem(last=False)
        _NEWEST_FIRST = tuple(reversed(_INDEXES.values()))
    return tree


@cache
def _ranged_parser(lang: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(language(lang))


def parse_ranges(lang: str, data: bytes, spans: list[tuple[int, int, tuple, tuple]]) -> tree_sitter.Tree:
    """Parse only the (start byte, end byte, start point, end point) spans of `data`, sorted
    and disjoint, at their own offsets; the tree is registered for shared queries."""
    parser = _ranged_parser(lang)
    parser.included_ranges = [tree_sitter.Range(a, b, start, end) for start, end, a, b in spans]
    return _indexed(lang, parser.parse(data), data)


def known_in(tree: tree_sitter.Tree, nodes) -> None:
    """Record `nodes`, reached down through `tree` (by fields, children), as its nodes:
    `_index_of` then finds them by id, where finding an unknown node costs a descent from
    the root, its depth (the arms of a 20,000-arm `#elif` chain, each one level deeper)."""
    index = _INDEXES.get(tree.root_node.id)
    if index is not None:
        index.ids.update(n.id for n in nodes)


def _index_of(node) -> "_TreeIndex | None":
    """The index of the tree `node` belongs to: the first known node among it and its
    ancestors names it (node ids are unique among live trees). The nodes climbed through
    become known, so asking again about the same subtree is one lookup."""
    indexes = _NEWEST_FIRST
    node_id = node.id
    for index in indexes:
        if node_id in index.ids or node_id in index.parents:
            return index
    # Down from each root to where `node` is (one descent in C) rather than up through
    # `Node.parent` (one descent per level): the main and macro trees share byte offsets,
    # so only the node's id tells which tree holds it.
    start, end = node.start_byte, node.end_byte
    for index in indexes:
        found = index.tree.root_node.descendant_for_byte_range(start, end)
        # `found` is `node`, or a descendant of it with the same bytes.
        for _ in range(8):
            if found is None or found.id == node_id or found.start_byte != start or found.end_byte != end:
                break
            found = found.parent
        if found is not None and found.id == node_id:
            index.ids.add(node_id)
            return index
    climbed = []
    while node is not None:
        node_id = node.id
        for index in indexes:
            if node_id in index.ids:
                index.ids.update(climbed)
                return index
        climbed.append(node_id)
        node = node.parent
    return None


def _shared_matches(lang: str, source: str, node) -> "tuple[_Found, list[int]] | None":
    """The matches of a shared query under `node`, found in Python; None when the query is
    not shared or the node's tree not indexed (tree-sitter runs the query then)."""
    table = _SHARED.get(lang)
    shared_query = table.get(source) if table else None
    if shared_query is None and (lang, source) in _COMPILED:
        return None
    index = _index_of(node)
    if index is None or index.lang != lang:
        return None
    if shared_query is None:  # not shared, not compiled yet: in Python, for small trees
        if source not in index.found and not _in_python((lang, source), index.tree.root_node.descendant_count):
            return None
        shared_query = _readable(source)
        if shared_query is None:
            return None
    return index.matches(source, shared_query, node)


_READABLE: dict[str, "_Query | None"] = {}  # a query source not shared -> its patterns, if the matcher reads it


def _readable(source: str) -> "_Query | None":
    if source not in _READABLE:
        parsed = _Query(source)
        _READABLE[source] = parsed if parsed.patterns else None
    return _READABLE[source]


# ---- the query-language subset, matched in Python -----------------------------------------
class _Unsupported(Exception):
    pass


class _Pattern:
    """One pattern: a node `(type child...)`, an anonymous node `"<<"` or an alternation `[...]`."""

    __slots__ = ("kind", "type", "children", "options", "captures", "predicates", "all_predicates")

    def __init__(self, kind: str, type: str | None = None) -> None:
        self.kind = kind  # "node" (named; type None is `(_)`), "anon" or "alt"
        self.type = type
        self.children: list[tuple[str | None, _Pattern]] = []
        self.options: list[_Pattern] = []
        self.captures: list[str] = []
        self.predicates: list[tuple] = []
        self.all_predicates: list[tuple] = []  # of the whole pattern, set on a top-level one

    def root_types(self) -> set[str]:
        if self.literals() is not None:
            return set()  # found by their text, not in the walk
        if self.kind == "alt":
            return set().union(*(o.root_types() for o in self.options))
        if self.kind != "node" or self.type is None:
            raise _Unsupported("a pattern must start with a named node type")
        return {self.type}

    def leaf_types(self) -> set[str] | None:
        """The types of a bare leaf `(identifier)`, or `[(identifier) (type_identifier)]`."""
        if self.kind == "node" and not self.children and not self.predicates and self.type in _LEAF_TYPES:
            return {self.type}
        if self.kind == "alt" and not self.predicates and all(
                not o.captures and o.leaf_types() is not None for o in self.options):
            return set().union(*(o.leaf_types() for o in self.options))
        return None

    def literals(self) -> tuple[str, ...] | None:
        """The names a leaf pattern `((identifier) @n (#any-of? @n "a" "b"))` accepts: its
        nodes are found where those bytes occur (all identifiers would be a costly walk)."""
        if self.kind == "alt":
            if len(self.captures) != 1 or not all(not o.captures and o.leaf_types() is not None for o in self.options):
                return None
        elif self.kind != "node" or self.children or self.type not in _LEAF_TYPES or len(self.captures) != 1:
            return None
        names = None
        for name, capture, args in self.predicates:
            if capture != self.captures[0] or name not in ("eq?", "any-of?"):
                return None
            names = tuple(args) if names is None else tuple(a for a in names if a in args)
        return names


# Leaf node types a pattern may find by its literal text (`_Pattern.literals`).
_LEAF_TYPES = frozenset({"identifier", "type_identifier", "field_identifier", "namespace_identifier"})


class _Query:
    """A query source read as patterns the Python matcher runs (empty when it cannot)."""

    def __init__(self, source: str) -> None:
        self.matchers = None  # compiled on first use
        try:
            self.patterns = _Reader(source).read()
            self.root_types = frozenset(t for p in self.patterns for t in p.root_types())
        except _Unsupported:
            self.patterns, self.root_types = [], frozenset()

    def run(self, buckets: dict[str, list], tree, data: bytes) -> tuple[list[list], list]:
        """(matches as [(capture, node), ...], their outermost nodes), in the order tree-sitter
        reports them: by where each match completes (its last step), outer roots first."""
        found = []
        append = found.append
        if self.matchers is None:
            self.matchers = [_compile(pattern) for pattern in self.patterns]
        if len(self.patterns) == 1 and self.patterns[0].kind == "node" and not self.patterns[0].children:
            # `(for_statement) @loop`: each node is its own match, complete where it starts.
            pairs = [(node, captures) for node in _candidates(self.patterns[0], buckets, tree, data)
                     for captures, _ in self.matchers[0](node)]
            pairs.sort(key=_node_order)
            return [captures for _, captures in pairs], [node for node, _ in pairs]
        for number, pattern in enumerate(self.patterns):
            matcher = self.matchers[number]
            for node in _candidates(pattern, buckets, tree, data):
                results = matcher(node)
                if not results:
                    continue
                if len(results) > 1:
                    results = _longest(results)
                start, end = node.start_byte, -node.end_byte
                for captures, last in results:
                    append(((last.start_byte, -last.end_byte, start, end, number, len(found)), node, captures))
        found.sort(key=_first)
        return [f[2] for f in found], [f[1] for f in found]


def _first(item):
    return item[0]


def _two(item):
    return item[0], item[1]


def _node_order(pair):
    return (pair[0].start_byte, -pair[0].end_byte)


def _longest(results: list) -> list:
    """Drop a match whose captures another match of the same pattern and node contains (as
    tree-sitter does: `[(a left: (x)) (a right: (x))]` matching both ways is one match)."""
    sets = [frozenset((name, node.id) for name, node in captures) for captures, _ in results]
    kept = []
    for i, result in enumerate(results):
        if not any((sets[j] > sets[i]) or (sets[j] == sets[i] and j < i) for j in range(len(results)) if j != i):
            kept.append(result)
    return kept


def _candidates(pattern: _Pattern, buckets: dict[str, list], tree, data: bytes) -> list:
    """The nodes `pattern` may match at: those of its outermost types, or found by their text."""
    names = pattern.literals()
    if names is not None:
        return _literal_nodes(pattern, names, tree, data)
    if pattern.kind != "alt":
        return buckets.get(pattern.type, [])
    found, types = [], set()
    for option in pattern.options:
        literal = option.literals()
        if literal is not None:
            found.extend(_literal_nodes(option, literal, tree, data))
        elif option.type not in types:
            types.add(option.type)
            found.extend(buckets.get(option.type, ()))
    return found


def _literal_nodes(pattern: _Pattern, names: tuple[str, ...], tree, data: bytes) -> list:
    types = set().union(*(o.leaf_types() for o in pattern.options)) if pattern.kind == "alt" else {pattern.type}
    root, found = tree.root_node, {}
    for name in {n.encode() for n in names}:
        at = data.find(name)
        while at != -1:
            node = root.descendant_for_byte_range(at, at + len(name))
            if node is not None and node.type in types and node.start_byte == at \
                    and node.end_byte == at + len(name):
                found[node.id] = node
            at = data.find(name, at + 1)
    return sorted(found.values(), key=lambda n: n.start_byte)


def _predicates(pattern: _Pattern):
    yield from pattern.predicates
    for _, child in pattern.children:
        yield from _predicates(child)
    for option in pattern.options:
        yield from _predicates(option)


class _Reader:
    """Reads a query source into `_Pattern`s; raises `_Unsupported` for what it does not know."""

    _TOKEN = re.compile(r'\s+|;[^\n]*|(?<!\\)"(?:[^"\\]|\\.)*"|[()\[\]]|@[\w.-]+|#[\w?!-]+|[\w.-]+:|[\w.-]+|\S')

    def __init__(self, source: str) -> None:
        self.tokens = [t for t in self._TOKEN.findall(source) if t.strip() and not t.startswith(";")]
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise _Unsupported("unexpected end")
        self.at += 1
        return token

    def read(self) -> list[_Pattern]:
        patterns = []
        while self.peek() is not None:
            pattern = self.pattern(top=True)
            pattern.all_predicates = list(_predicates(pattern))
            patterns.append(pattern)
        return patterns

    def captures(self, pattern: _Pattern) -> _Pattern:
        while (token := self.peek()) is not None and token.startswith("@"):
            pattern.captures.append(self.take()[1:])
        if (token := self.peek()) in ("*", "+", "?"):
            raise _Unsupported("quantifiers")
        return pattern

    def pattern(self, top: bool = False) -> _Pattern:
        token = self.take()
        if token.startswith('"'):
            return self.captures(_Pattern("anon", _unquote(token)))
        if token == "[":
            alt = _Pattern("alt")
            while self.peek() != "]":
                alt.options.append(self.pattern())
            self.take()
            return self.captures(alt)
        if token != "(":
            raise _Unsupported(f"unexpected {token!r}")
        head = self.peek()
        if head in ("(", "["):  # a group: one pattern and its predicates
            inner = self.pattern()
            while self.peek() == "(":
                inner.predicates.append(self.predicate())
            if self.take() != ")":
                raise _Unsupported("a group of sibling patterns")
            if self.peek() is not None and self.peek().startswith("@"):
                raise _Unsupported("a capture on a group")
            return inner
        name = self.take()
        if name in ("_",):
            node = _Pattern("node", None)
        elif re.fullmatch(r"[a-z_][a-z0-9_]*", name) and name not in ("ERROR", "MISSING"):
            node = _Pattern("node", name)
        else:
            raise _Unsupported(f"node {name!r}")
        while (token := self.peek()) != ")":
            if token is None:
                raise _Unsupported("unclosed node")
            if token == "(" and self.tokens[self.at + 1].startswith("#"):
                node.predicates.append(self.predicate())
                continue
            field = None
            if token.endswith(":"):
                field = self.take()[:-1]
            elif token in (".",) or token.startswith("!"):
                raise _Unsupported("anchors and negated fields")
            node.children.append((field, self.pattern()))
        self.take()
        return self.captures(node)

    def predicate(self) -> tuple:
        self.take()  # (
        name = self.take()[1:]
        if name not in ("eq?", "any-of?", "match?"):
            raise _Unsupported(f"predicate #{name}")
        capture = self.take()
        if not capture.startswith("@"):
            raise _Unsupported("a predicate on a string")
        args = []
        while (token := self.take()) != ")":
            if not token.startswith('"'):
                raise _Unsupported("a predicate comparing two captures")
            args.append(_unquote(token))
        if name in ("eq?", "match?") and len(args) != 1:
            raise _Unsupported(f"#{name} takes one string")
        return (name, capture[1:], tuple(args) if name == "any-of?" else args)


def _unquote(token: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), token[1:-1])


# ---- patterns compiled to Python ---------------------------------------------------------
def _compile(pattern: _Pattern):
    """A function `match(node) -> [([(capture, node), ...], last node), ...]` for a top-level
    pattern, written out as nested loops, one per step: every way the node matches, with the
    node the pattern's last step matched (where tree-sitter completes the match).

    tree-sitter's semantics, as the generated code follows them: a child step matches a later
    child than the previous step's (fields: the children with that field); `(_)` is any
    named node and `"<<"` an anonymous one; an alternation tries each option; predicates
    test the captured nodes' text."""
    gen = _Generator()
    lines = ["def match(n0):", "    out = []"]
    gen.node(pattern, "n0", [], 1, lines, lambda caps, last, depth: gen.finish(pattern, caps, last, depth, lines),
             root=True)
    lines.append("    return out")
    namespace = {"_after": _after, "re": re}
    namespace.update(gen.constants)
    exec("\n".join(lines), namespace)  # noqa: S102 - code generated from the checks' own query sources
    return namespace["match"]


def _after(child, previous) -> bool:
    """Is `child` a later sibling than `previous` (child steps match in order)?"""
    return not (child.start_byte < previous.end_byte or child.id == previous.id or child.end_byte <= previous.start_byte)


class _Generator:
    def __init__(self) -> None:
        self.count = 0
        self.constants: dict[str, object] = {}

    def var(self) -> str:
        self.count += 1
        return f"n{self.count}"

    def const(self, value) -> str:
        name = f"C{len(self.constants)}"
        self.constants[name] = value
        return name

    def node(self, p: _Pattern, var: str, caps: list, depth: int, lines: list, cont, root: bool = False) -> None:
        """Code matching pattern `p` at the node in `var`, then `cont(captures, last, depth)`."""
        pad = "    " * depth
        if p.kind == "alt":
            own = caps + [(c, var) for c in p.captures]
            for option in p.options:
                self.node(option, var, own, depth, lines, cont, root=root)
            return
        if p.kind == "anon":
            lines.append(f"{pad}if {var}.type == {p.type!r} and not {var}.is_named:")
        elif p.type is None:
            lines.append(f"{pad}if {var}.is_named:")
        else:
            lines.append(f"{pad}if {var}.type == {p.type!r} and {var}.is_named:")
        depth += 1
        caps = caps + [(c, var) for c in p.captures]
        self.children(p, var, 0, None, None, caps, var, depth, lines, cont)

    def children(self, p: _Pattern, parent: str, step: int, previous: str | None, kids: str | None,
                 caps: list, last: str, depth: int, lines: list, cont) -> None:
        if step == len(p.children):
            cont(caps, last, depth)
            return
        pad = "    " * depth
        field, child = p.children[step]
        var = self.var()
        if field is not None:
            lines.append(f"{pad}for {var} in {parent}.children_by_field_name({field!r}):")
        else:
            if kids is None:
                kids = f"k{var}"
                lines.append(f"{pad}{kids} = {parent}.children")
            lines.append(f"{pad}for {var} in {kids}:")
        depth += 1
        if previous is not None:
            lines.append(f"{'    ' * depth}if _after({var}, {previous}):")
            depth += 1

        def after_child(child_caps, child_last, child_depth):
            self.children(p, parent, step + 1, var, kids, child_caps, child_last, child_depth, lines, cont)

        self.node(child, var, caps, depth, lines, lambda c, l, d: after_child(c, l, d))

    def finish(self, pattern: _Pattern, caps: list, last: str, depth: int, lines: list) -> None:
        pad = "    " * depth
        tests = []
        for name, capture, args in pattern.all_predicates:
            for cap_name, var in caps:
                if cap_name != capture:
                    continue
                if name == "eq?":
                    tests.append(f"{var}.text == {self.const(args[0].encode())}")
                elif name == "any-of?":
                    tests.append(f"{var}.text in {self.const(frozenset(a.encode() for a in args))}")
                else:
                    tests.append(f"{self.const(re.compile(args[0]))}.search({var}.text.decode('utf-8', 'replace'))")
        if tests:
            lines.append(f"{pad}if {' and '.join(tests)}:")
            pad += "    "
        lines.append(f"{pad}out.append(([{', '.join(f'({c!r}, {v})' for c, v in caps)}], {last}))")
