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


@dataclass(unsafe_hash=True)
class Related:
    """Another place that explains a finding (SARIF `relatedLocations`)."""

    location: Location
    message: str


@dataclass(unsafe_hash=True)
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
    # About code only a ROCm build compiles on purpose (a shim that hard-codes a hazard
    # itself): kept there although the rule's scope leaves the port alone.
    in_port: bool = False
    # Warp helpers of other files whose code alone decides this finding (W001 beside a call
    # of a header's `warpReduceMax`): the project pass judges it by them
    # (`logical_warp.judge_by_helpers`).
    open_helpers: tuple[str, ...] = field(default=(), compare=False)
    # This file's warp helpers, called only from other files, whose callers decide it (W001,
    # W004 in a header's `warpReduceSum`).
    open_callers: tuple[str, ...] = field(default=(), compare=False)
    # Feature flags a gate defines that its file never tests (P002): the project pass judges
    # it by the files that test them (`engine._judge_flags_by_other_files`).
    open_flags: tuple[str, ...] = field(default=(), compare=False)
    # The project's switches the finding stands on (P006's `GOOGLE_CUDA`): the project pass
    # keeps it only where a build file or build description sets them and no source defines
    # them (`engine._keep_switches_the_build_sets`), one warning per switch.
    open_switches: tuple[str, ...] = field(default=(), compare=False)
    # Code hip-clang rejects only before C++20 (X002's `typename` in a member): the project
    # pass drops it where the build asks for C++20 (`engine._drop_where_the_build_asks_for_cxx20`).
    open_standard: bool = field(default=False, compare=False)
    # Code hip-clang checks only where its template is instantiated (W002's mask
    # `static_assert` in a call whose arguments depend on a template parameter): a template
    # nothing instantiates leaves it moot (`engine._note_in_templates_nothing_instantiates`).
    dependent: bool = field(default=False, compare=False)
    # A note `group_root_causes` leaves in a file other than its root cause's (a header's
    # `WARP_SIZE` used here): the root cause it points back to (`root_cause` of its finding).
    companion_of: tuple = field(default=(), compare=False)
    # The place a root cause is written (a constant's definition, its uses related): it leads
    # its group, even with one use, which points back at it.
    root: bool = field(default=False, compare=False)

    @property
    def path(self) -> str:
        return self.location.path if self.location is not None else ""


SAME_HAZARD = "the same hazard, again"  # the message of a use folded into its first finding


def root_cause(f: Finding) -> tuple:
    """Where `f` belongs: a finding that points at one other place (a use of a hard-wired
    constant, its definition) belongs to that place, as does the finding there (the
    definition, its uses related); any other finding to itself. `root_cause_groups` then
    joins the findings that say the same of one file."""
    if f.location is None:
        return (id(f),)
    if f.companion_of:
        return f.companion_of
    if len(f.related) == 1 and not f.root:
        anchor = f.related[0].location
        return (f.code, anchor.path, anchor.start_byte)
    return (f.code, f.path, f.location.start_byte)


def _same_culprit(f: Finding) -> tuple | None:
    """One rule, one file, one message: the same culprit (a mask, an intrinsic, a library, a
    macro) again, whatever each place's own fix or related places are (`-lcublas` on three
    link lines, one `__half2` operator twice)."""
    if f.location is None:
        return None
    return (f.code, f.path, f.message, f.severity, f.fix.applicability)


def root_cause_groups(findings) -> list[list[Finding]]:
    """The findings by root cause, in order of each group's first finding."""
    group_of: dict[tuple, int] = {}
    groups: list[list[Finding]] = []
    for f in findings:
        keys = [k for k in (root_cause(f), _same_culprit(f)) if k is not None]
        index = next((group_of[k] for k in keys if k in group_of), None)
        if index is None:
            index = len(groups)
            groups.append([])
        groups[index].append(f)
        for k in keys:
            group_of.setdefault(k, index)
    # (A finding whose two keys lead to two groups already apart joins the first: rare, and
    # each group is still one cause's part.)
    return groups


def place_count(f: Finding) -> int:
    """The places a finding covers for `--statistics`: itself and its related locations; none
    for a companion note, whose places its root cause's finding lists already."""
    return 0 if f.companion_of else 1 + len(f.related)


