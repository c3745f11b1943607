"""The seal: each debate's journal rows, hash-chained in the order they were written.

Why: a clinician or lawyer must be able to show that a debate's record was not edited after
the fact, and a recipient of an export must be able to check that without the journal file.

How (one chain per debate):

* every write of a sealed row (:data:`SEALED`) appends one *link* to the ``seal`` table, in the
  same transaction as the write: the row's table and key, the SHA-256 of the row's sealed
  columns as stored (:func:`row_sha256`), the time, and the chain hash — SHA-256 over the
  previous link's chain hash and this link's fields (:func:`link_sha256`). The first link
  chains from a genesis hash of the debate's id, so a chain cannot be moved to another debate;
* the newest chain hash is the debate's *head* (``seal_heads``), printed in ``show``, the JSON
  export and the report: a reader who noted it can later tell that nothing was appended,
  removed or rewritten, even by someone who recomputed the whole chain;
* a row written more than once (a debate's status at its end, a metric recomputed, a round's
  κ) gets a new link each time; :func:`verify` checks each row against its *latest* link, and
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


def _canonical(value: Any) -> Any:
    """A whole-valued float as an integer: a REAL column keeps ``3.0`` as the integer 3 on disk
    and reads it back as 3.0, but ``INSERT … RETURNING`` hands back the 3 — both hash alike."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def row_sha256(table: str, values: Sequence[Any]) -> str:
    """The hash of one row's sealed column values (text, integer, real, NULL; whole floats as
    integers), in :data:`SEALED`'s order, tagged with the table: SHA-256 of compact JSON."""
    payload = _encode([table, *map(_canonical, values)])
    return hashlib.sha256(payload.encode()).hexdigest()


def link_sha256(previous: str, n: int, table: str, key: str, row_hash: str, at: float) -> str:
    """The chain hash of link ``n``: covers the previous chain hash and all of this link."""
    payload = _encode([previous, n, table, key, row_hash, at])
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


def append(conn: sqlite3.Connection, debate_id: str, rows: Iterable[tuple[str, Any, Sequence[Any] | None]],
           at: float | None = None) -> None:
    """Append one link per ``(table, key, values)`` to the debate's chain, hashing each row's
    sealed values (``None``: read back as stored now). Runs inside the caller's transaction (the
    write the links seal): the row and its link are kept together or not at all."""
    head = conn.execute("SELECT head, rows FROM seal_heads WHERE debate_id = ?", (debate_id,)).fetchone()
    previous, n = (head[0], head[1]) if head is not None else (genesis(debate_id), 0)
    when = time.time() if at is None else at
    links = []
    for table, key, given in rows:
        values = given if given is not None else conn.execute(_select(table), (debate_id, key)).fetchone()
        if values is None:  # the write touched no row (an UPDATE of a debate that is not there)
            continue
        n += 1
        k = _key(key)
        row_hash = row_sha256(table, tuple(values))
        previous = link_sha256(previous, n, table, k, row_hash, when)
        links.append((debate_id, n, table, k, row_hash, previous, when))
    if not links:
        return
    conn.executemany("INSERT INTO seal(debate_id, n, tbl, row_key, row_sha256, chain_sha256, at) VALUES (?,?,?,?,?,?,?)",
                     links)
    conn.execute("INSERT INTO seal_heads(debate_id, head, rows) VALUES (?,?,?) ON CONFLICT(debate_id)"
                 " DO UPDATE SET head = excluded.head, rows = excluded.rows", (debate_id, previous, n))


def seal_existing(conn: sqlite3.Connection, at: float) -> int:
    """Build a chain for every debate that has none, from the rows it holds (journals written
    before the seal, migration v6), marked ``sealed on migration at``. Returns how many.

    The order in which old rows were written is not known exactly; they are linked table by
    table in :data:`SEALED`'s order, by key. Such a chain vouches for the rows from ``at`` on,
    not before: :func:`verify` and the export say so."""
    debates = [r[0] for r in conn.execute(
        "SELECT id FROM debates WHERE id NOT IN (SELECT debate_id FROM seal_heads) ORDER BY created_at, id")]
    for debate_id in debates:
        rows: list[tuple[str, Any, Sequence[Any] | None]] = []
        for table, (key, _) in SEALED.items():
            rows += [(table, r[0], None) for r in conn.execute(
                f"SELECT {key} FROM {table} WHERE {_OWNER[table]} = ? ORDER BY {key}", (debate_id,))]
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
    n: int
    table: str
    key: str
    row_sha256: str
    chain_sha256: str
    at: float


