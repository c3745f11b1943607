"""A real ``llama_cpp.server`` on loopback, started the way users start it
(``symposium serve llamacpp``), for the openai backend's tests.

Each server is a subprocess on a free 127.0.0.1 port; the context manager waits until it
answers (or fails with its log) and always stops it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.base import BackendUnavailable
from backends.registry import ModelEntry
from backends.serve_llamacpp import free_port, wait_until_ready

from .paths import REPO


@dataclass
class RunningServer:
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """Stop it the hard way (a crash, an unplugged machine)."""
        self.process.kill()
        self.process.wait(timeout=10)


@contextmanager
def llama_server(model_id: str, log_dir: Path, *flags: str) -> Iterator[RunningServer]:
    """``symposium serve llamacpp MODEL_ID --port N FLAGS…`` for the duration of the block."""
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    cmd = [sys.executable, "-m", "tui.cli", "serve", "llamacpp", model_id, "--port", str(port), *flags]
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    server = RunningServer(f"http://127.0.0.1:{port}/v1", process, log)
    try:
        try:
            wait_until_ready(server.base_url, process, timeout=180)
        except BackendUnavailable as exc:
            raise RuntimeError(f"{exc}; its log says:\n{log.read_text(errors='replace')[-3000:]}") from None
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def server_entry(base_url: str, model_id: str = "smollm2-135m-http", *, allow_remote: bool = False, **fields: Any) -> ModelEntry:
    """A registry entry for the served SmolLM2 (the tests' own, not one from models.toml)."""
    table: dict[str, Any] = {
        "id": model_id, "name": "SmolLM2 135M over HTTP", "family": "llama", "backend": "openai", "chat_format": "chatml",
        "source": {"kind": "server", "base_url": base_url, "allow_remote": allow_remote}, **fields,
    }
    return ModelEntry(**table)
