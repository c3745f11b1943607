"""Kill headless debates at moments timed from their own output, check the journal, resume them.

Used by tests/store/test_crash_harness.py (a few kills) and benchmarks/crash.py (hundreds). Real
processes and one real journal file shared by every trial (trials may run side by side).

Each kill is timed from what the debate printed: the harness waits until a randomly chosen
number of turns has been shown, then waits a random part of a turn more and sends SIGKILL
(or, for a share, SIGINT). So kills land right after finished turns and in the middle of
the next reply, never at start-up. After each kill it checks that the journal passes
``PRAGMA integrity_check``; that every turn shown is stored; that every stored turn is whole
(text, raw reply, JSON that parses, numbered 1…n) with its distribution rows and its
model-call row; then it resumes the debate to its end and checks that no earlier turn changed.

Two modes: ``model`` runs ``symposium run evince`` on the bundled SmolLM2 model and
``symposium resume``; ``fast`` runs the same protocol, journal and printer on scripted
backends streaming at a model's pace (:mod:`tests.helpers.scripted_debate`), for volume.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tests.helpers.evince_rounds import says_no_prediction
from tests.helpers.paths import REPO

LABELS = REPO / "tui" / "data" / "symptom2disease_labels.txt"
CASES = ["fever, chills and sweating", "itching, yellowish skin, dark urine", "runny nose, sneezing, cough",
         "joint pain, rash, high fever", "burning urination, bladder discomfort"]
Mode = Literal["fast", "model"]
#: Debate turns in a 3-round EVINCE debate; kills come after 1…5 of them are shown.
DEBATE_TURNS = 6
#: About how long one turn takes in each mode (for the random extra wait after a shown turn).
TURN_S = {"fast": 0.4, "model": 4.0}


@dataclass
class Trial:
    number: int
    mode: Mode
    sig: str
    after_shown: int  # the kill was sent after this many turns had been shown …
    extra_s: float  # … and this much longer
    debate_id: str | None
    status_before: str | None
    turns_before: int
    printed_before: int  # turns shown by the time the process died
    integrity: str
    rows_valid: bool
    resumed: bool
    turns_after: int
    kept: bool
    problem: str = ""

    @property
    def survived(self) -> bool:
        needs = self.debate_id is not None and self.status_before not in ("finished", "stopped")
        return (self.integrity == "ok" and self.rows_valid and self.kept and self.turns_before >= self.printed_before
                and (self.resumed or not needs) and self.debate_id is not None)


def _start(db: Path, mode: Mode, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200", "PYTHONPATH": str(REPO)}
    cmd = ["-m", "tests.helpers.scripted_debate"] if mode == "fast" else ["-m", "tui.cli"]
    return subprocess.Popen([sys.executable, *cmd, *args], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _shown_turn(line: str, mode: Mode) -> bool:
    """A line saying a debate turn was finished and shown: the helper's milestone, or the
    printer's distribution line (printed after the turn is journalled)."""
    if mode == "fast":
        return line.startswith("@journalled ")
    return line.startswith("  ↳ ") and not line.startswith("  ↳ note")


def _debate_id(line: str, mode: Mode) -> str | None:
    if mode == "fast" and line.startswith("@debate "):
        return line.split()[1]
    if mode == "model" and line.startswith("evince ·") and "debate" in line:
        return line.rsplit("debate", 1)[1].strip()
    return None


