"""Reading CMake trees: commands, their argument words, and where a variable's values go.

CMake has no expressions: a build reads as a list of commands whose arguments are words.
Values travel through variables (`set`, `list(APPEND)`, `string(APPEND)`) and are read back
with `${VAR}`; `values_reaching` follows that within one file.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from portlint import queries
from portlint.rocm_path import Status
from portlint.source import CMAKE, SourceFile

_COMMANDS = "(normal_command (identifier) @name) @command"
_VARIABLE_REFS = "(normal_var (variable) @name)"
_HEADS = ("if_command", "elseif_command", "else_command")
# Whitespace- or `;`-separated items inside one argument, e.g. the flags in "${X} -O3 -flto".
_ITEM = re.compile(r"[^\s;]+")


@dataclass(unsafe_hash=True)
class Command:
    node: object  # normal_command
    name: str  # lower case: CMake command names are case-insensitive
    args: tuple  # its `argument` nodes

    def words(self, source: SourceFile) -> list[str]:
        return [word(a, source) for a in self.args]


def commands(source: SourceFile) -> list[Command]:
    """Every command call in source order (also inside `if`, `foreach`, `function` bodies)."""
    found = []
    for match in queries.matches(CMAKE, _COMMANDS, source.tree.root_node):
        name = source.node_text(match["name"][0]).lower()
        node = match["command"][0]
        arg_list = next((c for c in node.children if c.type == "argument_list"), None)
        args = () if arg_list is None else tuple(c for c in arg_list.children if c.type == "argument")
        found.append(Command(node, name, args))
    return found


def word(arg, source: SourceFile) -> str:
    """An argument's value as written, without its quotes or brackets (`${X}` left as is)."""
    inner = arg.named_children[0] if arg.named_children else arg
    if inner.type == "quoted_argument":
        return source.data[inner.start_byte + 1:inner.end_byte - 1].decode("utf-8", errors="replace")
    if inner.type == "bracket_argument":
        content = next((c for c in inner.children if c.type == "bracket_argument_content"), None)
        return source.node_text(content) if content is not None else ""
    return source.node_text(inner)


def is_quoted(arg) -> bool:
    return bool(arg.named_children) and arg.named_children[0].type != "unquoted_argument"


def items(arg, source: SourceFile) -> list[tuple[int, int, str]]:
    """(start byte, end byte, text) of each whitespace- or `;`-separated item of an argument."""
    base = arg.start_byte
    text = source.node_text(arg)
    return [(byte_offset(base, text, m.start()), byte_offset(base, text, m.end()), m.group())
            for m in _ITEM.finditer(text)]


def byte_offset(base: int, text: str, index: int) -> int:
    """The byte offset of `text[index]`, for `text` starting at byte `base` (UTF-8)."""
    return base + len(text[:index].encode("utf-8"))


def referenced_variables(node, source: SourceFile) -> list[str]:
    """The names read with `${NAME}` anywhere under `node`."""
    return [source.node_text(n) for n in queries.nodes(CMAKE, _VARIABLE_REFS, node, "name")]


def assignment(command: Command, source: SourceFile) -> tuple[str, tuple] | None:
    """(variable, value arguments) of `set`, `list(APPEND|PREPEND|INSERT)`, `string(APPEND|PREPEND|CONCAT)`."""
    args, name = command.args, command.name
    if name == "set" and args:
        values = args[1:]
        for i, arg in enumerate(values):
            if not is_quoted(arg) and word(arg, source) in ("CACHE", "PARENT_SCOPE"):
                values = values[:i]
                break
        return word(args[0], source), values
    if name in ("list", "string") and len(args) >= 2:
        mode = word(args[0], source)
        if mode in ("APPEND", "PREPEND", "CONCAT"):
            return word(args[1], source), args[2:]
        if name == "list" and mode == "INSERT" and len(args) >= 3:
            return word(args[1], source), args[3:]
    return None


def values_reaching(
    source: SourceFile,
    all_commands: list[Command],
    direct: Iterable,
    is_sink_variable: Callable[[str], bool] = lambda name: False,
) -> list:
    """The arguments whose values end up in `direct` arguments or in a sink variable.

    A `${VAR}` in a collected argument pulls in every value this file assigns to VAR (and so
    on, transitively). Returns argument nodes in source order, each once.
    """
    assigned: dict[str, list] = {}
    for command in all_commands:
        found = assignment(command, source)
        if found is not None:
            assigned.setdefault(found[0], []).extend(found[1])
    queue = list(direct)
    followed: set[str] = set()
    for name in assigned:
        if is_sink_variable(name):
            followed.add(name)
            queue.extend(assigned[name])
    collected: dict[int, object] = {}
    while queue:
        arg = queue.pop()
        if arg.start_byte in collected:
            continue
        collected[arg.start_byte] = arg
        for name in referenced_variables(arg, source):
            if name not in followed:
                followed.add(name)
                queue.extend(assigned.get(name, ()))
    return [collected[k] for k in sorted(collected)]


