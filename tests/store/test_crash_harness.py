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

Most kills run in the fast mode (scripted backends at a model's pace); one SIGINT, one SIGTERM
and one SIGHUP run ``symposium run`` on the bundled SmolLM2 model, and one Ctrl-C, one SIGTERM
and one SIGHUP run the Textual app itself on it under a pseudo-terminal. ``SYMPOSIUM_KILLS=N`` runs more fast kills; ``benchmarks/crash.py``
runs hundreds.
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

from tests.helpers.crash_harness import CTRL_C, DEBATE_TURNS, QUIT_QUESTION, Trial, run_trials

KILLS = int(os.environ.get("SYMPOSIUM_KILLS", "4"))
#: Kill no later than after the second-to-last turn, so that each kill finds a debate running.
BEFORE_THE_END = DEBATE_TURNS - 2


def _assert_killed_and_survived(t: Trial) -> None:
    assert t.debate_id is not None, t  # killed only after turns were shown: the debate exists
    assert t.outcome == "kill" and t.cut_off, f"the {t.sig} did not take (returncode {t.returncode}): {t}"
    assert t.integrity == "ok", t
    assert t.rows_valid, t  # every stored turn whole, with its distribution and model-call row
    assert t.turns_before >= t.printed_before >= 1, t  # nothing shown is missing
    assert t.status_before == ("running" if t.sig == "SIGKILL" else "interrupted"), t
    assert t.sig == "SIGKILL" or not t.left_behind, f"a process of the {t.sig}ed one's group outlived it: {t}"
    assert t.resumed and t.kept and t.turns_after >= t.turns_before, t


def test_fast_kills_after_shown_turns_take_and_lose_nothing(tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(10**6)
    print(f"crash harness seed {seed}")
    every = ["SIGINT", "SIGKILL", "SIGTERM", "SIGHUP"]
    trials = run_trials(tmp_path / "journal.db", max(KILLS, len(every)), seed=seed, mode="fast", jobs=2,
                        signals=every, last_kill_after=BEFORE_THE_END)
    for t in trials:
        _assert_killed_and_survived(t)
    assert {t.sig for t in trials} == set(every)


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
