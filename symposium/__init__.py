"""The one top-level name the installed app owns: its launcher.

Symposium's code lives in five packages with short names (``backends``, ``protocols``,
``store``, ``outputs``, ``tui``: the layout ARCHITECTURE.md draws, kept as they are in the
checkout). Installed beside other distributions' packages in ``site-packages``, a ``store`` or
``tui`` of another distribution would overwrite ours, or ours theirs: pip refuses neither. So
the wheel puts the five inside this package's folder (``site-packages/symposium/``; setup.py's
build step moves them there), and the ``symposium`` command starts here: :func:`main` puts that
folder first on this process's ``sys.path`` and runs the app. In a checkout, and its editable
install, the five sit beside this folder at the checkout's root, and the root is the folder put
first.

Only a process started through this launcher sees the short names, so a Python program that
imports another distribution's ``store`` still gets its own; and inside the app, the packages
found first are ours. tests/cli/test_install.py installs the wheel beside a distribution that
ships its own ``store`` and ``tui`` and checks that each keeps its own, and that no dependency of
the app ships a package of those names.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

#: The packages the launcher makes importable by their short names.
PACKAGES = ("backends", "protocols", "store", "outputs", "tui")

_HERE = Path(__file__).resolve().parent


def packages_folder() -> Path:
    """The folder holding the five packages: this one in an installed wheel, the checkout's root
    in a checkout (where this package is one folder among them)."""
    return _HERE if (_HERE / "tui").is_dir() else _HERE.parent


def activate() -> Path:
    """Put :func:`packages_folder` first on ``sys.path`` (once) and return it."""
    folder = str(packages_folder())
    if not sys.path or sys.path[0] != folder:
        sys.path.insert(0, folder)
    return Path(folder)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``symposium`` command (and ``python -m symposium``)."""
    activate()
    from tui.cli import main as app_main

    return app_main(argv)
