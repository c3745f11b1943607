"""A sealed journal for the seal's tests: a debate holding a row of every sealed table, and the
plain-SQL and ``symposium verify`` tools its tamper tests use.

The journal is a real SQLite file written through :class:`store.journal.Journal`; a tamper is
plain SQL on that file, as someone holding it would do. tests/store/conftest.py's ``sealed``
fixture is a journal written by :func:`record_every_kind`.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from outputs.export import to_json
from protocols.core.events import Citation, EvidenceAttached, ModeratorActed, Notice, TurnFinished
from protocols.core.passages import EvidenceFile, Passage
from protocols.core.replies import Reply
from store import seal
from store.journal import Journal
from store.queries import Queries
from store.schema import MIGRATIONS
from tests.helpers.sample_debate import record_sample
from tui.cli.parser import main

#: The sample debate every sealed journal here holds.
ID = "sample0001ab"


def record_every_kind(journal: Journal, debate_id: str = ID) -> None:
    """The fixed EVINCE-shaped debate, plus the rows it lacks: moderator events, a notice, a
    reply, evidence and a turn's checked citations, provenance; so every sealed table holds a row."""
    record_sample(journal, debate_id)
    journal.record(EvidenceAttached(debate_id, (EvidenceFile(1, "chart.pdf", "pdf", 1234, "cd" * 32, 1, 2, 3, {"name": 1},
                                                             ("no text on page 3 (scanned?)",)),),
                                    (Passage(1, 1, 1, 1, "Bilirubin 4.1 mg/dL."), Passage(2, 1, 2, 1, "No fever.", 1, 2)),
                                    {"evidence_passages": 5}))
    journal.record(TurnFinished(debate_id, "agent-a", "smollm2-135m", "exploratory", 2, "refutation", "Jaundice.", "{}", None,
                                citations=(Citation("bilirubin is high", "E1", "Bilirubin 4.1", "supported", "E1", "exact", "",
                                                    "E1 p.1 ¶1 · chart.pdf"),
                                           Citation("a biopsy", "E9", "", "not_found", None, "", "no passage E9"))))
    journal.record(ModeratorActed(debate_id, "interject", {"text": "Consider malaria."}, 1, checkpoint=3))
    journal.record(ModeratorActed(debate_id, "set_kappa", {"kappa": 0.5}, 1, checkpoint=4))
    journal.record(Notice(debate_id, "judge_is_debater", "the judge is agent-a's model", {"model": "smollm2-135m"}, 1))
    journal.record_replies(debate_id, [Reply("agent-a", "chat", "ab" * 32, "It is jaundice.", {"tokens": 4})])
    journal.record_provenance(debate_id, {"symposium_version": "test", "started_at": "2026-09-21T00:00:00+00:00"})


def verify_cli(path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``symposium verify ARGS`` on the journal at ``path``, in process: its exit status and what it printed."""
    capsys.readouterr()
    code = main(["verify", *args, "--db", str(path)])
    return code, capsys.readouterr().out


def run_sql(path: Path, *statements: str) -> None:
    """Run ``statements`` on the journal file with plain SQLite, as someone tampering with it would."""
    conn = sqlite3.connect(path)
    for s in statements:
        conn.execute(s)
    conn.commit()
    conn.close()


def v5_journal(tmp_path: Path) -> Path:
    """A v5 journal (before the seal) holding the sample debate, written as v5 did: the same rows."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL);")
    for m in MIGRATIONS[:5]:
        conn.executescript(m.sql)
        conn.execute("INSERT INTO migrations VALUES (?, ?, 0)", (m.version, m.name))
    conn.commit()
    conn.close()
    with Journal(tmp_path / "new.db") as j:
        record_every_kind(j)
    source = sqlite3.connect(tmp_path / "new.db")
    old = sqlite3.connect(path)
    for table in seal.KEYS:
        columns = [d[1] for d in old.execute(f"PRAGMA table_info({table})")]  # v5's columns: no seal head
        if table == "provenance" or not columns:  # provenance and the evidence's tables came after v5
            continue
        rows = source.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
        old.executemany(f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)
    old.commit()
    old.close()
    return path


def export_of(path: Path) -> dict[str, Any]:
    """The debate's JSON export, as the file holds it."""
    with Journal(path) as j:
        debate = Queries(j).debate(ID, chain=True)
    assert debate is not None
    return json.loads(to_json(debate))


def reseal(path: Path, table: str, key: str, debate_id: str = ID) -> str:
    """What an editor holding the journal does after changing a row: recompute the row's hash in
    every link that seals it, every chain hash from there on, and the head, with Symposium's own
    functions (the signature cannot be recomputed without the key). Returns the head."""
    conn = sqlite3.connect(path)
    columns = seal.columns(conn)
    row = conn.execute(f"SELECT {', '.join(columns[table])} FROM {table} WHERE {seal.KEYS[table]} = ?",
                       (seal.typed_key(table, key),)).fetchone()
    new_hash = seal.row_sha256(table, tuple(row))
    previous = seal.genesis(debate_id)
    links = conn.execute("SELECT n, rows_json, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,)).fetchall()
    for n, rows, at in links:
        entries = [(t, k, new_hash if (t, k) == (table, key) else h) for t, k, h in json.loads(rows)]
        stored = seal.rows_json(entries)
        previous = seal.link_sha256(previous, n, stored, at)
        conn.execute("UPDATE seal SET rows_json = ?, chain_sha256 = ? WHERE debate_id = ? AND n = ?",
                     (stored, previous, debate_id, n))
    conn.execute("UPDATE debates SET seal_head = ? WHERE id = ?", (previous, debate_id))
    conn.commit()
    conn.close()
    return previous
