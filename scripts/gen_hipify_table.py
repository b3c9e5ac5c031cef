"""Write portlint's CUDA -> HIP name table (`portlint/data/hipify_names.tsv`) from HIPIFY's
documentation tables.

    python scripts/gen_hipify_table.py HIPIFY_CHECKOUT [--version TEXT]

HIPIFY documents, per CUDA library, every CUDA name with the HIP name hipify gives it (an
empty HIP column: no HIP counterpart, hipify leaves the name as it is). The table keeps
those facts, one name a line: `cuda_name<TAB>hip_name<TAB>api`, `hip_name` empty where
there is none. Only the HIP columns are read (`*_supported_by_HIP.md`); cuDNN is left out:
its HIP column names hipDNN, a library ROCm does not ship.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "portlint" / "data" / "hipify_names.tsv"
TABLES = {  # file under docs/tables -> api name in the table
    "CUDA_Runtime_API_functions_supported_by_HIP.md": "runtime",
    "CUDA_Driver_API_functions_supported_by_HIP.md": "driver",
    "CUDA_Device_API_supported_by_HIP.md": "device",
    "CUDA_RTC_API_supported_by_HIP.md": "nvrtc",
    "CUBLAS_API_supported_by_HIP.md": "cublas",
    "CURAND_API_supported_by_HIP.md": "curand",
    "CUFFT_API_supported_by_HIP.md": "cufft",
    "CUSPARSE_API_supported_by_HIP.md": "cusparse",
    "CUSOLVER_API_supported_by_HIP.md": "cusolver",
    "CUB_API_supported_by_HIP.md": "cub",
    "cuComplex_API_supported_by_HIP.md": "cucomplex",
}
ROW = re.compile(r"^\|`([^`]+)`\|(?:[^|]*\|){4}\s*(?:`([^`]*)`)?\s*\|")


def rows(text: str, api: str):
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            yield m.group(1), m.group(2) or "", api


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hipify", type=Path, help="a checkout of ROCm/HIPIFY (its docs/tables)")
    parser.add_argument("--version", help="what the table follows [default: git describe of the checkout]")
    args = parser.parse_args()
    version = args.version or subprocess.run(
        ["git", "-C", str(args.hipify), "describe", "--tags", "--always"], capture_output=True, text=True).stdout.strip()
    seen: dict[str, tuple[str, str]] = {}
    for name, api in TABLES.items():
        for cuda, hip, api in rows((args.hipify / "docs" / "tables" / name).read_text(), api):
            seen.setdefault(cuda, (hip, api))
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("w") as out:
        out.write(f"# CUDA name -> HIP name (empty: none), from HIPIFY's docs/tables at {version}. "
                  "Written by scripts/gen_hipify_table.py; do not edit.\n")
        for cuda in sorted(seen):
            hip, api = seen[cuda]
            out.write(f"{cuda}\t{hip}\t{api}\n")
    print(f"{OUT}: {len(seen)} names")


if __name__ == "__main__":
    main()
