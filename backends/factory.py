"""Build a backend for a registry entry. The only place that maps ``backend = …`` to a class.

Building one blocks while its weights load; interfaces do not call this directly but load through
:class:`backends.lifecycle.Engines`, which runs it in a worker thread and closes what it built."""

from __future__ import annotations

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

