"""``symposium run d3-more|d3-samre …``: D3 judges two answers to one question (seed 003),
headless, streamed and journalled; ends with the verdict, the swap audit and the token budget."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backends.registry import load_registry
from protocols import d3
from protocols.events import Event
from store.journal import Journal
from store.queries import Queries

from .headless import load_agents, run_headless
from .errors import UserError
from .sanitize import terminal_safe
from .textarg import text_arg

_HELP = {
    "more": "D3-MORE: k advocates per answer in parallel, consolidated, judged in one round, then a jury",
    "samre": "D3-SAMRE: one advocate per answer over rounds with judge feedback, budgeted stopping, then a jury",
}


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
        p.add_argument("--jury-size", type=int, default=5, help="jurors (at most 5 with personas)")
        p.add_argument("--no-personas", action="store_true", help="impartial jurors instead of appendix D.3's personas")
        if variant == "more":
            p.add_argument("--k", type=int, default=3, help="advocates per answer")
        else:
            p.add_argument("--max-rounds", type=int, default=5, help="the round budget")
            p.add_argument("--window", type=int, default=2, help="rounds the score gap must stay stable")
            p.add_argument("--epsilon", type=float, default=1.0, help="how far the gap may move and still be stable (points)")
        p.add_argument("--budget", metavar="TOKENS|ROLE=TOKENS,…",
                       help="token budget of the debate: a total, and/or advocate=N, judge=N")
        p.add_argument("--swap-audit", action="store_true",
                       help="evaluate again with the answers swapped; report whether the verdict held")
        p.add_argument("--turn-tokens", type=int, default=d3.D3Config.turn_tokens, help="reply length limit per advocate turn")
        p.add_argument("--judge-tokens", type=int, default=d3.D3Config.judge_tokens)
        p.add_argument("--vote-tokens", type=int, default=d3.D3Config.vote_tokens)
        p.add_argument("--model-a", default="", metavar="MODEL", help="which model wrote answer A (never shown to the "
                       "models; for the self-enhancement audit, section 4.3)")
        p.add_argument("--model-b", default="", metavar="MODEL", help="which model wrote answer B")
        p.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
        p.set_defaults(handler=run_d3, variant=variant)


def _config(args: argparse.Namespace) -> d3.D3Config:
    try:
        budget = d3.parse_budget(args.budget) if args.budget else d3.Budget()
        extra: dict[str, Any] = ({"k": args.k} if args.variant == "more"
                                 else {"max_rounds": args.max_rounds, "window": args.window, "epsilon": args.epsilon})
        return d3.D3Config(
            question=text_arg(args.question, "question"), answer_a=text_arg(args.answer_a, "answer A"),
            answer_b=text_arg(args.answer_b, "answer B"), variant=args.variant, budget=budget, swap_audit=args.swap_audit,
            jury_size=args.jury_size, personas=not args.no_personas, turn_tokens=args.turn_tokens,
            judge_tokens=args.judge_tokens, vote_tokens=args.vote_tokens, model_a=args.model_a, model_b=args.model_b, **extra)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def run_d3(args: argparse.Namespace) -> int:
    config = _config(args)
    jurors = [m.strip() for m in (args.jurors or args.judge).split(",") if m.strip()]
    if not jurors:
        raise UserError("--jurors needs at least one model")
    started: list[str] = []

    async def make(stack: AsyncExitStack, debate_id: str) -> AsyncIterator[Event]:
        started.append(debate_id)
        roles = {"advocate": args.advocate, "judge": args.judge} | {f"juror-{i}": m for i, m in enumerate(jurors, start=1)}
        agents = await load_agents(load_registry(args.models), roles, stack, seed=args.seed)
        team = d3.D3Agents(agents["advocate"], agents["judge"], [agents[f"juror-{i}"] for i in range(1, len(jurors) + 1)])
        return d3.run(config, team, debate_id=debate_id)

    code = asyncio.run(run_headless(args.db, make))
    with Journal(args.db) as journal:
        debate = Queries(journal).debate(started[0]) if started else None
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
