"""``symposium bench diagnosis`` (the headline table of docs/diagnosis-benchmark.md) on cases whose answers are known.

Scripted backends give each model a fixed belief, so every figure of the report can be
worked out by hand (below, per case) and compared: accuracy@1/@3, MRR, the mixture and the
majority vote, EVINCE's journalled debates, the cache that lets a cut-off run continue, and
the report files. Also the bad-input paths: missing columns, a bad synonyms line, a
reproducible subset. (Scripted: the point is the bookkeeping, not a model's skill.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from store.journal import Journal
from tests.helpers.scripted_backends import ScriptedBackend
from tui.bench.diagnosis import Bench, BenchConfig, label_set, read_cases, summarize
from tui.bench.report import markdown, write_outputs

A_SAYS = '{"predictions": [{"label": "Malaria", "probability": 0.7, "argument": "a"}, {"label": "Dengue", "probability": 0.3, "argument": "b"}], "arguments": []}'
B_SAYS = '{"predictions": [{"label": "Dengue", "probability": 0.6, "argument": "a"}, {"label": "Malaria", "probability": 0.4, "argument": "b"}], "arguments": []}'
CRIT_SAYS = '{"claim": "x", "reasons": [], "rival_reasons": [], "score": 7, "justification": "ok"}'
CASES = "case_id,disease,symptoms\nc1,Malaria,fever;chills\nc2,Malaria,sweating\nc3,Dengue,rash;joint_pain\nc4,Typhoid,rose_spots\n"


def _bench(tmp_path: Path, journal: Journal, *, b_says: str = B_SAYS, judge: str = "model-j") -> tuple[Bench, list, object]:
    csv = tmp_path / "cases.csv"
    csv.write_text(CASES, encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)
    config = BenchConfig(cases=csv, models=("model-a", "model-b"), out=tmp_path / "out" / "diagnosis",
                         schedules=("none",), n_boot=50, max_rounds=1, judge=judge)
    backends = {"model-a": ScriptedBackend("model-a", [A_SAYS] * 50), "model-b": ScriptedBackend("model-b", [b_says] * 50),
                "model-j": ScriptedBackend("model-j", [CRIT_SAYS] * 100)}
    options = {m: SamplingOptions(max_tokens=48, temperature=0.0) for m in backends}
    return Bench(config, backends, options, journal), cases, label_set(cases, None)


async def test_every_figure_matches_the_hand_worked_answer(tmp_path: Path, journal: Journal) -> None:
    bench, cases, labels = _bench(tmp_path, journal)
    await bench.run(cases, labels)
    report = summarize(bench, cases)
    rows = report.rows
    # truths M, M, D, T. A ranks M > D; B ranks D > M; mixture .55 M / .45 D; vote: 1–1, A more sure: M
    assert rows["model-a alone"]["acc1"] == pytest.approx(2 / 4)
    assert rows["model-a alone"]["acc3"] == pytest.approx(3 / 4)
    assert rows["model-a alone"]["mrr"] == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    assert rows["model-b alone"]["acc1"] == pytest.approx(1 / 4)
    assert rows["model-b alone"]["mrr"] == pytest.approx((0.5 + 0.5 + 1 + 0) / 4)
    assert rows["mixture (no debate)"]["acc1"] == pytest.approx(2 / 4)
    assert rows["majority vote (no debate)"]["acc1"] == pytest.approx(2 / 4)
    assert rows["majority vote (no debate)"]["acc3"] == pytest.approx(2 / 4)  # it names one label only
    debate = rows["EVINCE, none cooling"]
    assert debate["cases"] == 4 and debate["rounds"] >= 1 and debate["tokens_per_case"] > 0
    lo, hi = rows["model-a alone"]["acc1_ci"]
    assert 0 <= lo <= 0.5 <= hi <= 1
    # every comparison is against the better single model (A), with a p-value
    assert {c["versus"] for c in report.comparisons} == {"model-a alone"}
    assert all(0 <= c["p"] <= 1 and 0 <= c["p_bh"] <= 1 for c in report.comparisons)
    # each run is a journalled debate: 4 cases × (2 singles + cot + 1 EVINCE + k self-consistency samples)
    n = journal.conn.execute("SELECT COUNT(*) FROM debates WHERE status = 'finished'").fetchone()[0]
    assert bench.k is not None and bench.k >= 1 and n == 4 * (4 + bench.k)
    written = write_outputs(report, tmp_path / "out" / "diagnosis", "symposium bench diagnosis …")
    assert {p.suffix for p in written} >= {".md", ".json", ".svg"}
    data = json.loads((tmp_path / "out" / "diagnosis.json").read_text(encoding="utf-8"))
    assert data["metrics"]["model-a alone"]["acc1"] == pytest.approx(0.5) and len(data["cases"]) == 4 * 7


async def test_a_second_run_takes_finished_cases_from_the_cache(tmp_path: Path, journal: Journal) -> None:
    bench, cases, labels = _bench(tmp_path, journal)
    await bench.run(cases[:2], labels)
    again, _, _ = _bench(tmp_path, journal)
    assert len(again.done) == 2 * len(again.systems)
    await again.run(cases, labels)
    assert journal.conn.execute("SELECT COUNT(*) FROM debates").fetchone()[0] == 4 * (4 + again.k)  # none run twice


async def test_a_model_that_gives_no_prediction_is_not_given_an_invented_one(tmp_path: Path, journal: Journal) -> None:
    """Model B never gives a usable distribution: the mixture is model A's
    alone and the vote A's top label, where an invented {"unknown": 1.0} used to halve A's
    probabilities and win the mixture; the report counts the cases without a prediction."""
    bench, cases, labels = _bench(tmp_path, journal, b_says="I would rather not say.")
    await bench.run(cases, labels)
    report = summarize(bench, cases)
    rows = report.rows
    assert rows["model-b alone"]["no_prediction"] == 4 and rows["model-a alone"]["no_prediction"] == 0
    for ensemble in ("mixture (no debate)", "majority vote (no debate)"):
        assert rows[ensemble]["acc1"] == pytest.approx(rows["model-a alone"]["acc1"]) == pytest.approx(2 / 4)
        assert rows[ensemble]["no_prediction"] == 0 and rows[ensemble]["one_model_only"] == 4
    predicted = {label for o in report.outcomes for label in o["prediction"]}
    assert "unknown" not in predicted
    mixture = next(o for o in report.outcomes if o["system"] == "mixture (no debate)")
    assert mixture["prediction"] == pytest.approx({"Malaria": 0.7, "Dengue": 0.3})
    text = markdown(report, "symposium bench diagnosis …")
    assert "| model-b alone |" in text and "| 4 |" in text and "0 (+4 from one model)" in text


async def test_a_self_judging_run_says_so_in_the_report_and_in_every_debate(tmp_path: Path, journal: Journal) -> None:
    """Model A named as the CRIT judge: allowed, but the md, the json and each EVINCE debate's
    journal (the notice the app shows) say that a debater judges itself."""
    bench, cases, labels = _bench(tmp_path, journal, judge="model-a")
    bench.backends["model-a"].replies = [A_SAYS, *([A_SAYS, CRIT_SAYS] * 40)]
    await bench.run(cases[:1], labels)
    report = summarize(bench, cases[:1])
    written = write_outputs(report, tmp_path / "out" / "diagnosis", "symposium bench diagnosis …")
    md = next(p for p in written if p.suffix == ".md").read_text(encoding="utf-8")
    assert "SELF-JUDGING: the CRIT judge model-a is also model A" in md
    data = json.loads((tmp_path / "out" / "diagnosis.json").read_text(encoding="utf-8"))
    assert data["config"]["self_judging"] == ["agent-a"] and "SELF-JUDGING" in data["warnings"][0]
    notices = journal.conn.execute("SELECT kind, text FROM notices").fetchall()
    assert [k for k, _ in notices] == ["self_judging"] and "7.2 (1)(iii)" in notices[0][1]


def test_bad_case_files_and_synonyms_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("id,disease\n1,Malaria\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.csv: missing column\(s\) case_id, symptoms"):
        read_cases(bad, limit=None, seed=0)
    good = tmp_path / "cases.csv"
    good.write_text(CASES, encoding="utf-8")
    synonyms = tmp_path / "syn.txt"
    synonyms.write_text("# comment\nbreakbone fever = Dengue\nno equals sign here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"syn\.txt:3: expected 'synonym = label'"):
        label_set(read_cases(good, limit=None, seed=0), synonyms)
    subset = [c.case_id for c in read_cases(good, limit=2, seed=7)]
    assert subset == [c.case_id for c in read_cases(good, limit=2, seed=7)] and len(subset) == 2


async def test_a_protocol_that_declares_how_to_diagnose_runs_as_an_arm(tmp_path: Path, journal: Journal) -> None:
    """``--protocol multiagent``: the registered protocol runs on every case with the two models
    seated as its definition says (three agents: A, B and A again), and is scored like any arm.
    Model A answers the case's first symptom's disease, B always Dengue: the vote follows A."""
    csv = tmp_path / "cases.csv"
    csv.write_text(CASES, encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)
    config = BenchConfig(cases=csv, models=("model-a", "model-b"), out=tmp_path / "out" / "diagnosis",
                         schedules=("none",), n_boot=50, max_rounds=1, judge="model-a", protocols=("multiagent",))

    def a_answers(messages: Any, schema: Any) -> str:
        text = messages[-1].content
        if '"reasoning"' not in text:
            return A_SAYS  # the EVINCE arms
        said = {"fever": "Malaria", "sweating": "Malaria", "rash": "Dengue", "rose": "Typhoid"}
        case = messages[1].content  # the question, as the agent first read it (its history keeps it)
        return json.dumps({"reasoning": "r", "answer": next((d for s, d in said.items() if s in case), "Malaria")})

    def b_answers(messages: Any, schema: Any) -> str:
        return json.dumps({"reasoning": "r", "answer": "Dengue"}) if '"reasoning"' in messages[-1].content else B_SAYS

    backends = {"model-a": ScriptedBackend("model-a", [], answer=a_answers),
                "model-b": ScriptedBackend("model-b", [], answer=b_answers)}
    options = {m: SamplingOptions(max_tokens=48, temperature=0.0) for m in backends}
    bench = Bench(config, backends, options, journal)
    assert bench.protocol_names == ["Multiagent debate"] and bench.systems[-1] == "Multiagent debate"
    await bench.run(cases, label_set(cases, None))
    row = summarize(bench, cases).rows["Multiagent debate"]
    assert row["cases"] == 4 and row["acc1"] == pytest.approx(4 / 4) and row["tokens_per_case"] > 0
    ran = journal.conn.execute("SELECT COUNT(*) FROM debates WHERE protocol = 'multiagent' AND status = 'finished'").fetchone()[0]
    seated = journal.conn.execute("SELECT role, model_id FROM participants p JOIN debates d ON d.id = p.debate_id "
                                  "WHERE d.protocol = 'multiagent' ORDER BY p.id LIMIT 3").fetchall()
    assert ran == 4 and [tuple(r) for r in seated] == [("agent-1", "model-a"), ("agent-2", "model-b"), ("agent-3", "model-a")]


def test_a_protocol_that_cannot_diagnose_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--protocol socrasynth: the protocol does not say how to diagnose a case; "
                                         "protocols that do: multiagent"):
        BenchConfig(cases=tmp_path / "c.csv", models=("a", "b"), out=tmp_path / "o", judge="a", protocols=("socrasynth",))
