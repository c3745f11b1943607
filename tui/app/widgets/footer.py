"""The footer every screen shows: compact, rebuilt only when the keys it shows change, and
giving the command palette's hint room only on a terminal wide enough for it.

Textual's Footer recomposes (every key widget created and styled anew) whenever its screen
publishes "bindings updated", which happens at every focus change and every time a modal such
as Help closes, even when the keys are the same. On a Debate screen with a long transcript that
rebuild was the largest single cost of closing Help (in a profile, most of the
``stylesheet.apply`` time came from ``FooterKey`` class changes). Same keys, no rebuild.

At 80 columns the keys a person needs (a running debate's pause, interject, contentiousness,
skip, stop, verdict, back, help) fill the line; the palette's "^p palette" hint took the last
13 columns and cut "esc Back" and "? Help" off. Below :data:`PALETTE_MIN_WIDTH` the
hint is left out: ctrl+p still opens the palette, and Help (``?``, always in the footer) says so.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.screen import Screen
from textual.widgets import Footer

#: The narrowest terminal on which the footer also shows the command palette's key.
PALETTE_MIN_WIDTH = 100


class SteadyFooter(Footer):
    def __init__(self, *args: Any, compact: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, compact=compact, **kwargs)
        self._shown: tuple | None = None

    def on_mount(self) -> None:
        self.set_reactive(Footer.show_command_palette, self.app.size.width >= PALETTE_MIN_WIDTH)

    def on_resize(self, event: events.Resize) -> None:
        wanted = event.size.width >= PALETTE_MIN_WIDTH
        if wanted != self.show_command_palette:
            self.show_command_palette = wanted
            self._shown = None
            self.refresh(recompose=True)

    def _keys(self, screen: Screen) -> tuple:
        """What the footer would show: each shown binding's key, label, action, enabled state."""
        keys = tuple((b.key, self.app.get_key_display(b), b.description, b.action, enabled, tooltip)
                     for (_, b, enabled, tooltip) in screen.active_bindings.values() if b.show)
        return keys, self.compact, self.show_command_palette

    def bindings_changed(self, screen: Screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            keys = self._keys(screen)
            if keys == self._shown:
                return
            self._shown = keys
        super().bindings_changed(screen)
