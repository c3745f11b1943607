"""Every screen's footer at 80×24 shows the keys a person needs there, whole (the
``h`` Report key pushed "esc Back" off Review's footer, and "? Help" was cut everywhere), and
Help lists every key of the screen, the ones the footer leaves out included.

What is asserted is the footer's line as it is drawn (the screen's last line, the text sent to
the terminal), not the bindings: a key that is bound and "shown" but cut off by the width fails.
The real app under Pilot, a real journal; a live debate runs on scripted models whose replies
stream through a gate the test holds closed while it reads the footer and Help, so the debate is
live then however slowly the machine draws (a debate paced by the clock ran on, under load, to the
agenda dialog over Help or to its end, before the keys were read).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.pilot import Pilot

from tests.app.replayed import replay
from tests.helpers.form import fill_examples
from tests.helpers.pilot import make_app, screen_text, wait_for
from tests.helpers.sample_debate import record_sample, sample_events
from tests.helpers.sample_socrasynth import sample_socrasynth
from tests.helpers.scripted_backends import answering
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.protocol_catalog import SPECS

SIZE = (80, 24)

#: What each screen's footer must show, as drawn ("key Label").
HOME = ("d Demo", "n New", "o Open", "r Resume", "e Export", "h Report", "del Delete", "/ Search", "? Help")
FORM = ("^s Start", "esc Back", "f1 Help")  # the case field has the focus: "?" is typed, f1 is Help
LIVE = ("p Pause", "i Interject", "k Contentiousness", "s Skip", "x Stop", "v Verdict", "esc Back", "? Help")
ENDED = ("v Verdict", "esc Back", "? Help")
REVIEW = ("←→ Round", "end All rounds", "m Compare", "r Resume", "v Verdict", "h Report", "esc Back", "? Help")


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def held_models(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Scripted models whose every reply streams through the returned gate, closed at first: a
    debate starts and then waits in its first reply, live, until the test sets the gate."""
    gate = asyncio.Event()
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.01, chunk=8, gate=gate))
    return gate


def footer(app: SymposiumApp) -> str:
    """The footer as drawn: the screen's last line."""
    return screen_text(app).splitlines()[-1]


def assert_shown(app: SymposiumApp, keys: tuple[str, ...], where: str) -> None:
    line = footer(app)
    missing = [key for key in keys if f" {key} " not in f" {line} "]
    assert not missing, f"{where}: {missing} not in the footer at {SIZE[0]} columns: {line!r}"


async def assert_help_lists_every_key(app: SymposiumApp, pilot: Pilot, where: str) -> None:
    """Help (opened with f1, which works in a text field too) names every binding id in force."""
    ids = {active.binding.id for active in app.screen.active_bindings.values() if active.binding.id}
    await pilot.press("f1")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen), where
    help_scroll = app.screen.query_one(VerticalScroll)
    text = screen_text(app)
    while help_scroll.scroll_y < help_scroll.max_scroll_y:  # the table runs past 24 lines: read it all
        help_scroll.scroll_to(y=help_scroll.scroll_y + 10, animate=False)
        await pilot.pause()
        text += screen_text(app)
    missing = sorted(i for i in ids if i not in text)
    assert not missing, f"{where}: Help leaves out {missing}"
    await pilot.press("escape")
    await pilot.pause()


async def test_home_and_review_footers_at_80_columns(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=3)
    record_sample(app.journal, "sample0002ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert_shown(app, HOME, "Home")
        await assert_help_lists_every_key(app, pilot, "Home")
        await pilot.press("o")
        await pilot.pause()
        assert_shown(app, REVIEW, "Review")
        await assert_help_lists_every_key(app, pilot, "Review")
        assert "review.previous" in {a.binding.id for a in app.screen.active_bindings.values()}  # not the transcript's ←
        await pilot.press("left")
        await pilot.pause()
        assert "up to round 1" in screen_text(app).splitlines()[0]
        await pilot.press("end")
        await pilot.pause()
        assert "whole debate" in screen_text(app).splitlines()[0]  # End is the review's, not a scroll


@pytest.mark.parametrize("protocol", list(SPECS))
async def test_new_debate_footer_at_80_columns(tmp_path: Path, registry, protocol: str) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, protocol))
        await pilot.pause()
        assert_shown(app, FORM, f"New debate ({protocol})")
        await assert_help_lists_every_key(app, pilot, f"New debate ({protocol})")


@pytest.mark.parametrize("events", [sample_events, sample_socrasynth], ids=["evince", "socrasynth"])
async def test_ended_debate_footer_at_80_columns(tmp_path: Path, registry, events) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await replay(app, pilot, events())
        assert_shown(app, ENDED, "a finished debate")


@pytest.mark.parametrize("protocol", ["evince", "socrasynth"])
async def test_live_debate_footer_at_80_columns(tmp_path: Path, registry, protocol: str, held_models: asyncio.Event) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, protocol))
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        fill_examples(form)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, DebateScreen) and bool(app.screen.addressable),
                       30, "the debate to start")
        screen = app.screen
        assert isinstance(screen, DebateScreen)
        # the footer is drawn after the bindings change: wait for it, then say what is missing
        await wait_for(pilot, lambda: all(f" {key} " in f" {footer(app)} " for key in LIVE), 10,
                       "the footer to offer the live debate's keys")
        assert_shown(app, LIVE, f"a live {protocol} debate")
        await assert_help_lists_every_key(app, pilot, f"a live {protocol} debate")
        assert app.screen is screen and screen.running and not screen.concluded  # held in its first reply
        await pilot.press("p")
        # the pause is in the channel: the reply under way finishes and the pause takes effect at the
        # next checkpoint, before anything else can ask the person (SocraSynth's agenda dialog comes
        # after a checkpoint of its own)
        held_models.set()
        await wait_for(pilot, lambda: screen.paused, 30, "the pause to take effect")
        await pilot.pause()
        assert_shown(app, ("p Resume", *LIVE[1:]), f"a paused {protocol} debate")
        screen.workers.cancel_all()
