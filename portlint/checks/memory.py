"""M: memory that AMD GPUs size or handle differently: LDS size, managed memory, fences,
memory types, textures.

M001 adds up a block's shared memory (LDS on AMD): the `__shared__` arrays of each
function, the dynamic shared memory of each launch, and the limit raised by
`cudaFuncSetAttribute`. Sizes that name constants of an included header become
`OpenSharedMemory` facts for the project pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod
from typing import NamedTuple

from portlint import queries, targets
from portlint.checks.cpp import (
    IDENTIFIERS, arguments, callee_name, calls, calls_named, enclosing_function, macro_bodies_root, memoized,
    open_constants, strip_parens, token_nodes, type_size,
)
from portlint.checks.launch import LAUNCH_TOKENS, LaunchContext, defined_at, finding_at, has_launches, launches
from portlint.finding import Finding, Related, Severity, at_node
from portlint.fix import Fix
from portlint.project import ProjectIndex, declared_name, file_key
from portlint.rocm_path import Status
from portlint.source import CUDA, Location, SourceFile
from portlint.triggers import needs

# Bytes of LDS one block may use: 64 KiB on MI100, MI200 and MI300 (gfx908, gfx90a, gfx942),
# 160 KiB on MI350 (gfx950); the scan's targets decide (portlint.targets). hip-clang refuses
# more: "local memory (N) exceeds limit (65536)".
def lds_limit() -> int:
    return targets.smallest_lds().lds_bytes


def _lds_text() -> str:
    target = targets.smallest_lds()
    return f"on {target.name} a block has {target.lds_bytes // 1024} KiB"

SET_ATTRIBUTE = frozenset({"cudaFuncSetAttribute", "hipFuncSetAttribute", "cuFuncSetAttribute"})
SET_ATTRIBUTE_TOKENS = tuple(sorted(api.encode() for api in SET_ATTRIBUTE))
# Words of a size read from the device's shared memory limit.
LIMIT_WORDS = ("sharedMemPerBlock", "SharedMemoryPerBlock", "SHARED_MEMORY_PER_BLOCK")
_CALLS = "(call_expression function: (_) arguments: (argument_list)) @call"
# How the attribute that raises the dynamic shared memory limit ends, in each API.
MAX_DYNAMIC_ATTRIBUTES = ("MaxDynamicSharedMemorySize", "MAX_DYNAMIC_SHARED_SIZE_BYTES")

STATIC_ADVICE = ("Shrink the `__shared__` arrays of `{name}` to at most 65536 bytes: a smaller tile under "
                 "`#ifdef __HIP_PLATFORM_AMD__`, or dynamic shared memory sized from `sharedMemPerBlock`")
DYNAMIC_ADVICE = ("Size dynamic shared memory from `sharedMemPerBlock` at run time (at most 65536 bytes "
                  "on MI200/MI300): `hipDeviceGetAttribute(&bytes, hipDeviceAttributeMaxSharedMemoryPerBlock, dev)`")


@dataclass(unsafe_hash=True)
class SharedArray:
    """One `__shared__` variable of a function."""

    declaration: object  # the declaration node
    declarator: object  # its declarator (the variable, with its array dimensions)
    element: int  # bytes of one element; 1 for a type portlint cannot size (a lower bound)
    element_known: bool
    dims: tuple  # per dimension: an int, an `Expr` with open names, or None (not constant)

    @property
    def bytes(self) -> int | None:
        """The size if every dimension is known here (at least this many with an unknown type)."""
        return None if any(not isinstance(d, int) for d in self.dims) else self.element * prod(self.dims)

    @property
    def is_open(self) -> bool:
        return any(isinstance(d, tuple) for d in self.dims) and None not in self.dims


class SharedMemory:
    """The `__shared__` arrays of one file's functions, read once."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.constants = open_constants(source)

    @classmethod
    def of(cls, source: SourceFile) -> "SharedMemory":
        return memoized(source, "memory.shared", cls)

    @cached_property
    def by_function(self) -> dict[int, tuple[object, list[SharedArray]]]:
        """Function definition id -> (definition, its static `__shared__` variables)."""
        found: dict[int, tuple[object, list[SharedArray]]] = {}
        if b"__shared__" not in self.source.data:
            return found
        for declaration in _shared_declarations(self.source):
            function = enclosing_function(declaration)
            if function is None or any(c.type == "storage_class_specifier" and c.text == b"extern"
                                       for c in declaration.children):
                continue  # file-level arrays belong to whichever kernel uses them; `extern` is dynamic
            kind = declaration.child_by_field_name("type")
            element = type_size(self.source.node_text(kind)) if kind is not None else None
            for declarator in declaration.children_by_field_name("declarator"):
                dims = self._dims(declarator)
                if dims is not None:
                    found.setdefault(function.id, (function, []))[1].append(
                        SharedArray(declaration, declarator, element or 1, element is not None, dims))
        return found

    def _dims(self, declarator) -> tuple | None:
        """Array dimensions outermost first; () for a scalar; None for what is not a variable."""
        dims = []
        while declarator.type == "array_declarator":
            size = declarator.child_by_field_name("size")
            if size is None:
                return None  # `s[]` without `extern`: not valid
            dims.append(self.constants.expression(size))
            declarator = declarator.child_by_field_name("declarator")
        return tuple(reversed(dims)) if declarator.type == "identifier" else None

    def static_bytes(self, function) -> int:
        """Bytes of the function's `__shared__` variables this file can size (a lower bound)."""
        _, arrays = self.by_function.get(function.id, (None, []))
        return sum(a.bytes or 0 for a in arrays)


