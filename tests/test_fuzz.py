"""Fuzzing, bounded for CI: mutated fixtures and generated C/CMake/Makefile/setup.py
fragments (tests/fuzzing.py), each scanned with every rule and fixed with `--fix
--unsafe-fixes` in-process. No internal error, no fix that breaks the syntax, a second
`--fix` that changes nothing (the properties are listed in tests/fuzzing.py).

New cases are drawn for at most GENERATE_SECONDS (a few thousand on an idle machine; a
longer run is `python bench/fuzz.py --minutes N`). Once a case has failed, every later
case runs in full, so Hypothesis can shrink the failure to a small one and print it.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings

import fuzzing

GENERATE_SECONDS = 45
_clock = {"started": None, "failed": False}


@pytest.fixture(scope="module")
def case_root(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@settings(max_examples=2500, deadline=None, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(files=fuzzing.projects())
def test_fuzzed_projects_scan_and_fix_cleanly(files, case_root) -> None:
    if _clock["started"] is None:
        _clock["started"] = time.monotonic()
    if time.monotonic() - _clock["started"] > GENERATE_SECONDS and not _clock["failed"]:
        return  # the time is up: the remaining examples pass unrun
    failures = fuzzing.check_case(files, case_root)
    if failures:
        _clock["failed"] = True
    assert not failures, "\n".join(failures)


# Cases longer runs found, kept so that they stay fixed.
FOUND = {
    # A fix refused as unparsable in a file that did not parse before: the refusal is right.
    "refused-fix-in-a-broken-file": [("kernel.cu", (
        b"__global__ void kernel(float* out, const float* in, int n) {\n" * 3
        + b"}\n}\n}\n#ifdef __CUDA_ARCH__ .ballot\n.ballot\n;\n"))],
    # An `if(USE_ROCM)` the parser cannot close hides the arm around `cuda_add_cublas_to_target`:
    # C003 must not wrap it in another arm on every pass.
    "cmake-arm-in-broken-code": [("CMakeLists.txt", (
        b'add_executable(bench bench.cu)\nif(USE_ROCM)\n    ${EXTRA_LIBS}\n    "-lcusparse")\n'
        b"add_executable(bench2 bench.cu)\nif(USE_ROCM)\n  target_link_libraries(bench roc::hipblas)\nelse()\n"
        b"  cuda_add_cublas_to_target(bench)\nendif()\n"))],
    # A quote left open before an `asm` operand list: the tree reads `" : "=r` as a literal
    # with a suffix, and X003's space went inside the real string on every pass.
    "literal-suffix-after-an-open-quote": [("lane.cu", (
        b'__device__ __forcmov.u32 %0, %%laneid;" : "=r"(lane));\n'
        b'               : "=r"(frag[0]), "=r"(frag[1]), "=r"(frag[2]), "=r"(frag[3])\n'
        b'      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n"\n'
        b'  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));\n'))],
    # A stray `[` folds `__global__` into an ERROR node: P005 must see it and fix once.
    "global-hidden-by-a-stray-bracket": [("k.cu", b"[ a,\nstatic void k(float* x) { x[0] = 1; }\n"
                                                  b"void g() { k<<<1, 1>>>(0); }\n")],
    # Shapes once quadratic in their size, each case over the budget with the old code: nested
    # `#ifdef __CUDA_ARCH__` (each branch's text read again for NVIDIA-only code, each arm's
    # `#if` found by climbing parents), a long `#elif` chain (each arm asked about the whole
    # chain); PTX in them makes the findings advice, so the case is the scan's. And one long
    # line of shuffles (a finding and a fix each).
    "nested-cuda-arch-ifdefs": [("nested.cu", b"#ifdef __CUDA_ARCH__\n" * 8000 + b'asm("trap;");\n'
                                 + b"#endif\n" * 8000)],
    "long-elif-chain-on-cuda-arch": [("chain.cu", b"#if X\n" + b"".join(
        b'#elif defined(__CUDA_ARCH__) && Y%d\nasm("trap;");\n' % i for i in range(3000)) + b"#endif\n")],
    "one-long-line-of-shuffles": [("line.cu", b"__device__ float f(float v) { "
                                   + b"v += __shfl_down_sync(0xffffffff, v, 1); " * 1500 + b"return v; }\n")],
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_cases_found_by_longer_runs_stay_fixed(name, tmp_path) -> None:
    assert fuzzing.check_case(FOUND[name], tmp_path) == []
