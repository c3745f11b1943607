"""``symposium bench diagnosis``: does debate help? EVINCE's section 7.4 on your own models.

On the same cases, one run compares: each model alone; the two models' plain mixture and
majority vote (no debate); two equal-cost baselines of one model (does debate beat a
vote at the same cost?): ``cot``, one reasoned answer (:func:`protocols.evince.predict_reasoned`),
and ``self-consistency``, k such answers sampled at ``sc_temperature`` and majority-voted, with
k = the debate arms' measured mean generated tokens per case over the cot arm's (or ``--k``);
EVINCE under each cooling schedule (section 7.4.5's ablation: none / fixed / linear /
exponential, and Figure 7.1's adaptive ``Update``, EVINCE's own default). Every prediction is
journalled as a debate (a "single" run or an EVINCE run) so a surprising case can be opened in
the app. Self-consistency runs after every other arm has run on every case, since its k is
measured from them.

A model that gives no usable prediction for a case has *no prediction* there (scored as a
miss), never an invented one: the mixture and the vote combine the models that answered
(the other model's distribution alone when one failed, nothing when both did), and the
report counts, per system, the cases without a prediction and the ensembles' cases built
from one model only.

With ``--evidence FILE`` (a short file of disease descriptions: docs/diagnosis-benchmark.md says
how to build one from the dataset's description table), each model also answers every case alone
with the evidence (``"<model> alone + evidence"``): shown the passages most relevant to the case,
listing its claims with their sources, at the same reply limit as the plain arm (no tokens added
for the claims). The report then gives, per model, the accuracy with and without the evidence,
the citation precision (the share of citations that check) and the share of claims with a
supported citation (:func:`evidence_rows`).

Finished (case, system) results are appended to ``PATH.cases.jsonl`` as they come, so an
interrupted run picks up where it stopped. Cases run ``--jobs`` at a time (each job has its own
KV caches; with one llama.cpp thread per model, two jobs keep two cores busy).

Two designs (``--design``), and the report says which one ran:

* ``paper`` (default): section 7.4.5 as the paper ran it: the CRIT judge on, the opening round
  and up to 3 refutation rounds (``max_rounds`` = 3: the paper's debates hold the opening and
  two refutation rounds, Tables 7.2/7.3, whose "Round 1" is the opening exchange; Table 7.3's
  fourth row is appendix 7.E.5's joint final assessment at κ 0.3, which EVINCE's
  recommendations are, not a round of debate; the one round more keeps a slowly cooling arm
  from being cut before it can converge) so that the schedules reach different κ
  (linear 0.9, 0.7, 0.5, 0.3 vs exponential 0.9, 0.52, 0.30, 0.17) and convergence can end a
  debate early, EVINCE's default
  turn and argument lengths. The judge must be named (``--judge``): section 7.2 (1)(iii) asks
  for *external* CRIT scoring, and the judge's scores weight P_f and gate the other agent's
  arguments. A third model is what a researcher expects; naming model A or B explicitly is
  allowed (a laptop may hold two models), and then the report (md and json), the terminal and
  every journalled debate (a ``self_judging`` notice the app shows) say that a debater
  judges itself. No silent default: with no ``--judge`` the run stops with an error that
  names the flag.
* ``quick``: a cheap smoke run: no judge (equal weights in P_f, no quality gate), the opening
  and one refutation round, 48-token turns. Its schedules differ in one κ only: not the
  paper's ablation.

Labels: the models choose from the cases' classes (a closed set), or with ``open_labels`` name
them themselves (EVINCE's default, an open set read by the spelling rules of
:mod:`protocols.measures.labels`); either way a prediction is scored against the class set's rules. The
report counts, over the two single models' answers to each case, the agreeing pairs that
spelling alone keeps apart (:func:`spelling_split`): with the open set's rules and with case and
punctuation alone, the rule an open debate had before. ``credit_related`` credits the class
set's broader and narrower names to their classes and counts those hits apart.

Statistics: ours (percentile intervals, Wilcoxon on per-case reciprocal ranks, one
Benjamini–Hochberg family of every system against the better single model) and the paper's
beside them (section 7.4.1.3: the test on 20 replicates, BH over *its* family, each EVINCE pair
against its stronger single model: here the debate arms). Per debate arm, the rounds to
convergence (section 7.4.5's "three vs. four rounds") and section 7.4.1.2's convergence figures.
"""

from __future__ import annotations

import asyncio
import csv
import functools
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backends.base import Backend, SamplingOptions
from backends.llamacpp import LlamaCppBackend
from backends.private import append_private, private_dir
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.costs import Cost, Ledger
from protocols.core.definition import ProtocolDefinition
from protocols.core.events import DebateFinished, Event, MetricsComputed, TurnFinished
from protocols.core.evidence import EvidenceSettings, Grounding
from protocols.core.roles import AGENT_A, AGENT_B, JUDGE
from protocols.measures import evaluation as E
from protocols.measures.citations import tally
from protocols.measures.labels import BUILTIN_RELATED, BUILTIN_SYNONYMS, LabelSet, normalize_label, read_related, read_synonyms
from protocols.measures.metrics import mixture, wasserstein
from protocols.registry import PROTOCOLS, definition
from store.drive import drive
from store.journal import Journal, new_debate_id

#: The debating arms run EVINCE as its definition builds and starts it (as the app and CLI do).
EVINCE = definition("evince")

#: The default arms: section 7.4.5's four plus Figure 7.1's ``Update`` (EVINCE's default).
SCHEDULES = ("none", "fixed", "linear", "exponential", "adaptive")
#: Schedules ``--schedules`` accepts.
ALL_SCHEDULES = SCHEDULES


@dataclass(frozen=True)
class Design:
    """One way of running the ablation: rounds, judge, turn sizes (``None``: EVINCE's default).
    ``max_rounds`` is EVINCE's: refutation rounds after the opening round."""

    name: str
    summary: str
    max_rounds: int
    crit_judge: bool
    turn_tokens: int | None
    crit_tokens: int | None


