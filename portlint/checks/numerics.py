"""N: numerics that differ on AMD — half types, float atomics, fp8 formats, clocks, traps."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from portlint import hipify, queries
from portlint.build_model.macros import UNDEFINED, Macro
from portlint.checks.cpp import (
    DEVICE_CODE, INCLUDES, STRING_PIECES, Declared, ancestors_of, arguments, callee_name, calls_named, declared_type_name,
    enclosing_function, expression_type, in_device_code, include_path, includes, memoized, statement_of, strip_parens, token_nodes,
    type_size, under_hip_version_test,
)
from portlint.finding import Finding, Related, Severity, at_node
from portlint.fix import ROCM_ARM, Applicability, Edit, Fix, rocm_arm
from portlint.nesting import bounded
from portlint.rocm_path import Status
from portlint.source import CUDA, SourceFile
from portlint.triggers import all_of, any_of, needs

# =========================================================================================
# N001 half2-members

HALF_TYPES = frozenset({"__half", "half", "__nv_half"})
HALF2_TYPES = frozenset({"__half2", "half2", "__nv_half2"})
# Intrinsics that return one `__half` / one `__half2`: `__low2half(h) + __high2half(h)` is
# still half arithmetic after the members are rewritten.
HALF_RESULTS = frozenset({
    "__low2half", "__high2half", "__float2half", "__float2half_rn", "__hadd", "__hsub", "__hmul", "__hdiv",
    "__hneg", "__habs", "__hfma", "__hmax", "__hmin", "__ushort_as_half", "__short_as_half", "__int2half_rn",
})
HALF2_RESULTS = frozenset({
    "__hadd2", "__hsub2", "__hmul2", "__h2div", "__hneg2", "__habs2", "__hfma2", "__halves2half2",
    "__floats2half2_rn", "__float2half2_rn", "__half2half2", "make_half2", "__lows2half2", "__highs2half2",
})
# The intrinsic each CUDA operator calls (cuda_fp16.hpp), so the rewrite means the same on CUDA.
HALF_OPERATIONS = {"+": "__hadd", "-": "__hsub", "*": "__hmul", "/": "__hdiv", "==": "__heq", "!=": "__hneu",
                   "<": "__hlt", "<=": "__hle", ">": "__hgt", ">=": "__hge"}
# `__half2` comparisons are left out: HIP's `!=` is "any lane differs", CUDA's "both lanes".
HALF2_OPERATIONS = {"+": "__hadd2", "-": "__hsub2", "*": "__hmul2", "/": "__h2div"}
HALF_NEGATION = {"half": "__hneg", "half2": "__hneg2"}
ARITHMETIC = frozenset({"+", "-", "*", "/"})
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/"}
MEMBER_READERS = {"x": ("__low2half", "__low2float"), "y": ("__high2half", "__high2float")}

_HALF_EXPRESSIONS = """
[(field_expression field: (field_identifier) @field) @member
 (binary_expression) @operation
 (assignment_expression) @operation
 (unary_expression operator: "-") @operation]
"""



def _rocm_build_keeps_half_operators(source: SourceFile, offset: int) -> bool:
    """The project's own ROCm build is known (its build files describe it) and neither it nor
    a header defines `__HIP_NO_HALF_OPERATORS__` where `offset` stands: HIP's `__half`
    operators are there, as in any build but a PyTorch extension's."""
    env = source.build
    if env is None or not env.rocm_build or "__HIP_NO_HALF_OPERATORS__" in env.rocm_defines:
        return False
    return env.state("__HIP_NO_HALF_OPERATORS__", offset, rocm=True) in (None, UNDEFINED)


