"""llama.cpp in process: one loaded GGUF model, its agents' sessions in a shared KV pool.

``backend`` (the model and its sessions), ``kv_pool`` (one context holding every agent's
sequence), ``lockstep`` (replies of several agents decoded together), ``sampler`` (the next
token, grammar included) and ``native``, the one module that speaks to llama-cpp-python.
The names other code uses are exported here.
"""

from ..base import ContextOverflow
from ..threads import default_threads
from .backend import LlamaCppBackend, LlamaCppSession
from .kv_pool import EXACT_BATCH_ROWS, POOL_SEQUENCES, SHARE_MIN_TOKENS, KvPool, log_softmax
from .sampler import grammar_for

__all__ = ["EXACT_BATCH_ROWS", "POOL_SEQUENCES", "SHARE_MIN_TOKENS", "ContextOverflow", "KvPool", "LlamaCppBackend",
           "LlamaCppSession", "default_threads", "grammar_for", "log_softmax"]
