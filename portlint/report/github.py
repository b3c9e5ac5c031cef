"""GitHub Actions workflow commands: one annotation per finding."""

from __future__ import annotations

from portlint.report.text import other_places
from portlint.ruledocs import load_all


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result, context) -> str:
    docs = load_all()
    lines = []
    for f in result.findings:
        loc = f.location
        level = {"error": "error", "warning": "warning", "note": "notice"}[f.severity.value]
        title = f"{f.code} {docs[f.code].name}"
        if loc is None:  # about the machine (`portlint doctor`): an annotation without a file
            props = f"title={_escape_property(title)}"
        elif not loc.has_region:
            props = f"file={_escape_property(loc.path)},title={_escape_property(title)}"
        else:
            props = (
                f"file={_escape_property(loc.path)},line={loc.start_line},col={loc.start_column},"
                f"endLine={loc.end_line},endColumn={loc.end_column},title={_escape_property(title)}"
            )
        lines.append(f"::{level} {props}::{_escape_data(f.message + other_places(f) + ' ' + f.fix.title + '.')}")
    return "\n".join(lines) + ("\n" if lines else "")
