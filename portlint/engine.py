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

import bisect
import functools
import hashlib
import itertools
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec

from portlint import build_model, embedded, hipify, queries, rocm_path, suppress, targets, unchanged, workers
from portlint.checks import facts as project_facts
from portlint.build_model import macros
from portlint.build_model.expressions import tokens
from portlint.build_model.macros import FileEnvironment, included_names
from portlint.cache import FILE, Cache
from portlint.checks.libraries import check_cuda_library, library_for_header
from portlint.checks.logical_warp import judge_by_helpers
from portlint.checks.wavefront import check_hardcoded_warp_size
from portlint.checks.wavefront_ops import check_shuffle_width_32
from portlint.checks import cpp, preprocessor, python_build
from portlint.config import Config
from portlint.discover import Candidate, Skipped, build_descriptions, discover
from portlint.fileio import NotReadable, read_regular
from portlint.finding import SAME_HAZARD, Finding, Related, Severity, root_cause
from portlint.fix import Applicability
from portlint.project import (FileFacts, ProjectIndex, WordFilter, by_basename, first_included, include_targets,
                              included_files, pack)
from portlint.registry import PROJECT, REGISTRY
from portlint.rocm_path import Status
from portlint.ruledocs import load_all
from portlint.shown_paths import shows_paths
from portlint.source import CMAKE, CUDA, MAKE, PYPROJECT, PYTHON, TEXT_LANGUAGES, SourceFile
from portlint.triggers import Probe, applies_to, needs_of

if TYPE_CHECKING:
    from portlint.build_model.build_files import BuildFiles

MAX_FILE_BYTES = 8 * 1024 * 1024
# Fewer files than this are scanned in-process even with --jobs: workers cost a start-up.
PARALLEL_THRESHOLD = 48
# A scan of fewer files frees too little for a full collection (`workers.release_freed_memory`)
# to be worth its time, which grows with the whole heap of the process.
LARGE_SCAN = 500
# The part of the timeout a run on named files gives the project's share (finding includers,
# walking their macros, reading the project context): the rest is the named files' own.
PROJECT_SHARE = 0.6
# Skip parsing files in which no enabled check's trigger tokens occur (tests turn it off to
# show that the findings are the same either way).
PREFILTER = True


@shows_paths("path")
@dataclass(unsafe_hash=True)
class Problem:
    """A file portlint could not fully read: one line for the user, never a traceback."""

    path: str
    message: str
    internal: bool = False  # a bug in portlint rather than bad input
    timed_out: bool = False  # stopped at the time budget: the scan is incomplete
    note: bool = False  # read whole all the same: only something to know (stray bytes read as `?`)
    # The project's share of a run on named files went past the budget: done with less
    # context (fewer includers, less of the project read); the named files are analysed.
    less_context: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@shows_paths("path")
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
    # The functions holding findings that the file calls only where a ROCm build never goes
    # (Python's module-level ones, CMake's, a C-family file's free ones:
    # `rocm_path.functions_called_only_off_rocm`), as (start, end, name).
    off_rocm_functions: tuple[tuple[int, int, str], ...] = ()
    # Which names the file may hold (C-family, Python, CMake): the project pass reads only the
    # files that may name what it asks about (`_may_name`).
    words: WordFilter | None = None
    # The stretches holding findings that no build compiles unless a name is defined
    # (`macros.switch_gates`): the project pass drops them where nothing sets the name.
    switch_gates: tuple[macros.Gate, ...] = ()
    # The function templates holding errors or warnings about what code computes, whose name
    # the file writes only at their definition (`cpp.lone_templates`): the project pass makes
    # those notes where no other file names them either (nothing instantiates them, so none
    # of them runs).
    lone_templates: tuple[tuple[int, int, str], ...] = ()

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
    files: unchanged.FileStates = field(default_factory=unchanged.FileStates)  # shown path -> FileState
    notes: list[str] = field(default_factory=list)  # one line each for stderr: what deep mode used, its time
    # Scanned files no ROCm build compiles (their findings are dropped): path -> reason.
    not_built: dict[str, str] = field(default_factory=dict)

    @property
    def has_internal_error(self) -> bool:
        return any(p.internal for p in self.problems)

    @property
    def timed_out(self) -> bool:
        return any(p.timed_out for p in self.problems)


