"""Making untrusted text (model output, case text, user input, server errors) safe to show.

A model can emit ANSI escape sequences or other control characters, by accident or because a
case text told it to. Printed raw they could recolour, clear or retitle the user's terminal.
Everything shown goes through :func:`terminal_safe` first; the journal keeps the raw text.

Textual and Rich also read plain ``str`` as markup (``notify``, ``Static.update``, ``Label``,
``DataTable`` cells, ``border_title``), where ``[/b]`` typed into a search box raises
``MarkupError`` and ``[@click=app.quit]`` becomes a live action. Text the code does not own
therefore reaches widgets only as :func:`plain` (a :class:`rich.text.Text`, never parsed as
markup) or through ``SymposiumApp.notify`` (markup always off).
"""

from __future__ import annotations

import json
import re

from rich.text import Text

from protocols.core.text import CONTROL_CHARACTERS, FORMAT_CHARACTERS, UNSAFE_CHARACTERS, mark

# CSI / OSC / other ESC sequences, then any remaining C0/C1 control except tab and newline
# (:data:`protocols.core.text.CONTROL_CHARACTERS`): dropped, they carry no text. The characters that
# reorder or hide text without being seen (bidi controls and marks, zero-width and tag
# characters: :data:`protocols.core.text.FORMAT_CHARACTERS`) are shown as marks, as in the HTML
# report: a reader sees that the text held them, and the terminal does not obey them.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences or control characters (``\\r`` becomes a newline), its
    invisible formatting characters shown as ``⟨U+202E⟩`` marks."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = CONTROL_CHARACTERS.sub("", _ESCAPES.sub("", text))
    return FORMAT_CHARACTERS.sub(lambda m: mark(m.group()), text)


def json_for_terminal(text: str) -> str:
    """JSON text with every unsafe character (:data:`protocols.core.text.UNSAFE_CHARACTERS`: controls,
    bidi and invisible formatting) written as JSON's own escape (``\\u202e``; a pair of them past
    U+FFFF). Such characters occur only inside JSON strings, where the escape means the same
    character: the document parses to the same values (a JSON export still verifies), and a
    terminal shows the escape instead of obeying the character."""
    return UNSAFE_CHARACTERS.sub(lambda m: json.dumps(m.group())[1:-1], text)


def plain(text: object, style: str = "") -> Text:
    """``text`` (anything; ``str()`` of it) as a terminal-safe Rich ``Text``: shown, never obeyed."""
    return Text(terminal_safe(str(text)), style=style)


class StreamSanitizer:
    """:func:`terminal_safe` for text that arrives in pieces, in time proportional to each piece.

    Re-sanitizing a streaming turn whole at every repaint would make a repaint's cost grow with
    the turn's length. Here each piece is cleaned once; an escape sequence (or a
    ``\\r`` before a possible ``\\n``) cut by a piece boundary is held back until it completes,
    so the result equals ``terminal_safe`` of the whole text.
    """

    #: An unfinished escape this many characters long (from its ESC) or longer is not waited for
    #: (it is cleaned as it stands, as if the text ended there).
    HOLD_LIMIT = 4096

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        cut = len(text)
        esc = text.rfind("\x1b")
        if esc != -1 and len(text) - esc < self.HOLD_LIMIT and not _complete(text, esc):
            cut = esc
        elif text.endswith("\r"):
            cut = len(text) - 1
        self._held = text[cut:]
        return terminal_safe(text[:cut])

    def close(self) -> str:
        """What was held back, cleaned (the stream has ended)."""
        text, self._held = self._held, ""
        return terminal_safe(text)


def _complete(text: str, esc: int) -> bool:
    """Whether the escape sequence starting at ``text[esc]`` has its final character."""
    match = _ESCAPES.match(text, esc)
    if match is None:
        return len(text) - esc > 1 and text[esc + 1] not in "[]"  # a lone ESC + other: a control to drop
    if text[esc + 1 : esc + 2] == "]":
        return match.group(2) is not None  # an OSC ends with BEL or ST
    return True
