"""`--diff` shows exactly what `--fix` writes: applied with `patch`, the diff gives the same
bytes as `--fix` in every file, and "Would fix N" is `--fix`'s "Fixed N". Every fixture case
of a rule with a fix, every fixture project, and a case that takes two passes (a fix that
overlaps another is applied by the next pass, on the text the first pass wrote)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import FIXTURES, fixing_cases
from tests.test_cli import run

def _cases():
    for case, select, name in fixing_cases():
        yield pytest.param(case, select, id=name)
    yield pytest.param(FIXTURES / "demo", ("ALL",), id="demo")


def _copy(case: Path, into: Path) -> Path:
    """`case` alone in a project folder `into` (a file keeps its name)."""
    (into / ".git").mkdir(parents=True)  # the project root
    if case.is_dir():
        shutil.copytree(case, into / case.name)
    else:
        shutil.copy2(case, into / case.name)
    return into


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts and ".portlint_cache" not in p.parts}


def _count(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else 0


def assert_diff_is_fix(case: Path, select: tuple[str, ...], unsafe: bool, tmp_path: Path) -> int:
    """Run `--diff` on one copy and `--fix` on another; returns the number of fixes."""
    options = ["--no-cache", "--timeout", "0", "--select", ",".join(select), *(["--unsafe-fixes"] if unsafe else [])]
    previewed, fixed = _copy(case, tmp_path / "diff"), _copy(case, tmp_path / "fix")
    original = _tree(previewed)
    shown = run("scan", ".", "--diff", *options, cwd=previewed)
    assert _tree(previewed) == original, "--diff wrote a file"
    written = run("scan", ".", "--fix", "--exit-zero", *options, cwd=fixed)
    would, did = _count(r"Would fix (\d+) finding", shown.stderr), _count(r"Fixed (\d+) finding", written.stdout)
    assert would == did, f"--diff would fix {would}, --fix fixed {did}"
    if shown.stdout:
        patched = subprocess.run(["patch", "-s", "-p1", "--no-backup-if-mismatch"], input=shown.stdout.encode(),
                                 cwd=previewed, capture_output=True)
        assert patched.returncode == 0, patched.stdout.decode() + patched.stderr.decode()
    assert _tree(previewed) == _tree(fixed), "the diff applied gives other bytes than --fix"
    assert (would > 0) == bool(shown.stdout)
    return did


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("case, select", list(_cases()))
def test_diff_applied_is_what_fix_writes(case: Path, select, unsafe: bool, tmp_path: Path) -> None:
    assert_diff_is_fix(case, select, unsafe, tmp_path)


# Two fixes on nested spans (W002's mask inside N001's rewrite of the store to `v.x`): the
# outer one is applied first, the inner one by a second pass, on the text the first pass wrote.
TWO_PASSES = """\
#include <cuda_fp16.h>
__global__ void swap_low(__half2* data) {
  __half2 v = data[threadIdx.x];
  v.x = __shfl_xor_sync(0xffffffff, v.x, 1);
  data[threadIdx.x] = v;
}
"""


def test_a_fix_left_for_a_second_pass_is_in_the_diff(tmp_path: Path) -> None:
    from portlint import engine
    from portlint.config import Config
    from portlint.fix import plan_fixes

    source = tmp_path / "kernel.cu"
    source.write_text(TWO_PASSES)
    first = engine.scan([source], Config(root=tmp_path, select=("ALL",), timeout=0))
    plans, _ = plan_fixes(first.findings, first.files, unsafe=False)
    assert [p.applied for p in plans] == [1], "the case must leave a fix for a second pass"
    assert assert_diff_is_fix(source, ("ALL",), False, tmp_path / "run") == 2
