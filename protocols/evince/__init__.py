"""EVINCE: an information-theoretic debate over a class set (Edward Y. Chang, "EVINCE: Optimizing
Adversarial LLM Dialogues via Conditional Statistics and Information Theory", chapter 7 of
Multi-LLM Agent Collaborative Intelligence, Figure 7.1).

Figure 7.1, as this module runs it::

    Input: information set S, class labels C (closed, or open: whatever the agents propose);
           LLM_A (confirmatory), LLM_B (explorer), a CRIT judge.
    1. Initial round (t = 0):
         (P_A, R_A) = LLM_A(S, C, p0)                   -- predict top-k on C with arguments
         Γ_A = CRIT(S, P_A, R_A); gate R_A              -- quality gate (abstract; 7.1.1 (3))
         (P_B, R_B) = LLM_B(P_A, S, C, p'0)             -- sees P_A and the admitted R_A; κ0 = 0.9
         Γ_B = CRIT(S, P_B, R_B | R_A); gate R_B
         R ← R ∪ admitted R_A ∪ admitted R_B; metrics WD, MI, JSD between P_A and P_B
    2. while true:                                       (moderator checkpoint before each round)
         (P_A, R_A) = LLM_A(P_B, S, C, p't); CRIT; gate -- refute B at κ_t, update top-k
         (P_B, R_B) = LLM_B(P_A, S, C, p't); CRIT; gate -- refute A at κ_t, update top-k
         R ← R ∪ admitted; t = t + 1; metrics; changes ΔWD, ΔMI, ΔJSD, ΔCRIT
         stop when |ΔWD| < ε_WD ∧ |ΔMI| < ε_MI ∧ |ΔJSD| < ε_JSD ∧ ΔCRIT < ε_CRIT
              (section 7.3.2 (2): the information metrics settle and CRIT plateaus or
              declines), or at the round cap (``max_rounds`` refutation rounds after the
              opening round: the paper's t), or when the moderator stops or skips ahead
         κ = Update(κ, ΔWD, ΔMI, ΔJSD, ΔCRIT)          -- the debate's schedule; the first
              loop round is argued at κ0 (no metrics yet: κ holds until there is a signal)
    3. Conciliatory output: P_f = (Γ_A·P_A + Γ_B·P_B) / (Γ_A + Γ_B) with the combined
       rationale R; joint follow-up recommendations (further questions, tests) drafted by A and
       completed by B at low contentiousness (section 7.4.6, appendix 7.E.6); a flag when a
       confident, agreed consensus contradicts a given reference label (label-error
       detection, 7.4.6).

Decisions where the paper is silent (each a parameter of :class:`EvinceConfig`):

* ``Update`` is the default schedule, ``adaptive`` (:class:`protocols.measures.contentiousness.Adaptive`
  states its formula); the section 7.4.5 arms (none / fixed / linear / exponential) stay
  selectable by name.
* The quality gate (abstract; 7.1.1 (3) "dynamic quality thresholds admit only arguments
  exceeding external quality scores"): the CRIT judge rates each of an agent's numbered
  arguments right after its turn; an argument whose quality √(γθ)/10 is under
  ``gate_threshold`` is not shown to the opponent and does not enter the rationale R. The
  judgement's journalled reasons list what was admitted and what was dropped. Arguments the
  judge did not rate are admitted (no score, no grounds to drop). No judge, no gate.
* CRIT runs on each turn as it is made (Figure 7.1 computes Crit(t) each round), so the gate
  can act before the opponent replies; ΔCRIT compares the two agents' mean Γ/10 per round.
  A judge on a debater's own model is allowed but announced (a ``self_judging`` notice, and
  the outcome's ``self_judging``): section 7.2 (1)(iii) asks for external CRIT scoring.
* MI in the stop rule and in ``Update`` is 1 − I(label; speaker) = 1 − JSD
  (:func:`protocols.measures.metrics.speaker_independence`), not the displayed ``mi``: the coupling MI
  has a cusp at agreement, where half a point of wobble moves it by several ε.
* The stop rule reads only the *changes* of the metrics, so two agents that stay exactly as far
  apart for two rounds (WD 1 both times) satisfy it. The debate stops there, as the figure
  says, but it is called converged only when the agents agree (the same top label and JSD ≤
  ``agreement_max_jsd``, the label flag's meaning of agreed); otherwise the stop reason, the
  outcome's ``ending`` (``settled_apart``) and the recommendations request say it settled
  without agreement.
* The recommendations request says what ended the debate (convergence, settling apart, the
  agreement judge, the round cap, the moderator): only the stop rule with the agents agreeing
  is called convergence.
* A reply that gives no usable distribution is retried once under a stricter schema
  (``parse_retry``); if that fails too the turn has *no prediction*: nothing is shown to the
  opponent or the judge as its prediction (they are told it gave none), no metrics are
  computed for that round, and the round can never count as convergence (convergence needs
  two consecutive rounds in which both agents predicted). P_f uses each agent's latest
  stated prediction and says when one is older than the last round.

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
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field
from pydantic.dataclasses import dataclass as pydantic_dataclass

from backends.base import Message
from protocols.core import replay
from protocols.core.agents import Agent
from protocols.core.events import (
    Citation,
    DebateFinished,
    DebateStarted,
    Event,
    JudgementMade,
    MetricsComputed,
    ModelCalled,
    Notice,
    PhaseChanged,
    Status,
    TurnFinished,
)
from protocols.core.evidence import NO_EVIDENCE, Grounding
from protocols.core.moderation import CommandChannel, Honoured, Moderation
from protocols.core.params import CONFIG, REPLY_LENGTHS, Profile, param, token_limit
from protocols.core.replies import streams_side_by_side
from protocols.core.roles import AGENT_A, AGENT_B
from protocols.core.schemas import chars_for, fit_schema
from protocols.core.text import clip, percent, rounds_held, worded
from protocols.core.untrusted import parse_as
from protocols.evince.present import present
from protocols.evince.sample import SAMPLES
from protocols.measures import metrics as M
from protocols.measures.agreement_judge import AgreementJudge
from protocols.measures.contentiousness import SCHEDULES, RoundSignals, Schedule, instruction, make_schedule
from protocols.measures.crit import CritResult, crit
from protocols.measures.distribution import (
    DistributionParse,
    format_distribution,
    parse_distribution,
    reply_schema,
)
from protocols.measures.labels import LabelSet

#: The two debaters (interjections may be addressed to either).
DEBATERS = (AGENT_A, AGENT_B)

Scoring = Literal["verbalized", "scored"]

HONOURED = Honoured(interject=(AGENT_A, AGENT_B), contentiousness=True,
                    skip_to="the conclusion after the current round")
"""The moderator's commands EVINCE honours: an interjection joins the addressed agent's next
request; a contentiousness override sets κ from the next round; skip ends the debate after the
current round (with the recommendations, where on); stop cuts the reply being written."""


#: The steps of Figure 7.1 the form groups the parameters under.
PREDICTIONS, CONTENTIOUSNESS, JUDGING, STOPPING, CONCLUSION = (
    "The agents' predictions", "Contentiousness", "Judging the arguments", "When the debate stops", "The conclusion")


@pydantic_dataclass(config=CONFIG)
class EvinceConfig:
    """One EVINCE debate's settings (all journalled with the debate). The parameters declared
    with :func:`param` are the ones the command line and the app offer (see :mod:`.params`).

    The defaults suit real instruction models (7–70B): paragraph-long arguments, Figure 7.1's
    ``Update`` schedule, the CRIT judge with its quality gate. :attr:`SMALL_MODEL_PROFILE` is
    the set of overrides for the bundled 135M/270M models and the tests
    (:meth:`small_model` applies it).
    """

    #: The order of Figure 7.1's steps, under which the form groups the parameters.
    STEPS: ClassVar[tuple[str, ...]] = (PREDICTIONS, CONTENTIOUSNESS, JUDGING, STOPPING, CONCLUSION)

    case: str
    #: None: an open class set with no synonyms. Open or closed, the debate reads every label
    #: by :meth:`protocols.measures.labels.LabelSet.resolve`'s rules (case and punctuation, the synonym
    #: map, "X (ABBR)", "X fever" ≈ "X", capitals for initials); an open set learns each label as
    #: the agents name it (:meth:`~protocols.measures.labels.LabelSet.for_debate`), so two agents who agree
    #: on "Dengue" and "Dengue fever" are not made to differ by spelling in WD and JSD.
    labels: LabelSet | None = None
    title: str = ""
    top_k: int = param(3, ge=1, le=10, section="7.4 (eq. 7.1)", label="Labels each agent ranks", step=PREDICTIONS,
                       description="how many labels each agent ranks, each with its probability")
    scoring: Scoring = param("verbalized", section="ch. 7", label="How probabilities are found", step=PREDICTIONS,
                             description="verbalized: the agents write their probabilities; scored: each label is "
                                         "scored by how likely the model finds it (needs a fixed list of labels)")
    #: "adaptive" is Figure 7.1's Update(κ, ΔWD, ΔMI, ΔJSD, ΔCRIT); none / fixed / linear /
    #: exponential are section 7.4.5's ablation arms.
    schedule: str = param("adaptive", section="Figure 7.1, 7.4.5", label="Contentiousness schedule", step=CONTENTIOUSNESS,
                          description="how contentiousness κ (how hard the agents challenge each other, 0 to 1) "
                                      "changes between rounds; adaptive: it follows how far apart the agents still are",
                          choices=sorted(SCHEDULES))
    schedule_params: dict[str, Any] = field(default_factory=dict)
    eps_wd: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="Settled: distance change (WD)", step=STOPPING,
                          description="the debate has converged when, among other signs, the distance between the "
                                      "agents' predictions (Wasserstein) changes by less than this in a round")
    eps_mi: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="Settled: shared information change (MI)",
                          step=STOPPING, description="… and the information their predictions share (mutual "
                                                     "information) changes by less than this")
    eps_jsd: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="Settled: divergence change (JSD)",
                           step=STOPPING, description="… and the divergence between their predictions (Jensen-Shannon) "
                                                      "changes by less than this")
    eps_crit: float = param(0.01, ge=0.0, le=1.0, section="7.3.2", label="Settled: argument quality change",
                            step=STOPPING, description="… and the judge's scores of their arguments (CRIT) change by "
                                                       "less than this")
    #: Figure 7.1 has no cap; Tables 7.2/7.3 converge in 3-4 rounds. Counted as the paper's t
    #: counts (and as SocraSynth's cap): refutation rounds after the opening round, so 5 allows
    #: rounds 0 … 5; 0 runs the opening exchange only (no stop test can run).
    max_rounds: int = param(5, ge=0, le=20, section="Symposium", label="Rounds at most", essential=True,
                            description="rounds of rebuttal after the opening round, at most; the debate usually "
                                        "settles sooner")
    reference_label: str | None = param(None, section="7.4.6", label="Known answer (optional)", step=CONCLUSION,
                                        description="a label given in advance: the outcome warns when the agents' "
                                                    "consensus contradicts it")
    recommendations: bool = param(True, section="7.E.6", label="Joint recommendations", step=CONCLUSION,
                                  description="once the debate has settled, the agents draft follow-up questions and "
                                              "tests together")
    #: Large enough that every argument can reach ``argument_chars``; smaller budgets shrink the
    #: arguments so a whole reply fits.
    turn_tokens: int = token_limit(1536, "reply length limit per turn")
    argument_chars: int = param(600, ge=24, le=4000, section="Symposium", label="Longest argument (characters)",
                                step=REPLY_LENGTHS, description="the longest argument an agent may write: a paragraph")
    crit_tokens: int = token_limit(1024, "reply length limit of the judge", label="Judge's reply limit (tokens)")
    crit_depth: int = param(1, ge=0, le=3, section="Table 6.3 #3", label="How deep the judge checks reasons",
                            step=JUDGING, description="levels at which the judge also checks the reasons that are "
                                                      "themselves claims (0: none)")
    gate_threshold: float = param(0.5, ge=0.0, le=1.0, section="abstract; 7.1.1 (3)", label="Quality gate", step=JUDGING,
                                  description="arguments the judge scores below this (0 to 1) are left out of the "
                                              "exchange; 0 admits everything")
    parse_retry: bool = param(True, section="Symposium", label="Ask again after an unreadable reply", step=PREDICTIONS,
                              description="ask once more, more strictly, when a reply gives no usable probabilities")
    label_flag_confidence: float = param(0.6, ge=0.0, le=1.0, section="7.4.6", label="Warning: consensus confidence",
                                         step=CONCLUSION,
                                         description="how sure the consensus must be of its top label for the outcome "
                                                     "to warn that it contradicts the known answer")
    #: One meaning of "the agents agree" for the whole module: the same top label and a JSD of at
    #: most this (0.9/0.1 against 0.6/0.4 is 0.09: agreed; against 0.55/0.45, 0.12: not). The
    #: label flag needs it, and a debate Figure 7.1's rule stopped with the agents further apart
    #: is reported as settled without agreement. (Journalled before as ``label_flag_max_jsd``.)
    agreement_max_jsd: float = param(0.1, ge=0.0, le=1.0, section="7.4.6", label="Agreed: largest divergence (JSD)",
                                     step=STOPPING,
                                     description="the agents agree when they share their top label and their predictions "
                                                 "diverge (Jensen-Shannon) by at most this; a debate that settles further "
                                                 "apart is reported as settled without agreement")
    domain: str = "diagnosis"
    #: Heller et al.'s agreement judge after each round, an extra stopping signal logged beside
    #: WD/MI/JSD (metric "agreement"); the CRIT judge's model plays it.
    agreement_judge: bool = param(False, section="Heller et al.", label="Ask the judge whether they agree", step=STOPPING,
                                  description="after each round the judge also says whether the agents agree or should "
                                              "go on; an agreement ends the debate")
    #: Off: no judge calls, no quality gate, equal weights in P_f and no ΔCRIT in the stopping
    #: rule — the cheaper arm the diagnosis benchmark can run.
    crit_judge: bool = param(True, section="Figure 7.1", label="Judge each argument", step=JUDGING,
                             description="the judge scores each turn's arguments (CRIT); the scores weigh the agents' "
                                         "predictions, keep weak arguments out and help decide when to stop")
    #: Present the class labels in a shuffled order (per case and agent): tiny models pick
    #: the first labels listed, whatever the case says.
    shuffle_labels: bool = param(True, section="Symposium", label="Shuffle the labels", step=PREDICTIONS,
                                 description="list the labels in a different order for each case and agent, so that "
                                             "none is favoured for being first")
    #: The defaults profile in force (see :mod:`.params`), journalled with the debate.
    profile: Profile = "standard"

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: {self.schedule!r} is not one of {', '.join(sorted(SCHEDULES))}")
        if self.scoring == "scored" and (self.labels is None or not self.labels.closed):
            raise ValueError("scoring: 'scored' needs a closed class set; give a label list")

    #: Overrides for the bundled 135M/270M models and the tests: short turns whose worst-case
    #: JSON fits the grammar-constrained budget, a short judge reply, no CRIT recursion, the
    #: opening and two refutation rounds. 200 tokens hold k = 3 predictions' arguments plus up
    #: to 3 general ones at 60 characters each (:meth:`argument_limit`): a short sentence, not
    #: the one clause (24 characters) that 110-token turns left.
    SMALL_MODEL_PROFILE: ClassVar[dict[str, Any]] = {
        "max_rounds": 2, "turn_tokens": 200, "argument_chars": 60, "crit_tokens": 150, "crit_depth": 0,
    }

    @classmethod
    def small_model(cls, **values: Any) -> EvinceConfig:
        """A config with :attr:`SMALL_MODEL_PROFILE` applied (``values`` still win)."""
        return cls(**{**cls.SMALL_MODEL_PROFILE, "profile": "small", **values})

    def argument_limit(self) -> int:
        """Characters allowed per argument: ``argument_chars``, or less when ``turn_tokens``
        cannot hold k predictions' arguments plus up to k general ones at that length."""
        return min(self.argument_chars, chars_for(self.turn_tokens - 12 * self.top_k, 2 * self.top_k))

    def describe(self) -> dict[str, Any]:
        data = asdict(self)
        data["labels"] = None if self.labels is None else list(self.labels.labels)
        data["closed"] = self.labels is not None and self.labels.closed
        data["synonyms"] = {} if self.labels is None else self.labels.synonyms
        data["related"] = {} if self.labels is None else self.labels.related_names
        return data

    @classmethod
    def from_description(cls, data: dict[str, Any]) -> EvinceConfig:
        """The config journalled by :meth:`describe` (to resume a debate)."""
        known = {f.name for f in fields(cls)}
        if "label_flag_max_jsd" in data:  # its name before it also decided "settled without agreement"
            data = {"agreement_max_jsd": data["label_flag_max_jsd"], **data}
        values = {k: v for k, v in data.items() if k in known}
        values["labels"] = (LabelSet(data["labels"], closed=data.get("closed", True), synonyms=data.get("synonyms"),
                                     related=data.get("related"))
                            if data.get("labels") else None)
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
    """An agent's latest stated position: distribution, arguments, the round it was stated in
    and the arguments the quality gate admitted (all of them until the judge has rated them)."""

    probs: dict[str, float]
    arguments: list[str]
    round: int
    admitted: list[str] = field(default_factory=list)

    def text(self, arguments: list[str] | None = None) -> str:
        shown = self.admitted if arguments is None else arguments
        return format_distribution(self.probs) + ("\n" + "\n".join(f"- {a}" for a in shown) if shown else "")


