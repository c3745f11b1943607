"""EVINCE: an information-theoretic debate over a class set (seed 004, chapter 7, Figure 7.1).

Figure 7.1, as this module runs it::

    Input: information set S, class labels C (closed, or open: whatever the agents propose);
           LLM_A (confirmatory), LLM_B (explorer), a CRIT judge.
    1. Initial round (t = 0):
         (P_A, R_A) = LLM_A(S, C, p0)                   -- predict top-k on C with arguments
         (P_B, R_B) = LLM_B(P_A, S, C, p'0)             -- sees P_A, refutes it at κ0 = 0.9
         metrics WD, MI, JSD between P_A and P_B; CRIT Γ_A, Γ_B by the judge
    2. while true:                                       (moderator checkpoint before each round)
         (P_A, R_A) = LLM_A(P_B, S, C, p't)             -- refute B at κ_t, update top-k
         (P_B, R_B) = LLM_B(P_A, S, C, p't)             -- refute A at κ_t, update top-k
         t = t + 1; metrics; changes ΔWD, ΔMI, ΔJSD, ΔCRIT
         stop when |ΔWD| < ε_WD ∧ |ΔMI| < ε_MI ∧ |ΔJSD| < ε_JSD ∧ ΔCRIT < ε_CRIT
              (section 7.3.2 (2): the information metrics settle and CRIT plateaus or
              declines), or at the round cap, or when the moderator stops or skips ahead
         κ = Update(κ, ΔWD, ΔMI, ΔJSD, ΔCRIT)          -- the debate's schedule
    3. Conciliatory output: P_f = (Γ_A·P_A + Γ_B·P_B) / (Γ_A + Γ_B) with the combined
       rationale; joint follow-up recommendations (further questions, tests) drafted by A and
       completed by B at low contentiousness (section 7.4.6, appendix 7.E.6); a flag when the
       consensus contradicts a given reference label (label-error detection, 7.4.6).

An agent's distribution comes one of two ways, chosen per debate and recorded:
``verbalized`` (structured output; labels constrained to C when C is closed) or ``scored``
(the agent argues in free text, then the backend's log-likelihood over C, conditioned on that
argument, gives the distribution; needs a closed C).

The phase shown for a round follows its κ (Table 7.2): exploratory at κ ≥ 0.8, transition at
0.6 ≤ κ < 0.8, exploitative below; the closing steps are "conciliatory".
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field
from pydantic.dataclasses import dataclass as pydantic_dataclass

from backends.base import Message

from . import metrics as M
from .agents import Agent, score_call_record
from .agreement import AgreementJudge
from .contentiousness import SCHEDULES, RoundSignals, Schedule, instruction, make_schedule
from .crit import CritResult, crit
from .distribution import (
    DistributionParse,
    format_distribution,
    parse_distribution,
    reply_schema,
)
from .events import (
    DebateFinished,
    DebateResumed,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    PhaseChanged,
    TurnFinished,
)
from .labels import LabelSet
from .moderation import CommandChannel, Moderation
from .params import CONFIG, Profile, param, token_limit
from .schemas import chars_for, fit_schema
from .text import clip
from .untrusted import parse_as

Scoring = Literal["verbalized", "scored"]


@pydantic_dataclass(config=CONFIG)
class EvinceConfig:
    """One EVINCE debate's settings (all journalled with the debate). The parameters declared
    with :func:`param` are the ones the command line and the app offer (see :mod:`.params`)."""

    case: str
    labels: LabelSet | None = None  # None: an open class set
    title: str = ""
    top_k: int = param(3, ge=1, le=10, section="Figure 7.1", label="Top-k",
                       description="labels each agent ranks with probabilities")
    scoring: Scoring = param("verbalized", section="ch. 7", label="Distributions",
                             description="verbalized: the agents write their distributions; scored: "
                                         "log-likelihood over C (needs a closed class set)")
    schedule: str = param("exponential", section="7.4.5", label="Contentiousness schedule",
                          description="how κ moves between rounds", choices=sorted(SCHEDULES))
    schedule_params: dict[str, Any] = field(default_factory=dict)
    eps_wd: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="ε for WD",
                          description="convergence threshold on the change in Wasserstein distance")
    eps_mi: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="ε for MI",
                          description="convergence threshold on the change in mutual information")
    eps_jsd: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="ε for JSD",
                           description="convergence threshold on the change in Jensen-Shannon divergence")
    eps_crit: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="ε for CRIT",
                            description="convergence threshold on the change in CRIT scores")
    max_rounds: int = param(5, ge=1, le=20, section="Symposium", label="Round cap",
                            description="safety cap on refutation rounds after the initial round")
    reference_label: str | None = param(None, section="7.4.6", label="Reference label",
                                        description="a given label, to flag a consensus that contradicts it")
    recommendations: bool = param(True, section="7.E.6", label="Joint recommendations",
                                  description="draft joint follow-up questions and tests after convergence")
    turn_tokens: int = token_limit(256, "reply length limit per turn")
    crit_tokens: int = token_limit(320, "reply length limit of the CRIT judge", label="Judge's reply limit (tokens)")
    domain: str = "diagnosis"
    #: Seed 000's agreement judge after each round, an extra stopping signal logged beside
    #: WD/MI/JSD (metric "agreement"); the CRIT judge's model plays it.
    agreement_judge: bool = param(False, section="seed 000", label="Agreement judge",
                                  description="also ask the judge AGREEMENT / MORE DEBATE after each round")
    #: CRIT-judge each round (Figure 7.1). Off: no judge calls, equal weights in P_f and no
    #: ΔCRIT in the stopping rule — the cheaper arm the diagnosis benchmark can run.
    crit_judge: bool = param(True, section="Figure 7.1", label="CRIT judge",
                             description="judge each round's arguments with CRIT (weights P_f, ΔCRIT stops)")
    #: Present the class labels in a shuffled order (per case and agent): tiny models pick
    #: the first labels listed, whatever the case says.
    shuffle_labels: bool = param(True, section="Symposium", label="Shuffle labels",
                                 description="list the class labels in a shuffled order per case and agent")
    #: The defaults profile in force (see :mod:`.params`), journalled with the debate.
    profile: Profile = "standard"

    SMALL_MODEL_PROFILE: ClassVar[dict[str, Any]] = {"max_rounds": 3, "turn_tokens": 160, "crit_tokens": 200}

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: {self.schedule!r} is not one of {', '.join(sorted(SCHEDULES))}")
        if self.scoring == "scored" and self.labels is None:
            raise ValueError("scoring: 'scored' needs a closed class set; give a label list")

    def describe(self) -> dict[str, Any]:
        data = asdict(self)
        data["labels"] = None if self.labels is None else list(self.labels.labels)
        data["closed"] = self.labels is not None
        return data

    @classmethod
    def from_description(cls, data: dict[str, Any]) -> EvinceConfig:
        """The config journalled by :meth:`describe` (to resume a debate)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["labels"] = LabelSet(data["labels"]) if data.get("labels") else None
        return cls(**values)