_TORCH_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*[<"](?:torch|ATen|c10)/')


def in_pytorch_build(source: SourceFile) -> bool:
    """Does a PyTorch extension's builder compile this file on ROCm, as far as it shows: its
    ROCm build runs PyTorch's hipify on it, or it includes PyTorch's headers?"""
    env = source.build
    return (env is not None and hipify.TORCH in env.hipified) or bool(_TORCH_INCLUDE.search(source.data))


@dataclass
class _HalfUse:
    """One `__half2` member use or `__half` operation: where it is reported, what it says,
    and how its rewrite is built (`build` reads `_HalfScan.text`, so it can be built again
    once the statement's inner rewrites are known)."""

    node: object
    message: str
    build: Callable[[], Fix]
    severity: Severity | None = None  # None: the rule's; a note where only ROCm 5 differs


class _HalfScan:
    """Reads one file's `__half`/`__half2` expressions and their rewrites."""

    def __init__(self, source: SourceFile, half_types: frozenset[str], half2_types: frozenset[str]):
        self.source = source
        self.half_types, self.half2_types = half_types, half2_types
        self.uses: list[_HalfUse] = []
        # While a statement's rewrites are combined: the inner edits made so far, and those
        # the rewrite being built has taken into its text.
        self._inner: list[Edit] = []
        self._taken: set[Edit] = set()

    def half2_of(self, member) -> str | None:
        """For `h.x`/`h.y`/`p->x` on a `__half2`: the `__half2` expression (`h`, `*p`); else None."""
        if member.type != "field_expression":
            return None
        if self.source.node_text(member.child_by_field_name("field")) not in MEMBER_READERS:
            return None
        base = member.child_by_field_name("argument")
        declared = expression_type(self.source, base)
        through_pointer = member.child_by_field_name("operator").type == "->"
        if declared is None or declared.type not in self.half2_types or declared.depth != int(through_pointer):
            return None
        text = self.source.node_text(base)
        if not through_pointer:
            return text
        return f"*{text}" if strip_parens(base).type == "identifier" else f"*({text})"

    @bounded(None)
    def kind(self, node) -> str | None:
        """"half" or "half2" when `node` is known to be of that type; else None."""
        node = strip_parens(node)
        if node is None:
            return None
        if node.type == "field_expression":
            return "half" if self.half2_of(node) is not None else None
        if node.type in ("identifier", "subscript_expression", "pointer_expression"):
            declared = expression_type(self.source, node)
            if declared is None or declared.depth != 0:
                return None
            return ("half" if declared.type in self.half_types
                    else "half2" if declared.type in self.half2_types else None)
        if node.type == "call_expression":
            name = callee_name(node, self.source)
            return "half" if name in HALF_RESULTS else "half2" if name in HALF2_RESULTS else None
        if node.type == "binary_expression" and node.child_by_field_name("operator").type in ARITHMETIC:
            left = self.kind(node.child_by_field_name("left"))
            return left if left is not None and left == self.kind(node.child_by_field_name("right")) else None
        if node.type == "unary_expression" and node.child_by_field_name("operator").type == "-":
            return self.kind(node.child_by_field_name("argument"))
        return None

    def text(self, node) -> str:
        """`node`'s text with the statement's inner rewrites inside it applied."""
        start, end = node.start_byte, node.end_byte
        inside = [e for e in self._inner if start <= e.start and e.end <= end]
        self._taken.update(inside)
        data = self.source.data[start:end]
        for edit in sorted(inside, key=lambda e: e.start, reverse=True):
            data = data[:edit.start - start] + edit.content.encode("utf-8") + data[edit.end - start:]
        return data.decode("utf-8", errors="replace")

    def rewritten(self, operand) -> str:
        """An operand's text with a `__half2` member read through its intrinsic."""
        stripped = strip_parens(operand)
        half2 = self.half2_of(stripped)
        if half2 is None:
            return self.text(operand)
        reader = MEMBER_READERS[self.source.node_text(stripped.child_by_field_name("field"))][0]
        return f"{reader}({half2})"

    def operation(self, node, consumed: set[int]) -> None:
        """`a + b`, `a < b`, `a += b`, `-a` on `__half`/`__half2`: one use, with the intrinsic."""
        source = self.source
        if node.type == "unary_expression":
            operands, op = [node.child_by_field_name("argument")], "-"
            written = op
        else:
            operands = [node.child_by_field_name("left"), node.child_by_field_name("right")]
            op = written = node.child_by_field_name("operator").type
            if node.type == "assignment_expression":
                if op not in COMPOUND or self.half2_of(strip_parens(operands[0])) is not None:
                    return  # `h.x += v` writes a member: `member` reports it
                op = COMPOUND[op]
        kind = self.kind(operands[0])
        if kind is None or any(self.kind(o) != kind for o in operands[1:]):  # (most operands are not halves)
            return
        table = HALF_OPERATIONS if kind == "half" else HALF2_OPERATIONS
        if node.type != "unary_expression" and op not in table:
            return
        members = [strip_parens(o) for o in operands if self.half2_of(strip_parens(o)) is not None]
        consumed.update(m.id for m in members)
        type_name = "__half" if kind == "half" else "__half2"
        keeps_operators = _rocm_build_keeps_half_operators(source, node.start_byte)
        severity = None
        if members and keeps_operators:
            # HIP's operators are there: only ROCm 5's raw-bit members compute otherwise.
            message, severity = self._member_message(members[0]), Severity.NOTE
        elif keeps_operators:
            return
        else:
            message = f"`{written}` on `{type_name}` needs half operators, which ROCm PyTorch builds switch off."
            if not in_pytorch_build(source):
                # The build is not known and nothing shows a PyTorch one: another ROCm build
                # keeps HIP's operators, so the operator fails only if PyTorch builds it.
                message = message[:-1] + "; nothing here shows a PyTorch build, whose flags alone remove them."
                severity = Severity.NOTE
        self.uses.append(_HalfUse(node, message, lambda: self._operation_fix(node, op, kind, operands), severity))

    def _operation_fix(self, node, op: str, kind: str, operands) -> Fix:
        texts = [self.rewritten(o) for o in operands]
        if node.type == "unary_expression":
            replacement = f"{HALF_NEGATION[kind]}({texts[0]})"
        else:
            function = (HALF_OPERATIONS if kind == "half" else HALF2_OPERATIONS)[op]
            replacement = f"{function}({texts[0]}, {texts[1]})"
            if node.type == "assignment_expression":
                if not _is_plain_target(operands[0]):  # `p[i++] += x` would evaluate `p[i++]` twice
                    return Fix.advice(f"Bind the target to a reference `t` and write `t = {function}(t, {texts[1]})`")
                replacement = f"{texts[0]} = {replacement}"
        return Fix.safe(f"Replace with `{replacement}`", Edit.replace(node, replacement))

    def _member_message(self, member) -> str:
        return (f"`{self.source.node_text(member)}` is raw `unsigned short` bits of `__half2` in ROCm 5 "
                "(ROCm 6.0 made the members `__half`).")

    def member(self, member) -> None:
        """A `__half2` member read or written outside half arithmetic."""
        half2 = self.half2_of(member)
        if half2 is not None:
            self.uses.append(_HalfUse(member, self._member_message(member),
                                      lambda: self._member_fix(member, half2), Severity.NOTE))

    def _member_fix(self, member, half2: str) -> Fix:
        source = self.source
        field = source.node_text(member.child_by_field_name("field"))
        half_reader, float_reader = MEMBER_READERS[field]
        node, parent = member, member.parent
        while parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
        written = parent is not None and (
            (parent.type == "assignment_expression" and parent.child_by_field_name("left") == node)
            or parent.type == "update_expression"
            or (parent.type == "pointer_expression" and parent.child_by_field_name("operator").type == "&"))
        if written:
            return self._member_write_fix(member, parent, half2, field)
        if parent is not None and parent.type == "argument_list" and callee_name(parent.parent, source) == (
                "__half2float") and len(arguments(parent.parent)) == 1:
            call = parent.parent
            return Fix.safe(f"Replace `{source.node_text(call)}` with `{float_reader}({half2})`",
                            Edit.replace(call, f"{float_reader}({half2})"))
        return Fix.safe(f"Replace `{source.node_text(member)}` with `{half_reader}({half2})`",
                        Edit.replace(member, f"{half_reader}({half2})"))

    def _member_write_fix(self, member, parent, half2: str, field: str) -> Fix:
        """`h.x = v;` -> `h = __halves2half2(v, __high2half(h));` (both halves set at once)."""
        other = f"__high2half({half2})" if field == "x" else f"__low2half({half2})"
        is_store = (parent.type == "assignment_expression" and parent.child_by_field_name("operator").type == "="
                    and parent.parent is not None and parent.parent.type == "expression_statement")
        placeholder = "lo" if field == "x" else "hi"
        value = self.text(parent.child_by_field_name("right")) if is_store else placeholder
        halves = f"{value}, {other}" if field == "x" else f"{other}, {value}"
        rewrite = f"{half2} = __halves2half2({halves})"
        base = strip_parens(member.child_by_field_name("argument"))
        if is_store and _is_plain_target(base):  # `h` is read again: it must be safe to evaluate twice
            return Fix.safe(f"Replace with `{rewrite}`", Edit.replace(parent, rewrite))
        return Fix.advice(f"Set both halves at once: `{rewrite}`")

    def findings(self) -> list[Finding]:
        """One finding per statement: at its first use, the others related, one rewrite."""
        by_statement: dict[int, list[_HalfUse]] = {}
        for use in sorted(self.uses, key=lambda u: u.node.start_byte):
            statement = statement_of(use.node)
            by_statement.setdefault(use.node.id if statement is None else statement.id, []).append(use)
        findings = []
        for uses in by_statement.values():
            first, rest = uses[0], uses[1:]
            fix = first.build() if not rest else self._statement_fix(uses)
            related = tuple(Related(self.source.location(u.node.start_byte, u.node.end_byte), u.message)
                            for u in rest)
            # A statement with a use every ROCm release computes otherwise is the rule's warning.
            severity = Severity.NOTE if all(u.severity is Severity.NOTE for u in uses) else None
            findings.append(at_node(self.source, first.node, first.message, fix, related=related, severity=severity))
        return findings

    def _statement_fix(self, uses: list[_HalfUse]) -> Fix:
        """The rewrites of one statement's uses as one fix. Each is built after the rewrites
        inside it, from their text (`(a.x > b.x) ? a.x : b.x` inside `h.x = ...`), so no two
        edits overlap; where that cannot be done, advice."""
        alone = [use.build() for use in uses]
        if not all(f.is_applicable and f.applicability is Applicability.SAFE for f in alone):
            return Fix.advice(_joined_titles(alone))
        order = sorted(range(len(uses)), key=lambda i: max(e.end - e.start for e in alone[i].edits))
        self._inner, fixes = [], []
        try:
            for i in order:
                self._taken = set()
                fix = uses[i].build()
                for edit in self._inner:
                    covered = any(e.start <= edit.start and edit.end <= e.end for e in fix.edits)
                    clashes = any(edit.start < e.end and e.start < edit.end for e in fix.edits)
                    # An inner rewrite is either apart from this one or inside it and in its text.
                    if (clashes or edit in self._taken) and not (covered and edit in self._taken):
                        return Fix.advice(_joined_titles(alone))
                if any(self._taken & set(f.edits) not in (set(), set(f.edits)) for f in fixes):
                    return Fix.advice(_joined_titles(alone))  # a rewrite taken in part
                outer = [f for f in fixes if not set(f.edits) <= self._taken]
                fixes = [*outer, fix]
                self._inner = [*(e for e in self._inner if e not in self._taken), *fix.edits]
        finally:
            self._inner, self._taken = [], set()
        fixes.sort(key=lambda f: min(e.start for e in f.edits))
        return Fix.safe(_joined_titles(fixes), *(e for f in fixes for e in f.edits))


def _joined_titles(fixes: list[Fix]) -> str:
    titles = [f.title for f in fixes]
    return "; ".join([titles[0], *(t[:1].lower() + t[1:] for t in titles[1:])])


@bounded(False)
def _is_plain_target(node) -> bool:
    """An lvalue that is safe to evaluate twice: `a`, `a.b`, `p[i]`, `p[3]`."""
    node = strip_parens(node)
    if node.type == "identifier":
        return True
    if node.type == "field_expression":
        return _is_plain_target(node.child_by_field_name("argument"))
    if node.type == "subscript_expression":
        index = node.child_by_field_name("indices")
        indices = [] if index is None else index.named_children
        return (_is_plain_target(node.child_by_field_name("argument")) and len(indices) == 1
                and indices[0].type in ("identifier", "number_literal"))
    return False


def _defines(name) -> bool:
    """Is `name` the name a struct, class, typedef or alias is being defined under?"""
    parent = name.parent
    if parent.type in ("struct_specifier", "class_specifier", "union_specifier"):
        return parent.child_by_field_name("name") == name and parent.child_by_field_name("body") is not None
    if parent.type == "type_definition":
        return name in parent.children_by_field_name("declarator")
    return parent.type == "alias_declaration" and parent.child_by_field_name("name") == name


def _half_type_names(source: SourceFile) -> tuple[frozenset[str], frozenset[str]]:
    """The `__half` and `__half2` spellings this file uses for CUDA's types (a byte search,
    before any query). A name the file defines itself (`struct half2 { float x, y; }` in
    CPU code) is another type."""
    used, own = set(), set()
    for needle in (b"__half", b"half", b"__nv_half"):
        for node in token_nodes(source, needle):
            text = source.node_text(node)
            if text in HALF_TYPES or text in HALF2_TYPES:
                (own if _defines(node) else used).add(text)
    used -= own
    return frozenset(used & HALF_TYPES), frozenset(used & HALF2_TYPES)


# Every name in HALF_TYPES / HALF2_TYPES ends a token with `half` or `half2`: names that only
# contain the word (`half_width`, `halfway`) do not make a file worth parsing.
@needs(all_of(b"half", re.compile(rb"half2?(?!\w)")))
def check_half2_members(source: SourceFile) -> list[Finding]:
    if b"half" not in source.data:
        return []
    half_types, half2_types = _half_type_names(source)
    if not half_types and not half2_types:
        return []
    scan = _HalfScan(source, half_types, half2_types)
    members, consumed = [], set()
    for capture, node in queries.captures(CUDA, _HALF_EXPRESSIONS, source.tree.root_node):
        if capture == "member":
            members.append(node)
        elif capture == "operation":
            scan.operation(node, consumed)
    for member in members:
        if member.id not in consumed:
            scan.member(member)
    return scan.findings()


# =========================================================================================
# N002 float-atomic-add

ATOMIC_ADDS = ("atomicAdd", "atomicAdd_system", "atomicAdd_block")
FLOAT_TYPES = frozenset({"float", "double"})


@needs(b"atomicAdd")
def check_float_atomic_add(source: SourceFile) -> list[Finding]:
    if b"atomicAdd" not in source.data:
        return []
    findings = []
    for name in ATOMIC_ADDS:
        for call in calls_named(source, name):
            args = arguments(call)
            target = expression_type(source, args[0]) if len(args) == 2 else None
            if target is None or target.depth != 1 or target.type not in FLOAT_TYPES:
                continue
            findings.append(at_node(
                source, call.child_by_field_name("function"),
                f"`{name}` on `{target.type}` is a compare-and-swap loop on AMD by default.",
                Fix.advice("Call `unsafeAtomicAdd(addr, v)` where `addr` is `hipMalloc` memory; "
                           "keep `atomicAdd` for host or fine-grained memory")))
    return findings


# =========================================================================================
# N003 fp8-format

_FP8_TYPE = re.compile(r"^__nv_fp8(?:x[24])?_e(?:4m3|5m2)$")
FP8_HEADERS = ("cuda_fp8.h", "cuda_fp8.hpp")


@needs(b"__nv_fp8")
def check_fp8_format(source: SourceFile) -> list[Finding]:
    """One finding per file that computes in CUDA's OCP fp8 types where the ROCm build
    compiles it: at its `#include <cuda_fp8.h>` (the root cause), else at the first use, the
    uses related. An include whose types nothing here uses on the ROCm path (the port aliases
    its own per-target type in the ROCm arm) is silent: the encoding is the uses' question."""
    model = source.rocm_path
    uses = []
    aliased: dict[str, int] = {}  # a name this file aliases in code only ROCm compiles -> where
    for node in token_nodes(source, b"__nv_fp8"):
        name = source.node_text(node)
        if not _FP8_TYPE.match(name) or source.rocm_defines_function(name, node.start_byte):
            continue  # not the type, or a shim header aliases it to the HIP type the port chose
        if _names_alias(node) and model is not None and model.status(node.start_byte) is Status.PORT:
            aliased.setdefault(name, node.start_byte)  # `using __nv_fp8_e4m3 = __hip_fp8_e4m3_fnuz;`
            continue
        if aliased.get(name, len(source.data)) < node.start_byte:
            continue  # the port chose the encoding above
        if model is None or model.status(node.start_byte) is Status.LIVE:  # (a port's alias stands in ROCm-only code)
            uses.append((node, name))
    if not uses:
        return []
    headers = [(include, include_path(path_node, source)) for include, path_node in includes(source)
               if include_path(path_node, source).rsplit("/", 1)[-1] in FP8_HEADERS
               and (model is None or model.status(include.start_byte) is Status.LIVE)]
    related = tuple(Related(source.location(n.start_byte, n.end_byte), f"`{name}` is OCP fp8 here")
                    for n, name in (uses if headers else uses[1:]))
    if headers:
        include, header = headers[0]
        return [at_node(source, include, f"`{header}` types are OCP fp8; MI300 (gfx942) uses FNUZ.",
                        Fix.advice("Include `<hip/hip_fp8.h>` and pick the fp8 type per target: "
                                   "`__hip_fp8_e4m3_fnuz` on gfx942, `__hip_fp8_e4m3` on gfx950"), related=related)]
    node, name = uses[0]
    hip = name.replace("__nv_", "__hip_")
    return [at_node(source, node, f"`{name}` is OCP fp8; MI300 (gfx942) computes in the FNUZ encoding.",
                    Fix.advice(f"Use `{hip}_fnuz` on gfx942 and `{hip}` on gfx950 and gfx12 "
                               "(`<hip/hip_fp8.h>`); convert stored data at the boundary"), related=related)]


def _names_alias(node) -> bool:
    """Is `node` the name an alias declaration defines (`using NAME = T;`, `typedef T NAME;`)?"""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "alias_declaration":
        return parent.child_by_field_name("name") == node
    return parent.type == "type_definition" and node == parent.child_by_field_name("declarator")


# =========================================================================================
# N004 clock-timing

CLOCKS = ("clock", "clock64")
_SUBTRACTIONS = '[(binary_expression operator: "-") (assignment_expression operator: "-=")] @subtraction'


def _value_node(node):
    """Climb from a value through parentheses and casts to the node that uses it."""
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "cast_expression"):
        node = node.parent
    return node


