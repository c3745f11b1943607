"""The diagnosis benchmark runs section 7.4.5's design by default (issue 14 point 4): enough
rounds for the schedules to differ, the CRIT judge on; the cheap design has its own name and
the report says which design ran. No model is loaded: these check the configuration each
EVINCE arm receives and the report's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocols.contentiousness import make_schedule
from protocols.labels import LabelSet
from tui.bench.diagnosis import Bench, BenchConfig, Case, summarize
from tui.bench.report import markdown


def bench(tmp_path: Path, **kw: object) -> Bench:
    config = BenchConfig(cases=tmp_path / "cases.csv", models=("model-a", "model-b"), out=tmp_path / "out", **kw)  # type: ignore[arg-type]
    return Bench(config, {}, {}, journal=None)  # type: ignore[arg-type]


CASE = Case("c1", "Dengue", ["fever", "rash"])
LABELS = LabelSet(["Dengue", "Malaria"])


def test_the_default_design_is_the_papers_ablation(tmp_path: Path) -> None:
    b = bench(tmp_path)
    assert b.config.design == "paper" and b.config.judge_model == "model-a"
    linear, expo = (b._evince_config(CASE, LABELS, s) for s in ("linear", "exponential"))
    assert linear.crit_judge and expo.crit_judge
    rounds = linear.max_rounds
    assert rounds >= 4  # linear and exponential reach clearly different κ
    kappas = {s: [make_schedule(s).value(t) for t in range(rounds)] for s in ("linear", "exponential")}
    assert sum(abs(x - y) > 0.05 for x, y in zip(kappas["linear"], kappas["exponential"])) >= 2, kappas
    assert linear.turn_tokens >= 1000  # EVINCE's paragraph-long turns, not 48 tokens
    report = markdown(summarize(b, []), "symposium bench diagnosis")
    assert "Design: **paper**" in report and "section 7.4.5" in report
    assert "model-a (model A: no separate --judge given)" in report


def test_the_quick_design_is_named_and_says_it_is_not_the_ablation(tmp_path: Path) -> None:
    b = bench(tmp_path, design="quick")
    config = b._evince_config(CASE, LABELS, "linear")
    assert not config.crit_judge and config.max_rounds == 2 and b.config.judge_model is None
    report = markdown(summarize(b, []), "symposium bench diagnosis --design quick")
    assert "Design: **quick**" in report and "not the paper's ablation" in report
    with pytest.raises(ValueError, match="unknown design"):
        bench(tmp_path, design="fast")