DESIGNS: dict[str, Design] = {
    "paper": Design("paper", "section 7.4.5: external CRIT judge, the opening and up to 3 refutation rounds "
                             "(the paper's debates: the opening and two), paragraph-long arguments", 3, True, None, None),
    "quick": Design("quick", "smoke run, not the paper's ablation: no judge, the opening and 1 refutation round, "
                             "48-token turns", 1, False, 48, 96),
}


@dataclass
class Case:
    case_id: str
    disease: str
    symptoms: list[str]

    @property
    def text(self) -> str:
        return "A patient presents with: " + ", ".join(s.replace("_", " ").strip() for s in self.symptoms) + "."


@dataclass
class BenchConfig:
    cases: Path
    models: tuple[str, str]
    out: Path
    judge: str | None = None
    scoring: str = "verbalized"
    schedules: tuple[str, ...] = SCHEDULES
    limit: int | None = None
    seed: int = 0
    jobs: int = 1
    synonyms: Path | None = None
    design: str = "paper"
    #: ``None``: the design's value (see :data:`DESIGNS`).
    max_rounds: int | None = None
    turn_tokens: int | None = None
    crit_tokens: int | None = None
    top_k: int = 3
    n_boot: int = 1000
    #: The equal-cost baselines' model (``cot`` and ``self-consistency``); ``None``: model A.
    baseline_model: str | None = None
    #: Self-consistency's sample count; ``None``: measured (:func:`choose_k`).
    k: int | None = None
    #: Sampling temperature of self-consistency's samples (Wang et al. 2023 sample at 0.5–0.7;
    #: at the model's greedy default k samples would be one answer k times).
    sc_temperature: float = 0.7
    #: The models name the labels (EVINCE's default open class set) instead of choosing from the
    #: cases' classes; predictions are still scored against the classes by the class set's rules.
    open_labels: bool = False
    #: Credit a broader or narrower name (``symptom2disease_related.txt``) to its class when
    #: scoring, and count those hits apart.
    credit_related: bool = False
    #: The evidence arm's file (disease descriptions); ``None``: no evidence arm.
    evidence: Path | None = None
    #: Further protocols run as arms, by name: each declares how (its definition's ``diagnosis``).
    protocols: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.design not in DESIGNS:
            raise ValueError(f"unknown design {self.design!r}; choose from {', '.join(DESIGNS)}")
        d = DESIGNS[self.design]
        if d.crit_judge and not self.judge:
            raise ValueError(f"--design {self.design} needs a CRIT judge: give --judge MODEL, a third model (Chang, "
                             "section 7.2 (1)(iii): external CRIT scoring, whose scores weight P_f and gate the "
                             "arguments). Naming model A or B makes that debater judge itself, which the report then "
                             "says; --design quick runs without a judge")
        if self.k is not None and self.k < 1:
            raise ValueError(f"--k must be at least 1, not {self.k}")
        for name in self.protocols:
            if definition(name).diagnosis is None:  # KeyError names the known protocols
                offered = ", ".join(d.name for d in diagnosing()) or "none"
                raise ValueError(f"--protocol {name}: the protocol does not say how to diagnose a case; protocols that "
                                 f"do: {offered}")
        if self.baseline_model is not None and self.baseline_model not in self.models:
            raise ValueError(f"--baseline-model {self.baseline_model!r} is not one of --models {','.join(self.models)}")
        defaults = evince.EvinceConfig(case="")
        self.max_rounds = d.max_rounds if self.max_rounds is None else self.max_rounds
        self.turn_tokens = self.turn_tokens or d.turn_tokens or defaults.turn_tokens
        self.crit_tokens = self.crit_tokens or d.crit_tokens or defaults.crit_tokens

    @property
    def crit_judge(self) -> bool:
        return DESIGNS[self.design].crit_judge

    @property
    def baseline(self) -> str:
        """The model of the ``cot`` and ``self-consistency`` arms (model A unless named)."""
        return self.baseline_model or self.models[0]

    @property
    def judge_model(self) -> str | None:
        """The CRIT judge: ``judge`` when the design judges (required then), else none."""
        return self.judge if self.crit_judge else None

    @property
    def self_judging(self) -> list[str]:
        """The debaters (``agent-a``, ``agent-b``) whose model is also the CRIT judge."""
        judge = self.judge_model
        return [role for role, model in zip((AGENT_A, AGENT_B), self.models) if judge is not None and model == judge]


@dataclass
class Outcome:
    """One system's answer to one case."""

    case_id: str
    system: str
    truth: str
    prediction: dict[str, float]
    rounds: int
    tokens: int
    seconds: float
    debate_id: str
    stop_reason: str = ""
    #: ``tokens`` split: tokens generated, and prompt tokens evaluated (not taken from a KV cache).
    generated_tokens: int = 0
    prompt_tokens: int = 0
    #: Per scored round of a debate: its ``round``, ``entropy_mixture`` (H(P_f)) and ``wd``.
    trajectory: list[dict[str, float]] = field(default_factory=list)
    #: Self-consistency: how many samples were drawn (k).
    samples: int = 0
    #: A debate's ending (EVINCE's ``ending``: converged, settled_apart, cap, …).
    ending: str = ""
    #: Per debate round from the second on: each agent's 1 − WD between its distribution in the
    #: round before and this one (section 7.4.1.2's "1-WD between successive rounds").
    successive: list[dict[str, float]] = field(default_factory=list)
    #: The evidence arm: the claims its turns listed, and how many of them a citation supported
    #: or cited a passage that was not found (fabricated or misquoted).
    claims: int = 0
    supported: int = 0
    not_found: int = 0
    #: What each agent's calls cost on this case, by "role (model)": a
    #: :class:`protocols.core.costs.Cost` as JSON.
    costs: dict[str, dict[str, Any]] = field(default_factory=dict)


def agent_costs(ledger: Ledger) -> dict[str, dict[str, Any]]:
    """A run's costs per agent, by "role (model)" (the two single models are both "agent-a")."""
    return {f"{role} ({', '.join(ledger.models.get(role, [])) or '?'})": cost.to_json() for role, cost in ledger.agents.items()}


