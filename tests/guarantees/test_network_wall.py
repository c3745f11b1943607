"""Nothing leaves the machine, checked below Python: a network namespace and a syscall trace.

``tests/helpers/netwall.py`` runs the command in a namespace that holds loopback alone and
records every connect/sendto/sendmsg of every process and thread with strace, so native
code (llama.cpp, torch), child processes and UDP are seen too. A whole EVINCE debate on the
llama.cpp backend, and one on the transformers backend, must try no address off the
machine; the wall itself is shown to see a child process's TCP and UDP attempts.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tests.helpers.netwall import run_walled, unavailable
from tests.helpers.paths import REPO

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=unavailable() or "")
LABELS = REPO / "tui" / "data" / "symptom2disease_labels.txt"
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
