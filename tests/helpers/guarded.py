"""Run ``symposium`` with the network walled off except loopback, recording every attempt.

    python -m tests.helpers.guarded REPORT.json -- symposium arguments …

Every ``connect`` (and name lookup) is recorded; anything that is not loopback or a local
socket is refused. The report lists the attempts and the offline variables the app set.
"""

from __future__ import annotations

import atexit
import ipaddress
import json
import os
import socket
import sys

attempts: list[dict[str, object]] = []


def _loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard(family: int, address: object) -> None:
    if family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    allowed = _loopback(host)
    attempts.append({"host": str(host), "allowed": allowed})
    if not allowed:
        raise ConnectionRefusedError(f"blocked by the privacy test: {host}")


_connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


def connect(self: socket.socket, address: object) -> None:
    _guard(self.family, address)
    return _connect(self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    _guard(self.family, address)
    return _connect_ex(self, address)


def getaddrinfo(host: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
    _guard(socket.AF_INET, (host, 0))
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]

if __name__ == "__main__":
    report_path, _, argv = sys.argv[1], sys.argv[2], sys.argv[3:]

    def write_report() -> None:
        env = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK")}
        with open(report_path, "w", encoding="utf-8") as fh:
            json.dump({"attempts": attempts, "env": env}, fh)

    atexit.register(write_report)
    from tui.cli.parser import main

    raise SystemExit(main(argv))
