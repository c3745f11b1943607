"""What a walk-through as a clinician found (the real app under Pilot, a real journal):
Home's search did not find a debate by the words of its case, a κ typed over the one shown after
Ctrl+A was refused (Textual's Ctrl+A went to the field's start), and deleting a debate said
"everything" went while its exported files stayed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from store.queries import Queries
from tests.helpers.pilot import make_app, screen_text
from tests.helpers.sample_debate import record_sample
from tests.helpers.save_dialog import save
from tui.app.screens.dialogs import ConfirmDialog, InterjectDialog, NumberDialog, VerdictDialog

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


async def test_home_search_finds_a_debate_by_the_words_of_its_case(tmp_path: Path, registry) -> None:
    """The sample's case says "vomiting"; no turn does: the search used to say nothing matched."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"Vomiting fatig", "enter")
        hits = app.screen.query_one("#hits", DataTable)
        assert hits.display and hits.row_count == 1
        assert [str(c) for c in hits.get_row_at(0)][2:4] == ["", "case"]
        assert "vomiting" in screen_text(app)
        await pilot.press("down", "enter")  # the hit opens the debate
        assert getattr(app.screen, "debate", {}).get("id") == "sample0001ab"


async def test_a_word_not_in_the_case_finds_no_case(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"vomiting_", "enter")  # "_" is no wildcard: the case has "vomiting," not "vomiting_"
        assert not app.screen.query_one("#hits", DataTable).display
        assert any("no case and nothing said matches" in n.message for n in app._notifications)


@pytest.mark.parametrize("dialog, keys, expected", [
    (lambda: NumberDialog("κ?", 0.9), ["ctrl+a", *"0.3", "enter"], 0.3),
    (lambda: InterjectDialog([("agent-a", "agent-a")]), [*"first", "ctrl+a", *"second", "enter"], ("second", "agent-a")),
    (lambda: VerdictDialog(), [*"first", "ctrl+a", *"second", "tab", "tab", "tab", "enter"], (True, "second")),
], ids=["contentiousness", "interjection", "verdict"])
async def test_ctrl_a_selects_all_of_a_dialog_field(tmp_path: Path, registry, dialog, keys, expected) -> None:
    app = make_app(tmp_path, registry)
    answers: list[object] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.push_screen(dialog(), answers.append)
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
        assert answers == [expected]


async def test_deleting_an_exported_debate_says_its_files_stay(tmp_path: Path, registry) -> None:
    """The question said "everything recorded about it" while the exports it had written stayed
    on disk: it names them now, and opens on Cancel (an Enter typed next answers no)."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await save(pilot, "e", redacted=False)
        await save(pilot, "h", redacted=True)
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and app.screen.focused is app.screen.query_one("#no")
        question = app.screen.question  # the words asked (the screen wraps a long path anywhere)
        for name in ("symposium-sample0001ab.md", "symposium-sample0001ab-redacted.html"):
            assert str(tmp_path / "exports" / name) in question, question
        assert "symposium-sample0001ab.json" not in question  # only what exists
        shown = "".join(screen_text(app).replace("█", "").split())  # the dialog's border between its lines
        assert "Filesexportedfromitarenotinthejournalandstay" in shown, shown  # and it is on the screen
        await pilot.press("enter")  # Cancel
        assert Queries(app.journal).debate("sample0001ab") is not None
        await pilot.press("delete", "tab", "enter")  # Delete
        await pilot.pause()
        assert Queries(app.journal).debate("sample0001ab") is None
        assert (app.export_dir / "symposium-sample0001ab.md").exists()
        assert any("its exported files stay" in n.message for n in app._notifications)
