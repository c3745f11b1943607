"""``symposium run d3-more|d3-samre …``: D3 judges two answers to one question (seed 003),
headless, streamed and journalled; ends with the verdict, the swap audit and the token budget."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backends.registry import load_registry
from protocols import d3
from protocols.params import Profile
from store.journal import Journal, new_debate_id
from store.queries import Queries

from tui.headless.session import loaded_agents, resolve_profile, run_headless
from tui.cli.params import add_param_flags, build_config
from tui.errors import UserError
from tui.sanitize import terminal_safe
from tui.cli.textarg import text_arg
from tui.headless.signals import run_command

_HELP = {
    "more": "D3-MORE: k advocates per answer in parallel, consolidated, judged in one round, then a jury",
    "samre": "D3-SAMRE: one advocate per answer over rounds with judge feedback, budgeted stopping, then a jury",
}


#: Parameters a variant has no use for: the sub-command sets the variant itself.
_SKIP = {"more": ("variant", "max_rounds", "window", "epsilon"), "samre": ("variant", "k")}


def add_parser(protocols: argparse._SubParsersAction) -> None:
    for variant in ("more", "samre"):
        p = protocols.add_parser(f"d3-{variant}", help=_HELP[variant])
        p.add_argument("--question", required=True, help="the question: text, or @FILE")
        p.add_argument("--answer-a", required=True, help="the first answer: text, or @FILE")
        p.add_argument("--answer-b", required=True, help="the second answer: text, or @FILE")
        p.add_argument("--advocate", required=True, metavar="MODEL", help="the advocates' model (each advocate its own session)")
        p.add_argument("--judge", required=True, metavar="MODEL")
        p.add_argument("--jurors", metavar="M1,M2,…",
                       help="juror models, given the personas in turn (default: the judge's model)")
        p.add_argument("--budget", metavar="TOKENS|ROLE=TOKENS,…",
                       help="token budget of the debate: a total, and/or advocate=N, judge=N")
        p.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
        add_param_flags(p, d3.D3Config, skip=_SKIP[variant])
        p.set_defaults(handler=run_d3, variant=variant)


def _config(args: argparse.Namespace, profile: Profile) -> d3.D3Config:
    try:
        budget = d3.parse_budget(args.budget) if args.budget else d3.Budget()
    except ValueError as exc:
        raise UserError(f"--budget: {exc}") from None
    return build_config(d3.D3Config, args, profile, question=text_arg(args.question, "question"),
                        answer_a=text_arg(args.answer_a, "answer A"), answer_b=text_arg(args.answer_b, "answer B"),
                        variant=args.variant, budget=budget)


def run_d3(args: argparse.Namespace) -> int:
    jurors = [m.strip() for m in (args.jurors or args.judge).split(",") if m.strip()]
    if not jurors:
        raise UserError("--jurors needs at least one model")
    registry = load_registry(args.models)
    config = _config(args, resolve_profile(args, registry, [args.advocate, args.judge, *jurors]))
    roles = {"advocate": args.advocate, "judge": args.judge} | {f"juror-{i}": m for i, m in enumerate(jurors, start=1)}
    debate_id = new_debate_id()

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            team = d3.D3Agents(agents["advocate"], agents["judge"], [agents[f"juror-{i}"] for i in range(1, len(jurors) + 1)])
            return await run_headless(args.db, debate_id, d3.run(config, team, debate_id=debate_id))

    code = run_command(run())
    with Journal(args.db) as journal:
        debate = Queries(journal).debate(debate_id)
    if debate and debate.get("outcome"):
        print_verdict(debate["outcome"])
    return code


def print_verdict(outcome: dict[str, Any], console: Console | None = None) -> None:
    """Each pass's verdict and tally, the swap audit, and tokens per role against the budget."""
    console = console or Console(highlight=False)
    for p in outcome["passes"]:
        t = p["tally"]
        console.print(Text(f"{p['order']}: verdict {p['verdict']} ({p['decided_by']}; votes A {t['A']}, B {t['B']}, "
                           f"abstained {t['abstain']}; judge's cumulative A {p['cumulative']['A']:g}, "
                           f"B {p['cumulative']['B']:g}) · stopped: {terminal_safe(p['stop_reason'])}", style="bold"))
        budget = Table(title=Text(f"Tokens · {p['order']}"))
        for column in ("role", "used", "limit"):
            budget.add_column(column, justify="right" if column != "role" else "left")
        for kind, used in p["budget"]["used"].items():
            limit = p["budget"]["limits"].get(kind)
            budget.add_row(Text(kind), Text(str(used)), Text("—" if limit is None else str(limit)))
        console.print(budget)
    audit = outcome.get("swap_audit")
    if audit:
        held = "held" if audit["held"] else "did NOT hold"
        console.print(Text(f"swap audit: the verdict {held} (A/B → {audit['verdicts']['A/B']}, B/A → {audit['verdicts']['B/A']})",
                           style="bold"))
