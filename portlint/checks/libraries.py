"""L: CUDA libraries that do not exist on ROCm, and the table of their ROCm counterparts.

The table (`CUDA_LIBRARIES`, `CUDA_RUNTIME_LIBRARIES`, `library_for_link_name`) is the one
place that knows which header, API prefix, link name and CMake target belongs to which
library and what replaces it on ROCm. L001 (C/C++ includes and calls), C003 (CMake link
targets) and the setup.py side (`libraries=['cublas']`) all read it.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from portlint import hipify, queries
from portlint.checks.cpp import INCLUDES, ancestors_of, callee_name, enclosing_function, include_path, includes, token_nodes
from portlint.finding import Finding, Related, Severity, at_node, finding
from portlint.fix import Edit, Fix
from portlint.source import CUDA, SourceFile
from portlint.triggers import all_of, any_of, needs


@dataclass(unsafe_hash=True)
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
    # Enum constants and macros of the API: `CUBLAS_` matches `CUBLAS_OP_N`.
    constant_prefixes: tuple[str, ...] = ()
    # One-to-one renames of the API on ROCm (`cublas` -> `hipblas`), by prefix; a library
    # without them gets advice at each use. `exact_renames` for APIs mirrored name by name.
    renames: tuple[tuple[str, str], ...] = ()
    exact_renames: tuple[tuple[str, str], ...] = ()
    hip_header: str | None = None  # the counterpart's main header, named by the rename fix
    # The counterpart is an early-access preview (libhipcxx, "not for production workloads"):
    # depending on it stays a warning even with the same headers.
    preview: bool = False

    @property
    def severity(self) -> Severity:
        if self.counterpart is None:
            return Severity.ERROR
        return Severity.NOTE if self.same_headers and not self.preview else Severity.WARNING


# Most specific first: `cublasLt` before `cublas`, the cuDNN frontend before cuDNN,
# Thrust's CUDA backend before Thrust.
CUDA_LIBRARIES: tuple[CudaLibrary, ...] = (
    CudaLibrary(
        "cuBLASLt", ("cublasLt.h",), ("cublasLt",), ("cublasLt",), "hipBLASLt",
        "Port to hipBLASLt: `#include <hipblaslt/hipblaslt.h>`, `hipblasLtMatmul`",
        "roc::hipblaslt", "hipblaslt", constant_prefixes=("CUBLASLT_",),
        renames=(("cublasLt", "hipblasLt"), ("CUBLASLT_", "HIPBLASLT_")), hip_header="hipblaslt/hipblaslt.h"),
    CudaLibrary(
        "cuBLAS", ("cublas_v2.h", "cublas.h", "cublas_api.h", "cublasXt.h"), ("cublas",), ("cublas",),
        "hipBLAS",
        "Port to hipBLAS (`#include <hipblas/hipblas.h>`, `hipblasSgemm`, `hipblasGemmEx`) "
        "or rocBLAS (`rocblas_gemm_ex`)",
        "roc::hipblas", "hipblas", constant_prefixes=("CUBLAS_",),
        renames=(("cublas", "hipblas"), ("CUBLAS_", "HIPBLAS_")), hip_header="hipblas/hipblas.h"),
    CudaLibrary(
        "cuFFT", ("cufft.h", "cufftXt.h", "cufftw.h"), ("cufft",), ("cufft", "cufftw"), "hipFFT",
        "Port to hipFFT: `#include <hipfft/hipfft.h>`, `hipfftPlan1d`, `hipfftExecC2C`",
        "hip::hipfft", "hipfft", constant_prefixes=("CUFFT_",),
        renames=(("cufft", "hipfft"), ("CUFFT_", "HIPFFT_")), hip_header="hipfft/hipfft.h"),
    CudaLibrary(
        "cuSPARSE", ("cusparse.h", "cusparse_v2.h"), ("cusparse",), ("cusparse",), "hipSPARSE",
        "Port to hipSPARSE: `#include <hipsparse/hipsparse.h>`, `hipsparseSpMV`",
        "roc::hipsparse", "hipsparse", constant_prefixes=("CUSPARSE_",),
        renames=(("cusparse", "hipsparse"), ("CUSPARSE_", "HIPSPARSE_")), hip_header="hipsparse/hipsparse.h"),
    CudaLibrary(
        "cuSOLVER", ("cusolverDn.h", "cusolverSp.h", "cusolverRf.h", "cusolverMg.h", "cusolver_common.h"),
        ("cusolver",), ("cusolver",), "hipSOLVER",
        "Port to hipSOLVER: `#include <hipsolver/hipsolver.h>`, `hipsolverDnSgetrf`",
        "roc::hipsolver", "hipsolver", constant_prefixes=("CUSOLVER_",),
        renames=(("cusolver", "hipsolver"), ("CUSOLVER_", "HIPSOLVER_")), hip_header="hipsolver/hipsolver.h"),
    CudaLibrary(
        "cuRAND", ("curand.h", "curand_kernel.h", "curand_philox4x32_x.h", "curand_mtgp32_host.h"),
        ("curand", "curand_"), ("curand",), "hipRAND",
        "Port to hipRAND: `#include <hiprand/hiprand.h>` (`hiprandGenerateUniform`); "
        "device code `#include <hiprand/hiprand_kernel.h>` (`hiprand_init`, `hiprand_uniform`)",
        "hip::hiprand", "hiprand", constant_prefixes=("CURAND_",),
        renames=(("curand_", "hiprand_"), ("curand", "hiprand"), ("CURAND_", "HIPRAND_")),
        hip_header="hiprand/hiprand.h"),
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
        "MIOpen", "miopen", constant_prefixes=("CUDNN_",)),
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
        hip_library="roctx64", hip_header="roctracer/roctx.h",
        exact_renames=(("nvtxRangePushA", "roctxRangePushA"), ("nvtxRangePush", "roctxRangePushA"),
                       ("nvtxRangePop", "roctxRangePop"), ("nvtxMarkA", "roctxMarkA"),
                       ("nvtxMark", "roctxMarkA"))),
    CudaLibrary(
        "NVML", ("nvml.h",), ("nvml",), ("nvidia-ml",), "AMD SMI",
        "Port to AMD SMI: `#include <amd_smi/amdsmi.h>`, `amdsmi_init`, `amdsmi_get_gpu_activity`, "
        "and link `amd_smi` (or query `rocm-smi`/`amd-smi` on the command line)",
        hip_library="amd_smi", constant_prefixes=("NVML_",)),
    CudaLibrary(
        "libcu++",
        ("cuda/std/*", "cuda/barrier", "cuda/pipeline", "cuda/atomic", "cuda/latch", "cuda/semaphore",
         "cuda/annotated_ptr", "cuda/memory_resource", "cuda/stream_ref", "cuda/functional", "cuda/ptx",
         "cuda/cmath", "cuda/type_traits", "cuda/utility", "cuda/memory"),
        counterpart="libhipcxx", same_headers=True, preview=True,
        port="Keep the libcu++ code under `#ifndef USE_ROCM` and on ROCm use the standard library "
             "(`<atomic>`, `<type_traits>`), `__syncthreads()` for `cuda::barrier` and plain loads "
             "for `cuda::pipeline`; or build against libhipcxx, which keeps the `<cuda/std/...>` "
             "headers (include `<hip/hip_runtime.h>` first) and covers a subset of libcu++"),
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


def link_message(linked: list[tuple[str, "CudaLibrary | None"]]) -> str:
    """What a build file's links of CUDA toolkit libraries say (`-lcublas`, `CUDA::cufft`), one
    place or several of one command: (the text as written, its library or None) each."""
    names = ", ".join(f"`{text}`" for text, _ in linked)
    libraries = ", ".join(dict.fromkeys(lib.name if lib is not None else "a library" for _, lib in linked))
    verb = "links" if len(linked) == 1 else "link"
    return f"{names} {verb} {libraries} from the CUDA toolkit, which ROCm builds lack."


_LIBRARY_SEARCH_FLAGS = ("-L", "-Wl,-rpath", "-Wl,--rpath", "-rpath")
# A flags or libraries variable read whole (`${CMAKE_EXE_LINKER_FLAGS}`, `$(LDFLAGS)`, `$(LIBS)`).
_FLAGS_REFERENCE = re.compile(r"\$(?:\{\w*(?:FLAGS|LIBS)\}|\(\w*(?:FLAGS|LIBS)\))")


def is_library_search_flag(text: str) -> bool:
    """`-L/usr/local/cuda/lib64`, `-Wl,-rpath,$(CUDA_HOME)/lib64`, `-L /opt/x;-L/opt/y`:
    folders the linker or the loader searches, and skips where they are not there (only a
    library it then links is CUDA's: L001 reports that, at the library's name). A string
    that also holds another flag (`"-L... -I..."`) is judged by that flag too."""
    items = _flag_items(text)
    if not items:
        return False
    after_bare_l = False
    for item in items:
        if after_bare_l and not item.startswith("-"):
            after_bare_l = False
        elif after_bare_l or item == "-L":
            if after_bare_l:
                return False  # `-L -I...`: the folder is missing, the next item is a flag of its own
            after_bare_l = True
        elif not item.startswith(_LIBRARY_SEARCH_FLAGS) and not _FLAGS_REFERENCE.fullmatch(item):
            return False  # (`${CMAKE_EXE_LINKER_FLAGS}`, the flags appended to: judged where they are set)
    return not after_bare_l and any(item.startswith(_LIBRARY_SEARCH_FLAGS) for item in items)


def _flag_items(text: str) -> list[str]:
    """`text` split at white space and `;`, not inside `$(...)` or `${...}`."""
    items, current, depth = [], [], 0
    for i, char in enumerate(text):
        if char in "({" and i > 0 and text[i - 1] == "$":
            depth += 1
        elif char in ")}" and depth:
            depth -= 1
        elif depth == 0 and (char.isspace() or char == ";"):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        items.append("".join(current))
    return items


def library_for_link_name(name: str) -> CudaLibrary | None:
    """The library a linker name stands for: `cublas`, `cublas_static`, `cudart`, `CUDA` (case-insensitive)."""
    name = name.lower()
    return _BY_LINK_NAME.get(name) or _BY_LINK_NAME.get(name.removesuffix("_static"))


# PyTorch's own headers keep CUDA names in their paths (`torch/csrc/cuda/nccl.h` wraps NCCL,
# or RCCL in a ROCm build of PyTorch, which installs the same paths): not the library's.
_PYTORCH_HEADER_ROOTS = ("torch/", "ATen/", "c10/", "caffe2/")


def library_for_header(path: str) -> CudaLibrary | None:
    """The library whose header `path` (as written in `#include`) is, if any."""
    if path.startswith(_PYTORCH_HEADER_ROOTS):
        return None
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
_CONSTANT_PREFIXES = sorted(
    ((prefix, lib) for lib in CUDA_LIBRARIES for prefix in lib.constant_prefixes), key=lambda p: -len(p[0])
)
# Project helpers named after a library (`cublasCheck`, `cudnnErrCheck`, `cufftSafeCall`):
# no library API starts so.
_PROJECT_HELPER = ("Check", "Err", "Assert", "Safe", "Call", "Try", "Wrapper", "Helper")


def library_for_api(name: str) -> CudaLibrary | None:
    """The library a function name belongs to: `cublasSgemm`, `curand_init`; not `cublas_helper`,
    nor the library's name alone (`cufft`: no API is called so, a project's backend tag is)."""
    for prefix, lib in _API_PREFIXES:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):]
        if rest and (prefix.endswith("_") or rest[0].isupper()):
            return lib
    return None


def library_for_name(name: str) -> CudaLibrary | None:
    """The library an API name of any kind belongs to: a function or type (`cublasHandle_t`)
    or an enum constant (`CUBLAS_OP_N`); not a project helper (`cublasCheck`, `CUBLAS_CHECK`)."""
    for prefix, lib in _CONSTANT_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return None if name[len(prefix):].startswith(("CHECK", "CALL", "ERR", "SAFE", "TRY")) else lib
    lib = library_for_api(name)
    if lib is None:
        return None
    rest = next(name[len(p):] for p, candidate in _API_PREFIXES if candidate is lib and name.startswith(p))
    return None if rest.startswith(_PROJECT_HELPER) else lib


# Renamed on ROCm but with other parameter types (`cudaDataType` becomes `hipDataType`,
# `cublasMath_t` has no counterpart): the call needs a person, not a rename.
_SIGNATURE_DIFFERS = frozenset({
    "cublasGemmEx", "cublasGemmBatchedEx", "cublasGemmStridedBatchedEx", "cublasSetMathMode",
    "cublasGetMathMode", "cublasLtMatrixLayoutCreate", "cublasLtMatmulDescCreate",
})


def rocm_name(name: str, lib: CudaLibrary) -> str | None:
    """The ROCm counterpart's spelling of `name` where the port renames one to one: the
    hipify table's word where it lists the name (None where HIPIFY knows no counterpart)."""
    if name in _SIGNATURE_DIFFERS:
        return None
    if hipify.documented(name):
        return hipify.hip_name(name)
    for cuda, hip in lib.exact_renames:
        if name == cuda:
            return hip
    for cuda, hip in lib.renames:
        if name.startswith(cuda):
            return hip + name[len(cuda):].removesuffix("_v2")
    return None


