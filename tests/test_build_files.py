"""The build files as a ROCm build reads them: sources it never compiles, and the defines and
include directories each build passes (`portlint.build_model.build_files`)."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from harness import scan

from portlint.build_model.build_files import read_build_files
from portlint.build_model.observed import Observed
from portlint.cli import main
from portlint.config import Config
from portlint.finding import Severity
from portlint.discover import discover

# A 32-lane shuffle tree whose result every lane keeps: wrong on a 64-lane wavefront (W001).
HAZARD = ("__global__ void k(float* x) { float v = x[threadIdx.x]; "
          "for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o); x[threadIdx.x] = v; }\n")
CLEAN = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"


def _cublas_if(condition: str) -> str:
    """A clean kernel file that includes cuBLAS (L001) where `condition` holds."""
    return f"#if {condition}\n#include <cublas_v2.h>\n#endif\n" + CLEAN


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _read(root: Path):
    config = Config(root=root)
    candidates, _ = discover([root], config)
    return read_build_files(candidates, config)


def _not_built(root: Path) -> dict[str, str]:
    return {Path(p).relative_to(root).as_posix(): reason for p, reason in _read(root).not_built.items()}


def _lists_edited(files: dict[str, str], *replacements: tuple[str, str]) -> dict[str, str]:
    """`files` with its top CMakeLists.txt edited: each (old, new) replaced in turn."""
    lists = files["CMakeLists.txt"]
    for old, new in replacements:
        assert old in lists, old
        lists = lists.replace(old, new)
    return dict(files, **{"CMakeLists.txt": lists})


# ---- setup.py -------------------------------------------------------------------------------
SETUP_SELECTS_SOURCES = """\
    import glob
    import torch
    from setuptools import setup
    from torch.utils.cpp_extension import CUDAExtension

    def _is_hip():
        return torch.version.hip is not None

    sources = glob.glob("ck/*.cu") if _is_hip() else glob.glob("cuda/*.cu")
    macros = [("EXT_ON_AMD", "1")] if _is_hip() else []
    nvcc = ["-O3"]
    if not _is_hip():
        nvcc.append("-DEXT_TENSOR_CORES")
    setup(ext_modules=[CUDAExtension("ext", sources + ["common/shared.cu"], define_macros=macros,
                                     include_dirs=["include"], extra_compile_args={"nvcc": nvcc})])
    """


def test_setup_py_sources_chosen_on_rocm(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "setup.py": SETUP_SELECTS_SOURCES,
        "ck/gemm.cu": '#include "../include/both.cuh"\n' + CLEAN,
        "cuda/gemm_nv.cu": '#include "nv_only.cuh"\n#include "../include/both.cuh"\n' + HAZARD,
        "cuda/nv_only.cuh": HAZARD,
        "include/both.cuh": "#pragma once\n",
        "common/shared.cu": CLEAN,
    })
    assert _not_built(root) == {
        "cuda/gemm_nv.cu": "listed only on a CUDA-only path (setup.py:9)",
        "cuda/nv_only.cuh": "included only by files not compiled for ROCm",
    }
    build = _read(root)
    assert build.rocm_defines == {"EXT_ON_AMD": "1"}
    assert build.cuda_defines == {"EXT_TENSOR_CORES": None}
    assert build.other_builds_define == {"EXT_TENSOR_CORES"}  # only where the ROCm build never goes
    assert build.include_dirs == (str(root / "include"),)


def test_setup_py_that_decides_nothing(tmp_path: Path) -> None:
    # No ROCm test picks the sources; a source list it cannot read decides nothing either.
    plain = _project(tmp_path / "plain", {
        "setup.py": 'from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension("e", ["a.cu"])\n',
        "a.cu": HAZARD,
    })
    assert _not_built(plain) == {}
    unread = _project(tmp_path / "unread", {
        "setup.py": """\
            import torch, glob
            from torch.utils.cpp_extension import CUDAExtension
            rocm_sources = find_sources_somehow()
            CUDAExtension("e", rocm_sources if torch.version.hip else ["cuda/a.cu"])
            """,
        "cuda/a.cu": HAZARD,
    })
    assert _not_built(unread) == {}


# One extension whose builder (a variable) and sources are chosen per platform: the CUDA arm
# also runs when an environment variable forces it, the ROCm arm renames its `.cpp` sources to
# `.cu` in a loop, and the list is made with set operations.
SETUP_CHOOSES_BUILDER = """\
    import glob, os
    import torch
    from torch.utils.cpp_extension import CUDAExtension, CppExtension

    cpp = glob.glob("csrc/**/*.cpp", recursive=True)
    cu = glob.glob("csrc/**/*.cu", recursive=True)
    rocm_cpp = glob.glob("csrc/rocm_attn/*.cpp")
    sources = list(set(cpp) - set(rocm_cpp))
    builder = CppExtension
    macros = []
    if (torch.cuda.is_available() and torch.version.cuda is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        builder = CUDAExtension
        sources += cu + ["csrc/ops.cpp"]  # named twice: the ROCm build compiles it from `cpp`
        macros.append(("PKG_WITH_SPARSE", "1"))
    elif torch.version.hip and os.getenv("PKG_ROCM_KERNELS", "1") == "1":
        renamed = []
        for name in rocm_cpp:
            renamed.append(name.replace(".cpp", ".cu"))
        builder = CUDAExtension
        sources += renamed
        macros.append(("PKG_WITH_CK", "1"))
    ext = builder("pkg._C", sorted(sources), define_macros=macros)
"""


def test_setup_py_with_a_rocm_arm_after_a_cuda_arm_an_environment_variable_forces(tmp_path: Path) -> None:
    files = {
        "setup.py": SETUP_CHOOSES_BUILDER,
        "csrc/ops.cpp": "int ops() { return 0; }\n",
        "csrc/sparse/tile.cu": HAZARD,
        "csrc/rocm_attn/fwd.cpp": CLEAN,
    }
    root = _project(tmp_path / "ported", files)
    # An undecidable arm before the chain's ROCm arm is its CUDA alternative (setting
    # FORCE_CUDA on ROCm would skip the arm the project wrote for ROCm).
    assert _not_built(root) == {"csrc/sparse/tile.cu": "listed only on a CUDA-only path (setup.py:6)"}
    assert scan([root], root, select=("W001",)).findings == []
    assert _read(root).other_builds_define == {"PKG_WITH_SPARSE"}  # the CUDA arm's define is not ROCm's
    # Without a later ROCm arm, the forced CUDA arm may be the ROCm build's (it may hipify
    # its sources there): nothing is decided.
    files["setup.py"] = SETUP_CHOOSES_BUILDER.replace('elif torch.version.hip and os.getenv("PKG_ROCM_KERNELS"',
                                                      'elif os.getenv("PKG_FAST_KERNELS"')
    assert _not_built(_project(tmp_path / "forced", files)) == {}


# A flag set in a `try` after a default (its name says nothing of the platform), and the ROCm
# define made under it, inside arms that choose among other backends.
SETUP_ROCM_FLAG = """\
    import os
    import torch
    from torch.utils.cpp_extension import CUDAExtension

    on_amd = False
    try:
        from torch.utils.cpp_extension import ROCM_HOME
        on_amd = True if ((torch.version.hip is not None) and (ROCM_HOME is not None)) else False
    except ImportError:
        pass
    macros = []
    if os.getenv("PKG_WITH_OTHER_BACKEND", "0") == "1":
        macros += [("PKG_WITH_OTHER", None)]
    elif on_amd or torch.cuda.is_available():
        if on_amd:
            macros += [("PKG_WITH_HIP", None)]
        macros += [("PKG_WITH_CUDA", None)]
    CUDAExtension("pkg._ext", ["src/ops.cu"], define_macros=macros)
"""
KERNEL_BRANCHING_ON_HIP = """\
    __device__ float row_sum(float v) {
    #ifdef PKG_WITH_HIP
      for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
    #else
      for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    #endif
      return v;
    }
"""


def test_a_define_under_the_rocm_test_is_the_rocm_builds(tmp_path: Path) -> None:
    files = {"setup.py": SETUP_ROCM_FLAG, "src/ops.cu": KERNEL_BRANCHING_ON_HIP}
    root = _project(tmp_path / "ported", files)
    assert _read(root).rocm_defines == {"PKG_WITH_HIP": None}
    assert scan([root], root, select=("W",)).findings == []
    # Under a test that is not ROCm's own (an opt-in), the define may or may not be made.
    files["setup.py"] = SETUP_ROCM_FLAG.replace("        if on_amd:\n", '        if os.getenv("PKG_FAST_PATH") == "1":\n')
    root = _project(tmp_path / "opt_in", files)
    assert "PKG_WITH_HIP" not in _read(root).rocm_defines
    assert {f.code for f in scan([root], root, select=("W",)).findings} == {"W001", "W002"}


def test_glob_matching_nothing_is_silent(tmp_path: Path, capsys) -> None:
    root = _project(tmp_path, {
        "setup.py": """\
            import glob, torch
            from torch.utils.cpp_extension import CUDAExtension
            CUDAExtension("e", glob.glob("amd/*.hip") if torch.version.hip else glob.glob("nothing/*.cu"))
            """,
    })
    assert _not_built(root) == {}
    assert capsys.readouterr().err == ""


# ---- CMake ----------------------------------------------------------------------------------
CMAKE_BACKENDS = """\
    cmake_minimum_required(VERSION 3.21)
    project(p LANGUAGES CXX)
    set(BACKEND "cpu" CACHE STRING "cpu, cuda or hip")
    if(${BACKEND} STREQUAL "cuda")
      set(WITH_NV ON)
      set(WITH_AMD OFF)
    elseif(${BACKEND} STREQUAL "hip")
      set(WITH_NV OFF)
      set(WITH_AMD ON)
    endif()
    set(SHARED_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/src/common.cu)
    if(WITH_NV)
      list(APPEND SHARED_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/src/nv_extra.cu)
      add_subdirectory(nv)
      add_compile_definitions(P_NV)
    endif()
    if(WITH_AMD)
      list(APPEND SHARED_SOURCES nv/reused.cu)
      add_library(p SHARED ${SHARED_SOURCES})
      target_compile_definitions(p PRIVATE P_AMD=1)
      target_include_directories(p PRIVATE include)
    endif()
    """


def test_cmake_backend_option_and_cuda_only_subdirectory(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "CMakeLists.txt": CMAKE_BACKENDS,
        "nv/CMakeLists.txt": "add_library(p_nv SHARED reused.cu only_nv.cu ${SHARED_SOURCES})\n",
        "nv/reused.cu": CLEAN,
        "nv/only_nv.cu": HAZARD,
        "src/common.cu": CLEAN,
        "src/nv_extra.cu": HAZARD,
    })
    # The subdirectory's list is CUDA-only even though the HIP arm compiles one of its sources.
    assert _not_built(root) == {
        "nv/CMakeLists.txt": "read only from a CUDA-only branch (CMakeLists.txt:14)",
        "nv/only_nv.cu": "listed only on a CUDA-only path (nv/CMakeLists.txt:1)",
        "src/nv_extra.cu": "listed only on a CUDA-only path (nv/CMakeLists.txt:1)",
    }
    build = _read(root)
    assert build.rocm_defines == {"P_AMD": "1"}
    assert build.cuda_defines == {"P_NV": None}
    assert build.other_builds_define == {"P_NV"}
    assert build.include_dirs == (str(root / "include"),)


# Two backend switches a configure step turns on one at a time; the ROCm build's arm names a
# file CMake writes into its build folder.
CMAKE_SWITCHES = """\
    cmake_minimum_required(VERSION 3.21)
    project(p LANGUAGES CXX)
    option(P_ENABLE_{cuda} "NVIDIA backend" OFF)
    option(P_ENABLE_{hip} "AMD backend" OFF)
    add_library(core src/common.cu ${{PROJECT_BINARY_DIR}}/version.cpp)
    if(P_ENABLE_{hip})
      target_sources(core PRIVATE src/amd.hip)
    endif()
    add_subdirectory(ops)
    include(cmake/nv_sources.cmake)
    """


def _switch_project(tmp_path: Path, cuda: str = "CUDA", hip: str = "HIP") -> Path:
    return _project(tmp_path, {
        "CMakeLists.txt": CMAKE_SWITCHES.format(cuda=cuda, hip=hip),
        # The subfolder tests only the CUDA switch; the top tests both.
        "ops/CMakeLists.txt": f"if(P_ENABLE_{cuda})\n  target_sources(core PRIVATE nv_ops.cu)\nendif()\n",
        # An included list's relative paths are the including folder's (`src/`, not `cmake/src/`).
        "cmake/nv_sources.cmake": f"if(P_ENABLE_{cuda})\n  target_sources(core PRIVATE src/nv_only.cu)\nendif()\n",
        "src/common.cu": CLEAN,
        "src/amd.hip": CLEAN,
        "src/nv_only.cu": HAZARD,
        "ops/nv_ops.cu": HAZARD,
    })


@pytest.mark.parametrize("cuda, hip", [("CUDA", "HIP"), ("CUDALIB", "HIPLIB")])
def test_the_cuda_arm_of_a_backend_pair_is_cuda_only_in_subfolders_and_included_lists(
        tmp_path: Path, cuda: str, hip: str) -> None:
    root = _switch_project(tmp_path, cuda, hip)
    assert _not_built(root) == {
        "ops/nv_ops.cu": "listed only on a CUDA-only path (ops/CMakeLists.txt:2)",
        "src/nv_only.cu": "listed only on a CUDA-only path (cmake/nv_sources.cmake:2)",
    }
    result = scan([root], root, select=("W001",))
    assert result.findings == []


def test_a_file_the_build_writes_leaves_the_source_lists_read_but_an_unknown_one_does_not(tmp_path: Path) -> None:
    root = _switch_project(tmp_path)
    (root / "CMakeLists.txt").write_text(
        (root / "CMakeLists.txt").read_text().replace("${PROJECT_BINARY_DIR}", "${GENERATED_DIR}"))
    assert _not_built(root) == {}  # a folder the lists do not say: any file may be in it
    result = scan([root], root, select=("W001",))
    assert sorted(Path(f.path).name for f in result.findings) == ["nv_only.cu", "nv_ops.cu"]


@pytest.mark.parametrize("item, decides", [
    ("${CORE_HEADERS}", True),  # a list no file, option or user sets: empty
    ("$<TARGET_OBJECTS:core_objects>", True),  # another target's objects: no sources
    ("${CORE_SOURCES}", False),  # set by a command whose result the lists do not show
])
def test_source_list_items_that_name_no_source_leave_the_lists_read(tmp_path: Path, item: str, decides: bool) -> None:
    root = _switch_project(tmp_path)
    top = (root / "CMakeLists.txt").read_text()
    (root / "CMakeLists.txt").write_text(top.replace(
        "add_library(core", f"find_core_sources(CORE_SOURCES)\nadd_library(core {item}"))
    assert sorted(_not_built(root)) == (["ops/nv_ops.cu", "src/nv_only.cu"] if decides else [])


@pytest.mark.parametrize("setter", [
    "foreach(CORE_EXTRA a;b)\nendforeach()",  # a loop variable
    "file(STRINGS ${CMAKE_SOURCE_DIR}/extra.txt CORE_EXTRA)",  # a file() output
    "include(${CMAKE_SOURCE_DIR}/extra.inc)",  # a file the walk does not read may set it
])
def test_a_list_something_may_set_keeps_the_lists_undecided(tmp_path: Path, setter: str) -> None:
    root = _switch_project(tmp_path)
    top = (root / "CMakeLists.txt").read_text()
    (root / "CMakeLists.txt").write_text(top.replace("add_library(core", f"{setter}\nadd_library(core ${{CORE_EXTRA}}"))
    assert _not_built(root) == {}


def test_a_define_only_other_builds_pass_is_undefined_in_a_described_rocm_build(tmp_path: Path) -> None:
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_ROCM "HIP backend" OFF)
            option(P_FAST "faster kernels" OFF)
            if(P_ROCM)
              enable_language(HIP)
            else()
              enable_language(CUDA)
              add_compile_definitions(P_WITH_CUBLAS)
            endif()
            if(P_FAST)
              add_compile_definitions(P_FAST_PATHS)
            endif()
            add_library(p a.cu b.cu)
            """,
        "a.cu": _cublas_if("defined(P_WITH_CUBLAS)"),  # the CUDA arm's alone: not on ROCm
        "b.cu": _cublas_if("defined(P_FAST_PATHS)"),  # an option the ROCm build may set too
    }
    root = _project(tmp_path / "ported", files)
    assert _read(root).other_builds_define == {"P_WITH_CUBLAS"}
    assert {(Path(f.path).name, f.code) for f in scan([root], root).findings} >= {("b.cu", "L001")}
    assert "a.cu" not in {Path(f.path).name for f in scan([root], root).findings}
    # Build files that say nothing of ROCm: what they define elsewhere decides nothing.
    files["CMakeLists.txt"] = files["CMakeLists.txt"].replace("enable_language(HIP)", "message(STATUS cpu)")
    root = _project(tmp_path / "never_ported", files)
    assert {Path(f.path).name for f in scan([root], root).findings if f.code == "L001"} == {"a.cu", "b.cu"}


