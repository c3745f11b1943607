"""Two writers that really contend: one holds the write lock, the other waits it out.

The older two-writer test wrote one connection after the other, so SQLite's busy timeout
never ran. Here a separate process (a real second writer, as the app and a headless run
are) takes ``BEGIN IMMEDIATE`` and holds it for a second while this process records a turn:
the write must wait, then succeed, with nothing lost. The journal's ``busy_timeout`` is read
back from SQLite itself.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from store.journal import BUSY_TIMEOUT_MS, Journal

from tests.store.test_journal import start, turn

HOLD_S = 1.0
HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def test_the_journal_sets_a_busy_timeout_of_ten_seconds(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as j:
        assert j.conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS == 10_000
        assert j.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_writer_waits_for_another_process_holding_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with Journal(path) as j:
        start(j, "d1")
        j.record(turn("d1", text="before"))
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(HOLD_S)], stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        # the lock is really held: a connection without a busy timeout is refused at once
        impatient = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            impatient.execute("BEGIN IMMEDIATE")
            raise AssertionError("the holder's lock was not in force")
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
        finally:
            impatient.close()
        began = time.monotonic()
        j.record(turn("d1", text="during"))  # waits on the busy timeout, then writes
        waited = time.monotonic() - began
        assert holder.wait(timeout=30) == 0
        seqs = [tuple(r) for r in j.conn.execute("SELECT seq, text FROM turns WHERE debate_id = 'd1' ORDER BY seq")]
    assert seqs == [(1, "before"), (2, "during")]
    assert waited > 0.2, "the write did not wait for the lock: the writers never contended"
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
