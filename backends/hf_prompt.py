"""Prompts as token ids from a Hugging Face tokenizer (transformers and vLLM in process).

The markup comes from the tokenizer's chat template, rendered by the same sandboxed renderer as
the llama.cpp backend (:mod:`backends.chat_template`: trimmed turns, system prompts folded for
templates without one), or from the entry's ``chat_format`` when the tokenizer has none (the
base Gemma GGUF). Message text that contains special-token text (``<|im_end|>`` in a case) is
tokenized apart with special tokens split, so it stays text and cannot forge a turn boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import BackendError, Message
from .chat_format import ChatFormat, get_format
from .chat_template import ChatTemplate, template_format, tokenize_pieces
from .registry import ModelEntry

#: Stands for message ``i`` while the template renders; NUL never occurs in a template.
_SLOT = "\x00symposium-slot-{}\x00"


class Prompter:
    """Renders and tokenizes conversations for one tokenizer."""

    def __init__(self, tokenizer: Any, entry: ModelEntry) -> None:
        self.tokenizer = tokenizer
        self.template: ChatTemplate | None = None
        self.format: ChatFormat | None
        if tokenizer.chat_template and not entry.chat_format:
            self.template = ChatTemplate(tokenizer.chat_template, bos_token=tokenizer.bos_token or "",
                                         eos_token=tokenizer.eos_token or "", origin=f"model {entry.id!r}")
            self.format = template_format(self.template)  # its end-of-turn marker and stops
        elif entry.chat_format:
            self.format = get_format(entry.chat_format)
        else:
            raise BackendError(f"model {entry.id!r}: its tokenizer has no chat template; "
                               "set chat_format (chatml, gemma, llama3 or mistral) on its entry in models.toml")
        self.end_of_turn: str = self.format.end_of_turn if self.format else (tokenizer.eos_token or "")

    def encode(self, text: str, *, special: bool) -> list[int]:
        """Tokens of ``text``; ``special=False`` keeps marker look-alikes as plain text."""
        if not text:
            return []
        return list(self.tokenizer(text, add_special_tokens=False, split_special_tokens=not special)["input_ids"])

    def end_ids(self, extra: Any = None) -> set[int]:
        """Token ids that end a reply: EOS, the turn's end marker, and ``extra`` (a model's
        generation config may list more)."""
        ids = {self.tokenizer.eos_token_id} if self.tokenizer.eos_token_id is not None else set()
        ids |= set(extra) if isinstance(extra, list | tuple | set) else {extra} if extra is not None else set()
        marker = self.encode(self.end_of_turn, special=True)
        if len(marker) == 1:
            ids.add(marker[0])
        return ids

    def prompt_ids(self, messages: Sequence[Message], reply_prefix: str = "") -> list[int]:
        """The prompt's tokens up to the start of the assistant's reply (and ``reply_prefix``)."""
        if self.template is not None:
            return self._template_ids(messages) + self.encode(reply_prefix, special=False)
        assert self.format is not None
        turns = self.format.turns(messages)
        contents = [t.content for t in turns]
        text = self.format.render([Message(t.role, _SLOT.format(i)) for i, t in enumerate(turns)])
        if self.tokenizer.bos_token and getattr(self.tokenizer, "add_bos_token", True):
            text = self.tokenizer.bos_token + text
        ids: list[int] = []
        for i, part in enumerate(text.split("\x00")):
            if i % 2 == 0:
                ids += self.encode(part, special=True)
            else:
                ids += self.encode(contents[int(part.rsplit("-", 1)[1])], special=False)
        return ids + self.encode(reply_prefix, special=False)

    def scoring_ids(self, messages: Sequence[Message], candidates: Sequence[str], prefix: str) -> tuple[list[int], list[list[int]]]:
        """The shared prompt, and each candidate's tokens followed by the end-of-turn marker (so
        a label is told from its own prefix). Empty candidates are refused: they would score the
        end of the turn alone."""
        prompt = self.prompt_ids(messages, reply_prefix=prefix)
        ends = self.encode(self.end_of_turn, special=True)
        encoded = [self.encode(c, special=False) + ends for c in candidates]
        if any(len(e) == len(ends) for e in encoded):
            raise ValueError("score() candidates must be non-empty strings")
        return prompt, encoded

    def _template_ids(self, messages: Sequence[Message]) -> list[int]:
        """The template's prompt, tokenized whole as ``apply_chat_template`` does (no BOS beyond
        the template's own) unless message text carries special-token text."""
        assert self.template is not None
        specials = set(self.tokenizer.all_special_ids) | set(getattr(self.tokenizer, "added_tokens_decoder", {}))
        return tokenize_pieces(self.template.pieces(messages), lambda text, special: self.encode(text, special=special),
                               specials.__contains__)
