"""A: CUDA device intrinsics that HIP does not declare, and what replaces each.

Checked against the HIP headers (HIP 5.2 as installed here, and the current clr and
clang `__clang_hip_math.h` sources): the directed-rounding arithmetic exists only under
`OCML_BASIC_ROUNDED_OPERATIONS` and then fails to link; the cache-hint loads exist only
for `__half`/bfloat16 pointers; the rest is not declared at all.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from portlint.checks.cpp import (
    arguments, calls_by_name, defined_functions, enclosing_function, expression_type, macro_calls_by_name,
    strip_parens, template_instances,
)
from portlint.finding import Finding, at_node
from portlint.fix import ROCM_ARM, Edit, Fix, rocm_arm
from portlint.source import SourceFile
from portlint.triggers import needs


class Unsupported(NamedTuple):
    what: str  # "SIMD intrinsic", for the message
    advice: str  # the fix title when no edit applies
    missing: str = "does not exist in HIP"


_DIRECTED_ROUNDING = re.compile(
    r"^__(?:f(?:add|sub|mul|div|rcp|sqrt)|fmaf(?:_ieee)?|d(?:add|sub|mul|div|rcp|sqrt)|fma)_r[zdu]$")
_SIMD_VIDEO = re.compile(
    r"^__v(?:abs|absss|absdiff[su]|add|addss|addus|avg[su]|cmp(?:eq|ne|[gl][te][su])|haddu|max[su]|min[su]"
    r"|neg|negss|sad[su]|set(?:eq|ne|[gl][te][su])|sub|subss|subus)[24]$")
_DPX = re.compile(r"^__vi(?:b?max|b?min|max3|min3|addmax|addmin)_[su](?:16x2|32)(?:_relu)?$")
_NARROW_FLOAT_CONVERSION = re.compile(r"^__nv_cvt_\w*(?:fp[468]|e8m0)\w*$")
# Loads and stores with a PTX cache operator; a plain access keeps their meaning.
CACHE_HINT_LOADS = frozenset({"__ldcs", "__ldcg", "__ldca", "__ldlu"})
HALF_ONLY_LOADS = frozenset({"__ldcs", "__ldcg", "__ldca"})  # HIP declares these for `__half` pointers
CACHE_HINT_STORES = frozenset({"__stcs", "__stcg", "__stwb"})
# HIP declares cache-hint loads for 16-bit float pointers: those calls build.
SIXTEEN_BIT_FLOATS = frozenset({
    "__half", "half", "__half2", "half2", "__nv_bfloat16", "__nv_bfloat162", "__hip_bfloat16", "__hip_bfloat162",
})
FIXED_NAMES = {
    "__trap": Unsupported("Trap intrinsic", "Replace `__trap()` with `__builtin_trap()`"),
    "__brkpt": Unsupported("Breakpoint intrinsic", "Remove `__brkpt()` and set the breakpoint in rocgdb"),
    "__prof_trigger": Unsupported(
        "Profiler intrinsic", "Remove `__prof_trigger`; mark the region from the host with `roctxRangePush`"),
    "__nanosleep": Unsupported(
        "Sleep intrinsic",
        "Sleep with `__builtin_amdgcn_s_sleep(N)`: N is a constant, each unit about 64 clock cycles"),
    "__ldcv": Unsupported(
        "Volatile load", "Read through a `volatile` pointer, `*(volatile T*)p`, so each read reaches memory"),
    "__stwt": Unsupported(
        "Write-through store", "Store through a `volatile` pointer, `*(volatile T*)p = v`"),
    "__dp4a": Unsupported(
        "Dot-product intrinsic", "Replace `__dp4a(a, b, c)` with `__builtin_amdgcn_sdot4(a, b, c, false)` "
                                 "(gfx906 and later) or four byte products"),
    "__dp2a_lo": Unsupported("Dot-product intrinsic", "Write `__dp2a_lo` out as two 16×8-bit products"),
    "__dp2a_hi": Unsupported("Dot-product intrinsic", "Write `__dp2a_hi` out as two 16×8-bit products"),
}
# A cheap first look: does the file mention anything this rule knows?
_CANDIDATE = re.compile(
    rb"__(?:trap|brkpt|prof_trigger|nanosleep|dp[24]a|ld(?:c[sgav]|lu)|st(?:c[sg]|w[bt])|nv_cvt_"
    rb"|v[a-z]+[24]\b|vi[a-z0-9]+_[su]|[fd][a-z]+_r[zdu]\b|fmaf_ieee_r[zdu]\b)")


def classify(name: str) -> Unsupported | None:
    """What HIP lacks in `name` and how to replace it; None for intrinsics HIP provides."""
    if name in FIXED_NAMES:
        return FIXED_NAMES[name]
    if name in CACHE_HINT_LOADS:
        missing = "exists in HIP only for `__half` pointers" if name in HALF_ONLY_LOADS else "does not exist in HIP"
        return Unsupported("Cache-hint load", f"Replace `{name}(p)` with the plain load `*p`", missing)
    if name in CACHE_HINT_STORES:
        return Unsupported("Cache-hint store", f"Replace `{name}(p, v)` with the plain store `*p = v`")
    if _DIRECTED_ROUNDING.match(name):
        return Unsupported("Directed-rounding intrinsic",
                           f"Use `{name[:-3].replace('_ieee', '')}_rn` where round-to-nearest is acceptable; "
                           "otherwise emulate the rounding")
    if _SIMD_VIDEO.match(name) or _DPX.match(name):
        return Unsupported("SIMD intrinsic",
                           f"Write `{name}` out as per-lane integer arithmetic in a `__device__` helper for HIP")
    if _NARROW_FLOAT_CONVERSION.match(name):
        return Unsupported("FP8 conversion",
                           "Convert with `__hip_cvt_float_to_fp8` from `<hip/hip_fp8.h>`, "
                           "using `__HIP_E4M3_FNUZ` on MI300 (gfx942)")
    return None


# Expressions `*` applies to without parentheses.
_POSTFIX_OR_CAST = frozenset({
    "identifier", "call_expression", "subscript_expression", "field_expression", "cast_expression",
})


def _as_operand(text: str, call) -> str:
    """Parenthesise a `*p` that replaces a call standing as a postfix operand (`f(p).x`)."""
    parent = call.parent
    if text.startswith("*") and parent is not None and parent.type in ("field_expression", "subscript_expression"):
        return f"({text})"
    return text


def _dereference(pointer, source: SourceFile) -> str:
    """`*p` written as simply as the pointer allows: `&x[i]` -> `x[i]`, `p + i` -> `p[i]`."""
    pointer = strip_parens(pointer)
    text = source.node_text(pointer)
    if pointer.type == "pointer_expression" and pointer.child_by_field_name("operator").type == "&":
        return source.node_text(pointer.child_by_field_name("argument"))
    if pointer.type in _POSTFIX_OR_CAST:
        return f"*{text}"
    if pointer.type == "binary_expression" and pointer.child_by_field_name("operator").type == "+":
        left, right = pointer.child_by_field_name("left"), pointer.child_by_field_name("right")
        declared = expression_type(source, left)
        if declared is not None and declared.depth > 0 and strip_parens(left).type == "identifier":
            return f"{source.node_text(left)}[{source.node_text(right)}]"
    return f"*({text})"


def _fix(name: str, call, unsupported: Unsupported, source: SourceFile) -> Fix:
    args = arguments(call)
    if name == "__trap" and not args:
        # nvcc rejects `__builtin_trap` in device code: `__trap()` stays for CUDA.
        title = f"Trap with `__builtin_trap()` under `{ROCM_ARM}`, keeping `__trap()` for nvcc"
        return Fix.unsafe(title, *edits) if (edits := _trap_arm(call, source)) else Fix.advice(title)
    if name in CACHE_HINT_LOADS and len(args) == 1:
        load = _as_operand(_dereference(args[0], source), call)
        return Fix.unsafe(f"Replace `{name}(...)` with the plain load `{load}` (drops the cache hint on CUDA too)",
                          Edit.replace(call, load))
    if name in CACHE_HINT_STORES and len(args) == 2 and call.parent.type == "expression_statement":
        store = f"{_dereference(args[0], source)} = {source.node_text(args[1])}"
        return Fix.unsafe(f"Replace `{name}(...)` with the plain store `{store}` (drops the cache hint on CUDA too)",
                          Edit.replace(call, store))
    return Fix.advice(unsupported.advice)


def _trap_arm(call, source: SourceFile):
    """The edits that give a `__trap();` statement, or the macro whose body calls it, a ROCm
    arm with `__builtin_trap()` (`fix.rocm_arm`); None where neither has its lines to itself."""
    node = call.parent
    while node is not None and node.type not in ("preproc_function_def", "preproc_def", "expression_statement"):
        node = node.parent
    if node is not None and _root_of(node) != source.tree.root_node:
        node = None  # a statement of a macro's body (parsed apart): the macro is in the file's own tree
    if node is None:
        node = source.tree.root_node.descendant_for_byte_range(call.start_byte, call.end_byte)
        while node is not None and node.type not in ("preproc_function_def", "preproc_def"):
            node = node.parent
    if node is None:
        return None
    if node.type == "expression_statement":
        return rocm_arm(source.data, node.start_byte, node.end_byte, "__builtin_trap();")
    value = node.child_by_field_name("value")  # `#define KERNEL_ASSERT(c) ... __trap() ...`
    if value is None:
        return None
    data = source.data
    end = value.end_byte
    rocm = (data[node.start_byte:call.start_byte] + b"__builtin_trap()" + data[call.end_byte:end]).decode("utf-8")
    return rocm_arm(data, node.start_byte, end, rocm.rstrip())


def _root_of(node):
    while node.parent is not None:
        node = node.parent
    return node


def _points_to_16_bit_float(call, source: SourceFile) -> bool:
    args = arguments(call)
    pointee = expression_type(source, args[0]) if args else None
    if pointee is None or pointee.depth != 1:
        return False
    if pointee.type in SIXTEEN_BIT_FLOATS:
        return True
    # A template's type parameter (`const T* row`): the types this file instantiates it with
    # (`template __global__ void quant<half, 1024>(...)`, `quant<half><<<g, b>>>(...)`).
    types = template_instances(source, enclosing_function(call), pointee.type)
    return bool(types) and all(t is not None and " ".join(source.node_text(t).split()) in SIXTEEN_BIT_FLOATS
                               for t in types)


@needs(_CANDIDATE)
def check_unsupported_intrinsic(source: SourceFile) -> list[Finding]:
    if not _CANDIDATE.search(source.data):
        return []
    own = defined_functions(source)  # a project's own `__vadd4` for HIP is no hazard
    indexes = [calls_by_name(source)]
    if b"#define" in source.data:
        indexes.append(macro_calls_by_name(source))
    findings = []
    for index in indexes:
        for name, found in index.items():
            unsupported = classify(name)
            if unsupported is None or name in own:
                continue
            for call in found:
                if name.startswith(("__ld", "__st")) and _points_to_16_bit_float(call, source):
                    continue
                if source.rocm_defines_function(name, call.start_byte):
                    continue  # a project header gives the ROCm build its own `__vsub4`
                findings.append(at_node(source, call.child_by_field_name("function"),
                                        f"{unsupported.what} `{name}` {unsupported.missing}.",
                                        _fix(name, call, unsupported, source)))
    return findings
