"""W: warp operations and APIs written for 32-lane warps and for independent thread scheduling.

W004 shuffle widths, W005 warp-synchronous code that needs lanes to run independently,
W006 cooperative-groups tiles used as the warp, W010 the warp matrix (WMMA) API.
"""

from __future__ import annotations

from dataclasses import replace

from portlint import queries
from portlint.checks.cpp import (
    ancestors_of, arguments, callee_name, calls, enclosing_function, has_argument_list, identifiers_named,
    integer_value, open_constants, statement_of, strip_parens,
)
from portlint.checks.wavefront import (
    HOST_ADVICE, _first_32_threads_guard, _index_kind, _is_32_lane_full_mask, _is_thread_expr, _warp_size_fix, _words,
    masked_intrinsic_calls, shuffle_calls, shuffle_width_index, tile_size,
)
from portlint.checks.logical_warp import LogicalWarpNotes, open_warps, warp_model
from portlint.checks.wavefront_size import _warp_constant_kind
from portlint.finding import Finding, Related, Severity, at_node
from portlint.fix import Edit, Fix
from portlint.nesting import bounded
from portlint.rocm_path import Status
from portlint.source import CUDA, SourceFile
from portlint.triggers import needs


# =========================================================================================
# W004 shuffle-width-32

_SCAN_STEPS = {1, 2, 4, 8, 16}


@needs(b"shfl", b"SHFL")
def check_shuffle_width_32(source: SourceFile) -> list[Finding]:
    if b"shfl" not in source.data and b"SHFL" not in source.data:
        return []
    findings = []
    logical = LogicalWarpNotes(source)  # widths of 32 nothing observes: notes
    up_steps: dict[int, list] = {}  # function id -> [(offset, node)] of width-less `__shfl_up`
    width_parameters: dict[str, set[int]] = {}  # function name -> positions of parameters used as widths
    reported: set[int] = set()
    # Every name `shuffle_width_index` knows is a shuffle's (`shfl` in it).
    for call, name, args in shuffle_calls(source, source.tree.root_node):
        index = shuffle_width_index(name)
        if index is None or not has_argument_list(call):
            continue
        if len(args) > index:
            width = strip_parens(args[index])
            # Width 32 where nothing observes the hardware width: a logical warp, right on AMD too.
            if integer_value(width, source) == 32 and warp_model(source).observes(call):
                findings.append(replace(_width_finding(call, name, width, source),
                                        **open_warps(warp_model(source).observers(call))))
                reported.add(width.id)
            elif integer_value(width, source) == 32:
                logical.add(width)
                reported.add(width.id)
            elif width.type == "identifier":
                _note_width_parameter(call, source.node_text(width), source, width_parameters)
        elif name in ("__shfl_up", "__shfl_up_sync") and len(args) == index:
            function = enclosing_function(call)
            offset = integer_value(strip_parens(args[index - 1]), source)
            if function is not None and offset is not None:
                up_steps.setdefault(function.id, []).append((offset, args[index - 1]))
    findings += _widths_passed_in(source, width_parameters, reported, logical)
    # An unrolled scan `__shfl_up(v, 1)` ... `__shfl_up(v, 16)` sums 32 lanes; a 64-lane
    # wavefront also needs the step 32.
    for steps in up_steps.values():
        offsets = {offset for offset, _ in steps}
        if _SCAN_STEPS <= offsets and 32 not in offsets:
            last = next(node for offset, node in steps if offset == 16)
            findings.append(at_node(
                source, last, "Unrolled `__shfl_up` scan stops at offset `16`; lanes 32–63 miss earlier lanes.",
                Fix.advice("Loop over the offsets instead: `for (int o = 1; o < warpSize; o *= 2)`"),
            ))
    return findings + logical.findings()


def _note_width_parameter(call, width: str, source: SourceFile, found: dict[str, set[int]]) -> None:
    """Record that the function around `call` takes its shuffle width as the parameter `width`."""
    function = enclosing_function(call)
    declarator = function.child_by_field_name("declarator") if function is not None else None
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return
    name, parameters = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("parameters")
    if name is None or name.type != "identifier" or parameters is None:
        return
    for position, parameter in enumerate(p for p in parameters.named_children if p.type != "comment"):
        declared = parameter.child_by_field_name("declarator")
        if declared is not None and declared.type == "identifier" and source.node_text(declared) == width:
            found.setdefault(source.node_text(name), set()).add(position)


