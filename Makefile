# Set-up and entry points. Every target works on a fresh Debian machine with Python 3.11.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYBATSIM := pybatsim==3.2.1
BATSIM_PY := batsim-py==1.0.5

.PHONY: setup system-deps quickstart test lint bench bench-all bench-engine

$(BIN)/hetsched: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# pybatsim 3.2.1 pins pyzmq<23 (no build on Python 3.11): install it alone, its
	# real run-time needs come from our pyproject (pyzmq>=25, docopt, procset, ...).
	$(BIN)/pip install -q --no-deps $(PYBATSIM)
	# batsim-py 1.0.5 pins pandas==0.25.3 (no build on Python 3.11): same treatment, its
	# real needs are the [batsim-py] extra (docs/batsim-py.md).
	$(BIN)/pip install -q --no-deps $(BATSIM_PY)
	$(BIN)/pip install -q -e '.[dev,batsim-py]'
	touch $@

setup: $(BIN)/hetsched

# Debian packages the tests use: SimGrid's Python bindings load every generated
# platform; docker-compose validates docker/compose.yaml (no Docker engine needed).
SYSTEM_PACKAGES := python3-simgrid docker-compose
system-deps:
	@if ! /usr/bin/python3 -c 'import simgrid' 2>/dev/null || ! command -v docker-compose >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSTEM_PACKAGES); fi

# The main job: baselines and value heuristics on a real trace day, embedded engine.
quickstart: setup
	$(BIN)/hetsched compare --trace CEA-Curie-2011-2.1-cln --day 47 --preset khemka-20 --seed 1

test: setup system-deps
	$(BIN)/ruff check .
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check .

# bench: the six cases of issue 23 (one reference run of each family) in process, next to real
# Batsim's figures; bench-all: every benchmark; bench-engine: the embedded engine against real
# Batsim on Curie day 47 only (these need the reference runs: shared/ beside the repository or
# HETSCHED_BATSIM_REFERENCE).
bench: setup
	$(BIN)/python -m benchmarks.bench_cases

bench-all: setup
	$(BIN)/python -m benchmarks

bench-engine: setup
	$(BIN)/python -m benchmarks.bench_engine --repeat 3
