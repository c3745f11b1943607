"""Headless Chromium for the report's tests: a screenshot, the DOM after parsing, the console,
and a loopback server that records every request a page makes.

Debian's ``chromium`` package (``.ci/run`` installs it when missing). Every run resolves no
host and reaches no address but 127.0.0.1 (``--host-resolver-rules``: everything else is "not
found", IP literals included), so the one place a page's request can go is the loopback
recorder, which is where the hostile turn's image points.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: The binary, as Debian installs it (or another Chromium on PATH).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

FLAGS = ("--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-sync", "--disable-component-update", "--disable-default-apps",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--enable-logging=stderr", "--v=0")


@dataclass
class Run:
    stdout: str
    console: list[str]  # every message the page wrote to the console (CSP violations among them)


def chromium(page: Path, *args: str, timeout: float = 90) -> Run:
    """Chromium opened on ``page`` (a file) with ``args``; its output and the page's console."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory(prefix="symposium-chromium-") as profile:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    if done.returncode != 0:
        raise AssertionError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return Run(done.stdout, console)


class _Recorder(BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    do_POST = do_HEAD = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        """Quiet: the hits are the record."""


@contextmanager
def recording_server() -> Iterator[tuple[int, list[str]]]:
    """A loopback HTTP server on a free port; yields (port, the paths requested so far)."""
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()
        server.server_close()
