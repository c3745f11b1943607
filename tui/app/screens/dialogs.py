"""Small modal dialogs: confirm, ask for text (an interjection), a number (κ), a verdict.

Their text fields are FormInputs, as the forms' are: Ctrl+A selects all, so that a κ typed over
the one shown replaces it (with Textual's Ctrl+A, "go to the start", 0.3 typed after it over
0.90 made 030.90, refused, in a walk-through)."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from tui.app.widgets.fields import FormInput, FormText
from tui.sanitize import plain


class _Dialog(ModalScreen):
    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="dialog.cancel")]

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ConfirmDialog(_Dialog):
    """Yes or no. Dismisses with ``True`` or ``False`` (``None`` on Escape).

    A ``destructive`` question (one whose yes cannot be undone: deleting a debate) opens with
    the focus on its "Cancel", so that an Enter meant for something else never answers yes
    (Delete, then Enter typed after a search, deleted the debate). Questions whose yes
    leaves everything resumable (quit, stop) keep the focus on yes: the key that asked was the
    user's request.
    """

    def __init__(self, question: str, yes: str = "Yes", no: str | None = None, *, destructive: bool = False) -> None:
        super().__init__()
        self.question, self.yes, self.destructive = question, yes, destructive
        self.no = no if no is not None else ("Cancel" if destructive else "No")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(self.question))  # names debates and models: not markup
            with Horizontal():
                yield Button(self.no, id="no")
                yield Button(self.yes, id="yes", variant="error" if self.destructive else "warning")

    def on_mount(self) -> None:
        self.query_one("#no" if self.destructive else "#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class InterjectDialog(_Dialog):
    """A moderator's message and who gets it. Dismisses with ``(text, to)``.

    ``targets`` are ``(label, role)`` pairs: the roles of this debate that its protocol lets
    an interjection reach (and "all"), as the Debate screen found them; labels name roles and
    models, so they are shown as plain text, never as markup.
    """

    def __init__(self, targets: list[tuple[str, str]]) -> None:
        super().__init__()
        self.targets = targets

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Interject: your words are added to the next request to the role you choose, after the "
                        "step under way.")
            options = [(plain(label), role) for label, role in self.targets]
            yield Select(options, value=self.targets[0][1], allow_blank=False, id="to")
            yield FormInput(placeholder="Your message", id="text")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button("Send", id="send", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#text", Input).focus()

    @on(Input.Submitted, "#text")
    @on(Button.Pressed, "#send")
    def _send(self) -> None:
        text = self.query_one("#text", Input).value.strip()
        if text:
            self.dismiss((text, str(self.query_one("#to", Select).value)))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class NumberDialog(_Dialog):
    """A number in a range. Dismisses with the float, or ``None``."""

    def __init__(self, question: str, value: float | None, low: float = 0.0, high: float = 1.0) -> None:
        super().__init__()
        self.question, self.value, self.low, self.high = question, value, low, high

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(self.question))
            yield FormInput("" if self.value is None else f"{self.value:.2f}", id="number", type="number")
            yield Label("", id="problem")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button("Set", id="set", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#number", Input).focus()

    def _set(self) -> None:
        raw = self.query_one("#number", Input).value
        try:
            number = float(raw)
        except ValueError:
            number = float("nan")
        if not self.low <= number <= self.high:
            self.query_one("#problem", Label).update(f"Enter a number from {self.low:g} to {self.high:g}.")
            return
        self.dismiss(number)

    def on_input_submitted(self) -> None:
        self._set()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._set() if event.button.id == "set" else self.dismiss(None)


class VerdictDialog(_Dialog):
    """Accept or reject the consensus, with a note. Dismisses with ``(accept, note)``."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Your verdict on the debate's consensus (kept in the journal).")
            yield FormInput(placeholder="Note (optional)", id="note")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button("Reject", id="reject", variant="error")
                yield Button("Accept", id="accept", variant="success")

    def on_mount(self) -> None:
        self.query_one("#note", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
        else:
            self.dismiss((event.button.id == "accept", self.query_one("#note", Input).value.strip()))


class EditDialog(_Dialog):
    """The moderator edits what the protocol proposes (SocraSynth's agreed agenda). Dismisses
    with the edited text, or ``None`` to go on with the proposal (Escape too).

    The focus starts on "Go on as proposed": a key typed for the Debate screen (Enter, a
    letter) must neither change the proposal nor leave a stray character in it; the text is a
    Tab or a click away. An edit ``check`` refuses is said under the text and not sent.
    """

    BINDINGS = [Binding("ctrl+s", "use", "Use my edit", id="edit.use")]
    AUTO_FOCUS = "#keep"

    def __init__(self, question: str, text: str, check: Callable[[str], str | None]) -> None:
        super().__init__()
        self.question, self.proposal, self.checker = question, text, check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(self.question))
            yield FormText(self.proposal, id="text")
            yield Label("", id="problem")
            with Horizontal():
                yield Button("Go on as proposed", id="keep")
                yield Button("Use my edit", id="use", variant="primary")

    def action_use(self) -> None:
        text = self.query_one("#text", FormText).text
        if text.strip() == self.proposal.strip():
            self.dismiss(None)
            return
        problem = self.checker(text)
        if problem:
            self.query_one("#problem", Label).update(plain(problem))
            return
        self.dismiss(text)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_use() if event.button.id == "use" else self.dismiss(None)


class PersonDialog(_Dialog):
    """The person's turn in a protocol with a human seat. Dismisses with their words, ``""``
    to pass, or ``None`` to leave the discussion."""

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Your turn.")
            yield Label(plain(self.prompt[-600:]), classes="prompt")
            yield FormInput(placeholder="What you say (enter to send)", id="words")
            with Horizontal():
                yield Button("Leave", id="leave")
                yield Button("Pass", id="pass")
                yield Button("Say it", id="say", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#words", Input).focus()

    def on_input_submitted(self) -> None:
        self.dismiss(self.query_one("#words", Input).value.strip())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        match event.button.id:
            case "say":
                self.dismiss(self.query_one("#words", Input).value.strip())
            case "pass":
                self.dismiss("")
            case _:
                self.dismiss(None)
