"""Whether a speed change changed a finding: two portlints' JSON reports, compared.

    python bench/same_findings.py --a /path/to/checkout-before                 # this checkout = b
    python bench/same_findings.py --a ../before --b . /work/rc/* bench/corpus-quick
    python bench/same_findings.py --a ../before --save before.json             # scan a once, keep it
    python bench/same_findings.py --against before.json                         # then after each change

Each target folder (default: every repository under /work/rc, the dev set materialized, and
the quick benchmark corpus bench/corpus-quick, generated if missing) is scanned from its
root by each checkout (`python -m portlint scan . --output-format json --no-cache
--jobs 2 --timeout 0`, the checkout on PYTHONPATH). Reports are normalised: findings,
problems and the suppressed count, each list sorted, nothing that depends on the clock.
Prints, per target, "same" or the findings only one side has (up to --show of each), and
exits 0 when every target's reports are equal, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEV_SET = Path("/work/rc")


def default_targets() -> list[Path]:
    targets = sorted(p for p in DEV_SET.iterdir() if p.is_dir()) if DEV_SET.is_dir() else []
    sys.path.insert(0, str(HERE))
    import corpus  # noqa: PLC0415 - bench/ is not a package

    quick = HERE / "corpus-quick"
    corpus.ensure(quick, 2.0, 1234, False, corpus.DEFAULT_GPU_SHARE)
    return targets + [quick]


def scan(checkout: Path, target: Path, python: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    with tempfile.TemporaryFile() as out:
        proc = subprocess.run([python, "-m", "portlint", "scan", ".", "--output-format", "json", "--exit-zero",
                               "--no-cache", "--jobs", "2", "--timeout", "0"],
                              cwd=target, env=env, stdout=out, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise SystemExit(f"same_findings: {checkout} on {target} exited {proc.returncode}: "
                             f"{proc.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
        out.seek(0)
        return normalise(json.load(out))


def normalise(report: dict) -> dict:
    def key(item) -> str:
        return json.dumps(item, sort_keys=True)

    return {
        "findings": sorted((key(f) for f in report.get("findings", [])), key=str),
        "problems": sorted(key(p) for p in report.get("problems", [])),
        "suppressed": report.get("suppressed", 0),
    }


def scan_all(checkout: Path, targets: list[Path], python: str) -> dict[str, dict]:
    out = {}
    for target in targets:
        print(f"same_findings: {checkout.name or checkout} on {target.name} ...", file=sys.stderr, flush=True)
        out[str(target)] = scan(checkout, target, python)
    return out


def short(finding: str) -> str:
    f = json.loads(finding)
    loc = f.get("location") or {}
    start = (loc.get("start") or {}).get("line", "?")
    return f"{f.get('code', '?')} {loc.get('path', '?')}:{start} {f.get('message', f.get('path', ''))[:100]}"


def compare(a: dict[str, dict], b: dict[str, dict], show: int) -> bool:
    same = True
    for target in sorted(set(a) | set(b)):
        ra, rb = a.get(target), b.get(target)
        if ra is None or rb is None:
            print(f"  {target}: scanned by one side only")
            same = False
            continue
        if ra == rb:
            print(f"  {target}: same ({len(ra['findings'])} findings, {len(ra['problems'])} problems, "
                  f"{ra['suppressed']} suppressed)")
            continue
        same = False
        print(f"  {target}: DIFFERENT")
        for part in ("findings", "problems"):
            only_a = sorted(set(ra[part]) - set(rb[part]))
            only_b = sorted(set(rb[part]) - set(ra[part]))
            for side, items in (("a", only_a), ("b", only_b)):
                if items:
                    print(f"    {part} only in {side}: {len(items)}")
                    for item in items[:show]:
                        print(f"      {short(item) if part == 'findings' else item}")
        if ra["suppressed"] != rb["suppressed"]:
            print(f"    suppressed: a {ra['suppressed']}, b {rb['suppressed']}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare two portlints' findings on the dev set and the corpus.")
    parser.add_argument("targets", nargs="*", type=Path, help="folders to scan from (default: the dev set, "
                                                             "bench/corpus-quick)")
    parser.add_argument("--a", type=Path, help="the checkout before (on PYTHONPATH)")
    parser.add_argument("--b", type=Path, default=REPO, help="the checkout after (default: this one)")
    parser.add_argument("--save", type=Path, help="write a's normalised reports here and stop")
    parser.add_argument("--against", type=Path, help="a's reports as --save wrote them (a is not scanned)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of both")
    parser.add_argument("--show", type=int, default=10, help="differences listed per side and target")
    args = parser.parse_args(argv)
    if (args.a is None) == (args.against is None):
        parser.error("give one of --a CHECKOUT or --against FILE")
    targets = [t.resolve() for t in args.targets] or default_targets()
    for target in targets:
        if not target.is_dir():
            parser.error(f"{target}: not a folder")
    if args.against is not None:
        try:
            a = json.loads(args.against.read_text())
        except (OSError, ValueError) as exc:
            parser.error(f"--against {args.against}: {exc}")
        a = {t: r for t, r in a.items() if Path(t) in targets}
    else:
        a = scan_all(args.a.resolve(), targets, args.python)
        if args.save:
            args.save.write_text(json.dumps(a) + "\n")
            print(f"same_findings: a's reports written to {args.save}", file=sys.stderr)
            return 0
    b = scan_all(args.b.resolve(), targets, args.python)
    same = compare(a, b, args.show)
    print("same findings" if same else "findings DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
