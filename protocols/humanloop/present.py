"""The human-in-the-loop panel's findings as neutral blocks (see :mod:`protocols.core.present`):
the decision, each seat's stance per round with its stated confidence, and how often stances
changed, by this project's measure and by the count of Haley Triem, "Tipping the Balance: Human
Intervention in Large Language Model Multiagent Debate" (2024, "Data Organization")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import BarChart, DefList, Figures, LineChart, Para, Section, Table, num, number, value_block


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    analysis = outcome.get("analysis") or {}
    section = Section("stances", "Stance analysis (Triem)",
                      [DefList([("Decision", outcome.get("decision") or "—"), ("Condition", outcome.get("condition") or "—"),
                                ("Labels", ", ".join(outcome.get("labels") or []))])],
                      claims=frozenset({"analysis", "decision", "condition", "labels", "seats"}))
    table = analysis.get("table") or {}
    rounds = analysis.get("rounds") or []
    if table:
        confidence = analysis.get("confidence") or {}
        rows = [[role, *(f"{s}" + (f" ({num(c)})" if c is not None else "") for s, c in
                         zip(stances, (confidence.get(role) or []) + [None] * len(stances)))]
                for role, stances in table.items()]
        section.blocks.append(Table(["seat", *(f"round {r}" for r in rounds)], rows,
                                    caption="Each seat's stance per round (stated confidence)", numeric=False))
        if confidence:
            section.blocks.append(Figures([LineChart("Stated confidence per round", {
                role: [(float(r), number(c)) for r, c in zip(rounds, values)] for role, values in confidence.items()})]))
    triem = analysis.get("triem")
    measures = [("changes", analysis.get("changes")), ("opportunities", analysis.get("opportunities")),
                ("change rate", analysis.get("change_rate")), ("toward the person", analysis.get("toward_human")),
                ("away from the person", analysis.get("away_from_human"))]
    section.blocks.append(DefList([(k, num(v) if v is not None else "—") for k, v in measures]))
    if triem:
        section.blocks.append(Para("Triem's measures (a change through “no stance” counts)", "h"))
        section.blocks.append(value_block(triem))
    by_role = analysis.get("by_role") or {}
    rates = {"changes of stance (ours)": {role: m["change_rate"] for role, m in by_role.items()
                                               if isinstance(m.get("change_rate"), int | float)},
             "Triem (through “no stance”)": {role: (m.get("triem") or {})["change_rate"] for role, m in by_role.items()
                                                     if isinstance((m.get("triem") or {}).get("change_rate"), int | float)}}
    if any(rates.values()):
        section.blocks.append(Figures([BarChart("Stance change rate per seat", rates)],
                                      "Share of a seat's opportunities at which its stance changed, by both measures."))
    if by_role:
        section.blocks.append(Table(["seat", "changes", "opportunities", "change rate", "toward", "away", "Triem changes",
                                     "Triem rate"], [
            [role, num(m.get("changes")), num(m.get("opportunities")), num(m.get("change_rate")), num(m.get("toward_human")),
             num(m.get("away_from_human")), num((m.get("triem") or {}).get("changes")),
             num((m.get("triem") or {}).get("change_rate"))] for role, m in by_role.items()], caption="Per seat"))
    if analysis.get("transitions"):
        section.blocks.append(Para("Transitions", "h"))
        section.blocks.append(value_block(analysis["transitions"]))
    return [section]
