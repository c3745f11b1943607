"""Review: a finished (or interrupted) debate replayed round by round, and compared with another."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from store.queries import Queries

from tui.app.report import save_report
from tui.app.screens.typed import symposium
from tui.app.recorded import recorded_events, rounds_of
from tui.titles import distinct_clips, when
from tui.sanitize import plain, terminal_safe
from tui.app.widgets.transcript import Transcript
from tui.app.screens.debate import DebateScreen


#: ← and → share one footer entry ("←→ Round"); Help lists each.
ROUNDS = Binding.Group("Round", compact=True)


class ReviewScreen(DebateScreen, inherit_bindings=False):
    """The footer's keys fit 80 columns (tests/app/test_tui_footer.py); the round keys are
    priority bindings: the focused transcript's own ←, → and End (scrolling) took them, so the
    footer and Help never showed them and End scrolled instead of showing the whole debate."""

    BINDINGS = [
        Binding("left", "step(-1)", "Previous round", id="review.previous", priority=True, group=ROUNDS),
        Binding("right", "step(1)", "Next round", id="review.next", priority=True, group=ROUNDS),
        Binding("end", "step(0)", "All rounds", id="review.all", priority=True),
        Binding("m", "compare", "Compare", id="review.compare"),
        Binding("r", "resume", "Resume", id="review.resume"),
        Binding("v", "verdict", "Verdict", id="review.verdict"),
        Binding("c", "copy", "Copy turn", id="review.copy", show=False),
        Binding("h", "report", "Report", id="review.report"),
        Binding("escape", "app.pop_screen", "Back", id="review.back"),
    ]

    def __init__(self, debate: dict[str, Any]) -> None:
        super().__init__(events=[], title=debate["title"], protocol=debate["protocol"])
        self.debate = debate
        self.rounds = rounds_of(debate)
        self.position: int | None = None  # index into rounds; None = the whole debate
        self.compare_rows: list[dict[str, Any]] | None = None
        self.compare_label = ""
        self.compare_legend: tuple[str, str] | None = None

    def on_mount(self) -> None:
        self.query_one("#loading").display = False
        self.render_upto()

    def render_upto(self) -> None:
        """Show the debate as it stood after the selected round (or all of it)."""
        upto = None if self.position is None else self.rounds[self.position]
        transcript = self.query_one(Transcript)
        transcript.remove_children()
        transcript.turns.clear()
        transcript.current = None
        self.reset_panels()
        self.query_one("#analysis", Static).update(Text("no analysis was made in this debate", style="dim"))
        for event in recorded_events(self.debate, upto_round=upto):
            self.show(event)
        if self.compare_rows is not None:
            self._show_metrics(self.compare_rows, ("", self.compare_label), self.compare_legend)
        span = f"rounds {self.rounds[0]}–{self.rounds[-1]}" if self.rounds else "no rounds"
        self.phase = f"whole debate ({span})" if upto is None else f"up to round {upto} ({span})"
        self._status()
        transcript.flush_all()

    def action_step(self, delta: int) -> None:
        if not self.rounds:
            return
        if delta == 0:
            self.position = None
        elif self.position is None:
            self.position = len(self.rounds) - 1 if delta < 0 else 0
        else:
            self.position = min(max(self.position + delta, 0), len(self.rounds) - 1)
        self.render_upto()

    def action_resume(self) -> None:
        symposium(self).resume(self.debate["id"])

    def action_report(self) -> None:
        """The whole debate as an HTML report (whatever round is shown: a report is the record)."""
        path = save_report(Path(symposium(self).export_dir), self.debate)
        self.app.notify(f"report written to {path} (readable by you only; open it in a browser, print it as PDF)")

    def action_compare(self) -> None:
        others = [d for d in Queries(symposium(self).journal).debates(limit=200)
                  if d["id"] != self.debate["id"] and d["protocol"] == self.debate["protocol"]]
        if not others:
            self.app.notify("no other debate of this protocol to compare with", severity="warning")
            return

        def chosen(debate_id: str | None) -> None:
            if debate_id:
                other = Queries(symposium(self).journal).debate(debate_id)
                assert other is not None
                self.compare_rows, self.compare_label = other["metrics"], debate_id[:6]
                self.compare_legend = (_named(self.debate), _named(other))
                self.render_upto()

        self.app.push_screen(ChooseDebate(others), chosen)


#: The picker's widest (see symposium.tcss), and what a line takes besides the title: the date
#: (16), the status (up to 13), the gaps, and the frame, the list's padding and scroll bar (~12).
PICKER_WIDTH, PICKER_OVERHEAD = 110, 40


def _named(debate: dict[str, Any]) -> str:
    """A debate as the Compare legend names it: its id's first characters, start and title."""
    return f"{debate['id'][:6]} · {_when(debate.get('created_at'))} · {debate['title']}"


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "—"


class ChooseDebate(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="choose.cancel")]

    def __init__(self, debates: list[dict[str, Any]]) -> None:
        super().__init__()
        self.debates = debates

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Compare the metric curves with (newest first; escape to cancel):")
            # when each started, and titles clipped where they differ: debates on similar cases
            # share their first words, and a list of identical lines cannot be chosen from
            width = min(self.app.size.width, PICKER_WIDTH) - PICKER_OVERHEAD
            titles = distinct_clips([terminal_safe(d["title"]) for d in self.debates], max(width, 20))
            yield OptionList(*(Option(plain(f"{when(d['created_at'])}  {title}  ({d['status']})"), id=d["id"])
                               for d, title in zip(self.debates, titles, strict=True)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