def _shared_declarations(source: SourceFile) -> list:
    """Declarations qualified `__shared__`, in source order, once per `__shared__` written
    (found from those bytes: a query over every declaration cost more)."""
    found = []
    for token in token_nodes(source, b"__shared__"):
        qualifier = token.parent
        if qualifier.type == "type_qualifier" and (qualifier.start_byte, qualifier.end_byte) == \
                (token.start_byte, token.end_byte) and qualifier.parent.type == "declaration":
            found.append(qualifier.parent)
    return sorted(found, key=lambda d: (d.start_byte, -d.end_byte))


def _name_of(function, source: SourceFile) -> tuple[object, str]:
    name = declared_name(function.child_by_field_name("declarator"))
    return (name, source.node_text(name)) if name is not None else (function, "this function")


def _array_notes(arrays: list[SharedArray], source: SourceFile) -> tuple[Related, ...]:
    return tuple(
        Related(source.location(a.declaration.start_byte, a.declaration.end_byte),
                f"`{' '.join(source.node_text(a.declaration).split())}` takes {a.bytes} bytes")
        for a in arrays if a.bytes
    )


def _static_message(name: str, total: int, exact: bool) -> str:
    amount = f"{total}" if exact else f"at least {total}"
    return f"`{name}` has {amount} bytes of `__shared__` memory; {_lds_text()}."


def _dynamic_message(dynamic: int, static: int) -> str:
    if static:
        return f"Launch asks for {dynamic} + {static} static bytes of shared memory; {_lds_text()}."
    return f"Launch asks for {dynamic} bytes of dynamic shared memory; {_lds_text()}."


def _attribute_message(limit: int) -> str:
    return f"Opt-in to {limit} bytes of dynamic shared memory; {_lds_text()} of LDS."


def _unbounded_message(text: str) -> str:
    target = targets.smallest_lds()
    return (f"Opt-in to `{text}` bytes of dynamic shared memory, which may exceed {target.lds_bytes // 1024} KiB: "
            f"the LDS of a block on {target.name}.")


class OptIn(NamedTuple):
    """One opt-in to more dynamic shared memory: `argument` is the size as written where it is
    reported; `expansion` the size's text when it is a macro's body with the invocation's
    arguments put in (`(n) * 1024`), else None."""

    argument: object
    expansion: bytes | None = None
    macro: object | None = None  # the `#define` whose body opts in, for an invocation


