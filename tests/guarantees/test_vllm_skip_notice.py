"""A vLLM test that did not run says so where CI's log is read.

`make test-vllm` is the one place the vLLM tests run on the real engine; a machine vLLM cannot
run on skips them. A skip among many passes is easy to miss, so both layers announce it: the
Makefile prints ``!!! vLLM TESTS SKIPPED: <why>`` instead of running pytest, and pytest's own
summary (``tests/conftest.py``) ends with ``!!! N vLLM TEST(S) SKIPPED: <why>`` whenever a
``vllm``-marked test skipped. Both are run here for real (make and a pytest subprocess).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed here")
def test_make_says_why_it_skipped_the_vllm_tests() -> None:
    why = "none: a machine this test invents"
    done = subprocess.run(["make", "-s", "test-vllm", f"VLLM_FLAVOUR={why}"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"!!! vLLM TESTS SKIPPED: {why}"


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None,
                    reason="vLLM is installed here, so its tests would run, not skip (`make test-vllm` runs them)")
def test_pytest_ends_by_saying_that_vllm_tests_skipped_and_why() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-m", "vllm",
                           "tests/backends/test_vllm_real.py"], cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    notice = [line for line in lines if "vLLM TEST(S) SKIPPED" in line]
    assert notice, done.stdout[-3000:]
    assert notice[0].startswith("!!! ") and "not installed" in notice[0], notice
