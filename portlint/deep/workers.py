"""Translation units analysed in worker processes that can be killed.

libclang can crash (a segfault takes the process with it) or take minutes on one heavy
template unit. Each worker is a process fed one unit at a time through a pipe; a worker
past the time budget is killed, one that dies is replaced, and that unit alone is lost
(`Lost`, one line for the user). `jobs` workers run at once.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import wait


@dataclass(frozen=True)
class Lost:
    """A unit that gave no result: the worker was killed past the budget, or died."""

    path: str  # display path
    reason: str  # "skipped after 30 s", "libclang crashed (SIGSEGV)"


@dataclass
class _Worker:
    process: object
    connection: object
    index: int | None = None  # the job it is working on
    started: float = 0.0


def _context():
    # fork: a worker starts in milliseconds with libclang already loaded; spawn elsewhere.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _serve(function, connection) -> None:
    while True:
        try:
            item = connection.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        index, job = item
        connection.send((index, function(job)))


def run(function, jobs: list, workers: int, timeout: float, shown, done=None) -> list:
    """`function(job)` for every job, in order; a `Lost` where a job was killed or crashed.
    `function` must catch its own exceptions; `shown(job)` names a job for the user;
    `done(index, result)`, if given, is called as each result arrives (an interrupted run
    keeps what it finished)."""
    context = _context()
    results: list = [None] * len(jobs)
    pending = list(range(len(jobs)))[::-1]
    pool: list[_Worker] = []

    def start() -> _Worker:
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(function, child), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def retire(worker: _Worker, kill: bool) -> None:
        if kill and worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5)
        worker.connection.close()
        pool.remove(worker)

    try:
        while pending or any(w.index is not None for w in pool):
            for worker in [w for w in pool if w.index is None] + [None] * workers:
                if not pending:
                    break
                if worker is None:
                    if len(pool) >= workers:
                        break
                    worker = start()
                    pool.append(worker)
                worker.index = pending.pop()
                worker.started = time.monotonic()
                worker.connection.send((worker.index, jobs[worker.index]))
            busy = [w for w in pool if w.index is not None]
            now = time.monotonic()
            budget = max(0.0, min(w.started + timeout - now for w in busy))
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy], timeout=budget))
            now = time.monotonic()
            for worker in busy:
                if worker.connection in ready:
                    try:
                        index, result = worker.connection.recv()
                    except (EOFError, OSError):
                        results[worker.index] = Lost(shown(jobs[worker.index]), _death(worker.process))
                        retire(worker, kill=True)
                        continue
                    results[index] = result
                    worker.index = None
                    if done is not None:
                        done(index, result)
                elif worker.process.sentinel in ready or not worker.process.is_alive():
                    results[worker.index] = Lost(shown(jobs[worker.index]), _death(worker.process))
                    retire(worker, kill=True)
                elif now - worker.started >= timeout:
                    results[worker.index] = Lost(shown(jobs[worker.index]), f"skipped after {timeout:g} s")
                    retire(worker, kill=True)
    finally:
        for worker in list(pool):
            try:
                worker.connection.send(None)
            except OSError:
                pass
            retire(worker, kill=worker.index is not None)
    return results


def _death(process) -> str:
    process.join(5)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"libclang crashed ({name}); fast mode only"
    return f"the worker process ended (exit code {code}); fast mode only"
