"""A process killed in the middle of a reply leaves a readable journal with every finished turn.

The victim is a real process running the real SmolLM2 model (tests/helpers/endless_debate.py),
started as a terminal starts a job (its own process group, SIGINT at its default disposition:
``tests/helpers/killable.py``), so that SIGINT reaches it however pytest itself was started.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.killable import send_to_group, spawn
from tests.helpers.paths import REPO


def run_until_mid_reply(db: Path, debate_id: str, turns_before_kill: int, *,
                        hold: bool = False) -> tuple[subprocess.Popen[str], int]:
    """Start the endless debate; return once turn ``turns_before_kill + 1`` is streaming. With
    ``hold`` the debate stays there, mid-reply, until it is killed (else a loaded machine can let
    the reply finish between the line and the kill); a SIGINT needs the loop running, so its test
    strikes a debate that goes on."""
    proc = spawn([sys.executable, "-m", "tests.helpers.endless_debate", str(db), debate_id, *(["hold"] if hold else [])],
                 cwd=REPO, stdin=subprocess.PIPE if hold else subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)
    finished = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        kind, _, number = line.strip().partition(" ")
        if kind == "finished":
            finished = int(number)
        elif kind == "streaming" and int(number) == turns_before_kill + 1:
            return proc, finished
        elif kind == "streaming" and hold:
            assert proc.stdin is not None
            proc.stdin.write("go on\n")
            proc.stdin.flush()
    raise AssertionError(f"the debate process ended early: {proc.stderr.read() if proc.stderr else ''}")


def journal_state(db: Path, debate_id: str) -> tuple[str, list[int], str]:
    conn = sqlite3.connect(db)
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    seqs = [r[0] for r in conn.execute("SELECT seq FROM turns WHERE debate_id = ? AND length(text) > 0 ORDER BY seq", (debate_id,))]
    status = conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0]
    conn.close()
    return integrity, seqs, status


@pytest.mark.parametrize("turns_before_kill", [1, 3])
@pytest.mark.model
def test_sigkill_mid_reply_keeps_every_finished_turn(tmp_path: Path, turns_before_kill: int) -> None:
    db = tmp_path / "journal.db"
    proc, finished = run_until_mid_reply(db, "crash", turns_before_kill, hold=True)
    assert send_to_group(proc, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL  # it died of the signal, mid-reply
    assert finished == turns_before_kill
    integrity, seqs, status = journal_state(db, "crash")
    assert integrity == "ok"
    assert seqs == list(range(1, finished + 1))  # every finished turn, nothing partial
    assert status == "running"  # killed outright: nothing could mark it, and that is expected


@pytest.mark.model
def test_sigint_mid_reply_marks_the_debate_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    proc, finished = run_until_mid_reply(db, "ctrl-c", 2)
    assert send_to_group(proc, signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        send_to_group(proc, signal.SIGKILL)
        proc.communicate(timeout=30)
        raise AssertionError("SIGINT had no effect: the debate was still running a minute later") from None
    assert proc.returncode == 130 and "interrupted" in out  # its interrupt path ran
    integrity, seqs, status = journal_state(db, "ctrl-c")
    assert integrity == "ok"
    assert seqs[:finished] == list(range(1, finished + 1))
    assert status == "interrupted"
