"""The engines' lifecycle (:mod:`backends.lifecycle`): each distinct model loaded once, off the
event loop, shared by the roles on it, and every backend closed exactly once however the
debate ends: at its end, on an error mid-debate, on cancellation (Ctrl-C, the app quitting),
even when the cancellation lands while a model is still loading.

Scripted backends (tests/helpers/scripted_backends.py) count their ``aclose`` calls and fail on cue,
which a real model cannot be made to do at a chosen moment; the sharing test loads the real
bundled SmolLM2 through the real factory.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable

import pytest

from backends.base import BackendError, BackendUnavailable, Message, SamplingOptions
from backends.factory import OnProgress, create_backend
from backends.lifecycle import Engines, Loaded, LoadEvent, Loading, PrivacyWarning, StillLoading
from backends.registry import ModelEntry, Registry
from protocols import evince
from protocols.core.agents import agents_for
from protocols.core.events import TokenDelta
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from tests.helpers.scripted_backends import Fail, ScriptedBackend

REPLY = json.dumps({"predictions": [{"label": "Malaria", "probability": 0.7, "argument": "a"},
                                    {"label": "Dengue", "probability": 0.3, "argument": "b"}], "arguments": []})
CRIT = json.dumps({"claim": "x", "reasons": [], "rival_reasons": [], "score": 6, "justification": "fair"})
ROLES = {"agent-a": "smollm2-135m", "agent-b": "gemma3-270m", "judge": "smollm2-135m"}
CONFIG = evince.EvinceConfig(case="fever", labels=LabelSet(["Malaria", "Dengue", "Typhoid"]), max_rounds=3,
                             recommendations=False, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)


class Scripted:
    """A ``create`` for :class:`Engines`: a scripted backend per entry, replies per model id."""

    def __init__(self, replies: dict[str, list], *, delay: float = 0.0, fail: Exception | None = None,
                 warning: str | None = None) -> None:
        self.replies = replies
        self.delay = delay
        self.fail = fail
        self.warning = warning
        self.built: list[ScriptedBackend] = []
        self.threads: list[int] = []

    def __call__(self, entry: ModelEntry, progress: OnProgress | None = None) -> ScriptedBackend:
        self.threads.append(threading.get_ident())
        if self.fail is not None and entry.id == "gemma3-270m":
            raise self.fail
        backend = ScriptedBackend(entry.id, list(self.replies.get(entry.id, [])), delay=self.delay, warning=self.warning)
        backend.entry = entry
        self.built.append(backend)
        return backend


def closes(create: Scripted) -> dict[str, int]:
    return {b.model_id: b.closes for b in create.built}


async def debate(registry: Registry, create: Scripted, journal: Journal,
                 on_event: Callable[[LoadEvent], None] | None = None) -> None:
    """An EVINCE debate as every interface runs one: engines, agents by role, the runner."""
    async with Engines(registry, create=create, on_event=on_event) as engines:
        agents = agents_for(ROLES, await engines.load(ROLES.values()), seed=1)
        team = evince.EvinceAgents(agents["agent-a"], agents["agent-b"], agents["judge"])
        await drive(evince.run(CONFIG, team, debate_id="life0001"), journal)


async def test_a_debate_loads_each_model_once_and_closes_each_once(registry: Registry, journal: Journal) -> None:
    create = Scripted({"smollm2-135m": [REPLY, CRIT] * 10, "gemma3-270m": [REPLY] * 5})
    events: list[LoadEvent] = []
    await debate(registry, create, journal, events.append)
    assert [b.model_id for b in create.built] == ["smollm2-135m", "gemma3-270m"]  # agent-a and judge share one
    assert closes(create) == {"smollm2-135m": 1, "gemma3-270m": 1}
    assert [type(e) for e in events if not isinstance(e, StillLoading)] == [Loading, Loaded, Loading, Loaded]
    assert [(e.model_id, e.index, e.total) for e in events if isinstance(e, Loading)] == [
        ("smollm2-135m", 1, 2), ("gemma3-270m", 2, 2)]


async def test_a_model_asked_for_again_is_shared_not_loaded_again(registry: Registry) -> None:
    """A later load in the same block (the app adds the analyzer's model) reuses what is loaded."""
    create = Scripted({})
    async with Engines(registry, create=create) as engines:
        first = await engines.load(["smollm2-135m"])
        again = await engines.load(["gemma3-270m", "smollm2-135m"])
        assert again["smollm2-135m"] is first["smollm2-135m"]
    assert [b.model_id for b in create.built] == ["smollm2-135m", "gemma3-270m"]
    assert closes(create) == {"smollm2-135m": 1, "gemma3-270m": 1}


async def test_an_error_mid_debate_closes_each_model_once_and_is_not_masked(registry: Registry, journal: Journal) -> None:
    create = Scripted({"smollm2-135m": [REPLY, CRIT] * 10, "gemma3-270m": [REPLY, Fail("connection reset")]})
    with pytest.raises(BackendError, match="connection reset"):
        await debate(registry, create, journal)
    assert closes(create) == {"smollm2-135m": 1, "gemma3-270m": 1}


async def test_cancelling_mid_debate_closes_each_model_once(registry: Registry, journal: Journal) -> None:
    """As Ctrl-C does to ``asyncio.run`` and quitting does to the app's worker."""
    create = Scripted({"smollm2-135m": [REPLY, CRIT] * 10, "gemma3-270m": [REPLY] * 5}, delay=0.02)
    streaming = asyncio.Event()
    journal_record = journal.record

    def record(event):  # noqa: ANN001 - the journal's own signature
        if isinstance(event, TokenDelta):
            streaming.set()
        return journal_record(event)

    journal.record = record  # type: ignore[method-assign]
    task = asyncio.create_task(debate(registry, create, journal))
    await asyncio.wait_for(streaming.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closes(create) == {"smollm2-135m": 1, "gemma3-270m": 1}


async def test_a_model_still_loading_when_cancelled_is_closed_once_it_is_built(registry: Registry) -> None:
    """The loader's thread cannot be stopped: what it builds after the cancellation is closed
    on the way out, so no engine (a vLLM process) outlives the command."""
    release = threading.Event()
    started = threading.Event()
    inner = Scripted({})

    def slow(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        started.set()
        release.wait(30)
        return inner(entry)

    async def run() -> None:
        async with Engines(registry, create=slow) as engines:
            await engines.load(["smollm2-135m"])

    task = asyncio.create_task(run())
    await asyncio.to_thread(started.wait, 30)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done()  # the exit waits for the load ...
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closes(inner) == {"smollm2-135m": 1}  # ... and closes what it built


async def test_a_second_cancellation_does_not_stop_the_closing(registry: Registry) -> None:
    """Ctrl-C, then the runner's clean-up (or the app's quit, then its shutdown) cancel twice; an
    engine closed half-way would leave its processes behind, so the closing runs to its end:
    the model still loading is waited for, and a slow close is not cut short."""
    release = threading.Event()
    started = threading.Event()
    inner = Scripted({})
    finished: list[str] = []

    def slow(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        if entry.id == "gemma3-270m":
            started.set()
            release.wait(30)
        backend = inner(entry)
        closer = backend.aclose

        async def slow_close() -> None:
            await asyncio.sleep(0.2)  # an engine shutting down its processes
            await closer()
            finished.append(entry.id)

        backend.aclose = slow_close  # type: ignore[method-assign]
        return backend

    async def run() -> None:
        async with Engines(registry, create=slow) as engines:
            await engines.load(["smollm2-135m", "gemma3-270m"])

    task = asyncio.create_task(run())
    await asyncio.to_thread(started.wait, 30)
    task.cancel()  # mid-load
    await asyncio.sleep(0.05)
    task.cancel()  # again, while the exit waits for the load
    release.set()
    await asyncio.sleep(0.1)
    task.cancel()  # and again, mid-close
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closes(inner) == {"smollm2-135m": 1, "gemma3-270m": 1}
    assert sorted(finished) == ["gemma3-270m", "smollm2-135m"]  # each close ran to its end


async def test_a_load_that_times_out_is_closed_when_the_block_ends(registry: Registry) -> None:
    """``models test`` gives a load its time limit; the model that arrives late is still closed."""
    release = threading.Event()
    inner = Scripted({})

    def slow(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        release.wait(30)
        return inner(entry)

    async with Engines(registry, create=slow) as engines:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(engines.load_entry(registry.get("smollm2-135m")), 0.1)
        release.set()
    assert closes(inner) == {"smollm2-135m": 1}


async def test_loading_runs_off_the_event_loop(registry: Registry) -> None:
    """A model takes seconds (llama.cpp) to minutes (vLLM) to load; the loop must keep running."""
    ticks = 0

    def slow(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        threading.Event().wait(0.5)  # a blocking load
        return create(entry)

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    create = Scripted({})
    ticker = asyncio.create_task(tick())
    async with Engines(registry, create=slow) as engines:
        await engines.load(["smollm2-135m"])
    ticker.cancel()
    assert create.threads and create.threads[0] != threading.get_ident()
    assert ticks >= 10  # the loop ticked through the half-second load


async def test_a_long_load_is_announced_with_its_stage_and_the_time_spent(registry: Registry) -> None:
    """A vLLM engine starts for minutes: the person sees which stage it is at and that time moves."""

    def staged(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        progress("starting the engine")
        threading.Event().wait(0.45)
        return Scripted({})(entry)

    events: list[LoadEvent] = []
    async with Engines(registry, create=staged, on_event=events.append, tick_s=0.1) as engines:
        await engines.load(["smollm2-135m"])
    ticks = [e for e in events if isinstance(e, StillLoading)]
    assert isinstance(events[0], Loading) and isinstance(events[-1], Loaded)
    assert len(ticks) >= 2 and all(isinstance(e, StillLoading) for e in events[1:-1])
    assert [t.seconds for t in ticks] == sorted(t.seconds for t in ticks)
    assert ticks[-1].stage == "starting the engine"
    assert ticks[-1].message.startswith(f"loading {registry.get('smollm2-135m').name}: starting the engine … ")


@pytest.mark.parametrize(("failure", "kind", "expected"), [
    (OSError("No such file or directory"), BackendError,
     "model 'gemma3-270m' (llamacpp) could not be loaded: OSError: No such file or directory"),
    (BackendUnavailable("the server is down"), BackendUnavailable, "model 'gemma3-270m': the server is down"),
    (BackendUnavailable("model 'gemma3-270m': reinstall it"), BackendUnavailable, "model 'gemma3-270m': reinstall it"),
])
async def test_a_load_failure_is_a_backend_error_naming_the_model_and_earlier_models_are_closed(
        registry: Registry, failure: Exception, kind: type, expected: str) -> None:
    create = Scripted({}, fail=failure)
    with pytest.raises(BackendError) as caught:
        async with Engines(registry, create=create) as engines:
            await engines.load(["smollm2-135m", "gemma3-270m"])
    assert type(caught.value) is kind and str(caught.value) == expected
    assert closes(create) == {"smollm2-135m": 1}


async def test_an_unknown_model_fails_before_anything_loads(registry: Registry) -> None:
    create = Scripted({})
    with pytest.raises(ValueError, match="no-such-model"):
        async with Engines(registry, create=create) as engines:
            await engines.load(["smollm2-135m", "no-such-model"])
    assert create.built == []


def failing_close(backend: ScriptedBackend) -> None:
    """Make ``backend``'s close count itself, then fail as a dying engine's would."""
    closer = backend.aclose

    async def fail() -> None:
        await closer()
        raise RuntimeError("engine core died")

    backend.aclose = fail  # type: ignore[method-assign]


async def test_a_failing_close_does_not_keep_the_others_open_and_is_reported(registry: Registry) -> None:
    create = Scripted({})
    with pytest.raises(BackendError, match="model 'gemma3-270m': closing failed: RuntimeError: engine core died"):
        async with Engines(registry, create=create) as engines:
            backends = await engines.load(["smollm2-135m", "gemma3-270m", "smollm2-135m"])
            failing_close(backends["gemma3-270m"])  # closed first (newest first), and fails
    assert closes(create) == {"smollm2-135m": 1, "gemma3-270m": 1}


async def test_the_blocks_own_error_is_not_masked_by_a_failing_close(registry: Registry) -> None:
    create = Scripted({})
    with pytest.raises(KeyError, match="the debate's own error"):
        async with Engines(registry, create=create) as engines:
            failing_close((await engines.load(["gemma3-270m"]))["gemma3-270m"])
            raise KeyError("the debate's own error")
    assert closes(create) == {"gemma3-270m": 1}


async def test_a_privacy_warning_is_announced_for_each_model_that_has_one(registry: Registry) -> None:
    events: list[LoadEvent] = []
    async with Engines(registry, create=Scripted({}, warning="text leaves this machine"), on_event=events.append) as engines:
        await engines.load(["smollm2-135m"])
    assert events[-1] == PrivacyWarning("smollm2-135m", "text leaves this machine")


async def test_closed_engines_load_nothing(registry: Registry) -> None:
    create = Scripted({})
    async with Engines(registry, create=create) as engines:
        pass
    with pytest.raises(BackendError, match="closed"):
        await engines.load(["smollm2-135m"])
    assert create.built == []


@pytest.mark.model
async def test_two_roles_on_the_real_model_share_one_load(registry: Registry) -> None:
    """The real factory and the bundled SmolLM2: agent A and the judge on one model are one
    llama.cpp load, two sessions (KV caches); the model is closed once at the end, and is
    refused afterwards."""
    built = []

    def counting(entry: ModelEntry, progress: OnProgress):
        backend = create_backend(entry, progress)
        built.append(backend)
        real_close = backend.aclose
        backend.closes = 0

        async def aclose() -> None:
            backend.closes += 1
            await real_close()

        backend.aclose = aclose
        return backend

    roles = {"agent-a": "smollm2-135m", "judge": "smollm2-135m"}
    async with Engines(registry, create=counting) as engines:
        agents = agents_for(roles, await engines.load(roles.values()), seed=3)
        assert len(built) == 1 and agents["agent-a"].backend is agents["judge"].backend is built[0]
        assert agents["agent-a"].session is not agents["judge"].session
        for agent in agents.values():  # both seats speak through the one model
            done = await agent.session.complete([Message("user", "Say hi.")], SamplingOptions(max_tokens=4, temperature=0.0))
            assert done.usage.completion_tokens >= 1
        assert agents["agent-a"].options.seed == 3
    assert built[0].closes == 1
    with pytest.raises(BackendError, match="model 'smollm2-135m' was closed"):
        agents["judge"].session.count_tokens([])  # refused by name: llama.cpp on a freed model crashed the process
