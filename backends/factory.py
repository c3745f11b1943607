"""Build a backend for a registry entry. The only place that maps ``backend = …`` to a class."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from .base import Backend, BackendUnavailable
from .registry import ModelEntry
from .sources import resolve_path

#: Receives a loading stage ("starting vLLM's engine …"), with the seconds spent so far.
OnProgress = Callable[[str], None]
#: How often a slow load reports that it is still going.
TICK_S = 1.0


def create_backend(entry: ModelEntry, progress: OnProgress = lambda _: None) -> Backend:
    """Load ``entry`` (blocking: loading weights, or starting vLLM's engine, takes from
    milliseconds to minutes). ``progress`` hears the stages of a long load, from this thread."""
    match entry.backend:
        case "llamacpp":
            from .llamacpp import LlamaCppBackend

            return LlamaCppBackend(entry, resolve_path(entry))
        case "openai":
            from .openai_compat import OpenAIBackend

            return OpenAIBackend(entry)
        case "transformers":
            from .hf_transformers import TransformersBackend

            return TransformersBackend(entry, resolve_path(entry))
        case "vllm":
            from .vllm_engine import VllmBackend

            return VllmBackend(entry, progress=progress)
    raise BackendUnavailable(f"model {entry.id!r}: unknown backend {entry.backend!r}")


async def load_backend(entry: ModelEntry, on_progress: OnProgress | None = None) -> Backend:
    """:func:`create_backend` in a worker thread, so an interface stays responsive.

    With ``on_progress``, the current stage and the seconds spent are reported every second on
    the caller's loop (a vLLM engine's start takes minutes on a CPU: the user sees it move). A
    caller that stops waiting does not leave the model loaded: the backend is closed as soon as
    its load finishes.
    """
    loop = asyncio.get_running_loop()
    stage = ["loading"]

    def progress(message: str) -> None:  # from the worker thread
        stage[0] = message

    work = asyncio.ensure_future(asyncio.to_thread(create_backend, entry, progress))
    started = time.monotonic()
    try:
        while True:
            done, _ = await asyncio.wait([work], timeout=TICK_S)
            if done:
                return work.result()
            if on_progress is not None:
                on_progress(f"{stage[0]} … {time.monotonic() - started:.0f} s")
    except asyncio.CancelledError:
        work.add_done_callback(lambda finished: _close_when_loaded(loop, finished))
        raise


def _close_when_loaded(loop: asyncio.AbstractEventLoop, finished: asyncio.Future[Backend]) -> None:
    """Close a backend whose load finished after its caller gave up (a closed screen)."""
    if finished.cancelled() or finished.exception() is not None or loop.is_closed():
        return
    loop.create_task(finished.result().aclose())
