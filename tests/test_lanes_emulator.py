"""The lane emulator against the semantics CUDA and HIP document for each warp operation.

tests/lanes/selftest/intrinsics.cpp runs one case per `LANES_CASE`; the expected values are
computed here from the documents' wording (CUDA Programming Guide "Warp Shuffle Functions",
"Warp Vote Functions", "Warp Match Functions", "Cooperative Groups"; HIP
amd_warp_functions.h / amd_warp_sync_functions.h), not from the emulator's code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lanes import execute

SELFTEST = execute.LANES / "selftest" / "intrinsics.cpp"
THREADS = 128
INPUT = [3 * t + 1 for t in range(THREADS)]  # iota_input() of the self-test
KINDS = ["idx", "up", "down", "xor", "idx_sync", "up_sync", "down_sync", "xor_sync"]


def gxx() -> str:
    found = execute.have("g++")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("g++ is missing in CI")
        pytest.skip("g++ not installed")
    return found


@pytest.fixture(scope="session")
def selftest(tmp_path_factory) -> dict[int, Path]:
    gxx()
    workdir = tmp_path_factory.getbasetemp() / "lanes"
    builds = execute.build_all([lambda n=n: execute.build_emulated(SELFTEST, None, n, workdir) for n in (32, 64)])
    for build in builds:
        assert build.binary, build.error
    return {32: builds[0].binary, 64: builds[1].binary}


def run_case(selftest, lanes: int, case: str, **env) -> execute.Run:
    old = dict(os.environ)
    os.environ.update({"LANES_CASE": case, **env})
    try:
        return execute.run([str(selftest[lanes])], timeout=60)
    finally:
        os.environ.clear()
        os.environ.update(old)


def values(result: execute.Run, name: str) -> list:
    assert result.returncode == 0, result.stderr
    return result.records[name][1]


# ---- shuffles -------------------------------------------------------------------------------


def documented_source(kind: str, lane: int, arg: int, width: int, lanes: int) -> int:
    """The lane whose value `lane` receives, in the documents' words."""
    if lanes == 32:
        arg &= 31  # PTX ISA "shfl.sync": bval = b[4:0], the operand's low five bits
    segment, position = lane // width, lane % width
    start = segment * width
    if kind == "idx":  # "srcLane outside [0, width-1]: srcLane modulo width", in the own segment
        return start + arg % width
    if kind == "up":  # "the source lane index will not wrap around": below the segment, own value
        return lane if position - arg < 0 else lane - arg
    if kind == "down":  # the same at the upper end of the segment
        return lane if position + arg >= width else lane + arg
    # xor: "if they attempt to access elements from later groups of threads their own value of
    # var will be returned" (earlier segments may be read). HIP: `index >= end of segment ?
    # self : index`, then ds_bpermute reads lane index mod 64.
    source = lane ^ arg
    return lane if source >= start + width else source % lanes


@pytest.mark.parametrize("lanes", [32, 64])
@pytest.mark.parametrize("kind", KINDS)
def test_shuffle(selftest, kind: str, lanes: int) -> None:
    widths = [0, 1, 2, 16, 32] + ([64] if lanes == 64 else [])
    args = [0, 1, 3, 5, 16, 31, 32, 33, 63, 64, 100] + ([] if kind in ("up", "down", "up_sync", "down_sync") else [-1, -33])
    cases = [(arg, width) for width in widths for arg in args]
    result = run_case(selftest, lanes, "shuffle", LANES_SHUFFLE=";".join(f"{KINDS.index(kind)} {a} {w}" for a, w in cases))
    for i, (arg, width) in enumerate(cases):
        w = width or lanes
        want = []
        for t in range(THREADS):
            warp, lane = divmod(t, lanes)
            want.append(INPUT[warp * lanes + documented_source(kind.removesuffix("_sync"), lane, arg, w, lanes)])
        assert values(result, f"out{i}") == want, f"{kind} arg {arg} width {width} at {lanes} lanes"


@pytest.mark.parametrize("lanes", [32, 64])
def test_shuffle_moves_64_bit_values_whole(selftest, lanes: int) -> None:
    result = run_case(selftest, lanes, "shuffle_double")
    assert values(result, "out") == [values(result, "in")[t ^ 1] for t in range(THREADS)]