@dataclass
class EvinceAgents:
    a: Agent
    b: Agent
    judge: Agent


class Recommendations(BaseModel):
    """Joint follow-ups after convergence (appendix 7.E.6)."""

    questions: list[str] = Field(max_length=4)
    tests: list[str] = Field(max_length=4)


class Argument(BaseModel):
    """A free-text turn in ``scored`` mode: the argument only; the distribution is scored."""

    argument: str = Field(max_length=600)


@dataclass
class _Position:
    """An agent's latest position: distribution, arguments and the text shown to the other."""

    probs: dict[str, float]
    arguments: list[str]
    text: str


def phase_for(kappa: float | None) -> str:
    if kappa is None:
        return "unmodulated"
    if kappa >= 0.8:
        return "exploratory"
    if kappa >= 0.6:
        return "transition"
    return "exploitative"


class Evince:
    """One run of Figure 7.1. Iterate :meth:`run` for its events."""

    def __init__(self, config: EvinceConfig, agents: EvinceAgents, *, debate_id: str,
                 channel: CommandChannel | None = None) -> None:
        if config.scoring == "scored" and config.labels is None:
            raise ValueError("scored distributions need a closed class set (give labels)")
        self.config = config
        self.agents = agents
        self.debate_id = debate_id
        self.moderation = Moderation(debate_id, ("agent-a", "agent-b"), channel)
        self.schedule: Schedule = make_schedule(config.schedule, **config.schedule_params)
        self.messages: dict[str, list[Message]] = {"agent-a": [], "agent-b": []}
        self.positions: dict[str, _Position] = {}
        self.crits: dict[str, CritResult] = {}
        self.history: list[dict[str, float]] = []
        self._phase: str | None = None
        self._resume_round: int | None = None
        self._spoken: dict[int, set[str]] = {}  # roles already heard in a round (resuming)
        self.agreement = AgreementJudge(agents.judge) if config.agreement_judge else None

    # -- prompts ------------------------------------------------------------------------------

    def _system(self, role: str) -> str:
        c = self.config
        who = "Agent A" if role == "agent-a" else "Agent B"
        stance = ("You give the most likely answers, as a careful expert would." if role == "agent-a"
                  else "You explore: look for plausible alternatives the other agent may have missed.")
        classes = (f"Choose only from these {len(c.labels)} labels: {'; '.join(self._label_order(role))}."
                   if c.labels is not None else "Name the labels yourself.")
        return (f"You are {who} in a structured debate ({c.domain}). {stance} {classes} "
                f"Give your top {c.top_k} with probabilities that sum to 1, and short arguments.\n"
                f"Case:\n<<<\n{c.case.strip()}\n>>>")

    def _label_order(self, role: str) -> list[str]:
        """The class labels in the order this agent reads them: shuffled per case and agent
        (reproducibly), because small models tend to answer with whatever is listed first."""
        labels = list(self.config.labels.labels) if self.config.labels is not None else []
        if self.config.shuffle_labels:
            seed = hashlib.sha256(f"{self.config.case}\x00{role}".encode()).digest()
            random.Random(seed).shuffle(labels)
        return labels

    def _ask(self, role: str, kappa: float | None, opponent: _Position | None) -> str:
        c = self.config
        parts = []
        if opponent is not None:
            other = "Agent B" if role == "agent-a" else "Agent A"
            parts.append(f"{other} predicts: {format_distribution(opponent.probs)}. "
                         f"Its arguments: {clip(' '.join(opponent.arguments), 500)}")
            parts.append(f"Refute {other} with counterarguments, then give your own top {c.top_k} with arguments.")
        else:
            parts.append(f"Predict your top {c.top_k} with probabilities and supporting arguments.")
        if kappa is not None:
            parts.append(instruction(kappa))
        for note in self.moderation.take_interjections(role):
            parts.append(f"The moderator says: {note}")
        return "\n".join(parts)

    # -- one agent's turn -----------------------------------------------------------------------

    async def _turn(self, role: str, round_: int, kappa: float | None, opponent: _Position | None) -> AsyncIterator[Event]:
        agent = self.agents.a if role == "agent-a" else self.agents.b
        c = self.config
        history = self.messages[role]
        if not history:
            history.append(Message("system", self._system(role)))
        request = self._ask(role, kappa, opponent)
        history.append(Message("user", request))
        if c.scoring == "verbalized":  # k arguments plus up to k general ones must fit the turn
            schema = fit_schema(reply_schema(c.labels, top_k=c.top_k), items=c.top_k,
                                chars=chars_for(c.turn_tokens - 12 * c.top_k, 2 * c.top_k), min_items=1)
        else:
            schema = fit_schema(Argument.model_json_schema(), items=1, chars=chars_for(c.turn_tokens, 1))
        turn = agent.turn(agent.fit(history, c.turn_tokens), schema=schema,
                          options=agent.options.merged(max_tokens=c.turn_tokens))
        kind = "opening" if round_ == 0 else "refutation"
        async for event in self.moderation.stream(turn, round_=round_, phase=phase_for(kappa), kind=kind):
            yield event
        completion = turn.completion
        assert completion is not None
        history.append(Message("assistant", completion.text))
        if c.scoring == "verbalized":
            parsed = parse_distribution(completion.text, c.labels, top_k=c.top_k)
            score_call = None
        else:
            parsed, score_call = await self._scored(agent, history, completion.text)
        position, fallback = self._position(role, parsed)
        if score_call is not None:
            yield score_call
        notes = [*parsed.repairs, *([parsed.rejected_reason] if parsed.rejected_reason else []), *fallback]
        yield TurnFinished(
            self.debate_id, role, agent.model_id, phase_for(kappa), round_, kind,
            text=position.text, raw=completion.text, call=turn.call(),
            parsed={"probs": parsed.probs, "arguments": parsed.arguments} if parsed.ok else None,
            parse_notes=tuple(notes), distribution=position.probs, kappa=kappa, request=request,
        )

    async def _scored(self, agent: Agent, history: list[Message], raw: str) -> tuple[DistributionParse, ModelCalled]:
        """``scored`` mode: the distribution over C is read from log-likelihoods, conditioned on
        the argument the agent just made."""
        labels = self.config.labels
        assert labels is not None
        reply, _ = parse_as(raw, Argument)
        argument = reply.argument if reply else raw
        ask = [*history, Message("user", "Now name the single most likely label.")]
        result = await agent.session.score(agent.fit(ask, 16), list(labels.labels))
        top = sorted(zip(result.candidates, result.probs), key=lambda cp: -cp[1])[: self.config.top_k]
        total = sum(p for _, p in top)
        probs = {label: p / total for label, p in top}
        parsed = DistributionParse(probs=probs, arguments=[argument], repairs=[f"scored {len(labels)} labels by log-likelihood; kept the top {len(top)}"],
                                   rejected_reason=None, raw=raw)
        return parsed, ModelCalled(self.debate_id, score_call_record(agent.role, result))

    def _position(self, role: str, parsed: DistributionParse) -> tuple[_Position, list[str]]:
        """The agent's new position, and a note when its reply gave no usable distribution: it
        then keeps its previous one (or, in its first turn, a uniform one over the other
        agent's labels) so the debate and its metrics go on."""
        fallback: list[str] = []
        if parsed.probs is not None:
            probs = parsed.probs
        elif role in self.positions:
            probs = self.positions[role].probs
            fallback.append("kept the previous distribution")
        else:
            other = self.positions.get("agent-b" if role == "agent-a" else "agent-a")
            pool = list(other.probs) if other else (list(self.config.labels.labels)[: self.config.top_k] if self.config.labels else ["unknown"])
            probs = {label: 1 / len(pool) for label in pool}
            fallback.append("no usable distribution yet: used a uniform one")
        arguments = parsed.arguments
        text = format_distribution(probs) + ("\n" + "\n".join(f"- {a}" for a in arguments) if arguments else "")
        position = _Position(probs, arguments, text)
        self.positions[role] = position
        return position, fallback

    # -- metrics and judging --------------------------------------------------------------------

    async def _judge(self, round_: int) -> AsyncIterator[Event]:
        if not self.config.crit_judge:
            return
        a, b = self.positions["agent-a"], self.positions["agent-b"]
        for role, mine, theirs in (("agent-a", a, b), ("agent-b", b, a)):
            result = await crit(self.agents.judge, mine.text, author="Agent A" if role == "agent-a" else "Agent B",
                                counter=theirs.text, subject=clip(self.config.case, 300), max_tokens=self.config.crit_tokens)
            self.crits[role] = result
            for extra in result.calls[:-1]:
                yield ModelCalled(self.debate_id, extra, round_)
            yield JudgementMade(self.debate_id, "judge", self.agents.judge.model_id, "crit", role, None,
                                result.score, None, result.reasons_json(), result.raw, round_, result.calls[-1])

    def _metrics(self, round_: int, kappa: float | None) -> MetricsComputed:
        a, b = self.positions["agent-a"].probs, self.positions["agent-b"].probs
        snap = M.compute_all(a, b)
        scores = [r.normalized for r in self.crits.values() if r.normalized is not None]
        values: dict[str, float] = {k: v for k, v in asdict(snap).items()}
        if scores:
            values["crit"] = sum(scores) / len(scores)
        for role, key in (("agent-a", "crit_a"), ("agent-b", "crit_b")):
            if role in self.crits and self.crits[role].normalized is not None:
                values[key] = self.crits[role].normalized  # type: ignore[assignment]
        if self.agreement is not None and self.agreement.last is not None:
            values.update(self.agreement.last.metrics())
        mixture = self._consensus()
        values["entropy_mixture"] = M.entropy(mixture)
        if self.history:
            values["info_gain"] = self.history[-1]["entropy_mixture"] - values["entropy_mixture"]
        self.history.append(values)
        return MetricsComputed(self.debate_id, round_, values, kappa)

    def _consensus(self) -> dict[str, float]:
        """P_f = (Γ_A·P_A + Γ_B·P_B)/(Γ_A + Γ_B); equal weights where a CRIT score is missing."""
        weights = [self._weight("agent-a"), self._weight("agent-b")]
        mixed = M.mixture([self.positions["agent-a"].probs, self.positions["agent-b"].probs], weights)
        assert isinstance(mixed, dict)
        return dict(sorted(mixed.items(), key=lambda kv: -kv[1]))

    def _weight(self, role: str) -> float:
        result = self.crits.get(role)
        if result is None or result.score is None:
            known = [r.score for r in self.crits.values() if r.score is not None]
            return sum(known) / len(known) if known else 1.0
        return result.score

    def _converged(self) -> bool:
        """Section 7.3.2 (2): |ΔWD|, |ΔMI|, |ΔJSD| under their ε and CRIT not rising by ε."""
        if len(self.history) < 2:
            return False
        prev, cur = self.history[-2], self.history[-1]
        c = self.config
        settled = (abs(cur["wd"] - prev["wd"]) < c.eps_wd and abs(cur["mi"] - prev["mi"]) < c.eps_mi
                   and abs(cur["jsd"] - prev["jsd"]) < c.eps_jsd)
        d_crit = cur.get("crit", 0.0) - prev.get("crit", 0.0) if "crit" in cur and "crit" in prev else 0.0
        return settled and d_crit < c.eps_crit

    def _signals(self, history: list[dict[str, float]] | None = None) -> RoundSignals | None:
        history = self.history if history is None else history
        if len(history) < 2:
            return None
        prev, cur = history[-2], history[-1]
        d_crit = cur["crit"] - prev["crit"] if "crit" in cur and "crit" in prev else 0.0
        return RoundSignals(d_wd=prev["wd"] - cur["wd"], d_mi=cur["nmi"] - prev["nmi"], d_jsd=prev["jsd"] - cur["jsd"], d_crit=d_crit)

    def _kappa(self, round_: int) -> float | None:
        if self.moderation.kappa_override is not None:
            return self.moderation.kappa_override
        return self.schedule.value(round_, self._signals())

    def _phase_event(self, phase: str, round_: int, kappa: float | None) -> PhaseChanged | None:
        if phase == self._phase:
            return None
        self._phase = phase
        return PhaseChanged(self.debate_id, phase, round_, kappa)

    # -- resuming -------------------------------------------------------------------------------

    def restore(self, debate: dict[str, Any]) -> None:
        """Rebuild the state of a journalled debate cut off before its end, so :meth:`run`
        continues from its last finished turn: each agent's conversation (its recorded requests
        and raw replies), positions, CRIT scores, metric history, the contentiousness schedule's
        decisions and a moderator's standing override."""
        for t in debate["turns"]:
            if t["kind"] not in ("opening", "refutation"):
                continue
            role = t["role"]
            history = self.messages[role]
            if not history:
                history.append(Message("system", self._system(role)))
            history += [Message("user", t["request"] or "(request not recorded)"), Message("assistant", t["raw"])]
            parsed = t["parsed"] or {}
            self.positions[role] = _Position(dict(t["distribution"] or {}), list(parsed.get("arguments") or []), t["text"])
            self._spoken.setdefault(t["round"], set()).add(role)
        self.history = [{k: v for k, v in row.items() if k not in ("round", "phase", "kappa") and v is not None}
                        for row in debate["metrics"]]
        done = len(self.history)
        for j in debate["judgements"]:
            if j["kind"] == "crit" and j["round"] == done - 1 and j["target"] in ("agent-a", "agent-b"):
                self.crits[j["target"]] = CritResult(score=j["score"], holistic=None, weighted=None, raw=j["raw"])
        for r in range(1, done + 1):  # replay the schedule's decisions (adaptive schedules remember them)
            self.schedule.value(r, self._signals(self.history[:r]))
        overrides = [m for m in debate["moderator_events"] if m["kind"] == "set_contentiousness"]
        if overrides:
            self.moderation.kappa_override = overrides[-1]["payload"]["value"]
        self._phase = debate["phases"][-1]["name"] if debate["phases"] else None
        self._resume_round = done

    # -- the run --------------------------------------------------------------------------------

    async def run(self) -> AsyncIterator[Event]:
        c = self.config
        agents = self.agents
        stop_reason = "round cap reached"
        round_ = self._resume_round or 0
        if self._resume_round is None:
            yield DebateStarted(
                self.debate_id, "evince", c.title or clip(c.case, 60), c.case, c.describe(),
                (agents.a.participant(), agents.b.participant(), agents.judge.participant()),
            )
        else:
            yield DebateResumed(self.debate_id, round_)
            if self._converged() or round_ >= c.max_rounds:
                round_ -= 1
                async for event in self._conclude(round_, "converged before the interruption" if self._converged() else stop_reason):
                    yield event
                return
        while True:
            async for event in self.moderation.checkpoint(round_):
                yield event
            if self.moderation.stopped:
                stop_reason = self.moderation.stop_reason or "stopped"
                break
            if round_ > 0 and self.moderation.skip_requested:
                stop_reason = "moderator skipped to the conclusion"
                break
            kappa = self._kappa(round_)  # after the checkpoint: a moderator override applies now
            phase_event = self._phase_event(phase_for(kappa), round_, kappa)
            if phase_event:
                yield phase_event
            spoken = self._spoken.pop(round_, set())  # a resumed round may be half done
            # Round 0 is asymmetric: A states its prior without contentiousness; B explores at κ0.
            for role, k, other in (("agent-a", None if round_ == 0 else kappa, "agent-b"), ("agent-b", kappa, "agent-a")):
                if role in spoken:
                    continue
                if role == "agent-b":  # the moderator is heard between the two turns too
                    async for event in self.moderation.checkpoint(round_):
                        yield event
                if self.moderation.stopped:
                    break
                async for event in self._turn(role, round_, k, self.positions.get(other)):
                    yield event
            if self.moderation.stopped:
                stop_reason = self.moderation.stop_reason or "stopped"
                break
            async for event in self._judge(round_):
                yield event
            if self.agreement is not None:
                said = [("Agent A", self.positions["agent-a"].text), ("Agent B", self.positions["agent-b"].text)]
                async for event in self.agreement.events(self.debate_id, round_, said, clip(c.case, 300)):
                    yield event
            yield self._metrics(round_, kappa)
            if self._converged():
                stop_reason = "converged: WD, MI, JSD settled and CRIT stopped rising"
                break
            if round_ > 0 and self.agreement is not None and self.agreement.last is not None and self.agreement.last.agreed:
                stop_reason = "the agreement judge said AGREEMENT (seed 000)"
                break
            if round_ + 1 >= c.max_rounds:
                break
            round_ += 1

        async for event in self._conclude(round_, stop_reason):
            yield event

    async def _conclude(self, round_: int, stop_reason: str) -> AsyncIterator[Event]:
        c = self.config
        outcome: dict[str, Any] = {"rounds": round_ + 1, "scoring": c.scoring, "schedule": c.schedule}
        if len(self.positions) < 2:
            yield DebateFinished(self.debate_id, "stopped", stop_reason, outcome)
            return
        final = self._consensus()
        outcome.update(
            final_distribution=final,
            top=next(iter(final)),
            weights={"agent-a": self._weight("agent-a"), "agent-b": self._weight("agent-b")},
            crit={role: r.score for role, r in self.crits.items()},
            rationale={"agent-a": self.positions["agent-a"].arguments, "agent-b": self.positions["agent-b"].arguments},
        )
        if c.reference_label is not None:
            outcome["label_check"] = self._label_check(final)
        if c.recommendations and not self.moderation.stopped:
            recs: dict[str, list[str]] = {"questions": [], "tests": []}
            async for event in self._recommend(round_ + 1, final, recs):
                yield event
            outcome["recommendations"] = recs
        async for event in self.moderation.checkpoint(round_):
            yield event
        if self.moderation.verdict is not None:
            outcome["moderator_verdict"] = asdict(self.moderation.verdict)
        status = "stopped" if self.moderation.stopped else "finished"
        yield DebateFinished(self.debate_id, status, stop_reason, outcome)

    def _label_check(self, final: dict[str, float]) -> dict[str, Any]:
        """Section 7.4.6: flag a consensus that contradicts the reference label."""
        reference = self.config.reference_label or ""
        canonical = self.config.labels.match(reference) if self.config.labels else None
        top = next(iter(final))
        agrees = (canonical or reference).casefold() == top.casefold()
        return {
            "reference": canonical or reference, "consensus": top, "agrees": agrees,
            "reference_probability": final.get(canonical or reference, 0.0),
            "flag": None if agrees else f"the debate's consensus ({top}) contradicts the reference label ({canonical or reference}); check the label",
        }

    async def _recommend(self, round_: int, final: dict[str, float], recs: dict[str, list[str]]) -> AsyncIterator[Event]:
        """Joint follow-ups: A drafts, B completes, both at κ = 0.3 (appendix 7.E.6)."""
        kappa = 0.3
        event = self._phase_event("conciliatory", round_, kappa)
        if event:
            yield event
        for role in ("agent-a", "agent-b"):
            agent = self.agents.a if role == "agent-a" else self.agents.b
            ask = (f"The debate has converged on: {format_distribution(final)}. {instruction(kappa)} "
                   "Together with the other agent, list further questions to ask and tests to run that would "
                   "confirm or refute this conclusion.")
            if recs["questions"] or recs["tests"]:
                ask += f" The other agent proposed: {json.dumps(recs, ensure_ascii=False)}. Keep what is useful and add what is missing."
            history = [*self.messages[role], Message("user", ask)]
            tokens = self.config.turn_tokens
            turn = agent.turn(agent.fit(history, tokens), schema=Recommendations, options=agent.options.merged(max_tokens=tokens))
            async for ev in self.moderation.stream(turn, round_=round_, phase="conciliatory", kind="recommendations"):
                yield ev
            assert turn.completion is not None
            reply, notes = parse_as(turn.completion.text, Recommendations)
            if reply is not None:
                recs["questions"] = _merge(recs["questions"], reply.questions)
                recs["tests"] = _merge(recs["tests"], reply.tests)
            text = "\n".join([*(f"? {q}" for q in recs["questions"]), *(f"+ {t}" for t in recs["tests"])]) or turn.completion.text
            yield TurnFinished(self.debate_id, role, agent.model_id, "conciliatory", round_, "recommendations",
                               text=text, raw=turn.completion.text, call=turn.call(),
                               parsed=reply.model_dump() if reply else None, parse_notes=tuple(notes), kappa=kappa,
                               request=ask)


