"""The Debate screen: a debate streaming live, with its metrics, and the moderator's controls.

The protocol runs in an async worker on the app's event loop; the models compute in worker
threads (see ``backends``), so the interface keeps answering keys while they think. Every
event goes to the journal first (``store.drive.drive``), then to :meth:`DebateScreen.show`.
The same screen can also play back recorded events (``events=``), which is how a debate read
from the journal is shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import LoadingIndicator, Static
from textual.worker import Worker, WorkerCancelled

from backends.base import BackendError
from backends.lifecycle import Engines, LoadEvent, Loading, PrivacyWarning, StillLoading
from backends.registry import RegistryError
from protocols.core.replay import ResumeError
from protocols.core.events import (
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
    Participant,
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
    about_context,
)
from protocols.core.agents import agents_for
from protocols.measures.analyzer import Analysis, Analyzer, TranscriptCollector
from protocols.core.definition import UNREGISTERED_PANELS, Panel, ProtocolDefinition
from protocols.core.moderation import CommandChannel, Honoured
from protocols.core.outcome import moderator_action, outcome_in_words
from protocols.registry import BY_NAME
from protocols.core.roles import ANALYZER, SIDE_PANEL
from store.journal import JournalError, new_debate_id

from tui.app.screens.typed import symposium
from tui.forms import FormError, ProtocolSpec
from tui.protocol_catalog import resumable
from tui.app.recorded import recorded_events
from tui.app.theme import role_style
from store.drive import drive
from tui.sanitize import plain, terminal_safe
from tui.app.widgets.footer import SteadyFooter
from tui.app.widgets.distribution import Distributions
from tui.app.widgets.findings import brief_lines
from tui.app.widgets.metrics import MetricsPanel
from tui.app.widgets.panels import AgendaPanel, JudgeTables
from tui.app.widgets.transcript import Transcript
from tui.app.screens.dialogs import ConfirmDialog, InterjectDialog, NumberDialog, PersonDialog, VerdictDialog


#: What a replayed debate offers: nothing.
NOTHING = Honoured(skip=False, stop=False, pause=False)

#: Each moderator action of the screen and the ``Honoured`` field that must allow it.
_COMMANDS = {"pause": "pause", "unpause": "pause", "interject": "interject", "contentiousness": "contentiousness",
             "skip": "skip", "stop": "stop"}


#: Why each command is refused once the debate has finished (the key is pressed, nothing is sent).
_TOO_LATE = {"pause": "there is nothing left to pause", "unpause": "there is nothing left to resume",
             "interject": "an interjection can no longer reach anyone",
             "contentiousness": "contentiousness can no longer change anything",
             "skip": "there is nothing left to skip", "stop": "there is nothing left to stop"}

#: Commands as the person knows them, for the note on those the debate ended before hearing.
_NAMES = {"Pause": "pause", "Resume": "resume", "Interject": "interjection", "SetContentiousness": "contentiousness",
          "SkipToConclusion": "skip", "Stop": "stop", "Verdict": "verdict"}


def honoured_of(spec: ProtocolSpec | None) -> Honoured:
    """The commands ``spec``'s protocol honours, as its definition declares them (one
    declaration, read here rather than copied into the app); nothing for a replay."""
    return NOTHING if spec is None else spec.definition.commands


class DebateScreen(Screen):
    """A live (or replayed) debate.

    The moderator's keys follow the running protocol's ``HONOURED``: a command it does not
    honour has no key and is not in the footer (``check_action``), so nothing is offered that
    would be confirmed and then ignored. They also follow the debate's state (reactives with
    ``bindings=True``): pause or resume, and nothing to command once the debate has ended;
    a moderator key pressed after the protocol finished says why nothing was sent.

    The side column shows the panels the protocol's definition declares (``Panel``): EVINCE's
    distributions and metrics, SocraSynth's agenda, Γ per round and judges' tables; the outcome
    is said in words (``protocols.core.outcome``), as ``show`` and the export say it.
    """

    BINDINGS = [
        Binding("p", "pause", "Pause", id="debate.pause"),
        Binding("p", "unpause", "Resume", id="debate.resume"),
        Binding("i", "interject", "Interject", id="debate.interject"),
        Binding("k", "contentiousness", "Contentiousness", id="debate.contentiousness"),
        Binding("s", "skip", "Skip", id="debate.skip"),
        Binding("x", "stop", "Stop", id="debate.stop"),
        Binding("v", "verdict", "Verdict", id="debate.verdict"),
        Binding("c", "copy", "Copy turn", id="debate.copy", show=False),
        Binding("escape", "leave", "Back", id="debate.back"),
    ]

    def __init__(self, spec: ProtocolSpec | None = None, values: Mapping[str, Any] | None = None, *,
                 events: Iterable[Event] | None = None, resume: dict[str, Any] | None = None, title: str = "",
                 protocol: str = "") -> None:
        super().__init__()
        self.spec = spec
        self.resume_debate = resume
        self.values = dict(values or {})
        self.replay_events = list(events) if events is not None else None
        self.channel = CommandChannel()
        self.debate_id: str | None = None
        self.finished: DebateFinished | None = None
        self.title_text = title  # the debate's own title, once DebateStarted gives it (not the protocol's name twice)
        self.protocol = spec.title if spec else ""
        self.profile = ""  # the defaults profile in force, from the journalled config
        self.phase = "starting"
        self.round: int | None = None
        self.kappa: float | None = None
        self.metrics_rows: list[dict[str, Any]] = []
        self.judgement_lines: list[Content] = []
        #: Context-window notes of judgements already shown, by (round, judge, note).
        self._context_said: set[tuple[int | None, str, str]] = set()
        self.analyzer: Analyzer | None = None
        self.collector = TranscriptCollector()
        self._status_line = ""
        self._analysis: Worker[None] | None = None
        self.participants: dict[str, Participant] = {}  # by role, from DebateStarted
        #: (round, phase) as each phase began: a metrics row's phase is its round's, not the screen's state
        self.phases: list[tuple[int, str]] = []
        self.definition = self._definition(protocol)

    #: The protocol is generating (or loading its models); commands can reach it.
    running: reactive[bool] = reactive(False, bindings=True)
    #: A pause has taken effect (the protocol waits at its checkpoint for a resume).
    paused: reactive[bool] = reactive(False, bindings=True)
    #: The commands the running protocol honours.
    honoured: reactive[Honoured] = reactive(NOTHING, bindings=True)
    #: This debate's roles an interjection may be addressed to (known once it has started).
    addressable: reactive[tuple[str, ...]] = reactive((), bindings=True)
    #: The protocol has finished (its ``DebateFinished`` came): no command can take effect any
    #: more, even while the screen still works (the last analysis, the models closing).
    concluded: reactive[bool] = reactive(False, bindings=True)

    def _definition(self, protocol: str) -> ProtocolDefinition | None:
        """The protocol's definition, from whatever this screen was given: the spec of a new
        debate, the journalled debate to resume, the protocol named by a review or a replay."""
        if self.spec is not None:
            return self.spec.definition
        if not protocol and self.resume_debate is not None:
            protocol = str(self.resume_debate.get("protocol") or "")
        if not protocol and self.replay_events:
            protocol = next((e.protocol for e in self.replay_events if isinstance(e, DebateStarted)), "")
        return BY_NAME.get(protocol)

    @property
    def protocol_name(self) -> str:
        """The protocol's registry name (``self.protocol`` is what the status line shows)."""
        return self.definition.name if self.definition is not None else self.protocol

    @property
    def panels(self) -> tuple[Panel, ...]:
        """The side panels the protocol declares; a run of no registered protocol (a benchmark's
        single prediction) shows its distributions and judgements."""
        return self.definition.panels if self.definition is not None else UNREGISTERED_PANELS

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="status")
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
                            yield Static(Text("none yet", style="dim"), id="judgements")
                        case "agenda":
                            yield AgendaPanel(id="agenda")
                        case "judge_tables":
                            yield JudgeTables(id="judge-tables")
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
            self.call_after_refresh(symposium(self).settle_memory)
        else:
            self.honoured = honoured_of(self.spec)
            self.running = True
            self.run_worker(self._run(), name="debate", group="debate", exclusive=True)

    # -- running --------------------------------------------------------------------------------

    async def _run(self) -> None:
        """Load the models, start (or resume) the protocol, journal and show every event."""
        app = symposium(self)  # held: the screen may be gone when the run ends (the app quitting)
        try:
            if self.resume_debate is not None:
                spec, roles = resumable(self.resume_debate)
                self.honoured = honoured_of(spec)
                for event in recorded_events(self.resume_debate):  # what was said before the interruption
                    self.show(event)
            else:
                assert self.spec is not None
                spec, roles = self.spec, self.spec.roles_for(self.values)
            analyzer_model = str(self.values.get(SIDE_PANEL) or "none")
            if analyzer_model != "none":
                roles = {**roles, SIDE_PANEL: analyzer_model}  # apart from a protocol's own analyzer
            async with Engines(app.registry, on_event=self._loading) as engines:
                agents = agents_for(roles, await engines.load(roles.values()))
                if SIDE_PANEL in agents:
                    self.analyzer = Analyzer(dataclasses.replace(agents.pop(SIDE_PANEL), role=ANALYZER))
                    self.query_one("#analysis", Static).update(Text("after the first round …", style="dim"))
                if self.resume_debate is not None:
                    events = spec.resume(self.resume_debate, agents, self.channel, self.ask_person)
                else:
                    self.debate_id = new_debate_id()
                    events = spec.build(self.values, agents, self.debate_id, self.channel, self.ask_person,
                                        registry=app.registry)
                self.query_one("#loading").display = False
                await drive(events, app.journal, self.show, self.collector, progress=self._hashing)
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

    def _hashing(self, message: str) -> None:
        """A model file being hashed for the debate's provenance (once per file): the status
        line says how far, as it does for loading."""
        self.phase = message
        self._status()

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
                self.participants = {p.role: p for p in event.participants}
                self.addressable = self.honoured.targets(self.participants)
                self.title_text = event.title
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
            case TokenDelta():  # the hot path: buffered, painted by the transcript's timer
                transcript.delta(event)
                return  # nothing in the status line changes per token
            case TurnFinished():
                transcript.finish(event)
                self.round = event.round  # a replay has no TurnStarted: the status follows the turns
                if self.running:  # a quiet point: what the turn built is long-lived
                    self.call_after_refresh(symposium(self).settle_memory)
                if event.distribution:
                    for bars in self.query(Distributions):
                        bars.set(event.role, event.distribution)
                if event.kappa is not None:
                    self.kappa = event.kappa
                if event.kind == "agenda" and isinstance(event.parsed, dict):
                    self._agenda(event.parsed.get("agreed") or event.parsed.get("subtopics"),
                                 {"proposal": f"proposed by {event.role}", "merge": f"merged by {event.role}",
                                  "review": "agreed"}.get(str(event.parsed.get("step")), ""))
            case MetricsComputed():
                self.metrics_rows.append({"round": event.round, "phase": self._phase_of(event.round), "kappa": event.kappa,
                                          **event.metrics})
                self._show_metrics()
                self._refresh_analysis(event.round)
            case JudgementMade() if event.kind == "analysis":
                self._show_analysis(event)
            case JudgementMade():
                tables = self.query(JudgeTables)
                if not (tables and tables.first().add(event)):
                    self._judgement(event)
            case ModeratorActed():
                transcript.note(f"✋ {terminal_safe(moderator_action(event.kind, event.payload, event.round))}", "moderator")
                if event.kind == "edit_agenda":
                    self._agenda(event.payload.get("after"), "edited by the moderator")
                if event.kind in ("pause", "resume"):
                    self.paused = event.kind == "pause"
                if event.kind == "resume" and self.phases:  # the status line says the phase again, not "paused"
                    self.phase = self.phases[-1][1]
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
                symposium(self).journal.record(event)
                if isinstance(event, JudgementMade):
                    self._show_analysis(event)
        except BackendError as exc:
            self.query_one("#analysis", Static).update(Content.styled(f"analysis failed: {terminal_safe(str(exc))}", "$problem"))

    def _show_analysis(self, event: JudgementMade) -> None:
        rendered = Analysis.from_json(event.reasons).render()
        self.query_one("#analysis", Static).update(Text(terminal_safe(rendered)))

    def reset_panels(self) -> None:
        """Empty every side panel (the Review screen shows the debate again up to another round)."""
        self.metrics_rows, self.judgement_lines, self.finished, self.phases = [], [], None, []
        self.concluded = False
        for bars in self.query(Distributions):
            bars.latest.clear()
            bars.update(Content.styled("no distributions yet", "dim"))
        for panel in (*self.query(AgendaPanel), *self.query(JudgeTables)):
            panel.clear()
        for shown in self.query("#judgements").results(Static):
            shown.update(Text("none yet", style="dim"))
        self.query_one("#outcome", Static).update("")

    def _phase_of(self, round_: int) -> str | None:
        """The phase ``round_`` was held in: the latest phase begun at or before it (the journal's
        reading, ``store.queries.Queries.metrics``), never the screen's momentary state."""
        return next((phase for number, phase in reversed(self.phases) if number <= round_), None)

    def _show_metrics(self, compare: list[dict[str, Any]] | None = None, labels: tuple[str, str] = ("", "other"),
                      legend: tuple[str, str] | None = None) -> None:
        for panel in self.query(MetricsPanel):
            panel.show(self.metrics_rows, compare, labels, legend)

    def _agenda(self, items: Any, step: str) -> None:
        if isinstance(items, list) and items:
            for panel in self.query(AgendaPanel):
                panel.set([i for i in items if isinstance(i, dict)], step)

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
        for shown in self.query("#judgements").results(Static):
            shown.update(Content("\n").join(self.judgement_lines))
        notes = event.reasons.get("notes") if isinstance(event.reasons, dict) else None
        for note in notes if isinstance(notes, list) else []:
            said = (event.round, event.judge_role, note)
            if isinstance(note, str) and about_context(note) and said not in self._context_said:  # one call, two judgements: once
                self._context_said.add(said)
                self.query_one(Transcript).note(f"✂ {event.judge_role}'s {event.kind}: {note}")

    def _finished(self, event: DebateFinished) -> None:
        self.finished = event
        self.concluded = True
        left = []
        while (command := self.channel.poll()) is not None:  # sent after the protocol's last checkpoint
            if isinstance(command, Verdict) and self.debate_id:  # a verdict on the outcome is kept all the same
                symposium(self).journal.record(ModeratorActed(self.debate_id, "verdict", {"accept": command.accept, "note": command.note},
                                                       self.round))
                continue
            left.append(_NAMES.get(type(command).__name__, type(command).__name__))
        if left:
            self.query_one(Transcript).note(f"✋ the debate ended before your {', '.join(left)} could take effect", "moderator")
        self.phase = event.status
        outcome = event.outcome
        said = outcome_in_words({"protocol": self.protocol_name, "status": event.status, "stop_reason": event.stop_reason,
                                 "outcome": outcome})
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
            ended = {"protocol": self.protocol_name, "status": event.status, "stop_reason": event.stop_reason}
            parts += brief_lines(self.definition.present(outcome, ended))
        parts.append(Content.styled("v: accept or reject the outcome · escape: back", "dim"))
        parts = [p for p in parts if p.plain.strip()]
        self.query_one("#outcome", Static).update(Content("\n").join(parts))

    def _status(self) -> None:
        bits = [b for b in (self.protocol or "debate", terminal_safe(self.title_text)[:50], self.phase) if b]
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A moderator command is offered (has a key, shows in the footer) only while the debate
        runs and only if its protocol honours it; pause and resume share a key, one at a time.
        The verdict is offered while it runs or once it finished with an outcome: a debate that
        failed to start has none, and "verdict recorded" would have been untrue there."""
        if action == "verdict":  # on an outcome: while the debate runs, or once it has finished with one
            return self.running or (self.debate_id is not None and self.finished is not None)
        needs = _COMMANDS.get(action)
        if needs is None:
            return True
        if not self.running or self.concluded or not getattr(self.honoured, needs):
            return False
        if action == "pause":
            return not self.paused
        if action == "unpause":  # not "resume": the Review screen's action of that name resumes a debate
            return self.paused
        if action == "interject":
            return bool(self.addressable)
        return True

    def on_key(self, event: events.Key) -> None:
        """A moderator key pressed after the debate finished: its command is no longer offered
        (``check_action``), and rather than nothing happening the person is told why."""
        if not self.concluded or self.replay_events is not None:
            return
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.key == event.key and binding.action in _TOO_LATE:
                needs = _COMMANDS[binding.action]
                if getattr(self.honoured, needs):
                    event.stop()
                    self.app.notify(f"The debate has finished: {_TOO_LATE[binding.action]}.", title="Not sent",
                                    severity="warning", markup=False)
                    return

    def _notify(self, message: str) -> None:
        """A confirmation; it may quote the moderator's own words or role names: never markup."""
        self.app.notify(message, markup=False)

    def action_pause(self) -> None:
        self.channel.send(Pause())
        self._notify("Pausing after the step under way: the debate waits for you (p resumes).")

    def action_unpause(self) -> None:
        self.channel.send(Resume())
        self._notify("Resuming.")

    def _who(self, role: str) -> str:
        """A role as the Interject menu names it: the role, the model that plays it and, where
        the protocol gives one, who it is at the table (a juror's persona, a seat's name)."""
        p = self.participants.get(role)
        if p is None:
            return role
        who = p.details.get("persona") or p.details.get("name")
        return f"{role} ({p.model_id}{f', {who}' if who else ''})"

    def action_interject(self) -> None:
        roles = self.addressable
        targets = [(self._who(r), r) for r in roles]
        if len(roles) > 1:
            targets.insert(0, ("all: " + _compact(roles), "all"))

        def send(result: tuple[str, str] | None) -> None:
            if result:
                text, to = result
                self.channel.send(Interject(text, to=to))
                named = _compact(roles) if to == "all" else to
                self._notify(f"Sent. It goes into the next request to {named}, after the step under way.")

        self.app.push_screen(InterjectDialog(targets), send)

    def action_contentiousness(self) -> None:
        def send(value: float | None) -> None:
            if value is not None:
                self.channel.send(SetContentiousness(value))
                self._notify(f"Contentiousness {value:.2f} from the next round.")

        self.app.push_screen(NumberDialog("Contentiousness from the next round (0 agree … 1 devil's advocate):", self.kappa), send)

    def action_skip(self) -> None:
        self.channel.send(SkipToConclusion())
        self._notify(f"Skipping to {self.honoured.skip_to}.")

    def action_stop(self) -> None:
        def stop(yes: bool | None) -> None:
            if yes:
                self.channel.send(Stop("stopped by the moderator"))
                # said at once: the debate ends only once its step under way is cut off and its
                # models closed, seconds later on a slow machine, and nothing else shows it began
                self._notify("Stopping. A reply being written is cut off; finished turns stay in the journal.")

        self.app.push_screen(ConfirmDialog("Stop the debate now? A reply being written is cut off; finished turns stay "
                                           "in the journal.", yes="Stop"), stop)

    def action_verdict(self) -> None:
        def record(result: tuple[bool, str] | None) -> None:
            if result is None:
                return
            accept, note = result
            if self.running:
                self.channel.send(Verdict(accept, note))
            elif self.debate_id:
                symposium(self).journal.record(ModeratorActed(self.debate_id, "verdict", {"accept": accept, "note": note}, self.round))
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


def _compact(roles: Iterable[str]) -> str:
    """Roles in one short line: a run of three or more numbered roles as "juror-1…5"."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 3:
            out.append(f"{run[0]}…{run[-1].rsplit('-', 1)[1]}")
        else:
            out.extend(run)
        run.clear()

    for role in roles:
        stem, _, number = role.rpartition("-")
        if number.isdigit() and run and run[-1].rpartition("-")[0] == stem and int(run[-1].rpartition("-")[2]) + 1 == int(number):
            run.append(role)
            continue
        flush()
        if number.isdigit():
            run.append(role)
        else:
            out.append(role)
    flush()
    return ", ".join(out)
