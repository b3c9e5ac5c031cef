"""Suggested rewrites and the one place that applies them.

A `Fix` always has a title (the imperative advice shown with every finding). Its edits are
byte-range replacements; `applicability` says whether `--fix` may apply them:

- SAFE: meaning is kept on CUDA and correct on ROCm; applied by `--fix`.
- UNSAFE: likely right, but needs a human look; applied only with `--unsafe-fixes`.
- DISPLAY_ONLY: shown as a suggestion (SARIF `fixes` included), never applied.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import nullcontext
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from portlint.fileio import NotReadable, in_memory_writes, read_regular, write_output, write_pending

# Fixes may overlap (one is left for the next pass) or make room for another: passes repeat
# until one changes nothing, at most this many times.
MAX_FIX_PASSES = 10


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(unsafe_hash=True)
class Edit:
    start: int
    end: int
    content: str

    @classmethod
    def replace(cls, node, content: str) -> "Edit":
        return cls(node.start_byte, node.end_byte, content)

    @classmethod
    def insert(cls, offset: int, content: str) -> "Edit":
        return cls(offset, offset, content)


@dataclass(unsafe_hash=True)
class Fix:
    title: str
    edits: tuple[Edit, ...] = ()
    applicability: Applicability = Applicability.DISPLAY_ONLY

    @classmethod
    def advice(cls, title: str) -> "Fix":
        """A rewrite told in words only (no mechanical edit exists)."""
        return cls(title)

    @classmethod
    def safe(cls, title: str, *edits: Edit) -> "Fix":
        return cls(title, tuple(edits), Applicability.SAFE)

    @classmethod
    def unsafe(cls, title: str, *edits: Edit) -> "Fix":
        return cls(title, tuple(edits), Applicability.UNSAFE)

    @property
    def is_applicable(self) -> bool:
        return bool(self.edits) and self.applicability is not Applicability.DISPLAY_ONLY

    def allowed(self, unsafe: bool) -> bool:
        if not self.is_applicable:
            return False
        return self.applicability is Applicability.SAFE or unsafe


# The arm a ROCm build compiles (hipcc defines it on AMD); portlint's ROCm-path model reads it.
ROCM_ARM = "#if defined(__HIP_PLATFORM_AMD__)"


def rocm_arm(data: bytes, start: int, end: int, rocm: str) -> tuple[Edit, ...] | None:
    """Edits that keep the statement at bytes [start, end) for CUDA and compile `rocm` in its
    place for ROCm: `#if defined(__HIP_PLATFORM_AMD__)` / `rocm` / `#else` / the line /
    `#endif`. None unless the statement has its line to itself (a comment may follow it)."""
    line_start = data.rfind(b"\n", 0, start) + 1
    if data[line_start:start].strip():
        return None
    line_end = data.find(b"\n", end)
    rest = data[end:line_end if line_end != -1 else len(data)].strip()
    if rest and not rest.startswith((b"//", b"/*")):
        return None
    indent = data[line_start:start].decode("utf-8", "replace")
    closing = Edit.insert(line_end + 1, "#endif\n") if line_end != -1 else Edit.insert(len(data), "\n#endif\n")
    return Edit.insert(line_start, f"{ROCM_ARM}\n{indent}{rocm}\n#else\n"), closing


def accepted_fixes(fixes: list[Fix]) -> list[Fix]:
    """The fixes one pass applies: whole fixes whose edits do not overlap an earlier accepted
    fix, taken in order of their first edit; one that overlaps is left for the next pass (as
    ruff does). A fix carried by several findings (every include it guards) counts once."""
    accepted: list[Fix] = []
    taken: list[Edit] = []
    seen: set[tuple[Edit, ...]] = set()
    for fix in sorted(fixes, key=lambda f: min(e.start for e in f.edits)):
        edits = sorted(fix.edits, key=lambda e: e.start)
        if tuple(edits) in seen:
            continue
        seen.add(tuple(edits))
        if any(_overlaps(e, a) for e in edits for a in taken):
            continue
        if any(_overlaps(a, b) for a, b in zip(edits, edits[1:])):
            continue
        taken.extend(edits)
        accepted.append(fix)
    return accepted


def apply_edits(data: bytes, fixes: list[Fix]) -> tuple[bytes, int]:
    """Apply the fixes `accepted_fixes` takes; returns the new bytes and how many were applied."""
    chosen = accepted_fixes(fixes)
    accepted = [e for fix in chosen for e in fix.edits]
    applied = len(chosen)
    newline = _dominant_newline(data)
    out = data
    for edit in sorted(accepted, key=lambda e: e.start, reverse=True):
        content = edit.content.encode("utf-8")
        if newline != b"\n":  # checks write "\n"; a CRLF file keeps its line ending in new lines
            content = content.replace(b"\r\n", b"\n").replace(b"\n", newline)
        out = out[: edit.start] + content + out[edit.end :]
    return out, applied


def _dominant_newline(data: bytes) -> bytes:
    crlf = data.count(b"\r\n")
    return b"\r\n" if crlf > data.count(b"\n") - crlf else b"\n"


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True  # two insertions at one point: order would be arbitrary
    return a.start < b.end and b.start < a.end


@dataclass(unsafe_hash=True)
class FilePlan:
    """The new content of one file, before it is written."""

    path: str
    absolute_path: Path
    before: bytes
    after: bytes
    applied: int


@dataclass(unsafe_hash=True)
class NotFixed:
    """A file `--fix` left alone, and why: one line for the user."""

    path: str
    reason: str
    failed: bool = False  # writing failed (an error), rather than a refusal on purpose

    def __str__(self) -> str:
        return f"{self.path}: not fixed: {self.reason}"


def write_plan(plan: FilePlan, root: Path, in_memory: bool = False) -> NotFixed | None:
    """Write one file's fixes, checking right before the write that this loses nothing.

    Left alone: a file reached through a symbolic link that leaves the project root, a
    read-only file (root could write it anyway), a file whose content changed since it was
    planned (saved in an editor while other files were fixed). Mode, owner, extended
    attributes and hard links are kept (`fileio.write_output`). `in_memory`: the same checks,
    then the bytes are kept for the scan's next reads instead (`fileio.write_pending`).
    """
    target = plan.absolute_path
    if _through_a_link_out_of(Path(plan.path), target, root):
        return NotFixed(plan.path, f"a symbolic link to {target}, outside the project root")
    try:
        stat = target.stat()
        if not stat.st_mode & 0o222 or not os.access(target, os.W_OK):
            return NotFixed(plan.path, "the file is read-only")
        if _read(target) != plan.before:
            return NotFixed(plan.path, "the file changed while fixes were being applied")
        if in_memory:
            write_pending(target, plan.after)
        else:
            write_output(target, plan.after)  # a hard-linked file in place, any other by a rename
    except (OSError, NotReadable) as exc:
        return NotFixed(plan.path, f"cannot write: {getattr(exc, 'strerror', None) or exc}", failed=True)
    return None


def _read(path: Path) -> bytes:
    """A file's bytes as the scan reads them (written in memory by an earlier pass of `--diff`)."""
    from portlint.engine import MAX_FILE_BYTES  # engine -> finding -> fix

    return read_regular(path, MAX_FILE_BYTES)


