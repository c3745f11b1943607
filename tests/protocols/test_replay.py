"""The rules of resuming by replay (protocols/core/replay.py, protocols/core/replies.py), one at a time.

tests/protocols/test_resume_every_protocol.py proves the whole: every real protocol, cut at every
journal write, resumes with the prompts of an uninterrupted run. It takes half a minute and,
when it fails, says only that some prompt differed. These tests hold each rule the whole rests
on, in milliseconds, on a toy protocol small enough to read: which journalled events a resume
drops and where it says it resumed; that a replayed turn must be the journalled one; that
journalled commands take effect at their own checkpoints and live ones only after the replay;
that a reply is served only to the same role, kind and prompt, oldest first, and only while
the run itself (not its consumer) is computing; and that a prompt's hash, which journals keep,
does not change between versions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from fractions import Fraction
from pathlib import PurePosixPath
from typing import Any

import pytest

from backends.base import Message
from protocols.core.events import (
    AdvanceStage,
    AwaitingModerator,
    CallRecord,
    Command,
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
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
    TokenDelta,
    TurnFinished,
    TurnStarted,
    Verdict,
)
from protocols.core.moderation import CommandChannel, Moderation
from protocols.core.replay import ReplayChannel, ResumeError, commands_by_checkpoint, counted, replies_of, resume
from protocols.core.replies import PERSON_ROLE, ReplayLog, Reply, person_answer, prompt_sha256, record, recording, replayed, replaying

DEBATE = "toy"


def call(error: str | None = None) -> CallRecord:
    return CallRecord("judge", "m", "crit", {}, 10, 10, 5, 0.1, error=error)


def turn(round_: int, text: str, role: str = "agent-a", kind: str = "argument") -> TurnFinished:
    return TurnFinished(DEBATE, role, "m", "debate", round_, kind, text, text, None)


# -- which events the journal counts ----------------------------------------------------------

def test_the_journal_counts_what_a_run_writes_and_not_markers_ends_or_failed_calls() -> None:
    written: list[Event] = [
        DebateStarted(DEBATE, "toy", "t", "s", {}, ()), PhaseChanged(DEBATE, "debate", 1), turn(1, "x"),
        MetricsComputed(DEBATE, 1, {}), JudgementMade(DEBATE, "judge", "m", "crit", None, None, 5.0, None, {}, ""),
        ModeratorActed(DEBATE, "pause", {}), Notice(DEBATE, "note", "n"), ModelCalled(DEBATE, call()),
    ]
    not_written: list[Event] = [
        DebateResumed(DEBATE, 1), DebateFinished(DEBATE, "finished", "done", {}), ModelCalled(DEBATE, call("timed out")),
        TurnStarted(DEBATE, "agent-a", "m", "debate", 1), TokenDelta(DEBATE, "agent-a", "x"),
        AwaitingModerator(DEBATE, "paused"),
    ]
    assert [counted(e) for e in written] == [True] * len(written)
    assert [counted(e) for e in not_written] == [False] * len(not_written)


# -- journalled commands -----------------------------------------------------------------------

def test_journalled_commands_are_rebuilt_with_their_payloads_and_grouped_by_checkpoint_in_order() -> None:
    rows: list[dict[str, Any]] = [
        {"kind": "interject", "payload": {"text": "mind the cost", "to": "agent-b"}, "checkpoint": 2},
        {"kind": "pause", "payload": {}, "checkpoint": 2},
        {"kind": "resume", "payload": None, "checkpoint": 2},
        {"kind": "set_contentiousness", "payload": {"value": 0.4}, "checkpoint": "3"},
        {"kind": "agenda", "payload": {"items": ["x"]}, "checkpoint": 3},          # not a command
        {"kind": "resume_debate", "payload": {"from_round": 1}, "checkpoint": None},  # a resume's own marker
        {"kind": "interject", "payload": {"text": "never took effect"}, "checkpoint": None},
        {"kind": "skip_to_conclusion", "checkpoint": 4},
        {"kind": "verdict", "payload": {"accept": True, "note": "fine"}, "checkpoint": 4},
        {"kind": "advance_stage", "payload": {"reason": "enough"}, "checkpoint": 4},
        {"kind": "stop", "payload": None, "checkpoint": 0},
    ]
    assert commands_by_checkpoint(rows) == {
        2: [Interject("mind the cost", to="agent-b"), Pause(), Resume()],
        3: [SetContentiousness(0.4)],
        4: [SkipToConclusion(), Verdict(True, "fine"), AdvanceStage("enough")],
        0: [Stop("stopped by the moderator")],
    }


def test_a_command_journalled_without_its_optional_fields_is_rebuilt_with_their_defaults() -> None:
    rows = [{"kind": "interject", "payload": {"text": "hi"}, "checkpoint": 1},
            {"kind": "stop", "payload": {"reason": ""}, "checkpoint": 1},
            {"kind": "verdict", "payload": {"accept": False}, "checkpoint": 1},
            {"kind": "advance_stage", "payload": {}, "checkpoint": 1}]
    assert commands_by_checkpoint(rows) == {1: [Interject("hi", to="both"), Stop("stopped by the moderator"),
                                                Verdict(False, ""), AdvanceStage("advanced by the moderator")]}


# -- the resumed run's channel -----------------------------------------------------------------

def test_journalled_commands_take_effect_at_their_own_checkpoint_only() -> None:
    recorded: dict[int, list[Command]] = {2: [Interject("a"), Pause()], 4: [Stop("x")]}
    channel = ReplayChannel(CommandChannel(), recorded)
    channel.at_checkpoint(1)
    assert channel.poll() is None
    channel.at_checkpoint(2)
    assert [channel.poll(), channel.poll(), channel.poll()] == [Interject("a"), Pause(), None]
    channel.at_checkpoint(3)
    assert channel.poll() is None
    channel.at_checkpoint(4)
    assert channel.poll() == Stop("x")
    assert recorded == {2: [Interject("a"), Pause()], 4: [Stop("x")]}, "the caller's journal rows were consumed"


def test_a_checkpoint_reached_again_does_not_replay_its_commands_twice() -> None:
    channel = ReplayChannel(CommandChannel(), {1: [Interject("once")]})
    channel.at_checkpoint(1)
    assert channel.poll() == Interject("once")
    channel.at_checkpoint(1)
    assert channel.poll() is None


def test_live_commands_wait_until_the_replay_has_caught_up_and_every_journalled_command_took_effect() -> None:
    live = CommandChannel()
    channel = ReplayChannel(live, {3: [Pause()]})
    channel.send(Interject("live"))  # a person pressing a key during the replay
    channel.at_checkpoint(1)
    assert channel.poll() is None, "a live command landed among the journalled events"
    channel.caught_up = True
    assert channel.poll() is None, "a live command went before a journalled one still to come"
    channel.at_checkpoint(3)
    assert channel.poll() == Pause()
    assert channel.poll() == Interject("live")
    assert channel.poll() is None


def test_a_stop_sent_to_the_resumed_run_cancels_the_turn_being_generated() -> None:
    live = CommandChannel()
    channel = ReplayChannel(live, {})
    cancelled: list[bool] = []
    channel.on_stop(lambda: cancelled.append(True))
    channel.send(Stop("enough"))
    assert cancelled == [True]
    assert live.poll() == Stop("enough")


async def test_inside_a_pause_journalled_commands_come_first_then_the_live_channel_once_caught_up() -> None:
    live = CommandChannel()
    channel = ReplayChannel(live, {1: [Interject("while paused"), Resume()]})
    channel.at_checkpoint(1)
    assert await channel.next() == Interject("while paused")
    assert await channel.next() == Resume()
    channel.caught_up = True
    live.send(Stop("live"))
    assert await asyncio.wait_for(channel.next(), 1) == Stop("live")


async def test_a_pause_the_journal_holds_without_its_resume_is_resumed_not_waited_on() -> None:
    live = CommandChannel()
    channel = ReplayChannel(live, {})
    live.send(Stop("a live key pressed during the replay"))
    assert await channel.next() == Resume()
    assert live.poll() == Stop("a live key pressed during the replay"), "the live command was taken during the replay"


async def test_a_pause_that_would_swallow_journalled_commands_of_later_checkpoints_is_an_error() -> None:
    channel = ReplayChannel(CommandChannel(), {5: [Stop("x")]})
    with pytest.raises(ResumeError) as error:
        await channel.next()
    assert str(error.value) == ("the journal's moderator commands do not fit the run's checkpoints; "
                                "it cannot be resumed exactly")


# -- the journalled replies --------------------------------------------------------------------

def test_replies_are_read_from_the_journal_rows() -> None:
    rows = [{"role": "agent-a", "kind": "chat", "prompt_sha256": "s1", "reply": "r1", "details": {"tokens": 3}},
            {"role": "human", "kind": "person", "prompt_sha256": "s2", "reply": None, "details": None}]
    assert replies_of({"replies": rows}) == [Reply("agent-a", "chat", "s1", "r1", {"tokens": 3}),
                                             Reply("human", "person", "s2", None, {})]
    assert replies_of({"replies": None}) == replies_of({}) == []


def test_a_reply_is_served_once_to_the_same_role_kind_and_prompt_oldest_first() -> None:
    first, second = Reply("juror-1", "chat", "p", "first"), Reply("juror-1", "chat", "p", "second")
    log = ReplayLog([Reply("juror-2", "chat", "p", "other role"), Reply("juror-1", "score", "p", "other kind"),
                     Reply("juror-1", "chat", "q", "other prompt"), first, second])
    assert log.take("juror-1", "chat", "p") == first
    assert log.take("juror-1", "chat", "p") == second
    assert log.take("juror-1", "chat", "p") is None, "a call the interruption cut off must be asked live"
    assert [r.reply for r in log.left] == ["other role", "other kind", "other prompt"]


def test_replies_are_served_only_inside_the_replay_and_recorded_only_inside_a_recording() -> None:
    log = ReplayLog([Reply("agent-a", "chat", "p", "kept")])
    assert replayed("agent-a", "chat", "p") is None
    with replaying(log):
        assert replayed("agent-a", "chat", "p") == Reply("agent-a", "chat", "p", "kept")
    record(Reply("agent-a", "chat", "q", "nowhere to go"))  # a run outside a driver: nothing kept, no error
    with recording() as outbox:
        record(Reply("agent-a", "chat", "q", "live"))
    assert outbox == [Reply("agent-a", "chat", "q", "live")]


async def test_the_person_is_asked_live_and_the_answer_kept_then_served_from_the_journal_on_resuming() -> None:
    asked: list[str] = []

    async def ask() -> list[str]:
        asked.append("asked")
        return ["prix", "coût"]

    with recording() as outbox:
        answer = await person_answer("Which subtopics?", ask, encode=lambda v: {"items": v}, decode=lambda v: v["items"])
    assert answer == ["prix", "coût"] and asked == ["asked"]
    assert outbox == [Reply(PERSON_ROLE, "person", prompt_sha256("person", "Which subtopics?"),
                            '{"items": ["prix", "coût"]}')]
    with replaying(ReplayLog(outbox)):
        again = await person_answer("Which subtopics?", ask, encode=lambda v: {"items": v}, decode=lambda v: v["items"])
    assert again == ["prix", "coût"] and asked == ["asked"], "the person was asked again"


async def test_a_journalled_empty_answer_of_the_person_is_served_as_empty() -> None:
    async def ask() -> str:
        raise AssertionError("the person was asked again")

    sha = prompt_sha256("person", "Anything to add?")
    with replaying(ReplayLog([Reply(PERSON_ROLE, "person", sha, None)])):
        assert await person_answer("Anything to add?", ask, decode=lambda v: v) is None


# -- a prompt's hash -----------------------------------------------------------------------------

def test_a_prompt_s_hash_tells_apart_everything_that_was_asked() -> None:
    msgs = [Message("system", "be brief"), Message("user", "Is it dengue?")]
    base = prompt_sha256("chat", msgs)
    others = {
        prompt_sha256("score", msgs),
        prompt_sha256("chat", [Message("user", "be brief"), Message("user", "Is it dengue?")]),
        prompt_sha256("chat", [Message("system", "be brief"), Message("user", "Is it malaria?")]),
        prompt_sha256("chat", msgs, schema={"type": "object"}),
        prompt_sha256("chat", msgs, extra=["Dengue", "Malaria"]),
        prompt_sha256("chat", msgs, extra=["Malaria", "Dengue"]),
        prompt_sha256("person", "Is it dengue?"),
    }
    assert base not in others and len(others) == 7
    assert prompt_sha256("chat", list(msgs)) == base == prompt_sha256("chat", tuple(msgs))


def test_a_prompt_s_hash_takes_any_value_as_what_was_asked_beside_the_messages() -> None:
    """``schema`` and ``extra`` are typed ``Any``: a value JSON cannot write (a path, a fraction)
    is hashed by its text rather than failing the call it belongs to."""
    msgs = [Message("user", "Which file?")]
    assert prompt_sha256("chat", msgs, extra=Fraction(1, 3)) == prompt_sha256("chat", msgs, extra="1/3")
    assert prompt_sha256("chat", msgs, extra=PurePosixPath("/a")) != prompt_sha256("chat", msgs, extra=PurePosixPath("/b"))


def test_a_prompt_s_hash_is_the_one_journals_already_hold() -> None:
    """Journals keep each reply with the hash of its prompt, and a resume matches on it: a hash
    spelled otherwise by a later version would ask every model again. Pinned values: a prompt
    with a schema (keys in any order hash alike) and one that is not ASCII."""
    msgs = [Message("system", "Réponds en JSON."), Message("user", "Fièvre et éruption : dengue ?")]
    schema = {"type": "object", "properties": {"label": {"type": "string"}}}
    assert prompt_sha256("chat", msgs, schema=schema) == PINNED_CHAT
    assert prompt_sha256("chat", msgs, schema=dict(reversed(list(schema.items())))) == PINNED_CHAT
    assert prompt_sha256("score", msgs, extra=["Dengue", "Zika"]) == PINNED_SCORE
    assert prompt_sha256("person", "Quels sous-thèmes ?") == PINNED_PERSON


PINNED_CHAT = "1e089f20af005aba63814aeeab75d28cc3e90b1b4f63ad0ba86f942505f30454"
PINNED_SCORE = "574213a7b982fcb33d24c02bd4e3b7b5797a5a92862deb85c05abed8d611e39a"
PINNED_PERSON = "912059081f06b0b6530fde3168ad9c6affd8312a7ee7bb4a7eb4872e2df7e27b"


# -- resuming a toy protocol ---------------------------------------------------------------------

class Toy:
    """A protocol small enough to read: a start, then per round a checkpoint, the person's
    answer and a turn that says it, then an end. ``asked`` lists the rounds the person was asked
    live; ``closed`` says whether the run was closed (its ``finally`` ran)."""

    def __init__(self, rounds: int = 3, say: Callable[[int, str], str] = lambda r, a: f"round {r}: {a}", *,
                 finish: bool = True) -> None:
        self.rounds, self.say, self.finish = rounds, say, finish
        self.asked: list[int] = []
        self.closed = False
        self.interjections: list[tuple[int, list[str]]] = []

    async def run(self, channel: CommandChannel) -> AsyncGenerator[Event, None]:
        moderation = Moderation(DEBATE, ("agent-a",), channel)
        try:
            yield DebateStarted(DEBATE, "toy", "t", "s", {}, ())
            for r in range(1, self.rounds + 1):
                async for event in moderation.checkpoint(r):
                    yield event
                if moderation.stopped:
                    break
                self.interjections.append((r, moderation.take_interjections("agent-a")))

                async def ask(r: int = r) -> str:
                    self.asked.append(r)
                    return f"answer {r}"

                answer = await person_answer(f"round {r}?", ask)
                yield TokenDelta(DEBATE, "agent-a", "…")
                yield turn(r, self.say(r, answer))
            if self.finish:
                yield DebateFinished(DEBATE, "finished", moderation.stop_reason or "done", {})
        finally:
            self.closed = True


async def journalled(toy: Toy, commands: Mapping[int, Sequence[Command]] | None = None, *, cut_after: int | None = None
                     ) -> dict[str, Any]:
    """Run ``toy`` as the driver does, journalling in memory what the journal would, and cut it
    after ``cut_after`` counted events (the process dying): the debate as the journal holds it."""
    channel = CommandChannel()
    debate: dict[str, Any] = {"id": DEBATE, "events_recorded": 0, "turns": [], "moderator_events": [], "replies": []}
    run = toy.run(channel)
    with recording() as outbox:
        async for event in run:
            debate["replies"] += [{"role": r.role, "kind": r.kind, "prompt_sha256": r.prompt_sha256, "reply": r.reply,
                                   "details": r.details} for r in outbox]
            outbox.clear()
            if isinstance(event, TurnFinished):
                for command in (commands or {}).get(event.round, []):
                    channel.send(command)
                debate["turns"].append({"seq": len(debate["turns"]) + 1, "role": event.role, "kind": event.kind,
                                        "round": event.round, "text": event.text})
            if isinstance(event, ModeratorActed):
                debate["moderator_events"].append({"kind": event.kind, "payload": event.payload,
                                                   "checkpoint": event.checkpoint})
            if counted(event):
                debate["events_recorded"] += 1
                if debate["events_recorded"] == cut_after:
                    break
    await run.aclose()
    return debate


async def resumed(debate: dict[str, Any], toy: Toy, channel: CommandChannel | None = None) -> list[Event]:
    return [e async for e in resume(debate, toy.run, channel=channel)]


def shown(events: list[Event]) -> list[tuple[Any, ...]]:
    """What a resumed run gives its driver, readably."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        if isinstance(e, TurnFinished):
            out.append(("turn", e.round, e.text))
        elif isinstance(e, DebateResumed):
            assert e.debate_id == DEBATE, "a resume marker for another debate"
            out.append(("resumed", e.from_round))
        elif isinstance(e, ModeratorActed):
            out.append(("command", e.kind, e.checkpoint))
        else:
            out.append((type(e).__name__,))
    return out


