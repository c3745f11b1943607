"""Scoring predicted distributions against reference labels (Edward Y. Chang, "EVINCE: Optimizing
Adversarial LLM Dialogues via Conditional Statistics and Information Theory", chapter 7 of
Multi-LLM Agent Collaborative Intelligence, sections 7.4.1.2–7.4.1.3).

Pure numpy/scipy over plain data, so the diagnosis benchmark, the tests and anyone's notebook
compute the same numbers. A *prediction* is a mapping label → probability (any order, any
subset of the label set); a reference is one label. Labels are compared after
:func:`protocols.measures.labels.normalize_label`.

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

The paper's own statistics (section 7.4.1, 7.4.1.2–3) are computed beside these, because they
differ and a reader comparing with Table 7.1 needs them: 20 bootstrap replicates giving BCa
95 % intervals (:func:`bca_interval`, scipy's ``bootstrap(method="BCa")``) and their standard
deviation (Table 7.1's parentheses); each pair against its better single model by a Wilcoxon
signed-rank test *on the 20 replicates* (:func:`replicate_test`), with Cliff's Δ
(:func:`cliffs_delta`) as the effect size and Benjamini–Hochberg at q = 0.05. Ours differ on
purpose: 20 replicates are too few for stable BCa tails (its bias and acceleration are
estimated from them), and a test on replicates measures how many replicates were drawn, not
how many cases there are (its p-value falls as replicates are added to the same cases), so
our headline test is on the cases themselves. Labels are compared by the label set's rules
when one is given (:func:`canonicalize`: case, punctuation, synonyms, typos), the rules the
debate's distributions were compared by.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

from protocols.core.lazy import module

if TYPE_CHECKING:
    import numpy as np
    from scipy import stats
else:
    np = module("numpy")
    stats = module("scipy.stats")

from protocols.measures.labels import LabelSet, canonical_distribution, canonical_label, normalize_label

Prediction = Mapping[str, float]
#: Per-case or per-replicate numbers, as a list or a numpy array.
Values: TypeAlias = "Sequence[float] | np.ndarray"

#: Section 7.4.1: "20 bootstrap replicates (sampling with replacement)".
PAPER_REPLICATES = 20
#: Section 7.4.1.3: Benjamini–Hochberg "at q = 0.05".
PAPER_Q = 0.05


def canonicalize(predictions: Sequence[Prediction], references: Sequence[str], labels: LabelSet | None, *,
                 credit_related: bool = False) -> tuple[list[dict[str, float]], list[str], list[list[str]]]:
    """Predictions and references with every label in the label set's canonical spelling
    (:func:`protocols.measures.labels.canonical_distribution`), and per case the notes of what was
    renamed or merged ("'Dengue fever' -> 'Dengue' (synonym)"). Scoring after it judges
    "Dengue fever" against "Dengue" as the debate's distributions did. ``credit_related``
    credits a broader or narrower name the set lists to its class (noted "credited as
    broader"; :func:`credited` says which classes a prediction reached that way)."""
    preds: list[dict[str, float]] = []
    refs: list[str] = []
    notes: list[list[str]] = []
    for prediction, reference in zip(predictions, references, strict=True):
        merged, case_notes = canonical_distribution(prediction, labels, credit_related=credit_related)
        canonical, how = canonical_label(reference, labels)
        if how != "same":
            case_notes.append(f"reference {reference!r} -> {canonical!r} ({how})")
        preds.append(merged)
        refs.append(canonical)
        notes.append(case_notes)
    return preds, refs, notes


def credited(prediction: Prediction, labels: LabelSet | None) -> set[str]:
    """The classes ``prediction`` reaches only through a broader or narrower name the label set
    lists (:meth:`protocols.measures.labels.LabelSet.related`), in their canonical spelling: the hits that
    scoring with ``credit_related`` counts apart."""
    if labels is None:
        return set()
    return {found[0] for name in prediction if labels.match(name) is None and (found := labels.related(name)) is not None}


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


def wilcoxon_p(a: Values, b: Values) -> float:
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


# -- the paper's statistics (section 7.4.1, 7.4.1.2–3) -------------------------------------------


def bca_interval(statistic: Callable[..., float], *columns: Values, n_resamples: int = PAPER_REPLICATES,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """The paper's interval: scipy's ``bootstrap(method="BCa")`` of ``statistic`` over the cases
    (``columns`` are per-case values resampled together), with ``n_resamples`` replicates (20 in
    section 7.4.1). Returns (low, high, standard deviation of the replicates: Table 7.1's
    parentheses). When every case has the same values (all hits, all misses) the replicates
    cannot vary and the interval is the point itself, with deviation 0; with fewer than two
    cases it is undefined (NaN)."""
    data = [np.asarray(c, dtype=float) for c in columns]
    n = len(data[0]) if data else 0
    if n < 2:
        return float("nan"), float("nan"), float("nan")
    if all(np.ptp(c) == 0 for c in data):
        value = float(statistic(*data))
        return value, value, 0.0
    with warnings.catch_warnings():
        # scipy warns that BCa is unreliable with few resamples, or degenerate on a
        # near-constant statistic: the low replicate count is the paper's, and the caveat is
        # in docs/protocols.md; a NaN end is reported as such.
        warnings.simplefilter("ignore")
        result = stats.bootstrap(tuple(data), statistic, n_resamples=n_resamples, method="BCa", paired=True,
                                 vectorized=False, confidence_level=level, rng=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return float(low), float(high), float(np.std(result.bootstrap_distribution, ddof=1))


def replicates(metric: Callable[[np.ndarray], float], n_cases: int, *, n: int = PAPER_REPLICATES,
               seed: int = 0) -> np.ndarray:
    """``metric(case_indices)`` on ``n`` bootstrap resamples of the cases. The draws depend only
    on ``seed``, ``n`` and ``n_cases``, so two systems scored on the same cases get the same
    resamples: their replicates pair up, as the paper's test on replicates needs."""
    draws = np.random.default_rng(seed).integers(0, n_cases, (n, n_cases)) if n_cases else np.empty((n, 0), int)
    return np.array([metric(idx) for idx in draws])


def cliffs_delta(x: Values, y: Values) -> float:
    """Cliff's Δ = P(X > Y) − P(X < Y) over all pairs of a value of ``x`` and one of ``y``: the
    effect size section 7.4.1.3 reports, from −1 (every y larger) to 1 (every x larger)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    diff = a[:, None] - b[None, :]
    return float((np.sum(diff > 0) - np.sum(diff < 0)) / diff.size)


def replicate_test(mine: Values, theirs: Values, *, n: int = PAPER_REPLICATES,
                   seed: int = 0) -> dict[str, float]:
    """Section 7.4.1.3's comparison of a pair with its better single model on the same cases
    (``mine``, ``theirs``: per-case values in the same case order): ``n`` paired bootstrap
    replicates of each mean, the Wilcoxon signed-rank p-value on the replicates and Cliff's Δ
    between them. Also the two systems' mean replicate, for the table."""
    a, b = np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float)
    rep_a = replicates(lambda idx: float(a[idx].mean()), len(a), n=n, seed=seed)
    rep_b = replicates(lambda idx: float(b[idx].mean()), len(b), n=n, seed=seed)
    return {"p": wilcoxon_p(rep_a, rep_b), "cliffs_delta": cliffs_delta(rep_a, rep_b),
            "mean": float(rep_a.mean()) if len(a) else float("nan"),
            "versus_mean": float(rep_b.mean()) if len(b) else float("nan")}
