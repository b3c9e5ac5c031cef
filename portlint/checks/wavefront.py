"""W: code that assumes 32-lane warps; CDNA GPUs run 64-lane wavefronts."""

from __future__ import annotations

import os
import bisect
from dataclasses import replace
import functools
import re
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from portlint import queries
from portlint.build_model.macros import HEADER_SUFFIXES
from portlint.checks.cpp import (
    CUB_LOGICAL_WARP_ARGUMENT, IDENTIFIERS, ancestors_of, arguments, callee_name, declared_type, enclosing_function, function_declarator, function_name,
    functions_by_name, cub_warp_templates, has_argument_list, identifiers_named, integer_suffix, integer_value, macro_tree, memoized,
    named_descendants, open_constants, strip_parens, token_nodes,
)
from portlint.finding import Finding, Related, Severity, at_node
from portlint.fix import Applicability, Edit, Fix
from portlint.nesting import bounded
from portlint.rocm_path import Status
from portlint.project import MaskMacroUse, ProjectIndex, file_key, included_files, index_key
from portlint.source import CUDA, Location, SourceFile
from portlint.triggers import Trigger, all_of, any_of, in_name, leading, needs, nocase

FULL_MASK_64 = "~0ull"

# Warp intrinsics whose first argument is a lane mask.
MASKED_INTRINSICS = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync",
    "__match_any_sync", "__match_all_sync", "__syncwarp",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
})

# What every name in MASKED_INTRINSICS holds.
_MASKED_WORD = re.compile(rb"sync")


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


# `#define FULL_MASK 0xffffffff`: a macro named as a lane mask (`mask` and one of these words).
_MASK_MACRO = re.compile(rb"#[ \t]*define[ \t]+(\w*(?:[Mm][Aa][Ss][Kk])\w*)[ \t]+([^\n]*)")
_LANE_MASK_WORDS = frozenset({"full", "warp", "all", "final", "lane", "lanes", "active", "wave", "wavefront"})
_MACRO_MASK_VALUE = re.compile(r"\(*\s*(0[xX][fF]{8}|4294967295)([uU]?[lL]{0,2}|[lL]{0,2}[uU]?)\s*\)*")


@dataclass(frozen=True)
class OpenMaskMacro:
    """A header's 32-lane mask macro that no code of its own on the ROCm path uses: W002's
    finding at it stands only where a file that includes the header passes it to a `_sync`
    intrinsic (`check_full_mask_macros_through_project`)."""

    file: str  # `file_key` of the header
    name: str
    location: Location  # the macro's name (`ProjectIndex.open_facts` keeps a reported file's)
    finding: Finding
    value: str = ""  # as written: `0xffffffff`, `0xffffffffull` (64 bits wide, lanes 0-31 set)

    @property
    def wide(self) -> bool:
        return "ll" in self.value.lower()


def _full_mask_macros(source: SourceFile) -> list[tuple[str, Finding, bool, str]]:
    """`#define FULL_MASK 0xffffffff` (32 lanes) and `#define FULL_MASK 0xffffffffull` (64 bits
    wide, 32 lanes set): every mask built from it misses lanes 32-63. Each as (its name, the
    finding, whether code of this file on the ROCm path uses it, its value as written). Silent
    where another definition of the name a ROCm build may take holds all 64 lanes: the name is then a
    per-platform mask (`#if WARP_SIZE == 64` ... `#else`), and this value the one for 32-lane
    targets."""
    return memoized(source, "wavefront.full_mask_macros", _find_full_mask_macros)


def _find_full_mask_macros(source: SourceFile) -> list[tuple[str, Finding, bool, str]]:
    if b"define" not in source.data or not _ALL_32_BITS.search(source.data):
        return []
    findings = []
    root = source.tree.root_node
    defines = list(_MASK_MACRO.finditer(source.data))
    live: dict[str, int] = {}  # name -> definitions a ROCm build may take
    wide: set[str] = set()  # names a ROCm build may define as all 64 lanes
    for m in defines:
        if source.rocm_path.status(m.start()) is not Status.DEAD:
            name = m.group(1).decode(errors="replace")
            live[name] = live.get(name, 0) + 1
            if _MACRO_ALL_64_LANES.fullmatch(_MACRO_COMMENT.sub("", m.group(2).decode(errors="replace")).strip()):
                wide.add(name)
    for m in defines:
        name = m.group(1).decode(errors="replace")
        if not set(_words(name)) & _LANE_MASK_WORDS or name in wide:
            continue
        node = root.descendant_for_byte_range(m.start(1), m.end(1))
        definition = node.parent if node is not None else None
        if definition is None or definition.type != "preproc_def" or definition.child_by_field_name("name") != node:
            continue  # in a comment or a string
        value_node = definition.child_by_field_name("value")
        text = _MACRO_COMMENT.sub("", source.node_text(value_node)).strip() if value_node is not None else ""
        value = _MACRO_MASK_VALUE.fullmatch(text)
        if value is None:
            continue
        # The edit covers the value alone: a comment after it stays.
        at = source.data.find(text.encode(), value_node.start_byte, value_node.end_byte)
        edit = Edit(at, at + len(text.encode()), FULL_MASK_64)
        is_wide = "ll" in value.group(2).lower()
        message = (f"`{name}` is `{text}`: 64 bits wide, but only lanes 0–31 are set; AMD wavefronts have 64."
                   if is_wide else f"`{name}` is `{text}`, a mask of 32 lanes; AMD wavefronts have 64.")
        uses = _mask_uses(source, name, definition)
        severity = None
        masked = _intrinsic_at(source) if is_wide and uses else {}
        if masked and all(masked.get(r.location.start_byte) in _SHUFFLES_SYNC for r in uses):
            message, severity = _shuffled_only_message(name, text), Severity.NOTE
        # In code only the ROCm build compiles, the mask is the port's own (a shim's): wrong
        # there too, unless another definition for other AMD targets (wave32) stands beside it.
        findings.append((name, at_node(source, node, message, Fix.unsafe(
            f"Define `{name}` as `{FULL_MASK_64}` (every lane; CUDA's 32-bit mask parameters take its low half)",
            edit), in_port=live.get(name, 0) == 1, related=uses, severity=severity), bool(uses), text))
    return findings


_ALL_32_BITS = re.compile(rb"(?i)0xf{8}|4294967295")
# HIP's `_sync` shuffles compute without their mask: it only feeds `__hip_check_mask`, an
# assertion that `NDEBUG` compiles out. (Votes and `__syncwarp` compute with it.)
_SHUFFLES_SYNC = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"})


def _shuffled_only_message(name: str, text: str) -> str:
    return (f"`{name}` is `{text}`, lanes 0–31 of 64, and masks only shuffles: HIP's shuffles compute without "
            "their mask but check it where `NDEBUG` is not defined (a debug build), and trap when lanes 32-63 "
            "arrive.")


def _intrinsic_at(source: SourceFile) -> dict[int, str]:
    """The masked intrinsic (`masked_intrinsic_calls`) whose mask starts at each offset."""
    return {strip_parens(args[0]).start_byte: name for _, name, args in masked_intrinsic_calls(source) if args}


# A macro body that sets all 64 lanes: `0xffffffffffffffff`, `~0ull`, `(~0ULL)`.
_MACRO_ALL_64_LANES = re.compile(
    r"\(*\s*(?:0[xX][fF]{16}(?:[uU]?[lL]{0,2}|[lL]{0,2}[uU]?)|18446744073709551615[uU]?[lL]{0,2}"
    r"|~\s*0+(?:[uU][lL]{2}|[lL]{2}[uU]))\s*\)*")


def open_mask_macros(source: SourceFile) -> list[OpenMaskMacro]:
    """The project facts of W002: the file's mask macros that no code of its own uses (those
    of a header, mostly), for the files that include it to judge."""
    key = file_key(source)
    return [OpenMaskMacro(key, name, finding.location, finding, value)
            for name, finding, used, value in _full_mask_macros(source) if not used]


def mask_macro_uses(source: SourceFile) -> list[MaskMacroUse]:
    """The project facts of W002: each `_sync` call on the ROCm path whose mask is a macro
    named as a mask (`FULL_MASK`), which a header may define; where a shim drops the mask, none."""
    if not _MASKED_CALL.search(source.data):
        return []
    key = file_key(source)
    found = []
    for call, name, args in masked_intrinsic_calls(source):
        mask = strip_parens(args[0]) if args else None
        if mask is None or mask.type != "identifier" or "mask" not in _words(source.node_text(mask)) \
                or source.rocm_path.status(call.start_byte) is Status.DEAD \
                or source.shim_drops_argument(name, 0, call.start_byte):
            continue
        found.append(MaskMacroUse(source.node_text(mask), key, source.location(mask.start_byte, mask.end_byte), name,
                                  source.rocm_path.status(call.start_byte)))
    return found


# A masked intrinsic's name (`__shfl_down_sync`, `__ballot_sync`, `__syncwarp`, not `__syncthreads`).
_MASKED_CALL = re.compile(rb"[a-z]_sync\b|__syncwarp\b")


def check_full_mask_macros_through_project(index: ProjectIndex) -> list[Finding]:
    """A mask macro its own file does not use (a header's) is a hazard where a file that
    includes it passes it to a `_sync` intrinsic on the ROCm path (those calls related); where
    no file does (the uses sit in CUDA-only arms, or there are none), nothing computes with it.
    A use whose includes reach no definition of the name (an include path the model lacks)
    counts for every definition."""
    findings = []
    for fact in index.open_facts(OpenMaskMacro):
        uses = index.mask_uses_of(fact.name)
        seeing = [u for u in uses if fact.file in included_files(index, u.file)]
        if not seeing and uses:
            defined_in = {fact.file, *(index_key(m.location.path) for m in index.macros.get(fact.name, ()))}
            seeing = [u for u in uses if u.file not in defined_in
                      and not defined_in.intersection(included_files(index, u.file))]
        if seeing:
            found = replace(fact.finding, related=fact.finding.related + tuple(
                Related(u.location, f"`{u.name}` is the mask of `{u.intrinsic}` here")
                for u in seeing[:_MAX_RELATED_MASK_USES]))
            if fact.wide and all(u.intrinsic in _SHUFFLES_SYNC for u in seeing):
                found = replace(found, message=_shuffled_only_message(fact.name, fact.value), severity=Severity.NOTE)
            findings.append(found)
    return findings


# Enough related uses to find each file that computes with a mask; SARIF stays small.
_MAX_RELATED_MASK_USES = 50


def _mask_uses(source: SourceFile, name: str, definition) -> tuple[Related, ...]:
    """Where this file passes the mask macro on (`__shfl_down_sync(FULL_MASK, ...)`): the
    places that compute on 32 lanes, shown with the definition that is their root cause. Not
    a mask handed to a wrapper of this file whose ROCm code never reads it (`#ifdef
    __HIP_PLATFORM_AMD__` calls the mask-less shuffle), directly or as a parameter's default."""
    return tuple(Related(source.location(node.start_byte, node.end_byte), f"`{name}` is used here")
                 for node in token_nodes(source, name.encode())
                 if source.node_text(node) == name and not definition.start_byte <= node.start_byte < definition.end_byte
                 and source.rocm_path.status(node.start_byte) is not Status.DEAD
                 and not _dropped_on_rocm(node, source))


def _dropped_on_rocm(node, source: SourceFile) -> bool:
    """Is `node` an argument of a call of this file's function whose ROCm code never reads that
    parameter, or the default of a parameter whose every use on the ROCm path is such an
    argument?"""
    parent = node.parent
    if parent is not None and parent.type == "optional_parameter_declaration":
        function = enclosing_function(parent)
        declarator = parent.child_by_field_name("declarator")
        if function is None or declarator is None or declarator.type != "identifier":
            return False
        body = function.child_by_field_name("body")
        uses = [u for u in identifiers_named(source, source.node_text(declarator), body.start_byte, body.end_byte)
                if source.rocm_path.status(u.start_byte) is not Status.DEAD] if body is not None else []
        return all(_passed_to_unread_parameter(u, source) for u in uses)
    return _passed_to_unread_parameter(node, source)


def _passed_to_unread_parameter(node, source: SourceFile) -> bool:
    arguments = node.parent
    if arguments is None or arguments.type != "argument_list" or arguments.parent is None:
        return False
    name = callee_name(arguments.parent, source)
    position = next((i for i, a in enumerate(arguments.named_children) if a.id == node.id), None)
    definitions = functions_by_name(source).get(name, []) if name is not None else []
    return bool(definitions) and position is not None and \
        all(_unread_on_rocm(f, position, source) for f in definitions)


def _unread_on_rocm(function, position: int, source: SourceFile) -> bool:
    """Does no code of `function` that a ROCm build compiles read its parameter `position`?"""
    declarator = function_declarator(function)
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    listed = [p for p in parameters.named_children if p.type.endswith("parameter_declaration")] \
        if parameters is not None else []
    if position >= len(listed):
        return False
    name = listed[position].child_by_field_name("declarator")
    body = function.child_by_field_name("body")
    if name is None or name.type != "identifier" or body is None:
        return False
    return all(source.rocm_path.status(u.start_byte) is Status.DEAD
               for u in identifiers_named(source, source.node_text(name), body.start_byte, body.end_byte))


_MACRO_COMMENT = re.compile(r"//.*|/\*.*?\*/", re.S)
FULL_MASK_MACRO_TOKENS = all_of(b"define", nocase(b"mask"), nocase(b"0xffffffff", b"4294967295"))


# The shuffles without a mask: `(value, delta or lane, width)` on HIP, as CUDA's deprecated forms.
_UNMASKED_SHUFFLES = frozenset({"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"})


_SHUFFLE_OPERAND = {"__shfl": "source lane", "__shfl_xor": "lane mask"}


def _mask_as_shuffled_value(source: SourceFile) -> list[Finding]:
    """`__shfl_down(0xffffffff, v, offset)`: a `_sync` call whose suffix was dropped and its
    mask kept. The mask is now the value every lane shuffles (all ones), `v` the offset and
    `offset` the width, on HIP and CUDA alike: the result is not `v`'s."""
    findings = []
    for call, name, args in shuffle_calls(source, source.tree.root_node):  # shared with W001/W004
        if name not in _UNMASKED_SHUFFLES or len(args) != 3 or not _reads_as_mask(args[0], source):
            continue
        mask = strip_parens(args[0])
        text = source.node_text(mask)
        value, step = (source.node_text(a) for a in args[1:])
        edit = Edit(args[0].start_byte, args[1].start_byte, "")
        findings.append(at_node(
            source, mask,
            f"`{name}` has no mask parameter: `{text}` is shuffled as the value, `{value}` is the "
            f"{_SHUFFLE_OPERAND.get(name, 'offset')} and `{step}` the width.",
            Fix.unsafe(f"Drop the mask: `{name}({value}, {step})` shuffles `{value}` across the whole wavefront "
                       "(it changes what the code computes now)", edit),
            in_port=True))  # as wrong in code written for HIP alone
    return findings


