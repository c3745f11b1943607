"""Checking a JSON export against its own seal, without the journal (``symposium verify --export``).

An export says "ok" only when everything it shows is what a signed chain holds:

* its seal is this format (:data:`store.seal.FORMAT`), and lists each sealed table's columns as
  the journal layout it names declares them (rebuilt here from ``store/schema.py``);
* its chain runs link for link from the debate's genesis to its head; every row's latest link
  carries the row, whose hash is the one sealed, and nothing else rides along;
* the head's signature holds (:mod:`store.signing`) — who signed, and whether a person trusts
  that key, is :func:`store.seal.judged`'s to say;
* every readable section (every key outside ``"seal"``) is exactly what the sealed rows give
  when read as the export reads the journal (:func:`expected`): a field changed, added or
  removed, a row added, removed or reordered is named, with the row and the link that sealed it.

A file with no seal, a redacted copy (which carries none: ``store.seal.redacted``) or an export
in an earlier format is "not verifiable": never "ok", and not called tampered either.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from . import seal
from .provenance import with_end
from .schema import LATEST, MIGRATIONS


class ExportError(ValueError):
    """The file's seal cannot be read at all (a link or row of the wrong shape)."""


#: Every key an export's seal holds, each link, and each sealed row's entry ("row" only in the
#: row's latest link).
_SEAL_KEYS = frozenset({"format", "layout", "columns", "head", "links", "rows", "sealed_on_migration_at", "key",
                        "signature", "signed_from", "chain"})
_LINK_KEYS = frozenset({"n", "rows", "chain_sha256", "at"})
_ENTRY_KEYS = frozenset({"table", "key", "row_sha256"})

#: The export's lists, as ``Queries.debate`` reads them: the table each shows, the sealed
#: columns it leaves out, and the column its items are ordered by.
LISTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "participants": ("participants", ("id", "debate_id"), "id"),
    "phases": ("phases", ("id", "debate_id"), "id"),
    "turns": ("turns", ("debate_id",), "seq"),
    "judgements": ("judgements", ("id", "debate_id"), "id"),
    "moderator_events": ("moderator_events", ("id", "debate_id"), "id"),
    "notices": ("notices", ("id", "debate_id"), "id"),
    "model_calls": ("model_calls", (), "id"),
    "call_costs": ("call_costs", ("id", "debate_id"), "id"),
    "replies": ("replies", ("id", "debate_id", "created_at"), "id"),
}

#: The journal layout from which exports carry signed seals (migration v7).
FIRST_SIGNED_LAYOUT = 7

Ident = tuple[str, str]


@functools.cache
def layout_columns(version: int) -> seal.Columns:
    """The sealed columns of journal layout ``version``, from the migrations that make it."""
    conn = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS[:version]:
            conn.executescript(migration.sql)
        return seal.columns(conn)
    finally:
        conn.close()


