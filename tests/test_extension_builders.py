"""Builder classes of PyTorch extensions and CUDA-only sub-builds: what a ROCm build compiles.

`fixtures/projects/ported_builders` (an `op_builder/` package: a builder whose ROCm arm picks
MIOpen over cuDNN, a CUTLASS GEMM whose builder is not compatible with ROCm, a kernel no
builder names any more, and an NVIDIA-only sub-package whose setup.py needs nvcc) is silent;
`never_ported_builders`, the same sources in a CMake HIP build, reports each hazard (both
checked by `test_project_sets.py`). These tests change one thing at a time and show what a
user then sees.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness import scan
from portlint.finding import Severity

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "ported_builders"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "ported_builders"
    shutil.copytree(PROJECT, root)
    return root


def _loud(root: Path) -> list[tuple[str, int, str]]:
    result = scan([root], root)
    return sorted((_relative(f.path, root), f.location.start_line, f.code)
                  for f in result.findings if f.severity in (Severity.ERROR, Severity.WARNING))


def _relative(path: str, root: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def _not_built(root: Path) -> dict[str, str]:
    return {_relative(path, root): reason for path, reason in scan([root], root).not_built.items()}


def _files(found: list[tuple[str, int, str]]) -> set[str]:
    return {Path(path).name for path, _, _ in found}


def test_not_built_files_and_why(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    not_built = _not_built(root)
    assert set(not_built) == {"csrc/norm/norm_cudnn.cpp", "csrc/tc_gemm/gemm.cu", "csrc/legacy/attention_v1.cu",
                              "nv_extras/setup.py", "nv_extras/csrc/fp8_cast.cu"}
    assert "CUDA-only path" in not_built["csrc/norm/norm_cudnn.cpp"]
    assert "`TensorCoreGemmBuilder.is_compatible()` is False on ROCm" in not_built["csrc/tc_gemm/gemm.cu"]
    assert "no build names it" in not_built["csrc/legacy/attention_v1.cu"]
    assert "nv_extras/setup.py:8" in not_built["nv_extras/setup.py"]


def test_sources_of_both_arms_are_compiled_without_a_rocm_arm(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    norm = root / "op_builder" / "norm.py"
    norm.write_text(norm.read_text().replace("if self.is_rocm_pytorch():", "if self.NAME.endswith('_ops'):"))
    assert _files(_loud(root)) == {"norm_cudnn.cpp"}  # cuDNN: hipify has no MIOpen for it


def test_a_builder_rocm_builds_is_reported(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    gemm = root / "op_builder" / "tensor_core_gemm.py"
    gemm.write_text(gemm.read_text().replace("if self.is_rocm_pytorch():", "if self.NAME == 'gemm':"))
    found = _loud(root)
    assert _files(found) == {"gemm.cu"}
    # CUTLASS, the file's one root cause; its inline PTX a related place; cuBLASLt is hipified.
    assert {code for _, _, code in found} == {"L001"}
    (cutlass,) = [f for f in scan([root], root).findings if f.code == "L001" and f.severity is Severity.ERROR]
    assert any(r.message.startswith("A001") for r in cutlass.related)


def test_sources_from_a_base_class_in_another_file(tmp_path: Path) -> None:
    """`super().sources()` and `self.common_sources()` reach the base class's own file."""
    root = _copy(tmp_path)
    (root / "op_builder" / "base.py").write_text((root / "op_builder" / "base.py").read_text().replace(
        "    def sources(self):\n        raise NotImplementedError\n",
        "    def common_sources(self):\n        return ['csrc/legacy/attention_v1.cu']\n\n"
        "    def sources(self):\n        raise NotImplementedError\n"))
    norm = root / "op_builder" / "norm.py"
    norm.write_text(norm.read_text().replace('common = ["csrc/norm/norm.cu"]',
                                             'common = ["csrc/norm/norm.cu"] + self.common_sources()'))
    found = _loud(root)
    assert _files(found) == {"attention_v1.cu"}  # compiled again: its inline PTX is reported
    assert "csrc/legacy/attention_v1.cu" not in _not_built(root)


