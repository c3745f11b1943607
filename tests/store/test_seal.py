"""The seal (store/seal.py) in the journal: every row of a debate hash-chained as it is written.

Each tamper is its own test, done with plain SQL on the real journal file, and each must make
``symposium verify`` fail, naming the row: a turn's text changed, a judgement deleted, two
events swapped, a row inserted. One test changes every sealed column of every table in turn, so
a column left out of the hash is caught (the mutation benchmark's target, benchmarks/mutation.py).
Exports are tests/store/test_seal_export.py's; the signature tests/store/test_seal_signing.py's.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from outputs.export import to_json
from protocols.core.events import CallRecord, ModeratorActed, TurnFinished
from store import export_check, seal, signing
from store.journal import Journal
from store.queries import Queries
from tests.helpers.sample_debate import T0, record_sample, sample_events
from tests.helpers.sealed_journal import ID, run_sql, v5_journal, verify_cli


def test_an_untouched_journal_verifies_with_exit_0(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 0, out
    with Journal(sealed) as j:
        verdict = seal.verify(j.conn, ID)
        summary = seal.summary(j.conn, ID)
        links = j.conn.execute("SELECT COUNT(*) FROM seal WHERE debate_id = ?", (ID,)).fetchone()[0]
    own = signing.own_public_key()
    assert own is not None and verdict.signature is not None
    assert verdict.ok and verdict.rows > 40 and verdict.links == links and verdict.sealed_on_migration_at is None
    assert f"ok {ID}: {verdict.rows} rows in {links} links, head {verdict.head}\n" in out
    assert f"  signed by your key {signing.fingerprint(own)}\n" in out
    assert "cannot show: an edit re-signed by whoever else holds your key" in out
    assert summary == {"head": verdict.head, "rows": verdict.rows, "links": links, "sealed_on_migration_at": None,
                       "key": own, "fingerprint": signing.fingerprint(own), "signature": summary["signature"],
                       "signed_from": 1}
    assert signing.valid(own, summary["signature"], signing.message(ID, verdict.head, 1, None))


def test_a_turns_text_changed_fails_naming_the_turn(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(sealed, "UPDATE turns SET text = 'Clearly malaria.' WHERE seq = 2")
    turn_id = sqlite3.connect(sealed).execute("SELECT id FROM turns WHERE seq = 2").fetchone()[0]
    code, out = verify_cli(sealed, ID[:6], capsys=capsys)
    assert code == 1
    assert f"FAILED {ID}: first turns row {turn_id} (written " in out
    assert "changed — its content differs from what was sealed" in out


def test_a_deleted_judgement_fails_naming_it(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(sealed, "DELETE FROM judgements WHERE id = 3")
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 1
    assert "first judgements row 3 (written " in out and "deleted — the row is gone" in out


def test_two_swapped_events_fail_naming_the_first(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(sealed)
    first, second = [r[0] for r in conn.execute("SELECT id FROM moderator_events ORDER BY id")]
    conn.close()
    run_sql(sealed, f"UPDATE moderator_events SET id = -1 WHERE id = {first}",
         f"UPDATE moderator_events SET id = {first} WHERE id = {second}",
         f"UPDATE moderator_events SET id = {second} WHERE id = -1")
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 1
    assert f"first moderator_events row {first} (written " in out
    assert f"reordered — it now holds what was sealed as moderator_events row {second}" in out


def test_an_inserted_row_fails_naming_it(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two rows inserted, the later-dated with the lower id: the earlier-dated is named first."""
    insert = ("INSERT INTO judgements(id, debate_id, round, judge_role, judge_model, kind, target, score, raw, created_at)"
              f" VALUES (?, '{ID}', 1, 'judge', 'smollm2-135m', 'crit', 'agent-b', 10, '{{}}', ?)")
    conn = sqlite3.connect(sealed)
    conn.execute(insert, (98, T0 + 200))
    conn.execute(insert, (99, T0 + 100))
    conn.commit()
    conn.close()
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 1
    assert "first judgements row 99 (written 2026-09-21T" in out and "inserted — no seal link covers this row" in out
    assert "also judgements row 98" in out


