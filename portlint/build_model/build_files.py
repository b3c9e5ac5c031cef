"""What the build files say about a ROCm build: which sources it compiles, and the defines and
include directories it passes.

Read from setup.py (CUDAExtension/CppExtension sources under ROCm tests, followed into the
project's build-helper functions it imports: `python_helpers`), builder classes
(`extension_builders`) and CMake (options, arms, add_subdirectory, add_library,
target_sources), each arm judged by the ROCm-path model's condition logic. A file counts as not built for ROCm only when a build file names it
on a path a ROCm build never takes, no path a ROCm build may take names it, and no file that
may be compiled includes it. Where no build file decides, every file counts as compiled.

Every question this module asks of the file system (a file read, a file looked for, a glob)
goes through the `Observed` it is given: the result is cached with that record and reused
while the record holds (`build_model._build_files`), so a question asked around it would
leave the cached result stale.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from portlint import hipify, queries, rocm_path
from portlint.checks.libraries import library_for_link_name
from portlint.checks.python_build import GLOB_CALLS, BuildScript, callee_name, dotted_name, is_build_helper
from portlint.checks import make_ast
from portlint.build_model.macros import BACKEND_TWINS, HEADER_SUFFIXES, backend_selectors
from portlint.build_model.extension_builders import Builder, read_builders
from portlint.build_model.observed import Observed
from portlint.build_model.python_helpers import PythonHelpers
from portlint.build_model.system_headers import is_system_header
from portlint.checks.setup_py import fails_before_on_rocm, rocm_path_markers, stops_on_rocm
from portlint.checks.cmake_ast import cached_commands, commands
from portlint.discover import CUDA_SUFFIXES, MAKEFILE_NAMES, discover, suffix_of
from portlint.rocm_path import CMakeValue, CMakeWalk, PythonNames, Status, Value, cmake_expand, names_hip, requires_hip
from portlint.source import CMAKE, CUDA, MAKE, PYTHON, SourceFile, module_nodes

# Sources a build compiles (headers are reached through `#include`).
COMPILED_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx", ".c"})
MAX_BUILD_FILE_BYTES = 2 * 1024 * 1024
MAX_SOURCE_BYTES = 8 * 1024 * 1024  # a source whose includes are followed (larger ones are skipped by the scan)
MAX_GLOB_MATCHES = 20000  # a glob of a whole tree: enough for any source list
MAX_CMAKE_DEPTH = 64  # add_subdirectory/include nesting; deeper is a cycle or a generator
MAX_CMAKE_WALKS = 2000  # list files read per CMake tree (the same one may be included many times)
# hipify-perl, hipify-clang, PyTorch's `hipify_python` / `torch.utils.hipify`, a project's
# `hipify.py` wrapper of it.
_HIPIFY_TOOL = re.compile(r"(?:^|[/\\.\s])hipify(-perl|-clang|_python|\.py)?(?:$|[\s.])")
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\r\n]+)[>"]', re.MULTILINE)


@dataclass(unsafe_hash=True)
class BuildFiles:
    # Absolute paths of sources and headers no ROCm build compiles (nor includes from a
    # compiled file), and CMake list files no ROCm build reads, each with the reason shown
    # by `--show-not-built`.
    not_built: Mapping[str, str] = field(default_factory=dict)
    # `-D` defines each build surely passes: name -> value (None for a bare `-DNAME`).
    rocm_defines: Mapping[str, str | None] = field(default_factory=dict)
    cuda_defines: Mapping[str, str | None] = field(default_factory=dict)
    # Include directories the build files name (absolute), in order.
    include_dirs: tuple[str, ...] = ()
    # A build file describes the ROCm build (HIP language, `find_package(hip)`, a PyTorch
    # extension): `rocm_defines` is then what it passes, not a guess.
    rocm_build: bool = False
    # Names the build files define only for other builds (a CUDA-only arm, another backend's
    # list file the ROCm build never reads), never where the ROCm build may go: with
    # `rocm_build`, the ROCm build does not define them.
    other_builds_define: frozenset[str] = frozenset()
    # A build script uses PyTorch's extension builder (`torch.utils.cpp_extension`), which
    # passes its own defines to every source it compiles.
    torch_extension: bool = False
    # The offload architectures the ROCm build names (`--offload-arch=gfx942`,
    # `set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")`), and the `--gpu-max-threads-per-block`
    # it compiles kernels without bounds for (the smallest, if several).
    offload_archs: tuple[str, ...] = ()
    max_threads: int | None = None
    # Sources the ROCm build hipifies before hip-clang reads them (absolute paths; the headers
    # they include are hipified with them), or every source it compiles (`hipify_all`):
    # PyTorch's extension builder hipifies its extensions' sources, and a build step that runs
    # hipify (`hipify-perl`, `hipify-clang`, PyTorch's hipify) the sources it is given. Rules
    # then judge the hipified text (`portlint.hipify`).
    hipified: frozenset[str] = frozenset()
    hipify_all: bool = False
    # Which hipify the ROCm build runs (`portlint.hipify.HIPIFY`, `.TORCH`): HIPIFY's
    # hipify-perl/-clang and PyTorch's hipify rename different sets of names.
    hipify_tools: frozenset[str] = frozenset()
    # The hipify steps' own maps (hipify_torch's `CUSTOM_MAP_FILE`): CUDA text -> HIP text, as
    # (key, value) pairs in order (`portlint.hipify.use_custom_map`).
    hipify_custom_map: tuple[tuple[str, str], ...] = ()
    # CMake list file -> the ROCm-path ranges (start, end, status) the walks of its project's
    # trees gave it, with the variables set by the lists read before it: those every walk
    # agrees on (`_agreed_ranges`; `FileEnvironment.list_ranges`).
    list_ranges: Mapping[str, tuple] = field(default_factory=dict)
    # Sources a ROCm build surely compiles (`_Build.rocm_compiled`), hipified or not.
    rocm_compiled: frozenset[str] = frozenset()
    # Names the ROCm build may `-U` (`-U__HIP_NO_HALF_OPERATORS__`): a compiler driver's
    # default define of that name (PyTorch's) may not hold.
    rocm_undefines: frozenset[str] = frozenset()
    # Every name a build file defines, in any arm: where the build files say when a macro
    # is defined, they are believed over its name (`BuildMacros.hip_switches`).
    build_defined: frozenset[str] = frozenset()


@dataclass
class _Build:
    """What one build description (a setup.py, a CMake tree) says."""

    name: str  # where it starts, for reasons: `setup.py`, `CMakeLists.txt`
    rocm_sources: set[str] = field(default_factory=set)  # may be compiled by a ROCm build
    # Of those, the ones a ROCm build surely compiles: named where the ROCm build surely goes
    # (no option or arm between it and the top decides otherwise).
    rocm_compiled: set[str] = field(default_factory=set)
    cuda_sources: dict[str, str] = field(default_factory=dict)  # path -> where a CUDA-only path names it
    unresolved: bool = False  # a ROCm source list it could not read: it decides nothing
    # An `add_subdirectory`/`include` on the ROCm side it could not follow (`${dir}` unknown,
    # a list file that does not parse): a list file it did not reach may still be read.
    lists_unresolved: bool = False
    unread_lists: dict[str, str] = field(default_factory=dict)  # CMake files only CUDA builds read
    hipify: bool = False  # PyTorch's extension builder: it hipifies what it compiles
    # path -> why: sources the build files surely give the CUDA build only, even where the
    # rest of the build is unresolved: passed under a CUDA keyword beside its HIP twin
    # (`CUDA_SPECIFIC_SRCS` / `HIP_SPECIFIC_SRCS`), named in a function only CUDA arms call.
    cuda_only_sources: dict[str, str] = field(default_factory=dict)
    built_on_rocm: bool = True  # False: a builder class ROCm does not build (`is_compatible()`, SYCL)
    rocm: bool = False  # it describes a ROCm build (ROCm arms, a ROCm-capable builder)
    stops_on_rocm: str = ""  # where a ROCm build of this setup.py fails before its extensions
    entry: str = ""  # the setup.py or makefile (absolute)
    from_builder: bool = False  # a builder class (`extension_builders`)
    makefile: bool = False  # a makefile (`entry`)


class _Collector:
    def __init__(self, root: Path, fs: Observed):
        self.root = root
        self.fs = fs  # every file read or looked for goes through it
        self.builds: list[_Build] = []
        self.rocm_defines: dict[str, str | None] = {}
        self.cuda_defines: dict[str, str | None] = {}
        self.include_dirs: list[str] = []
        self.cuda_include_dirs: list[str] = []  # include folders only CUDA-only arms add
        self.run_time_loads: list | None = None  # `_run_time_loads`, once found
        # Include directories only builds ROCm never runs name (a SYCL builder's): where the
        # sources of those builds find their headers.
        self.other_include_dirs: list[str] = []
        self.rocm_build = False  # see BuildFiles.rocm_build
        self.rocm_may_define: set[str] = set()  # names defined where the ROCm build surely or maybe goes
        self.defined_elsewhere: set[str] = set()  # names defined for other builds (see BuildFiles)
        self.rocm_undefines: set[str] = set()  # `-UNAME` where the ROCm build may go (see BuildFiles)
        self._shown: dict = {}
        self._lists: dict[str, SourceFile | None] = {}
        self.offload_archs: dict[str, None] = {}  # in the order named
        self.max_threads: set[int] = set()
        self.hipify_step = False  # a build step runs hipify on the sources (see BuildFiles.hipified)
        self.hipify_tools: set[str] = set()  # which hipify those steps run (see BuildFiles.hipify_tools)
        self.hipify_custom_map: dict[str, str] = {}  # see BuildFiles.hipify_custom_map
        self.list_models: dict[str, list] = {}  # list file -> the models its walks gave (`BuildFiles.list_ranges`)
        self._setters: dict[str, _VariableSetters] = {}  # see `setters_of`

    def note_custom_map(self, path: str) -> None:
        """A hipify step's own map (hipify_torch's `CUSTOM_MAP_FILE`, JSON: `{"custom_map":
        {"<nvtx3/nvToolsExt.h>": "<roctracer/roctx.h>"}}`): text it rewrites besides PyTorch's."""
        data = self.fs.read(path, MAX_BUILD_FILE_BYTES)
        try:
            table = json.loads(data or b"").get("custom_map")
        except (ValueError, AttributeError):
            return
        if isinstance(table, dict):
            self.hipify_custom_map.update((k, v) for k, v in table.items() if isinstance(k, str) and isinstance(v, str))

    def note_commands(self, words) -> None:
        """A command a build runs (a CMake `COMMAND`, a Makefile recipe): does it hipify?"""
        for word in words:
            if found := _HIPIFY_TOOL.search(word):
                self.hipify_step = True
                # hipify-perl and hipify-clang are HIPIFY's; a bare `hipify`, `hipify_python`
                # or a project's `hipify.py` wrapper run PyTorch's.
                self.hipify_tools.add(hipify.HIPIFY if found.group(1) in ("-perl", "-clang") else hipify.TORCH)

    def read_list(self, path: Path) -> SourceFile | None:
        """A CMake list file, read and parsed once per scan: the walks and the checks for
        ROCm-only and SYCL list files all ask for the unreached ones."""
        key = str(path)
        if key not in self._lists:
            self._lists[key] = _read(path, CMAKE, self.fs)
        return self._lists[key]

    def setters_of(self, path: str) -> "_VariableSetters":
        """What a list file sets, read once per scan (each CMake tree asks for the ones it
        did not reach)."""
        if path not in self._setters:
            source = self.read_list(Path(path))
            self._setters[path] = _VariableSetters.of_list_file(source) if source is not None else _VariableSetters()
        return self._setters[path]

    def shown(self, path: str | Path) -> str:
        shown = self._shown.get(path)
        if shown is None:  # asked for at each command of a list file: once per file
            try:
                shown = Path(path).relative_to(self.root).as_posix()
            except ValueError:
                shown = str(path)
            self._shown[path] = shown
        return shown

    def add_include_dir(self, path: str) -> None:
        if path not in self.include_dirs:
            self.include_dirs.append(path)

    def define(self, rocm: Value, cuda: Value, text: str) -> None:
        """One define (`NAME`, `NAME=VALUE`, `-DNAME=VALUE`) where the ROCm build goes as
        `rocm` says and the CUDA build as `cuda` says."""
        self.define_for(True, rocm, text)
        self.define_for(False, cuda, text)

    def define_for(self, rocm_side: bool, taken: Value, text: str) -> None:
        """A define in a place one build (the ROCm build's if `rocm_side`, else the CUDA
        build's) surely (True), maybe (None) or never (False) reaches."""
        parsed = _define(text)
        if parsed is None:
            return
        name, value = parsed
        if taken is True:
            (self.rocm_defines if rocm_side else self.cuda_defines).setdefault(name, value)
        (self.rocm_may_define if rocm_side and taken is not False else self.defined_elsewhere).add(name)

    def undefine(self, text: str) -> None:
        """`-UNAME` where the ROCm build may go: it takes back a define of its compiler driver
        (`-U__HIP_NO_HALF_OPERATORS__` over PyTorch's `-D__HIP_NO_HALF_OPERATORS__=1`)."""
        name = text.removeprefix("-U").strip()
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            self.rocm_undefines.add(name)

    def note_flags(self, words) -> None:
        """Compiler flags or command words a ROCm build may pass: `--offload-arch=gfx90a,gfx942`,
        `--gpu-max-threads-per-block=256`, `-DCMAKE_HIP_ARCHITECTURES=gfx942`,
        `PYTORCH_ROCM_ARCH=gfx90a` (an environment setting in a command)."""
        for word in words:
            for token in word.split():
                option, equals, value = token.partition("=")
                if not equals:
                    continue
                if option in ("--offload-arch", "--amdgpu-target"):
                    self.note_archs([value])
                elif option == "--gpu-max-threads-per-block" and value.isdigit():
                    self.max_threads.add(int(value))
                elif option.removeprefix("-D").split(":")[0] in ARCH_VARIABLES:  # `-DVAR:STRING=...`
                    self.note_archs([value])

    def note_archs(self, values) -> None:
        """The gfx names in values of an architecture list (`gfx90a;gfx942`, `gfx90a,gfx942`)."""
        for value in values:
            for part in re.split(r"[;,\s\"']+", value):
                if _GFX_NAME.fullmatch(part):
                    self.offload_archs.setdefault(part)

    def other_builds_define(self) -> frozenset[str]:
        return frozenset(self.defined_elsewhere - self.rocm_may_define - self.rocm_defines.keys())


# Variables that hold a ROCm build's offload architectures.
ARCH_VARIABLES = frozenset({"CMAKE_HIP_ARCHITECTURES", "HIP_ARCHITECTURES", "AMDGPU_TARGETS", "GPU_TARGETS",
                            "PYTORCH_ROCM_ARCH"})
_GFX_NAME = re.compile(r"gfx[0-9a-f]{3,4}(?::[a-z]+[+-])*")  # one word's text: `gfx90a`, `gfx90a:xnack+`


def _define(text: str) -> tuple[str, str | None] | None:
    """(name, value) of `NAME`, `NAME=VALUE` or `-DNAME=VALUE` (value None for a bare name)."""
    text = text[2:] if text.startswith("-D") else text
    name, equals, value = text.partition("=")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return None
    return name, value if equals else None


