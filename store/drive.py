"""The run-and-journal loop: every event of a protocol run goes to the journal first, then to
whoever shows it.

Below the interfaces: the app, ``symposium chat``/``run``/``resume``, the benchmarks and the
tests all drive a run through :func:`drive`, so a debate is journalled identically whoever
started it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from backends.base import BackendError
from protocols.core.events import DebateFinished, DebateStarted, Event, ModelCalled
from protocols.core.replies import recording
from store import provenance
from store.journal import Journal
from store.logcontext import current_debate

EventSink = Callable[[Event], None]
log = logging.getLogger(__name__)


async def drive(events: AsyncIterator[Event], journal: Journal, *sinks: EventSink,
                progress: provenance.Progress | None = None) -> DebateFinished | None:
    """Record and show each event; returns the final event (``None`` if the run was cut off).

    A new debate's provenance (:mod:`store.provenance`) is journalled right after its start,
    before its first turn: model files are hashed in a worker thread (once per file: the hashes
    are cached), and ``progress`` hears how far, on the event loop's thread.

    Every reply a model (or the person) gave since the last event is journalled before the
    next event (:mod:`protocols.core.replies`), so ``symposium resume`` answers those calls from the
    journal rather than ask again. If the run is cancelled (Ctrl-C, SIGTERM, SIGHUP, the TUI
    closing) the debate is marked ``interrupted``, which keeps every finished turn and lets
    ``symposium resume`` pick it up. A backend error ends the debate as ``failed`` with the
    error as its stop reason, then propagates.
    """
    debate_id: str | None = None
    final: DebateFinished | None = None
    with recording() as replies:

        def keep_replies() -> None:
            """The replies received since the last event, before anything else is written: a
            resumed run is answered from them even when the event they led to was cut off."""
            if debate_id is not None and replies:
                journal.record_replies(debate_id, replies)
            replies.clear()

        try:
            async for event in events:
                # Any event names its debate: a resumed run starts with DebateResumed, not DebateStarted,
                # and a resume cut off in turn must be marked interrupted as well.
                if debate_id is None or isinstance(event, DebateStarted):
                    debate_id = event.debate_id
                    current_debate.set(debate_id)
                if isinstance(event, DebateStarted):
                    log.info("%s started: %s", event.protocol, ", ".join(f"{p.role}={p.model_id}" for p in event.participants))
                elif isinstance(event, DebateFinished):
                    log.info("finished: %s (%s)", event.status, event.stop_reason)
                keep_replies()
                journal.record(event)
                if isinstance(event, DebateStarted):
                    await _record_provenance(journal, event, progress)
                for sink in sinks:
                    sink(event)
                if isinstance(event, DebateFinished):
                    final = event
        except BackendError as exc:
            log.error("backend error: %s", exc)
            if debate_id is not None:
                keep_replies()
                failed_call = getattr(exc, "failed_call", None)  # set by Agent.ask: keep the failed call
                if failed_call is not None:
                    journal.record(ModelCalled(debate_id, failed_call))
                failed = DebateFinished(debate_id, "failed", str(exc), {})
                journal.record(failed)
                for sink in sinks:
                    sink(failed)
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            log.warning("interrupted (resumable)")
            if debate_id is not None:
                keep_replies()
                journal.mark_interrupted(debate_id, "interrupted before the end (resumable)")
            raise
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:  # let the protocol's own clean-up run now, not at garbage collection
                await aclose()
    return final


async def _record_provenance(journal: Journal, event: DebateStarted, progress: provenance.Progress | None) -> None:
    """Collect the debate's provenance in a worker thread (hashing a multi-GB model file takes
    seconds the first time) and journal it; the UI's ``progress`` is called on this loop."""
    loop = asyncio.get_running_loop()

    def report(message: str) -> None:
        if progress is not None:
            loop.call_soon_threadsafe(progress, message)

    try:
        found = await asyncio.to_thread(provenance.collect, event, report)
    except OSError as exc:  # a model file unreadable now: say so in the record rather than fail the debate
        log.warning("provenance: %s", exc)
        found = {"error": f"could not read a model file to hash it ({exc})"}
    journal.record_provenance(event.debate_id, found)
