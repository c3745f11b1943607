"""The journal's writes that a sample debate's end hides: the debate's first row alone, a phase
opening a round, a round's κ set again by its metrics, a resume, an interruption, a retried
turn's exchange, the replies a run received. Each keeps what it was given and keeps the seal
whole (the row it changed sealed again, under its own debate and key), and a write the journal
refuses names the file and what failed.

Found by the mutation benchmark's ``journal`` target (docs/mutation.md, "The journal after the seal"): these
writes' seal links could be given another debate or key, a turn's exchange or a reply's details
dropped and the errors of the replies and the provenance emptied, with no test failing (a
debate's row and a round's are sealed again by the writes that follow them in every sample
debate: its end, the metrics after each phase).
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from protocols.core.events import DebateResumed, MetricsComputed, PhaseChanged, TurnFinished
from protocols.core.replies import Reply
from store import seal
from store.journal import Journal, JournalError
from store.queries import Queries
from tests.helpers.sample_debate import record_sample, sample_events

ID = "sample0001ab"


def test_a_debate_cut_off_after_its_first_write_is_sealed(tmp_path: Path) -> None:
    """The debate's row is sealed by the write that creates it, not only by the end that most
    debates reach: a run killed right after it still verifies, and an edit of the row is named."""
    with Journal(tmp_path / "j.db") as j:
        j.record(sample_events("early0001")[0])
        assert seal.verify(j.conn, "early0001").ok
        j.conn.execute("UPDATE debates SET title = 'edited' WHERE id = 'early0001'")
        problems = seal.verify(j.conn, "early0001").problems
    assert [(p.table, p.key, p.what) for p in problems] == [("debates", "early0001", "changed")]


def test_each_later_write_is_sealed_under_its_debate_and_its_row(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as j:
        record_sample(j, ID, rounds=2)
        assert seal.verify(j.conn, ID).ok
        steps = {
            "a phase opening a round no metrics have reached": lambda: j.record(PhaseChanged(ID, "closing", 3, kappa=0.2)),
            "metrics setting round 1's κ again": lambda: j.record(MetricsComputed(ID, 1, {"wd": 0.1}, kappa=0.35)),
            "a resume": lambda: j.record(DebateResumed(ID, from_round=2)),
            "an interruption": lambda: j.mark_interrupted(ID, "Ctrl-C"),
        }
        for what, step in steps.items():
            before = seal.summary(j.conn, ID)["rows"]
            step()
            verdict = seal.verify(j.conn, ID)
            assert verdict.ok, (what, verdict.problems[:1])
            assert seal.summary(j.conn, ID)["rows"] > before, f"{what} sealed nothing"
        debate = Queries(j).debate(ID)
        assert debate is not None and debate["status"] == "interrupted" and debate["stop_reason"] == "Ctrl-C"
        assert [m["kappa"] for m in debate["metrics"] if m["round"] == 1] == [0.35]
        # the rows those writes changed are the rows now sealed: an edit of any of them is named
        for table, edit in (("rounds", "UPDATE rounds SET kappa = 0.9 WHERE round = 1"),
                            ("rounds", "UPDATE rounds SET phase = 'edited' WHERE round = 3"),
                            ("debates", "UPDATE debates SET stop_reason = 'edited'"),
                            ("moderator_events", "UPDATE moderator_events SET round = 7 WHERE kind = 'resume_debate'")):
            j.conn.execute("SAVEPOINT edit")
            j.conn.execute(edit)
            problems = seal.verify(j.conn, ID).problems
            j.conn.execute("ROLLBACK TO edit")
            j.conn.execute("RELEASE edit")
            assert any(p.table == table for p in problems), (table, problems[:2])


def test_a_retried_turns_whole_exchange_is_kept_and_a_single_reply_keeps_none(tmp_path: Path) -> None:
    """A turn asked again (its reply did not parse) journals every message it added after its
    request, in order (the reply that did not parse, the ask to try again, the retry's reply), so
    a reader of the journal sees the conversation as it was; a turn answered at once keeps none."""
    exchange = (("assistant", "I would say dengue."), ("user", "Answer as JSON only."), ("assistant", '{"Dengue": 0.7}'))
    with Journal(tmp_path / "j.db") as j:
        record_sample(j, ID)
        j.record(TurnFinished(ID, "agent-a", "m", "exploratory", 9, "opening", "Dengue", '{"Dengue": 0.7}', None,
                              exchange=exchange))
        j.record(TurnFinished(ID, "agent-b", "m", "exploratory", 9, "opening", "Zika", '{"Zika": 1}', None))
        turns = Queries(j).debate(ID)["turns"]  # type: ignore[index]
        assert seal.verify(j.conn, ID).ok
    assert [t["exchange"] for t in turns[-2:]] == [[{"role": r, "content": c} for r, c in exchange], None]


def test_replies_are_kept_with_their_details(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as j:
        record_sample(j, ID)
        j.record_replies(ID, [Reply("agent-a", "chat", "ab" * 32, "It is jaundice.", {"tokens": 4, "finish": "stop"})])
        debate = Queries(j).debate(ID)
        assert seal.verify(j.conn, ID).ok
    assert debate is not None
    assert [(r["role"], r["kind"], r["reply"], r["details"]) for r in debate["replies"]] == [
        ("agent-a", "chat", "It is jaundice.", {"tokens": 4, "finish": "stop"})]


@pytest.mark.parametrize("table", ["replies", "provenance"])
def test_a_write_the_journal_refuses_names_the_file_and_what_failed(tmp_path: Path, table: str) -> None:
    """The replies and the provenance are written outside the event stream; a failure of either
    (a trigger standing in for a full disk) says which file and what could not be recorded, and
    leaves nothing of the write behind."""
    path = tmp_path / "j.db"
    writes = {"replies": ("the models' replies", lambda j: j.record_replies(ID, [Reply("agent-a", "chat", "ab" * 32, "x")])),
              "provenance": ("the debate's provenance", lambda j: j.record_provenance(ID, {"symposium_version": "test"}))}
    what, write = writes[table]
    with Journal(path) as j:
        record_sample(j, ID)
        before = seal.summary(j.conn, ID)
        j.conn.execute(f"CREATE TRIGGER boom BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, 'disk trouble'); END")
        with pytest.raises(JournalError) as refused:
            write(j)
        assert j.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
        assert seal.summary(j.conn, ID) == before
    assert str(refused.value) == f"{path}: could not record {what} (disk trouble)."


def test_a_journal_in_a_folder_the_user_named_leaves_that_folder_as_it_was(tmp_path: Path) -> None:
    """``--db ~/shared/j.db``: the folder is the user's, so its mode is not narrowed (the journal
    itself is 0600); a folder the journal has to create is 0700 (backends.private.private_dir)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    with Journal(shared / "j.db"):
        pass
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert stat.S_IMODE((shared / "j.db").stat().st_mode) == 0o600
    with Journal(shared / "new" / "j.db"):
        pass
    assert stat.S_IMODE((shared / "new").stat().st_mode) == 0o700
