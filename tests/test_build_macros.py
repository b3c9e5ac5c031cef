"""The macro environment of the ROCm and CUDA builds: project headers' `#define`/`#undef`
along `#include`, each under the arm it stands in, and what a file sees where it stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from portlint import engine
from portlint.build_model.expressions import evaluate
from portlint.build_model.macros import MAYBE, UNDEFINED, BuildMacros, Macro, bases, ScopeAt
from portlint.config import Config


def _model(files: dict[str, str], **kwargs) -> BuildMacros:
    return BuildMacros({f"/p/{name}": text.encode() for name, text in files.items()}, **kwargs)


def _state(model: BuildMacros, name: str, macro: str, rocm: bool, offset: int = 1 << 30):
    env = model.environment(f"/p/{name}")
    scope = env.scope(offset, rocm)
    return scope.state(macro)


def _value(model: BuildMacros, name: str, expression: str, rocm: bool, offset: int = 1 << 30):
    return evaluate(expression, model.environment(f"/p/{name}").scope(offset, rocm))


PLATFORM = """\
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define LIB_HIP 1
#else
#define LIB_HIP 0
#if __CUDA_ARCH__ >= 800
#define LIB_ASYNC_COPY
#endif
#endif
"""


def test_project_rocm_macro_is_one_on_rocm_and_zero_on_cuda() -> None:
    model = _model({"platform.h": PLATFORM, "k.cu": '#include "platform.h"\nint use = LIB_HIP;\n'})
    assert _value(model, "k.cu", "LIB_HIP", rocm=True) == 1
    assert _value(model, "k.cu", "LIB_HIP", rocm=False) == 0


def test_derived_feature_macro_of_a_cuda_only_arm_is_undefined_on_rocm() -> None:
    model = _model({"platform.h": PLATFORM, "k.cu": '#include "platform.h"\n#ifdef LIB_ASYNC_COPY\n#endif\n'})
    assert _state(model, "k.cu", "LIB_ASYNC_COPY", rocm=True) is UNDEFINED
    assert _state(model, "k.cu", "LIB_ASYNC_COPY", rocm=False) is MAYBE  # only some NVIDIA GPUs


def test_a_macro_is_seen_only_after_the_include_that_brings_it() -> None:
    text = '#if LIB_HIP\n#endif\n#include "platform.h"\n#if LIB_HIP\n#endif\n'
    model = _model({"platform.h": PLATFORM, "k.cu": text})
    include_at = text.index("#include")
    assert _value(model, "k.cu", "LIB_HIP", rocm=True, offset=0) is None  # not defined yet: unknown
    assert _value(model, "k.cu", "LIB_HIP", rocm=True, offset=include_at + 1) == 1


def test_includes_apply_in_order_and_undef_removes() -> None:
    files = {
        "a.h": "#define WIDTH 32\n",
        "b.h": "#undef WIDTH\n#define WIDTH 64\n",
        "c.h": "#undef WIDTH\n",
        "k.cu": '#include "a.h"\n#include "b.h"\nint x = WIDTH;\n#include "c.h"\n',
    }
    model = _model(files)
    text = files["k.cu"]
    assert _value(model, "k.cu", "WIDTH", rocm=True, offset=text.index("#include \"b.h\"")) == 32
    assert _value(model, "k.cu", "WIDTH", rocm=True, offset=text.index("int x")) == 64
    assert _state(model, "k.cu", "WIDTH", rocm=True) is UNDEFINED


def test_a_define_in_an_undecidable_arm_is_maybe_on_both_builds() -> None:
    model = _model({"k.cu": "#if USER_OPTION\n#define FAST 1\n#endif\n#if FAST\n#endif\n"})
    assert _state(model, "k.cu", "FAST", rocm=True) is MAYBE
    assert _value(model, "k.cu", "FAST", rocm=False) is None


def test_include_guards_do_not_make_a_header_undecidable() -> None:
    header = "#ifndef LIB_PLATFORM_H\n#define LIB_PLATFORM_H\n#define LIB_HIP_GUARDED 1\n#endif\n"
    model = _model({"guarded.h": header, "k.cu": '#include "guarded.h"\nint v = LIB_HIP_GUARDED;\n'})
    assert _value(model, "k.cu", "LIB_HIP_GUARDED", rocm=True) == 1


def test_macros_expand_in_conditions() -> None:
    files = {
        "arch.h": "#define IS_CDNA3 (defined(__gfx942__))\n#define IS_CDNA (IS_CDNA3 || LIB_HIP)\n"
                  "#define LIB_HIP 1\n#define AT_LEAST(v, n) ((v) >= (n))\n",
        "k.cu": '#include "arch.h"\n#if IS_CDNA && AT_LEAST(3, 2)\n#endif\n',
    }
    model = _model(files)
    assert _value(model, "k.cu", "IS_CDNA && AT_LEAST(3, 2)", rocm=True) == 1
    assert _value(model, "k.cu", "IS_CDNA3", rocm=True) is None  # the target is not known


def test_build_defines_and_configured_macros() -> None:
    model = _model({"k.cu": "#if MY_BACKEND_HIP\n#endif\n"}, rocm_defines={"LIB_WAVE": "64"},
                   cuda_defines={"LIB_WAVE": "32"})
    env = model.environment("/p/k.cu")
    # `rocm-macros` is configuration: the ROCm-path model passes it with each question.
    assert evaluate("defined(MY_BACKEND_HIP)", env.scope(0, True, {"MY_BACKEND_HIP"})) == 1
    assert evaluate("defined(MY_BACKEND_HIP)", env.scope(0, False, {"MY_BACKEND_HIP"})) == 0
    assert _value(model, "k.cu", "LIB_WAVE", rocm=True) == 64
    assert _value(model, "k.cu", "LIB_WAVE", rocm=False) == 32


def test_include_cycles_and_missing_headers_end() -> None:
    files = {"a.h": '#include "b.h"\n#define FROM_A 1\n', "b.h": '#include "a.h"\n#define FROM_B 1\n',
             "k.cu": '#include "a.h"\n#include "missing.h"\n#include <also/missing.h>\nint x = FROM_A + FROM_B;\n'}
    model = _model(files)
    assert _value(model, "k.cu", "FROM_A + FROM_B", rocm=True) == 2
    assert model.problems == []


def test_a_macro_defined_many_times_is_reported_once_and_not_followed() -> None:
    text = "".join(f"#undef STEP\n#define STEP {i}\n" for i in range(200))
    model = _model({"gen.h": text})
    model.environment("/p/gen.h")
    assert len(model.problems) == 1 and "`STEP` is defined 200 times" in model.problems[0][1]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_scan_reports_what_the_macro_walk_found_wrong(tmp_path: Path, jobs: int) -> None:
    """The walk's problems reach the scan's, from workers too (the walk is done before they fork)."""
    (tmp_path / "gen.h").write_text("".join(f"#undef STEP\n#define STEP {i}\n" for i in range(200)))
    for i in range(engine.PARALLEL_THRESHOLD):  # enough files for two workers
        (tmp_path / f"k{i}.cu").write_text('#include "gen.h"\n__global__ void k(int *p) { p[threadIdx.x] = STEP; }\n')
    result = engine.scan([tmp_path], Config(root=tmp_path), jobs=jobs)
    assert [(Path(p.path).name, p.message) for p in result.problems] == [
        ("gen.h", "`STEP` is defined 200 times; its later definitions are not followed")]


def test_basename_fallback_and_include_dirs() -> None:
    sources = {"/p/include/lib/util.h": b"#define FROM_UTIL 1\n", "/p/src/k.cu": b"#include <util.h>\nint x = FROM_UTIL;\n",
               "/p/src/j.cu": b"#include <lib/util.h>\nint y = FROM_UTIL;\n"}
    model = BuildMacros(sources)
    for name in ("/p/src/k.cu", "/p/src/j.cu"):
        assert evaluate("FROM_UTIL", model.environment(name).scope(1 << 30, True)) == 1


def test_shims_over_cuda_names() -> None:
    files = {
        "shim.h": "#ifdef __HIP_PLATFORM_AMD__\n#define __shfl_xor_sync(mask, v, lane) __shfl_xor(v, lane)\n"
                  "#define cublasSgemm hipblasSgemm\n"
                  "__device__ inline unsigned __vsub4(unsigned a, unsigned b) { return a - b; }\n#endif\n",
        "k.cu": '#include "shim.h"\nvoid f() { __shfl_xor_sync(~0u, 1, 1); cublasSgemm(); __vsub4(1, 2); }\n',
    }
    env = _model(files).environment("/p/k.cu")
    shuffle = env.shim("__shfl_xor_sync", 1 << 30)
    assert isinstance(shuffle, Macro) and shuffle.uses_parameter(0) is False and shuffle.uses_parameter(1)
    assert env.shim("cublasSgemm", 1 << 30).body == "hipblasSgemm"
    assert env.rocm_function("__vsub4", 1 << 30)
    assert env.shim("cublasSgemm", 0) is None  # before the include


@pytest.mark.parametrize("expression, rocm, cuda", [
    ("defined(__HIP_PLATFORM_AMD__)", 1, 0),
    ("__CUDA_ARCH__ >= 800", 0, None),
    ("!defined(__CUDACC__) || __HIPCC__", 1, 0),
    ("__has_include(<hip/hip_runtime.h>)", None, None),
    ("(1 ? 2 : 3) == 2 && 10 / 3 == 3 && -7 % 3 == -1 && (1 << 4) == 16", 1, 1),
    ("1 / 0", None, None),
    ("((((", None, None),
    # C++'s alternative spellings: hip-clang and nvcc read `and` as `&&`.
    ("defined(__HIP_PLATFORM_AMD__) and not defined(__CUDA_ARCH__)", 1, 0),
    ("defined(__CUDACC__) or defined(__HIPCC__)", 1, 1),
])
def test_conditions_under_rocm_and_cuda(expression: str, rocm, cuda) -> None:
    rocm_base, cuda_base = bases()
    assert evaluate(expression, ScopeAt(rocm_base, lambda n: None)) == rocm
    assert evaluate(expression, ScopeAt(cuda_base, lambda n: None)) == cuda


def test_editing_a_header_rechecks_the_files_that_include_it(tmp_path: Path) -> None:
    (tmp_path / "shim.h").write_text("#define UNRELATED 1\n")
    (tmp_path / "k.cu").write_text('#include "shim.h"\n__device__ float f(float v) '
                                   "{ return __shfl_xor_sync(0xffffffff, v, 1); }\n")
    cache = tmp_path / ".portlint_cache"
    first = engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
    assert [f.code for f in first.findings] == ["W002"]
    (tmp_path / "shim.h").write_text("#define __shfl_xor_sync(mask, v, lane) __shfl_xor(v, lane)\n")
    second = engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
    assert second.findings == []


def test_an_explicit_file_sees_the_project_headers(tmp_path: Path) -> None:
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "platform.h").write_text(PLATFORM)
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include <platform.h>\n#ifdef LIB_ASYNC_COPY\n__device__ void f() { asm("cp.async.wait_all;"); }\n#endif\n')
    alone = engine.scan([kernel], Config(root=tmp_path))
    whole = engine.scan([tmp_path], Config(root=tmp_path))
    assert [f.code for f in alone.findings] == [f.code for f in whole.findings] == []


def test_an_explicit_file_gets_the_defines_of_the_projects_torch_extension(tmp_path: Path) -> None:
    """PyTorch's extension builder defines `HIPBLAS_V2` on ROCm; the setup.py that says so is
    found around a named file too, so its CUDA-only arm is dead there as in a full scan."""
    (tmp_path / "csrc").mkdir()
    (tmp_path / "setup.py").write_text('from torch.utils.cpp_extension import CUDAExtension\n'
                                       'ext = CUDAExtension("e", ["csrc/k.cu"])\n')
    kernel = tmp_path / "csrc" / "k.cu"
    kernel.write_text("#ifndef HIPBLAS_V2\n__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n#endif\n")
    alone = engine.scan([kernel], Config(root=tmp_path))
    whole = engine.scan([tmp_path], Config(root=tmp_path))
    assert [f.code for f in alone.findings] == [f.code for f in whole.findings] == []
    kernel.write_text(kernel.read_text().replace("HIPBLAS_V2", "SOME_OTHER_MACRO"))  # an arm ROCm keeps
    assert [f.code for f in engine.scan([kernel], Config(root=tmp_path)).findings] == ["W002"]


def test_a_header_is_compiled_where_its_includes_are() -> None:
    files = {
        "shims.h": '#include "shim_detail.h"\n',  # included only by ROCm code, and so is its own include
        "shim_detail.h": "#define DETAIL 1\n",
        "cuda_only.h": "#define CUDA_HELPERS 1\n",
        "shared.h": "#define SHARED 1\n",
        "unused.h": "#define NOBODY 1\n",
        "k.cu": '#include "shared.h"\n#ifdef __HIP_PLATFORM_AMD__\n#include "shims.h"\n#else\n'
                '#include "cuda_only.h"\n#include "shared.h"\n#endif\n',
    }
    model = _model(files)
    statuses = {name: model.environment(f"/p/{name}").status for name in files}
    assert statuses == {"shims.h": "port", "shim_detail.h": "port", "cuda_only.h": "dead", "shared.h": None,
                        "unused.h": None, "k.cu": None}


@pytest.mark.parametrize("first", [True, False])
def test_headers_that_include_one_another_are_compiled_where_the_cycle_is_included(first: bool) -> None:
    # Pairs of headers that include one another, asked about in either order. Only CUDA code
    # includes `a.h` (`cuda.cu`'s `#else`): both are dead on ROCm. Every build includes `e.h`
    # (`k.cu`): both are compiled. Nothing outside includes `c.h` and `d.h`: they stand for
    # themselves, as a header nobody includes.
    files = {
        "a.h": '#pragma once\n#include "b.h"\n', "b.h": '#pragma once\n#include "a.h"\n',
        "cuda.cu": '#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n#else\n#include "a.h"\n#endif\n',
        "e.h": '#pragma once\n#include "f.h"\n', "f.h": '#pragma once\n#include "e.h"\n',
        "k.cu": '#include "e.h"\n',
        "c.h": '#pragma once\n#include "d.h"\n', "d.h": '#pragma once\n#include "c.h"\n',
    }
    model = _model(files)
    pairs = [("a.h", "b.h"), ("e.h", "f.h"), ("c.h", "d.h")]
    statuses = [[model.environment(f"/p/{name}").status for name in (pair if first else pair[::-1])] for pair in pairs]
    assert statuses == [["dead", "dead"], [None, None], [None, None]]


def test_a_cluster_of_headers_that_all_include_one_another_is_settled_once() -> None:
    # 30 headers, each including all the others, one of them included by a CUDA-only arm:
    # each is dead on ROCm. The cluster is settled as one group; following every chain of
    # includes through it instead would never end.
    names = [f"h{i}.h" for i in range(30)]
    files = {name: "#pragma once\n" + "".join(f'#include "{other}"\n' for other in names if other != name)
             for name in names}
    files["k.cu"] = '#ifndef __HIP_PLATFORM_AMD__\n#include "h7.h"\n#endif\n'
    model = _model(files)
    assert {model.environment(f"/p/{name}").status for name in names} == {"dead"}


@pytest.mark.parametrize("first", ["a.h", "b.h"])
def test_a_header_a_hipified_source_reaches_through_a_cycle_is_hipified_whichever_is_asked_first(first: str) -> None:
    # `x.cu` (hipified, surely compiled) includes `z.h`, which includes `a.h`; `a.h` and `b.h`
    # include one another; `y.cu` (neither) includes `b.h`. Both headers are reached from
    # `x.cu`, in whichever order they are asked about.
    files = {"y.cu": '#include "b.h"\n', "b.h": '#pragma once\n#include "a.h"\n',
             "a.h": '#pragma once\n#include "b.h"\n', "z.h": '#include "a.h"\n', "x.cu": '#include "z.h"\n'}
    model = _model(files, hipified=frozenset({"/p/x.cu"}), rocm_compiled=frozenset({"/p/x.cu"}))
    order = [first, "b.h" if first == "a.h" else "a.h"]
    assert [model.hipified(f"/p/{name}") for name in order] == [True, True]
    assert [model.compiled_on_rocm(f"/p/{name}") for name in order] == [True, True]
    assert [model.hipified("/p/y.cu"), model.compiled_on_rocm("/p/y.cu")] == [False, False]


def test_a_header_sees_what_every_includer_defined_before_including_it() -> None:
    shim = "#ifdef __HIP_PLATFORM_AMD__\n#define __shfl_xor_sync(mask, v, lane) __shfl_xor(v, lane)\n#endif\n"
    uses = "__device__ float f(float v) { return __shfl_xor_sync(~0u, v, 1); }\n"
    files = {"shim.h": shim, "uses.cuh": uses, "other.cuh": uses,
             "a.cu": '#include "shim.h"\n#include "uses.cuh"\n#include "other.cuh"\n',
             "b.cu": '#include "shim.h"\n#include "uses.cuh"\n',
             "c.cu": '#include "other.cuh"\n'}  # includes it without the shim first
    model = _model(files)
    assert model.environment("/p/uses.cuh").shim("__shfl_xor_sync", 0) is not None
    assert model.environment("/p/other.cuh").shim("__shfl_xor_sync", 0) is None


def test_a_header_whose_includers_define_a_name_differently_decides_what_every_one_decides() -> None:
    backend = "#if FFT_BACKEND == 1\n#include <nvrtc.h>\n#elif FFT_BACKEND == 2\n#include <hip/hiprtc.h>\n#endif\n"
    files = {"fft.h": backend,
             "hip_fft.h": '#define FFT_BACKEND 2\n#include "fft.h"\n',
             "cl_fft.h": '#define FFT_BACKEND 3\n#include "fft.h"\n',
             "hip.cpp": '#include "hip_fft.h"\n', "cl.cpp": '#include "cl_fft.h"\n'}
    model = _model(files)
    # 2 at one include, 3 at the other: the NVRTC arm is taken at neither, the HIP arm at one.
    assert _value(model, "fft.h", "FFT_BACKEND == 1", rocm=True) == 0
    assert _value(model, "fft.h", "FFT_BACKEND == 2", rocm=True) is None
    assert _value(model, "fft.h", "defined(FFT_BACKEND) && FFT_BACKEND > 1", rocm=True) == 1
    # An includer where it is surely undefined is one of the alternatives too; one where it
    # is not known (a `-D` may set it) leaves the header undecided.
    files["plain.cpp"] = '#undef FFT_BACKEND\n#include "fft.h"\n'
    model = _model(files)
    assert _value(model, "fft.h", "FFT_BACKEND == 1", rocm=True) == 0
    assert _value(model, "fft.h", "defined(FFT_BACKEND)", rocm=True) is None
    files["plain.cpp"] = '#include "fft.h"\n'
    assert _value(_model(files), "fft.h", "FFT_BACKEND == 1", rocm=True) is None


def test_a_header_only_files_the_rocm_build_skips_include_is_dead() -> None:
    files = {"sm80_helpers.cuh": "#define HELPERS 1\n", "sm80.cu": '#include "sm80_helpers.cuh"\n',
             "common.cu": "int x;\n"}
    model = _model(files, not_built=["/p/sm80.cu"])
    assert model.environment("/p/sm80_helpers.cuh").status == "dead"
    assert model.environment("/p/common.cu").status is None


def test_an_include_chain_deeper_than_the_limit_is_reported_once() -> None:
    files = {f"h{i}.h": f'#include "h{i + 1}.h"\n#define M{i} 1\n' for i in range(400)}
    files["k.cu"] = '#include "h0.h"\n#if M0\n#endif\n'
    model = _model(files)
    for name in files:
        model.environment(f"/p/{name}")
    assert len(model.problems) == 1 and "levels deep" in model.problems[0][1]
    assert _value(model, "k.cu", "M0", rocm=True) == 1


def test_a_cuda_library_feature_macro_named_for_an_nvidia_architecture_is_undefined_on_rocm() -> None:
    text = "#if defined(TENSORLIB_ARCH_MMA_SM90_SUPPORTED) || defined(TILELIB_ARCH_TMA_SM100A_ENABLED)\n#endif\n"
    model = _model({"k.cu": text})
    assert _value(model, "k.cu", "defined(TENSORLIB_ARCH_MMA_SM90_SUPPORTED)", rocm=True) == 0
    assert _value(model, "k.cu", "defined(TILELIB_ARCH_TMA_SM100A_ENABLED)", rocm=True) == 0
    assert _value(model, "k.cu", "defined(TENSORLIB_ARCH_MMA_SM90_SUPPORTED)", rocm=False) is None
    assert _value(model, "k.cu", "defined(TENSORLIB_FAST_PATH_ENABLED)", rocm=True) is None  # no architecture named


_SM90_KERNEL = """\
{define}
#if defined(MYLIB_ARCH_MMA_SM90_SUPPORTED)
__global__ void total(const float* in, float* out) {{
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) *out = v;
}}
#endif
"""


@pytest.mark.parametrize("define, reported", [
    ("", False),  # the library's headers set it from `__CUDA_ARCH__`: never on ROCm
    ("#define MYLIB_ARCH_MMA_SM90_SUPPORTED 1", True),  # the project sets it for every build
])
def test_code_under_an_nvidia_architecture_feature_macro_is_reported_only_where_rocm_defines_it(
        tmp_path: Path, define: str, reported: bool) -> None:
    (tmp_path / "k.cu").write_text(_SM90_KERNEL.format(define=define))
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W002",)))
    assert bool([f for f in result.findings if f.code == "W002"]) is reported


def test_an_include_the_build_may_skip_leaves_a_definition_it_repeats_as_it_was() -> None:
    """A header included again under an undecidable `#if` (a config header every header of a
    library includes) brings the same definition: the macro stays defined, not `maybe`."""
    model = _model({
        "config.h": "#pragma once\n#define LIB_WIDTH 64\n",
        "part.h": '#pragma once\n#include "config.h"\n',
        "k.cu": '#include "config.h"\n#if SOMETHING_UNKNOWN\n#include "part.h"\n#endif\n#if LIB_WIDTH\n#endif\n',
    })
    assert _value(model, "k.cu", "LIB_WIDTH", rocm=True) == 64
    assert _value(model, "k.cu", "LIB_WIDTH", rocm=False) == 64


def test_a_system_header_is_never_a_project_file_of_that_name(tmp_path: Path) -> None:
    """`<endian.h>` and `<memory>` are the system's, though a library in the project mirrors
    the standard headers' names deeper in its tree; a project header found by its name alone
    is still found."""
    (tmp_path / "lib/std").mkdir(parents=True)
    (tmp_path / "lib/std/endian.h").write_text("#define MIRROR_ENDIAN 1\n")
    (tmp_path / "lib/std/memory").write_text("#define MIRROR_MEMORY 1\n")
    (tmp_path / "lib/util.h").write_text("#define PROJECT_UTIL 1\n")
    k = tmp_path / "k.cu"
    k.write_text("#include <endian.h>\n#include <memory>\n#include <util.h>\n"
                 "#if PROJECT_UTIL || MIRROR_ENDIAN || MIRROR_MEMORY\n#endif\n")
    project = [str(tmp_path / "lib/std/endian.h"), str(tmp_path / "lib/util.h"), str(k)]
    model = BuildMacros({str(k): k.read_bytes()}, project_files=project,
                        read=lambda path: Path(path).read_bytes() if Path(path).is_file() else None)
    env = model.environment(str(k))
    assert env.scope(1 << 30, True).state("PROJECT_UTIL") is not None
    assert env.scope(1 << 30, True).state("MIRROR_ENDIAN") is None
    assert env.scope(1 << 30, True).state("MIRROR_MEMORY") is None


def test_a_header_without_extension_is_found_under_the_folders_of_its_path(tmp_path: Path) -> None:
    """`<mylib/detail/__config>` (the C++ standard library's way of naming headers) is not a
    discovered C-family file, nor is its folder any discovered file's: it is looked for below
    the project's folders that end the longest part of its path."""
    (tmp_path / "include/mylib/detail").mkdir(parents=True)
    (tmp_path / "include/mylib/detail/__config").write_text("#define MYLIB_CONFIG 1\n")
    (tmp_path / "include/mylib/vector.h").write_text("#include <mylib/detail/__config>\n")
    k = tmp_path / "k.cu"
    k.write_text("#include <mylib/vector.h>\n#if MYLIB_CONFIG\n#endif\n")
    project = [str(tmp_path / "include/mylib/vector.h"), str(k)]
    model = BuildMacros({str(k): k.read_bytes()}, project_files=project,
                        read=lambda path: Path(path).read_bytes() if Path(path).is_file() else None)
    assert evaluate("MYLIB_CONFIG", model.environment(str(k)).scope(1 << 30, True)) == 1


def test_a_named_headers_includers_are_the_files_whose_include_ends_its_path(tmp_path: Path) -> None:
    """The files walked for a header named alone are those that may include it: an include
    beside it or one that ends its path (`sort.h`, `lib/sort.h`), not another library's header
    of the same name (`other/sort.h`), and the files that include those in turn."""
    from portlint import build_model
    from portlint.discover import discover

    (tmp_path / "lib").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "lib/sort.h").write_text("#pragma once\n")
    (tmp_path / "lib/algo.h").write_text('#include "sort.h"\n')
    (tmp_path / "other/sort.h").write_text("#pragma once\n")
    (tmp_path / "uses_algo.cu").write_text("#include <lib/algo.h>\n")
    (tmp_path / "uses_lib.cu").write_text("#include <lib/sort.h>\n")
    (tmp_path / "uses_other.cu").write_text("#include <other/sort.h>\n")
    config = Config(root=tmp_path)
    around, _ = discover([tmp_path], config)
    named = [c for c in around if c.absolute.endswith("lib/sort.h")]
    found = build_model._includers(named, around)
    names = {Path(p).relative_to(tmp_path).as_posix() for paths in found.values() for p in paths}
    assert names == {"lib/algo.h", "uses_algo.cu", "uses_lib.cu"}


