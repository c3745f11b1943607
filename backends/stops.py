"""The text of a reply as its tokens arrive, cut at the first stop string.

Why one class: every in-process backend (llama.cpp, transformers) turns tokens into text one
at a time and must both stop at a stop string and never stream the first characters of one
("</" of "</s>") before it knows whether the string completes. Each backend carried its own
copy of that loop; llama.cpp's lockstep decoding (several replies advancing in one batch)
needs it once per reply, so it lives here, once.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import Emit


def first_stop(text: str, stops: Sequence[str]) -> int | None:
    """Where the earliest stop string in ``text`` begins, or None."""
    positions = [i for s in stops if s and (i := text.find(s)) >= 0]
    return min(positions) if positions else None


class ReplyText:
    """A reply's text so far; :meth:`update` streams what can no longer become a stop string.

    ``hold`` characters (one less than the longest stop string) stay back until the next token
    shows whether they start a stop string; a trailing U+FFFD (half of a multi-byte character a
    tokenizer split) stays back too, so a client never sees a replacement character that the
    next token completes.
    """

    def __init__(self, stops: Sequence[str], emit: Emit) -> None:
        self.stops = tuple(s for s in stops if s)
        self.hold = max((len(s) for s in self.stops), default=1) - 1
        self.emit = emit
        self.text = ""
        self.sent = 0

    def update(self, text: str) -> bool:
        """``text`` is the whole reply so far. True when it reached a stop string: the text is
        then cut where the stop string begins, and the reply is over."""
        cut = first_stop(text, self.stops)
        if cut is not None:
            self.text = text[:cut]
            return True
        self.text = text
        safe = len(text.rstrip("\ufffd")) - self.hold
        if safe > self.sent:
            self.emit(text[self.sent : safe])
            self.sent = safe
        return False

    def flush(self, tail: str = "") -> str:
        """The reply is over: append ``tail`` (a decoder's last bytes), stream what was held
        back, and return the whole text."""
        self.text += tail
        if len(self.text) > self.sent:
            self.emit(self.text[self.sent :])
            self.sent = len(self.text)
        return self.text