def test_a_configured_headers_cmakedefine_follows_the_variables_each_build_sets(tmp_path: Path) -> None:
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_ENABLE_HIP "HIP backend" OFF)
            if(P_ENABLE_HIP)
              enable_language(HIP)
              set(P_HAVE_HIP 1)
            else()
              enable_language(CUDA)
              set(P_HAVE_CUDA 1)
            endif()
            configure_file(${CMAKE_SOURCE_DIR}/config.h.in ${CMAKE_BINARY_DIR}/config.h)
            add_library(p a.cu)
            """,
        "config.h.in": "#cmakedefine P_HAVE_CUDA\n#cmakedefine P_HAVE_HIP\n#cmakedefine01 P_HAVE_HIP\n",
        "a.cu": _cublas_if("defined(P_HAVE_CUDA)"),
    }
    root = _project(tmp_path / "ported", files)
    build = _read(root)
    # The CUDA build's arm sets P_HAVE_CUDA: the header defines it there alone.
    assert build.other_builds_define == {"P_HAVE_CUDA"}
    assert "P_HAVE_HIP" in build.rocm_defines
    assert "a.cu" not in {Path(f.path).name for f in scan([root], root).findings}
    # Set on both paths, it is defined on ROCm too: the cuBLAS call is reported.
    files["CMakeLists.txt"] = files["CMakeLists.txt"].replace("set(P_HAVE_HIP 1)", "set(P_HAVE_HIP 1)\n  set(P_HAVE_CUDA 1)")
    root = _project(tmp_path / "both", files)
    assert {(Path(f.path).name, f.code) for f in scan([root], root).findings} >= {("a.cu", "L001")}


def test_a_variable_only_the_cuda_backends_module_sets_is_unset_in_the_rocm_build(tmp_path: Path) -> None:
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_GPU_HIP "HIP backend" OFF)
            if(P_GPU_HIP)
              enable_language(HIP)
            else()
              include(${CMAKE_SOURCE_DIR}/cmake/p_cuda.cmake)
            endif()
            configure_file(${CMAKE_SOURCE_DIR}/config.h.in ${CMAKE_BINARY_DIR}/config.h)
            add_library(p a.cu)
            add_subdirectory(tools)
            """,
        "cmake/p_cuda.cmake": "enable_language(CUDA)\nset(P_HAVE_CUBLAS ON)\n",
        "tools/CMakeLists.txt": "if(P_HAVE_CUBLAS)\n  target_link_libraries(p PRIVATE CUDA::cudart)\nendif()\n",
        "config.h.in": "#cmakedefine01 P_HAVE_CUBLAS\n",
        "a.cu": _cublas_if("P_HAVE_CUBLAS"),
    }

    def found(root: Path) -> set[tuple[str, str]]:
        return {(os.path.relpath(f.path, root), f.code) for f in scan([root], root, select=("C003", "L001")).findings}

    # Only the CUDA arm reads the module that sets it: in the ROCm build it is unset, in the
    # list file that tests it and in the header CMake writes.
    assert found(_project(tmp_path / "ported", files)) == set()
    # A CMake module of the machine's is no list of the project's that might set it; a file
    # in the build folder may be one the project writes from a template of its own.
    for name, include, inferred in (("system", "/usr/share/cmake/Modules/CheckLanguage.cmake", True),
                                    ("generated", "${CMAKE_BINARY_DIR}/generated.cmake", False)):
        variant = {**files, "CMakeLists.txt": files["CMakeLists.txt"].replace(
            "add_library(p a.cu)", f"include({include})\nadd_library(p a.cu)")}
        assert bool(found(_project(tmp_path / name, variant))) is not inferred, name
    # A switch a user may give is not the project's to decide.
    option = {**files, "CMakeLists.txt": files["CMakeLists.txt"].replace(
        "option(P_GPU_HIP", 'option(P_HAVE_CUBLAS "cuBLAS kernels" OFF)\noption(P_GPU_HIP')}
    assert found(_project(tmp_path / "option", option)) == {("tools/CMakeLists.txt", "C003"), ("a.cu", "L001")}
    # Nor does a project with no ROCm build decide it.
    unported = {**files, "CMakeLists.txt": files["CMakeLists.txt"].replace("enable_language(HIP)", "message(STATUS cpu)")}
    assert found(_project(tmp_path / "unported", unported)) == {("tools/CMakeLists.txt", "C003"), ("a.cu", "L001")}


def test_a_switch_whose_arm_would_fail_the_rocm_configure_is_off_there(tmp_path: Path) -> None:
    guard = "  if(NOT P_GPU_CUDA)\n    message(FATAL_ERROR \"the NVSHMEM path needs the CUDA backend\")\n  endif()\n"
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_GPU_HIP "HIP backend" OFF)
            option(P_WITH_NVSHMEM "NVSHMEM halo exchange" OFF)
            if(P_GPU_HIP)
              enable_language(HIP)
            else()
              include(${CMAKE_SOURCE_DIR}/cmake/p_cuda.cmake)
            endif()
            add_library(p a.cu)
            if(P_WITH_NVSHMEM)
            GUARD  target_link_libraries(p PRIVATE CUDA::nvml)
            endif()
            configure_file(${CMAKE_SOURCE_DIR}/config.h.in ${CMAKE_BINARY_DIR}/config.h)
            """,
        "cmake/p_cuda.cmake": "enable_language(CUDA)\nset(P_GPU_CUDA ON)\n",
        "config.h.in": "#cmakedefine01 P_WITH_NVSHMEM\n",
        "a.cu": _cublas_if("P_WITH_NVSHMEM"),
    }

    def found(name: str, guarded: bool, ported: bool = True) -> set[tuple[str, str]]:
        text = files["CMakeLists.txt"].replace("GUARD", textwrap.indent(guard, "    ") if guarded else "")
        if not ported:  # a CPU backend beside the CUDA one
            text = text.replace("enable_language(HIP)", "message(STATUS cpu)").replace("P_GPU_HIP", "P_GPU_CPU")
        root = _project(tmp_path / name, {**files, "CMakeLists.txt": text})
        return {(os.path.relpath(f.path, root), f.code) for f in scan([root], root, select=("C003", "L001")).findings}

    # A ROCm configure with the switch on fails: the switch is off in the ROCm build, its arm
    # and what the configured header says of it are the CUDA build's.
    assert found("guarded", True) == set()
    hazards = {("CMakeLists.txt", "C003"), ("a.cu", "L001")}
    assert found("open", False) == hazards  # nothing refuses it on ROCm
    assert found("unported", True, ported=False) == hazards  # no ROCm build to refuse it


@pytest.mark.parametrize("top, lists", [
    # The module folder a subdirectory hands its parent with PARENT_SCOPE: the HIP setup is read.
    ("add_subdirectory(cmake)\ninclude(ProjHip)\n",
     {"cmake/CMakeLists.txt": "set(CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR} PARENT_SCOPE)\n",
      "cmake/ProjHip.cmake": "if(P_ENABLE_HIP)\n  enable_language(HIP)\n  add_compile_definitions(P_ON_HIP)\nendif()\n"}),
    # A switch copied from an option's default is still the user's choice, not OFF for good.
    ("set(P_ENABLE_HIP ${P_GPU})\nif(P_ENABLE_HIP)\n  enable_language(HIP)\n  add_compile_definitions(P_ON_HIP)\nendif()\n",
     {}),
])
def test_the_hip_setup_is_read_through_parent_scope_and_copied_options(tmp_path: Path, top: str, lists: dict) -> None:
    root = _project(tmp_path, {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX)\n"
                          "option(P_GPU \"GPU build\" OFF)\n" + top + "add_library(p a.cpp)\n",
        "a.cpp": CLEAN, **lists})
    build = _read(root)
    assert build.rocm_build and "P_ON_HIP" in build.rocm_defines


def test_include_folders_are_the_build_trees(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_SYSTEM "system install" OFF)
            set(P_PREFIX lib)
            if(P_SYSTEM)
              set(P_PREFIX /usr/lib)
            endif()
            add_library(p a.cpp)
            target_include_directories(p PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/inc>
                                                $<INSTALL_INTERFACE:${P_PREFIX}/include>)
            """,
        "a.cpp": CLEAN})
    # (P_PREFIX holds one of two values: the install folder's expression is no path at all)
    assert [os.path.relpath(d, root) for d in _read(root).include_dirs] == ["inc"]


