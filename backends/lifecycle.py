"""Loading, sharing and shutting down the models of one debate, command or app session.

Every interface (the app, the command line, the headless runs, the diagnosis benchmark) and the
benchmarks load their models through :class:`Engines` and nothing else::

    async with Engines(registry, on_event=show) as engines:
        backends = await engines.load(["smollm2-135m", "gemma3-270m"])
        ...                                 # a debate, a chat, a health check
    # every backend loaded above is closed here, exactly once, however the block ended

Why one home: a model is an engine with a life (a llama.cpp context in memory, an HTTP client,
a vLLM engine with processes of its own), and a place that loads one and closes it in its own
way misses some path out. Here:

- each distinct model is loaded once and shared by everyone who asks for it (an entry asked
  for twice, under two roles, is one backend);
- loading runs in a worker thread, never on the event loop (llama.cpp takes seconds, a vLLM
  engine minutes), announcing each model as :class:`Loading`, then every ``tick_s`` while it
  loads :class:`StillLoading` (the stage the backend reports and the seconds spent), then
  :class:`Loaded` and, where debate text leaves the machine, :class:`PrivacyWarning`, for the
  app's status line or stderr;
- a model that cannot be loaded is a :class:`BackendError` that names it, whatever the
  library underneath raised (a backend already names its model; an ``OSError`` from a loader
  does not);
- on leaving the block (the end, an error, Ctrl-C, the app quitting) every backend is closed
  once, newest first, each close attempted even if another fails and carried to its end even
  if cancelled again meanwhile; a load still running in its thread when the block was cancelled
  is waited for and its backend closed too, so no engine process outlives the command.

Roles stay out of this module: backends know nothing of debates (ARCHITECTURE.md), so engines
are keyed by model, and which role plays on which model is the protocols' business
(:func:`protocols.core.agents.agents_for`). Both sit below the interfaces, which use them in this
order and call nothing back up.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

from .base import Backend, BackendError, BackendUnavailable
from .factory import OnProgress, create_backend
from .gguf_meta import GGUFError
from .kv_memory import MemoryNeed, check_memory, memory_need
from .registry import ModelEntry, Registry

log = logging.getLogger(__name__)
T = TypeVar("T")
#: How often a load still under way is announced (the app's status line counts the seconds).
TICK_S = 1.0


@dataclass(frozen=True)
class Loading:
    """A model starts loading (``index`` of ``total`` in this call)."""

    model_id: str
    name: str
    backend: str
    index: int
    total: int

    @property
    def message(self) -> str:
        return f"loading {self.name} …"


@dataclass(frozen=True)
class StillLoading:
    """A model has been loading for ``seconds``; ``stage`` is what its backend last reported
    (e.g. vLLM starting its engine), if anything."""

    model_id: str
    name: str
    stage: str | None
    seconds: float

    @property
    def message(self) -> str:
        return f"loading {self.name}{': ' + self.stage if self.stage else ''} … {self.seconds:.0f} s"


@dataclass(frozen=True)
class Loaded:
    """A model is ready, after ``seconds``."""

    model_id: str
    name: str
    seconds: float

    @property
    def message(self) -> str:
        return f"{self.name} loaded in {self.seconds:.1f} s"


@dataclass(frozen=True)
class PrivacyWarning:
    """The model's backend sends debate text off this machine; the person must be told."""

    model_id: str
    message: str


LoadEvent = Loading | StillLoading | Loaded | PrivacyWarning


def _log_event(event: LoadEvent) -> None:
    """Where no interface listens, the diagnostic log still hears (a warning never goes unsaid)."""
    if isinstance(event, PrivacyWarning):
        log.warning("%s: %s", event.model_id, event.message)
    else:
        log.info("%s", event.message)


