"""Keys typed while Home switches to the New-debate form: someone presses ``n`` and goes
straight on typing the case. Those keys used to be lost (Home's table held them until the form
was open, then nobody took them); they must land in the form's first field, and none of them may
act on Home (start, export, write a report, delete).

The keys are posted to the app all at once, as a terminal delivers a burst (Pilot's ``press``
waits for the app between keys, which hides the race); a real journal with a recorded debate
under the cursor, so that an export, a report or a delete would have something to act on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TextArea

from protocols.evince import DEMO_CASE
from store.queries import Queries
from tests.helpers.pilot import make_app
from tests.helpers.sample_debate import record_sample
from tui.app.app import SymposiumApp
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


async def burst(app: SymposiumApp, pilot: Pilot, keys: list[str]) -> None:
    """Every key at once, with no pause between them, then time for the app to settle."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))
    await pilot.pause(0.5)
    await pilot.pause()


def case_field(app: SymposiumApp) -> TextArea:
    assert isinstance(app.screen, NewDebateScreen), f"the form is not open: {app.screen_stack}"
    field = app.screen.query_one("#field-case", TextArea)
    assert field.has_focus
    return field


async def test_words_typed_right_after_n_are_the_case(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await burst(app, pilot, ["n", *"Jaundice, dark urine"])
        assert case_field(app).text == "Jaundice, dark urine"


async def test_keys_typed_right_after_n_never_act_on_home(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # Home's keys for: a demo, stop, delete, open, export .md, report, export .json, open, resume
        await burst(app, pilot, ["n", "d", "x", "delete", "enter", "e", "h", "j", "o", "r"])
        assert [type(s) for s in app.screen_stack[1:]] == [HomeScreen, NewDebateScreen]  # no review, dialog, debate
        assert case_field(app).text == "dx\nehjor"  # typed into the case, Enter a new line
        assert not app.export_dir.exists() or not any(app.export_dir.iterdir()), "a key exported or wrote a report"
        assert [d["id"] for d in Queries(app.journal).debates()] == ["sample0001ab"]  # nothing started, nothing deleted
        assert not app._notifications, [n.message for n in app._notifications]


async def test_words_typed_right_after_d_follow_the_demo_case(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await burst(app, pilot, ["d", *" Also itching."])
        assert case_field(app).text == DEMO_CASE + " Also itching."


async def test_n_and_d_in_the_search_and_its_results_are_a_search(tmp_path: Path, registry) -> None:
    """``n`` and ``d`` act as they arrive (priority bindings); in the search box and its results
    a letter is part of a search, so there they are not Home's keys."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        search = app.screen.query_one("#search", Input)
        await pilot.press("slash", *"und")
        assert isinstance(app.screen, HomeScreen) and search.value == "und"
        await pilot.press("backspace", "backspace", "backspace", *"urine", "enter", "down")
        assert app.screen.query_one("#hits", DataTable).has_focus
        await pilot.press("n", "d")
        assert isinstance(app.screen, HomeScreen) and search.value == "nd" and search.has_focus
