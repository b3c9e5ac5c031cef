"""X002 where C++20 lets `typename` go: a member's type is a finding unless the project's
build asks for C++20 or later; a declaration in a function body is one in every standard."""

from __future__ import annotations

from pathlib import Path

import pytest

from portlint import engine
from portlint.config import Config

HEADER = """\
template <typename T> struct Traits { typedef float accum_type; };

template <typename T>
struct Scaler {
  typedef Traits<T>::accum_type accum;
  __device__ T apply(T x) const {
    Traits<T>::accum_type wide = x;
    return T(wide);
  }
};
"""


def _lines(tmp_path: Path, **build: str) -> list[int]:
    (tmp_path / "scaler.cuh").write_text(HEADER, encoding="utf-8")
    for name, text in build.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = engine.scan([tmp_path], Config(root=tmp_path, select=("X002",)))
    return sorted(f.location.start_line for f in result.findings)


@pytest.mark.parametrize("name, text", [
    ("CMakeLists.txt", "project(s LANGUAGES CXX HIP)\nset(CMAKE_CXX_STANDARD 17)\n"),
    ("setup.py", "extra_compile_args = {'nvcc': ['-std=c++17']}\n"),
])
def test_a_member_is_a_finding_in_a_cxx17_build(tmp_path: Path, name: str, text: str) -> None:
    assert _lines(tmp_path, **{name: text}) == [5, 7]


@pytest.mark.parametrize("name, text", [
    ("CMakeLists.txt", "project(s LANGUAGES CXX HIP)\nset(CMAKE_HIP_STANDARD 20)\n"),
    ("CMakeLists.txt", "project(s LANGUAGES CXX HIP)\ntarget_compile_features(s PUBLIC cxx_std_20)\n"),
    ("setup.py", "extra_compile_args = {'nvcc': ['-std=c++2a']}\n"),
    ("meson.build", "project('s', 'cpp', default_options: ['cpp_std=c++20'])\n"),
])
def test_a_cxx20_build_leaves_the_member_and_keeps_the_body(tmp_path: Path, name: str, text: str) -> None:
    assert _lines(tmp_path, **{name: text}) == [7]
