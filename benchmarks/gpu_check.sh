#!/usr/bin/env bash
# The transformers backend on a lent CUDA machine: a randomly initialised model of Llama-3.1-8B's
# shape through a short scripted debate (benchmarks/gpu_check.py), under 8 minutes.
#
# The lent machine has PyTorch and transformers, no llama.cpp, no vLLM, no weights and no network,
# and takes at most 64 MiB of files per call. So, here, once:
#
#   benchmarks/gpu_check.sh --prepare    # the bundled SmolLM2 tokenizer as a folder, and the wheels
#                                        # Symposium's backend needs beyond torch (pydantic, platformdirs,
#                                        # llguidance) into .cache/gpu_check (about 15 MB, ignored by git)
#   benchmarks/gpu_check.sh --dry-run    # the same code path on this CPU, tiny config, in seconds
#
# and there (carry .cache/gpu_check):
#
#   benchmarks/gpu_check.sh              # tokens/s, GPU memory, the backend's checks; exit 1 on a failed check
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=.cache/gpu_check
PY=${PYTHON:-python3}
[[ -x .venv/bin/python && -z "${PYTHON:-}" ]] && PY=.venv/bin/python

if [[ "${1:-}" == "--prepare" ]]; then
  mkdir -p "$CACHE/wheels"
  PYTHONPATH=. "$PY" - "$CACHE/tokenizer" <<'EOF'
import sys
from pathlib import Path

from transformers import AutoTokenizer

from backends.registry import load_registry
from backends.sources import resolve_path

gguf = resolve_path(load_registry(user=False).get("smollm2-135m"))
tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
if not tokenizer.chat_template:
    from backends.gguf_meta import read_gguf
    tokenizer.chat_template = read_gguf(gguf).chat_template
tokenizer.save_pretrained(sys.argv[1])
print(f"tokenizer: {sys.argv[1]} ({len(tokenizer)} tokens, chat template {'yes' if tokenizer.chat_template else 'no'})")
EOF
  # Pure-Python wheels once; pydantic-core and llguidance per CPython version a lent machine may run.
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: -d "$CACHE/wheels" \
    pydantic==2.14.3 platformdirs==4.14.7 annotated-types==0.7.0 typing-inspection==0.4.5 typing-extensions==4.16.0
  for version in 3.10 3.11 3.12 3.13; do
    for wheel in pydantic-core==2.50.4 llguidance==1.9.1; do
      "$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$version" \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$CACHE/wheels" "$wheel" 2>/dev/null \
        || echo "no $wheel wheel for Python $version here (a lent machine on that Python installs without it)"
    done
  done
  du -sh "$CACHE"
  exit 0
fi

if ! "$PY" -c "import pydantic, platformdirs, jinja2" 2>/dev/null; then
  echo "installing Symposium's backend dependencies from $CACHE/wheels (no network here)"
  "$PY" -m pip install --quiet --no-index --find-links "$CACHE/wheels" pydantic platformdirs
fi
"$PY" -c "import llguidance" 2>/dev/null \
  || "$PY" -m pip install --quiet --no-index --find-links "$CACHE/wheels" llguidance 2>/dev/null \
  || echo "llguidance not installed: structured replies take the validated-retry path"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
exec timeout 450 env PYTHONPATH=. "$PY" benchmarks/gpu_check.py --tokenizer "$CACHE/tokenizer" "$@"