def _check_links(debate_id: str, links: Sequence[Link], head: str | None, count: int | None,
                 current: dict[tuple[str, str], str | None], times: dict[tuple[str, str], float | None],
                 values: dict[tuple[str, str], tuple[Any, ...]] | None = None) -> list[Problem]:
    """The checks shared by the journal and an export: each link chains from the one before;
    the last is the head; each row matches its latest link; no row lacks a link.

    ``current`` maps every sealed row present, ``(table, key)``, to its hash now (``None``
    where the row cannot be read back, e.g. an export that carries hashes only)."""
    problems: list[Problem] = []
    previous = genesis(debate_id)
    latest: dict[tuple[str, str], Link] = {}
    broken = False
    for i, link in enumerate(links, start=1):
        latest[(link.table, link.key)] = link  # rows are still checked against their links past a break
        if broken:
            continue
        expected = link_sha256(previous, i, link.table, link.key, link.row_sha256, link.at)
        if link.n != i or link.chain_sha256 != expected:
            problems.append(Problem(debate_id, link.table, link.key, "chain",
                                    f"seal link {link.n} does not follow link {i - 1}: a link was changed, removed, "
                                    "inserted or reordered", link.at, i))
            broken = True
            continue
        previous = link.chain_sha256
    if not broken:
        if head is not None and (previous != head or count != len(links)):
            last = links[-1] if links else None
            problems.append(Problem(debate_id, last.table if last else "seal", last.key if last else "-", "chain",
                                    f"the chain ends at link {len(links)} ({previous[:12]}…) but its head says "
                                    f"{count} links ({head[:12]}…): links were removed from the end or added",
                                    last.at if last else None, len(links) + 1))
    changed = [i for i, link in latest.items() if i in current and current[i] not in (None, link.row_sha256)]
    for ident, link in latest.items():
        if ident not in current:
            problems.append(Problem(debate_id, ident[0], ident[1], "deleted", "the row is gone", link.at, link.n))
            continue
        now = current[ident]
        if now is None or now == link.row_sha256:
            continue
        other = _moved_from(ident, changed, latest, values or {})
        if other is not None:
            problems.append(Problem(debate_id, ident[0], ident[1], "reordered",
                                    f"it now holds what was sealed as {other[0]} row {other[1]}", link.at, link.n))
        else:
            problems.append(Problem(debate_id, ident[0], ident[1], "changed",
                                    "its content differs from what was sealed", link.at, link.n))
    extra = len(links) + 2
    for ident in sorted(set(current) - set(latest), key=lambda i: (times.get(i) or 0.0, i)):
        problems.append(Problem(debate_id, ident[0], ident[1], "inserted", "no seal link covers this row",
                                times.get(ident), extra))
    problems.sort(key=lambda p: (p.n, p.at or 0.0))
    return problems


def _moved_from(ident: tuple[str, str], changed: Sequence[tuple[str, str]], latest: dict[tuple[str, str], Link],
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
    head_row = conn.execute("SELECT head, rows, sealed_on_migration_at FROM seal_heads WHERE debate_id = ?",
                            (debate_id,)).fetchone()
    links = [Link(r[0], r[1], r[2], r[3], r[4], r[5]) for r in conn.execute(
        "SELECT n, tbl, row_key, row_sha256, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n", (debate_id,))]
    current, times, values = _current(conn, debate_id)
    if head_row is None:
        problems = [Problem(debate_id, "debates", debate_id, "inserted", "the debate has no seal at all", None, 0)]
        return Verdict(debate_id, 0, None, None, tuple(problems))
    problems = _check_links(debate_id, links, head_row[0], head_row[1], current, times, values)
    return Verdict(debate_id, len(links), head_row[0], head_row[2], tuple(problems))


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
    head = conn.execute("SELECT head, rows, sealed_on_migration_at FROM seal_heads WHERE debate_id = ?",
                        (debate_id,)).fetchone()
    migrated = None if head is None or head[2] is None else iso(head[2])
    return {"head": None if head is None else head[0], "rows": 0 if head is None else head[1],
            "sealed_on_migration_at": migrated}


def export(conn: sqlite3.Connection, debate_id: str, *, with_rows: bool = True) -> dict[str, Any]:
    """The ``"seal"`` object of the JSON export: head, link count, migration mark and every link.

    With ``with_rows`` each row's latest link carries the row's sealed columns, so a recipient
    recomputes every hash without the journal (:func:`verify_export`); without (a redacted
    export) the links carry hashes only, so the chain and head can be checked but not the text."""
    links = conn.execute("SELECT n, tbl, row_key, row_sha256, chain_sha256, at FROM seal WHERE debate_id = ? ORDER BY n",
                         (debate_id,)).fetchall()
    last = {(r[1], r[2]): r[0] for r in links}
    chain: list[dict[str, Any]] = []
    for n, table, key, row_hash, chain_hash, at in links:
        link: dict[str, Any] = {"n": n, "table": table, "key": key, "row_sha256": row_hash, "chain_sha256": chain_hash,
                                "at": at}
        if with_rows and last[(table, key)] == n:
            values = conn.execute(_select(table), (debate_id, _typed_key(table, key))).fetchone()
            if values is not None:
                link["row"] = dict(zip(SEALED[table][1], tuple(values)))
        chain.append(link)
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
        links = [Link(int(x["n"]), str(x["table"]), str(x["key"]), str(x["row_sha256"]), str(x["chain_sha256"]),
                      float(x["at"])) for x in seal["chain"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ExportError(f"a seal link is malformed ({exc!r})") from None
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    current: dict[tuple[str, str], str | None] = {}
    for x in seal["chain"]:
        ident = (str(x["table"]), str(x["key"]))
        if "row" in x and ident[0] in SEALED:
            row = x["row"]
            columns = SEALED[ident[0]][1]
            rows[ident] = row
            current[ident] = row_sha256(ident[0], tuple(row.get(c) for c in columns)) if set(row) == set(columns) else "?"
        else:
            current[ident] = None
    problems = _check_links(debate_id, links, seal.get("head"), seal.get("rows"), current, {})
    if seal.get("rows_included", True):
        problems += _check_sections(debate_id, document, rows, {x.table + "/" + x.key: x for x in links})
    problems.sort(key=lambda p: (p.n, p.at or 0.0))
    migrated = seal.get("sealed_on_migration_at")
    migrated_ts = datetime.fromisoformat(migrated).timestamp() if isinstance(migrated, str) else None
    return Verdict(debate_id, len(links), seal.get("head"), migrated_ts, tuple(problems))


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
