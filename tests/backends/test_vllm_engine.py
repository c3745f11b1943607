"""The vLLM backend's plumbing, each rule against a fake engine; the real engine is in
tests/backends/test_vllm_real.py (``make test-vllm``).

Why a fake here: these tests run in .venv, which has no vLLM (it lives in .venv-vllm), and each
rule is checked exactly: a small object stands in for vLLM's ``AsyncLLMEngine`` that behaves as
V1's does where it matters (sources read for 0.11 to 0.33): it binds to the event loop of its
first request, aborts a request when its stream is closed, reports ``finish_reason`` and
``num_cached_tokens``, and does not read the prefix cache for requests with ``prompt_logprobs``.
The tokenizer is a character-level stand-in with the ChatML template, so no download and no
transformers model is needed.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import backends.vllm_engine as vllm_engine
from backends.base import BackendError, BackendUnavailable, Message, SamplingOptions
from backends.lifecycle import Engines, StillLoading
from backends.registry import ModelEntry, VllmSettings
from backends.vllm_engine import VllmBackend, _structured
from backends.vllm_process import EngineSlot, engine_arguments, last_error, serve_flags

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
SPECIALS = ["<|im_start|>", "<|im_end|>"]


class CharTokenizer:
    """The slice of a transformers tokenizer the Prompter uses: one token per character, the
    two ChatML markers as special tokens 1 and 2."""

    chat_template = CHATML
    bos_token = "<|im_start|>"
    eos_token = "<|im_end|>"
    eos_token_id = 2
    all_special_ids = [1, 2]
    added_tokens_decoder: dict[int, str] = {1: "<|im_start|>", 2: "<|im_end|>"}

    def __call__(self, text: str, *, add_special_tokens: bool, split_special_tokens: bool) -> dict[str, list[int]]:
        ids: list[int] = []
        i = 0
        while i < len(text):
            marker = next((m for m in SPECIALS if not split_special_tokens and text.startswith(m, i)), None)
            if marker:
                ids.append(SPECIALS.index(marker) + 1)
                i += len(marker)
            else:
                ids.append(1000 + ord(text[i]))
                i += 1
        return {"input_ids": ids}


@dataclass
class Out:
    text: str
    token_ids: list[int]
    finish_reason: str | None = None


@dataclass
class RequestOutput:
    outputs: list[Out]
    finished: bool
    num_cached_tokens: int = 0
    prompt_logprobs: list[Any] | None = None


@dataclass
class Logprob:
    logprob: float


@dataclass
class FakeEngine:
    """Stands in for vLLM V1's AsyncLLM (see the module docstring)."""

    reply: str = "Hello there, moderator."
    finish: str = "stop"
    loop: asyncio.AbstractEventLoop | None = None
    aborted: list[str] = field(default_factory=list)
    closed_streams: int = 0
    shut_down: bool = False
    cache: list[list[int]] = field(default_factory=list)

    def generate(self, prompt: dict[str, list[int]], params: dict[str, Any], request_id: str) -> AsyncIterator[RequestOutput]:
        return self._stream(prompt["prompt_token_ids"], params, request_id)

    async def _stream(self, ids: list[int], params: dict[str, Any], request_id: str) -> AsyncIterator[RequestOutput]:
        loop = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = loop  # V1 starts its output handler on the first request's loop
        if self.loop is not loop or self.shut_down:
            raise RuntimeError("engine bound to another event loop: the real one would never answer")
        scoring = params.get("prompt_logprobs") is not None
        cached = 0 if scoring else max((_common(c, ids) for c in self.cache), default=0)
        self.cache.append(ids)
        try:
            if scoring:
                rows = [None] + [{t: Logprob(-0.5)} for t in ids[1:]]
                yield RequestOutput([Out("x", [7], "length")], True, cached, rows)
                return
            for n in range(1, len(self.reply) + 1):
                await asyncio.sleep(0.005)  # a token takes time: a cancel from another thread arrives mid-reply
                done = n == len(self.reply)
                yield RequestOutput([Out(self.reply[:n], list(range(n)), self.finish if done else None)], done, cached)
        except GeneratorExit:
            self.aborted.append(request_id)  # V1 aborts a request whose stream is closed
            raise
        finally:
            self.closed_streams += 1

    async def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)

    def shutdown(self) -> None:
        self.shut_down = True


