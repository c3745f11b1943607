"""Run ``symposium`` with the network walled off except loopback, recording every attempt.

    python -m tests.helpers.guarded REPORT.json -- symposium arguments …
    python -m tests.helpers.guarded REPORT.json --app -- global options …   (the app, under Pilot)

Every way Python reaches another machine goes through one of the socket calls patched here:
``connect`` and ``connect_ex`` (TCP, and UDP "connections"), ``sendto`` and ``sendmsg`` (UDP
datagrams with an address: a DNS query, a telemetry ping), name lookups (``getaddrinfo``,
``gethostbyname``, ``gethostbyname_ex``) and ``bind`` (a server listening beyond loopback).
Each is recorded; anything that is not loopback or a local socket is refused. The report
(rewritten after every attempt, so a process stopped by a signal leaves it too) lists the
attempts and the offline variables as the command saw them. Native code (llama.cpp, torch)
and child processes are below this guard: ``tests/helpers/netwall.py`` covers them.
"""

from __future__ import annotations

import atexit
import ipaddress
import json
import os
import socket
import sys

attempts: list[dict[str, object]] = []
REPORT: str | None = None
#: The variables that hold Hugging Face, transformers, vLLM and friends offline
#: (``tui.cli.parser.OFFLINE_ENV`` sets them; this list is the test's own).
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY",
                     "DO_NOT_TRACK", "VLLM_NO_USAGE_STATS", "GRADIO_ANALYTICS_ENABLED")
_INET = (socket.AF_INET, socket.AF_INET6)


def _loopback(host: object) -> bool:
    if host is None:  # getaddrinfo(None, port): this machine's own addresses, for a bind
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def write_report() -> None:
    if REPORT is None:
        return
    env = {k: os.environ.get(k) for k in OFFLINE_VARIABLES}
    with open(REPORT, "w", encoding="utf-8") as fh:
        json.dump({"attempts": attempts, "env": env}, fh)


def _guard(call: str, family: int, address: object) -> None:
    if family not in _INET:  # local (AF_UNIX) sockets, netlink: nothing leaves the machine
        return
    host = address[0] if isinstance(address, tuple) else address
    allowed = _loopback(host)
    attempts.append({"call": call, "host": str(host), "allowed": allowed})
    write_report()
    if not allowed:
        raise ConnectionRefusedError(f"blocked by the privacy test: {call} to {host}")


_real = {name: getattr(socket.socket, name) for name in ("connect", "connect_ex", "sendto", "sendmsg", "bind")}
_getaddrinfo, _gethostbyname, _gethostbyname_ex = socket.getaddrinfo, socket.gethostbyname, socket.gethostbyname_ex


def connect(self: socket.socket, address: object) -> None:
    _guard("connect", self.family, address)
    return _real["connect"](self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    _guard("connect_ex", self.family, address)
    return _real["connect_ex"](self, address)


def sendto(self: socket.socket, data: bytes, *args: object) -> int:
    _guard("sendto", self.family, args[-1])  # sendto(data, address) or sendto(data, flags, address)
    return _real["sendto"](self, data, *args)


def sendmsg(self: socket.socket, buffers: object, *args: object) -> int:
    if len(args) >= 3 and args[2] is not None:  # sendmsg(buffers, ancdata, flags, address)
        _guard("sendmsg", self.family, args[2])
    return _real["sendmsg"](self, buffers, *args)


def bind(self: socket.socket, address: object) -> None:
    if self.family in _INET and isinstance(address, tuple) and address[0] in ("", "0.0.0.0", "::"):
        _guard("bind", self.family, ("0.0.0.0",))  # every interface: reachable from other machines
    elif self.family in _INET:
        _guard("bind", self.family, address)
    return _real["bind"](self, address)


def getaddrinfo(host: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
    _guard("getaddrinfo", socket.AF_INET, (host, 0))
    return _getaddrinfo(host, *args, **kwargs)


def gethostbyname(host: str) -> str:
    _guard("gethostbyname", socket.AF_INET, (host, 0))
    return _gethostbyname(host)


def gethostbyname_ex(host: str):  # type: ignore[no-untyped-def]
    _guard("gethostbyname_ex", socket.AF_INET, (host, 0))
    return _gethostbyname_ex(host)


socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
socket.socket.sendmsg = sendmsg  # type: ignore[method-assign,assignment]
socket.socket.bind = bind  # type: ignore[method-assign]
socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
socket.gethostbyname = gethostbyname
socket.gethostbyname_ex = gethostbyname_ex  # type: ignore[assignment]

if __name__ == "__main__":
    REPORT = sys.argv[1]
    rest = sys.argv[2:]
    app = rest[0] == "--app"
    argv = rest[rest.index("--") + 1:]
    atexit.register(write_report)
    write_report()
    if app:
        from tests.helpers.app_session import main as app_main

        raise SystemExit(app_main(argv))
    from tui.cli.parser import main

    raise SystemExit(main(argv))
