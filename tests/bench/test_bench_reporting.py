"""The diagnosis benchmark's report against the paper, figure by figure: the paper's test over
the paper's family (7.4.1.3), its convergence figure (7.4.1.2, per agent between successive
rounds) beside ours, rounds to convergence per schedule (7.4.5), the agreeing answers spelling
keeps apart (before and after the open rules), and broader or narrower names credited only on
request and counted apart.

The outcomes are written by hand (no model runs): each test needs exact predictions, endings
and distributions per round to check the bookkeeping; tests/bench/test_bench_baselines.py
runs the same report end to end on scripted models.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from backends.base import SamplingOptions
from protocols.measures import evaluation as E
from store.journal import Journal
from tests.helpers.scripted_backends import ScriptedBackend
from tui.bench.diagnosis import (
    Bench,
    BenchConfig,
    Outcome,
    convergence,
    label_set,
    read_cases,
    rounds_to_convergence,
    spelling_split,
    successive,
    summarize,
)
from tui.bench.report import comparisons_table, markdown, rounds_table

CASES = ("case_id,disease,symptoms\n" + "".join(f"c{i},{d},fever\n" for i, d in enumerate(
    ["Malaria", "Dengue", "Typhoid", "Malaria", "Dengue", "Typhoid", "Malaria", "Dengue"])))


def bench(tmp_path: Path, journal: Journal, **config: object) -> tuple[Bench, list]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    csv = tmp_path / "cases.csv"
    csv.write_text(CASES, encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)
    cfg = BenchConfig(cases=csv, models=("model-a", "model-b"), out=tmp_path / "out" / "d", schedules=("linear", "exponential"),
                      n_boot=50, design="quick", **config)  # type: ignore[arg-type]
    backends = {m: ScriptedBackend(m, []) for m in cfg.models}
    return Bench(cfg, backends, {m: SamplingOptions() for m in backends}, journal), cases


def fill(b: Bench, cases: list, right: dict[str, int], **extra: object) -> None:
    """Every system answers every case: right (the case's class) on the first ``right[system]``
    cases, else a wrong class."""
    for system in b.systems:
        for i, case in enumerate(cases):
            label = case.disease if i < right.get(system, 0) else "Zika"
            b.done[(case.case_id, system)] = Outcome(case.case_id, system, case.disease, {label: 0.8, "Other": 0.2},
                                                     3, 10, 0.1, "", **extra)  # type: ignore[arg-type]


def test_the_papers_test_is_adjusted_over_the_papers_family_only(tmp_path: Path, journal: Journal) -> None:
    """Section 7.4.1.3 compares each EVINCE pair with its stronger component: Benjamini–Hochberg
    of the paper's test runs over the debate arms alone, not the ensembles and baselines too
    (they get none). Ours stays one family of every system. Failed when both were adjusted over
    every system."""
    b, cases = bench(tmp_path, journal)
    fill(b, cases, {"model-a alone": 4, "model-b alone": 3, "EVINCE, linear cooling": 8, "EVINCE, exponential cooling": 6,
                    "mixture (no debate)": 7, "majority vote (no debate)": 5, b.cot_name: 6, b.sc_name: 2})
    report = summarize(b, cases, label_set(cases, None))
    by = {c["system"]: c for c in report.comparisons}
    arms = [by[n] for n in b.debate_names]
    assert [c["paper_p_bh"] for c in arms] == pytest.approx(E.benjamini_hochberg([c["paper_p"] for c in arms]))
    others = [c for c in report.comparisons if c["system"] not in b.debate_names]
    assert len(others) == 4 and all(c["paper_p_bh"] is None and c["paper_significant"] is None for c in others)
    assert [c["p_bh"] for c in report.comparisons] == pytest.approx(E.benjamini_hochberg([c["p"] for c in report.comparisons]))
    assert "the EVINCE debate arms" in report.config["bh_family"] and "every system" in report.config["bh_family"]
    md = markdown(report, "…")
    assert "over the paper's family" in md and "the EVINCE arms alone (– for the other systems)" in md
    assert "–" in str(comparisons_table(report).columns[9]._cells)


def test_one_minus_wd_between_successive_rounds_per_agent_by_hand() -> None:
    """A: 0.7/0.3 → 0.5/0.5 → 0.5/0.5 (1 − WD 0.8, then 1); B joins at round 1: one pair, 0.6."""
    said = {"agent-a": {0: {"x": 0.7, "y": 0.3}, 1: {"x": 0.5, "y": 0.5}, 2: {"x": 0.5, "y": 0.5}},
            "agent-b": {1: {"x": 1.0}, 2: {"x": 0.6, "z": 0.4}}}
    assert successive(said) == [{"round": 1.0, "agent-a": pytest.approx(0.8)},
                                {"round": 2.0, "agent-a": pytest.approx(1.0), "agent-b": pytest.approx(0.6)}]
    conv = convergence([[{"round": 0, "entropy_mixture": 1.0, "wd": 0.5}, {"round": 2, "entropy_mixture": 0.5, "wd": 0.1}]] * 3,
                       successive=[successive(said)] * 3)
    assert conv["successive_first_agent-a"] == pytest.approx(0.8) and conv["successive_last_agent-a"] == pytest.approx(1.0)
    assert conv["successive_first_agent-b"] == conv["successive_last_agent-b"] == pytest.approx(0.6)
    assert conv["successive_first_agent-a_bca"] == pytest.approx((0.8, 0.8))  # every debate alike: the point itself
    assert conv["one_minus_wd_first"] == pytest.approx(0.5)  # ours beside it: between the agents
    assert "successive_first_agent-a" not in convergence([[{"round": 0, "entropy_mixture": 1.0, "wd": 0.5}]])


def test_rounds_to_convergence_per_schedule(tmp_path: Path, journal: Journal) -> None:
    """Section 7.4.5's figure: per arm, the debates the stop rule ended agreeing, and the rounds
    they held (three vs. four)."""
    outs = [Outcome("c", "s", "x", {}, rounds, 0, 0.0, "", ending=ending)
            for rounds, ending in ((3, "converged"), (4, "converged"), (5, "cap"), (4, "settled_apart"))]
    r = rounds_to_convergence(outs, n_boot=200)
    assert (r["debates"], r["converged"], r["settled_apart"]) == (4, 2, 1)
    assert r["rounds"] == 3.5 and 3.0 <= r["rounds_ci"][0] <= r["rounds_ci"][1] <= 4.0 and r["rounds_all"] == 4.0
    assert "rounds" not in rounds_to_convergence(outs[2:])
    b, cases = bench(tmp_path, journal)
    fill(b, cases, {}, ending="converged")
    report = summarize(b, cases, label_set(cases, None))
    assert report.rows["EVINCE, linear cooling"]["rounds_to_convergence"]["rounds"] == 3.0
    assert "rounds_to_convergence" not in report.rows["model-a alone"]
    assert "Rounds to convergence (7.4.5" in markdown(report, "…") and rounds_table(report).row_count == 2


def test_spelling_keeps_agreeing_answers_apart_before_the_open_rules_and_not_after() -> None:
    labels = label_set([type("C", (), {"disease": d})() for d in ("Dengue", "Hepatitis C", "Malaria")], None)  # type: ignore[misc]
    pairs = [[{"Dengue fever": 0.8, "Malaria": 0.2}, {"Dengue": 0.7, "malaria": 0.3}],     # agree; apart by spelling
             [{"Hepatitis C (HCV)": 0.6, "Dengue": 0.4}, {"hepatitis c": 0.9, "Dengue": 0.1}],  # agree; apart by spelling
             [{"Malaria": 1.0}, {"MALARIA": 1.0}],                                         # agree; case alone
             [{"Malaria": 1.0}, {"Dengue": 1.0}],                                          # disagree
             [{}, {"Dengue": 1.0}]]                                                        # no prediction: left out
    s = spelling_split(pairs, labels)
    assert (s["cases"], s["agreeing"], s["apart_before"], s["apart_after"]) == (4, 3, 2, 0)
    assert (s["label_pairs"], s["labels_apart_before"], s["labels_apart_after"]) == (5, 2, 0)
    assert s["examples"] == ["Dengue fever | Dengue", "Hepatitis C (HCV) | hepatitis c"]
    assert spelling_split(pairs, None)["cases"] == 0


def test_a_broader_name_scores_only_with_credit_related_and_is_counted_apart(tmp_path: Path, journal: Journal) -> None:
    csv = tmp_path / "v.csv"
    csv.write_text("case_id,disease,symptoms\nv1,(vertigo) Paroymsal  Positional Vertigo,spinning\nv2,Migraine,headache\n",
                   encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)
    for credit in (False, True):
        b, _ = bench(tmp_path / str(credit), journal, credit_related=credit)
        labels = label_set(cases, None, related=credit)
        for system in b.systems:
            b.done[("v1", system)] = Outcome("v1", system, cases[0].disease, {"Vertigo": 0.9, "Migraine": 0.1}, 1, 0, 0.0, "")
            b.done[("v2", system)] = Outcome("v2", system, "Migraine", {"Migraine": 1.0}, 1, 0, 0.0, "")
        row = summarize(b, cases, labels).rows["model-a alone"]
        assert (row["acc1"], row["acc1_credited"]) == ((1.0, 1) if credit else (0.5, 0))
    assert "credited to their class (`--credit-related`)" in markdown(summarize(b, cases, labels), "…")


def test_open_labels_let_the_debates_name_the_labels(tmp_path: Path, journal: Journal) -> None:
    b, cases = bench(tmp_path, journal, open_labels=True)
    labels = label_set(cases, None)
    assert b._evince_config(cases[0], labels, "linear").labels is None
    closed, _ = bench(tmp_path / "closed", journal)
    assert closed._evince_config(cases[0], labels, "linear").labels is labels


def test_a_label_a_model_wrote_reads_as_written_in_the_markdown(tmp_path: Path, journal: Journal) -> None:
    """A renamed label is a model's text: in ``OUT.md`` it reads as written (through
    :mod:`outputs.markdown_text`, as in every Markdown export), never as a heading, a link,
    emphasis or HTML, and its line break does not end the list item."""
    b, cases = bench(tmp_path, journal)
    fill(b, cases, {"model-a alone": 4})
    report = summarize(b, cases, label_set(cases, None))
    hostile = "c1: '<b>x</b> | [l](http://e) *y* _z_\n# heading' -> 'Dengue' (synonym)"
    report.label_merges["model-a alone"] = [hostile]
    tokens = MarkdownIt().enable("table").enable("strikethrough").parse(markdown(report, "…"))
    item = [t for t in tokens if t.type == "inline" and t.content.startswith("model-a alone: c1")]
    assert len(item) == 1 and {c.type for c in item[0].children or []} == {"text"}
    assert "".join(c.content for c in item[0].children or []) == "model-a alone: " + hostile.replace("\n", " ")
