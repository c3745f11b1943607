"""What each judge and agent sees: material is passed whole when it fits
the reader's context window, and shortened to fit, visibly and with a journalled note, when it
does not (:mod:`protocols.core.fitting`).

Why scripted backends here: the tests need replies of exact, known lengths with markers in
them (a statement whose vote is its last sentence, a 4,000-character answer) and readers with a
small, known context window, so that what reaches each reader is decided by the protocol alone.
The scripted backend counts tokens as the OpenAI-compatible backend does (four characters a
token, plus the markup), which is what :mod:`protocols.core.fitting` must cope with there. One test
fits a prompt with the bundled SmolLM2's own tokenizer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from backends.base import Message, SamplingOptions
from backends.llamacpp import LlamaCppBackend
from protocols import agreement as conference
from protocols import d3, evince, humanloop
from protocols import socrasynth as ss
from protocols.core.agents import Agent
from protocols.core.events import DebateFinished, Event, TurnFinished
from protocols.core.fitting import Section, allot, fit_sections, shorten
from protocols.humanloop import HumanloopAgents, HumanloopConfig, HumanScript, HumanSeat
from protocols.measures.labels import LabelSet
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=3)
LEFT_OUT = "characters left out to fit the context window"

#: Triem, Appendix i, "HUMAN OPINIONS", Affirmative example 2 (U.S. v. Hollern): one of
#: Triem's scripted human statements, 1,3xx characters, the vote in its last sentence.
TRIEM_AFFIRM = (
    "The doctor also argues that the government presented insufficient evidence to support his conviction. "
    "Viewing the evidence in the light most favorable to the government, “the relevant question is whether "
    "‘any rational trier of fact could have found the essential elements of the crime beyond a reasonable "
    "doubt.’” United States v. Hughes. I do not independently weigh the evidence or substitute my judgment for "
    "that of the jury. United States v. Davis. Further, “Substantial and competent circumstantial evidence by "
    "itself may support a verdict and need not ‘remove every reasonable hypothesis except that of guilt.’” "
    "United States v. Lee. To establish the doctor’s guilt of intercepting oral communications, the government "
    "was required to prove beyond a reasonable doubt: 1) that he intentionally intercepted or procured an another "
    "to intercept an oral communication; 2) made by a person exhibiting an exception that the communication would "
    "not be subject to interception under the circumstances justifying that expectation; and 3) that the "
    "interception was not otherwise permitted by the statute. § 2511(l)(a) A rational jury could have found each "
    "element beyond a reasonable doubt based on the interception of patients’ conversations with family members "
    "and friends before trainees entered the treatment rooms. For these reasons, I still would vote to AFFIRM the "
    "district court’s decision."
)
TRIEM_VOTE = "For these reasons, I still would vote to AFFIRM the district court’s decision."
CASE = ("The conviction was for using recording devices as part of a training program on how to recruit new "
        "patients; patients were encouraged to bring friends, and nurses were instructed to recruit them.")


def padded(tag: str, chars: int) -> str:
    """A text of about ``chars`` characters that starts with ``tag``-START and ends with ``tag``-END."""
    body = " ".join(f"{tag} point {i} weighs the evidence carefully." for i in range(chars // 40 + 1))
    return f"{tag}-START {body[: max(0, chars - 2 * len(tag) - 14)]} {tag}-END"


def text_of(prompt: Sequence[Message]) -> str:
    return "\n".join(m.content for m in prompt)


def fits(backend: ScriptedBackend) -> None:
    """Every prompt sent to ``backend`` left room for the reply it asked for."""
    session = backend.session("count")
    for prompt, options in zip(backend.prompts, backend.options, strict=True):
        used = session.count_tokens(prompt)
        assert used + options.max_tokens <= backend.context_length, (used, options.max_tokens, backend.context_length)


async def journalled(run: Any, tmp_path: Path, debate_id: str) -> dict[str, Any]:
    with Journal(tmp_path / "j.db") as journal:
        final = await drive(run, journal)
        debate = Queries(journal).debate(debate_id)
    assert final is not None and final.status == "finished" and debate is not None
    return debate


# -- the mechanism -------------------------------------------------------------------------------


def test_the_lowest_priority_is_shortened_first_and_equal_priorities_end_with_an_equal_cap() -> None:
    sections = [Section("old", "", priority=0, floor=10), Section("new-1", "", priority=1), Section("new-2", "", priority=1)]
    sizes = {"old": 100, "new-1": 300, "new-2": 50}
    assert allot(sections, sizes, 1000) == sizes  # everything fits: nothing is touched
    assert allot(sections, sizes, 400) == {"old": 50, "new-1": 300, "new-2": 50}  # the oldest gives first
    assert allot(sections, sizes, 250) == {"old": 10, "new-1": 190, "new-2": 50}  # then the longest of the next level
    assert allot(sections, sizes, 106) == {"old": 10, "new-1": 48, "new-2": 48}  # every section at its floor
    assert allot(sections, sizes, 60) == {"old": 0, "new-1": 30, "new-2": 30}  # below the floors, in the same order


def test_a_group_shares_one_allotment_with_the_other_texts() -> None:
    """Point 10: the debate's parts together get the budget the single answer gets."""
    debate = [Section(f"closing {i}", "", group="debate") for i in range(3)]
    answer = [Section("answer", "", group="answer")]
    sizes = {"closing 0": 200, "closing 1": 200, "closing 2": 200, "answer": 600}
    shares = allot([*debate, *answer], sizes, 600)
    assert shares["answer"] == 300 and sum(shares[s.name] for s in debate) == 300


