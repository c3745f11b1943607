"""Snapshots of the app's screens per state: recorded events and scripted models only,
so what is drawn is identical on every machine. Update after a deliberate change with
``pytest tests/app/test_tui_snapshots.py --snapshot-update`` and look at the SVGs before committing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.app.replayed import replay
from tests.helpers.hostile import hostile_models
from tests.helpers.pilot import SIZE, make_app, wait_for
from tests.helpers.sample_debate import record_sample, sample_events
from tests.helpers.sample_socrasynth import sample_socrasynth
from tests.helpers.steady import steady_cursor  # noqa: F401 - a fixture
from tui.app.screens.debate import DebateScreen
from tui.app.screens.new_debate import NewDebateScreen
from tui.app.widgets.debate_view import DebateView
from tui.protocol_catalog import SPECS

EVINCE = SPECS["evince"]


@pytest.fixture(autouse=True)
def _fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def test_help_over_home(snap_compare, tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", "/nonexistent/symposium-config")  # Help shows the path; never written here
    app = make_app(tmp_path, registry)
    assert snap_compare(app, press=["question_mark"], terminal_size=SIZE)


def test_debate_finished_on_an_80x24_terminal(snap_compare, tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)

    async def finished(pilot: Pilot) -> None:
        await replay(app, pilot, sample_events(rounds=2))

    assert snap_compare(app, run_before=finished, terminal_size=(80, 24))


def test_review_of_a_recorded_debate(snap_compare, tmp_path: Path, registry) -> None:
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=3)
    assert snap_compare(app, press=["o", "left"], terminal_size=SIZE)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_socrasynth_debate_shows_its_own_panels(snap_compare, tmp_path: Path, registry, size: tuple[int, int]) -> None:
    """The agenda, Γ per round and the judges' tables; no EVINCE panels."""
    app = make_app(tmp_path, registry)

    async def finished(pilot: Pilot) -> None:
        await replay(app, pilot, sample_socrasynth())

    assert snap_compare(app, run_before=finished, terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_review_up_to_a_round(snap_compare, tmp_path: Path, registry, size: tuple[int, int]) -> None:
    """Review names the round it shows once ("up to round 1 (rounds 0–2)")."""
    app = make_app(tmp_path, registry)
    record_sample(app.journal, "sample0001ab", rounds=3)
    assert snap_compare(app, press=["o", "left", "left"], terminal_size=size)


def test_home_with_no_debates_yet(snap_compare, tmp_path: Path, registry) -> None:
    assert snap_compare(make_app(tmp_path, registry), terminal_size=SIZE)


@pytest.mark.usefixtures("steady_cursor")
@pytest.mark.parametrize("protocol", ["socrasynth", "agreement", "deliberation", "humanloop", "d3"])  # EVINCE's: test_tui
def test_new_debate_form(snap_compare, tmp_path: Path, registry, protocol: str) -> None:
    app = make_app(tmp_path, registry)

    async def form(pilot: Pilot) -> None:
        await app.push_screen(NewDebateScreen(app.workspace, protocol))
        await pilot.pause()

    assert snap_compare(app, run_before=form, terminal_size=SIZE)


def test_debate_that_failed_to_start(snap_compare, tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("backends.lifecycle.create_backend",
                        hostile_models([], fail="model 'smollm2-135m': server at 127.0.0.1:8080 answered 503 [overloaded]"))
    app = make_app(tmp_path, registry)

    async def failed(pilot: Pilot) -> None:
        app.start_debate(EVINCE, EVINCE.defaults())
        # the failure is drawn once the model load has failed: under load later than any fixed pause
        await wait_for(pilot, lambda: isinstance(app.screen, DebateScreen) and not app.screen.running
                       and any(v.phase == "failed" for v in app.screen.query(DebateView)),
                       30, "the failed start to be shown")
        await pilot.pause()

    assert snap_compare(app, run_before=failed, terminal_size=SIZE)
