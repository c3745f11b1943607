"""Nothing leaves the machine, checked below Python: a network namespace and a syscall trace.

``tests/helpers/netwall.py`` runs the command in a namespace that holds loopback alone and
records every connect/sendto/sendmsg of every process and thread with strace, so native
code (llama.cpp, torch), child processes and UDP are seen too. A whole EVINCE debate on the
llama.cpp backend, and one on the transformers backend, must try no address off the
machine; so must the app (started as ``symposium`` is, played under Pilot), ``chat``, ``models
test``, ``bench diagnosis`` and ``serve`` answering a client. The wall itself is shown to see a
child process's TCP and UDP attempts.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.helpers.netwall import run_walled, unavailable
from tests.helpers.paths import REPO



@pytest.fixture(autouse=True)
def _the_wall_or_why_not() -> None:
    """Skip, saying why, where the wall cannot be built (no root, no strace, no unshare); the
    suite's closing summary then says so loudly (tests/conftest.py). On a machine that must run
    it, ``SYMPOSIUM_REQUIRE_NETWORK_WALL=1`` turns the skip into a failure."""
    why = unavailable()
    if why is None:
        return
    if os.environ.get("SYMPOSIUM_REQUIRE_NETWORK_WALL") == "1":
        pytest.fail(f"SYMPOSIUM_REQUIRE_NETWORK_WALL=1, but the network wall cannot run here: {why}")
    pytest.skip(f"network wall unavailable: {why}")

LABELS = REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"
DEBATE = ["run", "evince", "--case", "fever, chills, headache", "--labels", str(LABELS), "--max-rounds", "0",
          "--turn-tokens", "24", "--crit-tokens", "24"]


def _symposium(tmp_path: Path, *args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = ()):
    return run_walled([sys.executable, "-m", "tui.cli", *args], tmp_path / "trace.txt", unset=unset,
                      env={"SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO), **(env or {})})


def test_the_wall_sees_child_processes_tcp_and_udp(tmp_path: Path) -> None:
    child = ("import socket, subprocess, sys\n"
             "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
             "try: u.sendto(b'q', ('9.9.9.9', 53))\nexcept OSError: pass\n"
             "subprocess.run([sys.executable, '-c', 'import socket; socket.socket().connect_ex((\"203.0.113.7\", 443))'])\n")
    run, attempts = run_walled([sys.executable, "-c", child], tmp_path / "trace.txt")
    assert run.returncode == 0, run.stderr
    seen = {(a.syscall, a.host) for a in attempts if a.off_machine}
    assert ("sendto", "9.9.9.9") in seen and ("connect", "203.0.113.7") in seen
    assert len({a.pid for a in attempts if a.off_machine}) == 2  # the parent's UDP, the child's TCP


def test_the_one_online_command_is_seen_and_stopped(tmp_path: Path) -> None:
    """``models pull`` goes online: behind the wall it fails, and its attempt is on the record."""
    run, attempts = _symposium(tmp_path, "models", "pull", "gemma2-9b-it", unset=("HF_", "TRANSFORMERS_"))
    assert run.returncode != 0 and "not reachable" in run.stderr, run.stderr
    assert any(a.off_machine for a in attempts), "the pull's attempt (a DNS query or a connect) was not seen"


def test_a_debate_on_llama_cpp_tries_no_address_off_the_machine(tmp_path: Path) -> None:
    run, attempts = _symposium(tmp_path, *DEBATE, "--agent-a", "smollm2-135m", "--agent-b", "gemma3-270m",
                               "--judge", "smollm2-135m")
    assert run.returncode == 0, run.stderr[-2000:]
    assert [a for a in attempts if a.off_machine] == []


CASES = "case_id,disease,symptoms\nc1,Malaria,fever;chills;sweating\nc2,Dengue,rash;joint_pain\n"
#: Every other command that loads a model (the app as ``symposium`` starts it, under Pilot).
COMMANDS = {
    "app": ["-m", "tests.helpers.app_session"],
    "chat": ["-m", "tui.cli", "chat", "smollm2-135m", "Name one fruit.", "--max-tokens", "8"],
    "models test": ["-m", "tui.cli", "models", "test", "smollm2-135m"],
    "bench diagnosis": ["-m", "tui.cli", "bench", "diagnosis", "--cases", "{cases}", "--models", "smollm2-135m,smollm2-135m",
                        "--design", "quick", "--schedules", "none", "--max-rounds", "1", "--turn-tokens", "24",
                        "--jobs", "1", "--out", "{out}"],
}
#: ``serve`` behind the wall, with a client in the same namespace asking it for one reply.
SERVE_AND_ASK = """
import signal, subprocess, sys, time, httpx
server = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", "llamacpp", "smollm2-135m", "--port", "8765"])
reply, deadline = None, time.monotonic() + 300
while reply is None and time.monotonic() < deadline and server.poll() is None:
    try:
        reply = httpx.post("http://127.0.0.1:8765/v1/chat/completions", timeout=120,
                           json={"messages": [{"role": "user", "content": "Name one fruit."}], "max_tokens": 8})
    except httpx.TransportError:
        time.sleep(0.5)
server.send_signal(signal.SIGINT)
server.wait(timeout=60)
print("reply", reply.status_code if reply is not None else None)
"""


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_that_loads_a_model_tries_no_address_off_the_machine(tmp_path: Path, name: str) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text(CASES, encoding="utf-8")
    argv = [a.format(cases=cases, out=tmp_path / "diagnosis") for a in COMMANDS[name]]
    run, attempts = run_walled([sys.executable, *argv], tmp_path / "trace.txt",
                               env={"SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO),
                                    "SYMPOSIUM_CONFIG_DIR": str(tmp_path / "config")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert [a for a in attempts if a.off_machine] == []


def test_serve_answering_a_client_tries_no_address_off_the_machine(tmp_path: Path) -> None:
    run, attempts = run_walled([sys.executable, "-c", SERVE_AND_ASK], tmp_path / "trace.txt",
                               env={"SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO)})
    assert run.returncode == 0 and "reply 200" in run.stdout, (run.stdout[-1000:], run.stderr[-2000:])
    assert any(a.host == "127.0.0.1" for a in attempts)  # the client's connections were traced
    assert [a for a in attempts if a.off_machine] == []


def test_a_debate_on_transformers_tries_no_address_off_the_machine(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="the transformers extra is not installed")
    registry = (REPO / "models.toml").read_text(encoding="utf-8")
    entry = registry.split("[models.smollm2-135m]", 1)[1].split("\n[models.", 1)[0]
    entry = entry.replace('backend = "llamacpp"', 'backend = "transformers"')
    models = tmp_path / "models.toml"
    models.write_text("[models.smollm2-hf]" + entry, encoding="utf-8")
    run, attempts = _symposium(tmp_path, *DEBATE, "--agent-a", "smollm2-hf", "--agent-b", "smollm2-hf",
                               "--judge", "smollm2-hf", env={"SYMPOSIUM_MODELS": str(models)})
    assert [a for a in attempts if a.off_machine] == []
    # The backend really ran: the model loaded and the debate ran to its end in the journal.
    assert run.returncode == 0, run.stderr[-2000:]
    conn = sqlite3.connect(tmp_path / "journal.db")
    assert conn.execute("SELECT status FROM debates").fetchall() == [("finished",)]
    assert conn.execute("SELECT model_id FROM participants").fetchall()[0][0] == "smollm2-hf"
