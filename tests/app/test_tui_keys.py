"""Keys that must not act behind the user's back, and lists that can be read: the real app under Pilot, a real journal, recorded debates; the command line
as a real subprocess at 80 columns."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, DataTable, Input, Label, OptionList, Select, TextArea

from protocols.core.events import DebateStarted, MetricsComputed
from protocols.evince import DEMO_CASE
from protocols.measures.metrics import MetricsSnapshot
from store.journal import Journal
from store.queries import Queries
from tests.helpers.cli_process import symposium
from tests.helpers.pilot import make_app
from tests.helpers.sample_debate import sample_events
from tests.helpers.steady import steady_cursor  # noqa: F401 - a fixture
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog, InterjectDialog, NumberDialog, PersonDialog, VerdictDialog
from tui.app.screens.help import HelpScreen
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.screens.review import ChooseDebate, ReviewScreen

SIZE = (80, 24)
#: Two cases that read the same for their first 90 characters: what clipping used to hide.
TWINS = ("A patient presents with itching, vomiting, fatigue, weight loss, high fever, yellowish skin and dark urine",
         "A patient presents with itching, vomiting, fatigue, weight loss, high fever, yellowish skin and joint pain")


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own settings and keymap (the form remembers its last values there)."""
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


def record(journal: Journal, debate_id: str, title: str, day: int, **kwargs) -> None:
    """A recorded EVINCE debate (tests/helpers/sample_debate) under another title and day."""
    events = sample_events(debate_id, **kwargs)
    first = events[0]
    assert isinstance(first, DebateStarted)
    events[0] = dataclasses.replace(first, title=title, at=first.at + day * 86400)
    for event in events:
        journal.record(event)


def home_with_twins(tmp_path: Path, registry) -> SymposiumApp:
    app = make_app(tmp_path, registry)
    record(app.journal, "twin0001aaaa", TWINS[0], 0)
    record(app.journal, "twin0002bbbb", TWINS[1], 1)
    return app


def exported(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "exports").glob("*")) if (tmp_path / "exports").exists() else []


def cell(table: DataTable, row: int, column: str) -> str:
    return str(table.get_cell_at(table.get_cell_coordinate(table.ordered_rows[row].key, column))).strip()


# -- item 3: Home after a search -------------------------------------------------------------------