def _widths_passed_in(source: SourceFile, width_parameters: dict[str, set[int]], reported: set[int],
                      logical: LogicalWarpNotes) -> list[Finding]:
    """`scan<<<g, b>>>(data, 32)` where `scan` shuffles with that parameter as its width;
    `reported`: ids of the width nodes reported already. As for a shuffle's own width, where
    nothing observes the hardware width the 32 is a logical warp's (`logical`, a note)."""
    findings = []
    for function, positions in width_parameters.items():
        for name in identifiers_named(source, function):
            call = name.parent
            if call is not None and call.type == "argument_list" and callee_name(call.parent, source) in (
                    "hipLaunchKernelGGL", "hipExtLaunchKernelGGL"):
                args = arguments(call.parent)  # (kernel, grid, block, shared bytes, stream, arguments...)
                args = args[5:] if args and args[0] == name else []
            elif call is not None and call.type == "call_expression" and call.child_by_field_name("function") == name:
                args = arguments(call)
            else:
                continue
            for position in sorted(positions):
                value = strip_parens(args[position]) if position < len(args) else None
                # A wrapper's call (`WARP_SHFL_DOWN(v, d, 32)`) may have been judged as a shuffle already.
                if value is not None and integer_value(value, source) == 32 and value.id not in reported:
                    if not warp_model(source).observes(value):
                        logical.add(value)
                        continue
                    findings.append(replace(at_node(
                        source, value, f"`32` is the shuffle width of `{function}`: half of a 64-lane AMD wavefront.",
                        Fix.advice(HOST_ADVICE if not _in_device_code(call, source) else
                                   "Pass `warpSize` (or a per-platform warp size)")),
                        **open_warps(warp_model(source).observers(value))))
    return findings


def _in_device_code(node, source: SourceFile) -> bool:
    function = enclosing_function(node)
    return function is not None and any(c.type in ("__device__", "__global__") for c in function.children)


def _width_finding(call, name: str, width, source: SourceFile) -> Finding:
    message = f"`{name}` with width `32` shuffles within half of a 64-lane AMD wavefront."
    title = "Replace the width `32` with `warpSize`"
    if name.startswith("__shfl"):
        fix = _warp_size_fix(width, source, False, title, Edit.replace(width, "warpSize"))
        # Never safe: a width of 32 makes 32-lane groups, right on AMD as long as nothing
        # hardware-wide observes them (a 32-point transform on `i < 32`, rows of 32 threads);
        # `warpSize` merges two groups, which only the code's intent can allow.
        if fix.is_applicable:
            fix = Fix.unsafe(title + " (if the whole wavefront is meant, not a 32-lane group)", *fix.edits)
    else:  # a wrapper: its third parameter is a width by convention only
        fix = Fix.unsafe(title, Edit.replace(width, "warpSize"))
    return at_node(source, width, message, fix)


# =========================================================================================
# W005 syncwarp-independent-scheduling

_SPIN_ATOMICS = frozenset({
    "atomicCAS", "atomicExch", "atomicCAS_system", "atomicExch_system", "atomicCAS_block", "atomicExch_block",
})
# Calls a spin loop may make while it waits (back-off, fences).
_WAIT_CALLS = frozenset({
    "__nanosleep", "__threadfence", "__threadfence_block", "__threadfence_system", "__builtin_amdgcn_s_sleep",
})
_SYNC_ADVICE = ("Call a wrapper instead: `__syncwarp()` on CUDA; on HIP "
                "`__builtin_amdgcn_fence(__ATOMIC_RELEASE, \"wavefront\"); __builtin_amdgcn_wave_barrier(); "
                "__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, \"wavefront\");`")
_DIVERGENT_ADVICE = ("Call it where every lane of the warp arrives (before the branch), or pass the mask of "
                     "the lanes inside the branch: `__ballot_sync(~0ull, cond)` taken before it")
