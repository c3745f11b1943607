"""Information-theoretic metrics of a debate between two agents (EVINCE, chapter 7, appendix 7.A).

Every function takes two probability vectors on a common label axis (numpy arrays) *or* two
``Mapping[str, float]``, which are first put on one axis by :func:`protocols.measures.labels.align`.
Inputs are validated (finite, non-negative, positive mass) and renormalized to sum to 1, so
a truncated top-k list such as {"Dengue": 0.6, "Chikungunya": 0.3} is usable as is.

Appendix 7.A gives KL, JSD, Wasserstein, cross-entropy, MI and NMI but leaves two things open:
the ground metric of the Wasserstein distance over *categorical* labels, and the joint
distribution that MI needs when each agent only reports a marginal. Both are fixed here (see
:func:`wasserstein` and :func:`coupling`). Logarithms are base 2 (bits) unless ``base`` says
otherwise; JSD is always base 2 so that it lies in [0, 1].

The metric shown as "MI" (key ``mi``) is :func:`agreement_information`: the mutual information
under the maximal-agreement coupling divided by the entropy of the agents' average belief. It
is 1 exactly when the two agents hold the same distribution and 0 when they share no label, so
it *rises to its maximum as the agents agree* — the direction section 7.3.1.2 and Tables 7.2/7.3
read into MI. Raw MI in bits (``mi_bits``) does not: two agents that agree and both sharpen onto
one answer lose bits (their entropy), and the appendix's NMI = I/max(H) also reaches 1 for
two agents that disagree in a one-to-one way (see :func:`agreement_information`). Both are
kept in the snapshot for the record. :data:`METRIC_DEFINITIONS` holds the one-line definition
of every metric, for the app's help.

What the stop rule reads for MI. ``mi`` has a cusp at agreement: the coupling puts
the disagreeing mass TV on cells of size ~TV, whose entropy −TV·log TV has an infinite slope at
TV = 0, so half a point of wobble around agreement (0.9/0.1 against 0.895/0.105: WD 0.005, JSD
0.00005) moves ``mi`` from 1 to 0.92. No ε can then tell a settled debate from a moving one, and
such a wobble would outweigh every other signal in κ's ``Update``. The stop rule and ``Update``
therefore read MI's term as :func:`speaker_independence`, 1 − I(label; speaker): the one mutual
information the agents' statements determine without an invented joint (Z, a fair coin, picks
the agent; X is that agent's label; I(X;Z) = JSD). It is 1 exactly when the agents agree, 0
when they share no label, and smooth (quadratic) at agreement. Its change is the change in JSD,
so the figure's MI and JSD terms test one quantity: said in ``docs/protocols.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TypeAlias

from protocols.core.lazy import module

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike
    from scipy import optimize
else:
    np = module("numpy")
    optimize = module("scipy.optimize")

from protocols.measures.labels import align, align_many

__all__ = [
    "KL_EPSILON",
    "METRIC_DEFINITIONS",
    "agreement_information",
    "MetricsSnapshot",
    "speaker_independence",
    "compute_all",
    "coupling",
    "cross_entropy",
    "deltas",
    "entropy",
    "information_gain",
    "jensen_shannon",
    "kl_divergence",
    "mixture",
    "mutual_information",
    "normalized_mutual_information",
    "wasserstein",
]

Dist: TypeAlias = "ArrayLike | Mapping[str, float]"
Cost: TypeAlias = "ArrayLike | Callable[[str, str], float] | None"

KL_EPSILON = 1e-6
"""Additive smoothing for KL divergence and cross-entropy when q has zeros (see :func:`kl_divergence`)."""


def _normalized(p: ArrayLike) -> np.ndarray:
    arr = np.asarray(p, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("a distribution must be a non-empty 1-D vector")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("probabilities must be finite and non-negative")
    total = arr.sum()
    if total <= 0:
        raise ValueError("a distribution needs positive total mass")
    normalized: np.ndarray = arr / total
    return normalized


def _pair(p: Dist, q: Dist) -> tuple[np.ndarray, np.ndarray]:
    """Two normalized vectors on one axis; two mappings are aligned by label first."""
    if isinstance(p, Mapping) and isinstance(q, Mapping):
        _, p, q = align(p, q)
    elif isinstance(p, Mapping) or isinstance(q, Mapping):
        raise TypeError("pass two label mappings or two vectors, not one of each")
    a, b = _normalized(p), _normalized(q)
    if a.shape != b.shape:
        raise ValueError(f"vectors of different lengths: {a.size} and {b.size}")
    return a, b


def _log(x: np.ndarray, base: float) -> np.ndarray:
    logs: np.ndarray = np.log(x) / np.log(base)
    return logs


def entropy(p: Dist, base: float = 2.0) -> float:
    """Shannon entropy H(P) = −Σ p(x) log p(x), with 0·log 0 = 0.

    EVINCE reads entropy as an agent's openness: the explorer keeps it high, the confirmer
    low (Entropy Duality Theorem, section 7.3.1.3).
    """
    arr = _normalized(align_many([p])[1][0] if isinstance(p, Mapping) else p)
    nz = arr[arr > 0]
    return float(max(0.0, -np.sum(nz * _log(nz, base))))


def _smoothed(p: np.ndarray, q: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Apply additive smoothing to both vectors only when q(x)=0 where p(x)>0."""
    if np.any((q == 0) & (p > 0)):
        p, q = (p + eps) / (1 + eps * p.size), (q + eps) / (1 + eps * q.size)
    return p, q


