"""The `portlint` command as a user meets it: exit codes, formats, fixes, bad input."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from portlint.cli import main

HAZARD = "__global__ void f(float* v) {\n  v[0] = __shfl_down_sync(0xffffffff, v[0], 1);\n}\n"
CLEAN = "__global__ void f(float* v) {\n  v[0] = __shfl_down_sync(~0ull, v[0], 1);\n}\n"


def run(*args: str, cwd: Path):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # marks the project root
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "reduce.cu").write_text(HAZARD)
    (tmp_path / "src" / "clean.cu").write_text(CLEAN)
    return tmp_path


def test_findings_exit_1_and_show_the_rewrite(project: Path) -> None:
    result = run("scan", ".", cwd=project)
    assert result.exit_code == 1
    assert "src/reduce.cu:2:27: W002 [*] Mask `0xffffffff` covers 32 lanes" in result.output
    assert "= fix: Replace `0xffffffff` with `~0ull`" in result.output
    assert "Found 1 port hazard (1 error)." in result.output


def test_clean_tree_exits_0(project: Path) -> None:
    result = run("scan", "src/clean.cu", cwd=project)
    assert result.exit_code == 0
    assert "No port hazards found." in result.output


def test_exit_zero_and_fail_on(project: Path) -> None:
    assert run("scan", "--exit-zero", cwd=project).exit_code == 0
    # W002 is an error: --fail-on error still fails; demoted to a note it passes.
    assert run("scan", "--fail-on", "error", cwd=project).exit_code == 1
    (project / "pyproject.toml").write_text('[tool.portlint]\nseverity = { W002 = "note" }\nfail-on = "warning"\n')
    assert run("scan", cwd=project).exit_code == 0


def test_select_and_ignore(project: Path) -> None:
    assert run("scan", "--ignore", "W002", cwd=project).exit_code == 0
    assert run("scan", "--select", "W", "--ignore", "W002", cwd=project).exit_code == 0
    assert run("scan", "--select", "W002", cwd=project).exit_code == 1
    assert run("scan", "--ignore", "W", "--extend-select", "W002", cwd=project).exit_code == 1


def test_unknown_selector_is_a_usage_error(project: Path) -> None:
    result = run("scan", "--select", "W999", cwd=project)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "unknown rule selector 'W999'" in result.output


def test_concise_json_github_formats(project: Path) -> None:
    concise = run("scan", "--output-format", "concise", cwd=project).output.splitlines()
    assert concise[0].startswith("src/reduce.cu:2:27: W002 [*] Mask")
    payload = json.loads(run("scan", "--format", "json", cwd=project).output)
    (finding,) = payload["findings"]
    assert finding["code"] == "W002" and finding["severity"] == "error"
    assert finding["location"]["start"] == {"line": 2, "column": 27, "byte": 56}
    assert finding["fix"]["applicability"] == "safe" and finding["fix"]["edits"][0]["content"] == "~0ull"
    github = run("scan", "--format", "github", cwd=project).output.splitlines()
    assert github == [
        "::error file=src/reduce.cu,line=2,col=27,endLine=2,endColumn=37,title=W002 narrow-full-mask::"
        "Mask `0xffffffff` covers 32 lanes; AMD wavefronts have 64. "
        "Replace `0xffffffff` with `~0ull` (every lane of a 64-lane wavefront)."
    ]


def test_output_file(project: Path) -> None:
    result = run("scan", "--format", "json", "-o", "out/report.json", cwd=project)
    assert result.exit_code == 1 and result.output == ""
    assert json.loads((project / "out" / "report.json").read_text())["findings"]


def test_statistics(project: Path) -> None:
    result = run("scan", "--statistics", cwd=project)
    lines = result.output.splitlines()
    assert lines[0].split() == ["found", "places", "roots", "rule"]
    assert lines[1].split() == ["1", "1", "1", "W002", "[*]", "narrow-full-mask"]
    assert lines[2].split()[:3] == ["1", "1", "1"]


def test_one_finding_per_root_cause_keeping_every_place_and_edit(project: Path) -> None:
    # The same mask in three shuffles of one file: one root cause, one finding by default, the
    # other two places related, every edit kept; --no-group-root-causes gives one per place.
    body = "".join(f"  v += __shfl_down_sync(0xffffffff, v, {i});\n" for i in (1, 2, 4))
    (project / "src" / "reduce.cu").write_text(f"__global__ void f(float* p) {{\n  float v = p[0];\n{body}  p[0] = v;\n}}\n")
    result = run("scan", "src/reduce.cu", "--output-format", "json", "--statistics", cwd=project)
    payload = json.loads(result.output)
    (finding,) = payload["findings"]
    assert [r["location"]["start"]["line"] for r in finding["related"]] == [4, 5]
    assert len(finding["fix"]["edits"]) == 3
    assert payload["statistics"][0]["places"] == 3 and payload["statistics"][0]["root_causes"] == 1
    text = run("scan", "src/reduce.cu", cwd=project).output
    assert "src/reduce.cu:4:" in text and "src/reduce.cu:5:" in text  # each place shown
    for form in ("concise", "github"):  # one line a finding, each place still named
        lines = run("scan", "src/reduce.cu", "--output-format", form, cwd=project).output.splitlines()
        (line,) = [line for line in lines if "W002" in line]
        assert "(again at 4:" in line and ", 5:" in line, line
    per_place = run("scan", "src/reduce.cu", "--output-format", "json", "--no-group-root-causes", cwd=project)
    assert len(json.loads(per_place.output)["findings"]) == 3
    assert run("scan", "src/reduce.cu", "--fix", cwd=project).exit_code == 0
    assert (project / "src" / "reduce.cu").read_text().count("~0ull") == 3


def test_a_root_cause_in_a_header_leaves_a_note_in_each_file_that_uses_it(project: Path) -> None:
    # `WARP_SIZE` of a header, computed with in two kernels' files: one warning at the
    # definition (every use related), and in each other file a note at its first use that
    # points back to it, so that the file's own view shows it; still one root cause.
    (project / "src" / "reduce.cu").unlink()
    (project / "src" / "warp.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    kernel = ('#include "warp.h"\n__global__ void {0}(float* p) {{\n  int lane = threadIdx.x % WARP_SIZE;\n'
              '  int warp = threadIdx.x / WARP_SIZE;\n  p[warp] = __shfl_down(p[lane], 1);\n}}\n')
    (project / "src" / "a.cu").write_text(kernel.format("a"))
    (project / "src" / "b.cu").write_text(kernel.format("b"))
    payload = json.loads(run("scan", "--select", "W001", "--output-format", "json", "--statistics", cwd=project).output)
    by_path = {f["location"]["path"]: f for f in payload["findings"]}
    assert sorted(by_path) == ["src/a.cu", "src/b.cu", "src/warp.h"]
    assert by_path["src/warp.h"]["severity"] == "warning"
    for name in ("src/a.cu", "src/b.cu"):
        note = by_path[name]
        assert note["severity"] == "note" and note["location"]["start"]["line"] == 3
        assert [(r["location"]["path"], r["location"]["start"]["line"]) for r in note["related"]] == [
            ("src/warp.h", 2), (name, 4)]
    stats = payload["statistics"][0]
    assert stats["root_causes"] == 1 and stats["places"] == 5  # the definition and four uses, each once
    assert run("scan", "--select", "W001", cwd=project).exit_code == 1  # the warning, as before
    per_place = json.loads(run("scan", "--select", "W001", "--output-format", "json", "--no-group-root-causes",
                               cwd=project).output)
    assert {f["severity"] for f in per_place["findings"]} == {"warning"} and len(per_place["findings"]) == 5
    # One use: the definition and the use each have the other as their one related place.
    (project / "src" / "b.cu").unlink()
    (project / "src" / "a.cu").write_text('#include "warp.h"\n__global__ void a(float* p) {\n'
                                          '  p[0] = __shfl_down(p[threadIdx.x % WARP_SIZE], 1);\n}\n')
    payload = json.loads(run("scan", "--select", "W001", "--output-format", "json", cwd=project).output)
    assert [(f["location"]["path"], f["severity"]) for f in payload["findings"]] == [
        ("src/a.cu", "note"), ("src/warp.h", "error")]


def test_the_same_culprit_in_one_file_is_one_finding_whatever_each_place_carries(project: Path) -> None:
    # Two link lines with the same CUDA libraries: each place has its own related one (the
    # second library) and the message is the same: one root cause, every place kept.
    (project / "Makefile").write_text("app: main.o\n\t$(CXX) -o app main.o -lcudart -lcublas\n\n"
                                      "tests: tests.o\n\t$(CXX) -o tests tests.o -lcudart -lcublas\n")
    payload = json.loads(run("scan", "Makefile", "--output-format", "json", "--statistics", cwd=project).output)
    (finding,) = [f for f in payload["findings"] if f["code"] == "L001"]
    assert finding["location"]["start"]["line"] == 2
    assert sorted(r["location"]["start"]["line"] for r in finding["related"]) == [2, 5, 5]
    (stats,) = [s for s in payload["statistics"] if s["code"] == "L001"]
    assert (stats["count"], stats["places"], stats["root_causes"]) == (1, 4, 1)
    per_place = json.loads(run("scan", "Makefile", "--output-format", "json", "--no-group-root-causes",
                               "--statistics", cwd=project).output)
    assert len([f for f in per_place["findings"] if f["code"] == "L001"]) == 2
    (stats,) = [s for s in per_place["statistics"] if s["code"] == "L001"]
    assert stats["root_causes"] == 1


def test_one_root_cause_keeps_each_places_own_rewrite(project: Path) -> None:
    # One member read twice, each place with its own rewrite: one finding whose title says
    # so, both edits applied by --fix.
    (project / "src" / "pair.hip").write_text(
        "#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n"
        "__global__ void k(const __half2* in, float* out, __half* h) {\n  __half2 v = in[0];\n"
        "  out[0] = __half2float(v.x);\n  __half first = v.x;\n  h[0] = first;\n}\n")
    payload = json.loads(run("scan", "src/pair.hip", "--output-format", "json", "--select", "N001", cwd=project).output)
    (finding,) = payload["findings"]
    assert len(finding["fix"]["edits"]) == 2 and "the same at 1 more place" in finding["fix"]["title"]
    run("scan", "src/pair.hip", "--fix", "--select", "N001", cwd=project)
    fixed = (project / "src" / "pair.hip").read_text()
    assert "__low2float(v)" in fixed and "__half first = __low2half(v);" in fixed


def test_diff_writes_nothing(project: Path) -> None:
    result = run("scan", "--diff", cwd=project)
    assert result.exit_code == 1
    assert "-  v[0] = __shfl_down_sync(0xffffffff, v[0], 1);" in result.output
    assert "+  v[0] = __shfl_down_sync(~0ull, v[0], 1);" in result.output
    assert (project / "src" / "reduce.cu").read_text() == HAZARD


def test_exit_zero_holds_with_diff(project: Path) -> None:
    for extra in ((), ("--unsafe-fixes",)):
        result = run("scan", "--diff", *extra, "--exit-zero", cwd=project)
        assert result.exit_code == 0, result.output
        assert "+  v[0] = __shfl_down_sync(~0ull, v[0], 1);" in result.output
    assert (project / "src" / "reduce.cu").read_text() == HAZARD


def test_fix_applies_and_is_idempotent(project: Path) -> None:
    target = project / "src" / "reduce.cu"
    target.chmod(0o640)
    result = run("scan", "--fix", cwd=project)
    assert result.exit_code == 0, result.output
    assert "Fixed 1 finding." in result.output
    assert target.read_text() == CLEAN
    assert target.stat().st_mode & 0o777 == 0o640, "fix must keep mode bits"
    again = run("scan", "--fix", cwd=project)
    assert again.exit_code == 0 and "Fixed" not in again.output
    assert target.read_text() == CLEAN
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")], "no temp files left"


def test_fix_refuses_a_file_changed_since_the_scan(project: Path) -> None:
    from portlint import engine
    from portlint.config import Config
    from portlint.fix import plan_fixes

    result = engine.scan([project], Config(root=project))
    target = project / "src" / "reduce.cu"
    target.write_text(HAZARD + "// edited meanwhile\n")
    plans, refused = plan_fixes(result.findings, result.files, unsafe=False)
    assert plans == []
    assert [str(r) for r in refused] == [f"{result.findings[0].path}: not fixed: the file changed since it was scanned"]


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("blob.cu", b"\x7fELF\x00\x00\x01binary", "skipped: binary file"),
        ("latin1.cu", b"// caf\xe9\nint x;\n", "1 byte not UTF-8 read as `?` (the first, 0xe9, on line 1)"),
        ("cp1252.cu", b"// \x93quoted\x94 \xe9t\xe9\n" * 10, "skipped: not UTF-8 text (40 bytes that are not UTF-8,"),
        ("garbage.cu", b"}}}} ))) <<<< >>>> ;;; @@@ \n" * 20, "could not parse most of the file"),
        ("setup.py", b"from setuptools import setup\nsetup(\n", "skipped: Python syntax error at line 2"),
    ],
)
def test_bad_input_is_one_line_and_other_files_still_scanned(project: Path, name, content, message) -> None:
    (project / "src" / name).write_bytes(content)
    result = run("scan", ".", cwd=project)
    assert result.exit_code == 1, "the hazard in reduce.cu is still reported"
    assert "src/reduce.cu:2:27: W002" in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("portlint: ")]
    assert len(lines) == 1 and lines[0].startswith(f"portlint: src/{name}: {message}"), lines
    assert "Traceback" not in result.output


def test_a_stray_latin1_byte_is_read_as_a_question_mark_and_fixes_keep_it(project: Path) -> None:
    # An old header: UTF-8, but a name in a comment saved in Latin-1. Scanned, not skipped;
    # locations are those of the file, and --fix leaves the byte as it was.
    target = project / "src" / "old.cuh"
    target.write_bytes(b"// (c) J\xfcrgen\n" + HAZARD.encode())
    result = run("scan", "--no-cache", "src/old.cuh", cwd=project)
    assert result.exit_code == 1
    assert "src/old.cuh:3:27: W002" in result.output
    notes = [line for line in result.output.splitlines() if line.startswith("portlint: ")]
    assert notes == ["portlint: src/old.cuh: 1 byte not UTF-8 read as `?` (the first, 0xfc, on line 1)"]
    quiet = run("scan", "--no-cache", "-q", "src/old.cuh", cwd=project)  # a note, not a problem: -q drops it
    assert "W002" in quiet.output and "portlint: " not in quiet.output
    result = run("scan", "--no-cache", "--fix", "src/old.cuh", cwd=project)
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == b"// (c) J\xfcrgen\n" + HAZARD.replace("0xffffffff", "~0ull").encode()


def test_unreadable_paths(project: Path) -> None:
    (project / "src" / "gone.cu").symlink_to(project / "nowhere.cu")
    result = run("scan", "src/gone.cu", "src/reduce.cu", cwd=project)
    assert result.exit_code == 1
    assert "portlint: src/gone.cu: skipped: cannot read: No such file or directory" in result.output
    # A path that does not exist at all is a usage error (a typo in CI must not pass).
    result = run("scan", "missing.cu", "src/reduce.cu", cwd=project)
    assert result.exit_code == 2
    assert "portlint: error: missing.cu: no such file or directory" in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied(project: Path) -> None:
    target = project / "src" / "reduce.cu"
    target.chmod(0)
    try:
        result = run("scan", ".", cwd=project)
    finally:
        target.chmod(0o644)
    assert "src/reduce.cu: skipped: cannot read: Permission denied" in result.output


@pytest.mark.parametrize(
    "config, message",
    [
        ("[tool.portlint\nselect = 1\n", "invalid TOML"),
        ("[tool.portlint]\nselekt = ['W']\n", "unknown key 'selekt'"),
        ("[tool.portlint]\nselect = 'W'\n", "'select' must be a list of strings"),
        ("[tool.portlint]\nfail-on = 'fatal'\n", "'fail-on': 'fatal' is not one of error, warning, note"),
        ("[tool.portlint]\nseverity = { Z999 = 'error' }\n", "unknown rule code 'Z999'"),
    ],
)
def test_broken_config_is_exit_2_with_one_line(project: Path, config: str, message: str) -> None:
    (project / "pyproject.toml").write_text(config)
    result = run("scan", cwd=project)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and message in result.output, result.output


def test_rule_and_rules_commands(project: Path) -> None:
    doc = run("rule", "W002", cwd=project)
    assert doc.exit_code == 0 and "## Why it breaks on AMD" in doc.output and "narrow-full-mask" in doc.output
    assert run("rule", "narrow-full-mask", cwd=project).output == doc.output
    assert run("rule", "Q123", cwd=project).exit_code == 2
    rows = json.loads(run("rules", "--output-format", "json", cwd=project).output)
    assert {"code": "W002", "name": "narrow-full-mask"}.items() <= next(r for r in rows if r["code"] == "W002").items()


def test_installed_command_runs_as_a_process(project: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "portlint", "scan", "--format", "concise", "."],
                          cwd=project, capture_output=True, text=True)
    assert proc.returncode == 1 and "W002" in proc.stdout and proc.stderr == ""


def test_the_process_ends_with_all_its_output_and_its_exit_code(tmp_path: Path) -> None:
    """The command leaves with `os._exit` (no interpreter teardown): what it printed through
    a pipe, what it wrote to a file, and its exit code must all be there as before."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "projects"
    command = [sys.executable, "-m", "portlint", "scan", "--no-cache", "--output-format", "json", str(fixtures)]
    piped = subprocess.run(command, capture_output=True, text=True)
    assert piped.returncode == 1 and len(json.loads(piped.stdout)["findings"]) > 50
    written = subprocess.run([*command, "-o", str(tmp_path / "out.json")], capture_output=True, text=True)
    assert written.returncode == 1 and json.loads((tmp_path / "out.json").read_text()) == json.loads(piped.stdout)
    clean = subprocess.run([*command, "--select", "W002", "--exit-zero"], capture_output=True, text=True)
    assert clean.returncode == 0
    usage = subprocess.run([*command, "--select", "Q999"], capture_output=True, text=True)
    assert usage.returncode == 2 and usage.stderr.startswith("portlint: error:")


