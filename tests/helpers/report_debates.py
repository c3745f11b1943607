"""Debates to make reports of: one of every protocol (the scripted oracle models, fast) and the
sample EVINCE debate with a hostile turn (markup, a script, a remote image, bidi overrides)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
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


#: Words no line can break at, as a model, a pasted record or a file name may hold them: a URL
#: with no space, a gene list run together, a model's file path.
LONG_WORD = "https://records.example.org/patients/" + "0123456789abcdef" * 8 + "/discharge-summary-final-final-v2"
LONG_LABEL = "Hepatocellular_carcinoma_with_portal_vein_thrombosis_and_ascites_(BCLC_stage_C)"
LONG_MODEL = "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF/Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf"
LONG_FILE = "blood-panel_" + "2025-03-14T09h41_" * 4 + "creatinine-potassium-sodium-bicarbonate.txt"


def wide(debate: dict[str, Any]) -> dict[str, Any]:
    """``debate`` (an export dict) with what makes a page wide where a report shows it: a word no
    line can break at in the title, subject, each turn, the moderator's words, a notice, a judge's
    reasons and the parameters; a long model id and file path for each seat; a long label in each
    distribution; and every call's cost figures measured (the cost tables at their widest)."""
    out = copy.deepcopy(debate)
    out["title"] = f"{out.get('title') or ''} {LONG_WORD}"
    out["subject"] = f"{out.get('subject') or ''} {LONG_WORD}"
    models = {p["model_id"]: f"{LONG_MODEL}#{i}" for i, p in enumerate(out.get("participants") or [])}
    for row in [*(out.get("participants") or []), *(out.get("turns") or []), *(out.get("model_calls") or [])]:
        row["model_id"] = models.get(row.get("model_id"), row.get("model_id"))
    for seat in (out.get("provenance") or {}).get("participants") or []:
        seat["model_id"] = models.get(seat.get("model_id"), seat.get("model_id"))
        seat.update(file=f"/home/clinician/models/{LONG_MODEL}", file_sha256="5f" * 32, quantization="Q4_K_M")
    for turn in out.get("turns") or []:
        turn["text"] = f"{turn.get('text') or ''}\n{LONG_WORD}"
        if turn.get("distribution"):
            first = next(iter(turn["distribution"]))
            turn["distribution"] = {(LONG_LABEL if k == first else k): p for k, p in turn["distribution"].items()}
    for judgement in out.get("judgements") or []:
        judgement["judge_model"] = models.get(judgement.get("judge_model"), judgement.get("judge_model"))
        if isinstance(judgement.get("reasons"), dict):
            judgement["reasons"]["justification"] = LONG_WORD
    out["moderator_events"] = [*(out.get("moderator_events") or []),
                               {"round": 1, "created_at": out.get("created_at"), "kind": "interjection",
                                "payload": {"text": f"Consider {LONG_WORD}"}}]
    out["notices"] = [*(out.get("notices") or []), {"round": 1, "text": f"A notice about {LONG_WORD}"}]
    out["config"] = {**(out.get("config") or {}), "note": LONG_WORD}
    out["call_costs"] = [{"call_id": call.get("id"), "cached_tokens": 123_456, "wait_s": 1234.5, "prefill_s": 987.6,
                          "decode_s": 4321.0} for call in out.get("model_calls") or []]
    return out


def cited_evidence_debate(folder: Path) -> dict[str, Any]:
    """An EVINCE debate argued from a file with a long unbroken name and passage, whose agents
    cite it (the scripted replies quote its first passage): the Sources section at its widest."""
    from backends.base import SamplingOptions
    from protocols.core.agents import Agent
    from protocols.core.moderation import CommandChannel
    from store.drive import drive
    from tests.helpers.samples import FIRST, form_values, spec_of
    from tests.helpers.scripted_backends import OracleBackend, reply_to

    passage = f"Potassium 5.9 mmol/L {LONG_WORD}"
    path = folder / LONG_FILE
    path.write_text(f"{passage}\n\nSodium 134 mmol/L.\n", encoding="utf-8")

    def citing(messages: Any, schema: dict[str, Any] | None) -> str:
        text = reply_to(messages, schema)
        if schema and "claims" in (schema.get("properties") or {}):
            reply = json.loads(text)
            reply["claims"] = [{"claim": "Potassium is high", "source": "E1", "quote": passage}]
            return json.dumps(reply)
        return text

    spec = spec_of("evince")
    values = form_values(spec, FIRST["evince"][1], {"evidence": str(path)})
    roles = spec.roles_for(values)
    backends = {m: OracleBackend(m, reply=citing) for m in set(roles.values())}
    agents = {r: Agent(r, backends[m], SamplingOptions(max_tokens=64)) for r, m in roles.items()}

    async def person(prompt: str) -> str:
        return ""

    with Journal(folder / "evidence.db") as journal:
        asyncio.run(drive(spec.build(values, agents, "cited0001", CommandChannel(), person), journal))
        debate = Queries(journal).debate("cited0001")
    assert debate is not None and debate["evidence"]["files"], "the evidence was not journalled"
    assert any(c.get("status") == "supported" for t in debate["turns"] for c in t.get("citations") or [])
    return debate
