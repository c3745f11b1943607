"""Printing a protocol's events to a terminal (the headless ``symposium run`` / ``chat``).

Every string an event carries is printed as plain text (never as Rich markup) after
:func:`terminal_safe`: not only model text but names, kinds, verdicts, statuses and stop
reasons too, since a judge's verdict is model output, a stop reason can be a server's error
text and a title is user input (``tests/guarantees/test_printed_events.py`` sends hostile text
in every field of every event type).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from protocols.core.events import (
    AwaitingModerator,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    Notice,
    PhaseChanged,
    TokenDelta,
    TurnFinished,
    TurnStarted,
    about_context,
)
from protocols.core.outcome import moderator_action, outcome_in_words
from protocols.core.roles import AGENT_A, AGENT_B

from tui.sanitize import terminal_safe

ROLE_STYLES = {AGENT_A: "cyan", AGENT_B: "magenta", "user": "green", "assistant": "cyan"}


class EventPrinter:
    """Streams turns as they are generated; prints metrics and judgements as tables."""

    def __init__(self, console: Console | None = None, *, show_headers: bool = True) -> None:
        self.console = console or Console(highlight=False)
        self.show_headers = show_headers
        self._streaming = False
        self._metric_rows: list[dict[str, Any]] = []
        self._phase = ""
        self._protocol = ""
        self._context_said: set[tuple[int | None, str, str]] = set()  # a call judged twice (D3) is noted once

    def __call__(self, event: Event) -> None:
        c = self.console
        match event:
            case DebateResumed():
                c.print(Text(f"resuming debate {terminal_safe(event.debate_id)} at round {event.from_round}", style="bold"))
            case DebateStarted():
                self._protocol = event.protocol
                if self.show_headers:
                    c.print(Text(f"{terminal_safe(event.protocol)} · {terminal_safe(event.title)} · debate {terminal_safe(event.debate_id)}", style="bold"))
            case PhaseChanged():
                self._phase = event.phase
                kappa = f" · κ={event.kappa:.2f}" if event.kappa is not None else ""
                c.print(Text(f"\n── {terminal_safe(event.phase)} · round {event.round}{kappa} ──", style="bold yellow"))
            case TurnStarted():
                if self.show_headers:
                    style = ROLE_STYLES.get(event.role, "bold")
                    c.print(Text(f"\n{terminal_safe(event.role)} ({terminal_safe(event.model_id)}) · {terminal_safe(event.kind)}", style=f"bold {style}"))
                self._streaming = True
            case TokenDelta():
                c.print(Text(terminal_safe(event.text)), end="", soft_wrap=True)
            case TurnFinished():
                if self._streaming:
                    c.print()
                    self._streaming = False
                if event.distribution:
                    dist = " · ".join(f"{terminal_safe(k)} {v:.0%}" for k, v in sorted(event.distribution.items(), key=lambda kv: -kv[1]))
                    c.print(Text(f"  ↳ {dist}", style="dim"))
                for note in event.parse_notes:
                    c.print(Text(f"  ↳ note: {terminal_safe(note)}", style="dim italic"))
            case MetricsComputed():
                self._metric_rows.append({"round": event.round, "phase": self._phase, "kappa": event.kappa, **event.metrics})
                m = event.metrics
                parts = [f"{k}={m[k]:.3f}" for k in ("wd", "mi", "crit", "jsd") if m.get(k) is not None]
                c.print(Text(f"  metrics round {event.round}: " + "  ".join(parts), style="dim"))
            case JudgementMade():
                score = "" if event.score is None else f" {event.score:g}"
                verdict = f" {terminal_safe(event.verdict)}" if event.verdict else ""
                about = f" on {terminal_safe(event.subject)}" if event.subject else ""
                c.print(Text(f"  ⚖ {terminal_safe(event.judge_role)} ({terminal_safe(event.judge_model)}) {terminal_safe(event.kind)}{about}: "
                             f"{terminal_safe(event.target or '')}{score}{verdict}", style="blue"))
                notes = event.reasons.get("notes") if isinstance(event.reasons, dict) else None
                for note in notes if isinstance(notes, list) else []:
                    said = (event.round, event.judge_role, note)
                    if isinstance(note, str) and about_context(note) and said not in self._context_said:
                        self._context_said.add(said)
                        c.print(Text(f"    ✂ {terminal_safe(note)}", style="dim italic"))
            case ModeratorActed():
                c.print(Text(f"  ✋ {terminal_safe(moderator_action(event.kind, event.payload, event.round))}", style="yellow"))
            case Notice():
                c.print(Text(f"  ⚠ notice: {terminal_safe(event.text)}", style="bold yellow"))
            case AwaitingModerator():
                c.print(Text(f"  … {terminal_safe(event.prompt)}", style="yellow"))
            case DebateFinished():
                if self._streaming:
                    c.print()
                    self._streaming = False
                if self._metric_rows:
                    c.print(metrics_table(self._metric_rows))
                for part in socrasynth_report(event.outcome):
                    c.print(part)
                if self.show_headers:
                    words = outcome_in_words({"protocol": self._protocol, "status": event.status,
                                             "stop_reason": event.stop_reason, "outcome": event.outcome})
                    c.print(Text(f"\n{terminal_safe(words.ending)}", style="bold"))
                    if words.conclusion:
                        c.print(Text(terminal_safe(words.conclusion)))


def metrics_table(rows: list[dict[str, Any]]) -> Table:
    """The per-round metrics table, laid out like the paper's Tables 7.2 and 7.3."""
    table = Table(title="Metrics per round", show_lines=False)
    for name in ("round", "phase", "κ", "WD", "MI", "CRIT", "JSD"):
        table.add_column(name, justify="right")
    for r in rows:  # cells as Text: a plain str cell would be read as markup
        cells = (str(r["round"]), terminal_safe(str(r.get("phase", ""))), _fmt(r.get("kappa")), _fmt(r.get("wd")), _fmt(r.get("mi")),
                 _fmt(r.get("crit")), _fmt(r.get("jsd")))
        table.add_row(*(Text(cell) for cell in cells))
    return table