def test_baseline_reports_only_new_findings_after_edits_above(project: Path) -> None:
    result = run("scan", "--write-baseline", "portlint-baseline.json", cwd=project)
    assert result.exit_code == 0 and "Wrote 1 finding(s)" in result.output
    assert run("scan", "--baseline", "portlint-baseline.json", cwd=project).exit_code == 0
    target = project / "src" / "reduce.cu"
    # Unrelated edits above the baselined finding, and one new hazard below it.
    target.write_text("// header comment\n#include <cuda_runtime.h>\n\n" + HAZARD
                      + "__device__ float g(float v) { return __shfl_xor_sync(0xffffffff, v, 2); }\n")
    result = run("scan", "--baseline", "portlint-baseline.json", "--format", "concise", cwd=project)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if ": W002 " in line]
    assert lines == ["src/reduce.cu:7:54: W002 [*] Mask `0xffffffff` covers 32 lanes; AMD wavefronts have 64."]
    assert "1 in the baseline." in result.output


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a portlint baseline (invalid JSON"),
    ('{"format": "other", "findings": []}', "not a portlint baseline (write one with --write-baseline)"),
])
def test_broken_baseline_is_exit_2(project: Path, content: str, message: str) -> None:
    (project / "b.json").write_text(content)
    result = run("scan", "--baseline", "b.json", cwd=project)
    assert result.exit_code == 2 and message in result.output and result.output.count("\n") == 1
    assert "baseline file not found" in run("scan", "--baseline", "nope.json", cwd=project).output


