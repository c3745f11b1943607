"""Nothing leaves the machine, checked below Python: a network namespace and a syscall trace.

``tests/helpers/netwall.py`` runs the command in a namespace that holds loopback alone and
records every connect/sendto/sendmsg/sendmmsg of every process and thread with strace, in every
socket family, so native code (llama.cpp, torch, vLLM's engine), child processes, UDP, name
lookups and Unix sockets of the host's daemons are seen too. A whole EVINCE debate on the
llama.cpp backend, one on the transformers backend, one on the openai backend against ``serve
llamacpp`` running beside it, and one on vLLM's engine (``make test-vllm``) must try nothing
off the wall; so must the app (started as ``symposium`` is, played under Pilot), ``chat``,
``models test`` and ``bench diagnosis``. The wall itself is shown to see each way out it claims
to see, in a child process too. Where the wall cannot be built the tests skip, and in CI
(``CI=true``) fail.
"""

from __future__ import annotations

import shutil
import socket
import sqlite3
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers.netwall import required, run_walled, unavailable
from tests.helpers.paths import REPO


@pytest.fixture(autouse=True)
def _the_wall_or_why_not() -> None:
    """Skip, saying why, where the wall cannot be built (no root, no strace, no unshare); the
    suite's closing summary then says so loudly (tests/conftest.py). In CI (``CI=true``) or with
    ``SYMPOSIUM_REQUIRE_NETWORK_WALL=1`` the skip is a failure: a check that did not run is not
    a check that passed."""
    why = unavailable()
    if why is None:
        return
    if required():
        pytest.fail(f"the network wall must run here (CI=true or SYMPOSIUM_REQUIRE_NETWORK_WALL=1), but cannot: {why}")
    pytest.skip(f"network wall unavailable: {why}")

LABELS = REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"
DEBATE = ["run", "evince", "--case", "fever, chills, headache", "--labels", str(LABELS), "--max-rounds", "0",
          "--turn-tokens", "24", "--crit-tokens", "24"]


