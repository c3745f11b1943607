"""Hugging Face transformers in process, on CPU, Apple MPS or CUDA.

For models that are not in GGUF (or for a GPU without vLLM); it also loads GGUF files
(transformers de-quantizes them), which is how the bundled models test it here. Only local
files are read (``local_files_only``): weights never download at run time.

Why a decoding loop of our own instead of ``model.generate``: it keeps each agent's KV cache
between turns (a growing transcript is evaluated once, as with llama.cpp), lets a JSON-schema
grammar (llguidance) veto tokens step by step, checks cancellation and stop strings at every
token, and times the first token exactly. The loop runs in a worker thread and hands text to the
event loop as it comes; sampling reuses transformers' own logits processors.

Prompts come from the tokenizer's chat template, or the entry's ``chat_format`` where there is
none (the base Gemma GGUF); see :mod:`backends.hf_prompt`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from . import structured
from .base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ChatStream,
    Completion,
    ContextOverflow,
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
from .load_watch import loading
from .registry import ModelEntry
from .stops import ReplyText
from .threads import default_threads

log = logging.getLogger(__name__)


class TransformersBackend(Backend):
    """One model loaded once with transformers; a KV cache per session."""

    kind = "transformers"
    entry: ModelEntry

    def __init__(self, entry: ModelEntry, path: Path) -> None:
        super().__init__()
        self.path = path
        try:
            import torch
            import transformers
        except ImportError:
            raise BackendUnavailable(f"model {entry.id!r}: the transformers backend needs "
                                     "pip install 'symposium-tui[transformers]'") from None
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()  # progress bars would tear the TUI
        self.torch = torch
        self.entry = entry
        self.model_id = entry.id
        self.device = _device(entry.device, torch)
        if self.device == "cpu":  # torch's workers spin like ggml's: one per core, not per logical CPU
            torch.set_num_threads(entry.threads or default_threads())
        folder, extra = (path.parent, {"gguf_file": path.name}) if path.is_file() else (path, {})
        dtype = torch.float32 if self.device == "cpu" else torch.float16
        loading(self.kind, entry.id, path)
        try:  # GGUF conversion draws a tqdm bar on stderr that no setting turns off
            with contextlib.redirect_stderr(io.StringIO()):
                self.tokenizer: Any = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True, **extra)
                model: Any = transformers.AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=dtype, **extra)
        except (OSError, ValueError, KeyError) as exc:
            raise BackendUnavailable(f"model {entry.id!r}: transformers could not load {path} ({exc}); "
                                     "check the files, or use the llamacpp backend for GGUF architectures transformers lacks") from None
        self.model = model.to(self.device).eval()
        self.prompter = Prompter(self.tokenizer, entry)
        self.format = self.prompter.format
        self.n_ctx = min(entry.context_length, getattr(self.model.config, "max_position_embeddings", entry.context_length))
        self.context_length = self.n_ctx
        self.n_vocab = int(self.model.get_output_embeddings().weight.shape[0])
        self.end_ids = self.prompter.end_ids(getattr(self.model.generation_config, "eos_token_id", None))
        self.lock = threading.Lock()
        self._guidance: Any = None
        self._grammars: dict[str, str] = {}

    def new_cache(self) -> Any:
        """An empty KV cache that can be cut back to any earlier length: sliding-window layers
        (Gemma) keep their past until cut, so an agent's cache can roll back to a shared prefix."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        if hasattr(cache, "activate_past_recording"):
            cache.activate_past_recording()
        return cache

    def guidance(self) -> tuple[Any, Any] | None:
        """llguidance and its view of this tokenizer (built once, ~1 s), or ``None`` where
        llguidance is not installed or cannot read the tokenizer."""
        if self._guidance is None:
            try:
                import llguidance
                import llguidance.hf

                self._guidance = (llguidance, llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=self.n_vocab))
            except ImportError:
                self._guidance = False
            except (ValueError, TypeError) as exc:  # slow (non-Rust) tokenizers
                log.info("model %s: no grammar engine for this tokenizer (%s); validated retry instead", self.model_id, exc)
                self._guidance = False
        return self._guidance or None

    def grammar(self, json_schema: dict[str, Any]) -> Any:
        """A fresh llguidance matcher for ``json_schema`` (the grammar itself is cached)."""
        found = self.guidance()
        assert found is not None, "grammar() needs llguidance; check guidance() first"
        llguidance, lltok = found
        key = repr(json_schema)
        if key not in self._grammars:
            self._grammars[key] = llguidance.LLMatcher.grammar_from_json_schema(
                structured.closed(json_schema), defaults={"whitespace_flexible": False})
        matcher = llguidance.LLMatcher(lltok, self._grammars[key])
        if matcher.is_error():
            raise BackendError(f"model {self.model_id!r}: cannot turn this JSON schema into a grammar: {matcher.get_error()}")
        return matcher

    def _new_session(self, name: str) -> TransformersSession:
        return TransformersSession(self, name)

    def synchronize(self) -> None:
        """Wait for the device's queued work (CUDA runs ahead of Python), so that a time read
        next is the time the work took, not the time it took to queue."""
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    async def aclose(self) -> None:
        with self.lock:
            self._sessions.clear()
            self.model = None
        await super().aclose()

    def describe(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "backend": self.kind,
            "device": self.device,
            "chat_template": "tokenizer" if self.prompter.template else (self.format.name if self.format else None),
            "structured_output": "grammar (llguidance)" if self._guidance else "grammar when available, else validated retry",
            "n_ctx": self.n_ctx,
            "file": str(self.path),
            "profile": self.entry.profile,
        }


