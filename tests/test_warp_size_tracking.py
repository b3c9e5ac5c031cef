"""W001 across files: a warp size hard-wired in a header is one finding, at its definition (the
root cause), with the uses in the kernel files that compute with it as related locations."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from portlint import engine
from portlint.config import Config
from portlint.finding import Severity
from portlint.report import ReportContext, render

HARD_WIRED = "#pragma once\n#define WARP_SIZE 32\n"
PER_PLATFORM = """\
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif
"""
KERNELS = {
    "reduce.cu": """\
        #include "warp.h"
        __device__ float warp_sum(float v) {
          for (int o = WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_down(v, o);
          return v;
        }
    """,
    "lanes.cu": """\
        #include "warp.h"
        __global__ void lanes(int* out) { out[threadIdx.x] = threadIdx.x % WARP_SIZE; }
    """,
    "tile.cu": """\
        #include "warp.h"
        __global__ void tile(const float* in, float* out) {
          __shared__ float s[WARP_SIZE];
          s[threadIdx.x] = in[threadIdx.x];
          out[threadIdx.x] = s[0];
        }
    """,
}


def _project(root: Path, header: str) -> Path:
    (root / "include").mkdir()
    (root / "include" / "warp.h").write_text(header, encoding="utf-8")
    for name, text in KERNELS.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _scan(root: Path, jobs: int = 1) -> engine.ScanResult:
    return engine.scan([root], Config(root=root, select=("W001",)), jobs=jobs)


def test_a_hard_wired_header_constant_is_one_finding_with_its_uses_related(tmp_path: Path) -> None:
    result = _scan(_project(tmp_path, HARD_WIRED))
    (definition,) = result.findings
    assert Path(definition.path).name == "warp.h" and definition.location.start_line == 2
    assert definition.severity is Severity.ERROR, "a use feeds a shuffle"
    assert "3 uses" in definition.message
    related = {Path(r.location.path).name: r.message for r in definition.related}
    assert sorted(related) == ["lanes.cu", "reduce.cu", "tile.cu"]
    assert "array" in related["tile.cu"] and "arithmetic" in related["lanes.cu"]
    assert "shuffle" in related["reduce.cu"]


def test_a_per_platform_definition_makes_every_use_silent(tmp_path: Path) -> None:
    assert _scan(_project(tmp_path, PER_PLATFORM)).findings == []


def test_definition_reported_once_and_workers_agree(tmp_path: Path) -> None:
    root = _project(tmp_path, HARD_WIRED)
    for i in range(50):  # enough files for worker processes: the facts cross a pickle
        (root / f"extra{i}.cu").write_text(f'#include "warp.h"\nint f{i}(int t) {{ return t / WARP_SIZE; }}\n')
    serial, parallel = _scan(root), _scan(root, jobs=2)
    assert [f.location for f in serial.findings] == [f.location for f in parallel.findings]
    assert sum(1 for f in serial.findings if Path(f.path).name == "warp.h") == 1


def test_sarif_carries_the_uses_as_related_locations(tmp_path: Path) -> None:
    root = _project(tmp_path, HARD_WIRED)
    sarif = json.loads(render("sarif", _scan(root), ReportContext(root=root)))
    (result,) = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "include/warp.h"
    uris = sorted(r["physicalLocation"]["artifactLocation"]["uri"] for r in result["relatedLocations"])
    assert uris == ["lanes.cu", "reduce.cu", "tile.cu"]
