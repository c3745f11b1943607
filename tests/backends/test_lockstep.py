"""Replies decoded together (backends/llamacpp/lockstep.py), on the real bundled SmolLM2 model.

The promises: under greedy sampling every reply decoded in lockstep with others is the reply
it is alone, token for token, with the same usage; a reply that joins late joins the running
steps; a reply cancelled mid-way stops alone, keeps its cache for its agent's next turn, and
leaves the others untouched; grammar-constrained replies keep their own grammar; judges that
read the same transcript evaluate it once between them.

Each test compares a backend with ``max_concurrency = 1`` (one reply at a time: the reference)
against one with lockstep decoding, both fresh on the same file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from backends.base import Completion, Message, SamplingOptions
from backends.llamacpp import SHARE_MIN_TOKENS, LlamaCppBackend
from backends.registry import Registry
from backends.sources import resolve_path

#: Every test here runs the bundled model in lockstep (through `pair`, or loading its own).
pytestmark = pytest.mark.model

GREEDY = SamplingOptions(max_tokens=24, temperature=0.0, repeat_penalty=1.0)

TOPICS = ["whether cities should ban cars", "whether homework helps children learn",
          "whether nuclear power is safe", "whether remote work should be the norm"]


def question(i: int) -> list[Message]:
    """Prompts of different lengths, so the replies' sequences sit at different positions."""
    padding = " Think about costs, benefits and the people affected." * i
    return [Message("system", "You are a debater. Answer in two sentences."),
            Message("user", f"Argue {TOPICS[i % len(TOPICS)]}.{padding}")]


@pytest.fixture
def pair(registry: Registry) -> Iterator[tuple[LlamaCppBackend, LlamaCppBackend]]:
    """The reference (one reply at a time) and a lockstep backend of width 8, fresh."""
    entry = registry.get("smollm2-135m")
    alone = LlamaCppBackend(entry.model_copy(update={"max_concurrency": 1}), resolve_path(entry))
    together = LlamaCppBackend(entry.model_copy(update={"max_concurrency": 8}), resolve_path(entry))
    yield alone, together
    for backend in (alone, together):
        asyncio.run(backend.aclose())


def summary(done: Completion) -> tuple[str, str, int, int, int]:
    return done.text, done.finish_reason, done.usage.prompt_tokens, done.usage.prompt_tokens_evaluated, done.usage.completion_tokens


async def test_replies_in_lockstep_equal_replies_alone(pair: tuple[LlamaCppBackend, LlamaCppBackend]) -> None:
    """Four agents at once, one with a JSON grammar: each reply and its usage is the one it
    gets alone, and the steps really carried several rows."""
    alone, together = pair
    schema = {"type": "object", "properties": {"winner": {"type": "string", "enum": ["A", "B"]}},
              "required": ["winner"]}
    calls = [(f"agent{i}", question(i), schema if i == 2 else None) for i in range(4)]
    expected = [summary(await alone.session(name).complete(msgs, GREEDY, schema=sch)) for name, msgs, sch in calls]
    got = await asyncio.gather(*(together.session(name).complete(msgs, GREEDY, schema=sch) for name, msgs, sch in calls))
    assert [summary(done) for done in got] == expected
    assert got[2].text.startswith("{") and '"winner"' in got[2].text
    lockstep = together.lockstep
    assert lockstep is not None
    assert lockstep.steps > 0 and lockstep.rows > lockstep.steps, "no step decoded two replies at once"


async def test_a_late_reply_joins_the_running_steps(pair: tuple[LlamaCppBackend, LlamaCppBackend]) -> None:
    """The second reply starts after the first has streamed text; both equal their alone
    replies, and some step decoded both."""
    alone, together = pair
    long = SamplingOptions(max_tokens=48, temperature=0.0, repeat_penalty=1.0)
    expected = [summary(await alone.session("a").complete(question(0), long)),
                summary(await alone.session("b").complete(question(1), GREEDY))]

    first = together.session("a").chat(question(0), long)
    pieces = aiter(first)
    head = await anext(pieces)  # the first reply is decoding
    late = asyncio.ensure_future(together.session("b").complete(question(1), GREEDY))
    rest = [piece async for piece in pieces]
    assert first.completion is not None
    assert (head + "".join(rest)) == first.completion.text
    assert [summary(first.completion), summary(await late)] == expected
    lockstep = together.lockstep
    assert lockstep is not None
    assert lockstep.rows > lockstep.steps


