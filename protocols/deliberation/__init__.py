"""Moderated deliberation: a moderator agent, two or more deliberator agents and the person as a
deliberator, with an analyzer in the background (Frieso Turkstra, Sara Nabhani, Khalid Al-Khatib,
"ArgsBase: A Multi-Agent Interface for Structured Human–AI Deliberation", sections 3 and 5,
appendix A.1).

Section 3: the Moderator "initiates the session by setting the agenda ... Throughout the
conversation, the Moderator manages turn-taking, making sure no agent speaks twice in a row and
that the human user participates at regular intervals." The person "plays an active role as the
third deliberator. They initiate the session by proposing a topic ... The moderator ensures
that the user contributes regularly, at least once every three turns". Section 5: "some of the
rules are programmatically enforced (e.g., preventing consecutive turns by the same speakers)
and the moderator is only tasked with turn-management if none of the constraints apply." Figure
7 (the turn-management prompt): "The list of possible speakers excludes the most recent speaker.
This prompt is invoked only when the user has spoken within the last three turns and each model
has contributed at least once within the last five turns."

The turn rules, enforced by code (:func:`eligible`), in order:

1. nobody speaks twice in a row;
2. the person speaks at least once in every three consecutive turns: when neither of the last
   two turns was theirs, the person is next. (Section 3's "at least once every three turns";
   Figure 7's caption, "spoken within the last three turns", would allow three turns without
   the person. We take the stricter reading, the one the person is told.)
3. a model (the moderator or a deliberator) not heard in the last five turns is next (Figure 7);
   when several are, the moderator chooses among them. This one yields to rule 2, so with many
   deliberators it is a priority, not a guarantee;
4. otherwise the moderator chooses among everyone but the last speaker.

The moderator's choice (:func:`resolve_choice`) is structured output with an enum of the
eligible names. Its reply is untrusted: anything that is not exactly one eligible name (after
:func:`~protocols.measures.labels.normalize_label`) is replaced by the code fallback, the eligible
speaker who has waited longest, and the reason is recorded. Every turn's selection is journalled
as ``JudgementMade(kind="next-speaker")`` with the eligible set, the rule and who decided
(``rule``, ``moderator`` or ``fallback``).

The session (choices of ours where the paper is silent):

* turn 0 is the person's topic (the person "initiates the session by proposing a topic"); turn 1
  is the moderator's agenda. ``max_turns`` counts the turns after the agenda.
* When the moderator is to speak, the speaker after it is chosen first, so the moderator can
  hand over by name (Figure 4: "The next speaker is {next_speaker}").
* Reply length (section 7.1: unrestricted output "disrupt[s] the flow of discussion"): models
  get ``turn_tokens`` and a word cap in the prompt (75 words, Figure 5); a reply over the cap is
  shown and passed on cut to the cap, with a note, and the journal's raw keeps all of it. The
  person's words are never cut.
* The person's seat is an async callable ``human_turn(prompt) -> str | None`` the caller
  supplies (the TUI's input box, stdin, a script). An empty reply is a pass: the turn counts
  and is journalled as ``kind="pass"``. ``None`` ends the deliberation (the users of section 6.3
  asked for "a button to signal the end of the deliberation").
* The analyzer (:mod:`protocols.measures.analyzer`) runs every ``analyze_every`` turns and at the end.
* Commands: ``Stop`` ends at once; ``SkipToConclusion`` goes to the final analysis; ``Interject``
  reaches the models' next turns as a note from the host.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from pydantic.dataclasses import dataclass as pydantic_dataclass

from backends.base import Message
from protocols.core.agents import Agent
from protocols.core.events import (
    CallRecord,
    Citation,
    DebateFinished,
    DebateStarted,
    Event,
    JudgementMade,
    ModeratorActed,
    Participant,
    PhaseChanged,
    Status,
    TokenDelta,
    TurnFinished,
    TurnStarted,
)
from protocols.core.evidence import NO_EVIDENCE, Grounding
from protocols.core.moderation import CommandChannel, Honoured, Moderation
from protocols.core.params import CONFIG, REPLY_LENGTHS, Profile, from_description, param, token_limit
from protocols.core.replies import person_answer
from protocols.core.roles import HUMAN as PERSON  # the protocol's roles, by their shared names
from protocols.core.roles import MODERATOR
from protocols.core.text import clip, listed
from protocols.core.untrusted import MAX_INPUT_CHARS, json_string
from protocols.deliberation.present import present
from protocols.deliberation.sample import SAMPLES
from protocols.measures.analyzer import ANALYSIS_TOKENS, Analysis, Analyzer
from protocols.measures.labels import normalize_label

HumanTurn = Callable[[str], Awaitable[str | None]]
"""The person's seat: given the prompt, their reply; ``""`` passes, ``None`` ends the session."""


