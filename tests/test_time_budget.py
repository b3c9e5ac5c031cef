"""The time budget (`--timeout`): a file or project rule that takes too long is stopped, named,
and makes the scan incomplete; the rest of the scan is kept. Worker processes end with the scan.

A planted slow check (a wrapper around W001's check that spins on files holding a marker)
stands for a rule that hangs: the forked workers inherit it from this process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portlint import engine
from portlint.registry import PROJECT, REGISTRY
from portlint.source import CUDA
from harness import replaced_check
from tests.test_cli import CLEAN, HAZARD, run

SLOW_MARKER = "__portlint_test_sleep__"
SLOW = f"// {SLOW_MARKER}\n{HAZARD}"
TOO_SLOW = "skipped after 1 s: analysis too slow; please report"


def _spin(seconds: float) -> None:
    """Busy for `seconds`: analysis that is too slow uses CPU time, which the budget counts."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _slow_on_marker(check):
    def slow(source):
        if SLOW_MARKER.encode() in source.data:
            _spin(60)
        return check(source)

    return slow


@pytest.fixture
def slow_check(monkeypatch):
    """W001's per-file check spins on files holding the marker."""
    with replaced_check(monkeypatch, "W001", CUDA, _slow_on_marker(REGISTRY["W001"][CUDA])):
        yield


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a_hazard.cu").write_text(HAZARD)
    (tmp_path / "b_slow.cu").write_text(SLOW)
    (tmp_path / "c_hazard.cu").write_text(HAZARD)
    (tmp_path / "clean.cu").write_text(CLEAN)
    return tmp_path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_past_the_budget_is_skipped_by_name_and_the_rest_is_reported(tree, slow_check, jobs, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)  # two workers even for four files
    result = run("scan", ".", "--no-cache", "--timeout", "1", "--jobs", jobs, "--output-format", "concise", cwd=tree)
    assert result.exit_code == 2  # incomplete
    assert f"portlint: b_slow.cu: {TOO_SLOW}\n" in result.stderr
    assert "Traceback" not in result.stderr
    hazards = {line.split(":")[0] for line in result.stdout.splitlines() if "W002" in line}
    assert hazards == {"a_hazard.cu", "c_hazard.cu"}  # the files after the slow one too


def test_exit_zero_covers_an_incomplete_scan(tree, slow_check):
    result = run("scan", ".", "--no-cache", "--timeout", "1", "--exit-zero", cwd=tree)
    assert result.exit_code == 0
    assert TOO_SLOW in result.stderr


def test_a_bad_budget_in_the_config_is_a_usage_error(tree):
    (tree / "pyproject.toml").write_text("[tool.portlint]\ntimeout = -1\n")
    result = run("scan", ".", "--no-cache", cwd=tree)
    assert result.exit_code == 2
    assert result.stderr.endswith("'timeout': -1 is not a number of seconds (0 or more; 0: no limit)\n")


def test_the_configured_budget_stops_a_slow_file(tree, slow_check):
    (tree / "pyproject.toml").write_text("[tool.portlint]\ntimeout = 0.5\n")
    result = run("scan", ".", "--no-cache", cwd=tree)
    assert result.exit_code == 2
    assert "b_slow.cu: skipped after 0.5 s: analysis too slow; please report" in result.stderr


