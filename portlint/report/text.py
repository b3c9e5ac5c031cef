"""Human output: `path:line:col: CODE [*] message`, the source line, and the rewrite."""

from __future__ import annotations

from collections import Counter

from portlint.finding import SAME_HAZARD, place_count, root_cause_groups
from portlint.fix import Applicability
from portlint.ruledocs import load_all

MAX_RELATED = 5  # related places listed under a finding; the rest counted
_COLORS = {"error": "31", "warning": "33", "note": "36", "code": "1", "dim": "2", "fix": "32"}
# How each kind of fix is introduced ("= fix: ..."); the HTML report uses the same words.
FIX_LABELS = {Applicability.SAFE: "fix", Applicability.UNSAFE: "unsafe fix", Applicability.DISPLAY_ONLY: "help"}


def _paint(text: str, what: str, color: bool) -> str:
    return f"\x1b[{_COLORS[what]}m{text}\x1b[0m" if color else text


def _marker(finding) -> str:
    fix = finding.fix
    if not fix.is_applicable:
        return ""
    return "[*] " if fix.applicability is Applicability.SAFE else "[~] "


def _headline(f, color: bool) -> str:
    loc = f.location
    code = _paint(f.code, f.severity.value, color)
    if loc is None:  # about the machine, not a file (`portlint doctor`)
        return f"{code} {_marker(f)}{f.message}"
    if not loc.has_region:
        return f"{loc.path}: {code} {_marker(f)}{f.message}"
    return f"{loc.path}:{loc.start_line}:{loc.start_column}: {code} {_marker(f)}{f.message}"


def other_places(f) -> str:
    """A grouped finding's other places in its file (one line a finding, every place that
    must change still named): ` (again at 5:25, 6:25)`."""
    again = [r.location for r in f.related
             if r.message == SAME_HAZARD and r.location is not None and f.location is not None
             and r.location.path == f.location.path]
    if not again:
        return ""
    shown = ", ".join(f"{loc.start_line}:{loc.start_column}" for loc in again[:MAX_PLACES_SHOWN])
    more = f" and {len(again) - MAX_PLACES_SHOWN} more" if len(again) > MAX_PLACES_SHOWN else ""
    return f" (again at {shown}{more})"


MAX_PLACES_SHOWN = 12  # of a grouped finding, on its concise line


def _not_checked(result) -> list[str]:
    """`portlint doctor`'s checks that could not run here, one line each."""
    if not result.skipped:
        return []
    docs = load_all()
    return ["Not checked:", *(f"  {s.code} {docs[s.code].name}: {s.reason}" for s in result.skipped)]


def render_concise(result, context) -> str:
    lines = [_headline(f, context.color) + other_places(f) for f in result.findings]
    lines.extend(_not_checked(result))
    if not context.quiet:
        lines.append(_summary(result, context))
    return "\n".join(lines) + "\n" if lines else ""


# Characters of a long line shown around a finding: generated and minified code has lines
# of megabytes, and printing one whole for each of its findings makes gigabytes of report.
SHOWN_WIDTH = 160


