"""The port-readiness report: one self-contained HTML page for the people planning a port.

It opens with a verdict and the top blockers grouped by impact (will not compile, wrong
results, slower, build: each rule's `impact`), then when, on which commit and with which
configuration it was made; headline counts, findings per rule family and per directory two
levels deep (inline SVG bar charts), the worst files, an effort estimate with its model
stated and split by top-level directory, the findings per file (most severe first, each file collapsible; at most
`MAX_DETAILED` in detail, so a huge scan stays a page a browser opens), and the
documentation of each rule found, rendered from `rules/*.md`.

The page loads nothing: inline CSS and SVG, no script, and a Content-Security-Policy that
forbids any fetch, so it can be mailed or attached to a ticket. Findings quote source text,
so every string from a finding or a rule doc goes through `html.escape`.
"""

from __future__ import annotations

import html
import math
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath

from portlint import __version__
from portlint.finding import Severity, count_root_causes, root_cause_groups
from portlint.fix import Applicability
from portlint.report import printable
from portlint.report.text import FIX_LABELS
from portlint.ruledocs import IMPACTS, load_all

# The family letter opens every rule code (`RuleDoc.family`).
FAMILIES = {
    "W": "Wavefront",
    "P": "Preprocessor",
    "K": "Launch",
    "M": "Memory",
    "A": "Assembly",
    "N": "Numerics",
    "R": "Runtime",
    "L": "Libraries",
    "B": "Build flags",
    "C": "CMake",
    "Y": "setup.py",
    "D": "Machine",
}
SEVERITIES = (Severity.ERROR, Severity.WARNING, Severity.NOTE)
# Ranks the worst files: one error outweighs two warnings.
SCORE = {Severity.ERROR: 5, Severity.WARNING: 2, Severity.NOTE: 1}
WORST_FILES = 15
CHART_ROWS = 15  # directories drawn at most
CHART_DEPTH = 2  # directory levels of the chart
MAX_DETAILED = 2000  # findings shown one by one (27,000 made a 15.8 MB page); the rest counted
TOP_BLOCKERS = 5  # rules listed per impact in the verdict
EFFORT_DIRECTORIES = 20  # top-level directories in the effort table

# Families whose findings sit in device code: a hand rewrite there means changing a kernel
# and testing it on an AMD GPU, which is what makes a port slow.
DEVICE_FAMILIES = frozenset("WKMA")
HOURS_PER_DAY = 6  # focused hours in a person-day


@dataclass(unsafe_hash=True)
class EffortClass:
    label: str
    low: int  # minutes per finding
    high: int


# The effort model, shown on the page as a table: minutes per finding, as a range.
EFFORT = {
    "safe": EffortClass("Safe fix: `portlint scan --fix`, then a glance at the diff", 0, 1),
    "unsafe": EffortClass("Unsafe fix: `--fix --unsafe-fixes`, each edit reviewed", 5, 15),
    "device-error": EffortClass("Hand rewrite of an error in device code (W, K, M, A): change the kernel, "
                                "test it on AMD", 120, 480),
    "error": EffortClass("Hand rewrite of any other error (preprocessor, runtime, libraries, build)", 30, 120),
    "warning": EffortClass("Hand rewrite of a warning", 15, 90),
    "note": EffortClass("Hand rewrite of a note", 5, 30),
}


def effort_class(finding) -> str:
    fix = finding.fix
    if fix.is_applicable:
        return "safe" if fix.applicability is Applicability.SAFE else "unsafe"
    if finding.severity is Severity.ERROR:
        return "device-error" if finding.code[:1] in DEVICE_FAMILIES else "error"
    return finding.severity.value


def effort_minutes(findings) -> tuple[int, int]:
    classes = [EFFORT[effort_class(f)] for f in findings]
    return sum(c.low for c in classes), sum(c.high for c in classes)


def person_days(low_minutes: int, high_minutes: int) -> str:
    """A range rounded outwards to half days (whole days from ten on): no false precision."""
    def days(minutes: int, rounding) -> float:
        d = minutes / 60 / HOURS_PER_DAY
        step = 1 if d >= 10 else 0.5
        return rounding(d / step) * step

    low, high = days(low_minutes, math.floor), days(high_minutes, math.ceil)
    if high == 0:
        return "no person-days"
    return f"{low:g}–{high:g} person-days"


def _hours(minutes: float) -> str:
    if minutes < 60:
        return f"{minutes:g} min"
    hours = minutes / 60
    return (f"{hours:.0f}" if hours >= 10 else f"{hours:.1f}".removesuffix(".0")) + " h"


def _range(low: int, high: int) -> str:
    """`0–2 min`, `30 min–2 h`, `2–8 h`: the unit once when both ends share it."""
    if high == 0:
        return "–"
    a, b = _hours(low), _hours(high)
    if a.split()[1] == b.split()[1]:
        return f"{a.split()[0]}–{b}"
    return f"{a}–{b}"


# ---- page -----------------------------------------------------------------------


