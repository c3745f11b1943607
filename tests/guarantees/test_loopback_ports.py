"""Another account on the machine cannot use the user's model server, nor stand in for it.

A loopback port is reachable by every account, and any account can bind a free one. So:

* a server Symposium starts (``symposium serve llamacpp``, the real one of tests/conftest.py)
  answers only requests carrying the key made for this start, which only the user can read
  (a ``0600`` record in a ``0700`` folder), and which the openai backend finds and sends itself;
* an account that took a configured port first (played here by a listener run as ``nobody``)
  receives nothing: the openai backend sees who listens on the port (Linux's socket table) and
  refuses before it sends a byte, naming the account and the way out; an entry that names the
  account (``account = "nobody"``, as for Ollama's service) lets it through.

Starting a listener as another account needs root; elsewhere those tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backends import served
from backends.base import BackendUnavailable
from backends.openai_compat import OpenAIBackend
from backends.private import private_dir
from backends.registry import ServerSource
from tests.helpers.listeners import squatter
from tests.helpers.servers import RunningServer, server_entry


def _mode(path: os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_served_model_answers_only_this_start_s_key(llama_server: RunningServer) -> None:
    port = int(llama_server.base_url.rsplit(":", 1)[1].split("/")[0])
    record = served.record_path(port)
    assert _mode(record) == 0o600 and _mode(record.parent) == 0o700
    key = served.key_for(llama_server.base_url)
    assert key is not None and len(key) >= 40
    models = f"{llama_server.base_url}/models"
    assert httpx.get(models, timeout=10, trust_env=False).status_code == 401  # another account: no key
    assert httpx.get(models, timeout=10, trust_env=False, headers={"Authorization": "Bearer guessed"}).status_code == 401
    assert httpx.get(models, timeout=10, trust_env=False, headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert OpenAIBackend(server_entry(llama_server.base_url)).served_model  # the backend sends it by itself


@pytest.fixture
def live_pid() -> Iterator[int]:
    """A live process of the user's standing for a running server (not this one: a test that
    goes wrong may signal it)."""
    process = subprocess.Popen(["sleep", "600"])
    yield process.pid
    alive = process.poll() is None
    process.kill()
    process.wait()
    assert alive, "looking up a key signalled the server's process"


def test_a_record_left_by_a_server_that_died_gives_no_key(live_pid: int) -> None:
    port = 1  # no server of ours listens there
    served.announce(port, "old-key", pid=2**22 + 12345)  # a process id no process has
    try:
        assert served.key_for(f"http://127.0.0.1:{port}/v1") is None
        served.announce(port, "live-key", pid=live_pid)
        assert served.key_for(f"http://127.0.0.1:{port}/v1") == "live-key"
        assert served.key_for(f"http://192.0.2.1:{port}/v1") is None  # never sent off the machine
    finally:
        served.withdraw(port, "live-key")
    assert not served.record_path(port).exists()


def test_a_key_is_256_random_bits_and_new_at_each_start() -> None:
    keys = {served.new_key() for _ in range(20)}
    assert len(keys) == 20 and all(len(k) == 43 and re.fullmatch(r"[A-Za-z0-9_-]+", k) for k in keys)


def test_records_are_kept_in_symposium_s_state_folder() -> None:
    """Beside Symposium's other state (tests/conftest.py points XDG_STATE_HOME into the session's
    temporary tree): the folder ``serve`` and every client of the user's look in."""
    assert served.record_path(8765) == Path(os.environ["XDG_STATE_HOME"]) / "symposium" / "servers" / "8765.json"


def _record(at: int, fields: dict[str, object]) -> None:
    """A record written at port ``at``'s name, holding ``fields``."""
    private_dir(served.records_dir())
    served.record_path(at).write_text(json.dumps(fields), encoding="utf-8")


@pytest.mark.parametrize(("url", "port"), [("http://localhost/v1", 80), ("https://127.0.0.1/v1", 443),
                                           ("http://[::1]:8123/v1", 8123)])
def test_the_key_is_found_by_the_url_s_port(url: str, port: int, live_pid: int) -> None:
    served.announce(port, "k", pid=live_pid)
    try:
        assert served.key_for(url) == "k"
    finally:
        served.withdraw(port, "k")


