"""The transcript: one box per turn, streaming while the model writes it.

Model text is untrusted: it is shown as plain :class:`rich.text.Text` after
:func:`tui.sanitize.terminal_safe`, never parsed as markup, so ``[bold]`` or an escape sequence
in a reply is displayed, not obeyed.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from protocols.core.events import TokenDelta, TurnFinished, TurnStarted
from tui.app.widgets.citations import Citations
from tui.sanitize import StreamSanitizer, plain, terminal_safe

#: Repaint a streaming turn at most this often (seconds): tokens arrive faster than eyes read.
REPAINT_INTERVAL = 0.05


class TurnView(Vertical):
    """One turn. Streams raw text; when finished shows the rendered text and notes.

    While streaming, each finished paragraph becomes its own ``Static`` that is never redrawn
    and only the paragraph being written is repainted, with text sanitized piece by piece
    (:class:`StreamSanitizer`): a repaint costs the same at token 10 and token 1,000.
    """

    def __init__(self, role: str, model_id: str, title: str) -> None:
        super().__init__(classes=f"{role} streaming")
        self.role = role
        self.model_id = model_id
        self.border_title = plain(title)  # a str border title is read as markup; the model id is not ours
        self.border_subtitle = "writing …"
        self.chunks: list[str] = []
        self.final_text: str | None = None
        self._clean = StreamSanitizer()
        self._paragraph = ""  # sanitized text of the paragraph being written
        self._tail = Static(Text(""))
        self._dirty = False

    def compose(self) -> ComposeResult:
        yield self._tail

    @property
    def raw(self) -> str:
        """Everything the model has written so far (uncleaned; the journal keeps it too)."""
        return "".join(self.chunks)

    def append(self, text: str) -> None:
        self.chunks.append(text)
        self._paragraph += self._clean.feed(text)
        self._dirty = True

    def flush(self) -> bool:
        """Paint what arrived since the last flush; whether anything was painted."""
        if not self._dirty or self.final_text is not None or not self.is_mounted:
            return False
        if "\n\n" in self._paragraph:
            done, self._paragraph = self._paragraph.rsplit("\n\n", 1)
            self.mount(Static(Text(done), classes="paragraph"), before=self._tail)
        self._repaint_tail()
        self._dirty = False
        return True

    def _repaint_tail(self) -> None:
        """Repaint the paragraph being written; lay the screen out again only if its height
        changed (a new line every few seconds), not at every repaint: a layout of the whole
        screen was most of a repaint's cost while a model writes."""
        tail = self._tail
        tail.update(Text(self._paragraph), layout=False)
        width = tail.content_region.width
        if not width:  # not laid out yet
            tail.refresh(layout=True)
            return
        height = tail.get_content_height(tail.container_size, self.app.size, width)  # what layout would compute (cached for it)
        if height != tail.content_region.height:
            tail.refresh(layout=True)

    def finish(self, event: TurnFinished) -> None:
        self.final_text = event.text
        body = Text(terminal_safe(event.text.strip() or "(empty reply)"))
        for note in event.parse_notes:
            body.append("\n↳ " + terminal_safe(note), style="dim italic")
        self.remove_children()
        self._tail = Static(body)
        self.mount(self._tail)
        if event.citations:  # the turn's claims, each with its verdict; a supported one opens its passage
            self.mount(Citations(event.debate_id, event.citations))
        self.remove_class("streaming")
        call = event.call
        if call is None:
            self.border_subtitle = ""
        else:
            rate = ""
            if call.first_token_s is not None and call.completion_tokens > 1 and call.duration_s > call.first_token_s:
                rate = f" · {(call.completion_tokens - 1) / (call.duration_s - call.first_token_s):.0f} tok/s"
            self.border_subtitle = plain(f"{call.completion_tokens} tokens{rate} · prompt {call.prompt_tokens} "
                                         f"({call.prompt_tokens_evaluated} new) · {call.finish_reason}")


def _title(role: str, model_id: str, kind: str, round_: int, kappa: float | None) -> str:
    k = f" · κ {kappa:.2f}" if kappa is not None else ""
    return f"{role} · {model_id} · {kind} · round {round_}{k}"


class Transcript(VerticalScroll):
    """All turns of a debate, newest at the bottom, following the stream unless scrolled up (anchored)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.current: TurnView | None = None
        self.turns: list[TurnView] = []

    def on_mount(self) -> None:
        self.set_interval(REPAINT_INTERVAL, self._repaint)

    def _repaint(self) -> None:
        if self.current is not None:
            self.current.flush()
        self._follow()

    def _follow(self) -> None:
        """Anchor the view to the bottom once the turns overflow it: the layout that makes
        room for a new line then also scrolls to it, in one pass and one repaint (scrolling
        after it, with ``scroll_end`` once the layout was done, laid out and repainted the
        whole visible transcript a second time for every line a model wrote). Scrolling up
        releases the anchor; scrolling back to the bottom takes it again. Not before the
        turns overflow: an anchored view shorter than its window is drawn bottom-aligned."""
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    def on_resize(self) -> None:
        if self.is_anchored and self.max_scroll_y <= 0:  # taller than the turns now
            self.anchor(False)
            self.scroll_home(animate=False, immediate=True)

    def start(self, event: TurnStarted) -> None:
        view = TurnView(event.role, event.model_id, _title(event.role, event.model_id, event.kind, event.round, None))
        self.current = view
        self.turns.append(view)
        self.mount(view)

    def delta(self, event: TokenDelta) -> None:
        if self.current is not None and self.current.role == event.role:
            self.current.append(event.text)

    def finish(self, event: TurnFinished) -> None:
        view = self.current if self.current is not None and self.current.role == event.role else None
        if view is None:  # a turn with no streaming (a person's turn, a replayed debate)
            view = TurnView(event.role, event.model_id, "")
            self.turns.append(view)
            self.mount(view)
        view.border_title = plain(_title(event.role, event.model_id, event.kind, event.round, event.kappa))
        view.finish(event)
        self.current = None

    def last_text(self) -> str | None:
        for view in reversed(self.turns):
            if view.final_text is not None:
                return view.final_text
        return None

    def note(self, text: str, kind: str = "notice") -> None:
        """A line between turns: ``kind`` is ``moderator``, ``notice`` (from the protocol) or
        ``app``; the stylesheet colours each (``Transcript > .note.moderator`` …)."""
        self.mount(Static(Text(terminal_safe(text)), classes=f"note {kind}"))

    def flush_all(self) -> None:
        """Scroll to the end once a replay has been mounted."""
        self.scroll_end(animate=False)
