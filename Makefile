# Set-up and entry points. Every target works on a fresh Debian machine with Python 3.11.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYBATSIM := pybatsim==3.2.1
BATSIM_PY := batsim-py==1.0.5

.PHONY: setup system-deps quickstart test lint fuzz bench bench-all bench-engine \
	docker-deps docker-daemon docker-base wheels docker-images

# `$(PY) -m venv` needs ensurepip, which Debian ships apart in python3-venv (absent from a
# fresh Debian 12): installed here when run as root, else named in the error.
$(BIN)/hetsched: pyproject.toml examples/my-heuristic/pyproject.toml
	@if ! $(PY) -c 'import ensurepip' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; \
	  else \
	    echo "make setup: $(PY) has no ensurepip, which $(PY) -m venv needs: install the" \
	      "Debian package python3-venv (sudo apt-get install python3-venv), then run make setup again" >&2; \
	    exit 1; \
	  fi; \
	fi
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,batsim-py]'
	# pybatsim 3.2.1 pins pyzmq<23 (no build on Python 3.11): installed alone, its real
	# run-time needs came with our pyproject above (pyzmq>=25, docopt, procset, ...).
	# batsim-py 1.0.5 pins pandas==0.25.3 (no build on Python 3.11): same treatment, its
	# real needs are the [batsim-py] extra (docs/batsim-py.md). Last, and with --no-deps,
	# pip checks neither's pins, so it prints no "dependency resolver" ERROR lines for
	# them; any other pip error still stops make.
	$(BIN)/pip install -q --no-deps $(PYBATSIM) $(BATSIM_PY)
	# the example of a heuristic of one's own (docs/your-heuristic.md): its entry point is
	# what the tests run through hetsched list, check, run and compare; it needs nothing
	# beyond hetsched, hence --no-deps
	$(BIN)/pip install -q --no-deps -e examples/my-heuristic
	touch $@

setup: $(BIN)/hetsched

# Debian packages the tests use: SimGrid's Python bindings load every generated
# platform; docker-compose validates docker/compose.yaml and runs it in the Docker tests.
SYSTEM_PACKAGES := python3-simgrid docker-compose
system-deps:
	@if ! /usr/bin/python3 -c 'import simgrid' 2>/dev/null || ! command -v docker-compose >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSTEM_PACKAGES); fi

# The main job: baselines and value heuristics on a real trace day, embedded engine.
quickstart: setup
	$(BIN)/hetsched compare --trace CEA-Curie-2011-2.1-cln --day 47 --preset khemka-20 --seed 1

test: setup system-deps docker-images
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

# The suite's Hypothesis tests are derandomised (tests/conftest.py); the fuzz run draws new
# inputs: every test that uses Hypothesis, random, with FUZZ_EXAMPLES inputs per fuzz target.
FUZZ_EXAMPLES ?= 1000
fuzz: setup
	HYPOTHESIS_PROFILE=fuzz HETSCHED_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
	  $(BIN)/pytest -q -p no:cacheprovider $$(grep -rl --include='test_*.py' hypothesis tests)

# bench: six cases (one reference run of each family) in process, next to real
# Batsim's figures, then whole commands (each Machovec family against EASY on a full-size day,
# a stock scheduler's command against its simulation); bench-all: every benchmark; bench-engine: the embedded engine against real
# Batsim on Curie day 47 only (these need the reference runs: shared/ beside the repository or
# HETSCHED_BATSIM_REFERENCE).
bench: setup
	$(BIN)/python -m benchmarks.bench_cases

bench-all: setup
	$(BIN)/python -m benchmarks

bench-engine: setup
	$(BIN)/python -m benchmarks.bench_engine --repeat 3

# Docker (docs/run.md, "Docker"), offline: Debian's docker.io, a daemon started when none
# answers (a daemon that cannot start is an error saying why), a base image made with
# debootstrap from this machine's Debian mirror (once, kept by name), the wheels of hetsched
# and its dependencies built here, and from them, with no registry and no PyPI, the images
# the tests run: the schedulers and the Batsim-compatible one (entry point `hetsched batsim`).
DOCKER_PACKAGES := docker.io debootstrap
DOCKER_BASE_IMAGE ?= hetsched/debian-python:bookworm
SCHEDULER_IMAGE ?= hetsched:latest
LOCAL_BATSIM_IMAGE ?= hetsched/batsim:4.2.1
WHEELHOUSE := docker/wheels

docker-deps:
	@if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DOCKER_PACKAGES); fi

docker-daemon: docker-deps
	docker/daemon

docker-base: docker-daemon
	docker/base-image $(DOCKER_BASE_IMAGE)

# pybatsim without its pins, as in setup; `pip wheel .` builds hetsched and its dependencies.
# SOURCE_DATE_EPOCH: the same sources give the same wheel, so Docker's cache keeps the images.
wheels: setup
	$(BIN)/pip wheel -q --wheel-dir $(WHEELHOUSE) --no-deps $(PYBATSIM)
	SOURCE_DATE_EPOCH=315532800 $(BIN)/pip wheel -q --wheel-dir $(WHEELHOUSE) .

# The prune removes the images these builds replaced (untagged, labelled by docker/Dockerfile).
docker-images: docker-base wheels
	docker build -q -f docker/Dockerfile --build-arg BASE_IMAGE=$(DOCKER_BASE_IMAGE) \
	  --build-arg OFFLINE=1 --target scheduler -t $(SCHEDULER_IMAGE) .
	docker build -q -f docker/Dockerfile --build-arg BASE_IMAGE=$(DOCKER_BASE_IMAGE) \
	  --build-arg OFFLINE=1 --target batsim -t $(LOCAL_BATSIM_IMAGE) .
	docker image prune -f --filter label=org.hetsched.image=true >/dev/null
