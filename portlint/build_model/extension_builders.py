"""Builder classes of PyTorch extensions: which sources each compiles on ROCm, and whether a
ROCm build builds it at all.

A project with many extensions often gives each one a class (an `op_builder/` package): a base
class builds with PyTorch's extension builder (`CUDAExtension`, `load`), and each subclass's
methods return its `sources()`, `include_paths()`, `nvcc_args()`. setup.py builds every
builder (a loop over them, `builder.builder()`), or one is built when first used
(`builder.load()`); so every builder whose sources can be read counts, on the arms a ROCm
build takes: `if self.is_rocm_pytorch():` (PyTorch reports `torch.version.hip`, no CUDA
toolkit) chooses its ROCm sources, and a builder whose `is_compatible()` returns False there
is not built on ROCm. PyTorch's builder hipifies what it compiles.

Classes are found by what they define, not by their names: a class with `sources()` (its own
or inherited) whose hierarchy reaches a module that uses `torch.utils.cpp_extension`. Bases are
looked up in the class's own file, then where the file imports the name from, then anywhere
in the project when one class has that name.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from portlint import rocm_path
from portlint.build_model.observed import Observed
from portlint.build_model.python_helpers import PythonHelpers
from portlint.checks.python_build import BuildScript, dotted_name
from portlint.source import PYTHON, SourceFile

MAX_BUILDER_FILE_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 12  # methods calling methods (`sources()` -> `lib_sources()` -> `super().lib_sources()`)
_METHODS = (b"def sources(", b"def is_compatible(")  # a file may hold a builder, or a base deciding one

# `(script, leaf, base)` -> the absolute paths a source-list element names, or None when it
# cannot be read (the build-file reader's own path logic).
PathsOf = Callable[[BuildScript, ast.expr, Path], "list[str] | None"]


@dataclass
class Builder:
    name: str  # the class, for reasons
    where: str  # `op_builder/gemm.py:12`
    rocm_sources: list[str] | None  # what a ROCm build compiles; None: not read
    sources: dict[str, None] = field(default_factory=dict)  # on every arm, in order
    include_dirs: list[str] = field(default_factory=list)  # on the arms a ROCm build takes
    not_on_rocm: str = ""  # why a ROCm build does not build it (`is_compatible()` False there, a SYCL extension)
    # `-D`/`-U` options its `nvcc_args()` and `cxx_args()` give on the arms a ROCm build
    # takes (`-U__HIP_NO_HALF_OPERATORS__`): PyTorch passes them with its own.
    rocm_macro_flags: list[str] = field(default_factory=list)

    @property
    def built_on_rocm(self) -> bool:
        return not self.not_on_rocm


@dataclass
class _Class:
    node: ast.ClassDef
    module: "_Module"
    bases: list["_Class"] = field(default_factory=list)


class _Module:
    """One Python file that may hold builder classes; its readings are made when a builder
    needs them (most files with a `sources()` method hold none)."""

    def __init__(self, path: Path, source: SourceFile, tree: ast.Module):
        self.path, self.source, self.tree = path, source, tree
        self.imports = _imported_from(tree, path)  # name -> the paths (or their ends) of its module
        self.torch_builder = b"cpp_extension" in source.data  # uses `torch.utils.cpp_extension`

    @functools.cached_property
    def rocm(self) -> BuildScript:  # CUDA-only arms skipped
        return BuildScript(self.source)

    @functools.cached_property
    def every(self) -> BuildScript:  # every arm taken
        return BuildScript(self.source, rocm_path.RocmPathModel())

    @functools.cached_property
    def names(self) -> rocm_path.PythonNames:
        return rocm_path.PythonNames(self.tree)


def read_builders(python_files: list[str], root: Path, fs: Observed, paths_of: PathsOf,
                  shown: Callable[[str], str], helpers: Callable[[Path], PythonHelpers] | None = None) -> list[Builder]:
    """Every builder class of the project's Python files (absolute paths). `helpers`: the
    reader of the project's build-helper functions a builder calls, for the folder its
    build runs in."""
    modules: dict[str, _Module] = {}
    for path in python_files:
        data = fs.read(path, MAX_BUILDER_FILE_BYTES, keep=True)
        if data is None or b"class " not in data or not any(m in data for m in _METHODS):
            continue
        module = _module(Path(path), data)
        if module is not None:
            modules[path] = module
    _add_base_modules(modules, python_files, fs)
    classes = _classes(modules)
    out = []
    for klass in classes:
        mro = _mro(klass)
        if not any(c.module.torch_builder for c in mro):
            continue
        base = _base_folder(klass.module.path, root, fs)
        reader = _Reader(mro, base, paths_of, helpers(base) if helpers is not None else None)
        sources = reader.method("sources")
        if sources is None or not _returns_value(sources[1]):
            continue  # abstract: a base class of builders
        line = klass.node.lineno
        builder = Builder(klass.node.name, f"{shown(str(klass.module.path))}:{line}", reader.paths("sources", rocm=True))
        builder.sources = dict.fromkeys(reader.paths("sources", rocm=False) or [])
        builder.include_dirs = reader.paths("include_paths", rocm=True) or []
        builder.rocm_macro_flags = [flag for method in _FLAG_METHODS for flag in reader.strings(method)
                                    if flag.startswith(("-D", "-U"))]
        compatible = reader.method("is_compatible")
        if compatible is not None and _false_on_rocm(*compatible):
            builder.not_on_rocm = f"`{klass.node.name}.is_compatible()` is False on ROCm"
        elif _makes_only_sycl(reader.method("builder")):
            builder.not_on_rocm = f"`{klass.node.name}` builds a SYCL extension, which hip-clang never compiles"
        out.append(builder)
    return out


def _add_base_modules(modules: dict[str, _Module], python_files: list[str], fs: Observed) -> None:
    """The modules the classes' bases are imported from, though they define neither method
    (a base that only builds: `SyclOpBuilder.builder()`), a few levels up."""
    by_ending = {Path(path).as_posix(): path for path in python_files}
    for _ in range(4):
        wanted = set()
        for module in modules.values():
            for node in module.tree.body:
                if isinstance(node, ast.ClassDef):
                    for base in node.bases:
                        name = (dotted_name(base) or "").rsplit(".", 1)[-1]
                        wanted.update(module.imports.get(name, ()))
        found = {path for ending in wanted for path in ([by_ending[ending]] if ending in by_ending else
                                                         [p for e, p in by_ending.items() if e.endswith(ending)])}
        new = [path for path in sorted(found) if path not in modules]
        if not new:
            return
        for path in new:
            data = fs.read(path, MAX_BUILDER_FILE_BYTES, keep=True)
            module = _module(Path(path), data) if data and b"class " in data else None
            if module is not None:
                modules[path] = module


def _module(path: Path, data: bytes) -> _Module | None:
    source = SourceFile(str(path), PYTHON, data, path, build_script=True)
    try:
        tree = source.python_ast
    except (SyntaxError, ValueError, RecursionError):
        return None  # the scan reports the file's syntax error
    return _Module(path, source, tree)


def _imported_from(tree: ast.Module, path: Path) -> dict[str, tuple[str, ...]]:
    """`from .builder import OpBuilder` -> {"OpBuilder": (".../op_builder/builder.py", ...)}:
    the paths the module may have (a module file or a package's `__init__.py`); an absolute
    import (`from op_builder.builder import X`) as the end of a path."""
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        parts = (node.module or "").split(".") if node.module else []
        if node.level:
            folder = path.parent
            for _ in range(node.level - 1):
                folder = folder.parent
            target = str(folder.joinpath(*parts))
        else:
            target = "/" + "/".join(parts)
        for alias in node.names:
            out[alias.asname or alias.name] = (target + ".py", target + "/__init__.py") if parts else (
                target + "/__init__.py",)
    return out


def _classes(modules: dict[str, _Module]) -> list[_Class]:
    found: list[_Class] = []
    by_name: dict[str, list[_Class]] = {}
    for module in modules.values():
        for node in module.tree.body:
            if isinstance(node, ast.ClassDef):
                klass = _Class(node, module)
                found.append(klass)
                by_name.setdefault(node.name, []).append(klass)
    for klass in found:
        for base in klass.node.bases:
            name = (dotted_name(base) or "").rsplit(".", 1)[-1]
            candidates = by_name.get(name, [])
            same_file = [c for c in candidates if c.module is klass.module and c is not klass]
            imported = [c for c in candidates if Path(c.module.path).as_posix().endswith(klass.module.imports.get(name, ("\0",)))]
            chosen = same_file or imported or (candidates if len(candidates) == 1 and candidates[0] is not klass else [])
            if chosen:
                klass.bases.append(chosen[0])
    return found


def _mro(klass: _Class) -> list[_Class]:
    """The class and its bases, depth first, each once (enough for single inheritance and
    the mixins builder hierarchies use)."""
    out: list[_Class] = []
    stack = [klass]
    while stack and len(out) < 64:
        current = stack.pop(0)
        if any(c is current for c in out):
            continue
        out.append(current)
        stack[0:0] = current.bases
    return out


def _base_folder(path: Path, root: Path, fs: Observed) -> Path:
    """Where a builder's relative source paths start: the folder of the setup.py that builds
    the package holding it (`op_builder/` -> the project root), else the package's parent."""
    folder = path.parent
    while True:
        if fs.is_file(folder / "setup.py"):
            return folder
        if folder == root or root not in folder.parents:
            return path.parent.parent if path.parent != root else root
        folder = folder.parent


class _Reader:
    """The values of one builder's methods, `self` being that builder."""

    def __init__(self, mro: list[_Class], base: Path, paths_of: PathsOf, helpers: PythonHelpers | None):
        self.mro, self.base, self.paths_of, self.helpers = mro, base, paths_of, helpers
        self._depth = 0

    def method(self, name: str, after: _Class | None = None) -> tuple[_Module, ast.FunctionDef] | None:
        """The definition of `name` the builder uses (for `super()`, the one after `after`)."""
        classes = self.mro
        if after is not None:
            index = next((i for i, c in enumerate(classes) if c is after), None)
            classes = classes[index + 1:] if index is not None else []
        for klass in classes:
            for node in klass.node.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return klass.module, node
        return None

    def paths(self, name: str, rocm: bool, after: _Class | None = None) -> list[str] | None:
        """The paths the method `name` returns (on the arms a ROCm build takes, or on every
        arm), or None when one of them cannot be read."""
        found = self.method(name, after)
        if found is None or self._depth > MAX_DEPTH:
            return None
        module, function = found
        script = module.rocm if rocm else module.every
        if self.helpers is not None and script.follow_call is None:
            self.helpers.follow(script, rocm)  # `return common_sources("csrc")` of a project module
        self._depth += 1
        previous = script.method_strings
        script.method_strings = lambda s, call: self._call(s, call, rocm)
        try:
            out: list[str] = []
            for node in _own_returns(function):
                if node.value is None or script.is_dead(node):
                    continue
                for leaf in script.values(node.value):
                    paths = self.paths_of(script, leaf, self.base)
                    if paths is None:
                        return None
                    out.extend(paths)
            return out
        finally:
            script.method_strings = previous
            self._depth -= 1

    def strings(self, name: str) -> list[str]:
        """The string constants the method `name` returns on the arms a ROCm build takes
        (`args += ['-O3', '-U__HIP_NO_HALF_OPERATORS__']; return args`); others are left out."""
        found = self.method(name)
        if found is None:
            return []
        module, function = found
        script = module.rocm
        return [leaf.value for node in _own_returns(function) if node.value is not None and not script.is_dead(node)
                for leaf in script.values(node.value) if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str)]

    def _call(self, script: BuildScript, call: ast.Call, rocm: bool) -> list[str] | None:
        """`self.m()` dispatches from the builder itself; `super().m()` from the class after
        the one defining the calling method."""
        if call.args or call.keywords or not isinstance(call.func, ast.Attribute):
            return None
        after = None
        if isinstance(call.func.value, ast.Call):  # super()
            owner = script.parent(script.function_of(call))
            after = next((c for c in self.mro if c.node is owner), None)
            if after is None:
                return None
        return self.paths(call.func.attr, rocm, after)


