"""``symposium run PROTOCOL …``: a whole debate, headless, streamed to the terminal and journalled."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from backends.registry import load_registry
from protocols import evince, socrasynth
from store.journal import new_debate_id

from tui.cli import run_agreement
from tui.cli import run_d3
from tui.cli import run_deliberation
from tui.cli import run_humanloop
from tui.cli.params import add_param_flags, build_config
from tui.cli.commands import help_for
from tui.errors import UserError
from tui.headless.session import loaded_agents, read_labels, resolve_profile, run_headless
from tui.headless.signals import run_command



def add_parsers(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help=help_for("run"))
    protocols = run.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True)

    ev = protocols.add_parser("evince", help="EVINCE: two agents converge on a distribution over class labels")
    ev.add_argument("--case", required=True, help="the information set S (symptoms, facts of the case)")
    ev.add_argument("--labels", default="auto", help="class set C: a file (one label per line, or a CSV with a "
                    "'disease' or 'label' column) for a closed set, or 'auto' for an open set")
    ev.add_argument("--agent-a", required=True, metavar="MODEL")
    ev.add_argument("--agent-b", required=True, metavar="MODEL")
    ev.add_argument("--judge", required=True, metavar="MODEL", help="the CRIT judge (ideally not a debater)")
    ev.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    add_param_flags(ev, evince.EvinceConfig)
    ev.set_defaults(handler=run_evince)

    ss = protocols.add_parser("socrasynth", help="SocraSynth: two agents debate a subject for and against; judges score them with CRIT")
    ss.add_argument("--subject", required=True, help="the debate subject, e.g. a policy question")
    ss.add_argument("--agent-a", required=True, metavar="MODEL", help="argues for the subject (against with --swap-stances)")
    ss.add_argument("--agent-b", required=True, metavar="MODEL", help="argues against the subject (for with --swap-stances)")
    ss.add_argument("--judges", required=True, metavar="M1,M2", help="the judge panel, comma-separated (ideally not the debaters' models)")
    ss.add_argument("--temperature-a", type=float, help="agent A's sampling temperature (default: its model's)")
    ss.add_argument("--temperature-b", type=float, help="agent B's sampling temperature (default: its model's)")
    ss.add_argument("--agenda-file", metavar="FILE", help="replace the agreed subtopics before the debate: lines "
                    "'Title: description', or a JSON list of {\"title\", \"description\"}")
    ss.add_argument("--qa-model", metavar="MODEL", help="the Q&A baseline's model (default: agent A's; implies --qa-baseline)")
    ss.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    add_param_flags(ss, socrasynth.SocraSynthConfig)
    ss.set_defaults(handler=run_socrasynth)

    run_agreement.add_parser(protocols)
    run_deliberation.add_parser(protocols)
    run_humanloop.add_parser(protocols)
    run_d3.add_parser(protocols)


def run_evince(args: argparse.Namespace) -> int:
    labels = read_labels(args.labels)
    registry = load_registry(args.models)
    roles = {"agent-a": args.agent_a, "agent-b": args.agent_b, "judge": args.judge}
    config = build_config(evince.EvinceConfig, args, resolve_profile(args, registry, roles.values()),
                          case=args.case, labels=labels)

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            debate_id = new_debate_id()
            team = evince.EvinceAgents(agents["agent-a"], agents["agent-b"], agents["judge"])
            return await run_headless(args.db, debate_id, evince.run(config, team, debate_id=debate_id))

    return run_command(run())


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

    registry = load_registry(args.models)
    profile = resolve_profile(args, registry, [args.agent_a, args.agent_b, *judges])
    config = build_config(socrasynth.SocraSynthConfig, args, profile, subject=args.subject, agenda_editor=editor,
                          **({"qa_baseline": True} if args.qa_model else {}))
    shared = sorted(set(judges) & {args.agent_a, args.agent_b})
    if shared:
        Console(stderr=True, highlight=False).print(Text(
            f"warning: judge model(s) {', '.join(shared)} also debate; section 6.2.2.1 asks for judges other than the debaters",
            style="yellow"), soft_wrap=True)

    judge_roles = {f"judge-{i}": model for i, model in enumerate(judges, 1)}
    roles = {"agent-a": args.agent_a, "agent-b": args.agent_b, **judge_roles,
             **({"qa": args.qa_model} if args.qa_model else {})}

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            debate_id = new_debate_id()
            a, b = agents["agent-a"], agents["agent-b"]
            panel = socrasynth.SocraSynthAgents(
                a=replace(a, options=a.options.merged(temperature=args.temperature_a)),
                b=replace(b, options=b.options.merged(temperature=args.temperature_b)),
                judges=[agents[role] for role in judge_roles], qa=agents.get("qa"),
            )
            return await run_headless(args.db, debate_id, socrasynth.run(config, panel, debate_id=debate_id))

    return run_command(run())
