"""Contentiousness: how hard an agent argues, as prompt text and as a per-round schedule.

SocraSynth calls it Δ (chapter 6, Table 6.2), EVINCE κ (chapter 7, Figure 7.1): a number in
[0, 1] where 1 is a devil's advocate and 0 complete agreement (appendix 6.B). It reaches a
model only as words, so :func:`instruction` renders a level as a short prompt following the
tone/emphasis/language rows of Table 6.1. How the level changes from round to round is a
:class:`Schedule`, chosen per debate by name with :func:`make_schedule`; the names cover the
arms of the section 7.4.5 ablation plus SocraSynth's division rule and Figure 7.1's adaptive
``Update``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from protocols.measures.metrics import MetricsSnapshot

__all__ = [
    "SCHEDULES",
    "Adaptive",
    "Exponential",
    "LEVELS",
    "Fixed",
    "Linear",
    "NoModulation",
    "RoundSignals",
    "Schedule",
    "SocraSynth",
    "instruction",
    "make_schedule",
    "nearest_level",
]

# Table 6.1, rewritten in a domain-neutral voice (the table's examples come from a debate on
# regulating AI, ours are diagnoses and cases) and kept short for a 135M-parameter model.
_TABLE_6_1: dict[float, str] = {
    0.9: "Be confrontational: raise strong objections, stress risks, flaws and overlooked "
    "alternatives, and concede nothing without proof. Use definitive words such as "
    "'unacceptable' or 'this does not hold'.",
    0.7: "Stay critical but admit real merits, still outweighed by the problems. Warn about "
    "weaknesses and open questions. Say things like 'serious concerns remain' or "
    "'needs more scrutiny'.",
    0.5: "Be balanced: give equal weight to strengths and weaknesses and look for middle "
    "ground. Use neutral words such as 'should be carefully considered' or 'both "
    "benefits and risks'.",
    0.3: "Be mostly agreeable, with reservations: support the strongest points while making "
    "sure nothing important is overlooked. Be positive but careful, e.g. 'promising, "
    "provided that'.",
    0.0: "Agree and be supportive: build on the other side's points and stress their "
    "strengths. Use plainly positive words such as 'convincing' or 'a strong case'.",
}
LEVELS: tuple[float, ...] = tuple(sorted(_TABLE_6_1, reverse=True))


def _check_level(kappa: float, what: str = "contentiousness") -> float:
    if not 0.0 <= kappa <= 1.0:  # also rejects NaN
        raise ValueError(f"{what} must be in [0, 1], got {kappa!r}")
    return float(kappa)


def nearest_level(kappa: float) -> float:
    """The Table 6.1 row (0.9, 0.7, 0.5, 0.3 or 0.0) closest to ``kappa``.

    Levels between rows take the nearest row; an exact midpoint (0.8, 0.6, 0.4, 0.15) goes
    to the more contentious row. 0.95 and 1.0 use the 0.9 row.
    """
    kappa = _check_level(kappa)
    return min(LEVELS, key=lambda level: (round(abs(kappa - level), 9), -level))


def instruction(kappa: float, *, stance: str | None = None) -> str:
    """Prompt text that sets an agent's contentiousness to ``kappa`` (at most ~60 words).

    It states the numeric level with appendix 6.B's framing (0 = complete agreement, 1 = a
    devil's advocate), then the tone, emphasis and language of the nearest Table 6.1 row.
    ``stance`` (e.g. "the diagnosis is Dengue") is put first when given.
    """
    row = _TABLE_6_1[nearest_level(kappa)]
    text = (
        f"Your contentiousness is {round(kappa, 2):g} on a scale from 0 (complete agreement) "
        f"to 1 (devil's advocate). {row}"
    )
    return f"Your position: {stance.strip()}. {text}" if stance and stance.strip() else text


@dataclass(frozen=True)
class RoundSignals:
    """Round-to-round metric changes fed to Figure 7.1's ``Update(κ, ΔWD, ΔMI, ΔJSD, ΔCRIT)``.

    Signs follow Figure 7.1, so every field is *positive when the agents converge*:
    ``d_wd = WD(t−1) − WD(t)``, ``d_jsd = JSD(t−1) − JSD(t)``, ``d_mi = MI(t) − MI(t−1)``,
    ``d_crit = CRIT(t) − CRIT(t−1)``. (:func:`protocols.measures.metrics.deltas` is plain ``cur − prev``.)
    MI here is :func:`protocols.measures.metrics.speaker_independence` (1 − JSD), not the displayed
    ``mi``, whose cusp at agreement would let half a point of wobble outweigh every other
    signal; so ``d_mi`` equals ``d_jsd`` and JSD carries the weights of both.
    """

    d_wd: float = 0.0
    d_mi: float = 0.0
    d_jsd: float = 0.0
    d_crit: float = 0.0

    @classmethod
    def from_snapshots(
        cls,
        prev: MetricsSnapshot,
        cur: MetricsSnapshot,
        crit_prev: float | None = None,
        crit_cur: float | None = None,
    ) -> RoundSignals:
        """Signals from two rounds' metrics: WD is total variation, JSD is in bits, MI is
        1 − JSD (see the class docstring) and CRIT is Γ/10, so all four changes are on [0, 1]
        scales and positive when the agents converge."""
        d_crit = crit_cur - crit_prev if crit_prev is not None and crit_cur is not None else 0.0
        d_jsd = prev.jsd - cur.jsd
        return cls(d_wd=prev.wd - cur.wd, d_mi=d_jsd, d_jsd=d_jsd, d_crit=d_crit)


class Schedule(ABC):
    """Contentiousness per round. Round 0 is the opening round (Figure 7.1 step 1, Table 6.2 #2)."""

    name: ClassVar[str]

    @abstractmethod
    def value(self, round_index: int, signals: RoundSignals | None = None) -> float | None:
        """κ for round ``round_index`` in [floor, 1], or ``None`` for "no instruction"."""


def _check_round(round_index: int) -> None:
    if round_index < 0:
        raise ValueError(f"round_index must be >= 0, got {round_index}")


@dataclass(frozen=True)
class _Levelled(Schedule):
    """A numeric schedule: starting level κ0 and a floor; values are clamped to [floor, 1]."""

    kappa0: float = 0.9
    floor: float = 0.0

    def __post_init__(self) -> None:
        _check_level(self.kappa0, "kappa0")
        _check_level(self.floor, "floor")
        if self.floor > self.kappa0:
            raise ValueError(f"floor {self.floor} is above the starting level kappa0 {self.kappa0}")

    def _clamp(self, kappa: float) -> float:
        return min(1.0, max(self.floor, kappa))


@dataclass(frozen=True)
class _Decaying(_Levelled):
    """A schedule with a cooling rate λ = ``rate`` >= 0."""

    rate: float = 0.2

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.rate >= 0:
            raise ValueError(f"rate must be >= 0, got {self.rate!r}")


@dataclass(frozen=True)
class Fixed(_Levelled):
    """Constant κ: the "fixed high contentiousness (90%, no decay)" arm of section 7.4.5."""

    name: ClassVar[str] = "fixed"

    def value(self, round_index: int, signals: RoundSignals | None = None) -> float:
        _check_round(round_index)
        return self._clamp(self.kappa0)


@dataclass(frozen=True)
class Linear(_Decaying):
    """κ_t = κ0 − λt (section 7.4.5). λ = ``rate`` = 0.2 reproduces the 0.9, 0.7, 0.5 of Tables
    7.2 and 7.3 for rounds 0–2 (the tables' "Round 1" is the opening exchange, appendices
    7.D/7.E: the opening and two refutation rounds), and reaches at round 3 the 0.3 of Table 7.3's
    final row, appendix 7.E.5's joint final assessment."""

    name: ClassVar[str] = "linear"

    def value(self, round_index: int, signals: RoundSignals | None = None) -> float:
        _check_round(round_index)
        return self._clamp(self.kappa0 - self.rate * round_index)


@dataclass(frozen=True)
class Exponential(_Decaying):
    """κ_t = κ0·e^{−λt}, the decay EDT suggests and the best arm of section 7.4.5 (λ = ``rate``).

    λ = 0.55 by default (≈ ln 3 / 2): 0.9, 0.52, 0.30, 0.17, 0.10 for rounds 0–4. Section 7.4.5
    gives no λ (Figure 7.4 shows accuracies only); 0.55 makes exponential the cooler of the two
    arms at every refutation round through round 4 (with the linear arm's λ = 0.2 it would be
    the warmer, 0.74 against 0.70 after one round) and brings it to 0.3 by round 2, a round
    before :class:`Linear`. It has no transition round (round 1 is already 0.52, below 0.6), and
    no λ has both (κ_1 ≥ 0.6 needs λ ≤ ln 1.5 ≈ 0.405, 0.3 by round 2 λ ≥ ln 3 / 2 ≈ 0.549).
    7.4.5's "three vs. four rounds" is rounds to convergence, an outcome the diagnosis
    benchmark measures per schedule, not the round at which κ reaches 0.3; docs/protocols.md.
    """

    name: ClassVar[str] = "exponential"
    rate: float = 0.55

    def value(self, round_index: int, signals: RoundSignals | None = None) -> float:
        _check_round(round_index)
        return self._clamp(self.kappa0 * math.exp(-self.rate * round_index))


@dataclass(frozen=True)
class SocraSynth(_Levelled):
    """Δ_t = Δ0 / δ^t with Δ0 = 0.9, δ = 1.2 (Table 6.2): 0.9, 0.75, 0.625, 0.5208, …

    Table 6.2 runs refutation rounds while ``(Δ ← Δ/δ) > 10%``, i.e. rounds t = 1 … 12 for
    the defaults, then the closing statements.
    """

    name: ClassVar[str] = "socrasynth"
    delta: float = 1.2

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.delta >= 1:
            raise ValueError(f"delta must be >= 1 (Table 6.2), got {self.delta!r}")

    def value(self, round_index: int, signals: RoundSignals | None = None) -> float:
        _check_round(round_index)
        return self._clamp(self.kappa0 / self.delta**round_index)


@dataclass(frozen=True)
class NoModulation(Schedule):
    """No contentiousness instruction at all: the "MoE without modulation" arm of section 7.4.5.

    :meth:`value` returns ``None``, which protocols read as "send no contentiousness text"
    (and the journal stores as NULL), rather than a number that would still be rendered.
    """

    name: ClassVar[str] = "none"

    def value(self, round_index: int, signals: RoundSignals | None = None) -> None:
        _check_round(round_index)
        return None


@dataclass(frozen=True)
class Adaptive(_Decaying):
    """Figure 7.1's ``κ ← Update(κ, ΔWD, ΔMI, ΔJSD, ΔCRIT)``, EVINCE's default schedule.

    Section 7.3.2 (4) and 7.3.1.2 say only that Update "adjusts contentiousness κ using WD,
    JSD, MI and CRIT, gradually cooling the debate as a consensus forms" ("once WD and JSD fall
    and MI rises, the system lowers contentiousness"); the paper gives no formula, so this one
    fills it in:

        s       = tanh( (w_wd·c(ΔWD) + w_mi·c(ΔMI) + w_jsd·c(ΔJSD) + w_crit·c(ΔCRIT)) / (W·σ) )
        κ_{t+1} = clamp( κ_t · exp(−λ·(1 + g·s)),  floor, κ0 )

    with c = clip to [−1, 1], W = w_wd + w_mi + w_jsd + w_crit, and :class:`RoundSignals` signs
    (positive = converging). Parameters (all journalled with the debate): λ = ``rate`` = 0.1,
    g = ``gain`` = 2, σ = ``sensitivity`` = 0.05 (a weighted mean improvement of 0.05 per
    metric already counts as a clear signal), weights ``w_wd`` = ``w_mi`` = ``w_jsd`` =
    ``w_crit`` = 1. s ∈ (−1, 1) is the round's convergence evidence. Clear convergence
    (s → 1) cools by e^{−3λ} = 0.74 a round, i.e. 0.9, 0.67, 0.49, 0.37 — the 0.9, 0.7, 0.5, 0.3
    of Tables 7.2 and 7.3; settled rounds (no change, s = 0) cool gently (e^{−λ} = 0.90, like
    :class:`Exponential` at λ = 0.1); at s = −½ κ holds, and clear divergence reheats by at
    most e^{λ} (+11 %) a round, never above κ0. Each step changes log κ by at most λ(1+g).

    No signal, no update: a round asked for without signals (``None``: fewer than two rounds
    of metrics yet, or a round in which an agent gave no prediction) keeps the previous κ.
    Figure 7.1 runs its first loop round at κ0 = 0.9 and calls ``Update`` only after that
    round's metrics exist, so an EVINCE debate under clear convergence is argued at 0.9 (the
    opening round), 0.9, 0.67, 0.49, 0.37 (κ does not cool before any metric exists).
    The paper's appendices 7.D/7.E argue the first refutation round at 0.7 instead (their
    "Round 2"); the paper disagrees with itself there, and this follows the algorithm.

    Stateful (the frozen dataclass holds a memo of decided rounds; use one instance per
    debate): rounds are decided in order and remembered, so asking again for a past round
    returns the same value. A round asked for without its predecessors counts the skipped
    rounds as without signal (κ holds).
    """

    name: ClassVar[str] = "adaptive"
    rate: float = 0.1
    gain: float = 2.0
    sensitivity: float = 0.05
    w_wd: float = 1.0
    w_mi: float = 1.0
    w_jsd: float = 1.0
    w_crit: float = 1.0
    _history: list[float] = field(default_factory=list, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (self.gain >= 0 and self.sensitivity > 0):
            raise ValueError("gain must be >= 0 and sensitivity > 0")
        weights = (self.w_wd, self.w_mi, self.w_jsd, self.w_crit)
        if not all(w >= 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(f"the weights w_wd, w_mi, w_jsd, w_crit must be >= 0 and not all 0, got {weights}")
        self._history.append(self._clamp(self.kappa0))

    def convergence(self, signals: RoundSignals | None) -> float:
        """The convergence evidence s ∈ (−1, 1) of one round's signals (0 when absent or not finite)."""
        if signals is None:
            return 0.0
        terms = (signals.d_wd, signals.d_mi, signals.d_jsd, signals.d_crit)
        if not all(math.isfinite(t) for t in terms):
            return 0.0
        weights = (self.w_wd, self.w_mi, self.w_jsd, self.w_crit)
        mean = sum(w * min(1.0, max(-1.0, t)) for w, t in zip(weights, terms)) / sum(weights)
        return math.tanh(mean / self.sensitivity)

    def value(self, round_index: int, signals: RoundSignals | None = None) -> float:
        _check_round(round_index)
        while len(self._history) <= round_index:
            latest = signals if len(self._history) == round_index else None
            if latest is None:  # nothing to update on: κ holds
                self._history.append(self._history[-1])
                continue
            step = self.rate * (1 + self.gain * self.convergence(latest))
            kappa = self._history[-1] * math.exp(-step)
            self._history.append(min(self.kappa0, self._clamp(kappa)))
        return self._history[round_index]


SCHEDULES: dict[str, type[Schedule]] = {
    cls.name: cls for cls in (Fixed, Linear, Exponential, SocraSynth, NoModulation, Adaptive)
}


def make_schedule(name: str, **params: Any) -> Schedule:
    """The schedule called ``name`` (see :data:`SCHEDULES`), built with ``params``."""
    cls = SCHEDULES.get(name.strip().lower())
    if cls is None:
        raise ValueError(f"unknown contentiousness schedule {name!r}; valid: {', '.join(SCHEDULES)}")
    accepted = {f.name for f in fields(cls) if f.init}  # type: ignore[arg-type]  # every schedule class is a dataclass
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ValueError(
            f"schedule {cls.name!r} has no parameter(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(accepted)) or 'none'}"
        )
    return cls(**params)
