"""Tests of protocols.measures.metrics (EVINCE appendix 7.A) and of label alignment (protocols.measures.labels.align)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy as scipy_entropy
from scipy.stats import wasserstein_distance

from protocols.measures.labels import align, align_many
from protocols.measures.metrics import (
    KL_EPSILON,
    MetricsSnapshot,
    compute_all,
    coupling,
    cross_entropy,
    deltas,
    entropy,
    information_gain,
    jensen_shannon,
    kl_divergence,
    mixture,
    mutual_information,
    normalized_mutual_information,
    wasserstein,
)

PROPERTY = settings(max_examples=60, deadline=None)


@st.composite
def dist_pairs(draw: st.DrawFn, max_size: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Two probability vectors of one length, with exact zeros mixed in (top-k answers)."""
    n = draw(st.integers(1, max_size))
    cell = st.one_of(st.just(0.0), st.floats(1e-4, 1.0))
    vectors = []
    for _ in range(2):
        v = np.array(draw(st.lists(cell, min_size=n, max_size=n)))
        if v.sum() == 0:
            v[draw(st.integers(0, n - 1))] = 1.0
        vectors.append(v / v.sum())
    return vectors[0], vectors[1]


# --- alignment -----------------------------------------------------------------------------


def test_align_unions_merges_and_sorts_by_normalized_name() -> None:
    labels, p, q = align({"Malaria": 0.5, " dengue ": 0.2, "Dengue": 0.3}, {"Typhoid": 0.4, "DENGUE": 0.6})
    # keys: dengue, malaria, typhoid (sorted); " dengue " and "Dengue" merge: 0.2 + 0.3
    assert labels == ["dengue", "Malaria", "Typhoid"]  # first spelling met, tidied
    np.testing.assert_allclose(p, [0.5, 0.5, 0.0])
    np.testing.assert_allclose(q, [0.6, 0.0, 0.4])


def test_align_is_independent_of_dict_order() -> None:
    a = {"B": 0.2, "A": 0.8}
    b = {"C": 1.0}
    assert align(a, b)[0] == align(dict(reversed(list(a.items()))), b)[0] == ["A", "B", "C"]


def test_align_many_shape() -> None:
    labels, matrix = align_many([{"x": 1.0}, {"y": 1.0}, {"x": 0.5, "z": 0.5}])
    assert labels == ["x", "y", "z"]
    assert matrix.shape == (3, 3)


# --- hand-computed values ------------------------------------------------------------------


def test_entropy_hand_values() -> None:
    # −(½ log2 ½ + ¼ log2 ¼ + ¼ log2 ¼) = ½·1 + ¼·2 + ¼·2 = 1.5 bits
    assert entropy([0.5, 0.25, 0.25]) == pytest.approx(1.5)
    # a fair coin: 1 bit = ln 2 nats
    assert entropy([0.5, 0.5], base=math.e) == pytest.approx(math.log(2))
    assert entropy([1.0, 0.0]) == 0.0
    # unnormalized input is renormalized: [2, 2] -> [½, ½]
    assert entropy([2, 2]) == pytest.approx(1.0)
    assert entropy({"Dengue": 0.5, "dengue": 0.5}) == 0.0  # one label after normalization


def test_cross_entropy_and_kl_hand_values() -> None:
    p, q = [0.5, 0.5], [0.25, 0.75]
    # H(P,Q) = −(½ log2 ¼ + ½ log2 ¾) = 1 + ½·0.4150375 = 1.2075187
    assert cross_entropy(p, q) == pytest.approx(1.2075187, abs=1e-7)
    # KL = ½ log2(½/¼) + ½ log2(½/¾) = ½ − ½·0.5849625 = 0.2075187 = H(P,Q) − H(P)
    assert kl_divergence(p, q) == pytest.approx(0.2075187, abs=1e-7)
    assert kl_divergence(p, q) == pytest.approx(cross_entropy(p, q) - entropy(p))


