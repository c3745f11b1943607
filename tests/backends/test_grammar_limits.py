"""Every reply schema a protocol declares is one llama.cpp can constrain a reply to.

llama.cpp writes a string bound of n characters as n nested optional rules and refuses a
grammar past about a thousand of them; it says so on stderr and hands back no sampler, and a
sampler chain built on that went on unconstrained without a word: SocraSynth's points and joint
proposal, and the template's answer, were generated as free text while the code believed them
constrained. Here, on the bundled model's vocabulary, every pydantic model in ``protocols`` is
turned into the grammar the backend builds and into a sampler; and a schema llama.cpp refuses
is a :class:`BackendError` naming the cause, never a reply without its grammar.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import pytest
from pydantic import BaseModel

import protocols
from backends.base import BackendError, SamplingOptions, schema_of
from backends.llamacpp import LlamaCppBackend
from backends.llamacpp.native import Grammar
from backends.llamacpp.sampler import Sampler, grammar_for
from protocols.core.evidence import Evidence, EvidenceSettings, Grounding
from protocols.core.passages import EvidenceFile, Passage


def _reply_schemas() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for module in pkgutil.walk_packages(protocols.__path__, "protocols."):
        for name, value in vars(importlib.import_module(module.name)).items():
            if inspect.isclass(value) and issubclass(value, BaseModel) and value.__module__ == module.name:
                found[f"{module.name}.{name}"] = value
    return [found[k] for k in sorted(found)]


SCHEMAS = _reply_schemas()


#: Evidence adds its claims to every reply schema (the most claims a reply may list).
GROUNDED = Grounding(Evidence((EvidenceFile(1, "chart.txt", "txt", 10, "0" * 64, None, 1, 1),), (Passage(1, 1, None, 1, "Fever."),)),
                     EvidenceSettings(evidence_claims=12), retrieve=lambda query, k: [])


def test_the_protocols_declare_reply_schemas() -> None:
    assert len(SCHEMAS) >= 20 and any(s.__name__ == "JointProposal" for s in SCHEMAS)


@pytest.mark.parametrize("grounded", [False, True], ids=["plain", "with evidence"])
@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: f"{s.__module__}.{s.__name__}")
def test_every_reply_schema_becomes_a_grammar_llama_cpp_accepts(smollm: LlamaCppBackend, schema: type[BaseModel],
                                                                grounded: bool) -> None:
    json_schema = GROUNDED.schema(schema) if grounded else schema_of(schema)
    assert json_schema is not None
    sampler = Sampler(smollm.model, SamplingOptions(temperature=0.0), grammar_for(json_schema))
    try:
        assert sampler.constrained is not None
    finally:
        sampler.close()



def test_a_grammar_llama_cpp_refuses_is_an_error_not_free_text(smollm: LlamaCppBackend) -> None:
    """A string bound of 1,200 characters, compiled as it is (not through :func:`grammar_for`)."""
    refused = Grammar(json.dumps({"type": "object", "properties": {"a": {"type": "string", "maxLength": 1200}}, "required": ["a"]}))
    with pytest.raises(BackendError, match="llama.cpp refused the grammar"):
        Sampler(smollm.model, SamplingOptions(temperature=0.0), refused)


def test_the_backend_leaves_a_long_string_to_the_token_limit(smollm: LlamaCppBackend) -> None:
    """The same schema through the backend's own path: the bound is dropped from the grammar
    (the reply is still checked against it), so the reply is constrained."""
    long = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 1200}}, "required": ["a"]}
    sampler = Sampler(smollm.model, SamplingOptions(temperature=0.0), grammar_for(long))
    try:
        assert sampler.constrained is not None
    finally:
        sampler.close()


def test_a_free_text_reply_with_evidence_becomes_a_grammar_llama_cpp_accepts(smollm: LlamaCppBackend) -> None:
    """A protocol that asks for free text asks, with evidence, for ``{"text", "claims"}``."""
    sampler = Sampler(smollm.model, SamplingOptions(temperature=0.0), grammar_for(GROUNDED.schema(None)))
    try:
        assert sampler.constrained is not None
    finally:
        sampler.close()