def _attribute_calls(source: SourceFile) -> list[OptIn]:
    """Each `cudaFuncSetAttribute(k, ...MaxDynamicSharedMemorySize, N)`,
    `cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, N)` and the HIP
    spellings. In a `#define` body whose size reads the macro's parameters
    (`#define SET_SMEM(k, n) cudaFuncSetAttribute(k, ..., n)`), the size is judged at each
    invocation, with the invocation's arguments."""
    if not any(api in source.data for api in SET_ATTRIBUTE_TOKENS):
        return []
    in_macros = macro_bodies_root(source, SET_ATTRIBUTE_TOKENS)
    found = [(call, False) for call in calls(source)]
    if in_macros is not None:
        found += [(call, True) for call in queries.nodes(CUDA, _CALLS, in_macros, "call")]
    opt_ins, model = [], source.rocm_path
    for call, in_macro in found:
        if callee_name(call, source) not in SET_ATTRIBUTE:
            continue
        args = arguments(call)
        if len(args) != 3 or not source.node_text(args[1]).endswith(MAX_DYNAMIC_ATTRIBUTES):
            continue
        macro = _macro_around(source, call) if in_macro else None
        if macro is not None and model is not None and model.status(macro.start_byte) is Status.DEAD:
            continue  # the CUDA build's definition: the ROCm build invokes another one
        parameters = _macro_parameters(macro, source) if macro is not None else []
        read = [n for n in queries.nodes(CUDA, IDENTIFIERS, args[2], "id") if source.node_text(n) in parameters]
        if not read:
            opt_ins.append(OptIn(args[2]))
            continue
        # A macro this file never invokes (a header's) is judged in its body, as other code is.
        opt_ins.extend(_invoked_opt_ins(source, macro, parameters, read, args[2]) or [OptIn(args[2])])
    return opt_ins


def _macro_around(source: SourceFile, node):
    """The `#define` of the main tree whose body holds `node` (a node of the macro tree)."""
    macro = source.tree.root_node.descendant_for_byte_range(node.start_byte, node.end_byte)
    while macro is not None and macro.type not in ("preproc_function_def", "preproc_def"):
        macro = macro.parent
    return macro


def _macro_parameters(macro, source: SourceFile) -> list[str]:
    parameters = macro.child_by_field_name("parameters") if macro.type == "preproc_function_def" else None
    return [source.node_text(p) for p in parameters.named_children if p.type == "identifier"] \
        if parameters is not None else []


def _invoked_opt_ins(source: SourceFile, macro, parameters: list[str], read: list, size) -> list[OptIn]:
    """The opt-in of macro `macro`'s body at each invocation: its size is the argument given
    for the parameter it names, or the body's expression with the arguments put in.
    `read`: the parameter names in the size, as nodes of the macro tree."""
    name = source.node_text(macro.child_by_field_name("name"))
    found = []
    for invocation in calls_named(source, name):
        given = arguments(invocation)
        if len(given) != len(parameters):
            continue
        bound = dict(zip(parameters, given))
        if strip_parens(size).type == "identifier":  # `cudaFuncSetAttribute(k, ..., n)`: the argument itself
            found.append(OptIn(bound[source.node_text(strip_parens(size))], None, macro))
            continue
        pieces, at = [], size.start_byte
        for parameter in read:  # in source order
            pieces += [source.data[at:parameter.start_byte],
                       _operand(bound[source.node_text(parameter)], source).encode()]
            at = parameter.end_byte
        pieces.append(source.data[at:size.end_byte])
        first = min((bound[source.node_text(p)] for p in read), key=lambda a: a.start_byte)
        found.append(OptIn(first, b"".join(pieces), macro))
    return found


def _operand(argument, source: SourceFile) -> str:
    """A macro argument as it is put into the body: in parentheses unless it is one token."""
    text = source.node_text(argument)
    return text if argument.type in ("identifier", "number_literal") else f"({text})"


def _macro_note(opt_in: OptIn, source: SourceFile) -> tuple[Related, ...]:
    if opt_in.macro is None:
        return ()
    name = opt_in.macro.child_by_field_name("name")
    return (Related(source.location(name.start_byte, name.end_byte),
                    f"`{source.node_text(name)}` is defined here: it opts in to the size it is given"),)


def _is_limit_query(node, source: SourceFile) -> bool:
    """Is the size read from, or checked against, the device's shared memory limit
    (`prop.sharedMemPerBlockOptin`, `hipDeviceAttributeMaxSharedMemoryPerBlock`) in the
    function that opts in?"""
    if any(word in source.node_text(node) for word in LIMIT_WORDS):
        return True
    function = enclosing_function(node)
    return function is not None and any(
        word.encode() in source.data[function.start_byte:function.end_byte] for word in LIMIT_WORDS)