def render(result, context) -> str:
    """The whole page for a `ScanResult` (pure: no I/O but the rule docs, no clock)."""
    docs = load_all()
    findings = result.findings
    base = _base_dir([*result.files, *(f.path for f in findings if f.path)])
    by_file: dict[str, list] = defaultdict(list)
    for f in findings:
        by_file[f.path].append(f)
    file_ids = {path: f"file-{i}" for i, path in enumerate(sorted(by_file), start=1)}
    title = f"Port-readiness report: {base if str(base) != '.' else context.root.name}"
    body = [
        f"<header><h1>{_e(title)}</h1><p class='sub'>Hazards a CUDA → ROCm/HIP port meets, found by "
        f"portlint {_e(__version__)}. Each finding links to its rule's documentation below.</p></header>",
        _verdict(findings, docs),
        _provenance(context),
        _headline(result),
        _effort(findings, base),
        _charts(findings, base),
        _family_table(findings, docs),
        _worst_files(by_file, file_ids),
        _problems(result),
        _findings(by_file, file_ids, docs),
        _rules(sorted({f.code for f in findings}), docs),
    ]
    return PAGE.format(title=_e(title), css=CSS, body="\n".join(b for b in body if b))


def _e(text) -> str:
    return html.escape(printable(str(text)), quote=True)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _by_severity(findings) -> str:
    """`75 errors, 1,128 warnings`: every count of findings on the page is a count per severity."""
    sev = _severity_counts(findings)
    return ", ".join(f"<span class='{s.value}'>{_plural(sev[s], s.value)}</span>" for s in SEVERITIES if sev[s])


def _severity_counts(findings) -> Counter:
    return Counter(f.severity for f in findings)


def _verdict(findings, docs) -> str:
    """The answer first: can this code be built and trusted on ROCm, and what stops it."""
    by_impact: dict[str, list] = defaultdict(list)
    for f in findings:
        by_impact[docs[f.code].impact].append(f)
    loud = [f for f in findings if f.severity is not Severity.NOTE]
    if any(f.severity is Severity.ERROR for f in by_impact["compile"]):
        verdict, cls = "Not ready: the ROCm build fails until the compile blockers below are rewritten.", "error"
    elif any(f.severity is not Severity.NOTE for f in by_impact["results"]):
        verdict, cls = "Not ready: it may build, but kernels can compute wrong results or fail on AMD GPUs.", "error"
    elif loud:
        verdict, cls = "Nearly ready: the build configuration and slower paths below need work.", "warning"
    elif findings:
        verdict, cls = "Ready, with tuning notes: nothing found stops a ROCm build or changes results.", "note"
    else:
        verdict, cls = "Ready: no port hazard found.", "ok"
    groups = []
    for impact, label in IMPACTS.items():
        fs = by_impact.get(impact)
        if not fs:
            continue
        per_rule = Counter(f.code for f in fs)
        roots = Counter(members[0].code for members in root_cause_groups(fs))
        worst = {code: min(f.severity.rank * -1 for f in fs if f.code == code) for code in per_rule}
        ranked = sorted(per_rule, key=lambda c: (worst[c], -per_rule[c], c))
        rows = "".join(
            f"<li><a class='code' href='#rule-{_e(c)}'>{_e(c)}</a> <code>{_e(docs[c].name)}</code>: "
            f"{_by_severity([f for f in fs if f.code == c])}{_of_roots(per_rule[c], roots[c])} — "
            f"{_inline(docs[c].summary, links=False)}</li>"
            for c in ranked[:TOP_BLOCKERS]
        )
        more = len(ranked) - TOP_BLOCKERS
        rest = f"<li class='more'>and {_plural(more, 'more rule')}</li>" if more > 0 else ""
        # Counted by severity, as the headline's cards are: the errors of all groups add up to its Errors.
        groups.append(f"<div class='impact {impact}'><h3>{_e(label)} <span class='counts'>"
                      f"{_by_severity(fs)}</span></h3><ul>{rows}{rest}</ul></div>")
    return (f"<section id='verdict' class='verdict {cls}'><p class='answer'>{_e(verdict)}</p>"
            + ("<h2>Top blockers by impact</h2>" + "".join(groups) if groups else "") + "</section>")


def _provenance(context) -> str:
    """When, on what and how the scan ran, so a report read later can be trusted or redone."""
    items = [("Generated", context.generated or "—"), ("Commit", context.commit or "not a git checkout"),
             ("Configuration", context.configuration or "defaults")]
    cells = "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in items)
    return f"<section id='provenance' aria-label='Provenance'><dl>{cells}</dl></section>"


def _of_roots(findings: int, roots: int) -> str:
    """`, 3 root causes` where findings share causes (a constant's uses, a file's library)."""
    return f" ({_plural(roots, 'root cause')})" if roots != findings else ""


