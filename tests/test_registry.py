"""Every rule is three things sharing a code: a registry entry, `rules/<CODE>.md`, fixtures.

Environment rules (`languages = ["environment"]`, the D family) are checks of
`portlint doctor` instead: a `rules/<CODE>.md`, an entry in `DOCTOR_CHECKS`, and tests in
tests/test_doctor.py (which requires one for every D-code) instead of fixtures.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from portlint.doctor import DOCTOR_CHECKS
from portlint.registry import DEEP, PROJECT, REGISTRY
from portlint.ruledocs import load_all, rules_dir

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DOCS = load_all()
# ruff's disallowed rule names: a name says what is caught, read as "allow <name>".
BANNED_NAME = re.compile(r"^(use|avoid|prefer|no|do-not|dont)-|-used$")
ENVIRONMENT = "environment"  # the machine a port is built on, checked by `portlint doctor`
SCANNED = sorted(c for c, d in DOCS.items() if ENVIRONMENT not in d.languages)


def test_registry_is_sorted_and_matches_docs() -> None:
    assert list(REGISTRY) == sorted(REGISTRY)
    assert set(REGISTRY) == set(SCANNED), "every code needs both a rules/ file and a registry entry"


def test_doctor_checks_are_sorted_and_match_environment_docs() -> None:
    assert list(DOCTOR_CHECKS) == sorted(DOCTOR_CHECKS)
    environment = {c for c, d in DOCS.items() if ENVIRONMENT in d.languages}
    assert set(DOCTOR_CHECKS) == environment, "every environment rule needs a rules/ file and a doctor check"
    assert all(DOCS[c].languages == (ENVIRONMENT,) and c.startswith("D") for c in environment)


@pytest.mark.parametrize("code", sorted(DOCS))
def test_rule_doc(code: str) -> None:
    doc = DOCS[code]
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc.name), doc.name
    assert not BANNED_NAME.search(doc.name), f"{doc.name}: describe what is caught"
    if ENVIRONMENT in doc.languages:  # a doctor check: DOCTOR_CHECKS, not the registry
        assert code in DOCTOR_CHECKS
    elif DEEP in REGISTRY[code]:  # deep mode's only: a C-family rule with no fast check
        assert set(REGISTRY[code]) == {DEEP} and doc.languages == ("cuda",)
    else:
        languages = set(REGISTRY[code]) - {PROJECT}
        assert set(doc.languages) - {"project"} <= {"cuda", "cmake", "python", "build-script", "make",
                                                    "requirements", "pyproject"}
        # A project check may cover any language; the per-file keys must all be documented.
        assert languages <= set(doc.languages), "front matter languages must list every registry key"
        if PROJECT not in REGISTRY[code]:
            assert set(doc.languages) == languages, "front matter languages must match the registry"
    assert len(doc.summary) <= 120
    assert "```" in doc.sections["Bad"] and "```" in doc.sections["Good"]


@pytest.mark.parametrize("code", SCANNED)
def test_rule_has_fixtures(code: str) -> None:
    folder = FIXTURES / code
    cases = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    if DEEP in REGISTRY[code]:  # fixtures/deep/<CODE>_bad_<case>.cu and the like (tests/test_deep.py)
        assert not cases, f"{code}: a deep-only rule's fixtures belong in fixtures/deep/"
        cases = [p.name[len(code) + 1:] for p in (FIXTURES / "deep").glob(f"{code}_*")]
    assert any(c.startswith("bad") and ".fixed" not in c for c in cases), f"{code}: no bad* fixture"
    assert any(c.startswith("ok") for c in cases), f"{code}: no ok* fixture"
    has_fixed = any(".fixed" in c for c in cases)
    if DOCS[code].fix in ("safe", "unsafe"):
        assert has_fixed, f"{code}: the rule fixes, so a bad*.fixed* file must show the result"
    else:
        assert not has_fixed, f"{code}: fix = {DOCS[code].fix!r} but a .fixed fixture exists"


def test_names_are_unique() -> None:
    names = [d.name for d in DOCS.values()]
    assert len(names) == len(set(names))


def test_template_is_not_a_rule() -> None:
    assert (rules_dir() / "_template.md").is_file()
    assert "X000" not in DOCS
