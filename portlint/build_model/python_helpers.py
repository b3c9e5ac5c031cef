"""Build helpers: functions of the project's own Python modules that a setup.py imports and
calls to make its extensions (`from build_tools.ext import make_extension`), or to list their
sources (`CUDAExtension("x", sources=get_sources())`).

A helper is read as setup.py is read (`BuildScript`): its arms as a ROCm build takes them
(the module's own ROCm-path model) or every arm, its parameters bound to what the call passes,
its `return` values followed to paths. So a source a helper adds only where a ROCm build never
goes (`if not is_rocm(): sources += [...]`) is the CUDA build's, as it would be in setup.py.
Helpers calling helpers are followed `MAX_DEPTH` calls deep.

A call is followed only to a function the project defines: the module an import of the
calling file names (`from pkg.mod import f`, `from pkg import mod` then `mod.f()`, `import
pkg.mod` then `pkg.mod.f()`, relative imports), found below the setup.py's folder (where
Python finds it when the build runs). A helper that cannot be read to its end (a module not
found or not parsed, an argument or a returned value that cannot be read) gives a value no
reader makes a path of: the build it feeds is then unresolved and decides nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from portlint import rocm_path
from portlint.build_model.observed import Observed
from portlint.checks.python_build import BuildScript, callee_name, dotted_name, string_template
from portlint.source import PYTHON, SourceFile, module_nodes

MAX_DEPTH = 2  # setup.py -> helper -> helper
MAX_MODULE_BYTES = 2 * 1024 * 1024
# A parameter bound to an argument the caller's reading cannot give: a call of this name,
# which no file defines, is followed to nothing readable.
_UNREAD = "<unread argument>"

# `(script, leaf, base)` -> the absolute paths a list element names, or None (see
# `extension_builders.PathsOf`); `(script, expr, base)` -> a path-like string's value, or None.
PathsOf = Callable[[BuildScript, ast.expr, Path], "list[str] | None"]
StringOf = Callable[[BuildScript, ast.expr, Path], "str | None"]


class PythonHelpers:
    """The helper functions one setup.py reaches, read on its behalf."""

    def __init__(self, base: Path, root: Path, fs: Observed, paths_of: PathsOf, string_of: StringOf):
        self.base, self.root, self.fs = base, root, fs  # `base`: the setup.py's folder
        self.paths_of, self.string_of = paths_of, string_of
        self._scripts: dict[tuple[str, bool], BuildScript | None] = {}
        self._depth: dict[int, int] = {}  # id(script) -> how many calls below setup.py it is read
        self._rocm: dict[int, bool] = {}  # id(script) -> read on the arms a ROCm build takes
        self._names: dict[int, rocm_path.PythonNames] = {}
        self._imports: dict[int, list[ast.Import | ast.ImportFrom]] = {}
        self._open: set[int] = set()  # the helper functions being read now (a call chain)
        # A helper module a ROCm build calls that cannot be read (it does not parse): what
        # that build compiles is not known.
        self.unread_on_rocm = False

    def follow(self, script: BuildScript, rocm: bool) -> BuildScript:
        """Let setup.py's `script` follow its calls of the project's helpers (`BuildScript.follow_call`)."""
        self._depth[id(script)], self._rocm[id(script)] = 0, rocm
        script.follow_call = self._returned
        return script

    def names(self, script: BuildScript) -> rocm_path.PythonNames:
        if id(script) not in self._names:
            self._names[id(script)] = rocm_path.PythonNames(script.tree)
        return self._names[id(script)]

    def extension_calls(self, script: BuildScript, within: ast.AST | None = None
                        ) -> Iterator[tuple[BuildScript, ast.Call, list[tuple[BuildScript, ast.Call]]]]:
        """The extensions the helpers `script` calls make (`CUDAExtension(...)` in a helper's
        body, or in a helper it calls): (the helper's script, the extension call, the calls
        that lead there, outermost first). `within`: only calls in that function's body."""
        depth = self._depth.get(id(script), MAX_DEPTH)
        if depth >= MAX_DEPTH:
            return
        for call in script.all_calls():
            if script.is_dead(call) or (within is not None and script.function_of(call) is not within):
                continue
            found = self._resolve(script, call)
            if found is None:
                continue
            helper, function = found
            if helper is None:
                self.unread_on_rocm |= self._rocm.get(id(script), True)
                continue
            with self._bound(script, call, helper, function):  # while the caller reads what it yields
                for made in helper.extension_calls():
                    if helper.function_of(made) is function:
                        yield helper, made, [(script, call)]
                for inner, made, chain in self.extension_calls(helper, function):
                    yield inner, made, [(script, call), *chain]

    # ---- following a call -----------------------------------------------------------------
    def _returned(self, script: BuildScript, call: ast.Call) -> list[ast.expr] | None:
        """What a call of a project helper returns, as leaves placed at the call: strings as
        written, other paths made absolute; the call itself (no value) where it cannot be read
        on the arms a ROCm build takes. None: not a call of a project helper."""
        if callee_name(call) == _UNREAD:
            return [call]
        found = self._resolve(script, call)
        if found is None:
            return None
        helper, function = found
        rocm = self._rocm.get(id(script), True)
        if helper is None or self._depth.get(id(script), MAX_DEPTH) >= MAX_DEPTH:
            return [call] if rocm else []
        hipified = _hipified_parameter(helper.tree, function)
        if hipified is not None:  # the same sources, renamed to their hipified copies
            return self._passed_paths(script, call, function, hipified)
        with self._bound(script, call, helper, function):
            return self._read_returns(call, helper, function, rocm)

    def _passed_paths(self, script: BuildScript, call: ast.Call, function: ast.AST, parameter: str) -> list[ast.expr]:
        """The paths `call` passes for `parameter`, each at its place in the caller; the call
        itself (no value) where they cannot be read."""
        expr = _passed(call, function, parameter)
        if expr is None or isinstance(expr, ast.Starred):
            return [call]
        out: list[ast.expr] = []
        for leaf in script.values(expr):
            texts = self._texts(script, leaf)
            if texts is None:
                return [call]
            out.extend(ast.copy_location(ast.Constant(text), leaf) for text in texts)
        return out

    def _read_returns(self, call: ast.Call, helper: BuildScript, function: ast.AST, rocm: bool) -> list[ast.expr]:
        out: list[ast.expr] = []
        returns = sorted((n for n in rocm_path.own_nodes(function) if isinstance(n, ast.Return)),
                         key=lambda n: (n.lineno, n.col_offset))
        for node in returns:
            if node.value is None or helper.is_dead(node):
                continue
            single = self.string_of(helper, node.value, self.base)  # one path: `return os.path.join(a, b)`
            for leaf in [ast.copy_location(ast.Constant(single), node.value)] if single is not None \
                    else helper.values(node.value):
                texts = self._texts(helper, leaf)
                if texts is None:
                    if rocm:
                        return [call]
                    continue
                out.extend(ast.copy_location(ast.Constant(text), call) for text in texts)
        return out

    def _texts(self, helper: BuildScript, leaf: ast.expr) -> list[str] | None:
        if string_template(leaf) is not None:  # a string as written: a flag or a relative path
            text = self.string_of(helper, leaf, self.base)
            if text is not None:
                return [text]
        return self.paths_of(helper, leaf, self.base)

    @contextmanager
    def _bound(self, script: BuildScript, call: ast.Call, helper: BuildScript, function: ast.AST):
        """The helper's parameters bound to what `call` passes (as the caller reads it), for
        as long as the helper is read for that call."""
        previous = helper.given_arguments.get(id(function))
        helper.given_arguments[id(function)] = self._arguments(script, call, function)
        self._open.add(id(function))
        try:
            yield
        finally:
            self._open.discard(id(function))
            if previous is None:
                helper.given_arguments.pop(id(function), None)
            else:
                helper.given_arguments[id(function)] = previous

    def _arguments(self, script: BuildScript, call: ast.Call, function: ast.AST) -> dict[str, list[ast.expr]]:
        given: dict[str, list[ast.expr]] = {}
        unpacked = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        for parameter in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
            name = parameter.arg
            expr = _passed(call, function, name, positional=not unpacked)
            if expr is not None:
                value = self._argument(script, expr, function)
            elif unpacked:
                value = _unread(function)  # passed through `*args`/`**kwargs`: not followed
            else:
                continue  # its default
            given[name] = [value]
        for rest in (function.args.vararg, function.args.kwarg):
            if rest is not None:  # `*sources`, `**options`: not followed
                given[rest.arg] = [_unread(function)]
        return given

    def _argument(self, script: BuildScript, expr: ast.expr, at: ast.AST) -> ast.expr:
        """An argument as a node of the helper's file: its string, the list of its strings,
        or a value no reader follows."""
        text = self.string_of(script, expr, self.base)
        if text is not None:
            return ast.copy_location(ast.Constant(text), at)
        items = []
        for leaf in script.values(expr):
            texts = self._texts(script, leaf)
            if texts is None:
                return _unread(at)
            items.extend(ast.copy_location(ast.Constant(t), at) for t in texts)
        if not items:
            return _unread(at)
        return ast.copy_location(ast.List(items, ast.Load()), at)

    # ---- finding the function -------------------------------------------------------------
    def _resolve(self, script: BuildScript, call: ast.Call) -> tuple[BuildScript | None, ast.AST] | None:
        """(the helper module's script, the function) a call names through an import of the
        calling file; (None, call) for a project module that cannot be read; None for a call
        of anything else."""
        name = dotted_name(call.func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if id(script) not in self._imports:
            self._imports[id(script)] = [n for n in module_nodes(script.tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        for module, member in _imported(self._imports[id(script)], head, rest):
            path = self._module_path(script, module)
            if path is None:
                continue
            helper = self._script(path, self._rocm.get(id(script), True))
            if helper is None:
                return None, call
            function = next((f for f in helper.functions(member) if isinstance(helper.parent(f), ast.Module)), None)
            if function is None:
                return None  # a class, a constant, a name the module imports from elsewhere
            if id(function) in self._open:
                return None, call  # a helper that calls itself: not followed, so not known
            depth = self._depth.get(id(script), MAX_DEPTH) + 1
            self._depth[id(helper)] = min(depth, self._depth.get(id(helper), depth))
            return helper, function
        return None

    def _module_path(self, script: BuildScript, module: tuple[int, tuple[str, ...]]) -> Path | None:
        """The project file of a module (`(level, parts)`): `pkg/mod.py` or `pkg/mod/__init__.py`,
        relative to the importing file for a relative import, else to the setup.py's folder."""
        level, parts = module
        if level:
            folder = Path(script.source.absolute_path or script.source.path).parent
            for _ in range(level - 1):
                folder = folder.parent
        else:
            folder = self.base
        target = folder.joinpath(*parts)
        # `from . import f` names the package itself: its `__init__.py`, never a sibling file
        # (and a folder above the root, `/` included, is no candidate).
        for candidate in ((target.with_name(target.name + ".py"),) if parts else ()) + (target / "__init__.py",):
            if self.root in candidate.parents and self.fs.is_file(candidate):
                return candidate
        return None

    def _script(self, path: Path, rocm: bool) -> BuildScript | None:
        key = (str(path), rocm)
        if key not in self._scripts:
            self._scripts[key] = None
            data = self.fs.read(path, MAX_MODULE_BYTES, keep=True)
            if data is not None:
                source = SourceFile(str(path), PYTHON, data, path, build_script=True)
                try:
                    script = BuildScript(source) if rocm else BuildScript(source, rocm_path.RocmPathModel())
                except (SyntaxError, ValueError, RecursionError):
                    script = None
                if script is not None:
                    self._rocm[id(script)] = rocm
                    script.follow_call = self._returned
                    self._scripts[key] = script
        return self._scripts[key]


def _imported(imports: list[ast.Import | ast.ImportFrom], head: str, rest: str
              ) -> Iterator[tuple[tuple[int, tuple[str, ...]], str]]:
    """The (module, function) a dotted callee `head.rest` may name through the file's imports
    (anywhere in the file: setup.py files import helpers inside their arms)."""
    for node in imports:
        if isinstance(node, ast.ImportFrom):
            parts = tuple(node.module.split(".")) if node.module else ()
            for alias in node.names:
                if (alias.asname or alias.name) != head:
                    continue
                if not rest:  # `from pkg.mod import f` ... `f()`
                    yield (node.level, parts), alias.name
                elif "." not in rest:  # `from pkg import mod` ... `mod.f()`
                    yield (node.level, (*parts, alias.name)), rest
        elif isinstance(node, ast.Import) and rest:
            for alias in node.names:
                if alias.asname == head and "." not in rest:  # `import pkg.mod as m` ... `m.f()`
                    yield (0, tuple(alias.name.split("."))), rest
                elif alias.asname is None and f"{head}.{rest}".rsplit(".", 1)[0] == alias.name:
                    module, _, member = f"{head}.{rest}".rpartition(".")  # `import pkg.mod` ... `pkg.mod.f()`
                    yield (0, tuple(module.split("."))), member


def _passed(call: ast.Call, function: ast.AST, parameter: str, positional: bool = True) -> ast.expr | None:
    """What `call` passes for `function`'s `parameter`: by keyword, else (`positional`) by
    place; None where it passes nothing for it."""
    given = next((k.value for k in call.keywords if k.arg == parameter), None)
    places = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if given is None and positional and parameter in places and places.index(parameter) < len(call.args):
        given = call.args[places.index(parameter)]
    return given


def _hipified_parameter(module: ast.Module, function: ast.AST) -> str | None:
    """The parameter a hipify wrapper maps to its result: a function that runs hipify (a call
    of a `hipify`, PyTorch's `hipify_python.hipify` or a project's) and loops over exactly one
    of its parameters (`for name in sources: ... hipified_path ...`). hipify writes each
    source's hipified copy beside it, so what the wrapper returns is those sources, renamed:
    for the question of which files a build compiles, the same files."""
    own = list(rocm_path.own_nodes(function))
    # `hipify` itself, under the name an import gives it (`import hipify as do_hipify`)
    names = {alias.asname or alias.name for node in (*own, *module_nodes(module))
             if isinstance(node, ast.ImportFrom) for alias in node.names if alias.name == "hipify"}
    names = (names | {"hipify"}) - {getattr(function, "name", "")}  # not a call of itself
    if not any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr == "hipify"
                                            or isinstance(n.func, ast.Name) and n.func.id in names) for n in own):
        return None
    parameters = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    returned = {_returned_name(n.value) for n in own if isinstance(n, ast.Return) and n.value is not None}
    # A loop over a parameter that fills what the function returns (`renamed.add(...)` then
    # `return list(renamed)`): the map from the sources given to the sources built.
    looped = {n.iter.id for n in own if isinstance(n, ast.For) and isinstance(n.iter, ast.Name)
              and n.iter.id in parameters and any(_fills(inner, returned) for inner in ast.walk(n))}
    return looped.pop() if len(looped) == 1 else None


def _returned_name(value: ast.expr) -> str | None:
    """`renamed` for `return renamed`, `return list(renamed)`, `return sorted(renamed)`."""
    if isinstance(value, ast.Call) and callee_name(value) in ("list", "sorted", "tuple") and len(value.args) == 1:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else None


def _fills(node: ast.AST, names: set) -> bool:
    """Does `node` add to one of `names` (`out.append(x)`, `out.add(x)`, `out += [x]`)?"""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "add", "extend"):
        return isinstance(node.func.value, ast.Name) and node.func.value.id in names
    return isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in names


def _unread(at: ast.AST) -> ast.expr:
    call = ast.Call(ast.Name(_UNREAD, ast.Load()), [], [])
    return ast.fix_missing_locations(ast.copy_location(call, at))
