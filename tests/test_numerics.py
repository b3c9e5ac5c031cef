"""N001's claim, checked with the compiler: code that reads `__half2` members or uses
`__half` operators does not build the way PyTorch builds ROCm extensions; the rewrite does."""

from __future__ import annotations

from pathlib import Path

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
