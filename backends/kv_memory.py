"""How much memory a model's KV cache takes per token, and how many agents fit in free memory.

Why a module of its own: the figure is needed without loading a model (``symposium models
test`` before a debate, the README's table for models not on disk) as well as by the llama.cpp
backend for its benchmarks. The arithmetic is llama.cpp's: every layer stores, per token, a key
and a value vector for each KV head:

    bytes/token = layers × kv_heads × (key_length + value_length) × bytes per element

(f16: 2 bytes; q8_0: 34 bytes per block of 32 elements = 1.0625). Sliding-window layers
(Gemma 2/3) could keep only the window, but Symposium asks llama.cpp for a full-size sliding-
window cache (``swa_full``) so scoring can roll back to any cached prefix: the figure counts
every layer at full length, which is what the backend actually reserves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Bytes per cached element for each KV cache type the backend offers.
BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32}


@dataclass(frozen=True)
class KvShape:
    """The numbers of a model's architecture that size its KV cache."""

    architecture: str
    layers: int
    kv_heads: int
    key_length: int
    value_length: int
    sliding_window: int | None = None


def kv_shape_from_metadata(meta: dict[str, Any]) -> KvShape:
    """Read a :class:`KvShape` from GGUF key/value metadata (values may be strings, as
    llama-cpp-python's ``LlamaModel.metadata()`` gives them, or numbers, as ``gguf`` does)."""
    arch = str(meta.get("general.architecture", ""))
    if not arch:
        raise ValueError("GGUF metadata has no general.architecture; is this a GGUF model file?")

    def num(key: str, default: int | None = None) -> int:
        value = meta.get(f"{arch}.{key}", default)
        if value is None:
            raise ValueError(f"GGUF metadata lacks {arch}.{key}; cannot size the KV cache")
        if isinstance(value, (list, tuple)):  # per-layer head counts: size by the largest
            value = max(int(v) for v in value)
        return int(value)

    heads = num("attention.head_count")
    head_dim = num("embedding_length") // heads
    window = meta.get(f"{arch}.attention.sliding_window")
    return KvShape(
        architecture=arch,
        layers=num("block_count"),
        kv_heads=num("attention.head_count_kv", heads),
        key_length=num("attention.key_length", head_dim),
        value_length=num("attention.value_length", head_dim),
        sliding_window=int(window) if window is not None else None,
    )


def read_gguf_metadata(path: Path) -> dict[str, Any]:
    """The scalar metadata of a GGUF file, read without loading its weights."""
    from gguf import GGUFReader
    from gguf.constants import GGUFValueType

    reader = GGUFReader(str(path))
    meta: dict[str, Any] = {}
    for name, field in reader.fields.items():
        if not field.types or field.types[0] == GGUFValueType.STRING and name != "general.architecture":
            continue
        if field.types[0] == GGUFValueType.ARRAY:
            if len(field.types) > 1 and field.types[1] != GGUFValueType.STRING and len(field.data) < 512:
                meta[name] = [field.parts[i][0].item() for i in field.data]
            continue
        part = field.parts[field.data[0]]
        meta[name] = bytes(part).decode("utf-8") if field.types[0] == GGUFValueType.STRING else part[0].item()
    return meta


def kv_bytes_per_token(shape: KvShape, cache_type: str = "f16") -> int:
    """KV cache bytes one token takes across all layers (K and V)."""
    per_element = BYTES_PER_ELEMENT[cache_type]
    return int(shape.layers * shape.kv_heads * (shape.key_length + shape.value_length) * per_element)


def available_memory() -> int | None:
    """Bytes the OS says can be allocated without swapping (Linux MemAvailable; elsewhere the
    free physical pages), or None where neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def roles_that_fit(free_bytes: int, weights_bytes: int, per_token: int, context: int) -> int:
    """How many agents, each with a full ``context`` of cached tokens, fit beside the weights
    (mapped once, whatever the number of agents) in ``free_bytes``. With the shared KV layout
    agents only use the cells they fill, so shorter transcripts let more agents in."""
    room = free_bytes - weights_bytes
    per_role = per_token * context
    return max(0, room // per_role) if per_role > 0 else 0


def memory_advice(path: Path, context: int, cache_type: str = "f16", free_bytes: int | None = None) -> str:
    """One line for ``symposium models test``: the KV cost of the GGUF at ``path`` and how many
    roles at a full ``context`` fit in the memory free now (weights counted once)."""
    shape = kv_shape_from_metadata(read_gguf_metadata(path))
    per_token = kv_bytes_per_token(shape, cache_type)
    per_role = per_token * context
    free = available_memory() if free_bytes is None else free_bytes
    line = (f"KV cache: {per_token:,} bytes/token ({cache_type}; {shape.layers} layers × {shape.kv_heads} KV heads × "
            f"{shape.key_length}+{shape.value_length} dims), {per_role / 2**20:,.0f} MiB per role at {context:,} tokens")
    if free is None:
        return line + "; free memory unknown here"
    weights = path.stat().st_size
    roles = roles_that_fit(free, weights, per_token, context)
    return (line + f"; {free / 2**30:.1f} GiB free now, weights {weights / 2**30:.1f} GiB: {roles} role(s) fit at full "
            "context (agents of one model share one KV cache that grows with the tokens in use, so shorter "
            "transcripts fit more)")
