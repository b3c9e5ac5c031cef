"""Reporters: one module per output format, each `render(result, context) -> str`."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("text", "concise", "json", "sarif", "github")


@dataclass(frozen=True)
class ReportContext:
    root: Path  # the project root: SARIF URIs are relative to it
    fixed: int = 0  # findings fixed by --fix in this run
    not_fixed: frozenset[str] = frozenset()  # files --fix left alone: their fixes are not "fixable"
    statistics: bool = False
    color: bool = False


def render(output_format: str, result, context: ReportContext) -> str:
    # Only the format asked for is imported: the SARIF renderer alone costs ~80 ms (sarif-om, attrs).
    module_name, function = _RENDERERS[output_format]
    if context.statistics and output_format in ("text", "concise"):
        module_name, function = "text", "render_statistics"
    module = importlib.import_module(f"portlint.report.{module_name}")
    return getattr(module, function)(result, context)


_RENDERERS = {
    "text": ("text", "render"),
    "concise": ("text", "render_concise"),
    "json": ("json_report", "render"),
    "sarif": ("sarif", "render"),
    "github": ("github", "render"),
}
