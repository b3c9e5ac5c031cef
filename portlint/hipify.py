"""The hipify model: what hipify makes of CUDA names, for files a ROCm build hipifies.

A PyTorch extension built with a ROCm torch (`CUDAExtension`, `load`, `load_inline`) is run
through hipify before hip-clang sees it, and so is code a build runs `hipify-perl`,
`hipify-clang` or PyTorch's hipify on. There `cublasSgemm` is `hipblasSgemm`, `cub::` is
`hipcub::`, `<cuda_runtime.h>` is `<hip/hip_runtime.h>` and `__CUDACC__` is `__HIPCC__`:
no hazard. A name hipify has no HIP counterpart for is left as it is and still is one.
Which files are hipified is the build model's word (`BuildFiles.hipified`); this module
holds the name table and answers for one name.

Two hipifies rename different names, so the build model says which one a build runs
(`BuildFiles.hipify_tools`):
- HIPIFY's hipify-perl and hipify-clang (`HIPIFY`): its table is data
  (`data/hipify_names.tsv`, written by `scripts/gen_hipify_table.py` from HIPIFY's documented
  tables of supported APIs; its first line names the version).
- PyTorch's hipify (`TORCH`), which extensions are built with: it replaces the whole words of
  its own map, which knows names HIPIFY's tables do not (`CUBLAS_GEMM_DEFAULT_TENSOR_OP`) and
  lacks some they have (`data/torch_hipify_names.tsv`, written by
  `scripts/gen_torch_hipify_table.py` from the map a PyTorch release ships).
Headers, namespaces and macros below follow the include and identifier maps PyTorch's hipify
publishes (`torch/utils/hipify/cuda_to_hip_mappings.py`, PyTorch 2.5).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_TABLE = Path(__file__).resolve().parent / "data" / "hipify_names.tsv"
_TORCH_TABLE = Path(__file__).resolve().parent / "data" / "torch_hipify_names.tsv"

HIPIFY = "hipify"  # hipify-perl, hipify-clang
TORCH = "torch"  # torch/utils/hipify (PyTorch extensions, `hipify_python`, ROCm's hipify_torch)

# `#include` paths hipify rewrites (the CUDA header -> the one hip-clang then reads).
HEADERS: dict[str, str] = {
    "cuda.h": "hip/hip_runtime.h",
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_runtime_api.h": "hip/hip_runtime_api.h",
    "cuda_profiler_api.h": "hip/hip_runtime_api.h",
    "device_functions.h": "hip/device_functions.h",
    "driver_types.h": "hip/driver_types.h",
    "library_types.h": "hip/library_types.h",
    "channel_descriptor.h": "hip/channel_descriptor.h",
    "cuComplex.h": "hip/hip_complex.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h",
    "cuda_texture_types.h": "hip/hip_texture_types.h",
    "cooperative_groups.h": "hip/hip_cooperative_groups.h",
    "vector_types.h": "hip/hip_vector_types.h",
    "cublas.h": "hipblas/hipblas.h",
    "cublas_v2.h": "hipblas/hipblas.h",
    "cublasLt.h": "hipblaslt/hipblaslt.h",
    "curand.h": "hiprand/hiprand.h",
    "curand_kernel.h": "hiprand/hiprand_kernel.h",
    "curand_philox4x32_x.h": "hiprand/hiprand_kernel.h",
    "curand_normal.h": "hiprand/hiprand_kernel.h",
    "curand_uniform.h": "hiprand/hiprand_kernel.h",
    "cusparse.h": "hipsparse/hipsparse.h",
    "cufft.h": "hipfft/hipfft.h",
    "cufftXt.h": "hipfft/hipfftXt.h",
    "cusolverDn.h": "hipsolver/hipsolver.h",
    "cub/cub.cuh": "hipcub/hipcub.hpp",
    "nccl.h": "rccl/rccl.h",
    "nvrtc.h": "hip/hiprtc.h",
    "nvToolsExt.h": "roctracer/roctx.h",
    "nvtx3/nvToolsExt.h": "roctracer/roctx.h",
}
# Headers of the CUDA toolkit itself (not of a library: those are L001's), which ROCm does not
# ship: a file compiled for ROCm as written (no hipify) stops at them ("file not found").
# The HIP header that declares the same things, where there is one.
TOOLKIT_HEADERS: dict[str, str | None] = {
    **{name: hip for name, hip in HEADERS.items() if name.startswith(("cuda", "cuComplex", "cooperative_groups",
                                                                      "device_functions", "driver_types",
                                                                      "library_types", "channel_descriptor",
                                                                      "vector_types"))},
    "cooperative_groups/reduce.h": "hip/hip_cooperative_groups.h",
    "device_launch_parameters.h": "hip/hip_runtime.h",
    "vector_functions.h": "hip/hip_vector_types.h",
    "math_constants.h": "hip/hip_math_constants.h",
    "cuda_fp8.h": "hip/hip_fp8.h",
    "cuda_occupancy.h": None,
    "cuda_pipeline.h": None,
    "mma.h": None,
}
# Every CUB header becomes hipCUB's one header.
HEADER_FOLDERS: dict[str, str] = {"cub/": "hipcub/hipcub.hpp"}
# Namespaces hipify renames where they are used (`cub::BlockReduce` -> `hipcub::BlockReduce`).
NAMESPACES: dict[str, str] = {"cub": "hipcub", "thrust::cuda": "thrust::hip", "thrust::system::cuda": "thrust::system::hip"}
# Preprocessor names hipify renames to one hip-clang defines: a hipified file's
# `#ifdef __CUDACC__` is taken on ROCm (`__HIPCC__` is 1 there).
ROCM_DEFINES: dict[str, str] = {"__CUDACC__": "1"}


@cache
def _rows() -> tuple[tuple[str, str, str], ...]:
    """HIPIFY's table as (CUDA name, HIP name or "", API), read once."""
    with _TABLE.open(encoding="utf-8") as lines:
        return tuple(tuple(line.rstrip("\n").split("\t")) for line in lines if not line.startswith("#"))


