"""The seal (store/seal.py): every journal row of a debate hash-chained as it is written.

Each tamper the issue names is its own test, done with plain SQL on the real journal file (or
an edit of a real JSON export), and each must make ``symposium verify`` fail, naming the row:
a turn's text changed, a judgement deleted, two events swapped, a row inserted, a metric
altered in the export. One test changes every sealed column of every table in turn, so a
column left out of the hash is caught (the mutation benchmark's target, benchmarks/mutation.py).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from protocols.core.events import Citation, CallRecord, EvidenceAttached, ModeratorActed, Notice, TurnFinished
from protocols.core.passages import EvidenceFile, Passage
from protocols.core.replies import Reply
from store import seal
from store.journal import Journal
from store.queries import Queries
from store.schema import MIGRATIONS
from tests.helpers.sample_debate import T0, record_sample
from tui.cli.parser import main

ID = "sample0001ab"


def _record(journal: Journal, debate_id: str = ID) -> None:
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


@pytest.fixture(autouse=True)
def _types_learnt_afresh() -> None:
    """``seal.as_stored`` remembers per type pattern whether bound values are certain; each test
    starts with nothing learnt, so that none depends on what an earlier one taught it (and the
    check itself runs in every test that writes, not only in the first)."""
    seal._CERTAIN.clear()


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        _record(j)
    return path


def _verify(path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", *args, "--db", str(path)])
    return code, capsys.readouterr().out


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for s in statements:
        conn.execute(s)
    conn.commit()
    conn.close()


def test_an_untouched_journal_verifies_with_exit_0(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _verify(sealed, capsys=capsys)
    assert code == 0, out
    with Journal(sealed) as j:
        verdict = seal.verify(j.conn, ID)
        summary = seal.summary(j.conn, ID)
        links = j.conn.execute("SELECT COUNT(*) FROM seal WHERE debate_id = ?", (ID,)).fetchone()[0]
    assert verdict.ok and verdict.rows > 40 and verdict.sealed_on_migration_at is None
    assert f"ok {ID}: {verdict.rows} rows, head {verdict.head}" in out
    assert summary == {"head": verdict.head, "rows": verdict.rows, "links": links, "sealed_on_migration_at": None}


def test_a_turns_text_changed_fails_naming_the_turn(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(sealed, "UPDATE turns SET text = 'Clearly malaria.' WHERE seq = 2")
    turn_id = sqlite3.connect(sealed).execute("SELECT id FROM turns WHERE seq = 2").fetchone()[0]
    code, out = _verify(sealed, ID[:6], capsys=capsys)
    assert code == 1
    assert f"FAILED {ID}: first turns row {turn_id} (written " in out
    assert "changed — its content differs from what was sealed" in out


def test_a_deleted_judgement_fails_naming_it(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(sealed, "DELETE FROM judgements WHERE id = 3")
    code, out = _verify(sealed, capsys=capsys)
    assert code == 1
    assert "first judgements row 3 (written " in out and "deleted — the row is gone" in out


def test_two_swapped_events_fail_naming_the_first(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(sealed)
    first, second = [r[0] for r in conn.execute("SELECT id FROM moderator_events ORDER BY id")]
    conn.close()
    _sql(sealed, f"UPDATE moderator_events SET id = -1 WHERE id = {first}",
         f"UPDATE moderator_events SET id = {first} WHERE id = {second}",
         f"UPDATE moderator_events SET id = {second} WHERE id = -1")
    code, out = _verify(sealed, capsys=capsys)
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
    code, out = _verify(sealed, capsys=capsys)
    assert code == 1
    assert "first judgements row 99 (written 2026-09-21T" in out and "inserted — no seal link covers this row" in out
    assert "also judgements row 98" in out


def test_a_debate_written_around_the_journal_has_no_seal(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(sealed, f"INSERT INTO debates(id, protocol, title, subject, created_at, updated_at) VALUES ('forged', 'evince', 't', 's', {T0}, {T0})")
    code, out = _verify(sealed, "forged", capsys=capsys)
    assert code == 1 and "first debates row forged (written time unknown): inserted — the debate has no seal at all" in out


def test_a_metric_altered_in_the_export_fails_naming_it(sealed: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "debate.json"
    assert main(["export", ID, "--format", "json", "--out", str(out_file), "--db", str(sealed)]) == 0
    code, out = _verify(sealed, "--export", str(out_file), capsys=capsys)
    assert code == 0, out  # the export as written verifies, without the journal
    document = json.loads(out_file.read_text())
    assert document["seal"]["head"] and document["seal"]["sealed_on_migration_at"] is None
    document["metrics"][1]["jsd"] = 0.01
    out_file.write_text(json.dumps(document))
    metric_id = sqlite3.connect(sealed).execute("SELECT id FROM metrics WHERE round = 1 AND name = 'jsd'").fetchone()[0]
    code, out = _verify(sealed, "--export", str(out_file), capsys=capsys)
    assert code == 1
    assert f"first metrics row {metric_id} (written " in out
    assert "round 1 jsd: the export shows 0.01, the seal holds 0.25" in out


def test_an_edit_of_a_row_inside_the_exports_chain_fails(sealed: Path, tmp_path: Path) -> None:
    """Both copies of a turn's text edited alike: the chain's row no longer has its hash."""
    with Journal(sealed) as j:
        document = Queries(j).debate(ID, chain=True)
    assert document is not None
    document = json.loads(json.dumps(document))
    sealed_turn = next(r for link in document["seal"]["chain"] for r in link["rows"] if r["table"] == "turns" and "row" in r)
    sealed_turn["row"]["text"] = "edited"
    next(t for t in document["turns"] if str(t["id"]) == sealed_turn["key"])["text"] = "edited"
    verdict = seal.verify_export(document)
    assert not verdict.ok and verdict.problems[0].table == "turns" and verdict.problems[0].what == "changed"


def test_an_edit_of_the_exports_readable_text_or_head_fails(sealed: Path) -> None:
    with Journal(sealed) as j:
        document = Queries(j).debate(ID, chain=True)
    assert document is not None
    document = json.loads(json.dumps(document))
    assert seal.verify_export(document).ok
    edited = json.loads(json.dumps(document))
    edited["turns"][0]["text"] = "Clearly malaria."
    [problem] = seal.verify_export(edited).problems
    assert (problem.table, problem.key, problem.what) == ("turns", str(edited["turns"][0]["id"]), "changed")
    assert problem.detail == "the export's 'text' differs from the sealed row"
    edited = json.loads(json.dumps(document))  # a metric (sealed late) and a turn (early): the turn is named first
    edited["metrics"][1]["jsd"] = 0.01
    edited["turns"][1]["raw"] = "edited"
    del edited["seal"]["rows_included"]  # rows are carried unless the export says they are not
    problems = seal.verify_export(edited).problems
    assert [(p.table, p.what) for p in problems] == [("turns", "changed"), ("metrics", "changed")]
    edited = json.loads(json.dumps(document))
    edited["seal"]["head"] = "0" * 64
    [problem] = seal.verify_export(edited).problems
    assert problem.what == "chain" and "but its head says" in problem.detail


def _different(value: Any) -> Any:
    if value is None:
        return 7
    if isinstance(value, str):
        return value + "x"
    return value + 1000 if isinstance(value, int) else value / 2 + 0.125


#: What the seal leaves out, on purpose (store/seal.py says why): nothing else may be.
UNSEALED_COLUMNS = {("debates", "updated_at"), ("debates", "events_recorded"), ("debates", "seal_head"),
                    ("debates", "seal_links"), ("debates", "seal_rows"), ("debates", "sealed_on_migration_at")}
UNSEALED_TABLES = {"migrations", "seal", "turns_fts"}


def test_every_table_of_a_debate_is_sealed(sealed: Path) -> None:
    conn = sqlite3.connect(sealed)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if not r[0].startswith(("sqlite_", "turns_fts"))}
    assert tables - UNSEALED_TABLES == set(seal.SEALED)


def test_every_column_of_every_sealed_table_is_in_its_hash(sealed: Path) -> None:
    """Each column of each sealed table (all but UNSEALED_COLUMNS), changed alone in one row,
    must fail verification: a column left out of the hash would let that edit through."""
    conn = sqlite3.connect(sealed, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = OFF")  # a changed debate_id must stay changed, not be refused
    for table, (key, _) in seal.SEALED.items():
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
    assert _verify(sealed, ID, "--head", head[:16], capsys=capsys)[0] == 1  # appended since: the head moved
    with Journal(sealed) as j:
        now = seal.summary(j.conn, ID)["head"]
    assert _verify(sealed, ID, "--head", now[:16], capsys=capsys)[0] == 0


def test_a_write_that_fails_leaves_no_link(sealed: Path) -> None:
    """The link is written in the row's own transaction: a turn refused by the journal (a second
    debate row with the same id here) adds neither row nor link, and the chain holds."""
    with Journal(sealed) as j:
        before = seal.summary(j.conn, ID)
        bad = TurnFinished(ID, "agent-a", "m", "x", 1, "k", "text", "{}", None, None, (), None, None, confidence=500.0)
        with pytest.raises(Exception, match="could not record TurnFinished"):
            j.record(bad)
        assert seal.summary(j.conn, ID) == before
        assert seal.verify(j.conn, ID).ok


def test_a_journal_from_before_the_seal_is_sealed_on_migration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A v5 journal holding a debate: opening it builds the chain from its rows, marked with the
    migration's time; verify passes, then fails on an edit like any other."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL);")
    for m in MIGRATIONS[:5]:
        conn.executescript(m.sql)
        conn.execute("INSERT INTO migrations VALUES (?, ?, 0)", (m.version, m.name))
    conn.commit()
    conn.close()
    # Write the debate as v5 did: the same rows, no seal (the tables are created, then emptied).
    with Journal(tmp_path / "new.db") as j:
        _record(j)
    source = sqlite3.connect(tmp_path / "new.db")
    old = sqlite3.connect(path)
    for table in seal.SEALED:
        columns = [d[1] for d in old.execute(f"PRAGMA table_info({table})")]  # v5's columns: no seal head
        if table == "provenance" or not columns:  # provenance and the evidence's tables came after v5
            continue
        rows = source.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
        old.executemany(f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)
    old.commit()
    old.close()
    with Journal(path) as j:
        verdict = seal.verify(j.conn, ID)
        assert verdict.ok and verdict.sealed_on_migration_at is not None and verdict.rows > 40
        summary = seal.summary(j.conn, ID)
        exported = Queries(j).debate(ID, chain=True)
    assert exported is not None and exported["seal"]["sealed_on_migration_at"] == summary["sealed_on_migration_at"]
    from_export = seal.verify_export(json.loads(json.dumps(exported)))
    assert from_export.ok and from_export.sealed_on_migration_at == pytest.approx(verdict.sealed_on_migration_at, abs=1)
    code, out = _verify(path, capsys=capsys)
    assert code == 0 and f"sealed on migration at {summary['sealed_on_migration_at']}" in out
    _sql(path, "UPDATE turns SET text = 'edited' WHERE seq = 1")
    assert _verify(path, capsys=capsys)[0] == 1


def test_a_redacted_export_carries_hashes_not_the_text(sealed: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "redacted.json"
    assert main(["export", ID, "--format", "json", "--redact", "--out", str(out_file), "--db", str(sealed)]) == 0
    document = json.loads(out_file.read_text())
    assert not any("row" in r for link in document["seal"]["chain"] for r in link["rows"])
    assert seal.verify_export(document).ok  # the chain and head still check
    document["seal"]["chain"][3]["rows"][0]["row_sha256"] = "0" * 64
    assert not seal.verify_export(document).ok


def test_two_writers_of_one_debate_keep_one_chain(sealed: Path) -> None:
    """Each journal caches its debates' heads between writes; a head moved by another writer
    (the app and a headless run on one file, a resume) is read again, not overwritten."""
    with Journal(sealed) as one, Journal(sealed) as two:
        one.record(ModeratorActed(ID, "interject", {"text": "first"}, 2, checkpoint=10))
        two.record(ModeratorActed(ID, "interject", {"text": "second"}, 2, checkpoint=11))
        one.record(ModeratorActed(ID, "interject", {"text": "third"}, 2, checkpoint=12))  # its cached head is stale
        verdict = seal.verify(one.conn, ID)
    assert verdict.ok, verdict.problems[:1]


def test_the_seals_column_types_are_the_schemas(sealed: Path) -> None:
    """store.seal knows each sealed column's declared type without a journal (an export is
    checked without one): REAL_COLUMNS and INTEGER_COLUMNS must say what the schema says."""
    conn = sqlite3.connect(sealed)
    for table, (_, columns) in seal.SEALED.items():
        declared = {r[1]: r[2] for r in conn.execute(f"PRAGMA table_info({table})")}
        for column in columns:
            expected = ("REAL" if column in seal.REAL_COLUMNS.get(table, ()) else
                        "INTEGER" if column in seal.INTEGER_COLUMNS.get(table, ()) else "TEXT")
            assert declared[column] == expected, f"{table}.{column} is declared {declared[column]}, the seal says {expected}"


def _turn_with(debate_id: str, kappa: Any = 0.7, duration: Any = 6.4, first_token: Any = 0.3, tokens: Any = 120,
               confidence: Any = 80.5, probability: Any = 0.6) -> TurnFinished:
    call = CallRecord("agent-a", "qwen2.5-7b", "turn", {"seed": 1}, tokens, tokens, 256, duration, first_token, "stop")
    return TurnFinished(debate_id, "agent-a", "qwen2.5-7b", "exploratory", 1, "refutation", "Malaria \x00 🦟 é", "raw",
                        call, None, (), {"Malaria": probability, "Dengue": 0.25}, kappa, confidence=confidence)


@pytest.mark.parametrize("odd", [
    {},  # every value as the journal usually binds it: hashed as bound
    {"kappa": 1.0, "duration": 6.0, "confidence": 80},  # whole reals, and an int in a REAL column
    {"duration": -0.0, "first_token": 0, "kappa": 0.0},  # -0.0 reads back as 0.0
    {"kappa": float("nan"), "probability": 1},  # NaN is stored as NULL
    {"tokens": 12.0},  # a float token count: SQLite stores the integer 12
    {"tokens": True},  # a bool: stored as 1
    {"duration": 2**60, "kappa": float("inf")},  # an int a double cannot hold exactly; infinity
], ids=["usual", "whole-reals", "negative-zero", "nan", "float-tokens", "bool", "huge-and-inf"])
def test_a_row_sealed_as_bound_hashes_as_read_back(sealed: Path, odd: dict[str, Any]) -> None:
    """A turn, its distribution and its model call are hashed from the values bound to their
    INSERTs (seal.as_stored), not read back: for each kind of value SQLite might store other
    than as bound, the link's hash must still be the hash of the row as read back."""
    with Journal(sealed) as j:
        turn_id = j.record(_turn_with(ID, **odd))
        assert seal.verify(j.conn, ID).ok, seal.verify(j.conn, ID).problems[:1]
        [rows] = j.conn.execute("SELECT rows_json FROM seal WHERE debate_id = ? ORDER BY n DESC LIMIT 1", (ID,)).fetchone()
        for table, key, sealed_hash in json.loads(rows):
            _, columns = seal.SEALED[table]
            stored = j.conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE id = ?", (int(key),)).fetchone()
            assert sealed_hash == seal.row_sha256(table, tuple(stored)), (table, key)
        assert [r[0] for r in json.loads(rows)][:1] == ["turns"] and int(json.loads(rows)[0][1]) == turn_id


