"""SocraSynth against the letter of Chang, chapter 6.

Why scripted backends here: these tests need debaters and judges that say exactly the same
thing every round (a CRIT score that never falls, symmetric ratings), so that what ends the
debate and how a row is scored is decided by the protocol's arithmetic alone, and a debate
of 12 refutation rounds runs in a second. The real-model runs are in tests/protocols/test_socrasynth.py.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from protocols import socrasynth as ss
from protocols.core.agents import Agent
from protocols.core.events import Event, Notice
from protocols.core.params import params_of
from protocols.measures.crit import CritResult
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend
from tests.helpers.socrasynth_scripted import OPTS, SUBJECT, ByPrompt, agents, crit_reply, scripted
from tui.app.recorded import recorded_events
from tui.headless.printer import EventPrinter


async def run(config: ss.SocraSynthConfig, panel: ss.SocraSynthAgents, tmp_path: Path,
              debate_id: str = "p1") -> tuple[list[Event], dict, str]:
    shown = StringIO()
    events: list[Event] = []
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(ss.run(config, panel, debate_id=debate_id), journal, events.append,
                            EventPrinter(Console(file=shown, width=200, color_system=None)))
        debate = Queries(journal).debate(debate_id)
    assert final is not None and debate is not None
    return events, debate, shown.getvalue()


# -- What ends the loop ---------------------------------------------------

# Γ weighs LLM+'s case against LLM−'s; Q is the debate's quality, the mean of both sides' strongest √(γθ)
STEADY = crit_reply(reasons=((8, 8),) * 5, rivals=((8, 8),) * 5)                     # Γ = 4.5, Q = 8
WOBBLE_UP = crit_reply(reasons=((8, 8),) * 5, rivals=((8, 8),) * 4 + ((8, 7),))       # Γ = 4.544 (+0.044), Q = 8
DIP = crit_reply(reasons=((8, 8),) * 5, rivals=((8, 7),) * 5)                         # Γ = 4.701, Q = 7.742 (−0.258)
FALLEN = crit_reply(reasons=((5, 5),) * 5, rivals=((8, 8),) * 5)                      # Γ = 2.124, Q = 6.5 (a fall of 1.5)
HIGH = crit_reply(reasons=((9, 9),), rivals=())                                       # Γ = 9, Q = 5 (nothing for LLM−: 1)
TOP = crit_reply(reasons=((10, 10),), rivals=((10, 10),))                             # Γ = 5.5, Q = 10


class _GammaJudge(ByPrompt):
    """A judge whose CRIT replies follow ``gammas`` in call order (the opening's Γ_0 first, then
    each refutation round's), and then stay steady."""

    def __init__(self, backend: ScriptedBackend, gammas: list[str]) -> None:
        super().__init__(backend, STEADY, complete=True)
        self.gammas = list(gammas)

    def pop(self, index: int = -1) -> str:
        if "Apply CRIT" in self.backend.prompts[-1][-1].content and self.gammas:
            return self.gammas.pop(0)
        return super().pop(index)


def judged_by(gammas: list[str], *, complete: bool = True) -> ss.SocraSynthAgents:
    judge = scripted("judge-model")
    judge.replies = _GammaJudge(judge, gammas)
    return ss.SocraSynthAgents(Agent("agent-a", scripted("model-a", complete=complete), OPTS),
                               Agent("agent-b", scripted("model-b", complete=complete), OPTS),
                               [Agent("judge-1", judge, OPTS)])


def refutation_rounds(debate: dict) -> list[int]:
    return [r["round"] for r in debate["outcome"]["rounds"] if r["kind"] == "refutation"]


async def test_a_gamma_that_wobbles_runs_until_the_delta_test_ends_the_debate_with_the_case_check(tmp_path: Path) -> None:
    """Γ wobbling by ±0.044 (4.544, 4.5, 4.544, …) is judge noise, not a
    plateau: at Δ0 = 0.9, δ = 1.2 and a cap above the schedule the loop runs refutation rounds
    1 … 12 and ends on Δ_13 ≤ 10 %, then the moderator asks both agents whether their case is
    made. The opening's reading (Γ_0 9 here) never enters the test: Table 6.2 starts with Γ ← 0
    and computes Γ inside the loop only."""
    config = ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=16)
    assert config.schedule_rounds() == 12
    _, debate, _ = await run(config, judged_by([HIGH] + [WOBBLE_UP, STEADY] * 7), tmp_path)
    outcome = debate["outcome"]
    gammas = [r["gamma"] for r in outcome["rounds"] if r["kind"] == "refutation"]
    assert gammas[:4] == [4.544, 4.5, 4.544, 4.5] and outcome["rounds"][0]["gamma"] == 9.0
    assert debate["stop_reason"].startswith("Δ fell to 0.084"), debate["stop_reason"]
    assert refutation_rounds(debate) == list(range(1, 13))
    refutations = [r for r in outcome["rounds"] if r["kind"] == "refutation"]
    assert refutations[-1]["delta"] == pytest.approx(0.9 / 1.2 ** 12) and refutations[-1]["delta"] > 0.1
    assert outcome["case_checks"] == [{"round": 13, "agent-a": True, "agent-b": True}]
    checks = [t for t in debate["turns"] if t["kind"] == "case_check"]
    assert [(t["round"], t["role"]) for t in checks] == [(13, "agent-a"), (13, "agent-b")]
    assert [r["round"] for r in outcome["rounds"] if r["kind"] == "closing"] == [13]


