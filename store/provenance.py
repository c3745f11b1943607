"""What produced a debate, journalled at its start: provenance a researcher can cite.

Symposium's version; per participant the model entry, its file and the file's SHA-256,
quantization, backend and its version (llama-cpp-python, vLLM, transformers, or the server's URL
and the model it reports), context size, sampling options and seed; the protocol and its
parameters; the host (OS, CPU, GPU, thread count); the start time (the end time is the
debate's ``finished_at``, added when it is read back: :func:`with_end`). And, said plainly,
whether the run can be reproduced bit for bit, and why not when it cannot.

A model file's SHA-256 is cached by path, size and modification time in
``file-hashes.json`` in the config folder (mode 0600): a 5 GB GGUF is read once, not at each
debate. :func:`collect` reads files and so runs in a worker thread (``store/drive.py``),
reporting progress through a callback.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from backends.private import config_dir, write_private
from protocols.core.events import DebateStarted, Participant

Progress = Callable[[str], None]

#: Bytes read per step while hashing (and between two progress reports at most).
CHUNK = 8 << 20
#: The Python package that is each backend kind's engine (its version is recorded).
ENGINES = {"llamacpp": "llama-cpp-python", "vllm": "vllm", "transformers": "transformers"}
_QUANT = re.compile(r"(?<![A-Za-z0-9])(I?Q[1-8](?:_[A-Z0-9]+)*|[BF]F16|F32|FP8|AWQ|GPTQ)(?![A-Za-z0-9])", re.IGNORECASE)
_lock = threading.Lock()  # one hash-cache update at a time (two debates may start together)


def cache_file() -> Path:
    """Where model files' hashes are kept, by path, size and modification time."""
    return config_dir() / "file-hashes.json"


def _load_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):  # unreadable or damaged: hashes are recomputed, the file rewritten
        return {}
    return data if isinstance(data, dict) else {}


def _save_cache(path: Path, data: dict[str, Any]) -> None:
    """Replace the cache file atomically, readable by the owner only (file names say what a
    person works on)."""
    write_private(path, json.dumps(data, indent=1, sort_keys=True))


def file_sha256(path: Path, progress: Progress | None = None, *, cache: Path | None = None) -> str:
    """The SHA-256 of ``path``, from the cache when its size and modification time are those
    hashed before, else read in :data:`CHUNK` steps (``progress`` hears how far)."""
    path = path.resolve()
    st = path.stat()
    cache = cache or cache_file()
    ident = str(path)
    with _lock:
        known = _load_cache(cache).get(ident)
    if isinstance(known, dict) and known.get("size") == st.st_size and known.get("mtime_ns") == st.st_mtime_ns:
        return str(known["sha256"])
    digest = hashlib.sha256()
    done = 0
    last = 0.0
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
            done += len(chunk)
            now = time.monotonic()
            if progress is not None and (now - last > 0.25 or done == st.st_size):
                last = now
                progress(f"hashing {path.name}: {done / max(st.st_size, 1):.0%} of {st.st_size / 1e9:.2f} GB")
    sha = digest.hexdigest()
    with _lock:
        data = _load_cache(cache)
        data[ident] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha}
        _save_cache(cache, data)
    return sha


def quantization(file: str | None, details: dict[str, Any]) -> str | None:
    """The weights' quantization, as the entry or the file's name says it (``Q4_K_M``, ``F16``…)."""
    for key in ("quantization", "dtype"):
        if details.get(key):
            return str(details[key])
    if file:
        found = _QUANT.findall(Path(file).name)
        if found:
            return str(found[-1]).upper()
    return None


def engine_version(backend: str) -> str | None:
    package = ENGINES.get(backend)
    if package is None:
        return None
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def symposium_version() -> str:
    try:
        return version("symposium-tui")
    except PackageNotFoundError:
        return "unknown (not installed)"


def host() -> dict[str, Any]:
    """The machine: OS, CPU, GPU if one is visible, thread count, Python."""
    return {"os": f"{platform.system()} {platform.release()}", "machine": platform.machine(), "cpu": _cpu_name(),
            "cpu_count": os.cpu_count(), "gpu": _gpus(), "python": sys.version.split()[0]}


def _cpu_name() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # not Linux: platform.processor() says what it can
        lines = []
    for line in lines:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _gpus() -> list[str]:
    """NVIDIA GPUs the driver lists (no subprocess, no import of a GPU library)."""
    root = Path("/proc/driver/nvidia/gpus")
    names: list[str] = []
    if root.is_dir():
        for info in sorted(root.glob("*/information")):
            for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Model:"):
                    names.append(line.split(":", 1)[1].strip())
    if sys.platform == "darwin" and platform.machine() == "arm64":
        names.append("Apple GPU (Metal)")
    return names


