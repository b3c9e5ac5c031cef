"""One function per D-code: each reads `Machine` facts and yields `Finding`s.

A check that cannot run here raises `NotChecked` (directly or through a fact) and is
listed as not checked. Environment findings have no location; findings about a file
(a stale `.so`, a `CMakeCache.txt`) point at it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from portlint.discover import CUDA_SUFFIXES
from portlint.doctor.machine import ROCM_TRITON, Machine, NotChecked, gfx_list
from portlint.doctor.probe import ProbeError, iter_lines
from portlint.engine import display_path
from portlint.finding import Finding
from portlint.fix import Fix
from portlint.source import Location, SourceFile

EXAMPLE_TARGETS = "gfx90a;gfx942"  # MI200 and MI300, when the machine's own GPUs are unknown

# Newest GCC major whose C++ headers each ROCm release's clang is known to compile: the
# newest GCC of the distributions the release supports (see rules/D005.md for sources).
# Keys are (first, last) ROCm major.minor releases, inclusive.
GCC_SUPPORT = (
    ((5, 0), (5, 2), 11),  # Ubuntu 20.04/22.04 default; GCC 12 headers break HIP 5.0 (ROCm/hipamd#38)
    ((5, 3), (6, 1), 12),  # Ubuntu 22.04 with libstdc++-12-dev, the documented fix for hipcc
    ((6, 2), (6, 4), 13),  # Ubuntu 24.04 (GCC 13); GCC 14 headers break HIP device code
    ((7, 0), (7, 2), 14),  # Ubuntu 24.04 with libstdc++-14-dev, RHEL 10 (GCC 14)
)
# Build-tree files that name the CUDA compiler a previous configure found.
CMAKE_NVCC = re.compile(
    rb"^(?:CMAKE_CUDA_COMPILER|CUDA_NVCC_EXECUTABLE|CUDAToolkit_NVCC_EXECUTABLE)(?::[A-Z]+)?=(\S*\bnvcc)[ \t]*\r?$", re.M
)
NINJA_NVCC = re.compile(rb"^nvcc[ \t]*=[ \t]*(\S*\bnvcc)[ \t]*\r?$", re.M)  # torch's BuildExtension
BUILD_SOURCES = frozenset({"CMakeLists.txt", "setup.py"})
OUTPUT_DIRS = frozenset({"build", "dist"})
VENDORED_DIRS = frozenset({"third_party", "third-party", "3rdparty", "vendor", "external", "extern"})


def _environment(message: str, fix: str, matched: str) -> Finding:
    """A finding about the machine, not a file: no location."""
    return Finding(location=None, message=message, fix=Fix.advice(fix), matched=matched)


# D001 -------------------------------------------------------------------------------
def check_pytorch_rocm_arch_unset(machine: Machine) -> Iterator[Finding]:
    machine.require_rocm()
    if machine.env.var("PYTORCH_ROCM_ARCH") is not None:
        return
    gpus = ";".join(machine.known_gpu_targets())
    if gpus:
        fix = f'Set this machine\'s GPU targets before building: `export PYTORCH_ROCM_ARCH="{gpus}"`'
    else:
        fix = f'Set the gfx targets you build for, e.g. `export PYTORCH_ROCM_ARCH="{EXAMPLE_TARGETS}"`'
    yield _environment(
        "`PYTORCH_ROCM_ARCH` is unset; the ROCm build guesses which gfx targets to compile.",
        fix,
        "PYTORCH_ROCM_ARCH",
    )


# D002 -------------------------------------------------------------------------------
def check_pytorch_rocm_arch_mismatch(machine: Machine) -> Iterator[Finding]:
    machine.require_rocm()
    value = machine.env.var("PYTORCH_ROCM_ARCH")
    if value is None:
        return  # D001 reports it
    gpus = machine.gpu_targets()
    listed = gfx_list(value)
    missing = [g for g in gpus if g not in listed]
    if not missing:
        return
    wanted = ";".join(dict.fromkeys([*listed, *missing]))
    names = ", ".join(f"`{g}`" for g in missing)
    gpu = "GPUs" if len(missing) > 1 else "GPU"
    yield _environment(
        f"`PYTORCH_ROCM_ARCH` omits {names}, the {gpu} here; kernels built without it fail to load.",
        f'Add this machine\'s {gpu}: `export PYTORCH_ROCM_ARCH="{wanted}"`',
        f"PYTORCH_ROCM_ARCH={value}",
    )


# D003 -------------------------------------------------------------------------------
def check_cuda_home_in_rocm_build(machine: Machine) -> Iterator[Finding]:
    machine.require_rocm()
    names = [n for n in ("CUDA_HOME", "CUDA_PATH") if machine.env.var(n) is not None]
    if not names:
        return
    shown = " and ".join(f"`{n}`" for n in names)
    verb = "are" if len(names) > 1 else "is"
    yield _environment(
        f"{shown} {verb} set on a ROCm machine; builds may compile and link against CUDA instead.",
        f"Unset {'them' if len(names) > 1 else 'it'} before building for ROCm: `unset {' '.join(names)}`",
        " ".join(names),
    )


# D004 -------------------------------------------------------------------------------
def check_hip_platform_not_amd(machine: Machine) -> Iterator[Finding]:
    env = machine.env
    platform = env.var("HIP_PLATFORM")
    hipcc = machine.tool("hipcc")
    hipconfig = machine.tool("hipconfig")
    if hipcc is None and hipconfig is None:
        raise NotChecked("no HIP compiler found (`hipcc`, `hipconfig`)")
    if platform == "amd":
        return
    fix = "Build for AMD GPUs explicitly: `export HIP_PLATFORM=amd`"
    if platform is not None:
        target = "NVIDIA GPUs with nvcc" if platform in ("nvidia", "nvcc") else f"`{platform}`"
        yield _environment(
            f"`HIP_PLATFORM={platform}` makes hipcc build for {target}, not for AMD GPUs.",
            fix,
            f"HIP_PLATFORM={platform}",
        )
        return
    nvcc = env.which("nvcc")
    if nvcc is None:
        return
    chosen = ""
    if hipconfig is not None:
        try:
            chosen = env.run(hipconfig, "--platform").strip()
        except ProbeError:
            pass
        if chosen == "amd":
            return  # hipcc's own choice is AMD despite nvcc: nothing to fix
    verb = "compiles" if chosen == "nvidia" else "may compile"
    yield _environment(
        f"`HIP_PLATFORM` is unset and `nvcc` is on PATH; hipcc {verb} with nvcc, not for AMD.",
        fix,
        "HIP_PLATFORM",
    )


# D005 -------------------------------------------------------------------------------
def check_gcc_newer_than_rocm(machine: Machine) -> Iterator[Finding]:
    rocm = machine.rocm_version()
    root = machine.rocm_root()
    if rocm.source == "hipconfig --version" and root == Path("/usr"):
        raise NotChecked(f"HIP {rocm} is a distribution package in /usr, built with that distribution's compilers")
    newest = next((gcc for first, last, gcc in GCC_SUPPORT if first <= (rocm.major, rocm.minor) <= last), None)
    if newest is None:
        covered = f"{GCC_SUPPORT[0][0][0]}.{GCC_SUPPORT[0][0][1]}–{GCC_SUPPORT[-1][1][0]}.{GCC_SUPPORT[-1][1][1]}"
        raise NotChecked(f"no GCC support data for ROCm {rocm} (the table covers ROCm {covered})")
    gcc = machine.env.which("gcc")
    if gcc is None:
        raise NotChecked("`gcc` not found on PATH")
    try:
        out = machine.env.run(gcc, "-dumpfullversion", "-dumpversion")
    except ProbeError as exc:
        raise NotChecked(str(exc)) from None
    match = re.match(r"\s*(\d+)", out)
    if match is None:
        raise NotChecked(f"`gcc -dumpfullversion` printed {out.strip()[:40]!r}")
    major = int(match[1])
    if major <= newest:
        return
    yield _environment(
        f"`gcc` {major} is newer than ROCm {rocm} supports (up to {newest}); hipcc's clang fails on its headers.",
        f"Build with GCC {newest}: install it and `export CC=gcc-{newest} CXX=g++-{newest}`",
        f"gcc {major} rocm {rocm}",
    )


# D006 -------------------------------------------------------------------------------
def check_triton_torch_mismatch(machine: Machine) -> Iterator[Finding]:
    torch = machine.torch()
    needs = machine.triton_needs()
    label = f"torch {torch.version}"
    for need in needs:
        installed = machine.distribution(need.name)
        pin = str(need)
        if installed is None:
            yield _environment(
                f"{label} needs `{pin}`, which is not installed.",
                f'Install it: `pip install "{pin}"`',
                f"missing {need.name}",
            )
            continue
        if not need.requirement.specifier.contains(installed.version, prereleases=True):
            yield _environment(
                f"{label} needs `{pin}`, not the installed {installed.version}.",
                f'Install the matching Triton: `pip install "{pin}"`',
                f"{need.name} {installed.version}",
            )
    rocm_needs = [n for n in needs if n.name in ROCM_TRITON]
    if rocm_needs:
        shadow = machine.distribution("triton")
        if shadow is not None:
            pin = str(rocm_needs[0])
            yield _environment(
                f"`triton` {shadow.version} is installed beside `{rocm_needs[0].name}`; torch may import "
                f"the wrong `triton`.",
                f'Remove the extra copy: `pip uninstall -y triton && pip install --force-reinstall "{pin}"`',
                f"triton {shadow.version} shadows {rocm_needs[0].name}",
            )


# D007 -------------------------------------------------------------------------------
def check_stale_extension_build(machine: Machine) -> Iterator[Finding]:
    env = machine.env
    project = env.project
    if not env.is_dir(project):
        raise NotChecked(f"project directory `{project}` not found")
    sources: list[tuple[float, Path]] = []
    artifacts: list[Path] = []
    for path in env.project_files:
        parts = path.relative_to(project).parts
        if VENDORED_DIRS.intersection(parts[:-1]):
            continue
        in_output = parts[0] in OUTPUT_DIRS or any(p.endswith(".egg-info") for p in parts)
        if path.suffix == ".so" or (parts[0] == "dist" and path.suffix in (".whl", ".egg")):
            artifacts.append(path)
        elif not in_output and _is_build_input(path):
            mtime = env.mtime(path)
            if mtime is not None:
                sources.append((mtime, path))
    if not sources:
        return
    newest_time, newest = max(sources)
    for artifact in artifacts:
        built = env.mtime(artifact)
        if built is None or built >= newest_time:
            continue
        rel = artifact.relative_to(project).as_posix()
        top = artifact.relative_to(project).parts[0]
        remove = f"{top}/" if top in OUTPUT_DIRS else rel
        source = newest.relative_to(project).as_posix()
        if artifact.suffix == ".so":
            message = f"Stale build: older than `{source}`; Python loads it instead of the port."
        else:
            message = f"Stale wheel: older than `{source}`; installing it brings back the old build."
        yield Finding(
            location=Location.whole_file(display_path(artifact)),
            message=message,
            fix=Fix.advice(f"Delete it and rebuild: `rm -rf {remove}`"),
            matched=rel,
        )


def _is_build_input(path: Path) -> bool:
    name = path.name
    return path.suffix.lower() in CUDA_SUFFIXES or name in BUILD_SOURCES or name.endswith(".cmake")


# D008 -------------------------------------------------------------------------------
def check_foreign_toolchain_build(machine: Machine) -> Iterator[Finding]:
    env = machine.env
    project = env.project
    machine.require_rocm()
    if not env.is_dir(project):
        raise NotChecked(f"project directory `{project}` not found")
    for path in env.project_files:
        if path.name == "CMakeCache.txt":
            pattern = CMAKE_NVCC
        elif path.name == "build.ninja":
            pattern = NINJA_NVCC
        else:
            continue
        data = env.read_bytes(path)
        match = pattern.search(data or b"")
        if match is None:
            continue
        rel = path.relative_to(project)
        source = SourceFile(display_path(path), "text", data)
        yield Finding(
            location=source.location(match.start(1), match.end(1)),
            message=(
                f"`{rel.as_posix()}` names `nvcc`; reusing this tree builds for CUDA, not ROCm."
            ),
            fix=Fix.advice(_rebuild_advice(rel)),
            matched=rel.as_posix(),
        )


def _rebuild_advice(rel: Path) -> str:
    """Remove exactly the build tree `rel` (a CMakeCache.txt or build.ninja) belongs to."""
    if len(rel.parts) == 1:
        remove = "CMakeCache.txt CMakeFiles" if rel.name == "CMakeCache.txt" else "build.ninja .ninja_deps .ninja_log"
        return f"Delete the in-source build files and configure again for ROCm: `rm -rf {remove}`"
    # CMake's tree is the cache's directory; torch writes build.ninja under build/temp.*/.
    tree = rel.parent.as_posix() if rel.name == "CMakeCache.txt" else rel.parts[0]
    return f"Delete the build tree and configure it again for ROCm: `rm -rf {tree}/`"


# D009 -------------------------------------------------------------------------------
def check_offload_arch_gfx000(machine: Machine) -> Iterator[Finding]:
    machine.require_rocm()
    enumerator = machine.tool("rocm_agent_enumerator")
    if enumerator is None:
        raise NotChecked("`rocm_agent_enumerator` not found on PATH or in the ROCm root")
    try:
        out = machine.env.run(enumerator)
    except ProbeError as exc:
        raise NotChecked(str(exc)) from None
    targets = {t for line in iter_lines(out) for t in gfx_list(line)}
    if targets - {"gfx000"}:
        return
    chosen = machine.env.var("PYTORCH_ROCM_ARCH")
    example = gfx_list(chosen)[0] if chosen and gfx_list(chosen) else "gfx90a"
    yield _environment(
        "`rocm_agent_enumerator` lists only `gfx000`; builds without `--offload-arch` target no GPU.",
        f"Name the GPU targets explicitly: `--offload-arch={example}` "
        f'(or `-DGPU_TARGETS="{example}"` for CMake)',
        "gfx000",
    )


# The one table from D-code to check, sorted by code (the scan's table is `registry.REGISTRY`).
DOCTOR_CHECKS = {
    "D001": check_pytorch_rocm_arch_unset,
    "D002": check_pytorch_rocm_arch_mismatch,
    "D003": check_cuda_home_in_rocm_build,
    "D004": check_hip_platform_not_amd,
    "D005": check_gcc_newer_than_rocm,
    "D006": check_triton_torch_mismatch,
    "D007": check_stale_extension_build,
    "D008": check_foreign_toolchain_build,
    "D009": check_offload_arch_gfx000,
}
