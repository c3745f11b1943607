"""The app as people meet it, round two: nothing typed is lost, every sentence true. The real
app under Pilot with a real journal; recorded or scripted debates (no model is loaded)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from textual.widgets import Collapsible, DataTable, Input, Label, Select, Static, TextArea

from protocols.core.events import DebateStarted, JudgementMade, ModeratorActed, PhaseChanged
from protocols.core.params import params_of
from protocols.core.roles import SIDE_PANEL
from store.queries import Queries
from tests.app.replayed import replay
from tests.helpers.form import fill_examples
from tests.helpers.hostile import hostile_models
from tests.helpers.pilot import make_app, wait_for
from tests.helpers.sample_debate import record_sample, sample_events
from tests.helpers.sample_socrasynth import sample_socrasynth
from tests.helpers.scripted_backends import answering
from tui import settings
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog, EditDialog, NumberDialog
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.screens.review import ReviewScreen
from tui.app.widgets.debate_view import StatusLine
from tui.app.widgets.panels import AgendaPanel, JudgeTables
from tui.protocol_catalog import SPECS

SIZE = (80, 24)
CASE = "Crushing chest pain for an hour, sweating, pain radiating to the left arm"


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


# -- the form's draft ----------------------------------------------------------------------------


async def test_escape_on_a_typed_form_asks_and_the_draft_comes_back_but_never_reaches_disk(tmp_path: Path, registry) -> None:
    """A case typed, Escape: the form asks (Stay keeps it open, as typed); left, the next ``n``
    opens the form with the case and the title typed, and no file holds the case."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", *CASE)
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmDialog), "a typed case was left without a question"
        await pilot.press("escape")  # the dialog's Escape: stay
        assert app.screen is form and form.query_one("#field-case", TextArea).text == CASE

        title = form.query_one("#field-title", Input)
        title.value = "Chest pain, bed 4"
        form.query_one("#field-case", TextArea).focus()
        await pilot.press("escape")
        await pilot.click("#yes")
        assert isinstance(app.screen, HomeScreen)

        await pilot.press("n")
        again = app.screen
        assert isinstance(again, NewDebateScreen) and again is not form
        assert again.query_one("#field-case", TextArea).text == CASE, "the draft was lost"
        assert again.query_one("#field-title", Input).value == "Chest pain, bed 4"
        await pilot.press("escape")  # unchanged since it opened: no question, the draft stays
        assert isinstance(app.screen, HomeScreen)
        assert app.workspace.draft is not None

    on_disk = [p for p in tmp_path.rglob("*") if p.is_file() and "journal" not in p.name]
    for path in on_disk:
        assert b"radiating" not in path.read_bytes(), f"the draft reached {path}"
    assert "radiating" not in str(settings.load())


async def test_an_untouched_form_leaves_at_once_and_a_started_debate_clears_the_draft(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("backends.lifecycle.create_backend", hostile_models(["{}"] * 40))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen), "an untouched form asked before it was left"
        assert app.workspace.draft is None
        await pilot.press("n", *"a case")
        await pilot.press("escape")
        await pilot.click("#yes")
        assert app.workspace.draft is not None
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        assert app.workspace.draft is None, "the debate started and its case stayed as a draft"
        await wait_for(pilot, lambda: not debate.running, 60, "the scripted debate to end")


# -- SocraSynth's agenda, edited in the app ----------------------------------------------------------


async def agenda_offered(pilot, app, debate: DebateScreen) -> EditDialog:
    """The agenda dialog, once it is shown with its focus on "Go on as proposed"."""
    await wait_for(pilot, lambda: isinstance(app.screen, EditDialog) or not debate.running, 60, "the agenda to be offered")
    dialog = app.screen
    assert isinstance(dialog, EditDialog), "the agreed agenda was never offered for editing"
    await wait_for(pilot, lambda: app.focused is not None, 10, "the dialog's focus")
    assert app.focused is dialog.query_one("#keep"), "a stray key could change the agenda"
    return dialog


