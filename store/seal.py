"""The seal: each debate's journal rows, hash-chained in the order they were written.

Why: a clinician or lawyer must be able to show that a debate's record was not edited after
the fact, and a recipient of an export must be able to check that without the journal file.

How (one chain per debate):

* every transaction that writes sealed rows (:data:`SEALED`; one per event, ``Journal.record``)
  appends one *link* to the ``seal`` table before it commits: for each row written, in order,
  its table, its key and the SHA-256 of its sealed columns as stored (:func:`row_sha256`; the
  busiest writes hash the values they bound, where :func:`as_stored` is certain SQLite keeps
  them so, and read nothing back); the time; and the chain hash — SHA-256 over the previous
  link's chain hash and all of this link (:func:`link_sha256`). The first link chains from a
  genesis hash of the debate's id, so a chain cannot be moved to another debate;
* the newest chain hash is the debate's *head* (``debates.seal_head``, moved by the UPDATE of
  the debate's row the event runs anyway), printed in ``show``, the JSON export and the
  report: a reader who noted it can later tell that nothing was appended, removed or
  rewritten, even by someone who recomputed the whole chain;
* a row written more than once (a debate's status at its end, a metric recomputed, a round's
  κ) is sealed again each time; :func:`verify` checks each row against its *latest* seal, and
  every link against its predecessor.

:func:`verify` names the first row that differs from its seal (changed, deleted, swapped with
another) and every row that no link covers (inserted), with its table and time. What the seal
cannot see, said plainly: a whole debate deleted (its chain goes with it: keep the head), and
the bookkeeping columns left out of :data:`SEALED` (``debates.updated_at``,
``events_recorded`` and the head's own columns, rewritten by every event; the full-text index,
derived from the turns).

What it costs (``benchmarks/journal_seal.py``): per turn, SHA-256 over the rows' content, one
INSERT (the link) and the page it dirties at COMMIT; the head costs no statement of its own.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

#: The sealed tables: per table, its key column (unique within a debate) and the columns each
#: link's row hash covers, in order. Every column of these tables is covered except
#: ``debates.updated_at``, ``events_recorded`` and the head (``seal_head``, ``seal_links``,
#: ``seal_rows``, ``sealed_on_migration_at``): bookkeeping rewritten by each event.
#: ``tests/store/test_seal.py`` changes each listed column in turn and expects :func:`verify` to
#: fail, so a column dropped from the hash is caught.
SEALED: dict[str, tuple[str, tuple[str, ...]]] = {
    "debates": ("id", ("id", "protocol", "title", "subject", "config_json", "status", "stop_reason", "outcome_json",
                       "created_at", "finished_at")),
    "provenance": ("debate_id", ("debate_id", "provenance_json", "created_at")),
    "participants": ("id", ("id", "debate_id", "role", "model_id", "backend", "options_json", "details_json")),
    "phases": ("id", ("id", "debate_id", "name", "round", "kappa", "started_at")),
    "rounds": ("round", ("debate_id", "round", "phase", "kappa")),
    "turns": ("id", ("id", "debate_id", "seq", "round", "phase", "role", "model_id", "kind", "kappa", "text", "raw",
                     "parsed_json", "parse_notes_json", "prompt_tokens", "prompt_tokens_evaluated", "completion_tokens",
                     "duration_s", "finish_reason", "created_at", "request", "confidence", "exchange_json")),
    "distributions": ("id", ("id", "turn_id", "debate_id", "round", "role", "rank", "label", "probability")),
    "metrics": ("id", ("id", "debate_id", "round", "name", "value")),
    "judgements": ("id", ("id", "debate_id", "round", "judge_role", "judge_model", "kind", "target", "subject", "score",
                          "verdict", "reasons_json", "raw", "created_at")),
    "moderator_events": ("id", ("id", "debate_id", "round", "kind", "payload_json", "created_at", "checkpoint")),
    "notices": ("id", ("id", "debate_id", "round", "kind", "text", "details_json", "created_at")),
    "model_calls": ("id", ("id", "debate_id", "turn_id", "round", "role", "model_id", "purpose", "options_json",
                           "prompt_tokens", "prompt_tokens_evaluated", "completion_tokens", "duration_s", "first_token_s",
                           "finish_reason", "error", "created_at")),
    "replies": ("id", ("id", "debate_id", "role", "kind", "prompt_sha256", "reply", "details_json", "created_at")),
    "evidence": ("debate_id", ("debate_id", "settings_json", "created_at")),
    "evidence_files": ("id", ("id", "debate_id", "number", "name", "kind", "size", "sha256", "pages", "first_passage",
                              "passages", "redactions_json", "notes_json")),
    "evidence_passages": ("id", ("id", "debate_id", "number", "file", "page", "paragraph", "part", "parts", "text")),
    "citations": ("id", ("id", "debate_id", "turn_id", "claim_no", "role", "claim", "source", "quote", "status", "passage",
                         "match", "problem", "label")),
}

#: The debate's own column naming it, per table (``debates`` names itself by ``id``).
_OWNER = {table: ("id" if table == "debates" else "debate_id") for table in SEALED}

#: Columns that say when a row was written, to date an inserted row (no link dates it).
_TIME_COLUMNS = ("created_at", "started_at")


def genesis(debate_id: str) -> str:
    """The hash a debate's chain starts from: ties the chain to its debate's id."""
    return hashlib.sha256(f"symposium seal v1\n{debate_id}".encode()).hexdigest()


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

#: The sealed columns declared REAL, and those declared INTEGER, per table; every other sealed
#: column is TEXT. They say how SQLite stores a value: a REAL column keeps a whole number
#: (``3.0``) as the integer 3 on disk and reads it back as ``3.0``, and turns an integer bound
#: to it into a real; :func:`row_sha256` hashes an integer in a REAL column as that real, and
#: :func:`as_stored` uses both to know a bound row without reading it back.
#: ``tests/store/test_seal.py`` checks both lists against the schema's declared types.
REAL_COLUMNS: dict[str, frozenset[str]] = {
    "debates": frozenset({"created_at", "finished_at"}),
    "provenance": frozenset({"created_at"}),
    "phases": frozenset({"kappa", "started_at"}),
    "rounds": frozenset({"kappa"}),
    "turns": frozenset({"kappa", "duration_s", "created_at", "confidence"}),
    "distributions": frozenset({"probability"}),
    "metrics": frozenset({"value"}),
    "judgements": frozenset({"score", "created_at"}),
    "moderator_events": frozenset({"created_at"}),
    "notices": frozenset({"created_at"}),
    "model_calls": frozenset({"duration_s", "first_token_s", "created_at"}),
    "replies": frozenset({"created_at"}),
    "evidence": frozenset({"created_at"}),
}
INTEGER_COLUMNS: dict[str, frozenset[str]] = {
    "participants": frozenset({"id"}),
    "phases": frozenset({"id", "round"}),
    "rounds": frozenset({"round"}),
    "turns": frozenset({"id", "seq", "round", "prompt_tokens", "prompt_tokens_evaluated", "completion_tokens"}),
    "distributions": frozenset({"id", "turn_id", "round", "rank"}),
    "metrics": frozenset({"id", "round"}),
    "judgements": frozenset({"id", "round"}),
    "moderator_events": frozenset({"id", "round", "checkpoint"}),
    "notices": frozenset({"id", "round"}),
    "model_calls": frozenset({"id", "turn_id", "round", "prompt_tokens", "prompt_tokens_evaluated", "completion_tokens"}),
    "replies": frozenset({"id"}),
    "evidence_files": frozenset({"id", "number", "size", "pages", "first_passage", "passages"}),
    "evidence_passages": frozenset({"id", "number", "file", "page", "paragraph", "part", "parts"}),
    "citations": frozenset({"id", "turn_id", "claim_no"}),
}

#: Per table, each sealed column's declared type: ``"r"`` REAL, ``"i"`` INTEGER, ``"t"`` TEXT.
_KINDS: dict[str, tuple[str, ...]] = {
    table: tuple("r" if c in REAL_COLUMNS.get(table, ()) else "i" if c in INTEGER_COLUMNS.get(table, ()) else "t"
                 for c in columns) for table, (_, columns) in SEALED.items()}

#: Per table, the positions of its REAL columns among its sealed columns.
_REAL_AT: dict[str, tuple[int, ...]] = {table: tuple(i for i, k in enumerate(kinds) if k == "r")
                                        for table, kinds in _KINDS.items()}

#: The largest integer a REAL column is certain to keep exactly (a double's 53-bit mantissa).
_EXACT = 2**53


def as_stored(table: str, values: Sequence[Any]) -> tuple[Any, ...] | None:
    """The row SQLite stores when ``values`` (the table's sealed columns in :data:`SEALED`'s
    order, the row id included) are bound to an INSERT, where that is certain without reading
    the row back; ``None`` where it is not.

    Certain: NULL anywhere; an ``int`` (not a bool) in an INTEGER column; a ``str`` in a TEXT
    column (kept byte for byte); in a REAL column a float other than NaN (which SQLite stores as
    NULL), or an int within ±2**53 — returned as the float the column reads back (an integer,
    and -0.0, come back as reals, the latter as 0.0). Anything else (a float token count, a
    number in a TEXT column, a bool) goes through SQLite's type conversions, which this does not
    imitate: the caller reads the row back. The busiest writes (a turn, its distribution, its
    model call) use it instead of ``RETURNING`` or a read-back, each of which cost more than
    the rest of the seal; ``tests/store/test_seal.py`` binds each kind of value and compares the
    hash with the row's as read back."""
    signature = (table, tuple(map(type, values)))
    try:
        reals = _CERTAIN[signature]
    except KeyError:
        reals = _certain(table, values, signature)
    if reals is None:
        return None
    row = values if values.__class__ is tuple else tuple(values)
    for i in reals:  # the REAL columns holding a number: only its value can still be in doubt
        value = row[i]
        if value != value:  # NaN: stored as NULL
            return None
        if value == 0 or value.__class__ is int:
            if not -_EXACT <= value <= _EXACT:
                return None
            row = (*row[:i], float(value) + 0.0, *row[i + 1:])  # -0.0 too reads back as 0.0
    return row


