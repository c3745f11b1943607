"""A deleted debate's words leave the journal's files, or the user is told they have not yet.

An attacker here is only time: another program holding a read open on the journal (the app
beside a command, a database browser left open on the file). Its read pins the WAL, so the
checkpoint that would overwrite the deleted pages cannot finish. The delete must say so rather
than report success while the words are still in the files, and the next open (with the reader
gone) must finish the wipe.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from protocols.core.events import DebateStarted, Participant, TurnFinished
from store.journal import DeleteUnfinished, Journal
from store.queries import Queries

MARKER = "Quillonbrae"


def _holding(path: Path, tmp_path: Path) -> list[str]:
    """The journal's files (the journal, its WAL, anything beside it) still holding the marker."""
    return sorted(f.name for f in tmp_path.iterdir() if f.name.startswith(path.name)
                  and (MARKER.encode() in f.read_bytes() or MARKER.lower().encode() in f.read_bytes()))


def _debate(journal: Journal, debate_id: str, words: str) -> None:
    journal.record(DebateStarted(debate_id, "evince", f"{words} case", words, {},
                                 (Participant("agent-a", "smollm2-135m", "llamacpp"),)))
    for n in range(5):
        journal.record(TurnFinished(debate_id, "agent-a", "smollm2-135m", "exploratory", 1, "argument",
                                    f"{words} turn {n} " + "words " * 100, "", None))


def test_a_delete_that_a_reader_keeps_from_finishing_says_so_and_the_next_open_finishes_it(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        _debate(journal, "keep", "Coffee")
        _debate(journal, "gone", MARKER)
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        assert reader.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == 10  # a read snapshot, held open
        with pytest.raises(DeleteUnfinished, match="still in the file") as raised:
            journal.delete_debate("gone")
        assert "gone" in str(raised.value) and MARKER not in str(raised.value)
        assert _holding(path, tmp_path), "the reader's snapshot did keep the words: the case this test is about"
        assert Queries(journal).debate("gone") is None  # gone from the tables at once
        reader.close()
    assert (tmp_path / "journal.db-purge").read_text(encoding="utf-8").split() == ["gone"]
    with Journal(path) as journal:
        assert _holding(path, tmp_path) == [], "the next open wiped the words"
        assert not (tmp_path / "journal.db-purge").exists()
        assert Queries(journal).debate("keep") is not None


def test_an_open_while_the_reader_is_still_there_keeps_the_note_for_later(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        _debate(journal, "gone", MARKER)
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM turns").fetchone()
        with pytest.raises(DeleteUnfinished):
            journal.delete_debate("gone")
    with Journal(path):
        assert (tmp_path / "journal.db-purge").exists(), "the wipe could not finish: the note stays"
    reader.close()
    with Journal(path):
        assert not (tmp_path / "journal.db-purge").exists() and _holding(path, tmp_path) == []


def test_a_delete_nobody_reads_beside_finishes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        _debate(journal, "gone", MARKER)
        assert journal.delete_debate("gone") is True
        assert _holding(path, tmp_path) == [] and not (tmp_path / "journal.db-purge").exists()
        assert journal.delete_debate("gone") is False


async def test_the_app_says_when_a_delete_could_not_wipe_the_words_yet(tmp_path: Path, registry) -> None:
    """On Home, with a database browser (a raw reader) holding the journal open: the delete
    goes through, the debate leaves the list, and the notice says its words are still in the file."""
    from textual.widgets import Button

    from tui.app.app import SymposiumApp
    from tui.app.screens.home import HomeScreen

    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        _debate(journal, "gone00000001", MARKER)
    app = SymposiumApp(journal=Journal(path), registry=registry, export_dir=tmp_path / "exports")
    reader = sqlite3.connect(path)
    try:
        async with app.run_test(size=(140, 42)) as pilot:
            home = app.screen
            assert isinstance(home, HomeScreen) and home.selected() == "gone00000001"
            reader.execute("BEGIN")
            reader.execute("SELECT COUNT(*) FROM turns").fetchone()
            await pilot.press("delete")
            await pilot.pause()
            assert isinstance(app.focused, Button)
            await pilot.click("#yes")
            await pilot.pause()
            shown = [n.message for n in app._notifications]
            assert any("gone00000001 is deleted from the journal, but its words are still in the file" in m for m in shown), shown
            assert isinstance(app.screen, HomeScreen) and Queries(app.journal).debates() == []
    finally:
        reader.close()
        app.journal.close()
