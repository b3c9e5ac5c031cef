"""JSON for scripts: a list of findings with locations, severity and fix edits."""

from __future__ import annotations

from portlint.fix import Applicability
from portlint.finding import place_count, root_cause_groups
from portlint.report import to_json_text
from portlint.ruledocs import load_all


def _location(loc) -> dict | None:
    if loc is None:  # about the machine, not a file (`portlint doctor`)
        return None
    if not loc.has_region:  # a whole file, e.g. a binary
        return {"path": loc.path, "start": None, "end": None}
    return {
        "path": loc.path,
        "start": {"line": loc.start_line, "column": loc.start_column, "byte": loc.start_byte},
        "end": {"line": loc.end_line, "column": loc.end_column, "byte": loc.end_byte},
    }


def render(result, context) -> str:
    docs = load_all()
    rows = []
    for f in result.findings:
        rows.append({
            "code": f.code,
            "name": docs[f.code].name,
            "severity": f.severity.value,
            "message": f.message,
            "location": _location(f.location),
            "fix": {
                "title": f.fix.title,
                "applicability": f.fix.applicability.value,
                "edits": [{"start_byte": e.start, "end_byte": e.end, "content": e.content} for e in f.fix.edits],
            },
            "related": [{"message": r.message, "location": _location(r.location)} for r in f.related],
        })
    payload = {
        "findings": rows,
        "suppressed": result.suppressed,
        "problems": [{"path": p.path, "message": p.message, "timed_out": getattr(p, "timed_out", False)}
                     for p in result.problems],
    }
    if context.statistics:  # `--statistics`: counts per rule, most first (as the text form)
        counts: dict[str, list[int]] = {}
        for f in result.findings:
            entry = counts.setdefault(f.code, [0, 0, 0, 0, 0])
            entry[0] += 1
            entry[1] += place_count(f)
            if f.fix.is_applicable:  # as the text summary counts: `fixable` by --fix, the rest with --unsafe-fixes
                entry[3 if f.fix.applicability is Applicability.SAFE else 4] += 1
        for members in root_cause_groups(result.findings):
            counts[members[0].code][2] += 1
        payload["statistics"] = [
            {"code": code, "name": docs[code].name, "count": n, "places": places, "root_causes": roots,
             "fixable": fixable, "unsafe_fixable": unsafe}
            for code, (n, places, roots, fixable, unsafe) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
        ]
    if result.skipped:  # `portlint doctor`: checks that could not run on this machine
        payload["not_checked"] = [{"code": s.code, "reason": s.reason} for s in result.skipped]
    return to_json_text(payload)