@needs(b"__shared__", *LAUNCH_TOKENS, *SET_ATTRIBUTE_TOKENS)
def check_lds_over_64k(source: SourceFile) -> list[Finding]:
    if b"__shared__" not in source.data and not has_launches(source) and b"SetAttribute" not in source.data:
        return []
    memory = SharedMemory.of(source)
    constants = memory.constants
    findings = []
    for function, arrays in memory.by_function.values():
        total = sum(a.bytes or 0 for a in arrays)
        if total <= lds_limit():
            continue
        name_node, name = _name_of(function, source)
        exact = all(a.bytes is not None and a.element_known for a in arrays)
        findings.append(at_node(source, name_node, _static_message(name, total, exact),
                                Fix.advice(STATIC_ADVICE.format(name=name)), related=_array_notes(arrays, source)))
    if has_launches(source):
        context = LaunchContext.of(source)
        for launch in launches(source):
            dynamic = constants.value(launch.shared_memory) if launch.shared_memory is not None else None
            if dynamic is None:
                continue
            kernel = context.kernel_definition(launch)
            static = memory.static_bytes(kernel) if kernel is not None else 0
            if dynamic + static <= lds_limit() or static > lds_limit():
                continue  # fits, or the kernel's own arrays are reported
            findings.append(at_node(source, launch.shared_memory, _dynamic_message(dynamic, static),
                                    Fix.advice(DYNAMIC_ADVICE)))
    for opt_in in _attribute_calls(source):
        argument, expansion = opt_in.argument, opt_in.expansion
        limit = constants.value(argument) if expansion is None else constants.text_value(expansion)
        if limit is None and expansion is None:  # `size_t bytes = std::max(A * K_STAGE, C);` first
            limit = LaunchContext.of(source).size_value(argument)
        if limit is not None:
            if limit > targets.smallest_lds().lds_bytes:
                findings.append(at_node(source, argument, _attribute_message(limit), Fix.advice(DYNAMIC_ADVICE),
                                        severity=Severity.ERROR, related=_macro_note(opt_in, source)))
        elif not isinstance(constants.expression(argument), tuple) and not _is_limit_query(argument, source):
            # Computed from run-time sizes or traits: nothing bounds it by the LDS.
            written = source.node_text(argument) if expansion is None else " ".join(expansion.decode().split())
            findings.append(at_node(source, argument, _unbounded_message(written), Fix.advice(DYNAMIC_ADVICE),
                                    severity=Severity.WARNING, related=_macro_note(opt_in, source)))
    return findings


# ---- across files: sizes from included headers ------------------------------------------
@dataclass(unsafe_hash=True)
class OpenSharedMemory:
    """Shared memory whose size names constants its file leaves to included headers."""

    kind: str  # "static" (a function's arrays), "dynamic" (a launch) or "attribute"
    file: str  # `file_key` of the file
    location: Location
    text: str  # what the finding points at
    digest: str
    name: str  # the function, for "static"
    known: int  # bytes the file sizes alone: the function's other arrays, a kernel's static part
    terms: tuple  # (bytes per element, dims as `Expr`) still to resolve
    exact: bool  # every other array and every element type has a known size
    related: tuple[Related, ...] = ()


def open_shared_memory(source: SourceFile) -> list[OpenSharedMemory]:
    """The file's shared memory sizes the project pass has to finish reading."""
    if source.language != CUDA:
        return []
    found = []
    memory = SharedMemory.of(source)
    common = dict(file=file_key(source), digest=source.digest)
    for function, arrays in memory.by_function.values():
        open_arrays = [a for a in arrays if a.is_open]
        if not open_arrays:
            continue
        name_node, name = _name_of(function, source)
        found.append(OpenSharedMemory(
            "static", location=source.location(name_node.start_byte, name_node.end_byte), text=name, name=name,
            known=sum(a.bytes or 0 for a in arrays), terms=tuple((a.element, a.dims) for a in open_arrays),
            exact=all(a.element_known and (a.bytes is not None or a.is_open) for a in arrays),
            related=_array_notes(arrays, source), **common))
    sizes = []  # (kind, argument node, static bytes of the launched kernel)
    if has_launches(source):
        context = LaunchContext.of(source)
        for launch in launches(source):
            if launch.shared_memory is not None:
                kernel = context.kernel_definition(launch)
                sizes.append(("dynamic", launch.shared_memory, memory.static_bytes(kernel) if kernel else 0))
    # A size computed in a macro's body from its arguments is judged by the file alone.
    sizes.extend(("attribute", opt_in.argument, 0) for opt_in in _attribute_calls(source) if opt_in.expansion is None)
    for kind, argument, static in sizes:
        expr = memory.constants.expression(argument)
        if isinstance(expr, tuple):
            found.append(OpenSharedMemory(
                kind, location=source.location(argument.start_byte, argument.end_byte),
                text=source.node_text(argument), name="", known=static, terms=((1, (expr,)),), exact=True,
                **common))
    return found


