"""EVINCE's stopping and steering against Figure 7.1, on scripted beliefs.

Scripted backends (tests/helpers/scripted_backends.py): each test needs agents that state *exactly* a
given sequence of distributions (settle to within half a point, or keep moving), which a real
model cannot be made to do. The rules pinned here:

* a debate whose beliefs have settled stops, though a sub-point wobble at agreement moves the
  coupling MI (`mi`) by several ε; one whose beliefs keep moving runs to the cap;
* κ holds at κ0 until two rounds of metrics give Update a signal (Figure 7.1 runs the first
  loop round at κ = 0.9);
* ``max_rounds`` counts refutation rounds after the opening round, as the paper's t does;
* the recommendations prompt says what ended the debate.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from protocols import evince
from protocols.core.events import DebateFinished, Event, MetricsComputed, TurnFinished
from protocols.measures import metrics as M
from protocols.measures.contentiousness import Adaptive, RoundSignals
from tests.helpers.evince_scripted import agents, config, entropy_bits, judge_reply, reply, run_all, user_prompts
from tests.helpers.scripted_backends import ScriptedBackend

AGREED = {"Dengue": 0.9, "Chikungunya": 0.1}
WOBBLE = {"Dengue": 0.895, "Chikungunya": 0.105}  # half a point off agreement


def debate_rounds(events: list[Event]) -> list[int]:
    """The rounds in which agent B took a debate turn, in order."""
    return [e.round for e in events if isinstance(e, TurnFinished) and e.role == "agent-b" and e.kind in ("opening", "refutation")]


def final(events: list[Event]) -> DebateFinished:
    last = events[-1]
    assert isinstance(last, DebateFinished)
    return last


def settling_debate(cap: int = 5) -> tuple[evince.EvinceConfig, evince.EvinceAgents]:
    """B moves towards A for two rounds, agrees at round 2, then wobbles by half a point around
    agreement for the rest of the debate: converged by round 3."""
    a = [reply(AGREED)] * 6
    b = [reply({"Malaria": 0.7, "Typhoid": 0.3}), reply({"Dengue": 0.6, "Zika": 0.4}), reply(AGREED),
         reply(WOBBLE), reply(AGREED), reply(WOBBLE)]
    team = agents(ScriptedBackend("a", a), ScriptedBackend("b", b), ScriptedBackend("j", []))
    return config(max_rounds=cap), team


async def test_a_settled_debate_stops_though_a_half_point_wobble_swings_the_coupling_mi() -> None:
    """A 5-round cap, beliefs converged by round 3, stop at round 3 or 4."""
    cfg, team = settling_debate()
    events = await run_all(cfg, team)
    metrics = {e.round: e.metrics for e in events if isinstance(e, MetricsComputed)}
    assert abs(metrics[3]["mi"] - metrics[2]["mi"]) > 5 * cfg.eps_mi  # the displayed MI swings …
    assert abs(metrics[3]["wd"] - metrics[2]["wd"]) < cfg.eps_wd  # … though the beliefs moved half a point
    done = final(events)
    assert debate_rounds(events)[-1] in (3, 4), debate_rounds(events)
    assert done.stop_reason.startswith("converged"), done.stop_reason


async def test_a_debate_that_never_settles_runs_to_the_cap_of_refutation_rounds() -> None:
    """``max_rounds`` = 5 refutation rounds after the opening one: rounds 0 … 5."""
    moving = [{"Zika": 0.8, "Malaria": 0.2}, {"Dengue": 0.5, "Zika": 0.5}]  # WD 1, 0.4, 1, 0.4, …
    b = [reply(moving[i % 2]) for i in range(6)]
    team = agents(ScriptedBackend("a", [reply(AGREED)] * 6), ScriptedBackend("b", b), ScriptedBackend("j", []))
    events = await run_all(config(max_rounds=5), team)
    assert debate_rounds(events) == [0, 1, 2, 3, 4, 5]
    kinds = [e.kind for e in events if isinstance(e, TurnFinished) and e.role == "agent-a"]
    assert kinds == ["opening"] + ["refutation"] * 5
    done = final(events)
    assert done.stop_reason.startswith("round cap reached: the opening and 5 rounds of rebuttal")
    assert done.outcome["rounds"] == 6 and done.outcome["refutation_rounds"] == 5


@pytest.mark.parametrize("cap", [0, 1, 3])
async def test_max_rounds_counts_refutation_rounds_only(cap: int) -> None:
    moving = [{"Dengue": 0.9, "Zika": 0.1}, {"Zika": 0.8, "Malaria": 0.2}]
    b = [reply(moving[i % 2]) for i in range(cap + 1)]
    team = agents(ScriptedBackend("a", [reply(AGREED)] * (cap + 1)), ScriptedBackend("b", b), ScriptedBackend("j", []))
    events = await run_all(config(max_rounds=cap), team)
    assert debate_rounds(events) == list(range(cap + 1))


def test_the_stop_rules_mi_term_is_smooth_at_agreement() -> None:
    """0.6/0.32/0.08 against 0.6/0.3/0.1 (JSD 0.001) moves the coupling MI from 1 to 0.93; the
    convergence signal the stop rule and Update read moves by less than ε."""
    p, q = {"a": 0.6, "b": 0.3, "c": 0.1}, {"a": 0.6, "b": 0.32, "c": 0.08}
    same, near = M.compute_all(p, p), M.compute_all(p, q)
    assert same.mi - near.mi > 0.05  # the displayed MI's cusp
    assert abs(M.speaker_independence(p, p) - M.speaker_independence(p, q)) < 0.01
    signals = RoundSignals.from_snapshots(same, near)
    assert abs(signals.d_mi) < 0.01


# --- κ holds until there is a signal (Figure 7.1: Update only after the loop's first metrics) ------


def kappas_by_round(events: list[Event]) -> list[float | None]:
    """The κ each round was argued at, as journalled with agent B's turns."""
    return [e.kappa for e in events if isinstance(e, TurnFinished) and e.role == "agent-b" and e.kind in ("opening", "refutation")]


