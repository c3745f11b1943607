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
import pwd
import tempfile
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def config_dir() -> Path:
    """Symposium's config folder, the one place for the user's settings, key map, model
    registry, the seal's signing key and the model files' hash cache: ``$SYMPOSIUM_CONFIG_DIR``,
    else the platform's (``~/.config/symposium`` on Linux)."""
    from platformdirs import user_config_dir

    env = os.environ.get("SYMPOSIUM_CONFIG_DIR")
    return Path(env).expanduser() if env else Path(user_config_dir("symposium"))


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
    if ours and path.is_dir() and path.stat().st_uid == os.getuid():
        os.chmod(path, DIR_MODE)
    return path


def foreign_owner(path: Path) -> str | None:
    """Who owns ``path`` when it is not the user running Symposium ("account bob (uid 1001)"),
    or ``None`` when it is the user's own or is not there."""
    try:
        uid = path.stat().st_uid
    except FileNotFoundError:
        return None
    if uid == os.getuid():
        return None
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
    return f"account {name} (uid {uid})"


def narrow_own(path: Path) -> str | None:
    """An existing file of the user's, narrowed to ``0600`` if it is wider (a journal restored
    or copied ``0644``); a file owned by another account is left alone and its owner returned
    (:func:`foreign_owner`), for the caller to warn about. Nothing happens to a missing file."""
    owner = foreign_owner(path)
    if owner is not None:
        return owner
    try:
        os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        pass
    return None


def narrow_tree(path: Path) -> None:
    """``path`` and, for a folder, everything in it the user owns: files ``0600``, folders
    ``0700``. For what a library wrote with the usual umask into a folder of Symposium's (a
    model file assembled or downloaded into its data folder); links are not followed."""
    for root, folders, files in os.walk(path) if path.is_dir() else [(str(path.parent), [], [path.name])]:
        for name in folders:
            if not os.path.islink(os.path.join(root, name)):
                private_dir(Path(root, name))
        for name in files:
            file = Path(root, name)
            if not file.is_symlink():
                narrow_own(file)
    if path.is_dir():
        private_dir(path)


class ForeignFolder(PermissionError):
    """A folder Symposium reads its own configuration from belongs to another account."""


def refuse_foreign(path: Path, what: str) -> None:
    """Raise :class:`ForeignFolder` when ``path`` or its folder belongs to another account:
    whoever owns the folder decides what is in it, and a ``models.toml`` planted there would
    name the servers the user's cases are sent to."""
    for place in (path.parent, path):
        owner = foreign_owner(place)
        if owner is not None:
            raise ForeignFolder(f"{place}: refused to read {what}: it belongs to {owner}, not to you. Whoever owns it "
                                f"chooses what it holds; remove it or set it up again as yourself")


def create_private(path: Path) -> None:
    """Make sure ``path`` exists as a ``0600`` file before a library opens it (a log handler,
    SQLite): created so when missing, narrowed when it is there with a wider mode."""
    private_dir(path.parent, ours=False)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)  # 0600 from its first moment when new
    try:
        os.fchmod(fd, FILE_MODE)  # one already there keeps its mode through O_CREAT
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by the owner only (0600), replacing any old file
    atomically (a crash leaves the old file or the new one, never half of one).

    The temporary file is made by :func:`tempfile.mkstemp` in the target's folder: a fresh
    random name, created exclusively (``O_EXCL``) and ``0600`` from the start, so a name planted
    in a folder others can write to (a symbolic link to a file of the user's) is never opened."""
    data = text.encode()  # UTF-8, strictly: a text that cannot be written fails before any file is touched
    private_dir(path.parent, ours=False)
    fd, tmp = tempfile.mkstemp(dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def append_private(path: Path, text: str) -> None:
    """Append ``text`` to ``path``, creating it ``0600`` (a cache written line by line)."""
    create_private(path)
    with path.open("ab") as fh:
        fh.write(text.encode())
