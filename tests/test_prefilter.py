"""The token pre-filter: files without any enabled rule's trigger tokens are not parsed, and
skipping them changes no finding (every fixture, scanned with and without the pre-filter)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from portlint import engine, source
from portlint.config import Config
from portlint.finding import Severity
from portlint.registry import REGISTRY
from portlint.triggers import ALWAYS, Probe, all_of, any_of, needs, needs_of, nocase, trigger

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODE = re.compile(r"^[A-Z]\d{3}$")

PLAIN = """#include <string>
#include <vector>

// Splits a line at commas.
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> parts(1);
  for (char c : line) {
    if (c == ',') parts.emplace_back(); else parts.back().push_back(c);
  }
  return parts;
}
"""


def scan_counting(paths: list[Path], root: Path, prefilter: bool = True, **config) -> tuple[engine.ScanResult, int]:
    before = source.files_parsed
    saved = engine.PREFILTER
    engine.PREFILTER = prefilter
    try:
        # timeout=0: the analysis runs in this process, where `files_parsed` counts it.
        result = engine.scan(paths, Config(root=root, timeout=0, **config), jobs=1)
    finally:
        engine.PREFILTER = saved
    return result, source.files_parsed - before


def outcome(result: engine.ScanResult) -> tuple:
    return result.findings, result.suppressed


def test_a_check_whose_build_precondition_fails_does_not_parse_the_file(tmp_path: Path) -> None:
    """R007 needs a build that compiles the file as written, or none yet: where the
    project's ROCm build leaves the file out, a file whose only trigger is a toolkit include
    is not parsed for it; where the ROCm build compiles it, it is parsed and reported."""
    (tmp_path / "split.cpp").write_text("#include <cuda_runtime.h>\n" + PLAIN)
    (tmp_path / "other.cpp").write_text(PLAIN)
    lists = tmp_path / "CMakeLists.txt"
    head = "cmake_minimum_required(VERSION 3.21)\nproject(s LANGUAGES CXX HIP)\n"
    lists.write_text(head + "set_source_files_properties(other.cpp PROPERTIES LANGUAGE HIP)\nadd_library(s other.cpp)\n")
    _, build_files_parsed = scan_counting([tmp_path / "other.cpp"], tmp_path, select=("R007",))  # CMakeLists.txt
    result, parsed = scan_counting([tmp_path / "split.cpp"], tmp_path, select=("R007",))
    assert parsed == build_files_parsed and result.findings == []
    lists.write_text(head + "set_source_files_properties(split.cpp PROPERTIES LANGUAGE HIP)\nadd_library(s split.cpp)\n")
    result, parsed = scan_counting([tmp_path / "split.cpp"], tmp_path, select=("R007",))
    assert parsed == build_files_parsed + 1
    assert [(f.code, f.severity) for f in result.findings] == [("R007", Severity.ERROR)]


def test_a_file_without_trigger_tokens_is_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "split.cpp").write_text(PLAIN)
    result, parsed = scan_counting([tmp_path], tmp_path)
    assert parsed == 0 and result.findings == [] and not result.problems
    [state] = result.files.values()
    assert state.ranges is None and state.facts.deferred  # nothing was built for it
    _, parsed = scan_counting([tmp_path], tmp_path, prefilter=False)
    assert parsed == 1


def test_a_trigger_token_makes_the_file_parsed_and_only_its_rules_run(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("void f(unsigned* m, int v) { *m = __shfl_down_sync(0xffffffff, v, 1); }\n")
    result, parsed = scan_counting([tmp_path], tmp_path)
    assert parsed == 1 and [f.code for f in result.findings] == ["W002"]


def test_a_rule_that_is_not_selected_does_not_make_a_file_parsed(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("__global__ void k(float* p) { atomicAdd(p, 1.0f); }\n")
    _, parsed = scan_counting([tmp_path], tmp_path, select=("W002",))
    assert parsed == 0
    result, parsed = scan_counting([tmp_path], tmp_path, select=("N002",))
    assert parsed == 1 and [f.code for f in result.findings] == ["N002"]


def test_an_unparsed_file_is_parsed_when_a_project_rule_needs_its_facts(tmp_path: Path) -> None:
    # host.cpp has no trigger token; P005 needs its definition of `k`, found at launch in a.cu.
    (tmp_path / "host.cpp").write_text("void k(float* p) { p[0] = 1; }\n"
                                       "// portlint: ignore[P005]\nvoid quiet(float* p) { p[0] = 2; }\n"
                                       "#ifdef __CUDACC__\nvoid gone(float* p) { p[0] = 3; }\n#endif\n")
    (tmp_path / "a.cu").write_text("void k(float*);\nvoid quiet(float*);\nvoid gone(float*);\n"
                                   "void run(float* p) { k<<<1, 64>>>(p); quiet<<<1, 64>>>(p); gone<<<1, 64>>>(p); }\n")
    with_prefilter, _ = scan_counting([tmp_path], tmp_path, select=("P005",))
    without, _ = scan_counting([tmp_path], tmp_path, prefilter=False, select=("P005",))
    assert outcome(with_prefilter) == outcome(without)
    assert [(Path(f.path).name, f.matched) for f in with_prefilter.findings] == [("host.cpp", "k")]
    assert with_prefilter.suppressed == 1  # the suppression comment of the unparsed file was read


def test_triggers_combine() -> None:
    probe = Probe(b"__device__ void f() { assert(x); }  // Lane")
    assert all_of(b"assert", any_of(b"__device__", b"__global__")).holds(probe)
    assert not all_of(b"assert", b"__global__").holds(probe)
    assert nocase(b"lane").holds(probe) and not nocase(b"lane").holds(Probe(b"plan"))
    # A token declared after the file was scanned is searched for directly.
    assert all_of(b"void f", nocase(b"// lane")).holds(probe) and not trigger(b"void g").holds(probe)
    assert any_of(re.compile(rb"ass+ert")).holds(probe)

    @needs(b"<<<", b"hipLaunchKernelGGL")
    def check(source):
        return []

    assert needs_of(check).holds(Probe(b"k<<<1, 2>>>()")) and not needs_of(check).holds(Probe(b"<<"))
    assert needs_of(lambda s: []) is ALWAYS
    with pytest.raises(ValueError):
        nocase(b"Lane")
    with pytest.raises(ValueError):
        needs(b"")


def test_every_c_family_rule_declares_its_trigger_tokens() -> None:
    undeclared = [code for code, entry in REGISTRY.items() if "cuda" in entry and needs_of(entry["cuda"]) is ALWAYS]
    assert undeclared == []


# ---- every fixture, both ways --------------------------------------------------------
def _cases():
    for folder in sorted(FIXTURES.iterdir()):
        if CODE.match(folder.name):
            for case in sorted(folder.iterdir()):
                if case.name.startswith(("bad", "ok")) and ".fixed" not in case.name:
                    yield pytest.param(folder.name, case, id=f"{folder.name}/{case.name}")


@pytest.mark.parametrize("code, case", list(_cases()))
def test_fixture_findings_are_the_same_with_and_without_the_prefilter(code: str, case: Path, tmp_path: Path) -> None:
    target = tmp_path / case.name
    if case.is_dir():
        shutil.copytree(case, target)
    else:
        shutil.copy2(case, target)
    for select in ((code,), ("ALL",)):
        fast, _ = scan_counting([target], tmp_path, select=select)
        full, _ = scan_counting([target], tmp_path, prefilter=False, select=select)
        assert outcome(fast) == outcome(full), select


@pytest.mark.parametrize("tree", ["projects", "demo", "deep", "."])
def test_fixture_trees_give_the_same_findings_with_and_without_the_prefilter(tree: str, tmp_path: Path) -> None:
    target = tmp_path / "tree"
    shutil.copytree(FIXTURES / tree, target)
    fast, parsed_fast = scan_counting([target], target)
    full, parsed_full = scan_counting([target], target, prefilter=False)
    assert outcome(fast) == outcome(full)
    assert parsed_fast <= parsed_full


def test_facts_a_project_rule_collected_in_its_worker_are_kept_for_the_next_scan(tmp_path: Path) -> None:
    """The project rules run in a forked worker (a budget): what they parsed of an unparsed
    file comes back with their findings, so a warm scan finds it collected, not parsed again."""
    (tmp_path / "host.cpp").write_text("void k(float* p) { p[0] = 1; }\n")
    (tmp_path / "a.cu").write_text("void k(float*);\nvoid run(float* p) { k<<<1, 64>>>(p); }\n")
    for path in tmp_path.iterdir():  # written long ago: the snapshot of the scan trusts their stat signatures
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    first = engine.scan([tmp_path], Config(root=tmp_path, timeout=10), jobs=1, cache_dir=cache)
    assert "P005" in [f.code for f in first.findings]  # needs host.cpp's definition of `k`
    before = source.files_parsed
    again = engine.scan([tmp_path], Config(root=tmp_path, timeout=0), jobs=1, cache_dir=cache)
    assert again.findings == first.findings
    assert source.files_parsed == before  # host.cpp's facts came from the first scan