def test_a_middle_cut_keeps_the_beginning_and_the_end_and_says_how_much_went() -> None:
    text, left_out = shorten(TRIEM_AFFIRM, 120, 340)
    assert text.startswith("The doctor also argues") and text.endswith(TRIEM_VOTE)
    assert f"[… {left_out:,} {LEFT_OUT} …]" in text and 0 < left_out < len(TRIEM_AFFIRM)
    head, cut = shorten(TRIEM_AFFIRM, 120, 340, cut="end")
    assert head.startswith("The doctor also argues") and TRIEM_VOTE not in head and cut > 0
    assert shorten(TRIEM_AFFIRM, 400, 340) == (TRIEM_AFFIRM, 0)


def test_a_prompt_that_fits_is_left_whole_and_one_that_does_not_is_fitted_with_a_note() -> None:
    backend = ScriptedBackend("reader", [])
    reader = Agent("judge", backend, OPTS)
    long = padded("LONG", 8000)

    def build(texts: Any) -> list[Message]:
        return [Message("system", "You judge."), Message("user", f"Read this:\n<<<\n{texts['the case']}\n>>>")]

    whole = fit_sections(reader, [Section("the case", TRIEM_AFFIRM)], build, reply_tokens=200)
    assert whole.texts["the case"] == TRIEM_AFFIRM and not whole.notes and not whole.cuts
    backend.context_length = 1000
    cut = fit_sections(reader, [Section("the case", long)], build, reply_tokens=200)
    assert reader.session.count_tokens(cut.messages) + 200 <= 1000
    assert cut.texts["the case"].startswith("LONG-START") and cut.texts["the case"].endswith("LONG-END")
    backend.context_length = 300  # the fixed parts alone leave no room: said, not hidden
    hopeless = fit_sections(reader, [Section("the case", long)], build, reply_tokens=290)
    assert hopeless.notes[-1].startswith("the prompt's fixed parts leave no room in judge's context window (300 tokens")
    shown, full = cut.cuts["the case"]
    assert full == len(long) and 0 < shown < full
    assert cut.notes == [f"shortened to fit judge's context window (1,000 tokens, 200 kept for the reply): "
                         f"the case to {shown:,} of {full:,} characters (its middle left out)"]


def test_fitting_counts_with_the_readers_own_tokenizer(smollm: LlamaCppBackend) -> None:
    """The bundled SmolLM2 (context 4,096): the fitted prompt, counted by its own tokenizer and
    chat template, leaves the reply its room."""
    reader = Agent("judge", smollm, OPTS)
    long = padded("TOKENS", 40_000)

    def build(texts: Any) -> list[Message]:
        return [Message("system", "You judge."), Message("user", texts["record"])]

    fitted = fit_sections(reader, [Section("record", long)], build, reply_tokens=300)
    used = reader.session.count_tokens(fitted.messages)
    assert used + 300 <= smollm.context_length and used > smollm.context_length // 2  # fitted, not gutted
    assert fitted.notes and "record to" in fitted.notes[0]


# -- point 7: Triem's panel sees every statement whole, in Appendix i's words ----------------------


def _panel(seat_replies: Sequence[Sequence[str]], *, context: int = 4096) -> tuple[HumanloopAgents, list[ScriptedBackend]]:
    backends = [ScriptedBackend(f"seat-{i}", list(r)) for i, r in enumerate(seat_replies, 1)]
    for b in backends:
        b.context_length = context
    clerk = ScriptedBackend("clerk", [json.dumps({"stance": "affirm", "evidence": ""})] * 20)
    return HumanloopAgents([Agent("seat", b, OPTS) for b in backends], Agent("clerk", clerk, OPTS)), backends


