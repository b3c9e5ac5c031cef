"""Files named on the command line (what a pre-commit hook passes) give the findings they give
in a full scan: the project's other files are read as context for the cross-file rules, and
never reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness import scan

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _by_file(result) -> dict[str, set[tuple[int, str]]]:
    found: dict[str, set[tuple[int, str]]] = {}
    for f in result.findings:
        found.setdefault(Path(f.path).resolve().as_posix(), set()).add((f.location.start_line, f.code))
    return found


@pytest.mark.parametrize("project", ["demo", "projects/never_ported"])
def test_each_file_alone_gives_its_findings_of_a_full_scan(project: str, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(FIXTURES / project, root)
    (root / ".git").mkdir()
    full = _by_file(scan([root], root))
    assert full
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        alone = _by_file(scan([path], root))
        key = path.resolve().as_posix()
        assert alone.get(key, set()) == full.get(key, set()), path.relative_to(root)
        assert set(alone) <= {key}, "context files are read, not reported"


def test_a_header_macro_reaches_a_file_scanned_alone(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "warp.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (tmp_path / "k.cu").write_text('#include "warp.h"\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n')
    result = scan([tmp_path / "k.cu"], tmp_path)
    assert [(Path(f.path).name, f.location.start_line, f.code) for f in result.findings] == [("k.cu", 2, "W001")]
    assert len(result.files) == 1, "only the named file counts as scanned"


def test_a_file_scanned_alone_leaves_the_cache_right_for_a_full_scan(tmp_path: Path) -> None:
    # Context files are analysed for the project rules only: their results must not be
    # cached as if every rule had run.
    from portlint import engine
    from portlint.config import Config

    root = tmp_path / "p"
    root.mkdir()
    (root / ".git").mkdir()
    shutil.copy(FIXTURES / "C003" / "bad.cmake", root / "CMakeLists.txt")
    (root / "a.cu").write_text("__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n")
    cache = tmp_path / "cache"
    config = Config(root=root)
    full = engine.scan([root], config, cache_dir=tmp_path / "fresh").findings
    engine.scan([root / "a.cu"], config, cache_dir=cache)
    again = engine.scan([root], config, cache_dir=cache).findings
    assert [(f.path, f.code, f.location.start_line) for f in again] == [
        (f.path, f.code, f.location.start_line) for f in full]