def _top(probs: dict[str, float]) -> str:
    """The label an agent gives the most probability (the first listed of equals)."""
    return max(probs.items(), key=lambda kv: kv[1])[0]


def _speaker(role: str) -> str:
    return "Agent A" if role == AGENT_A else "Agent B"


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
                 channel: CommandChannel | None = None, evidence: Grounding = NO_EVIDENCE) -> None:
        if config.scoring == "scored" and (config.labels is None or not config.labels.closed):
            raise ValueError("scored distributions need a closed class set (give labels)")
        self.config = config
        self.agents = agents
        self.debate_id = debate_id
        self.moderation = Moderation(debate_id, DEBATERS, channel)
        #: The class set as this debate reads it: an open one learns the labels named in it.
        self.labels = (config.labels if config.labels is not None else LabelSet(closed=False)).for_debate()
        self.schedule: Schedule = make_schedule(config.schedule, **config.schedule_params)
        self.messages: dict[str, list[Message]] = {AGENT_A: [], AGENT_B: []}
        #: Each agent's latest *stated* position (never an invented one).
        self.positions: dict[str, _Position] = {}
        #: Each agent's latest CRIT result and the round it judged.
        self.crits: dict[str, CritResult] = {}
        self.crit_rounds: dict[str, int] = {}
        #: Metrics of each round in which both agents predicted (round -> values).
        self.by_round: dict[int, dict[str, float]] = {}
        #: Figure 7.1's R: the admitted arguments of every round, per agent, in order.
        self.rationale: dict[str, list[str]] = {AGENT_A: [], AGENT_B: []}
        self.dropped: list[dict[str, Any]] = []
        self._phase: str | None = None
        #: Every turn as said, oldest first: what the agreement judge reads (Heller et al.).
        self.said: list[tuple[str, str]] = []
        self.agreement = AgreementJudge(agents.judge) if config.agreement_judge else None
        #: The user's files (falsy when the debate has none): each turn is shown the passages
        #: most relevant to the case and the opponent's arguments and lists its claims' sources.
        self.evidence = evidence
        #: Each agent's latest checked citations, and every one so far with its speaker: what
        #: CRIT's judge and the agreement judge read beside the arguments.
        self.cited: dict[str, tuple[Citation, ...]] = {}
        self.all_cited: list[tuple[str, Citation]] = []

    @property
    def history(self) -> list[dict[str, float]]:
        """The metrics of the scored rounds, in round order."""
        return [self.by_round[r] for r in sorted(self.by_round)]

    # -- prompts ------------------------------------------------------------------------------

    def _system(self, role: str) -> str:
        c = self.config
        who = "Agent A" if role == AGENT_A else "Agent B"
        stance = ("You give the most likely answers, as a careful expert would." if role == AGENT_A
                  else "You explore: look for plausible alternatives the other agent may have missed.")
        classes = (f"Choose only from these {len(c.labels)} labels: {'; '.join(self._label_order(role))}."
                   if c.labels is not None and c.labels.closed else "Name the labels yourself.")
        return (f"You are {who} in a structured debate ({c.domain}). {stance} {classes} "
                f"Give your top {c.top_k} with probabilities that sum to 1, and your arguments.\n"
                f"Case:\n<<<\n{c.case.strip()}\n>>>")

    def _label_order(self, role: str) -> list[str]:
        """The class labels in the order this agent reads them, shuffled per debate and agent
        because small models tend to answer with whatever is listed first. The shuffle is seeded
        by the debate's id, so a resumed run asks as the cut-off one did, and never by the case:
        the order is shown in every request, a redacted copy's too, and a case-seeded order would
        let a reader test guesses of the masked case against it. (A rerun of the same case is
        another debate, with another order, even under the same sampling seed.)"""
        labels = list(self.config.labels.labels) if self.config.labels is not None and self.config.labels.closed else []
        if self.config.shuffle_labels:
            seed = hashlib.sha256(f"{self.debate_id}\x00{role}".encode()).digest()
            random.Random(seed).shuffle(labels)
        return labels

    def _ask(self, role: str, kappa: float | None, opponent: _Position | None, opponent_spoke: bool) -> str:
        """This turn's request. ``opponent`` is the other agent's position *of the turn it
        answers*, or ``None`` when that turn gave no prediction (then it is told so, and is
        never shown an older or invented one)."""
        c = self.config
        parts = []
        other = "Agent B" if role == AGENT_A else "Agent A"
        limit = 4 * c.argument_limit() * c.top_k
        if opponent is not None:
            args = " ".join(opponent.admitted) if opponent.admitted else "(none passed the quality gate)"
            parts.append(f"{other} predicts: {format_distribution(opponent.probs)}. "
                         f"Its arguments: {clip(args, limit)}")
            parts.append(f"Refute {other} with counterarguments, then give your own top {c.top_k} with arguments.")
        elif opponent_spoke:
            parts.append(f"{other} gave no usable prediction this round. Predict your top {c.top_k} "
                         "with probabilities and supporting arguments.")
        else:
            parts.append(f"Predict your top {c.top_k} with probabilities and supporting arguments.")
        if kappa is not None:
            parts.append(instruction(kappa))
        for note in self.moderation.take_interjections(role):
            parts.append(f"The moderator says: {note}")
        return "\n".join(parts)

    def _schema(self, strict: bool = False) -> dict[str, Any]:
        c = self.config
        if c.scoring != "verbalized":
            return fit_schema(Argument.model_json_schema(), items=1, chars=min(c.argument_chars * 2, chars_for(c.turn_tokens, 1)))
        if strict:  # the retry: one short argument per prediction, no general arguments
            schema = fit_schema(reply_schema(c.labels, top_k=c.top_k), items=c.top_k,
                                chars=min(c.argument_limit(), chars_for(c.turn_tokens - 12 * c.top_k, c.top_k)), min_items=1)
            schema["properties"]["arguments"].update(maxItems=0, minItems=0)
            return schema
        # k arguments plus up to k general ones must fit the turn
        return fit_schema(reply_schema(c.labels, top_k=c.top_k), items=c.top_k, chars=c.argument_limit(), min_items=1)

    # -- one agent's turn -----------------------------------------------------------------------

    async def _turn(self, role: str, round_: int, kappa: float | None, opponent: _Position | None,
                    opponent_spoke: bool) -> AsyncIterator[Event]:
        agent = self.agents.a if role == AGENT_A else self.agents.b
        c = self.config
        history = self.messages[role]
        if not history:
            history.append(Message("system", self._system(role)))
        request = self._ask(role, kappa, opponent, opponent_spoke)
        tokens = self.evidence.reply_tokens(c.turn_tokens)
        grounded = self.evidence.ground(agent, history, request, [f"{c.case}\n{request}"], reply_tokens=tokens)
        request = grounded.request
        history.append(Message("user", request))
        asked_at = len(history)
        fit = agent.fit(history, tokens)
        turn = agent.turn(fit.messages, schema=self.evidence.schema(self._schema()), options=agent.options.merged(max_tokens=tokens))
        kind = "opening" if round_ == 0 else "refutation"
        async for event in self.moderation.stream(turn, round_=round_, phase=phase_for(kappa), kind=kind):
            yield event
        completion = turn.completion
        assert completion is not None
        history.append(Message("assistant", completion.text))
        raw = completion.text
        notes: list[str] = []  # the retry's and the scoring's own fitting notes, after the parse's
        if c.scoring == "verbalized":
            parsed = parse_distribution(completion.text, self.labels, top_k=c.top_k)
            if not parsed.ok and c.parse_retry:
                async for event in self._retry(agent, history, round_, parsed, notes):
                    if isinstance(event, DistributionParse):
                        parsed = event
                    else:
                        yield event
                raw = "\n\n".join(m.content for m in history[-3:] if m.role == "assistant")  # both replies
        else:
            parsed, score_call = await self._scored(agent, history, completion.text, notes)
            yield score_call
        parsed = self._learnt(parsed)
        added = history[asked_at:]  # one reply, or a retry's whole exchange (journalled whole)
        exchange = tuple((m.role, m.content) for m in added) if len(added) > 1 else None
        said = self.evidence.read(completion.text)
        self.cited[role] = said.citations
        self.all_cited += [(_speaker(role), cited) for cited in said.citations]
        notes = [*grounded.notes, *fit.notes, *parsed.repairs, *([parsed.rejected_reason] if parsed.rejected_reason else []),
                 *said.notes, *notes]
        if parsed.probs is not None:
            position = _Position(parsed.probs, parsed.arguments, round_, list(parsed.arguments))
            self.positions[role] = position
            if not c.crit_judge:  # no judge, no gate: every argument enters R
                self._admit(role, position.arguments)
            text = position.text(position.arguments)
        else:
            notes.append("no prediction this turn: the opponent and the judge are told so, and no metrics are computed for this round")
            text = "(no usable prediction)"
        self.said.append((f"{_speaker(role)}, round {round_}", text))
        yield TurnFinished(
            self.debate_id, role, agent.model_id, phase_for(kappa), round_, kind,
            text=text, raw=raw, call=turn.call(),
            parsed={"probs": parsed.probs, "arguments": parsed.arguments} if parsed.ok else None,
            parse_notes=tuple(notes), distribution=parsed.probs, kappa=kappa, request=request, exchange=exchange,
            citations=said.citations,
        )

    async def _retry(self, agent: Agent, history: list[Message], round_: int, first: DistributionParse,
                     notes: list[str]) -> AsyncIterator[Any]:
        """Ask once more under a stricter schema at temperature 0; yields the call's event and
        finally the new parse (appending the exchange to the agent's conversation)."""
        c = self.config
        ask = Message("user", f"Your reply could not be read ({first.rejected_reason}). Reply again with the JSON "
                              f"object only: your top {c.top_k} labels with probabilities summing to 1, one short "
                              "argument each.")
        history.append(ask)
        fit = agent.fit(history, c.turn_tokens)
        completion, call = await agent.ask(fit.messages, purpose="retry", schema=self._schema(strict=True),
                                           options=agent.options.merged(max_tokens=c.turn_tokens, temperature=0.0))
        notes += [f"the retry: {note}" for note in fit.notes]
        history.append(Message("assistant", completion.text))
        yield ModelCalled(self.debate_id, call, round_)
        parsed = parse_distribution(completion.text, self.labels, top_k=c.top_k)
        notes.append(f"the first reply gave no distribution; a retry under a stricter schema "
                     f"{'gave one' if parsed.ok else 'did not either: ' + str(parsed.rejected_reason)}")
        yield parsed

    async def _scored(self, agent: Agent, history: list[Message], raw: str, notes: list[str]) -> tuple[DistributionParse, ModelCalled]:
        """``scored`` mode: the distribution over C is read from log-likelihoods, conditioned on
        the argument the agent just made (what the scoring prompt had to leave out goes to ``notes``)."""
        labels = self.config.labels
        assert labels is not None
        reply, _ = parse_as(raw, Argument)
        argument = reply.argument if reply else raw
        ask = [*history, Message("user", "Now name the single most likely label.")]
        fit = agent.fit(ask, 16)
        notes += [f"the scoring: {note}" for note in fit.notes]
        result, score_call = await agent.score(fit.messages, labels.labels)
        top = sorted(zip(result.candidates, result.probs), key=lambda cp: -cp[1])[: self.config.top_k]
        total = sum(p for _, p in top)
        probs = {label: p / total for label, p in top}
        parsed = DistributionParse(probs=probs, arguments=[argument],
                                   repairs=[f"scored {len(labels)} labels by log-likelihood; kept the top {len(top)}"],
                                   rejected_reason=None, raw=raw)
        return parsed, ModelCalled(self.debate_id, score_call)

    def _learnt(self, parsed: DistributionParse) -> DistributionParse:
        """An open class set learns the labels of this turn (the rules merge spellings within the
        reply too: "Dengue" beside "Dengue fever" is one label), each merge noted."""
        if parsed.probs is None:
            return parsed
        probs, merges = self.labels.learn(parsed.probs)
        return replace(parsed, probs=probs, repairs=[*parsed.repairs, *(f"matched labels: {m}" for m in merges)])

    def _fresh(self, role: str, round_: int) -> _Position | None:
        """``role``'s position if it was stated in ``round_``, else ``None``."""
        position = self.positions.get(role)
        return position if position is not None and position.round == round_ else None

    # -- judging and the quality gate -----------------------------------------------------------

    async def _judge(self, role: str, round_: int, counter: _Position | None) -> AsyncIterator[Event]:
        """CRIT on ``role``'s turn of ``round_`` (if it predicted), then the quality gate."""
        c = self.config
        mine = self._fresh(role, round_)
        if not c.crit_judge or mine is None:
            return
        other = AGENT_B if role == AGENT_A else AGENT_A
        cited = [(_speaker(r), cited) for r in (role, other) for cited in self.cited.get(r, ())]
        result = await crit(self.agents.judge, mine.text(mine.arguments), author="Agent A" if role == AGENT_A else "Agent B",
                            counter=None if counter is None else counter.text(), subject=c.case,
                            max_tokens=c.crit_tokens, arguments=mine.arguments, depth=c.crit_depth,
                            sources=self.evidence.sources(cited) or None)
        self.crits[role] = result
        self.crit_rounds[role] = round_
        gate = self._gate(role, round_, mine, result)
        for extra in result.calls[:-1]:
            yield ModelCalled(self.debate_id, extra, round_)
        yield JudgementMade(self.debate_id, "judge", self.agents.judge.model_id, "crit", role, None,
                            result.score, None, {**result.reasons_json(), "gate": gate}, result.raw, round_,
                            result.calls[-1] if result.calls else None)

    def _gate(self, role: str, round_: int, mine: _Position, result: CritResult) -> dict[str, Any]:
        """Admit the arguments whose CRIT quality reaches ``gate_threshold`` (unrated ones too)."""
        threshold = self.config.gate_threshold
        admitted, dropped = [], []
        for i, argument in enumerate(mine.arguments, 1):
            quality = result.argument_scores.get(i)
            if quality is not None and quality < threshold:
                dropped.append({"argument": argument, "quality": quality})
            else:
                admitted.append(argument)
        mine.admitted = admitted
        self._admit(role, admitted)
        self.dropped += [{"role": role, "round": round_, **d} for d in dropped]
        return {"threshold": threshold, "admitted": admitted, "dropped": dropped,
                "unrated": [a for i, a in enumerate(mine.arguments, 1) if i not in result.argument_scores]}

    def _admit(self, role: str, arguments: list[str]) -> None:
        """R ← R ∪ arguments (Figure 7.1), keeping first-seen order."""
        seen = {a.casefold().strip() for a in self.rationale[role]}
        self.rationale[role] += [a for a in arguments if a.casefold().strip() not in seen]

    # -- metrics and convergence ----------------------------------------------------------------

    def _metrics(self, round_: int, kappa: float | None) -> MetricsComputed | None:
        """The round's metrics, or ``None`` when an agent gave no prediction this round."""
        a, b = self._fresh(AGENT_A, round_), self._fresh(AGENT_B, round_)
        if a is None or b is None:
            return None
        values: dict[str, float] = dict(asdict(M.compute_all(a.probs, b.probs)))
        judged = [self.crits[r] for r in (AGENT_A, AGENT_B) if self.crit_rounds.get(r) == round_]
        scores = [r.normalized for r in judged if r.normalized is not None]
        if len(scores) == 2:  # ΔCRIT compares like with like: both agents judged this round
            values["crit"] = sum(scores) / 2
        for role, key in ((AGENT_A, "crit_a"), (AGENT_B, "crit_b")):
            normalized = self.crits[role].normalized if role in self.crits else None
            if self.crit_rounds.get(role) == round_ and normalized is not None:
                values[key] = normalized
        if self.agreement is not None and self.agreement.last is not None:
            values.update(self.agreement.last.metrics())
        values["entropy_mixture"] = M.entropy(self._consensus())
        earlier = [r for r in self.by_round if r < round_]
        if earlier:
            values["info_gain"] = self.by_round[max(earlier)]["entropy_mixture"] - values["entropy_mixture"]
        self.by_round[round_] = values
        return MetricsComputed(self.debate_id, round_, values, kappa)

    def _consensus(self) -> dict[str, float]:
        """P_f = (Γ_A·P_A + Γ_B·P_B)/(Γ_A + Γ_B) over the agents' latest stated positions;
        equal weights where a CRIT score is missing."""
        roles = [r for r in (AGENT_A, AGENT_B) if r in self.positions]
        mixed = M.mixture([self.positions[r].probs for r in roles], [self._weight(r) for r in roles])
        assert isinstance(mixed, dict)
        return dict(sorted(mixed.items(), key=lambda kv: -kv[1]))

    def _weight(self, role: str) -> float:
        result = self.crits.get(role)
        if result is None or result.score is None:
            known = [r.score for r in self.crits.values() if r.score is not None]
            return sum(known) / len(known) if known else 1.0
        return result.score

    def _pair(self, round_: int) -> tuple[dict[str, float], dict[str, float]] | None:
        if round_ in self.by_round and round_ - 1 in self.by_round:
            return self.by_round[round_ - 1], self.by_round[round_]
        return None

    def _converged(self, round_: int) -> bool:
        """Section 7.3.2 (2): |ΔWD|, |ΔMI|, |ΔJSD| under their ε and CRIT not rising by ε,
        between two *consecutive* rounds in which both agents predicted (a round without a
        prediction is never convergence). MI is read as 1 − I(label; speaker) = 1 − JSD
        (:func:`protocols.measures.metrics.speaker_independence`), smooth at agreement; the displayed
        ``mi`` has a cusp there and half a point of wobble would move it by several ε."""
        pair = self._pair(round_)
        if pair is None:
            return False
        prev, cur = pair
        c = self.config
        d_mi = (1 - cur["jsd"]) - (1 - prev["jsd"])
        settled = (abs(cur["wd"] - prev["wd"]) < c.eps_wd and abs(d_mi) < c.eps_mi
                   and abs(cur["jsd"] - prev["jsd"]) < c.eps_jsd)
        d_crit = cur["crit"] - prev["crit"] if "crit" in cur and "crit" in prev else 0.0
        return settled and d_crit < c.eps_crit

    def _agreement(self) -> tuple[bool, str]:
        """Whether the agents' latest positions agree, in the module's one meaning: the same top
        label and JSD ≤ ``agreement_max_jsd``; when not, how they differ (for the stop reason
        and the recommendations prompt)."""
        a, b = self.positions.get(AGENT_A), self.positions.get(AGENT_B)
        if a is None or b is None:
            return False, "an agent gave no prediction"
        top_a, top_b = _top(a.probs), _top(b.probs)
        if top_a.casefold() != top_b.casefold():
            return False, f"top labels {top_a} and {top_b}"
        jsd, most = M.jensen_shannon(a.probs, b.probs), self.config.agreement_max_jsd
        if jsd > most:
            return False, f"JSD {jsd:.2f} above {most:g}"
        return True, ""

    def _settled(self, round_: int) -> tuple[str, str] | None:
        """Figure 7.1's stop rule after ``round_``: ``(stop reason, ending)``, or ``None`` while the
        debate goes on. The rule reads only the *changes* of the metrics, so two agents that stay
        exactly as far apart for two rounds (WD 1 both times) satisfy it too. The debate stops
        then, as the paper's rule says, but it is called converged only when the agents agree
        (:meth:`_agreement`); otherwise it "settled without agreement"."""
        if not self._converged(round_):
            return None
        agreed, gap = self._agreement()
        if agreed:
            return "converged: WD, MI (1 − JSD) and JSD settled and CRIT stopped rising", "converged"
        return (f"settled without agreement: WD, MI (1 − JSD) and JSD stopped changing while the agents still "
                f"disagree ({gap})", "settled_apart")

    def _signals(self, round_: int) -> RoundSignals | None:
        """Figure 7.1's changes between ``round_ − 1`` and ``round_`` (``None`` when either
        round has no metrics: the schedule then treats the round as neutral)."""
        pair = self._pair(round_)
        if pair is None:
            return None
        prev, cur = pair
        d_crit = cur["crit"] - prev["crit"] if "crit" in cur and "crit" in prev else 0.0
        d_jsd = prev["jsd"] - cur["jsd"]  # MI's term is 1 − JSD: see _converged
        return RoundSignals(d_wd=prev["wd"] - cur["wd"], d_mi=d_jsd, d_jsd=d_jsd, d_crit=d_crit)

    def _kappa(self, round_: int) -> float | None:
        if self.moderation.kappa_override is not None:
            return self.moderation.kappa_override
        return self.schedule.value(round_, self._signals(round_ - 1))

    def _phase_event(self, phase: str, round_: int, kappa: float | None) -> PhaseChanged | None:
        if phase == self._phase:
            return None
        self._phase = phase
        return PhaseChanged(self.debate_id, phase, round_, kappa)

    # -- the run --------------------------------------------------------------------------------

    async def run(self) -> AsyncIterator[Event]:
        c = self.config
        agents = self.agents
        stop_reason = (f"round cap reached: {rounds_held(c.max_rounds)}, before Figure 7.1's stop rule ended "
                       "the debate")
        ending = "cap"
        round_ = 0
        held = -1  # the last round in which a turn was taken: what the outcome and the conclusion count
        yield DebateStarted(
            self.debate_id, "evince", c.title or clip(c.case, 60), c.case, c.describe(),
            (agents.a.participant(), agents.b.participant(), agents.judge.participant()),
        )
        notice = self._self_judging_notice()
        if notice is not None:
            yield notice
        while True:
            async for event in self.moderation.checkpoint(round_):
                yield event
            if self.moderation.stopped:
                stop_reason, ending = self.moderation.stop_reason or "stopped", "stopped"
                break
            if round_ > 0 and self.moderation.skip_requested:
                stop_reason, ending = "moderator skipped to the conclusion", "skipped"
                break
            kappa = self._kappa(round_)  # after the checkpoint: a moderator override applies now
            phase_event = self._phase_event(phase_for(kappa), round_, kappa)
            if phase_event:
                yield phase_event
            after_b: list[AsyncIterator[Event]] = []  # B's CRIT, then the agreement judge
            # Round 0 is asymmetric: A states its prior without contentiousness; B explores at κ0.
            # A answers B's previous turn; B answers A's turn of this round.
            for role, k, other, answered in ((AGENT_A, None if round_ == 0 else kappa, AGENT_B, round_ - 1),
                                             (AGENT_B, kappa, AGENT_A, round_)):
                if role == AGENT_B:  # the moderator is heard between the two turns too (κ: from the next round)
                    async for event in self.moderation.checkpoint(round_, kappa=False):
                        yield event
                if self.moderation.stopped:
                    break
                opponent = self._fresh(other, answered)
                held = round_
                async for event in self._turn(role, round_, k, opponent, opponent_spoke=answered >= 0):
                    yield event
                if role == AGENT_A:  # B's turn reads the arguments A's CRIT admits: A is judged first
                    async for event in self._judge(role, round_, opponent):
                        yield event
                else:
                    after_b.append(self._judge(role, round_, opponent))
            # CRIT of B and the agreement judge read only the turns: asked at once (nothing reads
            # B's admitted arguments before A's next turn), journalled in this order.
            a, b = self._fresh(AGENT_A, round_), self._fresh(AGENT_B, round_)
            if not self.moderation.stopped and self.agreement is not None and a is not None and b is not None:
                after_b.append(self.agreement.events(self.debate_id, round_, self.said, c.case, latest=2,  # the whole case
                                                     sources=self.evidence.sources(self.all_cited) or None))
            for events in await streams_side_by_side(*after_b):
                for event in events:
                    yield event
            if self.moderation.stopped:
                stop_reason, ending = self.moderation.stop_reason or "stopped", "stopped"
                break
            metrics = self._metrics(round_, kappa)
            if metrics is not None:
                yield metrics
            settled = self._settled(round_)
            if settled is not None:
                stop_reason, ending = settled
                break
            if (round_ > 0 and metrics is not None and self.agreement is not None and self.agreement.last is not None
                    and self.agreement.last.agreed):
                stop_reason, ending = "the agreement judge said AGREEMENT (Heller et al.)", "agreement"
                break
            if round_ >= c.max_rounds:  # max_rounds refutation rounds after the opening round 0
                break
            round_ += 1

        async for event in self._conclude(held, stop_reason, ending):
            yield event

    async def _conclude(self, round_: int, stop_reason: str, ending: str) -> AsyncIterator[Event]:
        """Step 3 of Figure 7.1 after round ``round_``, the last round in which a turn was taken
        (a skip or stop heard before a round began leaves that round unheld: it is not counted,
        and the recommendations are the round after the last one held, as in docs/protocols.md's
        round numbering). ``ending`` says what ended the debate (converged, settled_apart,
        agreement, cap, skipped, stopped): the outcome records it and the recommendations
        prompt says it."""
        c = self.config
        outcome: dict[str, Any] = {"rounds": round_ + 1, "refutation_rounds": max(round_, 0), "ending": ending,
                                   "agreed": self._agreement()[0], "scoring": c.scoring, "schedule": c.schedule,
                                   "self_judging": self.self_judging(),
                                   "rationale": self.rationale, "gate_dropped": self.dropped,
                                   "improvement": self._improvement()}
        if not self.positions:
            outcome["note"] = "no agent gave a usable prediction"
            async for event in self.moderation.closing(max(round_, 0)):  # a verdict is kept; a late command said
                yield event
            if self.moderation.verdict is not None:
                outcome["moderator_verdict"] = asdict(self.moderation.verdict)
            yield DebateFinished(self.debate_id, "stopped" if self.moderation.stopped else "finished", stop_reason, outcome)
            return
        final = self._consensus()
        stale = {r: p.round for r, p in self.positions.items() if p.round != round_}
        outcome.update(
            final_distribution=final,
            top=next(iter(final)),
            weights={r: self._weight(r) for r in self.positions},
            crit={role: r.score for role, r in self.crits.items()},
        )
        if stale or len(self.positions) < 2:
            outcome["positions_from_rounds"] = {r: p.round for r, p in self.positions.items()}
        if c.reference_label is not None:
            outcome["label_check"] = self._label_check(final)
        if c.recommendations and not self.moderation.stopped:
            recs: dict[str, list[str]] = {"questions": [], "tests": []}
            async for event in self._recommend(round_ + 1, final, recs, ending):
                yield event
            outcome["recommendations"] = recs
        async for event in self.moderation.closing(max(round_, 0)):
            yield event
        if self.moderation.verdict is not None:
            outcome["moderator_verdict"] = asdict(self.moderation.verdict)
        status: Status = "stopped" if self.moderation.stopped else "finished"
        yield DebateFinished(self.debate_id, status, stop_reason, outcome)

    def self_judging(self) -> list[str]:
        """The debaters whose model is also the CRIT judge's (none without a judge)."""
        if not self.config.crit_judge:
            return []
        judge = self.agents.judge.model_id
        return [role for role, agent in ((AGENT_A, self.agents.a), (AGENT_B, self.agents.b)) if agent.model_id == judge]

    def _self_judging_notice(self) -> Notice | None:
        """Section 7.2 (1)(iii) asks for *external* CRIT scoring: say so when the judge is a
        debater's own model (allowed: a laptop may hold two models; the person is told)."""
        roles = self.self_judging()
        if not roles:
            return None
        names = " and ".join("Agent A" if r == AGENT_A else "Agent B" for r in roles)
        model = self.agents.judge.model_id
        return Notice(self.debate_id, "self_judging",
                      f"the CRIT judge runs on {model}, the model of {names}: EVINCE asks for external CRIT "
                      "scoring (Chang, section 7.2 (1)(iii)), and the judge's scores weight P_f and gate the "
                      "other agent's arguments, so a model may favour its own; add a judge on another model to check.",
                      {"judge": "judge", "model": model, "debaters": roles}, 0)

    def _improvement(self) -> dict[str, float]:
        """Tables 7.2/7.3's last row: each metric's change from the first to the last scored
        round, in % of its first value (the comparable form of WD, whose scale differs)."""
        rounds = sorted(self.by_round)
        if len(rounds) < 2:
            return {}
        first, last = self.by_round[rounds[0]], self.by_round[rounds[-1]]
        return {k: round(100 * (last[k] - first[k]) / first[k], 1) for k in ("wd", "mi", "crit", "jsd")
                if k in first and k in last and first[k] != 0}

    def _label_check(self, final: dict[str, float]) -> dict[str, Any]:
        """Section 7.4.6: flag a questionable reference label only when a confident, agreed
        consensus contradicts it: P_f(top) ≥ ``label_flag_confidence``, both agents' latest
        top-1 is that label, and their JSD ≤ ``agreement_max_jsd`` (:meth:`_agreement`). A plain
        miss is not a flag."""
        c = self.config
        reference = c.reference_label or ""
        canonical = self.labels.match(reference)
        top = next(iter(final))
        agrees = (canonical or reference).casefold() == top.casefold()
        agreed = self._agreement()[0] and _top(self.positions[AGENT_A].probs).casefold() == top.casefold()
        confident = final[top] >= c.label_flag_confidence
        flag = None
        if not agrees and agreed and confident:
            flag = (f"both agents agree on {top} with {final[top]:.0%} confidence, against the reference label "
                    f"({canonical or reference}); check the label")
        return {
            "reference": canonical or reference, "consensus": top, "agrees": agrees,
            "reference_probability": final.get(canonical or reference, 0.0),
            "confident": confident, "agreed": agreed, "flag": flag,
        }

    async def _recommend(self, round_: int, final: dict[str, float], recs: dict[str, list[str]],
                         ending: str) -> AsyncIterator[Event]:
        """Joint follow-ups: A drafts, B completes, both at κ = 0.3 (appendix 7.E.6). The request
        says what ended the debate: only Figure 7.1's stop rule with the agents agreeing is called
        convergence. With evidence, each agent is shown the passages as in its debate turns (what
        the record already holds decides which questions and tests are still worth proposing)
        and lists the claims it makes, each checked."""
        kappa = 0.3
        combined = format_distribution(final)
        _, gap = self._agreement()
        opening = {
            "converged": f"The debate converged (its metrics stopped changing) on: {combined}.",
            "settled_apart": (f"The debate settled without agreement: the agents stopped changing their positions but "
                              f"still disagree ({gap}); their combined position is: {combined}."),
            "agreement": f"The agreement judge found the agents in agreement on: {combined}.",
            "skipped": f"The moderator ended the debate before it converged; the agents' combined position is: {combined}.",
        }.get(ending, f"The debate reached its round cap without converging; the agents' combined position is: {combined}.")
        event = self._phase_event("conciliatory", round_, kappa)
        if event:
            yield event
        for role in (AGENT_A, AGENT_B):
            agent = self.agents.a if role == AGENT_A else self.agents.b
            ask = (f"{opening} {instruction(kappa)} "
                   "Together with the other agent, list further questions to ask and tests to run that would "
                   "confirm or refute this conclusion.")
            if recs["questions"] or recs["tests"]:
                ask += f" The other agent proposed: {json.dumps(recs, ensure_ascii=False)}. Keep what is useful and add what is missing."
            tokens = self.evidence.reply_tokens(self.config.turn_tokens)
            grounded = self.evidence.ground(agent, self.messages[role], ask, [f"{self.config.case}\n{ask}"], reply_tokens=tokens)
            ask = grounded.request
            history = [*self.messages[role], Message("user", ask)]
            fit = agent.fit(history, tokens)
            turn = agent.turn(fit.messages, schema=self.evidence.schema(Recommendations),
                              options=agent.options.merged(max_tokens=tokens))
            async for ev in self.moderation.stream(turn, round_=round_, phase="conciliatory", kind="recommendations"):
                yield ev
            assert turn.completion is not None
            reply, parse_notes = parse_as(turn.completion.text, Recommendations)
            said = self.evidence.read(turn.completion.text)
            notes = [*grounded.notes, *fit.notes, *parse_notes, *said.notes]
            if reply is not None:
                recs["questions"] = _merge(recs["questions"], reply.questions)
                recs["tests"] = _merge(recs["tests"], reply.tests)
            text = "\n".join([*(f"? {q}" for q in recs["questions"]), *(f"+ {t}" for t in recs["tests"])]) or turn.completion.text
            yield TurnFinished(self.debate_id, role, agent.model_id, "conciliatory", round_, "recommendations",
                               text=text, raw=turn.completion.text, call=turn.call(),
                               parsed=reply.model_dump() if reply else None, parse_notes=tuple(notes), kappa=kappa,
                               request=ask, citations=said.citations)


