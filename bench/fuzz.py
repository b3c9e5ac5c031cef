"""A longer fuzz run than the test suite's: the cases and properties of tests/fuzzing.py.

    python bench/fuzz.py --minutes 30              # before a release
    python bench/fuzz.py --minutes 1 --seed 7      # a quick look, reproducible

Runs batches of Hypothesis examples, each batch with its own seed, until the time is up.
A batch that finds a failure shrinks it (Hypothesis) and its smallest example is printed
and written to --failures (one file per distinct failure); the run then goes on with the
next batch. Prints the cases run, the failures and the time, and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

import fuzzing  # noqa: E402

BATCH = 200


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None, help="seed of the batch seeds [default: random]")
    parser.add_argument("--failures", type=Path, default=HERE / "fuzz-failures",
                        help="where each distinct failure is written [default: bench/fuzz-failures]")
    parser.add_argument("--json", type=Path, help="write the summary as JSON here")
    args = parser.parse_args()

    seeds = random.Random(args.seed)
    deadline = time.monotonic() + args.minutes * 60
    started = time.monotonic()
    runs = {"cases": 0, "batches": 0}
    failures: dict[str, str] = {}  # first line of each distinct failure -> its report

    with tempfile.TemporaryDirectory(prefix="portlint-fuzz-") as tmp:
        root = Path(tmp)

        @settings(max_examples=BATCH, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
        @given(files=fuzzing.projects())
        def batch(files) -> None:
            runs["cases"] += 1
            found = fuzzing.check_case(files, root)
            assert not found, "\n".join(found)

        while time.monotonic() < deadline:
            batch_seed = seeds.getrandbits(32)
            runs["batches"] += 1
            try:
                seed(batch_seed)(batch)()
            except Exception as exc:  # noqa: BLE001 - a failure found: recorded, the run goes on
                notes = "\n".join(getattr(exc, "__notes__", []))
                report = f"batch seed {batch_seed}\n{exc}\n{notes}"
                key = _identity(str(exc))
                if key not in failures:
                    failures[key] = report
                    print(f"FAILURE {len(failures)}: {key}\n{notes}\n", flush=True)
            elapsed = time.monotonic() - started
            print(f"{elapsed / 60:5.1f} min: {runs['cases']} cases, {len(failures)} distinct failures", flush=True)

    elapsed = time.monotonic() - started
    if failures:
        args.failures.mkdir(parents=True, exist_ok=True)
        for number, report in enumerate(failures.values(), start=1):
            (args.failures / f"failure-{number}.txt").write_text(report, encoding="utf-8")
    summary = {"minutes": round(elapsed / 60, 1), "cases": runs["cases"], "batches": runs["batches"],
               "distinct_failures": len(failures), "failures": list(failures)}
    print(f"fuzz: {runs['cases']} cases in {elapsed / 60:.1f} min ({runs['cases'] / elapsed:.1f}/s), "
          f"{len(failures)} distinct failures" + (f", written to {args.failures}" if failures else ""))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 1 if failures else 0


def _identity(message: str) -> str:
    """A failure's kind, without the parts that change from case to case."""
    first = message.strip().splitlines()[0] if message.strip() else "?"
    if first.startswith("exception:"):
        lines = [line for line in message.splitlines() if line.strip()]
        return "exception: " + lines[-1].strip()[:200] if len(lines) > 1 else first
    return first[:200]


if __name__ == "__main__":
    sys.exit(main())
