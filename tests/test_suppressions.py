"""Suppression comments, in the forms users of ruff and clang-tidy already know."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import assert_findings

MASK = "__shfl_down_sync(0xffffffff, v, 1)"


@pytest.mark.parametrize(
    "src, codes",
    [
        (f"float a = {MASK};  // portlint: ignore[W002]\n", ()),
        (f"float a = {MASK};  // portlint: ignore[W]\n", ()),
        (f"float a = {MASK};  // portlint: ignore\n", ()),
        (f"float a = {MASK};  // portlint: ignore[W001]\n", ("W002",)),
        (f"// portlint: ignore[W002]\nfloat a = {MASK};\nfloat b = {MASK};\n", ("W002",)),
        (f"float a = {MASK};\n/* portlint: ignore-file[W002] */\nfloat b = {MASK};\n", ()),
        (f"float a = {MASK};  // NOLINT(portlint-W002)\n", ()),
        (f"float a = {MASK};  // NOLINT(bugprone-*, portlint-*)\n", ()),
        (f"float a = {MASK};  // NOLINT(bugprone-branch-clone)\n", ("W002",)),
        (f"float a = {MASK};  // NOLINT\n", ()),
        (f"// NOLINTNEXTLINE(portlint-W002)\nfloat a = {MASK};\nfloat b = {MASK};\n", ("W002",)),
        (f"// NOLINT(portlint-W002)\nfloat a = {MASK};\n", ("W002",)),  # NOLINT covers its own line only
        (f"float a = {MASK};  // portlint: ignore[narrow-full-mask]\n", ()),
        # a `//` comment ending a macro's line is part of the macro's text in the parse tree
        ('#define LANE(R) asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(R))  // portlint: ignore[A001]\n', ()),
        ('#define LANE(R) \\\n  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(R))  // NOLINT(portlint-A001)\n', ()),
        ('#define LANE(R) asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(R))  // portlint: ignore[W002]\n', ("A001",)),
    ],
)
def test_cuda_comment_forms(src: str, codes: tuple[str, ...], tmp_path: Path) -> None:
    assert_findings(src, "cuda", *codes, tmp_path=tmp_path)


def test_suppressed_findings_are_counted(tmp_path: Path) -> None:
    result = assert_findings(f"float a = {MASK};  // portlint: ignore[W002]\n", "cuda", tmp_path=tmp_path)
    assert result.suppressed == 1


def test_per_file_ignores(tmp_path: Path) -> None:
    assert_findings(f"float a = {MASK};\n", "cuda", tmp_path=tmp_path,
                    per_file_ignores={"*.cu": ("W002",)})
    assert_findings(f"float a = {MASK};\n", "cuda", "W002", tmp_path=tmp_path,
                    per_file_ignores={"vendor/**": ("W002",)})


# Files whose findings stand on lines of every kind: C with macros continued by backslashes,
# CMake, Python (a build script), and a line that already silences another rule.
SILENCED = ["W002/bad.cu", "A001/bad_macros.cu", "C003/bad.cmake", "R001/bad.py"]


@pytest.mark.parametrize("fixture", SILENCED)
def test_the_editors_suppression_silences_each_finding(fixture: str, tmp_path: Path) -> None:
    """`suppress.silenced` (the language server's quick fix), applied to each finding's line
    in turn, silences it: the file ends with no findings and parses as well as before."""
    from portlint import suppress
    from portlint.engine import read_source
    from portlint.discover import Candidate, language_of
    from portlint.source import count_syntax_errors

    from harness import scan

    source = Path(__file__).resolve().parent.parent / "fixtures" / fixture
    path = tmp_path / ("CMakeLists.txt" if source.suffix == ".cmake" else source.name)
    path.write_bytes(source.read_bytes())
    language = language_of(path)
    errors_before = count_syntax_errors(language, path.read_bytes())
    first = scan([path], tmp_path).findings
    assert first, "the fixture has findings to silence"
    for _ in range(len(first) + 1):
        findings = scan([path], tmp_path).findings
        if not findings:
            break
        f = findings[0]
        lines = path.read_bytes().split(b"\n")
        line = lines[f.location.start_line - 1]
        silenced = suppress.silenced(line, language, f.code)
        assert silenced is not None, (fixture, line)
        lines[f.location.start_line - 1] = silenced
        path.write_bytes(b"\n".join(lines))
    else:
        raise AssertionError(f"{fixture}: still {[(f.code, f.location.start_line) for f in findings]}")
    assert count_syntax_errors(language, path.read_bytes()) <= errors_before
    assert not isinstance(read_source(Candidate(path, language, True)), str)


def test_the_editors_suppression_joins_a_list_already_there() -> None:
    from portlint import suppress

    line = f"float a = {MASK};  // portlint: ignore[W001]".encode()
    assert suppress.silenced(line, "cuda", "W002") == f"float a = {MASK};  // portlint: ignore[W001, W002]".encode()
    assert suppress.silenced(b"x = 1  \\", "python", "R001") is None  # no comment can end a continued line
