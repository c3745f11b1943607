"""``symposium run PROTOCOL …``: a whole debate, headless, streamed to the terminal and journalled."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from backends.registry import load_registry
from protocols import evince, socrasynth
from protocols.contentiousness import SCHEDULES
from protocols.events import Event

from . import run_agreement, run_d3, run_deliberation, run_humanloop
from .errors import UserError
from .headless import load_agents, read_labels, run_headless


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
    ev.add_argument("--schedule", default=evince.EvinceConfig.schedule, choices=sorted(SCHEDULES), help="contentiousness schedule")
    ev.add_argument("--scoring", default="verbalized", choices=("verbalized", "scored"))
    ev.add_argument("--max-rounds", type=int, default=5)
    ev.add_argument("--top-k", type=int, default=3)
    ev.add_argument("--reference", help="a reference label, to flag a consensus that contradicts it")
    ev.add_argument("--turn-tokens", type=int, default=evince.EvinceConfig.turn_tokens, help="reply length limit per turn")
    ev.add_argument("--crit-tokens", type=int, default=evince.EvinceConfig.crit_tokens, help="reply length limit of the CRIT judge")
    ev.add_argument("--agreement-judge", action="store_true",
                    help="also ask the judge AGREEMENT / MORE DEBATE after each round (an extra stopping signal)")
    ev.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    ev.set_defaults(handler=run_evince)

    ss = protocols.add_parser("socrasynth", help="SocraSynth: two agents debate a subject for and against; judges score them with CRIT")
    ss.add_argument("--subject", required=True, help="the debate subject, e.g. a policy question")
    ss.add_argument("--agent-a", required=True, metavar="MODEL", help="argues for the subject (against with --swap-stances)")
    ss.add_argument("--agent-b", required=True, metavar="MODEL", help="argues against the subject (for with --swap-stances)")
    ss.add_argument("--judges", required=True, metavar="M1,M2", help="the judge panel, comma-separated (ideally not the debaters' models)")
    ss.add_argument("--delta", type=float, default=1.2, help="δ ≥ 1: contentiousness is divided by δ each round (Table 6.2)")
    ss.add_argument("--kappa-a", type=float, default=0.9, help="agent A's starting contentiousness (0-1)")
    ss.add_argument("--kappa-b", type=float, default=0.9, help="agent B's starting contentiousness (0-1)")
    ss.add_argument("--temperature-a", type=float, help="agent A's sampling temperature (default: its model's)")
    ss.add_argument("--temperature-b", type=float, help="agent B's sampling temperature (default: its model's)")
    ss.add_argument("--swap-stances", action="store_true", help="agent A argues against the subject, agent B for it")
    ss.add_argument("--subtopics", type=int, default=3, help="how many subtopics the agents agree on")
    ss.add_argument("--agenda-file", metavar="FILE", help="replace the agreed subtopics before the debate: lines "
                    "'Title: description', or a JSON list of {\"title\", \"description\"}")
    ss.add_argument("--max-rounds", type=int, default=4, help="safety cap on refutation rounds")
    ss.add_argument("--mode", choices=("proposal", "diagnosis"), default="proposal",
                    help="conciliatory output: a joint proposal with pros and cons, or joint diagnostic recommendations")
    ss.add_argument("--conciliatory", type=float, default=0.3, help="contentiousness of the conciliatory stage (0.1-0.3)")
    ss.add_argument("--qa-baseline", action="store_true", help="also ask one model the subject as a single Q&A; judges compare")
    ss.add_argument("--qa-model", metavar="MODEL", help="the Q&A baseline's model (default: agent A's; implies --qa-baseline)")
    ss.add_argument("--turn-tokens", type=int, default=256, help="reply length limit per turn")
    ss.add_argument("--crit-tokens", type=int, default=320, help="reply length limit per judge call")
    ss.add_argument("--agreement-judge", action="store_true",
                    help="the first judge also says AGREEMENT / MORE DEBATE after each round (an extra stopping signal)")
    ss.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    ss.set_defaults(handler=run_socrasynth)

    run_agreement.add_parser(protocols)
    run_deliberation.add_parser(protocols)
    run_humanloop.add_parser(protocols)
    run_d3.add_parser(protocols)


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
            crit_tokens=args.crit_tokens, agreement_judge=args.agreement_judge,
        )
        return evince.run(config, evince.EvinceAgents(agents["agent-a"], agents["agent-b"], agents["judge"]), debate_id=debate_id)

    return asyncio.run(run_headless(args.db, make))


def read_agenda(spec: str) -> list[socrasynth.Subtopic]:
    """The moderator's agenda from a file: one ``Title: description`` per line (``#`` starts a
    comment), or a JSON list of ``{"title": …, "description": …}``."""
    path = Path(spec).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read the agenda file ({exc.strerror})") from None
    try:
        if text.lstrip().startswith("["):
            items = json.loads(text)
        else:
            lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
            items = [dict(zip(("title", "description"), (part.strip() for part in line.split(":", 1)))) for line in lines]
        agenda = [socrasynth.Subtopic.model_validate(item) for item in items]
    except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError are ValueErrors
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise UserError(f"{path}: not an agenda ({reason})") from None
    if not 1 <= len(agenda) <= socrasynth.MAX_SUBTOPICS:
        raise UserError(f"{path}: an agenda needs 1 to {socrasynth.MAX_SUBTOPICS} subtopics, found {len(agenda)}")
    return agenda


def run_socrasynth(args: argparse.Namespace) -> int:
    judges = [m.strip() for m in args.judges.split(",") if m.strip()]
    if not judges:
        raise UserError("--judges needs at least one model")
    editor: socrasynth.AgendaEditor | None = None
    if args.agenda_file:
        replacement = read_agenda(args.agenda_file)

        async def editor(_agreed: list[socrasynth.Subtopic]) -> list[socrasynth.Subtopic]:
            return replacement

    try:
        config = socrasynth.SocraSynthConfig(
            subject=args.subject, swap_stances=args.swap_stances, kappa_a=args.kappa_a, kappa_b=args.kappa_b,
            delta=args.delta, max_rounds=args.max_rounds, subtopics=args.subtopics, mode=args.mode,
            conciliatory_kappa=args.conciliatory, qa_baseline=args.qa_baseline or bool(args.qa_model),
            turn_tokens=args.turn_tokens, crit_tokens=args.crit_tokens, agenda_editor=editor,
            agreement_judge=args.agreement_judge,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    shared = sorted(set(judges) & {args.agent_a, args.agent_b})
    if shared:
        Console(stderr=True, highlight=False).print(Text(
            f"warning: judge model(s) {', '.join(shared)} also debate; section 6.2.2.1 asks for judges other than the debaters",
            style="yellow"), soft_wrap=True)

    async def make(stack: AsyncExitStack, debate_id: str) -> AsyncIterator[Event]:
        judge_roles = {f"judge-{i}": model for i, model in enumerate(judges, 1)}
        roles = {"agent-a": args.agent_a, "agent-b": args.agent_b, **judge_roles,
                 **({"qa": args.qa_model} if args.qa_model else {})}
        agents = await load_agents(load_registry(args.models), roles, stack, seed=args.seed)
        a, b = agents["agent-a"], agents["agent-b"]
        panel = socrasynth.SocraSynthAgents(
            a=replace(a, options=a.options.merged(temperature=args.temperature_a)),
            b=replace(b, options=b.options.merged(temperature=args.temperature_b)),
            judges=[agents[role] for role in judge_roles], qa=agents.get("qa"),
        )
        return socrasynth.run(config, panel, debate_id=debate_id)

    return asyncio.run(run_headless(args.db, make))
