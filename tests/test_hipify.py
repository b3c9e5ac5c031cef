"""The hipify model: a file the ROCm build hipifies is judged as hipify leaves it.

`fixtures/projects/ported_hipified` (a PyTorch extension) and `never_ported_hipified` (the
same sources in a CMake HIP build) are the whole-project pair; these tests cover the other
ways a build hipifies, a name hipify cannot map, and where hipify stops.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import scan
from portlint import hipify

KERNEL = """\
#include <cublas_v2.h>

#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#define HOST_DEVICE
#endif

cublasStatus_t gemm(cublasHandle_t h, int n, const float* a, float* c) {
  const float one = 1.f;
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &one, c, n);
}
"""

CMAKE_HIP = """\
cmake_minimum_required(VERSION 3.21)
project(ops LANGUAGES CXX HIP)
set(CMAKE_HIP_ARCHITECTURES gfx90a)
add_compile_definitions(USE_ROCM)
{step}
set_source_files_properties(src/ops.cu PROPERTIES LANGUAGE HIP)
add_library(ops SHARED src/ops.cu)
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _codes(root: Path, select=("L001", "P003")) -> list[tuple[str, int, str]]:
    result = scan([root], root, select=select)
    return sorted((Path(f.path).name, f.location.start_line, f.code) for f in result.findings)


def test_cmake_build_without_a_hipify_step_reads_the_cuda_names(tmp_path: Path) -> None:
    root = _project(tmp_path, {"CMakeLists.txt": CMAKE_HIP.format(step=""), "src/ops.cu": KERNEL})
    assert _codes(root) == [("ops.cu", 1, "L001"), ("ops.cu", 3, "P003")]
    library = next(f for f in scan([root], root, select=("L001",)).findings)
    assert [r.location.start_line for r in library.related] == [9, 11]  # the cuBLAS names, under the alias


@pytest.mark.parametrize("step", [
    "execute_process(COMMAND hipify-perl -inplace ${CMAKE_CURRENT_SOURCE_DIR}/src/ops.cu)",
    "add_custom_command(OUTPUT src/ops.hip COMMAND ${Python3_EXECUTABLE} tools/hipify.py src DEPENDS src/ops.cu)",
    "execute_process(COMMAND ${Python3_EXECUTABLE} -m torch.utils.hipify.hipify_python --project-directory src)",
    "hipify(CUDA_SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/src HEADER_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/src)",
])
def test_cmake_hipify_step_makes_mapped_names_no_hazard(tmp_path: Path, step: str) -> None:
    root = _project(tmp_path, {"CMakeLists.txt": CMAKE_HIP.format(step=step), "src/ops.cu": KERNEL})
    assert _codes(root) == []


def test_makefile_recipe_that_runs_hipify(tmp_path: Path) -> None:
    makefile = "ops.hip: src/ops.cu\n\thipify-perl $< > $@\n\nops.o: ops.hip\n\thipcc --offload-arch=gfx90a -c $< -o $@\n"
    root = _project(tmp_path, {"Makefile": makefile, "src/ops.cu": KERNEL})
    assert _codes(root) == []


def test_a_name_hipify_cannot_map_is_still_a_hazard(tmp_path: Path) -> None:
    # `CUBLAS_GEMM_ALGO0` has no hipBLAS counterpart: hipify leaves it and hip-clang fails.
    text = KERNEL + "cublasGemmAlgo_t pick() { return CUBLAS_GEMM_ALGO0; }\n"
    setup = "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n" \
            "setup(name='ops', ext_modules=[CUDAExtension('ops', ['src/ops.cu'])])\n"
    root = _project(tmp_path, {"setup.py": setup, "src/ops.cu": text})
    found = scan([root], root, select=("L001",)).findings
    assert [(f.location.start_line, f.code) for f in found] == [(13, "L001")]
    assert "CUBLAS_GEMM_ALGO0" in found[0].message and "cublasGemmAlgo_t" not in found[0].message


TORCH_SETUP = ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
               "setup(name='ops', ext_modules=[CUDAExtension('ops', ['src/ops.cu'])])\n")