async def test_the_other_judges_see_the_human_statement_whole_with_its_vote(tmp_path: Path) -> None:
    """Triem's 1,3xx-character statement, vote last: the AI judges' round-2 prompts hold all of
    it (the old code showed the first 700 characters, so never the vote)."""
    assert len(TRIEM_AFFIRM) > 1250 and TRIEM_AFFIRM.endswith(TRIEM_VOTE)
    team, backends = _panel([["I would reverse. Confidence: 60"] * 2, ["Remand. Confidence: 50"] * 2])
    config = HumanloopConfig(case=CASE, rounds=2, human=HumanSeat(script=HumanScript((TRIEM_AFFIRM,), stance="affirm")))
    debate = await journalled(humanloop.run(config, team, debate_id="h1"), tmp_path, "h1")
    for backend in backends:
        round_2 = backend.prompts[1][-1].content
        assert f"Human Judge:\n<<<\n{TRIEM_AFFIRM}\n>>>" in round_2
    assert not any(n.startswith("shortened") for t in debate["turns"] for n in t["parse_notes"])


async def test_statements_that_do_not_fit_a_seats_window_are_fitted_and_the_turn_says_so(tmp_path: Path) -> None:
    long_ai = padded("SEAT", 450)  # within the seat's 120-token turn
    team, backends = _panel([[long_ai] * 2, [long_ai] * 2], context=800)
    config = HumanloopConfig(case=CASE, rounds=2, turn_tokens=120,
                             human=HumanSeat(script=HumanScript((TRIEM_AFFIRM,), stance="affirm")))
    debate = await journalled(humanloop.run(config, team, debate_id="h2"), tmp_path, "h2")
    for backend in backends:
        fits(backend)
        round_2 = backend.prompts[1][-1].content
        assert LEFT_OUT in round_2 and round_2.count(TRIEM_VOTE) == 1  # the vote, last, survives the cut
    for role in ("agent-1", "agent-2"):
        [turn] = [t for t in debate["turns"] if t["role"] == role and t["round"] == 2]
        assert any(n.startswith(f"shortened to fit {role}'s context window (800 tokens") for n in turn["parse_notes"])


async def test_older_rounds_leave_a_seats_memory_before_the_newest_statements_are_cut(tmp_path: Path) -> None:
    """A seat's window that holds its opening and the newest round but not all three rounds:
    the request is fitted against the least history :meth:`Agent.fit` keeps, so the round-2
    statements arrive whole and round 1 is dropped from the seat's memory instead."""
    statement = padded("SEAT", 400)
    team, backends = _panel([[statement] * 3, [statement] * 3], context=800)
    config = HumanloopConfig(case=CASE, rounds=3, turn_tokens=120)
    debate = await journalled(humanloop.run(config, team, debate_id="h4"), tmp_path, "h4")
    round_3 = backends[0].prompts[2]
    fits(backends[0])
    assert "(Earlier rounds are omitted to fit the context window.)" in text_of(round_3)
    assert round_3[-1].content.count(statement) == 2 and LEFT_OUT not in round_3[-1].content
    assert not any(n.startswith("shortened") for t in debate["turns"] for n in t["parse_notes"])


APPENDIX_I_PHASE_3 = (
    "You are 'AI Judge 1' on the United States Court of Appeals deciding among a panel of three appellate judges "
    "whether to AFFIRM, REVERSE, or REMAND a former decision. Below is the case history and discussion log. You are "
    "debating step by step: in each turn of the debate, you will bring up a new point of reasoning that supports "
    "your perspective. Please cite relevant cases as evidence to support your reasoning. Then, rank your confidence "
    "in the soundness of your reasoning, on a scale of 0-100."
)
APPENDIX_I_PHASE_1 = (
    "You are simulating a discussion between three judges in the United States Court of Appeals deciding whether to "
    "AFFIRM, REVERSE, or REMAND a former decision. Debate amongst yourselves step by step for 3 rounds of debate: in "
    "each round, each judge will bring up a new point of reasoning that supports their perspective. Please cite "
    "relevant cases as evidence to support your reasoning. Then, rank your confidence in the soundness of your "
    "reasoning, on a scale of 0-100."
)


async def test_the_prompts_are_appendix_i_word_for_word(tmp_path: Path) -> None:
    """No "say clearly which position you take": Triem did not ask for a definitive stance."""
    team, backends = _panel([["Affirm. Confidence: 70"], ["Affirm. Confidence: 70"]])
    config = HumanloopConfig(case=CASE, rounds=1, human=HumanSeat(script=HumanScript((TRIEM_AFFIRM,), stance="affirm")))
    await journalled(humanloop.run(config, team, debate_id="h3"), tmp_path, "h3")
    system = backends[0].prompts[0][0].content
    assert system.startswith(APPENDIX_I_PHASE_3) and CASE in system and "clearly" not in system
    assert backends[0].prompts[0][-1].content == "Proceed with round 1."
    multi = humanloop.Humanloop(HumanloopConfig(case=CASE), _panel([[]] * 3)[0], debate_id="x")
    assert multi._system(multi.seats[1]).startswith(APPENDIX_I_PHASE_3.replace("'AI Judge 1'", "'Judge 2'"))
    synthetic = humanloop.Humanloop(HumanloopConfig(case=CASE, condition="synthetic"), _panel([[]])[0], debate_id="y")
    assert synthetic._synthetic_system().startswith(APPENDIX_I_PHASE_1 + " Begin each judge's statement with a line 'Judge k:'.")


