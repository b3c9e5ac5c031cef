"""The ROCm-path model: which code is compiled for ROCm, CUDA-only, or the port itself."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from portlint import rocm_path
from portlint.rocm_path import Status
from portlint.source import SourceFile


def statuses(src: str, language: str = "cuda", macros: frozenset[str] = frozenset()) -> dict[str, Status]:
    """The status of each line holding a `@name` marker."""
    src = textwrap.dedent(src)
    source = SourceFile({"cuda": "x.cu", "cmake": "CMakeLists.txt", "python": "setup.py"}[language],
                        language, src.encode())
    model = rocm_path.build(source, macros)
    out = {}
    for line in src.splitlines(keepends=True):
        if "@" in line:
            name = line.split("@", 1)[1].split()[0]
            out[name] = model.status(src.encode().index(line.encode()) + line.index("@"))
    return out


@pytest.mark.parametrize(
    "src, expected",
    [
        ("#ifndef USE_ROCM\n// @a\n#else\n// @b\n#endif\n", {"a": Status.DEAD, "b": Status.PORT}),
        ("#if defined(__HIP_PLATFORM_AMD__)\n// @a\n#else\n// @b\n#endif\n", {"a": Status.PORT, "b": Status.DEAD}),
        ("#if !defined(__HIP_PLATFORM_AMD__)\n// @a\n#endif\n", {"a": Status.DEAD}),
        # The device-pass test: never true on ROCm; its else arm is live host and device code.
        ("#ifdef __CUDA_ARCH__\n// @a\n#else\n// @b\n#endif\n", {"a": Status.DEAD, "b": Status.LIVE}),
        ("#if __CUDA_ARCH__ >= 800\n// @a\n#endif\n", {"a": Status.DEAD}),
        ("#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)\n// @a\n#else\n// @b\n#endif\n",
         {"a": Status.LIVE, "b": Status.LIVE}),
        # A CUDA arm before a ROCm arm is that arm's CUDA alternative.
        ("#if defined(USE_CUDA)\n// @a\n#elif defined(USE_ROCM)\n// @b\n#else\n// @c\n#endif\n",
         {"a": Status.DEAD, "b": Status.PORT, "c": Status.DEAD}),
        # AMD target macros: only hip-clang's device pass for that target defines them.
        ("#if defined(__gfx942__) || defined(__gfx90a__)\n// @a\n#else\n// @b\n#endif\n",
         {"a": Status.PORT, "b": Status.LIVE}),
        ("#if defined(__GFX9__)\n// @a\n#elif defined(__gfx1100__)\n// @b\n#endif\n",
         {"a": Status.PORT, "b": Status.PORT}),
        ("#ifdef __gfx90a__\n// @a\n#endif\n", {"a": Status.PORT}),
        # Undecidable conditions count as live: header guards, feature macros.
        ("#ifndef MY_HEADER_H\n#define MY_HEADER_H\n// @a\n#endif\n", {"a": Status.LIVE}),
        ("#if FOO > 2\n// @a\n#endif\n", {"a": Status.LIVE}),
        ("#if defined(__HIPCC__) || defined(__CUDACC__)\n// @a\n#endif\n", {"a": Status.LIVE}),
        ("#ifdef USE_ROCM\n#ifndef FOO\n// @a\n#endif\n#endif\n", {"a": Status.PORT}),
        ("#ifdef USE_ROCM\n#else\n#ifdef FOO\n// @a\n#endif\n#endif\n", {"a": Status.DEAD}),
        ("#if CUDA_VERSION >= 11000\n// @a\n#endif\n", {"a": Status.DEAD}),
        # C octal literals (glibc headers have them): 010 is 8.
        ("#if 010 != 8\n// @a\n#else\n// @b\n#endif\n", {"a": Status.DEAD, "b": Status.LIVE}),
    ],
)
def test_preprocessor(src: str, expected: dict) -> None:
    assert statuses(src) == expected


def test_project_rocm_macros_from_config() -> None:
    src = "#ifdef GGML_USE_HIP\n// @a\n#else\n// @b\n#endif\n"
    assert statuses(src) == {"a": Status.LIVE, "b": Status.LIVE}
    assert statuses(src, macros=frozenset({"GGML_USE_HIP"})) == {"a": Status.PORT, "b": Status.DEAD}


def test_cmake_branches() -> None:
    src = """\
    if(USE_ROCM)
      # @a
    else()
      # @b
    endif()
    if(NOT USE_ROCM)
      # @c
    endif()
    if(CUDAToolkit_FOUND)
      # @d
    elseif(HIP_FOUND)
      # @e
    endif()
    if(CUDAToolkit_FOUND)
      # @f
    endif()
    if(GPU_BACKEND STREQUAL "HIP")
      # @g
    endif()
    """
    assert statuses(src, "cmake") == {
        "a": Status.PORT, "b": Status.DEAD, "c": Status.DEAD, "d": Status.DEAD,
        "e": Status.PORT, "f": Status.LIVE, "g": Status.PORT,
    }


def test_cmake_return_ends_the_rest_for_the_build_that_surely_reaches_it() -> None:
    # A `return()` the ROCm build surely reaches ends its function or list file for it (not
    # the configure run: the caller goes on). Not one in an arm only ROCm takes by a guess
    # from a name that says HIP (`if(ARG_HIP_SOURCES)`, an include guard on a HIP target).
    src = """\
    option(USE_CUDA "CUDA backend" OFF)
    option(USE_HIP "HIP backend" OFF)
    function(add_gpu_library target)
      add_library(${target} ${ARGN})
      if(NOT USE_CUDA OR NOT ARGN)
        return()
      endif()
      # @c
    endfunction()
    function(add_tool target)
      if(NOT BUILD_TOOLS)
        return()
      endif()
      # @d
    endfunction()
    function(add_kernels target)
      if(ARG_HIP_SOURCES)
        return()
      endif()
      # @f
    endfunction()
    if(TARGET hip_kernels)
      return()
    endif()
    # @e
    """
    assert statuses(src, "cmake") == {"c": Status.DEAD, "d": Status.LIVE, "f": Status.LIVE, "e": Status.LIVE}


def test_setup_py_branches() -> None:
    src = """\
    import torch
    from torch.utils.cpp_extension import IS_HIP_EXTENSION
    if torch.version.hip:
        a = 1  # @a
    else:
        b = 1  # @b
    if IS_HIP_EXTENSION:
        c = 1  # @c
    elif torch.version.cuda is not None:
        d = 1  # @d
    if torch.version.cuda:
        e = 1  # @e
    if not IS_HIP_EXTENSION:
        f = 1  # @f
    args = ["-DUSE_ROCM"] if IS_HIP_EXTENSION else ["-gencode"]  # @g
    if os.environ.get("FAST"):
        h = 1  # @h
    """
    got = statuses(src, "python")
    assert got == {"a": Status.PORT, "b": Status.DEAD, "c": Status.PORT, "d": Status.DEAD,
                   "e": Status.DEAD, "f": Status.DEAD, "g": Status.LIVE, "h": Status.LIVE}


def test_cmake_backend_option_decides_later_switches() -> None:
    # A cache string compared with platform names sets switches; a switch set OFF in the arm
    # a ROCm build takes is dead there, whatever its name says.
    src = """\
    set(GPU_BACKEND "cpu" CACHE STRING "cpu, cuda or hip")
    if(${GPU_BACKEND} STREQUAL "cuda")
      set(WITH_NV ON)
      set(WITH_AMD OFF)
    elseif(${GPU_BACKEND} STREQUAL "hip")
      set(WITH_NV OFF)
      set(WITH_AMD ON)
    else()
      set(WITH_NV OFF)
      set(WITH_AMD OFF)
    endif()
    if(WITH_NV)
      # @a
    endif()
    if(WITH_AMD)
      # @b
    endif()
    if(NOT GPU_BACKEND STREQUAL "cuda")
      # @c
    endif()
    if(GPU_BACKEND MATCHES "^(hip|rocm)$")
      # @d
    endif()
    option(ENABLE_FAST "fast" OFF)
    if(ENABLE_FAST)
      # @e
    endif()
    set(LEVEL 2)
    if(SOMETHING_UNKNOWN)
      set(LEVEL 3)
    endif()
    if(LEVEL EQUAL 2)
      # @f
    endif()
    """
    assert statuses(src, "cmake") == {
        "a": Status.DEAD, "b": Status.PORT, "c": Status.PORT, "d": Status.PORT, "e": Status.LIVE, "f": Status.LIVE,
    }


def test_setup_py_runtime_guards() -> None:
    src = """\
    import os, torch
    from torch.utils.cpp_extension import CUDA_HOME

    def _is_hip():
        return torch.version.hip is not None

    def building_for_nvidia(self):
        if torch.version.hip:
            return False
        return True

    NV_BUILD = not _is_hip()
    if CUDA_HOME is not None:
        a = 1  # @a
    if _is_hip():
        b = 1  # @b
    if NV_BUILD:
        c = 1  # @c
    if self.building_for_nvidia():
        d = 1  # @d
    if os.getenv("CUDA_HOME"):
        e = 1  # @e
    if torch.cuda.is_available() and torch.version.hip:
        f = 1  # @f
    if CUDA_HOME is None:
        g = 1  # @g
    """
    assert statuses(src, "python") == {"a": Status.DEAD, "b": Status.PORT, "c": Status.DEAD, "d": Status.DEAD,
                                       "e": Status.DEAD, "f": Status.PORT, "g": Status.PORT}


def test_setup_py_flags_set_after_a_default() -> None:
    # A flag given a default and then set once by a test, whatever its name says.
    src = """\
    import torch

    on_amd = False
    try:
        from torch.utils.cpp_extension import ROCM_HOME
        on_amd = True if ((torch.version.hip is not None) and (ROCM_HOME is not None)) else False
    except ImportError:
        pass
    vendor_b = False
    if torch.version.hip:
        vendor_b = True
    twice = False
    twice = torch.version.hip is not None
    twice = some_other_test()
    if on_amd:
        a = 1  # @a
    if vendor_b:
        b = 1  # @b
    if not vendor_b:
        c = 1  # @c
    if twice:
        d = 1  # @d
    """
    assert statuses(src, "python") == {"a": Status.PORT, "b": Status.PORT, "c": Status.DEAD, "d": Status.LIVE}


def test_project_rocm_macro_is_a_whole_name_in_build_conditions() -> None:
    src = "if(FAST)\n  # @a\nendif()\nif(FAST_MATH)\n  # @b\nendif()\n"
    assert statuses(src, "cmake", macros=frozenset({"FAST"})) == {"a": Status.PORT, "b": Status.LIVE}
def test_a_function_calling_an_amdgpu_builtin_is_the_port_itself() -> None:
    found = statuses("""
        __device__ float4 tile(float a, float b, float4 c) {
          return __builtin_amdgcn_mfma_f32_4x4x1f32(a, b, c, 0, 0, 0);  // @mfma
        }
        __device__ int lane() { return threadIdx.x % 32; }  // @plain
    """)
    assert found == {"mfma": Status.PORT, "plain": Status.LIVE}


def test_a_conditional_the_parse_lost_is_read_from_its_directives() -> None:
    # Macro calls without `;` before `#ifdef` leave the conditional inside an ERROR node; its
    # arms are judged all the same.
    src = """
        #define REGISTER(T) template <> const char* label<T>() { return #T; }
        REGISTER(int)
        REGISTER(vec<elem::wide>)
        #ifdef __HIP_PLATFORM_AMD__
        REGISTER(hip_type)   // @rocm
        #else
        REGISTER(cuda_type)  // @cuda
        #endif
        REGISTER(float)      // @after
    """
    assert SourceFile("x.cu", "cuda", textwrap.dedent(src).encode()).tree.root_node.has_error  # the parse lost it
    assert statuses(src) == {"rocm": Status.PORT, "cuda": Status.DEAD, "after": Status.LIVE}


def test_fp8_names_in_a_cuda_arm_the_parse_lost_are_not_reported(tmp_path) -> None:
    from harness import scan
    text = textwrap.dedent("""
        #include <hip/hip_fp8.h>
        #define REGISTER(T) template <> const char* label<T>() { return #T; }
        REGISTER(int)
        REGISTER(vec<elem::wide>)
        #ifdef __HIP_PLATFORM_AMD__
        REGISTER(__hip_fp8_e4m3_fnuz)
        #else
        REGISTER(__nv_fp8_e4m3)
        #endif
        REGISTER(__nv_fp8_e5m2)
    """)
    (tmp_path / "labels.cu").write_text(text)
    result = scan([tmp_path / "labels.cu"], tmp_path, select=("N003",))
    assert [f.location.start_line for f in result.findings] == [text.splitlines().index("REGISTER(__nv_fp8_e5m2)") + 1]


ENV_REPORT = '''\
import subprocess

import torch


def nvcc_version():
    from torch.utils.cpp_extension import CUDA_HOME
    return subprocess.check_output([CUDA_HOME + "/bin/nvcc", "-V"], text=True).split()[-1]


def toolkit_line():
    return f"toolkit {nvcc_version()} at {torch.utils.cpp_extension.CUDA_HOME}"


def report():
    hip = getattr(torch.version, "hip", None)
    return [("torch", torch.__version__), ("nvcc", None if hip else toolkit_line())]


def gpu_name():
    major, _ = torch.cuda.get_device_capability()
    return "Hopper" if major == 9 else "other"


def cuda_root(tries=2):
    return torch.utils.cpp_extension.CUDA_HOME if tries == 0 else cuda_root(tries - 1)
'''


@pytest.mark.parametrize("elsewhere, expected", [
    # `nvcc_version` and `toolkit_line` run only where `torch.version.hip` is None: what they
    # hold is no ROCm hazard. `gpu_name` and `cuda_root` are never called here but by
    # themselves (an entry point, another module may call them): their hazards stand.
    ({}, [("B004", "cuda_root"), ("R001", "gpu_name")]),
    # Another module of the scan names the helper: it may call it on ROCm.
    ({"cli.py": "from report_env import toolkit_line\nprint(toolkit_line())\n"},
     [("B004", "cuda_root"), ("B004", "toolkit_line"), ("R001", "gpu_name")]),
    # The test is what decides, not the helper's name: taken on ROCm too, the call is live.
    ({"report_env.py": ENV_REPORT.replace('None if hip else toolkit_line()', 'toolkit_line()')},
     [("B004", "cuda_root"), ("B004", "toolkit_line"), ("R001", "gpu_name"), ("Y002", "nvcc_version")]),
])
def test_a_python_function_called_only_off_rocm_has_no_rocm_hazard(tmp_path, elsewhere, expected) -> None:
    from harness import scan
    files = {"report_env.py": ENV_REPORT, **elsewhere}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = scan([tmp_path], tmp_path, select=("B004", "Y002", "R001")).findings
    lines = (tmp_path / "report_env.py").read_text().splitlines()
    in_function = {f: next(line.split("(")[0][4:] for line in reversed(lines[:f.location.start_line])
                           if line.startswith("def ")) for f in found}
    assert sorted((f.code, in_function[f]) for f in found) == expected


# A benchmark directory's CMake file: a function links cuBLAS (C003) and is called only in
# the CUDA backend's arm; the HIP backend's arm calls its own twin.
BENCH_CMAKE = '''\
function(add_blas_bench name)
  add_executable(${name} bench.cpp)
  target_link_libraries(${name} PRIVATE CUDA::cublas)
endfunction()

function(add_hipblas_bench name)
  add_executable(${name} bench.cpp)
  target_link_libraries(${name} PRIVATE roc::hipblas)
endfunction()

if(APP_BUILD_CUDA)
  add_blas_bench(gemm_bench)
endif()
if(APP_BUILD_HIP)
  add_hipblas_bench(gemm_bench)
endif()
'''


@pytest.mark.parametrize("bench, elsewhere, reported", [
    (BENCH_CMAKE, {}, False),
    # Called on the ROCm path too (any spelling: CMake command names ignore case).
    (BENCH_CMAKE + "ADD_BLAS_BENCH(gemm_all)\n", {}, True),
    # Another CMake file of the scan names it: a build may call it there.
    (BENCH_CMAKE, {"tools/CMakeLists.txt": "add_blas_bench(tool_bench)\n"}, True),
])
def test_a_cmake_function_called_only_off_rocm_has_no_rocm_hazard(tmp_path, bench, elsewhere, reported) -> None:
    from harness import scan
    files = {"CMakeLists.txt": "project(app CXX)\nadd_subdirectory(bench)\nadd_subdirectory(tools)\n",
             "bench/CMakeLists.txt": bench, "bench/bench.cpp": "int main() { return 0; }\n",
             "tools/CMakeLists.txt": "", **elsewhere}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = scan([tmp_path], tmp_path, select=("C003",)).findings
    assert [(Path(f.path).parent.name, f.location.start_line) for f in found] == ([("bench", 3)] if reported else [])


# A header's device helpers: `shared_offset` runs only in the arm for newer NVIDIA GPUs, and its
# device-pass test (P001) is about what it computes there; `lane_sum` too, but hip-clang
# checks its 32-bit mask (W002) when it compiles the body; the overload of a HIP intrinsic's
# name may be called by anything that shuffles an `__half`.
HELPERS_CUH = '''\
#pragma once
#include <cuda_fp16.h>
inline __device__ unsigned shared_offset(void* p) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
#else
  return 0;
#endif
}
__device__ inline float lane_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}
__device__ inline float block_sum(float* smem, float v) {
#if __CUDA_ARCH__ >= 800
  smem[shared_offset(smem) % 32] = lane_sum(v);
  return smem[0];
#else
  smem[threadIdx.x] = v;
  return smem[0];
#endif
}
#ifndef USE_ROCM
#define SHUFFLE_DOWN __shfl_down_sync
#endif
__device__ __inline__ __half __shfl_down_sync(unsigned mask, __half v, int delta) {
  return __shfl_down_sync(mask, v, delta);
}
'''


@pytest.mark.parametrize("kernel, expected", [
    # On ROCm nothing calls `shared_offset` or `lane_sum`: the device-pass test never runs
    # there. The wavefront rules' findings stay (hip-clang checks the mask where it compiles
    # `lane_sum`), as does the overload's: `__shfl_down_sync` is the toolkit's name.
    ("__global__ void k(float* p) { __shared__ float s[64]; p[0] = block_sum(s, p[0]); }\n",
     [("W001", 11), ("W002", 11), ("W003", 26)]),
    # The kernel calls `shared_offset` itself: its test runs on ROCm.
    ("__global__ void k(float* p, unsigned* o) { __shared__ float s[64]; o[0] = shared_offset(s);"
     " p[0] = block_sum(s, p[0]); }\n",
     [("P001", 4), ("W001", 11), ("W002", 11), ("W003", 26)]),
])
def test_a_header_helper_called_only_off_rocm_computes_nothing_there(tmp_path, kernel, expected) -> None:
    from harness import scan
    (tmp_path / "helpers.cuh").write_text(HELPERS_CUH)
    (tmp_path / "kernel.cu").write_text('#include "helpers.cuh"\n' + kernel)
    found = scan([tmp_path], tmp_path, select=("P001", "W001", "W002", "W003")).findings
    assert sorted((f.code, f.location.start_line) for f in found if f.path.endswith("helpers.cuh")) == expected


def test_a_header_named_alone_is_judged_with_the_project_around_it(tmp_path) -> None:
    # A pre-commit run names the header only: the kernel that calls `shared_offset` on the
    # ROCm path is context, so the helper's device-pass test is reported as in a full scan.
    from harness import scan
    (tmp_path / "helpers.cuh").write_text(HELPERS_CUH)
    (tmp_path / "kernel.cu").write_text(
        '#include "helpers.cuh"\n__global__ void k(float* p, unsigned* o) { __shared__ float s[64];'
        ' o[0] = shared_offset(s); p[0] = block_sum(s, p[0]); }\n')
    for select in (("ALL",), ("P001",)):  # with the project rules' context, and without any
        found = scan([tmp_path / "helpers.cuh"], tmp_path, select=select).findings
        assert ("P001", 4) in {(f.code, f.location.start_line) for f in found}, select