def test_a_debate_written_around_the_journal_has_no_seal(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(sealed, f"INSERT INTO debates(id, protocol, title, subject, created_at, updated_at) VALUES ('forged', 'evince', 't', 's', {T0}, {T0})")
    code, out = verify_cli(sealed, "forged", capsys=capsys)
    assert code == 1 and "first debates row forged (written time unknown): inserted — the debate has no seal at all" in out


def _different(value: Any) -> Any:
    if value is None:
        return 7
    if isinstance(value, str):
        return value + "x"
    return value + 1000 if isinstance(value, int) else value / 2 + 0.125


#: What the seal leaves out, on purpose (store/seal.py says why): nothing else may be.
UNSEALED_COLUMNS = {("debates", c) for c in ("updated_at", "events_recorded", "seal_head", "seal_links", "seal_rows",
                                             "sealed_on_migration_at", "seal_signature", "seal_key", "seal_signed_from")}
UNSEALED_TABLES = {"migrations", "seal", "turns_fts"}


def test_every_table_of_a_debate_is_sealed(sealed: Path) -> None:
    conn = sqlite3.connect(sealed)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if not r[0].startswith(("sqlite_", "turns_fts", "said_fts"))}  # search indexes: derived
    assert tables - UNSEALED_TABLES == set(seal.KEYS)
    assert seal.columns(conn) == {t: tuple(r[1] for r in conn.execute(f"PRAGMA table_info({t})")
                                           if (t, r[1]) not in UNSEALED_COLUMNS) for t in seal.KEYS}


def test_every_column_of_every_sealed_table_is_in_its_hash(sealed: Path) -> None:
    """Each column of each sealed table (all but UNSEALED_COLUMNS), changed alone in one row,
    must fail verification: a column left out of the hash would let that edit through."""
    conn = sqlite3.connect(sealed, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = OFF")  # a changed debate_id must stay changed, not be refused
    for table, key in seal.KEYS.items():
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if (table, r[1]) not in UNSEALED_COLUMNS]
        owner = "id" if table == "debates" else "debate_id"
        found = conn.execute(f"SELECT {key}, {', '.join(columns)} FROM {table} WHERE {owner} = ? LIMIT 1", (ID,)).fetchone()
        assert found is not None, f"the fixture has no {table} row"
        for column, value in zip(columns, found[1:]):
            if table == "turns" and column == "confidence":
                new: Any = 50.0 if value is None else (value + 1) % 100
            elif table == "replies" and column == "kind":
                new = "score" if value != "score" else "chat"
            elif table == "citations" and column == "status":
                new = "uncited" if value != "uncited" else "supported"
            else:
                new = _different(value)
            conn.execute("BEGIN")
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {owner} = ? AND {key} = ?", (new, ID, found[0]))
            verdict = seal.verify(conn, ID)
            conn.execute("ROLLBACK")
            assert not verdict.ok, f"{table}.{column} changed and the seal did not notice"
            assert verdict.problems[0].table in (table, "debates"), (table, column, verdict.problems[0])
    assert seal.verify(conn, ID).ok


