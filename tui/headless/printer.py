"""Printing a protocol's events to a terminal (the headless ``symposium run`` / ``chat``).

Every string an event carries is printed as plain text (never as Rich markup) after
:func:`terminal_safe`: not only model text but names, kinds, verdicts, statuses and stop
reasons too, since a judge's verdict is model output, a stop reason can be a server's error
text and a title is user input (``tests/guarantees/test_printed_events.py`` sends hostile text
in every field of every event type).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from protocols.core.events import (
    AwaitingModerator,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
    EvidenceAttached,
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
from protocols.core.evidence import cited_line
from protocols.core.outcome import moderator_action, outcome_in_words
from protocols.core.roles import AGENT_A, AGENT_B
from protocols.measures.analyzer import ANALYSIS, Analysis
from protocols.registry import BY_NAME
from tui.headless.sections import renderables
from tui.sanitize import terminal_safe

ROLE_STYLES = {AGENT_A: "cyan", AGENT_B: "magenta", "user": "green", "assistant": "cyan"}


class EventPrinter:
    """Streams turns as they are generated; prints metrics and judgements as tables, and at the
    end the protocol's findings (its definition's ``present``, :mod:`tui.headless.sections`)."""

    def __init__(self, console: Console | None = None, *, show_headers: bool = True, protocol: str = "") -> None:
        self.console = console or Console(highlight=False)
        self.show_headers = show_headers
        self._streaming = False
        self._metric_rows: list[dict[str, Any]] = []
        self._phase = ""
        #: The protocol's registry name (a resumed run starts without a DebateStarted: give it here).
        self._protocol = protocol
        self._context_said: set[tuple[int | None, str, str]] = set()  # a call judged twice (D3) is noted once

    def __call__(self, event: Event) -> None:
        c = self.console
        match event:
            case DebateResumed():
                c.print(Text(f"resuming debate {terminal_safe(event.debate_id)} at round {event.from_round}", style="bold"))
            case DebateStarted():
                self._protocol = event.protocol
                if self.show_headers:
                    c.print(Text(f"{terminal_safe(event.protocol)} · {terminal_safe(event.title)} · "
                                 f"debate {terminal_safe(event.debate_id)}", style="bold"))
            case PhaseChanged():
                self._phase = event.phase
                kappa = f" · κ={event.kappa:.2f}" if event.kappa is not None else ""
                c.print(Text(f"\n── {terminal_safe(event.phase)} · round {event.round}{kappa} ──", style="bold yellow"))
            case TurnStarted():
                if self.show_headers:
                    style = ROLE_STYLES.get(event.role, "bold")
                    c.print(Text(f"\n{terminal_safe(event.role)} ({terminal_safe(event.model_id)}) · {terminal_safe(event.kind)}",
                                 style=f"bold {style}"))
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
                for cited in event.citations:
                    line = cited_line(cited)
                    c.print(Text(f"  {terminal_safe(line)}", style="green" if cited.status == "supported" else "red"
                                 if cited.status == "not_found" else "dim"), soft_wrap=True)
            case EvidenceAttached():
                names = ", ".join(terminal_safe(f.name) for f in event.files[:4]) + (", …" if len(event.files) > 4 else "")
                c.print(Text(f"evidence: {len(event.files)} file(s) ({names}), {len(event.passages)} passages", style="dim"))
            case MetricsComputed():
                self._metric_rows.append({"round": event.round, "phase": self._phase, "kappa": event.kappa, **event.metrics})
                m = event.metrics
                parts = [f"{k}={m[k]:.3f}" for k in ("wd", "mi", "crit", "jsd") if m.get(k) is not None]
                c.print(Text(f"  metrics round {event.round}: " + "  ".join(parts), style="dim"))
            case JudgementMade():
                score = "" if event.score is None else f" {event.score:g}"
                verdict = f" {terminal_safe(event.verdict)}" if event.verdict else ""
                about = f" on {terminal_safe(event.subject)}" if event.subject else ""
                c.print(Text(f"  ⚖ {terminal_safe(event.judge_role)} ({terminal_safe(event.judge_model)}) "
                             f"{terminal_safe(event.kind)}{about}: {terminal_safe(event.target or '')}{score}{verdict}", style="blue"))
                notes = event.reasons.get("notes") if isinstance(event.reasons, dict) else None
                for note in notes if isinstance(notes, list) else []:
                    said = (event.round, event.judge_role, note)
                    if isinstance(note, str) and about_context(note) and said not in self._context_said:
                        self._context_said.add(said)
                        c.print(Text(f"    ✂ {terminal_safe(note)}", style="dim italic"))
                if event.kind == ANALYSIS and isinstance(event.reasons, dict):  # the analyzer's map, whoever ran it
                    c.print(Text(terminal_safe(Analysis.from_json(event.reasons).render()), style="dim"))
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
                definition = BY_NAME.get(self._protocol)
                if definition is not None and definition.present is not None:
                    ended = {"protocol": self._protocol, "status": event.status, "stop_reason": event.stop_reason}
                    for part in renderables(definition.present(event.outcome, ended)):
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


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"
