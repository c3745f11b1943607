"""``symposium bench diagnosis`` on the user's own free-text cases and labels file: the CSV reader's errors, the class set from a labels file, and one real run of the
bench on the bundled SmolLM2 with a three-case CSV (limit 2)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tui.bench.cases import TextCase, class_set, load_cases, subset

ROOT = REPO
CASES = """case_id,label,text
v1,Common cold,"A 30-year-old has had a runny nose, sneezing and a mild sore throat for two days, no fever."
v2,migraine ,"A 25-year-old woman reports a throbbing one-sided headache with nausea and light sensitivity."
v3,Allergy,"Every spring, itchy watery eyes and continuous sneezing; no fever; better with antihistamines."
"""
LABELS = "# the differential\nCommon cold\nMigraine\nAllergy\nInfluenza\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_free_text_cases_and_a_labels_file(tmp_path: Path) -> None:
    cases = load_cases(write(tmp_path, "cases.csv", CASES))
    assert [c.case_id for c in cases] == ["v1", "v2", "v3"]
    assert isinstance(cases[1], TextCase) and cases[1].text.startswith("A 25-year-old woman reports a throbbing")
    labels = class_set(cases, write(tmp_path, "labels.txt", LABELS), None)
    assert labels.labels == ("Common cold", "Migraine", "Allergy", "Influenza")
    assert cases[1].disease == "Migraine"  # rewritten to the labels file's spelling
    assert [c.case_id for c in subset(cases, 2, seed=0)] == [c.case_id for c in subset(cases, 2, seed=0)]
    assert len(subset(cases, 2, seed=0)) == 2


def test_symptom_lists_still_read(tmp_path: Path) -> None:
    path = write(tmp_path, "dev.csv", "case_id,disease,symptoms\nd1,Acne,skin_rash;pus_filled_pimples\n")
    (case,) = load_cases(path)
    assert case.text == "A patient presents with: skin rash, pus filled pimples."


@pytest.mark.parametrize(("text", "labels", "error"), [
    ("id,answer,story\n1,a,b\n", None, r"cases.csv: the header has answer, id, story; expected case_id,label,text"),
    ("case_id,label,text\nv1,Flu,\n", None, r"cases.csv:2: the 'text' column is empty"),
    ("case_id,label,text\nv1,Flu,x\nv1,Flu,y\n", None, r"cases.csv:3: case_id 'v1' appears twice"),
    ("case_id,label,text\n", None, r"cases.csv: no cases below the header"),
    ("case_id,label,text\nv1,Gout,x\n", LABELS, r"case 'v1': its label 'Gout' is not in .*labels.txt"),
])
def test_bad_cases_name_the_file_and_row(tmp_path: Path, text: str, labels: str | None, error: str) -> None:
    path = write(tmp_path, "cases.csv", text)
    with pytest.raises(ValueError, match=error):
        cases = load_cases(path)
        class_set(cases, write(tmp_path, "labels.txt", labels) if labels else None, None)


@pytest.mark.model
def test_bench_runs_on_free_text_cases(tmp_path: Path) -> None:
    cases, labels = write(tmp_path, "cases.csv", CASES), write(tmp_path, "labels.txt", LABELS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYMPOSIUM_DB": str(tmp_path / "j.db")}
    done = subprocess.run([sys.executable, "-m", "tui.cli", "bench", "diagnosis", "--cases", str(cases), "--labels", str(labels),
                           "--models", "smollm2-135m,smollm2-135m", "--judge", "smollm2-135m", "--schedules", "none", "--max-rounds", "0",
                           "--turn-tokens", "32", "--limit", "2", "--jobs", "1", "--k", "1", "--out", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=480, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    outcomes = [json.loads(line) for line in (tmp_path / "out.cases.jsonl").read_text().splitlines()]
    assert len({o["case_id"] for o in outcomes}) == 2
    assert {o["truth"] for o in outcomes} <= {"Common cold", "Migraine", "Allergy"}
    predicted = {label for o in outcomes for label in o["prediction"]}
    # a system that gave no prediction has none: no "unknown" is invented
    assert predicted <= {"Common cold", "Migraine", "Allergy", "Influenza"}
    assert "SELF-JUDGING" in done.stdout  # the judge named is a debater's model: said in the terminal
    with sqlite3.connect(tmp_path / "j.db") as db:
        dump = "\n".join(db.iterdump())
        asked = "\n".join(r[0] for r in db.execute("SELECT subject FROM debates"))
    # the narratives themselves were put to the models: two cases' words as the runs' subjects (a
    # model's reply may say "itchy watery eyes" of its own accord, so the replies are not searched)
    chosen = [c for c in ("runny nose", "throbbing one-sided", "itchy watery") if c in asked]
    assert len(chosen) == 2, chosen
    assert "A patient presents with" not in dump
    bad = subprocess.run([sys.executable, "-m", "tui.cli", "bench", "diagnosis", "--cases", str(tmp_path / "nope.csv"),
                          "--models", "a,b", "--judge", "c"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "nope.csv" in bad.stderr
