"""Headless debates killed (SIGKILL or SIGINT) at random moments, then resumed to their end."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.crash_harness import run_trials

KILLS = int(os.environ.get("SYMPOSIUM_KILLS", "3"))


def test_random_kills_never_lose_a_finished_turn(tmp_path: Path) -> None:
    trials = run_trials(tmp_path / "journal.db", KILLS, seed=11, max_delay=12.0)
    for t in trials:
        assert t.integrity == "ok", t
        assert t.rows_valid, t
        # the journal records a turn before it is printed: nothing shown is missing
        assert t.turns_before >= t.printed_before, t
        if t.debate_id is not None and t.status_before not in ("finished", "stopped"):
            # killed mid-debate: resume finishes it, keeping every turn stored before the kill
            assert t.resumed and t.kept and t.turns_after >= t.turns_before, t
