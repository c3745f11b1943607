"""Resuming any protocol by replaying its journal.

A protocol run is a deterministic function of four things: its config, its models' replies,
the person's answers and the moderator's commands (with the checkpoint at which each took
effect). The journal keeps all of them as they happen: each reply the moment its call finishes
(table ``replies``, written by :func:`store.drive.drive` from the outbox of
:mod:`protocols.core.replies`, with the SHA-256 of the prompt it answered), each person's answer the same way, and each command with
its checkpoint (``moderator_events.checkpoint``). It also counts the events it has recorded for
the debate (``debates.events_recorded``).

Resuming runs the protocol again from its start with those inputs served from the journal:

* a model call whose prompt hashes to a recorded reply of the same role is answered from the
  record: the model is not asked again, and the prompt is proven to be the one first sent;
* the person is not asked again for an answer the journal holds;
* commands take effect at the checkpoints where they first did (:class:`ReplayChannel`);
* the first ``events_recorded`` journalled events of the run are already in the journal and
  are dropped (each replayed turn is checked against the stored one); everything after them is
  new and goes to the journal and the screen as in any run.

So every protocol resumes from its last finished turn with exactly the prompts an uninterrupted
run sends, and a turn cut off before its judgement is judged on resuming, without any resume
code in the protocol itself: a protocol only has to be deterministic given those inputs (no
wall clock, no unseeded randomness, no iteration over unordered sets in its prompts).

Why not rebuild each protocol's state from its rows: that is code per protocol (EVINCE had ~60
lines of it) that every change to a protocol must keep in step, and nothing proves it complete.
Replay needs none, and its check (prompt hashes, replayed turns against stored ones) fails
loudly when a protocol, its config or its models changed under a journalled debate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from protocols.core.events import (
    AdvanceStage,
    Command,
    DebateResumed,
    DebateStarted,
    Event,
    EvidenceAttached,
    Interject,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    ModeratorActed,
    Notice,
    Pause,
    PhaseChanged,
    Resume,
    SetContentiousness,
    SkipToConclusion,
    Stop,
    TurnFinished,
    Verdict,
)
from protocols.core.moderation import CommandChannel
from protocols.core.replies import ReplayLog, Reply, replaying


class ResumeError(RuntimeError):
    """A journalled debate cannot be resumed exactly; ``str()`` says why and what to do."""


#: Moderator event kinds that are commands, and how each is rebuilt from its payload.
_COMMANDS: dict[str, Callable[[dict[str, Any]], Command]] = {
    "pause": lambda p: Pause(),
    "resume": lambda p: Resume(),
    "interject": lambda p: Interject(str(p["text"]), to=str(p.get("to", "both"))),
    "set_contentiousness": lambda p: SetContentiousness(float(p["value"])),
    "skip_to_conclusion": lambda p: SkipToConclusion(),
    "stop": lambda p: Stop(str(p.get("reason") or "stopped by the moderator")),
    "verdict": lambda p: Verdict(bool(p["accept"]), str(p.get("note") or "")),
    "advance_stage": lambda p: AdvanceStage(str(p.get("reason") or "advanced by the moderator")),
}


class ReplayChannel(CommandChannel):
    """The moderator's channel of a resumed run: the journalled commands take effect again at
    the checkpoints where they first did; live commands wait until the run has caught up with
    its journal (the replay takes no model time), so none lands among the journalled events."""

    def __init__(self, live: CommandChannel, recorded: dict[int, list[Command]]) -> None:
        super().__init__()
        self.live = live
        self._recorded = {n: list(cmds) for n, cmds in recorded.items()}
        self._now: list[Command] = []
        #: Set by :func:`resume` once every journalled event has been replayed.
        self.caught_up = False

    def send(self, command: Command) -> None:
        self.live.send(command)

    def on_stop(self, callback: Callable[[], None] | None) -> None:
        self.live.on_stop(callback)

    def at_checkpoint(self, number: int) -> None:
        self._now = self._recorded.pop(number, [])

    def poll(self) -> Command | None:
        if self._now:
            return self._now.pop(0)
        return self.live.poll() if self.caught_up and not self._recorded else None

    async def next(self) -> Command:
        """Inside a pause. A pause the journal holds without its resume was the state at the
        interruption: the resumed run goes on rather than wait for a key nobody may press."""
        if self._now:
            return self._now.pop(0)
        if not self.caught_up:
            if self._recorded:
                raise ResumeError("the journal's moderator commands do not fit the run's checkpoints; "
                                  "it cannot be resumed exactly")
            return Resume()
        return await self.live.next()


def commands_by_checkpoint(moderator_events: Sequence[dict[str, Any]]) -> dict[int, list[Command]]:
    """The journalled commands, grouped by the checkpoint at which each took effect."""
    out: dict[int, list[Command]] = {}
    for m in moderator_events:
        make = _COMMANDS.get(m["kind"])
        if make is None or m.get("checkpoint") is None:
            continue  # not a command (an agenda edit, a resume): the run yields it itself
        out.setdefault(int(m["checkpoint"]), []).append(make(m.get("payload") or {}))
    return out


def replies_of(debate: dict[str, Any]) -> list[Reply]:
    return [Reply(r["role"], r["kind"], r["prompt_sha256"], r["reply"], r.get("details") or {})
            for r in debate.get("replies") or []]


def counted(event: Event) -> bool:
    """Whether the journal counts ``event`` in ``debates.events_recorded``: the events a run
    yields and the journal writes. Not a resume's own marker, not the end (a debate that has
    ended is not resumed), not a failed call (a replay does not fail it again)."""
    if isinstance(event, ModelCalled):
        return event.call.error is None
    return isinstance(event, (DebateStarted, EvidenceAttached, TurnFinished, PhaseChanged, MetricsComputed, JudgementMade,
                              ModeratorActed, Notice))


def _round_of(event: Event) -> int | None:
    value = getattr(event, "round", None)
    return value if isinstance(value, int) else None


async def resume(debate: dict[str, Any], start: Callable[[CommandChannel], AsyncIterator[Event]], *,
                 channel: CommandChannel | None = None) -> AsyncIterator[Event]:
    """Continue the journalled ``debate`` (:meth:`store.queries.Queries.debate`): ``start``
    begins the same protocol with the same config and agents on the given channel; its run is
    replayed from the journal up to where the journal ends, then goes on live.

    Raises :class:`ResumeError` before anything is written when the journal cannot be replayed
    (a debate journalled before replies were kept, or a run that no longer matches it)."""
    recorded: int | None = debate.get("events_recorded")
    if recorded is None:
        raise ResumeError(f"debate {debate['id']} was journalled by a Symposium that did not keep its models' replies "
                          "(before journal layout v5), so it cannot be resumed exactly; start it again")
    log = ReplayLog(replies_of(debate))
    stored_turns = [t for t in debate.get("turns") or []]
    channel = ReplayChannel(channel or CommandChannel(), commands_by_checkpoint(debate.get("moderator_events") or []))
    inner = start(channel)
    seen, turns_seen, last_round = 0, 0, 0
    resumed = False
    channel.caught_up = recorded == 0
    try:
        while True:
            try:
                with replaying(log):  # within one step of the run: never across a yield
                    event = await inner.__anext__()
            except StopAsyncIteration:
                break
            if not resumed and seen < recorded:
                if counted(event):
                    seen += 1
                    if isinstance(event, TurnFinished):
                        _check_turn(debate["id"], event, stored_turns, turns_seen)
                        turns_seen += 1
                    last_round = _round_of(event) or last_round
                    channel.caught_up = seen >= recorded
                continue  # already journalled, or live-only output of a replayed turn
            if not resumed:
                resumed = True
                yield DebateResumed(debate["id"], last_round)
            yield event
        if not resumed:  # the journal held every event but the end
            yield DebateResumed(debate["id"], last_round)
    finally:
        aclose = getattr(inner, "aclose", None)
        if aclose is not None:  # the protocol's own clean-up now, not at garbage collection
            await aclose()


def _check_turn(debate_id: str, event: TurnFinished, stored: list[dict[str, Any]], index: int) -> None:
    """A replayed turn must be the journalled one, or the run no longer matches its journal."""
    want = stored[index] if index < len(stored) else None
    got = (event.role, event.kind, event.round, event.text)
    if want is None or (want["role"], want["kind"], want["round"], want["text"]) != got:
        where = "a turn the journal does not hold" if want is None else (
            f"turn {want['seq']} ({want['role']}, round {want['round']}) differently")
        raise ResumeError(f"debate {debate_id}: replaying the journal produced {where}; the protocol, its settings or "
                          "its models changed since the debate was journalled, so it cannot be resumed exactly")


__all__ = ["ReplayChannel", "ResumeError", "commands_by_checkpoint", "counted", "replies_of", "resume"]
