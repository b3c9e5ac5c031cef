"""Bad input gives one line on stderr and the right exit code: never a hang or a traceback.

Special files (FIFOs, sockets, devices, symlinks to them) named `*.cu`, broken `.gitignore`
lines and configuration, file names that are not UTF-8, symlink loops. Scans run as a
process with a time limit: before these were handled, a FIFO blocked the scan for ever.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from portlint.cli import main

HAZARD = "float a = __shfl_down_sync(0xffffffff, v, 1);\n"


def portlint_process(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """portlint in a process of its own, for what could hang (the time limit is a guard, not
    a measurement: these scans take a second) or depends on the real standard output."""
    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True,
                          timeout=60, env={**os.environ, "NO_COLOR": "1", **env})


def portlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """portlint in this process (faster); a traceback fails the test."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes, result.stderr_bytes)


def messages(proc: subprocess.CompletedProcess) -> list[str]:
    assert b"Traceback" not in proc.stderr, proc.stderr
    return sorted(line for line in proc.stderr.decode("utf-8", "backslashreplace").splitlines()
                  if line.startswith("portlint: "))


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "reduce.cu").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)  # a socket's path must be short: bind it relative to here
    return tmp_path


def make_special_files(directory: Path) -> dict[str, str]:
    """Special files named like sources; each name maps to the reason it is skipped."""
    os.mkfifo(directory / "pipe.cu")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.relpath(directory / "sock.cu"))
    sock.close()
    os.mkfifo(directory / "fifo_target")
    (directory / "to_fifo.cuh").symlink_to("fifo_target")
    reasons = {"pipe.cu": "a FIFO", "sock.cu": "a socket", "to_fifo.cuh": "a FIFO"}
    if os.geteuid() == 0:
        zero = os.makedev(1, 5)  # Linux's /dev/zero: reading it never ends
        os.mknod(directory / "zero_here", 0o666 | stat.S_IFCHR, zero)
        (directory / "to_zero.cu").symlink_to("zero_here")
        os.mknod(directory / "device.h", 0o666 | stat.S_IFCHR, zero)
        (directory / "to_dev_zero.cpp").symlink_to("/dev/zero")
        reasons.update({"to_zero.cu": "a character device", "device.h": "a character device",
                        "to_dev_zero.cpp": "a character device"})
    return reasons


def test_special_files_in_a_directory_are_skipped_one_line_each(project: Path) -> None:
    reasons = make_special_files(project / "src")
    proc = portlint_process("scan", "--no-cache", ".", cwd=project)
    assert proc.returncode == 1, "the hazard in reduce.cu decides the exit code"
    assert b"src/reduce.cu:1:28: W002" in proc.stdout
    assert messages(proc) == sorted(f"portlint: src/{name}: skipped: not a regular file ({kind})"
                                    for name, kind in reasons.items())


def test_special_files_named_on_the_command_line_are_skipped_one_line_each(project: Path) -> None:
    reasons = make_special_files(project / "src")
    proc = portlint_process("scan", "--no-cache", *(f"src/{name}" for name in reasons), cwd=project)
    assert proc.returncode == 0, "skipped files do not change the exit code"
    assert len(messages(proc)) == len(reasons)
    proc = portlint_process("scan", "--no-cache", "src/reduce.cu", *(f"src/{name}" for name in reasons), cwd=project)
    assert proc.returncode == 1 and b"W002" in proc.stdout


def test_a_symlink_loop_named_on_the_command_line_is_one_line(project: Path) -> None:
    (project / "src" / "a.cu").symlink_to("b.cu")
    (project / "src" / "b.cu").symlink_to("a.cu")
    proc = portlint("scan", "--no-cache", "src/a.cu", "src/reduce.cu", cwd=project)
    assert proc.returncode == 1
    assert messages(proc) == ["portlint: src/a.cu: skipped: cannot read: a symlink loop"]
    proc = portlint("scan", "--no-cache", "src/a.cu", cwd=project)  # also the first path: config lookup
    assert proc.returncode == 0 and len(messages(proc)) == 1


