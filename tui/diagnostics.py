"""Diagnostics a user can send: a log file, the version, and where everything lives.

Nothing is logged unless asked: ``--log-file FILE`` or ``$SYMPOSIUM_LOG`` writes a log (llama.cpp's
own messages, backend errors and retries, each debate's start and end), ``--verbose`` adds
debug detail (and, for headless commands without a log file, prints the log on stderr; the app
then writes to the default log file, since its screen owns the terminal). Every line carries
the id of the debate it belongs to, so one file can hold many debates and still be read.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from platformdirs import user_log_dir

from backends.private import create_private, private_dir
from store.logcontext import current_debate

FORMAT = "%(asctime)s %(levelname)-7s %(name)s [debate %(debate_id)s] %(message)s"


def default_log_file() -> Path:
    """Where the app writes its log under ``--verbose`` when no file is named."""
    return Path(user_log_dir("symposium")) / "symposium.log"


class _ShownNotObeyed(logging.Formatter):
    """A record for the terminal: its text through :func:`tui.sanitize.terminal_safe`, since a
    message can quote a server's error, a model's reply or a file's name."""

    def format(self, record: logging.LogRecord) -> str:
        from tui.sanitize import terminal_safe

        return terminal_safe(super().format(record))


class _Stderr(logging.StreamHandler):
    """Whatever ``sys.stderr`` is when a record comes (as Python's own last-resort handler)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


def _to_terminal(level: int, fmt: str | None = None) -> logging.Handler:
    handler = _Stderr()
    handler.setLevel(level)
    handler.setFormatter(_ShownNotObeyed(fmt))
    return handler


class _DebateId(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.debate_id = current_debate.get()
        return True


def configure(log_file: str | None, verbose: bool, *, interactive: bool) -> Path | None:
    """Set up logging for one run of the program; returns the log file in use, if any.

    ``interactive``: the Textual app owns the terminal, so a verbose run without a named file
    logs to :func:`default_log_file` instead of stderr.
    """
    target = log_file or os.environ.get("SYMPOSIUM_LOG") or None
    if target is None and verbose and interactive:
        target = str(default_log_file())
    if target is None and not verbose:
        # Python's handler of last resort prints warnings raw on stderr: the same, made safe.
        logging.lastResort = _to_terminal(logging.WARNING)
        return None
    if target is not None:
        path = Path(target).expanduser()
        if path == default_log_file():
            private_dir(path.parent)  # Symposium's own log folder: narrowed if an older version left it open
        create_private(path)  # 0600 before the handler opens it: it names models and files, and under --verbose the case
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(FORMAT))
    else:
        path, handler = None, _to_terminal(logging.NOTSET, FORMAT)
    handler.addFilter(_DebateId())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("httpx", "httpcore", "asyncio", "markdown_it"):  # request chatter, not diagnostics
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return path
