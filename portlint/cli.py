"""The `portlint` command."""

from __future__ import annotations

import difflib
import os
import shutil
import sys
from pathlib import Path

import click

from portlint import __version__, baseline, engine
from portlint.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from portlint.config import Config, ConfigError, find_config_file, load, parse_severity, validate_selectors
from portlint.finding import Severity
from portlint.fix import NotFixed, plan_fixes, write_atomically, write_plan
from portlint.report import FORMATS, ReportContext, render
from portlint.ruledocs import RuleDocError, load_all

MAX_FIX_PASSES = 10


class Failure(click.ClickException):
    """A usage, configuration or internal error: one line, exit code 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"portlint: error: {self.format_message()}", err=True)


def _selectors(values: tuple[str, ...]) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(s.strip() for v in values for s in v.split(",") if s.strip())


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # Ctrl-C: one line, the shell's code for SIGINT (click would exit 1)
            click.echo("portlint: interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="portlint")
def main() -> None:
    """Find CUDA → ROCm/HIP port hazards, with suggested rewrites."""


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
)
_selection_options = _options(
    click.option("--select", multiple=True, help="Rules to run: codes, families (W) or ALL; comma-separated."),
    click.option("--extend-select", multiple=True, help="Rules to add to the selection."),
    click.option("--ignore", multiple=True, help="Rules to leave out."),
)
_failure_options = _options(
    click.option("--fail-on", type=click.Choice([s.value for s in Severity]),
                 help="Lowest severity that makes the exit code 1 [default: note]."),
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
                 help="Stop a file's analysis (or a project rule) after SECONDS; 0: no limit [default: 10]."),
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
@click.option("--deep/--no-deep", default=None,
              help="Also parse translation units with libclang (macros, types, symbols) [default: 'deep' in config].")
@click.option("--compile-commands", type=click.Path(path_type=Path),
              help="compile_commands.json (or its directory) for --deep [default: in the project root or build/].")
def scan(paths, output_format, output, select, extend_select, ignore, fail_on, exit_zero, fix,
         unsafe_fixes, diff, config_path, statistics, baseline_path, write_baseline_path, no_cache, cache_dir,
         jobs, timeout, deep, compile_commands) -> None:
    """Scan PATHS (default: the current directory) for port hazards."""
    paths = list(paths) or [Path(".")]
    config = _load_config(config_path, paths[0], select, extend_select, ignore, fail_on)
    if compile_commands is not None and not compile_commands.exists():
        raise Failure(f"--compile-commands: {compile_commands}: no such file or directory")
    config = config.with_overrides(deep=deep, compile_commands=compile_commands, timeout=timeout)
    cache = None if no_cache else (cache_dir or config.root / DEFAULT_CACHE_DIR)
    try:
        if diff:
            sys.exit(_show_diff(paths, config, jobs, unsafe_fixes, cache))
        fixed, not_fixed = 0, []
        if fix:
            result, fixed, not_fixed = run_fix_passes(paths, config, jobs, unsafe_fixes, cache)
            for line in not_fixed:
                click.echo(f"portlint: {line}", err=True)
        else:
            result = engine.scan(paths, config, jobs, cache)
    except (ConfigError, RuleDocError) as exc:
        raise Failure(str(exc)) from None
    _echo_problems(result)
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
    context = ReportContext(root=config.root, fixed=fixed, not_fixed=frozenset(n.path for n in not_fixed),
                            statistics=statistics,
                            color=output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    text = render(output_format, result, context)
    if output is not None:
        _write_report(output, text)
    else:
        click.echo(text, nl=False)
    # An incomplete scan, or a fix that could not be written, is an error (like ruff's).
    if result.has_internal_error or ((result.timed_out or any(n.failed for n in not_fixed)) and not exit_zero):
        sys.exit(2)
    failing = [f for f in result.findings if f.severity.rank >= config.fail_on.rank]
    sys.exit(1 if failing and not exit_zero else 0)


def _echo_problems(result) -> None:
    """Files that could not be fully read, then notes (what deep mode used, how long it took)."""
    for line in (*result.problems, *result.notes):
        click.echo(f"portlint: {line}", err=True)


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


def run_fix_passes(paths, config: Config, jobs: int, unsafe: bool, cache: Path | None = None):
    """Scan, apply fixes, and scan again until nothing changes (fixes may overlap).

    Returns the last scan, how many fixes were written, and the files left alone (NotFixed,
    one each). Every file is tried; one that could not be fixed is left alone for the rest
    of the run.
    """
    applied_total = 0
    not_fixed: dict[str, NotFixed] = {}
    for _ in range(MAX_FIX_PASSES):
        result = engine.scan(paths, config, jobs, cache)
        plans, refused = plan_fixes([f for f in result.findings if f.path not in not_fixed], result.files, unsafe)
        not_fixed.update((r.path, r) for r in refused)
        if not plans:
            return result, applied_total, list(not_fixed.values())
        for plan in plans:
            problem = write_plan(plan, config.root)
            if problem is None:
                applied_total += plan.applied
            else:
                not_fixed[plan.path] = problem
    return engine.scan(paths, config, jobs, cache), applied_total, list(not_fixed.values())


def _show_diff(paths, config: Config, jobs: int, unsafe: bool, cache: Path | None) -> int:
    result = engine.scan(paths, config, jobs, cache)
    _echo_problems(result)
    plans, refused = plan_fixes(result.findings, result.files, unsafe)
    for line in refused:
        click.echo(f"portlint: {line}", err=True)
    for plan in plans:
        diff = difflib.unified_diff(
            plan.before.decode("utf-8").splitlines(keepends=True),
            plan.after.decode("utf-8").splitlines(keepends=True),
            fromfile=f"a/{plan.path}", tofile=f"b/{plan.path}",
        )
        click.echo("".join(diff), nl=False)
    count = sum(p.applied for p in plans)
    click.echo(f"Would fix {count} finding{'s' if count != 1 else ''}.", err=True)
    return 2 if result.has_internal_error or result.timed_out else (1 if plans else 0)


def _write_baseline(path: Path, result, config: Config) -> None:
    try:
        baseline.write(path, result.findings, result.files, config.root)
    except OSError as exc:
        raise Failure(f"{path}: cannot write the baseline: {exc.strerror}") from None


def _write_report(path: Path, text: str) -> None:
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        write_atomically(path, text.encode("utf-8"))
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
    config = _load_config(config_path, paths[0], select, extend_select, ignore, None).with_overrides(timeout=timeout)
    cache = None if no_cache else (cache_dir or config.root / DEFAULT_CACHE_DIR)
    try:
        result = engine.scan(paths, config, jobs, cache)
    except (ConfigError, RuleDocError) as exc:
        raise Failure(str(exc)) from None
    _echo_problems(result)
    _write_report(output, html_report.render(result, ReportContext(root=config.root)))
    click.echo(f"Wrote the port-readiness report ({len(result.findings)} findings in {len(result.files)} files) "
               f"to {output}.")
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


def _docs():
    try:
        return load_all()
    except RuleDocError as exc:
        raise Failure(str(exc)) from None


@main.command("doctor")
@click.argument("project", required=False, default=".", type=click.Path(path_type=Path))
@_format_and_exit_options
@_selection_options
@_failure_options
@_config_option
@click.option("--python", "python", metavar="EXE",
              help="Python whose packages are checked [default: python3 on PATH].")
def doctor_command(project, output_format, output, select, extend_select, ignore, fail_on, exit_zero,
                   config_path, python) -> None:
    """Check the machine that builds PROJECT (default: .) for ROCm: GPU targets, toolchain, packages, stale builds."""
    from portlint import doctor

    if not project.is_dir():
        raise Failure(f"{project}: not a directory")
    if python is not None and shutil.which(python) is None:
        raise Failure(f"--python: {python}: no such executable")
    config = _load_config(config_path, project, select, extend_select, ignore, fail_on)
    result = doctor.run(doctor.Environment.current(project.resolve(), python), config)
    for problem in result.problems:
        click.echo(f"portlint: {problem}", err=True)
    if output_format == "github":  # annotations carry findings only: say what was not checked here
        for line in result.skipped:
            click.echo(f"portlint: {line}", err=True)
    context = ReportContext(root=config.root,
                            color=output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    text = render(output_format, result, context)
    if output is not None:
        _write_report(output, text)
    else:
        click.echo(text, nl=False)
    if result.has_internal_error:
        sys.exit(2)
    failing = [f for f in result.findings if f.severity.rank >= config.fail_on.rank]
    sys.exit(1 if failing and not exit_zero else 0)
