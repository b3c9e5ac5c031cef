"""A content-addressed cache of per-file results, so an unchanged file is not parsed again.

An entry is a checksum and the pickled (FileState, problems) of one file, keyed by the file's bytes, its
absolute path, language and role, the macro environment the build model gave it
(so editing a header re-checks the files that include it), the enabled rules, the
configuration that changes per-file results, and portlint's version. Cross-file rules stay correct: they run every time on the
facts stored in the entries, so a changed header re-checks every file that depends on it.
Each entry also holds the key it was written for and its kind (a file's outcome, a snapshot,
the build files' reading, a deep unit), checked on reading: an intact entry under another
entry's name (copied, moved or swapped by hand or by a tool) is a miss, never another file's
result. Paths as reports show them are relative to the working directory: an entry records
the one it was written from, and a run from another (the project's root, then a folder
above it) reads them moved to its own. The directory carries a CACHEDIR.TAG and a `.gitignore` of its own. Any trouble with the
cache (unwritable, corrupt entry) makes portlint compute the result instead.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pickle
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from portlint import __version__, hipify, targets
from portlint.shown_paths import loads_written_from

DEFAULT_DIR = ".portlint_cache"
# The kinds of entry (`Cache.get`, `Cache.put`): what an entry holds, checked with its key.
FILE = "file"  # (FileState, problems) of one file
SNAPSHOT = "snapshot"  # `portlint.unchanged`: the stat-keyed results of a whole run
BUILD_FILES = "build files"  # what the build files say, with what reading them observed
DEEP_UNIT = "deep unit"  # libclang's result for one translation unit
SCAN_ENVIRONMENTS = "scan environments"  # a shard of the macro environments a full scan worked out
# Each entry starts with a CRC-32 of the pickle after it (with its length): a disk error, a
# truncated write or an edit is caught before unpickling, which could otherwise fail or give
# wrong results. A CRC is what archive formats check integrity with; a cryptographic digest
# guards against nobody here and cost 7 ms of a one-file run (a project's 5 MB snapshot).
CHECKSUM_BYTES = 12
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by portlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


@functools.cache  # once per process: a named-file run opens two caches
def _code_stamp() -> str:
    """Sizes and times of portlint's own files: an edited checkout must not reuse old results."""
    package = Path(__file__).resolve().parent
    stamps = []
    for path in sorted([*package.rglob("*.py"), *package.parent.glob("rules/*.md"), *package.glob("rules/*.md")]):
        try:
            stat = path.stat()
        except OSError:
            continue
        stamps.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(stamps).encode()).hexdigest()[:16]


@dataclass(unsafe_hash=True)
class Cache:
    directory: Path
    salt: str  # version, rules and configuration: a change starts a new set of entries
    # Shown paths in entries are relative to it (`loads_written_from`).
    working_directory: str = field(default_factory=os.getcwd, compare=False)

    @classmethod
    def open(cls, directory: Path, config, codes: tuple[str, ...], by_target: bool = True) -> "Cache":
        """`by_target`: results depend on the scan's targets (what the build files' own
        entries, read before the targets are known, do not)."""
        chosen = ([t.name for t in targets.active()], targets.build_max_threads(),
                  hipify.custom_map()) if by_target else ()
        settings = repr((__version__, _code_stamp(), codes, sorted(config.rocm_macros), config.build_scripts, chosen))
        cache = cls(directory, hashlib.sha256(settings.encode()).hexdigest()[:16])
        cache._prepare()
        return cache

    def _prepare(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(CACHEDIR_TAG)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Created by portlint.\n*\n")
        except OSError:
            pass  # a read-only checkout still scans, uncached

    def key(self, source, environment=None) -> str:
        """`environment`: the file's macro environment (`FileEnvironment`), part of the key."""
        parts = (self.salt, source.digest, str(source.absolute_path), source.language,
                 str(source.build_script), environment.fingerprint if environment is not None else "")
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def key_for(self, *parts: str) -> str:
        """The key of an entry that belongs to no single file (the context of named files)."""
        return hashlib.sha256("\0".join((self.salt, *parts)).encode()).hexdigest()

    def _entry(self, key: str) -> str:
        # A string, not a Path: a warm scan asks for thousands of entries.
        return os.path.join(self.directory, __version__, key[:2], f"{key}.pickle")

    def get(self, key: str, kind: str):
        """The stored outcome of this `kind` (`FILE`, `SNAPSHOT`, ...), or None: missing,
        truncated, corrupt (the checksum says so before anything is unpickled), unreadable or
        misplaced entries (written for another key or kind) are all recomputed, then rewritten.
        An entry written from another working directory has its shown paths moved to this one's
        (`shown_paths.loads_written_from`)."""
        try:
            with open(self._entry(key), "rb") as fh:
                blob = fh.read()
        except OSError:
            return None
        checksum, payload = blob[:CHECKSUM_BYTES], blob[CHECKSUM_BYTES:]
        if len(blob) <= CHECKSUM_BYTES or _checksum(payload) != checksum:
            return None
        try:
            stream = io.BytesIO(payload)
            header = pickle.load(stream)
            if not (isinstance(header, tuple) and len(header) == 4 and header[:3] == (_ENTRY, key, kind)):
                return None
            value = loads_written_from(stream, header[3], self.working_directory)
        except Exception:  # noqa: BLE001 - intact bytes of an incompatible pickle: recompute
            return None
        return value if isinstance(value, tuple) and len(value) == 2 else None

    def put(self, key: str, value, kind: str) -> None:
        """Store an outcome; one with an internal error is not kept (the next run retries)."""
        if any(getattr(p, "internal", False) for p in value[1]):
            return
        entry = self._entry(key)
        try:
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(entry), suffix=".tmp")
            payload = (pickle.dumps((_ENTRY, key, kind, self.working_directory), protocol=pickle.HIGHEST_PROTOCOL)
                       + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            with os.fdopen(fd, "wb") as out:
                out.write(_checksum(payload) + payload)
            os.replace(tmp, entry)  # the cache's own directory: a link here is replaced, not followed
        except OSError:
            pass


# An entry's header: this tag, its key, its kind and the working directory it was written from.
_ENTRY = "portlint cache entry"


def _checksum(payload: bytes) -> bytes:
    return zlib.crc32(payload).to_bytes(4, "big") + len(payload).to_bytes(8, "big")
