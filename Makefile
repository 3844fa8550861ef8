# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
STAMP := $(VENV)/.installed
LINTED := pytest_chunkeval tests benchmarks example_project docs/hooks

.PHONY: venv demo test lint unit docs clean

venv: $(STAMP)

# torch is pinned (constraints.txt) to the CPU build before anything can pull it in.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c constraints.txt "torch==2.13.0"
	$(PIP) install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider

# Without -q: mkdocs stops counting warnings under -q and --strict would pass.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

test: lint unit docs

# The main job: the example RAG app's retrieval tests on the embedded defaults
# (sentence-transformers all-MiniLM-L6-v2 + in-process Chroma), with reports.
demo: $(STAMP)
	cd example_project && ../$(BIN)/python -m pytest \
		--chunkeval-html report.html --chunkeval-md retrieval-summary.md

clean:
	rm -rf $(VENV) .chunkeval site .mypy_cache .ruff_cache
