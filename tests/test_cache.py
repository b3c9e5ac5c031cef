"""The cache: an unchanged tree is not parsed again, and cross-file results stay right."""

from __future__ import annotations

from pathlib import Path

from portlint import engine, source
from portlint.config import Config

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
    # `__launch_bounds__` is a trigger token (K003): without one the file would not be parsed at all.
    (tmp_path / "src" / "b.cu").write_text(KERNEL.replace("void saxpy", "void __launch_bounds__(256) saxpy"))
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
