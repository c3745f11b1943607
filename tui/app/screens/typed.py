"""The app, typed, for the screens: ``symposium(self).journal`` instead of ``self.app.journal``
with its type unchecked.

The screens depend on what they use of the app (:class:`SymposiumAppAPI`), not on the app's
module: that module imports the screens, so naming its class here would close an import circle
(tests/guarantees/test_layers.py forbids them), and Textual's ``getters.app(SymposiumApp)`` needs
the class when each screen class is made. The check that a screen runs in such an app is real:
the protocol is checked at run time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from textual.message_pump import MessagePump

from backends.registry import Registry
from store.journal import Journal
from tui.forms import ProtocolSpec


@runtime_checkable
class SymposiumAppAPI(Protocol):
    """What the screens ask of Symposium's app (:class:`tui.app.app.SymposiumApp` is one)."""

    registry: Registry
    journal: Journal
    export_dir: Path

    def settle_memory(self) -> None: ...
    def open_new_debate(self) -> None: ...
    def open_demo(self) -> None: ...
    def start_debate(self, spec: ProtocolSpec, values: dict[str, Any]) -> None: ...
    def open_review(self, debate_id: str) -> None: ...
    def resume(self, debate_id: str) -> None: ...


def symposium(node: MessagePump) -> SymposiumAppAPI:
    """The Symposium app ``node`` runs in."""
    app = node.app
    assert isinstance(app, SymposiumAppAPI), f"{type(node).__name__} runs only in Symposium's app"
    return app
