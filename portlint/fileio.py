"""Reading inputs and writing outputs without blocking, clobbering devices or losing data.

Inputs: only regular files are read. A FIFO, socket or device named `x.cu` (or a symlink
to one, such as `/dev/zero`) would block the scan or never end, so it is refused before it
is opened, and the open itself is non-blocking in case the path changes in between; the
size is checked on the opened descriptor, before reading.

Outputs (`-o`, `--write-baseline`, `report -o`): a regular file is replaced atomically
(temporary file and rename, its mode and owner kept); anything else is written in place,
so `-o /dev/null` leaves the device a device, a FIFO gets the data, and `-o /dev/stdout`
writes to the descriptor the shell opened. A symlink is followed: its target is written,
never the link itself replaced.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path


class NotReadable(Exception):
    """A file that is skipped; the message is the reason, for one line on stderr."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


# Files rewritten in memory only (`--diff`): resolved path -> new bytes. Every read of the
# scan goes through `read_regular`, so a preview of the fixes scans exactly what `--fix`
# would have written to disk (`portlint.fix.run_fix_passes`).
_pending: dict[str, bytes] = {}


@contextmanager
def in_memory_writes():
    """Within it, `write_pending` keeps a file's new bytes in memory, and `read_regular`
    returns them in place of the file's; yields the mapping (resolved path -> bytes)."""
    _pending.clear()
    try:
        yield _pending
    finally:
        _pending.clear()


def write_pending(path: Path | str, data: bytes) -> None:
    _pending[os.path.realpath(path)] = data


def refused_by_os(path: Path | str) -> bool:
    """A path no system call takes: a NUL byte ends a C string (Python raises ValueError
    rather than pass it on), so no file has such a name."""
    return "\0" in os.fspath(path)


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at `path` (a symlink is followed), at most `limit` of them
    (or, inside `in_memory_writes`, the bytes written for it there).

    Raises NotReadable with the reason (not a regular file, too large, a name no file has)
    or OSError.
    """
    if refused_by_os(path):
        raise NotReadable("the name holds a NUL byte, which no file name can")
    if _pending and (data := _pending.get(os.path.realpath(path))) is not None:
        if len(data) > limit:
            raise NotReadable(f"larger than {limit // (1024 * 1024)} MiB")
        return data
    if not stat.S_ISREG(mode := os.stat(path).st_mode):
        raise NotReadable(f"not a regular file ({_kind(mode)})")
    # O_NONBLOCK: had the path become a FIFO since the stat, the open must not wait for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise NotReadable(f"larger than {limit // (1024 * 1024)} MiB")
        # A buffer of the file's size (one byte more shows growth since the fstat), not of
        # the limit: an 8 MiB buffer is a memory mapping of its own, shrunk to the data's
        # size but kept while the bytes live, one per file read; 65,530 of them (the
        # system's `vm.max_map_count`) and nothing more can be mapped, not even a library.
        data = fh.read(info.st_size + 1)
        if len(data) > info.st_size:  # it grew: read on to the limit
            data += fh.read(limit + 1 - len(data))
    if len(data) > limit:
        raise NotReadable(f"larger than {limit // (1024 * 1024)} MiB")
    return data


# Paths that name an open descriptor (`/dev/stdout`, `/dev/fd/3`, `/proc/self/fd/1`): the
# shell opened it, with `>` or `>>`, and that choice stands.
_DESCRIPTOR = re.compile(r"/dev/(?P<std>std(?:in|out|err))|/dev/fd/(?P<fd>\d+)"
                         r"|/proc/(?P<pid>self|thread-self|\d+)/fd/(?P<proc_fd>\d+)")
_STANDARD = {"stdin": 0, "stdout": 1, "stderr": 2}


def _descriptor_path(path: str) -> tuple[str, int | None] | None:
    """If `path`, or a symlink on the way to its target, names a descriptor: that path, and
    the descriptor's number when it is one of this process's."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on symlink hops
        if m := _DESCRIPTOR.fullmatch(current):
            if m["std"]:
                return current, _STANDARD[m["std"]]
            if m["fd"]:
                return current, int(m["fd"])
            own = m["pid"] in ("self", "thread-self", str(os.getpid()))
            return current, int(m["proc_fd"]) if own else None
        try:
            link = os.readlink(current)
        except OSError:
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return None


def write_output(path: Path | str, data: bytes) -> None:
    """Write `data` to `path` without turning a device into a file or a link into a copy.

    Missing parent directories are created. Raises OSError.
    """
    if (descriptor := _descriptor_path(os.fspath(path))) is not None:
        _write_descriptor(*descriptor, data)
        return
    target = os.path.realpath(path)  # follow symlinks: the link itself is never replaced
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and (not stat.S_ISREG(info.st_mode) or info.st_nlink > 1):
        # A device, FIFO or socket is written, not replaced; so is a hard-linked file, which a
        # rename would split from its other names.
        _write_in_place(target, data, os.O_TRUNC if stat.S_ISREG(info.st_mode) else 0)
        return
    _replace_regular(Path(target), data, info)


def _write_descriptor(path: str, number: int | None, data: bytes) -> None:
    """Write through the open descriptor itself when it is ours: its offset is shared with
    whatever else this process prints there (`--write-baseline /dev/stdout > file`)."""
    if number is not None:
        try:
            os.fstat(number)
        except OSError:
            number = None  # not open here: open the path as any other
    if number is None:
        # Appending keeps what `>>` put there before; after `>` the file is empty anyway.
        _write_in_place(path, data, os.O_APPEND)
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == number:
                stream.flush()  # what was printed before comes first
        except (OSError, ValueError, AttributeError):
            pass  # a replaced stream (tests) has no descriptor
    with os.fdopen(os.dup(number), "wb") as out:
        out.write(data)


def _write_in_place(path, data: bytes, flags: int) -> None:
    fd = os.open(path, os.O_WRONLY | flags | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _replace_regular(target: Path, data: bytes, info: os.stat_result | None) -> None:
    """Atomically replace (or create) a regular file: a reader sees the old or the new bytes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".portlint")
    except PermissionError:
        if info is None or not os.access(target, os.W_OK):
            raise
        _write_in_place(target, data, os.O_TRUNC)  # a writable file in a directory that is not
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if info is None:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # as `open(..., "w")` would have created it
        else:
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.chown(tmp, info.st_uid, info.st_gid)
                except OSError:
                    pass  # not ours to give away: the new file is ours, with the old mode
            _copy_xattrs(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _copy_xattrs(source: Path, tmp: str) -> None:
    """Extended attributes (POSIX ACLs among them) go over to the replacing file, where allowed."""
    if not hasattr(os, "listxattr"):  # Linux only
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(tmp, name, os.getxattr(source, name))
        except OSError:
            pass  # e.g. security.* without the privilege: the rest is still kept