def verify_export(document: Mapping[str, Any]) -> seal.Verdict:
    """Check an export (a parsed JSON object) against its seal: see the module's docstring."""
    debate_id = document.get("id")
    if not isinstance(debate_id, str) or not debate_id:
        raise ExportError('it names no debate ("id"); export one with `symposium export ID --format json`')
    found = document.get("seal")
    if not isinstance(found, dict):
        return _unverifiable(debate_id, "it carries no seal (the debate was journalled without one, or the seal was "
                                        "taken out)")
    if found.get("redacted") is True:
        return _unverifiable(debate_id, "it is a redacted copy, which carries no seal: the seal's hashes would let a "
                                        "reader test guesses of the masked text")
    if found.get("format") != seal.FORMAT:
        return _unverifiable(debate_id, f"its seal is not of format {seal.FORMAT} (it says {found.get('format')!r}): "
                                        "exports made before Symposium signed its records cannot be checked whole; "
                                        "export it again from the journal")
    layout = found.get("layout")
    if not isinstance(layout, int) or isinstance(layout, bool) or layout < FIRST_SIGNED_LAYOUT:
        return _unverifiable(debate_id, f"its seal names no journal layout this check knows ({layout!r})")
    if layout > LATEST:
        return _unverifiable(debate_id, f"it was made by a newer Symposium (journal layout v{layout}; this one knows up "
                                        f"to v{LATEST}): upgrade Symposium to check it")
    chain, head = found.get("chain"), found.get("head")
    if not isinstance(chain, list) or not chain or not isinstance(head, str):
        return _unverifiable(debate_id, "its seal holds no chain or no head")
    sealed = layout_columns(layout)
    problems: list[seal.Problem] = []

    def wrong(detail: str) -> None:
        problems.append(seal.Problem(debate_id, "seal", "-", "changed", detail, None, 0))

    for key in sorted(set(found) - _SEAL_KEYS):
        wrong(f"the seal holds {key!r}, which no export's seal carries")
    for key in sorted(_SEAL_KEYS - set(found)):
        wrong(f"the seal leaves out its {key!r}")
    if found.get("columns") != {t: list(c) for t, c in sealed.items()}:
        wrong(f"the seal's column lists are not those of journal layout v{layout}")
    links, entries = _links(chain)
    latest = {(e["table"], e["key"]): i for i, link in enumerate(entries) for e in link}
    current: dict[Ident, str | None] = {}
    values: dict[Ident, tuple[Any, ...]] = {}
    rows: dict[Ident, dict[str, Any]] = {}
    for i, link in enumerate(entries):
        for e in link:
            ident = (e["table"], e["key"])
            if latest[ident] != i:
                if "row" in e:
                    wrong(f"link {i + 1} carries {ident[0]} row {ident[1]}, which a later link seals again")
                continue
            if "row" in e:  # a row that cannot be hashed is changed, and holds no other row's content
                current[ident], hashed = _hashed(ident[0], e["row"], sealed)
                if current[ident] is not None:
                    rows[ident], values[ident] = e["row"], hashed
    migrated = found.get("sealed_on_migration_at")
    if migrated is not None and (isinstance(migrated, bool) or not isinstance(migrated, int | float)):
        wrong("the seal's migration time is not a number")
        migrated = None
    count = found.get("links")
    problems += seal.check_links(debate_id, links, head, count, current, {}, values, sealed)
    if found.get("rows") != sum(len(link) for link in entries):
        wrong(f"the seal says it holds {found.get('rows')!r} rows, its chain holds {sum(len(x) for x in entries)}")
    signature, bad = seal.signature_of(debate_id, head, found.get("key"), found.get("signature"),
                                       found.get("signed_from"), migrated)
    where = {(t, k): (link.at, link.n) for link in links for t, k, _ in link.rows}
    problems += bad + compare(debate_id, document, rows, where, evidence="citations" in sealed, costs="call_costs" in sealed)
    problems.sort(key=lambda p: p.n)  # by the link that sealed each (one link, one time); the seal's own first
    return seal.Verdict(debate_id, sum(len(x) for x in entries), head, migrated, tuple(problems), signature,
                        count if isinstance(count, int) else len(links))


def _unverifiable(debate_id: str, why: str) -> seal.Verdict:
    return seal.Verdict(debate_id, 0, None, None, (), unverifiable=(why,))


def _links(chain: list[Any]) -> tuple[list[seal.Link], list[list[dict[str, Any]]]]:
    """The chain's links and, per link, its entries; ExportError naming the first that is not
    of the shape an export writes (extra keys are reported as changes, not here)."""
    links: list[seal.Link] = []
    entries: list[list[dict[str, Any]]] = []
    for i, x in enumerate(chain, start=1):
        try:
            if not isinstance(x, dict) or set(x) != _LINK_KEYS or not isinstance(x["rows"], list):
                raise ValueError(f"its keys are {sorted(x) if isinstance(x, dict) else type(x).__name__}")
            for e in x["rows"]:
                if (not isinstance(e, dict) or not _ENTRY_KEYS <= set(e) <= _ENTRY_KEYS | {"row"}
                        or not all(isinstance(e[k], str) for k in _ENTRY_KEYS) or e["table"] not in seal.KEYS):
                    raise ValueError(f"a row entry is {str(e)[:80]}")
            n, at = x["n"], x["at"]
            if isinstance(n, bool) or not isinstance(n, int) or isinstance(at, bool) or not isinstance(at, int | float):
                raise ValueError("its number or time is not a number")
            if not isinstance(x["chain_sha256"], str):
                raise ValueError("its chain hash is not text")
        except ValueError as exc:
            raise ExportError(f"seal link {i} is malformed ({exc})") from None
        links.append(seal.Link(n, tuple((e["table"], e["key"], e["row_sha256"]) for e in x["rows"]),
                               x["chain_sha256"], float(at)))
        entries.append(x["rows"])
    return links, entries


