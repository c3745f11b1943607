"""llama.cpp in process, through llama-cpp-python's low-level wrappers.

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
step for all of them (``backends/lockstep.py``, up to ``max_concurrency``); prompts and scoring
run one at a time on the shared context. :meth:`LlamaCppBackend.set_parallel` gives each
session a context and a compute slot of its own instead (``max_concurrency = 1``, spare cores).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from .base import (Backend, BackendError, BackendUnavailable, ChatStream, Completion, ContextOverflow, Emit,
                    Generation, Message, SamplingOptions, ScoreResult, Session, Timing, Usage)
from .chat_format import ChatFormat, get_format
from .chat_template import AppendOnly, ChatTemplate, append_only, template_format, tokenize_pieces
from .lockstep import FairLock, Lockstep, Reply
from .registry import ModelEntry
from .structured import bounded_ints_as_enums

log = logging.getLogger(__name__)

_INIT_LOCK = threading.Lock()
_initialised = False
_log_callback: Any = None


def _llama() -> Any:
    """Import llama-cpp-python once, quietly: llama.cpp's own log lines go to Python logging
    (``backends.llamacpp.native``) instead of the terminal, where they would break the TUI."""
    global _initialised, _log_callback
    import llama_cpp

    with _INIT_LOCK:
        if not _initialised:
            native = logging.getLogger(f"{__name__}.native")

            @llama_cpp.llama_log_callback
            def forward(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
                # ggml's levels: 0 none, 1 debug, 2 info, 3 warn, 4 error, 5 continuation.
                # Only errors are worth a user's attention; failures also surface as exceptions.
                native.log(logging.WARNING if level == 4 else logging.DEBUG, text.decode("utf-8", "replace").rstrip())

            _log_callback = forward  # keep a reference: the C side holds only a pointer
            llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            _initialised = True
    return llama_cpp


def default_threads() -> int:
    """Half the logical CPUs (about the physical cores), at least one.

    ggml's worker threads spin while they wait for each other; with one thread per logical CPU
    any other busy thread (the Textual interface, a second process) stalls them all. Measured
    on a 2-CPU machine under load: 1 thread decoded SmolLM2 at 18.7 tok/s, 2 threads at 2.8.
    Set ``threads`` on a model's entry to choose otherwise.
    """
    return max(1, (os.cpu_count() or 2) // 2)


class LlamaCppBackend(Backend):
    """One GGUF model loaded once; its sessions are sequences of one shared KV pool (or, with
    ``kv_layout = "per_agent"``, each a context of its own)."""

    kind = "llamacpp"
    entry: ModelEntry

    def __init__(self, entry: ModelEntry, path: Path) -> None:
        super().__init__()
        llama_cpp = _llama()
        from llama_cpp import _internals

        self._internals = _internals
        self.entry = entry
        self.model_id = entry.id
        self.path = path
        params = _internals.LlamaModel.default_params()
        params.n_gpu_layers = 0x7FFFFFFF if entry.gpu_layers == -1 else entry.gpu_layers
        params.use_extra_bufts = entry.cpu_extra_buffers
        try:
            self.model = _internals.LlamaModel(path_model=str(path), params=params, verbose=False)
        except ValueError as exc:
            raise BackendUnavailable(
                f"model {entry.id!r}: llama.cpp could not load {path} ({exc}). "
                "The file may be incomplete or not a GGUF model; pull or reinstall it."
            ) from None
        self._llama_cpp = llama_cpp
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
        #: False re-evaluates every prompt from its first token (the naive way, for benchmarks).
        self.kv_reuse = True
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
        #: reply at a time). At most EXACT_BATCH_ROWS, so that each row is computed as alone.
        self.lockstep_width = min(entry.max_concurrency, EXACT_BATCH_ROWS)
        #: Prompt tokens per llama_decode. On the CPU, EXACT_BATCH_ROWS: below 64 rows flash
        #: attention walks each sequence's own cells in order and skips the others', so a prompt
        #: gives the same numbers wherever its cells lie in the shared cache (alone, beside other
        #: agents, or while replies decode in lockstep); from 64 rows its tiled path depends on
        #: where the cells lie. On the CPU the time is bound by the tokens, not the batches, so
        #: this costs nothing measurable; on a GPU (gpu_layers ≠ 0) big batches are what make
        #: prompts fast, so there it is n_batch, and a greedy reply may differ in its last bits.
        self.prompt_chunk = EXACT_BATCH_ROWS if entry.gpu_layers == 0 else self.n_batch
        self._pool: KvPool | None = None
        self._pool_lock = threading.Lock()
        self._eot_tokens = self._end_of_turn_tokens()
        self._piece_buf = ctypes.create_string_buffer(64)
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

    def _is_special(self, token: int) -> bool:
        attr = self._llama_cpp.llama_vocab_get_attr(self.model.vocab, token)
        return bool(attr & (self._llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | self._llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED))

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
                                 self._is_special)
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
        return session.pool.lockstep

    def pool_for(self, session: LlamaCppSession) -> KvPool:
        """The KV pool ``session`` lives in: the model's shared one, or a context of its own."""
        if self.kv_layout == "per_agent":
            return KvPool(self, self.n_ctx, growable=False)
        with self._pool_lock:  # agents joining at once (a jury) must find one pool
            if self._pool is None:
                self._pool = KvPool(self, self.n_ctx, growable=True)
            return self._pool

    def kv_stats(self) -> dict[str, Any]:
        """KV cells reserved and in use, over every context of this model (for benchmarks)."""
        pools = {id(p): p for p in ([self._pool] if self._pool else [])}
        for session in self._sessions.values():
            if isinstance(session, LlamaCppSession) and session._pool is not None:
                pools[id(session._pool)] = session._pool
        cells = sum(p.cells for p in pools.values())
        per_token = self.kv_bytes_per_token()
        return {
            "contexts": len(pools),
            "cells": cells,
            "kv_bytes": cells * per_token,
            "kv_bytes_per_token": per_token,
            "grows": sum(p.grows for p in pools.values()),
            "evictions": sum(p.evictions for p in pools.values()),
        }

    def kv_bytes_per_token(self) -> int:
        from .kv_memory import kv_bytes_per_token, kv_shape_from_metadata

        return kv_bytes_per_token(kv_shape_from_metadata(self.model.metadata()), self.kv_cache_type)

    def is_end(self, token: int) -> bool:
        return token in self._eot_tokens or bool(self._llama_cpp.llama_vocab_is_eog(self.model.vocab, token))

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        """Tokens of ``text``. ``special=False`` keeps markers such as ``<|im_end|>`` inside
        user or model text as plain text, so a case cannot forge a turn boundary."""
        if not text:
            return []
        return self.model.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens render as nothing)."""
        buf = self._piece_buf
        n = self._llama_cpp.llama_token_to_piece(self.model.vocab, token, buf, len(buf), 0, False)
        if n < 0:  # longer than the buffer: grow it once and retry
            self._piece_buf = buf = ctypes.create_string_buffer(-n)
            n = self._llama_cpp.llama_token_to_piece(self.model.vocab, token, buf, len(buf), 0, False)
        return buf.raw[:n]

    def _new_session(self, name: str) -> LlamaCppSession:
        return LlamaCppSession(self, name)

    def new_context(self, cells: int | None = None, n_seq: int = 1) -> Any:
        """A context of ``cells`` KV cells (default: one agent's window) for ``n_seq`` sequences
        over one unified cache, so any sequence may use any free cell."""
        params = self._internals.LlamaContext.default_params()
        params.n_ctx = cells or self.n_ctx
        params.n_seq_max = n_seq
        params.kv_unified = True
        if self.kv_cache_type != "f16":  # llama.cpp quantizes the V cache only with flash attention
            kind = {"q8_0": self._llama_cpp.GGML_TYPE_Q8_0}[self.kv_cache_type]
            params.type_k = params.type_v = kind
            params.flash_attn_type = self._llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
        params.n_batch = self.n_batch
        params.n_ubatch = self.n_batch
        params.n_threads = self.n_threads
        params.n_threads_batch = self.n_threads
        # A full-size sliding-window cache (Gemma) so that rolling back to a cached prefix,
        # which scoring does for every candidate, never needs positions already evicted.
        params.swa_full = True
        params.no_perf = True
        try:
            return self._internals.LlamaContext(model=self.model, params=params, verbose=False)
        except ValueError as exc:
            raise BackendError(
                f"model {self.model_id!r}: could not create a context of {params.n_ctx} KV cells ({exc}); "
                "lower context_length in models.toml, or set kv_cache_type = \"q8_0\""
            ) from None

    async def aclose(self) -> None:
        """Wait for the calls in flight, then free the contexts and the weights, in a worker
        thread: freeing a multi-GB model takes long enough to freeze the app's screen."""
        self._closed = True  # no new session meanwhile
        await asyncio.to_thread(self._close)
        await super().aclose()

    def _close(self) -> None:
        if self._pool is not None:  # the replies in flight end first
            self._pool.lockstep.close()
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
            "file": str(self.path),  # the model's file, for the debate's provenance (store/provenance.py)
            "profile": self.entry.profile,
        }


