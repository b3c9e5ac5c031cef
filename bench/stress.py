"""Stress runs: portlint on large real projects, shapes that once went quadratic, 100,000
files in one folder, a mixed-up cache and the fuzzer. Prints one table; exits 0 (a
benchmark: the targets are marked PASS or MISS, nothing fails on a slow number).

    python bench/stress.py --corpora /work/corpora              # every row but the fuzzer
    python bench/stress.py --corpora DIR --fuzz-minutes 30      # with a fuzz run
    python bench/stress.py --only named,cache                   # some rows

Rows:

- named: one named header and one named source in each project found under --corpora
  (cutlass: NVIDIA+cutlass or cutlass, cccl: NVIDIA+cccl or cccl), run from the project's
  root and from the folder above it, cold (a fresh cache), then warm (the same run again,
  twice: a run the budget cut short keeps what it did, and the next fills in the rest).
  With --whole, cutlass is first scanned whole and its named files are run once more on
  that cache: the first run after a full scan.
- whole: a full scan of cutlass (--whole), one worker per core; cccl's needs 7+ GB (pass
  --whole-cccl to run it, alone on the machine, with --jobs 1).
- files: 100,000 files in one folder (--files N).
- shapes: 20,000 nested `#ifdef __CUDA_ARCH__`, a 20,000-arm `#elif` chain, a 5 MB line
  of shuffles, each also at half its size, with no time budget: ok when the full size
  takes at most 2.5 times as long (linear: 2 or less with start-up; quadratic: near 4).
- cache: fault injection on a fixture project: intact entries swapped, copied over others
  and moved (with and without the stat snapshots), entries damaged; every run's findings
  are compared with an uncached run's, and any traceback or internal error counts.
- fuzz: bench/fuzz.py (seeded) for --fuzz-minutes: cases, failures, the slowest case.

Each portlint run is a process of its own, started with this checkout on PYTHONPATH, its
bytecode compiled beforehand (as an installed package's is), and `--cache-dir` in a temporary folder (the corpora stay untouched); wall time is the clock,
peak RSS that of its largest process (the rusage `wait4` gives: its own and its waited-for
children's). Targets (named files in cutlass and cccl, from the root and from above):
cold <= 10 s and <= 1 GB, warm <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURES = REPO / "fixtures"

# Project -> (folder names under --corpora, the named header, the named source).
PROJECTS = {
    "cutlass": (("NVIDIA+cutlass", "cutlass"), "include/cutlass/half.h", "examples/00_basic_gemm/basic_gemm.cu"),
    "cccl": (("NVIDIA+cccl", "cccl"), "thrust/thrust/sort.h", "cub/examples/device/example_device_reduce.cu"),
}
COLD_SECONDS, COLD_BYTES, WARM_SECONDS = 10.0, 1 << 30, 1.0


@dataclass
class Run:
    wall: float
    peak: int  # bytes
    code: int
    stdout: str
    stderr: str

    @property
    def summary(self) -> str:
        """The report's last line: what was found."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    @property
    def clean(self) -> bool:
        """No traceback, no internal error."""
        return "Traceback" not in self.stderr and "internal error" not in self.stderr


PYCACHE: Path | None = None  # where the runs' bytecode is kept (`main`)