# ---- L001 ---------------------------------------------------------------------------------
_CALLS = "(call_expression function: (_) arguments: (argument_list)) @call"
# Names the file defines itself: compatibility macros (`#define cublasSgemm hipblasSgemm`),
# wrappers and type aliases (`typedef hipsparseHandle_t cusparseHandle_t;`) are not the library.
_OWN_NAMES = """
[(preproc_def name: (identifier) @name)
 (preproc_function_def name: (identifier) @name)
 (function_definition declarator: (function_declarator declarator: (identifier) @name))
 (function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
 (function_definition declarator: (reference_declarator (function_declarator declarator: (identifier) @name)))
 (function_definition declarator: (function_declarator declarator: (template_function name: (identifier) @name)))
 (type_definition declarator: (type_identifier) @name)
 (alias_declaration name: (type_identifier) @name)]
"""
# Functions the file declares and data members it gives its classes (`const char*
# cusparseGetStatusString(int);`, `void* curand_handle_;`): the project's names where the
# library documents no such name (a declaration of a documented one may be a stub's).
_OWN_DECLARED = """
[(declaration declarator: (function_declarator declarator: (identifier) @name))
 (declaration declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
 (declaration declarator: (function_declarator declarator: (template_function name: (identifier) @name)))
 (field_declaration declarator: (field_identifier) @name)
 (field_declaration declarator: (pointer_declarator declarator: (field_identifier) @name))]
"""
# Variables, parameters and template parameters the file names itself (`cusparseHandle_t
# cusparseHandle`, `template <typename curandState>`): a name that only looks like the API.
_OWN_VARIABLES = """
[(init_declarator declarator: (identifier) @name)
 (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
 (declaration declarator: (identifier) @name)
 (declaration declarator: (pointer_declarator declarator: (identifier) @name))
 (parameter_declaration declarator: (identifier) @name)
 (parameter_declaration declarator: (pointer_declarator declarator: (identifier) @name))
 (type_parameter_declaration (type_identifier) @name)]
"""
_API_BYTES = tuple(p.encode() for p, _ in _API_PREFIXES)
_CONSTANT_BYTES = tuple(p.encode() for p, _ in _CONSTANT_PREFIXES)
_HEADER_BYTES = (b"cublas", b"cufft", b"cusparse", b"cusolver", b"curand", b"cudnn", b"nccl", b"cub/",
                 b"thrust/", b"nvToolsExt", b"nvtx3/", b"cutlass/", b"cute/", b"nvml", b"cuda/")
