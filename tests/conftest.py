"""Shared fixtures: the real bundled models, loaded once per test session, and isolated paths.

Nothing here is faked: the backends are llama.cpp with the bundled GGUF files (in process, or
behind a real ``llama_cpp.server`` on loopback, or loaded by transformers), journals are real
SQLite files in temporary folders.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import platformdirs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import core as hypothesis_core

from backends import load_watch
from backends.base import Backend
from backends.llamacpp import LlamaCppBackend
from backends.openai_compat import OpenAIBackend
from backends.registry import ModelEntry, Registry, load_registry
from backends.sources import resolve_path
from store.journal import Journal
from tests.helpers.browser import WHY as BROWSER_MISSING
from tests.helpers.servers import RunningServer, server_entry
from tests.helpers.servers import llama_server as llama_server_process

#: The folders a user's own Symposium reads and writes; no test may touch them.
USER_DIRS = {
    "config": Path(platformdirs.user_config_dir("symposium")),
    "data": Path(platformdirs.user_data_dir("symposium")),
    "documents": Path(platformdirs.user_documents_dir()) / "symposium",
}


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis with a fresh, printed seed on every run, CI included.

    Under ``CI=true`` Hypothesis loads its ``ci`` profile, which derandomizes: the same
    strings every run, so the fuzzing never reaches further. Here every run draws a new seed
    (or takes ``SYMPOSIUM_FUZZ_SEED``, or ``--hypothesis-seed``) and prints it in the header,
    so a failure is replayed with ``SYMPOSIUM_FUZZ_SEED=<seed>``. Under pytest-xdist the
    workers take the controller's seed (:func:`pytest_configure_node`), so the one printed
    seed replays every worker's strings.
    """
    settings.register_profile(
        "symposium", deadline=None, database=None, derandomize=False, print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile("symposium")
    global FUZZ_SEED
    forced = config.getoption("hypothesis_seed", default=None)
    if forced is None:
        from_controller = getattr(config, "workerinput", {}).get("fuzz_seed")
        FUZZ_SEED = int(from_controller or os.environ.get("SYMPOSIUM_FUZZ_SEED")
                        or random.SystemRandom().randrange(2**32))
        hypothesis_core.global_force_seed = FUZZ_SEED
    else:
        FUZZ_SEED = int(forced)


FUZZ_SEED: int | None = None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # type: ignore[no-untyped-def]  # pytest-xdist's hook
    """Hand the controller's fuzzing seed to each xdist worker."""
    node.workerinput["fuzz_seed"] = FUZZ_SEED


#: The OS-level privacy checks (network namespace + syscall trace); they need root and strace.
NETWORK_WALL_TESTS = "tests/guarantees/test_network_wall.py"


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    """Say loudly, at the end of the run (where CI's log is read), when the network wall was
    skipped: a skip among hundreds of passes is easy to miss, and it means nothing below Python
    (llama.cpp, torch, child processes, UDP) was checked for network use on this machine.

    Likewise a vLLM test that skipped: ``make test-vllm`` is the one place these tests are meant
    to run, and in CI a skip there must not pass for a run; and the tests that open a page in
    Chromium (``needs_chromium``), skipped where it is not installed."""
    vllm_skipped = [r for r in terminalreporter.stats.get("skipped", []) if "vllm" in getattr(r, "keywords", {})]
    if vllm_skipped:
        longrepr = vllm_skipped[0].longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        terminalreporter.write_line(f"!!! {len(vllm_skipped)} vLLM TEST(S) SKIPPED: {reason}", red=True, bold=True)
    browser_skipped = [r for r in terminalreporter.stats.get("skipped", [])
                       if isinstance(r.longrepr, tuple) and r.longrepr[2].removeprefix("Skipped: ") == BROWSER_MISSING]
    if browser_skipped:
        terminalreporter.write_line(f"!!! {len(browser_skipped)} BROWSER TEST(S) SKIPPED: {BROWSER_MISSING}; the HTML report was "
                                    "not opened in a browser (SYMPOSIUM_REQUIRE_BROWSER=1 makes this a failure)",
                                    red=True, bold=True)
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.nodeid.startswith(NETWORK_WALL_TESTS)]
    if not skipped:
        return
    longrepr = skipped[0].longrepr
    reason = (longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)).removeprefix("Skipped: ")
    terminalreporter.section("PRIVACY: THE NETWORK WALL DID NOT RUN", sep="!", red=True, bold=True)
    terminalreporter.write_line(f"{len(skipped)} test(s) in {NETWORK_WALL_TESTS} skipped: {reason}", red=True, bold=True)
    terminalreporter.write_line("Only the Python-level guard (tests/guarantees/test_privacy.py) checked that nothing leaves "
                                "the machine. Run the suite as root with strace and util-linux's unshare to check below "
                                "Python; CI=true or SYMPOSIUM_REQUIRE_NETWORK_WALL=1 makes this skip a failure.", red=True)


