"""Tests never read or write the user's own Symposium folders (settings, journal, models, exports).

``tests/conftest.py`` points every per-user folder into a temporary tree; this checks that
each path the code resolves at run time lands there, for the app's settings, the default
journal, the models folder and the export folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from backends.sources import models_dir
from store.journal import default_db_path
from tui import settings

#: Where platformdirs puts a user's folders on Linux when no XDG variable is set.
REAL = [Path.home() / ".config", Path.home() / ".local", Path.home() / "Documents"]


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def test_every_user_folder_resolves_outside_the_real_ones() -> None:
    resolved = {
        "settings": settings.config_dir(),
        "journal": default_db_path(),
        "models": models_dir(),
        "platform config": Path(platformdirs.user_config_dir("symposium")),
        "platform data": Path(platformdirs.user_data_dir("symposium")),
        "documents": Path(platformdirs.user_documents_dir()),
    }
    for name, path in resolved.items():
        for real in REAL:
            assert not _inside(path, real), f"{name} resolves into the user's real {real}: {path}"


def test_saving_settings_writes_into_the_temporary_tree() -> None:
    settings.save({"theme": "textual-dark"})
    written = settings.config_dir() / "tui.json"
    assert written.exists()
    assert not any(_inside(written, real) for real in REAL)
    assert os.environ["SYMPOSIUM_CONFIG_DIR"] in str(written)
