"""SocraSynth's findings as neutral blocks (see :mod:`protocols.core.present`): the agenda and
stances, Γ and Δ per round (Table 6.2), the judges' tables of Γ per subtopic and side in each
role alignment (Tables 6.5, 6.6) with their reasons, the case checks (6.3.1.2) and the joint
proposal of the conciliatory stage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import BarChart, Bullets, DefList, Figures, LineChart, Para, Section, Table, num, number, value_block


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    out = []
    agenda = outcome.get("agenda") or []
    stances = outcome.get("stances") or {}
    first = Section("socrasynth", "SocraSynth: agenda and rounds",
                    claims=frozenset({"agenda", "rounds", "stances", "case_checks"}))
    if stances:
        first.blocks.append(DefList([(role, stance) for role, stance in stances.items()]))
    if agenda:
        first.blocks.append(Table(["#", "subtopic", "scope"], [[i + 1, a.get("title", ""), a.get("description", "")]
                                                             for i, a in enumerate(agenda)], caption="Agenda", numeric=False))
    rounds = outcome.get("rounds") or []
    if rounds:
        first.blocks.append(Figures([
            LineChart("Γ (CRIT, 1–10) per round", {"Γ": [(float(r["round"]), number(r.get("gamma"))) for r in rounds]}),
            LineChart("Δ (contentiousness) per round", {"Δ": [(float(r["round"]), number(r.get("delta"))) for r in rounds]}),
        ], "Table 6.2: Γ and Δ at each round."))
        first.blocks.append(Table(["round", "kind", "Δ", "Γ"], [[r.get("round"), r.get("kind"), num(r.get("delta")), num(r.get("gamma"))]
                                                                 for r in rounds]))
    if outcome.get("case_checks"):
        first.blocks.append(Para("Case checks (6.3.1.2)", "h"))
        first.blocks.append(value_block(outcome["case_checks"]))
    out.append(first)
    evaluation = outcome.get("evaluation") or {}
    if evaluation:
        out.append(_judges(evaluation))
    qa = outcome.get("qa")
    if isinstance(qa, Mapping) and qa.get("verdicts"):
        out.append(Section("qa", f"The debate against one answer ({qa.get('model', '')})",
                           [DefList([(judge, verdict or "missing") for judge, verdict in qa["verdicts"].items()])],
                           claims=frozenset({"qa"})))
    joint = outcome.get("joint") or {}
    if joint:
        section = Section("joint", "The joint proposal", claims=frozenset({"joint"}), brief=True)
        if joint.get("proposal"):
            section.blocks.append(Para(joint["proposal"], "lead"))
        for key in ("pros", "cons"):
            if joint.get(key):
                section.blocks += [Para(key.capitalize(), "h"), Bullets(list(joint[key]))]
        if joint.get("written_by"):
            section.blocks.append(Para("Written by " + ", ".join(joint["written_by"]), "note"))
        out.append(section)
    return out


def _judges(evaluation: Mapping[str, Any]) -> Section:
    section = Section("judges", "The judges' tables (Table 6.3): Γ per subtopic", claims=frozenset({"evaluation"}))
    alignments = evaluation.get("alignments") or {}
    totals = evaluation.get("totals") or {}
    judges = evaluation.get("judges") or {}
    for alignment, per_judge in alignments.items():
        for judge, per_subtopic in per_judge.items():
            agents = list(dict.fromkeys(a for scores in per_subtopic.values() for a in scores))
            rows = [[subtopic, *(num(scores.get(a)) for a in agents)] for subtopic, scores in per_subtopic.items()]
            total = (totals.get(alignment) or {}).get(judge) or {}
            rows.append(["total", *(num(total.get(a)) for a in agents)])
            caption = f"{judge} ({judges.get(judge, '')}), {alignment.replace('_', ' ')}"
            section.blocks.append(Table(["subtopic", *agents], rows, caption=caption))
            section.blocks.append(Figures([BarChart(f"Γ per subtopic: {caption}",
                                                    {a: {s: v.get(a) for s, v in per_subtopic.items() if v.get(a) is not None}
                                                     for a in agents}, scale=10, percent=False)]))
    winners = evaluation.get("winners") or {}
    section.blocks.append(DefList([("Winner", evaluation.get("winner") or "—"),
                                   *((f"{judge}'s verdict", w) for judge, w in winners.items()),
                                   ("Gaps", num(evaluation.get("gaps")))]))
    reasons = evaluation.get("reasons") or {}
    for judge, given in reasons.items():
        section.blocks.append(Para(f"{judge}'s reasons", "h"))
        section.blocks.append(Table(["subtopic", "alignment", "claim", "justification"],
                                    [[r.get("subtopic", ""), r.get("alignment", ""), r.get("claim", ""), r.get("justification", "")]
                                     for r in given if isinstance(r, Mapping)], numeric=False))
    return section
