"""P006: before the port, the project's own switch for its CUDA path, set by the build only
where it finds CUDA, leaves the GPU code it gates out of a ROCm build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from portlint import engine
from portlint.config import Config
from portlint.finding import Severity

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "P006"


def _scan(root: Path):
    result = engine.scan([root], Config(root=root, select=("P006",)))
    assert not result.problems, [str(p) for p in result.problems]
    return sorted(result.findings, key=lambda f: (f.path, f.location.start_line))


def test_one_switch_is_one_warning_with_each_other_file_a_note_that_points_back(tmp_path: Path) -> None:
    root = tmp_path / "ops"
    shutil.copytree(FIXTURES / "bad_tf_op", root)
    clip, smooth = _scan(root)
    # `ops/clip.cc` comes first: it carries the warning, `ops/smooth.cc` the note.
    assert (Path(clip.path).name, clip.severity) == ("clip.cc", Severity.WARNING)
    assert (Path(smooth.path).name, smooth.severity) == ("smooth.cc", Severity.NOTE)
    assert any(Path(r.location.path).name == "smooth.cc" for r in clip.related)
    assert smooth.related[0].location == clip.location


def test_the_switch_set_on_the_rocm_path_as_well_is_silent(tmp_path: Path) -> None:
    root = tmp_path / "ops"
    shutil.copytree(FIXTURES / "bad_tf_op", root)
    build = root / "CMakeLists.txt"
    # The port's first step: the GPU path on either vendor's toolkit.
    build.write_text(build.read_text().replace(
        "find_package(CUDA QUIET)\nif(CUDA_FOUND)",
        "find_package(CUDA QUIET)\nfind_package(hip QUIET)\nif(CUDA_FOUND OR hip_FOUND)\n"
        "  enable_language(HIP)"))
    assert _scan(root) == []


@pytest.mark.parametrize("header", ["hip/hip_runtime.h", "rocm/include/hip/hip_runtime_api.h"])
def test_a_project_whose_code_includes_hips_runtime_has_begun_its_port(tmp_path: Path, header: str) -> None:
    # A file that includes HIP's runtime header (as written, or under a folder of the
    # include path that starts higher up) is HIP code: the project chose what its switch leaves out.
    root = tmp_path / "ops"
    shutil.copytree(FIXTURES / "bad_tf_op", root)
    (root / "ops" / "gpu_vendor.h").write_text(f'#pragma once\n#include "{header}"\n')
    assert _scan(root) == []
