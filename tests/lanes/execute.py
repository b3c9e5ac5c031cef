"""Fixture kernels run for real: on the lane emulator (g++, 32 or 64 lanes) or on an NVIDIA GPU
(nvcc). The one home of the driver convention, the builds and the output format, shared by
tests/test_lanes_*.py and bench/gpu_check.py. Python standard library only.

Convention: `fixtures/<CODE>/<case>.<ext>` (and its fixed output `<case>.fixed.<ext>`) is
driven by `tests/lanes/drivers/<CODE>/<case>.cpp`. A fixture file of a lane rule with no
driver is named, with the reason, in `tests/lanes/undriven.txt`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANES = ROOT / "tests" / "lanes"
FIXTURES = ROOT / "fixtures"
DRIVERS = LANES / "drivers"
UNDRIVEN = LANES / "undriven.txt"
# Rule families whose fixtures must each be driven or named in undriven.txt.
LANE_FAMILIES = ("W", "K")
CODE = re.compile(r"^[A-Z]\d{3}$")

# Exit codes of an emulated run (tests/lanes/warp_emulator.h), 7: a CUDA runtime error.
OUTCOMES = {0: "ok", 2: "usage", 3: "deadlock", 4: "undefined", 5: "mask", 6: "unsupported", 7: "cuda-error"}

# -O0 keeps every frame (the emulator orders lanes by their call chains); unused functions
# are dropped at link time, so a fixture's host code may launch kernels it only declares.
EMULATOR_FLAGS = ("-std=c++17", "-O0", "-fno-omit-frame-pointer", "-w", "-ffunction-sections", "-Wl,--gc-sections")


@dataclass(frozen=True)
class Case:
    """One fixture file and the driver that runs it."""

    code: str
    fixture: Path
    driver: Path

    @property
    def id(self) -> str:
        return f"{self.code}/{self.fixture.name}"

    @property
    def fixed(self) -> Path | None:
        path = fixed_counterpart(self.fixture)
        return path if path.exists() else None

    @property
    def is_bad(self) -> bool:
        return self.fixture.name.startswith("bad")


def fixed_counterpart(fixture: Path) -> Path:
    return fixture.with_name(fixture.name[: -len(fixture.suffix)] + ".fixed" + fixture.suffix) if fixture.suffix else fixture.with_name(fixture.name + ".fixed")


def lane_fixtures() -> list[str]:
    """Ids (`W001/bad.cu`) of every bad/ok fixture of the lane families, fixed outputs aside."""
    ids = []
    for folder in sorted(FIXTURES.iterdir()):
        if not (CODE.match(folder.name) and folder.name.startswith(LANE_FAMILIES)):
            continue
        for case in sorted(folder.iterdir()):
            if ".fixed" not in case.name and case.name.startswith(("bad", "ok")):
                ids.append(f"{folder.name}/{case.name}")
    return ids


def driver_path(fixture_id: str) -> Path:
    code, name = fixture_id.split("/", 1)
    return DRIVERS / code / (name.split(".", 1)[0] + ".cpp")


def driven_cases() -> list[Case]:
    cases = []
    for fixture_id in lane_fixtures():
        driver = driver_path(fixture_id)
        if driver.exists():
            code, name = fixture_id.split("/", 1)
            cases.append(Case(code, FIXTURES / code / name, driver))
    return cases


def undriven() -> dict[str, str]:
    """`W001/bad_cub.cu: reason` lines of undriven.txt (blank lines and `#` comments aside)."""
    entries = {}
    for line in UNDRIVEN.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fixture_id, _, reason = line.partition(":")
        entries[fixture_id.strip()] = reason.strip()
    return entries


def write_safe_fixed(case: Case, outdir: Path) -> Path | None:
    """The fixture with only its rule's safe fixes applied (portlint's own fix passes, as
    `portlint scan --fix` runs them), written to `outdir`; None when no safe fix applies.
    Needs portlint importable and tests/ on sys.path (tests/harness.py)."""
    from harness import fix_until_stable

    folder = outdir / case.code
    folder.mkdir(parents=True, exist_ok=True)
    work = folder / case.fixture.name
    shutil.copy2(case.fixture, work)
    if fix_until_stable([work], folder, (case.code,), unsafe=False) == 0:
        work.unlink()
        return None
    target = folder / safe_fixed_name(case.fixture)
    os.replace(work, target)
    return target


def safe_fixed_name(fixture: Path) -> str:
    return fixture.name[: -len(fixture.suffix)] + ".safe-fixed" + fixture.suffix


# ---- Building -------------------------------------------------------------------------------

EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([^;\[\]]*?)\s*\b(\w+)\s*\[\s*\]\s*;")
SHARED = re.compile(r"(?<!extern )\b__shared__\s+([^;=(){}]*?)\b(\w+)((?:\s*\[[^\]]*\])*)\s*;")
TRIPLE_CHEVRON = re.compile(r"(\b[A-Za-z_][\w:]*(?:<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(", re.S)


def emulator_source(text: str, origin: Path) -> str:
    """A fixture (or driver) as g++ compiles it for the emulator. Two spellings g++ cannot take are
    rewritten: `extern __shared__ T name[];` becomes a pointer to the block's dynamic shared
    memory, and `kernel<<<grid, block, ...>>>(args)` a call of `lanes::launcher`. Each
    `__shared__` variable is followed by `lanes::poison_shared`: uninitialised at a block's
    start. Line numbers stay those of the fixture."""
    text = SHARED.sub(lambda m: f"{m.group(0)} ::lanes::poison_shared(&{m.group(2)}, sizeof {m.group(2)});", text)
    text = EXTERN_SHARED.sub(lambda m: f"{m.group(1)}* const {m.group(2)} = ::lanes::dynamic_shared<{m.group(1)}>();", text)
    text = TRIPLE_CHEVRON.sub(lambda m: f"::lanes::launcher({m.group(1)}, {m.group(2)})(", text)
    return f'#line 1 "{origin}"\n{text}'


@dataclass
class Build:
    binary: Path | None
    error: str = ""


def _key(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _emulator_inputs() -> bytes:
    return b"".join(p.read_bytes() for p in sorted(LANES.rglob("*.h")))


def build_emulated(driver: Path, fixture: Path | None, lanes: int, workdir: Path, compiler: str = "g++") -> Build:
    """Compile `driver` around `fixture` (None: a driver with its own kernels) for `lanes`
    lanes per warp (32: CUDA, 64: HIP)."""
    source = emulator_source(fixture.read_text(encoding="utf-8"), fixture) if fixture else ""
    driver_source = emulator_source(driver.read_text(encoding="utf-8"), driver)
    key = _key(driver_source, source, _emulator_inputs(), str(lanes))
    name = f"{fixture.parent.name}-{fixture.name}" if fixture else driver.stem
    out = workdir / f"{name}-{lanes}-{key}"
    binary = out / "run"
    if binary.exists():
        return Build(binary)
    out.mkdir(parents=True, exist_ok=True)
    command = [compiler, *EMULATOR_FLAGS, f"-DLANES_WARP_SIZE={lanes}", "-I", str(LANES), "-I", str(LANES / "emulated_include")]
    if fixture:
        copy = out / fixture.name
        copy.write_text(source, encoding="utf-8")
        command += [f'-DLANES_FIXTURE="{copy}"', "-iquote", str(fixture.parent)]
    driver_copy = out / driver.name
    driver_copy.write_text(driver_source, encoding="utf-8")
    command += [str(driver_copy), "-o", str(binary) + ".tmp"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return Build(None, proc.stderr[-4000:])
    os.replace(str(binary) + ".tmp", binary)
    return Build(binary)


def cuda_command(driver: Path, fixture: Path, output: Path, arch: str, nvcc: str = "nvcc", compile_only: bool = False) -> list[str]:
    """nvcc's command for `driver` around `fixture`: HIP names come from cuda_include/."""
    return [
        nvcc, "-std=c++17", f"-arch={arch}", "-w", "-x", "cu", f'-DLANES_FIXTURE="{fixture}"',
        "-I", str(LANES), "-I", str(LANES / "cuda_include"), "-Xcompiler", f"-iquote{fixture.parent}",
        *(["-c"] if compile_only else ["-lineinfo"]), str(driver), "-o", str(output),
    ]


