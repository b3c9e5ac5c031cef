"""Runtime API rules (R001, R003 sources, R004, R005): what a user sees beyond the fixtures."""

from __future__ import annotations

from harness import assert_findings


def test_capability_test_in_setup_py_is_reported(tmp_path) -> None:
    # setup.py is a Python file too: a build that enables bf16 kernels by capability picks
    # them on every CDNA GPU.
    assert_findings(
        """
        import torch
        from setuptools import setup

        flags = []
        major, _ = torch.cuda.get_device_capability()
        if major >= 8:
            flags.append("-DENABLE_BF16")
        setup(name="ext")
        """,
        "python", "R001", tmp_path=tmp_path, select=("R001",))


def test_rocm_branch_of_setup_py_is_left_to_the_port(tmp_path) -> None:
    assert_findings(
        """
        import torch

        if torch.version.hip:
            flags = ["--offload-arch=gfx942"] if torch.cuda.get_device_capability() == (9, 4) else []
        """,
        "python", tmp_path=tmp_path, select=("R001",))


def test_one_finding_per_condition(tmp_path) -> None:
    result = assert_findings(
        """
        bool ampere(const cudaDeviceProp& prop) {
          return prop.major > 8 || (prop.major == 8 && prop.minor >= 0);
        }
        """,
        "cuda", "R001", tmp_path=tmp_path, select=("R001",))
    assert "`prop.major > 8 || (prop.major == 8" not in result.findings[0].message
    assert result.findings[0].location.start_column == 10


def test_ptx_named_by_a_macro_points_at_the_macro(tmp_path) -> None:
    result = assert_findings(
        """
        #define KERNELS "build/kernels.ptx"

        void load(CUmodule* m) {
          cuModuleLoad(m, KERNELS);
        }
        """,
        "cuda", "R004", tmp_path=tmp_path, select=("R004",))
    finding = result.findings[0]
    assert finding.location.start_line == 5
    assert "`build/kernels.ptx`" in finding.message
    assert [r.location.start_line for r in finding.related] == [2]


def test_ptx_definition_in_cuda_only_branch_is_not_followed(tmp_path) -> None:
    assert_findings(
        """
        #ifdef USE_ROCM
        #define KERNELS "kernels.hsaco"
        #else
        #define KERNELS "kernels.ptx"
        #endif

        void load(hipModule_t* m) {
          hipModuleLoad(m, KERNELS);
        }
        """,
        "cuda", tmp_path=tmp_path, select=("R004",))


def test_every_finding_has_advice_and_no_applicable_edit(tmp_path) -> None:
    result = assert_findings(
        """
        void f(hipStream_t s, int peer) {
          hipCtxSynchronize();
          if (hipDeviceEnablePeerAccess(peer, 0) == hipErrorPeerAccessAlreadyEnabled) { }
          hipModuleLoad(&m, "kernels_gfx90a.hsaco");
          if (hipGetLastError() != hipSuccess) abort();
        }
        """,
        "cuda", "R003", "R005", "R005", tmp_path=tmp_path, select=("R003", "R005"))
    for finding in result.findings:
        assert finding.fix.title and not finding.fix.is_applicable
    titles = [f.fix.title for f in result.findings if f.code == "R005"]
    assert "`hipDeviceSynchronize()`" in titles[0]
    assert "`(void)hipGetLastError();`" in titles[1]


CAPABILITY_GATE = """\
import torch

def fast_path_supported():
    return torch.cuda.get_device_capability()[0] >= 9  # Hopper or newer: true on every AMD GPU
"""


def test_capability_test_in_a_test_module_is_a_note(tmp_path) -> None:
    """In a pytest module the gate picks which tests run on AMD; in the library it picks
    what the ported code does."""
    from harness import scan

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_kernels.py").write_text(CAPABILITY_GATE)
    (tmp_path / "kernels.py").write_text(CAPABILITY_GATE)
    found = {(f.path.rsplit("/", 1)[-1], f.severity.value)
             for f in scan([tmp_path], tmp_path, select=("R001",)).findings}
    assert found == {("test_kernels.py", "note"), ("kernels.py", "warning")}
