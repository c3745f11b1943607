"""One EVINCE debate with its agents on different serving technologies at once: agent A on
llama.cpp in process, agent B on the openai backend talking to a real ``llama_cpp.server``,
the judge on llama.cpp. The protocol cannot tell them apart; the journal records which is which.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from backends.openai_compat import OpenAIBackend
from protocols import evince
from protocols.core.agents import Agent
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.evince_rounds import assert_parsed_where_readable, says_no_prediction
from tests.helpers.paths import dev_csv

OPTS = SamplingOptions(max_tokens=96, temperature=0.7, seed=5)


async def test_evince_with_agent_a_in_process_and_agent_b_over_http(
    smollm: LlamaCppBackend, openai_smollm: OpenAIBackend, tmp_path: Path
) -> None:
    with dev_csv().open() as fh:
        rows = list(csv.DictReader(fh))
    labels = LabelSet(list(dict.fromkeys(r["disease"].strip() for r in rows)))
    row = next(r for r in rows if r["disease"].strip() == "Jaundice")
    config = evince.EvinceConfig(case="Symptoms: " + row["symptoms"].replace("_", " ").replace(";", ", "), labels=labels,
                                 max_rounds=0, recommendations=False, turn_tokens=64, crit_tokens=96)
    agents = evince.EvinceAgents(Agent("agent-a", smollm, OPTS), Agent("agent-b", openai_smollm, OPTS), Agent("judge", smollm, OPTS))
    with Journal(tmp_path / "mixed.db") as journal:
        final = await drive(evince.run(config, agents, debate_id="mixed"), journal)
        debate = Queries(journal).debate("mixed")
    assert final is not None and final.status == "finished"
    assert debate is not None
    backends = {p["role"]: p["backend"] for p in debate["participants"]}
    assert backends == {"agent-a": "llamacpp", "agent-b": "openai", "judge": "llamacpp"}
    turns = {t["role"]: t for t in debate["turns"] if t["kind"] == "opening"}
    assert set(turns) == {"agent-a", "agent-b"}
    for turn in turns.values():  # whether a 64-token turn holds a whole prediction is the model's affair
        assert turn["raw"] and turn["completion_tokens"] > 0
        assert (turn["distribution"] and sum(turn["distribution"].values()) == pytest.approx(1.0)) \
            or says_no_prediction(turn["parse_notes"])
    # A parser that rejected everything would pass the line above: each turn whose raw reply holds
    # a whole prediction (read independently) must be parsed, and one of the two must hold one.
    assert_parsed_where_readable(turns.values(), labels.labels)
    both = all(t["distribution"] for t in turns.values())
    assert bool(debate["metrics"]) == both and (not both or debate["metrics"][0]["jsd"] is not None)
    calls = {c["role"] for c in debate["model_calls"]}
    assert {"agent-a", "agent-b", "judge"} <= calls