HONOURED = Honoured(interject=("deliberator-", MODERATOR), skip_to="the end: no further turns, then the final analysis if one is on")
"""The person's commands a deliberation honours: an interjection reaches a deliberator's (or the
moderator agent's) next turn as a note from the host; there is no contentiousness to set."""
PERSON_WINDOW = 3  # the person speaks in every three consecutive turns (section 3)
MODEL_WINDOW = 5  # each model speaks within five turns (Figure 7)


@dataclass(frozen=True)
class Roster:
    """Who may speak: the moderator, the deliberators (roles ``deliberator-1`` …) and the person,
    with the names the models see."""

    deliberators: tuple[str, ...]
    person_name: str = "Person"

    @property
    def speakers(self) -> tuple[str, ...]:
        return (MODERATOR, *self.deliberators, PERSON)

    @property
    def models(self) -> tuple[str, ...]:
        return (MODERATOR, *self.deliberators)

    def name(self, role: str) -> str:
        if role == PERSON:
            return self.person_name
        return role.replace("-", " ").capitalize()


def eligible(history: Sequence[str], roster: Roster) -> tuple[list[str], str]:
    """Who may speak next after ``history`` (roles, oldest first), and the rule that decided."""
    last = history[-1] if history else None
    others = [s for s in roster.speakers if s != last]
    recent = history[-(PERSON_WINDOW - 1):]
    if len(history) >= PERSON_WINDOW - 1 and PERSON not in recent:
        return [PERSON], "the person speaks at least once every three turns"
    if len(history) >= MODEL_WINDOW:
        overdue = [s for s in others if s in roster.models and s not in history[-MODEL_WINDOW:]]
        if overdue:
            return overdue, "not heard in the last five turns"
    return others, "anyone but the last speaker"


def longest_waiting(candidates: Sequence[str], history: Sequence[str]) -> str:
    """The candidate whose last turn is furthest back (never spoken: first); ties by order."""
    def last_turn(role: str) -> int:
        return max((i for i, s in enumerate(history) if s == role), default=-1)
    return min(candidates, key=last_turn)


@dataclass(frozen=True)
class Choice:
    role: str
    chosen_by: str  # "rule" (one eligible speaker), "moderator", "fallback"
    notes: tuple[str, ...] = ()


def resolve_choice(raw: str, candidates: Sequence[str], roster: Roster, history: Sequence[str]) -> Choice:
    """Read the moderator's choice among ``candidates``; anything else → :func:`longest_waiting`."""
    text = raw[:MAX_INPUT_CHARS] if isinstance(raw, str) else ""
    key = normalize_label(json_string(text, "next_speaker") or text)
    for role in candidates:
        if key and key in (normalize_label(roster.name(role)), normalize_label(role)):
            return Choice(role, "moderator")
    fallback = longest_waiting(candidates, history)
    names = ", ".join(roster.name(r) for r in candidates)
    note = f"the moderator's choice {clip(text, 40)!r} is not one of {names}: {roster.name(fallback)}, who has waited longest, speaks"
    return Choice(fallback, "fallback", (note,))