def test_as_stored_is_used_only_where_it_is_certain() -> None:
    """The usual turn is hashed from its bound values; a value SQLite converts is not (the row
    is read back): so the fast path is the common one, and never a guess."""
    bound = (7, 2, ID, 1, "agent-a", 1, "Malaria", 0.6)  # id, turn_id, debate_id, round, role, rank, label, p
    assert seal.as_stored("distributions", bound) == bound
    assert seal.as_stored("distributions", (*bound[:7], 1)) == (*bound[:7], 1.0)
    assert seal.as_stored("distributions", (*bound[:7], -0.0)) == (*bound[:7], 0.0)
    assert repr(seal.as_stored("distributions", (*bound[:7], -0.0))[-1]) == "0.0"  # type: ignore[index]
    for odd in ((*bound[:7], float("nan")), (*bound[:7], 2**60), (*bound[:7], "0.6"), (*bound[:5], 1.0, *bound[6:]),
                (*bound[:5], True, *bound[6:]), (*bound[:6], 3, bound[7])):
        assert seal.as_stored("distributions", odd) is None, odd
    with pytest.raises(ValueError, match="7 values bound for 8 sealed columns"):
        seal.as_stored("distributions", bound[:7])


def test_a_rows_hash_depends_on_its_values_alone() -> None:
    """A value shared by two columns hashes as two equal copies do (a row as bound against the
    same row read back), a value changed by one character does not, a REAL column's integer
    is its real, and the table is part of the hash."""
    text = "a shared kind of notice"
    copy = (text + "!")[:-1]
    assert copy == text and copy is not text
    shared = seal.row_sha256("notices", (1, ID, 1, text, text, "{}", 1.5))
    assert shared == seal.row_sha256("notices", (1, ID, 1, text, copy, "{}", 1.5))
    assert shared != seal.row_sha256("notices", (1, ID, 1, text, copy + " ", "{}", 1.5))
    assert seal.row_sha256("notices", (1, ID, 1, "k", "t", "{}", 1.0)) == seal.row_sha256("notices", (1, ID, 1, "k", "t", "{}", 1))
    assert seal.row_sha256("notices", (1, ID, 1, "k", "t", "{}", 1.5)) != seal.row_sha256("moderator_events", (1, ID, 1, "k", "t", "{}", 1.5))


