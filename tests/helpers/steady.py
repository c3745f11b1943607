"""A steady text cursor for snapshot tests.

A focused Input or TextArea blinks its cursor every half second, so a screenshot taken on a busy
machine drew the cursor or not at random, and a snapshot of a form opened on its first field
(the case) failed one run in a few. With the blink timer's toggle a no-op the cursor is drawn,
always; everything else is the real widget."""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea


@pytest.fixture
def steady_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)
