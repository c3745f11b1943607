"""A redacted copy carries nothing from which the masked text can be recomputed (played as the attacker).

The attack: a redacted export shows every column of every row except the masked spans, so
whoever holds it can rebuild a row exactly by guessing what a ``[NAME]`` stood for, hash the
guess the way the seal does (or the way a prompt is hashed), and look for that hash in the file.
100,000 names take well under a second. So a redacted JSON export, Markdown export and HTML
report must hold no hash of the unredacted record at all: every 64-hex string left in them is a
model file's SHA-256 from the provenance, nothing derived from the case. The same search run
against a copy that still carries the seal's row hashes does find the name, so the search is a
real one.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from backends.values import Message
from protocols.core.events import CallRecord, DebateStarted, Participant, TurnFinished
from protocols.core.replies import Reply, prompt_sha256
from store import export_check, seal
from store.journal import Journal
from tui.cli.parser import main

ID = "maskedcase01"
NAME = "Maria Lopez"
CASE = f"The patient, {NAME}, born 03/14/1961, MRN 00482913, phone (555) 867-5309, has a fever after travel."
SAID = f"We saw {NAME} today: the fever is cyclic, so malaria leads."
PROMPT = [Message("user", f"Case:\n{CASE}\nGive your diagnosis.")]
MODEL_FILE_SHA = "5e" * 32
FIRST = ["Maria", "Ana", "Rosa", "Elena", "Lucia", "Sofia", "Carmen", "Isabel", "Laura", "Marta"]
LAST = ["Lopez", "Garcia", "Martinez", "Rodriguez", "Hernandez", "Gonzalez", "Perez", "Sanchez", "Ramirez", "Torres"]


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    call = CallRecord("agent-a", "qwen2.5-7b", "turn", {"seed": 1}, 300, 300, 40, 2.5, 0.2, "stop")
    with Journal(path) as j:
        j.record(DebateStarted(ID, "evince", "Fever after travel", CASE, {"max_rounds": 1},
                               (Participant("agent-a", "qwen2.5-7b", "llamacpp"),)))
        j.record(TurnFinished(ID, "agent-a", "qwen2.5-7b", "exploratory", 0, "opening", SAID, SAID, call, None, (),
                              {"Malaria": 0.7, "Dengue": 0.3}, 0.9))
        j.record_replies(ID, [Reply("agent-a", "chat", prompt_sha256("chat", PROMPT), SAID, {})])
        j.record_provenance(ID, {"participants": [{"role": "agent-a", "model_id": "qwen2.5-7b", "backend": "llamacpp",
                                                  "file": "/models/qwen.gguf", "file_sha256": MODEL_FILE_SHA}]})
    return path


def _hashes(text: str) -> set[str]:
    return set(re.findall(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", text))


def _guesses(document: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per candidate name, every hash an attacker can compute from the redacted copy and the
    guess: the turn's row rebuilt as the seal hashes it, the prompt as a reply's hash covers it,
    and the name alone."""
    turn = document["turns"][0]
    columns = export_check.layout_columns(export_check.FIRST_SIGNED_LAYOUT)["turns"]
    out: dict[str, dict[str, str]] = {}
    for first in FIRST:
        for last in LAST:
            name = f"{first} {last}"
            said = turn["text"].replace("[NAME]", name)
            row = {**turn, "text": said, "raw": said, "debate_id": document["id"]}
            values = []
            for column in columns:
                value = row[column.removesuffix("_json")] if column.removesuffix("_json") in row else row[column]
                values.append(json.dumps(value, ensure_ascii=False) if column.endswith("_json") and value is not None
                              else value)
            out[name] = {"row": seal.row_sha256("turns", tuple(values)), "name": hashlib.sha256(name.encode()).hexdigest(),
                         "prompt": prompt_sha256("chat", [Message("user", f"Case:\n{CASE.replace(NAME, name)}\n"
                                                                          "Give your diagnosis.")])}
    return out


