"""Nothing leaves the machine: a whole debate runs with the network walled off but loopback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import REPO

LABELS = REPO / "tui" / "data" / "symptom2disease_labels.txt"


def guarded(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(SYMPOSIUM_DB=str(tmp_path / "journal.db"))
    run = subprocess.run([sys.executable, "-m", "tests.helpers.guarded", str(report), "--", *args], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=600, check=False)
    return run, json.loads(report.read_text())


def test_an_evince_debate_opens_no_connection_off_the_machine(tmp_path: Path) -> None:
    run, report = guarded(tmp_path, "run", "evince", "--case", "fever, chills, headache", "--labels", str(LABELS),
                          "--agent-a", "smollm2-135m", "--agent-b", "gemma3-270m", "--judge", "smollm2-135m",
                          "--max-rounds", "0", "--turn-tokens", "40", "--crit-tokens", "40")
    assert run.returncode == 0, run.stderr
    assert [a for a in report["attempts"] if not a["allowed"]] == []
    assert report["env"]["HF_HUB_OFFLINE"] == "1" and report["env"]["HF_HUB_DISABLE_TELEMETRY"] == "1"
    assert stat.S_IMODE((tmp_path / "journal.db").stat().st_mode) == 0o600


def test_the_guard_itself_blocks_the_outside_world(tmp_path: Path) -> None:
    """The wall is real: a pull (the one command that may go online) is refused by it."""
    run, report = guarded(tmp_path, "models", "pull", "gemma2-9b-it")
    assert run.returncode == 1 and "not reachable" in run.stderr
    assert any(not a["allowed"] and "huggingface" in a["host"] for a in report["attempts"])
