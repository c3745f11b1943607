"""The seal (store/seal.py) against edits made around Symposium, and what each finding says.

More of an editor's moves on the journal and on an export than tests/store/test_seal.py's: bytes
that are not UTF-8 where text was, a key no journal writes, a later table dropped to hide an
edit of another, a link emptied or every link deleted, the head erased. Each must be named as
tampering: never a crash, never "ok". A writer refuses to chain onto an edited head. Each
finding names its debate, its row, what happened, when the row was sealed (or says it was
written) and its place along the chain, so the first one printed is the first along it.
No model is loaded.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from protocols.core.events import ModeratorActed
from store import export_check, seal, signing
from store.journal import Journal, JournalError
from tests.helpers.sample_debate import T0, record_sample
from tests.helpers.sealed_journal import ID, export_of, run_sql, verify_cli

CHANGED = "its content differs from what was sealed"


def _sealed_by(conn: sqlite3.Connection, table: str, key: str) -> tuple[float, int]:
    """The time and number of the latest link that seals a row."""
    found = [(at, n) for n, rows, at in conn.execute("SELECT n, rows_json, at FROM seal WHERE debate_id = ? ORDER BY n", (ID,))
             if f'["{table}","{key}",' in rows]
    assert found, (table, key)
    return found[-1]


def _copy_row(conn: sqlite3.Connection, table: str, key: object, new_key: object, **changes: object) -> None:
    """Insert a copy of one of the debate's rows under another key, as an editor would forge one."""
    names = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    values = dict(zip(names, conn.execute(f"SELECT * FROM {table} WHERE {seal.KEYS[table]} = ?", (key,)).fetchone()))
    values.update({seal.KEYS[table]: new_key, **changes})
    conn.execute(f"INSERT INTO {table}({', '.join(values)}) VALUES ({', '.join('?' * len(values))})", tuple(values.values()))


# -- what an editor may leave in the journal or an export --------------------------------------------

def test_text_that_is_not_utf8_is_a_changed_row_not_a_crash(sealed: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """Any SQLite tool can store bytes that are not UTF-8 in a text column; Symposium never does."""
    run_sql(sealed, "UPDATE turns SET text = CAST(X'80ff' AS TEXT) WHERE seq = 2")
    turn_id = sqlite3.connect(sealed).execute("SELECT id FROM turns WHERE seq = 2").fetchone()[0]
    code, out = verify_cli(sealed, capsys=capsys)
    assert code == 1, out
    assert f"FAILED {ID}: first turns row {turn_id} (written " in out and f"changed — {CHANGED}" in out


def test_an_export_holding_a_lone_surrogate_is_a_changed_row_not_a_crash(sealed: Path) -> None:  # noqa: F811
    """JSON can spell text no UTF-8 holds ("\\ud800"); no journal writes it."""
    document = export_of(sealed)
    entry = next(e for link in document["seal"]["chain"] for e in link["rows"] if e["table"] == "turns" and "row" in e)
    entry["row"]["text"] = "\ud800"
    verdict = export_check.verify_export(document)
    assert verdict.status == "tampered"
    assert ("turns", entry["key"], "changed", CHANGED) in [(p.table, p.key, p.what, p.detail) for p in verdict.problems]


def test_an_export_with_a_key_no_journal_writes_is_tampered_not_a_crash(sealed: Path) -> None:  # noqa: F811
    """Two turns edited, one re-keyed with text where the journal's ids are integers."""
    document = export_of(sealed)
    first, second = [e for link in document["seal"]["chain"] for e in link["rows"] if e["table"] == "turns" and "row" in e][:2]
    first["key"], first["row"]["text"], second["row"]["text"] = "abc", "x", "y"
    verdict = export_check.verify_export(document)
    assert verdict.status == "tampered"
    assert {("turns", "abc", "changed"), ("turns", second["key"], "changed")} <= {(p.table, p.key, p.what) for p in verdict.problems}


def test_a_swap_is_named_past_a_key_no_journal_writes(sealed: Path) -> None:  # noqa: F811
    """Two turns' contents exchanged, after a turn re-keyed with text: the swap is still found."""
    document = export_of(sealed)
    odd, one, two = [e for link in document["seal"]["chain"] for e in link["rows"] if e["table"] == "turns" and "row" in e][:3]
    odd["key"], odd["row"]["text"] = "abc", "edited"
    one["row"], two["row"] = {**two["row"], "id": one["row"]["id"]}, {**one["row"], "id": two["row"]["id"]}
    found = {(p.table, p.key, p.what) for p in export_check.verify_export(document).problems}
    assert {("turns", one["key"], "reordered"), ("turns", two["key"], "reordered")} <= found, found


def test_a_later_table_dropped_does_not_hide_an_edit_of_another(tmp_path: Path) -> None:
    """A debate with no evidence: dropping the (empty) evidence table, as a journal from before
    it looks, must not stop the tables after it (the calls' costs) being checked as they are."""
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        record_sample(j, ID)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    assert conn.execute("SELECT COUNT(*) FROM evidence WHERE debate_id = ?", (ID,)).fetchone()[0] == 0
    cost = conn.execute("SELECT id FROM call_costs WHERE debate_id = ? ORDER BY id", (ID,)).fetchone()[0]
    conn.execute("DROP TABLE evidence")
    conn.execute("UPDATE call_costs SET decode_s = 99.5 WHERE id = ?", (cost,))
    assert [(p.table, p.key, p.what) for p in seal.verify(conn, ID).problems] == [("call_costs", str(cost), "changed")]


def test_a_file_that_is_not_a_journal_is_named_as_such(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE notes (id INTEGER)")
    with pytest.raises(sqlite3.DatabaseError, match=re.escape("the journal has no table 'debates': it is not a Symposium journal")):
        seal.columns(conn)


def test_a_link_emptied_of_its_rows_is_a_broken_chain_not_a_crash(sealed: Path) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed)
    at = conn.execute("SELECT at FROM seal WHERE debate_id = ? AND n = 5", (ID,)).fetchone()[0]
    conn.execute("UPDATE seal SET rows_json = '[]' WHERE debate_id = ? AND n = 5", (ID,))
    assert seal.verify(conn, ID).problems[0] == seal.Problem(
        ID, "seal", "-", "chain", "seal link 5 does not follow link 4: a link was changed, removed, inserted or reordered", at, 5)


def test_every_link_deleted_fails_against_the_head(sealed: Path) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed)
    head, links = conn.execute("SELECT seal_head, seal_links FROM debates WHERE id = ?", (ID,)).fetchone()
    conn.execute("DELETE FROM seal WHERE debate_id = ?", (ID,))
    verdict = seal.verify(conn, ID)
    assert verdict.problems[0] == seal.Problem(
        ID, "seal", "-", "chain", f"the chain ends at link 0 ({seal.genesis(ID)[:12]}…) but its head says {links} links "
        f"({head[:12]}…): links were removed from the end or added", None, 1)
    assert {p.what for p in verdict.problems[1:]} == {"inserted"}