def read_build_files(candidates, config, whole_project: bool = False, fs: Observed | None = None) -> BuildFiles:
    """The build facts of the scanned project (`candidates` from discovery). `whole_project`:
    the candidates are every file of the project (named files with the project around them),
    so a named file adds no build file of its own. `fs` records what was read and looked for."""
    root = Path(config.root)
    fs = fs if fs is not None else Observed()
    collector = _Collector(root, fs)
    alone = not whole_project
    for path in _setup_scripts(candidates, root, fs, alone):
        _read_setup_py(path, collector)
    python_files = [c.absolute for c in candidates if c.language == PYTHON]
    paths_of = functools.partial(_project_paths, fs=fs, root=root)
    builders = read_builders(python_files, root, fs, paths_of, collector.shown,
                             functools.cache(lambda base: PythonHelpers(base, root, fs, paths_of, _string)))
    for builder in builders:
        _add_builder(builder, collector)
    reached: set[str] = set()
    trees: list[_Build] = []
    tree_lists: list[tuple[_Build, list[str]]] = []  # each entry's build and list files (`_cuda_only_trees`)
    for path in _cmake_entries(candidates, root, fs, alone):
        tree = _read_cmake_tree(path, collector, candidates)
        trees.append(tree.build)
        reached.update((str(path), *tree.reached))
        tree_lists.append((tree.build, [str(path), *tree.reached]))
    unreached = _unreached_lists(candidates, reached, collector)
    rocm_only = _rocm_only_lists(unreached)
    # A nested CMake project (its own `project()`, configured by its own driver, such as a
    # setup.py that runs CMake on its folder) is an entry too: its arms say what it compiles.
    nested = [path for path, source in unreached if path not in rocm_only and _declares_project(source)]
    for path in nested:
        if str(path) not in reached:
            tree = _read_cmake_tree(path, collector, candidates)
            trees.append(tree.build)
            reached.update((str(path), *tree.reached))
    if nested:
        unreached = [(path, source) for path, source in unreached if str(path) not in reached]
    _other_directories_define(unreached, rocm_only, collector)
    unadded = _added_by_no_build(unreached, rocm_only, trees, collector)
    backend_folders: dict[str, str] = {}  # the CUDA backend's own folder -> why (`_cuda_twin_modules`)
    for path, twin in _cuda_twin_modules(candidates, reached).items():
        # The CUDA backend's module beside its ROCm twin, which no walk reached (a backend
        # function reads it by a computed name): the CUDA build's, and what it includes too.
        tree = _CMakeTree(path, collector, cuda_only=True)
        tree.read()
        for read_also in [p for p in tree.build.unread_lists if p in reached]:
            del tree.build.unread_lists[read_also]  # the ROCm build's walk reads it too
        tree.build.unread_lists[str(path)] = f"the CUDA backend's module, beside {twin} for ROCm, and no list file reads it"
        if "/" in twin and not _names_folder_files(path.parent.parent / twin, path.parent, candidates, fs):
            # a folder's twin (`src/cuda/model.cmake` beside `src/hip/model.cmake`) that compiles
            # none of this folder's files itself
            backend_folders[str(path.parent)] = (f"in {collector.shown(path.parent)}, the CUDA backend's folder "
                                                 f"beside {collector.shown(path.parent.parent / twin)} for ROCm, "
                                                 "which no list file reads")
    for path in rocm_only:
        tree = _CMakeTree(path, collector, rocm_only=True)
        tree.read()
        # A backend that compiles another directory's sources (`file(GLOB ../cuda/*.cu)`)
        # takes them, not that directory's list file: unreached, it is the CUDA build's.
        for directory in sorted({os.path.dirname(p) for p in tree.build.rocm_sources} - {str(path.parent)}):
            lists = os.path.join(directory, "CMakeLists.txt")
            if lists not in reached and fs.is_file(lists):
                tree.build.unread_lists[lists] = (f"the ROCm build ({collector.shown(path)}) compiles its "
                                                  "sources from its own list file")
    for path in _makefiles(candidates, root, fs):
        _read_makefile(path, collector)
    component_files = _cuda_only_components(collector, unreached, rocm_only, trees)
    not_built: dict[str, str] = dict(component_files)
    if collector.rocm_build:
        not_built.update(_cuda_initial_caches(candidates, reached, collector))
    cuda_only_trees = _cuda_only_trees(tree_lists, collector)
    candidates_not_built: dict[str, str] = _sycl_sources(candidates, unreached, collector)
    cuda_only_setups = _cuda_only_setups(candidates, collector)
    for build in collector.builds:
        not_built.update(build.unread_lists)
        # A build with a ROCm source list that could not be read may compile any file, except
        # one named in a list file its ROCm build never reads (a CUDA-only subdirectory).
        cuda_only_lists = {collector.shown(p) for p in build.unread_lists} if build.unresolved else set()
        for path, where in build.cuda_sources.items():
            if path not in build.rocm_sources and (not build.unresolved or where.rsplit(":", 1)[0] in cuda_only_lists):
                candidates_not_built[path] = f"listed only on a CUDA-only path ({where})"
        for path, why in build.cuda_only_sources.items():
            if path not in build.rocm_sources:
                candidates_not_built[path] = why
    climb = not any(b.lists_unresolved for b in trees)  # (an unfollowed `add_subdirectory` may add a folder)
    for path, where in _in_cuda_only_folders(candidates, not_built, reached if climb else None).items():
        candidates_not_built.setdefault(path, where)
    for c in candidates:  # the sources of a CUDA backend's folder (its module's `model.cmake`)
        folder = next((f for f in backend_folders if c.absolute.startswith(f + os.sep)), None)
        if folder is not None and c.language == CUDA:
            candidates_not_built.setdefault(c.absolute, backend_folders[folder])
    # A list file no build adds, and the sources it names (those a build compiles are popped below).
    not_built.update(unadded)
    for path, reason in _named_in(unadded, unreached, fs, collector.shown).items():
        candidates_not_built.setdefault(path, reason)
    for path, reason in cuda_only_setups.items():
        (candidates_not_built if suffix_of(os.path.basename(path)).lower() in CUDA_SUFFIXES else not_built)[path] = reason
    compiled = set().union(*(b.rocm_sources for b in collector.builds)) if collector.builds else set()
    for path, reason in _unlisted_in_builder_folders(candidates, collector, compiled).items():
        candidates_not_built.setdefault(path, reason)
    for path in compiled:
        candidates_not_built.pop(path, None)
    # A ROCm source that is not there yet is made at build time, often by hipifying a CUDA
    # one (`ops.cu` -> `ops.hip`, `ops_hip.cu`): that CUDA source is compiled after all.
    generated = {_hipified_key(p) for p in compiled if not fs.exists(p)}
    for path in [p for p in candidates_not_built if _hipified_key(p) in generated]:
        del candidates_not_built[path]
    cuda_folders = [d for d in collector.cuda_include_dirs if d not in collector.include_dirs]
    if collector.rocm_build:
        for path, reason in _cuda_folder_twins(candidates, cuda_folders, collector).items():
            candidates_not_built.setdefault(path, reason)
    if candidates_not_built:
        not_built.update(_not_included(candidates_not_built, candidates, root, collector.include_dirs,
                                       [*collector.other_include_dirs, *cuda_folders], config,
                                       fs, whole_project))
    # (after the folder rules above: a CUDA-only tree's folders still hold the ROCm build's sources)
    for path, reason in cuda_only_trees.items():
        not_built.setdefault(path, reason)
    # Builder classes build with PyTorch's extension builder too, wherever setup.py calls them.
    torch_extension = any(b.built_on_rocm for b in builders) or any(
        c.build_script and b"cpp_extension" in (fs.read(c.absolute, MAX_BUILD_FILE_BYTES, keep=True) or b"")
        for c in candidates)
    return BuildFiles(not_built=not_built, rocm_defines=collector.rocm_defines,
                      cuda_defines=collector.cuda_defines, include_dirs=tuple(collector.include_dirs),
                      rocm_build=collector.rocm_build, other_builds_define=collector.other_builds_define(),
                      torch_extension=torch_extension, offload_archs=tuple(collector.offload_archs),
                      max_threads=min(collector.max_threads, default=None),
                      hipified=frozenset(p for b in collector.builds if b.hipify for p in b.rocm_sources),
                      rocm_compiled=frozenset(p for b in collector.builds for p in b.rocm_compiled),
                      rocm_undefines=frozenset(collector.rocm_undefines),
                      build_defined=frozenset(collector.rocm_may_define | collector.defined_elsewhere
                                              | collector.rocm_defines.keys() | collector.cuda_defines.keys()),
                      hipify_all=_hipifies_all(collector, torch_extension or _extension_helpers(candidates, fs)),
                      hipify_tools=_hipify_tools(collector, torch_extension or _extension_helpers(candidates, fs)),
                      hipify_custom_map=tuple(collector.hipify_custom_map.items()),
                      list_ranges={path: ranges for path, ranges in
                                   ((p, _agreed_ranges(models)) for p, models in collector.list_models.items()) if ranges})


def _cuda_only_components(collector: _Collector, unreached: list[tuple[Path, SourceFile]], rocm_only: list[Path],
                          trees: list["_Build"]) -> dict[str, str]:
    """The build files of a component only the CUDA build configures (the folder of a list
    file read only from a CUDA-only arm: a vendored CUDA library under `add_subdirectory`):
    the list files below it no walk reached (not a ROCm-only one, nor a project of its own),
    and its makefiles that name no ROCm build (an example's), whose sources become the CUDA
    build's. Nothing where a tree has an `add_subdirectory` it could not follow (it may add a
    folder of the component). build file -> why."""
    if any(b.lists_unresolved for b in trees):
        return {}
    folders = {os.path.dirname(p): p for b in collector.builds for p, why in b.unread_lists.items()
               if os.path.basename(p) == "CMakeLists.txt" and why.startswith(_READ_ONLY_FROM_CUDA)}

    def component(path: str) -> str | None:
        return next((lists for folder, lists in folders.items() if path.startswith(folder + os.sep)), None)

    found = {}
    for path, source in unreached:
        lists = component(str(path))
        if lists is not None and str(path) != lists and path not in rocm_only and not _declares_project(source):
            found[str(path)] = f"below {collector.shown(lists)}, which only the CUDA build reads, and no list file reads it"
    for build in collector.builds:
        lists = component(build.entry) if build.makefile and not build.rocm else None
        if lists is None or rocm_path.MAKE_HIP_BUILD.search(collector.fs.read(build.entry, MAX_BUILD_FILE_BYTES) or b""):
            continue  # (a makefile with a hipcc target of its own is a ROCm build)
        where = f"{build.name}, a makefile of {collector.shown(os.path.dirname(lists))}, which only the CUDA build configures"
        found[build.entry] = where
        for path in build.rocm_sources:
            build.cuda_sources.setdefault(path, where)
        build.rocm_sources.clear()
        build.rocm_compiled.clear()
    return found


_PATH_WORDS = re.compile(r"[\w.+\-/\\]+")  # a path as a CMake word writes it (between `${`, `}`, blanks)


def _names_folder_files(module: Path, folder: Path, candidates, fs: Observed) -> bool:
    """Does the module name the folder (`cuda/`) or one of its C-family files by name (a HIP
    backend that compiles the CUDA backend's `reduce.cu` as HIP)? Then it may compile them."""
    text = (fs.read(str(module), MAX_BUILD_FILE_BYTES) or b"").decode("utf-8", "replace")
    names = {os.path.basename(c.absolute) for c in candidates
             if c.language == CUDA and c.absolute.startswith(str(folder) + os.sep)}
    for word in _PATH_WORDS.findall(text):
        parts = re.split(r"[/\\]", word)
        if folder.name in parts[:-1] or parts[-1] in names:
            return True
    return False


# Commands an initial cache (`cmake -C host-config.cmake`) runs: cache entries and tests.
# (`cached_commands` gives the plain commands, also those inside `if` blocks.)
_CACHE_SCRIPT_COMMANDS = frozenset({"set", "unset", "message", "string", "list", "get_filename_component", "file"})
_READ_ONLY_FROM_CUDA = "read only from a CUDA-only branch"


def _cuda_initial_caches(candidates, reached: set[str], collector: _Collector) -> dict[str, str]:
    """CMake scripts no list file reads that only set cache entries, turn on a CUDA switch
    (`set(ENABLE_CUDA ON CACHE BOOL "")`) and name no HIP or ROCm anywhere: a machine's
    initial cache for the CUDA build (`cmake -C host-configs/<machine>_cuda.cmake`), which a
    ROCm configure does not read (its own names HIP). path -> why."""
    found = {}
    for c in candidates:
        if c.language != CMAKE or not c.absolute.endswith(".cmake") or c.absolute in reached:
            continue
        source = collector.read_list(Path(c.absolute))
        commands = cached_commands(source) if source is not None else []
        if not commands or any(command.name not in _CACHE_SCRIPT_COMMANDS for command in commands) \
                or _lists_name_rocm([c.absolute], collector):
            continue
        switches = [words[0] for words in (command.words(source) for command in commands if command.name == "set")
                    if len(words) >= 3 and words[2] == "CACHE" and words[1].upper() in ("ON", "TRUE", "YES", "1")
                    and rocm_path.mentions_cuda(words[0])]
        if switches:
            found[c.absolute] = (f"an initial cache for the CUDA build (it turns on {switches[0]} and names no ROCm), "
                                 "which no list file reads")
    return found


def _agreed_ranges(models: list) -> tuple:
    """The ranges of a list file that every walk of it gave (each tree that reads it, with
    its own variables); none where a walk kept no model or read it in a loop (`None`)."""
    if not models or any(m is None for m in models):
        return ()
    common = set(models[0].ranges).intersection(*(m.ranges for m in models[1:]))
    return tuple(r for r in models[0].ranges if r in common)


def _extension_helpers(candidates, fs: Observed) -> bool:
    """Does a Python file of the project build extensions with PyTorch's builder (a builder
    class of DeepSpeed's `op_builder` kind, a `load(...)` of sources at run time)?"""
    return any(c.language == PYTHON and not c.build_script
               and is_build_helper(fs.read(c.absolute, MAX_BUILD_FILE_BYTES) or b"") for c in candidates)


def _in_cuda_only_folders(candidates, unread_lists: Mapping[str, str], reached: set[str] | None) -> dict[str, str]:
    """C-family files whose folder's list file (the nearest CMakeLists.txt above them) only
    the CUDA build reads: their sources are that list's (a function such as
    `gpu_cpp_library(SRCS ...)` may name them), not the ROCm build's. A list file no walk of
    the ROCm build reached, below one only the CUDA build reads (a vendored CUDA library's
    `base/CMakeLists.txt` under its top list file), is that subtree's too (`reached`; None where
    a tree could not follow an `add_subdirectory`: the nearest list file alone decides)."""
    if not unread_lists:
        return {}
    lists = {os.path.dirname(c.absolute) for c in candidates if os.path.basename(c.absolute) == "CMakeLists.txt"}
    found = {}
    for c in candidates:
        if c.language != CUDA:
            continue
        folder = os.path.dirname(c.absolute)
        while True:
            while folder not in lists and os.path.dirname(folder) != folder:
                folder = os.path.dirname(folder)
            lists_file = os.path.join(folder, "CMakeLists.txt")
            reason = unread_lists.get(lists_file)
            if reason is not None or reached is None or lists_file in reached or folder not in lists \
                    or os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)  # an unreached list file: ask the one above it
        if reason is not None:
            found[c.absolute] = f"in a folder whose list file is {reason}"
    return found


def _hipifies_all(collector: _Collector, torch_extension: bool) -> bool:
    """Does the ROCm build hipify every source it compiles? A hipify step does (it is given
    the source folders), and so does PyTorch's extension builder when no other build compiles
    sources (DeepSpeed-style `op_builder` classes give an extension its sources), or when a
    setup.py extension's source list was not followed."""
    if collector.hipify_step:
        return True
    if not torch_extension:
        return False
    torch_builds = [b for b in collector.builds if b.hipify and b.built_on_rocm]
    others_compile = any(b.rocm_sources for b in collector.builds if not b.hipify)
    return not others_compile or any(b.unresolved or not b.rocm_sources for b in torch_builds)