async def test_at_the_defaults_a_wobbling_debate_runs_the_studys_rounds_and_the_cap_ends_it(tmp_path: Path) -> None:
    """With the defaults (5 subtopics, a cap of 3 refutation rounds
    after the opening) a debate whose Γ only wobbles runs refutation rounds 1, 2, 3, is ended by
    the cap, and the moderator's case check follows (section 6.3.1.2: "once these rounds
    conclude, the moderator checks with each agent"). Failed on the old code (stopped at the
    first wobble; no case check after the cap)."""
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT), judged_by([HIGH, WOBBLE_UP, STEADY, WOBBLE_UP]), tmp_path)
    assert debate["stop_reason"] == ("round cap reached: the opening and 3 rounds of rebuttal, before "
                                     "Table 6.2's test ended the debate"), debate["stop_reason"]
    assert refutation_rounds(debate) == [1, 2, 3]
    assert debate["outcome"]["case_checks"] == [{"round": 4, "agent-a": True, "agent-b": True}]
    assert [r["round"] for r in debate["outcome"]["rounds"] if r["kind"] == "closing"] == [4]


async def test_a_fall_larger_than_the_tolerance_between_refutation_rounds_ends_the_loop(tmp_path: Path) -> None:
    """The debate's quality Q_2 = 6.5 after Q_1 = 8 (a fall of 1.5 > the default tolerance) ends
    the loop before round 3, and the case check follows; the same fall under a tolerance of 2.5
    does not. Each round journals Γ (the reported score) and Q (what the loop tests)."""
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1), judged_by([STEADY, STEADY, FALLEN]), tmp_path)
    assert debate["stop_reason"] == ("the debate's quality (CRIT, both sides) fell from 8 to 6.5, by more than 1 "
                                     "(Table 6.2's Γ ≥ Γ′ as a plateau of quality, with crit_tolerance)"), debate["stop_reason"]
    assert [(r["gamma"], r["quality"]) for r in debate["outcome"]["rounds"][:3]] == [(4.5, 8.0), (4.5, 8.0), (2.124, 6.5)]
    assert [(r["kind"], r["round"]) for r in debate["outcome"]["rounds"]] == [
        ("opening", 0), ("refutation", 1), ("refutation", 2), ("closing", 3)]
    assert debate["outcome"]["case_checks"] == [{"round": 3, "agent-a": True, "agent-b": True}]
    _, tolerant, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, crit_tolerance=2.5),
                               judged_by([STEADY, STEADY, FALLEN]), tmp_path, "p2")
    assert tolerant["stop_reason"].startswith("round cap"), tolerant["stop_reason"]
    assert refutation_rounds(tolerant) == [1, 2, 3]


async def test_a_fall_of_exactly_the_tolerance_does_not_end_the_loop(tmp_path: Path) -> None:
    """"More than" τ: Q 8 → 7 (both sides rated 8/8, then 7/7: a fall of exactly 1.0 = τ) runs
    on to the cap; 8 → 6 ends the loop before round 3. A judge that rates no reason on either
    side says nothing of the debate's quality (its Γ is its holistic score): 9 → 2 ends nothing."""
    def both(v: int) -> str:
        return crit_reply(reasons=((v, v),), rivals=((v, v),))
    _, even, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1), judged_by([STEADY, both(8), both(7), both(7)]), tmp_path)
    assert even["stop_reason"].startswith("round cap"), even["stop_reason"]
    _, fell, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1), judged_by([STEADY, both(8), both(6)]), tmp_path, "p2")
    assert fell["stop_reason"].startswith("the debate's quality (CRIT, both sides) fell from 8 to 6"), fell["stop_reason"]
    holistic = [crit_reply(score=score, reasons=(), rivals=()) for score in (9, 2, 2)]
    _, silent, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1), judged_by([STEADY, *holistic]), tmp_path, "p3")
    assert silent["stop_reason"].startswith("round cap"), silent["stop_reason"]
    assert [(r["gamma"], r["quality"]) for r in silent["outcome"]["rounds"][1:3]] == [(9.0, None), (2.0, None)]