def test_kl_smoothing_on_zeros() -> None:
    p, q = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    eps = KL_EPSILON
    p_s, q_s = (p + eps) / (1 + 2 * eps), (q + eps) / (1 + 2 * eps)
    assert kl_divergence(p, q) == pytest.approx(scipy_entropy(p_s, q_s, base=2))
    # ≈ log2(1/ε) ≈ 19.93 bits for one unit of mass on a label the other excludes
    assert kl_divergence(p, q) == pytest.approx(math.log2(1 / eps), rel=1e-3)
    # a zero in P alone needs no smoothing: ½ log2(½/¼) + ½ log2(½/½) + 0 = ½·1 + ½·0 = 0.5
    assert kl_divergence([0.5, 0.5, 0.0], [0.25, 0.5, 0.25]) == pytest.approx(0.5)


def test_jsd_hand_values() -> None:
    assert jensen_shannon([1, 0], [0, 1]) == pytest.approx(1.0)  # disjoint: 1 bit
    # M = [¾, ¼]; H(M) = 0.8112781; JSD = H(M) − (H(P) + H(Q))/2 = 0.8112781 − (1 + 0)/2
    assert jensen_shannon([0.5, 0.5], [1, 0]) == pytest.approx(0.3112781, abs=1e-7)


def test_wasserstein_default_is_total_variation() -> None:
    # ½(|0.5−0.2| + |0.3−0.3| + |0.2−0.5|) = ½(0.3 + 0 + 0.3) = 0.3
    assert wasserstein([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]) == pytest.approx(0.3)
    assert wasserstein({"a": 1.0}, {"b": 1.0}) == pytest.approx(1.0)


def test_wasserstein_lp_hand_value_and_callable_cost() -> None:
    cost = np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
    # 0.3 of mass must move from position 0 to position 2 at cost 2: 0.6
    assert wasserstein([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], cost=cost) == pytest.approx(0.6)
    # the discrete metric as an explicit matrix gives TV again
    assert wasserstein([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], cost=1 - np.eye(3)) == pytest.approx(0.3)
    # a semantic cost on labels: moving between two hepatitis kinds is cheap (0.2)
    near = {frozenset({"Hepatitis B", "Hepatitis C"})}

    def semantic(x: str, y: str) -> float:
        return 0.0 if x == y else 0.2 if frozenset({x, y}) in near else 1.0

    assert wasserstein({"Hepatitis B": 1.0}, {"Hepatitis C": 1.0}, cost=semantic) == pytest.approx(0.2)
    with pytest.raises(TypeError):
        wasserstein([1, 0], [0, 1], cost=semantic)
    with pytest.raises(ValueError):
        wasserstein([1, 0], [0, 1], cost=np.ones((3, 3)))


def test_coupling_mi_nmi_hand_values() -> None:
    p, q = [0.6, 0.4, 0.0], [0.2, 0.4, 0.4]
    # m = [0.2, 0.4, 0], TV = 0.4, p − m = [0.4, 0, 0], q − m = [0, 0, 0.4]
    # γ = diag(m) + outer(p−m, q−m)/TV: γ[0,2] = 0.4·0.4/0.4 = 0.4
    np.testing.assert_allclose(coupling(p, q), [[0.2, 0, 0.4], [0, 0.4, 0], [0, 0, 0]], atol=1e-12)
    # I = 0.2 log2(0.2/0.12) + 0.4 log2(0.4/0.24) + 0.4 log2(0.4/0.16)
    #   = 0.1473931 + 0.2947862 + 0.5287712 = 0.9709506 = H(0.6, 0.4) (Y determines X)
    assert mutual_information(p, q) == pytest.approx(0.9709506, abs=1e-7)
    # NMI = 0.9709506 / max(0.9709506, H(0.2, 0.4, 0.4) = 1.5219281) = 0.6379740
    assert normalized_mutual_information(p, q) == pytest.approx(0.6379740, abs=1e-7)