#: What :func:`as_stored` learnt of each (table, types of the values bound): ``None`` where
#: some value's type is not certain to be stored as bound, else the REAL columns holding a
#: number. A writer binds few distinct type patterns, and checking each value every time cost
#: more than the rest of the seal.
_CERTAIN: dict[tuple[str, tuple[type, ...]], tuple[int, ...] | None] = {}


def _certain(table: str, values: Sequence[Any], signature: tuple[str, tuple[type, ...]]) -> tuple[int, ...] | None:
    """:func:`as_stored`'s check by type, made once per signature and kept in :data:`_CERTAIN`."""
    kinds = _KINDS[table]
    if len(values) != len(kinds):
        raise ValueError(f"{table}: {len(values)} values bound for {len(kinds)} sealed columns")
    reals: list[int] = []
    verdict: tuple[int, ...] | None = None
    for i, (value, kind) in enumerate(zip(values, kinds)):
        cls = value.__class__
        if value is None:
            continue
        if (kind == "t" and cls is not str) or (kind == "i" and cls is not int) or (kind == "r" and cls not in (int, float)):
            break
        if kind == "r":
            reals.append(i)
    else:
        verdict = tuple(reals)
    if len(_CERTAIN) < 4096:  # bounded, though a writer's patterns are few
        _CERTAIN[signature] = verdict
    return verdict