def scan(paths: list[Path], config: Config, jobs: int = 1, cache_dir: Path | None = None,
         stdin: Candidate | None = None, progress: Callable[[int, int], None] | None = None) -> ScanResult:
    """Scan `paths` (and `stdin`, a file whose bytes came from standard input); with
    `cache_dir`, reuse per-file results of unchanged files. `progress(done, total)` is called
    as the files to report on are analysed."""
    walked_descriptions: list[Path] = []  # (the build descriptions the discovery walk passed)
    candidates, skipped = discover(paths, config, walked_descriptions)
    if stdin is not None:
        candidates = [c for c in candidates if c.resolved != stdin.resolved] + [stdin]
    result = ScanResult(problems=[_skipped_problem(s) for s in skipped])
    codes = tuple(c for c in config.enabled_codes() if c in REGISTRY)  # D-codes belong to `doctor`
    # Files named on the command line stand in a project: its other files, discovered once,
    # give the build model its build files and headers, and the project rules their context.
    # The project's share of a run on named files is work of this process: bounded as a
    # file's analysis is, and past it done with less (`workers.Budget`). It has part of the
    # timeout, counted from here: the named files' own analysis and the project rules that
    # follow it have the rest, so that the whole run ends within about the timeout.
    named = any(c.explicit for c in candidates)
    budget = workers.Budget(config.timeout * PROJECT_SHARE) if named else None
    around = _project_around(candidates, config) if named else None
    build_cache = Cache.open(cache_dir, config, ("build files",), by_target=False) if cache_dir is not None else None
    # A scan of the project's root discovered all of it: what the build reads is then known.
    whole = not named and [os.path.realpath(p) for p in paths] == [os.path.realpath(config.root)]
    try:  # the project as hip-clang builds it: compiled files, defines, macros along includes
        with targets.unchosen():  # (its cache serves every target: `by_target=False`)
            model = build_model.build(candidates, config, around, build_cache, budget, whole=whole)
    except (OSError, RecursionError, ValueError) as exc:  # the scan goes on without it
        result.problems.append(Problem("<build files>", f"could not read the build files: {exc}"))
        model = build_model.build([], config)
    build = model.files
    if len(candidates) >= LARGE_SCAN:
        workers.release_freed_memory()  # what reading the build files freed (their parse trees)
    # The targets the build names, unless the command line, the config or the environment
    # names them; set before workers fork (they inherit it) and before the cache is keyed.
    targets.select(config.targets, targets.BuildSettings(tuple(targets.target(n) for n in build.offload_archs),
                                                         build.max_threads))
    hipify.use_custom_map(build.hipify_custom_map)
    cache = Cache.open(cache_dir, config, codes) if cache_dir is not None else None
    explicit = any(c.explicit for c in candidates) and bool(_project_codes(codes))
    # A scan of directories takes each unchanged file's outcome from the last such scan.
    scan_kind = ("scan", os.getcwd(), *sorted(os.path.abspath(p) for p in paths))  # `resolve` fails on a link loop
    scan_before = unchanged.load(cache, *scan_kind) if not explicit else {}
    current = {c.absolute: _signature_of(c, scan_before) for c in candidates if c.content is None}
    kept = unchanged.reusable(scan_before, current, _outside(scan_before))
    fresh = [c for c in candidates if c.absolute not in kept]
    # The files to report on are analysed first, in workers forked before the project context
    # is loaded (a smaller process to fork), which work while it loads.
    analysis = _start_analysis(fresh, config, codes, jobs, cache, model=model, progress=progress)
    try:
        # Context results are cached apart: they hold what the project rules need, not every rule's findings.
        context_cache = (Cache.open(cache_dir, config, ("context", *_project_codes(codes)))
                         if cache_dir is not None and explicit else None)
        context_kind = ("project context", config.root.resolve().as_posix())
        context_before = unchanged.load(context_cache, *context_kind) if explicit else {}
        plan, signatures, left_out, held = (_project_context(candidates, around, context_before, budget)
                                            if explicit and around else ([], {}, set(), False))
        context_files = [c for c in plan if isinstance(c, Candidate)]
        context_analysis = _start_analysis([], config, codes, jobs, cache, context_files, model, context_cache)
        context_outcomes = context_analysis.outcomes(budget.spent if budget is not None else None)
        if budget is not None and any(isinstance(o, Problem) and o.timed_out for o in context_outcomes):
            # Kept unparsed (`_context_states`): facts a rule reads by name load later, the rest is missed.
            budget.cut("analysing the project context (some files stopped and kept unparsed: the cross-file "
                       "rules may see less)")
        analysed = analysis.outcomes()
    finally:
        analysis.close()
    fresh_outcomes = iter(analysed)
    outcomes: list[unchanged.Stored | Problem] = [
        kept[c.absolute][2] if c.absolute in kept else _stored(next(fresh_outcomes)) for c in candidates]
    scan_after: unchanged.Snapshot = {}
    for candidate, outcome in zip(candidates, outcomes):
        if isinstance(outcome, Problem):
            result.problems.append(outcome)
            continue
        result.problems.extend(outcome.problems)
        result.files.add(outcome)
        if current.get(candidate.absolute, (None,))[0] is not None and not any(p.internal for p in outcome.problems):
            scan_after[candidate.absolute] = (*current[candidate.absolute], outcome)
    # The same paths scanned again with every file as the last such scan left it, and no
    # setting or build description changed: what follows gives that scan's result again.
    final_key = (_final_key(config, codes, walked_descriptions)
                 if not explicit and stdin is None and not config.deep else None)
    kept_final = _final_kept(scan_before, current, fresh, final_key)
    if kept_final is not None:
        result.findings, result.suppressed, result.not_built, tail = kept_final
        result.problems.extend(tail)
        result.problems.sort(key=lambda p: p.path)
        return result
    tail_start = len(result.problems)
    before_states = len(left_out)
    context = _context_states(plan, context_outcomes, left_out)
    if budget is not None and len(left_out) > before_states:  # build files the budget stopped
        budget.cut(_CONTEXT_LEFT_OUT)

    index = ProjectIndex(not_built=frozenset(state.facts.path for state in result.files.values()
                                             if state.absolute in build.not_built))
    loaders: list[_FactsLoader] = []
    for state in (*result.files.values(), *context.values()):
        if state.facts.deferred:
            # A context file was not analysed by the enabled rules: its state goes to the context cache.
            loader_cache = cache if state.path in result.files else context_cache
            loaders.append(_FactsLoader(state, config, loader_cache, model, context=state.path not in result.files))
            index.defer(state.facts.path, loaders[-1])
        else:
            index.add(state.facts)
    if explicit:
        index.report_only({state.path: state.facts.path for state in result.files.values()})
    findings = [f for state in result.files.values() for f in state.findings]
    findings.extend(_run_project_rules(index, codes, config.timeout, result.problems, loaders))
    findings = _judge_by_other_files(findings, {**context, **result.files}, index)
    if explicit:  # after the rules: the facts they loaded are kept too
        context_after = {state.absolute: (*signatures[state.absolute], _packed(state))
                         for state in context.values() if signatures.get(state.absolute, (None,))[0] is not None}
        # Files not read (past the budget) or not analysed: read next time, the rest kept as is.
        # Left out by the budget: kept so while the context is reused (the next run is as fast, and says so).
        context_after.update({path: (*signature, _LEFT_OUT if path in left_out else None)
                              for path, signature in signatures.items()
                              if path not in context_after and signature[0] is not None})
        if budget is not None and budget.cut_short:  # said again while the context is reused
            context_after[_CUT_SHORT] = ((0, 0, 0), False, (budget.seconds, tuple(budget.cut_short)))
        context_after.update(_headers_outside(model, context_after))
        # Headers outside the project that the kept context was worked out from, unchanged
        # (a run whose environments were kept reads none of them again): still depended on.
        context_after.update({path: entry for path, entry in context_before.items()
                              if path not in context_after and path != _CUT_SHORT and entry[2] is None
                              and unchanged.signature(path) == entry[0]})
        # The named files too: the next run on them (unchanged) keeps this context, and a run
        # on another file takes their states as its context.
        named_states = {c.absolute: o.state for c, o in zip(candidates, outcomes)
                        if not isinstance(o, Problem) and not any(p.internal for p in o.problems)}
        context_after.update({c.absolute: _named_entry(c, signature, named_states.get(c.absolute),
                                                       context_before.get(c.absolute) if held else None)
                              for c in candidates if c.content is None and c.absolute not in context_after
                              if (signature := unchanged.signature(c.absolute)) is not None})
        unchanged.save(context_cache, context_after, context_before, *context_kind)
    elif fresh and cache_dir is not None and stdin is None and [os.path.realpath(p) for p in paths] == [
            os.path.realpath(config.root)]:  # (`realpath`, not `resolve`: a link loop raises there)
        # (A scan that analysed nothing anew leaves what the last one kept as it was.)
        _keep_for_named_runs(candidates, outcomes, current, model, config, codes, cache_dir, build_cache)
    if config.deep:
        findings = _with_deep_findings(findings, result, config, codes, jobs, cache, build)

    docs = load_all()
    for state in result.files.values():
        if state.suppressions is None:  # unparsed, but it has a suppression comment
            _complete(state, config, model.environment_of(state.absolute, state.language))
        if state.suppressions.unknown:
            result.problems.extend(Problem(f"{state.path}:{line}", f"unknown rule `{selector}` in a suppression comment")
                                   for line, selector in state.suppressions.unknown)
    per_file_ignores = [
        (pathspec.GitIgnoreSpec.from_lines([glob]), set(sel)) for glob, sel in config.per_file_ignores.items()
    ]
    result.not_built = {state.path: build.not_built[state.absolute] for state in result.files.values()
                        if state.absolute in build.not_built}
    # path -> the file whose no-port library include keeps it from compiling for ROCm (itself,
    # or a project header it includes), or None
    unported: dict[str, str | None] = {}
    held: dict[str, list[Finding]] = {}  # that file's path -> the other rules' findings it stops
    # Only a file L001 reports a no-port library in can be one (its include is an error there):
    # the others are not read again here.
    unported_candidates = {f.path for f in findings if f.code in _LIBRARY_RULES and f.severity is Severity.ERROR}
    unported_includes = _UnportedIncludes(result.files, unported_candidates, index, lambda state: _complete(
        state, config, model.environment_of(state.absolute, state.language)))
    for f in findings:
        state = result.files.get(f.path)
        if state is None or state.path in result.not_built:  # a context file; or no ROCm build compiles it
            continue
        doc = docs[f.code]
        if state.ranges is None or state.suppressions is None:
            _complete(state, config, model.environment_of(state.absolute, state.language))
        status = _status(state.ranges, f.location.start_byte)
        if status is Status.DEAD or (status is Status.PORT and doc.scope == "live" and not f.in_port):
            continue
        if state.suppressions.covers(f.code, doc.name, f.location.start_line) or _ignored_for_file(
            f, doc.name, state, config, per_file_ignores
        ):
            result.suppressed += 1
            continue
        severity = config.severity.get(f.code) or f.severity or doc.severity
        if f.code not in _LIBRARY_RULES and state.language == CUDA and unported_candidates:
            if state.path not in unported:
                unported[state.path] = unported_includes.root(state)
            if unported[state.path] is not None:  # it cannot compile for ROCm: the include is its one finding
                held.setdefault(unported[state.path], []).append(replace(f, severity=severity))
                continue
        result.findings.append(replace(f, severity=severity))
    # The project's other files, where files were named: read for what they call and test.
    # A file named without that context (no project rule enabled) keeps its findings.
    in_view = {**context, **result.files}
    complete = functools.partial(_complete_for_model, config=config, model=model)  # (a file's ROCm-path model)
    if explicit or not any(c.explicit for c in candidates):
        result.findings = _drop_in_functions_called_only_off_rocm(result.findings, in_view, complete)
    if explicit or whole:  # (a scan of a folder below the root does not see the files that may set a switch)
        # (a scan of the root walked them all; named files walk once, if asked)
        descriptions = (lambda: walked_descriptions) if whole else functools.cache(
            lambda: build_descriptions(config))
        result.findings = _drop_under_unset_switches(result.findings, in_view, descriptions)
        result.findings = _one_warning_per_switch(_keep_switches_the_build_sets(result.findings, in_view, descriptions))
        result.findings = _drop_where_the_build_asks_for_cxx20(result.findings, in_view, descriptions)
        result.findings = _note_in_templates_nothing_instantiates(result.findings, in_view, complete)
    else:  # (the build files are out of view: whether the project has a ROCm build, or sets a switch, is unknown)
        result.findings = [f for f in result.findings if not f.open_switches]
    result.findings = _judge_flags_by_other_files(result.findings, in_view)
    if held:
        result.findings = _fold_into_unported_includes(result.findings, held)
    if len(unported_candidates) > 1:
        result.findings = _fold_unported_headers(result.findings, result.files, unported_includes)
    result.findings.sort(key=lambda f: (f.path, f.location.start_byte if f.location else 0, f.code))
    # The build model's, last: reading the build files and walking the includes (both here, not in workers).
    result.problems.extend(Problem(display_path(Path(path)), message) for path, message in model.problems)
    if budget is not None:
        result.problems.extend(Problem("<project>", line, less_context=True) for line in budget.spent_on)
    tail = result.problems[tail_start:]
    result.problems.sort(key=lambda p: p.path)
    if not explicit:  # after the central filters: what they completed of each state is kept too
        scan_after.update(_headers_outside(model, scan_after))
        if final_key is not None and not any(p.timed_out or p.internal for p in tail):
            scan_after[_FINAL] = ((0, 0, 0), False,
                                  (final_key, result.findings, result.suppressed, result.not_built, tail))
        unchanged.save(cache, scan_after, scan_before, *scan_kind)
    return result


def _with_deep_findings(findings: list[Finding], result: ScanResult, config: Config, codes, jobs: int,
                        cache: Cache | None, build: BuildFiles) -> list[Finding]:
    """Deep mode's hook: libclang's findings join the fast ones before the central filters."""
    from portlint import deep

    report = deep.analyze(result.files.values(), config, codes, jobs, cache, build)
    result.notes.extend(report.notes)
    result.problems.extend(Problem(display_path(Path(path)), message, True) for path, message in report.internal_errors)
    return deep.merge(findings, report)


def _project_around(candidates: list[Candidate], config: Config) -> list[Candidate] | None:
    """The project's files other than the named `candidates`, discovered from its root; None
    when a named file lies outside it (a configuration from elsewhere, `--config /dev/null`:
    its folder is no project)."""
    given = {c.resolved for c in candidates}
    root = config.root.resolve()
    if not all(c.resolved is not None and root in c.resolved.parents for c in candidates):
        return None
    return [c for c in discover([config.root], config)[0] if c.resolved not in given]


