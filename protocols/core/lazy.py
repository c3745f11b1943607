"""Libraries imported the first time they are used, not when a module that names them is.

Every command reads the protocols' definitions (an outcome in words needs its protocol's
``conclude``), and the definitions import the mathematics, which needs numpy and scipy: about a
second on a laptop before ``symposium history`` prints a line. A module of the mathematics
names them through :func:`module` instead, so the journal commands start without them and a
debate imports them at its first metric. Type checkers see the real modules (the modules
write ``if TYPE_CHECKING: import numpy as np``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _Lazy(ModuleType):
    """A stand-in for a module: the first attribute read imports it and answers from it."""

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module(self.__name__), name)
        setattr(self, name, value)  # later reads are plain attribute reads
        return value


def module(name: str) -> Any:
    """``name`` (``"numpy"``, ``"scipy.stats"``), imported when first used."""
    return _Lazy(name)