def merged_costs(outcomes: Sequence[Outcome]) -> dict[str, Cost]:
    """The costs of several runs added up per agent (an ensemble's models, a vote's samples,
    one system's cases)."""
    merged: dict[str, Cost] = {}
    for outcome in outcomes:
        for agent, data in outcome.costs.items():
            merged.setdefault(agent, Cost()).merge(Cost.from_json(data))
    return merged


@dataclass
class Report:
    config: dict[str, Any]
    systems: list[str]
    rows: dict[str, dict[str, Any]]
    comparisons: list[dict[str, Any]]
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    #: Per system, every label renamed or merged when scoring ("c3: 'Dengue fever' -> 'Dengue' (synonym)").
    label_merges: dict[str, list[str]] = field(default_factory=dict)
    #: The single models' agreeing answers that spelling keeps apart (:func:`spelling_split`).
    spelling: dict[str, Any] = field(default_factory=dict)
    #: The evidence arm per model (:func:`evidence_rows`); empty without ``--evidence``.
    evidence: list[dict[str, Any]] = field(default_factory=list)


# -- cases and labels ---------------------------------------------------------------------------


def read_cases(path: Path, *, limit: int | None, seed: int) -> list[Case]:
    """Cases from a CSV with ``case_id, disease, symptoms`` (``;``-separated). With ``limit``,
    a reproducible random subset (``seed``), in file order."""
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    missing = {"case_id", "disease", "symptoms"} - set(rows[0] if rows else {})
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    cases = [Case(r["case_id"], r["disease"].strip(), [s for s in r["symptoms"].split(";") if s.strip()]) for r in rows]
    if limit is not None and limit < len(cases):
        keep = sorted(np.random.default_rng(seed).choice(len(cases), size=limit, replace=False))
        cases = [cases[i] for i in keep]
    return cases


def label_set(cases: Sequence[Case], synonyms: Path | None, *, related: bool = False) -> LabelSet:
    """The class set: the file's diseases (normalized for matching), with the built-in
    Symptom2Disease synonym map's entries for the diseases present (section 7.4.1.2's synonym
    mapping; a set of other labels takes none of them) and then the user's synonyms (lines
    ``synonym = canonical label``), so that "Dengue fever" scores and debates as "Dengue".
    With ``related``, also the built-in broader and narrower names of the diseases present."""
    names = list({normalize_label(c.disease): c.disease for c in reversed(cases)}.values())[::-1]
    labels = LabelSet(names)
    labels.add_known_synonyms(read_synonyms(BUILTIN_SYNONYMS["symptom2disease"]))
    if related:
        for name, (label, relation) in read_related(BUILTIN_RELATED["symptom2disease"]).items():
            if label in labels and name not in labels and labels.match(name) is None:
                labels.add_related(name, label, relation)
    if synonyms is not None:
        for synonym, canonical in read_synonyms(synonyms).items():
            try:
                labels.add_synonym(synonym, canonical)
            except ValueError as exc:
                raise ValueError(f"{synonyms}: {exc}; fix the line '{synonym} = {canonical}'") from None
    return labels


# -- running the systems ------------------------------------------------------------------------


def _as_json(costs: dict[str, Cost]) -> dict[str, dict[str, Any]]:
    return {agent: cost.to_json() for agent, cost in costs.items()}


def choose_k(debate_generated: float, cot_generated: float) -> int:
    """Self-consistency's k: as many reasoned answers as cost the debate's generated tokens per
    case, ``round(debate / cot)``, at least 1 (so the vote is never cheaper than one answer).
    Generated tokens, not prompt tokens: decoding is what a local model pays most for, and a
    debate's prompts are mostly served from its KV caches."""
    if cot_generated <= 0 or debate_generated <= 0:
        return 1
    return max(1, round(debate_generated / cot_generated))


def vote(samples: Sequence[dict[str, float]]) -> dict[str, float]:
    """Self-consistency's majority vote over samples' distributions: each sample votes its top
    label; the distribution is the vote shares. Equal shares are ordered by the labels' mean
    probability over all samples (0 where a sample did not name it), written as a nudge of at
    most 10⁻⁶ so that the ranking, hence Acc@1 and MRR, follows it. Samples without a
    prediction do not vote; none at all gives no prediction."""
    answered = [s for s in samples if s]
    if not answered:
        return {}
    tops = Counter(normalize_label(max(s.items(), key=lambda kv: kv[1])[0]) for s in answered)
    names: dict[str, str] = {}
    mean: dict[str, float] = {}
    for sample in answered:
        for label, p in sample.items():
            names.setdefault(normalize_label(label), label)
            mean[normalize_label(label)] = mean.get(normalize_label(label), 0.0) + p / len(answered)
    shares = {key: count / len(answered) + 1e-6 * mean.get(key, 0.0) for key, count in tops.items()}
    total = sum(shares.values())
    return {names[key]: v / total for key, v in sorted(shares.items(), key=lambda kv: -kv[1])}


