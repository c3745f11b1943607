"""A model's own Jinja chat template, rendered in a sandbox and tokenized safely.

A GGUF carries its chat template (``tokenizer.chat_template``); a hand-written format that
differs from it by one newline or BOS quietly degrades every turn, so in process we render the
model's own template by default, as llama.cpp, llama-cpp-python and Ollama do: in Jinja's
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` (a template is data from a downloaded
file: it may not call methods that mutate, reach attributes starting with ``_``, or import),
with the helpers templates expect (``raise_exception``, ``strftime_now``, ``bos_token``,
``eos_token``, a ``tojson`` that keeps non-ASCII text as transformers' does).

Three things make it safe for Symposium's use:

* **No forged turns.** The template is rendered with each message's content replaced by a
  placeholder, so we know which characters are markup and which are message text. When no
  message text contains special-token text, the whole prompt is tokenized at once, exactly as
  transformers or ``llama-server --jinja`` would (a space before a word stays one token with
  it); otherwise markup and text are tokenized apart and the text's markers stay plain text.
* **Systems the template cannot take.** Gemma 2 raises on a system message, Phi-3 mini drops it
  silently; for those (found at load by a probe) the system prompt is folded into the first
  user turn, as the hand-written Gemma format does.
* **KV reuse stays exact.** The per-agent caches reuse the longest common token prefix of the
  last prompt and the new one, so a template that rewrites an earlier turn (Mistral v0.3 moves
  the system prompt to the *last* user turn; reasoning models strip old thinking) costs a
  re-evaluation from the first differing token, never a wrong prompt. :func:`append_only`
  checks a debate's growth pattern at load, so ``symposium models test`` can say so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .base import BackendError, Message
from .chat_format import ChatFormat, detect_format, fold_system

#: Stands for message ``i`` while the template renders. NUL never occurs in a template's markup.
_SLOT = "\x00{}\x00"


class TemplateError(BackendError):
    """The chat template is invalid, or raised for this conversation."""


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, indent: int | None = None) -> str:
    # transformers' tojson: keep non-ASCII as is (Jinja's escapes it and sorts keys).
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _environment() -> ImmutableSandboxedEnvironment:
    # Same settings as transformers' apply_chat_template, so renderings match it exactly.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@dataclass(frozen=True)
class Piece:
    """One run of the rendered prompt: template markup, or the text of message ``message``."""

    text: str
    message: int | None = None


class ChatTemplate:
    """One model's Jinja chat template with its special-token texts."""

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = "", origin: str = "model") -> None:
        self.source = source
        self.origin = origin
        self.bos_token = bos_token
        self.eos_token = eos_token
        try:
            self._template = _environment().from_string(source)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"{origin}: its chat template does not parse (line {exc.lineno}: {exc.message}); "
                                "set chat_format on its entry in models.toml to use a hand-written format") from None
        #: The template has no place for a system message (it raises, or drops it).
        self.fold_system = not self._takes_system()

    # -- rendering --------------------------------------------------------------------------

    def render_raw(self, messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
        """The template's text for ``messages`` as given (no folding)."""
        try:
            return self._template.render(messages=list(messages), add_generation_prompt=add_generation_prompt,
                                         bos_token=self.bos_token, eos_token=self.eos_token)
        except jinja2.TemplateError as exc:  # raise_exception, undefined names, sandbox refusals
            raise TemplateError(f"{self.origin}: its chat template failed for this conversation ({exc})") from None

    def turns(self, messages: Sequence[Message]) -> list[Message]:
        """The messages as this template gets them (the system prompt folded in where needed)."""
        if not self.fold_system:
            return list(messages)
        return fold_system(messages)

    def pieces(self, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> list[Piece]:
        """The rendered prompt split into markup and message text.

        The template renders twice: with placeholders, to find the markup, and with the real
        text, as the reference. Templates may trim a message (Gemma, Llama 3), so each
        message's text is matched against the reference as given, then trimmed; anything else
        (a template that rewrites message text) is refused rather than guessed at.
        """
        turns = self.turns(messages)
        real = self.render_raw([{"role": m.role, "content": m.content} for m in turns],
                               add_generation_prompt=add_generation_prompt)
        slotted = self.render_raw([{"role": m.role, "content": _SLOT.format(i)} for i, m in enumerate(turns)],
                                  add_generation_prompt=add_generation_prompt)
        out: list[Piece] = []
        at = 0
        parts = slotted.split("\x00")
        for i, part in enumerate(parts):
            if i % 2 == 0:
                if not real.startswith(part, at):
                    raise self._rewrites(turns)
                if part:
                    out.append(Piece(part))
                at += len(part)
                continue
            index = int(part)
            following = parts[i + 1]
            content = turns[index].content
            for variant in dict.fromkeys((content, content.strip(), content.rstrip(), content.lstrip())):
                end = at + len(variant)
                if real.startswith(variant, at) and real.startswith(following, end):
                    if variant:
                        out.append(Piece(variant, index))
                    at = end
                    break
            else:
                raise self._rewrites(turns)
        if at != len(real):
            raise self._rewrites(turns)
        return out

    def render(self, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
        """The prompt as one text, as transformers' ``apply_chat_template`` would give it."""
        return "".join(p.text for p in self.pieces(messages, add_generation_prompt=add_generation_prompt))

    def end_of_turn(self) -> str:
        """The markup that closes an assistant turn (``<|im_end|>``, ``<end_of_turn>``, …):
        what the template puts after the reply when the conversation ends with it (its first
        line; the model's EOS text where the template puts nothing)."""
        probe = [Message("user", "Q"), Message("assistant", "A")]
        pieces = self.pieces(probe, add_generation_prompt=False)
        last = max(i for i, p in enumerate(pieces) if p.message is not None)
        after = "".join(p.text for p in pieces[last + 1 :]).strip()
        return after.split("\n")[0].strip() if after else self.eos_token

    # -- probes -----------------------------------------------------------------------------

    def _takes_system(self) -> bool:
        """Whether the template renders a system message (not raising, not dropping it)."""
        try:
            text = self.render_raw([{"role": "system", "content": _SLOT.format(0)},
                                    {"role": "user", "content": _SLOT.format(1)}])
        except TemplateError:
            return False
        return _SLOT.format(0) in text

    def _rewrites(self, turns: Sequence[Message]) -> TemplateError:
        roles = ", ".join(m.role for m in turns)
        return TemplateError(f"{self.origin}: its chat template changes message text (roles {roles}) in a way "
                             "Symposium cannot tokenise safely; set chat_format on its entry in models.toml")


#: A debate as one agent sees it: a system prompt, then alternating turns, growing.
PROBE_TURNS = (
    Message("system", "You are debating whether the patient has pneumonia. Argue for your side."),
    Message("user", "Opening: a 54-year-old with fever, cough and crackles at the right base."),
    Message("assistant", "Pneumonia is most likely: fever, productive cough and focal crackles."),
    Message("user", "Your opponent says bronchitis. Rebut in two sentences."),
    Message("assistant", "Focal crackles argue against bronchitis. A chest X-ray would settle it."),
    Message("user", "Give your final position."),
)


@dataclass(frozen=True)
class AppendOnly:
    """Whether each turn's prompt starts with the previous turn's prompt plus its reply."""

    ok: bool
    detail: str = ""

    def describe(self) -> str:
        return "append-only" if self.ok else f"not append-only ({self.detail}): earlier turns are re-evaluated"


def append_only(tokens_for: Callable[[Sequence[Message]], list[int]], reply_tokens: Callable[[str], list[int]]) -> AppendOnly:
    """Check a debate's growth pattern (:data:`PROBE_TURNS`) token by token.

    ``tokens_for(messages)`` is the backend's prompt for ``messages``; after an assistant reply
    the agent's cache holds that prompt plus the reply's tokens, so the next prompt must start
    with both for the cache to be reused whole.
    """
    for n in (2, 4):
        before = tokens_for(PROBE_TURNS[:n]) + reply_tokens(PROBE_TURNS[n].content)
        after = tokens_for(PROBE_TURNS[: n + 2])
        common = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
        if common < len(before):
            return AppendOnly(False, f"turn {n // 2 + 1} differs from token {common} of {len(before)}")
    return AppendOnly(True)


def template_format(template: ChatTemplate) -> ChatFormat:
    """The end-of-turn marker and stop strings for a model run from its own template: the
    marker the template closes a reply with, plus the stops of the family it resembles."""

    end = template.end_of_turn()
    family = detect_format(template.source)
    stops = tuple(dict.fromkeys(((end,) if end else ()) + (family.stop if family else ())))
    return ChatFormat(name=f"template ({family.name})" if family else "template", prefix={}, suffix={},
                      end_of_turn=end, stop=stops)


def tokenize_pieces(pieces: Sequence[Piece], encode: Callable[[str, bool], list[int]],
                    is_special: Callable[[int], bool]) -> list[int]:
    """Tokens of a rendered prompt: whole, as transformers or ``llama-server --jinja`` tokenize
    it, when that cannot turn message text into markup (no message text holds special-token
    text, and no special token forms across a boundary: the whole has exactly the markup's
    special tokens); otherwise piece by piece, message text with special tokens split.
    ``encode(text, special)`` is the model's tokenizer without BOS."""
    texts = [p.text for p in pieces if p.message is not None]
    if all(encode(t, True) == encode(t, False) for t in texts):
        whole = encode("".join(p.text for p in pieces), True)
        markup = sum(sum(map(is_special, encode(p.text, True))) for p in pieces if p.message is None)
        if sum(map(is_special, whole)) == markup:
            return whole
    return [t for p in pieces for t in encode(p.text, p.message is None)]
