"""Choosing each next token: the sampler chain, with a fast path for grammar-constrained replies."""

from __future__ import annotations

import json
import os
from typing import Any

from ..base import BackendError, SamplingOptions
from ..structured import bounded_ints_as_enums, long_strings_unbounded
from .native import Context, Grammar, Model, SamplerChain


class Sampler:
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

    def __init__(self, model: Model, opts: SamplingOptions, grammar: Grammar | None) -> None:
        seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4), "little")
        penalty = opts.repeat_penalty if grammar is None and opts.repeat_penalty else 1.0
        self.free = self._chain(model, opts, None, penalty, seed)
        self.constrained = self._chain(model, opts, grammar, 1.0, seed + 1) if grammar is not None else None
        self._closed = False

    @staticmethod
    def _chain(model: Model, opts: SamplingOptions, grammar: Grammar | None, penalty: float, seed: int) -> SamplerChain:
        chain = SamplerChain(model)
        if grammar is not None:
            try:
                chain.add_grammar(grammar)  # first, so it sees every candidate
            except ValueError as exc:
                chain.close()
                raise BackendError(str(exc)) from None
        if penalty != 1.0:
            chain.add_penalties(64, penalty)
        if opts.temperature <= 0:
            chain.add_greedy()
            return chain
        if opts.top_k > 0:
            chain.add_top_k(opts.top_k)
        chain.add_top_p(opts.top_p)
        if opts.min_p > 0:
            chain.add_min_p(opts.min_p)
        chain.add_temp(opts.temperature)
        chain.add_dist(seed)
        return chain

    def sample(self, ctx: Context, row: int = -1) -> int:
        """The next token from row ``row`` of the last batch's logits (-1: its last row)."""
        token = self.free.sample(ctx, row)
        if self.constrained is None:
            return token
        if self.constrained.grammar_allows(token):
            self.constrained.accept(token)
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


_GRAMMARS: dict[str, Grammar] = {}


def grammar_for(json_schema: dict[str, Any]) -> Grammar:
    """A compiled GBNF grammar for a JSON schema (cached: protocols reuse a few schemas)."""
    key = json.dumps(json_schema)  # property order matters: the grammar emits keys in this order
    if key not in _GRAMMARS:
        try:
            _GRAMMARS[key] = Grammar(json.dumps(bounded_ints_as_enums(long_strings_unbounded(json_schema))))
        except (ValueError, RuntimeError, KeyError, NotImplementedError) as exc:
            raise BackendError(f"cannot turn this JSON schema into a grammar: {exc}") from None
    return _GRAMMARS[key]
