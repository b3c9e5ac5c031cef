"""Backend selectors: a project that tests `X_ENABLE_CUDA` and its twin `X_ENABLE_HIP` (the
macros its configure step defines for the one backend it builds) compiles the CUDA arm in
its CUDA build only. Without the twin, the CUDA macro says nothing certain about ROCm."""

from __future__ import annotations

from pathlib import Path

from harness import scan

CONFIG = """\
// Written by configure for the backend being built.
#pragma once
"""

REDUCE = """\
#include "config.h"

__device__ float warp_sum(float v) {
#if defined(MYLIB_ENABLE_CUDA)
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
#elif defined(MYLIB_ENABLE_HIP)
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_down(v, offset);
#endif
  return v;
}
"""


def _findings(tmp_path: Path, reduce: str) -> list[tuple[int, str]]:
    (tmp_path / "config.h").write_text(CONFIG)
    (tmp_path / "reduce.cu").write_text(reduce)
    result = scan([tmp_path], tmp_path, select=("W",))
    return sorted((f.location.start_line, f.code) for f in result.findings)


def test_cuda_arm_of_a_backend_pair_is_not_compiled_on_rocm(tmp_path: Path) -> None:
    assert _findings(tmp_path, REDUCE) == []


def test_a_cuda_macro_without_a_hip_twin_decides_nothing(tmp_path: Path) -> None:
    alone = REDUCE.replace("#elif defined(MYLIB_ENABLE_HIP)", "#else")
    assert [code for _, code in _findings(tmp_path, alone)] != []



LISTS = """\
cmake_minimum_required(VERSION 3.21)
project(mylib LANGUAGES CXX)
option(MYLIB_BUILD_CUDA "Build the CUDA backend" OFF)
option(MYLIB_BUILD_HIP "Build the HIP backend" OFF)
if(MYLIB_BUILD_CUDA)
  enable_language(CUDA)
  add_library(mylib_cuda cuda/reduce.cu)
endif()
if(MYLIB_BUILD_HIP)
  enable_language(HIP)
  set(CMAKE_HIP_ARCHITECTURES gfx90a)
  add_compile_definitions(MYLIB_WITH_HIP)
  set_source_files_properties(hip/reduce.hip PROPERTIES LANGUAGE HIP)
  add_library(mylib_hip hip/reduce.hip)
endif()
"""


def _cmake_findings(tmp_path: Path, lists: str) -> set[tuple[str, str]]:
    (tmp_path / "CMakeLists.txt").write_text(lists)
    (tmp_path / "cuda").mkdir(exist_ok=True)
    (tmp_path / "cuda" / "reduce.cu").write_text(
        "__device__ float warp_sum(float v) {\n"
        "  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);\n"
        "  return v;\n}\n")
    (tmp_path / "hip").mkdir(exist_ok=True)
    (tmp_path / "hip" / "reduce.hip").write_text("__device__ float twice(float v) { return 2 * v; }\n")
    return {(Path(f.path).name, f.code) for f in scan([tmp_path], tmp_path).findings}


def test_cmake_backend_switch_pair(tmp_path: Path) -> None:
    """`if(MYLIB_BUILD_CUDA)` beside `if(MYLIB_BUILD_HIP)`: the CUDA backend's sources are
    not what the ROCm build compiles."""
    assert _cmake_findings(tmp_path, LISTS) == set()


def test_cmake_cuda_switch_without_a_hip_twin_decides_nothing(tmp_path: Path) -> None:
    # (without the arm's `enable_language(CUDA)`, which alone shows a ROCm build cannot take it)
    lone = LISTS.replace('option(MYLIB_BUILD_HIP "Build the HIP backend" OFF)\n', "").replace(
        "if(MYLIB_BUILD_HIP)", "if(HIP_FOUND)").replace("  enable_language(CUDA)\n", "")
    assert _cmake_findings(tmp_path, lone) == {("reduce.cu", "W001"), ("reduce.cu", "W002")}


def test_an_option_that_depends_on_the_cuda_switch_is_off_in_the_rocm_build(tmp_path: Path) -> None:
    """`cmake_dependent_option(MYLIB_CUDA_KERNELS ... ON "MYLIB_BUILD_CUDA" OFF)`: CMake forces
    the option off where the CUDA switch is off, as in the ROCm build, so what it guards is
    the CUDA build's. An option depending on either backend, or on a switch with no HIP
    twin, still guards code the ROCm build may compile."""
    dependent = LISTS.replace("  add_library(mylib_cuda cuda/reduce.cu)\n", "") + (
        'include(CMakeDependentOption)\n'
        'cmake_dependent_option(MYLIB_CUDA_KERNELS "CUDA kernels" ON "MYLIB_BUILD_CUDA" OFF)\n'
        'if(MYLIB_CUDA_KERNELS)\n  add_library(mylib_cuda cuda/reduce.cu)\nendif()\n')
    assert _cmake_findings(tmp_path, dependent) == set()
    either = dependent.replace('"MYLIB_BUILD_CUDA" OFF', '"MYLIB_BUILD_CUDA OR MYLIB_BUILD_HIP" OFF')
    assert _cmake_findings(tmp_path, either) == {("reduce.cu", "W001"), ("reduce.cu", "W002")}
    unrelated = dependent.replace('"MYLIB_BUILD_CUDA" OFF', '"MYLIB_WITH_MPI" OFF')
    assert _cmake_findings(tmp_path, unrelated) == {("reduce.cu", "W001"), ("reduce.cu", "W002")}