def test_a_links_rows_are_stored_as_the_json_encoder_writes_them() -> None:
    """``rows_json`` is built by hand for speed; the export's recipient rebuilds it from the
    JSON it holds, so the two must agree byte for byte, whatever a key holds."""
    for key in ("12", ID, 'quote " and \\ backslash', "tab\tnewline\n\x00\x1f", "ünïcödé 🦟", "\u2028\u2029"):
        entries = [("debates", key, "ab" * 32), ("turns", "3", "cd" * 32)]
        expected = json.dumps([list(e) for e in entries], ensure_ascii=False, separators=(",", ":"))
        assert seal.rows_json(entries) == expected
        assert [tuple(e) for e in json.loads(seal.rows_json(entries))] == entries


def _by_the_documented_format(table: str, values: tuple[object, ...]) -> str:
    """:func:`store.seal.row_sha256` as its docstring and docs/benchmarks.md describe it, written
    again here so that a recipient's reimplementation has something to be checked against."""
    out = table.encode() + b"\n"
    for v in values:
        if v is None:
            out += b"n;"
        elif isinstance(v, str):
            data = v.encode("utf-8")
            out += b"s" + str(len(data)).encode() + b":" + data
        elif isinstance(v, float):
            out += b"f" + struct.pack(">d", v)
        else:
            assert isinstance(v, int)
            out += b"i" + str(v).encode() + b";"
    return hashlib.sha256(out).hexdigest()


