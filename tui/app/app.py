"""The Textual app: screens, keys (remappable by id), themes, command palette, quitting safely."""

from __future__ import annotations

import asyncio
import gc
import itertools
import signal
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_documents_dir
from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.widgets import Input, TextArea
from textual.binding import Binding
from textual.screen import Screen

from backends.base import BackendUnavailable
from backends.registry import Registry, load_registry
from backends.sources import DEMO_MODELS, demo_model
from store.journal import Journal
from store.queries import Queries

from tui import settings
from tui.forms import FormError, ProtocolSpec
from tui.protocol_catalog import FIRST, resumable
from tui.sanitize import terminal_safe
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog
from tui.app.screens.help import HelpScreen
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen, remember_form
from tui.app.screens.review import ReviewScreen
from tui.app.theme import role_variables
from tui.headless.signals import on_signals

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
                 registry: Registry | None = None, journal: Journal | None = None) -> None:
        super().__init__()
        self.registry = registry or load_registry(models)
        self.journal = journal or Journal(db)
        self.start_with = start
        self.export_dir = Path(user_documents_dir()) / "symposium"
        self._help_screens: dict[tuple, str] = {}  # keys shown → name of the installed Help screen
        self._help_names = itertools.count()
        self._signal_handlers = ExitStack()  # SIGTERM/SIGHUP while mounted; see _end_on_signal
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
        self.push_screen(HomeScreen())
        self.call_after_refresh(self.settle_memory)
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

    @staticmethod
    def settle_memory() -> None:
        """Move the objects alive now (screens, widgets, a transcript's turns) out of the
        garbage collector's reach, so that its full collections no longer walk them.

        Why: with a long transcript the interpreter holds a few hundred thousand objects, and a
        full collection over them stalled the event loop for ~80 ms at random moments (issue 17:
        the p95 of keypress → frame; gone with ``gc.freeze()`` in the same profile). Called at
        quiet points (start-up, a debate shown, a turn finished). The cost: a reference cycle
        that is already garbage at that moment is never reclaimed; Textual's widgets free
        themselves without cycles on removal, so this is small.
        """
        gc.freeze()

    def on_input_changed(self, event: Input.Changed) -> None:
        """A paste can carry escape sequences, and an Input shows its value raw: keep it clean."""
        if (clean := terminal_safe(event.value)) != event.value:
            event.input.value = clean

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """As :meth:`on_input_changed`, for the case text and other multi-line fields."""
        text = event.text_area.text
        if (clean := terminal_safe(text)) != text:
            event.text_area.text = clean

    # -- navigation used by the screens --------------------------------------------------------

    def open_new_debate(self) -> None:
        self.push_screen(NewDebateScreen())

    def open_demo(self) -> None:
        """The demo's form, filled in with the first protocol's examples (EVINCE on a liver case,
        SmolLM2 against Gemma 3, judged by SmolLM2); ctrl+s (or Start) starts it, and nothing
        else does: a key typed on Home never starts a debate."""
        self.push_screen(NewDebateScreen(FIRST.name, self.demo_values()))

    def demo_values(self) -> dict[str, Any]:
        """The first protocol's defaults and examples, with Gemma 3 270M in SmolLM2's seats where
        SmolLM2 is not installed (a plain `pip install 'symposium-tui[bundled]'` cannot bring it)."""
        values = FIRST.defaults()
        try:
            model = demo_model(self.registry).id
        except BackendUnavailable:
            return values  # the form then says what to install
        return {k: model if v == DEMO_MODELS[0] else v for k, v in values.items()}

    def start_debate(self, spec: ProtocolSpec, values: dict[str, Any]) -> None:
        if isinstance(self.screen, NewDebateScreen):
            self.pop_screen()
        self.push_screen(DebateScreen(spec, values))

    def open_review(self, debate_id: str) -> None:
        debate = Queries(self.journal).debate(debate_id)
        if debate is None:
            self.notify(f"debate {debate_id} is no longer in the journal", severity="warning")
            return
        self.push_screen(ReviewScreen(debate))

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
        self.push_screen(DebateScreen(resume=debate, title=debate["title"]))

    # -- app-wide actions ------------------------------------------------------------------------

    def action_help(self) -> None:
        """Help for the keys in force now. One Help screen per distinct set of keys is kept
        installed and shown again, not rebuilt: a new screen is composed, styled and laid out
        twice, and each layout re-renders the (tinted) screen behind it, which with a long
        transcript was most of what a press of ``?`` cost (issue 17)."""
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