def test_a_cuda_source_a_rocm_wrapper_includes_by_name_is_compiled_for_rocm(tmp_path: Path) -> None:
    # The HIP arm compiles a one-line wrapper around the CUDA arm's source, which it finds
    # through a folder the lists do not name: the ROCm build compiles that source too.
    root = _project(tmp_path, {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_ENABLE_CUDA "NVIDIA backend" OFF)
            option(P_ENABLE_HIP "AMD backend" OFF)
            if(P_ENABLE_CUDA)
              add_library(p cuda/solve.cu cuda/other.cu)
            elseif(P_ENABLE_HIP)
              enable_language(HIP)
              add_library(p hip/solve.hip.cpp)
            endif()
            """,
        "cuda/solve.cu": HAZARD,
        "cuda/other.cu": HAZARD,
        "hip/solve.hip.cpp": '#include "solve.cu"\n',
    })
    assert _not_built(root) == {"cuda/other.cu": "listed only on a CUDA-only path (CMakeLists.txt:6)"}
    assert {Path(f.path).name for f in scan([root], root, select=("W001",)).findings} == {"solve.cu"}


def test_the_arm_that_enables_hip_is_the_one_the_rocm_build_takes(tmp_path: Path) -> None:
    ptx = ('#ifndef P_AMD\n__device__ unsigned lane() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); '
           'return l; }\n#endif\n')
    lists = """\
        cmake_minimum_required(VERSION 3.21)
        project(p LANGUAGES CXX)
        option(P_GPU "GPU kernels" OFF)
        if(P_GPU)
          if(P_VENDOR STREQUAL "amd")
            enable_language(HIP)
            add_definitions(-DP_AMD)
          else()
            enable_language(CUDA)
          endif()
        endif()
        add_library(p lane.cu)
        """
    root = _project(tmp_path / "ported", {"CMakeLists.txt": lists, "lane.cu": ptx})
    # Neither condition names ROCm, and both are options: the ROCm build is the one that gets to HIP.
    assert _read(root).rocm_defines == {"P_AMD": None}
    assert [f.code for f in scan([root], root).findings if f.code == "A001"] == []
    root = _project(tmp_path / "never_ported", {"CMakeLists.txt": lists.replace("enable_language(HIP)", ""),
                                                 "lane.cu": ptx})
    assert _read(root).rocm_defines == {}
    assert [f.code for f in scan([root], root).findings if f.code == "A001"] == ["A001"]
    # An optional `find_package(hip QUIET)` only probes: the arm stays undecided.
    root = _project(tmp_path / "probing", {"CMakeLists.txt": lists.replace("enable_language(HIP)", "find_package(hip QUIET)"),
                                           "lane.cu": ptx})
    assert _read(root).rocm_defines == {}


def test_an_unreached_list_file_that_compiles_with_sycl_is_not_the_rocm_build(tmp_path: Path) -> None:
    # (The top adds a folder the walk cannot name: any unreached list file may be read.)
    root = _project(tmp_path, {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES CXX)\nadd_subdirectory(${P_BACKEND})\n",
        "sycl/CMakeLists.txt": 'set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -fsycl")\nadd_library(p_sycl a.cpp)\n',
        "sycl/a.cpp": '#include "a.hpp"\n',
        "sycl/a.hpp": "#pragma once\n",
        "sycl/own/CMakeLists.txt": "add_library(p_own b.cpp)\n",  # a list of its own: not the SYCL build's
        "sycl/own/b.cpp": CLEAN,
        # SYCL under a condition is one choice among others: it decides nothing.
        "maybe/CMakeLists.txt": 'if(USE_SYCL)\n  add_compile_options(-fsycl)\nendif()\nadd_library(p_maybe c.cpp)\n',
        "maybe/c.cpp": CLEAN,
    })
    assert _not_built(root) == {
        "sycl/a.cpp": "compiled by the SYCL build (sycl/CMakeLists.txt), which hip-clang never runs",
        "sycl/a.hpp": "included only by files not compiled for ROCm",
    }


def test_a_sibling_backends_directory_wide_defines_never_reach_the_rocm_build(tmp_path: Path) -> None:
    # Two backends compile the same kernels from their own directories, each added through a
    # function the walk cannot follow; `add_compile_definitions` applies to the targets of
    # its own directory (and below), so the MUSA-style backend's names are not defined where
    # the HIP backend's targets are, even when one configure enables both.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            function(add_backend name)
              add_subdirectory(${name})
            endfunction()
            add_backend(hip)
            add_backend(other)
            """,
        "hip/CMakeLists.txt": "enable_language(HIP)\nadd_compile_definitions(P_USE_HIP)\n"
                              "add_library(p_hip ../kernels/k.cu)\n",
        "other/CMakeLists.txt": """\
            find_package(OtherToolkit)
            if(OtherToolkit_FOUND)
              add_compile_definitions(P_USE_OTHER P_SHARED_TUNING=4)
              add_definitions(-DP_OTHER_ONLY)
            endif()
            function(other_helper)
              add_compile_definitions(P_WHERE_CALLED)  # runs in the caller's directory
            endfunction()
            add_library(p_other ../kernels/k.cu)
            """,
        "kernels/k.cu": _cublas_if("defined(P_USE_OTHER)"),
    }
    root = _project(tmp_path / "ported", files)
    assert _read(root).other_builds_define == {"P_USE_OTHER", "P_SHARED_TUNING", "P_OTHER_ONLY"}
    assert [f.code for f in scan([root], root).findings if f.code == "L001"] == []
    # The HIP backend defines a name too: it stays the ROCm build's.
    files["hip/CMakeLists.txt"] += "add_compile_definitions(P_SHARED_TUNING=8)\n"
    assert _read(_project(tmp_path / "shared", files)).other_builds_define == {"P_USE_OTHER", "P_OTHER_ONLY"}
    # With no list file that builds HIP, nothing says where the ROCm targets are: no name is
    # called another build's, and the guarded include is reported.
    files["hip/CMakeLists.txt"] = "add_library(p_hip ../kernels/k.cu)\n"
    root = _project(tmp_path / "never_ported", files)
    assert _read(root).other_builds_define == frozenset()
    assert [f.code for f in scan([root], root).findings if f.code == "L001"] == ["L001"]


def test_unreached_list_file_that_requires_hip_is_the_rocm_build(tmp_path: Path) -> None:
    """A backend added through a function (`add_subdirectory(${dir})`) is not reached by the
    walk; a list file that requires HIP at its top level is still the ROCm build's: its
    defines are ROCm's, and the CUDA list file whose sources it compiles is not read there."""
    function = """\
        function(add_backend name)
          string(TOLOWER "be-${name}" directory)
          add_subdirectory(${directory})
        endfunction()
        add_backend(CUDA)
        add_backend(HIP)
        """
    hip = """\
        find_package(hip REQUIRED)
        file(GLOB HIP_SOURCES "../be-cuda/*.cu")
        add_compile_definitions(LIB_USE_HIP LIB_HIP_LEVEL=2)
        add_library(lib-hip ${HIP_SOURCES})
        """
    root = _project(tmp_path, {"CMakeLists.txt": function, "be-hip/CMakeLists.txt": hip,
                               "be-cuda/CMakeLists.txt": "enable_language(CUDA)\nadd_library(lib-cuda k.cu)\n",
                               "be-cuda/k.cu": CLEAN})
    files = _read(root)
    assert files.rocm_defines == {"LIB_USE_HIP": None, "LIB_HIP_LEVEL": "2"} and files.cuda_defines == {}
    assert list(_not_built(root)) == ["be-cuda/CMakeLists.txt"]
    # Its paths are the project's: `CMAKE_SOURCE_DIR` is the root, not the list's folder.
    (root / "be-hip" / "CMakeLists.txt").write_text(textwrap.dedent(hip).replace("../be-cuda", "${CMAKE_SOURCE_DIR}/be-cuda"))
    assert list(_not_built(root)) == ["be-cuda/CMakeLists.txt"]
    # Without REQUIRED (or under an `if`) HIP is optional there: nothing is decided.
    (root / "be-hip" / "CMakeLists.txt").write_text(textwrap.dedent(hip).replace("hip REQUIRED", "hip"))
    assert _read(root).rocm_defines == {} and _not_built(root) == {}
    (root / "be-hip" / "CMakeLists.txt").write_text("if(WITH_HIP)\n" + textwrap.dedent(hip) + "endif()\n")
    assert _read(root).rocm_defines == {} and _not_built(root) == {}


def test_cmake_that_does_not_parse_or_loops(tmp_path: Path, capsys) -> None:
    broken = _project(tmp_path / "broken", {
        "CMakeLists.txt": 'if(USE_ROCM)\n  add_library(p "a.cu\nelse()\n  add_library(p b.cu)\n',
        "b.cu": HAZARD,
    })
    assert _not_built(broken) == {}  # a list file with errors decides nothing
    cycle = _project(tmp_path / "cycle", {
        "CMakeLists.txt": "include(cmake/a.cmake)\n",
        "cmake/a.cmake": "include(${CMAKE_CURRENT_LIST_DIR}/b.cmake)\n",
        "cmake/b.cmake": "include(${CMAKE_CURRENT_LIST_DIR}/a.cmake)\n",
    })
    assert _not_built(cycle) == {}
    assert capsys.readouterr().err == ""


# ---- Makefiles ------------------------------------------------------------------------------
def test_makefile_objects_and_defines_per_arm(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "Makefile": """\
            ifeq ($(GPU),hip)
            OBJS = hip/ops.o
            CFLAGS += -DMK_AMD=1
            else
            OBJS = cuda/ops.o
            CFLAGS += -DMK_NV
            endif
            """,
        "hip/ops.cpp": CLEAN,
        "cuda/ops.cu": HAZARD,
    })
    assert _not_built(root) == {"cuda/ops.cu": "listed only on a CUDA-only path (Makefile:5)"}
    build = _read(root)
    assert (build.rocm_defines, build.cuda_defines) == ({"MK_AMD": "1"}, {"MK_NV": None})


def test_a_makefile_that_compiles_with_hipcc_on_the_rocm_path_is_a_rocm_build(tmp_path: Path) -> None:
    """`%.o: %.cu` run by a compiler the ROCm arm sets to hipcc: the makefile describes a ROCm
    build that compiles its CUDA sources as written, found per folder when the source list
    cannot be read (`$(foreach ...)`). A CUDA toolkit include there stops that build (an
    error, not the note of a project with no ROCm build); a makefile whose only compile rule
    is nvcc's describes none."""
    makefile = """\
        DIRS := src src/extra
        SOURCES := $(foreach D,$(DIRS),$(wildcard $(D)/*.cu))
        ifdef HIP_PLATFORM
          GPU_CC := hipcc
        else
          GPU_CC := nvcc
        endif
        app: $(SOURCES:.cu=.o)
        \t$(GPU_CC) $^ -o $@
        %.o: %.cu
        \t$(GPU_CC) -O2 -c $< -o $@
        """
    kernel = "#include <cuda_runtime.h>\n" + CLEAN
    root = _project(tmp_path / "hip", {"Makefile": makefile, "src/a.cu": kernel, "src/extra/b.cu": kernel})
    build = _read(root)
    assert build.rocm_build
    assert build.rocm_compiled == {str(root / "src/a.cu"), str(root / "src/extra/b.cu")}
    findings = scan([root], root, select=("R007",)).findings
    assert sorted((f.path.split("/")[-1], f.severity.value) for f in findings) == [("a.cu", "error"), ("b.cu", "error")]
    assert all("the ROCm build compiles this file as written" in f.message for f in findings)

    nvcc_only = _project(tmp_path / "nv", {"Makefile": makefile.replace("hipcc", "nvcc"), "src/a.cu": kernel})
    assert not _read(nvcc_only).rocm_build
    assert [f.severity.value for f in scan([nvcc_only], nvcc_only, select=("R007",)).findings] == ["note"]


