"""Debates cut off by a crash or Ctrl-C continue from their last finished turn (`symposium resume`).

Real processes, the real SmolLM2 model, a real journal file.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from store.journal import Journal
from store.queries import Queries
from tests.helpers.evince_rounds import assert_parsed_where_readable, rounds_both_predicted, says_no_prediction
from tests.helpers.killable import send_to_group, spawn
from tests.helpers.paths import REPO
from tui.headless.session import read_labels

LABELS = REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"
RUN = ["run", "evince", "--case", "Symptoms: itching, yellowish skin, dark urine, abdominal pain.",
       "--labels", str(LABELS), "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m",
       "--max-rounds", "2", "--turn-tokens", "60", "--crit-tokens", "60", "--seed", "5"]


def symposium(db: Path, *args: str) -> subprocess.Popen[str]:
    """The CLI as a person starts it at a prompt: SIGINT at its default disposition, in a process
    group of its own (:mod:`tests.helpers.killable`). A plain Popen would inherit an ignored SIGINT
    from a suite started in the background (``nohup make test &``), and the "Ctrl-C" below would
    change nothing: the debate would run on to its end."""
    env = {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200"}
    return spawn([sys.executable, "-m", "tui.cli", *args], cwd=REPO, env=env, text=True,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def start_and_cut(db: Path, sig: int, log: Path) -> str:
    """Start a debate, wait until round 1 is being argued, then send ``sig``; returns its id."""
    proc = symposium(db, "--log-file", str(log), *RUN)
    assert proc.stdout is not None
    debate_id = None
    for line in proc.stdout:
        if line.startswith("evince ·") and "debate" in line:
            debate_id = line.rsplit("debate", 1)[1].strip()
        if "refutation" in line:  # round 1's first turn is streaming
            break
    assert debate_id, proc.stderr.read() if proc.stderr else ""
    assert send_to_group(proc, signal.Signals(sig)), "the debate ended before it could be cut off"
    proc.communicate(timeout=120)
    return debate_id


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
@pytest.mark.model
def test_a_cut_off_debate_resumes_to_its_end(tmp_path: Path, sig: int) -> None:
    db = tmp_path / "journal.db"
    log = tmp_path / "run.log"
    debate_id = start_and_cut(db, sig, log)
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    if sig == signal.SIGINT:  # Ctrl-C: the one model the three seats share was closed, once
        assert log.read_text(encoding="utf-8").count("closed smollm2-135m") == 1
    with Journal(db) as journal:
        before = Queries(journal).debate(debate_id)
    assert before is not None
    assert before["status"] == ("running" if sig == signal.SIGKILL else "interrupted")
    kept = [(t["seq"], t["raw"]) for t in before["turns"]]
    assert len(kept) >= 2 and all(t["request"] for t in before["turns"])

    resumed = symposium(db, "resume", debate_id[:8])
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"resuming debate {debate_id}" in out

    with Journal(db) as journal:
        after = Queries(journal).debate(debate_id)
    assert after is not None and after["status"] == "finished"
    assert [(t["seq"], t["raw"]) for t in after["turns"]][: len(kept)] == kept  # nothing lost or rewritten
    debate_turns = [t for t in after["turns"] if t["kind"] in ("opening", "refutation")]
    rounds = sorted({t["round"] for t in debate_turns})
    assert rounds == list(range(len(rounds)))
    for r in rounds:  # every round has exactly one turn per agent, even the one cut in half
        assert sorted(t["role"] for t in debate_turns if t["round"] == r) == ["agent-a", "agent-b"]
    # Metrics for exactly the rounds in which both agents predicted (a 60-token turn from a
    # 135M model may give none: it is journalled as such, never invented).
    assert all(t["distribution"] or says_no_prediction(t["parse_notes"]) for t in debate_turns)
    # ... and the line above holds for a parser that rejects everything: each turn whose raw reply
    # holds a whole prediction (read independently of the parser) must have been parsed, before
    # and after the resume, and at least one turn of the run holds one.
    assert_parsed_where_readable(debate_turns, read_labels(str(LABELS)).labels)
    assert [m["round"] for m in after["metrics"]] == rounds_both_predicted(
        (t["round"], t["role"], bool(t["distribution"])) for t in debate_turns)
    assert any(m["kind"] == "resume_debate" for m in after["moderator_events"])


def test_finished_debates_are_not_resumed(tmp_path: Path) -> None:
    from tests.helpers.sample_debate import record_sample

    db = tmp_path / "journal.db"
    with Journal(db) as journal:
        record_sample(journal, "done00000001")
    proc = symposium(db, "resume", "done0000")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "is finished" in err and "Traceback" not in err
