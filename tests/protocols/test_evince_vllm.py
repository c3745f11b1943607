"""An EVINCE debate with both agents and the CRIT judge on vLLM's real engine (SmolLM2, the
session's engine: ``make test-vllm``), journalled like any other, cut off and resumed.

Real model, so only what a 135M model can promise whatever it writes is asserted: the debate
reaches its end, every turn and judgement is journalled with the vllm backend named, the
resumed debate keeps the turns written before the cut and finishes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.base import Backend, SamplingOptions
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import Event, TurnFinished
from protocols.core.params import build
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries

pytestmark = pytest.mark.vllm

LABELS = LabelSet(["Malaria", "Typhoid", "Dengue", "Influenza"])
CASE = "Fever with shaking chills every other day, drenching sweats and headache, two weeks after a trip to Ghana."


def agents(backend: Backend, tag: str) -> evince.EvinceAgents:
    options = SamplingOptions(temperature=0.7, seed=3, max_tokens=96)
    return evince.EvinceAgents(*(Agent(role, backend, options, session_key=f"{tag}/{role}")
                                 for role in ("agent-a", "agent-b", "judge")))


def config() -> evince.EvinceConfig:
    return build(evince.EvinceConfig, {"case": CASE, "labels": LABELS, "max_rounds": 2}, profile="small")


class Cut(Exception):
    """The process dying right after a journal write."""


async def test_an_evince_debate_on_vllm_runs_to_its_end_and_is_journalled(vllm_smollm: Backend, tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.db") as journal:
        final = await drive(evince.run(config(), agents(vllm_smollm, "whole"), debate_id="on-vllm"), journal)
        debate = Queries(journal).debate("on-vllm")
    assert final is not None and final.status == "finished", final
    assert debate is not None and debate["status"] == "finished"
    assert {p["role"]: p["backend"] for p in debate["participants"]} == {"agent-a": "vllm", "agent-b": "vllm", "judge": "vllm"}
    assert {t["role"] for t in debate["turns"]} >= {"agent-a", "agent-b"}
    assert all(t["text"] for t in debate["turns"])
    assert debate["judgements"], "the CRIT judge on vLLM judged no turn"


async def test_an_evince_debate_on_vllm_cut_off_resumes_to_its_end(vllm_smollm: Backend, tmp_path: Path) -> None:
    db = tmp_path / "journal.db"

    def cut_after_the_first_refutation(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.round == 1:
            raise Cut

    with Journal(db) as journal:
        with pytest.raises(Cut):
            await drive(evince.run(config(), agents(vllm_smollm, "cut"), debate_id="cut-on-vllm"), journal,
                        cut_after_the_first_refutation)
        before = Queries(journal).debate("cut-on-vllm")
    assert before is not None and before["status"] == "running"
    kept = [(t["seq"], t["text"]) for t in before["turns"]]
    with Journal(db) as journal:
        final = await drive(evince.resume(before, agents(vllm_smollm, "resumed")), journal)
        after = Queries(journal).debate("cut-on-vllm")
    assert final is not None and final.status == "finished", final
    assert after is not None and after["status"] == "finished"
    assert [(t["seq"], t["text"]) for t in after["turns"]][: len(kept)] == kept, "the turns before the cut changed"
    assert len(after["turns"]) > len(kept)