def test_a_link_removed_from_the_chains_end_fails_against_the_head(sealed: Path) -> None:
    """The last write (the provenance) removed with its link: only the head tells."""
    conn = sqlite3.connect(sealed)
    n, rows = conn.execute("SELECT n, rows_json FROM seal WHERE debate_id = ? ORDER BY n DESC", (ID,)).fetchone()
    assert [r[0] for r in json.loads(rows)] == ["provenance"]
    conn.execute("DELETE FROM seal WHERE debate_id = ? AND n = ?", (ID, n))
    conn.execute("DELETE FROM provenance WHERE debate_id = ?", (ID,))
    head = conn.execute("SELECT seal_head FROM debates WHERE id = ?", (ID,)).fetchone()[0]
    previous = conn.execute("SELECT chain_sha256 FROM seal WHERE debate_id = ? AND n = ?", (ID, n - 1)).fetchone()[0]
    verdict = seal.verify(conn, ID)
    assert not verdict.ok and verdict.problems[0].what == "chain"
    assert verdict.problems[0].detail == (f"the chain ends at link {n - 1} ({previous[:12]}…) but its head says {n} links"
                                          f" ({head[:12]}…): links were removed from the end or added")


def test_a_rewritten_link_breaks_the_chain_after_it(sealed: Path) -> None:
    conn = sqlite3.connect(sealed)
    conn.execute("UPDATE seal SET at = at + 1 WHERE debate_id = ? AND n = 5", (ID,))
    verdict = seal.verify(conn, ID)
    assert not verdict.ok and verdict.problems[0].what == "chain" and "seal link 5 does not follow link 4" in verdict.problems[0].detail