def _merge(old: list[str], new: list[str]) -> list[str]:
    seen = {s.casefold().strip() for s in old}
    return old + [s.strip() for s in new if s.strip() and s.casefold().strip() not in seen]


async def run(config: EvinceConfig, agents: EvinceAgents, *, debate_id: str,
              channel: CommandChannel | None = None, evidence: Grounding = NO_EVIDENCE) -> AsyncIterator[Event]:
    """Run one EVINCE debate, yielding its events (the protocol's public entry point)."""
    async for event in Evince(config, agents, debate_id=debate_id, channel=channel, evidence=evidence).run():
        yield event


async def predict_alone(config: EvinceConfig, agent: Agent, *, debate_id: str,
                        evidence: Grounding = NO_EVIDENCE) -> AsyncIterator[Event]:
    """One model's prediction on its own, journalled as a "single" run: EVINCE's opening turn
    (agent A's prompt, no opponent, no contentiousness). The diagnosis benchmark's single-model
    baselines and the inputs of its mixture and vote ensembles (section 7.4.1); with
    ``evidence``, its evidence arm (the turn shown the passages most relevant to the case)."""
    run_ = Evince(config, EvinceAgents(agent, agent, agent), debate_id=debate_id, evidence=evidence)
    yield DebateStarted(debate_id, "single", config.title or clip(config.case, 60), config.case,
                        config.describe(), (agent.participant(),))
    if evidence:
        yield evidence.attached(debate_id)
    async for event in run_._turn(AGENT_A, 0, None, None, opponent_spoke=False):
        yield event
    position = run_.positions.get(AGENT_A)
    probs = position.probs if position is not None else {}
    yield DebateFinished(debate_id, "finished", "single prediction" if probs else "single prediction: no usable reply",
                         {"final_distribution": probs, "top": next(iter(probs), None), "rounds": 1})