# -- point 8: D3's readers see the answers and arguments whole ----------------------------------------


def _d3_team(arguments: Sequence[str], context: int, judge_replies: int, juror_replies: int) -> tuple[d3.D3Agents, dict[str, ScriptedBackend]]:
    backends = {
        "advocate": ScriptedBackend("advocate-model", list(arguments)),
        "judge": ScriptedBackend("judge-model", [json.dumps({"score_1": 15, "score_2": 11, "feedback_1": "clear",
                                                               "feedback_2": "thin"})] * judge_replies),
        "juror": ScriptedBackend("juror-model", [json.dumps({"score_1": 14, "score_2": 10, "rationale": "deeper"})] * juror_replies),
    }
    for b in backends.values():
        b.context_length = context
    team = d3.D3Agents(Agent("advocate", backends["advocate"], OPTS), Agent("judge", backends["judge"], OPTS),
                       [Agent("juror", backends["juror"], OPTS)])
    return team, backends


ANSWER_A, ANSWER_B = padded("ANSWER-A", 4000), padded("ANSWER-B", 3200)


async def test_samre_readers_see_every_answer_and_argument_whole_in_a_real_models_window(tmp_path: Path) -> None:
    """8,192 tokens (Llama 3.1 8B, Gemma 2 in models.toml): a 4,000-character answer and
    3,000-character arguments reach the judge, the opponent and the jury whole (the old code cut
    them to 1,500, 1,200, 900 and 6000/(2·rounds) characters)."""
    args = [padded(f"ARG{i}", 3000) for i in range(4)]  # advocate 1, 2 in round 1; 1, 2 in round 2
    team, b = _d3_team(args, 8192, judge_replies=2, juror_replies=1)
    config = d3.D3Config("Which answer is better?", ANSWER_A, ANSWER_B, variant="samre", max_rounds=2, jury_size=1)
    debate = await journalled(d3.run(config, team, debate_id="d1"), tmp_path, "d1")
    judge, advocate, juror = b["judge"].prompts, b["advocate"].prompts, b["juror"].prompts
    assert ANSWER_A in judge[0][0].content and ANSWER_B in judge[0][0].content
    assert ANSWER_A in advocate[0][0].content and ANSWER_B in advocate[0][0].content
    assert args[0] in judge[0][-1].content and args[1] in judge[0][-1].content
    assert args[2] in judge[1][-1].content and args[3] in judge[1][-1].content
    assert args[1] in advocate[2][-1].content and args[0] in advocate[3][-1].content  # the opponent's last argument
    assert all(text in text_of(juror[0]) for text in (ANSWER_A, ANSWER_B, *args))  # §2.3's complete transcript
    assert LEFT_OUT not in "".join(text_of(p) for p in judge + advocate + juror)
    assert not any("shortened" in n for j in debate["judgements"] for n in j["reasons"].get("notes", []))


async def test_more_consolidation_sees_each_defense_whole(tmp_path: Path) -> None:
    defenses = [padded(f"DEF{i}", 2500) for i in range(4)]
    team, b = _d3_team([*defenses, "consolidated 1", "consolidated 2"], 8192, judge_replies=1, juror_replies=1)
    config = d3.D3Config("Which answer is better?", ANSWER_A, ANSWER_B, variant="more", k=2, jury_size=1)
    await journalled(d3.run(config, team, debate_id="d2"), tmp_path, "d2")
    consolidations = [p for p in b["advocate"].prompts if "Consolidate them" in p[-1].content]
    assert len(consolidations) == 2
    assert all(d in consolidations[0][-1].content for d in defenses[:2])
    assert all(d in consolidations[1][-1].content for d in defenses[2:])


