"""Files and folders only their owner can read: ``0600`` files in ``0700`` folders.

Clinicians and lawyers type real cases into Symposium, and much of what it writes can hold them
or a model's words about them: the journal, exports, settings, logs, caches. On a shared machine
a file created with the usual umask (022) is ``0644``, readable by every account, so every file
Symposium writes is created through here with its mode given at creation (never widened first
and narrowed after), and every folder it creates is ``0700``, missing parents included, as the
XDG base-directory specification asks of a program creating the user's folders.

This module is at the bottom of the layers (``backends``) so that every part, vLLM's engine log
included, writes the same way; ``tests/guarantees/test_private_files.py`` walks every file an app
session and a command-line debate write and checks the modes.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path, *, ours: bool = True) -> Path:
    """Create ``path`` and each missing parent ``0700``; return it.

    ``ours``: the folder is Symposium's own (``~/.config/symposium``, its log folder, its export
    folder), so one left ``0755`` by an older version is narrowed too. A folder the user named
    (``--out ~/shared/notes.md``) is only created, never changed when it is already there.
    """
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another process: its mode is set below if ours
            continue
        os.chmod(folder, DIR_MODE)  # mkdir's mode passes through the umask; say it exactly
    if ours and path.is_dir():
        st = path.stat()
        if st.st_mode & 0o777 != DIR_MODE and st.st_uid == os.getuid():
            os.chmod(path, DIR_MODE)
    return path


def create_private(path: Path) -> None:
    """Make sure ``path`` exists as a ``0600`` file before a library opens it (a log handler,
    SQLite): created so when missing, narrowed when it is there with a wider mode."""
    private_dir(path.parent, ours=False)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o777 != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by the owner only (0600), replacing any old file
    atomically (a crash leaves the old file or the new one, never half of one)."""
    private_dir(path.parent, ours=False)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)  # a leftover temporary file keeps its old mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def append_private(path: Path, text: str) -> None:
    """Append ``text`` to ``path``, creating it ``0600`` (a cache written line by line)."""
    create_private(path)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
