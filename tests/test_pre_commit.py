"""The real pre-commit runs the hook from this repository, offline.

A wheelhouse is built first (portlint, its dependencies and its build backend, from
pip's cache or the registry); `pre-commit try-repo` then installs from it with PIP_NO_INDEX set, so the hook
run itself needs no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HAZARD = "__global__ void f(float* v) { v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }\n"
CLEAN = "__global__ void f(float* v) { v[0] = __shfl_down_sync(~0ull, v[0], 1); }\n"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _run(cmd, cwd, env=None, check=True):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory) -> dict[str, str]:
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    if not Path(pre_commit).exists():
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    wheels = tmp_path_factory.mktemp("wheelhouse")
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "-w", str(wheels), str(REPO), "hatchling"], cwd=REPO)
    env = dict(os.environ)
    env.update({
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),
        "PRE_COMMIT_COLOR": "never",
        "PATH": f"{Path(pre_commit).parent}{os.pathsep}{env.get('PATH', '')}",
    })
    env.pop("VIRTUAL_ENV", None)
    return env


def _repo_with(tmp_path: Path, text: str) -> Path:
    repo = tmp_path / "project"
    repo.mkdir(parents=True)
    _run(["git", "init", "-q"], repo)
    _run(["git", "config", "user.email", "t@example.invalid"], repo)
    _run(["git", "config", "user.name", "t"], repo)
    (repo / "reduce.cu").write_text(text)
    (repo / "README.txt").write_text("not scanned\n")
    _run(["git", "add", "."], repo)
    return repo


def test_hook_fails_on_a_hazard_and_passes_on_clean_code(tmp_path: Path, hook_env) -> None:
    bad = _repo_with(tmp_path / "bad", HAZARD)
    proc = _run(["pre-commit", "try-repo", str(REPO), "portlint", "--all-files"], bad, hook_env, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "reduce.cu:1:" in proc.stdout and "W002" in proc.stdout

    good = _repo_with(tmp_path / "good", CLEAN)
    proc = _run(["pre-commit", "try-repo", str(REPO), "portlint", "--all-files"], good, hook_env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout
