"""What a headless command prints while its models load (:func:`print_load_events`): a terminal
log, not a status line, so a load of minutes (vLLM's engine compiling on a CPU) must neither
flood it with a line a second nor hide a new stage for half a minute.

The events are made by hand: the rule is about which of them are printed, and the lifecycle that
sends them is tested in tests/backends/test_lifecycle.py.
"""

from __future__ import annotations

import io

from rich.console import Console

from backends.lifecycle import Loaded, Loading, PrivacyWarning, StillLoading
from tui.headless.session import print_load_events


def test_each_new_stage_at_once_a_long_one_every_half_minute_and_every_warning() -> None:
    out = io.StringIO()
    show = print_load_events(Console(file=out, width=200, highlight=False))
    events = [
        Loading("m", "Model M", "vllm", 1, 1),
        StillLoading("m", "Model M", None, 1.0),  # nothing reported yet: nothing new to say
        StillLoading("m", "Model M", "loading the tokenizer", 2.0),  # a new stage: at once
        StillLoading("m", "Model M", "loading the tokenizer", 3.0),
        StillLoading("m", "Model M", "starting the engine", 4.0),  # another: at once
        StillLoading("m", "Model M", "starting the engine", 29.0),
        StillLoading("m", "Model M", "starting the engine", 31.0),  # half a minute in
        StillLoading("m", "Model M", "starting the engine", 59.0),
        StillLoading("m", "Model M", "starting the engine", 61.0),  # a minute in
        Loaded("m", "Model M", 62.0),
        PrivacyWarning("m", "debate text goes to 10.0.0.5"),
    ]
    for event in events:
        show(event)
    assert out.getvalue().splitlines() == [
        "loading Model M …",
        "loading Model M: loading the tokenizer … 2 s",
        "loading Model M: starting the engine … 4 s",
        "loading Model M: starting the engine … 31 s",
        "loading Model M: starting the engine … 61 s",
        "warning: debate text goes to 10.0.0.5",
    ]


def test_a_second_model_starts_its_own_count() -> None:
    out = io.StringIO()
    show = print_load_events(Console(file=out, width=200, highlight=False))
    for event in (Loading("a", "A", "vllm", 1, 2), StillLoading("a", "A", "engine", 40.0),
                  Loading("b", "B", "llamacpp", 2, 2), StillLoading("b", "B", None, 10.0),
                  StillLoading("b", "B", None, 31.0)):
        show(event)
    assert out.getvalue().splitlines() == [
        "loading A …", "loading A: engine … 40 s", "loading B …", "loading B … 31 s"]