def _hipify_tools(collector: _Collector, torch_extension: bool) -> frozenset[str]:
    """Which hipify the ROCm build runs: its hipify steps', and PyTorch's for an extension."""
    tools = set(collector.hipify_tools)
    if torch_extension or any(b.hipify for b in collector.builds):
        tools.add(hipify.TORCH)
    return frozenset(tools)


_BACKEND_WORDS = frozenset({"cuda", "cu", "nv", "nvidia", "hip", "rocm", "roc", "amd"})


def _backend_free_name(path: str) -> tuple[str, tuple[str, ...]]:
    """(folder, the name's words less its backend words and suffix): `prof.cuda.cc`,
    `prof.hip.cc`, `prof_hip.cpp` and `prof.cu` all give `prof`; `cuda.cc` gives nothing."""
    folder, name = os.path.split(path)
    words = re.split(r"[._-]+", Path(name).stem.lower())
    return folder, tuple(w for w in words if w and w not in _BACKEND_WORDS) or (name,)


def _hipified_key(path: str) -> tuple[str, str]:
    """(folder, stem) that a source and its hipified copy share. hipify writes the copy next
    to the source, or into the mirrored folder with `cuda` named `hip` (`cuda/scan.cu` ->
    `hip/scan_hip.cu`); `ops.cu`, `ops.hip`, `ops_hip.cu` and `hip_ops.cpp` share the stem
    `ops`. A file of the same name in another folder (`flash_attn/api.cpp` next to the ROCm
    build's own `flash_attn_ck/api.cu`, made from its `api.cpp`) is no copy of it."""
    folder, name = os.path.split(os.path.normpath(path))
    folder = "/".join("hip" if part.lower() == "cuda" else part for part in folder.split(os.sep))
    stem = Path(name).stem.lower()
    for affix in ("_hip", "hip_"):
        stem = stem.removesuffix(affix) if affix.startswith("_") else stem.removeprefix(affix)
    return folder, stem


# ---- which build files --------------------------------------------------------------------
def _setup_scripts(candidates, root: Path, fs: Observed, alone: bool) -> list[Path]:
    found = {root / "setup.py"} if fs.is_file(root / "setup.py") else set()
    for c in candidates:
        path = Path(c.absolute)
        if path.name == "setup.py":
            found.add(path)
        elif c.explicit and alone:  # a file named alone: the setup.py of its package
            found.update(_nearest(path.parent, root, "setup.py", fs)[:1])
    return sorted(found)


def _cmake_entries(candidates, root: Path, fs: Observed, alone: bool) -> list[Path]:
    """Top-level CMakeLists.txt files: the root's, and any whose parent directory has none."""
    found = {root / "CMakeLists.txt"} if fs.is_file(root / "CMakeLists.txt") else set()
    for c in candidates:
        path = Path(c.absolute)
        if path.name == "CMakeLists.txt" or (c.explicit and alone):
            above = _nearest(path.parent, root, "CMakeLists.txt", fs)
            if above:
                found.add(above[-1])
    return sorted(found)


def _unreached_lists(candidates, reached: set[str], collector: _Collector) -> list[tuple[Path, SourceFile]]:
    """CMake list files the walk from the entries never reached (a backend added through a
    function, `add_subdirectory(${backend})`), parsed."""
    found = []
    for c in candidates:
        if c.language != CMAKE:
            continue
        path = Path(c.absolute)
        if path.name == "CMakeLists.txt" and str(path) not in reached:
            source = collector.read_list(path)
            if source is not None and not source.tree.root_node.has_error:
                found.append((path, source))
    return sorted(found, key=lambda pair: pair[0])


def _cuda_twin_modules(candidates, reached: set[str]) -> dict[Path, str]:
    """CMake modules (`.cmake`, not `CMakeLists.txt`) no walk reached whose name says CUDA
    where a module beside them says HIP or ROCm in its place (`FindTPLCUDA.cmake` beside
    `FindTPLROCM.cmake`), each with that twin's name: as with a backend switch's twin
    (`macros.backend_selectors`), the ROCm build reads the twin."""
    modules = {Path(c.absolute) for c in candidates if c.language == CMAKE and c.absolute.endswith(".cmake")}
    found = {}
    for path in sorted(modules):
        if str(path) in reached:
            continue
        for case in (str.upper, str.capitalize, str.lower):  # `FindTPLCUDA`, `CudaToolkit`, `setup_cuda`
            cuda = case("CUDA")
            if cuda in path.stem:
                twin = next((t for t in (path.with_name(path.name.replace(cuda, case(w))) for w in BACKEND_TWINS["CUDA"])
                             if t in modules), None)
                if twin is not None:
                    found[path] = twin.name
                    break
            # A backend's folder: `src/cuda/model.cmake` beside `src/hip/model.cmake`.
            if path.parent.name == cuda:
                twin = next((t for t in (path.parent.with_name(case(w)) / path.name for w in BACKEND_TWINS["CUDA"])
                             if t in modules), None)
                if twin is not None:
                    found[path] = f"{twin.parent.name}/{twin.name}"
                    break
    return found


def _added_by_no_build(unreached: list[tuple[Path, SourceFile]], rocm_only: list[Path], trees: list["_Build"],
                       collector: _Collector) -> dict[str, str]:
    """List files no CMake build reads, when every build's walk followed each `add_subdirectory`
    and `include` it met on the ROCm side: vendored code that came with its own CMakeLists.txt
    (a library's examples, an upstream test tree), which no ROCm build configures. Not a
    project of its own (a nested project has its own driver) nor a ROCm-only list file."""
    if not trees or any(b.lists_unresolved for b in trees):
        return {}
    return {str(path): f"no list file of the build ({trees[0].name} and below) adds it"
            for path, source in unreached if path not in rocm_only and not _declares_project(source)}


def _named_in(lists: Mapping[str, str], unreached: list[tuple[Path, SourceFile]], fs: Observed,
              shown) -> dict[str, str]:
    """The sources the list files `lists` name (a word of any command that is a file beside
    the list or below it with a compiled suffix: `add_executable(demo demo.cu)`, a project's
    own `add_example(demo demo.cu)`). Not the rest of their folders: the build may compile
    those through a glob of its own."""
    found = {}
    for path, source in unreached:
        if str(path) not in lists:
            continue
        reason = f"named only in {shown(path)}, which no list file of the build adds"
        for command in commands(source):
            for word in command.words(source):
                if "$" in word or suffix_of(os.path.basename(word)).lower() not in COMPILED_SUFFIXES:
                    continue
                full = os.path.normpath(os.path.join(path.parent, word))
                if full.startswith(str(path.parent) + os.sep) and fs.is_file(full):
                    found.setdefault(full, reason)
    return found


def _rocm_only_lists(unreached: list[tuple[Path, SourceFile]]) -> list[Path]:
    """The unreached list files only a ROCm build can read: one that requires HIP at its top
    level (`find_package(hip REQUIRED)`, `enable_language(HIP)`, `project(x LANGUAGES HIP)`).
    What they define unconditionally is the ROCm build's."""
    return [path for path, source in unreached if b"hip" in source.data.lower()
            and any(requires_hip(command.name, command.words(source)) for command in _top_level(source))]


def _other_directories_define(unreached: list[tuple[Path, SourceFile]], rocm_only: list[Path],
                              collector: _Collector) -> None:
    """Defines a directory's list file makes for its own directory (`add_compile_definitions`,
    `add_definitions`) apply to the targets made there and below. The ROCm build's targets
    are made in its ROCm-only list files' directories, so the directory-wide defines of an
    unreached list that is none of those, nor above one (another backend: `ggml-musa` next to
    `ggml-hip`), never reach what hip-clang compiles, even when one configure enables both.
    Those in a `function`/`macro` body run where it is called and are left alone."""
    rocm_dirs = [path.parent for path in rocm_only]
    if not rocm_dirs:
        return
    for path, source in unreached:
        if path in rocm_only or any(path.parent == d or path.parent in d.parents for d in rocm_dirs):
            continue
        for command in commands(source):
            if command.name in ("add_compile_definitions", "add_definitions") and not any(
                    a.type in ("function_def", "macro_def") for a in queries.ancestors(command.node)):
                for text in command.words(source):
                    collector.define_for(True, False, text)


def _sycl_sources(candidates, unreached: list[tuple[Path, SourceFile]], collector: _Collector) -> dict[str, str]:
    """The sources of unreached list files that compile with a SYCL compiler: hip-clang never
    compiles them. A list file is a SYCL build when a command at its top level passes `-fsycl`
    or requires a SYCL package. Its sources are the C-family files of its directory and below
    that no other list file is nearer to; headers follow as their includers do (`_not_included`)."""
    lists = {str(path.parent): collector.shown(path) for path, source in unreached if b"sycl" in source.data.lower()
             and any(_compiles_sycl(command, source) for command in _top_level(source))}
    if not lists:
        return {}
    found = {}
    for c in candidates:
        if c.language != CUDA or suffix_of(c.path.name).lower() in HEADER_SUFFIXES:
            continue
        path = Path(c.absolute)
        nearest = _nearest(path.parent, Path(collector.root), "CMakeLists.txt", collector.fs)
        shown = lists.get(str(nearest[0].parent)) if nearest else None
        if shown is not None:
            found[str(path)] = f"compiled by the SYCL build ({shown}), which hip-clang never runs"
    return found


_SYCL_PACKAGES = frozenset({"IntelSYCL", "IntelDPCPP", "AdaptiveCpp", "hipSYCL", "OpenSYCL"})


def _compiles_sycl(command, source: SourceFile) -> bool:
    words = command.words(source)
    if command.name == "find_package":
        return bool(words) and words[0] in _SYCL_PACKAGES and "REQUIRED" in words[1:]
    return any("-fsycl" in w.split() for w in words)


def _declares_project(source: SourceFile) -> bool:
    return b"project" in source.data and any(command.name == "project" for command in _top_level(source))


def _top_level(source: SourceFile):
    """The commands of a list file that always run: not under an `if` (the choice may be
    optional there) nor in a function."""
    root = source.tree.root_node
    return (command for command in commands(source) if command.node.parent == root)


def _makefiles(candidates, root: Path, fs: Observed) -> list[Path]:
    """The root's Makefile, every scanned one, and the make fragments named for one platform
    (`hip_64bit.mk`, `cuda.mk`: `_fragment_platform`). Each is read alone: `include` is not followed."""
    found = {root / n for n in MAKEFILE_NAMES if fs.is_file(root / n)}
    found.update(Path(c.absolute) for c in candidates
                 if c.path.name in MAKEFILE_NAMES or _fragment_platform(c.path) is not None)
    return sorted(found)


# The words of a make fragment's name that say which platform's build it configures.
_ROCM_FRAGMENT_WORDS = frozenset({"hip", "rocm", "hipcc", "amd"})
_CUDA_FRAGMENT_WORDS = frozenset({"cuda", "nvcc", "nvidia"})


def _fragment_platform(path: Path) -> str | None:
    """"rocm" or "cuda" for a make fragment (`*.mk`, `*.make`) whose name says one platform
    (`hip_64bit.mk`, `cuda_64bit.mk`): a configure step includes the one for the platform it
    builds, so its flags are that build's alone. None for other files."""
    if path.suffix.lower() not in (".mk", ".make"):
        return None
    words = set(re.split(r"[^a-z0-9]+", path.stem.lower()))
    rocm, cuda = bool(words & _ROCM_FRAGMENT_WORDS), bool(words & _CUDA_FRAGMENT_WORDS)
    return "rocm" if rocm and not cuda else "cuda" if cuda and not rocm else None


def _nearest(directory: Path, root: Path, name: str, fs: Observed) -> list[Path]:
    """`name` in `directory` and its parents up to `root`, nearest first."""
    out = []
    for d in (directory, *directory.parents):
        if fs.is_file(d / name):
            out.append(d / name)
        if d == root or root not in d.parents:
            break
    return out


def _read(path: Path, language: str, fs: Observed) -> SourceFile | None:
    data = fs.read(path, MAX_BUILD_FILE_BYTES, keep=True)
    if data is None:
        return None
    return SourceFile(str(path), language, data, path, build_script=language == PYTHON)


# ---- setup.py -----------------------------------------------------------------------------
def _read_setup_py(path: Path, collector: _Collector) -> None:
    source = _read(path, PYTHON, collector.fs)
    if source is None:
        return
    try:
        source.python_ast
    except (SyntaxError, ValueError, RecursionError):
        return  # the scan reports the syntax error on the file itself
    base = path.parent
    helpers = PythonHelpers(base, collector.root, collector.fs,
                            functools.partial(_project_paths, fs=collector.fs, root=collector.root),
                            _string)
    rocm_script = helpers.follow(BuildScript(source), rocm=True)
    # The same script with every branch taken (an empty model): what any build may compile.
    any_script = helpers.follow(BuildScript(source, rocm_path.RocmPathModel()), rocm=False)
    build = _Build(collector.shown(path), hipify=b"cpp_extension" in source.data)
    for script, rocm_side in ((rocm_script, True), (any_script, False)):
        # Extensions, and (on the ROCm side) JIT builds: a source they compile is compiled.
        for call in script.calls(JIT_BUILDS) if rocm_side else []:
            _read_extension(build, script, call, rocm_side, base, collector)
        # The extensions setup.py makes, then those the project's build helpers it calls make
        # (`python_helpers`): (the script that makes it, the call, the helper calls leading there).
        for maker, call, chain in itertools.chain(((script, call, []) for call in script.extension_calls()),
                                                  helpers.extension_calls(script)):
            _read_extension(build, maker, call, rocm_side, base, collector)
            outer = _chain_taken(chain, helpers)
            _setup_defines(maker, call, helpers.names(maker), collector, rocm_side=rocm_side, outer=outer)
            if not rocm_side:
                continue  # the CUDA build's defines, from every branch
            build.hipify |= b"cpp_extension" in maker.source.data
            build.rocm |= bool(chain) and bool(rocm_path_markers(maker))
            for strings in maker.compile_args(call).values():
                collector.note_flags(token for arg in strings for token, _ in arg.tokens())
            for expr in maker.argument(call, "include_dirs"):
                for leaf in maker.values(expr):
                    for p in _paths(maker, leaf, base, collector.fs) or []:
                        collector.add_include_dir(p)
    build.unresolved |= helpers.unread_on_rocm
    collector.note_archs(_environment_archs(rocm_script))
    build.rocm |= bool(rocm_path_markers(rocm_script))
    failure = stops_on_rocm(rocm_script)
    if failure is not None:
        build.stops_on_rocm = f"{build.name}:{source.line_of(rocm_script.range(failure)[0]) + 1}"
    build.entry = str(path)
    collector.builds.append(build)


def _read_extension(build: _Build, maker: BuildScript, call: ast.Call, rocm_side: bool, base: Path,
                    collector: _Collector) -> None:
    """The sources one extension (or JIT build) compiles: the ROCm build's where `maker` is
    read as a ROCm build runs it, else (every arm read) the CUDA build's."""
    leaves = _source_leaves(maker, call)
    if rocm_side and not leaves:
        build.unresolved = True  # sources from something not followed (a helper of another module)
    for leaf in leaves:
        paths = _paths(maker, leaf, base, collector.fs)
        if paths is None:
            build.unresolved |= rocm_side
            continue
        for p in paths:
            if Path(p).suffix.lower() in COMPILED_SUFFIXES:
                if rocm_side:
                    build.rocm_sources.add(p)
                else:
                    line = maker.source.line_of(maker.range(leaf)[0]) + 1
                    build.cuda_sources.setdefault(p, f"{collector.shown(maker.source.path)}:{line}")


