"""What a check reports.

A check yields `Finding`s built with `finding(source, start, end, message, fix)`; the
engine fills in the rule `code` and the default severity from the rule's front matter.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from portlint.fix import Fix
from portlint.source import Location, SourceFile


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "note": 1}[self.value]

    @classmethod
    def parse(cls, text: str) -> "Severity":
        aliases = {"e": "error", "w": "warning", "n": "note", "warn": "warning", "info": "note"}
        value = aliases.get(text.lower(), text.lower())
        return cls(value)


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (SARIF `relatedLocations`)."""

    location: Location
    message: str


@dataclass(frozen=True)
class Finding:
    # None for a finding about the machine rather than a file (`portlint doctor`).
    location: Location | None
    message: str
    fix: Fix
    code: str = ""
    severity: Severity | None = None
    related: tuple[Related, ...] = ()
    # Text that identifies the finding independent of its line (for fingerprints).
    matched: str = ""
    file_digest: str = field(default="", compare=False)
    # Line/column regions of `fix.edits`, in the same order (SARIF `fixes` need them).
    edit_locations: tuple[Location, ...] = ()

    @property
    def path(self) -> str:
        return self.location.path if self.location is not None else ""


SAME_HAZARD = "the same hazard, again"  # the message of a use folded into its first finding


def root_cause(f: Finding) -> tuple:
    """What `f` shares with the other findings of its root cause: one rule, one file, one
    message (the same culprit: a mask, an intrinsic, a library call, a flag). A finding with
    related locations of its own (a constant and its uses) is a root cause by itself."""
    if f.location is None or f.related:
        return (id(f),)
    return (f.code, f.path, f.message, f.severity, f.fix.title, f.fix.applicability)


def count_root_causes(findings) -> int:
    return len({root_cause(f) for f in findings})


def group_root_causes(findings: list[Finding]) -> list[Finding]:
    """One finding per root cause (`--group-root-causes`): the first finding of each, the
    others its related locations, every edit kept so `--fix` still rewrites each place."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        groups.setdefault(root_cause(f), []).append(f)
    out = []
    for members in groups.values():
        first, rest = members[0], members[1:]
        if not rest:
            out.append(first)
            continue
        fix = replace(first.fix, edits=tuple(e for m in members for e in m.fix.edits))
        out.append(replace(
            first, fix=fix,
            related=tuple(Related(m.location, SAME_HAZARD) for m in rest),
            edit_locations=tuple(loc for m in members for loc in m.edit_locations),
        ))
    return out


def finding(
    source: SourceFile,
    start: int,
    end: int,
    message: str,
    fix: Fix,
    *,
    severity: Severity | None = None,
    related: tuple[Related, ...] = (),
) -> Finding:
    """Build a finding for bytes [start, end) of `source`."""
    return Finding(
        location=source.location(start, end),
        message=message,
        fix=fix,
        severity=severity,
        related=related,
        matched=source.data[start:end].decode("utf-8", errors="replace"),
        file_digest=source.digest,
        edit_locations=tuple(source.location(e.start, e.end) for e in fix.edits),
    )


def at_node(source: SourceFile, node, message: str, fix: Fix, **kwargs) -> Finding:
    return finding(source, node.start_byte, node.end_byte, message, fix, **kwargs)
