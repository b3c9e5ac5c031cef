"""The ROCm build model: the project as hip-clang builds it, worked out once per scan before
any rule runs (discover -> build model -> per-file checks -> project checks -> findings).

- `build_files`: what the build files (setup.py, CMake, Makefiles) say a ROCm build compiles,
  and the defines and include directories each build takes.
- the macro environment of a ROCm build and of a CUDA build, from hip-clang's predefines, the
  build-file defines and project headers reached through `#include`, and the shims (macros
  the ROCm build defines over CUDA names).
"""

from __future__ import annotations


import functools
import hashlib
import os
import posixpath
import time
import zlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from portlint.cache import BUILD_FILES, SCAN_ENVIRONMENTS
from portlint.discover import suffix_of
from portlint.workers import Budget, BudgetSpent
from portlint.fileio import NotReadable, read_regular
from portlint.build_model import observed
from portlint.build_model.macros import (EMPTY, HEADER_SUFFIXES, TORCH_CUDA_DEFINES, TORCH_ROCM_DEFINES, BuildMacros,
                                         FileEnvironment, include_names)

if TYPE_CHECKING:
    from portlint.build_model.build_files import BuildFiles

__all__ = ["BuildModel", "FileEnvironment", "build"]

# Larger files are skipped by the scan too (`engine.MAX_FILE_BYTES`).
_MAX_BYTES = 8 * 1024 * 1024
_C_FAMILY = "cuda"
_CMAKE = "cmake"


class BuildModel:
    """What the per-file checks get from the build: per file, its macro environment."""

    def __init__(self, files: "BuildFiles", macros: BuildMacros, kept: "KeptEnvironments | None" = None,
                 budget: Budget | None = None, scanned_whole: "ScanEnvironments | None" = None) -> None:
        self.files, self.macros = files, macros
        self._environments: dict[str, FileEnvironment] = {}
        self._kept = kept
        self._budget = budget
        self._scanned_whole = scanned_whole  # a scan of directories: where it keeps its environments

    def environment_of(self, absolute: str, language: str, context: bool = False) -> FileEnvironment | None:
        """What the build says of a file the scan reads: a C-family file's macro environment
        (`environment`), a CMake list file's ranges from its tree's walk; None for others."""
        if language == _C_FAMILY:
            return self.environment(absolute, context)
        if language == _CMAKE and absolute in self.files.list_ranges:
            env = self._environments.get(absolute)
            if env is None:  # (asked for at analysis and again for the findings' verdicts)
                env = self._environments[absolute] = FileEnvironment(list_ranges=self.files.list_ranges[absolute])
            return env
        return None

    def environment(self, absolute: str, context: bool = False) -> FileEnvironment:
        """`absolute`'s macro environment; `context`: a file of a named file's project
        context (its includers are not walked for it: `BuildMacros.environment`)."""
        env = self._environments.get(absolute)
        if env is None:
            kept = self._kept.get(absolute) if self._kept is not None else None
            if kept is not None and kept[1][1] and self._budget is not None and self._budget.seconds != kept[1][0]:
                kept = None  # made with less under another budget (a larger --timeout): worked out again
            if kept is not None:
                env, (_, cut_short) = kept
                for what in cut_short if self._budget is not None else ():  # made with less: said again
                    self._budget.cut(what, earlier=True)
            else:
                try:
                    env = self.macros.environment(absolute, follow_includers=not context)
                except RecursionError:  # includes nested deeper than Python's stack: no environment
                    self.macros.problems.append((absolute, "includes nest too deep to follow; macros of its headers not read"))
                    env = EMPTY
                except BudgetSpent:  # with the places found to include it so far, else without the project's macros
                    env = self._found_in_time(absolute)
                if self._kept is not None:  # kept also when made with less: the next run is as fast, and says so
                    cut_short = (self._budget.seconds, tuple(self._budget.cut_short)) if self._budget else (0, ())
                    self._kept.put(absolute, env, self.macros, cut_short)
            self._environments[absolute] = env
        return env

    def _found_in_time(self, absolute: str) -> FileEnvironment:
        """The environment of a named file whose includers were not all walked within the
        budget: from its own includes and the includers walked so far."""
        try:
            env = self.macros.environment(absolute, follow_includers=False)
        except BudgetSpent:  # its own includes were not walked either
            self._budget.cut("the macros of the named files' includes and includers (analysed without them)")
            return EMPTY
        self._budget.cut("the named files' includers (analysed with the macros of those walked in time)")
        return env

    def walk_all(self) -> None:
        """Read every file's directives now, in the main process: what the walk finds wrong
        (a macro defined too often, includes nested too deep) reaches `problems`, and forked
        workers share the walk instead of each doing it again."""
        try:
            self.macros.walk_all()
        except BudgetSpent:
            self._budget.cut("walking the project's macros")
        except RecursionError:
            self.macros.problems.append(("<build model>", "includes nest too deep to follow; macros of some headers not read"))
        except Exception as exc:  # noqa: BLE001 - the scan goes on without the rest of the walk
            self.macros.problems.append(("<build model>", f"internal error: {type(exc).__name__}: {exc}"))

    def keep_for_named_runs(self, project: list[str]) -> None:
        """After a scan of the whole project: keep the environments it worked out for later
        runs on named files (`ScanEnvironments`), with `project`, its C-family files."""
        if self._scanned_whole is not None and self._environments:
            self._scanned_whole.save(self._environments, project, self.macros)

    def release_bytes(self) -> None:
        """Stop keeping the files' bytes (`BuildMacros.release_bytes`): before workers fork."""
        self.macros.release_bytes()

    def changed_since_walk(self, absolute: str) -> bool:
        """Was the file saved again between the walk and its worker's read of it?"""
        return self.macros.changed_since_walk(absolute)

    def bytes_read(self, absolute: str) -> bytes | None:
        """What the model read of a C-family file for this scan: the per-file pass takes it
        rather than reading the file again (None: read it)."""
        return self.macros.bytes_read(absolute)

    def headers_read(self) -> list[str]:
        """Files the macro environments read that were not among the scanned ones (a header
        in `include/` for a scan of `src/`): what the results also depend on."""
        return self.macros.headers_read()

    @property
    def problems(self) -> list[tuple[str, str]]:
        return self.macros.problems