async def test_a_debate_whose_countering_side_argues_better_is_not_ended_by_the_fall_of_gamma(tmp_path: Path) -> None:
    """Section 6.2.1.4's "until the argument quality plateaus": pro 7/7 ×3 against con 5/5 ×3
    (Γ 4.97, Q 6), then con rising to 8/8 ×3 (Γ 3.60: a fall of 1.37, more than τ; Q 7.5, a
    rise). The debate got better, so the loop runs on to the cap; Γ stays the reported score.
    Failed when the loop tested Γ (it ended before round 3)."""
    before = crit_reply(reasons=((7, 7),) * 3, rivals=((5, 5),) * 3)
    better = crit_reply(reasons=((7, 7),) * 3, rivals=((8, 8),) * 3)
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1), judged_by([STEADY, before, better, better]), tmp_path)
    assert debate["stop_reason"].startswith("round cap"), debate["stop_reason"]
    assert [(r["gamma"], r["quality"]) for r in debate["outcome"]["rounds"][1:3]] == [(4.973, 6.0), (3.602, 7.5)]
    by_round = {m["round"]: m for m in debate["metrics"]}
    assert by_round[2]["crit"] == pytest.approx(0.3602)


async def test_a_tolerance_of_zero_is_table_6_2s_literal_test_on_refutation_rounds(tmp_path: Path) -> None:
    """``crit_tolerance = 0`` is Table 6.2's test as written: the first dip (Q 8 → 7.742, between
    refutation rounds 1 and 2) ends the loop before round 3; the opening's Q_0 (10) above Q_1
    does not end it before round 2."""
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, crit_tolerance=0.0),
                             judged_by([TOP, STEADY, DIP]), tmp_path)
    assert debate["stop_reason"].startswith("the debate's quality (CRIT, both sides) fell from 8 to 7.742"), debate["stop_reason"]
    assert refutation_rounds(debate) == [1, 2]


async def test_an_unfinished_case_gets_exactly_one_more_round_after_the_table_or_the_cap(tmp_path: Path) -> None:
    """An agent that says its case is not made gets one more refutation round (section 6.3.1.2),
    once, whether Table 6.2's Δ test or the round cap ended the loop; when both fall on the same
    round, the table's test is the reason given. The cap counts refutation rounds after the
    opening. Failed on the old code for the cap (no case check after it)."""
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, delta=3.0), agents(complete=False), tmp_path)
    outcome = debate["outcome"]
    # δ = 3: Δ = 0.9, 0.3, 0.1 → round 1 runs, Δ_2 = 0.1 fails; the case check grants round 2
    assert [r["kind"] for r in outcome["rounds"]] == ["opening", "refutation", "refutation", "closing"]
    assert outcome["case_checks"] == [{"round": 2, "agent-a": False, "agent-b": False}]
    assert debate["stop_reason"].startswith("Δ fell") and "one more refutation round" in debate["stop_reason"]
    _, capped, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=2), agents(complete=False), tmp_path, "p2")
    assert capped["stop_reason"].startswith("round cap reached: the opening and 2 rounds of rebuttal")
    assert capped["outcome"]["case_checks"] == [{"round": 3, "agent-a": False, "agent-b": False}]
    assert refutation_rounds(capped) == [1, 2, 3]  # the cap's two, then the one granted
    _, both, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=1, delta=3.0), agents(), tmp_path, "p3")
    assert both["stop_reason"].startswith("Δ fell") and both["outcome"]["case_checks"] == [{"round": 2, "agent-a": True, "agent-b": True}]
    _, unchecked, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=2, case_check=False),
                                agents(complete=False), tmp_path, "p4")
    assert unchecked["outcome"]["case_checks"] == [] and refutation_rounds(unchecked) == [1, 2]


def test_the_defaults_are_the_studys_and_the_small_profile_only_shrinks_them() -> None:
    """Five subtopics (Tables 6.4-6.6), a cap of three refutation rounds after
    the opening (section 6.3.1.2 and appendix 6.C: the opening and three refutation rounds,
    "three to five rounds" with the case check's extra one), Table 6.2's δ = 1.2 and 10 %. The
    small-model profile debates fewer subtopics for fewer rounds. Failed on the old code (3
    subtopics, a cap of 16)."""
    default = ss.SocraSynthConfig(subject=SUBJECT)
    assert (default.subtopics, default.max_rounds, default.delta, default.threshold) == (5, 3, 1.2, 0.1)
    assert default.crit_tolerance == 1.0
    info = {p.name: p for p in params_of(ss.SocraSynthConfig)}
    assert "rounds of rebuttal after the opening round" in info["max_rounds"].description
    assert info["crit_tolerance"].section and "quality" in info["crit_tolerance"].description
    small = ss.SocraSynthConfig(subject=SUBJECT, **ss.SocraSynthConfig.SMALL_MODEL_PROFILE)
    assert small.subtopics < default.subtopics and small.max_rounds < default.max_rounds
    assert small.crit_tolerance == default.crit_tolerance  # a judge's noise is not the debaters' size


