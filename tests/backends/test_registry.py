"""models.toml: the shipped entries, availability, and errors that point at the culprit."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from backends.base import BackendUnavailable
from backends.chat_format import CHATML, GEMMA, detect_format
from backends.registry import LocalSource, PackageSource, RegistryError, load_registry
from backends.sources import resolve_path, status

HEADER = '[models.tiny]\nname = "Tiny"\nfamily = "llama"\nbackend = "llamacpp"\n'
LOCAL = 'source = { kind = "local", path = "/nowhere/tiny.gguf" }\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text)
    return path


def test_shipped_registry_has_the_bundled_and_the_wanted_models() -> None:
    reg = load_registry()
    for model_id in ("smollm2-135m", "gemma3-270m", "gemma2-9b-it", "llama31-8b-instruct", "mixtral-8x7b-instruct"):
        assert model_id in reg.entries
    assert reg.get("smollm2-135m").bundled and reg.get("gemma3-270m").bundled
    assert reg.get("gemma3-270m").chat_format == "gemma"
    assert isinstance(reg.get("smollm2-135m").source, PackageSource)
    assert reg.get("smollm2-135m").default_options().repeat_penalty == pytest.approx(1.15)


def test_bundled_models_resolve_to_gguf_files() -> None:
    reg = load_registry()
    for model_id in ("smollm2-135m", "gemma3-270m"):
        path = resolve_path(reg.get(model_id))
        assert path.exists() and path.read_bytes()[:4] == b"GGUF"


def test_the_bundled_gguf_is_found_in_an_environment_without_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM's environment (.venv-vllm) has no llama.cpp and converts the bundled SmolLM2 GGUF for
    vLLM: finding the file must not need the runtime of the entry's backend. Listing the entry
    still says its own runtime is missing."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "llama_cpp" else real(name, *rest))
    entry = load_registry().get("smollm2-135m")
    assert status(entry).availability == "no runtime"
    assert resolve_path(entry).read_bytes()[:4] == b"GGUF"


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + LOCAL + "context_length = = 4\n")
    with pytest.raises(RegistryError, match=rf"{path}: not valid TOML.*line 6"):
        load_registry(path)


@pytest.mark.parametrize(
    ("extra", "key", "line", "what"),
    [
        ("context_lenght = 2048\n", "context_lenght", 6, "unknown key"),
        ('context_length = "big"\n', "context_length", 6, "valid integer"),
        ('chat_format = "klingon"\n', "chat_format", 6, "unknown chat format"),
        ("gpu_layers = -7\n", "gpu_layers", 6, "greater than or equal to -1"),
        ("[models.tiny.sampling]\ntemperature = 9\n", "sampling.temperature", 7, "less than or equal to 5"),
        # vLLM's engine arguments: checked when the registry is read, not when an engine fails to start
        ('[models.tiny.vllm]\ndtype = "bf16"\n', "vllm.dtype", 7, "'auto', 'float32', 'bfloat16' or 'float16'"),
        ("[models.tiny.vllm]\ngpu_memory_utilization = 1.5\n", "vllm.gpu_memory_utilization", 7, "less than or equal to 1"),
        ("[models.tiny.vllm]\nkv_cache_gb = 0\n", "vllm.kv_cache_gb", 7, "greater than 0"),
        ("[models.tiny.vllm]\ntensor_parallel_size = 0\n", "vllm.tensor_parallel_size", 7, "greater than or equal to 1"),
        ("[models.tiny.vllm]\nenforce_eager = \"sometimes\"\n", "vllm.enforce_eager", 7, "valid boolean"),
        ("[models.tiny.vllm]\nmax_model_len = 2048\n", "vllm.max_model_len", 7, "unknown key"),
    ],
)
def test_invalid_entries_name_file_line_entry_and_key(tmp_path: Path, extra: str, key: str, line: int, what: str) -> None:
    path = write(tmp_path, HEADER + LOCAL + extra)
    with pytest.raises(RegistryError) as info:
        load_registry(path)
    message = str(info.value)
    assert f"{path}:{line}: entry 'tiny', key '{key}'" in message
    assert what in message


def test_missing_key_and_bad_source(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="entry 'tiny', key 'source': required key is missing"):
        load_registry(write(tmp_path, HEADER))
    with pytest.raises(RegistryError, match="key 'source.*kind"):
        load_registry(write(tmp_path, HEADER + 'source = { kind = "ftp", path = "x" }\n'))


def test_unknown_top_level_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="unknown top-level key"):
        load_registry(write(tmp_path, "[modles.tiny]\nname = 'x'\n"))
    with pytest.raises(RegistryError, match="registry not found"):
        load_registry(tmp_path / "absent.toml")


def test_availability_of_local_and_missing_package(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    reg = load_registry(write(tmp_path, HEADER + f'source = {{ kind = "local", path = "{gguf}" }}\n'
                              + '[models.pkg]\nname = "P"\nfamily = "x"\nbackend = "llamacpp"\n'
                              + 'source = { kind = "package", package = "no-such-pkg", module = "no_such_pkg", resource = "m.gguf" }\n'))
    tiny = reg.get("tiny")
    assert status(tiny).availability == "missing"
    with pytest.raises(BackendUnavailable, match="tiny.gguf does not exist"):
        resolve_path(tiny)
    gguf.write_bytes(b"GGUF")
    assert status(tiny).ready
    assert isinstance(tiny.source, LocalSource)
    assert status(reg.get("pkg")).availability == "not installed"
    assert "pip install no-such-pkg" in status(reg.get("pkg")).detail


def test_chat_format_detection_and_system_folding() -> None:
    assert detect_format("{% for m in messages %}<|im_start|>{{ m.role }}") is CHATML
    assert detect_format("<start_of_turn>user") is GEMMA
    assert detect_format("something else") is None
    from backends.base import Message

    turns = GEMMA.turns([Message("system", "Be brief."), Message("user", "Hi"), Message("assistant", "Hello")])
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[0].content == "Be brief.\n\nHi"
