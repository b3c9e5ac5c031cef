"""SARIF 2.1.0 for GitHub code scanning and editors, built with sarif-om.

Follows GitHub's ingestion rules: one run; rules with help text and markdown, tags,
precision and `problem.severity`; URIs relative to the repository root (`ReportContext.
uri_root`: the git top level, else the scan root) with `%SRCROOT%`, since code scanning
ignores `originalUriBaseIds`; 1-based regions with an exclusive end column counted in UTF-16
code units; related locations linked from the message (`[text](id)`), which is how GitHub
shows them; `fixes` with `insertedContent.text` always present; portlint's own
line-independent fingerprint under `portlint/v1` (GitHub computes `primaryLocationLineHash`
itself); at most `max_results` results (GitHub rejects a run of more than 25,000 and shows
5,000), the rest counted in a tool notification.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import attr
import sarif_om as om

import portlint
from portlint import __version__
from portlint.baseline import identities
from portlint.finding import Severity
from portlint.report import to_json_text
from portlint.ruledocs import doc_url, load_all

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
ROOT_ID = "%SRCROOT%"
MAX_TAGS = 20
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}
# Fields written even when equal to sarif-om's default: a result's level must not fall
# back to the rule's default when configuration changed it.
ALWAYS_WRITTEN = {"level"}


def to_json(obj):
    """Serialise sarif-om objects by their schema property names, leaving out defaults."""
    if isinstance(obj, list):
        return [to_json(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if not attr.has(type(obj)):
        return obj
    out = {}
    for f in attr.fields(type(obj)):
        value = getattr(obj, f.name)
        default = f.default.factory() if isinstance(f.default, attr.Factory) else f.default
        if value is None or (value == default and f.name not in ALWAYS_WRITTEN):
            continue
        out[f.metadata["schema_property_name"]] = to_json(value)
    if isinstance(obj, om.PropertyBag):
        out.update({k: to_json(v) for k, v in vars(obj).items() if k != "tags" and v is not None})
    return out


def _property_bag(tags=None, **extra) -> om.PropertyBag:
    bag = om.PropertyBag(tags=tags)
    for key, value in extra.items():
        setattr(bag, key, value)
    return bag


def _rule(doc) -> om.ReportingDescriptor:
    return om.ReportingDescriptor(
        id=doc.code,
        name=doc.name,
        help_uri=doc_url(doc.code),
        short_description=om.MultiformatMessageString(text=doc.summary),
        full_description=om.MultiformatMessageString(text=" ".join(doc.why.split())),
        help=om.MultiformatMessageString(text=doc.body, markdown=doc.body),
        default_configuration=om.ReportingConfiguration(level=doc.severity.value),
        properties=_property_bag(
            tags=list(doc.tags[:MAX_TAGS]),
            precision=doc.precision,
            **{"problem.severity": PROBLEM_SEVERITY[doc.severity.value]},
        ),
    )


def _uri(path: Path, root: Path) -> tuple[str, str | None]:
    try:
        # RFC 3986: percent-encode the name's bytes (a name need not be UTF-8).
        return quote(os.fsencode(path.relative_to(root).as_posix())), ROOT_ID
    except ValueError:
        return path.as_uri(), None


def _region(loc) -> om.Region:
    return om.Region(start_line=loc.start_line, start_column=loc.start_column,
                     end_line=loc.end_line, end_column=loc.end_column)


def _physical(loc, files, root) -> om.PhysicalLocation:
    if loc is None:
        # A finding about the machine (`portlint doctor`): GitHub needs a location, so it is
        # placed on the project root (`.` under %SRCROOT%) with no region.
        return om.PhysicalLocation(artifact_location=om.ArtifactLocation(uri=".", uri_base_id=ROOT_ID))
    state = files.get(loc.path)
    absolute = state.absolute_path if state is not None else Path(loc.path).resolve()
    uri, base = _uri(absolute, root)
    return om.PhysicalLocation(artifact_location=om.ArtifactLocation(uri=uri, uri_base_id=base),
                               region=_region(loc) if loc.has_region else None)


def _escaped(text: str) -> str:
    """Message text with its own brackets escaped, so only portlint's links are links."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _message(f) -> str:
    """The finding's message and fix title, then each related location as a link to its
    `relatedLocations` entry (`[text](id)`): GitHub hides related locations otherwise."""
    text = _escaped(f"{f.message} {f.fix.title}.")
    if f.related:
        links = ", ".join(f"[{_escaped(r.message)}]({i})" for i, r in enumerate(f.related, start=1))
        text += f" Related: {links}."
    return text


