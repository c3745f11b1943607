"""A small, fixed EVINCE-shaped debate for screen tests and snapshots.

Recorded events (not model output) so that what the screens show is identical on every
machine; the live path is covered by the Pilot test that runs the real models.

Its contentiousness per round and the phase each round is in come from the code (the
``exponential`` schedule at its defaults, :func:`protocols.evince.phase_for`), not from numbers
copied here: a copy kept the old λ = 0.2 curve (0.9, 0.74, 0.60) after λ became 0.55.
"""

from __future__ import annotations

from protocols.core.events import (
    CallRecord,
    DebateFinished,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    Participant,
    PhaseChanged,
    TurnFinished,
)
from protocols.evince import phase_for
from protocols.measures.contentiousness import Exponential
from store.journal import Journal

T0 = 1_790_000_000.0  # 2026-09-21, a fixed clock for reproducible screens
#: The schedule the sample debate ran under (its config says so): κ 0.9, 0.52, 0.30 for rounds 0–2.
SCHEDULE = Exponential()


def _call(role: str, model: str, tokens: int) -> CallRecord:
    return CallRecord(role, model, "turn", {"temperature": 0.7}, 300, 120, tokens, tokens / 40 + 0.2, 0.2)


def sample_events(debate_id: str = "sample0001ab", *, rounds: int = 2, finished: bool = True) -> list[Event]:
    a, b = "smollm2-135m", "gemma3-270m"
    events: list[Event] = [DebateStarted(
        debate_id, "evince", "Jaundice or hepatitis?", "itching, vomiting, fatigue, yellowish skin, dark urine",
        {"max_rounds": rounds, "schedule": SCHEDULE.name}, (Participant("agent-a", a, "llamacpp"), Participant("agent-b", b, "llamacpp"),
                                 Participant("judge", a, "llamacpp")), at=T0)]
    dists = [({"Hepatitis C": 0.5, "Jaundice": 0.3, "Hepatitis B": 0.2}, {"Jaundice": 0.6, "Malaria": 0.25, "Hepatitis C": 0.15}),
             ({"Hepatitis C": 0.45, "Jaundice": 0.4, "Hepatitis B": 0.15}, {"Jaundice": 0.5, "Hepatitis C": 0.35, "Malaria": 0.15}),
             ({"Jaundice": 0.5, "Hepatitis C": 0.4, "Hepatitis B": 0.1}, {"Jaundice": 0.55, "Hepatitis C": 0.4, "Malaria": 0.05})]
    kappas = [SCHEDULE.value(r) for r in range(len(dists))]
    t = T0
    for r in range(rounds):
        t += 10
        phase = phase_for(kappas[r])
        events.append(PhaseChanged(debate_id, phase, r, kappas[r], at=t))
        for role, model, dist in (("agent-a", a, dists[r][0]), ("agent-b", b, dists[r][1])):
            t += 5
            text = " · ".join(f"{k} {v:.0%}" for k, v in dist.items()) + "\n- yellowish skin and dark urine point to the liver"
            events.append(TurnFinished(debate_id, role, model, phase, r,
                                       "opening" if r == 0 else "refutation", text, "{}", _call(role, model, 64),
                                       {"probs": dist}, (), dist, None if (r == 0 and role == "agent-a") else kappas[r], at=t))
        for target, score in (("agent-a", 6.5 + r), ("agent-b", 7.0 + r / 2)):
            events.append(JudgementMade(debate_id, "judge", a, "crit", target, None, score, None,
                                        {"claim": "liver disease", "justification": "consistent"}, "{}", r))
        events.append(MetricsComputed(debate_id, r, {"wd": 0.6 - 0.2 * r, "mi": 0.3 + 0.1 * r, "jsd": 0.4 - 0.15 * r,
                                                     "crit": 0.68 + 0.05 * r, "nmi": 0.4}, kappas[r]))
    if finished:
        events.append(DebateFinished(debate_id, "finished", "converged: WD, MI, JSD settled and CRIT stopped rising",
                                     {"final_distribution": {"Jaundice": 0.53, "Hepatitis C": 0.4, "Hepatitis B": 0.07},
                                      "top": "Jaundice", "ending": "converged", "agreed": True, "rounds": rounds,
                                      "refutation_rounds": rounds - 1, "recommendations": {"questions": ["When did the yellowing start?"],
                                                                             "tests": ["Liver function tests"]}}, at=t + 5))
    return events


def record_sample(journal: Journal, debate_id: str = "sample0001ab", **kwargs) -> None:
    for event in sample_events(debate_id, **kwargs):
        journal.record(event)
