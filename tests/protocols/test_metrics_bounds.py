"""The metrics' documented bounds, held exactly, and their formulas to the last digits.

test_metrics.py checks hand values to about six digits and the properties against scipy with a
tolerance. Floating point can carry a value past its bound by one unit in the last place —
MI above an agent's entropy, the MI signal above 1 for identical beliefs, MI below 0 for a
point mass — and the code clamps for that; here the cases where it happens, found by search,
are held to the bound with no tolerance: the stop rule and the app compare these numbers with
1 and with each other. Also: KL's smoothing formula to twelve digits, information gain in any
base, ``speaker_independence`` by hand, and ``mixture``'s refusals word for word. (Found by
mutation testing, ``benchmarks/mutation.py``: each test failed for a change to
``protocols/measures/metrics.py`` the others let through.)
"""

from __future__ import annotations

import math
import warnings

import pytest
from scipy.optimize import OptimizeResult

from protocols.measures import metrics
from protocols.measures.metrics import (
    KL_EPSILON,
    agreement_information,
    entropy,
    information_gain,
    jensen_shannon,
    kl_divergence,
    mixture,
    mutual_information,
    speaker_independence,
    wasserstein,
)

#: (P, Q, base): Q merges two of P's labels, so in arithmetic I(X;Y) = H(Q) exactly (Y is a
#: function of X under the coupling), and the floating-point sum lands one ulp above H(Q).
MERGED = [
    ([0.31, 0.36, 0.17, 0.16], [0.31, 0.36, 0.33, 0.0], 2.0),
    ([0.34, 0.2, 0.46], [0.34, 0.66, 0.0], math.e),
]


@pytest.mark.parametrize(("p", "q", "base"), MERGED)
def test_mi_never_exceeds_either_agents_entropy_in_any_base(p: list[float], q: list[float], base: float) -> None:
    for a, b in ((p, q), (q, p)):
        mi = mutual_information(a, b, base=base)
        assert mi == pytest.approx(entropy(q, base=base), rel=1e-12)
        assert mi <= entropy(q, base=base) and mi <= entropy(p, base=base)


def test_mi_below_both_entropies_is_the_couplings_own_value() -> None:
    # m = (½, ¼), TV = ¼: γ = [[½, 0], [¼, ¼]];
    # I = ½ log2(½/(½·¾)) + ¼ log2(¼/(½·¾)) + ¼ log2(¼/(½·¼)) = 0.2075187 − 0.1462406 + 0.25 = 0.3112781 bits,
    # well under min(H(P) = 1, H(Q) = 0.8112781); agents that share no label share nothing.
    assert mutual_information([0.5, 0.5], [0.75, 0.25]) == pytest.approx(0.3112781, abs=1e-7)
    assert mutual_information([0.5, 0.5, 0, 0], [0, 0, 0.25, 0.75]) == 0.0


def test_mi_with_a_point_mass_is_zero_never_below() -> None:
    """The raw sum is −1e-17 here: an agent certain of one label shares no information."""
    for base in (2.0, math.e):
        assert mutual_information([0.07, 0.93], [0.0, 1.0], base=base) == 0.0


def test_the_mi_signal_is_exactly_one_for_identical_beliefs() -> None:
    """Here I_γ / H(M) computes to 1 + 2e-16 before the clamp."""
    p = [0.42000000000000004, 0.49000000000000005, 0.09000000000000001]
    assert agreement_information(p, p) == 1.0


def test_kl_smoothing_is_the_documented_formula_to_twelve_digits() -> None:
    """p'(x) = (p(x)+ε)/(1+nε) and q'(x) = (q(x)+ε)/(1+nε), both, when q excludes what p holds."""
    p, q, eps = [0.7, 0.3, 0.0], [0.0, 0.6, 0.4], KL_EPSILON
    ps = [(x + eps) / (1 + 3 * eps) for x in p]
    qs = [(x + eps) / (1 + 3 * eps) for x in q]
    assert kl_divergence(p, q) == pytest.approx(sum(a * math.log2(a / b) for a, b in zip(ps, qs)), rel=1e-12)


def test_information_gain_is_in_the_base_asked_for() -> None:
    # ln 4 − ln 2 = ln 2 nats
    assert information_gain([0.25] * 4, [0.5, 0.5], base=math.e) == pytest.approx(math.log(2), rel=1e-12)


def test_speaker_independence_is_one_minus_jsd() -> None:
    p, q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]
    assert speaker_independence(p, q) == pytest.approx(1 - jensen_shannon(p, q), rel=1e-12)
    assert speaker_independence(p, p) == 1.0 and speaker_independence([1, 0], [0, 1]) == 0.0
    assert 0.0 < speaker_independence(p, q) < 1.0


