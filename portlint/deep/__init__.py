"""Deep mode: libclang parses each translation unit for what text cannot see.

`analyze` parses the scanned C++/CUDA/HIP sources (`--jobs` worker processes of
`portlint.workers`, each unit killed past `--deep-timeout`: libclang can crash, which takes
the process with it, or take minutes on one heavy template unit; that unit alone is lost) and
returns a `DeepReport`: findings under the rules' own codes, regions where clang shows a
fast-mode finding to be wrong, and one-line notes for stderr (the flags used, files that
fell back to fast mode, the time taken). `merge` joins it with the fast findings before
the engine's central filters (ROCm-path status, suppressions) run on both alike.

A file whose unit does not parse, or a machine without libclang, keeps its fast-mode
findings: deep mode only ever adds to them, or removes what clang disproves.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from portlint.cache import DEEP_UNIT
from portlint.config import Config
from portlint.deep import compile_db
from portlint.deep.compile_db import CompileDbError
from portlint.finding import Finding
from portlint.ruledocs import load_all

# Codes deep mode has checks for; a scan that selects none of them parses nothing.
CODES = frozenset({"W001", "W003", "K001", "K002", "R002", "W008", "P001", "X001"})
# Translation units: files compiled on their own. Headers are reached through them.
UNIT_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx"})
INSTALL_HINT = "pip install 'portlint[deep]'"


@dataclass(unsafe_hash=True)
class Lost:
    """A unit that gave no result: its worker was killed past the budget, or died."""

    path: str  # display path
    reason: str  # "skipped after 30 s", "libclang crashed (SIGSEGV); fast mode only"


@dataclass
class DeepReport:
    findings: list[Finding] = field(default_factory=list)
    cleared: list = field(default_factory=list)  # `checks.Cleared` regions
    notes: list[str] = field(default_factory=list)  # one line each, for stderr
    internal_errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message): portlint's bugs


def analyze(files, config: Config, codes, jobs: int, cache=None, build_files=None) -> DeepReport:
    """Deep findings for the scanned `files` (FileStates of any language; C++ ones are parsed).
    With a `cache` (portlint.cache.Cache), a unit whose flags and every file it read are
    unchanged is not parsed again. `build_files` (the scan's build model, `BuildFiles`) give
    the flags when there is no compile_commands.json."""
    report = DeepReport()
    wanted = frozenset(codes) & CODES
    scanned = {str(state.absolute_path.resolve()): state.path for state in files if state.language == "cuda"}
    units = sorted(Path(p) for p in scanned if Path(p).suffix in UNIT_SUFFIXES)
    if not wanted:
        report.notes.append(f"deep: none of the selected rules has a deep check ({', '.join(sorted(CODES))})")
        return report
    if not units:
        report.notes.append(f"deep: no translation unit to parse ({' '.join(sorted(UNIT_SUFFIXES))} files)")
        return report
    try:
        from portlint.deep import translation_unit

        translation_unit.cindex()
    except translation_unit.LibclangUnavailable as exc:
        report.notes.append(f"deep: libclang could not be loaded ({exc}); fast mode only ({INSTALL_HINT})")
        return report
    try:
        flags = compile_db.flag_source(config.root, config.compile_commands, config.deep_flags, config.source,
                                       build_files)
    except CompileDbError as exc:
        report.notes.append(f"deep: {exc}; fast mode only")
        return report
    if not flags.database:
        report.notes.append(f"deep: {flags.description}")
    started = time.perf_counter()
    work = _jobs(units, flags, scanned, config, wanted, build_files)
    stored = _UnitCache(cache, work) if cache is not None else None
    results = [stored.get(i) if stored else None for i in range(len(work))]
    todo = [i for i, r in enumerate(results) if r is None]
    if todo:
        keep = (lambda n, result: stored.put(todo[n], result)) if stored else None
        for i, result in zip(todo, _run([work[i] for i in todo], jobs, config.deep_timeout, keep)):
            results[i] = result
    _collect(results, report)
    elapsed = time.perf_counter() - started
    reused = f", {len(units) - len(todo)} from the cache" if len(todo) < len(units) else ""
    report.notes.append(f"deep analysis: {len(units)} translation unit{'s' if len(units) != 1 else ''} "
                        f"in {elapsed:.1f} s{reused}")
    return report


class _UnitCache:
    """Deep results of units in the scan cache, under keys of their own: the unit's path and
    flags, the rules, the header set, the scanned files; an entry holds the digest of every
    file clang read for the unit (the unit, its headers, the prelude), so an edited header
    re-parses every unit that included it."""

    def __init__(self, cache, work: list):
        from portlint.deep import translation_unit

        self.cache = cache
        headers = translation_unit.real_hip_headers()
        common = repr((cache.salt, "deep", headers, sorted(work[0].scanned.items()) if work else ()))
        self.keys = [hashlib.sha256(repr((common, str(job.path), job.flags, sorted(job.codes),
                                          sorted(job.rocm_macros), str(job.root), job.hipified)).encode()).hexdigest()
                     for job in work]
        self._digests: dict[str, str | None] = {}

    def digest(self, path: str) -> str | None:
        if path not in self._digests:
            try:
                with open(path, "rb") as handle:
                    self._digests[path] = hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
            except OSError:
                self._digests[path] = None
        return self._digests[path]

    def get(self, index: int):
        entry = self.cache.get(self.keys[index], DEEP_UNIT)
        if entry is None:
            return None
        result, included = entry
        if all(self.digest(path) == digest for path, digest in included):
            return result
        return None

    def put(self, index: int, result) -> None:
        from portlint.deep.checks import UnitResult

        # Lost units (killed, crashed) and parse failures are tried again next time.
        if isinstance(result, UnitResult) and result.failure is None and result.included:
            included = tuple((path, self.digest(path)) for path in sorted(result.included))
            self.cache.put(self.keys[index], (result, included), DEEP_UNIT)


def _jobs(units, flags, scanned, config: Config, codes, build_files=None):
    from portlint.deep.checks import Job

    def hipified(path: Path) -> bool:
        return build_files is not None and (build_files.hipify_all or str(path) in build_files.hipified)

    return [Job(path=path, flags=flags.database.get(path, flags.default), scanned=scanned, root=config.root.resolve(),
                rocm_macros=config.rocm_macros, codes=codes, hipified=hipified(path)) for path in units]


def run_units(function, jobs: list, workers: int, timeout: float, shown, done=None) -> list:
    """`function(job)` for each job in worker processes (`portlint.workers`), a `Lost` where
    a unit was killed past `timeout` (CPU seconds; three times that on the clock) or crashed;
    `shown(job)` names a unit for the user, `done(n, result)` sees each result as it comes."""
    from portlint import workers as pool

    def lost(index: int, result):
        if result is pool.TIMED_OUT:
            return Lost(shown(jobs[index]), f"skipped after {timeout:g} s")
        if isinstance(result, pool.Crashed):
            return Lost(shown(jobs[index]), f"libclang crashed ({result.died}); fast mode only" if result.died
                        else f"internal error in deep mode: {result.reason}")
        return result

    arrived = (lambda index, result: done(index, lost(index, result))) if done is not None else None
    results = pool.run(function, jobs, max(1, min(workers or os.cpu_count() or 1, len(jobs))), timeout, arrived)
    return [lost(i, r) for i, r in enumerate(results)]


def _run(jobs: list, workers: int, timeout: float, done=None) -> list:
    return run_units(_safely, jobs, workers, timeout, lambda job: job.scanned.get(str(job.path), str(job.path)), done)


def _safely(job):
    """A bug in a deep check is one unit's internal error, never a traceback."""
    from portlint.deep.checks import analyze_unit

    try:
        return analyze_unit(job)
    except Exception as exc:  # noqa: BLE001 - reported as an internal error of that file
        return (str(job.path), f"internal error in deep mode: {type(exc).__name__}: {exc}")


def _collect(results: list, report: DeepReport) -> None:
    from portlint.deep import diagnostics
    from portlint.deep.checks import check_module_lookups

    parsed = []
    missing: dict[str, list[str]] = {}
    for result in results:
        if isinstance(result, tuple):
            report.internal_errors.append(result)
        elif isinstance(result, Lost):
            report.notes.append(f"{result.path}: deep: {result.reason}")
        elif result.failure is not None:
            report.notes.append(f"{result.path}: deep: could not parse ({result.failure}); fast mode only")
        else:
            parsed.append(result)
            report.notes += [f"{result.path}: deep: {why}; the unit's other checks ran" for why in result.stopped]
            if result.missing:
                missing[result.path] = result.missing
    if missing:
        first, headers = next(iter(missing.items()))
        names = sorted({_header_name(h) for found in missing.values() for h in found})
        shown = ", ".join(f"<{n}>" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        report.notes.append(f"deep: {len(missing)} unit{'s' if len(missing) != 1 else ''} partly parsed: missing "
                            f"{shown} (first: {first}: {headers[0]}); give their directories in "
                            "compile_commands.json or 'deep-flags'")
    header_sets = sorted({r.headers for r in parsed if r.headers})
    if header_sets:
        report.notes.append(f"deep: X001 read {' and '.join(header_sets)}" + (
            " (no HIP headers installed: only errors that do not depend on header contents)"
            if header_sets == [diagnostics.STAND_INS] else ""))
    seen = set()
    for found in [f for r in parsed for f in r.findings] + check_module_lookups(parsed):
        key = (found.code, found.path, found.location.start_byte, found.location.end_byte)
        if key not in seen:  # a header reached from several units, or both passes
            seen.add(key)
            report.findings.append(found)
    report.cleared = [c for r in parsed for c in r.cleared]


def _header_name(diagnostic: str) -> str:
    """`'cutlass/gemm.h' file not found` -> `cutlass/...`: the library, not each of its headers."""
    name = diagnostic.split("'")[1] if diagnostic.count("'") >= 2 else diagnostic
    return name.split("/")[0] + "/..." if "/" in name else name


def merge(fast: list[Finding], report: DeepReport) -> list[Finding]:
    """Fast and deep findings as one list: a deep finding of the same code on an overlapping
    region of the same file is the same finding (the fast one stays, with its fix, and takes
    the deep message when that says more); fast findings clang disproves are dropped."""
    kept = [f for f in fast if not any(_clears(c, f) for c in report.cleared)]
    added = []
    for found in report.findings:
        index = next((i for i, f in enumerate(kept) if _same_cause(f, found) and _overlap(f, found)), None)
        if index is None:
            added.append(found)
            continue
        same = kept[index]
        message = found.message if len(found.message) > len(same.message) else same.message
        related = same.related + tuple(r for r in found.related if r not in same.related)
        kept[index] = replace(same, message=message, related=related)
    return kept + added


def _same_cause(fast: Finding, deep: Finding) -> bool:
    """The same rule; or clang's error (X001) where a fast rule already reports code hip-clang
    rejects (X002's missing `typename`, N008's short brace list): one root cause."""
    if fast.code == deep.code:
        return True
    return deep.code == "X001" and load_all()[fast.code].impact == "compile"


def _overlap(a: Finding, b: Finding) -> bool:
    if a.path != b.path or a.location is None or b.location is None:
        return False
    a0, a1 = a.location.start_byte, max(a.location.end_byte, a.location.start_byte + 1)
    b0, b1 = b.location.start_byte, max(b.location.end_byte, b.location.start_byte + 1)
    return a0 < b1 and b0 < a1


def _clears(cleared, found: Finding) -> bool:
    return (found.code == cleared.code and found.path == cleared.path and found.location is not None
            and found.location.start_byte < max(cleared.end, cleared.start + 1)
            and cleared.start < max(found.location.end_byte, found.location.start_byte + 1))