def _chain_taken(chain, helpers: PythonHelpers) -> tuple[Value, Value]:
    """Whether each build surely, maybe or never runs the helper calls that lead to an
    extension (the `if` tests around each call, in its own file)."""
    rocm: Value = True
    cuda: Value = True
    for script, call in chain:
        r, c = _taken(script, call, helpers.names(script))
        rocm, cuda = rocm_path._and(rocm, r), rocm_path._and(cuda, c)
    return rocm, cuda


def _add_builder(builder: Builder, collector: _Collector) -> None:
    """A builder class as one build: PyTorch's builder hipifies what it compiles; the sources
    of its CUDA-only arms, or all of them when ROCm does not build it, are CUDA-only. One that
    names no source on any arm (a stub, another accelerator's) says nothing."""
    if builder.rocm_sources is not None and not builder.rocm_sources and not builder.sources:
        return
    build = _Build(builder.where, hipify=True, built_on_rocm=builder.built_on_rocm, rocm=builder.built_on_rocm,
                   from_builder=True)
    every = [p for p in builder.sources if Path(p).suffix.lower() in COMPILED_SUFFIXES]
    if builder.built_on_rocm:
        for flag in builder.rocm_macro_flags:
            if flag.startswith("-U"):
                collector.undefine(flag)
            else:
                collector.define_for(True, None, flag)  # a method's arm: the build may pass it
        if builder.rocm_sources is None:
            build.unresolved = True
        else:
            build.rocm_sources.update(p for p in builder.rocm_sources if Path(p).suffix.lower() in COMPILED_SUFFIXES)
        for path in builder.include_dirs:
            collector.add_include_dir(path)
    else:
        collector.other_include_dirs.extend(p for p in builder.include_dirs if p not in collector.other_include_dirs)
    where = f"{builder.where} `{builder.name}.sources()`" if builder.built_on_rocm else f"{builder.where}: {builder.not_on_rocm}"
    for path in every:
        if path not in build.rocm_sources:
            build.cuda_sources.setdefault(path, where)
    collector.builds.append(build)


def _cuda_only_trees(tree_lists: list[tuple[_Build, list[str]]], collector: _Collector) -> dict[str, str]:
    """The list files of a CMake build that names neither HIP nor ROCm in any command (a
    LibTorch build of a PyTorch extension, an alternative build for CUDA and CPU) where the
    project's ROCm build is another build description (a setup.py, Makefiles, a CMake tree
    that enables HIP) that compiles every source this one names: an alternative build of
    the same code, which no ROCm build reads. A list file a ROCm-naming tree reads too, a
    tree of sources no other build compiles (the project's own build, still to port), and
    the project's only build stay. list file -> why."""
    candidates = []  # (build, lists, the other ROCm builds, which compile all its sources)
    for build, lists in tree_lists:
        if build.unresolved or not build.rocm_sources:
            continue
        rocm_builds = [b for b in collector.builds if b is not build and b.built_on_rocm and not b.stops_on_rocm
                       and (b.rocm or b.hipify)]
        if rocm_builds and build.rocm_sources <= {p for b in rocm_builds for p in (*b.rocm_sources, *b.rocm_compiled)}:
            candidates.append((build, lists, rocm_builds))
    if not candidates:
        return {}  # (the list files' commands are read only where a tree may be one)
    names_rocm = {id(build): _lists_name_rocm(lists, collector) for build, lists in tree_lists}
    read_by_rocm_trees = {path for build, lists in tree_lists if names_rocm[id(build)] for path in lists}
    out: dict[str, str] = {}
    for build, lists, rocm_builds in candidates:
        if names_rocm[id(build)] or any(path in read_by_rocm_trees for path in lists):
            continue
        for path in lists:
            out.setdefault(path, f"a CUDA-only build ({build.name}) of sources the project's ROCm build "
                                 f"({rocm_builds[0].name}) compiles")
    return out


def _lists_name_rocm(lists: list[str], collector: _Collector) -> bool:
    """Does a command of these list files name HIP or ROCm (`enable_language(HIP)`,
    `if(USE_ROCM)`, `hip::host`), or can one not be read?"""
    for path in lists:
        source = collector.read_list(Path(path))
        if source is None:
            return True
        for command in cached_commands(source):
            if _names_rocm_word(command.name) or any(_names_rocm_word(w) for w in command.words(source)):
                return True
    return False


# ROCm's own libraries by name (`rccl`, `roc::rocblas`, `hipcub`, `roctx64`): a list file
# that names one knows the ROCm build.
_ROCM_LIBRARY_WORD = re.compile(r"(?i)^(?:roc|hip|rccl|miopen|amd)")


def _names_rocm_word(text: str) -> bool:
    return rocm_path.mentions_rocm(text) or any(
        _ROCM_LIBRARY_WORD.match(part) for part in re.split(r"[^A-Za-z0-9]+", text) if part)


def _cuda_only_setups(candidates, collector: _Collector) -> dict[str, str]:
    """A setup.py a ROCm build cannot run (it fails before building its extensions: nvcc
    probed, CUDA required), in a project that also describes a ROCm build: a CUDA-only
    sub-build (a package of its own for NVIDIA GPUs). Its sources and, below the project root,
    the C-family files of its folder are not compiled for ROCm (unless another build compiles
    them), and the script itself is no ROCm build: path -> why. Where it is the project's
    only build, it is the port's hazard and stays."""
    going = [b for b in collector.builds if not b.stops_on_rocm]
    # A ROCm build: CMake that builds HIP, or a script with ROCm arms beside a build (its own
    # extensions, the CMake tree it drives) that compiles sources where ROCm may go.
    others = collector.rocm_build or (any(b.rocm for b in going) and any(b.rocm_sources or b.unresolved for b in going))
    stopped = [b for b in collector.builds if b.stops_on_rocm]
    if not stopped:
        return {}
    # Or a module that compiles the extensions when run and takes a ROCm arm to do it
    # (`if torch.version.hip: flags = [...]` before `cpp_extension.load(...)`): what it
    # compiles, and the folders it compiles from, stay compiled.
    run_time: set[str] = set()
    if not others:
        if not _rocm_run_time_build(candidates, collector):
            return {}
        run_time = _run_time_builds(candidates, collector)
        if run_time is None:
            return {}  # sources that cannot be read: it may compile any file
    out: dict[str, str] = {}
    for build in stopped:
        reason = f"part of {build.name}, a CUDA-only build: it fails on ROCm before it builds ({build.stops_on_rocm})"
        out[build.entry] = f"a CUDA-only build: it fails on ROCm before it builds ({build.stops_on_rocm})"
        paths = set(build.rocm_sources) - run_time
        folder = os.path.dirname(build.entry)
        if folder != str(collector.root) and not any(p.startswith(folder + os.sep) for p in run_time):
            paths.update(c.absolute for c in candidates if c.language == CUDA
                         and c.absolute.startswith(folder + os.sep))
        for path in run_time:
            build.cuda_sources.pop(path, None)
        for path in sorted(paths):
            out.setdefault(path, reason)
        build.rocm_sources.clear()  # it compiles nothing on ROCm
        build.unresolved, build.built_on_rocm = False, False
    return out


def _unlisted_in_builder_folders(candidates, collector: _Collector, compiled: set[str]) -> dict[str, str]:
    """Where builder classes give every extension of the project its sources, the folders
    holding those sources (`csrc/`, `pkg/contrib/csrc/`) are the extensions' source trees: a
    source there that no build names (code a port left behind, an op no build has) is compiled
    by no build. Only when every build of the project was read to the end, and every run-time
    `cpp_extension.load(...)` names readable sources: either may compile any file."""
    builders = [b for b in collector.builds if b.from_builder]
    if not builders or any(b.unresolved for b in collector.builds):
        return {}
    jit = _run_time_builds(candidates, collector)
    if jit is None:
        return {}
    listed = compiled | jit | {p for b in builders for p in b.cuda_sources}
    folders = _source_folders(listed & {p for b in builders for p in (*b.rocm_sources, *b.cuda_sources)},
                              str(collector.root))
    out = {}
    for c in candidates:
        path = c.absolute
        if c.language != CUDA or path in listed or Path(path).suffix.lower() not in COMPILED_SUFFIXES:
            continue
        folder = next((f for f in folders if path.startswith(f + os.sep)), None)
        if folder is not None:
            out[path] = (f"in {collector.shown(folder)}/, whose sources builder classes name, "
                         "and no build names it")
    return out


def _source_folders(paths: set[str], root: str) -> list[str]:
    """The folder each group of sources shares, a group per top folder below the root
    (`csrc/a/x.cu`, `csrc/b/y.cu` -> `csrc`; `pkg/contrib/csrc/...` -> `pkg/contrib/csrc`)."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        relative = os.path.relpath(path, root)
        if relative.startswith(".."):
            continue
        top = relative.split(os.sep, 1)[0]
        if top != relative:  # a source at the root itself has no folder of its own
            groups.setdefault(top, []).append(os.path.dirname(path))
    return [os.path.commonpath(folders) for folders in groups.values()]


def _run_time_builds(candidates, collector: _Collector) -> set[str] | None:
    """The sources the project's other Python files compile when run (`cpp_extension.load(name,
    sources)`), relative to each file's folder; None when one cannot be read. Only those that
    exist: a test run from elsewhere names its sources relative to where it is run."""
    found: set[str] = set()
    for c, script, calls in _run_time_loads(candidates, collector):
        for call in calls:
            if script.is_dead(call):
                continue
            for leaf in _source_leaves(script, call):
                paths = _paths(script, leaf, Path(c.absolute).parent, collector.fs)
                if paths is None:
                    return None
                found.update(p for p in paths if collector.fs.exists(p))
    return found


def _rocm_run_time_build(candidates, collector: _Collector) -> bool:
    """Does a Python file of the project compile extensions when run (`_run_time_loads`) on
    ROCm too, knowing it: a test that names HIP or ROCm and that a ROCm build decides
    (`if torch.version.hip: flags = [...]`), and a `load(...)` a ROCm run reaches without
    failing first (not one a ROCm arm refuses with `raise`)?"""
    for _, script, calls in _run_time_loads(candidates, collector):
        names = rocm_path.PythonNames(script.tree)
        knows_rocm = any(
            isinstance(node, (ast.If, ast.IfExp)) and _names_rocm(node.test)
            and rocm_path.python_condition(node.test, names=names) in ((True, False), (False, True))
            for node in module_nodes(script.tree))
        if knows_rocm and any(not script.is_dead(call) and _taken(script, call, names)[0] is not False
                              and fails_before_on_rocm(script, call) is None for call in calls):
            return True
    return False


def _names_rocm(test: ast.expr) -> bool:
    """Does a Python test name HIP or ROCm (`torch.version.hip`, `IS_HIP_EXTENSION`, `is_rocm()`)?"""
    return any(isinstance(n, (ast.Name, ast.Attribute)) and rocm_path.mentions_rocm(
        n.id if isinstance(n, ast.Name) else n.attr) for n in ast.walk(test))


def _run_time_loads(candidates, collector: _Collector) -> list:
    """(candidate, its script, its `cpp_extension.load(...)` calls) for each Python file of the
    project but a setup.py that makes one (read and parsed once per reading of the builds)."""
    if collector.run_time_loads is None:
        collector.run_time_loads = list(_find_run_time_loads(candidates, collector))
    return collector.run_time_loads


def _find_run_time_loads(candidates, collector: _Collector):
    for c in candidates:
        if c.language != PYTHON or c.build_script and c.path.name == "setup.py":
            continue
        data = collector.fs.read(c.absolute, MAX_BUILD_FILE_BYTES)
        if not data or b"cpp_extension" not in data or b"load" not in data:
            continue
        source = SourceFile(c.absolute, PYTHON, data, Path(c.absolute), build_script=True)
        try:
            script = BuildScript(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        loaded = {alias.asname or alias.name for node in module_nodes(script.tree) if isinstance(node, ast.ImportFrom)
                  and (node.module or "").endswith("cpp_extension") for alias in node.names if alias.name == "load"}
        calls = [call for call in script.all_calls()
                 if (name := dotted_name(call.func) or "").endswith("cpp_extension.load") or name in loaded]
        if calls:
            yield c, script, calls


def _project_paths(script: BuildScript, leaf: ast.expr, base: Path, fs: Observed, root: Path) -> list[str] | None:
    """`_paths`, a path through a symbolic link inside the project given as the file it names
    (`contrib/csrc` linking to `pkg/contrib/csrc`: the files the scan reads)."""
    paths = _paths(script, leaf, base, fs)
    return None if paths is None else [_within_project(p, root) for p in paths]


def _within_project(path: str, root: Path) -> str:
    real = os.path.realpath(path)
    if real == path:
        return path
    real_root = os.path.realpath(root)
    if real.startswith(real_root + os.sep):
        return os.path.join(str(root), os.path.relpath(real, real_root))
    return path


def _environment_archs(script: BuildScript) -> list[str]:
    """What the script sets PYTORCH_ROCM_ARCH to where a ROCm build runs:
    `os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"`, `os.environ.setdefault(...)`."""
    found = []
    for node in module_nodes(script.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            target, value = node.targets[0], node.value
            name = target.slice.value if isinstance(target.slice, ast.Constant) else None
            if dotted_name(target.value) in ("os.environ", "environ") and name in ARCH_VARIABLES \
                    and isinstance(value, ast.Constant) and isinstance(value.value, str) and not script.is_dead(node):
                found.append(value.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault" \
                and dotted_name(node.func.value) in ("os.environ", "environ") and len(node.args) == 2 \
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args) \
                and node.args[0].value in ARCH_VARIABLES and not script.is_dead(node):
            found.append(node.args[1].value)
    return found


JIT_BUILDS = frozenset({"load"})  # torch.utils.cpp_extension.load(name, sources, ...)


def _source_leaves(script: BuildScript, call: ast.Call) -> list[ast.expr]:
    given = script.argument(call, "sources")
    if not given and len(call.args) >= 2:
        given = [call.args[1]]
    return [leaf for expr in given for leaf in script.values(expr)]


def _taken(script: BuildScript, node: ast.AST, names: PythonNames) -> tuple[Value, Value]:
    """Whether each build surely (True), maybe (None) or never (False) runs `node`, from the
    `if` tests around it."""
    rocm: Value = True
    cuda: Value = True
    child, current = node, script.parent(node)
    while current is not None:
        if isinstance(current, (ast.If, ast.IfExp)) and child is not current.test:
            r, c = rocm_path.python_condition(current.test, names=names)
            in_body = child is current.body or (isinstance(current.body, list) and child in current.body)
            if not in_body:
                r, c = rocm_path._not(r), rocm_path._not(c)
            rocm, cuda = rocm_path._and(rocm, r), rocm_path._and(cuda, c)
        child, current = current, script.parent(current)
    return rocm, cuda


def _under_rocm_test(script: BuildScript, node: ast.AST, names: PythonNames) -> bool:
    """Is `node` in the body of an `if` whose test holds exactly on ROCm (`if is_rocm:`,
    `if torch.version.hip:`), the nearest `if` around it?"""
    child, current = node, script.parent(node)
    while current is not None and not isinstance(current, (ast.If, ast.FunctionDef, ast.AsyncFunctionDef)):
        child, current = current, script.parent(current)
    if not isinstance(current, ast.If) or not any(child is stmt for stmt in current.body):
        return False
    return rocm_path.python_condition(current.test, names=names) == (True, False)


def _setup_defines(script: BuildScript, call: ast.Call, names: PythonNames, collector: _Collector,
                   rocm_side: bool, outer: tuple[Value, Value] = (True, True)) -> None:
    """`define_macros=[("NAME", "1")]` and `-DNAME` in `extra_compile_args`, for the ROCm
    build (`rocm_side`, read from the script as a ROCm build runs it) or the CUDA build.
    `outer`: whether each build runs the helper calls that lead to `call` (see `_chain_taken`)."""

    def define(node: ast.AST, text: str) -> None:
        rocm, cuda = _taken(script, node, names)
        rocm, cuda = rocm_path._and(rocm, outer[0]), rocm_path._and(cuda, outer[1])
        if rocm_side and rocm is None and _under_rocm_test(script, node, names):
            # `if is_rocm: macros += [("X_WITH_HIP", None)]`: the arms around it choose among
            # builds (another backend, another framework); the ROCm build is the one that
            # reaches its ROCm test.
            rocm = True
        collector.define_for(rocm_side, rocm if rocm_side else cuda, text)

    for expr in script.argument(call, "define_macros"):
        for leaf in script.values(expr):
            if isinstance(leaf, (ast.Tuple, ast.List)) and leaf.elts and isinstance(leaf.elts[0], ast.Constant):
                name = leaf.elts[0].value
                value = leaf.elts[1].value if len(leaf.elts) > 1 and isinstance(leaf.elts[1], ast.Constant) else None
                if isinstance(name, str):
                    define(leaf, name if value is None else f"{name}={value}")
    for strings in script.compile_args(call).values():
        for arg in strings:
            for token, _ in arg.tokens():
                if token.startswith("-D") and "{" not in token:
                    define(arg.node, token)
                elif token.startswith("-U") and rocm_side and _taken(script, arg.node, names)[0] is not False:
                    collector.undefine(token)


def _paths(script: BuildScript, leaf: ast.expr, base: Path, fs: Observed) -> list[str] | None:
    """The absolute paths a source-list element names, or None when it cannot be read."""
    parent = script.parent(leaf)
    if isinstance(parent, (ast.ListComp, ast.GeneratorExp)) and leaf is parent.elt:
        return _comprehension_paths(script, parent, base, fs)
    if isinstance(leaf, ast.Call) and callee_name(leaf) in GLOB_CALLS:
        return _glob(script, leaf, base, fs)
    text = _string(script, leaf, base)
    if text is None:
        return _loop_paths(script, leaf, base, fs)
    return [os.path.normpath(os.path.join(base, text))]


def _loop_paths(script: BuildScript, leaf: ast.expr, base: Path, fs: Observed) -> list[str] | None:
    """A list built in a loop, the statement form of a comprehension:
    `for f in glob.glob("ck/*.cpp"): out.append(f.replace(".cpp", ".cu"))`."""
    loop = script.parent(leaf)
    while loop is not None and not isinstance(loop, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef)):
        loop = script.parent(loop)
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or loop.orelse:
        return None
    walk = _directory_walk(script, loop)
    if walk is not None:
        return _walk_paths(script, walk, loop, leaf, base, fs)
    return _bound_paths(script, loop.iter, loop.target.id, leaf, base, fs)


def _directory_walk(script: BuildScript, loop: ast.For) -> ast.For | None:
    """The `for folder, _, names in os.walk(top)` loop whose `names` `loop` goes through."""
    outer = script.parent(loop)
    while outer is not None and not isinstance(outer, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef)):
        outer = script.parent(outer)
    if (isinstance(outer, ast.For) and isinstance(outer.iter, ast.Call) and dotted_name(outer.iter.func) == "os.walk"
            and outer.iter.args and isinstance(outer.target, ast.Tuple) and len(outer.target.elts) == 3
            and all(isinstance(e, ast.Name) for e in outer.target.elts)
            and isinstance(loop.iter, ast.Name) and loop.iter.id == outer.target.elts[2].id):
        return outer
    return None


