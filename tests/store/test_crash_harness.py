"""Headless debates killed (SIGKILL or SIGINT) right after shown turns, then resumed to their end.

Kills are timed from each debate's own output (``tests/helpers/crash_harness.py``), so they
land after finished turns and mid-reply, not at start-up. Most run in the fast mode
(scripted backends at a model's pace); one runs on the bundled SmolLM2 model.
``SYMPOSIUM_KILLS=N`` runs more fast kills; ``benchmarks/crash.py`` runs hundreds.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from tests.helpers.crash_harness import Trial, run_trials

KILLS = int(os.environ.get("SYMPOSIUM_KILLS", "4"))


def _assert_survived(t: Trial) -> None:
    assert t.debate_id is not None, t  # killed only after turns were shown: the debate exists
    assert t.integrity == "ok", t
    assert t.rows_valid, t  # every stored turn whole, with its distribution and model-call row
    assert t.turns_before >= t.printed_before >= 1, t  # nothing shown is missing
    if t.status_before not in ("finished", "stopped"):
        assert t.resumed and t.kept and t.turns_after >= t.turns_before, t


def test_fast_kills_after_shown_turns_lose_nothing(tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(10**6)
    print(f"crash harness seed {seed}")
    for t in run_trials(tmp_path / "journal.db", KILLS, seed=seed, mode="fast", jobs=2):
        _assert_survived(t)


def test_a_kill_on_the_bundled_model_loses_nothing(tmp_path: Path) -> None:
    [t] = run_trials(tmp_path / "journal.db", 1, seed=11, mode="model")
    _assert_survived(t)
