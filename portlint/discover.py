"""Find the files to scan and name their language.

Walks directories without following symlinks (no loops), honours `.gitignore` files (with
pathspec's git semantics) and the configured excludes. Files named on the command line are
always scanned if portlint knows their language.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pathspec

from portlint.config import Config
from portlint.source import CMAKE, CUDA, MAKE, PYPROJECT, PYTHON, REQUIREMENTS

CUDA_SUFFIXES = frozenset(
    ".cu .cuh .hip .cpp .cc .cxx .c .h .hpp .hh .hxx .inl .ipp .tpp".split()
)

# GNU make's default names, and included fragments (`common.mk`, `rules.make`).
MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def language_of(path: Path) -> str | None:
    return _language_of_name(path.name, path.parent.name)


def _language_of_name(name: str, folder: str) -> str | None:
    """The language of a file called `name` in a folder called `folder` (strings, not
    Paths: discovery asks once per file of the tree)."""
    if name == "CMakeLists.txt" or name.endswith(".cmake"):
        return CMAKE
    suffix = suffix_of(name)
    if suffix == ".py":
        return PYTHON
    if name in MAKEFILE_NAMES or suffix in (".mk", ".make"):
        return MAKE
    if suffix.lower() in CUDA_SUFFIXES:
        return CUDA
    if name == "pyproject.toml":
        return PYPROJECT
    if _is_requirements_file(name, suffix, folder):
        return REQUIREMENTS
    return None


def suffix_of(name: str) -> str:
    """`PurePath(name).suffix` of a file name, without making a Path."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def _is_requirements_file(name: str, suffix: str, folder: str) -> bool:
    """pip requirements and constraint files: `requirements*.txt`, `dev-requirements.txt`,
    pip-tools' `requirements*.in`, `constraints*.txt`, and `.txt`/`.in` files in a
    `requirements/` folder (`requirements/rocm.txt`). Other `.in` files (`MANIFEST.in`,
    `config.h.in`) are not."""
    if suffix not in (".txt", ".in"):
        return False
    stem = name[:-len(suffix)].lower()
    return (stem.startswith(("requirements", "constraints")) or stem.endswith("requirements")
            or folder.lower() == "requirements")


@dataclass(unsafe_hash=True)  # a value class (see the package's docstring)
class Candidate:
    path: Path  # as given or found (relative to the cwd when the user gave relative paths)
    language: str
    explicit: bool  # named on the command line
    build_script: bool = False  # setup.py, or a Python file matching `build-scripts`
    resolved: Path | None = None  # `path.resolve()`, when discovery already knows it
    content: bytes | None = None  # the file's bytes when they come from standard input

    @cached_property
    def absolute(self) -> str:
        """The resolved path as a POSIX string: how the build model and snapshots name the file."""
        return (self.resolved if self.resolved is not None else self.path.resolve()).as_posix()


@dataclass(unsafe_hash=True)
class Skipped:
    path: Path
    reason: str


class _Matcher:
    """Matches as the pathspec `GitIgnoreSpec` it is made from, asked once per entry of the
    tree. With no negated (`!`) pattern, a path matches when any pattern does, so one
    alternation of the patterns' own regexes answers (pathspec tries them one by one, half
    of discovery's time); with one, pathspec answers."""

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self._spec = spec
        self._any = None
        patterns = [p for p in spec.patterns if p.include is not None]
        if patterns and all(p.include and isinstance(p, pathspec.RegexPattern) for p in patterns):
            # Each pattern names its directory-mark group alike: unnamed, they can be joined.
            try:
                self._any = re.compile("|".join(_unnamed_groups(p.regex.pattern) for p in patterns)).search
            except re.error:  # a pattern pathspec compiles alone that does not join: pathspec answers
                self._any = None
        elif not patterns:
            self._any = lambda path: None

    def match_file(self, path: str) -> bool:
        return self._any(path) is not None if self._any is not None else self._spec.match_file(path)


def _unnamed_groups(regex: str) -> str:
    return "(?:" + re.sub(r"\(\?P<\w+>", "(?:", regex) + ")"


