"""Reporters: one module per output format, each `render(result, context) -> str`."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("text", "concise", "json", "sarif", "github")


@dataclass(frozen=True)
class ReportContext:
    root: Path  # the project root (configuration, baseline identities)
    fixed: int = 0  # findings fixed by --fix in this run
    statistics: bool = False
    color: bool = False
    quiet: bool = False  # findings only: no summary line
    # SARIF: URIs are relative to this directory (the repository root) when set, else `root`.
    uri_root: Path | None = None
    max_results: int = 5000  # SARIF results per run; 0 for no cap
    doctor: bool = False  # findings about the machine (`portlint doctor`), not files
    # The HTML report's provenance, filled in by the command (renderers read no clock or git).
    generated: str = ""  # when, ISO 8601 in UTC
    commit: str = ""  # the scanned checkout's commit, if a git one
    configuration: str = ""  # the configuration file and the selection, in one line


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
