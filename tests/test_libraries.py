"""L001 and the CUDA library table that C003 and the setup.py rules share."""

from __future__ import annotations

import pytest

from harness import assert_findings, scan

from portlint.checks.libraries import library_for_api, library_for_header, library_for_link_name


def test_link_names_map_to_hip_targets() -> None:
    assert library_for_link_name("cublas").hip_target == "roc::hipblas"
    assert library_for_link_name("cublasLt_static").hip_target == "roc::hipblaslt"
    assert library_for_link_name("CUDA").hip_target == "hip::host"  # ${CUDA_LIBRARIES}
    assert library_for_link_name("nvToolsExt").hip_target is None  # roctx has no target
    assert library_for_link_name("cublas_wrapper") is None


def test_api_names_need_the_library_spelling() -> None:
    assert library_for_api("cublasLtMatmul").name == "cuBLASLt"
    assert library_for_api("cublasGemmEx").name == "cuBLAS"
    assert library_for_api("curand_init").name == "cuRAND"
    assert library_for_api("cublas_wrapper_init") is None
    assert library_for_api("ncclish") is None
    assert library_for_api("cufft") is None  # the library's name alone names no API


def test_headers_match_by_name_or_library_directory() -> None:
    assert library_for_header("third_party/cuda/include/cublas_v2.h").name == "cuBLAS"
    assert library_for_header("thrust/system/cuda/vector.h").name == "Thrust's CUDA backend"
    assert library_for_header("cublas_utils.h") is None
    assert library_for_header("kernels/thrust_helpers.h") is None


def test_one_finding_per_aliased_library_with_its_uses_as_related_places(tmp_path) -> None:
    # The alias block at the include is the port's one edit: the live includes and the lines
    # naming the API are its related places, so each shows in code scanning with the finding.
    result = assert_findings("""\
        #ifndef USE_ROCM
        #include <cublas_v2.h>
        #endif
        #include <cublas_v2.h>
        #include <cublas_api.h>
        cublasHandle_t handle;
        cublasOperation_t op = CUBLAS_OP_T;
        """, "cuda", "L001", tmp_path=tmp_path, select=("L001",))
    finding = result.findings[0]
    assert finding.location.start_line == 4 and finding.fix.edits
    assert [(r.location.start_line, r.message) for r in finding.related] == [
        (5, "`cublas_api.h` is included here too"), (6, "`cublasHandle_t` used here"),
        (7, "`cublasOperation_t`, `CUBLAS_OP_T` used here")]
    assert "on 2 lines" in finding.message


def test_thrust_backend_uses_are_named_as_written(tmp_path) -> None:
    # The related places and the per-line findings name the namespace each line writes, not
    # CUB's or the shorter spelling.
    result = assert_findings("""\
        #include <thrust/system/cuda/execution_policy.h>
        int total(const int* p, int n) { return thrust::reduce(thrust::system::cuda::par, p, p + n); }
        int first(const int* p, int n) { return thrust::reduce(::thrust::cuda::par, p, p + n); }
        """, "cuda", "L001", tmp_path=tmp_path, select=("L001",))
    [header] = [f for f in result.findings if f.location.start_line == 1]
    assert [(r.location.start_line, r.message) for r in header.related] == [
        (2, "`thrust::system::cuda::` used here"), (3, "`thrust::cuda::` used here")]
    result = assert_findings("""\
        #include <thrust/reduce.h>
        int total(const int* p, int n) { return thrust::reduce(thrust::system::cuda::par, p, p + n); }
        int first(const int* p, int n) { return thrust::reduce(::thrust::cuda::par, p, p + n); }
        """, "cuda", "L001", "L001", "L001", tmp_path=tmp_path, select=("L001",))
    by_line = {f.location.start_line: f.message for f in result.findings}
    assert by_line[2].startswith("`thrust::system::cuda::` is") and "`thrust::system::hip::`" in by_line[2]
    assert by_line[3].startswith("`thrust::cuda::` is")
    # Namespaces named in declarations, not as qualifiers: each still says which it is.
    result = assert_findings("""\
        #include <cub/cub.cuh>
        #include <thrust/system/cuda/execution_policy.h>
        namespace my_cub = cub;
        using namespace thrust::cuda;
        using cub::BlockReduce;
        """, "cuda", "L001", "L001", tmp_path=tmp_path, select=("L001",))
    assert [[(r.location.start_line, r.message) for r in f.related] for f in result.findings] == [
        [(3, "`cub::` used here"), (5, "`cub::` used here")], [(4, "`thrust::cuda::` used here")]]


