"""Help: every key of the current screen, its binding id (to remap it), and how to remap."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.sanitize import plain
from tui.settings import config_dir

INTRO = """Symposium — moderate debates between local models. Everything stays on this machine.

Keys of this screen (ctrl+p opens the command palette with every action):"""


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark,f1", "app.pop_screen", "Close", id="help.close")]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        table = Table(box=None, padding=(0, 2))
        table.add_column("key", style="bold")
        table.add_column("action")
        table.add_column("binding id", style="dim")
        seen = set()
        for b in self.bindings:
            if b.id and b.id not in seen:
                seen.add(b.id)
                # keys come from the user's keymap
                table.add_row(plain(self.app.get_key_display(b)), plain(b.description or b.action), plain(b.id))
        with VerticalScroll():
            yield Static(id="close-hint")  # filled on mount, when the keymap's keys are known
            yield Static(INTRO)
            yield Static(table)
            yield Static(plain(f"\nRemap keys in {config_dir() / 'keymap.toml'}, one line per binding id, e.g.\n"
                               '  "debate.interject" = "ctrl+i"\n\nThemes: ctrl+t switches light and dark.'))
            yield Static(metrics_help())


    def on_mount(self) -> None:
        hint = self.query_one("#close-hint", Static)
        keys = self.closing_keys()
        hint.update(plain(f"{keys} closes this help.", style="bold"))
        hint.display = bool(keys)  # a keymap could leave Help no key; then nothing true to say

    def closing_keys(self) -> str:
        """The keys that close Help, as the keymap has them ("esc, q, ? or f1"), said first: a
        modal over the whole screen that does not say how to leave it traps people.
        Read from the screen's active bindings, which have the user's keymap applied."""
        keys = [self.app.get_key_display(active.binding) for active in self.active_bindings.values()
                if active.binding.id == "help.close"]
        shown = list(dict.fromkeys(keys))
        return " or ".join(shown) if len(shown) <= 2 else ", ".join(shown[:-1]) + " or " + shown[-1]


def metrics_help() -> Text:
    """What each metric on the Debate screen means, one line each (from the protocol code, so
    the help cannot drift from what is computed), and where the paper-vs-code table lives."""
    from protocols.measures.metrics import METRIC_DEFINITIONS

    text = Text()
    text.append("\nMetrics (the Debate screen's table and plot)\n", style="bold")
    for name in ("wd", "mi", "jsd", "nmi", "mi_bits"):
        if name in METRIC_DEFINITIONS:
            text.append(f"  {METRIC_DEFINITIONS[name]}\n")
    text.append("\nWhere each protocol follows its paper and where it differs, and why: docs/protocols.md\n"
                "(in the source; `symposium run PROTOCOL --help` gives each parameter's section).", style="dim")
    return text
