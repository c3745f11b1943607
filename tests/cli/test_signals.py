"""SIGTERM and SIGHUP end a headless command as Ctrl-C does (``tui/headless/signals.py``).

In process: an ignored SIGHUP (``nohup``) stays ignored, the handlers a caller had are put
back, a signal that comes as the work returns leaves its result standing. Real processes: a
``symposium run evince`` on the bundled model cut by SIGTERM, its ``symposium resume`` cut by
SIGHUP, then resumed to its end; ``symposium chat`` cut by SIGTERM; and a run on a terminal
that hangs up (closed, then SIGHUP), which must still exit 129. (The crash harness,
``tests/store/test_crash_harness.py``, sends both signals in every mode, the app included.)
"""

from __future__ import annotations

import asyncio
import os
import pty
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.crash_harness import check_rows, group_left_behind
from tests.helpers.killable import send_to_group, spawn
from tests.helpers.paths import REPO
from tui.headless.signals import Terminated, run_command

LABELS = REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"
RUN = ["run", "evince", "--case", "Symptoms: itching, yellowish skin, dark urine, abdominal pain.",
       "--labels", str(LABELS), "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m",
       "--max-rounds", "2", "--turn-tokens", "60", "--crit-tokens", "60", "--seed", "5"]


@pytest.fixture
def sighup_ignored() -> Iterator[None]:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_an_ignored_sighup_stays_ignored(sighup_ignored: None) -> None:
    """``nohup symposium run …`` asks for SIGHUP to be ignored: the command runs on to its end."""
    async def work() -> str:
        os.kill(os.getpid(), signal.SIGHUP)
        await asyncio.sleep(0.3)  # time for a handler, had one been installed, to cancel this
        return "finished"

    assert run_command(work()) == "finished"
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def test_the_previous_handlers_are_put_back() -> None:
    def mine(signum: int, frame: object) -> None:  # never called: no signal is sent here
        raise AssertionError(f"signal {signum} reached the caller's handler")

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        async def work() -> int:
            assert signal.getsignal(signal.SIGTERM) is not mine  # the command's handler meanwhile
            return 7

        assert run_command(work()) == 7
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_sigterm_cancels_the_work_lets_its_clean_up_finish_and_says_which_signal() -> None:
    cleaned: list[str] = []

    async def work() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)  # an engine's close takes a while: it must not be cut short
            cleaned.append("closed")
            raise

    with pytest.raises(Terminated) as raised:
        run_command(work())
    assert cleaned == ["closed"]
    assert raised.value.exit_status == 143 and raised.value.name == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_second_signal_does_not_cut_the_clean_up_short() -> None:
    """A service manager may repeat SIGTERM; closing an engine half-way could leave its processes."""
    cleaned: list[str] = []

    async def work() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            os.kill(os.getpid(), signal.SIGHUP)
            await asyncio.sleep(0.2)
            cleaned.append("closed")
            raise

    with pytest.raises(Terminated) as raised:
        run_command(work())
    assert cleaned == ["closed"] and raised.value.name == "SIGTERM"


