"""The health check behind ``symposium models test ID``: what works for one registry entry.

Four checks in order: load the backend, one short reply, one structured reply (validated
against its schema), one scoring call. Each records its outcome, its time and the error's
own message, so the table says what to fix; a scoring call the server cannot make is "not
supported", which is not a failure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from backends.base import Backend, BackendError, Message, NotSupported, SamplingOptions
from backends.lifecycle import Engines, LoadEvent, Loading, StillLoading
from backends.registry import ModelEntry

Outcome = Literal["ok", "failed", "not supported", "skipped"]
GREEDY = SamplingOptions(max_tokens=24, temperature=0.0, repeat_penalty=1.0)


class Answer(BaseModel):
    """The structured reply asked for."""

    answer: str = Field(max_length=40)
    confidence: int = Field(ge=0, le=100)


@dataclass
class Check:
    name: str
    outcome: Outcome
    seconds: float | None = None
    detail: str = ""


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    warning: str | None = None

    @property
    def usable(self) -> bool:
        return all(c.outcome in ("ok", "not supported") for c in self.checks[:3])


async def _timed(name: str, action: Callable[[], Awaitable[str]], timeout: float | None) -> Check:
    started = time.perf_counter()
    try:
        detail = await asyncio.wait_for(action(), timeout)
    except NotSupported as exc:
        return Check(name, "not supported", time.perf_counter() - started, str(exc))
    except TimeoutError:
        return Check(name, "failed", time.perf_counter() - started, f"no answer within {timeout or 0:.0f} s")
    except (BackendError, ValueError) as exc:
        return Check(name, "failed", time.perf_counter() - started, str(exc))
    return Check(name, "ok", time.perf_counter() - started, detail)


async def check_model(entry: ModelEntry, *, timeout: float = 120.0,
                      on_progress: Callable[[str], None] | None = None) -> Report:
    """Run the four checks against ``entry``; never raises for a model's own failures.

    ``timeout`` bounds each call to the model, not the load: loading can take minutes (a 70B
    GGUF from a slow disk; vLLM's engine, which compiles the model at each start on a CPU), and a
    load cut short would say nothing about the replies. ``on_progress`` hears how the load goes
    (the lifecycle's load events, each as its message).
    """
    def on_event(event: LoadEvent) -> None:
        if on_progress is not None and isinstance(event, (Loading, StillLoading)):
            on_progress(event.message)

    async with Engines(on_event=on_event) as engines:  # closes the model however the checks end
        return await _checks(engines, entry, timeout, on_progress)


async def _checks(engines: Engines, entry: ModelEntry, timeout: float,
                  on_progress: Callable[[str], None] | None) -> Report:
    report = Report()
    loaded: list[Backend] = []

    async def load() -> str:
        loaded.append(await engines.load_entry(entry))
        return ", ".join(f"{k}={v}" for k, v in loaded[0].describe().items() if k not in ("model_id",))

    report.checks.append(await _timed("load", load, None))
    if not loaded:
        report.checks += [Check(n, "skipped") for n in ("reply", "structured reply", "scoring")]
        return report
    backend = loaded[0]
    if on_progress is not None:
        on_progress("a reply, a structured reply, scoring …")
    report.warning = backend.privacy_warning
    session = backend.session("health-check")

    async def reply() -> str:
        done = await session.complete([Message("user", "Say hello in one short sentence.")], GREEDY)
        if not done.text.strip():
            raise BackendError("the reply was empty")
        rate = done.decode_tokens_per_s
        return f"{done.text.strip()[:60]!r} ({done.usage.completion_tokens} tokens" + (f", {rate:.1f} tok/s)" if rate else ")")

    async def structured() -> str:
        question = [Message("user", "What is the capital of France? Answer as JSON with the answer and a confidence from 0 to 100.")]
        done = await session.complete(question, GREEDY.merged(max_tokens=48), schema=Answer)
        Answer.model_validate_json(done.text)
        dialect = backend.describe().get("structured_output")
        return f"{done.text.strip()[:60]}" + (f" (via {dialect})" if dialect else "")

    async def scoring() -> str:
        question = [Message("user", "What is the capital of France? Answer with the city name only.")]
        result = await session.score(question, ["Paris", "Berlin", "Tokyo"])
        top, p = result.ranked()[0]
        return f"ranks {top!r} first (p = {p:.2f})"

    for name, action in (("reply", reply), ("structured reply", structured), ("scoring", scoring)):
        report.checks.append(await _timed(name, action, timeout))
    return report
