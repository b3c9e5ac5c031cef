"""The cache: an unchanged tree is not parsed again, and cross-file results stay right."""

from __future__ import annotations

import os
import time
from pathlib import Path

from portlint import engine, source
from portlint.config import Config
from portlint.finding import Severity

KERNEL = '#include "macros.h"\n__global__ void saxpy(float* y) { y[0] = 1; }\n'
LOADER = 'void load() { hipModuleGetFunction(&f, mod, "saxpy"); }\n'
HAZARD = "float a = __shfl_down_sync(0xffffffff, v, 1);\n"


def scan_counting(root: Path, cache: Path) -> tuple[engine.ScanResult, int]:
    before = source.files_parsed
    # timeout=0: the analysis runs in this process, where `files_parsed` counts it.
    result = engine.scan([root], Config(root=root, timeout=0), jobs=1, cache_dir=cache)
    return result, source.files_parsed - before


def codes(result) -> list[tuple[str, str]]:
    return sorted((Path(f.path).name, f.code) for f in result.findings)


def test_second_scan_of_an_unchanged_tree_parses_nothing(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text(HAZARD)
    # `__launch_bounds__` is a trigger token (K002, K003): without one the file would not be parsed
    # at all; a template parameter as the bound fixes no size, so the file stays clean.
    (tmp_path / "src" / "b.cu").write_text(
        KERNEL.replace("__global__ void saxpy", "template <int N> __global__ void __launch_bounds__(N) saxpy"))
    cache = tmp_path / ".portlint_cache"
    first, parsed_first = scan_counting(tmp_path, cache)
    second, parsed_second = scan_counting(tmp_path, cache)
    assert parsed_first >= 2 and parsed_second == 0
    assert codes(first) == codes(second) == [("a.cu", "W002")]
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text().strip().endswith("*")


def test_a_changed_file_is_parsed_again_and_cross_file_rules_follow(tmp_path: Path) -> None:
    (tmp_path / "kernels.cu").write_text(KERNEL)
    (tmp_path / "macros.h").write_text("#pragma once\n")
    (tmp_path / "loader.cpp").write_text("int main() { return 0; }\n")
    cache = tmp_path / "cache"
    result, _ = scan_counting(tmp_path, cache)
    assert codes(result) == []
    # Only loader.cpp changes. kernels.cu has no trigger token, so no scan parsed it yet:
    # R002 now needs its definitions and parses it once; the cache keeps its facts.
    (tmp_path / "loader.cpp").write_text(LOADER)
    result, parsed = scan_counting(tmp_path, cache)
    assert parsed == 2
    assert codes(result) == [("kernels.cu", "R002")]
    # loader.cpp changes again: the kernel file's cached facts must still feed R002.
    (tmp_path / "loader.cpp").write_text(LOADER + "// edited\n")
    result, parsed = scan_counting(tmp_path, cache)
    assert parsed == 1
    assert codes(result) == [("kernels.cu", "R002")]


def test_configuration_changes_start_new_entries(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("#ifdef MY_HIP\nint x;\n#else\n" + HAZARD + "#endif\n")
    cache = tmp_path / "cache"
    assert codes(engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)) == [("k.cu", "W002")]
    silent = Config(root=tmp_path, rocm_macros=frozenset({"MY_HIP"}))
    assert codes(engine.scan([tmp_path], silent, cache_dir=cache)) == []


def test_a_corrupt_or_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    cache = tmp_path / "cache"
    engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
    for entry in cache.rglob("*.pickle"):
        entry.write_bytes(b"garbage")
    assert codes(engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)) == [("k.cu", "W002")]
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    assert codes(engine.scan([tmp_path], Config(root=tmp_path), cache_dir=blocker / "c")) == [("k.cu", "W002")]