ALIGNMENT_TITLES = {
    "a_argues": "CRIT scores: Agent A argues, Agent B counters (as Table 6.5)",
    "b_argues": "CRIT scores: Agent B argues, Agent A counters (as Table 6.6)",
}


def socrasynth_report(outcome: dict[str, Any]) -> list[RenderableType]:
    """A SocraSynth outcome's judge tables, winners, joint text and Q&A verdicts (nothing for
    other protocols' outcomes)."""
    parts: list[RenderableType] = []
    evaluation = outcome.get("evaluation")
    if isinstance(evaluation, dict) and evaluation.get("alignments"):
        parts += [judge_table(evaluation, alignment) for alignment in evaluation["alignments"] if evaluation["alignments"][alignment]]
        parts.append(_winners(evaluation))
    joint = outcome.get("joint")
    if isinstance(joint, dict) and ("proposal" in joint or "recommendations" in joint):
        parts.append(joint_text(joint))
    qa = outcome.get("qa")
    if isinstance(qa, dict) and qa.get("verdicts"):
        votes = ", ".join(f"{judge} → {verdict or 'missing'}" for judge, verdict in qa["verdicts"].items())
        parts.append(Text(f"Debate vs one answer ({terminal_safe(str(qa.get('model', '')))}): {terminal_safe(votes)}", style="bold"))
    return parts


def judge_table(evaluation: dict[str, Any], alignment: str) -> Table:
    """Subtopic rows × one (arguing, countering) column pair per judge, with totals, laid out
    like Tables 6.5 and 6.6; a missing score shows as —."""
    arguing, countering = (AGENT_A, AGENT_B) if alignment == "a_argues" else (AGENT_B, AGENT_A)
    judges: dict[str, dict[str, dict[str, float | None]]] = evaluation["alignments"][alignment]
    models = evaluation.get("judges", {})
    caption = ", ".join(f"{judge} = {models.get(judge, '?')}" for judge in judges)
    title = Text(terminal_safe(ALIGNMENT_TITLES.get(alignment, alignment)))
    table = Table(title=title, caption=Text(terminal_safe(caption)), show_footer=True)
    table.add_column(Text("Subtopic"), footer=Text("Total"))
    for judge in judges:
        totals = evaluation.get("totals", {}).get(alignment, {}).get(judge, {})
        for role in (arguing, countering):
            head = Text(f"{terminal_safe(judge)}\n{_SHORT[role]}'s")
            table.add_column(head, footer=Text(_score(totals.get(role))), justify="right")
    subtopics = list(dict.fromkeys(key for rows in judges.values() for key in rows))
    for key in subtopics:
        cells = [_score(judges[j].get(key, {}).get(role)) for j in judges for role in (arguing, countering)]
        table.add_row(Text(terminal_safe(key)), *(Text(cell) for cell in cells))
    return table


def joint_text(joint: dict[str, Any]) -> Text:
    """The conciliatory stage's joint proposal (or joint recommendations), as plain text."""
    title = "Joint proposal" if "proposal" in joint else "Joint recommendations"
    out = Text(f"\n{title} ({terminal_safe(', '.join(map(str, joint.get('written_by', []))))})\n", style="bold")
    out.append(terminal_safe(str(joint.get("proposal") or joint.get("recommendations") or "")) + "\n")
    for key, mark in (("pros", "+"), ("cons", "−"), ("questions", "?"), ("tests", "✚")):
        for item in joint.get(key) or []:
            out.append(f"  {mark} {terminal_safe(str(item))}\n")
    return out


def _winners(evaluation: dict[str, Any]) -> Text:
    names: dict[str | None, str] = {"tie": "tie", None: "no complete row"}
    names.update(_SHORT.items())
    per_judge = "; ".join(f"{judge} → {names.get(w, w)}" for judge, w in evaluation.get("winners", {}).items())
    gaps = evaluation.get("gaps", 0)
    line = f"Winner: {names.get(evaluation.get('winner'), '?')} ({per_judge})"
    return Text(terminal_safe(line) + (f"; {gaps} missing score(s) left out of the totals" if gaps else ""), style="bold")


_SHORT = {AGENT_A: "A", AGENT_B: "B"}


def _score(value: Any) -> str:
    return "—" if value is None else f"{value:g}"


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"
