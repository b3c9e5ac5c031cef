"""Files' results kept from one run to the next by their stat signatures.

The per-file cache (`portlint.cache`) finds a result by the file's content and macro
environment, so a warm run still reads and hashes every file and works out every
environment. A snapshot keeps the results of a whole run in one cache entry, each with the
file's stat signature (mtime, size, inode): the next run takes a result as is when the
signature is unchanged. Two kinds: the outcomes of a scan of the same paths, and the project
context of a run on named files (what a pre-commit hook passes; `engine._project_context`).

A signature stands for the file's own content, not for what other files make of it: a
header or a build file can change the results of every file that includes it or that it
builds. So a snapshot is used only while every header and build file it covers is
unchanged (named files included); a changed source file is analysed again alone.
"""

from __future__ import annotations

import os
import pickle
import posixpath
import time
from collections.abc import Iterator, Mapping

from portlint.build_model.macros import HEADER_SUFFIXES
from portlint.cache import SNAPSHOT, Cache
from portlint.shown_paths import loads_written_from
from portlint.source import CMAKE, CUDA, MAKE, PYPROJECT

Signature = tuple[int, int, int]
# path (absolute, posix) -> (signature, whether it shapes others, what the run kept of it)
Snapshot = dict[str, tuple[Signature, bool, object]]


def signature(path: str) -> Signature | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


def load(cache: Cache | None, *kind: str) -> Snapshot:
    """The snapshot of this `kind` (what it holds and for which paths), or an empty one."""
    if cache is None:
        return {}
    hit = cache.get(cache.key_for("snapshot", *kind), SNAPSHOT)
    return hit[0] if hit is not None and isinstance(hit[0], dict) else {}


# A file modified this recently may be modified again within the same timestamp tick, at
# the same size: its entry is left out and the file read next time (git's "racy" entries).
RACY_NS = 2_000_000_000


def save(cache: Cache | None, snapshot: Snapshot, previous: Snapshot, *kind: str) -> None:
    """Store the snapshot unless it is the one the run started from."""
    if cache is None:
        return
    settled = time.time_ns() - RACY_NS
    snapshot = {path: entry for path, entry in snapshot.items() if entry[0][0] < settled}
    if snapshot != previous:
        cache.put(cache.key_for("snapshot", *kind), (snapshot, []), SNAPSHOT)


def shapes_others(path: str, language: str, build_script: bool) -> bool:
    """Can this file change the facts of other files (a header, a build file)?"""
    if language in (CMAKE, MAKE, PYPROJECT) or build_script:
        return True
    return language == CUDA and posixpath.splitext(path)[1].lower() in HEADER_SUFFIXES


def reusable(snapshot: Snapshot, current: dict[str, tuple[Signature | None, bool]],
             named: dict[str, tuple[Signature | None, bool]]) -> Snapshot:
    """The entries still good for this run, or none at all.

    `current`: each file's signature and whether it shapes others; `named`: the same for files
    the snapshot does not answer for but whose change matters (the named files around a
    context; signature None for standard input, whose bytes are not the file's).
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


class Stored:
    """A scanned file's outcome as a scan snapshot keeps it: its problems as they are, its
    state (`engine.FileState`) pickled apart and unpickled when first read. A warm scan whose
    result is kept whole (`engine._final_kept`) reads a state only for the files its report
    places findings in; unpickling every file's state was a third of that run."""

    __slots__ = ("path", "problems", "_state", "_data", "_written_from")

    def __init__(self, path: str, state, problems: list) -> None:
        self.path, self.problems, self._state = path, problems, state
        self._data: bytes | None = None
        self._written_from = ""

    @property
    def state(self):
        if self._state is None:
            self._state = loads_written_from(self._data, self._written_from)
            self._data = None
        return self._state

    def __reduce__(self):
        # A state never read is written back as the bytes it was read from; one read since
        # (the central filters complete states in place) is pickled as it is now.
        data = self._data if self._state is None else pickle.dumps(self._state, pickle.HIGHEST_PROTOCOL)
        written_from = self._written_from if self._state is None else os.getcwd()
        return _from_pickle, (self.path, data, written_from, self.problems)


def _from_pickle(path: str, data: bytes, written_from: str, problems: list) -> Stored:
    stored = Stored(path, None, problems)
    stored._data, stored._written_from = data, written_from
    return stored


class FileStates(Mapping):
    """The scanned files' states by shown path (`ScanResult.files`), each kept as the scan
    snapshot keeps it (`Stored`): unpickled when read."""

    def __init__(self) -> None:
        self._stored: dict[str, Stored] = {}

    def add(self, stored: Stored) -> None:
        self._stored[stored.path] = stored

    def __getitem__(self, path: str):
        return self._stored[path].state

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)

    def __contains__(self, path) -> bool:  # (without reading the state, as `Mapping`'s would)
        return path in self._stored
