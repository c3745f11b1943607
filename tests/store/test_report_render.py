"""Each block of the report's document model rendered exactly (outputs/report/render.py), and the
page around them: its policy, its header, its contents and its footer.

tests/store/test_report.py renders whole debates and checks what a page must hold; these say
what each block becomes, character for character, so that a dropped class (a number no longer
right-aligned, a turn's reply no longer wrapped), a lost caption or a changed policy fails here
in milliseconds. The mutation benchmark's ``render`` target runs them (docs/mutation.md,
"The report").
"""

from __future__ import annotations

import base64
import hashlib
import re

from outputs.report.document import Bullets, DefList, Document, Figures, Para, Section, Table, Turn
from outputs.report.render import CSP, STYLE, render
from outputs.report.safe import Markup

#: What every directive of the page's policy must say: nothing loads or runs but the style sheet
#: the page holds, pinned by its hash.
FORBIDDEN = ("default-src", "script-src", "img-src", "font-src", "connect-src", "media-src", "object-src", "frame-src",
             "base-uri", "form-action")


def _blocks(*blocks: object) -> str:
    """The HTML of ``blocks`` as one section of a page renders them, without the section's own tags."""
    page = render(Document("t", "s", [Section("x", "X", list(blocks))]))
    found = re.search(r'<section id="x" class="x"><h2>X</h2>(.*?)</section>', page, re.S)
    assert found is not None, page
    return found.group(1)


def test_the_pages_policy_pins_its_own_style_sheet_and_forbids_every_load() -> None:
    page = render(Document("t", "s", []))
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert policy is not None and style is not None
    assert style.group(1) == STYLE
    digest = base64.b64encode(hashlib.sha256(style.group(1).encode("utf-8")).digest()).decode("ascii")
    directives = dict(d.strip().split(" ", 1) for d in policy.group(1).split(";"))
    assert directives == {**dict.fromkeys(FORBIDDEN, "'none'"), "style-src": f"'sha256-{digest}'"}
    assert policy.group(1) == CSP  # the constant other code names is the policy pages carry


def test_paragraphs_lists_and_definitions_render_as_written() -> None:
    assert _blocks(Para("a <b>"), Para("n", "note"), Para("plain", "")) == '<p>a &lt;b&gt;</p><p class="note">n</p><p>plain</p>'
    assert _blocks(Bullets(["x", Para("y")])) == "<ul><li>x</li><li><p>y</p></li></ul>"
    assert (_blocks(DefList([("k<", "v"), ("nested", DefList([("a", 1)]))]))
            == "<dl><dt>k&lt;</dt><dd>v</dd><dt>nested</dt><dd><dl><dt>a</dt><dd>1</dd></dl></dd></dl>")
    assert _blocks(Markup("<hr>"), 2.5, "<i>") == "<hr>2.5&lt;i&gt;"  # Markup as built; any other value as text


def test_table_cells_are_aligned_by_what_they_hold() -> None:
    """Numbers (and numeric text) are right-aligned; a short word with no space (a role, a model
    id, up to 24 characters) is kept on one line; text with a longer word may break inside it;
    anything else wraps between words. Each table is in a box of its own (which scrolls sideways
    when the table is wider than the page)."""
    table = Table(["who", "p"], [["agent-a", 0.25], ["two words", "1e3"], [True, 3], ["x" * 24, "y" * 25], ["1.2.3", None],
                                 [f"a {'z' * 24}", f"b {'z' * 25}"]], caption="c<")
    assert _blocks(table) == (
        '<div class="wide"><table><caption>c&lt;</caption><thead><tr><th>who</th><th>p</th></tr></thead><tbody>'
        '<tr><td class="w">agent-a</td><td class="n">0.25</td></tr>'
        '<tr><td>two words</td><td class="n">1e3</td></tr>'
        '<tr><td>True</td><td class="n">3</td></tr>'
        f'<tr><td class="w">{"x" * 24}</td><td class="long">{"y" * 25}</td></tr>'
        '<tr><td class="w">1.2.3</td><td>None</td></tr>'
        f'<tr><td>a {"z" * 24}</td><td class="long">b {"z" * 25}</td></tr>'
        "</tbody></table></div>")
    # a table that is not numeric aligns nothing right, and one without a caption has none
    assert (_blocks(Table(["h"], [[1], ["2"]], numeric=False))
            == '<div class="wide"><table><thead><tr><th>h</th></tr></thead><tbody><tr><td>1</td></tr><tr><td class="w">2</td>'
               '</tr></tbody></table></div>')
    # in a definition list, a table takes the list's whole width
    assert (_blocks(DefList([("k", "v"), ("seats", Table(["h"], [[1]]))]))
            == '<dl><dt>k</dt><dd>v</dd><dt>seats</dt><dd class="table"><div class="wide"><table><thead><tr><th>h</th></tr>'
               '</thead><tbody><tr><td class="n">1</td></tr></tbody></table></div></dd></dl>')