def _headline(result) -> str:
    findings = result.findings
    sev = _severity_counts(findings)
    safe = sum(1 for f in findings if effort_class(f) == "safe")
    unsafe = sum(1 for f in findings if effort_class(f) == "unsafe")
    cards = [
        ("files", "Files scanned", len(result.files)),
        ("findings", "Findings", len(findings)),
        ("roots", "Root causes", count_root_causes(findings)),
        ("error", "Errors", sev[Severity.ERROR]),
        ("warning", "Warnings", sev[Severity.WARNING]),
        ("note", "Notes", sev[Severity.NOTE]),
        ("safe", "Safe fixes", safe),
        ("unsafe", "Unsafe fixes", unsafe),
        ("suppressed", "Suppressed", result.suppressed),
    ]
    items = "".join(
        f"<div class='card {cls}' id='count-{cls}'><span class='n'>{n:,}</span><span class='l'>{_e(label)}</span></div>"
        for cls, label, n in cards
    )
    return f"<section aria-label='Summary'><div class='cards'>{items}</div></section>"


def _effort(findings, base: PurePosixPath) -> str:
    low, high = effort_minutes(findings)
    counts = Counter(effort_class(f) for f in findings)
    rows = "".join(
        f"<tr><td>{_inline(c.label)}</td><td class='num'>{_range(c.low, c.high)}</td><td class='num'>{counts[key]:,}</td>"
        f"<td class='num'>{_range(counts[key] * c.low, counts[key] * c.high)}</td></tr>"
        for key, c in EFFORT.items()
    )
    return (
        "<section id='effort'><h2>Effort estimate</h2>"
        f"<p class='estimate'><strong>{_e(person_days(low, high))}</strong> for the findings below.</p>"
        "<p>The model: each finding costs a range of minutes by how it is fixed; the sums are divided by "
        f"{HOURS_PER_DAY} focused hours a day and rounded outwards to half days (whole days from ten on). "
        "It leaves out what a scan cannot see: setting up a ROCm build and CI, performance tuning, "
        "and hazards no rule detects. Treat it as an order of magnitude.</p>"
        "<table><thead><tr><th>Kind of finding</th><th>Per finding</th><th>Findings</th><th>Subtotal</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>{_effort_by_directory(findings, base)}</section>"
    )


def _work_areas(findings, base: PurePosixPath) -> dict[str, list]:
    """Findings by top-level directory; one that holds most of them (a `src/` or `Samples/`
    above the real units) is split into its subdirectories, as far as `CHART_DEPTH + 1` levels."""
    areas: dict[str, list] = defaultdict(list)
    for f in findings:
        areas[_top_dir(f.path, base, depth=1)].append(f)
    for depth in range(2, CHART_DEPTH + 2):
        if not areas:
            break
        label, most = max(areas.items(), key=lambda kv: len(kv[1]))
        split: dict[str, list] = defaultdict(list)
        for f in most:
            split[_top_dir(f.path, base, depth=depth)].append(f)
        if 2 * len(most) <= len(findings) or len(split) < 2:
            break
        del areas[label]
        areas.update(split)
    return areas


def _effort_by_directory(findings, base: PurePosixPath) -> str:
    """The estimate split by top-level directory: how the work is handed out."""
    dirs = _work_areas([f for f in findings if f.path], base)
    if len(dirs) < 2:
        return ""
    ranked = sorted(dirs.items(), key=lambda kv: (-effort_minutes(kv[1])[1], kv[0]))
    rows = "".join(
        f"<tr><td><code>{_e(label)}</code></td><td class='num'>{_e(person_days(*effort_minutes(fs)))}</td>"
        f"<td class='num'>{len(fs):,}</td>{_count_cells(fs)}"
        f"<td class='num'>{sum(1 for f in fs if effort_class(f) == 'safe') or ''}</td></tr>"
        for label, fs in ranked[:EFFORT_DIRECTORIES]
    )
    more = len(ranked) - EFFORT_DIRECTORIES
    rest = (f"<p class='more'>{more:,} more director{'y' if more == 1 else 'ies'} with less work not listed.</p>" if more > 0 else "")
    return ("<h3 id='effort-dirs'>By directory</h3><p>The same model per top-level directory (one that holds "
            "most findings split into its subdirectories), most work first: a way to hand the port out.</p><table><thead><tr><th>Directory</th><th>Estimate</th><th>Findings</th>"
            "<th>Errors</th><th>Warnings</th><th>Notes</th><th>Safe fixes</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>{rest}")


# ---- charts ---------------------------------------------------------------------


def _family_label(letter: str) -> str:
    return f"{letter} {FAMILIES.get(letter, 'Other')}"


def _family_rank(letter: str) -> int:
    return list(FAMILIES).index(letter) if letter in FAMILIES else len(FAMILIES)


def _by_family(findings) -> dict[str, list]:
    """Findings grouped by family letter, in the order of `FAMILIES`."""
    groups: dict[str, list] = defaultdict(list)
    for f in findings:
        groups[f.code[:1]].append(f)
    return {letter: groups[letter] for letter in sorted(groups, key=_family_rank)}


