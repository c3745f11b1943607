"""The loopback rule at its edges: which URLs count as this machine, and what a refusal says.

The everyday hosts are in test_openai_backend.py (``test_loopback_hosts``,
``test_other_hosts_are_not_loopback``). Here: the spellings that are the same host (a
trailing root dot, any case, IPv6 brackets), near misses that are other hosts, URLs that are
not HTTP(S) or have no host, and the exact text a user reads when a URL is refused.
"""

from __future__ import annotations

import pytest

from backends.loopback import check_server_url, is_loopback_host, url_host


@pytest.mark.parametrize("host", ["localhost.", "LOCALHOST.", "127.0.0.1.", "[::1]", "[::ffff:127.0.0.1]"])
def test_the_same_loopback_host_spelled_fully_qualified_or_bracketed_is_loopback(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", [f"{pre}{name}{post}" for name in ("localhost", "LOCALHOST", "127.0.0.1", "::1")
                                  for pre, post in (("x", ""), ("", "x"), ("X", ""), ("", "X"), (".", ""), ("", "-"))])
def test_a_loopback_name_with_one_character_more_is_another_host(host: str) -> None:
    """Only the exact names count: ``localhostx`` or ``127.0.0.1X`` may resolve anywhere."""
    assert not is_loopback_host(host)


@pytest.mark.parametrize(("url", "host"), [
    ("http://LocalHost:8080/v1", "localhost"),
    ("https://[::1]:8443/v1", "::1"),
    ("http://Example.COM/v1", "example.com"),
    ("/v1/chat/completions", ""),
])
def test_url_host_is_the_lower_cased_host_without_brackets(url: str, host: str) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/v1", "https://127.0.0.1:8443/v1", "http://[::1]:8080/v1",
                                 "http://localhost/v1"])
def test_http_and_https_urls_on_this_machine_are_accepted(url: str) -> None:
    check_server_url(url, allow_remote=False)


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:8080/v1", "127.0.0.1:8080", "http:///v1", "https://:8443/v1",
                                 "file:///tmp/socket"])
def test_a_url_that_is_not_http_with_a_host_is_refused_with_an_example(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        check_server_url(url, allow_remote=True)
    assert str(refused.value) == (f"base_url {url!r} must be an http:// or https:// URL with a host, "
                                  "e.g. http://127.0.0.1:8080/v1")


def test_a_remote_url_is_refused_saying_why_and_how_to_allow_it() -> None:
    url = "http://10.1.2.3:8000/v1"
    with pytest.raises(ValueError) as refused:
        check_server_url(url, allow_remote=False)
    assert str(refused.value) == (
        f"base_url {url!r} is not on this machine (only localhost, 127.0.0.0/8 and ::1 are); debate text would "
        "leave it. Add allow_remote = true to this source if that is intended"
    )
    check_server_url(url, allow_remote=True)  # asked for: accepted
