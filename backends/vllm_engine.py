"""vLLM's engine in process, on a CUDA GPU (``pip install 'symposium-tui[vllm]'``).

One engine per process: vLLM claims most of the GPU's memory for its KV cache, so a second
engine would not fit. Every backend and session (persona) on the loaded model shares it, and
prefix caching (on) lets each agent's growing transcript hit the cache the way llama.cpp's
per-agent contexts do; requests from several personas are batched by the engine. A different
model in the same process is refused with the way out: ``symposium serve vllm MODEL`` and the
openai backend.

Written against vLLM's documented engine API (``AsyncLLMEngine``, ``SamplingParams``,
``StructuredOutputsParams``, ``prompt_logprobs``); where vLLM cannot be installed (no CUDA) its
tests are skipped and the openai backend's tests cover the HTTP path to ``vllm serve``.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from .base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ChatStream,
    Completion,
    Message,
    SamplingOptions,
    ScoreResult,
    Session,
    Timing,
    Usage,
    schema_of,
)
from .hf_prompt import Prompter
from .registry import ModelEntry
from .sources import resolve_path
from .structured import closed

_ENGINE_LOCK = threading.Lock()
_engine: tuple[Path, Any] | None = None


def _shared_engine(entry: ModelEntry, path: Path) -> Any:
    """The process's engine, created on first use for ``path``."""
    global _engine
    from vllm import AsyncEngineArgs, AsyncLLMEngine

    with _ENGINE_LOCK:
        if _engine is None:
            args = AsyncEngineArgs(model=str(path), enable_prefix_caching=True, max_model_len=entry.context_length,
                                   seed=0, disable_log_stats=True)
            _engine = (path, AsyncLLMEngine.from_engine_args(args))
        elif _engine[0] != path:
            raise BackendError(f"model {entry.id!r}: vLLM runs one model per process and {_engine[0].name} is loaded; "
                               f"serve this one with `symposium serve vllm {entry.id}` and use the openai backend")
        return _engine[1]


def _structured(json_schema: dict[str, Any]) -> dict[str, Any]:
    """SamplingParams fields for a JSON schema, in this vLLM's dialect."""
    try:
        from vllm.sampling_params import StructuredOutputsParams

        return {"structured_outputs": StructuredOutputsParams(json=json_schema)}
    except ImportError:  # vLLM before structured_outputs replaced guided decoding
        from vllm.sampling_params import GuidedDecodingParams

        return {"guided_decoding": GuidedDecodingParams(json=json_schema)}


class VllmBackend(Backend):
    """One model on the process's vLLM engine."""

    kind = "vllm"

    def __init__(self, entry: ModelEntry) -> None:
        super().__init__()
        try:
            import vllm  # noqa: F401
            from transformers import AutoTokenizer
        except ImportError:
            raise BackendUnavailable(f"model {entry.id!r}: the vllm backend needs vLLM and a CUDA GPU "
                                     "(pip install 'symposium-tui[vllm]'); elsewhere use llamacpp or transformers") from None
        self.entry = entry
        self.model_id = entry.id
        self.context_length = entry.context_length
        path = resolve_path(entry)
        self.engine = _shared_engine(entry, path)
        folder, extra = (path.parent, {"gguf_file": path.name}) if path.is_file() else (path, {})
        self.prompter = Prompter(AutoTokenizer.from_pretrained(str(folder), local_files_only=True, **extra), entry)
        self.end_ids = self.prompter.end_ids()

    def sampling(self, opts: SamplingOptions, json_schema: dict[str, Any] | None = None, **fields: Any) -> Any:
        from vllm import SamplingParams

        stops = list(opts.stop) + ([] if json_schema or self.prompter.format is None else list(self.prompter.format.stop))
        extra = _structured(closed(json_schema)) if json_schema else {}
        return SamplingParams(
            max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p,
            top_k=opts.top_k if opts.top_k > 0 else -1, min_p=opts.min_p,
            repetition_penalty=1.0 if json_schema else opts.repeat_penalty,
            seed=opts.seed, stop=stops, stop_token_ids=sorted(self.end_ids), **extra, **fields,
        )

    def _new_session(self, name: str) -> VllmSession:
        return VllmSession(self, name)

    def describe(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "backend": self.kind, "prefix_caching": True,
                "structured_output": "vLLM structured outputs", "n_ctx": self.context_length}