# -- point 5: both sides of a judge's table row by one formula (Tables 6.5, 6.6) ----------------


def test_symmetric_ratings_give_equal_scores_and_a_side_with_nothing_credible_scores_the_floor() -> None:
    """Tables 6.5/6.6 score both agents on every subtopic: a side the judge rated nothing for
    scores CRIT's floor, 1 (as Γ scores a case with rivals only); only a judge whose reply could
    not be read leaves a cell missing. A weaker reason beside the strongest does not lower a cell."""
    result = CritResult(score=6.25, holistic=7, weighted=5.5, reasons=[{"reason": "r", "validity": 7, "credibility": 7}],
                        rivals=[{"reason": "x", "validity": 7, "credibility": 7}])
    assert ss.side_score(result, result.reasons) == ss.side_score(result, result.rivals) == 7.0
    rated = CritResult(score=1.0, holistic=7, weighted=1.0, rivals=[{"reason": "x", "validity": 4, "credibility": 9},
                                                                   {"reason": "y", "validity": 8, "credibility": 8},
                                                                   {"reason": "z", "validity": 2, "credibility": 2}])
    assert ss.side_score(rated, rated.rivals) == 8.0  # 8/8, the strongest; the 2/2 beside it moves nothing
    assert ss.side_score(rated, rated.reasons) == 1.0  # nothing credible for the claim: the floor
    silent = CritResult(score=6.0, holistic=6, weighted=None)  # the judge listed nothing on either side
    assert ss.side_score(silent, []) == 1.0 and ss.debate_quality(silent) is None
    assert ss.side_score(CritResult(score=None, holistic=None, weighted=None), []) is None  # the judge failed
    assert ss.debate_quality(CritResult(score=None, holistic=None, weighted=None, reasons=result.reasons)) is None
    assert ss.debate_quality(rated) == 4.5 and ss.debate_quality(result) == 7.0


def test_a_judge_who_rates_one_side_only_gives_the_row_to_that_side_not_a_tie() -> None:
    """A judge that rates A 9/9 on a subtopic and lists nothing for B found A stronger there:
    B scores the floor and the row counts (9 to 1). Missing B's cell instead dropped the row from
    both totals, and a judge that rated A higher everywhere else could end in a tie."""
    one_sided = CritResult(score=9.0, holistic=9, weighted=9.0, reasons=[{"reason": "r", "validity": 9, "credibility": 9}])
    def row(a: float | None, b: float | None) -> dict[str, float | None]:
        return {"agent-a": a, "agent-b": b}
    cells = row(ss.side_score(one_sided, one_sided.reasons), ss.side_score(one_sided, one_sided.rivals))
    assert cells == row(9.0, 1.0)
    alignments = {"a_argues": {"j": {"1. Cost": cells, "2. Safety": row(7.0, 7.0)}},
                  "b_argues": {"j": {"1. Cost": row(7.0, 7.0), "2. Safety": row(7.0, 7.0)}}}
    out = ss.tally(alignments)  # type: ignore[arg-type]
    assert out["totals"]["a_argues"]["j"] == {"agent-a": 16.0, "agent-b": 8.0}
    assert out["winners"] == {"j": "agent-a"} and out["winner"] == "agent-a" and out["gaps"] == 0


async def test_the_judges_tables_score_argument_and_counter_argument_alike(tmp_path: Path) -> None:
    """A judge that rates the claim's reasons and the rival reasons 7/7 gives both agents 7 in
    every row of both alignments (Γ would give the arguing side 4 and no cell to the counter);
    a judge that lists no rival reasons gives the countering side the floor, 1, and the row
    counts; a judge whose reply cannot be read leaves a gap, counted and left out of both totals."""
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=1), agents(), tmp_path)
    evaluation = debate["outcome"]["evaluation"]
    for alignment in ("a_argues", "b_argues"):
        [row] = evaluation["alignments"][alignment]["judge-1"].values()
        assert row == {"agent-a": 7.0, "agent-b": 7.0}
    assert evaluation["winner"] == "tie" and evaluation["gaps"] == 0
    assert evaluation["judges"] == {"judge-1": "judge-model"}  # who judged, on which model
    assert {(r["alignment"], r["claim"]) for r in evaluation["reasons"]["judge-1"]} == {("a_argues", "the claim"), ("b_argues", "the claim")}
    _, one_sided, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=1),
                                agents(crit=crit_reply(rivals=())), tmp_path, "p2")
    evaluation = one_sided["outcome"]["evaluation"]
    [row] = evaluation["alignments"]["a_argues"]["judge-1"].values()
    assert row == {"agent-a": 7.0, "agent-b": 1.0}
    assert evaluation["gaps"] == 0 and evaluation["winner"] == "tie"  # each side argued once and was countered once
    _, failed, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=1),
                             agents(crit="no JSON here"), tmp_path, "p3")
    evaluation = failed["outcome"]["evaluation"]
    [row] = evaluation["alignments"]["a_argues"]["judge-1"].values()
    assert row == {"agent-a": None, "agent-b": None}
    assert evaluation["gaps"] == 4 and evaluation["winner"] is None


