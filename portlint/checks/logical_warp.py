"""The logical-warp model: what width of warp the code assumes, and what would notice 64 lanes.

CUDA code often works in groups of 32 lanes on purpose (a "logical warp"): `lane = tid % 32`,
`warp = tid / 32`, xor shuffles from 16, a `tid < 32` tail of a shared-memory tree,
`tiled_partition<32>`. On a 64-lane wavefront each half of it is then one such group and the
results are CUDA's. The 32 only matters where an operation's result depends on the hardware
wavefront having 64 lanes (an *observer*):

- a broadcast, up or down shuffle without a width of 32 or less: lanes 32-63 read across the
  halves (a xor shuffle whose offset stays below 32 never leaves its half);
- a ballot, `__activemask`, `__any`/`__all`, `__match_*`, `__reduce_*_sync`: they vote over
  the whole wavefront;
- `warpSize` read beside the 32 (lanes or per-warp slots counted by the hardware warp);
- a cub/hipCUB warp collective without a logical width (the hardware warp);
- a cooperative group's shuffle or vote, unless the group is a tile of 32 lanes or fewer (a
  tile sized by a template parameter is as wide as the widest this file instantiates it with);
- a call of a warp-named function this file does not define (its body is out of view; where
  it is the only observer, the project pass judges by its definition in another file,
  `judge_by_helpers`).

Per function, the model keeps its own observers; the logical width the code declares (a
shuffle's width, a tile's size, a cub warp's logical width, followed through constants,
macros and the widths this file's calls pass) decides whether an operation stays inside
32 lanes and so is none. A number in a function counts as observed when the function,
anything it calls in this file, or any function in this file that calls it, has an observer:
a warp helper's `16` is observed by its caller's ballot, and a caller's `tid % 32` by a
helper's width-less `__shfl_down`. W rules report a 32 only where it is observed, at the 32,
with the observers as related locations. Where nothing observes it, the 32 is a note
(`LogicalWarpNotes`, one per function): AMD computes the same, and the porter still sees
where the code groups lanes by 32 in case code out of view observes it.

A 32-bit "all lanes" mask given to a `_sync` intrinsic is no observer: it is its own hazard
(W002, HIP takes 64 bits), fixed where it is written; the grouping beside it stays right.

On wave32 targets only (`--target gfx1100`) the hardware width is the logical one: nothing
observes.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field, replace

from portlint import queries, targets
from portlint.build_model import is_header
from portlint.build_model.expressions import c_operator
from portlint.checks.cpp import (
    ancestors_of, arguments, callee_name, calls, calls_named, cub_warp_templates, enclosing_function, function_declarator, function_name,
    identifiers_named, integer_value, memoized, named_elsewhere, open_constants, strip_parens, template_instances,
    token_nodes,
)
from portlint.finding import Finding, Related, Severity, at_node
from portlint.fix import Fix
from portlint.rocm_path import Status
from portlint.source import CUDA, SourceFile
from portlint.triggers import leading


@dataclass(frozen=True)
class Observer:
    """An operation whose result depends on the wavefront having 64 lanes."""

    node: object  # the call or the `warpSize` name
    reason: str  # `__ballot_sync votes over the whole wavefront`
    # A width this file names but does not define (`thread_block_tile<TILE_DIM>`, a shuffle's
    # `WIDTH` from a header): the operation stays in 32 lanes, and so observes nothing, if the
    # headers make it 32 or less. The project pass reads it (`function_observation`).
    open_width: str | None = None
    out_of_view: bool = False  # a launch of a kernel of another file, or host code's stand-in for them
    helper: str | None = None  # a warp helper this file calls but does not define (`warpReduceMax`)
    caller_of: str | None = None  # the helper of this file whose callers are out of view (`_OUT_OF_VIEW`)

    def related(self, source: SourceFile) -> Related:
        return Related(source.location(self.node.start_byte, self.node.end_byte), self.reason)


@dataclass
class FunctionWarp:
    """One function's warp facts."""

    function: object
    name: str | None
    observers: list[Observer] = field(default_factory=list)  # its own
    callees: set[str] = field(default_factory=set)  # functions of this file it calls
    segment_shuffles: list = field(default_factory=list)  # shuffles that stay in 32 lanes (xor, width <= 32)
    elsewhere: dict = field(default_factory=dict)  # functions of other files it calls: name -> the first call


# Calls that cross lanes (their names hold one of these).
_CROSS_LANE_WORDS = leading(b"sSbBaAm_", rb"(?i:shfl|shuffle|ballot|activemask)|__any|__all|__match_|__reduce_"
                            rb"|__uni|(?<=\.)(?:any|all|match_any|match_all)\b")
_VOTES = ("__ballot", "__activemask", "__any", "__all", "__match_", "__reduce_", "__uni")
_GROUP_VOTES = frozenset({".ballot", ".any", ".all", ".match_any", ".match_all"})
_WARP_NAME = re.compile(r"(?i)warp")
# A project's warp barrier (`magma_syncwarp`, `warp_sync`): the lanes that reach it wait for
# one another, on 32 lanes or 64 alike; it reads no lane's value, so it observes no width.
_WARP_BARRIER = re.compile(r"(?i)(?:sync_?warp|warp_?sync|warp_?barrier)$")
# A lane taken within 32 lanes (`tid & 31`, `tid % 32`): a logical warp stated in place.
_LANE_OF_32 = re.compile(rb"(?:&|%)\s*(?:31|0[xX]1[fF]|32)\b|%\s*\w*(?i:warp_?size)\w*")
# Lane or warp geometry of 32 lanes in a returned value.
_GEOMETRY = re.compile(r"(?:&\s*(?:31|0[xX]1[fF])|%\s*32|/\s*32|>>\s*5)\b|(?i:[%/]\s*\w*warp_?size\w*)")
_OUT_OF_VIEW = "its result leaves for callers out of view, which may read it as the whole wavefront's"


def _shuffle_kind(name: str) -> str:
    """"xor", "up", "down" or "idx" (a broadcast) for a shuffle's name."""
    lowered = name.lower()
    for kind in ("xor", "up", "down"):
        if kind in lowered:
            return kind
    return "idx"


def _is_shuffle_name(name: str) -> bool:
    """`__shfl_down_sync`, and wrappers: `WARP_SHFL_XOR`, `SHUFFLE_DOWN` (a project's macro)."""
    lowered = name.lower()
    return "shfl" in lowered or "shuffle" in lowered


