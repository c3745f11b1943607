"""The app, typed, for the screens: ``symposium(self).journal`` instead of ``self.app.journal``
with its type unchecked.

Why not Textual's ``getters.app(SymposiumApp)``: it needs the app's class when each screen class
is made, and the app's module imports its screens. Asked for at run time instead, the class is
there, and the check that the screen runs in Symposium's app is real.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message_pump import MessagePump

if TYPE_CHECKING:
    from tui.app.app import SymposiumApp


def symposium(node: MessagePump) -> SymposiumApp:
    """The Symposium app ``node`` runs in."""
    from tui.app.app import SymposiumApp

    app = node.app
    assert isinstance(app, SymposiumApp), f"{type(node).__name__} runs only in Symposium's app"
    return app