class Bench:
    """Runs every system on every case, journalling each run and caching each result."""

    def __init__(self, config: BenchConfig, backends: dict[str, Backend], options: dict[str, SamplingOptions],
                 journal: Journal, on_done: Callable[[Outcome], None] = lambda _: None,
                 evidence: Grounding | None = None) -> None:
        self.config = config
        #: The evidence arm's files, read and indexed once (``None``: no evidence arm).
        self.evidence = evidence
        self.backends = backends
        self.options = options
        self.journal = journal
        self.on_done = on_done
        self.cache_path = config.out.with_name(config.out.name + ".cases.jsonl")
        private_dir(self.cache_path.parent, ours=False)
        self.done: dict[tuple[str, str], Outcome] = {}
        if self.cache_path.exists():
            for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    o = Outcome(**json.loads(line))
                    self.done[(o.case_id, o.system)] = o
        #: Self-consistency's k once known (given, measured, or read back from the cache).
        self.k: int | None = config.k

    @property
    def single_names(self) -> list[str]:
        return [f"{m} alone" for m in self.config.models]

    @property
    def ensemble_names(self) -> list[str]:
        return ["mixture (no debate)", "majority vote (no debate)"]

    @property
    def cot_name(self) -> str:
        return f"cot ({self.config.baseline})"

    @property
    def sc_name(self) -> str:
        return f"self-consistency ({self.config.baseline})"

    @property
    def debate_names(self) -> list[str]:
        return [f"EVINCE, {s} cooling" for s in self.config.schedules]

    @property
    def evidence_names(self) -> list[str]:
        return [f"{m} alone + evidence" for m in self.config.models] if self.evidence else []

    @property
    def protocol_names(self) -> list[str]:
        """The further protocols' arms, by title (``Multiagent debate``)."""
        return [definition(name).title for name in self.config.protocols]

    @property
    def systems(self) -> list[str]:
        return [*self.single_names, *self.evidence_names, *self.ensemble_names, self.cot_name, self.sc_name,
                *self.debate_names, *self.protocol_names]

    def _save(self, outcome: Outcome) -> None:
        self.done[(outcome.case_id, outcome.system)] = outcome
        append_private(self.cache_path, json.dumps(asdict(outcome)) + "\n")  # 0600: it holds the models' answers
        self.on_done(outcome)

    def _agent(self, model: str, role: str, job: int, **options: Any) -> Agent:
        """An agent with its own KV cache per job, seeded for reproducible runs."""
        return Agent(role, self.backends[model], self.options[model].merged(**{"seed": self.config.seed, **options}),
                     session_key=f"job{job}/{role}")

    def _evince_config(self, case: Case, labels: LabelSet, schedule: str) -> evince.EvinceConfig:
        c = self.config
        return evince.EvinceConfig(
            case=case.text, labels=None if c.open_labels else labels, title=f"{case.case_id}: {case.disease}", top_k=c.top_k,
            scoring=c.scoring,  # type: ignore[arg-type]  # the CLI's choices are the config's Literal
            schedule=schedule, max_rounds=DESIGNS[c.design].max_rounds if c.max_rounds is None else c.max_rounds,
            reference_label=case.disease,
            recommendations=False, turn_tokens=c.turn_tokens or 48, crit_tokens=c.crit_tokens or 96,
            crit_judge=c.crit_judge,
        )

    async def _run(self, events_of: Callable[[str], Any], case: Case, system: str) -> Outcome:
        """Drive one journalled run and summarise it as an :class:`Outcome`."""
        debate_id = new_debate_id()
        generated = prompt = 0
        ledger = Ledger()
        trajectory: list[dict[str, float]] = []
        said: dict[str, dict[int, dict[str, float]]] = {}  # role -> round -> its distribution
        cited: list[Any] = []

        def count(event: Event) -> None:
            nonlocal generated, prompt
            if isinstance(event, TurnFinished):
                cited.extend(event.citations)
            call = getattr(event, "call", None)  # turns, judgements and other model calls
            if call is not None:
                generated += call.completion_tokens
                prompt += call.prompt_tokens_evaluated
                ledger.add(asdict(call))
            if isinstance(event, MetricsComputed):
                trajectory.append({"round": event.round, **{k: float(event.metrics[k]) for k in ("entropy_mixture", "wd")
                                                            if k in event.metrics}})
            if isinstance(event, TurnFinished) and event.kind in ("opening", "refutation") and event.distribution:
                said.setdefault(event.role, {})[event.round] = dict(event.distribution)

        started = time.perf_counter()
        final: DebateFinished | None = await drive(events_of(debate_id), self.journal, count)
        seconds = time.perf_counter() - started
        outcome = final.outcome if final else {}
        counts = tally(cited)
        return Outcome(case.case_id, system, case.disease, dict(outcome.get("final_distribution") or {}),
                       int(outcome.get("rounds", 0)), generated + prompt, round(seconds, 3), debate_id,
                       final.stop_reason if final else "cut off", generated, prompt, trajectory,
                       ending=str(outcome.get("ending") or ""), successive=successive(said),
                       claims=counts["claims"], supported=counts["supported"], not_found=counts["not_found"],
                       costs=agent_costs(ledger))

    async def run_case(self, case: Case, labels: LabelSet, job: int) -> None:
        """Every arm but self-consistency on one case (whose k needs every case's debates)."""
        a, b = self.config.models
        singles: list[Outcome] = []
        for model, name in zip((a, b), self.single_names):
            if (case.case_id, name) not in self.done:
                agent = self._agent(model, AGENT_A, job)
                config = self._evince_config(case, labels, "none")
                self._save(await self._run(functools.partial(_single, config, agent), case, name))
            singles.append(self.done[(case.case_id, name)])
        for model, name in zip((a, b), self.evidence_names):
            if self.evidence is not None and (case.case_id, name) not in self.done:
                agent = self._agent(model, AGENT_A, job)
                config = self._evince_config(case, labels, "none")
                self._save(await self._run(functools.partial(_grounded, config, agent, self.evidence), case, name))
        for outcome in self._ensembles(case, singles):
            if (case.case_id, outcome.system) not in self.done:
                self._save(outcome)
        if (case.case_id, self.cot_name) not in self.done:
            agent = self._agent(self.config.baseline, AGENT_A, job)
            config = self._evince_config(case, labels, "none")
            self._save(await self._run(functools.partial(_reasoned, config, agent), case, self.cot_name))
        for schedule, name in zip(self.config.schedules, self.debate_names):
            if (case.case_id, name) in self.done:
                continue
            judge_model = self.config.judge_model or a  # without a judge (quick) this agent is never called
            team = EVINCE.team({role: self._agent(model, role, job)
                                for role, model in ((AGENT_A, a), (AGENT_B, b), (JUDGE, judge_model))})
            config = self._evince_config(case, labels, schedule)
            self._save(await self._run(functools.partial(_debate, config, team), case, name))
        for protocol, name in zip(self.config.protocols, self.protocol_names):
            if (case.case_id, name) not in self.done:
                self._save(await self._run(self._protocol_arm(protocol, case, labels, job), case, name))

    def _protocol_arm(self, name: str, case: Case, labels: LabelSet, job: int) -> Callable[[str], AsyncIterator[Event]]:
        """A further protocol's run on one case, its roles seated with the benchmark's two
        models as its definition says, at the design's profile."""
        protocol = definition(name)
        assert protocol.diagnosis is not None  # checked by BenchConfig
        a, b = self.config.models
        seats = protocol.diagnosis.seats(a, b)
        team = protocol.team({role: self._agent(model, role, job) for role, model in seats.items()})
        config = protocol.diagnosis.config(case.text, None if self.config.open_labels else labels,
                                           "small" if self.config.design == "quick" else "standard")
        return lambda debate_id: protocol.run(config, team, debate_id=debate_id)

    def measured_k(self, cases: Sequence[Case]) -> int:
        """k for self-consistency: ``--k``, else the k of the samples already cached (a resumed
        run keeps its k), else :func:`choose_k` of the debate arms' mean generated tokens per
        case (over every debate arm and case) and the cot arm's."""
        if self.k is not None:
            return self.k
        cached = [o.samples for case in cases if (o := self.done.get((case.case_id, self.sc_name))) and o.samples]
        if cached:
            return cached[0]
        debate = [o.generated_tokens for case in cases for name in self.debate_names
                  if (o := self.done.get((case.case_id, name)))]
        cot = [o.generated_tokens for case in cases if (o := self.done.get((case.case_id, self.cot_name)))]
        return choose_k(float(np.mean(debate)) if debate else 0.0, float(np.mean(cot)) if cot else 0.0)

    async def run_self_consistency(self, case: Case, labels: LabelSet, job: int) -> None:
        """k reasoned answers of the baseline model at ``sc_temperature`` (seeds seed+1 … seed+k,
        each journalled), majority-voted (:func:`vote`)."""
        if (case.case_id, self.sc_name) in self.done or self.k is None:
            return
        config = self._evince_config(case, labels, "none")
        samples: list[Outcome] = []
        for i in range(1, self.k + 1):
            agent = self._agent(self.config.baseline, AGENT_A, job, temperature=self.config.sc_temperature,
                                seed=self.config.seed + i)
            samples.append(await self._run(functools.partial(_reasoned, config, agent), case, self.sc_name))
        answered = sum(1 for o in samples if o.prediction)
        note = "" if answered == len(samples) else f"{len(samples) - answered} of {len(samples)} samples gave no prediction"
        self._save(Outcome(case.case_id, self.sc_name, case.disease, vote([o.prediction for o in samples]), 1,
                           sum(o.tokens for o in samples), round(sum(o.seconds for o in samples), 3),
                           ",".join(o.debate_id for o in samples), note,
                           sum(o.generated_tokens for o in samples), sum(o.prompt_tokens for o in samples),
                           samples=len(samples), costs=_as_json(merged_costs(samples))))

    def _ensembles(self, case: Case, singles: list[Outcome]) -> list[Outcome]:
        """The no-debate baselines of section 7.2 (2): the plain mixture and the majority vote,
        over the models that gave a prediction (a model without one is left out, as EVINCE
        leaves out an agent's missing prediction; none is invented for it)."""
        a, b = singles
        names = self.ensemble_names
        answered = [s.prediction for s in singles if s.prediction]
        mixed: dict[str, float] = {}
        if answered:
            combined = mixture(answered, [1.0] * len(answered))
            assert isinstance(combined, dict)
            mixed = combined
        # Each model votes its top label; the label with most votes wins, a 1–1 split going to
        # the more confident model. The vote is all the ensemble says: probability 1.
        tops = [max(s.prediction.items(), key=lambda kv: kv[1]) for s in singles if s.prediction]
        counts = Counter(normalize_label(label) for label, _ in tops)
        winner = max(tops, key=lambda lp: (counts[normalize_label(lp[0])], lp[1]), default=None)
        votes = {winner[0]: 1.0} if winner else {}
        total, seconds = a.tokens + b.tokens, a.seconds + b.seconds
        generated, prompt = a.generated_tokens + b.generated_tokens, a.prompt_tokens + b.prompt_tokens
        note = {2: "", 1: "one model gave no prediction: the other's alone", 0: "no model gave a prediction"}[len(answered)]
        costs = _as_json(merged_costs(singles))
        return [Outcome(case.case_id, names[0], case.disease, dict(sorted(mixed.items(), key=lambda kv: -kv[1])), 1, total,
                        seconds, "", note, generated, prompt, costs=costs),
                Outcome(case.case_id, names[1], case.disease, votes, 1, total, seconds, "", note, generated, prompt,
                        costs=costs)]

    async def run(self, cases: Sequence[Case], labels: LabelSet) -> None:
        """Every arm on every case, ``jobs`` cases at a time; then self-consistency, whose k is
        measured from the finished arms."""
        await self._each(cases, labels, self.run_case)
        self.k = self.measured_k(cases)
        await self._each(cases, labels, self.run_self_consistency)

    async def _each(self, cases: Sequence[Case], labels: LabelSet,
                    step: Callable[[Case, LabelSet, int], Any]) -> None:
        queue: asyncio.Queue[Case] = asyncio.Queue()
        for case in cases:
            queue.put_nowait(case)

        async def worker(job: int) -> None:
            while not queue.empty():
                await step(queue.get_nowait(), labels, job)

        async with asyncio.TaskGroup() as group:  # one failing job cancels the others
            for job in range(max(1, self.config.jobs)):
                group.create_task(worker(job))


