"""Everything `portlint doctor` learns about the machine goes through one `Environment`.

Environment variables, tools on PATH, installed Python packages and the project directory
are read only here, so tests build an `Environment` from a temporary PATH of fake tools,
a directory of fake `*.dist-info` folders and a temporary project, never this machine.

A probe that cannot answer (tool missing, crashing, hanging) raises `ProbeError` with a
one-line reason; the checks turn it into a "not checked" line, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import Path

# Where AMD's packages install ROCm when `ROCM_PATH` is unset.
ROCM_DEFAULT = Path("/opt/rocm")
TOOL_TIMEOUT = 15.0  # seconds; rocminfo on a large node takes a few
# Directories never walked when looking at the project: VCS data, environments, caches.
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "__pycache__", "node_modules",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs",
})
MAX_PROJECT_FILES = 100_000
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ProbeError(Exception):
    """A probe that could not answer; the message is one line for the user."""


@dataclass
class Environment:
    """The machine as `portlint doctor` sees it.

    `variables` are the environment variables (PATH included) and are passed to every tool
    run; `package_path` lists the directories whose `*.dist-info` metadata is read (None:
    portlint's own `sys.path`; `Environment.current` asks the build's Python instead);
    `rocm_default` is where ROCm is looked for when `ROCM_PATH` is unset.
    """

    variables: Mapping[str, str]
    project: Path
    package_path: list[str] | None = None
    rocm_default: Path = ROCM_DEFAULT
    timeout: float = TOOL_TIMEOUT
    # Shown in messages: whose packages were read.
    python_label: str = "this Python"
    # Why the package list could not be read (the package checks are then not run).
    package_error: str | None = None
    _runs: dict = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def current(cls, project: Path, python: str | None = None) -> "Environment":
        """This machine: `os.environ`, and the packages of `python` (default: `python3` on PATH)."""
        env = cls(variables=dict(os.environ), project=project, rocm_default=ROCM_DEFAULT)
        env._use_python(python)
        return env

    # ---- environment variables and tools ------------------------------------------
    def var(self, name: str) -> str | None:
        """The variable's value, or None when unset or empty."""
        value = self.variables.get(name)
        return value if value else None

    def which(self, tool: str, extra_dirs: tuple[Path, ...] = ()) -> str | None:
        """`tool` on PATH, else in one of `extra_dirs` (e.g. `$ROCM_PATH/bin`)."""
        found = shutil.which(tool, path=self.variables.get("PATH", ""))
        if found:
            return found
        for directory in extra_dirs:
            found = shutil.which(tool, path=str(directory))
            if found:
                return found
        return None

    def run(self, executable: str, *args: str) -> str:
        """Standard output of `executable args`, or ProbeError. Results are cached."""
        key = (executable, args)
        if key not in self._runs:
            try:
                self._runs[key] = (self._run(executable, args), None)
            except ProbeError as exc:
                self._runs[key] = (None, exc)
        output, error = self._runs[key]
        if error is not None:
            raise error
        return output

    def _run(self, executable: str, args: tuple[str, ...]) -> str:
        shown = " ".join((Path(executable).name, *args))
        env = {**self.variables, "LC_ALL": "C"}
        try:
            # A session of its own, so a timeout ends the tool and anything it started.
            proc = subprocess.Popen([executable, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env, start_new_session=True)
        except OSError as exc:
            raise ProbeError(f"`{shown}` could not run: {exc.strerror or exc}") from None
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            proc.communicate()
            raise ProbeError(f"`{shown}` did not finish within {self.timeout:g} s") from None
        out = stdout.decode("utf-8", errors="replace")
        if proc.returncode != 0:
            detail = _last_line(stderr.decode("utf-8", errors="replace")) or _last_line(out)
            reason = f"exit {proc.returncode}" if proc.returncode > 0 else f"signal {-proc.returncode}"
            raise ProbeError(f"`{shown}` failed ({reason})" + (f": {detail}" if detail else ""))
        return out

    # ---- installed Python packages ------------------------------------------------
    def distribution(self, name: str) -> metadata.Distribution | None:
        """The installed distribution called `name` (normalised), or None."""
        if self.package_error is not None:
            raise ProbeError(self.package_error)
        path = self.package_path if self.package_path is not None else sys.path
        return next(iter(metadata.distributions(name=name, path=list(path))), None)

    def _use_python(self, python: str | None) -> None:
        """Read packages where `python` (default: `python3` on PATH, else portlint's own) finds them."""
        if python is None:
            python = self.which("python3") or self.which("python")
            if python is None:
                self.package_path, self.python_label = None, f"portlint's Python (`{sys.executable}`)"
                return
        self.python_label = f"`{python}`"
        try:
            paths = json.loads(self.run(python, "-c", "import json, sys; print(json.dumps(sys.path))"))
        except ProbeError as exc:
            self.package_error = f"cannot list the packages of {self.python_label}: {exc}"
            return
        except ValueError:
            self.package_error = f"cannot list the packages of {self.python_label}: unexpected output"
            return
        self.package_path = [p for p in paths if isinstance(p, str)]

    # ---- the file system ----------------------------------------------------------
    def is_dir(self, path: Path) -> bool:
        return path.is_dir()

    def read_text(self, path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def read_bytes(self, path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except OSError:
            return None

    def mtime(self, path: Path) -> float | None:
        try:
            return path.stat().st_mtime
        except OSError:
            return None

    @cached_property
    def project_files(self) -> list[Path]:
        """Files under the project directory (no symlinks followed, environments left out)."""
        files: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(self.project, onerror=lambda _: None):
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIPPED_DIRS and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
            )
            files.extend(Path(dirpath, f) for f in sorted(filenames))
            if len(files) > MAX_PROJECT_FILES:
                break
        return files


def _last_line(text: str) -> str:
    lines = [_ANSI.sub("", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:160] if lines else ""


def iter_lines(text: str) -> Iterator[str]:
    for line in text.splitlines():
        yield _ANSI.sub("", line)
