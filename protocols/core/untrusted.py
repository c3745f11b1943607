"""Reading JSON out of untrusted model output.

Models wrap JSON in prose and code fences, use single quotes, leave trailing commas and write
bare percentages. These helpers find candidate JSON values in a reply and repair what can be
repaired, reporting each repair; they parse with :func:`json.loads` only and never raise on any
string. :func:`parse_as` validates a candidate against a pydantic model (a CRIT score, an agenda,
a verdict), so every protocol reads model output the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

MAX_INPUT_CHARS = 100_000
"""Replies are cut to this many characters before parsing (a runaway generation is not data)."""
_MAX_JSON_CANDIDATES = 8
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)
_BARE_PERCENT = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*%")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CLOSER = {"}": "{", "]": "["}

Model = TypeVar("Model", bound=BaseModel)


def whole_characters(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings (keys too) replaced by U+FFFD.

    JSON writes a character outside the BMP as two escapes (``\\ud800\\udc00``); a reply cut
    or injected between the halves decodes to half a character, which no UTF-8 writer takes:
    the journal's write, the terminal and the report would each fail on it (found by the fuzz
    check). Every string read from untrusted JSON passes through here."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)  # json.loads joins whole pairs: any surrogate left is half
    if isinstance(value, list):
        return [whole_characters(item) for item in value]
    if isinstance(value, dict):
        return {whole_characters(key): whole_characters(item) for key, item in value.items()}
    return value


def loads(text: str) -> Any:
    """``json.loads`` of untrusted text, with :func:`whole_characters`; raises as it does."""
    return whole_characters(json.loads(text, strict=False))


def _loads(text: str) -> tuple[bool, Any]:
    """:func:`loads` that reports failure instead of raising (deep nesting included).

    Not strict: raw newlines and tabs inside strings are accepted, because llama.cpp's JSON
    grammar (``char ::= [^"\\]``) lets a model write them and they change nothing else.
    """
    try:
        return True, loads(text)
    except (ValueError, RecursionError):
        return False, None


def _closing_brackets(text: str, stack: list[tuple[str, int]]) -> Iterator[tuple[int, int | None]]:
    """Each closing bracket of ``text`` outside JSON strings: its position and where the bracket
    it closes opened (``None``: it closes nothing open). ``stack`` holds the open brackets
    (bracket, position) as the walk goes. A string opens only inside a bracket, so quotes in the
    prose around the JSON hide no brackets."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and stack:
            in_string = True
        elif ch in "{[":
            stack.append((ch, i))
        elif ch in _CLOSER:
            matched = bool(stack) and stack[-1][0] == _CLOSER[ch]
            yield i, stack.pop()[1] if matched else None


_RESCANS = 3
"""How many times :func:`_balanced_spans` looks again past a bracket that never closed."""


def _balanced_spans(text: str) -> list[tuple[int, int]]:
    """Outermost balanced ``{…}``/``[…]`` spans, in order, skipping brackets in "strings".

    A bracket that never closes may be prose (``["`` before the reply's object) whose quote
    hides the JSON after it inside a "string"; so the text after the first such bracket is
    scanned again as if the bracket were prose (a few times at most: each scan walks the reply)."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for _ in range(1 + _RESCANS):
        stack: list[tuple[str, int]] = []
        part = text[offset:]
        spans += [(offset + start, offset + end + 1) for end, start in _closing_brackets(part, stack) if start is not None]
        if not stack:
            break
        offset += stack[0][1] + 1
    outermost: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
        if not outermost or start >= outermost[-1][1]:
            outermost.append((start, end))
    return outermost


def _repair_json(text: str) -> tuple[str, list[str]]:
    """Fix near-JSON outside string literals: single quotes, trailing commas, bare ``40%``."""
    notes: set[str] = set()
    out: list[str] = []

    def fix_code(code: str) -> str:
        fixed = _TRAILING_COMMA.sub(r"\1", code)
        if fixed != code:
            notes.add("removed trailing commas")
        quoted = _BARE_PERCENT.sub(r'"\1%"', fixed)
        if quoted != fixed:
            notes.add("quoted bare percentages")
        return quoted

    pos = 0
    for m in _QUOTED.finditer(text):
        out.append(fix_code(text[pos : m.start()]))
        token = m.group()
        if token[0] == "'":
            notes.add("converted single quotes to double quotes")
            token = json.dumps(token[1:-1].replace("\\'", "'"))
        out.append(token)
        pos = m.end()
    out.append(fix_code(text[pos:]))
    return "".join(out), sorted(notes)


def _close_truncated(text: str) -> str | None:
    """A reply cut off in the middle of its JSON (``max_tokens`` reached), cut back to the end
    of its last complete inner object or array and closed; ``None`` if it is not that case.

    ``{"predictions": [{"label": "A", "probability": 0.6}, {"label": "B", "prob`` becomes
    ``{"predictions": [{"label": "A", "probability": 0.6}]}``: what the model finished saying.
    ``text`` starts with its bracket (a candidate of :func:`json_candidates`).
    """
    stack: list[tuple[str, int]] = []
    cut: tuple[int, int] | None = None  # (where the last complete part ends, how many brackets were open there)
    for end, opened in _closing_brackets(text, stack):
        if opened is None or not stack:
            return None  # a stray closer, or a complete value: nothing was cut off
        cut = (end + 1, len(stack))
    if not stack or cut is None:
        return None
    # After the last closer only openings follow, so the brackets open at the cut are still the
    # stack's first ones (read once here: copying them at every closer was quadratic).
    end, depth = cut
    return text[:end] + "".join("}" if bracket == "{" else "]" for bracket, _ in reversed(stack[:depth]))


def json_string(text: str, key: str) -> str | None:
    """The string in a reply that is wholly JSON: a JSON string, or an object's ``key``; else
    ``None``. For one-word answers (a verdict, a speaker's name) that a model may wrap in JSON."""
    try:
        value = loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        value = value.get(key)
    return value if isinstance(value, str) else None


def json_candidates(text: str) -> Iterator[tuple[Any, list[str]]]:
    """Candidate JSON values in the reply, each with the repairs it needed (the whole reply
    first, closed if it was cut off, then the complete JSON pieces inside it)."""
    stripped = text.strip()
    sources: list[tuple[str, list[str]]] = []
    if stripped[:1] in ("{", "["):
        sources.append((stripped, []))
    for start, end in _balanced_spans(text)[:_MAX_JSON_CANDIDATES]:
        if text[start:end] != stripped:
            sources.append((text[start:end], ["extracted the JSON from the surrounding text"]))
    for source, notes in sources:
        ok, value = _loads(source)
        if ok:
            yield value, notes
            continue
        fixed, fixes = _repair_json(source)
        if fixes:
            ok, value = _loads(fixed)
            if ok:
                yield value, notes + fixes
                continue
        closed = _close_truncated(fixed)
        if closed is not None:
            ok, value = _loads(closed)
            if ok:
                yield value, [*notes, *fixes, "closed a reply cut off mid-JSON, keeping its complete parts"]


def parse_as(raw: str, model: type[Model]) -> tuple[Model | None, list[str]]:
    """The first JSON value in ``raw`` that validates as ``model``, with notes.

    Notes list each repair made; when nothing validates, the last note says why (the JSON
    error or the first validation error), so the journal can record the reason.
    """
    text = raw[:MAX_INPUT_CHARS] if isinstance(raw, str) else ""
    reason = "no JSON object found in the reply"
    for value, notes in json_candidates(text):
        try:
            return model.model_validate(value), notes
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            reason = f"JSON does not match the expected shape: {where}: {first['msg']}"
    return None, [reason]