def build_all(jobs: list, workers: int | None = None) -> list:
    """Run build thunks in parallel (compilers are separate processes)."""
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2) as pool:
        return list(pool.map(lambda job: job(), jobs))


# ---- Running --------------------------------------------------------------------------------


@dataclass
class Run:
    returncode: int
    records: dict[str, tuple[str, list]] = field(default_factory=dict)
    stderr: str = ""

    @property
    def outcome(self) -> str:
        return OUTCOMES.get(self.returncode, f"exit {self.returncode}")

    @property
    def diagnostic(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.startswith(("lanes: ", "cuda: "))]
        return lines[-1] if lines else self.stderr.strip()[-300:]


def parse_records(stdout: str) -> dict[str, tuple[str, list]]:
    records = {}
    for line in stdout.splitlines():
        if not line.startswith("@record "):
            continue
        _, name, kind, count, *values = line.split()
        convert = float if kind == "f" else int
        records[name] = (kind, [convert(v) for v in values[: int(count)]])
    return records


def run(command: list[str], timeout: float = 120) -> Run:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run(124, {}, f"timed out after {timeout:.0f} s")
    return Run(proc.returncode, parse_records(proc.stdout), proc.stderr)


def steps(binary: Path) -> list[str]:
    """The steps a driver defines (`STEP("name")`), in order."""
    listing = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60, env={**os.environ, "LANES_LIST": "1"})
    return [line.split(None, 1)[1] for line in listing.stdout.splitlines() if line.startswith("@step ")]


