"""Generated documentation is never stale: the README table comes from rules/."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_rule_table_is_current() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_readme_opens_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = readme.split("```")
    first, second = blocks[1], blocks[3]
    # A fresh reader has no checkout yet: the clone comes first, from the declared repository.
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    assert first.splitlines()[1] == f"git clone {repository} portlint && cd portlint"
    assert "pip install ." in first and "portlint scan fixtures/demo" in first
    assert blocks[2].split()[:6] == ["Exit", "code", "1", "means", "hazards", "were"], "said right after it"
    assert "minutes" in blocks[2], "how long the tests take"
    assert "pip install" in second and "pytest" in second
    assert readme.index("## Usage") == readme.index("## "), "Usage is the first section"


def test_readme_workflows_pin_actions_by_commit_as_the_action_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    pinned = dict(re.findall(r"uses: ([\w/-]+)@([0-9a-f]{40})", action))
    uses = re.findall(r"- uses: ([\w/-]+)@(\S+)(.*)", readme)
    assert uses
    for name, ref, comment in uses:
        if name == "portlint/portlint":
            continue
        assert re.fullmatch(r"[0-9a-f]{40}", ref) and re.search(r"# v\d", comment), f"{name}@{ref}"
        assert pinned.get(name, ref) == ref, f"{name}: the README and action.yml pin different commits"


def test_ci_runs_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("```")[3]
    test_command = next(line for line in readme.splitlines() if "pytest" in line).strip()
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