def _hashed(table: str, row: Any, sealed: seal.Columns) -> tuple[str | None, tuple[Any, ...]]:
    """A carried row's hash and values, in the layout's column order; neither (a change) when it
    holds other columns than the layout's, is of a table the layout lacks, or holds a value
    SQLite never returns."""
    if table not in sealed or not isinstance(row, dict) or set(row) != set(sealed[table]):
        return None, ()
    values = tuple(row[c] for c in sealed[table])
    try:
        return seal.row_sha256(table, values), values
    except TypeError:
        return None, ()


def _decoded(row: Mapping[str, Any]) -> dict[str, Any]:
    """A sealed row as the export shows it: ``*_json`` columns decoded, under their short name."""
    return {(c.removesuffix("_json") if c.endswith("_json") else c):
            (None if v is None else json.loads(v)) if c.endswith("_json") else v for c, v in row.items()}


def expected(debate_id: str, rows: Mapping[Ident, Mapping[str, Any]], *, evidence: bool, costs: bool
             ) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """What an export of the sealed ``rows`` shows outside its seal (``Queries.debate``'s
    reading of the journal), and the keys of each list's items, in order. ``evidence``: the
    export's layout has the evidence's tables (v8 on), so it shows each turn's citations and the
    debate's evidence; ``costs``: it has the calls' costs (v9 on), so it shows them."""
    by_table: dict[str, list[tuple[str, Mapping[str, Any]]]] = {t: [] for t in seal.KEYS}  # a table of a later layout: no rows
    for (table, key), row in rows.items():
        by_table[table].append((key, row))
    document = next((_decoded(r) for k, r in by_table["debates"] if k == debate_id), {})
    keys: dict[str, list[str]] = {}
    for name, (table, hidden, order) in LISTS.items():
        if table == "call_costs" and not costs:
            continue
        items = sorted(by_table[table], key=lambda kr: kr[1][order])
        keys[name] = [k for k, _ in items]
        document[name] = [{c: v for c, v in _decoded(r).items() if c not in hidden} for _, r in items]
    ranked = sorted((r for _, r in by_table["distributions"]), key=lambda r: (r["turn_id"], r["rank"]))
    dists: dict[Any, dict[str, Any]] = {}
    for r in ranked:
        dists.setdefault(r["turn_id"], {})[r["label"]] = r["probability"]
    cited: dict[Any, list[dict[str, Any]]] = {}
    for r in sorted((r for _, r in by_table["citations"]), key=lambda r: (r["turn_id"], r["claim_no"])):
        cited.setdefault(r["turn_id"], []).append({c: v for c, v in r.items() if c != "debate_id"})
    for turn in document["turns"]:
        turn["distribution"] = dists.get(turn["id"])
        if evidence:
            turn["citations"] = cited.get(turn["id"], [])
    if evidence:
        document["evidence"] = _evidence(by_table)
    document["metrics"] = _metrics(by_table)
    provenance = [_decoded(r) for _, r in by_table["provenance"]]
    document["provenance"] = (with_end(provenance[0]["provenance"], document.get("finished_at"))
                              if provenance else None)
    return document, keys


def _evidence(by_table: Mapping[str, list[tuple[str, Mapping[str, Any]]]]) -> dict[str, Any] | None:
    """``Queries.evidence``: the settings, the files and the passages in order; ``None`` without."""
    if not by_table["evidence"]:
        return None
    settings = _decoded(by_table["evidence"][0][1])["settings"]

    def listed(table: str) -> list[dict[str, Any]]:
        rows = sorted((r for _, r in by_table[table]), key=lambda r: r["number"])
        return [{c: v for c, v in _decoded(r).items() if c != "debate_id"} for r in rows]

    return {"settings": settings, "files": listed("evidence_files"), "passages": listed("evidence_passages")}