_SPIN_ADVICE = ("Take the lock from one lane (`if (lane == 0)`), or move the critical section and the "
                "release into the loop: `while (!done) { if (atomicCAS(l, 0, 1) == 0) { ...; "
                "atomicExch(l, 0); done = true; } }`")
_LOOPS = "[(while_statement) (do_statement) (for_statement)] @loop"


def _is_full_mask(node, source: SourceFile) -> bool:
    """An all-lanes mask: `0xffffffff`, `~0u`, `~0ull`, `-1`, `0xffffffffffffffff`, `FULL_MASK`."""
    node = strip_parens(node)
    if node is None:
        return False
    if _is_32_lane_full_mask(node, source):
        return True
    text = source.node_text(node).replace(" ", "").lower()
    if text in ("~0", "~0ull", "~0ul", "~0llu", "-1", "0xffffffffffffffff", "0xffffffffffffffffull", "ullong_max",
                "~0ull>>0", "uint64_t(-1)", "(uint64_t)-1"):
        return True
    if node.type == "identifier":
        words = set(_words(source.node_text(node)))
        return "mask" in words and bool(words & {"full", "all", "warp"})
    return False


def _lane_expr(node, source: SourceFile) -> bool:
    """A lane index: `lane`, `lane_id`, `__lane_id()`, `threadIdx.x % warpSize`, `tid & 31`."""
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return _index_kind(source.node_text(node)) == "lane"
    if node.type == "call_expression":
        return callee_name(node, source) == "__lane_id"
    if node.type == "binary_expression" and node.child_by_field_name("operator").type in ("%", "&"):
        return _is_thread_expr(node.child_by_field_name("left"), source)
    return False


_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


@bounded(False)
def _splits_warp(condition, source: SourceFile) -> bool:
    """Does `condition` send lanes of one warp different ways? `lane < 16`, `threadIdx.x == 0`,
    `lane % 2`, `threadIdx.x < 32` (half a 64-lane wavefront). Not `tid < n` (a bound) nor
    `warp_id == 0` nor `threadIdx.x < 64` (whole wavefronts)."""
    node = strip_parens(condition)
    if node is None:
        return False
    if node.type == "unary_expression":
        return _splits_warp(node.child_by_field_name("argument"), source)
    if _lane_expr(node, source):
        return True  # `if (lane & 1)`
    if node.type != "binary_expression":
        return False
    op = node.child_by_field_name("operator").type
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op in ("&&", "||"):
        return _splits_warp(left, source) or _splits_warp(right, source)
    if op not in _COMPARISONS:
        return False
    for side, other in ((left, right), (right, left)):
        if _lane_expr(side, source):
            return True
        value = integer_value(strip_parens(other), source)
        if _is_thread_expr(side, source) and value is not None:
            return op in ("==", "!=") or value % 64 != 0
    return False


def _branch_condition(node, source: SourceFile):
    """The condition of the innermost lane-divergent `if`/`?:` around `node` in its function, else None."""
    # The answer above a branch, reached from a child that is not its condition, is the same
    # for everything in that child: kept per branch, so a long else-if chain is climbed once.
    known = source.memo.setdefault("branch_condition", {})
    child, climbed, found = node, [], None
    for parent in ancestors_of(node):
        if parent.type in ("function_definition", "lambda_expression", "translation_unit"):
            break
        if parent.type in ("if_statement", "conditional_expression"):
            condition = parent.child_by_field_name("condition")
            key = (parent.id, condition is not None and child == condition)
            if key in known:
                found = known[key]
                break
            climbed.append(key)
            if condition is not None and child != condition:
                inner = condition.child_by_field_name("value") if condition.type == "condition_clause" else condition
                if _splits_warp(inner, source):
                    found = inner
                    break
        child = parent
    known.update(dict.fromkeys(climbed, found))
    return found


def _lanes_of_first_32_threads(call, mask, condition, source: SourceFile) -> bool:
    """Is `mask` lanes 0-31 (`0xffffffff`) and the branch `condition` splits on the block's
    first 32 threads (`tid < 32`)? Those are the lanes that run it, on 32 lanes and 64 alike."""
    guard = _first_32_threads_guard(call, source)
    return guard is not None and integer_value(strip_parens(mask), source) == 0xFFFFFFFF \
        and condition.start_byte <= guard.start_byte and guard.end_byte <= condition.end_byte