#: Per table, the bytes every row hash starts with (the table's name).
_TAGS: dict[str, bytes] = {table: table.encode() + b"\n" for table in SEALED}


def row_sha256(table: str, values: Sequence[Any]) -> str:
    """The hash of one row's sealed column values, in :data:`SEALED`'s order, tagged with its table.

    SHA-256 over ``<table>\n`` then each value, encoded so that no two rows encode alike and so
    that a recipient can recompute it in any language from the export's values:

    * ``n;`` for NULL;
    * ``i<decimal>;`` for an integer;
    * ``f`` and the real's 8 IEEE 754 bytes, big-endian, for a real;
    * ``s<byte length>:`` and the UTF-8 bytes for text.

    (No sealed column holds a blob.)

    One value can read back as another type: in a REAL column (:data:`REAL_COLUMNS`) an integer
    is hashed as the real the column stores it as. (A pickle, made in C, was faster by about
    0.02 ms a turn; it was given up because it tied every seal to Python's pickle format.) The
    bytes are pinned by ``tests/store/test_seal.py::test_the_hash_formats_are_pinned``."""
    row = values if values.__class__ is tuple else tuple(values)
    for i in _REAL_AT[table]:  # a KeyError names a table that is not sealed
        if row[i].__class__ is int:
            real = _REAL_AT[table]
            row = tuple(float(v) if j in real and v.__class__ is int else v for j, v in enumerate(row))
            break
    return _digest(table, row)


