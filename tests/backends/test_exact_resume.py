"""``exact_resume = true`` (models.toml): a debate resumed after a cut computes, on llama.cpp's
CPU, exactly what the uncut debate did.

Two things must hold for that, and each is held here: the resumed agents feed their journalled
replies back as the tokens they were generated as (``Session.recall``), and every prompt is read
from its first token in the same chunks on both paths (no cached prefix reused). Run on the bundled
Gemma 3 270M, a Q4_K_M file: its matrix kernels round differently by the number of rows in a
batch, and with prefix reuse (the default) the first replies after a cut after round 1 and the
verdict's scores differed from the uncut run's in a run of this test on 2026-11-28. Two agents
share the model's pool, answer at once in lockstep and read each other's words, as debaters do.
"""

from __future__ import annotations

import asyncio

import pytest

from backends.base import Message, SamplingOptions
from backends.llamacpp import LlamaCppBackend
from backends.registry import Registry
from backends.sources import resolve_path

pytestmark = pytest.mark.model

GREEDY = SamplingOptions(max_tokens=32, temperature=0.0, repeat_penalty=1.0)
ROLES = ("proponent", "opponent")
ROUNDS = 2


def fresh(registry: Registry) -> LlamaCppBackend:
    entry = registry.get("gemma3-270m").model_copy(update={"exact_resume": True})
    return LlamaCppBackend(entry, resolve_path(entry))


def opening() -> dict[str, list[Message]]:
    return {r: [Message("system", f"You are the {r} in a debate on whether cities should ban cars. Argue at length.")]
            for r in ROLES}


async def debate(backend: LlamaCppBackend, talk: dict[str, list[Message]], rounds: range,
                 said: list[tuple[str, str, tuple[int, ...]]]) -> None:
    """Rounds of the debate from ``talk`` on: both agents answer at once (lockstep), then each
    reads the other's reply. Each reply is added to ``said`` with its role and tokens, as the
    journal keeps it; ``talk`` grows in place."""
    for n in rounds:
        for r in ROLES:
            talk[r].append(Message("user", f"Round {n}: give your strongest reason."))
        done = await asyncio.gather(*(backend.session(r).complete(talk[r], GREEDY) for r in ROLES))
        for r, other, reply in zip(ROLES, reversed(ROLES), done, strict=True):
            assert reply.tokens is not None
            talk[r].append(Message("assistant", reply.text))
            talk[other].append(Message("user", f"The {r} said: {reply.text}"))
            said.append((r, reply.text, reply.tokens))


async def verdict(backend: LlamaCppBackend, talk: dict[str, list[Message]]) -> list[float]:
    scored = await backend.session("proponent").score(talk["proponent"] + [Message("user", "Who won?")],
                                                      ["proponent", "opponent", "nobody", "the cars"])
    return scored.logprobs


def resumed_history(backend: LlamaCppBackend, said: list[tuple[str, str, tuple[int, ...]]], rounds: int
                    ) -> dict[str, list[Message]]:
    """What a resume rebuilds from the journal: the same messages, and each reply's tokens given
    back to the session that said it; no model is called."""
    talk, it = opening(), iter(said)
    for n in range(rounds):
        for r in ROLES:
            talk[r].append(Message("user", f"Round {n}: give your strongest reason."))
        for _ in ROLES:
            r, text, tokens = next(it)
            other = ROLES[1 - ROLES.index(r)]
            backend.session(r).recall(text, tokens)
            talk[r].append(Message("assistant", text))
            talk[other].append(Message("user", f"The {r} said: {text}"))
    return talk


async def test_a_debate_resumed_after_round_1_replies_and_scores_as_the_uncut_one(registry: Registry) -> None:
    uncut = fresh(registry)
    assert uncut.describe()["exact_resume"] is True
    talk, said = opening(), []
    await debate(uncut, talk, range(ROUNDS), said)
    final = await verdict(uncut, talk)
    await uncut.aclose()

    resumed = fresh(registry)  # a new process: nothing cached, the history from the journal
    history = resumed_history(resumed, said[:2], 1)
    later: list[tuple[str, str, tuple[int, ...]]] = []
    await debate(resumed, history, range(1, ROUNDS), later)
    assert [text for _, text, _ in later] == [text for _, text, _ in said[2:]]
    assert await verdict(resumed, history) == final
    await resumed.aclose()


def test_exact_resume_is_off_by_default_and_the_journal_says_which_way_a_model_ran(smollm: LlamaCppBackend) -> None:
    assert smollm.kv_reuse is True and smollm.describe()["exact_resume"] is False
