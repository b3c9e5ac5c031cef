"""Code behind a switch nothing in the project sets is compiled by no build: its findings go,
and they stay wherever the project sets the switch (a header, a build file, a script, a
configure template, a CI recipe) or a toolchain may."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from portlint import engine
from portlint.config import Config

KERNEL = """\
#include <hip/hip_runtime.h>
{include}
__device__ float lane_total(float v) {{
#ifdef {switch}
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);
#endif
  return v;
}}
"""


def _scan(tmp_path: Path, switch: str = "APP_SHUFFLE_TOTALS", include: str = "", **files: str) -> list[str]:
    (tmp_path / "reduce.cu").write_text(KERNEL.format(switch=switch, include=include), encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("W001",)))
    assert not result.problems, [str(p) for p in result.problems]
    return [f"{Path(f.path).name}:{f.location.start_line}" for f in result.findings]


def test_a_switch_nothing_sets_leaves_its_code_unreported(tmp_path: Path) -> None:
    assert _scan(tmp_path, **{"notes.md": "APP_SHUFFLE_TOTALS is not a build description\n"}) == []


def test_a_switch_named_only_in_a_comment_is_still_unset(tmp_path: Path) -> None:
    assert _scan(tmp_path, include="// #define APP_SHUFFLE_TOTALS") == []


@pytest.mark.parametrize("name, text", [
    ("settings.h", "#define APP_SHUFFLE_TOTALS 1\n"),
    ("CMakeLists.txt", "cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX HIP)\n"
                       "add_compile_definitions(APP_SHUFFLE_TOTALS)\n"),
    ("config.h.in", "#cmakedefine APP_SHUFFLE_TOTALS\n"),
    ("setup.py", "from setuptools import Extension, setup\n"
                 "setup(ext_modules=[Extension('r', ['reduce.cu'], define_macros=[('APP_SHUFFLE_TOTALS', None)])])\n"),
    ("scripts/build_rocm.sh", "hipcc -DAPP_SHUFFLE_TOTALS -c reduce.cu\n"),
    ("build_tools/flags.py", "def nvcc_flags():\n    return ['-O3', '-DAPP_SHUFFLE_TOTALS']\n"),
    (".github/workflows/ci.yml", "env:\n  CXXFLAGS: -DAPP_SHUFFLE_TOTALS\n"),
    ("configure.ac", "AC_DEFINE([APP_SHUFFLE_TOTALS], [1], [shuffle totals])\n"),
    ("values.h", "inline int shuffle_totals() { return APP_SHUFFLE_TOTALS; }  // a value some header gives it\n"),
    ("MAKE_INC/make.gpu", "CFLAGS += -DAPP_SHUFFLE_TOTALS\n"),  # a make include named by convention
    ("README.md", "For GPU totals, configure with `-DCMAKE_C_FLAGS=-DAPP_SHUFFLE_TOTALS`.\n"),
    ("INSTALL", "Pass -DAPP_SHUFFLE_TOTALS to enable the shuffle totals.\n"),
])
def test_a_switch_the_project_sets_somewhere_keeps_its_findings(tmp_path: Path, name: str, text: str) -> None:
    assert _scan(tmp_path, **{name: text}) == ["reduce.cu:5"]


@pytest.mark.parametrize("switch", ["NDEBUG", "__AVX2__", "linux", "CUB_VERSION"])
def test_names_toolchains_or_libraries_set_are_no_project_switches(tmp_path: Path, switch: str) -> None:
    assert _scan(tmp_path, switch=switch) == ["reduce.cu:5"]


def test_a_scan_of_a_folder_below_the_root_keeps_them(tmp_path: Path) -> None:
    """The files that may set a switch are the project's, not the folder's: a scan of `src/`
    does not see them, so it leaves the gated findings as they are."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "reduce.cu").write_text(KERNEL.format(switch="APP_SHUFFLE_TOTALS", include=""), encoding="utf-8")
    result = engine.scan([tmp_path / "src"], Config(root=tmp_path, select=("W001",)))
    assert [f.location.start_line for f in result.findings] == [5]


def test_a_script_the_project_ignores_does_not_set_a_switch(tmp_path: Path) -> None:
    found = _scan(tmp_path, **{".gitignore": "local/\n", "local/build.sh": "hipcc -DAPP_SHUFFLE_TOTALS reduce.cu\n"})
    assert found == []
