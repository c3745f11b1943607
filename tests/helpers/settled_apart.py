"""A journalled EVINCE debate that settled without agreement, for what is said of its outcome.

The agents are scripted (tests/helpers/evince_scripted.py) to stop moving while they disagree,
which a real model cannot be made to do on cue; the journal is a real SQLite file. Its combined
distribution still has a top label (Dengue), which must not be shown as what the debate
concluded.
"""

from __future__ import annotations

from pathlib import Path

from protocols import evince
from protocols.core.events import Event, Interject, MetricsComputed
from protocols.core.moderation import CommandChannel
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.evince_scripted import agents, config, reply
from tests.helpers.scripted_backends import ScriptedBackend

APART_A, APART_B = {"Dengue": 0.8, "Chikungunya": 0.2}, {"Zika": 0.6, "Malaria": 0.4}
#: The moderator's one interjection, in round 1.
SAID = "Ask about [b]travel[/b] history."  # markup-like on purpose: shown as typed


async def settled_apart(path: Path) -> dict:
    """A journalled EVINCE debate that settled without agreement, with one interjection."""
    channel = CommandChannel()

    def interject_once(event: Event) -> None:
        if isinstance(event, MetricsComputed) and event.round == 0:
            channel.send(Interject(SAID, to="both"))

    team = agents(ScriptedBackend("a", [reply(APART_A)] * 6), ScriptedBackend("b", [reply(APART_B)] * 6),
                  ScriptedBackend("j", []))
    with Journal(path) as journal:
        await drive(evince.run(config(max_rounds=5), team, debate_id="apart0001", channel=channel), journal, interject_once)
        debate = Queries(journal).debate("apart0001")
    assert debate is not None and debate["outcome"]["ending"] == "settled_apart" and debate["outcome"]["top"] == "Dengue"
    return debate
