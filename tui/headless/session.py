"""What every headless ``symposium run …`` shares: loading agents with progress on stderr,
reading a label set, and driving a run into the journal while printing it.

A command uses these in order, each call going down and returning, never back up into the
command::

    async with loaded_agents(registry, roles, seed=args.seed) as agents:   # engines closed on exit
        debate_id = new_debate_id()
        return await run_headless(args.db, debate_id, evince.run(config, …, debate_id=debate_id))
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

from rich.console import Console
from rich.text import Text

from backends.lifecycle import Engines, LoadEvent, Loading, PrivacyWarning, StillLoading
from backends.registry import Registry
from protocols.core.agents import Agent, agents_for
from protocols.core.events import Event
from protocols.core.params import PROFILES, Profile
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from tui.errors import UserError
from tui.forms import FormError, choose_profile, load_labels
from tui.headless.printer import EventPrinter


def read_labels(spec: str) -> LabelSet | None:
    """``--labels``: see :func:`tui.forms.load_labels`; errors become one clear line."""
    try:
        return load_labels(spec)
    except FormError as exc:
        raise UserError(str(exc).removeprefix("labels: ")) from None


def resolve_profile(args: Any, registry: Registry, model_ids: Iterable[str]) -> Profile:
    """``--profile``: as given, or (``auto``) as the models' registry entries say."""
    requested = getattr(args, "profile", "auto")
    if requested == "auto":
        return choose_profile(registry, model_ids)
    if requested not in PROFILES:  # argparse's choices keep it out; a caller passing args by hand may not
        raise UserError(f"--profile: {requested!r} is not one of auto, {', '.join(PROFILES)}")
    return cast(Profile, requested)


#: A load still under way is printed once per this many seconds (a terminal is not a status line).
STILL_LOADING_EVERY_S = 30


def print_load_events(console: Console) -> Callable[[LoadEvent], None]:
    """An ``on_event`` for :class:`~backends.lifecycle.Engines` that prints each model starting
    to load (dim), each new stage its backend reports at once (vLLM: loading the tokenizer,
    starting the engine), a load still under way every half minute (a vLLM engine's start takes
    minutes on a CPU), and any privacy warning (yellow) on ``console``."""
    shown: dict[str, Any] = {"every": 0, "stage": None}

    def show(event: LoadEvent) -> None:
        if isinstance(event, Loading):
            shown.update(every=0, stage=None)
            console.print(Text(event.message, style="dim"))
        elif isinstance(event, StillLoading) and (event.stage != shown["stage"]
                                                  or event.seconds // STILL_LOADING_EVERY_S > shown["every"]):
            shown.update(every=int(event.seconds // STILL_LOADING_EVERY_S), stage=event.stage)
            console.print(Text(event.message, style="dim"))
        elif isinstance(event, PrivacyWarning):
            console.print(Text(f"warning: {event.message}", style="yellow"))

    return show


@asynccontextmanager
async def loaded_agents(registry: Registry, roles: Mapping[str, str], *, seed: int | None = None,
                        console: Console | None = None) -> AsyncIterator[dict[str, Agent]]:
    """The agents of ``roles`` (role → model id), each distinct model loaded once with progress
    on ``console`` (stderr by default); every model is closed when the block ends, however."""
    async with Engines(registry, on_event=print_load_events(console or Console(stderr=True, highlight=False))) as engines:
        yield agents_for(roles, await engines.load(roles.values()), seed=seed)


async def run_headless(db: str | None, debate_id: str, events: AsyncIterator[Event]) -> int:
    """Journal and print the run ``events`` (whose debate is ``debate_id``); exit status 0 when
    it finished or was stopped, 1 otherwise."""
    stderr = Console(stderr=True, highlight=False)
    with Journal(db) as journal:
        # A model file's first hashing (provenance) reports on stderr, as loading does.
        final = await drive(events, journal, EventPrinter(),
                            progress=lambda message: stderr.print(Text(message, style="dim")))
    Console(highlight=False).print(Text(f"journalled as {debate_id}", style="dim"))
    return 0 if final is not None and final.status in ("finished", "stopped") else 1
