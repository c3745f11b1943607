"""A protocol's findings as neutral blocks, for every renderer to draw in its own way.

Each protocol's ``present(outcome, debate)`` (declared on its definition) says what its run
found as :class:`Section` s of a few block kinds: paragraphs, definition lists, tables, bullet
lists and chart data. Three renderers read them and nothing else of a protocol's outcome: the
HTML report (``outputs.report``), the terminal (``symposium run``'s printer and ``show``) and the
app's outcome panel. So a new protocol's findings reach all three without a line outside its
folder, and a renderer never learns a protocol's outcome keys.

Every string in a block is untrusted text (a model wrote most of it): renderers escape it for
their medium. Charts are data (numbers per series), never drawn markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

#: How a paragraph reads: the lead of a section, a heading inside it, a sub-heading, a note, a
#: warning, or plain text ("").
ParaKind = Literal["", "lead", "h", "sub", "note", "warn", "subject", "hash"]


@dataclass
class Para:
    text: Any
    kind: str = ""  # one of ParaKind (a CSS class in the report)


@dataclass
class DefList:
    items: list[tuple[str, Any]]  # a value is a block or a scalar


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Any]]
    caption: str = ""
    numeric: bool = True  # right-align numbers


@dataclass
class Bullets:
    items: list[Any]


@dataclass(frozen=True)
class LineChart:
    """Values per round, one line per series (``None``: no value that round)."""

    title: str
    series: Mapping[str, Sequence[tuple[float, float | None]]]


@dataclass(frozen=True)
class BarChart:
    """For each category (a label, a subtopic), one bar per group (an agent, a judge), from 0 to
    ``scale``; ``percent``: values are shares, shown as percentages."""

    title: str
    groups: Mapping[str, Mapping[str, float]]
    scale: float = 1.0
    percent: bool = True


@dataclass
class Figures:
    """Charts shown side by side under one caption. A renderer that cannot draw (the terminal)
    shows their numbers or leaves them out."""

    charts: list[Any]
    caption: str = ""


Block = Para | DefList | Table | Bullets | Figures


@dataclass
class Section:
    """One part of a protocol's findings. ``claims``: the outcome keys it shows, so that the
    report's catch-all section ("every other recorded value") leaves them out; ``brief``: also
    shown in the app's outcome panel, where there is room for little."""

    id: str
    title: str
    blocks: list[Any] = field(default_factory=list)
    claims: frozenset[str] = frozenset()
    brief: bool = False


def num(value: Any) -> str:
    """A value as a reader sees it: floats to three decimals at most, booleans as yes/no."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.3g}"
    return str(value)


def number(value: Any) -> float | None:
    """A chart's value: a real number, else ``None`` (a gap)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def details(payload: Any) -> str:
    """A small record on one line: ``key: value; …``."""
    if isinstance(payload, Mapping):
        return "; ".join(f"{k}: {num(v) if not isinstance(v, Mapping | list) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in payload.items())
    return num(payload)


def value_block(value: Any, depth: int = 0) -> Any:
    """Any JSON value as blocks: a dict a definition list, a list of like dicts a table, a list
    of scalars a bullet list (or one line when short), a scalar its text. Generic on purpose:
    outcome and provenance keys added later show without code for them."""
    if isinstance(value, Mapping):
        if not value:
            return "—"
        return DefList([(str(k), value_block(v, depth + 1) if v is not None else "—") for k, v in value.items()])
    if isinstance(value, list | tuple):
        if not value:
            return "—"
        if all(isinstance(v, Mapping) for v in value) and depth < 4:
            keys = list(dict.fromkeys(k for v in value for k in v))
            if len(keys) <= 9 and all(not isinstance(v.get(k), Mapping | list) or len(json.dumps(v.get(k))) < 80
                                      for v in value for k in keys):
                return Table(keys, [[cell(v.get(k)) for k in keys] for v in value], numeric=False)
            if len(value) <= 8:  # a few wide records (participants): one column each, one row per field
                heads = [str(v.get("role") or v.get("name") or v.get("id") or f"#{i + 1}") for i, v in enumerate(value)]
                return Table(["", *heads], [[k, *(cell(v.get(k)) for v in value)] for k in keys], numeric=False)
            return Bullets([value_block(v, depth + 1) for v in value])
        if all(not isinstance(v, Mapping | list) for v in value):
            joined = ", ".join(num(v) for v in value)
            return joined if len(joined) <= 100 else Bullets([num(v) for v in value])
        return Bullets([value_block(v, depth + 1) for v in value])
    return num(value)


def cell(value: Any) -> str:
    """A value in one table cell: a flat record as ``key=value, …``, deeper ones as JSON."""
    def flat(v: Any) -> bool:
        return not isinstance(v, Mapping | list) or (isinstance(v, list) and all(not isinstance(x, Mapping | list) for x in v))

    if isinstance(value, Mapping) and all(flat(v) for v in value.values()):
        return ", ".join(f"{k}={cell(v)}" for k, v in value.items()) or "—"
    if isinstance(value, list) and flat(value):
        return "[" + ", ".join(num(v) for v in value) + "]"
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False)
    return "—" if value is None else num(value)


__all__ = ["BarChart", "Block", "Bullets", "DefList", "Figures", "LineChart", "Para", "ParaKind", "Section", "Table",
           "cell", "details", "num", "number", "value_block"]
