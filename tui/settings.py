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

from platformdirs import user_config_dir


def config_dir() -> Path:
    env = os.environ.get("SYMPOSIUM_CONFIG_DIR")
    return Path(env).expanduser() if env else Path(user_config_dir("symposium"))


def _settings_file() -> Path:
    return config_dir() / "tui.json"


def load() -> dict[str, Any]:
    """The saved settings, or ``{}`` when there are none or the file is unreadable."""
    try:
        data = json.loads(_settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(settings: dict[str, Any]) -> None:
    path = _settings_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(settings, indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: ignored ({exc})"
    bad = [k for k, v in data.items() if not isinstance(v, str)]
    if bad:
        return {}, f"{path}: ignored; values must be key names in quotes (see {', '.join(bad)})"
    return dict(data), None
