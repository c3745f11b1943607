"""Replies of several agents on one llama.cpp model, decoded together.

Why: with one model serving several roles (the common laptop set-up) the calls that do not
wait for each other — EVINCE's CRIT of A and of B, a judge panel, D3's jury, the benchmark's
cases in flight — would otherwise run one after another, each token of each reply its own
``llama_decode``. On a CPU or a GPU a step that decodes one token for each of several
sequences costs little more than a step for one: the weights are read once per step, and
reading the weights is what a step costs (memory bandwidth, not arithmetic, for 7–70B models
at a few rows). So the replies in flight advance in lockstep: one ``llama_decode`` per step
over one token of each, every sequence in the model's shared :class:`KvPool`, as
llama-server's slots do.

How a reply goes (:meth:`Lockstep.generate`, in the caller's worker thread):

1. its prompt is evaluated alone, under the pool's lock, exactly as a reply generated alone:
   the prefix already in the agent's sequence is kept, or a longer one that another agent's
   sequence holds is shared (``KvPool.share_prefix``), and the rest runs in chunks of
   ``n_batch`` — between two steps of the replies already decoding (continuous batching: a
   reply that arrives late joins the next step);
2. its first token is sampled at once from the prompt's logits, and the reply joins the
   lockstep;
3. each step (the lockstep's own thread) decodes the pending token of every reply in one
   batch, then samples each reply's next token from its own row of logits with its own sampler
   (its own grammar, seed and penalties), streams its text, and retires the replies that ended
   (end of turn, a stop string, ``max_tokens``, the context's end) or were cancelled — each on
   its own; the others go on.

Why prompts are not batched with the steps: a batch of 64 rows or more takes llama.cpp's tiled
flash-attention path, whose accumulation differs from the one-row path (see
``LlamaCppBackend.score_batch_tokens``), so a prompt evaluated inside a big mixed batch would
not give the numbers it gives alone; and the matrix kernels of K-quant weights change path from
8 rows on the CPU, so a prompt tail of 5 tokens packed with others would not either (packing the
short tails of several agents into one decode saves time: ``benchmarks/shapes.py`` measures how
much, and whether the numbers change). Prompts therefore run exactly as they would alone, and a
step holds at most :data:`~backends.llamacpp.EXACT_BATCH_ROWS` rows: under greedy sampling each
reply is then the reply it would be alone, token for token (``tests/backends/test_lockstep.py``),
as long as a step's rows take the one-row kernels (up to 7 rows for K-quant weights on the CPU:
``LlamaCppBackend.lockstep_width``).

:class:`Reply` is one reply's state, used the same way by a reply generated alone
(``LlamaCppSession._generate_sync``), so both paths share one loop body.
"""

from __future__ import annotations

import codecs
import logging
import threading
import time
from dataclasses import dataclass

from ..base import BackendError, Completion, Emit, FinishReason, Generation, Usage
from ..stops import ReplyText
from .kv_pool import KvPool, Member
from .native import Context, Model
from .sampler import Sampler

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decoding:
    """What a reply needs of its model: the vocabulary that turns tokens into text, the tokens
    that end a turn besides those the vocabulary marks, one agent's context length, and how a
    prompt is run (prefix reuse on or off, tokens per decode)."""

    model: Model
    ends: frozenset[int]
    window: int
    reuse: bool
    chunk: int

    def is_end(self, token: int) -> bool:
        return token in self.ends or self.model.is_eog(token)


class Reply:
    """One reply in the making: its prompt, sampler, text, and where it stands in its sequence.

    The cycle is :meth:`take` (a sampled token: does the reply go on?), then the caller decodes
    :attr:`pending` at :attr:`position`, then :meth:`decoded` (is there room and reason for
    another token?), until :attr:`finish` is set; :meth:`complete` makes the completion.
    """

    def __init__(self, member: Member, prompt: list[int], gen: Generation, emit: Emit, sampler: Sampler,
                 stops: tuple[str, ...], decoding: Decoding) -> None:
        self.member = member
        self.decoding = decoding
        self.prompt = prompt
        self.gen = gen
        self.sampler = sampler
        self.text = ReplyText(stops, emit)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._raw = ""
        self.out: list[int] = []
        #: Where the next token goes in the session's sequence.
        self.position = len(prompt)
        #: Prompt tokens that had to be run (the rest was cached or shared).
        self.evaluated = 0
        #: The token sampled and not yet decoded.
        self.pending = -1
        self.finish: FinishReason | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()

    def can_continue(self) -> bool:
        """Room for another token, and nobody cancelled: else :attr:`finish` says why not."""
        if len(self.out) >= self.gen.options.max_tokens or self.position >= self.decoding.window:
            self.finish = "length"
            return False
        if self.gen.cancelled:
            self.finish = "cancelled"
            return False
        return True

    def take(self, token: int) -> bool:
        """A sampled token: True when it belongs to the reply and must be decoded next; False
        when the reply ended with it (end of turn, or a stop string completed)."""
        if self.decoding.is_end(token):
            self.finish = "stop"
            return False
        self.out.append(token)
        self.gen.token()
        self._raw += self._decoder.decode(self.decoding.model.piece(token))
        if self.text.update(self._raw):
            self.finish = "stop"
            return False
        self.pending = token
        return True

    def decoded(self) -> bool:
        """The pending token is in the sequence's cache; True when another token may follow."""
        self.member.cache_token(self.pending)
        self.position += 1
        return self.can_continue()

    def first(self, ctx: Context) -> bool:
        """The prompt is evaluated: sample the first token from its last logits. True when the
        reply goes on."""
        return self.can_continue() and self.take(self.sampler.sample(ctx))

    def complete(self) -> Completion:
        """The reply is over: release the sampler and stream the held-back text. (Its exact
        tokens are :attr:`out`, for the session to remember.)"""
        self.sampler.close()
        if self.error is not None:
            raise self.error
        finish = self.finish or "length"
        text = self.text.flush(self._decoder.decode(b"", final=True) if finish != "stop" else "")
        cached = len(self.prompt) - self.evaluated
        return self.gen.finish(text, Usage(len(self.prompt), self.evaluated, len(self.out), cached), finish)


