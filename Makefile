# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
STAMP := $(VENV)/.installed

.PHONY: venv demo test lint unit clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c constraints.txt "torch==2.13.0"
	$(PIP) install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check pytest_chunkeval tests benchmarks
	$(BIN)/ruff format --check pytest_chunkeval tests benchmarks
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider

test: lint unit

demo: $(STAMP)
	$(BIN)/chunkeval eval --benchmark general --chunker recursive:200:0 --chunker fixed:200:0

clean:
	rm -rf $(VENV) .chunkeval .mypy_cache .ruff_cache