#: The chain-of-thought request: reasoning in free text before any distribution is asked for.
REASON_FIRST = ("Before you answer, think it through step by step: which findings matter, which labels fit "
                "them and which do not, and why. Write your reasoning only; do not give probabilities yet.")


async def predict_reasoned(config: EvinceConfig, agent: Agent, *, debate_id: str) -> AsyncIterator[Event]:
    """One model's chain of thought, journalled as a "single" run: the model reasons in free
    text (up to ``turn_tokens``), then gives its top-k as :func:`predict_alone` does, with its
    reasoning in its context. The diagnosis benchmark's ``cot`` arm and each sample of its
    ``self-consistency`` arm: one model spending tokens on reasoning instead of on a debate
    (does debate beat a vote at the same cost?)."""
    run_ = Evince(config, EvinceAgents(agent, agent, agent), debate_id=debate_id)
    yield DebateStarted(debate_id, "single", config.title or clip(config.case, 60), config.case,
                        config.describe(), (agent.participant(),))
    history = run_.messages[AGENT_A]
    history += [Message("system", run_._system(AGENT_A)), Message("user", REASON_FIRST)]
    fit = agent.fit(history, config.turn_tokens)
    turn = agent.turn(fit.messages, options=agent.options.merged(max_tokens=config.turn_tokens))
    async for event in run_.moderation.stream(turn, round_=0, phase=phase_for(None), kind="reasoning"):
        yield event
    assert turn.completion is not None
    history.append(Message("assistant", turn.completion.text))
    yield TurnFinished(debate_id, AGENT_A, agent.model_id, phase_for(None), 0, "reasoning", text=turn.completion.text,
                       raw=turn.completion.text, call=turn.call(), request=REASON_FIRST, parse_notes=fit.notes)
    async for event in run_._turn(AGENT_A, 0, None, None, opponent_spoke=False):
        yield event
    position = run_.positions.get(AGENT_A)
    probs = position.probs if position is not None else {}
    yield DebateFinished(debate_id, "finished", "reasoned prediction" if probs else "reasoned prediction: no usable reply",
                         {"final_distribution": probs, "top": next(iter(probs), None), "rounds": 1})


