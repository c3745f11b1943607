"""The template's settings, journalled with each run. A field declared with :func:`param` is a
parameter: the command line's ``--flag``, the form's field and the config's validation all come
from this one declaration; its default suits real 7–70B instruction models, and
``SMALL_MODEL_PROFILE`` the bundled tiny pair."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, ClassVar

from pydantic.dataclasses import dataclass as pydantic_dataclass

from protocols.core.params import CONFIG, Profile, from_description, param, token_limit


@pydantic_dataclass(config=CONFIG)
class TemplateConfig:
    question: str
    title: str = ""
    word_cap: int = param(150, ge=10, le=1000, section="Symposium", label="Words per answer",
                          description="the answer's length asked of each agent (words)")
    turn_tokens: int = token_limit(300, "reply length limit of each answer")
    profile: Profile = "standard"

    SMALL_MODEL_PROFILE: ClassVar[dict[str, Any]] = {"turn_tokens": 80, "word_cap": 40}

    def describe(self) -> dict[str, Any]:
        """What the journal keeps of the config: everything a resumed run needs."""
        return asdict(self)

    @classmethod
    def from_description(cls, data: dict[str, Any]) -> TemplateConfig:
        return from_description(cls, data)
