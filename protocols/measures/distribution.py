"""Reading an agent's probability distribution out of its reply.

EVINCE (Figure 7.1) asks each agent to "predict top-k confidence distribution on C, and
provide supporting arguments", and every later step (the appendix 7.A metrics, the CRIT-weighted
mixture P_f) needs that distribution as numbers. Backends constrain replies to the
:class:`DistributionReply` JSON schema when they can, but small local models, and servers
without grammar support, still produce prose, fences, percentages and near-JSON. This module
turns any reply into either a clean distribution or a clear reason why not, and records every
repair so that the journal shows what the model actually said.

Model output is untrusted data: it is parsed with :func:`json.loads` and regular expressions
only, never evaluated, and :func:`parse_distribution` never raises on any string.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from protocols.core.untrusted import MAX_INPUT_CHARS, json_candidates
from protocols.measures.labels import LabelSet, clean_display, normalize_label

__all__ = [
    "MAX_INPUT_CHARS",
    "DistributionParse",
    "DistributionReply",
    "Prediction",
    "format_distribution",
    "parse_distribution",
    "reply_schema",
]

_MAX_LABEL_WORDS = 8


class Prediction(BaseModel):
    """One entry of a top-k prediction: a class label, its probability, and why."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1)
    probability: float = Field(ge=0, le=1)
    argument: str


class DistributionReply(BaseModel):
    """The reply shape the protocols request; backends compile its JSON schema to a grammar."""

    model_config = ConfigDict(extra="forbid")
    predictions: list[Prediction]
    arguments: list[str]


def reply_schema(labels: LabelSet | None = None, *, top_k: int | None = None) -> dict[str, Any]:
    """JSON schema of :class:`DistributionReply`, narrowed for a grammar.

    For a closed label set the ``label`` field becomes an enum of the canonical labels, so a
    constrained model cannot invent a class; ``top_k`` bounds the number of predictions
    (k = 3 in section 7.4, eq. 7.1).
    """
    schema = DistributionReply.model_json_schema()
    if labels is not None and labels.closed:
        schema["$defs"]["Prediction"]["properties"]["label"]["enum"] = list(labels.labels)
    if top_k is not None:
        schema["properties"]["predictions"].update(minItems=1, maxItems=top_k)
    return schema


@dataclass(frozen=True)
class DistributionParse:
    """The outcome of parsing one reply.

    Either ``probs`` maps canonical labels to probabilities (highest first, summing to 1) or
    it is ``None`` and ``rejected_reason`` says why. ``repairs`` lists, in order, every fix
    applied to the reply; ``raw`` is the reply as received.
    """

    probs: dict[str, float] | None
    arguments: list[str]
    repairs: list[str]
    rejected_reason: str | None
    raw: str

    @property
    def ok(self) -> bool:
        return self.probs is not None


# --- cleaning the reply ----------------------------------------------------------------------

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


# --- reading label/probability entries out of a JSON value ----------------------------------

_LIST_KEYS = ("predictions", "prediction", "distribution", "probabilities", "diagnoses", "ranking")
_LABEL_KEYS = ("label", "name", "diagnosis", "disease", "class", "condition")
_PROB_KEYS = ("probability", "prob", "p", "confidence", "likelihood", "score")
_ARG_KEYS = ("argument", "rationale", "reason", "justification")
_NUMBER = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(%?)\s*")

Entry = tuple[Any, Any]  # (label, probability) as found, not yet validated


def _number(value: Any) -> tuple[float | None, bool]:
    """A probability-like value as a float, and whether it was written as a percentage."""
    if isinstance(value, bool):
        return None, False
    if isinstance(value, int | float):
        try:
            return float(value), False
        except OverflowError:
            return math.inf, False
    if isinstance(value, str) and (m := _NUMBER.fullmatch(value)):
        number = float(m[1])
        return (number / 100, True) if m[2] else (number, False)
    return None, False


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [s.strip() for s in items if isinstance(s, str) and s.strip()]


def _get(obj: dict[Any, Any], keys: tuple[str, ...]) -> Any:
    lowered = {str(k).casefold(): v for k, v in obj.items()}
    return next((lowered[k] for k in keys if k in lowered), None)


def _entries(container: Any, notes: list[str]) -> tuple[list[Entry], list[str]]:
    """Entries and per-prediction arguments from a mapping or a list of objects/pairs."""
    if isinstance(container, dict):
        return list(container.items()), []
    entries: list[Entry] = []
    arguments: list[str] = []
    if isinstance(container, list):
        for item in container:
            if isinstance(item, dict):
                entries.append((_get(item, _LABEL_KEYS), _get(item, _PROB_KEYS)))
                arguments += _strings(_get(item, _ARG_KEYS))
            elif isinstance(item, list) and len(item) == 2:
                entries.append((item[0], item[1]))
                if "read a list of [label, probability] pairs" not in notes:
                    notes.append("read a list of [label, probability] pairs")
    return entries, arguments


