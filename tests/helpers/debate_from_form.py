"""Debates started from the New-debate form and waited on as a person would, for app tests.

:func:`start_from_form` fills a protocol's form and starts it; :func:`until` waits for a
condition while answering the person's seat (and keeping an agenda offered for editing), and a
failure says what the journal holds of the debate. :class:`Gate` is what every scripted reply
streams through, so a test decides where a debate stands when a key is pressed by the debate's
own course. :func:`answer` is the scripted models' reply
(tests/helpers/scripted_backends.py's ``fits``) tuned so that no protocol ends by itself before a
moderator's command is seen; tests/app/conftest.py's ``scripted_models`` fixture serves it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from textual.pilot import Pilot
from textual.widgets import Button, Input, Select, TextArea

from protocols.core.roles import SIDE_PANEL
from store.queries import Queries
from tests.helpers.form import fill_examples
from tests.helpers.pilot import wait_for
from tests.helpers.scripted_backends import fits
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import EditDialog, PersonDialog
from tui.app.screens.new_debate import NewDebateScreen

_ROUNDS = itertools.count()


def answer(messages: Any, schema: dict[str, Any] | None) -> str:
    """:func:`fits`, except where a protocol would end by itself before the commands could be
    seen: the conference's judge finds more to debate (its stage runs to the round cap), and
    D3's judge scores unevenly (a stable gap would end the debate before a skip is heard)."""
    props = (schema or {}).get("properties", {})
    if "MORE DEBATE" in props.get("verdict", {}).get("enum", ()):
        return '{"verdict": "MORE DEBATE"}'
    if "score_1" in props and "feedback_1" in props:
        return json.dumps({"score_1": 10 + 5 * (next(_ROUNDS) % 2), "feedback_1": "more sources", "score_2": 10, "feedback_2": "clearer"})
    return fits(messages, schema)


class Gate(asyncio.Event):
    """The gate every scripted reply's chunks wait at (set: open), which can also close itself.

    :meth:`hold_when` closes it from inside the debate's own flow: the condition is looked at
    before each chunk streams, so the debate stops in the first reply after the condition came
    true, wherever the test happens to be. (Closed by the test when it saw the condition, the
    debate ran on as far as a loaded machine let it meanwhile: past its last checkpoint, where a
    skip comes too late.) ``waiting``: how many chunks wait at it now."""

    def __init__(self) -> None:
        super().__init__()
        self.set()
        self.waiting = 0
        self._until: Callable[[], bool] | None = None

    def hold_when(self, condition: Callable[[], bool]) -> None:
        """Close at the next chunk that streams once ``condition()`` holds (and open now)."""
        self._until = condition
        self.set()

    async def wait(self) -> Literal[True]:
        if self._until is not None and self._until():
            self._until = None
            self.clear()
        self.waiting += 1
        try:
            return await super().wait()
        finally:
            self.waiting -= 1

    @property
    def holding(self) -> bool:
        """A reply waits at the closed gate: the debate is held mid-reply, short of its end."""
        return not self.is_set() and self.waiting > 0


async def start_from_form(pilot: Pilot, app: SymposiumApp, protocol: str, values: Mapping[str, str]) -> DebateScreen:
    """Fill the protocol's form with its examples, then ``values`` (its sample's ``moderated``),
    and start it with no side-panel analyzer."""
    await app.push_screen(NewDebateScreen(app.workspace, protocol))
    form = app.screen
    assert isinstance(form, NewDebateScreen)
    fill_examples(form)  # a new form is blank (the examples are placeholders)
    for name, value in values.items():
        field = form.query_one(f"#field-{name}")
        if isinstance(field, TextArea):
            field.text = value
        else:
            form.query_one(f"#field-{name}", Input).value = value
    form.query_one(f"#field-{SIDE_PANEL}", Select).value = "none"
    await pilot.press("ctrl+s")
    started = [s for s in app.screen_stack if isinstance(s, DebateScreen)]  # the seat may already ask, on top
    assert started, f"{protocol} did not start: {form.query_one('#problem').render()}"
    return started[-1]


async def until(pilot: Pilot, app: SymposiumApp, condition: Any, what: str, timeout: float = 120,
                 running: DebateScreen | None = None, late: type[AssertionError] = AssertionError) -> None:
    """Wait for ``condition``, answering the person's seat whenever it asks (and going on with
    a proposal offered for editing); with ``running``,
    fail at once when that debate ends first (the condition can no longer come true). A
    failure says what the journal holds of the debate."""
    deadline = time.monotonic() + timeout
    while not condition():
        if isinstance(app.screen, EditDialog):  # SocraSynth's agreed agenda, offered for editing: as agreed
            offered = app.screen
            await wait_for(pilot, lambda: bool(offered.query("#keep")), 30, "the agenda dialog to compose")  # noqa: B023
            offered.query_one("#keep", Button).press()  # as a click would, without needing it laid out yet
            await wait_for(pilot, lambda: app.screen is not offered, 30, "the agenda dialog to close")  # noqa: B023
        elif isinstance(app.screen, PersonDialog):
            dialog = app.screen
            await wait_for(pilot, lambda: bool(dialog.query("#words")), 30, "the person's dialog")  # noqa: B023
            dialog.query_one("#words", Input).value = "I agree with the last speaker."
            await pilot.press("enter")
        elif running is not None and not running.running:
            raise AssertionError(f"the debate ended before {what}: {story(app, running)}")
        elif time.monotonic() > deadline:
            raise late(f"timed out waiting for {what}" + (f": {story(app, running)}" if running else ""))
        await pilot.pause(0.1)


def story(app: SymposiumApp, debate: DebateScreen) -> str:
    """What the journal holds of ``debate`` so far, for a failure message."""
    stored = Queries(app.journal).debate(debate.debate_id or "") or {}
    turns = [(t["role"], t["round"], t["kind"]) for t in stored.get("turns", [])]
    return f"turns {turns}; moderator {[m['kind'] for m in stored.get('moderator_events', [])]}; {stored.get('stop_reason')}"
