"""Write portlint's table of what PyTorch's hipify renames (`portlint/data/torch_hipify_names.tsv`)
from the mappings a PyTorch release publishes.

    python scripts/gen_torch_hipify_table.py TORCH_UTILS_HIPIFY_DIR [--version TEXT]

A PyTorch extension built with a ROCm torch (`CUDAExtension`, `load`, `load_inline`), and code
a build runs PyTorch's hipify on (`hipify_python`, ROCm's `hipify_torch`), is rewritten by
`torch/utils/hipify`, not by HIPIFY: it replaces every whole-word occurrence of a name in its
map (`PYTORCH_MAP` for extensions), with no parser and whether or not the map marks the
target unsupported on ROCm. The table keeps that map, one entry a line:
`cuda<TAB>hip<TAB>flag`, flag `unsupported` where the mapping says the HIP side lacks it.

The folder is `torch/utils/hipify` of a PyTorch checkout or of an unpacked torch wheel
(`unzip torch-*.whl 'torch/utils/hipify/*' 'torch/version.py'`); nothing of it is imported
but that folder, which needs only the standard library.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "portlint" / "data" / "torch_hipify_names.tsv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hipify_dir", type=Path, help="torch/utils/hipify of a checkout or an unpacked wheel")
    parser.add_argument("--version", help="what the table follows [default: torch/version.py's __version__]")
    args = parser.parse_args()
    folder = args.hipify_dir.resolve()
    if not (folder / "cuda_to_hip_mappings.py").is_file():
        sys.exit(f"error: {folder} holds no cuda_to_hip_mappings.py")
    version = args.version
    if version is None:
        version_file = folder.parent.parent / "version.py"
        namespace: dict = {}
        if version_file.is_file():
            exec(compile(version_file.read_text(), str(version_file), "exec"), namespace)  # noqa: S102 (a version string)
        version = "PyTorch " + str(namespace.get("__version__", "(unknown version)")).split("+")[0]
    sys.path.insert(0, str(folder.parent))
    hipify_python = importlib.import_module(f"{folder.name}.hipify_python")
    mappings = importlib.import_module(f"{folder.name}.cuda_to_hip_mappings")
    constants = importlib.import_module(f"{folder.name}.constants")
    unsupported = {src for mapping in mappings.CUDA_TO_HIP_MAPPINGS for src, value in mapping.items()
                   if constants.HIP_UNSUPPORTED in value[1:]}
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("w", encoding="utf-8") as out:
        out.write(f"# What PyTorch's hipify renames in an extension's sources (PYTORCH_MAP), from "
                  f"torch/utils/hipify of {version}. Written by scripts/gen_torch_hipify_table.py; do not edit.\n")
        for cuda in sorted(hipify_python.PYTORCH_MAP):
            hip = hipify_python.PYTORCH_MAP[cuda]
            if "\t" in cuda or "\n" in cuda or "\t" in hip or "\n" in hip:
                continue
            out.write(f"{cuda}\t{hip}\t{'unsupported' if cuda in unsupported else ''}\n")
    print(f"wrote {OUT} ({len(hipify_python.PYTORCH_MAP)} names, {version})")


if __name__ == "__main__":
    main()
