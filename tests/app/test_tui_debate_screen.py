"""The Debate and Review screens as people read them.

* 5: once the protocol has finished, a moderator key is refused with the reason; nothing is
  sent or journalled (and the κ that did take effect is in the journal: test_round_numbers.py).
* 7: the outcome panel says in words what the debate concluded.
* 8: each protocol shows the side panels its definition declares: SocraSynth its agenda, Γ per
  round and the judges' tables, never EVINCE's distributions or WD/MI/JSD.
* 9: a round's phase in the live table is the journal's (not "paused"); Review's status names
  the round it shows once, in the same numbering.
* 10: Compare names both debates in a legend above the curves.

The SocraSynth run through the New-debate form uses scripted models (as test_tui_moderation.py);
the other screens read recorded debates (tests/helpers/sample_*.py) from a real journal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, OptionList, Static

from protocols.core.events import AwaitingModerator, DebateStarted, MetricsComputed, ModeratorActed, PhaseChanged
from protocols.socrasynth import DEFINITION as SOCRASYNTH
from store.journal import Journal
from store.queries import Queries
from tests.app.replayed import fed, replay
from tests.helpers.debate_from_form import start_from_form, until
from tests.helpers.pilot import SIZE, make_app, wait_for
from tests.helpers.sample_debate import record_sample, sample_events
from tests.helpers.sample_socrasynth import record_socrasynth, sample_socrasynth
from tests.helpers.samples import FIRST
from tests.helpers.settled_apart import settled_apart
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import NumberDialog
from tui.app.screens.review import ChooseDebate, ReviewScreen
from tui.app.widgets.distribution import Distributions
from tui.app.widgets.metrics import MetricsTable
from tui.app.widgets.panels import AgendaPanel, JudgeTables


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def _headings(screen: DebateScreen) -> list[str]:
    return [str(h.render()) for h in screen.query("#side .heading")]


def _columns(screen: DebateScreen) -> list[str]:
    return [c.label.plain for c in screen.query_one(MetricsTable).columns.values()]


@pytest.mark.usefixtures("scripted_models")
async def test_socrasynth_run_from_the_form_shows_its_own_panels(tmp_path: Path, registry) -> None:
    """Item 8, live: no "Distributions: no distributions yet", no WD/MI/JSD; the agenda agreed,
    Γ and Δ per round in the journal's numbering, each judge's scores per subtopic."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await start_from_form(pilot, app, "socrasynth", FIRST["socrasynth"][1].moderated)
        await until(pilot, app, lambda: not debate.running, "the debate to end", running=None)
        await pilot.pause()
        assert not debate.query(Distributions) and "Distributions" not in _headings(debate)
        assert _headings(debate) == [p.title for p in SOCRASYNTH.panels] + ["Analysis"]
        assert _columns(debate) == ["round", "Γ/10", "Δ", "phase"]  # "agreed" only with the agreement judge
        agenda = debate.query_one(AgendaPanel)
        assert agenda.items and agenda.step == "agreed"
        stored = Queries(app.journal).debate(debate.debate_id or "")
        assert stored is not None
        assert [(r["round"], r["phase"]) for r in debate.view.metrics_rows] == [(r["round"], r["phase"]) for r in stored["metrics"]]
        tables = debate.query_one(JudgeTables)
        assert set(tables.scores["judge-1"]) == {"a_argues", "b_argues"}
        assert "the judges" in _text(debate, "#outcome").lower()
    app.journal.close()


async def test_a_recorded_socrasynth_debate_shows_the_judges_tables_and_the_outcome_in_words(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=(160, 48)) as pilot:
        debate = await replay(app, pilot, sample_socrasynth())
        tables = _text(debate, "#judge-tables")
        assert "1. Patient safety" in tables and "judge-2" in tables and "total" in tables
        assert "the judges' majority: agent-a" in tables
        assert [p for p in debate.query_one(AgendaPanel).items] == sample_socrasynth()[5].parsed["agreed"]  # type: ignore[union-attr]
        outcome = _text(debate, "#outcome")
        assert "The judges found Agent A (arguing for the subject) the stronger side after 3 rounds" in outcome
        assert "Let AI rank the queue" in outcome
        app.save_screenshot(str(tmp_path / "socrasynth-160x48.svg"))


