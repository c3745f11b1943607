"""The Textual app started the way a user starts it (``symposium`` on a terminal), driven by Pilot.

    python -m tests.helpers.app_session [global options such as --db]

``symposium`` with no command goes through :func:`tui.cli.parser.main` (which holds the
libraries offline) to ``run_app``, which builds the app on the user's journal and registry.
Here the one thing replaced is the terminal: ``SymposiumApp.run`` runs the app under Textual's
Pilot (its headless driver) and plays a short session — home, the new-debate form, a one-round
EVINCE debate between the bundled SmolLM2 models to its end — then quits. The privacy guard
(``tests/helpers/guarded.py``) and the network wall (``tests/helpers/netwall.py``) run this
module to see everything the app does, ``on_mount`` included.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence

#: The form's fields for a short debate on the bundled model (the small profile's spirit).
FIELDS = (("max_rounds", "0"), ("turn_tokens", "24"), ("crit_tokens", "24"))  # the opening round only
SIZE = (140, 42)
DEADLINE_S = 600


async def play(app, pilot) -> None:  # type: ignore[no-untyped-def]  # SymposiumApp, Pilot
    """Home, then a new EVINCE debate (A, B and the judge on SmolLM2) run to its end."""
    from textual.widgets import Input, Select

    from tests.helpers.form import fill_examples
    from tui.app.screens.debate import DebateScreen
    from tui.app.screens.home import HomeScreen

    await pilot.pause()
    assert isinstance(app.screen, HomeScreen), app.screen
    await pilot.press("n")
    form = app.screen
    fill_examples(form)  # the case: a new form is blank, its example only a placeholder
    for role in ("agent-a", "agent-b", "judge"):
        form.query_one(f"#field-{role}", Select).value = "smollm2-135m"
    for name, value in FIELDS:
        form.query_one(f"#field-{name}", Input).value = value
    await pilot.press("ctrl+s")
    debate = app.screen
    assert isinstance(debate, DebateScreen), debate
    deadline = time.monotonic() + DEADLINE_S
    while debate.finished is None and time.monotonic() < deadline:
        await pilot.pause(0.5)
    assert debate.finished is not None, "the debate did not finish in time"
    print(f"app debate {debate.debate_id}: {debate.finished.status} ({debate.finished.stop_reason})", flush=True)


def main(argv: Sequence[str]) -> int:
    """``symposium`` with ``argv`` (global options only), the app played under Pilot."""
    from tui.app.app import SymposiumApp
    from tui.cli import parser

    def run_under_pilot(self: SymposiumApp, *args: object, **kwargs: object) -> None:
        async def session() -> None:
            async with self.run_test(size=SIZE) as pilot:
                await play(self, pilot)

        asyncio.run(session())

    SymposiumApp.run = run_under_pilot  # type: ignore[method-assign]
    sys.stdout.isatty = lambda: True  # type: ignore[method-assign]  # `symposium` opens the app on a terminal
    return parser.main(list(argv))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
