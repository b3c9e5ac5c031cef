"""Y003 in pyproject.toml: Triton in `[project]` dependencies, extras and dependency groups.

Values come from `tomllib`; `portlint.manifests.toml_strings` gives where each one stands.
"""

from __future__ import annotations

import tomllib

from portlint.checks.requirements import is_cuda_only_name, is_unpinned_triton, triton_fix, triton_message
from portlint.finding import Finding, finding
from portlint.manifests import toml_strings
from portlint.source import SourceFile
from portlint.triggers import needs, nocase


# ---- Y003 unpinned-triton ---------------------------------------------------------------------
@needs(nocase(b"triton"))
def check_unpinned_triton(source: SourceFile) -> list[Finding]:
    if b"triton" not in source.data.lower():
        return []
    try:
        document = tomllib.loads(source.text)
    except tomllib.TOMLDecodeError:
        return []  # the engine reports the file as unreadable
    wanted = _requirement_lists(document)
    findings = []
    for string in toml_strings(source.data):
        group = _group(string.path)
        if group is None or string.value not in wanted.get(group, ()) or not is_unpinned_triton(string.value):
            continue
        if group[-1] != "dependencies" and is_cuda_only_name(group[-1]):
            continue  # an extra or group for CUDA installs (`[project.optional-dependencies] cuda`)
        findings.append(finding(source, string.start, string.end, triton_message(string.value.strip()),
                                triton_fix("each in its platform's extra (`rocm = [...]`)")))
    return findings


def _group(path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The requirement list a string belongs to, or None."""
    if path == ("project", "dependencies"):
        return path
    if len(path) == 3 and path[:2] == ("project", "optional-dependencies"):
        return path
    if len(path) == 2 and path[0] == "dependency-groups":
        return path
    return None


def _requirement_lists(document: dict) -> dict[tuple[str, ...], list[str]]:
    """The requirement strings `tomllib` reads in each list (the scan's cross-check)."""
    out: dict[tuple[str, ...], list[str]] = {}
    project = document.get("project")
    if isinstance(project, dict):
        out[("project", "dependencies")] = _strings(project.get("dependencies"))
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            for name, reqs in extras.items():
                out[("project", "optional-dependencies", name)] = _strings(reqs)
    groups = document.get("dependency-groups")
    if isinstance(groups, dict):
        for name, reqs in groups.items():
            out[("dependency-groups", name)] = _strings(reqs)
    return out


def _strings(value) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