def discover(paths: list[Path], config: Config,
             descriptions: list[Path] | None = None) -> tuple[list[Candidate], list[Skipped]]:
    """The files to scan under `paths`, and what was skipped; `descriptions`, when given,
    also receives the build descriptions the walk passes (`build_descriptions`)."""
    excludes = _Matcher(pathspec.GitIgnoreSpec.from_lines(config.exclude + config.extend_exclude))
    build_scripts = pathspec.GitIgnoreSpec.from_lines(config.build_scripts)

    def candidate(path: Path, language: str, explicit: bool, resolved: Path) -> Candidate:
        rel = _relative(resolved, config.root) or path.name
        is_build_script = language == PYTHON and build_scripts.match_file(rel)
        return Candidate(path, language, explicit, is_build_script, resolved)

    found: dict[Path, Candidate] = {}
    skipped: list[Skipped] = []
    for given in paths:
        if not given.exists() and not given.is_symlink():
            skipped.append(Skipped(given, "no such file or directory"))
            continue
        if given.is_dir():
            for path, resolved, language in _walk(given, config, excludes, skipped, descriptions=descriptions):
                if resolved not in found:
                    found[resolved] = candidate(path, language, False, resolved)
        else:
            if config.force_exclude and _excluded_explicitly(given, config, excludes):
                continue  # pre-commit passes excluded files by name: --force-exclude drops them
            language = language_of(given)
            if language is None:
                skipped.append(Skipped(given, "not a C/C++/CUDA/HIP, CMake, Makefile or Python file"))
            else:
                try:
                    resolved = given.resolve()
                except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
                    skipped.append(Skipped(given, "skipped: cannot read: a symlink loop"))
                    continue
                found[resolved] = candidate(given, language, True, resolved)
    return sorted(found.values(), key=lambda c: str(c.path)), skipped


def _excluded_explicitly(given: Path, config: Config, excludes: _Matcher) -> bool:
    """Whether a file named on the command line, or a folder above it, matches `exclude` /
    `extend-exclude` (as it would be, were its folder scanned)."""
    rel = _relative(given.resolve(), config.root)
    if rel is None:
        return excludes.match_file(given.name)
    parts = rel.split("/")
    return any(excludes.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts))) or excludes.match_file(rel)


def stdin_candidate(data: bytes, filename: Path | None, config: Config) -> Candidate:
    """Standard input as one file: named (and so classified) by `--stdin-filename`, else a
    CUDA source shown as `-`."""
    if filename is None:
        return Candidate(Path("-"), CUDA, True, resolved=(Path.cwd() / "-").resolve(), content=data)
    resolved = filename.resolve()
    language = language_of(filename) or CUDA
    rel = _relative(resolved, config.root) or filename.name
    is_build_script = language == PYTHON and pathspec.GitIgnoreSpec.from_lines(config.build_scripts).match_file(rel)
    return Candidate(filename, language, True, is_build_script, resolved, content=data)


def _relative(resolved: Path | str, root: Path | str) -> str | None:
    """`resolved` relative to `root` as a POSIX path, or None outside it."""
    path, base = str(resolved), str(root)
    if path == base:
        return "."
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    rel = path[len(prefix):]
    return rel if os.sep == "/" else rel.replace(os.sep, "/")


# Files that describe or drive a build without being one portlint checks: configure templates
# and scripts, other build systems, shell and CI recipes, make include files, build documents.
# The project pass reads them only to learn whether a name is set anywhere
# (`engine._drop_under_unset_switches`, `engine._keep_switches_the_build_sets`).
_BUILD_DESCRIPTION_SUFFIXES = frozenset({
    ".in", ".ac", ".am", ".m4", ".sh", ".bash", ".bat", ".cmd", ".ps1", ".yml", ".yaml", ".bzl", ".bazel",
    ".gn", ".gni", ".toml", ".cfg", ".ini", ".json", ".lua", ".vcxproj", ".props", ".targets", ".pri", ".pro",
    ".nix", ".spec", ".mak", ".make",
})
_BUILD_DESCRIPTION_NAMES = frozenset({
    "configure", "meson.build", "meson_options.txt", "meson.options", "BUILD", "WORKSPACE", "SConstruct",
    "SConscript", "Dockerfile", "Jenkinsfile", "Doxyfile",
})


# Make include files by name (`make.inc`, `make.cuda_gpu`, `make.sys`) and the documents that
# tell a user how to build (`README.md`, `INSTALL`, `BUILDING.md`): a switch they name
# (`-DGPU_ACC`) is one the project's users set.
_BUILD_DOCUMENT_PREFIXES = ("make.", "readme", "install", "building")


def _is_build_description(name: str) -> bool:
    """For a file no checker reads (its language is None): does its name say it describes a build?"""
    return name in _BUILD_DESCRIPTION_NAMES or suffix_of(name).lower() in _BUILD_DESCRIPTION_SUFFIXES \
        or name.lower().startswith(_BUILD_DOCUMENT_PREFIXES)


def build_descriptions(config: Config) -> list[Path]:
    """The project's files that describe its build in ways no checker reads (above), walked
    from its root with the scan's excludes and ignore files."""
    excludes = _Matcher(pathspec.GitIgnoreSpec.from_lines(config.exclude + config.extend_exclude))
    found: list[Path] = []
    for _ in _walk(config.root, config, excludes, [], descriptions=found):
        pass  # (the walk yields the source files; the descriptions go to `found` on the way)
    return found