def count_root_causes(findings) -> int:
    return len(root_cause_groups(findings))


def group_root_causes(findings: list[Finding]) -> list[Finding]:
    """One finding per root cause (`--group-root-causes`): the first finding of each, the
    others its related locations, every edit kept so `--fix` still rewrites each place. In
    each other file with places of a root cause (a header's constant used here), a note at the
    first of them: the file's other places and the root cause related, so that an editor, or
    a pull request's code-scanning view, showing that file shows it too."""
    out = []
    for members in root_cause_groups(findings):
        first, rest = members[0], members[1:]
        if not rest:
            out.append(first)
            continue
        # The finding at the anchor (a constant's definition) leads, if there is one.
        first = next((m for m in members if m.root), None) or next(
            (m for m in members if len(m.related) > 1 or not m.related), first)
        rest = [m for m in members if m is not first]
        known = {(first.path, first.location.start_byte)} | {
            (r.location.path, r.location.start_byte) for r in first.related if r.location is not None}
        related = list(first.related)
        for m in rest:
            for r in (Related(m.location, SAME_HAZARD), *m.related):
                if r.location is not None and (r.location.path, r.location.start_byte) not in known:
                    known.add((r.location.path, r.location.start_byte))
                    related.append(r)
        fix = replace(first.fix, edits=tuple(e for m in (first, *rest) for e in m.fix.edits))
        if any(m.fix.title != first.fix.title for m in rest) and first.fix.edits:
            # Each place's own rewrite (`__hadd2(a[0], b[0])`, then `a[1]`): all are applied.
            fix = replace(fix, title=f"{first.fix.title}, and the same at {len(rest)} more "
                                     f"place{'s' if len(rest) > 1 else ''}")
        leader = replace(first, fix=fix, related=tuple(related),
                         edit_locations=tuple(loc for m in (first, *rest) for loc in m.edit_locations))
        out.append(leader)
        # (Only where the leader is the place the others point at, a definition: a group of
        # launches that share a header's block size has no finding there to point back to.)
        out.extend(_companions(leader, [m for m in rest if m.path != first.path and len(m.related) == 1
                                        and m.related[0].location == first.location]))
    out.sort(key=lambda f: (f.path, f.location.start_byte if f.location else 0, f.code))
    return out


def _companions(leader: Finding, elsewhere: list[Finding]) -> list[Finding]:
    """A note per file of `elsewhere` (places of `leader`'s root cause in other files), at its
    first place: the leader (which keeps every edit and the severity) and the file's other
    places related."""
    by_file: dict[str, list[Finding]] = {}
    for m in elsewhere:
        by_file.setdefault(m.path, []).append(m)
    notes = []
    for places in by_file.values():
        places.sort(key=lambda m: m.location.start_byte)
        head = places[0]
        notes.append(replace(
            head, severity=Severity.NOTE, fix=replace(head.fix, edits=()), edit_locations=(),
            related=(Related(leader.location, "the root cause, reported here"),
                     *(Related(m.location, SAME_HAZARD) for m in places[1:])),
            companion_of=root_cause(leader),
        ))
    return notes


def finding(
    source: SourceFile,
    start: int,
    end: int,
    message: str,
    fix: Fix,
    *,
    severity: Severity | None = None,
    related: tuple[Related, ...] = (),
    in_port: bool = False,
) -> Finding:
    """Build a finding for bytes [start, end) of `source`."""
    location = source.location(start, end)
    return Finding(
        location=location,
        message=message,
        fix=fix,
        severity=severity,
        related=related,
        matched=source.data[start:end].decode("utf-8", errors="replace"),
        file_digest=source.digest,
        # Most edits rewrite the finding's own bytes (a rename): one Location for both.
        edit_locations=tuple(location if (e.start, e.end) == (start, end) else source.location(e.start, e.end)
                             for e in fix.edits),
        in_port=in_port,
    )


def at_node(source: SourceFile, node, message: str, fix: Fix, **kwargs) -> Finding:
    return finding(source, node.start_byte, node.end_byte, message, fix, **kwargs)