@pytest.mark.parametrize(("dists", "weights", "message"), [
    ([[1, 0]], [1, 2], "need one weight per distribution, and at least one distribution"),
    ([], [], "need one weight per distribution, and at least one distribution"),
    ([[1, 0], [0, 1]], [1, -1], "weights must be finite and non-negative"),
    ([[1, 0], [0, 1]], [7.0, None], "weights must be finite and non-negative"),  # a missing CRIT score
])
def test_mixture_refuses_bad_weights_saying_why(dists: list, weights: list, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        mixture(dists, weights)
    assert str(refused.value) == message


def test_total_variation_of_disjoint_beliefs_is_exactly_one() -> None:
    """½Σ|P − Q| computes to 1 + 2e-16 for these; WD is in [0, 1] as documented."""
    p = [0.03, 0.13, 0.5, 0.31, 0.03, 0.0, 0.0, 0.0, 0.0, 0.0]
    q = [0.0, 0.0, 0.0, 0.0, 0.0, 0.13, 0.49, 0.08, 0.12, 0.18]
    assert wasserstein(p, q) == 1.0


@pytest.mark.parametrize(("cost", "error", "message"), [
    ([[0.0, -1.0], [1.0, 0.0]], ValueError, "cost must be a finite non-negative 2x2 matrix"),
    ([[0.0, math.inf], [1.0, 0.0]], ValueError, "cost must be a finite non-negative 2x2 matrix"),
    ([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], ValueError, "cost must be a finite non-negative 2x2 matrix"),
    ([[0.0, None], [1.0, 0.0]], ValueError, "cost must be a finite non-negative 2x2 matrix"),
    (lambda x, y: float(x != y), TypeError, "a callable cost needs label mappings, not bare vectors"),
])
def test_a_bad_ground_cost_is_refused_saying_what_it_must_be(cost: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as refused:
        wasserstein([0.5, 0.5], [0.2, 0.8], cost)  # type: ignore[arg-type]
    assert str(refused.value) == message


def test_a_label_mapping_and_a_vector_are_not_mixed() -> None:
    with pytest.raises(TypeError) as refused:
        wasserstein({"Dengue": 1.0}, [1.0])
    assert str(refused.value) == "pass two label mappings or two vectors, not one of each"


def test_the_transport_solver_is_given_only_options_it_knows() -> None:
    """scipy warns and ignores an option it does not know (a misspelt tolerance would be lost)."""
    p = [9.99990581e-01, 5.33128848e-08, 5.72893815e-08, 9.30808772e-06]
    q = [1.54657568e-07, 3.13782688e-09, 5.33264354e-04, 9.99466578e-01]
    cost = [[0.0, 0.1, 0.2, 0.5], [0.9, 0.0, 0.8, 0.05], [0.8, 0.4, 0.0, 0.5], [0.6, 0.07, 0.8, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wasserstein(p, q, cost)


def test_a_transport_problem_the_solver_cannot_solve_is_reported_with_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in solver: HiGHS does not fail on demand (that is the point of the fix), so the
    failure it would report is handed back by a fake, to check what the user is told."""
    monkeypatch.setattr(metrics.optimize, "linprog", lambda *a, **k: OptimizeResult(success=False, message="The problem is infeasible."))
    with pytest.raises(ValueError) as refused:
        wasserstein([0.5, 0.5], [0.2, 0.8], [[0.0, 1.0], [1.0, 0.0]])
    assert str(refused.value) == "optimal transport failed: The problem is infeasible."


@pytest.mark.parametrize(("p", "message"), [
    ([], "a distribution must be a non-empty 1-D vector"),
    ([[0.5, 0.5], [0.5, 0.5]], "a distribution must be a non-empty 1-D vector"),
    ([0.5, -0.1, 0.6], "probabilities must be finite and non-negative"),
    ([0.5, math.nan], "probabilities must be finite and non-negative"),
    ([0.5, None], "probabilities must be finite and non-negative"),  # a probability the parser left out
    ([0.0, 0.0], "a distribution needs positive total mass"),
])
def test_a_bad_distribution_is_refused_saying_what_is_wrong(p: list, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        entropy(p)
    assert str(refused.value) == message


@pytest.mark.parametrize(("p", "q"), [({"Dengue": 1.0}, [1.0]), ([1.0], {"Dengue": 1.0})])
def test_a_mapping_and_a_vector_are_refused_whichever_comes_first(p: object, q: object) -> None:
    with pytest.raises(TypeError) as refused:
        jensen_shannon(p, q)  # type: ignore[arg-type]
    assert str(refused.value) == "pass two label mappings or two vectors, not one of each"


def test_vectors_of_different_lengths_are_refused_with_both_lengths() -> None:
    with pytest.raises(ValueError) as refused:
        jensen_shannon([0.5, 0.5], [0.2, 0.3, 0.5])
    assert str(refused.value) == "vectors of different lengths: 2 and 3"