def check_lds_over_64k_across_files(index: ProjectIndex) -> list[Finding]:
    findings = []
    for fact in index.open_facts(OpenSharedMemory):
        if fact.known > lds_limit():
            continue  # the file's own pass reported it
        opened, definitions, exact = 0, [], fact.exact
        for element, dims in fact.terms:
            values = [index.resolve(fact.file, d) for d in dims]
            if all(v is not None for v, _ in values):
                opened += element * prod(v for v, _ in values)
                definitions.extend(d for _, used in values for d in used)
            else:
                exact = False
        related = fact.related + defined_at(dict.fromkeys(definitions))
        if fact.kind == "static" and fact.known + opened > lds_limit():
            findings.append(finding_at(fact, _static_message(fact.name, fact.known + opened, exact),
                                        Fix.advice(STATIC_ADVICE.format(name=fact.name)), related))
        elif fact.kind == "dynamic" and fact.known + opened > lds_limit():
            findings.append(finding_at(fact, _dynamic_message(opened, fact.known), Fix.advice(DYNAMIC_ADVICE),
                                        related))
        elif fact.kind == "attribute" and exact and opened > targets.smallest_lds().lds_bytes:
            findings.append(finding_at(fact, _attribute_message(opened), Fix.advice(DYNAMIC_ADVICE), related,
                                        severity=Severity.ERROR))
        elif fact.kind == "attribute" and not exact:
            findings.append(finding_at(fact, _unbounded_message(fact.text), Fix.advice(DYNAMIC_ADVICE), related,
                                        severity=Severity.WARNING))
    return findings


# =========================================================================================
# M002-M005: managed memory, system fences, memory-type numbers, texture references.
# Imported here so that this section stays an append to the module.
from portlint.checks.cpp import (  # noqa: E402
    calls_by_name, expression_type, integer_value,
)
from portlint.fix import Edit  # noqa: E402

# ---- M002 managed-memory -----------------------------------------------------------------
MANAGED_ALLOCATORS = ("cudaMallocManaged", "hipMallocManaged")
MANAGED_HINTS = ("cudaMemPrefetchAsync", "hipMemPrefetchAsync", "cudaMemAdvise", "hipMemAdvise")
MANAGED_ADVICE = ("Allocate with `hipMalloc` and copy explicitly, or check "
                  "`hipDeviceAttributeConcurrentManagedAccess` and run with `HSA_XNACK=1`")


@needs(b"anaged", b"MemPrefetch", b"MemAdvise")
def check_managed_memory(source: SourceFile) -> list[Finding]:
    data = source.data
    if b"anaged" not in data and b"MemPrefetch" not in data and b"MemAdvise" not in data:
        return []
    findings = []
    for name in MANAGED_ALLOCATORS:
        for call in calls_named(source, name):
            findings.append(at_node(source, call.child_by_field_name("function"),
                                    f"`{name}` memory stays in host RAM on AMD unless XNACK is on.",
                                    Fix.advice(MANAGED_ADVICE)))
    for name in MANAGED_HINTS:
        for call in calls_named(source, name):
            findings.append(at_node(source, call.child_by_field_name("function"),
                                    f"`{name}` moves managed memory on AMD only when XNACK is on.",
                                    Fix.advice(MANAGED_ADVICE)))
    for qualifier in token_nodes(source, b"__managed__"):
        findings.append(at_node(source, qualifier,
                                "`__managed__` variables stay in host RAM on AMD unless XNACK is on.",
                                Fix.advice("Declare it `__device__` and copy with `hipMemcpyToSymbol`, "
                                           "or run with `HSA_XNACK=1`")))
    return findings


# ---- M003 threadfence-system -------------------------------------------------------------
# A file that allocates fine-grained memory has already made its flags host-visible.
FINE_GRAINED_FLAGS = (b"hipHostMallocCoherent", b"hipDeviceMallocFinegrained", b"hipDeviceMallocUncached",
                      b"hipMallocSignalMemory")


