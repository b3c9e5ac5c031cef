"""`portlint server`: the scan as a language server (LSP over standard input and output).

An open file is checked as `portlint scan - --stdin-filename FILE` checks it: the editor's
buffer judged in its project, with the configuration, build model, project context and
cache of a scan, by the same engine (`engine.scan` with the buffer as standard input).
Other files are read as saved, so saving a header re-checks the open files that include it.

Findings become diagnostics; each finding's fix and a suppression comment become quick
fixes, and `source.fixAll.portlint` applies every safe fix; hovering over a finding shows
its rule's documentation. Nothing a file holds ends the server: what cannot be checked is
logged, and said in one diagnostic when it concerns the file itself.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os.path
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from portlint import __version__, build_model, engine, ruledocs, suppress
from portlint.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from portlint.config import Config, ConfigError, cache_root, find_config_file, load
from portlint.discover import discover, language_of, stdin_candidate
from portlint.fileio import NotReadable, read_regular
from portlint.finding import Finding, Severity
from portlint.fix import Applicability, Fix, apply_edits
from portlint.ruledocs import RuleDocError, load_all, rules_dir
from portlint.source import CUDA, count_syntax_errors

logger = logging.getLogger(__name__)

SOURCE = "portlint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
# Typing sends a change per key: a check waits this long for the next one before it starts.
SETTLE_SECONDS = 0.2

SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


def doc_url(code: str) -> str:
    """Where rule `code` is documented: its page in the repository the package names (as
    SARIF links it), else the copy installed with portlint."""
    return ruledocs.doc_url(code) or (rules_dir() / f"{code}.md").as_uri()


class Positions:
    """Byte offsets of one file's bytes as LSP positions, in the encoding the client chose
    (UTF-16 unless it asked for UTF-8 or UTF-32)."""

    def __init__(self, data: bytes, encoding: str) -> None:
        self.data, self.encoding = data, encoding
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", data))]

    def position(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        before = self.data[self.starts[line]:offset]
        if self.encoding == types.PositionEncodingKind.Utf8:
            return types.Position(line, len(before))
        text = before.decode("utf-8", "replace")
        if self.encoding == types.PositionEncodingKind.Utf32:
            return types.Position(line, len(text))
        return types.Position(line, len(text.encode("utf-16-le")) // 2)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(self.position(start), self.position(end))


@dataclass
class Check:
    """The last check of an open document, which its code actions and hovers refer to."""

    path: Path  # resolved
    version: int | None
    data: bytes
    language: str
    positions: Positions
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)  # findings' first, in order


class PortlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__)
        self.checks: dict[str, Check] = {}
        self.told: set[str] = set()  # messages shown to the user once (a broken configuration)

    # ---- checking ----------------------------------------------------------------------------
    def check(self, uri: str) -> None:
        """Check an open document now and publish its diagnostics; a failure is logged."""
        document = self.workspace.get_text_document(uri)
        try:
            check = self._check(document)
        except Exception as exc:  # noqa: BLE001 - a bug in a check must not end the server
            logger.exception("checking %s", uri)
            self.log(types.MessageType.Error, f"internal error while checking {document.path}: "
                                              f"{type(exc).__name__}: {exc}")
            return
        if check is None:
            self.checks.pop(uri, None)
            self.publish(uri, [], document.version)
            return
        self.checks[uri] = check
        self.publish(uri, check.diagnostics, check.version)

    def _check(self, document) -> Check | None:
        if urlparse(document.uri).scheme != "file":
            return None  # an unsaved new buffer has no project to stand in
        path = Path(document.path)
        language = language_of(path)
        if language is None:
            return None  # not a kind of file portlint reads
        # Text that is not Unicode (lone surrogates) becomes bytes the engine calls invalid UTF-8.
        data = document.source.encode("utf-8", "surrogatepass")
        check = Check(path.resolve(), document.version, data, language,
                      Positions(data, self.workspace.position_encoding))
        config = self.config_for(path)
        if config is None or self.excluded(path, config):
            return check
        if len(data) > engine.MAX_FILE_BYTES:  # as a scan skips such a file on disk
            check.diagnostics.append(self._note(check, f"skipped: larger than {engine.MAX_FILE_BYTES >> 20} MiB"))
            return check
        cache = cache_root(config, path) / DEFAULT_CACHE_DIR
        result = engine.scan([path] if path.exists() else [], config, 1, cache,
                             stdin=stdin_candidate(data, path, config))
        check.findings = result.findings
        check.diagnostics = [self.diagnostic(f, check) for f in result.findings]
        shown = engine.display_path(path)
        for problem in result.problems:  # all logged; those about this file (`path` or `path:line`) shown too
            self.log(types.MessageType.Warning, str(problem))
            where, _, line = problem.path.rpartition(":")
            if problem.path == shown:
                check.diagnostics.append(self._note(check, problem.message))
            elif where == shown and line.isdigit():
                check.diagnostics.append(self._note(check, problem.message, int(line) - 1))
        return check

    def config_for(self, path: Path) -> Config | None:
        """The configuration a scan of `path` reads (`portlint.toml` or `pyproject.toml` at or
        above it), read again for each check so edits to it count at once."""
        anchor = path if path.exists() else path.parent
        try:
            return load(find_config_file(anchor), anchor)
        except (ConfigError, RuleDocError) as exc:
            message = f"portlint: {exc}"
            if message not in self.told:
                self.told.add(message)
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
            self.log(types.MessageType.Error, str(exc))
            return None

    @staticmethod
    def excluded(path: Path, config: Config) -> bool:
        """Whether the configuration's `exclude` leaves `path` out (as `--force-exclude` does)."""
        return path.exists() and not discover([path], config.with_overrides(force_exclude=True))[0]

    def diagnostic(self, f: Finding, check: Check) -> types.Diagnostic:
        location = f.location
        return types.Diagnostic(
            range=check.positions.range(location.start_byte, location.end_byte),
            message=f.message,
            severity=SEVERITIES[f.severity],
            code=f.code,
            code_description=types.CodeDescription(href=doc_url(f.code)),
            source=SOURCE,
            related_information=[
                types.DiagnosticRelatedInformation(self.location(r.location, check), r.message) for r in f.related
            ] or None,
        )

    @staticmethod
    def location(location, check: Check) -> types.Location:
        """An LSP location of a place a finding points to: in this buffer, or in another
        file as saved (the project context a scan reads)."""
        absolute = Path(location.path).resolve()
        positions = check.positions
        if absolute != check.path:
            try:
                positions = Positions(read_regular(absolute, engine.MAX_FILE_BYTES), positions.encoding)
            except (OSError, NotReadable):
                pass  # gone since: the offsets as they are
        return types.Location(from_fs_path(str(absolute)), positions.range(location.start_byte, location.end_byte))

    @staticmethod
    def _note(check: Check, message: str, line: int = 0) -> types.Diagnostic:
        """What kept (part of) the file from being checked, at the start of the line it names."""
        start = types.Position(max(line, 0), 0)
        return types.Diagnostic(range=types.Range(start, start), message=f"portlint: {message}",
                                severity=types.DiagnosticSeverity.Information, source=SOURCE)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diagnostics, version))

    def log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(kind, f"portlint: {message}"))

    async def check_when_settled(self, uri: str) -> None:
        """Check after a change once no newer change came for a moment (a newer one waits itself)."""
        version = self.workspace.get_text_document(uri).version
        await asyncio.sleep(SETTLE_SECONDS)
        if uri in self.workspace.text_documents and self.workspace.get_text_document(uri).version == version:
            self.check(uri)

    def check_others_after_save(self, uri: str) -> None:
        """A saved file is context for the other open files: a saved C-family file (a header,
        or a source some file includes) re-checks the open files that include it, directly or
        through other headers; a saved build or configuration file re-checks every open file."""
        saved = Path(self.workspace.get_text_document(uri).path)
        others = {Path(d.path).resolve().as_posix(): u for u, d in self.workspace.text_documents.items()
                  if u != uri and urlparse(u).scheme == "file"}
        language = language_of(saved)
        if not others or language is None:
            return
        reached = list(others) if language != CUDA else list(self.includers(saved.resolve(), others))
        for path in reached:
            if path in others:
                self.check(others[path])

    def includers(self, header: Path, open_files: dict[str, str]) -> dict[str, bytes]:
        """The open files that include `header`, through the project's headers as saved."""
        config = self.config_for(header)
        if config is None:
            return {}
        data: dict[str, bytes] = {}
        for candidate in discover([config.root], config)[0]:
            if candidate.language == CUDA and build_model.is_header(candidate.absolute):
                try:
                    data[candidate.absolute] = read_regular(candidate.absolute, engine.MAX_FILE_BYTES)
                except (OSError, NotReadable):
                    continue
        for path, uri in open_files.items():
            data[path] = self.workspace.get_text_document(uri).source.encode("utf-8", "surrogatepass")
        return build_model.includers_among([header.as_posix()], data)

    # ---- code actions ------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        check = self.checks.get(uri)
        if check is None or check.version != self.workspace.get_text_document(uri).version:
            return []  # findings of an older text: the check under way brings new ones
        only = params.context.only
        actions: list[types.CodeAction] = []
        if _asked(only, types.CodeActionKind.QuickFix):
            for f, diagnostic in zip(check.findings, check.diagnostics):
                if not _overlaps(diagnostic.range, params.range):
                    continue
                if f.fix.is_applicable and (edit := self.edit(check, uri, [f.fix])) is not None:
                    unsafe = f.fix.applicability is Applicability.UNSAFE
                    actions.append(types.CodeAction(
                        title=f"{f.fix.title} ({f.code}{', unsafe' if unsafe else ''})",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], edit=edit,
                        is_preferred=not unsafe))
                if (edit := self.suppression(check, uri, f)) is not None:
                    actions.append(types.CodeAction(
                        title=f"Silence {f.code} on this line (`portlint: ignore[{f.code}]`)",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], edit=edit))
        safe = [f.fix for f in check.findings if f.fix.allowed(unsafe=False)]
        if safe and _asked(only, FIX_ALL) and (edit := self.edit(check, uri, safe)) is not None:
            actions.append(types.CodeAction(title="Apply every safe portlint fix", kind=FIX_ALL, edit=edit))
        return actions

    @staticmethod
    def edit(check: Check, uri: str, fixes: list[Fix]) -> types.WorkspaceEdit | None:
        """The fixes applied to the checked text, as `--fix` applies them (`apply_edits`),
        as one edit of the document version they were found in; None when they change nothing
        or would add a syntax error (`--fix` refuses such a rewrite too)."""
        after, applied = apply_edits(check.data, fixes)
        if not applied or after == check.data:
            return None
        if count_syntax_errors(check.language, after) > count_syntax_errors(check.language, check.data):
            return None
        return _document_edit(check, uri, after)

    @staticmethod
    def suppression(check: Check, uri: str, f: Finding) -> types.WorkspaceEdit | None:
        """The edit that silences `f` on the line it starts on (`suppress.silenced`)."""
        index = f.location.start_line - 1
        if not 0 <= index < len(check.positions.starts):
            return None
        start = check.positions.starts[index]
        end = check.positions.starts[index + 1] if index + 1 < len(check.positions.starts) else len(check.data)
        line = check.data[start:end]
        ending = line[len(line.rstrip(b"\r\n")):]
        silenced = suppress.silenced(line[:len(line) - len(ending)], check.language, f.code)
        if silenced is None:
            return None
        return _document_edit(check, uri, check.data[:start] + silenced + ending + check.data[end:])

    # ---- hover -------------------------------------------------------------------------------
    def hover(self, params: types.HoverParams) -> types.Hover | None:
        check = self.checks.get(params.text_document.uri)
        if check is None:
            return None
        here = [(f, d) for f, d in zip(check.findings, check.diagnostics) if _contains(d.range, params.position)]
        if not here:
            return None
        docs = load_all()
        parts = []
        for code in dict.fromkeys(f.code for f, _ in here):
            doc = docs[code]
            advice = "\n".join(f"- {title}" for title in dict.fromkeys(f.fix.title for f, _ in here if f.code == code))
            parts.append(f"**{doc.code} {doc.name}** ({doc.severity.value}): {doc.summary}\n\n{doc.why}\n\n"
                         f"{advice}\n\n[{doc.code} documentation]({doc_url(doc.code)})")
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)), here[0][1].range)