# ---- votes, ballot, active mask, match --------------------------------------------------------


def warp_bits(flags: list[int], lanes: int, t: int) -> int:
    start = t // lanes * lanes
    return sum(1 << lane for lane in range(lanes) if flags[start + lane])


@pytest.mark.parametrize("lanes", [32, 64])
def test_votes(selftest, lanes: int) -> None:
    result = run_case(selftest, lanes, "votes")
    pred = values(result, "pred")
    full = (1 << lanes) - 1
    ballot = [warp_bits(pred, lanes, t) for t in range(THREADS)]
    assert values(result, "ballot") == ballot
    assert values(result, "ballot_sync") == ballot
    assert values(result, "any") == values(result, "any_sync") == [int(b != 0) for b in ballot]
    assert values(result, "all") == values(result, "all_sync") == [int(b == full) for b in ballot]
    # The 64-lane ballot uses the upper 32 bits: a 32-bit receiver would lose them.
    assert (max(ballot) >> 32 != 0) == (lanes == 64)


@pytest.mark.parametrize("lanes", [32, 64])
def test_sync_vote_over_the_lanes_of_its_mask(selftest, lanes: int) -> None:
    result = run_case(selftest, lanes, "partial_mask_ballot")
    pred = values(result, "pred")
    want = [warp_bits(pred, lanes, t) & 0xFFFF if t % lanes < 16 else 0 for t in range(THREADS)]
    assert values(result, "out") == want


@pytest.mark.parametrize("lanes", [32, 64])
def test_activemask_is_the_branch_taken(selftest, lanes: int) -> None:
    result = run_case(selftest, lanes, "active_in_branches")
    want = [warp_bits([u % 2 == t % 2 for u in range(THREADS)], lanes, t) for t in range(THREADS)]
    assert values(result, "out") == want


