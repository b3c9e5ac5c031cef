"""W001/W003: severity and fix safety by context (fixture markers check only where findings are)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from harness import assert_findings, fix_until_stable, scan

from portlint.finding import Severity
from portlint.fix import Applicability

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _only(result):
    assert len(result.findings) == 1, [f.message for f in result.findings]
    return result.findings[0]


def _logical_note(result):
    """The one finding of a 32-lane logical warp nothing observes: a note, no edit."""
    note = _only(result)
    assert note.severity is Severity.NOTE and "logical warp" in note.message and not note.fix.edits
    return note


# ---- W001: error when the number feeds a shuffle, warning otherwise ------------------------
def test_shuffle_loop_start_is_an_error_and_lane_arithmetic_a_warning(tmp_path):
    result = assert_findings("""
        __device__ float warp_sum(float v) {
          for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);
          return v;
        }
        __global__ void k(int* out) { out[threadIdx.x / 32] = (int)warp_sum(1.f); }
    """, "cuda", "W001", "W001", tmp_path=tmp_path, select=("W001",))
    assert [f.severity for f in result.findings] == [Severity.ERROR, Severity.WARNING]


def test_warp_size_macro_is_an_error_only_when_a_shuffle_uses_it(tmp_path):
    used = assert_findings("""
        #define WARP_SIZE 32
        __device__ float warp_sum(float v) {
          for (int o = WARP_SIZE / 2; o > 0; o >>= 1) v += __shfl_down(v, o);
          return v;
        }
    """, "cuda", "W001", "W001", tmp_path=tmp_path, select=("W001",))
    definition, use = used.findings
    assert definition.location.start_line == 2 and use.location.start_line == 4
    assert [r.location.start_line for r in definition.related] == [4], "the use is a related location"
    assert [r.location.start_line for r in use.related] == [2], "the definition is the use's root cause"
    assert definition.severity is Severity.ERROR and use.severity is Severity.ERROR
    unused = assert_findings("#define WARP_SIZE 32\n", "cuda", "W001", tmp_path=tmp_path, select=("W001",))
    assert _only(unused).severity is Severity.WARNING
    assert not _only(unused).fix.is_applicable, "a #define gets advice, not an edit"


# ---- W001: `warpSize` only where it exists -------------------------------------------------
def test_fix_is_safe_in_device_code_unsafe_in_host_device_code_and_advice_on_the_host(tmp_path):
    # One file each: beside code that gets no fix, a device fix is unsafe too; and the file
    # crosses lanes somewhere, or its indices only lay out data (tests/test_fix_honesty.py).
    vote = "__device__ int vote(int p) { return __any(p); }\n"
    findings = [_only(assert_findings(vote + source, "cuda", "W001", tmp_path=tmp_path, select=("W001",)))
                for source in ("__device__ int lane_a(int tid) { return tid % 32; }",
                               "__host__ __device__ int lane_b(int tid) { return tid % 32; }",
                               "int lane_c(int tid) { return tid % 32; }")]
    kinds = [f.fix.applicability for f in findings]
    assert kinds == [Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY]
    assert "hipDeviceAttributeWarpSize" in findings[2].fix.title


def test_fix_is_unsafe_where_a_warp_helper_out_of_view_decides_the_width(tmp_path):
    # `warp_max` comes from a header: if it reduces over 32 lanes (a width-32 xor shuffle), lane
    # and warp indices widened to the wavefront would drop lanes 32-63's partials.
    result = assert_findings("""
        #include "reduce_utils.cuh"
        __device__ int vote(int p) { return __any(p); }
        __device__ float block_max(float v, float* partial) {
          int lane = threadIdx.x & 31;
          v = warp_max(v);
          if (lane == 0) partial[threadIdx.x / 64] = v;
          return v;
        }
    """, "cuda", "W001", tmp_path=tmp_path, select=("W001",))
    finding = _only(result)
    assert finding.fix.applicability is Applicability.UNSAFE and "`warp_max` is out of view" in finding.fix.title


def test_code_inside_a_conditional_block_keeps_its_function_context(tmp_path):
    result = assert_findings("""
        __global__ void k(int* out) {
        #ifndef APP_NO_STATS
          out[threadIdx.x & 31] = __any(out[0]);
        #endif
        }
    """, "cuda", "W001", tmp_path=tmp_path, select=("W001",))
    assert _only(result).fix.applicability is Applicability.SAFE


def test_shift_becomes_a_division_with_the_left_side_kept_whole(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text("__global__ void k(int* out) { out[threadIdx.x + 1 >> 5] = warpSize; }\n")
    assert fix_until_stable([path], tmp_path, ("W001",)) == 1
    assert path.read_text() == "__global__ void k(int* out) { out[(threadIdx.x + 1) / warpSize] = warpSize; }\n"


# ---- W001: what the number means ---------------------------------------------------------
def test_a_thread_index_split_by_32_tiles_a_table_where_no_warp_is_asked(tmp_path):
    # Row and column of a 32-wide table from the thread index: the same on any warp size.
    # Beside a shuffle that reaches across 32 lanes, the same split is lane and warp arithmetic.
    tiles = """
        __global__ void fill(float* table) {
          __shared__ float t[8][32];
          int row = threadIdx.x / 32;
          int col = threadIdx.x % 32;
          for (; row < 8; row += blockDim.x / 32) t[row][col] = row * col;
          __syncthreads();
          table[threadIdx.x] = t[0][threadIdx.x & 31];
        }
    """
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _logical_note(assert_findings(tiles, "cuda", "W001", tmp_path=tmp_path / "a", select=("W001",)))
    warps = tiles.replace("row * col;", "__shfl_down(row * col, 1);")
    assert_findings(warps, "cuda", "W001", "W001", "W001", "W001", tmp_path=tmp_path / "b", select=("W001",))


def test_thread_index_copied_into_a_local_is_followed_but_a_stride_loop_counter_is_not(tmp_path):
    assert_findings("""
        __global__ void k(float* q, int n) {
          const int t = threadIdx.x;
          q[t / 32] = warpSize;
          for (int i = threadIdx.x; i < n; i += blockDim.x) q[i / 32] += 1.f;
        }
    """, "cuda", "W001", tmp_path=tmp_path, select=("W001",))


def test_a_lane_or_warp_receiver_names_the_meaning_of_a_global_index(tmp_path):
    assert_findings("""
        __global__ void k(int* out, int n) {
          int gid = blockIdx.x * blockDim.x + threadIdx.x;
          int warp_id = gid / 32;
          int word = gid / 32;
          out[warp_id] = __shfl_down(word, 1);
        }
    """, "cuda", "W001", tmp_path=tmp_path, select=("W001",))


# ---- W002: a mask macro is reported once, where it is defined ----------------------------
def test_mask_macro_names_the_calls_it_reaches(tmp_path):
    result = assert_findings("""
        #define LANES_FULL_MASK 0xffffffff
        __device__ float warp_max(float v) {
          for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(LANES_FULL_MASK, v, o));
          return __shfl_sync(LANES_FULL_MASK, v, 0);
        }
    """, "cuda", "W002", tmp_path=tmp_path, select=("W002",))
    finding = _only(result)
    assert finding.location.start_line == 2
    assert [r.location.start_line for r in finding.related] == [4, 5]


# ---- W003: which edits are safe ----------------------------------------------------------
def test_widening_an_int_or_a_printed_mask_is_unsafe(tmp_path):
    result = assert_findings("""
        __device__ int votes(bool p) {
          unsigned a = __ballot(p);
          int b = __ballot(p);
          unsigned c = __ballot(p);
          printf("%x\\n", c);
          return __popc(a) + __popc(b);
        }
    """, "cuda", *["W003"] * 5, tmp_path=tmp_path, select=("W003",))
    found = [(f.location.start_line, f.matched, f.fix.applicability) for f in result.findings]
    assert found == [
        (3, "unsigned", Applicability.SAFE),
        (4, "int", Applicability.UNSAFE),  # sign extension would change __popcll on CUDA
        (5, "unsigned", Applicability.UNSAFE),  # widening would break the %x format
        (7, "__popc", Applicability.SAFE),
        (7, "__popc", Applicability.UNSAFE),  # of the int
    ]


def test_clz_of_a_mask_is_reported_with_an_unsafe_rewrite(tmp_path):
    result = assert_findings("""
        __device__ int last_voter(bool p) { return 31 - __clz(__ballot_sync(~0ull, p)); }
    """, "cuda", "W003", tmp_path=tmp_path, select=("W003",))
    finding = _only(result)
    assert finding.severity is Severity.ERROR
    assert finding.fix.applicability is Applicability.UNSAFE and "63 - __clzll" in finding.fix.title


def test_fixed_masks_compile_as_unsigned_long_long(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent("""\
        __device__ int rank(bool p, int lane) {
          unsigned m = __ballot(p);
          return __popc(m & ((1u << lane) - 1));
        }
    """))
    fix_until_stable([path], tmp_path, ("W003",), unsafe=False)
    assert path.read_text() == textwrap.dedent("""\
        __device__ int rank(bool p, int lane) {
          unsigned long long m = __ballot(p);
          return __popcll(m & ((1ull << lane) - 1));
        }
    """)


# ---- W005: only divergent code is a warning ----------------------------------------------
def test_syncwarp_is_a_note_at_top_level_and_a_warning_in_a_divergent_branch(tmp_path):
    result = assert_findings("""
        __device__ void stage(float* s, int lane) {
          s[lane] = 1.0f;
          __syncwarp();
          if (lane < 16) __syncwarp();
        }
    """, "cuda", "W005", "W005", tmp_path=tmp_path, select=("W005",))
    assert [f.severity for f in result.findings] == [Severity.NOTE, Severity.WARNING]
    assert [r.location.start_line for r in result.findings[1].related] == [5]


def test_an_octal_one_shifted_by_a_lane_is_a_narrow_mask(tmp_path):
    result = assert_findings("""
        __device__ unsigned long long bit(int lane) { return 01 << lane; }
    """, "cuda", "W003", tmp_path=tmp_path, select=("W003",))
    assert not result.problems
    assert "01 << lane" in _only(result).message


def test_a_wmma_file_is_one_finding_with_its_uses_related(tmp_path):
    # The file is ported to rocWMMA as a whole: one finding at its first live use, the other
    # uses listed under it; a use only the CUDA build compiles is neither.
    result = assert_findings("""
        #include <mma.h>
        __global__ void k(const half* a, float* c) {
          nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
          nvcuda::wmma::fill_fragment(acc, 0.0f);
        #ifndef __HIP_PLATFORM_AMD__
          nvcuda::wmma::store_matrix_sync(c, acc, 16, nvcuda::wmma::mem_row_major);
        #endif
        }
    """, "cuda", "W010", tmp_path=tmp_path, select=("W010",))
    (finding,) = result.findings
    assert finding.location.start_line == 2 and "2 more uses" in finding.message
    assert [r.location.start_line for r in finding.related] == [4, 5]


# ---- the logical-warp model: a 32 counts where something observes the wavefront's width ----
def test_a_32_lane_index_is_reported_with_what_observes_it_and_not_on_wave32_targets(tmp_path):
    source = """
        __global__ void k(const float* in, float* out) {
          const int lane = threadIdx.x % 32;
          const float v = in[threadIdx.x];
          out[threadIdx.x] = lane + __shfl(v, 0);
        }
    """
    (tmp_path / "cdna").mkdir()
    (tmp_path / "rdna").mkdir()
    (tmp_path / "xor").mkdir()
    finding = _only(assert_findings(source, "cuda", "W001", tmp_path=tmp_path / "cdna", select=("W001",)))
    assert [(r.location.start_line, "__shfl" in r.message) for r in finding.related] == [(5, True)]
    # On wave32 parts the hardware width is the logical one: nothing observes 64 lanes.
    assert_findings(source, "cuda", tmp_path=tmp_path / "rdna", select=("W001",), targets=("gfx1100",))
    # A xor shuffle stays in its 32 lanes: the same index is a logical warp, right on AMD.
    _logical_note(assert_findings(source.replace("__shfl(v, 0)", "__shfl_xor(v, 1)"), "cuda", "W001",
                                  tmp_path=tmp_path / "xor", select=("W001",)))


def test_a_launch_with_warp_size_threads_counts_where_the_launched_kernel_observes(tmp_path):
    source = """
        #define WARP_SIZE 32
        __global__ void votes(const int* in, unsigned long long* out) { out[blockIdx.x] = __ballot(in[threadIdx.x] > 0); }
        __global__ void copy(const int* in, int* out) { out[threadIdx.x] = in[threadIdx.x]; }
        void run(const int* in, unsigned long long* v, int* c) {
          votes<<<4, WARP_SIZE>>>(in, v);
          copy<<<4, WARP_SIZE>>>(in, c);
        }
    """
    (tmp_path / "votes").mkdir()
    (tmp_path / "copy").mkdir()
    definition, launch = assert_findings(source, "cuda", "W001", "W001", tmp_path=tmp_path / "votes",
                                         select=("W001",)).findings
    assert definition.location.start_line == 2
    assert [r.location.start_line for r in definition.related] == [6], "the launch of the kernel that votes"
    assert launch.location.start_line == 6 and launch.severity is not Severity.NOTE
    _logical_note(assert_findings(source.replace("votes<<<4, WARP_SIZE>>>(in, v);", ""), "cuda", "W001",
                                  tmp_path=tmp_path / "copy", select=("W001",)))


def test_narrow_mask_variable_names_its_uses(tmp_path):
    result = assert_findings("""
        __device__ int count_done(bool done) {
          unsigned votes = __ballot(done);
          return __popc(votes) + (votes & 1);
        }
    """, "cuda", "W003", "W003", tmp_path=tmp_path, select=("W003",))
    declaration = next(f for f in result.findings if f.location.start_line == 3)
    assert [(r.location.start_line, r.location.start_column) for r in declaration.related] == [(4, 17), (4, 27)]


def test_a_narrow_mask_variable_stored_to_again_names_each_store(tmp_path):
    # A second vote into the same 32-bit variable truncates again: related, with the reads.
    result = assert_findings("""
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        __global__ void split(const int* in, int* out, int pivot) {
          cg::coalesced_group active = cg::coalesced_threads();
          unsigned int above = active.ballot(in[threadIdx.x] > pivot);
          above = active.ballot(in[threadIdx.x] >= pivot);
          out[threadIdx.x] = above & 1;
        }
    """, "cuda", "W003", tmp_path=tmp_path, select=("W003",))
    (declaration,) = result.findings
    assert [(r.location.start_line, r.message) for r in declaration.related] == [
        (7, "`above` is stored to here"), (8, "`above` is used here")]


def test_a_mask_macro_another_file_defines_is_a_note_at_its_uses(tmp_path):
    # The definition is the error (the common header's own W002); each file passing it on
    # gets one note, its other uses related, so the lines that compute on 32 lanes show.
    (tmp_path / "common.cuh").write_text("#pragma once\n#define OPS_FULL_WARP_MASK 0xffffffff\n")
    (tmp_path / "ops.cu").write_text(
        '#include "common.cuh"\n'
        "__device__ float warp_max(float v) {\n"
        "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(OPS_FULL_WARP_MASK, v, o));\n"
        "  return __shfl_sync(OPS_FULL_WARP_MASK, v, 0);\n"
        "}\n")
    found = scan([tmp_path], tmp_path, select=("W002",)).findings
    definition, note = sorted(found, key=lambda f: f.path)
    assert definition.path.endswith("common.cuh") and definition.severity is Severity.ERROR
    assert note.path.endswith("ops.cu") and note.severity is Severity.NOTE and note.location.start_line == 3
    assert [r.location.start_line for r in note.related] == [4]


def test_a_logical_warps_note_names_the_shared_slots_its_groups_index(tmp_path):
    # A slot per 32-lane group goes with the grouping: the note lists the `__shared__` arrays
    # indexed by a group's number (a variable holding it, or the expression itself).
    result = assert_findings("""
        __global__ void block_sum(const float* in, float* out) {
          __shared__ float partial[32];
          __shared__ float staged[8][33];
          __shared__ float unrelated[256];
          int warp = threadIdx.x / 32;
          float v = in[threadIdx.x];
          for (int o = 16; o > 0; o /= 2) v += __shfl_xor(v, o, 32);
          partial[warp] = v;
          staged[threadIdx.x >> 5][0] = v;
          unrelated[threadIdx.x] = v;
          __syncthreads();
          if (threadIdx.x == 0) out[blockIdx.x] = partial[0] + staged[1][0] + unrelated[2];
        }
    """, "cuda", "W001", tmp_path=tmp_path, select=("W001",))
    (note,) = result.findings
    assert note.severity is Severity.NOTE
    slots = [(r.location.start_line, r.message) for r in note.related if "slot" in r.message]
    assert slots == [(3, "`partial` keeps a slot per 32-lane group"), (4, "`staged` keeps a slot per 32-lane group")]


def test_a_logical_tiles_note_names_the_slots_its_group_rank_indexes(tmp_path):
    result = assert_findings("""
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        __global__ void block_sum(const float* in, float* out) {
          cg::thread_block block = cg::this_thread_block();
          cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
          __shared__ float partial[32];
          float v = in[threadIdx.x];
          for (int o = 16; o > 0; o /= 2) v += tile.shfl_xor(v, o);
          partial[tile.meta_group_rank()] = v;
          block.sync();
          if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
        }
    """, "cuda", "W006", tmp_path=tmp_path, select=("W006",))
    (note,) = result.findings
    assert [(r.location.start_line, r.message) for r in note.related] == [
        (7, "`partial` keeps a slot per 32-lane group")]


def test_a_64_bit_mask_of_32_lanes_that_only_shuffles_read_is_a_note(tmp_path):
    # HIP's `_sync` shuffles compute without their mask; only the mask check of a build
    # without NDEBUG reads it. A vote computes with it: the error comes back.
    (tmp_path / "common.cuh").write_text("#pragma once\n#define OPS_FULL_WARP_MASK 0xffffffffull\n")
    body = ('#include "common.cuh"\n'
            "__device__ float warp_max(float v) {\n"
            "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(OPS_FULL_WARP_MASK, v, o, 32));\n"
            "  return __shfl_sync(OPS_FULL_WARP_MASK, v, 0, 32);\n"
            "}\n")
    (tmp_path / "ops.cu").write_text(body)
    definition = next(f for f in scan([tmp_path], tmp_path, select=("W002",)).findings if f.path.endswith(".cuh"))
    assert definition.severity is Severity.NOTE and "NDEBUG" in definition.message
    (tmp_path / "ops.cu").write_text(body + "__device__ bool any_of(bool p) { return __ballot_sync(OPS_FULL_WARP_MASK, p); }\n")
    definition = next(f for f in scan([tmp_path], tmp_path, select=("W002",)).findings if f.path.endswith(".cuh"))
    assert definition.severity is not Severity.NOTE and "only lanes 0–31 are set" in definition.message


TAIL_HELPER = """\
    template <typename T>
    __device__ T block_tail(T* scratch, T total) {{
      const int tid = threadIdx.x;
      {guard}{{
        total = total + scratch[tid + 32];
        for (int i = 16; i > 0; i >>= 1) total = total + __shfl_down(total, i, 32);
      }}
      return total;
    }}
