"""Run a command in its own network namespace and record every address it sends to or connects to.

The Python-level guard (``tests/helpers/guarded.py``) sees only Python's socket calls. This wall
sits below it: ``unshare -n`` gives the command a network namespace holding loopback alone
(nothing can leave by IP, whatever the code), and ``strace -f`` records every ``connect``,
``sendto``, ``sendmsg`` and ``sendmmsg`` — from native libraries (llama.cpp, torch, vLLM's
engine) and from every child process — with the address it names, in every socket family.

A network namespace walls off IP, not everything: a Unix socket with a path in the file system
(a resolver's such as nscd's or systemd-resolved's, a proxy daemon's, D-Bus) reaches a daemon of
the host, which can carry a lookup or a request out; AF_VSOCK reaches the hypervisor. So an
attempt is *off the wall* (:attr:`Attempt.off_machine`) when it is:

* an IP address that is not loopback;
* any message to port 53 (a name lookup: on the host a local resolver would carry it out);
* a Unix socket path outside the command's own folders (the test's ``tmp_path`` and the
  ``TMPDIR`` the wall gives the command there) that answered: a connect that failed reached no
  one (glibc asks for nscd's socket on every user or host lookup, and gets ENOENT where no nscd
  runs; without it, a host name goes to port 53, caught above). Abstract Unix sockets (``@name``)
  and netlink belong to the namespace and the kernel, so they stay inside;
* any other family (AF_PACKET, AF_VSOCK, Bluetooth …).

What the trace cannot see: requests made through ``io_uring`` (no connect syscall), and memory
shared with a process outside the namespace; Symposium uses neither. Needs root (to create the
namespace) and strace; the tests skip with the reason where either is missing, and fail instead
under ``CI=true`` or ``SYMPOSIUM_REQUIRE_NETWORK_WALL=1`` (:func:`required`).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.paths import REPO

#: The syscalls that name an address to reach (sendmsg's msg_name, each of sendmmsg's headers).
TRACED = ("connect", "sendto", "sendmsg", "sendmmsg")
#: strace -f's line head: "1234 connect(" (one or more spaces, by version) or "[pid 1234] connect(".
_HEAD = re.compile(r"^\s*(?:\[pid\s+)?(\d+)\]?\s+(\w+)\(")
#: One socket address as strace prints it: its family and the rest of its braces.
_SOCKADDR = re.compile(r"sa_family=(AF_\w+|\d+)((?:[^{}]|\{[^{}]*\})*)\}")
_INET_HOST = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6?, "([^"]+)"')
_PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
_UNIX_PATH = re.compile(r'sun_path=(@?)"((?:[^"\\]|\\.)*)"')
#: Families that stay inside the namespace or the kernel.
_INSIDE = ("AF_NETLINK",)


@dataclass(frozen=True)
class Attempt:
    """One address a traced process named: ``host`` is the IP or the Unix socket's path."""

    pid: str
    syscall: str
    family: str
    host: str
    port: int | None = None
    #: Why it leaves the wall, or "" when it does not.
    leaves: str = ""

    @property
    def off_machine(self) -> bool:
        return bool(self.leaves)


def classify(family: str, host: str, port: int | None, abstract: bool, own: tuple[Path, ...], answered: bool) -> str:
    """Why an address leaves the wall ("" when it does not); see the module's docstring.
    ``answered``: the call succeeded (or is still under way when the trace ends)."""
    if family in ("AF_INET", "AF_INET6"):
        if port == 53:
            return "a name lookup (port 53)"
        address = ipaddress.ip_address(host)
        mapped = getattr(address, "ipv4_mapped", None)
        return "" if address.is_loopback or (mapped is not None and mapped.is_loopback) else "an address off the machine"
    if family == "AF_UNIX":
        if abstract or not host or not answered:
            return ""
        path = Path(host)
        return "" if any(path == d or d in path.parents for d in own) else "a Unix socket of the host, outside the wall"
    if family in _INSIDE:
        return ""
    return f"a socket of family {family}"


#: A call's result at the end of its line: "= 0", "= -1 ENOENT (…)", "= ? <unavailable>".
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)(?:\s+(E[A-Z]+))?")
#: A call cut in two by another process's line (strace -f): its address is in the first part.
_UNFINISHED = "<unfinished ...>"
_RESUMED = re.compile(r"^\s*(?:\[pid\s+)?(\d+)\]?\s+<\.\.\. (\w+) resumed>")


