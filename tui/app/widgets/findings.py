"""A protocol's brief findings (the sections its ``present`` marks ``brief``) as lines of the
debate screen's outcome panel: a flag, the recommendations, a joint proposal's pros and cons.
The panel is narrow and the transcript holds the rest, so each block gives a few short lines;
every string is untrusted text, made safe and never read as markup."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.content import Content

from protocols.core.present import Bullets, DefList, Figures, Para, Section, Table, num
from tui.sanitize import terminal_safe

#: Most lines one block gives, and most characters a line keeps.
LINES, WIDTH = 12, 160


def brief_lines(sections: Iterable[Section]) -> list[Content]:
    lines: list[Content] = []
    for section in sections:
        if section.brief:
            for block in section.blocks:
                lines += _block(block)[:LINES]
    return lines


def _text(value: Any) -> str:
    return terminal_safe(value if isinstance(value, str) else num(value))[:WIDTH]


def _block(block: Any) -> list[Content]:
    match block:
        case Para():
            if block.kind in ("lead", "note"):  # the lead is what the outcome in words already quotes
                return []
            style = {"warn": "$notice", "h": "bold"}.get(block.kind, "")
            return [Content.styled(_text(block.text), style)] if str(block.text).strip() else []
        case DefList():
            return [Content(f"{_text(k)}: {_text(v)}") for k, v in block.items if not isinstance(v, DefList | Table | Bullets)]
        case Bullets():
            return [Content(f"• {_text(item)}") for item in block.items if isinstance(item, str | int | float) and str(item).strip()]
        case Table() | Figures():
            return []  # too wide for the panel: the report and `show` draw them
    return [Content(_text(block))] if str(block).strip() else []