def _from_json(value: Any) -> tuple[list[Entry], list[str], list[str]]:
    """Entries, arguments and shape notes from one JSON value.

    Wrappers with a single member ({"answer": {...}}, [{...}]) are unwrapped a few levels.
    """
    for _ in range(4):
        notes: list[str] = []
        arguments: list[str] = []
        container = value
        if isinstance(value, dict):
            arguments = _strings(_get(value, ("arguments",)))
            container = _get(value, _LIST_KEYS)
            if container is None:
                container = {k: v for k, v in value.items() if str(k).casefold() != "arguments"}
                if any(_number(v)[0] is not None for v in container.values()):
                    notes.append("read a plain {label: probability} mapping")
        entries, per_label = _entries(container, notes)
        if any(isinstance(lbl, str) and _number(p)[0] is not None for lbl, p in entries):
            return entries, per_label + arguments, notes
        inner = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
        if len(inner) != 1 or not isinstance(inner[0], dict | list):
            break
        value = inner[0]
    return [], [], []


# --- last resort: "Dengue (60%), Chikungunya (25%)" ----------------------------------------

_TEXT_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d+)?|\.\d+)\s*(%?)")
_SEGMENT_SPLIT = re.compile(r"[\n,;|{}\[\]\u00b7\u2022]")
_LIST_MARKER = re.compile(r"^\s*(?:\(?\d+[.)]|[-*+>])\s+")


def _text_label(segment: str, labels: LabelSet | None) -> str:
    """The label written just before a number: the segment's last words, tidied.

    With a label set, the longest run of trailing words that the set recognizes wins, so
    "most likely it is Hepatitis C: 40%" yields "Hepatitis C".
    """
    segment = _LIST_MARKER.sub("", _SEGMENT_SPLIT.split(segment)[-1]).lstrip(") ")
    words = segment.rstrip(" \t:=(-\u2013\u2014").split()[-_MAX_LABEL_WORDS:]
    if labels is not None:
        for i in range(len(words)):
            if labels.match(" ".join(words[i:])) is not None:
                return " ".join(words[i:])
    return " ".join(words)


def _from_text(text: str, labels: LabelSet | None) -> list[Entry]:
    """Pairs "label: 40%", "label (40%)", "1. label - 40%", or "label: 0.4" (decimal after ':' or '=')."""
    entries: list[Entry] = []
    prev_end = 0
    for m in _TEXT_NUMBER.finditer(text):
        segment = text[prev_end : m.start()]
        is_percent = m[2] == "%"
        is_decimal = "." in m[1] and float(m[1]) <= 1 and segment.rstrip().endswith((":", "="))
        if not (is_percent or is_decimal):
            continue
        label = _text_label(segment, labels)
        if label:
            entries.append((label, float(m[1]) / 100 if is_percent else float(m[1])))
        prev_end = m.end()
    return entries


# --- from entries to a distribution ---------------------------------------------------------


