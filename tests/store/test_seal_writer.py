"""A writer never seals an edit made around it (store/seal.py: trusted, check_rewrite).

The seal is only worth something if Symposium's own next write cannot make an edit "ok". Two
ways it could: a row that Symposium rewrites later (a debate's status at its end, a round's κ,
a metric recomputed, the provenance) is read back and sealed again, edit and all; and a chain
an editor recomputed is signed by the next event. Each test edits the journal as someone with
SQLite and Symposium's source (but not the user's key) would, lets Symposium write again, and
expects the write refused, nothing of it kept, and ``verify`` still naming the edit.
No model is loaded.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocols.core.events import DebateFinished, DebateResumed, MetricsComputed, PhaseChanged, TurnFinished
from store import seal, signing
from store.journal import Journal, JournalError
from tests.helpers.sample_debate import record_sample
from tests.helpers.sealed_journal import reseal

ID = "writer0001ab"


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    """An EVINCE-shaped debate of two rounds, not finished, written by Symposium."""
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        record_sample(j, ID, rounds=2, finished=False)
    return path


def _sql(path: Path, statement: str, *params: object) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(statement, params)


def _state(path: Path) -> tuple[int, str, int]:
    """The chain's length, the debate's status and its turns: what a refused write must leave."""
    with sqlite3.connect(path) as conn:
        links, status = conn.execute("SELECT seal_links, status FROM debates WHERE id = ?", (ID,)).fetchone()
        turns = conn.execute("SELECT COUNT(*) FROM turns WHERE debate_id = ?", (ID,)).fetchone()[0]
    return links, status, turns


def _problems(path: Path) -> set[tuple[str, str]]:
    with Journal(path) as j:
        return {(p.table, p.what) for p in seal.verify(j.conn, ID).problems}


def _metric_id(path: Path, round_: int, name: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT id FROM metrics WHERE debate_id = ? AND round = ? AND name = ?",
                                (ID, round_, name)).fetchone()[0])


def _finish() -> DebateFinished:
    return DebateFinished(ID, "finished", "converged", {"top": "Jaundice"})


def _turn() -> TurnFinished:
    return TurnFinished(ID, "agent-a", "smollm2-135m", "exploratory", 2, "refutation", "still jaundice", "{}", None)


#: Each edit of a row Symposium rewrites later, and the event that rewrites it.
REWRITES: dict[str, tuple[str, Callable[[Path], None], object]] = {
    "the debate's row, then its end": (
        "debates", lambda p: _sql(p, "UPDATE debates SET subject = 'no symptoms at all' WHERE id = ?", ID), _finish()),
    "the debate's row, then a resume": (
        "debates", lambda p: _sql(p, "UPDATE debates SET title = 'another case' WHERE id = ?", ID),
        DebateResumed(ID, 2)),
    "a round's kappa, then its phase again": (
        "rounds", lambda p: _sql(p, "UPDATE rounds SET kappa = 0.01 WHERE debate_id = ? AND round = 1", ID),
        PhaseChanged(ID, "exploratory", 1, 0.5)),
    "a metric, then the same metric recomputed": (
        "metrics", lambda p: _sql(p, "UPDATE metrics SET value = 9.0 WHERE id = ?", _metric_id(p, 1, "wd")),
        MetricsComputed(ID, 1, {"wd": 0.4}, None)),
    "a metric inserted where one will be written": (
        "metrics", lambda p: _sql(p, "INSERT INTO metrics(debate_id, round, name, value) VALUES (?, 2, 'wd', 7.0)", ID),
        MetricsComputed(ID, 2, {"wd": 0.1}, None)),
    "a round inserted where one will be written": (
        "rounds", lambda p: _sql(p, "INSERT INTO rounds(debate_id, round, phase, kappa) VALUES (?, 2, 'forged', 0.9)", ID),
        MetricsComputed(ID, 2, {"wd": 0.1}, 0.2)),
}


@pytest.mark.parametrize("same_writer", [True, False], ids=["while-it-runs", "a-later-process"])
@pytest.mark.parametrize("case", REWRITES, ids=list(REWRITES))
def test_a_row_edited_before_symposium_rewrites_it_is_refused_not_resealed(journal: Path, case: str,
                                                                            same_writer: bool) -> None:
    """While the debate runs (the writer knows the chain and checks the row before rewriting it)
    and in a later process (the writer verifies the debate at its first write)."""
    table, edit, event = REWRITES[case]
    what = "inserted" if "inserted" in case else "changed"
    with Journal(journal) as j:
        j.record(_turn()) if same_writer else None  # the writer now knows the chain as it left it
        before = _state(journal)
        edit(journal)
        with pytest.raises(JournalError) as refused:
            j.record(event)  # type: ignore[arg-type]
    said = str(refused.value)
    assert f"debate {ID}: " in said and f"{table} row " in said, said
    if same_writer:  # the row checked before its rewrite (store.seal.check_rewrite)
        assert re.search(rf"its {table} row \w+ was {what} outside Symposium after it was sealed; Symposium will not "
                         rf"rewrite and re-seal it: `symposium verify {ID}` says what changed\)\.$", said), said
    else:  # the debate verified at the process's first write (store.seal.trusted)
        assert re.search(rf"its journal was edited outside Symposium \({table} row \w+ \(written [^)]*\): {what} — .*\); "
                         rf"nothing more is written to it: `symposium verify {ID}` says what changed\)\.$", said), said
    assert _state(journal) == before
    assert {(table, "changed"), (table, "inserted")} & _problems(journal)


def test_an_interrupted_mark_refuses_an_edited_debate_row(journal: Path) -> None:
    """Ctrl-C marks the debate interrupted by rewriting its row: not over an edit."""
    with Journal(journal) as j:
        j.record(_turn())
        _sql(journal, "UPDATE debates SET subject = 'edited' WHERE id = ?", ID)
        with pytest.raises(JournalError, match=f"could not mark debate {ID} interrupted .*debates row .* changed outside"):
            j.mark_interrupted(ID, "interrupted")
    assert _state(journal)[1] == "running"
    assert ("debates", "changed") in _problems(journal)


def test_an_edit_of_a_row_never_rewritten_stops_the_next_process_writing(journal: Path) -> None:
    """A turn is only ever inserted, so no write would re-seal it; a resumed run would still
    build its prompts on the edited text, so a later process refuses to go on."""
    _sql(journal, "UPDATE turns SET text = 'malaria, certainly' WHERE debate_id = ? AND seq = 1", ID)
    before = _state(journal)
    with Journal(journal) as j, pytest.raises(JournalError, match=r"turns row \d+ .*changed"):
        j.record(_turn())
    assert _state(journal) == before


def _recompute_chain(path: Path) -> None:
    """The editor's way around the chain: change a turn, then recompute its hash, every link and
    the head (tests/helpers/sealed_journal.py's ``reseal``)."""
    _sql(path, "UPDATE turns SET text = 'malaria, certainly' WHERE debate_id = ? AND seq = 1", ID)
    with sqlite3.connect(path) as conn:
        turn = conn.execute("SELECT id FROM turns WHERE debate_id = ? AND seq = 1", (ID,)).fetchone()[0]
    reseal(path, "turns", str(turn), ID)


@pytest.mark.parametrize("same_writer", [True, False], ids=["while-it-runs", "a-later-process"])
def test_a_recomputed_chain_is_not_signed_by_the_next_write(journal: Path, same_writer: bool) -> None:
    """Before, the next event found the head moved, read it again and signed it: "ok"."""
    with Journal(journal) as j:
        if same_writer:
            j.record(_turn())
        _recompute_chain(journal)
        assert _problems(journal) == {("debates", "signature")}  # the chain alone now holds
        before = _state(journal)
        with pytest.raises(JournalError, match="edited outside Symposium .*signature does not hold"):
            j.record(_turn())
    assert _state(journal) == before
    assert _problems(journal) == {("debates", "signature")}


def test_a_chain_signed_again_by_another_key_is_not_signed_by_yours(journal: Path) -> None:
    """An editor with a key of their own re-signs the recomputed head: the chain and the
    signature hold, but Symposium will not put the user's signature on it."""
    _recompute_chain(journal)
    other = signing.Signer(Ed25519PrivateKey.generate())
    with sqlite3.connect(journal) as conn:
        head, first, migrated = conn.execute("SELECT seal_head, seal_signed_from, sealed_on_migration_at FROM debates "
                                             "WHERE id = ?", (ID,)).fetchone()
        conn.execute("UPDATE debates SET seal_signature = ?, seal_key = ? WHERE id = ?",
                     (other.sign(signing.message(ID, head, first, migrated)), other.public, ID))
    assert _problems(journal) == set()
    before = _state(journal)
    said = re.escape(f"debate {ID}: its seal is signed by key {signing.fingerprint(other.public)}, not by yours; "
                     "Symposium will not sign a record another key vouches for: continue it where that key is).")
    with Journal(journal) as j, pytest.raises(JournalError, match=said + "$"):  # (base64 holds "+": escaped)
        j.record(_turn())
    assert _state(journal) == before


def test_an_untouched_debate_goes_on_in_a_later_process_and_verifies(journal: Path) -> None:
    """The check refuses edits, not Symposium's own rewrites: the same rewrites, unedited."""
    with Journal(journal) as j:
        j.record(MetricsComputed(ID, 1, {"wd": 0.4}, 0.3))
        j.mark_interrupted(ID, "interrupted")
    with Journal(journal) as j:
        j.record(DebateResumed(ID, 2))
        j.record(PhaseChanged(ID, "exploratory", 1, 0.5))
        j.record(_turn())
        j.record(_finish())
        verdict = seal.judged(seal.verify(j.conn, ID), signing.own_public_key())
    assert verdict.status == "ok", verdict.problems
    assert _state(journal)[1] == "finished"


def test_a_row_of_a_debate_the_writer_does_not_know_is_not_rewritten(journal: Path) -> None:
    """check_rewrite without a verified chain (``known`` None): a row already there was not
    sealed by this writer, so it is refused as inserted rather than rewritten."""
    conn = sqlite3.connect(journal)
    with pytest.raises(seal.Tampered, match=f"^debate {ID}: its debates row {ID} was inserted outside Symposium"):
        seal.check_rewrite(conn, ID, "debates", ID, seal.columns(conn), None)
    seal.check_rewrite(conn, ID, "metrics", 10_000, seal.columns(conn), None)  # not there yet: the write inserts it


@pytest.mark.parametrize("stale", [True, False], ids=["a-stale-known-head", "nothing-known"])
def test_append_chains_onto_the_stored_head_not_a_stale_one(journal: Path, stale: bool) -> None:
    """append called with what a writer knew before another writer moved the head (or with
    nothing known): the link chains onto the head as stored, keeps its signature's first
    link and the time given, and the writer is left knowing nothing it did not verify."""
    conn = sqlite3.connect(journal, isolation_level=None)
    sealed = seal.columns(conn)
    chains: dict[str, seal.Known] = {}
    if stale:
        chains[ID] = seal.trusted(conn, ID, sealed, None, None)  # type: ignore[assignment]
        with Journal(journal) as j:  # another writer moves the head
            j.record(_turn())
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE notices SET text = text WHERE debate_id = ?", (ID,))
    key = conn.execute("SELECT id FROM notices WHERE debate_id = ? LIMIT 1", (ID,)).fetchone()
    row = ("notices", key[0]) if key else ("debates", ID)
    assert seal.append(conn, ID, [row], sealed, chains=chains, updated_at=1234.5, signer=signing.user_signer())
    conn.execute("COMMIT")
    assert chains == {}
    assert conn.execute("SELECT updated_at FROM debates WHERE id = ?", (ID,)).fetchone()[0] == 1234.5
    verdict = seal.judged(seal.verify(conn, ID, sealed), signing.own_public_key())
    assert verdict.status == "ok", verdict.problems
    assert verdict.signature is not None and verdict.signature.signed_from == 1


@pytest.mark.parametrize("kept", ["seal_head", "seal_links", "seal_rows"])
def test_a_chain_erased_but_for_one_field_of_its_head_is_not_begun_again(journal: Path, kept: str) -> None:
    """Every link deleted and the head erased but for one of its fields: no new chain is begun
    over the debate (it would vouch for rows no link covered), the head is refused as edited."""
    erased = ", ".join(f"{c} = NULL" for c in ("seal_head", "seal_links", "seal_rows") if c != kept)
    _sql(journal, f"UPDATE debates SET {erased} WHERE id = ?", ID)
    _sql(journal, "DELETE FROM seal WHERE debate_id = ?", ID)
    conn = sqlite3.connect(journal)
    with pytest.raises(sqlite3.IntegrityError, match=f"^debate {ID}: its seal's head was edited outside Symposium"):
        seal.append(conn, ID, [("debates", ID)], seal.columns(conn))
