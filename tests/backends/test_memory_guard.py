"""The memory guard: before a debate loads its llama.cpp models, their weights and KV caches
(from the GGUF headers) must fit in the memory free now, else the debate is refused with what
to change (``backends.kv_memory.check_memory``, called by ``Engines.load`` for every interface).

The files are synthetic (benchmarks/synthetic.py): a header that claims Llama-3.1-405B's tensors
without holding them (far more than any machine here has; llama.cpp itself would refuse the
truncated file, so a refusal that names memory can only come from the guard), and the tiny model,
real and loadable, for the arithmetic of the suggested context.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from backends import kv_memory
from backends.base import Backend
from backends.gguf_meta import SkippedArray
from backends.kv_memory import (
    MEMORY_CHECK_ENV,
    MemoryNeed,
    NotEnoughMemory,
    _vocabulary_size,
    available_memory,
    buffer_bytes,
    check_memory,
    memory_need,
)
from backends.lifecycle import Engines, check_memory_for
from backends.registry import LocalSource, ModelEntry, Registry
from tests.helpers.paths import REPO


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("synthetic_models", REPO / "benchmarks" / "synthetic.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    if spec.name not in sys.modules:
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


synthetic = _generator()


def entry_for(path: Path, model_id: str, context: int) -> ModelEntry:
    return ModelEntry(id=model_id, name=model_id, family="llama", backend="llamacpp",
                      source=LocalSource(kind="local", path=str(path)), context_length=context)


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = synthetic.write_f16("llama31-405b", tmp_path_factory.mktemp("huge") / "huge.gguf", header_only=True)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = synthetic.synthetic_model("tiny", "Q8_0", directory=tmp_path_factory.mktemp("tiny"))
    return path


class Refused(AssertionError):
    """Raised by the stand-in loader: the guard let a load through."""


def never(entry: ModelEntry, progress: object) -> Backend:
    raise Refused(f"{entry.id} reached the loader")


async def test_a_model_that_claims_more_than_the_machine_has_is_refused_before_it_loads(huge: Path) -> None:
    assert huge.stat().st_size < 64 << 20, "the file holds a header, not 810 GB of weights"
    registry = Registry(path=huge, entries={"huge": entry_for(huge, "huge", 8192)})
    async with Engines(registry, create=never) as engines:
        with pytest.raises(NotEnoughMemory) as refused:
            await engines.load(["huge", "huge", "huge"])
    message = str(refused.value)
    assert "model 'huge'" in message and "3 agent(s) × 8,192 tokens" in message
    assert "weights 756.0 GiB" in message and "pick a smaller model or quantization" in message
    assert MEMORY_CHECK_ENV in message


async def test_the_check_can_be_turned_off(huge: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MEMORY_CHECK_ENV, "off")
    registry = Registry(path=huge, entries={"huge": entry_for(huge, "huge", 8192)})
    async with Engines(registry, create=never) as engines:
        with pytest.raises(Exception, match="huge reached the loader"):
            await engines.load(["huge"])


def test_the_suggested_context_fits_and_the_asked_one_does_not(tiny: Path) -> None:
    """With free memory set just short of three agents at the tiny model's full 2,048 tokens,
    the guard refuses and names a context; that context then passes the same check."""
    full = memory_need("tiny", tiny, context=2048, agents=3)
    free = full.total - full.kv_per_token * 3 * 400
    with pytest.raises(NotEnoughMemory, match=r"set context_length = 1536 \(or less\)") as refused:
        check_memory_for([(entry_for(tiny, "tiny", 4096), 3)], available=free)
    assert "2,048 tokens" in str(refused.value), "the context is capped at the model's trained context, as the backend does"
    check_memory_for([(entry_for(tiny, "tiny", 1536), 3)], available=free)
    check_memory_for([(entry_for(tiny, "tiny", 2048), 2)], available=free)


def test_the_estimate_counts_weights_kv_and_buffers(tiny: Path) -> None:
    """The tiny model's figures, pinned: weights are its tensors' bytes (from the header), KV
    2 layers × 2 heads × (16 + 16) dims × 2 bytes a token, buffers one batch of logits
    (4 × 49,216 × 512) plus one batch of activations (4 × 512 × (4·64 + 2·128) × 2) plus 64 MiB."""
    need = memory_need("tiny", tiny, context=1024, agents=2)
    assert need == MemoryNeed("tiny", weights=3426336, kv_per_token=256, context=1024, agents=2, overhead=170000384)
    assert need.weights <= tiny.stat().st_size
    assert (need.kv, need.total) == (256 * 1024 * 2, 3426336 + 256 * 1024 * 2 + 170000384)
    short = memory_need("tiny", tiny, context=300, agents=0)  # a batch is never longer than the context
    assert (short.agents, short.context, short.overhead) == (1, 300, 4 * 49216 * 300 + 4 * 300 * 512 * 2 + (64 << 20))
    assert memory_need("tiny", tiny, context=1024, cache_type="q8_0").kv_per_token == 136  # 34 bytes per 32


def test_the_refusal_says_what_each_model_needs_and_what_fits() -> None:
    gib = 2**30
    needs = [MemoryNeed("big", weights=10 * gib, kv_per_token=131072, context=8192, agents=3, overhead=gib // 2),
             MemoryNeed("small", weights=gib, kv_per_token=65536, context=8192, agents=1, overhead=gib // 4)]
    free = 14 * gib
    with pytest.raises(NotEnoughMemory) as refused:
        check_memory(needs, available=free)
    assert str(refused.value) == (
        "these models need about 15.2 GiB but 14.0 GiB is free: loading them would swap\n"
        "  model 'big': weights 10.0 GiB + KV cache 3.0 GiB (3 agent(s) × 8,192 tokens × 131,072 bytes) + buffers 0.5 GiB\n"
        "  model 'small': weights 1.0 GiB + KV cache 0.5 GiB (1 agent(s) × 8,192 tokens × 65,536 bytes) + buffers 0.2 GiB\n"
        "set context_length = 5120 (or less) on these models in models.toml, or kv_cache_type = \"q8_0\" to halve the "
        "KV cache, or close other programs\n"
        f"(to load anyway: {MEMORY_CHECK_ENV}=off)")
    # the context: (14 − 11.75) GiB left over / (3 × 131,072 + 65,536) bytes a token = 5,266, down to a multiple of 256


def test_the_edges_of_the_rule() -> None:
    gib = 2**30
    one = MemoryNeed("m", weights=gib, kv_per_token=1 << 20, context=2048, agents=1, overhead=0)
    check_memory([one], available=one.total)  # exactly enough is enough
    with pytest.raises(NotEnoughMemory, match=r"set context_length = 1024 \(or less\)"):
        check_memory([one], available=one.total - 1024 * (1 << 20))  # room for exactly MIN_CONTEXT tokens
    with pytest.raises(NotEnoughMemory, match="the weights alone leave no room"):
        check_memory([one], available=gib + 1023 * (1 << 20))  # one token short of MIN_CONTEXT
    with pytest.raises(NotEnoughMemory) as refused:
        check_memory([one], available=gib // 2)
    assert str(refused.value) == (
        "these models need about 3.0 GiB but 0.5 GiB is free: loading them would swap\n"
        "  model 'm': weights 1.0 GiB + KV cache 2.0 GiB (1 agent(s) × 2,048 tokens × 1,048,576 bytes) + buffers 0.0 GiB\n"
        "the weights alone leave no room for a context: pick a smaller model or quantization, or close other programs\n"
        f"(to load anyway: {MEMORY_CHECK_ENV}=off)")
    check_memory([], available=0)
    with pytest.raises(ValueError, match="model 'm': its header gives no KV cache size"):
        MemoryNeed("m", weights=gib, kv_per_token=0, context=2048, agents=1, overhead=0)


def test_unknown_free_memory_refuses_nothing_and_off_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    huge = MemoryNeed("m", weights=1 << 50, kv_per_token=1, context=1, agents=1, overhead=0)
    monkeypatch.setattr(kv_memory, "available_memory", lambda: None)
    check_memory([huge])
    monkeypatch.setattr(kv_memory, "available_memory", lambda: 1 << 30)
    with pytest.raises(NotEnoughMemory):
        check_memory([huge])
    monkeypatch.setenv(MEMORY_CHECK_ENV, "OFF")
    check_memory([huge])


def test_the_buffers_of_a_batch() -> None:
    """One batch of f32 logits and of activations (hidden and feed-forward widths; per-layer
    widths count by their largest), plus 64 MiB; a header without the sizes is refused by name."""
    meta = {"general.architecture": "x", "x.embedding_length": 10, "x.feed_forward_length": [30, 50, 40],
            "tokenizer.ggml.tokens": SkippedArray(1000)}
    assert buffer_bytes(meta, 8) == 4 * 1000 * 8 + 4 * 8 * (4 * 10 + 2 * 50) * 2 + (64 << 20)
    with pytest.raises(ValueError, match=r"^GGUF metadata lacks x\.feed_forward_length; cannot size the model's buffers$"):
        buffer_bytes({"general.architecture": "x", "x.embedding_length": 10}, 8)


def test_the_vocabulary_is_counted_whether_read_or_skipped() -> None:
    assert _vocabulary_size({"tokenizer.ggml.tokens": SkippedArray(128256)}) == 128256
    assert _vocabulary_size({"tokenizer.ggml.tokens": ["a", "b", "c"]}) == 3
    assert _vocabulary_size({}) == 0


def test_the_bundled_models_pass(registry: Registry) -> None:
    """No refusal where a debate fits: three roles on SmolLM2 and one on Gemma 3 270M need well
    under a GiB."""
    free = available_memory()
    assert free is not None and free > 2 << 30, "this machine has too little free memory for the test suite"
    check_memory_for([(registry.get("smollm2-135m"), 3), (registry.get("gemma3-270m"), 1)])