def _reads_as_mask(node, source: SourceFile) -> bool:
    """An all-lanes literal (`0xffffffff`, `~0ull`) or a name that says mask (`FULL_MASK`, `mask`)."""
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return "mask" in {w.lower() for w in _words(source.node_text(node))}
    text = source.node_text(node).replace(" ", "").lower()
    return _is_32_lane_full_mask(node, source) or integer_value(node, source) == (1 << 64) - 1 \
        or text in ("~0ull", "~0ul", "~0llu", "~0lu")


@needs(b"_sync", FULL_MASK_MACRO_TOKENS, all_of(b"__shfl", nocase(b"mask", b"0xffffffff", b"~0")))
def check_narrow_full_mask(source: SourceFile) -> list[Finding]:
    # A definition no code here uses is the project check's (`open_mask_macros`).
    findings = [finding for _, finding, used, _ in _full_mask_macros(source) if used]
    if b"__shfl" in source.data:
        findings += _mask_as_shuffled_value(source)
    if b"_sync" not in source.data and b"__syncwarp" not in source.data:
        return findings
    elsewhere: dict[str, list] = {}  # a mask macro another file defines -> (its macro, uses here)
    for call, name, args in masked_intrinsic_calls(source):
        if args and (macro := _mask_macro_from_elsewhere(args[0], call, source)) is not None \
                and not source.shim_drops_argument(name, 0, call.start_byte) \
                and source.rocm_path.status(call.start_byte) is not Status.DEAD:
            elsewhere.setdefault(macro.name, [macro, []])[1].append((strip_parens(args[0]), name))
            continue
        if not args or not _is_32_lane_full_mask(args[0], source):
            continue
        if source.shim_drops_argument(name, 0, call.start_byte):
            continue  # the ROCm build's shim drops the mask
        mask = strip_parens(args[0])
        text = source.node_text(mask)
        doubt = full_mask_doubt(call, name, source)
        guard = _first_32_threads_guard(call, source)
        if guard is not None:
            # The branch runs lanes 0-31 alone, on 64 lanes too: the mask's lanes are right,
            # and `~0ull` would name lanes that never arrive (HIP checks `mask == __ballot(true)`).
            if _is_64_bit_literal(mask, source):
                continue
            title = f"Write `{FULL_MASK_32_LANES_64_BIT}`: the same 32 lanes, as a 64-bit mask"
            edit = Edit.replace(mask, FULL_MASK_32_LANES_64_BIT)
            findings.append(replace(at_node(
                source, mask,
                f"Mask `{text}` is 32 bits wide; HIP's `_sync` intrinsics take a 64-bit mask (`static_assert`). "
                f"Its lanes are right: `{_short(source.node_text(guard))}` runs lanes 0-31 alone.",
                Fix.unsafe(f"{title}; {doubt}", edit) if doubt else Fix.safe(title, edit),
                related=(Related(source.location(guard.start_byte, guard.end_byte),
                                 "only the block's first 32 threads run this branch"),)),
                dependent=_depends_on_template(call, args[1:], source)))
            continue
        title = f"Replace `{text}` with `{FULL_MASK_64}` (every lane of a 64-lane wavefront)"
        findings.append(replace(at_node(
            source, mask,
            f"Mask `{text}` covers 32 lanes; AMD wavefronts have 64.",
            Fix.unsafe(f"{title}; {doubt}", Edit.replace(mask, FULL_MASK_64)) if doubt
            else Fix.safe(title, Edit.replace(mask, FULL_MASK_64)),
        ), dependent=_depends_on_template(call, args[1:], source)))
    return findings + _uses_of_masks_defined_elsewhere(source, elsewhere)


def _depends_on_template(call, values, source: SourceFile) -> bool:
    """Does an argument of `call` besides the mask depend on a parameter of a template around
    it (`__shfl_down_sync(mask, v, i)` with `T v`)? hip-clang then picks the intrinsic's
    overload, and meets its mask `static_assert`, only where the template is instantiated."""
    parameters = _template_parameter_names(call)
    if not parameters:
        return False
    for value in values:
        for node in named_descendants(value):
            if node.type not in ("identifier", "type_identifier"):
                continue
            name = source.node_text(node)
            if name in parameters:
                return True
            declared = declared_type(source, node) if node.type == "identifier" else None
            if declared is not None and parameters & set(_WORD.findall(declared.type)):
                return True
    return False


_WORD = re.compile(r"[A-Za-z_]\w*")


def _template_parameter_names(node) -> set[str]:
    """The names of the parameters of every template declaration around `node`."""
    names = set()
    for parent in ancestors_of(node):
        if parent.type != "template_declaration":
            continue
        parameters = parent.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters is not None else ():
            name = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
            if name is None:  # `typename T`, `class... Ts`: the name is a plain child
                name = next((c for c in parameter.named_children if c.type == "type_identifier"), None)
            while name is not None and name.type not in ("identifier", "type_identifier"):
                name = next((c for c in name.named_children if c.type in ("identifier", "type_identifier")), None)
            if name is not None:
                names.add(name.text.decode())
    return names


FULL_MASK_32_LANES_64_BIT = "0xffffffffull"


_FIRST_32_TEST = re.compile(rb"<\s*32\b|<=\s*31\b")


def _tests_first_32(function, source: SourceFile) -> bool:
    """Does `function` test `< 32` (or `<= 31`) anywhere? Found once per function: climbing
    from every node of a deep `else if` chain to a guard is quadratic, and most functions
    have none to find."""
    tests = source.memo.setdefault("wavefront.first_32_tests", {})
    if function.id not in tests:
        tests[function.id] = _FIRST_32_TEST.search(source.data, function.start_byte, function.end_byte) is not None
    return tests[function.id]


def _first_32_threads_guard(call, source: SourceFile):
    """The `tid < 32` of an `if` whose branch holds `call` (the block's first 32 threads), else None."""
    function = enclosing_function(call)
    if function is None or not _tests_first_32(function, source):
        return None
    return enclosing_warp_guard(call, source, thread_variables(function, source),
                                holds=lambda body, _: body.start_byte <= call.start_byte < body.end_byte)


def _is_64_bit_literal(node, source: SourceFile) -> bool:
    """`0xffffffffull`, `0xFFFFFFFFULL`: a literal whose suffix makes it 64 bits."""
    return node.type == "number_literal" and source.node_text(node).lower().endswith(("ull", "llu", "ul", "lu", "ll"))


def _mask_macro_from_elsewhere(node, call, source: SourceFile):
    """The project macro a `_sync` call's mask argument names, where the ROCm build takes it
    from another file and it is a 32-lane full mask there (`#define FULL_WARP_MASK 0xffffffff`
    in a common header), else None. Its definition is W002's finding in that file."""
    node = strip_parens(node)
    if node is None or node.type != "identifier":
        return None
    macro = source.shim(source.node_text(node), call.start_byte)
    if macro is None or macro.params is not None or macro.body is None or macro.path == str(source.absolute_path):
        return None
    return macro if _MACRO_MASK_VALUE.fullmatch(_MACRO_COMMENT.sub("", macro.body).strip()) else None


def _uses_of_masks_defined_elsewhere(source: SourceFile, elsewhere: dict[str, list]) -> list[Finding]:
    """One note per such macro and file, at its first use, the others related: the lines that
    compute on 32 lanes here, pointing at the definition (an error where it is written)."""
    findings = []
    for name, (macro, uses) in elsewhere.items():
        (first, intrinsic), *rest = sorted(uses, key=lambda u: u[0].start_byte)
        body = _MACRO_COMMENT.sub("", macro.body).strip()
        findings.append(at_node(
            source, first,
            f"`{name}` is `{body}` on ROCm ({os.path.basename(macro.path)} defines it), so this `{intrinsic}` names "
            "32 lanes; AMD wavefronts have 64. The fix is at that definition.",
            Fix.advice(f"Define `{name}` as `{FULL_MASK_64}` where {os.path.basename(macro.path)} defines it"),
            severity=Severity.NOTE, in_port=True,  # as wrong in code only the ROCm build compiles
            related=tuple(Related(source.location(n.start_byte, n.end_byte), f"`{name}` is the mask of `{i}` here")
                          for n, i in rest)))
    return findings


# Votes: their result is the lanes' (a ballot's bits); a shuffle's result does not depend on its mask on HIP.
_VOTES = frozenset(n for n in MASKED_INTRINSICS if not n.startswith(("__shfl", "__syncwarp")))
# A block of several rows (`dim3(32, N)`): one 64-lane wavefront holds two rows of 32 threads.
_ROWS = re.compile(rb"\b(?:threadIdx|blockDim)\s*\.\s*[yz]\b")


def full_mask_doubt(call, name: str, source: SourceFile) -> str | None:
    """Why a full 64-lane mask (`~0ull`) at the `_sync` intrinsic `call` may be wrong on ROCm,
    or None when the code shows it right. HIP's `_sync` intrinsics check that the mask is
    exactly the lanes that execute them (`__hip_check_mask`: `mask == __ballot(true)`), where
    CUDA lets named lanes have exited: so a lane that returned before the call, in the kernel
    around it (or, for a device function, in any kernel of the file; with none, nothing shows
    it; in a header, its includers' kernels are out of view) makes `~0ull` wrong. A vote in a block of rows (`threadIdx.y`) takes two rows' lanes:
    row 1 would read row 0's bits."""
    function = enclosing_function(call)
    if function is None:
        return "nothing shows that every lane reaches it"
    if _is_kernel(function):
        kernels = [function]
    else:
        if os.path.splitext(source.path)[1].lower() in HEADER_SUFFIXES:
            return "a header's function is called from kernels out of view, where lanes may have returned"
        kernels = [f for f in queries.nodes(CUDA, "(function_definition) @f", source.tree.root_node, "f")
                   if _is_kernel(f)]
        if not kernels:
            return "no kernel here shows that every lane of its wavefront calls it"
    for kernel in kernels:
        until = call.start_byte if kernel == function else kernel.end_byte
        returns = _early_returns(kernel, source)
        if returns and returns[0] < until:
            return "lanes that returned before it make HIP's mask check fail"
    if name in _VOTES and any(_ROWS.search(source.data[f.start_byte:f.end_byte]) for f in {function, *kernels}):
        return "in a block of rows (`threadIdx.y`) a wavefront votes over two rows"
    return None


def _early_returns(kernel, source: SourceFile) -> list[int]:
    """Where the kernel's `return`s start, but for its last statement, in order: found once
    per kernel (asked for every `_sync` call, a search per call was quadratic)."""
    found = memoized(source, "wavefront.early_returns", lambda s: {})
    if kernel.id not in found:
        body = kernel.child_by_field_name("body")
        last = body.named_children[-1] if body is not None and body.named_children else None
        found[kernel.id] = sorted(r.start_byte for r in queries.nodes(CUDA, "(return_statement) @r", kernel, "r")
                                  if r != last)
    return found[kernel.id]


def _is_kernel(function) -> bool:
    return any(c.type == "__global__" for c in function.children)


# =========================================================================================
# Shared by W001 and W003: what names and expressions say about lanes and warps.

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Words that make a name a count, a size or a mask rather than one thread's index.
_COUNT_WORDS = frozenset({
    "num", "n", "nr", "count", "cnt", "total", "max", "min", "per", "warps", "lanes", "threads",
    "size", "sz", "width", "mask", "bytes", "bits", "offset", "log", "shift",
})
_INDEX_WORDS = frozenset({"id", "idx", "index", "rank"})
_HIP_THREAD_BUILTINS = frozenset({
    "hipThreadIdx_x", "hipThreadIdx_y", "hipThreadIdx_z", "hipBlockDim_x", "hipBlockDim_y", "hipBlockDim_z",
})
_SIGNED_32 = frozenset({"int", "signed", "signed int", "int32_t", "std::int32_t"})
_UNSIGNED_32 = frozenset({"unsigned", "unsigned int", "uint32_t", "std::uint32_t", "uint"})


def _words(name: str) -> list[str]:
    """`kWarpSize` -> [k, warp, size]; `WARP_SIZE_LOG2` -> [warp, size, log, 2]."""
    return [w.lower() for w in _WORD.findall(name)]


def _word_starts(*starts: str) -> str:
    """A regex of where a word of `_words` (`_WORD`) that starts with one of `starts` (lower
    case letters) can begin: `lane` after no letter (`lane_id`, `__lane_id`), `Lane` anywhere
    (`myLane`), `LANE` after no capital (`LANE_ID`). `planes`, `Xlane` and `PLANE` hold no word
    `lane`. Each look-behind follows the first letter (see `_at_token_start`)."""
    forms = []
    for start in starts:
        first, rest = start[0], start[1:]
        forms += [f"{first}(?<![A-Za-z]{first}){rest}", start.capitalize(),
                  f"{first.upper()}(?<![A-Z]{first.upper()}){rest.upper()}"]
    return "|".join(forms)


def _index_kind(name: str) -> str | None:
    """"lane", "warp" or "thread" when `name` reads as such an index (`lane_id`, `wid`, `tid`)."""
    words = _words(name)
    found = set(words)
    if not found or found & _COUNT_WORDS:
        return None
    if found & {"lane", "laneid", "laneidx"}:
        return "lane"
    if found & {"wid", "warpid", "warpidx"} or ("warp" in found and (found & _INDEX_WORDS or words == ["warp"])):
        return "warp"
    if found & {"tid", "ltid", "tidx", "threadid", "threadidx"} or ("thread" in found and found & _INDEX_WORDS):
        return "thread"
    return None


def _names_block_size(name: str) -> bool:
    """`blockSize`, `BLOCK_SIZE`, `kBlockDim`, `nthreads`, `num_threads`, `threads_per_block`."""
    words = set(_words(name))
    return bool(words & {"blocksize", "blockdim", "nthreads", "numthreads"}) or (
        "block" in words and bool(words & {"size", "dim", "threads"})) or ({"num", "threads"} <= words)


def _type_text(node, source: SourceFile) -> str:
    return " ".join(source.node_text(node).split())


def _is_shuffle(name: str | None) -> bool:
    return name is not None and "shfl" in name.lower()


# What every shuffle's name holds (see `_is_shuffle`).
_SHUFFLE_WORD = re.compile(rb"(?i)shfl")


def _may_name(node, name: str, source: SourceFile) -> bool:
    """Can an identifier under `node` read `name`? Not if its bytes are not in the node's text
    (a name read from undecodable bytes holds U+FFFD: it gets no byte test)."""
    return "\ufffd" in name or name.encode() in source.data[node.start_byte:node.end_byte]


def _mentions(node, name: str, source: SourceFile) -> bool:
    if node.type == "identifier":
        return source.node_text(node) == name
    if not _may_name(node, name, source):
        return False
    return any(source.node_text(n) == name for n in queries.nodes(CUDA, IDENTIFIERS, node, "id"))


def _roots(source: SourceFile):
    """(root, in_macro) for the main tree and the tree of macro bodies (parsed once per file)."""
    yield source.tree.root_node, False
    macros = macro_tree(source)
    if macros is not None:
        yield macros, True


def _at_token_start(spelling: str) -> str:
    """The regex `spelling` where a token starts: no letter, digit, `_` or `'` just before it
    (a `'` before a digit is a digit separator or opens a character literal; as a start it
    made `0'0'0'...` quadratic). The look-behind follows the first character, a literal one:
    a regex that starts with a look-behind is searched for at every byte (~10x slower)."""
    first = spelling[0]
    return f"{first}(?<![0-9A-Za-z_']{first}){spelling[1:]}"


