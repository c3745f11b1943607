"""Synthetic GGUF models: the exact shapes of real ones, seeded random weights. Speed only.

Why: llama.cpp's speed depends on a model's architecture, tensor shapes and quantization, not
on what its weights say, and the models people run (1–70B) are too big to ship or download in
a test. A file written here has the architecture, every tensor's name and shape, and (through
llama.cpp's own quantizer) the quantization mixture of the real model, with seeded random
weights; it carries the bundled SmolLM2's real tokenizer and chat template, padded with unused
tokens to the real vocabulary size, so tokenizing, templating, grammars and scoring all run as
they would. Its replies are gibberish: every figure measured on one is a speed figure, and the
file says so in its name (``general.name`` starts with "Synthetic") and in its metadata
(``symposium.synthetic = true``).

Files are written on demand into the cache (``~/.cache/symposium/synthetic``, or
``$SYMPOSIUM_SYNTHETIC_DIR``), gigabytes each: never committed, never part of ``make test``.
Add one to Symposium like any model::

    python benchmarks/synthetic.py llama32-1b --quant Q4_K_M     # prints the file's path
    symposium models add PATH --id synthetic-llama32-1b

The weights are written as F16 with the ``gguf`` package (llama.cpp's own writer), one tensor
at a time so memory stays at the largest tensor, then quantized with llama.cpp's quantizer
(``llama_model_quantize``): the types it picks per tensor (Q6_K for some of Q4_K_M's) are the
ones a real file of that quantization has.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

#: Bumped when what a given (shape, quantization, seed) writes changes, so cached files are remade.
GENERATOR_VERSION = 1
#: Tokens added to reach a real vocabulary size are named this way (type UNUSED: never produced
#: by tokenizing text, and their embedding rows are zero, so a greedy reply picks real tokens).
PAD_TOKEN = "<|synthetic_pad_{}|>"
TOKENIZER_KEYS = ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
                  "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                  "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id",
                  "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_space_prefix", "tokenizer.chat_template")
UNUSED_TOKEN_TYPE = 5


@dataclass(frozen=True)
class Shape:
    """A real model's architecture, as its Hugging Face config gives it."""

    label: str
    arch: str
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ff: int
    context: int
    rope_theta: float = 10000.0
    rms_eps: float = 1e-5
    #: The output projection is the token embedding (no ``output.weight``).
    tied: bool = True
    #: Qwen2: biases on the q, k and v projections.
    qkv_bias: bool = False
    #: Llama 3.x: the ``rope_freqs`` tensor of its long-context RoPE scaling (factor, low, high, original context).
    llama3_rope: tuple[float, float, float, int] | None = None
    #: Gemma 2: sliding window, attention and final logit soft-capping, norms after attention and FFN.
    sliding_window: int | None = None
    softcaps: tuple[float, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def parameters(self) -> int:
        return sum(math.prod(shape) for _, shape, _ in tensors(self))


#: The shapes measured in docs/performance.md, and a tiny one for the tests (same code path).
SHAPES: dict[str, Shape] = {
    "llama32-1b": Shape("Llama-3.2-1B", "llama", vocab=128256, hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64,
                        ff=8192, context=131072, rope_theta=500000.0, llama3_rope=(32.0, 1.0, 4.0, 8192)),
    "llama32-3b": Shape("Llama-3.2-3B", "llama", vocab=128256, hidden=3072, layers=28, heads=24, kv_heads=8, head_dim=128,
                        ff=8192, context=131072, rope_theta=500000.0, llama3_rope=(32.0, 1.0, 4.0, 8192)),
    "qwen25-1.5b": Shape("Qwen2.5-1.5B", "qwen2", vocab=151936, hidden=1536, layers=28, heads=12, kv_heads=2,
                         head_dim=128, ff=8960, context=32768, rope_theta=1000000.0, rms_eps=1e-6, qkv_bias=True),
    "gemma2-2b": Shape("Gemma-2-2B", "gemma2", vocab=256000, hidden=2304, layers=26, heads=8, kv_heads=4, head_dim=256,
                       ff=9216, context=8192, rms_eps=1e-6, sliding_window=4096, softcaps=(50.0, 30.0)),
    "llama31-8b": Shape("Llama-3.1-8B", "llama", vocab=128256, hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128,
                        ff=14336, context=131072, rope_theta=500000.0, tied=False, llama3_rope=(8.0, 1.0, 4.0, 8192)),
    # Written header-only (no data) by the memory guard's tests: a file that claims far more than any laptop has.
    "llama31-405b": Shape("Llama-3.1-405B", "llama", vocab=128256, hidden=16384, layers=126, heads=128, kv_heads=8,
                          head_dim=128, ff=53248, context=131072, rope_theta=500000.0, tied=False,
                          llama3_rope=(8.0, 1.0, 4.0, 8192)),
    "tiny": Shape("Tiny", "llama", vocab=49152 + 64, hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, ff=128,
                  context=2048, llama3_rope=(32.0, 1.0, 4.0, 8192)),
}
QUANTS = ("Q4_K_M", "Q4_0", "Q8_0", "F16")


def tensors(shape: Shape) -> Iterator[tuple[str, tuple[int, ...], str]]:
    """Every tensor of the model: its GGUF name, its numpy shape (rows, row length) and what it
    holds ("matrix", "norm", "bias", "rope"), in the order llama.cpp's converter writes them."""
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    yield "token_embd.weight", (shape.vocab, shape.hidden), "embedding"
    if shape.llama3_rope is not None:
        yield "rope_freqs.weight", (shape.head_dim // 2,), "rope"
    for i in range(shape.layers):
        b = f"blk.{i}."
        yield b + "attn_norm.weight", (shape.hidden,), "norm"
        yield b + "attn_q.weight", (q, shape.hidden), "matrix"
        yield b + "attn_k.weight", (kv, shape.hidden), "matrix"
        yield b + "attn_v.weight", (kv, shape.hidden), "matrix"
        if shape.qkv_bias:
            yield b + "attn_q.bias", (q,), "bias"
            yield b + "attn_k.bias", (kv,), "bias"
            yield b + "attn_v.bias", (kv,), "bias"
        yield b + "attn_output.weight", (shape.hidden, q), "matrix"
        if shape.softcaps is not None:
            yield b + "post_attention_norm.weight", (shape.hidden,), "norm"
        yield b + "ffn_norm.weight", (shape.hidden,), "norm"
        yield b + "ffn_gate.weight", (shape.ff, shape.hidden), "matrix"
        yield b + "ffn_up.weight", (shape.ff, shape.hidden), "matrix"
        yield b + "ffn_down.weight", (shape.hidden, shape.ff), "matrix"
        if shape.softcaps is not None:
            yield b + "post_ffw_norm.weight", (shape.hidden,), "norm"
    yield "output_norm.weight", (shape.hidden,), "norm"
    if not shape.tied:
        yield "output.weight", (shape.vocab, shape.hidden), "embedding"


def cache_dir() -> Path:
    env = os.environ.get("SYMPOSIUM_SYNTHETIC_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("symposium")) / "synthetic"


def tokenizer_source() -> Path:
    """The bundled SmolLM2 GGUF, whose tokenizer and chat template every synthetic file carries."""
    from backends.registry import load_registry
    from backends.sources import resolve_path

    return resolve_path(load_registry(user=False).get("smollm2-135m"))


def _values(shape: Shape, name: str, dims: tuple[int, ...], kind: str, seed: int, real_tokens: int) -> Any:
    """The tensor's values: seeded per tensor, so each is the same whatever else is written."""
    import numpy as np

    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    if kind == "norm":
        return np.ones(dims, dtype=np.float32)
    if kind == "bias":
        return (rng.standard_normal(dims, dtype=np.float32) * 0.02).astype(np.float32)
    if kind == "rope":
        return _llama3_rope_factors(shape)
    out = np.empty(dims, dtype=np.float16)
    rows = max(1, (1 << 24) // dims[1])  # 16M values at a time: memory stays near the output's
    for start in range(0, dims[0], rows):
        stop = min(dims[0], start + rows)
        out[start:stop] = rng.standard_normal((stop - start, dims[1]), dtype=np.float32) * 0.02
    if kind == "embedding":
        out[real_tokens:] = 0  # padding tokens: never the greedy choice, as in real padded vocabularies
    return out


def _llama3_rope_factors(shape: Shape) -> Any:
    """Llama 3.x's RoPE scaling factors per frequency, as llama.cpp's converter computes them."""
    import numpy as np

    assert shape.llama3_rope is not None
    factor, low, high, original = shape.llama3_rope
    freqs = 1.0 / (shape.rope_theta ** (np.arange(0, shape.head_dim, 2, dtype=np.float32) / shape.head_dim))
    low_wavelen, high_wavelen = original / low, original / high
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (original / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.asarray(out, dtype=np.float32)


def write_f16(shape_id: str, target: Path, *, seed: int = 0, header_only: bool = False,
              tokenizer_from: Path | None = None) -> Path:
    """Write the F16 GGUF of ``shape_id`` to ``target``. With ``header_only`` only the metadata
    and tensor records are written, no data: a file that claims a model without holding it
    (for the memory guard's tests; llama.cpp refuses to load it)."""
    import gguf

    from backends.gguf_meta import read_gguf

    shape = SHAPES[shape_id]
    source = read_gguf(tokenizer_from or tokenizer_source(), arrays=TOKENIZER_KEYS)
    meta = source.metadata
    tokens = list(meta["tokenizer.ggml.tokens"])
    real = len(tokens)
    if shape.vocab < real:
        raise ValueError(f"shape {shape_id!r}: vocabulary {shape.vocab} is smaller than the tokenizer's {real} tokens")
    tokens += [PAD_TOKEN.format(i) for i in range(shape.vocab - real)]
    types = list(meta["tokenizer.ggml.token_type"]) + [UNUSED_TOKEN_TYPE] * (shape.vocab - real)

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    w = gguf.GGUFWriter(partial, shape.arch)
    w.add_name(f"Synthetic {shape.label} shape (random weights, speed only)")
    w.add_description(f"Seeded random weights (seed {seed}) in the shape of {shape.label}, written by "
                      "Symposium's benchmarks/synthetic.py: for speed measurements only, never quality.")
    w.add_bool("symposium.synthetic", True)
    w.add_string("symposium.synthetic.shape", shape_id)
    w.add_uint32("symposium.synthetic.seed", seed)
    w.add_uint32("symposium.synthetic.version", GENERATOR_VERSION)
    w.add_context_length(shape.context)
    w.add_embedding_length(shape.hidden)
    w.add_block_count(shape.layers)
    w.add_feed_forward_length(shape.ff)
    w.add_head_count(shape.heads)
    w.add_head_count_kv(shape.kv_heads)
    w.add_key_length(shape.head_dim)
    w.add_value_length(shape.head_dim)
    w.add_rope_dimension_count(shape.head_dim)
    w.add_rope_freq_base(shape.rope_theta)
    w.add_layer_norm_rms_eps(shape.rms_eps)
    w.add_vocab_size(shape.vocab)
    if shape.sliding_window is not None:
        w.add_sliding_window(shape.sliding_window)
    if shape.softcaps is not None:
        w.add_attn_logit_softcapping(shape.softcaps[0])
        w.add_final_logit_softcapping(shape.softcaps[1])
    w.add_file_type(1)  # F16
    w.add_tokenizer_model(meta["tokenizer.ggml.model"])
    w.add_tokenizer_pre(meta["tokenizer.ggml.pre"])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(list(meta["tokenizer.ggml.merges"]))
    w.add_bos_token_id(meta["tokenizer.ggml.bos_token_id"])
    w.add_eos_token_id(meta["tokenizer.ggml.eos_token_id"])
    w.add_unk_token_id(meta["tokenizer.ggml.unknown_token_id"])
    w.add_pad_token_id(meta["tokenizer.ggml.padding_token_id"])
    w.add_add_bos_token(bool(meta["tokenizer.ggml.add_bos_token"]))
    w.add_add_space_prefix(bool(meta["tokenizer.ggml.add_space_prefix"]))
    w.add_chat_template(meta["tokenizer.chat_template"])
    import numpy as np

    plan = list(tensors(shape))
    for name, dims, kind in plan:
        dtype = np.float16 if kind in ("matrix", "embedding") else np.float32
        w.add_tensor_info(name, dims, np.dtype(dtype), math.prod(dims) * np.dtype(dtype).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    if not header_only:
        for name, dims, kind in plan:
            w.write_tensor_data(_values(shape, name, dims, kind, seed, real))
    w.close()
    partial.replace(target)
    return target


def synthetic_model(shape_id: str, quant: str = "Q4_K_M", *, seed: int = 0, directory: Path | None = None,
                    tokenizer_from: Path | None = None, log: Any = None) -> Path:
    """The synthetic GGUF of ``shape_id`` in ``quant``: from the cache when it was written before
    by this version of the generator, else written now (F16 first, then quantized by llama.cpp)."""
    if shape_id not in SHAPES:
        raise ValueError(f"unknown shape {shape_id!r}: choose one of {', '.join(SHAPES)}")
    if quant not in QUANTS:
        raise ValueError(f"unknown quantization {quant!r}: choose one of {', '.join(QUANTS)}")
    folder = directory or cache_dir()
    target = folder / f"synthetic-{shape_id}-{quant}-s{seed}-v{GENERATOR_VERSION}.gguf"
    if target.exists():
        return target
    say = log or (lambda message: None)
    f16 = folder / f"synthetic-{shape_id}-F16-s{seed}-v{GENERATOR_VERSION}.gguf"
    if not f16.exists():
        say(f"writing {f16.name} ({SHAPES[shape_id].parameters / 1e6:,.0f} M parameters, seed {seed}) …")
        write_f16(shape_id, f16, seed=seed, tokenizer_from=tokenizer_from)
    if quant == "F16":
        return f16
    from backends.llamacpp.native import quantize

    say(f"quantizing to {quant} with llama.cpp …")
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    quantize(f16, partial, quant)
    partial.replace(target)
    if directory is None:  # the cache keeps what was asked for; the F16 intermediate is gigabytes
        f16.unlink()
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("shapes", nargs="*", help=f"shape ids ({', '.join(SHAPES)}); none: list them")
    p.add_argument("--quant", default="Q4_K_M", choices=QUANTS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help=f"folder (default: {cache_dir()})")
    args = p.parse_args(argv)
    if not args.shapes:
        for shape_id, shape in SHAPES.items():
            print(f"{shape_id:13} {shape.label:15} {shape.arch:7} {shape.parameters / 1e9:7.2f} B parameters, "
                  f"vocabulary {shape.vocab:,}, {shape.layers} layers")
        return 0
    for shape_id in args.shapes:
        path = synthetic_model(shape_id, args.quant, seed=args.seed, directory=args.out,
                               log=lambda m: print(m, file=sys.stderr))
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