def _project_context(candidates: list[Candidate], others: list[Candidate], before: unchanged.Snapshot,
                     budget: workers.Budget | None = None
                     ) -> tuple[list[FileState | Candidate], dict[str, tuple], set[str], bool]:
    """With files named on the command line (a pre-commit hook passes the staged ones), the
    project's other files are context for the cross-file rules: a kernel's definition, a
    warp-size macro in a header, the CMake file that enables HIP. They are read, never
    reported, so a file alone gives the findings it gives in a full scan. C-family files are
    not parsed here: their facts load on demand, only when a project rule asks for a name
    they mention (`ProjectIndex.defer`); build files are analysed (and cached) as usual: they
    are returned as candidates, for `_start_analysis`.

    A file whose state the snapshot of an earlier run (`before`) still answers for is not read
    at all (`portlint.unchanged`). Also returns each context file's (signature, shapes
    others), for the next snapshot. Past the `budget`, the files not read yet are left out
    (also returned: the snapshot keeps them so, and the runs that reuse it leave them out too).
    Last, whether the snapshot held (its headers and build files unchanged)."""
    current = {c.absolute: _signature_of(c, before) for c in others}
    named = {c.absolute: (None if c.content is not None else unchanged.signature(c.absolute),
                            unchanged.shapes_others(c.absolute, c.language, c.build_script))
             for c in candidates}
    if _CUT_SHORT in before and budget is not None and before[_CUT_SHORT][2][0] != budget.seconds:
        before = {}  # made with less under another budget (a larger --timeout): worked out again
    kept = unchanged.reusable(before, current, {**named, **_outside(before)})
    if kept and _CUT_SHORT in before and budget is not None:
        for what in before[_CUT_SHORT][2][1]:
            budget.cut(what, earlier=True)
    plan: list[FileState | Candidate] = []
    left_out: set[str] = set()
    for candidate in others:
        entry = kept.get(candidate.absolute)
        if entry is not None and entry[2] == _LEFT_OUT:
            if budget is not None:
                budget.cut(_CONTEXT_LEFT_OUT, earlier=True)
                left_out.add(candidate.absolute)
                continue
        elif entry is not None and entry[2] is not None:  # None: a file the last run read but kept no state of
            plan.append(entry[2])
            continue
        if budget is not None and budget.spent():
            budget.cut(_CONTEXT_LEFT_OUT)
            left_out.add(candidate.absolute)
            continue
        source = read_source(candidate)
        if isinstance(source, Problem):
            continue
        if source.language == CUDA and not project_facts.needs_parse(source, Probe(source.data)):
            plan.append(_unparsed(source, wants_facts=True))
        else:  # facts that cannot wait (a warp-size definition): parsed, as in a full scan
            plan.append(candidate)
    return plan, current, left_out, bool(kept)


def _named_entry(candidate: Candidate, signature, state: FileState | None, previous) -> tuple:
    """A named file's entry in the context snapshot. Unchanged since the entry of a context
    that held (`previous`), it keeps that entry: equal, though packed in another working
    directory, so the snapshot is not written again for it."""
    if state is not None and previous is not None and previous[0] == signature and previous[2] is not None:
        return previous
    return (signature, unchanged.shapes_others(candidate.absolute, candidate.language, candidate.build_script),
            _packed(replace(state, findings=[])) if state is not None else None)


# The context snapshot's entry (no file's) for what its run cut short, said again on reuse.
_CUT_SHORT = "<cut short>"
# A context file's state in the snapshot where the budget left it unread.
_LEFT_OUT = "<left out>"
_CONTEXT_LEFT_OUT = "the project context (some files not read: the cross-file rules see less)"


# The scan snapshot's entry (no file's) for the result after the per-file pass: the project
# rules' findings, the central filters' verdicts, what they found wrong.
_FINAL = "<final>"


def _final_key(config: Config, codes, descriptions: list[Path]) -> str:
    """What the result depends on besides the files' own contents: the settings (severities,
    per-file ignores) and the build descriptions the switch filter reads."""
    described = [(str(path), unchanged.signature(str(path))) for path in descriptions]
    return hashlib.sha256(repr((config, codes, described)).encode()).hexdigest()


def _final_kept(before: unchanged.Snapshot, current: dict[str, tuple], fresh: list, key: str | None):
    """The last scan's (findings, suppressed, not built, problems after the per-file pass)
    when every file it saw is here as it was, no other is, and `key` is the same; else None."""
    entry = before.get(_FINAL)
    if key is None or entry is None or fresh or entry[2][0] != key:
        return None
    seen = {path for path, (_, _, kept) in before.items() if kept is not None and not path.startswith("<")}
    findings, suppressed, not_built, tail = entry[2][1:]
    return (list(findings), suppressed, dict(not_built), list(tail)) if seen == current.keys() else None


def _stored(outcome: tuple[FileState, list[Problem]] | Problem) -> unchanged.Stored | Problem:
    """A file's outcome from the analysis as the scan snapshot keeps it."""
    return outcome if isinstance(outcome, Problem) else unchanged.Stored(outcome[0].path, *outcome)


def _keep_for_named_runs(candidates: list[Candidate], outcomes: list, current: dict[str, tuple],
                         model: build_model.BuildModel, config: Config, codes, cache_dir: Path, build_cache) -> None:
    """After a scan of the whole project, what a run on one of its files named alone reads
    from the project, so that the first such run (a pre-commit hook after a full scan) costs
    what a second one does: every file's state as the project context (`_project_context`),
    every file's includes (`build_model.include_graph`), every file's macro environment
    (`build_model.ScanEnvironments`)."""
    if not _project_codes(codes):
        return
    context_cache = Cache.open(cache_dir, config, ("context", *_project_codes(codes)))
    kind = ("project context", config.root.resolve().as_posix())
    before = unchanged.load(context_cache, *kind)
    snapshot: unchanged.Snapshot = {}
    for candidate, outcome in zip(candidates, outcomes):
        signature = current.get(candidate.absolute, (None,))
        if signature[0] is None or isinstance(outcome, Problem) or any(p.internal for p in outcome.problems):
            continue
        snapshot[candidate.absolute] = (*signature, _packed(replace(outcome.state, findings=[])))
    snapshot.update(_headers_outside(model, snapshot))
    unchanged.save(context_cache, snapshot, before, *kind)
    c_family = [c.absolute for c in candidates if c.language == CUDA]
    build_model.include_graph(c_family, build_cache, str(config.root), read=model.bytes_read)
    model.keep_for_named_runs(c_family)


def _headers_outside(model: build_model.BuildModel, covered: unchanged.Snapshot) -> unchanged.Snapshot:
    """Entries for the headers the build model read beyond the scanned files (no result of
    their own): a change to one of them drops the snapshot like a change to a scanned header."""
    return {path: (signature, True, None) for path in model.headers_read() if path not in covered
            if (signature := unchanged.signature(path)) is not None}


def _outside(before: unchanged.Snapshot) -> dict[str, tuple]:
    """The headers outside the scanned files a snapshot depends on, as they are now."""
    return {path: (unchanged.signature(path), True) for path, entry in before.items()
            if entry[2] is None and path != _CUT_SHORT}


def _signature_of(candidate: Candidate, before: unchanged.Snapshot) -> tuple:
    """(stat signature, whether the file shapes others) of a file. A Python file that
    changed is read: whether it is a build helper is in its bytes."""
    path = candidate.absolute
    now = unchanged.signature(path)
    build_script = candidate.build_script
    if candidate.language == PYTHON and not build_script:
        entry = before.get(path)
        if entry is not None and entry[0] == now:
            build_script = entry[1]
        else:
            source = read_source(candidate)
            build_script = not isinstance(source, Problem) and source.build_script
    return now, unchanged.shapes_others(path, candidate.language, build_script)


def _context_states(plan: list[FileState | Candidate], outcomes: list, left_out: set[str]) -> dict[str, FileState]:
    """The context's states: `plan` with each candidate replaced by its analysis. A C-family
    file whose analysis was stopped (the run's budget) is left unparsed: its facts load when
    a project rule asks for them, as an unparsed file's do, and the state is kept. Another
    file stopped so joins `left_out`."""
    analysed = iter(outcomes)
    context: dict[str, FileState] = {}
    for state in plan:
        if isinstance(state, Candidate):
            outcome = next(analysed)
            if isinstance(outcome, Problem) and outcome.timed_out:
                if state.language != CUDA:
                    left_out.add(state.absolute)
                    continue
                source = read_source(state)
                if isinstance(source, Problem):
                    continue
                outcome = (_unparsed(source, wants_facts=True), [])
            if isinstance(outcome, Problem):
                continue
            state = outcome[0]
        context[state.path] = state
    return context


def _packed(state: FileState) -> FileState:
    """A context file's state as its snapshot keeps it: the facts rules read by name packed
    (`project.pack`), unpickled in the next run only for the names its rules ask about."""
    facts = pack(state.facts)
    return state if facts is state.facts else replace(state, facts=facts)


def _project_codes(codes) -> tuple[str, ...]:
    return tuple(c for c in codes if PROJECT in REGISTRY[c])


