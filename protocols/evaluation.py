"""Scoring predicted distributions against reference labels (seed 004, section 7.4.1.2–7.4.1.3).

Pure numpy/scipy over plain data, so the diagnosis benchmark, the tests and anyone's notebook
compute the same numbers. A *prediction* is a mapping label → probability (any order, any
subset of the label set); a reference is one label. Labels are compared after
:func:`protocols.labels.normalize_label`.

Definitions (written out because papers differ):

* Acc@k: the reference is among the k most probable labels (ties broken by label order).
* MRR: mean of 1/rank of the reference; 0 when it is not predicted at all.
* macro-F1: F1 of the top-1 label per class, averaged over the classes that occur as
  references or predictions.
* Brier: Σ_c (p_c − y_c)² over the whole label set (multi-class form, in [0, 2]).
* ECE: 15 *equal-frequency* bins of top-1 confidence (section 7.4.1.2); per bin
  |mean confidence − accuracy|, weighted by the bin's share of cases.
* Bootstrap: percentile 95 % interval over resampled cases, with a fixed seed.
* Paired test: Wilcoxon signed-rank on per-case values (zero differences split, "zsplit");
  Benjamini–Hochberg adjusts the p-values of a family of comparisons (section 7.4.1.3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from .labels import normalize_label

Prediction = Mapping[str, float]


def ranked(prediction: Prediction) -> list[str]:
    """Normalized labels, most probable first (ties by label, so the order is deterministic)."""
    return [label for label, _ in sorted(((normalize_label(k), v) for k, v in prediction.items()),
                                         key=lambda kv: (-kv[1], kv[0]))]


def rank_of(prediction: Prediction, reference: str) -> int | None:
    """1-based rank of ``reference`` in ``prediction``, or ``None`` when it is absent."""
    order = ranked(prediction)
    target = normalize_label(reference)
    return order.index(target) + 1 if target in order else None


def hits_at(predictions: Sequence[Prediction], references: Sequence[str], k: int) -> np.ndarray:
    """Per case: 1.0 when the reference is in the top ``k``."""
    return np.array([float((r := rank_of(p, t)) is not None and r <= k) for p, t in zip(predictions, references)])


def reciprocal_ranks(predictions: Sequence[Prediction], references: Sequence[str]) -> np.ndarray:
    return np.array([1.0 / r if (r := rank_of(p, t)) else 0.0 for p, t in zip(predictions, references)])


def top1(prediction: Prediction) -> str | None:
    order = ranked(prediction)
    return order[0] if order else None


def macro_f1(predictions: Sequence[Prediction], references: Sequence[str]) -> float:
    guesses = [top1(p) for p in predictions]
    truths = [normalize_label(t) for t in references]
    classes = sorted(set(truths) | {g for g in guesses if g is not None})
    scores = []
    for c in classes:
        tp = sum(g == c and t == c for g, t in zip(guesses, truths))
        fp = sum(g == c and t != c for g, t in zip(guesses, truths))
        fn = sum(g != c and t == c for g, t in zip(guesses, truths))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else 0.0


def brier_scores(predictions: Sequence[Prediction], references: Sequence[str]) -> np.ndarray:
    """Per case Σ_c (p_c − y_c)²; labels not predicted count as probability 0."""
    out = []
    for p, t in zip(predictions, references):
        probs = {normalize_label(k): v for k, v in p.items()}
        target = normalize_label(t)
        out.append(sum((v - (1.0 if k == target else 0.0)) ** 2 for k, v in probs.items())
                   + (0.0 if target in probs else 1.0))
    return np.array(out)


def confidences(predictions: Sequence[Prediction]) -> np.ndarray:
    return np.array([max(p.values()) if p else 0.0 for p in predictions])


def expected_calibration_error(conf: Sequence[float], correct: Sequence[float], bins: int = 15) -> float:
    """ECE with equal-frequency bins: cases sorted by confidence, split into ``bins`` groups
    of (nearly) equal size (``numpy.array_split``; empty groups when there are fewer cases)."""
    conf_arr, correct_arr = np.asarray(conf, dtype=float), np.asarray(correct, dtype=float)
    n = len(conf_arr)
    if n == 0:
        return 0.0
    order = np.argsort(conf_arr, kind="stable")
    total = 0.0
    for group in np.array_split(order, min(bins, n)):
        if len(group):
            total += len(group) / n * abs(conf_arr[group].mean() - correct_arr[group].mean())
    return float(total)


def bootstrap_ci(metric: Callable[[np.ndarray], float], n_cases: int, *, n_boot: int = 1000,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``metric(case_indices)`` over ``n_boot`` resamples of the cases."""
    if n_cases == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    values = np.array([metric(rng.integers(0, n_cases, n_cases)) for _ in range(n_boot)])
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def wilcoxon_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired per-case values (1.0 when all equal)."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if len(diff) == 0 or np.allclose(diff, 0):
        return 1.0
    return float(stats.wilcoxon(diff, zero_method="zsplit").pvalue)


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (step-up, monotone, capped at 1), input order."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p)
    adjusted = np.empty(m)
    running = 1.0
    for rank, index in reversed(list(enumerate(order, start=1))):
        running = min(running, p[index] * m / rank)
        adjusted[index] = running
    return [float(min(1.0, v)) for v in adjusted]
