"""Finding GGUF models the user already has: Ollama's store, LM Studio's folders and the
Hugging Face cache, and turning one into a registry entry (``symposium models add``/``scan``).

Nothing here downloads or starts a server; it reads folders and GGUF headers. Each store's
layout is the one its tool writes:

- Ollama: ``$OLLAMA_MODELS`` (default ``~/.ollama/models``) holds
  ``manifests/<host>/<namespace>/<name>/<tag>`` JSON files whose layer with media type
  ``application/vnd.ollama.image.model`` names the GGUF as ``blobs/sha256-<hex>``.
- LM Studio: ``~/.lmstudio/models`` and ``~/.cache/lm-studio/models``, ``<publisher>/<repo>/*.gguf``.
- Hugging Face: ``$HF_HUB_CACHE`` (else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``)
  holds ``models--<org>--<name>/snapshots/<revision>/…/*.gguf``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from .gguf_meta import GGUFInfo

Origin = Literal["ollama", "lmstudio", "hf", "file"]
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_LIBRARY = ("registry.ollama.ai", "library")
#: Registry entries made here cap the context: a 128k KV cache needs many GB, debates ~8k.
CONTEXT_CAP = 8192
_SPLIT_PART = re.compile(r"-(\d{5})-of-\d{5}\.gguf$", re.IGNORECASE)


class DiscoveryError(ValueError):
    """A reference that names no model here. ``str()`` says where it looked and what to do."""


@dataclass(frozen=True)
class Found:
    """One GGUF model on this machine."""

    origin: Origin
    ref: str  # what `symposium models add` takes: ollama:NAME:TAG, hf:ORG/REPO/FILE or a path
    path: Path

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size


def ollama_root() -> Path:
    return Path(os.environ.get("OLLAMA_MODELS") or "~/.ollama/models").expanduser()


def lmstudio_roots() -> list[Path]:
    return [Path("~/.lmstudio/models").expanduser(), Path("~/.cache/lm-studio/models").expanduser()]


def hf_cache_root() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path("~/.cache/huggingface/hub").expanduser()


def _is_model_file(path: Path) -> bool:
    """A loadable GGUF: not a vision projector, and the first part of a split model."""
    if path.name.lower().startswith("mmproj"):
        return False
    split = _SPLIT_PART.search(path.name)
    return split is None or split.group(1) == "00001"


def _ollama_blob(root: Path, manifest: Path) -> Path | None:
    """The model blob a manifest points to, or ``None`` for a manifest without one."""
    try:
        layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
    except (OSError, ValueError, AttributeError):
        return None
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            digest = str(layer.get("digest", ""))
            if re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
                blob = root / "blobs" / digest.replace(":", "-")
                return blob if blob.is_file() else None
    return None


def _ollama_ref(parts: tuple[str, ...]) -> str:
    host, namespace, name, tag = parts
    short = name if (host, namespace) == OLLAMA_LIBRARY else f"{host}/{namespace}/{name}"
    return f"ollama:{short}:{tag}"


def scan_ollama() -> Iterator[Found]:
    root = ollama_root()
    manifests = root / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(manifests.glob("*/*/*/*")):
        blob = _ollama_blob(root, manifest) if manifest.is_file() else None
        if blob is not None:
            yield Found("ollama", _ollama_ref(manifest.relative_to(manifests).parts), blob)


def scan_lmstudio() -> Iterator[Found]:
    for root in lmstudio_roots():
        if root.is_dir():
            for path in sorted(root.rglob("*.gguf")):
                if path.is_file() and _is_model_file(path):
                    yield Found("lmstudio", str(path), path)


def scan_hf_cache() -> Iterator[Found]:
    root = hf_cache_root()
    if not root.is_dir():
        return
    for repo_dir in sorted(root.glob("models--*")):
        repo = repo_dir.name.removeprefix("models--").replace("--", "/")
        seen: set[str] = set()
        snapshots = sorted(repo_dir.glob("snapshots/*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for snapshot in snapshots:  # newest revision first; older copies of a file are skipped
            for path in sorted(snapshot.rglob("*.gguf")):
                name = path.relative_to(snapshot).as_posix()
                if name not in seen and path.is_file() and _is_model_file(path):
                    seen.add(name)
                    yield Found("hf", f"hf:{repo}/{name}", path)


def scan_all() -> list[Found]:
    return [*scan_ollama(), *scan_lmstudio(), *scan_hf_cache()]


def locate(ref: str) -> Found:
    """The model file a ``models add`` reference names: ``ollama:NAME[:TAG]``,
    ``hf:ORG/REPO/FILE`` (from the local cache) or a path to a ``.gguf`` file."""
    if ref.startswith("ollama:"):
        name, _, tag = ref.removeprefix("ollama:").partition(":")
        wanted = f"ollama:{name}:{tag or 'latest'}"
        for found in scan_ollama():
            if found.ref == wanted:
                return found
        raise DiscoveryError(f"{wanted!r} is not in Ollama's store at {ollama_root()} "
                             f"(set OLLAMA_MODELS if it lives elsewhere; `ollama pull {name}` fetches it)")
    if ref.startswith("hf:"):
        for found in scan_hf_cache():
            if found.ref == ref:
                return found
        raise DiscoveryError(f"{ref!r} is not in the Hugging Face cache at {hf_cache_root()} "
                             "(set HF_HUB_CACHE or HF_HOME if it lives elsewhere; the form is hf:ORG/REPO/FILE.gguf)")
    path = Path(ref).expanduser()
    if not path.is_file():
        raise DiscoveryError(f"{path}: no such file; give a .gguf file, ollama:NAME[:TAG] or hf:ORG/REPO/FILE")
    return Found("file", str(path.resolve()), path.resolve())


def suggest_id(found: Found, info: GGUFInfo) -> str:
    """A registry id from the reference: lower case, letters, digits and dashes."""
    if found.origin == "ollama":
        base = found.ref.removeprefix("ollama:").rsplit("/", 1)[-1]
    else:
        base = found.path.name if found.origin != "hf" else found.ref.rsplit("/", 1)[-1]
        base = base.removesuffix(".gguf").removesuffix(".GGUF")
    slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")[:48].strip("-")
    return slug or re.sub(r"[^a-z0-9]+", "-", info.architecture.lower()) or "model"


def family_of(info: GGUFInfo) -> str:
    """The family label: the architecture without its version digits (gemma3 → gemma),
    except that Mistral and Mixtral files say ``llama`` and are told apart by name."""
    name = (info.name or "").lower()
    for family in ("mixtral", "mistral"):
        if family in name:
            return "mistral"
    return re.sub(r"[\d_.-]+$", "", info.architecture.lower()) or "unknown"


def clean_name(value: str, limit: int = 80) -> str:
    """A GGUF's ``general.name`` made fit for tables and forms: the file is untrusted, so no
    control characters and no square brackets (the app's widgets read those as markup)."""
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]+", " ", value).replace("[", "(").replace("]", ")")
    return " ".join(text.split())[:limit].strip()


def _toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, plus DEL, which TOML forbids raw."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def entry_toml(model_id: str, found: Found, info: GGUFInfo) -> str:
    """The ``[models.<id>]`` table for a found GGUF, filled from its header."""
    ctx = info.context_length
    notes = [f"added from {found.ref} on {date.today().isoformat()}"]
    if ctx and ctx > CONTEXT_CAP:
        notes.append(f"the file allows {ctx} tokens of context; raise context_length if you need more than {CONTEXT_CAP}")
    if info.chat_template is None:
        notes.append("the file has no chat template: set chat_format (chatml, gemma, llama3, mistral)")
    lines = [
        f"[models.{model_id}]",
        f"name = {_toml_string(clean_name(info.name or '') or clean_name(found.path.name))}",
        f"family = {_toml_string(family_of(info))}",
        'backend = "llamacpp"',
        f"source = {{ kind = \"local\", path = {_toml_string(str(found.path))} }}",
        f"context_length = {min(ctx or 4096, CONTEXT_CAP)}",
        "gpu_layers = -1",
        f"size_gb = {info.size_gb}",
        f"notes = {_toml_string('; '.join(notes))}",
    ]
    return "\n".join(lines) + "\n"