def kl_divergence(p: Dist, q: Dist, base: float = 2.0, eps: float = KL_EPSILON) -> float:
    """Kullback–Leibler divergence D_KL(P‖Q) = Σ p(x) log(p(x)/q(x)) (appendix 7.A.1).

    Top-k answers routinely give 0 to a label the other agent names, which makes D_KL
    infinite. Only in that case both vectors get additive smoothing,
    p'(x) = (p(x)+ε)/(1+nε) and q'(x) = (q(x)+ε)/(1+nε) with ε = ``eps`` = 1e-6, before the
    sum; otherwise the value is exact. A label that P holds and Q excludes then costs about
    p(x)·log(p(x)/ε), i.e. ~20 bits per unit of mass: KL is dominated by ε on disjoint
    supports, which is why the paper prefers JSD in practice (section 7.4.4, appendix 7.B.3).
    D_KL(P‖P) = 0 exactly.
    """
    a, b = _smoothed(*_pair(p, q), eps)
    mask = a > 0
    return float(max(0.0, np.sum(a[mask] * _log(a[mask] / b[mask], base))))


def cross_entropy(p: Dist, q: Dist, base: float = 2.0, eps: float = KL_EPSILON) -> float:
    """Cross-entropy H(P, Q) = −Σ p(x) log q(x) (appendix 7.A.1), smoothed as :func:`kl_divergence`.

    With the same smoothing, H(P, Q) = H(P') + D_KL(P'‖Q') holds exactly.
    """
    a, b = _smoothed(*_pair(p, q), eps)
    mask = a > 0
    return float(-np.sum(a[mask] * _log(b[mask], base)))


def jensen_shannon(p: Dist, q: Dist) -> float:
    """Jensen–Shannon divergence in bits (appendix 7.A.1), in [0, 1].

    JSD(P‖Q) = ½ D_KL(P‖M) + ½ D_KL(Q‖M), M = ½(P+Q), computed as H(M) − ½H(P) − ½H(Q).
    It is symmetric and finite on disjoint supports: 1 bit means no label in common.
    """
    a, b = _pair(p, q)
    jsd = entropy((a + b) / 2) - (entropy(a) + entropy(b)) / 2
    return float(min(1.0, max(0.0, jsd)))


def _cost_matrix(cost: Cost, labels: list[str] | None, n: int) -> np.ndarray:
    if callable(cost):
        if labels is None:
            raise TypeError("a callable cost needs label mappings, not bare vectors")
        return np.array([[float(cost(x, y)) for y in labels] for x in labels])
    matrix = np.asarray(cost, dtype=float)
    if matrix.shape != (n, n) or not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ValueError(f"cost must be a finite non-negative {n}x{n} matrix")
    return matrix


