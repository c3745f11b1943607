"""A streaming turn is painted piece by piece: what it shows must stay exactly
``terminal_safe`` of everything written, however the pieces cut escapes, ``\\r\\n`` or paragraphs."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.widgets import Static

from protocols.core.events import TokenDelta, TurnStarted
from tests.app.replayed import replay
from tests.helpers.hostile import HOSTILE
from tests.helpers.pilot import SIZE, make_app
from tui.app.screens.debate import DebateScreen
from tui.app.widgets.transcript import Transcript
from tui.sanitize import StreamSanitizer, terminal_safe

#: Pieces that, cut anywhere, make escapes and line ends straddle piece boundaries.
ATOMS = st.sampled_from(["\x1b[", "31m", "\x1b]0;title", "\x07", "\x1b\\", "\x1b", "\r", "\n", "\n\n", "word ",
                         "[/b]", "\x9b", "\u202e", HOSTILE[:120]])


@settings(max_examples=300, deadline=None)
@given(st.lists(ATOMS, max_size=40), st.lists(st.integers(1, 12), min_size=1, max_size=60))
def test_stream_sanitizer_equals_sanitizing_the_whole(atoms: list[str], cuts: list[int]) -> None:
    text = "".join(atoms)
    clean, out, i, k = StreamSanitizer(), "", 0, 0
    while i < len(text):
        n = cuts[k % len(cuts)]
        out += clean.feed(text[i : i + n])
        i, k = i + n, k + 1
    assert out + clean.close() == terminal_safe(text)


async def test_streaming_turn_shows_exactly_what_was_written(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    written = ("Opening paragraph with \x1b[31mred\x1b[0m.\r\n\r\nSecond paragraph [/b] goes on\n\n"
               "Third \x1b]0;x\x07 and " + "w " * 300 + "\n\nlast")
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay(app, pilot, [], held=True)
        screen.view.show(TurnStarted("d", "agent-a", "m", "debate", 1))
        for i in range(0, len(written), 5):
            screen.view.show(TokenDelta("d", "agent-a", written[i : i + 5]))
            if i % 40 == 0:
                await pilot.pause(0.06)  # let the repaint timer flush mid-stream
        await pilot.pause(0.1)
        view = screen.query_one(Transcript).current
        assert view is not None and view.raw == written
        parts = [str(s.render()) for s in view.query(Static)]
        assert len(parts) >= 3  # finished paragraphs were set aside, not redrawn
        assert "\n\n".join(parts) == terminal_safe(written)


async def test_footer_is_not_rebuilt_when_its_keys_are_the_same(tmp_path: Path, registry,
                                                                monkeypatch) -> None:
    """Closing Help used to rebuild the Debate screen's footer (the largest idle cost in a profile)."""
    from tests.helpers.pilot import screen_text
    from tests.helpers.sample_debate import sample_events
    from tui.app.widgets.footer import SteadyFooter

    rebuilt: list[SteadyFooter] = []
    original = SteadyFooter.recompose

    async def counting(self):  # type: ignore[no-untyped-def]
        rebuilt.append(self)
        return await original(self)

    monkeypatch.setattr(SteadyFooter, "recompose", counting)
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay(app, pilot, sample_events())
        await pilot.pause(0.2)
        before = sum(f is screen.query_one(SteadyFooter) for f in rebuilt)
        assert before >= 1  # built once its keys were known
        for _ in range(3):
            await pilot.press("question_mark")
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
        assert isinstance(app.screen, DebateScreen)
        assert sum(f is screen.query_one(SteadyFooter) for f in rebuilt) == before
        assert "v Verdict" in screen_text(app)  # an ended debate offers no moderator commands, its own keys stay
