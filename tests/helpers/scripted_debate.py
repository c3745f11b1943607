"""An EVINCE debate in its own process on scripted backends that stream at a model's pace.

The crash harness's fast mode: the real protocol, journal, runner and printer, but replies
from :class:`tests.helpers.scripted.ScriptedBackend` streamed at about a small model's
speed, so hundreds of kills fit in minutes. (Why scripted: the bundled models take ~1 min a
debate here; a share of the kills still runs them, see ``crash_harness``.)

    python -m tests.helpers.scripted_debate run DB SEED     # prints as `symposium run` does
    python -m tests.helpers.scripted_debate resume DB ID    # as `symposium resume` does

Besides the printer's output it prints ``@journalled ROUND ROLE`` once a turn is journalled, which the
harness times its kills from.
"""

from __future__ import annotations

import json
import random
import sys

from rich.console import Console

from backends.base import SamplingOptions
from protocols import evince
from protocols.agents import Agent
from protocols.events import DebateStarted, Event, TurnFinished
from protocols.labels import LabelSet
from store.journal import Journal
from store.queries import Queries
from tui.headless.printer import EventPrinter
from tui.headless.runner import drive
from tui.headless.signals import Terminated, run_command

from tests.helpers.scripted import ScriptedBackend

LABELS = LabelSet(["Malaria", "Dengue", "Typhoid", "Hepatitis C", "Common Cold"])
OPTS = SamplingOptions(max_tokens=64, temperature=0.0, seed=1)
PACE_S = 0.008  # per 7-character chunk: ~200 tokens/s, about SmolLM2-135M on this machine
ROUNDS = 3


def _reply(rng: random.Random) -> str:
    picks = rng.sample(LABELS.labels, 3)
    weights = [rng.random() + 0.05 for _ in picks]
    total = sum(weights)
    return json.dumps({"predictions": [{"label": label, "probability": round(w / total, 3), "argument": "the symptoms fit"}
                                       for label, w in zip(picks, weights)],
                       "arguments": ["fever with chills points this way", "the rash argues against the rest"]})


def _agents(seed: int) -> evince.EvinceAgents:
    rng = random.Random(seed)
    crit = json.dumps({"claim": "x", "reasons": ["a"], "rival_reasons": ["b"], "score": 6, "justification": "fair"})
    return evince.EvinceAgents(
        Agent("agent-a", ScriptedBackend("scripted-a", [_reply(rng) for _ in range(ROUNDS)], delay=PACE_S), OPTS),
        Agent("agent-b", ScriptedBackend("scripted-b", [_reply(rng) for _ in range(ROUNDS)], delay=PACE_S), OPTS),
        Agent("judge", ScriptedBackend("scripted-judge", [crit] * (2 * ROUNDS), delay=PACE_S), OPTS),
    )


def _milestones(event: Event) -> None:
    if isinstance(event, DebateStarted):
        print(f"@debate {event.debate_id}", flush=True)
    elif isinstance(event, TurnFinished):
        print(f"@journalled {event.round} {event.role}", flush=True)


async def main(command: str, db: str, arg: str) -> int:
    printer = EventPrinter(Console(width=200, highlight=False))
    with Journal(db) as journal:
        if command == "run":
            config = evince.EvinceConfig(case="fever, chills and sweating", labels=LABELS, max_rounds=ROUNDS - 1,
                                         recommendations=False, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
            events = evince.run(config, _agents(int(arg)), debate_id=f"fast{int(arg):06d}")
        else:
            debate = Queries(journal).debate(arg)
            assert debate is not None, f"no debate {arg}"
            events = evince.resume(debate, _agents(hash(arg) % 1000))
        final = await drive(events, journal, printer, _milestones)
    return 0 if final is not None and final.status in ("finished", "stopped") else 1


if __name__ == "__main__":
    try:  # as `symposium`'s entry point (tui/cli/parser.py): 130 for Ctrl-C, 128 + signum for SIGTERM/SIGHUP
        sys.exit(run_command(main(*sys.argv[1:4])))
    except KeyboardInterrupt:
        sys.exit(130)
    except Terminated as exc:
        sys.exit(exc.exit_status)