def _walk(top: Path, config: Config, excludes: _Matcher, skipped: list[Skipped],
          descriptions: list[Path] | None = None):
    """(path, resolved path, language) of each source or build file below `top`; the build
    descriptions passed on the way are appended to `descriptions` when it is given (one walk
    serves both)."""
    root = config.root
    # .gitignore files from the project root down to `top` apply to everything below.
    ignores: list[tuple[str, _Matcher]] = []  # (resolved directory, its .gitignore)
    if config.respect_gitignore:
        top_resolved = top.resolve()
        chain = [d for d in (top_resolved, *top_resolved.parents) if _is_within(d, root)]
        for directory in reversed(chain[1:]):
            spec = _gitignore(directory, skipped)
            if spec is not None:
                ignores.append((str(directory), spec))

    root_text = str(root)

    def ignored(name: str, resolved: str, is_dir: bool) -> bool:
        """`resolved`: the entry's resolved path as a string (made once per entry, not a Path)."""
        rel = _relative(resolved, root_text)
        if rel is not None:
            if excludes.match_file(rel + ("/" if is_dir else "")):
                return True
        elif excludes.match_file(name + ("/" if is_dir else "")):
            return True
        for directory, spec in ignores:
            sub = _relative(resolved, directory)
            if sub is not None and spec.match_file(sub + ("/" if is_dir else "")):
                return True
        return False

    def on_error(exc: OSError) -> None:
        skipped.append(Skipped(Path(exc.filename or "?"), f"cannot read directory: {exc.strerror}"))

    # Top-down, as `os.walk`, but from `os.scandir`'s entries: a file's kind and whether it
    # is a link come with its name, not from a system call per file. Directories below
    # `top` are never symlinks (they are not followed), so a path below resolves to the
    # resolved directory joined with its name; only a symlinked file needs `resolve()`.
    pending = [(top, top.resolve())]
    while pending:
        directory, resolved_dir = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=_entry_name)
        except OSError as exc:
            on_error(exc)
            continue
        if config.respect_gitignore and any(e.name == ".gitignore" for e in entries):
            # Specs of directories outside this one stay listed but never match here.
            spec = _gitignore(resolved_dir, skipped)
            if spec is not None:
                ignores.append((str(resolved_dir), spec))
        folder = directory.name
        prefix = os.path.join(str(resolved_dir), "")
        as_given = directory == resolved_dir  # then an entry's path is its resolved path too
        below = []
        for entry in entries:
            name = entry.name
            if _is_directory(entry):
                if not entry.is_symlink() and not ignored(name, prefix + name, True):
                    path = directory / name
                    below.append((path, path if as_given else resolved_dir / name))
                continue
            language = _language_of_name(name, folder)
            if language is None:
                if descriptions is not None and _is_build_description(name) \
                        and not entry.is_symlink() and not ignored(name, prefix + name, False):
                    descriptions.append(Path(prefix + name))
                continue
            path = directory / name
            if entry.is_symlink():
                if not path.exists():
                    continue
                resolved = path.resolve()
                if not ignored(name, str(resolved), False):
                    yield path, resolved, language
            elif not ignored(name, prefix + name, False):
                yield path, path if as_given else resolved_dir / name, language
        pending.extend(reversed(below))  # the first folder is walked next


def _entry_name(entry: os.DirEntry) -> str:
    return entry.name


def _is_directory(entry: os.DirEntry) -> bool:
    """A directory, or a link to one (which is then not followed), as `os.walk` lists it."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _gitignore(directory: Path, skipped: list[Skipped]) -> _Matcher | None:
    path = directory / ".gitignore"
    if not path.is_file():
        return None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        skipped.append(Skipped(path, f"cannot read: {exc.strerror}"))
        return None
    spec, invalid = gitignore_spec(lines)
    for number, line in invalid:  # git ignores such a line too; the others still apply
        skipped.append(Skipped(path, f"line {number} ignored: invalid pattern `{line}`"))
    return _Matcher(spec)


def gitignore_spec(lines: list[str]) -> tuple[pathspec.PathSpec, list[tuple[int, str]]]:
    """The spec of `lines` without those pathspec rejects (`build\\`, `!`), and those lines
    with their 1-based numbers."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines), []
    except ValueError:  # GitIgnorePatternError: find the culprits one line at a time
        pass
    valid, invalid = [], []
    for number, line in enumerate(lines, start=1):
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:
            invalid.append((number, line))
        else:
            valid.append(line)
    return pathspec.GitIgnoreSpec.from_lines(valid), invalid
