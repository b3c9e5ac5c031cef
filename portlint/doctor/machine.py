"""Facts about the build machine, derived once from an `Environment` and shared by the checks.

A fact that cannot be established raises `NotChecked` with the reason; the check that
needed it is then listed as not checked with that reason. Facts are cached, errors too,
so every check that needs the ROCm version gives the same reason.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from portlint.doctor.probe import Environment, ProbeError, iter_lines

# `Name:` lines of rocminfo's agents; CPU agents and ISA lines ("amdgcn-amd-amdhsa--gfx90a:…") do not match.
ROCMINFO_AGENT = re.compile(r"^\s*Name:\s+(gfx[0-9a-z]+)\s*$")
GFX = re.compile(r"\bgfx[0-9a-z]+\b")
VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
# Distributions that install the `triton` module for a ROCm build of torch.
ROCM_TRITON = ("pytorch-triton-rocm", "triton-rocm")
TRITON = (*ROCM_TRITON, "pytorch-triton", "triton")


class NotChecked(Exception):
    """A check could not run here; the message says why, in one line."""


def _fact(method):
    """Cache a fact, including the NotChecked it raised."""

    @functools.wraps(method)
    def wrapper(self):
        cache = self._facts
        name = method.__name__
        if name not in cache:
            try:
                cache[name] = (method(self), None)
            except NotChecked as exc:
                cache[name] = (None, exc)
        value, error = cache[name]
        if error is not None:
            raise error
        return value

    return wrapper


@dataclass(unsafe_hash=True)
class RocmVersion:
    major: int
    minor: int
    source: str  # where it was read, for messages

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclass(unsafe_hash=True)
class TritonNeed:
    """A Triton distribution torch's metadata requires."""

    requirement: Requirement

    @property
    def name(self) -> str:
        return self.requirement.name

    def __str__(self) -> str:
        return f"{self.requirement.name}{self.requirement.specifier}"


class Machine:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self._facts: dict = {}

    # ---- ROCm ---------------------------------------------------------------------
    @_fact
    def rocm_root(self) -> Path | None:
        """`$ROCM_PATH`, else `/opt/rocm`, else what `hipconfig --rocmpath` says."""
        env = self.env
        configured = env.var("ROCM_PATH")
        if configured and env.is_dir(Path(configured)):
            return Path(configured)
        if env.is_dir(env.rocm_default):
            return env.rocm_default
        hipconfig = env.which("hipconfig")
        if hipconfig:
            try:
                out = env.run(hipconfig, "--rocmpath").strip()
            except ProbeError:
                return None
            if out and env.is_dir(Path(out)):
                return Path(out)
        return None

    def tool(self, name: str) -> str | None:
        """A ROCm tool on PATH or in the ROCm root's `bin/`."""
        root = self.rocm_root()
        return self.env.which(name, (root / "bin",) if root else ())

    @_fact
    def require_rocm(self) -> None:
        """Nothing when this machine builds for ROCm; NotChecked when no ROCm is found."""
        if self.rocm_root() is not None or self.tool("hipconfig"):
            return
        try:
            if self.torch() is not None and self.torch_is_rocm():
                return
        except NotChecked:
            pass  # the package list is unreadable: no evidence either way
        raise NotChecked("no ROCm found (no `ROCM_PATH`, `/opt/rocm`, `hipconfig` or ROCm build of torch)")

    @_fact
    def rocm_version(self) -> RocmVersion:
        self.require_rocm()
        root = self.rocm_root()
        tried = []
        if root is not None:
            info = root / ".info" / "version"
            text = self.env.read_text(info)
            match = VERSION.match(text or "")
            if match:
                return RocmVersion(int(match[1]), int(match[2]), str(info))
            tried.append(f"no `{info}`")
        hipconfig = self.tool("hipconfig")
        if hipconfig is None:
            tried.append("no `hipconfig`")
        else:
            try:
                out = self.env.run(hipconfig, "--version")
                match = VERSION.match(out)
                if match:
                    return RocmVersion(int(match[1]), int(match[2]), "hipconfig --version")
                tried.append(f"`hipconfig --version` printed {out.strip()[:40]!r}")
            except ProbeError as exc:
                tried.append(str(exc))
        raise NotChecked("unknown ROCm version: " + ", ".join(tried))

    @_fact
    def gpu_targets(self) -> tuple[str, ...]:
        """gfx targets of the GPU agents `rocminfo` lists (no duplicates, in order)."""
        self.require_rocm()
        rocminfo = self.tool("rocminfo")
        if rocminfo is None:
            raise NotChecked("`rocminfo` not found on PATH or in the ROCm root")
        try:
            out = self.env.run(rocminfo)
        except ProbeError as exc:
            raise NotChecked(str(exc)) from None
        targets = []
        for line in iter_lines(out):
            match = ROCMINFO_AGENT.match(line)
            if match and match[1] != "gfx000" and match[1] not in targets:
                targets.append(match[1])
        if not targets:
            raise NotChecked("`rocminfo` lists no GPU agent")
        return tuple(targets)

    def known_gpu_targets(self) -> tuple[str, ...]:
        try:
            return self.gpu_targets()
        except NotChecked:
            return ()

    # ---- Python packages ----------------------------------------------------------
    @_fact
    def torch(self) -> metadata.Distribution | None:
        return self.distribution("torch")

    def distribution(self, name: str) -> metadata.Distribution | None:
        try:
            return self.env.distribution(name)
        except ProbeError as exc:
            raise NotChecked(str(exc)) from None

    def torch_is_rocm(self) -> bool:
        torch = self.torch()
        if torch is None:
            return False
        if "+rocm" in (torch.version or ""):
            return True
        return any(n.name in ROCM_TRITON for n in self._triton_requirements(torch))

    @_fact
    def triton_needs(self) -> tuple[TritonNeed, ...]:
        torch = self.torch()
        if torch is None:
            raise NotChecked(f"torch is not installed for {self.env.python_label}")
        needs = tuple(TritonNeed(r) for r in self._triton_requirements(torch))
        if not needs:
            raise NotChecked(f"torch {torch.version} declares no Triton requirement")
        return needs

    @staticmethod
    def _triton_requirements(torch: metadata.Distribution) -> list[Requirement]:
        found = []
        for line in torch.requires or ():
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            name = req.name.lower().replace("_", "-")
            if name not in TRITON:
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue  # an extra, or another platform
            req.name = name
            found.append(req)
        return found


def gfx_list(text: str) -> list[str]:
    """gfx targets named in a `PYTORCH_ROCM_ARCH`-style list (`;`, `,` or spaces)."""
    return GFX.findall(text)