async def test_a_resume_drops_the_journalled_events_says_where_it_resumed_and_goes_on_live() -> None:
    debate = await journalled(Toy(), cut_after=3)  # started, round 1's turn, round 2's turn: cut
    toy = Toy()
    events = await resumed(debate, toy)
    assert shown(events) == [("resumed", 2), ("TokenDelta",), ("turn", 3, "round 3: answer 3"), ("DebateFinished",)]
    assert toy.asked == [3], "the person was asked again for an answer the journal holds"
    assert toy.closed


async def test_a_resume_of_a_debate_that_recorded_nothing_runs_it_whole_from_round_zero() -> None:
    toy = Toy(rounds=1)
    events = await resumed({"id": DEBATE, "events_recorded": 0}, toy)
    assert shown(events) == [("resumed", 0), ("DebateStarted",), ("TokenDelta",), ("turn", 1, "round 1: answer 1"),
                             ("DebateFinished",)]
    assert toy.asked == [1]


async def test_live_commands_take_effect_at_once_when_the_journal_holds_no_event() -> None:
    live = CommandChannel()
    live.send(Interject("from the start"))
    toy = Toy(rounds=1)
    events = await resumed({"id": DEBATE, "events_recorded": 0}, toy, live)
    assert toy.interjections == [(1, ["from the start"])]
    assert ("command", "interject", 1) in shown(events)


