"""The servers Symposium starts itself (``symposium serve llamacpp|vllm``): a key per start.

A server on a loopback port answers every account on the machine. Each start of ``serve``
therefore makes a new random key, gives it to the server (through its settings or its
environment, never its command line, which every account can read in ``/proc``) and writes it
in a record only the user can read (``0600``, in Symposium's ``0700`` state folder), beside the
server's process id. The openai backend finds the record by the port of its ``base_url`` and
sends the key, so nothing needs to be copied into ``models.toml``; another account, which
cannot read the record, is refused by the server.

What the key does not do is prove to the client that the server is the user's: an account that
took the port first receives whatever is sent to it, key included. That is checked apart, by
who owns the listening socket (:func:`backends.loopback.listener_uids`), before anything is sent.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from platformdirs import user_state_dir

from .loopback import is_loopback_host
from .private import foreign_owner, private_dir, write_private


def records_dir() -> Path:
    """Where the records of running servers are kept (one small JSON file per port)."""
    return Path(user_state_dir("symposium")) / "servers"


def record_path(port: int) -> Path:
    return records_dir() / f"{port}.json"


def new_key() -> str:
    """A fresh key: 256 random bits, URL-safe (it travels in an ``Authorization`` header)."""
    return secrets.token_urlsafe(32)


def announce(port: int, key: str, pid: int | None = None) -> Path:
    """Record that the server of process ``pid`` (this one) listens on ``port`` with ``key``."""
    private_dir(records_dir())
    path = record_path(port)
    write_private(path, json.dumps({"port": port, "pid": pid or os.getpid(), "key": key}))
    return path


def withdraw(port: int, key: str) -> None:
    """Remove the record of ``port`` if it is still the one with ``key`` (a later start's stays)."""
    path = record_path(port)
    try:
        record = json.loads(path.read_bytes())
        if isinstance(record, dict) and record.get("key") == key:
            path.unlink()
    except (OSError, ValueError):
        pass


def key_for(base_url: str) -> str | None:
    """The key of the server Symposium started on ``base_url``'s loopback port, while the
    process that started it lives; ``None`` for any other server (nothing to send)."""
    parts = urlsplit(base_url)
    if not parts.hostname or not is_loopback_host(parts.hostname):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = record_path(port)
    if foreign_owner(path) is not None or foreign_owner(path.parent) is not None:
        return None
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("port") != port or not _alive(record.get("pid")):
        return None
    key = record.get("key")
    return key if isinstance(key, str) and key else None


def _alive(pid: object) -> bool:
    """Whether ``pid`` is a live process of this user's (a record left by a server that died
    names a process that is gone, or by now another account's)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