def test_an_invalid_gitignore_line_is_skipped_with_a_warning_and_the_others_apply(project: Path) -> None:
    # pathspec rejects a trailing backslash (git never matches such a line either).
    (project / ".gitignore").write_text("build\\\nignored.cu\n")
    (project / "src" / "ignored.cu").write_text(HAZARD)
    proc = portlint("scan", "--no-cache", ".", cwd=project)
    assert proc.returncode == 1
    assert b"src/reduce.cu" in proc.stdout and b"ignored.cu" not in proc.stdout
    assert messages(proc) == ["portlint: .gitignore: line 1 ignored: invalid pattern `build\\`"]


@pytest.mark.parametrize(
    "config, message",
    [
        (b"[tool.portlint]\nexclude = ['!']\n", "pyproject.toml: 'exclude': invalid pattern '!'"),
        (b'[tool.portlint]\nextend-exclude = ["gen\\\\"]\n', "'extend-exclude': invalid pattern 'gen\\\\'"),
        (b"[tool.portlint]\nbuild-scripts = ['!']\n", "'build-scripts': invalid pattern '!'"),
        (b"[tool.portlint]\nper-file-ignores = { '!' = ['W'] }\n", "'per-file-ignores': invalid pattern '!'"),
        (b"[tool.portlint]\nselect = ['W']  # caf\xe9\n", "pyproject.toml: not valid UTF-8 (byte 0xe9 at offset 37)"),
    ],
)
def test_a_broken_configuration_is_a_usage_error_in_one_line(project: Path, config: bytes, message: str) -> None:
    (project / "pyproject.toml").write_bytes(config)
    proc = portlint("scan", "--no-cache", ".", cwd=project)
    assert proc.returncode == 2
    lines = messages(proc)
    assert len(lines) == 1 and lines[0].startswith("portlint: error: ") and lines[0].endswith(message), lines


def test_a_pyproject_whose_tool_is_not_a_table(project: Path) -> None:
    (project / "pyproject.toml").write_text("tool = 1\n")
    proc = portlint("scan", "--no-cache", ".", cwd=project)  # not a portlint config: scanned as a file
    assert proc.returncode == 1 and messages(proc) == []
    proc = portlint("scan", "--no-cache", "--config", "pyproject.toml", ".", cwd=project)
    assert proc.returncode == 2
    assert messages(proc) == ["portlint: error: pyproject.toml: 'tool' must be a table"]