def _subtracted_names(source: SourceFile) -> dict[int, set[str]]:
    """function id -> names of the variables that stand on either side of a `-` or `-=`."""
    names: dict[int, set[str]] = {}
    for node in queries.nodes(CUDA, _SUBTRACTIONS, source.tree.root_node, "subtraction"):
        function = enclosing_function(node)
        if function is None:
            continue
        for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
            side = strip_parens(side)
            while side is not None and side.type == "cast_expression":
                side = strip_parens(side.child_by_field_name("value"))
            if side is not None and side.type == "identifier":
                names.setdefault(function.id, set()).add(source.node_text(side))
    return names


def _receiver(value, source: SourceFile) -> str | None:
    """The variable a value initialises or is assigned to."""
    parent = value.parent
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == value:
        target = parent.child_by_field_name("declarator")
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == value:
        target = parent.child_by_field_name("left")
    else:
        return None
    return source.node_text(target) if target is not None and target.type == "identifier" else None


@needs(all_of(b"clock", DEVICE_CODE))
def check_clock_timing(source: SourceFile) -> list[Finding]:
    if b"clock" not in source.data:
        return []
    candidates = [(name, call) for name in CLOCKS for call in calls_named(source, name)
                  if not arguments(call) and in_device_code(call)]
    if not candidates:
        return []
    subtracted = _subtracted_names(source)
    findings = []
    for name, call in candidates:
        value = _value_node(call)
        parent = value.parent
        in_subtraction = parent is not None and (
            (parent.type == "binary_expression" and parent.child_by_field_name("operator").type == "-")
            or (parent.type == "assignment_expression" and parent.child_by_field_name("operator").type == "-="))
        receiver = _receiver(value, source)
        timed = receiver is not None and receiver in subtracted.get(enclosing_function(call).id, ())
        if in_subtraction or timed:
            findings.append(at_node(
                source, call, f"`{name}()` ticks at a varying shader clock on AMD; it cannot time durations.",
                Fix.advice("Time with `wall_clock64()` and divide by `hipDeviceAttributeWallClockRate` (kHz)")))
    return findings