def test_make_fragments_named_for_a_platform_are_that_builds(tmp_path: Path) -> None:
    """A configure step includes one platform's fragment (`makefiles/hip_64bit.mk` or
    `makefiles/cuda_64bit.mk`): each one's flags are its build's alone; a fragment whose name
    says no platform is not read."""
    root = _project(tmp_path, {
        "Makefile": "include kaldi.mk\nall: ops.o\n",
        "makefiles/hip_64bit.mk": "GPU_FLAGS = -DMK_ON_AMD=1 -DMK_HAVE_GPU=1\n",
        "makefiles/cuda_64bit.mk": "GPU_FLAGS = -DMK_HAVE_GPU=1 -DMK_NV_ONLY\n",
        "makefiles/common.mk": "CXXFLAGS += -DMK_EVERYWHERE\n",
    })
    build = _read(root)
    assert (build.rocm_defines, build.cuda_defines) == (
        {"MK_ON_AMD": "1", "MK_HAVE_GPU": "1"}, {"MK_HAVE_GPU": "1", "MK_NV_ONLY": None})


def test_a_shim_chosen_by_the_hip_fragments_define_hides_the_cuda_names(tmp_path: Path) -> None:
    source = """\
        #ifdef MK_ON_AMD
        #include <hipblas/hipblas.h>
        #define cublasHandle_t hipblasHandle_t
        #else
        #include <cublas_v2.h>
        #endif
        cublasHandle_t handle;
        """
    files = {"Makefile": "all: blas.o\n", "blas.cpp": textwrap.dedent(source)}
    root = _project(tmp_path / "unread", files)
    assert {f.code for f in scan([root], root, select=("L001",)).findings} == {"L001"}
    root = _project(tmp_path / "read", {**files, "makefiles/hip.mk": "CXXFLAGS += -DMK_ON_AMD\n"})
    assert scan([root], root, select=("L001",)).findings == []


# A Makefile that picks the platform by a variable that names none (`ifdef PROJCONFIG`): its
# hipcc arm defines the switch of a cuFFT -> hipFFT shim.
PLATFORM_BY_COMPILER = """\
    ifdef PROJCONFIG
      DFLAGS   += -DMYPROJ_HIP
      GPUCXX   ?= hipcc
      LIBS     += -lhipfft -lamdhip64
    else
      GPUCXX   ?= nvcc
      GPUFLAGS += --expt-extended-lambda
      LIBS     += -lcufft
    endif
    GPUFLAGS += $(DFLAGS)
    app: fft.o
    \t$(GPUCXX) $^ -o $@ $(LIBS)
    %.o: %.cu
    \t$(GPUCXX) $(GPUFLAGS) -c $< -o $@
    """
FFT_SHIM = """\
    #ifdef MYPROJ_HIP
    #include <hipfft/hipfft.h>
    #define cufftHandle hipfftHandle
    #else
    #include <cufft.h>
    #endif
    cufftHandle plan;
    """


def test_the_makefile_arm_that_compiles_with_hipcc_is_the_rocm_builds(tmp_path: Path) -> None:
    """The arm that sets the recipes' compiler to hipcc is the one the ROCm build takes: its
    `-D` flags are the ROCm build's defines (the shim applies), and the nvcc arm's flags and
    libraries are the CUDA build's. The same chain with no hipcc arm (a CUDA-only Makefile)
    keeps its findings."""
    root = _project(tmp_path / "ported", {"Makefile": PLATFORM_BY_COMPILER, "fft.cu": FFT_SHIM})
    build = _read(root)
    assert (build.rocm_defines, build.cuda_defines) == ({"MYPROJ_HIP": None}, {})
    assert scan([root], root, select=("B001", "L001", "R007")).findings == []

    cuda_only = PLATFORM_BY_COMPILER.replace("hipcc", "nvcc").replace("-lhipfft -lamdhip64", "-lcufft")
    root = _project(tmp_path / "cuda", {"Makefile": cuda_only, "fft.cu": FFT_SHIM})
    assert _read(root).rocm_defines == {}
    findings = scan([root], root, select=("B001", "L001")).findings
    found = {(Path(f.path).name, f.code, f.location.start_line) for f in findings}
    assert found == {("Makefile", "B001", 7), ("Makefile", "L001", 4), ("Makefile", "L001", 8), ("fft.cu", "L001", 5)}


# ---- the scan -------------------------------------------------------------------------------
def _selecting_project(tmp_path: Path) -> Path:
    return _project(tmp_path, {
        "setup.py": SETUP_SELECTS_SOURCES,
        "ck/gemm.cu": CLEAN,
        "cuda/gemm_nv.cu": '#include "nv_only.cuh"\n' + HAZARD,
        "cuda/nv_only.cuh": HAZARD,
        "common/shared.cu": HAZARD,
    })


def test_findings_in_files_not_built_are_dropped(tmp_path: Path) -> None:
    root = _selecting_project(tmp_path)
    result = scan([root], root, select=("W001",))
    assert {Path(f.path).name for f in result.findings} == {"shared.cu"}
    assert {Path(p).name: r for p, r in result.not_built.items()} == {
        "gemm_nv.cu": "listed only on a CUDA-only path (setup.py:9)",
        "nv_only.cuh": "included only by files not compiled for ROCm",
    }
    # A file named alone is judged by the same build files: the pre-commit case.
    alone = scan([root / "cuda" / "gemm_nv.cu"], root, select=("W001",))
    assert alone.findings == [] and len(alone.not_built) == 1


def test_summary_and_show_not_built(tmp_path: Path, monkeypatch) -> None:
    root = _selecting_project(tmp_path)
    monkeypatch.chdir(root)
    out = CliRunner().invoke(main, ["scan", ".", "--no-cache", "--select", "W001"]).output
    assert "2 files are not compiled for ROCm" in out
    assert "cuda/gemm_nv.cu: not compiled for ROCm" not in out
    listed = CliRunner().invoke(main, ["scan", ".", "--no-cache", "--select", "W001", "--show-not-built"]).output
    assert "cuda/gemm_nv.cu: not compiled for ROCm: listed only on a CUDA-only path (setup.py:9)" in listed
    assert "cuda/nv_only.cuh: not compiled for ROCm: included only by files not compiled for ROCm" in listed


def test_include_cycle_among_not_built_files(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "setup.py": SETUP_SELECTS_SOURCES,
        "ck/gemm.cu": CLEAN,
        "cuda/gemm_nv.cu": '#include "a.cuh"\n' + HAZARD,
        "cuda/a.cuh": '#include "b.cuh"\n',
        "cuda/b.cuh": '#include "a.cuh"\n',
        "common/shared.cu": CLEAN,
    })
    assert set(_not_built(root)) == {"cuda/gemm_nv.cu", "cuda/a.cuh", "cuda/b.cuh"}


def test_cmake_source_named_by_a_project_function_on_the_rocm_path(tmp_path: Path) -> None:
    # What `add_gpu_library` does is not followed: a source it names on the ROCm path may be
    # compiled there, so the CUDA arm naming it too decides nothing.
    root = _project(tmp_path, {
        "CMakeLists.txt": """\
            option(USE_ROCM "AMD build" OFF)
            function(add_gpu_library name)
              add_library(${name} SHARED ${ARGN})
            endfunction()
            if(USE_ROCM)
              add_gpu_library(ops kernels/ops.cu)
            else()
              add_library(ops SHARED kernels/ops.cu kernels/nv_only.cu)
            endif()
            """,
        "kernels/ops.cu": HAZARD,
        "kernels/nv_only.cu": HAZARD,
    })
    assert _not_built(root) == {"kernels/nv_only.cu": "listed only on a CUDA-only path (CMakeLists.txt:8)"}


def test_cmake_subdirectories_that_add_each_other(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "CMakeLists.txt": "add_subdirectory(a)\nadd_subdirectory(b)\n",
        "a/CMakeLists.txt": "add_subdirectory(../b b_again)\nadd_subdirectory(..)\n",
        "b/CMakeLists.txt": "add_subdirectory(../a a_again)\nadd_subdirectory(..)\ninclude(../b/CMakeLists.txt)\n",
    })
    assert _not_built(root) == {}


def test_rocm_sources_made_at_build_time_keep_their_cuda_originals(tmp_path: Path) -> None:
    # The ROCm arm compiles `hip/scan_hip.cu`, which a hipify step writes from `cuda/scan.cu`.
    root = _project(tmp_path, {
        "setup.py": """\
            import torch
            from torch.utils.cpp_extension import CUDAExtension
            if torch.version.hip:
                sources = ["hip/scan_hip.cu"]
            else:
                sources = ["cuda/scan.cu", "cuda/tma_copy.cu"]
            CUDAExtension("e", sources)
            """,
        "cuda/scan.cu": HAZARD,
        "cuda/tma_copy.cu": HAZARD,
    })
    assert _not_built(root) == {"cuda/tma_copy.cu": "listed only on a CUDA-only path (setup.py:6)"}
    # A file of the same name in another folder is no copy: the ROCm arm compiles `ck/api.cu`,
    # which it renames from its own `ck/api.cpp` at build time, never the CUDA arm's `fa/api.cpp`.
    root = _project(tmp_path / "renamed", {
        "setup.py": """\
            import torch
            from torch.utils.cpp_extension import CUDAExtension
            if torch.version.hip:
                sources = ["ck/api.cu"]
            else:
                sources = ["fa/api.cpp"]
            CUDAExtension("e", sources)
            """,
        "ck/api.cpp": CLEAN,
        "fa/api.cpp": HAZARD,
    })
    assert _not_built(root) == {"fa/api.cpp": "listed only on a CUDA-only path (setup.py:6)"}


# ---- build helpers: the project's own functions setup.py imports -----------------------------
# setup.py makes its extension with a function of the project's `build_tools` package, which
# adds a source only where the ROCm build never goes (or, in the twin, on both builds).
BUILD_HELPER = """\
    import os
    from pathlib import Path

    from torch.utils.cpp_extension import CUDAExtension


    def is_rocm():
        return os.path.isdir("/opt/rocm") and not os.getenv("CUDA_HOME")


    def make_extension(folder):
        folder = Path(folder)
        sources = [folder / "common.cu"]
        if {condition}:
            sources.append(folder / "cuda_only" / "comm.cu")
        return CUDAExtension("pkg._C", sources=[str(s) for s in sources])
    """
SETUP_CALLS_HELPER = """\
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension

    from build_tools.ext import make_extension

    setup(name="pkg", ext_modules=[make_extension({folder})], cmdclass={{"build_ext": BuildExtension}})
    """


def _helper_project(root: Path, condition: str, folder: str = '"csrc"') -> Path:
    return _project(root, {
        "setup.py": SETUP_CALLS_HELPER.format(folder=folder),
        "build_tools/__init__.py": "",
        "build_tools/ext.py": BUILD_HELPER.format(condition=condition),
        "csrc/common.cu": HAZARD,
        "csrc/cuda_only/comm.cu": HAZARD,
    })


def test_a_source_a_build_helper_adds_only_for_cuda_is_not_built(tmp_path: Path, monkeypatch) -> None:
    root = _helper_project(tmp_path, "not is_rocm()")
    result = scan([root], root, select=("W001",))
    assert {Path(f.path).name for f in result.findings} == {"common.cu"}
    assert {Path(p).relative_to(root).as_posix(): r for p, r in result.not_built.items()} == {
        "csrc/cuda_only/comm.cu": "listed only on a CUDA-only path (build_tools/ext.py:15)"}
    monkeypatch.chdir(root)
    listed = CliRunner().invoke(main, ["scan", ".", "--no-cache", "--select", "W001", "--show-not-built"]).output
    assert ("csrc/cuda_only/comm.cu: not compiled for ROCm: listed only on a CUDA-only path "
            "(build_tools/ext.py:15)") in listed