def test_sources_from_a_build_helper_function_of_another_module(tmp_path: Path) -> None:
    """A builder's `sources()` returns what a function of a project module gives, which
    chooses MIOpen or cuDNN itself: its cuDNN arm is the CUDA build's, as in the builder."""
    root = _copy(tmp_path)
    (root / "op_builder" / "lists.py").write_text(
        "import torch\n\n\n"
        "def norm_sources(folder):\n"
        "    listed = [folder + '/norm.cu']\n"
        "    if torch.version.hip:\n"
        "        listed.append(folder + '/norm_miopen.cpp')\n"
        "    else:\n"
        "        listed.append(folder + '/norm_cudnn.cpp')\n"
        "    return listed\n")
    norm = root / "op_builder" / "norm.py"
    norm.write_text("from .base import ExtensionBuilder\nfrom .lists import norm_sources\n\n\n"
                    "class NormBuilder(ExtensionBuilder):\n    NAME = 'norm_ops'\n\n"
                    "    def sources(self):\n        return norm_sources('csrc/norm')\n")
    not_built = _not_built(root)
    assert "CUDA-only path" in not_built["csrc/norm/norm_cudnn.cpp"]
    assert "csrc/norm/norm.cu" not in not_built and "csrc/norm/norm_miopen.cpp" not in not_built
    assert _loud(root) == []


