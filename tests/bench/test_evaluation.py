"""The diagnosis benchmark's metrics against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from protocols.measures import evaluation as E

PREDS = [{"Malaria": 0.6, "Dengue": 0.3, "Typhoid": 0.1},   # truth Malaria: rank 1
         {"Malaria": 0.5, "Dengue": 0.4, "Typhoid": 0.1},   # truth Dengue: rank 2
         {"Malaria": 0.7, "Typhoid": 0.3},                  # truth Dengue: absent
         {"dengue ": 0.9, "Malaria": 0.1}]                  # truth Dengue: rank 1 (normalized)
TRUTH = ["Malaria", "Dengue", "Dengue", "Dengue"]


def test_accuracy_at_k_and_mrr() -> None:
    assert E.hits_at(PREDS, TRUTH, 1).tolist() == [1, 0, 0, 1]
    assert E.hits_at(PREDS, TRUTH, 3).tolist() == [1, 1, 0, 1]
    # MRR = (1 + 1/2 + 0 + 1) / 4 = 0.625
    assert E.reciprocal_ranks(PREDS, TRUTH).mean() == pytest.approx(0.625)


def test_macro_f1_by_hand() -> None:
    # top-1: malaria, malaria, malaria, dengue; truths: malaria, dengue, dengue, dengue
    # malaria: tp 1, fp 2, fn 0 → 2/(2+2) = 0.5; dengue: tp 1, fp 0, fn 2 → 2/(2+2) = 0.5
    assert E.macro_f1(PREDS, TRUTH) == pytest.approx(0.5)


def test_brier_by_hand() -> None:
    # case 1: (0.6-1)² + 0.3² + 0.1² = 0.16 + 0.09 + 0.01 = 0.26
    # case 3: reference absent: 0.7² + 0.3² + 1 = 0.49 + 0.09 + 1 = 1.58
    scores = E.brier_scores(PREDS, TRUTH)
    assert scores[0] == pytest.approx(0.26) and scores[2] == pytest.approx(1.58)


def test_ece_uses_equal_frequency_bins() -> None:
    conf = [0.9, 0.8, 0.7, 0.6, 0.55, 0.4]
    correct = [1, 1, 0, 1, 0, 0]
    # 3 bins of 2 sorted by confidence: (0.4, 0.55)→acc 0; (0.6, 0.7)→acc 0.5; (0.8, 0.9)→acc 1
    # |0.475-0| + |0.65-0.5| + |0.85-1| = 0.475 + 0.15 + 0.15, each weighted 1/3 → 0.25833…
    assert E.expected_calibration_error(conf, correct, bins=3) == pytest.approx((0.475 + 0.15 + 0.15) / 3)
    # with one bin it is |mean confidence − accuracy|
    assert E.expected_calibration_error(conf, correct, bins=1) == pytest.approx(abs(np.mean(conf) - 0.5))
    # 15 bins, fewer cases than bins: one case per bin
    assert E.expected_calibration_error([0.9, 0.2], [1, 1], bins=15) == pytest.approx((0.1 + 0.8) / 2)


def test_bootstrap_is_reproducible_and_brackets_the_mean() -> None:
    values = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1], dtype=float)
    first = E.bootstrap_ci(lambda idx: values[idx].mean(), len(values), n_boot=500, seed=7)
    again = E.bootstrap_ci(lambda idx: values[idx].mean(), len(values), n_boot=500, seed=7)
    assert first == again
    assert first[0] <= values.mean() <= first[1]
    rng = np.random.default_rng(7)  # the same resamples, by hand
    by_hand = np.percentile([values[rng.integers(0, 10, 10)].mean() for _ in range(500)], [2.5, 97.5])
    assert first == pytest.approx(tuple(by_hand))


def test_wilcoxon_and_benjamini_hochberg() -> None:
    a, b = [0.9, 0.8, 0.7, 0.95, 0.6, 0.85], [0.5, 0.6, 0.65, 0.7, 0.4, 0.5]
    assert E.wilcoxon_p(a, b) == pytest.approx(stats.wilcoxon(np.subtract(a, b), zero_method="zsplit").pvalue)
    assert E.wilcoxon_p([1, 1], [1, 1]) == 1.0
    # p = (0.01, 0.04, 0.03): sorted 0.01, 0.03, 0.04 → 0.03, 0.045, 0.04 → monotone 0.03, 0.04, 0.04
    assert E.benjamini_hochberg([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])