async def start_socrasynth(pilot, app, **values: str) -> DebateScreen:
    """SocraSynth from its form, on scripted models (``answering``), one short round."""
    await app.push_screen(NewDebateScreen(app.workspace, "socrasynth"))
    form = app.screen
    assert isinstance(form, NewDebateScreen)
    fill_examples(form)
    for name, value in {"max_rounds": "1", "subtopics": "2", "turn_tokens": "32", "crit_tokens": "32", **values}.items():
        widget = form.query_one(f"#field-{name}")
        if isinstance(widget, Select):
            widget.value = value
        else:
            form.query_one(f"#field-{name}", Input).value = value
    form.query_one(f"#field-{SIDE_PANEL}", Select).value = "none"
    await pilot.press("ctrl+s")
    started = [s for s in app.screen_stack if isinstance(s, DebateScreen)]  # the agenda may already be offered, on top
    assert started, form.query_one("#problem").render()
    return started[-1]


async def test_the_moderator_edits_socrasynths_agreed_agenda_in_the_app(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents agree their agenda; the app offers it for editing before round 1. An edit that
    is not an agenda is refused in words; the moderator's agenda is the one debated, journalled
    as their edit and shown in the Agenda panel."""
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.0, chunk=64))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        debate = await start_socrasynth(pilot, app)
        dialog = await agenda_offered(pilot, app, debate)
        text = dialog.query_one("#text", TextArea)
        assert ":" in text.text and text.text.strip(), text.text
        text.text = "\n".join(f"Point {n}: more than ten" for n in range(11))
        await pilot.click("#use")
        assert app.screen is dialog, "an edit that is not an agenda was taken"
        assert "1 to 10 subtopics, found 11" in str(dialog.query_one("#problem", Label).render())
        text.text = "Bus lanes: their cost to small towns\nAir quality: health effects of traffic"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not debate.running, 120, "the debate to end")
        stored = Queries(app.journal).debate(debate.debate_id or "")
        assert stored is not None
        edits = [m for m in stored["moderator_events"] if m["kind"] == "edit_agenda"]
        assert [[i["title"] for i in e["payload"]["after"]] for e in edits] == [["Bus lanes", "Air quality"]]
        assert [i["title"] for i in debate.query_one(AgendaPanel).items] == ["Bus lanes", "Air quality"]
        opening = next(t for t in stored["turns"] if t["kind"] == "opening")
        assert "Bus lanes" in (opening["request"] or "")


async def test_going_on_with_the_agreed_agenda_journals_no_edit(tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.0, chunk=64))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await start_socrasynth(pilot, app)
        await agenda_offered(pilot, app, debate)
        await pilot.press("enter")  # on "Go on as proposed"
        await wait_for(pilot, lambda: not debate.running, 120, "the debate to end")
        stored = Queries(app.journal).debate(debate.debate_id or "")
        assert stored is not None and stored["status"] == "finished"
        assert not [m for m in stored["moderator_events"] if m["kind"] == "edit_agenda"]


# -- contentiousness confirmed only where it takes effect ------------------------------------------------


async def test_contentiousness_set_in_the_last_round_is_said_to_have_come_too_late(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round cap 1, κ set during round 1: there is no next round. The app neither promises
    "from the next round" nor journals it as set; the transcript says it came too late."""
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.02, chunk=8))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, "evince"))
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        fill_examples(form)
        for name, value in {"max_rounds": "1", "turn_tokens": "40", "crit_tokens": "40"}.items():
            form.query_one(f"#field-{name}", Input).value = value
        form.query_one(f"#field-{SIDE_PANEL}", Select).value = "none"
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        await wait_for(pilot, lambda: debate.view.round == 1 or not debate.running, 60, "round 1")
        assert debate.running, "the debate ended before round 1 could be moderated"
        await pilot.press("k")
        dialog = app.screen
        assert isinstance(dialog, NumberDialog)
        number = dialog.query_one("#number", Input)
        await wait_for(pilot, lambda: app.focused is number, 10, "the number's focus")
        number.value = "0.3"
        await pilot.press("enter")
        assert app.screen is debate
        await wait_for(pilot, lambda: not debate.running, 120, "the debate to end")
        said = [n.message for n in app._notifications]
        notes = [str(n.render()) for n in debate.query(".note.moderator")]
        stored = Queries(app.journal).debate(debate.debate_id or "")
    assert not [m for m in said if "from the next round" in m], said
    assert not [m for m in said if "took effect" in m], said
    assert "✋ the debate ended before your contentiousness could take effect" in notes, (notes, stored)
    assert stored is not None
    assert not [m for m in stored["moderator_events"] if m["kind"] == "set_contentiousness"]