def build(candidates, config, around=None, cache=None, budget: Budget | None = None, whole: bool = False) -> BuildModel:
    """The build model of one scan, from the discovered files (before any is analysed).
    `around`: with files named on the command line, the project's other files (discovered
    from its root): a file alone sees the headers and build scripts a full scan would.
    `cache` (`portlint.cache.Cache`) keeps what the build files say between runs. `budget`:
    of the project's share of a run on named files (its includers, the walk of their macros).
    `whole`: `candidates` are every file of the project (a scan of its root)."""
    files = _build_files([*candidates, *(around or ())], config, around is not None or whole, cache)
    scanned: list[str] = []
    for c in candidates:
        if c.language == _C_FAMILY:
            scanned.append(c.absolute)  # read when the walk needs it: a warm scan may not
    # A header named alone takes its macros from where it is included, as in a full scan.
    includers_of = _includers([c for c in candidates if c.explicit and is_header(c.absolute)], around or (), cache,
                              str(config.root), budget)
    includers = sorted({p for found in includers_of.values() for p in found})
    torch_extension = files.torch_extension  # its builder passes its defines to every source
    torch_defines = {n: v for n, v in TORCH_ROCM_DEFINES.items() if n not in files.rocm_undefines} if torch_extension else {}
    rocm_defines = {**torch_defines, **files.rocm_defines}
    cuda_defines = {**(TORCH_CUDA_DEFINES if torch_extension else {}), **files.cuda_defines}
    # Headers an `#include <x.h>` of a named file may find by name, read when one needs them.
    project_headers = [c.absolute for c in around or () if c.language == _C_FAMILY and is_header(c.absolute)]
    rocm_build = files.rocm_build or torch_extension
    # A described ROCm build passes its own defines only: what the build files define for
    # other builds alone (a CUDA-only arm) is not defined there.
    rocm_undefined = files.other_builds_define - rocm_defines.keys() if rocm_build else frozenset()
    # A file given with its bytes (standard input: an editor's unsaved buffer) is walked as
    # given, not as last saved: its own includes and defines set its macros.
    given = {c.absolute: c.content for c in candidates if c.content is not None}
    read = _read if not given else functools.partial(_read_given, given)
    # The includers first (the order of the walk), read when the walk needs them: a run whose
    # named header's environment is kept (`KeptEnvironments`) reads none of them.
    macros = BuildMacros({}, config.rocm_macros, rocm_defines, cuda_defines, files.include_dirs,
                         project_headers, read=read, not_built=files.not_built,
                         unread=list(dict.fromkeys((*includers, *scanned))),
                         rocm_build=rocm_build, rocm_undefined=rocm_undefined, build_defined=files.build_defined,
                         hipified=True if files.hipify_all else files.hipified, hipify_tools=files.hipify_tools,
                         rocm_compiled=files.rocm_compiled, budget=budget,
                         includers_of=includers_of if around is not None else None)
    kept = scanned_whole = None
    if cache is not None:
        settings = hashlib.sha256(repr((
            sorted(rocm_defines.items()), sorted(cuda_defines.items()), list(files.include_dirs),
            sorted(config.rocm_macros), rocm_build, sorted(rocm_undefined), sorted(files.not_built),
            sorted(files.build_defined), files.hipify_all, sorted(files.hipified))).encode()).hexdigest()[:16]
        whole = ScanEnvironments(cache, str(config.root), settings)
        if around is not None:  # named files: their environments kept between runs
            project = [c.absolute for c in around if c.language == _C_FAMILY]
            named = {c.absolute for c in candidates if c.explicit and c.language == _C_FAMILY}
            kept = KeptEnvironments(cache, str(config.root), settings, project, named, whole)
        else:
            scanned_whole = whole
    return BuildModel(files, macros, kept, budget, scanned_whole)


