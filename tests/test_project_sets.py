"""Whole projects, all rules at once: a ported project is silent, a never-ported one is
found in full.

Every `fixtures/projects/ported*/` gives no error or warning finding (notes are allowed
where a ported project keeps a tuning choice), and every `fixtures/projects/never_ported*/`
gives exactly the findings its `// expect:` markers name. A pair shares its suffix
(`ported_shims` / `never_ported_shims`): the same project before and after its port.

`fixtures/projects/ported/` is modelled on the compatibility headers real ported projects
carry (per-platform WARP_SIZE and FULL_MASK, shuffle macros that drop masks on HIP,
`USE_ROCM` arms with ROCm intrinsics, CUDA-only PTX behind `#ifndef __HIP_PLATFORM_AMD__`).
`fixtures/projects/never_ported/` marks every hazard with `// expect: CODE`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness import EXPECT, NOTE, scan
from portlint.finding import Severity

_RELATED = re.compile(r"(?://|#)\s*related:\s*([A-Z]\d{3}(?:\s*,\s*[A-Z]\d{3})*)")
PROJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
PORTED = sorted(p.name for p in PROJECTS.glob("ported*") if p.is_dir())
NEVER_PORTED = sorted(p.name for p in PROJECTS.glob("never_ported*") if p.is_dir())


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def test_every_ported_project_has_a_never_ported_twin() -> None:
    assert {p.removeprefix("ported") for p in PORTED} == {p.removeprefix("never_ported") for p in NEVER_PORTED}


@pytest.mark.parametrize("name", PORTED)
def test_ported_project_gives_no_error_or_warning(name: str, tmp_path: Path) -> None:
    root = _copy(name, tmp_path)
    result = scan([root], root)
    assert not result.problems, [str(p) for p in result.problems]
    loud = [f for f in result.findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert loud == [], [f"{f.path}:{f.location.start_line} {f.code} {f.message}" for f in loud]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(result.files) == len(files), "every file of the project was read"


@pytest.mark.parametrize("name", NEVER_PORTED)
def test_never_ported_project_gives_every_expected_finding(name: str, tmp_path: Path) -> None:
    """`// expect: CODE` marks where a finding starts; `// related: CODE`, a hazard shown as a
    related place of a finding of CODE (the uses of a library under the alias at its include);
    `// note: CODE`, a note on code right on AMD (a 32-lane logical warp)."""
    root = _copy(name, tmp_path)
    expected, related, notes = set(), set(), set()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                for m in EXPECT.finditer(line):
                    expected |= {(path.name, number, code.strip()) for code in m.group(2).split(",")}
                for m in _RELATED.finditer(line):
                    related |= {(path.name, number, code.strip()) for code in m.group(1).split(",")}
                for m in NOTE.finditer(line):
                    notes |= {(path.name, number, code.strip()) for code in m.group(1).split(",")}
    result = scan([root], root)
    found = {(Path(f.path).name, f.location.start_line, f.code) for f in result.findings}
    noted = {(Path(f.path).name, f.location.start_line, f.code) for f in result.findings if f.severity is Severity.NOTE}
    assert notes <= noted, f"not notes: {sorted(notes - noted)}"
    expected |= notes
    assert found == expected, f"missing {sorted(expected - found)}, unexpected {sorted(found - expected)}"
    shown = {(Path(r.location.path).name, r.location.start_line, f.code) for f in result.findings for r in f.related}
    assert related <= shown, f"not a related place: {sorted(related - shown)}"
    if name == "never_ported":
        device_families = {code[0] for _, _, code in expected}
        assert {"W", "P", "K", "M", "A", "N", "R"} <= device_families


def test_finished_port_with_notes_only_passes_by_default(tmp_path: Path) -> None:
    """A finished port keeps tuning choices (fixed block sizes) that portlint reports as notes:
    they do not fail `portlint scan .` unless the team asks for it with `--fail-on note`."""
    from click.testing import CliRunner

    from portlint.cli import main

    root = _copy("ported", tmp_path)
    runner = CliRunner()
    default = runner.invoke(main, ["scan", str(root), "--no-cache"])
    assert "notes)." in default.output and "error" not in default.output.split("Found", 1)[-1]
    assert default.exit_code == 0, default.output
    strict = runner.invoke(main, ["scan", str(root), "--no-cache", "--fail-on", "note"])
    assert strict.exit_code == 1, strict.output
