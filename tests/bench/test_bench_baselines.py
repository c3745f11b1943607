"""Equal-cost baselines and the paper's statistics in the
diagnosis benchmark.

Does debate beat a vote at the same cost? ``cot`` is one reasoned answer of one model and
``self-consistency`` k of them, majority-voted, with k set from what the debates measurably
generated per case. Scripted backends make every token count known: model A's replies are
sized by what it is asked (a refutation, a reasoning request, a prediction), so the test can
lengthen the debate and watch k follow. The report then shows the arms beside the debate with
tokens per case and the accuracy-vs-tokens plot, and the paper's statistics beside ours.
(Scripted: the point is the bookkeeping, not a model's skill.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from backends.base import SamplingOptions
from protocols.measures import evaluation as E
from store.journal import Journal
from tests.helpers.diagnosis_bench import CASES, sized_answer
from tests.helpers.scripted_backends import ScriptedBackend
from tui.bench.diagnosis import Bench, BenchConfig, choose_k, label_set, read_cases, summarize, vote
from tui.bench.report import cost_plot, markdown, terminal_table, write_outputs


def _bench(tmp_path: Path, journal: Journal, *, debate_words: int, k: int | None = None,
           design: str = "quick") -> tuple[Bench, list, Any]:
    csv = tmp_path / "cases.csv"
    csv.write_text(CASES, encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)
    config = BenchConfig(cases=csv, models=("model-a", "model-b"), out=tmp_path / f"out-{debate_words}" / "diagnosis",
                         schedules=("none", "linear"), n_boot=50, design=design, k=k,
                         judge="model-a" if design == "paper" else None, max_rounds=1)
    backends = {m: ScriptedBackend(m, [], answer=sized_answer(debate_words)) for m in ("model-a", "model-b")}
    options = {m: SamplingOptions(max_tokens=48, temperature=0.0) for m in backends}
    return Bench(config, backends, options, journal), cases, label_set(cases, None)


async def test_k_follows_the_debates_measured_generated_tokens(tmp_path: Path, journal: Journal) -> None:
    """k = round(debate's mean generated tokens per case / cot's); a debate that says more
    buys the vote more samples, and --k overrides the measurement."""
    ks = {}
    for words in (0, 150):
        bench, cases, labels = _bench(tmp_path, journal, debate_words=words)
        await bench.run(cases, labels)
        debate = np.mean([bench.done[(c.case_id, n)].generated_tokens for c in cases for n in bench.debate_names])
        cot = np.mean([bench.done[(c.case_id, bench.cot_name)].generated_tokens for c in cases])
        assert debate > 0 and cot > 0
        assert bench.k == choose_k(debate, cot) == max(1, round(debate / cot))
        sc = [bench.done[(c.case_id, bench.sc_name)] for c in cases]
        assert {o.samples for o in sc} == {bench.k}
        assert all(len(o.debate_id.split(",")) == bench.k for o in sc)  # each sample journalled
        ks[words] = bench.k
    assert ks[150] > ks[0] >= 1, ks
    fixed, cases, labels = _bench(tmp_path, journal, debate_words=300, k=2)
    await fixed.run(cases, labels)
    assert fixed.k == 2 and {fixed.done[(c.case_id, fixed.sc_name)].samples for c in cases} == {2}


def test_choose_k_and_the_vote_by_hand() -> None:
    assert choose_k(1000, 250) == 4 and choose_k(1100, 250) == 4 and choose_k(1150, 250) == 5
    assert choose_k(100, 250) == 1 and choose_k(0, 250) == 1 and choose_k(500, 0) == 1
    # two votes each for Dengue and Malaria; Malaria's mean probability is higher: it ranks first
    samples = [{"Dengue": 0.6, "Malaria": 0.4}, {"Dengue": 0.5, "Malaria": 0.45}, {"Malaria": 0.9, "Dengue": 0.1},
               {"malaria": 0.8, "Typhoid": 0.2}, {}]
    voted = vote(samples)
    assert list(voted)[0] == "Malaria" and E.top1(voted) == "malaria"
    assert voted["Malaria"] == pytest.approx(0.5, abs=1e-5) and voted["Dengue"] == pytest.approx(0.5, abs=1e-5)
    assert sum(voted.values()) == pytest.approx(1.0) and "Typhoid" not in voted  # a share is a vote won
    assert vote([{}, {}]) == {} and vote([{"Dengue": 1.0}]) == {"Dengue": 1.0}


@pytest.mark.parametrize("design", ["quick", "paper"])
async def test_the_report_shows_the_baselines_beside_the_debate_with_their_cost(tmp_path: Path, journal: Journal,
                                                                                 design: str) -> None:
    bench, cases, labels = _bench(tmp_path, journal, debate_words=60, design=design)
    assert bench.cot_name == "cot (model-a)" and bench.sc_name == "self-consistency (model-a)"
    assert bench.cot_name in bench.systems and bench.sc_name in bench.systems
    await bench.run(cases[:2], labels)
    report = summarize(bench, cases[:2], labels)
    for name in (bench.cot_name, bench.sc_name, *bench.debate_names):
        row = report.rows[name]
        assert row["generated_tokens_per_case"] > 0 and row["prompt_tokens_per_case"] > 0
        assert row["tokens_per_case"] == pytest.approx(row["generated_tokens_per_case"] + row["prompt_tokens_per_case"])
        assert "acc1_ci" in row and row["seconds_per_case"] >= 0
    assert report.rows[bench.sc_name]["k"] == bench.k
    assert report.rows[bench.sc_name]["generated_tokens_per_case"] == pytest.approx(
        bench.k * report.rows[bench.cot_name]["generated_tokens_per_case"])  # same scripted answers, k of them
    md = markdown(report, "symposium bench diagnosis …")
    assert f"| self-consistency (model-a), k={bench.k} |" in md and "| cot (model-a) |" in md
    assert "generated tok/case | prompt tok/case" in md and "Acc@1 against generated tokens per case" in md
    plot = cost_plot(report)
    assert f"self-consistency (model-a), k={bench.k}: Acc@1" in plot and "EVINCE, linear cooling: Acc@1" in plot
    written = write_outputs(report, tmp_path / "out" / "diagnosis", "symposium bench diagnosis …")
    cost = next(p for p in written if p.name.endswith(".cost.svg")).read_text(encoding="utf-8")
    assert "against generated tokens per case" in cost and "cot (model-a)" in cost and cost.count("<circle") == len(report.systems)
    assert "self-consistency" in str(terminal_table(report).columns[0]._cells)


def test_the_papers_interval_is_scipys_bca_on_20_replicates() -> None:
    hits = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0], dtype=float)
    low, high, sd = E.bca_interval(np.mean, hits, seed=3)
    expected = stats.bootstrap((hits,), np.mean, n_resamples=20, method="BCa", vectorized=False, paired=True,
                               rng=np.random.default_rng(3))
    assert (low, high) == pytest.approx(tuple(expected.confidence_interval))
    assert sd == pytest.approx(np.std(expected.bootstrap_distribution, ddof=1))
    assert low < hits.mean() < high
    assert E.bca_interval(np.mean, np.ones(5)) == (1.0, 1.0, 0.0)  # every case a hit: nothing can vary
    assert all(np.isnan(E.bca_interval(np.mean, [1.0])))


def test_cliffs_delta_and_the_test_on_replicates_by_hand() -> None:
    # pairs (3,1) (3,2) (4,1) (4,2) larger, (3,5) (4,5) smaller: (4 - 2) / 6
    assert E.cliffs_delta([3, 4], [1, 2, 5]) == pytest.approx(1 / 3)
    assert E.cliffs_delta([1, 2, 3], [2, 2, 2]) == 0.0 and E.cliffs_delta([2], [1]) == 1.0
    mine = np.array([1, 1, 0, 1, 1, 0, 1, 1], dtype=float)
    same = E.replicate_test(mine, mine)
    assert same["p"] == 1.0 and same["cliffs_delta"] == 0.0  # paired draws: identical systems, identical replicates
    worse = E.replicate_test(mine, np.zeros(8))
    assert worse["cliffs_delta"] == 1.0 and worse["p"] < 0.001 and worse["versus_mean"] == 0.0
    assert len(E.replicates(lambda idx: float(mine[idx].mean()), 8)) == E.PAPER_REPLICATES == 20


async def test_the_report_gives_the_papers_statistics_and_convergence(tmp_path: Path, journal: Journal) -> None:
    bench, cases, labels = _bench(tmp_path, journal, debate_words=10)
    await bench.run(cases, labels)
    report = summarize(bench, cases, labels)
    paper = report.rows["model-a alone"]["paper"]
    assert paper["acc1"]["value"] == pytest.approx(0.5) and set(paper) == {"acc1", "acc3", "mrr", "brier", "ece"}
    low, high = paper["acc1"]["bca"]
    assert low <= 0.5 <= high and paper["acc1"]["sd"] > 0
    for comp in report.comparisons:
        assert {"cliffs_delta", "paper_p", "paper_p_bh", "paper_cliffs_delta", "paper_significant"} <= set(comp)
    # Both agents say Malaria .7 / Dengue .3 every round: P_f is that, 1 − WD is 1, nothing changes.
    conv = report.rows["EVINCE, none cooling"]["convergence"]
    h = -(0.7 * np.log2(0.7) + 0.3 * np.log2(0.3))
    assert conv["debates"] == 4 and conv["entropy_first"] == pytest.approx(h) and conv["entropy_change"] == pytest.approx(0)
    assert conv["one_minus_wd_last"] == pytest.approx(1.0) and conv["entropy_first_bca"] == pytest.approx((h, h))
    # the paper's figure beside it: each agent's successive rounds alike, 1 − WD = 1; the endings recorded
    assert conv["successive_first_agent-a"] == pytest.approx(1.0) and conv["successive_last_agent-b"] == pytest.approx(1.0)
    debate = bench.done[(cases[0].case_id, "EVINCE, none cooling")]
    assert debate.ending and debate.successive and debate.successive[0]["round"] == 1.0
    assert report.rows["EVINCE, none cooling"]["rounds_to_convergence"]["debates"] == 4
    md = markdown(report, "symposium bench diagnosis …")
    assert "The paper's statistics (Chang, 7.4.1–7.4.1.3)" in md and "Debate convergence (7.4.1.2)" in md
    assert "paper Cliff's Δ" in md


async def test_a_synonym_a_model_gives_is_scored_and_listed(tmp_path: Path, journal: Journal) -> None:
    """Scoring by the label set's rules: "Dengue fever" (a synonym of the class set's map)
    scores as "Dengue", and the report lists the rename."""
    bench, cases, labels = _bench(tmp_path, journal, debate_words=0)
    name = bench.single_names[0]
    from tui.bench.diagnosis import Outcome
    bench.done[("c3", name)] = Outcome("c3", name, "Dengue", {"Dengue fever": 0.9, "Malaria": 0.1}, 1, 0, 0.0, "")
    report = summarize(bench, [cases[2]], labels)
    assert report.rows[name]["acc1"] == 1.0 and report.rows[name]["label_merges"] == 1
    assert report.label_merges[name] == ["c3: 'Dengue fever' -> 'Dengue' (synonym)"]
    assert "- model-a alone: c3: 'Dengue fever' -> 'Dengue' (synonym)" in markdown(report, "…")
    assert summarize(bench, [cases[2]], None).rows[name]["acc1"] == 0.0  # spelling alone: a miss
