"""Y003 in requirements files, and the reading of one requirement shared by every file kind.

A requirements file (`requirements*.txt`, pip-tools' `*.in`, constraint files) is read with
pip's line rules (`portlint.manifests`); each requirement with `packaging`'s PEP 508 parser.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from portlint.finding import Finding, finding
from portlint.fix import Fix
from portlint.manifests import requirement_lines
from portlint.source import SourceFile
from portlint.triggers import needs, nocase

TRITON_DISTRIBUTIONS = frozenset({"triton", "pytorch-triton", "pytorch-triton-rocm"})
# Words of a file, extra or group name that make it CUDA-only (`requirements-cuda.txt`,
# `requirements/cu121.txt`, extra `cuda`), unless a ROCm word is there too.
_CUDA_WORDS = re.compile(r"cuda|nvidia|cu\d{2,3}")
_ROCM_WORDS = frozenset({"rocm", "hip", "amd"})


def _triton_requirement(requirement: str):
    """(canonical distribution name, parsed requirement) when `requirement` (`{}` read as
    `0`) names a Triton distribution, else None."""
    # Imported here: packaging costs about 40 ms of every start-up, and only files that
    # name Triton (the rules' trigger) get this far.
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        req = Requirement(requirement.replace("{}", "0"))
    except InvalidRequirement:
        return None
    name = canonicalize_name(req.name)
    return (name, req) if name in TRITON_DISTRIBUTIONS else None


def is_unpinned_triton(requirement: str) -> bool:
    """A PEP 508 requirement of Triton without an exact `==`/`===` version or a direct URL.

    `{}` stands for a part computed at run time (an f-string in setup.py): it counts as a
    version, so `f"triton=={V}"` is pinned and `f"triton>={V}"` is not.
    """
    triton = _triton_requirement(requirement)
    if triton is None or triton[1].url:
        return False
    req = triton[1]
    return not any(
        spec.operator == "===" or (spec.operator == "==" and not spec.version.endswith(".*"))
        for spec in req.specifier
    )


def is_cuda_only_name(name: str) -> bool:
    """A file, extra or dependency-group name meant for CUDA installs only."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return any(_CUDA_WORDS.fullmatch(w) for w in words) and not _ROCM_WORDS & set(words)


def triton_message(requirement: str) -> str:
    """The alert for an unpinned Triton requirement (its environment marker left out)."""
    shown = requirement.split(";", 1)[0].strip()
    triton = _triton_requirement(requirement)
    if triton is not None and triton[0] == "pytorch-triton-rocm":
        return f"Unpinned `{shown}` can drift from the build torch expects; the skew crashes."
    return f"Unpinned `{shown}` can replace torch's `pytorch-triton-rocm`; the skew crashes."


def triton_fix(where: str) -> Fix:
    return Fix.advice("Pin the Triton your torch release was built with, e.g. `pytorch-triton-rocm==3.1.0` "
                      f"(ROCm) or `triton==3.1.0` (CUDA) for torch 2.5, {where}")


# ---- Y003 unpinned-triton ---------------------------------------------------------------------
@needs(nocase(b"triton"))
def check_unpinned_triton(source: SourceFile) -> list[Finding]:
    if b"triton" not in source.data.lower():
        return []
    path = PurePath(source.path)
    if is_cuda_only_name(path.stem) or is_cuda_only_name(path.parent.name):
        return []  # `requirements-cuda.txt`, `requirements/cuda.txt`: never installed on ROCm
    return [
        finding(source, line.start, line.end, triton_message(line.text),
                triton_fix("each in its platform's requirements file (`requirements-rocm.txt`)"))
        for line in requirement_lines(source.data)
        if is_unpinned_triton(line.text)
    ]
