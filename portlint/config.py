"""Configuration: `[tool.portlint]` in pyproject.toml or the top level of portlint.toml.

Found upward from the first scanned path; `--config FILE` names one directly. Command-line
options override file values. Any problem is a `ConfigError` with a one-line message.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

import pathspec

from portlint import targets
from portlint.finding import Severity
from portlint.ruledocs import load_all

KEYS = {
    "select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores",
    "rocm-macros", "fail-on", "severity", "respect-gitignore", "force-exclude", "build-scripts", "extend-build-scripts",
    "deep", "deep-flags", "deep-timeout", "compile-commands", "targets", "timeout",
}
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", "build", "dist",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".portlint_cache", "*.egg-info",
)
MAX_CONFIG_BYTES = 8 * 1024 * 1024


class ConfigError(Exception):
    pass


@dataclass(unsafe_hash=True)
class Config:
    root: Path  # directory the config lives in (or the scan root): anchors relative paths
    source: Path | None = None  # the file it came from
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    rocm_macros: frozenset[str] = frozenset()
    # gitignore-style patterns of Python files that build extensions (setup.py rules run on them)
    build_scripts: tuple[str, ...] = ("setup.py",)
    # Notes are advice (tuning choices a finished port keeps): they fail a run only when asked.
    fail_on: Severity = Severity.WARNING
    severity: dict[str, Severity] = field(default_factory=dict)
    respect_gitignore: bool = True
    # Apply `exclude`/`extend-exclude` to files named on the command line too (pre-commit).
    force_exclude: bool = False
    # Deep mode (libclang): on or off, flags for projects without a compile_commands.json,
    # and where that file is when it is not in the root or `build/`.
    deep: bool = False
    deep_flags: tuple[str, ...] = ()
    compile_commands: Path | None = None
    timeout: float = 10.0  # seconds a file's analysis (or a project rule) may take; 0: no limit
    deep_timeout: float = 30.0  # seconds per translation unit; past it the unit's worker is killed
    # AMD GPUs built for (`gfx942`); () = PYTORCH_ROCM_ARCH, else portlint.targets.DEFAULT.
    targets: tuple[str, ...] = ()

    def enabled_codes(self) -> tuple[str, ...]:
        """Rule codes selected and not ignored; a more specific selector wins (ruff's rule)."""
        codes = load_all()
        enabled = []
        for code in codes:
            chosen = _best_match(code, self.select + self.extend_select)
            dropped = _best_match(code, self.ignore)
            if chosen > dropped:  # on a tie, ignore wins
                enabled.append(code)
        return tuple(enabled)

    def with_overrides(self, **overrides) -> "Config":
        values = {k: v for k, v in overrides.items() if v is not None}
        return replace(self, **values)


def _best_match(code: str, selectors: tuple[str, ...]) -> int:
    """How specifically `selectors` name `code`: 3 exact/name, 2 family prefix, 1 ALL, 0 not."""
    best = 0
    doc = load_all()[code]
    for sel in selectors:
        if sel == code or sel == doc.name or sel in doc.aliases:
            best = max(best, 3)
        elif code.startswith(sel) and sel != code:
            best = max(best, 2)
        elif sel == "ALL":
            best = max(best, 1)
    return best


def validate_selectors(selectors: tuple[str, ...], what: str) -> None:
    docs = load_all()
    known = {"ALL"} | set(docs) | {d.name for d in docs.values()}
    known |= {a for d in docs.values() for a in d.aliases}
    known |= {c[:i] for c in docs for i in range(1, 4)}
    for sel in selectors:
        if sel not in known:
            raise ConfigError(f"{what}: unknown rule selector {sel!r} (use a code such as W001, a family such as W, or ALL)")


def find_config_file(start: Path) -> Path | None:
    """The nearest portlint.toml, or pyproject.toml with [tool.portlint], at or above `start`."""
    start = Path(os.path.realpath(start))  # unlike resolve(), no error on a symlink loop
    directory = start if start.is_dir() else start.parent
    for d in (directory, *directory.parents):
        candidate = d / "portlint.toml"
        if candidate.is_file():
            return candidate
        candidate = d / "pyproject.toml"
        if candidate.is_file() and _has_portlint_table(candidate):
            return candidate
    return None


def _has_portlint_table(path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    try:
        tool = tomllib.loads(data.decode("utf-8", "replace")).get("tool", {})
        return isinstance(tool, dict) and "portlint" in tool
    except tomllib.TOMLDecodeError:
        # A broken pyproject.toml is ours to report only if it means to configure us.
        return b"tool.portlint" in data


def load(path: Path | None, scan_root: Path) -> Config:
    """Read `path` (or return defaults rooted at `scan_root` when there is none)."""
    if path is None:
        return Config(root=_project_root(scan_root))
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)  # bounded: `--config /dev/zero` never ends
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: config file larger than {MAX_CONFIG_BYTES // 1024 // 1024} MiB")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = data
    if path.name == "pyproject.toml":
        if not isinstance(tool := data.get("tool", {}), dict):
            raise ConfigError(f"{path}: 'tool' must be a table")
        table = tool.get("portlint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.portlint] must be a table")
    return from_table(table, path)


def repository_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a git top level), if any."""
    start = Path(os.path.realpath(start))  # unlike resolve(), no error on a symlink loop
    directory = start if start.is_dir() else start.parent
    for d in (directory, *directory.parents):
        if (d / ".git").exists():
            return d
    return None


# What marks a project's root: a git top level, a Python project, a portlint configuration.
PROJECT_MARKERS = (".git", "pyproject.toml", "portlint.toml")


def nearest_project(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a `PROJECT_MARKERS` entry, if any."""
    start = Path(os.path.realpath(start))
    directory = start if start.is_dir() else start.parent
    for d in (directory, *directory.parents):
        if any((d / marker).exists() for marker in PROJECT_MARKERS):
            return d
    return None


def _project_root(start: Path) -> Path:
    """A scanned path's own project, whatever the working directory: a file named in one of
    several projects side by side is read with its project's files only. With no project
    marker above it: the working directory where the path lies in it, else the folder the
    path is named in (a scan of `~/src/kernels` from `~` reads that folder's build files,
    not the home directory's; a link stands where it is named, not where it points)."""
    found = nearest_project(start)
    if found is not None:
        return found
    cwd = Path.cwd().resolve()
    given = Path(os.path.abspath(start))  # a link named here stands where it is named, not where it points
    directory = Path(os.path.realpath(given if given.is_dir() else given.parent))
    if not directory.is_dir() or directory == cwd or cwd in directory.parents:
        return cwd  # (a path that is not there: standard input's `--stdin-filename`)
    return directory


def cache_root(config: Config, first_path: Path) -> Path:
    """The project root, where the cache belongs: the config file's directory when it holds
    the first scanned path; for a config from elsewhere (`--config /dev/null`, a shared
    file), the nearest directory at or above that path with `.git`, `pyproject.toml` or
    `portlint.toml`, else the path's own directory."""
    start = Path(os.path.realpath(first_path))
    directory = start if start.is_dir() else start.parent
    if config.source is None or directory == config.root or config.root in directory.parents:
        return config.root
    return nearest_project(directory) or directory


def from_table(table: dict, path: Path) -> Config:
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})")

    def strings(key: str) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: '{key}' must be a list of strings")
        return tuple(value)

    def patterns(key: str) -> tuple[str, ...] | None:
        values = strings(key)
        _check_patterns(values or (), f"{path}: '{key}'")
        return values

    values: dict = {}
    for key in ("select", "extend-select", "ignore"):
        selectors = strings(key)
        if selectors is not None:
            validate_selectors(selectors, f"{path}: '{key}'")
            values[key.replace("-", "_")] = selectors
    for key in ("exclude", "extend-exclude"):
        excludes = patterns(key)
        if excludes is not None:
            values[key.replace("-", "_")] = excludes
    scripts = patterns("build-scripts")
    if scripts is not None:
        values["build_scripts"] = scripts
    extra_scripts = patterns("extend-build-scripts")
    if extra_scripts is not None:
        values["build_scripts"] = values.get("build_scripts", Config.build_scripts) + extra_scripts
    macros = strings("rocm-macros")
    if macros is not None:
        values["rocm_macros"] = frozenset(macros)
    names = strings("targets")
    if names is not None:
        values["targets"] = validate_targets(names, f"{path}: 'targets'")
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{path}: 'per-file-ignores' must be a table of glob = [codes]")
        parsed = {}
        for glob, codes in pfi.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{path}: 'per-file-ignores.{glob}' must be a list of codes")
            validate_selectors(tuple(codes), f"{path}: 'per-file-ignores.{glob}'")
            _check_patterns([glob], f"{path}: 'per-file-ignores'")
            parsed[glob] = tuple(codes)
        values["per_file_ignores"] = parsed
    if "fail-on" in table:
        values["fail_on"] = parse_severity(table["fail-on"], f"{path}: 'fail-on'")
    if "severity" in table:
        sev = table["severity"]
        if not isinstance(sev, dict):
            raise ConfigError(f"{path}: 'severity' must be a table of CODE = \"error|warning|note\"")
        docs = load_all()
        parsed_sev = {}
        for code, level in sev.items():
            if code not in docs:
                raise ConfigError(f"{path}: 'severity': unknown rule code {code!r}")
            parsed_sev[code] = parse_severity(level, f"{path}: 'severity.{code}'")
        values["severity"] = parsed_sev
    if "deep" in table:
        if not isinstance(table["deep"], bool):
            raise ConfigError(f"{path}: 'deep' must be true or false")
        values["deep"] = table["deep"]
    deep_flags = strings("deep-flags")
    if deep_flags is not None:
        values["deep_flags"] = deep_flags
    if "deep-timeout" in table:
        timeout = table["deep-timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"{path}: 'deep-timeout' must be a positive number of seconds")
        values["deep_timeout"] = float(timeout)
    if "compile-commands" in table:
        if not isinstance(table["compile-commands"], str):
            raise ConfigError(f"{path}: 'compile-commands' must be a path")
        values["compile_commands"] = path.parent.resolve() / table["compile-commands"]
    if "timeout" in table:
        values["timeout"] = parse_timeout(table["timeout"], f"{path}: 'timeout'")
    for key in ("respect-gitignore", "force-exclude"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{path}: '{key}' must be true or false")
            values[key.replace("-", "_")] = table[key]
    return Config(root=path.parent.resolve(), source=path, **values)


def _check_patterns(patterns, what: str) -> None:
    """Gitignore-style patterns: one pathspec rejects (`!`, `dir\\`) is a usage error."""
    for pattern in patterns:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except ValueError:  # GitIgnorePatternError
            raise ConfigError(f"{what}: invalid pattern {pattern!r}") from None
def validate_targets(names: tuple[str, ...], what: str) -> tuple[str, ...]:
    try:
        targets.parse(",".join(names))
    except targets.TargetError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    return names


def parse_severity(value, what: str) -> Severity:
    try:
        return Severity.parse(value) if isinstance(value, str) else Severity(value)
    except ValueError:
        raise ConfigError(f"{what}: {value!r} is not one of error, warning, note") from None


def parse_timeout(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise ConfigError(f"{what}: {value!r} is not a number of seconds (0 or more; 0: no limit)")
    return float(value)
