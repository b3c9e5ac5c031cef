"""P: preprocessor guards that decide wrongly when hip-clang compiles the file.

These rules read the conditions the ROCm-path model has already parsed
(`source.rocm_path.conditions`); they never scan `#if` lines themselves.
"""

from __future__ import annotations

from portlint.finding import Finding, at_node
from portlint.fix import Edit, Fix
from portlint.rocm_path import ROCM_DEFINED, ROCM_UNKNOWN, Condition
from portlint.source import SourceFile

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


def _chain(condition: Condition, by_node: dict[int, Condition]) -> list[Condition]:
    """Every condition of the `#if … #elif …` chain `condition` belongs to."""
    head = condition.node
    while head.parent is not None and head.parent.type in _ARMS:
        alternative = head.parent.child_by_field_name("alternative")
        if alternative is None or alternative.id != head.id:
            break
        head = head.parent
    chain = []
    node = head
    while node is not None and node.type in _ARMS:
        if node.id in by_node:
            chain.append(by_node[node.id])
        node = node.child_by_field_name("alternative")
    return chain


def _device_pass_tests(root, source: SourceFile) -> list[tuple[object, bool]]:
    """(node to rewrite, negated) for each truth test of `__CUDA_ARCH__` in an `#if` expression."""
    tests = []
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "preproc_defined":
            if any(source.node_text(c) == CUDA_ARCH for c in current.named_children):
                tests.append(_with_negation(current, root))
            continue
        if current.type == "identifier" and source.node_text(current) == CUDA_ARCH:
            if not _is_truth_value(current, root):
                raise _NotAPassTest
            tests.append(_with_negation(current, root))
            continue
        stack.extend(current.named_children)
    return sorted(tests, key=lambda t: t[0].start_byte)


def _is_truth_value(node, root) -> bool:
    """Is `node` read only for being true: the whole condition, or under `!`, `&&`, `||`?"""
    while node.id != root.id and node.parent.type == "parenthesized_expression":
        node = node.parent
    if node.id == root.id:
        return True
    parent = node.parent
    operator = parent.child_by_field_name("operator")
    return (parent.type in ("unary_expression", "binary_expression") and operator is not None
            and operator.type in ("!", "&&", "||"))


def _with_negation(test, root) -> tuple[object, bool]:
    """`!defined(X)` and `!(X)` are rewritten whole, as host-pass tests."""
    node = test
    while node.id != root.id and node.parent is not None and node.parent.type == "parenthesized_expression":
        node = node.parent
    parent = node.parent
    if node.id != root.id and parent is not None and parent.type == "unary_expression":
        operator = parent.child_by_field_name("operator")
        if operator is not None and operator.type == "!":
            return parent, True
    return test, False


def _needs_parentheses(node, root, negated: bool) -> bool:
    """Is the `||` (or `&&`) replacement embedded where it would bind differently?"""
    if node.id == root.id:
        return False
    parent = node.parent
    if parent.type == "parenthesized_expression":
        return False
    if parent.type == "binary_expression":
        return parent.child_by_field_name("operator").type != ("&&" if negated else "||")
    return True


def _ifdef_finding(condition: Condition, source: SourceFile) -> Finding:
    token = condition.node.children[0]
    directive, test = IFDEF_DIRECTIVES[condition.directive]
    hash_part = source.node_text(token)[: -len(condition.directive) + 1]  # keeps `#  ` spacing
    new = f"{hash_part}{directive} {test}"
    old = f"{condition.directive} {source.node_text(condition.condition)}"
    negated = test == HOST_PASS
    return at_node(
        source, condition.condition, _message(negated),
        Fix.safe(f"Replace `{old}` with `{new.replace(hash_part, '#', 1)}`",
                 Edit(token.start_byte, condition.condition.end_byte, new)),
    )


def check_cuda_arch_device_pass(source: SourceFile) -> list[Finding]:
    if b"__CUDA_ARCH__" not in source.data or source.rocm_path is None:
        return []
    conditions = source.rocm_path.conditions
    by_node = {c.node.id: c for c in conditions}
    findings = []
    for condition in conditions:
        if CUDA_ARCH not in condition.macros or condition.condition is None:
            continue
        if any(arm.macros & HIP_MACROS for arm in _chain(condition, by_node)):
            continue  # written with HIP in mind (`#elif defined(__HIP_DEVICE_COMPILE__)`, ...)
        if condition.directive in IFDEF_DIRECTIVES:
            findings.append(_ifdef_finding(condition, source))
            continue
        root = condition.condition
        try:
            tests = _device_pass_tests(root, source)
        except _NotAPassTest:
            continue
        for node, negated in tests:
            replacement = HOST_PASS if negated else DEVICE_PASS
            if _needs_parentheses(node, root, negated):
                replacement = f"({replacement})"
            findings.append(at_node(
                source, node, _message(negated),
                Fix.safe(f"Replace `{source.node_text(node)}` with `{replacement}`", Edit.replace(node, replacement)),
            ))
    return findings


# ---- P005: kernels whose `__global__` vanishes on ROCm ----------------------------------
# Imported here, not at the top, so that this section stays an append to the module.
from portlint.finding import Related  # noqa: E402
from portlint.project import (  # noqa: E402
    GLOBAL, MODULE_LOOKUPS, KernelDefinition, NamedUse, ProjectIndex, finding_at_definition,
)
from portlint.rocm_path import Status  # noqa: E402


def check_unmacroed_global(index: ProjectIndex) -> list[Finding]:
    """P005: a function launched as a kernel that is not `__global__` when built for ROCm."""
    uses: dict[str, list[NamedUse]] = {}
    for use in (*index.launches, *index.lookups):
        if use.status is not Status.DEAD:
            uses.setdefault(use.name, []).append(use)
    findings = []
    for name, named in uses.items():
        definitions = index.rocm_definitions(name)
        if any(index.is_rocm_kernel(fn) for fn in definitions):
            continue  # an overload (or another platform's variant) is the kernel
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
        f"Declare `{fn.name}` as {declaration}", Edit.insert(fn.insertion_point.start_byte, "__global__ ")
    )

