"""`-o FILE`, `--write-baseline FILE` and `report -o FILE` never clobber what FILE is.

A regular file is replaced atomically with its mode kept; a device, FIFO or descriptor path
is written in place; a symlink's target is written and the link stays a link.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from portlint.cli import main

HAZARD = "float a = __shfl_down_sync(0xffffffff, v, 1);\n"
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
NULL_DEVICE = os.makedev(1, 3)  # Linux's /dev/null, made again in a temporary directory

# Each way of writing a file, as (command-line options before the path, exit code).
WRITERS = {
    "scan -o": (["scan", "--no-cache", "--output-format", "json", "-o"], 1),
    "--write-baseline": (["scan", "--no-cache", "--write-baseline"], 0),
    "report -o": (["report", "--no-cache", "-o"], 0),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_with(writer: str, target: Path, project: Path) -> None:
    options, code = WRITERS[writer]
    result = CliRunner().invoke(main, [*options, str(target), str(project / "k.cu")], catch_exceptions=False)
    assert result.exit_code == code, result.output


def expected_start(writer: str) -> bytes:
    return b"<!DOCTYPE html>" if writer == "report -o" else b"{"


@root_only
@pytest.mark.parametrize("writer", WRITERS)
def test_a_character_device_stays_a_device(project: Path, writer: str) -> None:
    null = project / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, NULL_DEVICE)
    write_with(writer, null, project)
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.lstat(null).st_rdev == NULL_DEVICE
    link = project / "to_null"
    link.symlink_to(null)
    write_with(writer, link, project)
    assert link.is_symlink() and stat.S_ISCHR(os.lstat(null).st_mode)


@pytest.mark.parametrize("writer", WRITERS)
def test_a_fifo_is_written_to_not_replaced(project: Path, writer: str) -> None:
    fifo = project / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_with(writer, fifo, project)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and received[0].startswith(expected_start(writer))


@pytest.mark.parametrize("writer", WRITERS)
def test_a_symlink_is_followed_and_kept(project: Path, writer: str) -> None:
    (project / "out").mkdir()
    target = project / "out" / "real"
    target.write_text("old\n")
    target.chmod(0o640)
    link = project / "link"
    link.symlink_to("out/real")
    write_with(writer, link, project)
    assert link.is_symlink() and os.readlink(link) == "out/real"
    assert target.read_bytes().startswith(expected_start(writer))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    dangling = project / "dangling"
    dangling.symlink_to("out/new")
    write_with(writer, dangling, project)
    assert dangling.is_symlink() and (project / "out" / "new").read_bytes().startswith(expected_start(writer))


@pytest.mark.parametrize("writer", WRITERS)
def test_a_regular_file_keeps_its_mode_and_its_hard_links(project: Path, writer: str) -> None:
    target = project / "result"
    target.write_text("old\n")
    target.chmod(0o604)
    write_with(writer, target, project)
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    other_name = project / "same_file"
    os.link(target, other_name)
    write_with(writer, target, project)
    assert os.path.samefile(target, other_name) and other_name.read_bytes().startswith(expected_start(writer))
    new = project / "made" / "here"
    write_with(writer, new, project)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask, "as a shell redirection would create it"


def test_dev_stdout_writes_to_the_open_descriptor(project: Path) -> None:
    # A link of our own to the descriptor path, so a failure cannot replace the real /dev/stdout.
    link = project / "stdout"
    link.symlink_to("/dev/stdout")
    log = project / "log"
    log.write_bytes(b"earlier line\n")
    with log.open("ab") as appended:  # as `>> log`: what was there stays
        proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "--no-cache", "--output-format", "json",
                               "-o", str(link), "k.cu"], cwd=project, stdout=appended, stderr=subprocess.PIPE,
                              timeout=60)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"
    assert log.read_bytes().startswith(b"earlier line\n{")
    # What portlint prints there itself follows the baseline instead of overwriting it.
    with log.open("wb") as truncated:  # as `> log`
        proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "--no-cache", "--write-baseline",
                               str(link), "k.cu"], cwd=project, stdout=truncated, stderr=subprocess.PIPE,
                              timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    baseline, _, rest = log.read_text().partition("\n}\n")
    assert json.loads(baseline + "}")["findings"][0]["code"] == "W002"
    assert rest == f"Wrote 1 finding(s) to the baseline {link}.\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory")
def test_a_writable_file_in_a_read_only_directory_is_written_in_place(project: Path) -> None:
    locked = project / "locked"
    locked.mkdir()
    target = locked / "out.json"
    target.write_text("old\n")
    locked.chmod(0o555)
    try:
        write_with("scan -o", target, project)
    finally:
        locked.chmod(0o755)
    assert target.read_bytes().startswith(b"{")