async def resume(debate: dict[str, Any], agents: EvinceAgents, *,
                 channel: CommandChannel | None = None) -> AsyncIterator[Event]:
    """Continue a journalled EVINCE debate (``store.queries.Queries.debate``) from its last
    finished turn, under the config it was started with, by replaying its journal
    (:mod:`protocols.core.replay`)."""
    config = EvinceConfig.from_description(debate["config"])
    async for event in replay.resume(debate, lambda ch: run(config, agents, debate_id=debate["id"], channel=ch),
                                     channel=channel):
        yield event


# -- the protocol's definition (see protocols/core/definition.py): every interface is generated from it --

from collections.abc import Mapping  # noqa: E402 - the definition closes the module

from protocols.core.definition import Conclusion, Input, Panel, ProtocolDefinition, Role  # noqa: E402
from protocols.core.moderation import Honoured  # noqa: E402
from protocols.core.roles import JUDGE  # noqa: E402
from protocols.measures.labels import LABEL_SOURCES, read_label_set  # noqa: E402

#: The case the app's form shows filled in for a first debate (the demo).
DEMO_CASE = (
    "A patient presents with itching, vomiting, fatigue, weight loss, high fever, yellowish skin, "
    "dark urine and abdominal pain."
)


#: The debate screen's side panels: the agents' distributions, Tables 7.2/7.3's metrics per round.
PANELS = (
    Panel("distributions", "Distributions"),
    Panel("metrics", "Metrics", columns=(("round", "round"), ("phase", "phase"), ("κ", "kappa"), ("WD", "wd"), ("MI", "mi"),
                                        ("CRIT", "crit"), ("JSD", "jsd")),
          curves=(("JSD", "jsd"), ("WD", "wd"), ("MI", "mi"), ("CRIT", "crit"), ("κ", "kappa"))),
    Panel("judgements", "Judgements"),
)


