"""D3's findings as neutral blocks (see :mod:`protocols.core.present`): each pass's verdict,
tally and cumulative scores, the judge's scores per round, the jury's votes, the token budget
per role, and the position-swap audit (Chaithanya Bandi, Abir Harrasse, "Debate, Deliberate,
Decide (D3): A Cost-Aware Adversarial Framework for Reliable and Interpretable LLM Evaluation",
sections 3 and 4.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import DefList, Figures, LineChart, Para, Section, Table, details, num, number, value_block


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    section = Section("d3", "D3: passes and audits",
                      [DefList([("Verdict", outcome.get("verdict") or "—"), ("Variant", outcome.get("variant") or "—")])],
                      claims=frozenset({"passes", "swap_audit", "verdict", "variant", "usage"}))
    for i, p in enumerate(outcome.get("passes") or [], start=1):
        section.blocks.append(Para(f"Pass {i} (answers shown as {p.get('order', '?')})", "h"))
        section.blocks.append(DefList([("Verdict", p.get("verdict") or "—"), ("Decided by", p.get("decided_by") or "—"),
                                       ("Why it stopped", p.get("stop_reason") or "—"),
                                       ("Tally", details(p.get("tally"))), ("Cumulative scores", details(p.get("cumulative")))]))
        rounds = p.get("rounds") or []
        if rounds:
            section.blocks.append(Figures([LineChart(f"Pass {i}: the judge's scores", {
                "A": [(float(r["round"]), number(r.get("score_a"))) for r in rounds],
                "B": [(float(r["round"]), number(r.get("score_b"))) for r in rounds]})]))
            section.blocks.append(value_block(rounds))
        votes = p.get("votes") or []
        if votes:
            section.blocks.append(Table(["juror", "model", "persona", "vote", "scores", "rationale"], [
                [v.get("juror"), v.get("model"), v.get("persona") or "", v.get("vote") or "—", details(v.get("scores")),
                 v.get("rationale") or ""] for v in votes], caption="The jury", numeric=False))
        budget = p.get("budget")
        if budget:
            section.blocks.append(Para("Budget", "h"))
            section.blocks.append(value_block(budget))
    audit = outcome.get("swap_audit")
    section.blocks.append(Para("Position-swap audit", "h"))
    section.blocks.append(value_block(audit) if audit else Para("Not run (swap_audit off).", "note"))
    if outcome.get("usage"):
        section.blocks.append(Table(["role", *(k for k in next(iter(outcome["usage"].values())))],
                                    [[role, *(num(v) for v in u.values())] for role, u in outcome["usage"].items()],
                                    caption="Tokens used per role"))
    return [section]