def test_an_arm_that_needs_the_cuda_toolkit_is_not_the_rocm_build_s(tmp_path: Path) -> None:
    """In a project that builds for ROCm, an optional arm that requires the CUDA toolkit
    (`find_package(CUDAToolkit REQUIRED)`, `enable_language(CUDA)`) would stop a ROCm
    configure run, which has none: the ROCm build does not take it. A project without a
    ROCm build, or a toolkit found only if present, keeps the arm's hazards."""
    sparse = LISTS.replace("  add_library(mylib_cuda cuda/reduce.cu)\n", "") + (
        'option(MYLIB_SPARSE "sparse kernels" OFF)\n'
        'if(MYLIB_SPARSE)\n  find_package(CUDAToolkit REQUIRED)\n  add_library(mylib_sparse cuda/reduce.cu)\nendif()\n')
    assert _cmake_findings(tmp_path, sparse) == set()
    assert _cmake_findings(tmp_path, sparse.replace("CUDAToolkit REQUIRED", "CUDAToolkit QUIET")) == {
        ("reduce.cu", "W001"), ("reduce.cu", "W002")}
    unported = sparse.replace("  enable_language(HIP)\n", "").replace("  set(CMAKE_HIP_ARCHITECTURES gfx90a)\n", "") \
        .replace("  add_compile_definitions(MYLIB_WITH_HIP)\n", "").replace("hip/reduce.hip", "hip/reduce.cpp")
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, unported)
    # What stands before the command in the arm is left out too.
    before = sparse.replace("  find_package(CUDAToolkit REQUIRED)\n  add_library(mylib_sparse cuda/reduce.cu)\n",
                            "  add_library(mylib_sparse cuda/reduce.cu)\n  find_package(CUDAToolkit REQUIRED)\n")
    assert _cmake_findings(tmp_path, before) == set()
    # A switch the ROCm path also stands under is on in the ROCm build: the port's to fix.
    shared = sparse.replace("if(MYLIB_SPARSE)", "if(MYLIB_SPARSE OR MYLIB_BUILD_HIP)")
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, shared)
    # An option on by default is taken by a ROCm build run with the defaults.
    on_by_default = sparse.replace('option(MYLIB_SPARSE "sparse kernels" OFF)', 'option(MYLIB_SPARSE "sparse kernels" ON)')
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, on_by_default)
    # Nor where a switch of the arms around it, or a quoted one, leads to the ROCm path too.
    nested = sparse.replace("if(MYLIB_SPARSE)", "if(MYLIB_BUILD_HIP)\nif(MYLIB_SPARSE)") + "endif()\n"
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, nested)
    quoted = shared.replace("if(MYLIB_BUILD_HIP)", 'if("${MYLIB_BUILD_HIP}")')
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, quoted)
    # A command building HIP inside a macro stands under switches out of view.
    in_macro = sparse.replace("if(MYLIB_BUILD_HIP)\n  enable_language(HIP)", "macro(use_hip)\n  enable_language(HIP)\n"
                              "endmacro()\nif(MYLIB_BUILD_HIP)\n  use_hip()")
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, in_macro)
    # A ROCm path only in another list file (a vendored library's) does not make this file's.
    (tmp_path / "vendored").mkdir()
    (tmp_path / "vendored" / "CMakeLists.txt").write_text(
        "option(VENDORED_HIP \"HIP\" OFF)\nif(VENDORED_HIP)\n  enable_language(HIP)\nendif()\n")
    assert ("reduce.cu", "W001") in _cmake_findings(tmp_path, unported + "add_subdirectory(vendored)\n")


CONFIG_TEMPLATE = """\
# Installed for projects that use mylib; configure_file fills in the @...@ values.
set(MYLIB_BUILD_CUDA @MYLIB_BUILD_CUDA@)
if(MYLIB_BUILD_CUDA)
  find_package(CUDAToolkit REQUIRED)
  target_link_libraries(Mylib::mylib INTERFACE CUDA::cublas)
endif()
if(@MYLIB_BUILD_CUDA@)
  target_link_libraries(Mylib::mylib INTERFACE CUDA::cusparse)
endif()
if(@MYLIB_BUILD_HIP@)
  find_package(hip REQUIRED)
endif()
"""


