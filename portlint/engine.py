"""The scan: discover → read → parse once → checks → central filters → findings.

Per-file work (`analyze_file`) returns only picklable data, so it can run in worker
processes. Project rules run afterwards on the joined facts. Every finding, local or
cross-file, then passes the same filters: the ROCm-path status of where it stands,
suppression comments, per-file ignores.
"""

from __future__ import annotations

import os
import tomllib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import pathspec

from portlint import project, rocm_path, suppress
from portlint.cache import Cache
from portlint.config import Config
from portlint.discover import Candidate, Skipped, discover
from portlint.finding import Finding, Severity
from portlint.project import FileFacts, ProjectIndex
from portlint.registry import PROJECT, REGISTRY
from portlint.rocm_path import Status
from portlint.ruledocs import load_all
from portlint.source import CUDA, PYPROJECT, PYTHON, TEXT_LANGUAGES, SourceFile

MAX_FILE_BYTES = 8 * 1024 * 1024
# Fewer files than this are scanned in-process even with --jobs: workers cost a start-up.
PARALLEL_THRESHOLD = 48


@dataclass(frozen=True)
class Problem:
    """A file portlint could not fully read: one line for the user, never a traceback."""

    path: str
    message: str
    internal: bool = False  # a bug in portlint rather than bad input

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class FileState:
    path: str
    absolute_path: Path
    language: str
    digest: str
    findings: list[Finding]
    ranges: list[tuple[int, int, Status]]
    suppressions: suppress.Suppressions
    facts: FileFacts


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0
    baselined: int = 0  # left out because a --baseline file lists them
    # `portlint doctor` only: checks that could not run on this machine, each with its reason.
    skipped: list = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: dict[str, FileState] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # one line each for stderr: what deep mode used, its time

    @property
    def has_internal_error(self) -> bool:
        return any(p.internal for p in self.problems)


def scan(paths: list[Path], config: Config, jobs: int = 1, cache_dir: Path | None = None) -> ScanResult:
    """Scan `paths`; with `cache_dir`, reuse per-file results of unchanged files."""
    candidates, skipped = discover(paths, config)
    result = ScanResult(problems=[_skipped_problem(s) for s in skipped])
    codes = tuple(c for c in config.enabled_codes() if c in REGISTRY)  # D-codes belong to `doctor`
    cache = Cache.open(cache_dir, config, codes) if cache_dir is not None else None
    outcomes = _analyze_all(candidates, config, codes, jobs, cache)
    for outcome in outcomes:
        if isinstance(outcome, Problem):
            result.problems.append(outcome)
            continue
        state, problems = outcome
        result.problems.extend(problems)
        result.files[state.path] = state

    index = ProjectIndex()
    for state in result.files.values():
        index.add(state.facts)
    findings = [f for state in result.files.values() for f in state.findings]
    for code in codes:
        check = REGISTRY[code].get(PROJECT)
        if check is None:
            continue
        try:
            findings.extend(replace(f, code=code) for f in check(index))
        except Exception as exc:  # noqa: BLE001 - reported, never a traceback
            result.problems.append(Problem("<project>", f"internal error in {code}: {type(exc).__name__}: {exc}", True))
    if config.deep:
        findings = _with_deep_findings(findings, result, config, codes, jobs)

    docs = load_all()
    per_file_ignores = [
        (pathspec.GitIgnoreSpec.from_lines([glob]), set(sel)) for glob, sel in config.per_file_ignores.items()
    ]
    for f in findings:
        state = result.files.get(f.path)
        if state is None:
            continue
        doc = docs[f.code]
        status = _status(state.ranges, f.location.start_byte)
        if status is Status.DEAD or (status is Status.PORT and doc.scope == "live"):
            continue
        if state.suppressions.covers(f.code, doc.name, f.location.start_line) or _ignored_for_file(
            f, doc.name, state, config, per_file_ignores
        ):
            result.suppressed += 1
            continue
        severity = config.severity.get(f.code) or f.severity or doc.severity
        result.findings.append(replace(f, severity=severity))
    result.findings.sort(key=lambda f: (f.path, f.location.start_byte, f.code))
    result.problems.sort(key=lambda p: p.path)
    return result


def _with_deep_findings(findings: list[Finding], result: ScanResult, config: Config, codes, jobs: int) -> list[Finding]:
    """Deep mode's hook: libclang's findings join the fast ones before the central filters."""
    from portlint import deep

    report = deep.analyze(result.files.values(), config, codes, jobs)
    result.notes.extend(report.notes)
    result.problems.extend(Problem(display_path(Path(path)), message, True) for path, message in report.internal_errors)
    return deep.merge(findings, report)