def cap_words(text: str, cap: int) -> tuple[str, str | None]:
    """``text`` cut to ``cap`` words (with "…") and a note, or unchanged and ``None``."""
    words = text.split()
    if len(words) <= cap:
        return text.strip(), None
    return " ".join(words[:cap]) + " …", f"shown cut to {cap} words (the reply had {len(words)}; the journal's raw keeps it all)"


MODERATOR_SYSTEM = (  # Figure 4, without its per-turn parts (the next speaker comes with each request)
    "You are the Moderator in a structured multi-party discussion with {n} participants: {names}. "
    "Your goal is clarity, depth, and progress, not debate. Be neutral, fair, concise, and polite. "
    "Use partial agreements to move forward. Alternate between directives, summaries, and clarifying "
    "questions. Do not force the conversation in one direction. Do not refer to yourself as the moderator. "
    "No more than {cap} words.\nThe topic:\n<<<\n{topic}\n>>>"
)
DELIBERATOR_SYSTEM = (  # Figure 5, the concise deliberator prompt
    "You are one of the participants in a structured deliberation with {others}. Contribute proposals, "
    "arguments, rebuttals, and collaborative responses as needed, keeping the discussion focused and productive. "
    "Respond in clear, natural paragraphs. Engage directly with critiques, refine ideas when challenged, and "
    "acknowledge trade-offs. Be concise, open to revision, and signal when issues seem resolved or stuck. "
    "No more than {cap} words. Do not mention your role or name. Respond immediately without a preamble.\n"
    "The topic:\n<<<\n{topic}\n>>>"
)
TURNS_SYSTEM = "You manage turn-taking in a discussion. You answer only with the name of the next speaker."


@pydantic_dataclass(config=CONFIG)
class DeliberationConfig:
    """One deliberation's settings (journalled with it). The parameters declared with
    :func:`param` are the ones the command line and the app offer."""

    topic: str
    title: str = ""
    max_turns: int = param(9, ge=1, le=60, section="Symposium", label="Turns", essential=True,
                           description="turns after the moderator's agenda")
    word_cap: int = param(75, ge=10, le=500, section="ArgsBase, Figure 5", label="Words per reply", step=REPLY_LENGTHS,
                          description="reply length asked of the models (words): 'No more than 75 words'")
    turn_tokens: int = token_limit(140, "reply length limit for the models (tokens)")
    select_tokens: int = param(24, ge=4, le=256, section="Symposium", label="Speaker choice limit (tokens)",
                               step=REPLY_LENGTHS,
                               description="reply length limit of the moderator's choice of the next speaker")
    analyze_every: int = param(4, ge=0, le=60, section="ArgsBase", label="Analyze every N turns", step="The analysis",
                               description="update the analyzer panel every N turns (0: only at the end)")
    analysis_tokens: int = token_limit(ANALYSIS_TOKENS, "reply length limit for each part of the analysis", label="Analysis limit (tokens)")
    person_name: str = param("Person", section="Symposium", label="Your name", essential=True,
                             description="the name the models call you")
    profile: Profile = "standard"

    def describe(self) -> dict[str, Any]:
        return asdict(self)


    @classmethod
    def from_description(cls, data: dict[str, Any]) -> DeliberationConfig:
        """The config journalled by :meth:`describe` (to resume a debate)."""
        return from_description(cls, data)

@dataclass
class DeliberationAgents:
    moderator: Agent
    deliberators: list[Agent]
    analyzer: Agent | None = None


@dataclass
class _Seat:
    """A model's append-only conversation (its KV cache is reused) and what it has not heard yet."""

    messages: list[Message] = field(default_factory=list)
    unheard: list[str] = field(default_factory=list)