class TransformersSession(Session):
    """One agent's KV cache (a transformers ``Cache``) on a shared model."""

    backend: TransformersBackend

    def __init__(self, backend: TransformersBackend, name: str) -> None:
        super().__init__(backend, name)
        self._cache: Any = None
        self._cached: list[int] = []

    def _generate(self, stream: ChatStream, gen: Generation, messages: list[Message],
                  schema: type[BaseModel] | dict[str, Any] | None) -> AsyncIterator[str]:
        return gen.in_thread(stream, lambda emit: self._reply_sync(messages, gen, schema, emit))

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        if not candidates:
            raise ValueError("score() needs at least one candidate")
        return await asyncio.to_thread(self._score_sync, list(messages), list(candidates), prefix)

    def reset(self) -> None:
        with self.backend.lock:
            self._cache, self._cached = None, []

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self.backend.prompter.prompt_ids(messages))

    # -- model work (worker thread, under the model lock) -----------------------------------

    def _forward(self, tokens: Sequence[int], *, keep: int = 1) -> Any:
        """Run ``tokens`` after the cache; returns the logits of the last ``keep`` (0: all)."""
        be = self.backend
        if be.model is None:
            raise BackendError(f"model {be.model_id!r} was closed")
        if self._cache is None:
            self._cache = be.new_cache()
        ids = be.torch.tensor([list(tokens)], device=be.device)
        out = be.model(input_ids=ids, past_key_values=self._cache, use_cache=True, logits_to_keep=keep)
        self._cache = out.past_key_values
        return out.logits[0].float()

    def _rollback(self, length: int) -> None:
        """Keep only the first ``length`` cached positions (or forget the cache if it can't)."""
        extra = self._cache.get_seq_length() - length
        try:
            if extra > 0:
                self._cache.crop(-extra)  # a negative count: "remove this many" in every version
            self._cached = self._cached[:length]
        except (NotImplementedError, ValueError, RuntimeError, AttributeError) as exc:
            log.debug("model %s: cache cannot be cut back (%s); evaluating again", self.backend.model_id, exc)
            self._cache, self._cached = None, []

    def _restore(self, prompt: list[int]) -> None:
        """Back to exactly ``prompt`` after a candidate was scored on top of it."""
        self._rollback(len(prompt))
        if self._cache is None:  # a cache that cannot be cut: evaluate the prompt again
            self._evaluate(prompt)

    def _evaluate(self, prompt: list[int]) -> tuple[Any, int]:
        """Bring the cache to ``prompt``; returns the next-token logits and the tokens run."""
        common = 0
        for cached, new in zip(self._cached, prompt):
            if cached != new:
                break
            common += 1
        common = min(common, len(prompt) - 1)  # at least one token runs, for fresh logits
        if self._cache is not None and common < len(self._cached):
            self._rollback(common)
        if self._cache is None:
            common = 0
        logits = self._forward(prompt[common:])[-1]
        self._cached = list(prompt)
        return logits, len(prompt) - common

    def _check_fits(self, n_prompt: int, max_new: int) -> None:
        if n_prompt + max_new > self.backend.n_ctx:
            raise ContextOverflow(f"model {self.backend.model_id!r}: a prompt of {n_prompt} tokens plus {max_new} new ones does not fit "
                               f"its context of {self.backend.n_ctx} tokens; raise context_length in models.toml or shorten the transcript")

    def _reply_sync(self, messages: list[Message], gen: Generation, schema: type[BaseModel] | dict[str, Any] | None,
                    emit: Emit) -> Completion:
        """Grammar-constrained where llguidance can be had; otherwise asked, checked and asked again."""
        if schema is not None and gen.schema is not None and self.backend.guidance() is None:
            done = self._validated_sync(messages, gen, schema, gen.schema)
            if done.text:
                emit(done.text)
            return done
        return self._generate_sync(messages, gen, emit)

    def _generate_sync(self, messages: list[Message], gen: Generation, emit: Emit) -> Completion:
        be = self.backend
        torch = be.torch
        opts, json_schema = gen.options, gen.schema
        prompt = be.prompter.prompt_ids(messages)
        self._check_fits(len(prompt), 1)
        reply = ReplyText(tuple(opts.stop) + (() if json_schema or be.format is None else be.format.stop), emit)
        out: list[int] = []
        finish: FinishReason = "length"
        gen.queued()
        with be.lock, torch.inference_mode():
            gen.began()
            logits, evaluated = self._evaluate(prompt)
            be.synchronize()  # a GPU computes ahead of Python: the prompt is done when its logits are
            gen.prompt_done()
            sampler = _Sampler(be, opts, be.grammar(json_schema) if json_schema else None, prompt)
            while len(out) < opts.max_tokens and len(prompt) + len(out) < be.n_ctx:
                if gen.cancelled:
                    finish = "cancelled"
                    break
                token = sampler.sample(logits)
                if token in be.end_ids:
                    finish = "stop"
                    break
                out.append(token)
                gen.token()
                if reply.update(str(be.tokenizer.decode(out, skip_special_tokens=True))):  # one sequence: one string
                    finish = "stop"
                    break
                logits = self._forward([token])[-1]
                self._cached.append(token)
        return gen.finish(reply.flush(), Usage(len(prompt), evaluated, len(out), len(prompt) - evaluated), finish)

    def _score_sync(self, messages: list[Message], candidates: list[str], prefix: str) -> ScoreResult:
        be = self.backend
        torch = be.torch
        timing = Timing()
        started = time.perf_counter()
        prompt, encoded = be.prompter.scoring_ids(messages, candidates, prefix)
        self._check_fits(len(prompt), max(len(e) for e in encoded))
        logprobs: list[float] = []
        queued = time.perf_counter()
        with be.lock, torch.inference_mode():
            began = time.perf_counter()
            timing.wait_s = began - queued
            logits, evaluated = self._evaluate(prompt)
            timing.prompt_s = time.perf_counter() - started
            first = torch.log_softmax(logits, -1)
            for tokens in encoded:
                total = float(first[tokens[0]])
                if len(tokens) > 1:
                    rows = torch.log_softmax(self._forward(tokens[:-1], keep=0), -1)
                    total += float(sum(rows[i, t] for i, t in enumerate(tokens[1:])))
                    self._restore(prompt)
                logprobs.append(total)
            done = time.perf_counter()  # each total was read back as a float: the device is done
        timing.total_s = done - started
        timing.prefill_s, timing.decode_s = done - began, 0.0  # the prompt and every candidate: all evaluated, nothing decoded
        return ScoreResult.of(candidates, logprobs, [len(e) for e in encoded],
                              Usage(len(prompt), evaluated + sum(len(e) - 1 for e in encoded), 0, len(prompt) - evaluated),
                              timing, be.model_id)

    def _validated_sync(self, messages: list[Message], gen: Generation, schema: type[BaseModel] | dict[str, Any],
                        json_schema: dict[str, Any]) -> Completion:
        """Without a grammar engine: ask for JSON, check it, ask once more naming the problem.
        Each attempt is timed on its own; the usage is both attempts'."""
        asked = structured.with_instruction(messages, json_schema)
        first = self._generate_sync(asked, gen.again(), lambda _: None)
        problem = structured.problem(first.text, schema)
        if problem is None or first.finish_reason == "cancelled":
            return first
        second = self._generate_sync(structured.retry_messages(asked, first.text, problem), gen.again(), lambda _: None)
        second.usage = Usage(first.usage.prompt_tokens + second.usage.prompt_tokens,
                             first.usage.prompt_tokens_evaluated + second.usage.prompt_tokens_evaluated,
                             first.usage.completion_tokens + second.usage.completion_tokens,
                             (first.usage.cached_tokens or 0) + (second.usage.cached_tokens or 0))
        second.schema = json_schema
        second.timing = both_attempts(first.timing, second.timing)
        return second


