#!/usr/bin/env python3
"""Every driven W/K fixture on a real NVIDIA GPU: the ground truth for the lane emulator's
32-lane side, and for the promise that a safe fix keeps what CUDA computes.

For each fixture with a driver (tests/lanes/drivers/, the convention of tests/lanes/execute.py):
- build the original and its safe-fixed output with nvcc for the GPU found, run each driver
  step on the GPU;
- compare the original's GPU output with the emulator's 32-lane output (must agree: that
  checks the emulator), and the safe-fixed output's with the original's (must agree: the
  fix keeps CUDA);
- run compute-sanitizer memcheck, racecheck and synccheck on each binary.
Writes a JSON summary to $OUT/gpu_check.json (or --out) and prints a table.

Needs python3 (standard library), nvcc and, for the comparisons, g++ (the emulator) and
compute-sanitizer. The safe-fixed outputs are made by portlint; where portlint does not run
(a GPU host without its dependencies), make them first with `--prepare`:
    python bench/gpu_check.py --prepare          # here: writes bench/gpu_check_inputs/
    python3 bench/gpu_check.py --out "$OUT"      # on the GPU host
`--prepare` also writes manifest.json: each driven bad fixture's safe-fixed file, or none where
no safe fix applies (then nothing is compared for the fix side, and the summary says so),
with hashes of the fixture and of portlint's sources; prepared inputs that no longer match
are reported as stale. Without prepared inputs and without portlint, the fixture's `.fixed`
output (every fix, unsafe ones too) stands in, and the summary says so. `--dry-run` only
compiles (nvcc -c), for a host without a GPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lanes import execute  # noqa: E402  (tests/lanes/execute.py: standard library only)

PREPARED = ROOT / "bench" / "gpu_check_inputs"
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck")
# The GPU's expf and fused multiply-adds round differently from the host's.
FLOAT_TOLERANCE = 1e-5


def gpu_arch(nvidia_smi: str | None) -> str:
    """sm_XY of the first GPU, or sm_90 when none can be asked."""
    if nvidia_smi:
        proc = subprocess.run([nvidia_smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True, text=True)
        match = re.match(r"\s*(\d+)\.(\d+)", proc.stdout)
        if proc.returncode == 0 and match:
            return f"sm_{match.group(1)}{match.group(2)}"
    return "sm_90"


MANIFEST = "manifest.json"


def _sha256(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def portlint_hash() -> str:
    """What the safe fixes depend on: portlint's sources (readable without importing them)."""
    return _sha256(*sorted((ROOT / "portlint").rglob("*.py")))