@pytest.mark.parametrize("imports, callee", [
    ("from build_tools import ext", "ext.make_extension"),
    ("import build_tools.ext", "build_tools.ext.make_extension"),
    ("import build_tools.ext as helpers", "helpers.make_extension"),
])
def test_a_build_helper_is_found_through_each_form_of_import(tmp_path: Path, imports: str, callee: str) -> None:
    root = _helper_project(tmp_path, "not is_rocm()")
    (root / "setup.py").write_text(f'from setuptools import setup\n{imports}\nsetup(ext_modules=[{callee}("csrc")])\n')
    assert _not_built(root) == {"csrc/cuda_only/comm.cu": "listed only on a CUDA-only path (build_tools/ext.py:15)"}


def test_a_source_a_build_helper_adds_on_both_builds_is_built(tmp_path: Path) -> None:
    root = _helper_project(tmp_path, "os.getenv('PKG_WITH_COMM', '1') == '1'")
    result = scan([root], root, select=("W001",))
    assert {Path(f.path).name for f in result.findings} == {"common.cu", "comm.cu"}
    assert result.not_built == {}


def test_a_build_helper_that_cannot_be_read_decides_nothing(tmp_path: Path) -> None:
    # The folder comes from the environment: where the helper's sources are is not known.
    unread = _helper_project(tmp_path / "unread", "not is_rocm()", folder='os.environ["PKG_CSRC"]')
    assert _not_built(unread) == {}
    # The ROCm build's helper module does not parse: the CUDA arm's list decides nothing.
    broken = _helper_project(tmp_path / "broken", "not is_rocm()")
    (broken / "build_tools" / "ext.py").write_text("def make_extension(folder:\n")
    (broken / "setup.py").write_text(textwrap.dedent("""\
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        from build_tools.ext import make_extension

        if torch.version.hip:
            extension = make_extension("csrc")
        else:
            extension = CUDAExtension("pkg._C", ["csrc/common.cu", "csrc/cuda_only/comm.cu"])
        """))
    assert _not_built(broken) == {}


def test_a_source_list_from_a_build_helper(tmp_path: Path) -> None:
    # setup.py makes the extension; an imported module's function (calling one of its own
    # module's) gives the sources, some only where the ROCm build never goes.
    root = _project(tmp_path, {
        "setup.py": """\
            from setuptools import setup
            from torch.utils.cpp_extension import CUDAExtension
            from build_tools import sources

            setup(ext_modules=[CUDAExtension("pkg._C", sources=sources.listed("csrc"))])
            """,
        "build_tools/__init__.py": "",
        "build_tools/sources.py": """\
            import glob
            import torch

            from .paths import under


            def listed(folder):
                found = glob.glob(under(folder, "*.cu"))
                if torch.version.hip is None:
                    found += glob.glob(under(folder, "nvidia/*.cu"))
                return found
            """,
        "build_tools/paths.py": """\
            import os


            def under(folder, pattern):
                return os.path.join(folder, pattern)
            """,
        "csrc/ops.cu": HAZARD,
        "csrc/nvidia/tma.cu": HAZARD,
    })
    assert _not_built(root) == {"csrc/nvidia/tma.cu": "listed only on a CUDA-only path (setup.py:5)"}


# ---- kept between runs ----------------------------------------------------------------------
def _written_a_while_ago(root: Path) -> None:
    """A file written just now may change again within its timestamp tick: none is kept."""
    then = time.time_ns() - 10**10
    for path in root.rglob("*"):
        os.utime(path, ns=(then, then))


def test_the_record_of_what_the_reader_saw_holds_until_one_of_those_changes(tmp_path: Path) -> None:
    root = _project(tmp_path, {"CMakeLists.txt": "project(p)\n", "src/a.cu": CLEAN})
    _written_a_while_ago(root)

    def record() -> Observed:
        seen = Observed()
        assert seen.read(root / "CMakeLists.txt", 1 << 20) == b"project(p)\n"
        assert not seen.is_file(root / "src" / "CMakeLists.txt")
        assert seen.glob(str(root / "src" / "*.cu"), False, 100) == [str(root / "src" / "a.cu")]
        assert seen.settled()
        return seen

    assert record().holds()
    seen = record()
    (root / "CMakeLists.txt").write_text("project(q)\n")  # same size, new time
    assert not seen.holds()
    (root / "CMakeLists.txt").write_text("project(p)\n")
    _written_a_while_ago(root)
    seen = record()
    (root / "src" / "CMakeLists.txt").write_text("")  # a file looked for and missing appears
    assert not seen.holds()
    (root / "src" / "CMakeLists.txt").unlink()
    seen = record()
    (root / "src" / "b.cu").write_text(CLEAN)  # a glob matches one more
    assert not seen.holds()
    fresh = Observed()
    fresh.read(root / "src" / "b.cu", 1 << 20)
    assert not fresh.settled(), "b.cu was just written: it may change again within its timestamp tick"
    # What it cannot read is no answer to keep: a FIFO is never opened (it would block).
    os.mkfifo(root / "pipe.txt")
    assert Observed().read(root / "pipe.txt", 100) is None


def test_a_named_file_run_reuses_the_build_files_read_by_the_last_run(tmp_path: Path, monkeypatch) -> None:
    from portlint import engine
    from portlint.build_model import build_files

    root = _selecting_project(tmp_path / "p")
    (root / ".git").mkdir()
    _written_a_while_ago(root)
    config = Config(root=root, select=("W001",))
    reads = []
    real = build_files.read_build_files
    monkeypatch.setattr(build_files, "read_build_files", lambda *a, **k: reads.append(1) or real(*a, **k))

    def not_built(paths: list[Path]) -> set[str]:
        result = engine.scan(paths, config, cache_dir=tmp_path / "cache")
        return {Path(p).name for p in result.not_built}

    assert not_built([root]) == {"gemm_nv.cu", "nv_only.cuh"} and len(reads) == 1
    # A pre-commit run on one file: the same project, nothing it read changed.
    assert not_built([root / "cuda" / "gemm_nv.cu"]) == {"gemm_nv.cu"} and len(reads) == 1
    assert not_built([root / "ck" / "gemm.cu"]) == set() and len(reads) == 1
    # The setup.py changes: read again, and what it now says counts.
    setup = root / "setup.py"
    setup.write_text(setup.read_text().replace('glob.glob("cuda/*.cu")', '["cuda/gemm_nv.cu", "ck/gemm.cu"]'))
    _written_a_while_ago(root)
    assert not_built([root / "cuda" / "gemm_nv.cu"]) == {"gemm_nv.cu"} and len(reads) == 2
    assert not_built([root]) == {"gemm_nv.cu", "nv_only.cuh"} and len(reads) == 2
    # A file a compiled source includes is named by its bytes: editing one is reading again.
    (root / "common" / "shared.cu").write_text('#include "../cuda/nv_only.cuh"\n' + HAZARD)
    _written_a_while_ago(root)
    assert not_built([root]) == {"gemm_nv.cu"} and len(reads) == 3
    # Just written: read, and not kept (it may change again within its timestamp tick).
    (root / "ck" / "gemm.cu").write_text(CLEAN + "// edited\n")
    not_built([root])
    not_built([root])
    assert len(reads) == 5


def test_build_helpers_that_recurse_or_take_rest_arguments_decide_nothing(tmp_path: Path) -> None:
    setup = ("import torch\nfrom setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
             "from tools import h\n\nif torch.version.hip:\n"
             "    ext = CUDAExtension('pkg._C', ['csrc/k.cu'] + h.more('csrc/a.cu'))\n"
             "else:\n    ext = CUDAExtension('pkg._C', ['csrc/k.cu', 'csrc/a.cu'])\nsetup(ext_modules=[ext])\n")
    files = {"setup.py": setup, "csrc/k.cu": HAZARD, "csrc/a.cu": HAZARD, "tools/__init__.py": ""}
    # A helper that reaches itself through an import of its own module: not followed, never a traceback.
    recursive = _project(tmp_path / "recursive", {**files, "tools/h.py": "import tools.h\n\ndef more(x):\n"
                                                                        "    return tools.h.more(x)\n"})
    assert _not_built(recursive) == {}
    # What `*sources` holds is not followed: the ROCm arm's list is not known, so `a.cu`,
    # which the helper returns there, is not taken for the CUDA arm's alone.
    rest = _project(tmp_path / "rest", {**files, "tools/h.py": "def more(*sources):\n    return list(sources)\n"})
    assert _not_built(rest) == {}


def test_a_scan_of_a_folder_of_projects_reuses_its_build_files(tmp_path: Path, monkeypatch) -> None:
    """The root holds only project folders (no file of its own): a scan of it still
    discovered all of it, so the next scan reuses what the build files said."""
    from portlint import engine
    from portlint.build_model import build_files

    top = tmp_path / "projects"
    _selecting_project(top / "p")
    _written_a_while_ago(top / "p")
    config = Config(root=top, select=("W001",))
    reads = []
    real = build_files.read_build_files
    monkeypatch.setattr(build_files, "read_build_files", lambda *a, **k: reads.append(1) or real(*a, **k))
    first = engine.scan([top], config, cache_dir=tmp_path / "cache")
    second = engine.scan([top], config, cache_dir=tmp_path / "cache")
    assert len(reads) == 1
    assert {Path(p).name for p in second.not_built} == {Path(p).name for p in first.not_built} == {"gemm_nv.cu", "nv_only.cuh"}


# setup.py lists every file under a folder (an `os.walk` helper), adds a folder's sources only
# off ROCm, runs them through a hipify wrapper on ROCm, and passes them as strings.
WALK_AND_HIPIFY_SETUP = """\
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import CUDAExtension
    from build_tools.files import files_under, hipified

    sources = ["csrc/main.cu"] + files_under({folder})
    if not os.path.isdir("/opt/rocm"):
        sources += ["csrc/nvidia/tma.cu"]
    if os.path.isdir("/opt/rocm"):
        sources = hipified(sources)
    sources = [str(s) for s in sources]
    setup(ext_modules=[CUDAExtension("pkg._C", sources=[str(s) for s in sources])])
    """
WALK_AND_HIPIFY_HELPERS = """\
    import os
    from pathlib import Path


    def files_under(folder, suffix=None):
        found = []
        for directory, _, names in os.walk(folder):
            for name in names:
                if suffix is not None and not name.endswith(suffix):
                    continue
                found.append(Path(directory, name))
        return found


    def hipified(sources):
        from torch.utils.hipify.hipify_python import hipify as run_hipify
        result = run_hipify(project_directory=".", output_directory=".", includes=["*"])
        renamed = set()
        for name in sources:
            name = os.path.abspath(str(name))
            if name in result and result[name].hipified_path is not None:
                name = result[name].hipified_path
            renamed.add(os.path.relpath(name))
        return list(renamed)
    """


def _walk_and_hipify_project(root: Path, folder: str = '"csrc/ops"') -> Path:
    return _project(root, {
        "setup.py": WALK_AND_HIPIFY_SETUP.format(folder=folder),
        "build_tools/__init__.py": "",
        "build_tools/files.py": WALK_AND_HIPIFY_HELPERS,
        "csrc/main.cu": HAZARD,
        "csrc/ops/scale.cu": HAZARD,
        "csrc/ops/inner/norm.cu": HAZARD,
        "csrc/nvidia/tma.cu": HAZARD,
    })


def test_sources_a_hipify_wrapper_renames_are_the_rocm_builds(tmp_path: Path) -> None:
    root = _walk_and_hipify_project(tmp_path)
    assert _not_built(root) == {"csrc/nvidia/tma.cu": "listed only on a CUDA-only path (setup.py:8)"}
    result = scan([root], root, select=("W001",))
    assert {Path(f.path).relative_to(root).as_posix() for f in result.findings} == {
        "csrc/main.cu", "csrc/ops/scale.cu", "csrc/ops/inner/norm.cu"}  # every file the walk finds


def test_a_walk_of_a_folder_that_cannot_be_read_decides_nothing(tmp_path: Path) -> None:
    root = _walk_and_hipify_project(tmp_path, folder='os.environ["PKG_OPS"]')
    assert _not_built(root) == {}


