"""Review: a finished (or interrupted) debate replayed round by round, and compared with another."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from protocols.registry import BY_NAME
from store.queries import Queries
from tui.app.messages import ResumeDebate
from tui.app.recorded import recorded_events, rounds_of
from tui.app.screens.debate import verdict_event, verdict_note
from tui.app.screens.dialogs import VerdictDialog
from tui.app.screens.save import save_debate
from tui.app.widgets.debate_view import DebateView
from tui.app.widgets.footer import SteadyFooter
from tui.app.workspace import Workspace, settle_memory
from tui.sanitize import plain, terminal_safe
from tui.titles import distinct_clips, when

#: ← and → share one footer entry ("←→ Round"); Help lists each.
ROUNDS = Binding.Group("Round", compact=True)


class ReviewScreen(Screen):
    """A journalled debate in its :class:`DebateView`, the whole of it or as it stood after a
    round. The footer's keys fit 80 columns (tests/app/test_tui_footer.py); the round keys are
    priority bindings, since the focused transcript's own ←, → and End scroll."""

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

    #: Index into :attr:`rounds` of the round shown last; ``None``: the whole debate.
    position: reactive[int | None] = reactive(None, init=False)
    #: Whether the debate as shown has its outcome (the whole debate, once finished).
    has_outcome: reactive[bool] = reactive(False, bindings=True)

    def __init__(self, debate: dict[str, Any], workspace: Workspace) -> None:
        super().__init__()
        self.debate = debate
        self.workspace = workspace
        self.rounds = rounds_of(debate)
        #: Another debate's metrics drawn dotted beside this one's, with its label and legend.
        self.compare_rows: list[dict[str, Any]] | None = None
        self.compare_label = ""
        self.compare_legend: tuple[str, str] | None = None
        #: The debate as shown now (a new one each time another round is chosen).
        self.view = self._new_view()

    def _new_view(self) -> DebateView:
        view = DebateView(BY_NAME.get(self.debate["protocol"]), title=self.debate["title"],
                          analysis="no analysis was made in this debate", id="view")
        view.set_reactive(DebateView.state, "replay")
        return view

    def compose(self) -> ComposeResult:
        yield self.view
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._show()
        self.call_after_refresh(settle_memory)

    async def watch_position(self) -> None:
        await self._show_again()

    async def _show_again(self) -> None:
        """A fresh view for what is shown now: every panel starts empty, as in a live debate."""
        async with self.batch():
            await self.view.remove()
            self.view = self._new_view()
            await self.mount(self.view, before=self.query_one(SteadyFooter))
        self._show()

    def _show(self) -> None:
        """Show the debate as it stood after the selected round (or all of it)."""
        view = self.view
        upto = None if self.position is None else self.rounds[self.position]
        for event in recorded_events(self.debate, upto_round=upto):
            view.show(event)
        if self.compare_rows is not None:
            view.show_metrics(self.compare_rows, ("", self.compare_label), self.compare_legend)
        first, last = (self.rounds[0], self.rounds[-1]) if self.rounds else (None, None)
        span = "no rounds" if first is None else f"round {first}" if first == last else f"rounds {first}–{last}"
        view.phase = f"whole debate ({span})" if upto is None else f"up to round {upto} ({span})"
        view.flush()
        self.has_outcome = view.finished is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A verdict is on an outcome: offered while the whole of a concluded debate is shown."""
        return self.has_outcome if action == "verdict" else True

    def action_step(self, delta: int) -> None:
        if not self.rounds:
            return
        if delta == 0:
            self.position = None
        elif self.position is None:
            self.position = len(self.rounds) - 1 if delta < 0 else 0
        else:
            self.position = min(max(self.position + delta, 0), len(self.rounds) - 1)

    def action_resume(self) -> None:
        self.post_message(ResumeDebate(self.debate["id"]))

    def action_verdict(self) -> None:
        def record(result: tuple[bool, str] | None) -> None:
            if result is not None:
                accept, note = result
                self.workspace.journal.record(verdict_event(self.debate["id"], accept, note, self.view.round))
                self.view.note(verdict_note(accept, note))
                self.app.notify("verdict recorded")

        self.app.push_screen(VerdictDialog(), record)

    def action_copy(self) -> None:
        text = self.view.last_text()
        if text:
            self.app.copy_to_clipboard(text)
            self.app.notify("copied the last turn")

    def action_report(self) -> None:
        """The whole debate as an HTML report, redacted or not (whatever round is shown: a report
        is the record); asked first."""
        save_debate(self, self.workspace, self.debate, "html")

    def action_compare(self) -> None:
        queries = Queries(self.workspace.journal)
        others = [d for d in queries.debates(limit=200)
                  if d["id"] != self.debate["id"] and d["protocol"] == self.debate["protocol"]]
        if not others:
            self.app.notify("no other debate of this protocol to compare with", severity="warning")
            return

        async def chosen(debate_id: str | None) -> None:
            if debate_id:
                other = queries.debate(debate_id)
                assert other is not None
                self.compare_rows, self.compare_label = other["metrics"], debate_id[:6]
                self.compare_legend = (_named(self.debate), _named(other))
                await self._show_again()

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
