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


def test_the_old_nvidia_platform_name_is_a_note_and_the_old_amd_name_a_warning(tmp_path):
    """An AMD build never had `__HIP_PLATFORM_NVCC__`: its arms read the same there before ROCm
    6.0 and after. The old AMD name's arms went dead there."""
    result = assert_findings("""
        #ifdef __HIP_PLATFORM_NVCC__
        #define LANES 32
        #elif defined(__HIP_PLATFORM_HCC__)
        #define LANES 64
        #endif
    """, "cuda", "P004", "P004", tmp_path=tmp_path, select=("P004",))
    assert [(f.location.start_line, f.severity.value) for f in result.findings] == [(2, "note"), (4, "warning")]
    assert all(f.fix.edits for f in result.findings)
    # Where the file may define the name itself, the AMD build may read the test otherwise.
    result = assert_findings("""
        #if !defined(LEGACY_AMD_MARKER)
        #define __HIP_PLATFORM_NVCC__ 1
        #endif
        #ifdef __HIP_PLATFORM_NVCC__
        #define LANES 32
        #endif
    """, "cuda", "P004", tmp_path=tmp_path, select=("P004",))
    assert [(f.location.start_line, f.severity.value) for f in result.findings] == [(5, "warning")]


def _severities(tmp_path, code: str, rule: str) -> list[str]:
    result = assert_findings(code, "cuda", *([rule] * code.count("// gate")), tmp_path=tmp_path, select=(rule,))
    return [f.severity.value for f in sorted(result.findings, key=lambda f: f.location.start_line)]


def test_arch_gate_with_a_working_fallback_is_a_note_and_without_one_a_warning(tmp_path):
    """AMD compiling the generic `#else` costs speed; AMD compiling nothing, or an `#error`,
    loses the code or the build."""
    assert _severities(tmp_path, """
        __device__ float load(const float* p) {
        #if __CUDA_ARCH__ >= 800  // gate
          return __ldg(p);
        #else
          return *p;
        #endif
        }
        __device__ void wait_copies() {
        #if __CUDA_ARCH__ >= 800  // gate
          asm volatile("cp.async.wait_all;\\n" ::);
        #endif
        }
        #if __CUDA_ARCH__ >= 900  // gate
        #define TILE 128
        #else
        #error "needs sm_90"
        #endif
        #if __CUDA_ARCH__ >= 700  // gate
        #define SYNC 1
        #elif __CUDA_ARCH__ >= 600  // gate
        #define SYNC 2
        #else
        // nothing for older GPUs
        #endif
    """, "P002") == ["note", "warning", "warning", "warning", "warning"]


def test_arch_gate_whose_fallback_is_a_stub_is_a_warning(tmp_path):
    """An `#else` that only returns literals (or a name the file defines as one), or traps, is
    no alternative: AMD compiles it and the work is not done (a shuffle returning 0). A
    fallback that reads anything (an input, a global, a call's result), or a gate answering
    a capability question with `true`/`false` in both arms, stays a note."""
    assert _severities(tmp_path, """
        #define ZERO_VALUE 0.0
        __device__ double fetch(const double* p, int i) {
        #if __CUDA_ARCH__ >= 350  // gate
          return __ldg(p + i);
        #else
          return ZERO_VALUE;  // older GPUs are not supported
        #endif
        }
        __device__ double2 fetch2(const double2* p) {
        #if __CUDA_ARCH__ >= 350  // gate
          return __ldg(p);
        #else
          return make_double2(0., 0.);
        #endif
        }
        __device__ void add(float* out, float v) {
        #if __CUDA_ARCH__ >= 700  // gate
          atomicAdd(out, v);
        #else
          assert(0);
        #endif
        }
        __device__ float scale(float v, float s) {
        #if __CUDA_ARCH__ >= 800  // gate
          return __fmul_rn(v, s);
        #else
          return v * s;
        #endif
        }
        __device__ bool has_async_copy() {
        #if __CUDA_ARCH__ >= 800  // gate
          return true;
        #else
          return false;
        #endif
        }
        __device__ float first(const float* p) {
          float local = p[0];
        #if __CUDA_ARCH__ >= 800  // gate
          return __ldg(p);
        #else
          return local;
        #endif
        }
        __device__ float bias_table[4];
        __device__ float bias(int i) {
        #if __CUDA_ARCH__ >= 350  // gate
          return __ldg(&bias_table[i]);
        #else
          return bias_table[0];
        #endif
        }
        __device__ long long stamp() {
        #if __CUDA_ARCH__ >= 700  // gate
          return clock64() + 1;
        #else
          return clock64();
        #endif
        }
        __device__ int lanes() {
        #if __CUDA_ARCH__ >= 300  // gate
          return warpSize;
        #else
          return 32;
        #endif
        }
        __device__ void check(int v) {
        #if __CUDA_ARCH__ >= 600  // gate
          atomicAdd(&v, 1);
        #else
          printf("needs sm_60\\n");
          assert(false && "needs sm_60");
        #endif
        }
    """, "P002") == ["warning", "warning", "warning", "note", "note", "note", "note", "note", "warning", "warning"]