def _through_a_link_out_of(shown: Path, target: Path, root: Path) -> bool:
    """Whether `shown` reaches `target` through a symbolic link and `target` is outside `root`
    (a file named outside the root without a link is the user's explicit choice)."""
    if os.path.abspath(shown) == str(target):
        return False
    return not target.is_relative_to(root.resolve())


def plan_fixes(findings, files, unsafe: bool, given: dict[str, bytes] | None = None) -> tuple[list[FilePlan], list[NotFixed]]:
    """Group applicable fixes by file and compute each file's new bytes.

    `files` maps a shown path to an object with `absolute_path`, `language` and `digest`
    (the engine's FileState). A file that changed since it was scanned, or whose fixed text
    would have more syntax errors than before, is left alone with a one-line reason.
    `write_plan` checks each file again right before writing it. `given`: the bytes of files
    that are not read from disk (standard input), by shown path.
    """
    from portlint.source import count_syntax_errors

    by_path: dict[str, list[Fix]] = {}
    for f in findings:
        if f.fix.allowed(unsafe):
            by_path.setdefault(f.path, []).append(f.fix)
    plans, refused = [], []
    for path, fixes in sorted(by_path.items()):
        state = files[path]
        try:
            before = given[path] if given and path in given else _read(state.absolute_path)
        except (OSError, NotReadable) as exc:
            refused.append(NotFixed(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}"))
            continue
        if hashlib.sha256(before).hexdigest() != state.digest:
            refused.append(NotFixed(path, "the file changed since it was scanned"))
            continue
        after, applied = apply_edits(before, fixes)
        if after == before:
            continue
        if count_syntax_errors(state.language, after) > count_syntax_errors(state.language, before):
            refused.append(NotFixed(path, "the rewrite would not parse (please report this)"))
            continue
        plans.append(FilePlan(path, state.absolute_path, before, after, applied))
    return plans, refused


@dataclass
class FixRun:
    """What the fix passes did: the last scan, the fixes written, the files left alone, and
    each rewritten file's bytes before the first pass and after the last."""

    result: object  # engine.ScanResult
    applied: int = 0
    not_fixed: list[NotFixed] = field(default_factory=list)
    changed: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)


def run_fix_passes(paths, config, jobs: int, unsafe: bool, cache: Path | None = None,
                   preview: bool = False) -> FixRun:
    """Scan, apply fixes, and scan again until nothing changes (fixes may overlap).

    The one path of both `--fix` and `--diff`: with `preview`, every pass runs the same, but
    each file's new bytes stay in memory, where the next pass reads them
    (`fileio.in_memory_writes`), so the diff shows exactly what `--fix` writes, and the same
    count. Every file is tried; one that could not be fixed is left alone for the rest of
    the run.
    """
    from portlint import engine  # engine -> finding -> fix: imported when first run

    run = FixRun(result=None)
    not_fixed: dict[str, NotFixed] = {}
    with in_memory_writes() if preview else nullcontext():
        for _ in range(MAX_FIX_PASSES):
            run.result = engine.scan(paths, config, jobs, cache)
            plans, refused = plan_fixes([f for f in run.result.findings if f.path not in not_fixed],
                                        run.result.files, unsafe)
            not_fixed.update((r.path, r) for r in refused)
            if not plans:
                break
            for plan in plans:
                problem = write_plan(plan, config.root, in_memory=preview)
                if problem is None:
                    run.applied += plan.applied
                    first = run.changed.get(plan.path, (plan.before,))[0]
                    run.changed[plan.path] = (first, plan.after)
                else:
                    not_fixed[plan.path] = problem
            if preview:
                # The cache knows files by their stat signatures (`portlint.unchanged`), which
                # a write in memory leaves as they were: later passes analyse afresh.
                cache = None
        else:
            run.result = engine.scan(paths, config, jobs, cache)
    run.not_fixed = list(not_fixed.values())
    return run
