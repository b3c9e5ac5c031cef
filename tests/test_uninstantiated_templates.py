"""A function template that no file of the project names is instantiated by no build, so none
of it runs: its findings about what code computes are notes that say so, and they come back
where any file calls it. What hip-clang rejects stays (it checks non-dependent code at the
definition)."""

from __future__ import annotations

from pathlib import Path

from portlint import engine
from portlint.config import Config
from portlint.finding import Severity

HELPER = """\
#pragma once
#include <hip/hip_runtime.h>
template <typename T>
__device__ T tail_sum(T* scratch, T v) {
  if (threadIdx.x < 32) {
    v = v + scratch[threadIdx.x + 32];
    for (int i = 16; i > 0; i >>= 1) v = v + __shfl_down(v, i);
  }
  return v;
}
"""
CALLER = """\
#include "tail.h"
__global__ void total(float* scratch, float* out) { out[blockIdx.x] = tail_sum(scratch, out[0]); }
"""


def _scan(root: Path, *paths: Path):
    result = engine.scan(list(paths) or [root], Config(root=root, select=("W001",)))
    assert not result.problems, [str(p) for p in result.problems]
    return result.findings


def test_a_template_nothing_instantiates_gets_notes_that_say_so(tmp_path: Path) -> None:
    (tmp_path / "tail.h").write_text(HELPER)
    (tmp_path / "other.cu").write_text('#include "tail.h"\n__global__ void idle() {}\n')
    findings = _scan(tmp_path)
    assert findings and {f.severity for f in findings} == {Severity.NOTE}
    assert all("Nothing in the project instantiates `tail_sum`, so none of it runs" in f.message for f in findings)


def test_a_call_in_another_file_keeps_the_warnings(tmp_path: Path) -> None:
    (tmp_path / "tail.h").write_text(HELPER)
    (tmp_path / "total.cu").write_text(CALLER)
    findings = _scan(tmp_path)
    assert findings and all(f.severity is not Severity.NOTE and "instantiates" not in f.message for f in findings)


def test_a_call_in_its_own_file_keeps_the_warnings(tmp_path: Path) -> None:
    (tmp_path / "tail.h").write_text(HELPER + "__global__ void total(float* s, float* o) { o[0] = tail_sum(s, o[0]); }\n")
    findings = _scan(tmp_path)
    assert findings and all(f.severity is not Severity.NOTE for f in findings)


def test_a_plain_function_nothing_calls_keeps_the_warnings(tmp_path: Path) -> None:
    # (not a template: hip-clang compiles it wherever the header is included)
    (tmp_path / "tail.h").write_text(HELPER.replace("template <typename T>\n", "").replace("T ", "float ")
                                     .replace("(T*", "(float*").replace(", T v", ", float v"))
    findings = _scan(tmp_path)
    assert findings and all(f.severity is not Severity.NOTE for f in findings)


def test_what_hip_clang_rejects_stays(tmp_path: Path) -> None:
    # A 32-bit mask in a call that names no template parameter meets HIP's `static_assert`
    # where the template is defined.
    (tmp_path / "vote.h").write_text("#pragma once\n#include <hip/hip_runtime.h>\ntemplate <typename T>\n"
                                      "__device__ bool any_lane(T) { return __any_sync(0xffffffff, 1); }\n")
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W002",)))
    assert [f.severity for f in result.findings] == [Severity.ERROR]


DEPENDENT_TAIL = """\
#pragma once
#include <cuda_runtime.h>
template <typename T>
__device__ T tail_sum(T* scratch) {
  T v = scratch[threadIdx.x];
  if (threadIdx.x < 32) {
    for (int i = 16; i > 0; i >>= 1) v = v + __shfl_down_sync(0xffffffff, v, i);
  }
  return v;
}
"""


def test_a_mask_in_a_call_that_depends_on_the_template_is_checked_only_where_it_is_instantiated(tmp_path: Path) -> None:
    # `v` is a `T`: hip-clang picks the intrinsic (and meets its mask check) only in an
    # instantiation, and nothing instantiates `tail_sum`.
    (tmp_path / "tail.h").write_text(DEPENDENT_TAIL)
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W002",)))
    assert [f.severity for f in result.findings] == [Severity.NOTE]
    assert "Nothing in the project instantiates `tail_sum`" in result.findings[0].message


def test_a_dependent_mask_is_an_error_again_where_a_file_instantiates_the_template(tmp_path: Path) -> None:
    (tmp_path / "tail.h").write_text(DEPENDENT_TAIL)
    (tmp_path / "total.cu").write_text('#include "tail.h"\n'
                                       "__global__ void total(float* s, float* o) { o[0] = tail_sum(s); }\n")
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W002",)))
    assert [f.severity for f in result.findings] == [Severity.ERROR]


def test_a_call_only_in_an_arm_the_rocm_build_skips_instantiates_nothing_there(tmp_path: Path) -> None:
    # The CUDA arm calls the helper; the ROCm build compiles the HIP arm, which does not.
    (tmp_path / "tail.h").write_text(HELPER)
    (tmp_path / "total.cu").write_text('#include "tail.h"\n'
                                       "__global__ void total(float* scratch, float* out) {\n"
                                       "#if defined(__HIP_PLATFORM_AMD__)\n"
                                       "  out[blockIdx.x] = scratch[0];\n"
                                       "#else\n"
                                       "  out[blockIdx.x] = tail_sum(scratch, out[0]);\n"
                                       "#endif\n"
                                       "}\n")
    findings = _scan(tmp_path)
    assert findings and {f.severity for f in findings} == {Severity.NOTE}
    assert all("Nothing in the project instantiates `tail_sum`" in f.message for f in findings)
