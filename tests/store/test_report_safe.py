"""The report's escaping (outputs/report/safe.py) on its own: whatever a value is, it reaches the
page as the text it reads as, and the page's own markup is only what the code wrote.

tests/store/test_report.py renders whole hostile debates; these hold each helper's contract
exactly, so a change to one (a separator, a default, a value's text) cannot hide in a page that
still parses. The mutation benchmark's ``safe`` target runs them (docs/mutation.md, "The report").
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from outputs.report.safe import Markup, join, neutral, svg_text, tag, text
from protocols.core.text import UNSAFE_CHARACTERS

#: Any text, with the characters that matter here drawn often: ``st.text`` given an alphabet of
#: ``characters() | sampled_from(...)`` almost never draws the sampled ones (none in 300 examples).
_UNTRUSTED = st.lists(st.sampled_from("<>&\"'\r\n\u202e\x1b\ufffe\uffff") | st.characters(codec="utf-8")).map("".join)


class _Read(HTMLParser):
    """What a browser's parser makes of a fragment: its tags and its text."""

    def __init__(self, fragment: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data = ""
        self.feed(fragment)
        self.close()

    def handle_starttag(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((name, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.data += data


def test_line_ends_of_any_system_are_line_breaks_not_marks() -> None:
    """A model (or a pasted case) writing Windows or old Mac line ends shows line breaks, as the
    app does; only a carriage return's other uses would be a control, and there are none left."""
    assert text("one\r\ntwo\rthree\nfour") == "one\ntwo\nthree\nfour"
    assert text("\r\n\r\n") == "\n\n"  # two Windows line ends are two breaks, not three or four
    assert text("a\x0bb") == 'a<span class="ctl">⟨U+000B⟩</span>b'  # a control that is no line end is shown


def test_a_value_that_is_not_a_string_is_shown_as_its_text_escaped() -> None:
    """Numbers, ``None`` and objects from a journal's JSON (a provenance record's values) are
    shown as ``str()`` shows them, and an object whose text holds markup is escaped like any text."""
    assert text(0.25) == "0.25" and text(7) == "7" and text(None) == "None" and text(False) == "False"

    class Shown:
        def __str__(self) -> str:
            return "<img src=x onerror=alert(1)> \u202e"

    assert text(Shown()) == '&lt;img src=x onerror=alert(1)&gt; <span class="ctl">⟨U+202E⟩</span>'
    assert tag("td", 3, class_=1.5) == '<td class="1.5">3</td>'


def test_join_escapes_its_parts_and_its_separator_and_adds_nothing() -> None:
    assert join(["<x>", tag("i", "y"), 2]) == "&lt;x&gt;<i>y</i>2"  # no separator unless one is given
    assert join(["a", "b"], "<br>") == "a&lt;br&gt;b"
    assert join(["a", "b"], Markup("<br>")) == "a<br>b"
    assert join([]) == "" and isinstance(join([]), Markup)


def test_tag_writes_only_the_attributes_given_with_their_names_spelled_for_html() -> None:
    """An element given no body is empty; an attribute that is ``None`` is left out; a Python
    keyword's trailing underscore is dropped and an inner one is a hyphen."""
    assert tag("td") == "<td></td>"
    assert tag("a", "x", href="#s", class_="toc", id=None) == '<a href="#s" class="toc">x</a>'
    assert tag("span", aria_label='"<q>"', data_role="note") == '<span aria-label="&quot;&lt;q&gt;&quot;" data-role="note"></span>'


def test_an_attribute_holds_text_only() -> None:
    """A control in an attribute is marked without the marks' span (markup inside the quotes
    would end them), and a :class:`Markup` given as an attribute is escaped, not passed through."""
    assert tag("p", title="a\u202eb\r\nc") == '<p title="a⟨U+202E⟩b\nc"></p>'
    assert tag("p", title=Markup('<b class="x">')) == '<p title="&lt;b class=&quot;x&quot;&gt;"></p>'


@settings(max_examples=300, deadline=None)
@given(_UNTRUSTED)
def test_any_text_reads_back_as_itself_with_its_controls_marked_and_no_tag(value: str) -> None:
    """Parsed as a browser parses it, ``text(value)`` holds no tag but the control marks' spans
    and reads back as the value with its line ends made newlines and each control shown as
    ``⟨U+XXXX⟩``: inside an element and inside a quoted attribute alike (where the marks are bare:
    an attribute holds no markup, and the marks' span once closed the quotes it sat in)."""
    expected = UNSAFE_CHARACTERS.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", value.replace("\r\n", "\n").replace("\r", "\n"))
    assert neutral(value) == expected
    body = _Read(f"<p>{text(value)}</p>")
    assert body.data == expected
    assert {name for name, _ in body.tags} <= {"p", "span"}
    assert all(attrs == {"class": "ctl"} for name, attrs in body.tags if name == "span")
    attribute = _Read(str(tag("p", "", title=value)))
    assert attribute.tags == [("p", {"title": expected})]


def test_a_charts_text_marks_its_controls_in_a_tspan_and_its_title_bare() -> None:
    """Drawn text's marks sit in an SVG ``<tspan>`` (an HTML ``<span>`` would end an inline SVG);
    a ``<title>``'s are bare; the noncharacters XML forbids are marked too; a :class:`Markup` is
    escaped, not passed through."""
    assert svg_text("a\u202eb<i>&\r\n") == 'a<tspan fill="#b00020">⟨U+202E⟩</tspan>b&lt;i&gt;&amp;\n'
    assert svg_text("a\u202eb\ufffe\uffff", drawn=False) == "a⟨U+202E⟩b⟨U+FFFE⟩⟨U+FFFF⟩"
    assert svg_text(Markup("<b>\"'")) == "&lt;b&gt;&quot;&#x27;" and isinstance(svg_text(1), Markup)


@settings(max_examples=300, deadline=None)
@given(_UNTRUSTED)
def test_any_text_in_a_chart_reads_back_as_itself_in_well_formed_svg(value: str) -> None:
    """Parsed as XML (an SVG file) inside a ``<text>`` and a ``<title>``, ``svg_text(value)`` is
    well-formed, holds no element but the marks' ``<tspan>`` and reads back as the value with its
    line ends made newlines and each control, bidi character and XML noncharacter shown as
    ``⟨U+XXXX⟩``."""
    expected = UNSAFE_CHARACTERS.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", value.replace("\r\n", "\n").replace("\r", "\n"))
    expected = expected.replace("\ufffe", "⟨U+FFFE⟩").replace("\uffff", "⟨U+FFFF⟩")
    svg = ET.fromstring(f"<svg><text>{svg_text(value)}</text><title>{svg_text(value, drawn=False)}</title></svg>")
    drawn, title = list(svg)
    assert "".join(drawn.itertext()) == expected and (title.text or "") == expected
    assert [c.tag for c in title] == [] and all(c.tag == "tspan" and c.attrib == {"fill": "#b00020"} for c in drawn)
    assert all(re.fullmatch(r"⟨U\+[0-9A-F]{4,6}⟩", c.text or "") for c in drawn)