async def test_d3_text_that_does_not_fit_is_fitted_and_the_journal_says_so(tmp_path: Path) -> None:
    """A 3,072-token window (arguments within their 512-token turns): every prompt leaves its
    reply room, the cuts are marked in the text, and the turns, the judge's scores and the
    juror's vote carry the notes."""
    args = [padded(f"ARG{i}", 1800) for i in range(6)]
    team, b = _d3_team(args, 3072, judge_replies=3, juror_replies=1)
    config = d3.D3Config("Which answer is better?", ANSWER_A, ANSWER_B, variant="samre", max_rounds=3, window=3, jury_size=1)
    debate = await journalled(d3.run(config, team, debate_id="d3"), tmp_path, "d3")
    assert len(b["judge"].prompts) == 3  # a third round: the judge's and advocates' first rounds leave their memory
    for backend in b.values():
        fits(backend)
    assert LEFT_OUT in b["judge"].prompts[0][0].content and LEFT_OUT in text_of(b["juror"].prompts[0])
    assert "ANSWER-A-END" in b["judge"].prompts[0][0].content  # a middle cut keeps the answer's end
    first_scores = [j for j in debate["judgements"] if j["kind"] == "score" and j["round"] == 1]
    assert len(first_scores) == 2
    assert all(any(n.startswith("shortened to fit judge's context window") for n in j["reasons"]["notes"]) for j in first_scores)
    [vote] = [j for j in debate["judgements"] if j["kind"] == "vote"]
    assert any(n.startswith("shortened to fit juror-1's context window") for n in vote["reasons"]["notes"])
    first = [t for t in debate["turns"] if t["role"] == "advocate-1"][0]
    assert any(n.startswith("shortened to fit advocate-1's context window") for n in first["parse_notes"])


# -- point 9: the agreement judges read the issue and the whole stage ---------------------------------


ISSUE = padded("ISSUE", 900)


def _conference(judge_context: int, said: Sequence[str]) -> tuple[conference.ConferenceAgents, ScriptedBackend]:
    a = ScriptedBackend("scripted-a", [f"{s} (A{i})" for i, s in enumerate(said)])
    b = ScriptedBackend("scripted-b", [f"{s} (B{i})" for i, s in enumerate(said)])
    judge = ScriptedBackend("scripted-judge", ["MORE DEBATE", "AGREEMENT"])
    judge.context_length = judge_context
    scores = json.dumps({key: 7 for key, _ in conference.FACTORS} | {"comment": "fine"})
    agents = conference.ConferenceAgents([Agent("participant-1", a, OPTS), Agent("participant-2", b, OPTS)],
                                         Agent("judge", judge, OPTS), Agent("evaluator", ScriptedBackend("eval", [scores]), OPTS))
    return agents, judge


async def test_the_conference_judge_reads_the_issue_and_every_turn_of_the_stage(tmp_path: Path) -> None:
    """The old judge read the stage's generic task and only the latest round, 500 characters a turn."""
    said = [padded(f"SAID{i}", 700) for i in range(2)]
    agents, judge = _conference(4096, said)
    config = conference.ConferenceConfig(issue=ISSUE, topics=["the criteria"], max_rounds=3)
    debate = await journalled(conference.run(config, agents, debate_id="c1"), tmp_path, "c1")
    second = judge.prompts[1][-1].content
    assert ISSUE in second and "the criteria" in second
    for i, s in enumerate(said):
        assert f"{s} (A{i})" in second and f"{s} (B{i})" in second
    assert "Stage 1 of 1: the criteria" in second  # the moderator's turns are part of the stage too
    assert not any(j["reasons"]["notes"] for j in debate["judgements"] if j["kind"] == "agreement")
    assert agents.evaluator is not None
    evaluated = agents.evaluator.backend.prompts[0][-1].content  # type: ignore[attr-defined]
    assert all(f"{s} (A{i})" in evaluated and f"{s} (B{i})" in evaluated for i, s in enumerate(said))  # was 400 a turn


async def test_a_stage_too_long_for_the_judge_is_fitted_oldest_turns_first_and_noted(tmp_path: Path) -> None:
    said = [padded(f"SAID{i}", 1000) for i in range(2)]
    agents, judge = _conference(1200, said)
    config = conference.ConferenceConfig(issue=ISSUE, topics=["the criteria"], max_rounds=3)
    debate = await journalled(conference.run(config, agents, debate_id="c2"), tmp_path, "c2")
    fits(judge)
    second = judge.prompts[1][-1].content
    assert ISSUE in second and f"{said[1]} (B1)" in second  # the issue and the newest turn stay whole
    assert f"{said[0]} (A0)" not in second and "SAID0-START" in second and LEFT_OUT in second  # the oldest gave way
    agreement = [j for j in debate["judgements"] if j["kind"] == "agreement"]
    assert any(n.startswith("shortened to fit judge's context window (1,200 tokens") for n in agreement[1]["reasons"]["notes"])