# The signature of a path where there is no file (an include looked for, and not there).
_MISSING = (0, -1, 0)


def _stat_record(paths, kept=lambda path: None):
    """A stat record of `paths` (`unchanged.Snapshot`: each path's signature, `_MISSING`
    where nothing is, and what `kept(path)` gives it to keep), or None when one of them
    changed just now (it may change again, unseen)."""
    from portlint import unchanged  # here: `unchanged` imports this package's macros module

    record = {}
    for path in paths:
        signature = unchanged.signature(path) or _MISSING  # an include looked for and not found: still looked for
        if signature[0] >= time.time_ns() - unchanged.RACY_NS:
            return None
        record[path] = (signature, True, kept(path))
    return record


def _record_holds(record, project: list[str]) -> bool:
    """Is every file of the project in `record` (a new one may include a header), and every
    path in it as it was? Entries named `<...>` are no file's."""
    from portlint import unchanged

    return all(path in record for path in project) and all(
        (unchanged.signature(path) or _MISSING) == entry[0] for path, entry in record.items() if not path.startswith("<"))


class KeptEnvironments:
    """The macro environments of named files, kept between runs with a stat record of what
    each depended on: every C-family file of the project (any may come to include a named
    header, or stop), every file and directory the walk read or listed. While the record
    holds, a named header's environment costs those stats, not a walk of its includers."""

    def __init__(self, cache, root: str, settings: str, project: list[str], named: set[str],
                 scanned: "ScanEnvironments | None" = None) -> None:
        self._cache, self._root, self._settings, self._project = cache, root, settings, project
        self._named = named  # only these: the project's other files are context, each kept by the snapshot
        self._scanned = scanned  # what the last scan of the whole project worked out

    def _kind(self, absolute: str) -> tuple[str, ...]:
        return ("environment", self._root, self._settings, absolute)

    def get(self, absolute: str) -> tuple[FileEnvironment, tuple[float, tuple[str, ...]]] | None:
        """The kept environment and (the budget, what was cut short) making it, or None."""
        from portlint import unchanged  # here: `unchanged` imports this package's macros module

        if absolute not in self._named:  # a context file: as the last full scan saw it, if it holds
            env = self._scanned.get(absolute, self._project) if self._scanned is not None else None
            return (env, (0, ())) if env is not None else None
        record = unchanged.load(self._cache, *self._kind(absolute))
        entry = record.get(absolute)
        if entry is None or not (isinstance(entry[2], tuple) and isinstance(entry[2][0], FileEnvironment)):
            env = self._scanned.get(absolute, self._project) if self._scanned is not None else None
            return (env, (0, ())) if env is not None else None
        return record[absolute][2] if _record_holds(record, self._project) else None

    def put(self, absolute: str, env: FileEnvironment, macros: BuildMacros,
            cut_short: tuple[float, tuple[str, ...]] = (0, ())) -> None:
        from portlint import unchanged

        if absolute not in self._named:
            return
        paths = dict.fromkeys((*self._project, *macros.files_read(), *macros.directories_listed(), absolute))
        record = _stat_record(paths, lambda path: (env, cut_short) if path == absolute else None)
        if record is not None:
            unchanged.save(self._cache, record, {}, *self._kind(absolute))


