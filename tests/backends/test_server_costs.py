"""What a server says a call cost (backends/openai_compat.py): its cache hits and its own prompt
and decode times, read from its reply, which is untrusted text. A figure it does not report, or
reports as something other than a count or a time, is unknown (``None``), never 0 and never
whatever the server wrote.

The replies are the shapes vLLM (OpenAI's ``prompt_tokens_details``) and llama-server
(``timings``) send; the tests' own ``llama_cpp.server`` sends neither (the backend contract
test checks that its figures stay unknown), so these are given here as the servers write them.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from backends.base import Timing
from backends.openai_compat import cached_of, count_of, seconds_of, server_timings

#: llama-server's final streamed chunk carries these (tools/server: ``timings``).
LLAMA_SERVER_TIMINGS = {"cache_n": 236, "prompt_n": 28, "prompt_ms": 61.5, "prompt_per_token_ms": 2.2,
                        "predicted_n": 41, "predicted_ms": 812.25, "predicted_per_second": 50.5}


def test_the_cache_hits_a_server_reports_are_read_where_it_reports_them() -> None:
    assert cached_of({"prompt_tokens": 300, "prompt_tokens_details": {"cached_tokens": 256}}, None) == 256  # vLLM, OpenAI
    assert cached_of({"prompt_tokens": 264}, LLAMA_SERVER_TIMINGS) == 236  # llama-server
    assert cached_of({"prompt_tokens": 264, "prompt_tokens_details": {"cached_tokens": 0}}, LLAMA_SERVER_TIMINGS) == 0
    assert cached_of({"prompt_tokens": 264}, None) is None  # llama_cpp.server, Ollama: not reported, not known
    assert cached_of({"prompt_tokens": 264, "prompt_tokens_details": None}, {"prompt_ms": 3}) is None


@pytest.mark.parametrize("value", ["256", -1, 2.5, True, None, [256], {"n": 1}, float("nan")])
def test_a_count_that_is_not_a_whole_non_negative_number_is_unknown(value: Any) -> None:
    assert count_of(value) is None
    assert cached_of({"prompt_tokens_details": {"cached_tokens": value}}, {"cache_n": value}) is None


@pytest.mark.parametrize("value", ["61.5", -0.5, math.inf, math.nan, True, None, [1.0]])
def test_a_time_that_is_not_a_finite_non_negative_number_is_unknown(value: Any) -> None:
    assert seconds_of(value) is None
    timing = Timing()
    server_timings(timing, {"prompt_ms": value, "predicted_ms": value})
    assert timing.prefill_s is None and timing.decode_s is None


def test_llama_servers_own_times_are_the_calls_prefill_and_decode() -> None:
    timing = Timing()
    server_timings(timing, LLAMA_SERVER_TIMINGS)
    assert (timing.prefill_s, timing.decode_s) == (0.0615, 0.81225)
    untouched = Timing()
    server_timings(untouched, None)
    assert (untouched.prefill_s, untouched.decode_s) == (None, None)
