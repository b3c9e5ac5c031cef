"""Fixes say what they are: one never silences a neighbour, and a fix that the code cannot
show right is not safe.

After a pass of fixes, a scan reports every finding of before whose fix was not applied, at
its place in the rewritten text, and nothing new; the findings whose fix was applied are
gone. Over every fixture case of a rule with a fix and every fixture project, for `--fix`
and for `--fix --unsafe-fixes`.
"""

from __future__ import annotations

import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from harness import fixing_cases, scan
from portlint.finding import Severity
from portlint.fix import Applicability, accepted_fixes, apply_edits

def _cases():
    for case, _, name in fixing_cases():
        yield pytest.param(case, id=name)


def _moved(offset: int, edits) -> int:
    """Where byte `offset` of the old text stands after `edits` (inside an edit: its start)."""
    shift = 0
    for edit in sorted(edits, key=lambda e: e.start):
        if edit.end <= offset and not (edit.start == edit.end == offset):
            shift += len(edit.content.encode()) - (edit.end - edit.start)
        elif edit.start <= offset < edit.end:
            return edit.start + shift
    return offset + shift


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def findings_after_one_pass(root: Path, unsafe: bool) -> tuple[Counter, Counter, Counter]:
    """(expected, rewritten, found): the findings a scan of `root` should report after one pass
    of fixes (those whose fix was not applied, moved to their new place), those among them
    whose own text another fix rewrote (one culprit reported by two rules: that fix may have
    removed it), and those the scan reports."""
    before = scan([root], root)
    assert not [p for p in before.problems if p.internal], before.problems
    expected: Counter = Counter()
    rewritten: Counter = Counter()
    by_path: dict[str, list] = {}
    for f in before.findings:
        by_path.setdefault(f.path, []).append(f)
    new_text: dict[str, bytes] = {}
    for path, findings in by_path.items():
        state = before.files[path]
        data = state.absolute_path.read_bytes()
        chosen = accepted_fixes([f.fix for f in findings if f.fix.allowed(unsafe)])
        edits = [e for fix in chosen for e in fix.edits]
        after, _ = apply_edits(data, chosen)
        new_text[path] = after
        for f in findings:
            if f.fix in chosen:
                continue
            start = f.location.start_byte if f.location is not None and f.location.has_region else None
            line = _line(after, _moved(start, edits)) if start is not None else 0
            end = f.location.end_byte if start is not None else None
            if start is not None and any(e.start < end and start < max(e.end, e.start + 1) for e in edits):
                rewritten[(path, f.code, line)] += 1
            else:
                expected[(path, f.code, line)] += 1
    for path, after in new_text.items():
        before.files[path].absolute_path.write_bytes(after)
    again = scan([root], root)
    found = Counter((f.path, f.code, f.location.start_line if f.location is not None and f.location.has_region else 0)
                    for f in again.findings)
    return expected, rewritten, found


# Findings another fix resolves, by what it means rather than where it stands: B005's hipcc
# arm adds `ROCM_PATH ?= /opt/rocm` and moves the nvcc line into the CUDA arm, so the ROCm
# build no longer reads `CUDA_PATH` (B004's hazard) anywhere. W002's fix of a mask macro in
# its header resolves the notes at the calls of other files that pass it on.
RESOLVED_ELSEWHERE = {("B005/bad_make", "B004"), ("L001/bad_make", "B004"), ("W002/bad_macros", "W002"),
                      ("projects/never_ported", "W002")}


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("case", list(_cases()))
def test_a_fix_removes_its_finding_and_silences_no_other(case: Path, unsafe: bool, tmp_path: Path,
                                                         request) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    if case.is_dir():
        shutil.copytree(case, root / case.name)
    else:
        shutil.copy2(case, root / case.name)
    expected, rewritten, found = findings_after_one_pass(root, unsafe)
    silenced = expected - found
    case_id = request.node.callspec.id.rsplit("-", 1)[0]
    silenced = Counter({k: n for k, n in silenced.items() if (case_id, k[1]) not in RESOLVED_ELSEWHERE})
    new = found - expected - rewritten
    assert not silenced, f"silenced (still there, no longer reported): {sorted(silenced.elements())}"
    # A safe fix adds no hazard; an unsafe one may expose one it could not judge (W004's width
    # `warpSize` makes a loop bounded by 32 a finding): those are checked only under --fix.
    assert unsafe or not new, f"new, or not removed by its fix: {sorted(new.elements())}"


