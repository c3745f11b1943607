"""``symposium run agreement …``: a staged decision conference with an agreement judge (seed 000),
headless, streamed to the terminal and journalled; ends with a table of the stages."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backends.registry import load_registry
from protocols import conference
from protocols.events import DebateFinished, Event
from store.journal import new_debate_id

from tui.headless.session import loaded_agents, resolve_profile, run_headless
from tui.cli.params import add_param_flags, build_config
from tui.errors import UserError
from tui.sanitize import terminal_safe
from tui.cli.textarg import text_arg
from tui.headless.signals import run_command


def add_parser(protocols: argparse._SubParsersAction) -> None:
    p = protocols.add_parser("agreement", help="decision conference: stages advance when an agreement judge says AGREEMENT")
    p.add_argument("--issue", required=True, help="the issue the conference decides on: text, or @FILE")
    p.add_argument("--topic", action="append", dest="topics", metavar="TOPIC",
                   help="a stage topic (repeat, in order); default: issue discussion, model building, results exploration")
    p.add_argument("--participant", action="append", dest="participants", required=True, metavar="MODEL",
                   help="a participant's model (repeat: two or more)")
    p.add_argument("--judge", required=True, metavar="MODEL", help="the agreement judge")
    p.add_argument("--evaluator", metavar="MODEL", help="the 10-factor evaluation agent (default: the judge's model)")
    p.add_argument("--no-evaluation", action="store_true", help="skip the per-stage evaluation")
    p.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    add_param_flags(p, conference.ConferenceConfig)
    p.set_defaults(handler=run_agreement)


def run_agreement(args: argparse.Namespace) -> int:
    if len(args.participants) < 2:
        raise UserError("a conference needs two or more participants: repeat --participant MODEL")
    issue = text_arg(args.issue, "issue")
    roles = {f"participant-{i}": model for i, model in enumerate(args.participants, start=1)}
    roles[conference.JUDGE] = args.judge
    if not args.no_evaluation:
        roles[conference.EVALUATOR] = args.evaluator or args.judge

    registry = load_registry(args.models)
    config = build_config(conference.ConferenceConfig, args, resolve_profile(args, registry, roles.values()),
                          issue=issue, topics=args.topics)

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            debate_id = new_debate_id()
            participants = [agents[r] for r in roles if r.startswith("participant-")]
            team = conference.ConferenceAgents(participants, agents[conference.JUDGE], agents.get(conference.EVALUATOR))
            events = _with_report(conference.run(config, team, debate_id=debate_id), Console(highlight=False))
            return await run_headless(args.db, debate_id, events)

    return run_command(run())


def stages_table(stages: list[dict[str, Any]]) -> Table:
    """One row per stage: rounds, the judge's verdicts, what closed it, the evaluation's mean."""
    table = Table(title="Stages")
    for name in ("stage", "rounds", "verdicts", "closed by", "evaluation"):
        table.add_column(name)
    for s in stages:
        mean = (s.get("evaluation") or {}).get("mean")
        table.add_row(Text(terminal_safe(f"{s['stage']}. {s['name']}")), Text(str(s["rounds"])),
                      Text(", ".join(s["verdicts"]) or "—"), Text(s["closed_by"] or "not reached"),
                      Text("—" if mean is None else f"{mean:.1f} / 10"))
    return table


async def _with_report(events: AsyncIterator[Event], console: Console) -> AsyncIterator[Event]:
    """The run's events, then (once the end is journalled and shown) the stages table."""
    try:
        async for event in events:
            yield event
            if isinstance(event, DebateFinished) and event.outcome.get("stages"):
                console.print(stages_table(event.outcome["stages"]))
    finally:
        await events.aclose()  # type: ignore[attr-defined]