# `CUBLAS_GEMM_DEFAULT_TENSOR_OP`: PyTorch's hipify writes `HIPBLAS_GEMM_DEFAULT`, HIPIFY's
# tables give it no counterpart. `<cub/warp/warp_reduce.cuh>`: HIPIFY maps every CUB header,
# PyTorch's map only those it lists. `cublasSgemm_64`: in HIPIFY's tables, not in PyTorch's map.
TWO_HIPIFIES = """\
#include <cublas_v2.h>
#include <cub/warp/warp_reduce.cuh>

cublasStatus_t gemm(cublasHandle_t h, int n, const __half* a, __half* c) {
  const float one = 1.f;
  return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16F, n, a, CUDA_R_16F, n, &one,
                      c, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
}
cublasStatus_t wide(cublasHandle_t h, long n, const float* a, float* c) {
  const float one = 1.f;
  return cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &one, c, n);
}
"""


@pytest.mark.parametrize("build, expected", [
    # A PyTorch extension: PyTorch's hipify renames the GEMM algorithm but leaves the CUB
    # header it does not list and the 64-bit cuBLAS call.
    ({"setup.py": TORCH_SETUP}, [(2, "warp_reduce.cuh"), (11, "cublasSgemm_64")]),
    # A hipify-perl step: HIPIFY maps the header and the 64-bit call, not the algorithm.
    ({"CMakeLists.txt": CMAKE_HIP.format(step="execute_process(COMMAND hipify-perl -inplace src/ops.cu)")},
     [(7, "CUBLAS_GEMM_DEFAULT_TENSOR_OP")]),
])
def test_each_hipify_renames_its_own_names(tmp_path: Path, build: dict[str, str], expected) -> None:
    root = _project(tmp_path, {**build, "src/ops.cu": TWO_HIPIFIES})
    found = sorted(scan([root], root, select=("L001",)).findings, key=lambda f: f.location.start_line)
    assert [f.location.start_line for f in found] == [line for line, _ in expected]
    assert all(name in f.message for f, (_, name) in zip(found, expected))


def test_hipify_reaches_the_extension_and_its_headers_not_the_other_builds(tmp_path: Path) -> None:
    """A project with a CMake C++ library and a PyTorch extension: the extension's sources
    and the headers they include are hipified; the library's own sources are not."""
    setup = "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n" \
            "setup(name='ops', ext_modules=[CUDAExtension('ops', ['ext/ops.cu'])])\n"
    cmake = ("cmake_minimum_required(VERSION 3.21)\nproject(core LANGUAGES CXX HIP)\n"
             "set(CMAKE_HIP_ARCHITECTURES gfx90a)\nadd_compile_definitions(USE_ROCM)\n"
             "set_source_files_properties(core/blas.cu PROPERTIES LANGUAGE HIP)\n"
             "add_library(core SHARED core/blas.cu)\n")
    root = _project(tmp_path, {
        "setup.py": setup, "CMakeLists.txt": cmake,
        "ext/ops.cu": '#include "gemm.cuh"\nvoid run() {}\n', "ext/gemm.cuh": KERNEL, "core/blas.cu": KERNEL,
    })
    assert {name for name, _, _ in _codes(root)} == {"blas.cu"}



def test_name_table() -> None:
    torch = frozenset({hipify.TORCH})
    assert hipify.hip_name("CUBLAS_GEMM_DEFAULT_TENSOR_OP", torch) == "HIPBLAS_GEMM_DEFAULT"
    assert hipify.hip_name("cublasGemmEx", torch) == "hipblasGemmEx"  # marked unsupported, but HIP has it
    assert hipify.hip_name("cublasSgemm", torch | {hipify.HIPIFY}) == "hipblasSgemm"
    assert hipify.hip_name("cublasSgemm_64", torch | {hipify.HIPIFY}) is None  # PyTorch's leaves it
    assert hipify.hip_header("cuda.h", torch) == "hip/hip_runtime.h"
    assert hipify.hip_header("nccl.h", torch) == "rccl/rccl.h"
    assert hipify.hip_name("cublasSgemm") == "hipblasSgemm"
    assert hipify.hip_name("curand_init") == "hiprand_init"
    assert hipify.hip_name("__CUDACC__") == "__HIPCC__"
    assert hipify.hip_name("CUBLAS_GEMM_ALGO0") is None  # documented, with no HIP counterpart
    assert hipify.hip_name("my_own_function") is None
    assert hipify.hip_header("cub/block/block_reduce.cuh") == "hipcub/hipcub.hpp"
    assert hipify.hip_header("cutlass/gemm.h") is None


