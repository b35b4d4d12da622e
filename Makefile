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
# ray's thousands up front (the install took 68 s with them, 27 s without, on 2 cores).
# The codes' dependencies first (NumPy, SciPy, numba: 15 s), then the extras (torch, Ray, pytest:
# 27 s of one core), under `make test` beside the numba kernels' compilation (tests/_warm.py,
# 65 s of CPU, which the suite would do next): pip alone keeps only one core busy
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-compile -e .
	$(WARM) $(PY) -m pip install -q --no-compile -e '.[dev,train]' && wait
	touch $(STAMP)

WARMING = OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) tests/_warm.py
test: WARM = $(WARMING) 0 2 >/dev/null 2>&1 & $(WARMING) 1 2 >/dev/null 2>&1 &

run: $(STAMP)
	$(PY) -m gradcode demo

# the suite on every core (pytest-xdist), the quick experiments in a process beside them
# (tests/_quick.py; a process more than cores cost more than it filled in the tests' waits:
# each process collects the suite, 12 s of CPU, and they contended); worksteal: a process
# that has run its share takes half of a busy one's (with `load`, the tests queued behind the
# quick experiments ran alone for the last ~30 s); `make test-all` runs one test at a time
JOBS ?= $(shell $(PYTHON) -c "import os; print(os.cpu_count() or 1)")
test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist worksteal

test-all: $(STAMP)
	$(PY) -m pytest -m ''

# every benchmarks/bench_*.py in turn; `make bench BENCH=--quick` for the short forms
bench: $(STAMP)
	$(PY) benchmarks/run_all.py $(BENCH)

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
