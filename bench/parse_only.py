"""The baseline for bench/run.py: find, read and parse files with tree-sitter, nothing else.

    python bench/parse_only.py PATH... [--walk | --query]

Finds files the way `portlint scan` does (same suffixes, same default excluded directory
names, no symlinks followed), reads each one and parses it once: the CUDA grammar for
C/C++/CUDA/HIP, the CMake grammar for CMakeLists.txt and *.cmake. `--walk` also visits
every node of every tree from Python with a TreeCursor: the cheapest full walk, for
comparison with checks that use queries. `--query` instead runs one tree-sitter query,
`(call_expression) @call`, over every C/C++/CUDA tree: what a single query pass per file costs
(tree-sitter's query engine visits every node whatever the pattern). Prints one JSON line of counts.

It imports only tree-sitter and its grammars (not portlint) so that its start-up is the
floor any tree-sitter tool pays.
"""

from __future__ import annotations

import json
import os
import sys

import tree_sitter
import tree_sitter_cmake
import tree_sitter_cuda

# Kept equal to portlint.discover / portlint.config (not imported, to keep start-up minimal).
CUDA_SUFFIXES = frozenset(".cu .cuh .hip .cpp .cc .cxx .c .h .hpp .hh .hxx .inl .ipp .tpp".split())
EXCLUDED_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", "build",
                           "dist", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".portlint_cache"})


def language_of(name: str) -> str | None:
    if name == "CMakeLists.txt" or name.endswith(".cmake"):
        return "cmake"
    suffix = os.path.splitext(name)[1].lower()
    return "cuda" if suffix in CUDA_SUFFIXES else None


def files(paths: list[str]):
    for top in paths:
        if not os.path.isdir(top):
            language = language_of(os.path.basename(top))
            if language is not None:
                yield top, language
            continue
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS and not d.endswith(".egg-info")
                                 and not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                language = language_of(name)
                path = os.path.join(dirpath, name)
                if language is not None and not os.path.islink(path):
                    yield path, language


def count_nodes(tree) -> int:
    cursor = tree.walk()
    count = 1
    while True:
        if cursor.goto_first_child():
            count += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return count
        count += 1


def main(argv: list[str]) -> int:
    walk, query = "--walk" in argv, "--query" in argv
    paths = [a for a in argv if a not in ("--walk", "--query")] or ["."]
    cuda = tree_sitter.Language(tree_sitter_cuda.language())
    parsers = {
        "cuda": tree_sitter.Parser(cuda),
        "cmake": tree_sitter.Parser(tree_sitter.Language(tree_sitter_cmake.language())),
    }
    calls = tree_sitter.Query(cuda, "(call_expression) @call")
    stats = {"files": 0, "bytes": 0, "lines": 0, "files_with_errors": 0, "nodes": 0, "captures": 0}
    for path, language in files(paths):
        with open(path, "rb") as fh:
            data = fh.read()
        tree = parsers[language].parse(data)
        stats["files"] += 1
        stats["bytes"] += len(data)
        stats["lines"] += data.count(b"\n")
        stats["files_with_errors"] += tree.root_node.has_error
        if walk:
            stats["nodes"] += count_nodes(tree)
        if query and language == "cuda":
            stats["captures"] += len(tree_sitter.QueryCursor(calls).captures(tree.root_node).get("call", ()))
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
