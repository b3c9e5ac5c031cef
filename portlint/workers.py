"""Work under a time budget, in forked worker processes that die with the scan.

Work that runs too long (a backtracking regex, a superlinear walk, a tree-sitter query)
cannot be stopped safely inside the process that runs it: C code checks no signals, and an
exception raised at a random point of Python code can leave shared state half updated. So
each item of work runs in a worker process, which can be killed: past its budget (CPU time
of the worker, or three times as long on the clock: `_Pool._over`), a worker is sent
SIGKILL and a fresh one is forked for the remaining items. With one worker too
(`--jobs 1`): the main process never runs an unbounded analysis.

Workers are forked: they inherit the function, its arguments and the list of items, so only
an item's index goes down a pipe and only its result (a pickle) comes back. A fork costs a
few milliseconds (most of it pages copied on write), once per worker, not once per item. A worker dies with the main process
(PR_SET_PDEATHSIG on Linux, and an EOF on its task pipe anywhere), ignores Ctrl-C (the main
process gets it too and ends the workers), and leaves with `os._exit` so that nothing the
main process had buffered is written twice.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
import pickle
import select
import signal
import struct
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

_INDEX = struct.Struct("!I")
_LENGTH = struct.Struct("!Q")
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class TimedOut:
    """The result of an item whose work passed the budget (its worker was killed)."""

    def __repr__(self) -> str:
        return "TIMED_OUT"


TIMED_OUT = TimedOut()


@dataclass(unsafe_hash=True)
class Crashed:
    """The result of an item whose work raised, or whose worker died: `reason` says how."""

    reason: str
    died: str | None = None  # how the worker ended (`SIGSEGV`, `exit code 1`), if it did


def can_fork() -> bool:
    return hasattr(os, "fork")


def run(function: Callable, items: Sequence, workers: int, timeout: float,
        on_result: Callable[[int, object], None] | None = None) -> list:
    """`[function(item) for item in items]` in `workers` forked processes, each call stopped
    after `timeout` seconds (0: no limit): its result is then TIMED_OUT. A call that raises,
    or whose worker dies (a crash in C code), gives a Crashed. Results come back in the order
    of `items`; `on_result(index, result)` is called as each arrives (an interrupted run
    keeps what it finished)."""
    return start(function, items, workers, timeout, on_result).results()


class Work:
    """`run`'s work, under way: the workers are forked and busy while the main process does
    something else; `results()` waits for them (and ends them), `close()` ends them unfinished."""

    def __init__(self, pool: "_Pool", count: int) -> None:
        self.pool = pool
        self.previous = signal.getsignal(signal.SIGTERM)
        # SIGTERM of the main process: end the workers (`close`), then exit as a terminated
        # process would. Only the main thread may install a handler.
        self.restore = _install(signal.SIGTERM, _terminate)
        try:
            pool.start(count)
        except BaseException:
            self.close()
            raise

    def results(self, stop: Callable[[], bool] | None = None) -> list:
        """Every item's result; with `stop`, asked as results come and at least every quarter
        second: once it says so, the items not done yet are TIMED_OUT (a budget of the whole)."""
        try:
            return self.pool.finish(stop)
        finally:
            self.close()

    def close(self) -> None:
        self.pool.kill_all()
        if self.restore:  # None: a handler not set from Python, which cannot be put back
            signal.signal(signal.SIGTERM, signal.SIG_DFL if self.previous is None else self.previous)
            self.restore = False


class BudgetSpent(Exception):
    """Raised by `Budget.check` past the budget: the work in hand stops and does without."""


class Budget:
    """The budget of work the main process does itself (a named file's share of its project:
    finding its includers, walking their macros, reading the project context), by the rule
    a worker's item follows: `seconds` of CPU time, or WALL_FACTOR times as long on the clock
    (0: no limit). That work is not killed: it asks as it goes, and past the budget does
    with less (fewer includers, less context), which `spent_on` records for the user."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._cpu, self._clock = time.process_time(), time.monotonic()
        self._over_cpu, self._next_cpu_read = False, self._clock
        self.spent_on: list[str] = []  # one line each: what was cut short
        self.cut_short: list[str] = []  # what was, as `cut` was told (kept with results made with less)

    def spent(self) -> bool:
        if not self.seconds:
            return False
        now = time.monotonic()
        if now - self._clock >= WALL_FACTOR * self.seconds:
            return True
        if now >= self._next_cpu_read:  # reading the CPU clock costs far more than the wall clock
            self._next_cpu_read = now + 0.05
            self._over_cpu = time.process_time() - self._cpu >= self.seconds
        return self._over_cpu

    def check(self) -> None:
        if self.spent():
            raise BudgetSpent

    def cut(self, what: str, earlier: bool = False, lasting: bool = True) -> None:
        """Record that `what` was cut short (once each). `earlier`: by an earlier run, whose
        results made with less this run reuses; `lasting`: results kept for later runs are
        made with less (not so for files left unread: the next run reads them)."""
        when = "an earlier run" if earlier else "this run"
        line = f"{what}: past the {self.seconds:g} s budget of the project's share of {when}"
        if line not in self.spent_on:
            self.spent_on.append(line)
            if lasting:
                self.cut_short.append(what)


