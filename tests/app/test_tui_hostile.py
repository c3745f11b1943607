"""Hostile text through every input, notice and event the app shows: it must not crash the app
(Textual markup such as ``[/b]`` used to raise ``MarkupError`` from a toast) nor reach the
terminal as control characters (ANSI CSI/OSC escapes, C1 controls, bidi overrides).

What the screen shows is read from the compositor's strips: the segments a terminal is sent.
Debates run on the scripted backend (tests/helpers/scripted_backends.py) because the point is exact
hostile model output, which a real model cannot be made to produce on demand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, TextArea

from protocols.core.events import (
    DebateFinished,
    DebateStarted,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    Participant,
    PhaseChanged,
    TokenDelta,
    TurnFinished,
    TurnStarted,
)
from store.queries import Queries
from tests.app.replayed import replay
from tests.helpers.hostile import HOSTILE, HOSTILE_ID, hostile_models
from tests.helpers.pilot import SIZE, make_app, screen_text, wait_for
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import InterjectDialog, PersonDialog, VerdictDialog
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.screens.review import ReviewScreen
from tui.app.widgets.transcript import Transcript
from tui.protocol_catalog import SPECS

EVINCE = SPECS["evince"]

#: What must never be in a segment sent to the terminal: C0 (tab excepted), DEL, C1, bidi controls.
FORBIDDEN = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_clean(app: SymposiumApp, where: str) -> str:
    assert app.is_running, f"the app died at {where}"
    shown = screen_text(app)
    bad = sorted({f"U+{ord(c):04X}" for c in FORBIDDEN.findall(shown.replace("\n", " "))})
    assert not bad, f"{where}: control characters reached the screen: {bad}"
    return shown


def hostile_events(debate_id: str) -> list[Any]:
    """A debate whose every field the app shows is hostile (as if models and a journal said it)."""
    parts = (Participant("agent-a", HOSTILE_ID, "llamacpp"), Participant("agent-b", "b", "llamacpp"))
    return [
        DebateStarted(debate_id, "evince", HOSTILE, HOSTILE, {"max_rounds": 1}, parts),
        PhaseChanged(debate_id, HOSTILE[:200], 0, 0.9),
        TurnStarted(debate_id, "agent-a", HOSTILE_ID, HOSTILE[:100], 0, HOSTILE[:100]),
        TokenDelta(debate_id, "agent-a", HOSTILE),
        TurnFinished(debate_id, "agent-a", HOSTILE_ID, "exploratory", 0, HOSTILE[:100], HOSTILE, HOSTILE, None,
                     None, (HOSTILE, HOSTILE_ID), {HOSTILE[:300]: 0.7, "[/b]": 0.3}, 0.9),
        JudgementMade(debate_id, HOSTILE_ID, HOSTILE_ID, HOSTILE[:50], HOSTILE[:50], HOSTILE[:50], None, HOSTILE[:80],
                      {"why": HOSTILE}, HOSTILE, 0),
        MetricsComputed(debate_id, 0, {"wd": 0.5, "mi": 0.2, "jsd": 0.1, "crit": 0.6}, 0.9),
        ModeratorActed(debate_id, HOSTILE[:40], {"text": HOSTILE, "to": HOSTILE_ID}, 0),
        DebateFinished(debate_id, "finished", HOSTILE, {"top": HOSTILE, "final_distribution": {HOSTILE[:80]: 1.0},
                                                         "label_check": {"flag": HOSTILE},
                                                         "recommendations": {HOSTILE[:30]: [HOSTILE]}}),
    ]


@pytest.fixture()
def hostile_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder whose name and keymap are hostile (the keymap problem becomes a notice)."""
    folder = tmp_path / "config [b] [@click=app.quit] [link=x]"
    folder.mkdir()
    (folder / "keymap.toml").write_text('"[/b]\\u001b[2J\\u009b\\u202e" = 1\n', encoding="utf-8")
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(folder))
    return folder


