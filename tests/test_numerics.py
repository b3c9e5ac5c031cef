"""N001's claim, checked with the compiler: code that reads `__half2` members or uses
`__half` operators does not build the way PyTorch builds ROCm extensions; the rewrite does."""

from __future__ import annotations

import textwrap
from pathlib import Path

from portlint.finding import Severity
from test_hipcc import compile_hip

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# What torch.utils.cpp_extension passes to hipcc (COMMON_HIPCC_FLAGS).
PYTORCH_HIP_FLAGS = ("-D__HIP_NO_HALF_OPERATORS__=1", "-D__HIP_NO_HALF_CONVERSIONS__=1")


def test_half_code_fails_under_pytorch_rocm_flags(tmp_path: Path) -> None:
    proc = compile_hip(FIXTURES / "N001" / "bad.hip", tmp_path, *PYTORCH_HIP_FLAGS)
    assert proc.returncode != 0
    assert "invalid operands to binary expression" in proc.stderr


def test_half_rewrite_builds_under_pytorch_rocm_flags(tmp_path: Path) -> None:
    proc = compile_hip(FIXTURES / "N001" / "bad.fixed.hip", tmp_path, *PYTORCH_HIP_FLAGS)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_half_operators_are_reported_unless_the_projects_own_rocm_build_keeps_them(tmp_path: Path) -> None:
    """N001's operator half is about PyTorch's ROCm flags: a project whose build files
    describe a plain HIP build (CMake with the HIP language) keeps HIP's `__half` operators;
    a PyTorch extension, or a project with no build files to tell, is told."""
    from portlint import engine
    from portlint.config import Config

    kernel = "#include <cuda_fp16.h>\n__device__ __half scaled(__half a, __half b) { return a * b; }\n"
    builds = {
        "cmake_hip": ("CMakeLists.txt", "project(p LANGUAGES CXX HIP)\nadd_library(p k.cu)\n"),
        "torch": ("setup.py", "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('p', ['k.cu'])\n"),
        # The extension takes PyTorch's define back for its ROCm build: the operators are there.
        "torch_undefines": ("setup.py", "import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                            "nvcc = ['-O3']\nif torch.version.hip:\n    nvcc += ['-U__HIP_NO_HALF_OPERATORS__']\n"
                            "ext = CUDAExtension('p', ['k.cu'], extra_compile_args={'nvcc': nvcc})\n"),
        "none": None,
    }
    found = {}
    for name, build in builds.items():
        root = tmp_path / name
        root.mkdir()
        (root / "k.cu").write_text(kernel)
        if build is not None:
            (root / build[0]).write_text(build[1])
        found[name] = [f.code for f in engine.scan([root], Config(root=root)).findings if f.code == "N001"]
    assert found == {"cmake_hip": [], "torch": ["N001"], "torch_undefines": [], "none": ["N001"]}


def test_half_operators_warn_where_a_pytorch_build_shows(tmp_path: Path) -> None:
    """PyTorch's ROCm extension builds switch HIP's half operators off; other ROCm builds keep
    them. With PyTorch's headers (or its hipify) in view an operator is a warning; where the
    build is unknown and nothing shows PyTorch, a note."""
    from harness import assert_findings

    body = """\
        __device__ bool larger(__half a, __half b) { return a < b; }
        """
    plain = assert_findings("#include <cuda_fp16.h>\n" + textwrap.dedent(body), "cuda", "N001",
                            tmp_path=tmp_path, select=("N001",))
    assert plain.findings[0].severity is Severity.NOTE
    (tmp_path / "x.cu").unlink()
    torch = assert_findings("#include <ATen/ATen.h>\n#include <cuda_fp16.h>\n" + textwrap.dedent(body), "cuda",
                            "N001", tmp_path=tmp_path, select=("N001",))
    assert torch.findings[0].severity is Severity.WARNING


