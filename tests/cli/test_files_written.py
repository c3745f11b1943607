"""Where ``symposium report`` and ``export`` write, under which names, and that neither replaces a
file without being told to: a redacted copy's name says it is redacted, a full copy's never
does, and ``symposium paths`` says where the app and the command line write. The real command
line in a subprocess, on a real journal holding a recorded debate; no model is loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from store.journal import Journal
from tests.helpers.sample_debate import record_sample

REPO = Path(__file__).resolve().parents[2]


def symposium(tmp_path: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SYMPOSIUM_DB": str(tmp_path / "journal.db"), "SYMPOSIUM_CONFIG_DIR": str(tmp_path / "config"),
           "PYTHONPATH": str(REPO), "COLUMNS": "200", "HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120, check=False)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    with Journal(tmp_path / "journal.db") as journal:
        record_sample(journal, "sample0001ab", rounds=2)
    out = tmp_path / "out"
    out.mkdir()
    return out


@pytest.mark.timeout(240)  # a CLI process per report: 37 s on a busy two-core machine
def test_a_redacted_report_and_a_full_one_never_share_a_file(tmp_path: Path, folder: Path) -> None:
    """``report ID --redact`` then ``report ID`` in the same folder replaced the redacted file with
    the full text; each now has its own name, and a second run replaces nothing unasked."""
    redacted = symposium(tmp_path, "report", "sample0001ab", "--redact", cwd=folder)
    assert redacted.returncode == 0, redacted.stderr
    full = symposium(tmp_path, "report", "sample0001ab", cwd=folder)
    assert full.returncode == 0, full.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["symposium-sample0001ab-redacted.html", "symposium-sample0001ab.html"]
    assert "Redacted copy" in (folder / "symposium-sample0001ab-redacted.html").read_text(encoding="utf-8")
    assert "Redacted copy" not in (folder / "symposium-sample0001ab.html").read_text(encoding="utf-8")

    (folder / "symposium-sample0001ab.html").write_text("kept", encoding="utf-8")
    again = symposium(tmp_path, "report", "sample0001ab", cwd=folder)
    assert again.returncode != 0 and "exists" in again.stderr and "--force" in again.stderr
    assert (folder / "symposium-sample0001ab.html").read_text(encoding="utf-8") == "kept"
    forced = symposium(tmp_path, "report", "sample0001ab", "--force", cwd=folder)
    assert forced.returncode == 0 and "replaced" in forced.stderr
    assert (folder / "symposium-sample0001ab.html").read_text(encoding="utf-8") != "kept"


@pytest.mark.timeout(240)  # a CLI process per export: 53 s on a busy two-core machine
def test_an_export_is_written_only_under_a_name_that_says_what_it_is(tmp_path: Path, folder: Path) -> None:
    """``export --redact --out x.md`` then ``export --out x.md`` silently put the full text where
    the redacted copy was."""
    refused = symposium(tmp_path, "export", "sample0001ab", "--redact", "--out", "x.md", cwd=folder)
    assert refused.returncode != 0 and "x-redacted.md" in refused.stderr
    assert not (folder / "x.md").exists()
    assert symposium(tmp_path, "export", "sample0001ab", "--redact", "--out", "x-redacted.md", cwd=folder).returncode == 0
    full_as_redacted = symposium(tmp_path, "export", "sample0001ab", "--out", "x-redacted.md", cwd=folder)
    assert full_as_redacted.returncode != 0 and "not redacted" in full_as_redacted.stderr
    assert symposium(tmp_path, "export", "sample0001ab", "--out", "x.md", cwd=folder).returncode == 0
    twice = symposium(tmp_path, "export", "sample0001ab", "--format", "json", "--out", "x.md", cwd=folder)
    assert twice.returncode != 0 and "exists" in twice.stderr
    assert (folder / "x.md").read_text(encoding="utf-8").startswith("# ")  # still the Markdown


def test_paths_says_where_the_app_and_the_command_line_write(tmp_path: Path, folder: Path) -> None:
    shown = symposium(tmp_path, "paths", "--json", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    places = json.loads(shown.stdout)
    assert places["app's reports and exports"].endswith("symposium") and places["report (command line)"] == str(folder)
