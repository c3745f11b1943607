"""The HTML report in a real browser (headless Chromium): drawn, as wide as its text, silent on
the network and in the console, and a hostile turn shown as text.

Needs Debian's ``chromium`` (``.ci/run`` installs it when missing). Without it every test here
skips and the run ends with ``!!! N BROWSER TEST(S) SKIPPED`` (tests/conftest.py);
``SYMPOSIUM_REQUIRE_BROWSER=1`` turns the skip into a failure.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from outputs.export import write_private
from outputs.report import build, render, report_html
from outputs.report.safe import Markup
from outputs.report.svg import PALETTE
from store.journal import Journal
from store.queries import Queries
from tests.helpers.browser import chromium, needs_chromium, recording_server, widths
from tests.helpers.png import Image, read_png
from tests.helpers.report_debates import SCRIPT, cited_evidence_debate, every_protocol, hostile_debate, wide
from tests.helpers.sample_debate import record_sample

pytestmark = needs_chromium

WIDTH, HEIGHT = 1200, 2600


def _sample(tmp_path: Path) -> dict[str, Any]:
    with Journal(tmp_path / "j.db") as journal:
        record_sample(journal, rounds=3)
        debate = Queries(journal).debate("sample0001ab")
    assert debate is not None
    return debate


def _ink(image: Image, x0: int, x1: int) -> int:
    """Pixels in columns [x0, x1) that are not (nearly) white."""
    c = image.channels
    return sum(1 for row in image.rows for i in range(x0 * c, x1 * c, c) if min(row[i], row[i + 1], row[i + 2]) < 235)


def _colour(image: Image, rgb: tuple[int, int, int], tolerance: int = 12) -> int:
    c = image.channels
    return sum(1 for row in image.rows for i in range(0, len(row), c)
               if abs(row[i] - rgb[0]) <= tolerance and abs(row[i + 1] - rgb[1]) <= tolerance and abs(row[i + 2] - rgb[2]) <= tolerance)


def test_the_report_is_drawn_and_as_wide_as_its_text(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    write_private(page, report_html(_sample(tmp_path))[0])
    shot = tmp_path / "report.png"
    run = chromium(page, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}")
    assert run.console == []
    image = read_png(shot)
    assert (image.width, image.height) == (WIDTH, HEIGHT)
    # not blank: text down the page
    assert _ink(image, 0, WIDTH) > 20_000
    # as wide as the text: the body is centred at most 60rem wide, so nothing reaches the margins
    assert _ink(image, WIDTH - 60, WIDTH) == 0 and _ink(image, 0, 40) == 0


@pytest.mark.parametrize("section", ["metrics", "distributions"])
def test_the_plots_are_drawn(tmp_path: Path, section: str) -> None:
    """The metric lines and the distribution bars, each shown alone (with the summary above)
    so that one cannot pass for the other: the series' colours appear in quantity."""
    document = build(_sample(tmp_path))
    document.sections = [s for s in document.sections if s.id in ("summary", section)]
    assert len(document.sections) == 2
    page = tmp_path / "part.html"
    write_private(page, render(document))
    shot = tmp_path / "part.png"
    run = chromium(page, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}")
    assert run.console == []
    image = read_png(shot)
    first, second = (tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)) for colour in PALETTE[:2])
    assert _colour(image, first) > 1_500  # type: ignore[arg-type]
    if section == "distributions":  # two agents: two colours of bars
        assert _colour(image, second) > 1_500  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["evince", "socrasynth", "agreement", "deliberation", "humanloop", "d3"])
def test_every_protocols_report_opens_with_no_console_message(tmp_path_factory: pytest.TempPathFactory, protocol: str,
                                                              _debates: dict[str, dict[str, Any]]) -> None:
    """Each protocol's report opens silently, drawn, and as wide as its text (its own tables:
    SocraSynth's judges', D3's jury, the conference's stages …)."""
    folder = tmp_path_factory.mktemp(protocol)
    page = folder / "report.html"
    write_private(page, report_html(_debates[protocol])[0])
    shot = folder / "report.png"
    run = chromium(page, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}")
    assert run.console == [], run.console
    image = read_png(shot)
    assert _ink(image, 0, WIDTH) > 20_000
    assert _ink(image, WIDTH - 60, WIDTH) == 0 and _ink(image, 0, 40) == 0


@pytest.fixture(scope="module")
def _debates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return every_protocol(tmp_path_factory.mktemp("browser-reports"))


@pytest.mark.parametrize("name", ["evince", "socrasynth", "agreement", "deliberation", "humanloop", "d3", "multiagent",
                                  "evidence"])
