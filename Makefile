# dpreg -- every target sets up .venv (and reinstalls when pyproject.toml changes) first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.dpreg-installed
RUNTIME := $(VENV)/.dpreg-runtime
DOCSTAMP := $(VENV)/.dpreg-docs
PYTEST := $(BIN)/python -m pytest
# loadgroup: tests marked xdist_group("spark") share one worker, so one JVM starts, not two
XDIST  ?= -n 2 --dist loadgroup

.PHONY: setup test test-slow test-all bench lint lint-imports wheel-check demo clean reproduce \
        reproduce-quick results-page audit api-snapshot pin-notes docs

# what the demo needs (what `pip install '.[cli,plots,fast]'` gives a user): the library, the
# `dpreg` command ([cli]), the demo's figure ([plots]) and numba ([fast]); docs/install.md
$(RUNTIME): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[cli,plots,fast]'
	@touch $(RUNTIME)

# the development tools on top (tests, lint) and every extra ([all]: the reproductions' and the
# auditor's parts, Spark -- CI runs the Spark tests, local[2] -- and the `data` extra, plotnine's
# Diamonds, whose tests skip when it is absent), and ISLP's data sets
$(STAMP): $(RUNTIME) pyproject.toml Makefile
	$(BIN)/python -m pip install --quiet -e '.[dev,all]'
	$(BIN)/python -m pip install --quiet --no-deps 'ISLP>=0.4'  # data only; its deps would pull torch
	@touch $(STAMP)

# the site generator; mkdocstrings reads the sources without importing them, so no other extra
$(DOCSTAMP): $(RUNTIME) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[docs,fast]'
	@touch $(DOCSTAMP)

setup: $(STAMP)

## fast suite (default CI): everything not marked slow
test: $(STAMP)
	$(PYTEST) -m "not slow" $(XDIST) -q

## statistical studies (coverage, long seeded checks, crash loops)
test-slow: $(STAMP)
	$(PYTEST) -m slow $(XDIST) -q -rA

test-all: $(STAMP)
	$(PYTEST) $(XDIST) -q

## privacy audit suite: every mechanism, core and estimator on >= 3 worst-case neighbouring
## pairs, N = 1e5 releases per side, all must pass at alpha = 1e-6 (the estimator/multivariate
## loops need ~115 CPU-minutes at 1e5, ~1.6 h on 2 cores, plus ~90 for the per-group AdaSSP table:
## AUDIT_LOOP_SAMPLES=5000 lowers their N)
AUDIT_LOOP_SAMPLES ?= 100000
audit: $(STAMP)
	rm -rf audit-output
	DPREG_AUDIT=1 DPREG_AUDIT_OUT=audit-output DPREG_AUDIT_LOOP_SAMPLES=$(AUDIT_LOOP_SAMPLES) $(PYTEST) tests/audit/test_audit_suite.py $(XDIST) -q -rA
	$(BIN)/python -m dpreg.audit.report audit-output

## performance benchmarks: each prints ratios against a baseline measured in the same run
bench: $(STAMP)
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

## style, types, the package's layers and the wheel's contents (CI runs this and `make test`)
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks studies examples
	$(BIN)/mypy
	$(MAKE) --no-print-directory lint-imports wheel-check

## the layers and no import cycles ([tool.importlinter] in pyproject.toml; docs/architecture.md)
lint-imports: $(STAMP)
	$(BIN)/lint-imports --no-cache

## the wheel ships the library only: build it offline and list it (tests/wheel_contents.py)
wheel-check: $(STAMP)
	$(BIN)/python tests/wheel_contents.py

## rewrite tests/snapshots/public_api.txt from the live API (after checking that no user-visible
## name or parameter is lost; commit it with the change) -- docs/architecture.md
api-snapshot: $(STAMP)
	DPREG_UPDATE_API_SNAPSHOT=1 $(PYTEST) tests/test_api_snapshot.py -q -p no:randomly
	@git diff --stat -- tests/snapshots/public_api.txt || true

## record that docs/privacy notes were re-read against their (changed) code: refresh the hashes of
## their pinned functions -- all stale notes, or NOTES="docs/privacy/a.md ..." (docs/architecture.md)
NOTES ?=
pin-notes: $(STAMP)
	$(BIN)/python tests/privacy_pins.py --update $(NOTES)
	@$(BIN)/python tests/privacy_pins.py

## paper reproductions (dpreg reproduce --list): full runs resume where they stopped, then the
## results page docs/results.md is regenerated from their summaries (docs/results/)
REPRO_OUT     ?= bench-output/reproduce
REPRO_WORKERS ?= 2
SPECS := alabi-fig5 alabi-fig6 alabi-fig6-noclip alabi-fig7 alabi-fig8 alabi-stock alabi-bikeshare \
         sarathy-vadhan-coverage bain-sim bain-real tang-compare amin-r2

reproduce: $(STAMP)
	@for s in $(SPECS); do $(BIN)/dpreg reproduce $$s --out $(REPRO_OUT) --resume --workers $(REPRO_WORKERS) || exit 1; done
	$(BIN)/python -m studies.report $(REPRO_OUT)

## one reproduction, e.g. make reproduce-alabi-fig5
reproduce-%: $(STAMP)
	$(BIN)/dpreg reproduce $* --out $(REPRO_OUT) --resume --workers $(REPRO_WORKERS)

## every reproduction on its reduced grid (seconds each; not evidence)
reproduce-quick: $(STAMP)
	@for s in $(SPECS); do $(BIN)/dpreg reproduce $$s --quick --out $(REPRO_OUT) || exit 1; done

results-page: $(STAMP)
	$(BIN)/python -m studies.report $(REPRO_OUT)

## the main job on bundled data (installs the library with the [cli,plots,fast] extras only)
demo: $(RUNTIME)
	$(BIN)/dpreg demo --out demo-output

## the documentation site with the API reference generated from the docstrings (site/);
## --strict: a broken page, link or docstring section fails the build
docs: $(DOCSTAMP)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf site $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis demo-output audit-output build dist
