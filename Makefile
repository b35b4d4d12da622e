# Newcomer commands: `make run` (set up + main demo) and `make test` (set up + whole suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-all bench clean

# Python keeps the bytecode of what it imports (__pycache__), whatever the shell says: with
# PYTHONDONTWRITEBYTECODE set, as on some images, every process of the suite (pytest's workers,
# the CLI runs, each Ray daemon and worker) compiled torch's and Ray's modules anew, which was
# a third of the CPU of the Ray, torch and CLI tests (72 s instead of 48 s on 2 cores)
unexport PYTHONDONTWRITEBYTECODE

# --no-compile: Python compiles the modules it imports on first use, not all of torch's and
# ray's thousands up front (the install took 68 s with them, 27 s without, on 2 cores)
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-compile -e '.[dev,train]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m gradcode demo

# the suite on every core plus one process (pytest-xdist: many tests wait on injected delays or
# Ray, so one process more than cores keeps both busy); worksteal: a process that has run its
# share takes half of a busy one's (with `load`, the tests queued behind the quick experiments
# ran alone for the last ~30 s); `make test-all` runs one test at a time
JOBS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")
test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist worksteal

test-all: $(STAMP)
	$(PY) -m pytest -m ''

# every benchmarks/bench_*.py in turn; `make bench BENCH=--quick` for the short forms
bench: $(STAMP)
	$(PY) benchmarks/run_all.py $(BENCH)

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