def test_corrupt_entries_are_recomputed_and_never_change_the_findings(tmp_path: Path) -> None:
    """Entries truncated, with flipped bytes or bytes spliced in at random places: every scan
    reports what a clean one does, without an error, and the entry is written again."""
    import random

    (tmp_path / "kernels.cu").write_text(KERNEL)
    (tmp_path / "macros.h").write_text("#pragma once\n")
    (tmp_path / "loader.cpp").write_text(LOADER)
    (tmp_path / "a.cu").write_text(HAZARD * 3)
    (tmp_path / "b.cu").write_text("__global__ void __launch_bounds__(1024) k() { int w = warpSize; }\n")
    clean = engine.scan([tmp_path], Config(root=tmp_path))
    expected = [(f.path, f.code, f.location.start_byte, f.message) for f in clean.findings]
    assert {"W002", "R002"} <= {f.code for f in clean.findings}
    cache = tmp_path / ".portlint_cache"
    engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
    rng = random.Random(10)
    for trial in range(150):
        entries = sorted(cache.rglob("*.pickle"))
        entry = rng.choice(entries)
        data = bytearray(entry.read_bytes())
        offset = rng.randrange(len(data))
        damage = rng.choice(["truncate", "flip", "splice"])
        if damage == "truncate":
            del data[offset:]
        elif damage == "flip":
            data[offset] ^= 1 << rng.randrange(8)
        else:
            data[offset:offset] = rng.randbytes(rng.randint(1, 8))
        entry.write_bytes(bytes(data))
        for path in tmp_path.glob("*.*"):  # just written: no snapshot answers for them (see below)
            os.utime(path)
        result = engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
        found = [(f.path, f.code, f.location.start_byte, f.message) for f in result.findings]
        assert found == expected, f"trial {trial}: {damage} at {offset} of {entry.name}"
        assert not result.problems, f"trial {trial}: {result.problems}"
        assert entry.read_bytes() != bytes(data), "the damaged entry was written again"
    _, parsed = scan_counting(tmp_path, cache)
    assert parsed == 0, "every entry is whole again"


def test_the_cache_is_in_the_project_root_whatever_config_file_is_named(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from portlint.cli import main

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "a.cu").write_text(HAZARD)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "portlint.toml").write_text("select = ['W']\n")
    monkeypatch.chdir(project / "src")
    for config in (shared / "portlint.toml", Path(os.devnull)):
        beside = config.parent / ".portlint_cache"
        was_there = beside.exists()  # /dev/.portlint_cache, from an older portlint
        result = CliRunner().invoke(main, ["scan", "--config", str(config), "a.cu"], catch_exceptions=False)
        assert result.exit_code == 1, result.output
        assert was_there or not beside.exists(), f"--config {config}: no cache beside it"
        assert (project / ".portlint_cache" / "CACHEDIR.TAG").is_file()
    # Without a marker above the scanned path, the cache goes beside what is scanned.
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "b.cu").write_text(HAZARD)
    result = CliRunner().invoke(main, ["scan", "--config", str(shared / "portlint.toml"), str(lone / "b.cu")],
                                catch_exceptions=False)
    assert result.exit_code == 1 and (lone / ".portlint_cache").is_dir()
    # A config file in the project still roots the cache where it lives.
    (project / "portlint.toml").write_text("select = ['W']\n")
    result = CliRunner().invoke(main, ["scan", "--config", str(project / "portlint.toml"), "a.cu"],
                                catch_exceptions=False)
    assert result.exit_code == 1 and not (project / "src" / ".portlint_cache").exists()


def test_unchanged_files_come_from_the_snapshot_and_a_damaged_one_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    """A directory scan keeps every file's outcome with its stat signature: the next scan of
    the same paths reads no unchanged file. A damaged snapshot (or per-file entry) is
    recomputed and never changes the findings."""
    import random

    (tmp_path / "kernels.cu").write_text(KERNEL)
    (tmp_path / "loader.cpp").write_text(LOADER)
    (tmp_path / "a.cu").write_text(HAZARD * 3)
    for path in tmp_path.glob("*.*"):  # written a while ago: the snapshot keeps them
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    expected = codes(engine.scan([tmp_path], Config(root=tmp_path)))
    cache = tmp_path / ".portlint_cache"
    engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
    read = []
    real_read = engine.read_source
    monkeypatch.setattr(engine, "read_source", lambda c, data=None: read.append(c.path.name) or real_read(c, data))
    assert codes(engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)) == expected
    assert read == []
    monkeypatch.setattr(engine, "read_source", real_read)
    rng = random.Random(3)
    for trial in range(40):
        entry = rng.choice(sorted(cache.rglob("*.pickle")))
        data = bytearray(entry.read_bytes())
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        entry.write_bytes(bytes(data))
        result = engine.scan([tmp_path], Config(root=tmp_path), cache_dir=cache)
        assert codes(result) == expected and not result.problems, f"trial {trial}: {entry.name}"


