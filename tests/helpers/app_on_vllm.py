"""The real app, headless under Textual's Pilot, running an EVINCE debate with every seat on one
vLLM entry, in a process of its own (a fresh process, as a person's app is: nothing of vLLM's
or multiprocessing's is started yet); prints one JSON line for the test to read.

    python -m tests.helpers.app_on_vllm DB MODEL_ID

What is not the person's path, and why: the debate is started with
:meth:`SymposiumApp.start_debate` (what the New-debate form's Start calls) with short turns and
one refutation round, so that it ends in minutes on 2 cores; the app is headless (Pilot), where
``sys.stdout``/``sys.stderr`` are Textual's print capture exactly as on a terminal.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from textual.widgets import Static

from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.protocol_catalog import SPECS

EVINCE = SPECS["evince"]

#: Long enough for a compiled engine's start on a busy 2-core machine, then a short debate.
LIMIT_S = 1200


async def run(db: str, model_id: str) -> dict[str, object]:
    app = SymposiumApp(db=db)
    phases: list[str] = []
    values = {**EVINCE.defaults(), "agent-a": model_id, "agent-b": model_id, "judge": model_id,
              "turn_tokens": "40", "crit_tokens": "40", "max_rounds": "1", "recommendations": "no"}
    async with app.run_test(size=(140, 42)) as pilot:
        await pilot.pause()
        app.start_debate(EVINCE, values)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebateScreen)
        deadline = time.monotonic() + LIMIT_S
        while (screen.running or screen.finished is None and screen.view.phase != "failed") and time.monotonic() < deadline:
            phase = str(screen.view.phase)
            if not phases or phases[-1] != phase:
                phases.append(phase)
            await asyncio.sleep(0.2)
        outcome = str(screen.query_one("#outcome", Static).render())
        status = screen.finished.status if screen.finished is not None else None
    app.journal.close()
    return {"status": status, "phase": str(screen.view.phase), "outcome": outcome, "phases": phases,
            "debate_id": screen.debate_id}


def main(argv: list[str]) -> int:
    db, model_id = argv
    print(json.dumps(asyncio.run(run(db, model_id))))
    return 0


if __name__ == "__main__":  # vLLM's engine spawns processes that import the main module: keep the guard
    sys.exit(main(sys.argv[1:]))