def prepare_backends(backends: dict[str, Backend], jobs: int) -> None:
    """Let ``jobs`` cases compute at once on each in-process model.

    On llama.cpp their replies are decoded together on the model's shared pool
    (``backends/lockstep.py``): the weights are read once per step for all cases, which is what
    a step costs for 7–70B models on a CPU, an Apple GPU or a CUDA card. A model whose entry
    says ``max_concurrency = 1`` gets a context and a compute slot per case instead
    (``set_parallel``), which pays only where a small model is bound by arithmetic and there
    are cores to spare."""
    from backends.llamacpp import EXACT_BATCH_ROWS

    for backend in backends.values():
        if isinstance(backend, LlamaCppBackend):
            if backend.lockstep_width > 1:
                backend.lockstep_width = min(max(backend.lockstep_width, jobs), EXACT_BATCH_ROWS)
            else:
                backend.set_parallel(jobs)


#: Cases in flight by default: decoded together on one model, about as fast per step as one case.
DEFAULT_JOBS = 4


def default_jobs() -> int:
    """Cases in flight when ``--jobs`` is not given (:data:`DEFAULT_JOBS`)."""
    return DEFAULT_JOBS


# -- the numbers --------------------------------------------------------------------------------


def summarize(bench: Bench, cases: Sequence[Case], labels: LabelSet | None = None) -> Report:
    """Every metric per system with bootstrap CIs, and each ensemble, baseline or debate against
    its better single model (Wilcoxon on per-case reciprocal ranks, Benjamini–Hochberg), with the
    paper's statistics beside ours (section 7.4.1: 20 replicates, BCa intervals, Wilcoxon on the
    replicates, Cliff's Δ; 7.4.1.2's convergence figures for the debates).

    Labels are scored by ``labels``' rules (case, punctuation, synonyms, typos), the rules the
    debates' distributions were compared by; every rename or merge is listed in the report
    (``label_merges``)."""
    c = bench.config
    systems = bench.systems
    rows: dict[str, dict[str, Any]] = {}
    per_case: dict[str, dict[str, np.ndarray]] = {}
    merges: dict[str, list[str]] = {}
    for name in systems:
        outs = [bench.done[(case.case_id, name)] for case in cases if (case.case_id, name) in bench.done]
        if not outs:
            continue
        preds, truths, notes = E.canonicalize([o.prediction for o in outs], [o.truth for o in outs], labels,
                                              credit_related=c.credit_related)
        credited = [E.credited(o.prediction, labels) if c.credit_related else set() for o in outs]
        merges[name] = [f"{o.case_id}: {note}" for o, case_notes in zip(outs, notes) for note in case_notes]
        hit1, hit3 = E.hits_at(preds, truths, 1), E.hits_at(preds, truths, 3)
        rr, brier, conf = E.reciprocal_ranks(preds, truths), E.brier_scores(preds, truths), E.confidences(preds)
        n = len(outs)

        def ci(values: np.ndarray, n: int = n) -> tuple[float, float]:
            return E.bootstrap_ci(lambda idx: float(values[idx].mean()), n, n_boot=c.n_boot, seed=c.seed)

        def ece_of(idx: np.ndarray, conf: np.ndarray = conf, hit1: np.ndarray = hit1) -> float:
            return E.expected_calibration_error(conf[idx], hit1[idx])

        def bca(values: np.ndarray) -> dict[str, Any]:
            low, high, sd = E.bca_interval(np.mean, values, seed=c.seed)
            return {"value": float(values.mean()), "bca": (low, high), "sd": sd}

        ece = E.expected_calibration_error(conf.tolist(), hit1.tolist())
        low, high, sd = E.bca_interval(E.expected_calibration_error, conf, hit1, seed=c.seed)
        rows[name] = {
            "cases": n,
            "acc1": float(hit1.mean()), "acc1_ci": ci(hit1),
            "acc3": float(hit3.mean()), "acc3_ci": ci(hit3),
            "mrr": float(rr.mean()), "mrr_ci": ci(rr),
            "macro_f1": E.macro_f1(preds, truths),
            "brier": float(brier.mean()), "brier_ci": ci(brier),
            "ece": ece,
            "ece_ci": E.bootstrap_ci(ece_of, n, n_boot=c.n_boot, seed=c.seed),
            "no_prediction": sum(1 for o in outs if not o.prediction),
            "rounds": float(np.mean([o.rounds for o in outs])),
            "tokens_per_case": float(np.mean([o.tokens for o in outs])),
            "generated_tokens_per_case": float(np.mean([o.generated_tokens for o in outs])),
            "prompt_tokens_per_case": float(np.mean([o.prompt_tokens for o in outs])),
            "seconds_per_case": float(np.mean([o.seconds for o in outs])),
            "costs": {"cases": n, "agents": _as_json(merged_costs(outs))},
            "label_merges": len(merges[name]),
            "acc1_credited": sum(1 for p, t, got, hit in zip(preds, truths, credited, hit1)
                                 if hit and normalize_label(t) in {normalize_label(g) for g in got}),
            "paper": {"acc1": bca(hit1), "acc3": bca(hit3), "mrr": bca(rr), "brier": bca(brier),
                      "ece": {"value": ece, "bca": (low, high), "sd": sd}},
        }
        if name == bench.sc_name:
            rows[name]["k"] = max((o.samples for o in outs), default=0)
        if name in bench.debate_names:
            rows[name]["convergence"] = convergence([o.trajectory for o in outs], seed=c.seed,
                                                    successive=[o.successive for o in outs])
            rows[name]["rounds_to_convergence"] = rounds_to_convergence(outs, n_boot=c.n_boot, seed=c.seed)
        per_case[name] = {"rr": rr, "hit1": hit1, "ids": np.array([o.case_id for o in outs])}
    comparisons: list[dict[str, Any]] = []
    singles = [s for s in bench.single_names if s in rows]
    if singles:
        best = max(singles, key=lambda s: (rows[s]["acc1"], rows[s]["mrr"]))
        for name in systems[len(bench.single_names):]:
            if name not in rows:
                continue
            common = sorted(set(per_case[name]["ids"]) & set(per_case[best]["ids"]))

            def paired(key: str, name: str = name, common: list[str] = common) -> tuple[list[float], list[float]]:
                mine = dict(zip(per_case[name]["ids"], per_case[name][key]))
                theirs = dict(zip(per_case[best]["ids"], per_case[best][key]))
                return [mine[i] for i in common], [theirs[i] for i in common]

            rr_mine, rr_theirs = paired("rr")
            paper = E.replicate_test(*paired("hit1"), seed=c.seed)
            comparisons.append({"system": name, "versus": best, "cases": len(common),
                                "delta_acc1": rows[name]["acc1"] - rows[best]["acc1"],
                                "delta_mrr": rows[name]["mrr"] - rows[best]["mrr"],
                                "p": E.wilcoxon_p(rr_mine, rr_theirs),
                                "cliffs_delta": E.cliffs_delta(rr_mine, rr_theirs),
                                "paper_p": paper["p"], "paper_cliffs_delta": paper["cliffs_delta"]})
        for comp, adjusted in zip(comparisons, E.benjamini_hochberg([x["p"] for x in comparisons])):
            comp["p_bh"] = adjusted
        # The paper's family (7.4.1.3, "each paired model is compared with its stronger individual
        # component"): the EVINCE arms alone. Ours: every system against the better single model.
        family = [x for x in comparisons if x["system"] in bench.debate_names]
        for comp, adjusted in zip(family, E.benjamini_hochberg([x["paper_p"] for x in family])):
            comp["paper_p_bh"] = adjusted
            comp["paper_significant"] = adjusted < E.PAPER_Q
        for comp in comparisons:
            comp.setdefault("paper_p_bh", None)
            comp.setdefault("paper_significant", None)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(c).items()}
    config["design_summary"] = DESIGNS[c.design].summary
    config["judge_model"] = c.judge_model
    config["self_judging"] = c.self_judging
    config["schedule_dependent"] = c.jobs > 1 and any(isinstance(b, LlamaCppBackend) for b in bench.backends.values())
    config["baseline"] = c.baseline
    config["k"] = bench.k
    config["k_source"] = "--k" if c.k is not None else "measured: the debate arms' generated tokens per case / cot's"
    config["bh_family"] = ("ours: every system in the comparison table against the better single model, one family; "
                           "the paper's (7.4.1.3): the EVINCE debate arms against the better single model")
    for name in bench.ensemble_names:  # cases combined from one model's prediction only
        if name in rows:
            rows[name]["one_model_only"] = sum(1 for case in cases if (case.case_id, name) in bench.done
                                              and bench.done[(case.case_id, name)].stop_reason.startswith("one model"))
    outcomes = [asdict(bench.done[(case.case_id, s)]) for case in cases for s in systems if (case.case_id, s) in bench.done]
    singles_by_case = [[bench.done[(case.case_id, s)].prediction for s in bench.single_names]
                       for case in cases if all((case.case_id, s) in bench.done for s in bench.single_names)]
    spelling = spelling_split(singles_by_case, labels)
    return Report(config, [s for s in systems if s in rows], rows, comparisons, outcomes, merges, spelling)