# Either arm of this guard is read by portlint's ROCm-path model as ROCm vs CUDA.
_ROCM_GUARD = "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)"


# A library's namespace used in a file that includes none of its headers (a project wrapper
# header includes them): `cub::BlockReduce`, `using namespace cub;`, `thrust::cuda::par`.
_NAMESPACE_BYTES = (b"cub::", b"namespace cub", b"thrust::cuda", b"thrust::system::cuda")


@needs(*_HEADER_BYTES, *_API_BYTES, *_CONSTANT_BYTES, *_NAMESPACE_BYTES)
def check_cuda_library(source: SourceFile) -> list[Finding]:
    """Every include of a library header, and every line that uses a renamed library's API
    (calls, handle and status types, enum constants): each is a place the port edits."""
    data = source.data
    if not any(b in data for b in _HEADER_BYTES + _API_BYTES + _CONSTANT_BYTES + _NAMESPACE_BYTES):
        return []
    root = source.tree.root_node
    findings: list[Finding] = []
    included: set[str] = set()  # libraries whose header the file includes, in any branch
    live: dict[str, list] = {}  # library -> its live includes, in order
    for include, path_node in includes(source):
        path = include_path(path_node, source)
        lib = library_for_header(path)
        if lib is None:
            continue
        included.add(lib.name)
        if source.hipified_header(path) is not None and path.rsplit("/", 1)[-1] not in _LEGACY_HEADERS:
            continue  # hipify includes the ROCm library's header instead (a legacy API stays unported)
        if _is_live(source, include.start_byte):
            live.setdefault(lib.name, []).append((lib, include, path_node, path))
    own_nodes = queries.nodes(CUDA, _OWN_NAMES, root, "name")
    own_names = {source.node_text(n) for n in own_nodes}
    # A file that defines a library's documented API names (a function body, a type or a
    # macro named `cusparseCreate`, `cusparseHandle_t`) implements that API: a shim over the ROCm library
    # or a stub. Its uses of the API are its own, not a dependency on NVIDIA's library. A
    # plain alias (`#define cublasSgemm hipblasSgemm`, what L001's fix writes) renames that
    # one name only: the file's other uses of the library stay its dependency.
    implemented = {lib.name for n in own_nodes if not _is_plain_alias(n)
                   and hipify.documented(name := source.node_text(n)) and (lib := library_for_name(name))}
    if implemented:
        own_names |= {n for n in _library_names_in(source) if library_for_name(n).name in implemented}
    own_names |= {source.node_text(n) for n in queries.nodes(CUDA, _OWN_VARIABLES, root, "name")}
    own_names |= {name for n in queries.nodes(CUDA, _OWN_DECLARED, root, "name")
                  if not hipify.documented(name := source.node_text(n))}
    uses = _api_names(source, own_names)
    namespaces = _namespace_names(source, own_names)
    aliases: dict[str, Fix] = {}  # library -> the one fix of its include and of every use
    for sites in live.values():
        # A finding per include (each is a line to change). A library's includes are all
        # guarded by one fix (each finding carries it), so one `--fix` pass leaves none.
        lib = sites[0][0]
        all_includes = [include for _, include, _, _ in sites]
        if _renamed_header(lib, all_includes[0], source) is not None:
            names = [name for nodes in uses.get(lib.name, {}).values() for name in map(source.node_text, nodes)]
            fix = aliases[lib.name] = _alias_fix(lib, all_includes, names, namespaces.get(lib.name, ()), source)
        else:
            fix = _include_fix(lib, all_includes, source)
        legacy = _legacy_api(lib, sites)
        if legacy is not None:
            # The file is written on an API the counterpart does not mirror: one root cause.
            finding_, _ = _library_finding(source, lib, sites, Fix.advice(legacy[1]), uses.pop(lib.name, {}),
                                           (), legacy[0], fold_all=True)
            findings.append(finding_)
            continue
        if fix.edits and lib.name in aliases:
            # The alias block at the include is the whole change: the uses keep their CUDA
            # names on both builds. One root cause, one finding, the uses as related places.
            finding_, unaliased = _library_finding(source, lib, sites, fix, uses.pop(lib.name, {}),
                                                   namespaces.pop(lib.name, ()))
            findings.append(finding_)
            if unaliased:
                uses[lib.name] = unaliased
            continue
        if lib.counterpart is None:
            # No port exists: the file is written on the library, one root cause however many
            # of its headers it includes. One finding, the other includes as related places.
            _, first, first_path_node, first_path = sites[0]
            related = tuple(Related(source.location(node.start_byte, node.end_byte), f"`{written}` is included here too")
                            for _, _, node, written in sites[1:])
            findings.append(at_node(source, first_path_node, _include_message(lib, first_path), fix,
                                    severity=lib.severity, related=related))
            continue
        # The port swaps each include (a line to change, a finding each); the lines naming the
        # API follow from the first (related places), but those naming an API the counterpart
        # lacks, each its own finding.
        finding_, unfolded = _library_finding(source, lib, sites[:1], fix, uses.pop(lib.name, {}),
                                              namespaces.pop(lib.name, ()))
        findings.append(finding_)
        if unfolded:
            uses[lib.name] = unfolded
        for lib, include, path_node, path in sites[1:]:
            findings.append(at_node(source, path_node, _include_message(lib, path), fix, severity=lib.severity))

    findings += _api_uses(source, uses, aliases)
    findings += _namespace_uses(source, namespaces, aliases)
    findings += _drop_in_calls(source, root, included, own_names)
    return sorted(findings, key=lambda f: f.location.start_byte)


# Headers of a library's legacy API, which its counterpart does not mirror: the legacy cuBLAS
# API (`cublasInit`, `cublasAlloc`, `cublasSgemm` without a handle); hipBLAS follows only the
# v2 API of `cublas_v2.h`, so the alias block would name functions of other signatures.
_LEGACY_HEADERS = {"cublas.h": ("cuBLAS", "cublas_v2.h")}


def _legacy_api(lib: CudaLibrary, sites: list) -> tuple[str, str] | None:
    """(message, advice) where the file includes `lib`'s legacy API header and not its
    current one, else None."""
    written = {path.rsplit("/", 1)[-1] for _, _, _, path in sites}
    for header, (name, current) in _LEGACY_HEADERS.items():
        if lib.name == name and header in written and current not in written:
            return (f"`{header}` is {name}'s legacy API, which {lib.counterpart} does not mirror "
                    f"({lib.counterpart} follows `{current}`); this file cannot build on AMD as written.",
                    f"Rewrite the file on {name}'s `{current}` API (a handle per call), which "
                    f"{lib.counterpart} mirrors name by name (`<{lib.hip_header}>`)")
    return None


