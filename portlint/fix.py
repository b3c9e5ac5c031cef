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
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from portlint.fileio import write_output


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


def apply_edits(data: bytes, fixes: list[Fix]) -> tuple[bytes, int]:
    """Apply whole fixes whose edits do not overlap an earlier accepted fix.

    Returns the new bytes and how many fixes were applied. Fixes are taken in order of
    their first edit; one that overlaps is left for the next run (as ruff does).
    """
    accepted: list[Edit] = []
    applied = 0
    seen: set[tuple[Edit, ...]] = set()
    for fix in sorted(fixes, key=lambda f: min(e.start for e in f.edits)):
        edits = sorted(fix.edits, key=lambda e: e.start)
        if tuple(edits) in seen:
            continue  # one fix carried by several findings (every include it guards) applies once
        seen.add(tuple(edits))
        if any(_overlaps(e, a) for e in edits for a in accepted):
            continue
        if any(_overlaps(a, b) for a, b in zip(edits, edits[1:])):
            continue
        accepted.extend(edits)
        applied += 1
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


def write_plan(plan: FilePlan, root: Path) -> NotFixed | None:
    """Write one file's fixes, checking right before the write that this loses nothing.

    Left alone: a file reached through a symbolic link that leaves the project root, a
    read-only file (root could write it anyway), a file whose content changed since it was
    planned (saved in an editor while other files were fixed). Mode, owner, extended
    attributes and hard links are kept (`fileio.write_output`).
    """
    target = plan.absolute_path
    if _through_a_link_out_of(Path(plan.path), target, root):
        return NotFixed(plan.path, f"a symbolic link to {target}, outside the project root")
    try:
        stat = target.stat()
        if not stat.st_mode & 0o222 or not os.access(target, os.W_OK):
            return NotFixed(plan.path, "the file is read-only")
        if target.read_bytes() != plan.before:
            return NotFixed(plan.path, "the file changed while fixes were being applied")
        write_output(target, plan.after)  # a hard-linked file in place, any other by a rename
    except OSError as exc:
        return NotFixed(plan.path, f"cannot write: {exc.strerror or exc}", failed=True)
    return None


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
            before = given[path] if given and path in given else state.absolute_path.read_bytes()
        except OSError as exc:
            refused.append(NotFixed(path, f"cannot read: {exc.strerror}"))
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
