"""A protocol's sample runs: the inputs from which every contract test is generated.

Each definition carries one :class:`Sample` per variant worth covering. The tests that every
protocol must pass — resume at every journal write with the prompts of an uninterrupted run,
the crash harness's kills, each moderator command through the app, every context drop
journalled, the report in a real browser — read their runs from here, so a protocol is covered
by all of them the moment it is registered, and no test keeps a table of protocols.

Model ids in ``values`` are placeholders (each a distinct name per distinct model); a test seats
its own backends on them (scripted replies, or the bundled model for every role).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sample:
    """One small run of a protocol.

    ``values``: the New-debate form's values (inputs, roles, parameters, as strings) of a run that
    reaches every stage of the protocol yet stays short; ``fewest_turns``: the fewest turns such a
    run journals on scripted replies (a kill after a later turn could come after the end).
    ``moderated``: the values of a run the moderator commands in the app (over the form's examples,
    models included), long enough that a pause, an interjection and a skip all arrive before it
    ends; ``addressed``: a role an interjection goes to.
    ``window`` and ``windowed``: a context window (tokens) small enough that the run must leave
    older messages out, and the values that make the run long enough to need it.
    ``on_model`` and ``model_turns``: values for a run on the bundled tiny model (short turns),
    and the latest journalled turn after which a kill still lands before such a run ends.
    """

    name: str
    values: Mapping[str, str]
    fewest_turns: int
    moderated: Mapping[str, str] = field(default_factory=dict)
    addressed: str = ""
    window: int = 1024
    windowed: Mapping[str, str] = field(default_factory=dict)
    on_model: Mapping[str, str] = field(default_factory=dict)
    model_turns: int = 2


__all__ = ["Sample"]