def test_json_and_sarif_say_the_scan_is_incomplete(tree, slow_check):
    result = run("scan", ".", "--no-cache", "--timeout", "1", "--output-format", "json", cwd=tree)
    problems = json.loads(result.stdout)["problems"]
    assert {"path": "b_slow.cu", "message": TOO_SLOW, "timed_out": True} in problems
    result = run("scan", ".", "--no-cache", "--timeout", "1", "--output-format", "sarif", cwd=tree)
    invocation = json.loads(result.stdout)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert [n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == [f"b_slow.cu: {TOO_SLOW}"]
    assert result.exit_code == 2


def test_a_complete_scan_is_successful_in_sarif(tree):
    (tree / "b_slow.cu").unlink()
    result = run("scan", ".", "--no-cache", "--output-format", "sarif", cwd=tree)
    assert "invocations" not in json.loads(result.stdout)["runs"][0]  # nothing to notify
    assert result.exit_code == 1


def test_a_project_rule_past_the_budget_is_stopped_and_the_findings_are_kept(tree, monkeypatch):
    def slow_project_rule(index):
        _spin(60)
        return []

    (tree / "b_slow.cu").unlink()
    monkeypatch.setitem(REGISTRY, "C001", {PROJECT: slow_project_rule})
    result = run("scan", ".", "--no-cache", "--timeout", "1", "--output-format", "concise", cwd=tree)
    assert result.exit_code == 2
    assert "portlint: <project>: rule C001 skipped after 1 s: analysis too slow; please report" in result.stderr
    assert sum("W002" in line for line in result.stdout.splitlines()) == 2


def test_the_report_command_takes_the_budget(tree, slow_check):
    result = run("report", ".", "--no-cache", "--timeout", "1", "-o", "r.html", cwd=tree)
    assert result.exit_code == 2
    assert TOO_SLOW in result.stderr and (tree / "r.html").is_file()


def test_a_blocked_check_is_stopped_at_three_times_the_budget(tree, monkeypatch):
    """A check that waits (uses no CPU time) is stopped by the clock."""
    check = REGISTRY["W001"][CUDA]

    def waits(source):
        if SLOW_MARKER.encode() in source.data:
            time.sleep(60)
        return check(source)

    with replaced_check(monkeypatch, "W001", CUDA, waits):
        result = run("scan", ".", "--no-cache", "--timeout", "0.5", cwd=tree)
    assert result.exit_code == 2
    assert "b_slow.cu: skipped after 0.5 s: analysis too slow; please report" in result.stderr


def test_a_check_that_kills_its_process_is_an_internal_error_of_that_file(tree, monkeypatch):
    check = REGISTRY["W001"][CUDA]

    def dies(source):
        if SLOW_MARKER.encode() in source.data:
            os.kill(os.getpid(), signal.SIGKILL)  # as a crash in C code would end it
        return check(source)

    with replaced_check(monkeypatch, "W001", CUDA, dies):
        result = run("scan", ".", "--no-cache", "--output-format", "concise", cwd=tree)
    assert result.exit_code == 2
    assert "portlint: b_slow.cu: internal error: worker process died (SIGKILL)\n" in result.stderr
    assert sum("W002" in line for line in result.stdout.splitlines()) == 2


# The scan as a separate process, killed or interrupted: its workers must not outlive it.

_SCAN_WITH_SLOW_CHECK = f"""
import sys, time
from portlint import engine
from portlint.registry import REGISTRY
from portlint.source import CUDA
check = REGISTRY["W001"][CUDA]
def slow(source):
    if {SLOW_MARKER!r}.encode() in source.data:
        time.sleep(600)
    return check(source)
REGISTRY["W001"][CUDA] = slow
engine.PARALLEL_THRESHOLD = 1
from portlint.cli import main
sys.argv = ["portlint", *sys.argv[1:]]
main()
"""


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_scan(tree: Path, jobs: str) -> tuple[subprocess.Popen, set[int]]:
    """A scan stuck on the slow file; returns it with its worker processes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SCAN_WITH_SLOW_CHECK, "scan", ".", "--no-cache", "--timeout", "300", "--jobs", jobs],
        cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        # As a shell starts it: a test runner's worker may ignore SIGINT (pytest-xdist's do),
        # and a Python started with SIGINT ignored keeps ignoring it: no KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        workers = _children(proc.pid)
        if len(workers) >= int(jobs):
            time.sleep(0.5)  # the workers are at the slow file
            return proc, _children(proc.pid)
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the scan started no workers")


def _wait_gone(pids: set[int]) -> set[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return {p for p in pids if _alive(p)}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_workers_end_when_the_scan_is_killed(tree, signum):
    proc, workers = _start_scan(tree, "2")
    assert workers
    proc.send_signal(signum)
    proc.communicate(timeout=10)
    assert _wait_gone(workers) == set()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_ctrl_c_exits_130_with_one_line_and_no_workers_left(tree):
    proc, workers = _start_scan(tree, "1")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 130
    assert stderr == "portlint: interrupted\n"
    assert _wait_gone(workers) == set()


def _mark_then_return(marker: str) -> str:
    Path(marker).write_text("started")
    return marker


def _sleep_then_return(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_started_work_runs_while_the_main_process_goes_on_and_close_ends_it(tmp_path: Path) -> None:
    from portlint import workers

    markers = [str(tmp_path / "a"), str(tmp_path / "b")]
    work = workers.start(_mark_then_return, markers, 2, 10)
    # The main process goes on (here: it waits for the markers); the workers do their items meanwhile.
    for _ in range(1000):
        if all(Path(m).exists() for m in markers):
            break
        time.sleep(0.01)
    assert all(Path(m).exists() for m in markers), "the workers did not start before results() was asked"
    assert work.results() == markers
    # Unfinished work that is closed (an interrupted scan) leaves no worker behind.
    work = workers.start(_sleep_then_return, [30.0], 1, 10)
    pid = next(iter(work.pool.workers.values())).pid
    work.close()
    for _ in range(500):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            break  # reaped already
        if done:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("the closed worker is still running")


def test_a_budget_of_the_whole_stops_the_workers_items_not_done():
    """`Work.results(stop)`: once `stop()` says so, the items not done are TIMED_OUT and the
    workers end: with no per-item limit, the spinning items would never end otherwise."""
    from portlint import workers

    arrived = []

    def item(n):
        if n:
            _spin(600)
        return n

    work = workers.start(item, [0, 1, 2], 2, 0, on_result=lambda index, result: arrived.append(index))
    results = work.results(stop=lambda: bool(arrived))
    assert results[0] == 0 and results[1:] == [workers.TIMED_OUT, workers.TIMED_OUT]


# The program as `portlint` runs it (`cli.run`, which ends with `os._exit`), under a parent
# that adopts orphans (a child subreaper): any worker still there when the scan's process
# is gone, running or defunct, becomes that parent's child.
_SUBREAPER = """
import ctypes, os, subprocess, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    print("unsupported"); sys.exit(0)
scan = "from portlint import engine; engine.PARALLEL_THRESHOLD = 1; from portlint.cli import run; run()"
code = subprocess.run([sys.executable, "-c", scan, *sys.argv[1:]], stdout=subprocess.DEVNULL).returncode
try:
    pid, _ = os.waitpid(-1, os.WNOHANG)
    print(f"exit {code}, a worker was left behind")
except ChildProcessError:
    print(f"exit {code}, none left")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_clean_exit_leaves_no_worker_behind(tree, jobs):
    proc = subprocess.run([sys.executable, "-c", _SUBREAPER, "scan", ".", "--no-cache", "--jobs", jobs],
                          cwd=tree, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    if proc.stdout.strip() == "unsupported":
        pytest.skip("prctl(PR_SET_CHILD_SUBREAPER) refused")
    assert proc.stdout.strip() == "exit 1, none left", proc.stderr