# -- point 5: a judge on a debater's own model is announced ---------------------------------------


async def test_a_judge_on_a_debaters_model_is_announced_shown_and_journalled(tmp_path: Path) -> None:
    events, debate, shown = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=0),
                                      agents(judge_model="model-a"), tmp_path)
    [notice] = [e for e in events if isinstance(e, Notice)]
    assert notice.kind == "self_judging" and notice.details == {"judge": "judge-1", "model": "model-a", "debaters": ["agent-a"]}
    assert "6.3.1.3" in notice.text
    assert [(n["kind"], n["details"]["model"]) for n in debate["notices"]] == [("self_judging", "model-a")]
    assert "⚠ notice: judge-1 runs on model-a, the model of Agent A" in shown
    assert debate["outcome"]["self_judging"] == {"judge-1": ["agent-a"]}
    replayed = [e for e in recorded_events(debate) if isinstance(e, Notice)]  # a replay in the app shows it again
    assert [(e.kind, e.text) for e in replayed] == [(notice.kind, notice.text)]
    independent, clean, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=0), agents(), tmp_path, "p2")
    assert not any(isinstance(e, Notice) for e in independent) and clean["notices"] == []


# -- point 3: turns sized for real models; a small-model profile for the bundled ones ------------


def test_default_points_are_paragraphs_and_the_small_model_profile_is_a_set_of_overrides() -> None:
    default = ss.SocraSynthConfig(subject=SUBJECT)
    panel = agents()
    debate = ss.SocraSynth(default, panel, debate_id="d")
    debate.agenda = [ss.Subtopic(title=f"t{i}") for i in range(default.subtopics)]
    assert debate._point_chars() >= 624  # appendix 6.C's longest point fits with the study's five subtopics (was 230)
    long_point = "word " * 124  # 620 characters
    assert long_point.strip() in debate._numbered_points([long_point.strip()] * 5)  # the opponent sees it whole
    profile = ss.SocraSynthConfig.SMALL_MODEL_PROFILE
    assert set(profile) <= set(ss.SocraSynthConfig.__dataclass_fields__)
    small = ss.SocraSynthConfig(subject=SUBJECT, **profile)
    assert small.turn_tokens < default.turn_tokens and small.max_rounds < default.max_rounds
    assert "SMALL_MODEL_PROFILE" not in default.describe()


# -- the conciliatory stage (appendix 6.F): A drafts the joint text, B revises it -------------------


@pytest.mark.parametrize("b_revision", ["parses", "prose"])
async def test_the_joint_text_is_bs_revision_of_as_draft_or_as_draft_when_the_revision_does_not_parse(
        tmp_path: Path, b_revision: str) -> None:
    """B's revision replaces A's draft when it parses; a revision that does not parse leaves A's
    draft as the joint text (never nothing, never invented), and the turn keeps B's words."""
    revised = json.dumps({"proposal": "Pedestrian zones with delivery windows.", "pros": ["cleaner air"],
                          "cons": ["longer trips for some"]})
    b_joint = revised if b_revision == "parses" else "I mostly agree with the draft, with a few changes."
    panel = ss.SocraSynthAgents(Agent("agent-a", scripted("model-a"), OPTS),
                                Agent("agent-b", scripted("model-b", joint=b_joint), OPTS),
                                [Agent("judge-1", scripted("judge-model"), OPTS)])
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=1), panel, tmp_path)
    joint = debate["outcome"]["joint"]
    turns = [t for t in debate["turns"] if t["phase"] == "conciliatory"]
    assert [(t["role"], t["kind"]) for t in turns] == [("agent-a", "joint_draft"), ("agent-b", "joint_revision")]
    if b_revision == "parses":
        assert joint["proposal"] == "Pedestrian zones with delivery windows." and joint["written_by"] == ["agent-a", "agent-b"]
    else:
        assert joint["proposal"] == "Pedestrian zones, phased in." and joint["written_by"] == ["agent-a"]
        assert turns[1]["parsed"] is None and turns[1]["raw"] == b_joint


