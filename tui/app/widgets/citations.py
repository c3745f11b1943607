"""A turn's checked citations, shown under it; a supported one opens the passage it names.

Each claim is one line, marked by its verdict (:data:`protocols.core.evidence.MARKS`): ✓ with the
passage's place (``E7 p.4 ¶3 · labs.pdf``), ✗ with what was wrong (no such passage, a quote not
in it: never a passage, since a fabricated citation is no source), – for a claim made without
one. Enter or a click on a supported line shows the passage, read from the journal (the
passages the debate was given, not the file on disk today). Every text is the user's file or a
model's: shown as plain text after :func:`tui.sanitize.terminal_safe`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from protocols.core.events import Citation
from protocols.core.evidence import cited_line
from store.queries import Queries
from tui.sanitize import terminal_safe

_STYLES = {"supported": "green", "not_found": "red", "uncited": "dim"}


class PassageDialog(ModalScreen[None]):
    """One passage of the evidence, whole."""

    BINDINGS = [Binding("escape,enter", "dismiss_passage", "Close", id="passage.close")]

    def __init__(self, label: str, text: str) -> None:
        super().__init__()
        self.label, self.text = label, text

    def compose(self) -> ComposeResult:
        with Vertical(id="passage-dialog"):
            yield Static(Text(terminal_safe(self.label), style="bold"), id="passage-label")
            with VerticalScroll():
                yield Static(Text(terminal_safe(self.text)), id="passage-text")
            yield Button("Close", id="passage-close")

    def action_dismiss_passage(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)


class CitationLine(Static, can_focus=True):
    """One claim and its verdict; a supported one opens its passage."""

    BINDINGS = [Binding("enter", "open", "Open passage", id="citation.open")]

    def __init__(self, debate_id: str, citation: Citation) -> None:
        super().__init__(Text(terminal_safe(cited_line(citation)), style=_STYLES.get(citation.status, "")),
                         classes=f"citation {citation.status}")
        self.debate_id, self.citation = debate_id, citation

    def passage_text(self) -> str | None:
        """The passage's text as the journal holds it (``None`` for a citation that did not check)."""
        if self.citation.status != "supported" or self.citation.passage is None:
            return None
        journal = getattr(self.app, "journal", None)
        evidence = Queries(journal).evidence(self.debate_id) if journal is not None else None
        number = self.citation.passage[1:]
        return next((str(p["text"]) for p in (evidence or {}).get("passages") or [] if str(p["number"]) == number), None)

    def action_open(self) -> None:
        text = self.passage_text()
        if text is not None:
            self.app.push_screen(PassageDialog(self.citation.label or str(self.citation.passage), text))

    def on_click(self) -> None:
        self.action_open()


class Citations(Vertical):
    """A turn's citations (mounted under the turn by :meth:`TurnView.finish`)."""

    def __init__(self, debate_id: str, citations: Sequence[Citation]) -> None:
        super().__init__(classes="citations")
        self.debate_id, self.citations = debate_id, tuple(citations)

    def compose(self) -> ComposeResult:
        for c in self.citations:
            yield CitationLine(self.debate_id, c)


__all__ = ["CitationLine", "Citations", "PassageDialog"]