def _shown_line(line: str, start: int) -> tuple[str, str]:
    """(the line as shown, the part of it before column index `start`), tabs expanded; a
    window of `SHOWN_WIDTH` characters around `start`, marked with `…`, when it is longer."""
    if len(line) <= SHOWN_WIDTH:
        return line.expandtabs(4), line[:start].expandtabs(4)
    cut = min(max(0, start - SHOWN_WIDTH // 4), max(0, len(line) - SHOWN_WIDTH))
    lead = "…" if cut else ""
    tail = "…" if cut + SHOWN_WIDTH < len(line) else ""
    return lead + line[cut:cut + SHOWN_WIDTH].expandtabs(4) + tail, lead + line[cut:start].expandtabs(4)


def render(result, context) -> str:
    out = []
    for f in result.findings:
        loc = f.location
        if loc is None or not loc.has_region:
            out.append(_headline(f, context.color))
            label = FIX_LABELS[f.fix.applicability]
            out.append(f"  = {_paint(label, 'fix', context.color)}: {f.fix.title}")
            out.append("")
            continue
        gutter = " " * len(str(loc.start_line))
        out.append(_headline(f, context.color))
        snippet, prefix = _shown_line(loc.snippet, max(0, loc.start_column - 1))
        width = max(1, (loc.end_column - loc.start_column) if loc.end_line == loc.start_line else len(snippet) - len(prefix))
        width = min(width, max(1, len(snippet) - len(prefix)))
        out.append(f"{gutter} |")
        out.append(f"{loc.start_line} | {snippet}")
        out.append(f"{gutter} | {' ' * len(prefix)}{_paint('^' * width, f.severity.value, context.color)}")
        label = FIX_LABELS[f.fix.applicability]
        out.append(f"{gutter} = {_paint(label, 'fix', context.color)}: {f.fix.title}")
        for rel in f.related[:MAX_RELATED]:
            r = rel.location
            out.append(f"{gutter} = note: {r.path}:{r.start_line}:{r.start_column}: {rel.message}")
        if len(f.related) > MAX_RELATED:
            out.append(f"{gutter} = note: and {len(f.related) - MAX_RELATED} more places (all of them in JSON and SARIF)")
        out.append("")
    if result.skipped:
        out.extend([*_not_checked(result), ""])
    if context.quiet:
        return "\n".join(out) + "\n" if out else ""
    out.append(_summary(result, context))
    return "\n".join(out) + "\n"


def _summary(result, context) -> str:
    findings = result.findings
    parts = []
    if context.fixed:
        parts.append(f"Fixed {context.fixed} finding{'s' if context.fixed != 1 else ''}.")
    # A rule that crashed or a file past the budget: what was not analysed may hold hazards.
    incomplete = getattr(result, "has_internal_error", False) or getattr(result, "timed_out", False)
    if not findings and incomplete:
        parts.append("The scan is incomplete (standard error says what was left out); no port hazards in the rest.")
    elif not findings:
        parts.append("No port hazards found.")
        if not result.files and not result.skipped:  # not `doctor`, which reads no files
            parts.append("0 files scanned: none of a kind portlint reads, or all excluded.")
    else:
        by_sev = Counter(f.severity.value for f in findings)
        counts = ", ".join(f"{by_sev[s]} {s}{'s' if by_sev[s] != 1 else ''}" for s in ("error", "warning", "note") if by_sev[s])
        parts.append(f"Found {len(findings)} port hazard{'s' if len(findings) != 1 else ''} ({counts}).")
        fixable = [f for f in findings if f.fix.is_applicable and f.path not in context.not_fixed]
        safe = sum(1 for f in fixable if f.fix.applicability is Applicability.SAFE)
        unsafe = sum(1 for f in fixable if f.fix.applicability is Applicability.UNSAFE)
        if safe:
            parts.append(f"[*] {safe} fixable with `portlint scan --fix`.")
        if unsafe:
            parts.append(f"[~] {unsafe} more with `--fix --unsafe-fixes`.")
    if result.suppressed:
        parts.append(f"{result.suppressed} suppressed.")
    if result.baselined:
        parts.append(f"{result.baselined} in the baseline.")
    if result.skipped:
        parts.append(f"{len(result.skipped)} not checked.")
    not_built = len(result.not_built)
    if not_built:
        parts.append(f"{not_built} file{'s are' if not_built != 1 else ' is'} not compiled for ROCm"
                     " (`--show-not-built` lists them).")
    return " ".join(parts)


def render_statistics(result, context) -> str:
    """A line per rule: its findings, the places they cover (a finding and its related
    locations), its root causes (`finding.root_cause_groups`), whether some fix applies, and the name."""
    docs = load_all()
    counts = Counter(f.code for f in result.findings)
    places = Counter()
    for f in result.findings:
        places[f.code] += place_count(f)
    # `[*]`: some finding of the rule has a safe fix (`--fix` applies it); `[~]`: only unsafe ones.
    fixes = {}
    for f in result.findings:
        if f.fix.is_applicable and f.path not in context.not_fixed:
            fixes.setdefault(f.code, set()).add(f.fix.applicability)
    lines = [f"{'found':>5}  {'places':>6}  {'roots':>5}  rule"] if counts else []
    roots = Counter(members[0].code for members in root_cause_groups(result.findings))
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        offered = fixes.get(code, ())
        mark = "[*]" if Applicability.SAFE in offered else "[~]" if offered else "   "
        lines.append(f"{n:>5}  {places[code]:>6}  {roots[code]:>5}  {code}  {mark} {docs[code].name}")
    if counts:
        lines.append(f"{len(result.findings):>5}  {sum(places.values()):>6}  {sum(roots.values()):>5}  "
                     f"(findings, places, root causes: {len(result.findings) / max(1, sum(roots.values())):.2f} "
                     "findings per root cause)")
    if not context.quiet:
        lines.append(_summary(result, context))
    return "\n".join(lines) + "\n"