class _FactsLoader:
    """Collects the project facts of a file that was not parsed, when a project rule asks."""

    def __init__(self, state: FileState, config: Config, cache: Cache | None = None,
                 model: build_model.BuildModel | None = None, context: bool = False) -> None:
        self.state, self.config, self.cache, self.model = state, config, cache, model
        self.context = context  # a file of the project context, not one to report on
        self.loaded = False  # the state holds the collected facts

    @property
    def environment(self) -> FileEnvironment | None:
        """Worked out only if a project rule asks for the file's facts."""
        return self.model.environment(self.state.absolute, self.context) if self.model is not None else None

    def data(self) -> bytes:
        try:
            return read_regular(self.state.absolute, MAX_FILE_BYTES)
        except (OSError, NotReadable):
            return b""

    def __call__(self) -> FileFacts:
        environment = self.environment
        source = _complete(self.state, self.config, environment)
        if source is None:
            return FileFacts(path=self.state.facts.path)
        facts = project_facts.collect(source, source.rocm_path)
        self.state.facts = facts
        self.loaded = True
        if self.cache is not None:  # the next scan finds the facts without parsing again
            self.cache.put(self.cache.key(source, environment), (self.state, []), FILE)
        return facts


def _complete_for_model(state: FileState, config: Config, model) -> SourceFile | None:
    """`_complete` with the file's environment from the build `model`."""
    return _complete(state, config, model.environment_of(state.absolute, state.language))


def _complete(state: FileState, config: Config, environment: FileEnvironment | None = None) -> SourceFile | None:
    """Parse a file the per-file pass left unparsed; fill in its ROCm-path model and suppressions."""
    source = read_source(Candidate(state.absolute_path, state.language, explicit=False))
    if isinstance(source, Problem) or source.digest != state.digest:  # gone or changed since: no model
        state.ranges = state.ranges if state.ranges is not None else []
        state.suppressions = state.suppressions if state.suppressions is not None else suppress.Suppressions()
        return None
    source.path = state.path
    source.build = environment
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


def _judge_flags_by_other_files(findings: list[Finding], files: dict[str, FileState]) -> list[Finding]:
    """Judge a P002 gate that only defines feature flags its own file never tests
    (`Finding.open_flags`) by the files that test them: where each test in view has a working
    arm for the flag undefined, or is taken on ROCm all the same (the flag defined there
    otherwise), AMD computes without the fast path: a note, the fallbacks related. A flag no
    file in view tests, or a test that leaves code out, keeps the warning."""
    open_findings = [f for f in findings if f.open_flags]
    if not open_findings:
        return findings
    holds: dict[str, bool | None] = dict.fromkeys(n for f in open_findings for n in f.open_flags)
    fallbacks: dict[str, list] = {name: [] for name in holds}
    for state in files.values():
        if state.language != CUDA or not any(h is not False and _may_name(state, n) for n, h in holds.items()):
            continue
        try:
            data = read_regular(state.absolute, MAX_FILE_BYTES)
        except (OSError, NotReadable):
            data = None
        present = [n for n, h in holds.items() if h is not False and (data is None or n.encode() in data)]
        if not present:
            continue
        source = _tested_source(state, data)
        for name in present:
            verdict, arms = preprocessor.flag_tests_on_rocm(source, name) if source is not None else (False, [])
            if verdict is not None:
                holds[name] = verdict
                fallbacks[name].extend(source.location(a.start_byte, a.end_byte) for a in arms[:3])
    out = []
    for f in findings:
        if not f.open_flags:
            out.append(f)
            continue
        if not all(holds[name] for name in f.open_flags):
            out.append(replace(f, open_flags=()))
            continue
        names = ", ".join(f"`{name}`" for name in f.open_flags)
        out.append(replace(
            f, severity=Severity.NOTE, open_flags=(),
            # (a rewrite that would define the flags on AMD changes what the fallbacks compute)
            fix=replace(f.fix, applicability=Applicability.UNSAFE) if f.fix.is_applicable else f.fix,
            message=(f"`{f.matched}` is never true on AMD, which leaves {names} undefined; the other files that "
                     "test it compile a fallback arm there, or have it defined otherwise."),
            related=f.related + tuple(Related(location, f"a fallback arm AMD compiles for {name}")
                                      for name in f.open_flags for location in fallbacks[name][:3])))
    return out


def _drop_under_unset_switches(findings: list[Finding], files: dict[str, FileState],
                               descriptions: Callable[[], list[Path]]) -> list[Finding]:
    """Leave out the findings in code that no build compiles unless a switch is defined
    (`FileState.switch_gates`: `#ifdef TV_DEBUG`, `#if defined(TEXTURE) && ...`) where nothing
    in the project sets that switch: no C-family file defines, undefines or reads it outside a
    test, no build file, build script or other build description (configure templates, CI
    recipes: `discover.build_descriptions`) names it, and it is none of the names toolchains,
    PyTorch or build systems set (`macros.set_outside_the_project`). The ROCm build, as the
    project ships it, never compiles that code, and neither does the CUDA one."""
    spans = {path: _Spans(gates) for path, gates in _switch_gates_of_findings(findings, files).items()}

    def gates_around(f: Finding) -> list:
        return spans[f.path].holding(f.location.start_byte) if f.path in spans else []

    gated = [f for f in findings if gates_around(f)]
    if not gated:
        return findings
    names = {name for f in gated for _, _, gate in gates_around(f) for name in gate}
    unset = {name for name in names if not macros.set_outside_the_project(name)}
    for state in files.values():
        if not unset:
            break
        # (a flag's word in a build file may be `-DNAME`, `/DNAME`: one word with its `D`)
        unset -= _switches_set_in(state, {name for name in unset if _may_name(state, name) or (
            state.language != CUDA and _may_name(state, "D" + name))})
    unset -= _named_in_descriptions(unset, descriptions)
    if not unset:
        return findings
    return [f for f in findings if not any(not unset.isdisjoint(gate) for _, _, gate in gates_around(f))]


def _named_in_descriptions(names: set[str], descriptions: Callable[[], list[Path]]) -> set[str]:
    """The `names` some build description (`discover.build_descriptions`) holds."""
    found: set[str] = set()
    if not names:
        return found
    for path in descriptions():
        try:
            data = read_regular(str(path), _MAX_DESCRIPTION_BYTES)
        except (OSError, NotReadable):
            continue  # (a description too large or unreadable is no build script)
        found |= {name for name in names - found if name.encode() in data}
        if found == names:
            break
    return found


def _keep_switches_the_build_sets(findings: list[Finding], files: dict[str, FileState],
                                  descriptions: Callable[[], list[Path]]) -> list[Finding]:
    """Keep a finding that stands on a switch of the project's build (`Finding.open_switches`,
    P006's `GOOGLE_CUDA`) only where a build file or build description names the switch and no
    C-family file defines it: one the sources define themselves (`#define CUDA_DRIVER_API`
    before an include) is theirs on any build, and one nothing sets is no build's."""
    switches = {name for f in findings for name in f.open_switches}
    if not switches:
        return findings
    in_build: set[str] = set()
    in_code: set[str] = set()
    for state in files.values():
        candidates = {n for n in switches
                      if _may_name(state, n) or (state.language != CUDA and _may_name(state, "D" + n))}
        found = _switches_set_in(state, candidates)
        if state.language == CUDA:
            # (a read as a value counts as set there too: `_switches_set_in`'s reading; a test is no set)
            in_code |= found
        else:
            in_build |= found
    in_build |= _named_in_descriptions(switches - in_build - in_code, descriptions)
    kept = in_build - in_code
    return [f for f in findings if not f.open_switches or set(f.open_switches) <= kept]


def _one_warning_per_switch(findings: list[Finding]) -> list[Finding]:
    """A switch of the project found in many files (P006's `GOOGLE_CUDA`) is one root cause:
    its first place keeps the severity with every other file's places related, and each other
    file keeps a note at its own first place that points back to it (as `group_root_causes`
    leaves a header constant's uses)."""
    by_switch: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.open_switches and f.location is not None:
            by_switch.setdefault((f.code, f.open_switches), []).append(f)
    if not by_switch:
        return findings
    replaced: dict[int, Finding] = {}
    for members in by_switch.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda m: (m.path, m.location.start_byte))
        leader, *rest = members
        related = list(leader.related) + [r for m in rest for r in (Related(m.location, SAME_HAZARD), *m.related)]
        replaced[id(leader)] = replace(leader, related=tuple(related))
        for m in rest:
            replaced[id(m)] = replace(m, severity=Severity.NOTE, companion_of=root_cause(leader),
                                      related=(Related(leader.location, "the root cause, reported here"), *m.related))
    return [replaced.get(id(f), f) for f in findings]


def _any_between(offsets: list[int], start: int, end: int) -> bool:
    """Whether sorted `offsets` hold one with start <= offset < end."""
    i = bisect.bisect_left(offsets, start)
    return i < len(offsets) and offsets[i] < end


class _Spans:
    """Byte spans (start, end, ...), sorted once, for those that hold an offset: a file of
    thousands of `#elif` arms has thousands of gates and as many findings."""

    def __init__(self, spans) -> None:
        self._spans = sorted(spans, key=lambda span: span[0])
        self._starts = [span[0] for span in self._spans]
        self._reach = list(itertools.accumulate((span[1] for span in self._spans), max))  # the furthest end so far

    def holding(self, offset: int) -> list:
        """The spans with start <= offset < end."""
        held = []
        i = bisect.bisect_right(self._starts, offset) - 1
        while i >= 0 and self._reach[i] > offset:  # (no span before i reaches the offset once the reach does not)
            if self._spans[i][1] > offset:
                held.append(self._spans[i])
            i -= 1
        return held


