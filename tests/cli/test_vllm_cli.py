"""The command line on vLLM's real engine, each command in a process of its own as users run it:
``models test`` (the engine's start is not a reply's timeout; a model vLLM cannot run ends in
the table, not a traceback) and ``serve vllm`` (the openai backend against it: chat,
structured output, scoring, a debate; then the server stops). After each, no process the
command started is left: every process is found by a tag in its environment, which the
engine's processes inherit.

The engines here start with ``enforce_eager`` (no compile: a start of about a minute on 2
cores instead of several); the session's compiled engine is tested in test_vllm_real.py.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.base import Message, SamplingOptions
from backends.registry import Registry
from store.journal import Journal
from tests.conftest import require_vllm, vllm_model_folder
from tests.helpers.paths import REPO
from tests.helpers.servers import server_entry

pytestmark = pytest.mark.vllm

ENTRY = """
[models.{id}]
name = "SmolLM2 135M Instruct (vLLM, test)"
family = "llama"
profile = "small"
backend = "vllm"
source = {{ kind = "local", path = "{folder}" }}
context_length = 2048

[models.{id}.vllm]
kv_cache_gb = 1
enforce_eager = true
"""


@pytest.fixture(scope="module")
def registry_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user registry with SmolLM2 on vLLM and, to fail, a model vLLM's CPU attention cannot run
    (head size 16: random weights, SmolLM2's tokenizer)."""
    require_vllm()
    from backends.registry import load_registry
    from backends.sources import resolve_path
    from tests.fixtures.tiny_hf_model import build

    tiny = build(tmp_path_factory.mktemp("tiny-llama"), resolve_path(load_registry(user=False).get("smollm2-135m")))
    path = tmp_path_factory.mktemp("registry") / "models.toml"
    path.write_text(ENTRY.format(id="smollm2-vllm", folder=vllm_model_folder())
                    + ENTRY.format(id="tiny-head16-vllm", folder=tiny), encoding="utf-8")
    return path


def tagged_env(registry_file: Path, tag: str) -> dict[str, str]:
    return {**os.environ, "SYMPOSIUM_USER_MODELS": str(registry_file), "SYMPOSIUM_TEST_TAG": tag, "COLUMNS": "200"}


def left_behind(tag: str) -> list[str]:
    """Processes still alive that carry ``tag`` in their environment (the command's descendants)."""
    import psutil

    found = []
    for proc in psutil.process_iter(["pid", "name"]):
        try:
            if proc.environ().get("SYMPOSIUM_TEST_TAG") == tag:
                found.append(f"{proc.pid} {proc.name()}")
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def no_process_left(tag: str) -> None:
    import psutil

    for line in left_behind(tag):
        try:
            psutil.Process(int(line.split()[0])).wait(timeout=30)
        except psutil.NoSuchProcess:
            continue
        except psutil.TimeoutExpired:
            break
    assert not left_behind(tag), f"processes left behind: {left_behind(tag)}"


def symposium(registry_file: Path, tag: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], cwd=REPO, env=tagged_env(registry_file, tag),
                          capture_output=True, text=True, timeout=timeout)


def test_models_test_waits_for_the_engine_without_counting_it_against_a_reply(registry_file: Path) -> None:
    """`--timeout 30` bounds each reply; the engine's start (about a minute here, several when
    compiling) is the load step's and is not cut off: all four checks pass, and the command
    leaves no engine process behind."""
    tag = uuid.uuid4().hex
    done = symposium(registry_file, tag, "models", "test", "smollm2-vllm", "--timeout", "30", timeout=1500)
    assert done.returncode == 0, done.stdout + done.stderr
    for check in ("load", "reply", "structured reply", "scoring"):
        row = next(line for line in done.stdout.splitlines() if line.strip("│ ").startswith(check))
        assert "✓" in row, done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    no_process_left(tag)


def test_models_test_on_a_model_vllm_cannot_run_prints_the_table_not_a_traceback(registry_file: Path) -> None:
    """vLLM's CPU attention refuses head size 16 when the first request runs (its EngineCore
    dies): every check after the load fails with the model, the root cause read from vLLM's log
    and the log's path, in the table; no traceback reaches the terminal; no process is left."""
    from backends.vllm_process import on_cpu

    if not on_cpu():
        pytest.skip("head size 16 is refused by vLLM's CPU attention; a GPU's may run this model")
    tag = uuid.uuid4().hex
    done = symposium(registry_file, tag, "models", "test", "tiny-head16-vllm", "--timeout", "30", timeout=1500)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {check: next(line for line in done.stdout.splitlines() if line.strip("│ ").startswith(check))
            for check in ("load", "reply", "structured reply", "scoring")}
    assert "✗" in rows["reply"] and "✗" in rows["scoring"], done.stdout
    text = " ".join(done.stdout.replace("│", " ").split())
    assert "model 'tiny-head16-vllm': vLLM" in text and "head_dim=16" in text, done.stdout
    assert "vllm-engine.log" in text  # where the whole story is
    no_process_left(tag)


