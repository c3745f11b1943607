"""Fixtures shared by the journal's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.journal import Journal
from tests.helpers.sealed_journal import record_every_kind


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    """A journal holding every kind of row, each sealed (tests/helpers/sealed_journal.py)."""
    path = tmp_path / "journal.db"
    with Journal(path) as j:
        record_every_kind(j)
    return path
