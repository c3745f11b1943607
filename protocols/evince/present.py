"""EVINCE's findings as neutral blocks (see :mod:`protocols.core.present`): the top label and
how the debate ended, each agent's CRIT weight in P_f, Tables 7.2/7.3's improvement row, the
section 7.4.6 label check and the joint recommendations of appendix 7.E.6."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import BarChart, Bullets, DefList, Figures, Para, Section, Table, num
from protocols.core.text import worded


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    items = [("Top label", outcome.get("top") or "—"), ("Agents agreed", num(outcome.get("agreed"))),
             ("Ending", outcome.get("ending") or "—")]
    result = Section("evince", "EVINCE's result", [DefList(items)],
                     claims=frozenset({"final_distribution", "top", "crit", "weights", "improvement", "agreed", "ending"}))
    weights = outcome.get("weights") or outcome.get("crit")
    if weights:
        result.blocks.append(Figures([BarChart("CRIT weight per agent (1–10)", {"CRIT": weights}, scale=10, percent=False)]))
    if outcome.get("improvement"):
        result.blocks.append(Table(["measure", "change from the first to the last round (%)"],
                                   [[k, num(v)] for k, v in outcome["improvement"].items()], caption="Improvement"))
    sections = [result]
    check = outcome.get("label_check")
    if isinstance(check, Mapping) and check.get("flag"):
        sections.append(Section("label_check", "The reference label (section 7.4.6)", [Para(f"⚑ {check['flag']}", "warn")],
                                claims=frozenset({"label_check"}), brief=True))
    recs = outcome.get("recommendations")
    if isinstance(recs, Mapping) and any(worded(recs.get(k)) for k in ("questions", "tests")):
        blocks: list[Any] = []
        for key, title in (("questions", "Further questions"), ("tests", "Tests")):
            asked = worded(recs.get(key))
            if asked:
                blocks += [Para(title, "h"), Bullets(asked)]
        sections.append(Section("recommendations", "Recommendations", blocks, claims=frozenset({"recommendations"}), brief=True))
    return sections