async def test_live_commands_wait_for_the_replay_even_when_the_journal_holds_no_command() -> None:
    live = CommandChannel()
    live.send(Interject("live note"))
    toy = Toy()
    events = await resumed(await journalled(Toy(), cut_after=3), toy, live)
    assert toy.interjections == [(1, []), (2, []), (3, ["live note"])]
    assert shown(events)[:2] == [("resumed", 2), ("command", "interject", 3)]


async def test_the_round_resumed_from_is_the_last_journalled_event_s_that_has_a_round() -> None:
    debate = await journalled(Toy(rounds=2), {1: [Interject("a note")]}, cut_after=3)
    # started, round 1's turn, the interjection (at round 2's checkpoint): cut before round 2's turn
    assert [m["kind"] for m in debate["moderator_events"]] == ["interject"]
    events = await resumed(debate, Toy(rounds=2))
    assert shown(events)[0] == ("resumed", 2)
    first = await journalled(Toy(rounds=2), cut_after=1)  # only the start: it has no round
    assert shown(await resumed(first, Toy(rounds=2)))[0] == ("resumed", 0)


async def test_a_resume_of_a_journal_that_holds_every_event_but_the_end_says_so_before_the_end() -> None:
    toy = Toy(rounds=4)  # every journalled turn is checked against its own row, the fourth as the first
    assert shown(await resumed(await journalled(Toy(rounds=4)), toy)) == [("resumed", 4), ("DebateFinished",)]
    assert toy.asked == []


