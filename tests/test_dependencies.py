"""Requirements files and pyproject.toml: discovery, exact locations, comments, broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from portlint import engine
from portlint.config import Config
from portlint.discover import language_of


@pytest.mark.parametrize("name, language", [
    ("requirements.txt", "requirements"),
    ("requirements-dev.txt", "requirements"),
    ("requirements/rocm.txt", "requirements"),
    ("dev-requirements.txt", "requirements"),
    ("requirements.in", "requirements"),
    ("constraints.txt", "requirements"),
    ("pyproject.toml", "pyproject"),
    ("MANIFEST.in", None),
    ("include/config.h.in", None),
    ("notes.txt", None),
    ("Cargo.toml", None),
])
def test_language_of_dependency_files(name: str, language: str | None) -> None:
    assert language_of(Path(name)) == language


def _scan(tmp_path: Path, name: str, text: str) -> engine.ScanResult:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return engine.scan([tmp_path], Config(root=tmp_path, select=("Y003",)))


def _where(result: engine.ScanResult) -> list[tuple[int, int, int, int]]:
    return [(f.location.start_line, f.location.start_column, f.location.end_line, f.location.end_column)
            for f in result.findings]


def test_requirement_location_is_the_requirement_without_options_or_comment(tmp_path: Path) -> None:
    result = _scan(tmp_path, "requirements.txt",
                   "torch==2.5.1\n  tríton>=2.1\n"  # not triton: the name differs
                   "  triton >= 2.1 --hash=sha256:00  # fast kernels\n"
                   "pytorch-triton-rocm \\\n    >=3.0\n")
    assert _where(result) == [(3, 3, 3, 16), (4, 1, 5, 10)]
    assert result.findings[0].matched == "triton >= 2.1"


def test_pyproject_location_is_the_string_in_its_table(tmp_path: Path) -> None:
    result = _scan(tmp_path, "pyproject.toml",
                   '[project]\nname = "x"\ndependencies = ["torch", "triton>=2.1"]  # "triton"\n'
                   '[project.optional-dependencies]\n"rocm" = [\n  """pytorch-triton-rocm""",\n]\n'
                   '[tool.other]\ndependencies = ["triton"]\n')
    assert _where(result) == [(3, 26, 3, 39), (6, 3, 6, 28)]


def test_suppression_comments_in_requirements_and_pyproject(tmp_path: Path) -> None:
    requirements = _scan(tmp_path / "a", "requirements.txt",
                         "triton>=2.1  # portlint: ignore[Y003]\n"
                         "# portlint: ignore[unpinned-triton]\ntriton\n"
                         "https://x.org/t.whl#portlint:ignore\ntriton<3\n")
    assert [f.location.start_line for f in requirements.findings] == [5] and requirements.suppressed == 2
    pyproject = _scan(tmp_path / "b", "pyproject.toml",
                      '[project]\ndependencies = [\n  "triton>=2.1",  # portlint: ignore[Y003]\n'
                      '  "triton<3", "x; extra == \'# portlint: ignore\'",\n]\n')
    # A `#` inside a TOML string is no comment: the second line stays reported.
    assert [f.location.start_line for f in pyproject.findings] == [4] and pyproject.suppressed == 1


def test_broken_pyproject_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    result = _scan(tmp_path, "pyproject.toml", '[project]\ndependencies = ["triton>=2.1"\n')
    assert result.findings == []
    assert [p.message.split(":")[0] for p in result.problems] == ["could not parse"]
    assert not result.has_internal_error
