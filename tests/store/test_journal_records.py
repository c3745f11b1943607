"""What the journal writes, field by field, and what it says when it cannot.

test_journal.py checks the layout, atomic turns and the refusals by their gist; here every
event type is recorded and read back column by column (a person's turn has no model call, a
resumed debate is running again, a notice keeps its details), the journal's location follows
``SYMPOSIUM_DB`` or the user's data folder, an older journal is upgraded in place, and each
refusal is checked word for word: the message is what a user reads to fix the problem.
(Found by mutation testing, ``benchmarks/mutation.py``: each test here failed for a change to
``store/journal.py`` that the other tests let through.)
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import platformdirs
import pytest

from protocols.core.events import (
    CallRecord,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    Notice,
    Participant,
    PhaseChanged,
    TurnFinished,
)
from store.journal import Journal, JournalError, _sql_string, default_db_path, new_debate_id
from store.schema import LATEST, MIGRATIONS

CALL = CallRecord("agent-a", "smollm2-135m", "turn", {"temperature": 0.7}, 120, 30, 40, 1.25, 0.05, "length")
LONG_AGO = 1000.0  # the debate's start: every later write must move updated_at past it


def start(journal: Journal, debate_id: str = "d1", config: dict | None = None) -> None:
    journal.record(DebateStarted(
        debate_id, "evince", "Fever after travel", "A 34-year-old with fever.", config or {"rounds": 3},
        (Participant("agent-a", "smollm2-135m", "llamacpp", {"temperature": 0.7}, {"n_ctx": 4096}),
         Participant("human", "person", "human")),
        at=LONG_AGO,
    ))


def row(journal: Journal, sql: str, *args: object) -> sqlite3.Row:
    found = journal.conn.execute(sql, args).fetchone()
    assert found is not None, sql
    return found


def updated_at(journal: Journal, debate_id: str = "d1") -> float:
    return row(journal, "SELECT updated_at FROM debates WHERE id = ?", debate_id)["updated_at"]


def test_a_model_turn_keeps_its_cost_notes_and_call_round(journal: Journal) -> None:
    start(journal)
    turn_id = journal.record(TurnFinished("d1", "agent-a", "smollm2-135m", "exploratory", 2, "argument", "text", "raw",
                                          CALL, parsed={"predictions": []}, parse_notes=("renormalised",)))
    t = row(journal, "SELECT * FROM turns WHERE id = ?", turn_id)
    assert (t["prompt_tokens"], t["prompt_tokens_evaluated"], t["completion_tokens"], t["duration_s"], t["finish_reason"]) \
        == (120, 30, 40, 1.25, "length")
    assert json.loads(t["parse_notes_json"]) == ["renormalised"] and json.loads(t["parsed_json"]) == {"predictions": []}
    assert row(journal, "SELECT round FROM model_calls WHERE turn_id = ?", turn_id)["round"] == 2
    assert updated_at(journal) > LONG_AGO


def test_a_persons_turn_costs_nothing_and_has_no_model_call(journal: Journal) -> None:
    start(journal)
    turn_id = journal.record(TurnFinished("d1", "human", "person", "exploratory", 1, "interjection", "Stay on topic.",
                                          "Stay on topic.", None))
    t = row(journal, "SELECT * FROM turns WHERE id = ?", turn_id)
    assert (t["prompt_tokens"], t["prompt_tokens_evaluated"], t["completion_tokens"], t["duration_s"], t["finish_reason"]) \
        == (0, 0, 0, 0.0, "human")
    assert t["parsed_json"] is None and json.loads(t["parse_notes_json"]) == []
    assert journal.conn.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0] == 0


def test_participants_keep_their_options_and_details(journal: Journal) -> None:
    start(journal)
    p = row(journal, "SELECT * FROM participants WHERE role = 'agent-a'")
    assert json.loads(p["options_json"]) == {"temperature": 0.7} and json.loads(p["details_json"]) == {"n_ctx": 4096}


def test_text_is_stored_as_written_and_values_json_cannot_hold_become_text(journal: Journal) -> None:
    """Cases in any language stay readable in the file (Datasette, the sqlite3 shell); a value
    JSON has no type for (a path) is kept as its text instead of failing the debate's start."""
    start(journal, config={"case": "fièvre à 39 °C, 发烧", "labels_file": Path("/data/labels.txt")})
    raw = row(journal, "SELECT config_json FROM debates")["config_json"]
    assert "fièvre à 39 °C, 发烧" in raw
    assert json.loads(raw)["labels_file"] == "/data/labels.txt"


