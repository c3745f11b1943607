"""The Debate screen: a debate streaming live, with its metrics, and the moderator's controls.

The protocol runs in an async worker on the app's event loop; the models compute in worker
threads (see ``backends``), so the interface keeps answering keys while they think. Every
event goes to the journal first (``tui.headless.runner.drive``), then to :meth:`DebateScreen.show`.
The same screen can also play back recorded events (``events=``), which is how a debate read
from the journal is shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import LoadingIndicator, Static
from textual.worker import Worker, WorkerCancelled

from backends.base import BackendError
from backends.lifecycle import Engines, LoadEvent, Loading, PrivacyWarning, StillLoading
from backends.registry import RegistryError
from protocols.replay import ResumeError
from protocols.events import (
    AwaitingModerator,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
    Interject,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    Notice,
    Pause,
    PhaseChanged,
    Resume,
    SetContentiousness,
    SkipToConclusion,
    Stop,
    TokenDelta,
    TurnFinished,
    TurnStarted,
    Verdict,
)
from protocols.agents import agents_for
from protocols.analyzer import Analysis, Analyzer, TranscriptCollector
from protocols.moderation import CommandChannel
from protocols.roles import ANALYZER, SIDE_PANEL
from store.journal import JournalError, new_debate_id

from tui.forms import FormError, ProtocolSpec
from tui.protocol_catalog import resumable
from tui.app.replay import replay
from tui.app.theme import role_style
from tui.headless.runner import drive
from tui.sanitize import plain, terminal_safe
from tui.app.widgets.footer import SteadyFooter
from tui.app.widgets.distribution import Distributions
from tui.app.widgets.metrics import MetricsPanel
from tui.app.widgets.transcript import Transcript
from tui.app.screens.dialogs import ConfirmDialog, InterjectDialog, NumberDialog, PersonDialog, VerdictDialog


class DebateScreen(Screen):
    """A live (or replayed) debate."""

    BINDINGS = [
        Binding("p", "pause", "Pause/resume", id="debate.pause"),
        Binding("i", "interject", "Interject", id="debate.interject"),
        Binding("k", "contentiousness", "Contentiousness", id="debate.contentiousness"),
        Binding("s", "skip", "Skip to conclusion", id="debate.skip"),
        Binding("x", "stop", "Stop", id="debate.stop"),
        Binding("v", "verdict", "Accept/reject", id="debate.verdict"),
        Binding("c", "copy", "Copy turn", id="debate.copy"),
        Binding("escape", "leave", "Back", id="debate.back"),
    ]

    def __init__(self, spec: ProtocolSpec | None = None, values: Mapping[str, Any] | None = None, *,
                 events: Iterable[Event] | None = None, resume: dict[str, Any] | None = None, title: str = "") -> None:
        super().__init__()
        self.spec = spec
        self.resume_debate = resume
        self.values = dict(values or {})
        self.replay_events = list(events) if events is not None else None
        self.channel = CommandChannel()
        self.debate_id: str | None = None
        self.running = False
        self.paused = False
        self.finished: DebateFinished | None = None
        self.title_text = title or (spec.title if spec else "Debate")
        self.protocol = spec.title if spec else ""
        self.profile = ""  # the defaults profile in force, from the journalled config
        self.phase = "starting"
        self.round: int | None = None
        self.kappa: float | None = None
        self.metrics_rows: list[dict[str, Any]] = []
        self.judgement_lines: list[Content] = []
        self.analyzer: Analyzer | None = None
        self.collector = TranscriptCollector()
        self._status_line = ""
        self._analysis: Worker[None] | None = None

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield LoadingIndicator(id="loading")
        with Horizontal(id="body"):
            yield Transcript(id="transcript")
            with VerticalScroll(id="side"):
                yield Static("Distributions", classes="heading")
                yield Distributions(id="distributions")
                yield Static("Metrics", classes="heading")
                yield MetricsPanel(id="metrics")
                yield Static("Judgements", classes="heading")
                yield Static(Text("none yet", style="dim"), id="judgements")
                yield Static(id="outcome")
                yield Static("Analysis", classes="heading", id="analysis-heading")
                yield Static(Text("choose an analyzer model on the New-debate form", style="dim"), id="analysis")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._status()
        if self.replay_events is not None:
            self.query_one("#loading").display = False
            self.query_one("#analysis", Static).update(Text("no analysis was made in this debate", style="dim"))
            for event in self.replay_events:
                self.show(event)
            self.query_one(Transcript).flush_all()
            self.call_after_refresh(self.app.settle_memory)  # type: ignore[attr-defined]
        else:
            self.running = True
            self.run_worker(self._run(), name="debate", group="debate", exclusive=True)

    # -- running --------------------------------------------------------------------------------

    async def _run(self) -> None:
        """Load the models, start (or resume) the protocol, journal and show every event."""
        app = self.app
        try:
            if self.resume_debate is not None:
                spec, roles = resumable(self.resume_debate)
                for event in replay(self.resume_debate):  # what was said before the interruption
                    self.show(event)
            else:
                assert self.spec is not None
                spec, roles = self.spec, self.spec.roles_for(self.values)
            analyzer_model = str(self.values.get(SIDE_PANEL) or "none")
            if analyzer_model != "none":
                roles = {**roles, SIDE_PANEL: analyzer_model}  # apart from a protocol's own analyzer
            async with Engines(app.registry, on_event=self._loading) as engines:  # type: ignore[attr-defined]
                agents = agents_for(roles, await engines.load(roles.values()))
                if SIDE_PANEL in agents:
                    self.analyzer = Analyzer(dataclasses.replace(agents.pop(SIDE_PANEL), role=ANALYZER))
                    self.query_one("#analysis", Static).update(Text("after the first round …", style="dim"))
                if self.resume_debate is not None:
                    events = spec.resume(self.resume_debate, agents, self.channel, self.ask_person)
                else:
                    self.debate_id = new_debate_id()
                    events = spec.build(self.values, agents, self.debate_id, self.channel, self.ask_person,
                                        registry=app.registry)  # type: ignore[attr-defined]
                self.query_one("#loading").display = False
                await drive(events, app.journal, self.show, self.collector)  # type: ignore[attr-defined]
                await self._last_analysis()  # it speaks through a model the block is about to close
        except (BackendError, RegistryError, FormError, JournalError, ResumeError) as exc:
            self._fail(str(exc))
        finally:
            self.running = False
            if self.is_attached:  # the screen may be gone (the app quitting mid-debate)
                self.query_one("#loading").display = False
                self._status()

    async def ask_person(self, prompt: str) -> str | None:
        """The person's seat (deliberation, human judge): a dialog; ``None`` leaves."""
        return await self.app.push_screen_wait(PersonDialog(prompt))

    def _loading(self, event: LoadEvent) -> None:
        """A model loads (the status line says which, its stage and the seconds so far) or warns
        that debate text leaves the machine."""
        if isinstance(event, Loading | StillLoading):
            self.phase = event.message
            self._status()
        elif isinstance(event, PrivacyWarning):
            self.app.notify(event.message, title="Privacy", severity="warning", timeout=20)

    def _fail(self, message: str) -> None:
        """Errors users can fix are shown in words, never as a traceback."""
        self.phase = "failed"
        self.query_one("#outcome", Static).update(Content.styled(f"⚠ {terminal_safe(message)}", "bold $problem"))
        self.app.notify(message[:300], title="The debate could not go on", severity="error", timeout=15)  # whole in #outcome

    # -- rendering events -----------------------------------------------------------------------

    def show(self, event: Event) -> None:
        transcript = self.query_one(Transcript)
        match event:
            case DebateStarted():
                self.debate_id = event.debate_id
                self.protocol = event.protocol
                self.title_text = event.title
                self.profile = str(event.config.get("profile") or "")
            case DebateResumed():
                self.debate_id = event.debate_id
                transcript.note(f"— resumed at round {event.from_round} —", "app")
            case PhaseChanged():
                self.phase, self.round, self.kappa = event.phase, event.round, event.kappa
            case TurnStarted():
                self.round = event.round
                transcript.start(event)
            case TokenDelta():  # the hot path: buffered, painted by the transcript's timer
                transcript.delta(event)
                return  # nothing in the status line changes per token
            case TurnFinished():
                transcript.finish(event)
                if self.running:  # a quiet point: what the turn built is long-lived
                    self.call_after_refresh(self.app.settle_memory)  # type: ignore[attr-defined]
                if event.distribution:
                    self.query_one(Distributions).set(event.role, event.distribution)
                if event.kappa is not None:
                    self.kappa = event.kappa
            case MetricsComputed():
                self.metrics_rows.append({"round": event.round, "phase": self.phase, "kappa": event.kappa, **event.metrics})
                self.query_one(MetricsPanel).show(self.metrics_rows)
                self._refresh_analysis(event.round)
            case JudgementMade() if event.kind == "analysis":
                self._show_analysis(event)
            case JudgementMade():
                self._judgement(event)
            case ModeratorActed():
                transcript.note(f"✋ moderator: {event.kind} {_payload(event.payload)}", "moderator")
                if event.kind in ("pause", "resume"):
                    self.paused = event.kind == "pause"
            case Notice():
                transcript.note(f"⚠ notice: {event.text}")
            case AwaitingModerator():
                self.phase = "paused"
            case DebateFinished():
                self._finished(event)
                self._refresh_analysis(None)
        self._status()

    # -- the analyzer side panel (seed 002), for every protocol ---------------------------------

    def _refresh_analysis(self, round_: int | None) -> None:
        """Analyze the transcript so far in the background (a newer request replaces an older)."""
        if self.analyzer is not None and self.collector.turns and self.debate_id:
            self._analysis = self.run_worker(self._analyze(round_), group="analysis", exclusive=True)

    async def _last_analysis(self) -> None:
        """Wait for the analysis the debate's end started, before the engines close its model
        (the debate's own models close when :meth:`_run` leaves its ``Engines`` block)."""
        worker = self._analysis
        if worker is not None and not worker.is_finished:
            try:
                await worker.wait()
            except WorkerCancelled:  # the app is quitting: the analysis stopped, nothing to wait for
                return

    async def _analyze(self, round_: int | None) -> None:
        assert self.analyzer is not None and self.debate_id is not None
        self.query_one("#analysis", Static).update(Text("analyzing …", style="dim"))
        try:
            async for event in self.analyzer.events(self.debate_id, list(self.collector.turns), topic=self.title_text, round_=round_):
                self.app.journal.record(event)  # type: ignore[attr-defined]
                if isinstance(event, JudgementMade):
                    self._show_analysis(event)
        except BackendError as exc:
            self.query_one("#analysis", Static).update(Content.styled(f"analysis failed: {terminal_safe(str(exc))}", "$problem"))

    def _show_analysis(self, event: JudgementMade) -> None:
        rendered = Analysis.from_json(event.reasons).render()
        self.query_one("#analysis", Static).update(Text(terminal_safe(rendered)))

    def _judgement(self, event: JudgementMade) -> None:
        score = "missing" if event.score is None and event.verdict is None else (f"{event.score:g}" if event.score is not None else "")
        verdict = f" {event.verdict}" if event.verdict else ""
        about = f" on {event.subject}" if event.subject else ""
        target = event.target or ""
        line = Content.assemble(
            f"r{event.round if event.round is not None else '-'} ",
            (terminal_safe(event.judge_role), role_style(event.judge_role)),
            terminal_safe(f" {event.kind}{about}: "),
            (terminal_safe(target), role_style(target) if target else ""),
            terminal_safe(f" {score}{verdict}"))
        self.judgement_lines = [*self.judgement_lines[-9:], line]
        self.query_one("#judgements", Static).update(Content("\n").join(self.judgement_lines))

    def _finished(self, event: DebateFinished) -> None:
        self.finished = event
        self.phase = event.status
        outcome = event.outcome
        parts = [Content.styled(f"{event.status}: {terminal_safe(event.stop_reason)}", "bold")]
        final = outcome.get("final_distribution")
        if isinstance(final, dict) and final:
            self.query_one(Distributions).set("consensus", final)
        for key, title in (("top", "consensus"), ("winner", "winner"), ("verdict", "verdict")):
            if outcome.get(key) not in (None, ""):
                parts.append(Content.styled(f"{title}: {terminal_safe(str(outcome[key]))}", "$role-consensus"))
        check = outcome.get("label_check")
        if isinstance(check, dict) and check.get("flag"):
            parts.append(Content.styled(f"⚑ {terminal_safe(check['flag'])}", "$notice"))
        for key in ("recommendations", "joint"):
            parts += _listing(outcome.get(key))
        parts.append(Content.styled("v: accept or reject the outcome · escape: back", "dim"))
        self.query_one("#outcome", Static).update(Content("\n").join(parts))

    def _status(self) -> None:
        bits = [self.protocol or "debate", terminal_safe(self.title_text)[:50], self.phase]
        if self.profile:
            bits.append(f"{self.profile} defaults")
        if self.round is not None:
            bits.append(f"round {self.round}")
        if self.kappa is not None:
            bits.append(f"κ {self.kappa:.2f}")
        state = "replay" if self.replay_events is not None else ("paused" if self.paused else ("running" if self.running else "done"))
        bits.append(state)
        if self.debate_id:
            bits.append(self.debate_id)
        line = " · ".join(str(b) for b in bits)
        if line != self._status_line:  # a repaint only when it changed; one line high, so no layout
            self._status_line = line
            self.query_one("#status", Static).update(plain(line), layout=False)

    # -- moderator controls ---------------------------------------------------------------------

    def _live(self, what: str) -> bool:
        if not self.running:
            self.app.notify(f"{what}: the debate is not running", severity="warning")
        return self.running

    def action_pause(self) -> None:
        if self._live("Pause"):
            self.channel.send(Resume() if self.paused else Pause())
            self.app.notify("resuming" if self.paused else "pausing after the current turn")

    def action_interject(self) -> None:
        if not self._live("Interject"):
            return
        targets = [("both agents", "both"), ("agent A", "agent-a"), ("agent B", "agent-b")]

        def send(result: tuple[str, str] | None) -> None:
            if result:
                self.channel.send(Interject(result[0], to=result[1]))
                self.app.notify("the agents will read it at their next turn")

        self.app.push_screen(InterjectDialog(targets), send)

    def action_contentiousness(self) -> None:
        if not self._live("Contentiousness"):
            return

        def send(value: float | None) -> None:
            if value is not None:
                self.channel.send(SetContentiousness(value))
                self.app.notify(f"contentiousness {value:.2f} from the next round")

        self.app.push_screen(NumberDialog("Contentiousness for the next rounds (0 agree … 1 devil's advocate):", self.kappa), send)

    def action_skip(self) -> None:
        if self._live("Skip"):
            self.channel.send(SkipToConclusion())
            self.app.notify("skipping to the conclusion after this round")

    def action_stop(self) -> None:
        if not self._live("Stop"):
            return

        def stop(yes: bool | None) -> None:
            if yes:
                self.channel.send(Stop("stopped by the moderator"))

        self.app.push_screen(ConfirmDialog("Stop the debate now? Finished turns stay in the journal.", yes="Stop"), stop)

    def action_verdict(self) -> None:
        def record(result: tuple[bool, str] | None) -> None:
            if result is None:
                return
            accept, note = result
            if self.running:
                self.channel.send(Verdict(accept, note))
            elif self.debate_id:
                self.app.journal.record(ModeratorActed(self.debate_id, "verdict", {"accept": accept, "note": note}, self.round))  # type: ignore[attr-defined]
            self.query_one(Transcript).note(f"✋ moderator: {'accepted' if accept else 'rejected'} the consensus {note}", "moderator")
            self.app.notify("verdict recorded")

        self.app.push_screen(VerdictDialog(), record)

    def action_copy(self) -> None:
        text = self.query_one(Transcript).last_text()
        if text:
            self.app.copy_to_clipboard(text)
            self.app.notify("copied the last turn")

    def action_leave(self) -> None:
        if not self.running:
            self.app.pop_screen()
            return

        def leave(yes: bool | None) -> None:
            if yes:
                self.channel.send(Stop("the moderator left the debate"))
                self.workers.cancel_group(self, "debate")
                self.app.pop_screen()

        self.app.push_screen(ConfirmDialog("Leave and stop this debate? It stays in the journal.", yes="Leave"), leave)


def _listing(value: Any, limit: int = 12) -> list[Content]:
    """A joint proposal or recommendations (a dict of texts and lists) as short lines."""
    if not isinstance(value, dict):
        return []
    lines: list[Content] = []
    for key, item in value.items():
        items = item if isinstance(item, list) else [item]
        for entry in items:
            if isinstance(entry, str | int | float) and str(entry).strip():
                lines.append(Content(f"{key}: {terminal_safe(str(entry))[:160]}"))
    return lines[:limit]


def _payload(payload: dict[str, Any]) -> str:
    text = payload.get("text") or payload.get("reason") or payload.get("note") or ""
    if "value" in payload:
        text = f"{payload['value']:.2f}"
    if "to" in payload:
        text = f"→ {payload['to']}: {text}"
    return terminal_safe(str(text))