def _metrics(by_table: Mapping[str, list[tuple[str, Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """``Queries.metrics``: one dict per round that has metrics, with its κ and its phase (the
    latest begun at or before it)."""
    phases = [r for _, r in sorted(by_table["phases"], key=lambda kr: kr[1]["id"])]
    kappas = {r["round"]: r["kappa"] for _, r in by_table["rounds"]}
    per_round: dict[Any, dict[str, Any]] = {}
    for _, m in sorted(by_table["metrics"], key=lambda kr: (kr[1]["round"], kr[1]["name"])):
        per_round.setdefault(m["round"], {"round": m["round"], "kappa": kappas.get(m["round"])})[m["name"]] = m["value"]
    for number, row in per_round.items():
        row["phase"] = next((p["name"] for p in reversed(phases) if p["round"] <= number), None)
    return [per_round[k] for k in sorted(per_round)]


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``1`` is not ``1.0`` nor ``true``, an object's key order does not matter."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


_ABSENT = object()


def compare(debate_id: str, document: Mapping[str, Any], rows: Mapping[Ident, Mapping[str, Any]],  # noqa: C901
            where: Mapping[Ident, tuple[float, int]], *, evidence: bool, costs: bool) -> list[seal.Problem]:
    """The export's readable sections against what its sealed rows give, each difference
    named by its row, its field and the link that sealed the row."""
    problems: list[seal.Problem] = []

    def problem(table: str, key: str, what: str, detail: str) -> None:
        at, n = where.get((table, key), (None, 0))
        problems.append(seal.Problem(debate_id, table, key, what, detail, at, n))

    try:
        want, keys = expected(debate_id, rows, evidence=evidence, costs=costs)
    except (KeyError, TypeError, ValueError) as exc:  # rows re-sealed with values no journal writes
        problem("seal", "-", "changed", f"its sealed rows cannot be read as an export reads a journal ({exc!r})")
        return problems
    for field in sorted((set(document) | set(want)) - {"seal"}):
        shown, held = document.get(field, _ABSENT), want.get(field, _ABSENT)
        if field in LISTS and field in want:
            _compare_list(field, shown, held, keys[field], problem)
        elif field == "metrics":
            _compare_metrics(shown, held, rows, problem)
        elif held is _ABSENT:
            problem("debates", debate_id, "inserted", f"the export shows {field!r}, which the seal does not hold")
        elif shown is _ABSENT:
            problem("debates", debate_id, "deleted", f"the export leaves out the sealed {field!r}")
        elif not _same(shown, held):
            table = {"provenance": "provenance", "evidence": "evidence_passages"}.get(field, "debates")
            problem(table, debate_id, "changed", f"the export's {field!r} differs from the sealed row")
    return problems


def _compare_list(field: str, shown: Any, held: Any, keys: Sequence[str], problem: Any) -> None:
    table = LISTS[field][0]
    if not isinstance(shown, list):
        problem(table, "-", "deleted", f"the export does not show its {field}, the seal holds {len(held)}")
        return
    if len(shown) != len(held):
        problem(table, "-", "changed" if shown else "deleted",
                f"the export shows {len(shown)} {field}, the seal holds {len(held)}")
    for key, item, row in zip(keys, shown, held):
        if not isinstance(item, dict):
            problem(table, key, "changed", f"the export shows {type(item).__name__}, not the sealed row")
            continue
        for name in sorted(set(item) | set(row)):
            if name not in row:
                problem(table, key, "changed", f"the export shows a field {name!r} the sealed row does not hold")
            elif name not in item:
                problem(table, key, "changed", f"the export leaves out the sealed field {name!r}")
            elif _same(item[name], row[name]):
                continue
            elif name == "distribution":
                problem("distributions", f"turn {key}", "changed", "the export's distribution differs from the sealed rows")
            else:
                problem(table, key, "changed", f"the export's {name!r} differs from the sealed row")
            break


def _compare_metrics(shown: Any, held: list[dict[str, Any]], rows: Mapping[Ident, Mapping[str, Any]],
                     problem: Any) -> None:
    """Metrics are named per round and metric (``round 1 jsd``), κ by its round, as the seal
    holds them (the metric's own row)."""
    if _same(shown, held):
        return
    ids = {(r["round"], r["name"]): key for (t, key), r in rows.items() if t == "metrics"}
    got = {r.get("round"): r for r in shown if isinstance(r, dict)} if isinstance(shown, list) else {}
    want = {r["round"]: r for r in held}
    one_per_round = isinstance(shown, list) and len(got) == len(shown)  # else a row is repeated or not a row
    named = False
    for number in sorted(set(got) | set(want), key=str):
        a, b = got.get(number, {}), want.get(number, {})
        for name in sorted(set(a) | set(b)):
            if name in a and name in b and _same(a[name], b[name]):
                continue
            table, key = (("rounds", str(number)) if name == "kappa" else ("phases", "-") if name == "phase"
                          else ("metrics", ids.get((number, name), "-")))
            problem(table, key, "changed", f"round {number} {name}: the export shows {a.get(name)!r}, "
                                           f"the seal holds {b.get(name)!r}")
            named = True
    if not named or not one_per_round:
        problem("metrics", "-", "changed", "the export's metrics are not in the order or number the seal holds")
