"""A reply's exact tokens travel through the journal, so that a resumed session feeds its earlier
replies back as the uninterrupted session did.

Why it matters: llama.cpp's session feeds a reply back into later prompts as the tokens it
generated, not as its text re-tokenized (the two can differ: a model may generate " " and "\\n" as
two tokens that the tokenizer reads back as one). A resumed session that had only the text sent
an agent's next prompt 42 tokens shorter than the uninterrupted run's, with the same messages,
and the debates parted from there (the evidence CLI test, SmolLM2). The journal keeps each chat
reply's token ids; a replayed call gives them back to the session (``Session.recall``).

These tests use a recording session (what ``recall`` receives is the point, not what a model
does with it); tests/backends/test_reply_tokens_llamacpp.py runs the llama.cpp side.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from backends.base import Completion, Message, SamplingOptions, Timing, Usage
from protocols.core.agents import Agent, completion_of, reply_of
from protocols.core.replies import ReplayLog, Reply, prompt_sha256, replaying
from tests.helpers.scripted_backends import ScriptedBackend


def _completion(text: str, tokens: tuple[int, ...] | None) -> Completion:
    return Completion(text, Usage(3, 3, len(tokens or ()), 0), Timing(total_s=0.1), "stop", "m", SamplingOptions(),
                      tokens=tokens)


def test_a_chat_reply_is_journalled_with_its_tokens_and_read_back_with_them() -> None:
    reply = reply_of("agent-a", "sha", _completion("Dengue.", (17, 4, 2)))
    assert reply.details["tokens"] == [17, 4, 2]
    assert completion_of(reply, SamplingOptions(), None).tokens == (17, 4, 2)
    assert "tokens" not in reply_of("agent-a", "sha", _completion("Dengue.", None)).details


@pytest.mark.parametrize("journalled", [None, "17 4 2", [17, "4"], [17, 4.0], [True, 2], {"0": 17}])
def test_tokens_the_journal_holds_in_any_other_shape_are_not_read(journalled: Any) -> None:
    """The journal is a file: what it holds is parsed, not trusted (a bool is no token id)."""
    reply = Reply("agent-a", "chat", "sha", "Dengue.", {"tokens": journalled})
    assert completion_of(reply, SamplingOptions(), None).tokens is None


class _Recalling(ScriptedBackend):
    """A scripted backend whose sessions note each reply given back to them."""

    def __init__(self) -> None:
        super().__init__("m", ["live reply"])
        self.recalled: list[tuple[str, str, tuple[int, ...]]] = []

    def session(self, name: str) -> Any:
        session = super().session(name)
        backend = self

        def recall(text: str, tokens: Sequence[int]) -> None:
            backend.recalled.append((name, text, tuple(tokens)))

        session.recall = recall  # type: ignore[method-assign]
        return session


def test_a_replayed_turn_and_a_replayed_call_give_their_tokens_back_to_the_agent_s_own_session() -> None:
    backend = _Recalling()
    agent = Agent("agent-a", backend, SamplingOptions(max_tokens=8), session_key="agent-a-resumed")
    turn_messages = [Message("user", "Your diagnosis?")]
    ask_messages = [Message("user", "Rate it.")]
    log = ReplayLog([
        Reply("agent-a", "chat", prompt_sha256("chat", turn_messages), "Dengue.", {"tokens": [5, 6]}),
        Reply("agent-a", "chat", prompt_sha256("chat", ask_messages), "7 of 10", {"tokens": [8]}),
        Reply("agent-a", "chat", prompt_sha256("chat", [Message("user", "Old")]), "no tokens", {}),
    ])

    async def run() -> None:
        with replaying(log):
            async for _ in agent.turn(turn_messages).events("d1", phase="p", round=1, kind="turn"):
                pass
            await agent.ask(ask_messages, purpose="score")
            await agent.ask([Message("user", "Old")], purpose="score")

    asyncio.run(run())
    assert backend.recalled == [("agent-a-resumed", "Dengue.", (5, 6)), ("agent-a-resumed", "7 of 10", (8,))]


def test_a_live_call_gives_nothing_back() -> None:
    backend = _Recalling()
    agent = Agent("agent-a", backend, SamplingOptions(max_tokens=8))
    asyncio.run(agent.ask([Message("user", "Your diagnosis?")], purpose="turn"))
    assert backend.recalled == []
