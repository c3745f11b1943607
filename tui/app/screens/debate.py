"""The Debate screen: a debate running live, with its metrics, and the moderator's controls.

The protocol runs in an async worker on the app's event loop; the models compute in worker
threads (see ``backends``), so the interface keeps answering keys while they think. Every
event goes to the journal first (``store.drive.drive``), then to the screen's
:class:`~tui.app.widgets.debate_view.DebateView`. What runs is a
:class:`~tui.app.runs.DebateRun`: a new debate from the form, or a journalled one resumed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerCancelled

from backends.base import BackendError
from backends.lifecycle import Engines, LoadEvent, Loading, PrivacyWarning, StillLoading
from backends.registry import RegistryError
from protocols.core.agents import agents_for
from protocols.core.events import (
    DebateFinished,
    DebateStarted,
    Event,
    Interject,
    JudgementMade,
    MetricsComputed,
    ModeratorActed,
    Pause,
    Resume,
    SetContentiousness,
    SkipToConclusion,
    Stop,
    TurnFinished,
    Verdict,
)
from protocols.core.moderation import CommandChannel, Honoured
from protocols.core.outcome import moderator_action
from protocols.core.replay import ResumeError
from protocols.core.roles import ANALYZER, SIDE_PANEL
from protocols.measures.analyzer import Analyzer, TranscriptCollector
from store.drive import drive
from store.journal import JournalError
from tui.app.messages import DebateEnded
from tui.app.runs import DebateRun
from tui.app.screens.dialogs import ConfirmDialog, EditDialog, InterjectDialog, NumberDialog, PersonDialog, VerdictDialog
from tui.app.widgets.debate_view import DebateView
from tui.app.widgets.footer import SteadyFooter
from tui.app.workspace import Workspace, settle_memory
from tui.forms import FormError
from tui.sanitize import terminal_safe

#: What a debate that offers no command honours.
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


def verdict_event(debate_id: str, accept: bool, note: str, round_: int | None) -> ModeratorActed:
    """The moderator's verdict on an outcome, as the journal keeps it."""
    return ModeratorActed(debate_id, "verdict", {"accept": accept, "note": note}, round_)


def verdict_note(accept: bool, note: str) -> str:
    """The transcript's line for a verdict just given, as the journal's readers say it
    (:func:`~protocols.core.outcome.moderator_action`): the note quoted, apart from the verdict."""
    return f"✋ {moderator_action('verdict', {'accept': accept, 'note': note})}"


