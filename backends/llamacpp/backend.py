"""llama.cpp in process: the backend (one loaded model) and its sessions (one per agent).

Why not the high-level ``llama_cpp.Llama``: it owns exactly one context per loaded model, so
two debaters on the same model would either load the weights twice (twice the GPU memory on
Metal/CUDA) or share one KV cache and re-read each other's transcripts every turn. Here one
:class:`LlamaCppBackend` loads the weights once, and every :class:`LlamaCppSession` (one per
agent) is one sequence of the model's shared :class:`KvPool`: one ``llama_context`` whose
unified KV cache tags each cell with the sequence that owns it and grows with the tokens in
use (``kv_layout = "per_agent"`` gives each session a whole context of its own instead):

* a growing transcript is evaluated once: each call evaluates only the tokens after the longest
  prefix already in that agent's sequence, and reports that count as
  ``Usage.prompt_tokens_evaluated``;
* structured output is a JSON-schema grammar in the sampler chain (pydantic model -> JSON
  schema -> GBNF), so the reply is valid JSON for the schema unless cut off by ``max_tokens``;
* :meth:`LlamaCppSession.score` evaluates the shared prompt once, then each candidate's few
  tokens, reading the log-probabilities from the logits llama.cpp leaves per position.

All llama.cpp calls run in a worker thread; the event loop only receives text deltas.
Replies that several sessions ask for at once are decoded together, one ``llama_decode`` per
step for all of them (:mod:`.lockstep`, up to ``max_concurrency``); prompts and scoring
run one at a time on the shared context. :meth:`LlamaCppBackend.set_parallel` gives each
session a context and a compute slot of its own instead (``max_concurrency = 1``, spare cores).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from ..base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ChatStream,
    Completion,
    ContextOverflow,
    Emit,
    Generation,
    Message,
    ScoreResult,
    Session,
    Timing,
    Usage,
)
from ..chat_format import ChatFormat, get_format
from ..chat_template import AppendOnly, ChatTemplate, append_only, template_format, tokenize_pieces
from ..load_watch import loading
from ..registry import ModelEntry
from ..threads import default_threads
from .kv_pool import EXACT_BATCH_ROWS, POOL_SEQUENCES, KvPool, Member, log_softmax
from .lockstep import Decoding, Lockstep, Reply
from .native import Context, Model, supports_gpu_offload
from .sampler import Sampler, grammar_for

log = logging.getLogger(__name__)


class LlamaCppBackend(Backend):
    """One GGUF model loaded once; its sessions are sequences of one shared KV pool (or, with
    ``kv_layout = "per_agent"``, each a context of its own)."""

    kind = "llamacpp"
    entry: ModelEntry

    def __init__(self, entry: ModelEntry, path: Path) -> None:
        super().__init__()
        self.entry = entry
        self.model_id = entry.id
        self.path = path
        loading(self.kind, entry.id, path)
        try:
            self.model = Model(path, gpu_layers=entry.gpu_layers, extra_buffers=entry.cpu_extra_buffers)
        except ValueError as exc:
            raise BackendUnavailable(
                f"model {entry.id!r}: llama.cpp could not load {path} ({exc}). "
                "The file may be incomplete or not a GGUF model; pull or reinstall it."
            ) from None
        self.n_vocab = self.model.n_vocab()
        self.n_ctx = min(entry.context_length, self.model.n_ctx_train())
        self.context_length = self.n_ctx
        self.n_batch = min(512, self.n_ctx)
        self.n_threads = entry.threads or default_threads()
        self.add_bos = self.model.add_bos_token()
        self.template, self.format = self._chat_format(entry)
        self.parallel = 1
        self._slots = threading.BoundedSemaphore(self.parallel)
        #: "shared": every session of this model is one sequence of one context whose unified
        #: KV cache grows with the tokens in use; "per_agent": one whole context per session.
        self.kv_layout = entry.kv_layout
        self.kv_cache_type = entry.kv_cache_type
        #: False re-evaluates every prompt from its first token: ``exact_resume`` in models.toml
        #: (registry.py says why), and the naive way the benchmarks compare against.
        self.kv_reuse = not entry.exact_resume
        #: "batched" scores all candidates in one llama.cpp batch; "sequential" one after another.
        self.score_mode: str = "batched"
        #: Most candidate tokens per scoring batch. From 64 query rows in one ubatch llama.cpp's
        #: CPU flash attention (on by default) takes a tiled path that accumulates in f32, where
        #: the row-by-row path accumulates V in f16: up to ~2 nats on a label of SmolLM2 (the same
        #: happens when a prompt is merely chunked differently). Below 64 the batched way gives
        #: the sequential way's numbers bit for bit, and on CPU time is bound by the tokens
        #: evaluated, not by the number of batches (measured: 63 and 512 within noise).
        self.score_batch_tokens = EXACT_BATCH_ROWS
        #: Replies decoded together in one step (``max_concurrency`` in models.toml; 1: one
        #: reply at a time). At most EXACT_BATCH_ROWS, where flash attention changes path. The
        #: matrix kernels of K-quant weights (every Q4_K_M file) change path from 8 rows on the
        #: CPU, so there a step of 8 or more may differ from the replies alone in the last bits
        #: (docs/performance.md); the default 4 stays under.
        self.lockstep_width = min(entry.max_concurrency, EXACT_BATCH_ROWS)
        #: Prompt tokens per llama_decode. On the CPU, EXACT_BATCH_ROWS: below 64 rows flash
        #: attention walks each sequence's own cells in order and skips the others', so a prompt
        #: gives the same numbers wherever its cells lie in the shared cache (alone, beside other
        #: agents, or while replies decode in lockstep); from 64 rows its tiled path depends on
        #: where the cells lie. On the CPU the time is bound by the tokens, not the batches, so
        #: this costs nothing measurable; on a GPU (gpu_layers ≠ 0) big batches are what make
        #: prompts fast, so there it is n_batch, and a greedy reply may differ in its last bits.
        #: (An entry that asks for GPU layers on a build without GPU offload runs on the CPU.)
        offloaded = entry.gpu_layers != 0 and supports_gpu_offload()
        self.prompt_chunk = self.n_batch if offloaded else EXACT_BATCH_ROWS
        self._pool: KvPool | None = None
        #: The shared pool's replies decoded together (made with the pool).
        self.lockstep: Lockstep | None = None
        self._pool_lock = threading.Lock()
        self._eot_tokens = frozenset(self._end_of_turn_tokens())
        #: Whether a debate's growing prompts keep this model's KV cache whole (checked at load).
        self.append_only: AppendOnly = self._check_append_only()

    # -- set-up helpers -------------------------------------------------------------------

    def _chat_format(self, entry: ModelEntry) -> tuple[ChatTemplate | None, ChatFormat]:
        """The GGUF's own chat template, unless the entry names a hand-written format or the
        file has none; the :class:`ChatFormat` carries the end-of-turn marker and stops."""
        if entry.chat_format:
            return None, get_format(entry.chat_format)
        source = self.model.metadata().get("tokenizer.chat_template")
        if not source:
            raise BackendError(
                f"model {entry.id!r}: its GGUF has no chat template; "
                "set chat_format (chatml, gemma, llama3 or mistral) on its entry in models.toml"
            )
        special = self.tokenize_text_of
        template = ChatTemplate(source, bos_token=special(self.model.token_bos()), eos_token=special(self.model.token_eos()),
                                origin=f"model {entry.id!r}")
        return template, template_format(template)

    def tokenize_text_of(self, token: int) -> str:
        """The vocabulary's text of a special token (``<bos>``, ``<|im_end|>``), '' for none."""
        if token < 0:
            return ""
        return self.model.token_get_text(token)

    def _check_append_only(self) -> AppendOnly:
        if self.template is None:  # hand-written formats render turn by turn: append-only by construction
            return AppendOnly(True)
        # The cache holds a reply's tokens without the end-of-turn token that stopped it.
        return append_only(self.template_tokens, lambda reply: self.tokenize(reply, special=False))

    def template_tokens(self, messages: Sequence[Message], reply_prefix: str = "") -> list[int]:
        """The prompt the model's own template gives for ``messages``, as tokens.

        The whole rendering is tokenized at once (as transformers or ``llama-server --jinja``
        would) when no message text contains special-token text and no special token forms
        across a markup/text boundary; otherwise markup and text are tokenized apart, so text
        such as ``<|im_end|>`` in a case stays plain text. BOS: one, whether the template
        writes ``bos_token``, the vocabulary asks for it, or both.
        """
        assert self.template is not None
        tokens = tokenize_pieces(self.template.pieces(messages), lambda text, special: self.tokenize(text, special=special),
                                 self.model.is_control)
        bos = self.model.token_bos()
        if self.add_bos and bos >= 0 and tokens[:1] != [bos]:
            tokens.insert(0, bos)
        return tokens + self.tokenize(reply_prefix, special=False)

    def _end_of_turn_tokens(self) -> set[int]:
        """Token ids that end a reply: the vocabulary's end-of-generation tokens plus the
        format's end-of-turn marker (a base model may not flag it as end-of-generation)."""
        ids = {t for t in (self.model.token_eos(), self.model.token_eot()) if t >= 0}
        if self.format.end_of_turn:
            marker = self.tokenize(self.format.end_of_turn, special=True)
            if len(marker) == 1:
                ids.add(marker[0])
        return ids

    def set_parallel(self, n: int) -> None:
        """How many sessions may compute at once (default 1). One shared context computes one
        batch at a time, so more than one switches this model to a context per session; it only
        pays off with spare cores (e.g. 1 thread each on 2 cores, as the diagnosis benchmark
        does). Call while nothing is running."""
        self.parallel = max(1, n)
        self._slots = threading.BoundedSemaphore(self.parallel)
        if self.parallel > 1:  # one shared context computes one batch at a time
            self.kv_layout = "per_agent"

    @contextmanager
    def computing(self, session: LlamaCppSession) -> Iterator[None]:
        """Hold ``session``'s context (the shared one, or its own) and a compute slot."""
        with session.lock, self.slot(), session.pool.lock:
            session.last_used = time.monotonic()
            yield

    @contextmanager
    def slot(self) -> Iterator[None]:
        """One of the :meth:`set_parallel` compute slots (:meth:`aclose` takes them all)."""
        with self._slots:
            yield

    def lockstep_for(self, session: LlamaCppSession) -> Lockstep | None:
        """Where ``session``'s replies are decoded together with the other agents' (the shared
        pool, when ``max_concurrency`` > 1), or None: one reply at a time, alone."""
        if self.kv_layout != "shared" or self.parallel > 1 or self.lockstep_width < 2:
            return None
        pool = session.pool  # joining makes the shared pool and its lockstep
        return self.lockstep if pool is self._pool else None

    def pool_for(self, session: LlamaCppSession) -> KvPool:
        """The KV pool ``session`` lives in: the model's shared one, or a context of its own."""
        if self.kv_layout == "per_agent":
            return self._new_pool(growable=False)
        with self._pool_lock:  # agents joining at once (a jury) must find one pool
            if self._pool is None:
                self._pool = self._new_pool(growable=True)
                self.lockstep = Lockstep(self._pool, self.lockstep_width)
            return self._pool

    def _new_pool(self, *, growable: bool) -> KvPool:
        return KvPool(lambda cells: self.new_context(cells, POOL_SEQUENCES), model_id=self.model_id, window=self.n_ctx,
                      n_batch=self.n_batch, growable=growable)

    def kv_stats(self) -> dict[str, Any]:
        """KV cells reserved and in use, and the tokens llama.cpp ran, over every context of this
        model (for benchmarks, and the check of the journal's counts against llama.cpp's)."""
        pools = {id(p): p for p in ([self._pool] if self._pool else [])}
        for session in self._sessions.values():
            if isinstance(session, LlamaCppSession) and session._pool is not None:
                pools[id(session._pool)] = session._pool
        cells = sum(p.cells for p in pools.values())
        per_token = self.kv_bytes_per_token()
        decoded = 0
        for p in pools.values():
            with p.lock:
                decoded += p.decoded
        return {
            "contexts": len(pools),
            "cells": cells,
            "kv_bytes": cells * per_token,
            "kv_bytes_per_token": per_token,
            "grows": sum(p.grows for p in pools.values()),
            "evictions": sum(p.evictions for p in pools.values()),
            #: Tokens llama.cpp ran in these contexts, prompts and replies, by its own counters.
            "tokens_decoded": decoded,
        }

    def kv_bytes_per_token(self) -> int:
        from ..kv_memory import kv_bytes_per_token, kv_shape_from_metadata

        return kv_bytes_per_token(kv_shape_from_metadata(self.model.metadata()), self.kv_cache_type)

    def decoding(self) -> Decoding:
        """What a reply needs of this model, as its knobs stand now."""
        return Decoding(self.model, self._eot_tokens, self.n_ctx, self.kv_reuse, self.prompt_chunk)

    def is_end(self, token: int) -> bool:
        return token in self._eot_tokens or self.model.is_eog(token)

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        """Tokens of ``text``. ``special=False`` keeps markers such as ``<|im_end|>`` inside
        user or model text as plain text, so a case cannot forge a turn boundary."""
        if not text:
            return []
        return self.model.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens render as nothing)."""
        return self.model.piece(token)

    def _new_session(self, name: str) -> LlamaCppSession:
        return LlamaCppSession(self, name)

    def new_context(self, cells: int | None = None, n_seq: int = 1) -> Context:
        """A context of ``cells`` KV cells (default: one agent's window) for ``n_seq`` sequences
        over one unified cache, so any sequence may use any free cell."""
        cells = cells or self.n_ctx
        try:
            return Context(self.model, cells=cells, n_seq=n_seq, n_batch=self.n_batch, threads=self.n_threads,
                           kv_cache_type=self.kv_cache_type)
        except ValueError as exc:
            raise BackendError(
                f"model {self.model_id!r}: could not create a context of {cells} KV cells ({exc}); "
                "lower context_length in models.toml, or set kv_cache_type = \"q8_0\""
            ) from None

    async def aclose(self) -> None:
        """Wait for the calls in flight, then free the contexts and the weights, in a worker
        thread: freeing a multi-GB model takes long enough to freeze the app's screen."""
        self._closed = True  # no new session meanwhile
        await asyncio.to_thread(self._close)
        await super().aclose()

    def _close(self) -> None:
        if self.lockstep is not None:  # the replies in flight end first
            self.lockstep.close()
        slots = self._slots
        for _ in range(self.parallel):  # wait until nothing computes
            slots.acquire()
        try:
            for session in self._sessions.values():
                assert isinstance(session, LlamaCppSession)
                session.close()
            self._sessions.clear()
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            self.model.close()
        finally:
            for _ in range(self.parallel):
                slots.release()

    def describe(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "backend": self.kind,
            "chat_format": self.format.name,
            "kv_reuse": self.append_only.describe(),
            "n_ctx": self.n_ctx,
            "gpu_layers": self.entry.gpu_layers,
            "threads": self.n_threads,
            "kv_layout": self.kv_layout,
            "kv_cache_type": self.kv_cache_type,
            "exact_resume": not self.kv_reuse,
            "file": str(self.path),  # the model's file, for the debate's provenance (store/provenance.py)
            "profile": self.entry.profile,
        }


class LlamaCppSession(Session, Member):
    """One agent's own KV cache on a shared model: a member of the model's KV pool."""

    backend: LlamaCppBackend

    def __init__(self, backend: LlamaCppBackend, name: str) -> None:
        Session.__init__(self, backend, name)
        Member.__init__(self)
        self.lock = threading.Lock()
        #: Exact token ids of recent replies, keyed by their (stripped) text, so a reply fed
        #: back as an assistant turn matches the cache even where re-tokenising would differ.
        self._generated: OrderedDict[str, list[int]] = OrderedDict()

    # -- public API -----------------------------------------------------------------------

    def _generate(self, stream: ChatStream, gen: Generation, messages: list[Message],
                  schema: type[BaseModel] | dict[str, Any] | None) -> AsyncIterator[str]:
        return gen.in_thread(stream, lambda emit: self._generate_sync(messages, gen, emit))

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        if not candidates:
            raise ValueError("score() needs at least one candidate")
        return await asyncio.to_thread(self._score_sync, list(messages), list(candidates), prefix)

    def reset(self) -> None:
        if self._pool is None:
            self._cached = []
            return
        with self.backend.computing(self):
            self._pool.forget(self.seq)
            self._cached = []

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Prompt length of ``messages`` in tokens (to keep debates inside the context)."""
        return len(self._prompt_tokens(messages))

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            with pool.lock:
                pool.release(self.seq)
            if pool is not self.backend._pool:
                pool.close()
        self._cached = []

    # -- prompt rendering -------------------------------------------------------------------

    def _prompt_tokens(self, messages: Sequence[Message], *, reply_prefix: str = "") -> list[int]:
        be = self.backend
        if be.template is not None:
            return be.template_tokens(messages, reply_prefix)
        fmt = be.format
        tokens: list[int] = [be.model.token_bos()] if be.add_bos else []
        for message in fmt.turns(messages):
            tokens += be.tokenize(fmt.prefix[message.role], special=True)
            generated = self._generated.get(message.content.strip()) if message.role == "assistant" else None
            tokens += generated if generated is not None else be.tokenize(message.content, special=False)
            tokens += be.tokenize(fmt.suffix[message.role], special=True)
        tokens += be.tokenize(fmt.prefix["assistant"], special=True)
        tokens += be.tokenize(reply_prefix, special=False)
        return tokens

    # -- llama.cpp work (worker thread, under the model lock) -------------------------------

    @property
    def pool(self) -> KvPool:
        """This session's KV pool, joined on first use (its sequence id is its own)."""
        if self._pool is None:
            self.backend.pool_for(self).join(self)
        assert self._pool is not None
        return self._pool

    @property
    def _ctx(self) -> Context:
        return self.pool.ctx

    def _decode(self, tokens: Sequence[int], start: int, *, all_logits: bool = False) -> None:
        """Run ``tokens`` at positions ``start…`` of this session's sequence; logits are kept
        for the last one (or all)."""
        self.pool.run(self, tokens, start, chunk=self.backend.prompt_chunk, all_logits=all_logits)

    def evaluate_prompt(self, prompt: list[int]) -> int:
        """Bring the cache to exactly ``prompt`` and return how many tokens had to be run."""
        be = self.backend
        return self.pool.evaluate(self, prompt, reuse=be.kv_reuse, chunk=be.prompt_chunk)

    def _check_fits(self, n_prompt: int, max_new: int) -> None:
        n_ctx = self.backend.n_ctx
        if n_prompt + max_new > n_ctx:
            raise ContextOverflow(
                f"model {self.backend.model_id!r}: a prompt of {n_prompt} tokens plus {max_new} new ones "
                f"does not fit its context of {n_ctx} tokens (session {self.name!r}); "
                "raise context_length in models.toml or shorten the transcript"
            )

    def _generate_sync(self, messages: list[Message], gen: Generation, emit: Emit) -> Completion:
        be = self.backend
        opts, json_schema = gen.options, gen.schema
        grammar = grammar_for(json_schema) if json_schema else None
        prompt = self._prompt_tokens(messages)
        self._check_fits(len(prompt), 1)
        stops = tuple(opts.stop) + (() if json_schema else be.format.stop)
        reply = Reply(self, prompt, gen, emit, Sampler(be.model, opts, grammar), stops, be.decoding())
        gen.queued()
        try:
            with self.lock:
                lockstep = be.lockstep_for(self)
                if lockstep is not None:
                    return self._kept(lockstep.generate(reply), reply.out)
            with be.computing(self):  # alone: the same cycle as a lockstep step, one row
                gen.began()
                reply.evaluated = self.evaluate_prompt(prompt)
                gen.prompt_done()
                goes_on = reply.first(self._ctx)
                while goes_on:
                    self._decode([reply.pending], reply.position)
                    goes_on = reply.decoded() and reply.take(reply.sampler.sample(self._ctx))  # the pool may have grown
            return self._kept(reply.complete(), reply.out)
        finally:
            reply.sampler.close()

    def _kept(self, completion: Completion, tokens: list[int]) -> Completion:
        """A finished reply with its exact tokens on it (journalled for resuming) and remembered
        by this session, to be fed back as those tokens next turn."""
        completion.tokens = tuple(tokens)
        self.remember(completion.text, tokens)
        return completion

    def remember(self, text: str, tokens: list[int]) -> None:
        """Keep a reply's exact tokens by its text, so that the reply fed back next turn
        matches the cache even where re-tokenizing it would differ."""
        key = text.strip()
        if not key:
            return
        self._generated[key] = tokens
        self._generated.move_to_end(key)
        while len(self._generated) > 64:
            self._generated.popitem(last=False)

    def recall(self, text: str, tokens: Sequence[int]) -> None:
        """A journalled reply's tokens, remembered as if this session had generated them. The
        journal is read, not trusted: a token that is no id of this model's vocabulary (an edited
        journal, another model's reply) makes the whole list ignored, and the text is then
        re-tokenized as any text is."""
        if all(type(t) is int and 0 <= t < self.backend.n_vocab for t in tokens):
            self.remember(text, list(tokens))

    def _score_sync(self, messages: list[Message], candidates: list[str], prefix: str) -> ScoreResult:
        be = self.backend
        timing = Timing()
        started = time.perf_counter()
        prompt = self._prompt_tokens(messages, reply_prefix=prefix)
        ends = be.tokenize(be.format.end_of_turn, special=True)
        encoded = [be.tokenize(c, special=False) + ends for c in candidates]
        if any(len(e) == len(ends) for e in encoded):
            raise ValueError("score() candidates must be non-empty strings")
        self._check_fits(len(prompt), max(len(e) for e in encoded))
        queued = time.perf_counter()
        with be.computing(self):
            began = time.perf_counter()
            timing.wait_s = began - queued
            evaluated = self.evaluate_prompt(prompt)
            timing.prompt_s = time.perf_counter() - started
            first = log_softmax(self._logits(-1))
            if be.score_mode == "sequential":
                logprobs = self._score_sequential(len(prompt), encoded, first)
                rows = sum(len(e) - 1 for e in encoded)
            else:
                logprobs, rows = self.pool.score(self.seq, len(prompt), encoded, first, cap=be.score_batch_tokens)
            self._cached = list(prompt)
            done = time.perf_counter()
        timing.total_s = done - started
        timing.prefill_s, timing.decode_s = done - began, 0.0  # the prompt and every candidate: all evaluated, nothing decoded
        return ScoreResult.of(candidates, logprobs, [len(e) for e in encoded],
                              Usage(len(prompt), evaluated + rows, 0, len(prompt) - evaluated), timing, be.model_id)

    def _score_sequential(self, n: int, encoded: list[list[int]], first: np.ndarray) -> list[float]:
        """Each candidate after the prompt, one after another, rolled back after each: the way
        before batching, kept as the reference the batched way is tested and benchmarked on."""
        logprobs: list[float] = []
        for tokens in encoded:
            total = float(first[tokens[0]])
            if len(tokens) > 1:
                self._decode(tokens[:-1], n, all_logits=True)
                for i, token in enumerate(tokens[1:]):
                    total += float(log_softmax(self._logits(i))[token])
                self._ctx.seq_rm(self.seq, n, -1)
            logprobs.append(total)
        return logprobs

    def _logits(self, index: int) -> np.ndarray:
        return self.pool.logits(index)
