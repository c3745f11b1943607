"""The protocol pages' numbers (docs/protocols/*.md, docs/diagnosis-benchmark.md) against the code, so
the docs cannot drift.

Each :class:`Claim` is one sentence of the doc that states numbers the code can compute: a
regular expression finds the sentence inside its section (so rewording it away fails too) and
captures the numbers; ``code`` computes the same numbers from the code: config defaults,
computed limits, and trajectories run through the protocol's own loop on scripted agents (the
loop, not the schedule alone, decides when signals exist). A number written with d decimals
must equal the code's value rounded to d decimals (|doc − code| ≤ ½·10^−d), unless the claim
sets its own tolerance ("about 195 tokens").

Every section with tables is pinned: EVINCE, CRIT, SocraSynth, the conference (Heller et al.), the
human in the loop (Triem), deliberation (Turkstra et al., ArgsBase), D3 (Bandi & Harrasse), the
profiles and what each judge sees. Numbers left out on purpose, section by section (nothing in
the code computes them):

* quotes and counts from the papers ("ten topics", 278–624 characters a point, 1,261–1,348
  characters a statement, 20/600 and 43/400, "No more than 75 words", "150 words", 4k–128k);
* the earlier code's values a row gives as history (230/134 characters, 4,000 and 1,333, 700,
  300/400/500/1,500/900/1,200/6000 characters, the recursion's 3/3 that "came back 10/6");
  the CRIT examples' "with the mean" and "share-only" Γ values are pinned, computed by
  :func:`mean_gamma` and :func:`share_gamma`;
* SocraSynth's simulated false-stop and catch rates (48 %, 25 %, 9 %, 8 %, 4 %; 54/54/57 %,
  82/82/88 %, 28/27/23 %; 30/24/17 % and 2/2/0 %; 20/13/6 %; 42/41/39 %; 15/9/3 %) with σ = 1,
  3–5 reasons and 2 or 3 points: ``benchmarks/crit_noise.py`` prints them (three runs of 20,000
  trials, a few minutes of CPU: too slow for a unit test; rerun it after changing CRIT's
  formula, the debate's quality or the tolerance);
* the deliberation row's advice for Llama models (``word_cap = 150``, ``turn_tokens`` ≈ 260).

Scripted backends here (tests/helpers/scripted_backends.py): a trajectory needs agents that converge
exactly as told, which a real model cannot be made to do.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import math
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from backends.base import Message, SamplingOptions
from protocols import agreement as conference
from protocols import d3, deliberation, evince
from protocols import socrasynth as ss
from protocols.core.agents import Agent
from protocols.core.events import TurnFinished
from protocols.core.fitting import SAFETY_TOKENS, Section, fit_sections
from protocols.core.params import ParamInfo, params_of
from protocols.core.schemas import chars_for
from protocols.d3.audit import family
from protocols.humanloop import HumanloopConfig
from protocols.humanloop.stance import NONE, StanceStep, analyze, parse_confidence, triem_code
from protocols.measures import analyzer
from protocols.measures import crit as C
from protocols.measures import evaluation as E
from protocols.measures import metrics as M
from protocols.measures.contentiousness import LEVELS, Adaptive, Exponential, Linear, RoundSignals, Schedule
from protocols.measures.crit import CritResult
from protocols.measures.distribution import parse_distribution
from protocols.measures.labels import BUILTIN_RELATED, BUILTIN_SYNONYMS, FUZZY_CUTOFF, LabelSet, read_related, read_synonyms
from store.schema import MIGRATIONS
from tests.helpers.paths import REPO
from tests.helpers.scripted_backends import ScriptedBackend
from tui.bench.diagnosis import BenchConfig

#: Where each claim's section is: a protocol's own page (the whole page), or a "## " section of a
#: page that holds several.
PAGES: dict[str, tuple[str, str | None]] = {
    "EVINCE": ("docs/protocols/evince.md", None),
    "CRIT": ("docs/protocols/crit.md", None),
    "SocraSynth": ("docs/protocols/socrasynth.md", None),
    "Decision conference": ("docs/protocols/agreement.md", None),
    "Human in the loop": ("docs/protocols/humanloop.md", None),
    "Deliberation": ("docs/protocols/deliberation.md", None),
    "D3": ("docs/protocols/d3.md", None),
    "Parameters and profiles": ("docs/protocols/common.md", "Parameters and profiles"),
    "What each judge and agent sees": ("docs/protocols/common.md", "What each judge and agent sees"),
    "The metrics the app shows": ("docs/protocols/common.md", "The metrics the app shows"),
    "Calls asked at once": ("docs/protocols/common.md", "Calls asked at once"),
    "The diagnosis benchmark": ("docs/diagnosis-benchmark.md", "The diagnosis benchmark"),
}
#: Spelt-out numbers the doc uses in running text ("the ten factors", "five turns").
WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
#: A number as the doc writes it: 4,096 (thousands separated), 0.625, 12, or a word above.
NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?![\d])|-?\d+(?:\.\d+)?|\b(?:" + "|".join(WORDS) + r")\b")


@dataclass(frozen=True)
class Claim:
    """A doc sentence with numbers (``pattern``'s groups; a group may hold a list such as
    "0.9, 0.7, 0.5") and the code's values for them, in the same order."""

    id: str
    section: str  # the start of the "## " heading the sentence must be under
    pattern: str
    code: Callable[[], Sequence[float]]
    tolerance: float | None = None  # None: half a unit of the doc's last written digit


