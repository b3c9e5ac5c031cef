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
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    bad = {case.id for case in execute.driven_cases() if case.is_bad}
    assert set(manifest["fixtures"]) == bad
    # W003's 64-bit vote variables are a safe fix; W004's width 32 -> warpSize is not (a
    # 32-lane group may be meant), so its fixture has no safe-fixed output to compare.
    assert manifest["fixtures"]["W003/bad.cu"]["safe_fixed"] == "bad.safe-fixed.cu"
    assert manifest["fixtures"]["W004/bad.cu"]["safe_fixed"] is None
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.safe-fixed.*"))
    assert written == sorted(f"{fid.split('/')[0]}/{e['safe_fixed']}" for fid, e in manifest["fixtures"].items() if e["safe_fixed"])
    for name in written:
        code, fixed = name.split("/")
        original = execute.FIXTURES / code / fixed.replace(".safe-fixed", "")
        assert original.exists() and original.read_bytes() != (tmp_path / name).read_bytes()


def test_prepared_inputs_that_no_longer_match_are_stale(tmp_path: Path) -> None:
    assert gpu_check.prepare(tmp_path) == 0
    [case] = [case for case in execute.driven_cases() if case.id == "W003/bad.cu"]
    assert gpu_check.fixed_variant(case, tmp_path, tmp_path / "scratch").kind == "safe-fixed (prepared)"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["fixtures"]["W003/bad.cu"]["sha256"] = "0" * 64
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    stale = gpu_check.fixed_variant(case, tmp_path, tmp_path / "scratch")
    assert stale.file is None and "run --prepare again" in stale.problem


def nvcc() -> str:
    found = shutil.which("nvcc") or ("/usr/local/cuda-13.0/bin/nvcc" if Path("/usr/local/cuda-13.0/bin/nvcc").exists() else None)
    if found is None:
        pytest.skip("nvcc not installed")
    return found


def test_dry_run_compiles_a_fixture_and_its_fixed_output(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{Path(nvcc()).parent}{os.pathsep}{os.environ['PATH']}")
    inputs = tmp_path / "inputs"
    assert gpu_check.prepare(inputs) == 0
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--dry-run", "--only", "bad_sync.", "--inputs", str(inputs), "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    summary = json.loads((tmp_path / "gpu_check.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = {entry["fixture"]: entry for entry in summary["results"]}
    assert set(entries) == {"W003/bad_sync.cu", "W004/bad_sync.cu"}
    w003, w004 = entries["W003/bad_sync.cu"], entries["W004/bad_sync.cu"]
    assert w003["original_build"] == "ok" and w003["fixed_build"] == "ok"
    assert w003["fixed"] == {"file": "bad_sync.safe-fixed.cu", "kind": "safe-fixed (prepared)"}
    # No safe fix: the original is built, nothing is compared for the fix side, and it says so.
    assert w004["original_build"] == "ok" and w004["fixed"]["file"] is None
    assert w004["fixed_build"] == "not compared: no safe fix applies (prepared)"
    assert summary["bad_without_safe_fix"] == ["W004/bad_sync.cu"]
    assert "1 bad fixtures with no safe fix" in proc.stdout
    assert summary["arch"] == "sm_90" and summary["dry_run"] is True
