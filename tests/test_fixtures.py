"""Every rule's fixtures: `expect:` markers must match the findings exactly.

`fixtures/<CODE>/bad*` and `ok*` (files, or folders scanned as one project) are scanned
with only that rule. Where `<case>.fixed<suffix>` exists, fixes are applied and must give
exactly that file, leave no finding of the rule, and change nothing on a second run.
Without it, the rule must offer no applicable fix for that case.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from harness import expectations, fix_until_stable, note_expectations, related_expectations, scan
from portlint.finding import Severity

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODE = re.compile(r"^[A-Z]\d{3}$")


def _cases():
    for folder in sorted(FIXTURES.iterdir()):
        if not CODE.match(folder.name):
            continue
        for case in sorted(folder.iterdir()):
            if ".fixed" in case.name or not case.name.startswith(("bad", "ok")):
                continue
            yield pytest.param(folder.name, case, id=f"{folder.name}/{case.name}")


def fixed_counterpart(case: Path) -> Path:
    if case.is_dir():
        return case.with_name(case.name + ".fixed")
    return case.with_name(case.name[: -len(case.suffix)] + ".fixed" + case.suffix) if case.suffix else case.with_name(case.name + ".fixed")


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]


def _copy(case: Path, tmp_path: Path) -> Path:
    target = tmp_path / case.name
    if case.is_dir():
        shutil.copytree(case, target)
    else:
        shutil.copy2(case, target)
    return target


def _positions(result, base: Path, code: str, severity=None) -> set[tuple[str, int]]:
    out = set()
    for f in result.findings:
        if f.code == code and (severity is None or f.severity is severity):
            path = Path(f.path)
            rel = path.relative_to(base).as_posix() if base.is_dir() else path.name
            out.add((rel, f.location.start_line))
    return out


def _expected(copy: Path, code: str):
    expected, todo, notes = set(), set(), set()
    for path in _files(copy):
        exp, td = expectations(path, code)
        rel = path.relative_to(copy).as_posix() if copy.is_dir() else path.name
        expected |= {(rel, line) for _, line in exp}
        todo |= {(rel, line) for _, line in td}
        notes |= {(rel, line) for _, line in note_expectations(path, code)}
    return expected, todo, notes


@pytest.mark.parametrize("code, case", list(_cases()))
def test_fixture(code: str, case: Path, tmp_path: Path) -> None:
    copy = _copy(case, tmp_path)
    # (a project fixture is a project: scanned from its own root, as `portlint scan .` in it)
    root = copy if copy.is_dir() else tmp_path
    result = scan([copy], root, select=(code,))
    assert not result.problems, [str(p) for p in result.problems]
    found = _positions(result, copy, code)
    expected, todo, notes = _expected(copy, code)
    if case.name.startswith("ok"):
        assert not expected, f"{case.name}: an ok case must not carry expect markers"
    # `// note: CODE`: a note on code that is right on AMD, the only kind an ok case may get.
    noted = _positions(result, copy, code, Severity.NOTE)
    assert notes <= noted, f"not notes: {sorted(notes - noted)}"
    expected |= notes
    missing = sorted(expected - found)
    extra = sorted(found - expected - todo)
    details = "\n".join(f"  {f.path}:{f.location.start_line}: {f.code} {f.message}" for f in result.findings)
    assert not missing and not extra, f"missing {missing}, unexpected {extra}\nfindings:\n{details}"
    # `// related: CODE`: a place one of the rule's findings shows as related.
    related_expected = set().union(*(
        {((path.relative_to(copy).as_posix() if copy.is_dir() else path.name), line)
         for _, line in related_expectations(path, code)} for path in _files(copy)))
    shown = {((Path(r.location.path).relative_to(copy).as_posix() if copy.is_dir() else Path(r.location.path).name),
              r.location.start_line) for f in result.findings if f.code == code for r in f.related}
    assert related_expected <= shown, f"not related: {sorted(related_expected - shown)}\nfindings:\n{details}"
    if case.name.startswith("bad"):
        assert found, "a bad case must produce findings"

    fixed = fixed_counterpart(case)
    if not fixed.exists():
        applicable = [f for f in result.findings if f.fix.is_applicable]
        assert not applicable, f"{case.name} has fixes but no {fixed.name}: {[f.fix.title for f in applicable]}"
        return
    applied = fix_until_stable([copy], root, (code,))
    assert applied > 0
    for got, want in zip(_files(copy), _files(fixed), strict=True):
        assert got.read_bytes() == want.read_bytes(), f"{got.name} differs from {want}"
    after = scan([copy], root, select=(code,))
    # Only findings without a fix may remain; those that follow from a fixed root cause (a
    # use of a mask macro whose definition was fixed) go with it.
    # (Lines move with the fixes: findings are compared by file and message.)
    unfixable = Counter((Path(f.path).name, f.message) for f in result.findings if not f.fix.is_applicable)
    remaining = Counter((Path(f.path).name, f.message) for f in after.findings)
    assert remaining <= unfixable, f"after --fix only the findings without a fix may remain: {remaining - unfixable}"
    snapshot = [p.read_bytes() for p in _files(copy)]
    assert fix_until_stable([copy], root, (code,)) == 0
    assert [p.read_bytes() for p in _files(copy)] == snapshot, "a second --fix changed the files"
    (tmp_path / "original").mkdir()
    for before, after_fix in zip(_files(_copy(case, tmp_path / "original")), _files(copy), strict=True):
        _assert_cuda_arms_kept(before, after_fix)


def _assert_cuda_arms_kept(before: Path, after: Path) -> None:
    """A fix keeps the CUDA build: every CUDA-only arm (code dead on ROCm) of the original
    stands unchanged in the fixed file, byte for byte."""
    from portlint import rocm_path
    from portlint.discover import language_of
    from portlint.source import SourceFile

    language = language_of(before)
    if language is None:
        return
    data = before.read_bytes()
    model = rocm_path.build(SourceFile(before.name, language, data, before.resolve()))
    fixed = after.read_bytes()
    for start, end, status in model.ranges:
        if status is rocm_path.Status.DEAD and data[start:end].strip():
            assert data[start:end] in fixed, f"{after.name}: the fix changed a CUDA-only arm: {data[start:end][:80]!r}"
