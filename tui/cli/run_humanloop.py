"""``symposium run humanloop …``: a panel of AI judges, optionally with a person in one seat
(seed 001), headless, streamed and journalled; ends with the stance report read from the journal.

The person's seat is typed on stdin (``--human``) or read from a script (``--human-script FILE``).
Stances are accepted as extracted (the default), confirmed on the terminal (``--confirm ask``),
or confirmed from a file of answers, one per step (``--confirm FILE``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backends.registry import load_registry
from protocols import humanloop
from protocols.params import Profile
from protocols.stance import LEGAL_LABELS, LEGAL_RUBRIC, Confirm, confirm_from_lines
from store.journal import Journal, new_debate_id
from store.stances import stance_report

from tui.headless.session import loaded_agents, resolve_profile, run_headless
from tui.cli.params import add_param_flags, build_config
from tui.errors import UserError
from tui.sanitize import terminal_safe
from tui.cli.textarg import read_text, text_arg
from tui.headless.signals import run_command


def add_parser(protocols: argparse._SubParsersAction) -> None:
    p = protocols.add_parser("humanloop", help="a panel of AI judges, a person optionally in one seat; "
                             "stances per step and how they change (seed 001)")
    p.add_argument("--case", required=True, help="the case the panel discusses: text, or @FILE")
    p.add_argument("--agents", required=True, metavar="M1,M2,…",
                   help="one model per AI seat; a model may repeat (each seat is its own session)")
    p.add_argument("--clerk", metavar="MODEL", help="the model that labels each step's stance (default: the first seat's)")
    p.add_argument("--labels", default=",".join(LEGAL_LABELS),
                   help="the positions, comma-separated ('none' and 'hallucination' are always added)")
    seat = p.add_mutually_exclusive_group()
    seat.add_argument("--human", action="store_true", help="take a seat yourself: type each opinion on stdin")
    seat.add_argument("--human-script", metavar="FILE",
                      help="the human seat's statements, separated by lines '---'; optional first line 'stance: LABEL'")
    p.add_argument("--human-seat", type=int, metavar="N", help="the human's place at the table (default: last)")
    p.add_argument("--blind", action="store_true", help="show the human to the others as just another judge")
    p.add_argument("--confirm", default="accept", metavar="accept|ask|FILE",
                   help="stances: accept as extracted, ask on the terminal, or take answers from a file "
                        "(one line per step: blank keeps the extracted stance)")
    p.add_argument("--seed", type=int, help="sampling seed (reproducible runs)")
    add_param_flags(p, humanloop.HumanloopConfig)
    p.set_defaults(handler=run_humanloop)


async def stdin_turn(prompt: str) -> str:
    """The person's opinion from stdin: lines up to an empty line (or the end of input)."""
    Console(stderr=True, highlight=False).print(Text("type the opinion; an empty line ends it", style="yellow"))
    lines: list[str] = []
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or (not line.strip() and lines):
            return "\n".join(lines)
        if line.strip():
            lines.append(line.rstrip("\n"))


async def ask_confirm(stance: str | None, text: str) -> str | None:
    """Confirm a stance on the terminal: Enter keeps it, a label replaces it."""
    shown = terminal_safe(stance or "?")
    prompt = Text(f"  stance [{shown}]: Enter to accept, or type a label: ", style="yellow")
    Console(stderr=True, highlight=False).print(prompt, end="")
    answer = (await asyncio.to_thread(sys.stdin.readline)).strip()
    return answer or stance


def confirm_mode(spec: str) -> Confirm | None:
    if spec == "accept":
        return None
    if spec == "ask":
        return ask_confirm
    return confirm_from_lines(read_text(spec, "stance confirmations").splitlines())


def _config(args: argparse.Namespace, profile: Profile) -> humanloop.HumanloopConfig:
    labels = tuple(dict.fromkeys(label.strip() for label in args.labels.split(",") if label.strip()))
    script = None
    if args.human_script:
        try:
            script = humanloop.HumanScript.parse(read_text(args.human_script, "human script"))
        except ValueError as exc:
            raise UserError(f"{args.human_script}: {exc}") from None
    if not (args.human or script) and (args.blind or args.human_seat is not None):
        raise UserError("--blind and --human-seat need a human seat: add --human or --human-script FILE")
    human = humanloop.HumanSeat(args.human_seat, args.blind, script) if args.human or script else None
    legal = labels == LEGAL_LABELS
    return build_config(humanloop.HumanloopConfig, args, profile, case=text_arg(args.case, "case"), labels=labels,
                        rubric=dict(LEGAL_RUBRIC) if legal else {}, human=human)


