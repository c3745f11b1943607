"""A debate as the screens show it: a status line, the cost so far under it, the transcript, and
the side panels its protocol declares, fed one event at a time (:meth:`DebateView.show`).

The live Debate screen feeds it the events of a running protocol; the Review screen the events
read back from the journal (:mod:`tui.app.recorded`), so a debate looks the same either way.
What the status line says is held in reactives, bound to the line (``data_bind``): an event
changes a value, and the line repaints once for all the values one event changed.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import LoadingIndicator, Static

from protocols.core.costs import Ledger
from protocols.core.definition import UNREGISTERED_PANELS, Panel, ProtocolDefinition
from protocols.core.events import (
    CallRecord,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    ModeratorActed,
    Notice,
    Participant,
    PhaseChanged,
    TokenDelta,
    TurnFinished,
    TurnStarted,
    about_context,
)
from protocols.core.outcome import moderator_action, outcome_in_words
from protocols.core.text import clip
from protocols.measures.analyzer import Analysis
from tui.app.widgets.cost_line import CostLine, Spent
from tui.app.widgets.distribution import Distributions
from tui.app.widgets.findings import brief_lines
from tui.app.widgets.metrics import MetricsPanel
from tui.app.widgets.panels import AgendaPanel, JudgementList, JudgeTables
from tui.app.widgets.transcript import Transcript
from tui.sanitize import plain, terminal_safe

#: Seconds between two readings of the live rate.
RATE_INTERVAL = 1.0

#: Who set an agenda, by the step of the agenda turn that set it.
_AGENDA_STEPS = {"proposal": "proposed by {role}", "merge": "merged by {role}", "review": "agreed"}


class StatusLine(Widget):
    """One line: the protocol, the debate's title, its phase, round and κ, the screen's state
    (running, paused, done, replay) and the debate's id."""

    protocol: reactive[str] = reactive("")
    title: reactive[str] = reactive("")
    phase: reactive[str] = reactive("")
    round: reactive[int | None] = reactive(None)
    kappa: reactive[float | None] = reactive(None)
    profile: reactive[str] = reactive("")
    state: reactive[str] = reactive("")
    debate_id: reactive[str | None] = reactive(None)

    @property
    def line(self) -> str:
        """The whole line, however wide (what the tests and the screen reader read)."""
        return self.fitted(None)

    def fitted(self, width: int | None) -> str:
        """The line in ``width`` columns, what a person needs first kept longest: which debate
        (its title, else its id) and where it is (phase, round, the screen's state). What goes
        first when it does not fit: the defaults profile and a round the phase already names,
        then κ, the protocol and the id (while the title has less than :data:`TITLE_FAIR`
        characters), then the title is clipped down to :data:`TITLE_LEAST`."""
        title = " ".join(terminal_safe(self.title).split())
        named = self.round is not None and re.search(rf"\brounds? (\d+–)?{self.round}\b", self.phase) is not None
        shown = {"protocol": self.protocol or "debate", "profile": f"{self.profile} defaults" if self.profile else "",
                 "round": f"round {self.round}" if self.round is not None else "",
                 "kappa": f"κ {self.kappa:.2f}" if self.kappa is not None else "", "id": self.debate_id or ""}

        def joined(title: str) -> str:
            bits = [shown["protocol"], title, self.phase, shown["profile"], shown["round"], shown["kappa"], self.state,
                    shown["id"]]
            return " · ".join(b for b in bits if b)

        line = joined(title)
        if width is None or len(line) <= width:
            return line
        if not title:  # the id names the debate: only what says where it is may give way
            shown["id"], title = "", self.debate_id or ""
        columns = width

        def room() -> int:
            return columns - len(joined("")) - len(" · ")

        for bit in ("profile", "round", "kappa", "protocol", "id"):
            if room() >= min(TITLE_FAIR, len(title)):
                return joined(clip(title, room()))
            if bit != "round" or named:
                shown[bit] = ""
        if room() >= min(TITLE_LEAST, len(title)):
            return joined(clip(title, room()))
        return clip(joined(clip(title, TITLE_LEAST)), width)

    def render(self) -> Any:
        return plain(self.fitted(self.size.width or None))


