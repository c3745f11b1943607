"""The one plotter (outputs/report/svg.py) behind every chart the project draws: the report's
inline charts and the diagnosis benchmark's two chart files.

Each chart below holds a hostile name (markup, a script, quotes, an escape, a right-to-left
override, a character XML forbids) wherever it shows text from outside the code. Whatever the
name holds, each is well-formed SVG (the benchmark's are files a viewer opens alone) made only
of the plotter's own elements, names its image by its ``<title>``, and shows the name as the
text it reads as, its unsafe characters marked in a ``<tspan>``. The benchmark's charts are in
the same table: they pass only while they are drawn by the same plotter.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from outputs.report.safe import Markup
from outputs.report.svg import Estimate, bars, columns, line_chart, scatter
from tui.bench import report as bench
from tui.bench.diagnosis import Report

HOSTILE = "<script>x</script>\u202e&\"'\x1b\ufffe"
#: How the name must read in the chart.
SHOWN = "<script>x</script>⟨U+202E⟩&\"'⟨U+001B⟩⟨U+FFFE⟩"
SVG = "{http://www.w3.org/2000/svg}"
#: Every element the plotter writes.
ELEMENTS = {"svg", "title", "desc", "style", "rect", "line", "path", "circle", "polyline", "text", "tspan"}


def _report(model: str) -> Report:
    names = [f"{model} alone", "model-b alone", "mixture (no debate)", "EVINCE, linear cooling"]
    rows = {n: {"acc1": a, "acc1_ci": (a - 0.1, a + 0.1), "generated_tokens_per_case": g}
            for n, a, g in zip(names, (0.3, 0.4, 0.45, 0.6), (100.0, 120.0, 220.0, 900.0))}
    return Report({"models": [model, "model-b"]}, names, rows, [])


def _charts(name: str) -> dict[str, tuple[Markup | str, str]]:
    """Every kind of chart with ``name`` as each text it shows from outside: (the chart, the
    title it must carry)."""
    estimates = [Estimate(name, 0.4, 0.3, 0.5, "single model", 120.0), Estimate("b", 0.6, 0.5, 0.7, name, 900.0)]
    report = _report(name)
    return {
        "line": (line_chart(name, {name: [(0, 0.1), (1, 0.3)], "b": [(0, 0.2), (1, None), (2, 0.5)]}, x_label=name), name),
        "bars": (bars(name, {name: {name: 0.6, "x": 0.4}, "b": {name: 0.3}}), name),
        "columns": (columns(name, estimates), name),
        "scatter": (scatter(name, estimates, x_label=name, standalone=True), name),
        "bench accuracy": (bench.svg(report), "Diagnostic accuracy (Acc@1) with 95% bootstrap intervals"),
        "bench cost": (bench.cost_svg(report), "Acc@1 (95% bootstrap interval) against generated tokens per case"),
    }


@pytest.mark.parametrize("kind", list(_charts("n")))
def test_a_hostile_name_is_text_in_every_chart(kind: str) -> None:
    chart, title = _charts(HOSTILE)[kind]
    assert "\u202e" not in chart and "\x1b" not in chart and "<script" not in chart
    root = ET.fromstring(chart)  # well-formed: an SVG file that a viewer opens alone
    elements = list(root.iter())
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert {e.tag.removeprefix(SVG) for e in elements} <= ELEMENTS
    # the image's accessible name: its first child, the title, read as written
    assert root[0].tag == f"{SVG}title" and root[0].text == title.replace(HOSTILE, SHOWN)
    drawn = ["".join(e.itertext()) for e in elements if e.tag == f"{SVG}text"]
    assert any(SHOWN in text for text in drawn), drawn
    marks = [e for e in elements if e.tag == f"{SVG}tspan"]
    assert marks and all(re.fullmatch(r"⟨U\+[0-9A-F]{4,6}⟩", e.text or "") and e.attrib == {"fill": "#b00020"} for e in marks)


def test_the_benchmarks_charts_describe_their_figures_and_stand_alone() -> None:
    """A chart file carries its style and a white ground (a viewer shows it alone, perhaps on a
    dark page), and its figures as a ``<desc>`` (a screen reader reads them); one point per
    system on the cost chart."""
    report = _report("model-a")
    for chart in (bench.svg(report), bench.cost_svg(report)):
        root = ET.fromstring(chart)
        desc = root.find(f"{SVG}desc")
        assert desc is not None and "model-a alone (single model): 0.300 [0.200, 0.400]" in (desc.text or "")
        assert root.find(f"{SVG}style") is not None and root.find(f"{SVG}rect") is not None
    cost = ET.fromstring(bench.cost_svg(report))
    assert len(cost.findall(f".//{SVG}circle")) == len(report.systems)
    assert "at 900 generated tokens per case" in (cost.findtext(f"{SVG}desc") or "")


def test_a_benchmark_with_no_system_still_writes_an_image() -> None:
    """No system scored (every case failed): each chart file is the empty frame, named, not an
    empty file a viewer cannot open."""
    report = Report({"models": []}, [], {}, [])
    for chart in (bench.svg(report), bench.cost_svg(report)):
        root = ET.fromstring(chart)
        assert root[0].tag == f"{SVG}title" and root[0].text and root.find(f"{SVG}desc") is None
        assert not root.findall(f".//{SVG}circle") and len(root.findall(f".//{SVG}rect")) == 2  # the ground, the frame