def test_a_builder_whose_sources_cannot_be_read_may_compile_any_file(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    norm = root / "op_builder" / "norm.py"
    norm.write_text(norm.read_text().replace('common = ["csrc/norm/norm.cu"]',
                                             'common = [self.locate("csrc/norm/norm.cu")]'))
    # Its ROCm sources unknown, neither its cuDNN arm nor the kernel no build names is ruled out.
    assert _files(_loud(root)) == {"attention_v1.cu", "norm_cudnn.cpp"}


def test_a_cuda_only_sub_build_alone_is_the_hazard(tmp_path: Path) -> None:
    """Without a ROCm build beside it, the setup.py that needs nvcc is the project's build: its
    probe, its nvcc-only flag and its sources are reported."""
    root = tmp_path / "nv_extras"
    shutil.copytree(PROJECT / "nv_extras", root)
    found = _loud(root)
    assert ("setup.py", 12, "Y002") in found
    assert "fp8_cast.cu" in _files(found)


def test_a_setup_that_raises_only_in_its_cuda_arm_is_a_rocm_build(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    setup = root / "nv_extras" / "setup.py"
    setup.write_text(setup.read_text().replace(
        "if CUDA_HOME is None:\n    raise",
        "import torch\nif torch.version.hip is None and CUDA_HOME is None:\n    raise").replace(
        'print(f"building nv_extras with CUDA {nvcc_release(CUDA_HOME)}")\n', ""))
    found = _loud(root)
    assert "fp8_cast.cu" in _files(found)
    assert "nv_extras/setup.py" not in _not_built(root)


NV_SETUP = """\
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension


def nvcc_release(cuda_home):
    banner = subprocess.check_output([cuda_home + "/bin/nvcc", "--version"], text=True)
    return banner.split("release ")[1].split(",")[0]


def with_threads(flags):
{body}


setup(name="nv_extras", cmdclass={{"build_ext": BuildExtension}},
      ext_modules=[CUDAExtension("nv_extras", ["csrc/fp8_cast.cu"], extra_compile_args={{"nvcc": with_threads(["-O3"])}})])
"""


@pytest.mark.parametrize("body, cuda_only", [
    # The extension's own arguments run nvcc: a ROCm build fails making it.
    ("    return flags + ['--threads', '4'] if nvcc_release(CUDA_HOME) >= '11.2' else flags", True),
    # The probe's failure is caught: a ROCm build goes on and compiles the sources.
    ("    try:\n        nvcc_release(CUDA_HOME)\n    except Exception:\n        return flags\n    return flags", False),
])
def test_a_sub_build_fails_on_rocm_only_where_it_surely_stops(tmp_path: Path, body: str, cuda_only: bool) -> None:
    root = _copy(tmp_path)
    (root / "nv_extras" / "setup.py").write_text(NV_SETUP.format(body=body))
    assert ("nv_extras/csrc/fp8_cast.cu" in _not_built(root)) is cuda_only
    assert ("fp8_cast.cu" in _files(_loud(root))) is not cuda_only


SYCL_BASE = """\
from torch.utils.cpp_extension import SyclExtension


class SyclBuilder:
    def builder(self):
        return SyclExtension(name=self.NAME, sources=self.sources())
"""
SYCL_OP = """\
from .sycl_base import SyclBuilder


class XpuNormBuilder(SyclBuilder):
    NAME = "xpu_norm"

    def sources(self):
        return ["csrc/xpu/norm_xpu.cpp"]
"""


def test_a_builder_that_makes_sycl_extensions_is_not_built_on_rocm(tmp_path: Path) -> None:
    """Its base (in a module defining no `sources()`) makes a SYCL extension: hip-clang never
    compiles its sources. Made with PyTorch's CUDA builder instead, they are reported."""
    root = _copy(tmp_path)
    (root / "op_builder" / "sycl_base.py").write_text(SYCL_BASE)
    (root / "op_builder" / "xpu_norm.py").write_text(SYCL_OP)
    (root / "csrc" / "xpu").mkdir()
    (root / "csrc" / "xpu" / "norm_xpu.cpp").write_text(
        '#include <cudnn.h>\ncudnnStatus_t make(cudnnHandle_t* h) { return cudnnCreate(h); }\n')
    assert "builds a SYCL extension" in _not_built(root)["csrc/xpu/norm_xpu.cpp"]
    assert _loud(root) == []
    (root / "op_builder" / "sycl_base.py").write_text(SYCL_BASE.replace("SyclExtension", "CUDAExtension"))
    assert _files(_loud(root)) == {"norm_xpu.cpp"}


def test_headers_a_sycl_builder_finds_in_its_include_paths_are_its_own(tmp_path: Path) -> None:
    """The SYCL builder's sources find their headers in its `include_paths()`: a header only
    they include there is theirs, not the ROCm build's, though ROCm never reads that list."""
    root = _copy(tmp_path)
    (root / "op_builder" / "sycl_base.py").write_text(SYCL_BASE)
    (root / "op_builder" / "xpu_norm.py").write_text(
        SYCL_OP + '\n    def include_paths(self):\n        return ["csrc/xpu/includes"]\n')
    (root / "csrc" / "xpu" / "includes").mkdir(parents=True)
    (root / "csrc" / "xpu" / "norm_xpu.cpp").write_text('#include "norm_utils.h"\nint norm() { return 0; }\n')
    (root / "csrc" / "xpu" / "includes" / "norm_utils.h").write_text(
        '#pragma once\n#include <cudnn.h>\ninline cudnnStatus_t make(cudnnHandle_t* h) { return cudnnCreate(h); }\n')
    assert _not_built(root)["csrc/xpu/includes/norm_utils.h"] == "included only by files not compiled for ROCm"
    assert _loud(root) == []


def test_a_rocm_aware_script_that_compiles_nothing_is_no_rocm_build_beside_it(tmp_path: Path) -> None:
    """The sub-build is CUDA-only only beside a build that compiles for ROCm: a root setup.py
    that only mentions ROCm (a pure-Python package) leaves the nvcc probe reported."""
    root = tmp_path / "pkg"
    shutil.copytree(PROJECT / "nv_extras", root / "nv_extras")
    (root / "setup.py").write_text("import torch\nfrom setuptools import setup\n\n"
                                   "setup(name='pkg', version='1.0+rocm' if torch.version.hip else '1.0')\n")
    found = _loud(root)
    assert ("nv_extras/setup.py", 12, "Y002") in found
    assert "fp8_cast.cu" in _files(found)


def test_a_builders_rocm_flags_take_back_pytorchs_half_defines(tmp_path: Path) -> None:
    """`nvcc_args()` returns `-U__HIP_NO_HALF_OPERATORS__` on its ROCm arm: HIP's `__half`
    operators are there (N001 quiet). Without that flag PyTorch's define holds (N001)."""
    root = _copy(tmp_path)
    kernel = root / "csrc" / "norm" / "norm.cu"
    kernel.write_text("#include <cuda_fp16.h>\n" + kernel.read_text()
                      + "\n__device__ __half scaled(__half a, __half b) { return a * b; }\n")
    assert [f for f in _loud(root) if f[2] == "N001"] == []
    base = root / "op_builder" / "base.py"
    base.write_text(base.read_text().replace(', "-U__HIP_NO_HALF_OPERATORS__"', ""))
    assert [(path, code) for path, _, code in _loud(root) if code == "N001"] == [("csrc/norm/norm.cu", "N001")]
