"""N001's claim, checked with the compiler: code that reads `__half2` members or uses
`__half` operators does not build the way PyTorch builds ROCm extensions; the rewrite does."""

from __future__ import annotations

from pathlib import Path

from test_hipcc import compile_hip

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# What torch.utils.cpp_extension passes to hipcc (COMMON_HIPCC_FLAGS).
PYTORCH_HIP_FLAGS = ("-D__HIP_NO_HALF_OPERATORS__=1", "-D__HIP_NO_HALF_CONVERSIONS__=1")


def test_half_code_fails_under_pytorch_rocm_flags(tmp_path: Path) -> None:
    proc = compile_hip(FIXTURES / "N001" / "bad.hip", tmp_path, *PYTORCH_HIP_FLAGS)
    assert proc.returncode != 0
    assert "invalid operands to binary expression" in proc.stderr


def test_half_rewrite_builds_under_pytorch_rocm_flags(tmp_path: Path) -> None:
    proc = compile_hip(FIXTURES / "N001" / "bad.fixed.hip", tmp_path, *PYTORCH_HIP_FLAGS)
    assert proc.returncode == 0, proc.stderr[-4000:]
