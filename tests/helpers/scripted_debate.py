"""A debate of any protocol in its own process, on backends that stream at a model's pace.

The crash harness's fast mode: the real protocol (started and resumed through its spec,
``tui.protocol_catalog.SPECS``, as the app and ``symposium run``/``resume`` do), journal,
runner and printer, but replies from :class:`tests.helpers.scripted_backends.OracleBackend` (a reply is a
function of its prompt, valid JSON for any schema) streamed at about a small model's speed, so
hundreds of kills fit in minutes, and a person's seat that answers from the prompt
(deliberation, humanloop). Because a reply depends only on its prompt, the fresh backends of a
resumed run answer as the killed run's would have. (Why not real models: the bundled ones take
~1 min a debate here; a share of the kills still runs them, see ``crash_harness``.)

    python -m tests.helpers.scripted_debate run PROTOCOL DB SEED   # prints as `symposium run` does
    python -m tests.helpers.scripted_debate resume DB ID           # as `symposium resume` does

Besides the printer's output it prints ``@debate ID`` when the debate starts and
``@journalled ROUND ROLE`` once a turn is journalled, which the harness times its kills from.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.core.events import DebateStarted, Event, TurnFinished
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.samples import FIRST, form_values
from tests.helpers.scripted_backends import Draw, OracleBackend
from tui.headless.printer import EventPrinter
from tui.headless.signals import Terminated, run_command
from tui.protocol_catalog import SPECS, resumable

OPTS = SamplingOptions(max_tokens=64, temperature=0.0, seed=1)
PACE_S = 0.02  # per 16-character chunk: ~200 tokens/s, about SmolLM2-135M on this machine …
REPLY_S = 0.15  # … for at most this long a reply (the oracle's JSON is long; a small profile's turns are short)

async def person(prompt: str) -> str:
    """The person's seat: an answer drawn from the prompt (so a resumed run gets the same one)."""
    return Draw(prompt).sentence()


def values_for(protocol: str, seed: int) -> dict[str, Any]:
    """The protocol's first sample run (its definition's ``samples``), its case marked with the
    seed so that each trial's debate (and so its replies) is its own."""
    definition, sample = FIRST[protocol]
    return form_values(SPECS[definition.name], sample, seed=seed)


def agents_for(roles: dict[str, str]) -> dict[str, Agent]:
    backends = {model: OracleBackend(model, delay=PACE_S, reply_s=REPLY_S) for model in set(roles.values())}
    return {role: Agent(role, backends[model], OPTS) for role, model in roles.items()}


def _milestones(event: Event) -> None:
    if isinstance(event, DebateStarted):
        print(f"@debate {event.debate_id}", flush=True)
    elif isinstance(event, TurnFinished):
        print(f"@journalled {event.round} {event.role}", flush=True)


async def main(command: str, *args: str) -> int:
    db = args[1] if command == "run" else args[0]
    printer = EventPrinter(Console(width=200, highlight=False))
    with Journal(db) as journal:
        if command == "run":
            protocol, seed = args[0], int(args[2])
            spec = SPECS[protocol]
            values = values_for(protocol, seed)
            events = spec.build(values, agents_for(spec.roles_for(values)), f"fast-{protocol}-{seed:06d}",
                                CommandChannel(), person)
        else:
            debate = Queries(journal).debate(args[1])
            assert debate is not None, f"no debate {args[1]}"
            spec, roles = resumable(debate)
            events = spec.resume(debate, agents_for(roles), CommandChannel(), person)
        final = await drive(events, journal, printer, _milestones)
    return 0 if final is not None and final.status in ("finished", "stopped") else 1


if __name__ == "__main__":
    try:  # as `symposium`'s entry point (tui/cli/parser.py): 130 for Ctrl-C, 128 + signum for SIGTERM/SIGHUP
        sys.exit(run_command(main(*sys.argv[1:])))
    except KeyboardInterrupt:
        sys.exit(130)
    except Terminated as exc:
        sys.exit(exc.exit_status)
