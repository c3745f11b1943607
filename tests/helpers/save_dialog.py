"""Answering the app's Save dialog as a person does: every key that writes a file asks first."""

from __future__ import annotations

from textual.pilot import Pilot

from tui.app.screens.save import SaveDialog


async def save(pilot: Pilot, key: str, *, redacted: bool) -> SaveDialog:
    """Press ``key`` (a key that writes a file), choose the kind of copy, press ctrl+s."""
    await pilot.press(key)
    await pilot.pause()
    dialog = pilot.app.screen
    assert isinstance(dialog, SaveDialog), f"{key} did not ask first: {dialog}"
    await pilot.press(*(["enter"] if redacted else ["down", "enter"]))  # the choice has the focus
    await pilot.press("ctrl+s")
    await pilot.pause()
    return dialog