def test_a_header_whose_includers_were_not_all_walked_is_not_judged_by_those_that_were() -> None:
    """Past the budget a named header keeps the macros of the includers walked in time; where
    it is compiled is then not known: one includer's CUDA-only include does not make it code
    only the CUDA build compiles, nor does that includer's macro become the header's."""
    files = {
        "lib.h": "#pragma once\n#if LIB_MODE\n#endif\n",
        "cuda_only.cu": '#define LIB_MODE 1\n#ifndef __HIP_PLATFORM_AMD__\n#include "lib.h"\n#endif\n',
        "both.cu": '#include "lib.h"\n',
    }
    includers = {"/p/lib.h": ["/p/cuda_only.cu", "/p/both.cu"]}
    walked_all = _model(files, includers_of=includers)
    assert walked_all.environment("/p/lib.h").status is None
    in_time = _model(files, includers_of=includers)
    in_time.walk("/p/cuda_only.cu")  # the budget ran out before both.cu
    env = in_time.environment("/p/lib.h", follow_includers=False)
    assert env.status is None
    assert env.scope(1 << 30, True).state("LIB_MODE") is None


def test_a_files_events_through_its_includes_keep_their_order_and_leave_the_header_as_it_is() -> None:
    """Each place of a file sees the state its last event gave: an include that brings a name,
    one the build may skip that brings another definition (either, so unknown), the file's own
    definition. The header keeps its own definitions for every other file that includes it:
    what one includer does after the include is its own."""
    files = {
        "width.h": "#pragma once\n#define LANES 32\n#define TILE 8\n",
        "wide.h": "#pragma once\n#define LANES 64\n",
        "k.cu": ('#include "width.h"\nint a = LANES;\n#if SOMETHING_UNKNOWN\n#include "wide.h"\n#endif\n'
                 "int b = LANES;\n#undef LANES\n#define LANES 16\nint c = LANES + TILE;\n"),
        "other.cu": '#include "width.h"\nint d = LANES + TILE;\n',
    }
    model = _model(files)
    text = files["k.cu"]
    for rocm in (True, False):
        assert _value(model, "k.cu", "LANES", rocm, offset=text.index("int a")) == 32
        assert _state(model, "k.cu", "LANES", rocm, offset=text.index("int b")) is MAYBE
        assert _value(model, "k.cu", "LANES", rocm, offset=text.index("int c")) == 16
        assert _value(model, "k.cu", "TILE", rocm, offset=text.index("int c")) == 8
        assert _value(model, "other.cu", "LANES", rocm) == 32
        assert _value(model, "width.h", "LANES", rocm) == 32