_DOUBLE = struct.Struct(">d")


def _digest(table: str, row: tuple[Any, ...]) -> str:
    """:func:`row_sha256` of a row whose REAL columns hold no integer (:func:`as_stored`'s): the
    parts are gathered in a list and hashed in one call. Only the exact classes SQLite hands
    back (and :func:`as_stored` lets through as bound) can be sealed; anything else is a bug
    that must not be given a hash of its own."""
    parts = [_TAGS[table]]
    add = parts.append
    for value in row:
        kind = value.__class__
        if kind is str:
            data = value.encode("utf-8", "surrogatepass")
            add(b"s%d:" % len(data))
            add(data)
        elif value is None:
            add(b"n;")
        elif kind is int or kind is bool:
            add(b"i%d;" % value)
        elif kind is float:
            add(b"f" + _DOUBLE.pack(value))
        else:
            raise TypeError(f"{table}: a {kind.__name__} value cannot be sealed (SQLite reads back none)")
    return hashlib.sha256(b"".join(parts)).hexdigest()




Entry = tuple[str, str, str]
"""One row sealed by a link: its table, its key (as text) and its :func:`row_sha256`."""

_quoted = json.encoder.encode_basestring  # JSON text of a string, as _encode writes it


def rows_json(rows: Sequence[Entry]) -> str:
    """A link's rows as stored in ``seal.rows_json`` and hashed into its chain: a JSON list of
    ``[table, key, row_sha256]``, byte for byte what ``_encode`` writes (a test holds them
    equal), built directly because the encoder's set-up cost more than a whole link."""
    return "[" + ",".join([f'["{t}",{_quoted(k)},"{h}"]' for t, k, h in rows]) + "]"


def link_sha256(previous: str, n: int, rows: str, at: float) -> str:
    """The chain hash of link ``n``: covers the previous chain hash and all of this link (its
    number, its rows as :func:`rows_json` writes them, its time), one field a line."""
    return hashlib.sha256(f"{previous}\n{n}\n{at!r}\n{rows}".encode()).hexdigest()


def insert(table: str) -> str:
    """An INSERT of the table's sealed columns after its id, in :data:`SEALED`'s order, so a
    writer that binds ``params`` to it seals ``(cursor.lastrowid, *params)`` (:func:`as_stored`)."""
    key, columns = SEALED[table]
    if columns[0] != "id":
        raise ValueError(f"{table}: its sealed columns do not start with its row id")
    return f"INSERT INTO {table}({', '.join(columns[1:])}) VALUES ({', '.join('?' * (len(columns) - 1))})"


def _select(table: str) -> str:
    key, columns = SEALED[table]
    return f"SELECT {', '.join(columns)} FROM {table} WHERE {_OWNER[table]} = ? AND {key} = ?"


Head = tuple[str, int, int]
"""A chain's head as a writer last left it: chain hash, links, rows sealed."""


