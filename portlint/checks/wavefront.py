"""W: code that assumes 32-lane warps; CDNA GPUs run 64-lane wavefronts."""

from __future__ import annotations

from portlint import queries
from portlint.checks.cpp import arguments, callee_name, integer_suffix, integer_value, strip_parens
from portlint.finding import Finding, at_node
from portlint.fix import Edit, Fix
from portlint.source import CUDA, SourceFile

FULL_MASK_64 = "~0ull"

# Warp intrinsics whose first argument is a lane mask.
MASKED_INTRINSICS = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync",
    "__match_any_sync", "__match_all_sync", "__syncwarp",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
})

_CALLS = "(call_expression function: (_) arguments: (argument_list)) @call"


def _is_32_lane_full_mask(node, source: SourceFile) -> bool:
    """`0xffffffff`, `0xFFFFFFFFu`, `0xffffffffull`, `~0u`, `uint32_t(-1)`, `(unsigned)-1`."""
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "number_literal":
        return integer_value(node, source) == 0xFFFFFFFF
    if node.type == "unary_expression":
        op = node.child_by_field_name("operator")
        arg = strip_parens(node.child_by_field_name("argument"))
        # `~0u` is 32 one-bits; `~0` (an int, -1) widens to 64 and is fine.
        return (op is not None and op.type == "~" and integer_value(arg, source) == 0
                and "u" in integer_suffix(arg, source) and "ll" not in integer_suffix(arg, source))
    if node.type in ("cast_expression", "call_expression"):
        # uint32_t(-1), unsigned(-1), (uint32_t)-1, (unsigned int)-1
        text = source.node_text(node).replace(" ", "")
        return text in {
            "uint32_t(-1)", "unsigned(-1)", "(uint32_t)-1", "(unsigned)-1", "(unsignedint)-1",
            "(uint32_t)(-1)", "(unsigned)(-1)", "static_cast<uint32_t>(-1)", "static_cast<unsigned>(-1)",
        }
    return False


def check_narrow_full_mask(source: SourceFile) -> list[Finding]:
    if b"_sync" not in source.data and b"__syncwarp" not in source.data:
        return []
    findings = []
    for call in queries.nodes(CUDA, _CALLS, source.tree.root_node, "call"):
        name = callee_name(call, source)
        if name not in MASKED_INTRINSICS:
            continue
        args = arguments(call)
        if not args or not _is_32_lane_full_mask(args[0], source):
            continue
        mask = strip_parens(args[0])
        text = source.node_text(mask)
        findings.append(at_node(
            source, mask,
            f"Mask `{text}` covers 32 lanes; AMD wavefronts have 64.",
            Fix.safe(f"Replace `{text}` with `{FULL_MASK_64}` (every lane of a 64-lane wavefront)",
                     Edit.replace(mask, FULL_MASK_64)),
        ))
    return findings
