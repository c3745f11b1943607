"""Agents that cite the evidence of tests/helpers/evidence_files.py: one real passage quoted
exactly, one passage that does not exist, one real passage with a quote that is not in it, and
one claim with no source; what each must be classified as wherever it is shown.

Why a stand-in here: a real model cannot be made to fabricate or misquote on demand. The replies
are the oracle's (tests/helpers/scripted_backends.py: a function of the prompt, so a resumed run's fresh
backends answer as the first ones did), with these claims in every reply whose schema asks for
claims.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from backends.base import Message
from tests.helpers.scripted_backends import OracleBackend, reply_to

#: The claims every grounded reply lists (E2 and E8 are passages of the evidence folder).
CLAIMS = (
    {"claim": "Creatinine doubled", "source": "E2", "quote": "Creatinine rose from 1.0 to 2.1 mg/dL"},
    {"claim": "A biopsy showed nephritis", "source": "E99", "quote": "biopsy: nephritis"},
    {"claim": "Potassium was normal", "source": "[E8 p.1 ¶2]", "quote": "Potassium 4.0 mmol/L, normal"},
    {"claim": "The patient is frail", "source": "", "quote": ""},
)
#: What each claim must be found to be: (status, passage, problem).
VERDICTS = (("supported", "E2", ""), ("not_found", None, "no passage E99"), ("not_found", "E8", "the quote is not in E8"),
            ("uncited", None, ""))
#: How each is said (the screen, ``show``, the exports): the supported one with its passage's place.
LINES = ("✓ Creatinine doubled — E2 ¶2 · case/chart.txt; the quote is in it",
         "✗ A biopsy showed nephritis — cited 'E99': no passage E99; not a source",
         "✗ Potassium was normal — cited '[E8 p.1 ¶2]': the quote is not in E8; not a source",
         "– The patient is frail — no source given")
#: A free-text turn's words under evidence.
SAID = "The creatinine doubled, as the chart says."


def citing_reply(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
    """The oracle's reply, with :data:`CLAIMS` (and :data:`SAID` as a free-text turn's words)."""
    text = reply_to(messages, schema)
    if not schema or "claims" not in (schema.get("properties") or {}):
        return text
    reply = json.loads(text)
    reply["claims"] = list(CLAIMS)
    if "text" in schema["properties"] and set(schema["properties"]) == {"text", "claims"}:
        reply["text"] = SAID
    return json.dumps(reply)


def citing(model_id: str) -> OracleBackend:
    return OracleBackend(model_id, reply=citing_reply)
