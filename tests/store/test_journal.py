"""The SQLite journal: layout, atomic turns, permissions, search, refusal of newer files."""

from __future__ import annotations

import json
import re
import sqlite3
import stat
from pathlib import Path

import pytest
import sqlite_utils

from outputs.export import to_json, to_markdown, write_private
from protocols.core.events import (
    DebateFinished,
    DebateStarted,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    Participant,
    PhaseChanged,
)
from store.journal import Journal, JournalError
from store.queries import Queries
from store.schema import LATEST
from tests.helpers.journal_rows import CALL, start, turn


def test_new_journal_has_wal_migrations_and_private_permissions(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "j.db"
    with Journal(path) as j:
        assert j.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert j.conn.execute("SELECT MAX(version) FROM migrations").fetchone()[0] == LATEST
        start(j)
        j.record(turn())
        for f in (path, path.with_name("j.db-wal")):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    # The file opens with sqlite-utils as it is (as Datasette would).
    db = sqlite_utils.Database(path)
    assert {"debates", "participants", "turns", "distributions", "metrics", "judgements",
            "moderator_events", "model_calls", "phases", "rounds", "migrations"} <= set(db.table_names())


def test_reopening_does_not_migrate_twice(tmp_path: Path) -> None:
    Journal(tmp_path / "j.db").close()
    with Journal(tmp_path / "j.db") as j:
        assert j.conn.execute("SELECT COUNT(*) FROM migrations").fetchone()[0] == len(range(1, LATEST + 1))


def test_turn_with_distribution_and_call_lands_in_one_transaction(journal: Journal) -> None:
    start(journal)
    turn_id = journal.record(turn(distribution={"Dengue": 0.6, "Chikungunya": 0.3, "Zika": 0.1},
                                  parsed={"predictions": []}, parse_notes=("renormalised",)))
    rows = list(journal.conn.execute("SELECT label, probability, rank FROM distributions WHERE turn_id = ?", (turn_id,)))
    assert [(r["label"], r["rank"]) for r in rows] == [("Dengue", 1), ("Chikungunya", 2), ("Zika", 3)]
    call = journal.conn.execute("SELECT * FROM model_calls WHERE turn_id = ?", (turn_id,)).fetchone()
    assert (call["prompt_tokens"], call["prompt_tokens_evaluated"], call["completion_tokens"]) == (120, 30, 40)
    assert json.loads(call["options_json"]) == {"temperature": 0.7}


def test_a_failing_turn_write_leaves_nothing_half_written(journal: Journal) -> None:
    start(journal)
    journal.record(turn(text="first"))
    bad = turn(text="second", distribution={"Dengue": "not a number"})  # type: ignore[dict-item]
    journal.conn.execute("CREATE TRIGGER boom BEFORE INSERT ON distributions BEGIN SELECT RAISE(ABORT, 'disk trouble'); END")
    with pytest.raises(JournalError, match="could not record TurnFinished"):
        journal.record(bad)
    texts = [r[0] for r in journal.conn.execute("SELECT text FROM turns ORDER BY seq")]
    assert texts == ["first"]
    assert journal.conn.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0] == 1
    journal.conn.execute("DROP TRIGGER boom")
    journal.record(turn(text="third"))  # the sequence numbering recovers
    assert [r[0] for r in journal.conn.execute("SELECT seq FROM turns ORDER BY seq")] == [1, 2]


def _writes_of(path: Path, event: object) -> list[tuple[str, str]]:
    """Every top-level write (``INSERT``/``UPDATE``/``DELETE`` and its table) that recording
    ``event`` makes, read from SQLite's own statement trace: derived, not listed by hand, so a
    table added to a turn's transaction later is covered without editing this test."""
    statements: list[str] = []
    with Journal(path) as j:
        start(j)
        j.record(turn(text="first"))
        j.conn.set_trace_callback(statements.append)
        j.record(event)
        j.conn.set_trace_callback(None)
    writes = []
    for sql in statements:
        m = re.match(r"\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", sql, re.IGNORECASE)
        if m:
            op = m.group(1).split()[0].upper()
            if (op, m.group(2)) not in writes:
                writes.append((op, m.group(2)))
    return writes


