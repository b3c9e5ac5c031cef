"""Reading Makefiles: assignments, rules, recipe commands and the words they hold.

tree-sitter-make keeps a value or a recipe line as text with its `$(...)` references as
children. `words_of` splits such text at blanks outside the references; `Makefile.expand`
replaces a `$(VAR)` word by every value the file gives VAR on the ROCm path, transitively.
`read(source)` parses a file's statements once (one query) and is shared by every rule.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from portlint import queries, rocm_path
from portlint.rocm_path import Status
from portlint.source import MAKE, SourceFile

# Nodes that expand as a whole: a word never splits inside them.
_ATOMS = frozenset({"variable_reference", "substitution_reference", "function_call", "shell_function",
                    "automatic_variable"})
_STATEMENTS = """
[(variable_assignment) @assign
 (shell_assignment) @assign
 (rule) @rule
 (recipe_line) @line
 (include_directive) @include
 (define_directive) @define
 (conditional condition: (_) @condition)
 (elsif_directive condition: (_) @condition)
 (function_call) @call]
"""
_SEPARATORS = frozenset({"&&", "||", ";", "|"})
# `$(eval NAME += value)`, as in CUDA samples' `$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += ...))`.
_EVAL_ASSIGNMENT = re.compile(rb"\s*([A-Za-z_][\w.-]*)\s*(\+=|::=|:=|\?=|=)")
# make's built-in values of the variables a recipe may use without setting them.
BUILTIN_PROGRAMS = {"CC": "cc", "CXX": "g++", "LD": "ld", "CPP": "cc", "AR": "ar", "AS": "as", "FC": "f77"}
# Functions whose last argument is a list that survives them (with a prefix, suffix, or pattern).
_LIST_FUNCTIONS = frozenset({"strip", "sort", "addprefix", "addsuffix", "patsubst", "filter", "filter-out",
                             "firstword", "lastword", "abspath", "realpath", "notdir"})


@dataclass(unsafe_hash=True)
class Word:
    """One blank-separated word of a value or a recipe line, as written."""

    start: int
    end: int
    text: str
    atoms: tuple = ()  # the `$(...)` nodes inside the word

    @property
    def reference(self):
        """The node when the whole word is one `$(...)`/`${...}`, else None."""
        if len(self.atoms) == 1 and self.atoms[0].start_byte == self.start and self.atoms[0].end_byte == self.end:
            return self.atoms[0]
        return None


@dataclass(unsafe_hash=True)
class Assignment:
    node: object
    name: str
    operator: str
    words: tuple[Word, ...]
    live: bool  # not in code that is dead when building for ROCm
    conditional: bool  # inside an `ifeq`/`ifdef` arm
    top_level: bool  # a plain `NAME = value` line of its own (no `export`, target or `eval`)


@dataclass
class Rule:
    node: object
    targets: list[Word]
    prerequisites: list[Word]
    target_patterns: list[Word]  # `$(OBJS): %.o: %.cpp`
    commands: list["Command"] = field(default_factory=list)


@dataclass(unsafe_hash=True)
class Command:
    """One simple command of a recipe line (`cd build && $(NVCC) -c $<` holds two)."""

    line: object  # the recipe_line node
    rule: Rule | None
    words: tuple[Word, ...]

    @property
    def program(self) -> Word:
        return self.words[0]


@dataclass
class Expansion:
    words: list[Word]
    # Variables read but never set on the ROCm path in this file (they may come from the
    # environment, the command line or an included file), and `$(shell ...)`/opaque calls.
    unset: set[str] = field(default_factory=set)
    opaque: list[Word] = field(default_factory=list)

    def extend(self, other: "Expansion") -> None:
        self.words.extend(other.words)
        self.unset |= other.unset
        self.opaque.extend(other.opaque)


def atoms_under(node) -> list:
    """The outermost `$(...)` nodes under `node`, in source order."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        for child in reversed(current.children):
            if child.type in _ATOMS:
                found.append(child)
            elif child.child_count:
                stack.append(child)
    return sorted(found, key=lambda n: n.start_byte)


