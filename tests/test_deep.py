"""Deep mode (`--deep`, libclang): what it finds that fast mode cannot, and how it degrades.

`fixtures/deep/<CODE>_bad_<case>.cu` carry `// expect: CODE` markers that deep mode must
match exactly and fast mode must miss; `<CODE>_ok_<case>.cu` hold a fast-mode false
positive that deep mode removes (for a rule only deep mode has, X001: a near miss that
stays silent). Where `<CODE>_bad_<case>.fixed.cu` exists, deep mode's fixes must give it,
and it must give no finding. Each case is scanned alone, so the headers it includes
from `fixtures/deep/include/` are seen by clang only. X001's cases run twice: with the
installed HIP headers (skipped where there are none) and with the bundled stand-ins.

These tests need the PyPI `libclang` wheel (the `test` extra installs it). Without it they
skip with the reason shown, except under CI (`CI` set), where that is a failure.
"""

from __future__ import annotations

import faulthandler
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import expectations, fix_until_stable, scan
from portlint import deep
from portlint.cli import main
from portlint.config import Config
from portlint import deep
from portlint.deep import translation_unit
from portlint.registry import DEEP, REGISTRY

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deep"
CASES = sorted(p for p in FIXTURES.glob("*.cu") if ".fixed" not in p.name)
HEADER_SETS = ("real", "stand-ins")


@pytest.fixture(autouse=True)
def libclang() -> None:
    try:
        translation_unit.cindex()
    except translation_unit.LibclangUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"libclang is missing in CI ({exc}): the 'test' extra must install it")
        pytest.skip(f"libclang not installed ({exc}): pip install 'portlint[deep]'")


def _marker(case: Path, name: str) -> str | None:
    """`// deep-flags: -std=c++11` in a fixture's first lines: the flags (or header set) its
    hazard needs, as a project would give them in compile_commands.json or 'deep-flags'."""
    for line in case.read_text(encoding="utf-8").splitlines()[:5]:
        if line.startswith(f"// {name}:"):
            return line.split(":", 1)[1].strip()
    return None


def _positions(result, code: str) -> set[tuple[str, int]]:
    return {(Path(f.path).name, f.location.start_line) for f in result.findings if f.code == code}


def _details(result) -> str:
    return "\n".join(f"  {f.path}:{f.location.start_line}: {f.code} {f.message}" for f in result.findings) + \
        "\n" + "\n".join(f"  note: {n}" for n in result.notes)


def _header_sets():
    for case in CASES:
        for headers in HEADER_SETS if DEEP in REGISTRY[case.name[:4]] else ("as found",):
            yield pytest.param(case, headers, id=f"deep/{case.name}" + (f"[{headers}]" if headers != "as found" else ""))


@pytest.mark.parametrize("case, headers", list(_header_sets()))
def test_deep_fixture(case: Path, headers: str, tmp_path: Path, monkeypatch) -> None:
    if headers == "real" and translation_unit.real_hip_headers() is None:
        pytest.skip("no HIP headers installed (/opt/rocm/include or /usr/include/hip, with a clang resource dir)")
    if headers == "stand-ins" and _marker(case, "deep-headers") == "real":
        pytest.skip("the hazard is in the real headers (clang's device std::min), not in the stand-ins")
    if headers == "stand-ins":  # workers are forked: they see the patched lookup
        monkeypatch.setattr(translation_unit, "real_hip_headers", lambda: None)
    shutil.copytree(FIXTURES, tmp_path / "deep")
    path = tmp_path / "deep" / case.name
    code = case.name[:4]
    flags = {"deep_flags": tuple(shlex.split(_marker(case, "deep-flags") or ""))}
    fast = scan([path], tmp_path, select=(code,))
    deeper = scan([path], tmp_path, select=(code,), deep=True, **flags)
    assert not deeper.problems, [str(p) for p in deeper.problems]
    assert not [n for n in deeper.notes if "could not parse" in n or "partly parsed" in n], deeper.notes
    expected, todo = expectations(path, code)
    found = _positions(deeper, code)
    missing, extra = sorted(expected - found), sorted(found - expected - todo)
    assert not missing and not extra, f"deep: missing {missing}, unexpected {extra}\n{_details(deeper)}"
    if "_bad_" in case.name:
        assert expected, "a bad case must carry expect markers"
        assert not expected & _positions(fast, code), f"fast mode finds these already:\n{_details(fast)}"
    elif DEEP in REGISTRY[code]:
        assert not found  # a near miss: nothing for fast mode to get wrong, nothing for deep mode to find
    else:
        assert _positions(fast, code), "an ok case shows a fast-mode false positive that deep mode removes"
        assert not found
    fixed = case.with_name(case.name[: -len(case.suffix)] + ".fixed" + case.suffix)
    if fixed.exists():
        assert fix_until_stable([path], tmp_path, (code,), deep=True, **flags) > 0
        assert path.read_text(encoding="utf-8") == fixed.read_text(encoding="utf-8")
        again = scan([path], tmp_path, select=(code,), deep=True, **flags)
        assert not _positions(again, code), _details(again)


