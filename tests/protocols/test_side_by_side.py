"""Calls run side by side (protocols/core/replies.py ``side_by_side``): at once, results and
journalled replies in the order asked, whatever order they finish in."""

from __future__ import annotations

import asyncio

import pytest

from protocols.core.replies import Reply, record, recording, side_by_side


async def answer(name: str, delay: float, started: list[str]) -> str:
    started.append(name)
    await asyncio.sleep(delay)
    record(Reply(name, "chat", name * 4, f"reply of {name}"))
    return name.upper()


async def test_results_and_replies_keep_the_order_asked() -> None:
    """The first call finishes last, yet comes first; all three started before any finished."""
    started: list[str] = []
    with recording() as outbox:
        results = await side_by_side(answer("a", 0.06, started), answer("b", 0.0, started), answer("c", 0.03, started))
    assert results == ["A", "B", "C"]
    assert started == ["a", "b", "c"]
    assert [r.role for r in outbox] == ["a", "b", "c"]


async def test_replies_that_finished_are_kept_when_one_fails() -> None:
    """A juror's call fails: the replies of those that finished still reach the outbox (the
    journal), in order; the error reaches the caller."""

    async def broken() -> str:
        await asyncio.sleep(0.02)
        raise RuntimeError("model gone")

    started: list[str] = []
    with recording() as outbox:
        with pytest.raises(RuntimeError, match="model gone"):
            await side_by_side(answer("a", 0.0, started), broken(), answer("c", 0.0, started))
    assert [r.role for r in outbox] == ["a", "c"]


async def test_without_a_recording_nothing_is_collected() -> None:
    started: list[str] = []
    assert await side_by_side(answer("a", 0.0, started)) == ["A"]