def test_version_guard_is_a_note_and_a_toolchain_test_a_warning(tmp_path):
    """A threshold on a version macro, which reads as 0 on ROCm, builds there what an older
    toolkit builds (with or without an arm in its place): code the project keeps. A test of
    the toolchain itself (`#ifdef __CUDACC__`, `#if CUDA_VERSION`) no toolkit answers so."""
    assert _severities(tmp_path, """
        #if CUDART_VERSION >= 12000  // gate
        #define STREAM_FLAGS 1
        #else
        #define STREAM_FLAGS 0
        #endif
        #if CUDA_VERSION >= 11000  // gate
        #define HAS_GRAPHS 1
        #endif
        #if CUDA_VERSION < 12000  // gate
        #define OLD_API 1
        #endif
        #if CUDA_VERSION  // gate
        #define ON_CUDA 1
        #endif
        #if defined(__CUDACC__) && __CUDACC_VER_MAJOR__ >= 11  // gate
        #define HAS_CUDA11 1
        #endif
    """, "P003") == ["note", "note", "note", "warning", "warning"]


def test_version_guard_decided_by_a_backend_switch_is_silent(tmp_path):
    """`defined(MYLIB_USE_CUDA) && CUDART_VERSION >= 12000`: the CUDA backend's switch is off
    in the ROCm build (the project tests its HIP twin too), so the version macro decides
    nothing there. Without the switch it decides."""
    guarded = """
        #if defined(MYLIB_USE_HIP)
        #include <hip/hip_runtime.h>
        #endif
        #if defined(MYLIB_USE_CUDA) && CUDART_VERSION >= 12000
        #define GRAPH_UPDATE 2
        #endif
    """
    assert_findings(guarded, "cuda", tmp_path=tmp_path, select=("P003",))
    assert_findings(guarded.replace("defined(MYLIB_USE_CUDA) && ", ""), "cuda", "P003", tmp_path=tmp_path,
                    select=("P003",))


def test_version_and_arch_guard_that_excludes_amd_from_an_older_gpu_arm(tmp_path):
    """`__CUDACC_VER_MAJOR__ < 12 && !(__CUDA_ARCH__ >= 800 || !defined(__CUDA_ARCH__))`: an
    nvcc device pass for an older GPU takes the arm, hip-clang never does; the NVIDIA-only
    macros decide that together, so the guard is reported."""
    assert_findings("""
        #if (__CUDACC_VER_MAJOR__ < 12) && !((__CUDA_ARCH__ >= 800) || !defined(__CUDA_ARCH__))
        #define NEEDS_BF16_LOADS 1
        #endif
    """, "cuda", "P003", tmp_path=tmp_path, select=("P003",))


def test_an_old_platform_name_the_rocm_build_defines_itself_holds_there(tmp_path):
    """`-D__HIP_PLATFORM_HCC__` on the ROCm build's path: the port's tests of the old name hold
    on every ROCm release, as with the project's own `#define` (`fixtures/P004/ok_project_defines_it.cu`)."""
    from portlint import engine
    from portlint.config import Config

    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(lanes LANGUAGES CXX HIP)\n"
        "add_compile_definitions(__HIP_PLATFORM_HCC__)\n"
        "set_source_files_properties(lanes.cu PROPERTIES LANGUAGE HIP)\nadd_library(lanes lanes.cu)\n")
    (tmp_path / "lanes.cu").write_text(
        "#include <hip/hip_runtime.h>\n#ifdef __HIP_PLATFORM_HCC__\n#define LANES 64\n#else\n#define LANES 32\n#endif\n"
        "__global__ void fill(int* out) { out[threadIdx.x] = LANES; }\n")
    assert engine.scan([tmp_path], Config(root=tmp_path, select=("P004",))).findings == []
    (tmp_path / "CMakeLists.txt").write_text(
        (tmp_path / "CMakeLists.txt").read_text().replace("add_compile_definitions(__HIP_PLATFORM_HCC__)\n", ""))
    assert [f.location.start_line for f in engine.scan([tmp_path], Config(root=tmp_path, select=("P004",))).findings] == [2]