def section(name: str) -> str:
    """The text a claim's sentence must be in: its protocol's page, or the ``## heading…`` section
    of a shared page, up to the next ``## ``."""
    page, heading = PAGES[name]
    text = (REPO / page).read_text(encoding="utf-8")
    if heading is None:
        return text
    match = re.search(rf"^## {re.escape(heading)}.*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"{page} has no section starting '## {heading}'"
    return match.group(0)


# --- scripted EVINCE runs: the protocol's own loop ------------------------------------------------

LABELS = LabelSet(["Dengue", "Chikungunya", "Zika", "Malaria", "Typhoid"])
OPTS = SamplingOptions(max_tokens=96, temperature=0.7, seed=11)
A_HOLDS = {"Dengue": 0.8, "Chikungunya": 0.2}
#: B closes in on A by large steps, then agrees: every signal says "converging" (WD 1, 0.7, 0.3, 0).
CONVERGING = [{"Zika": 0.6, "Malaria": 0.4}, {"Dengue": 0.3, "Zika": 0.4, "Malaria": 0.3},
              {"Dengue": 0.5, "Zika": 0.3, "Chikungunya": 0.2}, A_HOLDS, A_HOLDS, A_HOLDS]
#: B jumps between a disjoint and an overlapping belief: the metrics never settle.
MOVING = [{"Zika": 0.8, "Malaria": 0.2}, {"Dengue": 0.5, "Zika": 0.5}] * 11


def _reply(probs: dict[str, float]) -> str:
    return json.dumps({"predictions": [{"label": k, "probability": v, "argument": "fits the case"} for k, v in probs.items()],
                       "arguments": []})


def run_evince(b_says: Sequence[dict[str, float]], **config: Any) -> list[TurnFinished]:
    """One scripted EVINCE debate (A holds one belief, B says ``b_says`` round by round); its turns."""
    recs = '{"questions": ["q"], "tests": ["t"]}'
    a = ScriptedBackend("a", [_reply(A_HOLDS)] * len(b_says) + [recs])
    b = ScriptedBackend("b", [_reply(p) for p in b_says] + [recs])
    team = evince.EvinceAgents(Agent("agent-a", a, OPTS), Agent("agent-b", b, OPTS), Agent("judge", ScriptedBackend("j", []), OPTS))
    values = {"case": "fever, rash, joint pain", "labels": LABELS, "crit_judge": False, "recommendations": False, **config}

    async def go() -> list[TurnFinished]:
        return [e async for e in evince.run(evince.EvinceConfig(**values), team, debate_id="doc") if isinstance(e, TurnFinished)]

    return asyncio.run(go())


def kappas(turns: list[TurnFinished]) -> list[float]:
    """The κ each debate round was argued at (journalled with agent B's turns)."""
    return [t.kappa for t in turns if t.role == "agent-b" and t.kind in ("opening", "refutation")]  # type: ignore[misc]


def last_round(turns: list[TurnFinished]) -> int:
    return max(t.round for t in turns if t.kind in ("opening", "refutation"))


def defaults(**over: Any) -> evince.EvinceConfig:
    return evince.EvinceConfig(case="x", labels=LABELS, **over)


def small() -> evince.EvinceConfig:
    return evince.EvinceConfig.small_model(case="x", labels=LABELS)


def tokens_for_a_sentence() -> int:
    """The shortest turn whose argument limit reaches the small profile's ``argument_chars``."""
    want = small().argument_chars
    return next(t for t in range(24, 2000) if small().__class__.small_model(case="x", turn_tokens=t).argument_limit() >= want)


def wobble() -> list[float]:
    """Half a point around 0.9/0.1: the change in ``mi``, in units of ε_MI, in WD and in JSD."""
    same, near = M.compute_all({"a": 0.9, "b": 0.1}, {"a": 0.9, "b": 0.1}), M.compute_all({"a": 0.9, "b": 0.1}, {"a": 0.895, "b": 0.105})
    d_mi = same.mi - near.mi
    return [d_mi, round(d_mi / defaults().eps_mi), near.wd, near.jsd]


def reheat_percent() -> float:
    """The largest rise of κ in one round, from a cooled state under the clearest divergence."""
    schedule = Adaptive()
    cooled = [schedule.value(t, RoundSignals(1, 1, 1, 1)) for t in range(3)][-1]
    return 100 * (schedule.value(3, RoundSignals(-1, -1, -1, -1)) / cooled - 1)


def recommendation_kappa() -> list[float]:
    turns = run_evince(CONVERGING[:2], max_rounds=1, recommendations=True)
    return sorted({t.kappa for t in turns if t.kind == "recommendations"})  # type: ignore[type-var]


def bench_designs() -> list[int]:
    """The diagnosis benchmark's designs: the paper's refutation rounds (judge on, EVINCE's own
    turn sizes), the quick one's rounds and turn size (no judge); and its default arms, which
    must hold every schedule, Figure 7.1's adaptive ``Update`` among them."""
    from tui.bench.diagnosis import DESIGNS, SCHEDULES, BenchConfig

    paper, quick = DESIGNS["paper"], DESIGNS["quick"]
    assert paper.crit_judge and paper.turn_tokens is None and not quick.crit_judge
    assert set(SCHEDULES) == {"none", "fixed", "linear", "exponential", "adaptive"}
    assert BenchConfig.__dataclass_fields__["design"].default == "paper"
    return [paper.max_rounds, quick.max_rounds, quick.turn_tokens or 0]


def exponential_bounds() -> list[float]:
    """The exponential arm at its default λ: round 1's κ (below the transition phase's 0.6), and
    the λ bounds that make a transition round (κ_1 ≥ 0.6) and 0.3 by round 2 exclusive."""
    transition = math.log(Adaptive().kappa0 / 0.6)
    by_round_2 = math.log(Adaptive().kappa0 / 0.3) / 2
    assert transition < by_round_2 and evince.phase_for(Exponential().value(1)) == "exploitative"
    assert evince.phase_for(Exponential(rate=transition).value(1)) == "transition"
    return [1, Exponential().value(1), 0.6, 0.6, transition, 0.3, 2, by_round_2]


def first_below(schedule: Schedule, level: float) -> int:
    """The first round whose κ is at or below ``level``."""
    return next(t for t in range(20) if (schedule.value(t) or 0) <= level + 1e-9)


def gamma_formula() -> list[float]:
    """Γ = 1 + (Q⁺ − 1)·S⁺/(S⁺+S⁻): 1 with rivals only, Q⁺ with reasons only; and the formula
    must hold in between (reasons (8, 5) and (4, 4) against one rival (4, 5)), Q⁺ the strongest √(γθ)."""
    reasons, rival = [{"validity": 4, "credibility": 4}, {"validity": 8, "credibility": 5}], {"validity": 4, "credibility": 5}
    quality = math.sqrt(40)
    low = C.weighted_score([], [rival])
    assert C.weighted_score(reasons, []) == pytest.approx(quality)
    assert C.weighted_score(reasons, [rival]) == pytest.approx(low + (quality - 1) * 56 / (56 + 20))  # type: ignore[operator]
    return [low, 1.0]  # type: ignore[list-item]


def _rated(pairs: Sequence[tuple[int, int]]) -> list[dict[str, int]]:
    return [{"validity": g, "credibility": t} for g, t in pairs]


def share_gamma(reasons: Sequence[tuple[int, int]], rivals: Sequence[tuple[int, int]]) -> float:
    """The share-only Γ = 1 + 9·S⁺/(S⁺+S⁻) with s = γθ/10: what the examples' "share-only" values are."""
    support, against = sum(g * t for g, t in reasons) / 10, sum(g * t for g, t in rivals) / 10
    return 1 + 9 * support / (support + against)


def mean_gamma(reasons: Sequence[tuple[int, int]], rivals: Sequence[tuple[int, int]]) -> float:
    """Γ with Q⁺ the *mean* √(γθ) of the reasons: what the examples' "with the mean" values are."""
    quality = sum(math.sqrt(g * t) for g, t in reasons) / len(reasons)
    support, against = sum(g * t for g, t in reasons), sum(g * t for g, t in rivals)
    return 1 + (quality - 1) * support / (support + against)


def gamma_example(reasons: Sequence[tuple[int, int]], rivals: Sequence[tuple[int, int]],
                  *beside: Callable[[Sequence[tuple[int, int]], Sequence[tuple[int, int]]], float]) -> Callable[[], list[float]]:
    """A worked example: its ratings as the doc writes them, Γ, and Γ by each of ``beside``."""
    def code() -> list[float]:
        now = C.weighted_score(_rated(reasons), _rated(rivals))
        assert now is not None
        return [*(x for pair in [*reasons, *rivals] for x in pair), now, *(other(reasons, rivals) for other in beside)]
    return code


def weaker_reason_examples() -> list[float]:
    """9/9 alone, then with a 3/3 and with a 1/1 beside it: Γ never falls (the mean's 6 and 5)."""
    alone = C.weighted_score(_rated([(9, 9)]), [])
    Example = tuple[list[tuple[int, int]], list[tuple[int, int]]]
    three: Example = ([(9, 9), (3, 3)], [])
    one: Example = ([(9, 9), (1, 1)], [])
    return [9, 9, alone or 0, 9, 9, 3, 3, C.weighted_score(*map(_rated, three)) or 0, mean_gamma(*three),
            9, 9, 1, 1, C.weighted_score(*map(_rated, one)) or 0, mean_gamma(*one)]


def socrasynth_gamma_examples() -> list[float]:
    """Pro 8/8 ×3 against con 6/6 ×3, then with two more 3/3 reasons for pro: Γ, Γ after, the
    mean's Γ after, the mean's fall (which exceeds the default tolerance)."""
    three, five = ([(8, 8)] * 3, [(6, 6)] * 3), ([(8, 8)] * 3 + [(3, 3)] * 2, [(6, 6)] * 3)
    fall = mean_gamma(*three) - mean_gamma(*five)
    assert fall > ss.SocraSynthConfig(subject="x").crit_tolerance
    return [8, 8, 3, 6, 6, 3, C.weighted_score(*map(_rated, three)) or 0, 3, 3,
            C.weighted_score(*map(_rated, five)) or 0, mean_gamma(*five), fall]


def other_averages() -> list[float]:
    """Why not a mean weighted by strength (γθ), nor a noisy-OR: 9/9 with 3/3 and with 1/1 by
    the first, five 5/5 reasons by the second (each reason's (√(γθ) − 1)/9 a probability)."""
    def weighted(pairs: list[tuple[int, int]]) -> float:
        return sum(g * t * math.sqrt(g * t) for g, t in pairs) / sum(g * t for g, t in pairs)
    noisy_or = 1 + 9 * (1 - (1 - (5 - 1) / 9) ** 5)
    return [9, 9, 3, 3, weighted([(9, 9), (3, 3)]), 9, 9, 1, 1, weighted([(9, 9), (1, 1)]), 5, 5, noisy_or]


def recursion_gate_example() -> list[float]:
    """The gate example: a reason rated 3/3, its sub-evaluation's support 3/3 and no rival, run
    through :func:`protocols.measures.crit.crit` on a scripted judge; beside it, γ_r taken as the
    sub-evaluation's share-only Γ."""
    reason = {"reason": "fever", "validity": 3, "credibility": 3, "argument": 1, "is_claim": True}
    first = json.dumps({"claim": "c", "reasons": [reason], "rival_reasons": [], "score": 5, "justification": "j"})
    sub = json.dumps({"claim": "c", "reasons": [{"reason": "s", "validity": 3, "credibility": 3}], "rival_reasons": [],
                      "score": 5, "justification": "j"})
    judge = Agent("judge", ScriptedBackend("judge", [first, sub]), OPTS)
    result = asyncio.run(C.crit(judge, "doc", author="A", arguments=["fever"], depth=1))
    after = result.reasons[0]
    threshold = defaults().gate_threshold
    quality = result.argument_scores[1]
    assert quality < threshold < math.sqrt(share_gamma([(3, 3)], []) * 3) / 10
    return [3, 3, 9, 0.3, 3, 3, after["validity"], after["credibility"], quality,
            share_gamma([(3, 3)], []), 3, math.sqrt(share_gamma([(3, 3)], []) * 3) / 10]


def validity_bounds() -> list[float]:
    field = C.RatedReason.model_fields["validity"]
    bounds = {type(m).__name__: m for m in field.metadata}
    return [bounds["Ge"].ge, bounds["Le"].le]


CLAIMS: list[Claim] = [
    # EVINCE: Figure 7.1's Update, run through the loop
    Claim("evince-update-parameters", "EVINCE",
          r"λ = ([\d.]+), g = ([\d.]+), σ = ([\d.]+), w_wd = w_mi = w_jsd = w_crit = ([\d.]+) \(all `schedule_params`\)",
          lambda: [Adaptive().rate, Adaptive().gain, Adaptive().sensitivity,
                   *({Adaptive().w_wd, Adaptive().w_mi, Adaptive().w_jsd, Adaptive().w_crit})]),
    Claim("evince-update-trajectory", "EVINCE", r"rounds 0–4 are argued at κ = ([\d., ]+?) \(Tables",
          lambda: kappas(run_evince(CONVERGING, max_rounds=5))[:5]),
    Claim("evince-update-settled", "EVINCE", r"settled rounds \(no change\) cool gently \(×([\d.]+)\)",
          lambda: [Adaptive().value(1, RoundSignals()) / Adaptive().kappa0]),
    Claim("evince-update-no-metrics-holds", "EVINCE", r"so round (\d+) \(the first refutation round\) is argued at κ0",
          lambda: [max(r for r, k in enumerate(kappas(run_evince(CONVERGING, max_rounds=5))) if k == Adaptive().kappa0)]),
    Claim("evince-update-reheat", "EVINCE", r"divergence reheats by at most (\d+) %", lambda: [reheat_percent()]),
    Claim("evince-linear-arm", "EVINCE", r"λ = `rate`, ([\d.]+) by default: linear gives ([\d., ]+?) for rounds 0–3",
          lambda: [Linear().rate, *kappas(run_evince(MOVING, max_rounds=3, schedule="linear"))[:4]]),
    Claim("evince-exponential-arm", "EVINCE", r"Exponential: λ = `rate`, ([\d.]+) by default: ([\d., ]+?) for rounds 0–3",
          lambda: [Exponential().rate, *kappas(run_evince(MOVING, max_rounds=3, schedule="exponential"))[:4]]),
    Claim("evince-exponential-faster", "EVINCE",
          r"reach ([\d.]+) in the third round \(round (\d)\), linear in the fourth \(round (\d)\)",
          lambda: [Linear().value(3), first_below(Exponential(), 0.3), first_below(Linear(), 0.3)]),
    Claim("evince-exponential-no-transition", "EVINCE",
          r"round (\d) is already κ ([\d.]+), exploitative below ([\d.]+)\).*?κ_1 ≥ ([\d.]+) needs λ ≤ ([\d.]+)\) and ([\d.]+) by "
          r"round (\d) \(λ ≥ ([\d.]+)\)", exponential_bounds),
    Claim("evince-exponential-before", "EVINCE", r"With one λ of ([\d.]+) for both.*?cooled \*less\*: ([\d.]+) against ([\d.]+) after one round",
          lambda: [Linear().rate, Exponential(rate=Linear().rate).value(1), Linear().value(1)]),
    Claim("evince-tables-round-1", "EVINCE", r"so their debate rounds 1–3 are our rounds 0–2 at ([\d., ]+?) \(Table 7\.3's",
          lambda: [Linear().value(t) for t in range(3)]),
    Claim("evince-tables-final", "EVINCE", r"\(κ = ([\d.]+)\) … Joint Final Assessment\", the joint output after the debate, "
          r"which EVINCE's recommendations are, at κ = ([\d.]+) too\)", lambda: [Linear().value(3), *recommendation_kappa()]),
    Claim("evince-update-later", "EVINCE", r"reach the tables' last debate κ, ([\d.]+), one round later \(round (\d), ([\d.]+)\)",
          lambda: [Linear().value(2), 3, kappas(run_evince(CONVERGING, max_rounds=5))[3]]),
    Claim("evince-gate-threshold", "EVINCE", r"must reach `gate_threshold` \(([\d.]+)\)", lambda: [defaults().gate_threshold]),
    Claim("evince-epsilon", "EVINCE", r"ε = `eps_\*` = ([\d.]+)",
          lambda: list({defaults().eps_wd, defaults().eps_mi, defaults().eps_jsd, defaults().eps_crit})),
    Claim("evince-round-cap", "EVINCE", r"`max_rounds` = (\d+) \*\*refutation rounds after the opening round\*\* \(rounds 0–(\d+)",
          lambda: [defaults().max_rounds, last_round(run_evince(MOVING))]),
    Claim("evince-mi-cusp", "EVINCE", r"0\.6/0\.32/0\.08 against 0\.6/0\.3/0\.1 scores ([\d.]+) where identical beliefs score (\d+)",
          lambda: [M.agreement_information([0.6, 0.32, 0.08], [0.6, 0.3, 0.1]), M.agreement_information([0.6, 0.3, 0.1], [0.6, 0.3, 0.1])]),
    Claim("evince-mi-wobble", "EVINCE",
          r"half a point of wobble around 0\.9/0\.1 moves it by ([\d.]+) = (\d+)ε while WD moves ([\d.]+) and JSD ([\d.]+)",
          wobble),
    Claim("evince-update-sigma", "EVINCE", r"outweighs every other signal in `Update` \(σ = ([\d.]+)\)", lambda: [Adaptive().sensitivity]),
    Claim("evince-label-flag", "EVINCE",
          r"P_f\(top\) ≥ `label_flag_confidence` \(([\d.]+)\).*?`agreement_max_jsd` \(([\d.]+)",
          lambda: [defaults().label_flag_confidence, defaults().agreement_max_jsd]),
    Claim("evince-deadlock-threshold", "EVINCE", r"the same top label and JSD ≤ `agreement_max_jsd` \(([\d.]+)\)\. Otherwise",
          lambda: [defaults().agreement_max_jsd]),
    Claim("evince-deadlock-examples", "EVINCE",
          r"0\.9/0\.1 against 0\.6/0\.4 \(JSD ([\d.]+)\) agrees, against 0\.55/0\.45 \(([\d.]+)\) does not",
          lambda: [M.jensen_shannon({"a": 0.9, "b": 0.1}, {"a": 0.6, "b": 0.4}),
                   M.jensen_shannon({"a": 0.9, "b": 0.1}, {"a": 0.55, "b": 0.45})]),
    Claim("evince-recommendations-kappa", "EVINCE", r"A drafts, B completes, both at κ = ([\d.]+)", recommendation_kappa),
    Claim("evince-turn-defaults", "EVINCE", r"`turn_tokens` = (\d+), `argument_chars` = (\d+) \(a paragraph",
          lambda: [defaults().turn_tokens, defaults().argument_limit()]),
    Claim("evince-small-profile", "EVINCE",
          r"SMALL_MODEL_PROFILE` \((\d+)-token turns, arguments of at most (\d+) characters.*?(\d+)-token judge replies, "
          r"`crit_depth` = (\d+): no CRIT recursion, `max_rounds` = (\d+)\)",
          lambda: [small().turn_tokens, small().argument_limit(), small().crit_tokens, small().crit_depth, small().max_rounds]),
    Claim("evince-small-profile-before", "EVINCE", r"110-token turns left (\d+) characters an argument",
          lambda: [defaults(turn_tokens=110, argument_chars=120).argument_limit()]),
    Claim("evince-small-profile-sentence", "EVINCE", r"a sentence each needs about (\d+) tokens",
          lambda: [tokens_for_a_sentence()], tolerance=5),
    Claim("evince-top-k", "EVINCE", r"\(eq\. 7\.1, k = (\d+)\)", lambda: [defaults().top_k]),
    Claim("evince-bench-designs", "EVINCE",
          r"`--design paper` \(the default\) has the judge on, up to (\d+)\s+refutation rounds.*?`--design quick` \(no judge, (\d+)\s+"
          r"refutation round, (\d+)-token turns\)", bench_designs),
    # CRIT (Table 6.3)
    Claim("crit-reasons-and-scale", "CRIT",
          r"≤ (\d+) reasons and ≤ (\d+) rivals each with validity γ and credibility θ \((\d+)–(\d+)\)",
          lambda: [C.MAX_REASONS, C.CritReply.model_fields["rival_reasons"].metadata[0].max_length, *validity_bounds()]),
    Claim("crit-recursion", "CRIT", r"`is_claim` \(≤ (\d+) reasons and ≤ (\d+) rivals per document\)",
          lambda: [C.MAX_RECURSIVE, C.MAX_RECURSIVE]),
    Claim("crit-depth", "CRIT", r"`crit_depth` levels deep \((\d+) by default, (\d+) in the small-model profile\)",
          lambda: [defaults().crit_depth, small().crit_depth]),
    Claim("crit-gamma", "CRIT", r"Γ = (\d+) \+ \(Q⁺ − (\d+)\)·S⁺/\(S⁺\+S⁻\), where Q⁺ = the largest √\(γθ\)", gamma_formula),
    Claim("crit-other-averages", "CRIT",
          r"a mean weighted by strength \((\d)/(\d) and (\d)/(\d): ([\d.]+); (\d)/(\d) and (\d)/(\d): ([\d.]+)\); a noisy-OR or a "
          r"sum would rise with the mere number of reasons \(five (\d)/(\d) reasons: ([\d.]+)\)", other_averages),
    Claim("crit-example-weaker-reason", "CRIT",
          r"- (\d)/(\d) alone: Γ = (\d); (\d)/(\d) and (\d)/(\d): Γ = (\d) \(with the mean, (\d)\); (\d)/(\d) and (\d)/(\d): "
          r"Γ = (\d) \(with the mean, (\d),", weaker_reason_examples),
    Claim("crit-example-socrasynth", "CRIT",
          r"pro (\d)/(\d) ×(\d) against con (\d)/(\d) ×(\d): Γ = ([\d.]+); the same ratings with (\w+) more (\d)/(\d) reasons "
          r"for pro: Γ = ([\d.]+) \(with the mean, ([\d.]+): a fall of ([\d.]+), more than `crit_tolerance`",
          lambda: socrasynth_gamma_examples()[:7] + [2] + socrasynth_gamma_examples()[7:]),
    Claim("crit-example-one-weak-reason", "CRIT", r"one reason rated (\d+)/(\d+), no rival: Γ = (\d+) \(share-only, (\d+)\)",
          gamma_example([(1, 1)], [], share_gamma)),
    Claim("crit-example-strong-pair", "CRIT", r"- (\d+)/(\d+) against (\d+)/(\d+): Γ = ([\d.]+) \(share-only, ([\d.]+)\);",
          gamma_example([(9, 9)], [(9, 9)], share_gamma)),
    Claim("crit-example-weak-pair", "CRIT", r"- (\d+)/(\d+) against (\d+)/(\d+): Γ = ([\d.]+) \(share-only, ([\d.]+)\): equally",
          gamma_example([(2, 2)], [(2, 2)], share_gamma)),
    Claim("crit-example-demo", "CRIT", r"one weak reason in it, say (\d+)/(\d+), and no rival gives Γ = ([\d.]+) \(share-only, (\d+)\)",
          gamma_example([(3, 2)], [], share_gamma)),
    Claim("crit-example-mixed", "CRIT",
          r"- (\d+)/(\d+) and (\d+)/(\d+) against (\d+)/(\d+): Γ = ([\d.]+) \(with the mean, ([\d.]+); share-only, ([\d.]+)\)",
          gamma_example([(8, 8), (3, 3)], [(5, 5)], mean_gamma, share_gamma)),
    Claim("crit-example-gate", "CRIT",
          r"a reason rated (\d)/(\d) \(quality √(\d)/10 = ([\d.]+), below `gate_threshold`\) whose sub-evaluation rates its "
          r"support (\d)/(\d) with no rival stays (\d)/(\d), quality ([\d.]+), dropped \(taking the sub-evaluation's share-only "
          r"Γ as γ_r: (\d+)/(\d), quality ([\d.]+), admitted\)", recursion_gate_example),
    Claim("crit-argument-example", "CRIT",
          r"an argument cited by an (\d)/(\d) reason stays at ([\d.]+) when a (\d)/(\d) reason cites it too \(a mean, ([\d.]+), would sit on the gate\)",
          lambda: [8, 8, C.argument_scores([{"validity": 8, "credibility": 8, "argument": 1},
                                             {"validity": 2, "credibility": 2, "argument": 1}], 1)[1], 2, 2, defaults().gate_threshold]),
    Claim("crit-evince-round-0", "CRIT", r"reasons rated (\d)/(\d): Γ = (\d+)\)",
          lambda: [6, 6, C.weighted_score(_rated([(6, 6)]), []) or 0]),
]


# --- the other sections: helpers that compute what their rows state ------------------------------


def param_info(config_cls: type, name: str) -> ParamInfo:
    return next(p for p in params_of(config_cls) if p.name == name)


def socrasynth(**over: Any) -> ss.SocraSynthConfig:
    return ss.SocraSynthConfig(subject="x", **over)


def socrasynth_small() -> ss.SocraSynthConfig:
    return ss.SocraSynthConfig(subject="x", **ss.SocraSynthConfig.SMALL_MODEL_PROFILE)


def socrasynth_first_comparison() -> list[int]:
    """The refutation rounds that always run and the first before which Table 6.2's Γ test can
    end the loop: Γ falls by 3 points every round (far past any tolerance, with τ = 0 too),
    the opening's Γ_0 highest of all, and :meth:`SocraSynth._loop_ended` is asked before each
    round. Rounds before the first comparison run whatever Γ does."""
    judge = Agent("judge-1", ScriptedBackend("j", []), OPTS)
    run = ss.SocraSynth(socrasynth(crit_tolerance=0.0), ss.SocraSynthAgents(judge, judge, [judge]), debate_id="doc")
    run.rounds = [{"round": t, "kind": "opening" if t == 0 else "refutation", "delta": run.delta(t), "gamma": 10.0 - 3 * t,
                   "quality": 10.0 - 3 * t} for t in range(4)]
    first = next(t for t in range(1, 4) if run._loop_ended(t) is not None)
    return [*range(1, first), first]


def socrasynth_better_counter() -> list[float]:
    """Pro 7/7 ×3 against con 5/5 ×3, then con at 8/8 ×3: Γ before and after, Γ's fall (more
    than the default tolerance), and the debate's quality before and after (a rise)."""
    def judged(con: int) -> CritResult:
        reasons, rivals = _rated([(7, 7)] * 3), _rated([(con, con)] * 3)
        gamma = C.weighted_score(reasons, rivals)
        return CritResult(score=gamma, holistic=None, weighted=gamma, reasons=reasons, rivals=rivals)
    before, after = judged(5), judged(8)
    assert before.score is not None and after.score is not None
    assert before.score - after.score > socrasynth().crit_tolerance
    return [7, 7, 3, 5, 5, 3, before.score, 8, 8, 3, after.score, before.score - after.score,
            ss.debate_quality(before) or 0, ss.debate_quality(after) or 0]


def socrasynth_round_counts() -> list[int]:
    """The cap in refutation rounds; the opening plus the cap as appendix 6.C counts rounds; and
    a default debate's fewest and most refutation rounds (the first Γ comparison can end it
    before round 3, the case check can add one past the cap), with the opening counted too."""
    cap = socrasynth().max_rounds
    fewest = socrasynth_first_comparison()[-1] - 1
    most = cap + 1
    return [cap, cap, cap + 1, fewest, most, fewest + 1, most + 1]


def socrasynth_schedule() -> list[float]:
    """Table 6.2's Δ test at the defaults: how many refutation rounds it allows, Δ0, δ, and the
    Δ of the last round it allows and of the first it refuses."""
    c = socrasynth()
    n = c.schedule_rounds()
    assert n is not None
    start = max(c.kappa_a, c.kappa_b)
    return [n, start, c.delta, n, start / c.delta ** n, n + 1, start / c.delta ** (n + 1)]


def socrasynth_other_deltas() -> list[float]:
    """The δ (two decimals) for which Table 6.2's Δ test alone ends the loop after 5 … 3
    refutation rounds (the study's length), the Δ the last allowed round would be argued at
    across them, and Table 6.1's lowest contentious level (0.3) that Δ falls below."""
    c = socrasynth()
    start = max(c.kappa_a, c.kappa_b)
    grid = [d / 100 for d in range(101, 400)]
    within = [d for d in grid if 3 <= (socrasynth(delta=d).schedule_rounds() or 0) <= 5]
    lasts = [start / d ** (socrasynth(delta=d).schedule_rounds() or 0) for d in within]
    assert within == [d for d in grid if min(within) <= d <= max(within)], "the δ range has a hole"
    rounds = [socrasynth(delta=d).schedule_rounds() for d in (min(within), max(within))]
    return [min(within), max(within), *rounds, min(lasts), max(lasts), min(k for k in LEVELS if k > 0)]


def socrasynth_point_sizes() -> list[float]:
    """Characters a point may take (``chars_for``, what :meth:`SocraSynth._point_chars` uses)
    at the defaults and in the small profile, and what 1024 tokens gave in an earlier version. The
    defaults must hold appendix 6.C's longest point (624 characters); 1024 tokens did not."""
    c, small = socrasynth(), socrasynth_small()
    now, before = chars_for(c.turn_tokens, c.subtopics), chars_for(1024, 5)
    assert before < 624 <= now
    return [c.turn_tokens, now, c.subtopics, small.turn_tokens, small.subtopics,
            chars_for(small.turn_tokens, small.subtopics), 1024, before, 5]


def conciliatory() -> list[float]:
    info = param_info(ss.SocraSynthConfig, "conciliatory_kappa")
    return [socrasynth().conciliatory_kappa, info.ge, info.le]  # type: ignore[list-item]


def gamma_scale() -> list[float]:
    """Γ's range: rivals only (lowest) and reasons only (highest)."""
    reason, rival = {"validity": 10, "credibility": 10}, {"validity": 10, "credibility": 10}
    return [C.weighted_score([], [rival]) or 0, C.weighted_score([reason], []) or 0]


def confidence_range() -> list[float]:
    """The smallest and largest confidence :func:`parse_confidence` records."""
    kept = [v for v in range(0, 200) if parse_confidence(f"My confidence: {v}.")[0] == v]
    assert parse_confidence("My confidence: 101.")[0] is None  # out of range: noted, not recorded
    return [min(kept), max(kept)]


def confidence_migration() -> list[int]:
    return [next(m.version for m in MIGRATIONS if "confidence" in m.sql)]


def triem_codes() -> list[float]:
    return [float(triem_code(label, "affirm")) for label in ("affirm", "remand", NONE)]  # type: ignore[arg-type]


def triem_opportunities() -> list[int]:
    """Triem's opportunities for one AI seat in a three-round debate, and those rounds."""
    rounds = HumanloopConfig(case="x").rounds
    seat = [StanceStep(r, "agent-1", "affirm") for r in range(1, rounds + 1)]
    return [analyze(seat, binary="affirm")["triem"]["opportunities"], rounds]


def evaluation_scale() -> list[float]:
    field = conference.EvaluationScores.model_fields["clarity"]
    bounds = {type(m).__name__: m for m in field.metadata}
    assert set(conference.EvaluationScores.model_fields) == {k for k, _ in conference.FACTORS}
    return [bounds["Ge"].ge, bounds["Le"].le, len(conference.FACTORS)]


def d3_scale() -> list[float]:
    out = []
    for reply in (d3.JudgeReply, d3.JurorReply):
        bounds = {type(m).__name__: m for f in ("score_1", "score_2") for m in reply.model_fields[f].metadata}
        out.append((bounds["Ge"].ge, bounds["Le"].le))
    assert len(set(out)) == 1, out  # the judge and the jurors score on one scale
    return list(out[0])


def d3_tokens() -> list[int]:
    c = d3.D3Config(question="q", answer_a="a", answer_b="b")
    small = d3.D3Config(question="q", answer_a="a", answer_b="b", **d3.D3Config.SMALL_MODEL_PROFILE)
    return [c.turn_tokens, c.judge_tokens, c.vote_tokens, small.turn_tokens, small.judge_tokens, small.vote_tokens]


def d3_defaults() -> d3.D3Config:
    return d3.D3Config(question="q", answer_a="a", answer_b="b")


def d3_jury() -> list[int]:
    """The default jury, which is appendix D.3's personas, one juror each."""
    size = d3_defaults().jury_size
    assert size == len(d3.PERSONAS), (size, len(d3.PERSONAS))
    return [size]


def map_claim_reasons() -> list[int]:
    return [analyzer.MapClaim.model_fields[f].metadata[0].max_length for f in ("supports", "attacks")]


def deliberation_defaults() -> deliberation.DeliberationConfig:
    return deliberation.DeliberationConfig(topic="x")


def registry_windows() -> list[float]:
    """The context windows ``models.toml`` gives its real models (one value) and the bundled ones."""
    models = tomllib.loads((REPO / "models.toml").read_text(encoding="utf-8"))["models"]
    standard = {m["context_length"] for m in models.values() if m.get("profile", "standard") != "small"}
    small = {m["context_length"] for m in models.values() if m.get("profile") == "small"}
    assert len(standard) == 1 and len(small) == 1, (standard, small)
    return [*standard, *small]


def estimate() -> list[float]:
    """The estimating backends' count (``Session.count_tokens``): characters a token and tokens a
    message's markup adds; and the tokens fitting keeps spare."""
    session = ScriptedBackend("x", []).session("doc")
    markup = session.count_tokens([Message("user", "")])
    per_token = 400 / (session.count_tokens([Message("user", "x" * 400)]) - markup)
    return [per_token, markup, SAFETY_TOKENS]


def example_note() -> list[float]:
    """The note the doc quotes, made by :func:`fit_sections`: a 3,400-character subject beside a
    13,650-character document, before a judge with a bundled model's window and the small
    profile's SocraSynth judge reply."""
    backend = ScriptedBackend("j", [])
    backend.context_length = registry_windows()[1]
    judge = Agent("judge", backend, OPTS)
    text = ("the case says " * 1000)
    fitted = fit_sections(judge, [Section("the subject", text[:3400], 0), Section("the document", text[:13650], 1)],
                          lambda t: [Message("system", "You are a CRIT judge."),
                                     Message("user", f"Subject: {t['the subject']}\nDocument: {t['the document']}")],
                          reply_tokens=socrasynth_small().crit_tokens)
    [note] = fitted.notes
    found = re.fullmatch(r"shortened to fit judge's context window \(([\d,]+) tokens, ([\d,]+) kept for the reply\): "
                         r"the subject to ([\d,]+) of ([\d,]+) characters \(its middle left out\)", note)
    assert found, note
    return [float(g.replace(",", "")) for g in found.groups()]


def bench_config() -> BenchConfig:
    return BenchConfig(cases=REPO / "cases.csv", models=("a", "b"), out=REPO / "out", design="quick")


def replicate_test_example() -> list[float]:
    """Two systems of 100 cases that differ on one: the paper's test on 20 replicates over five
    seeds (its smallest and largest p) against the per-case test."""
    rng = np.random.default_rng(1)
    ps, per_case = [], []
    for seed in range(5):
        hits = (rng.random(100) < 0.6).astype(float)
        other = hits.copy()
        other[np.flatnonzero(hits)[0]] = 0.0
        ps.append(E.replicate_test(hits, other, seed=seed)["p"])
        per_case.append(E.wilcoxon_p(hits, other))
    assert len(set(per_case)) == 1
    return [min(ps), max(ps), per_case[0]]


def open_set_example() -> list[float]:
    """Agents who agree, one saying "Dengue fever", in an open debate: JSD and WD as the debate
    reads them (its own open set, learning A's labels), and by case and punctuation alone."""
    said = ('{"Dengue": 0.8, "Malaria": 0.2}', '{"Dengue fever": 0.8, "malaria": 0.2}')
    debate = LabelSet((), closed=False).for_debate()
    a, b = (debate.learn(parse_distribution(x, debate).probs or {})[0] for x in said)
    bare_a, bare_b = (parse_distribution(x, None).probs or {} for x in said)
    with_rules = max(M.jensen_shannon(a, b), M.wasserstein(a, b))
    without = [M.jensen_shannon(bare_a, bare_b), M.wasserstein(bare_a, bare_b)]
    assert math.isclose(without[0], without[1])
    return [with_rules, without[0]]


def appendix_7e_round_1() -> list[float]:
    """Appendix 7.E's round 1 as the agents wrote it (7.E.1.1, 7.E.2.1): the JSD between them by
    case and punctuation alone, and in an open debate's own set under the spelling rules."""
    gpt = {"Hepatitis C (HCV)": 0.4, "Hepatitis B (HBV)": 0.3, "Cirrhosis": 0.15, "Obstructive Jaundice": 0.1,
           "Acute Liver Failure": 0.05}
    claude = {"Hepatitis B (HBV)": 0.35, "Hepatitis C (HCV)": 0.25,
              "Obstructive Jaundice (due to gallstones, pancreatic cancer, or bile duct obstruction)": 0.2,
              "Alcoholic Hepatitis": 0.15, "Hepatitis A (HAV)": 0.05}
    debate = LabelSet((), closed=False).for_debate()
    a, b = (debate.learn(parse_distribution(json.dumps(d), debate).probs or {})[0] for d in (gpt, claude))
    return [M.jensen_shannon(gpt, claude), M.jensen_shannon(a, b)]


def label_rule_examples() -> list[float]:
    """The labels row's numbers: the typo rule's cutoff, and the open set's refusal to call
    "Hepatitis C" a typo of "Hepatitis B" (91 % alike)."""
    ratio = difflib.SequenceMatcher(a="hepatitis c", b="hepatitis b").ratio()
    assert LabelSet(["Hepatitis B"], closed=False).match("Hepatitis C") is None
    assert LabelSet(["Hepatitis B", "Malaria"]).match("Hepatits B") == "Hepatitis B"
    return [FUZZY_CUTOFF * 100, 100 * ratio]


CLAIMS += [
    # Parameters and profiles
    Claim("profiles-evince-no-recursion", "Parameters and profiles", r"in EVINCE also no CRIT\s+recursion, `crit_depth` = (\d+)",
          lambda: [small().crit_depth]),
    # What each judge and agent sees
    Claim("fitting-example-note", "What each judge and agent sees",
          r"e\.g\. for a ([\d,]+)-character subject\s+beside a ([\d,]+)-character document.*?context window \(([\d,]+) tokens, "
          r"(\d+) kept for the reply\): the subject to ([\d,]+) of ([\d,]+)\s+characters",
          lambda: [3400, 13650, *example_note()[:2], *example_note()[2:]]),
    Claim("fitting-estimate", "What each judge and agent sees",
          r"estimates (\w+) characters a token\s+plus (\w+) per message, with (\d+) tokens kept spare", estimate),
    Claim("fitting-windows", "What each judge and agent sees",
          r"are given\s+([\d,]+)-token windows.*?with the bundled models' ([\d,]+) tokens", registry_windows),
    # SocraSynth (chapter 6)
    Claim("socrasynth-start-delta", "SocraSynth", r"stance and Δ0 \(([\d.]+) each, settable per agent\)",
          lambda: list({socrasynth().kappa_a, socrasynth().kappa_b})),
    Claim("socrasynth-subtopics", "SocraSynth", r"\(`subtopics`, default (\d+), at most (\d+); the small-model profile (\d+)\)",
          lambda: [socrasynth().subtopics, param_info(ss.SocraSynthConfig, "subtopics").le or 0, socrasynth_small().subtopics]),
    Claim("socrasynth-subtopics-max", "SocraSynth", r"at most (\d+); the small-model profile", lambda: [ss.MAX_SUBTOPICS]),
    Claim("socrasynth-delta-test", "SocraSynth", r"Δ_t = Δ0/δ\^t with the table's Δ0 = ([\d.]+), δ = ([\d.]+) and (\d+) %",
          lambda: [socrasynth().kappa_a, socrasynth().delta, 100 * socrasynth().threshold]),
    Claim("socrasynth-first-comparison", "SocraSynth",
          r"so rounds (\d+) and (\d+) always run and the first comparison is before round (\d+)", socrasynth_first_comparison),
    Claim("socrasynth-quality-not-margin", "SocraSynth",
          r"pro (\d)/(\d) ×(\d) against con (\d)/(\d) ×(\d) is Γ = ([\d.]+), and con rising to (\d)/(\d) ×(\d) makes it "
          r"Γ = ([\d.]+), a fall of ([\d.]+) that would end the loop because the debate improved, while Q rises from "
          r"(\d) to ([\d.]+)", socrasynth_better_counter),
    Claim("socrasynth-tolerance", "SocraSynth",
          r"`crit_tolerance` between two refutation rounds: τ = ([\d.]+), one point of CRIT's (\d+)–(\d+) scale\. τ = (\d+) is the table's literal test",
          lambda: [socrasynth().crit_tolerance, *gamma_scale(), param_info(ss.SocraSynthConfig, "crit_tolerance").ge or 0]),
    Claim("socrasynth-cap", "SocraSynth",
          r"`max_rounds = (\d+)` refutation rounds after the opening round, counted as EVINCE's cap \(the opening and "
          r"(\w+) refutation rounds: appendix 6\.C's (\w+)\)\. .*?a default debate holds the opening and (\d)–(\d) "
          r"refutation rounds, (\w+) to (\w+) rounds as the appendix counts them", socrasynth_round_counts),
    Claim("socrasynth-cap-small", "SocraSynth", r"The small-model profile sets (\d+)\b", lambda: [socrasynth_small().max_rounds]),
    Claim("socrasynth-delta-schedule", "SocraSynth",
          r"Δ test alone allows (\d+) refutation rounds at Δ0 = ([\d.]+), δ = ([\d.]+) \(Δ_(\d+) = ([\d.]+), Δ_(\d+) = ([\d.]+)\)",
          socrasynth_schedule),
    Claim("socrasynth-delta-per-round", "SocraSynth", r"the contentiousness each round is argued at \(([\d., ]+)\)",
          lambda: [socrasynth().kappa_a / socrasynth().delta ** t for t in (1, 2, 3)]),
    Claim("socrasynth-other-deltas", "SocraSynth",
          r"a δ between ([\d.]+) and ([\d.]+) would make the Δ test end the loop after (\d) … (\d) refutation rounds, but would "
          r"argue the last of them at Δ = ([\d.]+)–([\d.]+), beyond Table 6\.1's ([\d.]+)", socrasynth_other_deltas),
    Claim("socrasynth-crit-recursion", "SocraSynth", r"recurses one level \(`protocols\.measures\.crit\.crit`'s default depth (\d+)\)",
          lambda: [inspect.signature(C.crit).parameters["depth"].default]),
    Claim("socrasynth-conciliatory", "SocraSynth", r"Δ = ([\d.]+) \(([\d.]+)–([\d.]+)\); A drafts, B revises", conciliatory),
    Claim("socrasynth-point-sizes", "SocraSynth",
          r"`turn_tokens = (\d+)`: up to (\d+) characters a point with (\d+) subtopics;.*?The small-model profile: (\d+) tokens, "
          r"(\d+) subtopics \((\d+) characters a point\).*?(\d+) tokens gave (\d+) with (\w+) subtopics", socrasynth_point_sizes),
    # Decision conference and agreement judge (Heller et al.)
    Claim("conference-stages", "Decision conference", r"\(`topics`, default the (\w+) stages\)",
          lambda: [len(conference.DEFAULT_STAGES)]),
    Claim("conference-cap", "Decision conference", r"`max_rounds = (\d+)` per stage",
          lambda: [conference.ConferenceConfig(issue="x").max_rounds]),
    Claim("conference-evaluation", "Decision conference", r"Once per stage, (\d+)–(\d+) on each of the (\w+) factors", evaluation_scale),
    Claim("conference-word-cap", "Decision conference", r"`word_cap = (\d+)` words per participant turn",
          lambda: [conference.ConferenceConfig(issue="x").word_cap]),
    # Human in the loop (Triem)
    Claim("humanloop-confidence", "Human in the loop", r"the last rating stated, (\d+)–(\d+), else none", confidence_range),
    Claim("humanloop-confidence-column", "Human in the loop", r"stored in `turns\.confidence` \(migration (\d+)\)", confidence_migration),
    Claim("humanloop-triem-opportunities", "Human in the loop", r"\((\w+) per seat in (\w+) rounds\)", triem_opportunities),
    Claim("humanloop-triem-codes", "Human in the loop", r"each step coded (\d) / (\d) / (\d)", triem_codes),
    Claim("humanloop-rounds-and-judges", "Human in the loop",
          r"`rounds = (\d+)`; panel size is the number of models given \(synthetic: `simulated_judges = (\d+)`\)",
          lambda: [HumanloopConfig(case="x").rounds, HumanloopConfig(case="x").simulated_judges]),
    # Deliberation and analyzer (Turkstra et al., ArgsBase)
    Claim("deliberation-turns", "Deliberation", r"then `max_turns` \((\d+)\) turns", lambda: [deliberation_defaults().max_turns]),
    Claim("deliberation-person", "Deliberation", r"when neither of the last (\w+) turns was the person's",
          lambda: [deliberation.PERSON_WINDOW - 1]),
    Claim("deliberation-models", "Deliberation", r"A model not heard in (\w+) turns is next", lambda: [deliberation.MODEL_WINDOW]),
    Claim("deliberation-word-cap", "Deliberation",
          r"`word_cap = (\d+)` for every model, in the prompt;.*?`turn_tokens = (\d+)` leaves room for (\d+) words",
          lambda: [deliberation_defaults().word_cap, deliberation_defaults().turn_tokens, deliberation_defaults().word_cap]),
    Claim("deliberation-analyze-every", "Deliberation", r"runs every `analyze_every` \((\d+)\) turns",
          lambda: [deliberation_defaults().analyze_every]),
    Claim("deliberation-map", "Deliberation", r"up to (\w+) supporting and (\w+) attacking reasons", map_claim_reasons),
    # D3 (Bandi & Harrasse)
    Claim("d3-k", "D3", r"k = (\d+) by default, all 2k calls at once", lambda: [d3_defaults().k]),
    Claim("d3-stability", "D3", r"the last `window` \((\d+)\) gaps within `epsilon` \((\d+) point\)",
          lambda: [d3_defaults().window, d3_defaults().epsilon]),
    Claim("d3-rubric", "D3", r"D\.2: judge rubric, (\d+)–(\d+)\b.*?Same scale", d3_scale),
    Claim("d3-jury", "D3", r"(\w+) jurors with personas, majority vote", d3_jury),
    Claim("d3-tokens", "D3",
          r"`turn_tokens = (\d+)`, `judge_tokens = (\d+)`, `vote_tokens = (\d+)`; the small-model profile uses (\d+)/(\d+)/(\d+)",
          d3_tokens),
    # The diagnosis benchmark (7.4.1)
    Claim("bench-boot", "The diagnosis benchmark", r"over `n_boot` = (\d+) resamples of the cases.*?`n_resamples` = (\d+)",
          lambda: [bench_config().n_boot, E.PAPER_REPLICATES]),
    Claim("bench-paper-q", "The diagnosis benchmark", r"BH at q = ([\d.]+) \(a star", lambda: [E.PAPER_Q]),
    Claim("bench-replicate-test", "The diagnosis benchmark",
          r"the paper's test gives p = ([\d.]+)–([\d.]+) over five seeds, the per-case test ([\d.]+)", replicate_test_example),
    Claim("bench-synonyms", "The diagnosis benchmark", r"`protocols/measures/data/symptom2disease_synonyms\.txt`, (\d+) lines",
          lambda: [len(read_synonyms(BUILTIN_SYNONYMS["symptom2disease"]))]),
    Claim("bench-typo", "The diagnosis benchmark", r"one label at least (\d+) % alike; not in an open set.*?\"Hepatitis C\" is (\d+) % like",
          label_rule_examples, tolerance=0.5),
    Claim("bench-appendix-7e", "The diagnosis benchmark",
          r"two labels by case and punctuation \(JSD ([\d.]+) between the agents\) and one under the rules \(JSD ([\d.]+);",
          appendix_7e_round_1),
    Claim("bench-related", "The diagnosis benchmark", r"`protocols/measures/data/symptom2disease_related\.txt` lists (\d+)",
          lambda: [len(read_related(BUILTIN_RELATED["symptom2disease"]))]),
    Claim("bench-open-jsd", "The diagnosis benchmark", r"show a JSD and WD of (\d), not ([\d.]+)", open_set_example),
    Claim("bench-sc-temperature", "The diagnosis benchmark", r"sampled at temperature ([\d.]+), majority vote",
          lambda: [bench_config().sc_temperature]),
]



def test_the_doc_names_d3s_families_as_the_audit_does() -> None:
    """The D3 row's example: "gemma3-270m" is of the gemma family."""
    example = re.search(r'\("(\S+)" → (\w+)\)', section("D3"))
    assert example, "the D3 section lost its family example"
    assert family(example.group(1)) == example.group(2)


def doc_numbers(claim: Claim) -> list[tuple[float, int]]:
    """The numbers the doc states for ``claim``, each with its count of decimals, in order."""
    text = section(claim.section)
    match = re.search(claim.pattern, text, flags=re.S)
    assert match, f"{PAGES[claim.section][0]}, section '{claim.section}': no sentence matches {claim.pattern!r} (claim {claim.id})"
    out = []
    for group in match.groups():
        for number in NUMBER.findall(group):
            if number in WORDS:
                out.append((float(WORDS[number]), 0))
            else:
                out.append((float(number.replace(",", "")), len(number.partition(".")[2])))
    return out


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_each_number_the_doc_states_is_the_codes(claim: Claim) -> None:
    stated = doc_numbers(claim)
    computed = [float(v) for v in claim.code()]
    assert len(stated) == len(computed), f"{claim.id}: the doc states {[n for n, _ in stated]}, the code gives {computed}"
    for (number, decimals), value in zip(stated, computed):
        tolerance = claim.tolerance if claim.tolerance is not None else 0.5 * 10 ** -decimals + 1e-12
        assert math.isclose(number, value, abs_tol=tolerance), (
            f"{PAGES[claim.section][0]} ({claim.id}) says {number:g}, the code gives {value:.4g}: fix the doc or the code")


def test_the_metric_list_is_metric_definitions_word_for_word() -> None:
    """The doc's "metrics the app shows" list is :data:`protocols.measures.metrics.METRIC_DEFINITIONS`."""
    listed = dict(re.findall(r"^- \*\*(\w+)\*\*: (.*)$", section("The metrics the app shows"), flags=re.M))
    assert listed == M.METRIC_DEFINITIONS


def test_the_doc_says_what_a_human_in_the_loop_seat_reads_and_the_code_does_it() -> None:
    """Triem: "each agent presented its opinion unaware of other opinions", and the code shows
    each seat only the rounds before its own. The calls table (docs/protocols/common.md) says so;
    a row saying each turn "reads the one before", as in deliberation, would have seat 2 read
    seat 1 of the same round."""
    from protocols import humanloop
    from protocols.humanloop import HumanloopAgents

    row = next(line for line in section("Calls asked at once").splitlines() if line.startswith("| Human in the loop |"))
    assert "reads only the rounds before its own" in row and "never a statement of its own round" in row
    seats = [Agent("a", ScriptedBackend("m1", ["FIRST-ROUND-ONE affirm", "first again"]), OPTS),
             Agent("b", ScriptedBackend("m2", ["SECOND-ROUND-ONE reverse", "second again"]), OPTS)]
    clerk = Agent("clerk", ScriptedBackend("c", [json.dumps({"stance": s, "evidence": ""})
                                                  for s in ("affirm", "reverse", "affirm", "reverse")]), OPTS)
    run = humanloop.Humanloop(HumanloopConfig(case="a case", rounds=2), HumanloopAgents(seats, clerk), debate_id="h")

    async def go() -> None:
        async for _ in run.run():
            pass

    asyncio.run(go())
    first, second = seats[0].backend, seats[1].backend
    assert isinstance(first, ScriptedBackend) and isinstance(second, ScriptedBackend)
    assert "FIRST-ROUND-ONE" not in second.prompts[0][-1].content  # round 1: seat 2 does not read seat 1
    assert "FIRST-ROUND-ONE" in second.prompts[1][-1].content and "SECOND-ROUND-ONE" in first.prompts[1][-1].content


def test_table_7_3s_fourth_row_is_called_the_joint_final_assessment_not_a_refutation_round() -> None:
    """Appendix 7.E.5: "Final Consensus (κ = 0.3) … Joint Final Assessment"; Table 7.2 and
    appendix 7.D hold three rounds. Calling Tables 7.2/7.3's rows four rounds of debate (the
    opening and three refutation rounds) would misread the paper."""
    evince_rows = section("EVINCE")
    four = re.compile(r"Tables? 7\.(2/7\.)?3's four\b")
    assert not four.search(evince_rows), four.search(evince_rows)
    assert "Joint Final Assessment" in evince_rows and "not a round of debate" in evince_rows
    from protocols.measures.contentiousness import Linear
    assert "three refutation rounds" not in (Linear.__doc__ or "")
    from tui.bench.diagnosis import DESIGNS
    assert not four.search(DESIGNS["paper"].summary)


def test_the_protocols_index_lists_every_registered_protocol_and_where_the_gamma_choice_lives() -> None:
    """docs/protocols.md's table has a row per protocol of :data:`protocols.registry.PROTOCOLS`
    (its command, each variant's too, and a link to its page, which exists), and the index links
    the CRIT page's worked examples of Γ, the choice the paper leaves open."""
    from protocols.registry import PROTOCOLS

    index = (REPO / "docs/protocols.md").read_text(encoding="utf-8")
    rows = [line for line in index.splitlines() if line.startswith("| ") and "symposium run" in line]
    for definition in PROTOCOLS:
        page = f"protocols/{definition.name}.md"
        names = [v.name for v in definition.variants] or [definition.name]
        row = next((r for r in rows if f"]({page})" in r), None)
        assert row is not None, f"docs/protocols.md lists no row linking {page} for `symposium run {definition.name}`"
        assert all(name in row for name in names), (names, row)
        assert (REPO / "docs" / page).is_file(), page
    assert len(rows) == len(PROTOCOLS), rows
    assert "](protocols/crit.md#γ-worked-through-table-63-6)" in index
    assert "### Γ worked through (Table 6.3 #6)" in (REPO / "docs/protocols/crit.md").read_text(encoding="utf-8")