def _common(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def entry(model_id: str = "tiny", folder: str = "/models/tiny") -> ModelEntry:
    return ModelEntry(id=model_id, name=model_id, family="llama", backend="vllm",
                      source={"kind": "local", "path": folder}, context_length=2048)


class Factory:
    def __init__(self, **engine: Any) -> None:
        self.engines: list[FakeEngine] = []
        self.engine_kwargs = engine

    def __call__(self, _entry: ModelEntry, _path: Path) -> FakeEngine:
        self.engines.append(FakeEngine(**self.engine_kwargs))
        return self.engines[-1]


def backend(slot: EngineSlot, model_id: str = "tiny", folder: str = "/models/tiny") -> VllmBackend:
    be = VllmBackend(entry(model_id, folder), slot=slot, tokenizer=CharTokenizer(), path=Path(folder))
    be.make_params = dict
    be.structured_fields = lambda schema: {"structured_outputs": schema}
    return be


QUESTION = [Message("system", "Be brief."), Message("user", "Greet the moderator.")]


def test_a_gguf_entry_is_refused_with_one_line() -> None:
    with pytest.raises(BackendUnavailable, match=r"'tiny'.*cannot load GGUF.*llamacpp") as caught:
        VllmBackend(entry(folder="/m/x.Q4_K_M.gguf"), slot=EngineSlot(Factory()), tokenizer=CharTokenizer(),
                    path=Path("/m/x.Q4_K_M.gguf"))
    assert "\n" not in str(caught.value)


def test_one_engine_answers_every_event_loop() -> None:
    """Two ``asyncio.run`` calls (two tests, two headless commands): V1's engine binds to the loop
    of its first request, so requests go through the engine's own loop, and the one engine
    (minutes to start on a CPU) serves both without a restart."""
    factory = Factory()
    be = backend(EngineSlot(factory))
    first = asyncio.run(be.session("a").complete(QUESTION, SamplingOptions(max_tokens=8)))
    second = asyncio.run(be.session("a").complete(QUESTION, SamplingOptions(max_tokens=8)))
    assert first.text == second.text == "Hello there, moderator."
    assert len(factory.engines) == 1 and not factory.engines[0].shut_down
    asyncio.run(be.aclose())
    assert factory.engines[0].shut_down


def test_switching_models_waits_for_the_old_one_to_close() -> None:
    factory = Factory()
    slot = EngineSlot(factory)
    old = backend(slot, "old", "/models/old")
    asyncio.run(old.session("a").complete(QUESTION))
    with pytest.raises(BackendError, match=r"'new'.*one model per process.*old.*close it first"):
        backend(slot, "new", "/models/new")
    asyncio.run(old.aclose())
    assert factory.engines[0].shut_down, "closing the last backend frees the GPU"
    new = backend(slot, "new", "/models/new")
    assert asyncio.run(new.session("a").complete(QUESTION)).text


def test_an_engine_error_is_an_error_not_a_stop() -> None:
    be = backend(EngineSlot(Factory(finish="error")))
    with pytest.raises(BackendError, match=r"'tiny'.*finish_reason 'error'"):
        asyncio.run(be.session("a").complete(QUESTION))


def test_a_cancelled_reply_closes_the_stream_and_aborts_the_request() -> None:
    factory = Factory()
    be = backend(EngineSlot(factory))

    async def run() -> None:
        stream = be.session("a").chat(QUESTION, SamplingOptions(max_tokens=64))
        async for _delta in stream:
            stream.cancel()
        assert stream.completion is not None and stream.completion.finish_reason == "cancelled"
        # Checked inside the loop: asyncio.run's clean-up would close a forgotten stream later.
        engine = factory.engines[0]
        assert engine.closed_streams == 1 and engine.aborted, "the engine must stop generating for a cancelled reply"

    asyncio.run(run())


async def test_scoring_usage_counts_the_prompt_for_every_candidate() -> None:
    """vLLM reads no prefix cache for requests with prompt_logprobs: the prompt runs per candidate."""
    be = backend(EngineSlot(Factory()))
    session = be.session("judge")
    result = await session.score(QUESTION, ["yes", "no", "maybe"])
    prompt = session.count_tokens(QUESTION)
    ends = 1  # <|im_end|>
    assert result.usage.prompt_tokens == prompt
    assert result.usage.prompt_tokens_evaluated == 3 * prompt + sum(len(c) + ends for c in ["yes", "no", "maybe"])
    assert sum(result.probs) == pytest.approx(1.0)
    await be.aclose()


async def test_a_growing_transcript_reports_the_cached_prefix() -> None:
    be = backend(EngineSlot(Factory()))
    session = be.session("a")
    first = await session.complete(QUESTION)
    grown = [*QUESTION, Message("assistant", first.text), Message("user", "Again.")]
    second = await session.complete(grown)
    assert second.usage.prompt_tokens_evaluated < second.usage.prompt_tokens
    assert second.usage.prompt_tokens - second.usage.prompt_tokens_evaluated >= first.usage.prompt_tokens
    await be.aclose()


def test_structured_output_uses_structured_outputs_params(monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM 0.11–0.33 take ``structured_outputs=StructuredOutputsParams(json=…)``; a vLLM module
    without GuidedDecodingParams (removed) must still work."""
    module = types.ModuleType("vllm.sampling_params")

    @dataclass
    class StructuredOutputsParams:
        json: dict[str, Any]

    module.StructuredOutputsParams = StructuredOutputsParams  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", module)
    fields = _structured({"type": "object"})
    assert fields == {"structured_outputs": StructuredOutputsParams(json={"type": "object"})}




# -- the engine's start, failure and shutdown ----------------------------------------------------


class SlowFactory(Factory):
    """Starting the engine blocks, as vLLM's does (minutes on a CPU), until the event loop has
    ticked ``ticks`` times during the start (:meth:`tick`), at most ``patience_s``. Started on the
    event loop itself, it would block the ticks it waits for: the start then ends without them,
    and ``loop_ran`` stays unset. No time threshold decides the test, so a busy machine cannot."""

    def __init__(self, ticks: int = 30, patience_s: float = 30.0) -> None:
        super().__init__()
        self.ticks_needed, self.patience_s = ticks, patience_s
        self.threads: list[str] = []
        self.starting, self.loop_ran = threading.Event(), threading.Event()
        self.ticks = 0

    def tick(self) -> None:
        """One turn of the event loop: counted while the engine is starting."""
        if self.starting.is_set():
            self.ticks += 1
            if self.ticks >= self.ticks_needed:
                self.loop_ran.set()

    def __call__(self, entry: ModelEntry, path: Path) -> FakeEngine:
        self.threads.append(threading.current_thread().name)
        self.starting.set()
        self.loop_ran.wait(self.patience_s)
        self.starting.clear()
        return super().__call__(entry, path)


async def test_the_engine_starts_in_the_load_step_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading through the lifecycle (as the app, the CLI and the benchmark do) starts the engine
    in its worker thread, its stage reported as StillLoading, while the event loop keeps ticking;
    the first reply then starts nothing (the old code started the engine on the loop at the first
    request: the app froze for the whole start)."""
    factory = SlowFactory()
    monkeypatch.setattr(vllm_engine.PROCESS, "_slot", EngineSlot(factory))
    monkeypatch.setattr(vllm_engine, "load_tokenizer", lambda _entry, _path: CharTokenizer())
    monkeypatch.setattr(vllm_engine, "resolve_path", lambda e: Path(e.source.path))
    monkeypatch.setattr(vllm_engine, "_sampling_params", dict)
    loading = True

    async def ticker() -> None:
        while loading:
            await asyncio.sleep(0.01)
            factory.tick()

    progress: list[str] = []
    tick = asyncio.create_task(ticker())
    engines = Engines(on_event=lambda e: progress.append(e.stage or "") if isinstance(e, StillLoading) else None,
                      tick_s=0.1)
    be = await engines.load_entry(entry())
    loading = False
    await tick
    assert factory.engines and factory.threads[0] != threading.main_thread().name
    assert factory.loop_ran.is_set(), f"the event loop ticked {factory.ticks} times while the engine started"
    assert any("starting vLLM's engine" in p for p in progress), progress
    assert (await be.session("a").complete(QUESTION, SamplingOptions(max_tokens=4))).text
    assert len(factory.engines) == 1, "the first reply started the engine again"
    await engines.aclose()
    assert not vllm_engine.PROCESS.running, "closing the engines shuts the engine down"


class EngineDeadError(Exception):
    """Named as vLLM's (``vllm.v1.engine.exceptions``): the engine's process died."""


@dataclass
class DyingEngine(FakeEngine):
    calls: int = 0

    def generate(self, prompt: dict[str, list[int]], params: dict[str, Any], request_id: str) -> AsyncIterator[RequestOutput]:
        async def stream() -> AsyncIterator[RequestOutput]:
            raise EngineDeadError()
            yield  # pragma: no cover  (makes this an async generator)

        self.calls += 1
        return stream()


def test_a_dead_engine_is_a_backend_error_naming_the_model_and_stays_dead() -> None:
    """vLLM's EngineDeadError used to escape as a traceback; now the reply fails with the model
    and what to do, and the next request fails at once instead of waiting on a lost process."""
    engines: list[DyingEngine] = []
    slot = EngineSlot(lambda _e, _p: engines.append(DyingEngine()) or engines[-1])
    be = backend(slot)
    with pytest.raises(BackendError, match=r"'tiny': vLLM's engine stopped.*load the model again") as first:
        asyncio.run(be.session("a").complete(QUESTION))
    with pytest.raises(BackendError) as second:
        asyncio.run(be.session("a").complete(QUESTION))
    assert str(second.value) == str(first.value)
    assert engines[0].calls == 1, "the second request must not reach the dead engine"
    asyncio.run(be.aclose())
    assert engines[0].shut_down


@dataclass
class TooLongEngine(FakeEngine):
    """Refuses every prompt with the words vLLM's input processor uses for one past max_model_len."""

    def generate(self, prompt: dict[str, list[int]], params: dict[str, Any], request_id: str) -> AsyncIterator[RequestOutput]:
        async def stream() -> AsyncIterator[RequestOutput]:
            raise ValueError(f"The decoder prompt (length {len(prompt['prompt_token_ids'])}) is longer than the maximum "
                             "model length of 32. Make sure that `max_model_len` is no smaller than the number of text tokens.")
            yield  # pragma: no cover  (makes this an async generator)

        return stream()


def test_a_prompt_past_max_model_len_is_a_context_overflow() -> None:
    """vLLM's refusal of an overlong prompt is the ContextOverflow every backend raises for it
    (Agent.fit answers it by fitting), not a generic failure."""
    from backends.base import ContextOverflow

    be = backend(EngineSlot(lambda _e, _p: TooLongEngine()))
    with pytest.raises(ContextOverflow, match=r"'tiny': the prompt does not fit.*longer than the maximum model length"):
        asyncio.run(be.session("a").complete(QUESTION))
    asyncio.run(be.aclose())


@dataclass
class SilentlyDeadEngine(FakeEngine):
    """Its process dies while a request waits: vLLM sets ``errored`` but never wakes the request."""

    errored: bool = False

    def generate(self, prompt: dict[str, list[int]], params: dict[str, Any], request_id: str) -> AsyncIterator[RequestOutput]:
        async def stream() -> AsyncIterator[RequestOutput]:
            self.errored = True
            await asyncio.Event().wait()  # no output, ever
            yield RequestOutput([], True)  # pragma: no cover

        return stream()


@pytest.mark.timeout(60)  # without the watch the reply waits forever: fail in a minute, not at the suite's limit
def test_a_request_waiting_on_an_engine_that_died_is_not_left_waiting() -> None:
    """Seen on vLLM 0.32: kill the EngineCore while a reply waits and the reply waited forever."""
    be = backend(EngineSlot(lambda _e, _p: SilentlyDeadEngine()))
    with pytest.raises(BackendError, match=r"'tiny': vLLM's engine stopped"):
        asyncio.run(asyncio.wait_for(be.session("a").complete(QUESTION), 10))
    asyncio.run(be.aclose())


def test_another_engine_exception_is_a_backend_error() -> None:
    class Refusing(FakeEngine):
        def generate(self, prompt: dict[str, list[int]], params: dict[str, Any], request_id: str) -> AsyncIterator[RequestOutput]:
            raise ValueError("prompt is longer than the model's maximum length")

    be = backend(EngineSlot(lambda _e, _p: Refusing()))
    with pytest.raises(BackendError, match=r"'tiny': vLLM refused the request \(ValueError: prompt is longer"):
        asyncio.run(be.session("a").complete(QUESTION))
    asyncio.run(be.aclose())


def test_closing_the_last_backend_shuts_the_engine_down_on_its_own_loop() -> None:
    factory = Factory()
    slot = EngineSlot(factory)
    one, two = backend(slot), backend(slot)
    assert slot._loop is not None
    loop_thread = slot._loop._thread
    asyncio.run(one.aclose())
    assert not factory.engines[0].shut_down, "another backend still uses the engine"
    asyncio.run(two.aclose())
    assert factory.engines[0].shut_down
    assert not loop_thread.is_alive(), "the engine's loop thread is left running"
    with pytest.raises(BackendError, match="model 'tiny' was closed; it cannot answer"):  # the base class's words
        asyncio.run(two.session("a").complete(QUESTION))


class Finalized(FakeEngine):
    """Finalized as vLLM's ``AsyncLLM`` is: its ``__del__`` shuts it down (again)."""

    shutdowns = 0

    def shutdown(self) -> None:
        type(self).shutdowns += 1
        super().shutdown()

    def __del__(self) -> None:
        self.shutdown()


def test_a_shut_down_engine_is_not_shut_down_again_by_its_finalizer() -> None:
    """vLLM's finalizer calls ``shutdown()`` once more when the engine is collected, which at
    interpreter exit fails on torn-down globals: after the slot's own shutdown, the finalizer
    finds nothing to do, and the engine's class is still vLLM's own."""
    made: list[Finalized] = []
    be = backend(EngineSlot(lambda _e, _p: made.append(Finalized()) or made[-1]))
    asyncio.run(be.aclose())
    engine = made.pop()
    assert Finalized.shutdowns == 1 and type(engine) is Finalized
    del engine
    gc.collect()
    assert Finalized.shutdowns == 1, "the finalizer shut the engine down a second time"


# -- engine arguments ---------------------------------------------------------------------------


def test_engine_defaults_suit_the_platform() -> None:
    """A CPU gets float32 (bf16 without native bf16 decodes into repetition) and 4 GiB of KV cache
    (vLLM's own CPU default reserves 90% of RAM and refuses to start when less is free); a GPU
    gets the model's precision and gpu_memory_utilization."""
    model = entry()
    cpu = engine_arguments(model, Path("/m"), cpu=True)
    assert cpu["dtype"] == "float32" and cpu["kv_cache_memory_bytes"] == 4 * 2**30
    assert "gpu_memory_utilization" not in cpu and cpu["max_model_len"] == model.context_length
    gpu = engine_arguments(model, Path("/m"), cpu=False)
    assert gpu["dtype"] == "auto" and gpu["gpu_memory_utilization"] == 0.9 and "kv_cache_memory_bytes" not in gpu
    assert cpu["enable_prefix_caching"] and gpu["enable_prefix_caching"]


def test_an_entrys_engine_settings_are_used_and_become_serve_flags() -> None:
    model = entry().model_copy(update={"vllm": VllmSettings(dtype="bfloat16", kv_cache_gb=1.5, tensor_parallel_size=2,
                                                             gpu_memory_utilization=0.5, enforce_eager=True)})
    args = engine_arguments(model, Path("/m"), cpu=False)
    assert (args["dtype"], args["kv_cache_memory_bytes"], args["tensor_parallel_size"]) == ("bfloat16", int(1.5 * 2**30), 2)
    assert args["gpu_memory_utilization"] == 0.5 and args["enforce_eager"] is True
    flags = serve_flags(args)
    assert flags[:2] == ["--model", "/m"]
    assert flags[flags.index("--dtype") + 1] == "bfloat16" and "--enforce-eager" in flags
    assert flags[flags.index("--max-model-len") + 1] == str(model.context_length)
    assert "--enable-prefix-caching" in flags
    # compact JSON (a small model looped on whitespace inside vLLM's JSON grammar), as a JSON flag
    assert json.loads(flags[flags.index("--structured-outputs-config") + 1]) == {"backend": "xgrammar",
                                                                                "disable_any_whitespace": True}
    assert "--enforce-eager" not in serve_flags(engine_arguments(entry(), Path("/m"), cpu=True))


def test_the_engines_last_error_is_found_in_its_log(tmp_path: Path) -> None:
    log = tmp_path / "vllm-engine.log"
    log.write_text("(EngineCore pid=1) INFO loading\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
                   "ValueError: Unsupported CPU attention configuration: head_dim=16\n"
                   "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n")
    assert last_error(log) == "ValueError: Unsupported CPU attention configuration: head_dim=16"
    assert last_error(tmp_path / "absent.log") is None


def test_serve_vllm_listens_on_loopback_and_refuses_a_host_after_the_dashes() -> None:
    """`symposium serve vllm` binds vLLM's server to 127.0.0.1; a `--host` among the user's own
    flags (which vLLM would read last, so it would win) is refused with what to do."""
    from tui.cli.serve import vllm_command
    from tui.errors import UserError

    cmd = vllm_command(engine_arguments(entry(), Path("/m"), cpu=True), "m", 8123, ["--max-num-seqs", "4"])
    assert [cmd[i + 1] for i, flag in enumerate(cmd) if flag == "--host"] == ["127.0.0.1"]
    assert cmd[cmd.index("--port") + 1] == "8123" and cmd[-2:] == ["--max-num-seqs", "4"]
    for flags in (["--host", "0.0.0.0"], ["--host=0.0.0.0"]):
        with pytest.raises(UserError, match=r"127\.0\.0\.1 only.*drop --host"):
            vllm_command(engine_arguments(entry(), Path("/m"), cpu=True), "m", 8123, flags)
