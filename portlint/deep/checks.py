"""The deep versions of the rules where text is weakest, on libclang's AST.

Each check reports under the rule's own code, at the place the fast rule would (so the
engine can merge the two), and only what needs clang: values of macros and constants
from any header, types behind typedefs and `auto`, which functions are device code,
real symbol names. Messages and fix advice come from the rule modules where they exist.

`UnitAnalysis` runs every check on one file's translation unit and returns plain,
picklable facts (`UnitResult`); R002 joins kernels and lookups of all units afterwards.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from math import prod
from pathlib import Path

from portlint import rocm_path
from portlint.checks.launch import (
    ATTRIBUTE_QUERIES, DEVICE_QUERIES, MAX_THREADS_PER_BLOCK, PROPERTY_FIELDS,
    over_bound, too_many_threads,
)
from portlint.checks.preprocessor import CUDA_ARCH, DEVICE_PASS, HIP_MACROS
from portlint.checks.wavefront import BIT_FUNCTIONS
from portlint.checks.wavefront import HOST_ADVICE, MASK_INTRINSICS, MASK_TYPE
from portlint.deep import diagnostics
from portlint.deep import translation_unit as clang
from portlint.deep.compile_db import CompileFlags
from portlint.finding import Finding, Related, finding
from portlint.fix import Edit, Fix
from portlint.project import LAUNCH_APIS, MODULE_LOOKUPS, NAME_EXPRESSIONS
from portlint.rocm_path import Status
from portlint.shown_paths import shows_paths
from portlint.source import CUDA, Location, SourceFile

# Lane arithmetic: operator -> the value that means "32 lanes" (as in W001).
_LANE_OPERATORS = {clang.REM: 32, clang.DIV: 32, clang.AND: 31, clang.SHR: 5, clang.EQ: 31, clang.NE: 31}
_OPERATOR_TEXT = {clang.REM: "%", clang.DIV: "/", clang.AND: "&", clang.SHR: ">>", clang.EQ: "==", clang.NE: "!="}
_COMMUTATIVE = frozenset({clang.AND, clang.EQ, clang.NE})
_CONFIGURATION_CALLS = frozenset({
    "__hipPushCallConfiguration", "hipConfigureCall", "__cudaPushCallConfiguration", "cudaConfigureCall",
})
# Words before a function's name that are not its return type.
_SPECIFIERS = frozenset({
    "__device__", "__host__", "__global__", "__forceinline__", "__noinline__", "static", "inline", "extern",
    "constexpr", "virtual", "explicit", "friend", "__inline__", "const", "volatile", "__shared__", "register",
})
_BUILTIN_TYPE_WORDS = frozenset({"unsigned", "signed", "int", "long", "short", "char", "const", "volatile"})
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif)\b((?:[^\n]*\\\n)*[^\n]*)", re.M)
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_RECURSION_LIMIT = 8


@dataclass(unsafe_hash=True)
class Job:
    """One translation unit to analyse: picklable, for a worker process."""

    path: Path  # resolved
    flags: CompileFlags
    scanned: dict[str, str]  # resolved path of every scanned C-family file -> its display path
    root: Path
    rocm_macros: frozenset[str]
    codes: frozenset[str]
    hipified: bool = False  # the ROCm build hipifies the unit (`BuildFiles.hipified`)


@shows_paths("path")
@dataclass(unsafe_hash=True)
class Cleared:
    """A region where clang shows a fast-mode finding of `code` to be wrong."""

    code: str
    path: str
    start: int
    end: int


@dataclass(unsafe_hash=True)
class KernelSymbol:
    name: str
    symbol: str  # what the device pass emits: mangled, or the plain name with C linkage; "" for a template
    location: Location
    file_digest: str
    is_template: bool


@dataclass(unsafe_hash=True)
class Lookup:
    name: str
    location: Location


@shows_paths("path")
@dataclass
class UnitResult:
    path: str  # display path of the translation unit's file
    findings: list[Finding] = field(default_factory=list)
    cleared: list[Cleared] = field(default_factory=list)
    kernels: list[KernelSymbol] = field(default_factory=list)
    lookups: list[Lookup] = field(default_factory=list)
    lowered: set[str] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)
    failure: str | None = None  # why the unit could not be parsed: the file keeps fast mode only
    stopped: list[str] = field(default_factory=list)  # checks that stopped on this unit, and why
    included: set[str] = field(default_factory=set)  # every file clang read for the unit: the cache's key
    headers: str = ""  # the header set X001 read: `diagnostics.STAND_INS` or `HipHeaders.describe()`


def analyze_unit(job: Job) -> UnitResult:
    """Parse one unit in its passes and run the deep checks (in a worker process)."""
    result = UnitResult(path=job.scanned.get(str(job.path), str(job.path)))
    if job.flags.directory is not None:
        try:  # where the build ran the compiler: what a relative path left in the flags means
            os.chdir(job.flags.directory)
        except OSError:
            pass
    try:
        UnitAnalysis(job, result).run()
    except clang.ParseFailure as exc:
        result.failure = str(exc)
    except RecursionError:
        result.failure = "nesting too deep to analyse"
    return result


class UnitAnalysis:
    def __init__(self, job: Job, result: UnitResult):
        self.job = job
        self.result = result
        self.kinds = clang.cindex().CursorKind
        self._sources: dict[str, SourceFile | None] = {}
        self._models: dict[str, rocm_path.RocmPathModel] = {}
        self._real: dict[str, str] = {}
        self._assigned: dict[str, set[str]] = {}
        self._reported_returns: set[str] = set()
        self._macro_cursors: dict | None = None  # of the pass read last: `__launch_bounds__`, lane constants
        self._host_nodes: list[tuple] = []

    def run(self) -> None:
        codes = self.job.codes
        real = clang.real_hip_headers() if "X001" in codes else None
        if codes == {"X001"} and real is not None:  # the stand-in passes would be parsed for nothing
            try:
                passes = self.real_passes(real)
            except clang.ParseFailure:
                pass  # the stand-ins' view, below: the same failure, or the header-independent errors
            else:
                self.result.missing = clang.missing_includes(passes[1])
                self._guarded("X001", self.check_clang_errors, passes, real)
                return
        device = self.parse(clang.HIP_DEVICE)
        host = self.parse(clang.HIP_HOST)
        self.result.missing = clang.missing_includes(host)
        if "X001" in codes:
            passes = (device, host)
            if real is not None:
                try:
                    passes = self.real_passes(real)
                except clang.ParseFailure:
                    real = None  # the real headers' macros break the file's syntax: the stand-ins' view
            self._guarded("X001", self.check_clang_errors, passes, real)
        if not codes - {"X001"}:
            return
        device_nodes, host_nodes = self._guarded("the AST walk", lambda: (self._nodes(device), self._nodes(host))) \
            or ([], [])
        self._host_nodes = host_nodes
        if "W001" in codes:
            self._guarded("W001", self.check_lane_constants, device_nodes)
        if "W003" in codes:
            self._guarded("W003", self.check_mask_widths, device_nodes)
        if "R002" in codes:
            self._guarded("R002", self.collect_symbols, device_nodes, host_nodes)
        if codes & {"K001", "K002"}:
            self._guarded("K001/K002", self.check_launches, host_nodes)
        if "W008" in codes:
            self._guarded("W008", self.check_host_warp_size, host_nodes)
        if "P001" in codes:
            self._guarded("P001", self.check_pass_macros, device, host)

    def real_passes(self, real) -> tuple:
        """The device and host passes with the real HIP `headers`. nvcc includes the CUDA
        runtime in every source; hip-clang does not: where the unit uses the runtime's
        names undeclared, that is one X001 per file, and the passes are parsed again with
        the runtime included, as hipify leaves the file, for the errors that remain."""
        passes = (self.parse(clang.HIP_DEVICE, real), self.parse(clang.HIP_HOST, real))
        unincluded = diagnostics.runtime_not_included(self, passes)
        if not unincluded:
            return passes
        if not self.job.hipified:  # hipify adds the runtime include to a source that launches kernels
            diagnostics.report_runtime_not_included(self, unincluded)
        return (self.parse(clang.HIP_DEVICE, real, runtime=True), self.parse(clang.HIP_HOST, real, runtime=True))

    def parse(self, mode, headers=None, runtime: bool = False):
        tu = clang.parse(self.job.path, self.job.flags, mode, headers, runtime)
        self.result.included.add(str(self.job.path))
        # Absolute here, where the worker runs from the entry's directory: the parent reads them.
        # Not the generated hipify headers: made per process, they derive from portlint's own code.
        generated = str(clang.hipified_cuda_headers()) + os.sep
        self.result.included.update(path for i in tu.get_includes() if i.include is not None
                                    and not (path := os.path.abspath(i.include.name)).startswith(generated))
        return tu

    def _guarded(self, name: str, check, *args):
        """Run one check: whatever libclang or the bindings throw at it (a node they cannot
        describe, a crash in a cursor method) stops that check on this unit only."""
        try:
            return check(*args)
        except RecursionError:
            self.result.stopped.append(f"{name}: nesting too deep to analyse")
        except Exception as exc:  # noqa: BLE001 - one line for the unit, the other checks go on
            self.result.stopped.append(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return None

    def check_clang_errors(self, passes, headers) -> None:
        """X001: hip-clang's errors in project code, from the device and host `passes` parsed
        with the real HIP `headers` (a `HipHeaders`), or with the stand-ins (None)."""
        self.result.headers = headers.describe() if headers is not None else diagnostics.STAND_INS
        missing = diagnostics.missing_headers(passes[1])
        for tu in passes:
            diagnostics.clang_errors(self, tu, header_independent_only=headers is None or bool(missing))

    # ---- where things are ----------------------------------------------------------
    def _path(self, file) -> str | None:
        """The display path of a clang file when it is a scanned file, else None."""
        if file is None:
            return None
        name = file.name
        if name not in self._real:
            self._real[name] = os.path.realpath(name)
        return self.job.scanned.get(self._real[name])

    def source(self, shown: str) -> SourceFile | None:
        if shown not in self._sources:
            absolute = next(p for p, s in self.job.scanned.items() if s == shown)
            try:
                data = Path(absolute).read_bytes()
            except OSError:
                data = None
            self._sources[shown] = SourceFile(shown, CUDA, data, Path(absolute)) if data is not None else None
        return self._sources[shown]

    def span(self, cursor) -> tuple[SourceFile, int, int] | None:
        """(file, start, end) of a cursor in a scanned file; macro expansions map to their use."""
        extent = cursor.extent
        shown = self._path(extent.start.file)
        if shown is None or extent.end.file is None or extent.end.file.name != extent.start.file.name:
            return None
        source = self.source(shown)
        if source is None or extent.end.offset > len(source.data):
            return None
        return source, extent.start.offset, max(extent.start.offset, extent.end.offset)

    def related(self, cursor, message: str) -> tuple[Related, ...]:
        """A related location at `cursor`, in any file (a header outside the scan too)."""
        location = cursor.location
        if location.file is None or cursor.extent.end.file is None:
            return ()
        path = Path(os.path.realpath(location.file.name))
        shown = self.job.scanned.get(str(path)) or _shown(path)
        try:
            data = path.read_bytes()
        except OSError:
            return ()
        start = location.offset
        end = cursor.extent.end.offset if cursor.extent.end.file.name == location.file.name else start
        source = SourceFile(shown, CUDA, data, path)
        return (Related(source.location(start, max(start, min(end, len(data)))), message),)

    def status(self, source: SourceFile, offset: int) -> Status:
        if source.path not in self._models:
            self._models[source.path] = rocm_path.build(source, self.job.rocm_macros)
        return self._models[source.path].status(offset)

    def report(self, code: str, where, message: str, fix: Fix, related: tuple[Related, ...] = ()) -> None:
        source, start, end = where
        self.result.findings.append(replace(finding(source, start, end, message, fix, related=related), code=code))

    # ---- the AST -------------------------------------------------------------------
    def _nodes(self, tu) -> list[tuple]:
        """(cursor, enclosing function or lambda, in device code) for everything declared in
        scanned files, in source order. Headers outside the scan are not walked. Templates are
        read as written (clang evaluates nothing value-dependent); instantiations are not seen."""
        functions = {self.kinds.FUNCTION_DECL, self.kinds.CXX_METHOD, self.kinds.FUNCTION_TEMPLATE,
                     self.kinds.CONSTRUCTOR, self.kinds.DESTRUCTOR, self.kinds.LAMBDA_EXPR}
        top = [c for c in tu.cursor.get_children() if self._path(c.location.file) is not None]
        found = []
        stack = [(c, None, False) for c in reversed(top)]
        while stack:
            cursor, function, device = stack.pop()
            found.append((cursor, function, device))
            if cursor.kind in functions:
                # A lambda in device code is device code, with or without `__device__`.
                device = self._is_device(cursor) or (device and cursor.kind == self.kinds.LAMBDA_EXPR)
                function = cursor
            stack.extend((c, function, device) for c in reversed(list(cursor.get_children())))
        return found

    def _is_device(self, function) -> bool:
        """Device code: `__device__`/`__global__` functions and `[=] __device__ (...)` lambdas."""
        if function is None:
            return False
        if function.kind == self.kinds.LAMBDA_EXPR:
            for token in function.get_tokens():
                if token.spelling == "{":
                    return False
                if token.spelling in ("__device__", "__global__"):
                    return True
            return False
        return bool(clang.attributes(function) & {"device", "global"})

    def _assigned_names(self, function) -> set[str]:
        """USRs of the variables assigned, incremented or whose address is taken in `function`."""
        key = function.get_usr() or f"{function.spelling}@{function.extent.start.offset}"
        if key not in self._assigned:
            names = set()
            for cursor in function.walk_preorder():
                changes = False
                if cursor.kind in (self.kinds.BINARY_OPERATOR, self.kinds.COMPOUND_ASSIGNMENT_OPERATOR):
                    kind = clang.binary_operator(cursor)
                    changes = kind == clang.ASSIGN or kind in clang.COMPOUND_ASSIGNMENTS
                elif cursor.kind == self.kinds.UNARY_OPERATOR:  # `++x`, `x--`, `&x`
                    tokens = clang.tokens(cursor)
                    changes = tokens[:1] in (["++"], ["--"], ["&"]) or tokens[-1:] in (["++"], ["--"])
                target = clang.strip(next(cursor.get_children(), None)) if changes else None
                if target is not None and target.kind == self.kinds.DECL_REF_EXPR and target.referenced is not None:
                    names.add(target.referenced.get_usr())
            self._assigned[key] = names
        return self._assigned[key]

    def _local_value(self, reference, function):
        """The initialiser of a local variable set once, for `reference` to it; else None."""
        declaration = reference.referenced
        if (declaration is None or declaration.kind != self.kinds.VAR_DECL or function is None
                or declaration.semantic_parent is None
                or declaration.semantic_parent.kind == self.kinds.TRANSLATION_UNIT
                or declaration.get_usr() in self._assigned_names(function)):
            return None
        children = [c for c in declaration.get_children() if c.kind.is_expression()]
        return children[-1] if children else None

    # ---- W001: lane arithmetic with a constant clang evaluates ------------------------
    def check_lane_constants(self, nodes) -> None:
        for cursor, function, device in nodes:
            if cursor.kind != self.kinds.BINARY_OPERATOR:
                continue
            op = clang.binary_operator(cursor)
            if op not in _LANE_OPERATORS:
                continue
            operands = list(cursor.get_children())
            if len(operands) != 2:
                continue
            pairs = [(operands[1], operands[0])] + ([(operands[0], operands[1])] if op in _COMMUTATIVE else [])
            for constant, operand in pairs:
                if clang.evaluate_int(constant) != _LANE_OPERATORS[op]:
                    continue
                if _is_literal(constant):  # the fast rule reads literals; clang only judges their operand
                    if self._is_bytes(operand, function, 0):
                        self._clear("W001", cursor)
                    continue
                if device and self._is_lane_operand(op, operand, function):
                    self._report_lane_constant(cursor, op, constant)
                break

    def _is_lane_operand(self, op: int, operand, function) -> bool:
        if op in (clang.EQ, clang.NE):  # `lane == LAST_LANE`
            operand = clang.strip(operand)
            if operand.kind == self.kinds.DECL_REF_EXPR:
                value = self._local_value(operand, function)
                return value is not None and self._is_lane(value, function)
            return self._is_lane(operand, function)
        return self._is_thread(operand, function, 0)

    def _is_lane(self, cursor, function) -> bool:
        """`threadIdx.x % 32`, `tid & (WARP - 1)`, `__lane_id()`."""
        cursor = clang.strip(cursor)
        if cursor.kind == self.kinds.CALL_EXPR:
            return cursor.spelling == "__lane_id"
        if cursor.kind != self.kinds.BINARY_OPERATOR or clang.binary_operator(cursor) not in (clang.REM, clang.AND):
            return False
        left = next(cursor.get_children(), None)
        return left is not None and self._is_thread(left, function, 0)

    def _is_thread(self, cursor, function, depth: int) -> bool:
        """A thread's index in its block, as clang sees it: `threadIdx`/`blockDim` members,
        locals set once from them, sums and `threadIdx.y * blockDim.x` of those."""
        cursor = clang.strip(cursor)
        if cursor is None or depth > _RECURSION_LIMIT:
            return False
        kind = cursor.kind
        if kind == self.kinds.MEMBER_REF_EXPR:
            base = clang.strip(next(cursor.get_children(), None))
            return base is not None and base.kind == self.kinds.DECL_REF_EXPR and base.spelling in ("threadIdx", "blockDim")
        if kind == self.kinds.CALL_EXPR:
            if cursor.spelling == "__lane_id":
                return True
            children = list(cursor.get_children())  # `threadIdx.x` through a conversion operator (real HIP headers)
            return cursor.spelling.startswith("operator ") and len(children) == 1 and \
                self._is_thread(children[0], function, depth + 1)
        if kind == self.kinds.DECL_REF_EXPR:
            value = self._local_value(cursor, function)
            return value is not None and self._is_thread(value, function, depth + 1)
        if kind in (self.kinds.CSTYLE_CAST_EXPR, self.kinds.CXX_STATIC_CAST_EXPR, self.kinds.CXX_FUNCTIONAL_CAST_EXPR):
            children = [c for c in cursor.get_children() if c.kind.is_expression()]
            return bool(children) and self._is_thread(children[-1], function, depth + 1)
        if kind == self.kinds.BINARY_OPERATOR:
            op = clang.binary_operator(cursor)
            left, right = list(cursor.get_children())
            thread = lambda c: self._is_thread(c, function, depth + 1)  # noqa: E731
            if op in (clang.ADD, clang.SUB):
                return (thread(left) and (thread(right) or _is_literal(right))) or (_is_literal(left) and thread(right))
            if op == clang.MUL:
                return thread(left) and thread(right)
        return False

    def _is_bytes(self, cursor, function, depth: int) -> bool:
        """A byte count or an address: scaled by `sizeof`, or a pointer converted to an integer."""
        cursor = clang.strip(cursor)
        if cursor is None or depth > _RECURSION_LIMIT:
            return False
        kind = cursor.kind
        if kind == self.kinds.CXX_UNARY_EXPR:
            return clang.first_token(cursor) in ("sizeof", "alignof")
        if kind == self.kinds.DECL_REF_EXPR:
            value = self._local_value(cursor, function)
            return value is not None and self._is_bytes(value, function, depth + 1)
        if kind in (self.kinds.CSTYLE_CAST_EXPR, self.kinds.CXX_STATIC_CAST_EXPR,
                    self.kinds.CXX_REINTERPRET_CAST_EXPR, self.kinds.CXX_FUNCTIONAL_CAST_EXPR):
            children = [c for c in cursor.get_children() if c.kind.is_expression()]
            if not children:
                return False
            inner = clang.strip(children[-1])
            return inner.type.get_canonical().kind == clang.cindex().TypeKind.POINTER or \
                self._is_bytes(inner, function, depth + 1)
        if kind == self.kinds.BINARY_OPERATOR and clang.binary_operator(cursor) in (clang.MUL, clang.ADD, clang.SUB, clang.SHL):
            return any(self._is_bytes(c, function, depth + 1) for c in cursor.get_children())
        return False

    def _clear(self, code: str, cursor) -> None:
        where = self.span(cursor)
        if where is not None:
            self.result.cleared.append(Cleared(code, where[0].path, where[1], where[2]))

    def _report_lane_constant(self, cursor, op: int, constant) -> None:
        where = self.span(cursor)
        if where is None:
            return
        source, start, end = where
        shown = _short(source.data[start:end].decode("utf-8", "replace"))
        constant_at = self.span(constant)
        named = _short(constant_at[0].data[constant_at[1]:constant_at[2]].decode("utf-8", "replace"), 24) \
            if constant_at is not None else "the constant"
        value = _LANE_OPERATORS[op]
        definition = self._definition_of(constant, named)
        related = self.related(definition, f"`{named}` is defined here") if definition is not None else ()
        self.report("W001", where,
                    f"`{shown}` assumes 32-lane warps: `{named}` is {value} here; AMD wavefronts have 64.",
                    Fix.advice(f"Replace `{named}` with `warpSize` in device code, or give it a per-platform value: "
                               "64 under `#if defined(__GFX8__) || defined(__GFX9__)`, else 32"),
                    related)

    def _definition_of(self, constant, name: str):
        """The macro or constant a lane constant is spelled with, for a related location."""
        if not name.isidentifier():
            return None
        reference = clang.strip(constant)
        if reference.kind == self.kinds.DECL_REF_EXPR and reference.spelling == name and reference.referenced is not None:
            return reference.referenced
        if self._macro_cursors is None:
            self._macro_cursors = self._macros(constant.translation_unit)
        return self._macro_cursors.get(name)

    # ---- W003: lane masks narrowed to 32 bits (HIP's masks are 64-bit) -------------------
    def check_mask_widths(self, nodes) -> None:
        for cursor, function, _ in nodes:
            kind = cursor.kind
            if kind == self.kinds.VAR_DECL:
                self._mask_declaration(cursor, function)
            elif kind == self.kinds.BINARY_OPERATOR and clang.binary_operator(cursor) == clang.ASSIGN:
                target, value = list(cursor.get_children())
                origin = self._narrowed_mask(target.type, value, function)
                where = self.span(target) if origin else None
                if where is not None:
                    text = where[0].data[where[1]:where[2]].decode("utf-8", "replace")
                    self.report("W003", where, f"`{_short(text)}` holds 32 lanes of {origin}; AMD wavefronts have 64.",
                                Fix.advice(f"Store the mask in `{MASK_TYPE}`"))
            elif kind == self.kinds.RETURN_STMT and function is not None and function.kind != self.kinds.LAMBDA_EXPR:
                value = next(cursor.get_children(), None)
                origin = self._narrowed_mask(function.result_type, value, function) if value is not None else None
                if origin:
                    self._mask_return(function, origin)
            elif kind == self.kinds.CALL_EXPR and cursor.spelling in BIT_FUNCTIONS:
                self._mask_bit_function(cursor, function)

    def _mask_bit_function(self, call, function) -> None:
        """`__popc(m)` of a 64-bit mask: HIP's `__popc` takes 32 bits (as the fast rule says it)."""
        arguments = list(call.get_arguments())
        origin = self._narrowed_mask(arguments[0].type, arguments[0], function) if len(arguments) == 1 else None
        callee = next(call.get_children(), None)
        where = self.span(callee) if origin and callee is not None else None
        if where is None:
            return
        name, wide = call.spelling, BIT_FUNCTIONS[call.spelling]
        make = Fix.safe if wide.same_on_cuda in ("always", "unsigned") else Fix.unsafe  # the mask is unsigned
        self.report("W003", where, f"`{name}` {wide.verb} 32 lanes of {origin}; AMD wavefronts have 64.",
                    make(f"Replace `{name}` with `{wide.wide}`{wide.note}", Edit(where[1], where[2], wide.wide)))

    def _mask_declaration(self, declaration, function) -> None:
        values = [c for c in declaration.get_children() if c.kind.is_expression()]
        if not values:
            return
        origin = self._narrowed_mask(declaration.type, values[-1], function)
        if origin is None and declaration.type.kind == clang.cindex().TypeKind.AUTO:
            origin = self._mask_from_narrowing_call(values[-1])
        written = self._type_span(declaration) if origin is not None else None
        if written is None:
            return
        source, start, end = written
        type_text = source.data[start:end].decode("utf-8", "replace")
        name = declaration.spelling
        canonical = declaration.type.get_canonical().spelling
        # Name the real type when the written one hides it: a typedef, `auto`.
        hidden = set(type_text.split()) - _BUILTIN_TYPE_WORDS
        shown = f"`{type_text} {name}`" + (f" (`{canonical}`)" if hidden else "")
        related = ()
        typedef = next((c for c in declaration.get_children() if c.kind == self.kinds.TYPE_REF), None)
        if typedef is not None and typedef.referenced is not None:
            related = self.related(typedef.referenced, f"`{type_text}` is `{canonical}`, defined here")
        self.report("W003", written, f"{shown} holds 32 lanes of {origin}; AMD wavefronts have 64.",
                    Fix.unsafe(f"Declare `{name}` as `{MASK_TYPE}`", Edit(start, end, MASK_TYPE)), related)

    def _mask_return(self, function, origin: str) -> None:
        written = self._type_span(function)
        if written is None or function.get_usr() in self._reported_returns:
            return
        self._reported_returns.add(function.get_usr())
        source, start, end = written
        type_text = source.data[start:end].decode("utf-8", "replace")
        self.report("W003", written, f"Return type `{type_text}` holds 32 lanes of {origin}; AMD wavefronts have 64.",
                    Fix.unsafe(f"Return `{MASK_TYPE}` (and widen the callers' variables)", Edit(start, end, MASK_TYPE)))

    def _type_span(self, declaration):
        """The written type before a declaration's name, without specifiers (`__device__`, `static`)."""
        where = self.span(declaration)
        if where is None or declaration.location.file is None:
            return None
        source = where[0]
        name_at = declaration.location.offset
        tokens = [t for t in declaration.get_tokens() if t.extent.start.offset < name_at]
        while tokens and tokens[0].spelling in _SPECIFIERS:
            tokens.pop(0)
        if declaration.kind == self.kinds.FUNCTION_TEMPLATE and ">" in [t.spelling for t in tokens]:
            return None  # `template <...> T f()`: not a plain return type
        if not tokens or tokens[-1].spelling in ("*", "&", "::"):
            return None
        return source, tokens[0].extent.start.offset, tokens[-1].extent.end.offset

    def _narrowed_mask(self, target_type, value, function) -> str | None:
        """The origin (`__ballot_sync`) when a 64-bit lane mask is stored in a narrower integer."""
        bits = clang.integer_bits(target_type)
        if bits is None or bits >= 64:
            return None
        inner = clang.strip(value)
        if clang.integer_bits(inner.type) != 64:
            return None
        return self._mask_origin(inner, function, 0)

    def _mask_origin(self, cursor, function, depth: int) -> str | None:
        cursor = clang.strip(cursor)
        if cursor is None or depth > _RECURSION_LIMIT:
            return None
        kind = cursor.kind
        if kind == self.kinds.CALL_EXPR:
            if cursor.spelling in MASK_INTRINSICS:
                return f"`{cursor.spelling}`"
            if cursor.spelling in ("__brev", "__brevll"):
                arguments = list(cursor.get_arguments())
                return self._mask_origin(arguments[0], function, depth + 1) if arguments else None
            return None
        if kind == self.kinds.DECL_REF_EXPR:
            value = self._local_value(cursor, function)
            return self._mask_origin(value, function, depth + 1) if value is not None else None
        if kind == self.kinds.UNARY_OPERATOR and clang.first_token(cursor) == "~":
            return self._mask_origin(next(cursor.get_children()), function, depth + 1)
        if kind == self.kinds.BINARY_OPERATOR:
            op = clang.binary_operator(cursor)
            left, right = list(cursor.get_children())
            if op == clang.SUB and clang.evaluate_int(right) == 1:
                return self._mask_origin(left, function, depth + 1)
            if op in (clang.AND, clang.OR, clang.XOR):
                if op == clang.AND and (_is_literal(left) or _is_literal(right)):
                    return None  # `__ballot(p) & 0xffffffff`: the low half, on purpose
                return self._mask_origin(left, function, depth + 1) or self._mask_origin(right, function, depth + 1)
        return None

    def _mask_from_narrowing_call(self, value) -> str | None:
        """`auto m = vote(p);` where `vote`, defined outside the scan, returns a ballot in 32 bits:
        `auto` deduces the narrow type and nothing in the scanned files says so."""
        call = clang.strip(value)
        if call.kind != self.kinds.CALL_EXPR or call.referenced is None:
            return None
        callee = call.referenced.get_definition() or call.referenced
        if self._path(callee.location.file) is not None:
            return None  # its return type is reported where it is defined
        for cursor in callee.walk_preorder():
            if cursor.kind == self.kinds.RETURN_STMT:
                value = next(cursor.get_children(), None)
                origin = self._narrowed_mask(callee.result_type, value, callee) if value is not None else None
                if origin:
                    return f"{origin} (through `{callee.spelling}`)"
        return None

    # ---- K001/K002: block sizes clang evaluates ----------------------------------------
    def check_launches(self, nodes) -> None:
        launches = []
        for cursor, function, _ in nodes:
            if cursor.kind != self.kinds.CALL_EXPR:
                continue
            children = list(cursor.get_children())
            configuration = next((c for c in children[1:] if c.kind == self.kinds.CALL_EXPR
                                  and c.spelling in _CONFIGURATION_CALLS), None)
            if configuration is not None:
                arguments = list(configuration.get_arguments())
                kernel = children[0]
            elif cursor.spelling in LAUNCH_APIS or cursor.spelling == "hipLaunchKernelGGLInternal":
                arguments = list(cursor.get_arguments())
                kernel, arguments = (arguments[0], arguments[1:]) if arguments else (None, [])
            else:
                continue
            if len(arguments) < 2:
                continue
            dims, sources = self._block_dims(arguments[1], function)
            if dims is not None:
                launches.append((cursor, function, kernel, arguments[1], dims, sources))
        for cursor, function, kernel, block, dims, sources in launches:
            where = self.span(block)
            if where is None:
                continue
            text = where[0].data[where[1]:where[2]].decode("utf-8", "replace")
            known = prod(d for d in dims if d is not None)
            if known > MAX_THREADS_PER_BLOCK:
                if "K001" in self.job.codes:
                    message, fix = too_many_threads(text, dims)
                    self.report("K001", where, message, fix, self._set_at(sources))
                continue
            if "K002" in self.job.codes and None not in dims:
                self._check_bound(where, function, kernel, known, sources)

    def _block_dims(self, block, function):
        """((x, y, z), defining cursors) of a launch's block when clang can evaluate a dimension."""
        cursor = self._through_copies(block)
        sources = []
        if cursor.kind == self.kinds.DECL_REF_EXPR and cursor.referenced is not None \
                and cursor.referenced.kind == self.kinds.VAR_DECL:
            declaration = cursor.referenced
            if function is not None and declaration.get_usr() in self._assigned_names(function):
                return None, ()
            sources.append(declaration)
            values = [c for c in declaration.get_children() if c.kind.is_expression()]
            if not values:
                return None, ()
            cursor = self._through_copies(values[-1])
        if cursor.kind in (self.kinds.CALL_EXPR, self.kinds.INIT_LIST_EXPR) and cursor.type.spelling.endswith("dim3"):
            values = [c for c in cursor.get_children() if c.kind.is_expression()]
            if not 1 <= len(values) <= 3:
                return None, ()
            dims = [clang.evaluate_int(v) for v in values] + [1] * (3 - len(values))
        else:
            dims = [clang.evaluate_int(cursor), 1, 1]
        if all(d is None for d in dims):
            return None, ()
        return tuple(dims), tuple(sources)

    def _through_copies(self, cursor):
        """Past implicit nodes and `dim3` copy constructions to the expression written."""
        cursor = clang.strip(cursor)
        while cursor.kind == self.kinds.CALL_EXPR and cursor.type.spelling.endswith("dim3"):
            values = [c for c in cursor.get_children() if c.kind.is_expression()]
            if len(values) != 1 or not clang.strip(values[0]).type.get_canonical().spelling.endswith("dim3"):
                break
            cursor = clang.strip(values[0])
        return cursor

    def _kernel_definition(self, kernel):
        if kernel is None:
            return None
        reference = clang.strip(kernel)
        if reference.kind == self.kinds.UNARY_OPERATOR:  # `&kernel`
            reference = clang.strip(next(reference.get_children(), None))
        declaration = reference.referenced if reference is not None else None
        if declaration is None:
            return None
        definition = declaration.get_definition() or declaration
        return definition if "global" in clang.attributes(definition) else None

    def _check_bound(self, where, function, kernel, threads: int, sources) -> None:
        definition = self._kernel_definition(kernel)
        if definition is None or self._has_device_query(function):
            return
        if any(self._is_port(s) for s in sources):
            return  # a block size chosen in ROCm-only code is the port itself
        known, bound = self._launch_bound(definition)
        if not known or bound is None or threads <= bound:
            return  # without a bound, clang allows 1024 threads (K001's limit)
        name = definition.spelling
        message, fix = over_bound(threads, bound, name)
        related = self._set_at(sources) + self.related(definition, f"`{name}` is defined here")
        self.report("K002", where, message, fix, related)

    def _launch_bound(self, definition) -> tuple[bool, int | None]:
        """(known, bound) of `__launch_bounds__`: a literal, a constant or a macro for one."""
        for attribute in definition.get_children():
            if attribute.kind == self.kinds.UNEXPOSED_ATTR:
                tokens = clang.tokens(attribute)
                if tokens[:1] not in (["__launch_bounds__"], ["launch_bounds"]) or len(tokens) < 3:
                    continue
                if tokens[3:4] not in ([")"], [","]):
                    return False, None  # an expression: not read
                return self._constant_named(tokens[2], definition.translation_unit, 0)
        return True, None

    def _constant_named(self, token: str, tu, depth: int) -> tuple[bool, int | None]:
        """The value of a literal, or of a macro or constant of that name (the attribute's
        arguments are not cursors, so clang cannot evaluate them in place)."""
        if token[:1].isdigit():
            try:
                return True, int(token.rstrip("uUlL"), 0)
            except ValueError:
                return False, None
        if self._macro_cursors is None:
            self._macro_cursors = self._macros(tu)
        macro = self._macro_cursors.get(token)
        if macro is not None:
            body = _body(macro)
            return self._constant_named(body[0], tu, depth + 1) if len(body) == 1 and depth < _RECURSION_LIMIT \
                else (False, None)
        for cursor, _, _ in self._host_nodes:
            if cursor.spelling == token and cursor.kind == self.kinds.VAR_DECL:
                value = clang.evaluate_int(cursor)
                return value is not None, value
            if cursor.spelling == token and cursor.kind == self.kinds.ENUM_CONSTANT_DECL:
                return True, cursor.enum_value
        return False, None

    def _has_device_query(self, function) -> bool:
        if function is None:
            return False
        for cursor in function.walk_preorder():
            if cursor.kind == self.kinds.CALL_EXPR and (cursor.spelling in DEVICE_QUERIES or (
                    cursor.spelling in ATTRIBUTE_QUERIES
                    and "MaxThreadsPerBlock" in " ".join(t.spelling for t in cursor.get_tokens()))):
                return True
            if cursor.kind == self.kinds.MEMBER_REF_EXPR and cursor.spelling in PROPERTY_FIELDS:
                return True
        return False

    def _is_port(self, declaration) -> bool:
        where = self.span(declaration)
        return where is not None and self.status(where[0], where[1]) is Status.PORT

    def _set_at(self, sources) -> tuple[Related, ...]:
        related = ()
        for declaration in sources:
            related += self.related(declaration, f"The block size is set here: `{declaration.spelling}`")
        return related

    # ---- W008: `warpSize` in host code -----------------------------------------------
    def check_host_warp_size(self, nodes) -> None:
        for cursor, function, device in nodes:
            if cursor.kind != self.kinds.DECL_REF_EXPR or cursor.spelling != "warpSize" or function is None or device:
                continue
            declaration = cursor.referenced
            parent = declaration.semantic_parent if declaration is not None else None
            if declaration.kind != self.kinds.VAR_DECL or parent is None or parent.kind != self.kinds.TRANSLATION_UNIT:
                continue  # a local or a member named `warpSize` (`prop.warpSize`)
            where = self.span(cursor)
            if where is not None:
                self.report("W008", where, "Host code reads `warpSize`, which ROCm defines only for device code.",
                            Fix.advice(HOST_ADVICE))

    # ---- R002: symbols and lookups -----------------------------------------------------
    def collect_symbols(self, device_nodes, host_nodes) -> None:
        for cursor, _, _ in device_nodes:
            if cursor.kind in (self.kinds.FUNCTION_DECL, self.kinds.FUNCTION_TEMPLATE) and cursor.is_definition() \
                    and "global" in clang.attributes(cursor):
                self._kernel(cursor)
        for cursor, _, _ in host_nodes:
            if cursor.kind != self.kinds.CALL_EXPR:
                continue
            arguments = list(cursor.get_arguments())
            if cursor.spelling in MODULE_LOOKUPS and len(arguments) > MODULE_LOOKUPS[cursor.spelling]:
                argument = arguments[MODULE_LOOKUPS[cursor.spelling]]
                name, where = self._string(argument), self.span(argument)
                if name is not None and where is not None:
                    self.result.lookups.append(Lookup(name, where[0].location(where[1], where[2])))
            elif cursor.spelling in NAME_EXPRESSIONS and len(arguments) > 1:
                name = self._string(arguments[1])
                if name is not None:
                    self.result.lowered.add(name.split("<")[0].split("::")[-1].lstrip("&"))

    def _kernel(self, cursor) -> None:
        where = self.span(cursor)
        if where is None or cursor.location.file is None:
            return
        source = where[0]
        start = cursor.location.offset
        symbol = "" if cursor.kind == self.kinds.FUNCTION_TEMPLATE else (cursor.mangled_name or cursor.spelling)
        self.result.kernels.append(KernelSymbol(
            cursor.spelling, symbol, source.location(start, start + len(cursor.spelling.encode())),
            source.digest, cursor.kind == self.kinds.FUNCTION_TEMPLATE,
        ))

    def _string(self, argument) -> str | None:
        inner = clang.strip(argument)
        if inner.kind == self.kinds.STRING_LITERAL:
            return _unquote(inner.spelling)
        return clang.evaluate_str(inner)

    # ---- P001: device-pass macros built on `__CUDA_ARCH__` -----------------------------
    def check_pass_macros(self, device, host) -> None:
        scanned = self._scanned_files(host)
        if not any(CUDA_ARCH.encode() in self._bytes(p) for p in self._project_files(host)):
            return
        try:
            cuda_device = self.parse(clang.CUDA_DEVICE)
            cuda_host = self.parse(clang.CUDA_HOST)
        except clang.ParseFailure:
            return  # the CUDA view is a bonus: without it, P001 stays the fast rule's
        cd, ch = self._macros(cuda_device), self._macros(cuda_host)
        hd, hh = self._macros(device), self._macros(host)
        # A project macro that tells CUDA's passes apart but not ROCm's, or that is spelled with
        # `__CUDA_ARCH__` and no HIP macro.
        lost = {name for name in cd.keys() | ch.keys()
                if _body(cd.get(name)) != _body(ch.get(name)) and _body(hd.get(name)) == _body(hh.get(name))}
        lost |= {name for name in cd if self._built_on_cuda_arch(name, cd, 0)}
        root = str(self.job.root)
        lost = {name for name in lost if os.path.realpath((cd.get(name) or ch[name]).location.file.name).startswith(root)}
        if not lost:
            return
        for shown in scanned:
            source = self.source(shown)
            if source is None:
                continue
            for match in _DIRECTIVE.finditer(source.data):
                condition = match.group(2)
                words = {w.decode() for w in _IDENTIFIER.findall(condition)}
                if CUDA_ARCH in words or words & HIP_MACROS:
                    continue  # written out (the fast rule's), or written with HIP in mind
                for word in _IDENTIFIER.finditer(condition):
                    name = word.group().decode()
                    if name not in lost:
                        continue
                    start = match.start(2) + word.start()
                    definition = cd.get(name) or ch.get(name)
                    related = self.related(definition, f"`{name}` is set from `{CUDA_ARCH}` here") if definition else ()
                    self.report("P001", (source, start, start + len(name)),
                                f"`{name}` stands for `{CUDA_ARCH}`, which hip-clang never defines: "
                                "device code takes the host branch.",
                                Fix.advice(f"Set `{name}` under `{DEVICE_PASS}` where it is defined"), related)

    def _macros(self, tu) -> dict:
        return {c.spelling: c for c in tu.cursor.get_children()
                if c.kind == self.kinds.MACRO_DEFINITION and c.location.file is not None}

    def _built_on_cuda_arch(self, name: str, macros: dict, depth: int) -> bool:
        """Does the macro's body name `__CUDA_ARCH__` (through other macros) and no HIP macro?"""
        words = set(_body(macros.get(name)) or ())
        if depth > _RECURSION_LIMIT or words & HIP_MACROS:
            return False
        return CUDA_ARCH in words or any(self._built_on_cuda_arch(w, macros, depth + 1)
                                         for w in words if w in macros and w != name)

    def _scanned_files(self, tu) -> list[str]:
        files = [self._path(tu.get_file(str(self.job.path)))]
        files += [self._path(include.include) for include in tu.get_includes()]
        return list(dict.fromkeys(f for f in files if f is not None))

    def _project_files(self, tu) -> list[Path]:
        root = str(self.job.root)
        files = [self.job.path] + [Path(os.path.realpath(i.include.name)) for i in tu.get_includes()]
        return list(dict.fromkeys(p for p in files if str(p).startswith(root)))

    def _bytes(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except OSError:
            return b""


def _body(macro) -> tuple[str, ...] | None:
    """A macro's definition as tokens (parameters and body), None when it is not defined."""
    if macro is None:
        return None
    return tuple(t.spelling for t in macro.get_tokens())[1:]


def _is_literal(cursor) -> bool:
    """An integer written as a number in the source (not a macro or a constant's name)."""
    cursor = clang.strip(cursor)
    tokens = list(cursor.get_tokens())
    return cursor.kind == clang.cindex().CursorKind.INTEGER_LITERAL and len(tokens) == 1 and \
        tokens[0].kind.name == "LITERAL"


def _unquote(literal: str) -> str | None:
    if len(literal) >= 2 and literal[0] == literal[-1] == '"':
        return literal[1:-1]
    return None


def _short(text: str, limit: int = 32) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


# ---- R002 across translation units -----------------------------------------------------
def check_module_lookups(results: list[UnitResult]) -> list[Finding]:
    """Kernels looked up by a name that is not their device symbol (mangled C++ names)."""
    kernels: dict[str, list[KernelSymbol]] = {}
    for result in results:
        for kernel in result.kernels:
            kernels.setdefault(kernel.name, []).append(kernel)
    lowered = set().union(*(r.lowered for r in results)) if results else set()
    symbols = {k.symbol for ks in kernels.values() for k in ks}
    findings: dict[tuple, Finding] = {}
    for result in results:
        for lookup in result.lookups:
            bare = lookup.name.split("::")[-1]
            if lookup.name in symbols or bare in lowered:
                continue  # the lookup names the symbol itself (or a lowered name)
            for kernel in {(k.location.path, k.location.start_byte): k for k in kernels.get(bare, [])}.values():
                if kernel.symbol == kernel.name:
                    continue  # C linkage: the lookup finds it
                related = (Related(lookup.location, f"`{kernel.name}` is looked up by name here"),)
                if kernel.is_template:
                    fix = Fix.advice(f"Look up `{kernel.name}` by its lowered name from `hiprtcGetLoweredName`, "
                                     f'or launch it from an `extern "C" __global__` wrapper kernel')
                else:
                    fix = Fix.advice(f'Declare `{kernel.name}` `extern "C"` at global scope, '
                                     f"or look up its symbol `{kernel.symbol}`")
                symbol = f"the mangled symbol `{kernel.symbol}`" if kernel.symbol else "mangled symbols per instance"
                key = (kernel.location.path, kernel.location.start_byte)
                findings.setdefault(key, Finding(
                    location=kernel.location,
                    message=f"Kernel `{kernel.name}` has {symbol}, so its lookup by name fails.",
                    fix=fix, code="R002", related=related, matched=kernel.name, file_digest=kernel.file_digest,
                ))
    return list(findings.values())
