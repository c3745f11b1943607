"""Nothing leaves the machine: every command that loads a model runs with the network walled off
but loopback (``tests/helpers/guarded.py``: connect, connect_ex, sendto, sendmsg, bind and name
lookups are recorded, and refused off loopback).

Each command is run for real on the bundled SmolLM2 — the app (started as ``symposium`` on a
terminal is, played under Pilot: home, the new-debate form, a debate to its end), ``chat``,
``models test``, ``bench diagnosis``, ``serve`` (with a client asking it for a reply) and ``run
evince`` — and must succeed, attempt nothing off the machine, and see every offline variable set,
even when the user's own environment says otherwise (``HF_HUB_OFFLINE=0`` and the like).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from backends import served
from backends.serve_llamacpp import free_port
from tests.helpers.guarded import OFFLINE_VARIABLES
from tests.helpers.paths import REPO
from tui.cli.parser import OFFLINE_ENV

LABELS = REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"
#: A user's environment that would let the libraries go online: every command must override it.
ONLINE_ENV = {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0",
              "HF_HUB_DISABLE_TELEMETRY": "0", "DO_NOT_TRACK": "0", "VLLM_NO_USAGE_STATS": "0",
              "GRADIO_ANALYTICS_ENABLED": "True"}
#: What each must read inside every command, whatever the user's environment said.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "DO_NOT_TRACK": "1", "VLLM_NO_USAGE_STATS": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
CASES = "case_id,disease,symptoms\nc1,Malaria,fever;chills;sweating\nc2,Dengue,rash;joint_pain\n"


def _env(tmp_path: Path, online: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(SYMPOSIUM_DB=str(tmp_path / "journal.db"), SYMPOSIUM_CONFIG_DIR=str(tmp_path / "config"))
    if online:
        env.update(ONLINE_ENV)
    return env


def _command(report: Path, args: tuple[str, ...], app: bool) -> list[str]:
    return [sys.executable, "-m", "tests.helpers.guarded", str(report), *(["--app"] if app else []), "--", *args]


def guarded(tmp_path: Path, *args: str, app: bool = False, online: bool = True) -> tuple[subprocess.CompletedProcess[str], dict]:
    """``symposium ARGS`` (or the app) under the guard, in a user environment that says "go online"."""
    report = tmp_path / "report.json"
    run = subprocess.run(_command(report, args, app), cwd=REPO, env=_env(tmp_path, online), capture_output=True,
                         text=True, timeout=900, check=False)
    return run, json.loads(report.read_text())


def assert_private(run: subprocess.CompletedProcess[str], report: dict) -> None:
    assert run.returncode == 0, run.stderr[-3000:]
    assert [a for a in report["attempts"] if not a["allowed"]] == []
    assert report["env"] == OFFLINE, "a library was left free to go online"


def test_the_guard_reads_every_offline_variable_the_app_sets() -> None:
    assert set(OFFLINE_VARIABLES) == set(OFFLINE_ENV) == set(OFFLINE)


@pytest.mark.model
def test_an_evince_debate_opens_no_connection_off_the_machine(tmp_path: Path) -> None:
    run, report = guarded(tmp_path, "run", "evince", "--case", "fever, chills, headache", "--labels", str(LABELS),
                          "--agent-a", "smollm2-135m", "--agent-b", "gemma3-270m", "--judge", "smollm2-135m",
                          "--max-rounds", "0", "--turn-tokens", "40", "--crit-tokens", "40")
    assert_private(run, report)
    assert stat.S_IMODE((tmp_path / "journal.db").stat().st_mode) == 0o600


@pytest.mark.model
def test_the_app_opens_no_connection_off_the_machine(tmp_path: Path) -> None:
    """``symposium`` (the app, on_mount and all) from start to a finished debate."""
    run, report = guarded(tmp_path, app=True)
    assert_private(run, report)
    assert "app debate" in run.stdout and ": finished (" in run.stdout, run.stdout[-2000:]


@pytest.mark.model
def test_chat_opens_no_connection_off_the_machine(tmp_path: Path) -> None:
    run, report = guarded(tmp_path, "chat", "smollm2-135m", "Name one fruit.", "--max-tokens", "8")
    assert_private(run, report)


@pytest.mark.model
def test_models_test_opens_no_connection_off_the_machine(tmp_path: Path) -> None:
    run, report = guarded(tmp_path, "models", "test", "smollm2-135m")
    assert_private(run, report)


@pytest.mark.model
def test_bench_diagnosis_opens_no_connection_off_the_machine(tmp_path: Path) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text(CASES, encoding="utf-8")
    run, report = guarded(tmp_path, "bench", "diagnosis", "--cases", str(cases), "--models", "smollm2-135m,smollm2-135m",
                          "--design", "quick", "--schedules", "none", "--max-rounds", "1", "--turn-tokens", "24",
                          "--jobs", "1", "--out", str(tmp_path / "diagnosis"))
    assert_private(run, report)
    assert (tmp_path / "diagnosis.json").exists()


@pytest.mark.model
def test_serve_opens_no_connection_off_the_machine_while_answering(tmp_path: Path) -> None:
    """``serve`` loads the model, listens on loopback only, answers a client, and stops on Ctrl-C."""
    report, port = tmp_path / "report.json", free_port()
    server = subprocess.Popen(_command(report, ("serve", "llamacpp", "smollm2-135m", "--port", str(port)), app=False),
                              cwd=REPO, env=_env(tmp_path, online=True), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        base, deadline, reply = f"http://127.0.0.1:{port}/v1", time.monotonic() + 300, None
        while reply is None and time.monotonic() < deadline and server.poll() is None:
            key = served.key_for(base)  # this start's key, announced once the port is bound
            try:
                if key is not None:
                    reply = httpx.post(f"{base}/chat/completions", timeout=120, headers={"Authorization": f"Bearer {key}"},
                                       json={"messages": [{"role": "user", "content": "Name one fruit."}], "max_tokens": 8})
            except httpx.TransportError:
                pass
            if reply is None:
                time.sleep(0.5)
        assert reply is not None and reply.status_code == 200, server.stderr.read() if server.poll() is not None else reply
        assert reply.json()["choices"][0]["message"]["content"] is not None
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    data = json.loads(report.read_text())
    assert server.returncode in (0, 130), err[-3000:]
    assert [a for a in data["attempts"] if not a["allowed"]] == []
    assert any(a["call"] == "bind" and a["host"] == "127.0.0.1" for a in data["attempts"]), data["attempts"]
    assert data["env"] == OFFLINE


def test_the_guard_itself_blocks_the_outside_world(tmp_path: Path) -> None:
    """The wall is real: a pull (the one command that may go online) is refused by it."""
    run, report = guarded(tmp_path, "models", "pull", "gemma2-9b-it", online=False)
    assert run.returncode == 1 and "not reachable" in run.stderr
    assert any(not a["allowed"] and "huggingface" in a["host"] for a in report["attempts"])


@pytest.mark.parametrize("call", [
    "socket.create_connection(('203.0.113.7', 443), timeout=1)",
    "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'q', ('9.9.9.9', 53))",
    "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendmsg([b'q'], [], 0, ('9.9.9.9', 53))",
    "socket.socket().connect_ex(('203.0.113.7', 443))",
    "socket.gethostbyname('example.org')",
    "socket.getaddrinfo('example.org', 443)",
    "socket.socket().bind(('0.0.0.0', 0))",
])
def test_the_guard_sees_each_way_out(tmp_path: Path, call: str) -> None:
    """Each socket call the guard patches, tried in a guarded process (caught or not by the
    caller, the attempt is on the record)."""
    report = tmp_path / "report.json"
    code = (f"import socket\nimport tests.helpers.guarded as g\ng.REPORT = {str(report)!r}\n"
            f"try:\n    {call}\nexcept OSError:\n    pass\ng.write_report()\n")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)
    attempts = json.loads(report.read_text())["attempts"]
    assert any(not a["allowed"] for a in attempts), attempts
