"""The scan: discover → read → parse once → checks → central filters → findings.

A file is parsed only when the trigger tokens (`portlint.triggers`) of some enabled check,
or of a project-fact collector, occur in its bytes; only those checks run on it. A file
that is not parsed gets its ROCm-path model, suppressions and project facts later, and only
if a finding or a project rule asks for them (`_complete`, `ProjectIndex.defer`).

Per-file work (`analyze_file`) returns only picklable data, so it can run in worker
processes. Project rules run afterwards on the joined facts. Every finding, local or
cross-file, then passes the same filters: the ROCm-path status of where it stands,
suppression comments, per-file ignores.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

import pathspec

from portlint import project, queries, rocm_path, suppress, targets
from portlint.cache import Cache
from portlint.config import Config
from portlint.discover import Candidate, Skipped, discover
from portlint.fileio import NotReadable, read_regular
from portlint.finding import Finding, Severity
from portlint.project import FileFacts, ProjectIndex
from portlint.registry import PROJECT, REGISTRY
from portlint.rocm_path import Status
from portlint.ruledocs import load_all
from portlint.source import CMAKE, CUDA, MAKE, PYPROJECT, PYTHON, TEXT_LANGUAGES, SourceFile
from portlint.triggers import Probe, needs_of

MAX_FILE_BYTES = 8 * 1024 * 1024
# Fewer files than this are scanned in-process even with --jobs: workers cost a start-up.
PARALLEL_THRESHOLD = 48
# Skip parsing files in which no enabled check's trigger tokens occur (tests turn it off to
# show that the findings are the same either way).
PREFILTER = True


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
    # The resolved path, kept as a string: a warm scan unpickles one per file from the cache,
    # and rebuilding Path objects was a third of that.
    absolute: str
    language: str
    digest: str
    findings: list[Finding]
    # None until needed for a file that was not parsed: see `_complete`.
    ranges: list[tuple[int, int, Status]] | None
    suppressions: suppress.Suppressions | None
    facts: FileFacts

    @property
    def absolute_path(self) -> Path:
        return Path(self.absolute)


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


def scan(paths: list[Path], config: Config, jobs: int = 1, cache_dir: Path | None = None,
         stdin: Candidate | None = None) -> ScanResult:
    """Scan `paths` (and `stdin`, a file whose bytes came from standard input); with
    `cache_dir`, reuse per-file results of unchanged files."""
    candidates, skipped = discover(paths, config)
    if stdin is not None:
        candidates = [c for c in candidates if c.resolved != stdin.resolved] + [stdin]
    result = ScanResult(problems=[_skipped_problem(s) for s in skipped])
    codes = tuple(c for c in config.enabled_codes() if c in REGISTRY)  # D-codes belong to `doctor`
    build_files = [c.path for c in candidates if c.language in (CMAKE, MAKE) or c.build_script]
    targets.select(config.targets, targets.read_build_files(build_files))  # before workers fork: they inherit it
    cache = Cache.open(cache_dir, config, codes) if cache_dir is not None else None
    outcomes = _analyze_all(candidates, config, codes, jobs, cache)
    for outcome in outcomes:
        if isinstance(outcome, Problem):
            result.problems.append(outcome)
            continue
        state, problems = outcome
        result.problems.extend(problems)
        result.files[state.path] = state
    context = _project_context(candidates, config, codes, cache) if any(c.explicit for c in candidates) else {}

    index = ProjectIndex()
    for state in (*result.files.values(), *context.values()):
        if state.facts.deferred:
            index.defer(state.facts.path, _FactsLoader(state, config, cache))
        else:
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
        findings = _with_deep_findings(findings, result, config, codes, jobs, cache, candidates)

    docs = load_all()
    for state in result.files.values():
        if state.suppressions is None:  # unparsed, but it has a suppression comment
            _complete(state, config)
        if state.suppressions.unknown:
            result.problems.extend(Problem(f"{state.path}:{line}", f"unknown rule `{selector}` in a suppression comment")
                                   for line, selector in state.suppressions.unknown)
    per_file_ignores = [
        (pathspec.GitIgnoreSpec.from_lines([glob]), set(sel)) for glob, sel in config.per_file_ignores.items()
    ]
    for f in findings:
        state = result.files.get(f.path)
        if state is None:  # a context file (or none at all): read, not reported
            continue
        doc = docs[f.code]
        if state.ranges is None or state.suppressions is None:
            _complete(state, config)
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
    result.findings.sort(key=lambda f: (f.path, f.location.start_byte if f.location else 0, f.code))
    result.problems.sort(key=lambda p: p.path)
    return result


def _with_deep_findings(findings: list[Finding], result: ScanResult, config: Config, codes, jobs: int,
                        cache: Cache | None, candidates: list[Candidate]) -> list[Finding]:
    """Deep mode's hook: libclang's findings join the fast ones before the central filters."""
    from portlint import deep

    report = deep.analyze(result.files.values(), config, codes, jobs, cache, candidates)
    result.notes.extend(report.notes)
    result.problems.extend(Problem(display_path(Path(path)), message, True) for path, message in report.internal_errors)
    return deep.merge(findings, report)


def _project_context(candidates: list[Candidate], config: Config, codes, cache: Cache | None) -> dict[str, FileState]:
    """With files named on the command line (a pre-commit hook passes the staged ones), the
    project's other files are context for the cross-file rules: a kernel's definition, a
    warp-size macro in a header, the CMake file that enables HIP. They are read, never
    reported, so a file alone gives the findings it gives in a full scan. C-family files are
    not parsed here: their facts load on demand, only when a project rule asks for a name
    they mention (`ProjectIndex.defer`); build files are analysed (and cached) as usual."""
    project_codes = tuple(c for c in codes if PROJECT in REGISTRY[c])
    if not project_codes:
        return {}
    given = {c.resolved for c in candidates}
    others, _ = discover([config.root], config)
    context: dict[str, FileState] = {}
    for candidate in others:
        if candidate.resolved in given:
            continue
        source = read_source(candidate)
        if isinstance(source, Problem):
            continue
        if source.language == CUDA and not project.needs_parse(source, Probe(source.data)):
            state = _unparsed(source, wants_facts=True)
        else:  # facts that cannot wait (a warp-size definition): parsed, as in a full scan
            outcome = analyze_file(candidate, config, project_codes, cache)
            if isinstance(outcome, Problem):
                continue
            state = outcome[0]
        context[state.path] = state
    return context


class _FactsLoader:
    """Collects the project facts of a file that was not parsed, when a project rule asks."""

    def __init__(self, state: FileState, config: Config, cache: Cache | None = None) -> None:
        self.state, self.config, self.cache = state, config, cache

    def data(self) -> bytes:
        try:
            return read_regular(self.state.absolute, MAX_FILE_BYTES)
        except (OSError, NotReadable):
            return b""

    def __call__(self) -> FileFacts:
        source = _complete(self.state, self.config)
        if source is None:
            return FileFacts(path=self.state.facts.path)
        facts = project.collect(source, source.rocm_path)
        self.state.facts = facts
        if self.cache is not None:  # the next scan finds the facts without parsing again
            self.cache.put(self.cache.key(source), (self.state, []))
        return facts


def _complete(state: FileState, config: Config) -> SourceFile | None:
    """Parse a file the per-file pass left unparsed; fill in its ROCm-path model and suppressions."""
    source = read_source(Candidate(state.absolute_path, state.language, explicit=False))
    if isinstance(source, Problem) or source.digest != state.digest:  # gone or changed since: no model
        state.ranges = state.ranges if state.ranges is not None else []
        state.suppressions = state.suppressions if state.suppressions is not None else suppress.Suppressions()
        return None
    source.path = state.path
    try:
        source.rocm_path = rocm_path.build(source, config.rocm_macros)
        if state.ranges is None:
            state.ranges = source.rocm_path.ranges
        if state.suppressions is None:
            state.suppressions = suppress.parse(source)
    except (SyntaxError, RecursionError):
        state.ranges = state.ranges if state.ranges is not None else []
        state.suppressions = state.suppressions if state.suppressions is not None else suppress.Suppressions()
        return None
    return source


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
        if spec.match_file(rel) and any(suppress.selects(s, finding.code, name) for s in selectors):
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
    from concurrent.futures import ProcessPoolExecutor  # only a parallel scan pays its import
    import multiprocessing

    # Parsers and query walks are built once, here: forked workers share them.
    queries.precompile()
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        chunk = max(1, n // (jobs * 8))
        return list(pool.map(analyze_file, candidates, [config] * n, [codes] * n, [cache] * n, chunksize=chunk))


def read_source(candidate: Candidate) -> SourceFile | Problem:
    path = candidate.path
    shown = display_path(path)
    try:
        if candidate.content is not None:  # standard input
            data = candidate.content
        else:
            data = read_regular(path, MAX_FILE_BYTES)
    except NotReadable as exc:
        return Problem(shown, f"skipped: {exc}")
    except OSError as exc:
        return Problem(shown, f"skipped: cannot read: {exc.strerror or exc}")
    if b"\0" in data[:8192]:
        return Problem(shown, "skipped: binary file")
    try:
        if not data.isascii():  # ASCII is valid UTF-8: most sources need no decoding here
            data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(shown, f"skipped: not valid UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})")
    absolute = candidate.resolved if candidate.resolved is not None else path.resolve()
    return SourceFile(shown, candidate.language, data, absolute, build_script=candidate.build_script)


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


@functools.cache
def _checks_for(codes: tuple[str, ...], keys: tuple[str, ...]) -> tuple[bool, tuple]:
    """(whether project facts are wanted, ((code, check, trigger), ...)) for enabled `codes`
    on files of registry `keys`: the same for every file of a kind, so worked out once."""
    wants_facts = any(PROJECT in REGISTRY[c] for c in codes)
    checks = tuple((code, check, needs_of(check)) for code in codes for key in keys
                   if (check := REGISTRY[code].get(key)) is not None)
    return wants_facts, checks


def _analyze_source(source: SourceFile, config: Config, codes, problems: list[Problem]) -> FileState:
    wants_facts, triggered = _checks_for(tuple(codes), source.check_keys)
    if PREFILTER:
        probe = Probe(source.data)
        checks = [(code, check) for code, check, trigger in triggered if trigger.holds(probe)]
        if not checks and not (wants_facts and project.needs_parse(source, probe)):
            return _unparsed(source, wants_facts)
    else:
        checks = [(code, check) for code, check, _ in triggered]
    if source.language == PYTHON:
        source.python_ast  # noqa: B018 - raises SyntaxError before any check runs
    elif source.language == PYPROJECT:
        _note_toml_errors(source, problems)
    elif source.language not in TEXT_LANGUAGES:  # requirements files have no grammar to fail
        _note_parse_errors(source, problems)
    model = rocm_path.build(source, config.rocm_macros)
    source.rocm_path = model
    findings: list[Finding] = []
    for code, check in checks:
        try:
            findings.extend(replace(f, code=code) for f in check(source))
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not stop the scan
            problems.append(Problem(source.path, f"internal error in {code}: {type(exc).__name__}: {exc}", True))
    return FileState(
        path=source.path,
        absolute=str(source.absolute_path),
        language=source.language,
        digest=source.digest,
        findings=findings,
        ranges=model.ranges,
        suppressions=suppress.parse(source),
        facts=project.collect(source, model) if wants_facts else FileFacts(),
    )


def _unparsed(source: SourceFile, wants_facts: bool) -> FileState:
    """A file no enabled check can report in: nothing parsed, the rest left for `_complete`."""
    no_comments = b"portlint" not in source.data and b"NOLINT" not in source.data
    return FileState(
        path=source.path,
        absolute=str(source.absolute_path),
        language=source.language,
        digest=source.digest,
        findings=[],
        ranges=None,
        suppressions=suppress.Suppressions() if no_comments else None,
        facts=project.deferred(source) if wants_facts else FileFacts(),
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
