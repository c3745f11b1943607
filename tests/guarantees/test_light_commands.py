"""The journal commands start without the numerical and model libraries.

``symposium history``, ``show``, ``export``, ``verify`` and ``paths`` read a journal and print;
numpy and scipy (the metrics), llama_cpp and torch (the models) cost a second or more to import
and none of them is needed to list, show or check a debate. The definitions every command reads
name the mathematics' libraries lazily (:mod:`protocols.core.lazy`); an import added at the top
of a module on the way (a protocol's package, a measure, a backend's base) brings them back,
and this test names the command it slowed.

Each command runs in a fresh interpreter on a real journal holding an EVINCE-shaped debate
with evidence, so that ``show`` and ``export`` render its outcome and sections.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from store.journal import Journal
from tests.helpers.paths import REPO
from tests.helpers.sealed_journal import ID, record_every_kind

HEAVY = ("numpy", "scipy", "llama_cpp", "torch", "transformers", "vllm", "spacy")

RUN = """
import json, runpy, sys
sys.argv = ["symposium", *json.loads(sys.argv[1])]
try:
    runpy.run_module("tui.cli", run_name="__main__")
except SystemExit as exit:
    code = exit.code
else:
    code = 0
print(json.dumps({"code": code, "loaded": sorted(m for m in %r if m in sys.modules)}), file=sys.stderr)
""" % (HEAVY,)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("light")
    os.environ.setdefault("SYMPOSIUM_CONFIG_DIR", str(folder / "config"))
    with Journal(folder / "journal.db") as j:
        record_every_kind(j)
    return folder / "journal.db"


@pytest.mark.parametrize("args", [["history"], ["paths"], ["show", ID[:8]], ["export", ID[:8]],
                                  ["export", ID[:8], "--format", "json"], ["verify"]], ids=" ".join)
def test_a_journal_command_imports_no_numerical_or_model_library(journal: Path, args: list[str]) -> None:
    # the config folder the journal was signed from: verify finds the user's own key
    env = {**os.environ, "SYMPOSIUM_DB": str(journal), "PYTHONPATH": str(REPO), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(args)], capture_output=True, text=True, env=env,
                          cwd=journal.parent, timeout=120, check=False)
    said = json.loads(done.stderr.strip().splitlines()[-1])
    assert said["code"] in (0, None), done.stderr  # verify: 0 is "ok" with the user's own key
    assert done.stdout.strip(), f"symposium {' '.join(args)} printed nothing"
    assert said["loaded"] == [], f"symposium {' '.join(args)} imported {said['loaded']}"
