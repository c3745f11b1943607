"""The diagnosis benchmark on vLLM's engine: several cases in flight at once (``--jobs``) on the
one engine, which batches them, give the same results as one at a time.

Greedy decoding throughout (the agents' temperature 0, which CRIT follows), so nothing may
depend on how many cases share the engine's batches: every system's prediction for every case
must be identical at one job and at three. Real engine (SmolLM2, the session's), real journal;
``benchmarks/vllm_batching.py`` measures the speed of the same thing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.base import Backend, SamplingOptions
from backends.registry import Registry
from store.journal import Journal
from tui.bench.diagnosis import Bench, BenchConfig, label_set, read_cases

pytestmark = pytest.mark.vllm

CASES = ("case_id,disease,symptoms\n"
         "c1,Malaria,chills;vomiting;high_fever;sweating;headache;nausea\n"
         "c2,Dengue,skin_rash;joint_pain;high_fever;headache;pain_behind_the_eyes\n"
         "c3,Typhoid,constipation;high_fever;abdominal_pain;toxic_look_(typhos);belly_pain\n")


async def run_with_jobs(jobs: int, backends: dict[str, Backend], tmp_path: Path) -> dict[tuple[str, str], dict[str, float]]:
    csv = tmp_path / "cases.csv"
    csv.write_text(CASES, encoding="utf-8")
    cases = read_cases(csv, limit=None, seed=0)
    a, b = backends
    config = BenchConfig(cases=csv, models=(a, b), out=tmp_path / f"jobs{jobs}" / "diagnosis", design="quick",
                         schedules=("exponential",), jobs=jobs, seed=0, n_boot=10)
    greedy = SamplingOptions(max_tokens=48, temperature=0.0, repeat_penalty=1.0)
    with Journal(tmp_path / f"jobs{jobs}.db") as journal:
        bench = Bench(config, backends, dict.fromkeys(backends, greedy), journal)
        await bench.run(cases, label_set(cases, None))
    assert len(bench.done) == len(cases) * len(bench.systems)
    return {key: outcome.prediction for key, outcome in bench.done.items()}


async def test_cases_in_flight_at_once_give_the_same_results_as_one_at_a_time(
        vllm_smollm: Backend, registry: Registry, tmp_path: Path) -> None:
    from backends.lifecycle import Engines
    from tests.conftest import vllm_entry, vllm_model_folder

    async with Engines() as engines:  # model B: a second entry on the same folder, so the same engine
        other = await engines.load_entry(vllm_entry(registry, vllm_model_folder(), "smollm2-135m-vllm-b"))
        backends: dict[str, Backend] = {vllm_smollm.model_id: vllm_smollm, other.model_id: other}
        one = await run_with_jobs(1, backends, tmp_path)
        three = await run_with_jobs(3, backends, tmp_path)
    assert one == three
    assert any(one.values()), "no system predicted anything: the comparison would be empty"