def test_each_write_moves_the_debates_updated_at(journal: Journal) -> None:
    for i, event in enumerate([
        PhaseChanged("d1", "exploratory", 1, kappa=0.9),
        MetricsComputed("d1", 1, {"jsd": 0.4}),
        JudgementMade("d1", "judge", "gemma3-270m", "crit", "agent-a", None, 7.0, None, {}, "{}", round=1),
        ModeratorActed("d1", "interject", {"text": "Stay on topic"}, round=1),
        Notice("d1", "self_judging", "judge runs on a debater's model", {"judge": "judge"}, 1),
    ]):
        debate_id = f"d{i}"
        start(journal, debate_id)
        journal.record(type(event)(**{**event.__dict__, "debate_id": debate_id}))
        assert updated_at(journal, debate_id) > LONG_AGO, type(event).__name__


def test_a_judgements_model_call_carries_its_round(journal: Journal) -> None:
    start(journal)
    journal.record(JudgementMade("d1", "judge", "gemma3-270m", "crit", "agent-a", None, 7.0, None, {}, "{}", round=3,
                                 call=CALL))
    assert row(journal, "SELECT round, turn_id FROM model_calls")[:] == (3, None)


def test_a_rounds_kappa_follows_its_latest_metrics_and_stays_when_they_carry_none(journal: Journal) -> None:
    start(journal)
    journal.record(PhaseChanged("d1", "exploratory", 1, kappa=0.9))
    journal.record(MetricsComputed("d1", 1, {"jsd": 0.4}, kappa=0.7))
    assert row(journal, "SELECT kappa FROM rounds WHERE round = 1")["kappa"] == 0.7
    journal.record(MetricsComputed("d1", 1, {"jsd": 0.3}))
    assert row(journal, "SELECT kappa FROM rounds WHERE round = 1")["kappa"] == 0.7
    journal.record(MetricsComputed("d1", 2, {"jsd": 0.2}))
    assert journal.conn.execute("SELECT COUNT(*) FROM rounds WHERE round = 2").fetchone()[0] == 0


def test_a_notice_is_stored_with_its_details(journal: Journal) -> None:
    start(journal)
    journal.record(Notice("d1", "self_judging", "judge-1 runs on agent-a's model", {"judge": "judge-1"}, 0, at=1234.5))
    n = row(journal, "SELECT * FROM notices")
    assert (n["debate_id"], n["round"], n["kind"], n["text"], json.loads(n["details_json"]), n["created_at"]) \
        == ("d1", 0, "self_judging", "judge-1 runs on agent-a's model", {"judge": "judge-1"}, 1234.5)


def test_a_resumed_debate_is_running_again_and_the_resume_is_an_event(journal: Journal) -> None:
    start(journal)
    journal.record(DebateFinished("d1", "failed", "server died", {}, at=2000.0))
    journal.record(DebateResumed("d1", 3, at=3000.0))
    d = row(journal, "SELECT * FROM debates")
    assert (d["status"], d["stop_reason"], d["finished_at"], d["updated_at"]) == ("running", None, None, 3000.0)
    m = row(journal, "SELECT * FROM moderator_events")
    assert (m["round"], m["kind"], json.loads(m["payload_json"]), m["created_at"]) == (3, "resume_debate", {"from_round": 3}, 3000.0)


def test_deleting_a_debate_that_is_not_there_says_so(journal: Journal) -> None:
    start(journal)
    assert journal.delete_debate("nope") is False
    assert journal.delete_debate("d1") is True


