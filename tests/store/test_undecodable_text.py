"""A journal whose stored text is not UTF-8 is read, shown and exported, never a traceback.

SQLite's TEXT columns hold whatever bytes a writer gives them: another tool, a repair script or a
damaged file can leave bytes that are not UTF-8 where Symposium wrote text. Every reader is given
such bytes as U+FFFD (``store.journal.readable_text``) and the rest of the record as written;
reading changes nothing in the file; the seal hashes the bytes as stored, so ``verify`` still
names the row as changed, in the journal and in a JSON export made from it.

A real journal file, written by the real Journal, then damaged with sqlite3 as another tool
would; the real command line. No model is loaded.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from protocols.core.events import TurnFinished
from store import seal
from store.journal import Journal, JournalError
from store.queries import Queries
from tests.helpers.sample_debate import record_sample, sample_events
from tui.cli.parser import main

ID = "sample0001ab"
#: "Ok ", two bytes no UTF-8 text has, " end": as another tool could store it in a turn.
DAMAGED = b"Ok \x80\xff end"
SHOWN = "Ok \ufffd\ufffd end"


def _damage(path: Path, sql: str, value: bytes) -> None:
    """Store ``value`` as TEXT where ``sql`` says (one ``?``), as a tool other than Symposium would."""
    conn = sqlite3.connect(path)
    conn.execute(sql, (value,))
    conn.commit()
    conn.close()


def _stored(path: Path, sql: str) -> bytes:
    """What the file holds, as bytes (``CAST … AS BLOB``: no decoding on the way)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """A sealed debate whose second turn's text was overwritten with bytes that are not UTF-8."""
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        record_sample(j, ID)
    _damage(path, "UPDATE turns SET text = CAST(? AS TEXT) WHERE seq = 2", DAMAGED)
    assert _stored(path, "SELECT typeof(text) FROM turns WHERE seq = 2") == "text"
    return path


TURN = "SELECT CAST(text AS BLOB) FROM turns WHERE seq = 2"


def test_the_debate_reads_with_the_bad_bytes_replaced(damaged: Path) -> None:
    with Journal(damaged) as j:
        debate = Queries(j).debate(ID)
    assert debate is not None
    assert [t["text"] for t in debate["turns"] if t["seq"] == 2] == [SHOWN]
    assert _stored(damaged, TURN) == DAMAGED  # reading wrote nothing back


def test_show_prints_the_debate(damaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", ID, "--db", str(damaged)]) == 0
    out = capsys.readouterr().out
    assert SHOWN in out


@pytest.mark.parametrize("redact", [False, True], ids=["full", "redacted"])
@pytest.mark.parametrize("form", ["md", "json"])
def test_every_export_is_written_with_the_bad_bytes_replaced(damaged: Path, tmp_path: Path, form: str, redact: bool) -> None:
    out = tmp_path / (f"debate-redacted.{form}" if redact else f"debate.{form}")
    assert main(["export", ID, "--format", form, "--out", str(out), "--db", str(damaged),
                 *(["--redact"] if redact else [])]) == 0
    text = out.read_text(encoding="utf-8")
    if form == "json":
        document = json.loads(text)
        assert [t["text"] for t in document["turns"] if t["seq"] == 2] == [SHOWN]
    else:
        assert SHOWN in text
    assert _stored(damaged, TURN) == DAMAGED


def test_the_report_is_written_with_the_bad_bytes_replaced(damaged: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", ID, "--out", str(out), "--db", str(damaged)]) == 0
    assert SHOWN in out.read_text(encoding="utf-8")


def test_verify_still_names_the_row_in_the_journal_and_in_its_export(
        damaged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The seal hashes the bytes as stored, not the text a reader is shown: the edit is found,
    and an export (which can carry only the replaced text) does not pass for the record."""
    with Journal(damaged) as j:
        turn = str(j.conn.execute("SELECT id FROM turns WHERE seq = 2").fetchone()[0])
        assert [(p.table, p.key, p.what) for p in seal.verify(j.conn, ID).problems] == [("turns", turn, "changed")]
    exported = tmp_path / "debate.json"
    assert main(["export", ID, "--format", "json", "--out", str(exported), "--db", str(damaged)]) == 0
    capsys.readouterr()
    assert main(["verify", "--export", str(exported)]) == 1
    assert f"FAILED {ID}: first turns row {turn} " in capsys.readouterr().out


def test_a_damaged_title_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        record_sample(j, ID)
    _damage(path, "UPDATE debates SET title = CAST(? AS TEXT)", b"Jaun\xe9dice")  # Latin-1, not UTF-8
    assert main(["history", "--json", "--db", str(path)]) == 0
    assert [d["title"] for d in json.loads(capsys.readouterr().out)] == ["Jaun\ufffddice"]


def _finished_after_damage(path: Path, title: bytes) -> tuple[str, list[tuple[str, str, str]], bytes]:
    """Record a debate up to its finish, store ``title`` in its row as another tool would, then
    let Symposium try to finish it (an UPDATE of that row, which it refuses over an edit): the
    seal's verdict, its findings and the title's bytes as stored afterwards."""
    path.parent.mkdir()
    events = sample_events(ID)
    with Journal(path) as j:
        for event in events[:-1]:
            j.record(event)
    _damage(path, "UPDATE debates SET title = CAST(? AS TEXT)", title)
    with Journal(path) as j:
        with pytest.raises(JournalError, match=f"debates row {ID} .*changed"):
            j.record(events[-1])
        verdict = seal.verify(j.conn, ID)
        assert j.conn.execute("SELECT status FROM debates").fetchone()[0] == "running"
    return verdict.status, [(p.table, p.key, p.what) for p in verdict.problems], _stored(path, "SELECT CAST(title AS BLOB) FROM debates")


def test_a_row_damaged_before_a_rewrite_is_judged_as_stored(tmp_path: Path) -> None:
    """A row whose text is not UTF-8, which Symposium would rewrite: its bytes stay as they were
    (nothing is written back as U+FFFD), and the write is refused and the seal's verdict given
    exactly as for the same edit in valid UTF-8."""
    utf8 = _finished_after_damage(tmp_path / "utf8" / "journal.db", b"Jaundice, edited")
    bad = _finished_after_damage(tmp_path / "bad" / "journal.db", b"Jaun\x80\xff")
    assert bad[2] == b"Jaun\x80\xff" and utf8[2] == b"Jaundice, edited"
    assert bad[:2] == utf8[:2] == ("tampered", [("debates", ID, "changed")])


def test_bytes_put_where_a_model_wrote_u_fffd_are_still_an_edit(tmp_path: Path) -> None:
    """A model's reply can hold U+FFFD itself (a token cut mid-character). An editor who puts
    bytes that are not UTF-8 in its place leaves text that *reads* the same: the seal checks the
    bytes, so the edit is found all the same."""
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        record_sample(j, ID, finished=False)
        j.record(TurnFinished(ID, "agent-a", "smollm2-135m", "exploratory", 2, "refutation", SHOWN, SHOWN, None))
        turn = str(j.conn.execute("SELECT id FROM turns WHERE text = ?", (SHOWN,)).fetchone()[0])
        assert seal.verify(j.conn, ID).status == "ok"
    _damage(path, "UPDATE turns SET text = CAST(? AS TEXT) WHERE id = " + turn, DAMAGED)
    with Journal(path) as j:
        assert [t["text"] for t in (Queries(j).debate(ID) or {})["turns"] if str(t["id"]) == turn] == [SHOWN]  # reads the same
        assert [(p.table, p.key, p.what) for p in seal.verify(j.conn, ID).problems] == [("turns", turn, "changed")]
