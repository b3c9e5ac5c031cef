"""A: inline assembly and intrinsics that exist only on NVIDIA GPUs."""

from __future__ import annotations

import re

from portlint import queries
from portlint.checks.cpp import STRING_PIECES, enclosing_function, macro_bodies_root
from portlint.finding import Finding, at_node
from portlint.fix import Fix
from portlint.source import CUDA, SourceFile
from portlint.triggers import needs

GUARD = "`#ifndef __HIP_PLATFORM_AMD__`"
GENERIC_REPLACEMENT = "HIP intrinsics or `__builtin_amdgcn_*` builtins"

# PTX special registers (`%%laneid` inside extended asm) and their HIP spelling.
SPECIAL_REGISTERS = {
    "laneid": "`__lane_id()`",
    "smid": "`__smid()`",
    "warpid": "`threadIdx.x / warpSize`",
    "clock": "`clock64()`",
    "clock64": "`clock64()`",
    "globaltimer": "`wall_clock64()`",
    "globaltimer_lo": "`wall_clock64()`",
    "globaltimer_hi": "`wall_clock64()`",
    "lanemask_lt": "`__lanemask_lt()`",
    "lanemask_gt": "`__lanemask_gt()`",
    "lanemask_eq": "`__lanemask_eq()`",
    "lanemask_le": "`__lanemask_lt() | __lanemask_eq()`",
    "lanemask_ge": "`__lanemask_gt() | __lanemask_eq()`",
    "tid": "`threadIdx`",
    "ntid": "`blockDim`",
    "ctaid": "`blockIdx`",
    "nctaid": "`gridDim`",
    "nwarpid": None, "nsmid": None, "gridid": None, "dynamic_smem_size": None, "total_smem_size": None,
}
_SPECIAL_REGISTER = re.compile(r"%%?(" + "|".join(sorted(SPECIAL_REGISTERS, key=len, reverse=True)) + r")\b")

