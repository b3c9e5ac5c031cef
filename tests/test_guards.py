"""Guard rules P002-P004: what decides that a chain already handles HIP."""

from __future__ import annotations

from harness import assert_findings

CUDACC_CHAIN = """
    #if defined(__CUDACC__)
    #define HOST_DEVICE __host__ __device__
    #elif defined(BUILD_FOR_MI300)
    #define HOST_DEVICE __host__ __device__
    #else
    #define HOST_DEVICE
    #endif
"""


def test_a_configured_rocm_macro_is_a_hip_arm(tmp_path):
    assert_findings(CUDACC_CHAIN, "cuda", "P003", tmp_path=tmp_path, select=("P003",))
    assert_findings(CUDACC_CHAIN, "cuda", tmp_path=tmp_path, select=("P003",),
                    rocm_macros=frozenset({"BUILD_FOR_MI300"}))


def test_arch_gate_undecidable_on_rocm_is_silent_and_advice_adds_amd_targets(tmp_path):
    # Undecidable on ROCm (FORCE_FAST may be set): not reported.
    assert_findings("""
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 || defined(FORCE_FAST)
        #define FAST 1
        #endif
    """, "cuda", tmp_path=tmp_path, select=("P002",))
    result = assert_findings("""
        #if (__CUDA_ARCH__ >= 700 || __CUDA_ARCH__ == 610) && !defined(SLOW)
        #define FAST 1
        #endif
    """, "cuda", "P002", tmp_path=tmp_path, select=("P002",))
    (finding,) = result.findings
    assert finding.message.startswith("`(__CUDA_ARCH__ >= 700 || __CUDA_ARCH__ == 610) && !defined(SLOW)` is never true")
    assert ("`#if (__CUDA_ARCH__ >= 700 || __CUDA_ARCH__ == 610) && !defined(SLOW) || "
            "defined(__gfx90a__) || defined(__gfx942__)`") in finding.fix.title


def test_renamed_platform_macro_in_a_hiprtc_option_is_fixed_in_place(tmp_path):
    result = assert_findings("""
        const char* options[] = {"-O3", "-D__HIP_PLATFORM_NVCC__=1"};
    """, "cuda", "P004", tmp_path=tmp_path, select=("P004",))
    (edit,) = result.findings[0].fix.edits
    assert edit.content == "__HIP_PLATFORM_NVIDIA__"
    assert result.findings[0].location.start_column == 36
