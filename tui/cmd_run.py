"""``symposium run PROTOCOL …``: a whole debate, headless, streamed to the terminal and journalled."""

from __future__ import annotations

import argparse
import asyncio
import csv
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path

from rich.console import Console
from rich.text import Text

from backends.base import Backend
from backends.factory import load_backend
from backends.registry import Registry, load_registry
from protocols import evince
from protocols.agents import Agent
from protocols.contentiousness import SCHEDULES
from protocols.events import Event
from protocols.labels import LabelSet, normalize_label
from store.journal import Journal, new_debate_id

from .errors import UserError
from .printer import EventPrinter
from .runner import drive


def add_parsers(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="run a debate headless (streamed, journalled)")
    protocols = run.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True)

    ev = protocols.add_parser("evince", help="EVINCE: two agents converge on a distribution over class labels")
    ev.add_argument("--case", required=True, help="the information set S (symptoms, facts of the case)")
    ev.add_argument("--labels", default="auto", help="class set C: a file (one label per line, or a CSV with a "
                    "'disease' or 'label' column) for a closed set, or 'auto' for an open set")
    ev.add_argument("--agent-a", required=True, metavar="MODEL")
    ev.add_argument("--agent-b", required=True, metavar="MODEL")
    ev.add_argument("--judge", required=True, metavar="MODEL", help="the CRIT judge (ideally not a debater)")
    ev.add_argument("--schedule", default="exponential", choices=sorted(SCHEDULES), help="contentiousness schedule")
    ev.add_argument("--scoring", default="verbalized", choices=("verbalized", "scored"))
    ev.add_argument("--max-rounds", type=int, default=5)
    ev.add_argument("--top-k", type=int, default=3)
    ev.add_argument("--reference", help="a reference label, to flag a consensus that contradicts it")
    ev.add_argument("--turn-tokens", type=int, default=256, help="reply length limit per turn")
    ev.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    ev.set_defaults(handler=run_evince)


def read_labels(spec: str) -> LabelSet | None:
    """``auto`` → open set; otherwise the labels in a text or CSV file (a closed set)."""
    if spec == "auto":
        return None
    path = Path(spec).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read the labels file ({exc.strerror})") from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        column = next((c for c in ("disease", "label", "class") if rows and c in rows[0]), None)
        if column is None:
            raise UserError(f"{path}: a labels CSV needs a 'disease', 'label' or 'class' column")
        names = [r[column] for r in rows]
    else:
        names = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    unique = {normalize_label(n): n.strip() for n in reversed(names) if n.strip()}  # first spelling wins
    try:
        labels = LabelSet(list(reversed(unique.values())))
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from None
    if len(labels) < 2:
        raise UserError(f"{path}: a closed class set needs at least two labels, found {len(labels)}")
    return labels


async def load_agents(registry: Registry, roles: dict[str, str], stack: AsyncExitStack, *, seed: int | None) -> dict[str, Agent]:
    """One backend per distinct model (weights loaded once), one agent (own cache) per role."""
    backends: dict[str, Backend] = {}
    console = Console(stderr=True, highlight=False)
    for model_id in dict.fromkeys(roles.values()):
        entry = registry.get(model_id)
        console.print(Text(f"loading {entry.name} …", style="dim"))
        backend = await load_backend(entry)
        stack.push_async_callback(backend.aclose)
        backends[model_id] = backend
    return {
        role: Agent(role, backends[model_id], registry.get(model_id).default_options().merged(seed=seed))
        for role, model_id in roles.items()
    }


def run_evince(args: argparse.Namespace) -> int:
    labels = read_labels(args.labels)
    if args.scoring == "scored" and labels is None:
        raise UserError("--scoring scored needs a closed class set: give --labels FILE")

    async def make(stack: AsyncExitStack, debate_id: str) -> AsyncIterator[Event]:
        agents = await load_agents(load_registry(args.models),
                                   {"agent-a": args.agent_a, "agent-b": args.agent_b, "judge": args.judge}, stack, seed=args.seed)
        config = evince.EvinceConfig(
            case=args.case, labels=labels, top_k=args.top_k, scoring=args.scoring, schedule=args.schedule,
            max_rounds=args.max_rounds, reference_label=args.reference, turn_tokens=args.turn_tokens,
        )
        return evince.run(config, evince.EvinceAgents(agents["agent-a"], agents["agent-b"], agents["judge"]), debate_id=debate_id)

    return asyncio.run(_drive(args.db, make))


async def _drive(db: str | None, make: Callable[[AsyncExitStack, str], object]) -> int:
    debate_id = new_debate_id()
    async with AsyncExitStack() as stack:
        events = await make(stack, debate_id)  # type: ignore[misc]
        with Journal(db) as journal:
            final = await drive(events, journal, EventPrinter())
    Console(highlight=False).print(Text(f"journalled as {debate_id}", style="dim"))
    return 0 if final is not None and final.status in ("finished", "stopped") else 1