def property_values(command: Command, source: SourceFile, is_property: Callable[[str], bool]) -> list:
    """Values given to matching properties by `set_property(... PROPERTY P v...)` or
    `set_target_properties / set_source_files_properties / set_directory_properties(... PROPERTIES P v ...)`."""
    words = command.words(source)
    if command.name == "set_property" and "PROPERTY" in words:
        at = words.index("PROPERTY")
        if at + 1 < len(words) and is_property(words[at + 1]):
            return list(command.args[at + 2:])
        return []
    if command.name.endswith("_properties") and "PROPERTIES" in words:
        pairs = command.args[words.index("PROPERTIES") + 1:]
        return [value for key, value in zip(pairs[::2], pairs[1::2]) if is_property(word(key, source))]
    return []


# ---- where the build takes a ROCm path ------------------------------------------------------
def hip_language_commands(source: SourceFile, all_commands: list[Command]) -> list[Command]:
    """Commands that make this project compile HIP: `enable_language(HIP)`, `project(... HIP)`,
    `find_package(hip)`, `hip_add_library/executable`, `LANGUAGE HIP` source properties."""
    found = []
    for command in all_commands:
        words = command.words(source)
        name = command.name
        if (
            (name == "enable_language" and "HIP" in words)
            or (name == "project" and "HIP" in words[1:])
            or (name == "find_package" and words[:1] in (["hip"], ["HIP"]))
            or name in ("hip_add_library", "hip_add_executable")
            or any(a == "LANGUAGE" and b == "HIP" for a, b in zip(words, words[1:]))
        ):
            found.append(command)
    return found


def rocm_branch_heads(source: SourceFile) -> list:
    """`if()`/`elseif()`/`else()` commands whose body is the ROCm port (e.g. `if(USE_ROCM)`),
    as the ROCm-path model reads them."""
    model = source.rocm_path
    if model is None:
        return []
    heads = []
    for chain in queries.nodes(CMAKE, "(if_condition) @c", source.tree.root_node, "c"):
        head = None
        for child in chain.children:
            if child.type in _HEADS:
                head = child
            elif child.type == "body" and head is not None:
                if child.end_byte > child.start_byte and model.status(child.start_byte) is Status.PORT:
                    heads.append(head)
                head = None
    return sorted(heads, key=lambda n: n.start_byte)


def line_indent(source: SourceFile, offset: int) -> str:
    """The leading whitespace of the line holding `offset`."""
    line = source.line_bytes(source.line_of(offset)).decode("utf-8", errors="replace")
    return line[: len(line) - len(line.lstrip())]


# ---- one query per file, shared by every CMake check ------------------------------------
def _memoized(source: SourceFile, key: str, compute):
    """`compute(source)` once per file, kept on the source for the other checks."""
    memo = getattr(source, "memo", None)
    if memo is None:  # a SourceFile without the shared memo: keep it on the instance
        memo = vars(source).setdefault("_cmake_memo", {})
    if key not in memo:
        memo[key] = compute(source)
    return memo[key]


def cached_commands(source: SourceFile) -> list[Command]:
    """`commands(source)`, computed once per file."""
    return _memoized(source, "cmake.commands", commands)


def variable_refs(source: SourceFile) -> list:
    """Every `(variable)` read with `${NAME}` in the file, in source order (one query, shared)."""
    return _memoized(source, "cmake.variable_refs",
                     lambda s: queries.nodes(CMAKE, _VARIABLE_REFS, s.tree.root_node, "name"))


def referenced_variables_within(source: SourceFile, start: int, end: int) -> list[tuple[str, int]]:
    """(name, start byte) of each `${NAME}` read in bytes [start, end), from the shared `variable_refs`."""
    refs = variable_refs(source)
    starts = _memoized(source, "cmake.variable_ref_starts", lambda s: [n.start_byte for n in variable_refs(s)])
    at = bisect.bisect_left(starts, start)
    found = []
    while at < len(refs) and refs[at].start_byte < end:
        found.append((source.node_text(refs[at]), refs[at].start_byte))
        at += 1
    return found
