"""K: launch configurations AMD GPUs refuse (hipErrorInvalidConfiguration, code 209).

`launches()` finds a file's kernel launches and `LaunchContext` reads what they depend on
(constant block sizes, the launched kernel's `__launch_bounds__`, device queries in
scope); the K rules judge them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod

from portlint import queries
from portlint.checks.cpp import IntegerConstants, arguments, callee_name, enclosing_function, strip_parens
from portlint.finding import Finding, Related, at_node
from portlint.fix import Edit, Fix
from portlint.project import LAUNCH_APIS, _declared_name, _kernel_argument
from portlint.rocm_path import Status
from portlint.source import CUDA, SourceFile

MAX_THREADS_PER_BLOCK = 1024  # every AMD GPU (and every NVIDIA GPU since Fermi)
# What some HIP toolchains assume for a kernel without `__launch_bounds__`.
DEFAULT_LAUNCH_BOUND = 256
# Every launch API takes (kernel, grid, block, ...).
BLOCK_ARGUMENT = 2

_TRIPLE_CHEVRON = "(call_expression (kernel_call_syntax) @config) @call"
_LAUNCH_API_CALLS = "(call_expression function: (identifier) @api arguments: (argument_list)) @call"
_KERNELS = "(function_definition declarator: (function_declarator) @declarator) @definition"
_BOUNDED_DECLARATIONS = "(declaration (launch_bounds) declarator: (function_declarator) @declarator)"
# `dim3 b(X, Y)` with names only parses as a function declaration (the most vexing parse).
_DIM3_VARIABLES = """
(declaration type: (type_identifier) @type
  declarator: [(init_declarator declarator: (identifier) @name)
               (function_declarator declarator: (identifier) @name)
               (identifier) @name] @declarator) @declaration
"""
_ASSIGNMENTS = """
[(assignment_expression left: (_) @target)
 (update_expression argument: (_) @target)
 (pointer_expression argument: (_) @target)]
