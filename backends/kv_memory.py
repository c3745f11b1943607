"""How much memory a model's KV cache takes per token, how many agents fit in free memory, and
the guard that refuses a debate whose models would not fit (:func:`check_memory`).

Why a module of its own: the figure is needed without loading a model (``symposium models
test`` before a debate, docs/performance.md's table for models not on disk) as well as by the llama.cpp
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

from .base import BackendError

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


# -- the guard before a debate loads its models ---------------------------------------------

#: Set to "off" to load models whatever the estimate says (the estimate is an upper bound).
MEMORY_CHECK_ENV = "SYMPOSIUM_MEMORY_CHECK"
#: Shortest context worth suggesting: below it a debate's prompts do not fit anyway.
MIN_CONTEXT = 1024


class NotEnoughMemory(BackendError):
    """The models of a debate would not fit in the memory this machine has free: loading them
    would swap (or be killed). ``str()`` names each model, what it needs and what to change."""


@dataclass(frozen=True)
class MemoryNeed:
    """What one llama.cpp model needs in memory, from its GGUF header, before it is loaded.

    ``weights`` are the tensors' bytes (mapped or copied once, whatever the number of agents);
    the KV cache is ``kv_per_token`` bytes for each of ``context`` tokens of each of ``agents``
    agents, the most a model's pool grows to (the shared layout starts at one agent's window
    and grows with the tokens in use, up to one window per agent); ``overhead`` is llama.cpp's
    output and compute buffers (:func:`buffer_bytes`).
    """

    model_id: str
    weights: int
    kv_per_token: int
    context: int
    agents: int
    overhead: int

    def __post_init__(self) -> None:
        if self.kv_per_token < 1:
            raise ValueError(f"model {self.model_id!r}: its header gives no KV cache size (layers, heads)")

    @property
    def kv(self) -> int:
        return self.kv_per_token * self.context * self.agents

    @property
    def total(self) -> int:
        return self.weights + self.kv + self.overhead


def _count(meta: dict[str, Any], key: str) -> int:
    """A size from GGUF metadata; per-layer lists count by their largest (a ValueError names a
    missing key)."""
    arch = meta.get("general.architecture", "")
    value = meta.get(f"{arch}.{key}")
    if value is None:
        raise ValueError(f"GGUF metadata lacks {arch}.{key}; cannot size the model's buffers")
    return max(int(v) for v in value) if isinstance(value, list) else int(value)


def buffer_bytes(meta: dict[str, Any], batch: int) -> int:
    """llama.cpp's buffers besides weights and KV: the logits of one batch (f32, the vocabulary
    wide) and the activations of one batch through one layer, with room to spare, plus 64 MiB.
    (Compared with the peak RSS of real runs in docs/performance.md.)"""
    hidden, ff = _count(meta, "embedding_length"), _count(meta, "feed_forward_length")
    return 4 * _vocabulary_size(meta) * batch + 4 * batch * (4 * hidden + 2 * ff) * 2 + (64 << 20)


def memory_need(model_id: str, path: Path, *, context: int, agents: int = 1, cache_type: str = "f16",
                n_batch: int = 512) -> MemoryNeed:
    """The :class:`MemoryNeed` of the GGUF at ``path`` for ``agents`` agents at ``context``
    tokens (at most the model's trained context, as the backend does), read from its header (a
    malformed file is a :class:`~backends.gguf_meta.GGUFError`, missing sizes a ValueError)."""
    from .gguf_meta import read_gguf

    info = read_gguf(path, tensors=True)
    shape = kv_shape_from_metadata(info.metadata)
    context = min(context, _count(info.metadata, "context_length"))  # the backend never makes a longer one
    return MemoryNeed(model_id, info.weights_bytes, kv_bytes_per_token(shape, cache_type), context, max(1, agents),
                      buffer_bytes(info.metadata, min(n_batch, context)))


def _vocabulary_size(meta: dict[str, Any]) -> int:
    """Tokens in the vocabulary (the header reader leaves long arrays unread, counted)."""
    from .gguf_meta import SkippedArray

    tokens = meta.get("tokenizer.ggml.tokens")
    if isinstance(tokens, SkippedArray):
        return tokens.count
    return len(tokens) if isinstance(tokens, list) else 0


def check_memory(needs: list[MemoryNeed], available: int | None = None) -> None:
    """Refuse (:class:`NotEnoughMemory`) when ``needs`` together exceed ``available`` bytes
    (default: what the OS says can be allocated without swapping now). The message says, per
    model, what it needs; where the weights fit, the context that would fit; else that a
    smaller model or quantization is needed. Nothing is refused where free memory is unknown
    or ``$SYMPOSIUM_MEMORY_CHECK`` is ``off``."""
    if not needs or os.environ.get(MEMORY_CHECK_ENV, "").lower() == "off":
        return
    free = available_memory() if available is None else available
    total = sum(n.total for n in needs)
    if free is None or total <= free:
        return
    gib = 2**30
    fixed = sum(n.weights + n.overhead for n in needs)
    lines = [f"these models need about {total / gib:.1f} GiB but {free / gib:.1f} GiB is free: loading them would swap"]
    for n in needs:
        lines.append(f"  model {n.model_id!r}: weights {n.weights / gib:.1f} GiB + KV cache {n.kv / gib:.1f} GiB "
                     f"({n.agents} agent(s) × {n.context:,} tokens × {n.kv_per_token:,} bytes) + buffers "
                     f"{n.overhead / gib:.1f} GiB")
    per_token = sum(n.kv_per_token * n.agents for n in needs)  # at least 1: MemoryNeed says so
    fits = (free - fixed) // per_token // 256 * 256
    if fits >= MIN_CONTEXT:
        lines.append(f"set context_length = {fits} (or less) on these models in models.toml, or kv_cache_type = \"q8_0\" "
                     "to halve the KV cache, or close other programs")
    else:
        lines.append("the weights alone leave no room for a context: pick a smaller model or quantization, "
                     "or close other programs")
    lines.append(f"(to load anyway: {MEMORY_CHECK_ENV}=off)")
    raise NotEnoughMemory("\n".join(lines))
