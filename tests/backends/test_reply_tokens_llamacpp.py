"""llama.cpp's side of resuming with a reply's exact tokens (tests/protocols/test_reply_tokens.py
has the journal's side): a reply's tokens are on its completion, and a session given them back
(``recall``) feeds the reply into later prompts as those tokens, as the session that generated it
did; tokens that are no ids of the model's vocabulary are ignored. On the bundled SmolLM2, whose
chat format feeds assistant turns token by token.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from backends.base import Message, SamplingOptions
from backends.llamacpp import LlamaCppBackend
from backends.registry import Registry
from backends.sources import resolve_path

pytestmark = pytest.mark.model


def _name() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


@pytest.fixture(params=["lockstep", "alone"])
def backend(request: pytest.FixtureRequest, smollm: LlamaCppBackend, registry: Registry) -> Iterator[LlamaCppBackend]:
    """The shared backend, whose replies decode in lockstep, and one that decodes one at a time
    (``max_concurrency = 1``): each path sets the completion's tokens."""
    if request.param == "lockstep":
        yield smollm
        return
    entry = registry.get("smollm2-135m")
    alone = LlamaCppBackend(entry.model_copy(update={"max_concurrency": 1}), resolve_path(entry))
    try:
        yield alone
    finally:
        asyncio.run(alone.aclose())


def test_a_reply_s_completion_carries_the_tokens_its_session_feeds_back(backend: LlamaCppBackend) -> None:
    session = backend.session(_name())
    asked = [Message("user", "Name one fruit.")]
    completion = asyncio.run(session.complete(asked, SamplingOptions(max_tokens=12, temperature=0.0, seed=1)))
    assert completion.tokens and completion.text.strip()
    follow = [*asked, Message("assistant", completion.text), Message("user", "And another?")]
    prompt = session._prompt_tokens(follow)
    n = len(completion.tokens)
    assert any(prompt[i:i + n] == list(completion.tokens) for i in range(len(prompt) - n + 1))


def test_a_session_given_a_reply_s_tokens_feeds_them_back_and_ignores_ids_outside_the_vocabulary(smollm: LlamaCppBackend) -> None:
    """The tokens given back are one character each, which no tokenizer would choose for the
    text: a session that ignored them would feed the canonical tokens instead."""
    text = "Malaria, then dengue."
    by_character = [t for ch in text for t in smollm.tokenize(ch, special=False)]
    assert by_character != smollm.tokenize(text, special=False)
    follow = [Message("user", "Your diagnosis?"), Message("assistant", text), Message("user", "Why?")]
    plain = smollm.session(_name())._prompt_tokens(follow)

    given = smollm.session(_name())
    given.recall(text, by_character)
    fed = given._prompt_tokens(follow)
    assert fed != plain
    assert any(fed[i:i + len(by_character)] == by_character for i in range(len(fed)))

    for bad in ([*by_character[:-1], smollm.n_vocab], [*by_character[:-1], -1], [True, *by_character[1:]]):
        refused = smollm.session(_name())
        refused.recall(text, bad)
        assert refused._prompt_tokens(follow) == plain, bad