"""
_QUERY_CALLS = "(call_expression function: (_) @callee) @call"
_FIELDS = "(field_expression field: (field_identifier) @field)"

# Calls that ask the device how large a block may be.
DEVICE_QUERIES = frozenset({
    "cudaGetDeviceProperties", "hipGetDeviceProperties",
    "cudaOccupancyMaxPotentialBlockSize", "hipOccupancyMaxPotentialBlockSize",
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem", "hipOccupancyMaxPotentialBlockSizeVariableSMem",
    "cudaFuncGetAttributes", "hipFuncGetAttributes", "getCurrentDeviceProperties", "getDeviceProperties",
})
ATTRIBUTE_QUERIES = frozenset({"cudaDeviceGetAttribute", "hipDeviceGetAttribute", "cuDeviceGetAttribute"})
PROPERTY_FIELDS = frozenset({"maxThreadsPerBlock", "maxThreadsDim"})


@dataclass(frozen=True)
class Launch:
    call: object  # the call_expression
    kernel: object | None  # the identifier naming the kernel
    block: object  # the block argument as written


@dataclass(frozen=True)
class BlockShape:
    """A block size as far as it is constant: (x, y, z), None for a dimension not known."""

    dims: tuple[int | None, int | None, int | None]
    sources: tuple = ()  # definitions the size was read from: the dim3 variable, then constants

    @property
    def threads(self) -> int | None:
        return None if None in self.dims else prod(self.dims)

    @property
    def threads_at_least(self) -> int:
        """Threads for certain: dimensions not known count as 1."""
        return prod(d for d in self.dims if d is not None)


def launches(source: SourceFile) -> list[Launch]:
    """Every `k<<<grid, block, ...>>>` and launch-API call, in source order."""
    found = []
    root = source.tree.root_node
    if b"<<<" in source.data:
        for match in queries.matches(CUDA, _TRIPLE_CHEVRON, root):
            call, config = match["call"][0], match["config"][0]
            args = [c for c in config.named_children if c.type != "comment"]
            if len(args) < 2:
                continue
            fn = call.child_by_field_name("function")
            found.append(Launch(call, _kernel_argument(fn) if fn is not None else None, args[1]))
    if any(api.encode() in source.data for api in LAUNCH_APIS):
        for match in queries.matches(CUDA, _LAUNCH_API_CALLS, root):
            call = match["call"][0]
            if source.node_text(match["api"][0]) not in LAUNCH_APIS:
                continue
            args = arguments(call)
            if len(args) > BLOCK_ARGUMENT:
                found.append(Launch(call, _kernel_argument(args[0]), args[BLOCK_ARGUMENT]))
    found.sort(key=lambda launch: launch.call.start_byte)
    return found


class LaunchContext:
    """What the K rules need to know about one file, computed once."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.constants = IntegerConstants(source)
        self._by_function: dict[tuple[str, int], object] = {}  # per-function facts, by (what, node id)

    def _once(self, what: str, function, compute):
        key = (what, function.id)
        if key not in self._by_function:
            self._by_function[key] = compute(function)
        return self._by_function[key]

    # ---- block sizes ----------------------------------------------------------------
    def block_shape(self, launch: Launch) -> BlockShape | None:
        """The launch's block size, or None when no dimension is a constant."""
        block = strip_parens(launch.block)
        used: list = []
        dims = self._dims(block, used)
        if dims is None and block.type == "identifier":
            declarator = self._dim3_variable(block)
            if declarator is None:
                return None
            used.append(declarator)  # first: the variable, then the constants it reads
            dims = self._dims(declarator, used)
        if dims is None or all(d is None for d in dims):
            return None
        return BlockShape(dims, tuple(used))

    def _dims(self, node, used: list) -> tuple | None:
        """(x, y, z) of an integer, `dim3(x, y)`, `dim3{x}`, `{x, y}`, or a dim3 declarator."""
        if node.type == "init_declarator":  # dim3 b(…), dim3 b{…}, dim3 b = dim3(…), dim3 b = 256
            value = node.child_by_field_name("value")
            if value is None:
                return None
            if value.type in ("argument_list", "initializer_list"):
                return self._dim3_arguments([a for a in value.named_children if a.type != "comment"], used)
            return self._dims(strip_parens(value), used)
        if node.type == "function_declarator":  # dim3 b(X, Y): each "parameter" is a bare name
            params = [p for p in node.child_by_field_name("parameters").named_children if p.type != "comment"]
            if any(p.type != "parameter_declaration" or len(p.named_children) != 1 for p in params):
                return None
            return self._dim3_arguments([p.named_children[0] for p in params], used)
        if node.type == "identifier" and node.parent is not None and node.parent.type == "declaration":
            return (1, 1, 1)  # `dim3 b;` is 1x1x1
        if node.type == "call_expression" and callee_name(node, self.source) == "dim3":
            return self._dim3_arguments(arguments(node), used)
        if node.type == "compound_literal_expression":
            kind = node.child_by_field_name("type")
            values = node.child_by_field_name("value")
            if values is None or (kind is not None and self.source.node_text(kind) not in ("", "dim3")):
                return None
            return self._dim3_arguments([a for a in values.named_children if a.type != "comment"], used)
        value = self.constants.value(node, used)
        return None if value is None else (value, 1, 1)

    def _dim3_arguments(self, args: list, used: list) -> tuple | None:
        if not 1 <= len(args) <= 3:
            return None if args else (1, 1, 1)
        dims = [self.constants.value(a, used) for a in args]
        return tuple(dims + [1] * (3 - len(dims)))

    def _dim3_variable(self, use):
        """The declarator of the `dim3` variable `use` names, if it is set once and never changed."""
        function = enclosing_function(use)
        if function is None:
            return None
        name = self.source.node_text(use)
        declarators = self._once("dim3", function, self._dim3_declarators).get(name, [])
        if len(declarators) != 1 or declarators[0].start_byte > use.start_byte:
            return None
        if name in self._once("changed", function, self._changed_names):
            return None
        return declarators[0]

    def _dim3_declarators(self, function) -> dict[str, list]:
        found: dict[str, list] = {}
        for match in queries.matches(CUDA, _DIM3_VARIABLES, function):
            if self.source.node_text(match["type"][0]) == "dim3":
                found.setdefault(self.source.node_text(match["name"][0]), []).append(match["declarator"][0])
        return found

    def _changed_names(self, function) -> set[str]:
        """Variables assigned (`b = …`, `b.x = …`, `++b.x`) or whose address is taken in `function`."""
        names = set()
        for target in queries.nodes(CUDA, _ASSIGNMENTS, function, "target"):
            while target.type in ("field_expression", "subscript_expression", "parenthesized_expression"):
                inner = target.child_by_field_name("argument") or (target.named_children or [None])[0]
                if inner is None:
                    break
                target = inner
            if target.type == "identifier":
                names.add(self.source.node_text(target))
        return names

    # ---- kernels --------------------------------------------------------------------
    @cached_property
    def _kernels(self) -> dict[str, list]:
        """Function definitions by name, except those dead on ROCm."""
        found: dict[str, list] = {}
        model = self.source.rocm_path
        for match in queries.matches(CUDA, _KERNELS, self.source.tree.root_node):
            definition = match["definition"][0]
            name = _declared_name(match["declarator"][0])
            if name is None or (model is not None and model.status(definition.start_byte) is Status.DEAD):
                continue
            found.setdefault(self.source.node_text(name), []).append(definition)
        return found

    @cached_property
    def _declared_with_bounds(self) -> set[str]:
        """Kernels whose forward declaration carries `__launch_bounds__`."""
        names = (_declared_name(d) for d in
                 queries.nodes(CUDA, _BOUNDED_DECLARATIONS, self.source.tree.root_node, "declarator"))
        return {self.source.node_text(n) for n in names if n is not None}

    def kernel_definition(self, launch: Launch):
        """The one `__global__` definition of the launched kernel in this file, else None."""
        if launch.kernel is None:
            return None
        definitions = self._kernels.get(self.source.node_text(launch.kernel), [])
        if len(definitions) != 1 or not any(c.type == "__global__" for c in definitions[0].children):
            return None
        return definitions[0]

    def launch_bound(self, kernel) -> tuple[bool, int | None]:
        """(known, bound): `(True, None)` without `__launch_bounds__`; `(False, None)` if undecidable."""
        declarator = kernel.child_by_field_name("declarator")
        name = _declared_name(declarator)
        if name is not None and self.source.node_text(name) in self._declared_with_bounds:
            return False, None  # bounds on a forward declaration (rare): not compared
        for child in kernel.children:
            if child.start_byte >= declarator.start_byte:
                break
            if child.type == "launch_bounds":
                args = [a for a in child.named_children if a.type != "comment"]
                bound = self.constants.value(args[0]) if args else None
                return bound is not None, bound
            if child.type in ("attribute_specifier", "attribute_declaration", "ERROR"):
                return False, None  # amdgpu_flat_work_group_size, a macro the grammar split
        return True, None

    def has_device_query(self, function) -> bool:
        """Does `function` ask the device for its block limits?"""
        return function is not None and self._once("query", function, self._asks_device)

    def _asks_device(self, function) -> bool:
        for match in queries.matches(CUDA, _QUERY_CALLS, function):
            call = match["call"][0]
            name = callee_name(call, self.source)
            if name in DEVICE_QUERIES:
                return True
            if name in ATTRIBUTE_QUERIES and "MaxThreadsPerBlock" in self.source.node_text(call):
                return True
        return any(self.source.node_text(f) in PROPERTY_FIELDS
                   for f in queries.nodes(CUDA, _FIELDS, function, "field"))


