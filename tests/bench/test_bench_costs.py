"""What each system of the diagnosis benchmark costs, per agent (tui/bench/report.py): means per
case of the journal's own figures (protocols/core/costs.py), the ensembles and the vote counting
the runs they combine.

Scripted backends that report every figure (tests/helpers/scripted_backends.py, ``measured``), so each
figure of the table can be summed again from the journal's rows of the debates each system ran.
(Scripted: the point is the bookkeeping, not a model's skill.)
"""

from __future__ import annotations

from pathlib import Path

from backends.base import SamplingOptions
from protocols.core.costs import Ledger, journal_calls
from store.journal import Journal
from store.queries import Queries
from tests.helpers.diagnosis_bench import CASES, sized_answer
from tests.helpers.scripted_backends import ScriptedBackend
from tui.bench.diagnosis import Bench, BenchConfig, label_set, read_cases, summarize
from tui.bench.report import COST_TITLES, cost_rows, cost_table, markdown


async def test_each_systems_agents_cost_per_case_is_what_its_debates_journalled(tmp_path: Path, journal: Journal) -> None:
    csv = tmp_path / "cases.csv"
    csv.write_text(CASES, encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)[:2]
    config = BenchConfig(cases=csv, models=("model-a", "model-b"), out=tmp_path / "out" / "diagnosis", schedules=("none",),
                         n_boot=20, design="quick", max_rounds=1, k=2)
    backends = {m: ScriptedBackend(m, [], answer=sized_answer(30), measured=True) for m in ("model-a", "model-b")}
    bench = Bench(config, backends, {m: SamplingOptions(max_tokens=48, temperature=0.0) for m in backends}, journal)
    labels = label_set(cases, None)
    await bench.run(cases, labels)
    report = summarize(bench, cases, labels)
    rows = {(system, agent): cells for system, agent, cells in cost_rows(report)}

    def journalled(system: str) -> dict[str, Ledger]:
        """Per agent ("role (model)"), the calls of every run the system made, from the journal."""
        ledgers: dict[str, Ledger] = {}
        for case in cases:
            for debate_id in bench.done[(case.case_id, system)].debate_id.split(","):
                debate = Queries(journal).debate(debate_id)
                assert debate is not None
                for call in journal_calls(debate):
                    ledgers.setdefault(f"{call['role']} ({call['model_id']})", Ledger()).add(call)
        return ledgers

    debate_name = bench.debate_names[0]
    for system in (bench.single_names[0], bench.cot_name, bench.sc_name, debate_name):
        ledgers = journalled(system)
        assert ledgers and {agent for s, agent in rows if s == report_name(report, system)} == set(ledgers), system
        for agent, ledger in ledgers.items():
            cost = ledger.total
            cells = rows[(report_name(report, system), agent)]
            assert cells[:4] == [f"{cost.calls / 2:.1f}", f"{cost.prompt_tokens / 2:,.0f}",
                                 f"{cost.cached_tokens.total / 2:,.0f}", f"{cost.completion_tokens / 2:,.0f}"], (system, agent)
            assert cells[4:8] == [f"{cost.wait_s.total / 2:.1f}", f"{cost.prefill_s.total / 2:.1f}",
                                  f"{cost.decode_s.total / 2:.1f}", f"{cost.duration_s / 2:.1f}"], (system, agent)
            assert cells[8] == f"{cost.completion_tokens / cost.decode_s.total:.1f}"
    assert {agent for s, agent in rows if s == debate_name} == {"agent-a (model-a)", "agent-b (model-b)"}
    # an ensemble costs its two models' runs alone
    ensemble = report.rows[bench.ensemble_names[0]]["costs"]["agents"]
    assert set(ensemble) == {"agent-a (model-a)", "agent-a (model-b)"}

    md = markdown(report, "symposium bench diagnosis …")
    assert "| system | agent | " + " | ".join(COST_TITLES) + " |" in md
    assert f"| {debate_name} | agent-b (model-b) | " + " | ".join(rows[(debate_name, "agent-b (model-b)")]) + " |" in md
    assert cost_table(report).row_count == len(rows)


def report_name(report, system: str) -> str:  # type: ignore[no-untyped-def]
    """A system as the report names it (self-consistency with its k)."""
    k = report.rows[system].get("k")
    return f"{system}, k={k}" if k else system
