"""``symposium models test ID --debate``: will this model do for a debate?

Runs one short EVINCE debate on a fixed vignette with the model in all three seats (agent A,
agent B, CRIT judge): the opening round, one refutation round and the judge's CRIT after each,
at the protocol's own token limits for the model's profile (``profile`` in its registry entry:
the limits a real debate with it would use), so a model that cannot finish a turn in them
shows it here, not an hour into a benchmark. Per step it reports what decides whether a long
run is worth starting: how many replies were valid JSON of the shape asked (strict JSON: the
protocol's parser repairs some slips, such as a raw newline inside a string, but a model that
needs repairs often loses arguments to them), whether the labels named were inside the
class set, how many replies the token limit cut off, how much of each prompt came from the
session's KV cache (the per-agent reuse a debate relies on), and decoding speed. Nothing is
journalled: it is a check, not a debate.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from backends.base import Backend, BackendError, SamplingOptions
from backends.lifecycle import Engines
from backends.registry import ModelEntry
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import CallRecord, DebateFinished, Event, JudgementMade, ModelCalled, TurnFinished
from protocols.core.params import Profile, build
from protocols.core.roles import AGENT_A, AGENT_B, JUDGE
from protocols.measures.labels import LabelSet

CASE = ("A 34-year-old returned from Ghana two weeks ago and has had fever with shaking chills every "
        "other day, drenching sweats, headache and muscle aches; no rash, no cough.")
LABELS = ("Malaria", "Typhoid", "Dengue", "Influenza", "Hepatitis A", "Tuberculosis")
REFUTATION_ROUNDS = 1  # after the openings: the second turn shows KV-cache reuse (EVINCE's max_rounds)
ROUNDS = 1 + REFUTATION_ROUNDS
STEP_ORDER = ("opening turns", "refutation turns", "CRIT judgements")
#: "Fit for a debate": nearly every reply parses, no label outside the class set, few cut off.
MIN_VALID, MAX_CUT_OFF = 0.8, 0.2


@dataclass
class Step:
    """The tallies of one step of the debate (openings, refutations, CRIT)."""

    name: str
    calls: int = 0
    valid_json: int = 0
    labels_named: int = 0
    labels_inside: int = 0
    cut_off: int = 0
    prompt_tokens: int = 0
    prompt_reused: int = 0
    completion_tokens: int = 0
    decode_s: float = 0.0

    def add_call(self, call: CallRecord, valid: bool) -> None:
        self.calls += 1
        self.valid_json += valid
        self.cut_off += call.finish_reason == "length"
        self.prompt_tokens += call.prompt_tokens
        self.prompt_reused += max(0, call.prompt_tokens - call.prompt_tokens_evaluated)
        if call.first_token_s is not None and call.completion_tokens > 1 and call.duration_s > call.first_token_s:
            self.completion_tokens += call.completion_tokens - 1
            self.decode_s += call.duration_s - call.first_token_s

    @property
    def tokens_per_s(self) -> float | None:
        return self.completion_tokens / self.decode_s if self.decode_s > 0 else None


@dataclass
class DebateCheck:
    steps: dict[str, Step] = field(default_factory=dict)
    stop_reason: str | None = None
    error: str | None = None

    def step(self, name: str) -> Step:
        return self.steps.setdefault(name, Step(name))

    @property
    def usable(self) -> bool:
        """Replies parse, name only labels of the class set and fit the token limit: a debate's
        distributions and CRIT weights will then come from the model, not from fallbacks."""
        if self.error or not self.steps:
            return False
        return all(s.valid_json >= MIN_VALID * s.calls and s.labels_inside == s.labels_named
                   and s.cut_off <= MAX_CUT_OFF * s.calls for s in self.steps.values())


def _json_object(raw: str) -> dict | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _labels_written(reply: dict | None) -> list[str]:
    """The labels a turn's JSON names (``predictions[].label``), before any repair."""
    predictions = (reply or {}).get("predictions")
    if not isinstance(predictions, list):
        return []
    return [str(p["label"]) for p in predictions if isinstance(p, dict) and "label" in p]


def _record(report: DebateCheck, event: Event, labels: LabelSet) -> None:
    if isinstance(event, TurnFinished) and event.call is not None:
        reply = _json_object(event.raw)
        step = report.step(f"{event.kind} turns")
        step.add_call(event.call, reply is not None and event.parsed is not None)
        written = _labels_written(reply)
        step.labels_named += len(written)
        step.labels_inside += sum(1 for name in written if labels.match(name) is not None)
    elif isinstance(event, ModelCalled) and event.call.purpose == "crit":
        report.step("CRIT judgements").add_call(event.call, False)  # a retried CRIT: the first reply did not parse
    elif isinstance(event, JudgementMade) and event.kind == "crit" and event.call is not None:
        report.step("CRIT judgements").add_call(event.call, _json_object(event.raw) is not None and event.score is not None)


async def check_debate(entry: ModelEntry, *, timeout: float = 120.0) -> DebateCheck:
    """One short EVINCE debate with ``entry`` in every seat; never raises for the model's failures."""
    async with Engines() as engines:  # closes the model however the check ends (a load that timed out too)
        try:
            backend = await asyncio.wait_for(engines.load_entry(entry), timeout)
        except (BackendError, ValueError, TimeoutError) as exc:
            return DebateCheck(error=f"load failed: {exc or 'timed out'}")
        return await debate_check(backend, entry.default_options(), timeout=timeout, profile=entry.profile)


async def debate_check(backend: Backend, options: SamplingOptions, *, timeout: float = 120.0,
                       profile: Profile = "standard") -> DebateCheck:
    """The debate itself, on a loaded backend (the tests hand it a scripted one), under the
    parameter ``profile`` a debate with this model would use."""
    report = DebateCheck()
    labels = LabelSet(LABELS)
    # First-try replies are what is measured: no retry under a stricter schema, one CRIT per turn.
    config = build(evince.EvinceConfig, {"case": CASE, "labels": labels, "title": "models test --debate",
                                         "max_rounds": REFUTATION_ROUNDS, "recommendations": False, "parse_retry": False,
                                         "crit_depth": 0}, profile=profile)
    agents = evince.DEFINITION.team({role: Agent(role, backend, options) for role in (AGENT_A, AGENT_B, JUDGE)})

    async def debate() -> None:
        async for event in evince.DEFINITION.run(config, agents, debate_id="models-test"):
            _record(report, event, labels)
            if isinstance(event, DebateFinished):
                report.stop_reason = event.stop_reason

    calls = ROUNDS * 4  # two turns and two CRIT judgements a round
    try:
        await asyncio.wait_for(debate(), timeout * calls)
    except TimeoutError:
        report.error = f"the debate did not finish within {timeout * calls:.0f} s ({timeout:.0f} s a call)"
    except (BackendError, ValueError) as exc:  # the model's or server's failure is the finding
        report.error = f"{type(exc).__name__}: {exc}"
    report.steps = dict(sorted(report.steps.items(), key=lambda kv: STEP_ORDER.index(kv[0])))
    return report