class LlamaCppSession(Session):
    """One agent's own KV cache on a shared model."""

    backend: LlamaCppBackend

    def __init__(self, backend: LlamaCppBackend, name: str) -> None:
        super().__init__(backend, name)
        self.lock = threading.Lock()
        self._pool: KvPool | None = None
        self.seq = -1
        self.last_used = 0.0
        #: Tokens whose keys and values are in this session's cache, in order.
        self._cached: list[int] = []
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

    # -- what the pool tells its owners (KvPool never writes a session's fields) ----------

    @property
    def cached(self) -> Sequence[int]:
        """The tokens whose cells this agent's sequence holds, position by position."""
        return self._cached

    def evicted(self, *, sequence: bool) -> None:
        """The pool dropped this agent's cells to make room (memory was short); with
        ``sequence`` it also gave the sequence id to another agent. Either way the next call
        evaluates the whole prompt again, and with ``sequence`` first rejoins the pool."""
        self._cached = []
        if sequence:
            self._pool, self.seq = None, -1

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
            pool = self.backend.pool_for(self)
            with pool.lock:
                self.seq = pool.acquire(self)
            self._pool = pool
        return self._pool

    @property
    def _ctx(self) -> Any:
        return self.pool.ctx

    def _decode(self, tokens: Sequence[int], start: int, *, all_logits: bool = False, cache: bool = False) -> None:
        """Run ``tokens`` at positions ``start…`` of this session's sequence; logits are kept
        for the last one (or all). With ``cache`` each chunk joins :attr:`_cached` as soon as
        its cells exist: a later chunk may grow the pool, which moves only the cells that
        :attr:`_cached` accounts for."""
        pool = self.pool
        n_batch = self.backend.prompt_chunk
        for offset in range(0, len(tokens), n_batch):
            chunk = tokens[offset : offset + n_batch]
            last = len(chunk) - 1
            pool.decode(
                [(t, start + offset + i, self.seq, all_logits or i == last) for i, t in enumerate(chunk)],
                protect={self.seq},
            )
            if cache:
                self._cached.extend(chunk)

    def evaluate_prompt(self, prompt: list[int]) -> int:
        """Bring the cache to exactly ``prompt`` and return how many tokens had to be run."""
        pool = self.pool
        common = 0
        if self.backend.kv_reuse:
            for cached, new in zip(self._cached, prompt):
                if cached != new:
                    break
                common += 1
            shared = pool.share_prefix(self.seq, prompt, common)
            if shared > common:
                self._cached, common = prompt[:shared], shared
        if common == len(prompt):  # fully cached: re-run the last token to get fresh logits
            common -= 1
        if common < len(self._cached) and not pool.ctx.kv_cache_seq_rm(self.seq, common, -1):
            pool.forget(self.seq)
            common = 0
        self._cached = self._cached[:common]
        self._decode(prompt[common:], common, cache=True)
        self._cached = list(prompt)
        return len(prompt) - common

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
        grammar = _grammar_for(json_schema) if json_schema else None
        prompt = self._prompt_tokens(messages)
        self._check_fits(len(prompt), 1)
        stops = tuple(opts.stop) + (() if json_schema else be.format.stop)
        reply = Reply(self, prompt, gen, emit, _Sampler(be, opts, grammar), stops)
        try:
            with self.lock:
                lockstep = be.lockstep_for(self)
                if lockstep is not None:
                    return lockstep.generate(reply)
            with be.computing(self):  # alone: the same cycle as a lockstep step, one row
                reply.evaluated = self.evaluate_prompt(prompt)
                gen.prompt_done()
                goes_on = reply.first(self._ctx)
                while goes_on:
                    self._decode([reply.pending], reply.position)
                    goes_on = reply.decoded() and reply.take(reply.sampler.sample(self._ctx))  # the pool may have grown
            return reply.complete()
        finally:
            reply.sampler.close()

    def cache_token(self, token: int) -> None:
        """A token generated by a reply is now in this agent's cells (the lockstep's steps)."""
        self._cached.append(token)

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
        with be.computing(self):
            evaluated = self.evaluate_prompt(prompt)
            timing.prompt_s = time.perf_counter() - started
            first = _log_softmax(self._logits(-1))
            if be.score_mode == "sequential":
                logprobs = self._score_sequential(len(prompt), encoded, first)
                rows = sum(len(e) - 1 for e in encoded)
            else:
                logprobs, rows = self.pool.score(self.seq, len(prompt), encoded, first)
            self._cached = list(prompt)
        timing.total_s = time.perf_counter() - started
        return ScoreResult.of(candidates, logprobs, [len(e) for e in encoded],
                              Usage(len(prompt), evaluated + rows, 0), timing, be.model_id)

    def _score_sequential(self, n: int, encoded: list[list[int]], first: np.ndarray) -> list[float]:
        """Each candidate after the prompt, one after another, rolled back after each: the way
        before batching, kept as the reference the batched way is tested and benchmarked on."""
        logprobs: list[float] = []
        for tokens in encoded:
            total = float(first[tokens[0]])
            if len(tokens) > 1:
                self._decode(tokens[:-1], n, all_logits=True)
                for i, token in enumerate(tokens[1:]):
                    total += float(_log_softmax(self._logits(i))[token])
                self._ctx.kv_cache_seq_rm(self.seq, n, -1)
            logprobs.append(total)
        return logprobs

    def _logits(self, index: int) -> np.ndarray:
        return self.pool.logits(index)


