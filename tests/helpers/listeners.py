"""Loopback listeners that play the attacker: a proxy the environment names, an account that took
a server's port first. Each records every byte it is sent; the tests assert it got none.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Recorder:
    """A TCP listener on 127.0.0.1 that keeps what each connection sends, then hangs up."""

    sock: socket.socket
    received: list[bytes] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connections(self, at_least: int, timeout: float = 10.0) -> int:
        """How many connections it has taken, waiting up to ``timeout`` for ``at_least``."""
        deadline = time.monotonic() + timeout
        while len(self.received) < at_least and time.monotonic() < deadline:
            time.sleep(0.05)
        return len(self.received)

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: the test is over
                return
            with conn:
                conn.settimeout(2.0)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")


@contextmanager
def recorder() -> Iterator[Recorder]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    rec = Recorder(sock)
    thread = threading.Thread(target=rec.serve, daemon=True)
    thread.start()
    try:
        yield rec
    finally:
        sock.close()
        thread.join(timeout=5)


@dataclass
class Squatter:
    """A listener on a free loopback port run by another account, in a child process."""

    pid: int
    port: int
    reports: int  # the read end of the pipe it writes what it was sent to

    def received(self) -> list[str]:
        """One line per connection it accepted, with what it was sent (read after stopping it)."""
        os.kill(self.pid, signal.SIGTERM)
        os.waitpid(self.pid, 0)
        chunks = []
        while chunk := os.read(self.reports, 65536):
            chunks.append(chunk)
        os.close(self.reports)
        return [line for line in b"".join(chunks).decode(errors="replace").splitlines() if line.startswith("received")]


def _squat(uid: int, write: int) -> None:
    """The child: become ``uid``, listen, report the port and then every connection's bytes."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    os.write(write, f"{sock.getsockname()[1]}\n".encode())
    while True:
        conn, _ = sock.accept()
        conn.settimeout(2.0)
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        os.write(write, f"received {len(data)} {data[:80]!r}\n".encode())
        conn.close()


@contextmanager
def squatter(uid: int = 65534) -> Iterator[Squatter]:
    """A listener run by another account (``uid``, nobody's by default; only root can start it)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            _squat(uid, write)
        finally:
            os._exit(0)
    os.close(write)
    line = b""
    while not line.endswith(b"\n"):
        got = os.read(read, 1)
        if not got:
            raise RuntimeError("the listener as another account did not start")
        line += got
    sq = Squatter(pid, int(line), read)
    try:
        yield sq
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
