"""The app as people meet it, round two: nothing typed is lost, every sentence true. The real
app under Pilot with a real journal; recorded or scripted debates (no model is loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from tests.app.test_tui import make_app, wait_for
from tests.app.test_tui_hostile import scripted_models
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui import settings

SIZE = (80, 24)
CASE = "Crushing chest pain for an hour, sweating, pain radiating to the left arm"


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


# -- the form's draft ----------------------------------------------------------------------------


async def test_escape_on_a_typed_form_asks_and_the_draft_comes_back_but_never_reaches_disk(tmp_path: Path, registry) -> None:
    """A case typed, Escape: the form asks (Stay keeps it open, as typed); left, the next ``n``
    opens the form with the case and the title typed, and no file holds the case."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", *CASE)
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmDialog), "a typed case was left without a question"
        await pilot.press("escape")  # the dialog's Escape: stay
        assert app.screen is form and form.query_one("#field-case", TextArea).text == CASE

        title = form.query_one("#field-title", Input)
        title.value = "Chest pain, bed 4"
        form.query_one("#field-case", TextArea).focus()
        await pilot.press("escape")
        await pilot.click("#yes")
        assert isinstance(app.screen, HomeScreen)

        await pilot.press("n")
        again = app.screen
        assert isinstance(again, NewDebateScreen) and again is not form
        assert again.query_one("#field-case", TextArea).text == CASE, "the draft was lost"
        assert again.query_one("#field-title", Input).value == "Chest pain, bed 4"
        await pilot.press("escape")  # unchanged since it opened: no question, the draft stays
        assert isinstance(app.screen, HomeScreen)
        assert app.workspace.draft is not None

    on_disk = [p for p in tmp_path.rglob("*") if p.is_file() and "journal" not in p.name]
    for path in on_disk:
        assert b"radiating" not in path.read_bytes(), f"the draft reached {path}"
    assert "radiating" not in str(settings.load())


async def test_an_untouched_form_leaves_at_once_and_a_started_debate_clears_the_draft(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("backends.lifecycle.create_backend", scripted_models(["{}"] * 40))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen), "an untouched form asked before it was left"
        assert app.workspace.draft is None
        await pilot.press("n", *"a case")
        await pilot.press("escape")
        await pilot.click("#yes")
        assert app.workspace.draft is not None
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        assert app.workspace.draft is None, "the debate started and its case stayed as a draft"
        await wait_for(pilot, lambda: not debate.running, 60, "the scripted debate to end")