async def test_the_conciliatory_stages_kappa_reaches_the_system_prompt(tmp_path: Path) -> None:
    """The system prompt said "contentiousness 0.9, be confrontational" all the
    way into the conciliatory stage (κ 0.3). Through the debate it states the agent's Δ0 (once,
    so the KV cache of the conversation holds); the conciliatory turns are sent a system prompt
    at the stage's κ, with Table 6.1's words for it."""
    a, b = scripted("model-a"), scripted("model-b")
    panel = ss.SocraSynthAgents(Agent("agent-a", a, OPTS), Agent("agent-b", b, OPTS),
                                [Agent("judge-1", scripted("judge-model"), OPTS)])
    await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=1), panel, tmp_path)
    for backend in (a, b):
        systems = [(p[0].content, p[-1].content) for p in backend.prompts]
        assert all(m[0].role == "system" for m in backend.prompts)
        debate = [sys for sys, ask in systems if "The debate is over" not in ask]
        closing = [sys for sys, ask in systems if "The debate is over" in ask]
        assert len(closing) == 1 and len(set(debate)) == 1
        assert "Your contentiousness is 0.9 " in debate[0] and "Be confrontational" in debate[0]
        assert "Your contentiousness is 0.3 " in closing[0] and "Be mostly agreeable" in closing[0]
        assert "Be confrontational" not in closing[0] and "latest request holds" in closing[0]


async def test_a_falling_debate_quality_ends_the_loop_then_the_case_check_runs(tmp_path: Path) -> None:
    """Table 6.2's loop runs while Δ > 10 % and the debate's quality does not fall (by more than
    the tolerance): Q_2 well below Q_1 ends it before round 3, well ahead of Δ's schedule, and
    the moderator's case check follows (section 6.3.1.2). The opening's reading is journalled
    but compared with nothing."""
    strong, weak = crit_reply(reasons=((9, 9),), rivals=((9, 9),)), crit_reply(reasons=((4, 4),), rivals=((4, 4),))
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1), judged_by([weak, strong, weak]), tmp_path)
    rounds = debate["outcome"]["rounds"]
    assert rounds[0]["quality"] < rounds[1]["quality"] and rounds[1]["quality"] - rounds[2]["quality"] > 1
    assert debate["stop_reason"].startswith("the debate's quality (CRIT, both sides) fell"), debate["stop_reason"]
    assert [(r["kind"], r["round"]) for r in rounds] == [("opening", 0), ("refutation", 1), ("refutation", 2), ("closing", 3)]
    assert debate["outcome"]["case_checks"] == [{"round": 3, "agent-a": True, "agent-b": True}]


async def test_socrasynths_crit_recurses_on_claims_in_both_profiles(tmp_path: Path) -> None:
    """docs/protocols/socrasynth.md: every SocraSynth CRIT call recurses one level on reasons that are claims
    (Table 6.3 #3), in the small-model profile too (SocraSynth has no ``crit_depth`` and its small
    profile does not turn recursion off, unlike EVINCE's). Γ's judgements after each round carry
    the sub-evaluation of the reason flagged ``is_claim``."""
    claim = json.dumps({"claim": "the claim", "reasons": [{"reason": "a reason that is a claim", "validity": 7,
                                                          "credibility": 7, "is_claim": True}],
                        "rival_reasons": [{"reason": "a rival", "validity": 6, "credibility": 6}],
                        "score": 7, "justification": "steady"})
    for profile, values in (("standard", {}), ("small", ss.SocraSynthConfig.SMALL_MODEL_PROFILE)):
        config = ss.SocraSynthConfig(subject=SUBJECT, **{**values, "subtopics": 1, "max_rounds": 1}, case_check=False)
        _, debate, _ = await run(config, agents(crit=claim), tmp_path, f"rec-{profile}")
        gammas = [j for j in debate["judgements"] if j["kind"] == "crit" and j["target"] == "debate"]
        assert gammas and all("recursion" in j["reasons"]["reasons"][0] for j in gammas), (profile, gammas[0]["reasons"])


# -- Δ, Γ and the agreement judge as journalled, worked by hand (mutation testing's survivors) ------


