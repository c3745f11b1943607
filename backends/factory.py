"""Build a backend for a registry entry. The only place that maps ``backend = …`` to a class."""

from __future__ import annotations

import asyncio

from .base import Backend, BackendUnavailable
from .registry import ModelEntry
from .sources import resolve_path


def create_backend(entry: ModelEntry) -> Backend:
    """Load ``entry`` (blocking: loading weights takes from milliseconds to minutes)."""
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

            return VllmBackend(entry)
    raise BackendUnavailable(f"model {entry.id!r}: unknown backend {entry.backend!r}")


async def load_backend(entry: ModelEntry) -> Backend:
    """:func:`create_backend` in a worker thread, so an interface stays responsive."""
    return await asyncio.to_thread(create_backend, entry)