# -- search finds the moderator's words -------------------------------------------------------------------


async def test_home_search_finds_an_interjection(tmp_path: Path, registry) -> None:
    """The walk: an interjection "Consider acute myocardial infarction…" was not found by
    searching "infarction" (only the turns were indexed)."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=2)
    app.journal.record(ModeratorActed("sample0001ab", "interject",
                                      {"to": "agent-a", "text": "Consider acute myocardial infarction first."}, 1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"infarction", "enter")
        hits = app.screen.query_one("#hits", DataTable)
        assert hits.display and hits.row_count == 1, "the moderator's words were not found"
        row = [str(c) for c in hits.get_row_at(0)]
        assert row[3] == "moderator" and "[infarction]" in row[4], row


# -- status lines that keep up -------------------------------------------------------------------------


async def _running_evince(pilot, app, **values: str) -> DebateScreen:
    await app.push_screen(NewDebateScreen(app.workspace, "evince"))
    form = app.screen
    assert isinstance(form, NewDebateScreen)
    fill_examples(form)
    for name, value in {"max_rounds": "3", "turn_tokens": "40", "crit_tokens": "40", **values}.items():
        form.query_one(f"#field-{name}", Input).value = value
    form.query_one(f"#field-{SIDE_PANEL}", Select).value = "none"
    await pilot.press("ctrl+s")
    debate = app.screen
    assert isinstance(debate, DebateScreen)
    await wait_for(pilot, lambda: bool(debate.view.transcript.turns), 60, "the first turn")
    return debate


def _home_status(app, debate_id: str) -> str:
    table = app.screen.query_one("#debates", DataTable)
    return str(table.get_cell(debate_id, "status"))


async def test_home_and_the_header_keep_up_with_a_debate_left_resumed_and_paused(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """Left while running, Home shows the debate's new status without F5; resumed, the header
    leaves "loading …" once the models are loaded; paused, it says "paused" once."""
    # a cut-off reply takes a moment to stop (a model's thread ends its token first): Home is
    # back before the debate is marked interrupted
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.05, chunk=4, stop_s=1.0))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        debate = await _running_evince(pilot, app)
        debate_id = debate.debate_id
        assert debate_id is not None
        await pilot.press("escape")
        await pilot.click("#yes")  # Leave
        assert isinstance(app.screen, HomeScreen)
        await wait_for(pilot, lambda: _home_status(app, debate_id) != "running", 15, "Home to show the debate's new status")
        assert _home_status(app, debate_id) == "interrupted"

        await pilot.press("r")  # the cursor is on it: the newest
        resumed = app.screen
        assert isinstance(resumed, DebateScreen)
        await wait_for(pilot, lambda: not resumed.view.preparing, 30, "the models to load")
        await wait_for(pilot, lambda: resumed.view.transcript.turns[-1].has_class("streaming") or not resumed.running,
                       30, "a turn being written")
        assert "loading" not in resumed.view.status_line, resumed.view.status_line

        await pilot.press("p")
        await wait_for(pilot, lambda: resumed.paused, 30, "the pause")
        await pilot.pause()
        assert resumed.view.status_line.split(" · ").count("paused") == 1, resumed.view.status_line
        resumed.workers.cancel_all()


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
async def test_the_header_keeps_the_debate_id_whatever_the_width(tmp_path: Path, registry, size: tuple[int, int]) -> None:
    events = sample_events("sample0001ab", rounds=2)
    first = events[0]
    assert isinstance(first, DebateStarted)
    events[0] = dataclasses.replace(first, title="Fever, rash and joint pain after a trip to the coast in the rainy season "
                                                 "with a history of travel vaccines and a recent insect bite",
                                    config={**first.config, "profile": "small"})
    app = make_app(tmp_path, registry)
    async with app.run_test(size=size) as pilot:
        debate = await replay(app, pilot, events)
        status = debate.query_one(StatusLine)
        shown, width = str(status.render()), status.size.width
    assert shown.endswith("sample0001ab") and len(shown) <= width, (shown, width)
    assert shown.lower().startswith("evince · fever, rash") and "finished" in shown, shown
    assert "done" not in shown.split(" · "), "the state repeats what the phase says"


# -- the New-debate form -------------------------------------------------------------------------------

#: What a help line or a label of the form must not hold: a command-line flag, the paper's
#: section numbers, a formula's symbol as a name, a code name.
JARGON = re.compile(r"--[a-z]|\bTable \d|\bFigure \d|\bseed 00\d|§|\bP_f\b|\beq\. ?\d|^[κΔδεΓ]|\b[a-z]+_[a-z_]+\b")


@pytest.mark.parametrize("protocol", list(SPECS))
async def test_the_form_shows_the_few_fields_first_and_folds_the_settings_in_plain_words(
        tmp_path: Path, registry, protocol: str) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, protocol))
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        advanced = form.query_one("#advanced", Collapsible)
        assert advanced.collapsed, "the protocol's settings are not folded"
        spec = SPECS[protocol]
        first = {f.name for f in spec.first_fields}
        assert first <= {f.name for f in spec.fields} and len(first) <= 10, first
        for name in first:
            assert not any(a is advanced for a in form.query_one(f"#field-{name}").ancestors), f"{name} is folded"
        for step, fields in spec.groups:
            for field in fields:
                assert any(a is advanced for a in form.query_one(f"#field-{field.name}").ancestors), f"{field.name} not folded"
            assert step and fields
        params = {p.name for p in params_of(spec.config_cls)}
        assert params - first - {f.name for _, fs in spec.groups for f in fs} <= \
            {r.enables for r in spec.definition.roles if r.enables}, "a parameter is offered nowhere"
        said = [str(w.render()) for w in form.query("Label, .help, .step")]
        bad = [s for s in said if JARGON.search(s)]
        assert not bad, bad


async def test_an_error_names_the_field_as_labelled_and_shows_it(tmp_path: Path, registry) -> None:
    """"eps_jsd: input should be less than or equal to 1" beside a field labelled otherwise."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", *"fever and a rash")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        form.query_one("#field-eps_jsd", Input).value = "2"
        await pilot.press("ctrl+s")
        await pilot.pause()
        problem = str(form.query_one("#problem", Static).render())
        assert problem == "Settled: divergence change (JSD): at most 1", problem
        assert "eps_jsd" not in problem
        assert not form.query_one("#advanced", Collapsible).collapsed, "the field at fault stays folded away"
        assert app.focused is form.query_one("#field-eps_jsd"), "the field at fault is not shown"
        assert isinstance(app.screen, NewDebateScreen)  # nothing started


