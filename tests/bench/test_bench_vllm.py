"""The diagnosis benchmark on vLLM's engine: several cases in flight at once (``--jobs``) on the
one engine, which batches them.

What this can promise is narrower than on llama.cpp, whose lockstep decoding is exact (the
results at any number of cases in flight equal those one at a time: tests/backends/test_lockstep.py
and tests/bench). vLLM on a CPU is not batch-invariant: a sequence's logits move in their last
bits with what shares its batch (vLLM's batch-invariant mode, ``VLLM_BATCH_INVARIANT=1``,
needs a GPU), so where a 135M model's top tokens nearly tie, greedy decoding may take either,
and three cases in flight may predict otherwise than one at a time. What must hold, and is
checked here on the real engine: every system finishes every case at three in flight, and every
reply reaches the request that asked for it (requests in flight together, each held by its
schema to a word of its own, get back their own word: exact, whatever the numerics).
``benchmarks/vllm_batching.py`` measures the speed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from backends.base import Backend, Message, SamplingOptions
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


async def test_cases_in_flight_at_once_all_finish_on_the_one_engine(
        vllm_smollm: Backend, registry: Registry, tmp_path: Path) -> None:
    from backends.lifecycle import Engines
    from tests.conftest import vllm_entry, vllm_model_folder

    async with Engines() as engines:  # model B: a second entry on the same folder, so the same engine
        other = await engines.load_entry(vllm_entry(registry, vllm_model_folder(), "smollm2-135m-vllm-b"))
        backends: dict[str, Backend] = {vllm_smollm.model_id: vllm_smollm, other.model_id: other}
        three = await run_with_jobs(3, backends, tmp_path)
    assert {case for case, _ in three} == {"c1", "c2", "c3"}
    assert any(three.values()), "no system predicted anything"


WORDS = ("amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "jasper")


async def test_requests_in_flight_together_each_get_their_own_reply(vllm_smollm: Backend) -> None:
    """Ten requests at once on the one engine, each constrained to its own word: a reply, or a
    piece of one streamed, handed to another request would carry another word."""
    greedy = SamplingOptions(max_tokens=16, temperature=0.0, repeat_penalty=1.0)

    async def ask(i: int, word: str) -> str:
        schema = {"type": "object", "properties": {"word": {"const": word}}, "required": ["word"],
                  "additionalProperties": False}
        question = [Message("user", f"Reply with the JSON object that holds the word {word}.")]
        stream = vllm_smollm.session(f"word-{i}").chat(question, greedy, schema=schema)
        streamed = "".join([piece async for piece in stream])
        assert stream.completion is not None and stream.completion.text == streamed, (streamed, stream.completion)
        return streamed

    replies = await asyncio.gather(*(ask(i, w) for i, w in enumerate(WORDS)))
    assert [json.loads(r).get("word") for r in replies] == list(WORDS), replies
