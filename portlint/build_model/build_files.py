"""What the build files say about a ROCm build: which sources it compiles, and the defines and
include directories it passes.

Read from setup.py (CUDAExtension/CppExtension sources under ROCm tests), CMake (options,
arms, add_subdirectory, add_library, target_sources) and Makefiles (objects per arm). Where
no build file decides, every file counts as compiled (`decided` is False for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class BuildFiles:
    # Absolute paths of sources and headers no ROCm build compiles (nor includes from a
    # compiled file), each with the reason shown by `--show-not-built`.
    not_built: Mapping[str, str] = field(default_factory=dict)
    # `-D` defines each build passes: name -> value (None for a bare `-DNAME`).
    rocm_defines: Mapping[str, str | None] = field(default_factory=dict)
    cuda_defines: Mapping[str, str | None] = field(default_factory=dict)
    # Include directories the build files name (absolute), in order.
    include_dirs: tuple[str, ...] = ()


def read_build_files(candidates, config) -> BuildFiles:
    """The build facts of the scanned project (`candidates` from discovery)."""
    return BuildFiles()
