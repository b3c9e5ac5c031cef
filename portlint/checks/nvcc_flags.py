"""nvcc-only compiler flags and what hipcc (clang) does with them.

One table for every build language (setup.py here; CMake and Makefiles can reuse it). The
effects were checked with hipcc 5.2 (clang 15): "rejects" fails the compile, "ignores"
prints an unused-argument warning and drops the flag's intent.
"""

from __future__ import annotations

from dataclasses import dataclass

from portlint.finding import Severity


@dataclass(unsafe_hash=True)
class NvccFlag:
    spelling: str  # as matched, e.g. `-gencode`, `-arch=sm_80`
    effect: str  # what hipcc does with it: "which rejects {flag}", "where {flag} does nothing"
    rocm: str  # what to do for hipcc instead, an imperative with code
    replacement: str | None = None  # a mechanical ROCm spelling of the whole token
    picks_target: bool = False  # names an NVIDIA GPU target (an error: no gfx code results)

    @property
    def harmless(self) -> bool:
        """hipcc ignores it and nothing but line tables, a diagnostic or speed is lost
        (`-lineinfo`, `-use_fast_math`): advice, a note, not a hazard."""
        return self.effect == _IGNORES and self.spelling.split("=", 1)[0] in _HARMLESS_WHEN_IGNORED

    def severity(self, otherwise=None):
        """An error where it picks an NVIDIA target, a note where dropping it is harmless,
        else `otherwise` (the rule's)."""
        return Severity.ERROR if self.picks_target else Severity.NOTE if self.harmless else otherwise


_DROP = "drop it"
_REJECTS = "which rejects {flag}"
_IGNORES = "which ignores {flag}"
# name -> (effect, ROCm advice). A token matches a name exactly or as `name=value`.
_NAMED = {
    "-gencode": (_REJECTS, "use `--offload-arch=gfx90a`"),
    "--generate-code": (_REJECTS, "use `--offload-arch=gfx90a`"),
    "-arch": (_IGNORES, "use `--offload-arch=gfx90a`"),
    "--gpu-architecture": (_REJECTS, "use `--offload-arch=gfx90a`"),
    "-code": (_REJECTS, "use `--offload-arch=gfx90a`"),
    "--gpu-code": (_REJECTS, "use `--offload-arch=gfx90a`"),
    "--use_fast_math": (_REJECTS, "use `-ffast-math`"),
    "-use_fast_math": (_IGNORES, "use `-ffast-math`"),
    "-Xptxas": (_REJECTS, f"{_DROP} (`-Rpass-analysis=kernel-resource-usage` reports registers)"),
    "--ptxas-options": (_REJECTS, f"{_DROP} (`-Rpass-analysis=kernel-resource-usage` reports registers)"),
    "-maxrregcount": (_REJECTS, f"{_DROP} (bound registers with `__launch_bounds__`)"),
    "--maxrregcount": (_REJECTS, f"{_DROP} (bound registers with `__launch_bounds__`)"),
    "--expt-relaxed-constexpr": (_REJECTS, f"{_DROP} (clang allows it by default)"),
    "-expt-relaxed-constexpr": (_IGNORES, f"{_DROP} (clang allows it by default)"),
    "--expt-extended-lambda": (_REJECTS, f"{_DROP} (clang allows it by default)"),
    "--extended-lambda": (_REJECTS, f"{_DROP} (clang allows it by default)"),
    "-rdc": (_REJECTS, "use `-fgpu-rdc`"),
    "--relocatable-device-code": (_REJECTS, "use `-fgpu-rdc`"),
    "-lineinfo": (_IGNORES, "use `-gline-tables-only`"),
    "--generate-line-info": (_REJECTS, "use `-gline-tables-only`"),
    "-Xcompiler": (_IGNORES, "pass the host flag itself, without `-Xcompiler`"),
    "--compiler-options": (_REJECTS, "pass the host flag itself, without `--compiler-options`"),
    "--default-stream": (_REJECTS, "use `-fgpu-default-stream=per-thread`"),
    "--threads": (_REJECTS, _DROP),
    "-Xcudafe": (_REJECTS, _DROP),
    "-Xfatbin": (_REJECTS, _DROP),
    "-Xnvlink": (_REJECTS, _DROP),
    "-ccbin": (_REJECTS, f"{_DROP} (set `CXX` for the host compiler)"),
    "--compiler-bindir": (_REJECTS, f"{_DROP} (set `CXX` for the host compiler)"),
    "--resource-usage": (_REJECTS, "use `-Rpass-analysis=kernel-resource-usage`"),
    "--ftz": (_REJECTS, "use `-fgpu-flush-denormals-to-zero` for `--ftz=true`, else drop it"),
    "--prec-div": (_REJECTS, _DROP),
    "--prec-sqrt": (_REJECTS, _DROP),
    "--fmad": (_REJECTS, _DROP),
    "-G": (_REJECTS, "use `-g -O0` for device debug information"),
    "--device-debug": (_REJECTS, "use `-g -O0` for device debug information"),
    "--machine": (_REJECTS, f"{_DROP} (clang builds 64-bit code by default; `-m64` where needed)"),
    "-Wno-deprecated-gpu-targets": (_IGNORES, _DROP),
}
# Flags hipcc ignores whose loss changes no result: line tables, a warning, fast math's speed.
_HARMLESS_WHEN_IGNORED = frozenset({"-lineinfo", "-use_fast_math", "-expt-relaxed-constexpr",
                                    "-Wno-deprecated-gpu-targets"})
_TARGET_NAMES = frozenset({"-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code"})
# Whole tokens with a mechanical ROCm spelling.
_REPLACEMENTS = {
    "--use_fast_math": "-ffast-math",
    "-use_fast_math": "-ffast-math",
    "-lineinfo": "-gline-tables-only",
    "--generate-line-info": "-gline-tables-only",
    "-rdc=true": "-fgpu-rdc",
    "--relocatable-device-code=true": "-fgpu-rdc",
    "-rdc=false": "-fno-gpu-rdc",
    "--relocatable-device-code=false": "-fno-gpu-rdc",
    "--default-stream=per-thread": "-fgpu-default-stream=per-thread",
    "--ftz=true": "-fgpu-flush-denormals-to-zero",
}
# PyTorch defines `__HIP_NO_HALF_*__` for hipcc, so the CUDA spelling leaves the operators off
# (PyTorch since 2025 renames it itself: pytorch/pytorch#149245).
_HALF_UNDEFINES = {
    "-U__CUDA_NO_HALF_OPERATORS__": "-U__HIP_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__": "-U__HIP_NO_HALF_CONVERSIONS__",
}


def classify(token: str) -> NvccFlag | None:
    """The nvcc-only flag `token` is, or None for flags hipcc understands."""
    if token in _HALF_UNDEFINES:
        replacement = _HALF_UNDEFINES[token]
        return NvccFlag(token, "where {flag} does nothing", f"use `{replacement}`", replacement)
    name = token.split("=", 1)[0]
    if name not in _NAMED:
        return None
    effect, rocm = _NAMED[name]
    return NvccFlag(token, effect, rocm, _REPLACEMENTS.get(token), picks_target=name in _TARGET_NAMES)


def is_offload_arch(token: str) -> bool:
    return token.split("=", 1)[0] in ("--offload-arch", "--amdgpu-target")


def is_lto(token: str) -> bool:
    return token == "-flto" or token.startswith("-flto=")
