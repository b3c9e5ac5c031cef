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
               GITHUB_STEP_SUMMARY=str(project / "step_summary.md"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for key, template in step["env"].items():
        name = template.removeprefix("${{ inputs.").removesuffix(" }}")
        env[key] = defaults[name]
    return subprocess.run(["bash", "-c", step["run"]], cwd=project, env=env, capture_output=True, text=True)


def test_action_is_a_composite_that_uploads_sarif() -> None:
    assert ACTION["runs"]["using"] == "composite"
    upload = ACTION["runs"]["steps"][-1]
    assert upload["uses"] == "github/codeql-action/upload-sarif@v4"
    assert upload["with"] == {"sarif_file": "${{ steps.scan.outputs.sarif }}", "category": "${{ inputs.category }}"}
    assert ACTION["inputs"]["category"]["default"] == "portlint"
    # Only a SARIF the scan wrote is uploaded, and never from a fork (no security-events: write).
    assert "steps.scan.outputs.sarif != ''" in upload["if"] and "head.repo.fork" in upload["if"]


def test_action_caches_pip_and_portlint_and_leaves_the_callers_python_alone() -> None:
    steps = ACTION["runs"]["steps"]
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["update-environment"] is False
    caches = {s["with"]["path"]: s["with"] for s in steps if s.get("uses", "").startswith("actions/cache@")}
    assert caches[".portlint_cache"]["key"].endswith("${{ github.sha }}")
    assert caches[".portlint_cache"]["restore-keys"]
    assert "~/.cache/pip" in caches
    install = next(s for s in steps if s.get("name") == "Install portlint")
    assert "-m venv" in install["run"]


def test_scan_step_writes_sarif_and_does_not_fail_by_default(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    proc = _run_scan_step(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '"ruleId": "W002"' in (tmp_path / "portlint.sarif").read_text()
    assert (tmp_path / "github_output").read_text() == "sarif=portlint.sarif\n"
    summary = (tmp_path / "step_summary.md").read_text()
    assert "| error | 1 |" in summary and "| W002 | narrow-full-mask | 1 |" in summary


def test_scan_step_that_writes_no_sarif_offers_nothing_to_upload(tmp_path: Path) -> None:
    proc = _run_scan_step(tmp_path, paths="does-not-exist", **{"fail-on": "error"})
    assert not (tmp_path / "portlint.sarif").exists() or not (tmp_path / "portlint.sarif").read_text()
    output = tmp_path / "github_output"
    assert not output.exists() or "sarif=" not in output.read_text(), proc.stderr


def test_scan_step_fails_on_request_and_prints_annotations(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    proc = _run_scan_step(tmp_path, format="github", **{"fail-on": "error"})
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error file=k.cu,line=1,")
    proc = _run_scan_step(tmp_path, format="github", args="--ignore W002", **{"fail-on": "error"})
    assert proc.returncode == 0, proc.stdout
