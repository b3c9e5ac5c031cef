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
from dataclasses import dataclass, replace
from functools import cached_property
from math import prod
from typing import NamedTuple

from portlint import queries, targets
from portlint.checks.cpp import (
    Expr, arguments, c_operator, callee_name, calls_named, enclosing_function, evaluate, integer_value,
    has_argument_list, identifiers_named, macro_bodies_root, memoized, open_constants, return_functions, strip_parens,
    token_nodes,
)
from portlint.checks.logical_warp import warp_model
from portlint.finding import Finding, Related, Severity, at_node, finding
from portlint.fix import Fix
from portlint.nesting import bounded
from portlint.project import LAUNCH_APIS, ProjectIndex, declared_name, kernel_argument, file_key
from portlint.rocm_path import Status
from portlint.source import CUDA, Location, SourceFile
from portlint.triggers import needs

MAX_THREADS_PER_BLOCK = 1024  # every AMD GPU (and every NVIDIA GPU since Fermi)
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

# Driver and module APIs launch a function handle, with each dimension its own argument:
# `cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared_bytes, stream, args, extra)`.
DRIVER_LAUNCH_APIS = ("cuLaunchKernel", "cuLaunchCooperativeKernel",
                      "hipModuleLaunchKernel", "hipModuleLaunchCooperativeKernel")
DRIVER_GRID, DRIVER_BLOCK, DRIVER_SHARED_MEMORY = slice(1, 4), slice(4, 7), 7

# Trigger tokens of every rule that reads launches (`has_launches`); `<< <` is how a C++
# formatter spaces a launch, and the grammar reads it as one.
LAUNCH_OPENERS = (b"<<<", b"<< <")
LAUNCH_TOKENS = (*LAUNCH_OPENERS, *(api.encode() for api in (*LAUNCH_APIS, *DRIVER_LAUNCH_APIS)))

