"""What every headless ``symposium run …`` shares: loading agents with progress on stderr,
reading a label set, and driving a run into the journal while printing it."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from typing import Any

from rich.console import Console
from rich.text import Text

from backends.registry import Registry
from protocols.agents import Agent
from protocols.events import Event
from protocols.labels import LabelSet
from protocols.params import Profile
from store.journal import Journal, new_debate_id

from tui import launch
from tui.errors import UserError
from tui.headless.printer import EventPrinter
from tui.headless.runner import drive


def read_labels(spec: str) -> LabelSet | None:
    """``--labels``: see :func:`tui.launch.load_labels`; errors become one clear line."""
    try:
        return launch.load_labels(spec)
    except launch.FormError as exc:
        raise UserError(str(exc).removeprefix("labels: ")) from None


def resolve_profile(args: Any, registry: Registry, model_ids: Iterable[str]) -> Profile:
    """``--profile``: as given, or (``auto``) as the models' registry entries say."""
    requested = getattr(args, "profile", "auto")
    return launch.choose_profile(registry, model_ids) if requested == "auto" else requested


async def load_agents(registry: Registry, roles: dict[str, str], stack: AsyncExitStack, *,
                      seed: int | None) -> dict[str, Agent]:
    """:func:`tui.launch.load_agents`, reporting progress and privacy warnings on stderr."""
    console = Console(stderr=True, highlight=False)
    return await launch.load_agents(
        registry, roles, stack, seed=seed,
        on_progress=progress_lines(lambda message: console.print(Text(message, style="dim"))),
        on_warning=lambda message: console.print(Text(f"warning: {message}", style="yellow")),
    )


def progress_lines(show: Callable[[str], None], every_s: float = 30.0) -> Callable[[str], None]:
    """Loading progress for a terminal log: each new stage at once, a stage that goes on (vLLM's
    engine start, minutes on a CPU) every ``every_s`` seconds, not at every one-second tick."""
    last: dict[str, Any] = {"stage": None, "at": 0.0}

    def report(message: str) -> None:
        stage = _SECONDS.sub("", message)
        now = time.monotonic()
        if stage != last["stage"] or now - last["at"] >= every_s:
            last.update(stage=stage, at=now)
            show(message)

    return report


_SECONDS = re.compile(r" … \d+ s$")


async def run_headless(db: str | None,
                       make: Callable[[AsyncExitStack, str], Awaitable[AsyncIterator[Event]]]) -> int:
    """Build a run with ``make(stack, debate_id)``, journal and print it; exit status 0 when it
    finished or was stopped, 1 otherwise."""
    debate_id = new_debate_id()
    async with AsyncExitStack() as stack:
        events = await make(stack, debate_id)
        with Journal(db) as journal:
            final = await drive(events, journal, EventPrinter())
    Console(highlight=False).print(Text(f"journalled as {debate_id}", style="dim"))
    return 0 if final is not None and final.status in ("finished", "stopped") else 1