def wasserstein(p: Dist, q: Dist, cost: Cost = None) -> float:
    """Wasserstein-1 (earth mover's) distance W(P,Q) = inf_γ Σ d(x,y) γ(x,y) (appendix 7.A.1).

    Diagnoses are categorical, with no order on the axis, so the default ground metric is the
    discrete metric d(x,y) = [x≠y]. Under it the optimal plan keeps min(p,q) in place and
    W₁ equals the total variation distance TV(P,Q) = ½ Σ|p(x) − q(x)|, in [0, 1].

    ``cost`` gives another ground metric (e.g. semantic distances between diagnoses): a
    matrix on the aligned axis (for mappings, the order of :func:`align`), or for mappings a
    function ``cost(label_a, label_b)``. The transport problem is then solved exactly as the
    linear program min Σ C_xy γ_xy subject to Σ_y γ_xy = p_x, Σ_x γ_xy = q_y, γ ≥ 0
    (:func:`scipy.optimize.linprog`, HiGHS), less one redundant column constraint.
    """
    labels = None
    if isinstance(p, Mapping) and isinstance(q, Mapping):
        labels, p, q = align(p, q)
    a, b = _pair(p, q)
    if cost is None:
        return float(min(1.0, 0.5 * np.abs(a - b).sum()))
    n = a.size
    c = _cost_matrix(cost, labels, n)
    rows = np.kron(np.eye(n), np.ones(n))  # Σ_y γ[x, y] = p[x]
    cols = np.kron(np.ones(n), np.eye(n))  # Σ_x γ[x, y] = q[y]
    # The 2n marginal constraints have rank 2n − 1 (rows and columns both sum to 1), and in
    # floating point Σp and Σq differ in the last bits: kept together, they made HiGHS call
    # about 0.1 % of near-degenerate pairs "infeasible". One column constraint is implied by
    # the rest, so it is dropped: the one with the most mass, whose implied value
    # 1 − Σ_{y≠k} q_y then stays safely non-negative. Tight tolerances keep masses of 1e-8
    # (HiGHS's default tolerance is 1e-7) from being moved for free.
    keep = np.arange(n) != int(np.argmax(b))
    result = optimize.linprog(
        c.ravel(), A_eq=np.vstack([rows, cols[keep]]), b_eq=np.concatenate([a, b[keep]]), bounds=(0, None),
        method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if not result.success:
        raise ValueError(f"optimal transport failed: {result.message}")
    return float(max(0.0, result.fun))


def coupling(p: Dist, q: Dist) -> np.ndarray:
    """The maximal-agreement joint distribution γ of two agents' marginals P and Q.

    MI (appendix 7.A.1) needs a joint p(x, y), but each agent reports only its own marginal.
    We use the optimal transport plan under the discrete metric: with m = min(p, q) and
    TV = ½Σ|p − q|,

        γ(x, x) = m(x),    γ(x, y) = (p(x) − m(x))·(q(y) − m(y)) / TV  for x ≠ y,

    and γ = diag(p) when TV = 0. The agents agree as often as their marginals allow, and the
    disagreeing mass is paired independently. Rows sum to p, columns to q. (p − m and q − m
    have disjoint supports, so the product term is zero on the diagonal.)
    """
    a, b = _pair(p, q)
    m = np.minimum(a, b)
    gamma = np.diag(m)
    tv = 0.5 * np.abs(a - b).sum()
    if tv > 0:
        gamma = gamma + np.outer(a - m, b - m) / tv
    return gamma


def mutual_information(p: Dist, q: Dist, base: float = 2.0) -> float:
    """I(X;Y) = Σ γ(x,y) log(γ(x,y) / (p(x) q(y))) under :func:`coupling` (appendix 7.A.1).

    P = Q gives I = H(P); fully disjoint beliefs give 0. MI rises as the agents converge,
    the direction of Tables 7.2 and 7.3. Always 0 ≤ I ≤ min(H(P), H(Q)).
    """
    a, b = _pair(p, q)
    gamma = coupling(a, b)
    mask = gamma > 0
    ratio = gamma[mask] / np.outer(a, b)[mask]
    mi = float(np.sum(gamma[mask] * _log(ratio, base)))
    return min(max(0.0, mi), entropy(a, base), entropy(b, base))


def normalized_mutual_information(p: Dist, q: Dist) -> float:
    """NMI = I(X;Y) / max(H(X), H(Y)) (appendix 7.A.1), in [0, 1].

    When both entropies are 0 (two point masses) the ratio is 0/0; we return 1.0 when the
    point masses coincide (full agreement) and 0.0 otherwise.
    """
    a, b = _pair(p, q)
    h = max(entropy(a), entropy(b))
    if h == 0:
        return 1.0 if np.array_equal(a, b) else 0.0
    return float(min(1.0, mutual_information(a, b) / h))


def agreement_information(p: Dist, q: Dist) -> float:
    """The EVINCE "MI" signal: I_γ(X;Y) / H(M), M = ½(P+Q), in [0, 1] (fills in appendix 7.A.1).

    I_γ is :func:`mutual_information` under the maximal-agreement :func:`coupling`. Because
    I_γ ≤ min(H(P), H(Q)) ≤ ½H(P) + ½H(Q) ≤ H(M), the ratio is at most 1, with equality only
    when H(P) = H(Q) = H(M), i.e. JSD = 0, i.e. P = Q: it reaches its maximum exactly when the
    agents agree, and is 0 when their supports are disjoint (the coupling is then independent).
    Why not the appendix's NMI = I/max(H(X), H(Y)): P = (½, ½, 0) and Q = (½, 0, ½) disagree on
    half their mass, yet the coupling pairs label 2 with label 3 one-to-one and NMI = 1 (ours:
    0.667). Why not raw I in bits: it equals H(P) when P = Q, so it *falls* as two agreeing
    agents sharpen. Two identical point masses (H(M) = 0) give 1.
    """
    a, b = _pair(p, q)
    h = entropy((a + b) / 2)
    if h == 0:
        return 1.0  # M is a point mass only when P = Q = that point mass
    return float(min(1.0, max(0.0, mutual_information(a, b) / h)))


def speaker_independence(p: Dist, q: Dist) -> float:
    """1 − I(X;Z) in [0, 1]: what the stop rule and κ's ``Update`` read for Figure 7.1's MI term.

    Z is a fair coin choosing agent A or B and X the label that agent states, so
    I(X;Z) = H(M) − ½H(P) − ½H(Q) = JSD(P‖Q) in bits: how much the label gives away about who
    said it. 1 − I(X;Z) is 1 exactly when P = Q and 0 when the supports are disjoint, like
    :func:`agreement_information`, but it is quadratic at agreement instead of having a cusp
    there, so a sub-point wobble between settled agents changes it by far less than ε = 0.01
    (0.6/0.32/0.08 against 0.6/0.3/0.1: 0.001; ``mi``: 0.07). Unlike the coupling MI it needs
    no joint of the agents' labels, which neither agent states.
    """
    return 1.0 - jensen_shannon(p, q)


def information_gain(before: Dist, after: Dist, base: float = 2.0) -> float:
    """Entropy reduction H(before) − H(after): how much an agent's belief sharpened in a round.

    Positive when the agent became more certain (exploitation, section 7.3.1); negative when
    it opened up (exploration).
    """
    return entropy(before, base) - entropy(after, base)


def mixture(dists: Sequence[Dist], weights: Sequence[float]) -> np.ndarray | dict[str, float]:
    """Reliability-weighted convex mixture Σ w_i P_i / Σ w_i.

    This is EVINCE's final prediction P_f = (Γ_A P_A + Γ_B P_B)/(Γ_A + Γ_B), weighted by the
    agents' CRIT scores Γ (Figure 7.1, step 3; appendix 7.B shows why a convex mixture helps).
    Mappings are aligned by label and a dict is returned; vectors give a vector. Weights must
    be finite and non-negative; if all are 0 (the formula is 0/0, e.g. both CRIT scores 0)
    the mixture falls back to equal weights.
    """
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(dists),) or not dists:
        raise ValueError("need one weight per distribution, and at least one distribution")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    w = w / w.sum() if w.sum() > 0 else np.full(len(dists), 1 / len(dists))
    if all(isinstance(d, Mapping) for d in dists):
        labels, matrix = align_many(dists)  # type: ignore[arg-type]  # all Mappings: checked just above
        rows = np.array([_normalized(r) for r in matrix])
        return dict(zip(labels, (w @ rows).tolist()))
    rows = np.array([_normalized(d) for d in dists])  # type: ignore[arg-type]  # not all Mappings: probability vectors
    mixed: np.ndarray = w @ rows
    normalized: np.ndarray = mixed / mixed.sum()
    return normalized


