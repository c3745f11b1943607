"""Printing a protocol's events to a terminal (the headless ``symposium run`` / ``chat``).

Model text is printed as plain text (never as Rich markup) after :func:`terminal_safe`.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from protocols.events import (
    AwaitingModerator,
    DebateFinished,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    PhaseChanged,
    TokenDelta,
    TurnFinished,
    TurnStarted,
)

from .sanitize import terminal_safe

ROLE_STYLES = {"agent-a": "cyan", "agent-b": "magenta", "user": "green", "assistant": "cyan"}


class EventPrinter:
    """Streams turns as they are generated; prints metrics and judgements as tables."""

    def __init__(self, console: Console | None = None, *, show_headers: bool = True) -> None:
        self.console = console or Console(highlight=False)
        self.show_headers = show_headers
        self._streaming = False
        self._metric_rows: list[dict[str, Any]] = []
        self._phase = ""

    def __call__(self, event: Event) -> None:
        c = self.console
        match event:
            case DebateStarted():
                if self.show_headers:
                    c.print(Text(f"{event.protocol} · {terminal_safe(event.title)} · debate {event.debate_id}", style="bold"))
            case PhaseChanged():
                self._phase = event.phase
                kappa = f" · κ={event.kappa:.2f}" if event.kappa is not None else ""
                c.print(Text(f"\n── {event.phase} · round {event.round}{kappa} ──", style="bold yellow"))
            case TurnStarted():
                if self.show_headers:
                    style = ROLE_STYLES.get(event.role, "bold")
                    c.print(Text(f"\n{event.role} ({event.model_id}) · {event.kind}", style=f"bold {style}"))
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
                verdict = f" {event.verdict}" if event.verdict else ""
                about = f" on {terminal_safe(event.subject)}" if event.subject else ""
                c.print(Text(f"  ⚖ {event.judge_role} ({event.judge_model}) {event.kind}{about}: {event.target or ''}{score}{verdict}", style="blue"))
            case ModeratorActed():
                c.print(Text(f"  ✋ moderator {event.kind}: {terminal_safe(str(event.payload))}", style="yellow"))
            case AwaitingModerator():
                c.print(Text(f"  … {terminal_safe(event.prompt)}", style="yellow"))
            case DebateFinished():
                if self._streaming:
                    c.print()
                    self._streaming = False
                if self._metric_rows:
                    c.print(metrics_table(self._metric_rows))
                if self.show_headers:
                    c.print(Text(f"\n{event.status}: {terminal_safe(event.stop_reason)}", style="bold"))


def metrics_table(rows: list[dict[str, Any]]) -> Table:
    """The per-round metrics table, laid out like the paper's Tables 7.2 and 7.3."""
    table = Table(title="Metrics per round", show_lines=False)
    for name in ("round", "phase", "κ", "WD", "MI", "CRIT", "JSD"):
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            str(r["round"]), str(r.get("phase", "")), _fmt(r.get("kappa")), _fmt(r.get("wd")), _fmt(r.get("mi")),
            _fmt(r.get("crit")), _fmt(r.get("jsd")),
        )
    return table


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"