class ScanEnvironments:
    """The macro environments a scan of the whole project worked out, kept for the runs on
    named files that follow it (a pre-commit hook after CI's full scan): one stat record of
    everything they depended on (every C-family file of the project, every file and
    directory the walk read or listed), and the environments themselves in `SHARDS` entries
    by path. While the record holds, a named file's environment is the full scan's, read
    from its shard: no walk of its includers, and no loading of every other file's."""

    # One entry per environment was most of what keeping them cost a full scan; one entry
    # for all (4 MB in a large project) was most of what reading one cost a named run.
    SHARDS = 64

    def __init__(self, cache, root: str, settings: str) -> None:
        self._cache, self._root, self._settings = cache, root, settings
        self._stamp: str | None = None  # the record's, once it is known to hold (`get`)
        self._shards: dict[str, dict] = {}  # key -> shard, as read

    def _record_kind(self) -> tuple[str, ...]:
        return ("scan environments", self._root, self._settings)

    def _shard_key(self, path: str) -> str:
        shard = zlib.crc32(path.encode("utf-8", "surrogateescape")) % self.SHARDS
        return self._cache.key_for(*self._record_kind(), "shard", str(shard))

    def save(self, environments: Mapping[str, FileEnvironment], project: list[str], macros: BuildMacros) -> None:
        from portlint import unchanged  # here: `unchanged` imports this package's macro modules

        record = _stat_record(dict.fromkeys((*project, *macros.files_read(), *macros.directories_listed())))
        if record is None:
            return
        # The shards carry the record's stamp: a shard left from another scan is not this one's.
        stamp = os.urandom(8).hex()
        shards: dict[str, dict[str, FileEnvironment]] = {}
        for path, env in environments.items():
            if path in record:
                shards.setdefault(self._shard_key(path), {})[path] = env
        for key, shard in shards.items():
            self._cache.put(key, ((stamp, shard), []), SCAN_ENVIRONMENTS)
        record[_STAMP] = ((0, 0, 0), False, stamp)
        unchanged.save(self._cache, record, {}, *self._record_kind())

    def get(self, absolute: str, project: list[str]) -> FileEnvironment | None:
        """The full scan's environment of `absolute`, if nothing it depended on changed. The
        record is read and checked once a run (`project` is the run's); shards as asked."""
        from portlint import unchanged

        if self._stamp is None:
            record = unchanged.load(self._cache, *self._record_kind())
            stamp = record.get(_STAMP, (None, None, None))[2]
            self._stamp = stamp if isinstance(stamp, str) and _record_holds(record, project) else ""
        key = self._shard_key(absolute)
        if not self._stamp:
            return None  # no such scan, or something it depended on changed
        if key not in self._shards:
            hit = self._cache.get(key, SCAN_ENVIRONMENTS)
            valid = hit is not None and isinstance(hit[0], tuple) and hit[0][0] == self._stamp
            self._shards[key] = hit[0][1] if valid else {}
        env = self._shards[key].get(absolute)
        return env if isinstance(env, FileEnvironment) else None


# The record's entry (no file's) for the stamp its shards carry.
_STAMP = "<stamp>"


def _build_files(project, config, whole_project: bool, cache) -> "BuildFiles":
    """What the build files say, reused from the cache while everything reading them looked
    at is as it was (`observed`): the same project files, and every file read or looked for
    and every glob's matches unchanged. A run on one named file then stats the files the
    build read rather than parsing its CMake lists, setup.py files and Makefiles again."""
    # Imported here: the build-file reader uses `rocm_path`, which imports this package's
    # macro modules (a module-level import would make importing `rocm_path` first a cycle).
    from portlint.build_model.build_files import read_build_files

    if cache is None:
        return read_build_files(project, config, whole_project)
    listing = hashlib.sha256("\0".join(sorted(
        f"{c.absolute}\1{c.language}\1{c.build_script}\1{c.explicit and not whole_project}" for c in project
    )).encode()).hexdigest()
    key = cache.key_for("build files", str(config.root), listing)
    hit = cache.get(key, BUILD_FILES)
    if hit is not None and isinstance(hit[0], tuple) and len(hit[0]) == 2 and hit[0][0].holds():
        return hit[0][1]
    seen = observed.Observed()
    files = read_build_files(project, config, whole_project, seen)
    if seen.settled() and not seen.unrecorded:
        cache.put(key, ((seen, files), []), BUILD_FILES)
    return files


