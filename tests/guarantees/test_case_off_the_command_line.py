"""A case can be given without putting it on the command line, and the README shows that way first.

Another account on the machine is the attacker: it reads every process's command line
(``/proc/PID/cmdline``, ``ps``) while the process runs, and the shell keeps the command in its
history. ``--case -`` reads the case from standard input (and ``@FILE`` from a file): here a
real debate on the bundled model gets its case from a pipe, the command line is read from
``/proc`` while the debate runs, and the case's words must not be in it, while the journal must
hold them whole.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

CASE = "Quarrelwick Ambersley, 52: fever, chills and sweats every other day after a trip to Ghana.\n"
LABELS = REPO / "protocols" / "measures" / "data" / "symptom2disease_labels.txt"


@pytest.mark.model
def test_a_case_from_standard_input_is_never_on_the_command_line(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "tui.cli", "run", "evince", "--case", "-", "--labels", str(LABELS),
                                "--agent-a", "smollm2-135m", "--agent-b", "smollm2-135m", "--judge", "smollm2-135m",
                                "--max-rounds", "0", "--turn-tokens", "16", "--crit-tokens", "16"],
                               cwd=REPO, stdin=subprocess.PIPE, stdout=(tmp_path / "out.txt").open("wb"),
                               stderr=(tmp_path / "err.txt").open("wb"),
                               env={**os.environ, "SYMPOSIUM_DB": str(tmp_path / "journal.db"), "PYTHONPATH": str(REPO)})
    assert process.stdin is not None
    process.stdin.write(CASE.encode())
    process.stdin.close()
    seen = []
    while process.poll() is None:  # what another account reads while the debate runs
        try:
            seen.append(Path(f"/proc/{process.pid}/cmdline").read_bytes())
        except OSError:
            break
        time.sleep(0.2)
    process.wait(timeout=600)
    assert process.returncode == 0, (tmp_path / "err.txt").read_text(errors="replace")[-2000:]
    seen = [cmdline for cmdline in seen if cmdline]  # empty before the exec and once the process has ended
    assert seen and all(b"Quarrelwick" not in cmdline and b"--case\0-\0" in cmdline for cmdline in seen)
    case = sqlite3.connect(tmp_path / "journal.db").execute("SELECT subject FROM debates").fetchone()[0]
    assert case == CASE, case


def test_a_case_from_standard_input_is_refused_where_the_person_takes_turns_there() -> None:
    run = subprocess.run([sys.executable, "-m", "tui.cli", "run", "humanloop", "--case", "-", "--agents", "smollm2-135m",
                          "--human"], cwd=REPO, input="a case", capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 1
    assert "--case -: standard input is where you take your turns" in run.stderr and "@FILE" in run.stderr


def test_the_readme_s_first_example_keeps_the_case_off_the_command_line() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```console\n(.*?)```", readme, re.DOTALL)
    assert first is not None
    command = first.group(1).split("\nfinished")[0]
    assert re.search(r"--case (@\S+|-)", command) and '--case "' not in command, command
    assert "/proc" in readme[first.end():first.end() + 600], "the README says why, right after the example"