async def test_each_rounds_delta_and_gamma_are_journalled_and_an_override_restarts_the_division(tmp_path: Path) -> None:
    """Table 6.2: Δ_t = Δ0/δ^t per agent, the debate's Δ the larger (A 0.8, B 0.6, δ = 2). Each
    round's phase and metrics carry Δ_t, and the metrics Γ_t/10 (a steady judge: Γ = 4.5,
    judged on the debate after round t). A moderator who sets Δ to 0.6 after round 1 restarts
    the division from the next round to start: Δ_2 = 0.6, Δ_3 = 0.3 (B's too)."""
    from protocols.core.events import JudgementMade, MetricsComputed, PhaseChanged, SetContentiousness, TurnFinished
    from protocols.core.moderation import CommandChannel

    config = ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=3, delta=2.0, kappa_a=0.8, kappa_b=0.6)
    channel = CommandChannel()
    events: list[Event] = []
    async for event in ss.run(config, judged_by([STEADY] * 8), debate_id="d", channel=channel):
        events.append(event)
        if isinstance(event, MetricsComputed) and event.round == 1:
            channel.send(SetContentiousness(0.6))
    deltas = {0: 0.8, 1: 0.4, 2: 0.6, 3: 0.3, 4: 0.15}  # opening, refutations 1–3, closing
    phases = [(e.phase, e.round, e.kappa) for e in events
              if isinstance(e, PhaseChanged) and e.phase in ("opening", "refutation", "closing")]
    assert phases == [("opening", 0, pytest.approx(0.8)), *(("refutation", t, pytest.approx(deltas[t])) for t in (1, 2, 3)),
                      ("closing", 4, pytest.approx(0.15))], phases
    metrics = [(e.round, e.metrics, e.kappa) for e in events if isinstance(e, MetricsComputed)]
    assert metrics == [(t, {"delta": pytest.approx(d), "crit": 0.45}, pytest.approx(d)) for t, d in deltas.items()], metrics
    b_kappas = [(e.round, e.kappa) for e in events if isinstance(e, TurnFinished) and e.role == "agent-b"
                and e.kind in ("opening", "refutation", "closing")]
    assert b_kappas == [(0, pytest.approx(0.6)), (1, pytest.approx(0.3)), (2, pytest.approx(0.6)), (3, pytest.approx(0.3)),
                        (4, pytest.approx(0.15))], b_kappas
    gammas = [(e.round, e.score, e.reasons["of"]) for e in events if isinstance(e, JudgementMade) and e.target == "debate"]
    assert gammas == [(t, 4.5, f"the debate after round {t} (Table 6.2 Γ)") for t in deltas]


class _AgreementJudge(_GammaJudge):
    """A steady CRIT judge that also answers the agreement question with ``verdicts`` in order."""

    def __init__(self, backend: ScriptedBackend, verdicts: list[str]) -> None:
        super().__init__(backend, [])
        self.verdicts = list(verdicts)
        self.asked: list[str] = []

    def pop(self, index: int = -1) -> str:
        ask = self.backend.prompts[-1][-1].content
        if "AGREEMENT or MORE DEBATE" in ask:
            self.asked.append(ask)
            return self.verdicts.pop(0)
        return super().pop(index)


async def test_the_agreement_judge_reads_the_whole_debate_and_ends_the_loop_after_a_refutation_round(tmp_path: Path) -> None:
    """Heller et al.'s agreement judge in SocraSynth: after each round the first judge reads the subject and every
    turn so far and says AGREEMENT or MORE DEBATE; its verdict is journalled with the round
    (metric ``agreement``). AGREEMENT after the opening does not end the loop (nothing refuted
    yet); AGREEMENT after refutation round 1 ends it before round 2, with that reason."""
    from protocols.core.events import JudgementMade

    judge = scripted("judge-model")
    judge.replies = answers = _AgreementJudge(judge, ["AGREEMENT", "AGREEMENT", "MORE DEBATE"])
    panel = ss.SocraSynthAgents(Agent("agent-a", scripted("model-a"), OPTS), Agent("agent-b", scripted("model-b"), OPTS),
                                [Agent("judge-1", judge, OPTS)])
    events, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=5, agreement_judge=True),
                                  panel, tmp_path)
    assert debate["stop_reason"] == "the agreement judge said AGREEMENT after the last refutation round (Heller et al.)"
    assert [(r["kind"], r["round"]) for r in debate["outcome"]["rounds"]] == [("opening", 0), ("refutation", 1), ("closing", 2)]
    verdicts = [(e.debate_id, e.round, e.verdict) for e in events if isinstance(e, JudgementMade) and e.kind == "agreement"]
    assert verdicts == [("p1", 0, "AGREEMENT"), ("p1", 1, "AGREEMENT"), ("p1", 2, "MORE DEBATE")]
    assert [(m["round"], m["agreement"]) for m in debate["metrics"]] == [(0, 1.0), (1, 1.0), (2, 0.0)]
    point = "A point argued at length for this subtopic."
    assert [ask.count(point) for ask in answers.asked] == [2, 4, 6]  # every turn so far, both agents
    assert all(SUBJECT in ask for ask in answers.asked)


class _Claiming(ByPrompt):
    """A debater's queue whose every point reply also lists one claim made without a source."""

    def pop(self, index: int = -1) -> str:
        reply = json.loads(super().pop(index))
        if "points" in reply:
            reply["claims"] = [{"claim": "Cars foul the air", "source": "", "quote": ""}]
        return json.dumps(reply)