def test_a_hipify_helper_that_returns_something_else_is_read_as_written(tmp_path: Path) -> None:
    # It runs hipify and loops over its include folders, but what it returns is not made in
    # that loop: those folders are not the sources it gives back.
    root = _walk_and_hipify_project(tmp_path)
    (root / "setup.py").write_text((root / "setup.py").read_text().replace(
        "hipified(sources)", 'hipified(sources, ["csrc/include"])'))
    (root / "build_tools" / "files.py").write_text(textwrap.dedent(WALK_AND_HIPIFY_HELPERS).replace(
        "def hipified(sources):", "def hipified(sources, include_dirs):").replace(
        "    renamed = set()\n    for name in sources:",
        "    for folder in include_dirs:\n        print(folder)\n    renamed = set()\n    for name in sources:"))
    assert "for folder in include_dirs" in (root / "build_tools" / "files.py").read_text()
    assert _not_built(root) == {"csrc/nvidia/tma.cu": "listed only on a CUDA-only path (setup.py:8)"}


# A package's fused ops, built two ways: a setup.py for NVIDIA images, which runs nvcc
# through a helper before it builds anything (so it fails on ROCm), and a module that
# compiles the same sources when imported, with flags chosen per platform.
OPS_SETUP = """\
    import subprocess
    from setuptools import setup
    from torch.utils import cpp_extension
    from torch.utils.cpp_extension import CUDAExtension

    def nvcc_major(cuda_dir):
        out = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
        return out.split("release ")[1].split(".")[0]

    major = nvcc_major(cpp_extension.CUDA_HOME)
    setup(name="ops", ext_modules=[CUDAExtension("ops_k", ["k.cpp", "k_cuda.cu"],
                                                 extra_compile_args={"nvcc": ["--use_fast_math"]})])
    """
OPS_LOADER = """\
    import pathlib
    import torch
    from torch.utils import cpp_extension

    def build():
        here = pathlib.Path(__file__).parent.absolute()
        flags = ["-O3"] {arm}
        return cpp_extension.load(name="ops_k", sources=[here / "k.cpp", here / "k_cuda.cu"],
                                  extra_cuda_cflags=flags)
    """


def test_a_loader_that_refuses_rocm_is_no_rocm_build(tmp_path: Path) -> None:
    loader = OPS_LOADER.format(arm="").replace(
        "    def build():\n", "    def build():\n        if torch.version.hip:\n            raise ImportError('no ROCm kernels')\n")
    root = _project(tmp_path, {"ops/setup.py": OPS_SETUP, "ops/__init__.py": loader,
                               "ops/k.cpp": "int k_entry();\n", "ops/k_cuda.cu": HAZARD})
    assert _not_built(root) == {}


@pytest.mark.parametrize("arm, setup_is_cuda_only", [
    ('if torch.version.hip is not None else ["-O3", "--use_fast_math"]', True),
    ("", False),  # a loader that does not know ROCm: the setup.py may be the port's build
    # A test a ROCm build decides that does not name it: a CUDA version's flags.
    ('if torch.version.cuda and torch.version.cuda >= "12" else ["-O3"]', False),
])
def test_a_setup_py_that_fails_on_rocm_beside_a_loader_that_knows_rocm_is_the_cuda_builds(
        tmp_path: Path, arm: str, setup_is_cuda_only: bool) -> None:
    root = _project(tmp_path, {
        "ops/setup.py": OPS_SETUP,
        "ops/__init__.py": OPS_LOADER.format(arm=arm),
        "ops/k.cpp": "int k_entry();\n",
        "ops/k_cuda.cu": HAZARD,
    })
    expected = {"ops/setup.py": "a CUDA-only build: it fails on ROCm before it builds (ops/setup.py:7)"}
    assert _not_built(root) == (expected if setup_is_cuda_only else {})
    result = scan([root], root, select=("W001", "Y001", "Y002"))
    # The loader compiles the kernel on ROCm either way: its hazard stays.
    assert {(Path(f.path).name, f.code) for f in result.findings} >= {("k_cuda.cu", "W001")}
    assert any(Path(f.path).name == "setup.py" for f in result.findings) is not setup_is_cuda_only


# A library with one folder of target headers per backend, put on the include path by the
# backend's arm: `#include <target_device.h>` finds the HIP one in the ROCm build.
TARGET_FOLDERS = {
    "CMakeLists.txt": """\
        cmake_minimum_required(VERSION 3.21)
        project(lib LANGUAGES CXX)
        option(LIB_TARGET_CUDA "NVIDIA" ON)
        option(LIB_TARGET_HIP "AMD" OFF)
        add_library(core src/reduce.cu)
        if(LIB_TARGET_HIP)
          enable_language(HIP)
          target_include_directories(core PRIVATE include/targets/hip)
        elseif(LIB_TARGET_CUDA)
          enable_language(CUDA)
          target_include_directories(core PRIVATE include/targets/cuda)
        endif()
        """,
    "include/targets/cuda/target_device.h": """\
        #pragma once
        #include <mma/simt.cuh>
        namespace device { constexpr int warp_size() { return 32; } }
        """,
    # Only the CUDA target header includes it: no HIP twin, still the CUDA build's.
    "include/targets/cuda/mma/simt.cuh": """\
        #pragma once
        struct Simt { static constexpr int warp_size = 32; };
        __device__ inline unsigned lane_id() { unsigned r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
        """,
    "include/targets/hip/target_device.h": """\
        #pragma once
        #include <hip/hip_runtime.h>
        namespace device { constexpr int warp_size() { return 64; } }
        """,
    "src/reduce.cu": """\
        #include <target_device.h>
        __global__ void spread(int* out) { out[threadIdx.x % device::warp_size()] = 1; }
        """,
}


def test_headers_in_the_cuda_builds_include_folder_beside_a_rocm_twin_are_not_built(tmp_path: Path) -> None:
    root = _project(tmp_path, TARGET_FOLDERS)
    assert set(_not_built(root)) == {"include/targets/cuda/target_device.h", "include/targets/cuda/mma/simt.cuh"}
    # What those headers define does not exist in the ROCm build: `device::warp_size()` is not
    # the CUDA-only `Simt::warp_size = 32`.
    assert scan([root], root, select=("W001", "A001")).findings == []


def test_a_cuda_include_folder_that_holds_the_rocm_ones_or_links_to_one_is_no_cuda_only_folder(tmp_path: Path) -> None:
    files = dict(TARGET_FOLDERS)
    # The CUDA arm puts the whole `include/` on the path, which holds the ROCm build's folder.
    files["CMakeLists.txt"] = files["CMakeLists.txt"].replace("PRIVATE include/targets/cuda", "PRIVATE include")
    root = _project(tmp_path, files)
    assert "include/targets/hip/target_device.h" not in _not_built(root)
    linked = _project(tmp_path / "linked", {k: v for k, v in TARGET_FOLDERS.items() if "targets/hip" not in k})
    (linked / "include" / "targets" / "hip").symlink_to(linked / "include" / "targets" / "cuda")
    assert _not_built(linked) == {}


def test_a_cuda_include_folder_without_a_rocm_twin_is_left_to_the_includes(tmp_path: Path) -> None:
    files = dict(TARGET_FOLDERS)
    del files["include/targets/hip/target_device.h"]
    files["CMakeLists.txt"] = files["CMakeLists.txt"].replace("include/targets/hip", "include/hip_extra")
    root = _project(tmp_path, files)
    assert _not_built(root) == {}