def test_a_package_config_template_reads_the_build_s_switches(tmp_path: Path) -> None:
    """`@MYLIB_BUILD_CUDA@` in a template `configure_file` copies is the value the switch
    holds in the build that installs it: off in the ROCm build, so the CUDA libraries the
    template links are the CUDA build's. A value that is no backend switch decides nothing."""
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "MylibConfig.cmake").write_text(CONFIG_TEMPLATE)
    lists = LISTS + 'configure_file(cmake/MylibConfig.cmake MylibConfig.cmake @ONLY)\n'
    assert _cmake_findings(tmp_path, lists) == set()
    quoted = CONFIG_TEMPLATE.replace("if(@MYLIB_BUILD_CUDA@)", 'if("@MYLIB_BUILD_CUDA@")')
    (tmp_path / "cmake" / "MylibConfig.cmake").write_text(quoted)
    assert _cmake_findings(tmp_path, lists) == set()
    lone = CONFIG_TEMPLATE.replace("if(@MYLIB_BUILD_CUDA@)", "if(@MYLIB_WITH_BLAS@)")
    (tmp_path / "cmake" / "MylibConfig.cmake").write_text(lone)
    assert _cmake_findings(tmp_path, lists) == {("MylibConfig.cmake", "C003")}


SPARSE = """\
#include "config.h"
#if defined(MYLIB_USING_CUSPARSE)
#include <cusparse.h>
typedef cusparseHandle_t sparse_handle;
#elif defined(MYLIB_USING_ROCSPARSE)
#include <rocsparse/rocsparse.h>
typedef rocsparse_handle sparse_handle;
#endif
"""


def _library_findings(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "config.h").write_text(CONFIG)
    (tmp_path / "sparse.cu").write_text(text)
    return [f.code for f in scan([tmp_path], tmp_path, select=("L",)).findings]


def test_cuda_library_arm_of_a_library_pair_is_not_compiled_on_rocm(tmp_path: Path) -> None:
    """`X_USING_CUSPARSE` beside `X_USING_ROCSPARSE`: configure picks the sparse library of
    the backend it builds, so the cuSPARSE arm is the CUDA build's."""
    assert _library_findings(tmp_path, SPARSE) == []


def test_a_cuda_library_macro_without_its_rocm_twin_decides_nothing(tmp_path: Path) -> None:
    lone = SPARSE.replace("#elif defined(MYLIB_USING_ROCSPARSE)", "#else")
    assert "L001" in _library_findings(tmp_path, lone)


ONLY_ON_CUDA = """\
#ifndef MYLIB_HIP_COMPAT_H
#define MYLIB_HIP_COMPAT_H
#if !defined(MYLIB_USE_HIP)
#include <cusolverDn.h>
typedef cusolverDnHandle_t solver_handle;
#endif
#endif
"""


def test_a_hip_switch_is_on_in_the_rocm_build(tmp_path: Path) -> None:
    """`MYLIB_USE_HIP` is what the project's ROCm build defines (its build helper or
    configure step does): code under `#if !defined(MYLIB_USE_HIP)` is the CUDA build's.
    An include guard that mentions HIP is no switch: the header stays compiled."""
    assert _library_findings(tmp_path, ONLY_ON_CUDA) == []
    assert "L001" in _library_findings(tmp_path, ONLY_ON_CUDA.replace("MYLIB_USE_HIP", "MYLIB_FAST_PATH"))


def test_a_header_included_only_under_the_cuda_switch_is_not_compiled_on_rocm(tmp_path: Path) -> None:
    """`#if defined(MYLIB_ENABLE_CUDA) #include "cuda/reduce.cuh"` beside the HIP twin's arm:
    the ROCm build never includes the CUDA backend's header, so its hazards are not ROCm's."""
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "reduce.cuh").write_text(REDUCE.split("#if", 1)[0] + KERNEL_32)
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "reduce.hpp").write_text("__device__ inline float twice(float v) { return 2 * v; }\n")
    (tmp_path / "backend.cu").write_text(
        '#include "config.h"\n#if defined(MYLIB_ENABLE_CUDA)\n#include "cuda/reduce.cuh"\n'
        '#elif defined(MYLIB_ENABLE_HIP)\n#include "hip/reduce.hpp"\n#endif\n')
    (tmp_path / "config.h").write_text(CONFIG)
    result = scan([tmp_path], tmp_path, select=("W",))
    assert result.findings == []
    (tmp_path / "backend.cu").write_text('#include "config.h"\n#include "cuda/reduce.cuh"\n')
    assert {f.code for f in scan([tmp_path], tmp_path, select=("W",)).findings} == {"W001", "W002"}


KERNEL_32 = """\
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
__global__ void reduce(float* p) { p[threadIdx.x] = warp_sum(p[threadIdx.x]); }
"""