@pytest.mark.parametrize("erased", ["seal_head", "seal_head, seal_links, seal_rows"])
def test_a_debate_with_no_head_reads_as_unsealed(sealed: Path, erased: str) -> None:  # noqa: F811
    """A debate inserted around the journal, or one whose head was erased: ``verify`` says it has
    no seal (tampered), and the summary ``show`` and the exports print shows none."""
    conn = sqlite3.connect(sealed)
    conn.execute(f"INSERT INTO debates(id, protocol, title, subject, created_at, updated_at) VALUES ('forged', 'evince', 't', 's', {T0}, {T0})")
    conn.execute(f"UPDATE debates SET ({erased}) = ({', '.join(['NULL'] * (erased.count(',') + 1))}) WHERE id = ?", (ID,))
    for debate_id in ("forged", ID):
        problem = seal.Problem(debate_id, "debates", debate_id, "inserted", "the debate has no seal at all", None, 0)
        assert seal.verify(conn, debate_id) == seal.Verdict(debate_id, 0, None, None, (problem,))
        assert seal.summary(conn, debate_id) == {"head": None, "rows": 0, "links": 0, "sealed_on_migration_at": None,
                                                 "key": None, "fingerprint": None, "signature": None, "signed_from": None}


@pytest.mark.parametrize(("column", "value", "fingerprint"), [
    ("seal_signature", None, "own"),  # the key is still there: its fingerprint is shown
    ("seal_key", None, None),
    ("seal_key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==", None),  # a key that does not parse
])
def test_the_summary_shows_the_fingerprint_of_the_key_stored_if_it_parses(sealed: Path, column: str, value: object,  # noqa: F811
                                                                          fingerprint: str | None) -> None:
    own = signing.own_public_key()
    assert own is not None
    conn = sqlite3.connect(sealed)
    conn.execute(f"UPDATE debates SET {column} = ? WHERE id = ?", (value, ID))
    assert seal.summary(conn, ID)["fingerprint"] == (signing.fingerprint(own) if fingerprint == "own" else None)


