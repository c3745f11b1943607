"""The app's debates load and close their models through :mod:`backends.lifecycle`: each model
closed exactly once when the debate ends, when the app quits mid-debate or while a model is
still loading, and the analysis that the debate's end starts runs before its model is closed.

Scripted models (tests/helpers/scripted_backends.py) stand in for the bundled ones: they count their
closes and, like a real backend, refuse calls once closed, which is what the timing here turns
on; a real model's load and close are covered in tests/backends/test_lifecycle.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from backends.factory import OnProgress
from backends.registry import ModelEntry
from store.queries import Queries
from tests.helpers.pilot import SIZE, make_app, wait_for
from tests.helpers.scripted_backends import ScriptedBackend
from tui.app.screens.debate import DebateScreen
from tui.app.screens.dialogs import ConfirmDialog
from tui.app.widgets.transcript import Transcript
from tui.protocol_catalog import SPECS

EVINCE = SPECS["evince"]

REPLY = json.dumps({"predictions": [{"label": "Hepatitis B", "probability": 0.6, "argument": "jaundice"},
                                    {"label": "Malaria", "probability": 0.4, "argument": "fever"}],
                    "arguments": ["yellow skin and dark urine point to the liver"]})
POINTS = json.dumps({"points": ["both agents weigh the liver"]})


def scripted(built: list[ScriptedBackend], replies: list[str], delay: float):
    def create(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        backend = ScriptedBackend(entry.id, list(replies), delay=delay, chunk=16)
        backend.entry = entry
        built.append(backend)
        return backend

    return create


async def test_a_finished_debate_closes_each_model_once_after_its_last_analysis(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[ScriptedBackend] = []
    monkeypatch.setattr("backends.lifecycle.create_backend", scripted(built, [REPLY, POINTS] * 40, delay=0.002))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        app.start_debate(EVINCE, {**EVINCE.defaults(), "max_rounds": 1, "side-panel": "gemma3-270m"})
        await pilot.pause()
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        await wait_for(pilot, lambda: not debate.running, 60, "the scripted debate to end")
        assert sorted(b.model_id for b in built) == ["gemma3-270m", "smollm2-135m"]  # the analyzer shares agent B's
        assert [b.closes for b in built] == [1, 1]  # closed when the debate ended, not when the app does
        stored = Queries(app.journal).debate(debate.debate_id)
        assert stored is not None and stored["status"] == "finished"
        analyses = [j for j in stored["judgements"] if j["kind"] == "analysis"]
        assert analyses and analyses[-1]["round"] is None  # the last one, started by the end, ran to its end
        assert "analysis failed" not in str(debate.query_one("#analysis").render())


async def test_quitting_mid_debate_closes_each_model_once(tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[ScriptedBackend] = []
    monkeypatch.setattr("backends.lifecycle.create_backend", scripted(built, [REPLY] * 40, delay=0.05))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        app.start_debate(EVINCE, EVINCE.defaults())
        await pilot.pause()
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        transcript = debate.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.current is not None and bool(transcript.current.raw), 30, "a turn to stream")
        assert [b.closes for b in built] == [0, 0]
        await pilot.press("ctrl+c")
        await pilot.press("enter")  # "Quit" is focused
        await pilot.pause()
    assert [b.closes for b in built] == [1, 1]
    stored = Queries(app.journal).debate(debate.debate_id)
    assert stored is not None and stored["status"] == "interrupted"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
async def test_sigterm_and_sighup_quit_mid_debate_without_asking_and_close_each_model_once(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals) -> None:
    """A real signal, delivered to this process while the app runs a debate under Pilot: the app
    quits as a confirmed Ctrl-C does but without its dialog, with exit status 128 + the signal,
    the debate ``interrupted`` and each model closed once; the signal's disposition is put back."""
    built: list[ScriptedBackend] = []
    monkeypatch.setattr("backends.lifecycle.create_backend", scripted(built, [REPLY] * 40, delay=0.05))
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        app.start_debate(EVINCE, EVINCE.defaults())
        await pilot.pause()
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        transcript = debate.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.current is not None and bool(transcript.current.raw), 30, "a turn to stream")
        # Sent only to a handler the app installed: at its default disposition the signal would
        # end the test run itself.
        assert signal.getsignal(sig) not in (signal.SIG_DFL, signal.SIG_IGN, None), f"the app does not handle {sig.name}"
        os.kill(os.getpid(), sig)
        for _ in range(200):
            await asyncio.sleep(0.05)
            assert not isinstance(app.screen, ConfirmDialog), f"the app asked on {sig.name}"
            if app.return_code is not None:
                break
    assert app.return_code == 128 + sig
    assert [b.closes for b in built] == [1, 1]
    stored = Queries(app.journal).debate(debate.debate_id)
    assert stored is not None and stored["status"] == "interrupted"
    assert signal.getsignal(sig) == signal.SIG_DFL


async def test_quitting_while_a_model_loads_closes_it_once_it_has_loaded(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """A load cannot be stopped half-way (a vLLM engine starts for minutes): the app quits at
    once, and the model is closed as soon as its load ends, not left running."""
    started, release = threading.Event(), threading.Event()
    built: list[ScriptedBackend] = []
    make = scripted(built, [REPLY] * 40, delay=0.0)

    def slow(entry: ModelEntry, progress: OnProgress) -> ScriptedBackend:
        started.set()
        release.wait(60)
        return make(entry, progress)

    monkeypatch.setattr("backends.lifecycle.create_backend", slow)
    app = make_app(tmp_path, registry)
    async with app.run_test(size=SIZE) as pilot:
        app.start_debate(EVINCE, EVINCE.defaults())
        await asyncio.to_thread(started.wait, 30)
        await pilot.press("ctrl+c")
        await pilot.press("enter")  # "Quit" is focused
        await pilot.pause()
    assert built == []  # still loading when the app was gone
    release.set()
    for _ in range(200):
        if built and built[0].closes:
            break
        await asyncio.sleep(0.05)
    assert [(b.model_id, b.closes) for b in built] == [("smollm2-135m", 1)]  # closed once; nothing more loaded