def _single_lane(node, source: SourceFile) -> bool:
    """Is `node` in the then-branch of `if (lane == 0)`, `if (threadIdx.x == 0)`, `if (!tid)`?"""
    # As in `_branch_condition`: the answer above an `if` is kept per (if, from its consequence).
    known = source.memo.setdefault("single_lane", {})
    child, climbed, found = node, [], False
    for parent in ancestors_of(node):
        if parent.type in ("function_definition", "translation_unit"):
            break
        if parent.type == "if_statement":
            consequence = child == parent.child_by_field_name("consequence")
            if (parent.id, consequence) in known:
                found = known[parent.id, consequence]
                break
            climbed.append((parent.id, consequence))
            condition = parent.child_by_field_name("condition") if consequence else None
            inner = condition.child_by_field_name("value") if condition is not None else None
            if inner is not None and _picks_one_lane(inner, source):
                found = True
                break
        child = parent
    known.update(dict.fromkeys(climbed, found))
    return found


@bounded(False)
def _picks_one_lane(condition, source: SourceFile) -> bool:
    node = strip_parens(condition)
    if node.type == "unary_expression" and node.child_by_field_name("operator").type == "!":
        argument = node.child_by_field_name("argument")
        return _lane_expr(argument, source) or _is_thread_expr(argument, source)
    if node.type != "binary_expression":
        return False
    op = node.child_by_field_name("operator").type
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op == "&&":
        return _picks_one_lane(left, source) or _picks_one_lane(right, source)
    if op != "==":
        return False
    return any((_lane_expr(a, source) or _is_thread_expr(a, source)) and b.type == "number_literal"
               for a, b in ((left, right), (right, left)))


def _spin_atomic(loop, source: SourceFile):
    """The `atomicCAS`/`atomicExch` call a loop spins on (in its condition, with a body that
    only waits), else None. A CAS loop that computes a new value in its body is lock-free."""
    condition = loop.child_by_field_name("condition")
    body = loop.child_by_field_name("body")
    if condition is None or body is None:
        return None
    spins = [c for c in queries.nodes(CUDA, "(call_expression) @call", condition, "call")
             if callee_name(c, source) in _SPIN_ATOMICS]
    if not spins:
        return None
    for statement in body.named_children if body.type == "compound_statement" else [body]:
        if statement.type == "comment":
            continue
        call = statement.named_children[0] if statement.type == "expression_statement" and statement.named_children \
            else None
        if statement.type == "expression_statement" and call is None:
            continue  # `;`
        if call is None or call.type != "call_expression" or callee_name(call, source) not in _WAIT_CALLS:
            return None
    return spins[0]


@needs(b"_sync", b"atomicCAS", b"atomicExch")
def check_syncwarp_independent_scheduling(source: SourceFile) -> list[Finding]:
    data = source.data
    has_sync = b"_sync" in data or b"__syncwarp" in data
    has_spin = b"atomicCAS" in data or b"atomicExch" in data
    if not has_sync and not has_spin:
        return []
    findings = []
    if has_sync:
        for call, name, args in masked_intrinsic_calls(source):
            full = not args if name == "__syncwarp" else bool(args) and _is_full_mask(args[0], source)
            condition = _branch_condition(call, source) if full else None
            if condition is not None and name != "__syncwarp" and _lanes_of_first_32_threads(call, args[0], condition, source):
                condition = None  # `0xffffffff` under `tid < 32`: the mask names exactly the lanes that run it
            if condition is not None:
                shown = " ".join(source.node_text(condition).split())
                findings.append(at_node(
                    source, call.child_by_field_name("function"),
                    f"Full-mask `{name}` inside a lane-divergent branch; AMD runs the branches in turn.",
                    Fix.advice(_DIVERGENT_ADVICE),
                    related=(Related(source.location(condition.start_byte, condition.end_byte),
                                     f"lanes split on `{shown}` here"),),
                ))
            elif name == "__syncwarp":
                findings.append(at_node(
                    source, call.child_by_field_name("function"),
                    "`__syncwarp` is missing before ROCm 7.0 (6.2 needs `HIP_ENABLE_WARP_SYNC_BUILTINS`).",
                    Fix.advice(_SYNC_ADVICE), severity=Severity.NOTE,
                ))
    if has_spin:
        findings.extend(_spin_locks(source))
    return findings


