# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
STAMP := $(VENV)/.installed
LINTED := pytest_chunkeval tests benchmarks example_project docs/hooks .ci

# The part of the suite that needs no torch, also on the oldest and the newest Python
# the package claims (pyenv interpreters here; the CPU torch wheel is at hand for 3.11
# only). 3.12 lies between them; `make compat COMPAT_PYTHONS=3.12` runs it. Two, not
# three, keep `make test` within its time on a 2-core CI machine.
COMPAT_PYTHONS ?= 3.10 3.13

COMPAT_MARKS := not slow and not perf and not dist and not once and (not pytester or compat_smoke)

.PHONY: venv demo test lint unit compat docs docs-gen clean

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

# The package's and the tests' bytecode is written first (.ci/write_bytecode.py says
# why: PYTHONDONTWRITEBYTECODE). On every core (pytest-xdist), then the tests that assert a wall-clock budget
# (marked perf) alone and serially, where the rest's load cannot fail them (only
# the files naming the marker are collected again).
unit: $(STAMP)
	$(BIN)/python .ci/write_bytecode.py
	$(BIN)/python -m pytest -p no:cacheprovider -n auto -m "not perf"
	$(BIN)/python -m pytest -p no:cacheprovider -m perf $$(grep -l "mark.perf" tests/*.py)

# A venv per Python with the torch-free stack; tests needing torch or Chroma skip there.
# What it proves is that the package works on that Python: its core, and each plugin
# path once. So the plugin's runs under pytest-xdist (marked dist) and every test
# running pytest or Python in a child (marked pytester by tests/conftest.py; 44% of the
# rest's time) are left out, except the plugin runs marked compat_smoke; and what does
# not depend on the Python (marked once: the tree's layout, the report in a browser;
# 20% of what is left). `make unit` runs them all.
# A missing interpreter is a warning on a laptop and an error in CI.
.venv-%/.installed: pyproject.toml
	@py=$$(sh .ci/find-python $* || true); \
	if [ -z "$$py" ]; then \
		if [ -n "$${CI:-}" ]; then echo "error: python$* not found" >&2; exit 1; fi; \
		echo "warning: python$* not found; its compat run is skipped" >&2; exit 0; \
	fi; \
	test -x .venv-$*/bin/python || $$py -m venv .venv-$*; \
	.venv-$*/bin/python -m pip install --quiet --upgrade pip; \
	.venv-$*/bin/python -m pip install --quiet -e ".[test-light]"; \
	touch $@

compat: $(foreach v,$(COMPAT_PYTHONS),.venv-$(v)/.installed)
	@for v in $(COMPAT_PYTHONS); do \
		test -x .venv-$$v/bin/python || continue; \
		echo "== torch-free suite on Python $$v"; \
		.venv-$$v/bin/python .ci/write_bytecode.py || exit 1; \
		.venv-$$v/bin/python -m pytest -p no:cacheprovider -q -n auto -m "$(COMPAT_MARKS)" || exit 1; \
	done

# Without -q: mkdocs stops counting warnings under -q and --strict would pass.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

# The generated sections of docs/*.md (options, CLI help, includes...), written
# between their begin/end markers; tests/test_docs_generated.py fails when stale.
docs-gen: $(STAMP)
	$(BIN)/python -m docs.hooks.generate

test: lint unit compat docs

# The main job: the example RAG app's retrieval tests on the embedded defaults
# (sentence-transformers all-MiniLM-L6-v2 + in-process Chroma), with reports.
demo: $(STAMP)
	cd example_project && ../$(BIN)/python -m pytest \
		--chunkeval-html=report.html --chunkeval-md=retrieval-summary.md

clean:
	rm -rf $(VENV) .venv-3.* .chunkeval site .mypy_cache .ruff_cache