async def test_kappa_holds_at_kappa0_until_two_rounds_of_metrics_exist() -> None:
    cfg, team = settling_debate()
    events = await run_all(cfg, team)
    kappas = kappas_by_round(events)
    assert kappas[0] == pytest.approx(0.9) and kappas[1] == pytest.approx(0.9), kappas
    assert kappas[2] < 0.9 - 0.1, kappas  # rounds 0 → 1 converged clearly: Update cools


def test_adaptive_holds_without_signals_and_cools_gently_on_a_settled_round() -> None:
    adaptive = Adaptive()
    assert adaptive.value(1, None) == pytest.approx(0.9)  # no metrics: nothing to update on
    assert adaptive.value(2, RoundSignals()) == pytest.approx(0.9 * 2.718281828 ** -0.1, rel=1e-6)  # settled: gentle


# --- the recommendations prompt says what ended the debate -----------------------------------------


def recommendations_asked(backend: ScriptedBackend) -> str:
    asks = [p for p in user_prompts(backend) if "further questions" in p]
    assert asks, user_prompts(backend)
    return asks[0]


@pytest.mark.parametrize(("converges", "says", "never"), [
    (True, "The debate converged (its metrics stopped changing) on", "round cap"),
    (False, "The debate reached its round cap without converging", "converged ("),
])
async def test_the_recommendations_prompt_says_what_ended_the_debate(converges: bool, says: str, never: str) -> None:
    if converges:
        a, b = [reply(AGREED)] * 3, [reply({"Dengue": 0.6, "Zika": 0.4}), reply(AGREED), reply(AGREED)]
    else:
        a, b = [reply(AGREED)] * 3, [reply({"Zika": 0.8, "Malaria": 0.2}), reply(AGREED), reply({"Zika": 0.8, "Malaria": 0.2})]
    recs = '{"questions": ["q"], "tests": ["t"]}'
    backend_a, backend_b = ScriptedBackend("a", [*a, recs]), ScriptedBackend("b", [*b, recs])
    events = await run_all(config(max_rounds=2, recommendations=True), agents(backend_a, backend_b, ScriptedBackend("j", [])))
    assert final(events).stop_reason.startswith("converged" if converges else "round cap")
    asked = recommendations_asked(backend_a)
    assert says in asked and never not in asked, asked


