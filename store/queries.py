"""Reading the journal back: lists, one debate in full, full-text search.

Everything returns plain dicts (JSON columns decoded) so the command line, the TUI and the
exports share one reading of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from typing import Any

from . import seal
from .journal import Journal
from .provenance import with_end

_JSON_COLUMNS = {"config_json", "outcome_json", "options_json", "details_json", "parsed_json",
                 "parse_notes_json", "reasons_json", "payload_json", "exchange_json", "provenance_json",
                 "settings_json", "redactions_json", "notes_json"}


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in _JSON_COLUMNS:
            out[key.removesuffix("_json")] = None if value is None else json.loads(value)
        else:
            out[key] = value
    return out


class Queries:
    """Read-only views over an open :class:`~store.journal.Journal`."""

    def __init__(self, journal: Journal) -> None:
        self.conn = journal.conn

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> Iterator[dict[str, Any]]:
        """Rows as dicts, straight from sqlite3 (sqlite-utils would pull numpy into every
        command that reads the journal, for nothing: see ``symposium history``'s start-up)."""
        cursor = self.conn.execute(sql, params)
        columns = [d[0] for d in cursor.description]
        for row in cursor:
            yield dict(zip(columns, row))

    def _rows(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        return [_decode(r) for r in self.query(sql, params)]

    def debates(self, limit: int = 50, *, status: str | None = None) -> list[dict[str, Any]]:
        """Recent debates, newest first, with their participants' models and turn counts, and
        the moderator's latest verdict on the outcome (``verdict_accepted``: 1, 0, or ``None``)."""
        where = "WHERE d.status = :status" if status else ""
        rows = self._rows(
            f"""
            SELECT d.id, d.protocol, d.title, d.status, d.stop_reason, d.created_at, d.updated_at,
                   d.finished_at, d.outcome_json,
                   (SELECT COUNT(*) FROM turns t WHERE t.debate_id = d.id) AS turns,
                   (SELECT group_concat(p.role || '=' || p.model_id, ', ') FROM participants p
                     WHERE p.debate_id = d.id) AS models,
                   (SELECT json_extract(m.payload_json, '$.accept') FROM moderator_events m
                     WHERE m.debate_id = d.id AND m.kind = 'verdict' ORDER BY m.id DESC LIMIT 1) AS verdict_accepted
            FROM debates d {where}
            ORDER BY d.created_at DESC, d.rowid DESC LIMIT :limit
            """,
            {"status": status, "limit": limit},
        )
        return rows

    def debates_of(self, protocols: Collection[str]) -> list[dict[str, Any]]:
        """Every debate journalled under one of ``protocols`` (registry names, variants
        included), whole (as :meth:`debate`), oldest first: what a study across debates reads."""
        names = list(protocols)
        if not names:
            return []
        marks = ", ".join("?" * len(names))
        ids = [r["id"] for r in self.query(f"SELECT id FROM debates WHERE protocol IN ({marks}) ORDER BY created_at, id", tuple(names))]
        return [d for i in ids if (d := self.debate(i)) is not None]

    def find_debate(self, prefix: str) -> str | None:
        """The full id for an id or unique id prefix (users type the first few characters)."""
        ids = [r["id"] for r in self.query("SELECT id FROM debates WHERE id LIKE ? || '%' LIMIT 2", (prefix,))]
        return ids[0] if len(ids) == 1 else None

    def debate(self, debate_id: str, *, chain: bool = False, chain_rows: bool = True) -> dict[str, Any] | None:
        """One debate with everything recorded about it, in order.

        ``seal`` holds the chain's head, length and migration mark; with ``chain`` (the JSON
        export) every link too, carrying the sealed rows unless ``chain_rows`` is false (a
        redacted export must not carry the text it masks)."""
        found = self._rows("SELECT * FROM debates WHERE id = ?", (debate_id,))
        if not found:
            return None
        d = found[0]
        q = (debate_id,)
        d["participants"] = self._rows(
            "SELECT role, model_id, backend, options_json, details_json FROM participants WHERE debate_id = ? ORDER BY id", q)
        d["phases"] = self._rows("SELECT name, round, kappa, started_at FROM phases WHERE debate_id = ? ORDER BY id", q)
        d["turns"] = self._rows(
            "SELECT id, seq, round, phase, role, model_id, kind, kappa, text, raw, parsed_json, parse_notes_json,"
            " prompt_tokens, prompt_tokens_evaluated, completion_tokens, duration_s, finish_reason, created_at, request,"
            " confidence, exchange_json FROM turns WHERE debate_id = ? ORDER BY seq", q)
        dists: dict[int, dict[str, float]] = {}
        for r in self.query("SELECT turn_id, label, probability FROM distributions WHERE debate_id = ? ORDER BY turn_id, rank", q):
            dists.setdefault(r["turn_id"], {})[r["label"]] = r["probability"]
        cited: dict[int, list[dict[str, Any]]] = {}
        for r in self._rows("SELECT id, turn_id, claim_no, role, claim, source, quote, status, passage, match, problem, label"
                            " FROM citations WHERE debate_id = ? ORDER BY turn_id, claim_no", q):
            cited.setdefault(r["turn_id"], []).append(r)
        for t in d["turns"]:
            t["distribution"] = dists.get(t["id"])
            t["citations"] = cited.get(t["id"], [])
        d["metrics"] = self.metrics(debate_id)
        d["judgements"] = self._rows(
            "SELECT round, judge_role, judge_model, kind, target, subject, score, verdict, reasons_json, raw, created_at"
            " FROM judgements WHERE debate_id = ? ORDER BY id", q)
        d["moderator_events"] = self._rows(
            "SELECT round, kind, payload_json, created_at, checkpoint FROM moderator_events WHERE debate_id = ? ORDER BY id", q)
        d["notices"] = self._rows(
            "SELECT round, kind, text, details_json, created_at FROM notices WHERE debate_id = ? ORDER BY id", q)
        d["model_calls"] = self._rows("SELECT * FROM model_calls WHERE debate_id = ? ORDER BY id", q)
        d["call_costs"] = self._rows("SELECT call_id, cached_tokens, wait_s, prefill_s, decode_s FROM call_costs"
                                     " WHERE debate_id = ? ORDER BY id", q)
        d["replies"] = self._rows(
            "SELECT role, kind, prompt_sha256, reply, details_json FROM replies WHERE debate_id = ? ORDER BY id", q)
        d["evidence"] = self.evidence(debate_id)
        stored = self._rows("SELECT provenance_json FROM provenance WHERE debate_id = ?", q)
        d["provenance"] = with_end(stored[0]["provenance"], d["finished_at"]) if stored else None
        d["seal"] = seal.export(self.conn, debate_id, with_rows=chain_rows) if chain else seal.summary(self.conn, debate_id)
        return d

    def evidence(self, debate_id: str) -> dict[str, Any] | None:
        """The debate's evidence as journalled: ``settings``, ``files`` (each with its name, kind,
        size, SHA-256, pages, first passage, passages, redactions, notes) and ``passages`` (number,
        file, page, paragraph, part, parts, text), in order; ``None`` when it has none."""
        q = (debate_id,)
        found = self._rows("SELECT settings_json FROM evidence WHERE debate_id = ?", q)
        if not found:
            return None
        files = self._rows("SELECT id, number, name, kind, size, sha256, pages, first_passage, passages, redactions_json,"
                           " notes_json FROM evidence_files WHERE debate_id = ? ORDER BY number", q)
        passages = self._rows("SELECT id, number, file, page, paragraph, part, parts, text FROM evidence_passages"
                              " WHERE debate_id = ? ORDER BY number", q)
        return {"settings": found[0]["settings"], "files": files, "passages": passages}

    def evidence_named(self, text: str, limit: int = 20) -> list[dict[str, Any]]:
        """Debates whose evidence holds a file whose name contains every word of ``text``,
        newest first, as :meth:`search`'s rows (``role`` "evidence", the file's name as the
        snippet): someone looking for the debate about a chart types the chart's name."""
        words = re.findall(r"\w+", text)
        if not words:
            return []
        like = " AND ".join(["f.name LIKE ? ESCAPE '\\'"] * len(words))
        patterns = ["%" + w.replace("_", "\\_") + "%" for w in words]
        rows = self._rows(
            f"SELECT f.debate_id, d.title, d.created_at, f.name FROM evidence_files f JOIN debates d ON d.id = f.debate_id"
            f" WHERE {like} ORDER BY d.created_at DESC, f.number LIMIT ?", (*patterns, limit))
        out: list[dict[str, Any]] = []
        for row in rows:
            if any(r["debate_id"] == row["debate_id"] for r in out):
                continue
            out.append({"debate_id": row["debate_id"], "title": row["title"], "created_at": row["created_at"], "seq": None,
                        "round": "", "role": "evidence", "model_id": None, "snippet": row["name"]})
        return out

    def metrics(self, debate_id: str) -> list[dict[str, Any]]:
        """One dict per round that has metrics: ``{"round": r, "phase": …, "kappa": κ, "jsd": …}``.

        A round's phase is the latest phase begun at or before it."""
        phases = list(self.query("SELECT round, name FROM phases WHERE debate_id = ? ORDER BY id", (debate_id,)))
        kappas = {r["round"]: r["kappa"] for r in self.query("SELECT round, kappa FROM rounds WHERE debate_id = ?", (debate_id,))}
        per_round: dict[int, dict[str, Any]] = {}
        for r in self.query("SELECT round, name, value FROM metrics WHERE debate_id = ? ORDER BY round, name", (debate_id,)):
            row = per_round.setdefault(r["round"], {"round": r["round"], "kappa": kappas.get(r["round"])})
            row[r["name"]] = r["value"]
        for number, row in per_round.items():
            row["phase"] = next((p["name"] for p in reversed(phases) if p["round"] <= number), None)
        return [per_round[k] for k in sorted(per_round)]

    def cases(self, text: str, limit: int = 20) -> list[dict[str, Any]]:
        """Debates whose case (the subject they were given) holds every word of ``text``, newest
        first, as :meth:`search`'s rows (``round`` empty, ``role`` "case", the case as the
        snippet). :meth:`search` finds what the models said; someone looking for a debate types
        the case's words, which a small model may never repeat (a walk-through:
        "yellow skin" found nothing though the case said it)."""
        words = re.findall(r"\w+", text)
        if not words:
            return []
        like = " AND ".join(["d.subject LIKE ? ESCAPE '\\'"] * len(words))
        patterns = ["%" + w.replace("_", "\\_") + "%" for w in words]  # "_" is a \w, and LIKE's any-one-character
        rows = self._rows(
            f"SELECT d.id AS debate_id, d.title, d.created_at, d.subject FROM debates d WHERE {like} "
            "ORDER BY d.created_at DESC LIMIT ?",
            (*patterns, limit),
        )
        for row in rows:
            first = min(row["subject"].lower().find(w.lower()) for w in words)
            row.update(seq=None, round="", role="case", model_id=None,
                       snippet=("…" if first > 12 else "") + row.pop("subject")[max(0, first - 12):])
        return rows

    def search(self, text: str, limit: int = 50) -> list[dict[str, Any]]:
        """What was said that matches ``text`` (every word, as a prefix), best first: the turns,
        and the moderator's and the judges' own words (interjections, verdict notes, agenda
        edits, judges' reasons; ``role`` "moderator" or the judge's role, ``seq`` empty).

        The user's words are quoted before they reach FTS5, so characters such as ``"`` or
        ``-`` never turn into query syntax errors.
        """
        words = re.findall(r"\w+", text)
        if not words:
            return []
        match = " ".join(f'"{w}"*' for w in words)
        turns = self._rows(
            """
            SELECT t.debate_id, d.title, d.created_at, t.seq, t.round, t.role, t.model_id,
                   snippet(turns_fts, 0, '[', ']', '…', 12) AS snippet, rank
            FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid JOIN debates d ON d.id = t.debate_id
            WHERE turns_fts MATCH ? ORDER BY rank LIMIT ?
            """,
            (match, limit),
        )
        said = self._rows(
            """
            SELECT said_fts.debate_id, d.title, d.created_at, NULL AS seq,
                   COALESCE(m.round, j.round) AS round,
                   CASE WHEN m.id IS NOT NULL THEN 'moderator' ELSE j.judge_role END AS role,
                   j.judge_model AS model_id, snippet(said_fts, 0, '[', ']', '…', 12) AS snippet, rank
            FROM said_fts JOIN debates d ON d.id = said_fts.debate_id
            LEFT JOIN moderator_events m ON said_fts.rowid % 2 = 0 AND m.id = said_fts.rowid / 2
            LEFT JOIN judgements j ON said_fts.rowid % 2 = 1 AND j.id = said_fts.rowid / 2
            WHERE said_fts MATCH ? ORDER BY rank LIMIT ?
            """,
            (match, limit),
        )
        hits = sorted([*turns, *said], key=lambda row: row["rank"])[:limit]  # BM25: lower is better
        for hit in hits:
            del hit["rank"]
        return hits
