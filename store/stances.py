"""Stance changes computed from the journal (seed 001's volatility measures, across debates).

The measures themselves are :func:`protocols.humanloop.stance.analyze` and :func:`~protocols.humanloop.stance.change_rates`;
this module only reads their input back from SQLite: the ``stance`` judgements (one per step,
``target`` = the seat's role, ``verdict`` = its label) and which seat, if any, a person held (the
participant whose backend is ``human``), the confidence each seat stated (the judgement's
``score``), and from the debate's config the affirm / not-affirm label and the condition
(``synthetic`` for one instance simulating the panel). So a report on last month's debates needs nothing but
the journal file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from protocols.humanloop.stance import StanceStep, analyze, change_rates

from .journal import Journal
from .queries import Queries


def _placeholders(n: int) -> str:
    return ", ".join("?" * n)


def stance_report(journal: Journal, debate_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """Per debate: the stance table and its changes; across them: change rates by condition.

    ``debate_ids`` defaults to every debate that has stance judgements. Returns
    ``{"debates": {id: analysis}, "by_condition": {"AI only": {...}, "human present": {...}}}``.
    """
    db = Queries(journal)
    if debate_ids is None:
        debate_ids = [r["debate_id"] for r in db.query(
            "SELECT debate_id FROM judgements WHERE kind = 'stance' GROUP BY debate_id ORDER BY MIN(id)")]
    ids = list(dict.fromkeys(debate_ids))
    if not ids:
        return {"debates": {}, "by_condition": {}}
    marks = _placeholders(len(ids))
    steps: dict[str, list[StanceStep]] = {i: [] for i in ids}
    for r in db.query(f"SELECT debate_id, round, target, verdict, score FROM judgements WHERE kind = 'stance'"
                      f" AND debate_id IN ({marks}) ORDER BY id", tuple(ids)):
        steps[r["debate_id"]].append(StanceStep(r["round"], r["target"], r["verdict"], r["score"]))
    configs = {r["id"]: _config(r["config_json"]) for r in db.query(
        f"SELECT id, config_json FROM debates WHERE id IN ({marks})", tuple(ids))}
    seats: dict[str, list[str]] = {i: [] for i in ids}
    humans: dict[str, str] = {}
    for r in db.query(f"SELECT debate_id, role, backend FROM participants WHERE debate_id IN ({marks}) ORDER BY id", tuple(ids)):
        seats[r["debate_id"]].append(r["role"])
        if r["backend"] == "human":
            humans[r["debate_id"]] = r["role"]
    debates = {}
    for i in ids:
        labelled = {s.role for s in steps[i]}
        roles = [role for role in seats[i] if role in labelled]
        roles += [role for role in dict.fromkeys(s.role for s in steps[i]) if role not in roles]
        human = humans.get(i) if humans.get(i) in labelled else None
        config = configs.get(i, {})
        condition = "synthetic" if config.get("condition") == "synthetic" else None
        debates[i] = analyze(steps[i], roles=roles, human=human, binary=config.get("binary_label"), condition=condition)
    return {"debates": debates, "by_condition": change_rates(debates.values())}


def _config(text: str | None) -> dict[str, Any]:
    """A debate's journalled config; an unreadable one counts as empty (older journals)."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
