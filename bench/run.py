"""Benchmark `portlint scan` against raw tree-sitter parsing of the same files, with targets.

    python bench/run.py                  # the targets run: 20 MiB corpus, best of 3
    python bench/run.py --quick          # a quick look: 2 MiB corpus of its own, one run each
    python bench/run.py --gpu-share 1    # an all-GPU corpus (every file kernels, CUDA headers, ...)

Generates (or reuses) a deterministic CUDA/C++/CMake corpus (bench/corpus.py), then times
each command in a fresh process so interpreter start-up and imports count alike:

- parse-only: bench/parse_only.py reads every file and parses it with tree-sitter (baseline);
- parse + walk: the same, plus a TreeCursor visit of every node from Python;
- cold scans: `portlint scan CORPUS --output-format concise --exit-zero --no-cache`, with
  `--jobs 1` and `--jobs 2`;
- a warm re-scan: `--jobs 1` with a result cache filled by an untimed run, nothing changed;
- one file: parse-only and `portlint scan FILE --no-cache` (the pre-commit case), with
  `python -c pass` and `portlint --version` as start-up floors;
- deep mode (where libclang is installed; `--no-deep` skips it): `portlint scan --deep
  --jobs 2` of the corpus's CUDA translation units (`--deep-units`, evenly picked), cold and
  warm, next to the fast scan of the same files.

Each time is the best of --repeat runs (wall clock, time.perf_counter). Peak memory is
resource.getrusage(RUSAGE_CHILDREN).ru_maxrss of a wrapper process that ran only that
command: the largest single process (the scan or one of its workers), not their sum.
The table ends with each target, the measured ratio and PASS or MISS (a benchmark, not a
test: the exit code does not depend on them). See bench/README.md for how to read it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus as corpus_mod  # noqa: E402 - bench/ is not a package

MIB = 1024 * 1024

# (key, what, limit, direction): the targets of issue "Adoption and scale", parts 3 and 4.
TARGETS = (
    ("ratio_jobs1", "cold scan --jobs 1 / parse-only", 1.2, "<="),
    ("speedup_jobs2", "--jobs 1 / --jobs 2 (speed-up)", 1.6, ">="),
    ("ratio_warm", "warm re-scan / cold scan", 0.1, "<="),
    ("one_file_seconds", "one edited file, project cached, seconds", 0.3, "<="),
)
QUICK_SIZE_MB = 2.0
DEEP_TARGET = ("ratio_deep_warm", "deep warm / deep cold", 0.1, "<=")

# Runs one command in a child process and reports its wall time and rusage as JSON.
_WRAPPER = r"""
import json, os, resource, subprocess, sys, time
cmd, cwd, capture = json.loads(sys.argv[1])
with open(os.devnull, "wb") as devnull:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE if capture else devnull, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "rc": proc.returncode, "seconds": seconds, "maxrss_kib": ru.ru_maxrss,
    "cpu_seconds": ru.ru_utime + ru.ru_stime,
    "stdout": proc.stdout.decode("utf-8", "replace") if capture else "",
    "stderr": proc.stderr.decode("utf-8", "replace")[-4000:],
}))
"""


class BenchError(Exception):
    """Printed as one line, exit code 2."""


# ---- finding the tools --------------------------------------------------------------
def find_portlint(given: str | None) -> Path:
    if given:
        found = shutil.which(given) or (given if Path(given).is_file() else None)
        if not found:
            raise BenchError(f"--portlint {given}: no such executable")
        return Path(found)
    beside = Path(sys.executable).parent / "portlint"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("portlint")
    if found:
        return Path(found)
    raise BenchError(
        f"portlint is not installed: no `portlint` beside {sys.executable} or on PATH "
        "(run `pip install -e .` in the repository, or pass --portlint PATH)"
    )


def find_python(given: str | None, portlint: Path) -> str:
    """The interpreter portlint runs on, so both sides pay the same start-up."""
    if given:
        found = shutil.which(given)
        if not found:
            raise BenchError(f"--python {given}: no such executable")
        return found
    try:
        with portlint.open("rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        first = ""
    if first.startswith("#!"):
        parts = first[2:].split()
        if parts and Path(parts[0]).name == "env" and len(parts) > 1:
            parts = [shutil.which(parts[1]) or ""]
        if parts and parts[0] and Path(parts[0]).is_file():
            return parts[0]
    return sys.executable


def probe(python: str, portlint: Path) -> dict:
    script = (
        "import json, os, sys, importlib.metadata as m\n"
        "import tree_sitter, tree_sitter_cuda, tree_sitter_cmake\n"
        "v = lambda d: m.version(d)\n"
        "print(json.dumps({'python': sys.version.split()[0], 'tree_sitter': v('tree-sitter'),"
        " 'tree_sitter_cuda': v('tree-sitter-cuda'), 'tree_sitter_cmake': v('tree-sitter-cmake')}))\n"
    )
    proc = subprocess.run([python, "-c", script], capture_output=True, text=True, env=CHILD_ENV)
    if proc.returncode != 0:
        raise BenchError(f"{python} cannot import tree_sitter and its cuda/cmake grammars "
                         f"({_last_line(proc.stderr)}); pass --python PATH of portlint's interpreter")
    env = json.loads(proc.stdout)
    proc = subprocess.run([str(portlint), "--version"], capture_output=True, text=True, env=CHILD_ENV)
    if proc.returncode != 0:
        raise BenchError(f"`{portlint} --version` failed: {_last_line(proc.stderr or proc.stdout)}")
    env["portlint"] = proc.stdout.strip().rsplit(" ", 1)[-1]
    env["cpus"] = os.cpu_count()
    return env


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


# ---- running -----------------------------------------------------------------------
# The environment of every measured command (set in main): bytecode caching on or off.
CHILD_ENV: dict[str, str] | None = None


def child_env(no_cache: bool) -> tuple[dict[str, str], str | None]:
    """Measure portlint as installed for a user: its modules' bytecode cached after the first run.

    Some sandboxes set PYTHONDONTWRITEBYTECODE, which makes every run compile portlint's own
    sources again (site-packages were compiled at install). The cache goes to a directory
    of its own (PYTHONPYCACHEPREFIX), never into the source tree.
    """
    env = dict(os.environ)
    if no_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
        return env, None
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    prefix = env.get("PYTHONPYCACHEPREFIX") or str(Path(tempfile.gettempdir()) / "portlint-bench-pycache")
    env["PYTHONPYCACHEPREFIX"] = prefix
    return env, prefix


def run_once(cmd: list[str], cwd: Path, capture: bool = False, ok_codes=(0,)) -> dict:
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps([cmd, str(cwd), capture])],
                          capture_output=True, text=True, env=CHILD_ENV)
    if proc.returncode != 0:
        raise BenchError(f"measuring wrapper failed: {_last_line(proc.stderr)}")
    result = json.loads(proc.stdout)
    if result["rc"] not in ok_codes:
        shown = " ".join(Path(cmd[0]).name if i == 0 else c for i, c in enumerate(cmd))
        raise BenchError(f"`{shown}` exited {result['rc']}: {_last_line(result['stderr'])}")
    return result


def measure(label: str, cmd: list[str], cwd: Path, repeat: int) -> dict:
    print(f"  {label} ...", end="", file=sys.stderr, flush=True)
    try:
        runs = [run_once(cmd, cwd) for _ in range(repeat)]
    except BenchError:
        print(file=sys.stderr)
        raise
    best = min(runs, key=lambda r: r["seconds"])
    print(f" {best['seconds']:.3f} s", file=sys.stderr)
    return {
        "label": label,
        "command": cmd,
        "seconds": best["seconds"],
        "runs": [round(r["seconds"], 4) for r in runs],
        "cpu_seconds": min(r["cpu_seconds"] for r in runs),
        "peak_rss_mib": max(r["maxrss_kib"] for r in runs) / 1024,
        "stderr_lines": len([line for line in best["stderr"].splitlines() if line.strip()]),
    }


def pick_single_file(root: Path) -> Path:
    """The median-sized kernel file (a .cu under a `src/` directory), the pre-commit case."""
    files = sorted((p.stat().st_size, str(p)) for p in root.rglob("*.cu") if "src" in p.relative_to(root).parts)
    files = files or sorted((p.stat().st_size, str(p)) for p in root.rglob("*.cu"))
    if not files:
        raise BenchError(f"{root}: no .cu files in the corpus")
    return Path(files[len(files) // 2][1])


def check_findings(portlint: Path, target: Path, cwd: Path, jobs: int, cache: list[str]) -> dict:
    cmd = [str(portlint), "scan", str(target), "--output-format", "json", "--exit-zero", "--jobs", str(jobs), *cache]
    result = run_once(cmd, cwd, capture=True)
    try:
        payload = json.loads(result["stdout"])
    except ValueError:
        raise BenchError("`portlint scan --output-format json` did not print JSON") from None
    by_code: dict[str, int] = {}
    for f in payload.get("findings", []):
        by_code[f["code"]] = by_code.get(f["code"], 0) + 1
    return {
        "findings": len(payload.get("findings", [])),
        "by_code": dict(sorted(by_code.items())),
        "suppressed": payload.get("suppressed", 0),
        "problems": len(payload.get("problems", [])),
        "digest": hashlib.sha256(json.dumps(payload.get("findings", []), sort_keys=True).encode()).hexdigest(),
    }


# ---- report ------------------------------------------------------------------------
def render(report: dict) -> str:
    m = report["measurements"]
    c = report["corpus"]
    env = report["environment"]
    s = report["summary"]
    mib = c["bytes"] / MIB
    lines = [
        f"portlint benchmark: best of {report['repeat']} runs, each command a fresh process",
        f"  corpus    {c['path']}: {c['files']} files ({c['files'] - c['cmake_files']} C/C++/CUDA, "
        f"{c['cmake_files']} CMake), {mib:.2f} MiB, {c['lines']:,} lines, "
        f"{c['files_with_errors']} files with parse errors",
        f"            {c.get('gpu_share', 1.0) * 100:.0f}% of bytes in GPU-facing files "
        f"({c.get('gpu_bytes', c['bytes']) / MIB:.1f} MiB), the rest plain C++ host code",
        f"  tools     {env['python_path']} (Python {env['python']}), portlint {env['portlint']}, "
        f"tree-sitter {env['tree_sitter']}, tree-sitter-cuda {env['tree_sitter_cuda']}, {env['cpus']} CPUs",
    ]
    if env.get("bytecode_cache"):
        note = " (PYTHONDONTWRITEBYTECODE is set here and was lifted)" if env.get("caller_set_dont_write_bytecode") else ""
        lines.append(f"  bytecode  cached in {env['bytecode_cache']}{note}")
    else:
        lines.append("  bytecode  not cached (--no-bytecode-cache): each run compiles portlint's sources")
    loads = [x for x in (env.get("load_before"), env.get("load_after")) if x is not None]
    if loads and env.get("cpus") and max(loads) > env["cpus"]:
        lines.append(f"  note      load average {max(loads):.1f} on {env['cpus']} CPUs: other work inflated the wall "
                     "times; the CPU column and the CPU ratio are steadier")
    lines += [
        "",
        f"  {'whole corpus':<34}{'time':>9}  {'vs parse-only':>13}  {'MiB/s':>6}  {'peak RSS':>9}  {'CPU':>7}",
    ]

    def row(key: str, base: str | None, with_rate: bool) -> str:
        r = m[key]
        ratio = f"{r['seconds'] / m[base]['seconds']:.2f}×" if base else ""
        rate = f"{mib / r['seconds']:6.2f}" if with_rate else " " * 6
        return (f"  {r['label']:<34}{r['seconds']:>7.3f} s  {ratio:>13}  {rate}  "
                f"{r['peak_rss_mib']:>5.0f} MiB  {r['cpu_seconds']:>5.2f} s")

    for key in ("parse_only", "parse_walk", "parse_query", "scan_jobs1", "scan_jobs2", "scan_warm"):
        if key in m:
            lines.append(row(key, "parse_only", True))
    f = report["single_file"]
    lines += ["", f"  one file: {f['path']} ({f['bytes'] / 1024:.1f} KiB)"]
    for key in ("python_startup", "one_parse_only", "portlint_version", "one_scan", "one_edited"):
        lines.append(row(key, "one_parse_only" if key != "python_startup" else None, False))
    fc = report["findings"]
    planted = c.get("planted", {})
    codes = ", ".join(f"{k} {v}" for k, v in fc["by_code"].items()) or "none"
    lines += [
        "",
        f"  CPU time, --jobs 1 / parse-only = {s['cpu_ratio_jobs1']:.2f}×; start-up subtracted, "
        f"(scan - `portlint --version`) / (parse-only - one-file parse-only) = {s['steady_ratio_jobs1']:.2f}×",
        f"  one file: portlint/parse-only = {s['ratio_one_file']:.2f}×; `portlint --version` is "
        f"{s['startup_share_one_file'] * 100:.0f}% of the one-file scan",
        *([f"  parse + walk / parse-only = {s['ratio_walk']:.2f}×"] if s["ratio_walk"] is not None else []),
        *([f"  parse + one query pass / parse-only = {s['ratio_query']:.2f}×: the floor of any check that runs a "
           "query on every parsed file"] if s.get("ratio_query") is not None else []),
        f"  findings {fc['findings']} ({codes}), {fc['suppressed']} suppressed, {fc['problems']} problems; "
        f"--jobs 1, --jobs 2 and warm reports {'identical' if s['jobs_agree'] else 'DIFFERENT'}",
    ]
    if "W002-live" in planted:
        got = fc["by_code"].get("W002", 0)
        mark = "=" if got == planted["W002-live"] else "!="
        lines.append(f"  check: W002 found {got} {mark} {planted['W002-live']} planted in live code "
                     f"(+{planted.get('W002-dead', 0)} in CUDA-only arms, {planted.get('W002-suppressed', 0)} "
                     "suppressed, neither reported)")
    lines += ["", f"  {'target':<40}{'measured':>10}  {'limit':>8}  result"]
    for key, what, limit, direction in TARGETS:
        value = s[key]
        ok = value <= limit if direction == "<=" else value >= limit
        unit = " s" if key.endswith("seconds") else "×"
        lines.append(f"  {what:<40}{value:>9.3f}{unit[-1]}  {direction} {limit:<5}  {'PASS' if ok else 'MISS'}")
    if "deep_cold" in m:
        d = report["deep"]
        lines.append("")
        lines += [f"  deep mode: {d['units']} CUDA units of the corpus, {d['lines']:,} lines, --jobs 2"]
        for key in ("fast_units", "deep_cold", "deep_warm"):
            r = m[key]
            lines.append(f"  {r['label']:<40}{r['seconds']:>7.3f} s  {d['lines'] / r['seconds']:>9,.0f} lines/s  "
                         f"{r['seconds'] / m['fast_units']['seconds']:>6.1f}× fast")
        key, what, limit, direction = DEEP_TARGET
        value = s[key]
        lines.append(f"  {what:<40}{value:>9.3f}×  {direction} {limit:<5}  {'PASS' if value <= limit else 'MISS'}")
    lines.append(f"  {'peak RSS (largest process)':<40}{s['peak_rss_scan_mib']:>6.0f} MiB  (--jobs 1; --jobs 2: "
                 f"{m['scan_jobs2']['peak_rss_mib']:.0f} MiB per process, warm: {m['scan_warm']['peak_rss_mib']:.0f} MiB, "
                 f"one file: {m['one_scan']['peak_rss_mib']:.0f} MiB)  reported")
    return "\n".join(lines) + "\n"


# ---- main --------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare `portlint scan` with raw tree-sitter parsing.")
    parser.add_argument("--corpus", type=Path,
                        help="corpus directory (generated if missing; default bench/corpus, bench/corpus-quick "
                             "with --quick, bench/corpus-gpuN for another --gpu-share)")
    parser.add_argument("--size-mb", type=float, help=f"corpus size in MiB (default {corpus_mod.DEFAULT_SIZE_MB:g}; "
                                                      f"{QUICK_SIZE_MB:g} with --quick)")
    parser.add_argument("--gpu-share", type=float, default=corpus_mod.DEFAULT_GPU_SHARE,
                        help="fraction of the corpus bytes in GPU-facing files (default %(default)s; 1 = all GPU "
                             "code, as generator version 1)")
    parser.add_argument("--quick", action="store_true",
                        help=f"a quick look: {QUICK_SIZE_MB:g} MiB corpus (bench/corpus-quick), one run each, no walk")
    parser.add_argument("--seed", type=int, default=1234, help="corpus seed (default 1234)")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the corpus even if it is up to date")
    parser.add_argument("--repeat", type=int, help="runs per measurement; the best counts (default 3; 1 with --quick)")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON to FILE ('-': stdout, "
                                                        "the table then goes to stderr)")
    parser.add_argument("--portlint", metavar="PATH", help="the portlint executable (default: beside this "
                                                           "Python, else on PATH)")
    parser.add_argument("--python", metavar="PATH", help="interpreter for the parse-only baseline "
                                                         "(default: the one portlint runs on)")
    parser.add_argument("--no-walk", action="store_true", help="skip the parse + walk and parse + query measurements")
    parser.add_argument("--no-deep", action="store_true", help="skip the deep-mode rows (they need libclang)")
    parser.add_argument("--deep-units", type=int, default=24,
                        help="CUDA translation units of the corpus the deep rows scan (default %(default)s)")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="run with PYTHONDONTWRITEBYTECODE=1: every run compiles portlint's sources again")
    args = parser.parse_args(argv)
    if args.size_mb is None:
        args.size_mb = QUICK_SIZE_MB if args.quick else corpus_mod.DEFAULT_SIZE_MB
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.quick:
        args.no_walk = True
    if args.corpus is None:
        name = "corpus-quick" if args.quick else "corpus"
        if args.gpu_share != corpus_mod.DEFAULT_GPU_SHARE:
            name += f"-gpu{args.gpu_share:g}"
        args.corpus = HERE / name
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.size_mb <= 0:
        parser.error("--size-mb must be positive")
    if not 0 < args.gpu_share <= 1:
        parser.error("--gpu-share must be in (0, 1]")

    global CHILD_ENV
    CHILD_ENV, pycache = child_env(args.no_bytecode_cache)
    portlint = find_portlint(args.portlint)
    python = find_python(args.python, portlint)
    env = probe(python, portlint)
    env["python_path"] = python
    env["bytecode_cache"] = pycache
    env["caller_set_dont_write_bytecode"] = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))

    corpus_dir = args.corpus.resolve()
    t0 = time.perf_counter()
    manifest, generated = corpus_mod.ensure(corpus_dir, args.size_mb, args.seed, args.regenerate, args.gpu_share)
    print(f"bench: corpus {_shown(corpus_dir)} {'generated' if generated else 'reused'} "
          f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)

    parse_only = str(HERE / "parse_only.py")
    cwd = corpus_dir
    single = pick_single_file(corpus_dir)

    # Untimed checks (they also warm the page cache and the .pyc files). The warm re-scan's
    # cache lives outside the corpus, so the cold runs (`--no-cache`) never see it.
    cache_dir = Path(tempfile.mkdtemp(prefix="portlint-bench-cache-"))
    try:
        print("bench: checking ...", file=sys.stderr, flush=True)
        stats = json.loads(run_once([python, parse_only, str(corpus_dir)], cwd, capture=True)["stdout"])
        findings = check_findings(portlint, corpus_dir, cwd, 1, ["--no-cache"])
        findings_j2 = check_findings(portlint, corpus_dir, cwd, 2, ["--no-cache"])
        findings_warm = check_findings(portlint, corpus_dir, cwd, 1, ["--cache-dir", str(cache_dir)])  # fills it
        run_once([str(portlint), "scan", str(single), "--exit-zero", "--cache-dir", str(cache_dir)], cwd)  # the context
        if stats["files"] == 0:
            raise BenchError(f"{corpus_dir}: the baseline found no files")

        scan = [str(portlint), "scan"]
        flags = ["--output-format", "concise", "--exit-zero"]
        cold = flags + ["--no-cache"]
        plan = [
            ("parse_only", "parse-only (tree-sitter)", [python, parse_only, str(corpus_dir)]),
            ("parse_walk", "parse + TreeCursor walk", [python, parse_only, str(corpus_dir), "--walk"]),
            ("parse_query", "parse + one query pass", [python, parse_only, str(corpus_dir), "--query"]),
            ("scan_jobs1", "portlint scan --jobs 1 (cold)", scan + [str(corpus_dir)] + cold + ["--jobs", "1"]),
            ("scan_jobs2", "portlint scan --jobs 2 (cold)", scan + [str(corpus_dir)] + cold + ["--jobs", "2"]),
            ("scan_warm", "portlint scan --jobs 1 (warm)",
             scan + [str(corpus_dir)] + flags + ["--jobs", "1", "--cache-dir", str(cache_dir)]),
            ("python_startup", "python -c pass", [python, "-c", "pass"]),
            ("one_parse_only", "parse-only FILE", [python, parse_only, str(single)]),
            ("portlint_version", "portlint --version", [str(portlint), "--version"]),
            ("one_scan", "portlint scan FILE (cold)", scan + [str(single)] + cold),
            # The pre-commit case: the file was just edited (new bytes each run, through
            # standard input), the rest of the project is as the last run left it.
            ("one_edited", "portlint scan FILE (edited)", ["sh", "-c", (
                f"{{ cat {shlex.quote(str(single))}; echo \"// edited $$\"; }} | {shlex.quote(str(portlint))} scan - "
                f"--stdin-filename {shlex.quote(str(single))} --cache-dir {shlex.quote(str(cache_dir))} "
                "--output-format concise --exit-zero")]),
        ]
        if args.no_walk:
            plan = [p for p in plan if p[0] not in ("parse_walk", "parse_query")]
        units = [] if args.no_deep or not _has_libclang(python) else _deep_units(corpus_dir, args.deep_units)
        deep_cache = Path(tempfile.mkdtemp(prefix="portlint-bench-deep-"))
        if units:
            names = [str(u) for u in units]
            deep = scan + names + flags + ["--jobs", "2", "--deep"]
            run_once(deep + ["--cache-dir", str(deep_cache)], cwd)  # fills the deep cache, untimed
            plan += [
                ("fast_units", "fast scan of the units (cold)", scan + names + cold + ["--jobs", "2"]),
                ("deep_cold", "scan --deep --jobs 2 (cold)", deep + ["--no-cache"]),
                ("deep_warm", "scan --deep --jobs 2 (warm)", deep + ["--cache-dir", str(deep_cache)]),
            ]
        print(f"bench: measuring, best of {args.repeat}:", file=sys.stderr)
        env["load_before"] = _load()
        measurements = {key: measure(label, cmd, cwd, args.repeat) for key, label, cmd in plan}
        env["load_after"] = _load()
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
        if "deep_cache" in locals():
            shutil.rmtree(deep_cache, ignore_errors=True)

    m = {k: v["seconds"] for k, v in measurements.items()}
    mib = stats["bytes"] / MIB
    for key in ("parse_only", "parse_walk", "parse_query", "scan_jobs1", "scan_jobs2", "scan_warm"):
        if key in measurements:
            measurements[key]["ratio_to_parse_only"] = m[key] / m["parse_only"]
            measurements[key]["mib_per_second"] = mib / m[key]
    for key in ("one_parse_only", "portlint_version", "one_scan", "one_edited"):
        measurements[key]["ratio_to_parse_only"] = m[key] / m["one_parse_only"]
    steady_parse = max(m["parse_only"] - m["one_parse_only"], 1e-9)
    summary = {
        "ratio_jobs1": m["scan_jobs1"] / m["parse_only"],
        "ratio_jobs2": m["scan_jobs2"] / m["parse_only"],
        "speedup_jobs2": m["scan_jobs1"] / m["scan_jobs2"],
        "ratio_warm": m["scan_warm"] / m["scan_jobs1"],
        "one_file_seconds": m["one_edited"],
        "ratio_walk": m["parse_walk"] / m["parse_only"] if "parse_walk" in m else None,
        "ratio_query": m["parse_query"] / m["parse_only"] if "parse_query" in m else None,
        "steady_ratio_jobs1": (m["scan_jobs1"] - m["portlint_version"]) / steady_parse,
        "ratio_one_file": m["one_scan"] / m["one_parse_only"],
        "startup_share_one_file": m["portlint_version"] / m["one_scan"],
        "cpu_ratio_jobs1": measurements["scan_jobs1"]["cpu_seconds"] / measurements["parse_only"]["cpu_seconds"],
        "peak_rss_scan_mib": measurements["scan_jobs1"]["peak_rss_mib"],
        "jobs_agree": findings["digest"] == findings_j2["digest"] == findings_warm["digest"],
    }
    if "deep_cold" in m:
        summary["ratio_deep_warm"] = m["deep_warm"] / m["deep_cold"]
        summary["ratio_deep_to_fast"] = m["deep_cold"] / m["fast_units"]
    summary["targets"] = {
        key: {"what": what, "measured": summary[key], "limit": limit, "direction": direction,
              "pass": summary[key] <= limit if direction == "<=" else summary[key] >= limit}
        for key, what, limit, direction in TARGETS
    }
    findings.pop("digest")
    report = {
        "repeat": args.repeat,
        "environment": env,
        "corpus": {"path": _shown(corpus_dir), **manifest, **stats},
        "single_file": {"path": _shown(single), "bytes": single.stat().st_size},
        "findings": findings,
        "measurements": measurements,
        "summary": summary,
    }
    if "deep_cold" in m:
        report["deep"] = {"units": len(units), "lines": sum(len(u.read_bytes().splitlines()) for u in units),
                          "lines_per_second_cold": sum(len(u.read_bytes().splitlines()) for u in units) / m["deep_cold"]}
    text = render(report)
    if args.json == "-":
        sys.stderr.write(text)
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    if findings["findings"] == 0:
        print("bench: warning: portlint reported no findings on a corpus with planted hazards; "
              "did it see the files?", file=sys.stderr)
    return 0


def _has_libclang(python: str) -> bool:
    probe = subprocess.run([python, "-c", "import clang.cindex as c; c.conf.lib"], capture_output=True)
    return probe.returncode == 0


def _deep_units(corpus_dir: Path, count: int) -> list[Path]:
    """`count` CUDA translation units spread evenly over the corpus (deterministic)."""
    units = sorted(p for p in corpus_dir.rglob("*") if p.suffix in (".cu", ".hip") and p.is_file())
    if count <= 0 or not units:
        return []
    step = max(1, len(units) // count)
    return units[::step][:count]


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _shown(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BenchError, corpus_mod.CorpusError) as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        print(f"bench: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
