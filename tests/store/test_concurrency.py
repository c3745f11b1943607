"""Several writers on one journal: the app and a headless run, and two debates in one process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import Input, Select

from backends.base import SamplingOptions
from protocols import evince
from protocols.core.agents import Agent
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.form import fill_examples
from tests.helpers.paths import REPO
from tui.app.app import SymposiumApp
from tui.app.screens.debate import DebateScreen
from tui.app.screens.new_debate import NewDebateScreen

LABELS = LabelSet(["Malaria", "Dengue", "Typhoid", "Common Cold"])
OPTS = SamplingOptions(max_tokens=40, temperature=0.7, seed=3)


def assert_complete(journal: Journal, debate_id: str, rounds: int) -> None:
    debate = Queries(journal).debate(debate_id)
    assert debate is not None and debate["status"] == "finished", debate and debate["status"]
    turns = [t for t in debate["turns"] if t["kind"] in ("opening", "refutation")]
    assert [t["seq"] for t in debate["turns"]] == list(range(1, len(debate["turns"]) + 1))
    assert sorted((t["round"], t["role"]) for t in turns) == sorted(
        (r, role) for r in range(rounds) for role in ("agent-a", "agent-b"))
    calls = {c["turn_id"] for c in debate["model_calls"] if c["turn_id"] is not None}
    assert {t["id"] for t in debate["turns"]} == calls  # every turn has its own call row


async def test_two_debates_in_one_process_share_a_journal(smollm, tmp_path: Path) -> None:
    def run(debate_id: str, case: str):
        config = evince.EvinceConfig(case=case, labels=LABELS, max_rounds=1, recommendations=False, turn_tokens=40,
                                     crit_tokens=40, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
        agents = evince.EvinceAgents(*(Agent(role, smollm, OPTS, session_key=f"{debate_id}/{role}")
                                       for role in ("agent-a", "agent-b", "judge")))
        return evince.run(config, agents, debate_id=debate_id)

    with Journal(tmp_path / "j.db") as journal:
        await asyncio.gather(drive(run("one", "fever and chills"), journal),
                             drive(run("two", "runny nose and sneezing"), journal))
        for debate_id in ("one", "two"):
            assert_complete(journal, debate_id, rounds=2)


def writes_in_time(journal: Journal) -> list[tuple[float, str]]:
    """(when, debate) of every turn and call row, in the order they were written."""
    rows = journal.conn.execute("SELECT created_at, debate_id FROM model_calls ORDER BY created_at, id")
    return [(r[0], r[1]) for r in rows]


def alternations(order: list[str]) -> int:
    """How many times the writer changes along the journal's time line (A A B A B B: 3)."""
    return sum(1 for x, y in zip(order, order[1:]) if x != y)


def test_alternations_counts_changes_of_writer() -> None:
    assert alternations(["a", "a", "b", "a", "b", "b"]) == 3
    assert alternations(["a", "a", "b", "b"]) == 1


@pytest.mark.timeout(1200)  # two processes sharing the CPUs, one waiting for the other to begin
@pytest.mark.model
async def test_the_app_and_a_headless_run_write_one_journal_at_once(registry, tmp_path: Path, monkeypatch) -> None:
    """The headless run (three rounds) is started first; the app starts its debate once the
    headless run has journalled a turn, so the two write at once. Their rows must interleave on
    the journal's time line (one writer's rows between two of the other's), and both debates
    must be whole."""
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))
    db = tmp_path / "shared.db"
    env = {**os.environ, "SYMPOSIUM_DB": str(db)}
    headless = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "run", "evince", "--case", "fever and chills", "--labels",
         str(REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"), "--agent-a", "smollm2-135m", "--agent-b",
         "smollm2-135m", "--judge", "smollm2-135m", "--max-rounds", "2", "--turn-tokens", "24", "--crit-tokens", "24",
         "--eps-wd", "0", "--eps-mi", "0", "--eps-jsd", "0", "--eps-crit", "0"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    app = SymposiumApp(journal=Journal(db), registry=registry)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and headless.poll() is None:  # the headless run is writing
        if db.exists() and app.journal.conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0] > 0:
            break
        await asyncio.sleep(0.2)
    assert headless.poll() is None, "the headless run ended before the app started: nothing to overlap"
    async with app.run_test(size=(140, 42)) as pilot:
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        fill_examples(form)  # a new form is blank: the case is typed, as a person would
        form.query_one("#field-agent-b", Select).value = "smollm2-135m"
        for field, value in (("max_rounds", "1"), ("turn_tokens", "24"), ("crit_tokens", "24"), ("eps_wd", "0"), ("eps_mi", "0"), ("eps_jsd", "0"), ("eps_crit", "0")):
            form.query_one(f"#field-{field}", Input).value = value
        await pilot.press("ctrl+s")
        debate = app.screen
        assert isinstance(debate, DebateScreen)
        deadline = time.monotonic() + 600
        while debate.finished is None and time.monotonic() < deadline:
            await pilot.pause(0.5)
        app_debate = debate.debate_id
    out, err = headless.communicate(timeout=600)
    assert headless.returncode == 0, err
    headless_debate = out.rsplit("journalled as", 1)[1].split()[0]
    with Journal(db) as journal:
        assert journal.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert_complete(journal, app_debate, rounds=2)
        assert_complete(journal, headless_debate, rounds=3)
        order = [debate for _, debate in writes_in_time(journal)]
    app.journal.close()
    assert set(order) == {app_debate, headless_debate}
    # headless … app … headless (at least): one wrote between two writes of the other, i.e.
    # while the other was mid-debate; a run after the other would give one change of writer.
    assert alternations(order) >= 2, order