def _everything(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Every row of every table (full-text index included), to compare before and after."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: sorted(map(tuple, conn.execute(f'SELECT * FROM "{t}"')), key=repr) for t in tables}


THE_TURN = turn(text="second", distribution={"Dengue": 0.7, "Zika": 0.3}, parsed={"predictions": []})
A_JUDGEMENT = JudgementMade("d1", "judge", "gemma3-270m", "crit", "agent-a", "tea", 7.0, None, {"why": "clear"},
                            "{}", round=1, call=CALL)


@pytest.mark.parametrize("event", [THE_TURN, A_JUDGEMENT], ids=["turn", "judgement"])
def test_a_failure_at_any_write_of_a_turn_leaves_nothing_of_it(tmp_path: Path, event: object) -> None:
    """One transaction per turn: the turn, its distribution rows, its model-call row and the
    debate's ``updated_at`` land together or not at all. The failure is injected at EACH write
    the turn makes (a trigger that aborts that table's insert or update), the model call
    included; after each, the whole file is byte-for-byte what it was before the turn."""
    writes = _writes_of(tmp_path / "trace.db", event)
    tables = {table for _, table in writes}
    assert {"model_calls", "debates"} <= tables, writes  # the discovery itself must see the call row
    if event is THE_TURN:
        assert {"turns", "distributions"} <= tables, writes
    for op, table in writes:
        path = tmp_path / f"{op}-{table}.db"
        with Journal(path) as j:
            start(j)
            j.record(turn(text="first"))
            before = _everything(j.conn)
            j.conn.execute(f"CREATE TRIGGER boom BEFORE {op} ON {table} BEGIN SELECT RAISE(ABORT, 'disk trouble'); END")
            with pytest.raises(JournalError, match=f"could not record {type(event).__name__}.*disk trouble"):
                j.record(event)
            j.conn.execute("DROP TRIGGER boom")
            assert _everything(j.conn) == before, f"a failure at {op} {table} left part of the turn behind"
            j.record(event)  # and with the fault gone the same event is written whole
            assert _everything(j.conn) != before


def test_queries_return_the_whole_debate(journal: Journal) -> None:
    start(journal)
    journal.record(PhaseChanged("d1", "exploratory", 1, kappa=0.9))
    journal.record(turn(distribution={"A": 1.0}))
    journal.record(turn(role="agent-b", text="Coffee wakes the mind."))
    journal.record(MetricsComputed("d1", 1, {"jsd": 0.4, "wd": 0.5}, kappa=0.9))
    journal.record(JudgementMade("d1", "judge", "gemma3-270m", "crit", "agent-a", "tea", 7.0, None, {"why": "clear"}, "{}", round=1, call=CALL))
    journal.record(ModeratorActed("d1", "interject", {"text": "Stay on topic"}, round=1))
    journal.record(DebateFinished("d1", "finished", "converged", {"final": {"A": 1.0}}))

    d = Queries(journal).debate("d1")
    assert d is not None
    assert d["status"] == "finished" and d["stop_reason"] == "converged"
    assert [t["role"] for t in d["turns"]] == ["agent-a", "agent-b"]
    assert d["turns"][0]["distribution"] == {"A": 1.0}
    assert d["metrics"] == [{"round": 1, "phase": "exploratory", "kappa": 0.9, "jsd": 0.4, "wd": 0.5}]
    assert d["judgements"][0]["reasons"] == {"why": "clear"}
    assert d["moderator_events"][0]["payload"] == {"text": "Stay on topic"}
    assert len(d["model_calls"]) == 3  # two turns and one judgement
    assert d["outcome"] == {"final": {"A": 1.0}}


def test_history_is_newest_first_and_prefixes_resolve(journal: Journal) -> None:
    start(journal, "aaa111", "first")
    start(journal, "bbb222", "second")
    q = Queries(journal)
    assert [d["title"] for d in q.debates()] == ["second", "first"]
    assert q.find_debate("bbb") == "bbb222"
    assert q.find_debate("zzz") is None


def test_full_text_search_finds_turns_and_survives_query_syntax(journal: Journal) -> None:
    start(journal)
    journal.record(turn(text="Jaundice with dark urine suggests hepatitis."))
    journal.record(turn(text="Coffee is a stimulant."))
    hits = Queries(journal).search("hepatit")
    assert [h["seq"] for h in hits] == [1]
    assert "[hepatitis]" in hits[0]["snippet"].lower()
    assert Queries(journal).search('"unbalanced AND (') == []  # user text never becomes FTS syntax


def test_delete_removes_everything_about_a_debate(journal: Journal) -> None:
    start(journal)
    journal.record(turn(distribution={"A": 1.0}))
    assert journal.delete_debate("d1")
    for table in ("turns", "distributions", "model_calls", "participants"):
        assert journal.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    assert Queries(journal).search("tea") == []


def test_journal_from_a_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    with Journal(path) as j:
        j.conn.execute("INSERT INTO migrations VALUES (?, 'from the future', 0)", (LATEST + 5,))
    before = path.read_bytes()
    with pytest.raises(JournalError, match=rf"newer Symposium.*v{LATEST + 5}.*--db"):
        Journal(path)
    assert path.read_bytes() == before


def test_garbage_file_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(JournalError, match="notes.db.*not a readable Symposium journal"):
        Journal(path)


def test_unwritable_location_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the journal's folder should be")
    with pytest.raises(JournalError, match="not-a-folder.*cannot create the journal.*--db"):
        Journal(blocker / "j.db")


def test_interrupted_debates_are_marked_resumable(journal: Journal) -> None:
    start(journal)
    journal.record(turn())
    journal.mark_interrupted("d1", "Ctrl-C")
    row = journal.conn.execute("SELECT status, stop_reason FROM debates").fetchone()
    assert tuple(row) == ("interrupted", "Ctrl-C")


def test_exports(journal: Journal, tmp_path: Path) -> None:
    start(journal)
    journal.record(turn(distribution={"Dengue": 0.75, "Zika": 0.25}))
    journal.record(MetricsComputed("d1", 1, {"jsd": 0.25}, kappa=0.9))
    d = Queries(journal).debate("d1")
    md = to_markdown(d)
    assert md.startswith("# Tea or coffee?")
    assert "- Dengue: 75%" in md and "| 1 |" in md
    assert json.loads(to_json(d))["turns"][0]["text"] == "Tea calms the mind."
    out = tmp_path / "export.md"
    write_private(out, md)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text() == md


def test_two_connections_write_the_same_file(tmp_path: Path) -> None:
    """WAL and the busy timeout let two writers (the TUI and a headless run) share a file."""
    path = tmp_path / "shared.db"
    a, b = Journal(path), Journal(path)
    start(a, "da")
    start(b, "db")
    for i in range(20):
        a.record(turn("da", text=f"a{i}"))
        b.record(turn("db", text=f"b{i}"))
    for j, did in ((a, "da"), (b, "db")):
        seqs = [r[0] for r in j.conn.execute("SELECT seq FROM turns WHERE debate_id = ? ORDER BY seq", (did,))]
        assert seqs == list(range(1, 21))
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    a.close()
    b.close()


def test_a_deleted_debates_words_are_gone_from_the_files(tmp_path: Path) -> None:
    """Deleting a debate must remove its text from the journal's files, not only from its
    tables: a clinician who deletes a case expects it gone from the disk. SQLite otherwise
    leaves deleted rows in free pages, and the search index keeps their words in its segments."""
    path = tmp_path / "j.db"
    marker = "Zanzibarite"
    with Journal(path) as j:
        start(j, "keep", title="A debate that stays")
        j.record(turn("keep", text="Coffee wakes the mind."))
        j.record(DebateStarted("gone", "evince", f"{marker} case", f"{marker} subject", {},
                               (Participant("agent-a", "smollm2-135m", "llamacpp"),)))
        for n in range(20):
            j.record(turn("gone", text=f"{marker} turn {n} " + "words " * 200))
        assert j.delete_debate("gone")
        # at once, while the journal is still open (the app keeps it open)
        leftovers = [f.name for f in tmp_path.iterdir() if marker.encode() in f.read_bytes()
                     or marker.lower().encode() in f.read_bytes()]  # the search index keeps words lower-cased
        assert leftovers == []
    with Journal(path) as j:
        assert Queries(j).search("coffee") and not Queries(j).search(marker)