def _switch_gates_of_findings(findings: list[Finding], files: dict[str, FileState]) -> dict[str, tuple]:
    """Each C-family file's switch gates around its findings: kept from its own pass
    (`FileState.switch_gates`), read again only for a file that holds a project rule's finding."""
    gates: dict[str, tuple] = {}
    own: dict[str, set | None] = {}  # None: every gate of the file read
    for f in findings:
        state = files.get(f.path)
        if f.location is None or state is None or state.language != CUDA:
            continue
        if f.path not in gates:
            gates[f.path] = state.switch_gates
            own[f.path] = {(g.code, g.location.start_byte) for g in state.findings if g.location is not None}
        if own[f.path] is not None and (f.code, f.location.start_byte) not in own[f.path]:
            own[f.path] = None
            try:
                gates[f.path] = macros.switch_gates(read_regular(state.absolute, MAX_FILE_BYTES))
            except (OSError, NotReadable):
                pass
    return gates


_MAX_DESCRIPTION_BYTES = 1024 * 1024


# A build's request for C++20 or later: `-std=c++20` (`gnu++2a`, MSVC's `/std:c++latest`),
# CMake's `CXX_STANDARD 20` (also CUDA's and HIP's) and `cxx_std_20`, Meson's `cpp_std=c++20`.
_CXX20_REQUEST = re.compile(rb"(?:-std=|/std:)(?:c|gnu)\+\+(?:2\w|latest)|(?:CXX|CUDA|HIP)_STANDARD\s+2\d"
                            rb"|(?:cxx|cuda|hip)_std_2\d|cpp_std\s*=\s*['\"]?(?:c|gnu)\+\+2", re.IGNORECASE)


def _drop_where_the_build_asks_for_cxx20(findings: list[Finding], files: dict[str, FileState],
                                         descriptions: Callable[[], list[Path]]) -> list[Finding]:
    """Leave out the findings of code hip-clang rejects only before C++20 (`open_standard`)
    where a build file or build description of the project asks for C++20 or later."""
    if not any(f.open_standard for f in findings):
        return findings
    paths = [state.absolute for state in files.values() if state.language in (CMAKE, PYTHON, MAKE)]
    paths += [str(p) for p in descriptions()]
    for path in paths:
        try:
            data = read_regular(path, _MAX_DESCRIPTION_BYTES)
        except (OSError, NotReadable):
            continue
        if _CXX20_REQUEST.search(data):
            return [f for f in findings if not f.open_standard]
    return findings


def _switches_set_in(state: FileState, names: set[str]) -> set[str]:
    """The `names` a file may set: a C-family file that defines or undefines one, or reads it
    outside a conditional's test (a value some header gives it); any other file that holds
    the name at all; every name where the file cannot be read."""
    if not names:
        return set()
    try:
        data = read_regular(state.absolute, MAX_FILE_BYTES)
    except (OSError, NotReadable):
        return names
    names = {name for name in names if name.encode() in data}
    if state.language != CUDA or not names:
        return names
    directives = macros.read_directives(data)
    # a definition, an `#undef`, or a macro body that reads it
    found = {name for d in directives if d.kind in ("define", "undef")
             for kind, name in tokens(d.text) if kind == "id"} & names
    source = None
    in_directives = "\n".join(d.text for d in directives)  # (a name, one word, never spans two)
    for name in names - found:
        if data.count(name.encode()) == in_directives.count(name):
            continue  # only in directives: the tests themselves (no parse needed to say so)
        source = source or SourceFile(state.path, CUDA, data, Path(state.absolute))
        for node in cpp.token_nodes(source, name.encode()):
            if not any(d.offset <= node.start_byte < d.end for d in directives):
                found.add(name)  # read in code (not in a comment or a string)
                break
    return found


def _tested_source(state: FileState, data: bytes | None) -> SourceFile | None:
    """A file to read flag tests in, with its ROCm-path model from its own pass where it has
    one (no macro walk here: a warm run has the models in its cache and walks nothing;
    without one, only a test's fallback arm can make it hold); None where it changed since."""
    if data is None:
        return None
    source = SourceFile(state.path, CUDA, data, Path(state.absolute))
    if source.digest != state.digest:
        return None
    if state.ranges is not None:
        source.rocm_path = rocm_path.RocmPathModel(ranges=state.ranges)
    return source


def _drop_in_functions_called_only_off_rocm(findings: list[Finding], files: dict[str, FileState],
                                             complete=None) -> list[Finding]:
    """Leave out the findings of functions a ROCm build never runs: those their file calls only
    where ROCm never goes (`FileState.off_rocm_functions`) and whose name no other file of the
    scan in the same language holds (another module, or a file that includes a C-family one,
    might call them; CMake names in any case). A C-family function is still compiled, so only
    findings about what it computes or how fast go (not those of code hip-clang rejects, nor
    the wavefront rules')."""
    candidates = {path: state.off_rocm_functions for path, state in files.items() if state.off_rocm_functions}
    if not candidates:
        return findings
    names = {(files[path].language, name) for path, spans in candidates.items() for _, _, name in spans}
    named_elsewhere: set[tuple[str, str]] = set()  # (language, name)
    for path, state in files.items():
        wanted = {(language, name) for language, name in names - named_elsewhere
                  if language == state.language and language != CUDA}
        if wanted:
            named_elsewhere |= _named_in(state, wanted, candidates.get(path, ()), complete)
    c_family = [state for state in files.values() if state.language == CUDA]
    for path, spans in candidates.items():
        state = files[path]
        if state.language != CUDA:
            continue
        # Another C-family file that names it may include the file and call it (only the
        # files whose words may hold the name are read).
        wanted = {(CUDA, name) for _, _, name in spans}
        for other in c_family:
            if other is not state:
                named_elsewhere |= _named_in(other, wanted - named_elsewhere, (), complete)
    return [f for f in findings if not any(
        s <= f.location.start_byte < e and (files[f.path].language, name) not in named_elsewhere
        and (files[f.path].language != CUDA or f.code in _runtime_codes())
        for s, e, name in candidates.get(f.path, ()))]


def _note_in_templates_nothing_instantiates(findings: list[Finding], files: dict[str, FileState],
                                            complete=None) -> list[Finding]:
    """Errors and warnings about what code computes (`_not_run_codes`) inside a function
    template that no file of the project names (`FileState.lone_templates`; a header's helper
    nothing calls) become notes: nothing instantiates it, so none of it runs. They say so:
    the hazard is there for the first caller."""
    candidates = {path: state.lone_templates for path, state in files.items() if state.lone_templates}
    if not candidates:
        return findings
    wanted = {(CUDA, name) for spans in candidates.values() for _, _, name in spans}
    named_elsewhere: set[tuple[str, str]] = set()
    for state in files.values():
        if state.language == CUDA and wanted - named_elsewhere:
            # (a file's own lone templates are written there once, at their definition)
            named_elsewhere |= _named_in(state, wanted - named_elsewhere, candidates.get(state.path, ()), complete)
    out = []
    for f in findings:
        span = next((name for s, e, name in candidates.get(f.path, ())
                     if s <= f.location.start_byte < e and (CUDA, name) not in named_elsewhere), None) \
            if f.location is not None and f.severity is not Severity.NOTE and _moot_unrun(f) else None
        out.append(f if span is None else replace(
            f, severity=Severity.NOTE,
            message=f"{f.message} Nothing in the project instantiates `{span}`, so none of it runs yet."))
    return out


def _moot_unrun(f: Finding) -> bool:
    """Does code that never runs, nor is instantiated, make `f` moot?"""
    return f.code in _not_run_codes() or f.dependent


@functools.cache
def _not_run_codes() -> frozenset[str]:
    """The rules whose findings code that never runs makes moot: what it computes, or how
    fast. Not those of code hip-clang rejects: a template's non-dependent code is checked
    where it is defined (a missing `typename`, W002's mask `static_assert` in a call that
    names no template parameter; a finding about a call that does is `Finding.dependent`)."""
    return frozenset(code for code, doc in load_all().items()
                     if doc.impact in ("results", "performance") and code != "W002")


@functools.cache
def _runtime_codes() -> frozenset[str]:
    """The rules whose C-family findings a function that never runs on ROCm makes moot: what
    it computes, or how fast; not the wavefront rules, whose masks hip-clang also checks
    (`static_assert`) where it compiles a body that never runs."""
    return frozenset(code for code, doc in load_all().items()
                     if doc.impact in ("results", "performance") and "wavefront" not in doc.tags)


def _may_name(state: FileState, name: str) -> bool:
    """May the file hold `name` (its word filter says so, or it has none)? No read."""
    return state.words is None or state.words.may_hold(name)


def _named_in(state: FileState, wanted: set[tuple[str, str]], own, complete=None) -> set[tuple[str, str]]:
    """The (language, name) pairs of `wanted` the file's bytes hold where the ROCm build
    compiles them (a call in an arm it skips calls nothing there), its own candidates' names
    left out (`own`); all of them where it cannot be read (it might call any). `complete`
    works out the ROCm-path model of a file the per-file pass left unparsed, where needed."""
    wanted = {(language, name) for language, name in wanted if _may_name(state, name)}
    if not wanted:
        return set()
    try:
        data = read_regular(state.absolute, MAX_FILE_BYTES)
    except (OSError, NotReadable):
        return set(wanted)
    if state.ranges is None and complete is not None and any(name.encode() in data for _, name in wanted):
        complete(state)
    # The ROCm-path model of the file as the scan read it (not of bytes changed since).
    ranges = state.ranges if state.ranges is not None and hashlib.sha256(data).hexdigest() == state.digest else None
    if state.language == CMAKE:
        data = data.lower()
    return {(language, name) for language, name in wanted
            if _written_where_rocm_compiles(ranges, data, name.encode()) and not any(n == name for _, _, n in own)}


