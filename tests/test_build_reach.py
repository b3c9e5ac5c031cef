"""What a ROCm build compiles, from CMake shapes finished ports use: a guard that stops
every build but one, a switch compared with a constant named for its platform, a backend
folder whose list file only the CUDA build reads (its sources named through a project
function, or the ROCm source list not readable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import scan

KERNEL = """\
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
"""
TOP = """\
cmake_minimum_required(VERSION 3.21)
project(mylib LANGUAGES CXX)
set(BUILD_VARIANT_CUDA "cuda")
set(BUILD_VARIANT_ROCM "rocm")
if(MYLIB_VARIANT STREQUAL BUILD_VARIANT_ROCM)
  enable_language(HIP)
  set(CMAKE_HIP_ARCHITECTURES gfx90a)
  add_compile_definitions(MYLIB_WITH_HIP)
  add_library(mylib_hip ${{HIP_SOURCES}})
endif()
{tail}
"""


def _findings(tmp_path: Path, tail: str, backend_lists: str) -> set[tuple[str, str]]:
    (tmp_path / "CMakeLists.txt").write_text(TOP.format(tail=tail))
    (tmp_path / "backend").mkdir(exist_ok=True)
    (tmp_path / "backend" / "CMakeLists.txt").write_text(backend_lists)
    (tmp_path / "backend" / "reduce.cu").write_text(KERNEL)
    return {(Path(f.path).name, f.code) for f in scan([tmp_path], tmp_path, select=("W",)).findings}


def test_a_guard_that_stops_the_rocm_build_leaves_the_rest_to_cuda(tmp_path: Path) -> None:
    guard = """\
if(MYLIB_TARGET STREQUAL "attention")
  if(NOT MYLIB_VARIANT STREQUAL BUILD_VARIANT_CUDA)
    message(FATAL_ERROR "the attention kernels build for CUDA only")
  endif()
  add_subdirectory(backend)
endif()"""
    assert _findings(tmp_path, guard, "add_library(mylib_backend reduce.cu)\n") == set()
    warned = guard.replace("message(FATAL_ERROR", "message(WARNING")
    assert _findings(tmp_path, warned, "add_library(mylib_backend reduce.cu)\n") == {("reduce.cu", "W001"),
                                                                                    ("reduce.cu", "W002")}


def test_a_cuda_only_folder_named_through_a_project_function(tmp_path: Path) -> None:
    """The backend's list file is read only where the CUDA variant is built; it hands its
    sources to a project function, and the ROCm target's own list is not readable."""
    cuda_only = "if(MYLIB_VARIANT STREQUAL BUILD_VARIANT_CUDA)\n  add_subdirectory(backend)\nendif()"
    assert _findings(tmp_path, cuda_only, "mylib_gpu_library(NAME backend SRCS reduce.cu)\n") == set()
    both = "add_subdirectory(backend)"
    assert _findings(tmp_path, both, "mylib_gpu_library(NAME backend SRCS reduce.cu)\n") == {
        ("reduce.cu", "W001"), ("reduce.cu", "W002")}


def test_sources_passed_under_a_cuda_keyword_beside_its_hip_twin(tmp_path: Path) -> None:
    """`gpu_library(... CUDA_SPECIFIC_SRCS a.cu HIP_SPECIFIC_SRCS a.hip)`: the project's own
    function takes each platform's sources apart; the CUDA ones are not the ROCm build's.
    A keyword with no HIP twin says nothing about platforms: its sources may be compiled."""
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "reduce.hip").write_text("__device__ float twice(float v) { return 2 * v; }\n")
    call = ("add_subdirectory(backend)\n"
            "gpu_library(NAME mylib GPU_SRCS common.cu CUDA_SPECIFIC_SRCS backend/reduce.cu "
            "HIP_SPECIFIC_SRCS hip/reduce.hip)\n")
    (tmp_path / "common.cu").write_text("__global__ void fill(float* p) { p[threadIdx.x] = 0; }\n")
    assert _findings(tmp_path, call, "# sources are named by the top-level call\n") == set()
    untwinned = call.replace("HIP_SPECIFIC_SRCS", "EXTRA_SRCS")
    assert ("reduce.cu", "W001") in _findings(tmp_path, untwinned, "# sources are named by the top-level call\n")


@pytest.mark.parametrize("module, call", [("SetupCUDA.cmake", "include(SetupCUDA)"),
                                          ("FindMyCudaLibs.cmake", "find_package(MyCudaLibs REQUIRED)")])