def test_an_undecodable_pyproject_that_is_not_the_config_is_a_skipped_file(project: Path) -> None:
    (project / "pyproject.toml").write_bytes(b"[project]\nname = 'caf\xe9'\n")
    proc = portlint("scan", "--no-cache", ".", cwd=project)
    assert proc.returncode == 1
    assert messages(proc) == ["portlint: pyproject.toml: 1 byte not UTF-8 read as `?` (the first, 0xe9, on line 2)"]
    proc = portlint("scan", "--no-cache", "--config", "pyproject.toml", ".", cwd=project)
    assert proc.returncode == 2
    assert messages(proc) == ["portlint: error: pyproject.toml: not valid UTF-8 (byte 0xe9 at offset 21)"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_an_endless_config_file_is_a_usage_error(project: Path) -> None:
    os.mknod(project / "zero", 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    proc = portlint_process("scan", "--no-cache", "--config", "zero", ".", cwd=project)
    assert proc.returncode == 2
    assert messages(proc) == ["portlint: error: zero: config file larger than 8 MiB"]


BAD_NAME = b"bad\xff.cu"  # not UTF-8: Python sees "bad\udcff.cu"


@pytest.mark.parametrize("output_format", ["text", "concise", "json", "sarif", "github"])
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(project: Path, output_format: str) -> None:
    (project / os.fsdecode(BAD_NAME)).write_text(HAZARD)
    proc = portlint("scan", "--no-cache", "--output-format", output_format, "-o", "out", ".", cwd=project)
    assert proc.returncode == 1 and messages(proc) == []
    written = (project / "out").read_bytes()
    if output_format == "sarif":
        location = json.loads(written)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": "bad%FF.cu", "uriBaseId": "%SRCROOT%"}  # RFC 3986
    elif output_format == "json":
        path = json.loads(written)["findings"][0]["location"]["path"]
        assert os.fsencode(path) == BAD_NAME  # the name's bytes come back
    else:
        assert BAD_NAME in written  # as the file system spells it, like ls or grep
    proc = portlint("scan", "--no-cache", "--output-format", output_format, ".", cwd=project)
    assert proc.stdout == written


def test_a_file_name_that_is_not_utf8_on_a_strict_utf8_standard_output(project: Path) -> None:
    (project / os.fsdecode(BAD_NAME)).write_text(HAZARD)
    proc = portlint_process("scan", "--no-cache", ".", cwd=project, PYTHONIOENCODING="utf-8:strict")
    assert proc.returncode == 1 and messages(proc) == []
    assert BAD_NAME + b":1:28: W002" in proc.stdout


def test_a_file_name_that_is_not_utf8_in_the_html_report_and_a_baseline(project: Path) -> None:
    (project / os.fsdecode(BAD_NAME)).write_text(HAZARD)
    proc = portlint("report", "--no-cache", "-o", "report.html", ".", cwd=project)
    assert proc.returncode == 0 and messages(proc) == []
    page = (project / "report.html").read_bytes().decode("utf-8")  # the page stays valid UTF-8
    assert "<code>bad\\xff.cu</code>" in page
    proc = portlint("scan", "--no-cache", "--write-baseline", "baseline.json", ".", cwd=project)
    assert proc.returncode == 0 and messages(proc) == []
    proc = portlint("scan", "--no-cache", "--baseline", "baseline.json", ".", cwd=project)
    assert proc.returncode == 0, "both findings are in the baseline"


def test_warnings_about_the_scanned_python_are_not_printed(tmp_path: Path) -> None:
    # `'\O'` is an invalid escape: Python warns while parsing it (a SyntaxWarning from 3.12).
    # That is the project's code, not a problem of the scan: stderr stays clean.
    (tmp_path / "setup.py").write_text("from setuptools import setup\nDATA = '\\O'\nsetup(name='x')\n")
    proc = subprocess.run([sys.executable, "-W", "always", "-m", "portlint", "scan", "--no-cache", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Warning" not in proc.stderr, proc.stderr


# Past the first 8 KiB, where a NUL byte would make the whole file binary (and skipped).
_PAST_THE_BINARY_TEST = b"// a long licence\n" * 500


@pytest.mark.parametrize("named", [".", "src/nul.cu"])
def test_a_nul_byte_in_an_include_path_is_one_line_and_that_include_is_skipped(project: Path, named: str) -> None:
    """No file has a NUL in its name (the OS refuses one): the include is named on one line
    and skipped, the rest of the file is analysed, and the exit code follows its findings."""
    data = (_PAST_THE_BINARY_TEST + b'#include "dir\0/x.h"\n#include <sys\0/y.h>\n'
            b"__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n")
    (project / "src" / "nul.cu").write_bytes(data)
    line = data.count(b"\n", 0, data.index(b"#include")) + 1
    result = portlint("scan", named, "--no-cache", "--output-format", "concise", cwd=project)
    assert messages(result) == [
        f"portlint: src/nul.cu:{n}: the `#include` path holds a NUL byte, which no file name can; "
        "that include is skipped" for n in (line, line + 1)]
    assert f"src/nul.cu:{line + 2}:" in result.stdout.decode() and "W002" in result.stdout.decode()
    assert result.returncode == 1


def test_an_incomplete_scan_never_says_no_hazards(project: Path, monkeypatch) -> None:
    """A rule that crashed leaves the scan incomplete: exit 2, and the summary says so."""
    from harness import replaced_check
    from portlint.source import CUDA

    def broken(source):
        raise ValueError("a rule's bug")

    with replaced_check(monkeypatch, "W002", CUDA, broken):
        result = portlint("scan", ".", "--no-cache", "--timeout", "0", cwd=project)
    assert result.returncode == 2
    assert "internal error in W002: ValueError: a rule's bug" in result.stderr.decode()
    assert b"No port hazards found" not in result.stdout and b"The scan is incomplete" in result.stdout


def test_a_working_directory_that_is_gone_is_one_line_and_exit_two(project: Path, tmp_path: Path) -> None:
    """A shell left in a folder another process deleted: portlint shows paths and keeps its
    cache relative to the working directory, so it says so in one line and stops."""
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import os, sys; os.rmdir(sys.argv[1]); "
                             "sys.argv = ['portlint', 'scan', sys.argv[2]]; "
                             "from portlint.cli import run; run()", str(gone), str(project)],
                            cwd=gone, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.decode().splitlines() == ["portlint: error: the working directory is gone (No such file or directory): "
                                         "start portlint from one that exists"]
    assert b"Traceback" not in out + err
