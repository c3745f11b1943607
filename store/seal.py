"""The seal: each debate's journal rows, hash-chained in the order they were written.

Why: a clinician or lawyer must be able to show that a debate's record was not edited after
the fact, and a recipient of an export must be able to check that without the journal file.

How (one chain per debate):

* every transaction that writes sealed rows (:data:`SEALED`; one per event, ``Journal.record``)
  appends one *link* to the ``seal`` table before it commits: for each row written, in order,
  its table, its key and the SHA-256 of its sealed columns as stored (:func:`row_sha256`); the
  time; and the chain hash — SHA-256 over the previous link's chain hash and all of this link
  (:func:`link_sha256`). The first link chains from a genesis hash of the debate's id, so a
  chain cannot be moved to another debate;
* the newest chain hash is the debate's *head* (``seal_heads``), printed in ``show``, the JSON
  export and the report: a reader who noted it can later tell that nothing was appended,
  removed or rewritten, even by someone who recomputed the whole chain;
* a row written more than once (a debate's status at its end, a metric recomputed, a round's
  κ) is sealed again each time; :func:`verify` checks each row against its *latest* seal, and
  every link against its predecessor.

:func:`verify` names the first row that differs from its seal (changed, deleted, swapped with
another) and every row that no link covers (inserted), with its table and time. What the seal
cannot see, said plainly: a whole debate deleted (its chain goes with it: keep the head), and
the bookkeeping columns left out of :data:`SEALED` (``debates.updated_at`` and
``events_recorded``, rewritten by every event; the full-text index, derived from the turns).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

#: The sealed tables: per table, its key column (unique within a debate) and the columns each
#: link's row hash covers, in order. Every column of these tables is covered except
#: ``debates.updated_at`` and ``debates.events_recorded`` (bookkeeping rewritten by each event).
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
}

#: The debate's own column naming it, per table (``debates`` names itself by ``id``).
_OWNER = {table: ("id" if table == "debates" else "debate_id") for table in SEALED}

#: Columns that say when a row was written, to date an inserted row (no link dates it).
_TIME_COLUMNS = ("created_at", "started_at")


def genesis(debate_id: str) -> str:
    """The hash a debate's chain starts from: ties the chain to its debate's id."""
    return hashlib.sha256(f"symposium seal v1\n{debate_id}".encode()).hexdigest()


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # made once: this is the hot path


def row_sha256(table: str, values: Sequence[Any]) -> str:
    """The hash of one row's sealed column values, in :data:`SEALED`'s order, tagged with its table.

    SHA-256 over ``<table>\n`` then each value as SQLite hands it back, tagged and delimited so
    no two rows encode alike: ``n;`` for NULL, ``i<decimal>;`` for an integer, ``f<repr>;`` for
    a real (Python's shortest round-trip form), ``s<byte length>:<UTF-8>`` for text and
    ``b<length>:<bytes>`` for a blob. A whole-valued real hashes as the integer: a REAL column
    keeps ``3.0`` as the integer 3 on disk and reads it back as 3.0, while ``INSERT … RETURNING``
    hands back the 3. (Not JSON: escaping a turn's text cost more than the rest of a turn's write.)"""
    h = hashlib.sha256(table.encode() + b"\n")
    for value in values:
        if value is None:
            h.update(b"n;")
        elif isinstance(value, str):
            data = value.encode("utf-8", "surrogatepass")
            h.update(b"s%d:" % len(data))
            h.update(data)
        elif isinstance(value, int):
            h.update(b"i%d;" % value)
        elif isinstance(value, float):
            h.update(b"i%d;" % value if value.is_integer() and abs(value) < 2**53 else b"f%s;" % repr(value).encode())
        elif isinstance(value, bytes):
            h.update(b"b%d:" % len(value))
            h.update(value)
        else:
            raise TypeError(f"{table}: a {type(value).__name__} is not a value SQLite stores; cannot seal it")
    return h.hexdigest()


Entry = tuple[str, str, str]
"""One row sealed by a link: its table, its key (as text) and its :func:`row_sha256`."""


def link_sha256(previous: str, n: int, rows: Sequence[Entry], at: float) -> str:
    """The chain hash of link ``n``: covers the previous chain hash and all of this link (its
    number, every row it seals, its time)."""
    payload = _encode([previous, n, [list(r) for r in rows], at])
    return hashlib.sha256(payload.encode()).hexdigest()


def returning(table: str) -> str:
    """`` RETURNING`` the sealed columns, for a write that hands its row straight to :func:`append`
    (the busiest writes: a turn, its distribution, its model call) instead of reading it back."""
    return " RETURNING " + ", ".join(SEALED[table][1])


def _select(table: str) -> str:
    key, columns = SEALED[table]
    return f"SELECT {', '.join(columns)} FROM {table} WHERE {_OWNER[table]} = ? AND {key} = ?"


def _key(value: Any) -> str:
    return str(value)


Head = tuple[str, int, int]
"""A chain's head as a writer last left it: chain hash, links, rows sealed."""


def append(conn: sqlite3.Connection, debate_id: str, rows: Iterable[tuple[str, Any, Sequence[Any] | None]],
           at: float | None = None, heads: dict[str, Head] | None = None) -> None:
    """Append one link sealing every ``(table, key, values)`` written by the caller's
    transaction (``values`` ``None``: read back as stored now), in the order written.

    Runs inside that transaction: the rows and their link are kept together or not at all.
    ``heads`` caches each debate's head between transactions of one writer, so a turn costs two
    statements here (move the head if it is still the cached one; add the link); when another
    writer moved it meanwhile, the head is read again."""
    entries: list[Entry] = []
    for table, key, given in rows:
        values = given if given is not None else conn.execute(_select(table), (debate_id, key)).fetchone()
        if values is None:  # the write touched no row (an UPDATE of a debate that is not there)
            continue
        entries.append((table, _key(key), row_sha256(table, tuple(values))))
    if not entries:
        return
    when = time.time() if at is None else at
    cached = heads.get(debate_id) if heads is not None else None
    moved = 0
    if cached is not None:
        previous, n, count = cached
        chain = link_sha256(previous, n + 1, entries, when)
        moved = conn.execute("UPDATE seal_heads SET head = ?, links = ?, rows = ? WHERE debate_id = ? AND head = ?"
                             " AND links = ?", (chain, n + 1, count + len(entries), debate_id, previous, n)).rowcount
    if not moved:  # no cached head, or another writer moved it: read it
        found = conn.execute("SELECT head, links, rows FROM seal_heads WHERE debate_id = ?", (debate_id,)).fetchone()
        previous, n, count = (found[0], found[1], found[2]) if found is not None else (genesis(debate_id), 0, 0)
        chain = link_sha256(previous, n + 1, entries, when)
        conn.execute("INSERT INTO seal_heads(debate_id, head, links, rows) VALUES (?,?,?,?) ON CONFLICT(debate_id)"
                     " DO UPDATE SET head = excluded.head, links = excluded.links, rows = excluded.rows",
                     (debate_id, chain, n + 1, count + len(entries)))
    conn.execute("INSERT INTO seal(debate_id, n, rows_json, chain_sha256, at) VALUES (?,?,?,?,?)",
                 (debate_id, n + 1, _encode([list(e) for e in entries]), chain, when))
    if heads is not None:
        heads[debate_id] = (chain, n + 1, count + len(entries))


def seal_existing(conn: sqlite3.Connection, at: float) -> int:
    """Build a chain for every debate that has none, from the rows it holds (journals written
    before the seal, migration v6), marked ``sealed on migration at``. Returns how many.

    The order in which old rows were written is not known exactly; they are linked table by
    table in :data:`SEALED`'s order, by key. Such a chain vouches for the rows from ``at`` on,
    not before: :func:`verify` and the export say so."""
    debates = [r[0] for r in conn.execute(
        "SELECT id FROM debates WHERE id NOT IN (SELECT debate_id FROM seal_heads) ORDER BY created_at, id")]
    for debate_id in debates:
        for table, (key, columns) in SEALED.items():  # one link per table
            rows: list[tuple[str, Any, Sequence[Any] | None]] = [(table, r[0], r[1:]) for r in conn.execute(
                f"SELECT {key}, {', '.join(columns)} FROM {table} WHERE {_OWNER[table]} = ? ORDER BY {key}", (debate_id,))]
            append(conn, debate_id, rows, at)
        conn.execute("UPDATE seal_heads SET sealed_on_migration_at = ? WHERE debate_id = ?", (at, debate_id))
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
        expected = link_sha256(previous, i, link.rows, link.at)
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
    head_row = conn.execute("SELECT head, links, rows, sealed_on_migration_at FROM seal_heads WHERE debate_id = ?",
                            (debate_id,)).fetchone()
    links = [_link(r[0], json.loads(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT n, rows_json, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,))]
    current, times, values = _current(conn, debate_id)
    if head_row is None:
        problems = [Problem(debate_id, "debates", debate_id, "inserted", "the debate has no seal at all", None, 0)]
        return Verdict(debate_id, 0, None, None, tuple(problems))
    problems = _check_links(debate_id, links, head_row[0], head_row[1], current, times, values)
    return Verdict(debate_id, sum(len(link.rows) for link in links), head_row[0], head_row[3], tuple(problems))


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
            ident = (table, _key(r[0]))
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
    head = conn.execute("SELECT head, links, rows, sealed_on_migration_at FROM seal_heads WHERE debate_id = ?",
                        (debate_id,)).fetchone()
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
    return key if table in ("debates", "provenance") else int(key)


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

    def section(table: str, name: str, fields: Sequence[str] | None = None) -> None:
        shown = doc.get(name) or []
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
    return problems
