"""R: runtime API use that compiles for ROCm but fails when it runs."""

from __future__ import annotations

from portlint.finding import Finding, Related
from portlint.fix import Edit, Fix
from portlint.project import EXTERN_C, KernelDefinition, NamedUse, ProjectIndex, finding_at_definition
from portlint.rocm_path import Status


def check_module_kernel_not_extern_c(index: ProjectIndex) -> list[Finding]:
    """R002: a kernel looked up by its plain name in a module while its symbol is mangled."""
    lookups: dict[str, list[NamedUse]] = {}
    for use in index.lookups:
        # A name passed to *GetLoweredName is looked up by its mangled form: fine.
        if use.status is not Status.DEAD and use.name not in index.lowered_names:
            lookups.setdefault(use.name, []).append(use)
    findings = []
    for name, uses in lookups.items():
        kernels = [fn for fn in index.rocm_definitions(name) if index.is_rocm_kernel(fn)]
        # One C-linkage definition (or declaration) is what the lookup finds; a qualifier
        # macro the tree does not define may be `extern "C"`: cannot tell, stay silent.
        if name in index.c_linkage or any(_has_c_linkage(index, fn) is not False for fn in kernels):
            continue
        related = tuple(Related(use.location, f"`{name}` is looked up by name here") for use in uses)
        for fn in kernels:
            findings.append(finding_at_definition(
                fn, f"Kernel `{name}` has a mangled C++ symbol, so its lookup by name fails.",
                _extern_c_fix(fn, overloaded=len(kernels) > 1), related,
            ))
    return findings


def _has_c_linkage(index: ProjectIndex, fn: KernelDefinition) -> bool | None:
    return True if fn.extern_c else index.qualifiers_expand_to(fn, EXTERN_C)


def _extern_c_fix(fn: KernelDefinition, overloaded: bool) -> Fix:
    name = fn.name
    # `extern "C"` cannot name one template instance or one overload, conflicts with
    # `static`, and inside a namespace would silently drop the namespace from the symbol.
    if fn.is_template or overloaded:
        return Fix.advice(
            f'Look up `{name}` by its mangled name from `hiprtcGetLoweredName`, or launch it from an '
            f'`extern "C" __global__` wrapper kernel'
        )
    if fn.scope:
        return Fix.advice(f'Move `{name}` out of namespace `{fn.scope}` and declare it `extern "C" __global__`')
    if "static" in fn.specifiers:
        return Fix.advice(f'Drop `static` and declare `{name}` as `extern "C" __global__ void {name}(...)`')
    qualifier = "__global__" if fn.has_global else " ".join(fn.qualifiers)
    return Fix.unsafe(
        f'Declare `{name}` as `extern "C" {qualifier} void {name}(...)`',
        Edit.insert(fn.insertion_point.start_byte, 'extern "C" '),
    )
