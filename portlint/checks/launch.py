"""K: launch configurations AMD GPUs refuse (hipErrorInvalidConfiguration, code 209) or run
differently.

`launches()` finds a file's kernel launches and `LaunchContext` reads what they depend on
(constant block and grid sizes, the launched kernel's `__launch_bounds__`, device queries
in scope); the K rules judge them. A size that names a constant the file leaves to an
included header (`k<<<g, kBlock>>>` with `kBlock` from `launch_config.h`) becomes an
`OpenLaunch` fact, which the project pass resolves with the header's constants.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from math import prod
from typing import NamedTuple

from portlint import queries
from portlint.checks.cpp import (
    Expr, arguments, callee_name, calls, enclosing_function, has_argument_list, identifiers_named, memoized,
    open_constants, strip_parens, token_nodes,
)
from portlint.finding import Finding, Related, Severity, at_node, finding
from portlint.fix import Edit, Fix
from portlint.project import LAUNCH_APIS, ProjectIndex, declared_name, kernel_argument, file_key
from portlint.rocm_path import Status
from portlint.source import CUDA, Location, SourceFile
from portlint.triggers import needs

MAX_THREADS_PER_BLOCK = 1024  # every AMD GPU (and every NVIDIA GPU since Fermi)
# What some HIP toolchains assume for a kernel without `__launch_bounds__`.
DEFAULT_LAUNCH_BOUND = 256
WAVEFRONT = 64  # lanes of a CDNA wavefront (MI100-MI300)
SIMDS_PER_CU = 4  # execution units ("EU") of a CDNA compute unit
# An AQL dispatch packet holds the grid in work-items, as a uint32 per dimension.
MAX_GRID_THREADS = 2**32
# Every launch API takes (kernel, grid, block, ...).
GRID_ARGUMENT = 1
BLOCK_ARGUMENT = 2
# Launch API -> index of its dynamic shared memory argument.
SHARED_MEMORY_ARGUMENT = {
    "hipLaunchKernelGGL": 3, "hipExtLaunchKernelGGL": 3,
    "cudaLaunchKernel": 4, "hipLaunchKernel": 4, "cudaLaunchCooperativeKernel": 4, "hipLaunchCooperativeKernel": 4,
}

# Trigger tokens of every rule that reads launches (`has_launches`).
LAUNCH_TOKENS = (b"<<<", *(api.encode() for api in LAUNCH_APIS))

_KERNELS = "(function_definition declarator: (function_declarator) @declarator) @definition"
_BOUNDED_DECLARATIONS = "(declaration (launch_bounds) declarator: (function_declarator) @declarator)"
_LAUNCH_BOUNDS = "(launch_bounds) @bounds"
# Expressions a write goes through to the variable: `b.x`, `b[i]`, `(b)`.
_WRITTEN_THROUGH = ("field_expression", "subscript_expression", "parenthesized_expression")
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
# Every name `_asks_device` looks for, as bytes.
_DEVICE_QUERY_NAMES = re.compile(b"|".join(
    re.escape(name.encode()) for name in sorted(DEVICE_QUERIES | ATTRIBUTE_QUERIES | PROPERTY_FIELDS)))
# Calls that work across the lanes of a warp: shuffles, votes, warp-level CUB, cooperative
# groups tiles, and helpers named as warp reductions.
WARP_OPERATIONS = re.compile(
    r"shfl|ballot|__any|__all|activemask|syncwarp|__reduce_[a-z]+_sync|__match_|__lane_id|Warp(Reduce|Scan)"
    r"|tiled_partition|(?i:warp_?(reduce|scan|sum|max|min|broadcast))"
)


@dataclass(frozen=True)
class Launch:
    call: object  # the call_expression
    kernel: object | None  # the identifier naming the kernel
    block: object  # the block argument as written
    grid: object | None = None  # the grid argument as written
    shared_memory: object | None = None  # bytes of dynamic shared memory, when given


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


class ConstantBlocks(NamedTuple):
    """(launch, block size) of a file's launches with a constant block, in source order."""

    over_limit: list  # more than 1024 threads for certain (K001)
    within_limit: list  # every dimension known, at most 1024 threads (K002)


