"""Debates killed right after shown turns, each kill proven to have taken, then resumed to their end.

Kills are timed from each debate's own progress (``tests/helpers/crash_harness.py``), so they
land after finished turns and mid-reply, not at start-up, and never after the last turn here
(so every one must cut a debate off). Each must have *taken*: SIGKILL's process died of it
(returncode -9); SIGINT's ran its interrupt path (exit 130) and left the debate ``interrupted``;
SIGTERM's and SIGHUP's ran the same path and exited 128 + the signal (143, 129), with the debate
``interrupted`` and no process of its group left behind; the app's Ctrl-C was asked about,
confirmed, and the app quit with the debate ``interrupted``; SIGTERM and SIGHUP made the app
quit without asking, with the debate ``interrupted`` and exit 143 or 129.
A signal the process ignored fails here (the children are started with SIGINT at its default
and in their own process group, as a terminal starts a job: ``tests/helpers/killable.py``).

Most kills run in the fast mode (backends at a model's pace that answer from the prompt); EVINCE
gets one of each signal, and every other protocol (SocraSynth, the decision conference,
deliberation, humanloop, D3) two of SIGKILL, SIGINT and SIGTERM (rotating), each started and
resumed through its spec as the app and the CLI do. One SIGINT, one SIGTERM and one SIGHUP run ``symposium run
evince`` on the bundled SmolLM2 model, one SIGTERM ``symposium run socrasynth`` on it, and one
Ctrl-C, one SIGTERM and one SIGHUP run the Textual app itself on it under a pseudo-terminal.
``SYMPOSIUM_KILLS=N`` runs more fast kills; ``benchmarks/crash.py`` runs hundreds.
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

from tests.helpers.crash_harness import CTRL_C, DEBATE_TURNS, FAST_TURNS, PROTOCOLS, QUIT_QUESTION, Trial, run_trials

KILLS = int(os.environ.get("SYMPOSIUM_KILLS", "4"))
#: Kill no later than after the second-to-last turn, so that each kill finds a debate running.
BEFORE_THE_END = DEBATE_TURNS - 2


def _assert_killed_and_survived(t: Trial) -> None:
    assert t.debate_id is not None, t  # killed only after turns were shown: the debate exists
    assert t.outcome == "kill" and t.cut_off, f"the {t.sig} did not take (returncode {t.returncode}): {t}"
    assert t.integrity == "ok", t
    assert t.rows_valid, t  # every stored turn whole, with its distribution and model-call row
    assert t.sealed, t.seal_problem  # the hash chain holds after the kill and after the resume
    assert t.turns_before >= t.printed_before >= 1, t  # nothing shown is missing
    assert t.status_before == ("running" if t.sig == "SIGKILL" else "interrupted"), t
    assert t.sig == "SIGKILL" or not t.left_behind, f"a process of the {t.sig}ed one's group outlived it: {t}"
    assert t.resumed and t.kept and t.turns_after >= t.turns_before, t


@pytest.mark.timeout(240)  # a process killed and resumed many times: 40 s on a busy two-core machine
def test_fast_kills_after_shown_turns_take_and_lose_nothing(tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(10**6)
    print(f"crash harness seed {seed}")
    every = ["SIGINT", "SIGKILL", "SIGTERM", "SIGHUP"]
    trials = run_trials(tmp_path / "journal.db", max(KILLS, len(every)), seed=seed, mode="fast", jobs=2,
                        signals=every, last_kill_after=BEFORE_THE_END)
    for t in trials:
        _assert_killed_and_survived(t)
    assert {t.sig for t in trials} == set(every)


OTHERS = [p for p in PROTOCOLS if p != "evince"]
HEADLESS = ["SIGKILL", "SIGINT", "SIGTERM"]


@pytest.mark.parametrize("protocol", OTHERS)
def test_fast_kills_of_every_protocol_take_and_lose_nothing(tmp_path: Path, protocol: str) -> None:
    """Two kills side by side, each after 1…(its fewest turns less two) shown turns of the
    protocol's debate (the signals rotate over the protocols, so SIGKILL, SIGINT and SIGTERM each
    hit several): each takes, the journal keeps every shown turn whole (its model-call row, the
    person's turns with none), the debate is ``interrupted`` (SIGKILL: ``running``), and resuming
    it through its spec finishes it without changing a stored turn."""
    seed = random.SystemRandom().randrange(10**6)
    print(f"crash harness seed {seed}")
    i = OTHERS.index(protocol)
    two = [HEADLESS[i % 3], HEADLESS[(i + 1) % 3]]
    trials = run_trials(tmp_path / "journal.db", max(KILLS // 2, 2), seed=seed, mode="fast", jobs=2, signals=two,
                        last_kill_after=FAST_TURNS[protocol] - 2, protocol=protocol)
    for t in trials:
        assert t.protocol == protocol
        _assert_killed_and_survived(t)


def test_children_get_sigint_and_sighup_at_their_defaults_even_from_a_nohup_harness() -> None:
    """A harness started by ``nohup … &`` (SIGINT and SIGHUP ignored, and kept so across exec)
    still starts its debates as a terminal starts a job, or its SIGINT and SIGHUP kills change
    nothing (they did: a benchmark under ``nohup`` recorded 36 SIGHUPs as ``no effect``, exit 0)."""
    import subprocess
    import sys

    from tests.helpers.killable import spawn

    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGHUP)}
    try:
        proc = spawn([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
                      "signal.getsignal(signal.SIGHUP) == signal.SIG_DFL)"], stdout=subprocess.PIPE, text=True)
        out, _ = proc.communicate(timeout=60)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    assert out.split() == ["True", "True"], out  # SIGINT: Python's KeyboardInterrupt; SIGHUP: the default


@pytest.mark.model
def test_a_sigint_on_the_bundled_model_takes_and_loses_nothing(tmp_path: Path) -> None:
    [t] = run_trials(tmp_path / "journal.db", 1, seed=11, mode="model", signals=["SIGINT"], last_kill_after=2)
    _assert_killed_and_survived(t)
    assert t.returncode == 130  # `symposium run`'s interrupt path, not a death by the signal


@pytest.mark.model
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_sigterm_and_sighup_on_the_bundled_model_take_and_the_debate_resumes(tmp_path: Path, sig: signal.Signals) -> None:
    """``symposium run evince`` on SmolLM2, sent the signal after a journalled turn: it exits
    128 + the signal (its interrupt path ran, it did not just die), the debate is ``interrupted``
    with every stored turn whole, no process of its group remains, and ``symposium resume``
    finishes it without changing a stored turn."""
    [t] = run_trials(tmp_path / "journal.db", 1, seed=13, mode="model", signals=[sig.name], last_kill_after=2)
    _assert_killed_and_survived(t)
    assert t.returncode == 128 + sig


@pytest.mark.model
def test_a_sigterm_on_socrasynth_on_the_bundled_model_takes_and_the_debate_resumes(tmp_path: Path) -> None:
    """``symposium run socrasynth`` on SmolLM2 (small settings), sent SIGTERM after a shown turn:
    exit 143, the debate ``interrupted`` with every stored turn whole, and ``symposium resume``
    finishes it by replaying its journal without changing a stored turn."""
    [t] = run_trials(tmp_path / "journal.db", 1, seed=15, mode="model", signals=["SIGTERM"], last_kill_after=2,
                     protocol="socrasynth")
    _assert_killed_and_survived(t)
    assert t.returncode == 128 + signal.SIGTERM


@pytest.mark.model
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_sigterm_and_sighup_quit_the_app_without_asking_and_the_debate_resumes(tmp_path: Path, sig: signal.Signals) -> None:
    """The Textual app in its own process on a pseudo-terminal, sent the signal mid-debate: no
    "Quit?" dialog (a signal is not a keypress), exit 128 + the signal, the debate
    ``interrupted``, no process of its group left, and the app resumes it to its end."""
    [t] = run_trials(tmp_path / "journal.db", 1, seed=14, mode="app", signals=[sig.name], last_kill_after=2)
    assert not t.asked, f"the app asked {QUIT_QUESTION!r} on a {sig.name}: {t}"
    _assert_killed_and_survived(t)
    assert t.returncode == 128 + sig


@pytest.mark.model
def test_ctrl_c_in_the_app_on_a_terminal_is_confirmed_and_the_debate_resumes(tmp_path: Path) -> None:
    """The Textual app in its own process on a pseudo-terminal: the Ctrl-C byte, the app's
    "Quit?" dialog, Enter; the app exits 0, the debate is ``interrupted``, and the app resumes
    it to its end."""
    [t] = run_trials(tmp_path / "journal.db", 1, seed=12, mode="app", signals=[CTRL_C], last_kill_after=2)
    assert t.confirmed, t  # the dialog was shown and answered
    _assert_killed_and_survived(t)