def append(conn: sqlite3.Connection, debate_id: str, rows: Iterable[tuple[str, Any, Sequence[Any] | None]],
           at: float | None = None, heads: dict[str, Head] | None = None, updated_at: float | None = None) -> bool:
    """Append one link sealing every ``(table, key, values)`` written by the caller's
    transaction, in the order written: ``values`` as bound to its INSERT (:func:`as_stored`),
    or ``None``: read back as stored now.

    Runs inside that transaction: the rows and their link are kept together or not at all.
    The head lives on the debate's row (``debates.seal_head``, ``seal_links``, ``seal_rows``),
    moved by the one UPDATE of that row an event runs anyway: ``updated_at``, when given, is
    set in the same statement. So a turn costs one statement here, the link's INSERT.
    ``heads`` caches each debate's head between transactions of one writer; the UPDATE moves
    the head only while it is still the cached one, and when another writer moved it meanwhile
    the head is read again. Returns whether a link was appended (and ``updated_at`` set): not
    when no row was there to seal."""
    entries: list[Entry] = []
    for table, key, given in rows:
        bound = None if given is None else as_stored(table, given)
        if bound is not None:
            entries.append((table, str(key), _digest(table, bound)))
            continue
        values = conn.execute(_select(table), (debate_id, key)).fetchone()
        if values is None:  # the write touched no row (an UPDATE of a debate that is not there)
            continue
        entries.append((table, str(key), row_sha256(table, values)))
    if not entries:
        return False
    when = time.time() if at is None else at
    stored = rows_json(entries)
    touch = "" if updated_at is None else ", updated_at = ?"
    extra: tuple[float, ...] = () if updated_at is None else (updated_at,)
    cached = heads.get(debate_id) if heads is not None else None
    moved = 0
    if cached is not None:
        previous, n, count = cached
        chain = link_sha256(previous, n + 1, stored, when)
        moved = conn.execute(f"UPDATE debates SET seal_head = ?, seal_links = ?, seal_rows = ?{touch}"
                             " WHERE id = ? AND seal_head = ? AND seal_links = ?",
                             (chain, n + 1, count + len(entries), *extra, debate_id, previous, n)).rowcount
    if not moved:  # no cached head, or another writer moved it: read it
        found = conn.execute("SELECT seal_head, seal_links, seal_rows FROM debates WHERE id = ?", (debate_id,)).fetchone()
        if found is None:
            raise sqlite3.IntegrityError(f"debate {debate_id}: rows written for a debate the journal does not hold; "
                                         "cannot seal them")
        previous, n, count = (found[0], found[1], found[2]) if found[0] is not None else (genesis(debate_id), 0, 0)
        chain = link_sha256(previous, n + 1, stored, when)
        conn.execute(f"UPDATE debates SET seal_head = ?, seal_links = ?, seal_rows = ?{touch} WHERE id = ?",
                     (chain, n + 1, count + len(entries), *extra, debate_id))
    conn.execute("INSERT INTO seal(debate_id, n, rows_json, chain_sha256, at) VALUES (?,?,?,?,?)",
                 (debate_id, n + 1, stored, chain, when))
    if heads is not None:
        heads[debate_id] = (chain, n + 1, count + len(entries))
    return True


def seal_existing(conn: sqlite3.Connection, at: float) -> int:
    """Build a chain for every debate that has none, from the rows it holds (journals written
    before the seal, migration v6), marked ``sealed on migration at``. Returns how many.

    The order in which old rows were written is not known exactly; they are linked table by
    table in :data:`SEALED`'s order, by key. Such a chain vouches for the rows from ``at`` on,
    not before: :func:`verify` and the export say so."""
    debates = [r[0] for r in conn.execute("SELECT id FROM debates WHERE seal_head IS NULL ORDER BY created_at, id")]
    # a table of a later layout is not there yet when an older journal is sealed (v6): it has no rows
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for debate_id in debates:
        for table, (key, columns) in SEALED.items():  # one link per table
            if table not in present:
                continue
            rows: list[tuple[str, Any, Sequence[Any] | None]] = [(table, r[0], r[1:]) for r in conn.execute(
                f"SELECT {key}, {', '.join(columns)} FROM {table} WHERE {_OWNER[table]} = ? ORDER BY {key}", (debate_id,))]
            append(conn, debate_id, rows, at)
        conn.execute("UPDATE debates SET sealed_on_migration_at = ? WHERE id = ?", (at, debate_id))
    return len(debates)