async def test_a_resume_with_nothing_left_to_run_still_says_it_resumed_once() -> None:
    """A run whose every event the journal holds, and that ends without a further event."""
    toy = Toy(rounds=2, finish=False)
    assert shown(await resumed(await journalled(Toy(rounds=2, finish=False)), toy)) == [("resumed", 2)]
    assert toy.asked == []


async def test_a_debate_journalled_without_its_replies_is_refused_before_the_protocol_starts() -> None:
    started: list[bool] = []

    def start(channel: CommandChannel) -> AsyncIterator[Event]:
        started.append(True)
        return Toy().run(channel)

    with pytest.raises(ResumeError) as error:
        [e async for e in resume({"id": DEBATE, "events_recorded": None}, start)]
    assert str(error.value) == (f"debate {DEBATE} was journalled by a Symposium that did not keep its models' replies "
                                "(before journal layout v5), so it cannot be resumed exactly; start it again")
    assert started == []


async def test_a_replayed_turn_that_differs_from_the_journalled_one_is_refused_naming_it() -> None:
    debate = await journalled(Toy(), cut_after=4)
    why = ("; the protocol, its settings or its models changed since the debate was journalled, so it cannot be "
           "resumed exactly")
    for field, value in (("text", "round 2: something else"), ("role", "agent-b"), ("kind", "rebuttal"), ("round", 9)):
        changed = {**debate, "turns": [dict(t) for t in debate["turns"]]}
        changed["turns"][1][field] = value
        with pytest.raises(ResumeError) as error:
            await resumed(changed, Toy())
        turn2 = changed["turns"][1]
        assert str(error.value) == (f"debate {DEBATE}: replaying the journal produced turn 2 ({turn2['role']}, "
                                    f"round {turn2['round']}) differently" + why), field
    fewer = {**debate, "turns": debate["turns"][:1]}
    with pytest.raises(ResumeError) as error:
        await resumed(fewer, Toy())
    assert str(error.value) == f"debate {DEBATE}: replaying the journal produced a turn the journal does not hold" + why


