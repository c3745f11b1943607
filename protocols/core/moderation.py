"""The moderator's side of a running protocol: commands in, moderator events out.

The TUI or a script sends :mod:`protocols.core.events` commands into a :class:`CommandChannel`; the
protocol calls :meth:`Moderation.checkpoint` between turns. There each pending command takes
effect, is yielded as a ``ModeratorActed`` event (so the journal records it) and changes the
moderation state the protocol reads: interjections waiting for an agent, a contentiousness
override, "skip to the conclusion", "stop". A pause blocks at the checkpoint until resumed.
``Stop`` also cancels the reply being generated, so the moderator never waits for a long turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from protocols.core.events import (
    AwaitingModerator,
    Command,
    Event,
    Interject,
    ModeratorActed,
    Pause,
    Resume,
    SetContentiousness,
    SkipToConclusion,
    Stop,
    Verdict,
)

if TYPE_CHECKING:  # agents import the replay, which imports this module's channel
    from protocols.core.agents import Turn


@dataclass(frozen=True)
class Honoured:
    """The moderator commands one protocol honours, declared once with the protocol.

    Every interface offers exactly these and nothing else: a command a protocol cannot honour
    is not offered (no dialog may confirm an action that then does nothing). ``interject`` lists
    the roles (or role prefixes such as ``"juror-"`` for numbered roles) an interjection may be
    addressed to, in the order a menu lists them; empty: interjections are not offered.
    """

    interject: tuple[str, ...] = ()
    contentiousness: bool = False
    skip: bool = True
    stop: bool = True
    pause: bool = True
    #: Where "skip to the conclusion" leads in this protocol, in words a confirmation can use
    #: ("skipping to {skip_to}"): each protocol skips to a different place.
    skip_to: str = "the conclusion"

    def addresses(self, role: str) -> bool:
        """Whether an interjection may be addressed to ``role`` (an entry ending in "-" stands
        for the numbered roles ``juror-1``, ``juror-2`` …)."""
        return any(_numbered(role, entry) if entry.endswith("-") else role == entry for entry in self.interject)

    def targets(self, roles: Iterable[str]) -> tuple[str, ...]:
        """The roles of one debate (its participants) an interjection may be addressed to, in the
        declared order, numbered roles by number: what an Interject menu lists besides "all"."""
        present = list(dict.fromkeys(roles))
        out: list[str] = []
        for entry in self.interject:
            if entry.endswith("-"):
                found = sorted((r for r in present if _numbered(r, entry)), key=lambda r: int(r[len(entry):]))
            else:
                found = [entry] if entry in present else []
            out += [r for r in found if r not in out]
        return tuple(out)


def _numbered(role: str, prefix: str) -> bool:
    """``role`` is ``prefix`` followed by a number (``juror-2`` for ``juror-``)."""
    return role.startswith(prefix) and role[len(prefix):].isdigit()


@dataclass
class _Pending:
    text: str
    recipients: set[str]


class CommandChannel:
    """Where moderator commands wait until the protocol's next checkpoint."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Command] = asyncio.Queue()
        self._on_stop: Callable[[], None] | None = None

    def send(self, command: Command) -> None:
        """Queue ``command`` (call from the protocol's event loop)."""
        self._queue.put_nowait(command)
        if isinstance(command, Stop) and self._on_stop is not None:
            self._on_stop()

    def at_checkpoint(self, number: int) -> None:
        """The protocol reached its ``number``-th checkpoint (a resumed run's channel replays
        the commands journalled there; a live channel has nothing to do)."""

    def poll(self) -> Command | None:
        """The next waiting command, or ``None`` (never blocks)."""
        return None if self._queue.empty() else self._queue.get_nowait()

    async def next(self) -> Command:
        return await self._queue.get()

    def on_stop(self, callback: Callable[[], None] | None) -> None:
        """What to cancel when a Stop arrives mid-turn (the protocol sets the current turn)."""
        self._on_stop = callback


