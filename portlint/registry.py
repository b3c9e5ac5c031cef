"""The one table from rule code to check functions, by language. Sorted by code.

A value maps a language (`cuda`, `cmake`, `python`, `make`, `requirements`, `pyproject`) or
the role `build-script` (setup.py and configured build scripts) to a function `check(source)`, or
`PROJECT` to a function `check(index)` that runs once on the cross-file index, or `DEEP` to
the function deep mode (`--deep`, libclang) reports the rule with, for a rule only deep mode
has: fast mode never fires it, and its fixtures are `fixtures/deep/<CODE>_*.cu`. Rule
metadata lives in `rules/<CODE>.md`, never here.

Trigger tokens: a per-file check declares the bytes without which it cannot fire with the
`portlint.triggers.needs` decorator, next to its definition:

    @needs(b"__launch_bounds__")                                   # this substring occurs
    @needs(b"<<<", b"hipLaunchKernelGGL")                          # any of these
    @needs(all_of(b"assert", any_of(b"__device__", b"__global__")))  # all of these
    @needs(nocase(b"warp", b"lane"))                               # in the lower-cased bytes
    def check_...(source): ...

The engine parses a file only when the tokens of some enabled check (or of a project-fact
collector: `checks.facts.needs_parse`) occur in it, and runs only the checks whose tokens occur.
A declaration must be a necessary condition: the check may find nothing where its tokens
are, but must never fire where they are not (`tests/test_prefilter.py` scans every fixture
with and without the pre-filter and wants the same findings). A check without a declaration
runs on every file of its language, which is then always parsed; every C-family check must
declare its tokens (a test checks it).
"""

from portlint import embedded
from portlint.checks import assembly, cmake, intrinsics, launch, libraries, literals, makefile, memory, numerics, preprocessor, pyproject, requirements, runtime, setup_py, templates, wavefront, wavefront_ops, wavefront_size
from portlint.deep import diagnostics
from portlint.source import BUILD_SCRIPT, CMAKE, CUDA, MAKE, PYPROJECT, PYTHON, REQUIREMENTS

PROJECT = "project"
DEEP = "deep"

