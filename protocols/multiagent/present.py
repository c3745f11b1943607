"""The multiagent debate's findings as neutral blocks (:mod:`protocols.core.present`): each
agent's answer per round, and the vote."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import BarChart, DefList, Figures, Section, Table


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    answers = outcome.get("answers") or {}
    rounds = max((len(a) for a in answers.values()), default=0)
    votes = outcome.get("votes") or {}
    section = Section("multiagent", "Answers and the vote", claims=frozenset({"answers", "final", "votes", "majority", "rounds"}),
                      brief=True)
    section.blocks.append(DefList([("Majority", outcome.get("majority") or "none"),
                                   ("Votes", ", ".join(f"{a}: {n}" for a, n in votes.items()) or "—")]))
    if answers:
        section.blocks.append(Table(["agent", *(("alone" if r == 0 else f"round {r}") for r in range(rounds))],
                                    [[role, *((a or "—") for a in given)] for role, given in answers.items()],
                                    caption="Each agent's answer per round", numeric=False))
    if votes:
        total = sum(votes.values())
        section.blocks.append(Figures([BarChart("The vote", {"share": {a: n / total for a, n in votes.items()}})]))
    return [section]
