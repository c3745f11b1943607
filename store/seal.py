"""The seal: each debate's journal rows, hash-chained in the order they were written, its head signed.

Why: a clinician or lawyer must be able to show that a debate's record was not edited after
the fact, and a recipient of an export must be able to check that without the journal file.

How (one chain per debate):

* every transaction that writes sealed rows (one per event, ``Journal.record``) appends one
  *link* to the ``seal`` table before it commits: for each row written, in order, its table,
  its key and the SHA-256 of its sealed columns as SQLite returns them (:func:`row_sha256`);
  the time; and the chain hash — SHA-256 over the previous link's chain hash and all of this
  link (:func:`link_sha256`). The first link chains from a genesis hash of the debate's id, so
  a chain cannot be moved to another debate;
* the newest chain hash is the debate's *head* (``debates.seal_head``, moved by the UPDATE of
  the debate's row the event runs anyway), and the same UPDATE stores the head's signature by
  the user's key (:mod:`store.signing`: kept in the config folder, never in the journal) with
  the public key. Whoever edits the journal can recompute the chain, but not sign its new
  head with the user's key: :func:`verify` then finds the signature does not match;
* a row written more than once (a debate's status at its end, a metric recomputed, a round's
  κ) is sealed again each time; :func:`verify` checks each row against its *latest* seal, and
  every link against its predecessor;
* a writer never seals an edit made around it: it builds on a chain only after verifying it
  (:func:`trusted`, at its first write to a debate and whenever another writer moved the head),
  and checks a row against its latest seal before rewriting it (:func:`check_rewrite`).

Which columns are sealed is read from the journal itself (``PRAGMA table_info``, when it is
opened): every column of the tables in :data:`KEYS` except the bookkeeping in
:data:`UNSEALED` (rewritten by each event, or the seal's own). Rows are hashed as SQLite hands
them back, so the hash needs no declared type: a value's own storage class says how it is
encoded.

:func:`verify` names the first row that differs from its seal (changed, deleted, swapped with
another) and every row that no link covers (inserted), with its table and time, and whether the
head's signature holds. What the seal cannot see, said plainly: a whole debate deleted (its
chain goes with it: keep the head); a journal put back to an earlier state that was itself
signed (compare the head you noted); an edit by someone who holds the user's key; and, for a
debate written before Symposium signed, anything done to its rows before its first signed
link (``signed_from``).

What it costs (``benchmarks/journal_seal.py``): per event, reading back the rows written (by
key), SHA-256 over them, one signature, one INSERT (the link) and the page it dirties at COMMIT.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import struct
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from . import signing

#: The sealed tables, each with its key column (unique within a debate).
KEYS: dict[str, str] = {
    "debates": "id", "provenance": "debate_id", "participants": "id", "phases": "id", "rounds": "round",
    "turns": "id", "distributions": "id", "metrics": "id", "judgements": "id", "moderator_events": "id",
    "notices": "id", "model_calls": "id", "replies": "id",
    "evidence": "debate_id", "evidence_files": "id", "evidence_passages": "id", "citations": "id",
    "call_costs": "id",
}

#: Sealed tables an earlier journal layout does not have (the evidence's before v8, the calls'
#: costs before v9): a journal of that layout, or an export naming it, simply holds no rows of them.
LATER_TABLES: frozenset[str] = frozenset({"evidence", "evidence_files", "evidence_passages", "citations", "call_costs"})

#: The columns of sealed tables that no row hash covers: the debate row's bookkeeping, rewritten
#: by every event (``updated_at``, ``events_recorded``), and the seal's own head and signature.
#: ``tests/store/test_seal.py`` changes every other column of every sealed table in turn and
#: expects :func:`verify` to fail, so a column left out by mistake is caught.
UNSEALED: frozenset[tuple[str, str]] = frozenset(("debates", c) for c in (
    "updated_at", "events_recorded", "seal_head", "seal_links", "seal_rows", "sealed_on_migration_at",
    "seal_signature", "seal_key", "seal_signed_from"))

#: The debate's own column naming it, per table (``debates`` names itself by ``id``).
_OWNER = {table: ("id" if table == "debates" else "debate_id") for table in KEYS}

#: Columns that say when a row was written, to date an inserted row (no link dates it).
_TIME_COLUMNS = ("created_at", "started_at")

Columns = dict[str, tuple[str, ...]]
"""Each sealed table's sealed columns, in the journal's order."""


def columns(conn: sqlite3.Connection) -> Columns:
    """The sealed columns of each table in :data:`KEYS`, as the journal declares them."""
    found: Columns = {}
    for table in KEYS:
        names = tuple(str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})") if (table, r[1]) not in UNSEALED)
        if not names and table in LATER_TABLES:
            continue
        if not names:
            raise sqlite3.DatabaseError(f"the journal has no table {table!r}: it is not a Symposium journal")
        found[table] = names
    return found


def genesis(debate_id: str) -> str:
    """The hash a debate's chain starts from: ties the chain to its debate's id."""
    return hashlib.sha256(f"symposium seal v1\n{debate_id}".encode()).hexdigest()


_DOUBLE = struct.Struct(">d")


def row_sha256(table: str, values: Sequence[Any]) -> str:
    """The hash of one row's sealed values (in the journal's column order), tagged with its table.

    SHA-256 over ``<table>\\n`` then each value, encoded by the type SQLite returned it as, so
    that no two rows encode alike and a recipient can recompute it in any language from an
    export's values:

    * ``n;`` for NULL;
    * ``i<decimal>;`` for an integer;
    * ``f`` and the real's 8 IEEE 754 bytes, big-endian, for a real;
    * ``s<byte length>:`` and the UTF-8 bytes for text;
    * ``b<byte length>:`` and the bytes for a blob.

    Any other value (a bool, a list) is not something SQLite returns: TypeError, never a hash
    of its own. The bytes are pinned by ``tests/store/test_seal.py::test_the_hash_formats_are_pinned``."""
    parts = [table.encode(), b"\n"]
    for value in values:
        kind = value.__class__
        if kind is str:
            data = value.encode("utf-8", "surrogatepass")
            parts += (b"s%d:" % len(data), data)
        elif value is None:
            parts.append(b"n;")
        elif kind is int:
            parts.append(b"i%d;" % value)
        elif kind is float:
            parts += (b"f", _DOUBLE.pack(value))
        elif kind is bytes:
            parts += (b"b%d:" % len(value), value)
        else:
            raise TypeError(f"{table}: a {kind.__name__} value cannot be sealed (SQLite returns none)")
    return hashlib.sha256(b"".join(parts)).hexdigest()


Entry = tuple[str, str, str]
"""One row sealed by a link: its table, its key (as text) and its :func:`row_sha256`."""


def rows_json(rows: Sequence[Entry]) -> str:
    """A link's rows as stored in ``seal.rows_json`` and hashed into its chain: a compact JSON
    list of ``[table, key, row_sha256]`` (non-ASCII kept as UTF-8, no spaces)."""
    return json.dumps([list(r) for r in rows], ensure_ascii=False, separators=(",", ":"))


def link_sha256(previous: str, n: int, rows: str, at: float) -> str:
    """The chain hash of link ``n``: SHA-256 over the previous chain hash, the link's number,
    its time (Python's ``repr`` of the float) and its rows as :func:`rows_json` writes them,
    one a line, UTF-8."""
    return hashlib.sha256(f"{previous}\n{n}\n{at!r}\n{rows}".encode()).hexdigest()


def _select(table: str, names: Sequence[str]) -> str:
    return f"SELECT {', '.join(names)} FROM {table} WHERE {_OWNER[table]} = ? AND {KEYS[table]} = ?"


class Signs(Protocol):
    """What signs a head (:class:`store.signing.Signer`)."""

    public: str

    def sign(self, signed: bytes) -> str: ...


Head = tuple[str, int, int, int | None, float | None]
"""A chain's head as a writer last left it: chain hash, links, rows sealed, the first link
signed (``None`` while unsigned) and the migration mark."""


@dataclass
class Known:
    """What one writer knows of a debate's chain between its transactions: the head as it left
    it, and each row's latest sealed hash (to check a row before it is rewritten)."""

    head: Head
    rows: dict[tuple[str, str], str]


class Tampered(sqlite3.IntegrityError):
    """A debate's journal was edited outside Symposium: nothing more is sealed onto it."""


def trusted(conn: sqlite3.Connection, debate_id: str, sealed: Columns, known: Known | None,
            own_key: str | None) -> Known | None:
    """Before a transaction writes a debate's rows: what this writer may build on, or
    :class:`Tampered`. ``None`` for a debate the journal does not hold yet.

    Why: a writer that signs whatever chain it finds would sign an attacker's. So the head is
    taken on trust only while it is the one this writer left (``known``); otherwise (the first
    write of a process, or another writer moved it) the whole debate is verified first, and
    refused when any row differs from its seal, the head's signature does not hold, or the
    head is signed by a key other than ``own_key``. A row an edit changed would otherwise be
    re-sealed by the next write that rewrites it (a debate's status at its end, a round's κ),
    and a recomputed chain signed by the next event."""
    found = conn.execute("SELECT seal_head, seal_links FROM debates WHERE id = ?", (debate_id,)).fetchone()
    if found is None:
        return None
    if known is not None and (known.head[0], known.head[1]) == (found[0], found[1]):
        return known
    verdict, latest = _checked(conn, debate_id, sealed)
    if verdict.problems:
        raise Tampered(f"debate {debate_id}: its journal was edited outside Symposium ({verdict.problems[0]}); "
                       f"nothing more is written to it: `symposium verify {debate_id}` says what changed")
    sig = verdict.signature
    if sig is not None and own_key is not None and sig.key != own_key:
        raise Tampered(f"debate {debate_id}: its seal is signed by key {sig.fingerprint}, not by yours; Symposium "
                       "will not sign a record another key vouches for: continue it where that key is")
    head = conn.execute("SELECT seal_head, seal_links, seal_rows, seal_signed_from, sealed_on_migration_at FROM debates "
                        "WHERE id = ?", (debate_id,)).fetchone()
    return Known(_stored_head(debate_id, head), latest)


def check_rewrite(conn: sqlite3.Connection, debate_id: str, table: str, key: Any, sealed: Columns,
                  known: Known | None) -> None:
    """Before a write that may rewrite a sealed row: the row as stored must be the one last
    sealed (:class:`Tampered` if not), so that the write's new seal cannot vouch for an edit
    made in between. A row not there yet is fine (the write inserts it). (No event writes a
    row twice in its transaction, so a row is always checked against a sealed state.)"""
    with as_stored(conn):
        values = conn.execute(_select(table, sealed[table]), (debate_id, key)).fetchone()
    if values is None:
        return
    expected = None if known is None else known.rows.get((table, str(key)))
    if expected is not None and row_sha256(table, tuple(values)) == expected:
        return
    what = "inserted" if expected is None else "changed"
    raise Tampered(f"debate {debate_id}: its {table} row {key} was {what} outside Symposium after it was sealed; "
                   f"Symposium will not rewrite and re-seal it: `symposium verify {debate_id}` says what changed")


def append(conn: sqlite3.Connection, debate_id: str, rows: Iterable[tuple[str, Any]], sealed: Columns, *,
           at: float | None = None, chains: dict[str, Known] | None = None, updated_at: float | None = None,
           signer: Signs | None = None) -> bool:
    """Append one link sealing every ``(table, key)`` row written by the caller's transaction,
    in the order written, each read back as SQLite stores it.

    Runs inside that transaction: the rows and their link are kept together or not at all.
    The head lives on the debate's row, moved (with its signature by ``signer``, and
    ``updated_at`` when given) by one UPDATE. ``chains`` is what the writer knows of each
    debate's chain (:func:`trusted`, checked when its transaction began); the UPDATE moves the
    head only while it is still the known one, else the head is read again (and, not having
    been verified, not kept in ``chains``). Returns whether a link was appended (and
    ``updated_at`` set): not when no row was there to seal."""
    entries: list[Entry] = []
    with as_stored(conn):
        for table, key in rows:
            values = conn.execute(_select(table, sealed[table]), (debate_id, key)).fetchone()
            if values is None:  # the write touched no row (an UPDATE of a debate that is not there)
                continue
            entries.append((table, str(key), row_sha256(table, tuple(values))))
    if not entries:
        return False
    when = time.time() if at is None else at
    stored = rows_json(entries)
    known = chains.get(debate_id) if chains is not None else None
    head = None if known is None else _move(conn, debate_id, known.head, stored, when, len(entries), updated_at, signer,
                                            True)
    if head is not None and known is not None:
        known.head = head
    else:  # not known, or another writer moved it: read it
        signed = "seal_signed_from" if signer is not None else "NULL"  # (no such column while migrating to v6)
        found = conn.execute(f"SELECT seal_head, seal_links, seal_rows, {signed}, sealed_on_migration_at FROM debates "
                             "WHERE id = ?", (debate_id,)).fetchone()
        if found is None:
            raise sqlite3.IntegrityError(f"debate {debate_id}: rows written for a debate the journal does not hold; "
                                         "cannot seal them")
        start = _start(conn, debate_id, found)
        head = _move(conn, debate_id, start, stored, when, len(entries), updated_at, signer, False)
        assert head is not None  # the row was just read in this transaction
        known = Known(head, {}) if start[1] == 0 else None  # a chain begun here is known whole
    conn.execute("INSERT INTO seal(debate_id, n, rows_json, chain_sha256, at) VALUES (?,?,?,?,?)",
                 (debate_id, head[1], stored, head[0], when))
    if chains is not None and known is not None:
        known.rows.update(((t, k), h) for t, k, h in entries)
        chains[debate_id] = known
    elif chains is not None:  # a head not verified here is not known
        chains.pop(debate_id, None)
    return True


def _start(conn: sqlite3.Connection, debate_id: str, found: Sequence[Any]) -> Head:
    """The head a debate's next link chains from: its stored head, or the genesis of a debate
    never sealed (no head and no link). A head edited outside Symposium (erased with links left,
    or left without its counts) is refused: a link chained onto it would hide the edit, and the
    error says where to look rather than failing on the seal's own constraints."""
    head, links, rows = found[0], found[1], found[2]
    if head is None and links is None and rows is None and not conn.execute(
            "SELECT 1 FROM seal WHERE debate_id = ? LIMIT 1", (debate_id,)).fetchone():
        return (genesis(debate_id), 0, 0, None, found[4])
    return _stored_head(debate_id, found)


def _stored_head(debate_id: str, found: Sequence[Any]) -> Head:
    """A head as stored (chain hash, links, rows, signed from, migration mark), or
    :class:`Tampered` when it is not one Symposium writes."""
    head, links, rows = found[0], found[1], found[2]
    if isinstance(head, str) and isinstance(links, int) and isinstance(rows, int):
        return (head, links, rows, found[3], found[4])
    raise Tampered(f"debate {debate_id}: its seal's head was edited outside Symposium (head {str(head)[:12]!r}, "
                   f"{links!r} links, {rows!r} rows); nothing more can be sealed onto it: `symposium verify {debate_id}` "
                   "says what changed")


def _move(conn: sqlite3.Connection, debate_id: str, previous: Head, stored: str, when: float, count: int,
          updated_at: float | None, signer: Signs | None, guarded: bool) -> Head | None:
    """Move the head one link on from ``previous`` (signing it), in one UPDATE of the debate's
    row; ``guarded``: only if the row still holds ``previous`` (else ``None``)."""
    chain, n, rows, signed_from, migrated = previous
    new = link_sha256(chain, n + 1, stored, when)
    sets = "seal_head = ?, seal_links = ?, seal_rows = ?"
    params: list[Any] = [new, n + 1, rows + count]
    if signer is not None:
        signed_from = n + 1 if signed_from is None else signed_from
        sets += ", seal_signature = ?, seal_key = ?, seal_signed_from = ?"
        params += [signer.sign(signing.message(debate_id, new, signed_from, migrated)), signer.public, signed_from]
    if updated_at is not None:
        sets += ", updated_at = ?"
        params.append(updated_at)
    where = " WHERE id = ? AND seal_head = ? AND seal_links = ?" if guarded else " WHERE id = ?"
    params += [debate_id, chain, n] if guarded else [debate_id]
    if not conn.execute(f"UPDATE debates SET {sets}{where}", params).rowcount:
        return None
    return (new, n + 1, rows + count, signed_from, migrated)


def seal_existing(conn: sqlite3.Connection, at: float) -> int:
    """Build a chain for every debate that has none, from the rows it holds (journals written
    before the seal, migration v6), marked ``sealed on migration at``. Returns how many.

    The order in which old rows were written is not known exactly; they are linked table by
    table in :data:`KEYS`'s order, by key. Such a chain vouches for the rows from ``at`` on,
    not before: :func:`verify` and the export say so. Nothing is signed here (the journal
    signs from the debate's next write on: ``signed_from``)."""
    sealed = columns(conn)
    debates = [r[0] for r in conn.execute("SELECT id FROM debates WHERE seal_head IS NULL ORDER BY created_at, id")]
    for debate_id in debates:
        for table in sealed:  # one link per table (of those this journal's layout has)
            key = KEYS[table]
            keys = [(table, r[0]) for r in conn.execute(
                f"SELECT {key} FROM {table} WHERE {_OWNER[table]} = ? ORDER BY {key}", (debate_id,))]
            append(conn, debate_id, keys, sealed, at=at)
        conn.execute("UPDATE debates SET sealed_on_migration_at = ? WHERE id = ?", (at, debate_id))
    return len(debates)


# -- checking -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    """One row (or link, or the signature) that does not match the seal. ``n`` orders problems
    along the chain (rows no link covers come after, by time)."""

    debate_id: str
    table: str
    key: str
    what: str  # "changed", "deleted", "inserted", "reordered", "chain", "signature"
    detail: str
    at: float | None
    n: int

    def __str__(self) -> str:
        when = "time unknown" if self.at is None else iso(self.at)
        return f"{self.table} row {self.key} (written {when}): {self.what} — {self.detail}"


@dataclass(frozen=True)
class Signature:
    """A debate's signature as found: the public key that made it (an OpenSSH line, as stored),
    its fingerprint (``None`` when the key does not parse), the first link it vouches for, and
    whether it is that key's signature of this head."""

    key: str
    fingerprint: str | None
    signed_from: int
    valid: bool


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` (or an export's check) found for one debate.

    ``problems``: what was changed. ``unverifiable``: why nothing vouches for the record (no
    seal, a redacted copy, no signature and no head noted, a key nobody named); such a record
    is neither "ok" nor "tampered". ``notes``: what the check could not prove."""

    debate_id: str
    rows: int
    head: str | None
    sealed_on_migration_at: float | None
    problems: tuple[Problem, ...]
    signature: Signature | None = None
    links: int = 0
    unverifiable: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems and not self.unverifiable

    @property
    def status(self) -> str:
        """``"ok"``, ``"tampered"`` or ``"not verifiable"``."""
        return "tampered" if self.problems else "not verifiable" if self.unverifiable else "ok"


def iso(ts: float) -> str:
    """A time as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Link:
    """One link of a chain: the rows one transaction wrote, chained to the link before."""

    n: int
    rows: tuple[Entry, ...]
    chain_sha256: str
    at: float


@dataclass(frozen=True)
class Sealed:
    """A row's latest seal: its hash and the link that holds it."""

    row_sha256: str
    n: int
    at: float


def check_links(debate_id: str, links: Sequence[Link], head: str | None, count: int | None,  # noqa: C901
                current: dict[tuple[str, str], str | None], times: dict[tuple[str, str], float | None],
                values: dict[tuple[str, str], tuple[Any, ...]], sealed: Columns) -> list[Problem]:
    """The checks shared by the journal and an export: each link chains from the one before;
    the last is the head; each row matches its latest link; no row lacks a link.

    ``current`` maps every sealed row present, ``(table, key)``, to its hash now (``None``
    where it cannot be hashed: counted as changed)."""
    problems: list[Problem] = []
    previous = genesis(debate_id)
    latest: dict[tuple[str, str], Sealed] = {}
    broken = False
    for i, link in enumerate(links, start=1):
        for table, key, row_hash in link.rows:  # rows are still checked against their links past a break
            latest[(table, key)] = Sealed(row_hash, link.n, link.at)
        if broken:
            continue
        expected = link_sha256(previous, i, rows_json(link.rows), link.at)
        if link.n != i or link.chain_sha256 != expected:
            table, key = link.rows[0][:2] if link.rows else ("seal", "-")
            problems.append(Problem(debate_id, table, key, "chain",
                                    f"seal link {link.n} does not follow link {i - 1}: a link was changed, removed, "
                                    "inserted or reordered", link.at, i))
            broken = True
            continue
        previous = link.chain_sha256
    if not broken and (previous != head or count != len(links)):
        last = links[-1] if links else None
        table, key = last.rows[-1][:2] if last and last.rows else ("seal", "-")
        problems.append(Problem(debate_id, table, key, "chain",
                                f"the chain ends at link {len(links)} ({previous[:12]}…) but its head says "
                                f"{count} links ({str(head)[:12]}…): links were removed from the end or added",
                                last.at if last else None, len(links) + 1))
    changed = [i for i, mark in latest.items() if i in current and current[i] != mark.row_sha256]
    for ident, mark in latest.items():
        if ident not in current:
            problems.append(Problem(debate_id, ident[0], ident[1], "deleted", "the row is gone", mark.at, mark.n))
            continue
        if current[ident] == mark.row_sha256:
            continue
        other = _moved_from(ident, changed, latest, values, sealed)
        if other is not None:
            problems.append(Problem(debate_id, ident[0], ident[1], "reordered",
                                    f"it now holds what was sealed as {other[0]} row {other[1]}", mark.at, mark.n))
        else:
            problems.append(Problem(debate_id, ident[0], ident[1], "changed",
                                    "its content differs from what was sealed", mark.at, mark.n))
    extra = len(links) + 2
    for ident in sorted(set(current) - set(latest)):  # named in the order of their times: see the sort below
        problems.append(Problem(debate_id, ident[0], ident[1], "inserted", "no seal link covers this row",
                                times.get(ident), extra))
    problems.sort(key=lambda p: (p.n, p.at or 0.0))
    return problems


def _moved_from(ident: tuple[str, str], changed: Sequence[tuple[str, str]], latest: dict[tuple[str, str], Sealed],
                values: dict[tuple[str, str], tuple[Any, ...]], sealed: Columns) -> tuple[str, str] | None:
    """The other changed row of the same table whose sealed content this row now holds under its
    own key (two rows swapped, or their keys exchanged), if any."""
    row = values.get(ident)
    if row is None:
        return None
    at = sealed[ident[0]].index(KEYS[ident[0]])
    for other in changed:
        if other[0] != ident[0] or other == ident:
            continue
        try:
            key = typed_key(other[0], other[1])
        except ValueError:  # a key no journal writes (an edited export's): no row was sealed under it as typed
            continue
        as_other = (*row[:at], key, *row[at + 1:])
        if row_sha256(ident[0], as_other) == latest[other].row_sha256:
            return other
    return None


def typed_key(table: str, key: str) -> Any:
    """A row's key as its column holds it: text for a debate's own rows, else an integer."""
    return key if table in ("debates", "provenance", "evidence") else int(key)


def signature_of(debate_id: str, head: str | None, key: str | None, signature: str | None, signed_from: Any,
                 migrated: float | None) -> tuple[Signature | None, list[Problem]]:
    """The head's signature as found (``None`` when there is none) and, when it does not hold,
    the problem to report."""
    if signature is None and key is None:
        return None, []
    first = signed_from if isinstance(signed_from, int) and not isinstance(signed_from, bool) else 0
    try:
        print_ = signing.fingerprint(str(key))
    except ValueError:
        print_ = None
    holds = (print_ is not None and head is not None and first > 0
             and signing.valid(str(key), str(signature), signing.message(debate_id, head, first, migrated)))
    found = Signature(str(key), print_, first, holds)
    if holds:
        return found, []
    return found, [Problem(debate_id, "debates", debate_id, "signature",
                           "the head's signature does not hold: the chain was recomputed after it was signed, or the "
                           "signature, its key or what it covers was changed", None, 0)]


def verify(conn: sqlite3.Connection, debate_id: str, sealed: Columns | None = None) -> Verdict:
    """Recompute one debate's chain from the journal, compare every sealed row with it, and
    check the head's signature."""
    return _checked(conn, debate_id, columns(conn) if sealed is None else sealed)[0]


def _checked(conn: sqlite3.Connection, debate_id: str, sealed: Columns) -> tuple[Verdict, dict[tuple[str, str], str]]:
    """:func:`verify`'s verdict and each row's latest sealed hash (what :func:`trusted` keeps)."""
    found = conn.execute("SELECT seal_head, seal_links, seal_rows, sealed_on_migration_at, seal_key, seal_signature, "
                         "seal_signed_from FROM debates WHERE id = ?", (debate_id,)).fetchone()
    links = [_link(r[0], json.loads(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT n, rows_json, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,))]
    latest = {(table, key): row_hash for link in links for table, key, row_hash in link.rows}
    current, times, values = _current(conn, debate_id, sealed)
    if found is None or found[0] is None:
        problems = [Problem(debate_id, "debates", debate_id, "inserted", "the debate has no seal at all", None, 0)]
        return Verdict(debate_id, 0, None, None, tuple(problems)), latest
    head, count, rows, migrated = found[0], found[1], found[2], found[3]
    problems = check_links(debate_id, links, head, count, current, times, values, sealed)
    signature, bad = signature_of(debate_id, head, found[4], found[5], found[6], migrated)
    return Verdict(debate_id, rows, head, migrated, tuple(problems + bad), signature, count), latest


def _link(n: Any, rows: Any, chain: Any, at: Any) -> Link:
    """A link as stored or exported (rows as ``[table, key, row_sha256]`` lists)."""
    return Link(int(n), tuple((str(t), str(k), str(h)) for t, k, h in rows), str(chain), float(at))


def _current(conn: sqlite3.Connection, debate_id: str, sealed: Columns) -> tuple[
        dict[tuple[str, str], str | None], dict[tuple[str, str], float | None], dict[tuple[str, str], tuple[Any, ...]]]:
    """Every sealed row of the debate as it is now: its hash, when it says it was written, and
    its sealed values."""
    current: dict[tuple[str, str], str | None] = {}
    times: dict[tuple[str, str], float | None] = {}
    values: dict[tuple[str, str], tuple[Any, ...]] = {}
    with as_stored(conn):
        for table, names in sealed.items():
            key = KEYS[table]
            time_col = next((c for c in _TIME_COLUMNS if c in names), None)
            select = ", ".join((key, *names, time_col or "NULL"))
            for r in conn.execute(f"SELECT {select} FROM {table} WHERE {_OWNER[table]} = ?", (debate_id,)):
                ident = (table, str(r[0]))
                values[ident] = tuple(r[1:-1])
                current[ident] = row_sha256(table, values[ident])
                times[ident] = r[-1]
    return current, times, values


@contextmanager
def as_stored(conn: sqlite3.Connection) -> Iterator[None]:
    """Inside the block, text reads as the journal holds it, even bytes that are not UTF-8
    (which readers are shown as U+FFFD): what is sealed and checked is the bytes, not what a
    reader sees. Symposium writes UTF-8 only, so such bytes are an edit made around it, to be
    reported as a changed row, not a crash. They are kept as lone surrogates, which
    :func:`row_sha256` encodes (``surrogatepass``) to bytes no UTF-8 text has, so the row hashes
    as no text that was sealed."""
    factory, conn.text_factory = conn.text_factory, _stored_text
    try:
        yield
    finally:
        conn.text_factory = factory


def _stored_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def verify_all(conn: sqlite3.Connection) -> list[Verdict]:
    """:func:`verify` for every debate in the journal, oldest first."""
    sealed = columns(conn)
    return [verify(conn, r[0], sealed) for r in conn.execute("SELECT id FROM debates ORDER BY created_at, id").fetchall()]


# -- what a person can rely on --------------------------------------------------------------------

def judged(verdict: Verdict, own_key: str | None, *, key: str | None = None, head: str | None = None) -> Verdict:
    """The verdict as a person may rely on it, given what they trust: their own public key
    (``own_key``; ``None`` when they have none), the fingerprint of a key they were told of
    (``key``), a head they noted (``head``, the whole 64 characters).

    A record is "ok" only when something they hold vouches for it: a valid signature by their
    own key or by the key they named, or the head they noted. Otherwise it is "not verifiable"
    (unsigned, or signed by a key they have not named), or "tampered" when it contradicts what
    they gave. ``notes`` say what even an "ok" cannot prove."""
    if verdict.status == "not verifiable":
        return verdict
    problems = list(verdict.problems)
    unverifiable: list[str] = []
    notes: list[str] = []
    if head is not None and verdict.head != head:
        problems.append(Problem(verdict.debate_id, "seal", "head", "chain",
                                f"the head is {verdict.head or 'missing'}, not the {head} you gave: the record is not the "
                                "one whose head you noted", None, verdict.links + 1))
    sig = verdict.signature
    if sig is None:
        if head is None:
            unverifiable.append("it is not signed (written before Symposium signed its records, or its signature was "
                                "removed): its chain alone cannot show an edit by someone who recomputed it; give the "
                                "head you noted with --head")
        else:
            notes.append("not signed: only the head you gave vouches for it")
    elif sig.valid:
        own = own_key is not None and sig.key == own_key
        if key is not None and sig.fingerprint != key:
            problems.append(Problem(verdict.debate_id, "seal", "key", "signature",
                                    f"it is signed by key {sig.fingerprint}, not by the key {key} you named", None,
                                    verdict.links + 1))
        elif own:
            notes.append(f"signed by your key {sig.fingerprint}")
        elif key is not None:
            notes.append(f"signed by key {sig.fingerprint}, the key you named")
        elif head is None:
            unverifiable.append(f"it is signed by key {sig.fingerprint}, which is not yours: if its owner confirms "
                                f"that fingerprint, run again with --key {sig.fingerprint}")
        else:
            notes.append(f"signed by key {sig.fingerprint}, not yours; the head you gave vouches for it")
        if sig.signed_from > 1:
            notes.append(f"signed from link {sig.signed_from} on: the {sig.signed_from - 1} links before were written "
                         "before Symposium signed, and are vouched for only as they stood then")
    if verdict.sealed_on_migration_at is not None:
        notes.append(f"sealed on migration at {iso(verdict.sealed_on_migration_at)}: rows recorded before then were "
                     "chained as they stood at the migration")
    return replace(verdict, problems=tuple(problems), unverifiable=tuple(unverifiable), notes=tuple(notes))


# -- carrying the seal in an export --------------------------------------------------------------

#: The JSON export's seal format (:func:`export`; ``store/export_check.py`` checks it).
FORMAT = 2


def summary(conn: sqlite3.Connection, debate_id: str) -> dict[str, Any]:
    """The chain's head, its length, its signature and its migration mark (``show``, the
    Markdown export, the report)."""
    found = conn.execute("SELECT seal_head, seal_links, seal_rows, sealed_on_migration_at, seal_key, seal_signature, "
                         "seal_signed_from FROM debates WHERE id = ?", (debate_id,)).fetchone()
    if found is None or found[0] is None:
        return {"head": None, "rows": 0, "links": 0, "sealed_on_migration_at": None, "key": None, "fingerprint": None,
                "signature": None, "signed_from": None}
    try:
        print_ = None if found[4] is None else signing.fingerprint(found[4])
    except ValueError:
        print_ = None
    return {"head": found[0], "rows": found[2], "links": found[1],
            "sealed_on_migration_at": None if found[3] is None else iso(found[3]),
            "key": found[4], "fingerprint": print_, "signature": found[5], "signed_from": found[6]}


def redacted() -> dict[str, Any]:
    """The ``"seal"`` of a redacted copy: none. Every hash of the unredacted record (a row's, a
    link's, the head) is a function of the masked text, so a reader could test guesses of it
    against any of them; a redacted copy carries none, and says so."""
    return {"redacted": True,
            "note": "A redacted copy carries no seal: the seal's hashes would let a reader test guesses of the masked "
                    "text. It cannot be checked against the journal; check the unredacted record with "
                    "`symposium verify` instead."}


def export(conn: sqlite3.Connection, debate_id: str, *, with_rows: bool = True) -> dict[str, Any]:
    """The ``"seal"`` object of the JSON export: the layout its rows follow, each sealed table's
    columns, the head with its signature and key, and every link, each row's latest link
    carrying the row's sealed values so a recipient recomputes every hash without the journal
    (``store/export_check.py``). Without ``with_rows`` (a redacted copy): :func:`redacted`."""
    if not with_rows:
        return redacted()
    sealed = columns(conn)
    links = [_link(r[0], json.loads(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT n, rows_json, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,))]
    last = {(table, key): link.n for link in links for table, key, _ in link.rows}
    chain: list[dict[str, Any]] = []
    for link in links:
        entries: list[dict[str, Any]] = []
        for table, key, row_hash in link.rows:
            entry: dict[str, Any] = {"table": table, "key": key, "row_sha256": row_hash}
            if last[(table, key)] == link.n:
                values = conn.execute(_select(table, sealed[table]), (debate_id, typed_key(table, key))).fetchone()
                if values is not None:
                    entry["row"] = dict(zip(sealed[table], tuple(values)))
            entries.append(entry)
        chain.append({"n": link.n, "rows": entries, "chain_sha256": link.chain_sha256, "at": link.at})
    found = conn.execute("SELECT seal_head, seal_links, seal_rows, sealed_on_migration_at, seal_key, seal_signature, "
                         "seal_signed_from FROM debates WHERE id = ?", (debate_id,)).fetchone()
    layout = conn.execute("SELECT MAX(version) FROM migrations").fetchone()[0]
    head = found if found is not None else (None,) * 7
    return {"format": FORMAT, "layout": layout, "columns": {t: list(c) for t, c in sealed.items()},
            "head": head[0], "links": head[1], "rows": head[2], "sealed_on_migration_at": head[3],
            "key": head[4], "signature": head[5], "signed_from": head[6], "chain": chain}
