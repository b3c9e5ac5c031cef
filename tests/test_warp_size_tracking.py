"""W001 across files: a warp size hard-wired in a header is one finding per root cause and
file: at its definition, and in each kernel file at its first use there, the definition and
the file's other uses as related locations."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from portlint import engine
from portlint.config import Config
from portlint.finding import Severity, group_root_causes
from portlint.report import ReportContext, render

HARD_WIRED = "#pragma once\n#define WARP_SIZE 32\n"
PER_PLATFORM = """\
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif
"""
KERNELS = {
    "reduce.cu": """\
        #include "warp.h"
        __device__ float warp_sum(float v) {
          for (int o = WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_down(v, o);
          return v;
        }
    """,
    "lanes.cu": """\
        #include "warp.h"
        __global__ void lanes(int* out) { out[threadIdx.x] = threadIdx.x % WARP_SIZE + __shfl(out[0], 0); }
    """,
    "tile.cu": """\
        #include "warp.h"
        __global__ void tile(const float* in, float* out) {
          __shared__ float s[WARP_SIZE];
          s[threadIdx.x] = in[threadIdx.x];
          out[threadIdx.x] = __shfl_down(s[threadIdx.x], 1);
        }
    """,
}


def _project(root: Path, header: str) -> Path:
    (root / "include").mkdir()
    (root / "include" / "warp.h").write_text(header, encoding="utf-8")
    for name, text in KERNELS.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _scan(root: Path, jobs: int = 1) -> engine.ScanResult:
    return engine.scan([root], Config(root=root, select=("W001",)), jobs=jobs)


def test_a_hard_wired_header_constant_is_found_at_its_definition_and_each_use(tmp_path: Path) -> None:
    # A finding per place (each is a line to change): the definition with its uses related,
    # each use with the definition related, its root cause.
    (tmp_path / "more.cu").write_text('#include "warp.h"\n__device__ int lane(int t) { return t % WARP_SIZE; }\n'
                                      '__device__ int warp(int t) { return t / WARP_SIZE; }\n')
    result = _scan(_project(tmp_path, HARD_WIRED))
    places = sorted((Path(f.path).name, f.location.start_line) for f in result.findings)
    assert sorted({name for name, _ in places}) == ["lanes.cu", "more.cu", "reduce.cu", "tile.cu", "warp.h"]
    (definition,) = [f for f in result.findings if Path(f.path).name == "warp.h"]
    assert definition.location.start_line == 2
    assert definition.severity is Severity.ERROR, "a use feeds a shuffle"
    assert "5 uses in 4 files" in definition.message
    uses = [f for f in result.findings if f is not definition]
    assert len(uses) == 5
    assert {(Path(r.location.path).name, r.location.start_line) for r in definition.related} == {
        (Path(u.path).name, u.location.start_line) for u in uses}
    assert [f.location.start_line for f in uses if Path(f.path).name == "more.cu"] == [2, 3]
    for use in uses:
        assert use.matched == "WARP_SIZE"
        assert [(Path(r.location.path).name, r.location.start_line) for r in use.related] == [("warp.h", 2)]
    by_file = {Path(f.path).name: f for f in uses}
    assert by_file["reduce.cu"].severity is Severity.ERROR
    assert "array" in by_file["tile.cu"].message and "arithmetic" in by_file["lanes.cu"].message


def test_a_per_platform_definition_makes_every_use_silent(tmp_path: Path) -> None:
    assert _scan(_project(tmp_path, PER_PLATFORM)).findings == []


def test_definition_reported_once_and_workers_agree(tmp_path: Path) -> None:
    root = _project(tmp_path, HARD_WIRED)
    for i in range(50):  # enough files for worker processes: the facts cross a pickle
        (root / f"extra{i}.cu").write_text(f'#include "warp.h"\nint f{i}(int t) {{ return t / WARP_SIZE; }}\n')
    serial, parallel = _scan(root), _scan(root, jobs=2)
    assert [f.location for f in serial.findings] == [f.location for f in parallel.findings]
    assert sum(1 for f in serial.findings if Path(f.path).name == "warp.h") == 1


def test_sarif_carries_the_definition_as_a_related_location(tmp_path: Path) -> None:
    root = _project(tmp_path, HARD_WIRED)
    sarif = json.loads(render("sarif", _scan(root), ReportContext(root=root)))
    uses = [r for r in sarif["runs"][0]["results"]
            if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "lanes.cu"]
    (use,) = uses
    (related,) = use["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "include/warp.h"
    assert related["physicalLocation"]["region"]["startLine"] == 2


def _rel(path: str, root: Path) -> str:
    return Path(path).relative_to(root).as_posix()


def test_each_definition_counts_the_uses_that_see_it(tmp_path: Path) -> None:
    # Two libraries in one tree, each with its own `WARP_SIZE 32`: a use sees the one in its
    # own file or in the header it includes, and only that one lists it.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "warp.h").write_text(HARD_WIRED)
    (tmp_path / "a" / "k.cu").write_text('#include "warp.h"\n'
                                         '__global__ void ka(int* o) { o[0] = threadIdx.x % WARP_SIZE + __ballot(1); }\n'
                                         '__global__ void kb(int* o) { o[threadIdx.x / WARP_SIZE] = __ballot(1); }\n')
    (tmp_path / "b" / "k.cu").write_text('#define WARP_SIZE 32\n'
                                         '__global__ void kc(int* o) { o[threadIdx.x & (WARP_SIZE - 1)] = __ballot(1); }\n')
    result = _scan(tmp_path)
    definitions = {_rel(f.path, tmp_path): f for f in result.findings if "fixes the warp size" in f.message}
    assert set(definitions) == {"a/warp.h", "b/k.cu"}
    assert "2 uses in 1 file" in definitions["a/warp.h"].message
    assert {_rel(r.location.path, tmp_path) for r in definitions["a/warp.h"].related} == {"a/k.cu"}
    assert "1 use in 1 file" in definitions["b/k.cu"].message
    assert [r.location.start_line for r in definitions["b/k.cu"].related] == [2]
    uses = {(_rel(f.path, tmp_path), f.location.start_line): f for f in result.findings if "where it" in f.message}
    assert set(uses) == {("a/k.cu", 2), ("a/k.cu", 3), ("b/k.cu", 2)}
    assert [_rel(r.location.path, tmp_path) for r in uses[("b/k.cu", 2)].related] == ["b/k.cu"]


def test_a_cxx_constant_is_seen_through_the_includes_of_the_file_using_it(tmp_path: Path) -> None:
    # Two extensions, each with a `constexpr` warp size in its own header: a use sees the
    # header its file includes (the build model tracks `#define`s, not C++ constants), so
    # the other header, which nothing that computes with it includes, is no root cause.
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "lanes.h").write_text("#pragma once\nconstexpr int kWarpSize = 32;\n")
    (tmp_path / "a" / "k.cu").write_text('#include "lanes.h"\n'
                                         '__global__ void ka(int* o) { o[threadIdx.x / kWarpSize] = __ballot(1); }\n')
    (tmp_path / "b" / "copy.cu").write_text('#include "lanes.h"\n__global__ void kb(int* o, const int* i) { o[0] = i[0]; }\n')
    result = _scan(tmp_path)
    definitions = {_rel(f.path, tmp_path): f for f in result.findings if "fixes the warp size" in f.message}
    assert "1 use in 1 file" in definitions["a/lanes.h"].message
    assert [_rel(r.location.path, tmp_path) for r in definitions["a/lanes.h"].related] == ["a/k.cu"]
    assert "b/lanes.h" not in definitions  # the uses in view see the other one


def test_a_constant_that_only_logical_warps_use_is_a_note(tmp_path: Path) -> None:
    # The logical-warp model: lanes and warps of 32 that no shuffle across 32 lanes, vote or
    # `warpSize` observes are a deliberate grouping, right on AMD: one note at the definition,
    # its uses related, and no warning; one observing use brings the warnings back.
    (tmp_path / "warp.h").write_text(HARD_WIRED)
    kernel = ('#include "warp.h"\n'
              '__global__ void transpose(const float* in, float* out) {\n'
              '  __shared__ float tile[WARP_SIZE][WARP_SIZE + 1];\n'
              '  const int lane = threadIdx.x % WARP_SIZE, row = threadIdx.x / WARP_SIZE;\n'
              '  tile[row][lane] = in[threadIdx.x];\n'
              '  __syncthreads();\n'
              '  out[threadIdx.x] = tile[lane][row] + __shfl_xor(tile[lane][row], 1);\n'
              '}\n')
    (tmp_path / "t.cu").write_text(kernel)
    findings = _scan(tmp_path).findings
    assert {f.severity for f in findings} == {Severity.NOTE}
    (note,) = [f for f in findings if f.location.path.endswith("warp.h")]
    assert [r.location.start_line for r in note.related] == [3, 3, 4, 4]
    # Each use in the other file says so too; grouped, one note there, pointing back.
    assert sorted(f.location.start_line for f in findings if f.location.path.endswith("t.cu")) == [3, 3, 4, 4]
    in_kernel, in_header = group_root_causes(findings)  # (by path)
    assert in_header.location.path.endswith("warp.h") and in_kernel.location.path.endswith("t.cu")
    assert in_kernel.severity is Severity.NOTE and in_kernel.location.start_line == 3
    assert in_kernel.related[0].location == note.location
    assert [r.location.start_line for r in in_kernel.related[1:]] == [3, 4, 4]
    (tmp_path / "t.cu").write_text(kernel.replace("__shfl_xor(tile[lane][row], 1)", "__shfl_down(tile[lane][row], 1)"))
    result = _scan(tmp_path)
    uses = [f for f in result.findings if "where it" in f.message]
    assert [f.location.start_line for f in uses] == [3, 3, 4, 4] and "4 uses in 1 file" in "".join(
        f.message for f in result.findings if "fixes the warp size" in f.message)


SHIM = """\
#pragma once
#ifdef __HIP_PLATFORM_AMD__
#include <hip/hip_runtime.h>
#define WARP_SIZE 32
#else
#define WARP_SIZE 32
#endif
"""


def test_a_shim_that_hard_wires_32_is_reported_once_at_the_shim(tmp_path: Path) -> None:
    # The ROCm arm of the compatibility header sets the hazard: one finding there, every use
    # it causes related, and none at the uses (the header is the one line to change).
    result = _scan(_project(tmp_path, SHIM))
    assert [(_rel(f.path, tmp_path), f.location.start_line) for f in result.findings] == [("include/warp.h", 4)]
    (shim,) = result.findings
    assert shim.message.startswith("ROCm-only code defines `WARP_SIZE` as 32")
    assert "3 uses in 3 files" in shim.message and shim.severity is Severity.ERROR
    assert {Path(r.location.path).name for r in shim.related} == {"reduce.cu", "lanes.cu", "tile.cu"}


def test_a_shuffle_wrapper_is_as_wide_as_the_width_its_rocm_arm_passes(tmp_path: Path) -> None:
    """The project's `warp_shuffle_down` passes `THREADS_PER_WARP` as the width on ROCm: a
    reduction through it stays in 32-lane groups, and the constant is a note (the fixture
    runs on the lane emulator: 64 lanes give CUDA's sums). With no width in its ROCm arm,
    a kernel that keeps every lane's partial sum reads across the halves of a wavefront."""
    fixture = (Path(__file__).parent.parent / "fixtures" / "W001" / "ok_shuffle_wrapper.cu").read_text()
    (tmp_path / "ok.cu").write_text(fixture)
    found = engine.scan([tmp_path], Config(root=tmp_path, select=("W001",))).findings
    assert [f.severity for f in found] == [Severity.NOTE]
    every_lane = fixture.replace("if (threadIdx.x % THREADS_PER_WARP == 0) out[id / THREADS_PER_WARP] = total;",
                                 "out[id] = total;")
    (tmp_path / "ok.cu").write_text(every_lane)
    assert [f.severity for f in engine.scan([tmp_path], Config(root=tmp_path, select=("W001",))).findings] == [
        Severity.NOTE]
    (tmp_path / "ok.cu").write_text(every_lane.replace("__shfl_down(value, delta, THREADS_PER_WARP)",
                                                       "__shfl_down(value, delta)"))
    found = engine.scan([tmp_path], Config(root=tmp_path, select=("W001",))).findings
    assert found and Severity.NOTE not in {f.severity for f in found}


def test_a_functions_own_constant_is_reported_only_where_something_computes_with_it(tmp_path: Path) -> None:
    # Host code that keeps a warp width it never uses (left over from a removed launch) beside
    # one whose 32 sizes a lane index: only the second is a hazard.
    (tmp_path / "solve.cu").write_text(textwrap.dedent("""\
        void plan(int n) {
          const int warp_size = 32;  /* threads per warp */
          (void)n;
        }
        __global__ void lanes(int* out) {
          const int warp_size = 32;
          out[threadIdx.x] = threadIdx.x % warp_size + __ballot(1);
        }
    """))
    result = _scan(tmp_path)
    assert sorted({f.location.start_line for f in result.findings}) == [6, 7]


def test_a_constant_used_only_in_an_arm_hip_clang_skips_is_still_reported(tmp_path: Path) -> None:
    # `#if __CUDA_ARCH__ >= 700` is dead on hip-clang today (P001); the fix that opens it to
    # AMD brings the 32-lane reduction back, so the header's 32 stays a hazard.
    (tmp_path / "common.cuh").write_text("#pragma once\nconstexpr int kWarpSize = 32;\n")
    (tmp_path / "reduce.cu").write_text(textwrap.dedent("""\
        #include "common.cuh"
        __global__ void reduce(float* out, const float* in) {
          float v = in[threadIdx.x];
        #if __CUDA_ARCH__ >= 700
          for (int o = kWarpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
        #else
          out[threadIdx.x] = v;
        #endif
        }
    """))
    result = _scan(tmp_path)
    assert [(_rel(f.path, tmp_path), f.location.start_line) for f in result.findings] == [("common.cuh", 2)]


def test_a_functions_constant_a_macro_of_the_file_reads_is_used(tmp_path: Path) -> None:
    (tmp_path / "lanes.cu").write_text(textwrap.dedent("""\
        #define LANE_OF(t) ((t) % warp_size)
        __global__ void spread(float* out) {
          const int warp_size = 32;
          out[threadIdx.x] = __shfl_sync(0xffffffff, out[0], LANE_OF(threadIdx.x));
        }
    """))
    assert 3 in {f.location.start_line for f in _scan(tmp_path).findings}


def test_a_local_in_a_function_the_parser_lost_is_silent_where_nothing_names_it_again(
        tmp_path: Path) -> None:
    # A C file whose function opens differently in two #ifdef arms (the parser sees no
    # function around the body) keeps an unused width there: it is the file's own, written
    # once, so nothing computes with it. A header's constant may be used by code out of view,
    # so it is still reported.
    body = textwrap.dedent("""\
        void plan(int n)
        #ifdef PLAN_TRACE
        { int traced = 1;
        #else
        { int traced = 0;
        #endif
          const int warp_size = 32;  /* threads per warp */
          (void)n; (void)traced;
        }
    """)
    (tmp_path / "solve.c").write_text(body)
    (tmp_path / "api.h").write_text("const int warp_size = 32;\n")
    result = _scan(tmp_path)
    assert [(Path(f.path).name, f.location.start_line) for f in result.findings] == [("api.h", 1)]
    # Two such functions, each declaring its own and using none: still nothing computes with it.
    (tmp_path / "solve.c").write_text(body + body.replace("plan(", "replan("))
    result = _scan(tmp_path)
    assert [(Path(f.path).name, f.location.start_line) for f in result.findings] == [("api.h", 1)]
    # One of them using it: reported.
    (tmp_path / "solve.c").write_text(body + body.replace("plan(", "replan(").replace(
        "(void)n;", "(void)(n / warp_size);"))
    assert ("solve.c", 7) in [(Path(f.path).name, f.location.start_line) for f in _scan(tmp_path).findings]


def test_a_use_sees_only_what_cxx_name_lookup_can_find_by_its_name(tmp_path: Path) -> None:
    # A tensor-core helper's own `static constexpr int warp_size = 32;` is a class member: a
    # free function's `device::warp_size()` calls a function (here one that reads `warpSize`),
    # and an unqualified `warp_size` outside the class is not it. Neither computes with the
    # member; `Mma::warp_size`, and the member's uses inside its class, do.
    (tmp_path / "mma.h").write_text(
        "#pragma once\n"
        "struct Mma {\n"
        "  static constexpr int warp_size = 32;\n"
        "  __device__ static int lane() { return threadIdx.x % warp_size + __ballot(1); }\n"
        "};\n"
        "namespace device { __host__ __device__ constexpr int warp_size() { return warpSize; } }\n")
    (tmp_path / "k.cu").write_text(
        '#include "mma.h"\n'
        "__global__ void reduce(int* o) {\n"
        "  int warp = threadIdx.x / device::warp_size();\n"
        "  o[warp] = __ballot(threadIdx.x % device::warp_size() == 0);\n"
        "}\n")
    assert [(Path(f.path).name, f.location.start_line) for f in _scan(tmp_path).findings] == [("mma.h", 3), ("mma.h", 4)]
    (tmp_path / "k.cu").write_text(
        '#include "mma.h"\n'
        "__global__ void reduce(int* o) { o[threadIdx.x / Mma::warp_size] = __ballot(1); }\n")
    result = _scan(tmp_path)
    assert ("k.cu", 2) in [(Path(f.path).name, f.location.start_line) for f in result.findings]


def test_a_member_defined_outside_its_class_reads_the_class_scope(tmp_path: Path) -> None:
    # The body of `float& Tile::slot()` and the initialiser of `const int Geom::warps` are
    # read in the class's scope: their unqualified `warp_size` is the member.
    (tmp_path / "tile.h").write_text("#pragma once\nstruct Tile {\n  static constexpr int warp_size = 32;\n"
                                     "  float slots[8];\n  __device__ float& slot();\n};\n"
                                     "struct Geom {\n  static constexpr int warp_size = 32;\n"
                                     "  static const int warps;\n};\n")
    (tmp_path / "tile.cu").write_text(
        '#include "tile.h"\n'
        "__device__ float& Tile::slot() {\n"
        "  float v = slots[0];\n"
        "  for (int off = warp_size / 2; off > 0; off /= 2) v += __shfl_down(v, off);\n"
        "  return slots[threadIdx.x / 32 % 8] = v;\n"
        "}\n"
        "const int Geom::warps = 256 / warp_size;\n"
        "__global__ void k(int* o) { o[threadIdx.x / (256 / Geom::warps)] = __ballot(1); }\n")
    uses = {f.location.start_line for f in _scan(tmp_path).findings if Path(f.path).name == "tile.cu"}
    assert {4, 7} <= uses


def test_a_namespace_qualified_definition_is_not_a_class_scope(tmp_path: Path) -> None:
    # `const int ns::warps = 256 / warp_size;` reads the namespace's names, not a class's: a
    # class member of that name elsewhere is not what it uses; `Outer::Inner::f()` is Inner's.
    (tmp_path / "tile.h").write_text("#pragma once\nstruct Tile {\n  static constexpr int warp_size = 32;\n};\n"
                                     "struct Outer { struct Inner { static constexpr int warp_size = 32;\n"
                                     "  __device__ static int lane(); }; };\n")
    (tmp_path / "k.cu").write_text('#include "tile.h"\n#include "width.h"\n'
                                   "namespace ns { extern const int warps; }\n"
                                   "const int ns::warps = 256 / warp_size;\n"
                                   "__device__ int Outer::Inner::lane() { return threadIdx.x % warp_size + __ballot(1); }\n")
    result = _scan(tmp_path)
    related_lines = {r.location.start_line for f in result.findings if Path(f.path).name == "tile.h"
                     for r in f.related if Path(r.location.path).name == "k.cu"}
    assert 4 not in related_lines and 5 in related_lines
    # A derived class's member defined outside it reads its base's member unqualified.
    (tmp_path / "k.cu").write_text('#include "tile.h"\n'
                                   "struct Wide : Tile { __device__ static int lane(); };\n"
                                   "__device__ int Wide::lane() { return threadIdx.x % warp_size + __ballot(1); }\n")
    assert ("k.cu", 3) in [(Path(f.path).name, f.location.start_line) for f in _scan(tmp_path).findings]
