"""Several writers on one journal: the app and a headless run, and two debates in one process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from textual.widgets import Input, Select

from backends.base import SamplingOptions
from protocols import evince
from protocols.agents import Agent
from protocols.labels import LabelSet
from store.journal import Journal
from store.queries import Queries
from tests.helpers.paths import REPO
from tui.app.app import SymposiumApp
from tui.headless.runner import drive
from tui.app.screens.debate import DebateScreen

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


async def test_the_app_and_a_headless_run_write_one_journal_at_once(registry, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))
    db = tmp_path / "shared.db"
    env = {**os.environ, "SYMPOSIUM_DB": str(db)}
    headless = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "run", "evince", "--case", "fever and chills", "--labels",
         str(REPO / "tui" / "data" / "symptom2disease_labels.txt"), "--agent-a", "smollm2-135m", "--agent-b",
         "smollm2-135m", "--judge", "smollm2-135m", "--max-rounds", "1", "--turn-tokens", "40", "--crit-tokens", "40"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    app = SymposiumApp(journal=Journal(db), registry=registry)
    async with app.run_test(size=(140, 42)) as pilot:
        await pilot.press("n")
        form = app.screen
        form.query_one("#field-agent-b", Select).value = "smollm2-135m"
        for field, value in (("max_rounds", "1"), ("turn_tokens", "40"), ("crit_tokens", "40"), ("eps_wd", "0"), ("eps_mi", "0"), ("eps_jsd", "0"), ("eps_crit", "0")):
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
        assert_complete(journal, headless_debate, rounds=2)
    app.journal.close()
