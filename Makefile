# Newcomer commands: `make run` (set up + main demo) and `make test` (set up + whole suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-all bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,train]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m gradcode demo

# the suite on every core (pytest-xdist); `make test-all` runs one test at a time
test: $(STAMP)
	$(PY) -m pytest -n auto

test-all: $(STAMP)
	$(PY) -m pytest -m ''

# every benchmarks/bench_*.py in turn; `make bench BENCH=--quick` for the short forms
bench: $(STAMP)
	$(PY) benchmarks/run_all.py $(BENCH)

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