async def test_the_recommendations_prompt_names_the_moderators_skip() -> None:
    from protocols.core.events import SkipToConclusion
    from protocols.core.moderation import CommandChannel

    channel = CommandChannel()
    recs = '{"questions": ["q"], "tests": ["t"]}'
    a = ScriptedBackend("a", [reply(AGREED), reply(AGREED), recs])
    b = ScriptedBackend("b", [reply({"Zika": 0.8, "Malaria": 0.2}), reply({"Zika": 0.7, "Dengue": 0.3}), recs])
    run = evince.Evince(config(max_rounds=4, recommendations=True), agents(a, b, ScriptedBackend("j", [])),
                        debate_id="t", channel=channel)
    events: list[Any] = []
    async for event in run.run():
        events.append(event)
        if isinstance(event, TurnFinished) and event.role == "agent-b" and event.round == 1:
            channel.send(SkipToConclusion())
    asked = recommendations_asked(a)
    assert "The moderator ended the debate before it converged" in asked and "converged (" not in asked, asked


async def test_a_wobble_at_agreement_cools_kappa_like_a_settled_round() -> None:
    """Update reads MI as 1 − JSD: half a point of wobble around agreement is a settled round
    (κ × e^{−λ} ≈ 0.90), where the coupling MI's swing of 0.08 used to brake and then
    double the cooling on alternate rounds."""
    a = [reply(AGREED)] * 8
    b = [reply({"Malaria": 0.7, "Typhoid": 0.3}), reply({"Dengue": 0.6, "Zika": 0.4}),
         *([reply(AGREED), reply(WOBBLE)] * 3)]
    team = agents(ScriptedBackend("a", a), ScriptedBackend("b", b), ScriptedBackend("j", []))
    events = await run_all(config(max_rounds=7, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0), team)
    kappas = kappas_by_round(events)
    steps = [later / earlier for earlier, later in zip(kappas[3:], kappas[4:])]  # rounds 2 → 3 onwards: at agreement
    assert steps and all(0.88 <= s <= 0.92 for s in steps), (kappas, steps)


@pytest.mark.parametrize(("judge_model", "crit_judge", "noticed"), [("a", True, ["agent-a"]), ("j", True, []), ("a", False, [])])
async def test_a_judge_on_a_debaters_model_is_announced(judge_model: str, crit_judge: bool, noticed: list[str]) -> None:
    """Section 7.2 (1)(iii) asks for external CRIT scoring: a judge on a debater's model is
    allowed but said (a notice the app shows and the journal keeps; the outcome lists it)."""
    from protocols.core.events import Notice

    a, b = ScriptedBackend("a", [reply(AGREED)]), ScriptedBackend("b", [reply(AGREED)])
    judge = a if judge_model == "a" else ScriptedBackend("j", [])
    events = await run_all(config(max_rounds=0, crit_judge=crit_judge), agents(a, b, judge))
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.details["debaters"] for n in notices] == ([noticed] if noticed else [])
    assert final(events).outcome["self_judging"] == noticed
    if noticed:
        assert notices[0].kind == "self_judging" and "7.2 (1)(iii)" in notices[0].text


# --- a deadlock is settled, not converged ------------------------------------------------------------

APART_A, APART_B = {"Dengue": 0.8, "Chikungunya": 0.2}, {"Zika": 0.6, "Malaria": 0.4}  # no label shared: WD 1


@pytest.mark.parametrize(("a_says", "b_says", "agreed", "why"), [
    (APART_A, APART_B, False, "top labels Dengue and Zika"),                    # WD 1 and JSD 1, twice
    (AGREED, {"Dengue": 0.52, "Chikungunya": 0.48}, False, "JSD 0.13 above 0.1"),  # same top, one sure, one torn
    (AGREED, {"Dengue": 0.6, "Chikungunya": 0.4}, True, ""),                     # same top, JSD 0.09
])
async def test_a_debate_that_settles_apart_stops_but_is_not_called_converged(
        a_says: dict[str, float], b_says: dict[str, float], agreed: bool, why: str) -> None:
    """Figure 7.1's rule stops when the metrics stop changing, and two agents that stay exactly
    as far apart for two rounds satisfy it (|ΔWD| = |ΔJSD| = 0). The debate stops, as the paper
    says, but the stop reason, the outcome and the recommendations prompt say it settled without
    agreement (top labels differ, or JSD above ``agreement_max_jsd``) instead of "converged".
    Failed on the old code (every settled debate was "converged")."""
    recs = '{"questions": ["q"], "tests": ["t"]}'
    a = ScriptedBackend("a", [reply(a_says)] * 2 + [recs])
    b = ScriptedBackend("b", [reply(b_says)] * 2 + [recs])
    events = await run_all(config(max_rounds=5, recommendations=True), agents(a, b, ScriptedBackend("j", [])))
    assert debate_rounds(events) == [0, 1]  # the paper's stop rule still ends it
    done = final(events)
    asked = recommendations_asked(a)
    if agreed:
        assert done.stop_reason.startswith("converged"), done.stop_reason
        assert done.outcome["ending"] == "converged" and done.outcome["agreed"] is True
        assert "The debate converged" in asked
    else:
        assert done.stop_reason.startswith("settled without agreement"), done.stop_reason
        assert why in done.stop_reason and "converged" not in done.stop_reason, done.stop_reason
        assert done.outcome["ending"] == "settled_apart" and done.outcome["agreed"] is False
        assert "settled without agreement" in asked and "converged" not in asked, asked


