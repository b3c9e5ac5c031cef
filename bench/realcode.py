"""Scan real repositories with every rule and report what a user would hit on each.

    python bench/realcode.py --under /work/rc-mine            # every repository under a folder
    python bench/realcode.py path/to/repo other/repo --slow 2  # given repositories

Per repository: files scanned, seconds (wall clock, one process, `--jobs 1`), internal
errors (a check or the engine crashed: a bug in portlint), files skipped as unreadable or
too deep, and files whose analysis took more than `--slow` CPU seconds (default 10, the
`--timeout` default: each would be a budget hit in `portlint scan`). The bar is zero
internal errors and zero slow files. Each internal error and slow file is listed under the
table.

Every file's analysis is timed by wrapping `engine.analyze_file` around the real scan, so
the project rules and the central filters run as in `portlint scan`. The scan runs in this
process (`timeout = 0`: no worker processes, whose time this process could not see), so a
file that hangs hangs this run: that is what the `slow` column is there to show first.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from portlint import engine
from portlint.config import Config


def repositories(under: list[Path], given: list[Path]) -> list[Path]:
    found = list(given)
    for folder in under:
        found += sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    return found


def scan_repository(repo: Path, slow: float) -> dict:
    """Scan one repository; its numbers and the files behind them."""
    timings: dict[str, float] = {}
    analyze = engine.analyze_file

    def timed(candidate, *args, **kwargs):
        # CPU time: on a shared machine a file's wall time says more about its neighbours.
        started = time.process_time()
        try:
            return analyze(candidate, *args, **kwargs)
        finally:
            timings[engine.display_path(candidate.path)] = time.process_time() - started

    config = Config(root=repo, select=("ALL",), timeout=0)
    engine.analyze_file = timed
    started, cpu = time.perf_counter(), time.process_time()
    try:
        result = engine.scan([repo], config, jobs=1)
    finally:
        engine.analyze_file = analyze
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    internal = [str(p) for p in result.problems if p.internal]
    stopped = [str(p) for p in result.problems if p.timed_out]
    skipped = [str(p) for p in result.problems if not p.internal and p.message.startswith("skipped")]
    slow_files = sorted(((t, path) for path, t in timings.items() if t > slow), reverse=True)
    return {
        "repo": repo.name, "files": len(timings), "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
        "analysis_cpu_seconds": round(sum(timings.values()), 1), "findings": len(result.findings),
        "internal_errors": internal, "skipped": skipped, "budget_hits": stopped,
        "slow_files": [{"path": path, "seconds": round(t, 2)} for t, path in slow_files],
        "slowest": [{"path": path, "seconds": round(t, 2)} for t, path in
                    sorted(((t, p) for p, t in timings.items()), reverse=True)[:3]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=Path, help="repository directories")
    parser.add_argument("--under", action="append", type=Path, default=[],
                        help="scan every directory under this one as a repository (repeatable)")
    parser.add_argument("--slow", type=float, default=10.0, help="a file slower than this many seconds counts [10]")
    parser.add_argument("--json", type=Path, help="write every number and file as JSON here")
    args = parser.parse_args()
    repos = repositories(args.under, args.repos)
    if not repos:
        parser.error("name repositories or --under a folder of them")

    rows = []
    print(f"{'repository':44} {'files':>6} {'wall s':>7} {'CPU s':>7} {'internal':>8} {'skipped':>7} {'slow':>5}"
          "  slowest file (CPU s)")
    for repo in repos:
        row = scan_repository(repo, args.slow)
        rows.append(row)
        slowest = row["slowest"][0] if row["slowest"] else {"path": "-", "seconds": 0}
        print(f"{row['repo'][:44]:44} {row['files']:>6} {row['seconds']:>7.1f} {row['cpu_seconds']:>7.1f} "
              f"{len(row['internal_errors']):>8} "
              f"{len(row['skipped']):>7} {len(row['slow_files']) + len(row['budget_hits']):>5}  "
              f"{slowest['seconds']:.2f} s {slowest['path']}", flush=True)
    total = {key: sum(len(r[key]) for r in rows) for key in ("internal_errors", "budget_hits", "slow_files")}
    print(f"{'total':44} {sum(r['files'] for r in rows):>6} {sum(r['seconds'] for r in rows):>7.1f} "
          f"{sum(r['cpu_seconds'] for r in rows):>7.1f} "
          f"{total['internal_errors']:>8} {sum(len(r['skipped']) for r in rows):>7} "
          f"{total['slow_files'] + total['budget_hits']:>5}")
    for row in rows:
        for line in row["internal_errors"]:
            print(f"internal error: {row['repo']}: {line}")
        for item in row["slow_files"]:
            print(f"slower than {args.slow:g} s: {row['repo']}: {item['path']} ({item['seconds']} s CPU)")
        for line in row["budget_hits"]:
            print(f"budget hit: {row['repo']}: {line}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 1 if total["internal_errors"] or total["slow_files"] or total["budget_hits"] else 0


if __name__ == "__main__":
    sys.exit(main())
