"""Reading a setup.py: which strings end up in which argument of `setup()` and the extensions.

A `BuildScript` follows what real PyTorch-extension builds do within one file:

- keyword arguments of `setup(...)`, `CUDAExtension(...)`, `CppExtension(...)`, `Extension(...)`,
  including `**kwargs` dicts;
- names bound by `x = ...`, `x += ...`, `x.append/insert/extend(...)`, `x["k"] = ...`,
  `x["k"] += / .append / .extend`, `x.update(...)`, scoped to the enclosing function;
- lists built with `+`, `*unpacking`, comprehensions, `list()`/`copy()`, `"...".split()`;
  dicts from literals, `dict(k=...)` and `**other`;
- calls of functions defined in the file (their `return` values, parameters bound from the
  call), and a function's parameters from the file's calls of it;
- calls of functions of other files, and the arguments other files pass to this file's
  functions, where who reads the script gives them (`follow_call`, `given_arguments`).

Code the ROCm-path model marks DEAD (CUDA-only branches) is never followed, so a flag that
reaches an argument only through a CUDA-only branch is not reported. A name reassigned in a
ROCm-only branch (`if torch.version.hip: flags = [...]`) hides its earlier values there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from portlint import rocm_path
from portlint.nesting import bounded
from portlint.rocm_path import Status
from portlint.source import SourceFile, module_nodes, module_parents

EXTENSION_CALLS = frozenset({"CUDAExtension", "CppExtension", "Extension"})
# `glob.glob(...)`, `glob(...)`, `Path(...).glob(...)`, `.rglob(...)`: lists of files.
GLOB_CALLS = frozenset({"glob", "iglob", "rglob"})
# A Python file that builds GPU extensions, whatever its name: it imports PyTorch's extension
# builder, or defines the compiler-argument methods of a builder class (`nvcc_args()`,
# `cxx_args()`, as DeepSpeed's `op_builder/*.py` do).
_BUILD_HELPER = re.compile(
    rb"^[ \t]*(?:from[ \t]+torch\.utils\.cpp_extension[ \t]+import|import[ \t]+torch\.utils\.cpp_extension"
    rb"|def[ \t]+(?:nvcc_args|cxx_args)[ \t]*\()", re.MULTILINE)


def is_build_helper(data: bytes) -> bool:
    """Is this Python file a build script by its content (see `_BUILD_HELPER`)?"""
    return (b"cpp_extension" in data or b"_args" in data) and _BUILD_HELPER.search(data) is not None
# Builtins and helpers that return (a copy of) their first argument's items.
_PASS_THROUGH = frozenset({"list", "tuple", "sorted", "set", "frozenset", "copy", "deepcopy"})


@dataclass(unsafe_hash=True)
class StringArg:
    """A string that ends up in an argument.

    `value` is the literal's text; computed parts of f-strings, `%` and `.format()` templates
    read `{}`. `value_start` is the byte offset of `value[0]` in the file when the node is a
    plain literal whose source text is exactly the value between quotes (edits need it).
    """

    value: str
    node: ast.expr
    start: int
    end: int
    value_start: int | None

    def tokens(self) -> list[tuple[str, int]]:
        """Whitespace-separated words of the value, with their index in `value`."""
        out, index = [], 0
        for word in self.value.split():
            index = self.value.index(word, index)
            out.append((word, index))
            index += len(word)
        return out

    def token_range(self, index: int, token: str) -> tuple[int, int]:
        """Byte range of the token at `index` (the whole node when it is not a plain literal)."""
        if self.value_start is None:
            return self.start, self.end
        start = self.value_start + len(self.value[:index].encode())
        return start, start + len(token.encode())


class _Kind(Enum):
    SET = "set"  # x = v
    EXTEND = "extend"  # x += v, x.extend(v)
    ITEM = "item"  # x.append(v), x.insert(i, v)


@dataclass(unsafe_hash=True)
class _Binding:
    name: str
    key: str | None  # for `x["key"] ...`; None for the name itself
    kind: _Kind
    value: ast.expr
    start: int
    status: Status
    function: ast.AST | None
    end: int = 0  # where the statement ends: a read inside it (`x = Path(x)`) sees the earlier value


@dataclass(unsafe_hash=True)
class _Entry:
    """One value given to a dict key; `item` when it is a single element (`d["k"].append(v)`)."""

    value: ast.expr
    scope: "_Scope"
    item: bool = False


@dataclass
class _Scope:
    """Where an expression is read: its function, and parameters bound by a followed call."""

    function: ast.AST | None
    params: dict[str, tuple[ast.expr, "_Scope"]] = field(default_factory=dict)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class BuildScript:
    def __init__(self, source: SourceFile, model: rocm_path.RocmPathModel | None = None):
        """`model`: the arms to read (default: the file's ROCm path; an empty model reads
        every arm, as any build may take it)."""
        self.source = source
        self.tree = source.python_ast
        self.model = model if model is not None else source.rocm_path or rocm_path.build(source)
        self._parents: dict[int, ast.AST] = module_parents(self.tree)
        self._functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self._bindings: dict[str, list[_Binding]] = {}
        self._calls: list[ast.Call] = []
        # `from torch.utils.cpp_extension import CUDAExtension as ExtensionBuilder` builds too.
        self._extension_names = set(EXTENSION_CALLS)
        for node in module_nodes(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Call):
                self._calls.append(node)
            elif isinstance(node, ast.ImportFrom):
                self._extension_names.update(
                    a.asname for a in node.names if a.asname and a.name in EXTENSION_CALLS)
            self._collect_bindings(node)
        # `extension = CUDAExtension` (the builder chosen per platform), then `extension(...)`.
        for name, bindings in self._bindings.items():
            if name not in self._extension_names and bindings and all(
                    b.kind is _Kind.SET and b.key is None and _names_only(b.value, self._extension_names)
                    for b in bindings):
                self._extension_names.add(name)
        self._active: set[tuple[str, int]] = set()  # nodes being followed, to stop at cycles
        # What a call of the object's own method returns, where the class hierarchy spans
        # files (`self.lib_sources()` of a builder class, `super().sources()`): set by who
        # reads such classes (`build_model.extension_builders`); it gives the strings the
        # method returns, or None for a method it cannot follow.
        self.method_strings: Callable[["BuildScript", ast.Call], list[str] | None] | None = None
        # The values a call of a function of another file returns (a build helper the script
        # imports from the project), set by who reads across files
        # (`build_model.python_helpers`): the leaves it gives, or None for a call it does not
        # follow (then read as today: a call of nothing the file defines gives no value).
        self.follow_call: Callable[["BuildScript", ast.Call], list[ast.expr] | None] | None = None
        # The arguments other files' calls give this file's functions: id(function) ->
        # parameter -> expressions (nodes placed in this file), read as the file's own calls'.
        self.given_arguments: dict[int, dict[str, list[ast.expr]]] = {}

    # ---- positions and the ROCm path --------------------------------------------------
    def range(self, node: ast.AST) -> tuple[int, int]:
        return self.source.python_range(node)

    def status(self, node: ast.AST) -> Status:
        return self.model.status(self.range(node)[0])

    def is_dead(self, node: ast.AST) -> bool:
        return self.status(node) is Status.DEAD

    def statement_of(self, node: ast.AST) -> ast.AST:
        """The statement `node` is part of."""
        current = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self._parents.get(id(current))
        return current if current is not None else node

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def functions(self, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The file's functions and methods called `name`."""
        return self._functions.get(name, [])

    def all_calls(self) -> list[ast.Call]:
        """Every call of the file, CUDA-only code included."""
        return self._calls

    def function_of(self, node: ast.AST) -> ast.AST | None:
        parent = self._parents.get(id(node))
        while parent is not None and not isinstance(parent, _FUNCTIONS):
            parent = self._parents.get(id(parent))
        return parent

    # ---- calls and their arguments ----------------------------------------------------
    def calls(self, names: frozenset[str] | set[str]) -> list[ast.Call]:
        """Calls of `names` (as `f(...)` or `mod.f(...)`) outside CUDA-only code, in file order."""
        return [c for c in self._calls if callee_name(c) in names and not self.is_dead(c)]

    def extension_calls(self) -> list[ast.Call]:
        return self.calls(self._extension_names)

    def argument(self, call: ast.Call, keyword: str) -> list[ast.expr]:
        """The expressions that may give keyword argument `keyword` (explicit or from `**kwargs`)."""
        for kw in call.keywords:
            if kw.arg == keyword:
                return [kw.value]
        scope = self._scope_at(call)
        found = []
        for kw in call.keywords:
            if kw.arg is None:
                found.extend(e.value for e in self._dict(kw.value, scope).get(keyword, []) if not e.item)
        return found

    def values(self, expr: ast.expr) -> list[ast.expr]:
        """The leaf elements of a list-valued expression, in order, followed through names and
        calls (a string counts as one leaf)."""
        return [leaf for leaf, _ in self._values(expr, self._scope_at(expr))]

    def assigned(self, name: ast.Name) -> list[ast.expr]:
        """The values that `name = ...` assignments may give `name` where it is read."""
        return [b.value for b, _ in self._lookup(name.id, name, self._scope_at(name))
                if b.key is None and b.kind is _Kind.SET]

    def string_arg(self, node: ast.expr) -> StringArg:
        """A string-valued expression (literal, f-string, `+`, `%`, `.format`) as a StringArg."""
        return self._string_arg(node)

    def strings(self, expr: ast.expr | list[ast.expr] | None) -> list[StringArg]:
        """The strings an argument holds: list elements, followed through names and calls."""
        exprs = expr if isinstance(expr, list) else [] if expr is None else [expr]
        out: dict[int, StringArg] = {}
        for e in exprs:
            for leaf, scope in self._values(e, self._scope_at(e)):
                for arg in self._as_strings(leaf, scope):
                    out.setdefault(id(arg.node), arg)
        return sorted(out.values(), key=lambda a: a.start)

    def dict_strings(self, expr: ast.expr | list[ast.expr] | None) -> dict[str, list[StringArg]]:
        """For a dict-valued argument: key -> the strings its value holds."""
        exprs = expr if isinstance(expr, list) else [] if expr is None else [expr]
        out: dict[str, dict[int, StringArg]] = {}
        for e in exprs:
            for key, entries in self._dict(e, self._scope_at(e)).items():
                bucket = out.setdefault(key, {})
                for entry in entries:
                    for leaf, leaf_scope in self._entry_values(entry):
                        for arg in self._as_strings(leaf, leaf_scope):
                            bucket.setdefault(id(arg.node), arg)
        return {k: sorted(v.values(), key=lambda a: a.start) for k, v in out.items()}

    def compile_args(self, call: ast.Call) -> dict[str, list[StringArg]]:
        """`extra_compile_args` by compiler: `cxx`, `nvcc`, or `all` for the plain-list form."""
        exprs = self.argument(call, "extra_compile_args")
        by_compiler = self.dict_strings(exprs)
        plain = [e for e in exprs if not self._dict(e, self._scope_at(e))]
        if plain:
            by_compiler["all"] = self.strings(plain)
        return by_compiler

    def string_constants(self) -> list[StringArg]:
        """Every string literal and f-string of the file outside CUDA-only code, in order."""
        inside_fstring = {id(v) for n in module_nodes(self.tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        out = []
        for node in module_nodes(self.tree):
            if id(node) in inside_fstring:
                continue
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr):
                if not self.is_dead(node):
                    out.append(self._string_arg(node))
        return sorted(out, key=lambda a: a.start)

    def names(self) -> list[ast.AST]:
        """Every read of a name (`CUDA_HOME`) and attribute (`torch.version.hip`), in order."""
        nodes = [n for n in module_nodes(self.tree)
                 if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or isinstance(n, ast.Attribute)]
        return sorted(nodes, key=lambda n: self.range(n)[0])

    # ---- collecting bindings ------------------------------------------------------------
    def _bind(self, name: str, key: str | None, kind: _Kind, value: ast.expr, stmt: ast.AST) -> None:
        start, end = self.range(stmt)
        self._bindings.setdefault(name, []).append(_Binding(
            name, key, kind, value, start, self.status(stmt), self.function_of(stmt), end))

    def _collect_bindings(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind_target(target, node.value, node, _Kind.SET)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind_target(node.target, node.value, node, _Kind.SET)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            self._bind_target(node.target, node.value, node, _Kind.EXTEND)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self._bind_method_call(node.value, node)

    @bounded(None)
    def _bind_target(self, target: ast.expr, value: ast.expr, stmt: ast.AST, kind: _Kind) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, None, kind, value, stmt)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = _constant_str(target.slice)
            if key is not None:
                self._bind(target.value.id, key, kind, value, stmt)
        elif (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
              and len(target.elts) == len(value.elts)):
            for t, v in zip(target.elts, value.elts):
                self._bind_target(t, v, stmt, kind)

    def _bind_method_call(self, call: ast.Call, stmt: ast.AST) -> None:
        """`x.append(v)`, `x.extend(v)`, `x.insert(i, v)`, `x.update(...)`, `x["k"].append(v)`."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        owner, key = func.value, None
        if isinstance(owner, ast.Subscript) and isinstance(owner.value, ast.Name):
            key = _constant_str(owner.slice)
            if key is None:
                return
            owner = owner.value
        if not isinstance(owner, ast.Name):
            return
        method, args = func.attr, call.args
        if method == "append" and len(args) == 1:
            self._bind(owner.id, key, _Kind.ITEM, args[0], stmt)
        elif method == "insert" and len(args) == 2:
            self._bind(owner.id, key, _Kind.ITEM, args[1], stmt)
        elif method == "add" and len(args) == 1 and key is None:  # a set's element
            self._bind(owner.id, key, _Kind.ITEM, args[0], stmt)
        elif method == "extend" and len(args) == 1:
            self._bind(owner.id, key, _Kind.EXTEND, args[0], stmt)
        elif method == "update" and key is None:
            if len(args) == 1 and isinstance(args[0], ast.Dict):
                for k, v in zip(args[0].keys, args[0].values):
                    if k is not None and _constant_str(k) is not None:
                        self._bind(owner.id, _constant_str(k), _Kind.SET, v, stmt)
            for kw in call.keywords:
                if kw.arg is not None:
                    self._bind(owner.id, kw.arg, _Kind.SET, kw.value, stmt)

    # ---- following values ---------------------------------------------------------------
    def _scope_at(self, node: ast.AST) -> _Scope:
        return _Scope(self.function_of(node))

    def _lookup(self, name: str, at: ast.AST, scope: _Scope) -> list[tuple[_Binding, _Scope]]:
        """The bindings of `name` that may reach the read `at`, each with the scope to read it in."""
        bindings = [b for b in self._bindings.get(name, []) if b.status is not Status.DEAD]
        function = scope.function
        if function is not None and self._is_local(name, function):
            local = [b for b in bindings if b.function is function]
            parameter = _is_parameter(function, name)
            out = [(b, scope) for b in self._reaching(local, at, fallback=not parameter)]
            position = self.range(at)[0]
            if parameter and not any(b.kind is _Kind.SET and b.key is None and _before(b, position) for b in local):
                if name in scope.params:
                    value, value_scope = scope.params[name]
                    out.append((_Binding(name, None, _Kind.SET, value, 0, Status.LIVE, None), value_scope))
                else:
                    out.extend(self._parameter_values(function, name))
            return out
        shared = [b for b in bindings if b.function is None or not self._is_local(name, b.function)]
        return [(b, scope if b.function is function else _Scope(b.function))
                for b in self._reaching(shared, at, fallback=True)]

    def _reaching(self, bindings: list[_Binding], at: ast.AST, fallback: bool) -> list[_Binding]:
        """Drop assignments after the read (unless none precede it and `fallback`), and
        everything that a later assignment in a ROCm-only branch replaces."""
        position = self.range(at)[0]
        sets = [b for b in bindings if b.kind is _Kind.SET and b.key is None]
        before = [b for b in sets if _before(b, position)] or (sets if fallback else [])
        port_sets = [b.start for b in before if b.status is Status.PORT]
        cutoff = max(port_sets) if port_sets else -1
        others = [b for b in bindings if not (b.kind is _Kind.SET and b.key is None)]
        kept = [b for b in before + others if b.start >= cutoff]
        key_cutoffs: dict[str, int] = {}
        for b in kept:
            if b.key is not None and b.kind is _Kind.SET and b.status is Status.PORT:
                key_cutoffs[b.key] = max(key_cutoffs.get(b.key, -1), b.start)
        return [b for b in kept if b.key is None or b.start >= key_cutoffs.get(b.key, -1)]

    def _is_local(self, name: str, function: ast.AST) -> bool:
        return _is_parameter(function, name) or any(
            b.function is function and b.kind is _Kind.SET and b.key is None for b in self._bindings.get(name, []))

    def _parameter_values(self, function: ast.AST, name: str) -> list[tuple[_Binding, _Scope]]:
        """A parameter's values: its default and the arguments of the file's calls."""
        out = []
        default = _parameter_default(function, name)
        if default is not None:
            out.append((_Binding(name, None, _Kind.SET, default, 0, Status.LIVE, None), _Scope(self.function_of(function))))
        index = _parameter_index(function, name)
        for call in self._calls:
            if getattr(function, "name", None) is None or callee_name(call) != function.name or self.is_dead(call):
                continue
            for value in _call_argument(call, name, index):
                out.append((_Binding(name, None, _Kind.SET, value, 0, Status.LIVE, None), self._scope_at(call)))
        for value in self.given_arguments.get(id(function), {}).get(name, []):
            out.append((_Binding(name, None, _Kind.SET, value, 0, Status.LIVE, None), _Scope(None)))
        return out

    @bounded(list)
    def _values(self, expr: ast.expr, scope: _Scope) -> list[tuple[ast.expr, _Scope]]:
        """Leaf elements of a list-valued expression."""
        if self.is_dead(expr):
            return []
        guard = ("values", id(expr))
        if guard in self._active:
            return []
        self._active.add(guard)
        try:
            return self._values_of(expr, scope)
        finally:
            self._active.discard(guard)

    def _values_of(self, expr: ast.expr, scope: _Scope) -> list[tuple[ast.expr, _Scope]]:
        if _is_stringy(expr):
            return [(expr, scope)]
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            out = []
            for elt in expr.elts:
                if isinstance(elt, ast.Starred):
                    out.extend(self._values(elt.value, scope))
                elif not self.is_dead(elt):
                    out.append((elt, scope))
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.BitOr)):
            return self._values(expr.left, scope) + self._values(expr.right, scope)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub):
            return self._values(expr.left, scope)  # `set(a) - set(b)`: at most `a`
        if isinstance(expr, ast.IfExp):
            return self._values(expr.body, scope) + self._values(expr.orelse, scope)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            gen = expr.generators[0]
            if len(expr.generators) == 1 and isinstance(gen.target, ast.Name) and _copied(expr.elt, gen.target.id):
                return self._values(gen.iter, scope)  # `[str(x) for x in args if x]`: a filtered copy
            return [(expr.elt, scope)]
        if isinstance(expr, ast.Name):
            out = []
            for binding, binding_scope in self._lookup(expr.id, expr, scope):
                if binding.key is not None:
                    continue
                if binding.kind is _Kind.ITEM:
                    out.append((binding.value, binding_scope))
                else:
                    out.extend(self._values(binding.value, binding_scope))
            return out
        if isinstance(expr, ast.Subscript):
            key = _constant_str(expr.slice)
            if key is None:
                return []
            return [v for entry in self._dict(expr.value, scope).get(key, []) for v in self._entry_values(entry)]
        if isinstance(expr, ast.Call):
            return self._call_values(expr, scope, self._values)
        return []

    def _call_values(self, call: ast.Call, scope: _Scope, follow):
        """What a call returns, for calls whose result is known: local functions, copies."""
        name = callee_name(call)
        func = call.func
        if name in GLOB_CALLS:
            return [(call, scope)]  # file names found at build time: a leaf for who reads paths
        if isinstance(func, ast.Attribute) and func.attr in ("copy", "split") and not call.args:
            return follow(func.value, scope)  # `"-O3 -g".split()` is read word by word anyway
        if name in _PASS_THROUGH and len(call.args) == 1:
            return follow(call.args[0], scope)
        out = []
        on_self = isinstance(func, ast.Attribute) and _is_self(func.value)
        if on_self and self.method_strings is not None:
            strings = self.method_strings(self, call)
            if strings is None:
                return [(call, scope)]  # not followed: a leaf no reader makes a value of
            return [(ast.copy_location(ast.Constant(text), call), scope) for text in strings]
        if self.follow_call is not None and not on_self and (
                isinstance(func, ast.Attribute) or name not in self._functions):
            followed = self.follow_call(self, call)
            if followed is not None:
                return [(leaf, scope) for leaf in followed]
        for function in self._functions.get(name or "", []):
            is_method = isinstance(self._parents.get(id(function)), ast.ClassDef)
            if isinstance(func, ast.Attribute) and not (on_self and is_method):
                continue  # `mod.f()`, `obj.f()`: not this file's function
            if on_self != is_method:
                continue
            # `self.libraries_args()`: the file's methods of that name (a builder class and
            # its subclasses), `self` not among the bound parameters.
            bound = _Scope(function, _bind_parameters(function, call, scope, skip_self=is_method))
            for node in ast.walk(function):
                if isinstance(node, ast.Return) and node.value is not None and self.function_of(node) is function:
                    if not self.is_dead(node):
                        out.extend(follow(node.value, bound))
        return out

    def _entry_values(self, entry: _Entry) -> list[tuple[ast.expr, _Scope]]:
        return [(entry.value, entry.scope)] if entry.item else self._values(entry.value, entry.scope)

    @bounded(dict)
    def _dict(self, expr: ast.expr, scope: _Scope) -> dict[str, list[_Entry]]:
        """key -> the values given to it, for a dict-valued expression."""
        if self.is_dead(expr):
            return {}
        guard = ("dict", id(expr))
        if guard in self._active:
            return {}
        self._active.add(guard)
        try:
            return self._dict_of(expr, scope)
        finally:
            self._active.discard(guard)

    def _dict_of(self, expr: ast.expr, scope: _Scope) -> dict[str, list[_Entry]]:
        out: dict[str, list[_Entry]] = {}

        def merge(other):
            for k, v in other.items():
                out.setdefault(k, []).extend(v)

        if isinstance(expr, ast.Dict):
            for k, v in zip(expr.keys, expr.values):
                if k is None:
                    merge(self._dict(v, scope))
                elif _constant_str(k) is not None and not self.is_dead(v):
                    out.setdefault(_constant_str(k), []).append(_Entry(v, scope))
        elif isinstance(expr, ast.Call) and callee_name(expr) == "dict":
            for arg in expr.args[:1]:
                merge(self._dict(arg, scope))
            for kw in expr.keywords:
                if kw.arg is None:
                    merge(self._dict(kw.value, scope))
                else:
                    out.setdefault(kw.arg, []).append(_Entry(kw.value, scope))
        elif isinstance(expr, ast.IfExp):
            merge(self._dict(expr.body, scope))
            merge(self._dict(expr.orelse, scope))
        elif isinstance(expr, ast.Name):
            for binding, binding_scope in self._lookup(expr.id, expr, scope):
                if binding.key is None:
                    if binding.kind is _Kind.SET:
                        merge(self._dict(binding.value, binding_scope))
                else:
                    item = binding.kind is _Kind.ITEM
                    out.setdefault(binding.key, []).append(_Entry(binding.value, binding_scope, item))
        elif isinstance(expr, ast.Call):
            for value, s in self._call_values(expr, scope, lambda e, sc: [(e, sc)]):
                merge(self._dict(value, s))
        return out

    @bounded(list)
    def _as_strings(self, leaf: ast.expr, scope: _Scope) -> list[StringArg]:
        """A list element as strings: a literal, or a name bound to one."""
        if self.is_dead(leaf):
            return []
        if _is_stringy(leaf):
            return [self._string_arg(leaf)]
        if isinstance(leaf, ast.IfExp):
            return self._as_strings(leaf.body, scope) + self._as_strings(leaf.orelse, scope)
        if isinstance(leaf, ast.Name):
            guard = ("strings", id(leaf))
            if guard in self._active:
                return []
            self._active.add(guard)
            try:
                return [arg for binding, s in self._lookup(leaf.id, leaf, scope)
                        if binding.key is None and binding.kind is _Kind.SET
                        for arg in self._as_strings(binding.value, s)]
            finally:
                self._active.discard(guard)
        return []

    def _string_arg(self, node: ast.expr) -> StringArg:
        start, end = self.range(node)
        value = _template(node)
        value_start = None
        if isinstance(node, ast.Constant):
            text = self.source.data[start:end].decode("utf-8", errors="replace")
            if (len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0]
                    and not text.startswith(text[0] * 3) and text[1:-1] == value):
                value_start = start + 1
        return StringArg(value, node, start, end, value_start)


# ---- small ast helpers --------------------------------------------------------------------
def _before(binding: _Binding, position: int) -> bool:
    """Does the binding's statement run before the read at `position`? A read inside the
    statement (`x = Path(x)`, `x = x + [...]`) is of the value before it."""
    return binding.start < position and not binding.start <= position < binding.end


def _names_only(value: ast.expr, names: set[str]) -> bool:
    """`CUDAExtension`, `cpp_extension.CUDAExtension`, `A if cond else B`: one of `names`."""
    if isinstance(value, ast.IfExp):
        return _names_only(value.body, names) and _names_only(value.orelse, names)
    if isinstance(value, ast.Name):
        return value.id in names
    return isinstance(value, ast.Attribute) and value.attr in names


# One-argument calls that give the same path in another type: a list of their results is a
# copy of the list they read (`[str(p) for p in sources]`).
_PATH_CONVERSIONS = frozenset({"str", "os.fspath", "Path", "pathlib.Path", "os.path.abspath", "os.path.normpath"})


def _copied(element: ast.expr, var: str) -> bool:
    """Is a comprehension's `element` its variable `var`, as it is or converted (`str(var)`)?"""
    if isinstance(element, ast.Call) and len(element.args) == 1 and not element.keywords \
            and dotted_name(element.func) in _PATH_CONVERSIONS:
        element = element.args[0]
    return isinstance(element, ast.Name) and element.id == var


def callee_name(call: ast.Call) -> str | None:
    """`f` for `f(...)` and `mod.sub.f(...)`."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dotted_name(node: ast.AST) -> str | None:
    """`torch.version.hip` for that attribute chain; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def string_template(expr: ast.AST) -> str | None:
    """The text of a string built from literals, `{}` for computed parts; None for non-strings."""
    return _template(expr) if _is_stringy(expr) else None


def _constant_str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


@bounded(False)
def _is_stringy(expr: ast.AST) -> bool:
    """A string built from literals: `'x'`, f-strings, `'a' + b`, `'%s' % x`, `'{}'.format(x)`."""
    if isinstance(expr, (ast.Constant, ast.JoinedStr)):
        return isinstance(expr, ast.JoinedStr) or isinstance(expr.value, str)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _is_stringy(expr.left) or _is_stringy(expr.right)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        return _is_stringy(expr.left)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
        return _is_stringy(expr.func.value)
    return False


@bounded("{}")
def _template(expr: ast.AST) -> str:
    """The text of a stringy expression, with `{}` for parts computed at run time."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        return "".join(_template(v) if isinstance(v, ast.Constant) else "{}" for v in expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _template(expr.left) + _template(expr.right)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        return _template(expr.left)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
        return _template(expr.func.value)
    return "{}"


def _positional_parameters(function: ast.AST) -> list[ast.arg]:
    return [*function.args.posonlyargs, *function.args.args]


def _is_parameter(function: ast.AST, name: str) -> bool:
    args = function.args
    every = [*_positional_parameters(function), *args.kwonlyargs, args.vararg, args.kwarg]
    return any(a is not None and a.arg == name for a in every)


def _parameter_index(function: ast.AST, name: str) -> int | None:
    for i, a in enumerate(_positional_parameters(function)):
        if a.arg == name:
            return i
    return None


def _parameter_default(function: ast.AST, name: str) -> ast.expr | None:
    positional = _positional_parameters(function)
    defaults = function.args.defaults
    for a, d in zip(positional[len(positional) - len(defaults):], defaults):
        if a.arg == name:
            return d
    for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults):
        if a.arg == name:
            return d
    return None


def _call_argument(call: ast.Call, name: str, index: int | None) -> list[ast.expr]:
    for kw in call.keywords:
        if kw.arg == name:
            return [kw.value]
    if index is not None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return [call.args[index]]
    return []


def _is_self(node: ast.expr) -> bool:
    """`self`, `cls` or `super()`: the receiver of a call of the class's own method."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _bind_parameters(function: ast.AST, call: ast.Call, scope: _Scope,
                     skip_self: bool = False) -> dict[str, tuple[ast.expr, _Scope]]:
    """Parameters of `function` bound to the arguments of `call` (or their defaults)."""
    bound = {}
    outer = _Scope(None)
    positional = _positional_parameters(function)
    for i, a in enumerate(positional[1:] if skip_self else positional):
        values = _call_argument(call, a.arg, i)
        if values:
            bound[a.arg] = (values[0], scope)
        elif _parameter_default(function, a.arg) is not None:
            bound[a.arg] = (_parameter_default(function, a.arg), outer)
    for a in function.args.kwonlyargs:
        values = _call_argument(call, a.arg, None)
        if values:
            bound[a.arg] = (values[0], scope)
        elif _parameter_default(function, a.arg) is not None:
            bound[a.arg] = (_parameter_default(function, a.arg), outer)
    return bound
