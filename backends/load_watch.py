"""Every load of a model's weights announces itself here first, so a run can forbid loads or list them.

Loading weights takes from a second to minutes, and the test suite's fast set (``make test-fast``)
must load none. Two environment variables, read at each load, so that a child process started
with them (``symposium run`` from a test, a ``llama_cpp.server``) obeys them as well:

* ``SYMPOSIUM_FORBID_MODEL_LOADS=1``: a load raises :class:`ModelLoadForbidden` at once, naming
  the model, instead of loading it;
* ``SYMPOSIUM_MODEL_LOAD_LOG=PATH``: a line per load (process id, backend, model id, file) is
  appended to PATH; ``tests/conftest.py`` reads it to fail a test that loaded a model without
  carrying the ``model`` mark.

The places that load weights call :func:`loading`: llama.cpp's in-process backend, the
``llama_cpp.server`` that ``symposium serve llamacpp`` starts, transformers and vLLM.
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import BackendUnavailable

FORBID = "SYMPOSIUM_FORBID_MODEL_LOADS"
LOG = "SYMPOSIUM_MODEL_LOAD_LOG"


class ModelLoadForbidden(BackendUnavailable):
    """A model was about to be loaded where loads are switched off (``SYMPOSIUM_FORBID_MODEL_LOADS``)."""


def loading(backend: str, model_id: str, path: Path | str) -> None:
    """Say that ``backend`` is about to load ``model_id`` from ``path``: logged where a log is
    asked for, refused where loads are forbidden (after logging, so the log names it too)."""
    log = os.environ.get(LOG)
    if log:
        with open(log, "a", encoding="utf-8") as out:  # one short write per line: O_APPEND keeps lines whole
            out.write(f"{os.getpid()}\t{backend}\t{model_id}\t{path}\n")
    if os.environ.get(FORBID, "") not in ("", "0"):
        raise ModelLoadForbidden(
            f"model {model_id!r} ({backend}, {path}) was about to be loaded, but {FORBID} is set "
            "(`make test-fast` runs only the tests that load no model): a test that needs a model "
            "carries the `model` mark (@pytest.mark.model, or pytestmark = pytest.mark.model in its file)")