def test_a_model_that_released_the_bytes_answers_as_before_reading_each_file_again_once(tmp_path: Path) -> None:
    """Before workers fork, the model stops keeping the files' bytes (each worker would count
    them): a file's environment is the same as the kept model's, each file is read again once
    (as its worker asks for it: the environment and the file's own bytes share the read), and
    only the newest read is kept."""
    (tmp_path / "config.h").write_text("#ifdef __HIP_PLATFORM_AMD__\n#define LANES 64\n#else\n#define LANES 32\n#endif\n")
    (tmp_path / "a.cu").write_text('#include "config.h"\n#if LANES == 64\n#endif\n')
    (tmp_path / "b.cu").write_text('#include "config.h"\n#define WIDE (LANES * 2)\n')
    paths = [str(tmp_path / name) for name in ("config.h", "a.cu", "b.cu")]
    reads: list[str] = []

    def read(path: str) -> bytes | None:
        reads.append(path)
        return Path(path).read_bytes() if Path(path).is_file() else None

    kept = BuildMacros({p: Path(p).read_bytes() for p in paths}, read=read)
    released = BuildMacros({p: Path(p).read_bytes() for p in paths}, read=read)
    assert kept.environment(paths[1]).scope(1 << 30, True).state("LANES") is not None
    released.walk_all()
    released.release_bytes()
    for path in paths:
        for rocm in (True, False):
            for name in ("LANES", "WIDE"):
                assert released.environment(path).scope(1 << 30, rocm).state(name) == \
                    kept.environment(path).scope(1 << 30, rocm).state(name)
        assert released.bytes_read(path) == Path(path).read_bytes()  # the environment's read, for the analysis
        assert not released.changed_since_walk(path)
    assert sorted(reads) == sorted(paths)  # each read again once; the kept model read none
    released.bytes_read(paths[0])
    assert len(reads) == len(paths) + 1  # only the newest read is kept


