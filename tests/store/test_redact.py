"""--redact masks personal details in exports and leaves the debate's own terms alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from outputs.redact import redact_text
from store.journal import Journal
from tests.helpers.sample_debate import record_sample


def test_emails_phones_dates_and_names_are_masked() -> None:
    text = ("Patient John Carter (john.carter@example.org, +1 415-555-0199) was seen by Dr. Ana Ruiz "
            "on 2024-03-05 and again on March 7, 2024; his sister Maria Lopez called 06/03/2024.")
    out = redact_text(text)
    for secret in ("John", "Carter", "john.carter@example.org", "415-555-0199", "Ana Ruiz", "2024-03-05",
                   "March 7", "Maria Lopez", "06/03/2024"):
        assert secret not in out, secret
    assert "[EMAIL]" in out and "[PHONE]" in out and "[DATE]" in out and out.count("[NAME]") == 3


def test_labels_and_clinical_words_survive() -> None:
    text = "The symptoms point to Hepatitis C rather than Chronic cholestasis; dose 500 mg twice daily."
    assert redact_text(text, keep=["Hepatitis C", "Chronic cholestasis"]) == text


@pytest.mark.timeout(240)  # CLI exports with and without redaction: 36 s on a busy two-core machine
def test_export_redact_flag(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    with Journal(db) as journal:
        record_sample(journal, "redact000001")
        journal.conn.execute("UPDATE turns SET text = text || ' Call Dr. Ana Ruiz at ana@clinic.example.'")
    env = {**os.environ, "SYMPOSIUM_DB": str(db)}
    run = subprocess.run([sys.executable, "-m", "tui.cli", "export", "redact0", "--format", "json", "--redact"],
                         capture_output=True, text=True, env=env, check=True)
    exported = json.loads(run.stdout)
    blob = json.dumps(exported)
    assert "Ana Ruiz" not in blob and "ana@clinic.example" not in blob
    assert "Dr. [NAME]" in exported["turns"][0]["text"] and "[EMAIL]" in exported["turns"][0]["text"]
    assert exported["turns"][0]["distribution"]  # the numbers and labels are untouched
