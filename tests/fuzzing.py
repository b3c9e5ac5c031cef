"""Fuzz cases for portlint and the properties each must keep.

A case is a small project of one to three files: a fixture mutated (bytes flipped, cut
short, lines duplicated or spliced in from another fixture, rule trigger tokens inserted)
or a fragment generated from pieces of C/CUDA, CMake, Makefile and setup.py. `check_case`
writes it to a directory, scans it with every rule and runs `--fix` (unsafe fixes too)
through the real applier, and returns what went wrong:

- an exception out of the scan, or a problem marked internal (a check crashed);
- a fixed file with more syntax errors, or a fix refused because it would not parse where
  the file parsed cleanly;
- a second `--fix` that still changes something;
- a case over the default time budget of a file (10 s).

Used by tests/test_fuzz.py (bounded, in CI) and bench/fuzz.py (longer runs).
"""

from __future__ import annotations

import shutil
import time
import traceback
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

from portlint import engine
from portlint.config import Config
from portlint.discover import language_of
from portlint.fix import plan_fixes, run_fix_passes
from portlint.registry import REGISTRY
from portlint.source import count_syntax_errors
from portlint.triggers import needs_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASE_BUDGET = 10.0  # seconds: the default per-file budget of `--timeout`

# Pieces that generated fragments are made of (our own; each language's usual constructs
# and what tends to break a parser or a pattern: unclosed comments, strings, brackets).
_C_PIECES = (
    "__global__ void kernel(float* out, const float* in, int n) {", "{", "}", "}", ";",
    "__device__ inline int lane_id() { return threadIdx.x % 32; }",
    "int lane = threadIdx.x & 31;", "int warp = threadIdx.x / 32;", "int wid = threadIdx.x >> 5;",
    "unsigned mask = 0xffffffff;", "unsigned bit = 1u << lane;", "unsigned lo = (1 << lane) - 1;",
    "v += __shfl_xor_sync(0xffffffff, v, 16);", "v = __shfl_down_sync(mask, v, offset, 32);",
    "for (int offset = 16; offset > 0; offset /= 2)", "for (int i = 0; i < 32; ++i) {",
    "if (__ballot_sync(0xffffffff, pred) == 0xffffffff) return;", "unsigned b = __ballot_sync(mask, x > 0);",
    "if (lane == 31) out[warp] = v;", "else if (lane < 16) v = 0;", "else", "while (n--) {",
    "__shared__ float tile[32][33];", "extern __shared__ char smem[];", "__syncthreads();", "__syncwarp();",
    "atomicAdd(out, v);", "kernel<<<grid, 256, 0, stream>>>(out, in, n);", "dim3 block(32, 32);",
    "hipLaunchKernelGGL(kernel, grid, block, 0, 0, out, in, n);", "cudaMalloc(&ptr, bytes);",
    "cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);", "cudaDeviceSynchronize();",
    "cudaGetDeviceProperties(&prop, 0);", "int size = prop.warpSize;", "cudaStream_t stream;",
    "cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m, b, k, &beta, c, m);",
    "#include <cuda_runtime.h>", "#include <hip/hip_runtime.h>", '#include "common.cuh"', "#include <cub/cub.cuh>",
    "#define WARP_SIZE 32", "#define FULL_MASK 0xffffffffu", "#define KERNEL __global__",
    "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)", "#ifdef __CUDA_ARCH__", "#if __CUDA_ARCH__ >= 800",
    "#ifndef __HIPCC__", "#elif defined(__HIPCC__)", "#else", "#endif", "#endif", "#pragma unroll",
    'asm volatile("bar.sync 0;");', 'asm("mov.u32 %0, %%laneid;" : "=r"(lane));', "__launch_bounds__(1024, 2)",
    "half2 h = __floats2half2_rn(a, b);", "__nv_bfloat16 x;", "float r = __fdividef(a, b);",
    "typedef cub::WarpReduce<float, 32> WarpReduce;", "auto tile = cg::tiled_partition<32>(block);",
    "// portlint: ignore[W001]", "// NOLINTNEXTLINE(portlint-W002)", "/* a comment", "*/",
    "/" * 80, "//", "\\", '"unterminated', "'", "'\\''", "R\"(raw)\"",
    "template <int N> struct Warp { static constexpr int size = 32; };", "return x >> 5;",
    'extern "C" __global__ void entry() {}', "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000);",
    'printf("%d\\n", lane);', "int x = 3'2;", "0b11111", "037", "0x1F", "((((", "))))", "<<<", ">>>",
    "namespace ops {", "class Tile {", "public:", "[=] __device__ (int i) { return i; }",
)
_CMAKE_PIECES = (
    "cmake_minimum_required(VERSION 3.18)", "project(ops LANGUAGES CXX CUDA)", "enable_language(CUDA)",
    "enable_language(HIP)", "set(CMAKE_CUDA_ARCHITECTURES 70 80)", "find_package(CUDAToolkit REQUIRED)",
    "find_package(CUDA)", "find_package(hip)", "add_library(ops SHARED kernel.cu ops.cpp)",
    "cuda_add_library(old kernel.cu)", "add_executable(app main.cpp)",
    "target_link_libraries(ops PRIVATE CUDA::cudart CUDA::cublas ${CUDA_LIBRARIES})",
    'set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -arch=sm_80 --use_fast_math")',
    "list(APPEND CUDA_NVCC_FLAGS -gencode arch=compute_80,code=sm_80)", "if(USE_ROCM)", "if(NOT WITH_CUDA)",
    "elseif(CMAKE_HIP_COMPILER)", "else()", "endif()", "endif()", "option(USE_CUDA \"build for CUDA\" ON)",
    "set_target_properties(ops PROPERTIES CUDA_SEPARABLE_COMPILATION ON)",
    "include_directories(/usr/local/cuda/include)", 'set(X "${X} ${Y}")', "set(GPU_TARGETS gfx000)",
    "target_compile_definitions(ops PRIVATE USE_CUDA=1)", "target_compile_options(ops PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas -v>)",
    "set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)", "function(add_kernel name)", "endfunction()",
    "foreach(arch 70 80 90)", "endforeach()", "add_subdirectory(sub)", "# a comment", "#[[ bracket", "]]",
    "${", "$ENV{CUDA_HOME}", '"', "(", ")", "\\",
)
_MAKE_PIECES = (
    "NVCC ?= nvcc", "CUDA_PATH ?= /usr/local/cuda", "NVCCFLAGS += -arch=sm_80 -O3 --use_fast_math",
    "HIPCC = hipcc", "CXX := g++", "all: app", "app: main.o kernel.o", "\t$(NVCC) $(NVCCFLAGS) -o $@ $^ -lcudart -lcublas",
    "%.o: %.cu", "\t$(NVCC) -c $< -o $@", "\t$(HIPCC) --offload-arch=gfx90a -c $< -o $@", "\t$(CXX) -o $@ $^ -lamdhip64",
    "ifeq ($(USE_ROCM),1)", "ifdef CUDA", "else", "endif", "endif", "LDFLAGS := -L$(CUDA_PATH)/lib64",
    "define compile", "endef", "$(eval $(call compile,x))", "include config.mk", ".PHONY: all clean",
    "clean:", "\trm -f *.o app", "GPU_ARCH = gfx000", "SRC := $(wildcard *.cu)", "\\", "# a comment", "$(", "${",
)
_SETUP_PIECES = (
    "from setuptools import setup", "from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME",
    "import os", "import torch", "nvcc_flags = ['-O3', '--use_fast_math', '-gencode', 'arch=compute_80,code=sm_80']",
    "ext = CUDAExtension('ops', sources=['ops.cpp', 'kernel.cu'], extra_compile_args={'cxx': ['-O3'], 'nvcc': nvcc_flags})",
    "if torch.version.hip:", "if torch.version.cuda is not None:", "    nvcc_flags.append('-DUSE_ROCM')", "    pass",
    "else:", "setup(name='ops', ext_modules=[ext], cmdclass={'build_ext': BuildExtension})",
    "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'", "libraries = ['cudart', 'cublas']",
    "library_dirs = [os.path.join(CUDA_HOME, 'lib64')]", "include_dirs = ['/usr/local/cuda/include']",
    "def extensions():", "    return [", "    ]", "(", ")", "'", '"""', "# a comment", "\\",
)
_PIECES = {"cuda": _C_PIECES, "cmake": _CMAKE_PIECES, "make": _MAKE_PIECES, "python": _SETUP_PIECES}
_NAMES = {"cuda": ("kernel.cu", "common.cuh", "ops.cpp", "tile.hip", "shim.h"), "cmake": ("CMakeLists.txt", "gpu.cmake"),
          "make": ("Makefile", "rules.mk"), "python": ("setup.py",)}
