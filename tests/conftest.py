"""Shared fixtures: the real bundled models, loaded once per test session, and isolated paths.

Nothing here is faked: the backends are llama.cpp with the bundled GGUF files (in process, or
behind a real ``llama_cpp.server`` on loopback, or loaded by transformers), journals are real
SQLite files in temporary folders.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import core as hypothesis_core

from backends.base import Backend
from backends.llamacpp import LlamaCppBackend
from backends.openai_compat import OpenAIBackend
from backends.registry import Registry, load_registry
from backends.sources import resolve_path
from store.journal import Journal
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
    (llama.cpp, torch, child processes, UDP) was checked for network use on this machine."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.nodeid.startswith(NETWORK_WALL_TESTS)]
    if not skipped:
        return
    longrepr = skipped[0].longrepr
    reason = (longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)).removeprefix("Skipped: ")
    terminalreporter.section("PRIVACY: THE NETWORK WALL DID NOT RUN", sep="!", red=True, bold=True)
    terminalreporter.write_line(f"{len(skipped)} test(s) in {NETWORK_WALL_TESTS} skipped: {reason}", red=True, bold=True)
    terminalreporter.write_line("Only the Python-level guard (tests/guarantees/test_privacy.py) checked that nothing leaves "
                                "the machine. Run the suite as root with strace and util-linux's unshare to check below "
                                "Python; SYMPOSIUM_REQUIRE_NETWORK_WALL=1 makes this skip a failure.", red=True)


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis seed: {FUZZ_SEED} (replay with SYMPOSIUM_FUZZ_SEED={FUZZ_SEED})"


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


@pytest.fixture(scope="session")
def vllm_smollm(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Backend:
    """A tiny local Llama with SmolLM2's tokenizer on vLLM's in-process engine (CUDA machines with
    the vllm extra only; vLLM loads no GGUF, and tests download nothing)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("vLLM's engine needs a CUDA GPU")
    from backends.registry import LocalSource
    from backends.vllm_engine import VllmBackend
    from tests.fixtures.tiny_hf_model import build

    folder = build(tmp_path_factory.mktemp("tiny-llama"), resolve_path(registry.get("smollm2-135m")))
    entry = registry.get("smollm2-135m").model_copy(
        update={"backend": "vllm", "context_length": 2048, "chat_format": None,
                "source": LocalSource(kind="local", path=str(folder))})
    return VllmBackend(entry, path=folder)
