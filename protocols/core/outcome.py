"""A debate's outcome in words: what it concluded, how it ended, what the moderator did.

The journal keeps each protocol's outcome as the JSON its run produced (``DebateFinished.outcome``)
and the moderator's actions as ``kind`` + payload. Those are data for analysis; people reading
``symposium show``, the Markdown export, Home's outcome column or the HTML report need sentences.
This module is the one place that says them, so every reader says the same thing: a debate
that "settled without agreement" is never shown as if it had concluded its top label.

What a protocol concluded is the protocol's own business: each definition's ``conclude``
(:class:`protocols.core.definition.Conclusion`). How it ended (status and stop reason) and the
moderator's actions are common to all protocols and are worded here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protocols.core.definition import Conclusion
from protocols.registry import BY_NAME

#: How each status reads, before the stop reason.
_STATUS = {"finished": "Finished", "stopped": "Stopped", "failed": "Failed", "interrupted": "Interrupted",
           "running": "Still running"}


@dataclass(frozen=True)
class OutcomeInWords:
    """One debate's outcome as sentences (plain text: the caller escapes it for its medium)."""

    #: What the debate concluded, one or two sentences ("" when nothing was concluded).
    conclusion: str
    #: How it ended: the status and why ("Finished: converged: WD, MI … settled.").
    ending: str
    #: What the moderator did, one sentence per journalled action, in order.
    moderator: tuple[str, ...]
    #: A few words for a table's outcome column, the moderator's verdict first where there is one.
    short: str


def outcome_in_words(debate: Mapping[str, Any]) -> OutcomeInWords:
    """``debate`` (a :meth:`store.queries.Queries.debate` dict, or a row of ``debates()``: the keys
    ``protocol``, ``status``, ``stop_reason``, ``outcome`` and, where present,
    ``moderator_events``) in words."""
    status = str(debate.get("status") or "")
    reason = str(debate.get("stop_reason") or "").strip()
    outcome = debate.get("outcome") or {}
    definition = BY_NAME.get(str(debate.get("protocol") or ""))
    conclusion = Conclusion("", "")
    if definition is not None and definition.conclude is not None and isinstance(outcome, Mapping) and outcome:
        conclusion = definition.conclude(outcome)
    said = _STATUS.get(status, status.capitalize() or "Unknown")
    if status and reason.lower().startswith(status):  # "Interrupted: before the end", not "Interrupted: interrupted …"
        reason = reason[len(status):].strip(" :;,.")
    ending = f"{said}: {reason}." if reason else f"{said}."
    ending = ending.replace("..", ".")
    short = conclusion.short  # nothing concluded (failed, interrupted, a chat): the stop reason, as the status column sits beside it
    if status == "stopped" and short and "stopped" not in short:
        short = f"stopped; {short}"
    events = debate.get("moderator_events") or ()
    moderator = tuple(moderator_action(m["kind"], m.get("payload") or {}, m.get("round")) for m in events)
    short = short or reason[:60]
    verdicts = [bool((m.get("payload") or {}).get("accept")) for m in events if m.get("kind") == "verdict"]
    accepted = verdicts[-1] if verdicts else debate.get("verdict_accepted")  # a debate, or a row of ``debates()``
    if accepted is not None:  # the moderator's verdict first, in a word: a table cuts the end of a cell
        said = "accepted" if accepted else "rejected"
        short = f"{said}: {short}" if short else f"{said} by the moderator"
    return OutcomeInWords(conclusion.sentence, ending, moderator, short)


def moderator_action(kind: str, payload: Mapping[str, Any], round_: int | None = None) -> str:
    """One moderator action as a sentence ("In round 2 the moderator said to both agents: …").
    The moderator's own words are quoted as given (plain text: callers escape them)."""
    when = f"In round {round_}" if round_ is not None else "At the start"
    to = str(payload.get("to") or "")
    whom = "every participant" if to in ("", "both", "all") else to
    match kind:
        case "interject":
            return f"{when} the moderator said to {whom}: “{payload.get('text', '')}”"
        case "set_contentiousness":
            value = payload.get("value")
            level = f"{value:.2f}" if isinstance(value, int | float) else str(value)
            return f"{when} the moderator set contentiousness to {level}."
        case "pause":
            return f"{when} the moderator paused the debate."
        case "resume":
            return f"{when} the moderator resumed the debate."
        case "skip_to_conclusion":
            return f"{when} the moderator skipped to the conclusion."
        case "stop":
            return f"{when} the moderator stopped the debate ({payload.get('reason') or 'no reason given'})."
        case "advance_stage":
            return f"{when} the moderator closed the stage and moved on ({payload.get('reason') or 'no reason given'})."
        case "end":
            return f"{when} the person ended their part."
        case "edit_agenda":
            after = payload.get("after") or []
            titles = "; ".join(str(i.get("title", "")) for i in after if isinstance(i, Mapping))
            return f"{when} the moderator edited the agenda to: {titles or '(nothing)'}."
        case "verdict":
            accepted = "accepted" if payload.get("accept") else "rejected"
            note = str(payload.get("note") or "").strip()
            return f"The moderator {accepted} the outcome" + (f": “{note}”" if note else ".")
        case "resume_debate":  # journalled by the journal itself when an interrupted debate goes on
            start = payload.get("from_round")
            return f"The debate was resumed after an interruption{f', from round {start}' if start is not None else ''}."
    # a kind this version does not word (a newer protocol's): its name in words, never its data
    return f"{when} the moderator acted: {kind.replace('_', ' ')}."


__all__ = ["OutcomeInWords", "moderator_action", "outcome_in_words"]