def test_the_app_runs_a_debate_on_vllm_and_leaves_no_process(registry_file: Path, tmp_path: Path) -> None:
    """The app (headless under Pilot, in a fresh process as a person's app is) starts vLLM's
    engine in its load step, showing the stage on the status line, runs an EVINCE debate with
    every seat on it to its end, journals it, and leaves no engine process when it exits. Inside
    the app ``sys.stderr`` is Textual's print capture (``fileno()`` -1), which made the engine's
    first spawn fail ("bad value(s) in fds_to_keep") until the resource tracker was started with
    the real stderr: a command or a test never sees that."""
    import json

    from store.queries import Queries

    tag = uuid.uuid4().hex
    db = tmp_path / "journal.db"
    done = subprocess.run([sys.executable, "-m", "tests.helpers.app_on_vllm", str(db), "smollm2-vllm"], cwd=REPO,
                          env=tagged_env(registry_file, tag), capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "finished", result
    assert any("starting vLLM's engine" in phase for phase in result["phases"]), result["phases"]
    with Journal(db) as journal:
        debate = Queries(journal).debate(result["debate_id"])
    assert debate is not None and debate["status"] == "finished"
    assert {p["backend"] for p in debate["participants"]} == {"vllm"} and debate["turns"]
    no_process_left(tag)


@pytest.fixture(scope="module")
def vllm_server(registry_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    """``symposium serve vllm smollm2-vllm`` on a free loopback port; stopped (SIGTERM, as Ctrl-C's
    cousin) at the end of the module."""
    from backends.base import BackendUnavailable
    from backends.serve_llamacpp import free_port, wait_until_ready

    tag = uuid.uuid4().hex
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", "vllm", "smollm2-vllm", "--port", str(port)],
                                   cwd=REPO, env=tagged_env(registry_file, tag), stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        try:
            wait_until_ready(base_url, process, timeout=1500)
        except BackendUnavailable as exc:
            raise RuntimeError(f"{exc}; its log says:\n{log.read_text(errors='replace')[-4000:]}") from None
        yield base_url, tag, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_serve_vllm_answers_the_openai_backend_then_stops_cleanly(vllm_server: tuple[str, str, subprocess.Popen[bytes]],
                                                                  registry: Registry, tmp_path: Path) -> None:
    """The server listens on loopback only; chat, structured output in vLLM's dialect and scoring
    from prompt log-probabilities work through the openai backend; an EVINCE debate runs on it to
    its end; SIGTERM stops the server and its engine."""
    from backends.openai_compat import OpenAIBackend
    from protocols import evince
    from protocols.core.agents import Agent
    from protocols.core.params import build
    from protocols.measures.labels import LabelSet
    from store.drive import drive

    base_url, tag, process = vllm_server
    assert base_url.startswith("http://127.0.0.1:")
    backend = OpenAIBackend(server_entry(base_url, "smollm2-vllm-http", profile="small", context_length=2048))

    async def check() -> str:
        session = backend.session("check")
        reply = await session.complete([Message("user", "Say hello.")], SamplingOptions(max_tokens=8, temperature=0.0))
        assert reply.usage.completion_tokens > 0
        schema = {"type": "object", "properties": {"label": {"type": "string", "enum": ["yes", "no"]}}, "required": ["label"]}
        structured = await session.complete([Message("user", "Is the sky blue? Answer as JSON.")],
                                            SamplingOptions(max_tokens=24, temperature=0.0), schema=schema)
        assert structured.text.strip().startswith("{") and '"label"' in structured.text
        scored = await session.score([Message("user", "What is the capital of France? Answer with the city name only.")],
                                     ["Paris", "Berlin", "Tokyo"])
        assert sum(scored.probs) == pytest.approx(1.0) and all(lp < 0 for lp in scored.logprobs)
        config = build(evince.EvinceConfig, {"case": "Fever, chills and sweats every other day after a trip to Ghana.",
                                             "labels": LabelSet(["Malaria", "Influenza", "Dengue"]),
                                             "max_rounds": 2}, profile="small")
        options = SamplingOptions(temperature=0.0, max_tokens=64)
        agents = evince.EvinceAgents(*(Agent(role, backend, options) for role in ("agent-a", "agent-b", "judge")))
        with Journal(tmp_path / "journal.db") as journal:
            final = await drive(evince.run(config, agents, debate_id="served-vllm"), journal)
        assert final is not None and final.status in ("finished", "stopped"), final
        await backend.aclose()
        return backend.dialect or ""

    dialect = asyncio.run(check())
    assert dialect != "validated-retry", "vLLM's structured output was not found"
    assert scored_with_prompt_logprobs(backend)
    process.terminate()
    assert process.wait(timeout=120) in (0, -15, 143), "vllm serve did not stop on SIGTERM"
    no_process_left(tag)


def scored_with_prompt_logprobs(backend: object) -> bool:
    return bool(getattr(backend, "scoring_works", False))
