"""The vllm backend on vLLM's real engine: SmolLM2 (the bundled GGUF converted to a Hugging Face
folder), on vLLM's CPU build in CI (``make test-vllm``) or its CUDA build on a GPU.

What the backend contract promises (streaming, structured output, scoring, cancelling, usage)
is checked in tests/backends/test_backend_contract.py, whose vLLM cases run on the same
session-wide engine; here is what only vLLM's engine does: one engine for every event loop,
its engine arguments, a dead engine, and the engine's processes gone when it is closed.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest

from backends.base import Backend, BackendError, Message, SamplingOptions
from backends.lifecycle import Engines
from backends.registry import Registry
from tests.conftest import require_vllm, vllm_entry, vllm_model_folder

pytestmark = pytest.mark.vllm

QUESTION = [Message("user", "What is the capital of France? Answer with the city name only.")]
GREEDY = SamplingOptions(max_tokens=16, temperature=0.0, repeat_penalty=1.0)


def engine_processes() -> set[int]:
    """This process's descendants but multiprocessing's resource tracker (which serves the whole
    process): vLLM's engine processes, EngineCore and its workers."""
    import psutil

    found = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if not any("resource_tracker" in part for part in child.cmdline()):
                found.add(child.pid)
        except psutil.Error:
            continue
    return found


def alive(pids: set[int]) -> set[int]:
    import psutil

    _gone, still = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=30)
    return {p.pid for p in still}


def test_one_engine_serves_every_event_loop_and_answers(vllm_smollm: Backend) -> None:
    """Each ``asyncio.run`` is a new event loop (a test, a headless command); the engine started
    once keeps answering all of them, with the same processes, and greedy replies agree."""
    before = engine_processes()
    replies = [asyncio.run(vllm_smollm.session(f"loop-{i}").complete(QUESTION, GREEDY)) for i in range(2)]
    assert replies[0].text == replies[1].text and replies[0].usage.completion_tokens > 0
    assert engine_processes() == before, "the engine was restarted for a new event loop"


def test_the_cpu_default_is_float32_and_the_journal_says_so(vllm_smollm: Backend) -> None:
    """On vLLM's CPU build the default precision is float32 (bf16 without native bf16
    instructions decodes into repetition); the journal records the engine's arguments."""
    from backends.vllm_process import on_cpu

    described = vllm_smollm.describe()
    assert described["dtype"] == ("float32" if on_cpu() else "auto")
    assert described["max_model_len"] == vllm_smollm.context_length
    if on_cpu():
        assert described["kv_cache_memory_bytes"] == 2**30  # the fixture's kv_cache_gb = 1


@pytest.fixture
def own_engine(registry: Registry) -> Iterator[tuple[Engines, Backend, set[int]]]:
    """A second engine of its own (eager: no compile, a faster start), loaded through the
    lifecycle as the app and the CLI load theirs, with its processes."""
    require_vllm()
    from backends.vllm_engine import VllmBackend
    from backends.vllm_process import EngineSlot

    slot = EngineSlot()
    engines = Engines(create=lambda entry, progress: VllmBackend(entry, slot=slot, progress=progress))
    before = engine_processes()
    backend = asyncio.run(engines.load_entry(vllm_entry(registry, vllm_model_folder(), "smollm2-135m-eager",
                                                        enforce_eager=True)))
    processes = engine_processes() - before
    yield engines, backend, processes
    asyncio.run(engines.aclose())


def test_closing_the_engines_shuts_the_engine_processes_down(own_engine: tuple[Engines, Backend, set[int]]) -> None:
    """No EngineCore outlives the lifecycle that loaded it (the app's debate, a command, the test
    session all close through ``Engines``): its processes are gone when ``aclose`` returns, not at
    interpreter exit."""
    engines, backend, processes = own_engine
    assert processes, "the engine runs in processes of its own"
    assert asyncio.run(backend.session("a").complete(QUESTION, GREEDY)).usage.completion_tokens > 0
    asyncio.run(engines.aclose())
    assert not alive(processes), "vLLM's engine processes are still running after the engines closed"


def test_a_killed_engine_is_a_backend_error_naming_the_model(own_engine: tuple[Engines, Backend, set[int]]) -> None:
    """The engine's process dies (out of memory, killed): the next reply is a BackendError with the
    model and what to do, not vLLM's EngineDeadError traceback, and closing still cleans up."""
    import psutil

    engines, backend, processes = own_engine
    core = next(p for p in processes if "EngineCore" in " ".join(psutil.Process(p).cmdline() + [psutil.Process(p).name()]))
    os.kill(core, signal.SIGKILL)
    with pytest.raises(BackendError, match=r"'smollm2-135m-eager': vLLM's engine stopped.*load the model again"):
        asyncio.run(asyncio.wait_for(backend.session("a").complete(QUESTION, GREEDY), 120))
    asyncio.run(engines.aclose())
    assert not alive(processes)