def test_the_hash_formats_are_pinned() -> None:
    """Hashes already in journals and exports must keep verifying: a change to how a row is
    encoded (a value's tag, its length, the real's bytes, the REAL rule) or to how a link is
    chained fails here first, against the documented format and known hashes."""
    notice = (1, ID, 2, "judge_is_debater", "tëxt 🦟 \x00", None, 1.5)
    assert seal.row_sha256("notices", notice) == _by_the_documented_format("notices", notice) == (
        "394b7743a60fd51c89d9b03f670c4f7a99f4a3482310fc5f63188ccbcee0363d")
    turn = (7, "d", 1, 0, "p", "r", "m", "k", 0.5, "t" * 300, "raw", None, "[]", 2**40, -1, 0, 6.0, "stop",
            1795653625.522395, None, 80, None)
    as_stored = (*turn[:20], 80.0, None)  # REAL 80 is 80.0
    assert seal.row_sha256("turns", turn) == seal.row_sha256("turns", as_stored) == _by_the_documented_format(
        "turns", as_stored) == "28c442fc867533fb19349f9aef25e4fb2eb4548c3a28b938d612f712e4e9042e"
    link = seal.link_sha256(seal.genesis(ID), 1, seal.rows_json([("notices", "1", "ab" * 32)]), 1795653625.5)
    assert link == "5cafb804bd5d3077095e3d86760fca272bf14cfd28d74ca8fcfffe6d6b111a75"


