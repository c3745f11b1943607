"""A human judge in the loop of a multi-agent panel (Haley Triem, "Tipping the Balance: Human
Intervention in Large Language Model Multiagent Debate", 2024, "Methodology").

Triem's mechanism, as this module runs it:

    "MULTIAGENT DEBATE: [...] three separate GPT-3.5 Turbo instances [...] each instructed to
    emulate one circuit judge." "each agent presented its opinion unaware of other opinions.
    Opinions were then consolidated into memory and shared with the next three agent instances
    before proceeding to the next round."  (three rounds: nine steps a debate)
    "HUMAN-AI DEBATE: [...] one of the GPT-3.5 Turbo models was replaced with human input."
    "All human agents were labeled as 'human judges', so the LLM instances (which were labeled
    in prompt as 'AI Agents') were 'aware' of human presence."  (prompts: Appendix i)

    for round r = 1 … R                        (moderator checkpoint before each round)
        for each seat s, in seat order:
            AI seat:    text = LLM_s(case, discussion log of rounds < r)
            human seat: text = the person's opinion (live) or the script's r-th turn
            stance(s, r) = clerk(text) ∈ labels ∪ {none}, confirmable by the person;
                           a script with a fixed stance gives it directly
        the round's statements join every AI seat's memory, each under its speaker's name
    outcome: the stance table, the changes per seat per round transition, whether each change
             moved toward the human's stance (protocols.humanloop.stance.analyze), the panel's decision

"One separate model instance per agent": every seat is its own backend session
(``backend.session(role)``): its own conversation and KV cache over weights loaded once, so a
seat sees exactly what Triem's separate instances saw, its own earlier statements plus the
shared log. Each seat's message history is append-only, so its cache is reused round to round.

Conditions: Triem's three phases. "synthetic" (phase 1): one model instance is told to
simulate the whole panel ("You are simulating a discussion between three judges ...";
"Proceed with round [n]. All three judges should speak in each round."), its output
appended to its one memory; each simulated judge's statement is then labelled as a seat of
its own (roles ``agent-1`` … by the judge's number; we ask the model to open each judge's
statement with "Judge n:" so the statements can be told apart, which the paper's human
labellers did by reading). "AI only" (phase 2, no human seat) and "human present" (phase 3).

Prompts: Appendix i's, word for word, for the appeal Triem studied (the default question,
labels and seat title), with the panel's size in words ("three appellate judges"); the
synthetic prompt adds only the "Judge k:" heading request above. Neither asks a seat to say
which position it takes: Triem asked for "a new point of reasoning that supports your
perspective" and a confidence, and labelled the stance afterwards (NONE when there was none).
For another question the first sentence names the question and its positions instead of the
Court of Appeals; the rest is Appendix i's. The case follows the prompt between <<< and >>>.
What each seat is shown of the previous round: every statement whole, under its speaker's name
(Triem's statements run to 1,300 characters, with the vote in the last sentence); only when
the seat's context window cannot hold them with room for its reply are they shortened, the
longest first and in the middle (the vote at the end stays), by :mod:`protocols.core.fitting`,
and the seat's turn then carries a note saying so.
At every step each seat states its confidence in its reasoning, 0-100 (Appendix i); it is
parsed (:func:`protocols.humanloop.stance.parse_confidence`), stored with the turn (``turns.confidence``)
and with the stance (the judgement's score), and tabled per seat and round in the analysis.
Volatility counts Triem's affirm / not-affirm changes (``binary_label``) two ways side by
side (see :mod:`protocols.humanloop.stance`): ours, changes between positions over the steps that take
one, and Triem's own count, every AI seat's every round transition (two per seat in three
rounds: the paper's 1,200 and 400 denominators) with NONE and HALLUCINATION coded 3. The clerk
may label a step HALLUCINATION (Appendix ii), as the paper's labellers did. The person is shown
to the others as "Human Judge" with the AI seats as "AI Judge n" (Appendix i, phase 3), or
blind: every seat, the person's included, is "Judge n" by its place at the table. The labels
default to Triem's affirm / reverse / remand (+ none and hallucination) for an appeal and
are configurable for any question.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic.dataclasses import dataclass as pydantic_dataclass

from backends.base import Message
from protocols.core.agents import Agent
from protocols.core.events import (
    AwaitingModerator,
    DebateFinished,
    DebateStarted,
    Event,
    JudgementMade,
    Participant,
    PhaseChanged,
    Status,
    TokenDelta,
    TurnFinished,
    TurnStarted,
)
from protocols.core.evidence import NO_EVIDENCE, Grounding
from protocols.core.fitting import Section, fit_sections
from protocols.core.moderation import CommandChannel, Honoured, Moderation
from protocols.core.params import CONFIG, REPLY_LENGTHS, Profile, from_description, param, token_limit
from protocols.core.replies import person_answer
from protocols.core.roles import HUMAN, SIMULATOR
from protocols.core.schemas import chars_for
from protocols.core.text import clip
from protocols.humanloop.present import present
from protocols.humanloop.sample import SAMPLES
from protocols.humanloop.stance import (
    LEGAL_LABELS,
    LEGAL_RUBRIC,
    NONE,
    RESERVED,
    Confirm,
    StanceReader,
    analyze,
    exact_label,
    parse_confidence,
    steps_from,
)
from protocols.humanloop.study import STUDY

HUMAN_ROLE = HUMAN
SIMULATOR_ROLE = SIMULATOR  # the one instance of the synthetic condition

HONOURED = Honoured(interject=("agent-", SIMULATOR_ROLE), skip_to="the outcome (no further rounds after this one)")
"""The moderator's commands the panel honours: an interjection reaches an AI seat's next
opinion (in the synthetic condition, the one instance that plays every judge); no
contentiousness (Triem's prompts have none)."""
#: The question of Triem's study; with it (and the legal labels) the prompts are Appendix i's.
APPEAL_QUESTION = "Should the court of appeals affirm, reverse, or remand the lower court's decision?"
#: Appendix i, after its first sentence, for the multiagent and human-AI phases.
APPENDIX_I_MULTIAGENT = (
    "Below is the case history and discussion log. You are debating step by step: in each turn of the debate, you "
    "will bring up a new point of reasoning that supports your perspective. Please cite relevant cases as evidence to "
    "support your reasoning. Then, rank your confidence in the soundness of your reasoning, on a scale of 0-100."
)
_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}