def test_a_project_module_read_from_a_cuda_only_branch(tmp_path: Path, module: str, call: str) -> None:
    """`include(SetupCUDA)` reads `SetupCUDA.cmake`, and `find_package(MyCudaLibs)` reads
    `FindMyCudaLibs.cmake`, from the project's `CMAKE_MODULE_PATH` (built from
    `<PROJECT>_SOURCE_DIR`) where the call stands: called only in the CUDA backend's branch,
    the module's toolkit paths and links are the CUDA build's, not a ROCm hazard."""
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / module).write_text(
        'find_program(MYLIB_NVCC nvcc HINTS "${CUDA_HOME}/bin")\n'
        "target_link_libraries(mylib PRIVATE CUDA::cudart)\n")
    (tmp_path / "cmake" / "SetupHIP.cmake").write_text(
        "enable_language(HIP)\nset(CMAKE_HIP_ARCHITECTURES gfx90a)\n")
    lists = ("cmake_minimum_required(VERSION 3.21)\n"
             "project(mylib LANGUAGES CXX)\n"
             'set(CMAKE_MODULE_PATH "${mylib_SOURCE_DIR}/cmake" ${CMAKE_MODULE_PATH})\n'
             "add_library(mylib core.cpp)\n"
             f"if(MYLIB_ENABLE_CUDA)\n  {call}\nelseif(MYLIB_ENABLE_HIP)\n  include(SetupHIP)\n"
             "  add_compile_definitions(USE_ROCM)\nendif()\n")
    (tmp_path / "core.cpp").write_text("int core() { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(lists)
    assert {f.code for f in scan([tmp_path], tmp_path).findings} == set()
    # The same module read on every build's path is the ROCm build's too.
    (tmp_path / "CMakeLists.txt").write_text(lists.replace(f"if(MYLIB_ENABLE_CUDA)\n  {call}\nelseif",
                                                           f"{call}\nif"))
    assert {f.code for f in scan([tmp_path], tmp_path).findings} >= {"B004", "C003"}


def test_a_cuda_module_beside_its_rocm_twin_that_a_backend_macro_reads_by_name(tmp_path: Path) -> None:
    """`find_package(TPL${NAME} MODULE)` in a macro each backend calls with its name: no walk
    can follow it, but `FindTPLCUDA.cmake` beside `FindTPLROCM.cmake` is the CUDA backend's
    module, as `X_ENABLE_CUDA` beside `X_ENABLE_HIP` is its switch; so is what it includes.
    Without the twin, nothing says which build reads it."""
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "FindTPLCUDA.cmake").write_text(
        "include(${CMAKE_CURRENT_LIST_DIR}/NvToolkit.cmake)\n"
        "target_link_libraries(mylib PRIVATE CUDA::cudart)\n")
    (tmp_path / "cmake" / "NvToolkit.cmake").write_text('find_program(MYLIB_NVCC nvcc HINTS "${CUDA_HOME}/bin")\n')
    (tmp_path / "cmake" / "FindTPLROCM.cmake").write_text("find_package(hip REQUIRED)\n")
    (tmp_path / "core.cpp").write_text("int core() { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(mylib LANGUAGES CXX)\n"
        'set(CMAKE_MODULE_PATH "${mylib_SOURCE_DIR}/cmake" ${CMAKE_MODULE_PATH})\n'
        "add_library(mylib core.cpp)\n"
        "macro(mylib_import_tpl NAME)\n  if(MYLIB_ENABLE_${NAME})\n    find_package(TPL${NAME} REQUIRED MODULE)\n"
        "  endif()\nendmacro()\nmylib_import_tpl(CUDA)\nmylib_import_tpl(ROCM)\n"
        "if(MYLIB_ENABLE_ROCM)\n  enable_language(HIP)\n  set(CMAKE_HIP_ARCHITECTURES gfx90a)\n"
        "  add_compile_definitions(USE_ROCM)\nendif()\n")
    result = scan([tmp_path], tmp_path)
    assert [f.code for f in result.findings] == []
    assert "FindTPLROCM.cmake" in result.not_built[str(tmp_path / "cmake" / "FindTPLCUDA.cmake")]
    assert str(tmp_path / "cmake" / "NvToolkit.cmake") in result.not_built
    (tmp_path / "cmake" / "FindTPLROCM.cmake").unlink()
    assert {f.code for f in scan([tmp_path], tmp_path).findings} >= {"B004", "C003"}


