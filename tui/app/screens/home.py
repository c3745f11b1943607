"""Home: the debates in the journal, search, and the way into everything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from protocols.core.outcome import outcome_in_words
from protocols.core.text import clip
from store.journal import DeleteUnfinished
from store.queries import Queries
from tui.app.messages import OpenReview, ResumeDebate
from tui.app.screens.dialogs import ConfirmDialog
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.screens.save import save_debate
from tui.app.widgets.fields import FormInput
from tui.app.widgets.footer import SteadyFooter
from tui.app.workspace import Workspace
from tui.sanitize import plain
from tui.saving import Format, file_name
from tui.titles import distinct_clips, when

WELCOME = ("Welcome to Symposium. Press d for a demo debate between the two bundled models "
           "(ctrl+s starts it), n to set up your own, ? for help.")


def _outcome(row: dict[str, Any]) -> str:
    """The outcome column: what the debate concluded in a few words (``outcome_in_words``), so
    a debate that settled without agreement never reads as if it had concluded its top label."""
    return outcome_in_words(row).short


#: The most of a title the lists show (Home's table, the search results); see distinct_clips.
TITLE_WIDTH = 40
#: Home's columns in the order a person reads them: which debate, how it stands, what it
#: concluded; then when, how and by whom. A narrow terminal shows the first ones (the rest are a
#: scroll to the right away).
DEBATE_COLUMNS = ("title", "status", "outcome", "started", "protocol", "turns", "models")
#: The most of an outcome Home shows, and the least it keeps beside the title on a narrow terminal.
OUTCOME_WIDTH, OUTCOME_LEAST = 40, 26
#: What a line of Home's table takes besides its cells: the margins (4), the scroll bar (2) and
#: two cells of padding for each of the title, the status and the outcome.
HOME_FRAME = 4 + 2 + 3 * 2
#: The widest status ("interrupted").
STATUS_WIDTH = 11
#: What the other columns take on a line (cells, gaps, margins): Home's table (the status and
#: the least of the outcome) and the search results (started, round, who, and room for what was said).
DEBATES_OTHERS, HITS_OTHERS = HOME_FRAME + STATUS_WIDTH + OUTCOME_LEAST, 60


def title_width(screen_width: int, others: int) -> int:
    """A title column's width on a screen this wide: :data:`TITLE_WIDTH`, less on a narrow
    terminal, so that at 80 columns the columns after it (how it stands, what was said) are
    still on screen."""
    return max(16, min(TITLE_WIDTH, screen_width - others))


def outcome_width(screen_width: int, title: int, status: int) -> int:
    """The outcome column's width beside title and status columns this wide: what the line has
    left, up to :data:`OUTCOME_WIDTH`."""
    return max(16, min(OUTCOME_WIDTH, screen_width - HOME_FRAME - title - status))


def type_into_search(screen: Screen, event: events.Key, *, fresh: bool) -> None:
    """Give the typed character to the search box (a new search when ``fresh``) and the focus
    with it, so the keys typed after it follow it there."""
    event.stop()
    event.prevent_default()
    search = screen.query_one("#search", Input)
    if fresh:
        search.value = ""
    screen.set_focus(search)  # now, not later as focus() does: its Focus event queues first…
    # …then the character (the Focus event selects what the box holds, and would select it
    # too), then the keys typed after it
    search.post_message(events.Key(event.key, event.character))


class SearchHits(DataTable):
    """The search's results. A typed character goes back to the search box as the start of a
    new search instead of reaching Home's one-letter commands: someone who has just searched is
    still typing ("jaundice" + Enter typed here exported a file and started a debate). Arrows,
    Enter (open) and Delete still act on the hit under the cursor."""

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character:
            type_into_search(self.screen, event, fresh=True)


class DebateList(DataTable):
    """Home's list of debates. A printable key that is not one of Home's commands starts a
    search: people type into Home without focusing the box first ("chest" fired the report and
    export keys). Home's keys that write a file ask first (:mod:`tui.app.screens.save`)."""

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character and event.key not in self.screen.active_bindings:
            type_into_search(self.screen, event, fresh=False)


