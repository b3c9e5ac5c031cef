"""Suggested rewrites build on ROCm and still build on CUDA: fixture files marked
`// compile-check: hipcc` (fixed outputs and ok cases) are compiled with hipcc for gfx90a, and
every fixed output that is CUDA source (not the port's own HIP file) with nvcc for sm_80.

hipcc is Debian's (`.ci/run` installs it); nvcc is the CUDA toolkit's, else PyPI's
`nvidia-cuda-nvcc` wheel (`.ci/run` installs it where no toolkit is). Without a compiler these
tests skip with the reason shown, except under CI (`CI` set), where it is a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MARKER = "compile-check: hipcc"
C_SUFFIXES = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".h", ".hpp"}
ARCH = "gfx90a"


def _marked_files() -> list[Path]:
    files = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix not in C_SUFFIXES or not path.is_file():
            continue
        is_fixed_or_ok = ".fixed" in str(path.relative_to(FIXTURES)) or path.name.startswith("ok") or any(
            part.startswith("ok") for part in path.relative_to(FIXTURES).parts
        )
        if is_fixed_or_ok and MARKER in path.read_text(encoding="utf-8"):
            files.append(path)
    return files


def _hipcc() -> str:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        if os.environ.get("CI"):
            pytest.fail("hipcc is missing in CI: .ci/run must install it")
        pytest.skip("hipcc not installed: apt-get install hipcc libamdhip64-dev rocm-device-libs")
    return hipcc


def compile_hip(path: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run(
        [_hipcc(), f"--offload-arch={ARCH}", *flags, "-x", "hip", "-c", str(path), "-o", str(tmp_path / "out.o")],
        capture_output=True, text=True, env=env, timeout=300,
    )


def test_some_fixtures_are_compile_checked() -> None:
    assert _marked_files(), f"no fixture carries '{MARKER}'"


@pytest.mark.parametrize("path", _marked_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_compiles_for_rocm(path: Path, tmp_path: Path) -> None:
    proc = compile_hip(path, tmp_path)
    assert proc.returncode == 0, f"hipcc failed on {path.name}:\n{proc.stderr[-4000:]}"


# ---- the CUDA side: nvcc ---------------------------------------------------------------

# Fixed outputs nvcc cannot build today, each for a reason in the fix itself (kept here so
# the list shrinks, never grows: strict xfail fails once one compiles).
NVCC_KNOWN_BROKEN = {
    "L001/bad.fixed.cu": "includes the CUDA libraries' headers (cuBLAS, cuDNN, CUTLASS), not installed with nvcc",
    "L001/bad_included_twice.fixed.cu": "includes NCCL's header, not installed with nvcc",
    "W003/bad_mask_types.fixed.cu": "the case itself is not CUDA: a tile of 64 has no `ballot` there",
    "W001/bad_cub.fixed.cu": "includes <hipcub/hipcub.hpp>",
    "W001/bad_scan_seed.fixed.cu": "includes <hipcub/hipcub.hpp>",
    "P005/bad.fixed/ops.cu": "the case itself is hipified: it launches with HIP's `HIP_KERNEL_NAME`",
}


def nvcc_path() -> str | None:
    """nvcc on PATH, in a CUDA toolkit under /usr/local, or from PyPI's `nvidia-cuda-nvcc` wheel."""
    found = os.environ.get("NVCC") or shutil.which("nvcc")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)
    for site in sys.path:
        candidates += glob.glob(os.path.join(site, "nvidia", "**", "bin", "nvcc"), recursive=True)
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def _nvcc() -> str:
    nvcc = nvcc_path()
    if nvcc is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc is missing in CI: .ci/run must install the CUDA toolkit or PyPI's nvidia-cuda-nvcc")
        pytest.skip("no nvcc: neither a CUDA toolkit nor PyPI's nvidia-cuda-nvcc, nvidia-cuda-runtime, nvidia-cuda-crt")
    return nvcc


def compile_cuda(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_nvcc(), "-arch=sm_80", "-std=c++17", "-x", "cu", "-I", str(path.parent), "-c", str(path),
         "-o", str(tmp_path / "out.o")],
        capture_output=True, text=True, timeout=300,
    )


def is_cuda_source(path: Path) -> bool:
    """CUDA source, not the port's own HIP file (hipify's output includes HIP's headers)."""
    text = path.read_text(encoding="utf-8")
    return "<hip/" not in text and '"hip/' not in text and path.suffix in C_SUFFIXES


def _fixed_files() -> list:
    files = []
    for path in sorted(FIXTURES.rglob("*")):
        relative = path.relative_to(FIXTURES).as_posix()
        if path.is_file() and ".fixed" in relative and path.suffix in {".cu", ".cuh", ".cpp", ".cc"}:
            if is_cuda_source(path):
                reason = NVCC_KNOWN_BROKEN.get(relative)
                marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
                files.append(pytest.param(path, marks=marks, id=relative))
    return files


def test_some_fixed_fixtures_are_cuda_source() -> None:
    assert len(_fixed_files()) >= 10


@pytest.mark.parametrize("path", _fixed_files())
def test_fixed_fixture_compiles_for_cuda(path: Path, tmp_path: Path) -> None:
    proc = compile_cuda(path, tmp_path)
    assert proc.returncode == 0, f"nvcc failed on {path.name}:\n{proc.stderr[-4000:]}"


def test_every_file_fix_rewrites_still_compiles_for_cuda(tmp_path: Path) -> None:
    """`--fix` on every fixture case: each rewritten CUDA source that nvcc compiled before
    the fix compiles after it (safe fixes keep the CUDA build)."""
    from harness import fix_until_stable

    broken = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and len(p.name) == 4):
        for case in sorted(folder.iterdir()):
            if ".fixed" in case.name or case.suffix not in {".cu", ".cuh"} or not is_cuda_source(case):
                continue
            work = tmp_path / folder.name / case.name
            work.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(case, work)
            if compile_cuda(work, tmp_path).returncode != 0:
                continue  # not self-contained CUDA: nothing to keep
            if fix_until_stable([work], work.parent, ("ALL",), unsafe=False) == 0:
                continue
            proc = compile_cuda(work, tmp_path)
            if proc.returncode != 0:
                broken.append(f"{folder.name}/{case.name}: {proc.stderr.strip().splitlines()[:1]}")
    assert not broken, "\n".join(broken)
