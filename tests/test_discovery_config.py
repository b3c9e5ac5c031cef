"""Which files a scan reads, and how configuration is found and applied."""

from __future__ import annotations

import os
from pathlib import Path

from portlint import engine
from portlint.config import Config, find_config_file, load
from portlint.discover import discover, language_of

HAZARD = "float a = __shfl_down_sync(0xffffffff, v, 1);\n"


def names(paths, config) -> list[str]:
    candidates, _ = discover(paths, config)
    return sorted(c.path.relative_to(config.root).as_posix() for c in candidates)


def test_language_by_file_name() -> None:
    assert language_of(Path("a/k.cu")) == "cuda"
    assert language_of(Path("k.HIP")) == "cuda"
    assert language_of(Path("inc/x.cuh")) == "cuda"
    assert language_of(Path("CMakeLists.txt")) == "cmake"
    assert language_of(Path("cmake/FindFoo.cmake")) == "cmake"
    assert language_of(Path("setup.py")) == "python"
    assert language_of(Path("tools/other.py")) == "python"
    assert language_of(Path("README.md")) is None


def test_build_scripts_are_setup_py_and_configured_files(tmp_path: Path) -> None:
    for rel in ["setup.py", "op_builder/fused.py", "pkg/util.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")

    def build_scripts(config: Config) -> list[str]:
        candidates, _ = discover([tmp_path], config)
        return sorted(c.path.relative_to(tmp_path).as_posix() for c in candidates if c.build_script)

    assert build_scripts(Config(root=tmp_path)) == ["setup.py"]
    config = load(_write(tmp_path / "portlint.toml", 'extend-build-scripts = ["op_builder/*.py"]\n'), tmp_path)
    assert build_scripts(config) == ["op_builder/fused.py", "setup.py"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_gitignore_excludes_and_explicit_files(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    for rel in ["src/a.cu", "src/gen/b.cu", "third_party/c.cu", "build/d.cu", "src/e.log", "sub/f.cu", "sub/g.cu"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(HAZARD)
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("g.cu\n")
    config = Config(root=tmp_path, extend_exclude=("third_party",))
    assert names([tmp_path], config) == ["src/a.cu", "sub/f.cu"]
    # Named on the command line, an ignored file is scanned all the same.
    assert names([tmp_path / "src/gen/b.cu"], config) == ["src/gen/b.cu"]
    assert names([tmp_path], Config(root=tmp_path, respect_gitignore=False, exclude=())) == [
        "build/d.cu", "src/a.cu", "src/gen/b.cu", "sub/f.cu", "sub/g.cu", "third_party/c.cu"]


def test_ignore_patterns_match_as_git_does_with_and_without_negations(tmp_path: Path) -> None:
    # Without a `!` line the patterns are matched all at once; with one, line by line: the
    # same files either way, as git (pathspec) decides.
    files = ["a.cu", "gen/b.cu", "src/gen/c.cu", "keep/d.o.cu", "top/e.cu", "src/top/f.cu",
             "x/y/z/last.cu", "docs/g.cu", "v.tmp.cu"]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(HAZARD)
    for ignore, kept in [
        ("gen/\n/top/\nx/**/last.cu\n*.tmp.cu\n", ["a.cu", "docs/g.cu", "keep/d.o.cu", "src/top/f.cu"]),
        ("*.cu\n!a.cu\n!docs/\n!docs/*.cu\n", ["a.cu", "docs/g.cu"]),
    ]:
        (tmp_path / ".gitignore").write_text(ignore)
        assert names([tmp_path], Config(root=tmp_path, exclude=())) == kept


def test_symlink_loops_are_safe(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text(HAZARD)
    os.symlink(tmp_path, tmp_path / "src" / "loop")
    assert names([tmp_path], Config(root=tmp_path)) == ["src/a.cu"]


def test_config_found_upward_and_applied(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.portlint]\nignore = ["W002"]\nextend-exclude = ["legacy"]\nrocm-macros = ["MY_HIP"]\n'
    )
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "deep" / "k.cu").write_text(HAZARD)
    found = find_config_file(tmp_path / "src" / "deep")
    assert found == tmp_path / "pyproject.toml"
    config = load(found, tmp_path)
    assert config.root == tmp_path.resolve()
    assert "W002" not in config.enabled_codes() and config.rocm_macros == {"MY_HIP"}
    assert engine.scan([tmp_path / "src"], config).findings == []


def test_portlint_toml_wins_over_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.portlint]\nignore = ["W"]\n')
    (tmp_path / "portlint.toml").write_text('select = ["W002"]\n')
    assert find_config_file(tmp_path) == tmp_path / "portlint.toml"
    assert load(tmp_path / "portlint.toml", tmp_path).enabled_codes() == ("W002",)


def test_pyproject_without_our_table_is_not_a_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff]\nline-length = 100\n')
    assert find_config_file(tmp_path) is None


def test_rocm_macros_silence_the_projects_own_hip_branches(tmp_path: Path) -> None:
    # A macro whose name does not say it switches the HIP build on (`X_USE_HIP` would).
    src = "#ifdef GGML_PORTED\nfloat a = 0;\n#else\n" + HAZARD + "#endif\n"
    (tmp_path / "k.cu").write_text(src)
    assert [f.code for f in engine.scan([tmp_path], Config(root=tmp_path)).findings] == ["W002"]
    config = Config(root=tmp_path, rocm_macros=frozenset({"GGML_PORTED"}))
    assert engine.scan([tmp_path], config).findings == []


def test_parallel_scan_matches_serial(tmp_path: Path) -> None:
    for i in range(engine.PARALLEL_THRESHOLD + 2):
        (tmp_path / f"k{i}.cu").write_text(HAZARD * (i % 3))
    config = Config(root=tmp_path)
    serial = engine.scan([tmp_path], config, jobs=1)
    parallel = engine.scan([tmp_path], config, jobs=2)
    key = lambda r: [(f.path, f.location.start_line, f.code) for f in r.findings]  # noqa: E731
    assert key(serial) == key(parallel) and len(serial.findings) > 0
