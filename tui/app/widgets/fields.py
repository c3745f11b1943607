"""Text fields where Ctrl+A selects all, as in the editors and browsers people type cases in.

Textual's Input and TextArea bind Ctrl+A to "go to the line's start" (Emacs), so a case typed
over the pre-filled one, or a new search over the last, was added to it. Home/End
still go to a line's ends. The bindings have ids, so a keymap can give Ctrl+A back to Emacs.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input, TextArea


class FormText(TextArea):
    """A multi-line field (the case); Ctrl+A selects all of it."""

    BINDINGS = [Binding("ctrl+a", "select_all", "Select all", id="text.select-all", show=False)]


class FormInput(Input):
    """A one-line field (a parameter, the search); Ctrl+A selects all of it."""

    BINDINGS = [Binding("ctrl+a", "select_all", "Select all", id="input.select-all", show=False)]
