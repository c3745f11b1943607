"""``symposium models test ID`` and ``symposium serve``, run as a user runs them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backends.serve_llamacpp import free_port
from tests.helpers.servers import RunningServer
from tui.cli.parser import main

SERVED = """[models.served]
name = "SmolLM2 over HTTP"
family = "llama"
backend = "openai"
source = {{ kind = "server", base_url = "{url}" }}
chat_format = "chatml"
"""


def registry_file(tmp_path: Path, url: str) -> str:
    path = tmp_path / "models.toml"
    path.write_text(SERVED.format(url=url))
    return str(path)


def test_models_test_reports_every_check_of_a_served_model(llama_server: RunningServer, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--models", registry_file(tmp_path, llama_server.base_url), "models", "test", "served"])
    out = capsys.readouterr().out
    assert code == 0, out
    for check in ("load", "reply", "structured reply", "scoring"):
        line = next(line for line in out.splitlines() if f" {check} " in line)
        assert "✓" in line, out
    assert "ranks 'Paris' first" in out


def test_models_test_names_a_server_that_is_down(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the whole message on one line
    url = f"http://127.0.0.1:{free_port()}/v1"
    code = main(["--models", registry_file(tmp_path, url), "models", "test", "served"])
    out = capsys.readouterr().out
    assert code == 1
    assert "✗" in out and "no OpenAI-compatible server answers" in out and "skipped" in out


def test_serve_vllm_without_vllm_says_what_to_install(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("vllm"):
        pytest.skip("vLLM is installed here")
    assert main(["serve", "vllm", "smollm2-135m"]) == 1
    assert "vLLM is not installed here" in capsys.readouterr().err