@pytest.mark.timeout(240)  # every hostile string through the app: 37 s on a busy two-core machine
async def test_hostile_text_never_crashes_the_app_nor_reaches_the_terminal(
        tmp_path: Path, registry, hostile_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(tmp_path, registry)
    for debate_id in ("hostile0001a", "hostile0002b"):
        for event in hostile_events(debate_id):
            if not isinstance(event, TokenDelta | TurnStarted):
                app.journal.record(event)
    async with app.run_test(size=SIZE, notifications=True, tooltips=True) as pilot:  # both off by default
        await pilot.pause()
        shown = assert_clean(app, "start-up with a hostile keymap")
        assert "[/b]" in shown  # the keymap notice shows the key's markup as text

        # Home: the journal's hostile titles, and a hostile search (once a MarkupError)
        home = app.screen
        assert isinstance(home, HomeScreen)
        search = home.query_one("#search", Input)
        for query in ("[/b] nomatch", HOSTILE + " nomatch", "[@click=app.quit] nomatch"):  # each a notice
            search.focus()
            search.value = query
            await pilot.press("enter")
            await pilot.pause()
            assert "nothing said matches" in assert_clean(app, f"Home search for {query[:20]!r}")
        await pilot.press("escape")
        home.query_one("#debates").focus()

        # Review of a hostile debate, stepping and comparing (the choice list shows titles)
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        assert_clean(app, "Review")
        await pilot.press("left")
        assert_clean(app, "Review, one round")
        await pilot.press("m")
        await pilot.pause()
        assert_clean(app, "Review, compare")
        await pilot.press("escape")
        await pilot.press("escape")
        await pilot.pause()

        # New debate: hostile values in fields; the form's problem line shows them
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        form.query_one("#field-case", TextArea).text = HOSTILE
        form.query_one("#field-max_rounds", Input).value = HOSTILE[:60]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert_clean(app, "New debate form with a bad round cap")
        await pilot.press("escape")
        await pilot.pause()
        # a labels "file path" typed earlier, remembered and offered as a choice
        app.push_screen(NewDebateScreen(app.workspace, "evince", {**EVINCE.defaults(), "labels": HOSTILE[:80]}))
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert_clean(app, "New debate form with a bad labels file")
        await pilot.press("escape")
        await pilot.pause()

        # A recorded debate where every event is hostile, streaming token included
        await replay(app, pilot, hostile_events("hostile0003c"), held=True)
        await pilot.pause(0.2)
        assert_clean(app, "Debate with hostile events")
        app.push_screen(PersonDialog(HOSTILE))
        await pilot.pause()
        assert_clean(app, "the person's dialog")
        await pilot.press("escape")
        app.pop_screen()
        await pilot.pause()

        # A live debate on the scripted backend: hostile replies, judgements, interjection, verdict
        for model_id in ("smollm2-135m", "gemma3-270m"):  # the status line shows "loading NAME …"
            monkeypatch.setitem(app.registry.entries, model_id,
                                app.registry.entries[model_id].model_copy(update={"name": HOSTILE_ID}))
        monkeypatch.setattr("backends.lifecycle.create_backend", hostile_models([HOSTILE] * 40, delay=0.005))
        app.start_debate(EVINCE, {**EVINCE.defaults(), "max_rounds": 0})
        await pilot.pause()
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        # Interject is offered once the debate has started and named its roles (the models load first)
        await wait_for(pilot, lambda: bool(debate.addressable), 60, "the debate to start")
        await pilot.press("i")
        await pilot.pause()
        interjected = isinstance(app.screen, InterjectDialog)
        if interjected:
            app.screen.query_one("#text", Input).value = HOSTILE
            await pilot.press("enter")
        await wait_for(pilot, lambda: not debate.running, 60, "the scripted debate to end")
        await pilot.pause(0.2)
        assert_clean(app, "live scripted debate")
        views = debate.query_one(Transcript).turns
        # EVINCE shows an unparsable reply as "(no usable prediction)" (no invented
        # positions); the hostile text still went through the stream, the notes and the journal.
        assert len(views) >= 2, "no turn was shown"
        raws = [t["raw"] for t in Queries(app.journal).debate(debate.debate_id)["turns"]]
        assert any("[/b]" in (raw or "") for raw in raws), "the hostile replies never reached the app"
        assert interjected, "the interjection dialog did not open"
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, VerdictDialog)
        app.screen.query_one("#note", Input).value = HOSTILE
        await pilot.click("#accept")
        await pilot.pause()
        assert_clean(app, "verdict with a hostile note")
        await pilot.press("escape")
        await pilot.pause()

        # A backend error whose message is hostile (e.g. a server's error body)
        monkeypatch.setattr("backends.lifecycle.create_backend", hostile_models([], fail=HOSTILE))
        app.start_debate(EVINCE, EVINCE.defaults())
        failing = app.screen
        assert isinstance(failing, DebateScreen)
        # its run starts once the screen is mounted (``running`` is False until then): wait for the failure itself
        await wait_for(pilot, lambda: failing.view.phase == "failed" and not failing.running, 60, "the failing debate to stop")
        await pilot.pause(0.2)
        shown = assert_clean(app, "a hostile backend error")
        assert "[/b]" in shown
    assert app.return_code in (None, 0)