def test_an_export_of_a_debate_not_in_the_journal_carries_no_head_and_no_chain(sealed: Path) -> None:  # noqa: F811
    """A debate deleted while it was being exported: a seal that vouches for nothing, not a crash."""
    found = seal.export(sqlite3.connect(sealed), "deleted00001")
    assert {k: found[k] for k in ("head", "links", "rows", "sealed_on_migration_at", "key", "signature", "signed_from",
                                  "chain")} == {"head": None, "links": None, "rows": None, "sealed_on_migration_at": None,
                                                "key": None, "signature": None, "signed_from": None, "chain": []}


# -- writing ------------------------------------------------------------------------------------------

def _notice(conn: sqlite3.Connection, debate_id: str, key: int) -> None:
    conn.execute("INSERT INTO notices(id, debate_id, round, kind, text, details_json, created_at) VALUES (?, ?, 1, 'k', 't', '{}', ?)",
                 (key, debate_id, T0))


def test_every_row_written_is_sealed_even_after_one_that_is_gone(sealed: Path) -> None:  # noqa: F811
    """A write that touched a row not there (an UPDATE of nothing) and then wrote one: its link
    seals the one written, signed, and the journal verifies."""
    conn = sqlite3.connect(sealed, isolation_level=None)
    conn.execute("BEGIN")
    _notice(conn, ID, 500)
    assert seal.append(conn, ID, [("notices", 999), ("notices", 500)], seal.columns(conn), signer=signing.user_signer())
    conn.execute("COMMIT")
    assert seal.verify(conn, ID).ok


def test_a_write_that_touched_no_row_appends_no_link(sealed: Path) -> None:  # noqa: F811
    """Nothing to seal: no link, the head unmoved, and the writer is told so (it then moves the
    debate's ``updated_at`` by an UPDATE of its own)."""
    conn = sqlite3.connect(sealed, isolation_level=None)
    before = seal.summary(conn, ID)
    assert seal.append(conn, ID, [("notices", 999)], seal.columns(conn), signer=signing.user_signer()) is False
    assert seal.summary(conn, ID) == before and seal.verify(conn, ID).ok


def test_each_write_moves_the_debates_updated_at(sealed: Path) -> None:  # noqa: F811
    """``history`` orders debates by it: moved in the UPDATE that moves the head, on a debate's
    first write by this journal (head read) and on the next (head cached)."""
    seen = []
    with Journal(sealed) as j:
        seen.append(j.conn.execute("SELECT updated_at FROM debates WHERE id = ?", (ID,)).fetchone()[0])
        for checkpoint in (20, 21):
            j.record(ModeratorActed(ID, "interject", {"text": "more"}, 2, checkpoint=checkpoint))
            seen.append(j.conn.execute("SELECT updated_at FROM debates WHERE id = ?", (ID,)).fetchone()[0])
        assert seal.verify(j.conn, ID).ok
    assert seen == sorted(set(seen)), seen


def test_a_link_and_a_migrations_chain_are_dated_by_the_time_given(sealed: Path) -> None:  # noqa: F811
    """Rows sealed on migration are dated by the migration (so a change to one says when it was
    sealed), not by when the chain happened to be built."""
    conn = sqlite3.connect(sealed, isolation_level=None)
    conn.execute("DELETE FROM seal WHERE debate_id = ?", (ID,))
    conn.execute("UPDATE debates SET (seal_head, seal_links, seal_rows, seal_signature, seal_key, seal_signed_from) = "
                 "(NULL, NULL, NULL, NULL, NULL, NULL) WHERE id = ?", (ID,))
    assert seal.seal_existing(conn, T0 + 5) == 1
    assert {r[0] for r in conn.execute("SELECT at FROM seal WHERE debate_id = ?", (ID,))} == {T0 + 5}
    verdict = seal.verify(conn, ID)
    assert verdict.ok and verdict.sealed_on_migration_at == T0 + 5
    conn.execute("UPDATE notices SET text = 'edited' WHERE debate_id = ?", (ID,))
    [problem] = seal.verify(conn, ID).problems
    assert (problem.table, problem.what, problem.at) == ("notices", "changed", T0 + 5)


def test_rows_of_a_debate_the_journal_does_not_hold_are_refused_naming_it(sealed: Path) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed, isolation_level=None)
    _notice(conn, "ghost", 600)
    with pytest.raises(sqlite3.IntegrityError, match=re.escape(
            "debate ghost: rows written for a debate the journal does not hold; cannot seal them")):
        seal.append(conn, "ghost", [("notices", 600)], seal.columns(conn))


