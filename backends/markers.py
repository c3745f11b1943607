"""Chat-template markers typed into message text, made inert before a server sees them.

In process, Symposium tokenizes message text as text, so ``<|im_end|>`` inside a case stays
seven ordinary tokens. An OpenAI-compatible server instead renders its chat template to one
string and tokenizes that with special tokens parsed (llama-cpp-python's server does), so the
same text would close the user's turn and could open a forged system turn. Before text goes to
a server, each marker-shaped run gets a WORD JOINER (U+2060) after its first character: it
reads the same, and no tokenizer matches it as the special token any more.
"""

from __future__ import annotations

import re

#: ChatML/Llama 3/Qwen ``<|…|>``, Gemma's turn tags, Llama 2/Mistral ``[INST]`` and ``<<SYS>>``,
#: and the sentence markers ``<s>``/``</s>``.
MARKER = re.compile(
    r"<\|[^|<>\s]{1,40}\|>"
    r"|</?(?:start_of_turn|end_of_turn|s|bos|eos)>"
    r"|\[/?INST\]"
    r"|<</?SYS>>"
)
JOINER = "\u2060"


def defang(text: str) -> str:
    """``text`` with every chat-template marker broken by an invisible joiner."""
    return MARKER.sub(lambda m: m.group(0)[0] + JOINER + m.group(0)[1:], text)