# PTX instructions and the HIP code that replaces them (None: no single replacement). Keys are
# the opcode and its modifiers without `sync`/`aligned`; the longest known prefix wins.
_WMMA = "rocWMMA (`rocwmma::load_matrix_sync`, `rocwmma::mma_sync`) or `__builtin_amdgcn_mfma_*` builtins"
OPCODES = {
    "shfl": "`__shfl`, `__shfl_xor`, `__shfl_up` or `__shfl_down`",
    "shfl.bfly": "`__shfl_xor(value, lane_mask)`", "shfl.up": "`__shfl_up(value, delta)`",
    "shfl.down": "`__shfl_down(value, delta)`", "shfl.idx": "`__shfl(value, src_lane)`",
    "vote": "`__ballot(pred)`, `__any(pred)` or `__all(pred)`",
    "vote.ballot": "`__ballot(pred)`", "vote.any": "`__any(pred)`", "vote.all": "`__all(pred)`",
    "activemask": "`__ballot(1)`",
    "cp": "a plain load into `__shared__` memory followed by `__syncthreads()`",
    "cp.async.commit_group": "nothing (the copies are plain loads on HIP)",
    "cp.async.wait_group": "`__syncthreads()` after the plain loads into `__shared__` memory",
    "cp.async.wait_all": "`__syncthreads()` after the plain loads into `__shared__` memory",
    "ldmatrix": _WMMA, "stmatrix": _WMMA, "movmatrix": _WMMA, "mma": _WMMA, "wmma": _WMMA, "wgmma": _WMMA,
    "ld": "a plain load, `__ldg(ptr)` or `__builtin_nontemporal_load(ptr)`",
    "ldu": "a plain load or `__ldg(ptr)`",
    "st": "a plain store or `__builtin_nontemporal_store(value, ptr)`",
    "bar": "`__syncthreads()`", "barrier": "`__syncthreads()`",
    "membar": "`__threadfence()`, `__threadfence_block()` or `__threadfence_system()`",
    "fence": "`__threadfence()`, `__threadfence_block()` or `__threadfence_system()`",
    "atom": "`atomicAdd`, `atomicCAS` and the other atomic functions",
    "red": "`atomicAdd` and the other atomic functions",
    "cvt": "the conversion intrinsics (`__float2half_rn`, `__float2int_rz`, ...)",
    "prmt": "`__byte_perm(x, y, selector)`",
    "lop3": "plain `&`, `|`, `^` and `~`",
    "bfe": "`__bitextract_u32(x, offset, width)`",
    "bfi": "`__bitinsert_u32(x, y, offset, width)`",
    "brev": "`__brev(x)`", "popc": "`__popc(x)`", "clz": "`__clz(x)`", "bfind": "`31 - __clz(x)`",
    "ex2": "`exp2f(x)`", "lg2": "`__log2f(x)`", "rcp": "`__frcp_rn(x)`", "sqrt": "`__fsqrt_rn(x)`",
    "rsqrt": "`rsqrtf(x)`", "sin": "`__sinf(x)`", "cos": "`__cosf(x)`", "tanh": "`tanhf(x)`",
    "nanosleep": "`__builtin_amdgcn_s_sleep(n)`",
    "mov": None, "setp": None, "selp": None, "set": None, "add": None, "sub": None, "mul": None,
    "mad": None, "fma": None, "div": None, "rem": None, "abs": None, "neg": None, "min": None,
    "max": None, "and": None, "or": None, "xor": None, "not": None, "shl": None, "shr": None,
    "shf": None, "cvta": None, "match": None, "redux": None, "dp4a": None, "dp2a": None,
    "prefetch": None, "prefetchu": None, "discard": None, "isspacep": None, "mapa": None,
    "mbarrier": None, "elect": None, "griddepcontrol": None, "setmaxnreg": None, "tcgen05": None,
    "multimem": None, "tensormap": None, "createpolicy": None, "applypriority": None,
    "copysign": None, "sad": None, "szext": None, "slct": None, "testp": None, "bmsk": None,
    "getctarank": None, "clusterlaunchcontrol": None,
}
# Opcodes no other instruction set spells with a dot: any dotted use is PTX. The others
# (`mov`, `add`, `ld`, `fence`, ...) need a PTX modifier too.
PTX_ONLY_OPCODES = frozenset({
    "shfl", "vote", "activemask", "ldmatrix", "stmatrix", "movmatrix", "mma", "wmma", "wgmma", "membar",
    "setp", "selp", "cvta", "prmt", "lop3", "bfe", "bfi", "bfind", "brev", "redux", "dp4a", "dp2a",
    "prefetchu", "isspacep", "mapa", "mbarrier", "elect", "griddepcontrol", "setmaxnreg", "tcgen05",
    "multimem", "tensormap", "createpolicy", "applypriority", "bmsk", "getctarank",
    "clusterlaunchcontrol", "nanosleep", "ex2", "lg2", "testp", "szext",
})
# A modifier only PTX uses: a typed operand size, a state space, or a PTX-only qualifier.
# (MIPS `add.s`, RISC-V `fence.i` have dotted opcodes too, but none of these modifiers.)
_PTX_TYPE = re.compile(r"^(?:[subf]\d{1,2}(?:x[24])?|bf16|bf16x2|e4m3|e5m2|tf32|pred|v[248]|m\d+n\d+(?:k\d+)?|x[124])$")
PTX_MODIFIERS = frozenset({
    "global", "shared", "local", "const", "param", "generic", "sync", "aligned", "async", "approx",
    "ftz", "sat", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "nc", "ca", "cg", "cs", "cv", "lu",
    "wb", "wt", "gl", "cta", "sys", "gpu", "cluster", "acquire", "release", "relaxed", "acq_rel", "sc",
    "proxy", "bfly", "up", "down", "idx", "ballot", "any", "all", "uni", "trans", "commit_group",
    "wait_group", "wait_all", "bulk", "row", "col", "wide", "hi", "lo", "cc", "volatile", "arrive",
    "L1", "L2",
})
# Modifiers may carry `::` qualifiers (`shared::cta`, `cta_group::1`).
_INSTRUCTION = re.compile(r"(?<![\w.%$])([a-z][a-z0-9]*)((?:\.[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)+)")
_DIRECTIVE = re.compile(r"(?<![\w.])\.(reg|pred)\b")
# Constraints of PTX operands with no counterpart elsewhere: "l" (64-bit) and "h" (16-bit) registers.
PTX_CONSTRAINTS = frozenset({"l", "h"})