# -- checking -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    """One row (or link) that does not match the seal. ``n`` orders problems along the chain
    (rows no link covers come after, by time)."""

    debate_id: str
    table: str
    key: str
    what: str  # "changed", "deleted", "inserted", "reordered", "chain"
    detail: str
    at: float | None
    n: int

    def __str__(self) -> str:
        when = "time unknown" if self.at is None else iso(self.at)
        return f"{self.table} row {self.key} (written {when}): {self.what} — {self.detail}"


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found for one debate."""

    debate_id: str
    rows: int
    head: str | None
    sealed_on_migration_at: float | None
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def iso(ts: float) -> str:
    """A time as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds")


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


def _check_links(debate_id: str, links: Sequence[Link], head: str | None, count: int | None,  # noqa: C901
                 current: dict[tuple[str, str], str | None], times: dict[tuple[str, str], float | None],
                 values: dict[tuple[str, str], tuple[Any, ...]] | None = None) -> list[Problem]:
    """The checks shared by the journal and an export: each link chains from the one before;
    the last is the head; each row matches its latest link; no row lacks a link.

    ``current`` maps every sealed row present, ``(table, key)``, to its hash now (``None``
    where the row cannot be read back, e.g. an export that carries hashes only)."""
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
            first = link.rows[0] if link.rows else ("seal", "-", "")
            problems.append(Problem(debate_id, first[0], first[1], "chain",
                                    f"seal link {link.n} does not follow link {i - 1}: a link was changed, removed, "
                                    "inserted or reordered", link.at, i))
            broken = True
            continue
        previous = link.chain_sha256
    if not broken and head is not None and (previous != head or count != len(links)):
        last = links[-1] if links else None
        where = last.rows[-1] if last and last.rows else ("seal", "-", "")
        problems.append(Problem(debate_id, where[0], where[1], "chain",
                                f"the chain ends at link {len(links)} ({previous[:12]}…) but its head says "
                                f"{count} links ({head[:12]}…): links were removed from the end or added",
                                last.at if last else None, len(links) + 1))
    changed = [i for i, mark in latest.items() if i in current and current[i] not in (None, mark.row_sha256)]
    for ident, mark in latest.items():
        if ident not in current:
            problems.append(Problem(debate_id, ident[0], ident[1], "deleted", "the row is gone", mark.at, mark.n))
            continue
        now = current[ident]
        if now is None or now == mark.row_sha256:
            continue
        other = _moved_from(ident, changed, latest, values or {})
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
                values: dict[tuple[str, str], tuple[Any, ...]]) -> tuple[str, str] | None:
    """The other changed row of the same table whose sealed content this row now holds under its
    own key (two rows swapped, or their keys exchanged), if any."""
    row = values.get(ident)
    if row is None:
        return None
    key_column, columns = SEALED[ident[0]]
    at = columns.index(key_column)
    for other in changed:
        if other[0] != ident[0] or other == ident:
            continue
        as_other = (*row[:at], _typed_key(other[0], other[1]), *row[at + 1:])
        if row_sha256(ident[0], as_other) == latest[other].row_sha256:
            return other
    return None


def verify(conn: sqlite3.Connection, debate_id: str) -> Verdict:
    """Recompute one debate's chain from the journal and compare every sealed row with it."""
    head_row = _head(conn, debate_id)
    links = [_link(r[0], json.loads(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT n, rows_json, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,))]
    current, times, values = _current(conn, debate_id)
    if head_row is None:
        problems = [Problem(debate_id, "debates", debate_id, "inserted", "the debate has no seal at all", None, 0)]
        return Verdict(debate_id, 0, None, None, tuple(problems))
    problems = _check_links(debate_id, links, head_row[0], head_row[1], current, times, values)
    return Verdict(debate_id, sum(len(link.rows) for link in links), head_row[0], head_row[3], tuple(problems))


def _head(conn: sqlite3.Connection, debate_id: str) -> tuple[str, int, int, float | None] | None:
    """The debate's head, links, rows sealed and migration mark; ``None`` where it has no seal."""
    row = conn.execute("SELECT seal_head, seal_links, seal_rows, sealed_on_migration_at FROM debates WHERE id = ?",
                       (debate_id,)).fetchone()
    return None if row is None or row[0] is None else (row[0], row[1], row[2], row[3])


def _link(n: Any, rows: Any, chain: Any, at: Any) -> Link:
    """A link as stored or exported (rows as ``[table, key, row_sha256]`` lists)."""
    return Link(int(n), tuple((str(t), str(k), str(h)) for t, k, h in rows), str(chain), float(at))


def _current(conn: sqlite3.Connection, debate_id: str) -> tuple[dict[tuple[str, str], str | None],
                                                                  dict[tuple[str, str], float | None],
                                                                  dict[tuple[str, str], tuple[Any, ...]]]:
    """Every sealed row of the debate as it is now: its hash, when it says it was written, and
    its sealed values."""
    current: dict[tuple[str, str], str | None] = {}
    times: dict[tuple[str, str], float | None] = {}
    values: dict[tuple[str, str], tuple[Any, ...]] = {}
    for table, (key, columns) in SEALED.items():
        time_col = next((c for c in _TIME_COLUMNS if c in columns), None)
        select = ", ".join((key, *columns, time_col or "NULL"))
        for r in conn.execute(f"SELECT {select} FROM {table} WHERE {_OWNER[table]} = ?", (debate_id,)):
            ident = (table, str(r[0]))
            values[ident] = tuple(r[1:-1])
            current[ident] = row_sha256(table, values[ident])
            times[ident] = r[-1]
    return current, times, values