def test_mi_identical_and_disjoint() -> None:
    p = [0.5, 0.25, 0.25]
    assert mutual_information(p, p) == pytest.approx(entropy(p))
    assert normalized_mutual_information(p, p) == pytest.approx(1.0)
    assert mutual_information([1, 0], [0, 1]) == 0.0
    # two point masses: 0/0, defined as agreement or not
    assert normalized_mutual_information([1, 0], [1, 0]) == 1.0
    assert normalized_mutual_information([1, 0], [0, 1]) == 0.0


def test_mi_rises_as_agents_converge() -> None:
    """Tables 7.2/7.3 direction: MI grows while JSD and WD shrink."""
    b = {"Dengue": 0.5, "Chikungunya": 0.3, "Zika": 0.2}
    rounds = [
        {"Chikungunya": 0.7, "Zika": 0.2, "Dengue": 0.1},
        {"Dengue": 0.3, "Chikungunya": 0.5, "Zika": 0.2},
        {"Dengue": 0.45, "Chikungunya": 0.35, "Zika": 0.2},
    ]
    snaps = [compute_all(a, b) for a in rounds]
    assert snaps[0].mi < snaps[1].mi < snaps[2].mi
    assert snaps[0].jsd > snaps[1].jsd > snaps[2].jsd
    assert snaps[0].wd > snaps[1].wd > snaps[2].wd


def test_mi_rises_to_its_maximum_as_two_agents_converge_and_sharpen() -> None:
    """Two agents move onto one answer and both sharpen. Raw MI in bits
    falls with their entropy (0.92 → 0.47 in the issue); the "MI" EVINCE plots must rise
    every round and reach 1 once they agree, while JSD goes to 0."""
    path = [  # (agent A, agent B) per round
        ({"Dengue": 0.6, "Chikungunya": 0.3, "Zika": 0.1}, {"Chikungunya": 0.5, "Zika": 0.3, "Malaria": 0.2}),
        ({"Dengue": 0.6, "Chikungunya": 0.3, "Zika": 0.1}, {"Dengue": 0.3, "Chikungunya": 0.5, "Zika": 0.2}),
        ({"Dengue": 0.7, "Chikungunya": 0.3}, {"Dengue": 0.55, "Chikungunya": 0.45}),
        ({"Dengue": 0.8, "Chikungunya": 0.2}, {"Dengue": 0.8, "Chikungunya": 0.2}),
        ({"Dengue": 0.9, "Chikungunya": 0.1}, {"Dengue": 0.9, "Chikungunya": 0.1}),
    ]
    snaps = [compute_all(a, b) for a, b in path]
    mi = [s.mi for s in snaps]
    assert all(later >= earlier for earlier, later in zip(mi, mi[1:])), mi
    assert mi[0] < mi[2] < mi[3]
    assert mi[3] == pytest.approx(1.0) and mi[4] == pytest.approx(1.0)
    assert snaps[4].jsd == 0.0
    assert snaps[4].mi_bits < snaps[3].mi_bits  # the raw bits fall as they sharpen: not the signal


def test_agreement_information_is_one_only_for_agreement() -> None:
    from protocols.measures.metrics import agreement_information

    # one-to-one disagreement: the appendix's NMI says 1, agreement information does not
    p, q = [0.5, 0.5, 0.0], [0.5, 0.0, 0.5]
    assert normalized_mutual_information(p, q) == pytest.approx(1.0)
    assert agreement_information(p, q) == pytest.approx(1 / 1.5)  # I = 1 bit, H(M) = 1.5 bits
    assert agreement_information([1, 0], [0, 1]) == 0.0
    assert agreement_information([1, 0], [1, 0]) == 1.0
    assert agreement_information([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]) == pytest.approx(1.0)


