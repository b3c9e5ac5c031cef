"""`portlint report`: the self-contained port-readiness page.

The browser test renders the demo's page in headless Chromium (Debian's `chromium`, which
`.ci/run` installs). Without it that test skips with the reason shown, except under CI
(`CI` set), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import scan
from portlint.cli import main
from portlint.finding import Severity, count_root_causes
from portlint.report import ReportContext
from portlint.report.html_report import EFFORT, markdown_to_html, person_days, render, rewritten_line

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo"
# Source text that would run if the page did not escape it.
HAZARD = ("__device__ float f(float v) {\n"
          "  return __shfl_down_sync(0xffffffff, v, 1);  // <script>alert(1)</script>\n}\n")
RESOURCE_TAGS = {"link", "script", "img", "iframe", "object", "embed", "source", "video", "audio", "image", "use"}


class Page(HTMLParser):
    """What the tests need from a page: ids, links (and whether inside a rule doc), resource tags, text by id."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, bool]] = []  # (href, inside a rule's documentation)
        self.resources: list[tuple[str, dict]] = []
        self.text_by_id: dict[str, str] = {}
        self._sections: list[bool] = []
        self._open: list[tuple[str, str]] = []  # (tag, id) whose text is being collected
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self._sections.append("rule" in (attrs.get("class") or "").split())
        if "id" in attrs:
            self.ids.add(attrs["id"])
            self.text_by_id[attrs["id"]] = ""
        if "src" in attrs or tag in RESOURCE_TAGS:
            self.resources.append((tag, attrs))
        if tag == "a" and "href" in attrs:
            self.links.append((attrs["href"], any(self._sections)))
        self._open.append((tag, attrs.get("id", "")))

    def handle_endtag(self, tag):
        if tag == "section" and self._sections:
            self._sections.pop()
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data):
        for _, ident in self._open:
            if ident:
                self.text_by_id[ident] += data


@pytest.fixture(scope="module")
def demo_result():
    return scan([DEMO], DEMO)


@pytest.fixture(scope="module")
def demo_page(demo_result) -> str:
    return render(demo_result, ReportContext(root=DEMO))


def test_page_loads_nothing_from_outside(demo_page: str) -> None:
    page = Page(demo_page)
    assert page.resources == [], "the page must embed everything"
    css = re.search(r"<style>(.*?)</style>", demo_page, re.S).group(1)
    assert "url(" not in css and "@import" not in css
    assert "default-src 'none'" in demo_page  # CSP: a browser refuses any fetch the page might try
    for href, in_rule_doc in page.links:
        if href.startswith(("http://", "https://")):
            assert in_rule_doc, f"external link outside the rule references: {href}"
        else:
            assert href.startswith("#"), href
    assert any(in_doc for href, in_doc in page.links if href.startswith("https://")), "references are linked"


def test_links_resolve_and_every_code_links_to_its_embedded_doc(demo_result, demo_page: str) -> None:
    page = Page(demo_page)
    dangling = [href for href, _ in page.links if href.startswith("#") and href[1:] not in page.ids]
    assert not dangling
    for code in {f.code for f in demo_result.findings}:
        assert f"<a class='code' href='#rule-{code}'>{code}</a>" in demo_page
        assert f"rule-{code}" in page.ids
        assert "Why it breaks on AMD" in page.text_by_id[f"rule-{code}"]


def test_headline_shows_the_counts(demo_result, demo_page: str) -> None:
    page = Page(demo_page)
    severities = Counter(f.severity for f in demo_result.findings)
    shown = {key: int(re.match(r"\d+", page.text_by_id[f"count-{key}"]).group()) for key in
             ("files", "findings", "roots", "error", "warning", "note", "safe", "unsafe", "suppressed")}
    assert shown["files"] == len(demo_result.files)
    assert shown["findings"] == len(demo_result.findings)
    # Root causes as --statistics counts them (a constant's definition and its uses are one).
    assert shown["roots"] == count_root_causes(demo_result.findings)
    assert (shown["error"], shown["warning"], shown["note"]) == (
        severities[Severity.ERROR], severities[Severity.WARNING], severities[Severity.NOTE])
    assert shown["safe"] > 0 and shown["unsafe"] > 0
    assert shown["suppressed"] == demo_result.suppressed


