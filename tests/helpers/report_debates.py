"""Debates to make reports of: one of every protocol (the scripted oracle models, fast) and the
sample EVINCE debate with a hostile turn (markup, a script, a remote image, bidi overrides)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from protocols.core.events import DebateStarted, Event, TurnFinished
from protocols.registry import PROTOCOLS
from store.journal import Journal
from store.queries import Queries
from tests.helpers.sample_debate import sample_events

#: What a hostile model (or case text) might write; each must reach the page as text.
SCRIPT = "<script>document.title='pwned'</script>"
MARKUP = "<b>bold</b> <a href=\"http://example.com/\">a link</a> &amp; <!-- a comment -->"
BIDI = "access\u202e level: user\u202c \u2066admin\u2069"
ANSI = "\x1b[31mred\x1b[0m"


def hostile_text(port: int) -> str:
    image = f"<img src=http://127.0.0.1:{port}/leak.png onerror=alert(1)>"
    return f"{SCRIPT}\n{MARKUP}\n{image}\n{BIDI}\n{ANSI}\n<style>body{{display:none}}</style>"


def every_protocol(folder: Path) -> dict[str, dict[str, Any]]:
    """A finished debate of each protocol in ``folder/all.db`` (oracle models at full speed, as
    the crash harness's fast mode: the real protocol, journal and runner), as export dicts."""
    import tests.helpers.scripted_debate as scripted

    names = [d.name for d in PROTOCOLS]
    paces = scripted.PACE_S, scripted.REPLY_S
    scripted.PACE_S = scripted.REPLY_S = 0.0  # no model's pace to imitate here: only the record matters
    db = folder / "all.db"
    try:
        for name in names:
            assert asyncio.run(scripted.main("run", name, str(db), "7")) == 0, name
    finally:
        scripted.PACE_S, scripted.REPLY_S = paces
    with Journal(db) as journal:
        queries = Queries(journal)
        out = {}
        for name in names:
            found = queries.find_debate(f"fast-{name}-")
            assert found is not None
            debate = queries.debate(found)
            assert debate is not None
            out[name] = debate
    return out


def hostile_events(port: int, debate_id: str = "hostile0001") -> list[Event]:
    """The sample EVINCE debate with hostile text in its title, subject, a turn and a label."""
    events = sample_events(debate_id)
    out: list[Event] = []
    first_turn = True
    for event in events:
        if isinstance(event, DebateStarted):
            event = dataclasses.replace(event, title=f"Case {SCRIPT}", subject=f"{MARKUP} {BIDI}")
        elif isinstance(event, TurnFinished) and first_turn:
            first_turn = False
            dist = {"<i>Hepatitis</i> \u202eC": 0.6, "Jaundice": 0.4}
            event = dataclasses.replace(event, text=hostile_text(port), distribution=dist, parse_notes=(f"note {SCRIPT}",))
        out.append(event)
    return out


def hostile_debate(path: Path, port: int) -> dict[str, Any]:
    with Journal(path) as journal:
        for event in hostile_events(port):
            journal.record(event)
        debate = Queries(journal).debate("hostile0001")
    assert debate is not None
    return debate