class DebateScreen(Screen):
    """A debate running live, shown by its :class:`DebateView`, with the moderator's keys.

    The moderator's keys follow the running protocol's ``commands``: a command it does not
    honour has no key and is not in the footer (``check_action``), so nothing is offered that
    would be confirmed and then ignored. They also follow the debate's state (reactives with
    ``bindings=True``): pause or resume, and nothing to command once the debate has ended;
    a moderator key pressed after the protocol finished says why nothing was sent.
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

    def __init__(self, run: DebateRun, workspace: Workspace) -> None:
        super().__init__()
        self.run = run
        self.workspace = workspace
        self.channel = CommandChannel()
        #: The finished turns so far, for the side panel's analyzer.
        self.collector = TranscriptCollector()
        self.analyzer: Analyzer | None = None
        self._analysis: Worker[None] | None = None
        #: The debate as shown (kept here, readable once the screen is gone).
        self.view = DebateView(run.definition, title=run.title,
                               analysis="choose an analyzer model on the New-debate form", id="view")

    @property
    def debate_id(self) -> str | None:
        return self.view.debate_id

    @property
    def finished(self) -> DebateFinished | None:
        """The protocol's last event, once it came."""
        return self.view.finished

    def compose(self) -> ComposeResult:
        yield self.view
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.view.preparing = True
        self.honoured = self.run.definition.commands if self.run.definition is not None else NOTHING
        self.running = True
        self.run_worker(self._run(), name="debate", group="debate", exclusive=True)

    def watch_running(self) -> None:
        self._state()

    def watch_paused(self) -> None:
        self._state()

    def _state(self) -> None:
        """The status line's state: paused or running; once the run is over, nothing more than
        its phase already says (finished, stopped, failed …), or "ended" where it says none."""
        view = self.view
        over = "" if view.finished is not None or view.phase == "failed" else "ended"
        view.state = "paused" if self.paused else ("running" if self.running else over)

    # -- running --------------------------------------------------------------------------------

    async def _run(self) -> None:
        """Load the models, start (or resume) the protocol, journal and show every event."""
        workspace, app = self.workspace, self.app  # held: the screen may be gone when the run ends (left, the app quitting)
        view = self.view
        try:
            roles = dict(self.run.roles())
            for event in self.run.recorded():  # what was said before the interruption
                self.show(event)
            if self.run.analyzer is not None:
                roles[SIDE_PANEL] = self.run.analyzer  # apart from a protocol's own analyzer
            async with Engines(workspace.registry, on_event=self._loading) as engines:
                agents = agents_for(roles, await engines.load(roles.values()))
                view.loaded()
                if SIDE_PANEL in agents:
                    self.analyzer = Analyzer(dataclasses.replace(agents.pop(SIDE_PANEL), role=ANALYZER))
                    view.show_analysis(Content.styled("after the first round …", "dim"))
                events = self.run.events(agents, self.channel, self.ask_person, workspace.registry, edit=self.ask_edit)
                view.preparing = False
                await drive(events, workspace.journal, self.show, self.collector, progress=self._hashing)
                await self._last_analysis()  # it speaks through a model the block is about to close
        except (BackendError, RegistryError, FormError, JournalError, ResumeError) as exc:
            self._fail(str(exc))
        finally:
            self.running = False
            view.preparing = False
            # Home lists the debate's status: say it changed (the screen may already be gone)
            app.post_message(DebateEnded(view.debate_id))

    async def ask_person(self, prompt: str) -> str | None:
        """The person's seat (deliberation, human judge): a dialog; ``None`` leaves."""
        return await self.app.push_screen_wait(PersonDialog(prompt))

    async def ask_edit(self, question: str, text: str, check: Callable[[str], str | None]) -> str | None:
        """The moderator editing what the protocol proposes (SocraSynth's agenda): a dialog;
        ``None`` keeps the proposal."""
        return await self.app.push_screen_wait(EditDialog(question, text, check))

    def _hashing(self, message: str) -> None:
        """A model file being hashed for the debate's provenance (once per file): the status
        line says how far, as it does for loading."""
        self.view.phase = message

    def _loading(self, event: LoadEvent) -> None:
        """A model loads (the status line says which, its stage and the seconds so far) or warns
        that debate text leaves the machine."""
        if isinstance(event, Loading | StillLoading):
            self.view.phase = event.message
        elif isinstance(event, PrivacyWarning):
            self.app.notify(event.message, title="Privacy", severity="warning", timeout=20)

    def _fail(self, message: str) -> None:
        """Errors users can fix are shown in words, never as a traceback."""
        self.view.fail(message)
        self.app.notify(message[:300], title="The debate could not go on", severity="error", timeout=15)  # whole in #outcome

    def show(self, event: Event) -> None:
        """Show ``event``, and follow it with the screen's own state: who can be addressed,
        whether the debate is paused or over, the analyzer's next look."""
        view = self.view
        if isinstance(event, DebateFinished):
            self._left_unheard()  # before the outcome: said in the transcript where it happened
        view.show(event)
        match event:
            case DebateStarted():
                self.addressable = self.honoured.targets(view.participants)
            case TurnFinished() if self.running:  # a quiet point: what the turn built is long-lived
                self.call_after_refresh(settle_memory)
            case MetricsComputed():
                self._refresh_analysis(event.round)
            case ModeratorActed(kind="pause" | "resume"):
                self.paused = event.kind == "pause"
            case ModeratorActed(kind="set_contentiousness") if self.running and not view.preparing:  # not a resumed past
                value = event.payload.get("value")
                if isinstance(value, int | float):
                    self._notify(f"Contentiousness {value:.2f} took effect" +
                                 (f" in round {event.round}." if event.round is not None else "."))
            case DebateFinished():
                self.concluded = True
                self._refresh_analysis(None)

    def _left_unheard(self) -> None:
        """Commands sent after the protocol's last checkpoint: a verdict is kept all the same,
        the others are said to have come too late."""
        left = []
        while (command := self.channel.poll()) is not None:
            if isinstance(command, Verdict) and self.debate_id:
                self.workspace.journal.record(verdict_event(self.debate_id, command.accept, command.note, self.view.round))
                continue
            left.append(_NAMES.get(type(command).__name__, type(command).__name__))
        if left:
            self.view.note(f"✋ the debate ended before your {', '.join(left)} could take effect")

    # -- the analyzer side panel (ArgsBase's analyzer), for every protocol ---------------------

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
        view = self.view
        view.show_analysis(Content.styled("analyzing …", "dim"))
        try:
            async for event in self.analyzer.events(self.debate_id, list(self.collector.turns), topic=view.title, round_=round_):
                self.workspace.journal.record(event)
                if isinstance(event, JudgementMade):
                    view.show(event)
        except BackendError as exc:
            view.show_analysis(Content.styled(f"analysis failed: {terminal_safe(str(exc))}", "$problem"))

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
        if action == "unpause":
            return self.paused
        if action == "interject":
            return bool(self.addressable)
        return True

    def on_key(self, event: events.Key) -> None:
        """A moderator key pressed after the debate finished: its command is no longer offered
        (``check_action``), and rather than nothing happening the person is told why."""
        if not self.concluded:
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
        p = self.view.participants.get(role)
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
                # not "from the next round": there may be none (the round cap, a stop rule). Said
                # when it takes effect (``show``), or at the end that it came too late.
                self._notify(f"Contentiousness {value:.2f} sent: it takes effect when the next round begins, if one does.")

        self.app.push_screen(NumberDialog("Contentiousness for the next round, if the debate holds one (0 agree … 1 devil's advocate):",
                                          self.view.kappa), send)

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
                self.workspace.journal.record(verdict_event(self.debate_id, accept, note, self.view.round))
            self.view.note(verdict_note(accept, note))
            self.app.notify("verdict recorded")

        self.app.push_screen(VerdictDialog(), record)

    def action_copy(self) -> None:
        text = self.view.last_text()
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
