"""Build scripts beyond setup.py, and what the fixtures of Y002/B001 cannot show."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import assert_findings

from portlint import engine
from portlint.config import Config, load

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
OP_BUILDER = FIXTURES / "Y002" / "bad_op_builder"


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_op_builder_is_a_build_script_by_content_or_when_configured(tmp_path: Path) -> None:
    project = tmp_path / "deepspeed_like"
    shutil.copytree(OP_BUILDER, project)
    builder = project / "op_builder" / "builder.py"
    expected = [
        ("builder.py", _line_of(builder, 'cuda_home + "/bin/nvcc"')),
        ("builder.py", _line_of(builder, "int(torch.version.cuda.split")),
    ]
    # It imports torch.utils.cpp_extension and defines nvcc_args(): a build helper as it is.
    result = engine.scan([project], Config(root=project, select=("Y002",)))
    assert [(Path(f.path).name, f.location.start_line) for f in result.findings] == expected
    # Without those marks it is read as a build script only when configured.
    text = builder.read_text()
    builder.write_text(text.replace("torch.utils.cpp_extension", "torch_ext").replace("nvcc_args", "device_args"))
    assert engine.scan([project], Config(root=project, select=("Y002",))).findings == []
    (project / "portlint.toml").write_text('select = ["Y002"]\nextend-build-scripts = ["op_builder/*.py"]\n')
    result = engine.scan([project], load(project / "portlint.toml", project))
    assert [(Path(f.path).name, f.location.start_line) for f in result.findings] == expected
    # `build-scripts` replaces the default list: setup.py is then no build script.
    (project / "setup.py").write_text("import torch\nv = torch.version.cuda.split('.')\n")
    (project / "portlint.toml").write_text('select = ["Y002"]\nbuild-scripts = ["op_builder/*.py"]\n')
    result = engine.scan([project], load(project / "portlint.toml", project))
    assert {Path(f.path).name for f in result.findings} == {"builder.py"}


def test_probe_in_a_function_called_from_a_rocm_branch_is_reported(tmp_path: Path) -> None:
    # A ROCm-only arm that calls the nvcc helper still runs it on ROCm.
    assert_findings(
        """
        import subprocess
        import torch

        def nvcc_version():
            return subprocess.check_output(["nvcc", "--version"], text=True)

        if torch.version.hip:
            banner = nvcc_version()
        """, "python", "Y002", tmp_path=tmp_path, select=("Y002",))


def test_handler_that_raises_again_does_not_guard_the_probe(tmp_path: Path) -> None:
    src = """
        import subprocess
        try:
            out = subprocess.check_output(["nvcc", "-V"])
        except {handler}:
            {body}
        """
    assert_findings(src.format(handler="FileNotFoundError", body="raise SystemExit('install CUDA')"),
                    "python", "Y002", tmp_path=tmp_path, select=("Y002",))
    assert_findings(src.format(handler="FileNotFoundError", body="out = b''"),
                    "python", tmp_path=tmp_path, select=("Y002",))
    assert_findings(src.format(handler="ValueError", body="out = b''"),
                    "python", "Y002", tmp_path=tmp_path, select=("Y002",))


def test_nvcc_path_is_reported_once_as_a_probe_not_as_a_toolkit_path(tmp_path: Path) -> None:
    result = assert_findings(
        """
        import os
        from torch.utils.cpp_extension import CUDA_HOME
        nvcc = os.path.join(CUDA_HOME, "bin", "nvcc")
        include = os.path.join(CUDA_HOME, "include")
        """, "python", "B004", "Y002", tmp_path=tmp_path, select=("Y002", "B004"))
    assert [(f.code, f.location.start_line) for f in result.findings] == [("Y002", 4), ("B004", 5)]
    assert result.findings[0].severity.value == "error"


def test_a_test_of_something_else_does_not_guard_the_probe(tmp_path: Path) -> None:
    # `os` is part of the path expression, not what the probe needs; CUDA_HOME is.
    src = """
        import os
        import subprocess
        from torch.utils.cpp_extension import CUDA_HOME
        if {test}:
            out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"])
        """
    assert_findings(src.format(test='os.getenv("VERBOSE")'), "python", "Y002", tmp_path=tmp_path, select=("Y002",))
    assert_findings(src.format(test="CUDA_HOME is not None"), "python", tmp_path=tmp_path, select=("Y002",))
