"""The lane harness catches a safe fix that changes what correct code computes.

A fix that looks harmless on CUDA (32 lanes give the same result) can still change the
result on a 64-lane wavefront. These tests run such rewrites on the emulator, the way
tests/test_lanes_fixtures.py runs every safe-fixed fixture, and show that rewrites portlint
offers only as unsafe would have broken correct code.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from lanes import execute

HADAMARD = """\
#include <hip/hip_runtime.h>

// A 32-point Walsh-Hadamard transform per group of 32 lanes: every shuffle has width 32.
__global__ void hadamard32(float* data) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = data[t];
  for (int i = 1; i < 32; i <<= 1) {
    const float other = __shfl_xor(v, i, 32);
    v = (threadIdx.x & i) ? other - v : v + other;
  }
  data[t] = v;
}
"""

HADAMARD_DRIVER = """\
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("hadamard32") {
    float* data = input<float>(256, [](long long i) { return static_cast<float>((i * 7) % 5) - 2.f; });
    launch(hadamard32, dim3(2), dim3(128), 0, data);
    record("data", data, 256);
  }
}
"""

ROW_MAX_TILE_DRIVER = """\
// row_max over a 32-lane tile: each lane holds one partial of 4-lane rows (reduce_width 128
// counts 4 "warps" of 32 lanes), the tile's xor steps 1 and 2 combine each row.
#include "driver.h"
#include LANES_FIXTURE

__global__ void rows(const float* in, float* out) {
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  out[threadIdx.x] = row_max(tile, in[threadIdx.x], 128);
}

void drive() {
  STEP("row_max") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>((i * 29) % 64); });
    float* out = alloc<float>(128);
    launch(rows, dim3(1), dim3(128), 0, in, out);
    record("max", out, 128);
  }
}
"""


@pytest.fixture
def gxx() -> None:
    if execute.have("g++") is None:
        if os.environ.get("CI"):
            pytest.fail("g++ is missing in CI")
        pytest.skip("g++ not installed")


def run_on(driver: Path, fixture: Path, lanes: int, workdir: Path) -> dict[str, execute.Run]:
    build = execute.build_emulated(driver, fixture, lanes, workdir)
    assert build.binary, build.error
    return execute.run_steps([str(build.binary)], execute.steps(build.binary))


def outcome(reference: dict[str, execute.Run], got: dict[str, execute.Run]) -> list[str]:
    """What differs from the reference, step by step ([] when nothing does)."""
    out = []
    for step, run in reference.items():
        assert run.returncode == 0, run.stderr
        other = got[step]
        out += [f"{step}: {other.outcome}"] if other.returncode else execute.differences(run.records, other.records)
    return out


def test_a_wrong_safe_fix_is_caught(gxx, tmp_path: Path) -> None:
    original = tmp_path / "hadamard.cu"
    original.write_text(HADAMARD)
    rewritten = tmp_path / "hadamard.safe-fixed.cu"
    # The rewrite a warp-size rule might offer as safe: `i < 32` -> `i < warpSize`.
    rewritten.write_text(HADAMARD.replace("i < 32;", "i < warpSize;"))
    driver = tmp_path / "hadamard.cpp"
    driver.write_text(HADAMARD_DRIVER)
    reference = run_on(driver, original, 32, tmp_path)
    assert outcome(reference, run_on(driver, original, 64, tmp_path)) == [], "the original is right on 64 lanes"
    assert outcome(reference, run_on(driver, rewritten, 32, tmp_path)) == [], "on CUDA the rewrite changes nothing"
    caught = outcome(reference, run_on(driver, rewritten, 64, tmp_path))
    assert caught and caught[0].startswith("data:"), "on 64 lanes the extra xor-32 step mixes two groups"


def test_a_32_point_transform_gets_no_finding_and_its_width_must_stay(gxx, tmp_path: Path) -> None:
    """The logical-warp model: every shuffle of the transform is a xor of width 32 and nothing
    reads the wavefront's width, so W001 and W004 give no warning and no fix, only notes that
    say nothing is to change; the rewrite a rule might suggest (width and loop bound 32 ->
    warpSize) would break it on 64 lanes."""
    from harness import scan
    from portlint.finding import Severity

    original = tmp_path / "hadamard.cu"
    original.write_text(HADAMARD)
    found = scan([original], tmp_path, select=("W001", "W004")).findings
    assert all(f.severity is Severity.NOTE and not f.fix.edits for f in found), [f.message for f in found]
    rewritten = tmp_path / "hadamard.width.cu"
    rewritten.write_text(HADAMARD.replace("__shfl_xor(v, i, 32)", "__shfl_xor(v, i, warpSize)")
                         .replace("i < 32;", "i < warpSize;"))
    driver = tmp_path / "hadamard.cpp"
    driver.write_text(HADAMARD_DRIVER)
    reference = run_on(driver, original, 32, tmp_path)
    assert outcome(reference, run_on(driver, original, 64, tmp_path)) == [], "the original is right on 64 lanes"
    assert outcome(reference, run_on(driver, rewritten, 32, tmp_path)) == [], "on CUDA the rewrite changes nothing"
    assert outcome(reference, run_on(driver, rewritten, 64, tmp_path)), "on 64 lanes the transform mixes two groups"


def test_w001_group_width_fix_is_unsafe_for_a_tile_caller(gxx, tmp_path: Path) -> None:
    """W001's `reduce_width >> 5` -> `reduce_width / warpSize` in a helper that shuffles
    through its caller's group: no safe fix, and the unsafe one halves the xor steps of a
    caller's 32-lane tile on 64 lanes."""
    from harness import fix_until_stable
    from lanes.execute import Case

    case = Case("W001", execute.FIXTURES / "W001" / "bad_group_scan.cu", tmp_path / "unused.cpp")
    assert execute.write_safe_fixed(case, tmp_path / "safe") is None, "no W001 fix of this file is safe"
    rewritten = tmp_path / "unsafe" / case.fixture.name
    rewritten.parent.mkdir()
    rewritten.write_text(case.fixture.read_text())
    fix_until_stable([rewritten], rewritten.parent, ("W001",), unsafe=True)
    assert "reduce_width / warpSize" in rewritten.read_text()
    driver = tmp_path / "row_max_tile.cpp"
    driver.write_text(textwrap.dedent(ROW_MAX_TILE_DRIVER))
    reference = run_on(driver, case.fixture, 32, tmp_path)
    assert outcome(reference, run_on(driver, case.fixture, 64, tmp_path)) == [], "a 32-lane tile is right on 64 lanes"
    assert outcome(reference, run_on(driver, rewritten, 32, tmp_path)) == [], "on CUDA the rewrite changes nothing"
    caught = outcome(reference, run_on(driver, rewritten, 64, tmp_path))
    assert caught and caught[0].startswith("max:"), "on 64 lanes the tile's rows lose xor steps"
