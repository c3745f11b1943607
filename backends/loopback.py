"""Is a server URL on this machine? Decided from the URL alone, never by resolving a name.

Users' cases are sensitive, so an HTTP backend talks to a host other than this machine only
when its ``models.toml`` entry says ``allow_remote = true``. Resolving a hostname to find out
would itself send the name to a DNS server and could be spoofed, so only ``localhost`` and
literal loopback addresses (``127.0.0.0/8``, ``::1``) count as local.
"""

from __future__ import annotations

import ipaddress
import pwd
import sys
from pathlib import Path
from urllib.parse import urlsplit


def url_host(url: str) -> str:
    """The host part of ``url`` (brackets of an IPv6 literal removed), lower-cased."""
    return (urlsplit(url).hostname or "").lower()


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP literal (IPv4-mapped IPv6 included)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def check_server_url(url: str, *, allow_remote: bool) -> None:
    """Raise ``ValueError`` (with the fix) if ``url`` is unusable or leaves the machine unasked."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url {url!r} must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8080/v1")
    if not allow_remote and not is_loopback_host(parts.hostname):
        raise ValueError(
            f"base_url {url!r} is not on this machine (only localhost, 127.0.0.0/8 and ::1 are); "
            "debate text would leave it. Add allow_remote = true to this source if that is intended"
        )


#: The kernel's tables of TCP sockets (Linux), IPv4 and IPv6; a row's state 0A is LISTEN.
_PROC_TCP = (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16))
_LISTEN = "0A"


def listener_uids(host: str, port: int) -> set[int] | None:
    """The accounts (uids) whose sockets listen where a connection to ``host:port`` may land:
    ``host``'s own address (for ``localhost``: 127.0.0.1 and ::1) or a wildcard one. ``None``
    where the system does not tell (no ``/proc/net/tcp``: macOS, BSD); an empty set when nothing
    listens.

    Why: any account may bind a free loopback port. One that takes a configured server's port
    first receives every message sent there, however local the address; only the owner of the
    listening socket tells the user's server from another account's."""
    targets = _addresses(host)
    found: set[int] | None = None
    for table, size in _PROC_TCP:
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        found = found or set()
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or fields[3] != _LISTEN:
                continue
            address, _, port_hex = fields[1].partition(":")
            if int(port_hex, 16) != port:
                continue
            ip = _proc_address(address, size)
            mapped = getattr(ip, "ipv4_mapped", None)
            if ip.is_unspecified or ip in targets or (mapped is not None and (mapped in targets or mapped.is_unspecified)):
                found.add(int(fields[7]))
    return found


def _addresses(host: str) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
    address = ipaddress.ip_address(host)
    mapped = getattr(address, "ipv4_mapped", None)
    return {address, mapped} if mapped is not None else {address}


def _proc_address(text: str, size: int) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as ``/proc/net/tcp*`` prints it: 32-bit words in the machine's byte order."""
    raw = b"".join(int(text[i:i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(text), 8))
    return ipaddress.ip_address(raw[:size])


def account_name(uid: int) -> str:
    """``uid``'s account name ("ollama"), or the number where it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
