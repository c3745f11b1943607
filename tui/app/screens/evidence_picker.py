"""Choosing an evidence file or folder for the New-debate form's Evidence field.

A directory tree from the home folder: Enter on a file chooses it; "Add folder" chooses the
folder under the cursor (every file Symposium reads in it, :mod:`protocols.core.documents`).
The path chosen is added to the field, where it can still be edited; nothing is read until the
debate starts (and a file that cannot be read stops the start with its reason).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DirectoryTree, Label

from protocols.core.documents import KINDS


class EvidencePicker(ModalScreen["str | None"]):
    """Dismisses with the chosen path, or ``None``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel")]

    def __init__(self, start: Path | None = None) -> None:
        super().__init__()
        self.start = start or Path.home()

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Label(f"Evidence: Enter chooses a file ({', '.join(sorted(set(KINDS)))}); 'Add folder' the folder "
                        "under the cursor", id="picker-help")
            yield DirectoryTree(str(self.start), id="picker-tree")
            with Horizontal(id="picker-buttons"):
                yield Button("Add folder", id="picker-folder")
                yield Button("Cancel", id="picker-cancel")

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(str(event.path))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "picker-folder":
            node = self.query_one(DirectoryTree).cursor_node
            path = getattr(node.data, "path", None) if node is not None else None
            if path is not None:
                self.dismiss(str(path if Path(path).is_dir() else Path(path).parent))
                return
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


def added(current: str, path: str) -> str:
    """The field's value with ``path`` added (paths are separated by ';')."""
    paths = [p.strip() for p in current.split(";") if p.strip()]
    return "; ".join([*paths, path] if path not in paths else paths)


__all__ = ["EvidencePicker", "added"]
