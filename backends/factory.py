"""Build a backend for a registry entry. The only place that maps ``backend = …`` to a class.

Building one blocks while its weights load; interfaces do not call this directly but load through
:class:`backends.lifecycle.Engines`, which runs it in a worker thread and closes what it built."""

from __future__ import annotations

from collections.abc import Callable

from .base import Backend, BackendUnavailable
from .registry import ModelEntry
from .sources import resolve_path

#: Hears the stage a long load has reached ("starting the engine …"), from the loading thread.
OnProgress = Callable[[str], None]


def _quiet(_: str) -> None:
    """No one listens to the stages (a backend whose load has none to report)."""


def create_backend(entry: ModelEntry, progress: OnProgress = _quiet) -> Backend:
    """Load ``entry`` (blocking: loading weights takes from milliseconds to minutes). A backend
    whose load has stages worth showing (an engine that starts for minutes) reports them to
    ``progress``; :class:`backends.lifecycle.Engines` shows them with the time spent."""
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

