"""vLLM's engine in process, on a CUDA GPU (``pip install 'symposium-tui[vllm]'``).

One engine per process: vLLM claims most of the GPU's memory for its KV cache, so a second
engine would not fit. Every backend and session (persona) on the loaded model shares it, and
prefix caching (on) lets each agent's growing transcript hit the cache the way llama.cpp's
per-agent contexts do; requests from several personas are batched by the engine.

Written against vLLM 0.11 to 0.33 (the ``[vllm]`` extra's range), whose sources were read for
what this module relies on:

* ``AsyncLLMEngine`` is V1's ``AsyncLLM``. It starts its output handler as a task on the event
  loop of its first request and never moves it, so an engine used from a second loop (a second
  ``asyncio.run``: the next test, the next headless debate) would wait forever.
  :class:`EngineSlot` therefore binds the engine to a loop and replaces it, after ``shutdown()``
  (which frees the GPU), when another loop asks; a different model is loaded the same way once
  every backend of the old one is closed.
* vLLM dropped its GGUF loader in 0.24: a ``.gguf`` entry is refused at once with the way out.
* Structured output is ``SamplingParams(structured_outputs=StructuredOutputsParams(json=…))``,
  present throughout the range (``GuidedDecodingParams`` is gone).
* ``finish_reason == "error"`` (the engine failed the request) raises :class:`BackendError`.
* Closing ``generate()``'s stream aborts the request (V1 aborts on ``GeneratorExit``); a
  cancelled reply closes it explicitly instead of leaving it to the garbage collector.
* A request with ``prompt_logprobs`` does not read the prefix cache, so scoring evaluates the
  shared prompt once per candidate; its :class:`Usage` reports the engine's own cached-token
  counts rather than claiming the prompt ran once.

No CUDA here: the unit tests (tests/backends/test_vllm_engine.py) drive this module with a fake engine;
``pytest -m vllm`` runs it on a real engine on any CUDA machine.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .base import (Backend, BackendError, BackendUnavailable, ChatStream, Completion, Emit, FinishReason, Generation,
                    Message, SamplingOptions, ScoreResult, Session, Timing, Usage)
from .hf_prompt import Prompter
from .registry import ModelEntry
from .sources import resolve_path
from .structured import closed

#: Makes an engine for (entry, model folder); the real one imports vLLM, tests pass a fake.
EngineFactory = Callable[[ModelEntry, Path], Any]


def _vllm_engine(entry: ModelEntry, path: Path) -> Any:
    from vllm import AsyncEngineArgs, AsyncLLMEngine

    args = AsyncEngineArgs(model=str(path), enable_prefix_caching=True, max_model_len=entry.context_length,
                           seed=0, disable_log_stats=True)
    return AsyncLLMEngine.from_engine_args(args)


class EngineSlot:
    """The process's one engine: which model it holds, which event loop it serves, who uses it."""

    def __init__(self, factory: EngineFactory = _vllm_engine) -> None:
        self.factory = factory
        self._lock = threading.Lock()
        self._engine: Any = None
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._path: Path | None = None
        self._users: dict[int, str] = {}  # id(backend) -> model id

    def attach(self, backend: object, entry: ModelEntry, path: Path) -> None:
        """Reserve the engine for ``entry``'s model; refused while another model's backend is open."""
        with self._lock:
            if self._users and self._path != path:
                others = ", ".join(sorted(set(self._users.values())))
                raise BackendError(f"model {entry.id!r}: vLLM runs one model per process and {others} is loaded; close "
                                   f"it first, or serve this one with `symposium serve vllm {entry.id}` and use the openai backend")
            if self._path != path:
                self._shutdown()
                self._path = path
            self._users[id(backend)] = entry.id

    def detach(self, backend: object) -> None:
        """Release ``backend``'s claim; the engine (and its GPU memory) goes with the last one."""
        with self._lock:
            self._users.pop(id(backend), None)
            if not self._users:
                self._shutdown()
                self._path = None

    def engine(self, entry: ModelEntry) -> Any:
        """The engine for the running event loop, made (or remade) here when needed."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._path is None:
                raise BackendError(f"model {entry.id!r}: this vLLM backend was closed")
            if self._engine is not None and (self._loop is None or self._loop() is not loop):
                self._shutdown()  # bound to a loop that is gone or another: it would never answer here
            if self._engine is None:
                self._engine = self.factory(entry, self._path)
                self._loop = weakref.ref(loop)
            return self._engine

    def _shutdown(self) -> None:
        if self._engine is not None:
            engine, self._engine, self._loop = self._engine, None, None
            engine.shutdown()


_SLOT = EngineSlot()


def _structured(json_schema: dict[str, Any]) -> dict[str, Any]:
    """SamplingParams fields for a JSON schema (vLLM 0.11 and later)."""
    from vllm.sampling_params import StructuredOutputsParams

    return {"structured_outputs": StructuredOutputsParams(json=json_schema)}


def _sampling_params(**fields: Any) -> Any:
    from vllm import SamplingParams

    return SamplingParams(**fields)


def _check_finish(model_id: str, output: Any) -> None:
    if output is not None and output.finish_reason == "error":
        raise BackendError(f"model {model_id!r}: vLLM's engine failed this request (finish_reason 'error'); "
                           "see vLLM's log for the cause")


class VllmBackend(Backend):
    """One model on the process's vLLM engine."""

    kind = "vllm"

    def __init__(self, entry: ModelEntry, *, slot: EngineSlot | None = None, tokenizer: Any = None,
                 path: Path | None = None) -> None:
        super().__init__()
        self.entry = entry
        self.model_id = entry.id
        self.context_length = entry.context_length
        path = path or resolve_path(entry)
        if path.suffix.lower() == ".gguf":
            raise BackendUnavailable(f"model {entry.id!r}: vLLM (0.24 and later) cannot load GGUF files; point its "
                                     "source at a Hugging Face model folder, or use the llamacpp backend for this file")
        if tokenizer is None:
            try:
                import vllm  # noqa: F401
                from transformers import AutoTokenizer
            except ImportError:
                raise BackendUnavailable(f"model {entry.id!r}: the vllm backend needs vLLM and a CUDA GPU "
                                         "(pip install 'symposium-tui[vllm]'); elsewhere use llamacpp or transformers") from None
            tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.slot = slot or _SLOT
        self.prompter = Prompter(tokenizer, entry)
        self.end_ids = self.prompter.end_ids()
        self.slot.attach(self, entry, path)
        #: Builds vLLM's SamplingParams (replaced in the fake-engine tests).
        self.make_params: Callable[..., Any] = _sampling_params
        self.structured_fields: Callable[[dict[str, Any]], dict[str, Any]] = _structured

    @property
    def engine(self) -> Any:
        """The engine serving the running event loop."""
        return self.slot.engine(self.entry)

    def sampling(self, opts: SamplingOptions, json_schema: dict[str, Any] | None = None, **fields: Any) -> Any:
        fmt = self.prompter.format
        stops = list(opts.stop) + ([] if json_schema or fmt is None else list(fmt.stop))
        extra = self.structured_fields(closed(json_schema)) if json_schema else {}
        return self.make_params(
            max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p,
            top_k=opts.top_k if opts.top_k > 0 else -1, min_p=opts.min_p,
            repetition_penalty=1.0 if json_schema else opts.repeat_penalty,
            seed=opts.seed, stop=stops, stop_token_ids=sorted(self.end_ids), **extra, **fields,
        )

    def _new_session(self, name: str) -> VllmSession:
        return VllmSession(self, name)

    async def aclose(self) -> None:
        await super().aclose()
        self.slot.detach(self)

    def describe(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "backend": self.kind, "prefix_caching": True,
                "structured_output": "vLLM structured outputs", "n_ctx": self.context_length}


