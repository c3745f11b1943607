"""Run a command in its own network namespace and record every network syscall it makes.

The Python-level guard (``tests/helpers/guarded.py``) sees only Python's ``connect``. This
wall sits below it: ``unshare -n`` gives the command a network namespace holding loopback
alone (nothing can leave, whatever the code), and ``strace -f`` records every ``connect``,
``sendto`` and ``sendmsg`` — from native libraries (llama.cpp, torch) and from every child
process — with its address. The tests read the record: no address off the machine may
appear. Needs root (to create the namespace) and strace; the tests skip with the reason
where either is missing.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.paths import REPO

#: strace -f's line head: "1234 connect(" (one or more spaces, by version) or "[pid 1234] connect(".
_HEAD = re.compile(r"^\s*(?:\[pid\s+)?(\d+)\]?\s+(\w+)\(")
_ADDRESS = re.compile(r'sa_family=(AF_INET6?).*?(?:sin6?_addr=inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6?, "([^"]+)")')


@dataclass(frozen=True)
class Attempt:
    pid: str
    syscall: str
    family: str
    host: str

    @property
    def off_machine(self) -> bool:
        return not ipaddress.ip_address(self.host).is_loopback


@functools.cache
def unavailable() -> str | None:
    """Why the wall cannot be built here, or ``None`` (asked once per process)."""
    if shutil.which("unshare") is None or shutil.which("strace") is None:
        return "needs util-linux's unshare and strace"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"cannot create a network namespace here: {probe.stderr.decode(errors='replace').strip()}"
    return None


def run_walled(argv: list[str], trace: Path, *, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
               timeout: int = 900) -> tuple[subprocess.CompletedProcess[str], list[Attempt]]:
    """``argv`` run behind the wall (loopback up, nothing else); returns its result and every
    inet address it tried to reach. ``unset``: prefixes of variables to leave out."""
    inner = ("ip link set lo up 2>/dev/null || true; exec strace -f -qq --seccomp-bpf -e signal=none "
             f"-e trace=connect,sendto,sendmsg -o {trace} \"$@\"")
    run = subprocess.run(["unshare", "-n", "sh", "-c", inner, "wall", *argv], cwd=REPO,
                         env={**{k: v for k, v in os.environ.items() if not k.startswith(unset or ("\0",))}, **(env or {})},
                         capture_output=True, text=True, timeout=timeout, check=False)
    attempts = []
    for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
        m, head = _ADDRESS.search(line), _HEAD.match(line)
        if m:
            if head is None:
                raise ValueError(f"{trace}: an strace line this parser does not know: {line!r}")
            attempts.append(Attempt(head.group(1), head.group(2), m.group(1), m.group(2) or m.group(3)))
    return run, attempts