def _charts(findings, base: PurePosixPath) -> str:
    if not findings:
        return ""
    # Biggest bar first; sorted() is stable, so equal families keep the FAMILIES order.
    family_rows = sorted(((_family_label(letter), _severity_counts(fs)) for letter, fs in _by_family(findings).items()),
                         key=lambda row: -sum(row[1].values()))
    dirs: dict[str, list] = defaultdict(list)
    for f in findings:
        dirs[_top_dir(f.path, base)].append(f)
    dir_rows = sorted(((label, _severity_counts(fs)) for label, fs in dirs.items()),
                      key=lambda row: (-sum(row[1].values()), row[0]))
    # A summed "others" bar would dwarf the rest: the caption counts what is left out.
    hidden = dir_rows[CHART_ROWS:]
    dir_rows = dir_rows[:CHART_ROWS]
    left_out = ""
    if hidden:
        n = sum(sum(c.values()) for _, c in hidden)
        dirs_word = "directory" if len(hidden) == 1 else "directories"
        left_out = f"; {len(hidden)} more {dirs_word} with {_plural(n, 'finding')} not drawn"
    where = "./" if str(base) == "." else f"{base}/"
    legend = "".join(
        f"<span><i class='swatch {s.value}'></i>{_e(s.value)}</span>" for s in SEVERITIES
    )
    return (
        "<section id='charts'><h2>Where the findings are</h2>"
        f"<p class='legend' aria-hidden='true'>{legend}</p><div class='charts'>"
        "<figure><figcaption>Per rule family (the letter that opens each code)</figcaption>"
        f"{bar_chart('Findings per rule family', 'Family', family_rows, 'chart-family')}</figure>"
        f"<figure><figcaption>Per directory ({CHART_DEPTH} levels) below <code>{_e(where)}</code>{_e(left_out)}"
        f"</figcaption>{bar_chart('Findings per directory', 'Directory', dir_rows, 'chart-dir')}</figure>"
        "</div></section>"
    )


def bar_chart(title: str, axis: str, rows: list[tuple[str, Counter]], chart_id: str) -> str:
    """A horizontal bar chart, each bar stacked by severity, as accessible inline SVG."""
    # The label column fits the longest label (up to `MAX_LABEL_CHARS`); a longer one keeps its
    # end, the part that tells directories apart, and the bar's tooltip holds all of it.
    longest = min(max((len(label) for label, _ in rows), default=0), MAX_LABEL_CHARS)
    label_w = max(150, math.ceil(longest * LABEL_CHAR_W) + 16)
    plot_w, right, top, row_h, bar_h = 366, 44, 28, 26, 16
    width = label_w + plot_w + right
    height = top + row_h * len(rows) + 44
    peak = max((sum(c.values()) for _, c in rows), default=1) or 1
    step = _tick_step(peak)
    scale_max = math.ceil(peak / step) * step

    def x(value: float) -> float:
        return label_w + plot_w * value / scale_max

    summary = "; ".join(f"{label}: {sum(c.values())}" for label, c in rows)
    out = [
        f"<svg class='chart' id='{chart_id}' viewBox='0 0 {width} {height}' width='{width}' height='{height}' "
        f"role='img' aria-labelledby='{chart_id}-t {chart_id}-d' xmlns='http://www.w3.org/2000/svg'>",
        f"<title id='{chart_id}-t'>{_e(title)}</title>",
        f"<desc id='{chart_id}-d'>{_e(summary)}</desc>",
        f"<text class='axis-title' x='{label_w - 8}' y='{top - 12}' text-anchor='end'>{_e(axis)}</text>",
    ]
    axis_y = top + row_h * len(rows)
    for tick in range(0, scale_max + 1, step):
        tx = x(tick)
        out.append(f"<line class='grid' x1='{tx:.1f}' x2='{tx:.1f}' y1='{top - 4}' y2='{axis_y}'/>")
        out.append(f"<text class='tick' x='{tx:.1f}' y='{axis_y + 14}' text-anchor='middle'>{tick:,}</text>")
    out.append(f"<line class='axis' x1='{label_w}' x2='{label_w + plot_w}' y1='{axis_y}' y2='{axis_y}'/>")
    out.append(f"<text class='axis-title' x='{label_w + plot_w / 2:.1f}' y='{axis_y + 34}' "
               "text-anchor='middle'>Findings</text>")
    for i, (label, counts) in enumerate(rows):
        y = top + i * row_h + (row_h - bar_h) / 2
        n = sum(counts.values())
        detail = ", ".join(_plural(counts[s], s.value) for s in SEVERITIES if counts[s])
        shown = label if len(label) <= MAX_LABEL_CHARS else "…" + label[-(MAX_LABEL_CHARS - 1):]
        tooltip = f"{label}: {_plural(n, 'finding')} ({detail})"
        out.append(f"<g class='bar'><title>{_e(tooltip)}</title>")
        out.append(f"<text class='label' x='{label_w - 8}' y='{y + bar_h - 4}' text-anchor='end'>{_e(shown)}</text>")
        start = 0
        for s in SEVERITIES:
            if counts[s]:
                out.append(f"<rect class='{s.value}' x='{x(start):.1f}' y='{y}' "
                           f"width='{x(start + counts[s]) - x(start):.1f}' height='{bar_h}'/>")
                start += counts[s]
        out.append(f"<text class='count' x='{x(n) + 5:.1f}' y='{y + bar_h - 4}'>{n:,}</text></g>")
    out.append("</svg>")
    return "".join(out)