@pytest.mark.parametrize("window", [16384, 1800])
async def test_the_conference_evaluator_reads_the_issue_whole_and_no_turn_clips_it(tmp_path: Path, window: int) -> None:
    """The evaluation agent scored a stage without the issue (only the
    moderator's welcome quoted it, clipped to 300 characters). Now it reads the issue whole, as
    the agreement judge does; in a window too small for everything, the stage's turns give way
    first and the note says so; and no turn quotes a clip of the issue."""
    said = [padded(f"SAID{i}", 1000) for i in range(2)]
    agents, _ = _conference(16384, said)
    assert agents.evaluator is not None
    evaluator: ScriptedBackend = agents.evaluator.backend  # type: ignore[assignment]
    evaluator.context_length = window
    config = conference.ConferenceConfig(issue=ISSUE, topics=["the criteria"], max_rounds=3)
    debate = await journalled(conference.run(config, agents, debate_id="c3"), tmp_path, "c3")
    fits(evaluator)
    [prompt] = evaluator.prompts
    assert ISSUE in prompt[-1].content
    assert not any("ISSUE-START" in t["text"] and ISSUE not in t["text"] for t in debate["turns"])
    [evaluation] = [j for j in debate["judgements"] if j["kind"] == "evaluation"]
    shortened = [n for n in evaluation["reasons"]["notes"] if n.startswith("shortened to fit evaluator's context window")]
    if window < 16384:
        assert shortened and "the issue" not in shortened[0] and LEFT_OUT in prompt[-1].content
    else:
        assert not shortened and f"{said[0]} (A0)" in prompt[-1].content

def _position(probs: dict[str, float], argument: str) -> str:
    return json.dumps({"predictions": [{"label": k, "probability": v, "argument": argument} for k, v in probs.items()],
                       "arguments": []})


async def test_evinces_agreement_judge_reads_the_whole_case_and_every_round() -> None:
    case = "A patient presents with " + ", ".join(f"symptom number {i}" for i in range(100)) + ", and FINAL-CLUE."
    a = ScriptedBackend("a", [_position({"Dengue": p, "Zika": 1 - p}, f"a-said-{i}") for i, p in enumerate((0.9, 0.5, 0.2))])
    b = ScriptedBackend("b", [_position({"Zika": p, "Dengue": 1 - p}, f"b-said-{i}") for i, p in enumerate((0.9, 0.4, 0.8))])
    judge = ScriptedBackend("j", ["MORE DEBATE"] * 3)
    config = evince.EvinceConfig(case=case, labels=LabelSet(["Dengue", "Zika", "Malaria"]), recommendations=False,
                                 crit_judge=False, agreement_judge=True, max_rounds=3)
    team = evince.EvinceAgents(Agent("agent-a", a, OPTS), Agent("agent-b", b, OPTS), Agent("judge", judge, OPTS))
    events: list[Event] = [e async for e in evince.run(config, team, debate_id="e1")]
    assert isinstance(events[-1], DebateFinished) and len(judge.prompts) >= 2
    assert all(case in p[-1].content for p in judge.prompts)  # the old judge read 300 characters of it
    second = judge.prompts[1][-1].content
    assert all(s in second for s in ("a-said-0", "b-said-0", "a-said-1", "b-said-1"))


