"""Where deep mode gets each translation unit's flags: `compile_commands.json`, else config.

Only the flags that change what the preprocessor and the parser see are kept (include
directories, macros, forced includes, the language standard): the compiler itself, its
target and code-generation flags are nvcc's, gcc's or hipcc's, not libclang's, and deep
mode chooses its own passes (see `translation_unit.py`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "compile_commands.json"
# Flags kept, with the value in the next argument or glued on (`-Iinclude`, `-I include`).
_PATH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter", "-include")
_MACRO_FLAGS = ("-D", "-U")
# nvcc's long spellings of the same flags.
_NVCC_SPELLINGS = {
    "--include-path": "-I", "--system-include": "-isystem", "--pre-include": "-include",
    "--define-macro": "-D", "--undefine-macro": "-U",
}


class CompileDbError(Exception):
    """A compile_commands.json that cannot be used: one line for the user."""


@dataclass(unsafe_hash=True)
class CompileFlags:
    """The parser-relevant flags of one file, with include paths made absolute."""

    arguments: tuple[str, ...]
    include_dirs: tuple[Path, ...]  # every -I/-isystem/... directory, for finding real ROCm headers
    directory: Path | None = None  # the entry's working directory: the unit is parsed from there


@dataclass(unsafe_hash=True)
class FlagSource:
    """Where a scan's flags come from, said in one line on stderr."""

    database: dict[Path, CompileFlags]  # by resolved source path; empty without a database
    default: CompileFlags  # for files the database does not list
    description: str


def locate(root: Path, explicit: Path | None) -> Path | None:
    """`--compile-commands PATH` (a file or a directory holding one), else the project root or `build/`."""
    if explicit is not None:
        path = explicit / FILE_NAME if explicit.is_dir() else explicit
        if not path.is_file():
            raise CompileDbError(f"{explicit}: no {FILE_NAME} there")
        return path
    for candidate in (root / FILE_NAME, root / "build" / FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def flag_source(root: Path, explicit: Path | None, configured: tuple[str, ...], config_file: Path | None,
                build=None) -> FlagSource:
    """`build` (a `build_model.BuildFiles`, optional): the include directories and ROCm
    defines the project's build files give, used when neither a database nor 'deep-flags' does."""
    from_build = _build_flags(build) if build is not None and not configured else ()
    default = parse_flags(configured or ("-I", ".", *from_build), root)
    path = locate(root, explicit)
    if path is not None:
        database = load(path)
        return FlagSource(database, default, f"flags of {len(database)} files from {_shown(path)}")
    where = f"{_shown(root)} or {_shown(root / 'build')}/"
    if configured:
        used = f"'deep-flags' from {_shown(config_file)}" if config_file else "'deep-flags'"
    elif from_build:
        dirs, defines = len(build.include_dirs), len(build.rocm_defines)
        used = (f"-I {_shown(root)} and the build files' {dirs} include director{'y' if dirs == 1 else 'ies'} "
                f"and {defines} ROCm define{'' if defines == 1 else 's'}")
    else:
        used = f"default flags (-I {_shown(root)})"
    return FlagSource({}, default, f"no {FILE_NAME} in {where}; using {used}")


def _build_flags(build) -> tuple[str, ...]:
    flags: list[str] = []
    for directory in build.include_dirs:
        flags += ["-I", str(directory)]
    for name, value in build.rocm_defines.items():
        flags.append(f"-D{name}" if value is None else f"-D{name}={value}")
    return tuple(flags)


def load(path: Path) -> dict[Path, CompileFlags]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompileDbError(f"{path}: cannot read: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CompileDbError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(entries, list):
        raise CompileDbError(f"{path}: expected a JSON array of compile commands")
    database: dict[Path, CompileFlags] = {}
    for number, entry in enumerate(entries):
        try:
            # `directory` is absolute as CMake writes it; a relative one is read from the database's own.
            directory = (path.parent / entry["directory"]).resolve()
            argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
            file = (directory / entry["file"]).resolve()
        except (KeyError, TypeError, ValueError) as exc:
            raise CompileDbError(f"{path}: entry {number} lacks 'directory', 'file' or a command ({exc})") from None
        database.setdefault(file, parse_flags(argv, directory))  # the first command of a file wins
    return database


def parse_flags(argv, directory: Path) -> CompileFlags:
    """Keep include, macro and standard flags of a command line; resolve paths against
    `directory` as the compiler run there would (response files read and expanded)."""
    kept: list[str] = []
    include_dirs: list[Path] = []
    args = list(argv)
    i = 0
    while i < len(args):
        options_file = _options_file(args, i)
        if options_file is not None:  # `@flags.rsp`, nvcc's `--options-file flags.rsp`: read in place
            name, used = options_file
            args[i:i + used] = _read_options(directory / name)
            continue
        arg = _NVCC_SPELLINGS.get(args[i].split("=", 1)[0], args[i])
        if arg != args[i] and "=" in args[i]:  # --include-path=dir
            args.insert(i + 1, args[i].split("=", 1)[1])
        flag, value = _split(arg, args[i + 1] if i + 1 < len(args) else None)
        i += 1 if value is None or arg != flag else 2
        if flag in _PATH_FLAGS and value is not None:
            resolved = (directory / value).resolve() if not Path(value).is_absolute() else Path(value)
            if flag == "-include" and not resolved.is_file():
                kept += [flag, value]  # not in the working directory: clang looks along the include path
                continue
            kept += [flag, str(resolved)]
            if flag != "-include":
                include_dirs.append(resolved)
        elif flag in _MACRO_FLAGS and value is not None:
            kept.append(flag + value)
        elif flag.startswith(("-std=", "--std=")):
            kept.append("-std=" + flag.split("=", 1)[1])
    return CompileFlags(tuple(kept), tuple(include_dirs), directory.resolve())


def _options_file(args: list[str], i: int) -> tuple[str, int] | None:
    """(file name, arguments it takes) for a response-file argument at `i`, else None."""
    arg = args[i]
    if arg.startswith("@") and len(arg) > 1:
        return arg[1:], 1
    if arg in ("--options-file", "-optf") and i + 1 < len(args):
        return args[i + 1], 2
    if arg.startswith("--options-file="):
        return arg.split("=", 1)[1], 1
    return None


def _read_options(path: Path) -> list[str]:
    try:
        return shlex.split(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return []  # a response file that is gone: its flags are lost, as the include lines will say


def _split(arg: str, following: str | None) -> tuple[str, str | None]:
    """(flag, value) of `-Idir`, `-I dir`, `-isystemdir`, `-DX=1`, `-D X`; (arg, None) for anything else."""
    for flag in (*_PATH_FLAGS, *_MACRO_FLAGS):
        if arg == flag:
            return flag, following
        if arg.startswith(flag) and flag != "-include":  # `-include-pch` is another flag
            return flag, arg[len(flag):]
    return arg, None


def _shown(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return path.as_posix()