async def test_typing_after_a_search_searches_again_and_commands_stay_quiet(tmp_path: Path, registry) -> None:
    """The issue's walk: search, then a second word and Enter. Typed on the results it exported
    a JSON file (j), opened New debate (n) and started the demo (d); here it is a new search."""
    app = home_with_twins(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await pilot.press("slash", *"dark urine", "enter")
        search, hits = home.query_one("#search", Input), home.query_one("#hits", DataTable)
        assert hits.display and hits.row_count > 0
        assert app.focused is search, "the search box keeps the focus after a search"
        await pilot.press("down")  # into the results, on purpose
        assert app.focused is hits
        await pilot.press(*"jaundice", "enter")
        await pilot.pause()
        assert app.screen is home, f"a typed word opened {type(app.screen).__name__}"
        assert search.value == "jaundice" and app.focused is search, "the letters typed on the results are a new search"
        assert exported(tmp_path) == [], "a typed letter exported a file"
        assert len(Queries(app.journal).debates()) == 2, "a typed letter started (or deleted) a debate"


async def test_delete_asks_with_cancel_focused_and_names_the_debate_under_the_cursor(tmp_path: Path, registry) -> None:
    app = home_with_twins(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await pilot.press("slash", *"urine", "enter")  # both debates' turns say it
        await pilot.press("escape")  # from the search box back to Home's table…
        await pilot.press("down")  # …and onto twin 1 (the older debate)
        assert home.selected() == "twin0001aaaa"
        await pilot.press("delete")
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert isinstance(app.focused, Button) and app.focused.id == "no" and str(app.focused.label) == "Cancel"
        assert "twin0001aaaa" in dialog.question and "cannot be undone" in dialog.question
        await pilot.press("enter")  # an Enter meant for something else: Cancel
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen) and len(Queries(app.journal).debates()) == 2

        home.query_one("#search", Input).focus()
        await pilot.press("down")  # into the results…
        hits = home.query_one("#hits", DataTable)
        for _ in range(hits.row_count):  # …onto a hit of twin 2, while Home's table stays on twin 1
            if str(hits.coordinate_to_cell_key(hits.cursor_coordinate).row_key.value).startswith("twin0002bbbb"):
                break
            await pilot.press("down")
        assert home.selected() == "twin0002bbbb", "the keys act on the hit the user sees highlighted"
        await pilot.press("delete")
        assert "twin0002bbbb" in app.screen.question  # type: ignore[attr-defined]
        await pilot.click("#yes")
        await pilot.pause()
        assert [d["id"] for d in Queries(app.journal).debates()] == ["twin0001aaaa"]
        assert not any(str(k.value).startswith("twin0002bbbb") for k in hits.rows), "a hit of the deleted debate is left"


# -- item 4: New debate's focus ------------------------------------------------------------------


async def test_new_debate_opens_on_its_first_field_and_enter_starts_nothing(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen), f"n, Enter opened {type(form).__name__}"
        assert not any(isinstance(s, DebateScreen) for s in app.screen_stack)
        assert isinstance(app.focused, TextArea) and app.focused.id == "field-case"
        assert Queries(app.journal).debates() == []


async def test_switching_protocol_puts_the_focus_on_its_first_field(tmp_path: Path, registry) -> None:
    """After a switch the focus was nowhere: typed text was lost and a "?" in it opened Help."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        form.query_one("#protocol", Select).value = "socrasynth"
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.focused, TextArea) and app.focused.id == "field-subject"
        await pilot.press(*"Who decides?")
        assert not isinstance(app.screen, HelpScreen), "a '?' typed in the subject opened Help"
        assert form.query_one("#field-subject", TextArea).text == "Who decides?"


# -- item 6: the case and the labels file ----------------------------------------------------------


async def test_case_starts_empty_with_the_demo_case_as_placeholder_and_ctrl_a_selects_all(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        case = app.screen.query_one("#field-case", TextArea)
        assert case.text == "" and DEMO_CASE in str(case.placeholder)
        await pilot.press(*"jaundice")
        assert case.text == "jaundice", "typing was added to the demo's case"
        await pilot.press("ctrl+a", *"fever")
        assert case.text == "fever", "ctrl+a did not select all"


async def test_demo_form_still_shows_the_demo_case(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry, start="demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.screen.query_one("#field-case", TextArea).text == DEMO_CASE


async def test_d_on_home_opens_the_demo_form_and_starts_nothing(tmp_path: Path, registry) -> None:
    """A debate starts only by Start (item 4): ``d`` started the demo at once, so a "d" in a word
    typed on Home did too."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "enter")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen) and form.query_one("#field-case", TextArea).text.strip() == DEMO_CASE
        assert not any(isinstance(s, DebateScreen) for s in app.screen_stack)
        assert Queries(app.journal).debates() == []


async def test_a_labels_file_typed_in_the_form_is_the_class_set(tmp_path: Path, registry) -> None:
    """The hint "or a file (one label per line…)" under Class labels did nothing in the app; the
    path is read as ``--labels FILE`` is (the definition's own parser), and a bad one is named."""
    labels = tmp_path / "labels.txt"
    labels.write_text("# my ward's differential\nHepatitis A\nGallstones\nPancreatitis\n", encoding="utf-8")
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", *"yellow skin")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        path_field = form.query_one("#field-labels-file", Input)
        path_field.value = str(tmp_path / "missing.txt")
        await pilot.press("ctrl+s")
        await pilot.pause()
        problem = str(form.query_one("#problem").render())
        assert app.screen is form and "labels" in problem and "missing.txt" in problem, problem
        path_field.value = str(labels)
        config = form.spec.configure(form.collect(), app.registry)
        assert config.labels is not None and list(config.labels.labels) == ["Hepatitis A", "Gallstones", "Pancreatitis"]


# -- item 10: lists whose debates can be told apart ------------------------------------------------


async def test_search_results_show_when_and_where_the_titles_differ(tmp_path: Path, registry) -> None:
    app = home_with_twins(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        home = app.screen
        await pilot.press("slash", *"urine", "enter")
        hits = home.query_one("#hits", DataTable)
        shown = {cell(hits, i, "debate") for i in range(hits.row_count)}
        assert len(shown) == 2, f"two debates' hits read the same: {shown}"
        assert any("dark urine" in s for s in shown) and any("joint pain" in s for s in shown), shown
        started = {cell(hits, i, "started") for i in range(hits.row_count)}
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", s) for s in started) and len(started) == 2, started


async def test_compare_picker_shows_dates_and_where_the_titles_differ(tmp_path: Path, registry) -> None:
    app = home_with_twins(tmp_path, registry)
    record(app.journal, "twin0003cccc", TWINS[0] + " (again)", 2)
    async with app.run_test(size=SIZE) as pilot:
        app.open_review("twin0003cccc")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("m")
        picker = app.screen
        assert isinstance(picker, ChooseDebate)
        options = picker.query_one(OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert len(shown) == 2 and len(set(shown)) == 2
        assert "joint pain" in shown[0] and "dark urine" in shown[1], shown
        assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d  ", s) for s in shown), shown


# -- item 11: what a dialog, Help and the command line show at 80 columns ----------------------------


def screen_lines(app: SymposiumApp) -> list[str]:
    """What the terminal shows, row by row: the SVG screenshot's text pieces put at their columns."""
    import html

    rows: dict[float, list[tuple[float, str]]] = {}
    width = None
    for x, y, length, text in re.findall(r'<text [^>]*?x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>(.*?)</text>',
                                          app.export_screenshot()):
        piece = html.unescape(text).replace("\xa0", " ")
        width = width or float(length) / max(len(piece), 1)
        rows.setdefault(float(y), []).append((float(x), piece))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, piece in sorted(rows[y]):
            line = line.ljust(round(x / (width or 1))) + piece
        lines.append(line.rstrip())
    return lines


def dialog_text(app: SymposiumApp) -> str:
    """The words inside the modal's frame (between its ``█`` sides), rows joined."""
    inside = [line.split("█")[1] for line in screen_lines(app) if line.count("█") >= 2]
    return " ".join(" ".join(inside).split())


def screen_text(app: SymposiumApp) -> str:
    return " ".join(" ".join(screen_lines(app)).split())


async def test_help_says_how_to_close_it(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "esc, q, ? or f1 closes this help." in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_help_names_its_closing_key_as_remapped(tmp_path: Path, registry) -> None:
    config = tmp_path / "config"  # SYMPOSIUM_CONFIG_DIR (the autouse fixture above)
    config.mkdir(parents=True, exist_ok=True)
    (config / "keymap.toml").write_text('"help.close" = "ctrl+w"\n', encoding="utf-8")
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert "^w closes this help." in screen_text(app)
        await pilot.press("ctrl+w")
        assert isinstance(app.screen, HomeScreen)


async def test_a_long_question_is_shown_whole_at_80_columns(tmp_path: Path, registry) -> None:
    app = home_with_twins(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("delete")
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        await pilot.pause()
        assert " ".join(dialog.question.split()) in dialog_text(app), dialog_text(app)


LONG = ("Contentiousness κ from the next round (0 agreeable, 1 combative): the change reaches the agents "
        "at their next turn, after the step under way")
DIALOGS = {
    "confirm": lambda: ConfirmDialog(LONG, yes="Set"),
    "number": lambda: NumberDialog(LONG, 0.8),
    "interject": lambda: InterjectDialog([("all (agent-a · smollm2-135m, agent-b · gemma3-270m)", "all")]),
    "verdict": VerdictDialog,
    "person": lambda: PersonDialog(LONG),
}


@pytest.mark.parametrize("name", list(DIALOGS))
async def test_every_dialog_shows_its_words_whole_at_80_columns(name: str, tmp_path: Path, registry) -> None:
    """Questions were cut at the dialog's edge ("…reaches the agents at their next tu")."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        dialog = DIALOGS[name]()
        await app.push_screen(dialog)
        await pilot.pause()
        shown = dialog_text(app)
        for label in dialog.query(Label):
            words = " ".join(str(label.render()).split())
            assert words in shown, f"{words!r} is not shown whole in: {shown!r}"


def test_history_keeps_each_debate_to_two_lines_at_80_columns(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    with Journal(db) as journal:
        record(journal, "twin0001aaaa", TWINS[0], 0)
        record(journal, "twin0002bbbb", TWINS[1], 1)
    out = symposium("history", db=db, env={"COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [i for i, line in enumerate(lines) if line.lstrip().startswith("twin000")]
    assert len(rows) == 2 and rows[1] - rows[0] == 2, "a debate takes more than two lines:\n" + out.stdout
    titles = [lines[i].split("   ")[-1].strip() for i in rows]
    assert titles[0] != titles[1] and "joint pain" in titles[0] and "dark urine" in titles[1], titles


def test_show_keeps_every_metrics_header_whole_at_80_columns(tmp_path: Path) -> None:
    """An EVINCE debate journals round, phase, κ and every metric of the snapshot; at 80 columns
    Rich's one table cut each header to its first letter."""
    db = tmp_path / "journal.db"
    names = [f.name for f in dataclasses.fields(MetricsSnapshot)] + ["crit", "crit_a", "crit_b", "entropy_mixture"]
    events = [dataclasses.replace(e, metrics={n: 0.123456 for n in names}) if isinstance(e, MetricsComputed) else e
              for e in sample_events("wide0001abcd", rounds=3)]
    with Journal(db) as journal:
        for event in events:
            journal.record(event)
    out = symposium("show", "wide0001", db=db, env={"COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    metrics = out.stdout.split("Metrics per round", 1)[1].split("Judgements", 1)[0]
    headers = {word for line in metrics.splitlines() for word in line.split()}
    missing = [n for n in ["round", "phase", "κ", *names] if n not in headers]
    assert not missing, f"headers cut at 80 columns: {missing}\n{metrics}"
    assert "0.123" in metrics and "…" not in metrics
    assert max(len(line.rstrip()) for line in out.stdout.splitlines()) <= 80


@pytest.mark.usefixtures("steady_cursor")
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_home_after_a_search_snapshot(snap_compare, tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch,
                                       size: tuple[int, int]) -> None:
    """Home after a search (the results, the focus still in the box), at the two sizes people
    use it at (see tests/app/__snapshots__/test_tui_keys)."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    app = home_with_twins(tmp_path, registry)

    async def search(pilot: Pilot) -> None:
        await pilot.press("slash", *"urine", "enter")
        await pilot.pause()

    assert snap_compare(app, run_before=search, terminal_size=size)


@pytest.mark.usefixtures("steady_cursor")
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_new_debate_snapshot(snap_compare, tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch,
                             size: tuple[int, int]) -> None:
    app = make_app(tmp_path, registry)

    async def form(pilot: Pilot) -> None:
        await pilot.press("n")
        await pilot.pause()

    assert snap_compare(app, run_before=form, terminal_size=size)