def launches(source: SourceFile) -> list[Launch]:
    """Every `k<<<grid, block, ...>>>` and launch-API call, in source order (found once per file)."""
    return memoized(source, "launch.launches", _find_launches)


def _find_launches(source: SourceFile) -> list[Launch]:
    # Found from their bytes (`<<<`, the API's name), then checked in the tree: a launch is
    # rare among a file's calls, and a query over every call cost more.
    found = []
    data = source.data
    for token in token_nodes(source, b"<<<"):
        config = token.parent if token.type == "<<<" else None
        call = config.parent if config is not None and config.type == "kernel_call_syntax" else None
        if call is not None and call.type == "call_expression":
            args = [c for c in config.named_children if c.type != "comment"]
            if len(args) >= 2:
                fn = call.child_by_field_name("function")
                found.append(Launch(call, kernel_argument(fn) if fn is not None else None, args[1], args[0],
                                    args[2] if len(args) > 2 else None))
    for api in LAUNCH_APIS:
        if api.encode() not in data:
            continue
        for name in identifiers_named(source, api):
            call = name.parent
            if call.type != "call_expression" or call.child_by_field_name("function") != name \
                    or not has_argument_list(call):
                continue
            args = arguments(call)
            if len(args) > BLOCK_ARGUMENT:
                shared = SHARED_MEMORY_ARGUMENT.get(api)
                found.append(Launch(call, kernel_argument(args[0]), args[BLOCK_ARGUMENT], args[GRID_ARGUMENT],
                                    args[shared] if shared is not None and len(args) > shared else None))
    found.sort(key=lambda launch: launch.call.start_byte)
    return found