def test_a_missing_path_is_a_usage_error(project: Path) -> None:
    result = run("scan", "nope", cwd=project)
    assert result.exit_code == 2
    assert "nope: no such file or directory" in result.output
    assert run("report", "nope", cwd=project).exit_code == 2


def test_a_scan_of_nothing_says_no_file_was_scanned(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "notes.txt").write_text("nothing portlint reads\n")
    result = run("scan", ".", cwd=tmp_path)
    assert result.exit_code == 0
    assert "0 files scanned" in result.output


def test_standard_input_is_scanned_under_its_stdin_filename(project: Path) -> None:
    def scan_stdin(*args: str):
        old = Path.cwd()
        os.chdir(project)
        try:
            return CliRunner().invoke(main, ["scan", "-", *args], input=HAZARD, catch_exceptions=False)
        finally:
            os.chdir(old)

    result = scan_stdin("--stdin-filename", "src/editing.cu", "--output-format", "concise")
    assert result.exit_code == 1
    assert result.output.startswith("src/editing.cu:2:27: W002 ")
    # Its kind comes from the name: a CMake file is not read as C++.
    assert scan_stdin("--stdin-filename", "CMakeLists.txt").exit_code == 0
    assert scan_stdin("--output-format", "concise").output.startswith("-:2:27: W002 ")
    assert run("scan", ".", "--stdin-filename", "x.cu", cwd=project).exit_code == 2


