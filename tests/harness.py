"""Test helpers: scan snippets and fixture cases, and read `expect:` markers."""

from __future__ import annotations

import contextlib
import re
import textwrap
from pathlib import Path

from portlint import engine
from portlint.config import Config
from portlint.fix import plan_fixes, run_fix_passes

EXPECT = re.compile(r"(?://|#)\s*(todo-expect|expect):\s*([A-Z]\d{3}(?:\s*,\s*[A-Z]\d{3})*)")
# A note the rule gives on code that is right on AMD (a 32-lane logical warp): allowed in ok cases.
NOTE = re.compile(r"(?://|#)\s*note:\s*([A-Z]\d{3}(?:\s*,\s*[A-Z]\d{3})*)")
RELATED = re.compile(r"(?://|#)\s*related:\s*([A-Z]\d{3}(?:\s*,\s*[A-Z]\d{3})*)")
SUFFIX_BY_LANG = {"cuda": "x.cu", "cmake": "CMakeLists.txt", "python": "setup.py", "make": "Makefile"}


# Rule tests run the checks in this process (timeout 0: no worker, no budget): hundreds of
# scans skip a fork each, and a coverage tool sees the checks. tests/test_time_budget.py and
# the command-line tests cover the workers.
IN_PROCESS = {"timeout": 0}
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixing_cases():
    """(case, selection, test id) for every case a fix can change: each fixture file of a rule
    with a fix (`bad*`, `ok*`, not the fixed outputs), run with that rule alone, and each
    fixture project with every rule."""
    from portlint.ruledocs import load_all

    for code in sorted(code for code, doc in load_all().items() if doc.fix in ("safe", "unsafe")):
        folder = FIXTURES / code
        for case in sorted(folder.iterdir()) if folder.is_dir() else ():
            if ".fixed" not in case.name and case.name.startswith(("bad", "ok")):
                yield case, (code,), f"{code}/{case.name}"
    for project in sorted((FIXTURES / "projects").iterdir()):
        yield project, ("ALL",), f"projects/{project.name}"


@contextlib.contextmanager
def replaced_check(monkeypatch, code: str, language: str, check):
    """Rule `code`'s check for `language` is `check` inside the block (a rule that hangs,
    crashes or kills its process); the engine's cache of checks per rule is cleared on the
    way in and out."""
    from portlint.registry import REGISTRY

    monkeypatch.setitem(REGISTRY, code, {**REGISTRY[code], language: check})
    engine._checks_for.cache_clear()
    try:
        yield
    finally:
        engine._checks_for.cache_clear()


def scan(paths: list[Path], root: Path, select: tuple[str, ...] = ("ALL",), **config) -> engine.ScanResult:
    return engine.scan(paths, Config(root=root, select=select, **{**IN_PROCESS, **config}))


def expectations(path: Path, code: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(expected, todo) sets of (file name, line) for `code` in one file."""
    expected, todo = set(), set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for m in EXPECT.finditer(line):
            codes = {c.strip() for c in m.group(2).split(",")}
            if code in codes:
                (todo if m.group(1) == "todo-expect" else expected).add((path.name, number))
    return expected, todo


def related_expectations(path: Path, code: str) -> set[tuple[str, int]]:
    """(file name, line) of the `// related: CODE` markers for `code` in one file."""
    return {(path.name, number) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            for m in RELATED.finditer(line) if code in {c.strip() for c in m.group(1).split(",")}}


def note_expectations(path: Path, code: str) -> set[tuple[str, int]]:
    """(file name, line) of the `// note: CODE` markers for `code` in one file."""
    return {(path.name, number) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            for m in NOTE.finditer(line) if code in {c.strip() for c in m.group(1).split(",")}}


def fix_until_stable(paths: list[Path], root: Path, select: tuple[str, ...], unsafe: bool = True, **config) -> int:
    """Apply fixes the way `portlint scan --fix` does; returns how many were applied."""
    config = Config(root=root, select=select, **{**IN_PROCESS, **config})
    return run_fix_passes(paths, config, jobs=1, unsafe=unsafe).applied


def assert_findings(src: str, lang: str, *codes: str, tmp_path: Path, select=("ALL",), **config) -> engine.ScanResult:
    """Scan a snippet; the sorted codes found must equal `codes` (pyflakes style)."""
    path = tmp_path / SUFFIX_BY_LANG[lang]
    path.write_text(textwrap.dedent(src), encoding="utf-8")
    result = scan([path], tmp_path, select=select, **config)
    found = sorted(f.code for f in result.findings)
    assert found == sorted(codes), (
        f"\ninput:\n{textwrap.dedent(src)}\nexpected: {sorted(codes)}\nfound:\n"
        + "\n".join(f"  {f.location.start_line}:{f.location.start_column} {f.code} {f.message}" for f in result.findings)
    )
    return result


__all__ = ["scan", "expectations", "fix_until_stable", "assert_findings", "plan_fixes"]