class Deliberation:
    """One deliberation. Iterate :meth:`run` for its events."""

    def __init__(self, config: DeliberationConfig, agents: DeliberationAgents, human_turn: HumanTurn, *,
                 debate_id: str, channel: CommandChannel | None = None, evidence: Grounding = NO_EVIDENCE) -> None:
        roles = [a.role for a in agents.deliberators]
        if len(roles) < 2 or len(set(roles)) != len(roles) or {MODERATOR, PERSON} & set(roles):
            raise ValueError("a deliberation needs two or more deliberators with distinct roles (deliberator-1, deliberator-2, …)")
        if agents.moderator.role != MODERATOR:
            raise ValueError(f"the moderator agent's role must be {MODERATOR!r}")
        if agents.analyzer is not None and agents.analyzer.role in (*roles, MODERATOR, PERSON):
            raise ValueError(f"the analyzer needs a role of its own, not {agents.analyzer.role!r} "
                             "(dataclasses.replace(agent, role='analyzer') lets one model play both)")
        roster = Roster(tuple(roles), config.person_name)
        if len({normalize_label(roster.name(r)) for r in roster.speakers}) != len(roster.speakers):
            raise ValueError(f"the person's name {config.person_name!r} is already a speaker's name")
        if config.max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.config = config
        self.agents = agents
        self.human_turn = human_turn
        self.debate_id = debate_id
        self.roster = roster
        self._by_role = {a.role: a for a in [agents.moderator, *agents.deliberators]}
        self.moderation = Moderation(debate_id, self.roster.models, channel)
        self.analyzer = Analyzer(agents.analyzer, max_tokens=config.analysis_tokens) if agents.analyzer else None
        self.seats = {role: _Seat() for role in [*self.roster.models, "turns"]}
        self.history: list[str] = []
        self.transcript: list[tuple[str, str]] = []
        self.selections: list[Choice] = []
        self.ended = False  # the person ended the session
        self._phase = "opening"
        #: The user's files (falsy when the session has none): each model's turn is shown the
        #: passages most relevant to the topic and its instruction and lists its claims' sources;
        #: the analyzer reads every checked citation.
        self.evidence = evidence
        self.cited: list[tuple[str, Citation]] = []

    # -- prompts ----------------------------------------------------------------------------------

    def _system(self, role: str) -> str:
        c, r = self.config, self.roster
        if role == "turns":
            return TURNS_SYSTEM
        if role == MODERATOR:
            names = ", ".join(r.name(s) for s in [*r.deliberators, PERSON])
            return MODERATOR_SYSTEM.format(n=len(r.deliberators) + 1, names=names, cap=c.word_cap, topic=c.topic.strip())
        others = ", ".join(r.name(s) for s in r.speakers if s != role)
        return DELIBERATOR_SYSTEM.format(others=others, cap=c.word_cap, topic=c.topic.strip())

    def _heard(self, role: str, text: str) -> None:
        """Record a turn: in the order, the transcript (unless a pass) and every model's (and the
        turn manager's) queue of what it has not heard yet."""
        line = f"{self.roster.name(role)}: {text or '(passes)'}"
        self.history.append(role)
        if text:
            self.transcript.append((self.roster.name(role), text))
        for name, seat in self.seats.items():
            if name != role:
                seat.unheard.append(line)

    def _request(self, seat_name: str, instruction: str) -> list[Message]:
        """The seat's conversation with what it has not heard yet and ``instruction`` appended."""
        seat = self.seats[seat_name]
        if not seat.messages:
            seat.messages.append(Message("system", self._system(seat_name)))
        notes = [f"Note from the host: {n}" for n in self.moderation.take_interjections(seat_name)] if seat_name != "turns" else []
        seat.messages.append(Message("user", "\n".join([*seat.unheard, *notes, instruction])))
        seat.unheard = []
        return seat.messages

    # -- choosing the next speaker ----------------------------------------------------------------

    async def _select(self, history: list[str], turn_no: int) -> AsyncIterator[Event]:
        """Choose who speaks after ``history`` (ending with the moderator when it is about to
        speak and hand over); the choice goes to :attr:`selections`."""
        candidates, rule = eligible(history, self.roster)
        call: CallRecord | None = None
        raw = ""
        if len(candidates) == 1:
            choice = Choice(candidates[0], "rule")
        else:
            moderator = self.agents.moderator
            names = [self.roster.name(r) for r in candidates]
            schema = {"type": "object", "properties": {"next_speaker": {"type": "string", "enum": names}}, "required": ["next_speaker"]}
            after = "The Moderator speaks next; choose who speaks after the Moderator. " if len(history) > len(self.history) else ""
            ask = (f"### Instruction:\nGiven the conversation so far, determine the next speaker. {after}Ensure a balanced "
                   f"participation. Options are: {', '.join(names)}. Respond with only the speaker's name exactly as listed.")
            selector = replace(moderator, session_key="moderator/turns")  # its own conversation and KV cache
            fit = selector.fit(self._request("turns", ask), self.config.select_tokens)
            completion, call = await selector.ask(fit.messages, purpose="turn-selection", schema=schema,
                                                  options=moderator.options.merged(max_tokens=self.config.select_tokens))
            self.seats["turns"].messages.append(Message("assistant", completion.text))
            raw = completion.text
            choice = resolve_choice(raw, candidates, self.roster, history)
            choice = replace(choice, notes=(*fit.notes, *choice.notes))
        self.selections.append(choice)
        yield JudgementMade(self.debate_id, MODERATOR, self.agents.moderator.model_id, "next-speaker", None, None, None,
                            choice.role, {"eligible": candidates, "rule": rule, "chosen_by": choice.chosen_by,
                                          "notes": list(choice.notes)}, raw, turn_no, call)

    def _rule_choice(self, role: str, rule: str, turn_no: int) -> JudgementMade:
        """A selection fixed by the protocol itself (the moderator's opening agenda)."""
        choice = Choice(role, "rule")
        self.selections.append(choice)
        return JudgementMade(self.debate_id, MODERATOR, self.agents.moderator.model_id, "next-speaker", None, None, None,
                             role, {"eligible": [role], "rule": rule, "chosen_by": "rule", "notes": []}, "", turn_no, None)

    # -- turns ------------------------------------------------------------------------------------

    async def _model_turn(self, role: str, turn_no: int, kind: str, instruction: str) -> AsyncIterator[Event]:
        agent = self._by_role[role]
        c = self.config
        history = self._request(role, instruction)
        tokens = self.evidence.reply_tokens(c.turn_tokens)
        grounded = self.evidence.ground(agent, history[:-1], history[-1].content,
                                        [f"{c.topic} {instruction} {' '.join(t for _, t in self.transcript[-2:])}"],
                                        reply_tokens=tokens)
        history[-1] = Message("user", grounded.request)
        request = grounded.request
        fit = agent.fit(history, tokens)
        turn = agent.turn(fit.messages, schema=self.evidence.schema(None, text_chars=c.word_cap * 8),
                          options=agent.options.merged(max_tokens=tokens))
        async for event in self.moderation.stream(turn, round_=turn_no, phase=self._phase, kind=kind):
            yield event
        completion = turn.completion
        assert completion is not None
        history.append(Message("assistant", completion.text))
        said = self.evidence.read(completion.text, free_text=True)
        self.cited += [(self.roster.name(role), cited) for cited in said.citations]
        shown, note = cap_words(said.text, c.word_cap)
        notes = [*grounded.notes, *fit.notes, *said.notes, *([note] if note else []),
                 *([f"cut off at max_tokens ({tokens})"] if completion.finish_reason == "length" else [])]
        yield TurnFinished(self.debate_id, role, agent.model_id, self._phase, turn_no, kind, text=shown,
                           raw=completion.text, call=turn.call(), parse_notes=tuple(notes), request=request,
                           citations=said.citations)
        self._heard(role, shown)

    async def _person_turn(self, turn_no: int, kind: str, text: str | None = None) -> AsyncIterator[Event]:
        """The person's turn (``text`` given: the topic). Sets :attr:`ended` when the seat returns ``None``."""
        yield TurnStarted(self.debate_id, PERSON, "human", self._phase, turn_no, kind)
        if text is None:
            prompt = f"Your turn, {self.config.person_name}. Topic: {clip(self.config.topic, 200)}"
            text = await person_answer(prompt, lambda: self.human_turn(prompt))  # kept for a resumed run
        if text is None:
            self.ended = True
            yield ModeratorActed(self.debate_id, "end", {"by": "person"}, turn_no)
            return
        text = text.strip()
        kind = kind if text else "pass"
        if text:
            yield TokenDelta(self.debate_id, PERSON, text)
        yield TurnFinished(self.debate_id, PERSON, "human", self._phase, turn_no, kind, text=text, raw=text, call=None,
                           parse_notes=() if text else ("the person passed",))
        self._heard(PERSON, text)

    def _moderator_instruction(self, next_role: str | None, opening: bool) -> str:
        c = self.config
        if next_role is None:
            return f"This is the last turn: thank everyone and sum up where the discussion stands, in at most {c.word_cap} words."
        what = ("Open the session: set the agenda (the topic's scope, the turn rules, the overall structure)"
                if opening else "Moderate: summarize, clarify or give a directive")
        return f"{what}, in at most {c.word_cap} words. The next speaker is {self.roster.name(next_role)}: address only them."

    # -- the run ------------------------------------------------------------------------------------

    async def _analyze(self, turn_no: int) -> AsyncIterator[Event]:
        if self.analyzer is None:
            return
        async for event in self.analyzer.events(self.debate_id, self.transcript, topic=self.config.topic, round_=turn_no,
                                                sources=self.evidence.sources(self.cited)):
            yield event

    async def run(self) -> AsyncIterator[Event]:
        c, a = self.config, self.agents
        people = [a.moderator, *a.deliberators, *([a.analyzer] if a.analyzer else [])]
        yield DebateStarted(self.debate_id, "deliberation", c.title or clip(c.topic, 60), c.topic, c.describe(),
                            (*(p.participant() for p in people), Participant(PERSON, "human", "human", details={"name": c.person_name})))
        yield PhaseChanged(self.debate_id, self._phase, 0)
        async for event in self._person_turn(0, "topic", c.topic):
            yield event
        yield self._rule_choice(MODERATOR, "the moderator opens the session by setting the agenda (section 3)", 1)
        status: Status = "finished"
        stop_reason = f"turn limit reached ({c.max_turns} turns after the agenda)"
        queued: str | None = MODERATOR
        analyzed = 0  # transcript length at the latest analysis
        last_turn = c.max_turns + 1
        for turn_no in range(1, last_turn + 1):
            async for event in self.moderation.checkpoint(turn_no):
                yield event
            if self.moderation.stopped:
                status, stop_reason = "stopped", self.moderation.stop_reason or "stopped"
                break
            if self.moderation.skip_requested:
                stop_reason = "the moderator skipped to the conclusion"
                break
            if turn_no == 2:
                self._phase = "deliberation"
                yield PhaseChanged(self.debate_id, self._phase, turn_no)
            if queued is None:
                async for event in self._select(self.history, turn_no):
                    yield event
                queued = self.selections[-1].role
            speaker, queued = queued, None
            if speaker == MODERATOR:
                if turn_no < last_turn:  # choose who follows, so the moderator can hand over by name
                    async for event in self._select([*self.history, MODERATOR], turn_no + 1):
                        yield event
                    queued = self.selections[-1].role
                instruction = self._moderator_instruction(queued, opening=turn_no == 1)
                async for event in self._model_turn(MODERATOR, turn_no, "agenda" if turn_no == 1 else "moderation", instruction):
                    yield event
            elif speaker == PERSON:
                async for event in self._person_turn(turn_no, "contribution"):
                    yield event
                if self.ended:
                    stop_reason = "the person ended the deliberation"
                    break
            else:
                async for event in self._model_turn(speaker, turn_no, "contribution", f"Your turn. No more than {c.word_cap} words."):
                    yield event
            async for event in self.moderation.checkpoint(turn_no):  # a Stop sent mid-turn cut it short
                yield event
            if self.moderation.stopped:
                status, stop_reason = "stopped", self.moderation.stop_reason or "stopped"
                break
            if turn_no > 1 and c.analyze_every and (turn_no - 1) % c.analyze_every == 0:
                async for event in self._analyze(turn_no):
                    yield event
                analyzed = len(self.transcript)
        if status == "finished" and len(self.transcript) != analyzed:
            async for event in self._analyze(len(self.history) - 1):
                yield event
        yield DebateFinished(self.debate_id, status, stop_reason, self.outcome())

    def outcome(self) -> dict[str, Any]:
        latest: Analysis | None = self.analyzer.latest if self.analyzer else None
        by = [s.chosen_by for s in self.selections]
        return {"turns": len(self.history), "order": self.history,
                "selections": {k: by.count(k) for k in ("rule", "moderator", "fallback")},
                "analysis": latest.to_json() if latest else None}