def test_a_sealed_turn_costs_one_statement_more_than_an_unsealed_one(tmp_path: Path) -> None:
    """The seal's cost, as statements: a turn with its distribution and model call runs the
    same SQL sealed or not, plus the link's INSERT; its rows are not read back (nor RETURNed),
    and the head moves in the debate row's UPDATE the turn runs anyway, after the first turn
    (whose head is read once, then cached)."""
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
                ran[sealing].append([" ".join(s.split()[:3]) for s in statements])
    for sealed, plain in zip(ran[True], ran[False]):
        assert [s for s in sealed if not s.startswith(("INSERT INTO seal", "UPDATE debates SET"))] == [
            s for s in plain if not s.startswith("UPDATE debates SET")]
        assert sealed.count("INSERT INTO seal(debate_id,") == 1
        assert sealed.count("UPDATE debates SET") == plain.count("UPDATE debates SET")
        assert not any(s.startswith("SELECT seal_head") or "RETURNING" in s for s in sealed[1:])
    assert not any(s.startswith("SELECT") and "FROM debates" in s for s in ran[True][1])


def test_an_export_without_a_seal_or_with_an_edited_distribution_is_named(sealed: Path) -> None:
    with pytest.raises(seal.ExportError) as missing:
        seal.verify_export({"id": ID, "turns": []})
    assert str(missing.value) == ('it has no "seal" object with a chain '
                                  "(export it again with `symposium export ID --format json`)")
    with pytest.raises(seal.ExportError, match=r"^a seal link is malformed \(KeyError\('chain_sha256'\)\)$"):
        seal.verify_export({"id": ID, "seal": {"chain": [{"n": 1, "rows": [], "at": 1.0}]}})
    with Journal(sealed) as j:
        document = Queries(j).debate(ID, chain=True)
    assert document is not None
    document = json.loads(json.dumps(document))
    turn = next(t for t in document["turns"] if t.get("distribution"))
    first = next(iter(turn["distribution"]))
    turn["distribution"][first] += 0.125
    [problem] = seal.verify_export(document).problems
    assert (problem.table, problem.key, problem.what) == ("distributions", f"turn {turn['id']}", "changed")


