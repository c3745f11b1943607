"""The passage splitter (protocols/core/passages.py): every rule of its docstring, one test each,
and the invariants a citation relies on (ids stable and unique, no text lost, no part too long).
The mutation benchmark's target: each test here fails for some change of the code."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.core.passages import MAX_CHARS, EvidenceFile, Passage, numbered, paragraphs, pieces, split


def test_a_passage_is_named_by_its_number_page_paragraph_and_part() -> None:
    assert Passage(7, 2, 4, 3, "x").id == "E7"
    assert Passage(7, 2, 4, 3, "x").location == "p.4 ¶3"
    assert Passage(7, 2, 4, 3, "x").label == "E7 p.4 ¶3"
    assert Passage(7, 2, None, 3, "x").location == "¶3"
    assert Passage(7, 2, None, 3, "x").label == "E7 ¶3"
    assert Passage(8, 2, 4, 3, "x", part=2, parts=3).label == "E8 p.4 ¶3.2"
    assert Passage(8, 2, None, 3, "x", part=1, parts=2).location == "¶3.1"


def test_paragraphs_end_at_blank_lines_whatever_the_line_ends() -> None:
    assert paragraphs("one\r\n\r\ntwo\r\rthree\n\nfour") == ["one", "two", "three", "four"]
    assert paragraphs("one\n  \t \ntwo") == ["one", "two"]  # a line of spaces and tabs is blank
    assert paragraphs("one\ntwo") == ["one two"]  # a line break alone does not end a paragraph
    assert paragraphs("one\r\ntwo") == ["one two"]


def test_whitespace_inside_a_paragraph_is_one_space_and_empty_paragraphs_are_dropped() -> None:
    assert paragraphs("  Creatinine \t rose\n   from 1.0  ") == ["Creatinine rose from 1.0"]
    assert paragraphs("\n\n\n  \n\nalone\n\n\n\n") == ["alone"]
    assert paragraphs("") == [] and paragraphs(" \n\n \t ") == []


def test_a_short_paragraph_is_one_piece_and_one_a_character_too_long_is_two() -> None:
    assert pieces("a" * 10, 10) == ["a" * 10]
    assert pieces("a" * 11, 10) == ["a" * 10, "a"]
    assert pieces("", 10) == [""]


def test_a_long_paragraph_is_cut_after_the_last_sentence_end_in_its_second_half() -> None:
    assert pieces("One two. Three four five six seven", 20) == ["One two. Three four", "five six seven"]
    assert pieces("Aa. Bbb. Cccccc dddd eeee", 14) == ["Aa. Bbb.", "Cccccc dddd", "eeee"]
    assert pieces("Is it? Yes! It is, it is so", 12) == ["Is it? Yes!", "It is, it is", "so"]
    # closing quotes and brackets stay with their sentence
    assert pieces('He said "stop." Then he left the room quickly', 22) == ['He said "stop."', "Then he left the room", "quickly"]
    assert pieces("It was (mild.) Then it grew worse", 16) == ["It was (mild.)", "Then it grew", "worse"]
    # the sentence's space may be the character just past the limit
    assert pieces("aaaaaaaaa. bbbbbbbb", 10) == ["aaaaaaaaa.", "bbbbbbbb"]


def test_a_sentence_end_in_the_first_half_is_passed_over_for_a_space_in_the_second() -> None:
    assert pieces("Aa. bbb ccc ddd eee", 12) == ["Aa. bbb ccc", "ddd eee"]
    assert pieces("Abcde. ef gh ij", 12) == ["Abcde.", "ef gh ij"]  # a part of half the limit: taken
    assert pieces("Abcd. ef gh ij kl", 12) == ["Abcd. ef gh", "ij kl"]  # one character shorter: not


def test_without_a_sentence_end_the_cut_is_at_the_last_space_of_the_second_half() -> None:
    assert pieces("aaa bbb ccc ddd eee fff", 10) == ["aaa bbb", "ccc ddd", "eee fff"]
    assert pieces("aaaaa bbbbbbbbbb", 10) == ["aaaaa", "bbbbbbbbbb"]  # a space at half is used
    assert pieces("aaaa bbbbbbbbbbbbbbbb", 10) == ["aaaa bbbbb", "bbbbbbbbbb", "b"]  # one before half: not
    assert pieces("aaaaaaaaaa bbb", 10) == ["aaaaaaaaaa", "bbb"]  # the space just past the limit


def test_a_paragraph_with_no_space_is_cut_at_the_limit() -> None:
    assert pieces("abcdefghijklmnopqrstuvwxyz", 10) == ["abcdefghij", "klmnopqrst", "uvwxyz"]


def test_a_limit_under_two_characters_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2 characters, not 1"):
        pieces("abc", 1)
    assert pieces("abc", 2) == ["ab", "c"]


def test_the_default_limit_is_a_long_paragraph() -> None:
    long = " ".join(["word"] * 200)
    assert pieces(long) == [long] and len(long) < MAX_CHARS
    assert [len(p) for p in pieces("x" * (MAX_CHARS + 1))] == [MAX_CHARS, 1]


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from("ab .!?\"')"), max_size=120), st.integers(min_value=2, max_value=40))
def test_no_piece_is_too_long_or_loses_text(words: str, limit: int) -> None:
    paragraph = " ".join(words.split())
    parts = pieces(paragraph, limit)
    assert all(0 < len(p) <= limit for p in parts) or parts == [""]
    assert all(len(p) >= limit // 2 for p in parts[:-1])  # cuts fall in the second half
    assert re.sub(" ", "", "".join(parts)) == re.sub(" ", "", paragraph)


def test_split_numbers_passages_from_first_through_the_file_with_its_place() -> None:
    pages = [(1, "Title\n\nFirst para.\n\nSecond para."), (2, "Next page."), (3, "  \n "), (4, "Last.\n\nEnd.")]
    got = split(pages, file=3, first=10)
    assert [(p.number, p.file, p.page, p.paragraph, p.text) for p in got] == [
        (10, 3, 1, 1, "Title"), (11, 3, 1, 2, "First para."), (12, 3, 1, 3, "Second para."),
        (13, 3, 2, 1, "Next page."), (14, 3, 4, 1, "Last."), (15, 3, 4, 2, "End.")]
    assert all(p.part == p.parts == 1 for p in got)


def test_a_document_without_pages_counts_its_paragraphs_through() -> None:
    got = split([(None, "a\n\nb"), (None, "c")], file=1, first=1)
    assert [(p.page, p.paragraph) for p in got] == [(None, 1), (None, 2), (None, 3)]


def test_the_parts_of_a_long_paragraph_keep_its_number_and_say_which_part() -> None:
    got = split([(2, "intro\n\naaa bbb ccc ddd eee fff\n\nafter")], file=1, first=1, limit=10)
    assert [(p.id, p.paragraph, p.part, p.parts, p.text) for p in got] == [
        ("E1", 1, 1, 1, "intro"), ("E2", 2, 1, 3, "aaa bbb"), ("E3", 2, 2, 3, "ccc ddd"), ("E4", 2, 3, 3, "eee fff"),
        ("E5", 3, 1, 1, "after")]
    assert [p.label for p in got] == ["E1 p.2 ¶1", "E2 p.2 ¶2.1", "E3 p.2 ¶2.2", "E4 p.2 ¶2.3", "E5 p.2 ¶3"]


def test_ids_are_unique_and_numbered_maps_them() -> None:
    got = split([(None, "a\n\nb\n\nc")], file=1, first=5)
    assert numbered(got) == {"E5": got[0], "E6": got[1], "E7": got[2]}
    assert split([], file=1, first=1) == []


def test_a_files_record_defaults() -> None:
    f = EvidenceFile(1, "a.txt", "text", 10, "0" * 64, 1, 2)
    assert (f.pages, f.redactions, f.notes) == (None, {}, ())
