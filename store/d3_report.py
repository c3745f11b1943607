"""D3 evaluations in the journal against reference verdicts: accuracy, Cohen's κ and the
self-enhancement audit (seed 003 section 4.3; the measures are :mod:`protocols.d3.audit`).

A reference file lists the right verdict per item, one JSON object per line (or one JSON list):

    {"question": "Which sorting algorithm ...?", "reference": "A", "model_a": "gemma2-9b", "model_b": "llama3.1-8b"}
    {"debate": "3f9c2a1b", "reference": "tie"}

An item names its debate by id (or unique prefix) or by its question (every finished D3
debate on that question, whitespace aside, is an evaluation of it). ``model_a`` / ``model_b``
say which model wrote each answer; they default to what the debate was started with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protocols.d3.audit import Evaluation, agreement, evaluators_of, normalize_reference, self_enhancement

from .journal import Journal
from .queries import Queries


class ReferenceError(ValueError):
    """A reference file that cannot be used; ``str()`` names the file, the line and the fix."""


def read_references(path: str | Path) -> list[dict[str, Any]]:
    """The items of a reference file (JSON lines or a JSON list), each checked."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReferenceError(f"{path}: cannot read the reference file ({exc.strerror})") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReferenceError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
        numbered = list(enumerate(items if isinstance(items, list) else [], start=1))
    else:
        numbered = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                numbered.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ReferenceError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None
    out = []
    for number, item in numbered:
        where = f"{path}: item {number}"
        if not isinstance(item, dict) or not (item.get("debate") or item.get("question")):
            raise ReferenceError(f"{where}: needs \"debate\" (an id) or \"question\", and \"reference\" (A, B or tie)")
        try:
            reference = normalize_reference(item.get("reference"), where)
        except ValueError as exc:
            raise ReferenceError(str(exc)) from None
        out.append({**item, "reference": reference, "where": where})
    if not out:
        raise ReferenceError(f"{path}: no reference items found")
    return out


def _key(question: str) -> str:
    return " ".join(question.split()).casefold()


def d3_report(journal: Journal, references: Sequence[Mapping[str, Any]], families: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Accuracy, κ and the self-enhancement audit of the journal's D3 verdicts against
    ``references`` (from :func:`read_references`); ``unmatched`` lists items with no finished
    D3 debate."""
    queries = Queries(journal)
    rows = queries.query("SELECT id, subject FROM debates WHERE protocol LIKE 'd3-%' AND status = 'finished' ORDER BY created_at")
    by_question: dict[str, list[str]] = {}
    for r in rows:
        by_question.setdefault(_key(r["subject"]), []).append(r["id"])
    evaluations: list[Evaluation] = []
    unmatched: list[str] = []
    for item in references:
        if item.get("debate"):
            found = queries.find_debate(str(item["debate"]))
            ids = [found] if found else []
        else:
            ids = by_question.get(_key(str(item["question"])), [])
        if not ids:
            unmatched.append(str(item["where"]))
        for debate_id in ids:
            debate = queries.debate(debate_id)
            if debate is None or not str(debate["protocol"]).startswith("d3-") or debate["outcome"] is None:
                unmatched.append(str(item["where"]))
                continue
            config, outcome = debate["config"], debate["outcome"]
            judge = next((p["model_id"] for p in debate["participants"] if p["role"] == "judge"), "")
            evaluations.append(Evaluation(
                item=debate_id, verdict=outcome.get("verdict"), reference=str(item["reference"]),
                model_a=str(item.get("model_a") or config.get("model_a") or ""),
                model_b=str(item.get("model_b") or config.get("model_b") or ""),
                evaluators=evaluators_of(outcome, judge)))
    return {"agreement": agreement(evaluations), "self_enhancement": self_enhancement(evaluations, families),
            "evaluations": [e.item for e in evaluations], "unmatched": unmatched}