def _library_finding(source: SourceFile, lib: CudaLibrary, sites: list, fix: Fix,
                     use_lines: dict[int, list], namespace_lines, message: str | None = None,
                     fold_all: bool = False) -> tuple[Finding, dict[int, list]]:
    """The one finding of a library the file includes and that one change ports (an alias
    block, or a rewrite onto the current API): at its first include, with its other includes
    and every line naming its API as related places. Unless `fold_all`, the lines naming an
    API the counterpart lacks are returned, each its own finding (`_api_uses`)."""
    _, first, first_path_node, first_path = sites[0]
    related = [Related(source.location(node.start_byte, node.end_byte), f"`{written}` is included here too")
               for _, _, node, written in sites[1:]]
    kept: dict[int, list] = {}
    for line, nodes in sorted(use_lines.items()):
        nodes = sorted(nodes, key=lambda n: n.start_byte)
        if not fold_all and any(rocm_name(source.node_text(n), lib) is None for n in nodes):
            kept[line] = nodes
            continue
        names = ", ".join(f"`{n}`" for n in dict.fromkeys(map(source.node_text, nodes)))
        related.append(Related(source.location(nodes[0].start_byte, nodes[-1].end_byte), f"{names} used here"))
    for nodes in namespace_lines or ():
        related.append(Related(source.location(nodes[0].start_byte, nodes[-1].end_byte),
                               f"`{_namespace_of(nodes[0], source)}::` used here"))
    related[len(sites) - 1:] = sorted(related[len(sites) - 1:], key=lambda r: r.location.start_byte)
    uses = len(related) - len(sites) + 1
    message = (message or _include_message(lib, first_path)) + (
        f" The file names its API on {uses} line{'s' if uses != 1 else ''} (related locations)." if uses else "")
    return at_node(source, first_path_node, message, fix, severity=lib.severity, related=tuple(related)), kept


def _is_plain_alias(name_node) -> bool:
    """`#define cublasSgemm hipblasSgemm`: a macro whose body is one other name."""
    definition = name_node.parent
    if definition is None or definition.type != "preproc_def":
        return False
    value = definition.child_by_field_name("value")
    words = value.text.decode("utf-8", "replace").split() if value is not None else []
    return len(words) == 1 and words[0].replace("_", "a").isalnum() and not words[0][0].isdigit()


def _library_names_in(source: SourceFile) -> set[str]:
    """Every library API name the file spells (functions, types, constants)."""
    needles = {p for lib in CUDA_LIBRARIES for p in lib.api_prefixes + lib.constant_prefixes}
    return {name for needle in needles for node in token_nodes(source, needle.encode())
            if library_for_name(name := source.node_text(node)) is not None}


def _api_names(source: SourceFile, own_names: set[str]) -> dict[str, dict[int, list]]:
    """library -> line -> the API name nodes there, of libraries whose port renames or
    rewrites them (not RCCL's drop-in `nccl*`, not rocThrust's same headers)."""
    found: dict[str, dict[int, list]] = {}
    needles = {p for lib in CUDA_LIBRARIES if _uses_change(lib) for p in lib.api_prefixes + lib.constant_prefixes}
    for needle in sorted(needles):
        for node in token_nodes(source, needle.encode()):
            name = source.node_text(node)
            lib = library_for_name(name)
            if lib is None or not _uses_change(lib) or name in own_names or _is_member(node) \
                    or _in_preprocessor_test(source, node.start_byte) or not _is_live(source, node.start_byte):
                continue  # (the file's uses are one finding: one in a CUDA-only arm is none of it)
            if source.rocm_defines_function(name, node.start_byte) or source.hipified_name(name) is not None:
                # The ROCm build renames it (`#define cublasSgemm hipblasSgemm`, hipify) or a
                # shim header defines it over the ROCm library (`typedef hipblasFillMode_t cublasFillMode_t;`).
                continue
            found.setdefault(lib.name, {}).setdefault(source.line_of(node.start_byte), []).append(node)
    return found


def _in_preprocessor_test(source: SourceFile, offset: int) -> bool:
    """Is `offset` inside an `#if`/`#elif`/`#ifdef` condition? A library's version macro
    tested there (`#if CUSPARSE_VERSION >= 11000`) is no dependency on the library: it reads
    as 0 on ROCm, and the arm it picks is what the guard rules (P003) judge."""
    return source.rocm_path is not None and source.rocm_path.condition_at(offset) is not None


def _api_uses(source: SourceFile, uses: dict[str, dict[int, list]], aliases: dict[str, Fix]) -> list[Finding]:
    """One finding per library of `uses` (`_api_names`): the file's dependency on the library
    is one root cause, however many lines name its API. At the first such line, the others
    as related places."""
    findings = []
    for lib_name, lines in uses.items():
        lib = next(lib for lib in CUDA_LIBRARIES if lib.name == lib_name)
        findings.append(_api_use(source, lib, [lines[line] for line in sorted(lines)], aliases.get(lib_name)))
    return findings


def _api_use(source: SourceFile, lib: CudaLibrary, lines: list[list], alias: Fix | None) -> Finding:
    lines = [sorted({n.start_byte: n for n in nodes}.values(), key=lambda n: n.start_byte) for nodes in lines]
    first = lines[0]
    names = [source.node_text(n) for n in first]
    shown = ", ".join(f"`{n}`" for n in dict.fromkeys(names))
    message = (f"{shown} {'names' if len(set(names)) == 1 else 'name'} the {lib.name} API; "
               + (f"ROCm has no {lib.name}, its port is {lib.counterpart}." if lib.counterpart
                  else f"ROCm has no {lib.name}."))
    related = []
    for nodes in lines[1:]:
        used = ", ".join(f"`{n}`" for n in dict.fromkeys(map(source.node_text, nodes)))
        related.append(Related(source.location(nodes[0].start_byte, nodes[-1].end_byte), f"{used} used here"))
    if related:
        message += f" The file names its API on {len(related)} more line{'s' if len(related) != 1 else ''} (related locations)."
    every_name = [source.node_text(n) for nodes in lines for n in nodes]
    return finding(source, first[0].start_byte, first[-1].end_byte, message,
                   _rename_fix(source, lib, every_name, alias), severity=lib.severity, related=tuple(related))


# Libraries used through a namespace, and their ROCm namespace (hipCUB mirrors CUB's API;
# rocThrust has no CUDA backend, only its HIP one: `thrust::cuda::par` is `thrust::hip::par`).
_NAMESPACES = {"cub": ("CUB", "hipcub"), "thrust::cuda": ("Thrust's CUDA backend", "thrust::hip"),
               "thrust::system::cuda": ("Thrust's CUDA backend", "thrust::system::hip")}
# Where a namespace name is used: `cub::BlockReduce`, `using namespace cub;`, `namespace a = cub;`.
_NAMESPACE_USES = frozenset({"qualified_identifier", "using_declaration", "namespace_alias_definition"})