#: Fixtures that load a real model: a test using one is marked ``model`` (``make test-fast``
#: leaves it out) without saying so itself.
MODEL_FIXTURES = frozenset({"smollm", "gemma", "llama_server", "openai_smollm", "hf_smollm", "vllm_smollm"})
#: The marks that allow a test to load a model: every other test must load none.
LOADING_MARKS = ("model", "vllm")


#: The time limit of a test by its family (pytest-timeout, seconds). Every other test has the
#: default in pyproject.toml (60 s): a test that loads no model and hangs fails within a minute.
#: A model test loads and runs a real model on a slow two-core machine beside a second worker, a
#: vLLM test may compile its engine first. A test's own ``@pytest.mark.timeout(N)``, given with
#: its reason, overrides its family's; ``--timeout N`` on the command line sets the families' too.
FAMILY_TIMEOUTS = {"vllm": 1800, "model": 600}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
        family = next((mark for mark in FAMILY_TIMEOUTS if item.get_closest_marker(mark)), None)
        if family and item.get_closest_marker("timeout") is None and config.getoption("timeout", None) is None:
            item.add_marker(pytest.mark.timeout(FAMILY_TIMEOUTS[family]))


# Which tests load a model is watched, not remembered: every load (in this process or in any
# child it starts, which inherits the variable) appends a line to this process's log
# (backends/load_watch.py), and a test that loaded one without a mark from LOADING_MARKS fails,
# naming the mark to add. So ``-m "not model"`` cannot silently come to include a slow test.
# Under ``make test-fast`` (SYMPOSIUM_FORBID_MODEL_LOADS=1) the load itself raises at once.
_LOAD_LOG = pytest.StashKey[int]()


_OWN_LOG: list[Path] = []


def _load_log() -> Path:
    path = os.environ.get(load_watch.LOG)
    if not path:
        fd, path = tempfile.mkstemp(prefix=f"symposium-model-loads-{os.getpid()}-", suffix=".log")
        os.close(fd)
        os.environ[load_watch.LOG] = path
        _OWN_LOG.append(Path(path))
    return Path(path)


def pytest_unconfigure(config: pytest.Config) -> None:
    for log in _OWN_LOG:
        log.unlink(missing_ok=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Note where the load log ends before the test's fixtures (of any scope) are set up."""
    log = _load_log()
    item.stash[_LOAD_LOG] = log.stat().st_size if log.exists() else 0


def unmarked_loads(item: pytest.Item) -> list[str]:
    """The models ``item`` loaded (in its setup or its body) though it carries no loading mark."""
    if any(item.get_closest_marker(mark) for mark in LOADING_MARKS) or _LOAD_LOG not in item.stash:
        return []
    log = _load_log()
    if not log.exists():
        return []
    with log.open("rb") as lines:
        lines.seek(item.stash[_LOAD_LOG])
        return [line.decode("utf-8", "replace").rstrip("\n") for line in lines if line.strip()]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Fail a test that loaded a model without a loading mark, saying which mark to add."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not (call.when == "call" or (call.when == "setup" and report.failed)):
        return
    loads = unmarked_loads(item)
    if not loads:
        return
    said = "\n".join(f"  pid {pid}: {backend} loaded {model} ({path})" for pid, backend, model, path in
                     (line.split("\t", 3) for line in loads))
    message = (f"{item.nodeid} loaded a model but is not marked `model`, so `make test-fast` "
               f"(-m \"not model\") would run it:\n{said}\nAdd @pytest.mark.model to the test (or "
               f"pytestmark = pytest.mark.model to its file) if it needs the model; else give it a "
               f"scripted backend (tests/helpers/scripted_backends.py).")
    report.outcome = "failed"
    report.longrepr = f"{message}\n\n{report.longrepr}" if report.longrepr else message


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis seed: {FUZZ_SEED} (replay with SYMPOSIUM_FUZZ_SEED={FUZZ_SEED})"



@pytest.fixture(autouse=True)
def _sighup_at_its_default() -> Iterator[None]:
    """Every test starts with SIGHUP at its default disposition, as in a terminal, whatever the
    suite was started under: ``nohup make test`` ignores it, and Symposium rightly keeps an
    ignored SIGHUP ignored (tests/cli/test_signals.py), which the signal tests do not expect."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)

@pytest.fixture(scope="session", autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep tests away from the user's journal, models, settings and exports, and offline.

    Every per-user folder platformdirs can hand out (config, data, state, cache of our own,
    documents) points into a temporary tree, so a test that forgets a path cannot read or
    write the user's real ``~/.config/symposium`` (``tests/cli/test_config_isolation.py`` checks).
    """
    root = tmp_path_factory.mktemp("user")
    saved = dict(os.environ)
    os.environ["SYMPOSIUM_MODELS_DIR"] = str(tmp_path_factory.mktemp("models"))
    os.environ["SYMPOSIUM_DB"] = str(tmp_path_factory.mktemp("journal") / "journal.db")
    os.environ["SYMPOSIUM_CONFIG_DIR"] = str(root / "config" / "symposium")
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                     ("XDG_DOCUMENTS_DIR", "documents")):
        os.environ[var] = str(root / sub)
    os.environ.pop("SYMPOSIUM_MODELS", None)
    # The user's own registry (config folder) must not leak into tests: point it at nothing.
    os.environ["SYMPOSIUM_USER_MODELS"] = str(tmp_path_factory.mktemp("config") / "models.toml")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def smollm(registry: Registry) -> LlamaCppBackend:
    entry = registry.get("smollm2-135m")
    return LlamaCppBackend(entry, resolve_path(entry))


