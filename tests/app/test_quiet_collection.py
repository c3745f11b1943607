"""Full garbage collections wait for a pause in the person's input (tui/app/collector.py).

A full collection stops the event loop for 100–240 ms once screens have been drawn for a while;
left on the interpreter's schedule it landed under keypresses (``benchmarks/tui.py``'s idle p95).
These tests hold the schedule: none while keys come, one at the first pause once due, one even
under unbroken typing once overdue, and the interpreter's own schedule back when the app stops.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from tests.helpers.pilot import make_app
from tui.app.collector import LONGEST_WAIT_S, QUIET_S, QuietCollector


def _make_due(threshold: int) -> None:
    """Collect the middle generation ``threshold`` times: the interpreter would now run a full one."""
    for _ in range(threshold):
        gc.collect(1)


def test_a_due_collection_waits_for_a_pause_then_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    collector = QuietCollector()
    collector._saved = gc.get_threshold()  # as start() keeps it, without taking the process's schedule
    ran: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: ran.append(generation) or 0)
    threshold = collector._saved[2]
    monkeypatch.setattr(gc, "get_count", lambda: (0, 0, threshold))  # due by the interpreter's measure
    collector.input_seen()
    collector.tick()
    assert ran == []  # a key just came: not now
    collector.last_input = time.monotonic() - QUIET_S
    collector.tick()
    assert ran == [2] and collector.collections == 1  # the pause: one full collection
    monkeypatch.setattr(gc, "get_count", lambda: (0, 0, threshold - 1))
    ran.clear()
    collector.tick()
    assert ran == []  # quiet, but nothing due: an idle app is not walked over and over


def test_unbroken_typing_still_gets_a_collection_once_overdue(monkeypatch: pytest.MonkeyPatch) -> None:
    collector = QuietCollector()
    collector._saved = gc.get_threshold()
    ran: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: ran.append(generation) or 0)
    monkeypatch.setattr(gc, "get_count", lambda: (0, 0, collector._saved[2] if collector._saved else 10))
    collector.input_seen()
    collector.last_full = time.monotonic() - LONGEST_WAIT_S
    collector.tick()
    assert ran == [2]


async def test_the_app_defers_full_collections_while_it_runs_and_gives_the_schedule_back(tmp_path: Path, registry) -> None:
    before = gc.get_threshold()
    app = make_app(tmp_path, registry)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 1000  # automatic full ones off
        app.collector.last_input = 0.0
        pressed = time.monotonic()
        await pilot.press("question_mark")  # a key: the pause starts again
        assert app.collector.last_input >= pressed
        await pilot.pause()
        _make_due(before[2])
        app.collector.input_seen()
        done = app.collector.collections
        app.collector.tick()
        assert app.collector.collections == done  # due, but a key just came
        app.collector.last_input = time.monotonic() - QUIET_S  # as if the person stopped a second ago
        for _ in range(100):  # the app's own timer runs it: wait for that, not for a fixed time
            if app.collector.collections > done:
                break
            await pilot.pause(0.1)
        assert app.collector.collections == done + 1
    app.journal.close()
    assert gc.get_threshold() == before


def test_two_apps_in_one_process_leave_the_interpreter_its_schedule() -> None:
    """The first to start saves the thresholds, the last to stop restores them, in either order."""
    before = gc.get_threshold()

    class Ticks:
        def set_interval(self, *args: object, **kwargs: object) -> None:
            pass

    first, second = QuietCollector(), QuietCollector()
    first.start(Ticks())  # type: ignore[arg-type]
    second.start(Ticks())  # type: ignore[arg-type]
    first.stop()
    assert gc.get_threshold()[2] > 1000  # the second still runs
    assert second._saved == before  # and knows the interpreter's own pace
    second.stop()
    assert gc.get_threshold() == before