# What may stand between two tokens of a trigger pattern: blanks and line continuations
# (the two never match the same text, so a possessive loop over them is linear), then the
# next token or the start of a comment. A comment is not skipped but taken as "maybe": the
# tree decides. Skipping comments in a regex is quadratic or worse (each literal before a
# `////` banner re-scans it), and a trigger only has to be a necessary condition.
_BLANK = r"\s|\\\r?\n"
_OR_COMMENT = r"|/[/*]"


@cache
def _literal_pattern(values: frozenset[int]) -> re.Pattern:
    """An integer literal of one of `values` where a token starts, in every spelling
    `integer_value` reads (`31`, `3'1`, `037`, `0x1F`, `0x0'1f`, `0b11111`, any suffix): `'`
    separators may stand between any two digits. Matches its start: the tree says the rest."""
    def digits(text: str) -> str:
        return "'*".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)
    spellings = []
    for value in sorted(values):
        spellings += [digits(str(value)) + "(?![0-9.])", "0['0]*" + digits(format(value, "o")),
                      "0[xX]['0]*" + digits(format(value, "x")), "0[bB]['0]*" + digits(format(value, "b"))]
    return re.compile("|".join(_at_token_start(s) for s in spellings).encode())


def _word_start_trigger(*starts: str) -> Trigger:
    """`_word_starts(*starts)` as a trigger, searched only where one of `starts` occurs (a
    start that holds another, `ltid` and `tid`, adds no token)."""
    tokens = [s for s in starts if not any(o != s and o in s for o in starts)]
    return all_of(nocase(*(t.encode() for t in tokens)), re.compile(_word_starts(*starts).encode()))


def operations_with_literal(source: SourceFile, root, values: frozenset[int]) -> list:
    """The binary expressions under `root` (the main or the macro tree: the same offsets) with
    an operand that is an integer literal of one of `values`, in source order. Found from the
    literals in the text rather than by matching every binary expression of the file."""
    def literal_starts(s: SourceFile) -> list[int]:
        return [m.start() for m in _literal_pattern(values).finditer(s.data)]
    found = {}
    for at in memoized(source, f"wavefront.literals:{sorted(values)}", literal_starts):
        literal = root.descendant_for_byte_range(at, at + 1)
        if (literal is None or literal.type != "number_literal" or literal.start_byte != at
                or integer_value(literal, source) not in values):
            continue
        expr = literal.parent
        if expr.type == "binary_expression":
            found[expr.id] = expr
    return sorted(found.values(), key=lambda n: (n.start_byte, -n.end_byte))


@bounded(False)
def _is_thread_expr(node, source: SourceFile, thread_vars=frozenset()) -> bool:
    """A thread's index in its block (or the block's size): `threadIdx.x`, `tid`, `lane + 1`,
    `threadIdx.y * blockDim.x + threadIdx.x`. Global indices (`blockIdx`) and scaled
    indices (`tid * 4`, byte offsets) are not."""
    node = strip_parens(node)
    if node is None:
        return False
    kind = node.type
    if kind == "identifier":
        name = source.node_text(node)
        return name in thread_vars or name in _HIP_THREAD_BUILTINS or _index_kind(name) in ("thread", "lane")
    if kind == "field_expression":
        base = node.child_by_field_name("argument")
        return base is not None and source.node_text(base) in ("threadIdx", "blockDim")
    if kind == "cast_expression":
        return _is_thread_expr(node.child_by_field_name("value"), source, thread_vars)
    if kind == "call_expression":
        name = callee_name(node, source)
        if name == "__lane_id" or _group_method(node, source) == "thread_rank":  # `cta.thread_rank()`
            return True
        fn = node.child_by_field_name("function")
        args = arguments(node)
        is_cast = name == "static_cast" or (fn is not None and fn.type in ("primitive_type", "sized_type_specifier"))
        return is_cast and len(args) == 1 and _is_thread_expr(args[0], source, thread_vars)
    if kind == "binary_expression":
        op = node.child_by_field_name("operator").type
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        is_thread = lambda n: _is_thread_expr(n, source, thread_vars)  # noqa: E731
        if op in ("+", "-"):
            return (is_thread(left) and (is_thread(right) or right.type == "number_literal")) or (
                left.type == "number_literal" and is_thread(right))
        if op == "*":  # threadIdx.y * blockDim.x
            return is_thread(left) and is_thread(right)
    return False


# Bytes without which `_is_thread_expr` holds for no expression (a thread variable is set
# from a thread expression): `blockDim`, `hipBlockDim_x`, or a name that `_index_kind` reads
# as a lane or thread index. A thread index holds a word `threadid`/`threadidx`, or `thread`
# and an index word (`_INDEX_WORDS`) in either order (`threadIdx`, `hipThreadIdx_x`).
_THREAD_WORD, _INDEX_WORD = _word_starts("thread"), _word_starts("id", "index", "rank")


def _in_one_name_before(second: str, first: str) -> str:
    """`first`, then the rest of one name up to `second`. The gap holds no other start of
    `first`: the match from the last `first` before `second` is as good (the two words cannot
    overlap), and without the rule every `first` in `ThreadThread...` re-scanned the name to
    its end (quadratic)."""
    return f"(?:{first})(?:(?!{first})[\\w$\\x80-\\xff])*?(?:{second})"


THREAD_EXPRESSION_BYTES = any_of(
    nocase(b"blockdim"),
    _word_start_trigger("lane", "tid", "ltid"),
    # A name with a thread word and an index word, in either order (`threadIdx`, `tid_thread`).
    in_name(b"thread", leading(b"tTiIrR", f"(?:{_THREAD_WORD})(?i:id)|{_in_one_name_before(_INDEX_WORD, _THREAD_WORD)}"
                                          f"|{_in_one_name_before(_THREAD_WORD, _INDEX_WORD)}".encode())),
)


_INITIALISED = "(init_declarator declarator: (identifier) @name value: (_) @value) @init"
_REASSIGNED = "[(assignment_expression left: (identifier) @name) (update_expression argument: (identifier) @name)]"


def thread_variables(function, source: SourceFile) -> frozenset[str]:
    """Locals set once from a thread index (`int t = threadIdx.x;`), not loop counters."""
    reassigned = {source.node_text(n) for n in queries.nodes(CUDA, _REASSIGNED, function, "name")}
    names: set[str] = set()
    for match in queries.matches(CUDA, _INITIALISED, function):
        name = source.node_text(match["name"][0])
        declaration = match["init"][0].parent
        if name in reassigned or (declaration.parent is not None and declaration.parent.type == "for_statement"):
            continue
        if _is_thread_expr(match["value"][0], source, names):
            names.add(name)
    return frozenset(names)


def _receiver_name(expr, source: SourceFile) -> str | None:
    """The variable an expression initialises or is assigned to (through parentheses and casts)."""
    node, parent = expr, expr.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        node, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
        target = parent.child_by_field_name("declarator")
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        target = parent.child_by_field_name("left")
        if target is not None and target.type == "field_expression":
            target = target.child_by_field_name("field")
    else:
        return None
    if target is None or target.type not in ("identifier", "field_identifier"):
        return None
    return source.node_text(target)


# =========================================================================================
# W001 hardcoded-warp-size

# Lane arithmetic: operator -> the literal that means "32 lanes".
_LANE_ARITHMETIC = {"&": 31, "%": 32, "/": 32, ">>": 5, "==": 31, "!=": 31}
# Contexts where `warpSize` (not a constant expression on current HIP) cannot stand.
_CONSTANT_CONTEXTS = frozenset({
    "template_argument_list", "template_parameter_list", "static_assert_declaration",
    "enumerator", "bitfield_clause",
})
# Nodes whose `value`/`size`/`condition` child is a constant expression (their other children are not).
_CONSTANT_FIELDS = {"case_statement": "value", "array_declarator": "size", "preproc_if": "condition",
                    "preproc_elif": "condition"}
# Things only device code touches: a function with none of these and no qualifier is host code.
_DEVICE_EVIDENCE = (b"threadIdx", b"blockDim", b"__shfl", b"__syncthreads", b"warpSize", b"hipThreadIdx")
# cub/hipcub warp collectives -> index of the LOGICAL_WARP_THREADS template argument.

_W001_WORDS = (b"warp", b"lane", b"shfl", b"tid", b"thread", b"blockdim")
HOST_ADVICE = ("Read the warp size at run time: "
               "`hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev)`, then use `ws`")
CONSTANT_ADVICE = ("Use a per-platform constant: 64 under "
                   "`#if defined(__GFX8__) || defined(__GFX9__)`, else 32")
LOOP_ADVICE = "Loop over the offsets instead: `for (int o = warpSize / 2; o > 0; o /= 2)`"


def _code_context(node, source: SourceFile, in_macro: bool) -> str:
    """Where `node` stands, for deciding whether `warpSize` may replace a literal there:
    device, host-device, device-like (unqualified but touches threads), macro, host or constant."""
    if in_macro:
        return "macro"
    # The answer from an ancestor up is the same for every literal below it (but at
    # `_CONSTANT_FIELDS`, where it depends on the child): kept per ancestor, so the literals
    # of an else-if chain 800 arms deep do not each climb it again.
    known = source.memo.setdefault("code_context", {})
    climbed = []
    child, context = node, None
    for parent in ancestors_of(node):
        if parent.type == "function_definition":
            context = _function_context(parent, source)
            break
        if parent.id in known:
            context = known[parent.id]
            break
        if parent.type not in _CONSTANT_FIELDS:
            climbed.append(parent.id)
        if parent.type in _CONSTANT_CONTEXTS:
            context = "constant"
        elif parent.type in _CONSTANT_FIELDS and parent.child_by_field_name(_CONSTANT_FIELDS[parent.type]) == child:
            context = "constant"
        elif parent.type in ("declaration", "field_declaration") and any(
                c.type == "type_qualifier" and source.node_text(c) == "constexpr" for c in parent.children):
            context = "constant"
        elif parent.type == "lambda_expression" and any(
                c.type == "ERROR" and source.node_text(c).strip() == "__device__" for c in parent.children):
            context = "device-like"  # `[=] __device__ (...) {...}`: extended lambdas parse with an ERROR
        if context is not None:
            break
        child = parent
    if context is None:
        context = "constant"  # file-scope initialisers
    known.update(dict.fromkeys(climbed, context))
    return context


def _function_context(parent, source: SourceFile) -> str:
    """`_code_context` of code directly in function definition `parent`."""
    qualifiers = {c.type for c in parent.children}
    if "__host__" in qualifiers:
        return "host-device" if qualifiers & {"__device__", "__global__"} else "host"
    if qualifiers & {"__device__", "__global__"}:
        return "device"
    body = source.data[parent.start_byte:parent.end_byte]
    return "device-like" if any(word in body for word in _DEVICE_EVIDENCE) else "host"


def _warp_size_fix(node, source: SourceFile, in_macro: bool, title: str, *edits: Edit) -> Fix:
    """`warpSize` is 32 on CUDA and 64 on CDNA, but exists only in device code."""
    context = _code_context(node, source, in_macro)
    if context == "device":
        return Fix.safe(title, *edits)
    if context in ("host-device", "device-like", "macro"):
        return Fix.unsafe(title, *edits)
    return Fix.advice(CONSTANT_ADVICE if context == "constant" else HOST_ADVICE)


def _explicit_width(name: str, args: list, source: SourceFile) -> bool:
    """A shuffle given its own segment width (`__shfl_xor(v, o, 16)`): offsets follow the width,
    not the warp (W004 judges a width of 32). Wrappers count as such when they get a literal."""
    if name.startswith("__shfl"):
        index = 3 if name.endswith("_sync") else 2
        return len(args) > index and source.node_text(args[index]) != "warpSize"
    return any(a.type == "number_literal" for a in args[1:])


def shuffle_width_index(name: str) -> int | None:
    """Position of the width argument: `__shfl_xor(v, o, width)`, `__shfl_xor_sync(m, v, o, width)`,
    and wrappers written like the former: PyTorch's `WARP_SHFL_DOWN(v, delta, width, mask)`, a
    project's `WARP_SHUFFLE_DOWN(v, delta)`."""
    if name.startswith("__shfl"):
        return 3 if name.endswith("_sync") else 2
    lowered = name.lower()
    return 2 if "shfl" in lowered or "shuffle" in lowered else None


_STATEMENT_BOUNDS = frozenset({"compound_statement", "expression_statement", "function_definition", "for_statement",
                               "if_statement", "while_statement", "return_statement", "translation_unit"})


def read_only_off_rocm(node, source: SourceFile) -> bool:
    """Is `node` part of the declaration of a local variable that only code a ROCm build does
    not compile reads? (`int group_mask = 15 << ((threadIdx.x & 31) & ~3);` read only by the
    `#else` arm of `#ifdef USE_HIP`: its value never matters on ROCm.)"""
    model = source.rocm_path
    declaration = node
    while declaration is not None and declaration.type != "declaration":
        if declaration.type in _STATEMENT_BOUNDS:
            return False
        declaration = declaration.parent
    if model is None or declaration is None:
        return False
    declarators = [d for d in declaration.children_by_field_name("declarator")]
    name = declarators[0].child_by_field_name("declarator") if len(declarators) == 1 and \
        declarators[0].type == "init_declarator" else None
    function = enclosing_function(declaration)
    if name is None or name.type != "identifier" or function is None:
        return False
    scope = declaration.parent if declaration.parent is not None else function  # its block
    reads = list(identifiers_named(source, source.node_text(name), declaration.end_byte, scope.end_byte))
    return bool(reads) and all(model.status(read.start_byte) is Status.DEAD for read in reads)


# A block-wide scan given a prefix callback (cub/hipcub `BlockScan::InclusiveScan(in, out, op,
# prefix_op)`, `ExclusiveSum(in, out, prefix_op)`): the callback comes last.
_SCAN_WITH_CALLBACK = re.compile(rb"\.\s*(?:Inclusive|Exclusive)\w*\s*\(")
_COMMENTS = frozenset({"comment", "string_content", "string_literal", "char_literal"})


