"""The human-in-the-loop panel (Triem) end to end: real bundled models, a scripted human seat
from a file, the stance of every step and its changes read back from a real journal, and the
headless command with the human seat typed on stdin."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from backends.base import SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols import humanloop
from protocols.core.agents import Agent
from protocols.humanloop import HumanloopAgents, HumanloopConfig, HumanScript, HumanSeat
from protocols.humanloop.stance import HALLUCINATION, LEGAL_LABELS, NONE
from protocols.humanloop.study import stances as stance_study
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tui.cli import main

OPTS = SamplingOptions(max_tokens=40, temperature=0.7, seed=7)
SMALL = HumanloopConfig.SMALL_MODEL_PROFILE  # the bundled models' profile
CASE = ("The doctor recorded patients' conversations in treatment rooms as part of a training program and was "
        "convicted of intercepting oral communications. On appeal he argues the statute is unconstitutionally "
        "vague because it does not define 'consent'.")
SCRIPT = """stance: reverse
The statute never defines consent, so the doctor had no fair notice of what was forbidden. I would reverse.
---
Nothing said so far cures the lack of notice. I still vote to reverse the conviction.
"""
ALLOWED = {*LEGAL_LABELS, NONE, HALLUCINATION}


def test_a_script_has_an_optional_fixed_stance_and_statements_separated_by_dashes() -> None:
    script = HumanScript.parse(SCRIPT)
    assert script.stance == "reverse" and len(script.turns) == 2
    assert script.turn(1).startswith("The statute") and script.turn(3) == script.turn(2)  # the last is restated
    assert HumanScript.parse("Just one opinion.").stance is None
    with pytest.raises(ValueError, match="no statements"):
        HumanScript.parse("stance: affirm\n---\n")
    with pytest.raises(ValueError, match="not one of"):
        HumanloopConfig(case=CASE, human=HumanSeat(script=HumanScript.parse("stance: overrule\nNo.")))
    with pytest.raises(ValueError, match="always added"):
        HumanloopConfig(case=CASE, labels=("yes", "None"))
    with pytest.raises(ValueError, match="counts from 1"):
        HumanloopConfig(case=CASE, human=HumanSeat(position=0, script=script))


def test_seats_are_named_as_in_appendix_i_or_blind(smollm: LlamaCppBackend) -> None:
    agents = HumanloopAgents([Agent("x", smollm, OPTS), Agent("y", smollm, OPTS)], Agent("c", smollm, OPTS))
    script = HumanScript.parse(SCRIPT)
    shown = humanloop.Humanloop(HumanloopConfig(case=CASE, human=HumanSeat(position=1, script=script)), agents, debate_id="n1")
    blind = humanloop.Humanloop(HumanloopConfig(case=CASE, human=HumanSeat(position=2, blind=True, script=script)), agents, debate_id="n2")
    ai_only = humanloop.Humanloop(HumanloopConfig(case=CASE), agents, debate_id="n3")
    assert [(s.role, s.name) for s in shown.seats] == [("human", "Human Judge"), ("agent-1", "AI Judge 1"), ("agent-2", "AI Judge 2")]
    assert [(s.role, s.name) for s in blind.seats] == [("agent-1", "Judge 1"), ("human", "Judge 2"), ("agent-2", "Judge 3")]
    assert [s.name for s in ai_only.seats] == ["Judge 1", "Judge 2"]
    with pytest.raises(ValueError, match="human_turn"):
        humanloop.Humanloop(HumanloopConfig(case=CASE, human=HumanSeat()), agents, debate_id="n4")


async def test_panels_with_and_without_a_scripted_human_journal_stances_and_their_changes(
    smollm: LlamaCppBackend, gemma: LlamaCppBackend, tmp_path: Path
) -> None:
    script_file = tmp_path / "human.txt"
    script_file.write_text(SCRIPT, encoding="utf-8")
    seat = HumanSeat(script=HumanScript.from_file(script_file))
    panel = HumanloopAgents([Agent("a", smollm, OPTS), Agent("b", gemma, OPTS)], Agent("clerk", gemma, OPTS))
    runs = {
        "ai-only": humanloop.Humanloop(HumanloopConfig(case=CASE, **{**SMALL, "rounds": 2, "turn_tokens": 40}), panel, debate_id="hl-ai"),
        "human": humanloop.Humanloop(HumanloopConfig(case=CASE, **{**SMALL, "rounds": 2, "turn_tokens": 40}, human=seat), panel, debate_id="hl-human"),
    }
    with Journal(tmp_path / "j.db") as journal:
        finals = {name: await drive(run.run(), journal) for name, run in runs.items()}
        report = stance_study(Queries(journal).debates_of(["humanloop"]))
        debates = {run.debate_id: Queries(journal).debate(run.debate_id) for run in runs.values()}

    for name, run in runs.items():
        final, debate = finals[name], debates[run.debate_id]
        assert final is not None and final.status == "finished" and debate is not None
        seats = [s.role for s in run.seats]
        stances = [j for j in debate["judgements"] if j["kind"] == "stance"]
        assert [(j["round"], j["target"]) for j in stances] == [(r, role) for r in (1, 2) for role in seats]  # every step
        for j in stances:
            assert j["verdict"] in ALLOWED or (j["verdict"] is None and j["reasons"]["rejected"])
        clerk_calls = [c for c in debate["model_calls"] if c["purpose"] == "stance"]
        assert all(c["role"] == "clerk" for c in clerk_calls)
        analysis = report["debates"][run.debate_id]
        assert analysis == debate["outcome"]["analysis"]  # the journal reproduces the run's own analysis
        assert len(analysis["transitions"]) == 2  # two AI seats, one round transition
        for t in analysis["transitions"]:
            # Triem's affirm / not-affirm coding: only crossing between "affirm" and the rest counts
            assert t["changed"] is None or t["changed"] == ((t["from"] == "affirm") != (t["to"] == "affirm"))

    human = debates["hl-human"]
    human_steps = [j for j in human["judgements"] if j["kind"] == "stance" and j["target"] == "human"]
    assert [j["verdict"] for j in human_steps] == ["reverse", "reverse"]  # the script's fixed stance, no model call
    assert all(j["judge_role"] == "script" and j["reasons"]["speaker"] == "Human Judge" for j in human_steps)
    human_turns = [t for t in human["turns"] if t["role"] == "human"]
    assert [t["text"] for t in human_turns] == list(seat.script.turns) and all(t["model_id"] == "human" for t in human_turns)
    assert not [c for c in human["model_calls"] if c["role"] == "human"]
    assert {"role": "human", "model_id": "human", "backend": "human"}.items() <= human["participants"][2].items()
    # In round 2 every AI seat read the round-1 log, the person shown as "Human Judge" (Appendix i, phase 3).
    round2 = runs["human"].messages["agent-1"][3].content
    assert "Human Judge:" in round2 and "AI Judge 2:" in round2 and "no fair notice" in round2
    assert all(t["human_stance"] == "reverse" for t in report["debates"]["hl-human"]["transitions"])
    assert all(t["human_stance"] is None for t in report["debates"]["hl-ai"]["transitions"])
    # KV cache reuse: an AI seat's second turn extends its own append-only history.
    seat_calls = [c for c in human["model_calls"] if c["role"] == "agent-1"]
    assert seat_calls[1]["prompt_tokens_evaluated"] < seat_calls[1]["prompt_tokens"]
    assert set(report["by_condition"]) == {"AI only", "human present"}
    for row in report["by_condition"].values():
        assert row["debates"] == 1 and row["opportunities"] <= 2 and row["changes"] <= row["opportunities"]
    assert json.loads(json.dumps(report)) == report


@pytest.mark.model
def test_headless_command_reads_the_human_seat_from_stdin_and_prints_the_stance_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    confirmations = tmp_path / "confirm.txt"
    confirmations.write_text("\nreverse\n", encoding="utf-8")  # step 1: accept the clerk; step 2 (the human): reverse
    db = tmp_path / "cli.db"
    monkeypatch.setattr("sys.stdin", io.StringIO("\nThe conviction cannot stand: consent was never defined.\nReverse.\n\n"))
    assert main(["--db", str(db), "run", "humanloop", "--case", CASE, "--agents", "gemma3-270m", "--rounds", "1",
                 "--human", "--confirm", str(confirmations), "--turn-tokens", "40", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Stance analysis" in out and "human present" in out and "Human Judge" in out
    with Journal(db) as journal:
        debate = Queries(journal).debate(Queries(journal).debates()[0]["id"])
    assert debate is not None and debate["protocol"] == "humanloop"
    turn = next(t for t in debate["turns"] if t["role"] == "human")
    assert turn["text"] == "The conviction cannot stand: consent was never defined.\nReverse."
    stance = next(j for j in debate["judgements"] if j["kind"] == "stance" and j["target"] == "human")
    assert stance["verdict"] == "reverse" and stance["judge_role"] == "clerk"
    assert stance["reasons"]["confirmation"] in ("confirmed", "changed by the person")