def conclude(outcome: Mapping[str, Any]) -> Conclusion:
    """What an EVINCE debate concluded (its ``ending`` decides the words): only a convergence
    with the agents agreeing, or the agreement judge, is called agreement; otherwise the
    combined distribution P_f is said to *lean* to its top label."""
    rounds = outcome.get("refutation_rounds")
    after = f" after the opening round and {rounds} refutation round{'s' if rounds != 1 else ''}" if isinstance(rounds, int) else ""
    top = outcome.get("top")
    final = outcome.get("final_distribution") or {}
    if not top:
        return Conclusion(f"No agent gave a usable prediction{after}.", "no prediction")
    p = percent(final, str(top))
    combined = f"{top} ({p} in the combined distribution P_f)" if p else str(top)
    ending = outcome.get("ending")
    sentence, short = {
        "converged": (f"The agents converged on {combined}{after}.", f"{top} (converged)"),
        "agreement": (f"The agreement judge found the agents agreeing on {combined}{after}.", f"{top} (agreed)"),
        "settled_apart": (f"The agents settled without agreement{after}: their positions stopped changing while they "
                          f"still disagreed; the combined distribution leans to {combined}.", f"no agreement (leaning {top})"),
        "skipped": (f"The moderator ended the debate before it converged{after}; the combined distribution leans to "
                    f"{combined}.", f"not converged (leaning {top})"),
        "stopped": (f"The debate was stopped before it converged{after}; the combined distribution stood at {combined}.",
                    f"stopped (leaning {top})"),
    }.get(str(ending), (f"The round cap ended the debate before it converged{after}; the combined distribution leans "
                        f"to {combined}.", f"not converged (leaning {top})"))
    check = outcome.get("label_check")
    if isinstance(check, Mapping):
        if check.get("flag"):
            sentence += f" Flag: {check['flag']}."
        elif check.get("reference"):
            sentence += (f" The reference label {check['reference']} "
                         f"{'agrees' if check.get('agrees') else 'differs'}.")
    recs = outcome.get("recommendations")
    if isinstance(recs, Mapping):
        q, t = len(worded(recs.get("questions"))), len(worded(recs.get("tests")))
        if q or t:
            sentence += f" They recommend {q} further question{'s' if q != 1 else ''} and {t} test{'s' if t != 1 else ''}."
    return Conclusion(sentence, short)