def _namespace_names(source: SourceFile, own_names: set[str]) -> dict[str, list[list]]:
    """library -> the lines' `cub::X` uses (name nodes, one list per line); not where the file
    maps the name itself (`#define cub hipcub`, `namespace cub = hipcub;`)."""
    found: dict[str, list[list]] = {}
    for namespace, (lib_name, _) in _NAMESPACES.items():
        if namespace.encode() + b"::" not in source.data and b"namespace " + namespace.encode() not in source.data:
            continue
        *scope, last = namespace.split("::")
        if (scope[0] if scope else last) in own_names:
            continue  # `#define cub hipcub`, `#define thrust ...`: a project alias
        if source.hipified and namespace in hipify.NAMESPACES:
            continue  # hipify writes `hipcub::`, `thrust::hip::`
        by_line = found.get(lib_name, {})
        if not scope and _defines_namespace(source, last):
            continue  # the file's own `namespace cub { ... }`
        for node in token_nodes(source, last.encode()):
            parent = node.parent
            if source.node_text(node) != last or parent is None or parent.type not in _NAMESPACE_USES:
                continue
            if (scope or parent.type == "qualified_identifier") and not _qualified_by(node, scope, source):
                continue  # another `cuda::` (libcu++'s, a project's own), `geo::cub::`
            if source.shim(namespace, node.start_byte) is not None \
                    or source.rocm_defines_function(namespace, node.start_byte):
                continue  # a header the ROCm build includes maps it (`#define cub hipcub`, `namespace cub = hipcub;`)
            if parent.type == "namespace_alias_definition" and parent.child_by_field_name("name") == node:
                by_line = {}  # `namespace cub = hipcub;`: every use is the project's alias
                break
            by_line.setdefault(source.line_of(node.start_byte), []).append(node)
        if by_line:
            found[lib_name] = by_line
    return {lib_name: [sorted(nodes, key=lambda n: n.start_byte) for _, nodes in sorted(by_line.items())]
            for lib_name, by_line in found.items()}


def _defines_namespace(source: SourceFile, name: str) -> bool:
    """Does the file open a namespace `name` of its own (`namespace cub { ... }`)?"""
    return any(source.node_text(n) == name and n.parent is not None and n.parent.type == "namespace_definition"
               for n in token_nodes(source, name.encode()))


def _qualified_by(node, scope: list[str], source: SourceFile) -> bool:
    """Is the namespace name `node` written after exactly `scope` (`thrust::system::` before
    `cuda`, or `::thrust::system::`)?"""
    return _written_namespace(node, source) == "::".join([*scope, source.node_text(node)])


def _namespace_of(node, source: SourceFile) -> str:
    """Which of `_NAMESPACES` the use `node` names (`thrust::system::cuda` for the `cuda` of
    `thrust::system::cuda::par`, `cub` in `namespace my_cub = cub;`): the longest one that
    ends what is written up to it."""
    written = _written_namespace(node, source)
    last = source.node_text(node)
    return max((n for n in _NAMESPACES if n.rsplit("::", 1)[-1] == last and written.endswith(n)),
               key=len, default=next(n for n in _NAMESPACES if n.rsplit("::", 1)[-1] == last))


def _written_namespace(node, source: SourceFile) -> str:
    """The namespace as written up to the name `node`, spaces and a leading `::` dropped:
    `thrust::system::cuda` for the `cuda` of `::thrust::system::cuda::par`."""
    qualified = node.parent
    while qualified.parent is not None and qualified.parent.type == "qualified_identifier" \
            and qualified.parent.child_by_field_name("name") == qualified:
        qualified = qualified.parent
    written = "".join(source.node_text(qualified)[:node.end_byte - qualified.start_byte].split())
    return written.removeprefix("::")


def _namespace_uses(source: SourceFile, namespaces: dict[str, list[list]], aliases: dict[str, Fix]) -> list[Finding]:
    """`cub::X` uses (`_namespace_names`), one finding per line, naming the namespace it writes."""
    findings = []
    for lib_name, lines in namespaces.items():
        lib = next(lib for lib in CUDA_LIBRARIES if lib.name == lib_name)
        for nodes in lines:
            namespace = _namespace_of(nodes[0], source)
            hip = _NAMESPACES[namespace][1]
            if "::" in namespace:  # a library's backend namespace (`thrust::cuda::`): the port names its HIP twin
                fix = Fix.advice(f"Use `{hip}::par` for `{namespace}::par` under `{_ROCM_GUARD}`, or "
                                 "`thrust::device`, the device backend of either build")
                message = (f"`{namespace}::` is {lib.name}; {lib.counterpart} has none (its device backend is "
                           f"`{hip}::`), so this does not compile on ROCm.")
            else:
                fix = aliases.get(lib_name) or Fix.advice(
                    f"Alias `{namespace}` to `{hip}` where {lib.name}'s header is included, under `{_ROCM_GUARD}`")
                message = (f"`{namespace}::` names the {lib.name} API; ROCm has no {lib.name}, "
                           f"its port is {lib.counterpart}.")
            findings.append(finding(source, nodes[0].start_byte, nodes[-1].end_byte, message, fix,
                                    severity=lib.severity))
    return findings


def _uses_change(lib: CudaLibrary) -> bool:
    return lib.drop_in_header is None and not lib.same_headers


def _is_member(node) -> bool:
    """`obj.cublasHandle` or `ptr->cublas_handle`: a field of the project's own struct; or a
    namespace (`namespace engine::nvtx {`, `nvtx::Range`): API names are functions, types
    and constants (CUB's namespace is `_namespace_names`')."""
    return node.type in ("field_identifier", "namespace_identifier")


def _rename_fix(source: SourceFile, lib: CudaLibrary, names: list[str], alias: Fix | None) -> Fix:
    """The fix of a line of API uses: the file's alias block (`_alias_fix`) where every name
    there has a counterpart; else advice (no rename in place: the CUDA build keeps the names)."""
    renamed = {name: rocm_name(name, lib) for name in names}
    if any(hip is None for hip in renamed.values()):
        return Fix.advice(lib.port)
    if alias is not None:
        return alias
    pairs = ", ".join(f"`{name}` to `{hip}`" for name, hip in renamed.items())
    return Fix.advice(f"Alias {pairs} under `{_ROCM_GUARD}` where {lib.name}'s header is included "
                      f"({lib.counterpart} mirrors {lib.name})")


def _alias_fix(lib: CudaLibrary, includes: list, names: list[str], namespaces, source: SourceFile) -> Fix:
    """Keep both builds: the library's includes go in the CUDA arm of the ROCm guard; the ROCm
    arm includes the counterpart's header and defines the file's API names as its names
    (`#define cublasSgemm hipblasSgemm`), an alias header in place. The ROCm build must
    define one of the guard's macros and link the counterpart: unsafe."""
    hip = _renamed_header(lib, includes[0], source)
    aliases = {name: rocm_name(name, lib) for name in dict.fromkeys(names)}
    lines = [f"#define {name} {new}" for name, new in sorted(aliases.items()) if new is not None and new != name]
    for namespace, (lib_name, hip_namespace) in _NAMESPACES.items():
        if lib_name == lib.name and namespaces and "::" not in namespace:  # (an alias names one namespace)
            lines.append(f"namespace {namespace} = {hip_namespace};")
    opening = "\n".join([_ROCM_GUARD, f"#include <{hip}>", *lines, "#else", ""])
    edits = _guard_runs(includes, opening, source)
    if not edits:
        return Fix.advice(lib.port)
    what = f" and alias {len(lines)} name{'s' if len(lines) != 1 else ''}" if lines else ""
    return Fix.unsafe(f"Include `<{hip}>` under `{_ROCM_GUARD}`{what}, keeping the {lib.name} include "
                      f"for CUDA ({lib.counterpart} mirrors {lib.name})", *edits)


def _guard_runs(includes: list, opening: str, source: SourceFile) -> list[Edit]:
    """Edits that put each run of adjacent `includes` in the CUDA arm of `opening` (which ends
    in `#else`); none for a run wrapped already, though the ROCm-path model does not see it
    (an `#else` or `#endif` without its `#if` elsewhere in the file): another edit would nest
    one more wrapper on every `--fix` pass."""
    runs: list[list[int]] = []
    for include in includes:
        if source.data[:include.start_byte].endswith(opening.encode()):
            continue
        if runs and runs[-1][1] == include.start_byte:
            runs[-1][1] = include.end_byte
        else:
            runs.append([include.start_byte, include.end_byte])
    edits = []
    for start, end in runs:
        newline = "" if source.data[end - 1:end] == b"\n" else "\n"
        edits += [Edit.insert(start, opening), Edit.insert(end, f"{newline}#endif\n")]
    return edits


