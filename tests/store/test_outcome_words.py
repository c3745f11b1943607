"""The outcome said in words: ``symposium show``, the Markdown export and
Home's outcome column all read :func:`protocols.core.outcome.outcome_in_words`.

The debate is a real EVINCE run journalled in a real SQLite file, on scripted beliefs: the
agents stop moving while they disagree ("settled without agreement"), which a real model
cannot be made to do on cue. Its combined distribution still has a top label (Dengue): what
was shown as the outcome before, as if the debate had concluded it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from outputs.export import to_markdown
from outputs.markdown_text import inline
from protocols.core.outcome import moderator_action, outcome_in_words
from store.journal import Journal
from store.queries import Queries
from tests.helpers.settled_apart import SAID, settled_apart


async def test_a_debate_that_settled_apart_is_not_said_to_have_concluded_its_top_label(tmp_path: Path) -> None:
    debate = await settled_apart(tmp_path / "j.db")
    said = outcome_in_words(debate)
    assert said.short == "no agreement (leaning Dengue)"
    assert said.conclusion.startswith("The agents settled without agreement after the opening round and 1 refutation round")
    assert "leans to Dengue" in said.conclusion
    assert said.ending.startswith("Finished: settled without agreement")
    assert said.moderator == (f"In round 1 the moderator said to every participant: “{SAID}”",)
    rows = {r["id"]: r for r in Queries(Journal(tmp_path / "j.db")).debates()}
    assert outcome_in_words(rows["apart0001"]).short == said.short  # Home's row says the same as the full debate


async def test_the_markdown_export_says_the_outcome_and_the_moderator_in_words(tmp_path: Path) -> None:
    md = to_markdown(await settled_apart(tmp_path / "j.db"))
    outcome = md.split("## Outcome", 1)[1]
    assert "```" not in outcome and '"ending"' not in md and '{"to"' not in md  # no JSON left
    assert "The agents settled without agreement" in outcome and "Finished: settled without agreement" in outcome
    assert "symposium export apart000 --format json" in outcome  # where the figures are
    moderator = md.split("## Moderator", 1)[1].split("## Outcome", 1)[0]
    # Escaped so that a Markdown viewer shows the brackets as typed rather than reading them
    assert f"- In round 1 the moderator said to every participant: “{inline(SAID)}”" in moderator
    assert inline(SAID) == r"Ask about \[b\]travel\[/b\] history."


async def test_symposium_show_prints_the_outcome_in_words(tmp_path: Path) -> None:
    await settled_apart(tmp_path / "j.db")
    env = {**os.environ, "SYMPOSIUM_DB": str(tmp_path / "j.db"), "COLUMNS": "120",
           "SYMPOSIUM_CONFIG_DIR": str(tmp_path / "config")}
    shown = subprocess.run([sys.executable, "-m", "tui.cli", "show", "apart0"], capture_output=True, text=True, env=env,
                           timeout=120, check=False)
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(shown.stdout.split())
    assert "The agents settled without agreement" in flat and "leans to Dengue" in flat
    assert "the moderator said to every participant" in flat and '"refutation_rounds"' not in flat


@pytest.mark.parametrize(("kind", "payload", "expected"), [
    ("set_contentiousness", {"value": 0.8}, "In round 2 the moderator set contentiousness to 0.80."),
    ("interject", {"to": "agent-b", "text": "why?"}, "In round 2 the moderator said to agent-b: “why?”"),
    ("skip_to_conclusion", {}, "In round 2 the moderator skipped to the conclusion."),
    ("stop", {"reason": "stopped by the moderator"}, "In round 2 the moderator stopped the debate (stopped by the moderator)."),
    ("verdict", {"accept": False, "note": "wrong"}, "The moderator rejected the outcome: “wrong”"),
])
def test_each_moderator_action_reads_as_a_sentence(kind: str, payload: dict, expected: str) -> None:
    assert moderator_action(kind, payload, 2) == expected


@pytest.mark.parametrize(("protocol", "outcome", "short", "words"), [
    ("agreement", {"stages": [{"name": "criteria", "rounds": 2, "agreed": True}, {"name": "options", "rounds": 3, "agreed": False}]},
     "1 of 2 stages agreed", "reached agreement in 1 of 2 stages (criteria). Still open: options."),
    ("deliberation", {"turns": 7, "selections": {"rule": 5, "moderator": 2, "fallback": 0}},
     "7 turns, no verdict", "Speakers were chosen 5 by rule and 2 by moderator."),
    ("humanloop", {"decision": None}, "no majority", "without a majority"),
    ("d3", {"verdict": "B", "passes": [{"tally": {"A": 1, "B": 2}, "decided_by": "majority"}],
            "swap_audit": {"held": False}}, "answer B", "did not hold"),
    ("evince", {"ending": "cap", "top": "Zika", "final_distribution": {"Zika": 0.4}, "refutation_rounds": 3},
     "not converged (leaning Zika)", "round cap ended the debate before it converged after the opening round and 3 refutation rounds"),
    ("socrasynth", {"stances": {"agent-a": "for", "agent-b": "against"}, "evaluation": {"winner": "tie"}, "rounds": [{}, {}]},
     "judges: a tie", "both sides equally strong after 2 rounds"),
])
def test_each_protocol_says_what_it_concluded(protocol: str, outcome: dict, short: str, words: str) -> None:
    said = outcome_in_words({"protocol": protocol, "status": "finished", "stop_reason": "done", "outcome": outcome})
    assert said.short == short and words in said.conclusion, said


def test_a_debate_that_concluded_nothing_says_how_it_ended() -> None:
    failed = outcome_in_words({"protocol": "evince", "status": "failed", "stop_reason": "server at 127.0.0.1 answered 503",
                               "outcome": {}})
    assert failed.conclusion == "" and failed.ending == "Failed: server at 127.0.0.1 answered 503."
    assert failed.short == "server at 127.0.0.1 answered 503"  # Home: the status column says "failed" beside it
    stopped = outcome_in_words({"protocol": "d3", "status": "stopped", "stop_reason": "stopped by the moderator",
                                "outcome": {"verdict": "A", "passes": []}})
    assert stopped.short == "stopped; answer A"
    cut = outcome_in_words({"protocol": "evince", "status": "interrupted",
                            "stop_reason": "interrupted before the end (resumable)", "outcome": {}})
    assert cut.ending == "Interrupted: before the end (resumable)."
    assert cut.short == "before the end (resumable)"  # not "interrupted" again beside the status column
