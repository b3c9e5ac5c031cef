"""Makefiles: discovery, the ROCm-path model of `ifeq`/`ifdef`, suppressions, and the Makefile
rules on shapes the fixtures do not cover. The seed-003 link bug (B006) is proven with the
real hipcc, g++ and make where they are installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from harness import assert_findings, fix_until_stable
from portlint import rocm_path
from portlint.config import Config
from portlint.discover import discover, language_of
from portlint.rocm_path import Status
from portlint.source import SourceFile

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


# ---- discovery ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Makefile", "makefile", "GNUmakefile", "build/common.mk", "rules.make"])
def test_makefiles_are_make(name: str) -> None:
    assert language_of(Path(name)) == "make"


@pytest.mark.parametrize("name", ["Makefile.am", "Makefile.in", "makefile.txt", "mk"])
def test_automake_templates_are_not_make(name: str) -> None:
    assert language_of(Path(name)) != "make"


def test_a_tree_scan_finds_makefiles(tmp_path: Path) -> None:
    for rel in ["Makefile", "src/GNUmakefile", "mk/cuda.mk", "docs/Makefile.am"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("all:\n\tnvcc -c k.cu\n")
    candidates, _ = discover([tmp_path], Config(root=tmp_path))
    found = {c.path.relative_to(tmp_path).as_posix(): c.language for c in candidates}
    assert found == {"Makefile": "make", "src/GNUmakefile": "make", "mk/cuda.mk": "make"}


def test_pre_commit_hook_runs_on_makefiles() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    files = re.compile(re.search(r"^\s*files:\s*(.+)$", text, re.M).group(1).strip())
    for path in ["Makefile", "src/makefile", "GNUmakefile", "build/cuda.mk", "rules.make"]:
        assert files.search(path), path
    assert not files.search("Makefile.am")


# ---- the ROCm-path model of Makefile conditionals ----------------------------------------
def statuses(src: str) -> dict[str, Status]:
    """The status of each line assigning `V_<name>`."""
    src = textwrap.dedent(src)
    source = SourceFile("Makefile", "make", src.encode())
    model = rocm_path.build(source)
    out = {}
    offset = 0
    for line in src.splitlines(keepends=True):
        m = re.search(r"V_(\w+)", line)
        if m and "=" in line:
            out[m.group(1)] = model.status(offset + m.start())
        offset += len(line.encode())
    return out


@pytest.mark.parametrize(
    "src, expected",
    [
        ("ifeq ($(USE_ROCM),1)\nV_a = 1\nelse\nV_b = 1\nendif\n", {"a": Status.PORT, "b": Status.DEAD}),
        ("ifneq ($(USE_ROCM),1)\nV_a = 1\nendif\n", {"a": Status.DEAD}),
        ('ifeq "$(USE_ROCM)" "0"\nV_a = 1\nelse\nV_b = 1\nendif\n', {"a": Status.DEAD, "b": Status.PORT}),
        ("ifeq ($(USE_HIP),)\nV_a = 1\nelse\nV_b = 1\nendif\n", {"a": Status.DEAD, "b": Status.PORT}),
        ("ifdef HIP_PATH\nV_a = 1\nelse\nV_b = 1\nendif\n", {"a": Status.PORT, "b": Status.DEAD}),
        ("ifndef ROCM_PATH\nV_a = 1\nendif\n", {"a": Status.DEAD}),
        # Probes for hipcc or a ROCm install.
        ("ifeq (,$(shell which hipcc))\nV_a = 1\nelse\nV_b = 1\nendif\n", {"a": Status.DEAD, "b": Status.PORT}),
        ("ifneq ($(wildcard /opt/rocm),)\nV_a = 1\nendif\n", {"a": Status.PORT}),
        # A platform name compared with a switch; HIP on the CUDA toolchain is not ROCm.
        ("ifeq ($(GPU_BACKEND),hip)\nV_a = 1\nelse ifeq ($(GPU_BACKEND),cuda)\nV_b = 1\nendif\n",
         {"a": Status.PORT, "b": Status.DEAD}),
        ("ifeq ($(HIP_PLATFORM),nvidia)\nV_a = 1\nelse\nV_b = 1\nendif\n", {"a": Status.DEAD, "b": Status.PORT}),
        # A CUDA arm before a ROCm arm of the same chain is its CUDA alternative.
        ("ifeq ($(USE_CUDA),1)\nV_a = 1\nelse ifneq ($(findstring hip,$(CC)),)\nV_b = 1\nelse\nV_c = 1\nendif\n",
         {"a": Status.DEAD, "b": Status.PORT, "c": Status.DEAD}),
        # A variable the file also compares with a ROCm value picks the platform: its CUDA
        # value is the CUDA build's, in a chain of its own too.
        ("ifeq ($(BACKEND),hip)\nV_a = 1\nendif\nifeq ($(BACKEND),cuda)\nV_b = 1\nendif\n",
         {"a": Status.PORT, "b": Status.DEAD}),
        ("ifeq ($(BACKEND),cuda)\nV_a = 1\nendif\n", {"a": Status.LIVE}),
        # Undecidable: a CUDA switch alone, other switches, negated platform words.
        ("ifeq ($(USE_CUDA),1)\nV_a = 1\nelse\nV_b = 1\nendif\n", {"a": Status.LIVE, "b": Status.LIVE}),
        ("ifeq ($(DEBUG),1)\nV_a = 1\nendif\n", {"a": Status.LIVE}),
        ("ifdef NO_HIP\nV_a = 1\nendif\n", {"a": Status.LIVE}),
        # Nesting: the inner arm of a dead arm is dead.
        ("ifeq ($(USE_ROCM),1)\nelse\nifeq ($(DEBUG),1)\nV_a = 1\nendif\nendif\n", {"a": Status.DEAD}),
        # Tab-indented directives with no rule before them are make lines (llama.cpp's style).
        ("ifdef LLAMA_HIPBLAS\n\tifeq ($(USE_ROCM),1)\n\t\tV_a = 1\n\telse\n\t\tV_b = 1\n\tendif\nendif\n",
         {"a": Status.PORT, "b": Status.DEAD}),
    ],
)
def test_make_conditionals(src: str, expected: dict) -> None:
    assert statuses(src) == expected


# A chain whose conditions name no platform (`ifdef PROJCONFIG`), decided by what its arms
# build with: `GPUCXX` is the compiler of the `%.o: %.cu` recipe below each case.
COMPILE_RULE = "%.o: %.cu\n\t$(GPUCXX) $(GPUFLAGS) -c $< -o $@\n"


@pytest.mark.parametrize(
    "src, expected",
    [
        # The arm that sets the recipe's compiler to hipcc is the ROCm build's; the nvcc one the
        # CUDA build's, and every chain of the file that makes the same test follows it.
        ("ifdef PROJCONFIG\nV_a = -DPROJ_GPU_AMD\nGPUCXX ?= hipcc\nelse\nGPUCXX ?= nvcc\nV_b = -arch sm_70\nendif\n"
         "ifdef PROJCONFIG\nV_c = -lhipfft\nelse\nV_d = -lcufft\nendif\n"
         "ifndef PROJCONFIG\nV_e = -lcurand\nendif\n",
         {"a": Status.PORT, "b": Status.DEAD, "c": Status.PORT, "d": Status.DEAD, "e": Status.DEAD}),
        # The hipcc arm may come last, and the compiler may be set through another variable.
        ("GPUCXX = $(DEVICE_CC)\nifeq ($(TOOLCHAIN),nv)\nDEVICE_CC = nvcc\nV_a = 1\n"
         "else ifeq ($(TOOLCHAIN),llvm)\nDEVICE_CC = clang++\nV_b = 1\nelse\nDEVICE_CC = hipcc\nV_c = 1\nendif\n",
         {"a": Status.DEAD, "b": Status.DEAD, "c": Status.PORT}),
        # The runtime each arm links says the same where no compile rule does.
        ("ifdef PROJCONFIG\nV_a = -lamdhip64\nelse\nV_b = -L$(CUDA_HOME)/lib64 -lcudart\nendif\n",
         {"a": Status.PORT, "b": Status.DEAD}),
        # A test whose variable the file sets again after it may answer otherwise there.
        ("ifdef PROJCONFIG\nGPUCXX = hipcc\nelse\nGPUCXX = nvcc\nendif\nPROJCONFIG :=\n"
         "ifdef PROJCONFIG\nV_a = 1\nendif\n", {"a": Status.LIVE}),
        # Undecided: no nvcc arm beside the hipcc one, two hipcc arms, no hipcc arm at all.
        ("ifdef PROJCONFIG\nGPUCXX = hipcc\nV_a = 1\nelse\nGPUCXX = g++\nV_b = 1\nendif\n",
         {"a": Status.LIVE, "b": Status.LIVE}),
        ("ifdef A\nGPUCXX = hipcc\nV_a = 1\nelse ifdef B\nGPUCXX = hipcc\nV_b = 1\n"
         "else\nGPUCXX = nvcc\nV_c = 1\nendif\n",
         {"a": Status.LIVE, "b": Status.LIVE, "c": Status.LIVE}),
        ("ifdef PROJCONFIG\nGPUCXX = nvcc -G\nV_a = 1\nelse\nGPUCXX = nvcc\nV_b = -lcudart\nendif\n",
         {"a": Status.LIVE, "b": Status.LIVE}),
    ],
)
def test_make_chain_decided_by_the_compiler_its_arms_set(src: str, expected: dict) -> None:
    assert statuses(src + COMPILE_RULE) == expected


@pytest.mark.parametrize("rule, expected", [
    # A rule that builds a program from its sources (no pattern) runs the arms' compiler too.
    ("demo: demo.cu\n\t$(GPUCXX) $(GPUFLAGS) -o $@ $<\n", {"a": Status.PORT, "b": Status.DEAD}),
    ("SRC = demo.cu util.cu\ndemo: $(SRC)\n\t$(GPUCXX) -o $@ $^\n", {"a": Status.PORT, "b": Status.DEAD}),
    # A rule of no source (a link of objects) says nothing of the compiler.
    ("demo: demo.o\n\t$(GPUCXX) -o $@ $^\n", {"a": Status.LIVE, "b": Status.LIVE}),
])
def test_make_chain_decided_by_the_compiler_of_a_rule_that_names_its_sources(rule: str, expected: dict) -> None:
    chain = ("ifeq ($(shell which $(CUDA_HOME)/bin/nvcc 2>/dev/null),)\nGPUCXX := hipcc\nV_a = 1\n"
             "else\nGPUCXX := $(CUDA_HOME)/bin/nvcc\nV_b = -arch=native\nendif\n")
    assert statuses(chain + rule) == expected


# ---- suppressions --------------------------------------------------------------------------
NVCC_ONLY = "NVCC := nvcc{comment}\n\nk.o: k.cu\n\t$(NVCC) -c $< -o $@\n"


@pytest.mark.parametrize(
    "src, codes",
    [
        (NVCC_ONLY.format(comment=""), ("B005",)),
        (NVCC_ONLY.format(comment="  # portlint: ignore[B005]"), ()),
        (NVCC_ONLY.format(comment="  # portlint: ignore[nvcc-only-makefile]"), ()),
        ("# portlint: ignore[B005]\n" + NVCC_ONLY.format(comment=""), ()),
        (NVCC_ONLY.format(comment="") + "# portlint: ignore-file[B]\n", ()),
        ("all:\n\tnvcc -c k.cu  # portlint: ignore[B005]\n", ()),
        ("all:\n\tnvcc -c k.cu  # portlint: ignore[L001]\n", ("B005",)),
    ],
)
def test_make_comment_forms(src: str, codes: tuple[str, ...], tmp_path: Path) -> None:
    assert_findings(src, "make", *codes, tmp_path=tmp_path, select=("B005",))


# ---- rules on shapes beyond the fixtures ---------------------------------------------------
def test_cuda_samples_exec_prefix_still_finds_the_compiler(tmp_path: Path) -> None:
    # CUDA samples run `$(EXEC) $(NVCC) ...`; EXEC is empty unless `dryrun=1`.
    assert_findings("""\
        ifeq ($(dryrun),1)
            EXEC ?= @echo "[@]"
        endif
        HIPCC ?= hipcc
        k.o: k.hip
        \t$(EXEC) $(HIPCC) -O3 -c $< -o $@
        """, "make", "R003", tmp_path=tmp_path, select=("R003",))


def test_offload_arch_from_the_environment_hipcc_reads(tmp_path: Path) -> None:
    assert_findings("""\
        export HCC_AMDGPU_TARGET = gfx90a
        k.o: k.hip
        \thipcc -c $< -o $@
        """, "make", tmp_path=tmp_path, select=("R003",))


def test_offload_arch_in_an_included_file_is_not_guessed(tmp_path: Path) -> None:
    assert_findings("""\
        include config.mk
        k.o: k.hip
        \thipcc $(GPU_FLAGS) -c $< -o $@
        """, "make", tmp_path=tmp_path, select=("R003",))


def test_link_flags_from_a_shell_probe_count_as_unknown(tmp_path: Path) -> None:
    assert_findings("""\
        k.o: k.hip
        \thipcc --offload-arch=gfx90a -c $< -o $@
        app: main.o k.o
        \tg++ -o $@ $^ $(shell pkg-config --libs hip)
        lib.so: k.o
        \tg++ -shared -o $@ $^
        """, "make", "B006", tmp_path=tmp_path, select=("B006",))


def test_objects_named_by_substitution_reach_the_link(tmp_path: Path) -> None:
    assert_findings("""\
        SRCS := main.cpp kernels.hip
        OBJS := $(patsubst %.hip,%.o,$(SRCS:.cpp=.o))
        kernels.o: kernels.hip
        \thipcc --offload-arch=gfx90a -c $< -o $@
        app: $(OBJS)
        \t$(CXX) -o $@ $^
        """, "make", "B006", tmp_path=tmp_path, select=("B006",))


def test_nvcc_flags_stay_with_nvcc_in_a_compiler_variable(tmp_path: Path) -> None:
    # `-ccbin` belongs to the nvcc value of GPUCC; only the hipcc value's words reach hipcc.
    assert_findings("""\
        ifeq ($(DEBUG),1)
          GPUCC = nvcc -ccbin g++
        else
          GPUCC = hipcc --offload-arch=gfx90a -Xptxas -v
        endif
        k.o: k.cu
        \t$(GPUCC) -c $< -o $@
        """, "make", "B001", tmp_path=tmp_path, select=("B001",))


def test_tab_indented_assignments_outside_rules_are_read(tmp_path: Path) -> None:
    # GNU make reads these as variable assignments (no rule is open); the runtime is linked.
    assert_findings("""\
        ifdef LLAMA_HIPBLAS
        \tROCM_PATH ?= /opt/rocm
        \tHIPCC ?= $(ROCM_PATH)/bin/hipcc
        \tMK_LDFLAGS += -L$(ROCM_PATH)/lib -lamdhip64
        endif
        k.o: k.cu
        \t$(HIPCC) --offload-arch=gfx90a -c $< -o $@
        app: main.o k.o
        \t$(CXX) -o $@ $^ $(MK_LDFLAGS)
        """, "make", tmp_path=tmp_path, select=("B004", "B005", "B006", "L001", "R003"))


def test_hipcc_in_any_branch_is_a_rocm_path(tmp_path: Path) -> None:
    assert_findings("""\
        ifeq ($(PLATFORM),amd)
          CXX = $(ROCM_PATH)/bin/amdclang++ -x hip
        else
          CXX = nvcc
        endif
        """, "make", tmp_path=tmp_path, select=("B005",))


# ---- seed 003: `hipcc -c` objects linked by g++ without the HIP runtime -------------------
KERNEL = """\
#include <hip/hip_runtime.h>
__global__ void vector_add(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
void launch_vector_add(float* c, const float* a, const float* b, int n) {
  hipLaunchKernelGGL(vector_add, dim3((n + 255) / 256), dim3(256), 0, 0, c, a, b, n);
}
"""
MAIN = """\
void launch_vector_add(float* c, const float* a, const float* b, int n);
int main() { launch_vector_add(nullptr, nullptr, nullptr, 0); return 0; }
"""


def _tools() -> dict[str, str]:
    tools = {name: shutil.which(name) for name in ("hipcc", "make", "g++")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} missing in CI: .ci/run must install hipcc")
        pytest.skip(f"not installed: {missing}")
    return tools


def _make(folder: Path, tools: dict[str, str]) -> subprocess.CompletedProcess:
    hip_root = str(Path(tools["hipcc"]).resolve().parent.parent)  # /usr for Debian's hipcc
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run([tools["make"], "vector_add_app", f"HIP_PATH={hip_root}"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def test_seed_003_link_fails_as_reported_and_the_fix_links(tmp_path: Path) -> None:
    tools = _tools()
    project = tmp_path / "bad_make"
    shutil.copytree(FIXTURES / "B006" / "bad_make", project)
    (project / "vector_add.hip").write_text(KERNEL)
    (project / "main.cpp").write_text(MAIN)

    before = _make(project, tools)
    assert before.returncode != 0
    assert re.search(r"undefined reference to `(hipLaunchKernel|__hipRegisterFatBinary|__hipPushCallConfiguration)",
                     before.stderr), before.stderr[-2000:]

    assert fix_until_stable([project], tmp_path, ("B006",)) > 0
    after = _make(project, tools)
    assert after.returncode == 0, after.stdout[-2000:] + after.stderr[-2000:]
    assert (project / "vector_add_app").exists()


def test_nvcc_fallback_fix_drops_a_continuation_into_nothing(tmp_path):
    """`NVCC ?= nvcc\\` as the last line: the copy in the `else` arm must not keep the
    backslash, or it would swallow the `endif` after it."""
    from harness import fix_until_stable

    from portlint.source import count_syntax_errors

    path = tmp_path / "Makefile"
    path.write_bytes(b"NVCC ?= nvcc\\\n")
    assert fix_until_stable([path], tmp_path, ("B005",)) == 1
    fixed = path.read_bytes()
    assert b"else\nNVCC ?= nvcc\nendif\n" in fixed
    assert count_syntax_errors("make", fixed) == 0


def test_libraries_one_assignment_links_are_one_finding(tmp_path) -> None:
    result = assert_findings("""\
        LIBS = -L$(ROCM_PATH)/lib -lcudart -lcublas -lcusparse
        EXTRA = -lcurand
        """, "make", "L001", "L001", tmp_path=tmp_path, select=("L001",))
    first, second = sorted(result.findings, key=lambda f: f.location.start_line)
    assert "`-lcudart`, `-lcublas`, `-lcusparse` link" in first.message
    assert [r.location.start_column for r in first.related] == [36, 45]
    assert not second.related
