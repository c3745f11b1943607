"""Each model call's measured cost in the journal (table ``call_costs``, migration v9): kept as
the backend measured it, NULL where it did not, sealed with the call, and added without
touching the seal of the calls journalled before.

Why a table of its own and not new columns of ``model_calls``: a row's seal hash covers every
column its table has, so columns added to a sealed table change the hash of every call already
sealed, and ``symposium verify`` would call every earlier debate tampered with. The migration
test below journals a debate under layout v8, seals it there, upgrades the journal and verifies
it, and the same for an export written by v8.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from outputs.export import to_json
from protocols.core.events import CallRecord, ModelCalled, ModeratorActed, TurnFinished
from store import export_check, seal
from store.journal import Journal
from store.queries import Queries
from store.schema import MIGRATIONS
from tests.helpers.sample_debate import record_sample

ID = "costs0001ab"


def test_each_call_keeps_what_was_measured_and_null_for_what_was_not(tmp_path: Path) -> None:
    measured = CallRecord("agent-a", "m", "turn", {}, 300, 40, 64, 3.5, 0.6, cached_tokens=260, wait_s=0.25, prefill_s=0.375,
                          decode_s=2.75)
    server = CallRecord("judge", "m-http", "crit", {}, 500, 500, 32, 2.0, 0.9, wait_s=0.125)
    with Journal(tmp_path / "j.db") as journal:
        record_sample(journal, ID)
        journal.record(TurnFinished(ID, "agent-a", "m", "exploratory", 3, "refutation", "text", "text", measured))
        journal.record(ModelCalled(ID, server, 3))
        debate = Queries(journal).debate(ID)
        assert debate is not None
        rows = journal.conn.execute("SELECT m.role, c.cached_tokens, c.wait_s, c.prefill_s, c.decode_s FROM call_costs c"
                                    " JOIN model_calls m ON m.id = c.call_id WHERE m.round = 3 ORDER BY c.id").fetchall()
        assert seal.verify(journal.conn, ID).ok
    assert [tuple(r) for r in rows] == [("agent-a", 260, 0.25, 0.375, 2.75), ("judge", None, 0.125, None, None)]
    assert len(debate["call_costs"]) == len(debate["model_calls"])  # one row per call, figures or none
    assert {c["call_id"] for c in debate["call_costs"]} == {c["id"] for c in debate["model_calls"]}


def _v8_journal(tmp_path: Path, layout: int = 8) -> Path:
    """A journal as Symposium wrote it at layout v8 (or ``layout``): the sample debate (its model
    calls included), sealed under that layout's columns."""
    with Journal(tmp_path / "new.db") as j:
        record_sample(j, ID)
    path = tmp_path / f"v{layout}.db"
    old = sqlite3.connect(path)
    old.executescript("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL);")
    for m in MIGRATIONS[:layout]:
        old.executescript(m.sql)
        old.execute("INSERT INTO migrations VALUES (?, ?, 0)", (m.version, m.name))
    old.execute("ATTACH DATABASE ? AS new", (str(tmp_path / "new.db"),))
    for table in seal.KEYS:
        columns = [r[1] for r in old.execute(f"PRAGMA main.table_info({table})") if not r[1].startswith("seal")]
        if columns:  # call_costs (and before v8 the evidence's tables) not there yet
            names = ", ".join(columns)
            old.execute(f"INSERT INTO main.{table}({names}) SELECT {names} FROM new.{table}")
    old.commit()
    old.execute("DETACH DATABASE new")
    assert seal.seal_existing(old, 1_790_000_100.0) == 1  # what v8 kept of the debate, chained
    old.commit()
    old.close()
    return path


def test_debates_sealed_before_the_costs_were_kept_still_verify(tmp_path: Path) -> None:
    """A v8 journal, upgraded: the debate's chain holds (its calls' hashes are untouched), its
    next write is signed, and its calls show no measured figure rather than invented ones."""
    path = _v8_journal(tmp_path)
    with Journal(path) as journal:
        assert journal.conn.execute("SELECT MAX(version) FROM migrations").fetchone()[0] == MIGRATIONS[-1].version
        verdict = seal.verify(journal.conn, ID)
        assert verdict.ok, verdict.problems[:1]
        exported = json.loads(to_json(Queries(journal).debate(ID, chain=True) or {}))
        journal.record(ModeratorActed(ID, "interject", {"text": "Resumed."}, 2, checkpoint=20))
        assert seal.verify(journal.conn, ID).ok
        debate = Queries(journal).debate(ID)
    assert debate is not None and debate["model_calls"] and debate["call_costs"] == []
    assert export_check.verify_export(exported).ok
    # the same debate as v8 exported it: no costs, the layout and column lists of v8
    exported.pop("call_costs")
    exported["seal"]["layout"] = 8
    exported["seal"]["columns"] = {t: list(c) for t, c in export_check.layout_columns(8).items()}
    verdict = export_check.verify_export(exported)
    assert verdict.ok, verdict.problems[:1]
    exported["call_costs"] = []  # an old export may not gain a list its layout never had
    assert [(p.table, p.key, p.what, p.detail) for p in export_check.verify_export(exported).problems] == [
        ("debates", ID, "inserted", "the export shows 'call_costs', which the seal does not hold")]


def test_a_cost_edited_in_the_journal_or_in_an_export_is_named(tmp_path: Path) -> None:
    call = CallRecord("agent-a", "m", "turn", {}, 300, 40, 64, 3.5, 0.6, cached_tokens=260, wait_s=0.25, prefill_s=0.375,
                      decode_s=2.75)
    with Journal(tmp_path / "j.db") as journal:
        record_sample(journal, ID)
        journal.record(TurnFinished(ID, "agent-a", "m", "exploratory", 3, "refutation", "text", "text", call))
        exported = json.loads(to_json(Queries(journal).debate(ID, chain=True) or {}))
        journal.conn.execute("UPDATE call_costs SET decode_s = 0.5 WHERE cached_tokens = 260")
        journal.conn.commit()
        verdict = seal.verify(journal.conn, ID)
    assert not verdict.ok and verdict.problems[0].table == "call_costs"
    assert export_check.verify_export(exported).ok
    edited = next(c for c in exported["call_costs"] if c["cached_tokens"] == 260)
    edited["prefill_s"] = 0.0  # the prefill looks free
    problems = export_check.verify_export(exported).problems
    assert problems and problems[0].table == "call_costs" and "prefill_s" in problems[0].detail


def test_an_export_of_the_first_signed_layout_verifies_and_one_of_a_table_it_lacked_fails(tmp_path: Path) -> None:
    """An export as v7 wrote it (signed, before the evidence and the costs): no citations on its
    turns and no evidence section, and it verifies. A row of a table v7 did not have, smuggled into
    its chain, is named, not a crash."""
    path = _v8_journal(tmp_path, 7)
    with Journal(path) as journal:
        exported = json.loads(to_json(Queries(journal).debate(ID, chain=True) or {}))
    for name in ("call_costs", "evidence"):
        exported.pop(name)
    for turn in exported["turns"]:
        turn.pop("citations")
    exported["seal"]["layout"] = 7
    exported["seal"]["columns"] = {t: list(c) for t, c in export_check.layout_columns(7).items()}
    verdict = export_check.verify_export(exported)
    assert verdict.ok, verdict.problems[:1]
    exported["seal"]["chain"][-1]["rows"].append({"table": "citations", "key": "1", "row_sha256": "0" * 64,
                                                  "row": {"id": 1, "debate_id": ID, "turn_id": 1}})
    assert export_check.verify_export(exported).status == "tampered"