#: The title's share of the status line: the protocol, κ and the id give way before it is clipped
#: shorter than this …
TITLE_FAIR = 24
#: … and it is never clipped shorter than this (the line is cut at its end instead).
TITLE_LEAST = 12


class DebateView(Vertical):
    """The transcript and the protocol's panels (``Panel``), with the status line above them.

    The side column shows the panels the protocol's definition declares: EVINCE's
    distributions and metrics, SocraSynth's agenda, Γ per round and judges' tables; the outcome
    is said in words (``protocols.core.outcome``), as ``show`` and the export say it, followed by
    the brief findings the protocol presents (``present``).
    """

    #: The debate's id, once its start (or the screen) names it.
    debate_id: reactive[str | None] = reactive(None)
    #: The protocol as the status line names it.
    protocol: reactive[str] = reactive("")
    title: reactive[str] = reactive("")
    #: Where the debate is: loading, a phase of the protocol, paused, its ending.
    phase: reactive[str] = reactive("starting")
    round: reactive[int | None] = reactive(None)
    kappa: reactive[float | None] = reactive(None)
    #: The defaults profile in force, from the journalled config.
    profile: reactive[str] = reactive("")
    #: What the screen is doing with the debate (running, paused, done, replay).
    state: reactive[str] = reactive("")
    #: The models are loading: a loading indicator under the status line.
    preparing: reactive[bool] = reactive(False)
    #: What the debate's model calls cost so far (the line under the status line).
    spent: reactive[Spent | None] = reactive(None)
    #: Tokens a second the replies being written now come at (``None`` while none is).
    live_rate: reactive[float | None] = reactive(None)

    def __init__(self, definition: ProtocolDefinition | None, *, title: str = "", analysis: str = "",
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.definition = definition
        self.analysis_note = analysis
        self.set_reactive(DebateView.title, title)
        self.set_reactive(DebateView.protocol, definition.title if definition is not None else "")
        #: By role, from ``DebateStarted``.
        self.participants: dict[str, Participant] = {}
        #: One dict per round's metrics, with the round's phase and κ.
        self.metrics_rows: list[dict[str, Any]] = []
        #: (round, phase) as each phase began: a metrics row's phase is its round's.
        self.phases: list[tuple[int, str]] = []
        self.finished: DebateFinished | None = None
        #: Context-window notes of judgements already shown, by (round, judge, note).
        self._context_said: set[tuple[int | None, str, str]] = set()
        #: Every model call's cost so far, per agent and per round (``protocols.core.costs``).
        self.ledger = Ledger()
        #: The roles whose replies are being written, the text pieces they wrote since the
        #: last tick of the live rate, and when that tick was.
        self._writing: set[str] = set()
        self._pieces = 0
        self._since = 0.0

    @property
    def panels(self) -> tuple[Panel, ...]:
        """The side panels the protocol declares; a run of no registered protocol (a benchmark's
        single prediction) shows its distributions and judgements."""
        return self.definition.panels if self.definition is not None else UNREGISTERED_PANELS

    @property
    def protocol_name(self) -> str:
        return self.definition.name if self.definition is not None else self.protocol

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def status_line(self) -> str:
        return self.query_one(StatusLine).line

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status").data_bind(DebateView.protocol, DebateView.title, DebateView.phase, DebateView.round,
                                                DebateView.kappa, DebateView.profile, DebateView.state,
                                                DebateView.debate_id)
        yield CostLine(id="cost").data_bind(DebateView.spent, DebateView.live_rate)
        yield LoadingIndicator(id="loading")
        with Horizontal(id="body"):
            yield Transcript(id="transcript")
            with VerticalScroll(id="side"):
                for panel in self.panels:
                    yield Static(panel.title, classes="heading", id=f"heading-{panel.kind}")
                    match panel.kind:
                        case "distributions":
                            yield Distributions(id="distributions")
                        case "metrics":
                            yield MetricsPanel(panel.columns, panel.curves or (), id="metrics")
                        case "judgements":
                            yield JudgementList(id="judgements")
                        case "agenda":
                            yield AgendaPanel(id="agenda")
                        case "judge_tables":
                            yield JudgeTables(id="judge-tables")
                yield Static(id="outcome")
                yield Static("Analysis", classes="heading", id="analysis-heading")
                yield Static(Content.styled(self.analysis_note, "dim"), id="analysis")

    def on_mount(self) -> None:
        self._ticker = self.set_interval(RATE_INTERVAL, self._tick, pause=True)

    def watch_preparing(self, preparing: bool) -> None:
        for loading in self.query("#loading"):
            loading.display = preparing

    # -- what the calls cost ----------------------------------------------------------------------

    def _spend(self, call: CallRecord | None, round_: int | None) -> None:
        """One call's cost into the ledger, and the line's figures from it."""
        if call is not None:
            self.ledger.add(asdict(call), round_)
            self.spent = Spent.of(self.ledger)

    def _writes(self, role: str, writing: bool) -> None:
        """A reply began or ended: the live rate ticks while any reply is being written."""
        if writing:
            if not self._writing:
                self._pieces, self._since = 0, time.monotonic()
                self._ticker.resume()
            self._writing.add(role)
        else:
            self._writing.discard(role)
            if not self._writing:
                self._ticker.pause()
                self.live_rate = None

    def _tick(self) -> None:
        """The pieces of text streamed since the last tick, per second: a reply's tokens as they
        come (a backend hands over about one token a piece; the exact counts come with each
        finished call, into the ledger). None while nothing came (a prompt being read, the model
        busy with another agent): the line then shows the debate's mean, not a stall."""
        now = time.monotonic()
        if self._writing and now > self._since:
            self.live_rate = self._pieces / (now - self._since) if self._pieces else None
        self._pieces, self._since = 0, now

    def loaded(self) -> None:
        """The models are loaded: the status line's "loading …" gives way to where the debate
        is (a resumed debate's last phase; its run journals no new phase until the next one)."""
        self.phase = self.phases[-1][1] if self.phases else "starting"

    # -- rendering events -----------------------------------------------------------------------

    def show(self, event: Event) -> None:
        transcript = self.transcript
        match event:
            case TokenDelta():  # the hot path: buffered, painted by the transcript's timer
                transcript.delta(event)
                self._pieces += 1
            case DebateStarted():
                self.debate_id = event.debate_id
                self.protocol = event.protocol
                self.participants = {p.role: p for p in event.participants}
                self.title = event.title
                self.profile = str(event.config.get("profile") or "")
            case DebateResumed():
                self.debate_id = event.debate_id
                transcript.note(f"— resumed at round {event.from_round} —", "app")
            case PhaseChanged():
                self.phase, self.round, self.kappa = event.phase, event.round, event.kappa
                self.phases.append((event.round, event.phase))
            case TurnStarted():
                self.round = event.round
                transcript.start(event)
                self._writes(event.role, True)
            case TurnFinished():
                self._turn(event)
                self._writes(event.role, False)
                self._spend(event.call, event.round)
            case ModelCalled():
                self._spend(event.call, event.round)
            case MetricsComputed():
                self.metrics_rows.append({"round": event.round, "phase": self._phase_of(event.round), "kappa": event.kappa,
                                          **event.metrics})
                self.show_metrics()
            case JudgementMade() if event.kind == "analysis":
                self.show_analysis(Content(terminal_safe(Analysis.from_json(event.reasons).render())))
                self._spend(event.call, event.round)
            case JudgementMade():
                self._judgement(event)
                self._spend(event.call, event.round)
            case ModeratorActed():
                transcript.note(f"✋ {terminal_safe(moderator_action(event.kind, event.payload, event.round))}", "moderator")
                if event.kind == "edit_agenda":
                    self._agenda(event.payload.get("after"), "edited by the moderator")
                if event.kind == "resume" and self.phases:  # the status line says the phase again, not "paused"
                    self.phase = self.phases[-1][1]
            case Notice():
                transcript.note(f"⚠ notice: {event.text}")
            case DebateFinished():
                self._finished(event)

    def _turn(self, event: TurnFinished) -> None:
        self.transcript.finish(event)
        self.round = event.round  # a replay has no TurnStarted: the status follows the turns
        if event.distribution:
            for bars in self.query(Distributions):
                bars.set(event.role, event.distribution)
        if event.kappa is not None:
            self.kappa = event.kappa
        if event.kind == "agenda" and isinstance(event.parsed, dict):
            step = _AGENDA_STEPS.get(str(event.parsed.get("step")), "").format(role=event.role)
            self._agenda(event.parsed.get("agreed") or event.parsed.get("subtopics"), step)

    def _phase_of(self, round_: int) -> str | None:
        """The phase ``round_`` was held in: the latest phase begun at or before it (the journal's
        reading, ``store.queries.Queries.metrics``), never the screen's momentary state."""
        return next((phase for number, phase in reversed(self.phases) if number <= round_), None)

    def show_metrics(self, compare: list[dict[str, Any]] | None = None, labels: tuple[str, str] = ("", "other"),
                     legend: tuple[str, str] | None = None) -> None:
        """The rounds' metrics (and another debate's, dotted, with ``compare``)."""
        for panel in self.query(MetricsPanel):
            panel.show(self.metrics_rows, compare, labels, legend)

    def show_analysis(self, content: Content) -> None:
        """What the side panel's analyzer says (or that it is at work, or failed)."""
        self.query_one("#analysis", Static).update(content)

    def _agenda(self, items: Any, step: str) -> None:
        if isinstance(items, list) and items:
            for panel in self.query(AgendaPanel):
                panel.set([i for i in items if isinstance(i, dict)], step)

    def _judgement(self, event: JudgementMade) -> None:
        tables = self.query(JudgeTables)
        if not (tables and tables.first().add(event)):
            for shown in self.query(JudgementList):
                shown.add(event)
        notes = event.reasons.get("notes") if isinstance(event.reasons, dict) else None
        for note in notes if isinstance(notes, list) else []:
            said = (event.round, event.judge_role, note)
            if isinstance(note, str) and about_context(note) and said not in self._context_said:  # one call, two judgements: once
                self._context_said.add(said)
                self.transcript.note(f"✂ {event.judge_role}'s {event.kind}: {note}")

    def _finished(self, event: DebateFinished) -> None:
        self.finished = event
        self.phase = event.status
        outcome = event.outcome
        ended = {"protocol": self.protocol_name, "status": event.status, "stop_reason": event.stop_reason}
        said = outcome_in_words({**ended, "outcome": outcome})
        parts = [Content.styled(terminal_safe(said.ending), "bold")]
        if said.conclusion:
            parts.append(Content.styled(terminal_safe(said.conclusion), "$role-consensus"))
        final = outcome.get("final_distribution")
        if isinstance(final, dict) and final:
            for bars in self.query(Distributions):
                bars.set("consensus", final)
        for tables in self.query(JudgeTables):
            tables.finish(outcome)
        if self.definition is not None and self.definition.present is not None:
            parts += brief_lines(self.definition.present(outcome, ended))
        parts.append(Content.styled("v: accept or reject the outcome · escape: back", "dim"))
        self.query_one("#outcome", Static).update(Content("\n").join(p for p in parts if p.plain.strip()))

    def fail(self, message: str) -> None:
        """The debate could not go on: why, in words, where the outcome would be."""
        self.phase = "failed"
        for outcome in self.query("#outcome").results(Static):  # none once the screen is gone (the app quitting)
            outcome.update(Content.styled(f"⚠ {terminal_safe(message)}", "bold $problem"))

    def note(self, text: str, kind: str = "moderator") -> None:
        """A line between the turns (a verdict given, a command the debate ended before hearing)."""
        self.transcript.note(text, kind)

    def last_text(self) -> str | None:
        return self.transcript.last_text()

    def flush(self) -> None:
        """After a recorded debate was shown all at once: to its end."""
        self.transcript.flush_all()