def is_header(path: str) -> bool:
    return suffix_of(os.path.basename(path)).lower() in HEADER_SUFFIXES


def _includers(headers, around, cache=None, scope: str = "", budget: Budget | None = None) -> dict[str, list[str]]:
    """The project's C-family files that may include one of `headers`, directly or through
    other headers: per header (those given and those among the includers), the files that
    name it in an `#include`, sorted. Walking these, not the whole project, gives each header
    the places it is included.

    What each file includes comes from the project's include graph (`include_graph`), kept
    between runs with each file's stat signature: a run reads again only the files that
    changed, then the includers it walks."""
    if not headers:
        return {}
    graph = include_graph([c.absolute for c in around if c.language == _C_FAMILY], cache, scope, budget)
    by_name: dict[str, list[tuple[str, str]]] = {}  # a name's last part -> (including file, the name)
    for path, names in graph.items():
        for name in names:
            by_name.setdefault(posixpath.basename(name), []).append((path, name))
    found: dict[str, list[str]] = {}
    wanted = [c.absolute for c in headers]
    while wanted:
        for header in wanted:
            found[header] = sorted({path for path, name in by_name.get(os.path.basename(header), ())
                                    if _may_name(path, name, header)})
        wanted = sorted({path for header in wanted for path in found[header] if is_header(path) and path not in found})
    return found


def _may_name(including: str, name: str, header: str) -> bool:
    """May `#include name` in `including` find `header`: beside it, or under an include
    directory (the name ends the header's path; `sort.h` ends `thrust/sort.h`,
    `thrust/sort.h` does not end `cub/sort.h`)."""
    if posixpath.normpath(posixpath.join(posixpath.dirname(including), name)) == header:
        return True
    name = posixpath.normpath(name)
    return not name.startswith("..") and header.endswith("/" + name)


def include_graph(paths: list[str], cache=None, scope: str = "", budget: Budget | None = None,
                  read=None) -> dict[str, tuple[str, ...]]:
    """path -> what its `#include` directives name, for each of `paths`. With a `cache`, a
    file whose stat signature is unchanged since the last run is not read
    (`portlint.unchanged`: the same record as a scan's results). Past the `budget`, the files
    not read yet are left out; what was read is kept, so the next run goes on from there.
    `read(path)`: bytes already read (None: read the file)."""
    from portlint import unchanged  # here: `unchanged` imports this package's macros module

    kind = ("include graph", scope)  # `scope`: the project root
    before = unchanged.load(cache, *kind)
    after: unchanged.Snapshot = {}
    graph: dict[str, tuple[str, ...]] = {}
    for path in paths:
        signature = unchanged.signature(path)
        entry = before.get(path)
        if entry is not None and signature is not None and entry[0] == signature:
            names = entry[2]
        elif budget is not None and budget.spent():
            budget.cut("finding the named headers' includers (some left out)")
            continue
        else:
            names = include_names((read(path) if read is not None else None) or _read(path) or b"")
        graph[path] = names
        if signature is not None:
            after[path] = (signature, False, names)
    unchanged.save(cache, after, before, *kind)
    return graph


def includers_among(headers: Iterable[str], data: Mapping[str, bytes]) -> dict[str, bytes]:
    """The files of `data` (absolute path -> bytes) that may include one of `headers`
    (absolute paths), directly or through other files of `data`: those whose bytes name one
    of them. Also what re-checks the open files an edited header reaches (`portlint server`)."""
    found: dict[str, bytes] = {}
    names = {os.path.basename(path).encode() for path in headers}
    while names:
        wanted, names = names, set()
        for path, text in data.items():
            if path not in found and any(name in text for name in wanted):
                found[path] = text
                if is_header(path):
                    names.add(os.path.basename(path).encode())
    return found


def _read_given(given: dict[str, bytes], path: str) -> bytes | None:
    return given[path] if path in given else _read(path)


def _read(path: str) -> bytes | None:
    """A file's bytes, or None: a FIFO or device never blocks the scan (`fileio`), and what
    cannot be read is left to the per-file pass to report."""
    try:
        return read_regular(path, _MAX_BYTES)
    except (OSError, NotReadable):
        return None