def _export(sealed: Path) -> dict[str, Any]:
    with Journal(sealed) as j:
        document = Queries(j).debate(ID, chain=True)
    assert document is not None
    return json.loads(json.dumps(document))


def _sealed_keys(document: dict[str, Any], table: str) -> list[str]:
    keys = {r["key"] for link in document["seal"]["chain"] for r in link["rows"] if r["table"] == table}
    return sorted(keys, key=lambda k: int(k) if k.lstrip("-").isdigit() else 0)


def _last_link(document: dict[str, Any], table: str, key: str) -> tuple[int, float]:
    """(n, at) of the newest link that seals the row: the one a problem with it must name."""
    link = [x for x in document["seal"]["chain"] if any((r["table"], r["key"]) == (table, key) for r in x["rows"])][-1]
    return link["n"], link["at"]


@pytest.mark.parametrize(("section", "index", "field", "value"), [
    ("participants", 1, "model_id", "llama31-70b-instruct"),
    ("turns", 2, "text", "A sentence nobody wrote."),
    ("judgements", 3, "score", 1.0),
    ("moderator_events", 1, "payload", {"kappa": 0.1}),
    ("notices", 0, "text", "Nothing to see."),
    ("phases", 1, "kappa", 0.11),
    (None, 0, "title", "Another title"),
])
def test_an_edited_export_names_the_row_its_field_and_the_link_that_sealed_it(
        sealed: Path, section: str | None, index: int, field: str, value: object) -> None:
    """What ``verify --export`` says of an edit is what a person acts on: the table, the row,
    the field, and when the row was sealed (its link's number and time), exactly."""
    document = _export(sealed)
    table = section or "debates"
    key = ID if section is None else _sealed_keys(document, table)[index]
    (document if section is None else document[section][index])[field] = value
    [problem] = seal.verify_export(document).problems
    n, at = _last_link(document, table, key)
    assert problem == seal.Problem(ID, table, key, "changed", f"the export's {field!r} differs from the sealed row", at, n)


