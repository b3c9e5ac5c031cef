"""The ROCm build model: the project as hip-clang builds it, worked out once per scan before
any rule runs (discover -> build model -> per-file checks -> project checks -> findings).

- `build_files`: what the build files (setup.py, CMake, Makefiles) say a ROCm build compiles,
  and the defines and include directories each build takes.
- the macro environment of a ROCm build and of a CUDA build, from hip-clang's predefines, the
  build-file defines and project headers reached through `#include`, and the shims (macros
  the ROCm build defines over CUDA names).
"""

from __future__ import annotations


from typing import TYPE_CHECKING

from portlint.discover import suffix_of
from portlint.fileio import NotReadable, read_regular
from portlint.build_model.macros import EMPTY, HEADER_SUFFIXES, TORCH_CUDA_DEFINES, TORCH_ROCM_DEFINES, BuildMacros, FileEnvironment

if TYPE_CHECKING:
    from portlint.build_model.build_files import BuildFiles

__all__ = ["BuildModel", "FileEnvironment", "build"]

# Larger files are skipped by the scan too (`engine.MAX_FILE_BYTES`).
_MAX_BYTES = 8 * 1024 * 1024
_C_FAMILY = "cuda"


class BuildModel:
    """What the per-file checks get from the build: per file, its macro environment."""

    def __init__(self, files: "BuildFiles", macros: BuildMacros) -> None:
        self.files, self.macros = files, macros
        self._environments: dict[str, FileEnvironment] = {}

    def environment(self, absolute: str) -> FileEnvironment:
        env = self._environments.get(absolute)
        if env is None:
            try:
                env = self.macros.environment(absolute)
            except RecursionError:  # includes nested deeper than Python's stack: no environment
                self.macros.problems.append((absolute, "includes nest too deep to follow; macros of its headers not read"))
                env = EMPTY
            self._environments[absolute] = env
        return env

    def walk_all(self) -> None:
        """Read every file's directives now, in the main process: what the walk finds wrong
        (a macro defined too often, includes nested too deep) reaches `problems`, and forked
        workers share the walk instead of each doing it again."""
        try:
            self.macros.walk_all()
        except RecursionError:
            self.macros.problems.append(("<build model>", "includes nest too deep to follow; macros of some headers not read"))
        except Exception as exc:  # noqa: BLE001 - the scan goes on without the rest of the walk
            self.macros.problems.append(("<build model>", f"internal error: {type(exc).__name__}: {exc}"))

    def bytes_read(self, absolute: str) -> bytes | None:
        """What the model read of a C-family file for this scan: the per-file pass takes it
        rather than reading the file again (None: read it)."""
        return self.macros.bytes_read(absolute)

    def headers_read(self) -> list[str]:
        """Files the macro environments read that were not among the scanned ones (a header
        in `include/` for a scan of `src/`): what the results also depend on."""
        return self.macros.headers_read()

    @property
    def problems(self) -> list[tuple[str, str]]:
        return self.macros.problems


def build(candidates, config, around=None) -> BuildModel:
    """The build model of one scan, from the discovered files (before any is analysed).
    `around`: with files named on the command line, the project's other files (discovered
    from its root): a file alone sees the headers and build scripts a full scan would."""
    # Imported here: the build-file reader uses `rocm_path`, which imports this package's
    # macro modules (a module-level import would make importing `rocm_path` first a cycle).
    from portlint.build_model.build_files import read_build_files

    files = read_build_files(candidates, config)
    scanned: list[str] = []
    torch_extension = False
    for c in candidates:
        if c.language == _C_FAMILY:
            scanned.append(c.absolute)  # read when the walk needs it: a warm scan may not
    for c in (*candidates, *(around or ())):
        if c.build_script and not torch_extension and (data := _read(c.absolute)) \
                and b"cpp_extension" in data:
            torch_extension = True  # PyTorch's extension builder passes its defines to every source
    rocm_defines = {**(TORCH_ROCM_DEFINES if torch_extension else {}), **files.rocm_defines}
    cuda_defines = {**(TORCH_CUDA_DEFINES if torch_extension else {}), **files.cuda_defines}
    # Headers an `#include <x.h>` of a named file may find by name, read when one needs them.
    project_headers = [c.absolute for c in around or ()
                       if c.language == _C_FAMILY and suffix_of(c.path.name).lower() in HEADER_SUFFIXES]
    rocm_build = files.rocm_build or torch_extension
    # A described ROCm build passes its own defines only: what the build files define for
    # other builds alone (a CUDA-only arm) is not defined there.
    rocm_undefined = files.other_builds_define - rocm_defines.keys() if rocm_build else frozenset()
    macros = BuildMacros({}, config.rocm_macros, rocm_defines, cuda_defines, files.include_dirs,
                         project_headers, read=_read, not_built=files.not_built, unread=scanned,
                         rocm_build=rocm_build, rocm_undefined=rocm_undefined)
    return BuildModel(files, macros)


def _read(path: str) -> bytes | None:
    """A file's bytes, or None: a FIFO or device never blocks the scan (`fileio`), and what
    cannot be read is left to the per-file pass to report."""
    try:
        return read_regular(path, _MAX_BYTES)
    except (OSError, NotReadable):
        return None