async def test_every_ending_is_recorded_in_the_outcome() -> None:
    """The outcome says what ended the debate (the round cap here), beside the stop reason."""
    moving = [{"Zika": 0.8, "Malaria": 0.2}, {"Dengue": 0.5, "Zika": 0.5}]
    b = [reply(moving[i % 2]) for i in range(3)]
    team = agents(ScriptedBackend("a", [reply(AGREED)] * 3), ScriptedBackend("b", b), ScriptedBackend("j", []))
    done = final(await run_all(config(max_rounds=2), team))
    assert done.outcome["ending"] == "cap" and done.outcome["agreed"] is False


@pytest.mark.parametrize(("b_says", "ending", "reason"), [
    (APART_B, "settled_apart", "settled without agreement"),
    ({"Dengue": 0.6, "Chikungunya": 0.4}, "converged", "converged"),
])
async def test_a_debate_cut_after_its_last_round_resumes_to_the_same_ending(
        tmp_path: Path, b_says: dict[str, float], ending: str, reason: str) -> None:
    """A debate killed after the round whose metrics met the stop rule, before it concluded,
    concludes on resume with the ending it would have had (the agents' agreement is rebuilt from
    the journal): a deadlock is not called converged after the interruption either. The resumed
    run's backends hold no replies, so no model may be asked again; its ending and stop reason are
    the uninterrupted run's, word for word (the resume replays the journal, protocols/core/replay.py)."""
    from store.drive import drive
    from store.journal import Journal
    from store.queries import Queries

    class Cut(Exception):
        pass

    def cut_after_round_1(event: Event) -> None:
        if isinstance(event, MetricsComputed) and event.round == 1:
            raise Cut

    team = agents(ScriptedBackend("a", [reply(APART_A if ending == "settled_apart" else AGREED)] * 2),
                  ScriptedBackend("b", [reply(b_says)] * 2), ScriptedBackend("j", []))
    with Journal(tmp_path / "j.db") as journal:
        with pytest.raises(Cut):
            await drive(evince.run(config(max_rounds=5), team, debate_id="cut"), journal, cut_after_round_1)
        debate = Queries(journal).debate("cut")
        assert debate is not None
        later = agents(ScriptedBackend("a", []), ScriptedBackend("b", []), ScriptedBackend("j", []))
        done = await drive(evince.resume(debate, later), journal)
    assert done is not None and done.stop_reason.startswith(reason)
    assert done.outcome["ending"] == ending and done.outcome["refutation_rounds"] == 1
    straight = agents(ScriptedBackend("a", [reply(APART_A if ending == "settled_apart" else AGREED)] * 2),
                      ScriptedBackend("b", [reply(b_says)] * 2), ScriptedBackend("j", []))
    with Journal(tmp_path / "straight.db") as journal:
        whole = await drive(evince.run(config(max_rounds=5), straight, debate_id="cut"), journal)
    assert whole is not None and done.stop_reason == whole.stop_reason


# --- each ε is a strict bound, every term must hold, a missing CRIT reads as no change ---------------
#
# Mutation testing (benchmarks/mutation.py) found that no test held the rule at its edges: ``<``
# read as ``≤``, ``and`` read as ``or``, ΔCRIT dropped, a round without a CRIT score crashing it.

