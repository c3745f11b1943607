"""A small, fixed SocraSynth debate for screen tests and snapshots (recorded events, not model
output, so the screens draw the same on every machine): an agreed agenda of two subtopics, the
opening, one refutation and the closing round with Γ and Δ (Table 6.2), both judges' scores per
subtopic in both role alignments (Tables 6.5, 6.6), the joint proposal and the outcome as
:class:`protocols.socrasynth.SocraSynth` builds it (``tally`` gives the winners)."""

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
from protocols.socrasynth import ALIGNMENTS, tally
from store.journal import Journal

T0 = 1_790_000_000.0
A, B, J1, J2 = "smollm2-135m", "gemma3-270m", "qwen25-7b-instruct", "llama31-8b-instruct"
AGENDA = [{"title": "Patient safety", "description": "missed urgent cases against faster care"},
          {"title": "Accountability", "description": "who answers for a wrong triage"}]
#: judge -> alignment -> subtopic -> (arguing side's score, countering side's score)
SCORES = {"judge-1": {"a_argues": [(7.2, 6.1), (6.8, 6.9)], "b_argues": [(6.4, 6.6), (7.0, 5.9)]},
          "judge-2": {"a_argues": [(6.9, 6.3), (6.1, 6.5)], "b_argues": [(6.0, 7.1), (6.2, 6.4)]}}


def _call(role: str, model: str, tokens: int) -> CallRecord:
    return CallRecord(role, model, "turn", {"temperature": 0.7}, 300, 120, tokens, tokens / 40 + 0.2, 0.2)


def sample_socrasynth(debate_id: str = "socra0001ab") -> list[Event]:
    events: list[Event] = [DebateStarted(
        debate_id, "socrasynth", "Should hospitals let AI systems triage emergency patients?",
        "Should hospitals let AI systems triage emergency patients?", {"max_rounds": 1, "subtopics": 2},
        (Participant("agent-a", A, "llamacpp"), Participant("agent-b", B, "llamacpp"),
         Participant("judge-1", J1, "llamacpp"), Participant("judge-2", J2, "llamacpp")), at=T0)]
    t = T0 + 1
    events.append(PhaseChanged(debate_id, "agenda", 0, None, at=t))
    text = "\n".join(f"{i}. {s['title']}: {s['description']}" for i, s in enumerate(AGENDA, 1))
    for role, model, step in (("agent-a", A, "proposal"), ("agent-b", B, "proposal"), ("agent-a", A, "merge"),
                              ("agent-b", B, "review")):
        t += 2
        parsed = {"step": step, "subtopics": AGENDA} if step != "review" else {"step": step, "accept": True, "agreed": AGENDA}
        events.append(TurnFinished(debate_id, role, model, "agenda", 0, "agenda", text, "{}", _call(role, model, 40),
                                   parsed, at=t))
    for r, (kind, delta, gamma) in enumerate((("opening", 0.9, 6.0), ("refutation", 0.75, 6.5), ("closing", 0.625, 7.0))):
        t += 5
        events.append(PhaseChanged(debate_id, kind, r, delta, at=t))
        for role, model in (("agent-a", A), ("agent-b", B)):
            t += 3
            side = "for" if role == "agent-a" else "against"
            said = f"1. Patient safety: the case {side} in round {r}\n2. Accountability: who answers, {side}"
            events.append(TurnFinished(debate_id, role, model, kind, r, kind, said, "{}", _call(role, model, 80),
                                       None, kappa=delta, at=t))
        events.append(JudgementMade(debate_id, "judge-1", J1, "crit", "debate", None, gamma, None,
                                    {"of": f"the debate after round {r} (Table 6.2 Γ)"}, "{}", r))
        events.append(MetricsComputed(debate_id, r, {"delta": delta, "crit": gamma / 10}, delta))
    t += 5
    events.append(PhaseChanged(debate_id, "evaluation", 3, None, at=t))
    alignments: dict[str, dict[str, dict[str, dict[str, float | None]]]] = {a: {} for a in ALIGNMENTS}
    for alignment, (arguing, countering) in ALIGNMENTS.items():
        for judge, model in (("judge-1", J1), ("judge-2", J2)):
            for i, topic in enumerate(AGENDA):
                key = f"{i + 1}. {topic['title']}"
                argued, countered = SCORES[judge][alignment][i]
                alignments[alignment].setdefault(judge, {})[key] = {arguing: argued, countering: countered}
                base = {"alignment": alignment, "arguing": arguing, "countering": countering}
                events.append(JudgementMade(debate_id, judge, model, "crit", arguing, key, argued, None,
                                            {**base, "position": "argument"}, "{}", 3))
                events.append(JudgementMade(debate_id, judge, model, "crit", countering, key, countered, None,
                                            {**base, "position": "counter-argument"}, "{}", 3))
    t += 5
    events.append(PhaseChanged(debate_id, "conciliatory", 4, 0.3, at=t))
    joint = {"proposal": "Let AI rank the queue, with a nurse confirming every urgent case.", "pros": ["faster care"],
             "cons": ["new failure modes"]}
    for role, model, kind in (("agent-a", A, "joint_draft"), ("agent-b", B, "joint_revision")):
        t += 3
        events.append(TurnFinished(debate_id, role, model, "conciliatory", 4, kind, joint["proposal"], "{}",
                                   _call(role, model, 90), joint, kappa=0.3, at=t))
    evaluation = {"judges": {"judge-1": J1, "judge-2": J2}, "alignments": alignments, **tally(alignments), "reasons": {}}
    outcome = {"stances": {"agent-a": "for", "agent-b": "against"}, "agenda": AGENDA,
               "rounds": [{"round": 0, "kind": "opening", "delta": 0.9, "gamma": 6.0},
                          {"round": 1, "kind": "refutation", "delta": 0.75, "gamma": 6.5},
                          {"round": 2, "kind": "closing", "delta": 0.625, "gamma": 7.0}],
               "case_checks": [], "evaluation": evaluation, "self_judging": {}, "joint": {**joint, "written_by": ["agent-a", "agent-b"]}}
    events.append(DebateFinished(debate_id, "finished", "round cap reached: the opening and 1 round of rebuttal, before "
                                 "Table 6.2's test ended the debate", outcome, at=t + 2))
    return events


def record_socrasynth(journal: Journal, debate_id: str = "socra0001ab") -> None:
    for event in sample_socrasynth(debate_id):
        journal.record(event)
