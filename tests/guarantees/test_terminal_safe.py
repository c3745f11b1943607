"""``tui/sanitize.py`` word for word: what ``terminal_safe`` makes of line ends and controls, what
``plain`` hands to Rich, and when a stream is shown.

test_untrusted_output.py checks that no escape or control survives (Hypothesis), and
test_tui_stream.py that a stream adds up to ``terminal_safe`` of the whole. Here the exact
results, and the promise those leave open: a streamed piece is shown as soon as it arrives,
holding back only an escape sequence (or a ``\\r``) that the next piece may finish, and never
more than ``HOLD_LIMIT`` characters of it. (Found by mutation testing, ``benchmarks/mutation.py``:
each test failed for a change to ``tui/sanitize.py`` the others let through.)
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from protocols.core.text import UNSAFE_CHARACTERS
from tui.sanitize import StreamSanitizer, json_for_terminal, plain, terminal_safe

HOLD = StreamSanitizer.HOLD_LIMIT


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\r\nb", "a\nb"),                           # Windows line ends become one newline
    ("a\rb\r", "a\nb\n"),                         # a lone carriage return too: it cannot rewrite the line
    ("a\x07b\x00c\x7fd\x9be", "abcde"),           # C0 and C1 controls vanish, leaving nothing in their place
    ("x\x1b[31mred\x1b[0m \x1b]0;title\x07y", "xred y"),
    # bidi controls and marks, zero-width and tag characters are shown, not obeyed
    ("\u202eevil\u2066 \u200b", "⟨U+202E⟩evil⟨U+2066⟩ ⟨U+200B⟩"),
    ("a\u200eb\u200fc\u061cd\ufeffe\u2060f\u180eg", "a⟨U+200E⟩b⟨U+200F⟩c⟨U+061C⟩d⟨U+FEFF⟩e⟨U+2060⟩f⟨U+180E⟩g"),
    ("hidden\U000e0041\U000e007f", "hidden⟨U+E0041⟩⟨U+E007F⟩"),
    ("\u0631\u200c\u0627 \U0001f469\u200d\U0001f4bb", "\u0631\u200c\u0627 \U0001f469\u200d\U0001f4bb"),  # joiners: script needs them
    ("tab\tand\nnewline", "tab\tand\nnewline"),
])
def test_terminal_safe_exactly(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_plain_is_shown_as_it_is_never_read_as_markup() -> None:
    text = plain("[b]not bold[/b] [@click=app.quit]x[/] \x1b[2J")
    assert (text.plain, text.spans, text.style) == ("[b]not bold[/b] [@click=app.quit]x[/] ", [], "")
    assert plain(42).plain == "42" and plain(None).plain == "None"
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=80)
    console.print(plain("[b]x[/b]"), plain("styled", style="bold"))
    assert out.getvalue() == "[b]x[/b] \x1b[1mstyled\x1b[0m\n"


def _fed(pieces: list[str], stream: StreamSanitizer | None = None) -> list[str]:
    stream = stream or StreamSanitizer()
    return [stream.feed(p) for p in pieces] + [stream.close()]


@pytest.mark.parametrize(("pieces", "shown"), [
    (["plain [x] text", "more"], ["plain [x] text", "more", ""]),
    (["red\x1b[0m", "x"], ["red", "x", ""]),                      # a finished escape holds nothing back
    (["a\x1b[3", "1mb"], ["a", "b", ""]),                         # a cut CSI waits for its final byte
    (["t\x1b]0;title", "\x07u"], ["t", "u", ""]),                 # a cut OSC waits for BEL or ST
    (["a\r", "\nb"], ["a", "\nb", ""]),                           # \r\n cut in two is still one newline
    (["ab\r"], ["ab", "\n"]),                                     # only the \r waits
    (["x\x1ba", "y"], ["xa", "y", ""]),                           # ESC + a letter is no sequence: dropped at once
    (["x" * 5000 + "\x1b[3", "1mred"], ["x" * 5000, "red", ""]),  # the limit counts from the ESC, not the line
])
def test_a_stream_is_shown_as_soon_as_it_arrives_holding_back_only_what_may_be_cut(pieces: list[str],
                                                                                   shown: list[str]) -> None:
    assert _fed(pieces) == shown


def test_an_unfinished_escape_is_waited_for_up_to_the_hold_limit() -> None:
    """Below ``HOLD_LIMIT`` characters from its ESC, a cut CSI is held; at the limit it is let go
    (its ESC dropped as a control), so a runaway sequence cannot hide the rest of a turn."""
    waiting = "\x1b[" + "1" * (HOLD - 3)
    assert _fed([waiting, "m after"]) == ["", " after", ""]
    runaway = "\x1b[" + "1" * (HOLD - 2)
    assert _fed([runaway, "m after"]) == ["[" + "1" * (HOLD - 2), "m after", ""]


def test_a_closed_stream_starts_afresh() -> None:
    stream = StreamSanitizer()
    assert stream.feed("a\x1b[") == "a"
    assert stream.close() == "["
    assert stream.feed("b") == "b"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\x1b\r"), max_size=30), max_size=10))
def test_pieces_without_escape_or_carriage_return_are_shown_whole_at_once(pieces: list[str]) -> None:
    stream = StreamSanitizer()
    for piece in pieces:
        assert stream.feed(piece) == terminal_safe(piece)
    assert stream.close() == ""


@pytest.mark.parametrize(("raw", "json_text"), [
    ('"a\x1bb"', '"a\\u001bb"'),
    ('"\u202eevil\x9b"', '"\\u202eevil\\u009b"'),
    ('"tag\U000e0041"', '"tag\\udb40\\udc41"'),     # beyond the BMP: a surrogate pair, as JSON spells it
    ('"tag\U000e007f"', '"tag\\udb40\\udc7f"'),
    ('{"k": "plain é 😀"}', '{"k": "plain é 😀"}'),  # what a terminal shows as it is stays as it is
])
def test_json_for_the_terminal_escapes_exactly_what_must_not_reach_it(raw: str, json_text: str) -> None:
    assert json_for_terminal(raw) == json_text
    assert json.loads(json_for_terminal(raw)) == json.loads(raw, strict=False)  # the same value


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_string_as_terminal_json_parses_back_to_itself_and_holds_nothing_unsafe(text: str) -> None:
    shown = json_for_terminal(json.dumps({"text": text}, ensure_ascii=False))
    assert json.loads(shown) == {"text": text}
    assert not UNSAFE_CHARACTERS.search(shown)
