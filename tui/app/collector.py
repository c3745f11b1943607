"""When the garbage collector's full collections run: while the person is not typing.

A full collection walks every object the interpreter tracks and not frozen (``settle_memory``
freezes those alive at quiet points): a few hundred thousand once screens have been drawn for a
while, which took 100–240 ms on a 2-core machine, and the event loop stands still meanwhile.
Left to the interpreter, one ran every couple of seconds while keys were pressed, and it was
the keypress → frame p95 (``benchmarks/tui.py``, idle: 78–177 ms against a 15 ms median).

So the app takes full collections off the interpreter's automatic schedule while it runs
(young-generation collections stay automatic: they are cheap and keep garbage from piling up)
and runs them itself, from a timer, once no key or click has come for :data:`QUIET_S`. It keeps
the interpreter's pace (a full collection once the middle generation has been collected as
many times as its threshold says, 10 by default), only moved to a pause; cycles are still
reclaimed at the first pause, and at the latest :data:`LONGEST_WAIT_S` after the last full
collection even under unbroken typing. The interpreter's own schedule is restored when the
app stops, so nothing outside the app (a test process, a host program) inherits the change.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from textual.app import App

#: Seconds without input after which a full collection may run.
QUIET_S = 1.0
#: The longest a full collection waits for a pause (garbage cycles are held until then).
LONGEST_WAIT_S = 60.0
#: How often the timer looks.
TICK_S = 0.5
#: The third generation threshold while the app runs: high enough that the interpreter never
#: reaches it between two of our collections (it counts second-generation collections).
_DEFERRED = 1_000_000


class QuietCollector:
    """Full garbage collections at pauses in the person's input (see the module docstring).

    The schedule is the process's: with several apps alive in one process (tests run them so),
    the first to start saves the interpreter's thresholds and the last to stop restores them."""

    #: The interpreter's thresholds while any collector runs; how many run.
    _original: tuple[int, int, int] | None = None
    _running = 0

    def __init__(self) -> None:
        self.last_input = time.monotonic()
        self.last_full = time.monotonic()
        self.collections = 0  # full collections this collector ran
        self._saved: tuple[int, int, int] | None = None  # the interpreter's thresholds, while this one runs

    def start(self, app: App[Any]) -> None:
        """Take full collections off the automatic schedule and look every :data:`TICK_S`."""
        if self._saved is None:
            if QuietCollector._running == 0:
                QuietCollector._original = gc.get_threshold()
            QuietCollector._running += 1
            self._saved = QuietCollector._original
            assert self._saved is not None
            gc.set_threshold(self._saved[0], self._saved[1], _DEFERRED)
        app.set_interval(TICK_S, self.tick, name="quiet garbage collection")

    def stop(self) -> None:
        """Give the interpreter its own schedule back (once no other app in the process runs)."""
        if self._saved is not None:
            self._saved = None
            QuietCollector._running -= 1
            if QuietCollector._running == 0 and QuietCollector._original is not None:
                gc.set_threshold(*QuietCollector._original)

    def input_seen(self) -> None:
        self.last_input = time.monotonic()

    def tick(self) -> None:
        if self._saved is None or gc.get_count()[2] < self._saved[2]:
            return  # not due yet by the interpreter's own measure (or not started)
        now = time.monotonic()
        if now - self.last_input >= QUIET_S or now - self.last_full >= LONGEST_WAIT_S:
            gc.collect()
            self.collections += 1
            self.last_full = time.monotonic()
