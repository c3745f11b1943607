"""Recorded events played through the live Debate screen, as a protocol's run would give them.

:class:`Replayed` is a :class:`~tui.app.runs.DebateRun` with no models: its events are given
by the test (a sample debate), then, while ``held``, whatever the test feeds it with
:meth:`Replayed.feed`. The screen journals and shows them exactly as it does a real run's, so a
test reads what a person would see at that point of a live debate, drawn the same on every
machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from textual.pilot import Pilot

from protocols.core.definition import ProtocolDefinition
from protocols.core.events import DebateStarted, Event
from protocols.registry import BY_NAME
from tui.app.app import SymposiumApp
from tui.app.runs import DebateRun
from tui.app.screens.debate import DebateScreen


class Replayed(DebateRun):
    def __init__(self, events: Iterable[Event], *, definition: ProtocolDefinition | None = None,
                 held: bool = False) -> None:
        self.given = list(events)
        started = next((e for e in self.given if isinstance(e, DebateStarted)), None)
        self.definition = definition or (BY_NAME.get(started.protocol) if started else None)
        self.held = held
        #: Every event given so far has been journalled and shown.
        self.drained = False
        self._more: asyncio.Queue[Event | None] = asyncio.Queue()

    def roles(self) -> Mapping[str, str]:
        return {}

    def feed(self, event: Event | None) -> None:
        """One more event (``None`` ends the run)."""
        self.drained = False
        self._more.put_nowait(event)

    async def _stream(self) -> AsyncIterator[Event]:
        for event in self.given:
            yield event
        while self.held:
            self.drained = True
            event = await self._more.get()
            if event is None:
                break
            yield event
        self.drained = True

    def events(self, agents: Mapping[str, Any], channel: Any, person: Any, registry: Any, edit: Any = None) -> AsyncIterator[Event]:
        return self._stream()


async def replay(app: SymposiumApp, pilot: Pilot, events: Iterable[Event], *, held: bool = False,
                 definition: ProtocolDefinition | None = None, timeout: float = 30) -> DebateScreen:
    """The Debate screen, pushed on ``app``, once it has shown ``events`` (and, unless ``held``,
    once its run has ended)."""
    run = Replayed(events, definition=definition, held=held)
    screen = DebateScreen(run, app.workspace)
    await app.push_screen(screen)
    await until(pilot, lambda: run.drained and (held or not screen.running), timeout, "the events to be shown")
    return screen


async def fed(pilot: Pilot, screen: DebateScreen, event: Event | None, timeout: float = 30) -> None:
    """Feed a held replay one more event and wait until it is shown."""
    run = screen.run
    assert isinstance(run, Replayed)
    run.feed(event)
    await until(pilot, lambda: run.drained, timeout, "the event to be shown")


async def until(pilot: Pilot, condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)
    await pilot.pause()