@pytest.mark.parametrize("edit", [
    "seal_head = NULL",  # erased, the links left
    "seal_head = NULL, seal_links = NULL, seal_rows = NULL",  # the debate made to look never sealed
    "seal_links = NULL",
    "seal_rows = NULL",
])
def test_a_write_onto_an_edited_head_is_refused_saying_so(sealed: Path, edit: str) -> None:  # noqa: F811
    """A resumed debate whose head was edited: chaining on would bury the edit under new links
    (or fail on the seal's own constraints): the write is refused, naming the debate and what
    verify finds, and nothing is written. (The writer verifies a debate before its first write
    to it, store.seal.trusted; seal.append's own refusal of such a head is tested below.)"""
    run_sql(sealed, f"UPDATE debates SET {edit} WHERE id = '{ID}'")
    before = sqlite3.connect(sealed).execute("SELECT seal_head, seal_links, seal_rows, (SELECT COUNT(*) FROM seal), "
                                             "(SELECT COUNT(*) FROM moderator_events) FROM debates WHERE id = ?",
                                             (ID,)).fetchone()
    with Journal(sealed) as j, pytest.raises(JournalError, match=(
            rf"debate {ID}: its (journal|seal's head) was edited outside Symposium \(.*\); nothing more (is written to "
            rf"it|can be sealed onto it): `symposium verify {ID}` says what changed\)\.$")):
        j.record(ModeratorActed(ID, "interject", {"text": "resumed"}, 2, checkpoint=30))
    assert sqlite3.connect(sealed).execute("SELECT seal_head, seal_links, seal_rows, (SELECT COUNT(*) FROM seal), "
                                           "(SELECT COUNT(*) FROM moderator_events) FROM debates WHERE id = ?",
                                           (ID,)).fetchone() == before


@pytest.mark.parametrize("edit", ["seal_head = NULL", "seal_links = NULL", "seal_rows = 'x'"])
def test_an_append_onto_an_edited_head_is_refused_saying_so(sealed: Path, edit: str) -> None:  # noqa: F811
    """seal.append called without a verified chain (as the migration calls it) still refuses a
    head edited outside Symposium rather than chaining onto it."""
    run_sql(sealed, f"UPDATE debates SET {edit} WHERE id = '{ID}'")
    conn = sqlite3.connect(sealed)
    head, links, rows = conn.execute("SELECT seal_head, seal_links, seal_rows FROM debates WHERE id = ?", (ID,)).fetchone()
    with pytest.raises(sqlite3.IntegrityError) as refused:
        seal.append(conn, ID, [("debates", ID)], seal.columns(conn))
    assert str(refused.value) == (f"debate {ID}: its seal's head was edited outside Symposium (head {str(head)[:12]!r}, "
                                  f"{links!r} links, {rows!r} rows); nothing more can be sealed onto it: "
                                  f"`symposium verify {ID}` says what changed")


# -- each finding, whole ----------------------------------------------------------------------------

def test_each_deleted_row_is_named_with_the_link_that_sealed_it(sealed: Path) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed)
    notice = conn.execute("SELECT id FROM notices WHERE debate_id = ?", (ID,)).fetchone()[0]
    marks = {("judgements", "3"): _sealed_by(conn, "judgements", "3"), ("notices", str(notice)): _sealed_by(conn, "notices", str(notice))}
    conn.execute("DELETE FROM judgements WHERE id = 3")
    conn.execute("DELETE FROM notices WHERE id = ?", (notice,))
    assert list(seal.verify(conn, ID).problems) == sorted(
        (seal.Problem(ID, t, k, "deleted", "the row is gone", at, n) for (t, k), (at, n) in marks.items()), key=lambda p: p.n)


def test_a_changed_row_is_named_with_the_link_that_sealed_it(sealed: Path) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed)
    turn = str(conn.execute("SELECT id FROM turns WHERE seq = 2").fetchone()[0])
    at, n = _sealed_by(conn, "turns", turn)
    conn.execute("UPDATE turns SET text = 'edited' WHERE seq = 2")
    assert seal.verify(conn, ID).problems == (seal.Problem(ID, "turns", turn, "changed", CHANGED, at, n),)


def test_two_swapped_rows_are_each_named_with_the_link_that_sealed_it(sealed: Path) -> None:  # noqa: F811
    conn = sqlite3.connect(sealed)
    first, second = [str(r[0]) for r in conn.execute("SELECT id FROM moderator_events WHERE debate_id = ? ORDER BY id", (ID,))]
    marks = {first: _sealed_by(conn, "moderator_events", first), second: _sealed_by(conn, "moderator_events", second)}
    for old, new in ((first, -1), (second, first), (-1, second)):
        conn.execute("UPDATE moderator_events SET id = ? WHERE id = ?", (new, old))
    assert seal.verify(conn, ID).problems == tuple(
        seal.Problem(ID, "moderator_events", key, "reordered", f"it now holds what was sealed as moderator_events row {other}",
                     *marks[key]) for key, other in ((first, second), (second, first)))


