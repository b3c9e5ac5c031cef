"""L: CUDA libraries that do not exist on ROCm, and the table of their ROCm counterparts.

The table (`CUDA_LIBRARIES`, `CUDA_RUNTIME_LIBRARIES`, `library_for_link_name`) is the one
place that knows which header, API prefix, link name and CMake target belongs to which
library and what replaces it on ROCm. L001 (C/C++ includes and calls), C003 (CMake link
targets) and the setup.py side (`libraries=['cublas']`) all read it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from portlint import queries
from portlint.checks.cpp import callee_name, include_path
from portlint.finding import Finding, Severity, at_node
from portlint.fix import Edit, Fix
from portlint.source import CUDA, SourceFile
from portlint.triggers import needs


@dataclass(frozen=True)
class CudaLibrary:
    name: str  # as NVIDIA spells it: "cuBLAS"
    # Include paths, matched with fnmatch against the whole `#include` path; a pattern
    # with a `/` is a directory of the library, one without also matches `any/dir/<name>`.
    headers: tuple[str, ...] = ()
    # `cublas` matches `cublasSgemm` (the prefix, then upper case) and `cublas` itself; a
    # prefix ending in `_` matches whatever follows (`curand_` matches `curand_init`).
    api_prefixes: tuple[str, ...] = ()
    link_names: tuple[str, ...] = ()  # `-l<name>`, `CUDA::<name>`, setup.py `libraries=[...]`
    counterpart: str | None = None  # the ROCm library; None: there is no port
    port: str = ""  # imperative advice with concrete code, used as the fix title
    hip_target: str | None = None  # CMake imported target of the counterpart
    hip_package: str | None = None  # the `find_package()` name that defines `hip_target`
    hip_library: str | None = None  # a plain library to link where there is no target
    # Headers that ROCm ships under the same path (rocThrust): the source builds unchanged
    # once the ROCm library is installed and linked.
    same_headers: bool = False
    # For a drop-in API (RCCL keeps the `nccl*` names): the ROCm header to include instead.
    drop_in_header: str | None = None

    @property
    def severity(self) -> Severity:
        if self.counterpart is None:
            return Severity.ERROR
        return Severity.NOTE if self.same_headers else Severity.WARNING


# Most specific first: `cublasLt` before `cublas`, the cuDNN frontend before cuDNN,
# Thrust's CUDA backend before Thrust.
CUDA_LIBRARIES: tuple[CudaLibrary, ...] = (
    CudaLibrary(
        "cuBLASLt", ("cublasLt.h",), ("cublasLt",), ("cublasLt",), "hipBLASLt",
        "Port to hipBLASLt: `#include <hipblaslt/hipblaslt.h>`, `hipblasLtMatmul`",
        "roc::hipblaslt", "hipblaslt"),
    CudaLibrary(
        "cuBLAS", ("cublas_v2.h", "cublas.h", "cublas_api.h", "cublasXt.h"), ("cublas",), ("cublas",),
        "hipBLAS",
        "Port to hipBLAS (`#include <hipblas/hipblas.h>`, `hipblasSgemm`, `hipblasGemmEx`) "
        "or rocBLAS (`rocblas_gemm_ex`)",
        "roc::hipblas", "hipblas"),
    CudaLibrary(
        "cuFFT", ("cufft.h", "cufftXt.h", "cufftw.h"), ("cufft",), ("cufft", "cufftw"), "hipFFT",
        "Port to hipFFT: `#include <hipfft/hipfft.h>`, `hipfftPlan1d`, `hipfftExecC2C`",
        "hip::hipfft", "hipfft"),
    CudaLibrary(
        "cuSPARSE", ("cusparse.h", "cusparse_v2.h"), ("cusparse",), ("cusparse",), "hipSPARSE",
        "Port to hipSPARSE: `#include <hipsparse/hipsparse.h>`, `hipsparseSpMV`",
        "roc::hipsparse", "hipsparse"),
    CudaLibrary(
        "cuSOLVER", ("cusolverDn.h", "cusolverSp.h", "cusolverRf.h", "cusolverMg.h", "cusolver_common.h"),
        ("cusolver",), ("cusolver",), "hipSOLVER",
        "Port to hipSOLVER: `#include <hipsolver/hipsolver.h>`, `hipsolverDnSgetrf`",
        "roc::hipsolver", "hipsolver"),
    CudaLibrary(
        "cuRAND", ("curand.h", "curand_kernel.h", "curand_philox4x32_x.h", "curand_mtgp32_host.h"),
        ("curand", "curand_"), ("curand",), "hipRAND",
        "Port to hipRAND: `#include <hiprand/hiprand.h>` (`hiprandGenerateUniform`); "
        "device code `#include <hiprand/hiprand_kernel.h>` (`hiprand_init`, `hiprand_uniform`)",
        "hip::hiprand", "hiprand"),
    CudaLibrary(
        "cuDNN frontend", ("cudnn_frontend.h", "cudnn_frontend/*", "cudnn_frontend_*.h"),
        port="Keep the cuDNN frontend code under `#ifndef USE_ROCM` and write the ROCm path "
             "with MIOpen (`#include <miopen/miopen.h>`, `miopenConvolutionForward`)"),
    CudaLibrary(
        "cuDNN",
        ("cudnn.h", "cudnn_version.h", "cudnn_backend.h", "cudnn_graph.h", "cudnn_ops.h", "cudnn_cnn.h",
         "cudnn_adv.h", "cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_cnn_infer.h", "cudnn_cnn_train.h",
         "cudnn_adv_infer.h", "cudnn_adv_train.h"),
        ("cudnn",), ("cudnn",), "MIOpen",
        "Port to MIOpen: `#include <miopen/miopen.h>`, `miopenConvolutionForward` "
        "(the API differs call by call)",
        "MIOpen", "miopen"),
    CudaLibrary(
        "NCCL", ("nccl.h", "nccl_net.h"), ("nccl",), ("nccl",), "RCCL",
        "Include `<rccl/rccl.h>` on ROCm: RCCL keeps the `nccl*` API names",
        "roc::rccl", "rccl", drop_in_header="rccl/rccl.h"),
    CudaLibrary(
        "CUB", ("cub/*",), link_names=(), counterpart="hipCUB",
        port="Port to hipCUB: `#include <hipcub/hipcub.hpp>` and `hipcub::` for `cub::`",
        hip_target="hip::hipcub", hip_package="hipcub"),
    CudaLibrary(
        "Thrust's CUDA backend", ("thrust/system/cuda/*",), counterpart="rocThrust",
        port="Include `<thrust/system/hip/...>` and use `thrust::hip::par` for `thrust::cuda::par` "
             "(rocThrust's HIP backend)",
        hip_target="roc::rocthrust", hip_package="rocthrust"),
    CudaLibrary(
        "Thrust", ("thrust/*",), counterpart="rocThrust",
        port="Build against rocThrust: `find_package(rocthrust)` and link `roc::rocthrust` "
             "(same `<thrust/...>` headers)",
        hip_target="roc::rocthrust", hip_package="rocthrust", same_headers=True),
    CudaLibrary(
        "NVTX", ("nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h", "nvtx3/*"), ("nvtx",),
        ("nvToolsExt", "nvtx3"), "roctx",
        "Port to roctx: `#include <roctracer/roctx.h>`, `roctxRangePushA`, `roctxRangePop`, "
        "and link `roctx64`",
        hip_library="roctx64"),
    CudaLibrary(
        "CUTLASS", ("cutlass/*", "cute/*"),
        port="Keep the CUTLASS code under `#ifndef USE_ROCM` and write the ROCm path with "
             "Composable Kernel (`#include <ck/ck.hpp>`) or hipBLASLt"),
)

# Linked by CMake and setup.py builds, but not included by name in C sources (L001 leaves
# them to the HIP runtime rules).
CUDA_RUNTIME_LIBRARIES: tuple[CudaLibrary, ...] = (
    CudaLibrary("the CUDA runtime", link_names=("cudart", "cuda", "cuda_driver"), counterpart="HIP",
                port="Link the HIP runtime", hip_target="hip::host", hip_package="hip"),
    CudaLibrary("NVRTC", link_names=("nvrtc", "nvrtc_builtins"), counterpart="hipRTC",
                port="Link hipRTC", hip_target="hiprtc::hiprtc", hip_package="hiprtc"),
)

_BY_LINK_NAME = {
    name.lower(): lib for lib in CUDA_LIBRARIES + CUDA_RUNTIME_LIBRARIES for name in lib.link_names
}


def library_for_link_name(name: str) -> CudaLibrary | None:
    """The library a linker name stands for: `cublas`, `cublas_static`, `cudart`, `CUDA` (case-insensitive)."""
    name = name.lower()
    return _BY_LINK_NAME.get(name) or _BY_LINK_NAME.get(name.removesuffix("_static"))


def library_for_header(path: str) -> CudaLibrary | None:
    """The library whose header `path` (as written in `#include`) is, if any."""
    for lib in CUDA_LIBRARIES:
        for pattern in lib.headers:
            if fnmatch.fnmatchcase(path, pattern):
                return lib
            if "/" not in pattern and fnmatch.fnmatchcase(path, "*/" + pattern):
                return lib  # "third_party/cuda/include/cublas_v2.h"
    return None


_API_PREFIXES = sorted(
    ((prefix, lib) for lib in CUDA_LIBRARIES for prefix in lib.api_prefixes), key=lambda p: -len(p[0])
)


def library_for_api(name: str) -> CudaLibrary | None:
    """The library a function name belongs to: `cublasSgemm`, `curand_init`; not `cublas_helper`."""
    for prefix, lib in _API_PREFIXES:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):]
        if prefix.endswith("_") or not rest or rest[0].isupper():
            return lib
    return None


# ---- L001 ---------------------------------------------------------------------------------
_INCLUDES = "(preproc_include path: (_) @path) @include"
_CALLS = "(call_expression function: (_) arguments: (argument_list)) @call"
# Names the file defines itself: compatibility macros (`#define cublasSgemm hipblasSgemm`)
# and wrappers are not library calls.
_OWN_NAMES = """
[(preproc_def name: (identifier) @name)
 (preproc_function_def name: (identifier) @name)
 (function_definition declarator: (function_declarator declarator: (identifier) @name))]
