"""A debate's outcome in one sentence, per protocol, for the report's summary.

Kept small and apart on purpose: the debate-screen work brings one function that says the
outcome in words for ``show``, the Markdown export and Home; when it lands, the report calls it
instead and this module goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _pct(value: Any) -> str:
    return f" ({value:.0%})" if isinstance(value, int | float) else ""


def outcome_in_words(debate: Mapping[str, Any]) -> str:
    """What the debate concluded, in words; its status and stop reason when it concluded nothing."""
    outcome = debate.get("outcome")
    protocol = str(debate.get("protocol") or "")
    if not isinstance(outcome, Mapping) or not outcome:
        status = debate.get("status") or "unknown"
        return f"no outcome recorded (status: {status})"
    if protocol == "evince":
        top = outcome.get("top")
        final = outcome.get("final_distribution") or {}
        agreed = "the agents agreed" if outcome.get("agreed") else "the agents did not agree"
        return f"most probable: {top}{_pct(final.get(top))}; {agreed}" if top else agreed
    if protocol == "socrasynth":
        evaluation = outcome.get("evaluation") or {}
        winner = evaluation.get("winner")
        winners = list((evaluation.get("winners") or {}).values())
        stance = (outcome.get("stances") or {}).get(winner, "")
        if winner:
            side = f" ({stance})" if stance else ""
            return f"{winner}{side} argued better for {winners.count(winner)} of {len(winners)} judge(s)"
        return "the judges named no winner"
    if protocol == "agreement":
        stages = outcome.get("stages") or []
        return f"agreement reached in {outcome.get('agreed_stages', 0)} of {len(stages)} stage(s)"
    if protocol == "deliberation":
        analysis = outcome.get("analysis") or {}
        claims = len(analysis.get("claims") or [])
        return f"{outcome.get('turns', 0)} turns; the analyzer mapped {claims} claim(s)"
    if protocol == "humanloop":
        analysis = outcome.get("analysis") or {}
        rate = analysis.get("change_rate")
        changes = f"; stance change rate {rate:.2f}" if isinstance(rate, int | float) else ""
        return f"decision: {outcome.get('decision') or 'none'}{changes}"
    if protocol.startswith("d3"):
        verdict = outcome.get("verdict")
        tally = ((outcome.get("passes") or [{}])[-1] or {}).get("tally") or {}
        votes = f" (jury {tally.get('A', 0)}–{tally.get('B', 0)})" if tally else ""
        return f"verdict: answer {verdict}{votes}" if verdict and verdict != "tie" else f"verdict: {verdict or 'none'}{votes}"
    for key in ("top", "winner", "verdict", "decision"):
        if outcome.get(key):
            return f"{key}: {outcome[key]}"
    return str(debate.get("stop_reason") or "see the outcome below")
