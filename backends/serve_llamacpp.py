"""Serve one registry entry with ``llama_cpp.server`` (OpenAI-compatible) on loopback.

``python -m backends.serve_llamacpp MODEL_ID --port N`` is what ``symposium serve llamacpp``
and the test suite run. Why not plain ``python -m llama_cpp.server``:

* its ``Llama`` has no switch for llama.cpp's extra CPU weight layouts (AMX repacking), whose
  kernels crash on some virtual machines; we patch the model defaults before any model is
  built so the entry's ``cpu_extra_buffers`` (off by default) holds here too;
* prompts are rendered with Symposium's own turn formats (:mod:`backends.chat_format`),
  registered as ``symposium-<format>``, so a model served over HTTP sees exactly the prompt the
  in-process llama.cpp backend would build, and the openai backend can reproduce it for scoring;
* ``interrupt_requests`` is off: by default a second request *aborts* the stream in flight,
  which would cut a debater off whenever a judge is asked something;
* ``logits_all`` (needed for prompt log-probabilities, i.e. scoring) costs ``n_ctx × n_vocab``
  floats, so it is on only while that stays under :data:`LOGITS_BUDGET_BYTES`;
* it answers only requests with a key made for this start (:mod:`backends.served`): every
  account on the machine can reach a loopback port.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from . import served
from .base import BackendUnavailable, Message
from .chat_format import ChatFormat, detect_format, get_format
from .llamacpp import default_threads
from .load_watch import loading
from .registry import ModelEntry, load_registry
from .sources import resolve_path

LOGITS_BUDGET_BYTES = 2 << 30
LOOPBACK = "127.0.0.1"


def keep_extra_buffers(enabled: bool) -> None:
    """Make every model llama-cpp-python builds from now on use ``use_extra_bufts=enabled``."""
    import llama_cpp
    import llama_cpp.llama_cpp as low

    original = low.llama_model_default_params

    def default_params() -> Any:
        params = original()
        params.use_extra_bufts = enabled
        return params

    low.llama_model_default_params = default_params
    llama_cpp.llama_model_default_params = default_params


def register_format(fmt: ChatFormat) -> str:
    """Register ``fmt`` with llama-cpp-python's chat handlers; returns its name there."""
    from llama_cpp.llama_chat_format import ChatFormatterResponse, register_chat_format

    name = f"symposium-{fmt.name}"

    @register_chat_format(name)
    def render(messages: list[dict[str, Any]], **_: Any) -> ChatFormatterResponse:
        turns = [Message(m["role"], m.get("content") or "") for m in messages]
        return ChatFormatterResponse(prompt=fmt.render(turns), stop=list(fmt.stop))

    return name


def gguf_facts(path: Path) -> tuple[str | None, int]:
    """The GGUF's chat template and vocabulary size, read without loading the weights."""
    from .llamacpp.native import Model

    try:
        model = Model(path, vocab_only=True)
    except ValueError:
        raise BackendUnavailable(f"llama.cpp cannot read {path}: `symposium serve llamacpp` needs an entry whose "
                                 "source is a GGUF file") from None
    try:
        return model.metadata().get("tokenizer.chat_template"), model.n_vocab()
    finally:
        model.close()


def format_of(entry: ModelEntry, template: str | None) -> ChatFormat:
    """The entry's ``chat_format``, else the family named by the GGUF's own template."""
    found = get_format(entry.chat_format) if entry.chat_format else detect_format(template)
    if found is None:
        raise BackendUnavailable(
            f"model {entry.id!r}: its GGUF has no recognisable chat template; set chat_format in models.toml"
        )
    return found


def model_settings(entry: ModelEntry, path: Path, chat_format: str, logits_all: bool) -> dict[str, Any]:
    """``llama_cpp.server`` model settings for ``entry`` (as keyword arguments)."""
    threads = entry.threads or default_threads()  # as in process: spinning ggml threads need a core each
    return {
        "model": str(path),
        "model_alias": entry.id,
        "n_ctx": entry.context_length,
        "n_gpu_layers": entry.gpu_layers,
        "n_threads": threads,
        "n_threads_batch": threads,
        "chat_format": chat_format,
        "logits_all": logits_all,
        # The in-process backend leaves flash attention on "auto", which llama.cpp turns on
        # wherever the device supports it; the server only takes yes or no.
        "flash_attn": True,
        "verbose": False,
    }


