"""`portlint server` as an editor meets it: a real LSP client (pygls') starts
`python -m portlint server` and talks to it over standard input and output."""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from portlint.ruledocs import load_all

# Long enough for a cold start on a busy machine; only a hung server ever waits it out.
PATIENCE = 120

KERNEL = """\
__global__ void sum(float *out, float v) {
    /* café \U0001F600 */ v += __shfl_down_sync(0xffffffff, v, 1);
    out[threadIdx.x] = v;
}
"""
WARP_HEADER = "#pragma once\n#define WARP_SIZE 32\n"
PORTED_HEADER = ("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define WARP_SIZE warpSize\n"
                 "#else\n#define WARP_SIZE 32\n#endif\n")
LANE = '#include "warp.h"\n__device__ int lane() { return threadIdx.x % WARP_SIZE; }\n'


class Editor:
    """What an editor keeps of a language server: the diagnostics published per file (each
    publication in order), the messages shown, and the text of each open file."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.shown: list[str] = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.arrived = asyncio.Event()

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)
            self.arrived.set()

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            self.shown.append(params.message)
            self.arrived.set()

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            pass

    async def _until(self, ready):
        async def wait():
            while (value := ready()) is None:
                self.arrived.clear()
                await self.arrived.wait()
            return value

        return await asyncio.wait_for(wait(), PATIENCE)

    async def diagnostics(self, uri: str, after: int = 0) -> list[types.Diagnostic]:
        """The diagnostics of the first publication for `uri` past the first `after` ones
        that is about the current text (a publication for an older version is skipped)."""
        def ready():
            for params in self.published.get(uri, [])[after:]:
                if params.version in (None, self.versions.get(uri)):
                    return list(params.diagnostics)
            return None

        return await self._until(ready)

    def count(self, uri: str) -> int:
        return len(self.published.get(uri, []))

    def open(self, path: Path) -> str:
        uri = from_fs_path(str(path))
        self.texts[uri], self.versions[uri] = path.read_text(), 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="cuda", version=1, text=self.texts[uri])))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))

    def save(self, uri: str, path: Path) -> None:
        path.write_text(self.texts[uri])
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))

    async def actions(self, uri: str, diagnostic: types.Diagnostic, only=None) -> list[types.CodeAction]:
        return await self.client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diagnostic.range,
            types.CodeActionContext(diagnostics=[diagnostic], only=only)))

    def apply(self, uri: str, edit: types.WorkspaceEdit) -> None:
        """Apply a workspace edit as an editor does (positions in UTF-16 code units), as a change."""
        (change,) = edit.document_changes
        assert change.text_document.uri == uri and change.text_document.version == self.versions[uri]
        text = self.texts[uri]
        lines = text.splitlines(keepends=True)

        def offset(position: types.Position) -> int:
            line = lines[position.line] if position.line < len(lines) else ""
            index = units = 0
            while units < position.character:
                units += 2 if ord(line[index]) > 0xFFFF else 1
                index += 1
            return sum(len(x) for x in lines[:position.line]) + index

        for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
        self.change(uri, text)


@asynccontextmanager
async def editor(root: Path):
    """An editor session with `portlint server` started in `root`; the server's standard
    error goes to a file, shown when the session fails."""
    client = LanguageClient("test-editor", "1")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                                        *os.environ.get("PYTHONPATH", "").split(os.pathsep)])}
    log = root.parent / "server-stderr.log"
    await client.start_io("sh", "-c", 'exec "$0" -m portlint server 2>"$1"', sys.executable, str(log),
                          cwd=str(root), env=env)
    session = Editor(client)
    try:
        await asyncio.wait_for(client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(root)))), PATIENCE)
        client.initialized(types.InitializedParams())
        yield session
    except BaseException:
        print(log.read_text(errors="replace")[-20000:], file=sys.stderr)
        raise
    finally:  # the server ends when told, whatever the session came to
        await asyncio.wait_for(client.shutdown_async(None), PATIENCE)
        client.exit(None)
        await asyncio.wait_for(client.stop(), PATIENCE)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_a_fix_from_the_editor_clears_its_diagnostic(tmp_path: Path) -> None:
    root = project(tmp_path, {"sum.cu": KERNEL})

    async def session():
        async with editor(root) as ed:
            uri = ed.open(root / "sum.cu")
            (found,) = await ed.diagnostics(uri)
            assert (found.code, found.source, found.severity) == ("W002", "portlint", types.DiagnosticSeverity.Error)
            assert found.code_description.href.endswith("rules/W002.md")
            line = KERNEL.splitlines()[1]
            column = len(line[:line.index("0xffffffff")].encode("utf-16-le")) // 2  # columns in UTF-16 units
            assert (found.range.start.line, found.range.start.character) == (1, column)
            assert found.range.end.character == column + len("0xffffffff")

            hover = await ed.client.text_document_hover_async(types.HoverParams(
                types.TextDocumentIdentifier(uri), found.range.start))
            assert load_all()["W002"].summary in hover.contents.value

            actions = await ed.actions(uri, found)
            (fix,) = [a for a in actions if a.is_preferred]
            assert fix.kind == types.CodeActionKind.QuickFix and "~0ull" in fix.title
            published = ed.count(uri)
            ed.apply(uri, fix.edit)
            assert "__shfl_down_sync(~0ull, v, 1)" in ed.texts[uri]
            assert await ed.diagnostics(uri, published) == []
            assert (root / "sum.cu").read_text() == KERNEL, "the server edits the buffer, never the file"

    asyncio.run(session())


TRAP = '__device__ void fail_hard() {\n    asm volatile("trap;");\n}\n'


def test_a_suppression_and_fix_all_from_the_editor(tmp_path: Path) -> None:
    two = KERNEL.replace("out[threadIdx.x] = v;", "v += __shfl_xor_sync(0xffffffff, v, 2);\n    out[threadIdx.x] = v;")
    root = project(tmp_path, {"sum.cu": two + TRAP})

    async def session():
        async with editor(root) as ed:
            uri = ed.open(root / "sum.cu")
            first, second, trap = await ed.diagnostics(uri)
            assert trap.code == "N005"
            (unsafe,) = [a for a in await ed.actions(uri, trap) if "__builtin_trap" in a.title]
            assert "unsafe" in unsafe.title and not unsafe.is_preferred

            actions = await ed.actions(uri, second)
            (silence,) = [a for a in actions if "ignore[W002]" in a.title]
            published = ed.count(uri)
            ed.apply(uri, silence.edit)
            assert "v += __shfl_xor_sync(0xffffffff, v, 2);  // portlint: ignore[W002]\n" in ed.texts[uri]
            left, still = await ed.diagnostics(uri, published)
            assert (left.range, still.code) == (first.range, "N005")

            (fix_all,) = await ed.actions(uri, left, only=["source.fixAll.portlint"])
            published = ed.count(uri)
            ed.apply(uri, fix_all.edit)
            assert "__shfl_down_sync(~0ull, v, 1)" in ed.texts[uri]
            # Every safe fix, and no unsafe one: the trap waits for a human.
            assert [d.code for d in await ed.diagnostics(uri, published)] == ["N005"]
            assert 'asm volatile("trap;")' in ed.texts[uri]

    asyncio.run(session())


def test_saving_a_header_rechecks_the_open_files_that_include_it(tmp_path: Path) -> None:
    root = project(tmp_path, {"warp.h": WARP_HEADER, "lane.cu": LANE,
                              "pyproject.toml": '[tool.portlint]\nseverity = { W001 = "note" }\n'})

    async def session():
        async with editor(root) as ed:
            source = ed.open(root / "lane.cu")
            (found,) = await ed.diagnostics(source)
            # The severity the project's configuration gives; the definition as a related place.
            assert (found.code, found.severity) == ("W001", types.DiagnosticSeverity.Information)
            (related,) = found.related_information
            assert related.location.uri == from_fs_path(str(root / "warp.h"))
            assert related.location.range.start.line == 1

            header = ed.open(root / "warp.h")
            await ed.diagnostics(header)
            published = ed.count(source)
            ed.change(header, PORTED_HEADER)
            ed.save(header, root / "warp.h")
            assert await ed.diagnostics(source, published) == []

    asyncio.run(session())


def test_bad_input_is_said_and_the_server_goes_on(tmp_path: Path) -> None:
    root = project(tmp_path, {"sum.cu": KERNEL, "broken.cu": "}}} __global__ void ((( {\n",
                              "big.cu": "//" + "x" * (9 << 20) + "\n", "odd.cu": "int x;\n"})

    async def session():
        async with editor(root) as ed:
            assert await ed.diagnostics(ed.open(root / "broken.cu")) is not None
            (big,) = await ed.diagnostics(ed.open(root / "big.cu"))
            assert "larger than 8 MiB" in big.message
            odd = ed.open(root / "odd.cu")
            await ed.diagnostics(odd)
            published = ed.count(odd)
            ed.change(odd, "int x; // \udcff\n")  # not Unicode: what an editor may hold of a bad byte
            (note,) = await ed.diagnostics(odd, published)  # checked all the same, the stray bytes as `?`
            assert "3 bytes not UTF-8 read as `?`" in note.message
            # A configuration that does not parse: said once, nothing published, the server lives.
            (root / "portlint.toml").write_text("select = [\n")
            published = ed.count(odd)
            ed.change(odd, "int y;\n")
            assert await ed.diagnostics(odd, published) == []
            assert any("invalid TOML" in m for m in ed.shown)
            (root / "portlint.toml").unlink()
            (found,) = await ed.diagnostics(ed.open(root / "sum.cu"))
            assert found.code == "W002"

    asyncio.run(session())
