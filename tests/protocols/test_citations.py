"""The citation checker (protocols/measures/citations.py): each verdict of its docstring, the
reading of a written source, the quote's exact and folded match, and the counts the report and
the benchmark print. The mutation benchmark's target: each test here fails for some change of
the code."""

from __future__ import annotations

from protocols.core.events import Citation
from protocols.measures.citations import check, check_claim, fold, passage_id, tally

PASSAGES = {"E2": "Creatinine rose from 1.0 to 2.1 mg/dL\nwithin 48 hours.", "E8": "Potassium 5.9 mmol/L, flagged high."}


def test_a_source_names_a_passage_by_its_number_whatever_its_shape() -> None:
    for written in ("E3", "e3", "[E3]", "E03", "E3 p.4 ¶3", "[E3 p.4 ¶3 · labs.pdf]", "  E3  ", "[ e 3 ]", "E3a", "E3, E4"):
        assert passage_id(written) == "E3", written
    assert passage_id("E123456789") == "E123456789"


def test_a_source_that_is_no_passage_id_names_none() -> None:
    for written in ("", "E", "3", "page 3", "XE3", "p.4 ¶3", "E1234567890", "[[E3]]", "source: E3"):
        assert passage_id(written) is None, written


def test_folding_makes_whitespace_one_space_trims_and_folds_case() -> None:
    assert fold("  Creatinine\n\tROSE  from ") == "creatinine rose from"
    assert fold("Straße") == "strasse"


def test_a_claim_without_a_source_is_uncited() -> None:
    assert check_claim("x", "", "", PASSAGES) == Citation("x", "", "", "uncited")
    assert check_claim("x", "  \n", "quoted words", PASSAGES) == Citation("x", "  \n", "quoted words", "uncited")


def test_a_source_naming_no_passage_is_not_found_and_says_which() -> None:
    assert check_claim("x", "E99", "", PASSAGES) == Citation("x", "E99", "", "not_found", problem="no passage E99")
    assert check_claim("x", "[e099]", "", PASSAGES).problem == "no passage E99"
    assert check_claim("x", " page 3 ", "", PASSAGES) == Citation("x", " page 3 ", "", "not_found", problem="no passage page 3")


def test_a_real_passage_without_a_quote_supports_the_claim() -> None:
    assert check_claim("x", "E8", "", PASSAGES) == Citation("x", "E8", "", "supported", passage="E8")
    assert check_claim("x", "E8", " \n ", PASSAGES) == Citation("x", "E8", " \n ", "supported", passage="E8")


def test_a_quote_in_its_passage_supports_exactly_or_after_folding() -> None:
    exact = check_claim("x", "E2", "rose from 1.0 to 2.1", PASSAGES)
    assert exact == Citation("x", "E2", "rose from 1.0 to 2.1", "supported", passage="E2", match="exact")
    folded = check_claim("x", "E2", "CREATININE rose from 1.0 to 2.1 mg/dL within   48 hours", PASSAGES)
    assert folded == Citation("x", "E2", "CREATININE rose from 1.0 to 2.1 mg/dL within   48 hours", "supported",
                              passage="E2", match="folded")
    assert check_claim("x", "E2", "mg/dL\nwithin", PASSAGES).match == "exact"  # exact first, when it is exact
    assert check_claim("x", "E2", "  rose from", PASSAGES).match == "folded"  # the spaces around a quote fold away


def test_a_quote_not_in_its_passage_is_not_found_though_the_passage_exists() -> None:
    got = check_claim("Potassium was normal", "E8", "Potassium 4.0 mmol/L", PASSAGES)
    assert got == Citation("Potassium was normal", "E8", "Potassium 4.0 mmol/L", "not_found", passage="E8",
                           problem="the quote is not in E8")
    # quoted from another passage: still not in the one cited
    assert check_claim("x", "E8", "Creatinine rose", PASSAGES).status == "not_found"


def test_check_reads_each_claim_in_order_and_treats_odd_values_as_empty() -> None:
    claims = [{"claim": "a", "source": "E2", "quote": "rose"}, {"claim": "b", "source": "E9"}, {"claim": 3, "source": None},
              {}, {"claim": "e", "source": "E2", "quote": "fell"}, {"claim": "f", "source": "E2", "quote": 7}]
    got = check(claims, PASSAGES)
    assert [c.status for c in got] == ["supported", "not_found", "uncited", "uncited", "not_found", "supported"]
    assert [c.claim for c in got] == ["a", "b", "", "", "e", "f"]
    assert [c.quote for c in got] == ["rose", "", "", "", "fell", ""]
    assert got[1] == Citation("b", "E9", "", "not_found", problem="no passage E9")
    assert check([], PASSAGES) == ()


def test_tally_counts_each_verdict_and_the_two_shares() -> None:
    cited = [Citation("a", "E2", "", "supported", "E2"), Citation("b", "E9", "", "not_found"),
             Citation("c", "E8", "q", "not_found", "E8"), Citation("d", "", "", "uncited")]
    assert tally(cited) == {"claims": 4, "supported": 1, "not_found": 2, "uncited": 1, "cited": 3,
                            "precision": 1 / 3, "supported_share": 1 / 4}
    assert tally([{"status": "supported"}, {"status": "uncited"}]) == {
        "claims": 2, "supported": 1, "not_found": 0, "uncited": 1, "cited": 1, "precision": 1.0, "supported_share": 0.5}
    assert tally([{"status": "uncited"}])["precision"] is None
    assert tally([]) == {"claims": 0, "supported": 0, "not_found": 0, "uncited": 0, "cited": 0, "precision": None,
                         "supported_share": None}
