"""The AMD GPUs a scan checks for: `--target`, config `targets`, `PYTORCH_ROCM_ARCH`."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from portlint import targets
from portlint.cli import main

# 96 threads: one and a half 64-lane wavefronts on CDNA, three whole ones on RDNA.
LAUNCH = "__global__ void k(float* o) { o[threadIdx.x] = 0.f; }\nvoid run(float* o) { k<<<1, 96>>>(o); }\n"


def scan(root: Path, *args: str, env: dict | None = None):
    old = Path.cwd()
    os.chdir(root)
    try:
        return CliRunner(env=env).invoke(main, ["scan", ".", "--no-cache", "--select", "K002", *args],
                                         catch_exceptions=False)
    finally:
        os.chdir(old)


def test_wave_size_and_lds_per_family():
    assert [t.wave_size for t in targets.parse("gfx90a;gfx942,gfx1100 gfx1201")] == [64, 64, 32, 32]
    assert targets.target("gfx950").lds_bytes == 160 * 1024 and targets.target("gfx942").lds_bytes == 64 * 1024
    assert targets.target("gfx90a:xnack+").name == "gfx90a"
    assert targets.target("gfx1151").wave_size == 32  # not in the table: classified by family


def test_target_option_names_the_target_and_changes_the_verdict(tmp_path: Path):
    (tmp_path / "k.cu").write_text(LAUNCH)
    cdna = scan(tmp_path, "--target", "gfx942")
    assert "lanes of its last wavefront idle" in cdna.output and "on gfx942 a wavefront has 64 lanes" in cdna.output
    rdna = scan(tmp_path, "--target", "gfx1100")
    assert "1 note" in rdna.output and "idle" not in rdna.output


def test_targets_come_from_pytorch_rocm_arch_and_from_config(tmp_path: Path):
    (tmp_path / "k.cu").write_text(LAUNCH)
    assert "idle" not in scan(tmp_path, env={"PYTORCH_ROCM_ARCH": "gfx1100;gfx1101"}).output
    (tmp_path / "portlint.toml").write_text('targets = ["gfx1100"]\n')
    assert "idle" not in scan(tmp_path).output


def test_unknown_target_is_one_line_and_exit_2(tmp_path: Path):
    (tmp_path / "k.cu").write_text(LAUNCH)
    result = scan(tmp_path, "--target", "sm_80")
    assert result.exit_code == 2 and "unknown target 'sm_80'" in result.output
    assert "Traceback" not in result.output
    (tmp_path / "portlint.toml").write_text('targets = ["volta"]\n')
    assert scan(tmp_path).exit_code == 2


def test_build_files_name_the_default_targets(tmp_path: Path):
    (tmp_path / "k.cu").write_text(LAUNCH)
    (tmp_path / "CMakeLists.txt").write_text('project(k LANGUAGES HIP)\nset(CMAKE_HIP_ARCHITECTURES "gfx1100")\n')
    assert "idle" not in scan(tmp_path).output  # wave32: 96 threads are three whole wavefronts
    assert "on gfx942 a wavefront has 64 lanes" in scan(tmp_path, env={"PYTORCH_ROCM_ARCH": "gfx942"}).output


def test_build_targets_are_read_where_the_rocm_build_goes(tmp_path: Path):
    # The build model reads them from the parsed build files: a comment or a CUDA-only arm
    # names none; a setup.py's nvcc flags, its PYTORCH_ROCM_ARCH and a Makefile recipe do.
    from portlint.build_model.build_files import read_build_files
    from portlint.config import Config
    from portlint.discover import discover

    def archs(files: dict[str, str]) -> tuple[tuple[str, ...], int | None]:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        root.mkdir()
        for name, text in files.items():
            (root / name).write_text(text)
        config = Config(root=root)
        build = read_build_files(discover([root], config)[0], config)
        return build.offload_archs, build.max_threads

    assert archs({"CMakeLists.txt": 'project(k LANGUAGES HIP)\n# set(CMAKE_HIP_ARCHITECTURES "gfx1100")\n'
                                     "if(NOT USE_ROCM)\n  set(GPU_TARGETS gfx1030)\nelse()\n"
                                     "  list(APPEND GPU_TARGETS gfx90a gfx942)\nendif()\n"
                                     "target_compile_options(k PRIVATE --gpu-max-threads-per-block=512)\n"}) == (
        ("gfx90a", "gfx942"), 512)
    assert archs({"setup.py": "import os, torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                              'os.environ["PYTORCH_ROCM_ARCH"] = "gfx942"\n'
                              'CUDAExtension("e", ["k.cu"], extra_compile_args={"nvcc": ["--offload-arch=gfx90a"]})\n',
                  "k.cu": LAUNCH}) == (("gfx90a", "gfx942"), None)
    assert archs({"Makefile": "k.o: k.cu\n\thipcc --offload-arch=gfx1100 -c $< -o $@\n"}) == (("gfx1100",), None)


def test_opt_in_through_a_macro_is_judged_against_the_target_lds(tmp_path: Path):
    (tmp_path / "k.cu").write_text(
        "#define SET_SMEM(k, kib) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (kib) * 1024)\n"
        "__global__ void k(float* o) { extern __shared__ float s[]; o[0] = s[0]; }\n"
        "void run() { SET_SMEM(k, 96); }\n")
    cdna3 = scan(tmp_path, "--select", "M001", "--target", "gfx942")
    assert "k.cu:3:" in cdna3.output and "98304 bytes" in cdna3.output and "on gfx942 a block has 64 KiB" in cdna3.output
    assert "M001" not in scan(tmp_path, "--select", "M001", "--target", "gfx950").output  # 160 KiB of LDS


def test_windows_and_macos_arms_are_judged_by_the_hosts_the_targets_run_on(tmp_path):
    """ROCm for the Instinct GPUs (the default gfx90a and gfx942) runs on Linux, and no ROCm
    runs on macOS: code a build takes only on those hosts is none of its business. AMD's HIP
    SDK for Windows supports the Radeon parts, so with `--target gfx1100` the Windows arms
    count again, in C, in CMake and in a build script."""
    from harness import scan as harness_scan

    (tmp_path / "blas.cpp").write_text(
        "#ifdef _WIN32\n#include <cublas_v2.h>\n#endif\n#ifdef __APPLE__\n#include <cufft.h>\n#endif\n",
        encoding="utf-8")
    (tmp_path / "setup.py").write_text(
        "import sys\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('ops', ['ops.cu'], libraries=['cublas'] if sys.platform == 'win32' else [])\n",
        encoding="utf-8")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(ops LANGUAGES CXX HIP)\nset(CMAKE_HIP_ARCHITECTURES gfx90a)\nadd_library(ops ops.hip)\n"
        "if(WIN32)\n  target_link_libraries(ops PRIVATE CUDA::cublas)\nendif()\n"
        "if(APPLE)\n  target_link_libraries(ops PRIVATE CUDA::cufft)\nendif()\n", encoding="utf-8")

    def found(**config):
        result = harness_scan([tmp_path], tmp_path, select=("L001", "C003"), **config)
        return sorted((Path(f.path).name, f.location.start_line) for f in result.findings)

    assert found() == []
    assert found(targets=("gfx1100",)) == [("CMakeLists.txt", 5), ("blas.cpp", 2), ("setup.py", 3)]
