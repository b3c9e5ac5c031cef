"""Speed and memory of `portlint scan` on real GPU code, interleaved with the baselines.

    python bench/real.py /work/rc                                  # the dev set's repositories
    python bench/real.py /work/rc --base ../portlint-5b7bc44 --semgrep /work/semgrep-venv/bin/semgrep
    python bench/real.py /work/rc --large /work/corpora/NVIDIA+cutlass --rounds 3 --json real.json

`bench/run.py` measures a generated corpus; this measures fetched public repositories: DIR
(a folder of repositories, scanned as one tree from DIR) and, with `--large`, one large GPU
project scanned from its root. Every command is a fresh process; the commands run in
rounds, each round running every command once (in an order rotated round by round), so a
slow stretch of a shared machine touches all of them alike. Each ratio is worked out within
a round and the median over rounds is reported, next to the median times.

Rows, for DIR:
- parse-only (bench/parse_only.py): find, read and parse every C-family and CMake file;
- `portlint scan DIR --no-cache --jobs 1` and `--jobs 2` (cold), and `--jobs 1` warm (a cache
  filled by an untimed run, nothing changed);
- one edited file (`--edited REPO/FILE`, default the median-sized `.cu` of the repository
  with the most files under DIR): its bytes change on every run (standard input,
  `--stdin-filename`), the rest of its repository cached by an untimed named-file run;
  next to `portlint --version`;
- `--base CHECKOUT`: the same portlint rows for another checkout (run with PYTHONPATH), in
  the same rounds;
- `--semgrep EXE`: semgrep with the ten regex rules of bench/semgrep_rules.yml, one job, on
  the C-family files parse-only reads.

For `--large DIR`: parse-only, `--jobs 1` and `--jobs 2` cold (and the base's).

Measured per run: wall time; CPU time (user + system of the command and every child it
waited for); peak RSS of the largest process (`ru_maxrss`); and, for the rows marked `all`
(`--jobs 2`), the peak of the summed proportional set size (PSS, /proc/PID/smaps_rollup)
of the command's whole process tree, sampled every 50 ms. A benchmark, not a test: the
exit code is 0 whatever the numbers; the targets are marked PASS or MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import parse_only  # noqa: E402 - bench/ is not a package

MIB = 1024 * 1024
RULES = HERE / "semgrep_rules.yml"

# Runs one command; prints wall, CPU, ru_maxrss and (with `tree`) the peak summed PSS.
_WRAPPER = r"""
import json, os, resource, subprocess, sys, threading, time
cmd, cwd, env, tree, stdin_path = json.loads(sys.argv[1])

def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []

def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0

peak = [0]
stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
t0 = time.perf_counter()
proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
def sample():
    while proc.poll() is None:
        todo, total = [proc.pid], 0
        while todo:
            pid = todo.pop()
            total += pss(pid)
            todo.extend(children(pid))
        peak[0] = max(peak[0], total)
        time.sleep(0.05)
if tree:
    threading.Thread(target=sample, daemon=True).start()
err = proc.stderr.read()
proc.wait()
seconds = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "seconds": seconds, "cpu": ru.ru_utime + ru.ru_stime,
                  "maxrss_kib": ru.ru_maxrss, "tree_pss_kib": peak[0],
                  "stderr": err.decode("utf-8", "replace")[-2000:]}))
