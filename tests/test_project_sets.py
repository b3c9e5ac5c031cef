"""Whole projects, all rules at once: a ported project is silent, a never-ported one is
found in full.

`fixtures/projects/ported/` is modelled on the compatibility headers real ported projects
carry (per-platform WARP_SIZE and FULL_MASK, shuffle macros that drop masks on HIP,
`USE_ROCM` arms with ROCm intrinsics, CUDA-only PTX behind `#ifndef __HIP_PLATFORM_AMD__`).
`fixtures/projects/never_ported/` marks every hazard with `// expect: CODE`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import EXPECT, scan

PROJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "projects"


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def test_ported_project_gives_no_finding(tmp_path: Path) -> None:
    root = _copy("ported", tmp_path)
    result = scan([root], root)
    assert not result.problems, [str(p) for p in result.problems]
    assert result.findings == [], [f"{f.path}:{f.location.start_line} {f.code} {f.message}" for f in result.findings]
    assert len(result.files) == 5, "every file of the project was read"


def test_never_ported_project_gives_every_expected_finding(tmp_path: Path) -> None:
    root = _copy("never_ported", tmp_path)
    expected = set()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                for m in EXPECT.finditer(line):
                    expected |= {(path.name, number, code.strip()) for code in m.group(2).split(",")}
    result = scan([root], root)
    found = {(Path(f.path).name, f.location.start_line, f.code) for f in result.findings}
    assert found == expected, f"missing {sorted(expected - found)}, unexpected {sorted(found - expected)}"
    device_families = {code[0] for _, _, code in expected}
    assert {"W", "P", "K", "M", "A", "N", "R"} <= device_families