def _walk_paths(script: BuildScript, outer: ast.For, loop: ast.For, leaf: ast.expr, base: Path,
                fs: Observed) -> list[str] | None:
    """Every file under a folder: `for folder, _, names in os.walk(top): for name in names:
    out.append(os.path.join(folder, name))`. A test in the loop that skips some (`if not
    name.endswith(".cu"): continue`) is not read: the files it keeps are among these. None:
    a folder or an element that cannot be read."""
    top = _string(script, outer.iter.args[0], base)
    if top is None:
        return None
    folder = outer.target.elts[0].id
    out = []
    for found in _glob_within(os.path.join(base, top, "**", "*"), base, fs):
        text = _string(script, leaf, base, {folder: os.path.dirname(found), loop.target.id: os.path.basename(found)})
        if text is None:
            return None
        out.append(os.path.normpath(os.path.join(base, text)))
    return out


def _comprehension_paths(script: BuildScript, comp, base: Path, fs: Observed) -> list[str] | None:
    """`[str(p) for p in Path("csrc").glob("*.cu")]`, `[os.path.join("csrc", f) for f in ["a.cu"]]`."""
    if len(comp.generators) != 1 or comp.generators[0].ifs or not isinstance(comp.generators[0].target, ast.Name):
        return None
    return _bound_paths(script, comp.generators[0].iter, comp.generators[0].target.id, comp.elt, base, fs)


def _bound_paths(script: BuildScript, iterable: ast.expr, var: str, element: ast.expr, base: Path,
                 fs: Observed) -> list[str] | None:
    """The paths `element` names for each value `var` takes from `iterable` (the files a
    glob finds, or strings), or None when one of them cannot be read."""
    values: list[str] = []
    for item in script.values(iterable):
        found = _glob(script, item, base, fs) if isinstance(item, ast.Call) and callee_name(item) in GLOB_CALLS else None
        if found is None:
            text = _string(script, item, base)
            if text is None:
                return None
            found = [os.path.normpath(os.path.join(base, text))]
        values.extend(found)
    out = []
    for value in values:
        text = _string(script, element, base, {var: value})
        if text is None:
            return None
        out.append(os.path.normpath(os.path.join(base, text)))
    return out


def _glob(script: BuildScript, call: ast.Call, base: Path, fs: Observed) -> list[str] | None:
    func = call.func
    if not call.args:
        return None
    pattern = _string(script, call.args[0], base)
    if pattern is None:
        return None
    if isinstance(func, ast.Attribute) and func.attr in ("glob", "rglob") and dotted_name(func.value) not in ("glob",):
        directory = _string(script, func.value, base)  # `Path("csrc").glob("*.cu")`
        if directory is None:
            return None
        pattern = os.path.join(directory, ("**/" if func.attr == "rglob" else "") + pattern)
    return _glob_within(os.path.join(base, pattern), base, fs)


def _glob_within(pattern: str, root: Path, fs: Observed) -> list[str]:
    """The files a glob matches, for a pattern inside the project (`root`) only: a pattern
    whose variable part is unknown must not walk the file system."""
    pattern = os.path.normpath(pattern)
    fixed = pattern[:min((pattern.find(c) for c in "*?[" if c in pattern), default=len(pattern))]
    fixed_dir = os.path.dirname(fixed) if fixed != pattern else fixed
    if not _inside(fixed_dir, root):
        return []
    return fs.glob(pattern, "**" in pattern, MAX_GLOB_MATCHES)


def _inside(path: str, root: str | Path) -> bool:
    """Is `path` `root` or below it?"""
    root_text = str(root)
    return path == root_text or path.startswith(root_text.rstrip(os.sep) + os.sep)


_PATH_FUNCTIONS = frozenset({"os.path.join", "path.join", "join", "Path", "pathlib.Path", "PurePath", "str",
                             "os.fspath", "os.path.abspath", "os.path.realpath", "abspath", "realpath",
                             "os.path.normpath"})


def _string(script: BuildScript, node: ast.AST | None, base: Path, bound: dict | None = None, depth: int = 0) -> str | None:
    """A path-like string expression's value: literals, `os.path.join`, `/` on paths, `+`,
    f-strings, names assigned once, `os.path.dirname(__file__)` (the script's directory),
    `os.curdir`."""
    if node is None or depth > 12:
        return None
    nxt = depth + 1
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if bound and node.id in bound:
            return bound[node.id]
        if node.id == "__file__":  # the script's own file (a build helper's, a builder's module)
            return str(script.source.absolute_path or base / "setup.py")
        values = script.assigned(node)
        return _string(script, values[0], base, bound, nxt) if len(values) == 1 else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left, right = _string(script, node.left, base, bound, nxt), _string(script, node.right, base, bound, nxt)
        if left is None or right is None:
            return None
        return os.path.join(left, right) if isinstance(node.op, ast.Div) else left + right
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            part = (value.value if isinstance(value, ast.Constant)
                    else _string(script, value.value, base, bound, nxt) if isinstance(value, ast.FormattedValue) else None)
            if part is None:
                return None
            parts.append(str(part))
        return "".join(parts)
    if isinstance(node, ast.Attribute) and dotted_name(node) in ("os.curdir", "os.path.curdir"):
        return "."
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _string(script, node.value, base, bound, nxt)
        return os.path.dirname(inner) if inner is not None else None
    if isinstance(node, ast.Call):
        name = dotted_name(node.func) or ""
        if name in ("os.path.dirname", "dirname", "path.dirname") and len(node.args) == 1:
            inner = _string(script, node.args[0], base, bound, nxt)
            return os.path.dirname(inner) if inner is not None else None
        if name in _PATH_FUNCTIONS and node.args and not node.keywords:
            parts = [_string(script, a, base, bound, nxt) for a in node.args]
            return None if any(p is None for p in parts) else os.path.join(*parts)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not node.args:
            return _string(script, node.func.value, base, bound, nxt)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "replace" and len(node.args) == 2 \
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
            inner = _string(script, node.func.value, base, bound, nxt)  # `f.replace(".cpp", ".cu")`
            return inner.replace(node.args[0].value, node.args[1].value) if inner is not None else None
        if script.follow_call is not None:  # a build helper of the project that returns one path
            followed = script.follow_call(script, node)
            if followed is not None and len(followed) == 1 and isinstance(followed[0], ast.Constant):
                return followed[0].value
    return None


# ---- Makefiles ---------------------------------------------------------------------------
_MAKE_WILDCARD = re.compile(r"^\$[({]wildcard\s+([^$()]+)[)}]$")


def _read_makefile(path: Path, collector: _Collector, read: set[str] | None = None) -> None:
    """Sources and `-D` flags of each `ifeq`/`ifdef` arm: `OBJS += cuda/ops.o` in the arm a
    ROCm build never takes names a CUDA-only source. A makefile the ROCm build runs with
    `make -f FILE` (a code generation step) is read as well."""
    read = set() if read is None else read
    if str(path) in read:
        return
    read.add(str(path))
    source = _read(path, MAKE, collector.fs)
    if source is None:
        return
    makefile = make_ast.read(source)
    model = makefile.model
    build = _Build(collector.shown(path))
    base = path.parent
    platform = _fragment_platform(path)
    for assignment in makefile.assignments:
        status = model.status(assignment.node.start_byte)
        if platform is not None:  # a fragment of one platform's build: all of it is that build's
            status = Status.PORT if platform == "rocm" else Status.DEAD
        # An arm of the ROCm port counts as the ROCm build's (and a CUDA-only arm as the
        # CUDA build's) for its defines; any other arm may or may not be taken.
        plain = None if assignment.conditional else True
        rocm = {Status.DEAD: False, Status.PORT: True}.get(status, plain)
        cuda = {Status.DEAD: True, Status.PORT: False}.get(status, plain)
        line = source.line_of(assignment.node.start_byte) + 1
        if rocm is not False:
            collector.note_flags(word.text for word in assignment.words)
            collector.note_commands(word.text for word in assignment.words)  # `HIPIFY ?= hipify-perl`
            if assignment.name in ARCH_VARIABLES:
                collector.note_archs(word.text for word in assignment.words)
            for other in _make_file_arguments(assignment.words, base):  # `$(shell $(MAKE) -f gen.mk)`
                _read_makefile(other, collector, read)
        for word in assignment.words:
            text = word.text
            if text.startswith("-D") and "$" not in text:
                collector.define(rocm, cuda, text)
                continue
            if text.startswith("-U") and "$" not in text:
                if rocm is not False:
                    collector.undefine(text)
                continue
            wildcard = _MAKE_WILDCARD.match(text)
            if wildcard is not None:
                names = [p for pattern in wildcard.group(1).split() for p in _glob_within(str(base / pattern), base, collector.fs)]
            elif "$" in text or "%" in text:
                continue
            else:
                names = [os.path.normpath(base / text)]
            for name in names:
                for full in _make_sources(name, collector.fs):
                    if status is Status.DEAD:
                        build.cuda_sources.setdefault(full, f"{build.name}:{line}")
                    else:
                        build.rocm_sources.add(full)
    for command in makefile.commands:  # `hipcc --offload-arch=gfx90a -c $< -o $@`
        if model.status(command.line.start_byte) is not Status.DEAD:
            collector.note_flags(word.text for word in command.words)
            collector.note_commands(word.text for word in command.words)
            for other in _make_file_arguments(command.words, base):
                _read_makefile(other, collector, read)
    suffixes = _hipcc_compiled_suffixes(makefile)
    if suffixes and platform is None:
        # hipcc compiles the makefile's sources on the ROCm path: a ROCm build, which takes
        # them as written unless a hipify step rewrites them (`note_commands`). Its sources
        # of those suffixes, or where the lists cannot be read (`$(foreach ...)` over
        # folders), the CUDA sources of the makefile's folder.
        collector.rocm_build = build.rocm = True
        named = {p for p in build.rocm_sources if suffix_of(os.path.basename(p)).lower() in suffixes}
        if not named and suffixes & CUDA_SUFFIXES:
            named = {p for suffix in sorted(suffixes & CUDA_SUFFIXES)
                     for p in _glob_within(str(base / "**" / f"*{suffix}"), base, collector.fs)}
        build.rocm_compiled.update(named)
    build.entry = str(path)
    build.makefile = True
    collector.builds.append(build)


def _hipcc_compiled_suffixes(makefile: make_ast.Makefile) -> set[str]:
    """The source suffixes (`.cu`) of the pattern rules whose recipe runs hipcc on the ROCm
    path: `%.o: %.cu` run by `$(GPUCXX) -c $<` where the arm a ROCm build takes sets
    `GPUCXX := hipcc`, or `%: %.cu` building a program at once."""
    return {suffix for suffixes, command in compile_commands(makefile)
            if "hipcc" in makefile.command_programs(command) for suffix in suffixes}


def compile_commands(makefile: make_ast.Makefile, explicit: bool = False) -> list[tuple[set[str], make_ast.Command]]:
    """The recipe commands of the pattern rules that compile sources (`%.o: %.cu`), outside
    code dead on ROCm, each with its rule's source suffixes; with `explicit`, also of rules
    whose prerequisites are sources (`app: main.cu`, `app: $(SRC)` where SRC names them). The
    ROCm-path model reads the compiler they run to tell a Makefile's ROCm arm from its CUDA
    one (which compiler an explicit rule runs says nothing of the makefile's other sources)."""
    found = []
    for rule in makefile.rules:
        suffixes = {w.text[1:].lower() for w in (*rule.prerequisites, *rule.target_patterns)
                    if w.text.startswith("%.")} & COMPILED_SUFFIXES
        if explicit and not suffixes and not rule.target_patterns:
            suffixes = {suffix_of(text).lower() for text in _prerequisite_texts(makefile, rule)
                        if "%" not in text and "$" not in text} & COMPILED_SUFFIXES
        if suffixes:
            found.extend((suffixes, c) for c in rule.commands
                         if makefile.model.status(c.line.start_byte) is not Status.DEAD)
    return found


