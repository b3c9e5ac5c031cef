"""CUDA kernels written as Python strings: `cupy.RawKernel`, `cupy.RawModule`,
`pycuda.compiler.SourceModule`, `torch.utils.cpp_extension.load_inline`.

Their source text is C++ like any `.cu` file, so the engine scans each string with the CUDA
rules (`EmbeddedKernel.source`) and maps the findings back into the Python file
(`remap`). A string whose literal spells its value byte for byte (no escapes, no implicit
concatenation: the usual triple-quoted or raw kernel) maps exactly, and its fixes keep their
edits; any other string maps each finding to the literal's first line and its fixes become
advice.

R002 has a Python side here too: a kernel looked up by its plain name (`RawKernel(code,
"k")`, `module.get_function("k")`) from a source that never declares it `extern "C"`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from portlint.build_model.macros import RUNTIME_COMPILED, TORCH_EXTENSION_SOURCE
from portlint.finding import Finding, Related, Severity, finding
from portlint.fix import Edit, Fix
from portlint.rocm_path import Status
from portlint.source import CUDA, SourceFile, module_nodes, module_parents
from portlint.triggers import needs

# Loader -> where its source text is: (positional index, keyword names).
_LOADERS = {
    "RawKernel": (0, ("code",)),
    "RawModule": (0, ("code",)),
    "SourceModule": (0, ("source",)),
    "load_inline": (2, ("cuda_sources",)),  # load_inline(name, cpp_sources, cuda_sources)
}
TRIGGERS = (b"RawKernel", b"RawModule", b"SourceModule", b"load_inline")
# Loaders that hand the string to a run-time compiler (NVRTC; hiprtc or hipcc on ROCm) with
# only the options the call gives: no extension builder adds its defines. `load_inline`
# builds with PyTorch's extension builder, whose defines the build model does not give here.
_RUNTIME_COMPILED = frozenset({"RawKernel", "RawModule", "SourceModule"})


@dataclass(unsafe_hash=True)
class EmbeddedKernel:
    text: str
    literal_start: int  # byte offset of the literal (its first quote or prefix) in the file
    value_start: int | None  # byte offset of text[0] when the literal spells it byte for byte
    loader: str  # `RawKernel`, `SourceModule`, ...
    call: ast.Call

    def source(self, host: SourceFile) -> SourceFile:
        """The string as a CUDA file, under the Python file's path; a run-time compiler's
        string knows its build (no `-D__HIP_NO_HALF_OPERATORS__` there)."""
        source = SourceFile(host.path, CUDA, self.text.encode("utf-8"), host.absolute_path)
        if self.loader in _RUNTIME_COMPILED:
            source.build = RUNTIME_COMPILED  # what it passes is known: nothing; device code only
        else:
            source.build = TORCH_EXTENSION_SOURCE  # `load_inline`: PyTorch's builder, hipify included
        return source


def has_kernels(data: bytes) -> bool:
    return any(t in data for t in TRIGGERS)


def kernels(source: SourceFile) -> list[EmbeddedKernel]:
    """Every kernel source string the file hands a loader, in file order."""
    tree = source.python_ast
    constants = _module_strings(tree)
    parents = module_parents(tree)
    found = []
    for node in module_nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        loader = _callee(node)
        if loader not in _LOADERS:
            continue
        if source.rocm_path is not None and source.rocm_path.status(source.python_range(node)[0]) is Status.DEAD:
            continue  # a call the ROCm build never makes (a test skipped there, a CUDA-only branch)
        if _expected_to_fail(node, parents):
            continue
        for literal in _source_literals(node, loader, {**constants, **_scope_strings(node, parents)}):
            found.append(_embedded(source, literal, loader, node))
    return sorted(found, key=lambda k: k.literal_start)


def _scope_strings(call: ast.Call, parents: dict[int, ast.AST]) -> dict[str, ast.Constant]:
    """The strings assigned once in the class or function bodies around `call`, the innermost
    first (`_kernel = r'''...'''` beside `_mod = RawModule(code=_kernel)` in a class body)."""
    out: dict[str, ast.Constant] = {}
    in_function = False  # a class body's names are not seen from its methods
    node = parents.get(id(call))
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                (isinstance(node, ast.ClassDef) and not in_function):
            for name, value in _assigned_strings(node.body).items():
                out.setdefault(name, value)
        in_function = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        node = parents.get(id(node))
    return out


# Context managers of a test that expects its block to raise.
_EXPECTS_FAILURE = frozenset({"raises", "assertRaises", "assertRaisesRegex"})


def _expected_to_fail(call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """Is the kernel of a loader `call` compiled only where a test expects that to fail: the
    call inside `with pytest.raises(...)`, or the kernel object it makes (`ker = RawKernel(...)`)
    used only inside such blocks of its function (a loader compiles when first launched)? A
    negative test (no `-dc` for a kernel that launches kernels) fails on every backend on
    purpose: the hazard is the point of it."""
    if _in_failure_block(call, parents):
        return True
    assign = parents.get(id(call))
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
        return False
    function = assign
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = parents.get(id(function))
    if function is None:
        return False
    name = assign.targets[0].id
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_in_failure_block(use, parents) for use in uses)


def _in_failure_block(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    child, current = node, parents.get(id(node))
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(current, (ast.With, ast.AsyncWith)) and child in current.body and any(
                isinstance(item.context_expr, ast.Call) and _callee(item.context_expr) in _EXPECTS_FAILURE
                for item in current.items):
            return True
        child, current = current, parents.get(id(current))
    return False


def distinct(found: list[EmbeddedKernel]) -> list[EmbeddedKernel]:
    """One kernel per string literal: a constant handed to two loaders is scanned once."""
    return list({k.literal_start: k for k in reversed(found)}.values())[::-1]


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _module_strings(tree: ast.Module) -> dict[str, ast.Constant]:
    """`KERNEL = r'''...'''` at module level (assigned once): the usual home of a kernel."""
    return _assigned_strings(tree.body)


def _assigned_strings(body: list[ast.stmt]) -> dict[str, ast.Constant]:
    """The names `body`'s own statements assign once, to a string literal."""
    seen: dict[str, list] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            seen.setdefault(stmt.targets[0].id, []).append(stmt.value)
    return {name: values[0] for name, values in seen.items()
            if len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str)}