def test_deep_and_fast_findings_merge(tmp_path: Path) -> None:
    """The same hazard seen by both modes is one finding: fast's region and fix, deep's message."""
    path = tmp_path / "vote.cu"
    path.write_text(textwrap.dedent("""\
        #include <hip/hip_runtime.h>
        using mask_t = unsigned;
        __global__ void vote(const int* flags, unsigned* out) {
          unsigned active = __ballot_sync(~0ull, flags[threadIdx.x] != 0);
          mask_t hidden = __ballot_sync(~0ull, flags[threadIdx.x] > 1);
          out[0] = __popc(active) + hidden;
        }
        """), encoding="utf-8")
    fast = scan([path], tmp_path, select=("W003",))
    deeper = scan([path], tmp_path, select=("W003",), deep=True)
    lines = sorted(f.location.start_line for f in deeper.findings)
    assert lines == [4, 5, 6], _details(deeper)
    by_line = {f.location.start_line: f for f in fast.findings}
    for f in deeper.findings:
        if f.location.start_line in by_line:  # found by both: kept once, with the fast fix
            assert f.fix == by_line[f.location.start_line].fix


def test_deep_parses_units_in_parallel_and_reports_time(tmp_path: Path) -> None:
    for case in ("W001_bad_header_macro.cu", "W003_bad_typedef_auto.cu"):
        shutil.copy(FIXTURES / case, tmp_path / case)
    shutil.copytree(FIXTURES / "include", tmp_path / "include")
    result = deep.analyze(scan([tmp_path], tmp_path, select=("W",)).files.values(),
                          Config(root=tmp_path, deep=True), ("W001", "W003"), jobs=2)
    assert {f.code for f in result.findings} == {"W001", "W003"}
    assert result.notes[-1].startswith("deep analysis: 2 translation units in ")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "portlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_deep_reads_compile_commands_from_cmake(tmp_path: Path) -> None:
    cmake = shutil.which("cmake")
    if cmake is None:
        if os.environ.get("CI"):
            pytest.fail("cmake is missing in CI")
        pytest.skip("cmake not installed")
    (tmp_path / "include").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "include" / "warp.h").write_text("#pragma once\n#define WARP_SIZE 32\n", encoding="utf-8")
    (tmp_path / "src" / "lanes.cu").write_text(textwrap.dedent("""\
        #include "warp.h"
        #ifdef USE_FOO
        __global__ void lanes(int* out) { out[threadIdx.x] = threadIdx.x % WARP_SIZE; }
        #endif
        """), encoding="utf-8")
    # `.cu` compiled as C++ (no CUDA toolchain needed): CMake still records its flags.
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent("""\
        cmake_minimum_required(VERSION 3.16)
        project(lanes LANGUAGES CXX)
        set_source_files_properties(src/lanes.cu PROPERTIES LANGUAGE CXX)
        add_library(lanes STATIC src/lanes.cu)
        target_include_directories(lanes PRIVATE include)
        target_compile_definitions(lanes PRIVATE USE_FOO)
        """), encoding="utf-8")
    configure = subprocess.run([cmake, "-S", ".", "-B", "build", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stderr
    database = tmp_path / "build" / "compile_commands.json"
    assert any(e["file"].endswith("lanes.cu") for e in json.loads(database.read_text()))

    proc = _run(["scan", "--deep", "--no-cache", "--select", "W001", "src"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "src/lanes.cu:3:" in proc.stdout and "`WARP_SIZE` is 32 here" in proc.stdout
    assert proc.stderr.splitlines()[-1].startswith("portlint: deep analysis: 1 translation unit in ")
    assert "no compile_commands.json" not in proc.stderr

    database.unlink()  # without it: the build files' include directories and defines, said in one line
    proc = _run(["scan", "--deep", "--no-cache", "--select", "W001", "src"], tmp_path)
    notes = [line for line in proc.stderr.splitlines() if "no compile_commands.json" in line]
    assert notes == ["portlint: deep: no compile_commands.json in . or build/; using -I . and the build files' "
                     "1 include directory and 1 ROCm define"], proc.stderr
    assert "'warp.h' file not found" not in proc.stderr
    assert proc.returncode == 1 and "src/lanes.cu:3:" in proc.stdout, proc.stdout

    # The same project configured by hand.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.portlint]\ndeep = true\ndeep-flags = ["-I", "include", "-DUSE_FOO"]\n', encoding="utf-8")
    proc = _run(["scan", "--no-cache", "--select", "W001", "src"], tmp_path)
    assert proc.returncode == 1 and "`WARP_SIZE` is 32 here" in proc.stdout, proc.stderr
    assert "using 'deep-flags' from pyproject.toml" in proc.stderr


def test_explicit_compile_commands_that_do_not_exist(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n", encoding="utf-8")
    proc = _run(["scan", "--deep", "--compile-commands", "nowhere.json", "a.cu"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "portlint: error: --compile-commands: nowhere.json: no such file or directory"


def _cli(args: list[str], cwd: Path):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args)
    finally:
        os.chdir(old)


def test_without_libclang_deep_degrades_with_one_line(tmp_path: Path, monkeypatch) -> None:
    shutil.copy(FIXTURES / "W001_ok_byte_offset.cu", tmp_path / "k.cu")
    fast = _cli(["scan", "--no-cache", "k.cu"], tmp_path)
    monkeypatch.setitem(sys.modules, "clang", None)  # `import clang.cindex` now fails
    monkeypatch.setitem(sys.modules, "clang.cindex", None)
    translation_unit.cindex.cache_clear()
    try:
        degraded = _cli(["scan", "--no-cache", "--deep", "k.cu"], tmp_path)
    finally:
        translation_unit.cindex.cache_clear()
    assert degraded.exit_code == fast.exit_code == 1
    assert degraded.stdout == fast.stdout  # fast mode's findings, the false positive included
    assert degraded.stderr.splitlines() == [
        "portlint: deep: libclang could not be loaded (ModuleNotFoundError: import of clang halted; None in sys.modules); "
        "fast mode only (pip install 'portlint[deep]')"
    ]


def test_unit_that_does_not_parse_falls_back_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.cu").write_text(textwrap.dedent("""\
        __global__ void k(unsigned* out) {
          unsigned m = __ballot(threadIdx.x & 1);
          out[0] = m
          out[1] = ) m;
        }
        """), encoding="utf-8")
    fast = _cli(["scan", "--no-cache", "broken.cu"], tmp_path)
    degraded = _cli(["scan", "--no-cache", "--deep", "broken.cu"], tmp_path)
    assert degraded.exit_code == fast.exit_code == 1
    assert degraded.stdout == fast.stdout
    lines = degraded.stderr.splitlines()
    failed = [line for line in lines if "could not parse" in line]
    assert len(failed) == 1 and failed[0].startswith("portlint: broken.cu: deep: could not parse (line 3: expected ';'"), lines


def test_fast_mode_unchanged_without_deep(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "W001_ok_byte_offset.cu", tmp_path / "k.cu")
    result = _cli(["scan", "--no-cache", "k.cu"], tmp_path)
    assert result.exit_code == 1 and "deep" not in result.stderr


def _unit_of_work(job: str) -> str:
    """A stand-in for one unit's analysis: `crash` dies as libclang does, `hang` never ends."""
    if job == "crash":
        faulthandler.disable()  # pytest's, inherited by the forked worker: no dump of the expected crash
        os.kill(os.getpid(), signal.SIGSEGV)
    if job == "hang":
        time.sleep(600)
    return job.upper()


def test_a_crashed_or_hung_unit_costs_that_unit_only() -> None:
    jobs = ["a", "crash", "b", "hang", "c", "d"]
    # A hung unit uses no CPU time: it is stopped at three times the budget on the clock.
    results = deep.run_units(_unit_of_work, jobs, workers=2, timeout=1, shown=lambda job: f"{job}.cu")
    assert results[0::2] == ["A", "B", "C"]
    assert results[5] == "D"
    assert results[1] == deep.Lost("crash.cu", "libclang crashed (SIGSEGV); fast mode only")
    assert results[3] == deep.Lost("hang.cu", "skipped after 1 s")


def test_a_type_kind_the_bindings_do_not_know_costs_no_check(tmp_path: Path) -> None:
    """`_Float16` (HIP's `__half`) is a type kind the Python bindings of libclang 18 lack:
    reading it raised "Unknown template argument kind 32" and lost the unit's checks."""
    path = tmp_path / "half.cu"
    path.write_text(textwrap.dedent("""\
        typedef unsigned mask_t;
        __global__ void vote(const _Float16* values, unsigned* out) {
          _Float16 v = values[threadIdx.x];
          mask_t m = __ballot_sync(~0ull, v > _Float16(0));
          out[0] = m;
        }
        """), encoding="utf-8")
    deeper = scan([path], tmp_path, select=("W003",), deep=True)
    assert _positions(deeper, "W003") == {("half.cu", 4), ("half.cu", 5)}, _details(deeper)
    assert not [n for n in deeper.notes if "deep: W003" in n], deeper.notes


def test_compile_commands_paths_are_read_from_the_entry_directory(tmp_path: Path) -> None:
    """Relative `file`, `-I`, `-isystem` glued on, a response file: all from `directory`, as the compiler did."""
    for folder in ("src", "include", "third", "build"):
        (tmp_path / folder).mkdir()
    (tmp_path / "include" / "lanes.h").write_text("#pragma once\n#include <width.h>\n", encoding="utf-8")
    (tmp_path / "third" / "width.h").write_text("#pragma once\n#define LANES 32\n", encoding="utf-8")
    (tmp_path / "build" / "includes.rsp").write_text("-isystem../third\n", encoding="utf-8")
    (tmp_path / "src" / "k.cu").write_text(textwrap.dedent("""\
        #include "lanes.h"
        __global__ void k(int* out) { out[threadIdx.x] = threadIdx.x % LANES; }
        """), encoding="utf-8")
    (tmp_path / "build" / "compile_commands.json").write_text(json.dumps([{
        "directory": ".", "file": "../src/k.cu",  # a relative directory is the database's folder
        "arguments": ["nvcc", "-I../include", "@includes.rsp", "-c", "../src/k.cu"],
    }]), encoding="utf-8")
    proc = _run(["scan", "--deep", "--no-cache", "--select", "W001", "src"], tmp_path)
    assert "src/k.cu:2:" in proc.stdout and "`LANES` is 32 here" in proc.stdout, proc.stdout + proc.stderr
    assert "partly parsed" not in proc.stderr


def test_deep_timeout_is_validated(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n", encoding="utf-8")
    proc = _run(["scan", "--deep", "--deep-timeout", "0", "a.cu"], tmp_path)
    assert proc.returncode == 2 and "--deep-timeout" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.portlint]\ndeep-timeout = "soon"\n', encoding="utf-8")
    proc = _run(["scan", "--deep", "a.cu"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("pyproject.toml: 'deep-timeout' must be a positive number of seconds"), proc.stderr


def test_warm_deep_scan_parses_nothing_and_an_edited_header_reparses_its_units(tmp_path: Path) -> None:
    (tmp_path / "lanes.h").write_text("#pragma once\n#define LANES 32\n", encoding="utf-8")
    (tmp_path / "a.cu").write_text('#include "lanes.h"\n__global__ void a(int* o) { o[0] = threadIdx.x % LANES; }\n',
                                   encoding="utf-8")
    (tmp_path / "b.cu").write_text("__global__ void b(int* o) { o[0] = 1; }\n", encoding="utf-8")
    args = ["scan", "--deep", "--select", "W001", "--cache-dir", "cache", "a.cu", "b.cu"]
    cold, warm = _run(args, tmp_path), _run(args, tmp_path)
    assert cold.stdout == warm.stdout and "`LANES` is 32 here" in warm.stdout
    assert "from the cache" not in cold.stderr
    assert "deep analysis: 2 translation units in" in warm.stderr and ", 2 from the cache" in warm.stderr
    (tmp_path / "lanes.h").write_text("#pragma once\n#define LANES 64\n", encoding="utf-8")
    edited = _run(args, tmp_path)
    assert ", 1 from the cache" in edited.stderr, edited.stderr  # b.cu never read lanes.h
    assert "`LANES` is 32 here" not in edited.stdout


def test_without_compile_commands_the_build_files_give_the_flags(tmp_path: Path, monkeypatch) -> None:
    """A project never configured: include directories and ROCm defines from its build files."""
    from portlint.build_model import build_files

    (tmp_path / "csrc" / "include").mkdir(parents=True)
    (tmp_path / "csrc" / "include" / "lanes.h").write_text("#pragma once\n#define LANES 32\n", encoding="utf-8")
    (tmp_path / "csrc" / "k.cu").write_text(textwrap.dedent("""\
        #include "lanes.h"
        #ifdef WITH_LANES
        __global__ void k(int* out) { out[threadIdx.x] = threadIdx.x % LANES; }
        #endif
        """), encoding="utf-8")
    # Both builds define it, so the kernel is compiled for ROCm and CUDA alike (LIVE).
    facts = build_files.BuildFiles(include_dirs=(str(tmp_path / "csrc" / "include"),), rocm_defines={"WITH_LANES": "1"},
                                   cuda_defines={"WITH_LANES": "1"})
    monkeypatch.setattr(build_files, "read_build_files", lambda candidates, config, whole_project=False, fs=None: facts)
    result = scan([tmp_path / "csrc"], tmp_path, select=("W001",), deep=True)
    assert any("`LANES` is 32 here" in f.message for f in result.findings), _details(result)
    assert any("the build files' 1 include directory and 1 ROCm define" in n for n in result.notes), result.notes


CUDA_BUILD_SOURCES = {
    # Compiles with hip-clang once hipify renames its headers and names.
    "scale.cu": """\
#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void scale(float* p, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= s;
}
void run(float* p, int n, cudaStream_t stream) {
  scale<<<(n + 255) / 256, 256, 0, stream>>>(p, 2.f, n);
  cudaStreamSynchronize(stream);
}
""",
    # A dependent type without `typename`: hip-clang rejects it.
    "traits.cu": """\
#include <cuda_runtime.h>
template <typename T> struct Traits { typedef T value_type; };
template <typename T> __device__ void copy_one(T* dst, const T* src) {
  typedef Traits<T>::value_type V;  // expect: X001
  *dst = V(*src);
}
""",
    # nvcc's implicit runtime include: no header named, the runtime used three times.
    "bare.cu": """\
__global__ void fill(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // expect: X001
  if (i < n) p[i] = 0.f;
  __syncthreads();
}
""",
}


def _cuda_compile_database(root: Path) -> None:
    entries = []
    for i, name in enumerate(sorted(CUDA_BUILD_SOURCES)):
        (root / name).write_text(CUDA_BUILD_SOURCES[name])
        command = (f"/usr/bin/clang++ -x cuda --cuda-gpu-arch=sm_80 -I/usr/local/cuda/include -O2 -c {name}" if i % 2
                   else f"/usr/local/cuda/bin/nvcc -gencode arch=compute_80,code=sm_80 -Xcompiler -fPIC -c {name}")
        entries.append({"directory": str(root), "file": name, "command": f"{command} -o {name}.o"})
    (root / "compile_commands.json").write_text(json.dumps(entries))


def test_a_cuda_compile_database_is_read_as_hip_clang_reads_the_hipified_sources(tmp_path: Path) -> None:
    """Flags from a CUDA build (clang `-x cuda`, nvcc): deep mode parses each unit as
    hip-clang does after hipify (`<cuda_runtime.h>` is `<hip/hip_runtime.h>`, CUDA names
    renamed), so only what hip-clang itself rejects is an X001: the missing `typename`, and
    a file that relied on nvcc's implicit runtime include, once, not once per name."""
    if translation_unit.real_hip_headers() is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs the HIP headers (libamdhip64-dev)")
        pytest.skip("no HIP headers installed (/opt/rocm/include or /usr/include/hip, with a clang resource dir)")
    _cuda_compile_database(tmp_path)
    result = scan([tmp_path], tmp_path, select=("X001",), deep=True)
    expected = set()
    for name in CUDA_BUILD_SOURCES:
        expected |= expectations(tmp_path / name, "X001")[0]
    assert _positions(result, "X001") == expected, _details(result)
    (runtime,) = [f for f in result.findings if Path(f.path).name == "bare.cu"]
    assert "includes no runtime header" in runtime.message


def test_a_hipified_build_adds_the_runtime_include_itself(tmp_path: Path) -> None:
    """PyTorch's extension builder hipifies the sources and adds the runtime include: a
    source that relied on nvcc's implicit one is no X001 there."""
    if translation_unit.real_hip_headers() is None:
        pytest.skip("no HIP headers installed")
    _cuda_compile_database(tmp_path)
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('k', ['scale.cu', 'traits.cu', 'bare.cu'])\n")
    result = scan([tmp_path], tmp_path, select=("X001",), deep=True)
    assert _positions(result, "X001") == {("traits.cu", 4)}, _details(result)


def test_clang_error_where_a_fast_rule_reports_the_same_rejection_is_one_finding(tmp_path: Path) -> None:
    """A missing `typename` is X002 in fast mode and a clang error (X001) in deep mode: one
    root cause, so one finding, the fast rule's (with its fix)."""
    shutil.copytree(FIXTURES, tmp_path / "deep")
    path = tmp_path / "deep" / "X001_bad_missing_typename.cu"
    line = next(i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "expect: X001" in text)
    result = scan([path], tmp_path, select=("X001", "X002"), deep=True)
    assert [(f.code, f.location.start_line) for f in result.findings] == [("X002", line)]
    assert result.findings[0].fix.is_applicable