@dataclass(frozen=True)
class MetricsSnapshot:
    """All metrics of one round, between agent A's and agent B's distributions.

    ``wd`` is the default (total variation) Wasserstein distance; ``mi`` is the agreement
    signal of :func:`agreement_information` in [0, 1] (what the app plots as MI); ``mi_bits``
    is raw MI in bits; ``nmi`` is the appendix's I/max(H); ``kl_ab`` is D_KL(P_A‖P_B);
    ``cross_entropy_ab`` is H(P_A, P_B). :data:`METRIC_DEFINITIONS` defines each in one line.
    """

    jsd: float
    wd: float
    mi: float
    mi_bits: float
    nmi: float
    kl_ab: float
    kl_ba: float
    cross_entropy_ab: float
    entropy_a: float
    entropy_b: float


def compute_all(p_a: Mapping[str, float], p_b: Mapping[str, float]) -> MetricsSnapshot:
    """Every metric EVINCE tracks per round (Figure 7.1, "Calculate new metrics")."""
    _, a, b = align(p_a, p_b)
    a, b = _normalized(a), _normalized(b)
    return MetricsSnapshot(
        jsd=jensen_shannon(a, b),
        wd=wasserstein(a, b),
        mi=agreement_information(a, b),
        mi_bits=mutual_information(a, b),
        nmi=normalized_mutual_information(a, b),
        kl_ab=kl_divergence(a, b),
        kl_ba=kl_divergence(b, a),
        cross_entropy_ab=cross_entropy(a, b),
        entropy_a=entropy(a),
        entropy_b=entropy(b),
    )


