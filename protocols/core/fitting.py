"""Fitting what a reader is shown to the reader's context window, and saying what was cut.

Why: a judge that reads a 1,500-character excerpt of a 4,000-character answer, or a panel
seat that never sees the last sentence of a statement (where the vote is), judges something
other than the debate. Models in real use hold 8k–128k tokens, so the record fits whole;
only a small window (the bundled models' 4,096 tokens) or a very long record needs cutting.
So every prompt that carries debate material names that material as sections
(:class:`Section`) and :func:`fit_sections` decides, against the reader's own window, what to
keep:

1. Build the prompt with every section whole. If it fits the reader's context (its backend's
   ``context_length``) with ``reply_tokens`` to spare (plus ``reserve``: what the reader's
   conversation must still hold later), it is used as it is: nothing is cut, no note.
2. Otherwise measure the prompt's fixed parts (the prompt with every section empty) and each
   section, and allot the room left over (:func:`allot`): the sections of the lowest
   ``priority`` are shortened first (a transcript gives its oldest turns the lowest), the
   longest of them first, so that sections of one priority end with an equal cap and every
   section under the cap stays whole; none goes below its ``floor`` (a few lines, so the reader
   still sees each turn began) until every section is at its floor. Sections that share a
   ``group`` share one allotment first (two texts compared with each other get the same budget).
3. Cut each shortened section where it says (``cut``): by default its middle, keeping its
   beginning and its end (an argument's thesis and conclusion, a statement's vote), or its end.
   The cut is visible in the text: ``[… 1,234 characters left out to fit the context window …]``.
4. Count the result and, if the estimate per section overshot, shrink once more.

The notes (:attr:`Fitted.notes`) say which section was shortened, to how many of how many
characters, and whose window forced it; every protocol puts them in the journal (a turn's parse
notes, a judgement's notes), so a researcher can tell when a judge did not see everything.

Tokens are counted by the reader's own session (:meth:`backends.base.Session.count_tokens`):
llama.cpp, transformers and vLLM tokenize with the model's tokenizer and chat template; the
OpenAI-compatible backend has no tokenizer here and estimates four characters a token plus eight
for each message's markup, which is why :data:`SAFETY_TOKENS` are kept free as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from backends.base import Message
from protocols.core.agents import Agent

Cut = Literal["middle", "end"]

#: Tokens kept free beyond the reply, for the difference between counting a section alone and
#: in place (a token may merge across a join) and for an estimating backend's error.
SAFETY_TOKENS = 16
#: What a cut costs in tokens (the marker), counted into a shortened section's allotment.
MARKER_TOKENS = 16
#: Rounds of measuring and shrinking before giving up (the first nearly always fits).
_ATTEMPTS = 4


def marker(left_out: int) -> str:
    """The visible trace of a cut."""
    return f"[… {left_out:,} characters left out to fit the context window …]"


@dataclass(frozen=True)
class Section:
    """One piece of material in a prompt that may be shortened.

    ``name`` is how the notes call it ("Answer 1", "Human Judge's statement, round 2"); names
    are unique within one call. Lower ``priority`` is shortened first. ``floor`` is the tokens
    a shortened section keeps while any other section can still give room. ``cut``: where the
    text is cut. ``group``: sections with the same group share one allotment."""

    name: str
    text: str
    priority: int = 0
    floor: int = 48
    cut: Cut = "middle"
    group: str | None = None


@dataclass(frozen=True)
class Fitted:
    """The prompt as it will be sent, each section's text as shown and what was shortened:
    ``cuts[name] = (characters shown, characters in full)`` for each shortened section."""

    messages: list[Message]
    texts: dict[str, str]
    notes: list[str] = field(default_factory=list)
    cuts: dict[str, tuple[int, int]] = field(default_factory=dict)


Build = Callable[[Mapping[str, str]], list[Message]]


def fit_sections(reader: Agent, sections: Sequence[Section], build: Build, *, reply_tokens: int,
                 reserve: int = 0) -> Fitted:
    """``build(texts)`` with each section's text whole when the prompt fits ``reader``'s
    context with ``reply_tokens + reserve`` to spare, else shortened as the module docstring
    says. ``build`` receives a mapping from section name to text and returns the messages."""
    names = [s.name for s in sections]
    if len(set(names)) != len(names):
        raise ValueError(f"section names must be unique, got {names}")
    whole = {s.name: s.text for s in sections}
    messages = build(whole)
    context = reader.backend.context_length
    budget = context - reply_tokens - reserve
    count = reader.session.count_tokens
    if count(messages) <= budget:
        return Fitted(messages, whole)
    if not sections:
        return Fitted(messages, whole, [_too_long(reader, context, reply_tokens, reserve)])
    fixed = count(build({name: "" for name in names}))
    empty = count([Message("user", "")])
    sizes = {s.name: max(0, count([Message("user", s.text)]) - empty) for s in sections}
    room = budget - fixed - SAFETY_TOKENS
    shortened: dict[str, tuple[str, int]] = {}
    texts = whole
    for _ in range(_ATTEMPTS):
        allotted = allot(sections, sizes, max(0, room))
        shortened = {s.name: shorten(s.text, allotted[s.name], sizes[s.name], s.cut) for s in sections}
        texts = {name: text for name, (text, _) in shortened.items()}
        messages = build(texts)
        over = count(messages) - budget
        if over <= 0:
            break
        room -= over + SAFETY_TOKENS
    cuts = {s.name: (len(s.text) - shortened[s.name][1], len(s.text)) for s in sections if shortened[s.name][1]}
    notes = [_note(reader, sections, cuts, context, reply_tokens, reserve)] if cuts else []
    if over > 0:
        notes.append(_too_long(reader, context, reply_tokens, reserve))
    return Fitted(messages, texts, notes, cuts)


def discussion(turns: Sequence[tuple[str, str]], *,
               latest: int | None = None) -> tuple[list[Section], Callable[[Mapping[str, str]], str], int]:
    """A transcript of ``(speaker, text)`` turns as sections ranked by age (the oldest gives way
    first; the last ``latest`` turns, the round just finished, rank above all older ones, one
    level apart so a caller can slot something between), the function that renders it from the
    fitted texts ("Speaker: text" paragraphs, oldest first), and that free level."""
    older = len(turns) - (len(turns) if latest is None else min(max(0, latest), len(turns)))
    names = [f"turn {i + 1} ({speaker})" for i, (speaker, _) in enumerate(turns)]
    sections = [Section(name, text.strip(), i if i < older else older + 1)
                for i, (name, (_, text)) in enumerate(zip(names, turns, strict=True))]

    def render(texts: Mapping[str, str]) -> str:
        return "\n\n".join(f"{speaker}: {texts[name]}" for name, (speaker, _) in zip(names, turns, strict=True))

    return sections, render, older


def allot(sections: Sequence[Section], sizes: Mapping[str, int], room: int) -> dict[str, int]:
    """Tokens for each section so that they sum to at most ``room`` (see the module docstring:
    groups first, then lowest priority first, longest first, floors last)."""
    groups: dict[str, list[Section]] = {}
    for s in sections:
        groups.setdefault(s.group or f"\x00{s.name}", []).append(s)
    if any(len(members) > 1 for members in groups.values()):
        pseudo = [Section(key, "", min(m.priority for m in members), sum(min(m.floor, sizes[m.name]) for m in members))
                  for key, members in groups.items()]
        shares = _allot_flat(pseudo, {key: sum(sizes[m.name] for m in members) for key, members in groups.items()}, room)
        out: dict[str, int] = {}
        for key, members in groups.items():
            out.update(_allot_flat(members, sizes, shares[key]))
        return out
    return _allot_flat(sections, sizes, room)


def _allot_flat(sections: Sequence[Section], sizes: Mapping[str, int], room: int) -> dict[str, int]:
    out = {s.name: sizes[s.name] for s in sections}
    excess = sum(out.values()) - room
    levels = sorted({s.priority for s in sections})
    for floors in (True, False):  # first down to the floors, then (only if that was not enough) below
        for level in levels:
            if excess <= 0:
                return out
            group = [s for s in sections if s.priority == level]
            lows = {s.name: min(out[s.name], s.floor) if floors else 0 for s in group}
            excess = _level_down(group, out, lows, excess)
    return out


def _level_down(group: Sequence[Section], out: dict[str, int], lows: Mapping[str, int], excess: int) -> int:
    """Lower the largest allotments in ``group`` to a common cap (never under ``lows``) until
    ``excess`` tokens are freed or all are at their lows; returns the excess still left."""
    free = sum(out[s.name] - lows[s.name] for s in group)
    if free <= excess:
        for s in group:
            out[s.name] = lows[s.name]
        return excess - free
    low, high = 0, max(out[s.name] for s in group)
    while low < high:  # the highest cap that frees enough
        cap = (low + high + 1) // 2
        freed = sum(out[s.name] - max(lows[s.name], min(out[s.name], cap)) for s in group)
        if freed >= excess:
            low = cap
        else:
            high = cap - 1
    freed = 0
    for s in group:
        new = max(lows[s.name], min(out[s.name], low))
        freed += out[s.name] - new
        out[s.name] = new
    return excess - freed


def shorten(text: str, tokens: int, size: int, cut: Cut = "middle") -> tuple[str, int]:
    """``text`` (``size`` tokens long) cut to about ``tokens`` tokens, marker included, and the
    number of characters left out (0: whole, when it already fits). Cuts fall on whitespace
    where there is some nearby."""
    if tokens >= size or not text:
        return text, 0
    per_token = len(text) / max(1, size)
    keep = int(max(0, tokens - MARKER_TOKENS) * per_token)
    if keep <= 0:
        return marker(len(text)), len(text)
    if cut == "end":
        head = _before_space(text, keep)
        return f"{head} {marker(len(text) - len(head))}", len(text) - len(head)
    head = _before_space(text, keep - keep // 2)
    tail = _after_space(text, len(text) - keep // 2)
    left_out = len(text) - len(head) - len(tail)
    return f"{head} {marker(left_out)} {tail}".strip(), left_out


def _before_space(text: str, end: int) -> str:
    """``text[:end]``, ended at the last whitespace within the last 40 characters if any."""
    space = text.rfind(" ", max(0, end - 40), end)
    newline = text.rfind("\n", max(0, end - 40), end)
    at = max(space, newline)
    return text[: at if at > 0 else end].rstrip()


def _after_space(text: str, start: int) -> str:
    """``text[start:]``, begun after the first whitespace within the next 40 characters if any."""
    if start >= len(text):
        return ""
    for i in range(start, min(len(text), start + 40)):
        if text[i].isspace():
            return text[i:].lstrip()
    return text[start:]


def _too_long(reader: Agent, context: int, reply_tokens: int, reserve: int) -> str:
    room = f"{reply_tokens:,} tokens for the reply" + (f" and {reserve:,} for the rest of its conversation" if reserve else "")
    return (f"the prompt's fixed parts leave no room in {reader.role}'s context window ({context:,} tokens, with {room}): "
            "the model may fail or cut its reply; raise context_length in models.toml or lower the reply limits")


def _note(reader: Agent, sections: Sequence[Section], cuts: Mapping[str, tuple[int, int]], context: int,
          reply_tokens: int, reserve: int) -> str:
    where = {s.name: s.cut for s in sections}
    listed = [f"{name} to {shown:,} of {full:,} characters ({'its middle' if where[name] == 'middle' else 'its end'} left out)"
              for name, (shown, full) in cuts.items()]
    if len(listed) > 6:
        listed = [*listed[:6], f"and {len(listed) - 6} more"]
    kept = f"{reply_tokens:,} kept for the reply" + (f" and {reserve:,} for the rest of its conversation" if reserve else "")
    return f"shortened to fit {reader.role}'s context window ({context:,} tokens, {kept}): " + "; ".join(listed)
