"""The report's document as one self-contained HTML file.

No script, font, style sheet or image comes from outside: the style is one inline ``<style>``
whose SHA-256 is the only style the Content-Security-Policy allows; the plots are inline SVG;
``default-src 'none'`` forbids every load and every script (an ``<img src=http…>`` a model
wrote could not load even if it escaped the escaping, which it does not: every value goes
through :func:`outputs.report.safe.text`). A print style sheet makes a browser's "Save as PDF"
give a paginated document.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from outputs.report.document import Cited, Document, Turn
from outputs.report.safe import Markup, join, tag, text
from outputs.report.svg import CHART_STYLE, bars, line_chart
from protocols.core.present import BarChart, Bullets, DefList, Figures, LineChart, Para, Section, Table

STYLE = """
:root { --ink: #1b1f23; --muted: #5f6b73; --rule: #d8dde1; --band: #f4f6f8; --accent: #2b4c7e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 60rem; padding: 1.5rem 1.5rem 3rem; color: var(--ink); background: #fff;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; overflow-wrap: anywhere; }
header.doc { border-bottom: 3px solid var(--accent); margin-bottom: 1rem; }
header.doc h1 { margin: 0 0 .2rem; font-size: 1.6rem; overflow-wrap: anywhere; }
header.doc p { margin: 0 0 .6rem; color: var(--muted); }
nav.toc { font-size: .9rem; margin: .5rem 0 1rem; }
nav.toc a { color: var(--accent); margin-right: .9rem; text-decoration: none; white-space: nowrap; display: inline-block; }
h2 { font-size: 1.25rem; border-bottom: 1px solid var(--rule); padding-bottom: .2rem; margin-top: 2rem; }
p.h { font-weight: 600; margin: 1rem 0 .3rem; }
p.note { color: var(--muted); font-style: italic; }
p.warn { color: #8a4b00; background: #fff4e0; padding: .4rem .6rem; border-left: 3px solid #d08000; }
p.lead { font-weight: 500; }
p.sub { font-weight: 600; font-size: .9rem; margin: .8rem 0 .1rem; border-top: 1px dotted var(--rule); padding-top: .3rem; }
p.hash, code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: .85rem; overflow-wrap: anywhere; }
p.subject { white-space: pre-wrap; background: var(--band); padding: .5rem .7rem; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: minmax(8rem, max-content) minmax(0, 1fr); gap: .15rem 1rem; margin: .4rem 0; }
dt { color: var(--muted); overflow-wrap: anywhere; max-width: 16rem; }
dd { margin: 0; overflow-wrap: anywhere; min-width: 0; }
dd > dl { margin: 0; }
dd.table { grid-column: 1 / -1; }
dd.table table { font-size: .8rem; }
div.wide { max-width: 100%; overflow-x: auto; margin: .5rem 0 1rem; }
table { border-collapse: collapse; font-size: .88rem; width: 100%; overflow-wrap: break-word; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; }
th, td { border-bottom: 1px solid var(--rule); padding: .25rem .4rem; text-align: left; vertical-align: top; }
th { background: var(--band); }
td.w { white-space: nowrap; }
td.long { overflow-wrap: anywhere; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
ul { margin: .3rem 0; padding-left: 1.3rem; }
figure { margin: .6rem 0 1rem; }
figure .charts { display: flex; flex-wrap: wrap; gap: .6rem 1rem; }
figcaption { color: var(--muted); font-size: .85rem; }
svg.chart { max-width: 100%; height: auto; }
""" + CHART_STYLE + """
article.turn { border-left: 3px solid var(--rule); padding: .3rem 0 .3rem .8rem; margin: .8rem 0; }
article.turn h3 { font-size: 1rem; margin: 0; }
article.turn .meta { color: var(--muted); font-size: .85rem; }
article.turn .text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; }
article.turn .asked { color: var(--muted); font-size: .85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
article.turn table.dist { width: auto; min-width: min(16rem, 100%); }
article.turn div.wide { margin: .3rem 0; }
ul.cited { list-style: none; padding-left: .2rem; font-size: .88rem; margin: .2rem 0; }
ul.cited li.supported a { color: #1d6b2f; }
ul.cited li.not_found { color: #a01818; }
ul.cited li.uncited { color: var(--muted); }
div.passage { border-left: 3px solid #1d6b2f; padding: .2rem .6rem; margin: .4rem 0; overflow-wrap: anywhere; }
div.passage p { margin: 0; white-space: pre-wrap; }
span.ctl { color: #b00020; background: #fde7ea; font-family: ui-monospace, monospace; font-size: .8em; }
.notes { font-size: .85rem; color: #6b4b00; }
footer.doc { margin-top: 2rem; color: var(--muted); font-size: .8rem; border-top: 1px solid var(--rule); padding-top: .5rem; }
@media print {
  @page { size: A4; margin: 16mm 14mm 18mm; }
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  nav.toc { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  p.h, caption { break-after: avoid; page-break-after: avoid; }
  article.turn, figure, svg.chart, tr, dl { break-inside: avoid; page-break-inside: avoid; }
  section.transcript, section.provenance { break-before: page; page-break-before: always; }
  a { color: inherit; text-decoration: none; }
  th { background: none; border-bottom: 1.5px solid #000; }
  div.wide { overflow-x: visible; }
}
"""


def policy() -> str:
    """The page's Content-Security-Policy. Nothing may load or run: no script, no remote (or
    local) fetch of any kind, no form, no base URL; only the one inline style sheet, by its
    SHA-256, and inline SVG (part of the document).

    Worked out by :func:`render` for each page (a hash of 4 kB: microseconds) rather than only
    once at import, so that the policy a page carries is the one this code makes now: a change
    to it reaches the page tests (and the mutation benchmark's mutants reach them, which a value
    computed at import never does)."""
    digest = base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; script-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; font-src 'none'; "
            "connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'")


#: :func:`policy`, for the tests and the callers that name it.
CSP = policy()


def _block(block: Any) -> Markup:
    if isinstance(block, Markup):
        return block
    if isinstance(block, Para):
        return tag("p", block.text, class_=block.kind or None)
    if isinstance(block, DefList):
        # a table (a few records, one column each) takes the list's whole width, under its name
        return tag("dl", join(tag("dt", k) + tag("dd", _block(v), class_="table" if isinstance(v, Table) else None)
                              for k, v in block.items))
    if isinstance(block, Bullets):
        return tag("ul", join(tag("li", _block(v)) for v in block.items))
    if isinstance(block, Table):
        head = tag("tr", join(tag("th", h) for h in block.headers))
        rows = []
        for row in block.rows:
            cells = []
            for value in row:
                numeric = block.numeric and _is_number(value)
                cells.append(tag("td", _block(value), class_="n" if numeric else _fit(value)))
            rows.append(tag("tr", join(cells)))
        caption = tag("caption", block.caption) if block.caption else ""
        return _scrolls(tag("table", Markup(caption + tag("thead", head) + tag("tbody", join(rows)))))
    if isinstance(block, Figures):
        charts = [c for c in (_chart(c) for c in block.charts) if c]
        if not charts:
            return Markup("")
        caption = tag("figcaption", block.caption) if block.caption else ""
        return tag("figure", Markup(tag("div", join(charts), class_="charts") + caption))
    if isinstance(block, Turn):
        return _turn(block)
    if isinstance(block, Cited):
        anchor = _anchor(block.passage)
        return tag("div", Markup(tag("p", block.label, class_="h") + tag("p", block.text)), class_="passage",
                   id=anchor or None)
    return text(block)


#: The longest word a table keeps whole: longer ones (a path, a URL, a model file's name) break
#: anywhere, so that they, not the words beside them, give way when the page is narrow.
WORD = 24


def _fit(value: Any) -> str | None:
    """A cell's class: ``w``, a short word (a role, a model id) not broken at its hyphen to make
    room; ``long``, text with a word longer than :data:`WORD`, which may break inside that word."""
    if not isinstance(value, str):
        return None
    if len(value) <= WORD and " " not in value:
        return "w"
    return "long" if any(len(word) > WORD for word in value.split()) else None


def _scrolls(table: Markup) -> Markup:
    """A table in a box of its own that scrolls sideways when the table is wider than the page
    (many seats, a narrow window): the page itself never scrolls sideways, so the text beside
    the table stays where it is read."""
    return tag("div", table, class_="wide")


_PASSAGE_ID = re.compile(r"E[0-9]{1,9}")


def _anchor(passage: str | None) -> str:
    """The page's anchor of a passage (``E7`` → ``e7``); empty for anything that is not an id."""
    return passage.lower() if passage is not None and _PASSAGE_ID.fullmatch(passage) else ""


def _chart(chart: Any) -> Markup:
    """A chart's data drawn as inline SVG (drawn markup passes as it is)."""
    if isinstance(chart, LineChart):
        return line_chart(chart.title, chart.series)
    if isinstance(chart, BarChart):
        return bars(chart.title, chart.groups, scale=chart.scale, percent=chart.percent)
    return chart if isinstance(chart, Markup) else Markup("")


def _is_number(value: Any) -> bool:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def _turn(turn: Turn) -> Markup:
    parts = [tag("h3", turn.heading), tag("div", turn.meta, class_="meta")]
    if turn.request:
        parts.append(tag("div", "asked: " + turn.request, class_="asked"))
    parts.append(tag("div", turn.text if turn.text.strip() else "(empty reply)", class_="text"))
    if turn.distribution:
        rows = join(tag("tr", tag("td", label) + tag("td", f"{p:.1%}", class_="n")) for label, p in turn.distribution.items())
        parts.append(_scrolls(tag("table", Markup(tag("caption", "distribution") + tag("tbody", rows)), class_="dist")))
    for name, notes in turn.notes:
        parts.append(tag("div", f"{name}: " + "; ".join(notes), class_="notes"))
    if turn.citations:
        items = []
        for status, line, passage in turn.citations:
            anchor = _anchor(passage) if status == "supported" else ""
            body = tag("a", line, href=f"#{anchor}") if anchor else text(line)
            items.append(tag("li", body, class_=status if status in ("supported", "not_found", "uncited") else None))
        parts.append(tag("ul", join(items), class_="cited"))
    return tag("article", join(parts), class_="turn")


def _section(section: Section) -> Markup:
    body = tag("h2", section.title) + join(_block(b) for b in section.blocks)
    return tag("section", body, id=section.id, class_=section.id)


def render(document: Document, *, generator: str = "Symposium") -> str:
    """The whole HTML page for ``document``."""
    toc = tag("nav", join(tag("a", s.title, href=f"#{s.id}") for s in document.sections), class_="toc")
    redaction = ""
    if document.redaction is not None:
        counted = ", ".join(f"{n} {kind.lower()}" for kind, n in sorted(document.redaction.items()) if n)
        masked = f"masked {counted}" if counted else "nothing was found to mask"
        redaction = tag("p", f"Redacted copy: {masked}. The journal keeps the original text. A name written in "
                             "lower case, or alone at the start of a sentence, may not be caught: read before sharing.",
                        class_="warn")
    header = tag("header", Markup(tag("h1", document.title) + tag("p", document.subtitle) + redaction), class_="doc")
    footer = tag("footer", f"Made by {generator} from its journal. Model text is shown as written: escaped, with control "
                           "and bidirectional characters shown as ⟨U+XXXX⟩.", class_="doc")
    body = header + toc + join(_section(s) for s in document.sections) + footer
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{policy()}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="referrer" content="no-referrer">\n'
            f"<title>{text(document.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