def seeds_scan_callback(expr, source: SourceFile) -> bool:
    """Is `expr` (`threadIdx.x % 32`) the lane-0 test of `v = ... tid % 32 == 0 ? seed : identity`
    where `v` only seeds block-scan prefix callbacks (`Op prefix_op(v);` passed last to a
    `BlockScan` scan)? The callback runs in the first warp and only lane 0's return value seeds
    the scan: thread 0, which `% 32 == 0` selects on any warp size (64 is a multiple of 32)."""
    test, parent = expr, expr.parent
    while parent is not None and parent.type == "parenthesized_expression":
        test, parent = parent, parent.parent
    if parent is None or parent.type != "binary_expression" or parent.child_by_field_name("operator").type != "==":
        return False
    other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == test else "left")
    if integer_value(strip_parens(other), source) != 0:
        return False
    condition, parent = parent, parent.parent  # up through `chunk > 0 && ...` to the `?:`
    while parent is not None and (parent.type == "parenthesized_expression" or (
            parent.type == "binary_expression" and parent.child_by_field_name("operator").type == "&&")):
        condition, parent = parent, parent.parent
    if parent is None or parent.type != "conditional_expression" or parent.child_by_field_name("condition") != condition:
        return False
    name, function = _receiver_name(parent, source), enclosing_function(expr)
    if name is None or function is None:
        return False
    seeded = 0
    root = source.tree.root_node
    body = source.data[function.start_byte:function.end_byte]
    for start, end in _word_spans(body, name.encode()):
        if start > 0 and body[start - 1] == 0x2E:  # `.`: a member of that name
            continue
        node = root.descendant_for_byte_range(function.start_byte + start, function.start_byte + end)
        if node is None or node.type in _COMMENTS:
            continue
        if _SET_OR_DECLARED.match(body, end):
            continue  # `v = ...` (this value or another), `T v;`
        callback = _constructed_from(body, start)
        if callback is None or not _CLOSE.match(body, end) or not _last_scan_argument(body, callback):
            return False  # read elsewhere: which lanes read it matters
        seeded += 1
    return seeded > 0