def _drop_in_calls(source: SourceFile, root, included: set[str], own_names: set[str]) -> list[Finding]:
    """A drop-in library's call in a file that does not include its header (it comes through
    a wrapper header): the include to change is elsewhere, so the first call says so."""
    findings, seen = [], set()
    for call in queries.nodes(CUDA, _CALLS, root, "call"):
        name = callee_name(call, source)
        lib = library_for_api(name) if name else None
        if lib is None or _uses_change(lib) or lib.name in included or name in own_names or lib.name in seen:
            continue
        if source.hipified and any(source.hipified_header(h) for h in lib.headers):
            continue  # hipify points the file's (wrapper's) include at the ROCm library
        if source.shim(name, call.start_byte) is not None:
            continue  # the ROCm build renames it (`#define cublasSgemm hipblasSgemm`)
        if not _is_live(source, call.start_byte):
            continue
        if lib.drop_in_header and source.build is not None and any(
                source.build.includes(header, call.start_byte)
                for header in (lib.drop_in_header, lib.drop_in_header.rsplit("/", 1)[-1])):
            continue  # a project header includes the ROCm library's header in the ROCm build: ported
        seen.add(lib.name)
        findings.append(at_node(
            source, call.child_by_field_name("function"),
            f"`{name}` is a {lib.name} call; ROCm has no {lib.name}, its port is {lib.counterpart}.",
            Fix.advice(lib.port), severity=lib.severity))
    return findings


def _is_live(source: SourceFile, offset: int) -> bool:
    # To pick which occurrences make one finding; the engine itself drops dead findings.
    return source.rocm_path is None or source.rocm_path.is_live(offset)


def _include_message(lib: CudaLibrary, written: str) -> str:
    if lib.counterpart is None:
        return f"{lib.name} header `{written}` has no ROCm counterpart; this code cannot build on AMD."
    if lib.same_headers and lib.preview:
        return f"{lib.name} header `{written}` builds on ROCm only against {lib.counterpart}, an early-access preview."
    if lib.same_headers:
        return f"{lib.name} header `{written}` builds on ROCm only against {lib.counterpart}."
    return f"{lib.name} header `{written}` does not exist on ROCm; its port is {lib.counterpart}."


# Headers whose counterpart declares the same API under the renamed names (see `rocm_name`).
_HEADER_RENAMES = {
    "cublas_v2.h": "hipblas/hipblas.h", "cublasLt.h": "hipblaslt/hipblaslt.h",
    "cufft.h": "hipfft/hipfft.h", "cusparse.h": "hipsparse/hipsparse.h", "curand.h": "hiprand/hiprand.h",
    "curand_kernel.h": "hiprand/hiprand_kernel.h", "nvToolsExt.h": "roctracer/roctx.h",
}


def _renamed_header(lib: CudaLibrary, include, source: SourceFile) -> str | None:
    """The hip* header that declares `include`'s API under renamed names, if there is one."""
    written = include_path(include.child_by_field_name("path"), source)
    if lib.name == "CUB":
        return "hipcub/hipcub.hpp"  # one header declares all of hipCUB
    return _HEADER_RENAMES.get(written.rsplit("/", 1)[-1]) if written.startswith(("cu", "nvtx3/", "nv")) else None


def _include_fix(lib: CudaLibrary, includes: list, source: SourceFile) -> Fix:
    """A drop-in library's live includes (a run of adjacent ones as one) are wrapped in the
    ROCm guard, all in one fix (a renamed library's get `_alias_fix`)."""
    if lib.drop_in_header is None:
        return Fix.advice(lib.port)
    # Same API names under another header: include it on ROCm, keep the CUDA include.
    edits = _guard_runs(includes, f"{_ROCM_GUARD}\n#include <{lib.drop_in_header}>\n#else\n", source)
    if not edits:
        return Fix.advice(lib.port)
    return Fix.unsafe(
        f"Include `<{lib.drop_in_header}>` under `{_ROCM_GUARD}`: {lib.counterpart} keeps the "
        f"{lib.name} API names",
        *edits,
    )


# ---- cooperative groups: which objects are groups, which names are in their namespace ----------
_CG_NAMESPACE = "cooperative_groups"
_CG_TYPES = frozenset({"thread_block", "thread_block_tile", "grid_group", "coalesced_group", "thread_group",
                       "multi_grid_group"})
_CG_FACTORIES = frozenset({"this_thread_block", "this_grid", "tiled_partition", "coalesced_threads",
                           "this_multi_grid", "binary_partition"})
# The third form is a declaration of a template-typed variable that tree-sitter reads as two
# comparisons when the type is qualified (`cg::thread_block_tile<32> warp = ...;` becomes
# `(cg::thread_block_tile < 32) > (warp = ...)`).
_CG_VARIABLES = """
[(declaration type: (_) @type declarator: [(init_declarator declarator: (_) @name value: (_) @value) (identifier) @name])
 (parameter_declaration type: (_) @type declarator: (_) @name)
 (expression_statement (binary_expression
   left: (binary_expression left: [(qualified_identifier) (identifier)] @type operator: "<")
   operator: ">"
   right: [(assignment_expression left: (identifier) @name operator: "=" right: (_) @value) (identifier) @name]))]
"""
_NAMESPACE_ALIASES = "(namespace_alias_definition name: (namespace_identifier) @alias (_) @target)"
_USING_CG = re.compile(rb"\busing\s+namespace\s+(?:::\s*)?cooperative_groups\s*;")


class CooperativeGroupNames:
    """How this file names cooperative groups: `cooperative_groups::` and its aliases
    (`namespace cg = cooperative_groups;`), unqualified after `using namespace`. A
    project's own `group::tiled_partition` or `thread_block_tile` class is not one."""

    def __init__(self, source: SourceFile):
        self.source = source
        names = {_CG_NAMESPACE}
        for match in queries.matches(CUDA, _NAMESPACE_ALIASES, source.tree.root_node):
            if source.node_text(match["target"][0]).lstrip(":") == _CG_NAMESPACE:
                names.add(source.node_text(match["alias"][0]))
        self.namespaces = frozenset(names)
        self.unqualified = _USING_CG.search(source.data) is not None
        self._variables: dict | None = None

    def names(self, text: str, wanted: frozenset[str]) -> bool:
        """Does `text` (`cg::thread_block_tile<16> const`, `cooperative_groups::this_grid`)
        name one of `wanted` in cooperative groups?"""
        words = text.split("<", 1)[0].replace("const", " ").replace("::", " :: ").split()
        parts = [w for w in words if w != "::"]
        if not parts or parts[-1] not in wanted:
            return False
        scope = parts[:-1]
        if scope[-1:] == ["experimental"]:
            scope = scope[:-1]
        return scope == [] and self.unqualified or len(scope) == 1 and scope[0] in self.namespaces

    def is_factory_call(self, node) -> bool:
        while node is not None and node.type in ("parenthesized_expression", "initializer_list"):
            node = node.named_children[0] if node.named_children else None
        if node is None or node.type != "call_expression":
            return False
        return self.names(self.source.node_text(node.child_by_field_name("function")), _CG_FACTORIES)

    def _group_variables(self) -> dict:
        """Per function (its node id; None for file scope), the names it declares as groups:
        by type, or `auto` from a factory. Parameters count for their function."""
        if self._variables is None:
            found: dict = {}
            for match in queries.matches(CUDA, _CG_VARIABLES, self.source.tree.root_node):
                declarator = match["name"][0]
                while declarator.type in ("reference_declarator", "pointer_declarator"):
                    declarator = declarator.named_children[-1]
                if declarator.type != "identifier":
                    continue
                type_text = self.source.node_text(match["type"][0])
                value = match.get("value", [None])[0]
                if self.names(type_text, _CG_TYPES) or (type_text == "auto" and self.is_factory_call(value)):
                    function = enclosing_function(declarator)
                    found.setdefault(function.id if function is not None else None, set()).add(
                        self.source.node_text(declarator))
            self._variables = found
        return self._variables

    def is_group(self, node) -> bool:
        """Is the object `node` names a cooperative group?"""
        if node.type == "identifier":
            function = enclosing_function(node)
            variables = self._group_variables()
            name = self.source.node_text(node)
            return name in variables.get(function.id if function is not None else None, ()) or name in variables.get(None, ())
        return self.is_factory_call(node)

    def qualified_name(self, node):
        """The `cg::name` (`cg::name<N>`, `cooperative_groups::experimental::name`) that the
        name token `node` ends, when it is in cooperative groups; else None."""
        named = node.parent
        if named is not None and named.type in ("template_type", "template_function"):
            named = named.parent
        if named is None or named.type != "qualified_identifier" or named.child_by_field_name("scope") is None:
            return None
        while named.parent is not None and named.parent.type == "qualified_identifier":
            named = named.parent  # `cooperative_groups::experimental::name`: the outer name
        return named if self.names(self.source.node_text(named), frozenset({self.source.node_text(node)})) else None