def test_half2_members_are_one_finding_per_statement_with_one_rewrite(tmp_path: Path) -> None:
    """Every `__half2` member a statement reads or writes is one root cause: one finding at
    the first use, the others related, and one rewrite built from the inner rewrites."""
    from harness import assert_findings, fix_until_stable

    source = """\
        #include <torch/extension.h>
        #include <cuda_fp16.h>
        __device__ __half2 larger_high(__half2 p, __half2 q) {
          __half2 m = p;
          m.y = (p.y < q.y) ? q.y : p.y;
          return m;
        }
        __device__ float spread(__half2 w) {
          return __half2float(w.y) -
                 __half2float(w.x);
        }
        """
    result = assert_findings(source, "cuda", "N001", "N001", tmp_path=tmp_path, select=("N001",))
    store, spread = sorted(result.findings, key=lambda f: f.location.start_line)
    assert (store.location.start_line, store.location.start_column) == (5, 3)
    assert [(r.location.start_line, r.location.start_column) for r in store.related] == [(5, 10), (5, 23), (5, 29)]
    assert [r.message for r in store.related][-1] == ("`p.y` is raw `unsigned short` bits of `__half2` in ROCm 5 "
                                                      "(ROCm 6.0 made the members `__half`).")
    # `p.y < q.y` needs half operators on any ROCm release (a PyTorch extension's build, which
    # the include shows, switches them off): the rule's warning. Reading members alone differs
    # on ROCm 5 only: a note.
    assert (store.severity, spread.severity) == (Severity.WARNING, Severity.NOTE)
    assert [(r.location.start_line, r.location.start_column) for r in spread.related] == [(10, 23)]
    assert spread.fix.is_applicable and len(spread.fix.edits) == 2

    assert fix_until_stable([tmp_path / "x.cu"], tmp_path, ("N001",), unsafe=False) == 2
    fixed = (tmp_path / "x.cu").read_text()
    assert "m = __halves2half2(__low2half(m), (__hlt(__high2half(p), __high2half(q))) ? __high2half(q) : " \
           "__high2half(p));" in fixed
    assert "return __high2float(w) -\n         __low2float(w);" in fixed
    assert fix_until_stable([tmp_path / "x.cu"], tmp_path, ("N001",), unsafe=False) == 0


def test_a_statement_whose_rewrites_do_not_combine_gets_advice(tmp_path: Path) -> None:
    """A rewrite that would drop another use's rewrite (the index inside a member's
    `__half2`), or a target evaluated twice, makes the statement's fix advice."""
    from harness import assert_findings

    result = assert_findings("""\
        #include <cuda_fp16.h>
        __device__ float pick(const __half2* table, __half2 h) {
          return __half2float(table[(int)__half2float(h.x)].y);
        }
        __device__ void keep(__half2* pairs, int i) {
          pairs[i + 1].y = pairs[i].x;
        }
        """, "cuda", "N001", "N001", tmp_path=tmp_path, select=("N001",))
    assert [len(f.related) for f in result.findings] == [1, 1]
    assert not any(f.fix.is_applicable for f in result.findings)


# ---- N010 vector-union-assignment ---------------------------------------------------------

def test_union_assignment_points_at_the_vector_member_and_names_the_spanning_member(tmp_path: Path) -> None:
    from harness import assert_findings

    result = assert_findings("""\
        #include <cuda_runtime.h>
        union Packed {
          int2 pair;
          unsigned long long bits;
        };
        __device__ void step(Packed* p) { Packed old = *p, assumed; assumed = old; }
        """, "cuda", "N010", tmp_path=tmp_path, select=("N010",))
    (finding,) = result.findings
    assert finding.location.start_line == 6
    assert [r.location.start_line for r in finding.related] == [3]
    assert "`assumed.bits = old.bits;`" in finding.fix.title


def test_union_assignment_follows_templates_and_members_of_the_files_classes(tmp_path: Path) -> None:
    from harness import assert_findings

    assert_findings("""\
        #include <cuda_runtime.h>
        template <typename T> struct Slot { union { uint2 halves; T whole; }; int tag; };
        struct Table { Slot<double> rows[4]; };
        __device__ void move_row(Table* t, Slot<double>* s) {
          t->rows[1] = *s;
          Slot<double> kept = t->rows[0];
          kept = t->rows[2];
        }
        """, "cuda", "N010", "N010", tmp_path=tmp_path, select=("N010",))


def test_union_assignment_leaves_the_files_own_vector_struct_and_conflicting_definitions_alone(tmp_path: Path) -> None:
    from harness import assert_findings

    assert_findings("""\
        struct float4 { float x, y, z, w; };  // the file's own type, not HIP's
        union Lanes { float4 v; float f[4]; };
        namespace one { union Cell { int2 v; long long b; }; }
        namespace two { union Cell { int i; }; }
        void copy(Lanes* l, one::Cell* c) {
          Lanes a; a = *l;
          one::Cell b; b = *c;
        }
        """, "cuda", tmp_path=tmp_path, select=("N010",))
