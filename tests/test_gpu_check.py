"""bench/gpu_check.py's parts that need no GPU: the compute capability it reads, the
safe-fixed inputs it prepares, and a compile-only run (nvcc -c) over a fixture."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gpu_check  # noqa: E402

from lanes import execute  # noqa: E402


def test_arch_from_nvidia_smi(tmp_path: Path) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 9.0\necho 8.0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    assert gpu_check.gpu_arch(str(fake)) == "sm_90"
    assert gpu_check.gpu_arch(None) == "sm_90"


def test_prepare_writes_each_safe_fixed_output(tmp_path: Path) -> None:
    assert gpu_check.prepare(tmp_path) == 0
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert "W004/bad.safe-fixed.cu" in written
    for name in written:
        code, fixed = name.split("/")
        original = execute.FIXTURES / code / fixed.replace(".safe-fixed", "")
        assert original.exists() and original.read_bytes() != (tmp_path / name).read_bytes()


def nvcc() -> str:
    found = shutil.which("nvcc") or ("/usr/local/cuda-13.0/bin/nvcc" if Path("/usr/local/cuda-13.0/bin/nvcc").exists() else None)
    if found is None:
        pytest.skip("nvcc not installed")
    return found


def test_dry_run_compiles_a_fixture_and_its_fixed_output(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{Path(nvcc()).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--dry-run", "--only", "W004/bad_sync", "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    summary = json.loads((tmp_path / "gpu_check.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [entry] = summary["results"]
    assert entry["fixture"] == "W004/bad_sync.cu" and entry["original_build"] == "ok" and entry["fixed_build"] == "ok"
    assert entry["fixed"]["file"] == "bad_sync.safe-fixed.cu"
    assert summary["arch"] == "sm_90" and summary["dry_run"] is True
