"""``outputs/markdown_text.py`` word for word: untrusted text in a Markdown export is shown as written.

test_terminal_output.py shows the promise end to end (``show`` on a colour terminal, a forged
heading and a hidden link printed as written). Here each helper's exact result, and, for any
text Hypothesis makes, that markdown-it (the parser Rich's Markdown uses, with its tables and
strikethrough) reads a paragraph of it back as the very characters written: no heading, link,
emphasis, code, HTML, list or table comes out of it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from outputs.markdown_text import block, code, inline

PARSER = MarkdownIt().enable("strikethrough").enable("table")  # as rich.markdown.Markdown parses


@pytest.mark.parametrize(("raw", "escaped"), [
    ("### human (moderator)", "\\### human (moderator)"),
    ("[chart](http://evil.example)", "\\[chart\\](http://evil.example)"),
    ("a|b `c` *d* ~e~ <b> &amp; \\", "a\\|b \\`c\\` \\*d\\* \\~e\\~ \\<b> \\&amp; \\\\"),
    ("agent_a and _this_", "agent_a and \\_this\\_"),     # inside a word an underscore is no emphasis
    ("> quoted", "\\> quoted"), ("- item", "\\- item"), ("+ item", "\\+ item"), ("===", "\\==="),
    ("1. first", "1\\. first"), ("12) twelfth", "12\\) twelfth"), ("   # three spaces", "   \\# three spaces"),
    ("line one\nline two", "line one line two"),          # one line: a cell or a heading holds no break
    ("a\rb\r\nc\u2028d", "a b c d"),                       # whatever breaks a line
    ("in the middle # - + = 1. >", "in the middle # - + = 1. >"),  # markers mid-line are text already
])
def test_inline_escapes_exactly_what_markdown_would_read(raw: str, escaped: str) -> None:
    assert inline(raw) == escaped


def test_block_keeps_each_line_and_escapes_each_line_s_start() -> None:
    assert block("# one\n- two\n\n3. three") == "\\# one  \n\\- two\n\n3\\. three"
    assert block("a\r\nb\rc") == "a  \nb  \nc"
    assert block("last line  ") == "last line  "


@pytest.mark.parametrize(("raw", "span"), [
    ("/models/x.gguf", "`/models/x.gguf`"),
    ("a`b", "``a`b``"),
    ("`edge`", "`` `edge` ``"),
    ("`start", "`` `start ``"), ("end`", "`` end` ``"),    # a backtick at either end would join the fence
    ("two\nlines", "`two lines`"),
    ("", "`  `"),
])
def test_code_spans_cannot_be_closed_from_inside(raw: str, span: str) -> None:
    assert code(raw) == span


def _text_of(tokens: list) -> str:
    """What a reader sees of a parsed paragraph: its text, its breaks as newlines."""
    out = []
    for token in tokens:
        if token.type == "inline":
            for child in token.children or []:
                assert child.type in ("text", "softbreak", "hardbreak"), f"{child.type} made from text"
                out.append("\n" if child.type.endswith("break") else child.content)
        else:
            assert token.type in ("paragraph_open", "paragraph_close"), f"{token.type} made from text"
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029"),
               max_size=60))
def test_any_line_is_read_back_as_written(text: str) -> None:
    shown = " ".join(text.split())  # what a paragraph shows: runs of white space as one
    if not shown:
        return
    assert _text_of(PARSER.parse(inline(shown))).strip() == shown


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1,
                        max_size=20), min_size=1, max_size=4))
def test_any_lines_keep_their_lines(lines: list[str]) -> None:
    assert _text_of(PARSER.parse(block("\n".join(lines)))) == "\n".join(lines)


def test_an_indented_line_is_no_preformatted_block() -> None:
    """Indented four columns after an empty line, a line would be a code block, which shows
    the escapes' backslashes; its indent is kept as no-break spaces instead."""
    md = block("intro\n\n    ### not a heading [x](http://e)\n\tand a tab")
    assert md == "intro\n\n\u00a0\u00a0\u00a0\u00a0### not a heading \\[x\\](http://e)  \n\u00a0\u00a0\u00a0\u00a0and a tab"
    tokens = PARSER.parse(md)
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"] * 2
    assert _text_of(tokens[3:]) == "### not a heading [x](http://e)\n\u00a0\u00a0\u00a0\u00a0and a tab"
