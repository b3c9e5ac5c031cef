"""Sizes read from constants of included project headers (K001, K002, M001).

The per-file pass leaves names a file does not define open; the project pass reads them
from the headers the file includes (beside it, or anywhere under the scan root).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from portlint import engine
from portlint.config import Config

KERNEL = "__global__ void k(float* out) { out[threadIdx.x] = 0.f; }\n"


def _project(root: Path, **files: str) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _scan(root: Path, *codes: str, jobs: int = 1) -> engine.ScanResult:
    return engine.scan([root], Config(root=root, select=codes), jobs=jobs)


def test_block_size_from_an_included_header_points_at_its_definition(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "launch_config.h": "#pragma once\nconstexpr int kBlock = 2048;\n",
        "ops.cu": '#include "launch_config.h"\n' + KERNEL + "void run(float* out, int g) { k<<<g, kBlock>>>(out); }\n",
    })
    (finding,) = _scan(root, "K001").findings
    assert Path(finding.path).name == "ops.cu" and finding.location.start_line == 3
    assert "2048 threads" in finding.message
    (related,) = finding.related
    assert Path(related.location.path).name == "launch_config.h" and related.location.start_line == 2
    assert "`constexpr int kBlock = 2048;`" in related.message


def test_constants_chain_through_nested_headers(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "include/sizes.h": "#pragma once\n#define ROW_THREADS 512\n",
        "include/config.h": '#pragma once\n#include "sizes.h"\nconstexpr int kBlock = ROW_THREADS * 4;\n',
        "src/ops.cu": '#include "config.h"\n' + KERNEL + "void run(float* out) { k<<<1, kBlock>>>(out); }\n",
    })
    (finding,) = _scan(root, "K001").findings
    assert "2048 threads" in finding.message
    assert {Path(r.location.path).name for r in finding.related} == {"config.h", "sizes.h"}


def test_a_constant_the_file_defines_itself_wins(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "config.h": "#pragma once\nconstexpr int kBlock = 2048;\n",
        "ops.cu": '#include "config.h"\n' + KERNEL + "constexpr int kBlock = 512;\n"
                  "void run(float* out) { k<<<1, kBlock>>>(out); }\n",
    })
    assert _scan(root, "K001").findings == []


def test_same_header_name_with_different_values_is_unknown(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "a/config.h": "#pragma once\nconstexpr int kBlock = 2048;\n",
        "b/config.h": "#pragma once\nconstexpr int kBlock = 512;\n",
        "src/ops.cu": '#include "config.h"\n' + KERNEL + "void run(float* out) { k<<<1, kBlock>>>(out); }\n",
    })
    assert _scan(root, "K001").findings == []


def test_a_local_launch_over_the_limit_is_reported_once(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "config.h": "#pragma once\nconstexpr int kRows = 4;\n",
        "ops.cu": '#include "config.h"\n' + KERNEL + "void run(float* out) { k<<<1, dim3(2048, kRows)>>>(out); }\n",
    })
    (finding,) = _scan(root, "K001").findings
    assert "at least 2048 threads" in finding.message


def test_worker_processes_give_the_same_findings(tmp_path: Path) -> None:
    files = {"config.h": "#pragma once\nconstexpr int kBlock = 2048;\n#define TILE 128\n"}
    for i in range(60):  # enough files for the worker pool
        files[f"ops{i}.cu"] = ('#include "config.h"\n' + KERNEL +
                               "__global__ void t(float* o) { __shared__ float s[TILE][TILE + 1]; o[0] = s[1][1]; }\n"
                               "void run(float* out) { k<<<1, kBlock>>>(out); }\n")
    root = _project(tmp_path, **files)
    serial = _scan(root, "K001", "M001")
    parallel = _scan(root, "K001", "M001", jobs=2)
    assert len(serial.findings) == 120 and not parallel.problems
    assert [(f.path, f.location.start_line, f.message) for f in parallel.findings] == [
        (f.path, f.location.start_line, f.message) for f in serial.findings]


def test_a_class_member_hides_the_header_constant(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "config.h": "#pragma once\nconstexpr int kThreads = 2048;\n",
        "ops.cu": '#include "config.h"\n' + KERNEL + """
            struct Launcher {
              static constexpr int kThreads = 256;
              void run(float* out) { k<<<1, kThreads>>>(out); }
              void run_later(float* out);
            };
            void Launcher::run_later(float* out) { k<<<1, kThreads>>>(out); }
        """,
    })
    assert _scan(root, "K001").findings == []


def test_an_angle_bracket_include_of_a_project_header_is_followed(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "include/mylib/config.h": "#pragma once\n#define BLOCK 2048\n",
        "src/ops.cu": "#include <mylib/config.h>\n#include <hip/hip_runtime.h>\n" + KERNEL +
                      "void run(float* out) { k<<<1, BLOCK>>>(out); }\n",
    })
    (finding,) = _scan(root, "K001").findings
    assert Path(finding.related[0].location.path).name == "config.h"
