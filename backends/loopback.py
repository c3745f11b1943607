"""Is a server URL on this machine? Decided from the URL alone, never by resolving a name.

Users' cases are sensitive, so an HTTP backend talks to a host other than this machine only
when its ``models.toml`` entry says ``allow_remote = true``. Resolving a hostname to find out
would itself send the name to a DNS server and could be spoofed, so only ``localhost`` and
literal loopback addresses (``127.0.0.0/8``, ``::1``) count as local.
"""

from __future__ import annotations

import ipaddress
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
