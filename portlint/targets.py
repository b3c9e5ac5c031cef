"""The AMD GPUs a port is built for, and the limits each one sets.

One small table: wave size (64 on CDNA, 32 on the RDNA parts gfx10/gfx11/gfx12), LDS one
workgroup may use, and the largest block. The scan's targets come from `--target`, the
config key `targets`, `PYTORCH_ROCM_ARCH`, or the offload architectures the build files
name (read by the build model: `BuildFiles.offload_archs`); without any, CDNA's gfx90a and
gfx942.
Rules ask for the limit that binds on some target (`wave_size()`, `lds_limit()`) and name
that target in their messages; their rewrites stay portable (`warpSize`, queried device
properties), never a new hard-coded 64.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from dataclasses import dataclass


KIB = 1024


@dataclass(unsafe_hash=True)
class Target:
    name: str  # `gfx942`
    wave_size: int  # lanes of a wavefront
    lds_bytes: int  # LDS one workgroup may allocate
    max_block: int = 1024  # threads of one workgroup

    def lanes(self) -> str:
        """`on gfx942 a wavefront has 64 lanes`, for messages."""
        return f"on {self.name} a wavefront has {self.wave_size} lanes"


# Known parts; other gfx names are classified by family in `target`.
_TABLE = {
    "gfx908": Target("gfx908", 64, 64 * KIB),  # MI100
    "gfx90a": Target("gfx90a", 64, 64 * KIB),  # MI200
    "gfx940": Target("gfx940", 64, 64 * KIB),
    "gfx941": Target("gfx941", 64, 64 * KIB),
    "gfx942": Target("gfx942", 64, 64 * KIB),  # MI300
    "gfx950": Target("gfx950", 64, 160 * KIB),  # MI350
    "gfx1030": Target("gfx1030", 32, 64 * KIB),  # RDNA2
    "gfx1100": Target("gfx1100", 32, 64 * KIB),  # RDNA3
    "gfx1101": Target("gfx1101", 32, 64 * KIB),
    "gfx1102": Target("gfx1102", 32, 64 * KIB),
    "gfx1200": Target("gfx1200", 32, 64 * KIB),  # RDNA4
    "gfx1201": Target("gfx1201", 32, 64 * KIB),
}
DEFAULT = ("gfx90a", "gfx942")
ENVIRONMENT_VARIABLE = "PYTORCH_ROCM_ARCH"
_NAME = re.compile(r"gfx[0-9a-f]{3,4}")


class TargetError(ValueError):
    pass


def target(name: str) -> Target:
    """The limits of `name` (`gfx942`, `gfx90a:xnack+`); an unknown gfx9 part counts as CDNA,
    gfx10-gfx12 as RDNA (wave32)."""
    base = name.strip().lower().split(":")[0]
    if base in _TABLE:
        return _TABLE[base]
    if not _NAME.fullmatch(base):
        raise TargetError(f"unknown target {name!r} (use a gfx name such as gfx90a, gfx942, gfx1100)")
    return Target(base, 32 if len(base) == 7 else 64, 64 * KIB)


def parse(text: str) -> tuple[Target, ...]:
    """`gfx90a;gfx942` or `gfx90a,gfx942` (PYTORCH_ROCM_ARCH's and the CLI's spellings)."""
    names = [n for n in re.split(r"[;,\s]+", text) if n]
    return tuple(dict.fromkeys(target(n) for n in names))


def from_environment(environ=os.environ) -> tuple[Target, ...]:
    """The targets `PYTORCH_ROCM_ARCH` names; () when unset or not readable."""
    try:
        return parse(environ.get(ENVIRONMENT_VARIABLE, ""))
    except TargetError:
        return ()


@dataclass(unsafe_hash=True)
class BuildSettings:
    targets: tuple[Target, ...] = ()  # the offload targets the build files name
    max_threads: int | None = None  # `--gpu-max-threads-per-block`, when the build sets one


_active: tuple[Target, ...] = ()
_build = BuildSettings()


def select(names: tuple[str, ...] = (), build: BuildSettings = BuildSettings()) -> tuple[Target, ...]:
    """Set the scan's targets: `names` if given, else the environment, else the build files',
    else `DEFAULT`. Called once per scan, before files are analysed (forked workers inherit it)."""
    global _active, _build
    chosen = tuple(dict.fromkeys(target(n) for n in names)) if names else from_environment()
    _active = chosen or build.targets or tuple(_TABLE[n] for n in DEFAULT)
    _build = build
    return _active


@contextlib.contextmanager
def unchosen():
    """While the build files are read: no targets chosen yet, whatever an earlier scan in
    this process chose (their model is kept for every target, so must not depend on one)."""
    global _active
    kept, _active = _active, ()
    try:
        yield
    finally:
        _active = kept


def build_max_threads() -> int | None:
    """The `--gpu-max-threads-per-block` the build compiles kernels without bounds for."""
    return _build.max_threads


def active() -> tuple[Target, ...]:
    return _active or select()


def windows_possible() -> bool:
    """Can the ROCm build of the scan's targets run on Windows? AMD's HIP SDK for Windows
    supports Radeon GPUs (the wave32 parts, gfx10 to gfx12); ROCm for Instinct GPUs (gfx9) is
    Linux's. Before the targets are chosen (the build model reads the build files first), it
    may."""
    return _windows_possible(_active)


@functools.lru_cache(maxsize=8)
def _windows_possible(chosen: tuple[Target, ...]) -> bool:
    return not chosen or any(t.wave_size == 32 for t in chosen)


def widest_wave() -> Target:
    """The target with the largest wavefront: a block must fill its waves."""
    return max(active(), key=lambda t: t.wave_size)


def smallest_lds() -> Target:
    """The target with the least LDS per workgroup: a size above it fails there."""
    return min(active(), key=lambda t: t.lds_bytes)


def largest_lds() -> Target:
    return max(active(), key=lambda t: t.lds_bytes)