def test_a_head_noted_earlier_must_still_be_the_head(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Journal(sealed) as j:
        head = seal.summary(j.conn, ID)["head"]
        j.record(ModeratorActed(ID, "interject", {"text": "One more thing."}, 2, checkpoint=9))
    code, out = verify_cli(sealed, ID, "--head", head, capsys=capsys)
    assert code == 1 and "seal row head (written time unknown): chain — the head is " in out
    assert f"not the {head} you gave: the record is not the one whose head you noted" in out
    with Journal(sealed) as j:
        now = seal.summary(j.conn, ID)["head"]
    assert verify_cli(sealed, ID, "--head", now.upper(), capsys=capsys)[0] == 0


def test_a_write_that_fails_leaves_no_link(sealed: Path) -> None:
    """The link is written in the row's own transaction: a turn refused by the journal (a
    confidence out of range here) adds neither row nor link, and the chain holds."""
    with Journal(sealed) as j:
        before = seal.summary(j.conn, ID)
        bad = TurnFinished(ID, "agent-a", "m", "x", 1, "k", "text", "{}", None, None, (), None, None, confidence=500.0)
        with pytest.raises(Exception, match="could not record TurnFinished"):
            j.record(bad)
        assert seal.summary(j.conn, ID) == before
        assert seal.verify(j.conn, ID).ok


def test_a_journal_from_before_the_seal_is_sealed_on_migration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A v5 journal holding a debate: opening it builds the chain from its rows, marked with the
    migration's time, unsigned. Its chain holds, but nothing vouches for it (exit 3) until a head
    noted earlier is given; its next write signs it from that link on; an edit still fails."""
    path = v5_journal(tmp_path)
    with Journal(path) as j:
        verdict = seal.verify(j.conn, ID)
        assert verdict.ok and verdict.sealed_on_migration_at is not None and verdict.rows > 40
        assert verdict.signature is None
        summary = seal.summary(j.conn, ID)
        exported = json.loads(to_json(Queries(j).debate(ID, chain=True) or {}))
    assert exported["seal"]["sealed_on_migration_at"] == verdict.sealed_on_migration_at
    assert summary["sealed_on_migration_at"] == seal.iso(verdict.sealed_on_migration_at) and summary["signature"] is None
    from_export = export_check.verify_export(exported)
    assert from_export.ok and from_export.sealed_on_migration_at == verdict.sealed_on_migration_at
    code, out = verify_cli(path, capsys=capsys)
    assert code == 3, out
    assert f"NOT VERIFIABLE {ID}: it is not signed (written before Symposium signed its records" in out
    assert f"  sealed on migration at {summary['sealed_on_migration_at']}: rows recorded before then" in out
    code, out = verify_cli(path, ID, "--head", summary["head"], capsys=capsys)
    assert code == 0 and "  not signed: only the head you gave vouches for it" in out
    with Journal(path) as j:  # the debate is written again (a resume's first event): signed from that link on
        j.record(ModeratorActed(ID, "interject", {"text": "Resumed."}, 2, checkpoint=20))
        first = seal.summary(j.conn, ID)["links"]
        exported = json.loads(to_json(Queries(j).debate(ID, chain=True) or {}))
    from_export = export_check.verify_export(exported)  # the signature covers the migration's time
    assert from_export.ok and from_export.signature is not None and from_export.signature.valid
    code, out = verify_cli(path, capsys=capsys)
    assert code == 0, out
    assert (f"  signed from link {first} on: the {first - 1} links before were written before Symposium signed, "
            "and are vouched for only as they stood then") in out
    run_sql(path, "UPDATE turns SET text = 'edited' WHERE seq = 1")
    assert verify_cli(path, capsys=capsys)[0] == 1


def test_two_writers_of_one_debate_keep_one_chain(sealed: Path) -> None:
    """Each journal caches its debates' heads between writes; a head moved by another writer
    (the app and a headless run on one file, a resume) is read again, not overwritten."""
    with Journal(sealed) as one, Journal(sealed) as two:
        one.record(ModeratorActed(ID, "interject", {"text": "first"}, 2, checkpoint=10))
        two.record(ModeratorActed(ID, "interject", {"text": "second"}, 2, checkpoint=11))
        one.record(ModeratorActed(ID, "interject", {"text": "third"}, 2, checkpoint=12))  # its cached head is stale
        verdict = seal.verify(one.conn, ID)
    assert verdict.ok and verdict.signature is not None and verdict.signature.valid, verdict.problems[:1]


def _turn_with(debate_id: str, kappa: Any = 0.7, duration: Any = 6.4, first_token: Any = 0.3, tokens: Any = 120,
               confidence: Any = 80.5, probability: Any = 0.6) -> TurnFinished:
    call = CallRecord("agent-a", "qwen2.5-7b", "turn", {"seed": 1}, tokens, tokens, 256, duration, first_token, "stop")
    return TurnFinished(debate_id, "agent-a", "qwen2.5-7b", "exploratory", 1, "refutation", "Malaria \x00 🦟 é", "raw",
                        call, None, (), {"Malaria": probability, "Dengue": 0.25}, kappa, confidence=confidence)


@pytest.mark.parametrize("odd", [
    {},  # every value as the journal usually binds it
    {"kappa": 1.0, "duration": 6.0, "confidence": 80},  # whole reals, and an int in a REAL column
    {"duration": -0.0, "first_token": 0, "kappa": 0.0},  # -0.0
    {"kappa": float("nan"), "probability": 1},  # NaN is stored as NULL
    {"tokens": 12.0},  # a float token count: SQLite stores the integer 12
    {"tokens": True},  # a bool: stored as 1
    {"duration": 2**60, "kappa": float("inf")},  # an int a double cannot hold exactly; infinity
], ids=["usual", "whole-reals", "negative-zero", "nan", "float-tokens", "bool", "huge-and-inf"])
def test_a_row_is_sealed_as_sqlite_stores_it(sealed: Path, odd: dict[str, Any]) -> None:
    """Whatever Python value a write binds, the link holds the hash of the row as SQLite
    returns it (so a recipient of the stored values recomputes the same hash)."""
    with Journal(sealed) as j:
        turn_id = j.record(_turn_with(ID, **odd))
        assert seal.verify(j.conn, ID).ok, seal.verify(j.conn, ID).problems[:1]
        columns = seal.columns(j.conn)
        [rows] = j.conn.execute("SELECT rows_json FROM seal WHERE debate_id = ? ORDER BY n DESC LIMIT 1", (ID,)).fetchone()
        for table, key, sealed_hash in json.loads(rows):
            stored = j.conn.execute(f"SELECT {', '.join(columns[table])} FROM {table} WHERE id = ?", (int(key),)).fetchone()
            assert sealed_hash == seal.row_sha256(table, tuple(stored)), (table, key)
        assert [r[0] for r in json.loads(rows)] == ["turns", "distributions", "distributions", "model_calls", "call_costs"]
        assert int(json.loads(rows)[0][1]) == turn_id


def test_a_rows_hash_depends_on_its_values_alone() -> None:
    """A value shared by two columns hashes as two equal copies do, a value changed by one
    character does not, an integer is not the real of the same value, and the table is part of
    the hash; a value SQLite never returns (a bool, a list) has no hash."""
    text = "a shared kind of notice"
    copy = (text + "!")[:-1]
    assert copy == text and copy is not text
    shared = seal.row_sha256("notices", (1, ID, 1, text, text, "{}", 1.5))
    assert shared == seal.row_sha256("notices", (1, ID, 1, text, copy, "{}", 1.5))
    assert shared != seal.row_sha256("notices", (1, ID, 1, text, copy + " ", "{}", 1.5))
    assert seal.row_sha256("notices", (1, ID, 1, "k", "t", "{}", 1.0)) != seal.row_sha256("notices", (1, ID, 1, "k", "t", "{}", 1))
    assert seal.row_sha256("notices", (1, ID, 1, "k", "t", "{}", 1.5)) != seal.row_sha256("moderator_events", (1, ID, 1, "k", "t", "{}", 1.5))
    for odd in (True, [1], {"a": 1}):
        with pytest.raises(TypeError, match=f"notices: a {type(odd).__name__} value cannot be sealed"):
            seal.row_sha256("notices", (1, ID, odd))


def _by_the_documented_format(table: str, values: tuple[object, ...]) -> str:
    """:func:`store.seal.row_sha256` as docs/seal.md describes it, written again here so that a
    recipient's reimplementation has something to be checked against."""
    out = table.encode() + b"\n"
    for v in values:
        if v is None:
            out += b"n;"
        elif isinstance(v, str):
            data = v.encode("utf-8")
            out += b"s" + str(len(data)).encode() + b":" + data
        elif isinstance(v, bytes):
            out += b"b" + str(len(v)).encode() + b":" + v
        elif isinstance(v, float):
            out += b"f" + struct.pack(">d", v)
        else:
            assert isinstance(v, int)
            out += b"i" + str(v).encode() + b";"
    return hashlib.sha256(out).hexdigest()


def test_the_hash_formats_are_pinned() -> None:
    """Hashes already in journals and exports must keep verifying: a change to how a row is
    encoded (a value's tag, its length, the real's bytes), to how a link's rows are written or
    chained, or to what a signature covers fails here first, against the documented format and
    known hashes (the same as before rows were read back from SQLite)."""
    notice = (1, ID, 2, "judge_is_debater", "tëxt 🦟 \x00", None, 1.5)
    assert seal.row_sha256("notices", notice) == _by_the_documented_format("notices", notice) == (
        "394b7743a60fd51c89d9b03f670c4f7a99f4a3482310fc5f63188ccbcee0363d")
    turn = (7, "d", 1, 0, "p", "r", "m", "k", 0.5, "t" * 300, "raw", None, "[]", 2**40, -1, 0, 6.0, "stop",
            1795653625.522395, None, 80.0, None)
    assert seal.row_sha256("turns", turn) == _by_the_documented_format("turns", turn) == (
        "28c442fc867533fb19349f9aef25e4fb2eb4548c3a28b938d612f712e4e9042e")
    blob = ("x", b"\x00\xff")
    assert seal.row_sha256("replies", blob) == _by_the_documented_format("replies", blob)
    rows = seal.rows_json([("notices", "1", "ab" * 32), ("debates", 'q"ü\n', "cd" * 32)])
    assert rows == '[["notices","1","' + "ab" * 32 + '"],["debates","q\\"ü\\n","' + "cd" * 32 + '"]]'
    link = seal.link_sha256(seal.genesis(ID), 1, seal.rows_json([("notices", "1", "ab" * 32)]), 1795653625.5)
    assert link == "5cafb804bd5d3077095e3d86760fca272bf14cfd28d74ca8fcfffe6d6b111a75"
    assert seal.genesis(ID) == hashlib.sha256(f"symposium seal v1\n{ID}".encode()).hexdigest()
    assert signing.message(ID, "ab" * 32, 3, 1795653625.5) == (
        f"symposium seal signature v1\n{ID}\n{'ab' * 32}\n3\n1795653625.5".encode())
    assert signing.message(ID, "ab" * 32, 1, None).endswith(b"\n1\n-")


def test_a_sealed_turn_reads_back_its_rows_and_adds_one_statement(tmp_path: Path) -> None:
    """The seal's cost, as statements: a turn with its distribution and model call runs the
    same SQL sealed or not, plus one SELECT by key per row written (the rows as stored) and the
    link's INSERT, and one read of the head as the transaction begins (the writer builds on a
    head only while it is the one it left: store.seal.trusted); the head and its signature move
    in the UPDATE of the debate's row the turn runs anyway. The debate is not verified again
    (no read of the seal table) while its head is the one this journal wrote."""
    ran: dict[bool, list[list[str]]] = {}
    for sealing in (True, False):
        with Journal(tmp_path / f"{sealing}.db") as j:
            j.sealing = sealing
            record_sample(j, ID)
            statements: list[str] = []
            j.conn.set_trace_callback(statements.append)
            ran[sealing] = []
            for turn in range(2):
                statements.clear()
                j.record(_turn_with(ID))
                ran[sealing].append(list(statements))
    for sealed, plain in zip(ran[True], ran[False]):
        reads = [s for s in sealed if re.fullmatch(rf"SELECT [\w, ]+ FROM \w+ WHERE debate_id = '{ID}' AND id = \d+", s)]
        assert [s.split(" FROM ")[1].split()[0] for s in reads] == ["turns", "distributions", "distributions",
                                                                     "model_calls", "call_costs"]
        def short(statements: list[str]) -> list[str]:  # what ran, not the values it bound (times differ)
            return [" ".join(s.split()[:3]) for s in statements if s not in reads]

        assert [s for s in short(sealed) if not s.startswith(("INSERT INTO seal", "UPDATE debates SET", "SELECT seal_head"))] == [
            s for s in short(plain) if not s.startswith("UPDATE debates SET")]
        assert sum(s.startswith("INSERT INTO seal(debate_id,") for s in sealed) == 1
        assert any(s.startswith("UPDATE debates SET seal_head = ") and " seal_signature = '" in s for s in sealed)
        assert sum(s.startswith("UPDATE debates SET") for s in sealed) == sum(s.startswith("UPDATE debates SET") for s in plain)
    with Journal(tmp_path / "each.db") as j:  # a chain this journal began is known from its first link on
        statements = []
        j.conn.set_trace_callback(statements.append)
        events = sample_events(ID)
        j.record(events[0])  # (a new debate: the only read of the seal asks whether it has a chain yet)
        assert [s for s in statements if " FROM seal " in s] == [f"SELECT 1 FROM seal WHERE debate_id = '{ID}' LIMIT 1"]
        for event in events[1:]:
            statements.clear()
            j.record(event)
            assert [s for s in statements if " FROM seal " in s or s.startswith("SELECT seal_head, seal_links, seal_rows")] == []
    for sealed in ran[True]:
        assert [s for s in sealed if s.startswith("SELECT seal_head")] == [
            f"SELECT seal_head, seal_links FROM debates WHERE id = '{ID}'"]
        assert not [s for s in sealed if " FROM seal " in s]