def serve(model_id: str, *, port: int, models: str | None = None,
          logits_all: bool | None = None, threads: int | None = None) -> None:
    """Load ``model_id`` and serve it on loopback until interrupted (blocking). There is no
    option to listen elsewhere: cases must not become reachable from other machines."""
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    host = LOOPBACK
    entry = load_registry(models).get(model_id)
    if threads:
        entry = entry.model_copy(update={"threads": threads})
    path = resolve_path(entry)
    loading("llama_cpp.server", entry.id, path)
    keep_extra_buffers(entry.cpu_extra_buffers)
    template, n_vocab = gguf_facts(path)
    fmt = format_of(entry, template)
    if logits_all is None:
        logits_all = entry.context_length * n_vocab * 4 <= LOGITS_BUDGET_BYTES
    settings = ModelSettings(**model_settings(entry, path, register_format(fmt), logits_all))
    key = served.new_key()
    app = create_app(server_settings=ServerSettings(host=host, port=port, interrupt_requests=False, api_key=key),
                     model_settings=[settings])
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    try:
        sock = config.bind_socket()  # the port is ours before the key is announced for it
    except SystemExit:  # uvicorn has logged why (the port is taken)
        raise BackendUnavailable(f"cannot listen on {host}:{port}: another server (perhaps another account's) has "
                                 "the port; choose another with --port") from None
    record = served.announce(port, key)
    print(f"serving {entry.id} at http://{host}:{port}/v1 (prompt format {fmt.name}; scoring "
          f"{'on' if logits_all else 'off: start with --logits-all to allow it'})\n"
          f"It answers only requests with this start's key (Authorization: Bearer …), kept in {record}, readable by "
          "you only; Symposium sends it by itself.\n"
          f"To use it, add to models.toml:\n{entry_snippet(entry, f'http://{host}:{port}/v1', fmt.name)}", flush=True)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        served.withdraw(port, key)
        _free_models()


def _free_models() -> None:
    """Free the served model while the interpreter is whole, not from ``Llama.__del__`` while it
    is torn down (where llama.cpp's log lines reach a Python callback that can no longer run)."""
    from llama_cpp.server import app as server_app

    proxy = server_app._llama_proxy
    if proxy is not None:
        proxy.free()


def entry_snippet(entry: ModelEntry, base_url: str, chat_format: str | None) -> str:
    """The ``models.toml`` entry that reaches ``entry`` through the openai backend."""
    lines = [f"[models.{entry.id}-server]", f'name = "{entry.name} (served)"', f'family = "{entry.family}"',
             'backend = "openai"', f'source = {{ kind = "server", base_url = "{base_url}", model = "{entry.id}" }}',
             f"context_length = {entry.context_length}"]
    if chat_format:
        lines.append(f'chat_format = "{chat_format}"')
    return "\n".join(lines)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def command(model_id: str, port: int, *, models: str | None = None, logits_all: bool | None = None,
            threads: int | None = None) -> list[str]:
    """The command line that serves ``model_id`` on ``127.0.0.1:port``."""
    cmd = [sys.executable, "-m", "backends.serve_llamacpp", model_id, "--port", str(port)]
    if models:
        cmd += ["--models", models]
    if threads:
        cmd += ["--threads", str(threads)]
    if logits_all is not None:
        cmd.append("--logits-all" if logits_all else "--no-logits-all")
    return cmd


def wait_until_ready(base_url: str, process: subprocess.Popen[Any] | None = None, timeout: float = 120.0) -> None:
    """Poll ``GET {base_url}/models`` (with the key of a server ``serve`` started, directly:
    never through a proxy the environment names) until it answers; raise with the reason if it
    never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise BackendUnavailable(f"the server for {base_url} exited with status {process.returncode} before it was ready")
        key = served.key_for(base_url)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            if httpx.get(f"{base_url}/models", headers=headers, timeout=2.0, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.25)
    raise BackendUnavailable(f"no server answered at {base_url} within {timeout:.0f} s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m backends.serve_llamacpp", description=__doc__.splitlines()[0])
    parser.add_argument("model_id")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--models", help="model registry (default: $SYMPOSIUM_MODELS or the bundled models.toml)")
    parser.add_argument("--threads", type=int, help="CPU threads (default: the entry's threads, else all cores)")
    logits = parser.add_mutually_exclusive_group()
    logits.add_argument("--logits-all", dest="logits_all", action="store_true", default=None,
                        help="keep all logits so the server can score (memory: n_ctx × n_vocab floats)")
    logits.add_argument("--no-logits-all", dest="logits_all", action="store_false")
    args = parser.parse_args(argv)
    serve(args.model_id, port=args.port, models=args.models, logits_all=args.logits_all, threads=args.threads)


if __name__ == "__main__":
    main()