def _prerequisite_texts(makefile: make_ast.Makefile, rule: make_ast.Rule) -> list[str]:
    """A rule's prerequisites as written, and the words of a variable one names whole
    (`$(SRC)`, one level: a chain of variables is not followed)."""
    texts = []
    for word in rule.prerequisites:
        name = word.text[2:-1] if word.text.startswith(("$(", "${")) and word.text.endswith((")", "}")) else None
        if name is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            texts.extend(w.text for a in makefile.values(name) for w in a.words)
        else:
            texts.append(word.text)
    return texts


def _make_file_arguments(words, base: Path) -> list[Path]:
    """The makefiles a command line hands to make with `-f FILE` (`--file=`, `--makefile=`)."""
    found = []
    for word in words:
        tokens = word.text.replace("(", " ").replace(")", " ").split()
        for i, token in enumerate(tokens):
            if token == "-f" and i + 1 < len(tokens):
                name = tokens[i + 1]
            elif token.startswith(("--file=", "--makefile=")):
                name = token.split("=", 1)[1]
            else:
                continue
            if "$" not in name:
                found.append(Path(os.path.normpath(base / name)))
    return found


def _make_sources(path: str, fs: Observed) -> list[str]:
    """A source named in a Makefile: itself, or for an object `x.o` the source beside it."""
    suffix = Path(path).suffix.lower()
    if suffix in COMPILED_SUFFIXES:
        return [path]
    if suffix == ".o":
        stem = path[:-2]
        return [stem + s for s in sorted(COMPILED_SUFFIXES) if fs.is_file(stem + s)]
    return []


# ---- CMake --------------------------------------------------------------------------------
_LIBRARY_KEYWORDS = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "EXCLUDE_FROM_ALL",
                               "WIN32", "MACOSX_BUNDLE", "PUBLIC", "PRIVATE", "SYSTEM", "BEFORE", "AFTER",
                               "FILE_SET", "TYPE", "BASE_DIRS", "FILES", "HEADERS", "CXX_MODULES"})
_TARGET_COMMANDS = frozenset({"add_library", "add_executable", "cuda_add_library", "cuda_add_executable",
                              "hip_add_library", "hip_add_executable", "target_sources"})
_DEFINE_COMMANDS = frozenset({"add_compile_definitions", "add_definitions", "target_compile_definitions"})
# Commands that name sources without compiling or using them: variables, messages, IDE groups,
# the documentation (`doxygen_add_docs(docs ${ALL_SOURCES})`). (Not `install`, which may ship a
# kernel compiled at run time, nor the path commands that name a file a build step copies.)
_NAMING_COMMANDS = frozenset({"set", "list", "option", "message", "source_group", "doxygen_add_docs"})
# What CMake sets only where NVIDIA's compiler is at hand (`check_language(CUDA)`).
_SET_WITH_NVCC = frozenset({"CMAKE_CUDA_COMPILER"})
# Commands whose arguments name a program the build runs.
_COMMAND_RUNNERS = frozenset({"execute_process", "add_custom_command", "add_custom_target"})