def _source_literals(call: ast.Call, loader: str, constants: dict[str, ast.Constant]) -> list[ast.Constant]:
    index, keywords = _LOADERS[loader]
    values = [kw.value for kw in call.keywords if kw.arg in keywords]
    if not values and index is not None and len(call.args) > index:
        values = [call.args[index]]
    out = []
    for value in values:
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        for item in items:
            if isinstance(item, ast.Name):
                item = constants.get(item.id)
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                out.append(item)
    return out


_PREFIX = re.compile(r"[rRuU]{0,2}")


def _embedded(source: SourceFile, literal: ast.Constant, loader: str, call: ast.Call) -> EmbeddedKernel:
    start, end = source.python_range(literal)
    written = source.data[start:end].decode("utf-8", errors="replace")
    prefix = _PREFIX.match(written).group()
    body = written[len(prefix):]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    value_start = None
    if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
        inner = body[len(quote):len(body) - len(quote)]
        if inner == literal.value and ("r" in prefix.lower() or "\\" not in inner):
            value_start = start + len(prefix) + len(quote)
    return EmbeddedKernel(literal.value, start, value_start, loader, call)


def remap(host: SourceFile, kernel: EmbeddedKernel, embedded: SourceFile, f: Finding) -> Finding:
    """`f`, found in the kernel's text, as a finding of the Python file."""
    def place(start: int, end: int) -> tuple[int, int]:
        if kernel.value_start is None:
            line_end = host.data.find(b"\n", kernel.literal_start)
            return kernel.literal_start, line_end if line_end != -1 else len(host.data)
        return kernel.value_start + start, kernel.value_start + end

    loc = f.location
    start, end = place(loc.start_byte, loc.end_byte)
    fix = f.fix
    if fix.edits:
        if kernel.value_start is None:
            fix = Fix.advice(fix.title)
        else:
            fix = replace(fix, edits=tuple(Edit(e.start + kernel.value_start, e.end + kernel.value_start, e.content)
                                           for e in fix.edits))
    related = tuple(Related(host.location(*place(r.location.start_byte, r.location.end_byte)), r.message)
                    for r in f.related if r.location is not None and r.location.path == embedded.path)
    moved = finding(host, start, end, f.message, fix, severity=f.severity, related=related)
    return replace(moved, code=f.code)


