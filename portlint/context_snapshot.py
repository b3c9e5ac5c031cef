"""The project around explicitly named files, kept from one run to the next.

A pre-commit hook names a few files; the cross-file rules still need the facts of all the
others (`engine._project_context`). Reading, hashing and looking up each of thousands of
files on every commit cost more than the scan of the named ones, so a run with named files
keeps the context states it used in one cache entry, each with the file's stat signature
(mtime, size, inode). The next such run takes a state as is when the file's signature is
unchanged: no read, no macro environment, no lookup of its own entry.

A signature stands for the file's own content, not for what other files make of it: a
header or a build file can change the facts of every file that includes it or that it
builds. So the snapshot is used only while every header and build file it covers is
unchanged (named files included); a changed source file is analysed again alone.
"""

from __future__ import annotations

import os
import posixpath
import time

from portlint.build_model.macros import HEADER_SUFFIXES
from portlint.cache import Cache
from portlint.source import CMAKE, CUDA, MAKE, PYPROJECT

Signature = tuple[int, int, int]
# path (absolute, posix) -> (signature, whether it shapes others, the file's context state:
# an engine FileState)
Snapshot = dict[str, tuple[Signature, bool, object]]


def signature(path: str) -> Signature | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


def _key(cache: Cache, root: str) -> str:
    return cache.key_for("project context", root)


def load(cache: Cache | None, root: str) -> Snapshot:
    if cache is None:
        return {}
    hit = cache.get(_key(cache, root))
    return hit[0] if hit is not None and isinstance(hit[0], dict) else {}


# A file modified this recently may be modified again within the same timestamp tick, at
# the same size: its entry is left out and the file read next time (git's "racy" entries).
RACY_NS = 2_000_000_000


def save(cache: Cache | None, root: str, snapshot: Snapshot, previous: Snapshot) -> None:
    """Store the snapshot unless it is the one the run started from."""
    if cache is None:
        return
    settled = time.time_ns() - RACY_NS
    snapshot = {path: entry for path, entry in snapshot.items() if entry[0][0] < settled}
    if snapshot != previous:
        cache.put(_key(cache, root), (snapshot, []))


def shapes_others(path: str, language: str, build_script: bool) -> bool:
    """Can this file change the facts of other files (a header, a build file)?"""
    if language in (CMAKE, MAKE, PYPROJECT) or build_script:
        return True
    return language == CUDA and posixpath.splitext(path)[1].lower() in HEADER_SUFFIXES


def reusable(snapshot: Snapshot, current: dict[str, tuple[Signature | None, bool]],
             named: dict[str, tuple[Signature | None, bool]]) -> Snapshot:
    """The entries still good for this run, or none at all.

    `current`: each context file's signature and whether it shapes others; `named`: the same
    for the named files (signature None for standard input, whose bytes are not the file's).
    """
    if not snapshot:
        return {}
    for path, (now, shaping) in (*current.items(), *named.items()):
        before = snapshot.get(path)
        if shaping and (now is None or before is None or before[0] != now):
            return {}  # a header or build file changed (or is new): its includers may differ
    if any(snapshot[path][1] for path in snapshot.keys() - current.keys() - named.keys()):
        return {}  # a header or build file is gone
    return {path: entry for path, entry in snapshot.items()
            if path in current and current[path][0] is not None and entry[0] == current[path][0]}
