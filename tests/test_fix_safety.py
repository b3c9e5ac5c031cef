"""`--fix` loses nothing: a file saved meanwhile, its mode, owner, extended attributes and hard
links, read-only files, links out of the project, files it cannot write, CRLF line endings."""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

import pytest

from portlint import fix
from tests.test_cli import CLEAN, HAZARD, run

FIXED_ONE = "Fixed 1 finding."
# A POSIX ACL as Linux stores it (what `setfacl -m u:1234:r` adds to mode 0640): version 2,
# then (tag, permissions, id) entries: owner rw, user 1234 r, group r, mask r, others none.
ACL = "system.posix_acl_access"
ACL_READ_FOR_1234 = struct.pack("<I", 2) + b"".join(
    struct.pack("<HHI", tag, perm, ident)
    for tag, perm, ident in [(0x01, 6, 0xFFFFFFFF), (0x02, 4, 1234), (0x04, 4, 0xFFFFFFFF),
                             (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "a.cu").write_text(HAZARD)
    (root / "b.cu").write_text(HAZARD)
    return root


def _writes_hooked(monkeypatch, hook) -> None:
    """Run `hook(path)` as each file is about to be replaced."""
    write = fix.write_output

    def hooked(path: Path, data: bytes) -> None:
        hook(Path(path))
        write(path, data)

    monkeypatch.setattr(fix, "write_output", hooked)


def test_a_file_saved_while_other_files_are_fixed_is_left_alone(project: Path, monkeypatch) -> None:
    saved = HAZARD + "// a line saved in the editor\n"

    def save_b(path: Path) -> None:
        if path.name == "a.cu":
            (project / "b.cu").write_text(saved)

    _writes_hooked(monkeypatch, save_b)
    result = run("scan", "--fix", "--no-cache", cwd=project)
    assert (project / "b.cu").read_text() == saved
    assert "portlint: b.cu: not fixed: the file changed while fixes were being applied\n" in result.stderr
    assert (project / "a.cu").read_text() == CLEAN and FIXED_ONE in result.stdout
    assert result.exit_code == 1  # b.cu's finding is still there


def test_one_file_that_cannot_be_written_does_not_stop_the_others(project: Path, monkeypatch) -> None:
    def disk_full_for_a(path: Path) -> None:
        if path.name == "a.cu":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    _writes_hooked(monkeypatch, disk_full_for_a)
    result = run("scan", "--fix", "--no-cache", cwd=project)
    assert (project / "b.cu").read_text() == CLEAN
    assert (project / "a.cu").read_text() == HAZARD
    assert "portlint: a.cu: not fixed: cannot write: No space left on device\n" in result.stderr
    assert FIXED_ONE in result.stdout
    assert "fixable" not in result.stdout  # a.cu's fix cannot be applied by running --fix again
    assert result.exit_code == 2
    assert run("scan", "--fix", "--no-cache", "--exit-zero", cwd=project).exit_code == 0


def test_mode_owner_and_extended_attributes_are_kept(project: Path) -> None:
    target = project / "a.cu"
    target.chmod(0o640)
    as_root = os.geteuid() == 0
    if as_root:
        os.chown(target, 1234, 5678)
    attributes = {"user.portlint_test": b"kept", ACL: ACL_READ_FOR_1234}
    for name, value in list(attributes.items()):
        try:
            os.setxattr(target, name, value)
        except OSError:  # a file system without user attributes or ACLs
            del attributes[name]
    result = run("scan", "--fix", "--no-cache", "a.cu", cwd=project)
    assert result.exit_code == 0 and target.read_text() == CLEAN
    stat = target.stat()
    assert stat.st_mode & 0o7777 == 0o640
    if as_root:
        assert (stat.st_uid, stat.st_gid) == (1234, 5678)
    assert {name: os.getxattr(target, name) for name in attributes} == attributes


def test_a_hard_linked_file_is_edited_in_place(project: Path, tmp_path: Path) -> None:
    other_name = tmp_path / "elsewhere.cu"
    os.link(project / "a.cu", other_name)
    result = run("scan", "--fix", "--no-cache", "a.cu", cwd=project)
    assert result.exit_code == 0
    assert other_name.read_text() == CLEAN  # still the same file
    assert os.path.samefile(other_name, project / "a.cu")


def test_a_read_only_file_is_refused(project: Path) -> None:
    target = project / "a.cu"
    target.chmod(0o444)  # root could write it anyway
    result = run("scan", "--fix", "--no-cache", "--output-format", "concise", cwd=project)
    assert target.read_text() == HAZARD
    assert "portlint: a.cu: not fixed: the file is read-only\n" in result.stderr
    assert (project / "b.cu").read_text() == CLEAN
    assert result.exit_code == 1 and "fixable" not in result.stdout


def test_a_link_to_a_file_outside_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.cu"
    outside.write_text(HAZARD)
    (project / "linked.cu").symlink_to(outside)
    inside = project / "inside_link.cu"
    inside.symlink_to(project / "b.cu")
    result = run("scan", "--fix", "--no-cache", "linked.cu", "inside_link.cu", cwd=project)
    assert outside.read_text() == HAZARD
    assert f"portlint: linked.cu: not fixed: a symbolic link to {outside}, outside the project root\n" in result.stderr
    assert (project / "b.cu").read_text() == CLEAN and inside.is_symlink()  # a link within the root is fine


def test_lines_inserted_into_a_crlf_file_end_in_crlf(project: Path) -> None:
    target = project / "c.cu"
    target.write_bytes(b"#include <nccl.h>\r\nint x;\r\n")
    result = run("scan", "--fix", "--unsafe-fixes", "--no-cache", "c.cu", cwd=project)
    assert FIXED_ONE in result.stdout
    data = target.read_bytes()
    assert b"#include <rccl/rccl.h>\r\n" in data and b"#endif\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n")
