"""A Footer that is rebuilt only when the keys it shows change.

Textual's Footer recomposes (every key widget created and styled anew) whenever its screen
publishes "bindings updated", which happens at every focus change and every time a modal such
as Help closes, even when the keys are the same. On a Debate screen with a long transcript that
rebuild was the largest single cost of closing Help (issue 17's profile: most of the
``stylesheet.apply`` time came from ``FooterKey`` class changes). Same keys, no rebuild.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class SteadyFooter(Footer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None

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