def _written_where_rocm_compiles(ranges, data: bytes, name: bytes) -> bool:
    """Does `data` hold `name` outside the arms the ROCm build skips (`ranges`: the file's
    ROCm-path model; None: not known, so anywhere)?"""
    at = data.find(name)
    while at != -1:
        if ranges is None or _status(ranges, at) is not Status.DEAD:
            return True
        at = data.find(name, at + len(name))
    return False


def _judge_by_other_files(findings: list[Finding], files: dict[str, FileState], index: ProjectIndex) -> list[Finding]:
    """Judge the findings whose verdict rests on warp code of other files by those files'
    verdicts (`FileFacts.warp_helpers`, `.helper_callers`): for a 32 beside calls of helpers
    out of view (`open_helpers`), the project files it includes, directly or not, that define
    them; for a 32 in a helper its file never calls (`open_callers`), the files that include
    that file and call the helper."""
    open_findings = [f for f in findings if f.open_helpers or f.open_callers]
    if not open_findings:
        return findings
    verdicts: dict[str, dict[str, list]] = {}  # a finding's path -> helper name -> [(verdict, where)]
    for f in open_findings:
        state = files.get(f.path)
        if state is None or state.language != CUDA:
            continue
        here, found = state.facts.path, verdicts.setdefault(f.path, {})
        for name in f.open_helpers:
            found.setdefault(name, [index.files[key].warp_helpers[name] for key in included_files(index, here)
                                    if name in index.files[key].warp_helpers])
        for name in f.open_callers:
            found.setdefault(name, [other.facts.helper_callers[name] for other in files.values()
                                    if name in other.facts.helper_callers and other.facts.path != here
                                    and here in included_files(index, other.facts.path)])
    return judge_by_helpers(findings, verdicts)


# The rules that report a CUDA library a file is written on (L001).
_LIBRARY_RULES = frozenset(code for code, checks in REGISTRY.items() if check_cuda_library in checks.values())
# The rules whose per-file findings may wait for other files' warp verdicts (`open_helpers`,
# `open_callers`): they need the project facts even where no project rule is enabled.
_JUDGED_BY_OTHER_FILES = frozenset(code for code, checks in REGISTRY.items()
                                   if {check_hardcoded_warp_size, check_shuffle_width_32} & set(checks.values()))


def _fold_into_unported_includes(findings: list[Finding], held: dict[str, list[Finding]]) -> list[Finding]:
    """The other rules' findings in a file written on a library ROCm has no port of go with
    that include's finding, as its related places: they matter once the port keeps the include
    from the ROCm build. Where no such finding is reported (L001 not selected), they stand alone."""
    out, folded = [], set()
    for f in findings:
        others = held.get(f.path)
        if others and f.code in _LIBRARY_RULES and f.severity is Severity.ERROR and f.path not in folded:
            folded.add(f.path)
            f = replace(f, related=f.related + tuple(
                Related(h.location, f"{h.code}: {h.message}") for h in sorted(others, key=lambda h: h.location.start_byte)))
        out.append(f)
    return out + [h for path, others in held.items() if path not in folded for h in others]


def _fold_unported_headers(findings: list[Finding], files: dict[str, "FileState"],
                           reach: "_UnportedIncludes") -> list[Finding]:
    """A header written on a library ROCm has no port of (its include is an L001 error),
    included by another file written on it, directly or through project headers that are not
    (`kernel.h` -> `make_iter.h` -> `iter.h`), is part of that file's root cause: the code
    written on the library, which the port replaces or keeps from the ROCm build as a whole.
    Its finding goes with the includer's, as related places, down to a file nothing so
    written includes (a kernel's source), one finding for the whole of it; files that share
    such a header (two kernels over one CUTLASS-based helper) are one body of code too."""
    unported = {f.path: f for f in findings if f.code in _LIBRARY_RULES and f.severity is Severity.ERROR}
    by_absolute, included = reach.by_absolute, reach.included

    includers: dict[str, list[str]] = {}  # header's path -> every such file that includes it
    for path in sorted(unported):
        if path not in files or files[path].language != CUDA:  # a build file's link line: no includes
            continue
        start = Path(files[path].absolute).as_posix()
        seen, frontier = {start}, [start]
        while frontier:  # through the project's other headers, up to the next file written on the library
            nxt = []
            for absolute in frontier:
                for target in included(absolute):
                    if target in seen:
                        continue
                    seen.add(target)
                    if by_absolute[target] in unported:
                        includers.setdefault(by_absolute[target], []).append(path)
                    else:
                        nxt.append(target)
            frontier = nxt
    if not includers:
        return findings
    # The files so joined (a header and its includer, two kernels and the header they share,
    # headers that include one another) are one body of code: one finding, at the first path
    # that none of them includes (else, a cycle, at the first path).
    group_of = {path: path for path in unported}

    def group(path: str) -> str:
        while group_of[path] != path:
            path = group_of[path]
        return path

    for header, includers_of_it in includers.items():
        for includer in includers_of_it:
            a, b = group(header), group(includer)
            if a != b:
                group_of[max(a, b)] = min(a, b)
    groups: dict[str, list[str]] = {}
    for path in sorted(unported):
        groups.setdefault(group(path), []).append(path)
    members: dict[str, list[str]] = {}  # the leading file's path -> the files folded into its finding
    for paths in groups.values():
        if len(paths) > 1:
            leader = min([p for p in paths if p not in includers] or paths)
            members[leader] = [p for p in paths if p != leader]
    folded = {header for headers in members.values() for header in headers}
    out = []
    for f in findings:
        if f.path in folded and unported.get(f.path) is f:
            continue
        if unported.get(f.path) is f and f.path in members:
            gone = [unported[h] for h in sorted(members[f.path])]
            f = replace(f, related=f.related + tuple(
                r for g in gone for r in (Related(g.location, f"{g.code}: {g.message}"), *g.related)))
        out.append(f)
    return out


@functools.lru_cache(maxsize=4096)
def _file_includes(absolute: str, digest: str) -> tuple[tuple[str, int], ...] | None:
    """The `#include` names of a file, each with its directive's offset, read once for the
    rules that fold findings by what a file includes; None when it cannot be read or changed
    since the scan read it (its bytes no longer hash to `digest`)."""
    try:
        data = read_regular(absolute, MAX_FILE_BYTES)
    except (OSError, NotReadable):
        return None
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    return tuple(included_names(data))


class _UnportedIncludes:
    """Which file keeps a file from compiling for ROCm by including a header of a library
    ROCm has no port of (CUTLASS): the file itself, or a project header it includes where
    ROCm compiles it, directly or through other project headers (`attention.cu` ->
    `kernel.h` -> `cutlass/gemm.h`). That include is then the file's one root cause."""

    def __init__(self, files: dict[str, "FileState"], candidates: set[str], index: ProjectIndex, complete) -> None:
        self._files, self._candidates, self._index, self._complete = files, candidates, index, complete
        self._by_facts = {state.facts.path: path for path, state in files.items()
                          if state.language == CUDA and state.facts.path}
        # C-family files by absolute posix path, and by file name (`include_targets`)
        self.by_absolute = {Path(state.absolute).as_posix(): path for path, state in files.items()
                            if state.language == CUDA}
        self._named = by_basename(self.by_absolute) if candidates else {}
        self._written_on: dict[str, bool] = {}
        self._reached: dict = {}  # `first_included`'s answers, by file key

    def root(self, state: "FileState") -> str | None:
        if self._writes_on_library(state.path):
            return state.path
        absolute = Path(state.absolute).as_posix()
        for name in self._live_includes(state):
            for target in self._targets(absolute, name):
                header = self.by_absolute[target]
                if self._writes_on_library(header):
                    return header
                key = self._files[header].facts.path  # ("": no facts collected, nothing to walk)
                found = key and first_included(self._index, key, self._wanted, self._reached, self._includes_of)
                if found:
                    return self._by_facts[found]
        return None

    def _targets(self, absolute: str, include: str) -> list[str]:
        """The project file an `#include` of the file at `absolute` names (the first match)."""
        return sorted(include_targets(absolute, include, self.by_absolute, self._named))[:1]

    def included(self, absolute: str) -> list[str]:
        """The project files the file at `absolute` includes, from its bytes (every arm)."""
        digest = self._files[self.by_absolute[absolute]].digest
        return [target for name, _ in _file_includes(absolute, digest) or ()
                for target in self._targets(absolute, name)]

    def _includes_of(self, key: str) -> list[str]:
        """What a file includes (by its facts' key), from its facts where they hold its
        includes, else from its bytes."""
        path = self._by_facts.get(key)
        if path is None:
            return []
        state = self._files[path]
        if state.facts.includes:
            return state.facts.includes
        return [name for name, _ in _file_includes(str(state.absolute), state.digest) or ()]

    def _wanted(self, key: str) -> bool:
        path = self._by_facts.get(key)
        return path is not None and self._writes_on_library(path)

    @staticmethod
    def _live_includes(state: "FileState") -> list[str]:
        """What the file includes where ROCm compiles it: from its facts where they hold its
        includes (`FileFacts.includes`, the ROCm path's), else from its bytes and its
        ROCm-path model."""
        if state.facts.includes:  # (collected where a project rule runs)
            return state.facts.includes
        return [name for name, offset in _file_includes(str(state.absolute), state.digest) or ()
                if _status(state.ranges, offset) is Status.LIVE]

    def _writes_on_library(self, path: str) -> bool:
        if path not in self._written_on:
            written = path in self._candidates
            if written:
                state = self._files[path]
                if state.ranges is None:
                    self._complete(state)
                written = _includes_unported_library(state)
            self._written_on[path] = written
        return self._written_on[path]