@pytest.mark.parametrize("lanes", [32, 64])
def test_match(selftest, lanes: int) -> None:
    result = run_case(selftest, lanes, "match")
    keys = values(result, "keys")
    assert values(result, "any") == [warp_bits([k == keys[t] for k in keys], lanes, t) for t in range(THREADS)]
    uniform = [len({keys[u] for u in range(t // lanes * lanes, (t // lanes + 1) * lanes)}) == 1 for t in range(THREADS)]
    assert values(result, "all") == [(1 << lanes) - 1 if same else 0 for same in uniform]
    assert values(result, "all_pred") == [int(same) for same in uniform]
    assert uniform.count(True) == 64 and uniform.count(False) == 64


# ---- bit functions --------------------------------------------------------------------------


def test_bit_functions(selftest) -> None:
    result = run_case(selftest, 64, "bits")
    got = values(result, "out")
    for i, x in enumerate(values(result, "in")):
        low = x & 0xFFFFFFFF
        signed_low = low - (1 << 32) if low >> 31 else low
        want = [
            bin(low).count("1"),  # __popc: bits of the 32-bit operand only
            bin(x).count("1"),  # __popcll
            (low & -low).bit_length(),  # __ffs: 1-based position of the lowest set bit, 0 for 0
            (x & -x).bit_length(),  # __ffsll
            32 - low.bit_length() if signed_low >= 0 else 0,  # __clz of the 32-bit operand
            64 - x.bit_length(),  # __clzll
            int(f"{low:032b}"[::-1], 2),  # __brev
            int(f"{x:064b}"[::-1], 2) - (1 << 64 if x & 1 else 0),  # __brevll, read back as a signed 64-bit value
        ]
        assert got[8 * i : 8 * i + 8] == want, hex(x)


# ---- cooperative groups ---------------------------------------------------------------------


@pytest.mark.parametrize("lanes", [32, 64])
def test_tile_of_16(selftest, lanes: int) -> None:
    got = values(run_case(selftest, lanes, "tiles16"), "out")
    for t in range(THREADS):
        start, rank = t // 16 * 16, t % 16
        tile = INPUT[start : start + 16]
        want = [
            tile[3],
            tile[rank + 1] if rank + 1 < 16 else tile[rank],
            tile[rank - 2] if rank >= 2 else tile[rank],
            tile[rank ^ 4],
            sum(1 << r for r in range(16) if tile[r] % 3 == 0),  # bits by rank in the tile
            int(any(v % 7 == 0 for v in tile)),
            1,
            rank,
            16,
            t // 16,
        ]
        assert got[10 * t : 10 * t + 10] == want, f"thread {t}"


@pytest.mark.parametrize("lanes", [32, 64])
def test_coalesced_group(selftest, lanes: int) -> None:
    got = values(run_case(selftest, lanes, "coalesced"), "out")
    for t in range(THREADS):
        members = [u for u in range(t // lanes * lanes, (t // lanes + 1) * lanes) if u % 3 == 0]
        want = [len(members), members.index(t), INPUT[members[0]]] if t % 3 == 0 else [-1, -1, -1]
        assert got[3 * t : 3 * t + 3] == want, f"thread {t}"


# ---- blocks, barriers, shared memory ------------------------------------------------------


@pytest.mark.parametrize("lanes", [32, 64])
def test_barrier_and_shared_memory(selftest, lanes: int) -> None:
    result = run_case(selftest, lanes, "reverse_block")
    data = values(result, "in")
    assert values(result, "out") == [data[b * 256 + 255 - t] for b in range(3) for t in range(256)]
    assert values(run_case(selftest, lanes, "dynamic_reverse"), "out") == [INPUT[95 - t] for t in range(96)]


@pytest.mark.parametrize("lanes", [32, 64])
def test_unwritten_shared_memory_is_not_zero(selftest, lanes: int) -> None:
    # Uninitialised at each block's start: 0xff bytes, an int reads -1.
    assert values(run_case(selftest, lanes, "shared_poison"), "out") == [
        5 + b if t % 4 == 0 else 9 if (b, t % 4) == (0, 1) else -1 for b in range(2) for t in range(8)
    ]


@pytest.mark.parametrize("lanes", [32, 64])
def test_dim3_blocks_and_warps(selftest, lanes: int) -> None:
    got = values(run_case(selftest, lanes, "coordinates"), "out")
    want = []
    for block in range(4):
        for t in range(96):
            x, y, z = t % 8, t // 8 % 4, t // 32
            want += [x, y, z, block, t % lanes, t // lanes * lanes]
    assert got == want


# ---- what must be reported, not computed ---------------------------------------------------

FAULTS = {
    # case: (outcome at 32 lanes, outcome at 64 lanes)
    "fault_divergent_shuffle": ("undefined", "undefined"),
    "fault_width": ("undefined", "undefined"),
    "fault_width_64": ("undefined", "ok"),
    "fault_mask_excludes": ("mask", "mask"),
    "fault_32_bit_mask": ("ok", "mask"),
    "fault_barrier_sites": ("undefined", "undefined"),
    "fault_barrier_vs_warp": ("deadlock", "mask"),
    "fault_spin": ("deadlock", "deadlock"),
    "fault_tile_wider_than_warp": ("unsupported", "ok"),
    "fault_syncwarp_in_both_arms": ("ok", "mask"),
}


@pytest.mark.parametrize("lanes", [32, 64])
@pytest.mark.parametrize("case", sorted(FAULTS))
def test_faults_are_reported(selftest, case: str, lanes: int) -> None:
    result = run_case(selftest, lanes, case)
    want = FAULTS[case][lanes == 64]
    assert result.outcome == want, result.stderr
    if want != "ok":
        assert result.diagnostic.startswith(f"lanes: {want}: "), result.stderr
        assert "out" not in result.records, "a reported run must not give results"


@pytest.mark.parametrize("lanes", [32, 64])
def test_faults_that_run_compute_the_documented_values(selftest, lanes: int) -> None:
    # A width of 64 on 64 lanes and a 32-bit mask on 32 lanes are fine: xor 1 swaps pairs.
    case = "fault_width_64" if lanes == 64 else "fault_32_bit_mask"
    assert values(run_case(selftest, lanes, case), "out") == [t ^ 1 for t in range(THREADS)]
    if lanes == 32:  # the arms meet at their __syncwarp calls: odd lanes read the even lanes' stores
        assert values(run_case(selftest, 32, "fault_syncwarp_in_both_arms"), "out") == [
            t % 32 if t % 2 == 0 else (t - 1) % 32 + 100 for t in range(THREADS)
        ]