REGISTRY = {
    "A001": {CUDA: assembly.check_inline_ptx},
    "A002": {CUDA: intrinsics.check_unsupported_intrinsic},
    "B001": {MAKE: makefile.check_nvcc_only_flag, PROJECT: cmake.check_nvcc_only_flag,
             BUILD_SCRIPT: setup_py.check_nvcc_only_flag},
    "B002": {BUILD_SCRIPT: setup_py.check_lto_mixed_compilers, PROJECT: cmake.check_lto_mixed_compilers},
    "B003": {PROJECT: cmake.check_missing_use_rocm_in_project, BUILD_SCRIPT: setup_py.check_missing_use_rocm},
    "B004": {CMAKE: cmake.check_cuda_toolkit_path, BUILD_SCRIPT: setup_py.check_cuda_toolkit_path,
             MAKE: makefile.check_cuda_toolkit_path},
    "B005": {MAKE: makefile.check_nvcc_only_makefile},
    "B006": {MAKE: makefile.check_hip_runtime_not_linked},
    "B007": {MAKE: makefile.check_nvidia_smi_query},
    "C001": {PROJECT: cmake.check_cmake_cuda_language},
    "C002": {PROJECT: cmake.check_cmake_cuda_architectures},
    "C003": {CMAKE: cmake.check_cmake_cuda_link_target},
    "K001": {CUDA: launch.check_block_over_1024, PROJECT: launch.check_block_over_1024_across_files},
    "K002": {CUDA: launch.check_hardcoded_block_size, PROJECT: launch.check_hardcoded_block_size_across_files},
    "K003": {CUDA: launch.check_launch_bounds_min_blocks},
    "K005": {CUDA: launch.check_dynamic_parallelism},
    "K006": {CUDA: launch.check_huge_grid},
    "L001": {CUDA: libraries.check_cuda_library, BUILD_SCRIPT: setup_py.check_cuda_library,
             MAKE: makefile.check_cuda_library},
    "L002": {CUDA: libraries.check_late_cooperative_groups_api},
    "L003": {CUDA: libraries.check_missing_cooperative_groups_api},
    "L004": {CUDA: libraries.check_cuda_library_loaded_by_name},
    "M001": {CUDA: memory.check_lds_over_64k, PROJECT: memory.check_lds_over_64k_across_files},
    "M002": {CUDA: memory.check_managed_memory},
    "M003": {CUDA: memory.check_threadfence_system},
    "M004": {CUDA: memory.check_memory_type_numeric},
    "M005": {CUDA: memory.check_texture_reference},
    "N001": {CUDA: numerics.check_half2_members},
    "N002": {CUDA: numerics.check_float_atomic_add},
    "N003": {CUDA: numerics.check_fp8_format},
    "N004": {CUDA: numerics.check_clock_timing},
    "N005": {CUDA: numerics.check_device_assert_trap},
    "N006": {CUDA: numerics.check_half_raw_brace_init},
    "N007": {CUDA: numerics.check_hip_atomic_redefinition},
    "N008": {CUDA: numerics.check_vector_short_brace_init},
    "N009": {CUDA: numerics.check_vector_compound_operator},
    "N010": {CUDA: numerics.check_vector_union_assignment},
    "P001": {CUDA: preprocessor.check_cuda_arch_device_pass},
    "P002": {CUDA: preprocessor.check_cuda_arch_feature_gate},
    "P003": {CUDA: preprocessor.check_nvcc_only_macro},
    "P004": {CUDA: preprocessor.check_deprecated_hip_platform_macro},
    "P005": {PROJECT: preprocessor.check_unmacroed_global},
    "P006": {CUDA: preprocessor.check_cuda_path_switch},
    "R001": {CUDA: runtime.check_compute_capability_check, PYTHON: runtime.check_compute_capability_check},
    "R002": {PROJECT: runtime.check_module_kernel_not_extern_c, PYTHON: embedded.check_kernel_lookup_by_name},
    "R003": {MAKE: makefile.check_missing_offload_arch, CMAKE: cmake.check_missing_offload_arch,
             CUDA: runtime.check_missing_offload_arch, PROJECT: cmake.check_missing_offload_arch_in_project},
    "R004": {CUDA: runtime.check_ptx_module_load},
    "R005": {CUDA: runtime.check_hip7_runtime_semantics},
    "R006": {CUDA: runtime.check_positional_graph_params_init},
    "R007": {CUDA: runtime.check_cuda_toolkit_header},
    "R008": {CUDA: runtime.check_cuda_api_without_hip},
    "W001": {CUDA: wavefront.check_hardcoded_warp_size, PROJECT: wavefront_size.check_warp_size_through_project},
    "W002": {CUDA: wavefront.check_narrow_full_mask, PROJECT: wavefront.check_full_mask_macros_through_project},
    "W003": {CUDA: wavefront.check_truncated_lane_mask},
    "W004": {CUDA: wavefront_ops.check_shuffle_width_32},
    "W005": {CUDA: wavefront_ops.check_syncwarp_independent_scheduling},
    "W006": {CUDA: wavefront_ops.check_tile_as_warp},
    "W007": {CUDA: wavefront_size.check_per_warp_shared_sizing},
    "W008": {CUDA: wavefront_size.check_warpsize_not_constexpr},
    "W009": {CUDA: wavefront_size.check_arch_macro_warp_size, PROJECT: wavefront_size.check_arch_macro_warp_size_on_host},
    "W010": {CUDA: wavefront_ops.check_warp_matrix_api},
    "W011": {CUDA: launch.check_rows_split_by_wavefront, PROJECT: launch.check_rows_split_by_wavefront_across_files},
    "X001": {DEEP: diagnostics.clang_errors},
    "X002": {CUDA: templates.check_missing_typename},
    "X003": {CUDA: literals.check_literal_macro_suffix},
    "Y001": {BUILD_SCRIPT: setup_py.check_cudaextension_nvcc_args},
    "Y002": {BUILD_SCRIPT: setup_py.check_cuda_toolkit_probe},
    "Y003": {BUILD_SCRIPT: setup_py.check_unpinned_triton, REQUIREMENTS: requirements.check_unpinned_triton,
             PYPROJECT: pyproject.check_unpinned_triton},
    "Y004": {BUILD_SCRIPT: setup_py.check_rocm_arch_unset},
}
