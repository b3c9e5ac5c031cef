"""Files named on the command line (what a pre-commit hook passes) give the findings they give
in a full scan: the project's other files are read as context for the cross-file rules, and
never reported."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from harness import scan

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _by_file(result) -> dict[str, set[tuple[int, str]]]:
    found: dict[str, set[tuple[int, str]]] = {}
    for f in result.findings:
        found.setdefault(Path(f.path).resolve().as_posix(), set()).add((f.location.start_line, f.code))
    return found


# Every fixture project: the build files and headers that decide a file's findings may be
# anywhere in it (a backend's own list file, an unreached ROCm-only one, a shim header).
PROJECTS = ["demo", *sorted(f"projects/{p.name}" for p in (FIXTURES / "projects").iterdir() if p.is_dir())]


@pytest.mark.parametrize("project", PROJECTS)
def test_each_file_alone_gives_its_findings_of_a_full_scan(project: str, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(FIXTURES / project, root)
    (root / ".git").mkdir()
    full = _by_file(scan([root], root))
    assert full or project.startswith("projects/ported"), "a project with hazards gives findings"  # a port gives none
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        # In a worker, as users run it: the file's macro environment is settled before the
        # context is read (in process, reading the context first could lend it includers).
        alone = _by_file(scan([path], root, timeout=30))
        key = path.resolve().as_posix()
        assert alone.get(key, set()) == full.get(key, set()), path.relative_to(root)
        assert set(alone) <= {key}, "context files are read, not reported"


def _detail(result, path: Path) -> set[tuple]:
    """The findings in `path`, with what a user reads of each: message and related places."""
    key = path.resolve().as_posix()
    return {(f.location.start_line, f.code, f.message,
             tuple((Path(r.location.path).name, r.location.start_line, r.message) for r in f.related))
            for f in result.findings if Path(f.path).resolve().as_posix() == key}


# Kernels whose facts are spread over files: a qualifier macro from a header, an overload
# that is the kernel, a launch of a function that is not one.
CROSS_FILE_KERNELS = {
    "qual.h": "#pragma once\n#define KERNEL __global__\n#define HOST_ONLY\n",
    "impl.cu": '#include "qual.h"\nKERNEL void scale(float* x) { x[0] = 1; }\n'
               "void twice(float* x) { x[0] = 2; }\nHOST_ONLY void plain(float* x) { x[0] = 3; }\n",
    "overload.cu": "__global__ void twice(int* x) { x[0] = 2; }\nvoid go(int* x) { twice<<<1, 1>>>(x); }\n",
    "ops.cu": '#include "qual.h"\nvoid scale(float*); void twice(float*); void plain(float*);\n'
              "void run(float* x) { scale<<<1, 1>>>(x); twice<<<1, 1>>>(x); plain<<<1, 1>>>(x); }\n",
}


@pytest.mark.parametrize("project", ["demo", "projects/never_ported", "projects/ported_backends", "cross-file kernels"])
def test_each_file_alone_from_a_kept_context_gives_its_findings_of_a_full_scan(
        project: str, tmp_path: Path, monkeypatch) -> None:
    # The second named-file run takes the context the first kept; its facts are packed and
    # unpickled only for the names the project rules ask about (`project.PackedFacts`).
    from portlint import engine, project as project_index
    from portlint.config import Config

    root = tmp_path / "p"
    if project != "cross-file kernels":
        shutil.copytree(FIXTURES / project, root)
    else:
        root.mkdir()
        for name, text in CROSS_FILE_KERNELS.items():
            (root / name).write_text(text)
    (root / ".git").mkdir()
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    for path in files:  # written a while ago: a file written just now is read again
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config = Config(root=root)
    full = engine.scan([root], config)
    unpacked = []
    real_loads = project_index.pickle.loads
    monkeypatch.setattr(project_index.pickle, "loads", lambda data: unpacked.append(1) or real_loads(data))
    for path in files:
        engine.scan([path], config, cache_dir=tmp_path / "cache")
        alone = engine.scan([path], config, cache_dir=tmp_path / "cache")
        assert _detail(alone, path) == _detail(full, path), path.relative_to(root)
    assert unpacked, "the kept contexts' facts were read from their packed form"


@pytest.mark.parametrize("project", ["demo", "projects/never_ported", "projects/ported_backends"])
def test_a_full_scan_keeps_what_the_first_run_on_a_file_alone_needs(project: str, tmp_path: Path, monkeypatch) -> None:
    """After a scan of the whole project (CI's), the first run on one of its files named
    alone (a pre-commit hook) reads the project's context, include graph and macro
    environments from the cache: no file is walked or analysed again, and each file gives
    its findings of the full scan. A header edited after it is worked out afresh."""
    from portlint import engine
    from portlint.build_model import macros
    from portlint.config import Config

    root = tmp_path / "p"
    shutil.copytree(FIXTURES / project, root)
    (root / ".git").mkdir()
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    for path in (*files, root):  # written a while ago: a file written just now is read again
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config = Config(root=root)
    cache = tmp_path / "cache"
    full = engine.scan([root], config, cache_dir=cache)
    walked, analysed = [], []
    real_walk, real_analyze = macros.BuildMacros._walk, engine.analyze_file
    monkeypatch.setattr(macros.BuildMacros, "_walk", lambda self, path: walked.append(path) or real_walk(self, path))
    monkeypatch.setattr(engine, "analyze_file", lambda c, *a, **k: analysed.append(c.path) or real_analyze(c, *a, **k))
    for path in files:
        alone = engine.scan([path], config, cache_dir=cache)
        assert _detail(alone, path) == _detail(full, path), path.relative_to(root)
    assert walked == [] and analysed == [], (walked[:3], analysed[:3])
    header = next(p for p in files if p.suffix in (".h", ".cuh", ".hpp"))
    header.write_text(header.read_text() + "\n#define WIDTH_AFTER_THE_SCAN 32\n")
    os.utime(header, ns=(time.time_ns() - 5 * 10**9,) * 2)
    named = [p for p in files if p.suffix in (".cu", ".h", ".cuh", ".hpp")]
    for path in named:
        assert _detail(engine.scan([path], config, cache_dir=cache), path) == _detail(engine.scan([path], config), path)
    assert walked, "the edited header was walked again"


def _shown(result, prefix: str = "") -> set[tuple]:
    """Every finding as a user reads it, with the paths of it and its related places as shown."""
    return {(prefix + f.path, f.location.start_line, f.code, f.message,
             tuple((prefix + r.location.path, r.location.start_line, r.message) for r in f.related))
            for f in result.findings}


@pytest.mark.parametrize("project", ["demo", "projects/ported_backends"])
def test_a_run_from_the_folder_above_the_project_reads_what_the_full_scan_kept(project: str, tmp_path: Path,
                                                                                monkeypatch) -> None:
    """A full scan from the project's root (CI), then runs on its files each named from the
    folder above the project (a hook or an editor started at a monorepo's top): nothing is
    walked or analysed again, and each file's findings are the full scan's, with every path
    (the finding's and its related places') shown from where the run started."""
    from portlint import engine
    from portlint.build_model import macros
    from portlint.config import Config

    root = tmp_path / "p"
    shutil.copytree(FIXTURES / project, root)
    (root / ".git").mkdir()
    files = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    for path in (*(root / f for f in files), root):  # written a while ago: a file written just now is read again
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config = Config(root=root)
    cache = tmp_path / "cache"
    monkeypatch.chdir(root)
    full = engine.scan([Path(".")], config, cache_dir=cache)
    monkeypatch.chdir(tmp_path)
    walked, analysed = [], []
    real_walk, real_analyze = macros.BuildMacros._walk, engine.analyze_file
    monkeypatch.setattr(macros.BuildMacros, "_walk", lambda self, path: walked.append(path) or real_walk(self, path))
    monkeypatch.setattr(engine, "analyze_file", lambda c, *a, **k: analysed.append(c.path) or real_analyze(c, *a, **k))
    for path in files:
        alone = engine.scan([Path("p") / path], config, cache_dir=cache)
        expected = {f for f in _shown(full, "p/") if f[0] == f"p/{path.as_posix()}"}
        assert _shown(alone) == expected, path
    assert walked == [] and analysed == [], (walked[:3], analysed[:3])
    if project == "demo":
        assert any(r[0] != f[0] for f in _shown(full) for r in f[4]), "a finding has related places in other files"


def test_a_header_macro_reaches_a_file_scanned_alone(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "warp.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (tmp_path / "k.cu").write_text('#include "warp.h"\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n')
    result = scan([tmp_path / "k.cu"], tmp_path)
    assert [(Path(f.path).name, f.location.start_line, f.code) for f in result.findings] == [("k.cu", 2, "W001")]
    assert len(result.files) == 1, "only the named file counts as scanned"


def test_a_file_scanned_alone_leaves_the_cache_right_for_a_full_scan(tmp_path: Path) -> None:
    # Context files are analysed for the project rules only: their results must not be
    # cached as if every rule had run.
    from portlint import engine
    from portlint.config import Config

    root = tmp_path / "p"
    root.mkdir()
    (root / ".git").mkdir()
    shutil.copy(FIXTURES / "C003" / "bad.cmake", root / "CMakeLists.txt")
    (root / "a.cu").write_text("__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n")
    cache = tmp_path / "cache"
    config = Config(root=root)
    full = engine.scan([root], config, cache_dir=tmp_path / "fresh").findings
    engine.scan([root / "a.cu"], config, cache_dir=cache)
    again = engine.scan([root], config, cache_dir=cache).findings
    assert [(f.path, f.code, f.location.start_line) for f in again] == [
        (f.path, f.code, f.location.start_line) for f in full]


def _warp_project(root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "warp.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (root / "k.cu").write_text('#include "warp.h"\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n')
    for i in range(3):
        (root / f"other{i}.cu").write_text(f'#include "warp.h"\n__global__ void k{i}(int* x) {{ x[0] = WARP_SIZE; }}\n')


def _codes(result) -> list[tuple[str, int, str]]:
    return [(Path(f.path).name, f.location.start_line, f.code) for f in result.findings]


def test_a_second_run_on_named_files_reads_only_them(tmp_path: Path, monkeypatch) -> None:
    # The context of a pre-commit run is kept in the cache with each file's stat signature:
    # the next run takes the unchanged files' states without reading them.
    from portlint import engine
    from portlint.config import Config

    root = tmp_path / "p"
    _warp_project(root)
    for path in root.glob("*.*"):  # written a while ago: a file written just now is read again
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config, cache = Config(root=root), tmp_path / "cache"
    first = engine.scan([root / "k.cu"], config, cache_dir=cache)
    read = []
    real_read = engine.read_source
    monkeypatch.setattr(engine, "read_source", lambda c, data=None: read.append(Path(c.path).name) or real_read(c, data))
    second = engine.scan([root / "k.cu"], config, cache_dir=cache)
    assert _codes(second) == _codes(first) == [("k.cu", 2, "W001")]
    assert set(read) == {"k.cu"}


def test_named_file_runs_follow_edits_of_headers_and_sources(tmp_path: Path) -> None:
    # A header's change can change every includer's facts: the kept context is then dropped.
    # A changed source file is analysed again alone.
    from portlint import engine
    from portlint.config import Config

    root = tmp_path / "p"
    _warp_project(root)
    config, cache = Config(root=root), tmp_path / "cache"
    assert _codes(engine.scan([root / "k.cu"], config, cache_dir=cache)) == [("k.cu", 2, "W001")]
    (root / "warp.h").write_text("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define WARP_SIZE warpSize\n"
                                 "#else\n#define WARP_SIZE 32\n#endif\n")
    assert _codes(engine.scan([root / "k.cu"], config, cache_dir=cache)) == []
    # A function launched from a context file lacks `__global__`: P005 in the named file
    # follows the launch as it comes and goes.
    (root / "impl.cu").write_text("void scale(float* x) { x[0] = 1; }\n")
    launch = "void scale(float* x);\nvoid run() { scale<<<1, 1>>>(0); }\n"
    (root / "ops.cu").write_text(launch)
    assert _codes(engine.scan([root / "impl.cu"], config, cache_dir=cache)) == [("impl.cu", 1, "P005")]
    (root / "ops.cu").write_text("void run() {}\n")
    assert _codes(engine.scan([root / "impl.cu"], config, cache_dir=cache)) == []
    (root / "ops.cu").write_text(launch + "// again\n")
    assert _codes(engine.scan([root / "impl.cu"], config, cache_dir=cache)) == [("impl.cu", 1, "P005")]


def test_a_named_file_is_read_with_its_own_project_whatever_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    """Two projects side by side, no marker above them: `portlint scan projA/src/kernels.cu`
    from their parent reads projA as the context, not everything under the working directory
    (projB's loader would make projA's kernel an R002 finding)."""
    from click.testing import CliRunner

    from portlint import engine
    from portlint.cli import main

    kernel = '__global__ void saxpy(float* y) { y[0] = 1; }\n'
    loader = 'void load() { hipModuleGetFunction(&f, mod, "saxpy"); }\n'
    for name in ("projA", "projB"):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    (tmp_path / "projA" / "src" / "kernels.cu").write_text(kernel)
    (tmp_path / "projB" / "src" / "loader.cpp").write_text(loader)
    discovered: list[str] = []
    real_discover = engine.discover
    monkeypatch.setattr(engine, "discover", lambda paths, config, *more: (found := real_discover(paths, config, *more))
                        and discovered.extend(c.absolute for c in found[0]) or found)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", "projA/src/kernels.cu", "--select", "R002"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert discovered and all("/projA/" in path for path in discovered), discovered
    assert (tmp_path / "projA" / ".portlint_cache").is_dir() and not (tmp_path / ".portlint_cache").exists()
    # The loader inside projA: the same run finds it.
    (tmp_path / "projA" / "src" / "loader.cpp").write_text(loader)
    result = CliRunner().invoke(main, ["scan", "projA/src/kernels.cu", "--select", "R002"], catch_exceptions=False)
    assert result.exit_code == 1 and "R002" in result.output, result.output


def test_a_second_run_on_a_named_header_reads_no_file_that_does_not_include_it(tmp_path: Path, monkeypatch) -> None:
    """A header named alone takes its macros from its includers. Which files include it comes
    from the project's include graph, kept with each file's stat signature: the next run reads
    only the includers (for the walk), and the project context comes from the last run."""
    from portlint import build_model, engine
    from portlint.config import Config

    root = tmp_path / "p"
    _warp_project(root)
    (root / "shim.h").write_text("#pragma once\n#define WARP_SIZE 64\n")
    (root / "lane.h").write_text("#pragma once\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n")
    (root / "uses_shim.cu").write_text('#include "shim.h"\n#include "lane.h"\n')
    for i in range(5):
        (root / f"unrelated{i}.cu").write_text(f"__global__ void u{i}(int* x) {{ x[0] = 1; }}\n")
    for path in root.glob("*.*"):
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config, cache = Config(root=root), tmp_path / "cache"
    expected = _codes(engine.scan([root / "lane.h"], config))
    first = engine.scan([root / "lane.h"], config, cache_dir=cache)
    read_by_model, read_by_scan = [], []
    real_model_read, real_read_source = build_model._read, engine.read_source
    monkeypatch.setattr(build_model, "_read", lambda p: read_by_model.append(Path(p).name) or real_model_read(p))
    monkeypatch.setattr(engine, "read_source",
                        lambda c, data=None: read_by_scan.append(Path(c.path).name) or real_read_source(c, data))
    second = engine.scan([root / "lane.h"], config, cache_dir=cache)
    assert _codes(second) == _codes(first) == expected
    assert set(read_by_model) <= {"uses_shim.cu", "shim.h", "lane.h"}, read_by_model
    assert set(read_by_scan) <= {"lane.h"}, read_by_scan


def test_a_named_headers_environment_is_kept_while_its_record_holds(tmp_path: Path, monkeypatch) -> None:
    """A header named alone takes its macros from a walk of its includers. That environment is
    kept with a stat record of what it depended on: the next run walks nothing, and an edit of
    an includer's header (or a new includer) is seen."""
    from portlint import engine
    from portlint.build_model.macros import BuildMacros
    from portlint.config import Config

    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "shim.h").write_text("#pragma once\n#define WARP_SIZE 64\n")
    (root / "lane.h").write_text("#pragma once\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n")
    (root / "uses_shim.cu").write_text('#include "shim.h"\n#include "lane.h"\n')
    for path in (*root.glob("*.*"), root):  # the folder too: its listing resolves the includes
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config, cache = Config(root=root), tmp_path / "cache"
    walks = []
    real_walk = BuildMacros._walk
    monkeypatch.setattr(BuildMacros, "_walk", lambda self, path: walks.append(path) or real_walk(self, path))
    assert _codes(engine.scan([root / "lane.h"], config, cache_dir=cache)) == []
    assert walks
    walks.clear()
    assert _codes(engine.scan([root / "lane.h"], config, cache_dir=cache)) == []
    assert walks == [], "the kept environment answers"
    (root / "shim.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    os.utime(root / "shim.h", ns=(time.time_ns() - 5 * 10**9,) * 2)
    assert _codes(engine.scan([root / "lane.h"], config, cache_dir=cache)) == [("lane.h", 2, "W001")]
    (root / "shim.h").write_text("#pragma once\n#define WARP_SIZE 64\n")
    (root / "another.cu").write_text('#define WARP_SIZE 32\n#include "lane.h"\n')  # a new includer, 32 lanes
    for path in (root / "shim.h", root / "another.cu", root):
        os.utime(path, ns=(time.time_ns() - 4 * 10**9,) * 2)
    expected = _codes(engine.scan([root / "lane.h"], config))
    assert _codes(engine.scan([root / "lane.h"], config, cache_dir=cache)) == expected


def test_past_its_budget_the_projects_share_of_a_named_run_is_cut_short_and_said(tmp_path: Path, monkeypatch) -> None:
    """The work a run on named files does for their project (includers, the walk of their
    macros, the project context) is bounded like a file's analysis: past the budget it does
    with less and says so on stderr and in SARIF's notifications. What it made with less is
    kept (the next run is as fast, gives the same findings and says so again); a larger
    budget works it out again."""
    import json

    from click.testing import CliRunner

    from portlint import engine, workers
    from portlint.cli import main

    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "shim.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    (root / "lane.h").write_text("#pragma once\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n")
    (root / "uses_shim.cu").write_text('#include "shim.h"\n#include "lane.h"\n')
    for path in (*root.glob("*.*"), root):
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    monkeypatch.chdir(root)
    monkeypatch.setattr(workers.Budget, "spent", lambda self: True)
    result = CliRunner().invoke(main, ["scan", "lane.h", "--output-format", "sarif"], catch_exceptions=False)
    share = f"{10 * engine.PROJECT_SHARE:g} s budget"  # part of the default 10 s timeout
    cut = [line for line in result.stderr.splitlines() if f"past the {share}" in line]
    assert cut and all(line.startswith("portlint: <project>: ") for line in cut), result.stderr
    assert "Traceback" not in result.stderr
    run = json.loads(result.stdout)["runs"][0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert {n["level"] for n in notes} == {"warning"} and len(notes) == len(cut)
    # Without its includer's `WARP_SIZE 32` the header is judged alone: no 32-lane lane index seen.
    assert run["results"] == [] and result.exit_code == 0
    monkeypatch.undo()
    monkeypatch.chdir(root)
    again = CliRunner().invoke(main, ["scan", "lane.h"], catch_exceptions=False)
    # The kept header environment was made with less, and the context files were left out:
    # both are kept so (the run is as fast) and said again.
    assert "the macros of the named files' includes and includers (analysed without them): past the " \
           f"{share} of the project's share of an earlier run" in again.stderr, again.output
    assert "the project context (some files not read: the cross-file rules see less): past the " \
           f"{share} of the project's share of an earlier run" in again.stderr, again.output
    assert "this run" not in again.stderr and "Traceback" not in again.stderr
    larger = CliRunner().invoke(main, ["scan", "lane.h", "--timeout", "20"], catch_exceptions=False)
    assert "budget" not in larger.stderr
    assert larger.exit_code == 1 and "lane.h:2:" in larger.stdout and "W001" in larger.stdout


@pytest.mark.parametrize("project", ["demo", "projects/never_ported_shims"])
def test_context_files_the_budget_stopped_are_kept_unparsed_and_still_give_their_facts(
        project: str, tmp_path: Path, monkeypatch) -> None:
    """A context file whose analysis the run's budget stopped is kept unparsed: a project rule
    that asks for its facts by name loads them. Each named file gives its findings of a full
    scan, or the run says its context was cut short; the next run reuses the context (and
    says so again) rather than analysing it again."""
    from portlint import engine, workers
    from portlint.config import Config

    root = tmp_path / "p"
    shutil.copytree(FIXTURES / project, root)
    (root / ".git").mkdir()
    for path in (*root.rglob("*"), root):
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    full = _by_file(scan([root], root))
    real_results = workers.Work.results
    # The budget runs out as the context's analysis starts: every context file is stopped.
    monkeypatch.setattr(workers.Work, "results",
                        lambda self, stop=None: real_results(self, None if stop is None else (lambda: True)))
    for path in sorted(p for p in root.rglob("*.cu") if ".git" not in p.parts):
        cache = tmp_path / f"cache-{path.name}"
        first = engine.scan([path], Config(root=root, select=("ALL",), timeout=30), cache_dir=cache)
        key = path.resolve().as_posix()
        said = [p.message for p in first.problems if p.less_context]
        assert _by_file(first).get(key, set()) == full.get(key, set()) or said, path.relative_to(root)
        analysed = []
        real_start = engine._start_analysis
        monkeypatch.setattr(engine, "_start_analysis", lambda candidates, *rest, **kw:
                            analysed.extend(c.path.name for c in [*candidates, *(rest[4] if len(rest) > 4 else ())])
                            or real_start(candidates, *rest, **kw))
        second = engine.scan([path], Config(root=root, select=("ALL",), timeout=30), cache_dir=cache)
        monkeypatch.setattr(engine, "_start_analysis", real_start)
        assert _by_file(second) == _by_file(first)
        assert {p.message.replace("an earlier run", "this run") for p in second.problems if p.less_context} == set(said)
        # (A build file stopped is left out, as the run said, and not analysed again.)
        assert {n for n in analysed if n.endswith((".cu", ".cuh", ".h", ".hpp"))} <= {path.name}, "the context was kept"


def test_an_unsaved_buffer_is_judged_by_its_own_includes(tmp_path: Path) -> None:
    # `scan - --stdin-filename k.cu` (an editor's buffer): the macros come from the includes
    # the buffer has, not from the file as last saved.
    from portlint import engine
    from portlint.config import Config
    from portlint.discover import stdin_candidate

    root = tmp_path / "p"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "mask.h").write_text("#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n#define WIDE 1\n#else\n#define WIDE 0\n#endif\n")
    saved = "__device__ float f(float v) {\n  return __shfl_down_sync(0xffffffff, v, 1);\n}\n"
    (root / "k.cu").write_text(saved)
    unsaved = '#include "mask.h"\n#if !WIDE\n' + saved + "#endif\n"
    config = Config(root=root)

    def buffer_codes(text: str) -> list[tuple[str, int, str]]:
        candidate = stdin_candidate(text.encode(), root / "k.cu", config)
        return _codes(engine.scan([root / "k.cu"], config, stdin=candidate))

    assert buffer_codes(saved) == [("k.cu", 2, "W002")]
    assert buffer_codes(unsaved) == [], "the ROCm build never compiles the shuffle the buffer guards"