"""
_API_BYTES = tuple(p.encode() for p, _ in _API_PREFIXES)
_HEADER_BYTES = (b"cublas", b"cufft", b"cusparse", b"cusolver", b"curand", b"cudnn", b"nccl", b"cub/",
                 b"thrust/", b"nvToolsExt", b"nvtx3/", b"cutlass/", b"cute/")
# Either arm of this guard is read by portlint's ROCm-path model as ROCm vs CUDA.
_ROCM_GUARD = "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)"


@needs(*_HEADER_BYTES, *_API_BYTES)
def check_cuda_library(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(b in data for b in _HEADER_BYTES + _API_BYTES):
        return []
    root = source.tree.root_node
    findings: list[Finding] = []
    included: set[str] = set()  # libraries whose header the file includes, in any branch
    live: dict[str, list] = {}  # library -> its live includes: one finding, one fix for all
    for include, path_node in _includes(source, root):
        path = include_path(path_node, source)
        lib = library_for_header(path)
        if lib is None:
            continue
        included.add(lib.name)
        if _is_live(source, include.start_byte):
            live.setdefault(lib.name, []).append((lib, include, path_node, path))
    for sites in live.values():
        lib, _, path_node, path = sites[0]
        findings.append(at_node(
            source, path_node, _include_message(lib, path),
            _include_fix(lib, [include for _, include, _, _ in sites], source), severity=lib.severity))

    if not any(b in data for b in _API_BYTES):
        return findings
    own_names = {source.node_text(n) for n in queries.nodes(CUDA, _OWN_NAMES, root, "name")}
    seen_calls: set[str] = set()
    for call in queries.nodes(CUDA, _CALLS, root, "call"):
        name = callee_name(call, source)
        lib = library_for_api(name) if name else None
        if lib is None or lib.name in included or name in own_names or name in seen_calls:
            continue
        if not _is_live(source, call.start_byte):
            continue
        seen_calls.add(name)
        function = call.child_by_field_name("function")
        findings.append(at_node(
            source, function,
            f"`{name}` is a {lib.name} call; ROCm has no {lib.name}, its port is {lib.counterpart}.",
            Fix.advice(lib.port), severity=lib.severity))
    return findings


def _includes(source: SourceFile, root):
    for match in queries.matches(CUDA, _INCLUDES, root):
        yield match["include"][0], match["path"][0]


def _is_live(source: SourceFile, offset: int) -> bool:
    # Only to pick which occurrence to report once; the engine itself drops dead findings.
    return source.rocm_path is None or source.rocm_path.is_live(offset)


def _include_message(lib: CudaLibrary, written: str) -> str:
    if lib.counterpart is None:
        return f"{lib.name} header `{written}` has no ROCm counterpart; this code cannot build on AMD."
    if lib.same_headers:
        return f"{lib.name} header `{written}` builds on ROCm only against {lib.counterpart}."
    return f"{lib.name} header `{written}` does not exist on ROCm; its port is {lib.counterpart}."


def _include_fix(lib: CudaLibrary, includes: list, source: SourceFile) -> Fix:
    """Each live include of the library (a run of adjacent ones as one) wrapped in the ROCm
    guard: all in one fix, so one `--fix` pass leaves none for the next."""
    if lib.drop_in_header is None:
        return Fix.advice(lib.port)
    # Same API names under another header: include it on ROCm, keep the CUDA include.
    opening = f"{_ROCM_GUARD}\n#include <{lib.drop_in_header}>\n#else\n"
    runs: list[list[int]] = []
    for include in includes:
        if source.data[:include.start_byte].endswith(opening.encode()):
            # Wrapped already, though the ROCm-path model does not see it (an `#else` or
            # `#endif` without its `#if` elsewhere in the file): another edit would nest one
            # more wrapper on every `--fix` pass.
            continue
        if runs and runs[-1][1] == include.start_byte:
            runs[-1][1] = include.end_byte
        else:
            runs.append([include.start_byte, include.end_byte])
    if not runs:
        return Fix.advice(lib.port)
    edits = []
    for start, end in runs:
        newline = "" if source.data[end - 1:end] == b"\n" else "\n"
        edits += [Edit.insert(start, opening), Edit.insert(end, f"{newline}#endif\n")]
    return Fix.unsafe(
        f"Include `<{lib.drop_in_header}>` under `{_ROCM_GUARD}`: {lib.counterpart} keeps the "
        f"{lib.name} API names",
        *edits,
    )


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _OWN_NAMES,
    _CALLS,
    _INCLUDES,
)