def test_charts_worst_files_and_effort_are_shown(demo_page: str) -> None:
    page = Page(demo_page)
    assert {"chart-family", "chart-dir", "worst", "effort"} <= page.ids
    assert "<title id='chart-family-t'>Findings per rule family</title>" in demo_page
    assert "W Wavefront" in page.text_by_id["chart-family"] and "csrc/" in page.text_by_id["chart-dir"]
    assert re.search(r"\d+(\.5)?–\d+(\.5)? person-days", page.text_by_id["effort"])
    for effort in EFFORT.values():  # the model is stated on the page
        assert effort.label.split("`")[0] in page.text_by_id["effort"]
    worst = page.text_by_id["worst"]
    assert worst.index("csrc/reduce.cu") < worst.index("csrc/jit_kernels.cu")  # errors outrank 1 warning


def test_page_opens_with_a_verdict_and_the_blockers_by_impact(demo_result, demo_page: str) -> None:
    page = Page(demo_page)
    body = demo_page[demo_page.index("<main>"):]
    assert body.index("id='verdict'") < body.index("id='count-files'"), "the answer comes first"
    verdict = page.text_by_id["verdict"]
    assert verdict.startswith("Not ready: the ROCm build fails")  # the demo has inline PTX
    from portlint.ruledocs import IMPACTS, load_all

    docs = load_all()
    impacts = {docs[f.code].impact for f in demo_result.findings}
    order = [IMPACTS[i] for i in IMPACTS if i in impacts]
    assert [verdict.index(label) for label in order] == sorted(verdict.index(label) for label in order)
    assert "A001 inline-ptx" in verdict


@pytest.mark.parametrize("findings, answer", [
    ((), "Ready: no port hazard found."),
    (("K002",), "Ready, with tuning notes"),
])
def test_verdict_follows_what_was_found(findings, answer, demo_result) -> None:
    kept = [replace(f, severity=Severity.NOTE) for f in demo_result.findings if f.code in findings][:1]
    result = replace(demo_result, findings=kept)
    assert Page(render(result, ReportContext(root=DEMO))).text_by_id["verdict"].startswith(answer)


