#!/usr/bin/env python3
"""Which CUDA shapes does nvcc accept and hip-clang reject? Compile each probe in
bench/hip_clang_shapes/ with both and print a markdown table.

    python bench/hip_clang_shapes.py                       # C++17, every probe
    python bench/hip_clang_shapes.py --std c++20 typename_  # probes whose name starts so
    python bench/hip_clang_shapes.py --nvcc-flag=--expt-relaxed-constexpr stdmin_

nvcc: $NVCC, `nvcc` on PATH or the newest /usr/local/cuda*/bin/nvcc, `-arch=sm_80`.
hipcc: `HIP_PLATFORM=amd hipcc --offload-arch=gfx90a -x hip`, reading each CUDA include as
the HIP header hipify puts in its place (`portlint.hipify.HEADERS`) and each CUDA API name as
the one hipify writes (`cudaMallocHost` -> `hipHostMalloc`). A shape counts for a
"hip-clang rejects" rule only where nvcc accepts it and hipcc rejects it. Run it with the
Python that has portlint.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from portlint import hipify

HERE = Path(__file__).resolve().parent
PROBES = HERE / "hip_clang_shapes"


def _nvcc() -> str | None:
    return os.environ.get("NVCC") or shutil.which("nvcc") or next(
        iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)


def _first(pattern: str, text: str) -> str:
    match = re.search(pattern, text, re.MULTILINE)
    return match.group(1).strip()[:110].replace("|", "\\|") if match else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", help="only probes whose file name starts with one of these")
    parser.add_argument("--std", default="c++17")
    parser.add_argument("--nvcc-flag", action="append", default=[])
    args = parser.parse_args()
    nvcc, hipcc = _nvcc(), shutil.which("hipcc")
    if nvcc is None or hipcc is None:
        print(f"error: need nvcc and hipcc (found nvcc={nvcc}, hipcc={hipcc})", file=sys.stderr)
        return 2
    probes = [p for p in sorted(PROBES.glob("*.cu")) if not args.prefixes or p.name.startswith(tuple(args.prefixes))]
    print(f"| probe | nvcc {args.std} {' '.join(args.nvcc_flag)} | hipcc {args.std} | qualifies | first diagnostic |")
    print("|---|---|---|---|---|")
    env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory() as tmp:
        includes = Path(tmp) / "hipified_includes"  # `<cuda_fp16.h>` -> `<hip/hip_fp16.h>`, ...
        for cuda, hip in hipify.HEADERS.items():
            (includes / cuda).parent.mkdir(parents=True, exist_ok=True)
            (includes / cuda).write_text(f"#pragma once\n#include <{hip}>\n", encoding="utf-8")
        for probe in probes:
            n = subprocess.run([nvcc, "-arch=sm_80", f"-std={args.std}", *args.nvcc_flag, "-c", str(probe),
                                "-o", f"{tmp}/n.o"], capture_output=True, text=True)
            renamed = Path(tmp) / "hipified" / probe.name  # same name, same lines: hipify's renames
            renamed.parent.mkdir(exist_ok=True)
            renamed.write_text(re.sub(r"\b[A-Za-z_]\w*\b", lambda m: hipify.hip_name(m.group(0)) or m.group(0),
                                      probe.read_text(encoding="utf-8")), encoding="utf-8")
            h = subprocess.run([hipcc, "--offload-arch=gfx90a", f"-std={args.std}", "-x", "hip",
                                f"-I{includes}", "-c", str(renamed), "-o", f"{tmp}/h.o"],
                               capture_output=True, text=True, env=env)
            nvcc_warns = "warning" in n.stdout + n.stderr
            nvcc_says = "accepts" + (" (warns)" if nvcc_warns else "") if n.returncode == 0 else "rejects"
            hipcc_says = "accepts" if h.returncode == 0 else "rejects"
            qualifies = "**yes**" if n.returncode == 0 and h.returncode != 0 else "no"
            said = _first(r"error: (.*)$", h.stderr) if h.returncode else _first(r"(?:error|warning[^:]*): (.*)$", n.stdout + n.stderr)
            print(f"| {probe.stem} | {nvcc_says} | {hipcc_says} | {qualifies} | {said} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
