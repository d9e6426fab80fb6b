# dpreg -- every target sets up .venv (and reinstalls when pyproject.toml changes) first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.dpreg-installed
PYTEST := $(BIN)/python -m pytest
XDIST  ?= -n 2

.PHONY: setup test test-slow test-all bench lint demo clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,fast]'
	$(BIN)/python -m pip install --quiet --no-deps 'ISLP>=0.4'  # data only; its deps would pull torch
	@touch $(STAMP)

setup: $(STAMP)

## fast suite (default CI): everything not marked slow
test: $(STAMP)
	$(PYTEST) -m "not slow" $(XDIST) -q

## statistical studies (coverage, long seeded checks, crash loops)
test-slow: $(STAMP)
	$(PYTEST) -m slow $(XDIST) -q -rA

test-all: $(STAMP)
	$(PYTEST) $(XDIST) -q

## performance benchmarks: each prints ratios against a baseline measured in the same run
bench: $(STAMP)
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

## the main job on bundled data
demo: $(STAMP)
	$(BIN)/dpreg demo --out demo-output

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis demo-output build dist
