"""Every regular expression portlint runs over file content takes time linear in its input.

One pattern that backtracked exponentially on a `////` banner made a scan of a 12 KB header
never finish. This test finds every pattern portlint has, by three routes:

- the compiled patterns its modules hold (module globals, class attributes, containers, and
  the trigger conditions of `@needs` declarations: `portlint/triggers.py` keeps patterns
  inside `any_of`/`all_of`);
- `re.compile/search/match/...` calls with a literal pattern anywhere in its sources (`ast`);
- the `#match?` predicates of tree-sitter query sources (regexes run over node text).

Each pattern runs the way portlint uses it: `match`/`fullmatch` where every use of its name
calls only those (they try one start position), else every match to the end (what `search`,
`sub`, `findall` and `finditer` pay at most). The inputs are adversarial, 8 KiB and 64 KiB
of: runs of `/`, `*`, unclosed `/*`, blanks, line continuations, digits, `0x`, `'`,
identifiers, `<`/`>`, parentheses, `${`/`$(`, and the pattern's own literals repeated or
followed by a long run. 64 KiB must take at most `SLACK` x 8 the 8 KiB time (best of
several runs, three tries), plus an absolute floor so that noise cannot fail it; a quadratic
pattern takes 64x, an exponential one never ends. Each input is tried at 1 KiB -> 8 KiB
first, so a quadratic pattern is reported without a minutes-long 64 KiB run. The timing
runs in a child process that reports each case before it starts, so a pattern that hangs
is named when the time limit ends it.
"""

from __future__ import annotations

import ast
import functools
import gc
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import portlint
from portlint.triggers import Trigger

try:  # Python 3.11 names it re._parser; older ones sre_parse
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

PACKAGE = Path(portlint.__file__).resolve().parent
SMALL, LARGE = 8 * 1024, 64 * 1024
SLACK = 3  # 64 KiB may take 3 x 8 = 24 times the 8 KiB time (a quadratic pattern takes 64)
FLOOR = 0.004  # seconds: below this at 64 KiB a pattern passes without a second look
HANG_LIMIT = 120  # seconds for the whole child process (it normally needs a few)

# Calls that compile a pattern from a value known only at run time, inside a function; each
# is covered another way (module-level patterns built by the same code, or `#match?`).
DYNAMIC_SITES = {
    ("triggers.py", "b'(?=[' + re.escape(first) + b'])(?:' + pattern + b')'"):
        "leading: called at module level only, its patterns are in the inventory",
    ("checks/wavefront.py", "'|'.join((_at_token_start(s) for s in spellings)).encode()"):
        "_literal_pattern: its module-level uses (W001 and W003 triggers) are in the inventory",
    ("checks/wavefront.py", "_word_starts(*starts).encode()"):
        "_word_start_trigger: called at module level only, its patterns are triggers' atoms in the inventory",
    ("queries.py", "args[0]"): "the `#match?` argument of a query source: collected from the sources",
    ("discover.py", "'|'.join((_unnamed_groups(p.regex.pattern) for p in patterns))"):
        "pathspec's own regexes of the exclude and .gitignore globs, joined: run over paths, not file content",
    ("checks/wavefront.py", "b'\\\\b' + re.escape(name) + b'\\\\b'"): "an escaped name between word boundaries: a literal",
    ("checks/numerics.py", "b'\\\\bstruct\\\\s+' + name.encode() + b'\\\\s*\\\\{'"):
        "an identifier (a type name the file declares) between single blank runs: linear",
    ("deep/translation_unit.py", "f'#define\\\\s+HIP_VERSION_{part}\\\\s+(\\\\d+)'"):
        "two fixed names (MAJOR, MINOR) in a linear pattern, run on one HIP header",
}

_RE_FUNCTIONS = ("compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")


# ---- the inventory -------------------------------------------------------------------------
def _modules():
    for info in pkgutil.walk_packages(portlint.__path__, "portlint."):
        if info.name.endswith("__main__"):  # runs the command line on import
            continue
        yield importlib.import_module(info.name)


