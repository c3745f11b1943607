"""The debate's running cost under its status line (tui/app/widgets/cost_line.py): the live
rate while a reply is written, the tokens and time spent so far and each agent's share, as the
same ledger adds them that ``show`` and the report table (protocols/core/costs.py).

Recorded events with measured costs (the sample debate's, its judges' calls added) played
through the live Debate screen and read back in Review, so the figures are the same on every
machine; the real backends' figures are tests/backends/test_costs_counted.py's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from protocols.core.costs import Ledger, journal_calls, seconds, tokens
from protocols.core.events import CallRecord, Event, JudgementMade, TokenDelta, TurnFinished, TurnStarted
from store.queries import Queries
from tests.app.replayed import fed, replay, until
from tests.helpers.pilot import SIZE, make_app
from tests.helpers.sample_debate import sample_events
from tui.app.screens.review import ReviewScreen
from tui.app.widgets.cost_line import CostLine

ID = "sample0001ab"


def costed(events: list[Event]) -> list[Event]:
    """The sample debate with every figure an in-process backend measures, and its judge's
    CRIT calls (the sample's judgements carry none)."""
    out: list[Event] = []
    for i, e in enumerate(events):
        if isinstance(e, TurnFinished) and e.call is not None:
            e = dataclasses.replace(e, call=dataclasses.replace(e.call, cached_tokens=180 - 20 * i, wait_s=0.25 * (i % 2),
                                                                 prefill_s=0.5, decode_s=1.25))
        if isinstance(e, JudgementMade):
            e = dataclasses.replace(e, call=CallRecord("judge", "smollm2-135m", "crit", {}, 900 + i, 120, 96, 4.5, 0.75,
                                                       cached_tokens=780 + i, wait_s=1.0, prefill_s=0.75, decode_s=2.5))
        out.append(e)
    return out


def _line(screen) -> str:  # type: ignore[no-untyped-def]
    return screen.view.query_one(CostLine).line


async def test_the_cost_line_says_what_the_journals_tables_add_up(tmp_path: Path, registry) -> None:
    """Live and in Review alike: the totals and each agent's tokens and time, the sums the cost
    tables of ``show`` and the report make of the journal's calls."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay(app, pilot, costed(sample_events(rounds=2)))
        debate = Queries(app.journal).debate(ID)
        assert debate is not None
        ledger = Ledger(journal_calls(debate))
        total = ledger.total
        assert total.calls == 8 and set(ledger.agents) == {"agent-a", "agent-b", "judge"}
        rate = total.completion_tokens / total.decode_s.total
        expected = [f"cost: {rate:.0f} tok/s avg · {tokens(total.prompt_tokens)} in ({tokens(total.cached_tokens.total)} cached) · "
                    f"{tokens(total.completion_tokens)} out · {seconds(total.duration_s)} s in 8 calls",
                    *(f"{role} {tokens(c.prompt_tokens)} in · {tokens(c.completion_tokens)} out · {seconds(c.duration_s)} s"
                      for role, c in ledger.agents.items())]
        assert _line(screen) == " │ ".join(expected)
        review = ReviewScreen(debate, app.workspace)
        await app.push_screen(review)
        await until(pilot, lambda: review.view.spent is not None, 10, "the review's costs")
        assert _line(review) == _line(screen)  # the judges' calls too, read back from the journal


async def test_on_a_narrow_terminal_the_agents_go_on_a_second_line_and_the_rest_is_cut(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await replay(app, pilot, costed(sample_events(rounds=2)))
        cost = screen.view.query_one(CostLine)
        lines = cost.lines(cost.size.width)
        assert cost.size.height == len(lines) == 2
        assert all(len(line) <= cost.size.width for line in lines)
        assert lines[0].startswith("cost: ") and lines[1].startswith("agent-a ") and lines[1].endswith("…")


async def test_the_rate_ticks_while_a_reply_is_written_then_shows_the_debates_mean(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay(app, pilot, costed(sample_events(rounds=1, finished=False)), held=True)
        view = screen.view
        assert view.live_rate is None and " tok/s avg · " in _line(screen)
        height = view.query_one(CostLine).size.height
        await fed(pilot, screen, TurnStarted(ID, "agent-a", "smollm2-135m", "exploratory", 1, "refutation"))
        for i in range(12):
            await fed(pilot, screen, TokenDelta(ID, "agent-a", f"word{i} "))
        await until(pilot, lambda: view.live_rate is not None, 10, "the rate's first tick")
        assert view.live_rate is not None and view.live_rate > 0
        assert _line(screen).startswith(f"cost: {view.live_rate:.0f} tok/s now · ")
        assert view.query_one(CostLine).size.height == height  # the rate ticking never moves the agents
        call = CallRecord("agent-a", "smollm2-135m", "turn", {}, 400, 60, 12, 1.5, 0.25, cached_tokens=340, wait_s=0.0,
                          prefill_s=0.25, decode_s=1.25)
        await fed(pilot, screen, TurnFinished(ID, "agent-a", "smollm2-135m", "exploratory", 1, "refutation",
                                              "words", "words", call))
        assert view.live_rate is None and " tok/s avg · " in _line(screen)
        assert view.ledger.total.calls == 5 and view.ledger.agents["agent-a"].completion_tokens == 64 + 12
