"""Generated documentation is never stale: the README table comes from rules/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_rule_table_is_current() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_readme_opens_with_the_two_commands() -> None:
    blocks = (ROOT / "README.md").read_text(encoding="utf-8").split("```")
    first, second = blocks[1], blocks[3]
    assert "pip install ." in first and "portlint scan fixtures/demo" in first
    assert "pip install" in second and "pytest" in second


def test_ci_runs_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("```")[3]
    test_command = next(line for line in readme.splitlines() if "pytest" in line).strip()
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