def test_cmake_list_of_hipified_sources_keeps_the_cuda_only_ones_out(tmp_path: Path) -> None:
    """`get_hipified_list(<sources> <out>)` names the hipified copies of its sources: the
    ROCm target compiles those, so a source only the CUDA arm lists is not compiled there."""
    cmake = """\
cmake_minimum_required(VERSION 3.21)
project(ops LANGUAGES CXX)
set(ops_SOURCES src/ops.cu)
if(USE_ROCM)
  enable_language(HIP)
  set(CMAKE_HIP_ARCHITECTURES gfx90a)
  add_compile_definitions(USE_ROCM)
  hipify(CUDA_SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/src)
  get_hipified_list("${ops_SOURCES}" ops_hip_SOURCES)
  add_library(ops SHARED ${ops_hip_SOURCES})
else()
  list(APPEND ops_SOURCES src/attention_cudnn.cpp)
  add_library(ops SHARED ${ops_SOURCES})
endif()
"""
    cudnn = "#include <cudnn.h>\ncudnnStatus_t make(cudnnHandle_t* h) { return cudnnCreate(h); }\n"
    root = _project(tmp_path, {"CMakeLists.txt": cmake, "src/ops.cu": KERNEL, "src/attention_cudnn.cpp": cudnn})
    assert _codes(root) == []


def test_extension_builder_classes_hipify_the_project(tmp_path: Path) -> None:
    """DeepSpeed-style builders: setup.py names no sources, a builder class in a Python module
    gives them and builds with PyTorch's extension builder, which hipifies them on ROCm."""
    builder = ("from torch.utils.cpp_extension import CUDAExtension\n\n\nclass GemmBuilder:\n"
               "    def sources(self):\n        return ['csrc/ops.cu']\n\n"
               "    def builder(self):\n        return CUDAExtension('gemm_op', self.sources())\n")
    setup = "from setuptools import setup\nfrom op_builder import GemmBuilder\n" \
            "setup(name='ops', ext_modules=[GemmBuilder().builder()])\n"
    root = _project(tmp_path, {"setup.py": setup, "op_builder/gemm.py": builder, "csrc/ops.cu": KERNEL})
    assert _codes(root) == []
    (root / "op_builder" / "gemm.py").unlink()
    assert _codes(root) != []


def test_makefile_that_runs_a_hipify_generation_makefile(tmp_path: Path) -> None:
    """A Makefile whose HIP backend runs `make -f gen.hip` to hipify the sources, that makefile
    naming the tool in a variable: the build hipifies."""
    makefile = ("BACKEND ?= cuda\nifeq ($(BACKEND),hip)\n  tmp := $(shell $(MAKE) -f gen.hip 1>&2)\nendif\n"
                "ops.o: src/ops.cu\n\t$(CC) -c $< -o $@\n")
    generation = "HIPIFY ?= tools/hipify-perl\n\nsrc/ops.hip.cpp: src/ops.cu\n\t$(HIPIFY) $< > $@\n"
    root = _project(tmp_path, {"Makefile": makefile, "gen.hip": generation, "src/ops.cu": KERNEL})
    assert _codes(root) == []
    (root / "gen.hip").write_text(generation.replace("tools/hipify-perl", "tools/translate"))
    assert _codes(root) != []


DEVICE_HEADER = """\
#pragma once
__device__ float atomicMax(float* address, float value) {
  int* bits = (int*)address;
  int seen = *bits, expected;
  do {
    expected = seen;
    seen = atomicCAS(bits, expected, __float_as_int(fmaxf(value, __int_as_float(expected))));
  } while (seen != expected);
  return __int_as_float(seen);
}
"""

ROUTING_HEADER = """\
#pragma once
#ifdef __CUDACC__
#include "device/atomics.cuh"
#else
#include <algorithm>
#endif
"""