# Chart labels are set in a monospace font (directory names), whose width per character at
# the chart's 12px is at most this (DejaVu Sans Mono, Menlo, Consolas: 7.0-7.3px).
LABEL_CHAR_W = 7.5
MAX_LABEL_CHARS = 48


def _tick_step(peak: int) -> int:
    """1, 2, 5, 10, 20, … : the smallest giving at most six ticks."""
    magnitude = 1
    while True:
        for m in (1, 2, 5):
            if peak / (m * magnitude) <= 5:
                return m * magnitude
        magnitude *= 10


def _base_dir(paths) -> PurePosixPath:
    """The directory every scanned file is below: directories are named relative to it."""
    parents = {str(PurePosixPath(p).parent) for p in paths}
    if not parents:
        return PurePosixPath(".")
    try:
        return PurePosixPath(os.path.commonpath(sorted(parents)) or ".")
    except ValueError:  # absolute and relative paths mixed
        return PurePosixPath(".")


def _top_dir(path: str, base: PurePosixPath, depth: int = CHART_DEPTH) -> str:
    """The file's directory, `depth` levels at most below `base`."""
    try:
        parts = PurePosixPath(path).relative_to(base).parts if str(base) != "." else PurePosixPath(path).parts
    except ValueError:
        parts = PurePosixPath(path).parts
    folders = parts[:-1][:depth]
    return "/".join(folders) + "/" if folders else "(top level)"


# ---- tables ---------------------------------------------------------------------


def _count_cells(findings) -> str:
    sev = _severity_counts(findings)
    return "".join(f"<td class='num {s.value}'>{f'{sev[s]:,}' if sev[s] else ''}</td>" for s in SEVERITIES)


