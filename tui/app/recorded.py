"""A journalled debate turned back into the events that produced it.

The Review screen and the Debate screen render the same events, so a debate read back from
the journal looks exactly as it did live. Token deltas are not journalled (the finished turn
holds the whole text), so a replay has turns without streaming.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from protocols.core.costs import MEASURED, journal_calls
from protocols.core.events import (
    CallRecord,
    DebateFinished,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    ModeratorActed,
    Notice,
    Participant,
    PhaseChanged,
    TurnFinished,
)
from protocols.core.evidence import as_citation

_CALL_FIELDS = ("prompt_tokens", "prompt_tokens_evaluated", "completion_tokens", "duration_s", "first_token_s",
                "finish_reason", "error", *MEASURED)


def _call(role: str, model_id: str, c: dict[str, Any]) -> CallRecord:
    return CallRecord(role, model_id, c["purpose"], c["options"], **{k: c[k] for k in _CALL_FIELDS})


def recorded_events(debate: dict[str, Any], *, upto_round: int | None = None) -> Iterator[Event]:
    """The events of ``debate`` (as read by ``store.queries.Queries.debate``) in time order.

    With ``upto_round`` only the events of rounds ``<= upto_round`` (and the debate's start)
    are produced, and no ``DebateFinished``: the debate as it stood after that round.
    """
    did = debate["id"]
    yield DebateStarted(did, debate["protocol"], debate["title"], debate["subject"], debate["config"] or {},
                        tuple(Participant(p["role"], p["model_id"], p["backend"], p["options"], p["details"])
                              for p in debate["participants"]), at=debate["created_at"])
    timeline: list[tuple[float, int, Event]] = []
    every_call = journal_calls(debate)
    calls = {c["turn_id"]: c for c in every_call if c["turn_id"] is not None}
    for other in every_call:  # the calls of no turn (judges, scorers, analyzers): what they cost
        if other["turn_id"] is None:
            timeline.append((other["created_at"], 2, ModelCalled(did, _call(other["role"], other["model_id"], other), other["round"])))
    for p in debate["phases"]:
        timeline.append((p["started_at"], 0, PhaseChanged(did, p["name"], p["round"], p["kappa"], at=p["started_at"])))
    for t in debate["turns"]:
        c = calls.get(t["id"])
        call = None if c is None else _call(t["role"], t["model_id"], c)
        timeline.append((t["created_at"], 1, TurnFinished(
            did, t["role"], t["model_id"], t["phase"], t["round"], t["kind"], t["text"], t["raw"], call,
            t["parsed"], tuple(t["parse_notes"] or ()), t["distribution"], t["kappa"], at=t["created_at"],
            request=t.get("request"), confidence=t.get("confidence"),
            citations=tuple(as_citation(c) for c in t.get("citations") or ()))))
    for j in debate["judgements"]:
        timeline.append((j["created_at"], 2, JudgementMade(
            did, j["judge_role"], j["judge_model"], j["kind"], j["target"], j["subject"], j["score"], j["verdict"],
            j["reasons"], j["raw"], j["round"])))
    for m in debate["moderator_events"]:
        timeline.append((m["created_at"], 3, ModeratorActed(did, m["kind"], m["payload"], m["round"])))
    for n in debate.get("notices", ()):
        timeline.append((n["created_at"], 3, Notice(did, n["kind"], n["text"], n["details"] or {}, n["round"], at=n["created_at"])))
    last_at: dict[int, float] = {}
    for at, _, event in timeline:
        number = _round_of(event)
        if number is not None:
            last_at[number] = max(at, last_at.get(number, at))
    for row in debate["metrics"]:
        values = {k: v for k, v in row.items() if k not in ("round", "phase", "kappa") and v is not None}
        at = last_at.get(row["round"], 0.0) + 1e-6  # after the round's last turn or judgement
        timeline.append((at, 4, MetricsComputed(did, row["round"], values, row.get("kappa"))))
    timeline.sort(key=lambda item: (item[0], item[1]))
    for _, _, event in timeline:
        number = _round_of(event)
        if upto_round is not None and number is not None and number > upto_round:
            continue
        yield event
    if upto_round is None and debate["status"] in ("finished", "stopped", "failed"):
        yield DebateFinished(did, debate["status"], debate["stop_reason"] or "", debate["outcome"] or {},
                             at=debate["finished_at"] or debate["updated_at"])


def _round_of(event: Event) -> int | None:
    return getattr(event, "round", None)


def rounds_of(debate: dict[str, Any]) -> list[int]:
    """The round numbers that have turns or judgements, in order (SocraSynth's evaluation stage
    is a round of judgements only: Review steps through it like any other)."""
    return sorted({t["round"] for t in debate["turns"]} | {j["round"] for j in debate["judgements"] if j["round"] is not None})