@pytest.mark.parametrize("record", [
    {"port": 7, "pid": 0, "key": "k"},            # pid 0 signals the process group: no process of its own
    {"port": 7, "pid": -1, "key": "k"},
    {"port": 7, "pid": "1", "key": "k"},
    {"port": 8, "pid": "live", "key": "k"},  # a record for another port, at this one's name
    {"port": 7, "pid": "live", "key": ""},
    {"port": 7, "pid": "live", "key": 42},
    {"port": 7, "pid": "live"},
])
def test_a_record_that_does_not_hold_gives_no_key(record: dict[str, object], live_pid: int) -> None:
    _record(7, {k: live_pid if v == "live" else v for k, v in record.items()})
    try:
        assert served.key_for("http://127.0.0.1:7/v1") is None
    finally:
        served.record_path(7).unlink()


def test_a_record_that_is_no_object_gives_no_key_and_is_not_withdrawn() -> None:
    private_dir(served.records_dir())
    served.record_path(7).write_text('["k"]', encoding="utf-8")
    try:
        assert served.key_for("http://127.0.0.1:7/v1") is None
        served.withdraw(7, "k")
        assert served.record_path(7).exists()
    finally:
        served.record_path(7).unlink()


def test_withdrawing_another_start_s_key_leaves_the_record(live_pid: int) -> None:
    served.announce(7, "this-start", pid=live_pid)
    served.withdraw(7, "an-older-start")
    assert served.key_for("http://127.0.0.1:7/v1") == "this-start"
    served.withdraw(7, "this-start")
    assert not served.record_path(7).exists()


def _needs_root() -> None:
    if os.getuid() != 0:
        pytest.skip("starting a listener as another account needs root")


def test_a_port_another_account_took_first_is_refused_before_anything_is_sent() -> None:
    _needs_root()
    with squatter() as taken:
        url = f"http://127.0.0.1:{taken.port}/v1"
        with pytest.raises(BackendUnavailable, match=r"run by the account nobody, not by you.*account = \"nobody\""):
            OpenAIBackend(server_entry(url))
        with pytest.raises(BackendUnavailable):
            OpenAIBackend(server_entry(url.replace("127.0.0.1", "localhost")))
        assert taken.received() == [], "the other account's listener was sent something"


def test_an_entry_that_names_the_account_reaches_its_server() -> None:
    """``account = "nobody"``: the check lets the request through (the listener, which is no model
    server, then fails it): what stopped the request above was the owner of the port."""
    _needs_root()
    with squatter() as taken:
        url = f"http://127.0.0.1:{taken.port}/v1"
        with pytest.raises(BackendUnavailable, match="no OpenAI-compatible server answers"):
            OpenAIBackend(server_entry(url).model_copy(update={"source": ServerSource(base_url=url, account="nobody")}))
        assert any("GET /v1/models" in line for line in taken.received())


def test_a_live_process_s_record_is_honoured_whatever_its_number() -> None:
    """Process 1 (the system's first, alive, signalable by root) stands for any live process: only
    numbers that name no single process (0, negative) are refused."""
    _needs_root()
    _record(7, {"port": 7, "pid": 1, "key": "k"})
    try:
        assert served.key_for("http://127.0.0.1:7/v1") == "k"
    finally:
        served.record_path(7).unlink()


@pytest.mark.parametrize("whose", ["record", "folder"])
def test_a_record_or_its_folder_of_another_account_gives_no_key(whose: str, live_pid: int) -> None:
    _needs_root()
    served.announce(7, "k", pid=live_pid)
    target = served.record_path(7) if whose == "record" else served.records_dir()
    os.chown(target, 65534, 65534)
    try:
        assert served.key_for("http://127.0.0.1:7/v1") is None
    finally:
        os.chown(target, 0, 0)
        served.withdraw(7, "k")


def test_serve_vllm_keeps_the_key_for_the_port_vllm_listens_on() -> None:
    """After the model id, argparse hands every flag to vLLM, ``--port`` too: the port taken from
    there is the one the key's record and the printed entry name (and vLLM is given it once)."""
    from tui.cli.serve import port_among
    from tui.errors import UserError

    assert port_among(["--port", "9001", "--max-num-seqs", "4"], 8000) == (9001, ["--max-num-seqs", "4"])
    assert port_among(["--max-num-seqs", "4", "--port=9002"], 8000) == (9002, ["--max-num-seqs", "4"])
    assert port_among(["--max-num-seqs", "4"], 8000) == (8000, ["--max-num-seqs", "4"])
    with pytest.raises(UserError, match="--port x: not a port number"):
        port_among(["--port", "x"], 8000)
