"""Paths the tests share."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The development split sits beside the checkout (``../shared``); a clone elsewhere points
#: at it with SYMPOSIUM_DEV_CSV.
DEV_CSV = Path(os.environ.get("SYMPOSIUM_DEV_CSV") or REPO.parent / "shared" / "data" / "symptom2disease" / "dev.csv")


def dev_csv() -> Path:
    """The dev split, or a failure that says where it was looked for and how to point at it."""
    if not DEV_CSV.is_file():
        raise FileNotFoundError(f"{DEV_CSV}: the Symptom2Disease dev split is not there; "
                                "clone next to ../shared or set SYMPOSIUM_DEV_CSV to the file")
    return DEV_CSV
