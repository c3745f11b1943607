"""``symposium run <protocol> --evidence PATH`` as a person runs it.

A file that cannot be read (a scan with no text, a spreadsheet, a missing path) is refused before
the debate starts, with its name and the reason, and nothing is journalled. With the bundled
model, a debate grounded in an evidence folder runs end to end from the command line (a fresh
process, as on a fresh clone), its report opens in headless Chromium with no load from outside,
and a cut-off run resumes from the journal: every call sends exactly the prompt of the uninterrupted
run's (compared by the hash the journal keeps) and every turn is said as it was, though the file changed. ``--redact-evidence`` masks before indexing and says
how much.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends.base import SamplingOptions
from protocols.core.agents import Agent
from protocols.core.moderation import CommandChannel
from protocols.core.replay import counted
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.browser import chromium, needs_chromium, recording_server
from tests.helpers.evidence_files import evidence_folder, scanned_pdf_bytes
from tests.helpers.paths import REPO
from tests.helpers.samples import FIRST, cli_args, form_values, spec_of
from tui.cli.parser import main
from tui.protocol_catalog import resumable

SEATS = ["--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m"]


def _debates(db: Path) -> int:
    if not db.exists():
        return 0
    return sqlite3.connect(db).execute("SELECT COUNT(*) FROM debates").fetchone()[0]


@pytest.mark.parametrize(("make", "said"), [
    (lambda d: (d / "scan.pdf").write_bytes(scanned_pdf_bytes()) and d / "scan.pdf",
     "scan.pdf: the PDF has no text to read (a scanned document?); run it through OCR"),
    (lambda d: (d / "sheet.xlsx").write_bytes(b"PK") and d / "sheet.xlsx", "sheet.xlsx: Symposium reads"),
    (lambda d: d / "missing.txt", "missing.txt: no such file or folder"),
])
def test_evidence_that_cannot_be_read_is_refused_before_the_debate_starts(tmp_path: Path, make: Any, said: str,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = make(tmp_path)
    db = tmp_path / "journal.db"
    code = main(["run", "evince", "--case", "Fever.", *SEATS, "--evidence", str(path), "--db", str(db)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and "error: --evidence: " in err and said in err, err
    assert _debates(db) == 0


def test_redacting_the_evidence_before_indexing_says_what_was_masked(tmp_path: Path) -> None:
    from protocols.core.evidence import EvidenceSettings
    from tui.evidence import read_evidence

    path = tmp_path / "note.txt"
    path.write_text("Patient John Smith, seen on 12/03/2024, phone 555-123-4567.\n", encoding="utf-8")
    grounding, notes = read_evidence([str(path)], EvidenceSettings(), redact=True)
    assert grounding.evidence is not None
    text = grounding.evidence.passages[0].text
    assert "John Smith" not in text and "12/03/2024" not in text and "555-123-4567" not in text and "[NAME]" in text
    assert notes == ["evidence redacted before indexing: 1 date, 1 name, 1 phone"]
    assert grounding.evidence.files[0].redactions == {"date": 1, "name": 1, "phone": 1}


@pytest.mark.model
@needs_chromium
def test_a_bundled_model_debate_with_evidence_runs_end_to_end_and_its_report_loads_nothing(tmp_path: Path) -> None:
    folder = evidence_folder(tmp_path)
    db = tmp_path / "journal.db"
    definition, sample = FIRST["evince"]
    # One claim per reply: the grammar's room for claims is what a reply may take (a 135M model fills it).
    args = [*cli_args(definition, sample, "smollm2-135m"), "--evidence", str(folder), "--evidence-claims", "1", "--seed", "5",
            "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "160"}
    done = subprocess.run([sys.executable, "-m", "tui.cli", "run", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "evidence: 3 files (case/chart.txt, case/guideline.docx, case/labs.pdf), 12 passages" in " ".join(done.stderr.split())
    with Journal(db) as journal:
        debate_id = journal.conn.execute("SELECT id FROM debates").fetchone()[0]
        debate = Queries(journal).debate(debate_id)
    assert debate is not None and debate["status"] == "finished"
    assert len(debate["evidence"]["passages"]) == 12
    debaters = [t for t in debate["turns"] if t["role"] in ("agent-a", "agent-b")]
    assert debaters and all("Evidence: passages from the user's files" in (t["request"] or "") for t in debaters)
    assert all('In "claims", list each factual claim' in (t["request"] or "") for t in debaters)
    # The grammar requires "claims", so a reply the model ended itself lists them; one cut at the reply
    # limit may stop before reaching them (a 135M model can loop in "arguments" on another CPU's floats).
    finished = [t for t in debaters if t["finish_reason"] == "stop"]
    assert all('"claims"' in t["raw"] for t in finished), [t["raw"] for t in finished]
    page = tmp_path / "report.html"
    assert main(["report", debate_id, "--out", str(page), "--db", str(db)]) == 0
    with recording_server() as (_, hits):
        opened = chromium(page, "--dump-dom", "--virtual-time-budget=3000")
        assert hits == []
    assert opened.console == [], opened.console
    assert 'id="sources"' in opened.stdout and debate["evidence"]["files"][0]["sha256"] in opened.stdout


class Cut(Exception):
    pass


class CuttingJournal(Journal):
    def __init__(self, path: Path, at: int) -> None:
        super().__init__(path)
        self.at, self.n = at, 0

    def record(self, event: Any) -> int | None:
        row = super().record(event)
        if counted(event):
            self.n += 1
            if self.n == self.at:
                raise Cut
        return row


def _prompts(db: Path) -> list[tuple[str, str, str]]:
    """Every model call the journal kept, in order: (role, kind, SHA-256 of its prompt)."""
    with Journal(db) as journal:
        return [tuple(r) for r in journal.conn.execute("SELECT role, kind, prompt_sha256 FROM replies ORDER BY id")]


@pytest.mark.model
def test_a_bundled_model_debate_with_evidence_resumes_with_the_prompts_of_an_uninterrupted_run(tmp_path: Path, smollm) -> None:
    """Greedy decoding on the real model: a run cut halfway, its evidence file then changed on
    disk, resumes from the journal and makes every call of the uninterrupted run with the same
    prompt, to the end, and says every turn as it said it: prompts are built from the journalled
    turns and passages, not from the file, and each journalled reply is fed back to its resumed
    session as the tokens it was generated as (re-tokenized, a reply came back 42 tokens shorter
    and the debates parted at the next call)."""
    folder = evidence_folder(tmp_path)
    definition, sample = FIRST["evince"]
    spec = spec_of("evince")
    values = form_values(spec, sample, {**sample.on_model, "evidence": str(folder), "max_rounds": "1", "evidence_claims": "1"})
    roles = spec.roles_for(values)
    options = SamplingOptions(max_tokens=40, temperature=0.0, seed=5)

    def agents(run: str) -> dict[str, Agent]:
        return {role: Agent(role, smollm, options, session_key=f"{role}-{run}") for role in roles}

    async def person(prompt: str) -> str:
        return ""

    async def straight() -> None:
        with Journal(tmp_path / "straight.db") as journal:
            await drive(spec.build(values, agents("straight"), "d1", CommandChannel(), person), journal)

    asyncio.run(straight())
    whole = _prompts(tmp_path / "straight.db")
    with Journal(tmp_path / "straight.db") as journal:
        recorded = Queries(journal).debate("d1")
    assert recorded is not None and recorded["status"] == "finished"
    turns, at = recorded["turns"], recorded["events_recorded"] // 2  # cut halfway, after the evidence and a turn

    before: list[tuple[str, str, str]] = []
    said_before: list[str] = []

    async def cut_then_resume() -> None:
        with CuttingJournal(tmp_path / "cut.db", at) as journal:
            with pytest.raises(Cut):
                await drive(spec.build(values, agents("cut"), "d1", CommandChannel(), person), journal)
        before.extend(_prompts(tmp_path / "cut.db"))
        with Journal(tmp_path / "cut.db") as journal:
            cut = Queries(journal).debate("d1")
        assert cut is not None
        said_before.extend(t["text"] for t in cut["turns"])
        (folder / "chart.txt").write_text("Nothing about creatinine.\n", encoding="utf-8")  # the journal's passages rule
        with Journal(tmp_path / "cut.db") as journal:
            debate = Queries(journal).debate("d1")
            assert debate is not None
            resumed, _ = resumable(debate)
            final = await drive(resumed.resume(debate, agents("resumed"), CommandChannel(), person), journal)
            assert final is not None and final.status == "finished"

    asyncio.run(cut_then_resume())
    assert 0 < len(before) < len(whole)
    assert _prompts(tmp_path / "cut.db") == whole
    with Journal(tmp_path / "cut.db") as journal:
        again = Queries(journal).debate("d1")
    assert again is not None and again["status"] == "finished"
    assert said_before and said_before == [t["text"] for t in turns][:len(said_before)]  # greedy: the same turns
    assert [t["text"] for t in again["turns"]] == [t["text"] for t in turns]  # nothing said again, nothing said otherwise