def _family_table(findings, docs) -> str:
    if not findings:
        return ""
    rows = []
    for letter, fs in _by_family(findings).items():
        codes = " ".join(f"<a href='#rule-{c}' title='{_e(docs[c].name)}'>{c} <small>{_e(docs[c].name)}</small></a>"
                         for c in sorted({f.code for f in fs}))
        low, high = effort_minutes(fs)
        fixable = sum(1 for f in fs if f.fix.is_applicable)
        rows.append(f"<tr><th scope='row'>{_e(_family_label(letter))}</th><td>{codes}</td>"
                    f"<td class='num'>{len(fs)}</td>{_count_cells(fs)}<td class='num'>{fixable or ''}</td>"
                    f"<td class='num'>{_range(low, high)}</td></tr>")
    return (
        "<section id='families'><h2>Rule families</h2><table><thead><tr><th>Family</th><th>Rules</th>"
        "<th>Findings</th><th>Errors</th><th>Warnings</th><th>Notes</th><th>Fixable</th><th>Effort</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _worst_files(by_file: dict[str, list], file_ids: dict[str, str]) -> str:
    if not by_file:
        return ""
    scored = sorted(by_file.items(), key=lambda kv: (-sum(SCORE[f.severity] for f in kv[1]), kv[0]))
    rows = "".join(
        f"<tr><td class='num'>{rank}</td><td><a href='#{file_ids[path]}'><code>{_e(path)}</code></a></td>"
        f"<td class='num'>{sum(SCORE[f.severity] for f in fs)}</td><td class='num'>{len(fs)}</td>"
        f"{_count_cells(fs)}</tr>"
        for rank, (path, fs) in enumerate(scored[:WORST_FILES], start=1)
    )
    weights = ", ".join(f"{s.value} {SCORE[s]}" for s in SEVERITIES)
    shown = (f"The {WORST_FILES} worst of {len(scored)} files with findings" if len(scored) > WORST_FILES
             else f"All {_plural(len(scored), 'file')} with findings")
    return (
        f"<section id='worst'><h2>Worst files</h2><p>{shown}, ranked by score ({weights} per finding).</p>"
        "<table><thead><tr><th>#</th><th>File</th><th>Score</th><th>Findings</th><th>Errors</th><th>Warnings</th>"
        f"<th>Notes</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _problems(result) -> str:
    problems = [p for p in result.problems if not getattr(p, "note", False)]  # a note's file was read whole
    if not problems:
        return ""
    items = "".join(f"<li><code>{_e(p.path)}</code>: {_e(p.message)}</li>" for p in problems)
    return (f"<section id='problems'><h2>Not fully scanned</h2><p>Findings may be missing for these "
            f"files.</p><ul>{items}</ul></section>")


# ---- findings -------------------------------------------------------------------

def _findings(by_file: dict[str, list], file_ids: dict[str, str], docs) -> str:
    if not by_file:
        return "<section id='findings'><h2>Findings</h2><p>No port hazards found.</p></section>"
    # Files with the worst findings first; in a file, errors before warnings before notes.
    def worst(path: str) -> tuple:
        return (min(SEVERITIES.index(f.severity) for f in by_file[path]), path)

    budget = MAX_DETAILED
    sections, left_out = [], 0
    for path in sorted(by_file, key=worst):
        fs = sorted(by_file[path], key=lambda f: (SEVERITIES.index(f.severity), f.location.start_byte if f.location else 0))
        sev = _severity_counts(fs)
        counts = ", ".join(_plural(sev[s], s.value) for s in SEVERITIES if sev[s])
        shown_fs, budget = fs[:max(0, budget)], budget - len(fs)
        left_out += len(fs) - len(shown_fs)
        if not shown_fs:
            continue
        items = "".join(_finding(f, docs) for f in shown_fs)
        more = (f"<p class='more'>{_plural(len(fs) - len(shown_fs), 'more finding')} in this file not shown.</p>"
                if len(shown_fs) < len(fs) else "")
        shown = path or "(the machine)"
        open_attr = " open" if sev[Severity.ERROR] else ""
        sections.append(f"<details class='file' id='{file_ids[path]}'{open_attr}><summary><code>{_e(shown)}</code> "
                        f"<span class='counts'>{counts}</span></summary><ol class='findings'>{items}</ol>{more}</details>")
    note = (f"<p class='cap'>The {MAX_DETAILED} most severe findings are shown one by one; {_plural(left_out, 'more finding')} "
            "are counted above but not listed (run <code>portlint scan</code> for all of them).</p>" if left_out else "")
    return "<section id='findings'><h2>Findings</h2>" + note + "".join(sections) + "</section>"


def _finding(f, docs) -> str:
    loc = f.location
    where = f"{loc.start_line}:{loc.start_column}" if loc is not None and loc.has_region else "file"
    kind = "advice" if not f.fix.is_applicable else f.fix.applicability.value
    parts = [
        f"<li class='finding {f.severity.value}'><div class='head'><span class='loc'>{where}</span> "
        f"<a class='code' href='#rule-{_e(f.code)}'>{_e(f.code)}</a> <span class='name'>{_e(docs[f.code].name)}</span> "
        f"<span class='badge {f.severity.value}'>{f.severity.value}</span> "
        f"<span class='msg'>{_inline(f.message, links=False)}</span></div>",
    ]
    if loc is not None and loc.has_region and len(loc.snippet) > LONG_LINE:
        end_column = loc.end_column if loc.end_line == loc.start_line else None
        parts.append(f"<pre class='src'><span class='ln'>{loc.start_line}</span>"
                     f"{_long_line_marked(loc.snippet, loc.start_column, end_column)}</pre>")
    elif loc is not None and loc.has_region:
        after = rewritten_line(f)
        before = _marked(loc.snippet, loc.start_column, loc.end_column if loc.end_line == loc.start_line else None)
        if after is None:
            parts.append(f"<pre class='src'><span class='ln'>{loc.start_line}</span>{before}</pre>")
        else:
            parts.append(f"<pre class='src diff'><span class='ln'>-</span>{before}\n"
                         f"<span class='ln'>+</span>{_e(after)}</pre>")
    parts.append(f"<div class='fix {kind}'><span class='fixkind'>{FIX_LABELS[f.fix.applicability]}</span> "
                 f"{_inline(f.fix.title, links=False)}</div>")
    for rel in f.related:
        r = rel.location
        parts.append(f"<div class='related'>note: <code>{_e(r.path)}:{r.start_line}</code> "
                     f"{_inline(rel.message, links=False)}</div>")
    parts.append("</li>")
    return "".join(parts)


def _utf16_index(text: str, column: int) -> int:
    """The str index of 1-based UTF-16 `column` in `text` (locations count UTF-16 units)."""
    units = 0
    for i, ch in enumerate(text):
        if units >= column - 1:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text)


def _marked(snippet: str, start_col: int, end_col: int | None) -> str:
    start = _utf16_index(snippet, start_col)
    end = _utf16_index(snippet, end_col) if end_col is not None else len(snippet)
    if end <= start:
        return _e(snippet)
    return f"{_e(snippet[:start])}<mark>{_e(snippet[start:end])}</mark>{_e(snippet[end:])}"


# Characters beyond which a line (minified or generated code) is shown as a window around
# the finding, without the rewritten line: the whole of a 5 MB line for each of its findings
# would make gigabytes of page.
LONG_LINE = 1000
_WINDOW = 160


def _long_line_marked(snippet: str, start_col: int, end_col: int | None) -> str:
    # Columns are taken as indices here (exact without characters beyond the BMP, close
    # enough for a window): counting UTF-16 units from the line's start is what costs.
    start = max(0, start_col - 1)
    cut = min(max(0, start - _WINDOW // 4), max(0, len(snippet) - _WINDOW))
    window = snippet[cut:cut + _WINDOW]
    end = len(window) + 1 if end_col is None else min(end_col - 1 - cut, len(window)) + 1
    lead, tail = ("…" if cut else ""), ("…" if cut + _WINDOW < len(snippet) else "")
    return lead + _marked(window, start - cut + 1, end) + tail


def rewritten_line(f) -> str | None:
    """The finding's line after its fix, when every edit falls on that line; else None."""
    loc = f.location
    edits = f.fix.edits
    if not f.fix.is_applicable or not edits or len(f.edit_locations) != len(edits):
        return None
    if any(e.start_line != loc.start_line or e.end_line != loc.start_line for e in f.edit_locations):
        return None
    line = loc.snippet
    spans = sorted(((_utf16_index(line, el.start_column), _utf16_index(line, el.end_column), e.content)
                    for e, el in zip(edits, f.edit_locations)), reverse=True)
    for start, end, content in spans:
        if "\n" in content:
            return None
        line = line[:start] + content + line[end:]
    return line


# ---- rule documentation ---------------------------------------------------------


def _rules(codes: list[str], docs) -> str:
    if not codes:
        return ""
    sections = []
    for code in codes:
        doc = docs[code]
        meta = (f"{_e(_family_label(doc.family))} · severity {_e(doc.severity.value)} · fix {_e(doc.fix)} · "
                f"precision {_e(doc.precision)}")
        sections.append(f"<section class='rule' id='rule-{_e(code)}'><h3>{_e(code)} <code>{_e(doc.name)}</code></h3>"
                        f"<p class='meta'>{meta}</p>{markdown_to_html(doc.body, heading_offset=2)}</section>")
    return "<section id='rules'><h2>Rules found</h2>" + "".join(sections) + "</section>"


# A code span opens and closes with whole runs of backticks (as in CommonMark) and link text
# holds no `[`: tried from every backtick of a run, or every `[` of `[[[`, each scanned the
# rest of the line (quadratic in finding messages that quote such text).
_INLINE = re.compile(
    r"(?<!`)(?P<code>`+)(?!`)(?P<code_text>.+?)(?<!`)(?P=code)(?!`)"
    r"|\[(?P<link_text>[^\[\]\n]+)\]\((?P<link_url>[^)\s]+)\)"
    r"|(?P<url>https?://[^\s<>()\"']+[^\s<>()\"'.,;:])"
)
_SAFE_URL = re.compile(r"^(https?://|#)", re.IGNORECASE)


def _inline(text: str, links: bool = True) -> str:
    """Inline Markdown (code spans; links and bare URLs if `links`), everything else escaped."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        if m.group("code") is None and not links:
            continue
        out.append(_e(text[pos:m.start()]))
        pos = m.end()
        if m.group("code") is not None:
            out.append(f"<code>{_e(m.group('code_text').strip())}</code>")
        elif m.group("url") is not None:
            out.append(_link(m.group("url"), _e(m.group("url"))))
        elif _SAFE_URL.match(m.group("link_url")):
            out.append(_link(m.group("link_url"), _inline(m.group("link_text"), links=False)))
        else:  # javascript: and friends stay text
            out.append(_e(m.group(0)))
    out.append(_e(text[pos:]))
    return "".join(out)


def _link(url: str, label_html: str) -> str:
    # A link the reader may follow; the page itself fetches nothing.
    return f"<a href='{_e(url)}' rel='noopener noreferrer'>{label_html}</a>"


_LIST_ITEM = re.compile(r"^(?:[-*+]|(?P<num>\d+)[.)])\s+(?P<text>.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def markdown_to_html(text: str, heading_offset: int = 0) -> str:
    """The Markdown subset rule docs use: ATX headings, paragraphs, fenced code, flat lists
    (bulleted or numbered, indented continuation lines), pipe tables, code spans and links.
    Anything else is shown as text; nothing from the input reaches the page unescaped."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
        elif stripped.startswith("```"):
            lang = stripped[3:].strip()
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end of the text)
            cls = f" class='language-{_e(lang)}'" if re.fullmatch(r"[\w+-]+", lang) else ""
            out.append(f"<pre><code{cls}>{_e(chr(10).join(body))}</code></pre>")
        elif m := _HEADING.match(stripped):
            level = min(6, len(m.group(1)) + heading_offset)
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
            i += 1
        elif _is_table(lines, i):
            header = _cells(stripped)
            i += 2
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(_cells(lines[i].strip()))
                i += 1
            head = "".join(f"<th>{_inline(c)}</th>" for c in header)
            body = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif _LIST_ITEM.match(stripped):
            ordered = _LIST_ITEM.match(stripped).group("num") is not None
            items: list[str] = []
            while i < len(lines):
                current = lines[i]
                item = _LIST_ITEM.match(current.strip())
                if item and not current.startswith("  "):
                    items.append(item.group("text"))
                elif items and current.startswith((" ", "\t")) and current.strip():
                    items[-1] += " " + current.strip()  # a wrapped item
                else:
                    break
                i += 1
            tag = "ol" if ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_inline(t)}</li>" for t in items) + f"</{tag}>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines, i):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def _starts_block(lines: list[str], i: int) -> bool:
    """Whether line `i` opens a block other than a paragraph (so it ends the paragraph)."""
    s = lines[i].strip()
    return bool(
        s.startswith("```")
        or _HEADING.match(s)
        or (_LIST_ITEM.match(s) and not lines[i].startswith("  "))
        or _is_table(lines, i)
    )


