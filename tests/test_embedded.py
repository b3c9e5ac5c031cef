"""Kernels written as Python strings: found where a loader compiles them, placed in the Python
file at the exact column, fixed inside the string, and left alone where they are only text."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.harness import fix_until_stable, scan

KERNEL = '''\
import cupy as cp

SRC = r"""
extern "C" __global__ void first(const float* x, float* out) {
  *out = __shfl_sync(0xffffffff, x[threadIdx.x], 0);
}
"""

first = cp.RawKernel(SRC, "first")
'''


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_finding_in_a_kernel_string_points_into_the_python_file(tmp_path: Path) -> None:
    path = _write(tmp_path, KERNEL)
    result = scan([path], tmp_path, select=("W002",))
    [found] = result.findings
    line = KERNEL.splitlines()[found.location.start_line - 1]
    assert line.strip().startswith("*out = __shfl_sync(")
    assert found.location.path.endswith("kernels.py")
    assert line[found.location.start_column - 1:].startswith("0xffffffff")


def test_fixes_edit_the_string_and_nothing_else(tmp_path: Path) -> None:
    path = _write(tmp_path, KERNEL)
    assert fix_until_stable([path], tmp_path, ("W002",)) == 1
    before, after = KERNEL.splitlines(), path.read_text().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [4] and "0xffffffff" not in after[4]
    assert scan([path], tmp_path, select=("W002",)).findings == []


def test_an_escaped_string_is_reported_at_its_first_line_without_edits(tmp_path: Path) -> None:
    path = _write(tmp_path, 'import cupy\nk = cupy.RawKernel("__global__ void k(int* m) {\\n'
                            '  *m = __ballot_sync(0xffffffff, 1);\\n}", "k")\n')
    result = scan([path], tmp_path, select=("W002",))
    assert [(f.location.start_line, f.fix.is_applicable) for f in result.findings] == [(2, False)]


def test_strings_no_loader_compiles_are_only_text(tmp_path: Path) -> None:
    path = _write(tmp_path, 'DOC = "__shfl_sync(0xffffffff, v, 0)"\nprint(DOC)\n')
    assert scan([path], tmp_path, select=("W002",)).findings == []


def test_a_kernel_string_of_the_class_or_function_body_around_the_loader_is_scanned(tmp_path: Path) -> None:
    """`_src = r'''...'''` beside `_mod = RawModule(code=_src)` in a class body, or in the
    function that loads it; a class attribute a method names bare is no such string (Python
    would not find it there either)."""
    body = 'r"""\nextern "C" __global__ void first(const float* x, float* out) {\n' \
           '  *out = __shfl_sync(0xffffffff, x[threadIdx.x], 0);\n}\n"""'
    path = _write(tmp_path, f"import cupy as cp\n\n\nclass Ops:\n    _src = {body}\n"
                            "    _mod = cp.RawModule(code=_src)\n\n\n"
                            f"def load():\n    src = {body}\n    return cp.RawKernel(src, 'first')\n\n\n"
                            "class Hidden:\n    _src = 'no kernel here'\n\n"
                            "    def load(self):\n        return cp.RawModule(code=_src)\n")
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [lines[f.location.start_line - 1].strip() for f in scan([path], tmp_path, select=("W002",)).findings]
    assert found == ["*out = __shfl_sync(0xffffffff, x[threadIdx.x], 0);"] * 2


def test_a_run_time_compilers_string_is_read_as_its_device_pass(tmp_path: Path) -> None:
    """NVRTC and hiprtc compile device code only: under hiprtc `__HIP_DEVICE_COMPILE__` is
    always defined, so the `#else` a kernel string keeps for NVRTC is no ROCm code."""
    path = _write(tmp_path, '''\
        import cupy as cp

        SRC = r"""
        #ifdef __HIP_DEVICE_COMPILE__
        #define FULL_MASK __activemask()
        #else
        #define FULL_MASK 0xffffffffu
        #endif
        extern "C" __global__ void first(int* x) { x[threadIdx.x] = __shfl_down_sync(FULL_MASK, x[threadIdx.x], 1); }
        """

        first = cp.RawKernel(SRC, "first")
        ''')
    assert [f.code for f in scan([path], tmp_path, select=("W002",)).findings] == []
    unguarded = path.read_text(encoding="utf-8").replace("#ifdef __HIP_DEVICE_COMPILE__", "#ifdef NOT_SET_HERE")
    path.write_text(unguarded, encoding="utf-8")
    assert [f.code for f in scan([path], tmp_path, select=("W002",)).findings] == ["W002"]
