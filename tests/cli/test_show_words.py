"""``symposium show`` says what happened in sentences, not data: a real journal written in
process, the real command as a subprocess at 200 columns. Each sentence was read wrong in a
walk-through: a resume printed as "the moderator: resume debate (from_round: 2)", a rejected
verdict ran into its note, "," counted as a recommendation, the opening called "unmodulated",
a turn's probabilities run into its arguments, a judges' half no judge scored totalled 0.00."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from protocols.core.events import DebateFinished, DebateResumed, JudgementMade, ModeratorActed, TurnFinished
from protocols.socrasynth import tally
from store.journal import Journal
from tests.helpers.cli_process import symposium
from tests.helpers.sample_debate import _call, sample_events
from tests.helpers.sample_socrasynth import sample_socrasynth


def _evince(journal: Journal) -> None:
    events = sample_events("words0001aa", rounds=2)
    finished = events.pop()
    assert isinstance(finished, DebateFinished)
    for event in events:
        journal.record(event)
    journal.record(DebateResumed("words0001aa", 1))
    recs = {"questions": ["Has the patient travelled?", ",", ",", ","], "tests": ["Dengue serology", "."]}
    journal.record(TurnFinished("words0001aa", "agent-a", "smollm2-135m", "conciliatory", 2, "recommendations",
                                "? Has the patient travelled?\n? ,\n? ,\n? ,\n+ Dengue serology\n+ .", "{}",
                                _call("agent-a", "smollm2-135m", 20), recs, (), None, 0.3))
    journal.record(ModeratorActed("words0001aa", "verdict", {"accept": False, "note": "Dengue is implausible here; no travel"}, 2))
    journal.record(dataclasses.replace(finished, outcome={**finished.outcome, "recommendations": recs}))


def _socrasynth_with_a_silent_judge(journal: Journal) -> None:
    """SocraSynth's sample, judge-2 giving no score when agent B argues."""
    events = sample_socrasynth("words0002bb")
    kept = [e for e in events if not (isinstance(e, JudgementMade) and e.judge_role == "judge-2"
                                      and isinstance(e.reasons, dict) and e.reasons.get("alignment") == "b_argues")]
    finished = kept.pop()
    assert isinstance(finished, DebateFinished)
    evaluation = dict(finished.outcome["evaluation"])
    alignments = {a: {j: {k: dict(cells) for k, cells in rows.items()} for j, rows in judges.items()}
                  for a, judges in evaluation["alignments"].items()}
    for cells in alignments["b_argues"]["judge-2"].values():
        for role in cells:
            cells[role] = None
    evaluation.update(alignments=alignments, **tally(alignments))
    for event in [*kept, dataclasses.replace(finished, outcome={**finished.outcome, "evaluation": evaluation})]:
        journal.record(event)


def test_show_says_it_in_sentences(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    with Journal(db) as journal:
        _evince(journal)
        _socrasynth_with_a_silent_judge(journal)
    shown = symposium("show", "words0001aa", db=db)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "The debate was resumed after an interruption, from round 1." in out
    assert "from_round" not in out and "resume debate" not in out
    assert "The moderator rejected the outcome: “Dengue is implausible here; no travel”" in out
    assert "They recommend 1 further question and 1 test." in out, out
    assert not re.search(r"•\s*[,.]\s*$", out, re.M), "a punctuation mark is listed as a recommendation"
    assert "— opening, round 0" in out and "unmodulated" not in out
    assert "The turn's probabilities:" in out

    judged = symposium("show", "words0002bb", db=db)
    assert judged.returncode == 0, judged.stderr
    totals = [line for line in judged.stdout.splitlines() if line.strip().startswith("total")]
    assert len(totals) == 2, judged.stdout
    b_argues = totals[1].split()
    assert b_argues[1:3] != ["—", "—"] and b_argues[3:] == ["—", "—"], totals  # judge-2 scored nothing there


def test_help_says_that_symposium_alone_opens_the_app(tmp_path: Path) -> None:
    shown = symposium("--help", db=tmp_path / "journal.db")
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert "Run on its own on a terminal, `symposium` opens the app" in said, said
