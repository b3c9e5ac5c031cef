"""Rule metadata and documentation, read from `rules/<CODE>.md`: the single source.

Each file is TOML front matter between `+++` lines, then Markdown: a one-line summary and
the sections in `SECTIONS`. `portlint rule`, SARIF `rules[]` and the README table all come
from here; nothing retypes a rule's name, severity or text.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import portlint
from portlint.finding import Severity
from portlint.fix import Applicability

SECTIONS = ("Why it breaks on AMD", "Bad", "Good", "Fix", "References")
REQUIRED_KEYS = {"code", "name", "severity", "languages", "tags", "precision", "fix", "impact"}
OPTIONAL_KEYS = {"scope", "aliases"}
FIX_KINDS = {a.value for a in Applicability} | {"none"}
PRECISIONS = {"very-high", "high", "medium", "low"}
# What a port meets when the hazard stays (the report groups blockers by it), worst first.
IMPACTS = {
    "compile": "Will not compile, link or load on ROCm",
    "results": "Wrong results or a failure at run time",
    "performance": "Runs, but slower",
    "build": "Build configuration",
}
# "live": findings only in code compiled for ROCm and not already ported (the default);
# "compiled": also inside ROCm-only branches (rules about the guards themselves).
SCOPES = {"live", "compiled"}
CODE_PATTERN = re.compile(r"^[A-Z]\d{3}$")


class RuleDocError(Exception):
    pass


@dataclass(unsafe_hash=True)
class RuleDoc:
    code: str
    name: str
    severity: Severity
    languages: tuple[str, ...]
    tags: tuple[str, ...]
    precision: str
    fix: str
    impact: str
    scope: str
    aliases: tuple[str, ...]
    summary: str
    sections: dict[str, str]
    body: str  # the Markdown after the front matter

    @property
    def why(self) -> str:
        return self.sections["Why it breaks on AMD"]

    @property
    def family(self) -> str:
        return self.code[0]


def rules_dir() -> Path:
    """`rules/` as shipped in the wheel (`portlint/rules`), else the source tree's. The package
    is read from the file system (its rule docs are opened as paths), so its folder is found
    from this module, not through `importlib.resources` (3 ms of every run)."""
    package = Path(__file__).resolve().parent
    shipped = package / "rules"
    return shipped if shipped.is_dir() else package.parent / "rules"


def parse(text: str, origin: str) -> RuleDoc:
    parts = text.split("+++\n", 2)
    if len(parts) != 3 or parts[0].strip():
        raise RuleDocError(f"{origin}: front matter must open the file between '+++' lines")
    try:
        meta = tomllib.loads(parts[1])
    except tomllib.TOMLDecodeError as exc:
        raise RuleDocError(f"{origin}: front matter: {exc}") from None
    missing = REQUIRED_KEYS - meta.keys()
    unknown = meta.keys() - REQUIRED_KEYS - OPTIONAL_KEYS
    if missing or unknown:
        raise RuleDocError(f"{origin}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")
    body = parts[2].strip() + "\n"
    summary, sections = _split_sections(body, origin)
    if meta["fix"] not in FIX_KINDS or meta["precision"] not in PRECISIONS:
        raise RuleDocError(f"{origin}: bad 'fix' or 'precision' value")
    if meta["impact"] not in IMPACTS:
        raise RuleDocError(f"{origin}: 'impact' must be one of {list(IMPACTS)}")
    scope = meta.get("scope", "live")
    if scope not in SCOPES:
        raise RuleDocError(f"{origin}: 'scope' must be one of {sorted(SCOPES)}")
    return RuleDoc(
        code=meta["code"],
        name=meta["name"],
        severity=Severity.parse(meta["severity"]),
        languages=tuple(meta["languages"]),
        tags=tuple(meta["tags"]),
        precision=meta["precision"],
        fix=meta["fix"],
        impact=meta["impact"],
        scope=scope,
        aliases=tuple(meta.get("aliases", ())),
        summary=summary,
        sections=sections,
        body=body,
    )


def _split_sections(body: str, origin: str) -> tuple[str, dict[str, str]]:
    chunks = re.split(r"^## +(.+?)\s*$", body, flags=re.MULTILINE)
    summary = chunks[0].strip()
    if not summary or "\n" in summary:
        raise RuleDocError(f"{origin}: the body must open with a one-line summary")
    sections = {chunks[i]: chunks[i + 1].strip() for i in range(1, len(chunks), 2)}
    if list(sections) != list(SECTIONS):
        raise RuleDocError(f"{origin}: sections must be exactly {list(SECTIONS)}, got {list(sections)}")
    return summary, sections


@cache
def load_all() -> dict[str, RuleDoc]:
    """Every rule doc, by code, sorted by code."""
    docs = {}
    for path in sorted(rules_dir().glob("*.md")):
        if not CODE_PATTERN.match(path.stem):
            continue  # _template.md and friends
        doc = parse(path.read_text(encoding="utf-8"), str(path))
        if doc.code != path.stem:
            raise RuleDocError(f"{path}: code {doc.code!r} does not match the file name")
        docs[doc.code] = doc
    return docs


def doc_url(code: str) -> str | None:
    """Where rule CODE's documentation is read on the web: `rules/<CODE>.md` in the repository at
    this version's release tag (`v<version>`), so the page matches the rule that reported;
    None while the package declares no repository."""
    home = portlint.repository_url()
    return f"{home}/blob/v{portlint.__version__}/rules/{code}.md" if home else None
