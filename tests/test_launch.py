"""K rules: how block sizes are resolved from the file's constants (fixtures show the rest)."""

from __future__ import annotations

from harness import assert_findings

KERNEL = "__global__ void k(float* out) { out[threadIdx.x] = 0.f; }\n"


def test_macro_with_a_different_value_per_configuration_is_unknown(tmp_path):
    # FAST_PATH is undecidable, so THREADS may be 512: no finding rather than a guess.
    assert_findings(KERNEL + """
        #ifdef FAST_PATH
        #define THREADS 2048
        #else
        #define THREADS 512
        #endif
        void run(float* out) { k<<<1, THREADS>>>(out); }
    """, "cuda", tmp_path=tmp_path, select=("K001",))


def test_macro_with_one_value_in_every_configuration_is_known(tmp_path):
    assert_findings(KERNEL + """
        #ifdef FAST_PATH
        #define THREADS 2048
        #else
        #define THREADS (1024 * 2)  // same value
        #endif
        void run(float* out) { k<<<1, THREADS>>>(out); }
    """, "cuda", "K001", tmp_path=tmp_path, select=("K001",))


def test_value_from_a_cuda_only_branch_is_ignored(tmp_path):
    assert_findings(KERNEL + """
        #ifdef USE_ROCM
        #define THREADS 1024
        #else
        #define THREADS 2048
        #endif
        void run(float* out) { k<<<1, THREADS>>>(out); }
    """, "cuda", tmp_path=tmp_path, select=("K001",))


def test_cyclic_macros_are_unknown(tmp_path):
    result = assert_findings(KERNEL + """
        #define A (B * 2)
        #define B (A * 2)
        void run(float* out) { k<<<1, A>>>(out); }
    """, "cuda", tmp_path=tmp_path, select=("K001",))
    assert not result.problems


def test_constant_local_to_another_function_is_not_seen(tmp_path):
    assert_findings(KERNEL + """
        void setup() { constexpr int kThreads = 2048; (void)kThreads; }
        void run(float* out, int kThreads) { k<<<1, kThreads>>>(out); }
    """, "cuda", tmp_path=tmp_path, select=("K001",))


def test_block_variable_points_at_its_definition(tmp_path):
    result = assert_findings(KERNEL + """
        void run(float* out) {
          dim3 block(32, 32, 2);
          k<<<1, block>>>(out);
        }
    """, "cuda", "K001", tmp_path=tmp_path, select=("K001",))
    (finding,) = result.findings
    assert "2048 threads" in finding.message
    (related,) = finding.related
    assert related.location.start_line == 4
    assert "`dim3 block(32, 32, 2);`" in related.message


def test_constant_shared_by_launches_is_reported_once_at_its_definition(tmp_path):
    result = assert_findings(KERNEL + """
        #define THREADS 256
        void run(float* out) {
          k<<<1, THREADS>>>(out);
          k<<<2, THREADS>>>(out);
        }
    """, "cuda", "K002", tmp_path=tmp_path, select=("K002",))
    (finding,) = result.findings
    assert finding.location.start_line == 3 and "read in 2 places" in finding.message
    assert [r.location.start_line for r in finding.related] == [5, 6]


def test_wavefront_in_messages_follows_the_target(tmp_path):
    source = KERNEL + """
        void run(float* out) { k<<<1, 96>>>(out); }
    """
    (cdna,) = assert_findings(source, "cuda", "K002", tmp_path=tmp_path, select=("K002",)).findings
    assert cdna.severity.value == "note" and "idle" in cdna.message and "64 lanes" in cdna.message
    rdna = assert_findings(source, "cuda", "K002", tmp_path=tmp_path, select=("K002",), targets=("gfx1100",))
    assert rdna.findings[0].severity.value == "note" and "idle" not in rdna.findings[0].message

def test_retired_k004_still_selects_and_suppresses_k002(tmp_path):
    source = KERNEL + """
        void run(float* out) {
          k<<<1, 96>>>(out);  // portlint: ignore[K004]
          k<<<2, 32>>>(out);
        }
    """
    (finding,) = assert_findings(source, "cuda", "K002", tmp_path=tmp_path, select=("K004",)).findings
    assert finding.location.start_line == 5


def test_capped_block_is_reported_by_what_it_reaches(tmp_path):
    result = assert_findings(KERNEL + """
        void run(float* out, int n) {
          k<<<n, std::min(n, 256)>>>(out);
          k<<<n, std::min(n, 96)>>>(out);
          k<<<n, std::min(n, 2048)>>>(out);
        }
    """, "cuda", "K002", "K002", tmp_path=tmp_path, select=("K001", "K002"))
    by_line = {f.location.start_line: f for f in result.findings}
    assert set(by_line) == {5, 6}  # a cap of whole wavefronts is no fixed size: silent
    assert by_line[5].severity.value == "note" and "capped at 96 threads" in by_line[5].message
    assert by_line[6].severity.value == "error" and "can reach 2048 threads" in by_line[6].message


def test_driver_launch_block_is_its_three_arguments(tmp_path):
    result = assert_findings("""
        void run(CUfunction f, CUstream s, void** args, unsigned n) {
          cuLaunchKernel(f, n, 1, 1, 32, 3, 1, 0, s, args, nullptr);
        }
    """, "cuda", "K002", tmp_path=tmp_path, select=("K002",))
    (finding,) = result.findings
    assert "`32, 3, 1` (96 threads)" in finding.message and finding.severity.value == "note"
    assert (finding.location.start_column, finding.location.end_column) == (30, 38)  # `32, 3, 1`


ROWS_OF_32 = """\
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    __global__ void row_sums(const float* in, float* out, int cols) {{
      float v = in[(blockIdx.x * 8 + threadIdx.y) * cols + threadIdx.x];
      {reduce}
      if (threadIdx.x == 0) out[blockIdx.x * 8 + threadIdx.y] = v;
    }}
    void launch(const float* in, float* out, int rows, int cols) {{
      row_sums<<<rows / 8, dim3(32, 8)>>>(in, out, cols);
    }}
"""


def test_rows_narrower_than_a_wavefront_matter_only_where_the_kernel_observes_its_width(tmp_path):
    from portlint.finding import Severity

    # Each row reduces in a tile of 32 lanes: a wavefront holds two rows, each reduced alone
    # (K002's tuning note; no W011).
    tiled = "auto row = cg::tiled_partition<32>(cg::this_thread_block());\n" \
            "      for (int o = 16; o > 0; o /= 2) v += row.shfl_down(v, o);"
    result = assert_findings(ROWS_OF_32.format(reduce=tiled), "cuda", "K002", tmp_path=tmp_path,
                             select=("K002", "W011"))
    assert result.findings[0].severity is Severity.NOTE
    # A broadcast without a width reads lane 0 of the wavefront: row y + 1 gets row y's value.
    # W011's warning, at the same block, and no K002 note beside it (one root cause).
    wide = "v -= __shfl(v, 0);"
    result = assert_findings(ROWS_OF_32.format(reduce=wide), "cuda", "W011", tmp_path=tmp_path,
                             select=("K002", "W011"))
    assert result.findings[0].severity is Severity.WARNING
    assert "see both rows" in result.findings[0].message


