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


ALIGNMENT_TITLES = {
    "a_argues": "Agent A argues, Agent B counters (as Table 6.5)",
    "b_argues": "Agent B argues, Agent A counters (as Table 6.6)",
}
ARGUING = {"a_argues": ("agent-a", "agent-b"), "b_argues": ("agent-b", "agent-a")}  # (arguing, countering)
_SHORT = {"agent-a": "A", "agent-b": "B"}


def _score(value: Any) -> str:
    """A judge's Γ; a score the judge did not give shows as —, never as an empty cell read as 0."""
    return "—" if value is None else num(value)


def _judges(evaluation: Mapping[str, Any]) -> Section:
    """One table per role alignment, laid out like Tables 6.5 and 6.6: a row per subtopic, a pair of
    columns (arguing side, countering side) per judge, the totals last; then the winner in words."""
    section = Section("judges", "CRIT scores per subtopic (Tables 6.5 and 6.6)", claims=frozenset({"evaluation"}))
    alignments = evaluation.get("alignments") or {}
    totals = evaluation.get("totals") or {}
    judges = evaluation.get("judges") or {}
    for alignment, per_judge in alignments.items():
        if not per_judge:
            continue
        pair = ARGUING.get(alignment) or tuple(dict.fromkeys(a for rows in per_judge.values() for s in rows.values() for a in s))
        headers = ["subtopic", *(f"{judge}: {_SHORT.get(a, a)}'s Γ" for judge in per_judge for a in pair)]
        subtopics = list(dict.fromkeys(key for rows in per_judge.values() for key in rows))
        rows = [[key, *(_score((per_judge[j].get(key) or {}).get(a)) for j in per_judge for a in pair)] for key in subtopics]
        # a judge's total counts the subtopics it scored for both sides (``tally``); with none, it has no
        # total (—) rather than 0, which would read as two sides scored nothing
        counted = {j for j in per_judge if any(all((per_judge[j].get(k) or {}).get(a) is not None for a in pair)
                                               for k in subtopics)}
        rows.append(["total", *(_score(((totals.get(alignment) or {}).get(j) or {}).get(a) if j in counted else None)
                                for j in per_judge for a in pair)])
        caption = ALIGNMENT_TITLES.get(alignment, alignment) + "; " + ", ".join(f"{j} = {judges.get(j, '?')}" for j in per_judge)
        section.blocks.append(Table(headers, rows, caption=caption))
        for judge, per_subtopic in per_judge.items():
            section.blocks.append(Figures([BarChart(f"Γ per subtopic: {judge}, {ALIGNMENT_TITLES.get(alignment, alignment)}",
                                                    {a: {s: v.get(a) for s, v in per_subtopic.items() if v.get(a) is not None}
                                                     for a in pair}, scale=10, percent=False)]))
    section.blocks.append(Para(_winner_line(evaluation), "lead"))
    reasons = evaluation.get("reasons") or {}
    for judge, given in reasons.items():
        section.blocks.append(Para(f"{judge}'s reasons", "h"))
        section.blocks.append(Table(["subtopic", "alignment", "claim", "justification"],
                                    [[r.get("subtopic", ""), r.get("alignment", ""), r.get("claim", ""), r.get("justification", "")]
                                     for r in given if isinstance(r, Mapping)], numeric=False))
    return section


def _winner_line(evaluation: Mapping[str, Any]) -> str:
    """"Winner: A (judge-1 → A; judge-2 → tie); 2 missing score(s) left out of the totals"."""
    names: dict[Any, str] = {"tie": "tie", None: "missing", **_SHORT}
    per_judge = "; ".join(f"{judge} → {names.get(w, str(w))}" for judge, w in (evaluation.get("winners") or {}).items())
    winner = evaluation.get("winner")
    line = f"Winner: {names.get(winner, str(winner)) if winner is not None else 'none'}" + (f" ({per_judge})" if per_judge else "")
    gaps = evaluation.get("gaps") or 0
    return line + (f"; {gaps} missing score(s) left out of the totals" if gaps else "")
