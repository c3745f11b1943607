"""The multiagent debate's settings, journalled with each run (see :mod:`protocols.multiagent`)."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from protocols.core.params import CONFIG, Profile, param, token_limit
from protocols.measures.labels import LabelSet

#: The agents' role: ``agent-1``, ``agent-2`` ….
AGENT = "agent"


@pydantic_dataclass(config=CONFIG)
class MultiagentConfig:
    question: str
    labels: LabelSet | None = None
    title: str = ""
    rounds: int = param(2, ge=0, le=10, section="Du et al. §3", label="Debate rounds",
                        description="rounds in which each agent reads the others' answers and updates its own "
                                    "(the paper: 2; 0 = the agents answer alone and vote)")
    word_cap: int = param(200, ge=10, le=2000, section="Symposium", label="Words per answer",
                          description="length asked of each answer, its reasoning included (words)")
    turn_tokens: int = token_limit(500, "reply length limit of each answer")
    profile: Profile = "standard"

    SMALL_MODEL_PROFILE: ClassVar[dict[str, Any]] = {"rounds": 1, "word_cap": 40, "turn_tokens": 120}

    def describe(self) -> dict[str, Any]:
        data = asdict(self)
        data["labels"] = None if self.labels is None else list(self.labels.labels)
        data["closed"] = self.labels is not None and self.labels.closed
        data["synonyms"] = {} if self.labels is None else self.labels.synonyms
        return data

    @classmethod
    def from_description(cls, data: dict[str, Any]) -> MultiagentConfig:
        """The config journalled by :meth:`describe` (to resume a debate)."""
        values = {k: v for k, v in data.items() if k in {f.name for f in fields(cls)}}
        values["labels"] = (LabelSet(data["labels"], closed=data.get("closed", True), synonyms=data.get("synonyms"))
                            if data.get("labels") else None)
        return cls(**values)
