"""Generated code nests deeper and runs longer than people write: deep expressions are
analysed (or left unknown) without an internal error or a skipped file, and the time a
shape takes grows about linearly with its size."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from portlint import engine
from portlint.config import Config

# A hazard each file also holds, away from the deep part: it must still be found.
# W001: a 32-lane shuffle tree whose result every lane keeps.
CUDA_HAZARD = ("__global__ void hz(float* v) { float x = v[threadIdx.x]; "
               "for (int o = 16; o > 0; o >>= 1) x += __shfl_down(x, o); v[threadIdx.x] = x; }\n")
CMAKE_HAZARD = "set(CMAKE_CUDA_ARCHITECTURES 80)\n"  # C002
SETUP_HAZARD = ("setup(ext_modules=[CUDAExtension('x', ['x.cu'], "
                "extra_compile_args={'nvcc': ['-O3', '--use_fast_math']})])\n")  # Y001


def _sum(n: int, term: str = "a{i}", operator: str = " + ") -> str:
    return operator.join(term.format(i=i) for i in range(n))


def _nested(n: int, open_: str, inner: str, close: str = ")") -> str:
    return open_ * n + inner + close * n


# name -> (file name, text, the hazard's code)
DEEP_SHAPES = {
    # W001 reads lane arithmetic next to a 500-term sum.
    "sum-in-lane-arithmetic": ("x.cu", "__global__ void k(float* v, int a) { int lane = ("
                               + _sum(500) + ") % 32; v[lane] = __shfl_down(v[0], " + _sum(500) + "); }\n"
                               + CUDA_HAZARD, "W001"),
    # W005 reads branch conditions; N001 the types of operands; R001 capability tests.
    "syncwarp-condition": ("x.cu", "__global__ void k(int* o, int x) {\n  if (threadIdx.x < " + _sum(1000, "x")
                           + ") __syncwarp();\n}\n" + CUDA_HAZARD, "W001"),
    "half2-operands": ("x.hip", "#include <hip/hip_fp16.h>\n__global__ void k(__half2* h, float* o) {\n"
                       "  o[0] = __half2float(h[0].x) + " + _sum(1000, "o[{i}]") + ";\n}\n" + CUDA_HAZARD, "W001"),
    "capability-test": ("x.cu", "bool f(const cudaDeviceProp& p) {\n  return p.major >= 7 && "
                        + _sum(1000, "p.minor != {i}", " && ") + ";\n}\nint g(const cudaDeviceProp& p) {\n"
                        "  int cc = p.major * 10 + " + _sum(1000, "p.minor") + ";\n  return cc >= 80;\n}\n"
                        + CUDA_HAZARD, "W001"),
    # The constant evaluator behind K001/K002/K004/K006: block and grid sizes.
    "constant-launch": ("x.cu", "#define BLOCK (" + _sum(1000, "1") + ")\nconstexpr int kT = " + _sum(1000, "1")
                        + ";\n__global__ void f(float* d) { d[threadIdx.x] = 0; }\nvoid go(float* d) { f<<<"
                        + _sum(1000, "1") + ", BLOCK>>>(d); f<<<1, kT>>>(d); dim3 b(" + _sum(1000, "2")
                        + "); f<<<b, 32>>>(d); f<<<1, " + _nested(1000, "(1 + ", "1") + ">>>(d); }\n"
                        + CUDA_HAZARD, "W001"),
    # The ROCm-path model reads every `#if`: a long chain, and deep parentheses and `!`.
    "if-chain": ("x.cu", "#if " + _sum(1000, "defined(M{i})", " || ") + "\nint x;\n#endif\n#if "
                 + _sum(1000, "(M{i} > 0)", " && ") + "\nint y;\n#endif\n" + CUDA_HAZARD, "W001"),
    "if-nested": ("x.cu", "#if " + "!" * 1000 + _nested(1000, "(", "defined(__HIP_PLATFORM_AMD__)")
                  + "\nint x;\n#endif\n" + CUDA_HAZARD, "W001"),
    "cmake-condition": ("CMakeLists.txt", "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\nif("
                        + "NOT " * 1000 + _nested(1000, "(", "USE_ROCM") + " OR " + _sum(1000, "A{i}", " OR ")
                        + ")\nset(X 1)\nendif()\n" + CMAKE_HAZARD, "C002"),
    "setup-py-sum": ("setup.py", "from torch.utils.cpp_extension import CUDAExtension, setup\nX = "
                     + _sum(1000, "'a{i}'") + "\nif " + "not " * 500 + "IS_HIP:\n    pass\n" + SETUP_HAZARD, "Y001"),
    # Flags read through nested conditional expressions.
    "setup-py-conditional-flags": ("setup.py", "from torch.utils.cpp_extension import CUDAExtension, setup\nF = ["
                                   + "".join(f"'-DA{i}' if c{i} else " for i in range(400)) + "'-O2']\n"
                                   + SETUP_HAZARD.replace("['-O3', ", "F + ['-O3', "), "Y001"),
    # The ROCm-path model reads `if` tests as text (`ast.unparse`, which recurses).
    "setup-py-condition": ("setup.py", "from torch.utils.cpp_extension import CUDAExtension, setup\nif "
                           + _sum(900) + ":\n    pass\n" + SETUP_HAZARD, "Y001"),
}


def _scan(directory: Path) -> engine.ScanResult:
    return engine.scan([directory], Config(root=directory))


@pytest.mark.parametrize("shape", DEEP_SHAPES)
def test_deep_nesting_is_analysed_and_the_rest_of_the_file_still_checked(shape, tmp_path):
    name, text, hazard = DEEP_SHAPES[shape]
    (tmp_path / name).write_text(text, encoding="utf-8")
    result = _scan(tmp_path)
    assert [p.message for p in result.problems] == []  # no internal error, no skipped file
    assert hazard in {f.code for f in result.findings}


@pytest.mark.parametrize("deep", [_sum(20000, "'a{i}'"), "not " * 10000 + "IS_HIP"])
def test_python_too_deep_for_ast_is_one_line_not_a_traceback(tmp_path, deep):
    # Python's own parser gives up on these (RecursionError; MemoryError for the second):
    # the file's Python rules are skipped, with one line.
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension, setup\nX = " + deep + "\n" + SETUP_HAZARD,
        encoding="utf-8")
    (tmp_path / "k.cu").write_text(CUDA_HAZARD, encoding="utf-8")
    result = _scan(tmp_path)
    assert [(p.path.rsplit("/", 1)[-1], p.message, p.internal) for p in result.problems] == [
        ("setup.py", "skipped: nesting too deep to analyse", False)]
    assert [f.code for f in result.findings] == ["W001"]


# ---- time that grows with size -----------------------------------------------------------
# Like a complexity test: the scan of a shape at 4n may take at most 8x its time at n (linear
# is 4x; quadratic, 16x), best of three each, with a floor so that noise on tiny times does
# not count. No absolute number of seconds is asserted.
GROWTH, FLOOR = 8.0, 0.05


def _best_time(directory: Path) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = _scan(directory)
        best = min(best, time.perf_counter() - start)
        assert not result.has_internal_error
    return best


def _assert_linear(tmp_path: Path, write, n: int) -> None:
    times = []
    for size in (n, 4 * n):
        directory = tmp_path / str(size)
        directory.mkdir()
        write(directory, size)
        times.append(_best_time(directory))
    small, large = times
    assert large < GROWTH * max(small, FLOOR), f"{n}: {small:.3f} s, {4 * n}: {large:.3f} s"


def _else_if_chain(directory: Path, arms: int) -> None:
    # Each `else if` nests one level deeper: code that climbs the tree from every shuffle
    # climbed the whole chain, through `Node.parent`, which itself descends from the root.
    lines = ["__global__ void k(float* out, float v, int mode) {", "  int lane = threadIdx.x % 32;"]
    for i in range(arms):
        lines.append(f"  {'if' if i == 0 else '} else if'} (mode == {i}) {{")
        lines.append(f"    v += __shfl_xor_sync(0xffffffff, v, {1 + i % 16}, 32);")
    lines += ["  }", "  out[lane] = v;", "}"]
    (directory / "k.cu").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _else_if_chain_of_launches(directory: Path, arms: int) -> None:
    # The launch rules and the project facts look for the function around each launch.
    lines = ["__global__ void k(float* o) { o[threadIdx.x] = 0; }", "void go(float* o, int m) {"]
    for i in range(arms):
        lines.append(f"  {'if' if i == 0 else '} else if'} (m == {i}) {{")
        lines.append(f"    dim3 b{i}(32, {i % 8 + 1}); k<<<m, b{i}>>>(o); k<<<m, 1024>>>(o);")
        lines.append("    hipLaunchKernelGGL(k, dim3(1), dim3(2048), 0, 0, o);")
    lines += ["  }", "}"]
    (directory / "go.cu").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("write", [_else_if_chain, _else_if_chain_of_launches], ids=["shuffles", "launches"])
def test_else_if_chain_scales_linearly(tmp_path, write):
    _assert_linear(tmp_path, write, 100)


def _one_long_line(directory: Path, kernels: int) -> None:
    # Minified code: every finding is on the same line, with a non-ASCII character in each
    # kernel (UTF-16 columns were counted from the line's start for every finding).
    # (a width-less shuffle reads across 32 lanes: the `% 32` is observed, one W001 a kernel)
    unit = ("__global__ void k{i}(float* v) {{ int lane = threadIdx.x % 32; v[lane] = __shfl_down(v[lane], 1); "
            "/* é " + "-" * 1000 + " */ }} ")
    (directory / "k.cu").write_text("".join(unit.format(i=i) for i in range(kernels)) + "\n", encoding="utf-8")


def test_findings_on_one_long_line_scale_linearly(tmp_path):
    _assert_linear(tmp_path, _one_long_line, 150)


def _growing_cmake_variable(directory: Path, lines: int) -> None:
    # Every `${X}` read the value of every assignment of X again.
    text = ["cmake_minimum_required(VERSION 3.18)", "project(p LANGUAGES CXX CUDA)"]
    text += [f'set(X "${{X}} -DFLAG{i}")' for i in range(lines)]
    text += ['set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} ${X} --use_fast_math")', "add_library(k k.cu)"]
    (directory / "CMakeLists.txt").write_text("\n".join(text) + "\n", encoding="utf-8")


def test_cmake_variable_set_from_itself_scales_linearly(tmp_path):
    _assert_linear(tmp_path, _growing_cmake_variable, 250)


def test_text_report_shows_a_window_of_a_long_line(tmp_path):
    from portlint.report.text import SHOWN_WIDTH, _shown_line

    line = "x" * 5000 + "threadIdx.x % 32" + "y" * 5000
    shown, before = _shown_line(line, 5000)
    assert len(shown) <= SHOWN_WIDTH + 2 and shown.startswith("…") and shown.endswith("…")
    assert shown[len(before):].startswith("threadIdx.x % 32")
    short = "\tint lane = threadIdx.x % 32;"
    assert _shown_line(short, 12) == (short.expandtabs(4), short[:12].expandtabs(4))


def test_rocm_path_status_scales_with_many_arms():
    # Rules ask for the status of every function and launch; a generated file can have
    # thousands of `#if` arms. Asking once per arm must stay about linear in their number.
    from portlint.rocm_path import RocmPathModel, Status

    def ask_everywhere(arms: int) -> float:
        ranges = [(i * 10, i * 10 + 5, Status.DEAD if i % 2 else Status.PORT) for i in range(arms)]
        ranges.append((0, arms * 10, Status.PORT))  # one arm around them all
        best = float("inf")
        for _ in range(3):
            model = RocmPathModel(ranges=list(ranges))
            start = time.perf_counter()
            statuses = [model.status(i * 10 + 2) for i in range(arms)] + [model.status(i * 10 + 7) for i in range(arms)]
            best = min(best, time.perf_counter() - start)
        assert statuses[:2] == [Status.PORT, Status.DEAD] and statuses[arms] is Status.PORT
        return best

    small, large = ask_everywhere(1000), ask_everywhere(4000)
    assert large < GROWTH * max(small, FLOOR), f"1000 arms: {small:.3f} s, 4000 arms: {large:.3f} s"


def test_reports_of_a_long_line_show_a_window_of_it(tmp_path):
    # 200 findings on one 400 KB line: each report shows a window around each finding, not
    # the whole line 200 times (80 MB).
    from portlint.report import ReportContext
    from portlint.report import html_report, text

    _one_long_line(tmp_path, 200)
    result = _scan(tmp_path)
    assert len(result.findings) == 200
    context = ReportContext(root=tmp_path)
    for render in (text.render, html_report.render):
        page = render(result, context)
        assert len(page) < 2_000_000 and "threadIdx.x % 32" in page
    assert "<mark>threadIdx.x % 32</mark>" in html_report.render(result, context)


def _mappings_and_descriptors() -> tuple[int, int]:
    with open("/proc/self/maps") as maps:
        mappings = sum(1 for _ in maps)
    return mappings, len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="counts Linux's memory mappings")
@pytest.mark.parametrize("timeout", [0, 10])  # in this process; in a worker, under the budget
def test_many_files_hold_no_mapping_or_descriptor_each(tmp_path: Path, timeout: float) -> None:
    """A folder of 100,000 files once failed with `failed to map segment`: each file's bytes
    kept a memory mapping of its own (a read buffer of the size limit, shrunk), until the
    system's limit of 65,530 (`vm.max_map_count`). What the run keeps per file holds none,
    and no file stays open."""
    count = 600
    (tmp_path / "common.h").write_text("#pragma once\n#define WIDTH 64\n")
    for i in range(count):  # the build model's walk reads each file in this process, for its includes
        (tmp_path / f"k{i}.cu").write_text('#include "common.h"\n' + f"__device__ float f{i}(float v) {{ return __shfl_down_sync(0xffffffff, v, 1); }}\n"
                                           if i % 2 else f"int g{i}() {{ return {i}; }}\n")
    engine.scan([tmp_path], Config(root=tmp_path, timeout=timeout), jobs=1)  # imports, parsers, caches: made once
    mappings, descriptors = _mappings_and_descriptors()
    result = engine.scan([tmp_path], Config(root=tmp_path, timeout=timeout), jobs=1)
    after_mappings, after_descriptors = _mappings_and_descriptors()
    assert len(result.files) == count + 1 and len(result.findings) == count // 2
    assert after_mappings - mappings < count // 10, "a mapping per file"
    assert after_descriptors <= descriptors, "a file left open"
