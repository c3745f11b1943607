"""Command-line values that are text or ``@FILE`` (cases, questions and answers are often long)."""

from __future__ import annotations

from pathlib import Path

from tui.errors import UserError


def read_text(path: str, what: str) -> str:
    """The UTF-8 contents of ``path``, or one clear error naming the file and the ``what``."""
    file = Path(path).expanduser()
    try:
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{file}: cannot read the {what} ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UserError(f"{file}: cannot read the {what} (not UTF-8 text)") from None


def text_arg(value: str, what: str) -> str:
    """``value`` itself, or the contents of the file it names after an ``@``."""
    return read_text(value[1:], what) if value.startswith("@") else value