def _merge(old: list[str], new: list[str]) -> list[str]:
    seen = {s.casefold().strip() for s in old}
    return old + [s.strip() for s in new if s.strip() and s.casefold().strip() not in seen]



async def run(config: EvinceConfig, agents: EvinceAgents, *, debate_id: str,
              channel: CommandChannel | None = None) -> AsyncIterator[Event]:
    """Run one EVINCE debate, yielding its events (the protocol's public entry point)."""
    async for event in Evince(config, agents, debate_id=debate_id, channel=channel).run():
        yield event


async def predict_alone(config: EvinceConfig, agent: Agent, *, debate_id: str) -> AsyncIterator[Event]:
    """One model's prediction on its own, journalled as a "single" run: EVINCE's opening turn
    (agent A's prompt, no opponent, no contentiousness). The diagnosis benchmark's single-model
    baselines and the inputs of its mixture and vote ensembles (section 7.4.1)."""
    run_ = Evince(config, EvinceAgents(agent, agent, agent), debate_id=debate_id)
    yield DebateStarted(debate_id, "single", config.title or clip(config.case, 60), config.case,
                        config.describe(), (agent.participant(),))
    async for event in run_._turn("agent-a", 0, None, None):
        yield event
    probs = run_.positions["agent-a"].probs
    yield DebateFinished(debate_id, "finished", "single prediction",
                         {"final_distribution": probs, "top": next(iter(probs), None), "rounds": 1})


async def resume(debate: dict[str, Any], agents: EvinceAgents, *,
                 channel: CommandChannel | None = None) -> AsyncIterator[Event]:
    """Continue a journalled EVINCE debate (``store.queries.Queries.debate``) from its last
    finished turn, under the config it was started with."""
    run_ = Evince(EvinceConfig.from_description(debate["config"]), agents, debate_id=debate["id"], channel=channel)
    run_.restore(debate)
    async for event in run_.run():
        yield event