def test_sources_of_a_project_function_only_cuda_branches_call(tmp_path: Path) -> None:
    """`function(add_nv_benchmark ...) add_library(... nv/reduce.cu)` called only under the
    CUDA backend's switch: its sources are the CUDA build's. Called from a branch a ROCm
    build may take, they may be compiled there."""
    (tmp_path / "nv").mkdir()
    (tmp_path / "nv" / "reduce.cu").write_text(KERNEL)
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "reduce.hip").write_text("__device__ float twice(float v) { return 2 * v; }\n")
    lists = ("cmake_minimum_required(VERSION 3.21)\nproject(mylib LANGUAGES CXX)\n"
             "function(add_nv_benchmark name)\n  add_library(${name} nv/reduce.cu)\nendfunction()\n"
             "if(MYLIB_BUILD_CUDA)\n  add_nv_benchmark(bench_nv)\nendif()\n"
             "if(MYLIB_BUILD_HIP)\n  enable_language(HIP)\n  add_compile_definitions(USE_ROCM)\n"
             "  add_library(bench_hip hip/reduce.hip)\nendif()\n")
    (tmp_path / "CMakeLists.txt").write_text(lists)
    result = scan([tmp_path], tmp_path, select=("W",))
    assert result.findings == []
    assert "only CUDA-only branches call" in result.not_built[str(tmp_path / "nv" / "reduce.cu")]
    (tmp_path / "CMakeLists.txt").write_text(lists + "add_nv_benchmark(bench_everywhere)\n")
    assert {f.code for f in scan([tmp_path], tmp_path, select=("W",)).findings} == {"W001", "W002"}


VENDORED_TOP = """\
cmake_minimum_required(VERSION 3.21)
project(mylib LANGUAGES CXX)
if(MYLIB_WITH_HIP)
  enable_language(HIP)
  set(CMAKE_HIP_ARCHITECTURES gfx90a)
  add_compile_definitions(USE_ROCM)
endif()
{add}
"""
VENDORED_LISTS = "add_example(gemm_example gemm_example.cu)\ntarget_compile_options(gemm_example PRIVATE -Xptxas=-v)\n"


def _vendored(tmp_path: Path, add: str) -> set[tuple[str, str]]:
    """A library whose build globs its kernels, beside vendored example code that came with
    its own CMakeLists.txt (no `project()`): the example names its source."""
    (tmp_path / "CMakeLists.txt").write_text(VENDORED_TOP.format(add=add))
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        "file(GLOB KERNELS ${CMAKE_CURRENT_SOURCE_DIR}/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/vendored/*_kernel.cu)\n"
        "add_library(mylib ${KERNELS})\n")
    (tmp_path / "src" / "vendored").mkdir(exist_ok=True)
    (tmp_path / "src" / "vendored" / "CMakeLists.txt").write_text(VENDORED_LISTS)
    (tmp_path / "src" / "vendored" / "gemm_example.cu").write_text(KERNEL)
    (tmp_path / "src" / "vendored" / "reduce_kernel.cu").write_text(KERNEL)
    return {(Path(f.path).name, f.code) for f in scan([tmp_path], tmp_path, select=("W", "B001")).findings}


def test_a_vendored_list_file_no_build_adds_is_not_the_rocm_builds(tmp_path: Path) -> None:
    """Every `add_subdirectory` of the build is followed and none reaches `src/vendored`: its
    list file's flags never reach hip-clang and the source it names is not compiled. The
    kernel beside it that the library's own glob takes is, and stays reported."""
    assert _vendored(tmp_path, "add_subdirectory(src)") == {("reduce_kernel.cu", "W001"),
                                                            ("reduce_kernel.cu", "W002")}


def test_a_list_file_may_be_read_where_the_walk_lost_a_folder(tmp_path: Path) -> None:
    """`add_subdirectory(${MYLIB_EXTRA_DIR})`: a folder the walk cannot name may be the
    vendored one, so its list file and its source are reported as before."""
    found = _vendored(tmp_path, "add_subdirectory(src)\nadd_subdirectory(${MYLIB_EXTRA_DIR})")
    assert {("gemm_example.cu", "W001"), ("CMakeLists.txt", "B001"), ("reduce_kernel.cu", "W001")} <= found


def test_folders_added_with_subdirs_are_followed(tmp_path: Path) -> None:
    """`subdirs(backend)`, CMake's older `add_subdirectory`, read only in the CUDA variant's
    branch: the backend's toolkit paths are the CUDA build's."""
    (tmp_path / "backend").mkdir()
    (tmp_path / "backend" / "CMakeLists.txt").write_text(
        'include_directories("${CUDAToolkit_INCLUDE_DIRS}")\ntarget_link_libraries(mylib PRIVATE CUDA::cudart)\n')
    top = VENDORED_TOP.format(add="add_library(mylib core.cpp)\nif(MYLIB_WITH_CUDA)\n  SUBDIRS(backend)\nendif()")
    (tmp_path / "CMakeLists.txt").write_text(top)
    (tmp_path / "core.cpp").write_text("int core() { return 0; }\n")
    assert {f.code for f in scan([tmp_path], tmp_path).findings if "backend" in f.path} == set()
    (tmp_path / "CMakeLists.txt").write_text(top.replace("if(MYLIB_WITH_CUDA)\n  SUBDIRS(backend)\nendif()",
                                                         "SUBDIRS(backend)"))
    assert {f.code for f in scan([tmp_path], tmp_path).findings if "backend" in f.path} >= {"B004", "C003"}

