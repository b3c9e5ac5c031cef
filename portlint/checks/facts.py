"""Per-file facts for the project rules: the index's own (`portlint.project.collect_own`)
and the rules' own (open launch and shared-memory sizes, warp-size definitions and uses,
CMake facts), collected while the file is parsed.

This module sits above both the rule modules and the project index, so the data flows one
way: discover -> build model -> per-file checks and facts -> project index -> project
checks. The index never imports a rule module; rule modules import the index's types.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from portlint import project
from portlint.checks import launch, memory, wavefront
from portlint.checks.cmake import missing_use_rocm
from portlint.checks.cmake_project import collect as collect_cmake
from portlint.checks.logical_warp import warp_model
from portlint.checks.wavefront_size import collect_warp_sizes
from portlint.project import FileFacts, file_key
from portlint.rocm_path import RocmPathModel, Status
from portlint.source import CMAKE, CUDA, SourceFile
from portlint.triggers import ALWAYS, Probe, Trigger, all_of, any_of, nocase


@cache
def _eager_facts() -> dict[str, Trigger]:
    """Per language, the trigger tokens of facts that cannot wait for `ProjectIndex.defer`:
    the rest (functions, macros, C linkage, includes, constants) is looked up by name or file."""
    return {
        CMAKE: ALWAYS,
        CUDA: any_of(
            # Warp-size definitions and uses (`collect_warp_sizes`): only names that
            # `_warp_constant_kind` reads as a size, log2 or lane mask, which need `warp`, or
            # `lane` and `mask`.
            nocase(b"warp"), all_of(nocase(b"lane"), nocase(b"mask")),
            wavefront.FULL_MASK_MACRO_TOKENS,  # W002's mask macros, for their includers' uses
            *launch.LAUNCH_TOKENS,  # launches, open launch sizes
            b"__shared__", *memory.SET_ATTRIBUTE_TOKENS,  # open shared memory sizes
            *(api.encode() for api in project._APIS),  # module lookups, name expressions
        ),
    }


def needs_parse(source: SourceFile, probe: Probe) -> bool:
    """Must the per-file pass parse `source` for its project facts?"""
    trigger = _eager_facts().get(source.language)
    return trigger is not None and trigger.holds(probe)


def deferred(source: SourceFile) -> FileFacts:
    """The facts of a file the per-file pass did not parse: collected later, if asked for."""
    if source.language == CUDA:
        return FileFacts(path=file_key(source), deferred=True)
    return FileFacts()  # `collect` has nothing for other languages but CMake, which is always parsed


def collect(source: SourceFile, model: RocmPathModel) -> FileFacts:
    facts = FileFacts()
    if source.language == CMAKE:
        facts.cmake = collect_cmake(source, model)
        facts.open_sizes = missing_use_rocm(source)
        return facts
    if source.language == CUDA:
        facts.warp_size_definitions, facts.warp_size_uses = collect_warp_sizes(source, model)
        facts.open_sizes = [*launch.open_launches(source), *memory.open_shared_memory(source),
                            *wavefront.open_mask_macros(source)]
        facts.mask_uses = wavefront.mask_macro_uses(source)
        if b"USE_ROCM" in source.data:
            test = next((c.condition for c in model.conditions if "USE_ROCM" in c.macros
                         and model.status(c.node.start_byte) is not Status.DEAD), None)
            facts.use_rocm_test = source.location(test.start_byte, test.end_byte) if test is not None else None
    if source.language == CUDA and (b"warp" in source.data.lower() or b"__global__" in source.data):
        # What other files' findings may wait for (`logical_warp.judge_by_helpers`); set before
        # the index's own facts, which then collect the file's includes too.
        warps = warp_model(source)
        facts.warp_helpers = {name: (verdict, source.location(node.start_byte, node.end_byte))
                              for name, (verdict, node) in warps.helper_observations().items()}
        facts.helper_callers = {name: (verdict, source.location(node.start_byte, node.end_byte))
                                for name, (verdict, node) in warps.caller_observations().items()}
    facts = project.collect_own(source, model, facts)
    if any(d.has_global for d in facts.functions):
        # Whether each kernel observes the wavefront's width: host code of other files that
        # sizes its launches is judged by it (`wavefront_size._judged_by_kernels`).
        warps = warp_model(source)
        facts.functions = [replace(d, warp_observation=warps.function_observation(d.name)) if d.has_global else d
                           for d in facts.functions]
    return facts
