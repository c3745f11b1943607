"""Cases in flight on llama.cpp (``prepare_backends``): decoded together on the model's shared
pool, or, where the entry asks for one reply at a time, a context per case."""

from __future__ import annotations

import asyncio

import pytest

from backends.llamacpp import LlamaCppBackend
from backends.registry import Registry
from backends.sources import resolve_path
from tui.bench.diagnosis import DEFAULT_JOBS, default_jobs, prepare_backends


@pytest.mark.model
def test_cases_in_flight_are_decoded_together_unless_the_entry_says_one_at_a_time(registry: Registry) -> None:
    entry = registry.get("smollm2-135m")
    together = LlamaCppBackend(entry, resolve_path(entry))
    alone = LlamaCppBackend(entry.model_copy(update={"max_concurrency": 1}), resolve_path(entry))
    try:
        prepare_backends({"a": together, "b": alone}, 16)
        assert together.lockstep_width == 16 and together.kv_layout == "shared" and together.parallel == 1
        assert alone.parallel == 16 and alone.kv_layout == "per_agent"
        prepare_backends({"a": together}, 200)
        assert together.lockstep_width == 63, "a step holds at most 63 rows (each computed as alone)"
    finally:
        for backend in (together, alone):
            asyncio.run(backend.aclose())
    assert default_jobs() == DEFAULT_JOBS == 4
