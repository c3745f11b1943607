"""Shared fixtures: the real bundled models, loaded once per test session, and isolated paths.

Nothing here is faked: the backends are llama.cpp with the bundled GGUF files, journals are
real SQLite files in temporary folders.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.llamacpp import LlamaCppBackend
from backends.registry import Registry, load_registry
from backends.sources import resolve_path
from store.journal import Journal


@pytest.fixture(scope="session", autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep tests away from the user's journal and models folder, and offline."""
    models_dir = tmp_path_factory.mktemp("models")
    saved = dict(os.environ)
    os.environ["SYMPOSIUM_MODELS_DIR"] = str(models_dir)
    os.environ["SYMPOSIUM_DB"] = str(tmp_path_factory.mktemp("journal") / "journal.db")
    os.environ.pop("SYMPOSIUM_MODELS", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def smollm(registry: Registry) -> LlamaCppBackend:
    entry = registry.get("smollm2-135m")
    return LlamaCppBackend(entry, resolve_path(entry))


@pytest.fixture(scope="session")
def gemma(registry: Registry) -> LlamaCppBackend:
    entry = registry.get("gemma3-270m")
    return LlamaCppBackend(entry, resolve_path(entry))


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.db") as j:
        yield j