def _status(ranges, offset: int) -> Status:
    return rocm_path.RocmPathModel(ranges=ranges).status(offset)


def _ignored_for_file(finding, name, state, config, per_file_ignores) -> bool:
    if not per_file_ignores:
        return False
    try:
        rel = state.absolute_path.relative_to(config.root).as_posix()
    except ValueError:
        rel = state.path
    for spec, selectors in per_file_ignores:
        if spec.match_file(rel) and any(suppress._selects(s, finding.code, name) for s in selectors):
            return True
    return False


def _skipped_problem(skipped: Skipped) -> Problem:
    return Problem(display_path(skipped.path), skipped.reason)


def display_path(path: Path) -> str:
    """The path as reports show it: relative to the working directory when below it."""
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def _analyze_all(candidates: list[Candidate], config: Config, codes, jobs: int, cache: Cache | None):
    if jobs == 0:
        jobs = os.cpu_count() or 1
    if jobs <= 1 or len(candidates) < PARALLEL_THRESHOLD:
        return [analyze_file(c, config, codes, cache) for c in candidates]
    n = len(candidates)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunk = max(1, n // (jobs * 8))
        return list(pool.map(analyze_file, candidates, [config] * n, [codes] * n, [cache] * n, chunksize=chunk))


def read_source(candidate: Candidate) -> SourceFile | Problem:
    path = candidate.path
    shown = display_path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return Problem(shown, f"skipped: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except IsADirectoryError:
        return Problem(shown, "skipped: is a directory")
    except OSError as exc:
        return Problem(shown, f"skipped: cannot read: {exc.strerror or exc}")
    if b"\0" in data[:8192]:
        return Problem(shown, "skipped: binary file")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(shown, f"skipped: not valid UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})")
    return SourceFile(shown, candidate.language, data, path.resolve(), build_script=candidate.build_script)


def analyze_file(candidate: Candidate, config: Config, codes: tuple[str, ...], cache: Cache | None = None):
    """One file: (FileState, problems) or a Problem if it could not be read at all."""
    source = read_source(candidate)
    if isinstance(source, Problem):
        return source
    key = cache.key(source) if cache is not None else ""
    if cache is not None and (hit := cache.get(key)) is not None:
        return hit
    problems: list[Problem] = []
    try:
        outcome = _analyze_source(source, config, codes, problems), problems
        if cache is not None:
            cache.put(key, outcome)
        return outcome
    except SyntaxError as exc:
        return Problem(source.path, f"skipped: Python syntax error at line {exc.lineno}: {exc.msg}")
    except RecursionError:
        return Problem(source.path, "skipped: nesting too deep to analyse")


def _analyze_source(source: SourceFile, config: Config, codes, problems: list[Problem]) -> FileState:
    if source.language == PYTHON:
        source.python_ast  # noqa: B018 - raises SyntaxError before any check runs
    elif source.language == PYPROJECT:
        _note_toml_errors(source, problems)
    elif source.language not in TEXT_LANGUAGES:  # requirements files have no grammar to fail
        _note_parse_errors(source, problems)
    model = rocm_path.build(source, config.rocm_macros)
    source.rocm_path = model
    findings: list[Finding] = []
    for code in codes:
        for key in source.check_keys:
            check = REGISTRY[code].get(key)
            if check is None:
                continue
            try:
                findings.extend(replace(f, code=code) for f in check(source))
            except Exception as exc:  # noqa: BLE001 - one rule's bug must not stop the scan
                problems.append(Problem(source.path, f"internal error in {code}: {type(exc).__name__}: {exc}", True))
    wants_facts = any(PROJECT in REGISTRY[c] for c in codes)
    return FileState(
        path=source.path,
        absolute_path=source.absolute_path,
        language=source.language,
        digest=source.digest,
        findings=findings,
        ranges=model.ranges,
        suppressions=suppress.parse(source),
        facts=project.collect(source, model) if wants_facts else FileFacts(),
    )


def _note_toml_errors(source: SourceFile, problems: list[Problem]) -> None:
    try:
        tomllib.loads(source.text)
    except tomllib.TOMLDecodeError as exc:
        problems.append(Problem(source.path, f"could not parse: invalid TOML ({exc}); no findings for this file"))


def _note_parse_errors(source: SourceFile, problems: list[Problem]) -> None:
    root = source.tree.root_node
    if not root.has_error or not source.data.strip():
        return
    broken = sum(c.end_byte - c.start_byte for c in root.children if c.type == "ERROR" or c.is_missing)
    if broken * 2 > len(source.data.strip()):
        problems.append(Problem(source.path, "could not parse most of the file; findings may be incomplete"))