def test_api_line_the_alias_cannot_cover_keeps_its_own_finding(tmp_path) -> None:
    # `CUBLAS_GEMM_ALGO0` has no hipBLAS name: that line needs its own edit, and says so.
    result = assert_findings("""\
        #include <cublas_v2.h>
        cublasHandle_t handle;
        cublasGemmAlgo_t algo = CUBLAS_GEMM_ALGO0;
        """, "cuda", "L001", "L001", tmp_path=tmp_path, select=("L001",))
    include, unported = result.findings
    assert [r.location.start_line for r in include.related] == [2]
    assert unported.location.start_line == 3 and not unported.fix.edits


def test_library_without_rocm_port_is_an_error(tmp_path) -> None:
    result = assert_findings("""\
        #include <cute/tensor.hpp>
        #include <thrust/sort.h>
        """, "cuda", "L001", "L001", tmp_path=tmp_path, select=("L001",))
    assert [f.severity.value for f in result.findings] == ["error", "note"]


def test_one_fix_pass_guards_every_include_of_a_library(tmp_path):
    """An L001 finding per include, each carrying the one fix that wraps every live include:
    after a single `--fix` pass none is left, so `--fix` needs no second pass per include."""
    from harness import plan_fixes, scan
    from portlint.fix import write_plan

    path = tmp_path / "comm.cu"
    path.write_text("#include <nccl.h>\nint ranks(int n) { return n; }\n#include <nccl.h>\n#include <nccl.h>\n")
    result = scan([path], tmp_path, select=("L001",))
    assert [f.location.start_line for f in result.findings] == [1, 3, 4]
    plans, _ = plan_fixes(result.findings, result.files, True)
    for plan in plans:
        assert write_plan(plan, tmp_path) is None
    assert scan([path], tmp_path, select=("L001",)).findings == []
    assert path.read_text().count("#include <rccl/rccl.h>") == 2  # the adjacent two share one guard


def test_legacy_cublas_api_is_one_finding_without_an_alias(tmp_path) -> None:
    # hipBLAS mirrors `cublas_v2.h` only: an alias of the legacy `cublasSgemm` (no handle)
    # would name a function of another signature, so the fix is advice, and the file is one cause.
    result = assert_findings("""\
        #include <cublas.h>
        void init() { cublasInit(); }
        void scale(int n, float a, float* x) { cublasSscal(n, a, x, 1); }
        """, "cuda", "L001", tmp_path=tmp_path, select=("L001",))
    finding = result.findings[0]
    assert "legacy API" in finding.message and not finding.fix.edits
    assert [r.location.start_line for r in finding.related] == [2, 3]


def test_cub_namespace_mapped_by_an_included_shim_header_is_not_cub(tmp_path) -> None:
    # The ROCm build (its make fragment defines the switch) includes the project's compat
    # header, which maps the namespace; the CUDA arm includes CUB itself.
    (tmp_path / "makefiles").mkdir()
    (tmp_path / "Makefile").write_text("all: reduce.o\n")
    (tmp_path / "makefiles" / "hip.mk").write_text("CXXFLAGS += -DOPS_HIP_COMPILE\n")
    (tmp_path / "compat.h").write_text("#pragma once\n#include <hipcub/hipcub.hpp>\n#define cub hipcub\n")
    (tmp_path / "reduce.cu").write_text('#ifdef OPS_HIP_COMPILE\n#include "compat.h"\n#else\n#include <cub/cub.cuh>\n'
                                        "#endif\ntemplate <int N> using Reduce = cub::BlockReduce<float, N>;\n")
    assert scan([tmp_path], tmp_path, select=("L001",)).findings == []