def _pipe(project: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    """portlint as an editor runs it: the buffer on standard input, stdout and stderr apart."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    return subprocess.run([sys.executable, "-m", "portlint", "scan", "--no-cache", *args, "-"], input=text,
                          cwd=project, env=env, capture_output=True, text=True)


def test_fix_on_standard_input_writes_the_fixed_text_to_standard_output(project: Path) -> None:
    edited = HAZARD + "// unsaved edit\n"
    proc = _pipe(project, edited, "--fix", "--stdin-filename", "src/reduce.cu")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == CLEAN + "// unsaved edit\n"
    assert "Fixed 1 finding" in proc.stderr  # the report goes to stderr, beside the text
    assert (project / "src" / "reduce.cu").read_text() == HAZARD, "the file on disk is the editor's, not ours"
    # Nothing to fix: the text comes back byte for byte.
    proc = _pipe(project, CLEAN, "--fix", "--stdin-filename", "src/clean.cu")
    assert (proc.returncode, proc.stdout) == (0, CLEAN)
    # A name that is not on disk yet (a new buffer) is not created.
    proc = _pipe(project, HAZARD, "--fix", "--stdin-filename", "src/new.cu")
    assert proc.stdout == CLEAN and not (project / "src" / "new.cu").exists()


def test_diff_on_standard_input_shows_the_fixes(project: Path) -> None:
    proc = _pipe(project, HAZARD, "--diff", "--stdin-filename", "src/reduce.cu")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "--- a/src/reduce.cu", "+++ b/src/reduce.cu", "@@ -1,3 +1,3 @@", " __global__ void f(float* v) {",
        "-  v[0] = __shfl_down_sync(0xffffffff, v[0], 1);", "+  v[0] = __shfl_down_sync(~0ull, v[0], 1);", " }"]
    assert "Would fix 1 finding." in proc.stderr
    assert _pipe(project, CLEAN, "--diff").returncode == 0


def test_quiet_prints_the_findings_only(project: Path) -> None:
    result = run("scan", ".", "--quiet", "--output-format", "concise", cwd=project)
    assert result.exit_code == 1
    assert result.output.splitlines() == [result.output.splitlines()[0]]
    assert "W002" in result.output
    assert run("scan", "src/clean.cu", "-q", cwd=project).output == ""


def test_colour_follows_no_color_and_force_color(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[31m" in run("scan", ".", "--output-format", "concise", cwd=project).output
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run("scan", ".", "--output-format", "concise", cwd=project).output
    monkeypatch.setenv("NO_COLOR", "")  # an empty NO_COLOR does not count (no-color.org)
    assert "\x1b[31m" in run("scan", ".", "--output-format", "concise", cwd=project).output


def test_statistics_in_json(project: Path) -> None:
    result = run("scan", ".", "--statistics", "--output-format", "json", cwd=project)
    payload = json.loads(result.output)
    assert payload["statistics"] == [{"code": "W002", "name": "narrow-full-mask", "count": 1, "places": 1, "root_causes": 1,
                                      "fixable": 1, "unsafe_fixable": 0}]
    assert len(payload["findings"]) == 1


LIBRARY_CALL = "#include <cublas_v2.h>\nvoid f(cublasHandle_t h) { cublasCreate(&h); }\n"


def test_statistics_mark_a_safe_fix_only_where_one_is_offered(project: Path) -> None:
    # W002's mask has a safe fix; L001's library renames are unsafe only: `[~]`, never `[*]`.
    (project / "src" / "blas.cu").write_text(LIBRARY_CALL)
    result = run("scan", ".", "--statistics", cwd=project)
    rows = [line.split() for line in result.output.splitlines()]
    marks = {row[3]: row[4] for row in rows if len(row) == 6 and row[0].isdigit()}
    assert marks["W002"] == "[*]" and marks["L001"] == "[~]", result.output
    payload = json.loads(run("scan", ".", "--statistics", "--output-format", "json", cwd=project).output)
    l001 = next(s for s in payload["statistics"] if s["code"] == "L001")
    assert l001["fixable"] == 0 and l001["unsafe_fixable"] == l001["count"] > 0
    assert "[*] 1 fixable with `portlint scan --fix`." in result.output


def test_report_counts_in_words_that_agree(project: Path) -> None:
    (project / "src" / "clean.cu").unlink()
    result = run("report", ".", "-o", "r.html", cwd=project)
    assert "(1 finding in 1 file)" in result.output


def test_doctor_refuses_selectors_of_scan_rules(project: Path) -> None:
    result = run("doctor", ".", "--select", "W001", cwd=project)
    assert result.exit_code == 2
    assert "selects no doctor check" in result.output


def test_an_unknown_code_in_a_suppression_comment_is_reported(project: Path) -> None:
    (project / "src" / "reduce.cu").write_text(HAZARD.replace("1);", "1);  // portlint: ignore[W999]"))
    result = run("scan", ".", "--output-format", "concise", cwd=project)
    assert "src/reduce.cu:2: unknown rule `W999` in a suppression comment" in result.output
    assert "W002" in result.output, "a typo silences nothing"
    (project / "src" / "reduce.cu").write_text(HAZARD.replace("1);", "1);  // portlint: ignore[narrow-full-mask]"))
    assert "unknown rule" not in run("scan", ".", cwd=project).output


def test_force_exclude_drops_excluded_files_named_on_the_command_line(project: Path) -> None:
    (project / "third_party").mkdir()
    (project / "third_party" / "vendored.cu").write_text(HAZARD)
    (project / "portlint.toml").write_text('extend-exclude = ["third_party"]\n')
    assert run("scan", "third_party/vendored.cu", cwd=project).exit_code == 1, "named files are scanned"
    result = run("scan", "third_party/vendored.cu", "src/clean.cu", "--force-exclude", cwd=project)
    assert result.exit_code == 0, result.output
    hooks = (Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text()
    assert "--force-exclude" in hooks


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _bar(stream, delay: float, enabled: bool = True, files: int = 10) -> str:
    from portlint.cli import ScanProgress

    with ScanProgress(enabled=enabled, delay=delay, stream=stream) as progress:
        for done in range(1, files + 1):
            progress(done, files)
    return stream.getvalue()


def test_a_long_scan_shows_a_progress_bar_on_a_terminal_and_erases_it() -> None:
    shown = _bar(_Terminal(), delay=0)
    assert "Scanning" in shown and "1/10" in shown and "9/10" in shown
    assert shown.endswith("\r\033[2K\033[?25h"), "the line is cleared and the cursor shown again"


def test_no_progress_bar_off_a_terminal_with_quiet_or_for_a_short_scan(project: Path) -> None:
    assert _bar(io.StringIO(), delay=0) == ""  # a pipe or a log file
    assert _bar(_Terminal(), delay=0, enabled=False) == ""  # -q
    assert _bar(_Terminal(), delay=3600) == ""  # done before the delay
    # The command itself, its standard error a pipe (CI, pre-commit): no bar, whatever the time.
    proc = _pipe(project, HAZARD, "--stdin-filename", "src/reduce.cu")
    assert proc.returncode == 1 and "W002" in proc.stdout
    assert "Scanning" not in proc.stderr and "\033" not in proc.stderr


def test_show_files_lists_what_a_scan_reads_and_nothing_else(project: Path) -> None:
    (project / "notes.txt").write_text("not a kind portlint reads\n")
    (project / "build").mkdir()
    (project / "build" / "generated.cu").write_text(HAZARD)  # excluded by default
    (project / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\n")
    result = run("scan", "--show-files", ".", cwd=project)
    assert result.exit_code == 0
    assert result.output.splitlines() == ["CMakeLists.txt", "src/clean.cu", "src/reduce.cu"]


def test_show_settings_prints_the_resolved_settings_of_a_file(project: Path) -> None:
    (project / "portlint.toml").write_text('ignore = ["W004"]\n[per-file-ignores]\n"src/red*.cu" = ["W002"]\n')
    result = run("scan", "--show-settings", "--extend-select", "W", "src/reduce.cu", cwd=project)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:3] == ["Resolved settings for: src/reduce.cu", f"Settings path: {project / 'portlint.toml'}",
                         "File kind: cuda"]
    assert 'ignore = ["W004"]' in lines and 'extend-select = ["W"]' in lines
    enabled = next(line for line in lines if line.startswith("enabled = "))
    assert '"W002"' in enabled and '"W004"' not in enabled and '"D001"' not in enabled
    assert '# per-file-ignores that match this file: ["W002"]' in lines
    clean = run("scan", "--show-settings", "src/clean.cu", cwd=project).output
    assert "# per-file-ignores that match this file: []" in clean


def test_a_folder_scanned_from_outside_it_is_read_with_its_own_build_files(tmp_path: Path) -> None:
    # No project marker anywhere: the scanned folder is the project, not the working
    # directory, whose own (unrelated) build must not decide what the folder's code sees.
    project, elsewhere = tmp_path / "kernels", tmp_path / "work"
    (project / "csrc").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\n"
                                            "project(k LANGUAGES CXX CUDA)\nadd_library(k csrc/gemm.cu)\n")
    (project / "csrc" / "gemm.cu").write_text(
        '#ifdef APP_BLAS_SHIM\n#include "blas_shim.h"\n#else\n#include <cublas_v2.h>\n#endif\n'
        "void scale(cublasHandle_t h, float* x, int n) { const float a = 2.f; cublasSscal(h, n, &a, x, 1); }\n")
    (elsewhere / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.21)\nproject(other LANGUAGES CXX HIP)\n"
                                              "add_compile_definitions(APP_BLAS_SHIM)\nadd_library(other other.hip)\n")
    result = run("scan", str(project), "--select", "L001", "--output-format", "json", "--no-cache", cwd=elsewhere)
    (finding,) = json.loads(result.output)["findings"]
    assert finding["location"]["start"]["line"] == 4, "the include the ROCm build of this folder reads"


def test_standard_input_named_in_a_folder_that_is_not_there_creates_nothing_there(tmp_path: Path) -> None:
    # No project marker: the working directory holds the cache, not the named folder.
    work, ghost = tmp_path / "work", tmp_path / "ghost" / "sub"
    work.mkdir()
    old = Path.cwd()
    os.chdir(work)
    try:
        result = CliRunner().invoke(main, ["scan", "-", "--stdin-filename", str(ghost / "k.cu")], input=HAZARD,
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 1
    assert not (tmp_path / "ghost").exists()
