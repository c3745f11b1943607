"""Provenance (store/provenance.py): what produced a debate, journalled at its start, sealed,
and shown in ``show`` and the JSON export; model files hashed once, in a worker thread."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from pathlib import Path

from backends.base import SamplingOptions
from outputs.export import to_json, to_markdown
from protocols import evince
from protocols.core.agents import Agent
from protocols.core.events import Participant
from protocols.measures.labels import LabelSet
from store import export_check, provenance, seal
from store.drive import drive
from store.journal import Journal
from store.queries import Queries
from tests.helpers.scripted_backends import ScriptedBackend

OPTS = SamplingOptions(max_tokens=64, temperature=0.7, seed=1)
REPLY = ('{"predictions": [{"label": "Malaria", "probability": 0.7, "argument": "a"}, '
         '{"label": "Dengue", "probability": 0.3, "argument": "b"}], "arguments": []}')
CRIT = '{"claim": "x", "reasons": [], "rival_reasons": [], "score": 6, "justification": "fair"}'


def _model_file(folder: Path, size: int = 3 * provenance.CHUNK + 5) -> Path:
    path = folder / "tiny-model.Q4_K_M.gguf"
    path.write_bytes(os.urandom(size))
    return path


def test_a_model_file_is_hashed_once_then_read_from_the_private_cache(tmp_path: Path) -> None:
    path = _model_file(tmp_path)
    cache = tmp_path / "config" / "file-hashes.json"
    heard: list[str] = []
    first = provenance.file_sha256(path, heard.append, cache=cache)
    assert first == hashlib.sha256(path.read_bytes()).hexdigest()
    assert heard and heard[-1].startswith("hashing tiny-model.Q4_K_M.gguf: 100% of")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    heard.clear()
    assert provenance.file_sha256(path, heard.append, cache=cache) == first
    assert heard == []  # from the cache: not read again
    with path.open("r+b") as fh:  # the same size, a new modification time: hashed again
        fh.write(b"\0")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert provenance.file_sha256(path, heard.append, cache=cache) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert heard


def test_whether_a_run_is_reproducible_is_said_plainly(tmp_path: Path) -> None:
    def part(backend: str, **details: object) -> dict:
        p = Participant("agent-a", "m", backend, {"temperature": 0.7, "seed": details.pop("seed", 1)}, dict(details))
        return provenance.participant(p)

    local = provenance.reproducibility([part("llamacpp", threads=8, file=None)])
    assert local["bit_for_bit"] is False and "file is not recorded" in local["reasons"][0]
    seeded = provenance.reproducibility([part("llamacpp", threads=8, file=str(_model_file(tmp_path, 10)))])
    assert seeded["bit_for_bit"] is True and "the same thread count (8)" in seeded["reasons"][0]
    unseeded = provenance.reproducibility([part("llamacpp", seed=None, threads=4)])
    assert not unseeded["bit_for_bit"] and "without a fixed seed" in unseeded["reasons"][0]
    server = provenance.reproducibility([part("openai", base_url="http://127.0.0.1:8080/v1", served_model="qwen")])
    assert not server["bit_for_bit"] and "runs on a server (http://127.0.0.1:8080/v1)" in server["reasons"][0]
    assert "continuous batching" in provenance.reproducibility([part("vllm")])["reasons"][0]
    gpu = provenance.reproducibility([part("llamacpp", gpu_layers=-1)])
    assert any("GPU" in r for r in gpu["reasons"])


async def test_a_debates_provenance_is_journalled_sealed_and_shown(tmp_path: Path) -> None:
    model = _model_file(tmp_path)
    file_details = {"file": str(model), "n_ctx": 4096, "threads": 2}
    agents = evince.EvinceAgents(Agent("agent-a", ScriptedBackend("scripted-a", [REPLY] * 5), OPTS, details=file_details),
                                 Agent("agent-b", ScriptedBackend("scripted-b", [REPLY] * 5), OPTS, details=file_details),
                                 Agent("judge", ScriptedBackend("scripted-judge", [CRIT] * 10), OPTS))
    config = evince.EvinceConfig(case="fever", labels=LabelSet(["Malaria", "Dengue"]), max_rounds=2,
                                 recommendations=False, eps_wd=0, eps_mi=0, eps_jsd=0, eps_crit=0)
    heard: list[tuple[str, bool]] = []
    with Journal(tmp_path / "j.db") as journal:
        await drive(evince.run(config, agents, debate_id="p1"), journal,
                    progress=lambda m: heard.append((m, threading.current_thread() is threading.main_thread())))
        debate = Queries(journal).debate("p1", chain=True)
        assert seal.verify(journal.conn, "p1").ok
    assert debate is not None
    assert heard and all(on_loop for _, on_loop in heard)  # progress reaches the UI's thread
    prov = debate["provenance"]
    a = next(p for p in prov["participants"] if p["role"] == "agent-a")
    assert a["file_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest() and a["quantization"] == "Q4_K_M"
    assert a["seed"] == 1 and a["sampling"]["temperature"] == 0.7 and a["context_size"] == 4096
    assert prov["protocol"]["name"] == "evince" and prov["protocol"]["parameters"]["max_rounds"] == 2
    assert prov["host"]["cpu_count"] == os.cpu_count() and prov["symposium_version"]
    assert prov["started_at"] and prov["ended_at"] == seal.iso(debate["finished_at"])
    assert any(r["table"] == "provenance" for link in debate["seal"]["chain"] for r in link["rows"])
    assert export_check.verify_export(json.loads(to_json(debate))).ok  # as the file holds it
    text = to_markdown(debate)
    assert "## Provenance" in text and a["file_sha256"] in text and "**Reproducible bit for bit:**" in text
    assert f"**Chain head:** `{debate['seal']['head']}`" in text
    debate["provenance"]["participants"][0]["seed"] = 2  # an edited export's provenance is found
    assert not export_check.verify_export(json.loads(to_json(debate))).ok