def run_steps(command: list[str], names: list[str], timeout: float = 120) -> dict[str, Run]:
    """Each step of a driver in its own process: a reported step leaves the others' results."""
    out = {}
    for name in names:
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env={**os.environ, "LANES_STEP": name})
            out[name] = Run(proc.returncode, parse_records(proc.stdout), proc.stderr)
        except subprocess.TimeoutExpired:
            out[name] = Run(124, {}, f"timed out after {timeout:.0f} s")
    return out


def differences(a: dict, b: dict, rel_tol: float = 0.0, limit: int = 4) -> list[str]:
    """How records `b` differ from `a`: exact, or floats within `rel_tol` (a GPU's libm and
    fused multiply-adds round differently from the host's)."""
    out = []
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            out.append(f"{name}: only in {'the first' if name in a else 'the second'}")
            continue
        (kind, va), (_, vb) = a[name], b[name]
        if len(va) != len(vb):
            out.append(f"{name}: {len(va)} values vs {len(vb)}")
            continue
        wrong = [i for i, (x, y) in enumerate(zip(va, vb)) if not _close(x, y, kind, rel_tol)]
        if wrong:
            shown = ", ".join(f"[{i}] {va[i]} vs {vb[i]}" for i in wrong[:limit])
            out.append(f"{name}: {len(wrong)} of {len(va)} differ: {shown}")
    return out


def _close(x, y, kind: str, rel_tol: float) -> bool:
    if kind != "f" or rel_tol == 0.0:
        return x == y or (x != x and y != y)
    if x != x or y != y:
        return x != x and y != y
    return abs(x - y) <= rel_tol * max(1.0, abs(x), abs(y))


def have(tool: str) -> str | None:
    return shutil.which(tool)