def _names(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(repr(s) for s in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _finish(
    entries: list[Entry], labels: LabelSet | None, top_k: int | None, repairs: list[str]
) -> tuple[dict[str, float] | None, str | None]:
    """Validate values, map labels, merge, renormalize and truncate (each step noted)."""
    values: list[tuple[str, float, bool]] = []
    as_strings = invalid = skipped = 0
    for label, raw in entries:
        value, is_percent = _number(raw)
        if not isinstance(label, str) or not clean_display(label) or value is None:
            skipped += 1
        elif not math.isfinite(value) or value < 0:
            invalid += 1
        else:
            as_strings += isinstance(raw, str)
            values.append((label, value, is_percent))
    if skipped:
        repairs.append(f"ignored {skipped} entries without a text label and a number")
    if invalid:
        repairs.append(f"dropped {invalid} negative, NaN or infinite probabilities")
    if as_strings:
        repairs.append(f"read {as_strings} probabilities given as strings")
    if not values:
        if invalid:
            return None, "all probabilities were negative, NaN or infinite"
        return None, "no label/probability pairs with a number"

    bare = [v for _, v, pct in values if not pct]
    if bare and max(bare) > 1 and sum(bare) <= 101:
        repairs.append(f"read values summing to {sum(bare):.4g} as percentages")
        values = [(lbl, v if pct else v / 100, pct) for lbl, v, pct in values]

    merged: dict[str, list[Any]] = {}
    unknown: list[str] = []
    related: list[str] = []
    mapped: list[str] = []
    duplicates: list[str] = []
    for label, value, _ in values:
        name, how = labels.resolve(label) if labels is not None else (None, "unknown")
        if name is None:
            if labels is not None and labels.closed:
                if labels.related(label) is None:
                    unknown.append(clean_display(label))
                    continue
                related.append(clean_display(label))  # a broader or narrower name: another answer, kept apart
            name = clean_display(label)
        elif normalize_label(name) != normalize_label(label):
            mapped.append(f"{clean_display(label)!r} -> {name!r} ({how})")
        key = normalize_label(name)
        if key in merged:
            merged[key][1] += value
            duplicates.append(name)
        else:
            merged[key] = [name, value]
    if mapped:
        repairs.append(f"matched labels: {', '.join(mapped)}")
    if related:
        repairs.append(f"kept as written {len(related)} labels the class set lists as broader or narrower than a class: "
                       f"{_names(related)}")
    if duplicates:
        repairs.append(f"merged duplicate labels: {_names(sorted(set(duplicates)))}")
    if unknown:
        if not merged:
            return None, f"all {len(unknown)} labels unknown in the closed set: {_names(unknown)}"
        repairs.append(f"dropped {len(unknown)} labels unknown in the closed set: {_names(unknown)}")

    zero = [name for name, v in merged.values() if v == 0]
    if len(zero) == len(merged):
        return None, "all probabilities were zero or negative"
    if zero:
        repairs.append(f"dropped {len(zero)} labels with zero probability: {_names(zero)}")
    ranked = sorted(
        ((name, v) for name, v in merged.values() if v > 0), key=lambda nv: (-nv[1], normalize_label(nv[0]))
    )
    if top_k is not None and len(ranked) > top_k:
        repairs.append(f"kept the top {top_k} of {len(ranked)} labels")
        ranked = ranked[:top_k]
    largest = ranked[0][1]
    scaled = [(name, v / largest) for name, v in ranked]  # scale first: huge values cannot overflow
    total = sum(v for _, v in scaled)
    if abs(total * largest - 1) > 1e-6:
        repairs.append(f"renormalized probabilities that summed to {total * largest:.4g}")
    return {name: v / total for name, v in scaled}, None


def parse_distribution(
    raw: str, labels: LabelSet | None = None, *, top_k: int | None = None
) -> DistributionParse:
    """Parse an agent's reply into a distribution over ``labels`` (any string; never raises).

    Tried in order: the whole reply as JSON; JSON objects/arrays found inside it (prose, a
    ```json fence); the same after repairs (single quotes, trailing commas, bare ``40%``);
    finally "label: 40%" / "label (40%)" pairs in plain text. The JSON may be the
    :class:`DistributionReply` shape (label/probability keys have a few accepted aliases),
    a plain ``{label: probability}`` mapping, or a list of ``[label, probability]`` pairs.

    Then: entries without a number are ignored; negative, NaN and infinite values dropped;
    values given as strings or percentages converted (bare numbers are read as percentages
    when some exceed 1 and they sum to at most ~100); labels mapped through
    :meth:`LabelSet.match` (in a closed set unknown labels are dropped, except the broader or
    narrower names it lists, kept as written; in an open set or without a set they are kept as
    written); duplicates merged by summing; zero entries dropped; the result cut to ``top_k``
    and renormalized. ``labels=None`` means an open set with no known labels.
    """
    if top_k is not None and top_k < 1:
        raise ValueError("top_k must be at least 1")
    repairs: list[str] = []
    text = raw[:MAX_INPUT_CHARS]
    if len(raw) > MAX_INPUT_CHARS:
        repairs.append(f"cut the reply to its first {MAX_INPUT_CHARS} characters")
    cleaned = _CONTROL.sub("", text)
    if cleaned != text:
        repairs.append("removed control characters and terminal escapes")

    def result(probs: dict[str, float] | None, reason: str | None, arguments: list[str]) -> DistributionParse:
        return DistributionParse(probs, list(dict.fromkeys(arguments)), repairs, reason, raw)

    if not cleaned.strip():
        return result(None, "empty reply", [])
    found_json = False
    for value, notes in json_candidates(cleaned):
        found_json = True
        entries, arguments, shape_notes = _from_json(value)
        if entries:
            repairs.extend(notes + shape_notes)
            return result(*_finish(entries, labels, top_k, repairs), arguments)
    entries = _from_text(cleaned, labels)
    if entries:
        repairs.append(f"no usable JSON; read {len(entries)} 'label: percent' pairs from the text")
        return result(*_finish(entries, labels, top_k, repairs), [])
    if found_json:
        return result(None, "the JSON holds no label/probability pairs, and the text has no 'label: percent' pairs", [])
    return result(None, "no JSON object and no 'label: percent' pairs found", [])


def format_distribution(probs: Mapping[str, float] | None) -> str:
    """One line for people: "Hepatitis C 40% · Hepatitis B 30%" (highest first)."""
    if not probs:
        return "(no distribution)"
    ranked = sorted(probs.items(), key=lambda kv: -kv[1])
    return " · ".join(f"{name} {_percent(p)}" for name, p in ranked)


def _percent(p: float) -> str:
    return "<1%" if 0 < p < 0.01 else f"{p:.0%}"
