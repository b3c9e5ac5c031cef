"""The ROCm-path model: which parts of a file are compiled when building for ROCm.

Every conditional (`#if`/`#ifdef` chains in C, `if()` in CMake, `if` in setup.py,
`ifeq`/`ifdef` in Makefiles) is read
as a chain of arms. Each arm's condition is evaluated twice, with three-valued logic
(True, False, None = undecidable): once for a ROCm build and once for a CUDA build.

- An arm not taken on ROCm is DEAD: CUDA-only code, already handled by the port.
- An arm taken on ROCm but never on CUDA is PORT: the ROCm port itself.
- An undecidable arm before a PORT arm of the same chain is its CUDA alternative: DEAD.
- Everything else is LIVE, including every undecidable arm: portlint reports there.

The engine drops findings outside LIVE code, so no rule has to remember to.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from enum import Enum

from portlint import queries
from portlint.source import CMAKE, CUDA, MAKE, PYTHON, TEXT_LANGUAGES, SourceFile

Value = bool | int | None  # for C: an int (None = unknown); elsewhere a truth value

# Macros a ROCm build defines, and ones it never defines (C/C++ preprocessor).
ROCM_DEFINED = frozenset(
    {"USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__",
     "HIP_VERSION", "__HIP_ROCclr__", "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR"}
)
ROCM_UNKNOWN = frozenset({"__HIP_DEVICE_COMPILE__", "__AMDGCN__", "__AMDGCN_WAVEFRONT_SIZE"})
CUDA_DEFINED = frozenset(
    {"__CUDACC__", "__NVCC__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__",
     "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__"}
)
# `__CUDA__`: clang in CUDA mode (not nvcc, not hip-clang).
CUDA_UNKNOWN = frozenset({"__CUDA_ARCH__", "__CUDA_ARCH_LIST__", "__CUDACC_RTC__", "__CUDA__"})
CUDA_ONLY = CUDA_DEFINED | CUDA_UNKNOWN | {"__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"}


class Status(str, Enum):
    LIVE = "live"
    DEAD = "dead"
    PORT = "port"


@dataclass(frozen=True)
class Arm:
    start: int  # body bytes
    end: int
    rocm: Value
    cuda: Value


@dataclass(frozen=True)
class Condition:
    """A parsed `#if`/`#ifdef`/`#elif` condition, for rules about the guards themselves."""

    directive: str  # "#if", "#ifdef", "#ifndef", "#elif", "#elifdef", "#elifndef"
    node: object  # the directive's node (preproc_if, preproc_ifdef, preproc_elif, ...)
    condition: object  # the condition's node (an expression, or the macro name)
    macros: frozenset[str]  # every identifier the condition mentions


@dataclass
class RocmPathModel:
    ranges: list[tuple[int, int, Status]] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    rocm_macros: frozenset[str] = frozenset()  # project macros a ROCm build defines (configuration)

    def status(self, offset: int) -> Status:
        result = Status.LIVE
        for start, end, status in self.ranges:
            if start <= offset < end:
                if status is Status.DEAD:
                    return Status.DEAD
                result = Status.PORT
        return result

    def is_live(self, offset: int) -> bool:
        return self.status(offset) is Status.LIVE

    def add_chain(self, arms: list[Arm]) -> None:
        taken_before_rocm: Value = False
        taken_before_cuda: Value = False
        statuses: list[Status | None] = []
        for arm in arms:
            rocm = _and(_not(taken_before_rocm), arm.rocm)
            cuda = _and(_not(taken_before_cuda), arm.cuda)
            if _truth(rocm) is False:
                statuses.append(Status.DEAD)
            elif _truth(cuda) is False:
                statuses.append(Status.PORT)
            else:
                statuses.append(None)
            taken_before_rocm = _or(taken_before_rocm, arm.rocm)
            taken_before_cuda = _or(taken_before_cuda, arm.cuda)
        if Status.PORT in statuses:
            first_port = statuses.index(Status.PORT)
            for i in range(first_port):
                if statuses[i] is None:
                    statuses[i] = Status.DEAD
        for arm, status in zip(arms, statuses):
            if status is not None and arm.end > arm.start:
                self.ranges.append((arm.start, arm.end, status))


# ---- three-valued logic over ints (C truth: nonzero) ---------------------------------
def _truth(v: Value) -> bool | None:
    return None if v is None else bool(v)


def _not(v: Value) -> Value:
    t = _truth(v)
    return None if t is None else (not t)


def _and(a: Value, b: Value) -> Value:
    ta, tb = _truth(a), _truth(b)
    if ta is False or tb is False:
        return False
    if ta is None or tb is None:
        return None
    return True


def _or(a: Value, b: Value) -> Value:
    ta, tb = _truth(a), _truth(b)
    if ta is True or tb is True:
        return True
    if ta is None or tb is None:
        return None
    return False


def build(source: SourceFile, rocm_macros: frozenset[str] = frozenset()) -> RocmPathModel:
    """The model for one file, by its language."""
    if source.language in TEXT_LANGUAGES:
        return RocmPathModel(rocm_macros=rocm_macros)  # requirements, pyproject.toml: no conditionals
    builder = {CUDA: _build_cuda, CMAKE: _build_cmake, PYTHON: _build_python, MAKE: _build_make}[source.language]
    model = builder(source, rocm_macros)
    model.rocm_macros = rocm_macros
    return model


# ---- C / C++ / CUDA / HIP --------------------------------------------------------------
_CHAIN_QUERY = "[(preproc_if) (preproc_ifdef)] @chain"
_ALTERNATIVES = ("preproc_elif", "preproc_elifdef", "preproc_else")
_INT = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)")
# Every `#if`/`#ifdef`/`#ifndef` token matches this (tree-sitter's is `#[ \t]*if`; line
# continuations let in to be safe). A file without one has no chain: its model needs no
# query, which spares the tree walk of the first shared query when no other reader needs it.
_CHAIN_START = re.compile(rb"#[ \t\\\r\n]*if")


class _MacroEnv:
    """What one build (ROCm or CUDA) knows about macros."""

    def __init__(self, defined: frozenset[str], unknown: frozenset[str], undefined: frozenset[str]):
        self.defined, self.unknown, self.undefined = defined, unknown, undefined

    def is_defined(self, name: str) -> Value:
        if name in self.defined:
            return True
        if name in self.undefined:
            return False
        return None

    def value(self, name: str) -> Value:
        # An undefined macro is 0 in `#if`; a defined one's value is not known here.
        return 0 if name in self.undefined else None


def _envs(rocm_macros: frozenset[str]) -> tuple[_MacroEnv, _MacroEnv]:
    rocm_defined = ROCM_DEFINED | rocm_macros
    rocm = _MacroEnv(rocm_defined, ROCM_UNKNOWN, CUDA_ONLY)
    cuda = _MacroEnv(CUDA_DEFINED, CUDA_UNKNOWN, rocm_defined | ROCM_UNKNOWN)
    return rocm, cuda


def _build_cuda(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    model = RocmPathModel()
    if not _CHAIN_START.search(source.data):
        return model
    rocm_env, cuda_env = _envs(rocm_macros)
    for chain in queries.nodes(CUDA, _CHAIN_QUERY, source.tree.root_node, "chain"):
        arms: list[Arm] = []
        node = chain
        while node is not None:
            directive = node.children[0].type if node.children else ""
            cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
            alternative = node.child_by_field_name("alternative")
            body_start = cond.end_byte if cond is not None else node.children[0].end_byte
            # The last arm ends at the chain's `#endif`: trailing comments attach to the head.
            body_end = alternative.start_byte if alternative is not None else _endif_start(chain)
            if directive == "#else":
                rocm = cuda = True
            else:
                rocm = _eval_directive(directive, cond, source, rocm_env)
                cuda = _eval_directive(directive, cond, source, cuda_env)
                model.conditions.append(
                    Condition(directive, node, cond, frozenset(_identifiers(cond, source)))
                )
            arms.append(Arm(body_start, body_end, rocm, cuda))
            node = alternative if alternative is not None and alternative.type in _ALTERNATIVES else None
        model.add_chain(arms)
    return model


def _endif_start(node) -> int:
    last = node.children[-1] if node.children else None
    if last is not None and last.type == "#endif":
        return last.start_byte
    return node.end_byte


def _identifiers(node, source: SourceFile):
    if node is None:
        return
    if node.type == "identifier":
        yield source.node_text(node)
    for child in node.children:
        yield from _identifiers(child, source)


def _eval_directive(directive: str, cond, source: SourceFile, env: _MacroEnv) -> Value:
    if cond is None:
        return None
    if directive in ("#ifdef", "#elifdef"):
        return env.is_defined(source.node_text(cond))
    if directive in ("#ifndef", "#elifndef"):
        return _not(env.is_defined(source.node_text(cond)))
    return _eval_expr(cond, source, env)


def _eval_expr(node, source: SourceFile, env: _MacroEnv) -> Value:
    kind = node.type
    if kind == "number_literal":
        m = _INT.match(source.node_text(node))
        if not m:
            return None
        digits = m.group(1)
        try:  # C octal `035000`; Python's int(..., 0) rejects a leading zero
            return int(digits, 8) if len(digits) > 1 and digits.startswith("0") and digits.isdigit() else int(digits, 0)
        except ValueError:  # `09`: not a valid C literal either
            return None
    if kind == "identifier":
        name = source.node_text(node)
        return {"true": 1, "false": 0}.get(name, env.value(name))
    if kind == "preproc_defined":
        names = [c for c in node.named_children if c.type == "identifier"]
        return env.is_defined(source.node_text(names[0])) if names else None
    if kind == "parenthesized_expression":
        inner = node.named_children
        return _eval_expr(inner[0], source, env) if inner else None
    if kind == "unary_expression":
        op = node.child_by_field_name("operator")
        arg = _eval_expr(node.child_by_field_name("argument"), source, env)
        if op is not None and op.type == "!":
            return _not(arg)
        if arg is None or op is None:
            return None
        return {"-": -arg, "+": arg, "~": ~arg}.get(op.type)
    if kind == "binary_expression":
        op = node.child_by_field_name("operator").type
        left = _eval_expr(node.child_by_field_name("left"), source, env)
        right = _eval_expr(node.child_by_field_name("right"), source, env)
        if op == "&&":
            return _and(left, right)
        if op == "||":
            return _or(left, right)
        if left is None or right is None:
            return None
        ops = {"==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
               "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b),
               "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b),
               "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
        return ops[op](left, right) if op in ops else None
    return None  # calls (`__has_include`, function-like macros) and anything else


# ---- CMake -----------------------------------------------------------------------------
_WORD = re.compile(r"[A-Za-z0-9]+")


def _mentions(text: str, extra: frozenset[str]) -> tuple[bool, bool]:
    """Does `text` name ROCm/HIP or CUDA (as a word part, e.g. USE_ROCM, HIP_FOUND)?"""
    words = {w.upper() for w in _WORD.findall(text)}
    rocm = bool(words & {"HIP", "ROCM", "AMDGPU", "HIPCC"}) or any(m in text for m in extra)
    cuda = bool(words & {"CUDA", "NVCC", "CUDATOOLKIT", "CUDNN"})
    return rocm, cuda


# Words that turn a platform name into its opposite: `SKIP_CUDA_BUILD`, `NO_HIP`.
_NEGATING_WORDS = frozenset({"SKIP", "NO", "DISABLE", "DISABLED", "WITHOUT"})


def _platform_atom(text: str, extra: frozenset[str]) -> tuple[Value, Value]:
    """(ROCm value, CUDA value) of a platform test that is true when it names its platform."""
    if {w.upper() for w in _WORD.findall(text)} & _NEGATING_WORDS:
        return None, None
    rocm, cuda = _mentions(text, extra)
    if rocm and not cuda:
        return True, False
    # A test that names CUDA (`CUDA_FOUND`, `torch.version.cuda`) says nothing certain about
    # either build (CPU builds, toolkits installed beside ROCm): undecidable in both.
    return None, None


def _build_cmake(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    model = RocmPathModel()
    for chain in queries.nodes(CMAKE, "(if_condition) @c", source.tree.root_node, "c"):
        arms: list[Arm] = []
        pending = None  # (rocm, cuda) of the command that opened the current body
        for child in chain.children:
            if child.type in ("if_command", "elseif_command", "else_command"):
                if child.type == "else_command":
                    pending = (True, True)
                else:
                    args = child.child_by_field_name("arguments") or _first(child, "argument_list")
                    words = _cmake_words(args, source) if args is not None else []
                    pending = _eval_cmake(words, rocm_macros)
            elif child.type == "body" and pending is not None:
                arms.append(Arm(child.start_byte, child.end_byte, *pending))
                pending = None
        model.add_chain(arms)
    return model


def _first(node, kind: str):
    return next((c for c in node.children if c.type == kind), None)


def _cmake_words(args, source: SourceFile) -> list[str]:
    return [source.node_text(a) for a in args.children if a.type == "argument"]


def _eval_cmake(words: list[str], extra: frozenset[str]) -> tuple[Value, Value]:
    """Evaluate `if()` arguments: NOT, AND, OR, parentheses; anything else is an atom."""
    pos = 0

    def parse_or():
        nonlocal pos
        left = parse_and()
        while pos < len(words) and words[pos] == "OR":
            pos += 1
            right = parse_and()
            left = (_or(left[0], right[0]), _or(left[1], right[1]))
        return left

    def parse_and():
        nonlocal pos
        left = parse_not()
        while pos < len(words) and words[pos] == "AND":
            pos += 1
            right = parse_not()
            left = (_and(left[0], right[0]), _and(left[1], right[1]))
        return left

    def parse_not():
        nonlocal pos
        if pos < len(words) and words[pos] == "NOT":
            pos += 1
            inner = parse_not()
            return (_not(inner[0]), _not(inner[1]))
        return parse_atom()

    def parse_atom():
        nonlocal pos
        if pos >= len(words):
            return (None, None)
        if words[pos] == "(":
            pos += 1
            inner = parse_or()
            if pos < len(words) and words[pos] == ")":
                pos += 1
            return inner
        # An atom runs until the next logical operator (`A STREQUAL "HIP"` is one atom).
        start = pos
        while pos < len(words) and words[pos] not in ("AND", "OR", ")"):
            pos += 1
        return _platform_atom(" ".join(words[start:pos]), extra)

    return parse_or()


# ---- Python (setup.py) -----------------------------------------------------------------
def _build_python(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    model = RocmPathModel()
    try:
        tree = source.python_ast
    except SyntaxError:
        return model
    elif_heads: set[int] = set()
    following = _statements_following_ifs(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and id(node) not in elif_heads:
            arms = []
            current = node
            every_arm_exits = True
            while True:
                value = _eval_python(current.test, rocm_macros)
                arms.append(Arm(*_stmts_range(source, current.body), *value))
                every_arm_exits = every_arm_exits and isinstance(current.body[-1], _EXITS)
                if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
                    current = current.orelse[0]
                    elif_heads.add(id(current))
                    continue
                if current.orelse:
                    arms.append(Arm(*_stmts_range(source, current.orelse), True, True))
                elif every_arm_exits and following.get(id(node)):
                    # `if torch.version.hip: return rocm_flags` makes the rest of the block
                    # its `else` arm.
                    arms.append(Arm(*_stmts_range(source, following[id(node)]), True, True))
                break
            model.add_chain(arms)
        elif isinstance(node, ast.IfExp):
            value = _eval_python(node.test, rocm_macros)
            model.add_chain([
                Arm(*source.python_range(node.body), *value),
                Arm(*source.python_range(node.orelse), True, True),
            ])
    return model


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _statements_following_ifs(tree: ast.AST) -> dict[int, list[ast.stmt]]:
    """For each `if` statement (by id), the statements after it in its block."""
    following: dict[int, list[ast.stmt]] = {}
    for node in ast.walk(tree):
        for _, block in ast.iter_fields(node):
            if isinstance(block, list):
                for i, stmt in enumerate(block):
                    if isinstance(stmt, ast.If):
                        following[id(stmt)] = block[i + 1:]
    return following


def _stmts_range(source: SourceFile, stmts: list[ast.stmt]) -> tuple[int, int]:
    # To the end of the last statement's line, so its trailing comment belongs to the arm.
    end = source.python_range(stmts[-1])[1]
    line = source.line_of(end)
    return source.python_range(stmts[0])[0], source.line_start(line) + len(source.line_bytes(line))


def python_condition(test: ast.expr, rocm_macros: frozenset[str] = frozenset()) -> tuple[Value, Value]:
    """(ROCm value, CUDA value) of a Python test, as the model reads `if` tests. For rules that
    look at conditions the model does not cut into arms (`not IS_HIP_EXTENSION and ...`)."""
    return _eval_python(test, rocm_macros)


def _eval_python(test: ast.expr, extra: frozenset[str]) -> tuple[Value, Value]:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        r, c = _eval_python(test.operand, extra)
        return _not(r), _not(c)
    if isinstance(test, ast.BoolOp):
        values = [_eval_python(v, extra) for v in test.values]
        combine = _and if isinstance(test.op, ast.And) else _or
        r, c = values[0]
        for vr, vc in values[1:]:
            r, c = combine(r, vr), combine(c, vc)
        return r, c
    if (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))):
        r, c = _eval_python(test.left, extra)
        return (r, c) if isinstance(test.ops[0], ast.IsNot) else (_not(r), _not(c))
    text = ast.unparse(test)
    if re.search(r"\btorch\.version\.cuda\b", text) and not _mentions(text, extra)[0]:
        # None on ROCm builds of torch; a CPU-only torch cannot build a CUDAExtension at all.
        return False, True
    return _platform_atom(text, extra)


# ---- Makefiles -------------------------------------------------------------------------
_MAKE_ARM_HEADS = ("elsif_directive", "else_directive")
# Values an `ifeq` compares a switch with: `ifeq ($(USE_ROCM),1)`, `ifeq ($(GPU),hip)`.
_MAKE_TRUE = frozenset({"1", "Y", "YES", "TRUE", "ON"})
_MAKE_FALSE = frozenset({"0", "N", "NO", "FALSE", "OFF"})
_MAKE_ROCM_VALUES = frozenset({"HIP", "ROCM", "AMD", "AMDGPU", "HIPCC"})
_MAKE_CUDA_VALUES = frozenset({"CUDA", "NVCC", "NVIDIA"})


def _build_make(source: SourceFile, rocm_macros: frozenset[str]) -> RocmPathModel:
    """`ifeq`/`ifneq`/`ifdef`/`ifndef` ... `else if...` ... `else` ... `endif` chains."""
    model = RocmPathModel()
    if b"if" not in source.data:
        return model
    for chain in queries.nodes(MAKE, "(conditional) @c", source.tree.root_node, "c"):
        head = chain.child_by_field_name("condition")
        if head is None:
            continue
        alternatives = [c for c in chain.children if c.type in _MAKE_ARM_HEADS]
        endif = next((c for c in chain.children if c.type == "endif"), None)
        head_end = alternatives[0].start_byte if alternatives else endif.start_byte if endif else chain.end_byte
        arms = [Arm(head.end_byte, head_end, *_eval_make_directive(head, source, rocm_macros))]
        for alt in alternatives:
            if alt.type == "else_directive":
                arms.append(Arm(alt.children[0].end_byte, alt.end_byte, True, True))
                continue
            cond = alt.child_by_field_name("condition")
            if cond is None:
                break
            arms.append(Arm(cond.end_byte, alt.end_byte, *_eval_make_directive(cond, source, rocm_macros)))
        model.add_chain(arms)
    return model


def _eval_make_directive(node, source: SourceFile, extra: frozenset[str]) -> tuple[Value, Value]:
    if node.type in ("ifdef_directive", "ifndef_directive"):
        name = node.child_by_field_name("variable")
        value = _platform_atom(source.node_text(name), extra) if name is not None else (None, None)
        return value if node.type == "ifdef_directive" else (_not(value[0]), _not(value[1]))
    if node.type in ("ifeq_directive", "ifneq_directive"):
        left, right = (_make_arg(node.child_by_field_name(f), source) for f in ("arg0", "arg1"))
        return _eval_make_comparison(left, right, node.type == "ifeq_directive", extra)
    return None, None


def _make_arg(node, source: SourceFile) -> str:
    if node is None:
        return ""  # `ifeq (,$(X))`: the grammar leaves an empty argument out
    text = source.node_text(node).strip()
    return text[1:-1] if node.type == "string" and len(text) >= 2 else text


def _eval_make_comparison(left: str, right: str, equal: bool, extra: frozenset[str]) -> tuple[Value, Value]:
    """`ifeq (SUBJECT,VALUE)`: a platform switch, a tool probe or a platform name compared
    with a constant. Two constants, or two expansions, are undecidable."""
    if ("$" in left) == ("$" in right):
        return None, None
    subject, value = (left, right) if "$" in left else (right, left)
    named = _platform_atom(subject, extra)  # true when the subject names its platform and is set
    word = value.upper()
    if not value or word in _MAKE_FALSE:
        result = (_not(named[0]), _not(named[1]))  # `ifeq ($(USE_ROCM),)`, `ifeq ($(shell which hipcc),)`
    elif word in _MAKE_TRUE:
        result = named
    elif word in _MAKE_ROCM_VALUES:
        result = (True, False)  # `ifeq ($(GPU_BACKEND),hip)`
    elif word in _MAKE_CUDA_VALUES and _mentions(subject, extra)[0]:
        result = (False, True)  # `ifeq ($(HIP_PLATFORM),nvidia)`: HIP on the CUDA toolchain
    else:
        result = _platform_atom(f"{subject} {value}", extra)
    return result if equal else (_not(result[0]), _not(result[1]))


# ---- one C condition under other assumptions (for the guard rules) --------------------
class _ValuedEnv(_MacroEnv):
    """A build in which some macros are defined with a known value."""

    def __init__(self, base: _MacroEnv, values: dict[str, int]):
        names = frozenset(values)
        super().__init__(base.defined | names, base.unknown - names, base.undefined - names)
        self._values = values

    def value(self, name: str) -> Value:
        return self._values[name] if name in self._values else super().value(name)


def evaluate(condition: Condition, source: SourceFile, rocm: bool, values: dict[str, int] | None = None) -> Value:
    """`condition` as a ROCm (or CUDA) build decides it, with `values` defining macros.

    Guard rules ask "what if": a CUDA device pass for sm_90 is `values={"__CUDA_ARCH__": 900}`.
    """
    model = source.rocm_path
    rocm_env, cuda_env = _envs(model.rocm_macros if model is not None else frozenset())
    env = rocm_env if rocm else cuda_env
    if values:
        env = _ValuedEnv(env, values)
    return _eval_directive(condition.directive, condition.condition, source, env)


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _CHAIN_QUERY,
)
