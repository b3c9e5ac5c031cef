"""The `portlint` command."""

from __future__ import annotations

import gc

# Importing the rules makes some 40,000 objects that live to the end (functions, dataclasses,
# compiled patterns): collecting while they are made frees nothing and cost a tenth of the
# start-up, so the collector waits for the imports.
_COLLECTING = gc.isenabled()
gc.disable()

import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import click  # noqa: E402

from portlint import __version__, baseline, engine, workers  # noqa: E402
from portlint.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR  # noqa: E402
from portlint.config import (Config, ConfigError, find_config_file, load, parse_severity, repository_root,  # noqa: E402
                             validate_selectors, validate_targets)
from portlint.config import cache_root  # noqa: E402
from portlint.discover import stdin_candidate  # noqa: E402
from portlint.fileio import write_output  # noqa: E402
from portlint.finding import Severity, group_root_causes  # noqa: E402
from portlint.fix import MAX_FIX_PASSES, plan_fixes, run_fix_passes  # noqa: E402
from portlint.report import FORMATS, ReportContext, render  # noqa: E402
from portlint.ruledocs import RuleDocError, load_all  # noqa: E402

if _COLLECTING:
    gc.enable()


class Failure(click.ClickException):
    """A usage, configuration or internal error: one line, exit code 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"portlint: error: {self.format_message()}", err=True)


def _selectors(values: tuple[str, ...]) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(s.strip() for v in values for s in v.split(",") if s.strip())


# A scan allocates millions of small objects that live to its end (facts, findings, cached
# results): at the default threshold (700 allocations) the collector traverses them again
# and again, 10-15% of a cold scan. Per-file structures are freed without it
# (`engine.analyze_file`), so collecting less often does not grow memory.
GC_THRESHOLDS = (200_000, 30, 30)


class _Group(click.Group):
    def invoke(self, ctx):
        gc.set_threshold(*GC_THRESHOLDS)
        try:
            os.getcwd()  # paths are shown, and cached results kept, relative to it
        except OSError as exc:
            raise Failure(f"the working directory is gone ({exc.strerror}): start portlint from one that exists")
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # Ctrl-C: one line, the shell's code for SIGINT (click would exit 1)
            click.echo("portlint: interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="portlint")
def main() -> None:
    """Find CUDA → ROCm/HIP port hazards, with suggested rewrites."""


def run() -> None:
    """The `portlint` program: `main`, then an exit without the interpreter's teardown.

    Freeing a scan's objects one by one at exit (facts, cached states, parse trees) took
    0.1 s of a one-file run, a fifth of the pre-commit case, and nothing needs them: every
    output file is written and closed by then (`fileio`), and the workers have ended (they
    are waited for here, so that none outlives the command). So the standard streams are
    flushed and the process ends with `os._exit`, with the exit code `sys.exit` would have
    given."""
    try:
        main()  # click's standalone mode: it always ends in SystemExit
        code = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # as the interpreter does for `sys.exit("message")`
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
    workers.reap_all()  # no worker outlives the command, not even as a defunct child
    os._exit(code)


def _options(*decorators):
    """Several click options as one decorator, so commands share them word for word."""

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


_format_and_exit_options = _options(
    click.option("--output-format", "--format", "output_format", type=click.Choice(FORMATS), default="text",
                 show_default=True, help="How findings are reported."),
    click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                 help="Write the report to FILE instead of standard output."),
    click.option("--sarif-root", type=click.Path(file_okay=False, path_type=Path),
                 help="SARIF: make URIs relative to DIR [default: the git top level, else the project root]."),
    click.option("--max-results", type=click.IntRange(min=0), default=5000, show_default=True,
                 help="SARIF: at most N results (the most severe); a notification counts the rest. 0: no cap."),
    click.option("--sarif-category", default="", metavar="ID",
                 help="SARIF: the run's automationDetails.id (code scanning's category), which tells runs "
                      "of one commit apart."),
)
_selection_options = _options(
    click.option("--select", multiple=True, help="Rules to run: codes, families (W) or ALL; comma-separated."),
    click.option("--extend-select", multiple=True, help="Rules to add to the selection."),
    click.option("--ignore", multiple=True, help="Rules to leave out."),
)
_failure_options = _options(
    click.option("--fail-on", type=click.Choice([s.value for s in Severity]),
                 help="Lowest severity that makes the exit code 1 [default: warning]."),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings."),
)
_config_option = click.option("--config", "config_path", type=click.Path(path_type=Path),
                              help="Configuration file (pyproject.toml or portlint.toml).")
_work_options = _options(
    click.option("--no-cache", is_flag=True, help="Analyse every file afresh; neither read nor write the cache."),
    click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
                 help=f"Where to keep the cache [default: {DEFAULT_CACHE_DIR} in the project root]."),
    click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Worker processes; 0 picks one per core for large scans."),
    click.option("--timeout", type=click.FloatRange(min=0), metavar="SECONDS",
                 help="Stop a file's analysis (or a project rule) after SECONDS of CPU time (or 3 times as "
                      "long waiting); 0: no limit [default: 10]."),
)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_format_and_exit_options
@_selection_options
@_failure_options
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, include unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@_config_option
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each finding.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Report only findings that are not in this baseline file.")
@click.option("--write-baseline", "write_baseline_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Save the current findings as a baseline file, then exit 0.")
@_work_options
@click.option("--stdin-filename", type=click.Path(dir_okay=False, path_type=Path),
              help="With PATH `-`: the name of the file standard input holds (its kind, its rules, its place).")
@click.option("--force-exclude", is_flag=True, default=None,
              help="Apply exclude/extend-exclude to files named on the command line too (pre-commit).")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no summary, no notes.")
@click.option("--group-root-causes/--no-group-root-causes", "group", default=True,
              help="One finding per root cause (rule, file, culprit); its other places become related locations, "
                   "every edit kept, and a note in each other file they are in [default: on]. Off: a finding per "
                   "place.")
@click.option("--deep/--no-deep", default=None,
              help="Also parse translation units with libclang (macros, types, symbols) [default: 'deep' in config].")
@click.option("--compile-commands", type=click.Path(path_type=Path),
              help="compile_commands.json (or its directory) for --deep [default: in the project root or build/].")
@click.option("--deep-timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="--deep: time budget per translation unit (CPU seconds, as --timeout); a unit past it is "
                   "skipped [default: 30].")
@click.option("--target", "target_names", multiple=True, metavar="GFX",
              help="AMD GPUs to check for (gfx90a, gfx942, gfx950, gfx1100; comma-separated) "
                   "[default: PYTORCH_ROCM_ARCH, else gfx90a,gfx942].")
@click.option("--show-not-built", is_flag=True,
              help="List the files no ROCm build compiles (read from the build files), with the reason.")
@click.option("--show-settings", is_flag=True,
              help="Print the settings used for the first file of PATHS (where they come from, every value), then exit.")
@click.option("--show-files", is_flag=True, help="Print the files a scan of PATHS reads, then exit.")
def scan(paths, output_format, output, sarif_root, max_results, sarif_category, select, extend_select, ignore, fail_on, exit_zero, fix,
         unsafe_fixes, diff, config_path, statistics, baseline_path, write_baseline_path, no_cache, cache_dir,
         jobs, timeout, stdin_filename, force_exclude, quiet, group, deep, compile_commands, deep_timeout,
         target_names, show_not_built, show_settings, show_files) -> None:
    """Scan PATHS (default: the current directory; `-` reads standard input) for port hazards."""
    paths = list(paths) or [Path(".")]
    stdin_data = _stdin(paths, stdin_filename)
    if stdin_data is not None:
        paths = [stdin_filename] if stdin_filename is not None and stdin_filename.exists() else []
    _check_paths_exist(paths)
    anchor = (stdin_filename or Path(".")) if stdin_data is not None else paths[0]
    config = _load_config(config_path, anchor, select, extend_select, ignore, fail_on)
    config = config.with_overrides(force_exclude=force_exclude)
    if compile_commands is not None and not compile_commands.exists():
        raise Failure(f"--compile-commands: {compile_commands}: no such file or directory")
    config = config.with_overrides(deep=deep, compile_commands=compile_commands, deep_timeout=deep_timeout,
                                   targets=_target_names(target_names), timeout=timeout)
    cache = None if no_cache else (cache_dir or cache_root(config, anchor) / DEFAULT_CACHE_DIR)
    stdin = None if stdin_data is None else stdin_candidate(stdin_data, stdin_filename, config)
    if show_files or show_settings:
        sys.exit(_show_scan_setup(paths, stdin, config, show_files, show_settings))
    try:
        if diff and stdin is None:
            sys.exit(_show_diff(paths, config, jobs, unsafe_fixes, cache, exit_zero))
        fixed, not_fixed = 0, []
        if (fix or diff) and stdin is not None:  # an editor's buffer: the fixed text goes to standard output
            result, fixed_text, fixed, not_fixed = _fix_stdin(stdin, paths, config, jobs, unsafe_fixes, cache)
            for line in not_fixed:
                click.echo(f"portlint: {line}", err=True)
            if diff:
                _echo_problems(result)
                click.echo(_report_bytes(_unified_diff(stdin.path.as_posix(), stdin_data, fixed_text)), nl=False)
                click.echo(f"Would fix {fixed} finding{'s' if fixed != 1 else ''}.", err=True)
                sys.exit(2 if result.has_internal_error or (result.timed_out and not exit_zero)
                         else (1 if fixed and not exit_zero else 0))
            click.echo(fixed_text, nl=False)
        elif fix:
            run = run_fix_passes(paths, config, jobs, unsafe_fixes, cache)
            result, fixed, not_fixed = run.result, run.applied, run.not_fixed
            for line in not_fixed:
                click.echo(f"portlint: {line}", err=True)
        else:
            with ScanProgress(enabled=not quiet and stdin is None) as progress:
                result = engine.scan(paths, config, jobs, cache, stdin=stdin, progress=progress)
    except (ConfigError, RuleDocError) as exc:
        raise Failure(str(exc)) from None
    # `--fix -` writes the fixed text to standard output: the report goes to standard error.
    report_stream_is_stderr = fix and stdin is not None
    _echo_problems(result, quiet)
    if show_not_built:  # on stdout beside a text report; machine formats keep stdout to themselves
        to_stderr = output is None and output_format != "text"
        for path, reason in sorted(result.not_built.items()):
            click.echo(f"{path}: not compiled for ROCm: {reason}", err=to_stderr)
    if write_baseline_path is not None:
        _write_baseline(write_baseline_path, result, config)
        click.echo(f"Wrote {len(result.findings)} finding(s) to the baseline {write_baseline_path}.")
        sys.exit(2 if result.has_internal_error or result.timed_out else 0)  # an incomplete baseline
    if baseline_path is not None:
        try:
            known = baseline.load(baseline_path)
        except baseline.BaselineError as exc:
            raise Failure(str(exc)) from None
        result.findings, result.baselined = baseline.split(result.findings, result.files, config.root, known)
    if group:  # after the baseline: it knows each place, so a new use of a known hazard is new
        result.findings = group_root_causes(result.findings)
    context = ReportContext(root=config.root, fixed=fixed, not_fixed=frozenset(n.path for n in not_fixed),
                            statistics=statistics, quiet=quiet,
                            color=use_color(output) and not report_stream_is_stderr,
                            uri_root=_uri_root(sarif_root, anchor, config), max_results=max_results,
                            sarif_category=sarif_category)
    text = render(output_format, result, context)
    if output is not None:
        _write_report(output, text)
    else:
        # click strips colour off a terminal otherwise
        click.echo(_report_bytes(text), nl=False, color=context.color, err=report_stream_is_stderr)
    if output_format == "sarif" and max_results and len(result.findings) > max_results:
        click.echo(f"portlint: SARIF: {len(result.findings) - max_results} of {len(result.findings)} results "
                   f"left out (--max-results {max_results}); the most severe are kept", err=True)
    # An incomplete scan, or a fix that could not be written, is an error (like ruff's).
    if result.has_internal_error or ((result.timed_out or any(n.failed for n in not_fixed)) and not exit_zero):
        sys.exit(2)
    failing = [f for f in result.findings if f.severity.rank >= config.fail_on.rank]
    sys.exit(1 if failing and not exit_zero else 0)


def _show_scan_setup(paths: list[Path], stdin, config: Config, files: bool, settings: bool) -> int:
    """`--show-files` (the files a scan reads, sorted, one a line) and `--show-settings` (the
    configuration of the first of them, each setting as the configuration file spells it)."""
    from portlint.discover import discover

    candidates, _ = discover(paths, config)
    if stdin is not None:
        candidates = [c for c in candidates if c.resolved != stdin.resolved] + [stdin]
    shown = sorted((engine.display_path(c.path), c) for c in candidates)
    if files:
        for path, _ in shown:
            click.echo(_report_bytes(path + "\n"), nl=False)
    if settings:
        if not shown:
            raise Failure("--show-settings: no file to show the settings of (none of a kind portlint reads)")
        path, first = shown[0] if stdin is None else (engine.display_path(stdin.path), stdin)
        click.echo(_report_bytes(_settings_text(path, first, config)), nl=False)
    return 0


def _settings_text(path: str, candidate, config: Config) -> str:
    import dataclasses
    import json

    import pathspec

    def value(v) -> str:
        if isinstance(v, Severity):
            return json.dumps(v.value)
        if isinstance(v, Path):
            return json.dumps(str(v))
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
        if isinstance(v, (tuple, list, frozenset)):
            return json.dumps(sorted(v) if isinstance(v, frozenset) else list(v))
        return json.dumps(v)

    from portlint.registry import REGISTRY

    enabled = tuple(c for c in config.enabled_codes() if c in REGISTRY)  # D-codes are `doctor`'s
    relative = (candidate.resolved or candidate.path.resolve()).relative_to(config.root.resolve()).as_posix() \
        if (candidate.resolved or candidate.path.resolve()).is_relative_to(config.root.resolve()) else None
    ignored_here = sorted({selector for glob, selectors in config.per_file_ignores.items() if relative is not None
                           and pathspec.GitIgnoreSpec.from_lines([glob]).match_file(relative)
                           for selector in selectors})
    lines = [f"Resolved settings for: {path}",
             f"Settings path: {config.source if config.source is not None else '(none: the defaults)'}",
             f"File kind: {candidate.language}{' (build script)' if candidate.build_script else ''}",
             ""]
    lines += [f"{f.name.replace('_', '-')} = {value(getattr(config, f.name))}" if getattr(config, f.name) is not None
              else f"# {f.name.replace('_', '-')}: not set" for f in dataclasses.fields(config) if f.name != "source"]
    lines += ["", f"# rules enabled: {len(enabled)}", f"enabled = {value(enabled)}",
              f"# per-file-ignores that match this file: {value(ignored_here)}"]
    return "\n".join(lines) + "\n"


class ScanProgress:
    """A progress bar on standard error (click's) for a scan that takes a while: shown only
    when standard error is a terminal, and only once files are still being analysed `delay`
    seconds after the scan began; a short scan, a pipe or a log file never sees one. It is
    erased when the scan ends, so the report follows as if it never was."""

    def __init__(self, enabled: bool = True, delay: float = 1.0, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.delay, self.started = delay, time.monotonic()
        self.bar, self.shown = None, 0

    def __enter__(self) -> "ScanProgress":
        return self

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if done >= total or time.monotonic() - self.started < self.delay:
                return
            self.bar = click.progressbar(length=total, label="Scanning", file=self.stream, show_pos=True,
                                         show_percent=False, show_eta=True)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def __exit__(self, *exc) -> None:
        if self.bar is not None:  # the bar's line erased, and the cursor click hid shown again
            self.stream.write("\r\033[2K\033[?25h")
            self.stream.flush()


def use_color(output: Path | None) -> bool:
    """Colour on a terminal, as https://no-color.org and https://force-color.org say: a
    non-empty NO_COLOR turns it off, a non-empty FORCE_COLOR on (even when piped)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return output is None
    return output is None and sys.stdout.isatty()


def _check_paths_exist(paths: list[Path]) -> None:
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise Failure(f"{path}: no such file or directory")


def _uri_root(sarif_root: Path | None, first_path: Path, config: Config) -> Path:
    """Where SARIF URIs start: code scanning resolves them against the repository root,
    whichever directory holds the configuration."""
    return (sarif_root or repository_root(first_path) or config.root).resolve()


def _echo_problems(result, quiet: bool = False) -> None:
    """Files that could not be fully read, then notes (files read with stray bytes as `?`, what
    deep mode used, how long it took; left out with --quiet)."""
    notes = () if quiet else (*(p for p in result.problems if p.note), *result.notes)
    for line in (*(p for p in result.problems if not p.note), *notes):
        click.echo(f"portlint: {line}", err=True)


def _target_names(values) -> tuple[str, ...] | None:
    names = tuple(n for v in values for n in v.split(",") if n.strip())
    if not names:
        return None
    try:
        return validate_targets(names, "--target")
    except ConfigError as exc:
        raise Failure(str(exc)) from None


def _stdin(paths: list[Path], stdin_filename: Path | None) -> bytes | None:
    """The bytes of standard input when PATHS is `-` (editors pipe an unsaved buffer)."""
    if Path("-") not in paths:
        if stdin_filename is not None:
            raise Failure("--stdin-filename goes with the path `-` (standard input)")
        return None
    if len(paths) > 1:
        raise Failure("`-` (standard input) cannot be combined with other paths")
    return sys.stdin.buffer.read()


def _load_config(config_path, first_path: Path, select, extend_select, ignore, fail_on) -> Config:
    try:
        if config_path is not None:
            config = load(config_path, first_path)
        else:
            config = load(find_config_file(first_path if first_path.exists() else Path(".")), first_path)
        overrides = {
            "select": _selectors(select),
            "extend_select": _selectors(extend_select),
            "ignore": _selectors(ignore),
        }
        for option, value in overrides.items():
            if value is not None:
                validate_selectors(value, f"--{option.replace('_', '-')}")
        if fail_on is not None:
            overrides["fail_on"] = parse_severity(fail_on, "--fail-on")
        if overrides["extend_select"] is not None:
            overrides["extend_select"] = config.extend_select + overrides["extend_select"]
        return config.with_overrides(**overrides)
    except (ConfigError, RuleDocError) as exc:
        raise Failure(str(exc)) from None


def _fix_stdin(stdin, paths, config: Config, jobs: int, unsafe: bool, cache: Path | None):
    """`--fix -` and `--diff -`: the passes of `--fix` over standard input's text, kept in
    memory (nothing is written, not even the file `--stdin-filename` names). Returns the last
    scan, the fixed bytes (the input's when nothing applies), the fixes applied and the
    fixes refused."""
    from dataclasses import replace

    applied, refused = 0, []
    for _ in range(MAX_FIX_PASSES):
        result = engine.scan(paths, config, jobs, cache, stdin=stdin)
        shown = next((path for path, state in result.files.items() if state.absolute == stdin.absolute), None)
        if shown is None:  # not read (binary, say): given back as it came
            break
        plans, refused = plan_fixes([f for f in result.findings if f.path == shown], result.files, unsafe,
                                    given={shown: stdin.content})
        if not plans:
            break
        stdin = replace(stdin, content=plans[0].after)
        applied += plans[0].applied
    else:
        result = engine.scan(paths, config, jobs, cache, stdin=stdin)
    return result, stdin.content, applied, refused


def _unified_diff(path: str, before: bytes, after: bytes) -> str:
    """A file's change as a unified diff that `patch` applies to the same bytes: lines end at
    `\\n` only (a form feed or a lone `\\r` is text), a last line without one is marked as
    `diff` marks it, and bytes that are not UTF-8 are kept (surrogate-escaped)."""
    import difflib  # only `--diff` needs it: every other run spares its import

    diff = difflib.unified_diff(_lines(before), _lines(after), fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)


def _show_diff(paths, config: Config, jobs: int, unsafe: bool, cache: Path | None, exit_zero: bool = False) -> int:
    """`--diff`: the passes of `--fix`, written in memory only, shown as one unified diff; the
    exit code as `scan`'s (1: something to fix, unless --exit-zero)."""
    run = run_fix_passes(paths, config, jobs, unsafe, cache, preview=True)
    _echo_problems(run.result)
    for line in run.not_fixed:
        click.echo(f"portlint: {line}", err=True)
    for path, (before, after) in sorted(run.changed.items()):
        click.echo(_report_bytes(_unified_diff(path, before, after)), nl=False)
    count = run.applied
    click.echo(f"Would fix {count} finding{'s' if count != 1 else ''}.", err=True)
    if run.result.has_internal_error or (run.result.timed_out and not exit_zero):
        return 2
    return 1 if run.changed and not exit_zero else 0


def _lines(data: bytes) -> list[str]:
    """Lines as `patch` counts them: ended by `\\n` only (a form feed or a lone `\\r` is text)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", data.decode("utf-8", "surrogateescape"))


def _write_baseline(path: Path, result, config: Config) -> None:
    try:
        baseline.write(path, result.findings, result.files, config.root)
    except OSError as exc:
        raise Failure(f"{path}: cannot write the baseline: {exc.strerror}") from None


def _report_bytes(text: str) -> bytes:
    """A report as bytes: a file name that is not UTF-8 (surrogate-escaped) keeps its bytes."""
    return text.encode("utf-8", "surrogateescape")


def _write_report(path: Path, text: str) -> None:
    try:
        write_output(path, _report_bytes(text))
    except OSError as exc:
        raise Failure(f"{path}: cannot write the report: {exc.strerror}") from None


@main.command("report")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("portlint-report.html"), show_default=True, help="Where to write the HTML page.")
@_selection_options
@_config_option
@_work_options
def report_command(paths, output, select, extend_select, ignore, config_path, no_cache, cache_dir, jobs,
                   timeout) -> None:
    """Write a port-readiness report of PATHS (default: .) as one self-contained HTML page.

    Exits 0 once the page is written, whatever it reports.
    """
    from portlint.report import html_report

    paths = list(paths) or [Path(".")]
    _check_paths_exist(paths)
    config = _load_config(config_path, paths[0], select, extend_select, ignore, None).with_overrides(timeout=timeout)
    cache = None if no_cache else (cache_dir or cache_root(config, paths[0]) / DEFAULT_CACHE_DIR)
    try:
        with ScanProgress() as progress:
            result = engine.scan(paths, config, jobs, cache, progress=progress)
    except (ConfigError, RuleDocError) as exc:
        raise Failure(str(exc)) from None
    _echo_problems(result)
    context = ReportContext(root=config.root, generated=_now(), commit=git_commit(config.root) or "",
                            configuration=_configuration_line(config))
    _write_report(output, html_report.render(result, context))
    findings, files = len(result.findings), len(result.files)
    click.echo(f"Wrote the port-readiness report ({findings} finding{'s' if findings != 1 else ''} in "
               f"{files} file{'s' if files != 1 else ''}) to {output}.")
    # like `scan`: a crashed rule or a file past the budget leaves the page incomplete
    sys.exit(2 if result.has_internal_error or result.timed_out else 0)


@main.command("rule")
@click.argument("code")
def rule_command(code: str) -> None:
    """Show the documentation of rule CODE (a code such as W001, or a rule name)."""
    docs = _docs()
    doc = docs.get(code.upper()) or next((d for d in docs.values() if code in (d.name, *d.aliases)), None)
    if doc is None:
        raise Failure(f"unknown rule {code!r}; `portlint rules` lists them")
    click.echo(f"# {doc.code} {doc.name}\n")
    click.echo(f"Severity: {doc.severity.value}   Fix: {doc.fix}   Precision: {doc.precision}   "
               f"Languages: {', '.join(doc.languages)}\n")
    click.echo(doc.body)


@main.command("rules")
@click.option("--output-format", "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule."""
    import json

    docs = _docs()
    if output_format == "json":
        rows = [
            {"code": d.code, "name": d.name, "severity": d.severity.value, "fix": d.fix,
             "languages": list(d.languages), "tags": list(d.tags), "precision": d.precision,
             "summary": d.summary}
            for d in docs.values()
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(d.name) for d in docs.values())
    for d in docs.values():
        click.echo(f"{d.code}  {d.name:<{width}}  {d.severity.value:<7}  {d.fix:<12}  {d.summary}")


@main.command("server")
def server_command() -> None:
    """Run the language server: diagnostics, fixes and rule docs in an editor (LSP over stdio)."""
    try:
        from portlint import server
    except ImportError as exc:  # pygls is an optional extra
        raise Failure(f"the language server needs pygls ({exc.name} is missing): "
                      "pip install 'portlint[server]'") from None
    server.serve()


def _docs():
    try:
        return load_all()
    except RuleDocError as exc:
        raise Failure(str(exc)) from None


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def git_commit(root: Path) -> str | None:
    """The commit checked out at the git top level above `root`, read from `.git` (no git
    binary needed): HEAD, a loose ref or packed-refs."""
    top = repository_root(root)
    if top is None:
        return None
    git = top / ".git"
    try:
        if git.is_file():  # a worktree or submodule: `gitdir: <path>`
            git = (top / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head[:12]
        ref = head.split(":", 1)[1].strip()
        common = git / "commondir"
        base = (git / common.read_text().strip()).resolve() if common.is_file() else git
        for directory in (git, base):
            if (directory / ref).is_file():
                return (directory / ref).read_text().strip()[:12] + f" ({ref.removeprefix('refs/heads/')})"
        for line in (base / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0][:12] + f" ({ref.removeprefix('refs/heads/')})"
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return None


def _configuration_line(config: Config) -> str:
    where = str(config.source) if config.source is not None else "no configuration file"
    parts = [where, f"select {','.join(config.select + config.extend_select)}"]
    if config.ignore:
        parts.append(f"ignore {','.join(config.ignore)}")
    if config.rocm_macros:
        parts.append(f"rocm-macros {','.join(sorted(config.rocm_macros))}")
    return "; ".join(parts)


def _check_doctor_selectors(values: tuple[str, ...], option: str) -> None:
    """`doctor --select W001` would check nothing: only D rules are the machine's."""
    from portlint.doctor import DOCTOR_CHECKS
    from portlint.suppress import selects

    docs = _docs()
    for selector in _selectors(values) or ():
        if selector != "ALL" and not any(selects(selector, code, docs[code].name) for code in DOCTOR_CHECKS):
            raise Failure(f"{option}: {selector!r} selects no doctor check (doctor runs D rules: "
                          f"{min(DOCTOR_CHECKS)}-{max(DOCTOR_CHECKS)})")


@main.command("doctor")
@click.argument("project", required=False, default=".", type=click.Path(path_type=Path))
@_format_and_exit_options
@_selection_options
@_failure_options
@_config_option
@click.option("--python", "python", metavar="EXE",
              help="Python whose packages are checked [default: python3 on PATH].")
def doctor_command(project, output_format, output, sarif_root, max_results, sarif_category, select, extend_select, ignore,
                   fail_on, exit_zero, config_path, python) -> None:
    """Check the machine that builds PROJECT (default: .) for ROCm: GPU targets, toolchain, packages, stale builds."""
    from portlint import doctor

    if not project.is_dir():
        raise Failure(f"{project}: not a directory")
    if python is not None and shutil.which(python) is None:
        raise Failure(f"--python: {python}: no such executable")
    _check_doctor_selectors(select, "--select")
    _check_doctor_selectors(extend_select, "--extend-select")
    config = _load_config(config_path, project, select, extend_select, ignore, fail_on)
    result = doctor.run(doctor.Environment.current(project.resolve(), python), config)
    for problem in result.problems:
        click.echo(f"portlint: {problem}", err=True)
    if output_format == "github":  # annotations carry findings only: say what was not checked here
        for line in result.skipped:
            click.echo(f"portlint: {line}", err=True)
    context = ReportContext(root=config.root,
                            color=use_color(output),
                            uri_root=_uri_root(sarif_root, project, config), max_results=max_results,
                            sarif_category=sarif_category,
                            doctor=True)
    text = render(output_format, result, context)
    if output is not None:
        _write_report(output, text)
    else:
        click.echo(_report_bytes(text), nl=False, color=context.color)
    if result.has_internal_error:
        sys.exit(2)
    failing = [f for f in result.findings if f.severity.rank >= config.fail_on.rank]
    sys.exit(1 if failing and not exit_zero else 0)
