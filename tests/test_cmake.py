"""CMake rules (B002-B004, C003): what the fixtures cannot show in one file each."""

from __future__ import annotations

import textwrap

from harness import assert_findings, fix_until_stable


def _fixed(tmp_path, src: str, code: str) -> str:
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
    assert fixed == 'target_link_libraries(app PRIVATE "${ROOT}/bibliothèque.so;roc::hipblas")\n'


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
    path = tmp_path / "CMakeLists.txt"
    path.write_text("project(ops LANGUAGES CXX HIP)", encoding="utf-8")
    fix_until_stable([path], tmp_path, ("B003",))
    assert path.read_text(encoding="utf-8") == "project(ops LANGUAGES CXX HIP)\nadd_compile_definitions(USE_ROCM)\n"


def test_genex_definition_for_hip_sources_counts_as_defining_use_rocm(tmp_path) -> None:
    assert_findings("""\
        project(ops LANGUAGES CXX HIP)
        add_compile_definitions($<$<COMPILE_LANGUAGE:HIP>:USE_ROCM>)
        target_compile_definitions(hip_ops PRIVATE NDEBUG)
        """, "cmake", tmp_path=tmp_path, select=("B003",))


def test_target_named_hip_is_not_a_rocm_definition(tmp_path) -> None:
    assert_findings("""\
        project(ops LANGUAGES CXX HIP)
        target_compile_definitions(hip_ops PRIVATE NDEBUG)
        add_compile_definitions($<$<COMPILE_LANGUAGE:HIP>:NDEBUG>)
        """, "cmake", "B003", tmp_path=tmp_path, select=("B003",))


def test_link_item_glued_to_other_text_gets_advice_only(tmp_path) -> None:
    result = assert_findings("""\
        target_link_libraries(app PRIVATE "-Wl,--as-needed CUDA::cublas" éCUDA::cufft)
        """, "cmake", "C003", "C003", tmp_path=tmp_path, select=("C003",))
    assert not [f for f in result.findings if f.fix.is_applicable]