def _answered(line: str) -> bool:
    """Whether the call on ``line`` reached a listener: it returned ≥ 0, or is under way."""
    result = _RESULT.search(line)
    if result is None:
        return True  # unfinished (or cut short by the trace's end): assume the worst
    value, error = result.group(1), result.group(2)
    return value == "?" or not value.startswith("-") or error == "EINPROGRESS"


def parse(trace: Path, own: tuple[Path, ...]) -> list[Attempt]:
    """Every address named in an strace record (``-f``, the syscalls of :data:`TRACED`)."""
    attempts: list[Attempt] = []
    pending: dict[str, list[int]] = {}  # pid -> indexes of its attempts waiting for their result
    for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
        head = _HEAD.match(line)
        resumed = _RESUMED.match(line)
        if resumed is not None:
            answered = _answered(line)
            for i in pending.pop(resumed.group(1), []):
                a = attempts[i]
                attempts[i] = Attempt(a.pid, a.syscall, a.family, a.host, a.port, a.leaves if answered else
                                      ("" if a.family == "AF_UNIX" else a.leaves))
            continue
        found = list(_SOCKADDR.finditer(line))
        if not found:
            continue
        if head is None:
            raise ValueError(f"{trace}: an strace line this parser does not know: {line!r}")
        answered = _answered(line)
        for m in found:
            family, body = m.group(1), m.group(2)
            port_match = _PORT.search(body)
            port = int(port_match.group(1)) if port_match else None
            host, abstract = "", False
            if family in ("AF_INET", "AF_INET6"):
                inet = _INET_HOST.search(body)
                if inet is None:
                    raise ValueError(f"{trace}: an inet address this parser does not know: {line!r}")
                host = inet.group(1) or inet.group(2)
            elif family == "AF_UNIX":
                unix = _UNIX_PATH.search(body)
                if unix is not None:
                    abstract, host = unix.group(1) == "@", unix.group(2)
            if _UNFINISHED in line:
                pending.setdefault(head.group(1), []).append(len(attempts))
            attempts.append(Attempt(head.group(1), head.group(2), family, host, port,
                                    classify(family, host, port, abstract, own, answered)))
    return attempts


@functools.cache
def unavailable() -> str | None:
    """Why the wall cannot be built here, or ``None`` (asked once per process)."""
    if shutil.which("unshare") is None or shutil.which("strace") is None:
        return "needs util-linux's unshare and strace"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"cannot create a network namespace here: {probe.stderr.decode(errors='replace').strip()}"
    return None


def required() -> bool:
    """Whether a wall that cannot be built is a failure rather than a skip: in CI (``CI=true``,
    as CI services set it) and where ``SYMPOSIUM_REQUIRE_NETWORK_WALL=1`` says so."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("SYMPOSIUM_REQUIRE_NETWORK_WALL") == "1"


def run_walled(argv: list[str], trace: Path, *, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
               timeout: int = 900) -> tuple[subprocess.CompletedProcess[str], list[Attempt]]:
    """``argv`` run behind the wall (loopback up, nothing else); returns its result and every
    address it named. ``unset``: prefixes of variables to leave out. The command's temporary
    files (``TMPDIR``) go to a fresh folder of its own, which, with ``trace``'s folder, counts as
    the command's for Unix sockets (a short path: a Unix socket's path holds 107 bytes, and vLLM
    makes its engine's sockets there)."""
    own = trace.parent
    tmp = Path(tempfile.mkdtemp(prefix="wall-"))
    inner = ("ip link set lo up 2>/dev/null || true; exec strace -f -qq --seccomp-bpf -e signal=none "
             f"-e trace={','.join(TRACED)} -o {trace} \"$@\"")
    base = {k: v for k, v in os.environ.items() if not k.startswith(unset or ("\0",))}
    try:
        run = subprocess.run(["unshare", "-n", "sh", "-c", inner, "wall", *argv], cwd=REPO,
                             env={**base, "TMPDIR": str(tmp), **(env or {})},
                             capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return run, parse(trace, (own.resolve(), own, tmp.resolve(), tmp))