def run_humanloop(args: argparse.Namespace) -> int:
    models = [m.strip() for m in args.agents.split(",") if m.strip()]
    if not models:
        raise UserError("--agents needs at least one model")
    registry = load_registry(args.models)
    config = _config(args, resolve_profile(args, registry, [*models, args.clerk or models[0]]))
    confirm = confirm_mode(args.confirm)
    roles = {f"seat-{i}": m for i, m in enumerate(models, start=1)} | {"clerk": args.clerk or models[0]}
    debate_id = new_debate_id()

    async def run() -> int:
        async with loaded_agents(registry, roles, seed=args.seed) as agents:
            panel = humanloop.HumanloopAgents([agents[f"seat-{i}"] for i in range(1, len(models) + 1)], agents["clerk"])
            events = humanloop.run(config, panel, debate_id=debate_id, human_turn=stdin_turn if args.human else None,
                                   confirm=confirm)
            return await run_headless(args.db, debate_id, events)

    code = run_command(run())
    with Journal(args.db) as journal:
        print_stance_report(stance_report(journal, [debate_id]))
    return code


def print_stance_report(report: dict[str, Any], console: Console | None = None) -> None:
    """The stance table of each debate (each step's stated 0-100 confidence in brackets) and the
    change rates by condition, ours and Triem's count beside it (plain text, never markup)."""
    console = console or Console(highlight=False)
    for debate_id, a in report["debates"].items():
        table = Table(title=Text(f"Stances · {debate_id} · {a['condition']}"))
        table.add_column("seat")
        for r in a["rounds"]:
            table.add_column(f"round {r}")
        confidence = a.get("confidence", {})
        for role, labels in a["table"].items():
            seat = role + (" (human)" if role == a["human"] else "")
            stated = confidence.get(role) or [None] * len(labels)
            table.add_row(Text(terminal_safe(seat)), *(Text(terminal_safe(label or "?") + ("" if c is None else f" ({c:g})"))
                                                       for label, c in zip(labels, stated, strict=True)))
        console.print(table)
        for step, counts in a["by_transition"].items():
            console.print(Text(f"  {step}: {_rate(counts)} · {_triem(counts, short=True)}"))
    for condition, row in report["by_condition"].items():
        line = f"{condition}: {row['debates']} debate(s), {_rate(row)}"
        if condition == "human present" and row["changes"]:
            line += f", {row['toward_human']} toward the human's stance, {row['away_from_human']} away"
        console.print(Text(line, style="bold"))
        console.print(Text(f"  {_triem(row)}"))
    if report["by_condition"]:
        console.print(Text("  (ours: changes between positions, steps without one left out; Triem's count: every AI "
                           "seat's every round transition, no stance and hallucination coded 3 — seed 001's 1,200 "
                           "and 400)", style="dim"))


def _rate(counts: dict[str, Any]) -> str:
    rate = counts["change_rate"]
    shown = "—" if rate is None else f"{rate:.0%}"
    return f"{counts['changes']} change(s) in {counts['opportunities']} opportunities ({shown})"


def _triem(counts: dict[str, Any], *, short: bool = False) -> str:
    """Triem's count of the same transitions (see :mod:`protocols.stance`)."""
    triem = counts.get("triem")
    if not isinstance(triem, dict):
        return "Triem's count: —"
    rate = triem["change_rate"]
    if short:
        return f"Triem: {triem['changes']} in {triem['opportunities']} ({'—' if rate is None else f'{rate:.0%}'})"
    extra = [f"{triem['via_no_stance']} into or out of no stance"] if triem["via_no_stance"] else []
    extra += [f"{triem['unlabelled']} with an unlabelled step left out"] if triem["unlabelled"] else []
    shown = "; ".join(["—" if rate is None else f"{rate:.0%}", *extra])
    return f"Triem's count: {triem['changes']} change(s) in {triem['opportunities']} opportunities ({shown})"