_CUB_WRAPPER = """\
#pragma once
#ifdef __HIPCC__
#include <hipcub/hipcub.hpp>
namespace cub = hipcub;
#else
#include <cub/cub.cuh>
#endif
"""


@pytest.mark.parametrize("wrapper, expected", [
    # The project's wrapper makes `cub` the hipCUB namespace where hip-clang compiles it.
    (_CUB_WRAPPER, []),
    # An alias of something else, or one only the CUDA build sees, ports nothing.
    (_CUB_WRAPPER.replace("namespace cub = hipcub;", "namespace cub = mycub;"), ["L001"]),
    (_CUB_WRAPPER.replace("#ifdef __HIPCC__", "#ifndef __HIPCC__"), ["L001"]),
    # Written over two lines, it is the same alias; in a comment, or in another namespace
    # (`mylib::cub`), it is none.
    (_CUB_WRAPPER.replace("namespace cub = hipcub;", "namespace cub =\n    hipcub;"), []),
    (_CUB_WRAPPER.replace("namespace cub = hipcub;", "// later: namespace cub = hipcub;"), ["L001"]),
    (_CUB_WRAPPER.replace("namespace cub = hipcub;", "namespace mylib { namespace cub = hipcub; }"), ["L001"]),
    # A project's own namespace `cub` is not CUB's.
    ("#pragma once\nnamespace cub { template <class T> struct DoubleBuffer { DoubleBuffer(T*, T*) {} }; }\n", []),
])
def test_cub_namespace_aliased_by_a_header_found_below_an_include_folder(tmp_path, wrapper, expected) -> None:
    # (`#include "lib/gpu/cub.hpp"` from `include/lib/sort/`: the header is found by its path's end)
    (tmp_path / "include" / "lib" / "gpu").mkdir(parents=True)
    (tmp_path / "include" / "lib" / "sort").mkdir(parents=True)
    (tmp_path / "include" / "lib" / "gpu" / "cub.hpp").write_text(wrapper)
    (tmp_path / "include" / "lib" / "sort" / "sort.cu").write_text(
        '#include "lib/gpu/cub.hpp"\nvoid sort_keys(int* a, int* b) { cub::DoubleBuffer<int> keys(a, b); }\n')
    result = scan([tmp_path], tmp_path, select=("L001",))
    assert sorted({f.code for f in result.findings if f.path.endswith("sort.cu")}) == expected


_TILE_KERNEL = """\
{include}
__global__ void tile_sum(const float* in, float* out) {{
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) *out = v;
}}
"""


@pytest.mark.parametrize("include, expected", [
    # Written on CUTLASS, which ROCm has no port of: the file cannot compile for ROCm as it
    # stands, and that include is its one finding (the port replaces or leaves out the rest).
    ("#include <cutlass/cutlass.h>", ["L001"]),
    # The port keeps CUTLASS to the CUDA build: the file compiles for ROCm, its mask is a hazard.
    ("#ifndef USE_ROCM\n#include <cutlass/cutlass.h>\n#endif", ["W002"]),
])
def test_a_file_written_on_a_library_rocm_lacks_reports_only_that(tmp_path, include: str, expected) -> None:
    (tmp_path / "tile.cu").write_text(_TILE_KERNEL.format(include=include))
    result = scan([tmp_path / "tile.cu"], tmp_path, select=("L001", "W002"))
    assert sorted({f.code for f in result.findings}) == expected