def successive(said: dict[str, dict[int, dict[str, float]]]) -> list[dict[str, float]]:
    """Per round after the first that an agent predicted in: that agent's 1 − WD between its
    distribution in the round before and in this one (section 7.4.1.2's "1-WD between successive
    rounds"), keyed by role; a round in which no agent has a successive pair is left out."""
    rounds = sorted({r for by_round in said.values() for r in by_round})
    out = []
    for r in rounds[1:]:
        row = {role: 1 - wasserstein(by_round[r - 1], by_round[r]) for role, by_round in sorted(said.items())
               if r in by_round and r - 1 in by_round}
        if row:
            out.append({"round": float(r), **row})
    return out


def rounds_to_convergence(outs: Sequence[Outcome], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Section 7.4.5's figure ("three vs. four rounds"), per debate arm: how many debates
    Figure 7.1's stop rule ended with the agents agreeing (``converged``) or apart
    (``settled_apart``), and the rounds held (the opening included) by those that converged:
    their mean with a 95 % percentile interval, and the rounds held by every debate of the arm."""
    converged = np.array([o.rounds for o in outs if o.ending == "converged"], dtype=float)
    out: dict[str, Any] = {"debates": len(outs), "converged": len(converged),
                           "settled_apart": sum(1 for o in outs if o.ending == "settled_apart"),
                           "rounds_all": float(np.mean([o.rounds for o in outs])) if outs else float("nan")}
    if len(converged):
        out["rounds"] = float(converged.mean())
        out["rounds_ci"] = E.bootstrap_ci(lambda idx: float(converged[idx].mean()), len(converged), n_boot=n_boot, seed=seed)
    return out


def spelling_split(pairs: Sequence[Sequence[dict[str, float]]], labels: LabelSet | None) -> dict[str, Any]:
    """How often spelling alone keeps two models' agreeing answers apart, over ``pairs`` (per
    case, the two single models' predictions). Two top labels *agree* when the class set
    resolves them to the same class (its synonyms and rules); they are *kept apart* when the
    open debate's reading still holds them as two labels: ``before`` by case and punctuation
    alone (:func:`protocols.measures.labels.normalize_label`), ``after`` by an open debate's own set,
    which learns the first model's labels and reads the second's by the spelling rules. The same
    count over every pair of labels the two name (``labels_*``)."""
    counts = dict.fromkeys(("cases", "agreeing", "apart_before", "apart_after", "label_pairs", "labels_apart_before",
                            "labels_apart_after"), 0)
    examples: list[str] = []
    if labels is None:
        return {**counts, "examples": examples}
    for a, b in (pair for pair in pairs if len(pair) == 2 and all(pair)):
        counts["cases"] += 1
        debate = LabelSet(closed=False).for_debate()
        debate.learn(a)  # the first model's labels, as an open debate learns them
        top_a, top_b = max(a.items(), key=lambda kv: kv[1])[0], max(b.items(), key=lambda kv: kv[1])[0]
        for x in a:
            for y in b:
                if labels.match(x) is None or labels.match(x) != labels.match(y):
                    continue
                before = normalize_label(x) != normalize_label(y)
                after = normalize_label(debate.match(x) or x) != normalize_label(debate.match(y) or y)
                counts["label_pairs"] += 1
                counts["labels_apart_before"] += before
                counts["labels_apart_after"] += after
                if x == top_a and y == top_b:
                    counts["agreeing"] += 1
                    counts["apart_before"] += before
                    counts["apart_after"] += after
                    if before and len(examples) < 10:
                        examples.append(f"{x} | {y}" + (" (still apart)" if after else ""))
    return {**counts, "examples": examples}


def convergence(trajectories: Sequence[Sequence[dict[str, float]]], *, seed: int = 0,
                successive: Sequence[Sequence[dict[str, float]]] = ()) -> dict[str, Any]:
    """Section 7.4.1.2's debate convergence, over the debates with at least one scored round:
    the entropy of the consensus P_f (the "vote distribution") and 1 − WD between the agents,
    in the first and the last scored round, and their change (first → last), each with the
    paper's BCa interval over 20 replicates. Read against the paper's "the entropy of the
    prediction set decreases by 23 % ± 3 %" (7.4.2). Beside them, the paper's own figure, "1-WD
    between successive rounds" (``successive``, from :func:`successive`): per agent, 1 − WD
    between its distributions of two successive rounds, in the first and the last such pair of
    each debate (``successive_first_agent-a`` …), with BCa intervals."""
    firsts = [t[0] for t in trajectories if t and "entropy_mixture" in t[0] and "wd" in t[0]]
    lasts = [t[-1] for t in trajectories if t and "entropy_mixture" in t[0] and "wd" in t[0]]
    out: dict[str, Any] = {"debates": len(firsts)}
    if not firsts:
        return out
    h0 = np.array([f["entropy_mixture"] for f in firsts])
    h1 = np.array([f.get("entropy_mixture", np.nan) for f in lasts])
    s0 = 1 - np.array([f["wd"] for f in firsts])
    s1 = 1 - np.array([f.get("wd", np.nan) for f in lasts])
    for key, values in (("entropy_first", h0), ("entropy_last", h1), ("entropy_change", h1 - h0),
                        ("one_minus_wd_first", s0), ("one_minus_wd_last", s1), ("one_minus_wd_change", s1 - s0)):
        low, high, _ = E.bca_interval(np.mean, values, seed=seed)
        out[key] = float(values.mean())
        out[f"{key}_bca"] = (low, high)
    for role in (AGENT_A, AGENT_B):
        steps = [[row[role] for row in debate if role in row] for debate in successive]
        steps = [s for s in steps if s]
        for which, values in (("first", np.array([s[0] for s in steps])), ("last", np.array([s[-1] for s in steps]))):
            if len(values):
                low, high, _ = E.bca_interval(np.mean, values, seed=seed)
                out[f"successive_{which}_{role}"] = float(values.mean())
                out[f"successive_{which}_{role}_bca"] = (low, high)
    return out


def _single(config: evince.EvinceConfig, agent: Agent, debate_id: str) -> AsyncIterator[Event]:
    """One model's prediction alone (the benchmark's single-model arms)."""
    return evince.predict_alone(config, agent, debate_id=debate_id)


def _grounded(config: evince.EvinceConfig, agent: Agent, evidence: Grounding, debate_id: str) -> AsyncIterator[Event]:
    return evince.predict_alone(config, agent, debate_id=debate_id, evidence=evidence)


def diagnosing() -> list[ProtocolDefinition]:
    """The registered protocols the benchmark can run as arms (``--protocol``)."""
    return [d for d in PROTOCOLS if d.diagnosis is not None]


def evidence_settings(design: str) -> EvidenceSettings:
    """The evidence arm's settings: the profile's passages and claims, and no tokens added to a
    reply for its claims, so that it answers at the plain arm's reply limit."""
    return EvidenceSettings.of({"tokens_per_claim": 0}, "small" if design == "quick" else "standard")