def _spin_locks(source: SourceFile) -> list[Finding]:
    findings = []
    for loop in queries.nodes(CUDA, _LOOPS, source.tree.root_node, "loop"):
        atomic = _spin_atomic(loop, source)
        if atomic is None or _single_lane(loop, source) or not _reached_by_many_lanes(loop, source):
            continue
        name = callee_name(atomic, source)
        findings.append(at_node(
            source, atomic.child_by_field_name("function"),
            f"Lanes of one warp spin on `{name}`; an AMD wavefront in lockstep deadlocks.",
            Fix.advice(_SPIN_ADVICE),
        ))
    return findings


def _reached_by_many_lanes(loop, source: SourceFile) -> bool:
    """A kernel runs on every lane; a helper counts when a call in this file reaches it from
    several lanes (helpers without callers here are left alone: their callers are unknown)."""
    function = enclosing_function(loop)
    if function is None:
        return False
    if any(c.type == "__global__" for c in function.children):
        return True
    declarator = function.child_by_field_name("declarator")
    name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
    if name_node is None:
        return False
    name = source.node_text(name_node)
    callers = [c for c in calls(source) if callee_name(c, source) == name]
    return any(not _single_lane(c, source) for c in callers)


# =========================================================================================
# W006 tile-as-warp

_TILE_NAMES = '((identifier) @name (#any-of? @name "tiled_partition" "thread_block_tile"))'
_TILE_TYPES = '((type_identifier) @name (#eq? @name "thread_block_tile"))'
_TILE_ADVICE = ("Size the tile from a per-architecture warp constant (64 under "
                "`#if defined(__GFX8__) || defined(__GFX9__)`, else 32), or use a size below 32 on purpose")


@needs(b"tiled_partition", b"thread_block_tile")
def check_tile_as_warp(source: SourceFile) -> list[Finding]:
    if b"tiled_partition" not in source.data and b"thread_block_tile" not in source.data:
        return []
    findings = []
    names = [*queries.nodes(CUDA, _TILE_NAMES, source.tree.root_node, "name"),
             *queries.nodes(CUDA, _TILE_TYPES, source.tree.root_node, "name")]
    statements: set[int] = set()  # `thread_block_tile<32> t = tiled_partition<32>(b);` is one finding
    logical = LogicalWarpNotes(source)  # tiles of 32 nothing observes: notes
    constants = None
    for name in sorted(names, key=lambda n: n.start_byte):
        size = strip_parens(tile_size(name, source))
        if size is not None and size.type == "type_descriptor" and len(size.named_children) == 1:
            size = size.named_children[0]  # `tiled_partition<kTile>`: a name read as a type
        value = integer_value(size, source) if size is not None else None
        written = source.node_text(size) if size is not None else ""
        if value is None and size is not None and size.type in ("identifier", "type_identifier") and \
                _warp_constant_kind(written) is None:
            # `constexpr int kTile = 32;`: a warp-size constant (`WARP_SIZE`) is judged at its definition (W001).
            constants = constants or open_constants(source)
            value = constants.value(size)
        if value not in (32, 64):
            continue
        statement = statement_of(name)
        if statement is not None and statement.id in statements:
            continue
        if statement is not None:
            statements.add(statement.id)
        if value == 32 and not warp_model(source).observes(size):
            logical.add(size)  # a 32-lane logical warp nothing hardware-wide reads: a note
            continue
        if value == 32:
            message = f"`{source.node_text(name)}<{written}>` is half a 64-lane AMD wavefront, not the warp."
        else:
            message = f"`{source.node_text(name)}<{written}>` is larger than a 32-lane RDNA wavefront."
        findings.append(at_node(source, size, message, Fix.advice(_TILE_ADVICE)))
    return findings + logical.findings()


