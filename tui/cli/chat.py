"""``symposium chat MODEL PROMPT`` (one streamed, journalled reply) and ``symposium demo``."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.text import Text

from backends.lifecycle import Engines
from backends.registry import load_registry
from backends.sources import demo_model
from protocols.core import chat
from protocols.core.agents import Agent
from store.drive import drive
from store.journal import Journal, new_debate_id
from tui.cli.commands import help_for
from tui.headless.printer import EventPrinter
from tui.headless.session import print_load_events
from tui.headless.signals import run_command

DEMO_PROMPT = "In two sentences, why is it useful for two people to debate a hard question?"


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chat", help=help_for("chat"))
    p.add_argument("model_id")
    p.add_argument("prompt")
    p.add_argument("--system", help="system prompt")
    p.add_argument("--max-tokens", type=int, help="reply length limit (default: the model's setting)")
    p.add_argument("--temperature", type=float)
    p.add_argument("--seed", type=int)
    p.set_defaults(handler=run_chat)

    d = sub.add_parser("demo", help=help_for("demo"))
    d.set_defaults(handler=run_demo)


def run_chat(args: argparse.Namespace) -> int:
    return run_command(_chat(args.models, args.db, args.model_id, args.prompt, args.system,
                             max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed))


def run_demo(args: argparse.Namespace) -> int:
    if sys.stdin.isatty() and sys.stdout.isatty():
        from tui.app.app import run_app

        return run_app(db=args.db, models=args.models, start="demo")
    model_id = demo_model(load_registry(args.models)).id
    return run_command(_chat(args.models, args.db, model_id, DEMO_PROMPT, None, max_tokens=96))


async def _chat(models: str | None, db: str | None, model_id: str, prompt: str, system: str | None, **sampling) -> int:
    registry = load_registry(models)
    entry = registry.get(model_id)
    console = Console(highlight=False)
    async with Engines(registry, on_event=print_load_events(console)) as engines:
        backend = (await engines.load([model_id]))[model_id]
        agent = Agent("assistant", backend, entry.default_options().merged(**sampling))
        debate_id = new_debate_id()
        with Journal(db) as journal:
            final = await drive(chat.run(debate_id, agent, prompt, system=system), journal, EventPrinter(console, show_headers=False))
            calls = journal.conn.execute(
                "SELECT completion_tokens, prompt_tokens, prompt_tokens_evaluated, duration_s, first_token_s"
                " FROM model_calls WHERE debate_id = ?", (debate_id,)).fetchone()
    if calls is not None:
        tokens, prompt_n, evaluated, seconds, first = calls
        rate = (tokens - 1) / (seconds - first) if first is not None and tokens > 1 and seconds > first else 0.0
        console.print(Text(
            f"\n{tokens} tokens · {rate:.1f} tok/s · prompt {prompt_n} tokens ({evaluated} evaluated) · "
            f"journalled as {debate_id} ({final.stop_reason if final else 'cut off'})", style="dim"))
    return 0
