"""Every protocol other than EVINCE (driven in depth by test_tui.py), started from the
New-debate form and run to its end in the real app, with the person's seat answered through
its dialog. Settings are the smallest the form accepts, so each run takes seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Select

from store.queries import Queries
from tests.helpers.form import fill_examples
from tests.helpers.pilot import SIZE, make_app, wait_for
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import EditDialog, PersonDialog
from tui.app.screens.new_debate import NewDebateScreen

SMALL: dict[str, dict[str, str]] = {
    "socrasynth": {"max_rounds": "1", "subtopics": "1", "turn_tokens": "32", "crit_tokens": "32"},
    "agreement": {"topics": "budget", "max_rounds": "1", "turn_tokens": "24"},
    "deliberation": {"max_turns": "3", "turn_tokens": "24"},
    "humanloop": {"rounds": "1", "turn_tokens": "24"},
    "d3": {"max_rounds": "1", "turn_tokens": "24", "budget": "3000"},
}


@pytest.mark.parametrize("protocol", list(SMALL))
@pytest.mark.model
async def test_each_protocol_runs_from_the_form_to_its_end(protocol: str, tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    said = 0
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, protocol))
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        fill_examples(form)  # a new form is blank (the examples are placeholders)
        for name, value in SMALL[protocol].items():
            form.query_one(f"#field-{name}", Input).value = value
        form.query_one("#field-side-panel", Select).value = "none"
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen), f"{protocol} did not start: {form.query_one('#problem').render()}"

        def done_or_asked() -> bool:
            return not debate.running or isinstance(app.screen, PersonDialog | EditDialog)

        while True:
            await wait_for(pilot, done_or_asked, 300, f"{protocol} to finish or to ask the person")
            if isinstance(app.screen, EditDialog):  # SocraSynth's agreed agenda: go on with it
                offered = app.screen
                await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "keep", 30,  # noqa: B023
                               "the agenda dialog's focus on going on")
                await pilot.press("enter")
                await wait_for(pilot, lambda: app.screen is not offered, 30, "the agenda dialog to close")  # noqa: B023
                continue
            if not isinstance(app.screen, PersonDialog):
                break
            said += 1
            dialog = app.screen
            await wait_for(pilot, lambda: bool(dialog.query("#words")), 30, "the dialog to compose")  # noqa: B023
            dialog.query_one("#words", Input).value = "I would keep it simple and cheap."
            await pilot.press("enter")
            await pilot.pause()
        debate_id = debate.debate_id
    assert debate_id is not None
    stored = Queries(app.journal).debate(debate_id)
    app.journal.close()
    assert stored is not None and stored["protocol"].startswith(protocol)
    assert stored["status"] == "finished", (stored["status"], stored["stop_reason"])
    assert len(stored["turns"]) >= 2
    if protocol in ("deliberation", "humanloop"):  # the seat was offered and what was said is kept
        assert said >= 1
        assert any(t["model_id"] == "human" and "simple and cheap" in t["text"] for t in stored["turns"]), \
            [(t["model_id"], t["text"][:40]) for t in stored["turns"]]
