"""Retrieval over a debate's evidence (store/evidence.py: SQLite FTS5, BM25) and what a protocol
does with it (protocols/core/evidence.py): the passages a turn is shown, fitted to the agent's
window with a note, the reply schema's claims, the reading and checking of a reply, and what
the judges are shown. Real SQLite; scripted backends only where a token count is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.base import Message, SamplingOptions
from protocols.core.agents import Agent
from protocols.core.documents import load
from protocols.core.events import Citation
from protocols.core.evidence import NO_EVIDENCE, Evidence, EvidenceSettings, Grounding, as_citation, cited_line, evidence_of
from protocols.core.passages import EvidenceFile, Passage
from store.evidence import MAX_TERMS, grounding, grounding_of, retriever, terms
from store.journal import Journal
from store.queries import Queries
from tests.helpers.evidence_files import evidence_folder
from tests.helpers.scripted_backends import ScriptedBackend

TEXTS = ["Creatinine rose from 1.0 to 2.1 mg/dL.", "Potassium 5.9 mmol/L, flagged high.", "The patient lives alone.",
         "Creatinine and potassium are both kidney markers.", "Sodium 134 mmol/L."]


def evidence(texts: list[str] = TEXTS) -> Evidence:
    passages = tuple(Passage(i, 1, None, i, t) for i, t in enumerate(texts, start=1))
    return Evidence((EvidenceFile(1, "chart.txt", "text", 100, "ab" * 32, 1, len(texts)),), passages)


def test_terms_are_the_distinct_words_of_two_characters_or_more_in_order() -> None:
    assert terms('Creatinine, CREATININE and a "quoted" NEAR(x y) * -z') == ["creatinine", "quoted", "near"]
    assert terms("why did the creatinine rise") == ["creatinine", "rise"]
    assert len(terms(" ".join(f"w{i}" for i in range(500)))) == MAX_TERMS
    assert terms("") == [] and terms("a b c") == []


def test_the_best_passage_for_a_query_comes_first_and_ties_go_to_the_earlier() -> None:
    retrieve = retriever(evidence().passages)
    assert retrieve("why did the creatinine rise so fast", 1) == ["E4"]  # the shorter passage holding the word
    assert retrieve("how far the creatinine rose, in mg/dL", 1) == ["E1"]
    assert retrieve("kidney marker", 1) == ["E4"]  # stemmed: "markers" is found by "marker"
    assert retrieve("potassium high", 2)[0] == "E2"
    assert retrieve("kidney markers creatinine potassium", 5)[0] == "E4"
    assert retrieve("mmol", 5) == ["E5", "E2"]  # the shorter passage first
    tied = retriever(evidence(["gamma beta", "alpha beta", "beta delta"]).passages)
    assert tied("beta", 3) == ["E1", "E2", "E3"]  # equal scores: passage order
    assert retrieve("creatinine", 1) == retrieve("creatinine", 1)  # the same every time
    assert retrieve("nothing here matches", 3) == [] and retrieve("", 3) == [] and retrieve("creatinine", 0) == []


@pytest.mark.parametrize("query", ['"', 'a" OR "b', "NEAR(", "creatinine*", "^x", "AND OR NOT", "col:text", "{x}", "'"])
def test_no_query_is_read_as_fts5_syntax(query: str) -> None:
    retriever(evidence().passages)(query, 3)  # no exception


def test_the_journalled_evidence_gives_the_same_passages_as_the_files(tmp_path: Path) -> None:
    """A resumed debate is shown what the live one was: indexed from the journal's passages,
    whatever happened to the files since."""
    folder = evidence_folder(tmp_path)
    found, _ = load([folder])
    live = grounding(found, EvidenceSettings())
    with Journal(tmp_path / "j.db") as journal:
        from protocols.core.events import DebateStarted

        journal.record(DebateStarted("d", "evince", "t", "s", {}, ()))
        journal.record(live.attached("d"))
        debate = Queries(journal).debate("d")
    assert debate is not None
    (folder / "chart.txt").write_text("Entirely different text about creatinine and potassium.", encoding="utf-8")
    again = grounding_of(debate)
    assert again is not None and again.evidence == live.evidence
    for query in ("creatinine", "acidosis bicarbonate", "urine output stage"):
        assert [p.id for p in again.relevant([query])] == [p.id for p in live.relevant([query])]
    assert grounding_of({"evidence": None}) is None
    rebuilt, settings = evidence_of(debate["evidence"])
    assert rebuilt == live.evidence and settings == live.settings


def test_several_queries_share_the_passages_round_robin_without_repeats() -> None:
    g = Grounding(evidence(), EvidenceSettings(evidence_passages=3), retriever(evidence().passages))
    assert [p.id for p in g.relevant(["creatinine rose", "sodium", "potassium high"])] == ["E1", "E5", "E2"]
    assert [p.id for p in g.relevant(["creatinine", "creatinine"])] == ["E4", "E1"]  # the shorter passage first
    assert [p.id for p in g.relevant(["nothing matches this"])] == ["E1", "E2", "E3"]  # the evidence's start
    assert [p.id for p in g.relevant([])] == ["E1", "E2", "E3"] and NO_EVIDENCE.relevant(["creatinine"]) == []


def agent(context: int = 4096) -> Agent:
    backend = ScriptedBackend("m", [])
    backend.context_length = context
    return Agent("agent-a", backend, SamplingOptions())


def test_a_turns_request_carries_its_passages_with_their_places_and_how_to_cite() -> None:
    g = Grounding(evidence(), EvidenceSettings(evidence_passages=2, evidence_claims=3), retriever(evidence().passages))
    got = g.ground(agent(), [Message("system", "s")], "Argue.", ["creatinine potassium"], reply_tokens=100)
    assert got.shown == ("E4", "E2") and got.notes == ()
    assert got.request.startswith("Argue.\n\nEvidence: passages from the user's files")
    assert "[E4 ¶4 · chart.txt] Creatinine and potassium are both kidney markers.\n\n[E2 ¶2 · chart.txt]" in got.request
    assert "(at most 3)" in got.request and "such as E4" in got.request
    assert NO_EVIDENCE.ground(agent(), [], "Argue.", ["creatinine"], reply_tokens=100).request == "Argue."


def test_passages_a_small_window_cannot_hold_are_shortened_least_relevant_first_with_a_note() -> None:
    long = [" ".join(["creatinine"] + [f"word{i}" for i in range(300)]), " ".join(["creatinine", "kidney"] * 150)]
    g = Grounding(evidence(long), EvidenceSettings(evidence_passages=2), retriever(evidence(long).passages))
    got = g.ground(agent(context=500), [Message("system", "s")], "Argue.", ["creatinine kidney"], reply_tokens=100)
    assert len(got.notes) == 1 and "shortened to fit agent-a's context window" in got.notes[0]
    assert "evidence E1 to" in got.notes[0]  # the less relevant passage gave way
    assert "characters left out to fit the context window" in got.request


def test_the_reply_schema_gains_a_bounded_claims_list() -> None:
    g = Grounding(evidence(), EvidenceSettings(evidence_claims=3), retriever(evidence().passages))
    base = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    got = g.schema(base)
    assert got["required"] == ["answer", "claims"] and got["properties"]["answer"] == {"type": "string"}
    claims = got["properties"]["claims"]
    assert claims["maxItems"] == 3 and claims["items"]["required"] == ["claim", "source", "quote"]
    assert base == {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}  # not changed
    free = g.schema(None, text_chars=300)
    assert free["properties"]["text"] == {"type": "string", "maxLength": 300} and free["required"] == ["text", "claims"]
    assert NO_EVIDENCE.schema(base) is base and NO_EVIDENCE.schema(None) is None
    assert g.reply_tokens(100) == 100 + 4 * 130 - 130 and NO_EVIDENCE.reply_tokens(100) == 100


def test_a_reply_is_read_its_claims_checked_and_labelled() -> None:
    g = Grounding(evidence(), EvidenceSettings(evidence_claims=2), retriever(evidence().passages))
    said = g.read('{"text": "It rose.", "claims": [{"claim": "rose", "source": "E1", "quote": "rose from 1.0"}, '
                  '{"claim": "biopsy", "source": "E9", "quote": ""}, {"claim": "extra", "source": "", "quote": ""}]}',
                  free_text=True)
    assert said.text == "It rose." and said.notes == ("read 2 of the 3 claims listed",)
    assert said.citations == (Citation("rose", "E1", "rose from 1.0", "supported", "E1", "exact", "", "E1 ¶1 · chart.txt"),
                              Citation("biopsy", "E9", "", "not_found", None, "", "no passage E9", ""))
    plain = g.read("no JSON at all", free_text=True)
    assert plain.text == "no JSON at all" and plain.citations == () and plain.notes == ('the reply has no "text" field: shown as written',)
    assert g.read('{"answer": "x"}').text == '{"answer": "x"}'
    assert NO_EVIDENCE.read('{"claims": [{"claim": "a", "source": "E1"}]}').citations == ()


def test_the_judges_see_checked_passages_as_sources_and_failed_citations_as_none() -> None:
    g = Grounding(evidence(), EvidenceSettings(), retriever(evidence().passages))
    cited = [("Agent A", Citation("rose", "E1", "", "supported", "E1")), ("Agent B", Citation("rose", "E1", "", "supported", "E1")),
             ("Agent B", Citation("biopsy", "E9", "", "not_found", problem="no passage E9")),
             ("Agent A", Citation("frail", "", "", "uncited"))]
    text = g.sources(cited)
    assert text.count("Creatinine rose from 1.0 to 2.1 mg/dL.") == 1
    assert "[E1 ¶1 · chart.txt] (cited by Agent A, Agent B) Creatinine rose" in text
    assert "- Agent B cited 'E9' for \"biopsy\": no passage E9 (not a source)" in text
    assert "Claims made without a source: Agent A: 1." in text
    assert "[E9" not in text
    assert g.sources([]) == "" and NO_EVIDENCE.sources(cited) == ""


def test_a_citation_in_words_never_names_a_passage_it_did_not_check_against() -> None:
    assert cited_line(Citation("rose", "E1", "r", "supported", "E1", "exact", "", "E1 ¶1 · a.txt")) == (
        "✓ rose — E1 ¶1 · a.txt; the quote is in it")
    assert cited_line({"claim": "x", "source": "E9", "status": "not_found", "problem": "no passage E9"}) == (
        "✗ x — cited 'E9': no passage E9; not a source")
    assert cited_line({"claim": "", "status": "uncited"}) == "– (no claim stated) — no source given"
    assert as_citation({"status": "made up"}).status == "not_found"
