"""The Textual app driven by Textual's Pilot: real screens, a real journal, the real models."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select, Static, TextArea

from protocols.core.outcome import outcome_in_words
from store import export_check
from store.journal import Journal
from store.queries import Queries
from tests.app.replayed import replay
from tests.helpers.pilot import SIZE, make_app, wait_for
from tests.helpers.sample_debate import record_sample, sample_events
from tests.helpers.steady import steady_cursor  # noqa: F401 - a fixture
from tui.app.screens.debate import DebateScreen
from tui.app.screens.home import HomeScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.screens.review import ReviewScreen
from tui.app.widgets.transcript import Transcript


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))


async def test_home_lists_searches_exports_and_deletes(tmp_path: Path, registry) -> None:
    from tests.helpers.save_dialog import save

    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab")
    record_sample(app.journal, "sample0002cd")
    async with app.run_test(size=SIZE) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        table = home.query_one("#debates", DataTable)
        assert table.row_count == 2
        await pilot.press("slash")
        await pilot.press(*"dark urine")
        await pilot.press("enter")
        hits = home.query_one("#hits", DataTable)
        assert hits.display and hits.row_count > 0
        table.focus()
        await save(pilot, "e", redacted=False)
        exported = tmp_path / "exports" / f"symposium-{home.selected()}.md"
        assert exported.exists() and stat.S_IMODE(exported.stat().st_mode) == 0o600
        await save(pilot, "j", redacted=False)  # the JSON export carries the seal's chain: it verifies without the journal
        exported_json = json.loads((tmp_path / "exports" / f"symposium-{home.selected()}.json").read_text())
        assert export_check.verify_export(exported_json).ok and exported_json["seal"]["chain"]
        await pilot.press("delete")
        await pilot.press("enter")  # "Cancel" is focused: a destructive question opens on it
        await pilot.pause()
        assert table.row_count == 2
        await pilot.press("delete")
        await pilot.click("#yes")
        await pilot.pause()
        assert table.row_count == 1
        assert len(Queries(app.journal).debates()) == 1


async def test_review_steps_through_rounds(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        transcript = review.query_one(Transcript)
        assert len(transcript.turns) == 6 and len(review.view.metrics_rows) == 3
        await pilot.press("left")  # the debate as it stood after its last round…
        await pilot.press("left")  # …and after round 1
        assert len(review.query_one(Transcript).turns) == 4 and len(review.view.metrics_rows) == 2
        await pilot.press("end")
        assert len(review.view.metrics_rows) == 3


async def test_new_debate_form_explains_bad_values(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        await pilot.press("ctrl+s")
        assert "Case: required" in str(form.query_one("#problem", Static).render())  # empty at first
        await pilot.press(*"yellow skin, dark urine")  # the case has the focus
        form.query_one("#field-max_rounds", Input).value = "lots"
        await pilot.press("ctrl+s")
        assert "Rounds at most: 'lots' is not a whole number" in str(form.query_one("#problem", Static).render())
        form.query_one("#field-max_rounds", Input).value = "2"
        form.query_one("#field-agent-b", Select).value = "gemma2-9b-it"
        await pilot.press("ctrl+s")
        assert "symposium models pull gemma2-9b-it" in str(form.query_one("#problem", Static).render())
        assert isinstance(app.screen, NewDebateScreen)  # nothing started


@pytest.mark.model
async def test_pilot_drives_an_evince_debate_with_moderator_actions(tmp_path: Path, registry) -> None:
    """From the New-debate form to the final distribution, with the bundled models, pausing,
    interjecting and changing contentiousness on the way; then the journal is checked."""
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        form.query_one("#field-case", TextArea).text = "Symptoms: itching, yellowish skin, dark urine, abdominal pain."
        form.query_one("#field-agent-b", Select).value = "smollm2-135m"
        form.query_one("#field-max_rounds", Input).value = "1"  # the opening and one refutation round
        for eps in ("eps_wd", "eps_mi", "eps_jsd", "eps_crit"):
            form.query_one(f"#field-{eps}", Input).value = "0"
        form.query_one("#field-turn_tokens", Input).value = "70"
        form.query_one("#field-crit_tokens", Input).value = "90"
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        await pilot.press("p")  # heard at the next checkpoint: before agent B's first turn
        await wait_for(pilot, lambda: debate.paused, 300, "the pause to take effect")
        assert not debate.view.metrics_rows
        await pilot.press("i")
        await pilot.press(*"Consider hepatitis.")
        await pilot.press("enter")
        await pilot.press("k")
        await pilot.press(*"0.4")  # the current value is selected on focus: typing replaces it
        await pilot.press("enter")
        await pilot.press("p")
        await wait_for(pilot, lambda: debate.finished is not None, 600, "the end of the debate")
        assert debate.finished is not None
        outcome = debate.finished.outcome
        shown = str(debate.query_one("#outcome", Static).render())
        await pilot.press("v")
        await pilot.press(*"plausible")
        await pilot.click("#accept")
        await pilot.pause()
        debate_id = debate.debate_id
    assert debate_id is not None
    with Journal(tmp_path / "journal.db") as journal:
        stored = Queries(journal).debate(debate_id)
    assert stored is not None and stored["status"] == "finished"
    kinds = [m["kind"] for m in stored["moderator_events"]]
    # κ was set while paused between round 0's two turns: it takes effect (is journalled) when
    # round 1 begins, after the resume
    assert kinds == ["pause", "interject", "resume", "set_contentiousness", "verdict"]
    assert stored["moderator_events"][1]["payload"]["text"] == "Consider hepatitis."
    assert stored["moderator_events"][3]["payload"]["value"] == pytest.approx(0.4)
    assert stored["moderator_events"][3]["round"] == 1
    round1 = [t for t in stored["turns"] if t["round"] == 1 and t["kind"] == "refutation"]
    assert round1 and all(t["kappa"] == pytest.approx(0.4) for t in round1)
    # The outcome follows from the journalled turns, whichever way SmolLM2's 70-token turns went:
    # a consensus exactly when some turn predicted, and then P_f is the CRIT-weighted mixture of
    # each agent's last stated distribution (weights: its last CRIT score), shown on screen.
    assert stored["outcome"] == outcome
    debate_turns = [t for t in stored["turns"] if t["kind"] in ("opening", "refutation")]
    last = {t["role"]: t["distribution"] for t in debate_turns if t["distribution"]}
    if not last:
        assert "final_distribution" not in outcome and outcome["note"] == "no agent gave a usable prediction"
        assert "No agent gave a usable prediction" in shown
        return
    assert "note" not in outcome
    scores = {j["target"]: j["score"] for j in stored["judgements"] if j["kind"] == "crit"}  # the last per agent
    weights = outcome["weights"]
    assert set(weights) == set(last)
    for role, score in scores.items():
        if score is not None and role in weights:
            assert weights[role] == pytest.approx(score)
    total = sum(weights.values())
    labels = {label for dist in last.values() for label in dist}
    expected = {label: sum(weights[r] * last[r].get(label, 0.0) for r in last) / total for label in labels}
    assert outcome["final_distribution"] == pytest.approx(expected)
    best = max(expected.values())  # a top label: with a tie (a clean-clone run had two labels equal), any of the tied ones
    assert expected[outcome["top"]] == pytest.approx(best)
    said = outcome_in_words(stored)  # the outcome in words, naming P_f's top label
    assert said.conclusion in shown and outcome["top"] in said.conclusion


async def test_ctrl_c_asks_before_quitting(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await replay(app, pilot, sample_events(finished=False), held=True)  # still running
        await pilot.press("ctrl+c")
        assert app.is_running and app.screen.__class__.__name__ == "ConfirmDialog"
        await pilot.press("escape")
        assert app.is_running


@pytest.mark.usefixtures("steady_cursor")
def test_screens_snapshots(snap_compare, tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """Home, New debate and a Debate screen mid-run (recorded events played as a run that goes on,
    so identical everywhere)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab")
    assert snap_compare(app, terminal_size=SIZE)

    form_app = make_app(tmp_path / "form", registry)
    assert snap_compare(form_app, press=["n"], terminal_size=SIZE)

    mid_app = make_app(tmp_path / "mid", registry)

    async def mid_run(pilot: Pilot) -> None:
        await replay(mid_app, pilot, sample_events(rounds=2, finished=False), held=True)

    assert snap_compare(mid_app, run_before=mid_run, terminal_size=SIZE)