def test_page_says_when_on_what_and_how_it_was_made(tmp_path: Path) -> None:
    (tmp_path / ".git" / "refs" / "heads").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / ".git" / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
    (tmp_path / "portlint.toml").write_text('ignore = ["N002"]\n')
    (tmp_path / "k.cu").write_text(HAZARD)
    result = CliRunner().invoke(main, ["report", str(tmp_path), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    page = Page((tmp_path / "r.html").read_text())
    provenance = page.text_by_id["provenance"]
    assert re.search(r"Generated\d{4}-\d\d-\d\d \d\d:\d\d UTC", provenance)
    assert "0123456789ab (main)" in provenance
    assert "portlint.toml" in provenance and "ignore N002" in provenance


def test_findings_are_collapsible_per_file_most_severe_first_with_rule_names(demo_page: str) -> None:
    files = re.findall(r"<details class='file' id='[^']+'( open)?><summary><code>([^<]+)</code>", demo_page)
    assert files, "each file's findings sit in a <details>"
    first = demo_page[demo_page.index("<details class='file'"):]
    first = first[:first.index("</details>")]
    levels = re.findall(r"<li class='finding (\w+)'>", first)
    assert levels == sorted(levels, key=["error", "warning", "note"].index)
    assert "href='#rule-W001'>W001</a> <span class='name'>hardcoded-warp-size</span>" in demo_page
    assert "<small>hardcoded-warp-size</small>" in demo_page  # codes beside their names in the family table


def test_a_huge_scan_makes_a_page_of_bounded_size(demo_result) -> None:
    from portlint.report import html_report

    many = [replace(f, message=f"{f.message} #{i}") for i in range(1000) for f in demo_result.findings[:30]]
    page = render(replace(demo_result, findings=many), ReportContext(root=DEMO))
    assert page.count("<li class='finding ") == html_report.MAX_DETAILED
    assert f"{len(many) - html_report.MAX_DETAILED:,} more findings" in page
    assert len(page) < 5_000_000


def test_directory_chart_goes_two_levels_deep(tmp_path: Path) -> None:
    for folder in ("csrc/kernels", "csrc/ops", "tools"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "k.cu").write_text(HAZARD)
    result = scan([tmp_path], tmp_path)
    chart = Page(render(result, ReportContext(root=tmp_path))).text_by_id["chart-dir"]
    assert "csrc/kernels/" in chart and "csrc/ops/" in chart and "tools/" in chart


def test_source_text_is_escaped(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    result = scan([tmp_path], tmp_path)
    [hazard] = [f for f in result.findings if f.code == "W002"]
    hostile = replace(hazard, message="Mask <script>alert('m')</script> `<b>x</b>` [x](javascript:alert(1))")
    result.findings = [hostile]
    page = render(result, ReportContext(root=tmp_path))
    assert "<script" not in page.lower() and "<b>" not in page and "href='javascript" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the snippet, shown as text
    assert "&lt;script&gt;alert(&#x27;m&#x27;)&lt;/script&gt;" in page
    assert "<code>&lt;b&gt;x&lt;/b&gt;</code>" in page
    assert rewritten_line(hostile).strip().startswith("return __shfl_down_sync(~0ull, v, 1);")


def test_markdown_subset() -> None:
    out = markdown_to_html(
        "Summary with `a<b>` and [docs](https://example.org/x?a=1&b=2).\n\n"
        "## Why\nTwo lines\nof text.\n\n"
        "```cpp\nif (a < b && c) {}\n```\n\n"
        "- one `x`\n  wrapped\n- two https://example.org/y.\n\n"
        "1. first\n2. second\n\n"
        "| a | b |\n|---|---|\n| `c` | d |\n\n"
        "[bad](javascript:alert(1)) <img src=x>",
        heading_offset=2,
    )
    assert "<p>Summary with <code>a&lt;b&gt;</code> and <a href='https://example.org/x?a=1&amp;b=2'" in out
    assert "<h4>Why</h4>\n<p>Two lines of text.</p>" in out
    assert "<pre><code class='language-cpp'>if (a &lt; b &amp;&amp; c) {}</code></pre>" in out
    assert "<ul><li>one <code>x</code> wrapped</li><li>two <a href='https://example.org/y'" in out
    assert "</a>.</li></ul>" in out  # the full stop is not part of the URL
    assert "<ol><li>first</li><li>second</li></ol>" in out
    assert "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td><code>c</code></td><td>d</td>" in out
    assert "[bad](javascript:alert(1)) &lt;img src=x&gt;" in out and "href='javascript" not in out


def test_effort_is_a_range_rounded_outwards() -> None:
    assert person_days(0, 0) == "no person-days"
    assert person_days(10, 100) == "0–0.5 person-days"
    assert person_days(7 * 60, 40 * 60) == "1–7 person-days"
    assert person_days(100 * 360 + 1, 130 * 360) == "100–130 person-days"  # whole days from ten on


def run(*args: str, cwd: Path):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def test_report_command_writes_the_page_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(HAZARD)
    result = run("report", ".", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "portlint-report.html").read_text(encoding="utf-8")
    assert "rule-W002" in page
    assert run("report", "-o", "out/r.html", "--select", "K", cwd=tmp_path).exit_code == 0
    assert "rule-W002" not in (tmp_path / "out" / "r.html").read_text(encoding="utf-8")


def test_report_command_usage_errors_exit_2_and_write_nothing(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(HAZARD)
    bad = run("report", ".", "--select", "Q999", cwd=tmp_path)
    assert bad.exit_code == 2 and "error:" in bad.output
    assert not (tmp_path / "portlint-report.html").exists()
    (tmp_path / "dir.html").mkdir()
    assert run("report", ".", "-o", "dir.html", cwd=tmp_path).exit_code == 2


# ---- in a browser ---------------------------------------------------------------


def _chromium() -> str:
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run must install it")
        pytest.skip("chromium not installed: apt-get install --no-install-recommends chromium")
    return chromium


def _run_chromium(url: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    # Headless, offline and quiet: no sandbox (root in CI), no GPU, no background fetches.
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}"]
    return subprocess.run([_chromium(), *flags, *args, url], capture_output=True, text=True, timeout=120)


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG; Pillow is not a dependency."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unexpected PNG format"
        elif kind == b"IDAT":
            idat += body
    bpp = 3 if colour == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):  # undo the PNG row filters
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def test_page_renders_in_a_browser(demo_page: str, tmp_path: Path) -> None:
    _chromium()
    page = tmp_path / "report.html"
    page.write_text(demo_page, encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = _run_chromium(page.as_uri(), tmp_path / "profile", "--enable-logging=stderr", "--v=0",
                         f"--screenshot={shot}", "--window-size=1280,2000")
    assert shot.exists(), proc.stderr[-2000:]
    # Any console message means a blocked fetch (the CSP logs each) or a script error.
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, "\n".join(console)

    width, height, rows = read_png(shot)
    bpp = len(rows[0]) // width
    pixels = Counter(row[x:x + 3] for row in rows[::4] for x in range(0, len(row), bpp * 4))
    white = pixels[b"\xff\xff\xff"]
    assert len(pixels) > 50, "the screenshot is nearly uniform"
    assert sum(pixels.values()) - white > 0.05 * sum(pixels.values()), "the screenshot is nearly blank"
    assert pixels[b"\xc6\x28\x28"] > 20, "no error-red (#c62828) pixels: the cards and charts did not render"

    dom = _run_chromium(page.as_uri(), tmp_path / "profile", "--dump-dom").stdout
    for element in ("id=\"chart-family\"", "id=\"chart-dir\"", "id=\"count-error\"", "id=\"rule-W002\"",
                    "class=\"finding error\""):
        assert element in dom, f"{element} missing from the rendered DOM"


def _severity_spans(fragment: str) -> Counter:
    return Counter({s: int(n.replace(",", "")) for n, s in re.findall(r"<span class='\w+'>([\d,]+) (error|warning|note)s?</span>",
                                                                     fragment)})


def test_every_count_on_the_page_is_per_severity_and_they_agree(demo_result, demo_page: str) -> None:
    # Each impact group of the verdict counts its findings by severity, as the cards do: the
    # errors of all groups are the Errors card, and so on (not "N findings" beside "M errors").
    groups = re.findall(r"<div class='impact \w+'><h3>.*?<span class='counts'>(.*?)</span></h3>", demo_page)
    assert groups
    total = sum((_severity_spans(g) for g in groups), Counter())
    page = Page(demo_page)
    for s in ("error", "warning", "note"):
        assert total[s] == int(re.match(r"[\d,]+", page.text_by_id[f"count-{s}"]).group().replace(",", "")), s
    assert "findings</span></h3>" not in demo_page


def test_effort_is_split_by_directory_most_work_first(tmp_path: Path) -> None:
    # Most findings sit in src/: it is split into its subdirectories; tools/ stays whole.
    for folder, copies in (("src/kernels", 3), ("src/ops", 2), ("tools", 1)):
        (tmp_path / folder).mkdir(parents=True)
        for i in range(copies):
            (tmp_path / folder / f"k{i}.cu").write_text(HAZARD)
    result = scan([tmp_path], tmp_path)
    page = render(result, ReportContext(root=tmp_path))
    table = page[page.index("id='effort-dirs'"):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><td><code>([^<]+)</code></td><td class='num'>([^<]+)</td><td class='num'>(\d+)</td>", table)
    assert [(d, int(n)) for d, _, n in rows] == [("src/kernels/", 3), ("src/ops/", 2), ("tools/", 1)]
    assert all("person-days" in estimate for _, estimate, _ in rows)


def test_chart_labels_are_whole_in_a_browser(tmp_path: Path) -> None:
    """Directory labels are measured where they are drawn (headless Chromium): none is cut by
    the chart's edge or runs into the bars; one too long to show keeps its end, after `…`,
    and its bar's tooltip names it whole."""
    _chromium()
    project = tmp_path / "project"
    long_dir = "third_party_integrations_of_the_port/conjugateGradientMultiDeviceCG_and_more"
    for folder in ("Samples/4_CUDA_Libraries", "Samples/2_Concepts_and_Techniques", "x", long_dir):
        (project / folder).mkdir(parents=True, exist_ok=True)
        (project / folder / "k.cu").write_text(HAZARD)
    page_text = render(scan([project], project), ReportContext(root=project))
    # The page runs no script (its CSP says so): this copy measures the labels with one.
    measure = """<script>
      const labels = [...document.querySelectorAll('svg.chart text.label')].map(t => {
        const box = t.getBBox();
        return {shown: t.textContent, left: box.x, right: box.x + box.width, anchor: +t.getAttribute('x'),
                tooltip: t.parentNode.querySelector('title').textContent};
      });
      document.body.setAttribute('data-labels', JSON.stringify(labels));
    </script>"""
    page_text = re.sub(r"<meta http-equiv=\"Content-Security-Policy\"[^>]*>", "", page_text)
    page = tmp_path / "report.html"
    page.write_text(page_text.replace("</body>", measure + "</body>"), encoding="utf-8")
    dom = _run_chromium(page.as_uri(), tmp_path / "profile", "--dump-dom").stdout
    import html
    import json

    labels = json.loads(html.unescape(re.search(r'data-labels="([^"]*)"', dom).group(1)))
    directories = [label for label in labels if label["tooltip"].split(":")[0].endswith("/")]
    assert len(directories) == 4, labels
    for label in labels:
        assert label["left"] >= 0, f"{label['shown']!r} is cut at the chart's left edge"
        assert label["right"] <= label["anchor"] + 0.5, f"{label['shown']!r} runs into the bars"
        full = label["tooltip"].split(": ")[0]
        assert label["shown"] == full or (label["shown"].startswith("…") and full.endswith(label["shown"][1:]))
    assert {label["tooltip"].split(": ")[0] for label in directories} >= {
        "Samples/4_CUDA_Libraries/", "Samples/2_Concepts_and_Techniques/", f"{long_dir}/"}
    assert any(label["shown"].startswith("…") for label in directories), "the longest label is shortened"