ASM_QUERY = "(gnu_asm_expression) @asm"
_TEMPLATE_TYPES = ("string_literal", "concatenated_string", "raw_string_literal")
_OPERANDS = "[(gnu_asm_output_operand constraint: (string_literal) @c) (gnu_asm_input_operand constraint: (string_literal) @c)]"


def _template(asm, source: SourceFile) -> str:
    """The assembly text of an asm statement (string pieces joined by newlines)."""
    template = next((c for c in asm.named_children if c.type in _TEMPLATE_TYPES), None)
    if template is None:
        return ""
    pieces = queries.nodes(CUDA, STRING_PIECES, template, "text")
    return "\n".join(source.node_text(p) for p in pieces)


def _constraints(asm, source: SourceFile) -> set[str]:
    return {source.node_text(c).strip('"').lstrip("=+&") for c in queries.nodes(CUDA, _OPERANDS, asm, "c")}


def _in_device_code(node) -> bool:
    function = enclosing_function(node)
    return function is not None and any(c.type in ("__device__", "__global__") for c in function.children)


def _replacement(opcode: str, modifiers: list[str]) -> str | None:
    parts = [opcode] + [x for x in modifiers if x not in ("sync", "aligned")]
    for length in range(len(parts), 0, -1):
        key = ".".join(parts[:length])
        if key in OPCODES:
            return OPCODES[key]
    return None


def recognise_ptx(asm, source: SourceFile) -> tuple[str, str | None] | None:
    """(what shows it is PTX, in Markdown; its HIP replacement or None), or None for other assembly."""
    text = _template(asm, source)
    m = _SPECIAL_REGISTER.search(text)
    if m:
        return f"`%{m.group(1)}`", SPECIAL_REGISTERS[m.group(1)]
    generic = None
    for m in _INSTRUCTION.finditer(text):
        opcode, modifiers = m.group(1), [x.split("::")[0] for x in m.group(2).split(".")[1:]]
        if opcode not in OPCODES:
            continue
        if opcode not in PTX_ONLY_OPCODES and not any(x in PTX_MODIFIERS or _PTX_TYPE.match(x) for x in modifiers):
            continue
        marker = f"`{opcode}.{modifiers[0]}`"
        replacement = _replacement(opcode, modifiers)
        if replacement is not None:
            return marker, replacement
        generic = generic or (marker, None)
    if generic:
        return generic
    m = _DIRECTIVE.search(text)
    if m:
        return f"`.{m.group(1)}`", None
    constraints = _constraints(asm, source) & PTX_CONSTRAINTS
    if constraints and _in_device_code(asm):
        return f'`"{min(constraints)}"` constraint', None
    return None


@needs(b"asm")
def check_inline_ptx(source: SourceFile) -> list[Finding]:
    if b"asm" not in source.data:
        return []
    findings = []
    # PTX wrapped in macros (`#define CP_ASYNC_CG(dst, src, n) asm volatile("cp.async.cg...")`)
    # is reported once, at the macro, not at each use.
    in_macros = macro_bodies_root(source, (b"asm",))
    roots = (source.tree.root_node,) if in_macros is None else (source.tree.root_node, in_macros)
    for asm in (asm for root in roots for asm in queries.nodes(CUDA, ASM_QUERY, root, "asm")):
        recognised = recognise_ptx(asm, source)
        if recognised is None:
            continue
        marker, replacement = recognised
        findings.append(at_node(
            source, asm,
            f"Inline PTX ({marker}) does not assemble for AMD GPUs.",
            Fix.advice(f"Replace the asm with {replacement or GENERIC_REPLACEMENT}, or guard it with {GUARD}"),
        ))
    return findings


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    ASM_QUERY,
)
