"""Bad input from users gets one clear line naming the culprit; nothing written is lost."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from backends.registry import load_registry
from backends.sources import resolve_path
from protocols.core.events import TurnFinished
from store.journal import Journal, JournalError
from tests.helpers.paths import REPO
from tests.helpers.sample_debate import sample_events


def symposium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SYMPOSIUM_DB": str(tmp_path / "journal.db")}
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def registry_with(tmp_path: Path, gguf: Path) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(f'[models.broken]\nname = "Broken"\nfamily = "llama"\nbackend = "llamacpp"\n'
                    f'chat_format = "chatml"\nsource = {{ kind = "local", path = "{gguf}" }}\n')
    return path


@pytest.mark.parametrize("content", [b"this is not a model at all" * 1000, "truncated"])
@pytest.mark.model
def test_corrupt_or_truncated_gguf_is_named(tmp_path: Path, content: bytes | str) -> None:
    gguf = tmp_path / "model.gguf"
    if content == "truncated":
        real = resolve_path(load_registry().get("smollm2-135m"))
        gguf.write_bytes(real.read_bytes()[: 2_000_000])
    else:
        gguf.write_bytes(content)
    result = symposium(tmp_path, "--models", str(registry_with(tmp_path, gguf)), "chat", "broken", "hello")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "'broken'" in result.stderr and str(gguf) in result.stderr.replace("\n", "")
    assert "not a GGUF" in result.stderr or "incomplete" in result.stderr


def test_a_full_disk_fails_the_turn_cleanly_and_keeps_the_rest(tmp_path: Path) -> None:
    """Simulated with SQLite's page cap: the same SQLITE_FULL a full disk gives."""
    journal = Journal(tmp_path / "journal.db")
    events = sample_events()
    started, turn = events[0], next(e for e in events if isinstance(e, TurnFinished))
    journal.record(started)
    pages = journal.conn.execute("PRAGMA page_count").fetchone()[0]
    journal.conn.execute(f"PRAGMA max_page_count = {pages + 40}")
    written = 0
    with pytest.raises(JournalError, match=r"journal\.db: could not record TurnFinished .*full"):
        for i in range(100):
            journal.record(replace(turn, text=f"turn {i} " + "x" * 20_000))
            written += 1
    assert 0 < written < 100
    stored = journal.conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
    assert stored == written  # every earlier turn kept, the failed one left nothing behind
    assert journal.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    journal.close()


def test_a_read_only_journal_is_reported(tmp_path: Path) -> None:
    """Simulated with ``query_only`` (the tests run as root, which ignores file permissions)."""
    journal = Journal(tmp_path / "journal.db")
    journal.conn.execute("PRAGMA query_only = ON")
    with pytest.raises(JournalError, match="journal.db: journal is busy or read-only"):
        journal.record(sample_events()[0])
    journal.close()
    assert sqlite3.connect(tmp_path / "journal.db").execute("SELECT COUNT(*) FROM debates").fetchone()[0] == 0


def test_unreadable_labels_file_is_one_line(tmp_path: Path) -> None:
    result = symposium(tmp_path, "run", "evince", "--case", "fever", "--labels", str(tmp_path / "nope.txt"),
                       "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m")
    assert result.returncode == 1 and "Traceback" not in result.stderr and "nope.txt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # not wrapped inside the path
