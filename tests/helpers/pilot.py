"""The real app on a temporary journal, driven by Textual's Pilot: what every app test starts from.

``make_app`` builds :class:`~tui.app.app.SymposiumApp` on a fresh SQLite journal in the test's
folder (exports beside it), so no test reads or writes another's; ``wait_for`` waits on a
condition while the app runs, never a fixed time, and says what it waited for when it gives up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from store.journal import Journal
from tui.app.app import SymposiumApp

#: The terminal every app test runs in (columns, rows): the snapshots are taken at this size.
SIZE = (140, 42)


def make_app(tmp_path: Path, registry: Any, **kwargs: Any) -> SymposiumApp:
    """The app on ``tmp_path/journal.db`` with ``registry``'s models; ``kwargs`` reach the app."""
    return SymposiumApp(journal=Journal(tmp_path / "journal.db"), registry=registry, export_dir=tmp_path / "exports", **kwargs)


async def wait_for(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Let the app run until ``condition()`` holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.2)


def screen_text(app: SymposiumApp) -> str:
    """Everything the current screen (toasts included) sends to the terminal, as plain text."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)
