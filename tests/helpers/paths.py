"""Paths the tests share."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEV_CSV = REPO.parent / "shared" / "data" / "symptom2disease" / "dev.csv"