def test_a_redacted_json_export_holds_no_hash_a_guess_can_be_tested_against(journal: Path, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "redacted.json"
    assert main(["export", ID, "--format", "json", "--redact", "--out", str(out), "--db", str(journal)]) == 0
    text = out.read_text()
    document = json.loads(text)
    assert NAME not in text and "[NAME]" in document["turns"][0]["text"] and "[NAME]" in document["subject"]
    assert _hashes(text) == {MODEL_FILE_SHA}  # nothing derived from the case
    hit = [name for name, hashes in _guesses(document).items() if set(hashes.values()) & _hashes(text)]
    assert hit == []
    assert document["seal"] == seal.redacted() and "prompt_sha256" not in document["replies"][0]
    capsys.readouterr()
    assert main(["verify", "--export", str(out)]) == 3
    said = capsys.readouterr().out
    assert said.startswith(f"NOT VERIFIABLE {ID}: it is a redacted copy, which carries no seal: the seal's hashes would "
                           "let a reader test guesses of the masked text")


def test_the_same_search_finds_the_name_where_row_hashes_travel(journal: Path, tmp_path: Path) -> None:
    """The attack is real: against a redacted copy that kept the seal's hashes (as exports did),
    the candidate search recovers the name from the turn's row hash and the prompt's hash."""
    full = tmp_path / "full.json"
    redacted = tmp_path / "redacted.json"
    assert main(["export", ID, "--format", "json", "--out", str(full), "--db", str(journal)]) == 0
    assert main(["export", ID, "--format", "json", "--redact", "--out", str(redacted), "--db", str(journal)]) == 0
    leaky = json.loads(redacted.read_text())
    unredacted = json.loads(full.read_text())
    leaky["seal"] = {**unredacted["seal"], "chain": [{**link, "rows": [{k: v for k, v in e.items() if k != "row"}
                                                                       for e in link["rows"]]}
                                                     for link in unredacted["seal"]["chain"]]}
    leaky["replies"] = unredacted["replies"]
    found = _hashes(json.dumps(leaky))
    hits = {name: sorted(k for k, h in hashes.items() if h in found) for name, hashes in _guesses(leaky).items()}
    assert {name: kinds for name, kinds in hits.items() if kinds} == {NAME: ["prompt", "row"]}


@pytest.mark.parametrize("what", ["markdown", "report"])
def test_a_redacted_markdown_export_or_report_holds_no_seal(journal: Path, tmp_path: Path, what: str) -> None:
    out = tmp_path / ("redacted.md" if what == "markdown" else "redacted.html")
    command = (["export", ID, "--redact", "--out", str(out)] if what == "markdown"
               else ["report", ID, "--redact", "--out", str(out)])
    assert main([*command, "--db", str(journal)]) == 0
    text = out.read_text()
    assert NAME not in text and "00482913" not in text
    assert _hashes(text) <= {MODEL_FILE_SHA}
    assert "carries no seal" in text and "SHA256:" not in text  # no head, no signature, no key
    plain = tmp_path / ("plain.md" if what == "markdown" else "plain.html")
    assert main([command[0], ID, "--out", str(plain), "--db", str(journal)]) == 0
    with Journal(journal) as j:
        head = seal.summary(j.conn, ID)
    assert head["head"] in plain.read_text() and head["fingerprint"] in plain.read_text()  # unredacted: shown


def test_a_redacted_export_withholds_the_token_ids_a_reply_is_journalled_with(tmp_path: Path) -> None:
    """A reply's token ids are journalled so that a resumed session feeds it back exactly; to
    anyone with the model's tokenizer they are the reply's text. Here the tokenizer is byte-level
    (each id one UTF-8 byte), and the attack is to decode them: it finds the name in a plain
    export and nothing in a redacted one."""
    path = tmp_path / "tokens.db"
    with Journal(path) as j:
        j.record(DebateStarted(ID, "evince", "Fever after travel", CASE, {"max_rounds": 1},
                               (Participant("agent-a", "qwen2.5-7b", "llamacpp"),)))
        j.record_replies(ID, [Reply("agent-a", "chat", prompt_sha256("chat", PROMPT), SAID, {"tokens": list(SAID.encode())})])

    def decoded(out: Path) -> str:
        tokens = json.loads(out.read_text())["replies"][0]["details"]["tokens"]
        return bytes(tokens).decode() if isinstance(tokens, list) else str(tokens)

    plain, redacted = tmp_path / "plain.json", tmp_path / "redacted.json"
    assert main(["export", ID, "--format", "json", "--out", str(plain), "--db", str(path)]) == 0
    assert main(["export", ID, "--format", "json", "--redact", "--out", str(redacted), "--db", str(path)]) == 0
    assert NAME in decoded(plain)
    assert decoded(redacted) == "withheld (redacted copy)" and NAME not in redacted.read_text()
