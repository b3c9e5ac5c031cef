"""Rules about code nvcc accepts and hip-clang rejects show it with both compilers.

Fixture files marked `// compile-check: nvcc, hip-clang` are compiled with nvcc (sm_80)
and with hipcc (gfx90a), both in C++17. The file's name says what must happen:

- `bad*` (not `.fixed`): nvcc accepts it, hipcc rejects it, and every line hipcc reports an
  error on carries an `expect:` marker of the fixture's rule (the rejection is the rule's
  shape, not a missing header), or a `rejected-use:` marker where the rule reports the root
  cause on another line and hip-clang fails at each use (a definition every use of which is
  ambiguous);
- `ok*` and `*.fixed*`: both accept it.

The fixtures are CUDA as a project writes it; hipcc reads each CUDA include as the HIP
header hipify puts in its place (`portlint.hipify.HEADERS`, through one-line stand-ins), and
a copy of the file in which each CUDA API name is the one hipify writes
(`cudaKernelNodeParams` -> `hipKernelNodeParams`; lines stay where they are).
Without nvcc (CI has none) or hipcc, the tests skip with the reason; under CI a missing
hipcc fails (see test_hipcc).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness import expectations
from portlint import hipify
from test_hipcc import FIXTURES, _nvcc, compile_hip

MARKER = "compile-check: nvcc, hip-clang"
NVCC_ARCH = "sm_80"
_REJECTED_USE = re.compile(r"//\s*rejected-use:\s*([A-Z][0-9]{3})")
_HIP_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):\d+: error: (?P<text>.*)$", re.MULTILINE)


def _marked_files() -> list[Path]:
    return [p for p in sorted(FIXTURES.glob("*/*.cu")) if MARKER in p.read_text(encoding="utf-8")]


def compile_nvcc(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_nvcc(), f"-arch={NVCC_ARCH}", "-std=c++17", "-c", str(path), "-o", str(tmp_path / "nvcc.o")],
        capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def hipified_includes(tmp_path_factory) -> Path:
    """A folder where `<cuda_fp16.h>` includes `<hip/hip_fp16.h>`, and so on: hipify's renames."""
    folder = tmp_path_factory.mktemp("hipified_includes")
    for cuda, hip in hipify.HEADERS.items():
        (folder / cuda).parent.mkdir(parents=True, exist_ok=True)
        (folder / cuda).write_text(f"#pragma once\n#include <{hip}>\n", encoding="utf-8")
    return folder


def _is_bad(path: Path) -> bool:
    return path.name.startswith("bad") and ".fixed" not in path.name


def _id(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def test_some_fixtures_are_compiled_both_ways() -> None:
    assert _marked_files(), f"no fixture carries '{MARKER}'"


@pytest.mark.parametrize("path", _marked_files(), ids=_id)
def test_nvcc_accepts(path: Path, tmp_path: Path) -> None:
    proc = compile_nvcc(path, tmp_path)
    assert proc.returncode == 0, f"nvcc rejected {_id(path)}:\n{proc.stderr[-4000:]}"


_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


def hipified_names(path: Path, tmp_path: Path) -> Path:
    """A copy of `path`, under the same name, with hipify's renames of CUDA API names."""
    text = _IDENTIFIER.sub(lambda m: hipify.hip_name(m.group(0)) or m.group(0), path.read_text(encoding="utf-8"))
    copy = tmp_path / "hipified" / path.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(text, encoding="utf-8")
    return copy


@pytest.mark.parametrize("path", _marked_files(), ids=_id)
def test_hip_clang_verdict(path: Path, tmp_path: Path, hipified_includes: Path) -> None:
    proc = compile_hip(hipified_names(path, tmp_path), tmp_path, "-std=c++17", f"-I{hipified_includes}")
    if not _is_bad(path):
        assert proc.returncode == 0, f"hipcc rejected {_id(path)}:\n{proc.stderr[-4000:]}"
        return
    assert proc.returncode != 0, f"hipcc accepted {_id(path)}, which the rule says it rejects"
    expected = {line for _, line in expectations(path, path.parent.name)[0]}
    expected |= {number for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                  if any(code == path.parent.name for code in _REJECTED_USE.findall(text))}
    errors = [(int(m["line"]), m["text"]) for m in _HIP_ERROR.finditer(proc.stderr)
              if Path(m["file"]).name == path.name]
    assert errors, f"hipcc's errors are all outside {_id(path)}:\n{proc.stderr[-4000:]}"
    unexpected = [(line, text) for line, text in errors if line not in expected]
    assert not unexpected, f"hipcc rejected {_id(path)} on lines without an expect marker: {unexpected}"
