"""Before the app writes a debate to a file: redacted or full, which folder, and whether an
existing file may be replaced.

A key on Home or Review asks this instead of writing: a word typed on Home without the search box
focused ("chest") would otherwise fire the report and export keys and write the case where nobody
had asked. The dialog opens on its choice of copy, where typed letters do nothing and Enter only
chooses; it writes nothing until the person has chosen a kind and pressed Save (or Replace,
when the file is there already).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from tui.app.screens.dialogs import _Dialog
from tui.app.widgets.fields import FormInput
from tui.app.workspace import Workspace
from tui.sanitize import plain
from tui.saving import WHAT, Format, WriteRefused, file_name, masked_in_words, write


@dataclass(frozen=True)
class SaveChoice:
    path: Path
    redacted: bool
    #: The file is there and the person chose to replace it.
    replace: bool


class SaveDialog(_Dialog):
    """Dismisses with a :class:`SaveChoice`, or ``None`` (nothing written)."""

    BINDINGS = [Binding("ctrl+s", "save", "Save", id="save.save")]

    def __init__(self, debate_id: str, title: str, fmt: Format, folder: Path) -> None:
        super().__init__()
        self.debate_id, self.title, self.fmt, self.folder = debate_id, title, fmt, folder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain(f"Write the {WHAT[self.fmt]} of “{self.title}” to a file?"))
            with RadioSet(id="kind"):
                yield RadioButton("Redacted: names, dates, numbers and places masked, to share", id="redacted")
                yield RadioButton("Full text, as the journal keeps it: for you", id="full")
            yield Label("Folder")
            yield FormInput(str(self.folder), id="folder")
            yield Static(id="target")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button("Save", id="save", variant="primary", disabled=True)

    def on_mount(self) -> None:
        self.query_one(RadioSet).focus()
        self._target()

    @property
    def redacted(self) -> bool | None:
        """The kind chosen; ``None`` until the person chooses."""
        pressed = self.query_one(RadioSet).pressed_button
        return None if pressed is None else pressed.id == "redacted"

    def path(self) -> Path | None:
        redacted, folder = self.redacted, self.query_one("#folder", Input).value.strip()
        if redacted is None or not folder:
            return None
        return Path(folder).expanduser() / file_name(self.debate_id, self.fmt, redacted=redacted)

    @on(RadioSet.Changed)
    @on(Input.Changed, "#folder")
    def _target(self) -> None:
        """Say which file will be written, and whether one is there already."""
        path, save, target = self.path(), self.query_one("#save", Button), self.query_one("#target", Static)
        save.disabled = path is None
        if path is None:
            target.update(plain("Choose redacted or full text first." if self.redacted is None else "Name a folder."))
            save.label = "Save"
        elif path.exists():
            target.update(plain(f"{path} exists: Replace writes over it."))
            save.label = "Replace"
        else:
            target.update(plain(f"Writes {path} (readable by you only)."))
            save.label = "Save"

    def action_save(self) -> None:
        path = self.path()
        if path is not None:
            self.dismiss(SaveChoice(path, bool(self.redacted), path.exists()))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.dismiss(None)


def save_debate(screen: Screen, workspace: Workspace, debate: Mapping[str, Any], fmt: Format) -> None:
    """Ask (:class:`SaveDialog`), then write the debate's ``fmt`` file and say where; a refusal
    (a file that appeared meanwhile, a folder that cannot be written) is said, never raised."""
    app = screen.app

    def chosen(choice: SaveChoice | None) -> None:
        if choice is None:
            return
        try:
            written = write(workspace.journal, debate["id"], fmt, choice.path, redacted=choice.redacted,
                            replace=choice.replace)
        except WriteRefused as exc:
            app.notify(f"Not written: {exc}", severity="error", timeout=10)
            return
        kind = "redacted " if choice.redacted else ""
        masked = f" ({masked_in_words(written.masked)})" if written.masked is not None else ""
        how = "readable by you only" + ("; open it in a browser, print it as PDF" if fmt == "html" else "")
        app.notify(f"{kind}{WHAT[fmt]} written to {written.path}{masked} ({how})")

    app.push_screen(SaveDialog(debate["id"], str(debate.get("title") or debate["id"]), fmt, workspace.export_dir), chosen)