def test_a_header_outside_the_scanned_paths_that_changes_drops_the_snapshot(tmp_path: Path) -> None:
    # `portlint scan src` reads `include/shim.h` through an include: its change changes the
    # findings of src/ even though it is not scanned itself.
    (tmp_path / ".git").mkdir()
    (tmp_path / "include").mkdir()
    (tmp_path / "src").mkdir()
    header = tmp_path / "include" / "shim.h"
    header.write_text("#pragma once\n")
    (tmp_path / "src" / "k.cu").write_text('#include "../include/shim.h"\n'
                                           "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n")
    for path in (header, tmp_path / "src" / "k.cu"):
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)
    config, cache = Config(root=tmp_path), tmp_path / ".portlint_cache"
    assert [c for _, c in codes(engine.scan([tmp_path / "src"], config, cache_dir=cache))] == ["W002"]
    # The ROCm build's shim drops the mask: nothing left to report.
    header.write_text("#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n"
                      "#define __shfl_xor_sync(mask, v, o) __shfl_xor(v, o)\n#endif\n")
    assert codes(engine.scan([tmp_path / "src"], config, cache_dir=cache)) == []


def test_entries_under_another_entrys_name_are_misses(tmp_path: Path) -> None:
    """Intact entries swapped, copied over one another or moved to another's name, with or
    without the stat snapshots: every scan (of the folder, of one named file) reports what
    a clean one does, and nothing crashes. Each entry records its key and kind; a mismatch is
    a miss."""
    import pickle
    import random
    import shutil

    from portlint.cache import CHECKSUM_BYTES, SNAPSHOT

    (tmp_path / ".git").mkdir()
    (tmp_path / "kernels.cu").write_text(KERNEL)
    (tmp_path / "macros.h").write_text("#pragma once\n")
    (tmp_path / "loader.cpp").write_text(LOADER)
    (tmp_path / "a.cu").write_text(HAZARD * 3)
    (tmp_path / "b.cu").write_text("__global__ void __launch_bounds__(1024) k() { int w = warpSize; }\n" + HAZARD)
    config = Config(root=tmp_path)
    scans = {"folder": [tmp_path], "named": [tmp_path / "loader.cpp", tmp_path / "a.cu"]}

    def found(paths, cache=None):
        result = engine.scan(paths, config, cache_dir=cache)
        return [(f.path, f.code, f.location.start_byte, f.message) for f in result.findings], result.problems

    expected = {name: found(paths) for name, paths in scans.items()}
    assert {"W002", "R002"} <= {f[1] for f in expected["folder"][0]}
    cache = tmp_path / ".portlint_cache"
    rng = random.Random(27)
    for trial in range(60):
        for paths in scans.values():  # every kind of entry there is to mix up
            engine.scan(paths, config, cache_dir=cache)
        entries = sorted(cache.rglob("*.pickle"))
        first, second = rng.sample(entries, 2)
        move = rng.choice(["swap", "copy", "move"])
        if move == "swap":
            held = first.read_bytes()
            shutil.copyfile(second, first)
            second.write_bytes(held)
        elif move == "copy":
            shutil.copyfile(first, second)
        else:
            os.replace(first, second)
        if rng.random() < 0.5:  # without the snapshots, every file's own entry is read
            for entry in cache.rglob("*.pickle"):
                if pickle.loads(entry.read_bytes()[CHECKSUM_BYTES:])[1] == SNAPSHOT:
                    entry.unlink()
        for name, paths in scans.items():
            assert found(paths, cache) == expected[name], f"trial {trial}: {move} {first.name} {second.name}, {name}"


def test_an_entry_read_in_another_working_directory_shows_paths_from_there(tmp_path: Path, monkeypatch) -> None:
    """What one run stored with paths shown from the project's root, a run started in the
    folder above it reads with each shown path (of any class that holds one: a finding's
    places, a deep-mode unit and what it cleared) moved there; outside both, absolute."""
    from portlint.cache import FILE, Cache
    from portlint.deep.checks import Cleared, UnitResult
    from portlint.source import Location

    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    cache = Cache(tmp_path / "cache", "salt")
    here = Location("src/a.cu", 0, 4, 1, 1, 1, 5)
    elsewhere = Location(str(tmp_path.parent / "other.cu"), 0, 1, 1, 1, 1, 2)
    cache.put("k", (UnitResult("src/a.cu", cleared=[Cleared("W001", "src/a.h", 3, 9)]), [here, elsewhere]), FILE)
    monkeypatch.chdir(tmp_path)
    unit, places = Cache(tmp_path / "cache", "salt").get("k", FILE)
    assert (unit.path, unit.cleared[0].path) == ("proj/src/a.cu", "proj/src/a.h")
    assert [p.path for p in places] == ["proj/src/a.cu", str(tmp_path.parent / "other.cu")]
    monkeypatch.chdir(root / "..")
    assert Cache(tmp_path / "cache", "salt").get("k", FILE)[0].path == "proj/src/a.cu"