# =========================================================================================
# N005 device-assert-trap

_ASM = "(gnu_asm_expression assembly_code: (_) @code) @asm"


def _asm_text(code, source: SourceFile) -> str:
    return "".join(source.node_text(p) for p in queries.nodes(CUDA, STRING_PIECES, code, "text"))


@needs(all_of(b"assert", DEVICE_CODE), all_of(b"trap", b"asm"))
def check_device_assert_trap(source: SourceFile) -> list[Finding]:
    data = source.data
    findings = []
    if b"assert" in data:
        for call in calls_named(source, "assert"):
            if in_device_code(call):
                findings.append(at_node(
                    source, call, "A failing device `assert` aborts the whole process on AMD.",
                    Fix.advice("Report the failure through a flag in device memory and check it on the host, "
                               "or compile the check out with `NDEBUG`")))
    if b"trap" in data and b"asm" in data:
        for match in queries.matches(CUDA, _ASM, source.tree.root_node):
            asm = match["asm"][0]
            if _asm_text(match["code"][0], source).strip().rstrip(";").strip() != "trap":
                continue
            statement = asm.parent if asm.parent is not None and asm.parent.type == "expression_statement" else None
            # nvcc rejects `__builtin_trap()` in device code: the asm stays for CUDA.
            edits = rocm_arm(source.data, statement.start_byte, statement.end_byte,
                             "__builtin_trap();") if statement is not None else None
            findings.append(at_node(
                source, asm, "PTX `trap` does not assemble for AMD GPUs.",
                Fix.unsafe(f"Trap with `__builtin_trap()` under `{ROCM_ARM}`, keeping the asm for nvcc", *edits)
                if edits else Fix.advice(f"Trap with `__builtin_trap()` under `{ROCM_ARM}`; nvcc rejects it"),
                severity=Severity.ERROR))
    return findings


# =========================================================================================
# N006 half-raw-brace-init

# CUDA's `__half_raw` is `{unsigned short x;}` and `__half2_raw` `{unsigned short x, y;}`:
# braces give the bits. HIP's are unions whose first member is `_Float16 data` (a 2-vector
# for `__half2_raw`), so braces initialise the value instead.
RAW_HALF_TYPES = ("__half_raw", "__half2_raw")
# Braces that initialise a value of a named type: a declaration, `T{...}`, `return {...};`
# (the function's return type). Shared with N008.
_TYPED_BRACES = """
[(declaration type: (type_identifier) @type declarator: (init_declarator value: (initializer_list) @init)) @declaration
 (compound_literal_expression type: (type_identifier) @type value: (initializer_list) @init)
 (return_statement (initializer_list) @init)]
"""
# What a declaration may carry for `T r = {v};` to become `T r; r.x = v;` with the same meaning.
_PLAIN_DECLARATION_CHILDREN = frozenset({"type_identifier", "init_declarator", ";", "comment"})


def _own_raw_types(source: SourceFile) -> frozenset[str]:
    """The raw half types this file defines itself (a fallback struct with a plain `x`)."""
    return frozenset(name for name in RAW_HALF_TYPES if declares_struct(source, name))


def declares_struct(source: SourceFile, name: str) -> bool:
    """Does the file define a struct `name` of its own (`struct float3 {`)?"""
    return re.search(rb"\bstruct\s+" + name.encode() + rb"\s*\{", source.data) is not None


def _braced_elements(init) -> list:
    return [child for child in init.named_children if child.type != "comment"]


def _is_literal_zero(node, source: SourceFile) -> bool:
    return node.type == "number_literal" and source.node_text(node).rstrip("uUlL") in ("0", "0x0", "0X0")