class VllmSession(Session):
    """One persona on the shared engine; the engine's prefix cache serves its transcript."""

    def __init__(self, backend: VllmBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def chat(
        self,
        messages: Sequence[Message],
        options: SamplingOptions | None = None,
        *,
        schema: type[BaseModel] | dict[str, Any] | None = None,
    ) -> ChatStream:
        opts = options or self.backend.entry.default_options()
        request_id = f"{self.name}-{uuid.uuid4().hex}"
        cancelled = threading.Event()

        def cancel() -> None:
            cancelled.set()

        return ChatStream(lambda stream: self._run(stream, list(messages), opts, schema_of(schema), request_id, cancelled), cancel)

    async def _run(self, stream: ChatStream, messages: list[Message], opts: SamplingOptions,
                   json_schema: dict[str, Any] | None, request_id: str, cancelled: threading.Event) -> AsyncIterator[str]:
        be = self.backend
        timing = Timing()
        started = time.perf_counter()
        prompt = be.prompter.prompt_ids(messages)
        sent, final = "", None
        try:
            async for out in be.engine.generate({"prompt_token_ids": prompt}, be.sampling(opts, json_schema), request_id):
                final = out
                text = out.outputs[0].text
                if cancelled.is_set():
                    break
                if len(text) > len(sent):
                    if timing.first_token_s is None:
                        timing.first_token_s = time.perf_counter() - started
                    yield text[len(sent):]
                    sent = text
        finally:
            if final is None or not final.finished:
                await be.engine.abort(request_id)
        timing.total_s = time.perf_counter() - started
        timing.prompt_s = timing.first_token_s or timing.total_s
        output = final.outputs[0] if final is not None else None
        cached = int(getattr(final, "num_cached_tokens", 0) or 0)
        reason = "cancelled" if cancelled.is_set() else "length" if output is not None and output.finish_reason == "length" else "stop"
        stream.completion = Completion(sent, Usage(len(prompt), len(prompt) - cached, len(output.token_ids) if output else 0),
                                       timing, reason, be.model_id, opts, json_schema)  # type: ignore[arg-type]

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        """Prompt log-probabilities of each candidate after the shared prompt, batched by the
        engine; prefix caching evaluates the shared part once."""
        if not candidates:
            raise ValueError("score() needs at least one candidate")
        be = self.backend
        timing = Timing()
        started = time.perf_counter()
        prompt = be.prompter.prompt_ids(messages, reply_prefix=prefix)
        ends = be.prompter.encode(be.prompter.end_of_turn, special=True)
        encoded = [be.prompter.encode(c, special=False) + ends for c in candidates]
        if any(len(e) == len(ends) for e in encoded):
            raise ValueError("score() candidates must be non-empty strings")
        params = be.sampling(SamplingOptions(max_tokens=1, temperature=0.0), prompt_logprobs=0)
        outputs = await asyncio.gather(*(self._last(prompt + tokens, params) for tokens in encoded))
        logprobs = []
        for tokens, out in zip(encoded, outputs):
            rows = out.prompt_logprobs[len(prompt):]
            logprobs.append(float(sum(row[token].logprob for row, token in zip(rows, tokens))))
        timing.total_s = timing.prompt_s = time.perf_counter() - started
        lp = np.array(logprobs)
        probs = np.exp(lp - lp.max())
        probs /= probs.sum()
        return ScoreResult(list(candidates), logprobs, probs.tolist(), [len(e) for e in encoded],
                           Usage(len(prompt), len(prompt) + sum(len(e) for e in encoded), 0), timing, be.model_id)

    async def _last(self, ids: list[int], params: Any) -> Any:
        final = None
        async for out in self.backend.engine.generate({"prompt_token_ids": ids}, params, f"{self.name}-score-{uuid.uuid4().hex}"):
            final = out
        return final

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self.backend.prompter.prompt_ids(messages))
