"""``symposium bench diagnosis``: does debate help? EVINCE's section 7.4 on your own models.

On the same cases, one run compares: each model alone; the two models' plain mixture and
majority vote (no debate); EVINCE under each cooling schedule (section 7.4.5's ablation:
none / fixed / linear / exponential, and Figure 7.1's adaptive ``Update``, EVINCE's own
default). Every prediction is journalled as a debate (a "single" run or an EVINCE run) so a
surprising case can be opened in the app.

A model that gives no usable prediction for a case has *no prediction* there (scored as a
miss), never an invented one: the mixture and the vote combine the models that answered
(the other model's distribution alone when one failed, nothing when both did), and the
report counts, per system, the cases without a prediction and the ensembles' cases built
from one model only.

Finished (case, system) results are appended to ``PATH.cases.jsonl`` as they come, so an
interrupted run picks up where it stopped. Cases run ``--jobs`` at a time (each job has its own
KV caches; with one llama.cpp thread per model, two jobs keep two cores busy).

Two designs (``--design``), and the report says which one ran:

* ``paper`` (default): section 7.4.5 as the paper ran it: the CRIT judge on, the opening round
  and up to 4 refutation rounds (``max_rounds`` = 4, five rounds in all, as Table 7.3's four
  after the opening) so that the schedules reach different κ (linear 0.9, 0.7, 0.5, 0.3 vs
  exponential 0.9, 0.74, 0.6, 0.49) and convergence can end a debate early, EVINCE's default
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
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import functools
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
from protocols import evaluation as E
from protocols import evince
from protocols.agents import Agent
from protocols.events import DebateFinished, Event
from protocols.labels import LabelSet, normalize_label
from protocols.metrics import mixture
from protocols.registry import definition
from protocols.roles import AGENT_A, AGENT_B, JUDGE
from store.journal import Journal, new_debate_id

from tui.headless.runner import drive

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
    "paper": Design("paper", "section 7.4.5: external CRIT judge, the opening and up to 4 refutation rounds, "
                             "paragraph-long arguments", 4, True, None, None),
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

    def __post_init__(self) -> None:
        if self.design not in DESIGNS:
            raise ValueError(f"unknown design {self.design!r}; choose from {', '.join(DESIGNS)}")
        d = DESIGNS[self.design]
        if d.crit_judge and not self.judge:
            raise ValueError(f"--design {self.design} needs a CRIT judge: give --judge MODEL, a third model (seed 004, "
                             "section 7.2 (1)(iii): external CRIT scoring, whose scores weight P_f and gate the "
                             "arguments). Naming model A or B makes that debater judge itself, which the report then "
                             "says; --design quick runs without a judge")
        defaults = evince.EvinceConfig(case="")
        self.max_rounds = d.max_rounds if self.max_rounds is None else self.max_rounds
        self.turn_tokens = self.turn_tokens or d.turn_tokens or defaults.turn_tokens
        self.crit_tokens = self.crit_tokens or d.crit_tokens or defaults.crit_tokens

    @property
    def crit_judge(self) -> bool:
        return DESIGNS[self.design].crit_judge

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


@dataclass
class Report:
    config: dict[str, Any]
    systems: list[str]
    rows: dict[str, dict[str, Any]]
    comparisons: list[dict[str, Any]]
    outcomes: list[dict[str, Any]] = field(default_factory=list)


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


def label_set(cases: Sequence[Case], synonyms: Path | None) -> LabelSet:
    """The class set: the file's diseases (normalized for matching), plus the user's synonyms
    (lines ``synonym = canonical label``)."""
    names = list({normalize_label(c.disease): c.disease for c in reversed(cases)}.values())[::-1]
    labels = LabelSet(names)
    if synonyms is not None:
        for number, line in enumerate(synonyms.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            synonym, sep, canonical = line.partition("=")
            if not sep:
                raise ValueError(f"{synonyms}:{number}: expected 'synonym = label'")
            labels.add_synonym(synonym.strip(), canonical.strip())
    return labels


# -- running the systems ------------------------------------------------------------------------


class Bench:
    """Runs every system on every case, journalling each run and caching each result."""

    def __init__(self, config: BenchConfig, backends: dict[str, Backend], options: dict[str, SamplingOptions],
                 journal: Journal, on_done: Callable[[Outcome], None] = lambda _: None) -> None:
        self.config = config
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

    @property
    def systems(self) -> list[str]:
        a, b = self.config.models
        return [f"{a} alone", f"{b} alone", "mixture (no debate)", "majority vote (no debate)",
                *(f"EVINCE, {s} cooling" for s in self.config.schedules)]

    def _save(self, outcome: Outcome) -> None:
        self.done[(outcome.case_id, outcome.system)] = outcome
        append_private(self.cache_path, json.dumps(asdict(outcome)) + "\n")  # 0600: it holds the models' answers
        self.on_done(outcome)

    def _agent(self, model: str, role: str, job: int) -> Agent:
        """An agent with its own KV cache per job, seeded for reproducible runs."""
        return Agent(role, self.backends[model], self.options[model].merged(seed=self.config.seed),
                     session_key=f"job{job}/{role}")

    def _evince_config(self, case: Case, labels: LabelSet, schedule: str) -> evince.EvinceConfig:
        c = self.config
        return evince.EvinceConfig(
            case=case.text, labels=labels, title=f"{case.case_id}: {case.disease}", top_k=c.top_k, scoring=c.scoring,  # type: ignore[arg-type]  # the CLI's choices are the config's Literal
            schedule=schedule, max_rounds=DESIGNS[c.design].max_rounds if c.max_rounds is None else c.max_rounds,
            reference_label=case.disease,
            recommendations=False, turn_tokens=c.turn_tokens or 48, crit_tokens=c.crit_tokens or 96,
            crit_judge=c.crit_judge,
        )

    async def _run(self, events_of: Callable[[str], Any], case: Case, system: str) -> Outcome:
        """Drive one journalled run and summarise it as an :class:`Outcome`."""
        debate_id = new_debate_id()
        tokens = 0

        def count(event: Event) -> None:
            nonlocal tokens
            call = getattr(event, "call", None)  # turns, judgements and other model calls
            if call is not None:
                tokens += call.prompt_tokens_evaluated + call.completion_tokens

        started = time.perf_counter()
        final: DebateFinished | None = await drive(events_of(debate_id), self.journal, count)
        seconds = time.perf_counter() - started
        outcome = final.outcome if final else {}
        return Outcome(case.case_id, system, case.disease, dict(outcome.get("final_distribution") or {}),
                       int(outcome.get("rounds", 0)), tokens, round(seconds, 3), debate_id, final.stop_reason if final else "cut off")

    async def run_case(self, case: Case, labels: LabelSet, job: int) -> None:
        a, b = self.config.models
        names = self.systems
        singles: list[Outcome] = []
        for model, name in ((a, names[0]), (b, names[1])):
            if (case.case_id, name) not in self.done:
                agent = self._agent(model, AGENT_A, job)
                config = self._evince_config(case, labels, "none")
                self._save(await self._run(functools.partial(_single, config, agent), case, name))
            singles.append(self.done[(case.case_id, name)])
        for outcome in self._ensembles(case, singles):
            if (case.case_id, outcome.system) not in self.done:
                self._save(outcome)
        for schedule, name in zip(self.config.schedules, names[4:]):
            if (case.case_id, name) in self.done:
                continue
            judge_model = self.config.judge_model or a  # without a judge (quick) this agent is never called
            team = EVINCE.team({role: self._agent(model, role, job)
                                for role, model in ((AGENT_A, a), (AGENT_B, b), (JUDGE, judge_model))})
            config = self._evince_config(case, labels, schedule)
            self._save(await self._run(functools.partial(_debate, config, team), case, name))

    def _ensembles(self, case: Case, singles: list[Outcome]) -> list[Outcome]:
        """The no-debate baselines of section 7.2 (2): the plain mixture and the majority vote,
        over the models that gave a prediction (a model without one is left out, as EVINCE
        leaves out an agent's missing prediction; none is invented for it)."""
        a, b = singles
        names = self.systems
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
        total = a.tokens + b.tokens
        seconds = a.seconds + b.seconds
        note = {2: "", 1: "one model gave no prediction: the other's alone", 0: "no model gave a prediction"}[len(answered)]
        return [Outcome(case.case_id, names[2], case.disease, dict(sorted(mixed.items(), key=lambda kv: -kv[1])), 1, total, seconds, "", note),
                Outcome(case.case_id, names[3], case.disease, votes, 1, total, seconds, "", note)]

    async def run(self, cases: Sequence[Case], labels: LabelSet) -> None:
        queue: asyncio.Queue[Case] = asyncio.Queue()
        for case in cases:
            queue.put_nowait(case)

        async def worker(job: int) -> None:
            while not queue.empty():
                await self.run_case(queue.get_nowait(), labels, job)

        async with asyncio.TaskGroup() as group:  # one failing job cancels the others
            for job in range(max(1, self.config.jobs)):
                group.create_task(worker(job))


def prepare_backends(backends: dict[str, Backend], jobs: int) -> None:
    """Let ``jobs`` cases compute at once on each in-process model."""
    for backend in backends.values():
        if isinstance(backend, LlamaCppBackend):
            backend.set_parallel(jobs)


def default_jobs() -> int:
    """One job per core that the models' threads leave free (2 on a 2-CPU machine)."""
    from backends.llamacpp import default_threads

    return max(1, (os.cpu_count() or 1) // default_threads())


# -- the numbers --------------------------------------------------------------------------------


def summarize(bench: Bench, cases: Sequence[Case]) -> Report:
    """Every metric per system with bootstrap CIs, and each ensemble or debate against its
    better single model (Wilcoxon on per-case reciprocal ranks, Benjamini–Hochberg)."""
    c = bench.config
    systems = bench.systems
    rows: dict[str, dict[str, Any]] = {}
    per_case: dict[str, dict[str, np.ndarray]] = {}
    for name in systems:
        outs = [bench.done[(case.case_id, name)] for case in cases if (case.case_id, name) in bench.done]
        if not outs:
            continue
        preds, truths = [o.prediction for o in outs], [o.truth for o in outs]
        hit1, hit3 = E.hits_at(preds, truths, 1), E.hits_at(preds, truths, 3)
        rr, brier, conf = E.reciprocal_ranks(preds, truths), E.brier_scores(preds, truths), E.confidences(preds)
        n = len(outs)

        def ci(values: np.ndarray, n: int = n) -> tuple[float, float]:
            return E.bootstrap_ci(lambda idx: float(values[idx].mean()), n, n_boot=c.n_boot, seed=c.seed)

        def ece_of(idx: np.ndarray, conf: np.ndarray = conf, hit1: np.ndarray = hit1) -> float:
            return E.expected_calibration_error(conf[idx], hit1[idx])

        rows[name] = {
            "cases": n,
            "acc1": float(hit1.mean()), "acc1_ci": ci(hit1),
            "acc3": float(hit3.mean()), "acc3_ci": ci(hit3),
            "mrr": float(rr.mean()), "mrr_ci": ci(rr),
            "macro_f1": E.macro_f1(preds, truths),
            "brier": float(brier.mean()), "brier_ci": ci(brier),
            "ece": E.expected_calibration_error(conf.tolist(), hit1.tolist()),
            "ece_ci": E.bootstrap_ci(ece_of, n, n_boot=c.n_boot, seed=c.seed),
            "no_prediction": sum(1 for o in outs if not o.prediction),
            "rounds": float(np.mean([o.rounds for o in outs])),
            "tokens_per_case": float(np.mean([o.tokens for o in outs])),
            "seconds_per_case": float(np.mean([o.seconds for o in outs])),
        }
        per_case[name] = {"rr": rr, "ids": np.array([o.case_id for o in outs])}
    comparisons: list[dict[str, Any]] = []
    singles = [s for s in systems[:2] if s in rows]
    if singles:
        best = max(singles, key=lambda s: (rows[s]["acc1"], rows[s]["mrr"]))
        for name in systems[2:]:
            if name not in rows:
                continue
            common = sorted(set(per_case[name]["ids"]) & set(per_case[best]["ids"]))
            mine = dict(zip(per_case[name]["ids"], per_case[name]["rr"]))
            theirs = dict(zip(per_case[best]["ids"], per_case[best]["rr"]))
            comparisons.append({"system": name, "versus": best, "cases": len(common),
                                "delta_acc1": rows[name]["acc1"] - rows[best]["acc1"],
                                "delta_mrr": rows[name]["mrr"] - rows[best]["mrr"],
                                "p": E.wilcoxon_p([mine[i] for i in common], [theirs[i] for i in common])})
        for comp, adjusted in zip(comparisons, E.benjamini_hochberg([x["p"] for x in comparisons])):
            comp["p_bh"] = adjusted
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(c).items()}
    config["design_summary"] = DESIGNS[c.design].summary
    config["judge_model"] = c.judge_model
    config["self_judging"] = c.self_judging
    for name in systems[2:4]:  # the ensembles: cases combined from one model's prediction only
        if name in rows:
            rows[name]["one_model_only"] = sum(1 for case in cases if (case.case_id, name) in bench.done
                                              and bench.done[(case.case_id, name)].stop_reason.startswith("one model"))
    outcomes = [asdict(bench.done[(case.case_id, s)]) for case in cases for s in systems if (case.case_id, s) in bench.done]
    return Report(config, [s for s in systems if s in rows], rows, comparisons, outcomes)


def _single(config: evince.EvinceConfig, agent: Agent, debate_id: str) -> AsyncIterator[Event]:
    """One model's prediction alone (the benchmark's single-model arms)."""
    return evince.predict_alone(config, agent, debate_id=debate_id)


def _debate(config: evince.EvinceConfig, team: Any, debate_id: str) -> AsyncIterator[Event]:
    """An EVINCE debate through its definition (the benchmark's debate arms)."""
    return EVINCE.run(config, team, debate_id=debate_id)
