"""``protocols/core/untrusted.py`` word for word: where the JSON in a reply is found, what each repair
notes, and what a rejection says.

The parsers' fuzzing (tests/guarantees) proves no reply makes them raise and that rejections
carry a reason; test_distribution.py reads predictions. Here the exact rules those leave open:
brackets and escaped quotes inside strings hide nothing, a quote in the prose opens no string,
objects side by side are each a candidate, every repair is named, and a rejection names the
field at fault. (Found by mutation testing, ``benchmarks/mutation.py``: each test failed for a
change to ``protocols/core/untrusted.py`` the others let through.)
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from protocols.core.untrusted import parse_as
from protocols.measures.crit import CritReply


class Score(BaseModel):
    score: int = Field(ge=1, le=10)
    reason: str = ""


EXTRACTED = "extracted the JSON from the surrounding text"
CLOSED = "closed a reply cut off mid-JSON, keeping its complete parts"


@pytest.mark.parametrize(("reply", "reason"), [
    ('My verdict: {"score": 7, "reason": "a } and a ] in a string close nothing"} as asked.',
     "a } and a ] in a string close nothing"),
    ('My verdict: {"score": 7, "reason": "he said \\"}\\" twice"} as asked.', 'he said "}" twice'),
    ('X-ray: "clear. My verdict {"score": 7, "reason": "ok"} as asked.', "ok"),  # an unmatched quote in the prose
])
def test_the_json_in_prose_is_found_whole_whatever_its_strings_or_the_prose_hold(reply: str, reason: str) -> None:
    parsed, notes = parse_as(reply, Score)
    assert parsed == Score(score=7, reason=reason) and notes == [EXTRACTED]


def test_json_followed_at_once_by_a_full_stop_is_found() -> None:
    assert parse_as('The score is {"score": 7}.', Score) == (Score(score=7), [EXTRACTED])


@pytest.mark.parametrize("reply", ['{"note": "first"}{"score": 7}', "{'note': 'first'} {'score': 7}"])
def test_objects_side_by_side_are_each_tried_in_order(reply: str) -> None:
    parsed, notes = parse_as(reply, Score)
    assert parsed == Score(score=7) and notes[0] == EXTRACTED


@pytest.mark.parametrize(("reply", "notes"), [
    ('{"score": 7, "reason": "ok",}', ["removed trailing commas"]),
    ("{'score': 7, 'reason': 'ok'}", ["converted single quotes to double quotes"]),
    ('{"score": 7, "reason": 40%}', ["quoted bare percentages"]),
    ('{"score": 7, "reason": "ok"}', []),
    ('{"score": 7, "extra": [1, 2], "reason": "cut off he', [CLOSED]),  # back to the last complete part
])
def test_each_repair_is_named_and_only_a_repair_that_was_made(reply: str, notes: list[str]) -> None:
    parsed, got = parse_as(reply, Score)
    assert parsed is not None and parsed.score == 7 and got == notes


def test_an_escaped_quote_in_single_quotes_is_kept_as_a_quote() -> None:
    parsed, _ = parse_as("{'score': 7, 'reason': 'it\\'s viral'}", Score)
    assert parsed == Score(score=7, reason="it's viral")


def test_a_complete_object_before_a_cut_one_is_extracted_not_closed() -> None:
    assert parse_as('{"score": 7} then {"score": 8, "reason": "cut', Score) == (Score(score=7), [EXTRACTED])


@pytest.mark.parametrize(("reply", "reason"), [
    ("I would give it a seven.", "no JSON object found in the reply"),
    ('{"score": 11}', "JSON does not match the expected shape: score: Input should be less than or equal to 10"),
    ("[7]", "JSON does not match the expected shape: (top level): Input should be a valid dictionary or instance of Score"),
])
def test_a_rejection_names_the_field_at_fault(reply: str, reason: str) -> None:
    assert parse_as(reply, Score) == (None, [reason])


def test_a_nested_field_is_named_by_its_path() -> None:
    reply = '{"claim": "c", "reasons": [{"reason": "r", "validity": 0, "credibility": 5}], "rival_reasons": [], ' \
            '"score": 5, "justification": "j"}'
    assert parse_as(reply, CritReply)[1] == ["JSON does not match the expected shape: reasons.0.validity: "
                                             "Input should be greater than or equal to 1"]


@pytest.mark.parametrize("raw", [None, b'{"score": 7}', 7])
def test_a_reply_that_is_not_text_is_rejected_not_raised(raw: object) -> None:
    assert parse_as(raw, Score) == (None, ["no JSON object found in the reply"])  # type: ignore[arg-type]


def test_half_a_character_is_replaced_so_every_string_can_be_written() -> None:
    """A reply cut or injected between the two escapes of a character outside the BMP decodes
    to a lone surrogate, which no UTF-8 writer accepts (the journal, the terminal, the report).
    Each such half becomes U+FFFD; a whole pair is kept (found by the fuzz check)."""
    reply, _ = parse_as('{"claim": "a\\ud800", "reasons": [], "rival_reasons": [], "score": 5, '
                        '"justification": "b\\ud800\\udc00 c\\udc00"}', CritReply)
    assert reply is not None
    assert (reply.claim, reply.justification) == ("a\ufffd", "b\U00010000 c\ufffd")
    reply.model_dump_json().encode("utf-8")  # raises on a lone surrogate


def test_json_after_a_bracket_of_prose_that_never_closes_is_found() -> None:
    """Prose that opens a bracket and a quote (``["``) and never closes them made the whole
    object after it look like a "string"; the reply's object was then missed and a fallback
    dropped its comment (found by the fuzz check)."""
    assert parse_as('["\n{"score": 7, "reason": "viral"}\n', Score) == (
        Score(score=7, reason="viral"), ["extracted the JSON from the surrounding text"])