def words_of(source: SourceFile, start: int, end: int, atoms: list, comment: str | None = None) -> list[Word]:
    """Blank-separated words of bytes [start, end); `atoms` never split. `comment`: "value"
    ends the text at any `#` (make strips it), "shell" at a `#` that starts a word."""
    data = source.data
    out: list[Word] = []
    atoms = [a for a in atoms if a.start_byte >= start and a.end_byte <= end]
    word_start, word_atoms, i, k = None, [], start, 0

    def close(at: int) -> None:
        nonlocal word_start, word_atoms
        if word_start is not None:
            text = data[word_start:at].decode("utf-8", errors="replace")
            out.append(Word(word_start, at, text, tuple(word_atoms)))
        word_start, word_atoms = None, []

    while i < end:
        if k < len(atoms) and atoms[k].start_byte == i:
            if word_start is None:
                word_start = i
            word_atoms.append(atoms[k])
            i = atoms[k].end_byte
            k += 1
            continue
        byte = data[i]
        if byte in b" \t\r\n":
            close(i)
            i += 1
        elif byte == 0x5C and data[i + 1:i + 2] == b"\n":  # backslash-newline: a blank
            close(i)
            i += 2
        elif byte == 0x23 and data[i - 1:i] != b"\\" and (
                comment == "value" or (comment == "shell" and word_start is None)):
            break
        else:
            if word_start is None:
                word_start = i
            i += 1
    close(min(i, end))
    return out


def reference_name(source: SourceFile, node) -> str | None:
    """`CUDA_PATH` for `$(CUDA_PATH)`, `${CUDA_PATH}` and `$(CUDA_PATH:.cu=.o)`."""
    if node.type == "variable_reference":
        name = next((c for c in node.named_children if c.type == "word"), None)
        return source.node_text(name) if name is not None and len(node.named_children) == 1 else None
    if node.type == "substitution_reference":
        name = node.child_by_field_name("text")
        return source.node_text(name) if name is not None else None
    return None


def function_name(source: SourceFile, node) -> str | None:
    function = node.child_by_field_name("function")
    return source.node_text(function) if function is not None else None


def references_under(source: SourceFile, word: Word) -> list[tuple[object, str]]:
    """(node, name) of every variable reference in `word`, nested ones included."""
    found = []
    stack = list(word.atoms)
    while stack:
        node = stack.pop()
        name = reference_name(source, node)
        if name is not None:
            found.append((node, name))
        stack.extend(c for c in node.children if c.child_count)
    return sorted(found, key=lambda p: p[0].start_byte)


def set_by_its_test(source: SourceFile, node, name: str) -> bool:
    """Is `node` inside an arm that only runs where `name` holds something: the first arm of
    `ifdef NAME`, `ifneq (,$(NAME))`, `ifneq ($(strip $(NAME)),)` or
    `ifneq (,$(wildcard $(NAME)/.))`, or the `else` of `ifndef NAME` / `ifeq (,$(NAME))`?"""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "conditional" and parent.named_children:
            test = parent.named_children[0]
            in_else = child.type in ("else_directive", "elsif_directive")
            positive = {"ifdef_directive": True, "ifneq_directive": True,
                        "ifndef_directive": False, "ifeq_directive": False}.get(test.type)
            if child != test and positive is not None and positive != in_else and _tests_presence(source, test, name):
                return True
        child, parent = parent, parent.parent
    return False