def check_rows(conn: sqlite3.Connection, debate_id: str) -> str:
    """'' when every stored turn is whole, with its distribution (or recorded as giving none)
    and its model-call row; otherwise what is wrong."""
    rows = conn.execute("SELECT id, seq, kind, text, raw, parsed_json, parse_notes_json FROM turns"
                        " WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()
    for expected, (turn_id, seq, kind, text, raw, parsed, notes) in enumerate(rows, 1):
        if seq != expected or text is None or raw is None:
            return f"turn {seq}: numbered or written wrong"
        json.loads(notes)
        if parsed is not None:
            json.loads(parsed)
        calls = conn.execute("SELECT COUNT(*) FROM model_calls WHERE turn_id = ?", (turn_id,)).fetchone()[0]
        if calls != 1:
            return f"turn {seq}: {calls} model-call rows"
        if kind in ("opening", "refutation"):
            count, dist = conn.execute("SELECT COUNT(*), COALESCE(SUM(probability), 0) FROM distributions"
                                       " WHERE turn_id = ?", (turn_id,)).fetchone()
            if count == 0 and says_no_prediction(json.loads(notes)):
                continue  # a reply with no prediction is kept as such, never given an invented one
            if abs(dist - 1.0) > 1e-6:
                return f"turn {seq}: distribution sums to {dist}"
    return ""


def _debate_turns(conn: sqlite3.Connection, debate_id: str) -> list[tuple[int, str]]:
    return conn.execute("SELECT seq, raw FROM turns WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()


def trial(db: Path, number: int, rng: random.Random, mode: Mode, *, resume: bool = True) -> Trial:
    sig = rng.choices([signal.SIGKILL, signal.SIGINT], weights=[4, 1])[0]
    after_shown = rng.randint(1, DEBATE_TURNS - 1)
    extra = rng.uniform(0.0, TURN_S[mode])
    if mode == "fast":
        proc = _start(db, mode, "run", str(db), str(number))
    else:
        proc = _start(db, mode, "run", "evince", "--case", rng.choice(CASES), "--labels", str(LABELS),
                      "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m",
                      "--max-rounds", "2", "--turn-tokens", "40", "--crit-tokens", "40", "--seed", str(number))
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    shown, debate_id, killed = 0, None, False
    deadline = time.monotonic() + 600
    while True:
        line = lines.get(timeout=max(1.0, deadline - time.monotonic()))
        if line is None:
            break
        debate_id = debate_id or _debate_id(line, mode)
        shown += _shown_turn(line, mode)
        if shown == after_shown and not killed:
            time.sleep(extra)
            proc.send_signal(sig)
            killed = True
    proc.wait(timeout=120)
    conn = sqlite3.connect(db, timeout=30)
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    before = [] if debate_id is None else _debate_turns(conn, debate_id)
    problem = "" if debate_id is None else check_rows(conn, debate_id)
    if debate_id is None:
        problem = f"no debate id was printed ({(proc.stderr.read() if proc.stderr else '')[-300:]})"
    status = None if debate_id is None else conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0]
    stored_debate_turns = 0 if debate_id is None else conn.execute(
        "SELECT COUNT(*) FROM turns WHERE debate_id = ? AND kind IN ('opening', 'refutation')", (debate_id,)).fetchone()[0]
    conn.close()
    if stored_debate_turns < shown:
        problem = problem or f"{shown} turns shown, {stored_debate_turns} stored"
    resumed, after, kept = False, len(before), True
    if resume and debate_id is not None and status not in ("finished", "stopped"):
        args = ("resume", str(db), debate_id) if mode == "fast" else ("resume", debate_id)
        _, err = _start(db, mode, *args).communicate(timeout=900)
        conn = sqlite3.connect(db, timeout=30)
        resumed = conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0] == "finished"
        rows = _debate_turns(conn, debate_id)
        problem = problem or check_rows(conn, debate_id) or ("" if resumed else f"resume failed: {err[-300:]}")
        conn.close()
        after, kept = len(rows), rows[: len(before)] == before
    return Trial(number, mode, signal.Signals(sig).name, after_shown, round(extra, 2), debate_id, status,
                 len(before), shown if debate_id else 0, integrity, not problem, resumed, after, kept, problem)


def run_trials(db: Path, count: int, *, seed: int = 0, mode: Mode = "fast", jobs: int = 1,
               first: int = 1, resume: bool = True) -> list[Trial]:
    """``count`` trials numbered from ``first``; ``jobs`` of them run side by side on ``db``."""
    rngs = [(n, random.Random(seed * 100_003 + n)) for n in range(first, first + count)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda nr: trial(db, nr[0], nr[1], mode, resume=resume), rngs))
