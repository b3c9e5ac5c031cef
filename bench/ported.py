"""The ported corpus: error and warning findings on public projects whose ROCm build ships.

    python bench/ported.py --root ../corpora                 # the table
    python bench/ported.py --root ../corpora --json out.json # the same, and every finding as JSON
    python bench/ported.py --root ../corpora --list          # every error/warning: path:line code message
    python bench/ported.py --root ../corpora --only faiss,cupy
    python bench/ported.py --from out.json --list --sample 8  # a saved run again: no scan

A finished port should pass: on these projects every error or warning is a false alarm to
fix or a real residual hazard to show. The projects, their commits and the evidence that
their ROCm build ships are in `bench/ported_projects.toml`. This script fetches nothing:
each project must already be checked out (its `commit`) under ROOT as `owner+name`.

Each project is scanned as a user would: `portlint scan .` from its root (the whole
repository, its own `.gitignore`), `--output-format json --exit-zero --no-cache`, one
project at a time. The rate is error and warning findings per 10,000 C-family lines: the
non-blank lines of the files portlint reads as C, C++, CUDA or HIP (the files discovery
finds in the same tree, `.gitignore` honoured). Findings in Python and build files count
in the numerator too: a user sees them.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

from portlint.config import find_config_file, load
from portlint.discover import discover
from portlint.source import CUDA

MANIFEST = Path(__file__).with_name("ported_projects.toml")
COUNTED = ("error", "warning")  # what a finished port must not get
PER = 10_000


def projects(manifest: Path) -> list[dict]:
    with manifest.open("rb") as fh:
        return tomllib.load(fh)["project"]


def checkout(root: Path, project: dict) -> Path:
    return root / project["repo"].replace("/", "+")


def c_family_lines(tree: Path) -> tuple[int, int]:
    """(files, non-blank lines) of the C-family files a scan of `tree` reads."""
    config = load(find_config_file(tree), tree)
    candidates, _ = discover([tree], config)
    files = lines = 0
    for c in candidates:
        if c.language != CUDA:
            continue
        files += 1
        with open(c.absolute, "rb") as fh:
            lines += sum(1 for line in fh if line.strip())
    return files, lines


def scan(tree: Path, portlint: list[str], jobs: int, timeout: float) -> tuple[dict, float]:
    """portlint's JSON report of `tree`, scanned from its root, and the wall seconds it took."""
    started = time.perf_counter()
    done = subprocess.run(
        [*portlint, "scan", ".", "--output-format", "json", "--exit-zero", "--no-cache", "--jobs", str(jobs)],
        cwd=tree, capture_output=True, timeout=timeout,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        raise RuntimeError(f"portlint exited {done.returncode}: " + " | ".join(tail))
    return json.loads(done.stdout), seconds


def line_of(finding: dict) -> int:
    loc = finding.get("location") or {}
    return (loc.get("start") or {}).get("line") or 0


def measure(project: dict, tree: Path, args) -> dict:
    files, lines = c_family_lines(tree)
    report, seconds = scan(tree, args.portlint, args.jobs, args.scan_timeout)
    counted = [f for f in report["findings"] if f["severity"] in COUNTED]
    return {
        "name": project["name"], "repo": project["repo"], "commit": project["commit"],
        "c_files": files, "c_lines": lines, "seconds": round(seconds, 1),
        "errors": sum(f["severity"] == "error" for f in counted),
        "warnings": sum(f["severity"] == "warning" for f in counted),
        "notes": sum(f["severity"] == "note" for f in report["findings"]),
        "problems": report.get("problems", []),
        "findings": [
            {"code": f["code"], "severity": f["severity"], "path": (f.get("location") or {}).get("path"),
             "line": line_of(f), "message": f["message"]}
            for f in counted
        ],
    }


def rate(count: int, lines: int) -> float:
    return PER * count / lines if lines else 0.0


def table(results: list[dict]) -> str:
    rows = [f"{'project':<22} {'C files':>8} {'C lines':>9} {'errors':>7} {'warnings':>9} {'notes':>6}"
            f" {'E+W /10k':>9} {'secs':>6}"]
    for r in results:
        if "missing" in r or "failed" in r:
            rows.append(f"{r['name']:<22} {r.get('missing') or r.get('failed')}")
            continue
        ew = r["errors"] + r["warnings"]
        rows.append(f"{r['name']:<22} {r['c_files']:>8} {r['c_lines']:>9} {r['errors']:>7} {r['warnings']:>9}"
                    f" {r['notes']:>6} {rate(ew, r['c_lines']):>9.2f} {r['seconds']:>6}")
    done = [r for r in results if "findings" in r]
    lines = sum(r["c_lines"] for r in done)
    errors, warnings = sum(r["errors"] for r in done), sum(r["warnings"] for r in done)
    rows.append(f"{'overall':<22} {sum(r['c_files'] for r in done):>8} {lines:>9} {errors:>7} {warnings:>9}"
                f" {sum(r['notes'] for r in done):>6} {rate(errors + warnings, lines):>9.2f}"
                f" {round(sum(r['seconds'] for r in done), 1):>6}")
    worst = max((rate(r["errors"] + r["warnings"], r["c_lines"]) for r in done), default=0.0)
    if not done:
        rows.append("targets: no project measured")
        return "\n".join(rows)
    rows.append(f"targets: overall <= 0.2 /10k ({'PASS' if rate(errors + warnings, lines) <= 0.2 else 'MISS'}),"
                f" no project above 1 /10k ({'PASS' if worst <= 1 else 'MISS'}: worst {worst:.2f})")

    per_rule: dict[str, Counter] = {}
    for r in done:
        for f in r["findings"]:
            per_rule.setdefault(f["code"], Counter())[r["name"]] += 1
    rows += ["", f"{'rule':<6} {'findings':>8} {'/10k':>6}  projects (findings)"]
    for code, by_project in sorted(per_rule.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        n = sum(by_project.values())
        spread = ", ".join(f"{name} {k}" for name, k in by_project.most_common())
        rows.append(f"{code:<6} {n:>8} {rate(n, lines):>6.2f}  {spread}")
    problems = [(r["name"], p) for r in done for p in r["problems"]]
    if problems:
        rows += ["", "problems portlint reported (unreadable files, time-outs, internal errors):"]
        rows += [f"  {name}: {p['path']}: {p['message']}" for name, p in problems]
    return "\n".join(rows)


def listing(results: list[dict], sample: int, seed: int) -> str:
    """Every counted finding, or with `sample`, up to that many per rule per project chosen
    at random (a fixed seed: the same sample each time for the same findings)."""
    out = []
    for r in results:
        by_rule: dict[str, list[dict]] = {}
        for f in r.get("findings", []):
            by_rule.setdefault(f["code"], []).append(f)
        for code, found in sorted(by_rule.items()):
            chosen = found
            if sample and len(found) > sample:
                chosen = sorted(random.Random(f"{seed}:{r['name']}:{code}").sample(found, sample),
                                key=lambda f: (f["path"] or "", f["line"]))
            for f in chosen:
                out.append(f"{r['name']}: {f['path']}:{f['line']}: {f['code']} [{f['severity']}] {f['message']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="folder holding the checkouts (owner+name)")
    parser.add_argument("--from", dest="saved", type=Path, help="print a run saved with --json instead of scanning")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--only", default="", help="comma-separated project names")
    parser.add_argument("--jobs", type=int, default=2, help="portlint --jobs (default 2)")
    parser.add_argument("--portlint", default=f"{sys.executable} -m portlint",
                        help="the command that runs portlint (default: this Python's -m portlint)")
    parser.add_argument("--scan-timeout", type=float, default=1800, help="seconds one project's scan may take")
    parser.add_argument("--json", type=Path, help="write the numbers and every counted finding here")
    parser.add_argument("--list", action="store_true", help="print every error/warning finding after the table")
    parser.add_argument("--sample", type=int, default=0, help="with --list: at most N per rule per project, at random")
    parser.add_argument("--seed", type=int, default=22, help="with --sample: the random seed")
    args = parser.parse_args(argv)
    args.portlint = args.portlint.split()

    if args.saved is None and args.root is None:
        parser.error("give --root (the checkouts to scan) or --from (a saved run)")
    if args.saved is not None:
        try:
            results = json.loads(args.saved.read_text(encoding="utf-8"))["projects"]
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"{args.saved}: not a run saved with --json ({exc})")
        return report(results, args)
    chosen = projects(args.manifest)
    if args.only:
        names = set(args.only.split(","))
        if unknown := names - {p["name"] for p in chosen}:
            parser.error(f"not in {args.manifest.name}: {', '.join(sorted(unknown))}")
        chosen = [p for p in chosen if p["name"] in names]
    results = []
    for project in chosen:
        tree = checkout(args.root, project)
        if not tree.is_dir():
            results.append({"name": project["name"], "missing": f"not checked out: {tree}"})
            continue
        print(f"scanning {project['name']} ...", file=sys.stderr, flush=True)
        try:
            results.append(measure(project, tree, args))
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
            results.append({"name": project["name"], "failed": f"scan failed: {exc}"})
    return report(results, args)


def report(results: list[dict], args) -> int:
    print(table(results))
    if args.list:
        print()
        print(listing(results, args.sample, args.seed))
    if args.json and not args.saved:
        args.json.write_text(json.dumps({"projects": results}, indent=1) + "\n", encoding="utf-8")
    # A project not checked out or not scanned makes the overall row a different corpus.
    return 1 if any("missing" in r or "failed" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
