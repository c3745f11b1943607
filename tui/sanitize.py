"""Making untrusted text (model output, case text) safe to put on a terminal.

A model can emit ANSI escape sequences or other control characters, by accident or because a
case text told it to. Printed raw they could recolour, clear or retitle the user's terminal.
Everything shown goes through :func:`terminal_safe` first; the journal keeps the raw text.
"""

from __future__ import annotations

import re

# CSI / OSC / other ESC sequences, then any remaining C0/C1 control except tab and newline.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences or control characters (``\\r`` becomes a newline)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