@pytest.mark.parametrize("common_use", ["o[threadIdx.x / WARP_SIZE] = threadIdx.x;", "o[threadIdx.x] = 0;"])
def test_a_warp_size_a_cuda_only_source_computes_with_is_no_hazard_of_the_rocm_build(
        tmp_path: Path, common_use: str) -> None:
    # The ROCm build's own file uses the 32 as a logical warp, or not at all.
    root = _project(tmp_path, {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(lib LANGUAGES CXX)
            option(LIB_USE_CUDA "NVIDIA" ON)
            option(LIB_USE_HIP "AMD" OFF)
            add_library(core src/common.cu)
            if(LIB_USE_HIP)
              enable_language(HIP)
            elseif(LIB_USE_CUDA)
              target_sources(core PRIVATE src/nv_reduce.cu)
            endif()
            """,
        "include/warp.h": "#pragma once\n#define WARP_SIZE 32\n",
        # A 32-lane logical warp: AMD computes the same (a note at most).
        "src/common.cu": '#include "../include/warp.h"\n'
                         f"__global__ void group(int* o) {{ {common_use} }}\n",
        "src/nv_reduce.cu": '#include "../include/warp.h"\n'
                            "__device__ float sum(float v) { for (int o = WARP_SIZE / 2; o > 0; o /= 2) "
                            "v += __shfl_down_sync(0xffffffff, v, o); return v; }\n",
    })
    assert set(_not_built(root)) == {"src/nv_reduce.cu"}
    result = scan([root], root, select=("W001",))
    assert all(f.severity is Severity.NOTE for f in result.findings), [(f.path, f.message) for f in result.findings]



def test_a_source_list_set_only_where_a_cuda_test_holds_is_its_default_on_rocm(tmp_path: Path) -> None:
    # `kernels = None`, then the list only under a flag the ROCm build leaves False: on ROCm
    # the extension that takes it is never made (its test reads the default), so the sources
    # are the CUDA build's alone; `os.curdir` names the script's folder.
    setup = textwrap.dedent("""\
        import os
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        here = os.path.dirname(os.path.curdir)
        on_nvidia = torch.version.cuda is not None
        use_fast = False
        if on_nvidia:
            use_fast = True
        fast_kernels = None
        if use_fast:
            fast_kernels = [os.path.join(here, "csrc", "fast", "tensor_core.cu")]
        ext = [CUDAExtension("pkg._C", [os.path.join(here, "csrc", "ops.cu")])]
        if fast_kernels is not None and len(fast_kernels) > 0:
            ext.append(CUDAExtension("pkg._fast", fast_kernels))
        """)
    files = {"setup.py": setup, "csrc/ops.cu": CLEAN, "csrc/fast/tensor_core.cu": HAZARD}
    root = _project(tmp_path / "default", files)
    assert _not_built(root) == {"csrc/fast/tensor_core.cu": "listed only on a CUDA-only path (setup.py:11)"}
    # Where the default may not be what the ROCm build reads, the list may be made there: the
    # flag set by a call that returns two values; the list set in an `elif` (the test before
    # it may hold), or before its default; another variable of its name (a parameter).
    for name, (old, new) in {
        "probed": ("if on_nvidia:\n    use_fast = True", "use_fast, _ = probe()"),
        "elif": ("if use_fast:\n", "if os.environ.get('PKG_SAFE'):\n    pass\nelif use_fast:\n"),
        "after": ("fast_kernels = None\nif use_fast:\n    fast_kernels = [os.path.join(here, \"csrc\", \"fast\", \"tensor_core.cu\")]\n",
                  "if use_fast:\n    fast_kernels = [os.path.join(here, \"csrc\", \"fast\", \"tensor_core.cu\")]\nfast_kernels = None\n"),
        "parameter": ("ext = [", "def add(fast_kernels):\n    return fast_kernels\next = ["),
    }.items():
        assert old in setup, name
        files["setup.py"] = setup.replace(old, new)
        assert _not_built(_project(tmp_path / name, files)) == {}, name


@pytest.mark.parametrize("definitions, hidden", [
    # CMake joins the arguments into one list before it reads the generator expressions.
    ("$<$<BOOL:${P_USE_ROCM}>:P_GPU P_ROCM> $<$<BOOL:${P_USE_CUDA}>:P_GPU P_CUDA>", True),
    ("$<$<NOT:$<BOOL:${P_USE_ROCM}>>:P_CUDA> $<$<BOOL:${P_USE_ROCM}>:P_ROCM>", True),
    # A condition on the configuration says nothing of the platform.
    ("$<$<CONFIG:Debug>:P_ROCM> $<$<CONFIG:Release>:P_CUDA>", False),
])
def test_defines_in_generator_expressions_follow_their_conditions(tmp_path: Path, definitions: str,
                                                                  hidden: bool) -> None:
    root = _project(tmp_path, {
        "CMakeLists.txt": f"""\
            cmake_minimum_required(VERSION 3.21)
            project(p LANGUAGES CXX)
            option(P_USE_CUDA "CUDA backend" OFF)
            option(P_USE_ROCM "HIP backend" OFF)
            if(P_USE_ROCM)
              enable_language(HIP)
            endif()
            add_library(p blas.cu user.cu)
            target_compile_definitions(p PUBLIC {definitions})
            """,
        # The CUDA arm of a backend switch, and a header only the CUDA backend includes
        # (`and`: C++'s own spelling of `&&`).
        "blas.cu": "#if defined(P_ROCM)\nint handle;\n#else\n#include <cublas_v2.h>\n#endif\n" + CLEAN,
        "solver.h": "#include <cusolverDn.h>\n",
        "user.cu": "#if defined(P_CUDA) and !defined(P_ROCM)\n#include \"solver.h\"\n#endif\n" + CLEAN,
    })
    found = {Path(f.path).name for f in scan([root], root).findings if f.code == "L001"}
    assert found == (set() if hidden else {"blas.cu"})


def test_a_cuda_backends_folder_beside_its_hip_twin_is_the_cuda_builds(tmp_path: Path) -> None:
    # Each backend is a folder with the same module (`src/<backend>/backend.cmake`), read by a
    # computed name: the ROCm build reads the hip folder's, never the cuda folder's.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(bench LANGUAGES CXX)
            set(BACKEND "serial" CACHE STRING "which backend")
            include(src/${BACKEND}/backend.cmake)
            add_executable(bench src/main.cpp ${BACKEND_SOURCES})
            """,
        "src/main.cpp": "int main() { return 0; }\n",
        "src/cuda/backend.cmake": "enable_language(CUDA)\nset(BACKEND_SOURCES src/cuda/stream.cu)\n",
        "src/cuda/stream.cu": HAZARD,
        "src/hip/backend.cmake": "enable_language(HIP)\nset(BACKEND_SOURCES src/hip/stream.cpp)\n",
        "src/hip/stream.cpp": CLEAN,
    }
    root = _project(tmp_path / "twins", files)
    assert _not_built(root) == {
        "src/cuda/backend.cmake": "the CUDA backend's module, beside hip/backend.cmake for ROCm, and no list file reads it",
        "src/cuda/stream.cu": "in src/cuda, the CUDA backend's folder beside src/hip/backend.cmake for ROCm, "
                              "which no list file reads",
    }
    # A HIP backend that compiles the CUDA backend's source as HIP: that source is the ROCm build's.
    shared = dict(files, **{"src/hip/backend.cmake": "enable_language(HIP)\nset(BACKEND_SOURCES src/cuda/stream.cu)\n"
                                                     "set_source_files_properties(src/cuda/stream.cu PROPERTIES LANGUAGE HIP)\n"})
    assert "src/cuda/stream.cu" not in _not_built(_project(tmp_path / "shared", shared))
    # Without a HIP backend beside it, the CUDA backend's folder says nothing about ROCm.
    del files["src/hip/backend.cmake"], files["src/hip/stream.cpp"]
    assert _not_built(_project(tmp_path / "alone", files)) == {}


def test_a_cuda_package_the_hip_arm_requires_missing_is_missing_in_the_rocm_build(tmp_path: Path) -> None:
    # `auto` picks CUDA where its toolkit is found, else HIP: the arm that builds HIP requires
    # `NOT CUDAToolkit_FOUND`, so the ROCm build is the one without it, and the CUDA arm
    # above (tested before the HIP arm is read) is the CUDA build's.
    lists = """\
        cmake_minimum_required(VERSION 3.21)
        project(solver LANGUAGES CXX)
        set(SOLVER_GPU "auto" CACHE STRING "GPU backend: auto, cuda, hip")
        add_library(solver src/solver.cpp)
        find_package(CUDAToolkit QUIET)
        if(CUDAToolkit_FOUND)
          target_link_libraries(solver PUBLIC CUDA::cudart CUDA::cublas)
        endif()
        if(NOT CUDAToolkit_FOUND AND SOLVER_GPU MATCHES "^(auto|hip)$")
          find_package(rocblas QUIET)
          if(rocblas_FOUND)
            enable_language(HIP)
            target_link_libraries(solver PUBLIC roc::rocblas)
          endif()
        endif()
        """
    files = {"CMakeLists.txt": lists, "src/solver.cpp": "int solve() { return 0; }\n"}
    root = _project(tmp_path / "auto", files)
    assert [f.code for f in scan([root], root).findings if f.severity is not Severity.NOTE] == []
    # A HIP arm that does not ask leaves the toolkit's test undecided: the link stays reported.
    # So does a second way to build HIP that does not ask (a ROCm build chosen by name, on a
    # machine that has the toolkit too), or one only a sub-project's own arm asks.
    second_route = 'if(SOLVER_GPU STREQUAL "hip")\n  enable_language(HIP)\nendif()\n'
    for name, edited in (("asks_not", _lists_edited(files, ("NOT CUDAToolkit_FOUND AND ", ""))),
                         ("second_route", _lists_edited(files, ("add_library(solver src/solver.cpp)\n",
                                                                "add_library(solver src/solver.cpp)\n" + second_route))),
                         ("sub_project", {**_lists_edited(files, (
                             "if(NOT CUDAToolkit_FOUND AND SOLVER_GPU MATCHES",
                             'add_subdirectory(io)\nif(SOLVER_GPU STREQUAL "hip")\n  enable_language(HIP)\n'
                             "endif()\nif(FALSE AND SOLVER_GPU MATCHES")),
                          "io/CMakeLists.txt": 'if(NOT CUDAToolkit_FOUND AND IO_GPU STREQUAL "hip")\n'
                                               "  enable_language(HIP)\nendif()\n"})):
        root = _project(tmp_path / name, edited)
        assert [f.code for f in scan([root], root).findings if f.severity is not Severity.NOTE] == ["C003"], name


def test_the_rocm_build_of_a_project_that_has_one_finds_no_nvcc(tmp_path: Path) -> None:
    # Where the project builds HIP when nvcc is not found, the ROCm build is the one without
    # it: `if(CMAKE_CUDA_COMPILER)` arms, and what follows a `return()` taken without it, are
    # the CUDA build's. In a project with no ROCm build yet, that guarded code is what the
    # port must compile: it stays reported.
    lists = """\
        cmake_minimum_required(VERSION 3.21)
        project(sim LANGUAGES CXX)
        include(CheckLanguage)
        check_language(CUDA)
        function(sim_gpu_target target)
          if(NOT CMAKE_CUDA_COMPILER OR NOT ARGN)
            return()
          endif()
          target_link_libraries(${target} PRIVATE CUDA::cublas)
        endfunction()
        add_library(sim src/sim.cpp)
        if(CMAKE_CUDA_COMPILER)
          enable_language(CUDA)
          target_sources(sim PRIVATE src/step.cu)
        else()
          enable_language(HIP)
          target_sources(sim PRIVATE src/step.hip)
        endif()
        sim_gpu_target(sim cublas)
        """
    files = {"CMakeLists.txt": lists, "src/sim.cpp": CLEAN, "src/step.cu": HAZARD, "src/step.hip": CLEAN}
    root = _project(tmp_path / "ported", files)
    assert "src/step.cu" in _not_built(root)
    assert [f.code for f in scan([root], root).findings if f.severity is not Severity.NOTE] == []
    unported = dict(files, **{"CMakeLists.txt": lists.replace(
        "        else()\n          enable_language(HIP)\n          target_sources(sim PRIVATE src/step.hip)\n", "")})
    del unported["src/step.hip"]
    root = _project(tmp_path / "unported", unported)
    assert "src/step.cu" not in _not_built(root)
    assert {"C003", "W001"} <= {f.code for f in scan([root], root).findings}


def test_sources_only_the_cuda_build_passes_to_a_project_function_are_the_cuda_builds(tmp_path: Path) -> None:
    # The sources reach the library through a project function (`app_add_library`, whose
    # body the walk cannot expand) in a variable each arm extends: the CUDA build passes
    # `trace.cuda.cc` where the ROCm build passes its twin `trace.hip.cc`, so it is the CUDA
    # build's. A documentation target that names every source compiles none of them.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(app LANGUAGES CXX)
            option(APP_USE_CUDA "CUDA" OFF)
            option(APP_USE_HIP "HIP" OFF)
            function(app_add_library target)
              add_library(${target} ${ARGN})
            endfunction()
            set(SOURCES src/core.cc)
            if(APP_USE_CUDA)
              enable_language(CUDA)
              list(APPEND SOURCES src/trace.cuda.cc)
            elseif(APP_USE_HIP)
              enable_language(HIP)
              list(APPEND SOURCES src/trace.hip.cc)
            endif()
            app_add_library(app ${SOURCES})
            file(GLOB ALL_SOURCES src/*.cc)
            doxygen_add_docs(docs ${ALL_SOURCES})
            """,
        "src/core.cc": "int core() { return 0; }\n",
        "src/trace.cuda.cc": "#include <nvtx3/nvToolsExt.h>\nvoid mark() { nvtxRangePushA(\"step\"); }\n",
        "src/trace.hip.cc": "#include <roctracer/roctx.h>\nvoid mark() { roctxRangePushA(\"step\"); }\n",
    }
    root = _project(tmp_path / "function", files)
    not_built = _not_built(root)
    assert not_built.get("src/trace.cuda.cc") == "listed only on a CUDA-only path (CMakeLists.txt:16)"
    assert not {"src/core.cc", "src/trace.hip.cc"} & not_built.keys()
    assert {f.path for f in scan([root], root).findings if f.severity is not Severity.NOTE} == set()
    # A call only the CUDA arm makes says nothing more than before: the ROCm arm may compile a
    # copy of the same file that a build step writes (hipify, configure_file).
    cuda_call = _lists_edited(files, ("list(APPEND SOURCES src/trace.cuda.cc)",
                                      "list(APPEND SOURCES src/trace.cuda.cc)\n  app_add_library(bench src/bench.cu)"))
    cuda_call["src/bench.cu"] = "#include <cublas_v2.h>\n"
    assert "src/bench.cu" not in _not_built(_project(tmp_path / "cuda_call", cuda_call))
    # A CUDA source the ROCm build passes nothing in place of (it adds the file another way,
    # here through a helper whose body the walk reads without its caller's variables) stays.
    helper = _lists_edited(
        files, ("list(APPEND SOURCES src/trace.hip.cc)", "app_add_hip_sources(app)"),
        ("function(app_add_library target)",
         "function(app_add_hip_sources target)\n"
         "  target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/trace.cuda.cc)\n"
         "endfunction()\nfunction(app_add_library target)"))
    assert "src/trace.cuda.cc" not in _not_built(_project(tmp_path / "helper", helper))
    # Where the ROCm build's reading of the argument is incomplete (a variable the lists
    # never set, given on the command line), the CUDA build's reading says nothing.
    unknown = _lists_edited(files, ("app_add_library(app ${SOURCES})",
                                    'app_add_library(app "${SOURCES};${APP_EXTRA_SOURCES}")'))
    assert "src/trace.cuda.cc" not in _not_built(_project(tmp_path / "unknown", unknown))


def test_a_subproject_only_the_cuda_arm_configures_as_an_external_project_is_the_cuda_builds(tmp_path: Path) -> None:
    # Each GPU backend is a project of its own that the top configures with
    # `ExternalProject_Add(... SOURCE_DIR <folder>)` under its switch: the CUDA backend's
    # folder (its list file, sources and headers) is the CUDA build's; the HIP one's is not.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(filters LANGUAGES CXX)
            include(ExternalProject)
            option(FILTERS_CUDA "CUDA backend" OFF)
            option(FILTERS_HIP "HIP backend" OFF)
            if(FILTERS_CUDA)
              ExternalProject_Add(filters_cuda
                SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/cuda
                CMAKE_CACHE_ARGS -DCMAKE_BUILD_TYPE:STRING=Release)
            endif()
            if(FILTERS_HIP)
              ExternalProject_Add(filters_hip SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/hip)
            endif()
            add_library(filters src/core.cpp)
            """,
        "src/core.cpp": CLEAN,
        "backends/cuda/CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(filters_cuda LANGUAGES CXX CUDA)
            find_package(CUDAToolkit REQUIRED)
            add_library(filters_cuda blur.cu)
            target_link_libraries(filters_cuda CUDA::cublas)
            """,
        "backends/cuda/blur.cu": '#include "blur.h"\n' + HAZARD,
        "backends/cuda/blur.h": "#include <cublas_v2.h>\n",
        "backends/hip/CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(filters_hip LANGUAGES CXX HIP)
            add_library(filters_hip blur.hip)
            """,
        "backends/hip/blur.hip": HAZARD,
    }
    root = _project(tmp_path / "external", files)
    not_built = _not_built(root)
    assert {"backends/cuda/CMakeLists.txt", "backends/cuda/blur.cu", "backends/cuda/blur.h"} <= not_built.keys()
    assert not_built["backends/cuda/CMakeLists.txt"].startswith("read only from a CUDA-only branch (CMakeLists.txt:7)")
    assert not {p for p in not_built if p.startswith("backends/hip/")}
    assert {f.path for f in scan([root], root).findings if f.severity is not Severity.NOTE} == {
        str(root / "backends/hip/blur.hip")}
    # Configured by the ROCm build too (no switch around it), it stays a project to check.
    both = _lists_edited(files, ("if(FILTERS_CUDA)", "if(TRUE)"))
    assert "backends/cuda/blur.cu" not in _not_built(_project(tmp_path / "both", both))
    # One folder that both arms configure (with other cache arguments, or fetched by the ROCm
    # arm), or a relative SOURCE_DIR (the binary folder's): not the CUDA build's alone.
    for name, arm in (("shared", "ExternalProject_Add(filters_hip SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/cuda)"),
                      ("fetched", "FetchContent_Declare(filters_gpu SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/cuda)")):
        shared = _lists_edited(files, ("ExternalProject_Add(filters_hip SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/hip)",
                                       arm))
        assert "backends/cuda/blur.cu" not in _not_built(_project(tmp_path / name, shared))
    relative = _lists_edited(files, ("${PROJECT_SOURCE_DIR}/backends/cuda", "backends/cuda"))
    assert "backends/cuda/blur.cu" not in _not_built(_project(tmp_path / "relative", relative))
    # A ROCm arm that configures a sub-project through a function (its body read without its
    # caller's variables): any folder may be that one, so none is the CUDA build's alone.
    through_function = _lists_edited(
        files, ("ExternalProject_Add(filters_hip SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/hip)", "add_backend(hip)"),
        ("include(ExternalProject)\n", "include(ExternalProject)\nfunction(add_backend name)\n"
         "  ExternalProject_Add(filters_${name} SOURCE_DIR ${PROJECT_SOURCE_DIR}/backends/cuda)\nendfunction()\n"))
    assert "backends/cuda/blur.cu" not in _not_built(_project(tmp_path / "through_function", through_function))
    # A superbuild that configures its own folder again in the CUDA arm keeps its lists.
    superbuild = _lists_edited(files, ("${PROJECT_SOURCE_DIR}/backends/cuda", "${PROJECT_SOURCE_DIR}"))
    assert "CMakeLists.txt" not in _not_built(_project(tmp_path / "superbuild", superbuild))


def test_a_vendored_cuda_library_only_the_cuda_arm_adds_is_the_cuda_builds_with_its_examples(tmp_path: Path) -> None:
    # A CUDA-only solver under `third_party/`, added only where the CUDA backend is on: its
    # nested list files (which no walk reached), the makefile of its example (nvcc only), and
    # the sources and headers those name are the CUDA build's.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(app LANGUAGES CXX)
            option(APP_WITH_CUDA "CUDA backend" OFF)
            option(APP_WITH_HIP "HIP backend" OFF)
            if(APP_WITH_CUDA)
              enable_language(CUDA)
              add_subdirectory(third_party/nvsolver)
            elseif(APP_WITH_HIP)
              enable_language(HIP)
            endif()
            add_library(app src/app.cpp)
            """,
        "src/app.cpp": "int app() { return 0; }\n",
        "third_party/nvsolver/CMakeLists.txt": "add_subdirectory(base)\n",
        "third_party/nvsolver/base/CMakeLists.txt": "add_library(nvsolver src/solve.cu)\n",
        "third_party/nvsolver/base/src/solve.cu": '#include "../include/blas.h"\n' + HAZARD,
        "third_party/nvsolver/base/include/blas.h": "#include <cublas_v2.h>\n",
        "third_party/nvsolver/examples/Makefile": """\
            NVCC = /usr/local/cuda/bin/nvcc
            SRC := ../base/src/solve.cu demo.cu
            %.o: %.cu
            \t$(NVCC) -c $< -o $@
            demo: $(SRC:.cu=.o)
            \t$(NVCC) $^ -lcublas -o demo
            """,
        "third_party/nvsolver/examples/demo.cu": HAZARD,
    }
    root = _project(tmp_path / "vendored", files)
    not_built = _not_built(root)
    assert {"third_party/nvsolver/base/CMakeLists.txt", "third_party/nvsolver/examples/Makefile",
            "third_party/nvsolver/base/src/solve.cu", "third_party/nvsolver/base/include/blas.h",
            "third_party/nvsolver/examples/demo.cu"} <= not_built.keys()
    assert not_built["third_party/nvsolver/examples/Makefile"] == (
        "third_party/nvsolver/examples/Makefile, a makefile of third_party/nvsolver, which only the CUDA build "
        "configures")
    assert {Path(f.path).name for f in scan([root], root).findings if f.severity is not Severity.NOTE} == set()
    # Not the component's: a makefile with a hipcc target of its own, a ROCm-only list file in
    # it, and any of it where a tree could not follow an `add_subdirectory` (it may add them).
    hip_make = dict(files, **{"third_party/nvsolver/examples/Makefile": files["third_party/nvsolver/examples/Makefile"]
                              + "demo_hip: demo.cu\n\thipcc --offload-arch=gfx942 demo.cu -lcublas -o demo_hip\n"})
    assert "third_party/nvsolver/examples/Makefile" not in _not_built(_project(tmp_path / "hip_make", hip_make))
    rocm_lists = dict(files, **{"third_party/nvsolver/hipport/CMakeLists.txt":
                                "enable_language(HIP)\nadd_library(hipport port.hip)\n",
                                "third_party/nvsolver/hipport/port.hip": HAZARD})
    assert not {"third_party/nvsolver/hipport/CMakeLists.txt", "third_party/nvsolver/hipport/port.hip"} \
        & _not_built(_project(tmp_path / "rocm_lists", rocm_lists)).keys()
    unfollowed = _lists_edited(files, ("enable_language(HIP)\n", "enable_language(HIP)\n  add_subdirectory(${APP_PORTABLE_DIR})\n"))
    assert "third_party/nvsolver/examples/demo.cu" not in _not_built(_project(tmp_path / "unfollowed", unfollowed))


def test_a_foreach_over_a_known_list_names_each_source(tmp_path: Path) -> None:
    # `foreach(e ${EXAMPLES}) add_executable(${e} ${e}.cu)`: CMake runs the body once per item,
    # so the CUDA arm's loop names each CUDA example, and the HIP arm's loop its HIP twins.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(demo LANGUAGES CXX)
            option(DEMO_WITH_HIP "HIP backend" OFF)
            set(EXAMPLES saxpy reduce)
            if(DEMO_WITH_HIP)
              enable_language(HIP)
              foreach(e ${EXAMPLES})
                add_executable(${e}_hip hip/${e}.hip)
              endforeach()
            else()
              enable_language(CUDA)
              foreach(e IN LISTS EXAMPLES ITEMS scan)
                add_executable(${e} cuda/${e}.cu)
              endforeach()
            endif()
            """,
        "hip/saxpy.hip": CLEAN, "hip/reduce.hip": CLEAN,
        "cuda/saxpy.cu": HAZARD, "cuda/reduce.cu": HAZARD, "cuda/scan.cu": HAZARD,
    }
    root = _project(tmp_path / "loops", files)
    assert sorted(_not_built(root)) == ["cuda/reduce.cu", "cuda/saxpy.cu", "cuda/scan.cu"]
    # Not run per item, so the loop's names stay unknown and decide nothing: a list the user
    # may change (a cache entry's default: a ROCm user may name other examples), a body that
    # leaves the loop early (`break()`), or one whose arms test the item.
    for name, (old, new) in {
        "cached": ("set(EXAMPLES saxpy reduce)", 'set(EXAMPLES "saxpy;reduce" CACHE STRING "examples to build")'),
        "break": ("add_executable(${e} cuda/${e}.cu)", "add_executable(${e} cuda/${e}.cu)\n    break()"),
        "tested": ("add_executable(${e} cuda/${e}.cu)",
                   'if(e STREQUAL "scan")\n      add_executable(${e} cuda/${e}.cu)\n    endif()'),
    }.items():
        changed = _lists_edited(files, (old, new))
        assert changed["CMakeLists.txt"] != files["CMakeLists.txt"], name
        assert _not_built(_project(tmp_path / name, changed)) == {}, name


def test_a_backend_arm_that_defines_hips_platform_macro_is_a_described_rocm_build(tmp_path: Path) -> None:
    # No HIP language: the arm only the ROCm build takes compiles with the C++ compiler against
    # HIP's headers (`__HIP_PLATFORM_AMD__`). The CUDA arm's define is then no ROCm define.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(prof LANGUAGES CXX)
            set(PROF_BACKEND "cpu" CACHE STRING "cpu, cuda or rocm")
            set(PROF_DEFS "PROF_NAMESPACE=prof")
            if(PROF_BACKEND STREQUAL "cuda")
              list(APPEND PROF_DEFS PROF_HAS_CUPTI)
            elseif(PROF_BACKEND STREQUAL "rocm")
              list(APPEND PROF_DEFS PROF_HAS_ROCTRACER)
              add_compile_definitions(__HIP_PLATFORM_AMD__)
            endif()
            add_library(prof activity.cpp)
            target_compile_definitions(prof PUBLIC "${PROF_DEFS}")
            """,
        "activity.cpp": _cublas_if("defined(PROF_HAS_CUPTI)"),
    }
    root = _project(tmp_path / "backend", files)
    build = _read(root)
    assert build.rocm_build and "PROF_HAS_CUPTI" in build.other_builds_define
    assert [f.code for f in scan([root], root).findings if f.code == "L001"] == []
    # A define every build passes (a header check of a CUDA project) describes no ROCm build.
    files["CMakeLists.txt"] = files["CMakeLists.txt"].replace(
        "add_library(prof activity.cpp)", "add_library(prof activity.cpp)\n"
        "add_executable(header_check check.cpp)\ntarget_compile_definitions(header_check PRIVATE __HIP_PLATFORM_AMD__)"
    ).replace("add_compile_definitions(__HIP_PLATFORM_AMD__)", "message(STATUS rocm)")
    root = _project(tmp_path / "helper", dict(files, **{"check.cpp": "int main() { return 0; }\n"}))
    assert not _read(root).rocm_build


def test_a_cuda_machines_initial_cache_is_the_cuda_builds(tmp_path: Path) -> None:
    # `cmake -C host-configs/<machine>.cmake`: a file of cache entries no list file reads. The
    # CUDA machine's (ENABLE_CUDA ON, no word of ROCm) is no part of a ROCm configure.
    files = {
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            project(lib LANGUAGES CXX)
            option(ENABLE_HIP "HIP backend" OFF)
            option(ENABLE_CUDA "CUDA backend" OFF)
            if(ENABLE_HIP)
              enable_language(HIP)
            elseif(ENABLE_CUDA)
              enable_language(CUDA)
            endif()
            add_library(lib lib.cpp)
            """,
        "lib.cpp": "int lib() { return 0; }\n",
        "host-configs/machine_a_cuda.cmake": """\
            set(ENABLE_CUDA ON CACHE BOOL "")
            set(CUDA_TOOLKIT_ROOT_DIR "/usr/local/cuda-12.4" CACHE PATH "")
            set(CMAKE_CUDA_COMPILER "${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc" CACHE PATH "")
            """,
        "host-configs/machine_b_hip.cmake": """\
            set(ENABLE_HIP ON CACHE BOOL "")
            set(CUDA_TOOLKIT_ROOT_DIR "/usr/local/cuda" CACHE PATH "")
            """,
        "host-configs/machine_c.cmake": """\
            include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
            set(ENABLE_CUDA ON CACHE BOOL "")
            set(CUDA_TOOLKIT_ROOT_DIR "/usr/local/cuda" CACHE PATH "")
            """,
    }
    root = _project(tmp_path, files)
    not_built = _not_built(root)
    assert "host-configs/machine_a_cuda.cmake" in not_built
    # One that names ROCm is another build's; one that runs other commands is no plain cache.
    assert not {"host-configs/machine_b_hip.cmake", "host-configs/machine_c.cmake"} & not_built.keys()