def test_figures_hold_their_charts_and_an_empty_one_is_left_out() -> None:
    charts = [Markup("<svg>1</svg>"), Markup(""), Markup("<svg>2</svg>")]
    assert (_blocks(Figures(charts, caption="cap <x>"))
            == '<figure><div class="charts"><svg>1</svg><svg>2</svg></div><figcaption>cap &lt;x&gt;</figcaption></figure>')
    assert _blocks(Figures([Markup("<svg/>")])) == '<figure><div class="charts"><svg/></div></figure>'
    assert _blocks(Figures([Markup("")], caption="cap"), Para("after")) == "<p>after</p>"


def test_a_turn_shows_its_heading_request_reply_distribution_and_notes() -> None:
    turn = Turn("Round 1 · agent-a", "m · 12 tokens", "reply <i>", "the question", {"Malaria": 0.625, "Dengue": 0.375},
                [("parse notes", ["a", "b<"]), ("fit notes", ["c"])])
    assert _blocks(turn) == (
        '<article class="turn"><h3>Round 1 · agent-a</h3><div class="meta">m · 12 tokens</div>'
        '<div class="asked">asked: the question</div><div class="text">reply &lt;i&gt;</div>'
        '<div class="wide"><table class="dist"><caption>distribution</caption><tbody>'
        '<tr><td>Malaria</td><td class="n">62.5%</td></tr><tr><td>Dengue</td><td class="n">37.5%</td></tr></tbody></table>'
        '</div>'
        '<div class="notes">parse notes: a; b&lt;</div><div class="notes">fit notes: c</div></article>')
    # a reply of white space says it is empty; no request, distribution or notes: none shown
    assert (_blocks(Turn("h", "m", " \n", None, None, []))
            == '<article class="turn"><h3>h</h3><div class="meta">m</div><div class="text">(empty reply)</div></article>')


def test_the_page_has_its_header_contents_sections_and_footer() -> None:
    document = Document("Case <1>", "sub", [Section("a", "A", [Para("p")]), Section("b", "B <c>", [])],
                        redaction={"PHONE": 1, "EMAIL": 0, "NAME": 2})
    assert render(document, generator="Gen") == (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>Case &lt;1&gt;</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        '<header class="doc"><h1>Case &lt;1&gt;</h1><p>sub</p>'
        '<p class="warn">Redacted copy: masked 2 name, 1 phone. The journal keeps the original text. A name written in '
        "lower case, or alone at the start of a sentence, may not be caught: read before sharing.</p></header>"
        '<nav class="toc"><a href="#a">A</a><a href="#b">B &lt;c&gt;</a></nav>'
        '<section id="a" class="a"><h2>A</h2><p>p</p></section><section id="b" class="b"><h2>B &lt;c&gt;</h2></section>'
        '<footer class="doc">Made by Gen from its journal. Model text is shown as written: escaped, with control and '
        "bidirectional characters shown as ⟨U+XXXX⟩.</footer>\n</body>\n</html>\n")
    # a redaction that masked nothing says so; a copy that is not redacted says nothing of it
    assert "Redacted copy: nothing was found to mask." in render(Document("t", "s", [], redaction={"NAME": 0}))
    assert '<header class="doc"><h1>t</h1><p>s</p></header>' in render(Document("t", "s", []))
    assert "Made by Symposium from its journal." in render(Document("t", "s", []))