def _includes_unported_library(state: FileState) -> bool:
    """Does the file include, where the ROCm build compiles it, a header of a library ROCm has
    no port of (CUTLASS)? Then it cannot compile for ROCm as written: the port replaces or
    leaves out what it holds, and that include is its one root cause."""
    for name, offset in _file_includes(str(state.absolute), state.digest) or ():
        library = library_for_header(name)
        if library is not None and library.counterpart is None and _status(state.ranges, offset) is Status.LIVE:
            return True
    return False


def _status(ranges, offset: int) -> Status:
    global _last_model
    if _last_model is None or _last_model.ranges is not ranges:  # findings come file by file
        _last_model = rocm_path.RocmPathModel(ranges=ranges)
    return _last_model.status(offset)


_last_model: rocm_path.RocmPathModel | None = None


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


class _Analysis:
    """The analysis of some files, started (`_start_analysis`): workers analyse the files
    that need it while the main process goes on; `outcomes()` waits for them."""

    def __init__(self, outcomes: list, candidates: list, work: "workers.Work | None", timeout: float,
                 compute=None, given: list | None = None) -> None:
        # `outcomes[i]` is the outcome of `candidates[i]`, or None: `work`'s result for it, the
        # files `work` was given (`given`, in its order) being those.
        self._outcomes, self._candidates, self._work, self._timeout = outcomes, candidates, work, timeout
        self._given = given or []
        self._compute = compute  # in-process: the outcomes, worked out when asked

    def outcomes(self, stop=None) -> list:
        """`stop`: asked while workers analyse; once true, the files not done are TIMED_OUT."""
        if self._compute is not None:
            return self._compute()
        if self._work is None:
            return self._outcomes
        analysed = dict(zip(map(id, self._given), self._work.results(stop)))
        return [_file_outcome(c, analysed[id(c)], self._timeout) if o is None else o
                for c, o in zip(self._candidates, self._outcomes)]

    def close(self) -> None:
        if self._work is not None:
            self._work.close()


def _start_analysis(candidates: list[Candidate], config: Config, codes, jobs: int, cache: Cache | None,
                    context: list[Candidate] = (), model: build_model.BuildModel | None = None,
                    context_cache: Cache | None = None,
                    progress: Callable[[int, int], None] | None = None) -> _Analysis:
    """The analysis of `candidates`, then of `context` (analysed for the project rules only,
    cached in `context_cache`: `cache` holds what the enabled rules found), under way;
    `progress(done, total)` as each file is done."""
    if jobs == 0:
        jobs = os.cpu_count() or 1
    in_context = {id(c) for c in context}
    project_codes = _project_codes(codes)
    candidates = [*candidates, *context]
    done = itertools.count(1)
    tick = (lambda *_: progress(next(done), len(candidates))) if progress is not None else None
    count = 1 if jobs <= 1 or len(candidates) < PARALLEL_THRESHOLD else jobs

    def environment(candidate: Candidate) -> FileEnvironment | None:
        if model is None:
            return None
        return model.environment_of(candidate.absolute, candidate.language, context=id(candidate) in in_context)

    def known(candidate: Candidate) -> bytes | None:
        return model.bytes_read(candidate.absolute) if model is not None and candidate.language == CUDA else None

    def analyze(candidate: Candidate):
        env, data = environment(candidate), known(candidate)
        if model is not None and model.changed_since_walk(candidate.absolute):
            # (its macros are the walked version's: analysed now, they would mix two versions)
            return Problem(display_path(candidate.path), "skipped: saved again while the scan read it; scan again")
        if id(candidate) in in_context:
            return analyze_file(candidate, config, project_codes, context_cache, env, facts_only=True, data=data)
        return analyze_file(candidate, config, codes, cache, env, data=data)

    def analyze_here(candidate: Candidate):
        outcome = analyze(candidate)
        if tick is not None:
            tick()
        return outcome

    if not candidates or not _in_workers(count, config.timeout):
        return _Analysis([], [], None, config.timeout, compute=lambda: [analyze_here(c) for c in candidates])
    # Unreadable files and cache hits are settled here (reading and unpickling are bounded):
    # a warm scan sends nothing to a worker. A miss is read again by its worker.
    def cache_of(candidate: Candidate) -> Cache | None:
        return context_cache if id(candidate) in in_context else cache

    outcomes = [_readable_or_cached(c, cache_of(c), environment(c), known(c)) if cache_of(c) is not None else None
                for c in candidates]
    misses = [c for c, o in zip(candidates, outcomes) if o is None]
    if tick is not None:
        for _ in range(len(candidates) - len(misses)):  # read from the cache: done already
            tick()
    if not misses:
        return _Analysis(outcomes, candidates, None, config.timeout)
    count = 1 if len(misses) < PARALLEL_THRESHOLD else count
    if model is not None and any(c.language == CUDA for c in misses):  # (build files need no macro walk)
        model.walk_all()
    if model is not None:  # each worker reads its files' bytes again, rather than counting them all
        model.release_bytes()
    if count > 1:  # parsers and query walks are built once, here: forked workers share them
        queries.precompile()
    if len(misses) >= LARGE_SCAN:
        workers.release_freed_memory()
    if count > 1:  # largest first: a large file handed out last keeps one worker busy alone at the end
        misses.sort(key=_size_of, reverse=True)
    return _Analysis(outcomes, candidates, workers.start(analyze, misses, count, config.timeout, tick), config.timeout,
                     given=misses)


def _size_of(candidate: Candidate) -> int:
    if candidate.content is not None:
        return len(candidate.content)
    try:
        return os.stat(candidate.absolute).st_size
    except OSError:
        return 0  # (read and reported by its worker)


def _readable_or_cached(candidate: Candidate, cache: Cache, environment: FileEnvironment | None,
                        data: bytes | None = None):
    """A Problem, the cached outcome, or None when the file has to be analysed."""
    source = read_source(candidate, data)
    if isinstance(source, Problem):
        return source
    source.build = environment
    return _cached(cache, cache.key(source, environment), source)


def _cached(cache: Cache, key: str, source: SourceFile):
    """The file's cached outcome, or None. One written from another working directory has its
    paths moved (`shown_paths.loads_written_from`); a path shown otherwise now (through a link, or
    `..`) is a miss."""
    hit = cache.get(key, FILE)
    return hit if hit is not None and getattr(hit[0], "path", None) == source.path else None


def _in_workers(count: int, timeout: float) -> bool:
    """Whether work runs in forked workers: for a budget, or for parallelism."""
    return workers.can_fork() and (count > 1 or timeout > 0)


def _too_slow(timeout: float) -> str:
    return f"skipped after {timeout:g} s: analysis too slow; please report"


def _file_outcome(candidate: Candidate, outcome, timeout: float):
    if outcome is workers.TIMED_OUT:
        return Problem(display_path(candidate.path), _too_slow(timeout), timed_out=True)
    if isinstance(outcome, workers.Crashed):
        return Problem(display_path(candidate.path), f"internal error: {outcome.reason}", True)
    return outcome


def _run_project_rules(index: ProjectIndex, codes, timeout: float, problems: list[Problem],
                       loaders: list[_FactsLoader] = ()) -> list[Finding]:
    """Each project rule under the same budget as a file, in one forked worker.

    A SIGALRM in the main process would not stop a regex or a tree-sitter query (C code that
    checks no signals), so project rules are stopped the way files are: by killing their
    worker. The rules run one after another in it, sharing the deferred facts it loaded; a
    rule past the budget costs a fresh worker, which loads them again. What a worker
    computes on the side (the ROCm-path model of a deferred file) stays in it: the central
    filters below compute it again for the files a finding is in. The facts of deferred
    files it collected (`loaders`) come back with each rule's findings: the states keep them,
    so that the next scan, taking unchanged files' states from its snapshot, finds them
    collected (a warm scan that parsed them again walked the whole project's macros).
    """
    checks = [(code, check) for code in codes if (check := REGISTRY[code].get(PROJECT)) is not None]

    def run_rule(item) -> tuple[list[Finding], list] | Problem:
        code, check = item
        before = [loader.loaded for loader in loaders]
        try:
            found = [replace(f, code=code) for f in check(index)]
        except Exception as exc:  # noqa: BLE001 - reported, never a traceback
            return Problem("<project>", f"internal error in {code}: {type(exc).__name__}: {exc}", True)
        return found, [(i, loader.state.facts) for i, loader in enumerate(loaders) if loader.loaded and not before[i]]

    if checks and _in_workers(1, timeout):
        outcomes = workers.run(run_rule, checks, 1, timeout)
    else:
        outcomes = [run_rule(item) for item in checks]
    findings: list[Finding] = []
    for (code, _), outcome in zip(checks, outcomes):
        if outcome is workers.TIMED_OUT:
            problems.append(Problem("<project>", f"rule {code} {_too_slow(timeout)}", timed_out=True))
        elif isinstance(outcome, workers.Crashed):
            problems.append(Problem("<project>", f"internal error in {code}: {outcome.reason}", True))
        elif isinstance(outcome, Problem):
            problems.append(outcome)
        else:
            found, loaded = outcome
            findings.extend(found)
            for i, facts in loaded:  # (the same objects already, when the rules ran here)
                loaders[i].state.facts, loaders[i].loaded = facts, True
    return findings