"""


class BenchError(Exception):
    """Printed as one line, exit code 2."""


class Row:
    def __init__(self, key: str, label: str, cmd: list[str], cwd: Path, env: dict, tree: bool = False,
                 stdin: Path | None = None, ok=(0,)) -> None:
        self.key, self.label, self.cmd, self.cwd, self.env, self.tree = key, label, cmd, cwd, env, tree
        self.stdin, self.ok = stdin, ok
        self.runs: list[dict] = []

    def run(self) -> dict:
        payload = json.dumps([self.cmd, str(self.cwd), self.env, self.tree, str(self.stdin) if self.stdin else None])
        proc = subprocess.run([sys.executable, "-c", _WRAPPER, payload], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BenchError(f"measuring wrapper failed: {proc.stderr.strip().splitlines()[-1:]}")
        result = json.loads(proc.stdout)
        if result["rc"] not in self.ok:
            raise BenchError(f"{self.label}: `{shlex.join(self.cmd)}` exited {result['rc']}: "
                             f"{result['stderr'].strip().splitlines()[-1:]}")
        self.runs.append(result)
        return result

    def median(self, field: str) -> float:
        return statistics.median(r[field] for r in self.runs)

    def peak(self, field: str) -> float:
        return max(r[field] for r in self.runs)


def portlint_env(checkout: Path, pycache: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)  # both checkouts start with compiled bytecode
    return env


def c_family_files(top: Path) -> list[str]:
    return [p for p, language in parse_only.files([str(top)]) if language == "cuda"]


def pick_edited(top: Path) -> Path:
    """The median-sized `.cu` of the repository under `top` with the most files."""
    repos = [d for d in sorted(top.iterdir()) if d.is_dir()] or [top]
    repo = max(repos, key=lambda d: sum(1 for _ in d.rglob("*")))
    cu = sorted((p.stat().st_size, str(p)) for p in repo.rglob("*.cu") if p.is_file())
    if not cu:
        raise BenchError(f"{repo}: no .cu file to edit (pass --edited)")
    return Path(cu[len(cu) // 2][1])


def project_root(path: Path) -> Path:
    """The nearest folder above `path` with a `.git`, `pyproject.toml`, `setup.py` or `portlint.toml`."""
    for parent in path.parents:
        if any((parent / marker).exists() for marker in (".git", "pyproject.toml", "setup.py", "portlint.toml")):
            return parent
    return path.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="portlint on real GPU code, interleaved with its baselines.")
    parser.add_argument("dir", type=Path, help="a folder of repositories (e.g. the dev set materialized)")
    parser.add_argument("--large", type=Path, help="one large GPU project, scanned from its root")
    parser.add_argument("--base", type=Path, help="another portlint checkout to compare with (same rounds)")
    parser.add_argument("--semgrep", help="a semgrep executable: ten regex rules (bench/semgrep_rules.yml)")
    parser.add_argument("--edited", type=Path, help="the edited file of the pre-commit row")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every command (default 3)")
    parser.add_argument("--large-rounds", type=int, default=1, help="rounds of the --large rows (default 1)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of portlint and parse-only")
    parser.add_argument("--json", help="also write every run's numbers to this file")
    args = parser.parse_args(argv)
    top = args.dir.resolve()
    if not top.is_dir():
        raise BenchError(f"{args.dir}: not a folder")
    python = args.python
    work = Path(tempfile.mkdtemp(prefix="portlint-real-"))
    pycache = work / "pycache"
    sides = {"new": REPO}
    if args.base:
        if not (args.base / "portlint" / "__init__.py").is_file():
            raise BenchError(f"--base {args.base}: no portlint checkout there")
        sides["base"] = args.base.resolve()
    edited = (args.edited or pick_edited(top)).resolve()
    edited_root = project_root(edited)
    edited_input = work / "edited.input"
    flags = ["--output-format", "concise", "--exit-zero"]
    rows: list[Row] = [Row("parse", "parse-only (tree-sitter)", [python, str(HERE / "parse_only.py"), str(top)],
                           top, dict(os.environ))]
    try:
        for side, checkout in sides.items():
            env = portlint_env(checkout, pycache)
            scan = [python, "-m", "portlint", "scan"]
            cache = work / f"cache-{side}"
            edited_cache = work / f"edited-cache-{side}"
            print(f"real: preparing {side} ({checkout}) ...", file=sys.stderr, flush=True)
            # Untimed: fill the warm cache and the edited file's project context (and the bytecode).
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            subprocess.run(scan + [str(top), *flags, "--cache-dir", str(cache)], cwd=top, env=env, check=True, **quiet)
            subprocess.run(scan + [str(edited), *flags, "--cache-dir", str(edited_cache)], cwd=edited_root, env=env,
                           check=True, **quiet)
            rows += [
                Row(f"{side}_j1", f"{side}: scan --jobs 1 (cold)", scan + [str(top), *flags, "--no-cache", "--jobs", "1"],
                    top, env),
                Row(f"{side}_j2", f"{side}: scan --jobs 2 (cold)", scan + [str(top), *flags, "--no-cache", "--jobs", "2"],
                    top, env, tree=True),
                Row(f"{side}_warm", f"{side}: scan --jobs 1 (warm)",
                    scan + [str(top), *flags, "--jobs", "1", "--cache-dir", str(cache)], top, env),
                Row(f"{side}_version", f"{side}: portlint --version", [python, "-m", "portlint", "--version"], top, env),
                Row(f"{side}_edited", f"{side}: one edited file, rest cached",
                    scan + ["-", "--stdin-filename", str(edited), *flags, "--cache-dir", str(edited_cache)],
                    edited_root, env, stdin=edited_input),
            ]
        if args.semgrep:
            files = c_family_files(top)
            rows.append(Row("semgrep", "semgrep, 10 regex rules, --jobs 1",
                            [args.semgrep, "scan", "--config", str(RULES), "--jobs", "1", "--metrics", "off",
                             "--disable-version-check", "--max-target-bytes", "0", "--no-git-ignore", "--quiet",
                             "--timeout", "0", *files], top, dict(os.environ), ok=(0, 1)))
        original = edited.read_bytes()
        load = [os.getloadavg()[0]]
        for round_ in range(args.rounds):
            shift = round_ % len(rows)
            for row in rows[shift:] + rows[:shift]:
                # The pre-commit case: new bytes on every run.
                edited_input.write_bytes(original + f"\n// edited {time.time_ns()}\n".encode())
                print(f"  round {round_ + 1}: {row.label} ...", end="", file=sys.stderr, flush=True)
                result = row.run()
                print(f" {result['seconds']:.2f} s", file=sys.stderr, flush=True)
        large_rows: list[Row] = []
        if args.large:
            big = args.large.resolve()
            large_rows.append(Row("large_parse", "parse-only", [python, str(HERE / "parse_only.py"), str(big)], big,
                                  dict(os.environ)))
            for side, checkout in sides.items():
                env = portlint_env(checkout, pycache)
                scan = [python, "-m", "portlint", "scan", ".", *flags, "--no-cache"]
                large_rows += [Row(f"large_{side}_j1", f"{side}: scan --jobs 1 (cold)", scan + ["--jobs", "1"], big, env),
                               Row(f"large_{side}_j2", f"{side}: scan --jobs 2 (cold)", scan + ["--jobs", "2"], big,
                                   env, tree=True)]
            for round_ in range(args.large_rounds):
                shift = round_ % len(large_rows)
                for row in large_rows[shift:] + large_rows[:shift]:
                    print(f"  large round {round_ + 1}: {row.label} ...", end="", file=sys.stderr, flush=True)
                    print(f" {row.run()['seconds']:.2f} s", file=sys.stderr, flush=True)
        load.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    stats = json.loads(subprocess.run([python, str(HERE / "parse_only.py"), str(top)], capture_output=True,
                                      text=True, check=True).stdout)
    report = {"dir": str(top), "stats": stats, "edited": str(edited), "load": load, "cpus": os.cpu_count(),
              "rounds": args.rounds, "sides": {k: str(v) for k, v in sides.items()},
              "rows": {r.key: {"label": r.label, "command": r.cmd, "runs": r.runs} for r in rows},
              "large": {"dir": str(args.large), "rows": {r.key: {"label": r.label, "runs": r.runs}
                                                         for r in large_rows}} if args.large else None}
    text = render(rows, large_rows, report, sides)
    sys.stdout.write(text)
    if args.json:
        for group in (report["rows"], (report["large"] or {}).get("rows", {})):
            for entry in group.values():
                for run in entry["runs"]:
                    run.pop("stderr", None)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def ratio(a: Row, b: Row, field: str = "seconds") -> float:
    """The median over rounds of a's time / b's time in the same round."""
    return statistics.median(x[field] / y[field] for x, y in zip(a.runs, b.runs))


def render(rows: list[Row], large_rows: list[Row], report: dict, sides: dict) -> str:
    by = {r.key: r for r in rows}
    s = report["stats"]
    lines = [
        f"portlint on real GPU code: {report['dir']}: {s['files']} C-family/CMake files, {s['bytes'] / MIB:.1f} MiB, "
        f"{s['lines']:,} lines; {report['rounds']} interleaved rounds, medians",
        f"  load average {report['load'][0]:.2f} before, {report['load'][-1]:.2f} after, on {report['cpus']} CPUs"
        + (" (busy: wall times inflated; CPU steadier)" if max(report["load"]) > report["cpus"] else ""),
        "", f"  {'command':<40}{'wall':>9}{'CPU':>9}{'peak RSS':>10}{'all procs':>11}",
    ]

    def table(group: list[Row]) -> None:
        for r in group:
            total = f"{r.peak('tree_pss_kib') / 1024:>7.0f} MiB" if r.tree else ""
            lines.append(f"  {r.label:<40}{r.median('seconds'):>7.2f} s{r.median('cpu'):>7.2f} s"
                         f"{r.peak('maxrss_kib') / 1024:>6.0f} MiB{total:>11}")

    table(rows)
    lines += ["", f"  {'target (issue: speed on real GPU code)':<52}" + "".join(f"{side:>10}" for side in sides)
              + f"{'limit':>10}  result (new)"]

    def target(what: str, values: dict, limit: float, direction: str, unit: str = "×") -> None:
        new = values.get("new")
        ok = new is not None and (new <= limit if direction == "<=" else new >= limit)
        cells = "".join(f"{values[side]:>9.2f}{unit}" if values.get(side) is not None else f"{'-':>10}"
                        for side in sides)
        lines.append(f"  {what:<52}{cells}{direction:>4} {limit:<5g}  {'PASS' if ok else 'MISS'}")

    parse = by["parse"]
    target("cold --jobs 1 / parse-only, CPU", {s: ratio(by[f"{s}_j1"], parse, "cpu") for s in sides}, 3.5, "<=")
    target("cold --jobs 1 / parse-only, wall", {s: ratio(by[f"{s}_j1"], parse) for s in sides}, 3.5, "<=")
    target("peak RSS --jobs 1 / parse-only", {s: by[f"{s}_j1"].peak("maxrss_kib") / parse.peak("maxrss_kib")
                                               for s in sides}, 1.5, "<=")
    target("warm re-scan / cold --jobs 1", {s: ratio(by[f"{s}_warm"], by[f"{s}_j1"]) for s in sides}, 0.05, "<=")
    target("--jobs 1 / --jobs 2 (speed-up)", {s: ratio(by[f"{s}_j1"], by[f"{s}_j2"]) for s in sides}, 1.7, ">=")
    target("one edited file / portlint --version", {s: ratio(by[f"{s}_edited"], by[f"{s}_version"]) for s in sides},
           2.0, "<=")
    if "semgrep" in by:
        target("cold --jobs 1 / semgrep (10 rules), wall", {s: ratio(by[f"{s}_j1"], by["semgrep"]) for s in sides},
               1.0, "<=")
        target("cold --jobs 1 / semgrep (10 rules), CPU", {s: ratio(by[f"{s}_j1"], by["semgrep"], "cpu")
                                                           for s in sides}, 1.0, "<=")
    if large_rows:
        lb = {r.key: r for r in large_rows}
        lines += ["", f"  large project: {report['large']['dir']} ({len(lb['large_parse'].runs)} round(s))"]
        table(large_rows)
        lparse = lb["large_parse"]
        target("large: cold --jobs 1 / parse-only, CPU",
               {s: ratio(lb[f"large_{s}_j1"], lparse, "cpu") for s in sides}, 3.5, "<=")
        target("large: --jobs 2, all processes' peak PSS, GiB",
               {s: lb[f"large_{s}_j2"].peak("tree_pss_kib") / MIB for s in sides}, 1.5, "<=", " ")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"real: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except subprocess.CalledProcessError as exc:
        print(f"real: error: `{shlex.join(map(str, exc.cmd))}` exited {exc.returncode}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
