"""SIGTERM and SIGHUP end a headless command the way Ctrl-C does.

Why: Ctrl-C (SIGINT) reaches ``asyncio.run`` as a cancellation of its main task, so the debate
runner marks the debate ``interrupted`` and the ``Engines`` block closes every model on the way
out. SIGTERM (``timeout``, ``kill PID``, a service manager) and SIGHUP (the terminal or the SSH
session closed) would otherwise kill the process at once, leaving the debate ``running`` in the
journal and an engine's processes possibly behind. :func:`run_command` replaces ``asyncio.run``
for every headless command that runs a debate: both signals cancel the main task exactly as
Ctrl-C does, then :class:`Terminated` carries the signal up to the command line, which exits
with the conventional status 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP), so a
caller can tell which signal ended the command and that it ran its clean-up.

A signal whose disposition was inherited as ignored is left ignored: ``nohup symposium run …``
asks for SIGHUP to be ignored, and it is (as CPython leaves an ignored SIGINT alone).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

#: The signals that end a command as Ctrl-C does (SIGINT itself is asyncio's, left to it;
#: Windows has no SIGHUP).
TERMINATING: tuple[signal.Signals, ...] = tuple(
    sig for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if sig is not None)


class Terminated(BaseException):
    """The command was ended by ``signum`` after its clean-up ran (debate marked, models closed).

    A ``BaseException``, like ``KeyboardInterrupt``: no ``except Exception`` on the way up may
    swallow it and carry on as if nothing had happened."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"ended by {self.name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a command the signal ended."""
        return 128 + self.signum


@contextmanager
def on_signals(loop: asyncio.AbstractEventLoop, handler: Callable[[signal.Signals], None],
               signals: tuple[signal.Signals, ...] = TERMINATING) -> Iterator[list[signal.Signals]]:
    """Within the block, each of ``signals`` calls ``handler(sig)`` on ``loop`` (through
    ``loop.add_signal_handler``: at a safe point of the loop, never in the middle of a write).

    Yields the signals actually handled: one inherited as ignored is left ignored. On leaving,
    each handler is removed and the signal's previous disposition put back (asyncio's own
    removal would set the default one instead, which is not always what was there)."""
    installed: list[tuple[signal.Signals, Any]] = []
    try:
        for sig in signals:
            previous = signal.getsignal(sig)
            if previous == signal.SIG_IGN:
                log.info("%s is ignored by this process (nohup?): left ignored", sig.name)
                continue
            try:
                loop.add_signal_handler(sig, handler, sig)
            except (NotImplementedError, RuntimeError, ValueError) as exc:
                # Windows' loops have no signal handlers; only the main thread may set them (an
                # app run by a test harness in a thread): the signal keeps its default there.
                log.info("%s cannot be handled here: %s", sig.name, exc)
                continue
            installed.append((sig, previous))
        yield [sig for sig, _ in installed]
    finally:
        for sig, previous in reversed(installed):
            loop.remove_signal_handler(sig)
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)


async def cancelled_by_signals(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` as a task of its own; SIGTERM or SIGHUP cancels it (as asyncio cancels the
    main task on Ctrl-C), and once it has run its clean-up, :class:`Terminated` is raised in
    place of the cancellation. (A task of its own, not this one: a signal that comes as ``main``
    returns would otherwise leave a cancellation pending here and end the run with a bare
    ``CancelledError``; here ``main``'s result simply stands.)

    A second signal while the clean-up runs is logged and otherwise ignored: closing an engine
    half-way could leave its processes running (SIGKILL remains for a clean-up that hangs).
    Ctrl-C cancels this task, which cancels ``main`` with it, as before."""
    loop = asyncio.get_running_loop()
    work: asyncio.Task[T] = asyncio.ensure_future(main)
    received: list[signal.Signals] = []

    def cancel(sig: signal.Signals) -> None:
        if received:
            log.warning("%s received while closing after %s: the clean-up goes on", sig.name, received[0].name)
            return
        received.append(sig)
        log.info("%s received: cancelling, as Ctrl-C does", sig.name)
        work.cancel(f"{sig.name} received")

    with on_signals(loop, cancel):
        try:
            return await work
        except asyncio.CancelledError:
            if received and work.cancelled():
                raise Terminated(received[0]) from None
            raise


def run_command(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGTERM and SIGHUP cancel ``main`` as Ctrl-C does and then
    raise :class:`Terminated` (Ctrl-C still raises ``KeyboardInterrupt``, as under asyncio.run)."""
    return asyncio.run(cancelled_by_signals(main))
