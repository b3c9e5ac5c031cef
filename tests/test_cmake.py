"""CMake rules (B001-B004, C001-C003, R003): what the fixtures cannot show in one file each."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from harness import assert_findings, fix_until_stable
from portlint import engine
from portlint.config import Config
from portlint.finding import Severity
from portlint.fix import Applicability

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _read_use_rocm(tmp_path) -> None:
    """A source beside the list file that tests `USE_ROCM`: B003 reports only where one does."""
    (tmp_path / "ops.cu").write_text("#ifdef USE_ROCM\nint ops_on_rocm;\n#endif\n", encoding="utf-8")


def _fixed(tmp_path, src: str, code: str) -> str:
    if code == "B003":
        _read_use_rocm(tmp_path)
    path = tmp_path / "CMakeLists.txt"
    path.write_text(textwrap.dedent(src), encoding="utf-8")
    fix_until_stable([path], tmp_path, (code,))
    return path.read_text(encoding="utf-8")


def test_link_item_is_reported_where_written_through_two_variables(tmp_path) -> None:
    result = assert_findings("""\
        set(BLAS_TARGET CUDA::cublas)
        set(GPU_DEPS ${BLAS_TARGET} Threads::Threads)
        target_link_libraries(app PRIVATE ${GPU_DEPS})
        set(DOC_TARGETS CUDA::cufft)
        """, "cmake", "C003", tmp_path=tmp_path, select=("C003",))
    assert result.findings[0].location.start_line == 1


def test_link_fix_edits_the_right_bytes_after_non_ascii_text(tmp_path) -> None:
    fixed = _fixed(tmp_path, """\
        target_link_libraries(app PRIVATE "${ROOT}/bibliothèque.so;CUDA::cublas")
        """, "C003")
    assert fixed == 'target_link_libraries(app PRIVATE "${ROOT}/bibliothèque.so;$<IF:$<BOOL:${USE_ROCM}>,roc::hipblas,CUDA::cublas>")\n'


def test_lto_flag_is_reported_only_where_it_reaches_cxx_flags(tmp_path) -> None:
    result = assert_findings("""\
        project(ops LANGUAGES CXX HIP)
        set(GPU_OPT -O3 -flto)
        set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} ${GPU_OPT}")
        set(CXX_OPT -O3 -flto)
        set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${CXX_OPT}")
        """, "cmake", "B002", tmp_path=tmp_path, select=("B002",))
    assert result.findings[0].location.start_line == 4


def test_use_rocm_goes_into_the_rocm_arm_of_an_elseif_chain(tmp_path) -> None:
    fixed = _fixed(tmp_path, """\
        project(ops LANGUAGES CXX)
        if(USE_CUDA)
            enable_language(CUDA)
        elseif(USE_ROCM)
            enable_language(HIP)
        endif()
        """, "B003")
    assert fixed == textwrap.dedent("""\
        project(ops LANGUAGES CXX)
        if(USE_CUDA)
            enable_language(CUDA)
        elseif(USE_ROCM)
            add_compile_definitions(USE_ROCM)
            enable_language(HIP)
        endif()
        """)


def test_use_rocm_after_a_last_line_without_newline(tmp_path) -> None:
    _read_use_rocm(tmp_path)
    path = tmp_path / "CMakeLists.txt"
    path.write_text("project(ops LANGUAGES CXX HIP)", encoding="utf-8")
    fix_until_stable([path], tmp_path, ("B003",))
    assert path.read_text(encoding="utf-8") == "project(ops LANGUAGES CXX HIP)\nadd_compile_definitions(USE_ROCM)\n"


def test_genex_definition_for_hip_sources_counts_as_defining_use_rocm(tmp_path) -> None:
    _read_use_rocm(tmp_path)
    assert_findings("""\
        project(ops LANGUAGES CXX HIP)
        add_compile_definitions($<$<COMPILE_LANGUAGE:HIP>:USE_ROCM>)
        target_compile_definitions(hip_ops PRIVATE NDEBUG)
        """, "cmake", tmp_path=tmp_path, select=("B003",))


def test_target_named_hip_is_not_a_rocm_definition(tmp_path) -> None:
    _read_use_rocm(tmp_path)
    assert_findings("""\
        project(ops LANGUAGES CXX HIP)
        target_compile_definitions(hip_ops PRIVATE NDEBUG)
        add_compile_definitions($<$<COMPILE_LANGUAGE:HIP>:NDEBUG>)
        """, "cmake", "B003", tmp_path=tmp_path, select=("B003",))


def test_link_item_glued_to_other_text_gets_advice_only(tmp_path) -> None:
    result = assert_findings("""\
        target_link_libraries(app PRIVATE "-Wl,--as-needed CUDA::cublas" éCUDA::cufft)
        """, "cmake", "C003", tmp_path=tmp_path, select=("C003",))
    # One command, one finding for both; `CUDA::cublas` sits in a string of flags, so no edit.
    assert [len(f.related) for f in result.findings] == [1]
    assert not [f for f in result.findings if f.fix.is_applicable]


# ---- a CMake build read as a whole: facts joined across list files ---------------------------
def _project(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _scan(root: Path, *codes: str, jobs: int = 1) -> engine.ScanResult:
    return engine.scan([root], Config(root=root, select=codes), jobs=jobs)


def _where(finding) -> tuple[str, int]:
    """(file name, line) of a finding or a related location."""
    return Path(finding.location.path).name, finding.location.start_line


def test_lto_flag_in_an_included_file_is_reported_once_with_the_hip_place_related(tmp_path) -> None:
    root = tmp_path / "case"
    shutil.copytree(FIXTURES / "B002" / "bad_cross_file", root)
    findings = _scan(root, "B002").findings
    assert [(Path(f.path).relative_to(root).as_posix(), f.location.start_line) for f in findings] == [
        ("cmake/flags.cmake", 2), ("cmake/flags.cmake", 3)]
    for f in findings:
        (related,) = f.related
        assert Path(related.location.path) == root / "CMakeLists.txt"
        assert related.location.start_line == 8  # enable_language(HIP)
        assert "enable_language(HIP)" in related.message


def test_lto_flag_is_silent_once_no_list_file_of_the_project_builds_hip(tmp_path) -> None:
    root = _project(tmp_path, **{
        "CMakeLists.txt": """\
            project(ops LANGUAGES CXX CUDA)
            include(cmake/flags.cmake)
            """,
        "cmake/flags.cmake": 'set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -flto")\n',
        # Another project in the same scan builds HIP: it is not this build.
        "examples/CMakeLists.txt": "project(example LANGUAGES CXX HIP)\n",
    })
    assert not _scan(root, "B002").findings


def test_facts_of_list_files_analysed_in_worker_processes_are_joined(tmp_path, monkeypatch) -> None:
    root = _project(tmp_path, **{
        "CMakeLists.txt": """\
            project(ops LANGUAGES CXX HIP)
            include(cmake/flags.cmake)
            target_compile_options(ops PRIVATE ${OPT})
            """,
        "cmake/flags.cmake": "set(OPT -O3 -flto)\n",
    })
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    (finding,) = _scan(root, "B002", jobs=2).findings
    assert _where(finding) == ("flags.cmake", 1)


def test_variable_read_in_a_subdirectory_reaches_hip_flags_and_is_fixed_where_set(tmp_path) -> None:
    root = _project(tmp_path, **{
        "CMakeLists.txt": """\
            project(ops LANGUAGES CXX HIP)
            set(CMAKE_HIP_ARCHITECTURES gfx90a)
            include(Flags)
            add_subdirectory(src)
            """,
        "cmake/Flags.cmake": "set(GPU_DEBUG -lineinfo)\n",
        "src/CMakeLists.txt": 'set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} ${GPU_DEBUG}")\n',
    })
    (finding,) = _scan(root, "B001").findings
    assert _where(finding) == ("Flags.cmake", 1)
    assert finding.fix.applicability is Applicability.UNSAFE
    fix_until_stable([root], root, ("B001",))
    assert (root / "cmake" / "Flags.cmake").read_text() == "set(GPU_DEBUG -gline-tables-only)\n"


def test_nvcc_flags_given_to_cuda_compiles_only_stay_silent_in_a_hip_build(tmp_path) -> None:
    result = assert_findings("""\
        project(ops LANGUAGES CXX CUDA HIP)
        set(CMAKE_HIP_ARCHITECTURES gfx90a)
        set(NVCC_ONLY --use_fast_math -Xptxas=-v)
        set(SHARED --expt-relaxed-constexpr)
        target_compile_options(ops PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${NVCC_ONLY};${SHARED}>")
        target_compile_options(ops PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:${SHARED}>")
        """, "cmake", "B001", tmp_path=tmp_path, select=("B001",))
    (finding,) = result.findings
    assert finding.location.start_line == 4
    assert "keep `--expt-relaxed-constexpr` for nvcc only" in finding.fix.title


def test_architecture_flag_is_an_error(tmp_path) -> None:
    result = assert_findings("""\
        project(ops LANGUAGES CXX HIP)
        set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -arch=sm_80 --use_fast_math")
        """, "cmake", "B001", "B001", "R003", tmp_path=tmp_path, select=("B001", "R003"))
    severities = {f.matched: f.severity for f in result.findings if f.code == "B001"}
    assert severities == {"-arch=sm_80": Severity.ERROR, "--use_fast_math": Severity.WARNING}


def test_cuda_language_is_reported_only_in_the_project_without_a_hip_path(tmp_path) -> None:
    root = _project(tmp_path, **{
        "ported/CMakeLists.txt": """\
            project(ported LANGUAGES CXX CUDA)
            include(cmake/rocm.cmake)
            """,
        "ported/cmake/rocm.cmake": "if(USE_ROCM)\n  enable_language(HIP)\nendif()\n",
        "legacy/CMakeLists.txt": "project(legacy LANGUAGES CXX CUDA)\n",
    })
    (finding,) = _scan(root, "C001").findings
    assert Path(finding.path).parent.name == "legacy"


def test_hip_path_in_a_file_included_only_from_the_cuda_arm_does_not_count(tmp_path) -> None:
    root = _project(tmp_path, **{
        "CMakeLists.txt": """\
            project(ops LANGUAGES CXX)
            enable_language(CUDA)
            if(USE_ROCM)
              message(STATUS "ROCm is not supported yet")
            else()
              include(cmake/gpu.cmake)
            endif()
            """,
        "cmake/gpu.cmake": "find_package(hip)\n",
    })
    (finding,) = _scan(root, "C001").findings
    assert _where(finding) == ("CMakeLists.txt", 2)


def test_cuda_architectures_in_a_hip_build_are_an_error_pointing_at_the_hip_language(tmp_path) -> None:
    root = tmp_path / "case"
    shutil.copytree(FIXTURES / "C002" / "bad_hip_no_arch", root)
    (finding,) = _scan(root, "C002").findings
    assert finding.severity is Severity.ERROR
    (related,) = finding.related
    assert _where(related) == ("CMakeLists.txt", 7)


def test_one_hip_architectures_line_is_added_per_build(tmp_path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text(textwrap.dedent("""\
        project(ops LANGUAGES CXX CUDA)
        set(CMAKE_CUDA_ARCHITECTURES 80)
        set(CMAKE_CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES} 90)
        """), encoding="utf-8")
    result = _scan(tmp_path, "C002")
    assert [f.fix.is_applicable for f in result.findings] == [True, False]
    fix_until_stable([path], tmp_path, ("C002",))
    assert path.read_text().count("CMAKE_HIP_ARCHITECTURES") == 1
    assert not _scan(tmp_path, "C002").findings


def test_missing_offload_arch_is_reported_once_per_build_and_fixed_before_the_language(tmp_path) -> None:
    root = _project(tmp_path, **{
        "CMakeLists.txt": """\
            cmake_minimum_required(VERSION 3.21)
            if(USE_ROCM)
              enable_language(HIP)
            endif()
            add_subdirectory(kernels)
            """,
        "kernels/CMakeLists.txt": "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n",
    })
    (finding,) = _scan(root, "R003").findings
    assert _where(finding) == ("CMakeLists.txt", 3)
    fix_until_stable([root], root, ("R003",))
    assert (root / "CMakeLists.txt").read_text().splitlines()[2:4] == [
        '  set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942" CACHE STRING "AMD GPU targets")',
        "  enable_language(HIP)",
    ]
    assert not _scan(root, "R003").findings


def test_nvcc_flag_lists_have_one_owner(tmp_path) -> None:
    # B001 reports the nvcc flags of `CUDA_NVCC_FLAGS`; C001 reports FindCUDA itself, not the list.
    result = assert_findings("""\
        cmake_minimum_required(VERSION 3.18)
        project(ops LANGUAGES CXX)
        find_package(CUDA REQUIRED)
        list(APPEND CUDA_NVCC_FLAGS -gencode arch=compute_80,code=sm_80 -lineinfo)
        """, "cmake", "B001", "B001", "C001", tmp_path=tmp_path, select=("B001", "C001"))
    assert {f.code: f.location.start_line for f in result.findings} == {"C001": 3, "B001": 4}


def test_a_switch_variable_the_rocm_arm_does_not_set_is_unset_there(tmp_path) -> None:
    """`set(WITH_CUBLAS ON)` only in the CUDA backend's arm: the ROCm build, which takes the
    HIP arm, never sets it, so `if(WITH_CUBLAS)` is false there (the project sets it, not the
    user; an `option` the user may pass would stay open)."""
    src = """\
        project(ops LANGUAGES CXX)
        set(BACKEND "cuda" CACHE STRING "cuda or hip")
        if(BACKEND STREQUAL "hip")
          enable_language(HIP)
          set(CMAKE_HIP_ARCHITECTURES gfx90a)
        elseif(BACKEND STREQUAL "cuda")
          set(WITH_CUBLAS ON)
        endif()
        add_library(ops ops.cpp)
        if(WITH_CUBLAS)
          target_link_libraries(ops PRIVATE CUDA::cublas)
        endif()
        """
    assert_findings(src, "cmake", tmp_path=tmp_path, select=("C003",))
    (tmp_path / "CMakeLists.txt").unlink()
    assert_findings(src.replace("set(WITH_CUBLAS ON)", 'option(WITH_CUBLAS "link cuBLAS" ON)'), "cmake", "C003",
                    tmp_path=tmp_path, select=("C003",))


def test_a_find_module_of_a_cuda_package_is_the_search_not_a_hazard(tmp_path) -> None:
    # A project's copy of a CUDA find module: the toolkit paths it searches and the CUDA
    # targets it defines are what it is for. The same lines in a list file of the build are
    # hazards there.
    module = textwrap.dedent("""\
        set(CUDAToolkit_ROOT_DIR /usr/local/cuda)
        add_library(CUDA::cudart_static UNKNOWN IMPORTED)
        target_link_libraries(CUDA::cudart_static INTERFACE CUDA::culibos)
        target_include_directories(toolkit_probe INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
        """)
    for name, expected in (("FindCUDAToolkit.cmake", []), ("FindNCCL.cmake", []),
                           ("gpu_toolkit.cmake", ["B004", "B004", "C003"])):
        folder = tmp_path / name.replace(".", "_") / "cmake"
        folder.mkdir(parents=True)
        (folder / name).write_text(module)
        found = engine.scan([folder / name], Config(root=folder.parent, select=("B004", "C003"))).findings
        assert sorted(f.code for f in found) == expected, name


def test_a_cuda_library_in_a_generator_expression_the_rocm_build_turns_off_is_the_cuda_builds(tmp_path) -> None:
    # `$<$<BOOL:${P_WITH_CUDA}>:CUDA::cublas CUDA::cudart>` (one expression over two arguments)
    # beside the HIP backend's own libraries: the ROCm build (which enables HIP where P_WITH_HIP
    # is on) links the HIP ones only. A condition on the configuration links them in every build.
    lists = """\
        cmake_minimum_required(VERSION 3.21)
        project(p LANGUAGES CXX)
        option(P_WITH_CUDA "CUDA backend" OFF)
        option(P_WITH_HIP "HIP backend" OFF)
        if(P_WITH_CUDA)
          enable_language(CUDA)
          find_package(CUDAToolkit REQUIRED)
        elseif(P_WITH_HIP)
          enable_language(HIP)
          find_package(hipblas REQUIRED)
        endif()
        add_library(p solve.cpp)
        target_link_libraries(p PUBLIC
          $<$<BOOL:${P_WITH_CUDA}>:CUDA::cublas CUDA::cudart>
          $<$<BOOL:${P_WITH_HIP}>:roc::hipblas>
          CONDITION_LIBS)
        """
    root = _project(tmp_path / "backends", **{"CMakeLists.txt": lists, "solve.cpp": "int solve() { return 0; }\n"})
    assert [f.code for f in _scan(root, "C003").findings] == []
    root = _project(tmp_path / "configs", **{"CMakeLists.txt": lists.replace("$<BOOL:${P_WITH_CUDA}>", "$<CONFIG:Release>"),
                                             "solve.cpp": "int solve() { return 0; }\n"})
    assert [_where(f) for f in _scan(root, "C003").findings] == [("CMakeLists.txt", 14)]
    # `$<BOOL:P_WITH_CUDA>` without `${}` is the string "P_WITH_CUDA": true in every build.
    root = _project(tmp_path / "literal", **{"CMakeLists.txt": lists.replace("$<BOOL:${P_WITH_CUDA}>", "$<BOOL:P_WITH_CUDA>"),
                                             "solve.cpp": "int solve() { return 0; }\n"})
    assert [_where(f) for f in _scan(root, "C003").findings] == [("CMakeLists.txt", 14)]
