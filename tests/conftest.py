"""Test-suite hygiene shared by every test file, and the fake ``batsim`` fixture."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from hypothesis import settings

from hetsched.cache import NO_CACHE

# The tests are grouped in folders named like the packages they test (tests/heuristics/value/
# tests hetsched.heuristics.value). Test modules share fixtures and test data by module name
# (`from test_run import tiny`, `from test_fuzz_platform import XML`), across folders too:
# every folder of the tree is on sys.path, so a test module's file name is unique in the tree.
_TESTS = Path(__file__).resolve().parent
_FOLDERS = sorted(p for p in _TESTS.rglob("*") if p.is_dir() and not p.name.startswith((".", "_")))
for _folder in _FOLDERS:
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# The input cache (hetsched.cache) of the test session: a fresh folder, never the user's
# ~/.cache/hetsched; the processes the tests start inherit it. Every run of the suite thus
# parses each input once, then reads it from the cache (both paths are exercised). The folder
# goes when the session's interpreter exits.
_CACHE_HOME = tempfile.TemporaryDirectory(prefix="hetsched-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME.name
os.environ.pop(NO_CACHE, None)

# Hypothesis: derandomised in the test suite (CI never fails on a newly drawn input: the
# examples are a function of the test), random with more examples under `make fuzz`
# (HYPOTHESIS_PROFILE=fuzz), which keeps finding new inputs. A test's own
# @settings(max_examples=...) still wins over the profile's. No deadline: the machine is
# shared, and an example's time says nothing of its correctness (speed is in benchmarks/).
settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          print_blob=True)
settings.register_profile("fuzz", derandomize=False, max_examples=1000, deadline=None,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# pybatsim's NetworkHandler never terminates its ZeroMQ context. If such a context is
# garbage-collected later, during another test, with a socket still holding an unsent
# message, pyzmq's finaliser terminates it with an infinite linger and the whole suite
# hangs. Every context a test creates is recorded here and destroyed (linger 0) when that
# test ends, so a leak is cleaned up where it happened.
_CONTEXTS: weakref.WeakSet[zmq.Context] = weakref.WeakSet()
_original_init = zmq.Context.__init__


def _recording_init(self: zmq.Context, *args: object, **kwargs: object) -> None:
    _original_init(self, *args, **kwargs)
    _CONTEXTS.add(self)


zmq.Context.__init__ = _recording_init  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _destroy_zmq_contexts() -> Iterator[None]:
    yield
    for context in list(_CONTEXTS):
        if not context.closed:
            context.destroy(linger=0)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Inputs tried per fuzz target (tests/fuzzing.py), when fuzz tests ran."""
    fuzzing = sys.modules.get("fuzzing")
    if fuzzing is not None and fuzzing.TALLY:
        terminalreporter.section("fuzz targets")
        for line in fuzzing.report_lines():
            terminalreporter.write_line(line)
FAKE_BATSIM = Path(__file__).with_name("test_run_fake_batsim.py")
"""A fake ``batsim`` (Batsim's side of the protocol) for runs with ``--engine batsim``."""


@pytest.fixture
def fake_batsim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the fake ``batsim`` first on PATH; returns the file its command line goes to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable = bin_dir / "batsim"
    executable.write_text(f"#!{sys.executable}\n" + FAKE_BATSIM.read_text())
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    argv = tmp_path / "batsim-argv.json"
    monkeypatch.setenv("FAKE_BATSIM_ARGV", str(argv))
    return argv


FAKE_BATSCHED = Path(__file__).with_name("fake_batsched.py")
"""A stand-in ``batsched`` (batsched 1.4.0's command line): replayed replies or a tiny FCFS."""


@pytest.fixture
def fake_batsched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in ``batsched`` as an executable in ``tmp_path/batsched-bin`` (not on PATH:
    give it with ``--batsched``, or put its folder on PATH); its command line goes to
    ``tmp_path/batsched-argv.json``."""
    bin_dir = tmp_path / "batsched-bin"
    bin_dir.mkdir()
    executable = bin_dir / "batsched"
    executable.write_text(f"#!{sys.executable}\n" + FAKE_BATSCHED.read_text())
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("FAKE_BATSCHED_ARGV", str(tmp_path / "batsched-argv.json"))
    return executable