HumanTurn = Callable[[str], Awaitable[str]]
"""``human_turn(prompt) -> text``: the person's statement for one round (the TUI, stdin)."""


@dataclass(frozen=True)
class HumanScript:
    """A person's part written in advance (Triem's scripted human opinions).

    File format: an optional first line ``stance: LABEL`` (the fixed stance recorded for every
    turn, as Triem's scripts were "affirmative" or "non-affirmative"), then one statement per
    round, separated by lines holding only ``---``. When the rounds outnumber the statements,
    the last one is restated: the person holds their position."""

    turns: tuple[str, ...]
    stance: str | None = None

    @classmethod
    def parse(cls, text: str) -> HumanScript:
        lines = text.splitlines()
        stance = None
        first = next((i for i, line in enumerate(lines) if line.strip()), None)
        if first is not None and lines[first].strip().casefold().startswith("stance:"):
            stance = lines[first].split(":", 1)[1].strip() or None
            lines = lines[first + 1:]
        turns: list[str] = []
        current: list[str] = []
        for line in [*lines, "---"]:
            if line.strip() == "---":
                if "\n".join(current).strip():
                    turns.append("\n".join(current).strip())
                current = []
            else:
                current.append(line)
        if not turns:
            raise ValueError("the human script has no statements (separate them with lines holding only ---)")
        return cls(tuple(turns), stance)

    @classmethod
    def from_file(cls, path: str | Path) -> HumanScript:
        return cls.parse(Path(path).expanduser().read_text(encoding="utf-8"))

    def turn(self, round_: int) -> str:
        return self.turns[min(round_, len(self.turns)) - 1]


@dataclass(frozen=True)
class HumanSeat:
    """The seat a person takes: where at the table (1-based; ``None``: last), shown as
    "Human …" or ``blind``, and played live or from a ``script``."""

    position: int | None = None
    blind: bool = False
    script: HumanScript | None = None


