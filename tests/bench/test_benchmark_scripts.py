"""Every script in ``benchmarks/`` starts: its imports resolve and ``--help`` exits 0.

The benchmarks are run by hand, rarely, on a quiet machine, so nothing else in the suite runs
them; a script that no longer starts (an import reordered, a module beside it shadowing a
package) would be found only on the day its figures are wanted. ``--help`` runs every top-level
import and loads no model.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

SCRIPTS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if p.name != "__init__.py")


def _help(script: Path) -> tuple[str, int, str]:
    """Run ``script --help`` from outside the checkout, as a person would from anywhere."""
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=script.parent.parent.parent)
    return script.name, done.returncode, (done.stderr or done.stdout)[-600:]


@pytest.mark.timeout(300)  # about 20 interpreters that import llama_cpp, numpy, textual …
def test_every_benchmark_script_starts_and_prints_its_help() -> None:
    assert len(SCRIPTS) >= 15, "benchmarks/ lost its scripts?"
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_help, SCRIPTS))
    failed = [f"{name} (exit {code}):\n{tail}" for name, code, tail in results if code != 0]
    assert not failed, "benchmark scripts that do not start:\n\n" + "\n\n".join(failed)