B_MOVES = [{"Dengue": 0.6, "Chikungunya": 0.4}, {"Dengue": 0.7, "Chikungunya": 0.3}, {"Dengue": 0.8, "Chikungunya": 0.2}]
UNREADABLE = ("The argument seems fine to me.", '{"claim": "x", "score": 7')  # a judge reply and its retry, both unparsed


def judged_debate(scores: list[tuple[Any, Any]], rounds: int, **kw: Any) -> tuple[evince.EvinceConfig, evince.EvinceAgents]:
    """A holds 0.9/0.1 on Dengue; B moves 0.6 → 0.7 → 0.8 towards it; the judge gives A and B
    the scores of ``scores`` per round (``None``: an unreadable reply and retry, so missing)."""
    replies: list[str] = []
    for pair in scores[:rounds]:
        for s in pair:
            replies += list(UNREADABLE) if s is None else [judge_reply(s)]
    team = agents(ScriptedBackend("a", [reply(AGREED)] * rounds), ScriptedBackend("b", [reply(p) for p in B_MOVES[:rounds]]),
                  ScriptedBackend("j", replies))
    return config(crit_judge=True, max_rounds=rounds - 1, **kw), team


def rule_deltas(m0: dict[str, float], m1: dict[str, float]) -> dict[str, float]:
    """The four changes Figure 7.1's rule compares with ε, as the rule reads them (MI as 1 − JSD)."""
    return {"eps_wd": abs(m1["wd"] - m0["wd"]), "eps_mi": abs((1 - m1["jsd"]) - (1 - m0["jsd"])),
            "eps_jsd": abs(m1["jsd"] - m0["jsd"]), "eps_crit": m1["crit"] - m0["crit"]}