def verify_all(conn: sqlite3.Connection) -> list[Verdict]:
    """:func:`verify` for every debate in the journal, oldest first."""
    return [verify(conn, r[0]) for r in conn.execute("SELECT id FROM debates ORDER BY created_at, id").fetchall()]


# -- carrying the chain in an export ----------------------------------------------------------

def summary(conn: sqlite3.Connection, debate_id: str) -> dict[str, Any]:
    """The chain's head, its length and its migration mark (``show``, the Markdown export)."""
    head = _head(conn, debate_id)
    migrated = None if head is None or head[3] is None else iso(head[3])
    return {"head": None if head is None else head[0], "rows": 0 if head is None else head[2],
            "links": 0 if head is None else head[1], "sealed_on_migration_at": migrated}


def export(conn: sqlite3.Connection, debate_id: str, *, with_rows: bool = True) -> dict[str, Any]:
    """The ``"seal"`` object of the JSON export: head, link count, migration mark and every link.

    With ``with_rows`` each row's latest link carries the row's sealed columns, so a recipient
    recomputes every hash without the journal (:func:`verify_export`); without (a redacted
    export) the links carry hashes only, so the chain and head can be checked but not the text."""
    links = [_link(r[0], json.loads(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT n, rows_json, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,))]
    last = {(table, key): link.n for link in links for table, key, _ in link.rows}
    chain: list[dict[str, Any]] = []
    for link in links:
        sealed_rows: list[dict[str, Any]] = []
        for table, key, row_hash in link.rows:
            entry: dict[str, Any] = {"table": table, "key": key, "row_sha256": row_hash}
            if with_rows and last[(table, key)] == link.n:
                values = conn.execute(_select(table), (debate_id, _typed_key(table, key))).fetchone()
                if values is not None:
                    entry["row"] = dict(zip(SEALED[table][1], tuple(values)))
            sealed_rows.append(entry)
        chain.append({"n": link.n, "rows": sealed_rows, "chain_sha256": link.chain_sha256, "at": link.at})
    return {**summary(conn, debate_id), "genesis": genesis(debate_id), "rows_included": with_rows, "chain": chain}


def _typed_key(table: str, key: str) -> Any:
    return key if table in ("debates", "provenance", "evidence") else int(key)


class ExportError(ValueError):
    """The file is not a JSON export that carries a seal."""