class LogicalWarps:
    """The model of one file (`warp_model`)."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.functions: dict[int, FunctionWarp] = {}
        self._by_name: dict[str, list[FunctionWarp]] = {}
        self._scope: dict[int, tuple[Observer, ...]] = {}
        self._narrow_functions: dict[int, bool] = {}  # function id -> only 32-lane arms call it
        self._spaces: dict[int, bool] = {}  # function id -> host code
        self._tree_uses: dict[tuple[int, str], tuple[list[int], list]] = {}
        self._instances: dict[tuple[int, str], int | None] = {}  # (function id, parameter) -> widest value
        self._open_tiles: dict[int, str] = {}  # group call id -> the tile size it names, undefined here
        self.hardware_width = max(t.wave_size for t in targets.active())
        self._build()

    # ---- facts --------------------------------------------------------------------------
    def _function(self, node) -> FunctionWarp | None:
        """The innermost function around `node`, found by offset among the file's functions
        (cheaper than climbing the tree for every call of a file)."""
        at = bisect.bisect_right(self._starts, node.start_byte) - 1
        while at >= 0:
            found = self._ordered[at]
            if node.start_byte < found.function.end_byte:
                return found
            at -= 1
        return None

    def _build(self) -> None:
        source = self.source
        root = source.tree.root_node
        self._ordered: list[FunctionWarp] = []
        for function in queries.nodes(CUDA, "(function_definition) @f", root, "f"):  # in source order
            name = function_name(function, source)
            found = self.functions[function.id] = FunctionWarp(function, name)
            self._ordered.append(found)
            if name is not None:
                self._by_name.setdefault(name, []).append(found)
        self._starts = [f.function.start_byte for f in self._ordered]
        from portlint.checks.wavefront import _calls_named  # the one finder of calls by name
        wrapped = []  # calls of shuffle wrappers this file defines: their bodies say how wide they are
        for call, name, args in _calls_named(root, source, _CROSS_LANE_WORDS, _is_cross_lane, methods=True):
            owner = self._function(call)
            if owner is None or self._dead(call):
                continue
            if not name.startswith(".") and _is_shuffle_name(name) and name in self._by_name:
                wrapped.append((owner, call, name, args))
            elif name.startswith(".") or _is_shuffle_name(name):
                self._shuffle(owner, call, name, args)
            else:
                owner.observers.append(Observer(call, f"`{name}` votes over the whole wavefront"))
        for name in token_nodes(source, b"warpSize"):
            if name.type == "identifier" and source.node_text(name) == "warpSize":
                owner = self._function(name)
                body = owner.function.child_by_field_name("body") if owner is not None else None
                # (a default argument, `int width = warpSize`, is its callers' to pass or not)
                if body is not None and body.start_byte <= name.start_byte and not self._dead(name):
                    owner.observers.append(Observer(name, "`warpSize` is 64 here"))
        for name, template_args in cub_warp_templates(source):
            if name not in ("WarpReduce", "WarpScan"):
                continue
            owner = self._function(template_args)
            if owner is None:
                continue
            # `WarpReduce<T>` is the hardware warp; `WarpReduce<T, 32>` (or a named width) a logical one.
            args = [a for a in template_args.named_children if a.type != "comment"]
            width_text = source.node_text(args[1]) if len(args) > 1 else ""
            width = _literal(width_text) if width_text else None
            if len(args) < 2 or "warpSize" in width_text or (width is not None and width > 32):
                owner.observers.append(Observer(template_args.parent.child_by_field_name("name"),
                                                "a warp collective over the whole wavefront"))
        narrow = self._narrow_wrappers(wrapped)
        for owner, call, name, args in wrapped:
            if name in narrow:
                owner.segment_shuffles.append(call)  # `warp_shuffle_down(v, 1)` whose body passes a width of 32
            else:
                self._shuffle(owner, call, name, args)
        defined = set(self._by_name)
        for call in calls(source):
            name = callee_name(call, source)
            if name is None:
                continue
            owner = self._function(call)
            if owner is None or self._dead(call):
                continue
            launched = any(c.type == "kernel_call_syntax" for c in call.children)
            if launched and name not in defined:
                owner.observers.append(Observer(call, f"launches `{name}`, a kernel out of view", out_of_view=True))
            elif name in defined:
                owner.callees.add(name)
            elif _WARP_NAME.search(name) and not _is_cross_lane(name) and not name.startswith("__") \
                    and not _WARP_BARRIER.search(name):
                owner.observers.append(Observer(call, f"`{name}` works on warps out of view", helper=name))
            elif not launched and not name.startswith("__") and not self._host(owner.function):
                owner.elsewhere.setdefault(name, call)  # maybe a helper of another file (`caller_observations`)
        # A helper that no function here calls hands its shuffled value, or a lane or warp index
        # it computes, to callers out of view: unless it takes its own lane within 32 lanes (the
        # logical warp stated where it is used) or shuffles on the block's first 32 threads
        # only, nothing says they read it per 32 lanes.
        called = {callee for function in self.functions.values() for callee in function.callees}
        returns: dict[int, list] = {}  # function id -> its return statements (one query per file)
        if any(not f.segment_shuffles and not f.observers for f in self.functions.values()) and \
                _GEOMETRY.search(source.data.decode("latin-1")):
            for statement in queries.nodes(CUDA, "(return_statement) @r", root, "r"):
                owner = self._function(statement)
                if owner is not None:
                    returns.setdefault(owner.function.id, []).append(statement)
        for function in self.functions.values():
            if function.name in called or any(c.type == "__global__" for c in function.function.children):
                continue
            body = source.data[function.function.start_byte:function.function.end_byte]
            if function.segment_shuffles and not _LANE_OF_32.search(body) and \
                    not all(self._in_first_32_threads(call) for call in function.segment_shuffles):
                function.observers.append(Observer(function.segment_shuffles[0], _OUT_OF_VIEW, caller_of=function.name))
            elif not function.segment_shuffles and not function.observers:
                returned = next((r for r in returns.get(function.function.id, ())
                                 if _GEOMETRY.search(source.node_text(r))), None)
                if returned is not None:
                    function.observers.append(Observer(returned, _OUT_OF_VIEW, caller_of=function.name))

    def _in_first_32_threads(self, call) -> bool:
        """Is `call` run only by the block's first 32 threads (`if (tid < 32)`, `threadIdx.x <
        32`: the tail of a shared-memory tree)? Its result then lives in lanes 0-31 alone, on
        a 32- and a 64-lane wavefront alike: what a caller reads of it is CUDA's."""
        from portlint.checks.wavefront import _first_32_threads_guard
        return _first_32_threads_guard(call, self.source) is not None

    def _narrow_wrappers(self, wrapped: list) -> set[str]:
        """The shuffle wrappers this file defines (`warp_shuffle_down`, each overload and
        specialization) whose every definition stays in 32 lanes on ROCm: it observes nothing
        and each shuffle it makes does (`__shfl_down(x, idx, THREADS_PER_WARP)` in the HIP arm;
        the CUDA arm is dead there) or calls such a wrapper. Worked out as the largest such
        set, so a specialization that calls the generic wrapper of its name stays in it."""
        calls_of: dict[int, set[str]] = {}
        for owner, _, name, _ in wrapped:
            calls_of.setdefault(id(owner), set()).add(name)
        narrow = {name for _, _, name, _ in wrapped if all(
            not d.observers and (d.segment_shuffles or id(d) in calls_of) for d in self._by_name[name])}
        changed = True
        while changed:
            changed = False
            for name in list(narrow):
                if any(not calls_of.get(id(d), set()) <= narrow for d in self._by_name[name]):
                    narrow.discard(name)
                    changed = True
        return narrow

    def _shuffle(self, owner: FunctionWarp, call, name: str, args: list) -> None:
        from portlint.checks.wavefront import shuffle_width_index
        source = self.source
        kind = _shuffle_kind(name)
        if name.startswith("."):  # a cooperative group's own shuffle or vote
            if self.narrow_group(call):
                return
            tile = self._open_tiles.get(call.id)
            if name in _GROUP_VOTES:
                owner.observers.append(Observer(call, f"`{name[1:]}` of a group as wide as the wavefront", tile))
            elif kind != "xor":
                owner.observers.append(Observer(call, f"`{name[1:]}` in a group as wide as the wavefront", tile))
            else:
                owner.segment_shuffles.append(call)
            return
        index = shuffle_width_index(name)
        width, open_width = None, None
        if index is not None and len(args) > index:
            width = self._value(args[index])
            if width is None and source.node_text(args[index]).strip() != "warpSize":
                width = self._passed_width(owner, args[index])
            if width is None and _names_warp_size(args[index], source):
                owner.segment_shuffles.append(call)
                return  # `THREADS_PER_WARP` from a header: its definition is judged with its uses
            named = strip_parens(args[index])
            if width is None and named.type in ("identifier", "qualified_identifier") and \
                    source.node_text(named) != "warpSize" and self._passed_width(owner, named) is None:
                open_width = source.node_text(named)
        if width is not None and width <= 32:
            owner.segment_shuffles.append(call)
            return
        offset_index = (index - 1) if index is not None else None
        offset = self._value(args[offset_index]) if offset_index is not None and len(args) > offset_index else None
        if kind == "xor" and (offset is None or offset < 32):
            owner.segment_shuffles.append(call)
            return  # `lane ^ offset` stays in its 32 lanes
        offset_node = args[offset_index] if offset_index is not None and len(args) > offset_index else None
        if kind == "up" and self._scan_in_first_32_threads(call, offset_node, offset):
            owner.segment_shuffles.append(call)
            return
        if kind == "down" and self._root_only_tree(call, args[offset_index] if offset is None and
                                                   offset_index is not None and len(args) > offset_index else None,
                                                   offset):
            return  # (its result stays in the function: nothing for callers out of view)
        owner.observers.append(Observer(call, f"`{name}` without a width of 32 reaches across 32 lanes", open_width))

    def _scan_in_first_32_threads(self, call, offset_node, offset: int | None) -> bool:
        """An up shuffle run by the block's first 32 threads only (`if (tid < 32)`) by an
        offset below 32 (a constant, or a loop counter doubling from 1): each lane reads a lower
        lane, so it never leaves lanes 0-31, which alone run it on 64 lanes too. (A down tree
        there reads lanes 32 and up, which do not run it: the emulator calls those reads
        undefined on 64 lanes, though only lanes that hold no sum make them.)"""
        if not self._in_first_32_threads(call):
            return False
        if offset is not None:
            return 0 < offset < 32
        from portlint.checks.wavefront import _loop_counter, _loop_step
        loop = next((a for a in ancestors_of(call) if a.type in ("for_statement", "function_definition")), None)
        if loop is None or loop.type != "for_statement" or offset_node is None:
            return False
        counter = _loop_counter(loop, self.source)
        if counter is None or self.source.node_text(strip_parens(offset_node)) != counter[0]:
            return False
        start = self._value(counter[1])
        return _loop_step(loop, counter[0], self.source) == "double" and start is not None and start >= 1

    def _root_only_tree(self, call, offset_node, offset: int | None) -> bool:
        """A down-shuffle tree from 16 or less whose sum only the tree's root reads (`if (lane
        == 0) slots[warp] = v;`): the root of each 32 lanes only ever reads lanes above it in
        its own 32, so on 64 lanes lane 0 and lane 32 hold CUDA's sums. Lanes past the root
        hold other values on AMD: a read of the value by them (or by a caller, when it is
        returned) is an observer."""
        source = self.source
        loop = next((a for a in ancestors_of(call) if a.type in ("for_statement", "function_definition")), None)
        if loop is None or loop.type != "for_statement":
            loop = None
            if offset is None or offset > 16:
                return False
        else:
            from portlint.checks.wavefront import _loop_counter
            counter = _loop_counter(loop, source)
            start = self._value(counter[1]) if counter is not None and counter[1] is not None else None
            if start is None and counter is not None and counter[1].type == "binary_expression" and \
                    _names_warp_size(counter[1].child_by_field_name("left"), source):
                start = 16  # `WARP_SIZE / 2` of a header's constant: half its 32, or a tree over the wavefront
            if start is None or start > 16 or offset_node is None or source.node_text(strip_parens(offset_node)) \
                    != counter[0]:
                return False
        target = _assigned_name(call, source)
        function = enclosing_function(call)
        if target is None or function is None:
            return False
        statement = loop if loop is not None else next(
            (a for a in ancestors_of(call) if a.type == "expression_statement"), call)
        # The value is the tree's until it is assigned anew: the first use after the tree that
        # writes it or reads it off the root decides.
        starts, uses = self._decisive_uses(function, target)
        for use, writes in uses[bisect.bisect_left(starts, statement.end_byte):]:
            if not _in_other_arm(use, call):
                return writes
        return True

    def _decisive_uses(self, function, target: str) -> tuple[list[int], list]:
        """The uses of `target` in `function` that decide whether a tree's sum is read off its
        root: (use, True) where it is assigned anew, (use, False) where it is read outside a
        root test, in order, with their starts. Found once per function and name: asked for
        every shuffle, a walk per shuffle was quadratic."""
        key = (function.id, target)
        if key not in self._tree_uses:
            source = self.source
            uses = []
            for use in identifiers_named(source, target, function.start_byte, function.end_byte):
                if _in_shuffle_statement(use, source):
                    continue
                written = use
                while written.parent is not None and written.parent.type == "field_expression":
                    written = written.parent  # `sums.q = 0`: a field written anew
                parent = written.parent
                if parent is not None and parent.type == "assignment_expression" and \
                        parent.child_by_field_name("left") == written and parent.child_by_field_name("operator").type == "=":
                    uses.append((use, True))
                elif not _under_root_test(use, function, source):
                    uses.append((use, False))
            self._tree_uses[key] = ([u.start_byte for u, _ in uses], uses)
        return self._tree_uses[key]

    def narrow_group(self, call, warp_size_names: bool = True) -> bool:
        """Is the group of `g.shfl_down(v, 1)` a tile of 32 lanes or fewer (`thread_block_tile<32>`,
        `tiled_partition<kRow>`; with `warp_size_names`, `tiled_partition<WARP_SIZE>` too: a
        warp-size name is judged with its uses), as declared in the function? HIP's tile
        shuffles and votes stay within the tile."""
        from portlint.checks.wavefront import _DECLARING_STATEMENTS, tile_size
        source = self.source
        receiver = call.child_by_field_name("function").child_by_field_name("argument")
        function = enclosing_function(call)
        if receiver is None or receiver.type != "identifier" or function is None:
            return False
        first = next(identifiers_named(source, source.node_text(receiver), function.start_byte, call.start_byte), None)
        statement = next((a for a in ancestors_of(first) if a.type in _DECLARING_STATEMENTS), None) if first else None
        if statement is None:
            return False
        for name in ("thread_block_tile", "tiled_partition"):
            for kind in ("identifier", "type_identifier"):
                for node in identifiers_named(source, name, statement.start_byte, statement.end_byte, kind):
                    size = strip_parens(tile_size(node, source))
                    if size is not None and size.type == "type_descriptor":  # `<WARP_SIZE>` read as a type
                        size = size.child_by_field_name("type")
                    if size is None:
                        continue
                    value = self._value(size)
                    if value is None and size.type in ("identifier", "type_identifier"):
                        value = self._instantiated(function, source.node_text(size))
                    if value is not None:
                        return value <= 32
                    if warp_size_names and _names_warp_size(size, source):
                        return True
                    if size.type in ("identifier", "type_identifier", "qualified_identifier"):
                        self._open_tiles[call.id] = source.node_text(size)
        return False

    def _instantiated(self, function, name: str) -> int | None:
        """The largest value this file's instantiations of `function`'s template
        (`softmax<16, 64><<<g, b>>>(...)`, `reduce<8>(x)`) give its template parameter `name`
        (`thread_block_tile<tbSize>`); None where one gives something else, or none is seen."""
        key = (function.id, name)
        if key not in self._instances:
            self._instances[key] = self._widest_instance(function, name)
        return self._instances[key]

    def _widest_instance(self, function, name: str) -> int | None:
        instances = template_instances(self.source, function, name)
        return self._largest(instances) if instances is not None else None

    def _dead(self, node) -> bool:
        """Is `node` in code a ROCm build does not compile (the CUDA arm of `#ifdef USE_ROCM`)
        or does not run (the `else` of `if (USE_ROCM)`: `unreached_on_rocm`)?"""
        model = self.source.rocm_path
        return (model is not None and model.status(node.start_byte) is Status.DEAD) or \
            unreached_on_rocm(node, self.source)

    def _value(self, node) -> int | None:
        node = strip_parens(node)
        value = integer_value(node, self.source)
        return value if value is not None else open_constants(self.source).value(node)

    def _passed_width(self, owner: FunctionWarp, width) -> int | None:
        """A width that is a parameter: the largest constant this file's calls pass for it
        (None when a call passes something else, or there is no call)."""
        width = strip_parens(width)
        if width.type != "identifier" or owner.name is None:
            return None
        position = _parameter_position(owner.function, self.source.node_text(width), self.source)
        return self._largest(_nth(arguments(call), position) for call in calls(self.source)
                             if callee_name(call, self.source) == owner.name)

    def _largest(self, given) -> int | None:
        """The largest constant among `given` (nodes; None for one missing); None where one
        is no constant, or nothing is given."""
        found = []
        for node in given:
            value = self._value(node) if node is not None else None
            if value is None:
                return None
            found.append(value)
        return max(found) if found else None

    @functools.cached_property
    def _callers(self) -> dict[str, list[FunctionWarp]]:
        found: dict[str, list[FunctionWarp]] = {}
        for function in self.functions.values():
            for callee in function.callees:
                found.setdefault(callee, []).append(function)
        return found

    # ---- verdicts -----------------------------------------------------------------------
    def observers(self, node, in_macro: bool = False) -> tuple[Observer, ...]:
        """What observes the hardware width for code at `node`: the observers of its function,
        of the functions it calls here, and of those that call it here (see the module's
        doc). Code outside functions and in macro bodies sees every observer of the file."""
        if self.hardware_width <= 32 or (not in_macro and self.never_on_wide_wavefronts(node)):
            return ()
        function = None if in_macro else enclosing_function(node)
        if function is None or function.id not in self.functions or self._host(function):
            # Host code mirrors the kernels' geometry (launch shapes, buffers, reference
            # results): what observes the width there is anything in the file that does, and
            # where the file shows no device code at all, the kernels out of view may.
            found = tuple(o for f in self.functions.values() for o in f.observers)
            if not found and function is not None and self._host(function) and \
                    all(self._host(f.function) for f in self.functions.values()):
                found = (Observer(function.child_by_field_name("declarator") or function,
                                  "host code of kernels out of view", out_of_view=True),)
            return found
        if function.id not in self._scope:
            self._scope[function.id] = self._observers_around(self.functions[function.id])
        return self._scope[function.id]

    def never_on_wide_wavefronts(self, node, _open: frozenset = frozenset()) -> bool:
        """Does the code at `node` run only where the hardware warp has 32 lanes: in an arm a
        wider wavefront never takes (`_narrow_arms`), or in a device function every call of
        which in this file is (a `tail_of_32()` called from the `else` of `if (warpSize >=
        64)`)? A kernel is called from host code: never."""
        arms = self._narrow_arms
        if not arms:
            return False
        if any(start <= node.start_byte and node.end_byte <= end for start, end in arms):
            return True
        function = enclosing_function(node)
        if function is None or function.id not in self.functions or function.id in _open:
            return False
        if function.id not in self._narrow_functions:
            name = self.functions[function.id].name
            narrow = False
            if name and not any(c.type == "__global__" for c in function.children):
                sites = [c for c in calls_named(self.source, name) if not _within(c, function)]
                narrow = bool(sites) and all(self.never_on_wide_wavefronts(c, _open | {function.id}) for c in sites)
            self._narrow_functions[function.id] = narrow
        return self._narrow_functions[function.id]

    @functools.cached_property
    def _narrow_arms(self) -> list[tuple[int, int]]:
        """The byte ranges of the arms a wavefront wider than 32 lanes never takes: the
        `else` of `if (warpSize >= 64)`, the body of `if (warpSize == 32)`. Found from the
        file's `warpSize` uses, once (climbing from every node would be quadratic in an
        `else if` chain)."""
        arms = []
        for use in identifiers_named(self.source, "warpSize"):
            for parent in ancestors_of(use):
                if parent.type in ("function_definition", "lambda_expression", "compound_statement"):
                    break
                if parent.type != "if_statement":
                    continue
                condition = parent.child_by_field_name("condition")
                if condition is None or not _within(use, condition):
                    break
                taken = _width_test(condition, self.source, 64)
                arm = parent.child_by_field_name("consequence" if taken is False else "alternative") \
                    if taken is not None else None
                if arm is not None:
                    arms.append((arm.start_byte, arm.end_byte))
                break
        return arms

    def helpers_out_of_view(self) -> list[str]:
        """The warp helpers this file calls but does not define, in the order first called."""
        return list(dict.fromkeys(o.helper for f in self._ordered for o in f.observers if o.helper is not None))

    def helper_observations(self) -> dict[str, tuple[bool | None, object]]:
        """For callers in other files (`W001`'s open findings): each warp-named function this
        file defines, outside kernels, and whether its own code, or anything it calls here,
        observes the wavefront's width. What becomes of its result is its callers' to judge
        (the observer of a helper nothing here calls is left out); None where widths from
        headers decide. Each with the node of its (first) definition's name."""
        out: dict[str, tuple[bool | None, object]] = {}
        for name, defined in self._by_name.items():
            if not _WARP_NAME.search(name) or self._dead(defined[0].function) or any(
                    c.type == "__global__" for f in defined for c in f.function.children):
                continue
            found = [o for f in self._with_callees(defined) for o in f.observers if o.caller_of is None]
            declarator = function_declarator(defined[0].function)
            named = (declarator.child_by_field_name("declarator") if declarator is not None else None) or defined[0].function
            out[name] = (None if any(o.open_width is not None for o in found) else bool(found), named)
        return out

    def caller_observations(self) -> dict[str, tuple[bool, object]]:
        """For functions of other files that device code here calls (a warp helper, or any
        name another file may define as one): whether code here around a call sees anything
        else observe the wavefront's width (the helper's own file asks, for a helper nothing
        there calls: `judge_by_helpers`). With the first call of each."""
        out: dict[str, tuple[bool, object]] = {}
        for function in self._ordered:
            calls = {**function.elsewhere, **{o.helper: o.node for o in function.observers if o.helper is not None}}
            if not calls:
                continue
            around = self.observers(function.function.child_by_field_name("body") or function.function)
            for name, call in calls.items():
                seen, first = out.get(name, (False, call))
                out[name] = (seen or any(o.helper != name for o in around), first)
        return out

    def function_observes(self, name: str) -> bool | None:
        """Does code of the function `name` see an observer (None: no function here has that name)?"""
        defined = self._by_name.get(name)
        if not defined:
            return None
        return any(self.observers(f.function.child_by_field_name("body") or f.function) for f in defined)

    def function_observation(self, name: str) -> bool | None | tuple[str, ...]:
        """As `function_observes`, with one more answer: the names of widths undefined here
        (sorted) when only operations whose width is such a name observe, so that the
        project pass decides with the headers' values (`observed_with_headers`)."""
        defined = self._by_name.get(name)
        if not defined:
            return None
        found = [o for f in defined for o in self.observers(f.function.child_by_field_name("body") or f.function)]
        if not found:
            return False
        if any(o.open_width is None for o in found):
            return True
        return tuple(sorted({o.open_width for o in found}))

    def _host(self, function) -> bool:
        """A function of host code (`function_space`: `__host__`, or unqualified with nothing
        only device code uses; a project's qualifier macro, `DEVICE`, `KERNEL`, is not)."""
        from portlint.checks.wavefront_size import function_space
        known = self._spaces.get(function.id)
        if known is None:
            known = self._spaces[function.id] = function_space(function, self.source) == "host"
        return known

    def observes(self, node, in_macro: bool = False) -> bool:
        return bool(self.observers(node, in_macro))

    def related(self, node, in_macro: bool = False, limit: int = 3) -> tuple[Related, ...]:
        return tuple(o.related(self.source) for o in self.observers(node, in_macro)[:limit])

    def _observers_around(self, start: FunctionWarp) -> tuple[Observer, ...]:
        callers = self._callers
        ups, stack = {id(start): start}, [start]
        while stack:  # `start` and the device code that calls it, transitively (a host
            function = stack.pop()  # function's launches are no calls of one another)
            for caller in callers.get(function.name, ()) if function.name else ():
                if id(caller) not in ups and not self._host(caller.function):
                    ups[id(caller)] = caller
                    stack.append(caller)
        own = start.observers
        others = [o for f in self._with_callees(ups.values()) if f is not start for o in f.observers]
        return tuple(own + others)

    def _with_callees(self, functions) -> list[FunctionWarp]:
        """`functions` and every function of this file they call, transitively."""
        seen = {id(f): f for f in functions}
        stack = list(seen.values())
        while stack:
            for callee in stack.pop().callees:
                for defined in self._by_name.get(callee, ()):
                    if id(defined) not in seen:
                        seen[id(defined)] = defined
                        stack.append(defined)
        return list(seen.values())


class LogicalWarpNotes:
    """The 32s of one file that nothing observes as the hardware width: 32-lane logical warps,
    which AMD computes the same (each 64-lane wavefront holds two such groups). One note per
    function, at its first such 32, the others related: the porter learns where the code
    groups lanes by 32 without a line to change. Nothing out of view (a helper in another
    file, a caller's vote) is known to observe it, hence a note that says so."""

    def __init__(self, source: SourceFile):
        self.source = source
        self._by_function: dict[int, dict[int, object]] = {}

    def add(self, node) -> None:
        if warp_model(self.source).hardware_width == 32:
            return  # wave32 targets only: 32 is the hardware's width there, no grouping at all
        function = enclosing_function(node)
        self._by_function.setdefault(function.id if function is not None else -1, {})[node.start_byte] = node

    def findings(self) -> list[Finding]:
        out = []
        for nodes in self._by_function.values():
            first, *rest = [nodes[k] for k in sorted(nodes)]
            slots = _slot_arrays(enclosing_function(first), [first, *rest], self.source)
            written = _quoted(self.source.node_text(first))
            more = f" (and {len(rest)} more place{'s' if len(rest) != 1 else ''} here)" if rest else ""
            out.append(at_node(
                self.source, first,
                f"`{written}` groups lanes as a 32-lane logical warp{more}; nothing in view observes the 64-lane "
                "wavefront, so AMD computes the same (each wavefront holds two groups).",
                Fix.advice("Nothing to change if no code out of view (a helper in another file, a caller) votes or "
                           "shuffles across the whole warp; naming the width (`constexpr int kLogicalWarp = 32;`) "
                           "keeps the grouping deliberate"),
                severity=Severity.NOTE,
                related=tuple(Related(self.source.location(n.start_byte, n.end_byte), "grouped by 32 here too")
                              for n in rest) + slots))
        return out


def _declared_by(node):
    """The variable whose declaration `node` is part of (`int warp = tid / 32;`,
    `thread_block_tile<32> warp = tiled_partition<32>(b);`), else None."""
    for ancestor in ancestors_of(node):
        if ancestor.type in ("compound_statement", "function_definition", "for_statement", "if_statement"):
            return None
        if ancestor.type == "expression_statement":
            # `cg::thread_block_tile<32> warp = ...;` read as `(A < 32) > (warp = ...)`
            compared = ancestor.named_children[0] if ancestor.named_children else None
            right = compared.child_by_field_name("right") if compared is not None \
                and compared.type == "binary_expression" else None
            left = right.child_by_field_name("left") if right is not None \
                and right.type == "assignment_expression" else None
            return left if left is not None and left.type == "identifier" \
                and compared.child_by_field_name("operator").type == ">" else None
        if ancestor.type == "declaration":
            declarators = ancestor.children_by_field_name("declarator")
            if len(declarators) != 1 or declarators[0].type != "init_declarator":
                return None
            name = declarators[0].child_by_field_name("declarator")
            return name if name is not None and name.type == "identifier" else None
    return None


def _slot_arrays(function, grouped: list, source: SourceFile) -> tuple[Related, ...]:
    """The `__shared__` arrays of `function` indexed by a logical warp's number (`partial[wid]`
    where `int wid = threadIdx.x >> 5;`, or `partial[threadIdx.x / 32]`): a slot per 32-lane
    group, which goes with the grouping wherever it is changed."""
    if function is None or b"__shared__" not in source.data[function.start_byte:function.end_byte]:
        return ()
    indices = []  # the expressions that give a group's number
    for node in grouped:
        indices.append(node)
        declarator = _declared_by(node)
        if declarator is None:
            continue
        for use in identifiers_named(source, source.node_text(declarator), declarator.end_byte, function.end_byte):
            # `warp` of `int warp = tid / 32;`, or `warp.meta_group_rank()` of a tile of 32
            field = use.parent
            if field is not None and field.type == "field_expression" and field.parent is not None \
                    and field.parent.type == "call_expression" \
                    and source.node_text(field.child_by_field_name("field")) == "meta_group_rank":
                indices.append(field.parent)
            else:
                indices.append(use)
    found: dict[str, Related] = {}
    for index in indices:
        subscript = index.parent.parent if index.parent is not None else None
        if subscript is None or subscript.type != "subscript_expression":
            continue
        array = subscript.child_by_field_name("argument")
        name = source.node_text(array) if array is not None and array.type == "identifier" else None
        if name is None or name in found:
            continue
        declared = next((n for n in identifiers_named(source, name, function.start_byte, function.end_byte)
                         if n.parent.type == "array_declarator"), None)
        declaration = next((a for a in ancestors_of(declared) if a.type != "array_declarator"), None) \
            if declared is not None else None  # (`s[8][32 + 1]` nests its declarators)
        if declaration is not None and declaration.type == "declaration" and b"__shared__" in \
                source.data[declaration.start_byte:declaration.end_byte]:
            found[name] = Related(source.location(declared.start_byte, declared.end_byte),
                                  f"`{name}` keeps a slot per 32-lane group")
    return tuple(found.values())


def open_warps(observers: tuple[Observer, ...]) -> dict[str, tuple[str, ...]]:
    """What a finding whose only observers are out of view waits for (`Finding.open_helpers`,
    `Finding.open_callers`): the helpers of other files it calls, or the helpers of this file
    whose callers are elsewhere. Empty where anything in view observes."""
    if observers and all(o.helper is not None for o in observers):
        return {"open_helpers": tuple(dict.fromkeys(o.helper for o in observers))}
    if observers and all(o.caller_of is not None for o in observers):
        return {"open_callers": tuple(dict.fromkeys(o.caller_of for o in observers))}
    return {}


def judge_by_helpers(findings: list[Finding], verdicts: dict[str, dict[str, list]]) -> list[Finding]:
    """Findings whose 32 only code of other files observes, judged there (`verdicts`: by a
    finding's path, each helper's verdicts in those files, with where): a 32 beside calls of warp helpers of other files
    (`Finding.open_helpers`) by the helpers' own code (`LogicalWarps.helper_observations`),
    and a 32 in a helper nothing in its file calls (`Finding.open_callers`) by the code around
    its calls in other files (`LogicalWarps.caller_observations`). Where every definition in
    view keeps to 32 lanes (a width-32 xor reduction), or every caller in view reads the
    result per 32 lanes, the code is a logical warp AMD computes the same: one note per file
    and helpers, at the first such 32, the other 32s related. A helper defined or called
    nowhere in view, or code there that observes the width, leaves the finding as it is."""
    out: list[Finding] = []
    notes: dict[tuple, int] = {}  # (path, helpers) -> the note's place in `out`
    for f in findings:
        names = f.open_helpers or f.open_callers
        found_for = [verdicts.get(f.path, {}).get(name) for name in names]
        if not names or not all(found_for) or any(v is not False for found in found_for for v, _ in found):
            out.append(f)
            continue
        written = f"The shuffle width `{_quoted(f.matched)}`" if f.code == "W004" else f"`{_quoted(f.matched)}`"
        key = (f.path, f.code, names)
        if key in notes:
            note = out[notes[key]]
            out[notes[key]] = replace(note, related=note.related + (Related(f.location, f"{written} groups lanes here too"),))
            continue
        listed = ", ".join(f"`{name}`" for name in names)
        if f.open_helpers:
            why = f"{listed} of another file keep{'s' if len(names) == 1 else ''} to 32 lanes"
            where = "keeps to 32 lanes here"
        else:
            why = f"the callers of {listed} in other files read {'its' if len(names) == 1 else 'their'} result per 32 lanes"
            where = "is called here, its result read per 32 lanes"
        notes[key] = len(out)
        out.append(replace(
            f, severity=Severity.NOTE, open_helpers=(), open_callers=(),
            message=(f"{written} groups lanes as a 32-lane logical warp; {why} and nothing else observes the "
                     "64-lane wavefront, so AMD computes the same (each wavefront holds two groups)."),
            fix=Fix.advice("Nothing to change for AMD while the code of other files keeps to 32 lanes; naming "
                           "the width (`constexpr int kLogicalWarp = 32;`) keeps the grouping deliberate"),
            related=tuple(Related(location, f"`{name}` {where}") for name, found in zip(names, found_for)
                          for _, location in found[:2])))
    return out


def _quoted(code: str) -> str:
    """Code as a note quotes it: on one line, at most 40 characters."""
    written = " ".join(code.split())
    return written if len(written) <= 40 else written[:37] + "..."


# `n OP warpSize` read as `warpSize OP' n`: the hardware width tested where the code runs.
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _within(node, arm) -> bool:
    return arm.start_byte <= node.start_byte and node.end_byte <= arm.end_byte


def _width_test(condition, source: SourceFile, width: int) -> bool | None:
    """The truth of `condition` where `warpSize` is `width`: True or False where it follows
    from comparisons of `warpSize` with a number (`&&`, `||`, `!` between them), else None."""
    node = strip_parens(condition)
    if node is None:
        return None
    if node.type == "condition_clause":
        value = node.child_by_field_name("value")
        return _width_test(value, source, width) if value is not None and node.named_child_count == 1 else None
    if node.type == "unary_expression" and node.child_by_field_name("operator").type == "!":
        inner = _width_test(node.child_by_field_name("argument"), source, width)
        return None if inner is None else not inner
    if node.type != "binary_expression":
        return None
    operator = node.child_by_field_name("operator").type
    left, right = strip_parens(node.child_by_field_name("left")), strip_parens(node.child_by_field_name("right"))
    if operator in ("&&", "||"):
        parts = [_width_test(left, source, width), _width_test(right, source, width)]
        if operator == "&&":
            return False if False in parts else (True if parts == [True, True] else None)
        return True if True in parts else (False if parts == [False, False] else None)
    if operator not in _MIRRORED or left is None or right is None:
        return None
    if source.node_text(right) == "warpSize":
        left, right, operator = right, left, _MIRRORED[operator]
    number = integer_value(right, source)
    if source.node_text(left) != "warpSize" or number is None:
        return None
    return bool(c_operator(operator, width, number))


def warp_model(source: SourceFile) -> LogicalWarps:
    """The file's logical-warp model, built once per file."""
    return memoized(source, "logical_warp.model", LogicalWarps)


def _is_cross_lane(name: str | None) -> bool:
    if name is None:
        return False
    if name.startswith("."):
        return "shfl" in name or name in _GROUP_VOTES
    return _is_shuffle_name(name) or name.startswith(_VOTES)


def _assigned_name(call, source: SourceFile) -> str | None:
    """`v` of `v += __shfl_down(v, o)`, `v = fmaxf(v, __shfl_down(v, o))`, `T v = ...`."""
    for parent in ancestors_of(call):
        if parent.type == "assignment_expression":
            left = parent.child_by_field_name("left")
            while left is not None and left.type == "field_expression":  # `sums.q += ...`: the whole `sums`
                left = left.child_by_field_name("argument")
            return source.node_text(left) if left is not None and left.type == "identifier" else None
        if parent.type == "init_declarator":
            name = parent.child_by_field_name("declarator")
            return source.node_text(name) if name is not None and name.type == "identifier" else None
        if parent.type in ("expression_statement", "compound_statement", "return_statement"):
            return None
    return None


def _in_other_arm(node, call) -> bool:
    """Is `node` in another arm of an `#if` than `call` (`#else` of `#ifdef WARP_SHUFFLE`)?"""
    for arm in ancestors_of(node):
        if arm.type in ("preproc_else", "preproc_elif", "preproc_elifdef") and arm.parent is not None and \
                arm.parent.start_byte <= call.start_byte < arm.parent.end_byte and \
                not arm.start_byte <= call.start_byte < arm.end_byte:
            return True
    return False


def _in_shuffle_statement(node, source: SourceFile) -> bool:
    """Is `node` in a statement that shuffles down (a step of the tree itself)?"""
    statement = next((a for a in ancestors_of(node) if a.type in ("expression_statement", "declaration")), None)
    return statement is not None and b"shfl_down" in source.data[statement.start_byte:statement.end_byte].lower()


# A test that picks a tree's root: `lane == 0`, `threadIdx.x == 0`, `!lane`, `0 == tid`,
# `tid % 32 == 0`, `(t & 31) == 0` (names checked by `_ROOT_NAME`).
_ROOT_TEST = re.compile(r"\b(\w++)(?:\s*+\.\s*+x)?\s*+==\s*+0\b|!\s*+\(?\s*+(\w++)|\b0\s*+==\s*+(\w++)"
                        r"|(?:%\s*+\w++|&\s*+(?:31|0[xX]1[fF]))\s*+\)?\s*+==\s*+0\b")
_ROOT_NAME = re.compile(r"lane|tid|thread|rank", re.I)


def _picks_root(condition: str) -> bool:
    for m in _ROOT_TEST.finditer(condition):
        name = m.group(1) or m.group(2) or m.group(3)
        if name is None or _ROOT_NAME.search(name):
            return True
    return False


def _under_root_test(node, function, source: SourceFile) -> bool:
    for parent in ancestors_of(node):
        if parent == function:
            return False
        if parent.type == "if_statement":
            condition = parent.child_by_field_name("condition")
            consequence = parent.child_by_field_name("consequence")
            if consequence is not None and consequence.start_byte <= node.start_byte < consequence.end_byte and \
                    condition is not None and _picks_root(source.node_text(condition)):
                return True
    return False


# An `if` whose condition starts with a macro-like name (`if (USE_ROCM)`, `if (!USE_ROCM && ...)`):
# found in the bytes, then read in the tree.
_MACRO_TEST = re.compile(rb"\bif\s*\(\s*!?\s*\(?\s*[A-Z_][A-Z0-9_]{2,}\b")


def unreached_on_rocm(node, source: SourceFile) -> bool:
    """Is `node` in the arm of a C++ `if` that the ROCm build never runs, its condition a
    constant of the build's macros (`if (USE_ROCM) {...} else {...}` with `USE_ROCM` 1)? The
    compiler folds it: the arm still has to compile, but nothing in it runs on AMD, so what
    it computes on 32 lanes is the CUDA build's business."""
    ranges = memoized(source, "logical_warp.unreached", _unreached_ranges)
    if not ranges:
        return False
    at = bisect.bisect_right(ranges, (node.start_byte, float("inf"))) - 1
    while at >= 0:
        start, end = ranges[at]
        if start <= node.start_byte < end:
            return True
        at -= 1
    return False


def _unreached_ranges(source: SourceFile) -> list[tuple[int, int]]:
    """(start, end) of the `if` arms the ROCm build never runs, and of the kernel templates
    of a source file that nothing in it names again (`_uninstantiated_kernels`), sorted."""
    ranges = _uninstantiated_kernels(source)
    env = source.build
    if env is None or _MACRO_TEST.search(source.data) is None:
        return sorted(ranges)
    from portlint.build_model.expressions import evaluate
    model = source.rocm_path
    for match in _MACRO_TEST.finditer(source.data):
        keyword = source.tree.root_node.descendant_for_byte_range(match.start(), match.start() + 2)
        statement = keyword.parent if keyword is not None else None
        if statement is None or statement.type != "if_statement":
            continue
        condition = statement.child_by_field_name("condition")
        value = condition.child_by_field_name("value") if condition is not None else None
        if value is None or any(c.type == "init_statement" for c in condition.children):
            continue
        scope = env.scope(statement.start_byte, True, model.rocm_macros if model is not None else ())
        taken = evaluate(source.node_text(value), scope)
        if taken is None:
            continue  # a run-time value, or a macro the build leaves open
        arm = statement.child_by_field_name("alternative") if taken else statement.child_by_field_name("consequence")
        if arm is not None:
            ranges.append((arm.start_byte, arm.end_byte))
    return sorted(ranges)


def _uninstantiated_kernels(source: SourceFile) -> list[tuple[int, int]]:
    """The `__global__` templates of a source file (not a header) whose name appears nowhere
    else in it, not even in a comment or a macro body (an `INSTANTIATE(float)` macro spells
    it there): no launch or explicit instantiation here, and no other file can instantiate a
    template without its definition, so no build runs it."""
    if is_header(source.path) or b"template" not in source.data or b"__global__" not in source.data:
        return []
    found = []
    for template in queries.nodes(CUDA, "(template_declaration (function_definition) @f) @t", source.tree.root_node, "t"):
        function = next((c for c in template.named_children if c.type == "function_definition"), None)
        if function is None or not any(c.type == "__global__" or source.node_text(c) == "__global__"
                                        for c in function.children):
            continue
        declarator = function_declarator(function)
        own = declarator.child_by_field_name("declarator") if declarator is not None else None
        if own is None or own.type != "identifier":
            continue
        if not named_elsewhere(source.data, source.data[own.start_byte:own.end_byte], own.start_byte):
            found.append((template.start_byte, template.end_byte))
    return found


def _names_warp_size(node, source: SourceFile) -> bool:
    """`THREADS_PER_WARP`, `Traits::kWarpSize`: a name that says it holds the warp size."""
    from portlint.checks.wavefront_size import _SIZE, _warp_constant_kind
    node = strip_parens(node)
    if node.type not in ("identifier", "qualified_identifier", "type_identifier"):
        return False
    return _warp_constant_kind(source.node_text(node).rsplit("::", 1)[-1]) == _SIZE


def _literal(text: str) -> int | None:
    try:
        return int(text.rstrip("uUlL"), 0)
    except ValueError:
        return None


def _nth(nodes: list, position: int | None):
    return nodes[position] if position is not None and position < len(nodes) else None


def _parameter_position(function, name: str, source: SourceFile) -> int | None:
    declarator = function_declarator(function)
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    for position, parameter in enumerate(p for p in (parameters.named_children if parameters else ())
                                         if p.type != "comment"):
        declared = parameter.child_by_field_name("declarator")
        while declared is not None and declared.type != "identifier":
            declared = declared.child_by_field_name("declarator")
        if declared is not None and source.node_text(declared) == name:
            return position
    return None