@pytest.fixture(scope="session")
def gemma(registry: Registry) -> LlamaCppBackend:
    entry = registry.get("gemma3-270m")
    return LlamaCppBackend(entry, resolve_path(entry))


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.db") as j:
        yield j


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """SmolLM2 behind ``symposium serve llamacpp`` (llama_cpp.server) on a free loopback port."""
    with llama_server_process("smollm2-135m", tmp_path_factory.mktemp("servers")) as server:
        yield server


@pytest.fixture(scope="session")
def openai_smollm(llama_server: RunningServer) -> OpenAIBackend:
    """The openai backend, talking to :func:`llama_server`."""
    return OpenAIBackend(server_entry(llama_server.base_url))


@pytest.fixture(scope="session")
def hf_smollm(registry: Registry) -> Backend:
    """SmolLM2's GGUF loaded by transformers (the ``transformers`` extra)."""
    pytest.importorskip("transformers", reason="the transformers backend needs pip install 'symposium-tui[transformers]'")
    from backends.hf_transformers import TransformersBackend

    entry = registry.get("smollm2-135m").model_copy(update={"backend": "transformers"})
    return TransformersBackend(entry, resolve_path(entry))


def vllm_model_folder() -> Path:
    """SmolLM2 as a Hugging Face folder for vLLM: ``SYMPOSIUM_VLLM_MODEL`` (``make test-vllm``
    converts it first), else converted here once into the checkout's ``.cache``."""
    from tests.fixtures.smollm2_hf import bundled_gguf, convert
    from tests.helpers.paths import REPO

    given = os.environ.get("SYMPOSIUM_VLLM_MODEL")
    return convert(bundled_gguf(), Path(given) if given else REPO / ".cache" / "vllm" / "smollm2-135m")


def require_vllm() -> None:
    """Skip, saying why, where vLLM is not installed: only .venv-vllm has it (``make test-vllm``)."""
    pytest.importorskip("vllm", reason="vLLM is not installed in this environment; `make test-vllm` runs the "
                        "vLLM tests in .venv-vllm, on vLLM's CUDA or CPU build")


def vllm_entry(registry: Registry, folder: Path, model_id: str = "smollm2-135m-vllm", **vllm: Any) -> ModelEntry:
    """SmolLM2's registry entry on the vllm backend, loading ``folder``: float32 on a CPU (the
    default), 1 GiB of KV cache (room for 11,000 float32 tokens of this model), and ``vllm``'s
    other engine settings."""
    from backends.registry import LocalSource, VllmSettings

    return registry.get("smollm2-135m").model_copy(update={
        "id": model_id, "name": "SmolLM2 135M Instruct (vLLM)", "backend": "vllm", "chat_format": None,
        "source": LocalSource(kind="local", path=str(folder)), "vllm": VllmSettings(kv_cache_gb=1, **vllm)})


@pytest.fixture(scope="session")
def vllm_smollm(registry: Registry) -> Iterator[Backend]:
    """SmolLM2 on vLLM's in-process engine (CUDA or vLLM's CPU build), started once for the whole
    test session in the backend's load step and shut down at its end. It compiles, as a user's
    engine does (minutes on 2 cores); ``SYMPOSIUM_VLLM_TEST_EAGER=1`` skips the compile while
    iterating on a change."""
    require_vllm()
    from backends.lifecycle import Engines

    eager = os.environ.get("SYMPOSIUM_VLLM_TEST_EAGER") == "1"
    engines = Engines()  # the same load (worker thread, progress) and close path as the app and the CLI
    backend = asyncio.run(engines.load_entry(vllm_entry(registry, vllm_model_folder(), enforce_eager=eager)))
    yield backend
    asyncio.run(engines.aclose())