def verify_export(document: dict[str, Any]) -> Verdict:
    """Check an export without the journal: the chain from its genesis to its head, each row
    carried in the chain against its hash, and the export's readable sections (debate, turns,
    distributions, metrics, judgements, moderator events, participants, provenance) against
    those rows — so an edit to either is found."""
    seal = document.get("seal")
    debate_id = document.get("id")
    if not isinstance(seal, dict) or not isinstance(debate_id, str) or not isinstance(seal.get("chain"), list):
        raise ExportError("it has no \"seal\" object with a chain (export it again with `symposium export ID --format json`)")
    try:
        links = [_link(x["n"], [(r["table"], r["key"], r["row_sha256"]) for r in x["rows"]], x["chain_sha256"], x["at"])
                 for x in seal["chain"]]
        carried = [r for x in seal["chain"] for r in x["rows"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ExportError(f"a seal link is malformed ({exc!r})") from None
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    current: dict[tuple[str, str], str | None] = {}
    for r in carried:
        ident = (str(r["table"]), str(r["key"]))
        if isinstance(r.get("row"), dict) and ident[0] in SEALED:
            row = r["row"]
            columns = SEALED[ident[0]][1]
            rows[ident] = row
            current[ident] = row_sha256(ident[0], tuple(row.get(c) for c in columns)) if set(row) == set(columns) else "?"
        else:
            current.setdefault(ident, None)
    problems = _check_links(debate_id, links, seal.get("head"), seal.get("links"), current, {})
    if seal.get("rows_included", True):
        where = {f"{t}/{k}": link for link in links for t, k, _ in link.rows}
        problems += _check_sections(debate_id, document, rows, where)
    problems.sort(key=lambda p: (p.n, p.at or 0.0))
    migrated = seal.get("sealed_on_migration_at")
    migrated_ts = datetime.fromisoformat(migrated).timestamp() if isinstance(migrated, str) else None
    return Verdict(debate_id, len(carried), seal.get("head"), migrated_ts, tuple(problems))


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    """A sealed row as the export shows it: ``*_json`` columns decoded, under their short name."""
    out: dict[str, Any] = {}
    for column, value in row.items():
        if column.endswith("_json"):
            out[column.removesuffix("_json")] = None if value is None else json.loads(value)
        else:
            out[column] = value
    return out


def _check_sections(debate_id: str, doc: dict[str, Any], rows: dict[tuple[str, str], dict[str, Any]],
                    links: dict[str, Link]) -> list[Problem]:
    """The export's readable sections must say what the sealed rows say, field by field."""
    problems: list[Problem] = []

    def of(table: str) -> list[tuple[str, dict[str, Any]]]:
        found = [(key, _decoded(row)) for (t, key), row in rows.items() if t == table]
        return sorted(found, key=lambda kr: int(kr[0]) if kr[0].lstrip("-").isdigit() else 0)

    def differs(table: str, key: str, shown: dict[str, Any], sealed: dict[str, Any], fields: Iterable[str]) -> None:
        for f in fields:
            if f in shown and f in sealed and shown[f] != sealed[f]:
                link = links.get(f"{table}/{key}")
                problems.append(Problem(debate_id, table, key, "changed",
                                        f"the export's {f!r} differs from the sealed row", link.at if link else None,
                                        link.n if link else 0))
                return

    def section(table: str, name: str, fields: Sequence[str] | None = None, items: Any = None) -> None:
        shown = (doc.get(name) if items is None else items) or []
        sealed = of(table)
        if len(shown) != len(sealed):
            problems.append(Problem(debate_id, table, "-", "changed" if shown else "deleted",
                                    f"the export shows {len(shown)} {name}, the seal holds {len(sealed)}", None, 0))
        for (key, row), item in zip(sealed, shown):
            differs(table, key, item, row, fields or item.keys())

    debate_rows = of("debates")
    if debate_rows:
        differs("debates", debate_id, doc, debate_rows[0][1], [c.removesuffix("_json") for c in SEALED["debates"][1]])
    section("participants", "participants")
    section("turns", "turns")
    section("judgements", "judgements")
    section("moderator_events", "moderator_events")
    section("notices", "notices")
    section("phases", "phases")
    provenance = of("provenance")
    if provenance:
        shown_provenance = dict(doc.get("provenance") or {})
        ended = shown_provenance.pop("ended_at", None)
        finished = debate_rows[0][1].get("finished_at") if debate_rows else None
        differs("provenance", debate_id, {"provenance": shown_provenance}, provenance[0][1], ["provenance"])
        if ended != (None if finished is None else iso(finished)):
            differs("debates", debate_id, {"ended_at": ended}, {"ended_at": finished}, ["ended_at"])
    dists: dict[int, dict[str, float]] = {}
    for _, d in of("distributions"):
        dists.setdefault(d["turn_id"], {})[d["label"]] = d["probability"]
    for t in doc.get("turns") or []:
        if "distribution" in t and t["distribution"] != dists.get(t.get("id")):
            link = links.get(f"turns/{t.get('id')}")
            problems.append(Problem(debate_id, "distributions", f"turn {t.get('id')}", "changed",
                                    "the export's distribution differs from the sealed rows",
                                    link.at if link else None, link.n if link else 0))
    sealed_metrics = {(m["round"], m["name"]): (key, m["value"]) for key, m in of("metrics")}
    shown_metrics = {(r["round"], name): value for r in doc.get("metrics") or [] for name, value in r.items()
                     if name not in ("round", "phase", "kappa")}
    for ident in sorted(set(sealed_metrics) | set(shown_metrics), key=str):
        key, value = sealed_metrics.get(ident, ("-", None))
        if ident not in shown_metrics or ident not in sealed_metrics or shown_metrics[ident] != value:
            link = links.get(f"metrics/{key}")
            problems.append(Problem(debate_id, "metrics", key, "changed",
                                    f"round {ident[0]} {ident[1]}: the export shows {shown_metrics.get(ident)!r}, "
                                    f"the seal holds {value!r}", link.at if link else None, link.n if link else 0))
    found = doc.get("evidence")
    evidence: dict[str, Any] = found if isinstance(found, dict) else {}
    section("evidence_files", "evidence files", items=evidence.get("files") or [])
    section("evidence_passages", "evidence passages", items=evidence.get("passages") or [])
    section("citations", "citations", items=[c for t in doc.get("turns") or [] for c in t.get("citations") or []])
    return problems
