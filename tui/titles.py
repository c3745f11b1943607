"""Debate titles: the one a new debate gets unless the person types another, and titles in lists
(Home, search results, the Compare picker) that can be told apart.

A title is on screen for anyone watching (Home's list, the debate's header, a demo on a
projector) and in every report, redacted or not. A case's first words often name the patient
("Margaret Okonkwo, DOB 03/14/1961 …"), so they become the title only when the redaction's
recognizers find nothing in them; otherwise the title is neutral (:func:`automatic_title`).

Titles are usually the first words of the case ("A patient presents with itching, vomiting, …"),
so two debates on similar cases share a long beginning and differ at the end. Clipped to a
column's width from the end, they all read the same; a list of them cannot be chosen from
. :func:`distinct_clips` keeps the start of a title and, where another title
in the same list shares that start, jumps to where they part.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from outputs.redact import find
from protocols.core.text import clip

ELLIPSIS = "…"
#: The longest title a new debate gets from its case's first words.
TITLE_WIDTH = 60


def neutral_title(protocol_title: str) -> str:
    return f"{protocol_title} debate"


#: A capitalised word inside a sentence (not after a full stop, not an acronym such as ICU): a
#: name the redaction's recognizers can miss ("Patient: John Graves" is one they miss).
_NAME_LIKE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z][\w'’-]*")


def automatic_title(subject: str, protocol_title: str) -> str:
    """The case's (subject's, question's) first words, clipped, when they hold no identifier the
    redaction would mask (a name, a date, a number, a place) and no capitalised word inside a
    sentence, which may be a name it misses; else :func:`neutral_title`. A neutral title where
    the words were harmless costs little; a patient's name on Home's list costs a great deal."""
    flat = " ".join(subject.split())
    shown = clip(flat, TITLE_WIDTH)
    ahead = flat[: TITLE_WIDTH * 2]  # a name cut by the clip still counts
    if (not flat or flat.startswith("@") or _NAME_LIKE.search(shown)
            or any(span.start < len(shown) for span in find(ahead))):
        return neutral_title(protocol_title)
    return shown


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def distinct_clips(titles: Sequence[str], width: int) -> list[str]:
    """Each title on one line in at most ``width`` characters, clipped so that titles that differ
    still differ when shown: where a plain clip would cut before the first character in which a
    title differs from another of the list, its head is kept short and the rest shows from a
    little before that character ("A patient pre…ever (variant two)")."""
    flat = [" ".join(t.split()) for t in titles]
    out = []
    for i, title in enumerate(flat):
        plain_clip = clip(title, width)
        if len(title) <= width:
            out.append(title)
            continue
        parts = max((_common_prefix(title, other) for j, other in enumerate(flat) if j != i and other != title),
                    default=0)
        if parts < width - 1:  # the plain clip already shows where it differs from every other title
            out.append(plain_clip)
            continue
        head = max(width // 3, 1)
        tail_room = width - head - 1  # one for the ellipsis between
        start = max(min(parts - tail_room // 3, len(title) - tail_room), head)  # some context before it
        tail = title[start:start + tail_room]
        if start + tail_room < len(title):
            tail = tail[:-1] + ELLIPSIS
        out.append(title[:head] + ELLIPSIS + tail)
    return out


def when(timestamp: float) -> str:
    """A debate's start as the lists show it (local time, to the minute)."""
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
