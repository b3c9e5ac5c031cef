"""The composite GitHub action: what action.yml declares, and its steps' scripts run the way a
runner runs them (bash, a fake `GITHUB_*` environment, the step's `if:` evaluated)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION_TEXT = (ROOT / "action.yml").read_text()
ACTION = yaml.safe_load(ACTION_TEXT)
STEPS = ACTION["runs"]["steps"]
HAZARD = "__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")

# What GitHub puts in the `github` context for the three kinds of run that matter to the upload.
PUSH = {"actor": "octocat", "event_name": "push", "event": {}}
FORK_PR = {"actor": "contributor", "event_name": "pull_request",
           "event": {"pull_request": {"head": {"repo": {"fork": True}}}}}
DEPENDABOT_PR = {"actor": "dependabot[bot]", "event_name": "pull_request",
                 "event": {"pull_request": {"head": {"repo": {"fork": False}}}}}


def _step(**match) -> dict:
    return next(s for s in STEPS if all(s.get(k) == v for k, v in match.items()))


# --- what action.yml declares ---------------------------------------------------------------

def test_every_action_is_pinned_by_commit_with_its_version_beside_it() -> None:
    uses = [s["uses"] for s in STEPS if "uses" in s]
    assert {u.split("@")[0] for u in uses} == {"actions/setup-python", "actions/cache",
                                               "github/codeql-action/upload-sarif"}
    for use in uses:
        assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", use), f"{use}: not pinned by a full commit"
        line = next(line for line in ACTION_TEXT.splitlines() if f"uses: {use}" in line)
        assert re.search(r"#\s*v\d+(\.\d+)*\s*$", line), f"{line.strip()}: no `# vX.Y.Z` comment"


def test_inputs_reach_scripts_through_env_only() -> None:
    # An expression inside `run:` is pasted into the script before bash reads it (script
    # injection from an input); through `env:` it is data.
    scripts = [s["run"] for s in STEPS if "run" in s]
    assert len(scripts) == 4
    for script in scripts:
        assert "${{" not in script


def test_result_cache_is_keyed_by_version_and_configuration_with_restore_keys() -> None:
    cache = next(s["with"] for s in STEPS
                 if s.get("uses", "").startswith("actions/cache@") and s["with"]["path"] == ".portlint_cache")
    assert cache["key"] == "${{ steps.keys.outputs.results }}"
    assert cache["restore-keys"] == "${{ steps.keys.outputs.results-restore }}"
    assert "github.sha" not in ACTION_TEXT


def test_upload_is_guarded_and_carries_the_category() -> None:
    upload = _step(name="Upload to code scanning")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"] == {"sarif_file": "${{ steps.scan.outputs.sarif }}", "category": "${{ inputs.category }}"}
    assert "steps.guard.outputs.upload == 'true'" in upload["if"]
    guard = _step(id="guard")
    assert guard["env"] == {"PORTLINT_ACTOR": "${{ github.actor }}",
                            "PORTLINT_FROM_FORK": "${{ github.event.pull_request.head.repo.fork }}"}
    assert _step(id="python")["with"]["update-environment"] is False


# --- the steps run as a runner runs them ----------------------------------------------------

def _lookup(path: str, context: dict) -> object:
    value: object = context
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _text(value: object) -> str:
    """How GitHub turns an expression's value into a string (env values, comparisons)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _condition(expression: str, context: dict) -> bool:
    """The `&&` of terms the action's conditions use: `always()`, `X == 'v'`, `X != 'v'`.
    Anything else is refused, so a condition this cannot evaluate fails the test."""
    body = EXPRESSION.fullmatch(expression.strip())
    result = True
    for term in (body.group(1) if body else expression).split("&&"):
        term = term.strip()
        if term == "always()":
            continue
        match = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", term)
        assert match, f"condition term not understood: {term!r}"
        equal = _text(_lookup(match.group(1), context)) == match.group(3)
        result = result and (equal if match.group(2) == "==" else not equal)
    return result


def _render(template: str, context: dict) -> str:
    return EXPRESSION.sub(lambda m: _text(_lookup(m.group(1), context)), template)


