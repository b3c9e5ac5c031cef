"""The one table from rule code to check functions, by language. Sorted by code.

A value maps a language (`cuda`, `cmake`, `python`) or the role `build-script` (setup.py
and configured build scripts) to a function `check(source)`, or
`PROJECT` to a function `check(index)` that runs once on the cross-file index. Rule
metadata lives in `rules/<CODE>.md`, never here.
"""

from portlint.checks import assembly, cmake, launch, libraries, preprocessor, runtime, setup_py, wavefront
from portlint.source import BUILD_SCRIPT, CMAKE, CUDA

PROJECT = "project"

REGISTRY = {
    "A001": {CUDA: assembly.check_inline_ptx},
    "B002": {CMAKE: cmake.check_lto_mixed_compilers, BUILD_SCRIPT: setup_py.check_lto_mixed_compilers},
    "B003": {CMAKE: cmake.check_missing_use_rocm, BUILD_SCRIPT: setup_py.check_missing_use_rocm},
    "B004": {CMAKE: cmake.check_cuda_toolkit_path, BUILD_SCRIPT: setup_py.check_cuda_toolkit_path},
    "C003": {CMAKE: cmake.check_cmake_cuda_link_target},
    "K001": {CUDA: launch.check_block_over_1024},
    "K002": {CUDA: launch.check_hardcoded_block_size},
    "L001": {CUDA: libraries.check_cuda_library, BUILD_SCRIPT: setup_py.check_cuda_library},
    "P001": {CUDA: preprocessor.check_cuda_arch_device_pass},
    "P005": {PROJECT: preprocessor.check_unmacroed_global},
    "R002": {PROJECT: runtime.check_module_kernel_not_extern_c},
    "W001": {CUDA: wavefront.check_hardcoded_warp_size},
    "W002": {CUDA: wavefront.check_narrow_full_mask},
    "W003": {CUDA: wavefront.check_truncated_lane_mask},
    "Y001": {BUILD_SCRIPT: setup_py.check_cudaextension_nvcc_args},
    "Y003": {BUILD_SCRIPT: setup_py.check_unpinned_triton},
    "Y004": {BUILD_SCRIPT: setup_py.check_rocm_arch_unset},
}