_SEPARATORS = ("\n", "\n", "\n", " ", "\n\n", "\r\n", "\t", "\\\n")


@cache
def fixture_files() -> tuple[tuple[str, bytes], ...]:
    """(file name, bytes) of every fixture file portlint would scan."""
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and language_of(path) is not None:
            found.append((path.name, path.read_bytes()))
    return tuple(found)


@cache
def trigger_tokens() -> tuple[bytes, ...]:
    """Every plain token of every rule's trigger (`@needs`), the bytes its check looks for."""
    tokens = set()
    for checks in REGISTRY.values():
        for check in checks.values():
            tokens.update(a for a in needs_of(check).atoms() if isinstance(a, bytes))
    return tuple(sorted(tokens))


_EXTRA_TOKENS = (b"<<", b">>", b"<<<", b">>>", b"{", b"}", b"(", b")", b"/*", b"*/", b"//", b'"', b"'", b"\\\n",
                 b"#if 0\n", b"#endif\n", b"#else\n", b"\n#define X(a, b) a##b\n", b"${", b"$(", b"\x00", b"\xff\xfe",
                 b"\r", b"32", b"31", b"64", b"0xffffffff", b"1u", b"\t")


@st.composite
def _mutated(draw, data: bytes) -> bytes:
    """`data` after one to four mutations."""
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("flip", "cut", "duplicate", "splice", "token", "delete")))
        at = draw(st.integers(0, len(data))) if data else 0
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
        elif kind == "cut":
            data = data[:at]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 64)):]
        elif kind == "duplicate":
            lines = data.splitlines(keepends=True) or [b""]
            first = draw(st.integers(0, len(lines) - 1))
            count = draw(st.integers(1, 8))
            copies = draw(st.integers(1, 20))
            lines[first:first] = lines[first:first + count] * copies
            data = b"".join(lines)
        elif kind == "splice":
            _, other = draw(st.sampled_from(fixture_files()))
            lines = other.splitlines(keepends=True) or [b""]
            start = draw(st.integers(0, len(lines) - 1))
            data = data[:at] + b"".join(lines[start:start + draw(st.integers(1, 30))]) + data[at:]
        else:
            token = draw(st.sampled_from(trigger_tokens() + _EXTRA_TOKENS))
            data = data[:at] + token + data[at:]
    return data