class LaunchContext:
    """What the K rules need to know about one file, computed once and shared."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.constants = open_constants(source)
        self._by_function: dict[tuple[str, int], object] = {}  # per-function facts, by (what, node id)
        # By launch (call node id), read by several rules: the block size, the function
        # around the launch.
        self._blocks: dict[int, BlockShape | None] = {}
        self._functions: dict[int, object] = {}

    @classmethod
    def of(cls, source: SourceFile) -> "LaunchContext":
        return memoized(source, "launch.context", cls)

    def _once(self, what: str, function, compute):
        key = (what, function.id)
        if key not in self._by_function:
            self._by_function[key] = compute(function)
        return self._by_function[key]

    def function_of(self, launch: Launch):
        """The function around the launch (None at file scope)."""
        if launch.call.id not in self._functions:
            self._functions[launch.call.id] = enclosing_function(launch.call)
        return self._functions[launch.call.id]

    # ---- block and grid sizes ----------------------------------------------------------
    def block_shape(self, launch: Launch) -> BlockShape | None:
        """The launch's block size, or None when no dimension is a constant."""
        if launch.call.id not in self._blocks:
            self._blocks[launch.call.id] = self.shape(launch, launch.block)
        return self._blocks[launch.call.id]

    def grid_shape(self, launch: Launch) -> BlockShape | None:
        return self.shape(launch, launch.grid) if launch.grid is not None else None

    def shape(self, launch: Launch, node) -> BlockShape | None:
        """The size `node`, an argument of `launch`, gives (an integer, a dim3), or None when
        no dimension is a constant."""
        used: list = []
        dims = self._read_dims(launch, node, used, lambda n: self.constants.value(n, used))
        if dims is None or all(d is None for d in dims):
            return None
        return BlockShape(dims, tuple(used))

    def open_shape(self, launch: Launch, node) -> tuple[tuple, tuple] | None:
        """(dims, sources) when a dimension names a constant this file leaves to its headers:
        each dimension is then an int, an `Expr` with open names, or None."""
        used: list = []
        dims = self._read_dims(launch, node, used, self.constants.expression)
        if dims is None or not any(isinstance(d, tuple) for d in dims):
            return None
        return dims, tuple(used)

    def _read_dims(self, launch: Launch, node, used: list, read) -> tuple | None:
        node = strip_parens(node)
        declarator = self._dim3_variable(launch, node) if node.type == "identifier" else None
        if declarator is None:
            return self._dims(node, used, read)
        used.append(declarator)  # first: the variable, then the constants it reads
        return self._dims(declarator, used, read)

    def _dims(self, node, used: list, read) -> tuple | None:
        """(x, y, z) of an integer, `dim3(x, y)`, `dim3{x}`, `{x, y}`, or a dim3 declarator."""
        if node.type == "init_declarator":  # dim3 b(…), dim3 b{…}, dim3 b = dim3(…), dim3 b = 256
            value = node.child_by_field_name("value")
            if value is None:
                return None
            if value.type in ("argument_list", "initializer_list"):
                return self._dim3_arguments([a for a in value.named_children if a.type != "comment"], read)
            return self._dims(strip_parens(value), used, read)
        if node.type == "function_declarator":  # dim3 b(X, Y): each "parameter" is a bare name
            params = [p for p in node.child_by_field_name("parameters").named_children if p.type != "comment"]
            if any(p.type != "parameter_declaration" or len(p.named_children) != 1 for p in params):
                return None
            return self._dim3_arguments([p.named_children[0] for p in params], read)
        if node.type == "identifier" and node.parent is not None and node.parent.type == "declaration":
            return (1, 1, 1)  # `dim3 b;` is 1x1x1
        if node.type == "call_expression" and callee_name(node, self.source) == "dim3":
            return self._dim3_arguments(arguments(node), read)
        if node.type == "compound_literal_expression":
            kind = node.child_by_field_name("type")
            values = node.child_by_field_name("value")
            if values is None or (kind is not None and self.source.node_text(kind) not in ("", "dim3")):
                return None
            return self._dim3_arguments([a for a in values.named_children if a.type != "comment"], read)
        value = read(node)
        return None if value is None else (value, 1, 1)

    def _dim3_arguments(self, args: list, read) -> tuple | None:
        if not 1 <= len(args) <= 3:
            return None if args else (1, 1, 1)
        dims = [read(a) for a in args]
        return tuple(dims + [1] * (3 - len(dims)))

    def _dim3_variable(self, launch: Launch, use):
        """The declarator of the `dim3` variable `use`, an argument of `launch`, names, if it
        is set once and never changed."""
        name = self.source.node_text(use)
        declared = self._dim3_declarations.get(name)
        if not declared:
            return None
        function = self.function_of(launch)  # an argument lies in no function of its own
        if function is None:
            return None
        declarators = [declarator for declaration, declarator in declared if _within(declaration, function)]
        if len(declarators) != 1 or declarators[0].start_byte > use.start_byte:
            return None
        if self._once(f"changed {name}", function, lambda f: self._changed(name, f)):
            return None
        return declarators[0]

    @cached_property
    def _dim3_declarations(self) -> dict[str, list[tuple[object, object]]]:
        """name -> (declaration, declarator) of each `dim3` variable of the file, in source order
        (found from the word `dim3`: a query over every declaration cost more)."""
        found: dict[str, list] = {}
        for type_node in identifiers_named(self.source, "dim3", node_type="type_identifier"):
            declaration = type_node.parent
            if declaration.type != "declaration" or declaration.child_by_field_name("type") != type_node:
                continue
            for declarator in declaration.children_by_field_name("declarator"):
                # `dim3 b(X, Y)` with names only parses as a function declarator (the most vexing parse).
                if declarator.type in ("init_declarator", "function_declarator"):
                    names = [n for n in declarator.children_by_field_name("declarator") if n.type == "identifier"]
                else:
                    names = [declarator] if declarator.type == "identifier" else []
                for name in names:
                    found.setdefault(self.source.node_text(name), []).append((declaration, declarator))
        return found

    def _changed(self, name: str, function) -> bool:
        """Is variable `name` assigned (`b = …`, `b.x = …`, `++b.x`) or its address taken in
        `function`? Each `name` there climbs through `b.x`, `b[i]`, `(b)` to what is written."""
        for identifier in identifiers_named(self.source, name, function.start_byte, function.end_byte):
            target, parent = identifier, identifier.parent
            while parent.type in _WRITTEN_THROUGH and _written_part(parent) == target:
                target, parent = parent, parent.parent
            if parent.type == "assignment_expression" and parent.child_by_field_name("left") == target:
                return True
            if parent.type in ("update_expression", "pointer_expression") and \
                    parent.child_by_field_name("argument") == target:
                return True
        return False

    # ---- kernels --------------------------------------------------------------------
    @cached_property
    def _kernels(self) -> dict[str, list]:
        """Function definitions by name, except those dead on ROCm."""
        found: dict[str, list] = {}
        model = self.source.rocm_path
        for match in queries.matches(CUDA, _KERNELS, self.source.tree.root_node):
            definition = match["definition"][0]
            name = declared_name(match["declarator"][0])
            if name is None or (model is not None and model.status(definition.start_byte) is Status.DEAD):
                continue
            found.setdefault(self.source.node_text(name), []).append(definition)
        return found

    @cached_property
    def _declared_with_bounds(self) -> set[str]:
        """Kernels whose forward declaration carries `__launch_bounds__`."""
        names = (declared_name(d) for d in
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

    def launch_bound(self, kernel, read=None) -> tuple[bool, object]:
        """(known, bound): `(True, None)` without `__launch_bounds__`; `(False, None)` if undecidable.

        `read` turns the bound's node into a value (default: the file's constant value).
        """
        read = read or self.constants.value
        declarator = kernel.child_by_field_name("declarator")
        name = declared_name(declarator)
        if name is not None and self.source.node_text(name) in self._declared_with_bounds:
            return False, None  # bounds on a forward declaration (rare): not compared
        for child in kernel.children:
            if child.start_byte >= declarator.start_byte:
                break
            if child.type == "launch_bounds":
                args = [a for a in child.named_children if a.type != "comment"]
                bound = read(args[0]) if args else None
                return bound is not None, bound
            if child.type in ("attribute_specifier", "attribute_declaration", "ERROR"):
                return False, None  # amdgpu_flat_work_group_size, a macro the grammar split
        return True, None

    def has_device_query(self, function) -> bool:
        """Does `function` ask the device for its block limits?"""
        return function is not None and self._once("query", function, self._asks_device)

    def _asks_device(self, function) -> bool:
        # Each way of asking writes one of the names in the function: most functions have none.
        if _DEVICE_QUERY_NAMES.search(self.source.data, function.start_byte, function.end_byte) is None:
            return False
        for match in queries.matches(CUDA, _QUERY_CALLS, function):
            call = match["call"][0]
            name = callee_name(call, self.source)
            if name in DEVICE_QUERIES:
                return True
            if name in ATTRIBUTE_QUERIES and "MaxThreadsPerBlock" in self.source.node_text(call):
                return True
        return any(self.source.node_text(f) in PROPERTY_FIELDS
                   for f in queries.nodes(CUDA, _FIELDS, function, "field"))

    @cached_property
    def constant_blocks(self) -> ConstantBlocks:
        """The one pass over the launches that K001 and K002 share."""
        blocks = ConstantBlocks([], [])
        for launch in launches(self.source):
            shape = self.block_shape(launch)
            if shape is None:
                continue
            if shape.threads_at_least > MAX_THREADS_PER_BLOCK:
                blocks.over_limit.append((launch, shape))
            elif shape.threads is not None:
                blocks.within_limit.append((launch, shape))
        return blocks

    @cached_property
    def largest_blocks(self) -> dict[int, int]:
        """Kernel definition id -> the largest constant block (up to 1024) it is launched with here."""
        largest: dict[int, int] = {}
        for launch, shape in self.constant_blocks.within_limit:
            kernel = self.kernel_definition(launch)
            if kernel is not None:
                largest[kernel.id] = max(largest.get(kernel.id, 0), shape.threads)
        return largest

    @cached_property
    def warp_functions(self) -> set[str]:
        """Names of functions defined here that use warp-level operations, directly or
        through functions of this file they call."""
        using: set[str] = set()
        callers: dict[str, set[str]] = {}  # callee -> functions that call it
        for call in calls(self.source):
            function = enclosing_function(call)
            name = declared_name(function.child_by_field_name("declarator")) if function is not None else None
            if name is None:
                continue
            caller = self.source.node_text(name)
            if WARP_OPERATIONS.search(self.source.node_text(call.child_by_field_name("function"))):
                using.add(caller)
            else:
                callers.setdefault(callee_name(call, self.source), set()).add(caller)
        pending = list(using)
        while pending:
            for caller in callers.get(pending.pop(), ()):
                if caller not in using:
                    using.add(caller)
                    pending.append(caller)
        return using


def _written_part(expression):
    """The part of `b.x`, `b[i]` or `(b)` that a write to it writes to."""
    return expression.child_by_field_name("argument") or (expression.named_children or [None])[0]


def _within(node, function) -> bool:
    """Does `node` lie in `function`? (A node inside a `function_definition` never has its span.)"""
    return function.start_byte <= node.start_byte and node.end_byte <= function.end_byte


def has_launches(source: SourceFile) -> bool:
    # Asked by every K and M rule and the project facts: one search of the bytes per file.
    return memoized(source, "launch.has_launches", lambda s: any(token in s.data for token in LAUNCH_TOKENS))


def _where_set(launch: Launch, sources: tuple, source: SourceFile) -> tuple[Related, ...]:
    """Point at the variable a block given by name was read from."""
    if strip_parens(launch.block).type != "identifier" or not sources:
        return ()
    node = sources[0]
    if node.parent is not None and node.parent.type == "declaration":
        node = node.parent  # show `dim3 block(16, 16, 8);`, not `block(16, 16, 8)`
    written = " ".join(source.node_text(node).split())
    return (Related(source.location(node.start_byte, node.end_byte), f"The block size is set here: `{written}`"),)


def _is_port(sources: tuple, source: SourceFile) -> bool:
    """Was the size chosen in ROCm-only code (the port itself)?"""
    model = source.rocm_path
    return model is not None and any(model.status(d.start_byte) is Status.PORT for d in sources)


# ---- K001 block-over-1024 --------------------------------------------------------------
def too_many_threads(block: str, dims: tuple) -> tuple[str, Fix]:
    threads = None if None in dims else prod(dims)
    count = f"{threads}" if threads is not None else f"at least {prod(d for d in dims if d is not None)}"
    return (
        f"Block `{block}` has {count} threads; AMD GPUs launch at most {MAX_THREADS_PER_BLOCK}.",
        Fix.advice(f"Shrink the block to at most {MAX_THREADS_PER_BLOCK} threads and check it against "
                   "`prop.maxThreadsPerBlock` from `hipGetDeviceProperties(&prop, device)`"),
    )


@needs(*LAUNCH_TOKENS)
def check_block_over_1024(source: SourceFile) -> list[Finding]:
    if not has_launches(source):
        return []
    findings = []
    for launch, shape in LaunchContext.of(source).constant_blocks.over_limit:
        message, fix = too_many_threads(source.node_text(launch.block), shape.dims)
        findings.append(at_node(source, launch.block, message, fix,
                                related=_where_set(launch, shape.sources, source)))
    return findings


# ---- K002 hardcoded-block-size ---------------------------------------------------------
def _exceeds_bound(threads: int, bound: int | None, queried: bool) -> bool:
    """Is a constant block larger than the kernel's bound, or than HIP's default without one?"""
    if bound is not None:
        return threads > bound
    return threads > DEFAULT_LAUNCH_BOUND and not queried


def over_bound(name: str, threads: int, bound: int | None, largest: int, insert_at: int) -> tuple[str, Fix]:
    if bound is not None:
        return (
            f"Block of {threads} threads exceeds `__launch_bounds__({bound})` of `{name}`; the launch fails.",
            Fix.advice(f"Launch `{name}` with at most {bound} threads, or raise its `__launch_bounds__` to {threads}"),
        )
    # One bound per kernel, large enough for every constant launch of it in the file.
    bound_text = f"__launch_bounds__({max(largest, threads)})"
    return (
        f"Block of {threads} threads, but `{name}` has no `__launch_bounds__`; "
        f"HIP may allow only {DEFAULT_LAUNCH_BOUND}.",
        Fix.unsafe(f"Add `{bound_text}` to `{name}`", Edit.insert(insert_at, f" {bound_text}")),
    )


def _global_token(kernel):
    return next(c for c in kernel.children if c.type == "__global__")


@needs(*LAUNCH_TOKENS)
def check_hardcoded_block_size(source: SourceFile) -> list[Finding]:
    if not has_launches(source):
        return []
    context = LaunchContext.of(source)
    findings = []
    for launch, shape in context.constant_blocks.within_limit:  # larger blocks are K001's
        kernel = context.kernel_definition(launch)
        if kernel is None or _is_port(shape.sources, source):
            continue  # nothing to compare with, or a size chosen for ROCm (the port itself)
        known, bound = context.launch_bound(kernel)
        # Only HIP's default bound gives way to a device query: look for one only then.
        queried = (bound is None and shape.threads > DEFAULT_LAUNCH_BOUND
                   and context.has_device_query(context.function_of(launch)))
        if not known or not _exceeds_bound(shape.threads, bound, queried):
            continue
        message, fix = over_bound(source.node_text(launch.kernel), shape.threads, bound,
                                   context.largest_blocks[kernel.id], _global_token(kernel).end_byte)
        findings.append(at_node(source, launch.block, message, fix,
                                related=_where_set(launch, shape.sources, source)))
    return findings


# ---- K001 and K002 across files: block sizes from included headers -----------------------
@dataclass(frozen=True)
class OpenLaunch:
    """A launch whose block size names constants its file leaves to included headers."""

    file: str  # `file_key` of the launching file, to find what it includes
    location: Location  # the block argument
    text: str
    digest: str
    dims: tuple  # per dimension: an int, an `Expr` with open names, or None
    set_at: tuple[Related, ...]  # the dim3 variable the block was read from
    port: bool  # the block is set in ROCm-only code
    # For K002, when this file defines the launched kernel:
    kernel: str | None = None
    bound: Expr | None = None  # its `__launch_bounds__`; None without one
    bound_known: bool = False
    queried: bool = False  # the launching function asks the device for its limits
    insert_at: Location | None = None  # after `__global__`, where a bound would go
    largest: int = 0  # the largest constant block this file launches the kernel with


def open_launches(source: SourceFile) -> list[OpenLaunch]:
    """The file's launches whose block size the project pass has to finish reading."""
    if source.language != CUDA or not has_launches(source):
        return []
    context = LaunchContext.of(source)
    found = []
    for launch in launches(source):
        kernel = context.kernel_definition(launch)
        shape = context.block_shape(launch)
        if shape is None or shape.threads is None:
            opened = context.open_shape(launch, launch.block)
        else:
            # A constant block is still open for K002 when the kernel's bound is a header's constant.
            bound = context.launch_bound(kernel, context.constants.expression)[1] if kernel is not None else None
            opened = (shape.dims, shape.sources) if isinstance(bound, tuple) else None
        if opened is None:
            continue
        dims, sources = opened
        block = launch.block
        facts = dict(
            file=file_key(source), location=source.location(block.start_byte, block.end_byte),
            text=source.node_text(block), digest=source.digest, dims=dims,
            set_at=_where_set(launch, sources, source), port=_is_port(sources, source),
        )
        if kernel is not None:
            known, bound = context.launch_bound(kernel, context.constants.expression)
            insert_at = _global_token(kernel).end_byte
            facts.update(kernel=source.node_text(launch.kernel), bound=bound, bound_known=known,
                         queried=context.has_device_query(context.function_of(launch)),
                         insert_at=source.location(insert_at), largest=context.largest_blocks.get(kernel.id, 0))
        found.append(OpenLaunch(**facts))
    return found


def defined_at(definitions) -> tuple[Related, ...]:
    return tuple(Related(d.location, f"`{d.name}` is defined here: `{d.text}`") for d in definitions)


def finding_at(fact, message: str, fix: Fix, related: tuple[Related, ...], severity: Severity | None = None,
                edits_at: Location | None = None) -> Finding:
    """A project rule's finding at the place a per-file fact recorded; `edits_at` is where
    the fix's edits go."""
    return Finding(location=fact.location, message=message, fix=fix, severity=severity, related=related,
                   matched=fact.text, file_digest=fact.digest, edit_locations=(edits_at,) * len(fix.edits))


def _resolved_dims(index: ProjectIndex, fact: OpenLaunch):
    dims, definitions = [], []
    for dim in fact.dims:
        value, used = index.resolve(fact.file, dim)
        dims.append(value)
        definitions.extend(used)
    return tuple(dims), tuple(dict.fromkeys(definitions))


def check_block_over_1024_across_files(index: ProjectIndex) -> list[Finding]:
    findings = []
    for fact in index.open_facts(OpenLaunch):
        if prod(d for d in fact.dims if isinstance(d, int)) > MAX_THREADS_PER_BLOCK:
            continue  # the file's own pass reported it
        dims, definitions = _resolved_dims(index, fact)
        if prod(d for d in dims if d is not None) <= MAX_THREADS_PER_BLOCK:
            continue
        message, fix = too_many_threads(fact.text, dims)
        findings.append(finding_at(fact, message, fix, fact.set_at + defined_at(definitions)))
    return findings


def check_hardcoded_block_size_across_files(index: ProjectIndex) -> list[Finding]:
    findings = []
    for fact in index.open_facts(OpenLaunch):
        if fact.kernel is None or not fact.bound_known or fact.port:
            continue
        dims, definitions = _resolved_dims(index, fact)
        bound, bound_definitions = index.resolve(fact.file, fact.bound)
        threads = None if None in dims else prod(dims)
        if threads is None or threads > MAX_THREADS_PER_BLOCK or (fact.bound is not None and bound is None):
            continue
        if any(d.status is Status.PORT for d in definitions) or not _exceeds_bound(threads, bound, fact.queried):
            continue
        message, fix = over_bound(fact.kernel, threads, bound, fact.largest, fact.insert_at.start_byte)
        related = fact.set_at + defined_at(dict.fromkeys(definitions + bound_definitions))
        findings.append(finding_at(fact, message, fix, related, edits_at=fact.insert_at))
    return findings


# ---- K003 launch-bounds-min-blocks -----------------------------------------------------
def _waves_per_eu(threads: int, blocks: int) -> int:
    """Waves each execution unit holds when `blocks` blocks of `threads` share a CDNA CU."""
    waves_per_block = -(-threads // WAVEFRONT)
    return max(1, -(-blocks * waves_per_block // SIMDS_PER_CU))


@needs(b"__launch_bounds__")
def check_launch_bounds_min_blocks(source: SourceFile) -> list[Finding]:
    if b"__launch_bounds__" not in source.data:
        return []
    constants = open_constants(source)
    findings = []
    for bounds in queries.nodes(CUDA, _LAUNCH_BOUNDS, source.tree.root_node, "bounds"):
        args = [a for a in bounds.named_children if a.type != "comment"]
        if len(args) < 2:
            continue
        threads, blocks = constants.value(args[0]), constants.value(args[1])
        if blocks is not None and blocks <= 1:
            continue  # asks for nothing beyond the block itself, on either platform
        minimum = source.node_text(args[1])
        if threads is not None and blocks is not None:
            waves = _waves_per_eu(threads, blocks)
            if waves == blocks:
                continue  # the same occupancy on CDNA, by coincidence of the numbers
            fix = Fix.advice(
                f"Use `__launch_bounds__({source.node_text(args[0])}, {waves})` on AMD ({blocks} blocks of "
                f"{threads} threads per CU are {waves} waves per EU), or drop the second argument")
        else:
            fix = Fix.advice(
                f"Pass waves per EU on AMD: ceil({minimum} * ceil(threads / {WAVEFRONT}) / {SIMDS_PER_CU}), "
                "or drop the second argument")
        findings.append(at_node(
            source, args[1], f"AMD reads `{minimum}` in `__launch_bounds__` as waves per EU, not blocks per SM.", fix,
        ))
    return findings


# ---- K004 block-not-wavefront-multiple -------------------------------------------------
def _wavefront_suggestion(dims: tuple, threads: int | None) -> str:
    x, y, z = dims
    new_x = -(-x // WAVEFRONT) * WAVEFRONT
    if y == 1 and z == 1:
        return str(new_x)
    rows = threads // (new_x * z) if threads and z and threads % (new_x * z) == 0 else y
    parts = [new_x, rows] + ([z] if z != 1 else [])
    return f"dim3({', '.join('k' if p is None else str(p) for p in parts)})"


@needs(*LAUNCH_TOKENS)
def check_block_not_wavefront_multiple(source: SourceFile) -> list[Finding]:
    if not has_launches(source):
        return []
    context = LaunchContext.of(source)
    findings = []
    for launch in launches(source):
        shape = context.block_shape(launch)
        if shape is None or shape.dims[0] is None or shape.dims[0] % WAVEFRONT == 0:
            continue
        if _is_port(shape.sources, source):
            continue  # a size chosen for ROCm is the port itself
        (x, y, z), threads = shape.dims, shape.threads
        kernel = context.kernel_definition(launch)
        name = source.node_text(launch.kernel) if kernel is not None else None
        warp_ops = name is not None and name in context.warp_functions
        block = source.node_text(launch.block)
        partial = threads is not None and threads % WAVEFRONT != 0 and threads >= 32
        if warp_ops and (y != 1 or z != 1):
            severity = Severity.WARNING
            message = f"Block `{block}` has rows of {x} threads; a 64-lane AMD wavefront spans several rows."
        elif warp_ops and partial:
            severity = Severity.WARNING
            message = f"Block `{block}` leaves lanes of a 64-lane AMD wavefront idle; warp operations see them."
        elif partial:
            severity = Severity.NOTE
            sized = f"of {threads} threads" if block.strip() == str(threads) else f"`{block}` of {threads} threads"
            message = f"Block {sized} fills 64-lane AMD wavefronts only in part."
        else:
            continue
        fix = Fix.advice(f"Use a block x-size that is a multiple of {WAVEFRONT}, e.g. "
                         f"`{_wavefront_suggestion(shape.dims, threads)}`, or derive it from `warpSize`")
        findings.append(at_node(source, launch.block, message, fix, severity=severity,
                                related=_where_set(launch, shape.sources, source)))
    return findings


# ---- K005 dynamic-parallelism ----------------------------------------------------------
def _runs_on_device_only(function) -> bool:
    """`__global__` or `__device__` without `__host__` (a host-device function usually
    guards its launch to the host pass)."""
    declarator = function.child_by_field_name("declarator")
    spaces = {c.type for c in function.children if declarator is None or c.start_byte < declarator.start_byte}
    return bool(spaces & {"__global__", "__device__"}) and "__host__" not in spaces


@needs(*LAUNCH_TOKENS)
def check_dynamic_parallelism(source: SourceFile) -> list[Finding]:
    if not has_launches(source):
        return []
    context = LaunchContext.of(source)
    findings = []
    for launch in launches(source):
        parent = context.function_of(launch)
        if parent is None or not _runs_on_device_only(parent):
            continue
        parent_name = declared_name(parent.child_by_field_name("declarator"))
        child = source.node_text(launch.kernel) if launch.kernel is not None else "a kernel"
        caller = source.node_text(parent_name) if parent_name is not None else "the caller"
        culprit = launch.call.child_by_field_name("function") or launch.call
        config = next((c for c in launch.call.children if c.type == "kernel_call_syntax"), culprit)
        findings.append(finding(
            source, culprit.start_byte, config.end_byte,
            f"`{child}` is launched from device code; HIP has no dynamic parallelism.",
            Fix.advice(f"Launch `{child}` from the host after `{caller}` returns, or do its work "
                       f"inside `{caller}` (a loop over its blocks)"),
        ))
    return findings


# ---- K006 huge-grid --------------------------------------------------------------------
_AXES = ("x", "y", "z")


@needs(*LAUNCH_TOKENS)
def check_huge_grid(source: SourceFile) -> list[Finding]:
    if not has_launches(source):
        return []
    context = LaunchContext.of(source)
    findings = []
    for launch in launches(source):
        block = context.block_shape(launch)
        grid = context.grid_shape(launch) if block is not None else None
        if grid is None:
            continue
        for axis, blocks, threads in zip(_AXES, grid.dims, block.dims):
            if blocks is None or threads is None or blocks * threads < MAX_GRID_THREADS:
                continue
            findings.append(at_node(
                source, launch.grid,
                f"Grid `{source.node_text(launch.grid)}` has {blocks * threads} threads along {axis}; "
                "AMD launches fewer than 2^32.",
                Fix.advice(f"Cap the grid at `UINT32_MAX / {threads}` blocks along {axis} and loop "
                           "inside the kernel (grid-stride)"),
            ))
            break
    return findings


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _KERNELS,
    _BOUNDED_DECLARATIONS,
    _QUERY_CALLS,
    _FIELDS,
    _LAUNCH_BOUNDS,
)