@needs(b"__threadfence_system")
def check_threadfence_system(source: SourceFile) -> list[Finding]:
    data = source.data
    if b"__threadfence_system" not in data or any(flag in data for flag in FINE_GRAINED_FLAGS):
        return []
    return [
        at_node(source, call,
                "`__threadfence_system` cannot make coarse-grained memory host-visible on AMD.",
                Fix.advice("Allocate the flags the host polls with "
                           "`hipHostMalloc(&p, n, hipHostMallocCoherent)` or "
                           "`hipExtMallocWithFlags(&p, n, hipDeviceMallocFinegrained)`"))
        for call in calls_named(source, "__threadfence_system")
    ]


# ---- M004 memory-type-numeric ------------------------------------------------------------
# What a number compared with a pointer's memory type means, by the header the code was
# written against: CUDA (and HIP 6's `type` field) count Unregistered, Host, Device,
# Managed; HIP 5's `memoryType` field counts Host, Device, Array, Unified.
CUDA_MEMORY_TYPES = {1: "cudaMemoryTypeHost", 2: "cudaMemoryTypeDevice", 3: "cudaMemoryTypeManaged"}
HIP5_MEMORY_TYPES = {0: "hipMemoryTypeHost", 1: "hipMemoryTypeDevice", 2: "hipMemoryTypeArray",
                     3: "hipMemoryTypeUnified"}
HIP6_MEMORY_TYPES = {0: "hipMemoryTypeUnregistered", 1: "hipMemoryTypeHost", 2: "hipMemoryTypeDevice",
                     3: "hipMemoryTypeManaged", 10: "hipMemoryTypeArray", 11: "hipMemoryTypeUnified"}
POINTER_ATTRIBUTE_TYPES = {"cudaPointerAttributes": "cuda", "hipPointerAttribute_t": "hip"}
MEMORY_TYPE_FIELDS = ("type", "memoryType")
UNREGISTERED = ("cudaMemoryTypeUnregistered", "hipMemoryTypeUnregistered")
UNREGISTERED_ADVICE = ("Treat an error from `hipPointerGetAttributes` as unregistered host memory "
                       "(and clear it with `hipGetLastError()`)")

_MEMORY_TYPE_TESTS = """
[(binary_expression left: (field_expression field: (field_identifier) @field) @member
                    right: (number_literal) @number) @test
 (binary_expression left: (number_literal) @number
                    right: (field_expression field: (field_identifier) @field) @member) @test
 (switch_statement condition: (condition_clause value: (field_expression field: (field_identifier) @field) @member)
                   body: (compound_statement) @body) @test]
"""


def _memory_type_names(member, source: SourceFile) -> dict[int, str] | None:
    """The enumerators a number compared with `member` stands for, or None when `member`
    is no pointer attribute's memory type."""
    field = source.node_text(member.child_by_field_name("field"))
    if field not in MEMORY_TYPE_FIELDS:
        return None
    declared = expression_type(source, member.child_by_field_name("argument"))
    through_pointer = member.child_by_field_name("operator").type == "->"
    if declared is None or declared.depth != int(through_pointer):
        return None
    api = POINTER_ATTRIBUTE_TYPES.get(declared.type)
    if api == "cuda":
        return CUDA_MEMORY_TYPES
    if api == "hip":
        return HIP5_MEMORY_TYPES if field == "memoryType" else HIP6_MEMORY_TYPES
    return None


def _numeric_memory_type(number, names: dict[int, str], source: SourceFile) -> Finding:
    value = integer_value(number, source)
    text = source.node_text(number)
    message = f"Memory type compared with the number `{text}`; HIP numbers memory types differently."
    if value in names:
        fix = Fix.safe(f"Compare with `{names[value]}` instead of `{text}`", Edit.replace(number, names[value]))
    elif value == 0 and names is CUDA_MEMORY_TYPES:  # CUDA's Unregistered: HIP's query fails instead
        fix = Fix.advice(UNREGISTERED_ADVICE)
    else:
        fix = Fix.advice("Compare with a `hipMemoryType` enumerator (`hipMemoryTypeDevice`, `hipMemoryTypeHost`)")
    return at_node(source, number, message, fix)


