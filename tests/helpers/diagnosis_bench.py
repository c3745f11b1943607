"""Cases and scripted answers for the diagnosis benchmark's bookkeeping tests.

Scripted models make every token count known: model A's replies are sized by what it is asked
(a refutation, a reasoning request, a prediction), so a test can lengthen the debate and watch
the equal-cost baseline follow. (Scripted: the point is the bookkeeping, not a model's skill.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from backends.base import Message
from protocols.evince import REASON_FIRST

#: Four cases of three diseases, as the benchmark's CSV holds them.
CASES = "case_id,disease,symptoms\nc1,Malaria,fever;chills\nc2,Malaria,sweating\nc3,Dengue,rash;joint_pain\nc4,Typhoid,rose_spots\n"


def _prediction(top: str, other: str, argument: str = "a") -> str:
    return json.dumps({"predictions": [{"label": top, "probability": 0.7, "argument": argument},
                                       {"label": other, "probability": 0.3, "argument": "b"}], "arguments": []})


def sized_answer(debate_words: int) -> Any:
    """Model A (and B): a refutation turn carries ``debate_words`` words of argument; the
    reasoning request gets 40 words; any other prediction a short one."""

    def answer(messages: Sequence[Message], schema: dict[str, Any] | None) -> str:
        last = messages[-1].content
        if last == REASON_FIRST:
            return " ".join(["because"] * 40)
        if "Refute" in last:
            return _prediction("Malaria", "Dengue", " ".join(["since"] * debate_words))
        return _prediction("Malaria", "Dengue")

    return answer