async def test_a_resumed_evince_debates_agreement_judge_still_reads_the_turns_before_the_cut(tmp_path: Path) -> None:
    """The turns the judge reads are rebuilt from the journal when a cut debate resumes."""
    labels = LabelSet(["Dengue", "Zika", "Malaria"])
    config = evince.EvinceConfig(case="fever, rash", labels=labels, recommendations=False, crit_judge=False,
                                 agreement_judge=True, max_rounds=3, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    first = evince.EvinceAgents(
        Agent("agent-a", ScriptedBackend("a", [_position({"Dengue": 0.7, "Zika": 0.3}, "a-said-0"),
                                               _position({"Dengue": 0.6, "Zika": 0.4}, "a-said-1")]), OPTS),
        Agent("agent-b", ScriptedBackend("b", [_position({"Zika": 0.6, "Dengue": 0.4}, "b-said-0")]), OPTS),
        Agent("judge", ScriptedBackend("j", ["MORE DEBATE"]), OPTS))

    class Cut(Exception):
        pass

    def cut_after_a_in_round_1(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.role == "agent-a" and event.round == 1:
            raise Cut

    with Journal(tmp_path / "j.db") as journal:
        with pytest.raises(Cut):
            await drive(evince.run(config, first, debate_id="r1"), journal, cut_after_a_in_round_1)
        debate = Queries(journal).debate("r1")
    assert debate is not None
    judge = ScriptedBackend("j", ["MORE DEBATE"] * 3)
    resumed = evince.EvinceAgents(
        Agent("agent-a", ScriptedBackend("a", [_position({"Dengue": 0.5, "Zika": 0.5}, "a-later")] * 3), OPTS),
        Agent("agent-b", ScriptedBackend("b", [_position({"Zika": 0.5, "Dengue": 0.5}, "b-said-1")] * 3), OPTS),
        Agent("judge", judge, OPTS))
    with Journal(tmp_path / "j.db") as journal:
        await drive(evince.resume(debate, resumed), journal)
    round_1 = judge.prompts[0][-1].content
    assert all(s in round_1 for s in ("a-said-0", "b-said-0", "a-said-1", "b-said-1")) and "fever, rash" in round_1


# -- points 9 and 10: SocraSynth's judges read the subject and the whole record ------------------------


LONG_SUBJECT = padded("SUBJECT", 700)


def _socrasynth_backend(model_id: str, said: list[str], *, qa: str = "", context: int = 8192) -> ScriptedBackend:
    backend = ScriptedBackend(model_id, [])
    backend.context_length = context

    class ByPrompt(list):  # type: ignore[type-arg]
        def __bool__(self) -> bool:
            return True

        def pop(self, index: int = -1) -> str:  # noqa: ARG002 - the queue's interface
            ask = backend.prompts[-1][-1].content
            if "Apply CRIT" in ask:
                return json.dumps({"claim": "c", "reasons": [{"reason": "r", "validity": 7, "credibility": 7}],
                                   "rival_reasons": [{"reason": "q", "validity": 6, "credibility": 7}],
                                   "score": 7, "justification": "j"})
            if "Suggest up to" in ask or "Combine them" in ask:
                return json.dumps({"subtopics": [{"title": "Air quality", "description": "health effects"}]})
            if "If it is balanced" in ask:
                return json.dumps({"accept": True, "subtopics": []})
            if "The debate is over" in ask:
                return json.dumps({"proposal": padded(f"JOINT-{model_id}", 1500), "pros": ["air"], "cons": ["trade"]})
            if "Which text gives better information" in ask:
                return json.dumps({"better": "debate", "reasons": "deeper"})
            if ask.startswith("Question:"):
                return qa
            return json.dumps({"points": [said.pop(0) if said else "one more point"]})

    backend.replies = ByPrompt()
    return backend


def _socrasynth(context: int = 8192) -> tuple[ss.SocraSynthAgents, dict[str, list[str]], ScriptedBackend, str]:
    said = {r: [padded(f"{r.upper()}-{i}", 1500) for i in range(4)] for r in ("a", "b")}
    qa = padded("QA-ANSWER", 3000)
    judge = _socrasynth_backend("judge-model", [], context=context)
    agents = ss.SocraSynthAgents(Agent("agent-a", _socrasynth_backend("model-a", list(said["a"])), OPTS),
                                 Agent("agent-b", _socrasynth_backend("model-b", list(said["b"]), qa=qa), OPTS),
                                 [Agent("judge-1", judge, OPTS)],
                                 qa=Agent("qa", _socrasynth_backend("model-b", [], qa=qa), OPTS))
    return agents, said, judge, qa


async def test_socrasynths_judges_read_the_subject_and_every_round_whole(tmp_path: Path) -> None:
    """Γ's judge and the evaluative stage's see the whole subject (the old code: 300/400
    characters) and every point of both sides (the old code: `judge_chars` per side); the Q&A
    comparison gives the debate and the single answer the same room (the old code: 300-character
    closings and 600 of joint text against 1,500 of answer)."""
    agents, said, judge, qa = _socrasynth()
    config = ss.SocraSynthConfig(subject=LONG_SUBJECT, subtopics=1, max_rounds=2, case_check=False, qa_baseline=True)
    debate = await journalled(ss.run(config, agents, debate_id="s1"), tmp_path, "s1")
    crits = [text_of(p) for p in judge.prompts if "Apply CRIT" in p[-1].content]
    assert crits and all(LONG_SUBJECT in c for c in crits)
    last_gamma = [c for c in crits if "Position: for" in c][-1]
    assert all(point in last_gamma for point in [*said["a"], *said["b"]])  # opening, two refutations, closing
    evaluative = [c for c in crits if "Position: for" not in c]
    assert len(evaluative) == 2 and all(point in c for c in evaluative for point in [*said["a"], *said["b"]])
    [compare] = [text_of(p) for p in judge.prompts if "Which text gives better information" in p[-1].content]
    assert LONG_SUBJECT in compare and qa in compare and said["a"][-1] in compare and said["b"][-1] in compare
    assert "JOINT-model-b-END" in compare and LEFT_OUT not in compare
    assert not any(n.startswith("shortened") for j in debate["judgements"] for n in j["reasons"].get("notes", []))


async def test_socrasynths_judges_are_fitted_to_a_small_window_with_notes(tmp_path: Path) -> None:
    agents, said, judge, qa = _socrasynth(context=2048)
    config = ss.SocraSynthConfig(subject=LONG_SUBJECT, subtopics=1, max_rounds=2, case_check=False, qa_baseline=True)
    debate = await journalled(ss.run(config, agents, debate_id="s2"), tmp_path, "s2")
    fits(judge)
    crit_notes = [j["reasons"]["notes"] for j in debate["judgements"] if j["kind"] == "crit" and j["target"] == "debate"]
    assert any(n.startswith("shortened to fit judge-1's context window (2,048 tokens") for n in crit_notes[-1])
    last_gamma = [text_of(p) for p in judge.prompts if "Position: for" in p[-1].content][-1]
    assert said["a"][-1] in last_gamma and said["b"][-1] in last_gamma  # the closings stay whole
    assert said["a"][1] not in last_gamma and "A-1-START" in last_gamma  # an older refutation gave way first
    [verdict] = [j for j in debate["judgements"] if j["kind"] == "verdict"]
    assert any(n.startswith("shortened to fit judge-1's") for n in verdict["reasons"]["notes"])
    [compare] = [text_of(p) for p in judge.prompts if "Which text gives better information" in p[-1].content]
    assert "QA-ANSWER-END" in compare and LEFT_OUT in compare


async def test_the_qa_comparison_gives_the_debate_and_the_single_answer_the_same_budget(tmp_path: Path) -> None:
    """When the comparison must be fitted, Text 1's parts together (each
    closing point and the joint text) and Text 2 (the single answer) get the same room, not one
    share per part (which would give the debate three shares to the answer's one here); the old
    code gave them 300 + 300 + 600 against 1,500 characters."""
    agents, _, _, _ = _socrasynth(context=2048)
    config = ss.SocraSynthConfig(subject=LONG_SUBJECT, subtopics=1, max_rounds=2, case_check=False, qa_baseline=True)
    debate = await journalled(ss.run(config, agents, debate_id="s3"), tmp_path, "s3")
    [verdict] = [j for j in debate["judgements"] if j["kind"] == "verdict"]
    [note] = [n for n in verdict["reasons"]["notes"] if n.startswith("shortened")]
    shown = {name: int(kept.replace(",", "")) for name, kept in re.findall(r"(?:: |; )(.+?) to ([\d,]+) of [\d,]+ characters", note)}
    debate_parts = sum(v for k, v in shown.items() if "closing" in k or k == "the joint text")
    assert len(shown) == 5 and debate_parts > 0, shown  # the subject, two closings, the joint text, the answer
    assert abs(shown["the single answer"] - debate_parts) <= 0.15 * debate_parts, shown



async def test_the_single_answer_is_written_with_the_budget_the_debates_text_had(tmp_path: Path) -> None:
    """The comparison reads both texts at one budget, and now they are written
    at one too: the single answer's reply limit is the sum of the limits its rival parts were
    written with (both closing turns and the joint text's last version); it was 2 × turn_tokens
    against 4 ×."""
    agents, _, _, _ = _socrasynth()
    config = ss.SocraSynthConfig(subject=LONG_SUBJECT, subtopics=1, max_rounds=2, case_check=False, qa_baseline=True)
    await journalled(ss.run(config, agents, debate_id="s5"), tmp_path, "s5")

    def limits(agent: Agent, marker: str) -> list[int]:
        backend: ScriptedBackend = agent.backend  # type: ignore[assignment]
        return [o.max_tokens for p, o in zip(backend.prompts, backend.options, strict=True) if marker in p[-1].content]

    closings = limits(agents.a, "Closing statements.") + limits(agents.b, "Closing statements.")
    [joint] = limits(agents.b, "Revise it into the final version")
    [answer] = limits(agents.qa, "Question:")  # type: ignore[arg-type]
    assert len(closings) == 2 and answer == sum(closings) + joint == 4 * config.turn_tokens

@pytest.mark.parametrize("context", [1536, 2048])
async def test_socrasynths_agreement_judge_keeps_the_round_just_finished_whole(tmp_path: Path, context: int) -> None:
    """Heller et al.'s judge in SocraSynth reads every turn so far, the latest round last; when its
    window cannot hold them all, older turns give way (oldest first) and the round just finished
    — both agents' closing points here — stays whole."""
    agents, said, judge, _ = _socrasynth(context=context)
    config = ss.SocraSynthConfig(subject="Should cities ban cars?", subtopics=1, max_rounds=2, case_check=False,
                                 agreement_judge=True)
    await journalled(ss.run(config, agents, debate_id="s4"), tmp_path, "s4")
    fits(judge)
    asked = [text_of(p) for p in judge.prompts if "AGREEMENT or MORE DEBATE" in p[-1].content]
    assert len(asked) == 4  # after the opening, both refutation rounds and the closing
    last = asked[-1]
    assert said["a"][-1] in last and said["b"][-1] in last  # the closings, whole
    assert said["a"][0] not in last and LEFT_OUT in last  # the oldest turn gave way