class Moderation:
    """The moderation state of one run, updated at checkpoints."""

    def __init__(self, debate_id: str, roles: tuple[str, ...], channel: CommandChannel | None = None) -> None:
        self.debate_id = debate_id
        self.roles = roles
        self.channel = channel or CommandChannel()
        self._pending: list[_Pending] = []
        self.kappa_override: float | None = None
        self.skip_requested = False
        self.stop_reason: str | None = None
        self.verdict: Verdict | None = None
        #: Checkpoints reached so far: a command is journalled with the one it took effect at.
        self.checkpoints = 0
        #: Contentiousness sent where it could not take effect, waiting for a checkpoint where
        #: it can (see :meth:`checkpoint`'s ``kappa``).
        self._waiting: list[SetContentiousness] = []

    @property
    def stopped(self) -> bool:
        return self.stop_reason is not None

    async def checkpoint(self, round_: int | None, *, kappa: bool = True) -> AsyncIterator[Event]:
        """Apply pending commands (waiting out a pause) and yield them as moderator events,
        each stamped with this checkpoint's number (see :mod:`protocols.core.replay`).

        ``kappa=False`` marks a checkpoint where a contentiousness set now would change nothing
        here (between a round's two turns, whose κ is fixed; after the last stage that uses
        one). It is not applied there, nor journalled: it waits for the next checkpoint that
        allows it, and if none comes, :meth:`closing` leaves it for the interface to say that it
        came too late. So the journal's "set contentiousness" is always one that took effect."""
        self.checkpoints += 1
        self.channel.at_checkpoint(self.checkpoints)
        while kappa and self._waiting:
            async for event in self._stamped(self._apply(self._waiting.pop(0), round_, kappa=kappa)):
                yield event
        # One at a time, so that a Pause can wait for a Resume sent in the same burst.
        while (command := self.channel.poll()) is not None:
            async for event in self._stamped(self._apply(command, round_, kappa=kappa)):
                yield event
            if self.stopped:
                return

    async def closing(self, round_: int | None) -> AsyncIterator[Event]:
        """The run's last checkpoint, after its last turn: only what can still act is applied (a
        stop, the moderator's verdict on the outcome). An interjection, a contentiousness, a
        skip or a pause can no longer reach anyone: it is not applied and not journalled (the
        journal's moderator events are what took effect), but left in the channel, where the
        interface finds it and tells the person it came too late."""
        self.checkpoints += 1
        self.channel.at_checkpoint(self.checkpoints)
        late: list[Command] = list(self._waiting)
        self._waiting.clear()
        while (command := self.channel.poll()) is not None:
            if not isinstance(command, Stop | Verdict):
                late.append(command)
                continue
            async for event in self._stamped(self._apply(command, round_)):
                yield event
        for command in late:
            self.channel.send(command)

    async def _stamped(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """``events``, each moderator event stamped with the checkpoint it took effect at."""
        async for event in events:
            yield replace(event, checkpoint=self.checkpoints) if isinstance(event, ModeratorActed) else event

    async def _apply(self, command: Command, round_: int | None, *, kappa: bool = True) -> AsyncIterator[Event]:
        """What ``command`` does here; ``kappa``: whether a contentiousness can take effect at
        this checkpoint (else it waits, see :meth:`checkpoint`)."""
        match command:
            case Pause():
                yield ModeratorActed(self.debate_id, "pause", {}, round_)
                yield AwaitingModerator(self.debate_id, "paused: resume, interject or stop", ("resume", "stop"))
                while True:  # commands sent while paused still take effect, in order
                    nxt = await self.channel.next()
                    if isinstance(nxt, Resume):
                        yield ModeratorActed(self.debate_id, "resume", {}, round_)
                        return
                    async for event in self._apply(nxt, round_, kappa=kappa):
                        yield event
                    if self.stopped:
                        return
            case Resume():
                return  # not paused: nothing to resume
            case Interject():
                to = set(self.roles) if command.to in ("both", "all") else {command.to}
                self._pending.append(_Pending(command.text, to))
                yield ModeratorActed(self.debate_id, "interject", {"to": command.to, "text": command.text}, round_)
            case SetContentiousness() if not kappa:
                self._waiting.append(command)
            case SetContentiousness():
                value = min(1.0, max(0.0, float(command.value)))
                self.kappa_override = value
                yield ModeratorActed(self.debate_id, "set_contentiousness", {"value": value}, round_)
            case SkipToConclusion():
                self.skip_requested = True
                yield ModeratorActed(self.debate_id, "skip_to_conclusion", {}, round_)
            case Stop():
                self.stop_reason = command.reason
                yield ModeratorActed(self.debate_id, "stop", {"reason": command.reason}, round_)
            case Verdict():
                self.verdict = command
                yield ModeratorActed(self.debate_id, "verdict", asdict(command), round_)

    async def stream(self, turn: Turn, *, round_: int, phase: str, kind: str) -> AsyncIterator[Event]:
        """Run ``turn``, streaming its events; a Stop sent meanwhile cancels it mid-reply."""
        self.channel.on_stop(turn.cancel)
        try:
            async for event in turn.events(self.debate_id, phase=phase, round=round_, kind=kind):
                yield event
        finally:
            self.channel.on_stop(None)

    def take_interjections(self, role: str) -> list[str]:
        """Interjections for ``role`` not yet delivered to it (each reaches each addressee once)."""
        delivered = [p.text for p in self._pending if role in p.recipients]
        for p in self._pending:
            p.recipients.discard(role)
        self._pending = [p for p in self._pending if p.recipients]
        return delivered
