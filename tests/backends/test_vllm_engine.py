"""The vLLM backend's fixes, each against a fake engine, and the real engine where CUDA is.

Why a fake: vLLM needs a CUDA GPU and none is here, so the unit tests stand a small object in
for vLLM's ``AsyncLLMEngine`` that behaves as V1's does where it matters (sources read for 0.11
to 0.33): it binds to the event loop of its first request, aborts a request when its stream is
closed, reports ``finish_reason`` and ``num_cached_tokens``, and does not read the prefix cache
for requests with ``prompt_logprobs``. The tokenizer is a character-level stand-in with the
ChatML template, so no download and no transformers model is needed.

``pytest -m vllm`` runs :func:`test_real_engine_end_to_end` on a CUDA machine with the
``[vllm]`` extra, on a tiny model written locally (tests/fixtures/tiny_hf_model.py).
"""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from backends.base import BackendError, BackendUnavailable, Message, SamplingOptions
from backends.registry import ModelEntry, Registry
from backends.vllm_engine import EngineSlot, VllmBackend, _structured

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
                await asyncio.sleep(0)
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


def test_a_second_event_loop_gets_a_working_engine_and_the_first_is_shut_down() -> None:
    """Two ``asyncio.run`` calls (two tests, two headless debates): the old code reused the engine
    bound to the first loop, which never answers in the second."""
    factory = Factory()
    be = backend(EngineSlot(factory))
    first = asyncio.run(be.session("a").complete(QUESTION, SamplingOptions(max_tokens=8)))
    second = asyncio.run(be.session("a").complete(QUESTION, SamplingOptions(max_tokens=8)))
    assert first.text == second.text == "Hello there, moderator."
    assert len(factory.engines) == 2 and factory.engines[0].shut_down and not factory.engines[1].shut_down


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


# -- the real engine (CUDA machines with the vllm extra) ----------------------------------------


@pytest.mark.vllm
def test_real_engine_end_to_end(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A tiny local model on vLLM: a reply in each of two event loops, a cancelled stream, a
    structured reply, scoring. Skipped without CUDA and vLLM."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("vLLM's engine needs a CUDA GPU; none here")
    pytest.importorskip("vllm", reason="pip install 'symposium-tui[vllm]' on the CUDA machine")
    from backends.sources import resolve_path
    from tests.fixtures.tiny_hf_model import build

    folder = build(tmp_path_factory.mktemp("tiny-llama"), resolve_path(registry.get("smollm2-135m")))
    model = entry("tiny", str(folder))
    be = VllmBackend(model, path=folder)
    options = SamplingOptions(max_tokens=8, temperature=0.0)
    for _ in range(2):  # the second run is a new event loop
        done = asyncio.run(asyncio.wait_for(be.session("a").complete(QUESTION, options), 300))
        assert done.usage.completion_tokens > 0

    async def rest() -> None:
        stream = be.session("b").chat(QUESTION, SamplingOptions(max_tokens=64, temperature=0.0))
        async for _delta in stream:
            stream.cancel()
        assert stream.completion is not None and stream.completion.finish_reason in ("cancelled", "stop", "length")
        schema = {"type": "object", "properties": {"label": {"type": "string", "enum": ["a", "b"]}}, "required": ["label"]}
        reply = await be.session("c").complete(QUESTION, SamplingOptions(max_tokens=16, temperature=0.0), schema=schema)
        if reply.finish_reason == "stop":
            assert reply.text.strip().startswith("{")
        scored = await be.session("d").score(QUESTION, ["yes", "no"])
        assert sum(scored.probs) == pytest.approx(1.0)
        await be.aclose()

    asyncio.run(asyncio.wait_for(rest(), 300))
