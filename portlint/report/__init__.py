"""Reporters: one module per output format, each `render(result, context) -> str`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FORMATS = ("text", "concise", "json", "sarif", "github")


@dataclass(frozen=True)
class ReportContext:
    root: Path  # the project root: SARIF URIs are relative to it
    fixed: int = 0  # findings fixed by --fix in this run
    statistics: bool = False
    color: bool = False


def render(output_format: str, result, context: ReportContext) -> str:
    from portlint.report import github, json_report, sarif, text

    if context.statistics and output_format in ("text", "concise"):
        return text.render_statistics(result, context)
    renderers = {
        "text": text.render,
        "concise": text.render_concise,
        "json": json_report.render,
        "sarif": sarif.render,
        "github": github.render,
    }
    return renderers[output_format](result, context)