# ---- R002 on the Python side ----------------------------------------------------------------
_EXTERN_C = re.compile(r'extern\s*"C"')
_GLOBAL = re.compile(r"__global__\s+(?:(?:static|inline|__launch_bounds__\s*\([^)]*\))\s+)*void\s+(\w+)\s*\(")


@needs(*TRIGGERS)
def check_kernel_lookup_by_name(source: SourceFile) -> list[Finding]:
    """A kernel a Python loader looks up by its plain name while the source gives it C++
    linkage: the lookup finds only the mangled symbol."""
    if not has_kernels(source.data):
        return []
    findings = []
    by_call = {id(k.call): k for k in kernels(source)}
    lookups = _lookups(source, by_call)
    for kernel, name_node, name in lookups:
        text = kernel.text
        if _EXTERN_C.search(text) or name not in set(_GLOBAL.findall(text)):
            continue
        if kernel.loader == "RawModule" and any(kw.arg == "name_expressions" for kw in kernel.call.keywords):
            continue  # cupy compiles those names and maps them to the mangled symbols
        start, end = source.python_range(name_node)
        if kernel.loader == "SourceModule":
            if any(kw.arg == "no_extern_c" and isinstance(kw.value, ast.Constant) and kw.value.value
                   for kw in kernel.call.keywords):
                message = f"`{name}` is looked up by name, but `no_extern_c=True` leaves it C++-mangled."
            else:
                # pycuda wraps the source in `extern "C" { }` itself; a HIP loader that stands in
                # for it (hiprtc, a pycuda replacement on ROCm) compiles the text as written.
                findings.append(finding(
                    source, start, end,
                    f"`{name}` relies on `SourceModule`'s implicit `extern \"C\"` wrapper; a ROCm loader "
                    "compiling this source as written finds only the mangled symbol.",
                    Fix.advice(f'Declare the kernel `extern "C" __global__ void {name}(...)` in the source'),
                    severity=Severity.NOTE))
                continue
        else:
            message = f"`{name}` is looked up by name, but the source gives it C++ linkage (a mangled symbol)."
        findings.append(finding(
            source, start, end, message,
            Fix.advice(f'Declare the kernel `extern "C" __global__ void {name}(...)`'
                       + (" or list it in `name_expressions`" if kernel.loader == "RawModule" else ""))))
    return findings


def _lookups(source: SourceFile, by_call: dict[int, EmbeddedKernel]):
    """(kernel, name node, name) for `RawKernel(code, "k")` and `<module>.get_function("k")`,
    the module a loader call or a name bound to one."""
    out = []
    bound: dict[str, EmbeddedKernel] = {}
    tree = source.python_ast
    for node in module_nodes(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and id(node.value) in by_call:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = by_call[id(node.value)]
    for node in module_nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        kernel = by_call.get(id(node))
        if kernel is not None and kernel.loader == "RawKernel":
            names = [kw.value for kw in node.keywords if kw.arg == "name"] or node.args[1:2]
            out.extend((kernel, n, n.value) for n in names if isinstance(n, ast.Constant) and isinstance(n.value, str))
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get_function" and node.args:
            receiver = func.value
            module = by_call.get(id(receiver)) if isinstance(receiver, ast.Call) else (
                bound.get(receiver.id) if isinstance(receiver, ast.Name) else None)
            arg = node.args[0]
            if module is not None and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append((module, arg, arg.value))
    return out
