"""Where a scan's time goes, by phase and by rule: one in-process scan (`--jobs 1`, no
budget, no cache) of a real project with each phase's functions wrapped in a timer.

    python bench/profile_real.py /work/rc                 # the dev set
    python bench/profile_real.py DIR --cprofile 40        # and cProfile's top 40 (cumulative)
    python bench/profile_real.py DIR --cache-dir C        # with a cache (run twice: warm)

Phases (CPU seconds, `time.process_time`, inclusive of what they call): discovery and the
build model (the main process's macro walk), reading, parsing (tree-sitter, the first time
a file's tree is asked for), the ROCm-path model, each per-file rule, project facts,
suppression comments, each project rule, and the rest (the engine, the report's filters).
Nested phases are not double counted: a phase's time excludes the phases it calls.
Prints a table; a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from portlint import build_model, discover, engine, queries, rocm_path, source, suppress  # noqa: E402
from portlint.checks import facts as project_facts  # noqa: E402
from portlint.cli import _load_config  # noqa: E402
from portlint.registry import REGISTRY  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)
_stack: list[list] = []  # [phase, started, time spent in nested phases]


def timed(phase: str, function):
    def wrapper(*args, **kwargs):
        frame = [phase, time.process_time(), 0.0]
        _stack.append(frame)
        try:
            return function(*args, **kwargs)
        finally:
            _stack.pop()
            total = time.process_time() - frame[1]
            SPENT[phase] += total - frame[2]
            CALLS[phase] += 1
            if _stack:
                _stack[-1][2] += total

    wrapper.__wrapped__ = function
    return wrapper


def instrument() -> None:
    engine.discover = timed("discover", engine.discover)
    build_model.build = timed("build files (main process)", build_model.build)
    macros = build_model.BuildMacros
    macros.walk_all = timed("macro walk (main process)", macros.walk_all)
    build_model.BuildModel.environment = timed("macro environment (per file)", build_model.BuildModel.environment)
    engine.read_source = timed("read", engine.read_source)
    tree = source.SourceFile.__dict__["tree"]
    parse = queries.parse_indexed

    def parse_timed(lang, data):
        return timed("parse (tree-sitter)", parse)(lang, data)

    source.queries.parse_indexed = parse_timed
    del tree
    rocm_path.build = timed("ROCm-path model", rocm_path.build)
    engine.rocm_path = rocm_path
    project_facts.collect = timed("project facts", project_facts.collect)
    engine.project_facts = project_facts
    suppress.parse = timed("suppressions", suppress.parse)
    for code, entry in REGISTRY.items():
        for key, check in list(entry.items()):
            if callable(check):
                phase = f"project rule {code}" if key == "project" else f"rule {code}"
                entry[key] = timed(phase, check)
                if hasattr(check, "__dict__"):
                    entry[key].__dict__.update({k: v for k, v in check.__dict__.items() if k != "__wrapped__"})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--cprofile", type=int, metavar="N", help="also print cProfile's top N functions")
    parser.add_argument("--sort", default="cumulative", help="cProfile's order: cumulative (default) or tottime")
    parser.add_argument("--top", type=int, default=30, help="phases listed (default 30)")
    parser.add_argument("--cache-dir", type=Path, help="scan with this cache (a warm scan, when filled)")
    args = parser.parse_args()
    top = args.dir.resolve()
    instrument()
    config = _load_config(None, top, None, None, None, None).with_overrides(timeout=0)
    profiler = cProfile.Profile() if args.cprofile else None
    cpu, wall = time.process_time(), time.perf_counter()
    if profiler:
        profiler.enable()
    frame = ["the rest (engine, filters)", cpu, 0.0]
    _stack.append(frame)
    result = engine.scan([top], config, jobs=1, cache_dir=args.cache_dir)
    _stack.pop()
    if profiler:
        profiler.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    SPENT[frame[0]] += cpu - frame[2]
    print(f"{top}: {len(result.files)} files, {len(result.findings)} findings; {cpu:.2f} s CPU, {wall:.2f} s wall"
          f" (timers add a little)")
    rows = sorted(SPENT.items(), key=lambda kv: -kv[1])
    print(f"  {'phase':<40}{'CPU s':>8}{'share':>8}{'calls':>8}")
    for phase, seconds in rows[:args.top]:
        print(f"  {phase:<40}{seconds:>8.2f}{seconds / cpu * 100:>7.1f}%{CALLS.get(phase, 1):>8}")
    rules = sum(s for p, s in SPENT.items() if p.startswith("rule "))
    print(f"  {'all per-file rules':<40}{rules:>8.2f}{rules / cpu * 100:>7.1f}%")
    if profiler:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