"""


def test_a_helper_whose_shuffles_run_on_the_first_32_threads_keeps_its_result_there(tmp_path):
    # Nothing here calls the helper: its callers are out of view (a header declares it for
    # them; a template no file names at all is another matter, see
    # test_uninstantiated_templates.py). Run by the block's first 32 threads only, its result
    # lives in lanes 0-31 on any wavefront (the lane emulator runs fixture
    # W001/ok_block_into_lanes.cu so): notes. Run by every lane, with no lane taken within 32,
    # a caller may read it as the wavefront's: warnings.
    (tmp_path / "tail.h").write_text("template <typename T>\n__device__ T block_tail(T* scratch, T total);\n")
    guarded = assert_findings(TAIL_HELPER.format(guard="if (tid < 32) "), "cuda", "W001", "W004",
                              tmp_path=tmp_path, select=("W001", "W004"))
    assert {f.severity for f in guarded.findings} == {Severity.NOTE}
    everyone = assert_findings(TAIL_HELPER.format(guard=""), "cuda", "W004", tmp_path=tmp_path,
                               select=("W001", "W004"))
    assert everyone.findings[0].severity is Severity.WARNING


def test_a_tile_sized_by_a_template_parameter_is_as_wide_as_its_instantiations(tmp_path):
    # `thread_block_tile<kTile>`: the file's launches give kTile 16 and 32, so the broadcast
    # stays in the tile (fixture W001/ok_template_tile.cu runs both on the lane emulator). A
    # launch whose width is not a constant here leaves the tile's width unknown: the
    # broadcast may span the wavefront, and the `% 32` beside it is reported.
    kernel = (FIXTURES / "W001" / "ok_template_tile.cu").read_text()
    unknown = kernel.replace("centre_on_first<32><<<", "centre_on_first<kAny><<<").replace(
        "void centre(", "template <int kAny>\nvoid centre(")
    result = assert_findings(unknown, "cuda", "W001", tmp_path=tmp_path, select=("W001",))
    assert result.findings[0].severity is not Severity.NOTE


# ---- W008: code the parse could not place ---------------------------------------------------
def test_c10_warp_size_in_a_kernel_the_parse_loses_is_not_taken_for_file_scope(tmp_path):
    # A template parameter list split across `#if` arms: the grammar loses the kernel around
    # its body. Its `__shared__` bound is device code (PyTorch's device pass has a constant
    # `C10_WARP_SIZE`), not a file-scope constant of the host pass; the scan says it could
    # not parse the file instead.
    result = assert_findings("""
        #include <c10/macros/Macros.h>
        template <int THREADS,
        #if defined(WITH_RELU)
                  bool RELU,
        #endif
                  int OCCUPANCY>
        __global__ __launch_bounds__(THREADS, OCCUPANCY) void block_sums(float* out) {
          __shared__ float smem[THREADS / C10_WARP_SIZE];
          smem[threadIdx.x / C10_WARP_SIZE] = out[threadIdx.x];
        }
    """, "cuda", tmp_path=tmp_path, select=("W008",))
    assert any("could not parse" in p.message for p in result.problems)
    # At file scope the same bound is the host pass's, which has no constant there.
    assert_findings("""
        #include <c10/macros/Macros.h>
        constexpr int kSlots = 256 / C10_WARP_SIZE;
    """, "cuda", "W008", tmp_path=tmp_path, select=("W008",))


def test_c10_warp_size_on_the_host_is_pytorchs_unless_the_project_defines_it(tmp_path):
    # PyTorch's name, read at run time on the host: since PyTorch 2.9 the device's width, a
    # note. The project's own `#define C10_WARP_SIZE warpSize`, in the file or in a header it
    # includes: the host pass of ROCm 7 has no `warpSize`, an error.
    (tmp_path / "csrc").mkdir()
    (tmp_path / "launch.cu").write_text("int blocks_for(int n) { return (n + C10_WARP_SIZE - 1) / C10_WARP_SIZE; }\n")
    findings = scan([tmp_path], tmp_path, select=("W008",)).findings
    assert findings and all(f.severity is Severity.NOTE for f in findings)
    (tmp_path / "csrc" / "compat.h").write_text("#pragma once\n#define C10_WARP_SIZE warpSize\n")
    (tmp_path / "launch.cu").write_text('#include "csrc/compat.h"\n' + (tmp_path / "launch.cu").read_text())
    findings = scan([tmp_path], tmp_path, select=("W008",)).findings
    assert findings and all(f.severity is not Severity.NOTE for f in findings)
    # Defined per pass (the host's own 32): the project's value, not PyTorch's.
    (tmp_path / "csrc" / "compat.h").write_text(
        "#pragma once\n#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)\n"
        "#define C10_WARP_SIZE warpSize\n#else\n#define C10_WARP_SIZE 32\n#endif\n")
    findings = scan([tmp_path], tmp_path, select=("W008",)).findings
    assert findings and all(f.severity is not Severity.NOTE for f in findings)


# A block reduction that tests the hardware width at run time: the 32-lane tail in the
# `else` of `if (warpSize >= 64)` runs only where the warp has 32 lanes.
_WIDTH_DISPATCH = """\
#include <hip/hip_runtime.h>
template <unsigned int blockSize, typename T>
__device__ void warpReduce32(volatile T* data, int tid) {
  if (blockSize >= 64) data[tid] += data[tid + 32];
  if (blockSize >= 32) data[tid] += data[tid + 16];
  if (blockSize >= 16) data[tid] += data[tid + 8];
  if (blockSize >= 8) data[tid] += data[tid + 4];
  if (blockSize >= 4) data[tid] += data[tid + 2];
  if (blockSize >= 2) data[tid] += data[tid + 1];
}
template <unsigned int blockSize, typename T>
__device__ void warpReduce64(volatile T* data, int tid) {
  if (blockSize >= 128) data[tid] += data[tid + 64];
  warpReduce32<blockSize>(data, tid);
}
template <unsigned int blockSize, typename T>
__device__ void blockReduceSum(T* data, T& sum) {
  int tid = threadIdx.x;
  if (blockSize >= 256) { if (tid < 128) { data[tid] += data[tid + 128]; } __syncthreads(); }
  if (WIDTH_TEST) {
    if (tid < 64) warpReduce64<blockSize>(data, tid);
  } else {
    if (blockSize >= 128) { if (tid < 64) { data[tid] += data[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduce32<blockSize>(data, tid);
  }
  if (tid == 0) sum = data[0];
}
__global__ void k(float* in, float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float r;
  blockReduceSum<256>(s, r);
  if (threadIdx.x == 0) *out = r;
}
"""


@pytest.mark.parametrize("test", ["warpSize >= 64", "64 <= warpSize", "!(warpSize < 64)", "warpSize > 32 || blockSize == 0"])
def test_code_only_a_32_lane_warp_runs_is_no_observed_32(tmp_path: Path, test: str) -> None:
    """The `tid < 32` of the arm that runs only where `warpSize` is below 64 is no place of
    the warning (a wave32 target's reading: its 32 is the hardware's); the tail the 64-lane
    arm also reaches stays reported, at its fold. (A HIP source: its `warpSize` is the
    hardware's.)"""
    (tmp_path / "r.cu").write_text(_WIDTH_DISPATCH.replace("WIDTH_TEST", test))
    findings = [f for f in scan([tmp_path / "r.cu"], tmp_path, select=("W001",)).findings]
    narrow_arm = _WIDTH_DISPATCH.splitlines().index("    if (tid < 32) warpReduce32<blockSize>(data, tid);") + 1
    warnings = [f for f in findings if f.severity is Severity.WARNING]
    assert [f.location.start_line for f in warnings] == [4]  # the fold of `warpReduce32`, which `warpReduce64` reaches too
    assert narrow_arm not in {r.location.start_line for f in warnings for r in f.related}
    assert all(f.severity is Severity.NOTE for f in findings if f.location.start_line == narrow_arm)
