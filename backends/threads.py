"""How many threads an in-process engine (llama.cpp, torch on a CPU) uses by default."""

from __future__ import annotations

import os


def default_threads() -> int:
    """Half the logical CPUs (about the physical cores), at least one.

    ggml's worker threads spin while they wait for each other (torch's do too); with one thread
    per logical CPU any other busy thread (the Textual interface, a second process) stalls them
    all. Measured on a 2-CPU machine under load: 1 thread decoded SmolLM2 at 18.7 tok/s, 2
    threads at 2.8. Set ``threads`` on a model's entry to choose otherwise.
    """
    return max(1, (os.cpu_count() or 2) // 2)
