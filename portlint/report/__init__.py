"""Reporters: one module per output format, each `render(result, context) -> str`."""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("text", "concise", "json", "sarif", "github")


@dataclass(unsafe_hash=True)
class ReportContext:
    root: Path  # the project root (configuration, baseline identities)
    fixed: int = 0  # findings fixed by --fix in this run
    not_fixed: frozenset[str] = frozenset()  # files --fix left alone: their fixes are not "fixable"
    statistics: bool = False
    color: bool = False
    quiet: bool = False  # findings only: no summary line
    # SARIF: URIs are relative to this directory (the repository root) when set, else `root`.
    uri_root: Path | None = None
    max_results: int = 5000  # SARIF results per run; 0 for no cap
    sarif_category: str = ""  # SARIF `automationDetails.id` (`--sarif-category`); empty: none
    doctor: bool = False  # findings about the machine (`portlint doctor`), not files
    # The HTML report's provenance, filled in by the command (renderers read no clock or git).
    generated: str = ""  # when, ISO 8601 in UTC
    commit: str = ""  # the scanned checkout's commit, if a git one
    configuration: str = ""  # the configuration file and the selection, in one line


# A file name that is not valid UTF-8 reaches Python as str with lone surrogates
# (surrogateescape: byte 0xff is U+DCFF); no UTF-8 encoder accepts them.
_SURROGATE = re.compile("[\ud800-\udfff]")


def to_json_text(payload) -> str:
    """JSON with non-ASCII text kept readable, and each lone surrogate written as a `\\udcXX`
    escape: the document stays valid UTF-8, and `os.fsencode(json.loads(...))` gives the
    file name's bytes back."""
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # outside strings JSON is ASCII


def printable(text: str) -> str:
    """`text` with each undecodable file-name byte shown as `\\xff`, for pages that must be UTF-8."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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
