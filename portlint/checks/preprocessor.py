"""P: preprocessor guards that decide wrongly when hip-clang compiles the file.

These rules read the conditions the ROCm-path model has already parsed
(`source.rocm_path.conditions`); they never scan `#if` lines themselves.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace

from portlint import hipify
from portlint.checks.cpp import ancestors_of, memoized, token_nodes
from portlint.finding import Finding, Severity, at_node
from portlint.fix import Applicability, Edit, Fix
from portlint.build_model.expressions import tokens
from portlint.build_model.macros import read_directives
from portlint.rocm_path import ROCM_DEFINED, ROCM_UNKNOWN, Condition, Value, evaluate
from portlint.source import SourceFile
from portlint.triggers import needs

CUDA_ARCH = "__CUDA_ARCH__"
DEVICE_PASS = "defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)"
HOST_PASS = "!defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)"
# A condition naming one of these was written with HIP in mind (e.g. `__HIP_DEVICE_COMPILE__`).
HIP_MACROS = ROCM_DEFINED | ROCM_UNKNOWN
# `#ifdef X` spelled as an `#if`: directive -> (new directive, test for a device pass or not)
IFDEF_DIRECTIVES = {
    "#ifdef": ("if", DEVICE_PASS), "#ifndef": ("if", HOST_PASS),
    "#elifdef": ("elif", DEVICE_PASS), "#elifndef": ("elif", HOST_PASS),
}
_ARMS = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef")


class _NotAPassTest(Exception):
    """`__CUDA_ARCH__` used as a number (`>= 800`: P002's feature gate) or passed to a macro."""


def _message(negated: bool) -> str:
    if negated:
        return "hip-clang never defines `__CUDA_ARCH__`: device code compiles this host branch."
    return "hip-clang never defines `__CUDA_ARCH__`: device code takes the host branch."


def _chain(condition: Condition, source: SourceFile) -> list[Condition]:
    """Every condition of the `#if … #elif …` chain `condition` belongs to."""
    return memoized(source, "conditional chains", _chains)[condition.node.id]


def _chain_has(condition: Condition, source: SourceFile, question: str, arm_test) -> bool:
    """Does an arm of `condition`'s chain pass `arm_test`? Answered once per chain and
    `question`: asked for every arm, a long `#elif` chain was quadratic."""
    chain = _chain(condition, source)
    answers = memoized(source, f"chains: {question}", lambda s: {})
    if id(chain) not in answers:  # the chains live as long as the memo: their ids stay theirs
        answers[id(chain)] = any(arm_test(arm) for arm in chain)
    return answers[id(chain)]


def _chains(source: SourceFile) -> dict[int, list[Condition]]:
    """Each condition's chain (by node id), followed down from its `#if`: in tree-sitter a
    node's `parent` costs the node's depth, so climbing to the `#if` from every arm was
    quadratic in nested conditionals."""
    conditions = sorted(source.rocm_path.conditions, key=lambda c: c.node.start_byte)  # an `#if` before its `#elif`s
    by_node = {c.node.id: c for c in conditions}
    chains: dict[int, list[Condition]] = {}
    for condition in conditions:
        if condition.node.id in chains:
            continue
        chain = []
        node = condition.node
        while node is not None and node.type in _ARMS:
            if node.id in by_node:
                chain.append(by_node[node.id])
            node = node.child_by_field_name("alternative")
        for arm in chain:
            chains.setdefault(arm.node.id, chain)
    return chains


def _device_pass_tests(root, source: SourceFile) -> list[tuple[object, bool, bool]]:
    """(node to rewrite, negated, whether its replacement needs parentheses) for each truth
    test of `__CUDA_ARCH__` in an `#if` expression.

    Each node's parent is noted on the way down: in tree-sitter `node.parent` costs the
    node's depth in the file, so asking it in a long `#elif` chain was quadratic."""
    tests = []
    parents: dict[int, object] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "preproc_defined":
            if any(source.node_text(c) == CUDA_ARCH for c in current.named_children):
                tests.append(_with_negation(current, root, parents))
            continue
        if current.type == "identifier" and source.node_text(current) == CUDA_ARCH:
            if not _is_truth_value(current, root, parents):
                raise _NotAPassTest
            tests.append(_with_negation(current, root, parents))
            continue
        for child in current.named_children:
            parents[child.id] = current
            stack.append(child)
    return sorted(((node, negated, _needs_parentheses(node, root, negated, parents)) for node, negated in tests),
                  key=lambda t: t[0].start_byte)


def _is_truth_value(node, root, parents: dict) -> bool:
    """Is `node` read only for being true: the whole condition, or under `!`, `&&`, `||`?"""
    while node.id != root.id and parents[node.id].type == "parenthesized_expression":
        node = parents[node.id]
    if node.id == root.id:
        return True
    parent = parents[node.id]
    operator = parent.child_by_field_name("operator")
    return (parent.type in ("unary_expression", "binary_expression") and operator is not None
            and operator.type in ("!", "&&", "||"))


def _with_negation(test, root, parents: dict) -> tuple[object, bool]:
    """`!defined(X)` and `!(X)` are rewritten whole, as host-pass tests."""
    node = test
    while node.id != root.id and parents[node.id].type == "parenthesized_expression":
        node = parents[node.id]
    parent = parents.get(node.id) if node.id != root.id else None
    if parent is not None and parent.type == "unary_expression":
        operator = parent.child_by_field_name("operator")
        if operator is not None and operator.type == "!":
            return parent, True
    return test, False


def _needs_parentheses(node, root, negated: bool, parents: dict) -> bool:
    """Is the `||` (or `&&`) replacement embedded where it would bind differently?"""
    if node.id == root.id:
        return False
    parent = parents[node.id]
    if parent.type == "parenthesized_expression":
        return False
    if parent.type == "binary_expression":
        return parent.child_by_field_name("operator").type != ("&&" if negated else "||")
    return True


# Code that only nvcc compiles: a device-pass test widened to hip-clang's device pass would
# hand it to hip-clang (`static_assert(__CUDA_ARCH__ >= 750)`, PTX, WMMA, libcu++).
_NVIDIA_ONLY_CODE = re.compile(rb"\basm\b|\b__asm__\b|__CUDA_ARCH__|\bnvcuda::|\bwmma::|\b__nv_\w+"
                               rb"|\bcuda::(?:barrier|pipeline|std)\b")
_NVIDIA_ONLY_INCLUDE = re.compile(rb"<mma\.h>|<cuda/")  # a nested `#if __CUDA_ARCH__ >= N` is fine


def _is_nvidia_only(line: bytes) -> bool:
    return (_NVIDIA_ONLY_INCLUDE if line.lstrip().startswith(b"#") else _NVIDIA_ONLY_CODE).search(line) is not None


class _NvidiaOnlyLines:
    """Which lines of a file hold NVIDIA-only code, each line looked at once: a branch's
    question is then a search among line numbers. Reading every branch's text anew was
    quadratic in nested branches (4,000 nested `#ifdef __CUDA_ARCH__`: 6 s)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts: list[int] = []  # where each line starts (the lines of `bytes.splitlines`)
        self.ends: list[int] = []  # where its text ends (before the line break)
        flagged: list[int] = []  # the numbers of the lines that hold NVIDIA-only code
        offset = 0
        for number, line in enumerate(data.splitlines(keepends=True)):
            text = line.rstrip(b"\r\n")
            self.starts.append(offset)
            self.ends.append(offset + len(text))
            if _is_nvidia_only(text):
                flagged.append(number)
            offset += len(line)
        self.flagged = flagged

    def within(self, start: int, end: int) -> bool:
        """Does a line of `data[start:end]` (cut at both ends as the span cuts it) hold NVIDIA-only code?"""
        if start >= end:
            return False
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, end - 1) - 1
        if first == last:
            return _is_nvidia_only(self.data[start:min(end, self.ends[first])])
        if _is_nvidia_only(self.data[start:self.ends[first]]) or _is_nvidia_only(self.data[self.starts[last]:min(end, self.ends[last])]):
            return True
        at = bisect.bisect_right(self.flagged, first)
        return at < len(self.flagged) and self.flagged[at] < last


def _widening_fix(condition: Condition, source: SourceFile, title: str, *edits: Edit) -> Fix:
    """The safe rewrite, unless the directive's branches hold NVIDIA-only code that the wider
    test would expose to the ROCm device pass: then advice to guard that code first."""
    lines = memoized(source, "nvidia-only lines", lambda s: _NvidiaOnlyLines(s.data))
    if lines.within(condition.condition.end_byte, condition.node.end_byte):
        return Fix.advice(f"First guard the NVIDIA-only code of this branch with `#if !defined(__HIP_PLATFORM_AMD__)`"
                          f" (or give it a HIP arm); then {title[0].lower()}{title[1:]}")
    return Fix.safe(title, *edits)


def _ifdef_finding(condition: Condition, source: SourceFile) -> Finding:
    token = condition.node.children[0]
    directive, test = IFDEF_DIRECTIVES[condition.directive]
    hash_part = source.node_text(token)[: -len(condition.directive) + 1]  # keeps `#  ` spacing
    new = f"{hash_part}{directive} {test}"
    old = f"{condition.directive} {source.node_text(condition.condition)}"
    negated = test == HOST_PASS
    return at_node(
        source, condition.condition, _message(negated),
        _widening_fix(condition, source, f"Replace `{old}` with `{new.replace(hash_part, '#', 1)}`",
                      Edit(token.start_byte, condition.condition.end_byte, new)),
    )


@needs(b"__CUDA_ARCH__")
def check_cuda_arch_device_pass(source: SourceFile) -> list[Finding]:
    if b"__CUDA_ARCH__" not in source.data or source.rocm_path is None:
        return []
    if source.path.endswith(".c"):  # (`.C` is C++)
        return []  # C: nvcc and hipcc hand it to the host compiler, and neither has a device pass
    conditions = source.rocm_path.conditions
    findings = []
    for condition in conditions:
        if CUDA_ARCH not in condition.macros or condition.condition is None:
            continue
        if _chain_has(condition, source, "names a HIP macro", lambda arm: bool(arm.macros & HIP_MACROS)):
            continue  # written with HIP in mind (`#elif defined(__HIP_DEVICE_COMPILE__)`, ...)
        if source.shim(CUDA_ARCH, condition.node.start_byte) is not None:
            continue  # the ROCm build defines `__CUDA_ARCH__` itself (a shim header)
        if _decided_without_the_device_pass(condition, source):
            continue  # another test decides it on ROCm (`|| defined(MYLIB_ROCM)`, a macro the ROCm build defines)
        if _in_host_function(condition, source):
            continue  # no device pass compiles it, on CUDA either: both builds take the host branch
        if _leaves_out_declarations_only(condition, source):
            continue  # `#ifdef __CUDA_ARCH__` around device functions: hip-clang says where one is missed
        made = []
        if condition.directive in IFDEF_DIRECTIVES:
            made.append(_ifdef_finding(condition, source))
        else:
            try:
                tests = _device_pass_tests(condition.condition, source)
            except _NotAPassTest:
                continue
            for node, negated, parenthesized in tests:
                replacement = HOST_PASS if negated else DEVICE_PASS
                if parenthesized:
                    replacement = f"({replacement})"
                made.append(at_node(
                    source, node, _message(negated),
                    _widening_fix(condition, source, f"Replace `{source.node_text(node)}` with `{replacement}`",
                                  Edit.replace(node, replacement)),
                ))
        findings.extend(_as_flag_gate(f, condition, source) for f in made)
    return findings


def _as_flag_gate(f: Finding, condition: Condition, source: SourceFile) -> Finding:
    """A device-pass gate ROCm does not surely take that only defines feature flags (`#define
    X_FULL_HALF_ON_ARCH`), each tested with a working arm for the flag undefined (P002's
    reading, `_flag_fallbacks`): AMD's device code computes with those arms, the host
    pass's, as the project wrote them for a pass without the feature: a note, and the
    rewrite, which would switch the feature on for AMD, is no longer safe. Flags only other
    files test wait for the project pass (`Finding.open_flags`)."""
    if evaluate(condition, source, rocm=True) is True:
        return f  # (taken on ROCm by another test: its flags are defined there)
    flags = _flag_fallbacks(condition, source)
    if flags is None:
        return f
    names, line, untested = flags
    if untested:
        return replace(f, open_flags=untested)
    unsafe = replace(f.fix, applicability=Applicability.UNSAFE) if f.fix.is_applicable else f.fix
    message = (f"hip-clang never defines `__CUDA_ARCH__`, which leaves {names} undefined in AMD's device code: the "
               f"code that tests it compiles its fallback arms (the first on line {line})." if line is not None else
               f"hip-clang never defines `__CUDA_ARCH__`, which leaves {names} undefined in AMD's device code; the "
               "code that tests it has it defined there otherwise.")
    return replace(f, severity=Severity.NOTE, message=message, fix=unsafe)


def _in_host_function(condition: Condition, source: SourceFile) -> bool:
    """Is the conditional inside a host-only function (no `__device__`/`__global__`, no
    qualifier macro, nothing device-only in it, not `constexpr`, which device code may call)?"""
    from portlint.checks.wavefront_size import function_space

    function = _enclosing_function(condition.node)
    if function is None or function is _IN_LAMBDA or any(
            child.type == "type_qualifier" and source.node_text(child) == "constexpr" for child in function.children):
        return False  # (a lambda may be `__device__`, an extended lambda, inside a host function)
    return function_space(function, source) == "host"


_IN_LAMBDA = object()


def _in_gpu_only_function(condition: Condition, source: SourceFile) -> bool:
    """Is the conditional inside a function only a GPU compiler compiles: a kernel (`__global__`)
    or one that launches kernels (`k<<<grid, block>>>(...)`)? There the arm without NVIDIA's
    macros is no plain C++ compiler's: only hip-clang takes it."""
    function = _enclosing_function(condition.node)
    if function is None or function is _IN_LAMBDA:
        return False
    if any(child.type == "__global__" for child in function.children):
        return True
    body = function.child_by_field_name("body")
    return body is not None and b"<<<" in source.data[body.start_byte:body.end_byte] and bool(
        queries.nodes(CUDA, "(kernel_call_syntax) @launch", body, "launch"))


def _enclosing_function(node):
    """The function definition `node` is in, `_IN_LAMBDA` if a lambda comes first, else None.
    From the tree's spans of those nodes (`queries.nearest_ancestor`), not a climb to the root
    per conditional (quadratic in conditionals nested 20,000 deep)."""
    function = queries.nearest_ancestor(node, "function_definition")
    if function is NotImplemented:  # a tree parsed on its own: small
        function = next((a for a in queries.ancestors(node) if a.type in ("function_definition", "lambda_expression")),
                        None)
        found = _IN_LAMBDA if function is not None and function.type == "lambda_expression" else function
    else:
        lam = queries.nearest_ancestor(node, "lambda_expression")
        inner_lambda = lam is not None and (function is None or lam.start_byte > function.start_byte)
        found = _IN_LAMBDA if inner_lambda else function
    return found


def _decided_without_the_device_pass(condition: Condition, source: SourceFile) -> bool:
    """Does the ROCm build decide `condition` the same whether `__CUDA_ARCH__` is defined or
    not? Then its device-pass test changes nothing there."""
    undefined = evaluate(condition, source, rocm=True)
    return undefined is not None and undefined == evaluate(condition, source, rocm=True, values={CUDA_ARCH: 900})


# ---- P005: kernels whose `__global__` vanishes on ROCm ----------------------------------
# Imported here, not at the top, so that this section stays an append to the module.
from portlint.finding import Related  # noqa: E402
from portlint.project import (  # noqa: E402
    GLOBAL, MODULE_LOOKUPS, KernelDefinition, NamedUse, ProjectIndex, finding_at_definition,
)
from portlint.rocm_path import Status  # noqa: E402


def check_unmacroed_global(index: ProjectIndex) -> list[Finding]:
    """P005: a function launched as a kernel that is not `__global__` when built for ROCm."""
    findings = []
    for name in index.used_names():
        if not index.reports_definition_of(name):
            continue  # every finding would be at a definition in a context file
        named = [use for uses in index.uses_of(name) for use in uses if use.status is not Status.DEAD]
        if not named:
            continue
        if any(index.is_rocm_kernel(fn) for fn in index.rocm_definitions(name, load=False)):
            continue  # an overload (or another platform's variant) is the kernel
        definitions = index.rocm_definitions(name)
        if any(index.is_rocm_kernel(fn) for fn in definitions):
            continue
        related = tuple(Related(use.location, _use_note(use)) for use in named)
        # A name only looked up by string may be a host function sharing the name of a kernel
        # compiled elsewhere (hipRTC source in a string); a launch names this very function.
        launched = any(use.api not in MODULE_LOOKUPS for use in named)
        for fn in definitions:
            macro = _kernel_macro_empty_on_rocm(index, fn)
            if macro is not None:
                findings.append(finding_at_definition(
                    fn,
                    f"`{macro}` expands without `__global__` on ROCm, so `{name}` is not a kernel there.",
                    Fix.advice(
                        f"Define `{macro}` as `__global__` under `__HIPCC__` too: "
                        "`#if defined(__CUDACC__) || defined(__HIPCC__)`"
                    ),
                    related + tuple(
                        Related(m.location, f"`{macro}` is defined without `__global__` for ROCm here")
                        for m in index.rocm_macros(macro)
                    ),
                ))
            # Qualifiers the tree does not define may be `__global__`: cannot tell.
            elif launched and index.qualifiers_expand_to(fn, GLOBAL) is False:
                findings.append(finding_at_definition(
                    fn, f"Launched function `{name}` lacks `__global__`; the ROCm launch fails.",
                    _global_fix(fn, cuda_only_kernel=any(
                        other.has_global and other.status is Status.DEAD for other in index.functions[name]
                    )),
                    related,
                ))
    return findings


def _use_note(use: NamedUse) -> str:
    how = "looked up by name" if use.api in MODULE_LOOKUPS else "launched as a kernel"
    return f"`{use.name}` is {how} here"


def _kernel_macro_empty_on_rocm(index: ProjectIndex, fn: KernelDefinition) -> str | None:
    """The qualifier macro of `fn` that gives `__global__` only on CUDA-only paths, if any."""
    for qualifier in fn.qualifiers:
        definitions = index.macros.get(qualifier, ())
        on_rocm = index.rocm_macros(qualifier)
        if on_rocm and not any(GLOBAL.search(m.body) for m in on_rocm) and any(
            GLOBAL.search(m.body) for m in definitions
        ):
            return qualifier
    return None


def _global_fix(fn: KernelDefinition, cuda_only_kernel: bool) -> Fix:
    declaration = f"`__global__ void {fn.name}(...)`"
    if cuda_only_kernel:  # the guard picked the wrong variant, not the definition
        return Fix.advice(
            f"Compile the `__global__` variant of `{fn.name}` for ROCm too: "
            "`#if defined(__CUDACC__) || defined(__HIPCC__)`"
        )
    space = [s for s in fn.specifiers if s in ("__host__", "__device__")]
    if space:
        return Fix.advice(f"Replace `{' '.join(space)}` with `__global__`: {declaration}")
    if fn.qualifiers:  # project macros that are not `__global__`: where it goes is a human call
        return Fix.advice(f"Declare `{fn.name}` as {declaration}")
    return Fix.unsafe(
        f"Declare `{fn.name}` as {declaration}", Edit.insert(fn.return_type_point.start_byte, "__global__ ")
    )



# ---- P002, P003: guards that decide by macros only NVIDIA's toolchain defines -----------
# Imported here, not at the top, so that this section stays an append to the module.
import re  # noqa: E402
from collections.abc import Iterator  # noqa: E402

from portlint import queries  # noqa: E402
from portlint.checks.assembly import ASM_QUERY  # noqa: E402
from portlint.checks.cpp import (  # noqa: E402
    arguments, callee_name, enclosing_function, integer_value, open_constants, strip_parens)
from portlint.checks.libraries import library_for_header  # noqa: E402
from portlint.finding import finding  # noqa: E402
from portlint.source import CUDA  # noqa: E402

_WORD = re.compile(r"[A-Za-z0-9]+")
# Words of a macro name that say it was written for HIP: `GGML_USE_HIP`, `__HIP_PLATFORM_AMD__`.
_HIP_WORDS = frozenset({"HIP", "HIPCC", "ROCM", "AMD", "AMDGPU", "AMDGCN"})


def truth(value: Value) -> bool | None:
    """A condition's value as C reads it: nonzero is true; None stays undecidable."""
    return None if value is None else bool(value)


def _is_hip_macro(name: str, project_macros: frozenset[str]) -> bool:
    if name in HIP_MACROS or name in project_macros:
        return True
    return any(w.upper() in _HIP_WORDS or w.lower().startswith("gfx") for w in _WORD.findall(name))


def _chain_tests_hip(condition: Condition, source: SourceFile) -> bool:
    """Does any arm of the chain name a HIP macro (`__HIPCC__`, `__gfx942__`, a configured
    ROCm macro)? Then the chain was written with HIP in mind."""
    project_macros = source.rocm_path.rocm_macros
    return _chain_has(condition, source, "tests HIP", lambda arm: any(
        _is_hip_macro(m, project_macros) or _is_project_rocm_macro(m, arm, source) for m in arm.macros))


def _is_project_rocm_macro(name: str, arm: Condition, source: SourceFile) -> bool:
    """A project macro the builds define apart (`X_HIP`: 1 on ROCm, 0 on CUDA)."""
    return source.build is not None and source.build.is_project_rocm_macro(name, arm.node.start_byte)


def _unported_guards(source: SourceFile, macros) -> Iterator[Condition]:
    """The `#if`/`#elif` conditions that name one of `macros` in a chain not written with
    HIP in mind (P002, P003)."""
    conditions = source.rocm_path.conditions
    for condition in conditions:
        if condition.condition is not None and not condition.macros.isdisjoint(macros) \
                and not _chain_tests_hip(condition, source):
            yield condition


def _one_line(node, source: SourceFile) -> str:
    return " ".join(source.node_text(node).replace("\\\n", " ").split())


def _joined(condition: Condition, source: SourceFile, operator: str, test: str) -> str:
    """`condition` joined with `test` by `&&` or `||`, parenthesised only where needed."""
    node = strip_parens(condition.condition)
    text = _one_line(node, source)
    if condition.directive in ("#ifdef", "#elifdef", "#ifndef", "#elifndef"):
        text = ("!" if condition.directive.endswith("ndef") else "") + f"defined({text})"
    elif node.type == "conditional_expression" or (
            operator == "&&" and node.type == "binary_expression" and node.child_by_field_name("operator").type == "||"):
        text = f"({text})"
    return f"{text} {operator} {test}"


def _fallback_on_rocm(condition: Condition, source: SourceFile):
    """The later arm of `condition`'s chain that ROCm surely takes (`_arm_taken_on_rocm`) as
    (node, body), when it holds code and no `#error`: AMD then compiles an alternative (`#if
    __CUDA_ARCH__ >= 800` fast path, `#else` generic path). None when ROCm takes no later arm,
    the choice is undecidable, or that arm is empty or fails."""
    taken = _arm_taken_on_rocm(condition, source)
    return taken if taken is not None and _working_arm(taken[1], source) else None


# Calls that end a device thread's work: the stub arm of a gate ("unsupported here").
_TRAP_CALLS = frozenset({"__trap", "__builtin_trap", "abort", "std::abort", "__assertfail", "__assert_fail"})
_LITERALS = frozenset({"number_literal", "char_literal", "true", "false", "null", "nullptr"})
_CONSTANT_WRAPPERS = frozenset({
    "parenthesized_expression", "unary_expression", "binary_expression", "cast_expression", "initializer_list",
    "compound_literal_expression"})


def _stub_kind(body: list, source: SourceFile) -> str | None:
    """What a function body's arm does where it is a stub, not an alternative: "traps"
    (`__trap()`, `assert(0)`, `asm("trap;")`, whatever follows) or "returns a constant"
    (`return 0;`, `return make_double2(0., 0.);`, `return ZERO;` with `#define ZERO 0.0` in
    the file); else None. A name that may hold a value (a member, a global, `warpSize`, a
    macro defined elsewhere), a call without arguments (`clock64()`) or a bare `return;` is
    no constant: when in doubt, the arm is an alternative."""
    code = [node for node in body if node.type != "comment"]
    if not code or enclosing_function(code[0]) is None:
        return None
    returns = False
    for node in code:
        if node.type == "expression_statement" and _traps(node, source):
            return "traps"
        if node.type == "expression_statement" and _prints(node, source):
            continue  # `printf("not supported\\n");` before the trap or the return
        if node.type != "return_statement":
            return None
        value = next((c for c in node.named_children if c.type != "comment"), None)
        if value is None or not _constant_expression(value, source):
            return None
        returns = True
    return "returns a constant" if returns else None


def _constant_expression(node, source: SourceFile, depth: int = 0) -> bool:
    """Is an expression made of literals only: literals, arithmetic and casts of them, calls
    and braces given only such arguments (`make_double2(0., 0.)`, `T(0)`), or a name this
    file defines as a literal (`#define ZERO 0.0`)?"""
    if depth > 16:
        return False
    if node.type in _LITERALS:
        return True
    if node.type == "identifier":
        return open_constants(source).is_number(source.node_text(node))
    if node.type == "call_expression":
        args = [a for a in arguments(node) if a.type != "comment"]
        return bool(args) and all(_constant_expression(a, source, depth + 1) for a in args)
    if node.type in _CONSTANT_WRAPPERS:
        parts = [c for c in node.named_children if c.type not in ("comment", "type_descriptor")]
        return bool(parts) and all(_constant_expression(c, source, depth + 1) for c in parts)
    return False


def _prints(statement, source: SourceFile) -> bool:
    expression = next((c for c in statement.named_children if c.type != "comment"), None)
    return expression is not None and expression.type == "call_expression" and \
        callee_name(expression, source) in ("printf", "std::printf")


def _traps(statement, source: SourceFile) -> bool:
    """`__trap();`, `abort();`, `assert(0);`/`assert(false && "why");` or `asm("trap;");`."""
    expression = next((c for c in statement.named_children if c.type != "comment"), None)
    if expression is None:
        return False
    if expression.type == "gnu_asm_expression":
        return "trap" in source.node_text(expression)
    if expression.type != "call_expression":
        return False
    name = callee_name(expression, source)
    if name in _TRAP_CALLS:
        return True
    args = [strip_parens(a) for a in arguments(expression) if a.type != "comment"]
    if name != "assert" or len(args) != 1:
        return False
    test = args[0]
    while test.type == "binary_expression" and source.node_text(test.child_by_field_name("operator")) == "&&":
        test = strip_parens(test.child_by_field_name("left"))  # `assert(0 && "unsupported")`
    return source.node_text(test) in ("0", "false")


def _flag_fallbacks(condition: Condition, source: SourceFile) -> tuple[str, int | None, tuple[str, ...]] | None:
    """An arm (with no other arm) that only defines feature flags (`#define USE_WMMA_FRAG`),
    each tested in this file only by `#ifdef`/`#if defined(...)` chains that have a working
    arm for it undefined (`#else`), or that ROCm takes all the same (the flag defined there
    otherwise): ROCm leaves the flags undefined and so compiles those arms. (`names` as the
    message says them, the first fallback's line, the flags this file never tests: other
    files decide those, `Finding.open_flags`), else None."""
    if condition.node.child_by_field_name("alternative") is not None or len(_chain(condition, source)) != 1:
        return None
    flags = []
    for node in _arm_body(condition):
        if node.type == "comment":
            continue
        if node.type != "preproc_def" or node.child_by_field_name("name") is None:
            return None
        flags.append(node.child_by_field_name("name"))
    if not flags:
        return None
    first_line, untested = None, []
    for flag in flags:
        name = source.node_text(flag)
        holds, fallbacks = flag_tests_on_rocm(source, name)
        if holds is None:
            untested.append(name)  # tested in an includer, or not at all: out of view here
            continue
        if not holds:
            return None
        lines = [source.line_of(f.start_byte) + 1 for f in fallbacks]
        first_line = min([first_line, *lines] if first_line is not None else lines) if lines else first_line
    shown = ", ".join(f"`{source.node_text(f)}`" for f in flags)
    return shown, first_line, tuple(untested)


def flag_tests_on_rocm(source: SourceFile, name: str) -> tuple[bool | None, list]:
    """How the ROCm build meets the tests of feature flag `name` in `source`: (None, []) where
    nothing tests it; (True, the fallback arms it compiles) where each `#ifdef`/`#if`/`#if
    defined(...)` of it either has a working arm for it undefined or is taken on ROCm all the
    same (a definition of its own there: the arm holds live code); (False, []) where one
    leaves code out, or the name is read as a value or in code."""
    uses = [n for n in token_nodes(source, name.encode()) if source.node_text(n) == name
            and not any(a.type == "preproc_def" for a in ancestors_of(n))]
    if not uses:
        return None, []
    fallbacks = []
    for use in uses:
        directive = next((a for a in ancestors_of(use) if a.type in ("preproc_ifdef", "preproc_if", "preproc_elif",
                                                                      "preproc_elifdef")), None)
        test = directive.child_by_field_name("condition") or directive.child_by_field_name("name") \
            if directive is not None else None
        if test is None or not test.start_byte <= use.start_byte < test.end_byte:
            return False, []  # read as a value, or in code: not a choice between arms
        fallback = _flag_off_arm(directive, source)
        if fallback is not None:
            fallbacks.append(fallback)
        elif not _flag_on_arm_taken(directive, test, source):
            return False, []
    return True, fallbacks


def _flag_on_arm_taken(directive, test, source: SourceFile) -> bool:
    """Does ROCm compile the arm of an `#ifdef FLAG` / `#if FLAG` that holds for the flag
    defined (the flag has a definition of its own there)?"""
    if directive.type == "preproc_ifdef" and source.node_text(directive.children[0]).strip() == "#ifndef":
        return False
    body = _first_arm(directive, test)
    return bool(body) and source.rocm_path is not None and source.rocm_path.status(body[0].start_byte) is not Status.DEAD


def _first_arm(directive, test) -> list:
    """The nodes of a conditional's first arm (after its test, before any `#elif`/`#else`),
    comments left out."""
    alternative = directive.child_by_field_name("alternative")
    end = alternative.start_byte if alternative is not None else directive.end_byte
    return [c for c in directive.named_children if c.start_byte >= test.end_byte and c.end_byte <= end
            and c.type != "comment"]


def _flag_off_arm(directive, source: SourceFile):
    """The arm of an `#ifdef FLAG` / `#if defined(FLAG)` (`#ifndef FLAG`: its own) compiled with
    the flag undefined, when it holds code, else None."""
    if directive.type == "preproc_ifdef" and source.node_text(directive.children[0]).strip() == "#ifndef":
        body = _first_arm(directive, directive.child_by_field_name("name"))
        return body[0] if body and _working_arm(body, source) else None
    alternative = directive.child_by_field_name("alternative")
    if alternative is None or alternative.type != "preproc_else":
        return None
    return alternative if _working_arm(alternative.named_children, source) else None


def _arm_taken_on_rocm(condition: Condition, source: SourceFile):
    """The later arm of `condition`'s chain that ROCm surely takes (an `#elif` true there, or
    the `#else`) as (node, its body), or None (no later arm, or the choice is undecidable)."""
    chain = _chain(condition, source)
    later = chain[chain.index(condition) + 1:] if condition in chain else []
    for arm in later:
        taken = truth(evaluate(arm, source, rocm=True))
        if taken is None:
            return None
        if taken:
            return arm.node, _arm_body(arm)
    last = chain[-1].node if chain else condition.node
    alternative = last.child_by_field_name("alternative")
    if alternative is None or alternative.type != "preproc_else":
        return None
    return alternative, alternative.named_children


def _working_arm(body: list, source: SourceFile) -> bool:
    """Does an arm hold code (not only comments) and no `#error`?"""
    code = [node for node in body if node.type != "comment"]
    return bool(code) and not any(
        node.type == "preproc_call" and source.node_text(node).lstrip("# \t").startswith("error") for node in code)


# ---- P002: `__CUDA_ARCH__ >= 700` feature gates -------------------------------------------
_COMPARISONS = frozenset({">=", ">", "<=", "<", "==", "!="})
# NVIDIA architectures a gate is tried with (besides the numbers it compares with).
_ARCH_PROBES = (100, 300, 350, 500, 530, 600, 610, 700, 720, 750, 800, 860, 870, 890, 900, 1000, 1200)
GFX_GATE = "defined(__gfx90a__) || defined(__gfx942__)"


def _arch_comparisons(root, source: SourceFile) -> list:
    """`__CUDA_ARCH__ >= 700`, `800 <= __CUDA_ARCH__`, ... anywhere in a condition."""
    found = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "binary_expression" and node.child_by_field_name("operator").type in _COMPARISONS:
            sides = (strip_parens(node.child_by_field_name("left")), strip_parens(node.child_by_field_name("right")))
            if any(s is not None and s.type == "identifier" and source.node_text(s) == CUDA_ARCH for s in sides):
                found.append(node)
                continue
        stack.extend(node.named_children)
    return sorted(found, key=lambda n: n.start_byte)


def _arch_probes(comparisons, source: SourceFile) -> list[int]:
    probes = set(_ARCH_PROBES)
    for comparison in comparisons:
        for side in ("left", "right"):
            value = integer_value(strip_parens(comparison.child_by_field_name(side)), source)
            if value is not None:
                probes |= {value - 1, value, value + 1}
    return sorted(p for p in probes if p > 0)


def _gate_kind(condition: Condition, source: SourceFile, comparisons) -> str | None:
    """"feature" when the arm is taken on some newer NVIDIA GPUs but never on AMD; "legacy"
    when AMD takes an arm that only older NVIDIA GPUs take; None when AMD is not misled."""
    on_rocm = truth(evaluate(condition, source, rocm=True))
    probes = _arch_probes(comparisons, source)
    on_nvidia = {p: truth(evaluate(condition, source, rocm=False, values={CUDA_ARCH: p})) for p in probes}
    oldest, newest = on_nvidia[probes[0]], on_nvidia[probes[-1]]
    if on_rocm is False and oldest is False and any(v is not False for v in on_nvidia.values()):
        return "feature"
    if on_rocm is True and newest is False and oldest is True:
        return "legacy"
    if on_rocm is False and oldest is True and newest is False:
        return "newer"  # `defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800`: AMD takes the later arm
    return None


def _inline_ptx_in(body: list) -> list:
    """The inline assembly statements under the nodes of an arm, in order."""
    return [asm for node in body for asm in queries.nodes(CUDA, ASM_QUERY, node, "asm")]


def _architecture_gate(condition: Condition, source: SourceFile):
    """(the `__CUDA_ARCH__` comparisons, the gate's kind) where P002 reports the condition,
    else None (P003 leaves such a condition to it)."""
    comparisons = _arch_comparisons(condition.condition, source)
    if not comparisons:
        return None
    kind = _gate_kind(condition, source, comparisons)
    return (comparisons, kind) if kind is not None else None


@needs(b"__CUDA_ARCH__")
def check_cuda_arch_feature_gate(source: SourceFile) -> list[Finding]:
    """P002: an `#if` on the NVIDIA architecture number decides AMD's path by accident."""
    if b"__CUDA_ARCH__" not in source.data or source.rocm_path is None:
        return []
    findings = []
    for condition in _unported_guards(source, (CUDA_ARCH,)):
        gate = _architecture_gate(condition, source)
        if gate is None:
            continue
        comparisons, kind = gate
        if kind == "feature" and _leaves_out_declarations_only(condition, source):
            continue  # half-precision helpers for newer GPUs: a call elsewhere does not compile
        if kind == "feature" and _checks_only(condition):
            continue  # `static_assert`s for newer GPUs: compile-time checks, no code left out
        culprit = comparisons[0] if len(comparisons) == 1 else condition.condition
        gate = _one_line(culprit, source)
        severity = None
        open_flags: tuple[str, ...] = ()
        if kind == "feature":
            message = f"`{gate}` is never true on AMD; the code it gates is compiled out."
            fallback = _fallback_on_rocm(condition, source)
            flags = _flag_fallbacks(condition, source) if fallback is None else None
            stub = _stub_kind(fallback[1], source) if fallback is not None else None
            if stub is not None and _stub_kind(_arm_body(condition), source) is not None:
                stub = None  # `return true;` / `return false;`: a capability answer, not a stub
            if fallback is not None and stub is not None:
                line = source.line_of(fallback[0].start_byte) + 1
                message = (f"`{gate}` is never true on AMD, which compiles the fallback arm (line {line}): a stub "
                           f"that {stub}, so the work the gate guards is not done there.")
            elif fallback is not None:
                line = source.line_of(fallback[0].start_byte) + 1
                message = (f"`{gate}` is never true on AMD, which compiles the fallback arm (line {line}) "
                           "instead of the code it gates.")
                severity = Severity.NOTE  # a working alternative: speed at most
            elif flags is not None and flags[2]:
                open_flags = flags[2]  # tested only in other files: the project pass judges it
            elif flags is not None:
                names, line, _ = flags
                message = (f"`{gate}` is never true on AMD, which leaves {names} undefined: the code that "
                           f"tests it compiles its fallback arms (the first on line {line})." if line is not None else
                           f"`{gate}` is never true on AMD, which leaves {names} undefined; the code that tests it "
                           "has it defined there otherwise.")
                severity = Severity.NOTE  # the same working alternatives, one step removed
            fix = Fix.advice(
                f"Gate AMD on its own targets: `#if {_joined(condition, source, '||', GFX_GATE)}` (those with "
                "the feature), or test a `__HIP_ARCH_HAS_*__` or project feature macro")
        elif kind == "newer":
            # AMD skips the arm for older GPUs and compiles the one for the newest: a hazard
            # where that arm is written in PTX (`cp.async`, `mma.sync`), which AMD cannot assemble.
            taken = _arm_taken_on_rocm(condition, source)
            ptx = _inline_ptx_in(taken[1]) if taken is not None else []
            if not ptx:
                continue
            line = source.line_of(taken[0].start_byte) + 1
            message = (f"`{gate}` is false on AMD, which compiles the arm for newer NVIDIA GPUs (line {line}): "
                       "it is written in inline PTX, which AMD cannot assemble.")
            related = tuple(Related(source.location(a.start_byte, a.end_byte), "inline PTX in the arm AMD compiles")
                            for a in ptx[:20])
            fix = Fix.advice(
                "Give AMD its own arm before the PTX one (`#elif defined(__HIP_PLATFORM_AMD__)`), or, where the "
                f"older arm is portable code, send AMD there: `#if {_joined(condition, source, '||', 'defined(__HIP_PLATFORM_AMD__)')}`")
            findings.append(at_node(source, culprit, message, fix, related=related))
            continue
        else:
            message = f"`{gate}` is always true on AMD; code for old NVIDIA GPUs is compiled."
            fix = Fix.advice(
                f"Leave AMD out of the legacy arm: `#if {_joined(condition, source, '&&', '!defined(__HIP_PLATFORM_AMD__)')}`")
        made = at_node(source, culprit, message, fix, severity=severity)
        findings.append(replace(made, open_flags=open_flags) if open_flags else made)
    return findings


# ---- P003: `__CUDACC__`, `CUDA_VERSION`, ... deciding code paths ---------------------------
# NVIDIA-only macro -> what a HIP build tests instead.
NVCC_ONLY_MACROS = {
    "__CUDACC__": "__HIPCC__",
    "__NVCC__": "__HIP__",
    "__CUDACC_VER_MAJOR__": "HIP_VERSION_MAJOR",
    "__CUDACC_VER_MINOR__": "HIP_VERSION_MINOR",
    "__CUDACC_VER_BUILD__": "HIP_VERSION_PATCH",
    "CUDART_VERSION": "HIP_VERSION",
    "CUDA_VERSION": "HIP_VERSION",
    "__CUDA__": "__HIP__",  # clang's CUDA mode: `defined(__clang__) && defined(__CUDA__)`
}
_NVCC_MARKERS = (b"__CUDACC", b"__NVCC__", b"CUDART_VERSION", b"CUDA_VERSION", b"__CUDA__")
_PLATFORM_TEST = {  # what stands in the HIP test for a compiler-version macro
    "HIP_VERSION_MAJOR": "__HIPCC__", "HIP_VERSION_MINOR": "__HIPCC__", "HIP_VERSION_PATCH": "__HIPCC__",
    "HIP_VERSION": "__HIP_PLATFORM_AMD__",
}


# CUDA's own headers (the libraries' are in `libraries.py`): an arm that only includes
# NVIDIA's headers is meant to be left out on ROCm.
_CUDA_RUNTIME_HEADER = re.compile(r"^(cuda\w*\.h|cuda/|crt/|device_launch_parameters\.h|mma\.h|sm_\d+_\w+\.h)")


def _is_nvidia_header(path: str) -> bool:
    return bool(_CUDA_RUNTIME_HEADER.match(path)) or library_for_header(path) is not None


def _arm_body(condition: Condition) -> list:
    """The nodes an `#if`/`#elif` arm controls (up to its `#elif`/`#else`)."""
    node, cond = condition.node, condition.condition
    alternative = node.child_by_field_name("alternative")
    return [c for c in node.named_children if c.start_byte >= cond.end_byte
            and (alternative is None or c.start_byte < alternative.start_byte)]


_JUMPS = frozenset({"break_statement", "continue_statement", "return_statement"})
_ENDS_FLOW = frozenset({"break_statement", "continue_statement", "return_statement", "goto_statement"})


def _only_unreachable_jumps(condition: Condition, on_rocm: bool) -> bool:
    """Is the arm, where ROCm compiles it, only jumps that stand after a statement control
    never passes (`throw ...;` then `break;` or `return 0;`, kept for other compilers'
    "missing return" warnings): unreachable? (An access specifier is no such arm: code
    outside the class may use what nvcc sees public.)"""
    body = [n for n in _arm_body(condition) if n.type != "comment"]
    if not body or not on_rocm or condition.node.type not in ("preproc_if", "preproc_ifdef") \
            or not all(n.type in _JUMPS for n in body):
        return False  # (an `#elif` follows the arms before it, which other builds may skip)
    before = condition.node.prev_named_sibling
    while before is not None and before.type == "comment":
        before = before.prev_named_sibling
    return _ends_flow(before, 0)


def _ends_flow(node, depth: int, in_switch: bool = False) -> bool:
    """Does control never pass the statement `node` (a `throw`, a jump; a block, a `case` or
    an `if` with an `else` whose every path ends so; a `switch` with a `default` whose every
    case ends so other than by `break`, which leaves the switch to what follows it)?"""
    if node is None or depth > 16:
        return False
    if in_switch and node.type == "break_statement":
        return False
    if node.type in _ENDS_FLOW or node.type == "throw_statement":
        return True
    if node.type == "switch_statement":
        body = node.child_by_field_name("body")
        cases = _switch_cases(body) if body is not None else None
        if not cases:
            return False
        bodies = [[s for s in c.named_children if s.type != "comment"][1 if c.child_by_field_name("value") else 0:]
                  for c in cases]
        return (any(c.child_by_field_name("value") is None for c in cases) and bool(bodies[-1])
                and all(not b or _ends_flow(b[-1], depth + 1, True) for b in bodies))
    if node.type == "expression_statement":
        return node.named_child_count == 1 and node.named_children[0].type == "throw_expression"
    if node.type in ("compound_statement", "case_statement", "else_clause"):
        statements = [c for c in node.named_children if c.type != "comment"]
        if node.type == "case_statement" and statements and node.child_by_field_name("value") is not None:
            statements = statements[1:]  # (the case's value)
        return bool(statements) and _ends_flow(statements[-1], depth + 1, in_switch)
    if node.type == "if_statement":
        alternative = node.child_by_field_name("alternative")
        return alternative is not None and _ends_flow(node.child_by_field_name("consequence"), depth + 1, in_switch) \
            and _ends_flow(alternative, depth + 1, in_switch)
    return False


def _switch_cases(body, depth: int = 0) -> list | None:
    """The `case`s of a switch body, through the `#if` arms around some (`#ifdef USE_X case
    X: ... #endif`); None where it holds anything else (or arms nested too deep to follow)."""
    if depth > 16:
        return None
    cases = []
    for child in body.named_children:
        if child.type == "case_statement":
            cases.append(child)
        elif child.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"):
            tests = {n.id for n in (child.child_by_field_name("condition"), child.child_by_field_name("name"))
                     if n is not None}
            holder = _Children([c for c in child.named_children if c.id not in tests])
            inner = _switch_cases(holder, depth + 1)
            if inner is None:
                return None
            cases.extend(inner)
        elif child.type != "comment":
            return None
    return cases


class _Children:
    """A list of nodes read as a node's named children (an `#if` arm without its test)."""

    def __init__(self, nodes):
        self.named_children = nodes


def _toolchain_only(body: list, source: SourceFile, taken_on_rocm: bool) -> bool:
    """Does the arm hold only what is right to leave to one toolchain: pragmas, comments,
    and includes (of NVIDIA's headers, for an arm ROCm leaves out)?"""
    for node in body:
        if node.type == "comment":
            continue
        if node.type == "preproc_call" and source.node_text(node).lstrip("# \t").startswith("pragma"):
            continue
        if node.type == "expression_statement" and source.node_text(node).startswith("_Pragma"):
            continue
        if node.type == "preproc_include":
            path = node.child_by_field_name("path")
            if taken_on_rocm or (path is not None and _is_nvidia_header(source.node_text(path).strip('<>"'))):
                continue
        return False
    return True


# What the CUDA language adds to C++: its qualifiers, built-in variables, barrier and launch.
_CUDA_LANGUAGE = re.compile(
    rb"(?<!\w)(?:__host__|__device__|__global__|__shared__|__constant__|__managed__|__launch_bounds__"
    rb"|threadIdx|blockIdx|blockDim|gridDim|warpSize|__syncthreads|__syncwarp)(?!\w)|<<<|#\s*include\s*[<\"]cuda")
_CUDA_API_WORD = re.compile(rb"(?<!\w)cu[A-Za-z]\w*")


def _holds_cuda_language(condition: Condition, source: SourceFile) -> bool:
    """Does the arm `condition` controls hold CUDA code (a qualifier, a built-in variable, a
    launch, a CUDA header, a CUDA API name)? `__NVCC__` names nvcc, the compiler, not the
    language (clang compiling CUDA leaves it undefined too): an arm without CUDA code in it is
    about nvcc's front end (its pragmas, its workarounds, the project's name for the
    compiler), and hip-clang, another compiler, rightly skips it or takes the other arm."""
    body = _arm_body(condition)
    if not body:
        return False
    text = _code_only(source.data, body[0].start_byte, body[-1].end_byte, body)
    return bool(_CUDA_LANGUAGE.search(text)) or any(
        hipify.documented(m.group().decode()) for m in _CUDA_API_WORD.finditer(text))


_NOT_CODE = frozenset({"string_literal", "raw_string_literal", "char_literal", "comment"})


def _code_only(data: bytes, start: int, end: int, nodes) -> bytes:
    """`data[start:end]` with string literals (but an `#include`'s) and comments blanked: the
    words of a `static_assert`'s message ("__host__ __device__ lambdas ...") are not code."""
    text = bytearray(data[start:end])
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.type in _NOT_CODE:
            text[node.start_byte - start:node.end_byte - start] = b" " * (node.end_byte - node.start_byte)
        elif node.child_count and node.type != "preproc_include":  # (`#include "cuda_fp16.h"` names a header)
            stack.extend(node.children)
    return bytes(text)


def _leaves_out_declarations_only(condition: Condition, source: SourceFile) -> bool:
    """Is `condition` an `#if`/`#ifdef` with no other arm, false on ROCm, around declarations
    and definitions of functions (members included) that nothing else in the file declares or
    names where the ROCm build compiles? Leaving those out changes nothing there (the CUDA-only
    features a port drops on purpose: CUDA graphs, a CUB helper); code elsewhere that calls one
    does not compile, and hip-clang says where. An overload or specialization declared beside
    it may be chosen in its place (a `template <>` specialization, an overload of a toolchain
    function such as `__ldcs` or `atomicAdd`): not these."""
    if condition.node.child_by_field_name("alternative") is not None or len(_chain(condition, source)) != 1:
        return False
    body = _arm_body(condition)
    names = set()
    for node in body:
        if node.type == "comment":
            continue
        while node.type == "template_declaration":
            parameters = node.child_by_field_name("parameters")
            if parameters is not None and not parameters.named_children:
                return False  # `template <>`: a specialization, chosen in the primary's place
            if not node.named_children:
                return False
            node = node.named_children[-1]
        declarator = node.child_by_field_name("declarator") if node.type in (
            "function_definition", "declaration", "field_declaration") else None
        while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
            declarator = declarator.child_by_field_name("declarator") or declarator.named_children[-1]
        if declarator is None or declarator.type != "function_declarator":
            return False
        declared = declarator.child_by_field_name("declarator")
        if declared is None:
            return False  # a declarator the parse lost
        name = source.node_text(declared).split("<", 1)[0].strip()
        if hipify.documented(name):
            return False  # an overload of the toolchain's own (`__ldcs` for bf16, `atomicAdd`)
        names.add(name)
    if not names or truth(evaluate(condition, source, rocm=True)) is not False:
        return False
    start, end = body[0].start_byte, body[-1].end_byte
    model = source.rocm_path
    return not any(not start <= node.start_byte < end and source.node_text(node) in names
                   and model.status(node.start_byte) is not Status.DEAD
                   for name in names for node in token_nodes(source, name.encode()))


_CUDA_WORD = re.compile(r"CUDA", re.IGNORECASE)


def _detects_cuda_beside_hip(condition: Condition, source: SourceFile) -> bool:
    """Is `condition`'s arm only the definition of flags named for CUDA (`#define X_HAS_CUDA
    __CUDACC__`) whose HIP twins the file defines too (`X_HAS_HIP`, `X_HAS_ROCM`)? The file then
    detects each backend, and leaves the CUDA flag undefined on ROCm on purpose."""
    body = [node for node in _arm_body(condition) if node.type != "comment"]
    if not body or any(node.type not in ("preproc_def", "preproc_function_def") for node in body):
        return False
    defined = _defined_macro_names(source)
    for node in body:
        name = source.node_text(node.child_by_field_name("name"))
        twins = {_CUDA_WORD.sub(lambda m, hip=hip: hip if m.group().isupper() else hip.lower(), name)
                 for hip in ("HIP", "ROCM")}
        if not _CUDA_WORD.search(name) or not twins & defined:
            return False
    return True


def _defined_macro_names(source: SourceFile) -> set[str]:
    def find(source) -> set[str]:
        return {source.node_text(n.child_by_field_name("name"))
                for n in queries.nodes("cuda", "[(preproc_def) (preproc_function_def)] @d", source.tree.root_node, "d")}
    return memoized(source, "preprocessor.defined_macro_names", find)


def _checks_only(condition: Condition) -> bool:
    """Is `condition` an `#if` with no other arm around `static_assert`s alone? AMD skipping
    them leaves no code out: they only stop a build that breaks a layout assumption."""
    if condition.node.child_by_field_name("alternative") is not None:
        return False
    body = [n for n in _arm_body(condition) if n.type != "comment"]
    return bool(body) and all(n.type == "static_assert_declaration" for n in body)


def _first_identifier(root, names, source: SourceFile):
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "identifier" and source.node_text(node) in names:
            return node
        stack.extend(reversed(node.named_children))
    return None


# Values an NVIDIA toolchain gives the version macros, tried in their place on ROCm.
_CUDA_VERSIONS = (9000, 10000, 11000, 11080, 12000, 12080, 13000)


def _decides_on_rocm(condition: Condition, source: SourceFile, macros, on_rocm: bool) -> bool:
    """Would ROCm's answer change if the NVIDIA-only macros had NVIDIA's values? Not where
    the rest of the condition decides alone (`defined(X_USE_CUSPARSE) && CUSPARSE_VERSION >=
    11000`, with `X_USE_CUSPARSE` the CUDA backend's switch): the macro is not the reason.
    `__CUDA_ARCH__` beside them is NVIDIA's too: tried with them, as an nvcc device pass
    has both (where P002 reports the architecture gate, that is the one finding)."""
    archs = (None, 300, 600, 700, 800, 900) if CUDA_ARCH in condition.macros else (None,)
    for version in _CUDA_VERSIONS:
        values = {m: (version // 1000 if m.endswith("_MAJOR__") else 0 if m.endswith(("_MINOR__", "_BUILD__"))
                      else 1 if m.startswith("__") else version) for m in macros}
        for arch in archs:
            probe = values if arch is None else {**values, CUDA_ARCH: arch}
            if truth(evaluate(condition, source, rocm=True, values=probe)) != on_rocm:  # None: it may
                return True
    return False


# Toolkit versions, newest first, tried for the one whose answer ROCm's matches.
_TOOLKITS = (13000, 12080, 12000, 11080, 11000, 10020, 10000, 9020, 9000, 8000, 7050, 7000, 6050, 6000, 5050, 5000)


# The GPU an architecture test beside version macros is read for: the newest, where ROCm's
# answer to a legacy workaround's gate (`__CUDA_ARCH__ < 600`) is a current GPU's.
_NEWEST_ARCH = 900


def _as_a_toolkit(condition: Condition, source: SourceFile, macros, on_rocm: bool) -> int | None:
    """The newest CUDA toolkit version whose answer to a condition on version macros only
    (`CUDA_VERSION >= 11000`, `CUDART_VERSION < 12000`) is ROCm's, where they read as 0: ROCm
    then builds what that toolkit builds, code the project keeps for it. Beside an
    architecture test (`(CUDA_VERSION < 8000) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ <
    600)`: a workaround for old toolkits and GPUs), the toolkit whose answer on the newest GPU
    is ROCm's. None for a test of the toolchain itself (`__CUDACC__`, `#if CUDA_VERSION`),
    which no NVIDIA toolkit answers as ROCm does."""
    if not macros <= set(_VERSION_VALUES):
        return None
    arch = {CUDA_ARCH: _NEWEST_ARCH} if CUDA_ARCH in condition.macros else {}
    for version in _TOOLKITS:
        values = {m: (version // 1000 if m.endswith("_MAJOR__") else version % 1000 // 10 if m.endswith("_MINOR__")
                      else 0 if m.endswith("_BUILD__") else version) for m in macros}
        if truth(evaluate(condition, source, rocm=True, values={**values, **arch})) == on_rocm:
            return version
    return None


def _nvcc_only_fix(macro: str, condition: Condition, source: SourceFile, taken_on_rocm: bool) -> Fix:
    hip = NVCC_ONLY_MACROS[macro]
    platform = _PLATFORM_TEST.get(hip, hip)
    if taken_on_rocm:
        return Fix.advice(f"Leave ROCm out of this branch: `#if {_joined(condition, source, '&&', f'!defined({platform})')}`")
    if platform == hip:
        return Fix.advice(f"Take this branch on ROCm too: `#if {_joined(condition, source, '||', f'defined({hip})')}`")
    return Fix.advice(f"Add a ROCm arm that compares `{hip}`: `#elif defined({platform})`")


@needs(*_NVCC_MARKERS)
def check_nvcc_only_macro(source: SourceFile) -> list[Finding]:
    """P003: a guard on a macro that only NVIDIA's toolchain defines, with no HIP arm."""
    if not any(marker in source.data for marker in _NVCC_MARKERS) or source.rocm_path is None:
        return []
    findings = []
    for condition in _unported_guards(source, NVCC_ONLY_MACROS):
        macros = condition.macros & NVCC_ONLY_MACROS.keys()
        on_rocm = truth(evaluate(condition, source, rocm=True))
        on_cuda = truth(evaluate(condition, source, rocm=False))
        if on_rocm is None or on_rocm == on_cuda or not _decides_on_rocm(condition, source, macros, on_rocm):
            continue  # the macro does not decide what ROCm compiles
        if CUDA_ARCH in condition.macros and _architecture_gate(condition, source) is not None:
            continue  # `defined(CUDA_VERSION) && __CUDA_ARCH__ >= 700`: P002's gate, one root cause
        if _toolchain_only(_arm_body(condition), source, on_rocm):
            continue  # `#ifdef __NVCC__ #pragma nv_diag_suppress ...`: meant for one toolchain
        if _only_unreachable_jumps(condition, on_rocm):
            continue  # a `break;` after a `throw`, kept for nvcc's warnings: unreachable
        if macros == {"__NVCC__"} and not _holds_cuda_language(condition, source):
            continue  # nvcc's own quirks (a pragma, a workaround, `#define X_COMPILER_NVCC`)
        if on_rocm and _in_gpu_only_function(condition, source):
            continue  # `#if !defined(CUDA_VERSION)` in a function that launches kernels: HIP's arm
        if not on_rocm and _leaves_out_declarations_only(condition, source):
            continue  # `#if defined(__CUDACC__)` around CUDA-only functions: hip-clang says where one is missed
        if not on_rocm and _detects_cuda_beside_hip(condition, source):
            continue  # `#define X_HAS_CUDA` beside the file's `#define X_HAS_HIP`: each backend detected
        culprit = _first_identifier(condition.condition, macros, source)
        macro = source.node_text(culprit)
        severity = None
        fallback = None if on_rocm else _fallback_on_rocm(condition, source)
        toolkit = _as_a_toolkit(condition, source, macros, on_rocm)
        if fallback is not None:
            line = source.line_of(fallback[0].start_byte) + 1
            message = (f"`{macro}` is undefined on ROCm, so this branch is left out there and the "
                       f"arm at line {line} is compiled instead; check that it is right for HIP.")
            severity = Severity.NOTE  # a compiled alternative: hip-clang says if it is not
        elif toolkit is not None:
            what = "this branch is compiled there" if on_rocm else "this branch is left out there"
            on_gpu = f" on sm_{_NEWEST_ARCH // 10}" if CUDA_ARCH in condition.macros else ""
            message = (f"`{macro}` reads as 0 on ROCm, so {what}, as with CUDA {toolkit // 1000}.{toolkit % 1000 // 10}"
                       f"{on_gpu}: check that the code the project keeps for that toolkit is right for HIP.")
            severity = Severity.NOTE  # what an older (or newer) toolkit builds: code the project keeps
        elif on_rocm:
            message = f"`{macro}` is undefined on ROCm, so this non-CUDA branch is compiled there."
        else:
            message = f"`{macro}` is undefined on ROCm, so this branch is left out there."
        findings.append(at_node(source, culprit, message, _nvcc_only_fix(macro, condition, source, on_rocm),
                                severity=severity))
    return findings + _value_uses(source)


# The NVIDIA toolchain's version macros, which code also reads as values (`return CUDA_VERSION;`).
_VERSION_VALUES = ("CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__",
                   "__CUDACC_VER_BUILD__")


def _value_uses(source: SourceFile) -> list[Finding]:
    """`return CUDA_VERSION;`, `int v = CUDART_VERSION / 1000;`: a version macro read as a value
    in code the ROCm build compiles, where nothing defines it (no project shim, no `-D`): an
    undeclared identifier, so hip-clang stops. (Tested in `#if`, it reads as 0: the guards above.)"""
    findings = []
    for name in _VERSION_VALUES:
        if name.encode() not in source.data:
            continue
        for node in token_nodes(source, name.encode()):
            if source.node_text(node) != name or source.rocm_path.condition_at(node.start_byte) is not None \
                    or source.line_bytes(source.line_of(node.start_byte)).lstrip().startswith(b"#"):
                continue  # a directive's (also one the parse kept inside a call's arguments)
            if source.build is not None and source.build.state(name, node.start_byte, rocm=True) is not None:
                continue  # the project (or the ROCm build's flags) says what it is there
            if name in (source.build.rocm_defines if source.build is not None else {}):
                continue
            hip = NVCC_ONLY_MACROS[name]
            findings.append(at_node(
                source, node,
                f"`{name}` is undefined on ROCm (only NVIDIA's toolchain defines it), so this use does not compile there.",
                Fix.advice(f"Read `{hip}` on ROCm: `#if defined(__HIP_PLATFORM_AMD__)` ... `{hip}` ... `#else` ... "
                           f"`{name}` ... `#endif`, or define the value the code needs for both builds"),
                severity=Severity.ERROR))
    return findings


# ---- P004: `__HIP_PLATFORM_HCC__` / `__HIP_PLATFORM_NVCC__` ------------------------------
RENAMED_PLATFORM_MACROS = {"__HIP_PLATFORM_HCC__": "__HIP_PLATFORM_AMD__",
                           "__HIP_PLATFORM_NVCC__": "__HIP_PLATFORM_NVIDIA__"}
# As a word, or right after `-D` in compiler options.
_OLD_PLATFORM = re.compile(r"(?:(?<=-D)|(?<![A-Za-z0-9_]))__HIP_PLATFORM_(?:HCC|NVCC)__(?![A-Za-z0-9_])")
# Identifiers (in `#if`, `#define` names, code) and text that mentions them: macro bodies
# and string literals (`"-D__HIP_PLATFORM_HCC__"` handed to hipRTC).
_PLATFORM_MENTIONS = """
[((identifier) @name (#any-of? @name "__HIP_PLATFORM_HCC__" "__HIP_PLATFORM_NVCC__"))
 ((preproc_arg) @text (#match? @text "__HIP_PLATFORM_(HCC|NVCC)__"))
 ((string_content) @text (#match? @text "__HIP_PLATFORM_(HCC|NVCC)__"))]
"""


@needs(b"__HIP_PLATFORM_HCC__", b"__HIP_PLATFORM_NVCC__")
def check_deprecated_hip_platform_macro(source: SourceFile) -> list[Finding]:
    """P004: the HIP platform macros renamed in ROCm 4 and gone since ROCm 6."""
    if b"__HIP_PLATFORM_HCC__" not in source.data and b"__HIP_PLATFORM_NVCC__" not in source.data:
        return []
    model = source.rocm_path
    findings = []
    for kind, node in queries.captures(CUDA, _PLATFORM_MENTIONS, source.tree.root_node):
        if kind == "name":
            old = source.node_text(node)
            condition = model.condition_at(node.start_byte) if model is not None else None
            if condition is not None and RENAMED_PLATFORM_MACROS[old] in condition.macros:
                continue  # `defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)`: both spellings
            if _defines_the_old_name(node, condition, old, source):
                continue  # the project defines it itself (a shim): its tests after that hold on any ROCm
            spans = [(node.start_byte, node.end_byte, old)]
        else:
            text = source.node_text(node)
            spans = [(node.start_byte + len(text[:m.start()].encode()), node.start_byte + len(text[:m.end()].encode()),
                      m.group()) for m in _OLD_PLATFORM.finditer(text)]
        nvidia = kind == "name" and old == "__HIP_PLATFORM_NVCC__" and _reads_as_undefined(condition, old, source)
        for start, end, old in spans:
            new = RENAMED_PLATFORM_MACROS[old]
            findings.append(finding(
                source, start, end,
                f"`{old}` was removed in ROCm 6.0; HIP no longer defines it"
                + (" (HIP defined it only on its NVIDIA platform: on AMD this reads as before, unless the project "
                   "defines the name itself, where the test around that definition is the finding)." if nvidia else "."),
                Fix.safe(f"Replace `{old}` with `{new}`", Edit(start, end, new)),
                severity=Severity.NOTE if nvidia else None,
            ))
    return findings


def _reads_as_undefined(condition: Condition | None, name: str, source: SourceFile) -> bool:
    """Does an AMD build decide `condition` as it would with `name` undefined? HIP defined
    `__HIP_PLATFORM_NVCC__` only on its NVIDIA platform, so where nothing of the project's
    defines it either, a test of it reads the same there before ROCm 6.0 and after: a note.
    (A project that defines it itself, `#if !defined(__HIP_PLATFORM_HCC__)` around
    `#define __HIP_PLATFORM_NVCC__`, changes what AMD compiles: a warning.)"""
    if condition is None or condition.condition is None:
        return False
    as_read = evaluate(condition, source, rocm=True)
    return truth(as_read) is not None and as_read == evaluate(condition, source, rocm=True, values={name: None})


def _defines_the_old_name(node, condition: Condition | None, old: str, source: SourceFile) -> bool:
    """Does the project define the old platform name `node` is, so that its tests hold on any
    ROCm (a shim of the port)? `#define __HIP_PLATFORM_HCC__`, the `#ifndef` around only that
    define, and a test after a definition the ROCm build has (`source.shim`, or the build's
    own `-D__HIP_PLATFORM_HCC__`)."""
    if source.build is not None and old in source.build.rocm_defines:
        return True
    parent = node.parent
    if parent is not None and parent.type == "preproc_def" and parent.child_by_field_name("name") == node:
        return True
    if condition is not None and condition.directive == "#ifndef" \
            and condition.node.child_by_field_name("alternative") is None:
        body = [n for n in _arm_body(condition) if n.type != "comment"]
        if body and all(n.type == "preproc_def" and source.node_text(n.child_by_field_name("name")) == old
                        for n in body):
            return True
    return source.shim(old, node.start_byte) is not None


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _PLATFORM_MENTIONS,
)