def test_a_file_saved_again_after_the_walk_is_skipped_not_analysed_with_the_old_macros(tmp_path: Path, monkeypatch) -> None:
    """A file saved while the scan runs, after the macro walk read it and before its worker
    reads it again, would be analysed with the old version's macros (the guard moved): it is
    skipped with a message, and scanned again it is analysed as it now is."""
    from portlint import build_model

    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\nadd_library(k k.hip)\n")
    kernel = tmp_path / "k.hip"
    old = "__global__ void k(int* out) {\n  out[0] = __shfl_down(out[0], 1);\n}\n"
    kernel.write_text(old)
    for i in range(40):  # enough files for the workers
        (tmp_path / f"h{i}.h").write_text(f"#define H{i} {i}\n")
    release = build_model.BuildModel.release_bytes

    def release_then_save(self) -> None:
        release(self)
        kernel.write_text("#include <hip/hip_runtime.h>\n" + old)

    monkeypatch.setattr(build_model.BuildModel, "release_bytes", release_then_save)
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path)
    result = engine.scan([tmp_path], config, jobs=2)
    assert any(p.path == "k.hip" and "saved again while the scan read it" in p.message for p in result.problems)
    monkeypatch.setattr(build_model.BuildModel, "release_bytes", release)
    again = engine.scan([tmp_path], config, jobs=2)
    assert not any("saved again" in p.message for p in again.problems)
