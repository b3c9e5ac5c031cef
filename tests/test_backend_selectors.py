"""Backend selectors: a project that tests `X_ENABLE_CUDA` and its twin `X_ENABLE_HIP` (the
macros its configure step defines for the one backend it builds) compiles the CUDA arm in
its CUDA build only. Without the twin, the CUDA macro says nothing certain about ROCm."""

from __future__ import annotations

from pathlib import Path

from harness import scan

CONFIG = """\
// Written by configure for the backend being built.
#pragma once
"""

REDUCE = """\
#include "config.h"

__device__ float warp_sum(float v) {
#if defined(MYLIB_ENABLE_CUDA)
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
#elif defined(MYLIB_ENABLE_HIP)
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_down(v, offset);
#endif
  return v;
}
"""


def _findings(tmp_path: Path, reduce: str) -> list[tuple[int, str]]:
    (tmp_path / "config.h").write_text(CONFIG)
    (tmp_path / "reduce.cu").write_text(reduce)
    result = scan([tmp_path], tmp_path, select=("W",))
    return sorted((f.location.start_line, f.code) for f in result.findings)


def test_cuda_arm_of_a_backend_pair_is_not_compiled_on_rocm(tmp_path: Path) -> None:
    assert _findings(tmp_path, REDUCE) == []


def test_a_cuda_macro_without_a_hip_twin_decides_nothing(tmp_path: Path) -> None:
    alone = REDUCE.replace("#elif defined(MYLIB_ENABLE_HIP)", "#else")
    assert [code for _, code in _findings(tmp_path, alone)] != []