def test_rows_no_link_covers_come_after_the_chain_undated_first_then_by_their_time(sealed: Path) -> None:  # noqa: F811
    """After every finding along the chain (here a change to the last link's row): a forged
    participant (its table says no time), a judgement dated in 1970, a turn dated by its own
    ``created_at`` (not by another of its columns)."""
    conn = sqlite3.connect(sealed)
    links = conn.execute("SELECT COUNT(*) FROM seal WHERE debate_id = ?", (ID,)).fetchone()[0]
    _copy_row(conn, "participants", conn.execute("SELECT MIN(id) FROM participants").fetchone()[0], 900, role="forger")
    _copy_row(conn, "judgements", 3, 901, created_at=0.5)
    _copy_row(conn, "turns", conn.execute("SELECT MIN(id) FROM turns").fetchone()[0], 902, seq=99, created_at=T0 + 50)
    conn.execute("UPDATE provenance SET provenance_json = '{}' WHERE debate_id = ?", (ID,))  # the last link's row
    problems = seal.verify(conn, ID).problems
    assert [(p.table, p.key, p.what, p.at) for p in problems] == [
        ("provenance", ID, "changed", _sealed_by(conn, "provenance", ID)[0]), ("participants", "900", "inserted", None),
        ("judgements", "901", "inserted", 0.5), ("turns", "902", "inserted", T0 + 50)]
    assert problems[0].n == links and all(p.n > links + 1 for p in problems[1:])  # after a head that does not match, too
    assert all(p.debate_id == ID and p.detail == "no seal link covers this row" for p in problems[1:])



# -- what a person may rely on (seal.judged) ---------------------------------------------------------

_HEAD, _OTHER_HEAD, _MINE, _THEIRS = "a" * 64, "b" * 64, "SHA256:mine", "SHA256:theirs"
_UNSIGNED = ("it is not signed (written before Symposium signed its records, or its signature was removed): its chain "
             "alone cannot show an edit by someone who recomputed it; give the head you noted with --head")


def _verdict(key: str | None, signed_from: int = 1, migrated: float | None = None) -> seal.Verdict:
    signature = None if key is None else seal.Signature(key, {"my-key": _MINE, "their-key": _THEIRS}[key], signed_from, True)
    return seal.Verdict(ID, 40, _HEAD, migrated, (), signature, 7)


@pytest.mark.parametrize(("verdict", "given", "problems", "unverifiable", "notes"), [
    (_verdict("my-key"), {"head": _OTHER_HEAD},
     [seal.Problem(ID, "seal", "head", "chain", f"the head is {_HEAD}, not the {_OTHER_HEAD} you gave: the record is not "
                   "the one whose head you noted", None, 8)], [], [f"signed by your key {_MINE}"]),
    (_verdict(None), {}, [], [_UNSIGNED], []),
    (_verdict("their-key"), {"key": _MINE},
     [seal.Problem(ID, "seal", "key", "signature", f"it is signed by key {_THEIRS}, not by the key {_MINE} you named",
                   None, 8)], [], []),
    (_verdict("their-key"), {"head": _HEAD}, [], [], [f"signed by key {_THEIRS}, not yours; the head you gave vouches for it"]),
    (_verdict("my-key", signed_from=2), {}, [], [],
     [f"signed by your key {_MINE}", "signed from link 2 on: the 1 links before were written before Symposium signed, "
      "and are vouched for only as they stood then"]),
    (_verdict("my-key", migrated=T0), {}, [], [],
     [f"signed by your key {_MINE}", f"sealed on migration at {seal.iso(T0)}: rows recorded before then were chained as "
      "they stood at the migration"]),
], ids=["head-not-noted", "unsigned", "key-not-named", "head-vouches-for-another-key", "signed-from-link-2", "migrated"])
def test_what_a_verdict_says_given_what_the_person_holds(verdict: seal.Verdict, given: dict[str, str],
                                                         problems: list[seal.Problem], unverifiable: list[str],
                                                         notes: list[str]) -> None:
    """Each finding against what the person gave comes after every link (``n``: links + 1)."""
    judged = seal.judged(verdict, "my-key", **given)
    assert (list(judged.problems), list(judged.unverifiable), list(judged.notes)) == (problems, unverifiable, notes)
