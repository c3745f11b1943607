"""``symposium run deliberation …``: moderated deliberation with the person as a deliberator
(seed 002), headless, streamed to the terminal and journalled.

The person's seat, headless: ``--human-script FILE`` gives one turn per line (a blank line
passes, ``/end`` or the end of the file ends the deliberation: a script that runs out has
nothing more to say); without it each turn is a line read from stdin (an empty line passes,
``/end`` or end of input ends). The analyzer's panel is printed whenever it is updated.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console
from rich.text import Text

from backends.registry import load_registry
from protocols import deliberation
from protocols.analyzer import Analysis
from protocols.events import Event, JudgementMade
from store.journal import new_debate_id

from tui.headless.session import loaded_agents, resolve_profile, run_headless
from tui.cli.params import add_param_flags, build_config
from tui.errors import UserError
from tui.sanitize import terminal_safe
from tui.cli.textarg import read_text, text_arg
from tui.headless.signals import run_command

END = "/end"


def add_parser(protocols: argparse._SubParsersAction) -> None:
    p = protocols.add_parser("deliberation", help="moderated deliberation: a moderator, two or more models and you")
    p.add_argument("--topic", required=True, help="what to deliberate (your opening turn): text, or @FILE")
    p.add_argument("--moderator", required=True, metavar="MODEL")
    p.add_argument("--deliberator", action="append", dest="deliberators", required=True, metavar="MODEL",
                   help="a deliberator's model (repeat: two or more)")
    p.add_argument("--analyzer", metavar="MODEL", help="the analyzer (default: the moderator's model)")
    p.add_argument("--no-analysis", action="store_true", help="no analyzer panel")
    p.add_argument("--human-script", metavar="FILE", help="your turns, one per line (blank: pass; /end or end of file: finish)")
    p.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    add_param_flags(p, deliberation.DeliberationConfig)
    p.set_defaults(handler=run_deliberation)


class ScriptSeat:
    """The person's turns from a file: one line per turn; blank passes; ``/end`` or EOF ends."""

    def __init__(self, path: str | Path, console: Console | None = None) -> None:
        self.lines = read_text(str(path), "script of your turns").splitlines()
        self.console = console or Console(stderr=True, highlight=False)

    async def __call__(self, prompt: str) -> str | None:
        if not self.lines:
            self.console.print(Text("  (the script has run out: you end the deliberation)", style="dim"))
            return None
        line = self.lines.pop(0)
        return None if line.strip() == END else line


class StdinSeat:
    """The person's turns typed on stdin: one line per turn; empty passes; ``/end`` or EOF ends."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)

    async def __call__(self, prompt: str) -> str | None:
        self.console.print(Text(f"{terminal_safe(prompt)} (Enter: pass, {END}: finish)", style="bold green"))
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or line.strip() == END:
            return None
        return line.rstrip("\n")


async def _with_panel(events: AsyncIterator[Event], console: Console) -> AsyncIterator[Event]:
    """The run's events, and after each analysis (once it is journalled and shown) its panel."""
    try:
        async for event in events:
            yield event
            if isinstance(event, JudgementMade) and event.kind == "analysis":
                panel = Analysis.from_json(event.reasons).render()
                console.print(Text(terminal_safe(panel), style="dim"))
    finally:
        await events.aclose()  # type: ignore[attr-defined]


def run_deliberation(args: argparse.Namespace) -> int:
    if len(args.deliberators) < 2:
        raise UserError("a deliberation needs two or more deliberators: repeat --deliberator MODEL")
    topic = text_arg(args.topic, "topic")
    seat = ScriptSeat(args.human_script) if args.human_script else StdinSeat()
    roles = {deliberation.MODERATOR: args.moderator}
    roles |= {f"deliberator-{i}": model for i, model in enumerate(args.deliberators, start=1)}
    if not args.no_analysis:
        roles["analyzer"] = args.analyzer or args.moderator

    registry = load_registry(args.models)
    config = build_config(deliberation.DeliberationConfig, args, resolve_profile(args, registry, roles.values()),
                          topic=topic)

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            debate_id = new_debate_id()
            team = deliberation.DeliberationAgents(agents[deliberation.MODERATOR],
                                                   [agents[r] for r in roles if r.startswith("deliberator-")], agents.get("analyzer"))
            events = _with_panel(deliberation.run(config, team, seat, debate_id=debate_id), Console(highlight=False))
            return await run_headless(args.db, debate_id, events)

    return run_command(run())