async def run(config: DeliberationConfig, agents: DeliberationAgents, human_turn: HumanTurn, *, debate_id: str,
              channel: CommandChannel | None = None, evidence: Grounding = NO_EVIDENCE) -> AsyncIterator[Event]:
    """Run one deliberation, yielding its events (the protocol's public entry point)."""
    async for event in Deliberation(config, agents, human_turn, debate_id=debate_id, channel=channel, evidence=evidence).run():
        yield event


# -- the protocol's definition (see protocols/core/definition.py): every interface is generated from it --

from collections.abc import Mapping  # noqa: E402 - the definition closes the module

from protocols.core.definition import Conclusion, Input, Person, ProtocolDefinition, Role  # noqa: E402
from protocols.core.moderation import Honoured  # noqa: E402
from protocols.core.roles import ANALYZER, DELIBERATOR, HUMAN, in_order  # noqa: E402


def _team(agents: Mapping[str, Agent]) -> DeliberationAgents:
    return DeliberationAgents(agents[MODERATOR], [agents[r] for r in in_order(agents, DELIBERATOR)], agents.get(ANALYZER))


def _start(config: DeliberationConfig, team: DeliberationAgents, debate_id: str, channel: CommandChannel,
           person: Person, evidence: Grounding) -> AsyncIterator[Event]:
    return run(config, team, person.speak, debate_id=debate_id, channel=channel, evidence=evidence)


