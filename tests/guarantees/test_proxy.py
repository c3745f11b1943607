"""A proxy named in the environment never carries a request to a loopback model server.

Hospital and company networks set ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` for every program,
often without ``NO_PROXY``. An HTTP client that honours them sends a request for
``http://127.0.0.1:8765`` to the proxy — the case inside it, off the machine. Here the proxy is a
recording listener on loopback, every proxy variable (both cases) points at it, and the model
server is real (``symposium serve llamacpp`` with SmolLM2, tests/conftest.py's ``llama_server``):
the openai backend, the helper that waits for a server, and the ``chat`` command must reach the
server directly, and the recorder must receive nothing.

The one client meant to go through a proxy, ``models pull`` (Hugging Face's own client, which
honours the variables), is left to the network's rules; so is a remote server an entry allows
with ``allow_remote``, shown last.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.base import BackendError, Message, SamplingOptions
from backends.openai_compat import OpenAIBackend
from backends.serve_llamacpp import wait_until_ready
from tests.helpers.listeners import Recorder, recorder
from tests.helpers.paths import REPO
from tests.helpers.servers import RunningServer, server_entry

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    """Every proxy variable pointing at a recorder; no ``NO_PROXY`` to save the day."""
    with recorder() as rec:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, rec.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield rec


def test_the_openai_backend_reaches_a_loopback_server_directly_whatever_the_proxy_variables(
        llama_server: RunningServer, proxy: Recorder) -> None:
    backend = OpenAIBackend(server_entry(llama_server.base_url))

    async def ask() -> str:
        try:
            reply = await backend.session("a").complete([Message("user", "Name one fruit.")],
                                                        SamplingOptions(max_tokens=8, temperature=0.0))
        finally:
            await backend.aclose()
        return reply.text

    assert asyncio.run(ask()).strip()
    wait_until_ready(llama_server.base_url, timeout=30)
    assert proxy.received == [], f"the proxy was sent: {proxy.received[:2]}"


def test_the_chat_command_on_a_served_model_sends_nothing_to_the_proxy(llama_server: RunningServer, proxy: Recorder,
                                                                       tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text('[models.smollm2-http]\nname = "SmolLM2 over HTTP"\nfamily = "llama"\nbackend = "openai"\n'
                      'chat_format = "chatml"\ncontext_length = 2048\n'
                      f'source = {{ kind = "server", base_url = "{llama_server.base_url}" }}\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "tui.cli", "--models", str(models), "chat", "smollm2-http",
                          "Name one fruit.", "--max-tokens", "8"], cwd=REPO, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert proxy.received == [], f"the proxy was sent: {proxy.received[:2]}"


def test_a_remote_server_the_entry_allows_goes_the_way_the_environment_asks(proxy: Recorder) -> None:
    """Only where the user allowed text to leave the machine (``allow_remote``) is the proxy used:
    the request for a remote address reaches the recorder, in the proxy's form."""
    with pytest.raises(BackendError):
        OpenAIBackend(server_entry("http://192.0.2.10:8000/v1", allow_remote=True))
    assert proxy.connections(at_least=1) >= 1
    assert any(b"http://192.0.2.10:8000/v1/models" in got for got in proxy.received), proxy.received


def test_models_pull_checks_the_proxy_the_network_asks_for(proxy: Recorder) -> None:
    """``models pull`` is the one request meant to leave: where a proxy carries it, the quick
    check before the download asks whether the proxy answers (not the hub directly, which such a
    network does not let through), and the hub's own client honours the same variables."""
    from tui.cli.models import _unreachable

    assert _unreachable("https://huggingface.co", timeout=5.0) is None
    assert proxy.connections(at_least=1) == 1  # the check's connection reached the proxy (and sent nothing)