_SET_OR_DECLARED = re.compile(rb"\s*(?:=[^=]|;)")
_CLOSE = re.compile(rb"\s*[)}]")
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _word_spans(text: bytes, word: bytes):
    """(start, end) of each whole-word occurrence of `word` in `text`."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        if (at == 0 or text[at - 1] not in _NAME_BYTES) and (end == len(text) or text[end] not in _NAME_BYTES):
            yield at, end
        at = text.find(word, end)


def _constructed_from(body: bytes, at: int) -> bytes | None:
    """`op` when the text before `at` ends in `op(` or `op{` (an object made from what follows)."""
    i = at
    while i > 0 and body[i - 1] in b" \t\r\n":
        i -= 1
    if i == 0 or body[i - 1] not in b"({":
        return None
    i -= 1
    while i > 0 and body[i - 1] in b" \t\r\n":
        i -= 1
    end = i
    while i > 0 and body[i - 1] in _NAME_BYTES:
        i -= 1
    return body[i:end] or None


def _last_scan_argument(body: bytes, name: bytes) -> bool:
    """Is `name` the last argument of a scan with a prefix callback in `body`?"""
    for call in _SCAN_WITH_CALLBACK.finditer(body):
        depth, at, start = 1, call.end(), call.end()
        while at < len(body) and depth:
            depth += {40: 1, 41: -1}.get(body[at], 0)  # `(` and `)`
            at += 1
        arguments = body[start:at - 1]
        level, last = 0, 0
        for i, byte in enumerate(arguments):
            level += {40: 1, 41: -1, 60: 1, 62: -1}.get(byte, 0)  # also `<...>` of `Op<T>()`
            if byte == 44 and level == 0:  # `,`
                last = i + 1
        if arguments[last:].strip() == name:
            return True
    return False


def _loop_counter(loop, source: SourceFile):
    """(name, start node) of `for (int o = 16; ...)` or `for (o = 16; ...)`, else None."""
    init = loop.child_by_field_name("initializer")
    if init is None:
        return None
    if init.type == "declaration":
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            return None
        name, value = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
    elif init.type == "assignment_expression" and init.child_by_field_name("operator").type == "=":
        name, value = init.child_by_field_name("left"), init.child_by_field_name("right")
    else:
        return None
    if name is None or name.type != "identifier" or value is None:
        return None
    return source.node_text(name), strip_parens(value)


def _loop_step(loop, name: str, source: SourceFile) -> str | None:
    """"halve" for `o >>= 1`, `o /= 2`, `o = o / 2`; "double" for `o <<= 1`, `o *= 2`, `o = o * 2`."""
    return _step_of(strip_parens(loop.child_by_field_name("update")), name, source)


def _step_of(update, name: str, source: SourceFile) -> str | None:
    """`_loop_step` of one update expression."""
    if update is None or update.type != "assignment_expression":
        return None
    left, right = update.child_by_field_name("left"), strip_parens(update.child_by_field_name("right"))
    if left is None or source.node_text(left) != name or right is None:
        return None
    op = update.child_by_field_name("operator").type
    if op == "=" and right.type == "binary_expression" and source.node_text(right.child_by_field_name("left")) == name:
        op = right.child_by_field_name("operator").type + "="
        right = right.child_by_field_name("right")
    step = (op, integer_value(strip_parens(right), source))
    if step in ((">>=", 1), ("/=", 2)):
        return "halve"
    if step in (("<<=", 1), ("*=", 2)):
        return "double"
    return None


def _calls_named(node, source: SourceFile, words: re.Pattern, wanted,
                 methods: bool = False) -> list[tuple[object, str, list]]:
    """(call, callee, arguments) of the calls under `node` whose callee (`callee_name`) passes
    `wanted`, in source order. Found where `words`, text that every such callee holds, occurs
    rather than among all calls: a callee's name (`f`, `f<T>`, `ns::f`) is an identifier at
    most three levels under its call. With `methods`, a method call (`tile.shfl_up(v, 1)`)
    counts too, its callee written `.shfl_up`."""
    found = {}
    names = ("identifier", "field_identifier") if methods else ("identifier",)
    for hit in words.finditer(source.data, node.start_byte, node.end_byte):
        call = node.descendant_for_byte_range(hit.start(), hit.end())
        if call is None or call.type not in names:
            continue
        for _ in range(3):
            call = call.parent
            if call is None or call.type == "call_expression":
                break
        if (call is None or call.type != "call_expression" or call.id in found
                or call.start_byte < node.start_byte or call.end_byte > node.end_byte):
            continue
        callee = callee_name(call, source)
        if callee is None and methods:
            method = _group_method(call, source)
            callee = f".{method}" if method is not None else None
        if wanted(callee):
            found[call.id] = (call, callee, arguments(call))
    return sorted(found.values(), key=lambda f: (f[0].start_byte, -f[0].end_byte))


def shuffle_calls(source: SourceFile, root) -> list[tuple[object, str, list]]:
    """`_calls_named` for the shuffle calls under `root` (the main or the macro tree), once per tree."""
    return memoized(source, f"wavefront.shuffle_calls:{root.id}",
                    lambda s: _calls_named(root, s, _SHUFFLE_WORD, _is_shuffle, methods=True))


def masked_intrinsic_calls(source: SourceFile) -> list[tuple[object, str, list]]:
    """`_calls_named` for the calls of MASKED_INTRINSICS in the main tree, read as `cpp.calls`
    reads calls (with an argument list), once per file."""
    def find(s: SourceFile) -> list:
        found = _calls_named(s.tree.root_node, s, _MASKED_WORD, MASKED_INTRINSICS.__contains__)
        return [c for c in found if has_argument_list(c[0])]
    return memoized(source, "wavefront.masked_intrinsic_calls", find)


def _shuffle_loop_counter(loop, source: SourceFile) -> str | None:
    """The counter of a loop whose body shuffles by it over the whole warp, else None."""
    known = memoized(source, "wavefront.shuffle_loops", lambda s: {})  # asked again for each use in the loop
    if loop.id not in known:
        known[loop.id] = _find_shuffle_loop_counter(loop, source)
    return known[loop.id]


def _find_shuffle_loop_counter(loop, source: SourceFile) -> str | None:
    body = loop.child_by_field_name("body")
    shuffles = _calls_named(body, source, _SHUFFLE_WORD, _is_shuffle, methods=True) if body is not None else []
    counter = _loop_counter(loop, source) if shuffles else None
    if counter is None:
        return None
    name = counter[0]
    shuffles = [(callee, args) for _, callee, args in shuffles if any(_mentions(a, name, source) for a in args)]
    if not shuffles or any(_explicit_width(c, a, source) for c, a in shuffles):
        return None
    return name


def _shuffles_in_function(node, source: SourceFile) -> bool:
    """Does the function around `node` shuffle (a call or a group's method)?"""
    function = enclosing_function(node)
    return function is not None and any(
        enclosing_function(call) == function for call, _, _ in shuffle_calls(source, source.tree.root_node)
        if function.start_byte <= call.start_byte < function.end_byte)


def _xor_only(loop, counter: str, source: SourceFile) -> bool:
    """Do the loop's shuffles by `counter` all exchange by xor (`__shfl_xor_sync(m, v, i)`,
    `tile.shfl_xor(v, i)`)?"""
    body = loop.child_by_field_name("body")
    shuffles = [callee for _, callee, args in _calls_named(body, source, _SHUFFLE_WORD, _is_shuffle, methods=True)
                if any(_mentions(a, counter, source) for a in args)] if body is not None else []
    return bool(shuffles) and all("xor" in callee for callee in shuffles)


def _shuffles_a_group(loop, source: SourceFile) -> bool:
    """Does the loop shuffle through a cooperative group's methods (`tile.shfl_up(v, i)`)?"""
    body = loop.child_by_field_name("body")
    return body is not None and any(
        callee.startswith(".") for _, callee, _ in _calls_named(body, source, _SHUFFLE_WORD, _is_shuffle, methods=True))


def _in_warp_call_argument(node, source: SourceFile, ancestors=None) -> bool:
    """Is `node` part of an argument of a shuffle or ballot (`__shfl(v, (i + 1) % 32)`)?
    `ancestors`: those of `node`, innermost first, when the caller has them already."""
    for parent in ancestors_of(node) if ancestors is None else ancestors:
        if parent.type in ("compound_statement", "function_definition", "translation_unit"):
            return False
        if parent.type == "argument_list":
            callee = callee_name(parent.parent, source) or ""
            if _is_shuffle(callee) or callee.startswith(("__ballot", "__any", "__all")):
                return True
    return False


def _feeds_shuffle(node, source: SourceFile, ancestors: list | None = None) -> bool:
    """Does the value at `node` reach a shuffle or ballot: an argument, or the start or bound
    of a loop whose body shuffles by its counter? `ancestors`: as for `_in_warp_call_argument`."""
    if ancestors is None:
        ancestors = list(ancestors_of(node))
    if _in_warp_call_argument(node, source, ancestors):
        return True
    for child, parent in zip([node, *ancestors], ancestors):
        if parent.type in ("function_definition", "translation_unit"):
            break
        if (parent.type == "for_statement" and child != parent.child_by_field_name("body")
                and _shuffle_loop_counter(parent, source) is not None):
            return True
    return False


def _short(text: str, limit: int = 32) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _partial_warp_fix(fix: Fix) -> Fix:
    """`blockSize & 31` and `32 - rest` count the lanes of a block's last, partial warp, to
    build its mask (`0xffffffff >> (32 - rest)`). Counted up to 63, they overflow a mask that
    stays 32 bits (a shift by 32 or more): right only with the mask widened too, so unsafe."""
    if fix.applicability is not Applicability.SAFE:
        return fix
    return Fix.unsafe(fix.title + " (and build the partial-warp mask from it in 64 bits: `~0ull >> ...`)",
                      *fix.edits)


class _WarpSizeScan:
    """One file's W001 findings; per-function facts are computed once."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.findings: list[Finding] = []
        self._thread_vars: dict[int, frozenset[str]] = {}
        self.logical = _logical_warp.LogicalWarpNotes(source)  # 32s nothing observes: notes

    def thread_vars(self, node, in_macro: bool) -> frozenset[str]:
        function = None if in_macro else enclosing_function(node)
        if function is None:
            return frozenset()
        if function.id not in self._thread_vars:
            self._thread_vars[function.id] = thread_variables(function, self.source)
        return self._thread_vars[function.id]

    def report(self, node, message: str, fix: Fix, error: bool, in_macro: bool = False,
               also: tuple[Related, ...] = ()) -> None:
        """Report the 32 at `node` where the logical-warp model sees something observe the
        hardware width, with those observers related; where nothing does, a logical warp's
        note (`LogicalWarpNotes`, one per function)."""
        model = _logical_warp.warp_model(self.source)
        if read_only_off_rocm(node, self.source) or _logical_warp.unreached_on_rocm(node, self.source):
            return
        if not model.observes(node, in_macro):
            self.logical.add(node)
            return
        if fix.applicability is Applicability.SAFE and self.shuffles_in_groups:
            fix = Fix.unsafe(f"{fix.title} (this file also shuffles in groups of its own width: "
                             "a lane or warp index widened to `warpSize` no longer matches them)", *fix.edits)
        severity = Severity.ERROR if error else None
        found = at_node(self.source, node, message, fix, severity=severity,
                        related=also + model.related(node, in_macro))
        self.findings.append(replace(found, **_logical_warp.open_warps(model.observers(node, in_macro))))

    @functools.cached_property
    def shuffles_in_groups(self) -> bool:
        """Does the file shuffle with a width of its own (`__shfl_xor_sync(m, v, o, 32)`)? Its
        lane and warp arithmetic may then index those 32-lane groups: a block reduction that
        pairs `lane = tid & 31; wid = tid >> 5` with a width-32 warp reduction is
        right on AMD as written; `warpSize` in the block's arithmetic alone drops every second
        group's sum. Only the code's intent can widen both, so no fix of the file is safe."""
        source = self.source
        for call, name, args in shuffle_calls(source, source.tree.root_node):
            index = shuffle_width_index(name) if name.startswith("__shfl") else None
            if index is not None and len(args) > index and source.node_text(args[index]).strip() != "warpSize":
                return True
        return False

    # ---- `tid & 31`, `lane % 32`, `threadIdx.x / 32`, `tid >> 5`, `lane == 31` ------------
    def lane_arithmetic(self, root, in_macro: bool) -> None:
        source = self.source
        # Per function: the variables set from a reported `x & 31` / `x % 32` (lanes past a warp).
        partial_lanes: dict[int, set[str]] = {}
        for expr in operations_with_literal(source, root, frozenset(_LANE_ARITHMETIC.values())):
            op_node = expr.child_by_field_name("operator")
            op = op_node.type
            left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
            function = None if in_macro else enclosing_function(expr)
            if op == "-" and function is not None and integer_value(left, source) == 32 and \
                    strip_parens(right).type == "identifier" and \
                    source.node_text(strip_parens(right)) in partial_lanes.get(function.id, ()):
                # `32 - rest` where `rest = blockSize & 31`: the lanes missing from the last warp
                self.report(expr, f"`{_short(source.node_text(expr))}` counts the lanes a 32-lane warp is short; "
                                  "AMD wavefronts have 64.",
                            _partial_warp_fix(_warp_size_fix(expr, source, in_macro, "Replace `32` with `warpSize`",
                                                             Edit.replace(left, "warpSize"))), error=False, in_macro=in_macro)
                continue
            if op == "*" and not in_macro and self._row_of_32(expr, left, right):
                self.report(expr, f"`{_short(source.node_text(expr.parent))}` numbers lanes as if a warp were a "
                                  "row of 32 threads of the block; AMD wavefronts have 64.",
                            Fix.advice(_ROW_ADVICE), error=False)
                continue
            if op not in _LANE_ARITHMETIC:
                continue
            literal, operand = right, left
            if integer_value(right, source) != _LANE_ARITHMETIC[op] and op in ("&", "==", "!="):
                literal, operand = left, right
            if integer_value(literal, source) != _LANE_ARITHMETIC[op]:
                continue
            if not self._is_lane_arithmetic(expr, op, operand, in_macro):
                continue
            if op in ("%", "&") and not in_macro and seeds_scan_callback(expr, source):
                continue
            written = f"{op} {source.node_text(literal)}"
            shown = source.node_text(expr)
            receiver = _receiver_name(expr, source)
            if op in ("&", "%") and function is not None and receiver is not None:
                partial_lanes.setdefault(function.id, set()).add(receiver)
            self.report(
                expr,
                f"`{shown if len(shown) <= 32 else written}` assumes 32-lane warps; AMD wavefronts have 64.",
                self._lane_arithmetic_fix(expr, op_node, literal, operand, written, in_macro),
                error=_feeds_shuffle(expr, source), in_macro=in_macro,
            )

    def _row_of_32(self, product, left, right) -> bool:
        """`threadIdx.y * 32 + threadIdx.x`: a flat id in a block whose rows of 32 threads are
        taken for warps (`dim3(32, N)`)."""
        source = self.source
        literal, row = (right, left) if integer_value(right, source) == 32 else (left, right)
        parent = product.parent
        if integer_value(literal, source) != 32 or parent is None or parent.type != "binary_expression" or \
                parent.child_by_field_name("operator").type != "+":
            return False
        other = parent.child_by_field_name("right" if parent.child_by_field_name("left") == product else "left")
        return _ROW_INDEX.fullmatch(source.node_text(strip_parens(row))) is not None and \
            _COLUMN_INDEX.fullmatch(source.node_text(strip_parens(other))) is not None

    def _is_lane_arithmetic(self, expr, op: str, operand, in_macro: bool) -> bool:
        source = self.source
        if op in ("==", "!="):  # `lane == 31`: the last lane of a 32-lane warp
            operand = strip_parens(operand)
            return (operand.type == "identifier" and _index_kind(source.node_text(operand)) == "lane") or (
                operand.type == "call_expression" and callee_name(operand, source) == "__lane_id")
        if _is_thread_expr(operand, source, self.thread_vars(expr, in_macro)):
            return True
        operand = strip_parens(operand)
        if op in ("/", ">>") and operand.type == "identifier" and "width" in _words(source.node_text(operand)) \
                and not in_macro and _shuffles_in_function(expr, source):
            return True  # `reduceWidth >> 5` beside shuffles: a width in lanes, counted in warps
        if op == "&" and operand.type == "identifier" and _names_block_size(source.node_text(operand)) and \
                _code_context(expr, source, in_macro) != "constant":
            return True  # `blockSize & 31`: the threads past the last full warp (not a `static_assert`)
        receiver = _receiver_name(expr, source)
        if receiver is not None and _index_kind(receiver) in ("lane", "warp"):
            return True  # `int lane = i % 32;`, `warp_id = gid >> 5;`
        return _in_warp_call_argument(expr, source)  # `__shfl(v, (i + 1) % 32)`

    def _lane_arithmetic_fix(self, expr, op_node, literal, operand, written: str, in_macro: bool) -> Fix:
        source = self.source
        op = op_node.type
        if op == "&":
            fix = _warp_size_fix(expr, source, in_macro, f"Replace `{written}` with `& (warpSize - 1)`",
                                 Edit.replace(literal, "(warpSize - 1)"))
            operand = strip_parens(operand)
            if operand.type == "identifier" and _names_block_size(source.node_text(operand)):
                return _partial_warp_fix(fix)  # `blockSize & 31`: the threads past the last full warp
            return fix
        if op in ("==", "!="):
            return _warp_size_fix(expr, source, in_macro, f"Replace `{written}` with `{op} warpSize - 1`",
                                  Edit.replace(literal, "warpSize - 1"))
        if op in ("%", "/"):
            return _warp_size_fix(expr, source, in_macro, f"Replace `{written}` with `{op} warpSize`",
                                  Edit.replace(literal, "warpSize"))
        # `x >> 5` -> `x / warpSize`: `/` binds tighter than `>>`, so `a + b >> 5` needs `(a + b)`.
        edits = [Edit.replace(op_node, "/"), Edit.replace(literal, "warpSize")]
        if _binds_looser_than_division(operand):
            edits += [Edit.insert(operand.start_byte, "("), Edit.insert(operand.end_byte, ")")]
        return _warp_size_fix(expr, source, in_macro, f"Replace `{written}` with `/ warpSize`", *edits)

    # ---- `constexpr int kLanes = 32;` used as the lane count: `tid % kLanes`, `tid / kLanes` ---
    def named_lane_constants(self) -> None:
        """A constant of this file that holds 32 (31, 5) under a name that does not say warp
        (`kLanes`, `ROW_THREADS`; warp-size names are followed through the project by
        `wavefront_size`), used as lane arithmetic over a thread index where the logical-warp
        model sees the hardware width observed: reported once, where the 32 is written, with
        those uses and their observers related."""
        from portlint.checks.wavefront_size import _warp_constant_kind
        source = self.source
        constants = open_constants(source)
        model = _logical_warp.warp_model(source)
        uses: dict[int, tuple[object, list]] = {}  # definition id -> (definition, [use])
        for expr in queries.nodes(CUDA, _NAMED_DIVISOR, source.tree.root_node, "expr"):
            op = expr.child_by_field_name("operator").type
            name = expr.child_by_field_name("right")
            if _warp_constant_kind(source.node_text(name)) is not None:
                continue
            read: list = []
            if constants.value(name, read) != _LANE_ARITHMETIC.get(op) or len(read) != 1:
                continue
            function = enclosing_function(expr)
            if function is None or not _is_thread_expr(expr.child_by_field_name("left"), source,
                                                       self.thread_vars(expr, False)):
                continue
            if not model.observes(expr) or read_only_off_rocm(expr, source):
                continue
            uses.setdefault(read[0].id, (read[0], []))[1].append(expr)
        for definition, found in uses.values():
            name = definition.child_by_field_name("name") or definition
            for node in queries.nodes(CUDA, "(init_declarator declarator: (identifier) @n)", definition, "n")[:1]:
                name = node
            related = tuple(Related(source.location(u.start_byte, u.end_byte),
                                    f"`{_short(source.node_text(u))}` takes lanes or warps by it here") for u in found[:5])
            self.findings.append(at_node(
                source, name, f"`{_short(source.node_text(name))}` is 32, used as the lanes of a warp; "
                              "AMD wavefronts have 64.", Fix.advice(CONSTANT_ADVICE),
                related=related + model.related(found[0])))

    # ---- shuffle loops from 16, up to 32; `__shfl(v, 31)`; unrolled chains ----------------
    def shuffle_loops(self, root, in_macro: bool) -> None:
        source = self.source
        for loop in queries.nodes(CUDA, "(for_statement) @loop", root, "loop"):
            name = _shuffle_loop_counter(loop, source)
            if name is None:
                continue
            start = _loop_counter(loop, source)[1]
            step = _loop_step(loop, name, source)
            if step == "halve" and integer_value(start, source) == 16 and not in_macro and \
                    enclosing_warp_guard(loop, source, self.thread_vars(loop, False)) is not None:
                continue  # the last steps of a block reduction on its first 32 threads: `last_warp_reductions`'
            if step == "halve" and integer_value(start, source) == 16:
                self.report(start, "Shuffle loop starts at `16`, half a 32-lane warp; AMD wavefronts have 64.",
                            _warp_size_fix(start, source, in_macro, "Start the loop at `warpSize / 2`",
                                           Edit.replace(start, "warpSize / 2")), error=True, in_macro=in_macro)
            elif step == "double" and integer_value(start, source) == 1:
                bound = _loop_bound(loop, name, source)
                if bound is not None and _xor_only(loop, name, source):
                    # `for (i = 1; i < 32; i <<= 1) v = f(v, __shfl_xor(v, i))`: a lane's partner
                    # differs in a bit below 32, in its own 32 lanes on any width: a transform
                    # over groups of 32 that a 64-lane wavefront computes twice, alike.
                    self.logical.add(bound[0])
                elif bound is not None:
                    literal, replacement = bound
                    fix = _warp_size_fix(literal, source, in_macro, f"Replace `{source.node_text(literal)}` "
                                         f"with `{replacement}`", Edit.replace(literal, replacement))
                    if fix.applicability is Applicability.SAFE and _shuffles_a_group(loop, source):
                        # `tile.shfl_up(v, i)`: the tile's own size bounds it, and it may stay 32 wide.
                        fix = Fix.unsafe(fix.title + " (and size the tile by the wavefront)", *fix.edits)
                    self.report(literal, f"Shuffle loop stops at `{source.node_text(literal)}`, "
                                         "sized for 32-lane warps; AMD wavefronts have 64.", fix, error=True,
                                in_macro=in_macro)

    def shuffle_lanes(self, root, in_macro: bool) -> None:
        source = self.source
        chains: dict[object, list] = {}
        for call, name, args in shuffle_calls(source, root):
            if not name.startswith("__shfl"):
                continue  # wrappers: their argument order is unknown
            lane_index = 2 if name.endswith("_sync") else 1
            if len(args) <= lane_index or _explicit_width(name, args, source):
                continue
            lane = strip_parens(args[lane_index])
            value = integer_value(lane, source)
            if name in ("__shfl", "__shfl_sync") and value == 31:
                self.report(lane, "Lane `31` is the last lane of a 32-lane warp; AMD wavefronts have 64.",
                            _warp_size_fix(lane, source, in_macro, "Replace `31` with `warpSize - 1`",
                                           Edit.replace(lane, "warpSize - 1")), error=True, in_macro=in_macro)
            elif name.startswith(("__shfl_down", "__shfl_xor")) and value is not None:
                function = None if in_macro else enclosing_function(call)
                chains.setdefault(function.id if function is not None else None, []).append((value, lane))
        # An unrolled reduction `16, 8, 4, 2, 1` never combines lanes 32-63.
        for steps in chains.values():
            offsets = {value for value, _ in steps}
            if {16, 8} <= offsets and 32 not in offsets:
                for value, lane in steps:
                    if value == 16:
                        self.report(lane, "Unrolled shuffles start at offset `16`; lanes 32–63 of a "
                                          "wavefront never combine.",
                                    Fix.advice(LOOP_ADVICE), error=True, in_macro=in_macro)

    # ---- `cub::WarpReduce<T, 32>` ----------------------------------------------------------
    def cub_logical_warps(self) -> None:
        source = self.source
        for name, template_args in cub_warp_templates(source):
            index = CUB_LOGICAL_WARP_ARGUMENT[name]
            args = [a for a in template_args.named_children if a.type != "comment"]
            if len(args) <= index or integer_value(args[index], source) != 32:
                continue
            literal = args[index]
            template = template_args.parent
            message = f"`{_short(source.node_text(template), 40)}` makes 32-lane logical warps; AMD wavefronts have 64."
            if index == len(args) - 1:
                dropped = Edit(args[index - 1].end_byte, literal.end_byte, "")  # `, 32`
                rewritten = (source.data[template.start_byte:dropped.start]
                             + source.data[dropped.end:template.end_byte]).decode("utf-8", errors="replace")
                fix = Fix.unsafe(f"Use the hardware warp as the logical warp: `{_short(rewritten, 40)}`", dropped)
            else:
                fix = Fix.advice("Pass a per-platform logical warp size instead of `32` "
                                 "(64 under `#if defined(__GFX8__) || defined(__GFX9__)`)")
            self.report(literal, message, fix, error=False)


    # ---- the unrolled last-warp reduction -------------------------------------------------
    def last_warp_reductions(self, root) -> None:
        """A block reduction whose last steps run on "the warp" of 32 threads: the tree loop in
        shared memory stops at 32 (`s > 32`), `if (tid < 32)` (or `thread_rank() < 32`) takes the
        warp, and it folds `sdata[tid + 32]` before shuffling or warp-synchronous (`volatile`)
        steps. A 64-lane wavefront needs the tree to stop at 64 and all 64 lanes in the warp part.
        A guard whose body only folds between block barriers assumes no warp: silent."""
        source = self.source
        # Per function, the places that size the last steps by 32: the `tid < 32` that takes
        # the warp, the `a[tid + 32]` folds, the tree's `s > 32`. One root cause: one finding,
        # at the guard (else the tree's stop), the others related.
        sites: dict[int, list[tuple[str, object, str]]] = {}
        # The literals of `lane_arithmetic` (found once per file, just before), of which these
        # shapes use 31 and 32: no search of the text of its own.
        for expr in operations_with_literal(source, root, frozenset(_LANE_ARITHMETIC.values())):
            op = expr.child_by_field_name("operator").type
            if op not in ("<", "<=", "+", ">", ">="):
                continue
            left, right = strip_parens(expr.child_by_field_name("left")), strip_parens(expr.child_by_field_name("right"))
            value = integer_value(right, source)
            function = enclosing_function(expr)
            if function is None:
                continue
            thread_vars = self.thread_vars(expr, False)
            found = sites.setdefault(function.id, [])
            if (op, value) in (("<", 32), ("<=", 31)) and _is_thread_expr(left, source, thread_vars):
                body = _guarded_body(expr)
                if body is not None and _warp_synchronous(body, function, source):
                    found.append(("guard", expr, f"`{_short(source.node_text(expr))}` takes one 32-lane warp for "
                                                 "the last reduction steps; AMD wavefronts have 64."))
            elif op == "+" and value == 32 and _is_thread_expr(left, source, thread_vars) and _is_subscript_index(expr):
                guard = enclosing_warp_guard(expr, source, thread_vars)
                array = strip_parens(expr.parent.parent.child_by_field_name("argument"))
                if guard is not None or (array is not None and _is_volatile(array, function, source)):
                    found.append(("fold", expr, f"`{_short(source.node_text(expr.parent.parent))}` folds the value "
                                                "32 threads up, as if the last warp had 32 lanes; AMD wavefronts have 64."))
            elif op in (">", ">=") and value == 32 and left.type == "identifier":
                loop = _tree_loop(expr, source.node_text(left), source, thread_vars)
                if loop is not None and _has_warp_phase(function, source):
                    found.append(("stop", expr, f"The shared-memory tree stops at `{_short(source.node_text(expr))}`, "
                                                "leaving one 32-lane warp; AMD wavefronts have 64."))
        fix = Fix.advice(_LAST_WARP_ADVICE)
        model = _logical_warp.warp_model(source)
        for found in sites.values():
            if not found:
                continue
            if not model.observes(found[0][1]):
                for _, node, message in found:  # each a place of the function's logical-warp note
                    self.report(node, message, fix, False)
                continue
            primary = next((s for s in found if s[0] == "guard"), None) or \
                next((s for s in found if s[0] == "stop"), None) or found[0]
            also = tuple(Related(source.location(node.start_byte, node.end_byte), _LAST_WARP_RELATED[kind])
                         for kind, node, _ in found if node is not primary[1])
            self.report(primary[1], primary[2], fix, False, also=also)


_LAST_WARP_RELATED = {
    "guard": "the last steps take the block's first 32 threads here",
    "fold": "and fold the value 32 threads up here",
    "stop": "the tree leaves 32 lanes' worth of values here",
}


# A block's row and column of threads, written out (`threadIdx.y`, `hipThreadIdx_x`).
_ROW_INDEX = re.compile(r"threadIdx\s*\.\s*y|hipThreadIdx_y")
_COLUMN_INDEX = re.compile(r"threadIdx\s*\.\s*x|hipThreadIdx_x")
_ROW_ADVICE = ("Take lanes from the flat id: `flat % warpSize` and `flat / warpSize`, or keep rows of 32 "
               "and read each row's votes from its own 32 bits of the 64-bit ballot")

# `x % NAME`, `x / NAME`, `x & NAME`, `x >> NAME` (a named lane count, see `named_lane_constants`).
_NAMED_DIVISOR = '(binary_expression operator: ["%" "/" "&" ">>"] right: (identifier)) @expr'

_LAST_WARP_ADVICE = ("Size the warp part by `warpSize` throughout: stop the tree at `s > warpSize`, take "
                     "`tid < warpSize`, fold `tid + warpSize` (only where the tree left 2 * warpSize values) "
                     "and shuffle from `warpSize / 2`")


def _guarded_body(comparison):
    """The statement an `if` runs when `comparison` (its condition, or a `&&` operand of it) holds."""
    child, node = comparison, comparison.parent
    while node is not None and (node.type == "parenthesized_expression" or (
            node.type == "binary_expression" and node.child_by_field_name("operator").type == "&&")):
        child, node = node, node.parent
    if node is not None and node.type == "condition_clause":
        child, node = node, node.parent
    if node is None or node.type != "if_statement" or node.child_by_field_name("condition") != child:
        return None
    return node.child_by_field_name("consequence")


def _warp_synchronous(body, function, source: SourceFile) -> bool:
    """Does `body` run warp-synchronous steps: shuffles, a cooperative group's warp operations,
    or reads of a `volatile` array with no barrier between them?"""
    text = source.data[body.start_byte:body.end_byte]
    if _SHUFFLE_WORD.search(text) or _WARP_CALL.search(text) or b"reduce(" in text:
        return True
    return any(_is_volatile(strip_parens(n.child_by_field_name("argument")), function, source)
               for n in queries.nodes(CUDA, "(subscript_expression) @s", body, "s"))


def _is_subscript_index(expr) -> bool:
    parent = expr.parent
    return (parent is not None and parent.type == "subscript_argument_list" and parent.parent is not None
            and parent.parent.type == "subscript_expression")


def enclosing_warp_guard(node, source: SourceFile, thread_vars, holds=None):
    """The `tid < 32` (or `tid <= 31`: the block's first 32 threads) of an `if` around `node`
    whose body `holds(body, function)` (default: is warp-synchronous), else None."""
    if holds is None:
        def holds(body, function):
            return _warp_synchronous(body, function, source)
    function = enclosing_function(node)
    if function is not None and not _tests_first_32(function, source):
        return None
    for parent in ancestors_of(node):
        if parent.type == "function_definition":
            return None
        if parent.type != "if_statement":
            continue
        condition = parent.child_by_field_name("condition")
        for comparison in queries.nodes(CUDA, "(binary_expression) @b", condition, "b") if condition else ():
            op = comparison.child_by_field_name("operator").type
            value = integer_value(strip_parens(comparison.child_by_field_name("right")), source)
            if ((op, value) in (("<", 32), ("<=", 31))
                    and _is_thread_expr(comparison.child_by_field_name("left"), source, thread_vars)
                    and holds(parent.child_by_field_name("consequence"), function)):
                return comparison
    return None


def _is_volatile(array, function, source: SourceFile) -> bool:
    """Is the array (an identifier) declared `volatile` in `function` (as a parameter or local)?"""
    if array is None or array.type != "identifier":
        return False
    name = source.node_text(array)
    declaration = _declaration_of(name, array, queries.nodes(CUDA, _DECLARATIONS, function, "declaration"), source)
    return declaration is not None and any(
        c.type == "type_qualifier" and source.node_text(c) == "volatile" for c in declaration.node.children)


def _tree_loop(condition, counter: str, source: SourceFile, thread_vars):
    """The loop whose condition is `condition` when it halves `counter` and reads `a[tid + counter]`."""
    node = condition.parent
    while node is not None and node.type in ("parenthesized_expression", "condition_clause"):
        node = node.parent
    if node is None or node.type not in ("for_statement", "while_statement"):
        return None
    body = node.child_by_field_name("body")
    if body is None:
        return None
    halves = _loop_step(node, counter, source) == "halve" if node.type == "for_statement" else False
    if not halves:  # `while (s >= 32) { ...; s >>= 1; }`
        halves = any(_step_of(update, counter, source) == "halve"
                     for update in queries.nodes(CUDA, "(assignment_expression) @a", body, "a"))
    if not halves:
        return None
    for index in queries.nodes(CUDA, "(subscript_argument_list (binary_expression) @i)", body, "i"):
        if index.child_by_field_name("operator").type != "+":
            continue
        parts = [strip_parens(index.child_by_field_name(f)) for f in ("left", "right")]
        if any(p.type == "identifier" and source.node_text(p) == counter for p in parts) and any(
                _is_thread_expr(p, source, thread_vars) for p in parts):
            return node
    return None


def _has_warp_phase(function, source: SourceFile) -> bool:
    """Does the function finish its reduction per warp (shuffles, tiles, warp-synchronous steps)?"""
    text = source.data[function.start_byte:function.end_byte]
    return bool(_SHUFFLE_WORD.search(text) or _WARP_CALL.search(text)) or b"tiled_partition" in text or \
        b"volatile" in text


# A call of a function named for warps: `warpReduce(sdata, tid)`, `__syncwarp()`, `last_warp_sum<T>(...)`.
_WARP_CALL = re.compile(rb"(?i)warp\w{0,64}+\s*+[<(]")


# `WarpReduce<T, 32>` is a template type; `WarpReduce<T, 32>(...)` may read as a template function.
class AncestorWalk:
    """The ancestors of nodes under `root`, asked for in source order, from one tree cursor:
    each `Node.parent` call descends from the root anew, the cursor only from the nearest
    ancestor that the previous node shares."""

    def __init__(self, root) -> None:
        self._root = root
        self._cursor = root.walk()
        self._path = [root]  # the cursor's node and its ancestors, outermost first

    def of(self, node) -> list:
        """The ancestors of `node`, innermost first."""
        cursor, path = self._cursor, self._path
        while len(path) > 1 and not (path[-1].start_byte <= node.start_byte and node.end_byte <= path[-1].end_byte):
            cursor.goto_parent()
            path.pop()
        while path[-1].id != node.id:
            if cursor.goto_first_child_for_byte(node.start_byte) is None:  # not found by its start
                self.__init__(self._root)
                return list(ancestors_of(node))
            path.append(cursor.node)
        return path[-2::-1]


def _binds_looser_than_division(node) -> bool:
    node_type = node.type
    if node_type == "binary_expression":
        return node.child_by_field_name("operator").type not in ("*", "/", "%")
    return node_type in ("conditional_expression", "assignment_expression", "comma_expression")


def _loop_bound(loop, name: str, source: SourceFile):
    """(literal, replacement) for `o < 32` / `o <= 16` (either way round) in a doubling loop."""
    condition = strip_parens(loop.child_by_field_name("condition"))
    if condition is None or condition.type != "binary_expression":
        return None
    op = condition.child_by_field_name("operator").type
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    if source.node_text(right) == name and op in flipped:
        left, right, op = right, left, flipped[op]
    if source.node_text(left) != name:
        return None
    value = integer_value(strip_parens(right), source)
    if (op, value) == ("<", 32):
        return strip_parens(right), "warpSize"
    if (op, value) == ("<=", 16):
        return strip_parens(right), "warpSize / 2"
    return None


# Lane arithmetic needs a 31 or 32 or a `>> 5` (`_LANE_ARITHMETIC`) and, on its other side or
# as its receiver, a thread expression or a name that `_index_kind` reads as a lane or warp
# index, or else a shuffle or ballot it is an argument of (`_is_lane_arithmetic`). Shuffle
# loops and lanes need a shuffle; cub's logical warps a `Warp...<..., 32>`. And the check reads
# only files with one of `_W001_WORDS`.
_SHIFT_BY_5 = re.compile(
    f">>(?:{_BLANK})*+(?:{_literal_pattern(frozenset({5})).pattern.decode()}{_OR_COMMENT})".encode())
_W001_TRIGGER = all_of(nocase(*_W001_WORDS), any_of(
    nocase(b"shfl"),
    # Literal and shift patterns stay plain searches: the tokens they would need (`32`, `0x`,
    # `>>`) are so frequent that the vocabulary's pass cost more than the searches they spare.
    all_of(any_of(_literal_pattern(frozenset({31, 32})), _SHIFT_BY_5),
           any_of(b"__ballot", b"__any", b"__all", _word_start_trigger("warp", "wid"),
                  THREAD_EXPRESSION_BYTES)),
    all_of(b"Warp", _literal_pattern(frozenset({32}))),
))
# `blockSize & 31` (and the `32 - rest` after it) needs no thread word, only a block-size name.
_W001_BLOCK_SIZE_TRIGGER = all_of(nocase(b"block"), _literal_pattern(frozenset({31, 32})))


@needs(_W001_TRIGGER, _W001_BLOCK_SIZE_TRIGGER)
def check_hardcoded_warp_size(source: SourceFile) -> list[Finding]:
    # Every shape involves a warp, lane, thread, shuffle or block word (`tid`, `threadIdx`, ...).
    lowered = source.data.lower()
    words = {word for word in _W001_WORDS if word in lowered}
    if not words and b"block" not in lowered:
        return []
    # Warp-size constants (`#define WARP_SIZE 32`) are judged with their uses in every file:
    # `wavefront_size.check_warp_size_through_project`.
    scan = _WarpSizeScan(source)
    for root, in_macro in _roots(source):
        scan.lane_arithmetic(root, in_macro)
        if not in_macro:
            scan.last_warp_reductions(root)
        if b"shfl" in words:
            scan.shuffle_loops(root, in_macro)
            scan.shuffle_lanes(root, in_macro)
    if b"Warp" in source.data:
        scan.cub_logical_warps()
    scan.named_lane_constants()
    return _one_logical_warp(scan.findings, source) + scan.logical.findings()


# A warp size spelled as a name (`WARP_SIZE`, `kWarpSize`, a template's `WarpSize`): 32 wherever it is used.
_WARP_SIZE_NAME = re.compile(rb"\b\w*(?:[wW][aA][rR][pP]_?[sS][iI][zZ][eE])\w*\b")


# `thread_block_tile<32>`, `tiled_partition<32>(block)`: lanes in groups of their own size
# (a softmax that reduces with `cg::reduce` over such a tile beside `warp_id = tid / 32`).
_FIXED_TILE = re.compile(rb"\b(?:thread_block_tile|tiled_partition)\s*<\s*(?!warpSize\b)\w")
# A cooperative group's own shuffle (`g.shfl_xor(v, o)`): the group's size is its creator's,
# often a caller's `thread_block_tile<32>` out of view (a row reduction through a template's
# `Group`, whose `width >> 5` must then stay counted in 32-lane groups).
_GROUP_SHUFFLE = re.compile(rb"\.\s*shfl(?:_up|_down|_xor)?\s*\(")
# Operations across a warp's lanes: without one, `tid / 32` and `tid % 32` only lay out data
# (a GEMM's 8 x 32 tile loads, right on any warp size; `warpSize` there breaks the layout).
_CROSS_LANE = re.compile(rb"__shfl|__ballot|__any|__all|__uni_sync|__activemask|__match_|__syncwarp|__reduce_"
                         rb"|__lane_id|\.shfl|\.ballot|\.any\(|\.all\(|\breduce\s*\(|wmma::|Warp(?:Reduce|Scan)")
# `#define W 32`, `constexpr int kWarp = 32;`, `template <int W = 32>`: a name for 32.
_NAMED_32 = re.compile(rb"#\s*define\s+(\w+)\s+\(?32\)?\s*$|\b(\w+)\s*=\s*32\s*[;,>]", re.M)


def _named_32(data: bytes) -> bool:
    """Does the file give 32 a name and use it (an index or a size written with it stays 32)?"""
    for m in _NAMED_32.finditer(data):
        name = m.group(1) or m.group(2)
        if len(re.findall(rb"\b" + re.escape(name) + rb"\b", data)) > 1:
            return True
    return False


def _one_logical_warp(findings: list[Finding], source: SourceFile) -> list[Finding]:
    """W001's fixes turn a 32-lane logical warp into the 64-lane wavefront: a reduction's reach
    and the lane and warp indices that read its result must change together, or lanes 32-63
    are lost or counted twice (a warp reduction from `warpSize / 2` beside a block
    reduction indexing by `WARP_SIZE`). So a fix is safe only where the file shows the
    whole warp: not in a header (its includers keep their own indices), not beside 32-lane
    code here that gets no fix, cooperative-groups tiles of a fixed size or shuffles through a
    group (its size is its creator's), nor beside a warp
    size spelled as a name (32 wherever used); and in a file where nothing crosses lanes the
    indices only lay out data."""
    if not any(f.fix.applicability is Applicability.SAFE for f in findings):
        return findings
    doubt = None
    if os.path.splitext(source.path)[1].lower() in HEADER_SUFFIXES:
        doubt = "a header: the code that includes it keeps its own lane and warp indices"
    elif any(not f.fix.is_applicable for f in findings):
        doubt = "other 32-lane code in this file gets no fix"
    elif _FIXED_TILE.search(source.data):
        doubt = "this file works in cooperative-groups tiles of a fixed size"
    elif _GROUP_SHUFFLE.search(source.data):
        doubt = "this file shuffles through cooperative groups, whose size may stay 32"
    elif not _CROSS_LANE.search(source.data):
        doubt = "nothing here crosses lanes: its lane and warp indices lay out data in groups of 32"
    elif helpers := _logical_warp.warp_model(source).helpers_out_of_view():
        doubt = f"`{helpers[0]}` is out of view, and how many lanes it reduces over decides the indices"
    elif any(m.group() != b"warpSize" for m in _WARP_SIZE_NAME.finditer(source.data)) or _named_32(source.data):
        doubt = "a warp size spelled as a name here stays 32"
    if doubt is None:
        return findings
    return [replace(f, fix=Fix.unsafe(f"{f.fix.title} (with the rest of the warp's code: {doubt})", *f.fix.edits))
            if f.fix.applicability is Applicability.SAFE else f for f in findings]


# =========================================================================================
# W003 truncated-lane-mask

# What HIP's `__ballot` returns. Not `uint64_t`: that is `unsigned long` on Linux, and
# HIP's `__ffsll(unsigned long long)` / `__ffsll(long long)` overloads make it ambiguous.
MASK_TYPE = "unsigned long long"
# Intrinsics whose result is a lane mask (64-bit on HIP, 32-bit on CUDA).
MASK_INTRINSICS = frozenset({
    "__ballot", "__ballot_sync", "__activemask", "__match_any", "__match_all",
    "__match_any_sync", "__match_all_sync",
    "__lanemask_lt", "__lanemask_le", "__lanemask_gt", "__lanemask_ge", "__lanemask_eq",
})


@dataclass(unsafe_hash=True)
class _BitFunction:
    """A 32-bit bit function and its 64-bit version."""

    wide: str
    verb: str
    # Does the rename give CUDA's result for every 32-bit mask? `__popc` of a negative `int`
    # does not: the sign extends into 32 more set bits.
    same_on_cuda: str  # "always", "unsigned" (mask not held in a signed int) or "never"
    note: str = ""


BIT_FUNCTIONS = {
    "__popc": _BitFunction("__popcll", "counts", "unsigned"),
    "__ffs": _BitFunction("__ffsll", "searches", "always"),
    "__clz": _BitFunction("__clzll", "scans", "never",
                          " (it counts from bit 63: `31 - __clz(m)` becomes `63 - __clzll(m)`)"),
    "__brev": _BitFunction("__brevll", "reverses", "never", " (lane 0 moves to bit 63)"),
}
_BIT_FUNCTION_NAMES = re.compile("|".join(BIT_FUNCTIONS).encode())
# Cooperative-groups methods whose result is a lane mask (`tile.ballot(p)`, `active.match_any(v)`).
GROUP_MASK_METHODS = frozenset({"ballot", "match_any", "match_all"})
# What every name in MASK_INTRINSICS starts with, and what a group's mask method call holds.
_MASK_PREFIXES = (b"__ballot", b"__activemask", b"__match_a", b"__lanemask", b".ballot", b".match_a")


_DECLARING_STATEMENTS = ("declaration", "parameter_declaration", "expression_statement")


def _narrow_tile(call, source: SourceFile) -> bool:
    """Is the group of `tile.ballot(p)` a `thread_block_tile` of 32 lanes or fewer? HIP
    returns its votes relative to the tile (`adjust_mask`), so 32 bits hold them all."""
    return _logical_warp.warp_model(source).narrow_group(call, warp_size_names=False)


def tile_size(name, source: SourceFile):
    """The size node of `tiled_partition<N>(g)`, `thread_block_tile<N>` (also with its parent
    group type, `thread_block_tile<N, cg::thread_block>`), `tiled_partition(g, N)`, and of
    `thread_block_tile<N> t = ...` in a function body (parsed as `a < N > b`)."""
    parent = name.parent
    if parent is not None and parent.type in ("template_function", "template_type"):
        args = [a for a in parent.child_by_field_name("arguments").named_children if a.type != "comment"]
        with_parent = parent.type == "template_type" and len(args) == 2 and args[1].type == "type_descriptor"
        return args[0] if len(args) == 1 or with_parent else None
    top = name
    while top.parent is not None and top.parent.type == "qualified_identifier":
        top = top.parent
    outer = top.parent
    if outer is None:
        return None
    if outer.type == "call_expression" and outer.child_by_field_name("function") == top:
        args = arguments(outer)
        return args[1] if len(args) == 2 else None
    if (outer.type == "binary_expression" and outer.child_by_field_name("left") == top
            and outer.child_by_field_name("operator").type == "<"):
        return outer.child_by_field_name("right")
    return None


def _group_method(call, source: SourceFile) -> str | None:
    """`ballot` for `tile.ballot(p)` / `g->ballot(p)`, else None."""
    fn = call.child_by_field_name("function")
    field = fn.child_by_field_name("field") if fn is not None and fn.type == "field_expression" else None
    return source.node_text(field) if field is not None else None
_STORES = """
[(init_declarator declarator: (_) @target value: (_) @value)
 (assignment_expression left: (_) @target right: (_) @value)
 (return_statement (_) @value)] @store
"""
_DECLARATIONS = "[(declaration) (parameter_declaration)] @declaration"


def _is_mask_argument(name, source: SourceFile) -> bool:
    """Is the identifier `name` the mask (first argument) of a call of MASKED_INTRINSICS?"""
    node, parent = name, name.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None or parent.type != "argument_list" or parent.parent is None:
        return False
    args = [a for a in parent.named_children if a.type != "comment"]
    return bool(args) and args[0] == node and callee_name(parent.parent, source) in MASKED_INTRINSICS


@bounded(False)
def _lane_amount(node, source: SourceFile) -> bool:
    """A shift amount that is a lane index: `lane`, `laneId + 1`, `__lane_id()`,
    `threadIdx.x % warpSize`, `tid & 31`."""
    node = strip_parens(node)
    if node is None:
        return False
    if node.type == "identifier":
        return _index_kind(source.node_text(node)) == "lane"
    if node.type == "call_expression":
        return callee_name(node, source) == "__lane_id"
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator").type
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-"):
            return _lane_amount(left, source) and right.type == "number_literal"
        if op in ("%", "&"):
            divisor = source.node_text(strip_parens(right)).replace(" ", "")
            names_warp = (divisor in ("warpSize", "warpSize-1", "(warpSize-1)")
                          or integer_value(right, source) in (31, 32))
            return names_warp and _is_thread_expr(left, source)
    return False


def _narrow_one(node, source: SourceFile) -> str | None:
    """`~0ull` or `1ull` for a 32-bit shifted literal (`1`, `1u`, `-1`, `~0u`, `0xffffffff`), else None."""
    node = strip_parens(node)
    if node.type == "unary_expression" and node.child_by_field_name("operator").type == "~":
        node = strip_parens(node.child_by_field_name("argument"))
        return "~0ull" if integer_value(node, source) == 0 and "l" not in integer_suffix(node, source) else None
    if node.type != "number_literal":
        return None
    text = source.node_text(node)
    negative = text.startswith("-")
    body = text.lstrip("-")
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uU]?)", body)  # a suffix with `l` is already wide
    if not m:
        return None
    digits = m.group(1)
    try:  # `01` is octal in C (and `int("01", 0)` refuses it); `09` is no number at all
        value = int(digits, 8) if digits[0] == "0" and digits.isdigit() else int(digits, 0)
    except ValueError:
        return None
    if negative and value == 1:
        return "~0ull"
    if not negative and value == 1:
        return "1ull"
    if not negative and value == 0xFFFFFFFF:
        return "~0ull"
    return None


def _lane_shift(node, source: SourceFile, wide: bool = False):
    """The 32-bit literal of `1 << lane`, `-1 << lane`, `~0u << lane`, else None; with `wide`,
    also the 64-bit one of `1ull << lane`, `~0ull << lane`."""
    if node.type != "binary_expression" or node.child_by_field_name("operator").type != "<<":
        return None
    left = node.child_by_field_name("left")
    if _narrow_one(left, source) is None and not (wide and _wide_one(left, source)):
        return None
    if not _lane_amount(node.child_by_field_name("right"), source):
        return None
    return strip_parens(left)


def _wide_one(node, source: SourceFile) -> bool:
    """`1ull`, `1ULL`, `~0ull` (what `_narrow_one` writes): a 64-bit one or all-ones literal."""
    node = strip_parens(node)
    if node.type == "unary_expression" and node.child_by_field_name("operator").type == "~":
        node = strip_parens(node.child_by_field_name("argument"))
        return integer_value(node, source) == 0 and "l" in integer_suffix(node, source)
    return node.type == "number_literal" and integer_value(node, source) == 1 and "l" in integer_suffix(node, source)


class _Mask(NamedTuple):
    origin: str  # "`__ballot_sync`" or "a lane mask"
    signed: bool  # held in a signed 32-bit int on the way
    narrow: bool = False  # held in a 32-bit variable that no safe fix widens


@bounded(None)
def _mask_origin(node, source: SourceFile, variables: dict[str, _Mask]) -> _Mask | None:
    """Where the lane mask `node` comes from: a mask intrinsic, `1 << lane`, a variable
    holding one, or `&`/`|`/`^`/`~`/`- 1`/`__brev` of those; None when it is no mask."""
    node = strip_parens(node)
    if node is None:
        return None
    kind = node.type
    if kind == "call_expression":
        name = callee_name(node, source)
        if name in ("__brev", "__brevll") and len(arguments(node)) == 1:  # a mask, reversed
            return _mask_origin(arguments(node)[0], source, variables)
        if name is None:  # `tile.ballot(p)`: a cooperative group's vote, 64 bits on HIP
            method = _group_method(node, source)
            if method not in GROUP_MASK_METHODS or _narrow_tile(node, source):
                return None
            return _Mask(f"`.{method}`", False)
        return _Mask(f"`{name}`", False) if name in MASK_INTRINSICS else None
    if kind == "conditional_expression":  # `greater ? gt_mask : lt_mask`
        found = [m for m in (_mask_origin(node.child_by_field_name(f), source, variables)
                             for f in ("consequence", "alternative")) if m]
        return found[0] if found else None
    if kind == "identifier":
        return variables.get(source.node_text(node))
    if kind == "unary_expression":
        if node.child_by_field_name("operator").type == "~":
            return _mask_origin(node.child_by_field_name("argument"), source, variables)
        return None
    if kind != "binary_expression":
        return None
    op = node.child_by_field_name("operator").type
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op == "<<":  # `1 << lane`, and its widened form `1ull << lane`: a fix keeps it a mask
        return _Mask("a lane mask", False) if _lane_shift(node, source, wide=True) is not None else None
    if op == "-":
        return _mask_origin(left, source, variables) if integer_value(right, source) == 1 else None
    if op in ("&", "|", "^"):
        if op == "&" and (left.type == "number_literal" or right.type == "number_literal"):
            return None  # `__ballot(p) & 0xffffffff`: the low half, taken on purpose
        found = [m for m in (_mask_origin(left, source, variables), _mask_origin(right, source, variables)) if m]
        return _Mask(found[0].origin, any(m.signed for m in found)) if found else None
    return None


def _mask_evidence(text: bytes) -> list[int]:
    """Where `text` may make a mask from no mask variable (see `_mask_origin`), in order: the
    name of a mask intrinsic, or a `<<` operator (`<<<`, a kernel launch, and `<<=` are other
    tokens). Byte searches, not a regex: most files are long and hold few of them."""
    found = []
    for needle in (b"<<", *_MASK_PREFIXES):
        at = text.find(needle)
        while at != -1:
            if needle != b"<<" or (text[at - 1:at] != b"<" and text[at + 2:at + 3] not in (b"<", b"=")):
                found.append(at)
            at = text.find(needle, at + 1)
    found.sort()
    return found


def _may_be_mask(text: bytes) -> bool:
    """Can an expression with this text be a mask with no mask variable in it?"""
    return bool(_mask_evidence(text))


def _declared_names(declarator, source: SourceFile):
    """(name node, is plain scalar) for a declarator: `m`, `m = x`, `*p`, `v[32]`, `&r`."""
    plain = True
    while declarator is not None and declarator.type != "identifier":
        if declarator.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
            plain = False
        if declarator.type == "reference_declarator":
            declarator = next((c for c in declarator.named_children), None)
        elif declarator.type in ("init_declarator", "pointer_declarator", "array_declarator"):
            declarator = declarator.child_by_field_name("declarator")
        else:
            return None
    return (declarator, plain) if declarator is not None else None


# Expressions through which a value keeps its width on the way to where it is kept.
_CARRIERS = frozenset({"parenthesized_expression", "binary_expression", "unary_expression", "conditional_expression"})
_WIDE_TYPES = frozenset({"unsigned long long", "unsigned long long int", "uint64_t", "std::uint64_t",
                         "long long", "int64_t", "size_t", "auto"})
_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||"})


def _wide_after_fixes(node, source: SourceFile, variables: dict[str, _Mask]) -> bool:
    """Is the value of `node` 64 bits wide once the safe fixes are applied: made of mask
    intrinsics (64 bits on HIP), lane shifts (widened with it), literals and mask variables
    that are, or are safely made, 64 bits? A 32-bit value in it (`m & lanemask32`) keeps
    lanes 32-63 out."""
    node = strip_parens(node)
    if node is None:
        return False
    kind = node.type
    if kind == "number_literal":
        return True
    if kind == "identifier":
        mask = variables.get(source.node_text(node))
        return mask is not None and not mask.narrow
    if kind == "call_expression":
        return _mask_origin(node, source, variables) is not None
    if kind == "unary_expression":
        return _wide_after_fixes(node.child_by_field_name("argument"), source, variables)
    if kind == "conditional_expression":
        return all(_wide_after_fixes(node.child_by_field_name(f), source, variables) for f in ("consequence", "alternative"))
    if kind == "binary_expression":
        if _lane_shift(node, source, wide=True) is not None:
            return True
        return all(_wide_after_fixes(node.child_by_field_name(f), source, variables) for f in ("left", "right"))
    return False


def _received_wide(shift, source: SourceFile, variables: dict[str, _Mask]) -> bool:
    """Does the value of the lane shift `shift`, once widened, stay 64 bits where it goes:
    a test, a 64-bit (or safely widened) variable, a `_sync` intrinsic's mask, a bit function
    whose whole operand is 64 bits? Kept in an `int`, it is cut back to lanes 0-31."""
    node, parent = shift, shift.parent
    while parent is not None and parent.type in _CARRIERS:
        if parent.type == "binary_expression" and parent.child_by_field_name("operator").type in _COMPARISONS:
            return True  # a test of the bits: its width is the wider operand's
        if parent.type == "conditional_expression" and parent.child_by_field_name("condition") == node:
            return True
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type in ("if_statement", "while_statement", "do_statement", "condition_clause"):
        return True
    if parent.type == "init_declarator" or (parent.type == "assignment_expression"
                                            and parent.child_by_field_name("right") == node):
        target = parent.child_by_field_name("declarator" if parent.type == "init_declarator" else "left")
        if target is None or target.type != "identifier":
            return False
        mask = variables.get(source.node_text(target))
        if mask is not None:
            return not mask.narrow
        declaration = parent.parent if parent.type == "init_declarator" else None
        type_node = declaration.child_by_field_name("type") if declaration is not None else None
        return type_node is not None and _type_text(type_node, source) in _WIDE_TYPES
    if parent.type == "argument_list" and parent.parent is not None:
        callee = callee_name(parent.parent, source) or ""
        if callee in MASKED_INTRINSICS:
            return arguments(parent.parent)[:1] == [node]
        if callee in BIT_FUNCTIONS or callee in ("__popcll", "__ffsll"):
            return _wide_after_fixes(node, source, variables)
    return False


class _Declaration(NamedTuple):
    """What a store needs to know about the variable it writes."""

    node: object
    type_node: object
    # A local scalar declared alone: its type can change without touching anything else.
    plain: bool


def _declaration_of(name: str, use, declarations: list, source: SourceFile) -> _Declaration | None:
    """The last of a function's `declarations` (parameters included) of `name` before `use`."""
    found = None
    for node in declarations:
        if node.start_byte >= use.start_byte:
            break
        if not _may_name(node, name, source):
            continue
        declarators = node.children_by_field_name("declarator")
        for declarator in declarators:
            named = _declared_names(declarator, source)
            if named is not None and source.node_text(named[0]) == name:
                plain = named[1] and len(declarators) == 1 and node.type == "declaration"
                found = _Declaration(node, node.child_by_field_name("type"), plain)
    return found


_PRINTF = re.compile(rb"printf")


def _in_printf(name: str, function, source: SourceFile) -> bool:
    """Is `name` printed? Widening it would break a `%u`/`%x` format."""
    return any(any(_mentions(a, name, source) for a in args)
               for _, _, args in _calls_named(function, source, _PRINTF, "printf".__eq__))


def _shift_expressions(source: SourceFile, root) -> list:
    """The `a << b` expressions under `root`, in source order, found where the text has `<<`
    (not `<<<` nor `<<=`: other tokens) rather than by matching every binary expression."""
    data = source.data
    found = []
    at = data.find(b"<<")
    while at != -1:
        operator = root.descendant_for_byte_range(at, at + 2)
        if operator is not None and operator.type == "<<" and operator.start_byte == at:
            shift = operator.parent
            if shift.type == "binary_expression" and shift.child_by_field_name("operator") == operator:
                found.append(shift)
        at = data.find(b"<<", at + 1)
    found.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return found


class _LaneMaskScan:
    def __init__(self, source: SourceFile):
        self.source = source
        self.findings: list[Finding] = []
        self.reported: set[int] = set()  # declarations (and functions) reported once

    def report(self, node, message: str, fix: Fix, related: tuple[Related, ...] = ()) -> None:
        if read_only_off_rocm(node, self.source):
            return
        self.findings.append(at_node(self.source, node, message, fix, related=related))

    def uses(self, name: str, function) -> tuple[Related, ...]:
        """Where `function` reads the 32-bit mask variable `name` (a popcount, a shift, the
        mask of a `_sync` call), the places that compute on its 32 lanes, and where it stores
        into it again (`m = tile.ballot(q)`), each such store truncating too."""
        related = []
        for n in identifiers_named(self.source, name, function.start_byte, function.end_byte):
            if n.parent is None or n.parent.type in ("init_declarator", "parameter_declaration",
                                                     "reference_declarator", "pointer_declarator"):
                continue
            stored = n.parent.type == "assignment_expression" and n.parent.child_by_field_name("left") == n
            related.append(Related(self.source.location(n.start_byte, n.end_byte),
                                   f"`{name}` is stored to here" if stored else f"`{name}` is used here"))
        return tuple(related)

    def stores(self, function) -> dict[str, _Mask]:
        """Masks kept in 32-bit variables or returned as 32 bits; returns the mask variables."""
        source = self.source
        variables: dict[str, _Mask] = {}
        reported = self.reported
        declarations = None  # the function's, found when a mask is stored
        data = source.data
        for match in queries.matches(CUDA, _STORES, function):
            store, value = match["store"][0], match["value"][0]
            # Most stores are passed over here: see `_may_be_mask`.
            text = data[value.start_byte:value.end_byte]
            if not (_may_be_mask(text) or (variables and any(known.encode() in text for known in variables))):
                continue
            if enclosing_function(store) != function:
                continue  # a nested definition (a local class's method) has its own pass
            mask = _mask_origin(value, source, variables)
            if mask is None:
                continue
            if store.type == "return_statement":
                self._returned(function, mask.origin, reported)
                continue
            target = match["target"][0]
            base = target.child_by_field_name("argument") if target.type == "subscript_expression" else target
            if base is None or base.type != "identifier":
                continue
            name = source.node_text(base)
            if declarations is None:
                declarations = queries.nodes(CUDA, _DECLARATIONS, function, "declaration")
            declaration = _declaration_of(name, store, declarations, source)
            if declaration is None or declaration.type_node is None:
                continue
            type_text = _type_text(declaration.type_node, source)
            signed = type_text in _SIGNED_32
            narrow_type = type_text in _SIGNED_32 or type_text in _UNSIGNED_32
            safe = declaration.plain and not signed and not _in_printf(name, function, source)
            if target.type == "identifier":
                variables[name] = _Mask(mask.origin, signed or mask.signed, narrow_type and not safe)
            if narrow_type and declaration.node.id not in reported:
                reported.add(declaration.node.id)
                anchor = declaration.type_node if store.type == "init_declarator" else target
                self.report(anchor, f"`{type_text} {name}` holds 32 lanes of {mask.origin}; AMD wavefronts have 64.",
                            self._type_fix(safe, f"Declare `{name}` as `{MASK_TYPE}`", declaration, function,
                                           Edit.replace(declaration.type_node, MASK_TYPE)),
                            self.uses(name, function))
        return variables

    def _type_fix(self, safe: bool, title: str, declaration: _Declaration, function, *edits: Edit) -> Fix:
        """A variable's new type; a kernel's parameter gets advice only (its launches pass the
        old type, and the signature is the kernel's interface)."""
        if declaration.node.type == "parameter_declaration" and _is_kernel(function):
            return Fix.advice(f"{title} (a kernel parameter: change its launches with it)")
        return (Fix.safe if safe else Fix.unsafe)(title, *edits)

    def _returned(self, function, origin: str, reported: set[int]) -> None:
        type_node = function.child_by_field_name("type")
        if type_node is None or function.id in reported:
            return
        type_text = _type_text(type_node, self.source)
        if type_text in _SIGNED_32 or type_text in _UNSIGNED_32:
            reported.add(function.id)
            self.report(type_node, f"Return type `{type_text}` holds 32 lanes of {origin}; AMD wavefronts have 64.",
                        Fix.unsafe(f"Return `{MASK_TYPE}` (and widen the callers' variables)",
                                   Edit.replace(type_node, MASK_TYPE)))

    def mask_arguments(self) -> None:
        """A 32-bit variable or parameter passed as the mask of a `_sync` intrinsic: HIP's take a
        64-bit mask (their templates `static_assert` it), and 32 bits cannot name lanes 32-63.
        Followed through the file's wrappers: a parameter that is such a mask makes the
        argument of each call of its function a mask too (`warp_sum3(g, mask, v)` handing
        `mask` on to `warp_sum(g, mask, v.x)`)."""
        source = self.source
        declarations_of: dict[int, list] = {}
        model = source.rocm_path
        pending = []  # (call, the callee's name, the mask argument)
        for call, name, args in masked_intrinsic_calls(source):
            if source.shim_drops_argument(name, 0, call.start_byte):
                continue  # the ROCm build's shim drops the mask: its type is never seen there
            if model is not None and model.status(call.start_byte) is Status.DEAD:
                continue  # the CUDA arm of a wrapper (`#else` of `__HIP_PLATFORM_AMD__`): not ROCm's call
            pending.append((call, name, args[0] if args else None))
        mask_parameters: set[tuple[str, int]] = set()  # (function, position) of parameters that are masks
        while pending:
            call, name, mask = pending.pop()
            mask = strip_parens(mask) if mask is not None else None
            function = enclosing_function(call) if mask is not None and mask.type == "identifier" else None
            if function is None:
                continue
            if function.id not in declarations_of:
                declarations_of[function.id] = queries.nodes(CUDA, _DECLARATIONS, function, "declaration")
            variable = source.node_text(mask)
            declaration = _declaration_of(variable, call, declarations_of[function.id], source)
            if declaration is None or declaration.type_node is None:
                continue
            if declaration.node.type == "parameter_declaration":
                pending += self._calls_passing(function, declaration.node, mask_parameters)
            if declaration.node.id in self.reported:
                continue
            type_text = _type_text(declaration.type_node, source)
            if type_text not in _SIGNED_32 and type_text not in _UNSIGNED_32:
                continue
            self.reported.add(declaration.node.id)
            self.report(declaration.type_node,
                        f"`{type_text} {variable}` is the lane mask of `{name}`; HIP's `_sync` intrinsics take "
                        "a 64-bit mask (AMD wavefronts have 64 lanes).",
                        self._widen_mask_fix(variable, declaration, function, call, name),
                        self.uses(variable, function))

    def _calls_passing(self, function, parameter, known: set[tuple[str, int]]) -> list[tuple]:
        """The live calls of `function` in this file, each with its argument for `parameter`
        (call, the function's name, the argument); none where that parameter was seen already."""
        source = self.source
        declarator = function_declarator(function)
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        name = function_name(function, source)
        if name is None or parameters is None:
            return []
        listed = [p for p in parameters.named_children if p.type.endswith("parameter_declaration")]
        position = next((i for i, p in enumerate(listed) if p.id == parameter.id), None)
        if position is None or (name, position) in known:
            return []
        known.add((name, position))
        found = []
        for use in identifiers_named(source, name):
            call = use.parent
            if call is None or call.type != "call_expression" or call.child_by_field_name("function") != use:
                continue
            if source.rocm_path is not None and source.rocm_path.status(call.start_byte) is Status.DEAD:
                continue
            args = arguments(call)
            if position < len(args):
                found.append((call, name, args[position]))
        return found

    def _widen_mask_fix(self, variable: str, declaration: _Declaration, function, call, name: str) -> Fix:
        """`unsigned long long`, and `~0ull` for a 32-lane full mask it starts from. Safe for a
        local declared alone whose value is such a mask (or none) and that is only ever a mask."""
        source = self.source
        edits = [Edit.replace(declaration.type_node, MASK_TYPE)]
        value = None
        for declarator in declaration.node.children_by_field_name("declarator"):
            if declarator.type == "init_declarator":
                value = strip_parens(declarator.child_by_field_name("value"))
        if value is not None and _is_32_lane_full_mask(value, source):
            edits.append(Edit.replace(value, FULL_MASK_64))
        uses = [n for n in identifiers_named(source, variable, function.start_byte, function.end_byte)
                if n.parent is not None and n.parent.type not in ("init_declarator", "parameter_declaration")]
        only_masks = all(_is_mask_argument(n, source) for n in uses)
        plain_value = value is None or len(edits) == 2 or _mask_origin(value, source, {}) is not None
        safe = declaration.plain and plain_value and only_masks and not _in_printf(variable, function, source)
        title = f"Declare `{variable}` as `{MASK_TYPE}`" + (f" starting from `{FULL_MASK_64}`" if len(edits) == 2 else "")
        if len(edits) == 2 and (doubt := full_mask_doubt(call, name, source)):
            safe, title = False, f"{title}; {doubt}"
        return self._type_fix(safe, title, declaration, function, *edits)

    def bit_functions(self, root, variables_of) -> None:
        """`__popc`/`__ffs`/`__clz`/`__brev` of a mask."""
        source = self.source
        for call, name, args in _calls_named(root, source, _BIT_FUNCTION_NAMES, BIT_FUNCTIONS.__contains__):
            if len(args) != 1:
                continue
            mask = _mask_origin(args[0], source, variables_of(call))
            if mask is None:
                continue
            function = BIT_FUNCTIONS[name]
            safe = function.same_on_cuda == "always" or (function.same_on_cuda == "unsigned" and not mask.signed)
            # `__popcll` of a value that stays 32 bits counts lanes 0-31 only: right only with its operand widened.
            safe = safe and _wide_after_fixes(args[0], source, variables_of(call))
            callee = call.child_by_field_name("function")
            self.report(callee, f"`{name}` {function.verb} 32 lanes of {mask.origin}; AMD wavefronts have 64.",
                        (Fix.safe if safe else Fix.unsafe)(f"Replace `{name}` with `{function.wide}`{function.note}",
                                                           Edit.replace(callee, function.wide)))

    def lane_shifts(self, root, variables_of) -> None:
        """`1 << lane`: 32 bits wide, so lanes 32-63 shift the bit out (undefined behaviour)."""
        source = self.source
        for shift in _shift_expressions(source, root):
            literal = _lane_shift(shift, source)
            if literal is None:
                continue
            wide = _narrow_one(literal, source)
            text = source.node_text(literal)
            amount = _short(source.node_text(shift.child_by_field_name("right")), 16)
            title = f"Replace `{text}` with `{wide}`"
            keeps = _received_wide(shift, source, variables_of(shift))
            self.report(literal, f"`{text} << {amount}` is 32 bits wide; lanes 32–63 of a wavefront overflow.",
                        Fix.safe(title, Edit.replace(literal, wide)) if keeps else
                        Fix.unsafe(f"{title} (its value is then kept in 32 bits: widen that too)",
                                   Edit.replace(literal, wide)))


# The lane-shift path needs what `_narrow_one` widens (`1`, `1u`, `-1`, `0xffffffff`,
# `4294967295`, `~` of a zero, maybe in parentheses) as the left operand of a `<<` (not `<<<`,
# `<<=`), and a lane amount (`_lane_amount`): a lane name or a thread expression. And the
# check reads only files with a mask intrinsic or `lane`.
_NARROW_LITERALS = ("1", "4294967295", "0(?:[xX]['0]*(?:1|[fF]{8})?|[bB]['0]*|['0]*(?:1|4294967295)?)")
_NARROW_SHIFT = re.compile(
    f"(?:{'|'.join(_at_token_start(s) for s in _NARROW_LITERALS)})[uUlLzZ]*+(?:\\)|{_BLANK})*+"
    f"(?:<<(?![<=]){_OR_COMMENT})".encode())


# A masked intrinsic called with a variable as its mask: `__shfl_sync(mask, ...`.
_MASKED_SYNC_CALL = re.compile(f"(?:_sync|__syncwarp)(?:{_BLANK})*+\\((?:{_BLANK}|\\()*+(?:[A-Za-z_]{_OR_COMMENT})".encode())


@needs(*_MASK_PREFIXES, all_of(b"_sync", _MASKED_SYNC_CALL),
       all_of(nocase(b"lane"), THREAD_EXPRESSION_BYTES, _NARROW_SHIFT))
def check_truncated_lane_mask(source: SourceFile) -> list[Finding]:
    data = source.data
    has_masks = any(name in data for name in _MASK_PREFIXES) or b"_sync" in data
    has_lane_shifts = b"<<" in data and b"lane" in data.lower()
    if not has_masks and not has_lane_shifts:
        return []
    scan = _LaneMaskScan(source)
    variables: dict[int, dict[str, _Mask]] = {}
    # The first mask a function stores is a mask by itself (`_may_be_mask`), so only the
    # functions around such evidence can store masks.
    evidence = _mask_evidence(data)
    for function in queries.nodes(CUDA, "(function_definition) @f", source.tree.root_node, "f"):
        first = bisect.bisect_left(evidence, function.start_byte)
        if first < len(evidence) and evidence[first] < function.end_byte:
            variables[function.id] = scan.stores(function)

    def variables_of(node) -> dict[str, _Mask]:
        function = enclosing_function(node)
        return variables.get(function.id, {}) if function is not None else {}

    if b"_sync" in data:
        scan.mask_arguments()
    has_bit_functions = any(name.encode() in data for name in BIT_FUNCTIONS)
    for root, in_macro in _roots(source):
        if has_bit_functions:
            scan.bit_functions(root, (lambda node: {}) if in_macro else variables_of)
        if has_lane_shifts:
            scan.lane_shifts(root, (lambda node: {}) if in_macro else variables_of)
    return scan.findings


# Answered from one combined query run per file (portlint.queries.shared). The queries asked
# per function (`_STORES`, `_INITIALISED`, `_REASSIGNED`, `_DECLARATIONS`) are not: tree-sitter
# runs them over the function alone, cheaper than matching the whole file in Python.
queries.shared(
    CUDA,
    "(for_statement) @loop",
    "(function_definition) @f",
)


# The logical-warp model reads this module's call finders; imported last, as a module, so
# that either module may be imported first.
from portlint.checks import logical_warp as _logical_warp  # noqa: E402
