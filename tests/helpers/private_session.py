"""A whole app session and a command-line debate, as a user runs them, on scripted models.

    python -m tests.helpers.private_session app CASE_FILE [global options]   # `symposium` on a terminal
    python -m tests.helpers.private_session cli ARGV...                      # `symposium ARGV...`

``tests/guarantees/test_private_files.py`` runs both in a home folder of its own (``HOME`` and
every XDG folder pointed into a fresh tree, no ``SYMPOSIUM_*`` path set, so each file lands where
it lands for a user), then walks every file written. Both go through :func:`tui.cli.parser.main`,
the program's own entry point (logging, the journal's default place, the settings). What is
replaced, and why: the models (``backends.lifecycle.create_backend`` answers with
:func:`tests.helpers.scripted_backends.fits`, a reply that fits every call: the test is about the files the
program writes, not what a tiny model says, and a scripted debate takes seconds), and for the app
the terminal (Pilot, as ``tests/helpers/app_session.py``).

The app session: Home, the New-debate form filled with the case, an EVINCE debate run to its
end, back to Home, an export (the ``e`` key), the theme switched (a settings write), and the
New-debate form opened again: it prints ``@prefilled`` and what the case field then holds,
which must not be the last case.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

SIZE = (140, 42)
DEADLINE_S = 300
#: A one-round EVINCE debate; the form's other fields keep their defaults.
FIELDS = (("max_rounds", "1"), ("turn_tokens", "40"), ("crit_tokens", "40"))
MODEL = "smollm2-135m"  # a registry entry that is ready here; its backend is the scripted one


def _scripted_models() -> None:
    from backends import lifecycle
    from tests.helpers.scripted_backends import answering

    lifecycle.create_backend = answering(delay=0.001, chunk=32)


async def _until(pilot, condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.2)


async def play(app, pilot, case: str) -> None:  # type: ignore[no-untyped-def]  # SymposiumApp, Pilot
    from textual.widgets import DataTable, Input, Select, TextArea

    from tui.app.screens.debate import DebateScreen
    from tui.app.screens.home import HomeScreen
    from tui.app.screens.new_debate import NewDebateScreen

    await pilot.pause()
    assert isinstance(app.screen, HomeScreen), app.screen
    await pilot.press("n")
    form = app.screen
    assert isinstance(form, NewDebateScreen), form
    form.query_one("#field-case", TextArea).text = case
    for role in ("agent-a", "agent-b", "judge"):
        form.query_one(f"#field-{role}", Select).value = MODEL
    for name, value in FIELDS:
        form.query_one(f"#field-{name}", Input).value = value
    await pilot.press("ctrl+s")
    debate = app.screen
    assert isinstance(debate, DebateScreen), f"the debate did not start: {form.query_one('#problem').render()}"
    await _until(pilot, lambda: debate.finished is not None, "the debate to finish")
    print(f"@debate {debate.debate_id} {debate.finished.status}", flush=True)
    await _until(pilot, lambda: not debate.running, "the debate's worker to end")
    app.pop_screen()
    await _until(pilot, lambda: isinstance(app.screen, HomeScreen), "Home")
    home = app.screen
    await pilot.pause()
    home.query_one("#debates", DataTable).focus()
    await pilot.press("e", "down", "enter", "ctrl+s")  # the export the user asked for: the full text, saved
    await pilot.press("ctrl+t")  # the theme: a settings write
    await pilot.press("n")
    again = app.screen
    assert isinstance(again, NewDebateScreen), again
    await pilot.pause()
    print("@prefilled " + json.dumps(again.query_one("#field-case", TextArea).text), flush=True)
    app.pop_screen()
    await pilot.pause()


def main(argv: Sequence[str]) -> int:
    from tui.app.app import SymposiumApp
    from tui.cli import parser

    _scripted_models()
    mode, *rest = argv
    if mode == "cli":
        return parser.main(list(rest))
    case = Path(rest[0]).read_text(encoding="utf-8")

    def run_under_pilot(self: SymposiumApp, *args: object, **kwargs: object) -> None:
        async def session() -> None:
            async with self.run_test(size=SIZE) as pilot:
                await play(self, pilot, case)

        asyncio.run(session())

    SymposiumApp.run = run_under_pilot  # type: ignore[method-assign]
    sys.stdout.isatty = lambda: True  # type: ignore[method-assign]  # `symposium` opens the app on a terminal
    return parser.main(list(rest[1:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