def _named(entry: ModelEntry, exc: BaseException) -> BackendError:
    """A load failure as a :class:`BackendError` that names the model (its class kept when it is
    one already, so ``BackendUnavailable`` stays telling)."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, BackendError):
        if entry.id in text:
            return exc
        try:
            return type(exc)(f"model {entry.id!r}: {text}")
        except TypeError:  # a subclass with a constructor of its own
            return BackendError(f"model {entry.id!r}: {text}")
    return BackendError(f"model {entry.id!r} ({entry.backend}) could not be loaded: {type(exc).__name__}: {text}")


class Engines:
    """The backends one debate, command or app session loaded; an async context manager that
    closes every one of them exactly once when it exits.

    ``create(entry, progress)`` builds a backend, blocking (run in a worker thread), and may
    report the stages of its load to ``progress``; by default the factory's
    :func:`~backends.factory.create_backend`, looked up when called so that a test can put a
    scripted backend in its place. ``on_event`` hears each :data:`LoadEvent`, on the event loop.
    """

    def __init__(self, registry: Registry | None = None, *,
                 on_event: Callable[[LoadEvent], None] | None = None,
                 create: Callable[[ModelEntry, OnProgress], Backend] | None = None,
                 tick_s: float = TICK_S) -> None:
        self.registry = registry
        self._on_event = on_event or _log_event
        self._create = create
        self._tick_s = tick_s
        self._loaded: list[tuple[ModelEntry, Backend]] = []  # in load order
        #: Loads whose caller was cancelled while the thread went on: closed on exit.
        self._orphans: list[tuple[ModelEntry, asyncio.Future[Backend]]] = []
        self._lock = asyncio.Lock()
        self._closed = False

    async def __aenter__(self) -> Engines:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose(raising=kind is None)

    async def load(self, model_ids: Iterable[str]) -> dict[str, Backend]:
        """Model id → its backend, each distinct model loaded once (ids already loaded by this
        :class:`Engines` are shared, not loaded again). Every id is looked up in the registry
        before anything loads, so a typo fails at once, not after minutes of loading; and the
        models still to load must fit in the memory free now (:func:`check_memory_for`; an id
        given once per role counts that many agents), else
        :class:`~backends.kv_memory.NotEnoughMemory` says what
        to change before anything loads."""
        if self.registry is None:
            raise ValueError("Engines.load needs a registry; use load_entry for a lone entry")
        asked = list(model_ids)
        wanted = list(dict.fromkeys(asked))
        entries = [self.registry.get(model_id) for model_id in wanted]
        new = [e for e in entries if self._find(e) is None]
        await asyncio.to_thread(check_memory_for, [(e, asked.count(e.id)) for e in new])
        loaded = {}
        for entry in entries:
            index = new.index(entry) + 1 if entry in new else 0
            loaded[entry.id] = await self.load_entry(entry, index=index, total=len(new))
        return loaded

    async def load_entry(self, entry: ModelEntry, *, index: int = 1, total: int = 1) -> Backend:
        """The backend of ``entry``: the one already loaded for an equal entry, else a new one
        loaded in a worker thread."""
        async with self._lock:  # one load at a time: two callers asking for one model share it
            if self._closed:
                raise BackendError(f"model {entry.id!r}: these engines are closed; load before the end of the block")
            existing = self._find(entry)
            if existing is not None:
                return existing
            self._on_event(Loading(entry.id, entry.name, entry.backend, index, total))
            started = time.perf_counter()
            create = self._create or create_backend
            stage: list[str | None] = [None]

            def progress(message: str) -> None:  # from the loading thread: read on the loop at the next tick
                stage[0] = message

            future = asyncio.get_running_loop().run_in_executor(None, create, entry, progress)
            try:
                while not future.done():  # asyncio.wait never cancels the load, only stops waiting
                    await asyncio.wait([future], timeout=self._tick_s)
                    if not future.done():
                        self._on_event(StillLoading(entry.id, entry.name, stage[0], time.perf_counter() - started))
                backend = future.result()
            except asyncio.CancelledError:
                # The thread cannot be stopped; what it builds is closed on exit (see aclose).
                self._orphans.append((entry, future))
                raise
            except Exception as exc:  # noqa: BLE001 - any loader's failure becomes one named BackendError
                if not future.done():  # the listener failed, not the load: what it builds is closed on exit
                    self._orphans.append((entry, future))
                    raise
                error = _named(entry, exc)
                raise error from (None if error is exc else exc)
            self._loaded.append((entry, backend))
            seconds = time.perf_counter() - started
            log.info("loaded %s (%s) in %.1f s", entry.id, entry.backend, seconds)
            self._on_event(Loaded(entry.id, entry.name, seconds))
            if backend.privacy_warning:  # a server off this machine: the user must know
                self._on_event(PrivacyWarning(entry.id, backend.privacy_warning))
            return backend

    def _find(self, entry: ModelEntry) -> Backend | None:
        return next((backend for e, backend in self._loaded if e == entry), None)

    async def aclose(self, *, raising: bool = True) -> None:
        """Close every backend once, newest first; later calls do nothing.

        Closing is not cut short: a cancellation that arrives meanwhile (a second Ctrl-C, the
        app's shutdown after its quit, ``asyncio.run`` tidying up) is held until every backend
        is closed, then raised, because an engine closed half-way can leave its processes
        running. A model still loading when its caller was cancelled is waited for here and
        closed (its thread could not be stopped, and the process could not exit before it ended
        anyway). A close that fails is logged and the others still run; the first failure is
        raised afterwards (a :class:`BackendError` naming the model) when ``raising``, which the
        context manager turns off while another error is on its way out, so as not to mask it.
        """
        if self._closed:
            return
        self._closed = True
        failures: list[BaseException] = []
        interrupt: BaseException | None = None
        for entry, future in self._orphans:
            try:
                backend, held = await _to_the_end(future)
            except Exception:  # noqa: BLE001 - the load failed: nothing to close
                log.info("model %s failed to load after its caller left", entry.id, exc_info=True)
                continue
            interrupt = interrupt or held
            self._loaded.append((entry, backend))
        self._orphans.clear()
        for entry, backend in reversed(self._loaded):
            try:
                _, held = await _to_the_end(backend.aclose())
                interrupt = interrupt or held
                log.info("closed %s", entry.id)
            except Exception as exc:  # noqa: BLE001 - every backend gets its close; the first failure is raised below
                log.error("closing model %s failed: %s", entry.id, exc, exc_info=True)
                failures.append(exc if isinstance(exc, BackendError)
                                else BackendError(f"model {entry.id!r}: closing failed: {type(exc).__name__}: {exc}"))
        self._loaded.clear()
        if interrupt is not None:  # the cancellation held back while closing goes on up now
            raise interrupt
        if failures and raising:
            raise failures[0]


def check_memory_for(entries: list[tuple[ModelEntry, int]], available: int | None = None) -> None:
    """:func:`~backends.kv_memory.check_memory` for llama.cpp models about to load, each with
    how many agents will use it. Models it cannot size are left to their own load to judge:
    other backends (a server's memory is not this machine's, transformers reads no GGUF), files
    not on disk or not GGUF, and models offloaded to a discrete GPU, whose memory is not RAM."""
    needs: list[MemoryNeed] = []
    for entry, agents in entries:
        if entry.backend != "llamacpp" or (entry.gpu_layers != 0 and _discrete_gpu()):
            continue
        try:
            from .sources import resolve_path

            path = resolve_path(entry)
            needs.append(memory_need(entry.id, path, context=entry.context_length, agents=agents,
                                     cache_type=entry.kv_cache_type))
        except (BackendUnavailable, GGUFError, OSError, ValueError) as exc:
            log.info("memory of %s not estimated: %s", entry.id, exc)
    check_memory(needs, available)


def _discrete_gpu() -> bool:
    """Whether llama.cpp offloads to a GPU with memory of its own (CUDA, Vulkan…; not Apple's
    unified memory, which is the RAM the check counts)."""
    if sys.platform == "darwin":
        return False
    from .llamacpp.native import supports_gpu_offload

    return supports_gpu_offload()


async def _to_the_end(work: Awaitable[T]) -> tuple[T, asyncio.CancelledError | None]:
    """``work``'s result, awaited to its end even if this task is cancelled meanwhile (once or
    again), and the cancellation that was held back, to raise once closing is done."""
    inner = asyncio.ensure_future(work)
    held: asyncio.CancelledError | None = None
    while True:
        try:
            return await asyncio.shield(inner), held
        except asyncio.CancelledError as exc:
            if inner.cancelled():  # the work itself was cancelled, not just this wait
                raise
            held = exc