@pydantic_dataclass(config=CONFIG)
class HumanloopConfig:
    """One panel discussion's settings (journalled with the debate). The parameters declared
    with :func:`param` are the ones the command line and the app offer."""

    #: Overrides for the bundled 135M/270M models (short statements they can finish).
    SMALL_MODEL_PROFILE: ClassVar[dict[str, Any]] = {"rounds": 2, "turn_tokens": 200, "stance_tokens": 60}

    case: str
    question: str = param(APPEAL_QUESTION, section="Triem", label="Question", essential=True,
                          description="what the panel decides")
    labels: tuple[str, ...] = LEGAL_LABELS
    rubric: dict[str, str] = field(default_factory=lambda: dict(LEGAL_RUBRIC))
    rounds: int = param(3, ge=1, le=20, section="Triem", label="Rounds", essential=True,
                        description="discussion rounds; every seat speaks once per round")
    seat_title: str = param("Judge", section="Triem", label="Seat title", step="The panel",
                            description="what the seats are called (e.g. Judge)")
    human: HumanSeat | None = None
    title: str = ""
    #: A new point of reasoning with cited authority and a confidence (Appendix i); in the
    #: synthetic condition each simulated judge gets this much within the one turn.
    turn_tokens: int = token_limit(600, "reply length limit of one seat's statement")
    stance_tokens: int = param(60, ge=8, le=512, section="Symposium", label="Clerk's reply limit (tokens)",
                               step=REPLY_LENGTHS, description="reply length limit of the stance clerk")
    condition: Literal["multiagent", "synthetic"] = param(
        "multiagent", section="Triem", label="Condition", step="The panel",
        description="multiagent: one instance per seat (phases 2 and 3); synthetic: one instance "
                    "simulates the whole panel (phase 1, no human seat)")
    simulated_judges: int = param(3, ge=2, le=9, section="Triem", label="Simulated judges", step="The panel",
                                  description="judges one instance simulates in the synthetic condition")
    #: ``None``: "affirm" when it is one of the labels, else any change of label counts.
    binary_label: str | None = param(None, section="Triem", label="Label counted as a change", step="Measures",
                                     description="the label whose gain or loss counts as a change of stance (default: "
                                                 "affirm when it is one of the labels, else any change of label)")
    profile: Profile = "standard"

    def __post_init__(self) -> None:
        if len(self.labels) < 2 or any(exact_label(label, ()) in RESERVED for label in self.labels):
            raise ValueError(f"give at least two positions; {' and '.join(map(repr, RESERVED))} are always added and "
                             "cannot be one of them")
        if self.human is not None and self.human.position is not None and self.human.position < 1:
            raise ValueError("the human's place at the table counts from 1")
        if self.condition not in ("multiagent", "synthetic"):
            raise ValueError(f"condition must be 'multiagent' or 'synthetic', got {self.condition!r}")
        if self.condition == "synthetic" and self.human is not None:
            raise ValueError("the synthetic condition is one model simulating the whole panel: it has no human seat")
        if not 2 <= self.simulated_judges <= 9:
            raise ValueError(f"simulated_judges must be 2-9, got {self.simulated_judges}")
        if self.binary_label is not None and exact_label(self.binary_label, self.labels) in (None, *RESERVED):
            raise ValueError(f"binary_label {self.binary_label!r} is not one of: {', '.join(self.labels)}")
        script = self.human.script if self.human else None
        if script is not None and script.stance is not None and exact_label(script.stance, self.labels) is None:
            raise ValueError(f"the script's stance {script.stance!r} is not one of: {', '.join((*self.labels, *RESERVED))}")

    def binary(self) -> str | None:
        """The label coded 1 when counting changes of mind (see ``binary_label``)."""
        if self.binary_label is not None:
            return exact_label(self.binary_label, self.labels)
        return "affirm" if "affirm" in self.labels else None

    def describe(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["phase"] = data.pop("condition")
        data["condition"] = self.analysis_condition()
        data["binary_label"] = self.binary()
        return data

    @classmethod
    def from_description(cls, data: dict[str, Any]) -> HumanloopConfig:
        """The config journalled by :meth:`describe` (to resume a debate): ``describe`` writes
        the condition under ``phase`` and the analysis's condition under ``condition``."""
        seat = data.get("human")
        human = None if seat is None else HumanSeat(
            position=seat.get("position"), blind=bool(seat.get("blind")),
            script=None if seat.get("script") is None else HumanScript(tuple(seat["script"]["turns"]), seat["script"].get("stance")))
        return from_description(cls, data, condition=data.get("phase", "multiagent"), human=human,
                                labels=tuple(data.get("labels") or LEGAL_LABELS))

    def analysis_condition(self) -> str:
        if self.condition == "synthetic":
            return "synthetic"
        return "AI only" if self.human is None else "human present"


@dataclass
class HumanloopAgents:
    """The AI seats in order (each becomes its own session, role ``agent-n``) and the clerk
    that labels stances (role ``clerk``)."""

    panel: list[Agent]
    clerk: Agent


@dataclass(frozen=True)
class _Seat:
    role: str
    name: str
    agent: Agent | None  # None: the person's seat


class Humanloop:
    """One run of the panel discussion. Iterate :meth:`run` for its events."""

    def __init__(self, config: HumanloopConfig, agents: HumanloopAgents, *, debate_id: str,
                 channel: CommandChannel | None = None, human_turn: HumanTurn | None = None,
                 confirm: Confirm | None = None, evidence: Grounding = NO_EVIDENCE) -> None:
        if not agents.panel:
            raise ValueError("the panel needs at least one AI seat")
        if config.human is not None and config.human.script is None and human_turn is None:
            raise ValueError("a live human seat needs a human_turn callable (or give the seat a script)")
        self.config = config
        self.debate_id = debate_id
        self.human_turn = human_turn
        self.seats = self._seat(agents.panel)
        self.simulator = dataclasses.replace(agents.panel[0], role=SIMULATOR_ROLE) if config.condition == "synthetic" else None
        speakers = (SIMULATOR_ROLE,) if self.simulator else tuple(s.role for s in self.seats if s.agent)
        self.moderation = Moderation(debate_id, speakers, channel)
        clerk = dataclasses.replace(agents.clerk, role="clerk")
        self.reader = StanceReader(clerk, config.labels, question=config.question, rubric=config.rubric,
                                   max_tokens=config.stance_tokens, confirm=confirm)
        self.messages: dict[str, list[Message]] = {s.role: [] for s in self.seats if s.agent}
        self.messages[SIMULATOR_ROLE] = []
        self.stances: list[JudgementMade] = []
        #: The user's files (falsy when the panel has none): each AI statement is shown the
        #: passages most relevant to the question, the case and the last round, and lists its
        #: claims' sources.
        self.evidence = evidence

    def _seat(self, panel: list[Agent]) -> list[_Seat]:
        """Seats in table order; names as in Appendix i (or all "Judge n" when blind)."""
        c, title = self.config, self.config.seat_title
        if c.condition == "synthetic":  # simulated judges: seats without an agent of their own
            return [_Seat(f"agent-{i}", f"{title} {i}", None) for i in range(1, c.simulated_judges + 1)]
        ai = [dataclasses.replace(a, role=f"agent-{i}") for i, a in enumerate(panel, start=1)]
        if c.human is None:
            return [_Seat(a.role, f"{title} {i}", a) for i, a in enumerate(ai, start=1)]
        at = len(ai) if c.human.position is None else min(len(ai), c.human.position - 1)
        order: list[Agent | None] = [*ai[:at], None, *ai[at:]]
        seats = []
        for place, agent in enumerate(order, start=1):
            if c.human.blind:
                name = f"{title} {place}"
            else:
                name = f"Human {title}" if agent is None else f"AI {title} {agent.role.removeprefix('agent-')}"
            seats.append(_Seat(HUMAN_ROLE if agent is None else agent.role, name, agent))
        return seats

    # -- prompts ------------------------------------------------------------------------------

    def _appeal(self) -> bool:
        """Triem's appeal (the default question, labels and seat title): Appendix i's words."""
        c = self.config
        return c.question == APPEAL_QUESTION and tuple(c.labels) == LEGAL_LABELS and c.seat_title == "Judge"

    def _system(self, seat: _Seat) -> str:
        """Appendix i, phases 2 and 3 ("You are 'Judge [x]'" / "'AI Judge [x]'"), then the case."""
        c, n = self.config, _number(len(self.seats))
        if self._appeal():
            frame = (f"You are '{seat.name}' on the United States Court of Appeals deciding among a panel of {n} appellate "
                     "judges whether to AFFIRM, REVERSE, or REMAND a former decision.")
        else:
            frame = (f"You are '{seat.name}' on a panel of {n} {c.seat_title.lower()}s deciding this question: {c.question} "
                     f"The possible positions are: {', '.join(c.labels)}.")
        return f"{frame} {APPENDIX_I_MULTIAGENT}\nCase:\n<<<\n{c.case.strip()}\n>>>"

    def _ask(self, round_: int, log: list[tuple[str, str]], texts: Mapping[str, str], notes: list[str]) -> str:
        """The round's request: the previous round's statements as ``texts`` shows them (whole
        unless fitted), the moderator's words, and Appendix i's "Proceed with round [n]"."""
        parts = []
        if log:
            said = "\n".join(f"{name}:\n<<<\n{texts[_statement(name)]}\n>>>" for name, _ in log)
            parts.append(f"Discussion log, round {round_ - 1}:\n{said}")
        parts.extend(f"The moderator says: {note}" for note in notes)
        parts.append(f"Proceed with round {round_}.")
        return "\n\n".join(parts)

    # -- turns --------------------------------------------------------------------------------

    async def _ai_turn(self, seat: _Seat, round_: int, log: list[tuple[str, str]]) -> AsyncIterator[Event]:
        agent = seat.agent
        assert agent is not None
        history = self.messages[seat.role]
        if not history:
            history.append(Message("system", self._system(seat)))
        said = self.moderation.take_interjections(seat.role)
        fitted = fit_sections(agent, [Section(_statement(name), text.strip()) for name, text in log],
                              lambda texts: agent.shortest([*history, Message("user", self._ask(round_, log, texts, said))]),
                              reply_tokens=self.config.turn_tokens)
        request = self._ask(round_, log, fitted.texts, said)
        tokens = self.evidence.reply_tokens(self.config.turn_tokens)
        grounded = self.evidence.ground(agent, history, request, [self._topic(log)], reply_tokens=tokens)
        request = grounded.request
        fit = agent.fit([*history, Message("user", request)], tokens)
        turn = agent.turn(fit.messages, schema=self.evidence.schema(None, text_chars=chars_for(tokens, 1)),
                          options=agent.options.merged(max_tokens=tokens))
        async for event in self._exchange(history, request, turn, round_, "opinion"):
            yield event
        raw = history[-1].content
        read = self.evidence.read(raw, free_text=True)
        text = read.text
        confidence, note = parse_confidence(text)
        yield TurnFinished(self.debate_id, seat.role, agent.model_id, "discussion", round_, "opinion",
                           text=text.strip(), raw=raw, call=turn.call(), request=request, confidence=confidence,
                           parse_notes=(*fitted.notes, *grounded.notes, *fit.notes, *read.notes, *((note,) if note else ())),
                           citations=read.citations)

    def _topic(self, log: list[tuple[str, str]]) -> str:
        """What a statement is about, as the evidence is searched for it: the question, the case
        and the last round's statements."""
        return " ".join([self.config.question, self.config.case, *(text for _, text in log)])

    async def _exchange(self, history: list[Message], request: str, turn: Any, round_: int, kind: str) -> AsyncIterator[Event]:
        """Stream ``turn`` (already given ``history`` plus ``request``), then append the request
        and the reply to ``history``: each speaker's memory is append-only (its cache reused)."""
        async for event in self.moderation.stream(turn, round_=round_, phase="discussion", kind=kind):
            yield event
        assert turn.completion is not None
        history += [Message("user", request), Message("assistant", turn.completion.text)]

    async def _human_turn(self, seat: _Seat, round_: int) -> AsyncIterator[Event]:
        human = self.config.human
        assert human is not None
        yield TurnStarted(self.debate_id, seat.role, "human", "discussion", round_, "opinion")
        prompt = None
        if human.script is not None:
            text = human.script.turn(round_)
        else:
            assert self.human_turn is not None
            prompt = f"{seat.name}, round {round_}: your opinion on the question: {self.config.question}"
            yield AwaitingModerator(self.debate_id, prompt)
            seat_turn, asked = self.human_turn, prompt
            text = (await person_answer(asked, lambda: seat_turn(asked))).strip()  # kept for a resumed run
        yield TokenDelta(self.debate_id, seat.role, text or "(no opinion given)")
        notes = () if text else ("the person gave no opinion: recorded as taking no stance",)
        confidence, _ = parse_confidence(text)  # a person may state one too; not asking is not an error
        yield TurnFinished(self.debate_id, seat.role, "human", "discussion", round_, "opinion",
                           text=text, raw=text, call=None, parse_notes=notes, request=prompt, confidence=confidence)

    async def _stance(self, seat: _Seat, round_: int, text: str) -> JudgementMade:
        human = self.config.human
        confidence, _ = parse_confidence(text)
        if seat.agent is None and human is not None and human.script is not None and human.script.stance:
            label = exact_label(human.script.stance, self.config.labels)
            assert label is not None  # checked by HumanloopConfig
            return self.reader.fixed(self.debate_id, role=seat.role, speaker=seat.name, label=label, round_=round_,
                                     source="script", confidence=confidence)
        if not text.strip():
            return self.reader.fixed(self.debate_id, role=seat.role, speaker=seat.name, label=NONE, round_=round_, source="empty")
        return await self.reader.read(self.debate_id, role=seat.role, speaker=seat.name, text=text, round_=round_,
                                      confidence=confidence)

    # -- the synthetic condition (Triem's phase 1) ------------------------------------------------

    def _synthetic_system(self) -> str:
        """Appendix i, phase 1, plus the one request the code needs: a heading per judge."""
        c, n = self.config, _number(self.config.simulated_judges)
        title = c.seat_title.lower()
        if self._appeal():
            frame = (f"You are simulating a discussion between {n} judges in the United States Court of Appeals deciding "
                     "whether to AFFIRM, REVERSE, or REMAND a former decision.")
        else:
            frame = (f"You are simulating a discussion between {n} {title}s deciding this question: {c.question} "
                     f"The possible positions are: {', '.join(c.labels)}.")
        return (f"{frame} Debate amongst yourselves step by step for {c.rounds} rounds of debate: in each round, each "
                f"{title} will bring up a new point of reasoning that supports their perspective. Please cite relevant "
                "cases as evidence to support your reasoning. Then, rank your confidence in the soundness of your "
                f"reasoning, on a scale of 0-100. Begin each {title}'s statement with a line '{c.seat_title} k:'.\n"
                f"Case:\n<<<\n{c.case.strip()}\n>>>")

    async def _synthetic_round(self, round_: int) -> AsyncIterator[Event]:
        """One round of the single instance: all simulated judges speak in one reply, which
        joins its own memory; then each judge's statement is labelled as that seat's step."""
        assert self.simulator is not None
        c, agent, history = self.config, self.simulator, self.messages[SIMULATOR_ROLE]
        if not history:
            history.append(Message("system", self._synthetic_system()))
        notes = self.moderation.take_interjections(SIMULATOR_ROLE)
        request = "\n\n".join([*(f"The moderator says: {n}" for n in notes),
                                f"Proceed with round {round_}. All {_number(c.simulated_judges)} {c.seat_title.lower()}s "
                                "should speak in each round."])
        tokens = self.evidence.reply_tokens(c.turn_tokens * c.simulated_judges)
        grounded = self.evidence.ground(agent, history, request, [self._topic([])], reply_tokens=tokens)
        request = grounded.request
        fit = agent.fit([*history, Message("user", request)], tokens)
        turn = agent.turn(fit.messages, schema=self.evidence.schema(None, text_chars=chars_for(tokens, 1)),
                          options=agent.options.merged(max_tokens=tokens))
        async for event in self._exchange(history, request, turn, round_, "simulation"):
            yield event
        raw = history[-1].content
        read = self.evidence.read(raw, free_text=True)
        text = read.text
        parts = split_statements(text, c.seat_title, c.simulated_judges)
        missing = [f"no statement headed '{c.seat_title} {i}'" for i, part in enumerate(parts, 1) if not part]
        yield TurnFinished(self.debate_id, SIMULATOR_ROLE, agent.model_id, "discussion", round_, "simulation",
                           text=text.strip(), raw=raw, call=turn.call(), request=request,
                           parse_notes=(*grounded.notes, *fit.notes, *read.notes, *missing),
                           parsed={"statements": parts}, citations=read.citations)
        async for event in self.moderation.checkpoint(round_):
            yield event
        for seat, part in zip(self.seats, parts, strict=True):
            if self.moderation.stopped:
                return
            judgement = await self._stance(seat, round_, part)
            self.stances.append(judgement)
            yield judgement

    # -- the run ------------------------------------------------------------------------------

    def _participants(self) -> tuple[Participant, ...]:
        if self.simulator is not None:  # the simulated judges are not participants: one model plays them all
            simulated = dataclasses.replace(self.simulator, details={"simulates": [s.name for s in self.seats]})
            return (simulated.participant(), self.reader.clerk.participant())
        out = []
        for place, seat in enumerate(self.seats, start=1):
            details = {"seat": place, "name": seat.name}
            if seat.agent is None:
                human = self.config.human
                assert human is not None
                out.append(Participant(seat.role, "human", "human", details={
                    **details, "blind": human.blind, "scripted": human.script is not None,
                    "fixed_stance": human.script.stance if human.script else None}))
            else:
                out.append(dataclasses.replace(seat.agent, details={**seat.agent.details, **details}).participant())
        return (*out, self.reader.clerk.participant())

    async def run(self) -> AsyncIterator[Event]:
        c = self.config
        yield DebateStarted(self.debate_id, "humanloop", c.title or clip(c.question, 60), c.case, c.describe(), self._participants())
        log: list[tuple[str, str]] = []
        stop_reason = f"all {c.rounds} rounds held"
        for round_ in range(1, c.rounds + 1):
            async for event in self.moderation.checkpoint(round_):
                yield event
            if self.moderation.stopped or self.moderation.skip_requested:
                stop_reason = self.moderation.stop_reason or "the moderator skipped to the conclusion"
                break
            yield PhaseChanged(self.debate_id, "discussion", round_)
            if self.simulator is not None:
                async for event in self._synthetic_round(round_):
                    yield event
                if self.moderation.stopped:
                    stop_reason = self.moderation.stop_reason or "stopped"
                    break
                continue
            said: list[tuple[str, str]] = []
            for seat in self.seats:
                text = ""
                source = self._human_turn(seat, round_) if seat.agent is None else self._ai_turn(seat, round_, log)
                async for event in source:
                    if isinstance(event, TurnFinished):
                        text = event.text
                    yield event
                async for event in self.moderation.checkpoint(round_):  # a Stop mid-turn ends here
                    yield event
                if self.moderation.stopped:
                    break
                judgement = await self._stance(seat, round_, text)
                self.stances.append(judgement)
                yield judgement
                said.append((seat.name, text or "(no opinion given)"))
            if self.moderation.stopped:
                stop_reason = self.moderation.stop_reason or "stopped"
                break
            log = said
        status: Status = "stopped" if self.moderation.stopped else "finished"
        yield DebateFinished(self.debate_id, status, stop_reason, self.outcome())

    def outcome(self) -> dict[str, Any]:
        """The stance table and its change analysis (the same as :func:`store.stances.stance_report`
        computes from the journal), and the panel's decision in the last round held."""
        human = HUMAN_ROLE if self.config.human is not None else None
        analysis = analyze(steps_from(self.stances), roles=[s.role for s in self.seats], human=human,
                           binary=self.config.binary(), condition=self.config.analysis_condition())
        final = [row[-1] for row in analysis["table"].values() if row and row[-1] not in (None, *RESERVED)]
        ranked = Counter(final).most_common()
        decision = ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else None
        return {"condition": analysis["condition"], "labels": list(self.config.labels),
                "seats": [{"role": s.role, "name": s.name, "human": s.agent is None and self.simulator is None}
                          for s in self.seats],
                "decision": decision, "analysis": analysis}



async def run(config: HumanloopConfig, agents: HumanloopAgents, *, debate_id: str, channel: CommandChannel | None = None,
              human_turn: HumanTurn | None = None, confirm: Confirm | None = None,
              evidence: Grounding = NO_EVIDENCE) -> AsyncIterator[Event]:
    """Run one panel discussion, yielding its events (the protocol's public entry point)."""
    async for event in Humanloop(config, agents, debate_id=debate_id, channel=channel,
                                 human_turn=human_turn, confirm=confirm, evidence=evidence).run():
        yield event


def _number(n: int) -> str:
    """A panel's size as Appendix i writes it ("three judges")."""
    return _NUMBERS.get(n, str(n))


def _statement(name: str) -> str:
    """The fitting section that holds ``name``'s statement of the previous round."""
    return f"{name}'s statement"


def split_statements(text: str, title: str, n: int) -> list[str]:
    """The synthetic panel's reply cut into its judges' statements: the text after each line
    that opens with "<title> k" (markdown emphasis allowed), up to the next such line; one
    entry per judge 1..n, empty where the reply has no statement for it. The last statement
    headed with a number counts when a judge speaks twice (the reply is untrusted text)."""
    head = re.compile(rf"^[\s>*_#-]*{re.escape(title)}\s+(\d+)\b[*_]*\s*[:.\-–—]?[*_]*", re.IGNORECASE | re.MULTILINE)
    marks = list(head.finditer(text))
    out = [""] * n
    for m, nxt in zip(marks, [*marks[1:], None]):
        k = int(m.group(1))
        if 1 <= k <= n:
            out[k - 1] = text[m.end(): nxt.start() if nxt else len(text)].strip()
    return out


# -- the protocol's definition (see protocols/core/definition.py): every interface is generated from it --

from protocols.core.definition import Conclusion, Input, InputError, Person, ProtocolDefinition, Role, read_file  # noqa: E402 - closes the module
from protocols.core.moderation import Honoured  # noqa: E402
from protocols.core.roles import AGENT, CLERK, HUMAN, in_order  # noqa: E402


def _script(path: str) -> HumanScript:
    return HumanScript.parse(read_file(path, "human script"))


def _prepare(v: Mapping[str, Any]) -> dict[str, Any]:
    labels = tuple(dict.fromkeys(v["labels"]))
    script: HumanScript | None = v["human_script"]
    if v[HUMAN] and script is not None:
        raise InputError("human_script", "a script plays the person's seat: leave out the live seat (--human) or the script")
    seated = bool(v[HUMAN] or script)
    if not seated and (v["blind"] or v["human_seat"] is not None):
        raise InputError("blind" if v["blind"] else "human_seat",
                         "needs a person's seat: take it yourself (--human) or give a script (--human-script FILE)")
    human = HumanSeat(v["human_seat"], bool(v["blind"]), script) if seated else None
    return {"case": v["case"], "labels": labels, "rubric": dict(LEGAL_RUBRIC) if labels == LEGAL_LABELS else {},
            "human": human}


def _team(agents: Mapping[str, Agent]) -> HumanloopAgents:
    return HumanloopAgents([agents[r] for r in in_order(agents, AGENT)], agents[CLERK])


def _start(config: HumanloopConfig, team: HumanloopAgents, debate_id: str, channel: CommandChannel,
           person: Person | None, evidence: Grounding) -> AsyncIterator[Event]:
    human_turn: HumanTurn | None = None
    if person is not None:
        speak = person.speak

        async def human_turn(prompt: str) -> str:  # leaving (None) is a pass here: the panel goes on
            return (await speak(prompt)) or ""

    return run(config, team, debate_id=debate_id, channel=channel, human_turn=human_turn,
               confirm=person.confirm if person is not None else None, evidence=evidence)


def conclude(outcome: Mapping[str, Any]) -> Conclusion:
    """The panel's decision in the last round held: the label most seats gave, if one led."""
    decision = outcome.get("decision")
    if decision:
        return Conclusion(f"Most of the panel settled on {decision} in the last round held.", str(decision))
    return Conclusion("The panel ended without a majority for any label.", "no majority")

DEFINITION = ProtocolDefinition(
    name="humanloop",
    title="Human judge in the loop",
    summary="A panel of model judges, you optionally in one seat; stances tracked per step (Triem).",
    config_cls=HumanloopConfig,
    inputs=(
        Input("case", "Case", "textarea", help="the case the panel discusses: text, or @FILE",
              example="The appellant was convicted under a statute that never defines 'consent'. "
                      "On appeal he argues the statute is void for vagueness."),
        Input("labels", "Positions (comma separated)", "list", default=",".join(LEGAL_LABELS), separator=",",
              help="the positions, comma-separated ('none' and 'hallucination' are always added)"),
        Input("human_script", "Script of the person's seat", "file", optional=True, step="Your seat", parse=_script, metavar="FILE",
              help="the human seat's statements, separated by lines '---'; optional first line 'stance: LABEL'"),
        Input("human_seat", "Your place at the table", "int", optional=True, step="Your seat", metavar="N",
              help="the human's place at the table (default: last)"),
        Input("blind", "Blind seat", "bool", optional=True, step="Your seat", example="no",
              help="show the human to the others as just another judge"),
    ),
    roles=(
        Role(AGENT, "Panel (model ids, comma separated)", "models", flag="--agents", example="smollm2-135m, gemma3-270m",
             help="one model per AI seat, comma-separated; a model may repeat (each seat is its own session)"),
        Role(CLERK, "Stance clerk", optional=True, fallback=AGENT, example="smollm2-135m",
             help="the model that labels each step's stance (default: the first seat's)"),
        Role(HUMAN, "Your seat", "person", optional=True, reads="paragraph", confirms=True, example="yes",
             help="take a seat yourself: type each opinion (on the command line: on stdin)"),
    ),
    prepare=_prepare,
    team=_team,
    start=_start,
    commands=HONOURED,
    conclude=conclude,
    present=present,
    samples=SAMPLES,
    studies=(STUDY,),
)
