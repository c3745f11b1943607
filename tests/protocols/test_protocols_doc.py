"""docs/protocols.md's numbers against the code, so the doc cannot drift (issue 20, point 13).

Each :class:`Claim` is one sentence of the doc that states numbers the code can compute: a
regular expression finds the sentence inside its section (so rewording it away fails too) and
captures the numbers; ``code`` computes the same numbers from the code: config defaults,
computed limits, and trajectories run through the protocol's own loop on scripted agents (the
loop, not the schedule alone, decides when signals exist). A number written with d decimals
must equal the code's value rounded to d decimals (|doc − code| ≤ ½·10^−d), unless the claim
sets its own tolerance ("about 195 tokens").

To pin another section (SocraSynth, D3 …), add :class:`Claim` entries with its heading.
Scripted backends here (tests/helpers/scripted.py): a trajectory needs agents that converge
exactly as told, which a real model cannot be made to do.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols import crit as C
from protocols import evince
from protocols import metrics as M
from protocols.agents import Agent
from protocols.contentiousness import Adaptive, Linear, RoundSignals
from protocols.events import TurnFinished
from protocols.labels import LabelSet

from tests.helpers.paths import REPO
from tests.helpers.scripted import ScriptedBackend

DOC = REPO / "docs" / "protocols.md"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Claim:
    """A doc sentence with numbers (``pattern``'s groups; a group may hold a list such as
    "0.9, 0.7, 0.5") and the code's values for them, in the same order."""

    id: str
    section: str  # the start of the "## " heading the sentence must be under
    pattern: str
    code: Callable[[], Sequence[float]]
    tolerance: float | None = None  # None: half a unit of the doc's last written digit


def section(heading: str) -> str:
    """The text of the ``## heading…`` section of the doc, up to the next ``## ``."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(heading)}.*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"docs/protocols.md has no section starting '## {heading}'"
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


def gamma_formula() -> list[float]:
    """Γ = a + b·S⁺/(S⁺+S⁻): a is Γ with rivals only, a + b with reasons only; and the formula
    must hold in between (one reason (8, 5) against one rival (4, 5): S⁺ = 4, S⁻ = 2)."""
    reason, rival = {"validity": 8, "credibility": 5}, {"validity": 4, "credibility": 5}
    low, high = C.weighted_score([], [rival]), C.weighted_score([reason], [])
    assert C.weighted_score([reason], [rival]) == pytest.approx(low + (high - low) * 4 / (4 + 2))
    return [low, high - low]


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
    # CRIT (Table 6.3)
    Claim("crit-reasons-and-scale", "CRIT",
          r"≤ (\d+) reasons and ≤ (\d+) rivals each with validity γ and credibility θ \((\d+)–(\d+)\)",
          lambda: [C.MAX_REASONS, C.CritReply.model_fields["rival_reasons"].metadata[0].max_length, *validity_bounds()]),
    Claim("crit-recursion", "CRIT", r"`is_claim` \(≤ (\d+) per document\)", lambda: [C.MAX_RECURSIVE]),
    Claim("crit-depth", "CRIT", r"`crit_depth` levels deep \((\d+) by default, (\d+) in the small-model profile\)",
          lambda: [defaults().crit_depth, small().crit_depth]),
    Claim("crit-gamma", "CRIT", r"Γ = (\d+) \+ (\d+)·S⁺/\(S⁺\+S⁻\), S = Σ γθ/10", gamma_formula),
    Claim("crit-neutral", "CRIT", r"`weighted` then stays ([\d.]+)", lambda: [C.weighted_score([], [])]),
]


def doc_numbers(claim: Claim) -> list[tuple[float, int]]:
    """The numbers the doc states for ``claim``, each with its count of decimals, in order."""
    text = section(claim.section)
    match = re.search(claim.pattern, text, flags=re.S)
    assert match, f"docs/protocols.md, section '{claim.section}': no sentence matches {claim.pattern!r} (claim {claim.id})"
    out = []
    for group in match.groups():
        for number in NUMBER.findall(group):
            out.append((float(number), len(number.partition(".")[2])))
    return out


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_each_number_the_doc_states_is_the_codes(claim: Claim) -> None:
    stated = doc_numbers(claim)
    computed = [float(v) for v in claim.code()]
    assert len(stated) == len(computed), f"{claim.id}: the doc states {[n for n, _ in stated]}, the code gives {computed}"
    for (number, decimals), value in zip(stated, computed):
        tolerance = claim.tolerance if claim.tolerance is not None else 0.5 * 10 ** -decimals + 1e-12
        assert math.isclose(number, value, abs_tol=tolerance), (
            f"docs/protocols.md ({claim.id}) says {number:g}, the code gives {value:.4g}: fix the doc or the code")


def test_the_metric_list_is_metric_definitions_word_for_word() -> None:
    """The doc's "metrics the app shows" list is :data:`protocols.metrics.METRIC_DEFINITIONS`."""
    listed = dict(re.findall(r"^- \*\*(\w+)\*\*: (.*)$", section("The metrics the app shows"), flags=re.M))
    assert listed == M.METRIC_DEFINITIONS
