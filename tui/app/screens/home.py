"""Home: the debates in the journal, search, and the way into everything else."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from protocols.outcome import outcome_in_words
from protocols.text import clip
from store.export import to_json, to_markdown, write_private
from store.queries import Queries

from tui.app.report import save_report
from tui.app.screens.typed import symposium
from tui.sanitize import plain
from tui.app.widgets.footer import SteadyFooter
from tui.app.screens.dialogs import ConfirmDialog

WELCOME = ("Welcome to Symposium. Press d for a demo debate between the two bundled models, "
           "n to set up your own, ? for help.")


def _outcome(row: dict[str, Any]) -> str:
    """The outcome column: what the debate concluded in a few words (``outcome_in_words``), so
    a debate that settled without agreement never reads as if it had concluded its top label."""
    return outcome_in_words(row).short


class HomeScreen(Screen):
    BINDINGS = [
        Binding("d", "demo", "Demo debate", id="home.demo"),
        Binding("n", "new", "New debate", id="home.new"),
        Binding("enter", "open", "Open", id="home.open", show=False),
        Binding("o", "open", "Open", id="home.open-key"),
        Binding("r", "resume", "Resume", id="home.resume"),
        Binding("e", "export('md')", "Export .md", id="home.export-md"),
        Binding("j", "export('json')", "Export .json", id="home.export-json"),
        Binding("h", "report", "Report", id="home.report"),
        Binding("delete", "delete", "Delete", id="home.delete"),
        Binding("slash", "search", "Search", id="home.search"),
        Binding("f5", "refresh", "Refresh", id="home.refresh", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static(WELCOME, id="welcome")
        with Vertical():
            yield Input(placeholder="Search what was said (full text) — press / to focus, enter to search", id="search")
            yield DataTable(id="hits", cursor_type="row")
            yield DataTable(id="debates", cursor_type="row", zebra_stripes=True)
        yield SteadyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#debates", DataTable)
        # the most telling columns first: a narrow terminal cuts the models off, not the outcome
        for column in ("started", "protocol", "status", "turns", "title", "outcome", "models"):
            table.add_column(column, key=column)
        hits = self.query_one("#hits", DataTable)
        for column in ("debate", "round", "who", "what was said"):
            hits.add_column(column, key=column)
        hits.display = False
        self.refresh_debates()
        table.focus()

    def on_screen_resume(self) -> None:
        self.refresh_debates()

    # -- data -------------------------------------------------------------------------------------

    @property
    def queries(self) -> Queries:
        return Queries(symposium(self).journal)

    def refresh_debates(self) -> None:
        table = self.query_one("#debates", DataTable)
        table.clear()
        for row in self.queries.debates(limit=500):
            started = datetime.fromtimestamp(row["created_at"]).strftime("%Y-%m-%d %H:%M")
            models = ", ".join(sorted({m.split("=")[1] for m in (row["models"] or "").split(", ") if "=" in m} - {"human"}))
            # every cell a Text: a DataTable reads a plain str as markup, and these come from the journal
            table.add_row(plain(started), plain(row["protocol"]), plain(row["status"]), plain(row["turns"]),
                          plain(clip(row["title"], 40)), plain(clip(_outcome(row), 32)), plain(models), key=row["id"])

    def selected(self) -> str | None:
        table = self.query_one("#debates", DataTable)
        if table.row_count == 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    # -- actions ----------------------------------------------------------------------------------

    def action_demo(self) -> None:
        symposium(self).start_demo()

    def action_new(self) -> None:
        symposium(self).open_new_debate()

    def action_open(self) -> None:
        debate_id = self.selected()
        if debate_id:
            symposium(self).open_review(debate_id)

    def action_resume(self) -> None:
        debate_id = self.selected()
        if debate_id:
            symposium(self).resume(debate_id)

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_refresh(self) -> None:
        self.refresh_debates()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        hits = self.query_one("#hits", DataTable)
        hits.clear()
        found = self.queries.search(event.value) if event.value.strip() else []
        for i, hit in enumerate(found):
            hits.add_row(plain(str(hit["title"])[:30]), plain(hit["round"]), plain(hit["role"]),
                         plain(hit["snippet"]), key=f"{hit['debate_id']}:{i}")
        hits.display = bool(found)
        if event.value.strip() and not found:
            self.app.notify(f"nothing said matches {clip(event.value, 60)!r}")
        elif found:
            hits.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        symposium(self).open_review(key.split(":", 1)[0])

    def action_export(self, fmt: str) -> None:
        debate_id = self.selected()
        if not debate_id:
            return
        debate = self.queries.debate(debate_id)
        assert debate is not None
        folder = Path(symposium(self).export_dir)
        path = folder / f"symposium-{debate_id}.{fmt}"
        write_private(path, to_json(debate) if fmt == "json" else to_markdown(debate))
        self.app.notify(f"exported to {path} (readable by you only)")

    def action_report(self) -> None:
        debate_id = self.selected()
        if not debate_id:
            return
        debate = self.queries.debate(debate_id)
        assert debate is not None
        path = save_report(Path(symposium(self).export_dir), debate)
        self.app.notify(f"report written to {path} (readable by you only; open it in a browser, print it as PDF)")

    def action_delete(self) -> None:
        debate_id = self.selected()
        if not debate_id:
            return

        def delete(yes: bool | None) -> None:
            if yes:
                symposium(self).journal.delete_debate(debate_id)
                self.refresh_debates()
                self.app.notify("deleted")

        self.app.push_screen(ConfirmDialog(f"Delete debate {debate_id} and everything recorded about it?", yes="Delete"), delete)
