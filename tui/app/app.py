"""The Textual app: screens, keys (remappable by id), themes, command palette, quitting safely."""

from __future__ import annotations

import asyncio
import itertools
import signal
from collections.abc import Iterable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any, Literal

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, TextArea

from backends.registry import Registry, load_registry
from outputs.redact import find
from store.journal import Journal
from store.queries import Queries
from tui import settings
from tui.app.collector import QuietCollector
from tui.app.messages import DebateEnded, OpenReview, ResumeDebate, StartDebate
from tui.app.runs import NewDebate, ResumedDebate
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog
from tui.app.screens.help import HelpScreen
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen, demo_values, remember_form
from tui.app.screens.review import ReviewScreen
from tui.app.theme import role_variables
from tui.app.workspace import Workspace, settle_memory
from tui.forms import FormError, ProtocolSpec
from tui.headless.signals import on_signals
from tui.protocol_catalog import resumable
from tui.sanitize import terminal_safe
from tui.saving import app_folder

Start = Literal["home", "demo", "new"]
THEMES = ("textual-dark", "textual-light")
#: Help screens kept installed (one per set of keys: a screen, a focused field); the oldest goes.
HELP_SCREENS_KEPT = 8


class SymposiumApp(App):
    TITLE = "Symposium"
    CSS_PATH = "symposium.tcss"  # every screen's and widget's style; colours from theme variables
    BINDINGS = [
        Binding("ctrl+c", "request_quit", "Quit", id="app.quit", priority=True, show=False),
        Binding("question_mark,f1", "help", "Help", id="app.help"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="app.theme", show=False),
    ]

    def __init__(self, *, db: str | Path | None = None, models: str | Path | None = None, start: Start = "home",
                 registry: Registry | None = None, journal: Journal | None = None,
                 export_dir: Path | None = None) -> None:
        super().__init__()
        self.workspace = Workspace(registry or load_registry(models), journal or Journal(db), export_dir or app_folder())
        self.start_with = start
        self._help_screens: dict[tuple, str] = {}  # keys shown → name of the installed Help screen
        self._help_names = itertools.count()
        self._signal_handlers = ExitStack()  # SIGTERM/SIGHUP while mounted; see _end_on_signal
        self.collector = QuietCollector()  # full garbage collections at pauses in the input, not under a key
        saved = settings.load()
        if saved.get("theme") in THEMES:
            self.theme = saved["theme"]

    def on_mount(self) -> None:
        self._signal_handlers.enter_context(on_signals(asyncio.get_running_loop(), self._end_on_signal))
        settings.protect()  # an older version's settings were readable by every account …
        remember_form()  # … and held the last case: it is dropped
        keymap, problem = settings.keymap()
        if keymap:
            self.set_keymap(keymap)
        if problem:
            self.notify(problem, severity="warning", timeout=10)
        self.push_screen(HomeScreen(self.workspace))
        self.call_after_refresh(settle_memory)
        self.collector.start(self)
        # the title a form suggests is checked by the redaction's recognizers, whose patterns take
        # a quarter of a second to build: built now, off the event loop, not at the first keystroke
        self.run_worker(partial(find, "warm up"), thread=True, group="warm-up")
        if self.start_with == "demo":
            self.open_demo()
        elif self.start_with == "new":
            self.open_new_debate()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """The role colours ($role-a, $notice …) for the theme in force: Textual asks again at
        every theme change, and a theme's own ``variables`` still win over these."""
        return {**super().get_theme_variable_defaults(), **role_variables(self.current_theme)}

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Every notice, whoever raises it, is shown as plain text: messages carry text the code
        does not own (a search, a model id, a server's error, a key map), and Textual would read
        ``[/b]`` in it as markup and crash, or ``[@click=…]`` as an action. ``markup`` is
        accepted for Textual's signature and ignored."""
        super().notify(terminal_safe(str(message)), title=terminal_safe(str(title)), severity=severity,
                       timeout=timeout, markup=False)

    @property
    def registry(self) -> Registry:
        return self.workspace.registry

    @property
    def journal(self) -> Journal:
        return self.workspace.journal

    @property
    def export_dir(self) -> Path:
        return self.workspace.export_dir

    def on_input_changed(self, event: Input.Changed) -> None:
        """A paste can carry escape sequences, and an Input shows its value raw: keep it clean."""
        if (clean := terminal_safe(event.value)) != event.value:
            event.input.value = clean

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """As :meth:`on_input_changed`, for the case text and other multi-line fields."""
        text = event.text_area.text
        if (clean := terminal_safe(text)) != text:
            event.text_area.text = clean

    # -- navigation ----------------------------------------------------------------------------

    def open_new_debate(self) -> None:
        self.push_screen(NewDebateScreen(self.workspace))

    def open_demo(self) -> None:
        self.push_screen(NewDebateScreen.demo(self.workspace))

    def demo_values(self) -> dict[str, Any]:
        """What the demo's form starts from (see :func:`~tui.app.screens.new_debate.demo_values`)."""
        return demo_values(self.registry)

    @on(StartDebate)
    def _start_debate(self, message: StartDebate) -> None:
        self.start_debate(message.spec, message.values)

    @on(OpenReview)
    def _open_review(self, message: OpenReview) -> None:
        self.open_review(message.debate_id)

    @on(ResumeDebate)
    def _resume(self, message: ResumeDebate) -> None:
        self.resume(message.debate_id)

    @on(DebateEnded)
    def _debate_ended(self, message: DebateEnded) -> None:
        """A run is over: Home lists its new status at once (not "running" until F5)."""
        for screen in self.screen_stack:
            if isinstance(screen, HomeScreen) and screen.is_mounted:
                screen.refresh_debates()

    def start_debate(self, spec: ProtocolSpec, values: dict[str, Any]) -> None:
        """The form's debate, on the Debate screen (the form closes)."""
        if isinstance(self.screen, NewDebateScreen):
            self.pop_screen()
        self.push_screen(DebateScreen(NewDebate(spec, values), self.workspace))

    def open_review(self, debate_id: str) -> None:
        debate = Queries(self.journal).debate(debate_id)
        if debate is None:
            self.notify(f"debate {debate_id} is no longer in the journal", severity="warning")
            return
        self.push_screen(ReviewScreen(debate, self.workspace))

    def resume(self, debate_id: str) -> None:
        """Continue an interrupted debate from its last finished turn, on the Debate screen."""
        debate = Queries(self.journal).debate(debate_id)
        if debate is None:
            return
        try:
            resumable(debate)
        except FormError as exc:
            self.notify(str(exc), severity="warning")
            return
        self.push_screen(DebateScreen(ResumedDebate(debate), self.workspace))

    # -- app-wide actions ------------------------------------------------------------------------

    def action_help(self) -> None:
        """Help for the keys in force now. One Help screen per distinct set of keys is kept
        installed and shown again, not rebuilt: a new screen is composed, styled and laid out
        twice, and each layout re-renders the (tinted) screen behind it, which with a long
        transcript was most of what a press of ``?`` cost."""
        if isinstance(self.screen, HelpScreen):
            return
        bindings = [b.binding for b in self.active_bindings.values()]
        key = tuple((b.id, b.key, b.action, b.description, self.get_key_display(b)) for b in bindings)
        name = self._help_screens.pop(key, None)
        if name is None:
            name = f"help-{next(self._help_names)}"
            self.install_screen(HelpScreen(bindings), name)
        self._help_screens[key] = name  # most recently used last
        while len(self._help_screens) > HELP_SCREENS_KEPT:
            oldest = next(iter(self._help_screens))
            self.uninstall_screen(self._help_screens.pop(oldest))
        self.push_screen(name)

    def action_toggle_theme(self) -> None:
        self.theme = THEMES[1] if self.theme == THEMES[0] else THEMES[0]
        saved = settings.load()
        saved["theme"] = self.theme
        settings.save(saved)

    def action_request_quit(self) -> None:
        """Ctrl-C asks first when a debate is running; the debate stays resumable."""
        running = any(isinstance(s, DebateScreen) and s.running for s in self.screen_stack)
        if not running:
            self.exit()
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self.workers.cancel_all()  # the runner marks the debate interrupted
                self.exit()

        self.push_screen(ConfirmDialog("A debate is running. Quit? It stays in the journal and can be resumed.", yes="Quit"), answer)

    def _end_on_signal(self, sig: signal.Signals) -> None:
        """SIGTERM or SIGHUP (``kill``, a service manager, the terminal closed): quit as a confirmed
        Ctrl-C does, without asking, since a signal is not a keypress and nobody may be there to
        answer (after SIGHUP, no terminal either). A running debate's worker is cancelled, so the
        runner marks it ``interrupted`` and its ``Engines`` block closes the models before the app
        is gone; the exit status is 128 + the signal's number, as the headless commands'."""
        self.log.warning(f"{sig.name} received: quitting, the running debate stays resumable")
        self.workers.cancel_all()
        self.exit(return_code=128 + sig)

    def on_unmount(self) -> None:
        self._signal_handlers.close()  # the previous dispositions back, once the app is gone
        self.collector.stop()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp, events.Paste)):
            self.collector.input_seen()
        await super().on_event(event)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New debate", "Set up a debate", self.open_new_debate)
        yield SystemCommand("Demo debate", "EVINCE between the two bundled models (its form, filled in)", self.open_demo)
        yield SystemCommand("Toggle theme", "Light or dark", self.action_toggle_theme)
        for binding in screen.BINDINGS:
            if isinstance(binding, Binding) and binding.description and binding.id:
                action = binding.action
                yield SystemCommand(binding.description, f"{binding.id} ({binding.key})",
                                    lambda action=action: self.run_action(action, screen))



def run_app(*, db: str | None, models: str | None, start: Start = "home") -> int:
    app = SymposiumApp(db=db, models=models, start=start)
    try:
        app.run()
    finally:  # after the app and its workers are gone, so an interrupted debate is marked first
        app.journal.close()
    return app.return_code or 0  # 128 + the signal's number when SIGTERM or SIGHUP ended it
