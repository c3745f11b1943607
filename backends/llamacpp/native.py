"""The one module that speaks to llama-cpp-python.

Why one module: the rest of the package needs llama.cpp's model, context, batch and sampler
below the high-level ``llama_cpp.Llama`` (which owns one context per model), and
llama-cpp-python offers those only through its private ``_internals`` wrappers and the raw
ctypes functions, both of which change between releases. Everything the package uses of them
is here, behind a few small classes, so that a new release is a change to this file alone.

Nothing here imports llama_cpp until a model is loaded, so importing the package stays cheap.
llama.cpp's own log lines go to Python logging (this module's logger) instead of the terminal,
where they would break the TUI.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..threads import default_threads

log = logging.getLogger(__name__)

_INIT_LOCK = threading.Lock()
_initialised = False
_log_callback: Any = None

#: llama_decode's return code when the KV cache has no room for the batch.
NO_KV_SLOT = 1

#: One row of a batch: (token, position, sequence or sequences sharing its cell, wants logits).
BatchItem = tuple[int, int, "int | Sequence[int]", bool]


def library() -> Any:
    """llama-cpp-python's low-level module, initialised once, quietly."""
    global _initialised, _log_callback
    import llama_cpp

    with _INIT_LOCK:
        if not _initialised:
            @llama_cpp.llama_log_callback
            def forward(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
                # ggml's levels: 0 none, 1 debug, 2 info, 3 warn, 4 error, 5 continuation.
                # Only errors are worth a user's attention; failures also surface as exceptions.
                log.log(logging.WARNING if level == 4 else logging.DEBUG, text.decode("utf-8", "replace").rstrip())

            _log_callback = forward  # keep a reference: the C side holds only a pointer
            llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            _initialised = True
    return llama_cpp


def version() -> str:
    """llama-cpp-python's version (for provenance and benchmark tables)."""
    import llama_cpp

    return str(llama_cpp.__version__)


def supports_gpu_offload() -> bool:
    """Whether this build of llama.cpp can put layers on a GPU (CUDA, Metal, Vulkan …)."""
    return bool(library().llama_supports_gpu_offload())


class Model:
    """A GGUF model's weights and vocabulary, loaded once.

    Raises ``ValueError`` when llama.cpp cannot load the file (missing, incomplete, not GGUF).
    ``vocab_only`` reads the metadata and vocabulary without the weights. ``extra_buffers``:
    llama.cpp's extra CPU weight layouts (AMX, repacking), off unless asked for: their kernels
    crash on some virtual machines that advertise the instructions.
    """

    def __init__(self, path: Path, *, gpu_layers: int = 0, extra_buffers: bool = False, vocab_only: bool = False) -> None:
        from llama_cpp import _internals

        self._api = library()
        params = _internals.LlamaModel.default_params()
        params.n_gpu_layers = 0x7FFFFFFF if gpu_layers == -1 else gpu_layers
        params.use_extra_bufts = extra_buffers
        params.vocab_only = vocab_only
        self._model = _internals.LlamaModel(path_model=str(path), params=params, verbose=False)
        self.vocab = self._model.vocab
        self._piece_buf = ctypes.create_string_buffer(64)

    def n_vocab(self) -> int:
        return int(self._model.n_vocab())

    def n_ctx_train(self) -> int:
        return int(self._model.n_ctx_train())

    def add_bos_token(self) -> bool:
        return bool(self._model.add_bos_token())

    def metadata(self) -> dict[str, str]:
        """The GGUF's key/value metadata, every value as llama.cpp prints it."""
        return dict(self._model.metadata())

    def token_bos(self) -> int:
        return int(self._model.token_bos())

    def token_eos(self) -> int:
        return int(self._model.token_eos())

    def token_eot(self) -> int:
        return int(self._model.token_eot())

    def token_get_text(self, token: int) -> str:
        return str(self._model.token_get_text(token))

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        """Tokens of ``text``. The buffer starts at one token per byte (plus BOS), which is
        enough for every tokenizer llama.cpp has, and is asked again at the size llama.cpp
        names otherwise (not at the training context, which is 128k tokens for Llama 3)."""
        api = self._api
        size = len(text) + 2
        tokens = (api.llama_token * size)()
        n = api.llama_tokenize(self.vocab, text, len(text), tokens, size, add_bos, special)
        if n < 0:
            size = -n
            tokens = (api.llama_token * size)()
            n = api.llama_tokenize(self.vocab, text, len(text), tokens, size, add_bos, special)
            if n < 0:
                raise RuntimeError(f"llama.cpp could not tokenize {len(text)} bytes (code {n})")
        return list(tokens[:n])

    def detokenize(self, tokens: Sequence[int], special: bool = False) -> bytes:
        """The bytes of ``tokens``; with ``special`` special tokens are written as their text."""
        return bytes(self._model.detokenize(list(tokens), special=special))

    def piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens render as nothing)."""
        api, buf = self._api, self._piece_buf
        n = api.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:  # longer than the buffer: grow it once and retry
            self._piece_buf = buf = ctypes.create_string_buffer(-n)
            n = api.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        return buf.raw[:n]

    def is_eog(self, token: int) -> bool:
        """Whether the vocabulary marks ``token`` as ending generation."""
        return bool(self._api.llama_vocab_is_eog(self.vocab, token))

    def is_control(self, token: int) -> bool:
        """Whether ``token`` is a control or user-defined token (markup, not text)."""
        api = self._api
        attr = api.llama_vocab_get_attr(self.vocab, token)
        return bool(attr & (api.LLAMA_TOKEN_ATTR_CONTROL | api.LLAMA_TOKEN_ATTR_USER_DEFINED))

    def close(self) -> None:
        """Free the weights (and, first, every context made on them)."""
        self._model.close()


class Batch:
    """A llama_batch of up to ``n_tokens`` rows, each in up to ``n_seq_max`` sequences."""

    def __init__(self, n_tokens: int, n_seq_max: int = 1) -> None:
        from llama_cpp import _internals

        self._batch = _internals.LlamaBatch(n_tokens=n_tokens, embd=0, n_seq_max=n_seq_max, verbose=False)

    def fill(self, items: Sequence[BatchItem]) -> None:
        batch = self._batch.batch
        batch.n_tokens = len(items)
        for j, (token, pos, seq, logits) in enumerate(items):
            batch.token[j] = token
            batch.pos[j] = pos
            if isinstance(seq, int):
                batch.seq_id[j][0] = seq
                batch.n_seq_id[j] = 1
            else:
                for i, one in enumerate(seq):
                    batch.seq_id[j][i] = one
                batch.n_seq_id[j] = len(seq)
            batch.logits[j] = logits

    def close(self) -> None:
        self._batch.close()


class Context:
    """A llama_context: a KV cache of ``cells`` cells for ``n_seq`` sequences over one unified
    cache (any sequence may use any free cell), and the compute buffers to decode batches.

    ``kv_cache_type`` "q8_0" quantizes keys and values (llama.cpp does so for V only with flash
    attention, which it then turns on). Raises ``ValueError`` when llama.cpp cannot make it
    (usually: no memory for the cells).
    """

    def __init__(self, model: Model, *, cells: int, n_seq: int, n_batch: int, threads: int,
                 kv_cache_type: str = "f16") -> None:
        from llama_cpp import _internals

        api = self._api = model._api
        params = _internals.LlamaContext.default_params()
        params.n_ctx = cells
        params.n_seq_max = n_seq
        params.kv_unified = True
        if kv_cache_type != "f16":
            kind = {"q8_0": api.GGML_TYPE_Q8_0}[kv_cache_type]
            params.type_k = params.type_v = kind
            params.flash_attn_type = api.LLAMA_FLASH_ATTN_TYPE_ENABLED
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_threads = threads
        params.n_threads_batch = threads
        # A full-size sliding-window cache (Gemma) so that rolling back to a cached prefix,
        # which scoring does for every candidate, never needs positions already evicted.
        params.swa_full = True
        params.no_perf = True
        self.cells = cells
        self._ctx = _internals.LlamaContext(model=model._model, params=params, verbose=False)
        self.n_vocab = model.n_vocab()

    def decode(self, batch: Batch) -> int:
        """llama_decode's return code: 0 done, :data:`NO_KV_SLOT` no room in the cache."""
        return int(self._api.llama_decode(self._ctx.ctx, batch._batch.batch))

    def seq_rm(self, seq: int, p0: int = -1, p1: int = -1) -> bool:
        """Drop ``seq``'s cells at positions [p0, p1) (-1: open end); False when llama.cpp
        cannot remove part of a sequence (then the caller drops it whole)."""
        return bool(self._api.llama_memory_seq_rm(self._ctx.memory, seq, p0, p1))

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        """Tag ``src``'s cells at positions [p0, p1) as ``dst``'s too (no data is copied)."""
        self._api.llama_memory_seq_cp(self._ctx.memory, src, dst, p0, p1)

    def seq_state(self, seq: int) -> memoryview:
        """``seq``'s cells, serialised (to move them into another context); empty when it has none."""
        api = self._api
        size = api.llama_state_seq_get_size(self._ctx.ctx, seq)
        buf = (ctypes.c_uint8 * size)()
        written = api.llama_state_seq_get_data(self._ctx.ctx, buf, size, seq)
        return memoryview(buf)[:written]

    def set_seq_state(self, seq: int, state: memoryview) -> bool:
        """Restore cells saved by :meth:`seq_state` as ``seq``'s; False when that failed."""
        if not len(state):
            return False
        buf = (ctypes.c_uint8 * len(state)).from_buffer(state)
        return bool(self._api.llama_state_seq_set_data(self._ctx.ctx, buf, len(state), seq))

    def logits_row(self, index: int) -> np.ndarray:
        """A copy of the logits of row ``index`` of the last batch (-1: its last row)."""
        ptr = self._api.llama_get_logits_ith(self._ctx.ctx, index)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,)).copy()

    def logits(self, rows: int) -> np.ndarray:
        """The last batch's logits, ``rows`` × vocabulary, as a view (no copy): valid until the
        next decode. Every row of the batch must have asked for logits."""
        ptr = self._api.llama_get_logits(self._ctx.ctx)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(rows, self.n_vocab))

    def decoded(self) -> int:
        """How many tokens llama.cpp has run through this context, prompts and replies alike,
        by its own counters (``llama_perf_context``: n_p_eval + n_eval, kept even with timing
        off), once the work queued on it is done. What the journal's token counts are checked
        against."""
        api = self._api
        api.llama_synchronize(self._ctx.ctx)
        data = api.llama_perf_context(self._ctx.ctx)
        return int(data.n_p_eval) + int(data.n_eval)

    def close(self) -> None:
        self._ctx.close()