async def test_socrasynths_comparison_with_one_answer_is_one_option_and_runs_when_chosen(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form offered both "Q&A baseline's model [same as agent a]" and "Compare with a one-answer
    Q&A: default no", and the baseline did not run. One field now: a model, or none."""
    monkeypatch.setattr("backends.lifecycle.create_backend", answering(delay=0.0, chunk=64))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, "socrasynth"))
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        assert not form.query("#field-qa_baseline"), "the comparison is offered in two places"
        choice = form.query_one("#field-qa", Select)
        assert choice.value == "" and "none" in str(dict((v, p) for p, v in choice._options)[""])
        app.pop_screen()
        await pilot.pause()
        debate = await start_socrasynth(pilot, app, qa="gemma3-270m")
        await agenda_offered(pilot, app, debate)
        await pilot.press("enter")
        await wait_for(pilot, lambda: not debate.running, 120, "the debate to end")
        stored = Queries(app.journal).debate(debate.debate_id or "")
    assert stored is not None and stored["status"] == "finished"
    assert [t["model_id"] for t in stored["turns"] if t["kind"] == "qa"] == ["gemma3-270m"], "the comparison did not run"
    assert stored["outcome"].get("qa"), "the judges did not compare"


# -- words ---------------------------------------------------------------------------------------------