def conclude(outcome: Mapping[str, Any]) -> Conclusion:
    """A deliberation reaches no verdict: say how long it ran and who chose the speakers."""
    turns = outcome.get("turns") or 0
    chosen = outcome.get("selections") or {}
    by = [f"{n} by {k}" for k, n in chosen.items() if n] if isinstance(chosen, Mapping) else []
    sentence = f"The deliberation ran {turns} turn{'s' if turns != 1 else ''}; it reaches no verdict of its own."
    if by:
        sentence += f" Speakers were chosen {listed(by)}."
    return Conclusion(sentence, f"{turns} turns, no verdict")

DEFINITION = ProtocolDefinition(
    name="deliberation",
    title="Moderated deliberation",
    summary="A moderator model, deliberator models and you; turn rules enforced (Turkstra et al., ArgsBase).",
    config_cls=DeliberationConfig,
    inputs=(
        Input("topic", "Topic", "textarea", example="Should phones be banned in schools?",
              help="what to deliberate (your opening turn): text, or @FILE"),
    ),
    roles=(
        Role(MODERATOR, "Moderator", example="smollm2-135m"),
        Role(DELIBERATOR, "Deliberators (model ids, comma separated)", "models", minimum=2, flag="--deliberators",
             aliases=("--deliberator",), example="smollm2-135m, gemma3-270m",
             help="the deliberators' models, comma-separated: two or more"),
        Role(ANALYZER, "Analyzer", optional=True, fallback=MODERATOR, disable="no_analysis",
             disable_help="no analyzer panel", help="the analyzer (default: the moderator's model, in a session of its own)"),
        Role(HUMAN, "You", "person", reads="line", script_flag="--human-script",
             script_help="your turns, one per line (blank: pass; /end or end of file: finish)"),
    ),
    prepare=lambda v: {"topic": v["topic"]},
    team=_team,
    start=_start,
    commands=HONOURED,
    conclude=conclude,
    present=present,
    samples=SAMPLES,
)
