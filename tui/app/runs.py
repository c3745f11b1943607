"""What a live Debate screen runs: a new debate from the form, or a journalled one resumed.

A :class:`DebateRun` says which protocol it is (for the screen's panels and the commands it
offers), which model plays each role, what to show before the run (a resumed debate's past),
and, once the models are loaded, the protocol's event stream. The screen does the rest the
same way for both: load the models, journal and show every event, close the models.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from backends.registry import Registry
from protocols.core.agents import Agent
from protocols.core.definition import Edit, ProtocolDefinition
from protocols.core.events import Event
from protocols.core.moderation import CommandChannel
from protocols.core.roles import SIDE_PANEL
from protocols.registry import BY_NAME
from store.journal import new_debate_id
from tui.app.recorded import recorded_events
from tui.forms import PersonSeat, ProtocolSpec
from tui.protocol_catalog import resumable


class DebateRun(ABC):
    """One run of a protocol as the Debate screen drives it."""

    #: The protocol (its panels, its commands); ``None`` for a run of no registered protocol.
    definition: ProtocolDefinition | None
    #: The debate's title, shown until its ``DebateStarted`` says it.
    title: str = ""

    @property
    def analyzer(self) -> str | None:
        """The side panel's analyzer model (apart from the protocol's own roles), if any."""
        return None

    @abstractmethod
    def roles(self) -> Mapping[str, str]:
        """Role → model id; :class:`tui.forms.FormError` when the run cannot start."""

    def recorded(self) -> Iterable[Event]:
        """What is shown before the run starts (nothing for a new debate)."""
        return ()

    @abstractmethod
    def events(self, agents: Mapping[str, Agent], channel: CommandChannel, person: PersonSeat,
               registry: Registry, edit: Edit | None = None) -> AsyncIterator[Event]:
        """The protocol's event stream, on ``agents`` (one per role of :meth:`roles`); ``edit``
        asks the moderator to edit what the protocol proposes (see ``ProtocolSpec.build``)."""


@dataclass
class NewDebate(DebateRun):
    """A debate the New-debate form set up."""

    spec: ProtocolSpec
    values: dict[str, Any]

    def __post_init__(self) -> None:
        self.definition = self.spec.definition

    @property
    def analyzer(self) -> str | None:
        model = str(self.values.get(SIDE_PANEL) or "none")
        return None if model == "none" else model

    def roles(self) -> Mapping[str, str]:
        return self.spec.roles_for(self.values)

    def events(self, agents: Mapping[str, Agent], channel: CommandChannel, person: PersonSeat,
               registry: Registry, edit: Edit | None = None) -> AsyncIterator[Event]:
        return self.spec.build(self.values, agents, new_debate_id(), channel, person, registry=registry, edit=edit)


@dataclass
class ResumedDebate(DebateRun):
    """A journalled debate continued from its last finished turn, with the prompts an
    uninterrupted run would have sent (its definition's ``resume``)."""

    debate: dict[str, Any]
    _spec: ProtocolSpec | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.definition = BY_NAME.get(str(self.debate.get("protocol") or ""))
        self.title = str(self.debate.get("title") or "")

    def roles(self) -> Mapping[str, str]:
        self._spec, roles = resumable(self.debate)
        return roles

    def recorded(self) -> Iterable[Event]:
        return recorded_events(self.debate)

    def events(self, agents: Mapping[str, Agent], channel: CommandChannel, person: PersonSeat,
               registry: Registry, edit: Edit | None = None) -> AsyncIterator[Event]:
        """A resumed run is given the moderator's edits from its journal (an edit the
        interruption came before is left out: the proposal stands)."""
        spec = self._spec or resumable(self.debate)[0]
        return spec.resume(self.debate, agents, channel, person)