def _tests_presence(source: SourceFile, test, name: str) -> bool:
    """`ifdef NAME`, or an `ifeq`/`ifneq` of an empty side against `$(NAME)` or
    `$(strip $(NAME))` alone (not `$(wildcard $(NAME)/.)`: with NAME empty that is `/.`)."""
    if test.type in ("ifdef_directive", "ifndef_directive"):
        words = [c for c in test.named_children if c.type == "word"]
        return len(words) == 1 and source.node_text(words[0]) == name
    sides = [c for c in test.named_children]
    if len(sides) != 1 or "," not in source.node_text(test):
        return False  # one side written: the other is empty (`(,$(X))`, `($(X),)`)
    side = sides[0]
    if side.type == "function_call" and function_name(source, side) == "strip":
        arguments = next((c for c in side.children if c.type == "arguments"), None)
        parts = [c for c in arguments.named_children] if arguments is not None else []
        side = parts[0] if len(parts) == 1 and parts[0].type == "text" and len(parts[0].named_children) == 1 \
            and source.node_text(parts[0]).strip() == source.node_text(parts[0].named_children[0]) \
            else None
        side = side.named_children[0] if side is not None else None
    return side is not None and reference_name(source, side) == name


class Makefile:
    """A Makefile's statements, in source order, and where variables get their values."""

    def __init__(self, source: SourceFile, model: rocm_path.RocmPathModel | None = None):
        """`model`: the ROCm-path model to read the file with (the model's own first reading,
        while it decides a chain by the compilers its arms set), else the file's."""
        self.source = source
        if model is None:
            model = source.rocm_path if source.rocm_path is not None else rocm_path.build(source)
        self.model = model
        self._dead = _union(sorted((s, e) for s, e, status in model.ranges if status is Status.DEAD))
        self._dead_starts = [s for s, _ in self._dead]
        self.assignments: list[Assignment] = []
        self.rules: list[Rule] = []
        self.commands: list[Command] = []
        self.includes: list[Word] = []
        self.conditions: list[object] = []
        self.defines: list[object] = []
        self._command_programs: dict[int, set[str]] = {}  # by id(command): every rule asks
        rules_by_node: dict[int, Rule] = {}
        lines = []
        for name, node in queries.captures(MAKE, _STATEMENTS, source.tree.root_node):
            if name == "assign":
                self._add_assignment(node)
            elif name == "rule":
                rule = self._rule(node)
                rules_by_node[node.id] = rule
                self.rules.append(rule)
            elif name == "line":
                lines.append(node)
            elif name == "include":
                files = node.child_by_field_name("filenames")
                if files is not None:
                    self.includes.extend(words_of(source, files.start_byte, files.end_byte, atoms_under(files)))
            elif name == "define":
                self.defines.append(node)
            elif name == "condition":
                self.conditions.append(node)
            elif name == "call" and function_name(source, node) == "eval":
                self._add_eval_assignment(node)
        for line in lines:
            rule = _enclosing(line, "rule")
            self._add_commands(line, rules_by_node.get(rule.id) if rule is not None else None)
        self.assignments.sort(key=lambda a: a.node.start_byte)
        self.by_name: dict[str, list[Assignment]] = {}
        for a in self.assignments:
            self.by_name.setdefault(a.name, []).append(a)

    # ---- statements ----------------------------------------------------------------------
    def _live(self, offset: int) -> bool:
        """Not in code that is dead for ROCm (the model's DEAD ranges, merged for bisection)."""
        at = bisect.bisect_right(self._dead_starts, offset) - 1
        return at < 0 or offset >= self._dead[at][1]

    def _add_assignment(self, node) -> None:
        name_node, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        operator = node.child_by_field_name("operator")
        if name_node is None:
            return
        if value is None:
            words = []
        elif node.type == "shell_assignment":  # `NAME != command`: the shell decides the value
            words = [Word(value.start_byte, value.end_byte, "$(shell " + self.source.node_text(value) + ")",
                          (value,))]
        else:
            words = words_of(self.source, value.start_byte, value.end_byte, atoms_under(value), comment="value")
        top_level = node.parent is not None and node.parent.type in ("makefile", "conditional", "elsif_directive",
                                                                     "else_directive")
        top_level = top_level and node.child_by_field_name("target_or_pattern") is None
        self.assignments.append(Assignment(
            node, self.source.node_text(name_node), self.source.node_text(operator) if operator else "=",
            tuple(words), self._live(node.start_byte), _enclosing(node, "conditional") is not None, top_level))

    def _add_eval_assignment(self, call) -> None:
        arguments = call.child_by_field_name("arguments") or next(
            (c for c in call.children if c.type == "arguments"), None)
        if arguments is None:
            return
        m = _EVAL_ASSIGNMENT.match(self.source.data, arguments.start_byte, arguments.end_byte)
        if m is None:
            return
        words = words_of(self.source, m.end(), arguments.end_byte, atoms_under(arguments))
        self.assignments.append(Assignment(
            call, m.group(1).decode(), m.group(2).decode(), tuple(words), self._live(call.start_byte),
            _enclosing(call, "conditional") is not None, False))

    def _rule(self, node) -> Rule:
        source = self.source

        def words(child):
            return words_of(source, child.start_byte, child.end_byte, atoms_under(child)) if child else []

        targets = next((c for c in node.children if c.type == "targets"), None)
        prerequisites = words(node.child_by_field_name("normal"))
        if node.child_by_field_name("prerequisite") is not None:
            prerequisites += words(node.child_by_field_name("prerequisite"))
        return Rule(node, words(targets), prerequisites, words(node.child_by_field_name("target")))

    def _add_commands(self, line, rule: Rule | None) -> None:
        texts = [c for c in line.children if c.type == "shell_text"]
        if not texts:
            return
        atoms = [a for t in texts for a in atoms_under(t)]
        current: list[Word] = []
        for word in words_of(self.source, texts[0].start_byte, line.end_byte, atoms, comment="shell"):
            if word.text in _SEPARATORS:
                self._command(line, rule, current)
                current = []
            elif word.text.endswith(";") and not word.atoms:
                current.append(Word(word.start, word.end - 1, word.text[:-1]))
                self._command(line, rule, current)
                current = []
            else:
                current.append(word)
        self._command(line, rule, current)

    def _command(self, line, rule: Rule | None, words: list[Word]) -> None:
        # Leading `@`, `-`, `+` (make's prefixes) and `VAR=value` environment settings.
        while words and (re.fullmatch(r"[@+-]+", words[0].text) or re.match(r"[A-Za-z_]\w*=", words[0].text)):
            words = words[1:]
        if not words:
            return
        first = words[0]
        stripped = first.text.lstrip("@+-")
        if stripped != first.text:
            cut = len(first.text) - len(stripped)
            words = [Word(first.start + cut, first.end, stripped, first.atoms), *words[1:]]
        if words[0].text:
            command = Command(line, rule, tuple(words))
            self.commands.append(command)
            if rule is not None:
                rule.commands.append(command)

    # ---- values --------------------------------------------------------------------------
    def values(self, name: str) -> list[Assignment]:
        """The assignments of `name` on the ROCm path."""
        return [a for a in self.by_name.get(name, ()) if a.live]

    def is_set(self, name: str) -> bool:
        return bool(self.values(name))

    def expand(self, words, _seen: frozenset[str] = frozenset()) -> Expansion:
        """`words` with each whole-word `$(VAR)` replaced by VAR's words, transitively.

        Words that only contain a reference (`-L$(CUDA_PATH)/lib64`) stay as written.
        `$(VAR:.cu=.o)` and list functions (`patsubst`, `addprefix`, ...) are applied to the
        text; `$(shell ...)` and other calls are opaque.
        """
        result = Expansion([])
        for word in words:
            node = word.reference
            if node is None:
                result.words.append(word)
                continue
            if node.type == "automatic_variable":
                result.words.append(word)
            elif node.type in ("variable_reference", "substitution_reference"):
                self._expand_reference(word, node, _seen, result)
            elif node.type == "function_call" and function_name(self.source, node) in _LIST_FUNCTIONS:
                self._expand_function(word, node, _seen, result)
            else:
                result.opaque.append(word)
        return result

    def _expand_reference(self, word: Word, node, seen: frozenset[str], result: Expansion) -> None:
        name = reference_name(self.source, node)
        if name is None or "$" in name:
            result.opaque.append(word)
            return
        if name in seen:
            return
        assignments = self.values(name)
        if not assignments:
            result.unset.add(name)
            return
        inner = self.expand([w for a in assignments for w in a.words], seen | {name})
        if node.type == "substitution_reference":
            pattern = self.source.node_text(node.child_by_field_name("pattern"))
            replacement = self.source.node_text(node.child_by_field_name("replacement"))
            inner.words = [_substitute(w, pattern, replacement) for w in inner.words]
        result.extend(inner)

    def _expand_function(self, word: Word, node, seen: frozenset[str], result: Expansion) -> None:
        arguments = next((c for c in node.children if c.type == "arguments"), None)
        if arguments is None:
            return
        atoms = atoms_under(arguments)
        args = _split_arguments(self.source, arguments, atoms)
        function = function_name(self.source, node)
        last_start, last_end = args[-1]
        inner = self.expand(words_of(self.source, last_start, last_end, atoms), seen)
        first = self.source.data[args[0][0]:args[0][1]].decode("utf-8", "replace").strip() if len(args) > 1 else ""
        if function == "patsubst" and len(args) == 3:
            replacement = self.source.data[args[1][0]:args[1][1]].decode("utf-8", "replace").strip()
            inner.words = [_substitute(w, first, replacement) for w in inner.words]
        elif function == "addprefix":
            inner.words = [Word(w.start, w.end, first + w.text, w.atoms) for w in inner.words]
        elif function == "addsuffix":
            inner.words = [Word(w.start, w.end, w.text + first, w.atoms) for w in inner.words]
        result.extend(inner)

    # ---- programs ------------------------------------------------------------------------
    def programs(self, word: Word, _seen: frozenset[str] = frozenset()) -> set[str]:
        """The file names (`nvcc`, `hipcc`, `g++`) a command word can run on the ROCm path.
        "" stands for a value this file does not know."""
        node = word.reference
        if node is not None and node.type == "variable_reference":
            name = reference_name(self.source, node)
            if name is None or name in _seen:
                return {""}
            assignments = self.values(name)
            if not assignments:
                return {_unset_program(name)}
            found: set[str] = set()
            for a in assignments:
                found |= self.programs(a.words[0], _seen | {name}) if a.words else {""}
            return found
        if node is not None and node.type == "shell_function":
            # `$(shell which nvcc)`, `$(shell command -v hipcc)`
            command = next((c for c in node.children if c.type == "shell_command"), None)
            text = self.source.node_text(command).split() if command is not None else []
            if not text or text[0] not in ("which", "command"):
                return {""}
            # The program looked up: the first operand, before any redirection or pipe.
            operands = []
            for token in text[1:]:
                if token in ("|", ";", "&&", "||") or ">" in token or "<" in token:
                    break
                if not token.startswith("-"):
                    operands.append(token)
            return {operands[0].rsplit("/", 1)[-1]} if operands else {""}
        if node is not None:
            return {""}
        tail = word.text.rsplit("/", 1)[-1].strip("\"'")
        if "$" in tail:
            inner = [a for a in word.atoms if a.start_byte >= word.end - len(tail.encode())]
            if len(inner) == 1 and inner[0].end_byte == word.end:
                return self.programs(Word(inner[0].start_byte, inner[0].end_byte,
                                          self.source.node_text(inner[0]), (inner[0],)), _seen)
            return {""}
        return {tail}

    def program_variables(self, word: Word, _seen: frozenset[str] = frozenset()) -> set[str]:
        """The variables through which a command word names its program: `$(GPUCXX)` where
        `GPUCXX = $(HIPCC)` goes through both."""
        node = word.reference
        if node is None or node.type != "variable_reference":
            return set()
        name = reference_name(self.source, node)
        if name is None or name in _seen:
            return set()
        found = {name}
        for a in self.values(name):
            if a.words:
                found |= self.program_variables(a.words[0], _seen | {name})
        return found

    def command_programs(self, command: Command) -> set[str]:
        """What `command` runs. A first word that may expand to nothing, or to `echo`
        (CUDA samples' `$(EXEC) $(NVCC) ...`), lets the second word count too."""
        cached = self._command_programs.get(id(command))
        if cached is not None:
            return cached
        found = self.programs(command.program)
        node = command.program.reference
        if node is not None and len(command.words) > 1 and node.type == "variable_reference":
            name = reference_name(self.source, node)
            assignments = self.values(name) if name else []
            maybe_empty = not assignments or all(a.conditional for a in assignments)
            if name not in BUILTIN_PROGRAMS and maybe_empty and not command.words[1].text.startswith("-"):
                found |= self.programs(command.words[1])
        self._command_programs[id(command)] = found
        return found

    def code_words(self):
        """Every word make reads outside comments: values, recipes, rules and includes."""
        for a in self.assignments:
            yield from a.words
        for c in self.commands:
            yield from c.words
        for r in self.rules:
            yield from r.targets
            yield from r.prerequisites
        yield from self.includes

    def code_texts(self):
        """`code_words` texts, plus conditions and `define` bodies."""
        for w in self.code_words():
            yield w.text
        for node in self.conditions + self.defines:
            yield self.source.node_text(node)


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _split_arguments(source: SourceFile, arguments, atoms: list) -> list[tuple[int, int]]:
    """Byte ranges of a function's comma-separated arguments (the grammar may keep them as one)."""
    ranges, start, i, k = [], arguments.start_byte, arguments.start_byte, 0
    inner = [a for a in atoms if arguments.start_byte <= a.start_byte < arguments.end_byte]
    while i < arguments.end_byte:
        if k < len(inner) and inner[k].start_byte == i:
            i = inner[k].end_byte
            k += 1
        elif source.data[i] == 0x2C:  # ","
            ranges.append((start, i))
            start = i = i + 1
        else:
            i += 1
    ranges.append((start, arguments.end_byte))
    return ranges


