"""Hostile text for the app's inputs, notices and events, and scripted models that say it.

Markup that crashes Textual (``[/b]``), links and actions, ANSI CSI and OSC escapes, C1
controls, bidi overrides: none of it may crash the app or reach the terminal as control
characters. The models are scripted (tests/helpers/scripted_backends.py) because a real model cannot be
made to produce exact hostile output on demand.
"""

from __future__ import annotations

from collections.abc import Callable

from backends.base import BackendError
from backends.factory import OnProgress
from backends.registry import ModelEntry
from tests.helpers.scripted_backends import ScriptedBackend

#: Markup that crashes (``[/b]``), links and actions, ANSI CSI and OSC (title, hyperlink),
#: 8-bit C1 controls, bidi overrides and zero-width characters, a huge line.
HOSTILE = ("[/b] [link=https://evil.example]x[/link] [@click=app.quit]quit[/] [b]bold "
           "\x1b[2J\x1b[31mred\x1b[0m \x1b]0;owned\x07 \x1b]8;;http://evil\x1b\\here\x1b]8;;\x1b\\ "
           "\x9b31m \x85 \x90dcs\x9c \x07 \x08 \u202eevil\u202c \u2066iso\u2069 zero\u200bwidth\ufeff "
           + "W" * 3000)
HOSTILE_ID = "m[/b]\x1b[31m\u202e"


def hostile_models(replies: list[str], *, fail: str | None = None, delay: float = 0.0,
                   loaded: list[ScriptedBackend] | None = None) -> Callable[[ModelEntry, OnProgress], ScriptedBackend]:
    """A ``create_backend`` for :mod:`backends.lifecycle` (monkeypatch
    ``backends.lifecycle.create_backend``): every model a scripted one named ``HOSTILE_ID`` that
    says ``replies``, the first of them warning ``HOSTILE`` (e.g. a server's privacy warning
    naming its address), or each failing with ``fail``. The app's own lifecycle runs around it;
    ``loaded`` collects what it built."""
    built: list[ScriptedBackend] = [] if loaded is None else loaded

    def create(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        if fail is not None:
            raise BackendError(fail)
        backend = ScriptedBackend(HOSTILE_ID, list(replies), delay=delay, chunk=64, warning=None if built else HOSTILE)
        backend.entry = entry
        built.append(backend)
        return backend

    return create