_FLOAT16_CAST = re.compile(r"^(?:static_cast\s*<\s*_Float16\s*>|\(\s*_Float16\s*\))")


def _is_float16_value(node, source: SourceFile) -> bool:
    """A `_Float16` already (`static_cast<_Float16>(f)`, `h.data`, a `_Float16` variable): HIP's
    own idiom, which sets `data` as meant."""
    node = strip_parens(node)
    if _FLOAT16_CAST.match(source.node_text(node)):
        return True
    if node.type == "field_expression" and source.node_text(node.child_by_field_name("field")) == "data":
        return True
    declared = expression_type(source, node) if node.type == "identifier" else None
    return declared is not None and declared.type == "_Float16" and declared.depth == 0


# hip-clang compiles these, and headers with device code; a host compiler reads HIP's
# `__half_raw` for gcc (`hip_fp16_gcc.h`), a plain struct like CUDA's.
_HIP_CLANG_SUFFIXES = (".cu", ".cuh", ".hip")


def _compiled_by_hip_clang(source: SourceFile) -> bool:
    return source.path.endswith(_HIP_CLANG_SUFFIXES) or b"__device__" in source.data or b"__global__" in source.data


def _return_type_of(statement, source: SourceFile) -> str | None:
    function = enclosing_function(statement)
    returned = function.child_by_field_name("type") if function is not None else None
    return source.node_text(returned) if returned is not None else None


def _bits_assignment_fix(match, raw_type: str, source: SourceFile) -> Fix:
    """`__half_raw r = {v};` in a block -> `__half_raw r; r.x = v;`: the same bits on CUDA,
    the bits instead of a converted value on HIP. Other forms get advice only."""
    advice = Fix.advice("Set the bits through the member (`__half_raw r; r.x = bits;`), or build the value with "
                        "`__ushort_as_half(bits)` (`__halves2half2(__ushort_as_half(lo), __ushort_as_half(hi))`)")
    declaration = match.get("declaration", [None])[0]
    if declaration is None or raw_type != "__half_raw" or declaration.parent.type != "compound_statement":
        return advice
    if any(child.type not in _PLAIN_DECLARATION_CHILDREN for child in declaration.children):
        return advice  # `static`, `const`, `__shared__`, several declarators: not a plain local
    declarator = declaration.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator")
    elements = _braced_elements(match["init"][0])
    if name.type != "identifier" or len(elements) != 1 or elements[0].type in ("initializer_list", "initializer_pair"):
        return advice
    variable = source.node_text(name)
    return Fix.safe(f"Assign the bits: `{variable}.x = ...`",
                    Edit(declarator.start_byte, declaration.end_byte,
                         f"{variable}; {variable}.x = {source.node_text(elements[0])};"))


@needs(b"half_raw", b"half2_raw")
def check_half_raw_brace_init(source: SourceFile) -> list[Finding]:
    if not _compiled_by_hip_clang(source):
        return []
    own = _own_raw_types(source)
    findings = []
    for match in queries.matches(CUDA, _TYPED_BRACES, source.tree.root_node):
        init = match["init"][0]
        if "type" in match:
            raw_type = source.node_text(match["type"][0])
        else:
            raw_type = _return_type_of(init.parent, source)
        if raw_type not in RAW_HALF_TYPES or raw_type in own:
            continue
        elements = _braced_elements(init)
        if not elements or any(e.type == "initializer_pair" for e in elements):
            continue  # `{}` zeroes, `{.x = bits}` names the member: both mean the same on HIP
        if raw_type == "__half_raw" and len(elements) == 1 and _is_literal_zero(elements[0], source):
            continue  # 0.0 and the bits 0 are the same half
        if all(_is_float16_value(e, source) for e in elements):
            continue  # a value for HIP's `data`, written for HIP
        findings.append(at_node(
            source, init, f"Braces around `{raw_type}` set HIP's `_Float16` value, not the bits `x`.",
            _bits_assignment_fix(match, raw_type, source)))
    return findings


# =========================================================================================
# N007 hip-atomic-redefinition

# Atomic overloads HIP's headers define (HIP 5.2's and ROCm 6.3's `amd_hip_atomic.h`) and
# CUDA 13's do not: a project that writes its own for CUDA (a CAS loop for a float
# `atomicMax`) redefines HIP's on ROCm. Pointee type -> the atomics HIP has for it.
_HIP_ONLY_ATOMICS = {
    "float": ("atomicCAS", "atomicMax", "atomicMin", "atomicSub"),
    "double": ("atomicCAS", "atomicExch", "atomicMax", "atomicMin", "atomicSub"),
    "unsigned long": ("atomicAdd", "atomicAnd", "atomicCAS", "atomicExch", "atomicMax", "atomicMin", "atomicOr",
                      "atomicSub", "atomicXor"),
    "unsigned long long": ("atomicSub",),
}
_HIP_ONLY_ATOMIC_NAMES = frozenset(name + suffix for names in _HIP_ONLY_ATOMICS.values() for name in names
                                   for suffix in ("", "_system"))
# Spellings of the same type on the LP64 systems ROCm runs on.
_SAME_TYPE = {"unsigned long int": "unsigned long", "long unsigned int": "unsigned long",
              "uint64_t": "unsigned long", "std::uint64_t": "unsigned long", "size_t": "unsigned long",
              "std::size_t": "unsigned long", "unsigned long long int": "unsigned long long",
              "long long unsigned int": "unsigned long long"}
_FUNCTION_DEFINITIONS = "(function_definition declarator: (function_declarator) @declarator) @function"
# Where a definition is no longer the global one HIP's header declares.
_OTHER_SCOPES = frozenset({"namespace_definition", "class_specifier", "struct_specifier", "union_specifier",
                           "template_declaration", "field_declaration_list"})


def _parameter_type(parameter, source: SourceFile) -> tuple[str, int] | None:
    """(type, pointer depth) of a parameter, `const` of the pointee kept (`const float*` is
    another overload), a top-level `const` dropped; None for references and arrays."""
    if parameter.type != "parameter_declaration":
        return None
    type_node = parameter.child_by_field_name("type")
    written = " ".join(source.node_text(type_node).split())
    written = _SAME_TYPE.get(written, written)
    pointee_const = any(c.type == "type_qualifier" and source.node_text(c) == "const" for c in parameter.children)
    depth, declarator = 0, parameter.child_by_field_name("declarator")
    while declarator is not None and declarator.type == "pointer_declarator":
        depth += 1
        declarator = declarator.child_by_field_name("declarator")
    if declarator is not None and declarator.type != "identifier":
        return None
    if depth and pointee_const:
        written = "const " + written
    return written, depth


def _redefines_hip_atomic(name: str, parameters: list[tuple[str, int] | None]) -> str | None:
    """The pointee type when `name(parameters)` is one of HIP's own atomic overloads."""
    if not parameters or parameters[0] is None or parameters[0][1] != 1:
        return None
    pointee = parameters[0][0]
    base = name.removesuffix("_system")
    if base not in _HIP_ONLY_ATOMICS.get(pointee, ()):
        return None
    values = 2 if base == "atomicCAS" else 1
    if len(parameters) != 1 + values or any(p != (pointee, 0) for p in parameters[1:]):
        return None  # another overload beside HIP's, not the same function
    return pointee


