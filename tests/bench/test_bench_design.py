"""The diagnosis benchmark runs section 7.4.5's design by default: enough
rounds for the schedules to differ, the CRIT judge on; the cheap design has its own name and
the report says which design ran. The paper design's judge is external and named: no silent "model A judges", and a debater named as judge is said loudly. No model
is loaded: these check the configuration each EVINCE arm receives and the report's text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from protocols.measures.contentiousness import make_schedule
from protocols.measures.labels import LabelSet
from tests.helpers.paths import REPO
from tui.bench.diagnosis import Bench, BenchConfig, Case, summarize
from tui.bench.report import markdown


def bench(tmp_path: Path, **kw: object) -> Bench:
    config = BenchConfig(cases=tmp_path / "cases.csv", models=("model-a", "model-b"), out=tmp_path / "out", **kw)  # type: ignore[arg-type]
    return Bench(config, {}, {}, journal=None)  # type: ignore[arg-type]


CASE = Case("c1", "Dengue", ["fever", "rash"])
LABELS = LabelSet(["Dengue", "Malaria"])


def test_the_default_design_is_the_papers_ablation(tmp_path: Path) -> None:
    b = bench(tmp_path, judge="model-j")
    assert b.config.design == "paper" and b.config.judge_model == "model-j" and b.config.self_judging == []
    linear, expo = (b._evince_config(CASE, LABELS, s) for s in ("linear", "exponential"))
    assert linear.crit_judge and expo.crit_judge
    rounds = linear.max_rounds + 1  # the opening round and max_rounds refutation rounds
    # the paper's debates hold the opening and two refutation rounds (Tables 7.2/7.3, their Round 1 the
    # opening exchange; Table 7.3's fourth row is the joint final assessment): the cap allows one more
    assert rounds == 4
    kappas = {s: [make_schedule(s).value(t) for t in range(rounds)] for s in ("linear", "exponential")}
    assert sum(abs(x - y) > 0.05 for x, y in zip(kappas["linear"], kappas["exponential"])) >= 2, kappas
    assert linear.turn_tokens >= 1000  # EVINCE's paragraph-long turns, not 48 tokens
    report = markdown(summarize(b, []), "symposium bench diagnosis")
    assert "Design: **paper**" in report and "section 7.4.5" in report
    assert "CRIT judge model-j (external)" in report and "SELF-JUDGING" not in report


def test_the_default_arms_include_figure_7_1s_adaptive_update(tmp_path: Path) -> None:
    b = bench(tmp_path, judge="model-j")
    assert b.config.schedules == ("none", "fixed", "linear", "exponential", "adaptive")
    assert "EVINCE, adaptive cooling" in b.systems
    assert b._evince_config(CASE, LABELS, "adaptive").schedule == "adaptive"


def test_the_paper_design_without_a_judge_is_refused_naming_the_flag(tmp_path: Path) -> None:
    """Section 7.2 (1)(iii): external CRIT scoring. Model A used to judge silently."""
    with pytest.raises(ValueError, match=r"--design paper needs a CRIT judge: give --judge MODEL"):
        bench(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tui.cli", "bench", "diagnosis", "--cases", str(tmp_path / "c.csv"),
                           "--models", "a,b"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1 and "--judge" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(("judge", "says"), [("model-a", "model A"), ("model-b", "model B")])
def test_a_debater_named_as_judge_is_said_loudly_in_the_report(tmp_path: Path, judge: str, says: str) -> None:
    b = bench(tmp_path, judge=judge)
    assert b.config.self_judging == (["agent-a"] if judge == "model-a" else ["agent-b"])
    report = markdown(summarize(b, []), "symposium bench diagnosis")
    assert f"SELF-JUDGING: the CRIT judge {judge} is also {says}" in report and "external CRIT scoring" in report


def test_cases_run_several_at_a_time_on_llama_cpp_are_said_to_depend_on_the_schedule(tmp_path: Path) -> None:
    """Cases sharing a llama.cpp model reuse each other's cached cells in an order the schedule
    decides, so greedy replies can differ from one at a time: the report says so, and how to get
    figures a rerun reproduces. Scripted models (no cache) run any number at a time unmarked."""
    b = bench(tmp_path, judge="model-j")
    summary = summarize(b, [])
    assert summary.config["schedule_dependent"] is False and "--jobs 1" not in markdown(summary, "symposium bench diagnosis")
    summary.config.update(schedule_dependent=True, jobs=4)
    report = markdown(summary, "symposium bench diagnosis")
    assert "> 4 cases at a time on llama.cpp: a reply can differ" in report and "use --jobs 1." in report


def test_the_quick_design_is_named_and_says_it_is_not_the_ablation(tmp_path: Path) -> None:
    b = bench(tmp_path, design="quick")
    config = b._evince_config(CASE, LABELS, "linear")
    assert not config.crit_judge and config.max_rounds == 1 and b.config.judge_model is None  # opening + 1 refutation
    report = markdown(summarize(b, []), "symposium bench diagnosis --design quick")
    assert "Design: **quick**" in report and "not the paper's ablation" in report
    with pytest.raises(ValueError, match="unknown design"):
        bench(tmp_path, design="fast")