@functools.cache
def _c_library():
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def release_freed_memory() -> None:
    """Free what is no longer reachable (the build files' syntax trees hold cycles) and give
    the C heap's free pages back to the system: glibc keeps them in the process, and every
    worker forked from it would count them too. Where there is no `malloc_trim`, only the
    first."""
    gc.collect()
    trim = getattr(_c_library(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def start(function: Callable, items: Sequence, workers: int, timeout: float,
          on_result: Callable[[int, object], None] | None = None) -> Work:
    """`run`, started: the workers take the items at once, `Work.results()` collects them."""
    return Work(_Pool(function, items, timeout, on_result), max(1, min(workers, len(items))))


def _install(signum: int, handler) -> bool:
    try:
        signal.signal(signum, handler)
        return True
    except ValueError:  # not the main thread
        return False


def _terminate(signum, frame) -> None:
    raise SystemExit(128 + signum)


# A worker that got less of a CPU than the budget (a busy machine, or blocked) is given
# more time on the clock, up to this many times the budget.
WALL_FACTOR = 3

# How many items a worker is given ahead: it goes from one to the next without waiting for
# the main process (a round trip costs a scheduling delay on a busy machine), few enough
# that the pipes never fill and that work stays balanced between workers.
AHEAD = 8


@dataclass
class _Worker:
    pid: int
    tasks: int  # the main process's end of the task pipe (writes indices)
    results: int  # the main process's end of the result pipe (reads pickles)
    # The items it was given, in order; the first is the one it works on, since `started`
    # (when it was given, or when the one before it came back), with `cpu` CPU seconds used.
    queue: deque = field(default_factory=deque)
    started: float = 0.0
    cpu: float | None = None
    cpu_read: float = float("-inf")  # when `cpu` was read
    deadline: float = float("inf")  # when to look again whether it is past the budget


class _Pool:
    def __init__(self, function: Callable, items: Sequence, timeout: float, on_result=None) -> None:
        self.function, self.items, self.timeout = function, items, timeout
        self.on_result = on_result
        self.workers: dict[int, _Worker] = {}  # by result fd

    def start(self, count: int) -> None:
        self.pending = deque(range(len(self.items)))
        ahead = AHEAD if count > 1 else len(self.items)  # one worker takes them all
        self.ahead = min(ahead, 4096)  # 16 KiB of indices: far below a pipe's buffer
        for _ in range(count):
            self._give(self._fork(), self.pending, self.ahead)

    def finish(self, stop: Callable[[], bool] | None = None) -> list:
        results: list = [None] * len(self.items)
        pending, ahead = self.pending, self.ahead
        left = len(self.items)
        while left:
            if stop is not None and stop():
                return [TIMED_OUT if r is None else r for r in results]
            busy = [w for w in self.workers.values() if w.queue]
            wait = min(w.deadline for w in busy) - time.monotonic()
            if stop is not None:
                wait = min(wait, 0.25)
            ready, _, _ = select.select([w.results for w in busy], [], [], None if wait == float("inf") else max(0.0, wait))
            for fd in ready:
                worker = self.workers[fd]
                message = _receive(fd)
                index = worker.queue.popleft()
                left -= 1
                if message is None:  # the worker died (a crash in C code, killed from outside, out of memory)
                    how = _death_of(worker.pid)
                    results[index] = Crashed(f"worker process died ({how})", died=how)
                    worker = self._replace(worker, pending)
                else:
                    results[index] = message
                    self._restart_clock(worker)
                self._arrived(index, results[index])
                self._give(worker, pending, ahead)
            now = time.monotonic()
            for worker in [w for w in self.workers.values() if w.queue and w.deadline <= now and self._over(w, now)]:
                index = worker.queue.popleft()
                results[index] = TIMED_OUT
                left -= 1
                self._arrived(index, TIMED_OUT)
                worker = self._replace(worker, pending)
                self._give(worker, pending, ahead)
        return results

    def _arrived(self, index: int, result) -> None:
        if self.on_result is not None:
            self.on_result(index, result)

    def _give(self, worker: _Worker | None, pending: deque, ahead: int) -> None:
        if worker is None:
            return
        given = []
        while pending and len(worker.queue) < ahead:
            given.append(pending.popleft())
            worker.queue.append(given[-1])
        if given:
            if len(worker.queue) == len(given):
                self._restart_clock(worker)
            try:
                os.write(worker.tasks, b"".join(_INDEX.pack(i) for i in given))
            except BrokenPipeError:
                pass  # it died: its results pipe reads EOF next, and its items are given again

    def _restart_clock(self, worker: _Worker) -> None:
        """The worker starts on the first item of its queue now."""
        if not (self.timeout and worker.queue):
            worker.deadline = float("inf")
            return
        worker.started = time.monotonic()
        # Read at most ten times a second (reading costs tens of microseconds, items can take
        # less): an older reading counts a little of the item before against this one.
        if worker.started - worker.cpu_read > 0.1:
            worker.cpu, worker.cpu_read = _cpu_seconds(worker.pid), worker.started
        worker.deadline = worker.started + self.timeout

    def _over(self, worker: _Worker, now: float) -> bool:
        """Whether the worker's item is past the budget: `timeout` seconds of CPU time, so that
        a busy machine does not make a file too slow; but at most WALL_FACTOR times as long
        on the clock, which also stops a worker that is blocked. Not over: the next look is
        when it could have used the rest of the budget."""
        if now - worker.started >= WALL_FACTOR * self.timeout:
            return True
        cpu = _cpu_seconds(worker.pid)
        if cpu is None or worker.cpu is None:  # no /proc: the clock alone
            return True
        used = cpu - worker.cpu
        if used >= self.timeout * 0.99:  # CPU time comes in clock ticks
            return True
        worker.deadline = now + self.timeout - used
        return False

    def _fork(self) -> _Worker:
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        parent = os.getpid()
        _prctl()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            try:
                os.close(task_write)
                os.close(result_read)
                for other in self.workers.values():  # pipes of its siblings are not its own
                    os.close(other.tasks)
                    os.close(other.results)
                _die_with_parent(parent)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _serve(self.function, self.items, task_read, result_write)
            finally:
                os._exit(0)
        os.close(task_read)
        os.close(result_write)
        worker = _Worker(pid, task_write, result_read)
        self.workers[result_read] = worker
        return worker

    def _replace(self, worker: _Worker, pending: deque) -> _Worker | None:
        """Kill `worker` and fork another if work is left; the items it had not started go
        back to `pending`."""
        pending.extendleft(reversed(worker.queue))
        worker.queue.clear()
        self._end(worker, signal.SIGKILL)
        return self._fork() if pending else None

    def _end(self, worker: _Worker, signum: int | None) -> None:
        del self.workers[worker.results]
        os.close(worker.tasks)  # a worker waiting for a task reads EOF and leaves
        os.close(worker.results)
        if signum is not None:
            try:
                os.kill(worker.pid, signum)
            except ProcessLookupError:
                pass
        # Reaped later, without waiting: a process that built parse trees takes milliseconds
        # to exit, and a one-file scan should not wait for that.
        _exited.append(worker.pid)
        _reap()

    def kill_all(self) -> None:
        """End every worker: idle ones read EOF; one still working (an interrupted scan) is killed."""
        for worker in list(self.workers.values()):
            self._end(worker, signal.SIGKILL if worker.queue else None)


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a process so far (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14 and 15)


_exited: list[int] = []  # workers told to end, not yet reaped


def _death_of(pid: int) -> str:
    """How a worker whose result pipe closed ended: `SIGSEGV`, `exit code 1`. It closed the
    pipe by ending, so it is reaped within moments; one that is not is left to `_reap`."""
    for _ in range(100):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return "reaped elsewhere"
        if done:
            if os.WIFSIGNALED(status):
                number = os.WTERMSIG(status)
                try:
                    return signal.Signals(number).name
                except ValueError:
                    return f"signal {number}"
            return f"exit code {os.WEXITSTATUS(status)}"
        time.sleep(0.01)
    return "still exiting"


def _reap() -> None:
    for pid in list(_exited):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere
            done = pid
        if done:
            _exited.remove(pid)


def reap_all(seconds: float = 5.0) -> None:
    """Wait for the workers told to end (the program is about to exit): none is left behind,
    running or defunct, once the command has returned. They are ending already (an EOF on
    their task pipe, or SIGKILL), which takes milliseconds; one still there after `seconds`
    is killed, then waited for."""
    deadline = time.monotonic() + seconds
    while _exited:
        _reap()
        if not _exited:
            return
        if time.monotonic() >= deadline:
            for pid in _exited:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for pid in list(_exited):
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
                _exited.remove(pid)
            return
        time.sleep(0.002)


@functools.cache
def _prctl():
    """libc's prctl, loaded in the main process (once, not in every worker), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when the main process dies, however it dies."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Elsewhere an EOF on the task pipe still ends an idle worker.
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def _serve(function: Callable, items: Sequence, tasks: int, results: int) -> None:
    while True:
        header = _read_exactly(tasks, _INDEX.size)
        if header is None:
            return
        (index,) = _INDEX.unpack(header)
        try:
            payload = pickle.dumps(function(items[index]), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - reported for this item; the worker goes on
            payload = pickle.dumps(Crashed(f"{type(exc).__name__}: {exc}"), protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(results, _LENGTH.pack(len(payload)) + payload)


def _receive(fd: int):
    header = _read_exactly(fd, _LENGTH.size)
    if header is None:
        return None
    payload = _read_exactly(fd, _LENGTH.unpack(header)[0])
    return None if payload is None else pickle.loads(payload)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
