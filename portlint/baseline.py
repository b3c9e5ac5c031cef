"""Line-independent identities of findings, and baselines built from them.

A finding's identity is its rule, its file (relative to the project root), the text it
matched with white space folded, and which occurrence of that (rule, file, text) it is in
source order. Edits above a finding do not change it; a second identical hazard in the same
file gets a new one. SARIF uses it as `partialFingerprints["portlint/v1"]`; a baseline file
lists the identities to leave out of later reports.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from portlint.fileio import write_output

FORMAT = "portlint-baseline"
VERSION = 1


class BaselineError(Exception):
    pass


def root_relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def identities(findings, files, root: Path) -> list[str]:
    """One identity per finding, in the order given (findings must be in source order)."""
    seen: Counter = Counter()
    out = []
    for f in findings:
        state = files.get(f.path)
        if f.location is None:
            rel = "."  # a finding about the machine (`portlint doctor`) belongs to the project
        else:
            rel = root_relative(state.absolute_path if state is not None else Path(f.path), root)
        matched = " ".join(f.matched.split())
        seen[(f.code, rel, matched)] += 1
        key = f"{f.code}\0{rel}\0{matched}\0{seen[(f.code, rel, matched)]}"
        out.append(hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32])
    return out


def write(path: Path, findings, files, root: Path) -> None:
    entries = [
        {"code": f.code, "path": root_relative(files[f.path].absolute_path, root), "id": ident, "message": f.message}
        for f, ident in zip(findings, identities(findings, files, root))
    ]
    text = json.dumps({"format": FORMAT, "version": VERSION, "findings": entries}, indent=2) + "\n"
    write_output(path, text.encode("utf-8"))


def load(path: Path) -> frozenset[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: not a portlint baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}: not a portlint baseline (write one with --write-baseline)")
    if data.get("version") != VERSION:
        raise BaselineError(f"{path}: baseline version {data.get('version')!r} is not supported (expected {VERSION})")
    try:
        return frozenset(entry["id"] for entry in data["findings"])
    except (TypeError, KeyError):
        raise BaselineError(f"{path}: not a portlint baseline (an entry has no 'id')") from None


def split(findings, files, root: Path, known: frozenset[str]) -> tuple[list, int]:
    """(findings not in the baseline, how many were in it)."""
    kept = [f for f, ident in zip(findings, identities(findings, files, root)) if ident not in known]
    return kept, len(findings) - len(kept)