async def test_the_app_says_a_rejected_verdict_apart_from_its_note_and_home_shows_it(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        debate = await replay(app, pilot, sample_events("sample0001ab", rounds=2))
        await pilot.press("v")
        dialog = app.screen
        note = dialog.query_one("#note", Input)
        note.value = "Dengue is implausible here"
        await pilot.click("#reject")
        await pilot.pause()
        notes = [str(n.render()) for n in debate.query(".note.moderator")]
        assert "✋ The moderator rejected the outcome: “Dengue is implausible here”" in notes, notes
        await pilot.press("escape")
        await pilot.pause()
        table = app.screen.query_one("#debates", DataTable)
        outcome = str(table.get_cell("sample0001ab", "outcome"))
        assert outcome.startswith("rejected: "), outcome


async def test_a_judges_half_no_judge_scored_has_no_total(tmp_path: Path, registry) -> None:
    """Every cell "—" and yet "total 0.00 0.00": a total of nothing is no total."""
    events = [dataclasses.replace(e, score=None) if (  # judge-2's replies could not be read when B argued
        isinstance(e, JudgementMade) and e.judge_role == "judge-2" and isinstance(e.reasons, dict)
        and e.reasons.get("alignment") == "b_argues") else e for e in sample_socrasynth("socra0001ab")]
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        debate = await replay(app, pilot, events)
        shown = str(debate.query_one(JudgeTables).render())
    silent = shown.split("judge-2", 1)[1].split("agent-b argues", 1)[1]
    assert re.search(r"total\s+—\s+—", silent) and not re.search(r"total\s+0\.00\s+0\.00", shown), shown


# -- what stays on a narrow terminal ------------------------------------------------------------------

#: Titles as people write them: long, and alike up to their last words.
LONG_TITLES = ("Fever, rash and joint pain after a trip to the coast in the rainy season, bed 4",
               "Fever, rash and joint pain after a trip to the coast in the rainy season, bed 7",
               "Is a verbal agreement to sell land binding when the deed was never signed?")


def _titled(debate_id: str, title: str, **kwargs) -> list:
    events = sample_events(debate_id, **kwargs)
    first = events[0]
    assert isinstance(first, DebateStarted)
    events[0] = dataclasses.replace(first, title=title)
    return events


async def test_home_at_80_columns_shows_which_debate_how_it_stands_and_what_it_concluded(tmp_path: Path, registry) -> None:
    """At 80×24 each row shows, on screen without scrolling, the debate's title (clipped so
    that alike titles still differ), its status and its outcome: what a person looks for first.
    When, how and by whom come after them (a scroll to the right)."""
    app = make_app(tmp_path, registry)
    for i, title in enumerate(LONG_TITLES):
        for event in _titled(f"narrow000{i}ab", title, rounds=2, finished=i != 2):
            app.journal.record(event)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#debates", DataTable)
        assert table.row_count == 3
        header = table.render_line(0).text
        assert all(column in header for column in ("title", "status", "outcome")), header
        for y, row in enumerate(table.ordered_rows, start=1):
            line = table.render_line(y).text
            assert len(line) <= table.size.width
            for column in ("title", "status", "outcome"):
                cell = str(table.get_cell(row.key, column)).strip()
                assert cell in line, (column, cell, line)
                assert cell or (column == "outcome" and row.key.value == "narrow0002ab"), (column, line)  # not yet concluded
        titles = {str(table.get_cell(row.key, "title")) for row in table.ordered_rows}
        assert len(titles) == 3 and all(len(t) >= 20 for t in titles), titles


async def test_the_debate_header_at_80_columns_names_the_debate_and_where_it_is(tmp_path: Path, registry) -> None:
    """At 80×24 the header keeps the debate's title (clipped) and where it is: in a review the
    part shown and the screen's state; in a live debate the phase, round and state. What gives
    way is what a person needs last (the defaults profile, κ, the protocol)."""
    title = LONG_TITLES[0]
    app = make_app(tmp_path, registry)
    for event in _titled("narrow0001ab", title, rounds=3):
        app.journal.record(event)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.pause()
        status = review.query_one(StatusLine)
        shown, width = str(status.render()), status.size.width
        assert len(shown) <= width, (shown, width)
        assert shown.startswith(title[:24]), shown
        assert "whole debate (rounds 0–2)" in shown.split(" · ") and "replay" in shown.split(" · "), shown

        await pilot.press("escape")
        live = [e for e in _titled("narrow0002cd", title, rounds=3, finished=False)
                if not (getattr(e, "round", 0) == 2 and not isinstance(e, PhaseChanged))]
        debate = await replay(app, pilot, live, held=True)
        status = debate.query_one(StatusLine)
        await pilot.pause()
        shown, width = str(status.render()), status.size.width
        bits = shown.split(" · ")
        assert len(shown) <= width, (shown, width)
        assert bits[0].startswith(title[:24]) or bits[1].startswith(title[:24]), shown
        assert debate.view.phase in bits and "round 2" in bits and "running" in bits, shown
        debate.run.feed(None)
