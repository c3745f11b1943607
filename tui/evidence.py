"""Evidence for a debate, as every interface attaches it: the command line's ``--evidence``, the
New-debate form's field, the benchmark's ``--evidence``.

The files are read (:mod:`protocols.core.documents`) and indexed (:mod:`store.evidence`) before
the debate starts, off the event loop, so a file that cannot be read stops the start with its
reason and no debate is journalled; with ``redact`` every identifier is masked before the text
is cut into passages (:mod:`outputs.redact`), and the counts are kept on each file and said.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from outputs.redact import redact as mask
from protocols.core.definition import EVIDENCE
from protocols.core.documents import EvidenceError, load
from protocols.core.events import Event
from protocols.core.evidence import EvidenceSettings, Grounding
from protocols.core.params import ParamError, Profile
from store.evidence import grounding


def paths_of(value: Any) -> list[str]:
    """The paths an evidence value names (a list from a repeated flag, or one text with ``;``)."""
    parsed = EVIDENCE.value(value)
    return list(parsed or [])


def settings_of(values: Mapping[str, Any], profile: Profile) -> EvidenceSettings:
    """The evidence settings from ``values`` (parameters by name), the profile's defaults for the rest;
    :class:`~protocols.core.params.ParamError` naming a bad one."""
    return EvidenceSettings.of({k: values.get(k) for k in ("evidence_passages", "evidence_claims")}, profile)


def read_evidence(paths: Sequence[str], settings: EvidenceSettings, *, redact: bool = False) -> tuple[Grounding, list[str]]:
    """The files read and indexed, and what to tell the user (files skipped, identifiers masked);
    :class:`~protocols.core.documents.EvidenceError` naming a file that cannot be read."""

    def masked(text: str) -> tuple[str, Mapping[str, int]]:
        done = mask(text)
        return done.text, done.counts

    evidence, notes = load(paths, redact=masked if redact else None)
    if redact:
        counts: dict[str, int] = {}
        for f in evidence.files:
            for kind, n in f.redactions.items():
                counts[kind] = counts.get(kind, 0) + n
        said = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing was found to mask"
        notes.append(f"evidence redacted before indexing: {said}")
    return grounding(evidence, settings), notes


def summary(g: Grounding) -> str:
    """One line on what a debate's evidence holds."""
    if g.evidence is None:
        return "no evidence"
    files = g.evidence.files
    return (f"evidence: {len(files)} file{'s' if len(files) != 1 else ''} ({', '.join(f.name for f in files[:4])}"
            f"{', …' if len(files) > 4 else ''}), {len(g.evidence.passages)} passages")


async def with_evidence(load_it: Callable[[], tuple[Grounding, list[str]]], start: Callable[[Grounding], AsyncIterator[Event]],
                        told: Callable[[str], None] | None = None) -> AsyncIterator[Event]:
    """The run ``start`` begins once the evidence is read (in a worker thread: a 300-page PDF
    takes seconds); an unreadable file ends it before its first event, with the reason."""
    found, notes = await asyncio.to_thread(load_it)
    for note in notes:
        if told is not None:
            told(note)
    events = start(found)
    try:
        async for event in events:
            yield event
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


__all__ = ["EvidenceError", "ParamError", "paths_of", "read_evidence", "settings_of", "summary", "with_evidence"]