# `#cmakedefine NAME ...` and `#cmakedefine01 NAME` in a template `configure_file` fills in.
_CMAKEDEFINE = re.compile(rb"^[ \t]*#[ \t]*cmakedefine(01)?[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


# Where CMake writes its build: files there are generated or fetched at configure time
# (`${PROJECT_BINARY_DIR}/version.h`, `add_subdirectory(${CMAKE_CURRENT_BINARY_DIR}/googletest-src)`),
# never the project's sources, so a path there names no file a scan reads (not "unresolved").
BINARY_DIR = "/<cmake-binary-dir>"
_BINARY_DIRS = ("CMAKE_BINARY_DIR", "CMAKE_CURRENT_BINARY_DIR", "PROJECT_BINARY_DIR")


def _names_cuda(name: str) -> bool:
    """Does a variable's name say it is CUDA's (`USE_CUDA`, `HAVE_CUBLAS`, `NVSHMEM_LIB`)?"""
    words = [w for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w]
    return rocm_path.mentions_cuda(name) or any(
        w.upper() in _NVIDIA_WORDS or (w.upper().startswith(("NV", "CU")) and library_for_link_name(w.lower()) is not None)
        for w in words)


_NVIDIA_WORDS = frozenset({"NVIDIA", "NVSHMEM", "NVTX", "NVML", "NCCL", "CUFFTMP", "CUDSS", "NVRTC", "CUPTI"})


def _sides(rocm: Value, cuda: Value) -> set[bool]:
    """The builds (True: ROCm, False: CUDA) that may run a command so taken."""
    return {side for side, taken in ((True, rocm), (False, cuda)) if taken is not False}


class _VariableSetters:
    """Which variables a reading of CMake lists sets, and which builds may run the commands
    that set them: what `_read_cmake_tree` infers unset variables and empty lists from."""

    def __init__(self) -> None:
        self.setters: dict[str, set[bool]] = {}  # name -> the builds (True: ROCm) that may set it
        # Names of a shape a build may set, as their literal parts (`rocm_path.name_shape`):
        # `set(${PREFIX}_LIBS ...)`, `find_package(Pkg)`'s `Pkg_*`.
        self.shapes: dict[bool, set[tuple[str, ...]]] = {True: set(), False: set()}
        self.user_set: set[str] = set()  # `option()`, cache entries: a user may give them
        self.unread_include = False  # an `include()` of a project file the reading did not follow

    def note(self, names, sides: set[bool]) -> None:
        for name in names:
            self.setters.setdefault(name, set()).update(sides)

    def note_command(self, source: SourceFile, walk: CMakeWalk, name: str, arguments, sides: set[bool],
                     env: dict) -> None:
        """The variables a command may set, run by `sides`."""
        texts = [rocm_path.argument_text(a, source) for a in arguments]
        words = [text for text, _ in texts]
        if not words or name in ("unset", "return", "message"):
            return
        shapes: list[tuple[str, ...]] = []
        if name in ("set", "option", "cmake_dependent_option"):
            targets = words[:1]
            if name != "set" or any(text == "CACHE" and not quoted for text, quoted in texts[1:]):
                self.user_set.add(words[0])
        elif name in ("list", "file"):  # outputs stand at several places: any bare word may be one
            targets = [text for text, quoted in texts[1:] if not quoted]
        elif name == "find_package":
            # A package's results are named for it (`Pkg_FOUND`, `PKG_LIBRARIES`).
            targets, shapes = [], [(f"{words[0]}_", ""), (f"{words[0].upper()}_", "")]
        elif name in rocm_path.CMAKE_READ_ONLY:
            return
        else:  # any other command may write a variable it names by a bare word
            targets = [text for text, quoted in texts if not quoted]
        names = []
        for target in targets:
            if "${" in target:
                expanded, complete = cmake_expand(target, env)
                if complete and len(expanded) == 1:
                    target = expanded[0]
                else:
                    shape = rocm_path.name_shape(target)
                    # A function's `set(${out} ...)`: its callers name `out` by a bare word. A
                    # whole reference among another command's words is a value it reads.
                    if shape is None or walk.functions or shape == ("", ""):
                        continue
                    shapes.append(shape)  # `${PKG}_LIBRARIES`: any name of that shape
                    continue
            names.append(target)
        self.note(names, sides)
        for side in sides:
            self.shapes[side].update(shapes)

    @classmethod
    def of_list_file(cls, source: SourceFile) -> "_VariableSetters":
        """What a list file sets, as what either build may set (one no walk reached)."""
        sets = cls()
        walk = CMakeWalk(source)
        walk.on_command = lambda node, name, arguments, rocm, cuda, rocm_env, cuda_env: \
            sets.note_command(source, walk, name, arguments, {True, False}, rocm_env)
        walk.on_loop_variable = lambda variable, rocm, cuda: sets.note([variable], {True, False})
        walk.run(None, None)
        return sets

    def merge(self, other: "_VariableSetters") -> None:
        for name, sides in other.setters.items():
            self.note([name], sides)
        for side, shapes in other.shapes.items():
            self.shapes[side] |= shapes
        self.user_set |= other.user_set
        self.unread_include |= other.unread_include

    def may_be_set(self, name: str) -> bool:
        """May a command of the lists read, a user or CMake set `name`?"""
        return (self.unread_include or name in self.setters or name in self.user_set
                or name.startswith(("CMAKE_", "PROJECT_"))
                or any(rocm_path.has_shape(name, shape) for side in (True, False) for shape in self.shapes[side]))

    def only_set_by_the_other_build(self, rocm_side: bool) -> frozenset[str]:
        """Variables the project sets, but only with commands the ROCm build (`rocm_side`;
        else the CUDA build) never runs (in the other backend's arm, a module only it
        includes), and never as an option or cache entry a user may give: unset in that
        build (`if(GMX_GPU_CUDA)` is false in a ROCm build). A command in an arm neither
        build takes (another backend's) counts for neither.

        Only a name that says it is the other platform's (`GMX_GPU_CUDA`, `HAVE_NVSHMEM`,
        `CUDAToolkit_FOUND`): a generic one (`BUILD_TESTING`, a tuning switch) may come from a
        CMake module, a host-config cache file or the command line, which the lists do not show."""
        other = rocm_path.mentions_rocm if not rocm_side else _names_cuda
        return frozenset(
            name for name, sides in self.setters.items()
            if rocm_side not in sides and name not in self.user_set and not name.startswith("CMAKE_")
            and other(name) and not any(rocm_path.has_shape(name, shape) for shape in self.shapes[rocm_side]))


def _read_cmake_tree(top: Path, collector: _Collector, candidates) -> "_CMakeTree":
    """Read a project's CMake tree twice where it has a ROCm build: a first reading (whose
    facts are thrown away) finds the variables only one build's commands set; the second
    holds them unset in the other build from the start, since a list file may test a
    variable before (or without) reading the backend's module that sets it."""
    scratch = _Collector(collector.root, collector.fs)
    scratch._lists = collector._lists  # each list file is parsed once
    first = _CMakeTree(top, scratch)
    first.read()
    sets = first.sets
    # A list file the walk did not reach may still be read (an include it could not follow,
    # a host-config cache file given with `-C`): what it sets, either build may set.
    for c in candidates:
        if c.language == CMAKE and c.absolute != str(top) and str(c.absolute) not in first.reached:
            sets.merge(collector.setters_of(c.absolute))
    unset = (frozenset(), frozenset())
    unset_on_rocm: frozenset[str] = frozenset()
    if scratch.rocm_build and not sets.unread_include:
        unset = (sets.only_set_by_the_other_build(True), sets.only_set_by_the_other_build(False))
        if first.hip_sites and not first.build.lists_unresolved:
            unset_on_rocm = frozenset.intersection(*first.hip_sites)  # what every command building HIP requires unset
    tree = _CMakeTree(top, collector, unset=unset, keeps_models=True, set_anywhere=sets.may_be_set,
                      refuses_failing_arms=scratch.rocm_build, unset_on_rocm=unset_on_rocm)
    tree.read()
    return tree


class _CMakeTree:
    """One CMake project from its top CMakeLists.txt: every list file it reads, with the
    variables each build holds, following `add_subdirectory` and `include`."""

    def __init__(self, top: Path, collector: _Collector, rocm_only: bool = False, cuda_only: bool = False,
                 unset: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()), keeps_models: bool = False,
                 set_anywhere=None, refuses_failing_arms: bool = False, unset_on_rocm: frozenset[str] = frozenset()):
        self.top, self.collector = top, collector
        # The CUDA build's switches wherever tested (`CMakeWalk.selectors`): the CUDA-named
        # variables every command that builds HIP requires unset (`CMakeWalk.hip_sites` of a
        # first reading), and, in a project with a ROCm build, what only nvcc's presence sets:
        # that build is the one without nvcc (where nvcc is found, the project builds for CUDA).
        self.cuda_switches = unset_on_rocm | (_SET_WITH_NVCC if refuses_failing_arms else frozenset())
        self.hip_sites: list[frozenset[str]] = []  # (`CMakeWalk.hip_sites` of every walk)
        # name -> may the project's lists set it (`_VariableSetters.may_be_set` of a first reading); None: unknown
        self.set_anywhere = set_anywhere
        self.keeps_models = keeps_models  # the models of the list files it walks are the scan's (`list_ranges`)
        self.refuses_failing_arms = refuses_failing_arms  # (`CMakeWalk.refuses_failing_arms`)
        self.walked: set[str] = set()  # the list files its walks read
        self.walks_in_loop = 0  # the walks under way that a foreach()/while() body started
        self.unset = unset  # (ROCm, CUDA) build: variables it holds unset from the start (`_read_cmake_tree`)
        self.sets = _VariableSetters()  # what its commands set, for `_read_cmake_tree`
        self.rocm_only = rocm_only  # a list file only a ROCm build reads (`_rocm_only_lists`)
        self.cuda_only = cuda_only  # one only the CUDA build reads (`_cuda_twin_modules`)
        self.build = _Build(collector.shown(top))
        self.reached: dict[str, tuple[Value, str]] = {}  # list file -> (ROCm reads it, first site)
        self.active: list[str] = []
        # The backend switches of the list files being read (`CMakeWalk.selectors`): a file
        # `add_subdirectory` or `include` reads keeps them, as the build keeps its choice
        # (a subfolder that tests only `USE_CUDA_TOOLKIT` under a top that tests it beside
        # `USE_ROCM_TOOLKIT`).
        self.selectors: list[frozenset[str]] = []
        self.walks = 0
        # A project function's body names sources for its callers: they are the ROCm build's
        # where some call may run on ROCm, the CUDA build's where only CUDA arms call it.
        self.function_sources: dict[str, dict[str, str]] = {}  # function -> source -> where
        self.function_calls: dict[str, Value] = {}  # function -> does a ROCm build call it
        # A sub-project's list file that `ExternalProject_Add`/`FetchContent_Declare` configure
        # (`SOURCE_DIR`) -> (does a ROCm build configure it, first site)
        self.subprojects: dict[str, tuple[Value, str]] = {}
        self.subprojects_unresolved = False  # one the ROCm build may configure names a folder out of view

    def read(self) -> None:
        # A ROCm-only list file is a subdirectory of the project, not a project's top.
        top_dir = str(self.collector.root.resolve() if self.rocm_only else self.top.parent)
        env = {"CMAKE_SOURCE_DIR": CMakeValue((top_dir,)), "PROJECT_SOURCE_DIR": CMakeValue((top_dir,)),
               "CMAKE_HOME_DIRECTORY": CMakeValue((top_dir,)),
               **{name: CMakeValue((BINARY_DIR,)) for name in _BINARY_DIRS}}
        rocm_env, cuda_env = ({**env, **{name: CMakeValue(()) for name in names}} for names in self.unset)
        self._walk(self.top, not self.cuda_only, not self.rocm_only, rocm_env, cuda_env, "")
        for path, (rocm, where) in ({} if self.subprojects_unresolved else self.subprojects).items():
            if rocm is False and path not in self.walked:
                self.reached.setdefault(path, (False, where))
        for path, (rocm, where) in self.reached.items():
            if rocm is False:
                self.build.unread_lists[path] = f"{_READ_ONLY_FROM_CUDA} ({where})"
        if self.build.lists_unresolved:  # a list it could not follow may read any of them again
            for path in self.walked:
                self.collector.list_models[path].append(None)
        for function, sources in self.function_sources.items():
            called = self.function_calls.get(function)  # never called here: maybe elsewhere
            for path, where in sources.items():
                if called is False:
                    self.build.cuda_only_sources.setdefault(
                        path, f"named in `{function}()` ({where}), which only CUDA-only branches call")
                else:
                    self.build.rocm_sources.add(path)
        self.collector.builds.append(self.build)

    def _rocm_source(self, walk: CMakeWalk, path: str, sure: bool) -> None:
        """A source a ROCm build may compile (`sure`: surely does); in a function body, its
        callers decide."""
        if walk.functions:
            named = self.function_sources.setdefault(walk.functions[-1], {})
            named.setdefault(path, self.collector.shown(walk.source.path))
        else:
            self.build.rocm_sources.add(path)
            if sure:
                self.build.rocm_compiled.add(path)

    def _walk(self, path: Path, rocm: Value, cuda: Value, rocm_env: dict, cuda_env: dict, where: str,
              parent_envs: tuple[dict, dict] | None = None) -> None:
        """Walk a list file with the scopes it reads and writes (`parent_envs`: those of the
        list file whose `add_subdirectory` adds it)."""
        path = Path(os.path.normpath(path))
        key = str(path)
        if where:
            before = self.reached.get(key)
            self.reached[key] = (rocm_path._or(before[0], rocm) if before else rocm, before[1] if before else where)
        self.walks += 1
        if key in self.active:
            return  # an include cycle
        if len(self.active) >= MAX_CMAKE_DEPTH or self.walks > MAX_CMAKE_WALKS:
            self.build.lists_unresolved = True  # a tree that reads the same lists over and over
            return
        source = self.collector.read_list(path)
        if source is None:
            return
        if source.tree.root_node.has_error:
            # The scan reports the parse error on the file; its source lists decide nothing.
            self.build.unresolved = self.build.lists_unresolved = True
        directory = str(path.parent)
        here = {"CMAKE_CURRENT_LIST_DIR": CMakeValue((directory,)), "CMAKE_CURRENT_LIST_FILE": CMakeValue((key,))}
        if path.name == "CMakeLists.txt":
            here["CMAKE_CURRENT_SOURCE_DIR"] = CMakeValue((directory,))
        outer = {name: (rocm_env.get(name), cuda_env.get(name)) for name in here}
        rocm_env.update(here)
        cuda_env.update(here)
        # Relative paths in an `include()`d file's commands are the including folder's, as
        # CMake reads them from `CMAKE_CURRENT_SOURCE_DIR`, not from the file's own folder.
        current = (rocm_env.get("CMAKE_CURRENT_SOURCE_DIR") if rocm is not False else None) \
            or cuda_env.get("CMAKE_CURRENT_SOURCE_DIR")
        commands_dir = Path(current.items[0]) if current is not None and current.definite \
            and len(current.items) == 1 else path.parent
        self.active.append(key)
        try:
            walk = CMakeWalk(source, frozenset(), rocm_env, cuda_env)
            walk.parent_envs = parent_envs
            walk.refuses_failing_arms = self.refuses_failing_arms
            if self.selectors:
                walk.selectors |= self.selectors[-1]
            walk.selectors |= self.cuda_switches
            self.selectors.append(walk.selectors)
            walk.on_command = lambda *a: self._command(source, commands_dir, walk, *a)
            walk.on_loop_variable = lambda variable, rocm, cuda: self.sets.note([variable], _sides(rocm, cuda))
            in_loop = self.walks_in_loop > 0
            source.rocm_path = walk.run(rocm, cuda)
            self.hip_sites.extend(walk.hip_sites)
            # A file another tree reads too keeps the ranges every walk agrees on; one read in
            # a loop (once per pass, with other variables each time), none (`_agreed_ranges`).
            models = self.collector.list_models.setdefault(key, [])
            models.extend([source.rocm_path if self.keeps_models else None, *([None] if in_loop else [])])
            self.walked.add(key)
            # What the file set stays set for its reader: `include()` shares the includer's
            # scope (`add_subdirectory` passes a copy). The list file's own location does not.
            for env, after in ((rocm_env, walk.rocm_env), (cuda_env, walk.cuda_env)):
                env.clear()
                env.update(after)
            for name, (rocm_value, cuda_value) in outer.items():
                for env, value in ((rocm_env, rocm_value), (cuda_env, cuda_value)):
                    if value is None:
                        env.pop(name, None)
                    else:
                        env[name] = value
        except RecursionError:
            self.build.unresolved = self.build.lists_unresolved = True
        finally:
            self.active.pop()
            if len(self.selectors) > len(self.active):
                self.selectors.pop()

    def _configured_defines(self, text: str, directory: Path, rocm: Value, cuda: Value, rocm_env: dict,
                            cuda_env: dict) -> None:
        """`configure_file(config.h.in config.h)`: each `#cmakedefine NAME` of the template is a
        define of the header it writes where the build holds a true `NAME` (`#cmakedefine01
        NAME`: always, as 0 or 1). A build holding it false or unset leaves it undefined, so a
        name only the CUDA build sets (`set(LIB_HAVE_CUDA 1)` in its arm) is another build's."""
        items, complete = cmake_expand(text, rocm_env if rocm is not False else cuda_env)
        if not complete or not items:
            return
        template = Path(items[0]) if os.path.isabs(items[0]) else directory / items[0]
        data = self.collector.fs.read(template, MAX_BUILD_FILE_BYTES, keep=True) if \
            self.collector.fs.is_file(template) else None
        for match in _CMAKEDEFINE.finditer(data or b""):
            always, variable = match.group(1) == b"01", match.group(2).decode()
            for side, taken, env in ((True, rocm, rocm_env), (False, cuda, cuda_env)):
                value = env.get(variable)
                truth = None  # unknown: an option's default, a value set on an undecided path
                if value is not None and value.definite:
                    # `if(VAR)`'s truth: any value but CMake's false constants is true.
                    truth = bool(value.items) and rocm_path.cmake_truth(value.text) is not False
                if always:
                    self.collector.define_for(side, taken, variable if truth is None else f"{variable}={int(truth)}")
                elif truth:
                    self.collector.define_for(side, taken, variable)

    def _module(self, name: str, env: dict) -> Path | None:
        """The project's own `NAME.cmake` that `include(NAME)` reads: the first on the
        `CMAKE_MODULE_PATH` the build holds (CMake's own modules are not the project's)."""
        folders, _ = cmake_expand("${CMAKE_MODULE_PATH}", env)
        for folder in folders:
            candidate = Path(folder) / f"{name}.cmake"
            if os.path.isabs(folder) and self.collector.fs.is_file(candidate):
                return candidate
        return None

    def _follow(self, name: str, text: str, directory: Path, rocm: Value, cuda: Value, rocm_env: dict,
                cuda_env: dict, where: str, parent_envs: tuple[dict, dict] | None) -> None:
        """Walk the list file `add_subdirectory(text)` or `include(text)` reads (`parent_envs`:
        the scope above the reading one, which an included file's `PARENT_SCOPE` writes)."""
        items, complete = cmake_expand(text, rocm_env if rocm is not False else cuda_env)
        if not complete or not items:
            if rocm is not False and name == "add_subdirectory":
                self.build.unresolved = True  # a ROCm build reads lists we cannot find
            if rocm is not False:
                self.build.lists_unresolved = True
            return
        target = Path(items[0]) if os.path.isabs(items[0]) else directory / items[0]
        if name == "include" and rocm is not False and not (
                self.collector.fs.is_file(target) and target.suffix == ".cmake") \
                and not re.fullmatch(r"[A-Za-z0-9_.-]+", items[0]) and any(
                    _inside(os.path.normpath(target), folder) for folder in (self.collector.root, BINARY_DIR)):
            # A file of the project's this reading does not follow (`sources.inc`, one the
            # configure step writes from the project's template); one elsewhere (CMake's own, a
            # path a function's unknown arguments build) is no list of the project's.
            self.sets.unread_include = True
        if name == "add_subdirectory":
            target = target / "CMakeLists.txt"
            self._walk(target, rocm, cuda, dict(rocm_env), dict(cuda_env), where, (rocm_env, cuda_env))
        elif target.suffix == ".cmake" and self.collector.fs.is_file(target):
            self._walk(target, rocm, cuda, rocm_env, cuda_env, where, parent_envs)  # same scope
        elif target.suffix != ".cmake" and re.fullmatch(r"[A-Za-z0-9_.-]+", items[0]):
            module = self._module(items[0], rocm_env if rocm is not False else cuda_env)
            if module is not None:  # `include(MyToolkit)`: MyToolkit.cmake on CMAKE_MODULE_PATH
                self._walk(module, rocm, cuda, rocm_env, cuda_env, where, parent_envs)

    def _subproject(self, texts: list[str], directory: Path, rocm: Value, env: dict, where: str) -> None:
        """`ExternalProject_Add(dev_cuda SOURCE_DIR ${PROJECT_SOURCE_DIR}/devices/cuda ...)`: a
        project of its own that this one configures. Where only arms no ROCm build takes do
        (every such call of the tree's, `FetchContent_Declare` too), it is the CUDA build's, as
        an `add_subdirectory` there is (`read`); else a nested project, read as its own. Not
        walked: its configure reads its own cache, not this scope. Only an absolute folder
        (a relative one is the binary folder's), not with `SOURCE_SUBDIR`, and not the tree's
        own folder or one above it (a superbuild)."""
        if "SOURCE_SUBDIR" in texts:
            return
        for keyword, text in zip(texts[1:], texts[2:]):
            if keyword != "SOURCE_DIR":
                continue
            items, complete = cmake_expand(text, env)
            if not complete or len(items) != 1 or not os.path.isabs(items[0]):
                # (in a function body, whose arguments and caller's variables are not known,
                # or a folder the reading cannot resolve: it may be any sub-project's)
                self.subprojects_unresolved |= rocm is not False
                return
            lists = os.path.join(os.path.normpath(items[0]), "CMakeLists.txt")
            if (str(directory) + os.sep).startswith(os.path.dirname(lists) + os.sep):
                return
            if self.collector.fs.is_file(lists):
                before = self.subprojects.get(lists)
                self.subprojects[lists] = (rocm_path._or(before[0], rocm), before[1]) if before else (rocm, where)
            return

    def _cuda_twins_passed(self, texts: list[str], directory: Path, rocm_env: dict, cuda_env: dict,
                           where: str) -> None:
        """A call both builds run (a project's `add_gpu_library(x ${SOURCES})`) that passes the
        CUDA build a source where the ROCm build passes its backend twin from the same folder
        (`prof.cuda.cc` for `prof.hip.cc`, `blur.cu` for `blur.hip`): the twin takes its place
        on ROCm, so it is on the CUDA path, as a target command's CUDA-only source is. Where
        the ROCm build's reading of an argument is incomplete, that argument says nothing."""
        def sources(env) -> set[str]:
            found = set()
            for text in texts:
                items, complete = cmake_expand(text, env)
                if not complete:
                    return set()
                found.update(os.path.normpath(item if os.path.isabs(item) else directory / item) for item in items
                             if Path(item).suffix.lower() in COMPILED_SUFFIXES)
            return found
        rocm = sources(rocm_env)
        if not rocm:
            return
        twins = {_backend_free_name(path) for path in rocm}
        for path in sources(cuda_env) - rocm:
            if _backend_free_name(path) in twins:
                self.build.cuda_sources.setdefault(path, where)

    @staticmethod
    def _generator_expression_arms(walk: CMakeWalk, arguments, texts: list[str], rocm_env: dict, cuda_env: dict) -> None:
        """An argument that is one generator expression whose condition fails on ROCm and not
        on CUDA (`$<$<BOOL:${X_WITH_CUDA}>:CUDA::cublas>`) is the CUDA build's, as the `else()`
        of `if(X_WITH_HIP)` is: the file's rules read it so (`BuildFiles.list_ranges`)."""
        group: list = []  # the arguments of one expression (`$<$<BOOL:${X}>:CUDA::cublas CUDA::cudart>`)
        depth = 0
        for argument, text in zip(arguments, texts):
            if not group and "$<" not in text:
                continue
            group.append((argument, text))
            depth += text.count("$<") - text.count(">")
            if depth > 0:
                continue
            joined = ";".join(t for _, t in group)
            first, last = group[0][0], group[-1][0]
            group, depth = [], 0
            kept = {(r, c) for _, r, c in rocm_path.conditional_items(joined, walk.extra, rocm_env, cuda_env,
                                                                      walk.selectors)}
            if len(kept) == 1 and next(iter(kept))[0] is False and next(iter(kept))[1] is not False:
                walk.model.ranges.append((first.start_byte, last.end_byte, Status.DEAD))

    def _custom_map_files(self, texts: list[str], directory: Path, env: dict) -> list[str]:
        """The files a `hipify(... CUSTOM_MAP_FILE <file>)` names: the path as the list's
        variables give it, else its file name in the list's folder or a folder above it, up
        to the project's root (`${TE}/hipify_custom_map.json`, `TE` set out of view)."""
        found = []
        for keyword, text in zip(texts, texts[1:]):
            if keyword != "CUSTOM_MAP_FILE":
                continue
            items, complete = cmake_expand(text, env)
            if complete and items:
                found.append(os.path.normpath(os.path.join(directory, items[0])))
                continue
            name, folder = os.path.basename(text), Path(directory)
            while True:
                if self.collector.fs.is_file(str(folder / name)):
                    found.append(str(folder / name))
                    break
                if folder == self.collector.root or folder.parent == folder:
                    break
                folder = folder.parent
        return found

    def _set_by_nobody(self, text: str) -> bool:
        """Is `text` a list variable alone that no list file, option or CMake sets (`${HEADERS}`
        where the lists set `headers`)? It expands to nothing. (A path built on an unset
        variable, `${GEN_DIR}/a.cu`, expects the user to give it.)"""
        names = rocm_path.variable_references(text)
        return (self.set_anywhere is not None and len(names) == 1 and text == f"${{{names[0]}}}"
                and not self.set_anywhere(names[0]))

    def _command(self, source: SourceFile, directory: Path, walk: CMakeWalk, node, name: str, arguments,
                 rocm: Value, cuda: Value, rocm_env: dict, cuda_env: dict) -> None:
        self.sets.note_command(source, walk, name, arguments, _sides(rocm, cuda),
                               rocm_env if rocm is not False else cuda_env)
        looping = walk.in_loop > 0  # the lists it reads are read once per pass
        self.walks_in_loop += looping
        try:
            self._run_command(source, directory, walk, node, name, arguments, rocm, cuda, rocm_env, cuda_env)
        finally:
            self.walks_in_loop -= looping

    def _run_command(self, source: SourceFile, directory: Path, walk: CMakeWalk, node, name: str, arguments,
                     rocm: Value, cuda: Value, rocm_env: dict, cuda_env: dict) -> None:
        if name in self.function_sources and not walk.functions:  # a call of a project function
            self.function_calls[name] = rocm_path._or(self.function_calls[name], rocm) \
                if name in self.function_calls else rocm
        if rocm is False and cuda is False:
            if name in _DEFINE_COMMANDS:  # an arm for another build (`if(USE_MUSA)`): its names are not ROCm's
                start = 1 if name == "target_compile_definitions" else 0
                for text in (_unquote(source.node_text(a)) for a in arguments[start:]):
                    if "$" not in text and text not in _LIBRARY_KEYWORDS:
                        self.collector.define_for(True, False, text)
            return
        texts = [_unquote(source.node_text(a)) for a in arguments]
        if rocm is not False:
            self._generator_expression_arms(walk, arguments, texts, rocm_env, cuda_env)
        if rocm is not False and names_hip(name, texts):
            self.collector.rocm_build = self.build.rocm = True
        elif rocm is True and cuda is False and name in _DEFINE_COMMANDS and any(
                t.removeprefix("-D").split("=", 1)[0] in rocm_path.HIP_AMD_PLATFORM_MACROS for t in texts):
            # An arm only the ROCm build takes (`elseif(BACKEND STREQUAL "rocm")`) that builds
            # against HIP's headers with the C++ compiler: the ROCm build, described.
            self.collector.rocm_build = self.build.rocm = True
        if rocm is not False:
            _note_cmake_targets(name, texts, self.collector)
            if name in _COMMAND_RUNNERS:
                self.collector.note_commands(texts)
            elif name.lower().startswith("hipify"):  # a project's or hipify_torch's CMake `hipify(...)`
                self.collector.hipify_step = True
                self.collector.hipify_tools.add(hipify.TORCH)
                for path in self._custom_map_files(texts, directory, rocm_env):
                    self.collector.note_custom_map(path)
        line = source.line_of(node.start_byte) + 1
        where = f"{self.collector.shown(source.path)}:{line}"
        if name == "project" and texts:
            # `project(HYPRE)` sets `HYPRE_SOURCE_DIR`, which lists then build paths from.
            for env in (rocm_env, cuda_env):
                names, complete = cmake_expand(texts[0], env)
                for variable in ["PROJECT_SOURCE_DIR"] + [f"{n}_SOURCE_DIR" for n in names[:1] if complete
                                                          and re.fullmatch(r"[A-Za-z0-9_.+-]+", n)]:
                    env[variable] = CMakeValue((str(directory),))
                    env[variable[:-len("SOURCE_DIR")] + "BINARY_DIR"] = CMakeValue((BINARY_DIR,))
            return
        if name == "find_package" and texts and re.fullmatch(r"[A-Za-z0-9_.+-]+", texts[0]):
            # Module mode reads the project's own `Find<Name>.cmake` where the call stands (in
            # its scope, as `include` does): one a CUDA-only branch finds is the CUDA build's.
            module = self._module(f"Find{texts[0]}", rocm_env if rocm is not False else cuda_env)
            if module is not None:  # (from a function body, its PARENT_SCOPE is the caller's: not known)
                self._walk(module, rocm, cuda, rocm_env, cuda_env, where, None if walk.in_function else walk.parent_envs)
        if name == "configure_file" and len(texts) >= 2:
            self._configured_defines(texts[0], directory, rocm, cuda, rocm_env, cuda_env)
            return
        if name in ("externalproject_add", "fetchcontent_declare"):
            self._subproject(texts, directory, rocm, rocm_env if rocm is not False else cuda_env, where)
            return
        if name in ("add_subdirectory", "subdirs", "include") and texts:
            # `subdirs(a b)`: CMake's older `add_subdirectory`, for each folder it names.
            folders = [t for t in texts if t not in ("EXCLUDE_FROM_ALL", "PREORDER")] if name == "subdirs" else texts[:1]
            for text in folders:
                self._follow("include" if name == "include" else "add_subdirectory", text, directory, rocm, cuda,
                             rocm_env, cuda_env, where, None if walk.in_function or walk.in_block else walk.parent_envs)
            return
        if name == "file" and len(texts) >= 3 and texts[0] in ("GLOB", "GLOB_RECURSE"):
            for taken, env in ((rocm, rocm_env), (cuda, cuda_env)):
                if taken is not False:
                    env[texts[1]] = CMakeValue(tuple(_cmake_glob(texts, env, directory, self.collector.root, self.collector.fs)),
                                               definite=False)
            return
        if name in _TARGET_COMMANDS and len(texts) >= 2:
            if texts[1] in ("ALIAS", "IMPORTED", "INTERFACE") and name != "target_sources":
                return
            for text in texts[1:]:
                if text.startswith("$<TARGET_OBJECTS:"):
                    continue  # another target's object files, no sources
                for side, taken, env in ((True, rocm, rocm_env), (False, cuda, cuda_env)):
                    if taken is False:
                        continue
                    items, complete = cmake_expand(text, env)
                    if not complete and side and not walk.in_function and not self._set_by_nobody(text):
                        self.build.unresolved = True  # (a function's callers name its sources)
                    for item in items:
                        if "$<" in item or item in _LIBRARY_KEYWORDS:
                            continue
                        full = os.path.normpath(os.path.join(directory, item))  # an absolute item stays
                        if suffix_of(os.path.basename(full)).lower() not in COMPILED_SUFFIXES:
                            continue
                        if side:
                            self._rocm_source(walk, full, taken is True and self.collector.rocm_build)
                        else:
                            self.build.cuda_sources.setdefault(full, where)
            return
        if name in _DEFINE_COMMANDS:
            start = 1 if name == "target_compile_definitions" else 0
            # One list, as CMake joins the arguments into the property before it evaluates
            # generator expressions: `$<$<BOOL:${USE_ROCM}>:GPU ROCM>` is one expression.
            joined = ";".join(t for t in texts[start:] if t not in _LIBRARY_KEYWORDS)
            for text, rocm_keeps, cuda_keeps in rocm_path.conditional_items(joined, walk.extra, rocm_env, cuda_env,
                                                                             walk.selectors):
                for side, taken, env in ((True, rocm_path._and(rocm, rocm_keeps), rocm_env),
                                         (False, rocm_path._and(cuda, cuda_keeps), cuda_env)):
                    items, complete = cmake_expand(text, env)
                    for item in items if complete else []:
                        if name == "add_definitions" and not item.startswith("-D"):
                            continue
                        self.collector.define_for(side, taken, item)
            return
        if name in ("include_directories", "target_include_directories"):
            # The CUDA build's own folders too: a header only there is found by CUDA compiles only.
            start = 1 if name == "target_include_directories" else 0
            for text in filter(None, map(_in_build_tree, texts[start:])):
                items, complete = cmake_expand(text, rocm_env if rocm is not False else cuda_env)
                for item in items if complete else []:
                    if item not in _LIBRARY_KEYWORDS and "$<" not in item:  # (a list variable's own expressions)
                        folder = os.path.normpath(item if os.path.isabs(item) else directory / item)
                        if rocm is not False:
                            self.collector.add_include_dir(folder)
                        elif folder not in self.collector.cuda_include_dirs:
                            self.collector.cuda_include_dirs.append(folder)
            return
        if name in _NAMING_COMMANDS:
            return
        if rocm is not False:
            # Any other command a ROCm build runs with a source in it (a project's own
            # `add_gpu_library(x a.cu)`, `set_source_files_properties(a.cu ...)`) may compile it,
            # but for the sources a call passes under a CUDA keyword beside that keyword's HIP
            # twin (`CUDA_SPECIFIC_SRCS ... HIP_SPECIFIC_SRCS ...`): those are the CUDA build's.
            cuda_only = _cuda_keyword_sections(texts)
            for i, text in enumerate(texts):
                for item in cmake_expand(text, rocm_env)[0]:
                    if Path(item).suffix.lower() in COMPILED_SUFFIXES:
                        full = os.path.normpath(item if os.path.isabs(item) else directory / item)
                        if i in cuda_only:
                            self.build.cuda_only_sources.setdefault(
                                full, f"passed only as the CUDA build's sources ({where})")
                        else:
                            self._rocm_source(walk, full, False)
        if rocm is not False and cuda is not False and not walk.functions:
            self._cuda_twins_passed(texts, directory, rocm_env, cuda_env, where)


