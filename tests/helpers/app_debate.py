"""The real Symposium app on a terminal, running or resuming an EVINCE debate on the bundled model.

The crash harness's ``app`` mode starts this under a pseudo-terminal and plays the person:
it presses Ctrl-C (the byte a terminal sends, read by Textual as the ``ctrl+c`` key), waits
for the app's "A debate is running. Quit?" dialog and presses Enter, or it SIGKILLs the app.

    python -m tests.helpers.app_debate run DB             # as the New-debate form's Start does
    python -m tests.helpers.app_debate resume DB ID       # as the Home screen's resume key does

What is not the user's path, and why: the form is not filled in key by key (the harness
starts the debate with :meth:`SymposiumApp.start_debate`, the method the form's Start calls),
the three seats are SmolLM2 with short turns (a debate in well under a minute on this
machine), and the app quits by itself once the debate has ended (a person would press a key)
so that a trial whose kill came too late still ends. Everything else, from the keys through
the Debate screen's worker and ``drive`` to the journal, is the app's own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tui.app import app as app_module
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.protocol_catalog import SPECS

EVINCE = SPECS["evince"]

#: The debate the app mode runs: EVINCE's form defaults, SmolLM2 in every seat, short turns.
VALUES: dict[str, Any] = {**EVINCE.defaults(), "agent-a": "smollm2-135m", "agent-b": "smollm2-135m",
                          "judge": "smollm2-135m", "turn_tokens": "40", "crit_tokens": "40", "max_rounds": "2",
                          "recommendations": "no"}


class HarnessApp(SymposiumApp):
    """The app, told what to run once mounted; it quits when its debate has ended."""

    CSS_PATH = str(Path(app_module.__file__).with_name(SymposiumApp.CSS_PATH))  # Textual reads it beside the subclass

    def __init__(self, db: str, resume_id: str | None) -> None:
        super().__init__(db=db)
        self.resume_id = resume_id
        self._seen_running = False

    def on_mount(self) -> None:  # Textual also runs SymposiumApp.on_mount (the Home screen) first
        self.call_after_refresh(self._begin)

    def _begin(self) -> None:
        if self.resume_id is None:
            self.start_debate(EVINCE, VALUES)
        else:
            self.resume(self.resume_id)
        self.set_interval(0.5, self._quit_when_ended)

    def _quit_when_ended(self) -> None:
        if self.return_code is not None:
            return  # already quitting (a signal's exit status must not be overwritten by this one)
        screen = self.screen
        if not isinstance(screen, DebateScreen):
            return  # a dialog on top (Ctrl-C's question): the person decides
        if screen.running:
            self._seen_running = True
        elif self._seen_running:
            ended = screen.finished is not None and screen.finished.status in ("finished", "stopped")
            self.exit(return_code=0 if ended else 1)


def main(argv: list[str]) -> int:
    command, db, *rest = argv
    app = HarnessApp(db, rest[0] if command == "resume" else None)
    try:
        app.run()
    finally:  # as tui.app.app.run_app: after the app and its workers are gone
        app.journal.close()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
