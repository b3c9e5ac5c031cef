"""The composite GitHub action runs the real CLI with the arguments its inputs promise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
HAZARD = "__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"


def _scan_step() -> dict:
    return next(step for step in ACTION["runs"]["steps"] if step.get("id") == "scan")


def _run_scan_step(project: Path, **inputs: str) -> subprocess.CompletedProcess:
    """Run the action's scan script as GitHub would: inputs arrive as the step's env."""
    step = _scan_step()
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    defaults.update(inputs)
    env = dict(os.environ, GITHUB_OUTPUT=str(project / "github_output"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for key, template in step["env"].items():
        name = template.removeprefix("${{ inputs.").removesuffix(" }}")
        env[key] = defaults[name]
    return subprocess.run(["bash", "-c", step["run"]], cwd=project, env=env, capture_output=True, text=True)


def test_action_is_a_composite_that_uploads_sarif() -> None:
    assert ACTION["runs"]["using"] == "composite"
    upload = ACTION["runs"]["steps"][-1]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.output }}"


def test_scan_step_writes_sarif_and_does_not_fail_by_default(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    proc = _run_scan_step(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '"ruleId": "W002"' in (tmp_path / "portlint.sarif").read_text()
    assert (tmp_path / "github_output").read_text() == "sarif=portlint.sarif\n"


def test_scan_step_fails_on_request_and_prints_annotations(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    proc = _run_scan_step(tmp_path, format="github", **{"fail-on": "error"})
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error file=k.cu,line=1,")
    proc = _run_scan_step(tmp_path, format="github", args="--ignore W002", **{"fail-on": "error"})
    assert proc.returncode == 0, proc.stdout
