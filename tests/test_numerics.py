"""N001's claim, checked with the compiler: code that reads `__half2` members or uses
`__half` operators does not build the way PyTorch builds ROCm extensions; the rewrite does."""

from __future__ import annotations

from pathlib import Path

from test_hipcc import compile_hip

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# What torch.utils.cpp_extension passes to hipcc (COMMON_HIPCC_FLAGS).
PYTORCH_HIP_FLAGS = ("-D__HIP_NO_HALF_OPERATORS__=1", "-D__HIP_NO_HALF_CONVERSIONS__=1")


def test_half_code_fails_under_pytorch_rocm_flags(tmp_path: Path) -> None:
    proc = compile_hip(FIXTURES / "N001" / "bad.hip", tmp_path, *PYTORCH_HIP_FLAGS)
    assert proc.returncode != 0
    assert "invalid operands to binary expression" in proc.stderr


def test_half_rewrite_builds_under_pytorch_rocm_flags(tmp_path: Path) -> None:
    proc = compile_hip(FIXTURES / "N001" / "bad.fixed.hip", tmp_path, *PYTORCH_HIP_FLAGS)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_half_operators_are_reported_unless_the_projects_own_rocm_build_keeps_them(tmp_path: Path) -> None:
    """N001's operator half is about PyTorch's ROCm flags: a project whose build files
    describe a plain HIP build (CMake with the HIP language) keeps HIP's `__half` operators;
    a PyTorch extension, or a project with no build files to tell, is told."""
    from portlint import engine
    from portlint.config import Config

    kernel = "#include <cuda_fp16.h>\n__device__ __half scaled(__half a, __half b) { return a * b; }\n"
    builds = {
        "cmake_hip": ("CMakeLists.txt", "project(p LANGUAGES CXX HIP)\nadd_library(p k.cu)\n"),
        "torch": ("setup.py", "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('p', ['k.cu'])\n"),
        # The extension takes PyTorch's define back for its ROCm build: the operators are there.
        "torch_undefines": ("setup.py", "import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                            "nvcc = ['-O3']\nif torch.version.hip:\n    nvcc += ['-U__HIP_NO_HALF_OPERATORS__']\n"
                            "ext = CUDAExtension('p', ['k.cu'], extra_compile_args={'nvcc': nvcc})\n"),
        "none": None,
    }
    found = {}
    for name, build in builds.items():
        root = tmp_path / name
        root.mkdir()
        (root / "k.cu").write_text(kernel)
        if build is not None:
            (root / build[0]).write_text(build[1])
        found[name] = [f.code for f in engine.scan([root], Config(root=root)).findings if f.code == "N001"]
    assert found == {"cmake_hip": [], "torch": ["N001"], "torch_undefines": [], "none": ["N001"]}
