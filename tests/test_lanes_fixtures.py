"""Every warp-hazard fixture runs on 32 and 64 lanes (tests/lanes/warp_emulator.h).

- `bad*`: the 64-lane run computes something else than the 32-lane run, or is reported
  (deadlock, undefined read, mask) where the 32-lane run is clean: the hazard is real.
- `ok*`: the 64-lane run gives the 32-lane result.
- `*.safe-fixed.*` (the rule's safe fixes applied, by portlint's fix passes, here) and
  `*.fixed.*` (every fix, unsafe ones too): on 32 lanes they give the original's result (the
  fix keeps CUDA), and on 64 lanes the original's 32-lane result (the fix repairs ROCm).
A fixture of a W or K rule without a driver is named in tests/lanes/undriven.txt with the
reason. Each driver step runs in its own process. A step known to break these rules (a
finding with no safe fix stays in a fixed file; a bad case the emulator cannot tell apart)
is named with the reason in tests/lanes/known_failures.txt; it must then still behave so,
and every other step must follow the rules above.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from lanes import execute

# One worker runs them all (`pytest -n auto --dist loadgroup`): the session fixture that
# builds every selected fixture at once is then built once, not on every worker.
pytestmark = pytest.mark.xdist_group("lanes")

CASES = execute.driven_cases()
KNOWN_FAILURES = execute.LANES / "known_failures.txt"


def known_failures() -> dict[tuple[str, str], str]:
    """(`W001/bad.fixed.cu@64`, step) -> what differs, from known_failures.txt."""
    entries = {}
    for line in KNOWN_FAILURES.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            where, _, reason = line.partition(": ")
            test_id, _, step = where.strip().partition(" ")
            entries[(test_id, step)] = reason.strip()
    return entries


SAFE_FIXED_DIR = Path(tempfile.mkdtemp(prefix="lanes-safe-fixed-"))
atexit.register(shutil.rmtree, SAFE_FIXED_DIR, True)
SAFE_FIXED = {case.id: path for case in CASES if case.is_bad and (path := execute.write_safe_fixed(case, SAFE_FIXED_DIR))}


def variants(case: execute.Case) -> list[Path]:
    """The files run for a case: the fixture, its safe-fixed and its fixed outputs."""
    return [path for path in (case.fixture, SAFE_FIXED.get(case.id), case.fixed) if path]


@pytest.fixture(scope="session")
def runs(request, tmp_path_factory) -> dict[tuple[Path, int], dict[str, execute.Run]]:
    """The selected tests' fixtures and fixed outputs, built once, side by side; each step
    run on 32 and 64 lanes."""
    if execute.have("g++") is None:
        if os.environ.get("CI"):
            pytest.fail("g++ is missing in CI")
        pytest.skip("g++ not installed")
    workdir = tmp_path_factory.getbasetemp() / "lanes"
    params = [getattr(getattr(item, "callspec", None), "params", {}) for item in request.session.items]
    selected = {p["case"].id for p in params if isinstance(p.get("case"), execute.Case)}
    jobs = [(case.driver, path, lanes) for case in CASES if case.id in selected for path in variants(case) for lanes in (32, 64)]
    builds = execute.build_all([lambda j=j: execute.build_emulated(*j, workdir) for j in jobs])
    out = {}
    for (driver, path, lanes), build in zip(jobs, builds):
        if build.binary is None:
            out[(path, lanes)] = {"build": execute.Run(-1, {}, f"{path.name} does not build for {lanes} lanes:\n{build.error}")}
        else:
            out[(path, lanes)] = execute.run_steps([str(build.binary)], execute.steps(build.binary))
    return out


def _params():
    for case in CASES:
        yield pytest.param(case, case.fixture, 64, id=f"{case.id}@64")
        for path in variants(case)[1:]:
            for lanes in (32, 64):
                yield pytest.param(case, path, lanes, id=f"{case.code}/{path.name}@{lanes}")


def _show(run: execute.Run) -> str:
    return f"{run.outcome}: {run.diagnostic}" if run.returncode else f"{len(run.records)} records"


def _verdict(reference: execute.Run, got: execute.Run) -> str:
    """'' when `got` gives the reference's result, else what differs."""
    if got.returncode:
        return _show(got)
    return "; ".join(execute.differences(reference.records, got.records))


@pytest.mark.parametrize("case, path, lanes", list(_params()))
def test_fixture_on_lanes(runs, case: execute.Case, path: Path, lanes: int) -> None:
    reference, got = runs[(case.fixture, 32)], runs[(path, lanes)]
    for run in (*reference.values(), *got.values()):
        assert run.returncode != -1, run.stderr
    assert reference, f"{case.driver.name} defines no STEP"
    for step, run in reference.items():
        assert run.returncode == 0, f"{case.id} step {step} on 32 lanes (CUDA) must run clean: {_show(run)}"
        assert run.records, f"{case.id} step {step} records nothing"
    assert list(got) == list(reference), "the fixed output runs other steps"
    test_id = f"{case.code}/{path.name}@{lanes}"
    known = known_failures()
    problems = []
    for step in reference:
        verdict = _verdict(reference[step], got[step])
        if path == case.fixture and case.is_bad:
            if (test_id, step) in known:
                if verdict:
                    problems.append(f"step {step} is listed in known_failures.txt as giving the 32-lane result: {verdict}")
            elif not verdict:
                problems.append(f"step {step}: a bad case, yet {lanes} lanes give the 32-lane result")
        elif (test_id, step) in known:
            if not verdict:
                problems.append(f"step {step} is listed in known_failures.txt but now gives the 32-lane result")
        elif verdict:
            problems.append(f"step {step}: {verdict}")
    assert not problems, f"{test_id} against {case.fixture.name} on 32 lanes:\n" + "\n".join(problems)


def test_every_lane_fixture_is_driven_or_excused() -> None:
    fixtures = set(execute.lane_fixtures())
    driven = {case.id for case in CASES}
    excused = execute.undriven()
    assert not fixtures - driven - set(excused), f"fixtures neither driven nor in undriven.txt: {sorted(fixtures - driven - set(excused))}"
    assert not driven & set(excused), f"driven and also excused: {sorted(driven & set(excused))}"
    assert not set(excused) - fixtures, f"undriven.txt names no such fixture: {sorted(set(excused) - fixtures)}"
    assert all(excused.values()), "every undriven fixture needs a reason"
    stray = [p for p in execute.DRIVERS.rglob("*.cpp") if p not in {case.driver for case in CASES}]
    assert not stray, f"drivers without a fixture: {stray}"


def test_known_failures_name_real_tests() -> None:
    ids = {param.id for param in _params()}
    stale = [test_id for test_id, _ in known_failures() if test_id not in ids]
    assert not stale, f"known_failures.txt names no such test: {stale}"