def test_every_metric_has_a_one_line_definition() -> None:
    from protocols.measures.metrics import METRIC_DEFINITIONS

    snap = compute_all({"a": 0.5, "b": 0.5}, {"a": 1.0})
    for key in (*snap.__dataclass_fields__, "crit", "crit_a", "crit_b", "entropy_mixture", "info_gain", "kappa"):
        assert key in METRIC_DEFINITIONS, key
        assert "\n" not in METRIC_DEFINITIONS[key] and len(METRIC_DEFINITIONS[key]) <= 240
    assert "1 only when the agents agree" in METRIC_DEFINITIONS["mi"]
    assert "total variation" in METRIC_DEFINITIONS["wd"] and "no ground metric" in METRIC_DEFINITIONS["wd"]


def test_information_gain() -> None:
    # H(uniform over 4) − H(½, ½) = 2 − 1 = 1 bit
    assert information_gain([0.25] * 4, [0.5, 0.5]) == pytest.approx(1.0)
    assert information_gain({"a": 1.0}, {"a": 0.5, "b": 0.5}) == pytest.approx(-1.0)


def test_mixture_evince_final_prediction() -> None:
    # P_f = (0.75·[0.6, 0.4] + 0.25·[0.2, 0.8]) / 1 = [0.45 + 0.05, 0.3 + 0.2] = [0.5, 0.5]
    np.testing.assert_allclose(mixture([[0.6, 0.4], [0.2, 0.8]], [0.75, 0.25]), [0.5, 0.5])
    mixed = mixture([{"Dengue": 0.6, "Zika": 0.4}, {"dengue": 0.2, "Malaria": 0.8}], [3, 1])
    # weights 3:1 -> ¾, ¼; Dengue = 0.45 + 0.05, Malaria = 0.2, Zika = 0.3
    assert mixed == pytest.approx({"Dengue": 0.5, "Malaria": 0.2, "Zika": 0.3})
    # both CRIT scores 0: equal weights
    np.testing.assert_allclose(mixture([[1, 0], [0, 1]], [0, 0]), [0.5, 0.5])
    with pytest.raises(ValueError):
        mixture([[1, 0]], [-1])
    with pytest.raises(ValueError):
        mixture([[1, 0], [0, 1]], [1])


def test_compute_all_and_deltas() -> None:
    a = {"Hepatitis C": 0.6, "Hepatitis B": 0.4}
    b = {"hepatitis c": 0.4, "Jaundice": 0.6}
    snap = compute_all(a, b)
    assert isinstance(snap, MetricsSnapshot)
    assert snap.wd == pytest.approx(0.6)  # ½(|0.6−0.4| + 0.4 + 0.6) = ½·1.2
    assert snap.entropy_a == pytest.approx(entropy([0.6, 0.4]))
    assert snap.kl_ab == pytest.approx(kl_divergence(a, b))
    assert snap.kl_ba == pytest.approx(kl_divergence(b, a))
    assert snap.cross_entropy_ab == pytest.approx(cross_entropy(a, b))
    same = compute_all(a, a)
    assert same.jsd == same.wd == same.kl_ab == 0.0 and same.nmi == pytest.approx(1.0)
    d = deltas(snap, same)
    assert set(d) == {
        "jsd", "wd", "mi", "mi_bits", "nmi", "kl_ab", "kl_ba", "cross_entropy_ab", "entropy_a", "entropy_b"
    }
    assert d["wd"] == pytest.approx(-0.6)


def test_invalid_inputs() -> None:
    for bad in ([], [0, 0], [-0.1, 1.1], [math.nan, 1]):
        with pytest.raises(ValueError):
            entropy(bad)
    with pytest.raises(ValueError):
        jensen_shannon([1, 0], [1, 0, 0])
    with pytest.raises(TypeError):
        jensen_shannon({"a": 1.0}, [1.0])


# --- against scipy -------------------------------------------------------------------------