# ---- L002 late-cooperative-groups-api --------------------------------------------------------
# Cooperative-groups names that HIP added years after CUDA: HIP 5.2's header lacks them, ROCm
# 6.3's has them. `meta_group_*` are distinctive; the others are read on group objects only.
_LATE_CG_MEMBERS = {
    "meta_group_rank": "`block.thread_rank() / tile.size()` for a tile of a 1-D block",
    "meta_group_size": "`(blockDim.x + tile.size() - 1) / tile.size()` for a tile of a 1-D block",
    "any": "`__any(pred)` when the tile is the whole wavefront, else a ballot of your own",
    "all": "`__all(pred)` when the tile is the whole wavefront, else a ballot of your own",
    "ballot": "`__ballot(pred)` shifted and masked to the tile's lanes",
    "match_any": "a loop of shuffles over the tile",
    "match_all": "a loop of shuffles over the tile",
    "group_dim": "`blockDim`",
}
_DISTINCTIVE = ("meta_group_rank", "meta_group_size")


@dataclass(frozen=True)
class _LateFunction:
    instead: str  # what computes the same on the ROCm releases that lack it
    failing: str  # the ROCm releases whose header lacks it
    first: str  # the first ROCm whose header has it


# `cg::reduce` and its operators (`cg::plus`, `cg::greater`, ...) came last: neither HIP 5.2's
# nor ROCm 6.3's header has them; clr added `amd_hip_cooperative_groups_reduce.h` during ROCm 7.
_LATE_CG_FUNCTIONS = {
    "binary_partition": _LateFunction("`tiled_partition` and a mask of your own", "ROCm 5.x", "ROCm 6"),
    "reduce": _LateFunction("a shuffle-down loop over the tile (`for (o = tile.size() / 2; o > 0; o /= 2) "
                            "v = op(v, tile.shfl_down(v, o));`, then `tile.shfl(v, 0)` for every lane)",
                            "ROCm 5.x, 6.x and early 7.x", "a ROCm 7 release with `cooperative_groups/reduce`"),
}


@needs(b"meta_group_", all_of(b"cooperative_groups",
                              any_of(b"any", b"all", b"ballot", b"match_", b"group_dim", b"binary_partition",
                                     b"reduce")))
def check_late_cooperative_groups_api(source: SourceFile) -> list[Finding]:
    findings = []
    groups = None
    for name, instead in _LATE_CG_MEMBERS.items():
        for node, member in _member_calls(source, name):
            if name not in _DISTINCTIVE:
                if b"cooperative_groups" not in source.data:
                    continue  # no group can be named here (see `CooperativeGroupNames`)
                groups = CooperativeGroupNames(source) if groups is None else groups
                if not groups.is_group(member.child_by_field_name("argument")):
                    continue
            findings.append(at_node(
                source, node,
                f"`{name}()` is missing from older HIP cooperative groups; ROCm 5.x builds fail to compile it.",
                Fix.advice(f"Require a ROCm whose `hip_cooperative_groups.h` has `{name}()` (ROCm 6), or compute "
                           f"it: {instead}")))
    if b"cooperative_groups" in source.data:
        groups = CooperativeGroupNames(source) if groups is None else groups
        for name, late in _LATE_CG_FUNCTIONS.items():
            if _shims_cg_function(source, name):
                continue
            for qualified in _qualified_uses(source, groups, name):
                findings.append(at_node(
                    source, qualified,
                    f"`{name}` is missing from older HIP cooperative groups; {late.failing} builds fail to compile it.",
                    Fix.advice(f"Require {late.first}, whose cooperative groups have `{name}`, or use "
                               f"{late.instead}")))
    return findings


def _shims_cg_function(source: SourceFile, name: str) -> bool:
    """Does this file define `name` inside `namespace cooperative_groups` (a project's own
    `cg::reduce` for the ROCm releases that lack it)?"""
    for node in token_nodes(source, name.encode()):
        declarator = node.parent
        if node.type != "identifier" or declarator is None or declarator.type != "function_declarator":
            continue
        for outer in ancestors_of(declarator):
            if outer.type == "namespace_definition" and outer.child_by_field_name("name") is not None and \
                    source.node_text(outer.child_by_field_name("name")) == _CG_NAMESPACE:
                return True
    return False


# ---- L003 missing-cooperative-groups-api -----------------------------------------------------
# Cooperative-groups names CUDA 11/12 have and HIP's header lacks (HIP 5.2, and ROCm 6.3's clr),
# with what computes the same on HIP.
_MISSING_CG_MEMBERS = {
    "num_threads": "`size()`",
    "dim_threads": "`group_dim()` (ROCm 6) or `blockDim`",
    "num_blocks": "`gridDim.x * gridDim.y * gridDim.z`",
    "block_rank": "`blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)`",
    "block_index": "`blockIdx`",
    "dim_blocks": "`gridDim`",
}
_MISSING_CG_FUNCTIONS = {
    "memcpy_async": "a plain copy loop over the group's threads, then `group.sync()`",
    "wait": "`group.sync()` after a plain copy",
    "wait_prior": "`group.sync()` after a plain copy",
    "labeled_partition": "`__match_any` and a mask of your own, or restructure",
    "invoke_one": "`if (group.thread_rank() == 0) { ... }`",
    "invoke_one_broadcast": "`if (group.thread_rank() == 0)` and a shuffle or shared memory",
    "block_tile_memory": "nothing: HIP's tiles need no scratch memory (drop it and the argument)",
    "reduce_update_async": "`cg::reduce` (newer ROCm) or a shuffle loop, then an atomic",
    "reduce_store_async": "`cg::reduce` (newer ROCm) or a shuffle loop, then a store",
    "inclusive_scan": "a shuffle-up loop over the tile",
    "exclusive_scan": "a shuffle-up loop over the tile",
}