@pytest.mark.parametrize("build, compiled", [
    ({"setup.py": "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                  "setup(name='ops', ext_modules=[CUDAExtension('ops', ['src/ops.cu'])])\n"}, True),
    ({"CMakeLists.txt": CMAKE_HIP.format(step="")}, False),
])
def test_header_a_hipified_source_includes_under_cudacc_is_compiled_on_rocm(
        tmp_path: Path, build: dict, compiled: bool) -> None:
    """hipify writes `__CUDACC__` as `__HIPCC__`, so a header routed by `#ifdef __CUDACC__`
    is what the ROCm build of a hipified source includes, and its hazards are reported; in a
    build that does not hipify, hip-clang leaves `__CUDACC__` undefined and takes the `#else`."""
    root = _project(tmp_path, {**build, "src/ops.cu": '#include "routing.h"\n__global__ void k(float* p) {}\n',
                               "src/routing.h": ROUTING_HEADER, "src/device/atomics.cuh": DEVICE_HEADER})
    assert (("atomics.cuh", 2, "N007") in _codes(root, select=("N007",))) is compiled


NVRTC = """\
#include <nvrtc.h>
#include <string>

std::string compile(const char* text) {
  nvrtcProgram program;
  nvrtcCreateProgram(&program, text, "k.cu", 0, nullptr, nullptr);
  nvrtcCompileProgram(program, 0, nullptr);
  size_t size = 0;
  nvrtcGetPTXSize(program, &size);
  std::string code(size, '\\0');
  nvrtcGetPTX(program, code.data());
  return code;
}
"""


@pytest.mark.parametrize("step, expected", [
    ("", [1, 6, 7, 9, 11]),  # compiled as written: NVRTC, which emits NVIDIA code
    ("execute_process(COMMAND hipify-perl -inplace src/ops.cu)", []),  # hipify writes hipRTC's header and calls
])
def test_runtime_compilation_is_judged_as_hipify_leaves_it(tmp_path: Path, step: str, expected: list[int]) -> None:
    root = _project(tmp_path, {"CMakeLists.txt": CMAKE_HIP.format(step=step), "src/ops.cu": NVRTC})
    found = scan([root], root, select=("R004",)).findings
    assert sorted(f.location.start_line for f in found) == expected


@pytest.mark.parametrize("map_path", ["${CMAKE_CURRENT_SOURCE_DIR}/hipify_map.json", "${SOME_ROOT}/hipify_map.json"])
def test_a_hipify_steps_custom_map_file_is_part_of_what_it_rewrites(tmp_path: Path, map_path: str) -> None:
    """hipify_torch's `CUSTOM_MAP_FILE`: a header PyTorch's map leaves alone is rewritten by
    the project's own map (found by its file name where the list's variables are out of view)."""
    cmake = f"""\
cmake_minimum_required(VERSION 3.21)
project(ops LANGUAGES CXX)
if(USE_ROCM)
  enable_language(HIP)
  hipify(CUDA_SOURCE_DIR ${{CMAKE_CURRENT_SOURCE_DIR}}/src CUSTOM_MAP_FILE "{map_path}")
endif()
add_library(ops SHARED src/ops.cu)
"""
    kernel = "#include <nvtx3/nvToolsExt.h>\n__global__ void k(float* p) { p[0] = 1.f; }\n"
    custom = '{"custom_map": {"<nvtx3/nvToolsExt.h>": "<roctracer/roctx.h>"}}\n'
    root = _project(tmp_path, {"CMakeLists.txt": cmake, "src/ops.cu": kernel, "hipify_map.json": custom})
    assert _codes(root, select=("L001",)) == []
    (root / "hipify_map.json").write_text('{"custom_map": {}}\n')
    assert _codes(root, select=("L001",)) == [("ops.cu", 1, "L001")]


THRUST_BACKEND = """\
#include <thrust/reduce.h>
int total(const int* bins, int n) { return thrust::reduce(thrust::cuda::par, bins, bins + n); }
"""


def test_thrusts_cuda_backend_is_a_hazard_until_hipify_names_the_hip_one(tmp_path: Path) -> None:
    """rocThrust has no working CUDA backend: `thrust::cuda::par` stops hip-clang, unless the
    build's hipify writes `thrust::hip::par` (PyTorch's map does)."""
    plain = _project(tmp_path / "plain", {"CMakeLists.txt": CMAKE_HIP.format(step=""), "src/ops.cu": THRUST_BACKEND})
    assert ("ops.cu", 2, "L001") in _codes(plain, select=("L001",))
    step = "execute_process(COMMAND ${Python3_EXECUTABLE} -m torch.utils.hipify.hipify_python --project-directory src)"
    hipified = _project(tmp_path / "hipified", {"CMakeLists.txt": CMAKE_HIP.format(step=step),
                                                "src/ops.cu": THRUST_BACKEND})
    assert [c for c in _codes(hipified, select=("L001",)) if c[1] == 2] == []