class HomeScreen(Screen):
    BINDINGS = [
        # priority: acted on as the key arrives, before the keys typed after it reach Home's table
        Binding("d", "demo", "Demo", id="home.demo", priority=True),
        Binding("n", "new", "New", id="home.new", priority=True),
        Binding("enter", "open", "Open", id="home.open", show=False),
        Binding("o", "open", "Open", id="home.open-key"),
        Binding("r", "resume", "Resume", id="home.resume"),
        Binding("e", "export('md')", "Export .md", id="home.export-md"),
        Binding("j", "export('json')", "Export .json", id="home.export-json", show=False),
        Binding("h", "report", "Report", id="home.report"),
        Binding("delete", "delete", "Delete", id="home.delete"),
        Binding("slash", "search", "Search", id="home.search"),
        Binding("f5", "refresh", "Refresh", id="home.refresh", show=False),
    ]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace

    def compose(self) -> ComposeResult:
        yield Static(WELCOME, id="welcome")
        with Vertical():
            yield FormInput(placeholder="Search what was said (full text) — press / to focus, enter to search", id="search")
            yield SearchHits(id="hits", cursor_type="row")
            yield DebateList(id="debates", cursor_type="row", zebra_stripes=True)
        yield SteadyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#debates", DataTable)
        for column in DEBATE_COLUMNS:
            table.add_column(column, key=column)
        hits = self.query_one("#hits", DataTable)
        for column in ("started", "debate", "round", "who", "what was said"):
            hits.add_column(column, key=column)
        hits.display = False
        self.refresh_debates()
        table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``n`` and ``d`` open the form the moment they arrive (priority bindings), so that the
        words typed right after them go to the form and not to Home's table, where they would be
        lost. Being priority keys they would also fire in the search box, where a
        letter is part of a search: there, and in its results, they are not offered."""
        if action in ("new", "demo") and self.is_mounted:
            return not (self.query_one("#search", Input).has_focus or self.query_one("#hits", DataTable).has_focus)
        return True

    def on_screen_resume(self) -> None:
        self.refresh_debates()

    def on_resize(self, event: events.Resize) -> None:
        """Titles are clipped to the terminal's width: clip them again for the new one."""
        if self.is_mounted and self.query_one("#debates", DataTable).row_count:
            self.refresh_debates()

    # -- data -------------------------------------------------------------------------------------

    @property
    def queries(self) -> Queries:
        return Queries(self.workspace.journal)

    def refresh_debates(self) -> None:
        """List the journal's debates again, the cursor kept on the debate it was on (if still there)."""
        table = self.query_one("#debates", DataTable)
        current = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value) if table.row_count else None
        table.clear()
        rows = self.queries.debates(limit=500)
        width = self.app.size.width
        titles = distinct_clips([row["title"] for row in rows], title_width(width, DEBATES_OTHERS))
        outcome = outcome_width(width, max((len(t) for t in titles), default=0),
                                max((len(str(row["status"])) for row in rows), default=0))
        for row, title in zip(rows, titles, strict=True):
            models = ", ".join(sorted({m.split("=")[1] for m in (row["models"] or "").split(", ") if "=" in m} - {"human"}))
            cells = {"title": title, "status": row["status"], "outcome": clip(_outcome(row), outcome),
                     "started": when(row["created_at"]), "protocol": row["protocol"], "turns": row["turns"], "models": models}
            # every cell a Text: a DataTable reads a plain str as markup, and these come from the journal
            table.add_row(*(plain(cells[column]) for column in DEBATE_COLUMNS), key=row["id"])
        if current is not None and current in table.rows:
            table.move_cursor(row=table.get_row_index(current), animate=False)

    def selected(self) -> str | None:
        """The debate the keys act on: the search hit under the cursor while the results have the
        focus (that is the row the user sees highlighted), else the row of Home's table."""
        hits = self.query_one("#hits", DataTable)
        table = hits if hits.has_focus and hits.row_count else self.query_one("#debates", DataTable)
        if table.row_count == 0:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        return key.split(":", 1)[0]  # a hit's key is "<debate id>:<n>"

    # -- actions ----------------------------------------------------------------------------------

    def action_demo(self) -> None:
        """The demo's form, filled in. Pushed here, as the key arrives, not asked of the app by a
        message: the keys typed right after ``d`` would reach Home before the message."""
        self.app.push_screen(NewDebateScreen.demo(self.workspace))

    def action_new(self) -> None:
        """The New-debate form, pushed as the key arrives (see :meth:`action_demo`)."""
        self.app.push_screen(NewDebateScreen(self.workspace))

    def action_open(self) -> None:
        debate_id = self.selected()
        if debate_id:
            self.post_message(OpenReview(debate_id))

    def action_resume(self) -> None:
        debate_id = self.selected()
        if debate_id:
            self.post_message(ResumeDebate(debate_id))

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_refresh(self) -> None:
        self.refresh_debates()

    @on(Input.Submitted, "#search")
    def search(self, event: Input.Submitted) -> None:
        """Show what matches, the debates whose case matches first (their "who" is "case"), then
        those whose evidence holds a file of that name ("evidence"), then the turns; the focus
        stays in the search box, since the next thing typed is more often a better search than a
        command (↓ goes to the results)."""
        hits = self.query_one("#hits", DataTable)
        hits.clear()
        text = event.value
        found = ([*self.queries.cases(text), *self.queries.evidence_named(text), *self.queries.search(text)]
                 if text.strip() else [])
        titles = distinct_clips([str(hit["title"]) for hit in found], title_width(self.app.size.width, HITS_OTHERS))
        for i, (hit, title) in enumerate(zip(found, titles, strict=True)):
            hits.add_row(plain(when(hit["created_at"])), plain(title), plain(hit["round"]), plain(hit["role"]),
                         plain(hit["snippet"]), key=f"{hit['debate_id']}:{i}")
        hits.display = bool(found)
        if event.value.strip() and not found:
            self.app.notify(f"no case and nothing said matches {clip(event.value, 60)!r}")

    def on_key(self, event: events.Key) -> None:
        """From the search box, ↓ goes to the results, and Escape (from the box or the results)
        back to Home's table, where single letters are commands: the box keeps every other key.
        ↓ with no results stays in the box, so that words typed after it are still a search."""
        search, hits = self.query_one("#search", Input), self.query_one("#hits", DataTable)
        if not (search.has_focus or hits.has_focus) or event.key not in ("down", "escape"):
            return
        if hits.has_focus and event.key == "down":
            return  # the results' own: the next hit
        event.stop()
        if event.key == "escape":
            self.query_one("#debates", DataTable).focus()
        elif hits.display and hits.row_count:
            hits.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        self.post_message(OpenReview(key.split(":", 1)[0]))

    def action_export(self, fmt: Format) -> None:
        """The highlighted debate as a Markdown or JSON file, redacted or not: asked first."""
        debate_id = self.selected()
        debate = self.queries.debate(debate_id) if debate_id else None
        if debate is not None:
            save_debate(self, self.workspace, debate, fmt)

    def action_report(self) -> None:
        self.action_export("html")

    def action_delete(self) -> None:
        debate_id = self.selected()
        if not debate_id:
            return

        def delete(yes: bool | None) -> None:
            if yes:
                try:
                    self.workspace.journal.delete_debate(debate_id)
                except DeleteUnfinished as exc:  # gone from the list; its words wait for the next open
                    self.app.notify(str(exc), severity="warning", timeout=20)
                self.refresh_debates()
                hits = self.query_one("#hits", DataTable)
                for row_key in [k for k in hits.rows if str(k.value).startswith(f"{debate_id}:")]:
                    hits.remove_row(row_key)  # its hits would open a debate that is gone
                hits.display = hits.row_count > 0
                self.app.notify(f"deleted debate {debate_id} from the journal{kept and '; its exported files stay'}")

        debate = self.queries.debate(debate_id)
        title = clip(debate["title"], 120) if debate else debate_id
        files = self.exported(debate_id)
        kept = (f" Files exported from it are not in the journal and stay: {', '.join(str(f) for f in files)}."
                if files else "")
        self.app.push_screen(ConfirmDialog(f"Delete debate {debate_id} ({title}) and everything the journal recorded "
                                           f"about it? This cannot be undone.{kept}", yes="Delete", destructive=True), delete)

    def exported(self, debate_id: str) -> list[Path]:
        """The files ``e``, ``j`` and ``h`` wrote for this debate in the app's folder that are
        still there: deleting the debate leaves them, and the question must not say "everything"
        without naming them (a case exported, then deleted, was still on disk unmentioned)."""
        folder = Path(self.workspace.export_dir)
        return [path for fmt in get_args(Format) for redacted in (False, True)
                if (path := folder / file_name(debate_id, fmt, redacted=redacted)).exists()]