@needs(b"atomic")  # `__device__` may come through a macro of another header
def check_hip_atomic_redefinition(source: SourceFile) -> list[Finding]:
    findings = []
    for match in queries.matches(CUDA, _FUNCTION_DEFINITIONS, source.tree.root_node):
        function, declarator = match["function"][0], match["declarator"][0]
        name_node = declarator.child_by_field_name("declarator")
        if name_node is None or name_node.type != "identifier":
            continue
        if source.node_text(name_node) not in _HIP_ONLY_ATOMIC_NAMES:
            continue
        qualifiers = {expanded for word in _qualifier_words(function, source)
                      for expanded in _expanded_words(word, source, function.start_byte)}
        if "__device__" not in qualifiers:
            continue  # a host function of that signature overloads HIP's device one
        if any(outer.type in _OTHER_SCOPES for outer in ancestors_of(function)):
            continue
        if under_hip_version_test(function, source):
            continue  # kept for the old HIP releases that lacked the overload
        parameters = [_parameter_type(p, source) for p in declarator.child_by_field_name("parameters").named_children
                      if p.type != "comment"]
        name = source.node_text(name_node)
        pointee = _redefines_hip_atomic(name, parameters)
        if pointee is None:
            continue
        findings.append(at_node(
            source, name_node,
            f"HIP already defines `{name}({pointee}*, ...)`; hip-clang rejects this definition as a redefinition.",
            Fix.advice(f"Keep this `{name}` for CUDA only (`#if !defined(__HIP_PLATFORM_AMD__)` around it): "
                       f"ROCm's own computes the same")))
    return findings


# =========================================================================================
# N008 vector-short-brace-init

# CUDA's `float3` is an aggregate: `{a, b}` sets x and y and zeroes z. HIP's is a class
# (`HIP_vector_type<float, 3>`) whose constructors take one value (explicit, copied to every
# member) or exactly N, so fewer braces than members do not compile, and `float3 v{a}`
# compiles to (a, a, a) where CUDA gives (a, 0, 0).
_VECTOR_WIDTHS = {f"{base}{n}": n for base in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                               "longlong", "ulonglong", "float", "double") for n in (2, 3, 4)}


def _is_zero(node, source: SourceFile) -> bool:
    return node.type == "number_literal" and re.fullmatch(r"0*\.?0*[fFuUlL]*|0[xX]0+[uUlL]*",
                                                           source.node_text(node)) is not None


def _is_direct_initialisation(init) -> bool:
    """`float3 v{a}` (no `=`): explicit constructors take part."""
    parent = init.parent
    return parent.type == "compound_literal_expression" or (
        parent.type == "init_declarator" and not any(c.type == "=" for c in parent.children))


def _short_vector_lists(init, vector_type: str, array: bool):
    """The brace lists in `init` that give a `vector_type` fewer values than it has members:
    `init` itself, or each element list of an array's initialiser."""
    lists = [e for e in _braced_elements(init) if e.type == "initializer_list"] if array else [init]
    for braces in lists:
        elements = _braced_elements(braces)
        if elements and not any(e.type == "initializer_pair" for e in elements) \
                and len(elements) < _VECTOR_WIDTHS[vector_type]:
            yield braces, len(elements)


@needs(any_of(*(name.encode() for name in _VECTOR_WIDTHS)))
def check_vector_short_brace_init(source: SourceFile) -> list[Finding]:
    if not _compiled_by_hip_clang(source):
        return []
    findings = []
    for match in queries.matches(CUDA, _TYPED_BRACES, source.tree.root_node):
        init = match["init"][0]
        vector_type = source.node_text(match["type"][0]) if "type" in match else _return_type_of(init.parent, source)
        if vector_type not in _VECTOR_WIDTHS or declares_struct(source, vector_type):
            continue  # not a vector type, or the file's own struct of that name
        declarator = init.parent.child_by_field_name("declarator") if init.parent.type == "init_declarator" else None
        array = declarator is not None and declarator.type == "array_declarator"
        width = _VECTOR_WIDTHS[vector_type]
        for braces, count in _short_vector_lists(init, vector_type, array):
            if count == 1 and not array and _is_direct_initialisation(init):
                if _is_zero(_braced_elements(braces)[0], source):
                    continue  # `uint4{0}`: zero in every member on both
                findings.append(at_node(
                    source, braces,
                    f"`{vector_type}` from one braced value copies it to all {width} members on HIP; CUDA sets only x.",
                    Fix.advice(f"Give all {width} values (`{{v, 0, ...}}`) or use `make_{vector_type}`"),
                    severity=Severity.WARNING))
                continue
            findings.append(at_node(
                source, braces,
                f"HIP's `{vector_type}` takes exactly {width} braced values; hip-clang rejects {count}.",
                Fix.advice(f"Give all {width} values (the missing ones `0`, as CUDA fills them) or use "
                           f"`make_{vector_type}(...)`")))
    return findings


# =========================================================================================
# N009 vector-compound-operator