async def test_evince_keeps_its_panels_and_other_protocols_show_none_of_them(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        evince = await replay(app, pilot, sample_events(rounds=2))
        assert _headings(evince)[:3] == ["Distributions", "Metrics", "Judgements"]
        assert _columns(evince) == ["round", "phase", "κ", "WD", "MI", "CRIT", "JSD"]
        assert "consensus" in evince.query_one(Distributions).latest
        app.pop_screen()
        d3 = await replay(app, pilot, [DebateStarted("d3run", "d3", "Which answer is better?", "q", {}, ())])
        assert _headings(d3) == ["Judgements", "Analysis"] and not d3.query(Distributions) and not d3.query(MetricsTable)


async def test_a_moderator_key_after_the_debate_finished_is_refused_with_the_reason(tmp_path: Path, registry) -> None:
    """Item 5: the protocol has finished while the screen still works (the last analysis, the
    models closing: ``running`` is still true). κ and Interject used to open their dialogs and
    confirm ("contentiousness 0.80 from the next round") for a debate that was over."""
    events = sample_events(rounds=1, finished=True)
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await replay(app, pilot, events[:-1], held=True)  # EVINCE honours κ
        assert debate.addressable == ("agent-a", "agent-b")
        await pilot.press("k")
        await pilot.pause()
        assert isinstance(app.screen, NumberDialog)  # while it runs, κ is offered …
        await pilot.press("escape")
        await fed(pilot, debate, events[-1])  # … the protocol finishes
        assert debate.running  # the screen still works; the protocol is done
        for key in ("k", "i", "s"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is debate, f"{key} opened {app.screen}"
        said = [n.message for n in app._notifications]
        assert "The debate has finished: contentiousness can no longer change anything." in said
        assert "The debate has finished: an interjection can no longer reach anyone." in said
        assert not any("from the next round" in m or m.startswith("Sent.") for m in said)
        assert debate.channel.poll() is None  # nothing sent to the protocol
        assert not {k for k, b in debate.active_bindings.items() if b.binding.show} & set("ikspx")
    app.journal.close()


async def test_a_rounds_phase_in_the_live_table_is_the_journals_not_the_pause(tmp_path: Path, registry) -> None:
    """Item 9: paused and resumed inside round 0, the live table said "paused" for round 0 where
    the export says "exploratory"; after the resume the status line kept saying "paused"."""
    events = sample_events(rounds=2)
    metrics_0 = next(i for i, e in enumerate(events) if isinstance(e, MetricsComputed) and e.round == 0)
    did = events[0].debate_id
    paused = [*events[:metrics_0], ModeratorActed(did, "pause", {}, 0), AwaitingModerator(did, "paused"),
              ModeratorActed(did, "resume", {}, 0), *events[metrics_0:]]
    with Journal(tmp_path / "j.db") as journal:  # apart from the app's, where the screen journals them
        for event in paused:
            journal.record(event)
        exported = Queries(journal).debate(did)
    assert exported is not None
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        debate = await replay(app, pilot, paused[:metrics_0 + 4], held=True)  # up to round 0's metrics
        assert "paused" not in debate.view.status_line.split(" · ")
        for event in paused[metrics_0 + 4:]:
            await fed(pilot, debate, event)
        rows = debate.view.metrics_rows
    assert [(r["round"], r["phase"]) for r in rows] == [(r["round"], r["phase"]) for r in exported["metrics"]]
    assert rows[0]["phase"] == "exploratory"


async def test_review_names_the_round_it_shows_once_in_one_numbering(tmp_path: Path, registry) -> None:
    """Item 9: Review read "up to round 1 of 2 · … · round 0" (rounds 0–2: three rounds). EVINCE
    journals a phase only when it changes: here round 1 goes on in round 0's phase, so no
    ``PhaseChanged`` names round 1 and the status must follow the turns."""
    app = make_app(tmp_path, registry)
    for event in sample_events("sample0001ab", rounds=3):
        if not (isinstance(event, PhaseChanged) and event.round == 1):
            app.journal.record(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.press("left", "left")
        await pilot.pause()
        bits = review.view.status_line.split(" · ")
        assert "up to round 1 (rounds 0–2)" in bits and "round 1" in bits and "round 0" not in bits
        await pilot.press("end")
        await pilot.pause()
        assert "whole debate (rounds 0–2)" in review.view.status_line.split(" · ")
    app.journal.close()


async def test_review_of_a_one_round_debate_names_that_round_not_a_range(tmp_path: Path, registry) -> None:
    """A debate of one round is "round 0", never "rounds 0–0"."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.pause()
        bits = review.view.status_line.split(" · ")
        assert "whole debate (round 0)" in bits, bits
        assert not any("0–0" in bit for bit in bits), bits
    app.journal.close()


async def test_compare_says_which_curves_are_which_debate(tmp_path: Path, registry) -> None:
    """Item 10's legend: after picking a debate to compare, both are named (id, date, title)."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=3)
    record_sample(app.journal, "other0002cd", rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        review = ReviewScreen(Queries(app.journal).debate("sample0001ab") or {}, app.workspace)
        await app.push_screen(review)
        await pilot.pause()
        assert not review.query_one("#compare-legend").display  # nothing compared: no legend
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, ChooseDebate)
        app.screen.query_one(OptionList).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is review, 10, "the Review screen again")
        await pilot.pause()
        legend = review.query_one("#compare-legend", Static)
        shown = str(legend.render())
        assert legend.display
        assert "solid: sample · " in shown and "dotted: other0 · " in shown and "Jaundice or hepatitis?" in shown
        assert "2026-09-2" in shown  # the dates tell same-titled debates apart
        app.save_screenshot(str(tmp_path / "compare.svg"))
    app.journal.close()


async def test_review_of_a_socrasynth_debate_replays_its_panels(tmp_path: Path, registry) -> None:
    """Review empties and refills SocraSynth's own panels as it steps (no Distributions to clear)."""
    app = make_app(tmp_path, registry)
    record_socrasynth(app.journal)
    async with app.run_test(size=SIZE) as pilot:
        review = ReviewScreen(Queries(app.journal).debate("socra0001ab") or {}, app.workspace)
        await app.push_screen(review)
        await pilot.pause()
        assert review.query_one(JudgeTables).winner == "agent-a"
        await pilot.press("left", "left", "left")  # the debate as it stood after round 2 (no judges' tables yet)
        await pilot.pause()
        assert review.query_one(JudgeTables).scores == {} and len(review.view.metrics_rows) == 3
        assert review.view.finished is None and "judges" not in _text(review, "#outcome")
    app.journal.close()



async def test_homes_outcome_column_says_a_debate_settled_without_agreement(tmp_path: Path, registry) -> None:
    """Item 7: Home showed "Dengue" (the combined distribution's top label) for a debate that
    settled without agreement; the column now says what the debate concluded."""
    await settled_apart(tmp_path / "journal.db")
    record_socrasynth(Journal(tmp_path / "journal.db"))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#debates", DataTable)
        assert str(table.get_cell("apart0001", "outcome")) == "no agreement (leaning Dengue)"
        assert str(table.get_cell("socra0001ab", "outcome")) == "Agent A stronger"
    app.journal.close()


@pytest.mark.timeout(180)  # 32 s on a busy two-core machine
async def test_a_live_debate_whose_last_analysis_still_runs_refuses_kappa(tmp_path: Path, registry, monkeypatch) -> None:
    """Item 5 on the live path: EVINCE from the form, with an analyzer model that is slow to write
    (scripted), so the screen still runs its last analysis after the protocol finished. κ and
    Interject are refused with the reason; the journal holds no moderator event."""
    from textual.widgets import Input, Select, TextArea

    from backends.registry import ModelEntry
    from protocols.core.roles import SIDE_PANEL
    from tests.helpers.debate_from_form import answer
    from tests.helpers.scripted_backends import ScriptedBackend
    from tui.app.screens.new_debate import NewDebateScreen

    def create(entry: ModelEntry, progress) -> ScriptedBackend:
        slow = entry.id == "gemma3-270m"  # the analyzer's model only
        backend = ScriptedBackend(entry.id, [], delay=0.3 if slow else 0.0, chunk=4 if slow else 64, answer=answer)
        backend.entry = entry  # type: ignore[attr-defined]
        return backend

    monkeypatch.setattr("backends.lifecycle.create_backend", create)
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(NewDebateScreen(app.workspace, "evince"))
        form = app.screen
        for name, value in {"max_rounds": "1", "turn_tokens": "40", "crit_tokens": "40"}.items():
            form.query_one(f"#field-{name}", Input).value = value
        form.query_one("#field-case", TextArea).text = "Fever, chills and a rash after a trip."
        for role in ("agent-a", "agent-b", "judge"):
            form.query_one(f"#field-{role}", Select).value = "smollm2-135m"
        form.query_one(f"#field-{SIDE_PANEL}", Select).value = "gemma3-270m"
        await pilot.press("ctrl+s")
        debate = next(s for s in app.screen_stack if isinstance(s, DebateScreen))
        await wait_for(pilot, lambda: debate.finished is not None, 120, "the protocol to finish")
        assert debate.running, "the last analysis ended before the keys could be pressed"
        await pilot.press("k")
        await pilot.press("i")
        await pilot.pause()
        assert app.screen is debate
        said = [n.message for n in app._notifications]
        assert "The debate has finished: contentiousness can no longer change anything." in said
        assert "The debate has finished: an interjection can no longer reach anyone." in said
        debate_id = debate.debate_id
        await wait_for(pilot, lambda: not debate.running, 120, "the last analysis")
    stored = Queries(app.journal).debate(debate_id or "")
    app.journal.close()
    assert stored is not None and stored["moderator_events"] == []