def test_the_journal_is_symposium_db_or_in_the_users_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # neither it nor cases/ exists yet: both are created
    monkeypatch.setenv("SYMPOSIUM_DB", "~/cases/journal.db")
    assert default_db_path() == tmp_path / "home" / "cases" / "journal.db"
    with Journal() as j:
        assert j.path == tmp_path / "home" / "cases" / "journal.db" and j.path.is_file()
    monkeypatch.delenv("SYMPOSIUM_DB")
    assert default_db_path() == Path(platformdirs.user_data_dir("symposium")) / "journal.db"


def test_a_journal_in_a_folder_that_exists_is_private_too(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as j:
        j.record(DebateStarted("d1", "evince", "t", "s", {}, ()))
        for f in (tmp_path / "j.db", tmp_path / "j.db-wal"):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_a_folder_where_the_journal_should_be_is_refused_word_for_word(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    path.mkdir()
    with pytest.raises(JournalError) as refused:
        Journal(path)
    assert str(refused.value) == (f"{path}: not a readable Symposium journal (unable to open database file). "
                                  "Point --db (or SYMPOSIUM_DB) at another file, or move this one aside.")


def test_debate_ids_are_twelve_hex_characters() -> None:
    ids = {new_debate_id() for _ in range(200)}
    assert len(ids) == 200 and all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


def test_an_older_journal_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL);")
    for m in MIGRATIONS[:-1]:
        conn.executescript(m.sql)
        conn.execute("INSERT INTO migrations VALUES (?, ?, 0)", (m.version, m.name))
    conn.commit()
    conn.close()
    with Journal(path) as j:
        assert [tuple(r) for r in j.conn.execute("SELECT version, name FROM migrations ORDER BY version")] \
            == [(m.version, m.name) for m in MIGRATIONS]
        assert j.conn.execute("SELECT MAX(version) FROM migrations").fetchone()[0] == LATEST


def test_a_failed_migration_names_itself_and_leaves_the_files_own_tables(tmp_path: Path) -> None:
    """Another program's database that happens to hold a ``debates`` table: v1 cannot run."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE debates (motion TEXT)")
    conn.execute("INSERT INTO debates VALUES ('This house would sleep')")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError) as refused:
        Journal(path)
    assert str(refused.value) == f"{path}: migration v1 failed (table debates already exists); nothing was changed."
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT motion FROM debates").fetchall() == [("This house would sleep",)]
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'participants'").fetchall() == []
    conn.close()


def test_migration_names_are_quoted_as_sql_strings() -> None:
    conn = sqlite3.connect(":memory:")
    for name in ("initial layout", "it's", "''", "a'); DROP TABLE x; --"):
        assert conn.execute(f"SELECT {_sql_string(name)}").fetchone()[0] == name


def test_a_file_that_is_not_a_journal_is_refused_word_for_word(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(JournalError) as refused:
        Journal(path)
    assert str(refused.value) == (f"{path}: not a readable Symposium journal (file is not a database). "
                                  "Point --db (or SYMPOSIUM_DB) at another file, or move this one aside.")


@pytest.mark.parametrize("case", ["file in the way", "name too long"])
def test_a_journal_that_cannot_be_created_says_why_word_for_word(tmp_path: Path, case: str) -> None:
    if case == "file in the way":
        (tmp_path / "not-a-folder").write_text("a file where the journal's folder should be")
        path, why = tmp_path / "not-a-folder" / "j.db", "a file is in the way of its folder"
    else:
        path, why = tmp_path / ("j" * 300 + ".db"), os.strerror(36)  # ENAMETOOLONG: "File name too long"
    with pytest.raises(JournalError) as refused:
        Journal(path)
    assert str(refused.value) == (f"{path}: cannot create the journal ({why}). "
                                  "Check the folder's permissions and free space, or choose another file with --db.")


def test_a_journal_that_cannot_use_wal_is_refused_word_for_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite keeps ``:memory:`` databases out of WAL mode, as it does files on some network
    drives; a journal named ``:memory:`` is how this test reaches that refusal on a local disk."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(JournalError) as refused:
        Journal(":memory:")
    assert str(refused.value) == ":memory:: could not switch to WAL mode (got 'memory'); is it on a network drive?"