METRIC_DEFINITIONS: dict[str, str] = {
    "wd": "WD: Wasserstein-1 distance under the discrete ground metric (labels have no ground metric), "
          "i.e. total variation ½Σ|P_A−P_B| in [0, 1]; compare its % change, not its scale, with Table 7.2",
    "mi": "MI: mutual information of the agents' labels under the maximal-agreement coupling over the entropy "
          "of their mean belief; 1 only when the agents agree, 0 with no label shared; steep at agreement, "
          "so stopping and κ read 1 − JSD",
    "mi_bits": "MI in bits under the maximal-agreement coupling (falls as two agreeing agents sharpen)",
    "nmi": "NMI: appendix 7.A's I(X;Y)/max(H(X), H(Y)) under the maximal-agreement coupling",
    "jsd": "JSD: Jensen–Shannon divergence between the agents' distributions, in bits, 0 (same) to 1 (no label in common)",
    "kl_ab": "KL(A‖B): Kullback–Leibler divergence of agent A's distribution from B's, in bits (smoothed on zeros)",
    "kl_ba": "KL(B‖A): Kullback–Leibler divergence of agent B's distribution from A's, in bits (smoothed on zeros)",
    "cross_entropy_ab": "CE(A,B): cross-entropy −Σ P_A log P_B in bits (smoothed on zeros)",
    "entropy_a": "H(A): Shannon entropy of agent A's distribution in bits (its openness)",
    "entropy_b": "H(B): Shannon entropy of agent B's distribution in bits (its openness)",
    "entropy_mixture": "H(P_f): entropy of the CRIT-weighted consensus P_f in bits",
    "info_gain": "information gain: the fall of H(P_f) since the previous scored round, in bits",
    "crit": "CRIT: mean of the two agents' CRIT scores Γ/10 this round (Table 6.3), 0.1 to 1",
    "crit_a": "CRIT A: agent A's CRIT score Γ/10 this round",
    "crit_b": "CRIT B: agent B's CRIT score Γ/10 this round",
    "kappa": "κ: contentiousness of the round, 0 (agree) to 1 (devil's advocate), Table 6.1",
}
"""One line per metric key, for the app's help and the printed tables."""


def deltas(prev: MetricsSnapshot, cur: MetricsSnapshot) -> dict[str, float]:
    """Per-metric change ``cur − prev`` (raw sign: a falling JSD gives a negative value).

    Note that Figure 7.1 flips WD and JSD (ΔWd = Wd(t−1) − Wd(t)); that convention lives in
    :class:`protocols.measures.contentiousness.RoundSignals`.
    """
    before, after = asdict(prev), asdict(cur)
    return {name: after[name] - before[name] for name in before}
