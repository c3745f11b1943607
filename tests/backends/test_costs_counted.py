"""The cost figures the journal keeps are llama.cpp's own: a short real debate on the bundled
SmolLM2, every role on one model, and the tokens its calls say they ran against the count
llama.cpp keeps of the tokens it decoded (``llama_perf_context``: n_p_eval + n_eval, over every
context the model's KV pool had).

Every token llama.cpp runs belongs to exactly one journalled call: a prompt's tokens after the
prefix its agent's cache (or another agent's shared prefix) held, a scoring call's candidate
rows, a reply's tokens (each generated token is decoded before the next is sampled; the token
that ends a reply is not). So the sum of the journal's ``prompt_tokens_evaluated`` and
``completion_tokens`` is llama.cpp's count exactly, and each call's tokens taken from the cache
are the rest of its prompt. A reply cut by a stop string would have one generated token llama.cpp
did not run: the bundled model ends its turns with its end-of-turn token, and the check below
would say by how many they differ if it did not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from backends.registry import Registry
from backends.sources import resolve_path
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.costs import Ledger, journal_calls
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries

OPTS = SamplingOptions(max_tokens=48, temperature=0.7, seed=11)
LABELS = LabelSet(["Jaundice", "Hepatitis B", "Malaria", "Dengue", "Common Cold"])


@pytest.mark.model
async def test_the_journals_token_counts_are_llama_cpps_own(registry: Registry, tmp_path: Path) -> None:
    entry = registry.get("smollm2-135m")
    model = LlamaCppBackend(entry, resolve_path(entry))  # its own: no other test's calls in its counters
    try:
        assert model.kv_layout == "shared" and model.lockstep_width > 1  # the judge's calls may decode together
        config = evince.EvinceConfig.small_model(case="Symptoms: itching, vomiting, yellowish skin, dark urine",
                                                 labels=LABELS, max_rounds=0, scoring="scored", turn_tokens=32,
                                                 crit_tokens=32, recommendations=False)
        agents = evince.EvinceAgents(Agent("agent-a", model, OPTS), Agent("agent-b", model, OPTS), Agent("judge", model, OPTS))
        with Journal(tmp_path / "j.db") as journal:
            final = await drive(evince.run(config, agents, debate_id="counted"), journal)
            debate = Queries(journal).debate("counted")
        stats = model.kv_stats()
    finally:
        await model.aclose()
    assert final is not None and final.status == "finished" and debate is not None
    calls = journal_calls(debate)
    purposes = {c["purpose"] for c in calls}
    assert {"turn", "score", "crit"} <= purposes, purposes  # replies, scoring and the judge: every kind of call
    assert all(c["error"] is None for c in calls)

    journalled = sum(c["prompt_tokens_evaluated"] + c["completion_tokens"] for c in calls)
    assert journalled == stats["tokens_decoded"], (journalled, stats)

    for c in calls:  # what each call took from the cache is its prompt less what it ran
        assert c["cached_tokens"] is not None and 0 <= c["cached_tokens"] <= c["prompt_tokens"]
        if c["purpose"] != "score":  # a scoring call also ran its candidates' rows
            assert c["cached_tokens"] == c["prompt_tokens"] - c["prompt_tokens_evaluated"]
        assert None not in (c["wait_s"], c["prefill_s"], c["decode_s"])
        assert c["wait_s"] + c["prefill_s"] + c["decode_s"] <= c["duration_s"] + 1e-3  # each rounded to 0.1 ms
    assert any(c["cached_tokens"] > 0 for c in calls)  # the agents' growing transcripts were reused

    ledger = Ledger(calls)  # the tables' totals are the same sums
    assert ledger.total.completion_tokens == sum(c["completion_tokens"] for c in calls)
    assert ledger.total.cached_tokens.whole and ledger.total.cached_tokens.total == sum(c["cached_tokens"] for c in calls)
