"""A contentiousness the moderator sets is journalled only where it takes effect: the start of
a round that reads it. Sent where no round follows (the round cap reached), it is not
journalled as set and is left in the channel, where the interface finds it and says it came
too late (as it does a skip). Replies from :class:`tests.helpers.scripted_backends.OracleBackend` (a
function of the prompt): the test is about the moderation, not what a model says."""

from __future__ import annotations

from protocols.core.events import ModeratorActed, PhaseChanged, SetContentiousness, TurnFinished
from protocols.core.moderation import CommandChannel
from tests.helpers.samples import FIRST, form_values
from tests.helpers.scripted_debate import agents_for
from tui.protocol_catalog import SPECS

EVINCE = SPECS["evince"]


async def _run(send_after: tuple[int, str], max_rounds: int) -> tuple[list, CommandChannel]:
    """EVINCE's sample on oracle replies, κ 0.30 sent once ``send_after`` (round, role) has
    spoken; the events and the channel afterwards."""
    _, sample = FIRST["evince"]
    values = form_values(EVINCE, sample, {"max_rounds": str(max_rounds), "agreement_judge": "no"})
    channel = CommandChannel()
    events = []
    async for event in EVINCE.build(values, agents_for(EVINCE.roles_for(values)), "kappa-test", channel, _nobody):
        events.append(event)
        if isinstance(event, TurnFinished) and (event.round, event.role) == send_after:
            channel.send(SetContentiousness(0.3))
    return events, channel


async def _nobody(prompt: str) -> str | None:
    return None


async def test_contentiousness_sent_in_the_last_round_is_not_journalled_and_is_left_for_the_interface() -> None:
    events, channel = await _run((1, "agent-a"), max_rounds=1)
    assert not [e for e in events if isinstance(e, ModeratorActed) and e.kind == "set_contentiousness"], \
        "a contentiousness no round read was journalled as set"
    assert isinstance(channel.poll(), SetContentiousness), "the late contentiousness was not left for the interface"


async def test_contentiousness_sent_mid_round_takes_effect_at_the_next_rounds_start() -> None:
    events, channel = await _run((0, "agent-a"), max_rounds=1)
    acted = [e for e in events if isinstance(e, ModeratorActed) and e.kind == "set_contentiousness"]
    assert [(e.round, e.payload["value"]) for e in acted] == [(1, 0.3)]
    at = events.index(acted[0])
    phase = next(e for e in events[at:] if isinstance(e, PhaseChanged))
    assert (phase.round, phase.kappa) == (1, 0.3), "journalled before the round that reads it"
    assert not any(isinstance(e, TurnFinished) and e.round == 0 for e in events[at:]), \
        "journalled between round 0's turns, where it changed nothing"
    assert channel.poll() is None