_KERNELS = "(function_definition declarator: (function_declarator) @declarator) @definition"
_BOUNDED_DECLARATIONS = "(declaration (launch_bounds) declarator: (function_declarator) @declarator)"
_LAUNCH_BOUNDS = "(launch_bounds) @bounds"
# Expressions a write goes through to the variable: `b.x`, `b[i]`, `(b)`.
_WRITTEN_THROUGH = ("field_expression", "subscript_expression", "parenthesized_expression")
_QUERY_CALLS = "(call_expression function: (_) @callee) @call"
_FLAT_WORK_GROUP_SIZE = re.compile(r"amdgpu_flat_work_group_size\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIELDS = "(field_expression field: (field_identifier) @field)"

# Calls that answer how large a block may be; reading the device's properties answers it
# only through `maxThreadsPerBlock` (a function that reads just `multiProcessorCount` still
# hard-codes its block).
BLOCK_LIMIT_QUERIES = frozenset({
    "cudaOccupancyMaxPotentialBlockSize", "hipOccupancyMaxPotentialBlockSize",
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem", "hipOccupancyMaxPotentialBlockSizeVariableSMem",
    "cudaFuncGetAttributes", "hipFuncGetAttributes",
})
DEVICE_QUERIES = BLOCK_LIMIT_QUERIES | {
    "cudaGetDeviceProperties", "hipGetDeviceProperties", "getCurrentDeviceProperties", "getDeviceProperties",
}
ATTRIBUTE_QUERIES = frozenset({"cudaDeviceGetAttribute", "hipDeviceGetAttribute", "cuDeviceGetAttribute"})
PROPERTY_FIELDS = frozenset({"maxThreadsPerBlock", "maxThreadsDim"})
# Every name `_asks_device` looks for, as bytes.
_DEVICE_QUERY_NAMES = re.compile(b"|".join(
    re.escape(name.encode()) for name in sorted(DEVICE_QUERIES | ATTRIBUTE_QUERIES | PROPERTY_FIELDS)))
# `min(n, 256)`, `std::max(x, 64)`, `MIN(a, b)`: a size chosen at run time between bounds.
BOUNDING_CALLS = frozenset({"min", "max", "MIN", "MAX"})
_BOUNDING_CALL = re.compile(rb"\b(?:min|max|MIN|MAX)\s*[(<]")


@dataclass(unsafe_hash=True)
class ArgumentSpan:
    """Consecutive arguments read as one size, `bx, by, bz` of `cuLaunchKernel`: stands where
    the rules expect the node of a block or grid argument (a finding covers the span)."""

    parts: tuple
    type = "argument_span"
    parent = None

    @property
    def start_byte(self) -> int:
        return self.parts[0].start_byte

    @property
    def end_byte(self) -> int:
        return self.parts[-1].end_byte

    @property
    def id(self) -> tuple:
        return ("span", self.start_byte, self.end_byte)


@dataclass(unsafe_hash=True)
class Launch:
    call: object  # the call_expression
    kernel: object | None  # the identifier naming the kernel
    block: object  # the block argument as written
    grid: object | None = None  # the grid argument as written
    shared_memory: object | None = None  # bytes of dynamic shared memory, when given


@dataclass(unsafe_hash=True)
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
    tokens = [t for opener in LAUNCH_OPENERS if opener in data for t in token_nodes(source, opener)]
    for token in tokens:
        config = token.parent if token.type == "<<<" else None
        call = config.parent if config is not None and config.type == "kernel_call_syntax" else None
        if call is not None and call.type == "call_expression":
            args = [c for c in config.named_children if c.type != "comment"]
            if len(args) >= 2:
                fn = call.child_by_field_name("function")
                found.append(Launch(call, kernel_argument(fn) if fn is not None else None, args[1], args[0],
                                    args[2] if len(args) > 2 else None))
    for api, call, args in _api_calls(source, LAUNCH_APIS):
        if len(args) > BLOCK_ARGUMENT:
            shared = SHARED_MEMORY_ARGUMENT.get(api)
            found.append(Launch(call, kernel_argument(args[0]), args[BLOCK_ARGUMENT], args[GRID_ARGUMENT],
                                args[shared] if shared is not None and len(args) > shared else None))
    for api, call, args in _api_calls(source, DRIVER_LAUNCH_APIS):
        if len(args) > DRIVER_SHARED_MEMORY:  # the launched function is a handle: no kernel to read
            found.append(Launch(call, None, ArgumentSpan(tuple(args[DRIVER_BLOCK])),
                                ArgumentSpan(tuple(args[DRIVER_GRID])), args[DRIVER_SHARED_MEMORY]))
    found.sort(key=lambda launch: launch.call.start_byte)
    return found


def _api_calls(source: SourceFile, apis):
    """(api, call, arguments) of each call of one of `apis` by its plain name."""
    for api in apis:
        if api.encode() not in source.data:
            continue
        for name in identifiers_named(source, api):
            call = name.parent
            if call.type == "call_expression" and call.child_by_field_name("function") == name \
                    and has_argument_list(call):
                yield api, call, arguments(call)


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
        dims = self._read_dims(launch, node, used, lambda n: self._read(n, used, lambda m: self.constants.value(m, used)))
        if dims is None or all(d is None for d in dims):
            return None
        return BlockShape(dims, tuple(used))

    def size_value(self, node) -> int | None:
        """The value of a size expression (a byte count, a thread count) where it stands:
        the file's constants, a local variable set once, one-return helpers, and `min` or
        `max` of those; None when it is not one number."""
        low, high = self._range(node, [])
        return low if low is not None and low == high else None

    def open_shape(self, launch: Launch, node) -> tuple[tuple, tuple] | None:
        """(dims, sources) when a dimension names a constant this file leaves to its headers:
        each dimension is then an int, an `Expr` with open names, or None."""
        key = ("open", node.id)
        if key not in self._by_function:  # asked by K002 and by the project facts
            self._by_function[key] = self._open_shape(launch, node)
        return self._by_function[key]

    def _open_shape(self, launch: Launch, node) -> tuple[tuple, tuple] | None:
        used: list = []
        dims = self._read_dims(launch, node, used, lambda n: self._read(n, used, self.constants.expression))
        if dims is None or not any(isinstance(d, tuple) for d in dims):
            return None
        return dims, tuple(used)

    @bounded(None)
    def _read(self, node, used: list, constant):
        """`constant(node)` (the file's constants), else through what the file's own
        constants do not cover: `ns::kBlock`, and a local variable set once and never changed
        (`int threads = 256;`), whose declaration goes to `used`."""
        value = constant(node)
        node = strip_parens(node)
        if value is not None or node is None:
            return value
        if node.type == "qualified_identifier":  # `ns::kBlock`: the constant the file defines in `ns`
            name = node.child_by_field_name("name")
            return constant(name) if name is not None and name.type in ("identifier", "type_identifier") else None
        if node.type == "binary_expression":  # `warp_size * 3` with a local `int warp_size = 32`
            left = self._read(node.child_by_field_name("left"), used, constant)
            right = self._read(node.child_by_field_name("right"), used, constant)
            operator = node.child_by_field_name("operator").type
            if isinstance(left, int) and isinstance(right, int):
                return c_operator(operator, left, right)
            return None if left is None or right is None else (operator, left, right)
        if node.type == "call_expression":  # `iDivUp(w, 16)`: a function of the file that returns a formula
            fn = node.child_by_field_name("function")
            function = return_functions(self.source).get(self.source.node_text(fn)) if fn.type == "identifier" else None
            args = arguments(node)
            if function is None or len(args) != len(function.parameters):
                return None
            values = [self._read(a, used, constant) for a in args]
            if not all(isinstance(v, int) for v in values):
                return None
            bound = dict(zip(function.parameters, values))
            return evaluate(function.value, self.source, lambda name: bound.get(self.source.node_text(name)))
        if node.type != "identifier":
            return None
        declarator = self.local_variable(node)
        if declarator is None:
            return None
        value = self._read(declarator.child_by_field_name("value"), used, constant)
        if value is not None:
            used.append(declarator.parent)
        return value

    def block_range(self, launch: Launch) -> tuple[int | None, int | None, tuple]:
        """(at least, at most, sources) threads of a block sized at run time between constant
        bounds, `min(n, 256)` or `std::max(x, 64)` (None for a bound not known)."""
        used: list = []
        dims = self._read_dims(launch, launch.block, used, lambda n: self._range(n, used))
        if dims is None:
            return None, None, ()
        ranges = [(d, d) if isinstance(d, int) else d if isinstance(d, tuple) else (None, None) for d in dims]
        lows, highs = [lo for lo, _ in ranges], [hi for _, hi in ranges]
        return (prod(lows) if None not in lows else None, prod(highs) if None not in highs else None, tuple(used))

    @bounded((None, None))
    def _range(self, node, used: list) -> tuple[int | None, int | None]:
        """(lowest, highest) value of a size: a constant, a local variable set once, or `min`
        and `max` of those and run-time values."""
        value = self._read(node, used, lambda m: self.constants.value(m, used))
        if isinstance(value, int):
            return value, value
        node = strip_parens(node)
        if node is None:
            return None, None
        if node.type == "identifier":
            declarator = self.local_variable(node)
            found = self._range(declarator.child_by_field_name("value"), used) if declarator is not None else None
            if found is None or found == (None, None):
                return None, None
            used.append(declarator.parent)
            return found
        name = callee_name(node, self.source) if node.type == "call_expression" else None
        if name not in BOUNDING_CALLS or len(arguments(node)) < 2:
            return None, None
        ranges = [self._range(a, used) for a in arguments(node)]
        lows, highs = [lo for lo, _ in ranges], [hi for _, hi in ranges]
        if name.lower() == "min":
            return min(lows) if None not in lows else None, min((h for h in highs if h is not None), default=None)
        return max((lo for lo in lows if lo is not None), default=None), max(highs) if None not in highs else None

    def local_variable(self, use):
        """The `init_declarator` of the local variable `use` names, when the function
        declares it once, before `use`, and never writes it again."""
        function = enclosing_function(use)
        if function is None:
            return None
        name = self.source.node_text(use)
        # Asked for each use of each launch's names: what the function declares is read once.
        found = self._once(f"declared {name}", function, lambda f: self._declarators(name, f))
        if found is None or len(found) != 1 or found[0].end_byte > use.start_byte or found[0].parent.type != "declaration":
            return None
        if self._once(f"changed {name}", function, lambda f: self._changed(name, f)):
            return None
        return found[0]

    def _declarators(self, name: str, function) -> list | None:
        """The `init_declarator`s of `name` in `function`; None when a parameter is `name`."""
        found = []
        for identifier in identifiers_named(self.source, name, function.start_byte, function.end_byte):
            parent = identifier.parent
            if parent.type == "parameter_declaration":
                return None
            if parent.type == "init_declarator" and parent.child_by_field_name("declarator") == identifier:
                found.append(parent)
        return found

    def _read_dims(self, launch: Launch, node, used: list, read) -> tuple | None:
        node = _dim3_of_fields(strip_parens(node), self.source)
        declarator = self._dim3_variable(launch, node) if node.type == "identifier" else None
        if declarator is None:
            fields = self._dim3_fields(launch, node) if node.type == "identifier" else None
            if fields is not None:
                return self._field_dims(fields, used, read)
            return self._dims(node, used, read)
        used.append(declarator)  # first: the variable, then the constants it reads
        return self._dims(declarator, used, read)

    def _field_dims(self, fields: dict, used: list, read) -> tuple:
        """(x, y, z) of `dim3 b; b.x = X; b.y = Y;`: the first source is where x is set."""
        first = fields.get("x") or next(iter(fields.values()))
        used.append(first)
        return tuple(read(fields[axis].child_by_field_name("right")) if axis in fields else 1
                     for axis in ("x", "y", "z"))

    def _dims(self, node, used: list, read) -> tuple | None:
        """(x, y, z) of an integer, `dim3(x, y)`, `dim3{x}`, `{x, y}`, a dim3 declarator, or
        the three arguments of a driver API launch."""
        if isinstance(node, ArgumentSpan):
            return self._dim3_arguments(list(node.parts), read)
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
        # The nearest declaration before the launch whose block holds the launch.
        declarations = [(declaration, declarator) for declaration, declarator in declared
                        if _within(declaration, function) and declaration.end_byte <= use.start_byte
                        and _within(use, declaration.parent)]
        if not declarations:
            return None
        declaration, declarator = declarations[-1]
        if self._once(f"changed {name}", declaration.parent, lambda scope: self._changed(name, scope)):
            return None
        return declarator

    def _dim3_fields(self, launch: Launch, use) -> dict | None:
        """axis -> assignment of `dim3 b;` (no initializer) in the block around `use`, when
        `b` is written only as `b.x = …`, each axis once (`blockDim.x = NUM_THREADS;`)."""
        name = self.source.node_text(use)
        function = self.function_of(launch)
        scopes = [declaration.parent for declaration, declarator in self._dim3_declarations.get(name, ())
                  if declarator.type == "identifier" and declaration.end_byte <= use.start_byte
                  and function is not None and _within(declaration, function)
                  and _within(use, declaration.parent)]
        if not scopes:
            return None
        scope = scopes[-1]  # the nearest declaration before the launch
        return self._once(f"fields {name}", scope, lambda s: self._field_writes(name, s))

    def _field_writes(self, name: str, scope) -> dict | None:
        writes: dict = {}
        for identifier in identifiers_named(self.source, name, scope.start_byte, scope.end_byte):
            field, parent = identifier.parent, identifier.parent.parent
            if field.type != "field_expression" or field.child_by_field_name("argument") != identifier:
                if self._writes(identifier):
                    return None
                continue
            axis = self.source.node_text(field.child_by_field_name("field"))
            is_set = (parent.type == "assignment_expression" and parent.child_by_field_name("left") == field
                      and parent.child_by_field_name("operator").type == "=")
            if is_set and axis in ("x", "y", "z") and axis not in writes:
                writes[axis] = parent
            elif is_set or self._writes(field):
                return None  # set twice, or changed some other way
        return writes or None

    def _writes(self, target) -> bool:
        parent = target.parent
        while parent.type in _WRITTEN_THROUGH and _written_part(parent) == target:
            target, parent = parent, parent.parent
        if parent.type == "assignment_expression" and parent.child_by_field_name("left") == target:
            return True
        return parent.type in ("update_expression", "pointer_expression") and \
            parent.child_by_field_name("argument") == target

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
        return any(self._writes(identifier)
                   for identifier in identifiers_named(self.source, name, function.start_byte, function.end_byte))

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

    def kernel_name(self, launch: Launch) -> str | None:
        """The launched kernel's name, a local `auto k = &kernel<T>;` read through."""
        if launch.kernel is None:
            return None
        declarator = self.local_variable(launch.kernel) if launch.kernel.type == "identifier" else None
        value = declarator.child_by_field_name("value") if declarator is not None else None
        if value is None:
            return self.source.node_text(launch.kernel)
        while value is not None and value.type in ("pointer_expression", "qualified_identifier"):  # `&ns::k<T>`
            value = value.child_by_field_name("argument" if value.type == "pointer_expression" else "name")
        name = kernel_argument(value) if value is not None else None
        return self.source.node_text(name) if name is not None else None

    @cached_property
    def launched_names(self) -> tuple[str, ...]:
        """The names of the kernels the file launches; () when it launches none, or one whose
        name is not written at the launch (a handle, a parameter)."""
        found = [self.kernel_name(launch) for launch in launches(self.source)]
        return () if None in found else tuple(dict.fromkeys(found))

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
                flat = _FLAT_WORK_GROUP_SIZE.search(self.source.node_text(child))
                if flat is not None:  # `__attribute__((amdgpu_flat_work_group_size(1, 256)))`
                    return True, int(flat.group(2))
                return False, None  # a macro the grammar split
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
            if name in BLOCK_LIMIT_QUERIES:
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

    def observes_by_rows(self, kernel: str) -> bool | tuple[str, ...]:
        """Does the kernel `kernel`, defined here, use warp operations whose result depends on
        the wavefront's width (the logical-warp model's observers)? Only then does a block
        whose rows are narrower than a wavefront compute otherwise on AMD: a tile of 32, a
        xor shuffle inside 32 lanes, group each row's lanes alone. Where only widths named
        from headers decide (`thread_block_tile<TILE_DIM>`), their names: the project pass
        reads them (`observed_with_headers`)."""
        observation = warp_model(self.source).function_observation(kernel)
        return observation if isinstance(observation, tuple) else bool(observation)  # None: not defined here


def _dim3_of_fields(node, source: SourceFile):
    """`b` for the driver API's block `b.x, b.y, b.z` (one `dim3` variable's fields, in
    order), else `node`."""
    if not isinstance(node, ArgumentSpan) or any(p.type != "field_expression" for p in node.parts):
        return node
    variables = [p.child_by_field_name("argument") for p in node.parts]
    fields = [source.node_text(p.child_by_field_name("field")) for p in node.parts]
    if fields != ["x", "y", "z"] or any(v is None or v.type != "identifier" for v in variables) \
            or len({source.node_text(v) for v in variables}) != 1:
        return node
    return variables[0]


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
    if _dim3_of_fields(strip_parens(launch.block), source).type != "identifier" or not sources:
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
QUERY_ADVICE = ("Size the block from the device: `hipOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, "
                "shared_bytes, 0)`, or `prop.maxThreadsPerBlock` from `hipGetDeviceProperties` rounded down to "
                "a multiple of `prop.warpSize`")
FIXED = "is fixed at compile time, not sized from the device"
# A table of block sizes a benchmark or tuner loops over: `int block_sizes[] = {32, 64, …};`.
# A table of block sizes: `kBlockSizes[] = {`, `threads[4] = {`. Found from its `[...] = {`
# (a literal start `re` skips to) and named by the word before it: a pattern that starts at
# every word and looks ahead for the keyword cost ~0.3 ms a file.
_TABLE_INITIALIZER = re.compile(rb"\[\s*+\w*+\s*+\]\s*+=\s*+\{")
_BLOCK_TABLE_NAME = re.compile(rb"(?i)\w{0,64}?(?:block|thread)\w{0,64}")
_NAME_BEFORE = re.compile(rb"(\w+)\s*+$")


def _block_tables(data: bytes):
    """(start, end) of each table name of a block-size table."""
    for match in _TABLE_INITIALIZER.finditer(data):
        before = _NAME_BEFORE.search(data, max(0, match.start() - 256), match.start())
        if before is None:
            continue
        start, end = before.span(1)
        if start > 0 and (data[start - 1:start].isalnum() or data[start - 1] == 0x5F):
            continue  # longer than the window: no table name pattern matches it
        if _BLOCK_TABLE_NAME.fullmatch(data, start, end) and not _counts_blocks(data[start:end].decode()):
            yield start, end


def _counts_blocks(name: str) -> bool:
    """`depth_to_max_blocks`, `num_blocks`, `grid_blocks`: a number of blocks (a grid), not a
    block's size, which a name says with size, dim or threads (`kBlockSizes`, `block_dims`)."""
    words = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", name)]
    return "blocks" in words and not any(w.startswith(("size", "dim", "thread")) for w in words)


def judge_block(dims: tuple, warp_ops) -> tuple[Severity, str] | None:
    """(severity, why) of a constant block on the scan's targets, or None when there is
    nothing to say (unknown, one thread, or more than 1024: K001's). `warp_ops()` tells
    whether the launched kernel uses warp operations (asked only for row layouts)."""
    x, y, z = dims
    threads = None if None in dims else prod(dims)
    wave = targets.widest_wave()
    if threads is not None:
        if threads <= 1 or threads > MAX_THREADS_PER_BLOCK:
            return None
        if threads % wave.wave_size:
            # Idle lanes cost speed, not correctness: advice (a note) like every fixed size.
            return Severity.NOTE, f"leaves lanes of its last wavefront idle: {wave.lanes()}"
    elif x is None or x <= 1 or x % wave.wave_size == 0:
        return None  # only part of the size is fixed, and that part fills whole wavefronts
    rows = f"has rows of {x} threads: {wave.lanes()}, so one spans rows"
    if x is not None and x % wave.wave_size and (threads is None or y != 1 or z != 1) and warp_ops():
        return Severity.WARNING, rows  # a shuffle or ballot of one row sees the next
    if threads is None:
        return Severity.NOTE, rows
    return Severity.NOTE, FIXED


def _threads_text(dims: tuple) -> str:
    return f"{prod(dims)} threads" if None not in dims else f"{dims[0]} threads along x"


def _block_message(text: str, dims: tuple, why: str) -> str:
    if text == str(dims[0]) and dims[1:] == (1, 1):
        return f"Block of {text} threads {why}."
    return f"Block `{text}` ({_threads_text(dims)}) {why}."


def over_bound(threads: int, bound: int, name: str) -> tuple[str, Fix]:
    return (f"Block of {threads} threads exceeds `{name}`'s bound of {bound}; the launch fails.",
            Fix.advice(f"Launch `{name}` with at most {bound} threads, or raise its `__launch_bounds__` "
                       f"to {threads}"))


def exceeded_bound(threads: int, known: bool, bound: int | None, name: str) -> tuple[str, Fix] | None:
    """Message and advice when `threads` is more than the kernel's `__launch_bounds__` or, for
    a kernel without one, than the `--gpu-max-threads-per-block` the build sets."""
    if not known:
        return None
    if bound is not None:
        return over_bound(threads, bound, name) if threads > bound else None
    build = targets.build_max_threads()
    if build is None or threads <= build:
        return None
    return (f"Block of {threads} threads exceeds the build's `--gpu-max-threads-per-block={build}`; "
            "the launch fails.",
            Fix.advice(f"Add `__launch_bounds__({threads})` to `{name}`, or launch it with at most {build} threads"))


@dataclass
class _Site:
    """One place a block size is written: a launch's block argument, the `dim3` variable or
    `b.x = …` it is read from, a `__launch_bounds__`, a table of sizes."""

    node: object
    text: str
    dims: tuple
    severity: Severity
    why: str
    root: object | None  # the one constant definition the whole size is, if it is a name
    uses: list  # launches (call nodes) that read it
    message: str | None = None  # when the size is no constant (`min(n, 96)`): its own message
    # W011's: the launched kernel's warp operations that see both rows of a wavefront.
    observers: tuple[Related, ...] = ()


def _root_constant(context: LaunchContext, launch: Launch | None, node):
    """The definition of the one name `node` is (`kBlock`, `ns::kBlock`, a local `int
    threads = 256`), else None."""
    node = strip_parens(node)
    if node.type not in ("identifier", "qualified_identifier"):
        return None
    used: list = []
    if launch is None:
        context.constants.value(node, used)
    else:
        context._read(node, used, lambda n: context.constants.value(n, used))
    return used[-1] if used else None


def _launch_sites(source: SourceFile, context: LaunchContext, findings: list) -> dict[int, _Site]:
    sites: dict[int, _Site] = {}
    for launch in launches(source):
        shape = context.block_shape(launch)
        if shape is None or shape.threads is None:
            instantiated = _template_argument_sites(source, context, launch)
            sites.update((site.node.id, site) for site in instantiated)
            bounded_site = None if instantiated else _range_site(source, context, launch)
            if bounded_site is not None:
                sites[bounded_site.node.id] = bounded_site
            if shape is None or instantiated or bounded_site is not None:
                continue
        if _is_port(shape.sources, source):
            continue
        if shape.threads_at_least > MAX_THREADS_PER_BLOCK:
            continue  # K001's
        kernel = context.kernel_definition(launch)
        if _open_dims(context, launch, shape, kernel) is not None:
            continue  # finished by the project pass, with the headers' constants
        if kernel is not None and shape.threads is not None:
            known, bound = context.launch_bound(kernel)
            exceeded = exceeded_bound(shape.threads, known, bound, source.node_text(launch.kernel))
            if exceeded is not None:
                message, fix = exceeded
                findings.append(at_node(source, launch.block, message, fix, severity=Severity.ERROR,
                                        related=_where_set(launch, shape.sources, source)))
                continue
        if context.has_device_query(context.function_of(launch)):
            continue
        judged = judge_block(shape.dims, lambda: kernel is not None
                             and context.observes_by_rows(source.node_text(launch.kernel)))
        if judged is None:
            continue
        block = _dim3_of_fields(strip_parens(launch.block), source)
        origin = shape.sources[0] if shape.sources and block.type == "identifier" else None
        if origin is not None and origin.type in ("init_declarator", "function_declarator", "identifier",
                                                  "assignment_expression"):
            # A `dim3` variable: reported where it is built, once for every launch that reads it.
            node = origin.parent if origin.type != "assignment_expression" else origin
            root = None
        else:
            node, root = launch.block, _root_constant(context, launch, launch.block)
        site = sites.get(node.id)
        if site is None:
            site = sites[node.id] = _Site(node, " ".join(source.node_text(node).split()), shape.dims, *judged,
                                          root, [])
        elif judged[0].rank > site.severity.rank:  # a `dim3` several kernels launch with: the worst judgement
            site.severity, site.why = judged
        if judged[0] is Severity.WARNING and kernel is not None and not site.observers:
            body = kernel.child_by_field_name("body")
            if body is not None:
                site.observers = warp_model(source).related(body) + _row_width_uses(source, body, shape.dims[0])
        site.uses.append(launch.call)
    return sites


# Where a kernel launched with rows narrower than a wavefront writes the row's width itself:
# a flat id (`threadIdx.y * 32 + threadIdx.x`), a loop over a row (`c += 32`), per-row slots
# (`float partial[32]`). Giving each row a whole wavefront (W011's advice) changes these too.
_ROW_ARITHMETIC = frozenset({"*", "/", "%", "+", "-", "+=", "-="})


def _row_width_uses(source: SourceFile, body, width, limit: int = 6) -> tuple[Related, ...]:
    if not isinstance(width, int):
        return ()
    found, lines, needle, start = [], set(), str(width).encode(), body.start_byte
    while len(found) < limit:
        start = source.data.find(needle, start, body.end_byte)
        if start == -1:
            break
        node = body.descendant_for_byte_range(start, start + len(needle))
        start += len(needle)
        if node is None or integer_value(node, source) != width or node.parent is None:
            continue
        parent, line = node.parent, source.line_of(node.start_byte)
        operator = parent.child_by_field_name("operator")
        in_row_arithmetic = parent.type == "array_declarator" or (
            parent.type in ("binary_expression", "assignment_expression") and operator is not None
            and source.node_text(operator) in _ROW_ARITHMETIC)
        if in_row_arithmetic and line not in lines:
            lines.add(line)
            found.append(Related(source.location(node.start_byte, node.end_byte),
                                 f"The kernel takes a row to be {width} threads here"))
    return tuple(found)


def _range_site(source: SourceFile, context: LaunchContext, launch: Launch) -> _Site | None:
    """A block sized at run time under a constant cap (`min(n, 256)`) is no fixed size: it is
    reported only for what happens when it reaches a bound, more threads than AMD GPUs (or
    the kernel's bound) allow, or idle wavefront lanes."""
    function = context.function_of(launch)
    scope = function if function is not None else launch.call
    # Asked for every launch with a run-time block, once per function: most have no `min`.
    if not context._once("bounding calls", scope, lambda s: _BOUNDING_CALL.search(
            source.data, s.start_byte, s.end_byte) is not None):
        return None
    low, high, sources = context.block_range(launch)
    if (low is None and high is None) or _is_port(sources, source) or context.has_device_query(function):
        return None
    text = " ".join(source.node_text(launch.block).split())
    judged, message = _bounded_block(context, launch, text, low, high)
    if judged is None:
        return None
    node = launch.block
    origin = sources[0] if sources and _dim3_of_fields(strip_parens(node), source).type == "identifier" else None
    if origin is not None and origin.type in ("init_declarator", "function_declarator", "identifier"):
        node = origin.parent  # a `dim3` variable: reported where it is built, as a fixed one is
        text = " ".join(source.node_text(node).split())
        message = message.replace(f"`{source.node_text(launch.block)}`", f"`{text}`", 1)
    return _Site(node, text, (low, 1, 1), *judged, None, [launch.call], message)


def _bounded_block(context: LaunchContext, launch: Launch, text: str, low: int | None, high: int | None):
    """((severity, why), message) of a block between `low` and `high` threads, or (None, None)."""
    kernel = context.kernel_definition(launch)
    known, bound = context.launch_bound(kernel) if kernel is not None else (False, None)
    limit, limit_name = MAX_THREADS_PER_BLOCK, f"the {MAX_THREADS_PER_BLOCK} threads AMD GPUs launch"
    if known and bound is not None and bound < limit:
        limit, limit_name = bound, f"`{context.source.node_text(launch.kernel)}`'s bound of {bound}"
    if low is not None and low > limit:
        at_least = "" if low == high else "at least "
        why, fails = f"has {at_least}{low} threads, more than {limit_name}", "the launch fails"
    elif high is not None and high > limit:
        why, fails = f"can reach {high} threads, more than {limit_name}", "a launch that does fails"
    elif low is not None and low == high:  # `std::min(256, 512)`: a constant after all
        judged = judge_block((low, 1, 1), lambda: False)
        return (judged, _block_message(text, (low, 1, 1), judged[1])) if judged is not None else (None, None)
    elif high is not None and high >= 32 and high % targets.widest_wave().wave_size:
        why = f"is capped at {high} threads, which leaves lanes of its last wavefront idle: " \
              f"{targets.widest_wave().lanes()}"
        return (Severity.NOTE, why), f"Block `{text}` {why}."
    else:
        return None, None
    return (Severity.ERROR, why), f"Block `{text}` {why}; {fails}."


def _template_parameters(function) -> list[str | None]:
    """Names of the template parameters of a function template, in order (None for a type
    or template-template parameter); [] for a function that is no template."""
    template = function.parent
    if template is None or template.type != "template_declaration":
        return []
    names = []
    for parameter in template.child_by_field_name("parameters").named_children:
        declarator = parameter.child_by_field_name("declarator") if parameter.type == "parameter_declaration" else None
        names.append(declarator.text.decode() if declarator is not None and declarator.type == "identifier" else None)
    return names


def _template_argument_sites(source: SourceFile, context: LaunchContext, launch: Launch) -> list[_Site]:
    """A launch whose block is made of the enclosing function template's parameters, judged
    at each call with constant template arguments (`launch<32, 4>(out)`): one site per call."""
    function = context.function_of(launch)
    parameters = _template_parameters(function) if function is not None else []
    name = declared_name(function.child_by_field_name("declarator")) if parameters else None
    if name is None or not any(parameters):
        return []
    found = []
    for call in calls_named(source, source.node_text(name)):
        template = call.child_by_field_name("function")
        arguments_node = template.child_by_field_name("arguments") if template.type == "template_function" else None
        if arguments_node is None or context.has_device_query(enclosing_function(call)):
            continue
        used: list = []
        values = {}
        for parameter, argument in zip(parameters, arguments_node.named_children):
            value = context.constants.value(argument, used) if parameter else None
            if value is not None:
                values[parameter] = value

        def constant(node, values=values, used=used):
            text = source.node_text(node)
            return values[text] if node.type in ("identifier", "type_identifier") and text in values \
                else context.constants.value(node, used)
        dims = context._read_dims(launch, launch.block, used, lambda n: context._read(n, used, constant))
        if dims is None or None in dims or _is_port(tuple(used), source):
            continue
        judged = judge_block(dims, lambda: launch.kernel is not None
                             and context.observes_by_rows(source.node_text(launch.kernel)))
        if judged is not None:
            text = f"{source.node_text(launch.block)}` of `{' '.join(source.node_text(template).split())}"
            found.append(_Site(arguments_node, text, dims, *judged, None, [launch.call]))
    return found


def _macro_launch_blocks(source: SourceFile) -> dict[str, set[str]]:
    """Macro name -> the names its body launches with as the block (`k<<<grid, block>>>`
    inside `#define LAUNCH(n) ...`): the caller's variables of those names are the blocks."""
    bodies = macro_bodies_root(source, LAUNCH_OPENERS)
    found: dict[str, set[str]] = {}
    if bodies is None:
        return found
    for opener in LAUNCH_OPENERS:
        at = source.data.find(opener)
        while at != -1:
            token = bodies.descendant_for_byte_range(at, at + len(opener))
            config = token.parent if token is not None and token.type == "<<<" else None
            args = [c for c in config.named_children if c.type != "comment"] if config is not None else []
            macro = source.tree.root_node.descendant_for_byte_range(at, at + len(opener))
            while macro is not None and macro.type not in ("preproc_function_def", "preproc_def"):
                macro = macro.parent
            if len(args) >= 2 and strip_parens(args[1]).type == "identifier" and macro is not None:
                name = source.node_text(macro.child_by_field_name("name"))
                found.setdefault(name, set()).add(source.node_text(strip_parens(args[1])))
            at = source.data.find(opener, at + len(opener))
    return found


def _macro_launch_sites(source: SourceFile, context: LaunchContext, sites: dict[int, _Site]) -> None:
    """`dim3 block(256);` launched with through a macro (`LAUNCH_SOFTMAX(1);`), added to `sites`."""
    for macro, names in _macro_launch_blocks(source).items():
        for call in calls_named(source, macro):
            function = enclosing_function(call)
            if function is None or context.has_device_query(function):
                continue
            for name in names:
                declared = [(d, v) for d, v in context._dim3_declarations.get(name, ())
                            if _within(d, function) and d.end_byte <= call.start_byte and _within(call, d.parent)]
                if not declared:
                    continue
                declaration, declarator = declared[-1]
                if declaration.id in sites:
                    sites[declaration.id].uses.append(call)
                    continue
                if context._once(f"changed {name}", declaration.parent, lambda scope: context._changed(name, scope)):
                    continue
                used: list = [declarator]
                dims = context._dims(declarator, used, lambda n: context._read(
                    n, used, lambda m: context.constants.value(m, used)))
                judged = judge_block(dims, lambda: False) if dims is not None and None not in dims else None
                if judged is None or _is_port(tuple(used), source):
                    continue
                sites[declaration.id] = _Site(declaration, " ".join(source.node_text(declaration).split()), dims,
                                              *judged, None, [call])


def _bounds_sites(source: SourceFile, context: LaunchContext) -> list[_Site]:
    if b"__launch_bounds__" not in source.data:
        return []
    found = []
    for bounds in queries.nodes(CUDA, _LAUNCH_BOUNDS, source.tree.root_node, "bounds"):
        args = [a for a in bounds.named_children if a.type != "comment"]
        used: list = []
        threads = context.constants.value(args[0], used) if args else None
        if threads is None or _is_port(tuple(used), source):
            continue
        if threads > MAX_THREADS_PER_BLOCK:
            judged = Severity.ERROR, f"is more than the {MAX_THREADS_PER_BLOCK} threads AMD GPUs launch"
        else:
            judged = judge_block((threads, 1, 1), lambda: False)
        if judged is not None:
            found.append(_Site(bounds, source.node_text(args[0]), (threads, 1, 1), *judged,
                               _root_constant(context, None, args[0]), []))
    return found


def _table_sites(source: SourceFile, context: LaunchContext) -> list[_Site]:
    found = []
    root = source.tree.root_node
    for start, end in _block_tables(source.data):
        name = root.descendant_for_byte_range(start, end)
        declarator = name.parent.parent if name is not None and name.parent is not None else None
        if declarator is None or declarator.type != "init_declarator" or name.parent.type != "array_declarator":
            continue
        values = declarator.child_by_field_name("value")
        sizes = [context.constants.value(v) for v in values.named_children] if values is not None else []
        if len(sizes) < 2 or None in sizes or not _read_in_loop(source, name, declarator.parent):
            continue
        wave = targets.widest_wave()
        partial = [s for s in sizes if s % wave.wave_size]
        if max(sizes) > MAX_THREADS_PER_BLOCK:
            judged = Severity.ERROR, f"holds {max(sizes)}, more than the {MAX_THREADS_PER_BLOCK} threads AMD GPUs launch"
        elif partial:
            judged = Severity.NOTE, (f"holds {', '.join(map(str, partial))}, leaving wavefront lanes idle: "
                                        f"{wave.lanes()}")
        else:
            judged = Severity.NOTE, FIXED
        found.append(_Site(declarator.parent, source.node_text(name), (None, 1, 1), *judged, None, []))
    return found


def _read_in_loop(source: SourceFile, name, declaration) -> bool:
    """Is the table `name` subscripted inside a loop of the scope that declares it?"""
    scope = declaration.parent
    for use in identifiers_named(source, source.node_text(name), declaration.end_byte, scope.end_byte):
        if use.parent.type == "subscript_expression" and any(
                a.type in ("for_statement", "for_range_loop", "while_statement") for a in _ancestors(use, scope)):
            return True
    return False


def _ancestors(node, stop):
    node = node.parent
    while node is not None and node.id != stop.id:
        yield node
        node = node.parent


def _definition_span(source: SourceFile, node) -> tuple[int, int]:
    """A definition without the comment and newline a `#define` node ends with."""
    text = re.split(rb"//|/\*", source.data[node.start_byte:node.end_byte], maxsplit=1)[0]
    return node.start_byte, node.start_byte + len(text.rstrip())


# K002 and W011 share one pass over a file's block sizes: a block whose rows are narrower
# than a wavefront, launching a kernel whose warp operations observe the wavefront's width,
# is the only warning `judge_block` gives, and it is W011's (the logical warp's); the rest
# (notes, and the errors of a launch over its bounds) are K002's.
@needs(*LAUNCH_TOKENS, b"__launch_bounds__")
def check_hardcoded_block_size(source: SourceFile) -> list[Finding]:
    return [f for f in memoized(source, "block_sizes", _block_size_findings) if f.severity is not Severity.WARNING]


@needs(*LAUNCH_TOKENS)  # (a `__launch_bounds__` alone is only ever a note)
def check_rows_split_by_wavefront(source: SourceFile) -> list[Finding]:
    return [_rows_finding(f) for f in memoized(source, "block_sizes", _block_size_findings)
            if f.severity is Severity.WARNING]


ROWS_ADVICE = ("Give each row a whole wavefront (a block x of `warpSize`, or 64 on AMD), or keep each row's "
               "warp operations inside its 32 lanes: a width of 32 on every shuffle, `WarpReduce<T, 32>`, "
               "`tiled_partition<32>`")


def _rows_finding(found: Finding) -> Finding:
    return replace(found, message=found.message[:-1] + "; the launched kernel's warp operations see both rows.",
                   fix=Fix.advice(ROWS_ADVICE))


def _block_size_findings(source: SourceFile) -> list[Finding]:
    if not has_launches(source) and b"__launch_bounds__" not in source.data:
        return []
    context = LaunchContext.of(source)
    findings: list[Finding] = []
    sites: list[_Site] = []
    if has_launches(source):
        by_node = _launch_sites(source, context, findings)
        _macro_launch_sites(source, context, by_node)
        sites = list(by_node.values())
    sites += _bounds_sites(source, context)
    if has_launches(source):
        sites += _table_sites(source, context)
    by_root: dict[int, list[_Site]] = {}
    for site in sites:
        if site.root is not None:
            by_root.setdefault(site.root.id, []).append(site)
    reported: set[int] = set()
    fix = Fix.advice(QUERY_ADVICE)
    for site in sites:
        shared = by_root.get(site.root.id, []) if site.root is not None else []
        if len(shared) > 1:  # one constant, several launches: one finding, at the constant
            if site.root.id in reported:
                continue
            reported.add(site.root.id)
            worst = max(shared, key=lambda s: s.severity.rank)
            start, end = _definition_span(source, site.root)
            name = " ".join(source.data[start:end].decode("utf-8", "replace").split())
            related = tuple(Related(source.location(s.node.start_byte, s.node.end_byte),
                                    f"Read here: `{s.text}`") for s in shared)
            related += tuple(dict.fromkeys(r for s in shared for r in s.observers))
            message = f"Block size `{name}`, read in {len(shared)} places, {worst.why}."
            findings.append(finding(source, start, end, message, fix, severity=worst.severity, related=related))
            continue
        related = ()
        if site.root is not None:
            start, end = _definition_span(source, site.root)
            related = (Related(source.location(start, end), "The size is defined here: "
                               f"`{' '.join(source.data[start:end].decode('utf-8', 'replace').split())}`"),)
        elif site.uses and not any(_within(site.node, c) for c in site.uses):  # a `dim3` variable
            related = tuple(Related(source.location(c.start_byte, c.end_byte), "Launched with it here")
                            for c in site.uses)
        related += site.observers
        if site.message is not None:
            message = site.message
        elif site.node.type == "launch_bounds":
            message = f"`__launch_bounds__({site.text})` {site.why}."
        elif site.dims[0] is None:
            message = f"Block-size table `{site.text}` {site.why}."
        else:
            message = _block_message(site.text, site.dims, site.why)
        findings.append(at_node(source, site.node, message, fix, severity=site.severity, related=related))
    return findings


# ---- K001 and K002 across files: block sizes from included headers -----------------------
@dataclass(unsafe_hash=True)
class OpenLaunch:
    """A launch whose block size names constants its file leaves to included headers."""

    file: str  # `file_key` of the launching file, to find what it includes
    location: Location  # the block argument
    text: str
    digest: str
    dims: tuple  # per dimension: an int, an `Expr` with open names, or None
    set_at: tuple[Related, ...]  # the dim3 variable the block was read from
    port: bool  # the block is set in ROCm-only code
    queried: bool = False  # the launching function asks the device for its limits
    # The launched kernel, defined in this file, uses warp operations that observe the wavefront's
    # width: True, False, or the names of header widths that decide (`observes_by_rows`).
    warp_ops: bool | tuple[str, ...] = False
    # For K002, when this file defines the launched kernel:
    kernel: str | None = None
    bound: Expr | None = None  # its `__launch_bounds__`; None without one
    bound_known: bool = False


def _open_dims(context: LaunchContext, launch: Launch, shape: BlockShape | None, kernel):
    """(dims, sources) of a launch the project pass has to finish, else None: its block
    names a header's constant, or the launched kernel's bound does, or whether the kernel's
    warp operations observe the wavefront hangs on a header's width (for a block of rows)."""
    if shape is None or shape.threads is None:
        return context.open_shape(launch, launch.block)
    bound = context.launch_bound(kernel, context.constants.expression)[1] if kernel is not None else None
    if isinstance(bound, tuple):
        return shape.dims, shape.sources
    x = shape.dims[0]
    if kernel is not None and isinstance(x, int) and x % targets.widest_wave().wave_size and \
            isinstance(context.observes_by_rows(context.source.node_text(launch.kernel)), tuple):
        return shape.dims, shape.sources
    return None


def observed_with_headers(index: ProjectIndex, fact) -> bool:
    """`fact.warp_ops` with the header widths it names read: an operation whose width the
    headers make 32 or less stays in its row's lanes."""
    if not isinstance(fact.warp_ops, tuple):
        return fact.warp_ops
    for name in fact.warp_ops:
        value, _ = index.resolve(fact.file, ("name", name.rsplit("::", 1)[-1]))
        if value is None or value > 32:
            return True
    return False


def open_launches(source: SourceFile) -> list[OpenLaunch]:
    """The file's launches whose block size the project pass has to finish reading."""
    if source.language != CUDA or not has_launches(source):
        return []
    context = LaunchContext.of(source)
    found = []
    for launch in launches(source):
        kernel = context.kernel_definition(launch)
        opened = _open_dims(context, launch, context.block_shape(launch), kernel)
        if opened is None:
            continue
        dims, sources = opened
        block = launch.block
        facts = dict(
            file=file_key(source), location=source.location(block.start_byte, block.end_byte),
            text=source.node_text(block), digest=source.digest, dims=dims,
            set_at=_where_set(launch, sources, source), port=_is_port(sources, source),
            queried=context.has_device_query(context.function_of(launch)),
        )
        if kernel is not None:
            known, bound = context.launch_bound(kernel, context.constants.expression)
            facts.update(kernel=source.node_text(launch.kernel), bound=bound, bound_known=known,
                         warp_ops=context.observes_by_rows(source.node_text(launch.kernel)))
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
    return [f for f in _block_sizes_across_files(index) if f.severity is not Severity.WARNING]


def check_rows_split_by_wavefront_across_files(index: ProjectIndex) -> list[Finding]:
    return [_rows_finding(f) for f in _block_sizes_across_files(index) if f.severity is Severity.WARNING]


def _block_sizes_across_files(index: ProjectIndex) -> list[Finding]:
    return index.memoized("block_sizes_across_files", _judge_open_launches)  # K002's and W011's: one pass


def _judge_open_launches(index: ProjectIndex) -> list[Finding]:
    findings = []
    by_variable: dict[tuple, list] = {}  # a `dim3` variable several launches read: one finding, where it is set
    for fact in index.open_facts(OpenLaunch):
        if fact.port:
            continue
        dims, definitions = _resolved_dims(index, fact)
        if prod(d for d in dims if d is not None) > MAX_THREADS_PER_BLOCK:
            continue  # K001's
        if any(d.status is Status.PORT for d in definitions):
            continue
        related = fact.set_at + defined_at(definitions)
        threads = None if None in dims else prod(dims)
        if fact.kernel is not None and fact.bound_known and threads is not None:
            bound, bound_definitions = index.resolve(fact.file, fact.bound) if fact.bound is not None else (None, ())
            exceeded = exceeded_bound(threads, fact.bound is None or bound is not None, bound, fact.kernel)
            if exceeded is not None:
                message, fix = exceeded
                findings.append(finding_at(fact, message, fix, tuple(dict.fromkeys(
                    related + defined_at(bound_definitions))), severity=Severity.ERROR))
                continue
        judged = None if fact.queried else judge_block(dims, lambda: observed_with_headers(index, fact))
        if judged is None:
            continue
        if fact.set_at:
            key = (fact.set_at[0].location.path, fact.set_at[0].location.start_line, fact.set_at[0].location.start_column)
            by_variable.setdefault(key, []).append((fact, dims, judged, definitions))
            continue
        severity, why = judged
        findings.append(finding_at(fact, _block_message(fact.text, dims, why), Fix.advice(QUERY_ADVICE),
                                   related, severity=severity))
    for facts in by_variable.values():
        fact, dims, _, definitions = facts[0]
        severity, why = max((judged for _, _, judged, _ in facts), key=lambda judged: judged[0].rank)
        where = fact.set_at[0]
        text = where.message.split("`", 1)[1].rsplit("`", 1)[0]  # `dim3 block(…);` as `_where_set` quotes it
        launched = tuple(Related(f.location, "Launched with it here") for f, _, _, _ in facts)
        findings.append(Finding(location=where.location, message=_block_message(text, dims, why),
                                fix=Fix.advice(QUERY_ADVICE), severity=severity,
                                related=launched + defined_at(definitions), matched=text, file_digest=fact.digest))
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