def _has_launches(source: SourceFile) -> bool:
    return b"<<<" in source.data or any(api.encode() in source.data for api in LAUNCH_APIS)


def _where_set(launch: Launch, shape: BlockShape, source: SourceFile) -> tuple[Related, ...]:
    """Point at the variable or constant a block given by name was read from."""
    if strip_parens(launch.block).type != "identifier" or not shape.sources:
        return ()
    node = shape.sources[0]
    if node.parent is not None and node.parent.type == "declaration":
        node = node.parent  # show `dim3 block(16, 16, 8);`, not `block(16, 16, 8)`
    written = " ".join(source.node_text(node).split())
    return (Related(source.location(node.start_byte, node.end_byte), f"The block size is set here: `{written}`"),)


def check_block_over_1024(source: SourceFile) -> list[Finding]:
    if not _has_launches(source):
        return []
    context = LaunchContext(source)
    findings = []
    for launch in launches(source):
        shape = context.block_shape(launch)
        if shape is None or shape.threads_at_least <= MAX_THREADS_PER_BLOCK:
            continue
        block = source.node_text(launch.block)
        count = f"{shape.threads}" if shape.threads is not None else f"at least {shape.threads_at_least}"
        findings.append(at_node(
            source, launch.block,
            f"Block `{block}` has {count} threads; AMD GPUs launch at most {MAX_THREADS_PER_BLOCK}.",
            Fix.advice(
                f"Shrink the block to at most {MAX_THREADS_PER_BLOCK} threads and check it against "
                "`prop.maxThreadsPerBlock` from `hipGetDeviceProperties(&prop, device)`"),
            related=_where_set(launch, shape, source),
        ))
    return findings