SWITCHED = """\
#include <hip/hip_runtime.h>
__device__ float lane_total(float v) {
#ifdef APP_SHUFFLE_TOTALS
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);
#endif
  return v;
}
"""


def _aged(*paths: Path) -> None:
    """Written a while ago: the snapshot keeps them (a file just written may change unseen)."""
    for path in paths:
        os.utime(path, ns=(time.time_ns() - 10**10,) * 2)


def test_an_unchanged_rescan_gives_the_last_result_until_a_setting_a_description_or_a_file_set_changes(
        tmp_path: Path, monkeypatch) -> None:
    """A scan of the same paths finding every file as the last one left it takes that scan's
    result as is: no project rule runs again. A changed severity, a build description that
    now sets a switch, a file removed: each gives what a cold scan gives."""
    (tmp_path / "reduce.cu").write_text(SWITCHED)
    (tmp_path / "a.cu").write_text(HAZARD)
    _aged(tmp_path / "reduce.cu", tmp_path / "a.cu")
    cache = tmp_path / ".portlint_cache"

    def scan(config: Config) -> list[tuple[str, int, str]]:
        cold = engine.scan([tmp_path], config)
        warm = engine.scan([tmp_path], config, cache_dir=cache)
        shown = [(Path(f.path).name, f.location.start_line, f.severity.value) for f in warm.findings]
        assert shown == [(Path(f.path).name, f.location.start_line, f.severity.value) for f in cold.findings]
        return shown

    config = Config(root=tmp_path, select=("W001", "W002"))
    assert scan(config) == [("a.cu", 1, "error")]  # the switch nobody sets leaves reduce.cu's loop out
    project_rules: list[int] = []
    real = engine._run_project_rules
    monkeypatch.setattr(engine, "_run_project_rules", lambda *a, **k: project_rules.append(1) or real(*a, **k))
    assert scan(Config(root=tmp_path, select=("W001", "W002"), severity={"W002": Severity.NOTE})) == [
        ("a.cu", 1, "note")]
    assert scan(config) == [("a.cu", 1, "error")]
    project_rules.clear()
    assert scan(config) == [("a.cu", 1, "error")] and len(project_rules) == 1  # the cold scan's, not the warm one's
    (tmp_path / "ci.yml").write_text("env:\n  CXXFLAGS: -DAPP_SHUFFLE_TOTALS\n")
    _aged(tmp_path / "ci.yml")
    assert scan(config) == [("a.cu", 1, "error"), ("reduce.cu", 4, "error")]
    (tmp_path / "a.cu").unlink()
    assert scan(config) == [("reduce.cu", 4, "error")]


def test_a_kept_result_reads_the_states_of_only_the_files_it_reports_and_reports_as_a_cold_scan(
        tmp_path: Path, monkeypatch) -> None:
    """The warm re-scan of an unchanged project (the usual CI or pre-commit run) gives the
    cold scan's SARIF, fingerprints and places included, and its cost does not grow with the
    files that have nothing to report: their kept states are never unpickled."""
    import json

    from portlint import unchanged
    from portlint.report import ReportContext, render

    (tmp_path / "a.cu").write_text(HAZARD)
    for name in ("b.cu", "c.cu"):
        (tmp_path / name).write_text(KERNEL)
    (tmp_path / "macros.h").write_text("#define SCALE 2\n")
    _aged(*tmp_path.iterdir())
    cache = tmp_path / ".portlint_cache"
    config = Config(root=tmp_path)

    def sarif(result) -> dict:
        return json.loads(render("sarif", result, ReportContext(root=tmp_path)))

    cold = sarif(engine.scan([tmp_path], config))
    engine.scan([tmp_path], config, cache_dir=cache)  # fills the snapshot
    unpickled: list[str] = []
    real = unchanged.Stored.state.fget
    monkeypatch.setattr(unchanged.Stored, "state", property(lambda self: unpickled.append(self.path) or real(self)))
    for _ in range(2):  # the second run reads what the first kept (written back as read)
        unpickled.clear()
        warm = engine.scan([tmp_path], config, cache_dir=cache)
        assert sarif(warm) == cold
        assert [Path(f.path).name for f in warm.findings] == ["a.cu"]
        assert {Path(path).name for path in unpickled} <= {"a.cu"}
        assert len(warm.files) == 4 and warm.files[next(p for p in warm.files if p.endswith("b.cu"))].language