def _patterns_in(value, seen: set[int], depth: int = 0):
    """The compiled patterns in a value: itself, a container's items, a trigger's atoms, the
    trigger a `@needs` declaration hung on a check function."""
    if isinstance(value, re.Pattern):  # every time: each holder may run it differently
        yield value
        return
    if id(value) in seen or depth > 8:
        return
    seen.add(id(value))
    if isinstance(value, Trigger):
        for atom in value.atoms():
            yield from _patterns_in(atom, seen, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _patterns_in(key, seen, depth + 1)
            yield from _patterns_in(item, seen, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _patterns_in(item, seen, depth + 1)
    elif callable(value) and isinstance(getattr(value, "needs", None), Trigger):
        yield from _patterns_in(value.needs, seen, depth + 1)


def _query_sources_in(value, seen: set[int], depth: int = 0):
    if id(value) in seen or depth > 4:
        return
    seen.add(id(value))
    if isinstance(value, str) and "#match?" in value:
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _query_sources_in(key, seen, depth + 1)
            yield from _query_sources_in(item, seen, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _query_sources_in(item, seen, depth + 1)


_MATCH_PREDICATE = re.compile(r'#match\?\s+@[\w.-]+\s+("(?:[^"\\]|\\.)*")')


def _match_predicates(source: str) -> list[str]:
    from portlint.queries import _unquote
    return [_unquote(m.group(1)) for m in _MATCH_PREDICATE.finditer(source)]


def _flags_of(node) -> int:
    """The value of a flags argument written as `re.I | re.S` (0 when it is something else)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return int(getattr(re, node.attr, 0))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags_of(node.left) | _flags_of(node.right)
    return 0


_ANCHORED = frozenset({"match", "fullmatch"})  # methods that try one start position


def _calls_in_sources():
    """What portlint's sources do with patterns, read with `ast`:
    - (label, pattern source, flags, method) of each `re.<function>(LITERAL, ...)` call;
    - (path, argument source) of each such call inside a function whose pattern is not a literal;
    - {name: methods called on it} for `NAME.method(...)` and `module.NAME.method(...)`."""
    literal, dynamic, methods = [], [], {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
        inside = {id(c) for f in functions for c in ast.walk(f)}
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            receiver = node.func.value
            name = receiver.id if isinstance(receiver, ast.Name) else (
                receiver.attr if isinstance(receiver, ast.Attribute) else None)
            if name is not None and name != "re":
                methods.setdefault(name, set()).add(node.func.attr)
            if not (name == "re" and node.func.attr in _RE_FUNCTIONS and node.args):
                continue
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, (str, bytes)):
                flags = 0
                position = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2,
                            "split": 3, "sub": 4, "subn": 4}[node.func.attr]
                if len(node.args) > position:
                    flags = _flags_of(node.args[position])
                for keyword in node.keywords:
                    if keyword.arg == "flags":
                        flags = _flags_of(keyword.value)
                literal.append((f"portlint/{relative}:{node.lineno}", argument.value, flags, node.func.attr))
            elif id(node) in inside:
                dynamic.append((relative, ast.unparse(argument)))
    return literal, dynamic, methods


@functools.cache
def inventory() -> list[tuple[str, re.Pattern, frozenset[str]]]:
    """(where it is, compiled pattern, how it is run) for every distinct pattern portlint has.
    How: {"match"}/{"fullmatch"} when that is all portlint does with it, else {"finditer"}."""
    literal, _, methods_of = _calls_in_sources()
    found: dict[tuple, str] = {}
    compiled: dict[tuple, re.Pattern] = {}
    ops: dict[tuple, set[str]] = {}

    def add(label: str, pattern: re.Pattern, methods=frozenset()) -> None:
        key = (pattern.pattern, pattern.flags)
        if key not in found:
            found[key], compiled[key], ops[key] = label, pattern, set()
        ops[key] |= set(methods) if methods and set(methods) <= _ANCHORED else {"finditer"}

    seen: set[int] = set()
    query_seen: set[int] = set()
    for module in _modules():
        for name, value in list(vars(module).items()):
            owners = [(f"{module.__name__}.{name}", name, value)]
            if inspect.isclass(value) and value.__module__ == module.__name__:
                owners += [(f"{module.__name__}.{name}.{attr}", attr, item) for attr, item in vars(value).items()]
            for label, short_name, item in owners:
                for pattern in _patterns_in(item, seen):
                    # Only a pattern held by the name itself is run by that name's methods.
                    add(label, pattern, methods_of.get(short_name, ()) if pattern is item else ())
                for source in _query_sources_in(item, query_seen):
                    for predicate in _match_predicates(source):
                        add(f"{label} (#match? in a query)", re.compile(predicate))
    from portlint import queries
    for lang, table in queries._SHARED.items():
        for source in table:
            for predicate in _match_predicates(source):
                add(f"a shared {lang} query (#match?)", re.compile(predicate))
    for label, source, flags, function in literal:
        pattern = re.compile(source, flags)
        if function == "compile" and (pattern.pattern, pattern.flags) in found:
            continue  # a module-level pattern: the walk saw how its name is used
        add(label, pattern, () if function == "compile" else {function})
    return [(label, compiled[key], frozenset(ops[key])) for key, label in found.items()]


# ---- adversarial inputs --------------------------------------------------------------------
# Units repeated to the input size: what makes comment, blank, number, identifier, template,
# call and CMake/Make-variable patterns backtrack.
_UNITS = (
    "/", "*", "/*", "//", "/" * 80 + "\n", " ", " \t\r\n", "\\\n", " \\\r\n",
    "1", "0", "0x", "1'", "0'", "'", "a", "_", "A_", "<", ">", "<<", ">>", "(", ")",
    "${", "$(", '"', '\\"', "`", "[", "-D", "#", ".",
)


def _literals(pattern: re.Pattern) -> list[str]:
    """Runs of literal characters in the pattern (its own words: `thread`, `>>`, `1`;
    look-arounds match nothing, so they do not end a run): first those an unbounded repeat
    follows (repeating them makes each a new start that scans on), then the pattern's first,
    then the longest."""
    runs: dict[str, int] = {}  # run -> priority, lower first
    unbounded = (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None))

    def note(run: str, before_repeat: bool) -> None:
        priority = 0 if before_repeat else (1 if not runs else 2)
        runs[run] = min(priority, runs.get(run, priority))

    def walk(items, before_repeat: bool = False) -> None:
        """`before_repeat`: an unbounded repeat follows these items."""
        run = ""
        items = list(items)
        for at, (op, arg) in enumerate(items):
            if op is sre_parse.LITERAL:
                run += chr(arg)
                continue
            if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT, sre_parse.AT):
                continue
            next_op = items[at + 1] if at + 1 < len(items) else None
            next_repeats = (before_repeat if next_op is None else
                            next_op[0] in unbounded and next_op[1][1] == sre_parse.MAXREPEAT)
            if run:
                note(run, op in unbounded and arg[1] == sre_parse.MAXREPEAT)
                run = ""
            if op is sre_parse.SUBPATTERN:
                walk(arg[-1], next_repeats)
            elif op in unbounded:
                walk(arg[2], next_repeats)
            elif op is getattr(sre_parse, "ATOMIC_GROUP", None):
                walk(arg, next_repeats)
            elif op is sre_parse.BRANCH:
                for branch in arg[1]:
                    walk(branch, next_repeats)
        if run:
            note(run, before_repeat)

    source = pattern.pattern.decode("latin-1") if isinstance(pattern.pattern, bytes) else pattern.pattern
    walk(sre_parse.parse(source, pattern.flags & ~re.UNICODE if isinstance(pattern.pattern, bytes) else pattern.flags))
    return sorted(runs, key=lambda r: (runs[r], -len(r), r))


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def adversarial_inputs(pattern: re.Pattern, size: int) -> list[tuple[str, str | bytes]]:
    """(name, input) pairs of `size` characters, bytes for a bytes pattern."""
    cases = [(f"{unit!r} repeated", _repeat(unit, size)) for unit in _UNITS]
    cases.append(("nested parentheses", "(" * (size // 2) + "x" + ")" * (size // 2 - 1)))
    cases.append(("nested ${", "${" * (size // 4) + "A" + "}" * (size // 4)))
    for word in _literals(pattern)[:5]:
        cases.append((f"{word!r} repeated", _repeat(word, size)))
        for tail in (" ", "/", "a"):  # a literal, then blanks, a `////` banner, a long name
            cases.append((f"{word!r} then {tail!r} repeated", word + _repeat(tail, size - len(word))))
    if isinstance(pattern.pattern, bytes):
        return [(name, text.encode("latin-1")) for name, text in cases]
    return cases


# ---- measurement (in the child process) ----------------------------------------------------
def _run_time(pattern: re.Pattern, ops: frozenset[str], data, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        if "finditer" in ops:  # every match to the end; `subn` walks them in C (a Python loop
            pattern.subn(data[:0], data)  # over finditer grows superlinearly with the count itself)
        else:
            for op in ops:
                getattr(pattern, op)(data)
        best = min(best, time.perf_counter() - start)
    return best


def _superlinear(pattern: re.Pattern, ops: frozenset[str], small, large) -> tuple[float, float] | None:
    """(small time, large time) if `large` took more than SLACK x the linear share, in each
    of three tries (a busy machine can stall one), else None."""
    if _run_time(pattern, ops, large, 1) <= FLOOR:
        return None
    for _ in range(3):
        t_small = _run_time(pattern, ops, small, 5)
        t_large = _run_time(pattern, ops, large, 3)
        if t_large <= SLACK * (len(large) / len(small)) * t_small + FLOOR:
            return None
    return t_small, t_large


def measure() -> None:
    """Print one JSON line before each case ("start") and one per non-linear case ("slow").
    Each input is tried at 1 KiB -> 8 KiB first: a quadratic pattern that shows there is
    reported without waiting minutes for its 64 KiB run."""
    gc.disable()  # a collection inside one timed run is noise
    cases = 0
    for label, pattern, ops in inventory():
        by_size = {size: adversarial_inputs(pattern, size) for size in (SMALL // 8, SMALL, LARGE)}
        for index, (name, _) in enumerate(by_size[LARGE]):
            print(json.dumps({"start": label, "pattern": repr(pattern.pattern), "input": name}), flush=True)
            cases += 1
            for small, large in ((SMALL // 8, SMALL), (SMALL, LARGE)):
                slow = _superlinear(pattern, ops, by_size[small][index][1], by_size[large][index][1])
                if slow:
                    print(json.dumps({"slow": label, "pattern": repr(pattern.pattern), "input": name, "ops": sorted(ops),
                                      "sizes": [small, large], "times": slow}), flush=True)
                    break
    print(json.dumps({"done": cases}), flush=True)


# ---- the tests -----------------------------------------------------------------------------
def test_every_pattern_is_linear() -> None:
    child = subprocess.Popen([sys.executable, __file__], stdout=subprocess.PIPE, text=True)
    try:
        out, _ = child.communicate(timeout=HANG_LIMIT)
    except subprocess.TimeoutExpired:
        child.kill()
        out, _ = child.communicate()
        last = [json.loads(line) for line in out.splitlines() if line.startswith("{")][-1]
        pytest.fail(f"no result after {HANG_LIMIT} s: {last.get('start')} {last.get('pattern')} on {last.get('input')}")
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert child.returncode == 0 and lines and "done" in lines[-1], out[-2000:]
    slow = [line for line in lines if "slow" in line]
    assert not slow, "not linear:\n" + "\n".join(
        f"  {s['slow']} {s['pattern']} ({'/'.join(s['ops'])}) on {s['input']}: {s['times'][0]:.4f} s at {s['sizes'][0]} bytes,"
        f" {s['times'][1]:.4f} s at {s['sizes'][1]}" for s in slow)


def test_inventory_reaches_every_route() -> None:
    """The collector finds patterns of each kind (so a broken walk cannot pass vacuously)."""
    found = inventory()
    labels = {label for label, _, _ in found}
    assert "portlint.checks.wavefront._NARROW_SHIFT" in labels  # a module-level pattern
    assert any("_W001_TRIGGER" in label for label in labels)  # inside a trigger's all_of/any_of
    assert any("#match?" in label for label in labels)  # a tree-sitter query predicate
    assert any(label.startswith("portlint/checks/") and ":" in label for label in labels)  # a literal call
    assert len(labels) > 100
    how = {label: ops for label, _, ops in found}
    assert how["portlint.checks.cmake._LIBRARY_VARIABLE"] == {"fullmatch"}  # only ever fullmatch-ed
    assert how["portlint.checks.wavefront._NARROW_SHIFT"] == {"finditer"}  # a trigger: searched


BANNERS = PACKAGE.parent / "fixtures" / "adversarial" / "comment_banners.cuh"


def test_comment_banner_header_scans() -> None:
    """The header shape that hung a scan: `1` and `0` before long runs of `////` banners
    with no `<<`, and `return x >>`, a banner, `2;`. The triggers of W001 and W003 must reach
    their patterns here (so the scan runs them), and the scan must end (a generous guard;
    the time itself is measured by the linear test above)."""
    from portlint.checks import wavefront
    data = BANNERS.read_bytes()
    assert wavefront._NARROW_SHIFT.search(data) and wavefront._SHIFT_BY_5.search(data)
    try:
        done = subprocess.run([sys.executable, "-m", "portlint", "scan", str(BANNERS), "--no-cache", "--exit-zero"],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`portlint scan {BANNERS.name}` did not finish in 60 s")
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr


def test_a_leading_class_changes_no_match() -> None:
    """A pattern given a leading class of its first bytes (`triggers.leading`) matches where
    the pattern alone does: over every fixture, and its literals alone, quoted and in pairs
    (a first byte left out of the class would lose the matches that start with it)."""
    prefix = re.compile(rb"\(\?=\[((?:\\.|[^\]\\])+)\]\)\(\?:")
    led = [(label, pattern) for label, pattern, _ in inventory()
           if isinstance(pattern.pattern, bytes) and prefix.match(pattern.pattern)]
    assert len(led) >= 3, "the inventory no longer finds the patterns built by `leading`"
    texts = [p.read_bytes() for p in (PACKAGE.parent / "fixtures").rglob("*") if p.is_file()]
    for label, pattern in led:
        alone = re.compile(pattern.pattern[prefix.match(pattern.pattern).end():-1], pattern.flags)
        # (each literal as written, and in the cases a case-insensitive group also matches)
        literals = sorted({form for literal in _literals(alone)
                           for form in (literal, literal.upper(), literal.capitalize())})
        samples = texts + [f"x {literal}\n '{literal}'x \"{literal}\"x".encode() for literal in literals] + [
            f"{a}{b} .{a}_{b} '{a}'{b} \"{a}\"{b}".encode() for a in literals for b in literals]
        for text in samples:
            assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in alone.finditer(text)], label


def test_dynamic_patterns_are_accounted_for() -> None:
    """A pattern compiled inside a function from a run-time value is invisible to the walk:
    each such call must say in DYNAMIC_SITES how it is covered."""
    _, dynamic, _ = _calls_in_sources()
    unknown = [site for site in dynamic if site not in DYNAMIC_SITES]
    assert not unknown, f"add these to DYNAMIC_SITES with how their patterns are covered: {unknown}"


if __name__ == "__main__":
    measure()