@pytest.mark.parametrize("kept", [3, 0])
def test_an_export_with_turns_removed_says_how_many_it_shows_and_the_seal_holds(sealed: Path, kept: int) -> None:
    document = _export(sealed)
    held = len(document["turns"])
    document["turns"] = document["turns"][:kept]
    problems = seal.verify_export(document).problems
    assert problems[0] == seal.Problem(ID, "turns", "-", "changed" if kept else "deleted",
                                       f"the export shows {kept} turns, the seal holds {held}", None, 0)


def test_a_changed_link_is_named_by_its_first_row_its_number_and_its_time(sealed: Path) -> None:
    document = _export(sealed)
    link = document["seal"]["chain"][2]
    link["chain_sha256"] = "0" * 64
    [problem] = seal.verify_export(document).problems
    first = link["rows"][0]
    assert problem == seal.Problem(ID, first["table"], first["key"], "chain",
                                   "seal link 3 does not follow link 2: a link was changed, removed, inserted or "
                                   "reordered", link["at"], 3)


def test_a_chain_cut_short_of_its_head_names_the_last_link_left(sealed: Path) -> None:
    """The newest link removed from an export: the chain still holds from its genesis, so only
    the head can tell, and the problem names the last link left, its last row and its time."""
    with Journal(sealed) as j:
        head, links = j.conn.execute("SELECT seal_head, seal_links FROM debates WHERE id = ?", (ID,)).fetchone()
    document = _export(sealed)
    chain = document["seal"]["chain"]
    last = chain[-2]
    verdict = seal.verify_export({**document, "seal": {**document["seal"], "chain": chain[:-1]}})
    [problem] = [p for p in verdict.problems if p.what == "chain"]
    tip = last["chain_sha256"]
    where = last["rows"][-1]
    assert problem == seal.Problem(ID, where["table"], where["key"], "chain",
                                   f"the chain ends at link {len(chain) - 1} ({tip[:12]}…) but its head says "
                                   f"{links} links ({head[:12]}…): links were removed from the end or added",
                                   last["at"], len(chain))