@pytest.mark.model
async def test_ctrl_c_during_a_debate_leaves_it_resumable(tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        form = app.screen
        form.query_one("#field-case", TextArea).text = "Itching, yellowish skin, dark urine."
        form.query_one("#field-agent-b", Select).value = "smollm2-135m"
        form.query_one("#field-turn_tokens", Input).value = "200"
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        transcript = debate.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.current is not None and bool(transcript.current.raw), 300, "a turn to stream")
        await pilot.press("ctrl+c")
        await pilot.press("enter")  # "Quit" is focused
        await pilot.pause()
        debate_id = debate.debate_id
    assert debate_id is not None
    with Journal(tmp_path / "journal.db") as journal:
        stored = Queries(journal).debate(debate_id)
    assert stored is not None and stored["status"] == "interrupted"
    assert "resumable" in stored["stop_reason"]


async def test_help_is_shown_again_not_rebuilt_and_follows_the_keys(tmp_path: Path, registry) -> None:
    """Help is kept per set of keys: the same screen comes back for the same keys,
    and another screen's keys get their own Help, listing that screen's keys."""
    from tui.app.screens.help import HelpScreen

    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = []
        for _ in range(2):
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            shown.append(app.screen)
            await pilot.press("escape")
            await pilot.pause()
        assert shown[0] is shown[1]
        await replay(app, pilot, sample_events(rounds=1, finished=True))
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen is not shown[0]
        assert "debate.copy" in {b.id for b in app.screen.bindings}
        assert "debate.copy" not in {b.id for b in shown[0].bindings}
        assert "debate.interject" not in {b.id for b in app.screen.bindings}  # a debate that has ended takes no commands
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DebateScreen)