class _Sampler:
    """Next-token choice with transformers' logits processors and an optional grammar.

    Repetition penalties apply to free text only: JSON repeats its punctuation by design.
    """

    def __init__(self, backend: TransformersBackend, opts: SamplingOptions, matcher: Any, prompt: list[int]) -> None:
        from transformers.generation import logits_process as lp

        self.torch = torch = backend.torch
        self.matcher = matcher
        self.n_vocab = backend.n_vocab
        self.history = torch.tensor([prompt], device=backend.device)
        self.greedy = opts.temperature <= 0
        procs: list[Any] = []
        if matcher is None and opts.repeat_penalty and opts.repeat_penalty != 1.0:
            procs.append(lp.RepetitionPenaltyLogitsProcessor(opts.repeat_penalty))
        if not self.greedy:
            procs.append(lp.TemperatureLogitsWarper(opts.temperature))
            if opts.top_k > 0:
                procs.append(lp.TopKLogitsWarper(opts.top_k))
            if opts.top_p < 1:
                procs.append(lp.TopPLogitsWarper(opts.top_p))
            if opts.min_p > 0:
                procs.append(lp.MinPLogitsWarper(opts.min_p))
        self.processors = lp.LogitsProcessorList(procs)
        seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4), "little")
        self.generator = torch.Generator(device=backend.device).manual_seed(seed)
        self.mask = np.full((1, (self.n_vocab + 31) // 32), -1, dtype=np.int32)

    def sample(self, logits: Any) -> int:
        """The grammar's mask first, then temperature and the top-k/top-p/min-p cuts, as llama.cpp
        orders them: cutting first could keep only tokens the grammar then forbids, leaving no
        token at all (softmax of all -inf: "probability tensor contains inf/nan")."""
        torch = self.torch
        scores = logits[None].clone()
        if self.matcher is not None:
            from llguidance.numpy import fill_next_token_bitmask

            fill_next_token_bitmask(self.matcher, self.mask, 0)
            allowed = np.unpackbits(self.mask.view(np.uint8), bitorder="little")[: scores.shape[-1]].astype(bool)
            scores[0, torch.from_numpy(~allowed).to(scores.device)] = float("-inf")
        scores = self.processors(self.history, scores)
        if self.greedy:
            token = int(scores[0].argmax())
        else:
            token = int(torch.multinomial(torch.softmax(scores[0], -1), 1, generator=self.generator))
        if self.matcher is not None:
            self.matcher.consume_token(token)
        self.history = torch.cat([self.history, torch.tensor([[token]], device=self.history.device)], dim=1)
        return token


def both_attempts(first: Timing, second: Timing) -> Timing:
    """The time of a call made of two attempts (a validated reply's retry): each phase summed,
    unknown where either attempt's is; the first token is the first attempt's."""
    def add(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a + b

    return Timing(first.started_at, first.total_s + second.prompt_s, first.first_token_s, first.total_s + second.total_s,
                  add(first.wait_s, second.wait_s), add(first.prefill_s, second.prefill_s), add(first.decode_s, second.decode_s))


def _device(wanted: str, torch: Any) -> str:
    if wanted != "auto":
        if wanted == "cuda" and not torch.cuda.is_available() or wanted == "mps" and not torch.backends.mps.is_available():
            raise BackendUnavailable(f"device {wanted!r} is not available here; set device = \"auto\" or \"cpu\" in models.toml")
        return wanted
    if torch.cuda.is_available():
        return "cuda"
    return "mps" if torch.backends.mps.is_available() else "cpu"