# The methods whose lists a builder passes to the compilers as `extra_compile_args`.
_FLAG_METHODS = ("nvcc_args", "cxx_args")


def _own_returns(function: ast.AST):
    """The `return` statements of a function's body, not those of functions nested in it."""
    return (node for node in rocm_path.own_nodes(function) if isinstance(node, ast.Return))


def _returns_value(function: ast.AST) -> bool:
    """Does the method return something (not an abstract `pass` or `raise NotImplementedError`)?"""
    return any(r.value is not None and not rocm_path.falsy_constant(r.value) for r in _own_returns(function))


def _makes_only_sycl(found: tuple[_Module, ast.AST] | None) -> bool:
    """Does the builder's `builder()` make SYCL extensions only (`SyclExtension(...)`, Intel's
    `DPCPPExtension(...)`), none that PyTorch builds with hipify on ROCm?"""
    if found is None:
        return False
    made = {(dotted_name(n.func) or "").rsplit(".", 1)[-1] for n in ast.walk(found[1]) if isinstance(n, ast.Call)}
    made = {name for name in made if name.endswith("Extension")}
    return bool(made) and all("sycl" in name.lower() or "dpcpp" in name.lower() for name in made)


def _false_on_rocm(module: _Module, function: ast.AST) -> bool:
    """Does `is_compatible()` surely return False on ROCm (`rocm_path.returns_false_on_rocm`)?"""
    return rocm_path.returns_false_on_rocm(function, module.names, module.rocm.is_dead)
