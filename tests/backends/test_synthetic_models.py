"""Synthetic models of real shapes (benchmarks/synthetic.py): the file has the architecture,
tensor shapes and quantization it claims, carries the bundled SmolLM2's real tokenizer and chat
template, and llama.cpp loads it, generates and scores with it.

Built at the tiny shape (a few MB); the 1–8B shapes of the benchmarks go through the same code
(write F16 with ``gguf``, quantize with llama.cpp), only bigger.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from backends.base import Message, SamplingOptions
from backends.gguf_meta import read_gguf
from backends.llamacpp import LlamaCppBackend
from backends.registry import LocalSource, ModelEntry
from tests.helpers.paths import REPO


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("synthetic_models", REPO / "benchmarks" / "synthetic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


synthetic = _generator()


def entry_for(path: Path, model_id: str = "synthetic-tiny") -> ModelEntry:
    return ModelEntry(id=model_id, name="synthetic", family="llama", backend="llamacpp",
                      source=LocalSource(kind="local", path=str(path)), context_length=1024)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = synthetic.synthetic_model("tiny", "Q8_0", directory=tmp_path_factory.mktemp("synthetic"))
    return path


@pytest.fixture(scope="module")
def tiny_backend(tiny: Path) -> LlamaCppBackend:
    return LlamaCppBackend(entry_for(tiny), tiny)


def test_the_file_has_the_shapes_and_quantization_it_claims(tiny: Path) -> None:
    info = read_gguf(tiny, tensors=True)
    shape = synthetic.SHAPES["tiny"]
    expected = {name: tuple(reversed(dims)) for name, dims, _ in synthetic.tensors(shape)}
    assert {t.name: t.shape for t in info.tensors} == expected
    kinds = {t.name: t.type_name for t in info.tensors}
    assert kinds["blk.0.ffn_down.weight"] == kinds["token_embd.weight"] == "Q8_0"
    assert kinds["blk.1.attn_norm.weight"] == kinds["rope_freqs.weight"] == "F32"
    meta = info.metadata
    assert (meta["general.architecture"], meta["llama.block_count"], meta["llama.embedding_length"],
            meta["llama.attention.head_count_kv"], meta["llama.feed_forward_length"]) == ("llama", 2, 64, 2, 128)
    assert meta["symposium.synthetic"] is True and meta["general.name"].startswith("Synthetic ")
    assert info.weights_bytes <= info.size_bytes


def test_the_real_shapes_are_the_published_ones() -> None:
    """Parameter counts as the models' cards give them (1.24 B, 3.21 B, 1.54 B, 2.61 B, 8.03 B,
    405.85 B): a wrong dimension anywhere moves them."""
    counts = {k: round(s.parameters / 1e9, 2) for k, s in synthetic.SHAPES.items() if k != "tiny"}
    assert counts == {"llama32-1b": 1.24, "llama32-3b": 3.21, "qwen25-1.5b": 1.54, "gemma2-2b": 2.61, "llama31-8b": 8.03,
                      "llama31-405b": 405.85}


def test_it_carries_the_bundled_tokenizer_and_template(tiny_backend: LlamaCppBackend, smollm: LlamaCppBackend) -> None:
    text = "Patient, 54, reports <|im_start|> chest pain; naïve café — 東京."
    assert tiny_backend.tokenize(text, special=False) == smollm.tokenize(text, special=False)
    assert tiny_backend.tokenize("<|im_end|>", special=True) == smollm.tokenize("<|im_end|>", special=True)
    assert tiny_backend.n_vocab == synthetic.SHAPES["tiny"].vocab > smollm.n_vocab
    assert tiny_backend.template is not None
    assert tiny_backend.template.source == smollm.model.metadata()["tokenizer.chat_template"]
    messages = [Message("system", "Be brief."), Message("user", "Name a fruit.")]
    rendered = tiny_backend.template.render(messages)
    assert "<|im_start|>system\nBe brief.<|im_end|>" in rendered
    assert tiny_backend.template_tokens(messages) == smollm.tokenize(rendered, special=True)
    pad = synthetic.PAD_TOKEN.format(0)
    assert smollm.n_vocab not in tiny_backend.tokenize(pad, special=True), "a padding token came out of text"


@pytest.mark.model
async def test_it_generates_and_scores(tiny_backend: LlamaCppBackend) -> None:
    session = tiny_backend.session("agent")
    messages = [Message("user", "Say something.")]
    done = await session.complete(messages, SamplingOptions(max_tokens=8, temperature=0.0))
    assert done.usage.completion_tokens == 8 and done.finish_reason == "length"
    again = await tiny_backend.session("other").complete(messages, SamplingOptions(max_tokens=8, temperature=0.0))
    assert again.text == done.text, "seeded weights, greedy: the same reply"
    scored = await session.score(messages, ["yes", "no", "maybe not"])
    assert len(scored.logprobs) == 3 and all(-1e4 < lp < 0 for lp in scored.logprobs)


def test_the_weights_are_seeded(tmp_path: Path) -> None:
    one = synthetic.write_f16("tiny", tmp_path / "a.gguf", seed=7)
    two = synthetic.write_f16("tiny", tmp_path / "b.gguf", seed=7)
    other = synthetic.write_f16("tiny", tmp_path / "c.gguf", seed=8)
    assert one.read_bytes() == two.read_bytes() != other.read_bytes()