class Lockstep:
    """Decodes the replies in flight on one shared :class:`KvPool` together, at most ``width``
    rows per ``llama_decode``.

    One thread of its own does all of it: it takes one arriving reply's prompt, then one step
    of the replies decoding, and again, so a long prompt delays the others by one prompt at
    most, and no caller races another for the pool's lock (a lock is not fair: the thread that
    just released it tends to get it back, which would serialize the replies). Callers wait on
    their reply. Thread-safe."""

    def __init__(self, pool: KvPool, width: int) -> None:
        self.pool = pool
        self.width = width
        self._arrivals: list[Reply] = []
        self._decoding: list[Reply] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        #: Steps run and rows decoded in them (for benchmarks: rows / steps is the mean width).
        self.steps = 0
        self.rows = 0

    def generate(self, reply: Reply) -> Completion:
        """Run ``reply`` to its end: its prompt alone, then in lockstep with the others. The
        caller holds the session's lock (one call per agent at a time)."""
        model_id = self.pool.model_id
        with self._cond:
            if self._closed:
                raise BackendError(f"model {model_id!r} was closed")
            self._arrivals.append(reply)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"lockstep-{model_id}", daemon=True)
                self._thread.start()
            self._cond.notify()
        reply.done.wait()
        return reply.complete()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._arrivals and not self._decoding:
                    if self._closed:
                        self._thread = None
                        return
                    self._cond.wait()
                arrival = self._arrivals.pop(0) if self._arrivals else None
                decoding = list(self._decoding)
            with self.pool.lock:  # no compute slot: lockstep runs only where there is one slot, this pool's lock
                if arrival is not None and self._admit(arrival):
                    decoding.append(arrival)
                for start in range(0, len(decoding), self.width):
                    self._step(decoding[start : start + self.width])
            with self._cond:
                self._decoding = [r for r in decoding if not r.done.is_set()]

    def _admit(self, reply: Reply) -> bool:
        """Evaluate the reply's prompt and sample its first token; True when it goes on."""
        member, decoding = reply.member, reply.decoding
        member.last_used = time.monotonic()
        try:
            reply.gen.began()
            reply.evaluated = self.pool.evaluate(member, reply.prompt, reuse=decoding.reuse, chunk=decoding.chunk)
            reply.gen.prompt_done()
            if reply.first(self.pool.ctx):
                self.pool.busy.add(member.seq)  # from here no other call may evict this sequence
                return True
        except Exception as exc:  # handed to the reply's caller, who raises it
            reply.error = exc
        self._retire(reply)
        return False

    def _step(self, replies: list[Reply]) -> None:
        """One llama_decode of each reply's pending token; then each reply samples its next one
        from its own row (the rows are valid only until the next decode, hence under the lock)."""
        pool = self.pool
        try:
            pool.decode([(r.pending, r.position, r.member.seq, True) for r in replies], protect=frozenset())
        except Exception as exc:  # each caller raises it; the thread goes on serving the others
            for reply in replies:
                reply.error = exc
                self._retire(reply)
            return
        self.steps += 1
        self.rows += len(replies)
        now = time.monotonic()
        for row, reply in enumerate(replies):
            reply.member.last_used = now
            try:
                goes_on = reply.decoded() and reply.take(reply.sampler.sample(pool.ctx, row))
            except Exception as exc:  # handed to the reply's caller, who raises it; the others go on
                reply.error, goes_on = exc, False
            if not goes_on:
                self._retire(reply)

    def _retire(self, reply: Reply) -> None:
        self.pool.busy.discard(reply.member.seq)
        reply.done.set()

    def close(self) -> None:
        """Let the replies in flight end (a consumer that walked away cancels its own), then
        stop the thread; later calls are refused."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join()
