"""The panel's study across debates: how often stances changed, by condition (Haley Triem,
"Tipping the Balance: Human Intervention in Large Language Model Multiagent Debate", 2024,
"Data Organization"), ``symposium study stances``.

The measures are :func:`protocols.humanloop.stance.analyze` and
:func:`~protocols.humanloop.stance.change_rates`; this module reads their input from journalled
debates: the ``stance`` judgements (one per step, ``target`` = the seat's role, ``verdict`` = its
label, ``score`` = the confidence the seat stated), which seat the person held (the participant
whose backend is ``human``), and from the debate's config the affirm / not-affirm label and the
condition (``synthetic`` for one instance simulating the panel). So a study of last month's
debates needs nothing but the journal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protocols.core.definition import Study
from protocols.core.present import Para, Section, Table, num
from protocols.humanloop.stance import STANCE, StanceStep, analyze, change_rates


def stances(debates: Sequence[Mapping[str, Any]], values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Per debate with stance judgements: its stance table and changes; across them, change
    rates by condition. ``{"debates": {id: analysis}, "by_condition": {"AI only": …, …}}``."""
    analyses: dict[str, Any] = {}
    for debate in debates:
        steps = [StanceStep(j["round"], j["target"], j["verdict"], j["score"])
                 for j in debate.get("judgements") or [] if j.get("kind") == STANCE]
        if not steps:
            continue
        labelled = {s.role for s in steps}
        seats = [p["role"] for p in debate.get("participants") or []]
        roles = [role for role in seats if role in labelled]
        roles += [role for role in dict.fromkeys(s.role for s in steps) if role not in roles]
        human = next((p["role"] for p in debate.get("participants") or [] if p.get("backend") == "human"), None)
        config = debate.get("config") if isinstance(debate.get("config"), Mapping) else {}
        assert isinstance(config, Mapping)
        condition = "synthetic" if config.get("condition") == "synthetic" else None
        analyses[str(debate["id"])] = analyze(steps, roles=roles, human=human if human in labelled else None,
                                              binary=config.get("binary_label"), condition=condition)
    return {"debates": analyses, "by_condition": change_rates(analyses.values())}


def _rate(counts: Mapping[str, Any]) -> str:
    rate = counts["change_rate"]
    shown = "—" if rate is None else f"{rate:.0%}"
    return f"{counts['changes']} change(s) in {counts['opportunities']} opportunities ({shown})"


def _triem(counts: Mapping[str, Any], *, short: bool = False) -> str:
    """Triem's count of the same transitions (see :mod:`protocols.humanloop.stance`)."""
    triem = counts.get("triem")
    if not isinstance(triem, Mapping):
        return "Triem's count: —"
    rate = triem["change_rate"]
    if short:
        return f"Triem: {triem['changes']} in {triem['opportunities']} ({'—' if rate is None else f'{rate:.0%}'})"
    extra = [f"{triem['via_no_stance']} into or out of no stance"] if triem["via_no_stance"] else []
    extra += [f"{triem['unlabelled']} with an unlabelled step left out"] if triem["unlabelled"] else []
    shown = "; ".join(["—" if rate is None else f"{rate:.0%}", *extra])
    return f"Triem's count: {triem['changes']} change(s) in {triem['opportunities']} opportunities ({shown})"


def present(result: Mapping[str, Any]) -> list[Section]:
    """Each debate's stance table (each step's stated 0-100 confidence in brackets) and its
    transitions, then the change rates by condition, ours and Triem's count beside it."""
    sections = []
    for debate_id, a in result["debates"].items():
        section = Section(f"stances-{debate_id}", f"Stances · {debate_id} · {a['condition']}")
        confidence = a.get("confidence", {})
        rows = []
        for role, labels in a["table"].items():
            stated = confidence.get(role) or [None] * len(labels)
            rows.append([role + (" (human)" if role == a["human"] else ""),
                         *((label or "?") + ("" if c is None else f" ({num(c)})") for label, c in zip(labels, stated, strict=True))])
        section.blocks.append(Table(["seat", *(f"round {r}" for r in a["rounds"])], rows, numeric=False))
        for step, counts in a["by_transition"].items():
            section.blocks.append(Para(f"{step}: {_rate(counts)} · {_triem(counts, short=True)}"))
        sections.append(section)
    if result["by_condition"]:
        overall = Section("stances-by-condition", "Change rates by condition")
        for condition, row in result["by_condition"].items():
            line = f"{condition}: {row['debates']} debate(s), {_rate(row)}"
            if condition == "human present" and row["changes"]:
                line += f", {row['toward_human']} toward the human's stance, {row['away_from_human']} away"
            overall.blocks += [Para(line, "h"), Para(_triem(row))]
        overall.blocks.append(Para("Ours: changes between positions, steps without one left out; Triem's count: every AI "
                                   "seat's every round transition, no stance and hallucination coded 3 (Triem's 1,200 "
                                   "and 400).", "note"))
        sections.append(overall)
    return sections


STUDY = Study("stances", "stance tables and change rates by condition of journalled human-in-the-loop panels (Triem)",
              inputs=(), run=stances, present=present)
