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
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
    for fix in sorted(fixes, key=lambda f: min(e.start for e in f.edits)):
        edits = sorted(fix.edits, key=lambda e: e.start)
        if any(_overlaps(e, a) for e in edits for a in accepted):
            continue
        if any(_overlaps(a, b) for a, b in zip(edits, edits[1:])):
            continue
        accepted.extend(edits)
        applied += 1
    out = data
    for edit in sorted(accepted, key=lambda e: e.start, reverse=True):
        out = out[: edit.start] + edit.content.encode("utf-8") + out[edit.end :]
    return out, applied


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True  # two insertions at one point: order would be arbitrary
    return a.start < b.end and b.start < a.end


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` by `data` via a temporary file and rename, keeping mode bits."""
    mode = path.stat().st_mode
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".portlint")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class FilePlan:
    """The new content of one file, before it is written."""

    path: str
    absolute_path: Path
    before: bytes
    after: bytes
    applied: int


def plan_fixes(findings, files, unsafe: bool) -> tuple[list[FilePlan], list[str]]:
    """Group applicable fixes by file and compute each file's new bytes.

    `files` maps a shown path to an object with `absolute_path`, `language` and `digest`
    (the engine's FileState). A file that changed since it was scanned, or whose fixed text
    would have more syntax errors than before, is left alone with a one-line reason.
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
            before = state.absolute_path.read_bytes()
        except OSError as exc:
            refused.append(f"{path}: not fixed: cannot read: {exc.strerror}")
            continue
        if hashlib.sha256(before).hexdigest() != state.digest:
            refused.append(f"{path}: not fixed: the file changed since it was scanned")
            continue
        after, applied = apply_edits(before, fixes)
        if after == before:
            continue
        if count_syntax_errors(state.language, after) > count_syntax_errors(state.language, before):
            refused.append(f"{path}: not fixed: the rewrite would not parse (please report this)")
            continue
        plans.append(FilePlan(path, state.absolute_path, before, after, applied))
    return plans, refused