#: Sequences one context may hold: the agents of a model plus the scratch sequences that batched
#: scoring uses, one per candidate in a batch (llama.cpp allows up to 256; a cell's sequence set
#: is a fixed-size bitset, so this costs no memory).
POOL_SEQUENCES = 64

#: Largest batch that llama.cpp's CPU flash attention handles on the same path as one token
#: (its tiled path starts at GGML_FA_TILE_Q = 64 query rows).
EXACT_BATCH_ROWS = 63

#: The fewest tokens a shared prefix must save (``KvPool.share_prefix``): below a step's worth
#: of rows, evaluating them costs about one decode anyway, and an agent's cells stay its own.
SHARE_MIN_TOKENS = 64

_NO_KV_SLOT = 1  # llama_decode's return code when the KV cache has no room for the batch


class KvPool:
    """One ``llama_context`` whose unified KV cache holds one sequence per agent.

    Why: a context per agent reserves a whole window of KV cells per agent (and its own compute
    and logits buffers) whether or not the agent uses them. Here the agents of one model share
    the cells, each cell tagged with the sequence that owns it, so memory follows the tokens
    actually cached. A shared pool starts at one agent's window and, when a batch finds no free
    cells, grows by half a window (each sequence's cells copied over exactly with llama.cpp's
    per-sequence state API) up to one window per agent, i.e. never beyond the per-agent layout;
    past that the least recently used other agent's cache is dropped (it is re-evaluated on its
    next turn, and :attr:`evictions` counts it). Each agent's own prefix reuse is unchanged: its
    sequence holds exactly its tokens at its positions. The price: attention on a unified cache
    walks the cells of all sequences (masked), so decoding slows a little as the pool fills.

    Not thread-safe: callers hold :attr:`lock` (``LlamaCppBackend.computing``).
    """

    def __init__(self, backend: LlamaCppBackend, cells: int, *, growable: bool) -> None:
        self.backend = backend
        #: Re-entrant: a session that lost its sequence while waiting rejoins under the lock.
        #: Fair: the lockstep thread's steps give way to other calls between two steps.
        self.lock = FairLock()
        self.cells = cells
        self.growable = growable
        self.ctx = backend.new_context(cells, POOL_SEQUENCES)
        self.batch = backend._internals.LlamaBatch(n_tokens=backend.n_batch, embd=0, n_seq_max=1, verbose=False)
        #: A batch whose tokens may belong to several sequences (made on first use by scoring).
        self._shared_batch: Any = None
        self._free = list(range(POOL_SEQUENCES - 1, -1, -1))
        self.owners: dict[int, LlamaCppSession] = {}
        self.grows = 0
        self.evictions = 0
        #: Scratch sequences of a scoring batch in flight: which agent's first n cells they share.
        self._scratch: dict[int, tuple[int, int]] = {}
        #: Sequences of replies decoding in lockstep: never evicted while they decode.
        self.busy: set[int] = set()
        self.lockstep = Lockstep(self, backend.lockstep_width)

    # -- sequences ------------------------------------------------------------------------

    def acquire(self, session: LlamaCppSession | None = None, *, protect: AbstractSet[int] = frozenset()) -> int:
        """A free sequence id; when none is left, the least recently used agent outside
        ``protect`` gives its sequence up (its cache is dropped; it rejoins on its next call)."""
        if not self._free:
            idle = [s for s in self.owners if s not in protect and s not in self.busy]
            if not idle:
                raise BackendError(
                    f"model {self.backend.model_id!r}: more than {POOL_SEQUENCES} sequences busy in one context; "
                    "use fewer agents on this model or kv_layout = \"per_agent\""
                )
            victim = self.owners[min(idle, key=lambda s: self.owners[s].last_used)]
            self.release(victim.seq)
            victim.evicted(sequence=True)
            self.evictions += 1
        seq = self._free.pop()
        if session is not None:
            self.owners[seq] = session
        return seq

    def release(self, seq: int) -> None:
        if seq < 0 or seq in self._free:
            return
        self.forget(seq)
        self.owners.pop(seq, None)
        self._free.append(seq)

    def forget(self, seq: int) -> None:
        """Drop every cell of ``seq`` (cells shared with other sequences stay theirs)."""
        self._api().llama_memory_seq_rm(self.ctx.memory, seq, -1, -1)

    def _api(self) -> Any:
        return self.backend._llama_cpp

    def share_prefix(self, seq: int, tokens: Sequence[int], have: int) -> int:
        """Give ``seq`` the longest prefix of ``tokens`` that another agent's sequence holds,
        when it is longer than the ``have`` tokens ``seq`` already holds, and return the new
        count (``have`` when no other sequence does better).

        Why: the judges of a panel, the jurors of D3 and the CRIT evaluations of one round read
        the same transcript after the same instructions; its cells are computed once, by
        whoever read it first, and the others' sequences are tagged onto them
        (``llama_memory_seq_cp`` copies no data). Their numbers are the first reader's: the same
        as evaluating the prefix anew, up to how the prefix was cut into batches (a prompt
        evaluated in other chunks differs in the last bits, as it does for one agent's own
        growing transcript)."""
        best, donor = have + SHARE_MIN_TOKENS - 1, -1
        wanted = np.asarray(tokens, dtype=np.int64)
        for other, owner in self.owners.items():
            cached = owner.cached
            n = min(len(cached), len(wanted))
            if other == seq or n <= best:
                continue
            differ = np.flatnonzero(np.asarray(cached[:n], dtype=np.int64) != wanted[:n])
            common = int(differ[0]) if len(differ) else n
            if common > best:
                best, donor = common, other
        if donor < 0:
            return have
        api = self._api()
        api.llama_memory_seq_rm(self.ctx.memory, seq, -1, -1)
        api.llama_memory_seq_cp(self.ctx.memory, donor, seq, 0, best)
        return best

    # -- decoding -------------------------------------------------------------------------

    def decode(self, items: Sequence[tuple[int, int, int | Sequence[int], bool]], *, protect: AbstractSet[int]) -> None:
        """One llama_decode of ``(token, position, sequence, wants_logits)`` items; when the cache
        has no room, grow it or evict an agent outside ``protect``, then try again. A sequence
        may be a tuple of sequences: the token's cell then belongs to all of them (scoring
        shares a candidate prefix this way)."""
        api = self._api()
        shared = any(not isinstance(item[2], int) for item in items)
        if shared and self._shared_batch is None:
            self._shared_batch = self.backend._internals.LlamaBatch(
                n_tokens=self.backend.n_batch, embd=0, n_seq_max=POOL_SEQUENCES, verbose=False
            )
        while True:
            batch = (self._shared_batch if shared else self.batch).batch
            batch.n_tokens = len(items)
            for j, (token, pos, seq, logits) in enumerate(items):
                batch.token[j] = token
                batch.pos[j] = pos
                if isinstance(seq, int):
                    batch.seq_id[j][0] = seq
                    batch.n_seq_id[j] = 1
                else:
                    for i, one in enumerate(seq):
                        batch.seq_id[j][i] = one
                    batch.n_seq_id[j] = len(seq)
                batch.logits[j] = logits
            code = api.llama_decode(self.ctx.ctx, batch)
            if code == 0:
                return
            if code != _NO_KV_SLOT or not self._make_room(protect):
                raise BackendError(
                    f"model {self.backend.model_id!r}: llama_decode failed (code {code}, {self.cells} KV cells); "
                    "raise context_length in models.toml or shorten the transcript"
                )

    def _make_room(self, protect: AbstractSet[int]) -> bool:
        cap = self.backend.n_ctx * max(1, len(self.owners))
        if self.growable and self.cells < cap:
            step = max(256, self.backend.n_ctx // 2)
            self._grow(min(cap, self.cells + step))
            return True
        victims = [s for s in self.owners if s not in protect and s not in self.busy and self.owners[s].cached]
        if not victims:
            return False
        seq = min(victims, key=lambda s: self.owners[s].last_used)
        self.forget(seq)
        self.owners[seq].evicted(sequence=False)
        self.evictions += 1
        return True

    def _grow(self, cells: int) -> None:
        """A bigger context with every agent's cells copied over exactly.

        The agents' cells are saved first and the old context freed before the new one is
        made, so memory peaks at the new context plus the cells in use, not at both contexts."""
        api = self._api()
        saved: list[tuple[int, Any, int]] = []
        for seq, owner in self.owners.items():
            if not owner.cached:
                continue
            size = api.llama_state_seq_get_size(self.ctx.ctx, seq)
            buf = (ctypes.c_uint8 * size)()
            written = api.llama_state_seq_get_data(self.ctx.ctx, buf, size, seq)
            saved.append((seq, buf, written))
        self.ctx.close()
        try:
            self.ctx = self.backend.new_context(cells, POOL_SEQUENCES)
        except BackendError:  # no memory for more: back to the old size, every cache dropped
            self.ctx = self.backend.new_context(self.cells, POOL_SEQUENCES)
            for owner in self.owners.values():
                owner.evicted(sequence=False)
            self._scratch.clear()
            raise
        for seq, buf, written in saved:
            if not written or not api.llama_state_seq_set_data(self.ctx.ctx, buf, written, seq):
                self.owners[seq].evicted(sequence=False)  # could not move it: that agent re-evaluates next turn
        for tmp, (src, n) in self._scratch.items():  # a scoring batch in flight: share again
            api.llama_memory_seq_cp(self.ctx.memory, src, tmp, 0, n)
        self.cells = cells
        self.grows += 1

    def logits(self, index: int) -> np.ndarray:
        ptr = self.ctx.get_logits_ith(index)
        n_vocab = self.backend.n_vocab
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()

    # -- batched scoring ------------------------------------------------------------------

    def score(self, seq: int, n: int, encoded: list[list[int]], first: np.ndarray) -> tuple[list[float], int]:
        """Summed log-probabilities of each candidate continuing ``seq``'s first ``n`` tokens,
        and the number of tokens evaluated for them.

        Every candidate gets a scratch sequence that shares the prompt's cells
        (``llama_memory_seq_cp`` only tags cells, nothing is copied) and its tokens go into one
        llama_decode together, each reading its next-token log-probabilities from its own rows
        of logits; the scratch sequences are dropped afterwards. Candidates that begin with the
        same tokens ("Hepatitis B", "Hepatitis C") share those tokens' rows: each shared token
        is evaluated once, in one cell that belongs to all their scratch sequences. Candidates
        that would not fit one batch (``score_batch_tokens`` rows, free sequences) go in as
        few batches as needed, of about equal size.

        On CPU the time is llama_decode's, bound by the rows evaluated (a row costs the same
        in a batch of 16 or 63); the logits of a batch are read through one numpy view.
        """
        api = self._api()
        logprobs = [float(first[tokens[0]]) for tokens in encoded]
        # Sorted by tokens, so candidates that share a prefix meet in the same batch.
        pending = sorted((k for k, tokens in enumerate(encoded) if len(tokens) > 1), key=lambda k: encoded[k])
        cap = min(self.backend.n_batch, self.backend.score_batch_tokens)
        evaluated = 0
        for group in self._score_groups(pending, encoded, cap):
            scratch: list[int] = []
            for _ in group:
                scratch.append(self.acquire(protect={seq, *scratch}))
            try:
                rows: dict[tuple[int, ...], list[int]] = {}  # prefix -> scratch sequences sharing its cell
                wanted: list[tuple[int, tuple[int, ...], int]] = []  # (candidate, prefix, token it predicts)
                for k, tmp in zip(group, scratch):
                    api.llama_memory_seq_cp(self.ctx.memory, seq, tmp, 0, n)
                    self._scratch[tmp] = (seq, n)
                    tokens = encoded[k]
                    for i in range(len(tokens) - 1):
                        prefix = tuple(tokens[: i + 1])
                        rows.setdefault(prefix, []).append(tmp)  # a prefix comes before its extensions
                        wanted.append((k, prefix, tokens[i + 1]))
                self.decode([(p[-1], n + len(p) - 1, tuple(seqs), True) for p, seqs in rows.items()], protect={seq, *scratch})
                evaluated += len(rows)
                index = {prefix: row for row, prefix in enumerate(rows)}
                picked = _token_logprobs(self.batch_logits(len(rows)), [index[p] for _, p, _ in wanted], [t for _, _, t in wanted])
                for (k, _, _), lp in zip(wanted, picked):
                    logprobs[k] += lp
            finally:
                for tmp in scratch:
                    self._scratch.pop(tmp, None)
                    self.release(tmp)
        return logprobs, evaluated

    def _score_groups(self, pending: list[int], encoded: list[list[int]], cap: int) -> Iterator[list[int]]:
        """``pending`` candidates (in order) cut into batches of at most ``cap`` rows, a shared
        prefix counted once, and at most as many candidates as free sequences; the batches are
        evened out (three of ~44 rows rather than 63, 63 and 5)."""

        def cut(limit: int) -> list[list[int]]:
            groups: list[list[int]] = []
            group: list[int] = []
            seen: set[tuple[int, ...]] = set()
            for k in pending:
                tokens = encoded[k]
                fresh = {tuple(tokens[: i + 1]) for i in range(len(tokens) - 1)} - seen
                if group and (len(seen) + len(fresh) > limit or len(group) >= max(1, len(self._free))):
                    groups.append(group)
                    group, seen = [], set()
                    fresh = {tuple(tokens[: i + 1]) for i in range(len(tokens) - 1)}
                if len(fresh) > cap:
                    raise BackendError(
                        f"model {self.backend.model_id!r}: a candidate of {len(tokens)} tokens "
                        f"does not fit a scoring batch of {cap} tokens"
                    )
                group.append(k)
                seen |= fresh
            if group:
                groups.append(group)
            return groups

        groups = cut(cap)
        if len(groups) > 1:  # the same number of batches, of about equal size, where that works
            rows = sum(len({tuple(encoded[k][: i + 1]) for k in g for i in range(len(encoded[k]) - 1)}) for g in groups)
            for limit in range(-(-rows // len(groups)), cap):
                even = cut(limit)
                if len(even) == len(groups):
                    groups = even
                    break
        yield from groups

    def batch_logits(self, rows: int) -> np.ndarray:
        """The last batch's logits, ``rows`` × vocabulary, as a view (no copy): valid until the
        next llama_decode. Every token of the batch must have asked for logits."""
        ptr = self._api().llama_get_logits(self.ctx.ctx)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(rows, self.backend.n_vocab))

    def close(self) -> None:
        self.lockstep.close()
        self.ctx.close()
        self.batch.close()
        if self._shared_batch is not None:
            self._shared_batch.close()


class _Sampler:
    """Token sampling, with a fast path for grammar-constrained replies.

    A grammar applied to the whole vocabulary on every step is slow (every one of 49k–262k
    tokens is checked against the grammar's stacks). As llama.cpp's own ``common_sampler`` does,
    we first sample without the grammar and ask the grammar about that single token; only when
    it is rejected do we resample with the grammar over the full vocabulary. The result is the
    same distribution restricted to valid tokens whenever the first draw is valid, which is
    most of the time.

    Repetition penalties apply to free text only: JSON repeats its punctuation by design, and
    penalising ``"`` or ``,`` derails structured replies.
    """

    def __init__(self, backend: LlamaCppBackend, opts: SamplingOptions, grammar: Any) -> None:
        self._api = backend._llama_cpp
        seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4), "little")
        penalty = opts.repeat_penalty if grammar is None and opts.repeat_penalty else 1.0
        self.free = self._chain(backend, opts, None, penalty, seed)
        self.constrained = self._chain(backend, opts, grammar, 1.0, seed + 1) if grammar is not None else None
        self._one = self._api.llama_token_data()
        self._one_array = self._api.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False
        )
        self._closed = False

    @staticmethod
    def _chain(backend: LlamaCppBackend, opts: SamplingOptions, grammar: Any, penalty: float, seed: int) -> Any:
        sampler = backend._internals.LlamaSampler()
        if grammar is not None:
            sampler.add_grammar(backend.model, grammar)  # first, so it sees every candidate
        if penalty != 1.0:
            sampler.add_penalties(backend.n_vocab, 64, penalty, 0.0, 0.0)
        if opts.temperature <= 0:
            sampler.add_greedy()
            return sampler
        if opts.top_k > 0:
            sampler.add_top_k(opts.top_k)
        sampler.add_top_p(opts.top_p, 1)
        if opts.min_p > 0:
            sampler.add_min_p(opts.min_p, 1)
        sampler.add_temp(opts.temperature)
        sampler.add_dist(seed)
        return sampler

    def sample(self, ctx: Any, row: int = -1) -> int:
        """The next token from row ``row`` of the last batch's logits (-1: its last row)."""
        token = self.free.sample(ctx, row)
        if self.constrained is None:
            return token
        grammar = self._api.llama_sampler_chain_get(self.constrained.sampler, 0)
        self._one.id, self._one.logit, self._one.p = token, 0.0, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        self._api.llama_sampler_apply(grammar, ctypes.byref(self._one_array))
        if self._one.logit != float("-inf"):
            self._api.llama_sampler_accept(self.constrained.sampler, token)
            return token
        return self.constrained.sample(ctx, row)  # applies the grammar to all tokens, accepts

    def close(self) -> None:
        """Free llama.cpp's samplers (once: a second call does nothing)."""
        if self._closed:
            return
        self._closed = True
        self.free.close()
        if self.constrained is not None:
            self.constrained.close()


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


