"""Kill headless debates at random moments, check the journal, resume them to their end.

Used by tests/test_crash_harness.py (a few kills) and benchmarks/crash.py (many). Real
processes, the real bundled model, one journal file shared by every trial.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LABELS = REPO / "tui" / "data" / "symptom2disease_labels.txt"
CASES = ["fever, chills and sweating", "itching, yellowish skin, dark urine", "runny nose, sneezing, cough",
         "joint pain, rash, high fever", "burning urination, bladder discomfort"]


@dataclass
class Trial:
    number: int
    sig: str
    delay_s: float
    debate_id: str | None
    status_before: str | None
    turns_before: int
    printed_before: int
    integrity: str
    rows_valid: bool
    resumed: bool
    turns_after: int
    kept: bool


def _symposium(db: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "tui.cli", *args], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _rows_valid(conn: sqlite3.Connection, debate_id: str) -> bool:
    """Every stored turn is whole: text, raw output, JSON columns that parse, numbered 1…n."""
    rows = conn.execute("SELECT seq, text, raw, parsed_json, parse_notes_json FROM turns WHERE debate_id = ? ORDER BY seq",
                        (debate_id,)).fetchall()
    for expected, (seq, text, raw, parsed, notes) in enumerate(rows, 1):
        if seq != expected or text is None or raw is None:
            return False
        json.loads(notes)
        if parsed is not None:
            json.loads(parsed)
    return True


def _count_debates(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COUNT(*) FROM debates").fetchone()[0]
    except sqlite3.OperationalError:  # the first debate's process died before creating the tables
        return 0
    finally:
        conn.close()


def trial(db: Path, number: int, rng: random.Random, *, max_delay: float, resume: bool) -> Trial:
    sig = rng.choice([signal.SIGKILL, signal.SIGINT])
    delay = rng.uniform(1.0, max_delay)
    debates_before = _count_debates(db)
    proc = _symposium(db, "run", "evince", "--case", rng.choice(CASES), "--labels", str(LABELS),
                      "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m",
                      "--max-rounds", "3", "--turn-tokens", "40", "--crit-tokens", "40", "--seed", str(number))
    time.sleep(delay)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=120)
    printed = sum(1 for line in out.splitlines() if line.startswith("  ↳ ") and not line.startswith("  ↳ note"))
    conn = sqlite3.connect(db)
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    debate_id = None  # None: killed before the debate was even recorded
    if _count_debates(db) > debates_before:
        debate_id = conn.execute("SELECT id FROM debates ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    before = [] if debate_id is None else conn.execute(
        "SELECT seq, raw FROM turns WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()
    valid = debate_id is None or _rows_valid(conn, debate_id)
    status = None if debate_id is None else conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0]
    conn.close()
    resumed, after, kept = False, len(before), True
    if resume and debate_id is not None and status not in ("finished", "stopped"):
        again = _symposium(db, "resume", debate_id)
        again.communicate(timeout=900)
        conn = sqlite3.connect(db)
        resumed = conn.execute("SELECT status FROM debates WHERE id = ?", (debate_id,)).fetchone()[0] == "finished"
        rows = conn.execute("SELECT seq, raw FROM turns WHERE debate_id = ? ORDER BY seq", (debate_id,)).fetchall()
        conn.close()
        after, kept = len(rows), rows[: len(before)] == before
    return Trial(number, signal.Signals(sig).name, round(delay, 2), debate_id, status, len(before), printed,
                 integrity, valid, resumed, after, kept)


def run_trials(db: Path, count: int, *, seed: int = 0, max_delay: float = 20.0, resume: bool = True) -> list[Trial]:
    rng = random.Random(seed)
    return [trial(db, n, rng, max_delay=max_delay, resume=resume) for n in range(1, count + 1)]
