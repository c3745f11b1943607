"""What the app remembers between runs: the last form values, the theme, the key map.

Stored as JSON/TOML in the platform's user config folder (``$SYMPOSIUM_CONFIG_DIR`` overrides,
which the tests use). Nothing about debates is stored here; that is the journal's job.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from backends.private import ForeignFolder, config_dir, foreign_owner, private_dir, refuse_foreign, write_private


def _settings_file() -> Path:
    return config_dir() / "tui.json"


def load() -> dict[str, Any]:
    """The saved settings, or ``{}`` when there are none or the file is unreadable."""
    if foreign_owner(config_dir()) is not None:
        return {}  # another account's folder: what it holds is theirs to choose (see keymap)
    try:
        data = json.loads(_settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(settings: dict[str, Any]) -> None:
    """Replace the saved settings: ``0600`` in a ``0700`` folder (they name the user's models
    and files; the form's remembered values are kept free of the case, see
    :attr:`protocols.core.definition.Input.remembered`)."""
    private_dir(config_dir())
    write_private(_settings_file(), json.dumps(settings, indent=2, ensure_ascii=False))


def protect() -> None:
    """Narrow the settings folder to ``0700`` and its files to ``0600`` where an older version
    (which wrote ``tui.json`` ``0644``) left them readable by other accounts."""
    folder = config_dir()
    if not folder.is_dir():
        return
    private_dir(folder)
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)


def remember(section: str, values: dict[str, Any]) -> None:
    """Merge ``values`` into ``section`` of the saved settings."""
    settings = load()
    settings.setdefault(section, {}).update(values)
    save(settings)


def keymap() -> tuple[dict[str, str], str | None]:
    """User key bindings from ``keymap.toml`` (``binding-id = "key"``), and a problem if any.

    A broken file never stops the app: it is ignored and the problem is shown as a notice.
    """
    path = config_dir() / "keymap.toml"
    if not path.exists():
        return {}, None
    try:
        refuse_foreign(path, "your key map")
    except ForeignFolder as exc:
        return {}, str(exc)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: ignored ({exc})"
    bad = [k for k, v in data.items() if not isinstance(v, str)]
    if bad:
        return {}, f"{path}: ignored; values must be key names in quotes (see {', '.join(bad)})"
    return dict(data), None
