"""The file system as one reading of the build files saw it: every file read or looked for,
and what every glob matched. Kept with the result, it tells the next run whether that result
still holds, as a build system's dependency record does (make's timestamps, ninja's deps
log): the build files, the sources their globs list and the headers they include are
stat'ed again and the globs run again, and nothing is parsed.

A pre-commit run on one file pays for the stats only; reading and parsing the project's
CMake lists, setup.py files and Makefiles (and, when some sources are left out of the ROCm
build, every source's includes) was a tenth of it.
"""

from __future__ import annotations

import glob as globbing
import os
import stat
import time

from portlint.fileio import NotReadable, read_regular

# (file type, mtime, size, inode) of what is at a path; None: nothing (or not reachable).
Signature = tuple[int, int, int, int] | None

# A file changed this recently may change again within the same timestamp tick, at the same
# size (git's "racy" entries): a record that saw one is not kept.
RACY_NS = 2_000_000_000


def signature_of(path: str) -> Signature:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in a path a build file spelled
        return None
    return stat.S_IFMT(st.st_mode), st.st_mtime_ns, st.st_size, st.st_ino


class Observed:
    """The file system, seen through the questions the build-file reader asks of it."""

    def __init__(self) -> None:
        self.signatures: dict[str, Signature] = {}
        self.globs: dict[tuple[str, bool, int], tuple[str, ...]] = {}
        self.unrecorded = False  # the reader also looked where this does not see (a project walk)
        self._bytes: dict[str, bytes | None] = {}  # build scripts read, while reading: not pickled

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_bytes": {}}

    def signature(self, path: str) -> Signature:
        path = os.fspath(path)
        if path not in self.signatures:
            self.signatures[path] = signature_of(path)
        return self.signatures[path]

    def is_file(self, path) -> bool:
        found = self.signature(path)
        return found is not None and found[0] == stat.S_IFREG

    def exists(self, path) -> bool:
        return self.signature(path) is not None

    def read(self, path, limit: int, keep: bool = False) -> bytes | None:
        """A regular file's bytes; None when it is missing, larger than `limit`, not a
        regular file (a FIFO never blocks the scan) or unreadable. The signature is taken
        before reading: a file changed while it is read is read again next time. `keep`: a
        build script, read again for another question while the build files are read."""
        found = self.signature(path)
        if found is None or found[0] != stat.S_IFREG or found[2] > limit:
            return None
        key = os.fspath(path)
        if key in self._bytes:
            return self._bytes[key]
        try:
            data = read_regular(path, limit)
        except (OSError, NotReadable):
            data = None
        if keep:
            self._bytes[key] = data
        return data

    def glob(self, pattern: str, recursive: bool, limit: int) -> list[str]:
        """The first `limit` matches of a glob, sorted; kept as matched."""
        key = (pattern, recursive, limit)
        if key not in self.globs:
            self.globs[key] = _glob(*key)
        return list(self.globs[key])

    def holds(self) -> bool:
        """Does the file system still answer every question as it did? The globs run again
        (a directory listing, no file read)."""
        return not self.unrecorded and (all(signature_of(path) == before for path, before in self.signatures.items())
                and all(_glob(*key) == found for key, found in self.globs.items()))

    def settled(self) -> bool:
        """No file it saw was changed within the last `RACY_NS`: a record worth keeping."""
        recent = time.time_ns() - RACY_NS
        return all(s is None or s[1] < recent for s in self.signatures.values())


def _glob(pattern: str, recursive: bool, limit: int) -> tuple[str, ...]:
    matches = globbing.iglob(pattern, recursive=recursive)
    return tuple(sorted(os.path.normpath(m) for _, m in zip(range(limit), matches)))