def prepare(outdir: Path) -> int:
    """Write each driven bad fixture's safe-fixed output and the manifest (needs portlint)."""
    try:
        import portlint  # noqa: F401
    except ImportError:
        print("gpu_check: --prepare needs portlint importable (run it from the project's environment)", file=sys.stderr)
        return 2
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    fixtures = {}
    for case in execute.driven_cases():
        if case.is_bad:
            made = execute.write_safe_fixed(case, outdir)
            fixtures[case.id] = {"sha256": _sha256(case.fixture), "safe_fixed": made.name if made else None}
    for folder in outdir.iterdir():  # a rule none of whose fixtures has a safe fix
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    manifest = {"portlint_sha256": portlint_hash(), "fixtures": fixtures}
    (outdir / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    count = sum(1 for entry in fixtures.values() if entry["safe_fixed"])
    print(f"gpu_check: {count} safe-fixed outputs, {len(fixtures) - count} bad fixtures with no safe fix; in {outdir}")
    return 0


class FixedVariant(NamedTuple):
    """The fixed file compared with the original (None: nothing to compare), what it is, and
    a problem with the inputs (stale prepared files), if any."""

    file: Path | None
    kind: str
    problem: str | None = None


def fixed_variant(case: execute.Case, inputs: Path, scratch: Path) -> FixedVariant:
    if not case.is_bad:
        return FixedVariant(None, "none: an ok fixture has nothing to fix")
    manifest_path = inputs / MANIFEST
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        entry = manifest["fixtures"].get(case.id)
        stale = ("portlint changed since --prepare" if manifest["portlint_sha256"] != portlint_hash()
                 else "not prepared" if entry is None
                 else "the fixture changed since --prepare" if entry["sha256"] != _sha256(case.fixture) else None)
        if stale:
            return FixedVariant(None, "stale inputs", f"prepared inputs are stale ({stale}): run --prepare again")
        if entry["safe_fixed"] is None:
            return FixedVariant(None, "no safe fix applies (prepared)")
        return FixedVariant(inputs / case.code / entry["safe_fixed"], "safe-fixed (prepared)")
    try:
        made = execute.write_safe_fixed(case, scratch)
    except ImportError:
        return FixedVariant(case.fixed, "fixed (every fix, unsafe too: portlint unavailable and not prepared)")
    return FixedVariant(made, "safe-fixed") if made else FixedVariant(None, "no safe fix applies")


def sanitize(sanitizer: str | None, binary: Path, timeout: float) -> dict[str, str]:
    if not sanitizer:
        return {tool: "not run: compute-sanitizer missing" for tool in SANITIZER_TOOLS}
    out = {}
    for tool in SANITIZER_TOOLS:
        try:
            proc = subprocess.run([sanitizer, "--tool", tool, "--error-exitcode", "99", str(binary)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            out[tool] = "timed out"
            continue
        summary = re.findall(r"ERROR SUMMARY: (\d+) error", proc.stdout + proc.stderr)
        errors = int(summary[-1]) if summary else None
        out[tool] = "clean" if proc.returncode == 0 and not errors else f"{errors if errors is not None else '?'} errors (exit {proc.returncode})"
    return out


def compare(a: dict[str, execute.Run], b: dict[str, execute.Run], tolerance: float) -> list[str]:
    problems = []
    for step in a:
        x, y = a[step], b.get(step)
        if y is None:
            problems.append(f"{step}: missing")
        elif x.returncode or y.returncode:
            if (x.returncode, y.returncode) != (0, 0):
                problems.append(f"{step}: {x.outcome} vs {y.outcome} ({y.diagnostic or x.diagnostic})")
        else:
            problems += [f"{step}: {d}" for d in execute.differences(x.records, y.records, tolerance)]
    return problems


def check_case(case: execute.Case, tools: dict, workdir: Path, args) -> dict:
    entry = {"fixture": case.id, "driver": str(case.driver.relative_to(ROOT)), "problems": []}
    fixed, kind, problem = fixed_variant(case, args.inputs, workdir / "safe" / case.fixture.name)
    entry["fixed"] = {"file": fixed.name if fixed else None, "kind": kind}
    if problem:
        entry["problems"].append(problem)
    if fixed is None:  # nothing on the fix side: said so where its results would be
        entry["fixed_build"] = entry["fixed_vs_original_on_gpu"] = f"not compared: {kind}"
    variants = {"original": case.fixture, **({"fixed": fixed} if fixed else {})}
    binaries = {}
    for name, source in variants.items():
        output = workdir / f"{case.code}-{source.name}" / ("run.o" if args.dry_run else "run")
        output.parent.mkdir(parents=True, exist_ok=True)
        command = execute.cuda_command(case.driver, source, output, args.arch, tools["nvcc"], compile_only=args.dry_run)
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
        entry[f"{name}_build"] = "ok" if proc.returncode == 0 else proc.stderr[-2000:]
        if proc.returncode != 0:
            entry["problems"].append(f"{name} does not build with nvcc")
        else:
            binaries[name] = output
    if args.dry_run or "original" not in binaries:
        return entry

    steps = execute.steps(binaries["original"])
    gpu = {name: execute.run_steps([str(binary)], steps, timeout=args.timeout) for name, binary in binaries.items()}
    entry["steps"] = steps
    entry["gpu"] = {name: {step: run.outcome for step, run in runs.items()} for name, runs in gpu.items()}
    for step, run in gpu["original"].items():
        if run.returncode:
            entry["problems"].append(f"original step {step} fails on the GPU: {run.diagnostic}")

    if tools["g++"]:
        build = execute.build_emulated(case.driver, case.fixture, 32, workdir / "emulator")
        if build.binary is None:
            entry["problems"].append("the emulator build fails")
        else:
            emulated = execute.run_steps([str(build.binary)], steps)
            disagreements = compare(gpu["original"], emulated, FLOAT_TOLERANCE)
            entry["gpu_vs_emulator_32"] = disagreements or "agree"
            entry["problems"] += [f"GPU vs emulator (32 lanes): {d}" for d in disagreements]
    else:
        entry["gpu_vs_emulator_32"] = "not run: g++ missing"

    if "fixed" in gpu:
        disagreements = compare(gpu["original"], gpu["fixed"], FLOAT_TOLERANCE)
        entry["fixed_vs_original_on_gpu"] = disagreements or "agree"
        entry["problems"] += [f"{kind} vs original on the GPU: {d}" for d in disagreements]

    entry["sanitizers"] = {name: sanitize(tools["compute-sanitizer"], binary, args.timeout) for name, binary in binaries.items()}
    for name, results in entry["sanitizers"].items():
        entry["problems"] += [f"{tool} on {name}: {verdict}" for tool, verdict in results.items() if verdict != "clean" and not verdict.startswith("not run")]
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="where gpu_check.json goes (default: $OUT, else the current folder)")
    parser.add_argument("--arch", default=None, help="nvcc -arch (default: the GPU's compute capability, else sm_90)")
    parser.add_argument("--dry-run", action="store_true", help="compile only (nvcc -c): no GPU needed")
    parser.add_argument("--prepare", action="store_true", help="write the safe-fixed outputs and their manifest to --inputs (needs portlint)")
    parser.add_argument("--inputs", type=Path, default=PREPARED, help=f"the prepared inputs' folder (default: {PREPARED.relative_to(ROOT)})")
    parser.add_argument("--only", default=None, help="run only fixtures whose id contains this (e.g. W001/)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per run")
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="fixtures checked at once")
    args = parser.parse_args(argv)
    if args.prepare:
        return prepare(args.inputs)

    tools = {name: shutil.which(name) for name in ("nvcc", "g++", "compute-sanitizer", "nvidia-smi")}
    if not tools["nvcc"]:
        cuda = Path("/usr/local/cuda/bin/nvcc")
        tools["nvcc"] = str(cuda) if cuda.exists() else None
    if not tools["nvcc"]:
        print("gpu_check: nvcc not found (put the CUDA toolkit's bin on PATH)", file=sys.stderr)
        return 2
    if not tools["compute-sanitizer"] and Path(tools["nvcc"]).with_name("compute-sanitizer").exists():
        tools["compute-sanitizer"] = str(Path(tools["nvcc"]).with_name("compute-sanitizer"))
    args.arch = args.arch or gpu_arch(None if args.dry_run else tools["nvidia-smi"])
    out_dir = args.out or Path(os.environ.get("OUT", "."))
    out_dir.mkdir(parents=True, exist_ok=True)

    cases = [case for case in execute.driven_cases() if not args.only or args.only in case.id]
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="gpu_check-") as scratch:
        # Fixtures are independent: build and run them side by side (nvcc dominates).
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            entries = list(pool.map(lambda case: check_case(case, tools, Path(scratch), args), cases))
    summary = {
        "arch": args.arch,
        "dry_run": args.dry_run,
        "tools": tools,
        "seconds": round(time.time() - started, 1),
        "fixtures": len(entries),
        "with_problems": sum(1 for e in entries if e["problems"]),
        "bad_without_safe_fix": [e["fixture"] for e in entries if e["fixed"]["kind"].startswith("no safe fix")],
        "undriven": execute.undriven(),
        "results": entries,
    }
    (out_dir / "gpu_check.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")

    print(f"{'fixture':34} {'fixed':34} {'GPU = emulator 32':18} {'fixed = original':17} problems")
    for e in entries:
        agree = e.get("gpu_vs_emulator_32", "-")
        fixed_ok = e.get("fixed_vs_original_on_gpu", "-")
        fixed_ok = "no safe fix" if e["fixed"]["kind"].startswith("no safe fix") else "-" if e["fixed"]["file"] is None else fixed_ok
        print(f"{e['fixture']:34} {str(e['fixed']['file'] or '-'):34} "
              f"{agree if isinstance(agree, str) else 'DIFFER':18} {fixed_ok if isinstance(fixed_ok, str) else 'DIFFER':17} "
              f"{len(e['problems'])}")
        for problem in e["problems"]:
            print(f"    {problem[:200]}")
    print(f"{summary['fixtures']} fixtures, {summary['with_problems']} with problems, "
          f"{len(summary['bad_without_safe_fix'])} bad fixtures with no safe fix (nothing compared for the fix side); "
          f"summary in {out_dir / 'gpu_check.json'}")
    return 1 if summary["with_problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