def participant(p: Participant, progress: Progress | None = None) -> dict[str, Any]:
    """One participant's provenance; hashes its model file (cached)."""
    details = dict(p.details)
    file = details.get("file")
    sha = size = None
    if isinstance(file, str) and Path(file).is_file():
        sha = file_sha256(Path(file), progress)
        size = Path(file).stat().st_size
    elif isinstance(file, str) and Path(file).is_dir():  # a Hugging Face folder: hash its weights
        sha = _folder_sha256(Path(file), progress)
    out: dict[str, Any] = {
        "role": p.role, "model_id": p.model_id, "backend": p.backend, "backend_version": engine_version(p.backend),
        "file": file, "file_sha256": sha, "file_size": size, "quantization": quantization(file, details),
        "context_size": details.get("n_ctx"), "threads": details.get("threads"), "gpu_layers": details.get("gpu_layers"),
        "profile": details.get("profile"), "sampling": dict(p.options), "seed": p.options.get("seed"),
    }
    if p.backend == "openai":
        out["server"] = {"url": details.get("base_url"), "reported_model": details.get("served_model"),
                         "remote": details.get("remote")}
    return out


def _folder_sha256(folder: Path, progress: Progress | None) -> str:
    """One hash over a model folder's weight and config files (name and hash of each)."""
    digest = hashlib.sha256()
    for f in sorted(folder.rglob("*")):
        if f.is_file() and f.suffix in (".safetensors", ".bin", ".json", ".model", ".gguf"):
            digest.update(f"{f.relative_to(folder)}\0{file_sha256(f, progress)}\n".encode())
    return digest.hexdigest()


def reproducibility(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Whether the run can be reproduced bit for bit, and the reasons it cannot."""
    reasons: list[str] = []
    models = [p for p in parts if p["backend"] not in ("human", "code")]
    for p in models:
        who = f"{p['role']} ({p['model_id']})"
        sampled = (p["sampling"].get("temperature") or 0) > 0
        if p["backend"] == "openai":
            reasons.append(f"{who} runs on a server ({(p.get('server') or {}).get('url')}): its build, batching "
                           "and hardware decide the numbers and are not recorded here")
        elif p["backend"] == "vllm":
            reasons.append(f"{who} runs on vLLM, which batches concurrent requests together (continuous batching): "
                           "a reply depends on what else ran with it")
        elif p["backend"] == "transformers" and sampled and p["seed"] is None:
            reasons.append(f"{who} samples (temperature {p['sampling'].get('temperature')}) without a fixed seed")
        elif p["backend"] == "llamacpp":
            if sampled and p["seed"] in (None, -1):
                reasons.append(f"{who} samples (temperature {p['sampling'].get('temperature')}) without a fixed seed")
            if p.get("gpu_layers"):
                reasons.append(f"{who} offloads layers to a GPU, whose kernels may sum in a varying order")
        if p["file"] is None and p["backend"] in ENGINES:
            reasons.append(f"{who}: the model's file is not recorded, so it cannot be checked")
    if reasons:
        return {"bit_for_bit": False, "reasons": reasons}
    threads = sorted({p["threads"] for p in models if p.get("threads")})
    return {"bit_for_bit": True, "reasons": [
        "every model runs locally on llama.cpp's CPU path with a fixed seed (or greedy decoding): the same files "
        "(check their SHA-256), the same llama-cpp-python, the same host and the same thread count"
        + (f" ({', '.join(map(str, threads))})" if threads else "")
        + " give the same tokens; another thread count or CPU may change the last digits of the sums, and so the text",
        "a person's answers and any journalled replies are replayed from the record on resume"]}


def collect(event: DebateStarted, progress: Progress | None = None) -> dict[str, Any]:
    """The whole provenance of a debate about to start (reads model files: run it in a thread)."""
    parts = [participant(p, progress) for p in event.participants]
    return {
        "symposium_version": symposium_version(),
        "protocol": {"name": event.protocol, "parameters": dict(event.config), "profile": event.config.get("profile")
                     or next((p["profile"] for p in parts if p.get("profile")), None)},
        "participants": parts,
        "host": host(),
        "started_at": _iso(event.at),
        "reproducibility": reproducibility(parts),
    }


def with_end(provenance: dict[str, Any], finished_at: float | None) -> dict[str, Any]:
    """The stored provenance with the debate's end time (``None`` while it runs)."""
    return {**provenance, "ended_at": None if finished_at is None else _iso(finished_at)}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")
