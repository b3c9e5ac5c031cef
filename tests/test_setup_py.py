"""setup.py rules: what the fixtures cannot show (severities, argument forms, edits)."""

from __future__ import annotations

import textwrap

import pytest
from harness import assert_findings, fix_until_stable

from portlint import rocm_path
from portlint.rocm_path import Status
from portlint.source import SourceFile


def test_nvcc_target_flags_are_errors_and_other_flags_warnings(tmp_path) -> None:
    result = assert_findings(
        """
        from torch.utils.cpp_extension import CUDAExtension
        CUDAExtension("k", ["k.cu"], extra_compile_args={"nvcc": ["-gencode=arch=compute_80,code=sm_80",
                                                                  "--expt-relaxed-constexpr"]})
        """, "python", "Y001", "Y001", tmp_path=tmp_path, select=("Y001",))
    assert [f.severity.value for f in result.findings] == ["error", "warning"]


def test_nvcc_flags_reach_the_extension_through_kwargs_dict_calls_and_key_appends(tmp_path) -> None:
    assert_findings(
        """
        from torch.utils.cpp_extension import CUDAExtension

        def make_extension(name, nvcc_extra):
            args = dict(cxx=["-O3"], nvcc=["-O3"] + nvcc_extra)
            args["nvcc"].append("--use_fast_math")
            return CUDAExtension(name, [name + ".cu"], **{"extra_compile_args": args})

        make_extension("rope", ["-maxrregcount=64"])
        """, "python", "Y001", "Y001", tmp_path=tmp_path, select=("Y001",))


def test_flags_after_an_early_rocm_return_are_cuda_only(tmp_path) -> None:
    src = """
        import torch
        from torch.utils.cpp_extension import CUDAExtension

        def nvcc_args():
            if torch.version.cuda:
                return ["--use_fast_math"]
            return ["-O3", "--use_fast_math"]

        CUDAExtension("k", ["k.cu"], extra_compile_args={"nvcc": nvcc_args()})
        """
    # `if torch.version.cuda: return` leaves the rest of the function to ROCm builds only.
    source = SourceFile("setup.py", "python", textwrap.dedent(src).encode())
    model = rocm_path.build(source)
    rest = source.data.index(b'return ["-O3"')
    assert model.status(rest) is Status.PORT
    assert model.status(source.data.index(b'return ["--use_fast_math"]')) is Status.DEAD
    assert_findings(src, "python", tmp_path=tmp_path, select=("Y001",))


def test_unsafe_fix_adds_a_rocm_arm_and_keeps_the_cuda_flag(tmp_path) -> None:
    path = tmp_path / "setup.py"
    path.write_text(textwrap.dedent("""
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        FLAGS = "-O3 --use_fast_math -DNDEBUG"
        CUDAExtension("k", ["k.cu"], extra_compile_args={"nvcc": FLAGS.split() + ["-lineinfo", f"-gencode={ARCH}"]})
        """))
    assert fix_until_stable([path], tmp_path, ("Y001",), unsafe=False) == 0  # nothing is safe
    assert fix_until_stable([path], tmp_path, ("Y001",), unsafe=True) == 1
    text = path.read_text()
    assert '"-gline-tables-only" if torch.version.hip else "-lineinfo"' in text  # nvcc keeps its flag
    # A flag inside a longer string, or with no clang spelling: advice only, the CUDA build untouched.
    assert 'FLAGS = "-O3 --use_fast_math -DNDEBUG"' in text and 'f"-gencode={ARCH}"' in text


def test_triton_pinned_through_a_concatenated_version_is_not_reported(tmp_path) -> None:
    assert_findings(
        """
        from setuptools import setup
        TRITON = "3.1.0"
        setup(name="x", install_requires=["triton==" + TRITON, "torch"])
        """, "python", tmp_path=tmp_path, select=("Y003",))


def test_missing_use_rocm_is_reported_at_the_first_rocm_path_test(tmp_path) -> None:
    result = assert_findings(
        """
        import torch
        from setuptools import Extension, setup
        sources = ["ops.cpp"]
        if torch.version.hip:
            sources.append("ops_kernels.hip")
        setup(name="ops", ext_modules=[Extension("ops", sources, extra_compile_args=["-O3"])])
        """, "python", "B003", tmp_path=tmp_path, select=("B003",))
    assert result.findings[0].location.start_line == 5


@pytest.mark.parametrize("switch", ["SKIP_CUDA_BUILD", "NO_HIP_KERNELS"])
def test_a_switch_that_skips_a_build_is_not_a_platform_test(switch, tmp_path) -> None:
    # flash-attention builds every extension under `if not SKIP_CUDA_BUILD:`, ROCm builds too;
    # `NO_HIP_KERNELS` names HIP but is not true on ROCm builds.
    assert_findings(
        f"""
        import os
        from torch.utils.cpp_extension import CUDAExtension
        {switch} = os.getenv("{switch}", "FALSE") == "TRUE"
        if not {switch}:
            CUDAExtension("k", ["k.cu"], extra_compile_args={{"nvcc": ["--use_fast_math"]}})
        """, "python", "Y001", tmp_path=tmp_path, select=("Y001",))


def test_a_flag_hipcc_ignores_at_no_cost_is_a_note(tmp_path) -> None:
    from harness import scan
    from portlint.finding import Severity

    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='ops', ext_modules=[CUDAExtension('ops', ['ops.cu'], extra_compile_args={\n"
        "    'nvcc': ['-O3', '-lineinfo', '-Xcompiler', '-fopenmp', '--use_fast_math']})])\n")
    found = {f.message.split("`")[3]: f.severity for f in scan([tmp_path], tmp_path, select=("Y001",)).findings}
    # Line tables lost: a note. `-Xcompiler`, whose host flag may matter, and the fast-math
    # spelling clang rejects, are warnings.
    assert found == {"-lineinfo": Severity.NOTE, "-Xcompiler": Severity.WARNING, "--use_fast_math": Severity.WARNING}


def test_the_places_a_script_looks_for_nvcc_are_one_probe(tmp_path) -> None:
    # Each path of the list is run until one answers: one root cause, the others related.
    result = assert_findings("""\
        import subprocess
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        def nvcc_release():
            for nvcc in ["/usr/local/cuda/bin/nvcc", "/opt/cuda/bin/nvcc", "/usr/bin/nvcc"]:
                out = subprocess.check_output([nvcc, "--version"], text=True)
                return out.split("release ")[1]

        release = nvcc_release()
        setup(name="ops", ext_modules=[CUDAExtension("ops", ["ops.cu"])])
        """, "python", "Y002", tmp_path=tmp_path, select=("Y002",))
    assert [r.location.start_column for r in result.findings[0].related] == [46, 68]
