"""A Markdown summary of a SARIF report for a GitHub job page (`$GITHUB_STEP_SUMMARY`):
counts by severity and the rules with the most results. Used by action.yml:

    python -m portlint.report.step_summary portlint.sarif >> "$GITHUB_STEP_SUMMARY"
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

TOP_RULES = 10
LEVELS = ("error", "warning", "note")


def summarize(log: dict) -> str:
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"].get("rules", [])}
    results = run.get("results", [])
    levels = Counter(r.get("level", "warning") for r in results)
    per_rule = Counter(r["ruleId"] for r in results)
    lines = ["## portlint: CUDA → ROCm port hazards", ""]
    if not results:
        lines.append("No port hazards found.")
    else:
        lines += ["| severity | results |", "|---|---:|"]
        lines += [f"| {level} | {levels[level]} |" for level in LEVELS if levels[level]]
        lines += ["", f"Rules with the most results (of {len(per_rule)}):", "",
                  "| rule | name | results |", "|---|---|---:|"]
        for code, count in per_rule.most_common(TOP_RULES):
            name = rules.get(code, {}).get("name", "")
            lines.append(f"| {code} | {name} | {count} |")
    for invocation in run.get("invocations", []):
        for note in invocation.get("toolExecutionNotifications", []):
            lines += ["", f"> {note['message']['text']}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m portlint.report.step_summary FILE.sarif", file=sys.stderr)
        return 2
    try:
        log = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"portlint: {argv[0]}: cannot read the SARIF report: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(summarize(log))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