def read_source(candidate: Candidate, data: bytes | None = None) -> SourceFile | Problem:
    """The file as checks see it, or the Problem that skips it. `data`: its bytes as this
    scan already read them (the build model's walk reads the C-family files)."""
    path = candidate.path
    shown = display_path(path)
    try:
        if candidate.content is not None:  # standard input
            data = candidate.content
        elif data is None:
            data = read_regular(path, MAX_FILE_BYTES)
    except NotReadable as exc:
        return Problem(shown, f"skipped: {exc}")
    except OSError as exc:
        return Problem(shown, f"skipped: cannot read: {exc.strerror or exc}")
    if b"\0" in data[:8192]:
        return Problem(shown, "skipped: binary file")
    original, note = data, ""
    try:
        if not data.isascii():  # ASCII is valid UTF-8: most sources need no decoding here
            data.decode("utf-8")
    except UnicodeDecodeError as exc:
        data, note = _stray_bytes_replaced(data, exc.start)
        if data is None:
            return Problem(shown, f"skipped: not UTF-8 text ({note})")
    absolute = candidate.resolved if candidate.resolved is not None else path.resolve()
    build_script = candidate.build_script or (candidate.language == PYTHON and python_build.is_build_helper(data))
    source = SourceFile(shown, candidate.language, data, absolute, build_script=build_script)
    if note:  # the file as it is on disk, which fixes are applied to
        source.digest = hashlib.sha256(original).hexdigest()
        source.decoding_note = note
    return source


# A file in another encoding has many bytes that are not UTF-8; a UTF-8 file with a name or a
# symbol in Latin-1 in a comment (an old header) has a few: up to 16, or 1% of a large file.
MAX_STRAY_BYTES = (16, 0.01)


def _stray_bytes_replaced(data: bytes, first: int) -> tuple[bytes | None, str]:
    """`data` with each byte that is not UTF-8 read as `?` (one byte for one: offsets, and so
    locations and fixes, stay those of the file), and the note that says so; (None, why) when
    there are too many for the file to be UTF-8 text."""
    text = data.decode("utf-8", "surrogateescape")  # a stray byte becomes one lone surrogate
    stray = sum(1 for ch in text if "\udc80" <= ch <= "\udcff")
    line = data.count(b"\n", 0, first) + 1
    where = f"the first, {data[first]:#04x}, on line {line}"
    if stray > max(MAX_STRAY_BYTES[0], len(data) * MAX_STRAY_BYTES[1]):
        return None, f"{stray} bytes that are not UTF-8, {where}"
    replaced = _SURROGATES.sub("?", text).encode("utf-8")
    return replaced, f"{stray} byte{'s' if stray != 1 else ''} not UTF-8 read as `?` ({where})"


_SURROGATES = re.compile("[\udc80-\udcff]")


def analyze_file(candidate: Candidate, config: Config, codes: tuple[str, ...], cache: Cache | None = None,
                 environment: FileEnvironment | None = None, facts_only: bool = False, data: bytes | None = None):
    """One file: (FileState, problems) or a Problem if it could not be read at all.

    `environment`: the macros the builds define where the file stands (from the build model);
    the file's result is cached under it, so editing a header re-checks its includers.
    `facts_only`: a context file, read for the project rules of `codes` and never reported:
    only its project facts are collected. `data`: its bytes, if this scan read them already."""
    source = read_source(candidate, data)
    if isinstance(source, Problem):
        return source
    source.build = environment
    key = cache.key(source, environment) if cache is not None else ""
    if cache is not None and (hit := _cached(cache, key, source)) is not None:
        return hit
    problems: list[Problem] = [Problem(source.path, source.decoding_note, note=True)] if source.decoding_note else []
    try:
        outcome = _analyze_source(source, config, codes, problems, facts_only), problems
        if cache is not None:
            cache.put(key, outcome, FILE)
        return outcome
    except SyntaxError as exc:
        return Problem(source.path, f"skipped: Python syntax error at line {exc.lineno}: {exc.msg}")
    except RecursionError:
        return Problem(source.path, "skipped: nesting too deep to analyse")
    finally:  # what the checks kept on the file refers back to it: freed now, not by the collector
        source.memo.clear()


@functools.cache
def _checks_for(codes: tuple[str, ...], keys: tuple[str, ...]) -> tuple[bool, tuple]:
    """(whether project facts are wanted, ((code, check, trigger), ...)) for enabled `codes`
    on files of registry `keys`: the same for every file of a kind, so worked out once."""
    wants_facts = any(PROJECT in REGISTRY[c] or c in _JUDGED_BY_OTHER_FILES for c in codes)
    checks = tuple((code, check, needs_of(check)) for code in codes for key in keys
                   if (check := REGISTRY[code].get(key)) is not None)
    return wants_facts, checks


def _analyze_source(source: SourceFile, config: Config, codes, problems: list[Problem],
                    facts_only: bool = False) -> FileState:
    wants_facts, triggered = _checks_for(tuple(codes), source.check_keys)
    if facts_only:
        if not (wants_facts and project_facts.needs_parse(source, Probe(source.data))):
            return _unparsed(source, wants_facts)
        model = source.rocm_path = rocm_path.build(source, config.rocm_macros)
        return _state(source, [], model, project_facts.collect(source, model))
    if PREFILTER:
        probe = Probe(source.data)
        checks = [(code, check) for code, check, trigger in triggered
                  if trigger.holds(probe) and applies_to(check, source)]
        kernels_inside = source.language == PYTHON and embedded.has_kernels(source.data)
        if not checks and not (wants_facts and project_facts.needs_parse(source, probe)) and not kernels_inside:
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
    findings = _run_checks(source, checks, problems)
    if source.language == PYTHON and embedded.has_kernels(source.data):
        findings += _embedded_findings(source, config, codes, problems)
    return _state(source, findings, model, project_facts.collect(source, model) if wants_facts else FileFacts())


def _state(source: SourceFile, findings: list[Finding], model, facts: FileFacts) -> FileState:
    off_rocm = ()
    # (in C-family files only the findings the project pass may drop there are worth the walk)
    droppable = [f for f in findings if f.location and (source.language != CUDA or f.code in _runtime_codes())]
    if source.language in (PYTHON, CMAKE, CUDA) and droppable:
        off_rocm = tuple(span for span in rocm_path.functions_called_only_off_rocm(source, model.status)
                         if any(span[0] <= f.location.start_byte < span[1] for f in droppable))
    lone = ()
    if source.language == CUDA:  # (only for the findings the project pass may make notes)
        reported = [f.location.start_byte for f in findings if f.location is not None and _moot_unrun(f)
                    and (f.severity or load_all()[f.code].severity) is not Severity.NOTE]
        lone = tuple(cpp.lone_templates(source, reported)) if reported else ()
    gates = ()
    if source.language == CUDA and findings:
        starts = sorted(f.location.start_byte for f in findings if f.location)
        gates = tuple(gate for gate in macros.switch_gates(source.data) if _any_between(starts, gate[0], gate[1]))
    return FileState(
        path=source.path,
        absolute=str(source.absolute_path),
        language=source.language,
        digest=source.digest,
        findings=findings,
        ranges=model.ranges,
        suppressions=suppress.parse(source),
        facts=facts,
        off_rocm_functions=off_rocm,
        words=_words_of(source),
        switch_gates=gates,
        lone_templates=lone,
    )


def _words_of(source: SourceFile) -> WordFilter | None:
    if source.language not in (CUDA, PYTHON, CMAKE) or len(source.data) > _MAX_FILTERED_BYTES:
        return None  # (a huge file is read when asked: its filter would cost more than the read)
    return WordFilter(source.data, lower=source.language == CMAKE)


_MAX_FILTERED_BYTES = 4 * 1024 * 1024


def _run_checks(source: SourceFile, checks, problems: list[Problem]) -> list[Finding]:
    findings: list[Finding] = []
    for code, check in checks:
        try:
            findings.extend(replace(f, code=code) for f in check(source))
        except Exception as exc:  # noqa: BLE001 - one rule's bug must not stop the scan
            problems.append(Problem(source.path, f"internal error in {code}: {type(exc).__name__}: {exc}", True))
    return findings


def _embedded_findings(host: SourceFile, config: Config, codes, problems: list[Problem]) -> list[Finding]:
    """The CUDA rules on each kernel string of a Python file, mapped back into the file; the
    string's own dead code (`#ifndef __HIPCC__` arms) is dropped here, by its own model."""
    _, triggered = _checks_for(tuple(codes), (CUDA,))
    checks = [(code, check) for code, check, _ in triggered]
    docs = load_all()
    out = []
    for kernel in embedded.distinct(embedded.kernels(host)):
        source = kernel.source(host)
        source.rocm_path = model = rocm_path.build(source, config.rocm_macros)
        for f in _run_checks(source, checks, problems):
            status = model.status(f.location.start_byte)
            if status is Status.DEAD or (status is Status.PORT and docs[f.code].scope == "live"):
                continue
            out.append(embedded.remap(host, kernel, source, f))
    return out


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
        facts=project_facts.deferred(source) if wants_facts else FileFacts(),
        words=_words_of(source),
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