def symposium(db: Path, log: Path, *args: str) -> subprocess.Popen[str]:
    """The CLI as a person (or a service manager) starts it: its own process group, SIGINT at its
    default disposition (:mod:`tests.helpers.killable`), the worktree's code (cwd)."""
    env = {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200"}
    return spawn([sys.executable, "-m", "tui.cli", "--log-file", str(log), *args], cwd=REPO, env=env, text=True,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def cut_after_a_journalled_turn(proc: subprocess.Popen[str], db: Path, sig: signal.Signals, *,
                                debate_id: str | None = None, more_than: int = 0) -> tuple[str, int, str]:
    """Send ``sig`` to ``proc``'s group once the journal holds more than ``more_than`` debate turns
    of its debate (looked at each time it prints a turn's ``↳`` line, which it does once the turn
    is journalled); returns the debate id, the exit status and stderr."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if debate_id is None and line.startswith("evince ·") and "debate" in line:
            debate_id = line.rsplit("debate", 1)[1].strip()
        if debate_id is not None and line.startswith("  ↳ ") and debate_turns(db, debate_id) > more_than:
            break
    assert debate_id is not None, proc.communicate(timeout=120)[1]
    assert send_to_group(proc, sig), "the command ended before it could be cut off"
    _, err = proc.communicate(timeout=180)
    return debate_id, proc.returncode, err


def debate_turns(db: Path, debate_id: str) -> int:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM turns WHERE debate_id = ? AND kind IN ('opening', 'refutation')",
                            (debate_id,)).fetchone()[0]
    finally:
        conn.close()


def started(db: Path) -> bool:
    """Whether a debate (chat's one reply) has been journalled as started."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM debates").fetchone()[0] > 0
    except sqlite3.OperationalError:  # the tables are not there yet
        return False
    finally:
        conn.close()


def stored(db: Path, debate_id: str) -> tuple[str, list[tuple[int, str]], str]:
    """The debate's status, its turns (seq, raw) and what :func:`check_rows` finds wrong."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        status = conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0]
        turns = conn.execute("SELECT seq, raw FROM turns WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()
        return status, turns, check_rows(conn, debate_id)
    finally:
        conn.close()


@pytest.mark.model
def test_sigterm_on_run_then_sighup_on_resume_then_resume_finishes(tmp_path: Path) -> None:
    db, log = tmp_path / "journal.db", tmp_path / "run.log"
    run = symposium(db, log, *RUN)
    debate_id, code, err = cut_after_a_journalled_turn(run, db, signal.SIGTERM)
    assert code == 143, err  # 128 + SIGTERM: the interrupt path ran (dying of it would read -15)
    assert "interrupted by SIGTERM" in err
    assert not group_left_behind(run), "a process of the run's group outlived it"
    status, kept, problem = stored(db, debate_id)
    assert status == "interrupted" and kept and not problem, (status, problem)
    assert log.read_text(encoding="utf-8").count("closed smollm2-135m") == 1  # the shared model, closed once

    resume = symposium(db, log, "resume", debate_id)
    _, code, err = cut_after_a_journalled_turn(resume, db, signal.SIGHUP, debate_id=debate_id,
                                               more_than=debate_turns(db, debate_id))
    assert code == 129, err
    assert not group_left_behind(resume), "a process of the resume's group outlived it"
    status, turns, problem = stored(db, debate_id)
    assert status == "interrupted" and not problem, (status, problem)
    assert len(turns) > len(kept) and turns[: len(kept)] == kept  # the resume journalled more, changed nothing

    final = symposium(db, log, "resume", debate_id)
    out, err = final.communicate(timeout=600)
    assert final.returncode == 0, err
    status, after, problem = stored(db, debate_id)
    assert status == "finished" and not problem, (status, problem)
    assert after[: len(turns)] == turns


@pytest.mark.model
def test_sigterm_ends_symposium_chat_with_its_reply_marked_interrupted(tmp_path: Path) -> None:
    db, log = tmp_path / "journal.db", tmp_path / "chat.log"
    chat = symposium(db, log, "chat", "smollm2-135m", "Count from 1 to 1000, one number per line.",
                     "--max-tokens", "2000", "--temperature", "0", "--seed", "3")
    deadline = time.monotonic() + 120
    while not (db.exists() and started(db)) and time.monotonic() < deadline:  # journalled: the model is loaded
        time.sleep(0.2)
    time.sleep(1.0)  # the reply is streaming
    assert send_to_group(chat, signal.SIGTERM), "the reply ended before it could be cut off"
    _, err = chat.communicate(timeout=120)
    assert chat.returncode == 143, err
    assert not group_left_behind(chat)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT status FROM debates").fetchall() == [("interrupted",)]
    conn.close()
    assert log.read_text(encoding="utf-8").count("closed smollm2-135m") == 1


@pytest.mark.model
def test_a_run_on_a_terminal_that_hangs_up_exits_129_with_the_debate_interrupted(tmp_path: Path) -> None:
    """A hang-up closes the terminal first: the last words then cannot be written, and neither
    can the interpreter's last flush; the exit status must still be 129, not an EIO's 1 or 120."""
    db, log = tmp_path / "journal.db", tmp_path / "run.log"
    master, slave = pty.openpty()
    env = {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200", "TERM": "xterm-256color"}
    proc = spawn([sys.executable, "-m", "tui.cli", "--log-file", str(log), *RUN], cwd=REPO, env=env,
                 stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    shown = b""
    try:
        while b"refutation" not in shown:  # round 1 is being argued: turns are journalled
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the run ended (and closed its end) before it could be cut off
                chunk = b""
            assert chunk, f"the run ended before it could be cut off: {shown[-300:]!r}"
            shown += chunk
    finally:
        os.close(master)  # the terminal goes away, then the hang-up
    assert send_to_group(proc, signal.SIGHUP), "the run ended before it could be cut off"
    assert proc.wait(timeout=120) == 129
    assert not group_left_behind(proc)
    conn = sqlite3.connect(db)
    [(debate_id, status)] = conn.execute("SELECT id, status FROM debates").fetchall()
    conn.close()
    assert status == "interrupted"
    assert not stored(db, debate_id)[2]
    assert log.read_text(encoding="utf-8").count("closed smollm2-135m") == 1