def test_the_report_never_scrolls_sideways(tmp_path: Path, name: str, _debates: dict[str, dict[str, Any]]) -> None:
    """Each protocol's report, made as wide as its content can make it (:func:`wide`: words no
    line can break at in the title, the turns, the moderator's words and the judges' reasons; long
    model ids and file paths; long distribution labels; every cost figure; cited evidence with a
    long file name), fits a 1,200 px window: the page does not scroll sideways, nor does any table
    but the provenance's record of six seats or more (one column each). At 800 px the page still
    does not: a table too wide for it scrolls inside its own box."""
    debate = wide(cited_evidence_debate(tmp_path) if name == "evidence" else _debates[name])
    page = tmp_path / "report.html"
    write_private(page, report_html(debate)[0])
    at_1200 = widths(page, 1200)
    assert at_1200.window == 1200
    assert (at_1200.page, at_1200.overflowing) == (1200, [])
    seats = len(debate["provenance"]["participants"])
    assert at_1200.scrolling_boxes == [] or (seats >= 6 and all(b.startswith("provenance ") for b in at_1200.scrolling_boxes)), \
        at_1200.scrolling_boxes
    at_800 = widths(page, 800)
    assert at_800.window == 800
    assert (at_800.page, at_800.overflowing) == (800, [])


#: What only a chart draws: found outside an ``<svg>``, a chart has spilled onto the page.
_DRAWING = {"rect", "line", "path", "circle", "polyline", "text", "tspan"}


class _Dom(HTMLParser):
    """The tags and text of a DOM as Chromium serialises it (every element closed), and which
    of them stand inside an ``<svg>``."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.names: list[str] = []
        self.text: list[str] = []
        self.chart_text: list[str] = []
        self.spilled: list[str] = []  # drawing elements outside every <svg>
        self.title = ""
        self._in_title = False
        self._svg = 0
        self.feed(html)

    def handle_starttag(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.append(name)
        self._in_title = name == "title"
        if name == "svg":
            self._svg += 1
        if name in _DRAWING and not self._svg:
            self.spilled.append(name)

    def handle_endtag(self, name: str) -> None:
        self._in_title = False
        if name == "svg" and self._svg:
            self._svg -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        self.text.append(data)
        if self._svg:
            self.chart_text.append(data)


def test_a_hostile_turn_renders_as_text_and_nothing_leaves_the_page(tmp_path: Path) -> None:
    with recording_server() as (port, hits):
        page = tmp_path / "hostile.html"
        write_private(page, report_html(hostile_debate(tmp_path / "j.db", port))[0])
        run = chromium(page, "--dump-dom", "--virtual-time-budget=3000")
        assert hits == []
    assert run.console == [], run.console
    dom = _Dom(run.stdout)
    body = dom.names[dom.names.index("body"):]
    assert "script" not in dom.names and "img" not in body and "b" not in body and "i" not in body
    assert dom.names.count("style") == 1
    shown = "".join(dom.text)
    assert f"<img src=http://127.0.0.1:{port}/leak.png onerror=alert(1)>" in shown
    assert SCRIPT in shown and "<b>bold</b>" in shown and "⟨U+202E⟩" in shown and "\u202e" not in shown
    assert dom.title.startswith("Case <script>")  # the script did not run: the title is the text, not 'pwned'
    # the hostile label's chart is drawn whole: its marked text inside the SVG, none of it spilled onto the page
    assert dom.spilled == [] and "<i>Hepatitis</i> ⟨U+202E⟩C" in "".join(dom.chart_text)


def test_the_recorder_and_the_policy_are_real(tmp_path: Path) -> None:
    """The harness can fail: the same image tag written raw into a page with no policy reaches
    the recorder; written raw into the report (as if the escaping failed) the policy blocks it
    and the console says so."""
    with recording_server() as (port, hits):
        raw = tmp_path / "raw.html"
        raw.write_text(f"<!DOCTYPE html><p>x</p><img src=http://127.0.0.1:{port}/raw.png>", encoding="utf-8")
        chromium(raw, "--dump-dom", "--virtual-time-budget=3000")
        assert hits == ["/raw.png"]
        hits.clear()
        document = build(_sample(tmp_path))
        document.sections[0].blocks.append(Markup(f"<img src=http://127.0.0.1:{port}/escaped.png><script>document.title='ran'</script>"))
        injected = tmp_path / "injected.html"
        injected.write_text(render(document), encoding="utf-8")
        run = chromium(injected, "--dump-dom", "--virtual-time-budget=3000")
        assert hits == []
    assert any("Content Security Policy" in line for line in run.console), run.console
    assert "<title>ran</title>" not in run.stdout


def test_save_as_pdf_gives_a_paginated_document(tmp_path: Path) -> None:
    """The print style sheet at work: Chromium's "Save as PDF" of the report has A4 pages (the
    transcript and the provenance each start a page) and the page raises nothing in the console."""
    page = tmp_path / "report.html"
    write_private(page, report_html(_sample(tmp_path))[0])
    pdf = tmp_path / "report.pdf"
    run = chromium(page, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert run.console == []
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = [int(n) for n in re.findall(rb"/Count (\d+)", data)]
    assert pages and max(pages) >= 3, pages
    boxes = set(re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data))
    assert boxes and all(abs(float(w) - 595.9) < 2 and abs(float(h) - 842.9) < 2 for w, h in boxes), boxes  # A4 in points