class VllmSession(Session):
    """One persona on the shared engine; the engine's prefix cache serves its transcript."""

    backend: VllmBackend

    def _generate(self, stream: ChatStream, gen: Generation, messages: list[Message],
                  schema: type[BaseModel] | dict[str, Any] | None) -> AsyncIterator[str]:
        return gen.in_task(stream, lambda emit: self._run(messages, gen, emit))

    async def _run(self, messages: list[Message], gen: Generation, emit: Emit) -> Completion:
        be = self.backend
        request_id = f"{self.name}-{uuid.uuid4().hex}"
        prompt = be.prompter.prompt_ids(messages)
        engine = be.engine
        outputs = engine.generate({"prompt_token_ids": prompt}, be.sampling(gen.options, gen.schema), request_id)
        sent, final = "", None
        try:
            async for out in outputs:
                final = out
                if gen.cancelled:
                    break
                text = out.outputs[0].text
                if len(text) > len(sent):
                    gen.token()
                    emit(text[len(sent):])
                    sent = text
        finally:
            # Closing the stream aborts the request in the engine (V1 aborts on GeneratorExit);
            # the explicit abort covers engines that do not.
            await outputs.aclose()
            if final is None or not final.finished:
                await engine.abort(request_id)
        output = final.outputs[0] if final is not None else None
        _check_finish(be.model_id, output)
        cached = int(getattr(final, "num_cached_tokens", 0) or 0)
        reason: FinishReason = "cancelled" if gen.cancelled else "length" if output is not None and output.finish_reason == "length" else "stop"
        return gen.finish(sent, Usage(len(prompt), len(prompt) - cached, len(output.token_ids) if output else 0), reason)

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        """Prompt log-probabilities of each candidate after the shared prompt, one request per
        candidate, batched by the engine. vLLM does not read the prefix cache for a request that
        asks for prompt log-probabilities, so each request evaluates the shared prompt again;
        the usage says so, from the engine's own cached-token counts."""
        if not candidates:
            raise ValueError("score() needs at least one candidate")
        be = self.backend
        timing = Timing()
        started = time.perf_counter()
        prompt, encoded = be.prompter.scoring_ids(messages, candidates, prefix)
        params = be.sampling(SamplingOptions(max_tokens=1, temperature=0.0), prompt_logprobs=0)
        outputs = await asyncio.gather(*(self._last(prompt + tokens, params) for tokens in encoded))
        logprobs = []
        evaluated = 0
        for tokens, out in zip(encoded, outputs):
            _check_finish(be.model_id, out.outputs[0] if out.outputs else None)
            rows = out.prompt_logprobs[len(prompt):]
            logprobs.append(float(sum(row[token].logprob for row, token in zip(rows, tokens))))
            evaluated += len(prompt) + len(tokens) - int(getattr(out, "num_cached_tokens", 0) or 0)
        timing.total_s = timing.prompt_s = time.perf_counter() - started
        return ScoreResult.of(candidates, logprobs, [len(e) for e in encoded], Usage(len(prompt), evaluated, 0), timing,
                              be.model_id)

    async def _last(self, ids: list[int], params: Any) -> Any:
        final = None
        outputs = self.backend.engine.generate({"prompt_token_ids": ids}, params, f"{self.name}-score-{uuid.uuid4().hex}")
        try:
            async for out in outputs:
                final = out
        finally:
            await outputs.aclose()
        return final

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self.backend.prompter.prompt_ids(messages))
