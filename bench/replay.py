"""Replay real CUDA -> ROCm port commits: does portlint flag what the porters had to fix?

    python bench/replay.py --mirror /work/.mirror                 # both splits, both tables
    python bench/replay.py --mirror /work/.mirror --split tune --misses

`bench/replay/commits.jsonl` lists port commits of public projects (each with its parent and
its project's split, decided by `bench/replay/projects.json` before any commit was read);
`bench/replay/labels.jsonl` holds, for each commit, the lines of the PARENT that the porters
changed, wrapped in a new guard or made dead on ROCm, each with a category and a reason
written by a reviewer who read the diff. No third-party code is stored, only coordinates and
the SHA-1 of each labelled line's stripped text.

For each commit the parent and the child are written out of the fetched mirrors
(`<MIRROR>/<owner>+<name>/repo`, brought with the search tool's `fetch`; this script fetches
nothing) into `--work` (kept between runs), and `portlint scan . --exit-zero --output-format
sarif` runs on the whole tree from its root, as a user would. Two numbers per split:

- recall per category on the parents: a label is found when a finding whose rule maps to the
  label's category (RULE_CATEGORY below; `RULE_CATEGORY_JSON=file.json` adds or overrides
  codes) starts, ends or has a related location in the same file within one line of it.
  `other` labels (hazards outside the named categories) are found by a finding of any rule.
- false alarms on the children: error and warning findings that start on a line the commit
  added, per 1,000 added device/build lines (non-blank lines added to C-family, CMake, Make
  and setup.py files).

`--misses` lists the missed labels and the false alarms; it works on the tune split only, so
that the check split stays unread between the first and the last run.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

HERE = Path(__file__).resolve().parent
DATA = HERE / "replay"
REPO_ROOT = HERE.parent

CATEGORIES = ["warp-size-32", "block-size", "cuda-arch-guard", "inline-ptx", "lds-limit", "vendor-lib",
              "module-load-extern-c", "build-config", "hip-clang-rejects", "other"]
# Rule code -> categories, as ../shared/realcode/eval.py maps them: exact code first, then the
# family letter. `other` is not listed: any rule finds an `other` label.
RULE_CATEGORY = {
    "W001": {"warp-size-32"}, "W002": {"warp-size-32"}, "W003": {"warp-size-32"},
    "W004": {"warp-size-32"}, "W006": {"warp-size-32"}, "W007": {"warp-size-32"},
    # `__syncwarp` is undeclared in HIP before ROCm 6.2; `C10_WARP_SIZE` in a constant
    # expression does not compile on ROCm 7; host code reading a device-pass warp size.
    "W005": {"hip-clang-rejects"}, "W008": {"hip-clang-rejects", "warp-size-32"}, "W009": {"warp-size-32"},
    "K001": {"block-size"}, "K002": {"block-size"}, "K004": {"block-size"},
    "P001": {"cuda-arch-guard"}, "P002": {"cuda-arch-guard"}, "P003": {"cuda-arch-guard"},
    "A001": {"inline-ptx"}, "M001": {"lds-limit"},
    "L001": {"vendor-lib", "build-config"}, "C003": {"vendor-lib", "build-config"},
    "R002": {"module-load-extern-c"},
    "B": {"build-config"}, "C": {"build-config"}, "Y": {"build-config"},
}
if os.environ.get("RULE_CATEGORY_JSON"):
    RULE_CATEGORY.update({code: set(cats) for code, cats in
                          json.loads(Path(os.environ["RULE_CATEGORY_JSON"]).read_text()).items()})

# Files whose added lines are device or build code (the false-alarm denominator).
C_FAMILY = re.compile(r"\.(c|cc|cpp|cxx|cu|cuh|h|hh|hpp|hxx|inl|inc|hip|cl)$", re.I)
BUILD = re.compile(r"(^|/)(CMakeLists\.txt|[^/]*\.cmake|Makefile[^/]*|GNUmakefile|[^/]*\.mk|setup\.py)$")


def categories(rule_id: str) -> set[str]:
    code = rule_id.split("/")[-1]
    if code in RULE_CATEGORY:
        return RULE_CATEGORY[code]
    family = re.match(r"[A-Za-z]+", code)
    return RULE_CATEGORY.get(family.group(0), set()) if family else set()


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def git(gitdir: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], input=data,
                          capture_output=True, check=True).stdout


def gitdir_of(mirror: Path, repo: str) -> Path:
    return mirror / repo.replace("/", "+") / "repo"


def materialize(mirror: Path, work: Path, repo: str, sha: str) -> Path:
    """Write `repo` at `sha` into work/trees/<owner+name>/<sha>/ once; later runs reuse it.

    Blob by blob rather than `git archive`: snapshots lack their largest files, and a missing
    blob is skipped instead of failing the whole tree. Links and submodules are left out."""
    out = work / "trees" / repo.replace("/", "+") / sha
    done = out.with_name(sha + ".done")
    if done.exists():
        return out
    gitdir = gitdir_of(mirror, repo)
    if not gitdir.exists():
        sys.exit(f"replay: no mirror of {repo} under {mirror} (fetch github:{repo} first)")
    entries = []
    for item in git(gitdir, "ls-tree", "-r", "-z", sha).split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, blob = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((blob.decode(), path.decode("utf-8", "surrogateescape")))
    stream = git(gitdir, "cat-file", "--batch", data="".join(b + "\n" for b, _ in entries).encode())
    pos = 0
    for _, path in entries:
        end = stream.index(b"\n", pos)
        header = stream[pos:end].split()
        if len(header) < 3 or header[1] == b"missing":
            pos = end + 1
            continue
        size = int(header[2])
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(stream[end + 1:end + 1 + size])
        pos = end + 1 + size + 1
    out.mkdir(parents=True, exist_ok=True)
    done.touch()
    return out


class Finding:
    __slots__ = ("rule", "level", "path", "start", "end", "related")

    def __init__(self, rule, level, path, start, end, related):
        self.rule, self.level, self.path, self.start, self.end, self.related = rule, level, path, start, end, related


def relative(uri: str, root: Path) -> str:
    path = unquote(re.sub(r"^file://", "", uri))
    if os.path.isabs(path):
        path = os.path.relpath(path, root)
    return path[2:] if path.startswith("./") else path


def scan(tree: Path, out: Path, command: list[str], jobs: int, timeout: int) -> list[Finding]:
    """Run portlint on the whole tree from its root; its findings, paths relative to the tree."""
    if not out.exists():
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        tmp = out.with_suffix(".tmp")
        cmd = [*command, "scan", ".", "--exit-zero", "--output-format", "sarif", "-o", str(tmp),
               "--sarif-root", ".", "--max-results", "0", "--no-cache", "--jobs", str(jobs)]
        try:
            done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"replay: scan of {tree} passed {timeout} s; scored as no findings", file=sys.stderr)
            return []
        if done.returncode != 0 or not tmp.exists():
            print(f"replay: scan of {tree} failed ({done.returncode}): {done.stderr.strip()[-300:]}", file=sys.stderr)
            return []
        tmp.rename(out)
    findings = []
    for run in json.loads(out.read_text()).get("runs", []):
        for result in run.get("results", []):
            related = []
            for loc in result.get("relatedLocations", []):
                phys = loc.get("physicalLocation", {})
                uri = phys.get("artifactLocation", {}).get("uri", "")
                line = phys.get("region", {}).get("startLine", 0)
                if uri and line:
                    related.append((relative(uri, tree), line))
            for loc in result.get("locations", [])[:1]:
                phys = loc.get("physicalLocation", {})
                region = phys.get("region", {})
                start = region.get("startLine", 1)
                findings.append(Finding(result.get("ruleId") or "", result.get("level", "warning"),
                                        relative(phys.get("artifactLocation", {}).get("uri", ""), tree),
                                        start, region.get("endLine", start), related))
    return findings


def counted_line(path: str, text: str) -> bool:
    """An added line that counts toward the false-alarm denominator."""
    stripped = text.strip()
    if not stripped:
        return False
    if C_FAMILY.search(path):
        return not stripped.startswith(("//", "/*", "*"))
    if BUILD.search(path):
        return not stripped.startswith("#")
    return False


def added_lines(gitdir: Path, parent: str, commit: str) -> dict[str, set[int]]:
    """Lines of the child that the commit added, per device/build file."""
    diff = git(gitdir, "diff", "-U0", "--no-color", "--no-ext-diff", parent, commit).decode("utf-8", "replace")
    added: dict[str, set[int]] = collections.defaultdict(set)
    path, line = None, 0
    for row in diff.splitlines():
        if row.startswith("+++ "):
            path = row[6:] if row.startswith("+++ b/") else None
        elif row.startswith("@@"):
            line = int(re.match(r"@@ -\S+ \+(\d+)", row).group(1))
        elif row.startswith("+") and path is not None:
            if counted_line(path, row[1:]):
                added[path].add(line)
            line += 1
    return added


def line_text(tree: Path, path: str, line: int) -> str:
    try:
        lines = (tree / path).read_bytes().decode("utf-8", "replace").split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""
    except OSError:
        return ""


def found(label: dict, findings: list[Finding]) -> bool:
    want, line = label["category"], label["line"]
    for f in findings:
        if want != "other" and want not in categories(f.rule):
            continue
        places = [f.start, f.end] if f.path == label["path"] else []
        places += [r for p, r in f.related if p == label["path"]]
        if any(abs(p - line) <= 1 for p in places) or (f.path == label["path"] and f.start <= line <= f.end):
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", type=Path, required=True, help="folder of fetched mirrors (<owner>+<name>/repo)")
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "portlint-replay",
                    help="where trees are written (kept) and SARIF reports go")
    ap.add_argument("--split", choices=["tune", "check", "all"], default="all")
    ap.add_argument("--misses", action="store_true", help="list missed labels and false alarms (tune split only)")
    ap.add_argument("--portlint", default=f"{sys.executable} -m portlint", help="command that runs portlint")
    ap.add_argument("--jobs", type=int, default=2, help="portlint --jobs")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds a scan may take")
    ap.add_argument("--project", action="append", default=[], help="only this project (repeatable; owner/name or name)")
    ap.add_argument("--json", type=Path, help="also write every number to this file")
    args = ap.parse_args(argv)
    if args.misses and args.split != "tune":
        ap.error("--misses lists the tune split only (--split tune): the check split stays unread")

    commits = load_jsonl(DATA / "commits.jsonl")
    labels = load_jsonl(DATA / "labels.jsonl")
    split_of = json.loads((DATA / "projects.json").read_text())["split"]
    for c in commits:
        if split_of.get(c["repo"]) != c["split"]:
            sys.exit(f"replay: {c['repo']} is {c['split']} in commits.jsonl but {split_of.get(c['repo'])} in projects.json")
    splits = ["tune", "check"] if args.split == "all" else [args.split]
    commits = [c for c in commits if c["split"] in splits]
    if args.project:
        commits = [c for c in commits if c["repo"] in args.project or c["project"] in args.project]

    command = args.portlint.split()
    run_dir = args.work / "runs" / time.strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    scanned: dict[tuple[str, str], list[Finding]] = {}

    def findings_at(repo: str, sha: str) -> tuple[Path, list[Finding]]:
        tree = materialize(args.mirror, args.work, repo, sha)
        if (repo, sha) not in scanned:
            started = time.perf_counter()
            scanned[(repo, sha)] = scan(tree, run_dir / f"{repo.replace('/', '+')}-{sha[:12]}.sarif",
                                        command, args.jobs, args.timeout)
            print(f"  {repo} {sha[:12]}: {len(scanned[(repo, sha)])} findings, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr)
        return tree, scanned[(repo, sha)]

    by_commit = collections.defaultdict(list)
    for label in labels:
        by_commit[(label["repo"], label["commit"])].append(label)

    recall = {s: collections.defaultdict(lambda: [0, 0]) for s in splits}   # split -> category -> [found, labels]
    alarms = {s: [0, 0] for s in splits}                                      # split -> [false alarms, added lines]
    missed, false_alarms, drift = [], [], []
    for c in commits:
        repo, split = c["repo"], c["split"]
        parent_tree, before = findings_at(repo, c["parent"])
        for label in by_commit[(repo, c["commit"])]:
            text = line_text(parent_tree, label["path"], label["line"])
            if hashlib.sha1(text.strip().encode()).hexdigest() != label["line_sha1"]:
                drift.append(label)
                continue
            hit = found(label, before)
            recall[split][label["category"]][0] += hit
            recall[split][label["category"]][1] += 1
            if not hit and split == "tune":
                near = sorted({f.rule for f in before if f.path == label["path"] and abs(f.start - label["line"]) <= 3})
                missed.append((label, text.strip(), near))
        child_tree, after = findings_at(repo, c["commit"])
        added = added_lines(gitdir_of(args.mirror, repo), c["parent"], c["commit"])
        alarms[split][1] += sum(len(v) for v in added.values())
        for f in after:
            if f.level in ("error", "warning") and f.start in added.get(f.path, ()):
                alarms[split][0] += 1
                if split == "tune":
                    false_alarms.append((c, f, line_text(child_tree, f.path, f.start).strip()))

    report = {"splits": {}}
    for split in splits:
        rows = recall[split]
        projects = sorted({c["repo"] for c in commits if c["split"] == split})
        n_commits = sum(1 for c in commits if c["split"] == split)
        print(f"\n== {split}: {n_commits} commits of {len(projects)} projects ({', '.join(p.split('/')[1] for p in projects)})")
        print(f"{'category':22} {'labels':>6} {'found':>6} {'recall':>7}")
        for cat in CATEGORIES:
            hit, total = rows.get(cat, [0, 0])
            if total:
                print(f"{cat:22} {total:6} {hit:6} {hit / total:7.2f}")
        named = [rows[c] for c in CATEGORIES if c != "other" and c in rows]
        hit, total = sum(r[0] for r in named), sum(r[1] for r in named)
        every = [rows[c] for c in rows]
        hit_all, total_all = sum(r[0] for r in every), sum(r[1] for r in every)
        print(f"{'all but other':22} {total:6} {hit:6} {hit / max(total, 1):7.2f}")
        print(f"{'all':22} {total_all:6} {hit_all:6} {hit_all / max(total_all, 1):7.2f}")
        fa, lines = alarms[split]
        print(f"false alarms on added lines: {fa} on {lines} added device/build lines = {1000 * fa / max(lines, 1):.2f} per 1,000")
        report["splits"][split] = {"commits": n_commits, "projects": projects,
                                   "recall": {c: {"found": r[0], "labels": r[1]} for c, r in rows.items()},
                                   "false_alarms": fa, "added_lines": lines}
    if drift:
        print(f"\n{len(drift)} labels no longer match their line (line_sha1): not scored", file=sys.stderr)
    if args.misses:
        print(f"\n== tune: {len(missed)} missed labels")
        for label, text, near in missed:
            hint = f"  [near: {', '.join(near)}]" if near else ""
            print(f"MISS {label['category']:18} {label['repo']}@{label['commit'][:8]} {label['path']}:{label['line']}"
                  f"  {text[:120]}  -- {label['reason']}{hint}")
        print(f"\n== tune: {len(false_alarms)} false alarms on added lines")
        for c, f, text in false_alarms:
            print(f"FALSE {f.rule:6} {f.level:7} {c['repo']}@{c['commit'][:8]} {f.path}:{f.start}  {text[:120]}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