@cache
def _names() -> dict[str, str]:
    return {cuda: hip for cuda, hip, _ in _rows()}


@cache
def _torch_names() -> dict[str, str]:
    """PyTorch's map, less the renames to a name HIP does not have: those it marks
    unsupported, unless HIPIFY's tables give the name a HIP counterpart too (the mark is
    sometimes stale: `cublasGemmEx` -> `hipblasGemmEx`)."""
    hipify_names = _names()
    hip_names = set(hipify_names.values())
    table: dict[str, str] = {}
    with _TORCH_TABLE.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith("#"):
                cuda, hip, flag = line.rstrip("\n").split("\t")
                if flag != "unsupported" or hip in hip_names or hipify_names.get(cuda):
                    table[cuda] = hip
    return table


# The project's own additions to its hipify step (hipify_torch's `CUSTOM_MAP_FILE`), CUDA text
# -> HIP text, set once a scan's build files are read (`use_custom_map`); forked workers inherit it.
_custom: dict[str, str] = {}


def use_custom_map(pairs) -> None:
    global _custom
    _custom = dict(pairs)


def custom_map() -> tuple[tuple[str, str], ...]:
    """The map in use (part of the cache's key)."""
    return tuple(_custom.items())


def hip_name(cuda_name: str, tools: frozenset[str] = frozenset({HIPIFY})) -> str | None:
    """The name hip-clang reads for `cuda_name` once the build's hipify `tools` ran; None
    where one of them leaves the name as it is, or renames it to one HIP lacks."""
    if tools and cuda_name in _custom:
        return _custom[cuda_name]
    return _by_every(tools, lambda: _names().get(cuda_name), lambda: _torch_names().get(cuda_name))


def _by_every(tools: frozenset[str], by_hipify, by_torch) -> str | None:
    """What every one of `tools` makes of a name or header (HIPIFY's word where they
    differ), or None where one leaves it as it is."""
    found = None
    for tool in sorted(tools):
        hip = by_torch() if tool == TORCH else by_hipify()
        if not hip:
            return None
        found = found or hip
    return found


@cache
def _without_hip() -> frozenset[str]:
    """The runtime and driver API names HIPIFY's tables document with no HIP counterpart."""
    return frozenset(cuda for cuda, hip, api in _rows() if not hip and api in ("runtime", "driver"))


def names_without_hip() -> frozenset[str]:
    """Every name `without_hip` may accept (a rule's trigger: without one of them in its bytes,
    a file names none)."""
    return _without_hip()


def without_hip(cuda_name: str, tools: frozenset[str] = frozenset()) -> bool:
    """Is `cuda_name` a CUDA runtime or driver API name HIP has no counterpart for, which
    none of the build's hipify `tools` (none: the file is compiled as written) renames either?
    hip-clang then meets the CUDA name and stops."""
    if cuda_name not in _without_hip() or (tools and cuda_name in _custom):
        return False
    return not (TORCH in tools and _torch_names().get(cuda_name))


def documented(cuda_name: str) -> bool:
    """Is `cuda_name` a name of a CUDA API (runtime, driver, a library) HIPIFY documents?"""
    return cuda_name in _names()


def hip_header(include_path: str, tools: frozenset[str] = frozenset({HIPIFY})) -> str | None:
    """The header hip-clang reads for `#include <include_path>` once the build's hipify
    `tools` ran, or None (one of them leaves it as it is)."""
    if tools and _custom:  # the map's keys are the text as written: `<nvtx3/nvToolsExt.h>`
        for written in (f"<{include_path}>", f'"{include_path}"', include_path):
            if written in _custom:
                return _custom[written].strip('<>"')
    return _by_every(tools, lambda: _hipify_header(include_path), lambda: _torch_header(include_path))


def _hipify_header(include_path: str) -> str | None:
    mapped = HEADERS.get(include_path)
    if mapped is not None:
        return mapped
    return next((hip for folder, hip in HEADER_FOLDERS.items() if include_path.startswith(folder)), None)


def _torch_header(include_path: str) -> str | None:
    # PyTorch's map names most headers as they are, `cuda.h` only with the include before it
    # (`include <cuda.h`), so that other words ending in `cuda.h` stay; `nccl.h` in brackets.
    table = _torch_names()
    mapped = table.get(include_path)
    if mapped is None and (spelled := table.get(f"include <{include_path}")):
        mapped = spelled.removeprefix("include <")
    if mapped is None and (bracketed := table.get(f"<{include_path}>")):
        mapped = bracketed.strip("<>")
    return mapped