@st.composite
def mutated_fixture(draw) -> tuple[str, bytes]:
    name, data = draw(st.sampled_from(fixture_files()))
    return name, draw(_mutated(data))


@st.composite
def generated_fragment(draw) -> tuple[str, bytes]:
    language = draw(st.sampled_from(sorted(_PIECES)))
    pieces = draw(st.lists(st.one_of(st.sampled_from(_PIECES[language]),
                                     st.sampled_from(trigger_tokens()).map(lambda t: t.decode("latin-1"))),
                           min_size=1, max_size=60))
    separators = draw(st.lists(st.sampled_from(_SEPARATORS), min_size=len(pieces), max_size=len(pieces)))
    text = "".join(p + s for p, s in zip(pieces, separators))
    if draw(st.booleans()):  # sometimes one piece repeated many times: long runs, deep nesting
        text += draw(st.sampled_from(_PIECES[language])) * draw(st.integers(2, 400))
    return draw(st.sampled_from(_NAMES[language])), text.encode("utf-8")


def projects():
    """One to three files, each a mutated fixture or a generated fragment."""
    return st.lists(st.one_of(mutated_fixture(), generated_fragment()), min_size=1, max_size=3)


def _write(files: list[tuple[str, bytes]], root: Path) -> list[Path]:
    for child in root.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    paths = []
    for index, (name, data) in enumerate(files):
        folder = root / f"d{index}"  # each in its own folder: two may share a name
        folder.mkdir()
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    return paths


def check_case(files: list[tuple[str, bytes]], root: Path) -> list[str]:
    """Write `files` under the empty directory `root`, scan and fix them; what went wrong."""
    paths = _write(files, root)
    config = Config(root=root, select=("ALL",))
    failures: list[str] = []
    started = time.perf_counter()
    try:
        result = engine.scan(paths, config)
        failures += [f"internal error: {p}" for p in result.problems if p.internal]
        plans, refused = plan_fixes(result.findings, result.files, True)
        if plans or refused:
            languages = {p: language_of(p) for p in paths}
            before = {p: count_syntax_errors(languages[p], p.read_bytes()) for p in paths}
            refused = run_fix_passes(paths, config, 1, True).not_fixed  # the real applier, as `--fix --unsafe-fixes`
            # The applier refuses a rewrite with more syntax errors than before: the safety net
            # of a broken file, but a bug in the fix where the file parsed cleanly.
            failures += [f"fix refused: {r}" for r in map(str, refused) if "would not parse" in r
                         and any(before[p] == 0 and f"{p.parent.name}/{p.name}:" in r for p in paths)]
            for p in paths:
                after = count_syntax_errors(languages[p], p.read_bytes())
                if after > before[p]:
                    failures.append(f"{p.relative_to(root)}: --fix added syntax errors ({before[p]} -> {after})")
            fixed = [p.read_bytes() for p in paths]
            second = run_fix_passes(paths, config, 1, True)
            result, again = second.result, second.applied
            if again or [p.read_bytes() for p in paths] != fixed:
                failures.append(f"a second --fix changed the files ({again} fixes applied)")
            failures += [f"internal error after --fix: {p}" for p in result.problems if p.internal]
    except Exception:  # noqa: BLE001 - the failure is the report
        failures.append("exception: " + traceback.format_exc(limit=-6))
    took = time.perf_counter() - started
    if took > CASE_BUDGET:
        failures.append(f"took {took:.1f} s, over the {CASE_BUDGET:.0f} s budget of a file")
    return failures