@PROPERTY
@given(dist_pairs())
def test_agrees_with_scipy(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pq
    assert entropy(p) == pytest.approx(scipy_entropy(p, base=2), abs=1e-9)
    assert entropy(p, base=math.e) == pytest.approx(scipy_entropy(p), abs=1e-9)
    assert jensen_shannon(p, q) == pytest.approx(jensenshannon(p, q, base=2) ** 2, abs=1e-9)
    if np.all(q[p > 0] > 0):  # no smoothing needed: exact KL
        assert kl_divergence(p, q) == pytest.approx(scipy_entropy(p, q, base=2), abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(dist_pairs(max_size=6))
def test_lp_wasserstein_matches_scipy_1d(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pq
    positions = np.arange(p.size)
    cost = np.abs(np.subtract.outer(positions, positions)).astype(float)
    expected = wasserstein_distance(positions, positions, p, q)
    assert wasserstein(p, q, cost=cost) == pytest.approx(expected, abs=1e-7)
    assert wasserstein(p, q) == pytest.approx(0.5 * np.abs(p - q).sum(), abs=1e-12)


# --- properties ----------------------------------------------------------------------------


@PROPERTY
@given(dist_pairs())
def test_symmetry_and_bounds(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pq
    assert jensen_shannon(p, q) == pytest.approx(jensen_shannon(q, p), abs=1e-12)
    assert wasserstein(p, q) == pytest.approx(wasserstein(q, p), abs=1e-12)
    assert mutual_information(p, q) == pytest.approx(mutual_information(q, p), abs=1e-9)
    assert 0.0 <= jensen_shannon(p, q) <= 1.0
    assert 0.0 <= wasserstein(p, q) <= 1.0
    assert 0.0 <= normalized_mutual_information(p, q) <= 1.0
    assert 0.0 <= mutual_information(p, q) <= min(entropy(p), entropy(q)) + 1e-12
    assert kl_divergence(p, q) >= 0.0


@PROPERTY
@given(dist_pairs())
def test_zero_on_identical_inputs(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, _ = pq
    assert jensen_shannon(p, p) == pytest.approx(0.0, abs=1e-12)
    assert wasserstein(p, p) == 0.0
    assert kl_divergence(p, p) == pytest.approx(0.0, abs=1e-12)
    assert mutual_information(p, p) == pytest.approx(entropy(p), abs=1e-9)
    if entropy(p) > 0:
        assert normalized_mutual_information(p, p) == pytest.approx(1.0)


@PROPERTY
@given(dist_pairs())
def test_coupling_marginals(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pq
    gamma = coupling(p, q)
    assert np.all(gamma >= -1e-15)
    np.testing.assert_allclose(gamma.sum(axis=1), p, atol=1e-12)
    np.testing.assert_allclose(gamma.sum(axis=0), q, atol=1e-12)
    np.testing.assert_allclose(np.trace(gamma), np.minimum(p, q).sum(), atol=1e-12)


@PROPERTY
@given(dist_pairs(), st.data())
def test_invariant_to_label_order(pq: tuple[np.ndarray, np.ndarray], data: st.DataObject) -> None:
    p, q = pq
    perm = np.array(data.draw(st.permutations(range(p.size))))
    for f in (jensen_shannon, wasserstein, mutual_information, normalized_mutual_information, kl_divergence):
        assert f(p[perm], q[perm]) == pytest.approx(f(p, q), abs=1e-9)
    names = [f"Label {i}" for i in range(p.size)]
    a, b = dict(zip(names, p)), dict(zip(names, q))
    shuffled = dict(zip([names[i] for i in perm], p[perm]))
    assert compute_all(a, b) == compute_all(shuffled, b)


@PROPERTY
@given(
    st.lists(st.dictionaries(st.sampled_from("ABCDEF"), st.floats(0.01, 1.0), min_size=1), min_size=1, max_size=4),
    st.data(),
)
def test_mixture_sums_to_one(dists: list[dict[str, float]], data: st.DataObject) -> None:
    weights = data.draw(st.lists(st.floats(0.0, 10.0), min_size=len(dists), max_size=len(dists)))
    mixed = mixture(dists, weights)
    assert sum(mixed.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(v >= 0 for v in mixed.values())