def _capped(findings, limit: int):
    """(the findings kept, the ones left out): the most severe first when over `limit`."""
    if not limit or len(findings) <= limit:
        return list(findings), []
    rank = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTE: 2}
    order = sorted(range(len(findings)), key=lambda i: rank[findings[i].severity])
    keep = set(order[:limit])
    return ([f for i, f in enumerate(findings) if i in keep],
            [f for i, f in enumerate(findings) if i not in keep])


def build(result, context) -> om.SarifLog:
    docs = load_all()
    # The catalog of the command that ran, so an alert's rule is always described: a scan
    # lists no machine (`portlint doctor`) rules, doctor lists only those.
    codes = [c for c, d in docs.items() if ("environment" in d.languages) == context.doctor]
    rule_index = {code: i for i, code in enumerate(codes)}
    results = []
    root = context.uri_root or context.root
    findings, left_out = _capped(result.findings, context.max_results)
    fingerprints = identities(findings, result.files, context.root)
    for f, fingerprint in zip(findings, fingerprints):
        physical = _physical(f.location, result.files, root)
        sarif_fixes = None
        if f.fix.edits:
            replacements = [
                om.Replacement(deleted_region=_region(loc), inserted_content=om.ArtifactContent(text=edit.content))
                for edit, loc in zip(f.fix.edits, f.edit_locations)
            ]
            sarif_fixes = [om.Fix(
                description=om.Message(text=f.fix.title),
                artifact_changes=[om.ArtifactChange(artifact_location=physical.artifact_location,
                                                    replacements=replacements)],
            )]
        related = [
            om.Location(id=i, physical_location=_physical(r.location, result.files, root),
                        message=om.Message(text=r.message))
            for i, r in enumerate(f.related, start=1)
        ] or None
        results.append(om.Result(
            rule_id=f.code,
            rule_index=rule_index[f.code],
            level=f.severity.value,
            message=om.Message(text=_message(f)),
            locations=[om.Location(physical_location=physical)],
            related_locations=related,
            partial_fingerprints={"portlint/v1": fingerprint},
            fixes=sarif_fixes,
            properties=_property_bag(applicability=f.fix.applicability.value),
        ))
    run = om.Run(
        tool=om.Tool(driver=om.ToolComponent(
            name="portlint", version=__version__, semantic_version=__version__,
            information_uri=portlint.repository_url(), rules=[_rule(docs[c]) for c in codes],
        )),
        # Tells this run from others of the same commit (code scanning's category).
        automation_details=om.RunAutomationDetails(id=context.sarif_category) if context.sarif_category else None,
        results=results,
        invocations=_invocations(result, rule_index, left_out, context.max_results),
        column_kind="utf16CodeUnits",
        original_uri_base_ids={ROOT_ID: om.ArtifactLocation(uri=root.resolve().as_uri() + "/")},
    )
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA, runs=[run])


def _invocations(result, rule_index, left_out, limit: int) -> list[om.Invocation] | None:
    """Tool notifications: results left out by the cap (with counts per rule, most first),
    `portlint doctor`'s checks that could not run here, and what a scan could not finish (a
    file or rule past the time budget, an internal error), which makes the run unsuccessful."""
    notes = [
        om.Notification(message=om.Message(text=str(s)), level="note",
                        associated_rule=om.ReportingDescriptorReference(id=s.code, index=rule_index[s.code]))
        for s in result.skipped
    ]
    if left_out:
        counts: dict[str, int] = {}
        for f in left_out:
            counts[f.code] = counts.get(f.code, 0) + 1
        per_rule = ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        notes.append(om.Notification(level="warning", message=om.Message(
            text=f"{len(left_out)} of {len(result.findings)} results left out: at most {limit} per run "
                 f"(--max-results); the most severe are kept. Left out per rule: {per_rule}.")))
    unfinished = [p for p in result.problems if p.internal or getattr(p, "timed_out", False)]
    notes.extend(om.Notification(message=om.Message(text=str(p)), level="error") for p in unfinished)
    # A run on named files that read less of their project than it meant to: complete, but said.
    notes.extend(om.Notification(message=om.Message(text=str(p)), level="warning")
                 for p in result.problems if getattr(p, "less_context", False))
    if not notes:
        return None
    return [om.Invocation(execution_successful=not unfinished, tool_execution_notifications=notes)]


def render(result, context) -> str:
    return to_json_text(to_json(build(result, context)))