@needs(all_of(b"cooperative_groups", any_of(*(name.encode() for name in (*_MISSING_CG_MEMBERS, *_MISSING_CG_FUNCTIONS)))))
def check_missing_cooperative_groups_api(source: SourceFile) -> list[Finding]:
    # A group or a cooperative-groups function is named through `cooperative_groups`: the
    # namespace, an alias of it or a `using namespace` of it is in the file.
    groups = CooperativeGroupNames(source)
    findings = []
    for name, instead in _MISSING_CG_MEMBERS.items():
        for node, member in _member_calls(source, name):
            if not groups.is_group(member.child_by_field_name("argument")):
                continue
            findings.append(at_node(
                source, node, f"HIP's cooperative groups have no `{name}()`; hip-clang rejects the call.",
                Fix.advice(f"Use {instead} on ROCm")))
    for name, instead in _MISSING_CG_FUNCTIONS.items():
        for qualified in _qualified_uses(source, groups, name):
            findings.append(at_node(
                source, qualified, f"HIP's cooperative groups have no `{name}`; hip-clang rejects it.",
                Fix.advice(f"Use {instead} on ROCm")))
    return findings


def _member_calls(source: SourceFile, name: str):
    """(name node, member expression) of each `object.name(...)` call."""
    for node in token_nodes(source, name.encode()):
        member = node.parent
        call = member.parent if member is not None else None
        if (source.node_text(node) == name and node.type == "field_identifier" and member.type == "field_expression"
                and call is not None and call.type == "call_expression"):
            yield node, member


def _qualified_uses(source: SourceFile, groups: "CooperativeGroupNames", name: str):
    """Each use of cooperative groups' function `name`, as its qualified name (`cg::name`)."""
    for node in token_nodes(source, name.encode()):
        qualified = groups.qualified_name(node)
        if source.node_text(node) == name and qualified is not None:
            yield qualified



# ---- L004: a CUDA library loaded by its file name at run time --------------------------------
# The shared library of each counterpart, as ROCm installs it (what a port loads instead).
_ROCM_SHARED_LIBRARIES = {
    "HIP": "libamdhip64.so", "hipRTC": "libhiprtc.so", "hipBLAS": "libhipblas.so",
    "hipBLASLt": "libhipblaslt.so", "hipFFT": "libhipfft.so", "hipSPARSE": "libhipsparse.so",
    "hipSOLVER": "libhipsolver.so", "hipRAND": "libhiprand.so", "MIOpen": "libMIOpen.so",
    "RCCL": "librccl.so", "roctx": "libroctx64.so", "AMD SMI": "libamd_smi.so",
}
# Other ROCm libraries a loader may name beside them.
_OTHER_ROCM_STEMS = frozenset({"rocblas", "rocfft", "rocrand", "rocsparse", "rocsolver", "rocm_smi64", "hiprtc-builtins"})
# A shared library's file name: `libcudart.so.12`, `libnvrtc.so.` (a version appended next),
# `libcuda.dylib`, Windows' `nvcuda.dll`, `cudart64_110.dll`, `nvrtc64_120_0.dll`.
_SHARED_LIBRARY = re.compile(
    r"(?:lib)?(?P<stem>[A-Za-z][A-Za-z0-9_+-]*?)(?:64(?:_\d+)+)?(?:\.so(?:\.\d+)*\.?|\.dll|(?:\.\d+)*\.dylib)")
# Windows names that are not `<link name>.dll`.
_DLL_STEMS = {"nvcuda": "cuda", "nvml": "nvidia-ml"}


def _shared_library_stem(text: str) -> str | None:
    m = _SHARED_LIBRARY.fullmatch(text)
    if m is None:
        return None
    stem = m.group("stem")
    return _DLL_STEMS.get(stem.lower(), stem).replace("-", "_")


_ROCM_STEMS = frozenset({_shared_library_stem(name).lower() for name in _ROCM_SHARED_LIBRARIES.values()}
                        | {stem.replace("-", "_") for stem in _OTHER_ROCM_STEMS})


# The whole content of a string literal, and the functions that look a symbol up by name.
_STRINGS = "(string_literal (string_content) @text) @string"
_SYMBOL_LOOKUPS = frozenset({"dlsym", "dlvsym", "GetProcAddress"})


@needs(any_of(b".so", b".dll", b".dylib"))
def check_cuda_library_loaded_by_name(source: SourceFile) -> list[Finding]:
    """L004: `dlopen("libcuda.so.1")`, a CUDA library named by its file name to load at run time."""
    loaded, rocm = [], False
    for kind, node in queries.captures(CUDA, _STRINGS, source.tree.root_node):
        if kind != "text" or node.parent.named_child_count != 1:
            continue  # (a literal with escapes is no file name)
        stem = _shared_library_stem(source.node_text(node))
        if stem is None:
            continue
        if stem.lower() in _ROCM_STEMS:
            rocm = True
        elif (lib := library_for_link_name(stem)) is not None and lib.counterpart in _ROCM_SHARED_LIBRARIES:
            loaded.append((node.parent, lib))
    if rocm or not loaded:
        return []  # a loader that names ROCm's libraries too chooses by platform already
    lookups = _cuda_symbol_lookups(source)
    by_library: dict[CudaLibrary, list] = {}  # one root cause per library: the file loads it
    for literal, lib in loaded:
        if _is_live(source, literal.start_byte):  # (the engine drops the others)
            by_library.setdefault(lib, []).append(literal)
    findings = []
    for lib, (literal, *others) in by_library.items():
        written = source.node_text(literal)
        counterpart = _ROCM_SHARED_LIBRARIES[lib.counterpart]
        findings.append(finding(
            source, literal.start_byte, literal.end_byte,
            f"`{written}` is {lib.name}'s shared library, loaded by name: ROCm has none, so loading it fails "
            f"there; ROCm's is `{counterpart}` ({lib.counterpart}).",
            Fix.advice(f"Load `{counterpart}` where the ROCm build compiles (`#ifdef __HIP_PLATFORM_AMD__`), "
                       "and look its functions up by their HIP names"),
            related=(*(Related(source.location(other.start_byte, other.end_byte),
                               f"`{source.node_text(other)}` names it too") for other in others),
                     *(related for looked_up, related in lookups if looked_up is lib))))
    return findings


def _cuda_symbol_lookups(source: SourceFile) -> list[tuple[CudaLibrary, Related]]:
    """`dlsym(handle, "cuCtxGetDevice")`: CUDA API names looked up in a loaded library, each
    with its library (the runtime's and driver's names belong to the CUDA runtime)."""
    found = []
    for kind, call in queries.captures(CUDA, _CALLS, source.tree.root_node):
        if kind != "call" or callee_name(call, source) not in _SYMBOL_LOOKUPS:
            continue
        arguments = call.child_by_field_name("arguments").named_children
        if len(arguments) < 2 or arguments[1].type != "string_literal" or arguments[1].named_child_count != 1:
            continue
        name = source.node_text(arguments[1].named_children[0])
        if not hipify.documented(name):
            continue
        hip = hipify.hip_name(name)
        lib = library_for_api(name) or _BY_LINK_NAME["nvrtc" if name.startswith("nvrtc") else "cudart"]
        found.append((lib, Related(source.location(arguments[1].start_byte, arguments[1].end_byte),
                                   f"`{name}` is looked up by name: HIP's is `{hip}`" if hip else
                                   f"`{name}` is looked up by name: HIP has no such function")))
    return found


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _OWN_NAMES,
    _OWN_VARIABLES,
    _OWN_DECLARED,
    _CALLS,
    INCLUDES,
    _CG_VARIABLES,
    _NAMESPACE_ALIASES,
    _STRINGS,
)
