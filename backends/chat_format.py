"""Hand-written chat turn formats: for models whose file has no chat template (the base Gemma
3 270M), entries that name one in ``models.toml``, and OpenAI-compatible servers (to score).

A GGUF's own Jinja template is the default in process (:mod:`backends.chat_template`); these
formats render message by message with fixed prefixes and suffixes, so they are append-only by
construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .values import Message


@dataclass(frozen=True)
class ChatFormat:
    """How one model family wraps chat turns.

    ``prefix[role] + content + suffix`` is one turn; generation starts after
    ``prefix["assistant"]``. Families without a system role fold the system prompt into the
    first user turn (``system_role=False``).
    """

    name: str
    prefix: dict[str, str]
    suffix: dict[str, str]
    system_role: bool = True
    #: Text that ends an assistant turn; scoring appends it so a candidate must be the whole reply.
    end_of_turn: str = ""
    #: Extra stop strings for models that do not emit their end-of-turn token reliably.
    stop: tuple[str, ...] = ()

    def turns(self, messages: Sequence[Message]) -> list[Message]:
        """The messages as this family sees them (system folded in where there is no role)."""
        return list(messages) if self.system_role else fold_system(messages)

    def render(self, messages: Sequence[Message], reply_prefix: str = "") -> str:
        """The prompt as one text, up to the start of the assistant's reply (no BOS). For
        servers and tokenizers that take text; in process, llama.cpp tokenizes turn by turn."""
        body = "".join(self.prefix[m.role] + m.content + self.suffix[m.role] for m in self.turns(messages))
        return body + self.prefix["assistant"] + reply_prefix


def fold_system(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each system prompt folded into the next user turn (Gemma's convention:
    the system text, a blank line, the user's text), for models with no system role."""
    folded: list[Message] = []
    pending_system: list[str] = []
    for message in messages:
        if message.role == "system":
            pending_system.append(message.content)
            continue
        if pending_system and message.role == "user":
            message = Message("user", "\n\n".join([*pending_system, message.content]))
            pending_system = []
        folded.append(message)
    if pending_system:  # a system prompt with no user turn after it
        folded.append(Message("user", "\n\n".join(pending_system)))
    return folded


CHATML = ChatFormat(
    name="chatml",
    prefix={"system": "<|im_start|>system\n", "user": "<|im_start|>user\n",
            "assistant": "<|im_start|>assistant\n"},
    suffix={"system": "<|im_end|>\n", "user": "<|im_end|>\n", "assistant": "<|im_end|>\n"},
    end_of_turn="<|im_end|>",
    stop=("<|im_end|>", "<|im_start|>"),
)

# Gemma's documented turn format: no system role, "model" for the assistant.
GEMMA = ChatFormat(
    name="gemma",
    prefix={"user": "<start_of_turn>user\n", "assistant": "<start_of_turn>model\n"},
    suffix={"user": "<end_of_turn>\n", "assistant": "<end_of_turn>\n"},
    system_role=False,
    end_of_turn="<end_of_turn>",
    stop=("<end_of_turn>", "<start_of_turn>"),
)

LLAMA3 = ChatFormat(
    name="llama3",
    prefix={r: f"<|start_header_id|>{r}<|end_header_id|>\n\n" for r in ("system", "user", "assistant")},
    suffix={r: "<|eot_id|>" for r in ("system", "user", "assistant")},
    end_of_turn="<|eot_id|>",
    stop=("<|eot_id|>",),
)

# Mistral / Mixtral instruct: no system role; the assistant turn closes with </s>.
MISTRAL = ChatFormat(
    name="mistral",
    prefix={"user": "[INST] ", "assistant": ""},
    suffix={"user": " [/INST]", "assistant": "</s>"},
    system_role=False,
    end_of_turn="</s>",
    stop=("[INST]",),
)

FORMATS: dict[str, ChatFormat] = {f.name: f for f in (CHATML, GEMMA, LLAMA3, MISTRAL)}

# Markers that identify a family in a GGUF's ``tokenizer.chat_template``.
_TEMPLATE_MARKERS = (
    ("<|im_start|>", CHATML),
    ("<start_of_turn>", GEMMA),
    ("<|start_header_id|>", LLAMA3),
    ("[INST]", MISTRAL),
)


def get_format(name: str) -> ChatFormat:
    """The format called ``name``; the error lists the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"unknown chat format {name!r}; known formats: {known}") from None


def detect_format(template: str | None) -> ChatFormat | None:
    """Guess the family from a chat template's text, or ``None`` when it is unrecognised."""
    if not template:
        return None
    for marker, fmt in _TEMPLATE_MARKERS:
        if marker in template:
            return fmt
    return None