def _unset_program(name: str) -> str:
    """What `$(NAME)` runs when the file never sets it: make's default, or what the name says."""
    upper = name.upper()
    if name in BUILTIN_PROGRAMS:
        return BUILTIN_PROGRAMS[name]
    return "hipcc" if "HIPCC" in upper else "nvcc" if "NVCC" in upper else ""


def _substitute(word: Word, pattern: str, replacement: str) -> Word:
    """make's `patsubst` (and `$(VAR:a=b)`, where a pattern without `%` is a suffix)."""
    if "%" not in pattern:
        pattern, replacement = "%" + pattern, "%" + replacement
    head, _, tail = pattern.partition("%")
    text = word.text
    if text.startswith(head) and text.endswith(tail) and len(text) >= len(head) + len(tail):
        stem = text[len(head):len(text) - len(tail)]
        text = replacement.replace("%", stem, 1)
    return Word(word.start, word.end, text, word.atoms)


def _enclosing(node, kind: str):
    parent = node.parent
    while parent is not None and parent.type != kind:
        parent = parent.parent
    return parent


def read(source: SourceFile) -> Makefile:
    """The file's `Makefile`, built once (one query) and shared by every rule."""
    memo = getattr(source, "memo", None)
    if memo is None:
        return Makefile(source)
    if "makefile" not in memo:
        memo["makefile"] = Makefile(source)
    return memo["makefile"]