def test_the_other_hazards_of_a_file_written_on_cutlass_are_its_includes_related_places(tmp_path) -> None:
    (tmp_path / "tile.cu").write_text(_TILE_KERNEL.format(include="#include <cutlass/cutlass.h>"))
    (include,) = scan([tmp_path / "tile.cu"], tmp_path, select=("L001", "W002")).findings
    mask_line = next(i for i, line in enumerate(_TILE_KERNEL.splitlines(), start=1) if "0xffffffff" in line)
    assert [(r.location.start_line, r.message.split(":")[0]) for r in include.related] == [(mask_line, "W002")]
    # With L001 not selected the mask stands alone.
    assert [f.code for f in scan([tmp_path / "tile.cu"], tmp_path, select=("W002",)).findings] == ["W002"]


def test_a_file_that_reaches_cutlass_through_a_project_header_folds_into_that_header(tmp_path) -> None:
    # `attention.cu` includes no CUTLASS header itself, but `runner.h` does (through
    # `runner_impl.h`): it cannot compile for ROCm either, and its mask goes with that
    # include's finding. A kernel that includes the header only off ROCm is left as it is.
    (tmp_path / "runner_impl.h").write_text("#pragma once\n#include <cutlass/gemm/device/gemm.h>\n")
    (tmp_path / "runner.h").write_text('#pragma once\n#include "runner_impl.h"\n')
    kernel = _TILE_KERNEL.format(include='#include "runner.h"')
    (tmp_path / "attention.cu").write_text(kernel)
    (tmp_path / "guarded.cu").write_text(_TILE_KERNEL.format(include='#ifndef USE_ROCM\n#include "runner.h"\n#endif'))
    found = scan([tmp_path], tmp_path, select=("L001", "W002")).findings
    assert sorted((f.path.rsplit("/", 1)[-1], f.code) for f in found) == [
        ("guarded.cu", "W002"), ("runner_impl.h", "L001")]
    (include,) = [f for f in found if f.code == "L001"]
    mask_line = next(i for i, line in enumerate(kernel.splitlines(), start=1) if "0xffffffff" in line)
    assert [(r.location.path.rsplit("/", 1)[-1], r.location.start_line, r.message.split(":")[0])
            for r in include.related] == [("attention.cu", mask_line, "W002")]


def test_a_suppressed_hazard_of_a_cutlass_file_is_not_brought_back(tmp_path) -> None:
    source = _TILE_KERNEL.format(include="#include <cutlass/cutlass.h>").replace(
        "0xffffffff, v, o);", "0xffffffff, v, o);  // portlint: ignore[W002]")
    (tmp_path / "tile.cu").write_text(source)
    for select in (("L001", "W002"), ("W002",)):
        result = scan([tmp_path / "tile.cu"], tmp_path, select=select)
        assert all(not r.message.startswith("W002") for f in result.findings for r in f.related)
        assert [f.code for f in result.findings if f.code == "W002"] == [] and result.suppressed == 1


def test_uses_without_the_include_are_one_finding_per_library_at_the_first_live_line(tmp_path) -> None:
    # The header comes through a project header: the file's uses of cuRAND are one root cause.
    # A use in a CUDA-only arm is no part of it, not even the first one.
    (tmp_path / "rng.cu").write_text("""\
#include "rng_utils.h"
#ifndef __HIP_PLATFORM_AMD__
void seed_host(curandGenerator_t* g) { curandCreateGenerator(g, CURAND_RNG_PSEUDO_DEFAULT); }
#endif
__global__ void fill(float* out, unsigned long long seed) {
  curandStatePhilox4_32_10_t state;
  curand_init(seed, threadIdx.x, 0, &state);
  out[threadIdx.x] = curand_uniform(&state);
}
""")
    found = scan([tmp_path], tmp_path, select=("L001",)).findings
    assert [f.location.start_line for f in found] == [6]
    assert [r.location.start_line for r in found[0].related] == [7, 8]
    assert "on 2 more lines" in found[0].message