def _is_table(lines: list[str], i: int) -> bool:
    return lines[i].strip().startswith("|") and i + 1 < len(lines) and bool(_TABLE_RULE.match(lines[i + 1].strip()))


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<main>
{body}
</main>
</body>
</html>
"""

CSS = """
:root { --error: #c62828; --warning: #d18a00; --note: #1e6fd9; --ink: #1d2330; --muted: #5b6473;
  --line: #dde1e8; --soft: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 8px; }
h4 { font-size: 14px; margin: 16px 0 6px; }
.sub, .meta, figcaption, .counts { color: var(--muted); }
.counts { font-weight: normal; font-size: 13px; margin-left: 8px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
code { background: var(--soft); padding: 0 3px; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 8px 10px;
  overflow-x: auto; margin: 6px 0; }
pre code { background: none; padding: 0; }
a { color: #1558b0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(128px, 1fr)); gap: 10px; margin-top: 18px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; background: var(--soft); }
.card .n { display: block; font-size: 26px; font-weight: 600; }
.card .l { color: var(--muted); font-size: 13px; }
.card.error .n { color: var(--error); } .card.warning .n { color: var(--warning); }
.card.note .n { color: var(--note); }
.estimate { font-size: 20px; margin: 4px 0; }
table { border-collapse: collapse; margin: 8px 0; font-size: 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
thead th { background: var(--soft); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.error, span.error { color: var(--error); } td.warning, span.warning { color: var(--warning); }
td.note, span.note { color: var(--note); }
.legend span { margin-right: 16px; font-size: 13px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px;
  border-radius: 2px; }
.swatch.error, .chart rect.error { background: var(--error); fill: var(--error); }
.swatch.warning, .chart rect.warning { background: var(--warning); fill: var(--warning); }
.swatch.note, .chart rect.note { background: var(--note); fill: var(--note); }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
figure { margin: 0; flex: 0 1 auto; max-width: 100%; }
.chart { max-width: 100%; height: auto; font-size: 12px; }
.chart text { fill: var(--ink); font-family: system-ui, sans-serif; }
.chart text.label { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.chart .tick, .chart .axis-title { fill: var(--muted); }
.chart .axis-title { font-weight: 600; }
.chart .grid { stroke: var(--line); } .chart .axis { stroke: var(--muted); }
.chart .count { font-weight: 600; }
ol.findings { list-style: none; padding: 0; margin: 0; }
.finding { border-left: 4px solid var(--line); padding: 6px 0 6px 12px; margin: 10px 0; }
.finding.error { border-color: var(--error); } .finding.warning { border-color: var(--warning); }
.finding.note { border-color: var(--note); }
.head .loc { font-family: ui-monospace, Menlo, Consolas, monospace; color: var(--muted); font-size: 13px; }
.head .code { font-weight: 600; }
.badge { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; padding: 1px 6px; border-radius: 9px;
  color: #fff; }
.badge.error { background: var(--error); } .badge.warning { background: var(--warning); }
.badge.note { background: var(--note); }
.src .ln { display: inline-block; min-width: 3ch; color: var(--muted); margin-right: 10px; text-align: right;
  user-select: none; }
mark { background: #ffe08a; }
.fixkind { font-weight: 600; color: #2e7d32; margin-right: 4px; }
.fix.unsafe .fixkind { color: var(--warning); } .fix.advice .fixkind { color: var(--muted); }
.related { color: var(--muted); font-size: 14px; }
.rule { border: 1px solid var(--line); border-radius: 6px; padding: 4px 16px 8px; margin: 14px 0; }
.rule:target, .file:target { outline: 3px solid #9cc3ff; }
.verdict { margin-top: 18px; border: 1px solid var(--line); border-left: 6px solid var(--muted); border-radius: 6px;
  padding: 4px 18px 10px; }
.verdict.error { border-left-color: var(--error); } .verdict.warning { border-left-color: var(--warning); }
.verdict.note { border-left-color: var(--note); } .verdict.ok { border-left-color: #2e7d32; }
.verdict .answer { font-size: 19px; font-weight: 600; margin: 10px 0 4px; }
.verdict h2 { border: none; margin: 14px 0 4px; font-size: 16px; }
.impact h3 { margin: 12px 0 4px; font-size: 15px; }
.impact ul { margin: 0; padding-left: 20px; } .impact li.more { color: var(--muted); list-style: none; }
#provenance dl { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 14px 0 0; font-size: 13px; }
#provenance dt { color: var(--muted); } #provenance dd { margin: 0; font-family: ui-monospace, Menlo, monospace; }
details.file { border-top: 1px solid var(--line); padding: 4px 0; }
details.file summary { cursor: pointer; font-weight: 600; padding: 6px 0; }
.head .name { color: var(--muted); font-size: 13px; }
small { color: var(--muted); }
.cap, .more { color: var(--muted); font-style: italic; }
@media print { .rule, .finding { break-inside: avoid; } details.file > :not(summary) { display: block; } }
"""
