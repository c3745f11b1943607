"""Headless Chromium for the report's tests: a screenshot, the DOM after parsing, the console,
and a loopback server that records every request a page makes.

Debian's ``chromium`` package (``.ci/run`` installs it when missing). Every run resolves no
host and reaches no address but 127.0.0.1 (``--host-resolver-rules``: everything else is "not
found", IP literals included), so the one place a page's request can go is the loopback
recorder, which is where the hostile turn's image points.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import unescape as html_unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

#: The binary, as Debian installs it (or another Chromium on PATH).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WHY = "Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)"
#: A test that opens a page in Chromium: skipped where it is missing (tests/conftest.py says so,
#: loudly, at the end of the run, recognising the skip by :data:`WHY`), except where
#: SYMPOSIUM_REQUIRE_BROWSER=1 (CI) asks for it: there the test runs and :func:`chromium` fails it.
needs_chromium = pytest.mark.skipif(CHROMIUM is None and os.environ.get("SYMPOSIUM_REQUIRE_BROWSER") != "1", reason=WHY)

FLAGS = ("--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-sync", "--disable-component-update", "--disable-default-apps",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--enable-logging=stderr", "--v=0")


@dataclass
class Run:
    stdout: str
    console: list[str]  # every message the page wrote to the console (CSP violations among them)


def chromium(page: Path, *args: str, timeout: float = 90) -> Run:
    """Chromium opened on ``page`` (a file) with ``args``; its output and the page's console."""
    assert CHROMIUM is not None, f"SYMPOSIUM_REQUIRE_BROWSER=1 but {WHY}"
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


@dataclass
class Widths:
    page: int  # document.documentElement.scrollWidth: wider than the window, the page scrolls sideways
    window: int  # window.innerWidth
    #: The elements whose box or text passes the window's right edge, each as "section tag.class: its text's start"
    overflowing: list[str]
    #: The boxes that scroll sideways inside the page, named the same way
    scrolling_boxes: list[str]


#: Run at the end of the page, once it is laid out: the widths, written onto <body> for --dump-dom.
_MEASURE = """<script>
(function () {
  var w = window.innerWidth, out = [], boxes = [];
  function name(e) { var s = e.closest('section');
                     return (s ? s.id + ' ' : '') + e.tagName.toLowerCase() + '.' + (e.className || '') + ': '
                            + (e.textContent || '').replace(/\\s+/g, ' ').slice(0, 50); }
  function scrolls(e) { var x = getComputedStyle(e).overflowX; return x === 'auto' || x === 'scroll'; }
  function inBox(e) { for (var p = e.parentElement; p; p = p.parentElement) { if (scrolls(p)) { return true; } } return false; }
  document.querySelectorAll('body *').forEach(function (e) {
    if (scrolls(e) && e.scrollWidth > e.clientWidth) { boxes.push(name(e)); }
    if (inBox(e) || scrolls(e)) { return; }  // what a box holds scrolls in it, not in the page
    // past the window: the element's box, or its text running out of a block that did not break it
    var past = e.getBoundingClientRect().right > w + 0.5;
    if (!past && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
      past = e.getBoundingClientRect().left + e.scrollWidth > w + 0.5;
    }
    if (past) { out.push(name(e)); }
  });
  var b = document.body;
  b.setAttribute('data-page', document.documentElement.scrollWidth);
  b.setAttribute('data-window', w);
  b.setAttribute('data-overflowing', JSON.stringify(out.slice(0, 12)));
  b.setAttribute('data-boxes', JSON.stringify(boxes.slice(0, 12)));
})();
</script>"""


def widths(page: Path, width: int, height: int = 900) -> Widths:
    """How wide ``page`` lays out in a window ``width`` px wide. The report's policy runs no
    script, so a copy of it without the policy (its one ``<meta http-equiv>``), with a measuring
    script added at the end of the body, is opened instead: the style and content are the page's."""
    html = page.read_text(encoding="utf-8")
    copy, policies = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    assert policies <= 1 and "</body>" in copy
    measured = page.with_name(f"{page.stem}.measured-{width}.html")
    measured.write_text(copy.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom = chromium(measured, f"--window-size={width},{height}", "--dump-dom").stdout
    found = {k: html_unescape(v) for k, v in re.findall(r'data-(page|window|overflowing|boxes)="([^"]*)"', dom)}
    assert set(found) == {"page", "window", "overflowing", "boxes"}, f"the measuring script did not run: {dom[-500:]}"
    return Widths(int(found["page"]), int(found["window"]), json.loads(found["overflowing"]), json.loads(found["boxes"]))
