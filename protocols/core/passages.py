"""Cutting a document's text into passages that a debate can cite: ``[E7 p.4 ¶3]``.

A passage is one paragraph of one page (a PDF's) or of the whole document (a text file, a Word
document, a web page): what a person points at when they say where something is written. Its id
(``E7``) is its number among all the debate's passages, in the order the files were given, so a
citation names one place and the same files always give the same ids; its location (page and
paragraph) is what a reader looks up in the file itself.

The rules, each held by a test (``tests/protocols/test_passages.py``):

* line ends are ``\\n`` whatever the file used (``\\r\\n``, ``\\r``);
* a paragraph ends at a blank line (one holding only spaces or tabs, or nothing);
* inside a paragraph every run of whitespace (line breaks, a PDF's layout padding) is one space,
  so a quoted span matches however the file was laid out;
* an empty paragraph is no passage and takes no number;
* paragraphs are numbered from 1 on each page of a paged document, through the whole of any other;
* a paragraph longer than ``limit`` characters is cut into parts (``¶3.1``, ``¶3.2`` …) of at
  most ``limit`` characters: after the last sentence end (``.``, ``!`` or ``?``, closing quotes
  or brackets included) in the part's second half, else at its last space there, else at the
  limit itself. Parts keep the paragraph's number, so a citation still points at the paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: The longest passage, in characters: about 300 tokens, a long paragraph. Retrieval returns
#: whole passages, so a passage is what a turn's prompt can afford several of.
MAX_CHARS = 1200

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]* ")


@dataclass(frozen=True)
class Passage:
    """One citable passage. ``number`` is its place among the debate's passages (its id is
    ``E<number>``); ``file`` the number of the file it comes from (from 1, in the order given);
    ``page`` its page (``None`` in a document without pages); ``paragraph`` its paragraph on that
    page (or in the document); ``part`` and ``parts`` which piece of a long paragraph it is."""

    number: int
    file: int
    page: int | None
    paragraph: int
    text: str
    part: int = 1
    parts: int = 1

    @property
    def id(self) -> str:
        return f"E{self.number}"

    @property
    def location(self) -> str:
        """``p.4 ¶3``, ``¶3`` (no pages) or ``p.4 ¶3.2`` (the second part of a long paragraph)."""
        paragraph = f"¶{self.paragraph}" + (f".{self.part}" if self.parts > 1 else "")
        return paragraph if self.page is None else f"p.{self.page} {paragraph}"

    @property
    def label(self) -> str:
        """``E7 p.4 ¶3``: how a prompt, the screen and the report name the passage."""
        return f"{self.id} {self.location}"


@dataclass(frozen=True)
class EvidenceFile:
    """One file of a debate's evidence as the journal keeps it: its ``name`` (relative to the
    folder it was found in, or the file's own name: never the path above it), ``kind`` (text,
    markdown, pdf, docx, html), ``size`` in bytes and ``sha256`` of its bytes as read, its
    ``pages`` (a PDF's), the passages it gave (``passages`` of them from ``E<first>``), what was
    masked before indexing (``redactions``: kind → count) and ``notes`` (pages without text …)."""

    number: int
    name: str
    kind: str
    size: int
    sha256: str
    first: int
    passages: int
    pages: int | None = None
    redactions: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def paragraphs(text: str) -> list[str]:
    """The paragraphs of ``text``: cut at blank lines, whitespace collapsed, empty ones dropped."""
    unified = text.replace("\r\n", "\n").replace("\r", "\n")
    collapsed = (" ".join(block.split()) for block in _BLANK_LINE.split(unified))
    return [p for p in collapsed if p]


def pieces(paragraph: str, limit: int = MAX_CHARS) -> list[str]:
    """``paragraph`` (whitespace already collapsed) in parts of at most ``limit`` characters,
    cut where the module docstring says; one part when it is short enough."""
    if limit < 2:
        raise ValueError(f"a passage must hold at least 2 characters, not {limit}")
    parts: list[str] = []
    rest = paragraph
    while len(rest) > limit:
        head, rest = _cut(rest, limit)
        parts.append(head)
    parts.append(rest)
    return parts


def _cut(text: str, limit: int) -> tuple[str, str]:
    """The first part of ``text`` (at most ``limit`` characters) and the rest."""
    half = limit // 2
    window = text[: limit + 1]  # a sentence end's space may be the character just past the limit
    ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() - 1 >= half]
    if ends:
        end = ends[-1]
        return text[: end - 1], text[end:]
    space = window.rfind(" ", half)
    if space == -1:
        return text[:limit], text[limit:]
    return text[:space], text[space + 1:]


def split(pages: Iterable[tuple[int | None, str]], *, file: int, first: int, limit: int = MAX_CHARS) -> list[Passage]:
    """The passages of one file whose text is ``pages`` (``(page number or None, text)`` in
    order), numbered from ``first`` (ids ``E<first>`` …), each tagged with ``file``."""
    out: list[Passage] = []
    number = first
    count = 0
    for page, text in pages:
        if page is not None:
            count = 0
        for paragraph in paragraphs(text):
            count += 1
            parts = pieces(paragraph, limit)
            for i, part in enumerate(parts, start=1):
                out.append(Passage(number, file, page, count, part, i, len(parts)))
                number += 1
    return out


def numbered(passages: Sequence[Passage]) -> dict[str, Passage]:
    """Id → passage."""
    return {p.id: p for p in passages}


__all__ = ["EvidenceFile", "MAX_CHARS", "Passage", "numbered", "paragraphs", "pieces", "split"]