# HIP's vector types define `+=`, `-=`, ... as `__host__ __device__` members taking
# `const HIP_vector_type&`. A project's free `__host__ __device__ operator+=(float3&, float3)`
# (helper_math.h style) then matches a use exactly as well as the member: every `a += b` on
# two float3 is ambiguous. A `__device__`-only or host-only free operator wins in its own
# pass (clang prefers the caller's side), and a scalar right side (`*= float`) is no tie.
_COMPOUND_ASSIGNMENTS = frozenset(f"operator{op}=" for op in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"))
_OPERATOR_DEFINITIONS = """
(function_definition declarator: [
   (function_declarator declarator: (operator_name) @name parameters: (parameter_list) @parameters)
   (reference_declarator (function_declarator declarator: (operator_name) @name
                                              parameters: (parameter_list) @parameters))]) @function
"""
_MACRO_BODIES_BY_NAME = "(preproc_def name: (identifier) @name value: (preproc_arg) @value)"


def _file_macro_bodies(source: SourceFile) -> dict[str, list[str]]:
    return memoized(source, "macro_bodies_by_name", lambda s: {
        s.node_text(m["name"][0]): s.node_text(m["value"][0]).split()
        for m in queries.matches(CUDA, _MACRO_BODIES_BY_NAME, s.tree.root_node)})


def _expanded_words(word: str, source: SourceFile, offset: int, seen: frozenset[str] = frozenset()) -> set[str]:
    """The words `word` expands to where `offset` stands: through this file's `#define`s,
    then the macros the ROCm build sees there from the project's headers
    (`#define IHD INLINE HOST DEVICE` in one header, `#define DEVICE __device__` in another)."""
    body = _file_macro_bodies(source).get(word)
    if body is None and source.build is not None:
        state = source.build.state(word, offset, rocm=True)
        body = state.body.split() if isinstance(state, Macro) and not state.is_function_like and state.body else None
    if body is None or word in seen:
        return {word}
    return {expanded for part in body for expanded in _expanded_words(part, source, offset, seen | {word})}


def _qualifier_words(function, source: SourceFile) -> set[str]:
    """The words before the declarator: `inline`, `__host__`, a macro's name, the type."""
    declarator = function.child_by_field_name("declarator")
    return {word for child in function.children if child.end_byte <= declarator.start_byte
            for word in source.node_text(child).split()}


def _vector_parameter(parameter, source: SourceFile) -> tuple[str, str] | None:
    """(vector type, how it is passed: `ref`, `const-ref` or `value`) of a parameter."""
    if parameter.type != "parameter_declaration":
        return None
    written = source.node_text(parameter.child_by_field_name("type"))
    if written not in _VECTOR_WIDTHS:
        return None
    const = any(c.type == "type_qualifier" and source.node_text(c) == "const" for c in parameter.children)
    declarator = parameter.child_by_field_name("declarator")
    if declarator is not None and declarator.type == "reference_declarator":
        return written, "const-ref" if const else "ref"
    if declarator is None or declarator.type == "identifier":
        return written, "value"
    return None


@needs(all_of(b"operator", any_of(*(name.encode() for name in _VECTOR_WIDTHS))))
def check_vector_compound_operator(source: SourceFile) -> list[Finding]:
    findings = []
    for match in queries.matches(CUDA, _OPERATOR_DEFINITIONS, source.tree.root_node):
        name_node, function = match["name"][0], match["function"][0]
        operator = "".join(source.node_text(name_node).split())
        if operator not in _COMPOUND_ASSIGNMENTS:
            continue
        if any(outer.type in _OTHER_SCOPES for outer in ancestors_of(function)):
            continue  # a member, or in a namespace that argument lookup of `float3` does not search
        if under_hip_version_test(function, source):
            continue  # kept for the HIP releases it names
        parameters = [_vector_parameter(p, source) for p in match["parameters"][0].named_children
                      if p.type != "comment"]
        if len(parameters) != 2 or parameters[0] is None or parameters[1] is None:
            continue
        (left, left_pass), (right, right_pass) = parameters
        if left != right or left_pass != "ref" or right_pass == "ref":
            continue
        words = {expanded for word in _qualifier_words(function, source)
                 for expanded in _expanded_words(word, source, function.start_byte)}
        if not {"__host__", "__device__"} <= words:
            continue  # one side only: its own pass prefers it to HIP's member
        findings.append(at_node(
            source, name_node,
            f"HIP's `{left}` has a `__host__ __device__` member `{operator}`: with this one, every "
            f"`a {operator[8:]} b` on two `{left}` is ambiguous and hip-clang rejects it.",
            Fix.advice(f"Keep this `{operator}` for CUDA only (`#if !defined(__HIP_PLATFORM_AMD__)` around it); "
                       f"HIP's member computes the same")))
    return findings


# =========================================================================================
# N010 vector-union-assignment

# Up to ROCm 5.4, HIP's vector types of 1, 2 and 4 members define their own copy assignment
# (`float3`'s is defaulted): a union with such a member has its `operator=` implicitly
# deleted, and so does a struct holding that union. Copy construction stays trivial, so
# `Packed old = *p;`, passing and returning by value compile; only `=` fails. ROCm 5.5 made
# the assignment trivial; CUDA's types are plain structs.
_NONTRIVIAL_ASSIGNMENT_VECTORS = frozenset(
    f"{base}{n}" for base in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                              "ulonglong", "float", "double") for n in (1, 2, 4))
_CLASS_SPECIFIERS = frozenset({"union_specifier", "struct_specifier", "class_specifier"})
_CLASS_DEFINITIONS = """
[(union_specifier body: (field_declaration_list)) @class
 (struct_specifier body: (field_declaration_list)) @class
 (class_specifier body: (field_declaration_list)) @class]
"""
_ASSIGNMENTS = '(assignment_expression left: (_) @left operator: "=") @assignment'
# What a class's assignment is, from its members: a vector type above (or a class holding
# one) makes a struct's `operator=` non-trivial and a union's deleted; a deleted one makes
# the holder's deleted.
_NONTRIVIAL, _DELETED = "nontrivial", "deleted"
_PREPROCESSOR_ARMS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else"})


