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
