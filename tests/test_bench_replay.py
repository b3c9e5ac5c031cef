"""The port-commit replay (bench/replay.py): its data files agree, and it scores what it says."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("replay", ROOT / "bench" / "replay.py")
replay = importlib.util.module_from_spec(spec)
sys.modules["replay"] = replay
spec.loader.exec_module(replay)


def test_labels_commits_and_split_agree():
    commits = replay.load_jsonl(replay.DATA / "commits.jsonl")
    labels = replay.load_jsonl(replay.DATA / "labels.jsonl")
    split = json.loads((replay.DATA / "projects.json").read_text())["split"]
    known = {(c["repo"], c["commit"]) for c in commits}
    assert all(c["split"] == split[c["repo"]] for c in commits)
    for label in labels:
        assert (label["repo"], label["commit"]) in known, label
        assert label["category"] in replay.CATEGORIES, label
        assert len(label["reason"].split()) <= 20, label
        assert len(label["line_sha1"]) == 40 and label["line"] >= 1
    keys = [(l["repo"], l["commit"], l["path"], l["line"], l["category"]) for l in labels]
    assert len(keys) == len(set(keys))


def finding(rule, path, start, end=None, related=(), level="warning"):
    return replay.Finding(rule, level, path, start, start if end is None else end, list(related))


def label(category, path="a.cu", line=10):
    return {"category": category, "path": path, "line": line}


def test_a_finding_counts_for_its_category_within_one_line():
    assert replay.found(label("warp-size-32"), [finding("W001", "a.cu", 11)])
    assert not replay.found(label("warp-size-32"), [finding("W001", "a.cu", 12)])
    assert not replay.found(label("block-size"), [finding("W001", "a.cu", 10)])
    assert not replay.found(label("warp-size-32"), [finding("W001", "b.cu", 10)])
    # a span that covers the line, and a related location in the same file
    assert replay.found(label("warp-size-32"), [finding("W002", "a.cu", 5, 20)])
    assert replay.found(label("warp-size-32"), [finding("W002", "b.cu", 3, related=[("a.cu", 9)])])
    assert not replay.found(label("warp-size-32"), [finding("W002", "b.cu", 3, related=[("b.cu", 10)])])


def test_other_labels_are_found_by_any_rule_and_unmapped_rules_find_nothing_else():
    assert replay.found(label("other"), [finding("Z999", "a.cu", 10)])
    assert not replay.found(label("hip-clang-rejects"), [finding("Z999", "a.cu", 10)])
    assert replay.categories("B004") == {"build-config"}   # by family letter
    assert replay.categories("portlint/P001") == {"cuda-arch-guard"}


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path):
    """A mirror folder holding one repository with a parent and a port commit."""
    work = tmp_path / "src"
    work.mkdir()
    git(work, "init", "-q")
    git(work, "config", "user.email", "t@example.com")
    git(work, "config", "user.name", "t")
    (work / "k.cu").write_text("#define WARP 32\nint x;\n")
    (work / "notes.md").write_text("text\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "parent")
    parent = git(work, "rev-parse", "HEAD")
    (work / "k.cu").write_text("#ifdef USE_ROCM\n#define WARP 64\n#else\n#define WARP 32\n#endif\n\n// why\nint x;\n")
    (work / "notes.md").write_text("text\nmore\n")
    git(work, "commit", "-qam", "port")
    child = git(work, "rev-parse", "HEAD")
    folder = tmp_path / "mirror"
    (folder / "o+r").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(folder / "o+r" / "repo")], check=True)
    return folder, parent, child


def test_added_lines_count_device_and_build_code_only(mirror):
    folder, parent, child = mirror
    added = replay.added_lines(replay.gitdir_of(folder, "o/r"), parent, child)
    # the new guard lines count; the blank line, the comment and the Markdown file do not
    assert added == {"k.cu": {1, 2, 3, 5}}


def test_trees_are_written_once_and_reused(mirror, tmp_path):
    folder, parent, _ = mirror
    tree = replay.materialize(folder, tmp_path / "work", "o/r", parent)
    assert (tree / "k.cu").read_text() == "#define WARP 32\nint x;\n"
    (tree / "k.cu").write_text("changed")
    assert replay.materialize(folder, tmp_path / "work", "o/r", parent) == tree
    assert (tree / "k.cu").read_text() == "changed"