# =========================================================================================
# W010 warp-matrix-api

# WMMA entry points: a fragment declaration or an operation on fragments.
_WMMA_API = frozenset({
    "fragment", "mma_sync", "load_matrix_sync", "store_matrix_sync", "fill_fragment", "bmma_sync",
})
_WMMA = """
[(preproc_include path: (system_lib_string) @include)
 (using_declaration (qualified_identifier) @using)
 (using_declaration (identifier) @using)
 (namespace_alias_definition) @alias
 (qualified_identifier scope: (namespace_identifier) @scope name: [(identifier) (type_identifier) (template_type)
   (template_function) (qualified_identifier)] @name) @qualified]
"""
_ROCWMMA_ADVICE = ("Port to rocWMMA: `#include <rocwmma/rocwmma.hpp>` and `rocwmma::` for `nvcuda::wmma::` "
                   "(same fragment, load/store and `mma_sync` API; check the supported fragment shapes)")


@needs(b"wmma", b"mma.h")
def check_warp_matrix_api(source: SourceFile) -> list[Finding]:
    """One finding per file: its first use of the API on the ROCm path, the others related
    (the whole file is ported to rocWMMA at once, not use by use)."""
    data = source.data
    if b"wmma" not in data and b"mma.h" not in data:
        return []
    sites = []  # (node, what is written there)
    matches = queries.matches(CUDA, _WMMA, source.tree.root_node)
    # `namespace wmma = rocwmma;` makes `wmma::` the port.
    aliased = any("alias" in m and "rocwmma" in source.node_text(m["alias"][0]) for m in matches)
    for match in matches:
        if "include" in match:
            path = match["include"][0]
            if source.node_text(path) in ("<mma.h>", "<crt/mma.h>"):
                sites.append((path, source.node_text(path)))
        elif "using" in match:
            target = match["using"][0]
            if source.node_text(target).replace(" ", "") in ("nvcuda", "nvcuda::wmma"):
                sites.append((target, source.node_text(target)))
        elif "qualified" in match:
            site = _wmma_use(match, source, aliased)
            if site is not None:
                sites.append(site)
    # Uses a ROCm build skips (a CUDA-only arm) are neither the finding nor its related places.
    sites = [(node, written) for node, written in sites if source.rocm_path.status(node.start_byte) is not Status.DEAD]
    if not sites:
        return []
    (first, written), rest = sites[0], sites[1:]
    what = "header" if written.startswith("<") else "API"
    more = f" (and {len(rest)} more use{'s' if len(rest) != 1 else ''} in this file)" if rest else ""
    return [at_node(source, first, f"`{written}` is CUDA's warp matrix {what}; ROCm has none{more}.",
                    Fix.advice(_ROCWMMA_ADVICE),
                    related=tuple(Related(source.location(n.start_byte, n.end_byte), f"`{w}` here") for n, w in rest))]


def _wmma_use(match, source: SourceFile, aliased: bool):
    """(node, `nvcuda::wmma::mma_sync` as written) of a use of the API, or None."""
    qualified, scope, name = match["qualified"][0], match["scope"][0], match["name"][0]
    if qualified.parent is not None and qualified.parent.type == "qualified_identifier":
        return None  # `nvcuda::wmma::x`: judged at its outermost node
    scopes = [source.node_text(scope)]
    while name.type == "qualified_identifier":  # nvcuda::wmma::mma_sync
        inner_scope = name.child_by_field_name("scope")
        scopes.append(source.node_text(inner_scope) if inner_scope is not None else "")
        name = name.child_by_field_name("name")
    if name.type in ("template_type", "template_function"):
        name = name.child_by_field_name("name")
    api = source.node_text(name)
    if api not in _WMMA_API or scopes[-1] != "wmma" or (scopes[0] == "wmma" and aliased):
        return None
    if scopes[0] not in ("nvcuda", "wmma"):
        return None
    return qualified, "::".join([*scopes, api])


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    "(call_expression) @call",
    _LOOPS,
    _TILE_NAMES,
    _TILE_TYPES,
    _WMMA,
)