@pytest.mark.parametrize("bound", ["eps_wd", "eps_mi", "eps_jsd", "eps_crit"])
async def test_each_epsilon_is_a_strict_bound_and_every_term_must_hold(bound: str) -> None:
    """docs/protocols/evince.md: stop when |ΔWD| < ε, |ΔMI| < ε, |ΔJSD| < ε and CRIT does not rise by ε.
    Rounds 0 → 1 change every term (WD 0.3 → 0.2, CRIT 0.5 → 0.6). With one ε set to exactly its
    term's change and the others at 1 (no bound), the debate is not settled: a change equal to
    ε is not under it, and one unmet term is enough. One step above it, the debate stops."""
    cfg, team = judged_debate([(5, 5), (6, 6)], 2, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    m0, m1 = (e.metrics for e in await run_all(cfg, team) if isinstance(e, MetricsComputed))
    assert m0["wd"] == pytest.approx(0.3) and m1["wd"] == pytest.approx(0.2) and m1["crit"] - m0["crit"] == pytest.approx(0.1)
    delta = rule_deltas(m0, m1)[bound]
    assert delta > 0.01
    endings = []
    for eps in (delta, math.nextafter(delta, 1.0)):
        cfg, team = judged_debate([(5, 5), (6, 6)], 2, **{**dict.fromkeys(("eps_wd", "eps_mi", "eps_jsd", "eps_crit"), 1.0), bound: eps})
        endings.append(final(await run_all(cfg, team)).outcome["ending"])
    assert endings[0] == "cap", (bound, endings)  # |Δ| = ε: not settled, the cap (round 1) ended it
    assert endings[1] in ("converged", "settled_apart"), (bound, endings)


@pytest.mark.parametrize("missing", [0, 1])
async def test_a_round_without_both_crit_scores_steers_by_wd_mi_and_jsd_alone(missing: int) -> None:
    """ΔCRIT compares like with like: where one agent's CRIT score is missing in either round
    (the judge's reply and its retry unreadable), ΔCRIT reads 0, so the stop rule decides on
    WD, MI and JSD (here all within ε = 1: the debate stops after round 1) and Update gets
    ΔCRIT = 0 (κ of round 2 checked by hand below)."""
    scores: list[tuple[Any, Any]] = [(5, 5), (9, 9), (9, 9)]
    scores[missing] = (5, None)
    cfg, team = judged_debate(scores, 2, eps_wd=1.0, eps_mi=1.0, eps_jsd=1.0, eps_crit=0.01)
    done = final(await run_all(cfg, team))
    assert done.status == "finished" and done.outcome["ending"] == "converged" and done.outcome["refutation_rounds"] == 1
    cfg, team = judged_debate(scores, 3, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    events = await run_all(cfg, team)
    m = {e.round: e.metrics for e in events if isinstance(e, MetricsComputed)}
    assert "crit" not in m[missing] and "crit" in m[1 - missing]
    assert "crit_b" not in m[missing] and m[missing]["crit_a"] == 0.5  # the failed judgement leaves no value, not None
    d_jsd = m[0]["jsd"] - m[1]["jsd"]
    expected = Adaptive()
    expected.value(1, None)
    assert kappas_by_round(events)[2] == pytest.approx(
        expected.value(2, RoundSignals(d_wd=m[0]["wd"] - m[1]["wd"], d_mi=d_jsd, d_jsd=d_jsd, d_crit=0.0)), abs=1e-12)


async def test_update_reads_each_metrics_change_with_figure_7_1s_sign_worked_by_hand() -> None:
    """κ of round 2 = Update(κ0, the changes from round 0 to round 1), every change converging:
    WD 0.3 → 0.2, JSD falls (so 1 − JSD rises), CRIT 0.5 → 0.6. Adaptive's formula (its
    docstring) is worked here from hand values: s = tanh((ΔWD + 2·ΔJSD + ΔCRIT)/(4·0.05)),
    κ = 0.9·e^{−0.1·(1 + 2s)}. Dropping any term, or one sign, gives another κ."""
    cfg, team = judged_debate([(5, 5), (6, 6), (8, 8)], 3, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    events = await run_all(cfg, team)
    jsd0 = entropy_bits(0.75, 0.25) - (entropy_bits(0.9, 0.1) + entropy_bits(0.6, 0.4)) / 2
    jsd1 = entropy_bits(0.8, 0.2) - (entropy_bits(0.9, 0.1) + entropy_bits(0.7, 0.3)) / 2
    s = math.tanh((0.1 + 2 * (jsd0 - jsd1) + 0.1) / (4 * 0.05))
    kappas = kappas_by_round(events)
    assert kappas[:2] == [pytest.approx(0.9), pytest.approx(0.9)]
    assert kappas[2] == pytest.approx(0.9 * math.exp(-0.1 * (1 + 2 * s)), abs=1e-9), kappas


async def test_the_outcome_gives_each_metrics_change_from_the_first_to_the_last_round_by_hand() -> None:
    """Tables 7.2/7.3's last row: each metric's change from the first to the last scored round,
    in % of its first value, to one decimal. WD 0.3 → 0.2 → 0.1 (−66.7 %), CRIT 0.5 → 0.6 → 0.8
    (+60.0 %), JSD worked from entropies by hand; MI from the journalled metrics. The consensus
    is ranked by probability (Dengue before Chikungunya, though C sorts first), and its top is
    Dengue."""
    cfg, team = judged_debate([(5, 5), (6, 6), (8, 8)], 3, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    events = await run_all(cfg, team)
    m = {e.round: e.metrics for e in events if isinstance(e, MetricsComputed)}
    assert sorted(m) == [0, 1, 2]
    jsd0 = entropy_bits(0.75, 0.25) - (entropy_bits(0.9, 0.1) + entropy_bits(0.6, 0.4)) / 2
    jsd2 = entropy_bits(0.85, 0.15) - (entropy_bits(0.9, 0.1) + entropy_bits(0.8, 0.2)) / 2
    improvement = final(events).outcome["improvement"]
    assert set(improvement) == {"wd", "mi", "crit", "jsd"}
    assert improvement["wd"] == -66.7 and improvement["crit"] == 60.0
    assert improvement["jsd"] == round(100 * (jsd2 - jsd0) / jsd0, 1)
    assert improvement["mi"] == round(100 * (m[2]["mi"] - m[0]["mi"]) / m[0]["mi"], 1) and improvement["mi"] != 0
    done = final(events)
    assert list(done.outcome["final_distribution"]) == ["Dengue", "Chikungunya"] and done.outcome["top"] == "Dengue"


async def test_without_a_crit_judge_each_agent_weighs_one() -> None:
    """P_f without CRIT scores is the plain mean (Figure 7.1 with Γ_A = Γ_B): the outcome's
    weights say 1 for each agent."""
    cfg, team = settling_debate()
    done = final(await run_all(cfg, team))
    assert done.outcome["weights"] == {"agent-a": 1.0, "agent-b": 1.0}