# ---- P006 cuda-path-switch ------------------------------------------------------------------


@needs(re.compile(rb"#[ \t]*(?:el)?if[^\n]*CUDA"))  # (a directive that names CUDA: few files have one)
def check_cuda_path_switch(source: SourceFile) -> list[Finding]:
    """P006: before the port, code gated by the project's own switch for its CUDA path
    (`GOOGLE_CUDA`, `WITH_CUDA`, `KIT_USE_CUDA`: named for CUDA, set by the build where it finds
    CUDA): a ROCm build that follows the build files leaves it out, CPU-only or with a GPU arm
    missing, and says nothing. One finding per file and switch, at its first gate; the project
    pass keeps it only where a build file or build description sets the switch and no source
    defines it, and makes the files' findings one warning (`Finding.open_switches`)."""
    build = source.build
    if build is None or build.rocm_build or build.hip_code:
        return []  # (a project with a ROCm build chose what its CUDA-only switches leave out)
    # The directives first: the file's conditions and its ROCm-path model cost memory on a
    # header of thousands of `#ifdef`s (OpenGL's), and most files test no such switch.
    switches = {name for directive in read_directives(source.data) if directive.kind in _TEST_KINDS
                for kind, name in tokens(directive.text) if kind == "id" and "CUDA" in name and _is_cuda_switch(name)}
    if not switches or source.rocm_path is None:
        return []
    gates: dict[str, list] = {}
    for condition in source.rocm_path.conditions:
        if condition.condition is None or condition.macros.isdisjoint(switches):
            continue
        if _chain_tests_hip(condition, source):
            continue  # written with HIP in mind
        for name in sorted(condition.macros & switches):
            if truth(evaluate(condition, source, rocm=True)) is True \
                    or truth(evaluate(condition, source, rocm=True, values={name: None})) is not False \
                    or truth(evaluate(condition, source, rocm=False, values={name: 1})) is not True:
                continue  # not the arm the switch turns on, or one ROCm takes regardless
            if _toolchain_only(_arm_body(condition), source, False) or _leaves_out_declarations_only(condition, source):
                continue  # NVIDIA's headers and pragmas, or functions hip-clang says are missing where called
            node = _first_identifier(condition.condition, {name}, source)
            if node is not None:
                gates.setdefault(name, []).append(node)
    findings = []
    for name, nodes in gates.items():
        first, *others = nodes
        more = f" ({len(others)} more place{'s' if len(others) != 1 else ''} in this file)" if others else ""
        findings.append(replace(at_node(
            source, first,
            f"`{name}` is the project's switch for its CUDA path, and the project has no ROCm build yet: "
            f"a ROCm build that does not set it leaves this code out{more}.",
            Fix.advice(f"Set `{name}` on the ROCm path of the build as well, or test the ROCm build's own "
                       f"switch beside it (`#if defined({name}) || defined(__HIP_PLATFORM_AMD__)`)"),
            related=tuple(Related(source.location(n.start_byte, n.end_byte), f"`{name}` gates code here too")
                          for n in others)), open_switches=(name,)))
    return findings


_CUDA_SWITCH_WORD = re.compile(r"(?:^|_)CUDA(?:$|_)")
_TEST_KINDS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})


def _is_cuda_switch(name: str) -> bool:
    """A project's name for its CUDA path (`GOOGLE_CUDA`, `WITH_CUDA`, `KIT_USE_CUDA`): CUDA as
    one word of it, no HIP word, not a toolchain's or a library's macro (`CUDA_VERSION`,
    `__CUDACC__`, `CUDART_VERSION`: P003's; reserved `_X` names)."""
    return bool(_CUDA_SWITCH_WORD.search(name)) and not name.startswith("_") and name not in NVCC_ONLY_MACROS \
        and not _is_hip_macro(name, frozenset()) and not hipify.documented(name)