def evidence_rows(bench: Bench, cases: Sequence[Case], labels: LabelSet | None = None) -> list[dict[str, Any]]:
    """Per model: top-1 accuracy alone and alone with the evidence (over the same cases), the
    citation precision (supported citations / all citations) and the share of claims with a
    supported citation, with the counts they come from."""
    rows: list[dict[str, Any]] = []
    for model, plain, grounded in zip(bench.config.models, bench.single_names, bench.evidence_names):
        pairs: list[tuple[Outcome, Outcome]] = []
        for c in cases:
            p, g = bench.done.get((c.case_id, plain)), bench.done.get((c.case_id, grounded))
            if p is not None and g is not None:
                pairs.append((p, g))
        claims = sum(g.claims for _, g in pairs)
        supported = sum(g.supported for _, g in pairs)
        cited = supported + sum(g.not_found for _, g in pairs)

        def hits(outcomes: Sequence[Outcome]) -> float | None:
            """Top-1 accuracy, labels matched as :func:`summarize` matches them."""
            if not outcomes:
                return None
            preds, truths, _ = E.canonicalize([o.prediction for o in outcomes], [o.truth for o in outcomes], labels)
            return float(E.hits_at(preds, truths, 1).mean())

        rows.append({"model": model, "cases": len(pairs), "accuracy": hits([p for p, _ in pairs]),
                     "accuracy_with_evidence": hits([g for _, g in pairs]), "claims": claims, "cited": cited,
                     "supported": supported, "citation_precision": supported / cited if cited else None,
                     "supported_share": supported / claims if claims else None})
    return rows


def _reasoned(config: evince.EvinceConfig, agent: Agent, debate_id: str) -> AsyncIterator[Event]:
    """One model's chain of thought (the ``cot`` arm, and each self-consistency sample)."""
    return evince.predict_reasoned(config, agent, debate_id=debate_id)


def _debate(config: evince.EvinceConfig, team: Any, debate_id: str) -> AsyncIterator[Event]:
    """An EVINCE debate through its definition (the benchmark's debate arms)."""
    return EVINCE.run(config, team, debate_id=debate_id)
