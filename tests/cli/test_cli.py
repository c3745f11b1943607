"""The ``symposium`` command line, run as a real subprocess against real models and files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.helpers.cli_process import symposium


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


def test_no_arguments_prints_help(db: Path) -> None:
    result = symposium(db=db)
    assert result.returncode == 0
    assert "chat" in result.stdout and "history" in result.stdout


@pytest.mark.model
def test_chat_streams_a_reply_and_journals_it(db: Path, tmp_path: Path) -> None:
    result = symposium("chat", "smollm2-135m", "Say hello to the moderator.", "--max-tokens", "12", "--temperature", "0", db=db)
    assert result.returncode == 0, result.stderr
    assert "journalled as" in result.stdout
    debate_id = result.stdout.rsplit("journalled as", 1)[1].split()[0]

    history = symposium("history", "--json", db=db)
    rows = json.loads(history.stdout)
    assert rows[0]["id"] == debate_id and rows[0]["protocol"] == "chat" and rows[0]["turns"] == 2

    exported = symposium("export", debate_id[:6], "--format", "json", db=db)
    debate = json.loads(exported.stdout)
    reply = debate["turns"][1]
    assert reply["role"] == "assistant" and reply["model_id"] == "smollm2-135m"
    assert reply["text"].strip() and reply["text"].strip() in result.stdout
    assert debate["model_calls"][0]["completion_tokens"] <= 12
    assert debate["model_calls"][0]["options"]["temperature"] == 0

    shown = symposium("show", debate_id, db=db)
    assert shown.returncode == 0 and "Say hello to the moderator." in shown.stdout

    out = tmp_path / "chat.md"
    assert symposium("export", debate_id, "--out", str(out), db=db).returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text().startswith("# Say hello to the moderator.")
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_unknown_model_is_one_clear_line(db: Path) -> None:
    result = symposium("chat", "gpt-5", "hello", db=db)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "'gpt-5' is not in" in result.stderr and "smollm2-135m" in result.stderr


def test_model_that_is_not_pulled_says_how_to_get_it(db: Path) -> None:
    result = symposium("chat", "gemma2-9b-it", "hello", db=db)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "symposium models pull gemma2-9b-it" in result.stderr


def test_broken_registry_names_file_entry_and_key(db: Path, tmp_path: Path) -> None:
    registry = tmp_path / "models.toml"
    registry.write_text(
        '[models.tiny]\nname = "Tiny"\nfamily = "llama"\nbackend = "llamacpp"\n'
        'source = { kind = "local", path = "/nowhere/tiny.gguf" }\ncontext_lenght = 2048\n'
    )
    result = symposium("--models", str(registry), "models", db=db)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{registry}:6" in result.stderr and "'tiny'" in result.stderr and "'context_lenght'" in result.stderr


def test_models_lists_bundled_models_as_ready(db: Path) -> None:
    result = symposium("models", "--json", db=db)
    rows = {r["id"]: r for r in json.loads(result.stdout)}
    assert rows["smollm2-135m"]["availability"] == "ready"
    assert rows["gemma3-270m"]["availability"] == "ready"
    assert rows["llama31-8b-instruct"]["availability"] == "not pulled"


def test_pull_without_network_fails_fast_and_clearly(db: Path, tmp_path: Path) -> None:
    result = symposium("models", "pull", "gemma2-9b-it", db=db, timeout=30,
                       env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0",
                            "SYMPOSIUM_MODELS_DIR": str(tmp_path / "models")})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "not reachable" in result.stderr and "gemma2-9b-it" in result.stderr
    assert not (tmp_path / "models" / "gemma2-9b-it" / "gemma-2-9b-it-Q4_K_M.gguf").exists()


def test_show_unknown_debate(db: Path) -> None:
    result = symposium("show", "doesnotexist", db=db)
    assert result.returncode == 1 and "no debate 'doesnotexist'" in result.stderr


def test_journal_from_newer_version_is_a_clear_error(db: Path) -> None:
    import sqlite3

    symposium("history", db=db)
    sqlite3.connect(db).execute("INSERT INTO migrations VALUES (99, 'future', 0)").connection.commit()
    result = symposium("history", db=db)
    assert result.returncode == 1 and "newer Symposium" in result.stderr and "Traceback" not in result.stderr
