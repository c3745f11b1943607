"""What the app writes, and only when asked: typing on Home is a search, a key that writes a file
asks first (redacted or full text, which folder) and never replaces a file silently, a redacted
file's name says so, and a debate's title is never a case's identifying first words.

The real app under Pilot on a real journal; files land in a temporary export folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Button, DataTable, Input, RadioSet, Static, TextArea

from store.queries import Queries
from tests.helpers.form import fill_examples
from tests.helpers.pilot import SIZE, make_app, wait_for
from tests.helpers.sample_debate import record_sample
from tests.helpers.save_dialog import save
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.screens.review import ReviewScreen
from tui.app.screens.save import SaveDialog

IDENTIFYING = "Margaret Okonkwo, DOB 03/14/1961, phone (555) 867-5309, has had chest pain since the morning."


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


def written(app: SymposiumApp) -> list[str]:
    folder = app.export_dir
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


async def test_a_word_typed_on_home_is_a_search_and_writes_nothing(tmp_path: Path, registry) -> None:
    """Typed on Home's list without pressing /, "chest" fired h and e: a report and an export
    of the highlighted debate were written. The keys arrive in a burst, as a terminal sends them."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen) and app.focused is home.query_one("#debates", DataTable)
        for key in "chest":
            app.post_message(events.Key(key, key))
        await pilot.pause(0.3)
        await pilot.pause()
        assert app.screen is home, f"a typed letter opened {app.screen}"
        assert home.query_one("#search", Input).value == "chest" and app.focused is home.query_one("#search")
        assert written(app) == [], "a typed letter wrote a file"


@pytest.mark.timeout(240)  # every key that writes, each asked and answered: 37 s on a busy two-core machine
async def test_a_key_that_writes_asks_first_and_never_replaces_a_file_silently(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("h", *"eart")  # "heart" typed on Home: h asks, the rest does nothing
        dialog = app.screen
        assert isinstance(dialog, SaveDialog) and app.focused is dialog.query_one(RadioSet)
        assert dialog.query_one("#save", Button).disabled, "Save before choosing redacted or full text"
        await pilot.press("ctrl+s")
        assert app.screen is dialog and written(app) == []
        await pilot.press("escape")
        await pilot.pause()
        assert written(app) == []

        await save(pilot, "h", redacted=True)
        assert written(app) == ["symposium-sample0001ab-redacted.html"]
        redacted = app.export_dir / "symposium-sample0001ab-redacted.html"
        before = redacted.read_text(encoding="utf-8")
        assert "Redacted copy" in before

        await save(pilot, "h", redacted=False)  # the full text does not replace the redacted copy
        assert written(app) == ["symposium-sample0001ab-redacted.html", "symposium-sample0001ab.html"]
        assert redacted.read_text(encoding="utf-8") == before and "Redacted copy" not in (
            app.export_dir / "symposium-sample0001ab.html").read_text(encoding="utf-8")

        full = app.export_dir / "symposium-sample0001ab.html"
        full.write_text("kept", encoding="utf-8")
        await pilot.press("h", "down", "enter")  # the full text again: the file is there
        dialog = app.screen
        assert isinstance(dialog, SaveDialog)
        assert str(dialog.query_one("#save", Button).label) == "Replace"
        assert "exists" in str(dialog.query_one("#target", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        assert full.read_text(encoding="utf-8") == "kept"
        await save(pilot, "h", redacted=False)  # Replace, pressed: the person agreed
        assert full.read_text(encoding="utf-8") != "kept"

        await save(pilot, "e", redacted=True)
        await save(pilot, "j", redacted=False)
        assert "symposium-sample0001ab-redacted.md" in written(app) and "symposium-sample0001ab.json" in written(app)


async def test_review_offers_the_redacted_report(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        assert isinstance(app.screen, ReviewScreen)
        await save(pilot, "h", redacted=True)
        assert written(app) == ["symposium-sample0001ab-redacted.html"]
        assert isinstance(app.screen, ReviewScreen)


@pytest.mark.usefixtures("scripted_models")
async def test_a_debates_title_is_never_a_case_that_names_someone(tmp_path: Path, registry) -> None:
    """The title field follows the case as it is typed, neutral while the case's first words
    name someone; the debate, Home's list and the debate's header show the title, not the case."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        fill_examples(form)
        case, title = form.query_one("#field-case", TextArea), form.query_one("#field-title", Input)
        case.text = "Yellowish skin, dark urine and itching for two weeks."
        await pilot.pause()
        assert title.value == "Yellowish skin, dark urine and itching for two weeks."
        case.text = IDENTIFYING
        await pilot.pause()
        assert title.value == "EVINCE debate"
        for name, value in {"max_rounds": "0", "turn_tokens": "40", "crit_tokens": "40"}.items():
            form.query_one(f"#field-{name}", Input).value = value
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen), form.query_one("#problem", Static).render()
        await wait_for(pilot, lambda: not debate.running, 60, "the debate to end")
        assert "Okonkwo" not in debate.view.status_line and "EVINCE debate" in debate.view.status_line
        stored = Queries(app.journal).debate(debate.debate_id or "")
        assert stored is not None and stored["title"] == "EVINCE debate" and stored["subject"] == IDENTIFYING
        await pilot.press("escape")
        await pilot.pause()
        table = app.screen.query_one("#debates", DataTable)
        assert not any("Okonkwo" in str(cell) for row in range(table.row_count) for cell in table.get_row_at(row))

        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        case, title = form.query_one("#field-case", TextArea), form.query_one("#field-title", Input)
        title.value = "Chest pain, second opinion"  # typed by the person: the case no longer moves it
        case.text = "Yellowish skin"
        await pilot.pause()
        assert title.value == "Chest pain, second opinion"