def _in_build_tree(text: str) -> str | None:
    """An argument as the project's own build reads it: `$<BUILD_INTERFACE:dir>` is `dir`; any
    other generator expression (`$<INSTALL_INTERFACE:...>`, one on the configuration) is None,
    read before expanding its variables: one that holds several values (`a;b`, the values
    of undecided arms) would split the expression into pieces that look like paths."""
    prefix = "$<BUILD_INTERFACE:"
    if text.startswith(prefix) and text.endswith(">") and text.count("$<") == 1:
        return text[len(prefix):-1]
    return None if "$<" in text else text


def _cuda_keyword_sections(texts: list[str]) -> set[int]:
    """Indices of the arguments a call passes under a CUDA keyword whose HIP twin the same
    call also uses (`gpu_library(x CUDA_SRCS a.cu HIP_SRCS a.hip)`): a keyword is an
    upper-case word (`CUDA_SPECIFIC_SRCS`), its section the arguments up to the next one."""
    keywords = [i for i, text in enumerate(texts) if re.fullmatch(r"[A-Z][A-Z0-9_]*", text)]
    cuda = backend_selectors(texts[i] for i in keywords)
    if not cuda:
        return set()
    sections = set()
    for k, i in enumerate(keywords):
        if texts[i] in cuda:
            end = keywords[k + 1] if k + 1 < len(keywords) else len(texts)
            sections.update(range(i + 1, end))
    return sections


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == '"' and text[-1] == '"' else text


def _note_cmake_targets(name: str, texts: list[str], collector: _Collector) -> None:
    """Offload architectures and thread limits a command the ROCm build may run names:
    flags in any command (`target_compile_options`, `set(CMAKE_HIP_FLAGS ...)`), and the
    architecture variables and properties (`set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942)`,
    `list(APPEND GPU_TARGETS gfx942)`, `set_target_properties(k PROPERTIES HIP_ARCHITECTURES gfx942)`)."""
    collector.note_flags(texts)
    if name == "set" and texts and texts[0] in ARCH_VARIABLES:
        collector.note_archs(texts[1:])
    elif name == "list" and len(texts) > 2 and texts[0] in ("APPEND", "PREPEND") and texts[1] in ARCH_VARIABLES:
        collector.note_archs(texts[2:])
    elif name in ("set_target_properties", "set_property") and "HIP_ARCHITECTURES" in texts:
        collector.note_archs(texts[texts.index("HIP_ARCHITECTURES") + 1:])


def _cmake_glob(texts: list[str], env: dict, directory: Path, root: Path, fs: Observed) -> list[str]:
    """`file(GLOB VAR [LIST_DIRECTORIES b] [RELATIVE dir] [CONFIGURE_DEPENDS] patterns...)`."""
    recursive = texts[0] == "GLOB_RECURSE"
    out, relative, i = [], None, 2
    while i < len(texts):
        word = texts[i]
        if word in ("LIST_DIRECTORIES", "RELATIVE"):
            if word == "RELATIVE" and i + 1 < len(texts):
                relative = texts[i + 1]
            i += 2
            continue
        if word in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
            i += 1
            continue
        patterns, complete = cmake_expand(word, env)
        for pattern in patterns if complete else []:
            full = pattern if os.path.isabs(pattern) else str(directory / pattern)
            if recursive:
                head, tail = os.path.split(full)
                full = os.path.join(head, "**", tail)
            out.extend(_glob_within(full, root, fs))
        i += 1
    if relative is not None:
        out = [os.path.relpath(p, relative) for p in out]
    return out


# ---- includes -----------------------------------------------------------------------------
def _cuda_folder_twins(candidates, cuda_folders: list[str], collector: _Collector) -> dict[str, str]:
    """Headers in an include folder only the CUDA build adds (`include/targets/cuda`) whose
    twin, a header of the same name, is in one of the ROCm build's include folders
    (`include/targets/hip/target_device.h`): the ROCm build's `#include <target_device.h>`
    finds its own. Unless a ROCm-compiled file reaches them some other way (`_not_included`
    keeps those); the headers only they include follow them there. A folder that is or holds
    one of the ROCm build's (a link to it, the project root) is no CUDA-only folder."""
    rocm_folders = [os.path.realpath(d) for d in collector.include_dirs]
    folders = [f for f in cuda_folders if not any(
        _inside(r, os.path.realpath(f)) for r in rocm_folders)]
    out = {}
    for c in candidates:
        if c.language != CUDA or suffix_of(os.path.basename(c.absolute)).lower() not in HEADER_SUFFIXES:
            continue
        folder = next((f for f in folders if c.absolute.startswith(f + os.sep)), None)
        if folder is None:
            continue
        name = os.path.relpath(c.absolute, folder)
        twin = next((os.path.join(d, name) for d in collector.include_dirs
                     if collector.fs.is_file(os.path.join(d, name))), None)
        if twin is not None and os.path.realpath(twin) != os.path.realpath(c.absolute):
            out[c.absolute] = (f"in {collector.shown(folder)}, an include folder only the CUDA build adds; "
                               f"the ROCm build finds {collector.shown(twin)}")
    return out


def _not_included(candidates_not_built: dict[str, str], candidates, root: Path, include_dirs: list[str],
                  other_include_dirs: list[str], config, fs: Observed, whole_project: bool) -> dict[str, str]:
    """The candidates (path -> why no ROCm build compiles it), and headers only they include,
    that no possibly-compiled file includes. Those candidates find their headers in the
    include directories of the builds ROCm never runs too (`other_include_dirs`)."""
    files = _project_c_files(candidates, root, config, fs, whole_project)
    files.update(candidates_not_built)  # named by a build file even if discovery left them out
    graph = _IncludeGraph(include_dirs, fs, files)
    compiled_roots = [p for p in files if p not in candidates_not_built and Path(p).suffix.lower() in COMPILED_SUFFIXES]
    compiled = graph.closure(compiled_roots)
    out = {}
    for path, reason in candidates_not_built.items():
        if path not in compiled and fs.is_file(path):
            out[path] = reason
    if other_include_dirs:
        graph = _IncludeGraph([*other_include_dirs, *include_dirs], fs, files)
    for path in graph.closure(list(out)):
        if path not in compiled and path not in out:
            out[path] = "included only by files not compiled for ROCm"
    return out


def _project_c_files(candidates, root: Path, config, fs: Observed, whole_project: bool) -> dict[str, str]:
    """Every C-family file of the project: the scanned ones when the scan covers the root."""
    covers_root = whole_project or any(not c.explicit and Path(c.absolute).parent == root for c in candidates)
    if not covers_root:
        candidates, _ = discover([root], config)
        fs.unrecorded = True  # a walk of the project: what it found is not recorded
    return {str(Path(c.absolute)): "" for c in candidates if c.language == CUDA}


class _IncludeGraph:
    """`#include` lines of project files, read with a byte scan, resolved against the
    including file's directory and the build's include directories."""

    def __init__(self, include_dirs: list[str], fs: Observed, project_files=()):
        self.include_dirs = include_dirs
        self.fs = fs
        self._edges: dict[str, list[str]] = {}
        self._found: dict[str, str | None] = {}
        self._by_name: dict[str, list[str]] = {}  # file name -> the project's files of that name
        for path in project_files:
            self._by_name.setdefault(os.path.basename(path), []).append(path)

    def includes(self, path: str) -> list[str]:
        if path not in self._edges:
            self._edges[path] = []  # before reading: a cycle finds it done
            data = self.fs.read(path, MAX_SOURCE_BYTES)
            if data is None:
                return []
            found = []
            directory = os.path.dirname(path)
            for m in _INCLUDE.finditer(data):
                name = m.group(2).decode("utf-8", "replace").strip()
                full = self._beside(directory, name) if m.group(1) == b'"' else None
                full = full or self._in_include_dirs(name)
                if full is not None:
                    found.append(full)
            self._edges[path] = found
        return self._edges[path]

    def _beside(self, directory: str, name: str) -> str | None:
        full = os.path.normpath(os.path.join(directory, name))
        return full if self.fs.is_file(full) else None

    def _in_include_dirs(self, name: str) -> str | None:
        """`name` in the build's include directories, else the one project file of that path's
        name (as `BuildMacros.resolve` finds it: a folder the lists do not say), looked up
        once per name."""
        if name not in self._found:
            found = next((f for d in self.include_dirs if (f := self._beside(d, name))), None)
            wanted = os.path.normpath(name)
            if found is None and not wanted.startswith("..") and not is_system_header(wanted):
                matches = [p for p in self._by_name.get(os.path.basename(wanted), ())
                           if p.endswith(os.sep + wanted)]
                found = matches[0] if len(matches) == 1 else None
            self._found[name] = found
        return self._found[name]

    def closure(self, roots: list[str]) -> set[str]:
        seen = set(roots)
        stack = list(roots)
        while stack:
            for child in self.includes(stack.pop()):
                if child not in seen and Path(child).suffix.lower() in CUDA_SUFFIXES:
                    seen.add(child)
                    stack.append(child)
        return seen
