"""Wasserstein with a ground cost: the transport LP against an independent solver.

Distributions with near-zero entries once made HiGHS call the transport problem
"infeasible" (the 2n marginal constraints are rank 2n − 1, and Σp, Σq differ in the last
bits). These properties draw near-degenerate and sparse distributions and arbitrary
non-negative cost matrices (not metrics: asymmetric, zero off the diagonal, non-zero on it)
and check :func:`protocols.measures.metrics.wasserstein` against POT's network simplex
(``ot.emd2``) and, for ordinal costs |i − j|, against scipy's 1-D ``wasserstein_distance``.
"""

from __future__ import annotations

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from protocols.measures.metrics import wasserstein

# Masses from exact zeros through denormal-ish dust to ordinary weights: the edge cases.
MASS = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-300, max_value=1e-6),
    st.floats(min_value=1e-6, max_value=1.0),
    st.floats(min_value=1.0, max_value=1e6),
)


@st.composite
def pair_and_cost(draw: st.DrawFn, metric: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(min_value=2, max_value=7))
    def dist() -> np.ndarray:
        v = np.array(draw(st.lists(MASS, min_size=n, max_size=n)))
        if v.sum() <= 0:  # an all-zero vector is refused by design; put the mass somewhere
            v[draw(st.integers(0, n - 1))] = 1.0
        return v
    a, b = dist(), dist()
    cost = np.array(draw(st.lists(st.floats(min_value=0.0, max_value=100.0), min_size=n * n, max_size=n * n)))
    return a, b, cost.reshape(n, n)


def _reference(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> float:
    a, b = a / a.sum(), b / b.sum()
    b = b * (a.sum() / b.sum())  # POT wants equal totals to the last bit
    return float(ot.emd2(a, b, cost, numItermax=1_000_000))


@settings(max_examples=400, deadline=None)
@given(pair_and_cost())
def test_wasserstein_matches_network_simplex_on_any_cost(case: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    a, b, cost = case
    got = wasserstein(a, b, cost)
    assert got >= 0.0
    assert abs(got - _reference(a, b, cost)) <= 1e-6 * max(1.0, float(cost.max()))


@settings(max_examples=300, deadline=None)
@given(pair_and_cost())
def test_ordinal_cost_matches_scipy_one_dimensional_distance(case: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    a, b, _ = case
    n = a.size
    ordinal = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
    expected = wasserstein_distance(np.arange(n), np.arange(n), a / a.sum(), b / b.sum())
    assert abs(wasserstein(a, b, ordinal) - expected) <= 1e-7 * n


def test_the_pair_that_was_infeasible_now_solves() -> None:
    """A 4-way pair found by random search that HiGHS refused before the fix."""
    p = np.array([9.99990581e-01, 5.33128848e-08, 5.72893815e-08, 9.30808772e-06])
    q = np.array([1.54657568e-07, 3.13782688e-09, 5.33264354e-04, 9.99466578e-01])
    cost = np.array([
        [0.0, 0.14265653, 0.23790934, 0.52399838],
        [0.92814103, 0.0, 0.84472414, 0.0547767],
        [0.80060989, 0.36091622, 0.0, 0.46753025],
        [0.55744937, 0.07294226, 0.79092335, 0.0],
    ])
    assert abs(wasserstein(p, q, cost) - _reference(p, q, cost)) < 1e-9


@pytest.mark.timeout(300)  # 5,000 linear programs: 90 s and more on a busy two-core machine
def test_random_near_degenerate_pairs_solve_to_the_reference_value() -> None:
    """5,000 Dirichlet(0.1) pairs (many near-zero entries): about 0.1 % failed before the fix.
    Each must now solve to POT's value, and obey what any transport cost obeys: W(P, P) = 0
    under a zero diagonal, W(P, Q; C) = W(Q, P; Cᵀ), and W ≤ the largest cost."""
    rng = np.random.default_rng(0)
    for i in range(5_000):
        p, q = rng.dirichlet([0.1] * 4), rng.dirichlet([0.1] * 4)
        cost = rng.random((4, 4))
        np.fill_diagonal(cost, 0.0)
        got = wasserstein(p, q, cost)
        assert abs(got - _reference(p, q, cost)) <= 1e-8, (i, p, q, cost)
        assert 0.0 <= got <= cost.max() + 1e-12, i
        if i % 10 == 0:  # a sample: each LP costs tens of milliseconds on a busy 2-core machine
            assert abs(got - wasserstein(q, p, cost.T)) <= 1e-8, i
        if i % 50 == 0:
            assert wasserstein(p, p, cost) <= 1e-9, i