def _run_action(workspace: Path, github: dict, **inputs: str) -> dict:
    """Run every step: scripts with bash (the install step excepted: portlint is the one under
    test, on PATH), actions recorded as run or skipped. Returns the steps' outcomes."""
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    context = {"inputs": {**defaults, **inputs}, "github": github, "steps": {}}
    runner = workspace.parent / "runner"
    runner.mkdir(exist_ok=True)
    env = dict(os.environ, GITHUB_ACTION_PATH=str(ROOT), GITHUB_WORKSPACE=str(workspace),
               GITHUB_ENV=str(runner / "env"), GITHUB_STEP_SUMMARY=str(runner / "summary.md"),
               RUNNER_OS="Linux", RUNNER_TEMP=str(runner), PYTHONPATH=str(ROOT),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    outcome = {"ran": [], "exit": {}, "stdout": ""}
    for index, step in enumerate(STEPS):
        name = step.get("id") or step.get("name") or step["uses"]
        if "if" in step and not _condition(step["if"], context):
            continue
        if "uses" in step or step.get("name") == "Install portlint":
            outcome["ran"].append(name)
            continue
        output = runner / f"output-{index}"
        output.write_text("")
        step_env = dict(env, GITHUB_OUTPUT=str(output),
                        **{k: _render(v, context) for k, v in step.get("env", {}).items()})
        # `shell: bash` runs `bash --noprofile --norc -eo pipefail {0}`
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace, env=step_env,
                              capture_output=True, text=True)
        outcome["ran"].append(name)
        outcome["exit"][name] = proc.returncode
        outcome["stdout"] += proc.stdout
        outcome.setdefault("stderr", "")
        outcome["stderr"] += proc.stderr
        if "id" in step:
            pairs = (line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            context["steps"][step["id"]] = {"outputs": dict(pairs)}
    return outcome


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = tmp_path / "workspace"
    project.mkdir()
    (project / "k.cu").write_text(HAZARD)
    return project


def test_a_push_scans_uploads_and_does_not_fail_by_default(workspace: Path) -> None:
    outcome = _run_action(workspace, PUSH)
    assert outcome["exit"]["scan"] == 0, outcome.get("stderr")
    assert "Upload to code scanning" in outcome["ran"]
    assert "::notice" not in outcome["stdout"]
    assert '"ruleId": "W002"' in (workspace / "portlint.sarif").read_text()
    summary = (workspace.parent / "runner" / "summary.md").read_text()
    assert "| error | 1 |" in summary and "| W002 | narrow-full-mask | 1 |" in summary


@pytest.mark.parametrize("github", [FORK_PR, DEPENDABOT_PR], ids=["fork", "dependabot"])
def test_a_read_only_token_skips_the_upload_with_a_notice_and_passes(workspace: Path, github: dict) -> None:
    outcome = _run_action(workspace, github)
    assert outcome["exit"] == {"keys": 0, "scan": 0, "guard": 0}, outcome.get("stderr")
    assert "Upload to code scanning" not in outcome["ran"]
    notice = [line for line in outcome["stdout"].splitlines() if line.startswith("::notice")]
    assert len(notice) == 1 and "upload skipped" in notice[0]
    assert ("fork" if github is FORK_PR else "Dependabot") in notice[0]


def test_a_failing_scan_still_uploads_its_findings(workspace: Path) -> None:
    outcome = _run_action(workspace, PUSH, **{"fail-on": "error"})
    assert outcome["exit"]["scan"] == 1
    assert "Upload to code scanning" in outcome["ran"]


def test_upload_off_runs_no_guard_and_no_upload(workspace: Path) -> None:
    outcome = _run_action(workspace, PUSH, upload="false")
    assert "guard" not in outcome["ran"] and "Upload to code scanning" not in outcome["ran"]


def test_cache_key_follows_configuration_not_commits(workspace: Path) -> None:
    def keys() -> dict:
        outcome = _run_action(workspace, PUSH, upload="false")
        assert outcome["exit"]["keys"] == 0, outcome.get("stderr")
        output = (workspace.parent / "runner" / f"output-{STEPS.index(_step(id='keys'))}").read_text()
        return dict(line.split("=", 1) for line in output.splitlines())

    from portlint import __version__

    first = keys()
    assert first["results"].startswith(f"portlint-cache-Linux-{__version__}-")
    assert first["results"].startswith(first["results-restore"]) and first["results-restore"].endswith("-")
    (workspace / "k.cu").write_text(HAZARD + "// another commit\n")
    assert keys() == first
    (workspace / "portlint.toml").write_text('ignore = ["W004"]\n')
    changed = keys()
    assert changed["results"] != first["results"] and changed["results-restore"] == first["results-restore"]
    assert changed["pip"] == first["pip"]


def test_sarif_category_input_reaches_the_report(workspace: Path) -> None:
    _run_action(workspace, PUSH, upload="false", **{"sarif-category": "kernels/"})
    run = json.loads((workspace / "portlint.sarif").read_text())["runs"][0]
    assert run["automationDetails"] == {"id": "kernels/"}


def test_scan_step_that_writes_no_sarif_offers_nothing_to_upload(workspace: Path) -> None:
    outcome = _run_action(workspace, PUSH, paths="does-not-exist", **{"fail-on": "error"})
    assert outcome["exit"]["scan"] == 2
    assert "guard" not in outcome["ran"] and "Upload to code scanning" not in outcome["ran"]


def test_scan_step_fails_on_request_and_prints_annotations(workspace: Path) -> None:
    outcome = _run_action(workspace, PUSH, format="github", **{"fail-on": "error"})
    assert outcome["exit"]["scan"] == 1
    assert outcome["stdout"].startswith("::error file=k.cu,line=1,")
    outcome = _run_action(workspace, PUSH, format="github", args="--ignore W002", **{"fail-on": "error"})
    assert outcome["exit"]["scan"] == 0, outcome["stdout"]
