"""What ``symposium run`` prints besides the events, per protocol: the conference's stages
table, the deliberation's analyzer panel, D3's verdict and token budget, the humanloop panel's
stance report. Optional: a protocol without an entry in :data:`REPORTS` prints its events only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from protocols.measures.analyzer import Analysis
from protocols.core.events import DebateFinished, Event, JudgementMade
from store.journal import Journal
from store.queries import Queries
from store.stances import stance_report

from tui.sanitize import terminal_safe


def stages_table(stages: list[dict[str, Any]]) -> Table:
    """One row per stage: rounds, the judge's verdicts, what closed it, the evaluation's mean."""
    table = Table(title="Stages")
    for name in ("stage", "rounds", "verdicts", "closed by", "evaluation"):
        table.add_column(name)
    for s in stages:
        mean = (s.get("evaluation") or {}).get("mean")
        table.add_row(Text(terminal_safe(f"{s['stage']}. {s['name']}")), Text(str(s["rounds"])),
                      Text(", ".join(s["verdicts"]) or "—"), Text(s["closed_by"] or "not reached"),
                      Text("—" if mean is None else f"{mean:.1f} / 10"))
    return table


async def with_stages_table(events: AsyncIterator[Event], console: Console) -> AsyncIterator[Event]:
    """The run's events, then (once the end is journalled and shown) the stages table."""
    try:
        async for event in events:
            yield event
            if isinstance(event, DebateFinished) and event.outcome.get("stages"):
                console.print(stages_table(event.outcome["stages"]))
    finally:
        aclose = getattr(events, "aclose", None)  # an async generator's: the protocol's clean-up now
        if aclose is not None:
            await aclose()


async def with_panel(events: AsyncIterator[Event], console: Console) -> AsyncIterator[Event]:
    """The run's events, and after each analysis (once it is journalled and shown) its panel."""
    try:
        async for event in events:
            yield event
            if isinstance(event, JudgementMade) and event.kind == "analysis":
                panel = Analysis.from_json(event.reasons).render()
                console.print(Text(terminal_safe(panel), style="dim"))
    finally:
        aclose = getattr(events, "aclose", None)  # an async generator's: the protocol's clean-up now
        if aclose is not None:
            await aclose()


def print_verdict(outcome: dict[str, Any], console: Console | None = None) -> None:
    """Each pass's verdict and tally, the swap audit, and tokens per role against the budget."""
    console = console or Console(highlight=False)
    for p in outcome["passes"]:
        t = p["tally"]
        console.print(Text(f"{p['order']}: verdict {p['verdict']} ({p['decided_by']}; votes A {t['A']}, B {t['B']}, "
                           f"abstained {t['abstain']}; judge's cumulative A {p['cumulative']['A']:g}, "
                           f"B {p['cumulative']['B']:g}) · stopped: {terminal_safe(p['stop_reason'])}", style="bold"))
        budget = Table(title=Text(f"Tokens · {p['order']}"))
        for column in ("role", "used", "limit"):
            budget.add_column(column, justify="right" if column != "role" else "left")
        for kind, used in p["budget"]["used"].items():
            limit = p["budget"]["limits"].get(kind)
            budget.add_row(Text(kind), Text(str(used)), Text("—" if limit is None else str(limit)))
        console.print(budget)
    audit = outcome.get("swap_audit")
    if audit:
        held = "held" if audit["held"] else "did NOT hold"
        console.print(Text(f"swap audit: the verdict {held} (A/B → {audit['verdicts']['A/B']}, B/A → {audit['verdicts']['B/A']})",
                           style="bold"))


def print_stance_report(report: dict[str, Any], console: Console | None = None) -> None:
    """The stance table of each debate (each step's stated 0-100 confidence in brackets) and the
    change rates by condition, ours and Triem's count beside it (plain text, never markup)."""
    console = console or Console(highlight=False)
    for debate_id, a in report["debates"].items():
        table = Table(title=Text(f"Stances · {debate_id} · {a['condition']}"))
        table.add_column("seat")
        for r in a["rounds"]:
            table.add_column(f"round {r}")
        confidence = a.get("confidence", {})
        for role, labels in a["table"].items():
            seat = role + (" (human)" if role == a["human"] else "")
            stated = confidence.get(role) or [None] * len(labels)
            table.add_row(Text(terminal_safe(seat)), *(Text(terminal_safe(label or "?") + ("" if c is None else f" ({c:g})"))
                                                       for label, c in zip(labels, stated, strict=True)))
        console.print(table)
        for step, counts in a["by_transition"].items():
            console.print(Text(f"  {step}: {_rate(counts)} · {_triem(counts, short=True)}"))
    for condition, row in report["by_condition"].items():
        line = f"{condition}: {row['debates']} debate(s), {_rate(row)}"
        if condition == "human present" and row["changes"]:
            line += f", {row['toward_human']} toward the human's stance, {row['away_from_human']} away"
        console.print(Text(line, style="bold"))
        console.print(Text(f"  {_triem(row)}"))
    if report["by_condition"]:
        console.print(Text("  (ours: changes between positions, steps without one left out; Triem's count: every AI "
                           "seat's every round transition, no stance and hallucination coded 3 — seed 001's 1,200 "
                           "and 400)", style="dim"))


def _rate(counts: dict[str, Any]) -> str:
    rate = counts["change_rate"]
    shown = "—" if rate is None else f"{rate:.0%}"
    return f"{counts['changes']} change(s) in {counts['opportunities']} opportunities ({shown})"


def _triem(counts: dict[str, Any], *, short: bool = False) -> str:
    """Triem's count of the same transitions (see :mod:`protocols.humanloop.stance`)."""
    triem = counts.get("triem")
    if not isinstance(triem, dict):
        return "Triem's count: —"
    rate = triem["change_rate"]
    if short:
        return f"Triem: {triem['changes']} in {triem['opportunities']} ({'—' if rate is None else f'{rate:.0%}'})"
    extra = [f"{triem['via_no_stance']} into or out of no stance"] if triem["via_no_stance"] else []
    extra += [f"{triem['unlabelled']} with an unlabelled step left out"] if triem["unlabelled"] else []
    shown = "; ".join(["—" if rate is None else f"{rate:.0%}", *extra])
    return f"Triem's count: {triem['changes']} change(s) in {triem['opportunities']} opportunities ({shown})"


def _d3_after(db: str | None, debate_id: str) -> None:
    with Journal(db) as journal:
        debate = Queries(journal).debate(debate_id)
    if debate and debate.get("outcome"):
        print_verdict(debate["outcome"])


def _humanloop_after(db: str | None, debate_id: str) -> None:
    with Journal(db) as journal:
        print_stance_report(stance_report(journal, [debate_id]))


@dataclass(frozen=True)
class Report:
    """``during``: wraps the run's events (prints as they pass); ``after``: reads the journal
    once the run is over (journal file, debate id)."""

    during: Callable[[AsyncIterator[Event], Console], AsyncIterator[Event]] | None = None
    after: Callable[[str | None, str], None] | None = None


REPORTS: dict[str, Report] = {
    "agreement": Report(during=with_stages_table),
    "deliberation": Report(during=with_panel),
    "d3": Report(after=_d3_after),
    "humanloop": Report(after=_humanloop_after),
}