def _symposium(tmp_path: Path, *args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
               timeout: int = 900):
    return run_walled([sys.executable, "-m", "tui.cli", *args], tmp_path / "trace.txt", unset=unset, timeout=timeout,
                      env={"SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO), **(env or {})})


#: Every way out the wall claims to see, tried by a child process of the command (each fails or
#: goes nowhere: the namespace has no route; the attempt is what counts). ``sys.argv[1]``: a Unix
#: socket of the host's, listening outside the wall (as a resolver's or a proxy's would).
WAYS_OUT = """
import socket, sys
def attempt(fn):
    try: fn()
    except OSError: pass
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt(lambda: udp.sendto(b"q", ("9.9.9.9", 53)))
attempt(lambda: udp.sendmsg([b"q"], [], 0, ("198.51.100.4", 123)))
attempt(lambda: socket.socket().connect_ex(("203.0.113.7", 443)))
attempt(lambda: socket.socket(socket.AF_INET6).connect(("2001:db8::1", 443)))
attempt(lambda: socket.socket(socket.AF_UNIX).connect(sys.argv[1]))
attempt(lambda: socket.socket(socket.AF_UNIX).connect("/run/symposium-wall-probe/absent.sock"))
attempt(lambda: socket.getaddrinfo("example.org", 443))
def unconnected_sendall():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("192.0.2.55", 9))
    s.sendall(b"q")
attempt(unconnected_sendall)
attempt(lambda: socket.socket(socket.AF_UNIX).connect("\\0symposium-wall-abstract"))
attempt(lambda: socket.socket().connect(("127.0.0.1", 9)))
"""


def test_the_wall_sees_every_way_out_in_a_child_process(tmp_path: Path) -> None:
    host_side = Path(tempfile.mkdtemp(prefix="symposium-wall-"))  # outside tmp_path: the host's, not the command's
    daemon = socket.socket(socket.AF_UNIX)
    daemon.bind(str(host_side / "daemon.sock"))
    daemon.listen(1)
    try:
        parent = "import subprocess, sys; subprocess.run([sys.executable, '-c', *sys.argv[1:]], check=True)"
        run, attempts = run_walled([sys.executable, "-c", parent, WAYS_OUT, str(host_side / "daemon.sock")],
                                   tmp_path / "trace.txt")
    finally:
        daemon.close()
        shutil.rmtree(host_side)
    assert run.returncode == 0, run.stderr
    seen = {(a.syscall, a.host, a.leaves) for a in attempts}
    for way in (("sendto", "9.9.9.9", "a name lookup (port 53)"),
                ("sendmsg", "198.51.100.4", "an address off the machine"),
                ("connect", "203.0.113.7", "an address off the machine"),
                ("connect", "2001:db8::1", "an address off the machine"),
                ("connect", str(host_side / "daemon.sock"), "a Unix socket of the host, outside the wall"),
                ("connect", "192.0.2.55", "an address off the machine")):
        assert way in seen, f"{way} not seen; seen: {sorted(seen)}"
    # the lookup of a name off the machine: to port 53, or to a resolver daemon's socket on this host
    probed = {"9.9.9.9", "198.51.100.4", "203.0.113.7", "2001:db8::1", "192.0.2.55", str(host_side / "daemon.sock")}
    assert any(a.leaves for a in attempts if a.host not in probed), sorted(seen)
    # what stays inside: loopback, an abstract Unix socket (the namespace's), a socket nobody answered
    assert {("connect", "127.0.0.1", ""), ("connect", "symposium-wall-abstract", ""),
            ("connect", "/run/symposium-wall-probe/absent.sock", "")} <= seen
    assert len({a.pid for a in attempts}) == 1  # all in the child, none in the parent


def test_the_one_online_command_is_seen_and_stopped(tmp_path: Path) -> None:
    """``models pull`` goes online: behind the wall it fails, and its attempt is on the record."""
    run, attempts = _symposium(tmp_path, "models", "pull", "gemma2-9b-it", unset=("HF_", "TRANSFORMERS_"))
    assert run.returncode != 0 and "not reachable" in run.stderr, run.stderr
    assert any(a.off_machine for a in attempts), "the pull's attempt (a DNS query or a connect) was not seen"


@pytest.mark.model
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
#: ``serve`` behind the wall, and an EVINCE debate on the openai backend against it in the same
#: namespace (the served entry in a registry file of the test's own).
SERVE_AND_DEBATE = """
import signal, subprocess, sys, time
from backends import served
server = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", "llamacpp", "smollm2-135m", "--port", "8765"])
deadline = time.monotonic() + 300
while served.key_for("http://127.0.0.1:8765/v1") is None and time.monotonic() < deadline and server.poll() is None:
    time.sleep(0.5)
debate = subprocess.run([sys.executable, "-m", "tui.cli", "--models", sys.argv[1], *sys.argv[2:]])
server.send_signal(signal.SIGINT)
server.wait(timeout=60)
sys.exit(debate.returncode)
"""
SERVED = """[models.smollm2-http]
name = "SmolLM2 over HTTP"
family = "llama"
profile = "small"
backend = "openai"
chat_format = "chatml"
context_length = 2048
source = { kind = "server", base_url = "http://127.0.0.1:8765/v1", model = "smollm2-135m" }
"""


@pytest.mark.parametrize("name", list(COMMANDS))
@pytest.mark.model
def test_every_command_that_loads_a_model_tries_no_address_off_the_machine(tmp_path: Path, name: str) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text(CASES, encoding="utf-8")
    argv = [a.format(cases=cases, out=tmp_path / "diagnosis") for a in COMMANDS[name]]
    run, attempts = run_walled([sys.executable, *argv], tmp_path / "trace.txt",
                               env={"SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO),
                                    "SYMPOSIUM_CONFIG_DIR": str(tmp_path / "config")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert [a for a in attempts if a.off_machine] == []


@pytest.mark.model
def test_a_debate_on_a_served_model_tries_nothing_off_the_machine(tmp_path: Path) -> None:
    """The openai backend and ``serve llamacpp``, both behind the wall: the debate reaches its
    end in the journal, every request of it went to the server on loopback, none elsewhere."""
    models = tmp_path / "served.toml"
    models.write_text(SERVED, encoding="utf-8")
    run, attempts = run_walled([sys.executable, "-c", SERVE_AND_DEBATE, str(models), *DEBATE, "--agent-a", "smollm2-http",
                                "--agent-b", "smollm2-http", "--judge", "smollm2-http"], tmp_path / "trace.txt",
                               env={"SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, (run.stdout[-1000:], run.stderr[-2000:])
    assert any(a.host == "127.0.0.1" and a.port == 8765 for a in attempts)  # the debate's requests were traced
    assert [a for a in attempts if a.off_machine] == []
    conn = sqlite3.connect(tmp_path / "journal.db")
    assert conn.execute("SELECT status FROM debates").fetchall() == [("finished",)]
    assert {r[0] for r in conn.execute("SELECT backend FROM participants")} == {"openai"}


VLLM_ENTRY = """[models.smollm2-vllm]
name = "SmolLM2 on vLLM"
family = "llama"
profile = "small"
backend = "vllm"
context_length = 2048
source = {{ kind = "local", path = "{folder}" }}

[models.smollm2-vllm.vllm]
kv_cache_gb = 1
enforce_eager = true
"""


@pytest.mark.vllm
def test_a_debate_on_vllm_tries_nothing_off_the_machine(tmp_path: Path) -> None:
    """vLLM's engine (its processes talk over ZMQ sockets of their own) behind the wall, with
    ``--verbose``: the debate ends in the journal, nothing was tried off the wall, and neither
    vLLM's engine log nor Symposium's own holds a word of the case (request logging is off)."""
    from tests.conftest import require_vllm, vllm_model_folder

    require_vllm()
    models = tmp_path / "vllm.toml"
    models.write_text(VLLM_ENTRY.format(folder=vllm_model_folder()), encoding="utf-8")
    state = tmp_path / "state"
    run, attempts = _symposium(tmp_path, "--models", str(models), "--verbose", "--log-file", str(tmp_path / "cli.log"),
                               *DEBATE, "--agent-a", "smollm2-vllm", "--agent-b", "smollm2-vllm", "--judge", "smollm2-vllm",
                               env={"XDG_STATE_HOME": str(state)}, timeout=1500)
    assert run.returncode == 0, run.stderr[-3000:]
    assert [a for a in attempts if a.off_machine] == []
    conn = sqlite3.connect(tmp_path / "journal.db")
    assert conn.execute("SELECT status FROM debates").fetchall() == [("finished",)]
    engine_log = state / "symposium" / "log" / "vllm-engine.log"
    assert engine_log.exists(), sorted(p.name for p in state.rglob("*"))
    for log in (engine_log, tmp_path / "cli.log"):
        assert "fever, chills" not in log.read_text(encoding="utf-8", errors="replace"), log


@pytest.mark.model
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
