"""``symposium resume ID``: continue a debate of any protocol cut off by Ctrl-C or a crash, from its
last finished turn, by replaying its journal (:mod:`protocols.core.replay`)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.text import Text

from backends.registry import load_registry
from protocols.core.moderation import CommandChannel
from protocols.core.replay import ResumeError
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tui.cli.commands import help_for
from tui.cli.seats import StdinSeat, stdin_turn
from tui.errors import UserError
from tui.forms import FormError, PersonSeat, ProtocolSpec
from tui.headless.printer import EventPrinter
from tui.headless.session import loaded_agents
from tui.headless.signals import run_command
from tui.protocol_catalog import resumable


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("resume", help=help_for("resume"))
    p.add_argument("debate_id", help="id or unique prefix (see `symposium history`)")
    p.set_defaults(handler=run_resume)


def _person_seat(spec: ProtocolSpec) -> PersonSeat:
    """The person's seat, typed on stdin as when the debate was started from the command line
    (as the protocol's person role reads it: a line per turn, or a paragraph)."""
    role = spec.definition.person_role()
    if role is not None and role.reads == "paragraph":
        return stdin_turn
    return StdinSeat(Console(stderr=True, highlight=False))


def run_resume(args: argparse.Namespace) -> int:
    return run_command(_resume(args.db, args.models, args.debate_id))


async def _resume(db: str | None, models: str | None, prefix: str) -> int:
    console = Console(highlight=False)
    with Journal(db) as journal:
        queries = Queries(journal)
        debate_id = queries.find_debate(prefix)
        debate = queries.debate(debate_id) if debate_id else None
        if debate is None:
            raise UserError(f"no debate {prefix!r} in the journal (or the prefix is ambiguous); see `symposium history`")
        try:
            spec, roles = resumable(debate)
        except FormError as exc:
            raise UserError(str(exc)) from None
        console.print(Text(f"resuming {debate['id']} ({len(debate['turns'])} finished turns)", style="dim"))
        async with loaded_agents(load_registry(models), roles, console=console) as agents:
            events = spec.resume(debate, agents, CommandChannel(), _person_seat(spec))
            try:
                final = await drive(events, journal, EventPrinter(console))
            except ResumeError as exc:
                raise UserError(str(exc)) from None
    return 0 if final is not None and final.status in ("finished", "stopped") else 1
