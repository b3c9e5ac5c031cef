"""M001 proven by the compiler: hip-clang refuses the `__shared__` arrays portlint reports,
with the same byte counts, and builds the same kernels sized for AMD (`ok_fits.cu`).

Uses test_hipcc's compiler helpers: without hipcc the test skips, except under CI.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness import scan
from test_hipcc import ARCH, FIXTURES, MARKER, compile_hip

BAD = FIXTURES / "M001" / "bad.cu"
FITS = FIXTURES / "M001" / "ok_fits.cu"
CLANG_LIMIT = re.compile(r"local memory \((\d+)\) exceeds limit \(65536\) in function '(\w+)'")
REPORTED = re.compile(r"^`(\w+)` has (\d+) bytes of `__shared__` memory")


def test_reported_kernels_are_refused_with_the_same_sizes(tmp_path: Path) -> None:
    proc = compile_hip(BAD, tmp_path)
    assert proc.returncode != 0, f"{BAD.name} compiled for {ARCH}, but portlint reports it"
    refused = sorted((int(size), name) for size, name in CLANG_LIMIT.findall(proc.stderr))
    findings = scan([BAD], BAD.parent, select=("M001",)).findings
    reported = sorted((int(m.group(2)), m.group(1)) for f in findings if (m := REPORTED.match(f.message)))
    assert len(reported) == len(findings) > 0
    # Mangled names (`_Z9transposePfPKfi`) contain the kernel's name.
    assert [size for size, _ in refused] == [size for size, _ in reported], proc.stderr[-2000:]
    assert all(name in mangled for (_, mangled), (_, name) in zip(refused, reported))


def test_the_same_kernels_sized_for_amd_build(tmp_path: Path) -> None:
    assert MARKER in FITS.read_text(encoding="utf-8")  # test_hipcc compiles it too
    proc = compile_hip(FITS, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert scan([FITS], FITS.parent, select=("M001",)).findings == []
