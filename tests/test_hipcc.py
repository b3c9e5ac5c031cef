"""Suggested rewrites build on ROCm: fixture files marked `// compile-check: hipcc`
(fixed outputs and ok cases) are compiled with hipcc for gfx90a.

hipcc is Debian's (`.ci/run` installs it). Without it these tests skip with the reason
shown, except under CI (`CI` set), where a missing compiler is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