async def test_journalled_commands_take_effect_again_where_they_did_and_live_ones_after_the_replay() -> None:
    commands = {1: [Interject("first note")], 2: [Interject("second note")]}
    debate = await journalled(Toy(), commands, cut_after=5)  # start, turn 1, note 1, turn 2, note 2: cut
    assert [(m["payload"]["text"], m["checkpoint"]) for m in debate["moderator_events"]] == [
        ("first note", 2), ("second note", 3)]
    live = CommandChannel()
    live.send(Interject("live note"))  # pressed at once on resuming: must not land among the journalled events
    toy = Toy()
    events = await resumed(debate, toy, live)
    assert shown(events)[:1] == [("resumed", 3)]
    assert toy.interjections == [(1, []), (2, ["first note"]), (3, ["second note", "live note"])]
    assert [m for m in shown(events) if m[0] == "command"] == [("command", "interject", 3)]


async def test_a_stop_journalled_at_a_checkpoint_stops_the_replayed_run_there() -> None:
    debate = await journalled(Toy(), {1: [Stop("enough")]})  # cut before its end was written
    assert debate["moderator_events"] == [{"kind": "stop", "payload": {"reason": "enough"}, "checkpoint": 2}]
    toy = Toy()
    events = await resumed(debate, toy)
    assert shown(events) == [("resumed", 2), ("DebateFinished",)]
    assert isinstance(events[-1], DebateFinished) and events[-1].stop_reason == "enough"
    assert toy.asked == [], "the stopped debate went on"


async def test_the_consumer_of_a_resumed_run_is_not_served_journalled_replies() -> None:
    """The replay's context is set within each step of the run, never across a yield: code that
    handles an event (the driver, the screen) asking a model must ask it live."""
    debate = await journalled(Toy(), cut_after=2)
    sha = prompt_sha256("person", "round 9?")  # journalled, and never asked by the run
    seen: list[Reply | None] = []
    async for _ in resume({**debate, "replies": [*debate["replies"], {"role": PERSON_ROLE, "kind": "person",
                                                                       "prompt_sha256": sha, "reply": '"x"'}]}, Toy().run):
        seen.append(replayed(PERSON_ROLE, "person", sha))
    assert len(seen) == 6 and all(s is None for s in seen)


async def test_a_resumed_run_closed_early_closes_the_protocol_s_run() -> None:
    debate = await journalled(Toy(), cut_after=2)
    toy = Toy()
    events = resume(debate, toy.run)
    assert isinstance(events, AsyncGenerator)
    assert isinstance(await events.__anext__(), DebateResumed)
    await events.aclose()
    assert toy.closed