def _fixes(tmp_path: Path, source: str, code: str) -> list:
    """The fixes of `code`'s warnings and errors (a logical warp's note says nothing is to change)."""
    path = tmp_path / "kernel.cu"
    path.write_text(textwrap.dedent(source))
    return [f.fix for f in scan([path], tmp_path, select=(code,)).findings if f.severity is not Severity.NOTE]


def _labels(fixes) -> list[str]:
    return [("advice" if not f.is_applicable else f.applicability.value) for f in fixes]


# `int lane_mask_lt = (1 << lane) - 1;`: widening the literal alone leaves the value in an
# `int`, cut back to lanes 0-31; the declaration has its own (unsafe: signed) fix. And the
# popcounts of it stay reported after the shift is widened (the hazard is still there).
LANE_MASK_IN_INT = """\
__global__ void compact(const int* in, int* out) {
  int lane_id = threadIdx.x % warpSize;
  int lane_mask_lt = (1 << lane_id) - 1;
  unsigned long long ballot = __ballot_sync(~0ull, in[threadIdx.x] > 0);
  out[threadIdx.x] = __popc(ballot & lane_mask_lt);
}
"""


def test_a_lane_shift_kept_in_an_int_is_not_safely_widened(tmp_path: Path) -> None:
    fixes = _fixes(tmp_path, LANE_MASK_IN_INT, "W003")
    shift = next(f for f in fixes if "1ull" in f.title)
    assert shift.applicability is Applicability.UNSAFE, shift.title
    popc = next(f for f in fixes if "__popcll" in f.title)
    assert popc.applicability is Applicability.UNSAFE, "its operand stays 32 bits"
    (tmp_path / "kernel.cu").write_text(LANE_MASK_IN_INT.replace("(1 << lane_id)", "(1ull << lane_id)"))
    left = scan([tmp_path / "kernel.cu"], tmp_path, select=("W003",)).findings
    assert sorted(f.location.start_line for f in left) == [3, 5], "widening the shift must not hide the others"


def test_a_widened_lane_shift_into_a_widened_mask_is_safe(tmp_path: Path) -> None:
    source = LANE_MASK_IN_INT.replace("int lane_mask_lt", "unsigned lane_mask_lt")
    assert set(_labels(_fixes(tmp_path, source, "W003"))) == {"safe"}