class Grammar:
    """A GBNF grammar compiled from a JSON schema; raises ``ValueError`` (or the parser's
    ``RuntimeError``, ``KeyError``, ``NotImplementedError``) for a schema it cannot express."""

    def __init__(self, json_schema: str) -> None:
        from llama_cpp.llama_grammar import LlamaGrammar

        self._grammar = LlamaGrammar.from_json_schema(json_schema, verbose=False)

    @property
    def raw(self) -> Any:
        """llama-cpp-python's own grammar object (for ``llama_cpp.Llama``, which benchmarks
        compare against)."""
        return self._grammar


class SamplerChain:
    """A llama.cpp sampler chain, built step by step in the order the steps apply."""

    def __init__(self, model: Model) -> None:
        from llama_cpp import _internals

        self._api = model._api
        self._model = model
        self._chain = _internals.LlamaSampler()
        self._grammar_first = False
        self._one = self._api.llama_token_data()
        self._one_array = self._api.llama_token_data_array(data=ctypes.pointer(self._one), size=1, selected=-1,
                                                            sorted=False)

    def add_grammar(self, grammar: Grammar) -> None:
        """Constrain to ``grammar``; must come first, so it sees every candidate."""
        self._grammar_first = self._chain_length() == 0
        raw = grammar._grammar
        sampler = self._api.llama_sampler_init_grammar(self._model._model.vocab, raw._grammar.encode("utf-8"),
                                                       raw._root.encode("utf-8"))
        if not sampler:  # llama.cpp refused it (it says why on stderr); unconstrained would go unnoticed
            raise ValueError("llama.cpp refused the grammar of the reply's JSON schema (too many repetitions: "
                             "bound the schema's strings and lists more tightly)")
        self._api.llama_sampler_chain_add(self._chain.sampler, sampler)

    def _chain_length(self) -> int:
        return int(self._api.llama_sampler_chain_n(self._chain.sampler))

    def add_penalties(self, last_n: int, repeat: float) -> None:
        self._chain.add_penalties(self._model.n_vocab(), last_n, repeat, 0.0, 0.0)

    def add_greedy(self) -> None:
        self._chain.add_greedy()

    def add_top_k(self, k: int) -> None:
        self._chain.add_top_k(k)

    def add_top_p(self, p: float) -> None:
        self._chain.add_top_p(p, 1)

    def add_min_p(self, p: float) -> None:
        self._chain.add_min_p(p, 1)

    def add_temp(self, temperature: float) -> None:
        self._chain.add_temp(temperature)

    def add_dist(self, seed: int) -> None:
        self._chain.add_dist(seed)

    def sample(self, ctx: Context, row: int = -1) -> int:
        """Sample (and accept) the next token from row ``row`` of ``ctx``'s last batch."""
        return int(self._api.llama_sampler_sample(self._chain.sampler, ctx._ctx.ctx, row))

    def grammar_allows(self, token: int) -> bool:
        """Whether this chain's grammar (its first step) accepts ``token`` next, asked of that
        one token alone rather than of the whole vocabulary."""
        if not self._grammar_first:
            raise RuntimeError("grammar_allows needs a chain whose first step is a grammar")
        api = self._api
        grammar = api.llama_sampler_chain_get(self._chain.sampler, 0)
        self._one.id, self._one.logit, self._one.p = token, 0.0, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        api.llama_sampler_apply(grammar, ctypes.byref(self._one_array))
        return bool(self._one.logit != float("-inf"))

    def accept(self, token: int) -> None:
        """Advance the chain's state (grammar, penalties) past ``token``."""
        self._api.llama_sampler_accept(self._chain.sampler, token)

    def close(self) -> None:
        self._chain.close()


#: Quantization types :func:`quantize` writes, by the name llama.cpp's tools give them.
QUANT_TYPES = {"Q4_0": 2, "Q8_0": 7, "Q4_K_M": 15, "Q6_K": 18, "F16": 1}


def quantize(source: Path, target: Path, kind: str, *, threads: int | None = None) -> None:
    """Write ``source`` (an F16/F32 GGUF) quantized as ``kind`` to ``target``, with llama.cpp's
    own quantizer (the mixture of types ``llama-quantize`` gives, e.g. Q6_K for some tensors of
    Q4_K_M). Raises ``ValueError`` naming the type for one it does not know, ``RuntimeError``
    when llama.cpp fails."""
    if kind not in QUANT_TYPES:
        raise ValueError(f"quantization {kind!r} is not one of {', '.join(QUANT_TYPES)}")
    api = library()
    params = api.llama_model_quantize_default_params()
    params.ftype = QUANT_TYPES[kind]
    params.nthread = threads or default_threads()
    code = api.llama_model_quantize(str(source).encode(), str(target).encode(), ctypes.byref(params))
    if code != 0:
        raise RuntimeError(f"llama.cpp could not quantize {source} to {kind} (code {code})")
