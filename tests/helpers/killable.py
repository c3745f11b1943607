"""Start a process the way a terminal starts a foreground job, so that SIGINT reaches it.

Why this exists: a shell without job control (a script, ``nohup … &``, a CI step, the tool
that launches a benchmark in the background) starts a background command with SIGINT and
SIGQUIT *ignored*, and an ignored signal stays ignored across ``fork`` and ``exec``. CPython
installs its ``KeyboardInterrupt`` handler only over SIGINT's *default* disposition; an
inherited ``SIG_IGN`` is left alone (``signal.getsignal(SIGINT)`` reads ``SIG_IGN``). So a
crash benchmark started in the background sent SIGINT to debates that ignored it, and they
ran on to their end: ``subprocess.Popen``'s ``restore_signals`` resets only SIGPIPE, SIGXFZ
and SIGXFSZ, and ``preexec_fn`` is not safe in the harness's threads.

:func:`spawn` runs a two-line Python trampoline in the child that puts SIGINT back to its
default (and SIGHUP: ``nohup`` starts a command with SIGHUP ignored, which Symposium then rightly
keeps ignored, so a crash benchmark started under ``nohup`` saw all 36 of its SIGHUP "kills" run
on to the end, exit 0) and then ``exec``s the real command (same process id, so the returncode is the
command's), in a session and process group of its own, like a job a person started at a
prompt. :func:`send_to_group` signals that group, as a terminal's Ctrl-C does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

#: Run by a fresh interpreter in the child: SIGINT and SIGHUP to their defaults, then become ``argv``.
_DEFAULT_SIGINT_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGHUP, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """``argv`` started with SIGINT and SIGHUP at their default dispositions, in its own process group.

    ``popen`` goes to :class:`subprocess.Popen` (pipes, ``cwd``, ``env``, ``text``)."""
    return subprocess.Popen([sys.executable, "-c", _DEFAULT_SIGINT_THEN_EXEC, *argv], start_new_session=True, **popen)


def send_to_group(proc: subprocess.Popen[Any], sig: signal.Signals) -> bool:
    """Send ``sig`` to ``proc``'s process group, as a terminal sends Ctrl-C to its foreground
    job. Returns False, sending nothing, when the process has already exited and been reaped
    (its group id could belong to someone else by now)."""
    if proc.poll() is not None:
        return False
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:  # exited between the poll and the kill: nothing received it
        return False
    return True