def portlint(*args: str, cwd: Path, timeout: float = 1800) -> Run:
    """One `portlint scan` in a process of its own, with its wall time and peak RSS. Its
    bytecode is compiled before the first run, as an installed package's is: compiling
    portlint's sources (0.2 s) is no part of any run a user makes."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if PYCACHE is not None:
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "portlint", "scan", *args], cwd=cwd, env=env,
                                stdout=out, stderr=err)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
            time.sleep(0.02)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(wall, usage.ru_maxrss * 1024, proc.returncode, out.read().decode("utf-8", "replace"),
                   err.read().decode("utf-8", "replace"))


ROWS: list[tuple[str, ...]] = []


def row(kind: str, what: str, run: Run | None = None, verdict: str = "", note: str = "") -> None:
    wall = f"{run.wall:.1f}" if run else ""
    peak = f"{run.peak / 2**20:.0f}" if run else ""
    code = str(run.code) if run else ""
    ROWS.append((kind, what, wall, peak, code, verdict, note))
    print(f"  {kind:7} {what:58} {wall:>7} s {peak:>6} MB  exit {code:>2}  {verdict:5} {note}", flush=True)


def target(run: Run, cold: bool) -> str:
    if not run.clean:
        return "FAIL"
    if cold:
        return "PASS" if run.wall <= COLD_SECONDS and run.peak <= COLD_BYTES else "MISS"
    return "PASS" if run.wall <= WARM_SECONDS else "MISS"


# ---- named files in large projects ------------------------------------------------------------
def find_project(corpora: Path, names: tuple[str, ...]) -> Path | None:
    return next((corpora / n for n in names if (corpora / n).is_dir()), None)


def named_rows(corpora: Path, work: Path, whole: bool, whole_cccl: bool) -> None:
    for name, (folders, header, source) in PROJECTS.items():
        root = find_project(corpora, folders)
        if root is None:
            row("named", f"{name}: not under {corpora}", note="skipped")
            continue
        scanned_whole = None
        if name == "cutlass" and whole or name == "cccl" and whole_cccl:
            scanned_whole = work / f"cache-{name}-whole"
            jobs = ["--jobs", "1"] if name == "cccl" else []
            run = portlint(".", "--cache-dir", str(scanned_whole), "--output-format", "concise", *jobs, cwd=root)
            row("whole", f"{name}: whole scan", run, "ok" if run.clean else "FAIL", run.summary[:60])
        for relative in (header, source):
            if not (root / relative).is_file():
                row("named", f"{name}/{relative}: missing", note="skipped")
                continue
            for where, cwd, path in (("root", root, relative), ("above", root.parent, f"{root.name}/{relative}")):
                cache = work / f"cache-{name}-{where}-{Path(relative).name}"
                label = f"{name} {relative} from {where}"
                cold = portlint(path, "--cache-dir", str(cache), "--output-format", "concise", cwd=cwd)
                cut = " (cut short: see stderr)" if "past the" in cold.stderr else ""
                row("named", f"{label}, cold", cold, target(cold, True), cold.summary[:50] + cut)
                for again in ("warm", "warm, third run"):  # a run cut short by the budget fills in on the next
                    warm = portlint(path, "--cache-dir", str(cache), "--output-format", "concise", cwd=cwd)
                    same = "" if warm.summary == cold.summary else "findings differ from cold: "
                    cut = " (cut short: see stderr)" if "past the" in warm.stderr else ""
                    row("named", f"{label}, {again}", warm, target(warm, False), same + warm.summary[:50] + cut)
                if scanned_whole is not None:
                    after = portlint(path, "--cache-dir", str(scanned_whole), "--output-format", "concise", cwd=cwd)
                    row("named", f"{label}, first after a full scan", after, target(after, False),
                        after.summary[:60])


# ---- many files, shapes -------------------------------------------------------------------------
def files_row(work: Path, count: int) -> None:
    folder = work / "many" / "d"
    folder.mkdir(parents=True)
    (folder.parent / ".git").mkdir()
    (folder / "common.h").write_text("#pragma once\n#define WIDTH 64\n")
    hazard = '#include "common.h"\n__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n'
    for i in range(count):
        (folder / f"f{i}.cu").write_text(hazard if i % 10 == 0 else f"int g{i}() {{ return {i}; }}\n")
    run = portlint("d", "--no-cache", "--output-format", "concise", cwd=folder.parent)
    found = sum(1 for line in run.stdout.splitlines() if " W002 " in line)
    ok = run.clean and found == (count + 9) // 10
    row("files", f"{count:,} files in one folder", run, "ok" if ok else "FAIL", f"{found} findings")
    shutil.rmtree(folder.parent)


# Each shape at a size (the count of its repeated piece): run at a quarter size and at the
# full one, a linear cost takes about four times as long at the full size.
SHAPES = {
    "20,000 nested #ifdef __CUDA_ARCH__": (20000, lambda n: b"#ifdef __CUDA_ARCH__\n" * n
        + b"__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n" + b"#endif\n" * n),
    "20,000-arm #elif chain on __CUDA_ARCH__": (20000, lambda n: b"#if X\n" + b"".join(
        b"#elif defined(__CUDA_ARCH__) && Y%d\nint a%d;\n" % (i, i) for i in range(n)) + b"#endif\n"),
    "a 5 MB line of shuffles": (5 * 2**20 // 42, lambda n: b"__device__ float f(float v) { "
        + b"v += __shfl_down_sync(0xffffffff, v, 1); " * n + b"return v; }\n"),
}
# The full size's time over the half size's: at most 2 where the cost is linear (less with
# start-up), near 4 where it is quadratic.
LINEAR = 2.5


def _shape_run(work: Path, data: bytes) -> Run:
    folder = work / "shape"
    folder.mkdir()
    (folder / "shape.cu").write_bytes(data)
    try:
        return portlint("shape.cu", "--no-cache", "--output-format", "concise", "--timeout", "0", cwd=folder)
    finally:
        shutil.rmtree(folder)


def shape_rows(work: Path) -> None:
    for name, (count, shape) in SHAPES.items():
        half, full = (_shape_run(work, shape(size)) for size in (count // 2, count))
        ratio = full.wall / max(half.wall, 1e-3)
        verdict = "ok" if half.clean and full.clean and ratio <= LINEAR else "FAIL"
        row("shape", name, full, verdict, f"{ratio:.1f}x the half size's {half.wall:.1f} s (linear: 2 or less); "
            + full.summary[:30])


def _findings(run: Run) -> list[str]:
    return sorted(line for line in run.stdout.splitlines() if ": " in line and line[:1] not in " |=")


def cache_rows(work: Path, trials: int) -> None:
    from portlint.cache import CHECKSUM_BYTES, SNAPSHOT  # this checkout's

    project = work / "cache-project"
    shutil.copytree(FIXTURES / "demo", project)
    (project / ".git").mkdir(exist_ok=True)
    named = sorted(str(p.relative_to(project)) for p in project.rglob("*.cu"))[:2]
    runs = {"folder": ["."], "named": named}
    expected = {kind: _findings(portlint(*paths, "--no-cache", "--output-format", "concise", cwd=project))
                for kind, paths in runs.items()}
    cache = work / "cache-faults"
    rng = random.Random(27)
    tally = {"swap": 0, "copy": 0, "move": 0, "damage": 0}
    wrong, crashed = 0, 0
    for _ in range(trials):
        for paths in runs.values():
            portlint(*paths, "--cache-dir", str(cache), "--output-format", "concise", cwd=project)
        entries = sorted(cache.rglob("*.pickle"))
        if len(entries) < 2:
            continue
        first, second = rng.sample(entries, 2)
        fault = rng.choice(list(tally))
        tally[fault] += 1
        if fault == "swap":
            held = first.read_bytes()
            shutil.copyfile(second, first)
            second.write_bytes(held)
        elif fault == "copy":
            shutil.copyfile(first, second)
        elif fault == "move":
            os.replace(first, second)
        else:
            data = bytearray(first.read_bytes())
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            first.write_bytes(bytes(data))
        if rng.random() < 0.5:  # without the snapshots every file's own entry is read
            for entry in cache.rglob("*.pickle"):
                try:
                    if pickle.loads(entry.read_bytes()[CHECKSUM_BYTES:])[1] == SNAPSHOT:
                        entry.unlink()
                except Exception:  # noqa: BLE001 - a damaged entry: left for portlint to judge
                    pass
        for kind, paths in runs.items():
            run = portlint(*paths, "--cache-dir", str(cache), "--output-format", "concise", cwd=project)
            crashed += not run.clean
            wrong += _findings(run) != expected[kind]
    done = ", ".join(f"{n} {k}" for k, n in tally.items())
    row("cache", f"{trials} faults ({done}), folder + named runs", None,
        "ok" if not wrong and not crashed else "FAIL", f"{wrong} runs with other findings, {crashed} crashed")


# ---- the fuzzer -----------------------------------------------------------------------------------
def fuzz_row(work: Path, minutes: float, seed: int) -> None:
    summary = work / "fuzz.json"
    started = time.perf_counter()
    subprocess.run([sys.executable, str(HERE / "fuzz.py"), "--minutes", str(minutes), "--seed", str(seed),
                    "--json", str(summary), "--failures", str(work / "fuzz-failures")],
                   env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL)
    result = json.loads(summary.read_text())
    row("fuzz", f"seed {seed}: {result['cases']} cases in {(time.perf_counter() - started) / 60:.0f} min", None,
        "ok" if not result["distinct_failures"] else "FAIL",
        "; ".join(result["failures"])[:120] or "no traceback, no case over the budget")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=Path("/work/corpora"))
    parser.add_argument("--only", default="named,files,shapes,cache",
                        help="rows: named, files, shapes, cache, fuzz (comma-separated)")
    parser.add_argument("--whole", action="store_true", help="scan cutlass whole first (its peak memory)")
    parser.add_argument("--whole-cccl", action="store_true", help="and cccl (7+ GB; --jobs 1)")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--cache-trials", type=int, default=30)
    parser.add_argument("--fuzz-minutes", type=float, default=0)
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args()
    only = set(args.only.split(",")) | ({"fuzz"} if args.fuzz_minutes else set())
    sys.path.insert(0, str(REPO))
    print(f"portlint stress, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"  {'row':7} {'what':58} {'wall':>7}   {'peak':>6}     {'exit':>7}  {'':5} notes")
    with tempfile.TemporaryDirectory(prefix="portlint-stress-") as tmp:
        work = Path(tmp)
        global PYCACHE
        PYCACHE = work / "pycache"
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "portlint")], check=True,
                       env={**os.environ, "PYTHONPYCACHEPREFIX": str(PYCACHE)}, stdout=subprocess.DEVNULL)
        if "named" in only:
            named_rows(args.corpora, work, args.whole, args.whole_cccl)
        if "files" in only:
            files_row(work, args.files)
        if "shapes" in only:
            shape_rows(work)
        if "cache" in only:
            cache_rows(work, args.cache_trials)
        if "fuzz" in only:
            fuzz_row(work, args.fuzz_minutes, args.seed)
    print(f"\nload at the end: {os.getloadavg()[0]:.1f}")
    print("targets: a named file in cutlass and cccl, from the root and from above: cold <= 10 s and <= 1 GB, "
          "warm <= 1 s (PASS / MISS above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