def _token_logprobs(logits: np.ndarray, rows: Sequence[int], tokens: Sequence[int]) -> list[float]:
    """``log_softmax(logits[r])[t]`` for each pair, over the distinct rows at once: the same
    float32 arithmetic as :func:`_log_softmax` (max, shift, exp, pairwise sum, log), without
    materialising the log-softmax of whole rows."""
    distinct = sorted(set(rows))
    block = logits if len(distinct) == len(logits) else logits[distinct]
    top = block.max(axis=1, keepdims=True)
    shifted = block - top
    log_norm = np.log(np.exp(shifted).sum(axis=1))
    where = {r: j for j, r in enumerate(distinct)}
    return [float(shifted[where[r], t] - log_norm[where[r]]) for r, t in zip(rows, tokens)]


_GRAMMARS: dict[str, Any] = {}


def _grammar_for(json_schema: dict[str, Any]) -> Any:
    """A compiled GBNF grammar for a JSON schema (cached: protocols reuse a few schemas)."""
    from llama_cpp.llama_grammar import LlamaGrammar

    key = json.dumps(json_schema)  # property order matters: the grammar emits keys in this order
    if key not in _GRAMMARS:
        try:
            grammar_schema = json.dumps(bounded_ints_as_enums(json_schema))
            _GRAMMARS[key] = LlamaGrammar.from_json_schema(grammar_schema, verbose=False)
        except (ValueError, RuntimeError, KeyError, NotImplementedError) as exc:
            raise BackendError(f"cannot turn this JSON schema into a grammar: {exc}") from None
    return _GRAMMARS[key]