# A full 64-lane mask where lanes may have returned: HIP checks `mask == __ballot(true)`.
EARLY_RETURN = """\
__global__ void tail(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  v += __shfl_down_sync(0xffffffff, v, 1);
  y[i] = v;
}
"""
# Rows of 32 threads (`dim3(32, N)`): one wavefront votes over two rows.
ROWS = """\
__global__ void vote(const int* x, unsigned* y) {
  unsigned int b = __ballot_sync(0xffffffff, x[threadIdx.y * 32 + threadIdx.x] > 0);
  if (threadIdx.x == 0) y[threadIdx.y] = b;
}
"""
# A helper in a file with no kernel: nothing shows that every lane calls it.
HELPER = """\
__device__ float sum(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}
"""
WHOLE_BLOCK = """\
__global__ void scale(const float* x, float* y) {
  float v = x[threadIdx.x];
  v += __shfl_xor_sync(0xffffffff, v, 1);
  y[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize("source, label", [(EARLY_RETURN, "unsafe"), (ROWS, "unsafe"), (HELPER, "unsafe"),
                                           (WHOLE_BLOCK, "safe")],
                         ids=["early-return", "rows", "helper-without-kernel", "every-lane"])
def test_a_full_64_lane_mask_is_safe_only_where_every_lane_calls(tmp_path: Path, source: str, label: str) -> None:
    assert _labels(_fixes(tmp_path, source, "W002")) == [label]


def test_a_mask_variable_from_a_full_mask_follows_the_same_rule(tmp_path: Path) -> None:
    source = ROWS.replace("__ballot_sync(0xffffffff,", "__ballot_sync(mask,").replace(
        "unsigned int b", "int mask = 0xffffffff;\n  unsigned int b")
    fixes = _fixes(tmp_path, source, "W003")
    widen = next(f for f in fixes if "Declare `mask`" in f.title)
    assert widen.applicability is not Applicability.SAFE, widen.title


def test_a_kernel_parameter_is_never_retyped(tmp_path: Path) -> None:
    source = """\
    __global__ void k(unsigned mask, float* y) {
      y[threadIdx.x] = __shfl_sync(mask, y[threadIdx.x], 0);
    }
    __device__ float f(unsigned mask, float v) { return __shfl_sync(mask, v, 0); }
    """
    fixes = _fixes(tmp_path, source, "W003")
    assert _labels(fixes) == ["advice", "unsafe"], [f.title for f in fixes]


# A 32-point butterfly on 32-lane groups: `__shfl_xor_sync(..., 32)` with `i < 32`. On a
# 64-lane wavefront each half transforms its own 32 points; `warpSize` as the width (then as
# the bound, which the next pass would offer) mixes the halves. No pass may do that safely.
BUTTERFLY = """\
__global__ void hadamard32(float* data) {
  float v = data[threadIdx.x];
  int lane = threadIdx.x & 31;
  for (int i = 1; i < 32; i <<= 1) {
    float p = __shfl_xor_sync(0xffffffff, v, i, 32);
    v = (lane & i) ? p - v : v + p;
  }
  data[threadIdx.x] = v;
}
"""


def test_a_32_lane_butterfly_gets_no_safe_fix_of_its_width_or_bound(tmp_path: Path) -> None:
    from harness import fix_until_stable

    path = tmp_path / "kernel.cu"
    path.write_text(BUTTERFLY)
    fix_until_stable([path], tmp_path, ("ALL",), unsafe=False)
    fixed = path.read_text()
    assert "i < 32" in fixed and ", i, 32)" in fixed, fixed


# The lanes of a block's last, partial warp, counted for a 32-bit mask: counted up to 63 on
# AMD, `0xffffffff >> rest` shifts by 32 or more while the mask stays 32 bits.
PARTIAL_WARP = """\
template <unsigned int blockSize>
__global__ void reduce(const int* in, int* out) {
  unsigned int rest = (blockSize & 31);
  rest = (rest > 0) ? (32 - rest) : rest;
  const unsigned int mask = 0xffffffff >> rest;
  out[threadIdx.x] = __shfl_down_sync(mask, in[threadIdx.x], 1);
}
template __global__ void reduce<96>(const int* in, int* out);
"""


def test_a_partial_warp_count_is_not_widened_safely_apart_from_its_mask(tmp_path: Path) -> None:
    fixes = _fixes(tmp_path, PARTIAL_WARP, "W001")
    assert len(fixes) == 2 and _labels(fixes) == ["unsafe", "unsafe"], [f.title for f in fixes]


def test_a_helper_in_a_header_gets_no_safe_full_mask(tmp_path: Path) -> None:
    # Its callers include it from elsewhere (`if (i >= n) return;` then the reduction).
    path = tmp_path / "reduce.cuh"
    path.write_text(HELPER + WHOLE_BLOCK)
    fixes = [f.fix for f in scan([path], tmp_path, select=("W002",)).findings]
    assert _labels(fixes) == ["unsafe", "safe"], [f.title for f in fixes]


# A block reduction over 32-lane groups: the warp reduction passes the width 32, the block's
# lane and warp indices count 32 lanes. Right on AMD as written (each half of a wavefront is
# one group); `warpSize` in the indices alone would drop every second group's sum.
GROUPS_OF_32 = """\
__device__ float group_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o, 32);
  return v;
}
__global__ void block_sum(const float* x, float* out) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31;
  const int group = threadIdx.x >> 5;
  float v = group_sum(x[threadIdx.x]);
  if (lane == 0) partial[group] = v;
  __syncthreads();
  v = (threadIdx.x < (blockDim.x >> 5)) ? partial[lane] : 0.0f;
  if (group == 0) v = group_sum(v);
  if (threadIdx.x == 0) *out = v;
}
"""


def _codes(tmp_path: Path, name: str, source: str) -> set[str]:
    path = tmp_path / name
    path.write_text(source)
    return {f.code for f in scan([path], tmp_path, select=("W",)).findings if f.severity is not Severity.NOTE}


def test_lane_arithmetic_beside_32_lane_groups_gets_no_safe_fix(tmp_path: Path) -> None:
    """The groups are logical (each 64-lane wavefront holds two): no W001, so no rewrite of
    the lane arithmetic at all; the 32-bit mask is the one thing to change (W002)."""
    assert _codes(tmp_path, "kernel.cu", GROUPS_OF_32) == {"W002"}


# A warp reduction whose lane and warp indices are spelled with a constant: widening the
# reduction to `warpSize` lanes while `kWarp` stays 32 counts each wavefront's sum twice.
NAMED_WARP = """\
constexpr int kWarp = 32;
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}
__global__ void block_sum(const float* x, float* out) {
  __shared__ float partial[kWarp];
  float v = warp_sum(x[threadIdx.x]);
  if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < blockDim.x / kWarp; ++w) total += partial[w];
    *out = total;
  }
}
"""


@pytest.mark.parametrize("name, source", [("kernel.cu", NAMED_WARP),
                                          ("reduce.cuh", NAMED_WARP.replace("kWarp", "32"))],
                         ids=["warp-size-constant", "header"])
def test_a_warp_reduction_is_widened_safely_only_with_its_whole_warp_in_view(tmp_path: Path, name: str,
                                                                            source: str) -> None:
    """Widening the reduction to `warpSize` lanes while the lane and slot arithmetic stays 32
    would count each wavefront's sum twice: the xor tree and the slots are one logical warp
    of 32, right on 64 lanes as written, so nothing is rewritten; only the mask is reported."""
    assert _codes(tmp_path, name, source) == {"W002"}


def test_lane_arithmetic_beside_a_fixed_size_tile_gets_no_fix(tmp_path: Path) -> None:
    # The tile of 32 is the warp here and nothing reads the wavefront's width: a logical
    # warp, right on AMD (W001's logical-warp model), so no finding and no rewrite at all.
    source = """\
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void block_max(const float* x, float* out) {
  __shared__ float partial[32];
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  const int lane = threadIdx.x % 32;
  const int group = threadIdx.x / 32;
  float v = cg::reduce(tile, x[threadIdx.x], cg::greater<float>{});
  if (lane == 0) partial[group] = v;
}
"""
    assert _fixes(tmp_path, source, "W001") == []
    # Beside a vote of the whole wavefront the same indices are reported, and no fix is safe.
    observed = source.replace("if (lane == 0) partial[group] = v;",
                              "if (lane == 0) partial[group] = v + __popcll(__ballot(v > 0.f));")
    (tmp_path / "observed").mkdir()
    fixes = _fixes(tmp_path / "observed", observed, "W001")
    assert fixes and all(f.applicability is not Applicability.SAFE for f in fixes), [f.title for f in fixes]


def test_lane_and_warp_indices_that_only_lay_out_data_get_no_fix(tmp_path: Path) -> None:
    # A 256-thread block loads an 8 x 32 tile: row `tid / 32`, column `tid % 32`, nothing across
    # lanes: the same on any warp size, so no finding (W001's logical-warp model) and no rewrite.
    source = """\
__global__ void load_tile(const float* b, float* tile, int n) {
  const int warp_id = threadIdx.x / 32;
  const int lane_id = threadIdx.x % 32;
  tile[warp_id * 32 + lane_id] = b[warp_id * n + blockIdx.x * 32 + lane_id];
}
"""
    assert _fixes(tmp_path, source, "W001") == []
