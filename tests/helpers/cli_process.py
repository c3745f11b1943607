"""The ``symposium`` command line run as a real subprocess, on a journal of the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def symposium(*args: str, db: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``symposium ARGS`` on the journal ``db`` (200 columns wide unless ``env`` says), its
    output captured as text; the exit status is the caller's to check."""
    full_env = {**os.environ, "SYMPOSIUM_DB": str(db), "COLUMNS": "200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, check=False)