def _document_edit(check: Check, uri: str, after: bytes) -> types.WorkspaceEdit:
    """`after` as one edit of the checked document version: the bytes between what the two
    texts share at the start and at the end (whole characters), so the cursor and the undo
    history stay where they were."""
    before = check.data
    start = len(_common_prefix(before, after))
    tail = min(len(_common_prefix(before[::-1], after[::-1])), len(before) - start, len(after) - start)
    while start and _inside_character(before, start):
        start -= 1
    while tail and _inside_character(before, len(before) - tail):
        tail -= 1
    new_text = after[start:len(after) - tail].decode("utf-8", "surrogateescape")
    replacement = types.TextEdit(check.positions.range(start, len(before) - tail), new_text)
    document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=check.version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, [replacement])])


def _common_prefix(a: bytes, b: bytes) -> bytes:
    return os.path.commonprefix([a, b])


def _inside_character(data: bytes, offset: int) -> bool:
    """Whether `offset` falls inside a UTF-8 sequence (before a continuation byte)."""
    return offset < len(data) and data[offset] & 0xC0 == 0x80


def _asked(only, kind: str) -> bool:
    """Whether a request's `only` filter admits actions of `kind` (a kind admits its sub-kinds)."""
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _key(position: types.Position) -> tuple[int, int]:
    return position.line, position.character


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def _contains(r: types.Range, position: types.Position) -> bool:
    return _key(r.start) <= _key(position) <= _key(r.end)


def make_server() -> PortlintServer:
    server = PortlintServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PortlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: PortlintServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.check_when_settled(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PortlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.check(params.text_document.uri)
        ls.check_others_after_save(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PortlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.checks.pop(params.text_document.uri, None)
        ls.publish(params.text_document.uri, [], None)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: PortlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: PortlintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


def serve() -> None:
    """Serve one editor over standard input and output until it says exit."""
    make_server().start_io()