def check_hardcoded_block_size(source: SourceFile) -> list[Finding]:
    if not _has_launches(source):
        return []
    context = LaunchContext(source)
    model = source.rocm_path
    candidates = []  # (launch, shape, kernel definition, bound)
    largest: dict[int, int] = {}  # kernel -> the largest constant block it is launched with
    for launch in launches(source):
        shape = context.block_shape(launch)
        if shape is None or shape.threads is None or shape.threads > MAX_THREADS_PER_BLOCK:
            continue  # not constant, or K001's
        kernel = context.kernel_definition(launch)
        if kernel is None:
            continue  # no definition to compare with: nothing certain to say
        largest[kernel.id] = max(largest.get(kernel.id, 0), shape.threads)
        if model is not None and any(model.status(d.start_byte) is Status.PORT for d in shape.sources):
            continue  # a size chosen for ROCm is the port itself
        known, bound = context.launch_bound(kernel)
        if not known:
            continue
        if bound is not None and shape.threads <= bound:
            continue
        if bound is None and (shape.threads <= DEFAULT_LAUNCH_BOUND
                              or context.has_device_query(enclosing_function(launch.call))):
            continue
        candidates.append((launch, shape, kernel, bound))

    findings = []
    for launch, shape, kernel, bound in candidates:
        name = source.node_text(launch.kernel)
        threads = shape.threads
        related = _where_set(launch, shape, source)
        if bound is not None:
            message = f"Block of {threads} threads exceeds `__launch_bounds__({bound})` of `{name}`; the launch fails."
            fix = Fix.advice(f"Launch `{name}` with at most {bound} threads, or raise its "
                             f"`__launch_bounds__` to {threads}")
        else:
            message = (f"Block of {threads} threads, but `{name}` has no `__launch_bounds__`; "
                       f"HIP may allow only {DEFAULT_LAUNCH_BOUND}.")
            # One bound per kernel, large enough for every constant launch of it in the file.
            bound_text = f"__launch_bounds__({largest[kernel.id]})"
            global_token = next(c for c in kernel.children if c.type == "__global__")
            fix = Fix.unsafe(f"Add `{bound_text}` to `{name}`",
                             Edit.insert(global_token.end_byte, f" {bound_text}"))
        findings.append(at_node(source, launch.block, message, fix, related=related))
    return findings
