"""A debate resumed after a cut computes, on llama.cpp's CPU, exactly what the uncut debate did.

The promise (``exact_resume``, on by default): a resumed agent reads its whole history in
aligned prompt chunks, and the uncut agent reuses only cells it read the same way, so both
paths hold the same KV cells bit for bit and every later reply and score is the same. Run on the
bundled Gemma 3 270M, whose quantized matrix kernels round differently by the number of rows in
a batch: with ``exact_resume`` off, the first reply after a cut after round 1 differs here (seen
failing that way), and the verdict's scores differ in their second decimal. Two agents share
the model's pool, take turns, answer at once in lockstep and read each other's words, as
debaters do.
"""

from __future__ import annotations

import asyncio

import pytest

from backends.base import Message, SamplingOptions
from backends.llamacpp import LlamaCppBackend
from backends.registry import Registry
from backends.sources import resolve_path

pytestmark = pytest.mark.model

GREEDY = SamplingOptions(max_tokens=40, temperature=0.0, repeat_penalty=1.0)
ROLES = ("proponent", "opponent")
ROUNDS = 3


def fresh(registry: Registry, **update: object) -> LlamaCppBackend:
    entry = registry.get("gemma3-270m").model_copy(update=update)
    return LlamaCppBackend(entry, resolve_path(entry))


def opening() -> dict[str, list[Message]]:
    return {r: [Message("system", f"You are the {r} in a debate on whether cities should ban cars. Argue at length.")]
            for r in ROLES}


async def debate(backend: LlamaCppBackend, talk: dict[str, list[Message]], rounds: range) -> list[str]:
    """Rounds of the debate from ``talk`` on: both agents answer at once (lockstep), then
    each reads the other's reply. Returns every reply in order; ``talk`` grows in place."""
    replies: list[str] = []
    for n in rounds:
        for r in ROLES:
            talk[r].append(Message("user", f"Round {n}: give your strongest reason."))
        done = await asyncio.gather(*(backend.session(r).complete(talk[r], GREEDY) for r in ROLES))
        for r, other, reply in zip(ROLES, reversed(ROLES), done, strict=True):
            talk[r].append(Message("assistant", reply.text))
            talk[other].append(Message("user", f"The {r} said: {reply.text}"))
            replies.append(reply.text)
    return replies


async def verdict(backend: LlamaCppBackend, talk: dict[str, list[Message]]) -> list[float]:
    scored = await backend.session("proponent").score(talk["proponent"] + [Message("user", "Who won?")],
                                                      ["proponent", "opponent", "nobody", "the cars"])
    return scored.logprobs


async def test_a_debate_resumed_after_each_round_replies_and_scores_as_the_uncut_one(registry: Registry) -> None:
    uncut = fresh(registry)
    assert uncut.exact_resume and uncut.describe()["exact_resume"] is True
    talk = opening()
    replies = await debate(uncut, talk, range(ROUNDS))
    final = await verdict(uncut, talk)
    uncut._sessions.clear()
    for cut in range(1, ROUNDS):  # a cut after round `cut`: a new process reads the journalled history
        resumed = fresh(registry)
        history = opening()
        replayed(history, replies[: 2 * cut], cut)
        later = await debate(resumed, history, range(cut, ROUNDS))
        assert later == replies[2 * cut :], f"cut after round {cut}: a later reply differs"
        assert await verdict(resumed, history) == final, f"cut after round {cut}: the verdict's scores differ"
        resumed._sessions.clear()


def replayed(talk: dict[str, list[Message]], replies: list[str], rounds: int) -> None:
    """The history a resume rebuilds from the journal: the same messages, no model called."""
    it = iter(replies)
    for n in range(rounds):
        for r in ROLES:
            talk[r].append(Message("user", f"Round {n}: give your strongest reason."))
        said = [next(it) for _ in ROLES]
        for r, other, text in zip(ROLES, reversed(ROLES), said, strict=True):
            talk[r].append(Message("assistant", text))
            talk[other].append(Message("user", f"The {r} said: {text}"))


def test_exact_resume_is_a_model_setting_and_off_where_it_cannot_hold(registry: Registry) -> None:
    """``exact_resume = false`` in models.toml reuses every cell (the faster way), and the
    journalled description says which way a debate ran."""
    loose = fresh(registry, exact_resume=False)
    try:
        assert loose.exact_resume is False and loose.describe()["exact_resume"] is False
        assert loose.decoding().whole_chunks is False
    finally:
        loose._sessions.clear()