def _team(agents: Mapping[str, Agent]) -> EvinceAgents:
    return EvinceAgents(agents[AGENT_A], agents[AGENT_B], agents[JUDGE])


def _start(config: EvinceConfig, team: EvinceAgents, debate_id: str, channel: CommandChannel, person: Any,
           evidence: Grounding) -> AsyncIterator[Event]:
    return run(config, team, debate_id=debate_id, channel=channel, evidence=evidence)


DEFINITION = ProtocolDefinition(
    name="evince",
    title="EVINCE",
    summary="Two agents weigh the possible answers to a case until their probabilities converge (Chang, ch. 7).",
    config_cls=EvinceConfig,
    inputs=(
        Input("case", "Case", "textarea", example=DEMO_CASE,
              help="the facts of the case: symptoms, history, findings (or @ and a file's path: its text)"),
        Input("labels", "Answers to choose from", "select", default="open", choices=tuple(LABEL_SOURCES.items()),
              open_choice=True, parse=read_label_set, example="symptom2disease",
              help="the labels: a built-in list, 'open' (the agents name their own), or a file: one label a line, or a CSV with "
                   "a 'disease' or 'label' column ('open:FILE': open, with FILE's 'synonym = label' lines merging "
                   "spellings)"),
    ),
    roles=(
        Role(AGENT_A, "Agent A (confirmatory)", example="smollm2-135m",
             help="holds to the likeliest answers and defends them"),
        Role(AGENT_B, "Agent B (explorer)", example="gemma3-270m", help="looks for the answers agent A may miss"),
        Role(JUDGE, "Judge", example="smollm2-135m",
             help="scores the quality of each argument (CRIT); best, a model that does not also debate"),
    ),
    prepare=lambda v: {"case": v["case"], "labels": v["labels"]},
    team=_team,
    start=_start,
    commands=HONOURED,
    panels=PANELS,
    conclude=conclude,
    present=present,
    samples=SAMPLES,
)
