"""Two writers that really contend: one holds the write lock, the other waits it out.

The older two-writer test wrote one connection after the other, so SQLite's busy timeout
never ran. Here a separate process (a real second writer, as the app and a headless run
are) takes ``BEGIN IMMEDIATE``, writes, and holds the lock for a second while this process
records a turn: timestamps on one clock show the write began while the other held the lock
and finished after it let go, and both writers' rows are there. A reader holding a read
transaction does not block a write (WAL). The ``busy_timeout`` is read back from SQLite itself.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store.journal import BUSY_TIMEOUT_MS, Journal, JournalError
from tests.helpers.journal_rows import start, turn

HOLD_S = 1.0
#: A second writer in its own process: inside one write transaction it records a debate of its
#: own, then holds the lock, then commits; it prints the clock at each step.
HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO debates(id, protocol, title, subject, config_json, status, created_at, updated_at)"
             " VALUES ('other', 'evince', 'held', 's', '{}', 'running', 0, 0)")
print("locked", time.time(), flush=True)
time.sleep(float(sys.argv[2]))
released = time.time()
conn.execute("COMMIT")
print("released", released, flush=True)
"""
#: A reader in its own process holding one read transaction open until told to finish.
READER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
print(conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0], flush=True)
sys.stdin.readline()
print(conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0], flush=True)
conn.execute("COMMIT")
print(conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0], flush=True)
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
        assert holder.stdout is not None
        word, locked_at = holder.stdout.readline().split()
        assert word == "locked"
        # the lock is really held: a connection without a busy timeout is refused at once
        impatient = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            impatient.execute("BEGIN IMMEDIATE")
            raise AssertionError("the holder's lock was not in force")
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
        finally:
            impatient.close()
        began = time.time()
        j.record(turn("d1", text="during"))  # waits on the busy timeout, then writes
        finished = time.time()
        word, released_at = holder.stdout.readline().split()
        assert word == "released" and holder.wait(timeout=30) == 0
        seqs = [tuple(r) for r in j.conn.execute("SELECT seq, text FROM turns WHERE debate_id = 'd1' ORDER BY seq")]
        both = {r[0] for r in j.conn.execute("SELECT id FROM debates")}
    # The overlap, on one clock: the holder took the lock before this write began, and this write
    # began before the holder let go and finished after it: it waited for the other writer.
    assert float(locked_at) < began < float(released_at) < finished, (locked_at, began, released_at, finished)
    assert seqs == [(1, "before"), (2, "during")] and both == {"d1", "other"}  # both writers' rows, whole
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_wal_lets_a_turn_be_written_while_another_process_is_reading(tmp_path: Path) -> None:
    """WAL's promise to the app and a headless run: a reader (the app's review screen, an
    export) holding a read transaction does not block a writer, and keeps its own snapshot.
    In SQLite's rollback-journal mode this write would wait for the reader, then fail."""
    path = tmp_path / "shared.db"
    with Journal(path) as j:
        start(j, "d1")
        j.record(turn("d1", text="before"))
        reader = subprocess.Popen([sys.executable, "-c", READER, str(path)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        assert reader.stdout is not None and reader.stdin is not None
        assert reader.stdout.readline().strip() == "1"  # its read transaction is open
        j.record(turn("d1", text="while reading"))  # succeeds while the reader still holds it
        reader.stdin.write("go\n")
        reader.stdin.flush()
        seen_inside, seen_after = reader.stdout.readline().strip(), reader.stdout.readline().strip()
        assert reader.wait(timeout=30) == 0
    assert (seen_inside, seen_after) == ("1", "2")  # its snapshot held; the new turn visible after


def _open_and_close(path: str, results: multiprocessing.Queue[str]) -> None:
    try:
        Journal(path).conn.close()
        results.put("ok")
    except JournalError as exc:
        results.put(str(exc))


@pytest.mark.timeout(300)  # starts many Python processes at once: 65 s on a busy two-core machine
def test_processes_opening_a_new_journal_at_once_all_open_it(tmp_path: Path) -> None:
    """A resume started beside the app, or the crash harness's checker beside a debate, can
    open a journal that does not exist yet at the same moment. Each must open it: before, one
    in about 70 such opens failed, either "database is locked" while the other switched the
    file to WAL, or a migration the other had just applied ("table debates already exists")."""
    forked = multiprocessing.get_context("fork")
    failures: list[str] = []
    for n in range(100):
        results: multiprocessing.Queue[str] = forked.Queue()
        openers = [forked.Process(target=_open_and_close, args=(str(tmp_path / f"{n}.db"), results)) for _ in range(3)]
        for p in openers:
            p.start()
        for p in openers:
            p.join(timeout=60)
        failures += [r for r in (results.get(timeout=10) for _ in openers) if r != "ok"]
    assert failures == []