def _library_findings_by_file(root, files: dict[str, str]) -> list:
    """L001's findings of a project made of `files` (path -> text), by file."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return sorted(scan([root], root, select=("L001",)).findings, key=lambda f: f.path)


def _places(found) -> list[tuple[str, int]]:
    """(file name, line) of each finding, in the order given."""
    return [(f.path.rsplit("/", 1)[-1], f.location.start_line) for f in found]


def _related_places(finding) -> set[tuple[str, int]]:
    """(file name, line) of each related location of a finding."""
    return {(r.location.path.rsplit("/", 1)[-1], r.location.start_line) for r in finding.related}


@pytest.mark.parametrize("kernel", ["kernel.cu", "zkernel.cu"])
def test_headers_written_on_cutlass_fold_into_the_file_that_includes_them(tmp_path, kernel: str) -> None:
    # A kernel written on CUTLASS and its own CUTLASS-based headers are one root cause (the
    # port replaces the kernel as a whole): one error, at the kernel's source, the headers'
    # includes as related places, whether the kernel's path sorts before or after theirs
    # (the headers include one another: none is lost in the cycle). A header nothing written
    # on CUTLASS includes stands alone.
    files = {
        f"attn/{kernel}": '#include <cutlass/gemm/gemm.h>\n#include "tile/tile.h"\n__global__ void k() {}\n',
        "attn/tile/tile.h": '#pragma once\n#include <cutlass/array.h>\n#include "iter.h"\n',
        "attn/tile/iter.h": '#pragma once\n#include <cutlass/layout/matrix.h>\n#include "tile.h"\n',
        "attn/epilogue.h": '#pragma once\n#include <cutlass/epilogue/thread/linear_combination.h>\n',
    }
    found = _library_findings_by_file(tmp_path, files)
    assert _places(found) == [("epilogue.h", 2), (kernel, 1)]
    related = _related_places(found[1])
    assert {("tile.h", 2), ("iter.h", 2)} <= related


def test_a_cutlass_header_reached_through_a_plain_project_header_folds_too(tmp_path) -> None:
    # `kernel.h` reaches `iter.h` only through `make_iter.h`, which includes no CUTLASS header
    # itself: the chain is still the kernel's code, one root cause. `other.h`, which nothing
    # written on CUTLASS reaches, stands alone; so does a file that includes the kernel header
    # without being written on CUTLASS (`main.cu`: the kernel header is its root, not it).
    files = {
        "attn/main.cu": '#include "kernel.h"\n__global__ void k() {}\n',
        "attn/kernel.h": '#pragma once\n#include <cutlass/cutlass.h>\n#include "util/make_iter.h"\n',
        "attn/util/make_iter.h": '#pragma once\n#include "iter.h"\ntemplate <class T> struct Make {};\n',
        "attn/util/iter.h": '#pragma once\n#include <cutlass/array.h>\n',
        "attn/util/other.h": '#pragma once\n#include <cutlass/numeric_types.h>\n',
    }
    found = _library_findings_by_file(tmp_path, files)
    assert _places(found) == [("kernel.h", 2), ("other.h", 2)]
    assert ("iter.h", 2) in _related_places(found[0])


def test_cutlass_kernels_that_share_a_cutlass_header_are_one_root_cause(tmp_path) -> None:
    # The forward and the backward kernel of one attention op each include CUTLASS and share a
    # CUTLASS-based helper header: one body of code written on CUTLASS, one error (at the
    # first of them) with the other's include related. A CUTLASS header that shares nothing
    # with them (`unrelated.h`) stays a root cause of its own.
    files = {
        "attn/backward.h": '#pragma once\n#include <cutlass/cutlass.h>\n#include "common/tiles.h"\n',
        "attn/forward.h": '#pragma once\n#include <cutlass/bfloat16.h>\n#include "common/tiles.h"\n',
        "attn/common/tiles.h": '#pragma once\n#include <cutlass/array.h>\n',
        "attn/unrelated.h": '#pragma once\n#include <cutlass/numeric_types.h>\n',
    }
    found = _library_findings_by_file(tmp_path, files)
    assert _places(found) == [("backward.h", 2), ("unrelated.h", 2)]
    related = _related_places(found[0])
    assert {("tiles.h", 2), ("forward.h", 2)} <= related


def test_cutlass_headers_that_only_include_one_another_are_reported(tmp_path) -> None:
    # Two headers written on CUTLASS include one another and nothing else includes them: they
    # stand for themselves (a header nobody includes is compiled where a build includes it),
    # one body of code: one error, the other's include related.
    files = {
        "attn/a.h": '#pragma once\n#include <cutlass/array.h>\n#include "b.h"\n',
        "attn/b.h": '#pragma once\n#include <cutlass/layout/matrix.h>\n#include "a.h"\n',
    }
    found = _library_findings_by_file(tmp_path, files)
    assert _places(found) == [("a.h", 2)]
    assert ("b.h", 2) in _related_places(found[0])


def test_a_project_namespace_named_like_a_library_is_not_its_api(tmp_path) -> None:
    (tmp_path / "ranges.h").write_text(
        "#pragma once\n#include <nvtx3/nvToolsExt.h>\n"
        "namespace engine::nvtx {\nstruct Range {\n  explicit Range(const char* n) { nvtxRangePushA(n); }\n"
        "  ~Range() { nvtxRangePop(); }\n};\n}  // namespace engine::nvtx\n")
    (tmp_path / "use.cpp").write_text('#include "ranges.h"\nvoid step() { engine::nvtx::Range r("step"); }\n')
    found = scan([tmp_path], tmp_path, select=("L001",)).findings
    assert _places(found) == [("ranges.h", 2)]


def test_a_backend_tag_named_for_a_library_is_not_its_api(tmp_path) -> None:
    # A project's FFT backends are tag types named for each library; only a real cuFFT name
    # (`cufftHandle`) is the library's API.
    (tmp_path / "backends.h").write_text(
        "#pragma once\nnamespace fftlib::backend {\nstruct cufft {};\nstruct rocfft {};\n}\n"
        "template <typename B> struct Plan {};\n")
    (tmp_path / "use.cpp").write_text(
        '#include "backends.h"\nPlan<fftlib::backend::cufft> make_plan() { return {}; }\n')
    assert scan([tmp_path], tmp_path, select=("L001",)).findings == []
    (tmp_path / "use.cpp").write_text('#include "backends.h"\nvoid plan(cufftHandle* h);\n')
    assert _places(scan([tmp_path], tmp_path, select=("L001",)).findings) == [("use.cpp", 2)]


def test_a_build_file_written_on_a_library_with_no_port_beside_sources_that_are(tmp_path) -> None:
    # The Makefile's include path is an error of its own (no cuDNN frontend on ROCm); it has
    # no `#include` to fold by, and the scan still folds the sources' headers.
    files = {
        "Makefile": "CUDNN_FRONTEND_PATH ?= cudnn-frontend/include\n"
                    "train: train.cu\n\tnvcc -I$(CUDNN_FRONTEND_PATH) train.cu -o train\n",
        "train.cu": '#include "attention.h"\n__global__ void step() {}\n',
        "attention.h": '#pragma once\n#include <cudnn_frontend.h>\n',
        "graph.h": '#pragma once\n#include <cudnn_frontend.h>\n#include "attention.h"\n',
    }
    found = _library_findings_by_file(tmp_path, files)
    assert sorted(_places(found)) == [("Makefile", 3), ("graph.h", 2)]


def test_a_declaration_of_a_documented_library_function_is_still_the_library(tmp_path) -> None:
    # A project's own declaration of cuBLAS's `cublasCreate` (to avoid the header) is no
    # helper of its own: the call still needs hipBLAS on ROCm.
    result = assert_findings("""\
        cublasStatus_t cublasCreate(cublasHandle_t* handle);
        void start(cublasHandle_t* h) { cublasCreate(h); }
        """, "cuda", "L001", tmp_path=tmp_path, select=("L001",))
    assert "`cublasCreate`" in " ".join([result.findings[0].message, *(r.message for r in result.findings[0].related)])