@needs(b"PointerAttribute", b"MemoryTypeUnregistered")
def check_memory_type_numeric(source: SourceFile) -> list[Finding]:
    data = source.data
    findings = []
    if b"PointerAttribute" in data:
        for match in queries.matches(CUDA, _MEMORY_TYPE_TESTS, source.tree.root_node):
            names = _memory_type_names(match["member"][0], source)
            if names is None:
                continue
            if "number" in match:
                if match["test"][0].child_by_field_name("operator").type in ("==", "!="):
                    findings.append(_numeric_memory_type(match["number"][0], names, source))
                continue
            for case in match["body"][0].named_children:
                value = case.child_by_field_name("value") if case.type == "case_statement" else None
                if value is not None and strip_parens(value).type == "number_literal":
                    findings.append(_numeric_memory_type(strip_parens(value), names, source))
    if b"MemoryTypeUnregistered" in data:
        for name in UNREGISTERED:
            for node in token_nodes(source, name.encode()):
                if source.node_text(node) != name:
                    continue
                findings.append(at_node(
                    source, node, f"`{name}` never comes back on AMD; the pointer query fails instead.",
                    Fix.advice(UNREGISTERED_ADVICE)))
    return findings


# ---- M005 texture-reference --------------------------------------------------------------
# Runtime and driver calls that bind or configure a texture reference.
TEXTURE_REFERENCE_CALLS = frozenset({
    "cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray", "cudaBindTextureToMipmappedArray",
    "cudaUnbindTexture", "cudaGetTextureReference", "cudaGetTextureAlignmentOffset",
    "hipBindTexture", "hipBindTexture2D", "hipBindTextureToArray", "hipBindTextureToMipmappedArray",
    "hipUnbindTexture", "hipGetTextureReference", "hipGetTextureAlignmentOffset",
})
TEXTURE_REFERENCE_PREFIXES = ("cuTexRef", "hipTexRef")
# Fetches: on a texture reference they take the `texture<...>` variable itself.
TEXTURE_FETCHES = frozenset({
    "tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex1DLayered", "tex2DLayered", "texCubemap",
    "texCubemapLayered", "tex2Dgather", "tex1DLod", "tex2DLod", "tex3DLod", "tex1DGrad", "tex2DGrad",
    "tex3DGrad",
})
TEXTURE_OBJECT_ADVICE = ("Create a texture object with `hipCreateTextureObject(&tex, &resDesc, &texDesc, nullptr)`, "
                         "pass the `hipTextureObject_t` to the kernel and fetch with `tex1Dfetch<T>(tex, i)`")


def _is_texture_reference(node, source: SourceFile) -> bool:
    declared = expression_type(source, node)
    return declared is not None and declared.depth == 0 and declared.type.replace(" ", "").startswith("texture<")


@needs(b"texture", b"Texture", b"TexRef")
def check_texture_reference(source: SourceFile) -> list[Finding]:
    data = source.data
    # A fetch counts only on a `texture<...>` this file declares, so these words cover every finding.
    if b"texture" not in data and b"Texture" not in data and b"TexRef" not in data:
        return []
    findings = []
    for name_node in token_nodes(source, b"texture"):
        template = name_node.parent
        if source.node_text(name_node) != "texture" or template is None or template.type != "template_type":
            continue
        findings.append(at_node(source, template,
                                "`texture<...>` references are deprecated in HIP and removed in CUDA 12.",
                                Fix.advice(TEXTURE_OBJECT_ADVICE)))
    for name, found in calls_by_name(source).items():
        if name in TEXTURE_REFERENCE_CALLS or name.startswith(TEXTURE_REFERENCE_PREFIXES):
            findings.extend(at_node(source, call.child_by_field_name("function"),
                                    f"`{name}` works on a texture reference, deprecated in HIP.",
                                    Fix.advice(TEXTURE_OBJECT_ADVICE)) for call in found)
        elif name in TEXTURE_FETCHES:
            for call in found:
                args = arguments(call)
                is_template = call.child_by_field_name("function").type == "template_function"
                if args and not is_template and _is_texture_reference(args[0], source):
                    findings.append(at_node(
                        source, call,
                        f"`{name}` reads the texture reference `{source.node_text(args[0])}`, deprecated in HIP.",
                        Fix.advice(TEXTURE_OBJECT_ADVICE)))
    return findings


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(CUDA, _MEMORY_TYPE_TESTS)
