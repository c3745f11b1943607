"""``symposium serve llamacpp|vllm MODEL``: serve a models.toml entry over an OpenAI-compatible
API on this machine (127.0.0.1 only), for the openai backend or any other local client.

``llamacpp`` runs :mod:`backends.serve_llamacpp` (llama-cpp-python's server with the entry's
settings); ``vllm`` runs ``vllm serve`` with prefix caching on, for users who prefer vLLM as a
separate process (several models, restarts independent of the app).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess

from backends.registry import load_registry
from backends.serve_llamacpp import LOOPBACK, entry_snippet, serve
from backends.sources import resolve_path

from tui.cli.commands import help_for
from tui.errors import UserError


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help=help_for("serve"))
    engines = p.add_subparsers(dest="engine", metavar="ENGINE", required=True)

    ll = engines.add_parser("llamacpp", help="llama-cpp-python's server for a GGUF entry (CPU, Metal, CUDA)")
    ll.add_argument("model_id")
    ll.add_argument("--port", type=int, default=8765)
    ll.add_argument("--threads", type=int, help="CPU threads (default: the entry's threads, else all cores)")
    scoring = ll.add_mutually_exclusive_group()
    scoring.add_argument("--logits-all", dest="logits_all", action="store_true", default=None,
                         help="keep every position's logits so the server can score candidates (n_ctx × n_vocab floats)")
    scoring.add_argument("--no-logits-all", dest="logits_all", action="store_false")
    ll.set_defaults(handler=serve_llamacpp)

    vl = engines.add_parser("vllm", help="`vllm serve` for an entry (CUDA GPU)")
    vl.add_argument("model_id")
    vl.add_argument("--port", type=int, default=8000)
    vl.add_argument("vllm_args", nargs=argparse.REMAINDER, help="after --, more flags for vllm serve")
    vl.set_defaults(handler=serve_vllm)


def serve_llamacpp(args: argparse.Namespace) -> int:
    serve(args.model_id, port=args.port, models=args.models, logits_all=args.logits_all, threads=args.threads)
    return 0


def vllm_command(model_path: str, model_id: str, port: int, context_length: int, extra: list[str]) -> list[str]:
    """``vllm serve`` on loopback with prefix caching and the entry's name and context."""
    return ["vllm", "serve", model_path, "--served-model-name", model_id, "--host", LOOPBACK, "--port", str(port),
            "--max-model-len", str(context_length), "--enable-prefix-caching", *extra]


def serve_vllm(args: argparse.Namespace) -> int:
    entry = load_registry(args.models).get(args.model_id)
    if shutil.which("vllm") is None:
        raise UserError("vLLM is not installed here (it needs a CUDA GPU): pip install 'symposium-tui[vllm]', "
                        f"or serve a GGUF entry on this machine with `symposium serve llamacpp {entry.id}`")
    extra = [a for a in args.vllm_args if a != "--"]
    cmd = vllm_command(str(resolve_path(entry)), entry.id, args.port, entry.context_length, extra)
    print(f"To use it, add to models.toml:\n{entry_snippet(entry, f'http://{LOOPBACK}:{args.port}/v1', entry.chat_format)}",
          flush=True)
    return subprocess.call(cmd)
