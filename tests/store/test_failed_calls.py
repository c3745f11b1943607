"""A model call that fails is journalled with its error, beside the finished turns before it.

``model_calls.error`` was never written: a backend dying mid-reply left the debate marked
failed but no row said which call failed or why. Scripted backends fail on cue here (a real
server dying is covered by ``tests/backends/test_openai_backend.py``); the journal is a real file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from backends.base import BackendError, SamplingOptions
from protocols import evince
from protocols.core.agents import Agent
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from tests.helpers.scripted_backends import Fail, ScriptedBackend

OPTS = SamplingOptions(max_tokens=64, temperature=0.0, seed=1)
LABELS = LabelSet(["Malaria", "Dengue", "Typhoid"])
REPLY = '{"predictions": [{"label": "Malaria", "probability": 0.7, "argument": "a"}, {"label": "Dengue", "probability": 0.3, "argument": "b"}], "arguments": []}'
CRIT = '{"claim": "x", "reasons": [], "rival_reasons": [], "score": 6, "justification": "fair"}'


async def _run(tmp_path: Path, b_replies: list, judge_replies: list) -> sqlite3.Connection:
    agents = evince.EvinceAgents(Agent("agent-a", ScriptedBackend("scripted-a", [REPLY] * 5), OPTS),
                                 Agent("agent-b", ScriptedBackend("scripted-b", b_replies), OPTS),
                                 Agent("judge", ScriptedBackend("scripted-judge", judge_replies), OPTS))
    config = evince.EvinceConfig(case="fever", labels=LABELS, max_rounds=2, recommendations=False,
                                 eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    with Journal(tmp_path / "j.db") as journal:
        with pytest.raises(BackendError, match="connection reset"):
            await drive(evince.run(config, agents, debate_id="f1"), journal)
    conn = sqlite3.connect(tmp_path / "j.db")
    conn.row_factory = sqlite3.Row
    return conn


async def test_a_turn_that_fails_mid_reply_is_journalled_with_its_error(tmp_path: Path) -> None:
    conn = await _run(tmp_path, [REPLY, Fail("connection reset by the server", partial='{"predictions": [')],
                      [CRIT] * 10)
    [failed] = conn.execute("SELECT * FROM model_calls WHERE error IS NOT NULL").fetchall()
    assert failed["role"] == "agent-b" and failed["purpose"] == "turn" and failed["round"] == 1
    assert "connection reset by the server" in failed["error"] and failed["finish_reason"] == "error"
    assert failed["turn_id"] is None and failed["completion_tokens"] == 0
    assert conn.execute("SELECT status FROM debates").fetchone()[0] == "failed"
    assert conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == 3  # round 0 both, round 1 agent A
    assert conn.execute("SELECT COUNT(*) FROM model_calls WHERE error IS NULL AND purpose = 'turn'").fetchone()[0] == 3


async def test_a_judge_call_that_fails_is_journalled_with_its_error(tmp_path: Path) -> None:
    conn = await _run(tmp_path, [REPLY] * 5, [CRIT, Fail("connection reset while judging")])
    [failed] = conn.execute("SELECT * FROM model_calls WHERE error IS NOT NULL").fetchall()
    assert failed["role"] == "judge" and failed["purpose"] == "crit"
    assert "connection reset while judging" in failed["error"]
    assert conn.execute("SELECT status FROM debates").fetchone()[0] == "failed"