class _ClassAssignments:
    """The file's own classes (as the ROCm build sees them) and what assigning each does."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.by_name: dict[str, list] = {}
        for match in queries.matches(CUDA, _CLASS_DEFINITIONS, source.tree.root_node):
            node = match["class"][0]
            if source.rocm_path is not None and source.rocm_path.status(node.start_byte) is Status.DEAD:
                continue  # a definition for CUDA only
            for name in self._names(node):
                self.by_name.setdefault(name, []).append(node)
        self._memo: dict[int, tuple[str | None, object]] = {}

    def _names(self, node) -> list[str]:
        name = node.child_by_field_name("name")
        if name is not None:
            return [self.source.node_text(name)]
        if node.parent is not None and node.parent.type == "type_definition":  # `typedef union {...} Packed;`
            return [self.source.node_text(d) for d in node.parent.children_by_field_name("declarator")
                    if d.type == "type_identifier"]
        return []

    def fields(self, node):
        """The member declarations the ROCm build compiles, through `#if` arms."""
        pending = list(node.child_by_field_name("body").named_children)
        while pending:
            child = pending.pop(0)
            if child.type in _PREPROCESSOR_ARMS:
                pending[:0] = child.named_children  # each arm's members; a dead arm's are skipped below
                continue
            if self.source.rocm_path is not None and self.source.rocm_path.status(child.start_byte) is Status.DEAD:
                continue
            yield child

    def _declares_assignment(self, node) -> bool:
        return any(c.type == "operator_name" and "".join(self.source.node_text(c).split()) == "operator="
                   for field in self.fields(node) for c in _descendants(field, 4))

    def named(self, type_text: str) -> tuple[str | None, object]:
        """(how assigning the class `type_text` goes, the vector member to blame) when every
        live definition of that name agrees; else (None, None)."""
        name = _class_name(type_text)
        if name in _NONTRIVIAL_ASSIGNMENT_VECTORS:
            return None, None
        found = {self.assignment(node) for node in self.by_name.get(name, ())}
        kinds = {kind for kind, _ in found}
        return next(iter(found)) if len(kinds) == 1 and None not in kinds else (None, None)

    @bounded((None, None))
    def assignment(self, node) -> tuple[str | None, object]:
        """(_NONTRIVIAL or _DELETED or None, the vector member to blame) for a class definition."""
        if node.id in self._memo:
            return self._memo[node.id]
        self._memo[node.id] = (None, None)  # a class holding itself through a pointer is no member
        if self._declares_assignment(node):
            return None, None  # its own `operator=` (and CUDA would reject a union holding it anyway)
        nontrivial = deleted = None
        for field in self.fields(node):
            if field.type != "field_declaration":
                continue
            type_node = field.child_by_field_name("type")
            declarators = field.children_by_field_name("declarator")
            if any(_pointer_or_function(d) for d in declarators):
                continue
            if type_node is None:
                continue
            if type_node.type in _CLASS_SPECIFIERS and type_node.child_by_field_name("body") is not None:
                kind, culprit = self.assignment(type_node)  # `union { int2 v; long long b; };` inside
            elif self.source.node_text(type_node) in _NONTRIVIAL_ASSIGNMENT_VECTORS \
                    and self.source.node_text(type_node) not in self.by_name:  # not the file's own `struct int2`
                kind, culprit = _NONTRIVIAL, field
            else:
                kind, culprit = self.named(declared_type_name(type_node, self.source))
            if kind == _DELETED and deleted is None:
                deleted = culprit
            elif kind == _NONTRIVIAL and nontrivial is None:
                nontrivial = culprit
        if node.type == "union_specifier" and (nontrivial or deleted) is not None:
            result = (_DELETED, nontrivial if nontrivial is not None else deleted)
        elif deleted is not None:
            result = (_DELETED, deleted)
        elif nontrivial is not None:
            result = (_NONTRIVIAL, nontrivial)
        else:
            result = (None, None)
        self._memo[node.id] = result
        return result

    def member_type(self, class_type: str, member: str) -> Declared | None:
        """The declared type of `member` of the file's class `class_type` (anonymous members'
        members included), when its live definitions agree."""
        found = set()
        for node in self.by_name.get(_class_name(class_type), ()):
            found |= {declared for name, declared in self._members(node) if name == member}
        return found.pop() if len(found) == 1 else None

    def _members(self, node):
        for field in self.fields(node):
            if field.type != "field_declaration":
                continue
            type_node = field.child_by_field_name("type")
            if type_node is None:
                continue
            declarators = field.children_by_field_name("declarator")
            if not declarators and type_node.type in _CLASS_SPECIFIERS \
                    and type_node.child_by_field_name("body") is not None:
                yield from self._members(type_node)  # an anonymous union's members are the holder's
                continue
            for declarator in declarators:
                depth, inner = 0, declarator
                while inner is not None and inner.type in ("pointer_declarator", "array_declarator"):
                    depth += 1
                    inner = inner.child_by_field_name("declarator")
                if inner is not None and inner.type == "field_identifier":
                    yield self.source.node_text(inner), Declared(declared_type_name(type_node, self.source), depth)


def _descendants(node, depth: int):
    yield node
    if depth:
        for child in node.children:
            yield from _descendants(child, depth - 1)


def _pointer_or_function(declarator) -> bool:
    while declarator is not None and declarator.type == "array_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator is not None and declarator.type in ("pointer_declarator", "function_declarator",
                                                          "reference_declarator")


def _class_name(type_text: str) -> str:
    """The name a class is defined under, from a type as written: `ns::Cell<float>` -> `Cell`."""
    return type_text.split("<")[0].split("::")[-1].strip()


@bounded(None)
def _assigned_type(node, classes: _ClassAssignments, source: SourceFile) -> Declared | None:
    """The type of an assigned expression: what `expression_type` knows, and members of the
    file's own classes (`h.slot`, `h->slots[i]`)."""
    node = strip_parens(node)
    if node is None:
        return None
    if node.type == "field_expression":
        base = _assigned_type(node.child_by_field_name("argument"), classes, source)
        through_pointer = node.child_by_field_name("operator").type == "->"
        if base is None or base.depth != int(through_pointer):
            return None
        return classes.member_type(base.type, source.node_text(node.child_by_field_name("field")))
    element = node.type == "subscript_expression" or (
        node.type == "pointer_expression" and node.child_by_field_name("operator").type == "*")
    if element and strip_parens(node.child_by_field_name("argument")).type == "field_expression":  # `h.slots[i]`
        inner = _assigned_type(node.child_by_field_name("argument"), classes, source)
        return inner._replace(depth=inner.depth - 1) if inner is not None and inner.depth > 0 else None
    return expression_type(source, node)


def _spanning_member(union, source: SourceFile) -> str | None:
    """A scalar member of `union` as wide as every other member (`unsigned long long bits`
    beside `int2 pair`): copying it copies the whole union, on CUDA as on ROCm."""
    if union.type != "union_specifier":
        return None
    sizes, scalars = [], []
    for field in union.child_by_field_name("body").named_children:
        if field.type == "comment":
            continue
        declarators = field.children_by_field_name("declarator") if field.type == "field_declaration" else []
        type_node = field.child_by_field_name("type") if len(declarators) == 1 else None
        if type_node is None or declarators[0].type != "field_identifier":
            return None  # an array, a nested class, an `#if`: sizes not read here
        text = source.node_text(type_node)
        size = type_size(text)
        if size is None:
            return None
        sizes.append(size)
        if type_node.type in ("primitive_type", "sized_type_specifier") or (
                type_node.type == "type_identifier" and text not in _VECTOR_WIDTHS
                and text not in _NONTRIVIAL_ASSIGNMENT_VECTORS):
            scalars.append((size, source.node_text(declarators[0])))
    return next((name for size, name in scalars if size == max(sizes)), None)


def _member_of(expression, member: str, source: SourceFile) -> str:
    text = source.node_text(expression)
    simple = strip_parens(expression).type in ("identifier", "field_expression", "subscript_expression")
    return f"{text}.{member}" if simple else f"({text}).{member}"


@needs(all_of(b"union", any_of(*(name.encode() for name in _NONTRIVIAL_ASSIGNMENT_VECTORS))))
def check_vector_union_assignment(source: SourceFile) -> list[Finding]:
    classes = _ClassAssignments(source)
    if not classes.by_name:
        return []
    findings = []
    for match in queries.matches(CUDA, _ASSIGNMENTS, source.tree.root_node):
        assigned = _assigned_type(match["left"][0], classes, source)
        if assigned is None or assigned.depth != 0:
            continue
        kind, culprit = classes.named(assigned.type)
        if kind != _DELETED:
            continue
        assignment = match["assignment"][0]
        vector = source.node_text(culprit.child_by_field_name("type"))
        # A spanning member is named only where the assigned union holds the vector itself.
        union = culprit.parent.parent
        member = _spanning_member(union, source) if union in classes.by_name[_class_name(assigned.type)] else None
        if member is not None:
            left, right = (_member_of(assignment.child_by_field_name(side), member, source)
                           for side in ("left", "right"))
            advice = f"Copy the member that spans the union (`{left} = {right};`)"
        else:
            advice = "Copy the members one by one"
        findings.append(at_node(
            source, assignment,
            f"ROCm 5.4 and older reject assigning a `{assigned.type}`: "
            f"HIP's `{vector}` member deletes its `operator=`.",
            Fix.advice(f"{advice}, or require ROCm 5.5 or newer, whose `{vector}` copies trivially"),
            related=(Related(source.location(culprit.start_byte, culprit.end_byte),
                             f"the `{vector}` member, whose `operator=` HIP 5.4 and older define"),)))
    return findings


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _HALF_EXPRESSIONS,
    INCLUDES,
    _SUBTRACTIONS,
    _ASM,
    _TYPED_BRACES,
    _FUNCTION_DEFINITIONS,
    _OPERATOR_DEFINITIONS,
    _MACRO_BODIES_BY_NAME,
    _CLASS_DEFINITIONS,
    _ASSIGNMENTS,
)