async def test_the_agreement_judge_reads_what_the_debaters_cited(tmp_path: Path) -> None:
    """Under evidence the agreement judge is shown, beside the turns, what each side's claims rest
    on (Grounding.sources), as the CRIT judges are: here a claim per turn made without a source."""
    from protocols.core.evidence import Evidence, EvidenceFile, EvidenceSettings, Grounding, Passage

    grounded = Grounding(Evidence((EvidenceFile(1, "chart.txt", "txt", 10, "0" * 64, None, 1, 1),),
                                  (Passage(1, 1, None, 1, "Traffic counts fell by a third."),)),
                         EvidenceSettings(evidence_claims=4), retrieve=lambda query, k: [])
    debaters = []
    for model in ("model-a", "model-b"):
        backend = ScriptedBackend(model, [])
        backend.replies = _Claiming(backend, crit_reply(), True)
        debaters.append(backend)
    judge = scripted("judge-model")
    judge.replies = answers = _AgreementJudge(judge, ["MORE DEBATE", "AGREEMENT", "MORE DEBATE"])
    panel = ss.SocraSynthAgents(Agent("agent-a", debaters[0], OPTS), Agent("agent-b", debaters[1], OPTS),
                                [Agent("judge-1", judge, OPTS)])
    config = ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=5, agreement_judge=True)
    with Journal(tmp_path / "j.db") as journal:
        await drive(ss.run(config, panel, debate_id="p1", evidence=grounded), journal)
    assert len(answers.asked) == 3
    for ask, n in zip(answers.asked, (1, 2, 3), strict=True):  # every turn so far, both agents
        assert f"Claims made without a source: Agent A: {n}; Agent B: {n}." in ask, ask


def test_a_cell_is_the_strongest_root_of_validity_times_credibility_to_three_decimals() -> None:
    """Tables 6.5/6.6's cell, by hand: √(7·8) = 7.4833… → 7.483; of √(5·6) and √(6·7) = 6.4807… → 6.481;
    the debate's quality their mean, (7.483 + 6.481)/2 = 6.982."""
    result = CritResult(score=7.0, holistic=7, weighted=7.0, reasons=[{"reason": "r", "validity": 7, "credibility": 8}],
                        rivals=[{"reason": "x", "validity": 5, "credibility": 6}, {"reason": "y", "validity": 6, "credibility": 7}])
    assert ss.side_score(result, result.reasons) == 7.483
    assert ss.side_score(result, result.rivals) == 6.481
    assert ss.debate_quality(result) == 6.982


def test_the_tally_sums_to_three_decimals_and_the_panel_follows_the_majority_of_judges() -> None:
    """Totals per alignment and judge are sums of the cells (to three decimals, never whole
    points); each judge's winner has the higher total over both alignments, and the panel's is
    the majority of judges' winners: here B for two judges of three."""
    def rows(a: float, b: float) -> dict[str, dict[str, float | None]]:
        return {"Air quality": {"agent-a": a, "agent-b": b}}
    alignments = {"a_argues": {"judge-1": rows(6.5, 7.483), "judge-2": rows(7.25, 7.0), "judge-3": rows(7.125, 6.0)},
                  "b_argues": {"judge-1": rows(7.25, 7.239), "judge-2": rows(6.0, 6.4), "judge-3": rows(6.5, 6.0)}}
    out = ss.tally(alignments)  # type: ignore[arg-type]
    assert out["totals"]["a_argues"]["judge-1"] == {"agent-a": 6.5, "agent-b": 7.483}
    assert out["totals"]["a_argues"]["judge-3"] == {"agent-a": 7.125, "agent-b": 6.0}
    # judge-1: 13.75 < 14.722; judge-2: 13.25 < 13.4 (whole points would call it a tie); judge-3: 13.625 > 12
    assert out["winners"] == {"judge-1": "agent-b", "judge-2": "agent-b", "judge-3": "agent-a"}
    assert out["winner"] == "agent-b" and out["gaps"] == 0


async def test_a_round_whose_gamma_is_unreadable_is_journalled_without_one_and_the_debate_goes_on(tmp_path: Path) -> None:
    """A Γ judge reply that does not parse, nor its stricter retry, leaves Γ_1 missing: round 1's
    metrics carry Δ alone (no invented CRIT), its row says Γ None, and the loop goes on to the cap."""
    unreadable = ["The debate seems fine to me.", '{"claim": "x", "score": 7']
    _, debate, _ = await run(ss.SocraSynthConfig(subject=SUBJECT, subtopics=1, max_rounds=2),
                             judged_by([STEADY, *unreadable]), tmp_path)
    rounds = debate["outcome"]["rounds"]
    assert [(r["kind"], r["round"], r["gamma"]) for r in rounds] == [
        ("opening", 0, 4.5), ("refutation", 1, None), ("refutation", 2, 4.5), ("closing", 3, 4.5)]
    by_round = {m["round"]: m for m in debate["metrics"]}
    assert "crit" not in by_round[1] and by_round[2]["crit"] == 0.45
    assert debate["stop_reason"].startswith("round cap reached: the opening and 2 rounds of rebuttal")