async def test_a_cancelled_reply_stops_alone_and_keeps_its_cache(pair: tuple[LlamaCppBackend, LlamaCppBackend]) -> None:
    """One of three replies is cancelled after a few pieces: it ends "cancelled" with the text
    so far, the two others equal their alone replies, and the cancelled agent's next turn
    reuses its cache (only the new tokens are evaluated) and answers as it does alone."""
    alone, together = pair
    expected = [summary(await alone.session(f"s{i}").complete(question(i), GREEDY)) for i in (1, 2)]
    again = question(0) + [Message("assistant", "I think so."), Message("user", "Why?")]

    victim = together.session("s0").chat(question(0), SamplingOptions(max_tokens=200, temperature=0.0, repeat_penalty=1.0))
    others = [asyncio.ensure_future(together.session(f"s{i}").complete(question(i), GREEDY)) for i in (1, 2)]
    seen = []
    async for piece in victim:
        seen.append(piece)
        if len(seen) == 3:
            victim.cancel()
    assert victim.completion is not None and victim.completion.finish_reason == "cancelled"
    assert victim.completion.usage.completion_tokens < 200
    assert [summary(await o) for o in others] == expected

    follow_up = await together.session("s0").complete(again, GREEDY)
    reference = alone.session("s0")
    await reference.complete(question(0), SamplingOptions(max_tokens=200, temperature=0.0, repeat_penalty=1.0))
    assert follow_up.text == (await reference.complete(again, GREEDY)).text
    assert follow_up.usage.prompt_tokens_evaluated < follow_up.usage.prompt_tokens - len(question(0)[1].content) // 8, \
        "the cancelled agent's cache was dropped"


async def test_judges_of_one_transcript_share_its_cells(pair: tuple[LlamaCppBackend, LlamaCppBackend]) -> None:
    """A panel of three judges reads one long transcript and is asked three questions: the
    transcript is evaluated by the first judge only, and the verdicts equal those of the same
    panel asked one at a time."""
    alone, together = pair
    transcript = " ".join(f"Round {r}: the proponent says cars pollute; the opponent says shops need drivers."
                          for r in range(1, 7))
    asks = ["Who argued better?", "Which side used evidence?", "Summarize the debate."]

    def panel(i: int) -> list[Message]:
        return [Message("system", "You are a judge of a debate."), Message("user", f"{transcript}\n\n{asks[i]}")]

    expected = [summary(await alone.session(f"j{i}").complete(panel(i), GREEDY)) for i in range(3)]
    got = [summary(done) for done in await asyncio.gather(*(together.session(f"j{i}").complete(panel(i), GREEDY)
                                                             for i in range(3)))]
    assert [g[0] for g in got] == [e[0] for e in expected]
    assert min(g[2] for g in got) > 2 * SHARE_MIN_TOKENS
    read_whole = [g for g in got if g[3] == g[2]]
    assert len(read_whole) == 1, f"one judge reads the transcript, the others share it: {[(g[2], g[3]) for g in got]}"
    assert all(g[3] < SHARE_MIN_TOKENS for g in got if g is not read_whole[0]), f"the transcript was read again: {got}"


async def test_closing_a_model_frees_it_off_the_event_loop(registry: Registry) -> None:
    """aclose waits for the replies in flight and frees the weights in a worker thread, so the
    app's screen does not freeze while a multi-GB model is released."""
    import threading

    entry = registry.get("smollm2-135m")
    backend = LlamaCppBackend(entry, resolve_path(entry))
    await backend.session("a").complete(question(0), GREEDY)
    freed_in: list[threading.Thread] = []
    real_close = backend.model.close

    def close() -> None:
        freed_in.append(threading.current_thread())
        real_close()

    backend.model.close = close  # type: ignore[method-assign]
    await backend.aclose()
    assert freed_in and freed_in[0] is not threading.main_thread()


@pytest.mark.timeout(300)  # a lockstep thread that died would leave the callers waiting forever
async def test_a_failed_step_fails_its_replies_and_the_model_serves_on(pair: tuple[LlamaCppBackend, LlamaCppBackend]) -> None:
    """A step of three replies fails (scripted: an error from inside llama-cpp-python's
    wrappers; the real decode fails only when memory runs out): each caller gets the error,
    none waits forever, and the next call on the model is answered as it is alone."""
    alone, together = pair
    expected = summary(await alone.session("s0").complete(question(0), GREEDY))
    pool = together.session("s0").pool
    real_decode = pool.decode

    def failing(items, *, protect):  # type: ignore[no-untyped-def]
        if len({seq for _, _, seq, _ in items}) > 1:  # a lockstep step, not a prompt
            raise RuntimeError("llama_decode failed (scripted)")
        return real_decode(items, protect=protect)

    pool.decode = failing  # type: ignore[method-assign]
    results = await asyncio.wait_for(asyncio.gather(
        *(together.session(f"s{i}").complete(question(i), GREEDY) for i in range(3)), return_exceptions=True), 120)
    assert any(isinstance(r, RuntimeError) and "scripted" in str(r) for r in results)
    pool.decode = real_decode  # type: ignore[method-assign]
    for i in range(3):
        together.session(f"s{i}").reset()
    assert summary(await together.session("s0").complete(question(0), GREEDY)) == expected
