"""The staged conference's findings as neutral blocks (see :mod:`protocols.core.present`): each
stage's rounds, the agreement judge's verdicts, what closed it and the evaluator's factors
(Selina Heller, Mohamed Ibrahim, David Antony Selby, Sebastian Vollmer, "Finding Common Ground:
Using Large Language Models to Detect Agreement in Multi-Agent Decision Conferences", Algorithm 1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import BarChart, DefList, Figures, Section, Table, num


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    stages = outcome.get("stages") or []
    section = Section("stages", "The conference's stages",
                      [DefList([("Stages agreed", f"{num(outcome.get('agreed_stages'))} of {len(stages)}")])],
                      claims=frozenset({"stages", "agreed_stages"}))
    if stages:
        section.blocks.append(Table(["stage", "task", "agreed", "closed by", "rounds", "verdicts", "evaluation (mean)"], [
            [s.get("stage"), s.get("name") or s.get("task"), num(s.get("agreed")), s.get("closed_by") or "", s.get("rounds"),
             ", ".join(str(v) for v in s.get("verdicts") or []), num((s.get("evaluation") or {}).get("mean"))]
            for s in stages], numeric=False))
        factors = {f"stage {s.get('stage')}": (s.get("evaluation") or {}).get("factors") or {} for s in stages}
        if any(factors.values()):
            section.blocks.append(Figures([BarChart("The evaluator's factors (1–10)", factors, scale=10, percent=False)]))
        for s in stages:
            comment = (s.get("evaluation") or {}).get("comment")
            if comment:
                section.blocks.append(DefList([(f"Evaluator on stage {s.get('stage')}", comment)]))
    return [section]
