"""The deliberation's findings as neutral blocks (see :mod:`protocols.core.present`): the
analyzer's argument map — claims with what supports and attacks them — its points of agreement
and open questions (Frieso Turkstra, Sara Nabhani, Khalid Al-Khatib, "ArgsBase: A Multi-Agent
Interface for Structured Human–AI Deliberation", section 4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocols.core.present import Bullets, DefList, Para, Section, value_block


def present(outcome: Mapping[str, Any], debate: Mapping[str, Any]) -> list[Section]:
    analysis = outcome.get("analysis") or {}
    section = Section("analysis", "The analyzer's map of the deliberation", claims=frozenset({"analysis"}))
    for claim in analysis.get("claims") or []:
        section.blocks.append(Para(f"{claim.get('id', '')} ({claim.get('speaker', '')}): {claim.get('text', '')}", "lead"))
        for key, label in (("supports", "supported by"), ("attacks", "attacked by")):
            if claim.get(key):
                section.blocks.append(DefList([(label, Bullets([f"{x.get('id', '')}: {x.get('text', '')}" for x in claim[key]]))]))
    for key in ("agreements", "open_questions", "summary", "links", "notes"):
        if analysis.get(key):
            section.blocks += [Para(key.replace("_", " ").capitalize(), "h"), value_block(analysis[key])]
    if not section.blocks:
        section.blocks.append(Para("No analysis was made in this debate.", "note"))
    return [section]
