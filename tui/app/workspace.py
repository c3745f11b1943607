"""What the screens work on: the model registry, the journal, and the folder the app writes to.

The app makes one :class:`Workspace` and hands it to each screen it opens, so a screen depends
on these three things, not on the app's class (which imports the screens)."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.registry import Registry
from store.journal import Journal


@dataclass
class Workspace:
    registry: Registry
    journal: Journal
    #: Where the app writes exports and reports unless the person names another folder.
    export_dir: Path
    #: A New-debate form left with words typed in it, given back by the next ``n``. Held in
    #: memory for this session only: a case is never written to the settings file.
    draft: Draft | None = None


@dataclass(frozen=True)
class Draft:
    """What a New-debate form held when it was left: its protocol and every field's value."""

    protocol: str
    values: dict[str, Any] = field(default_factory=dict)


def settle_memory() -> None:
    """Move the objects alive now (screens, widgets, a transcript's turns) out of the garbage
    collector's reach, so that its full collections no longer walk them.

    With a long transcript the interpreter holds a few hundred thousand objects, and a full
    collection over them stalled the event loop for ~80 ms at random moments (the p95 of
    keypress → frame; gone with ``gc.freeze()`` in the same profile). Called at quiet points
    (start-up, a debate shown, a turn finished). The cost: a reference cycle that is already
    garbage at that moment is never reclaimed; Textual's widgets free themselves without
    cycles on removal, so this is small. The full collections over what is allocated later run
    at pauses in the person's input (:mod:`tui.app.collector`).
    """
    gc.freeze()
