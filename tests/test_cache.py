"""The input cache: keyed by the file's bytes, checked, bypassed by --no-cache.

Each test has its own cache folder (``XDG_CACHE_HOME``), so what it finds there is its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import sys
import warnings
from pathlib import Path

import pytest
from test_run import PLATFORM_XML, tiny  # noqa: F401 (fixture)

from hetsched import cache
from hetsched.cli import main
from hetsched.engine.platform import load_platform
from hetsched.engine.workload import load_workload
from hetsched.metrics import resources

TIMED = ("out_schedule.csv", "out_mapping_events.csv")
"""Run outputs that hold the run's own timings (Batsim's ``simulation_time``, the heuristic's
latency)."""


def new_process() -> None:
    """Forget what this process keeps of the inputs it read, as a new ``hetsched`` command
    starts: the metrics' reading of a platform, kept by path and content
    (:mod:`hetsched.metrics.resources`; the tests read the same tiny platform as
    ``platform.xml``), which would otherwise never ask the cache folder again."""
    resources._table_of.cache_clear()


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder; the cache enabled; nothing kept in memory either
    (:func:`new_process`)."""
    new_process()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(cache.NO_CACHE, raising=False)
    return tmp_path / "xdg" / "hetsched"


class Counter:
    """How many times :func:`parse_lines` ran."""

    calls = 0


def parse_lines(path: Path) -> list[str]:
    """The lines of ``path``, counted: a module-level parser (its name is in the cache key)."""
    Counter.calls += 1
    return path.read_text().splitlines()


@pytest.fixture
def counter() -> type[Counter]:
    Counter.calls = 0
    return Counter


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.pickle")) if folder.is_dir() else []


def test_directory_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert cache.directory() == Path("/somewhere/hetsched")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")  # the XDG spec says so
    assert cache.directory() == Path.home() / ".cache" / "hetsched"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.directory() == Path.home() / ".cache" / "hetsched"


def test_second_load_comes_from_the_cache(tmp_path: Path, cache_home: Path,
                                          counter: type[Counter]) -> None:  # fmt: skip
    path = tmp_path / "a.txt"
    path.write_text("one\ntwo\n")
    assert cache.load(path, parse_lines, version=1) == ["one", "two"]
    assert cache.load(path, parse_lines, version=1) == ["one", "two"]
    assert counter.calls == 1
    assert len(entries(cache_home)) == 1
    cache.load(path, parse_lines, version=2)  # another format version: another entry
    assert counter.calls == 2 and len(entries(cache_home)) == 2


def test_a_changed_file_is_parsed_again(tmp_path: Path, cache_home: Path) -> None:
    """Same path, other bytes: a new key; the platform read is the new one."""
    path = tmp_path / "platform.xml"
    path.write_text(PLATFORM_XML)
    first = load_platform(path, energy=True)
    path.write_text(PLATFORM_XML.replace('speed="2000000000.0f"', 'speed="3000000000.0f"'))
    second = load_platform(path, energy=True)
    assert [m.speeds[0] for m in first.machines] == [2e9, 2e9, 1e9, 1e9]
    assert [m.speeds[0] for m in second.machines] == [3e9, 3e9, 1e9, 1e9]
    assert len(entries(cache_home)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "header"])
def test_a_damaged_entry_is_rejected_with_a_warning_and_rewritten(
    tmp_path: Path, cache_home: Path, counter: type[Counter], damage: str
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\ntwo\n")
    cache.load(path, parse_lines, version=1)
    [entry] = entries(cache_home)
    good = entry.read_bytes()
    bad = {
        "truncate": good[: len(good) - 3],
        "flip": good[:-1] + bytes([good[-1] ^ 1]),
        "empty": b"",
        "header": b"other-cache 9\n" + good[len(cache.MAGIC):],
    }[damage]
    entry.write_bytes(bad)
    with pytest.warns(cache.CacheWarning, match=r"corrupt or truncated: ignored"):
        assert cache.load(path, parse_lines, version=1) == ["one", "two"]
    assert counter.calls == 2
    assert entry.read_bytes() == good  # rewritten
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.load(path, parse_lines, version=1) == ["one", "two"]
    assert counter.calls == 2


def parse_nothing(path: Path) -> None:
    """A parser whose result is ``None`` (a platform without power, for the per-core watts)."""
    Counter.calls += 1


def test_a_none_result_is_cached_too(tmp_path: Path, cache_home: Path,
                                     counter: type[Counter]) -> None:  # fmt: skip
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    assert cache.load(path, parse_nothing, version=1) is None
    assert cache.load(path, parse_nothing, version=1) is None
    assert counter.calls == 1


class Gone:
    """A class that an older hetsched had (pickled in an entry, then removed)."""


def test_an_entry_of_classes_that_are_gone_is_warned_about_and_rewritten(
    tmp_path: Path, cache_home: Path, counter: type[Counter], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    cache.load(path, parse_lines, version=1)
    [entry] = entries(cache_home)
    payload = pickle.dumps(Gone())
    entry.write_bytes(cache.MAGIC + hashlib.sha256(payload).digest() + payload)
    monkeypatch.delattr(sys.modules[__name__], "Gone")
    with pytest.warns(cache.CacheWarning, match=r"cannot be read by this hetsched \(Attribute"):
        assert cache.load(path, parse_lines, version=1) == ["one"]
    assert counter.calls == 2
    assert cache.load(path, parse_lines, version=1) == ["one"] and counter.calls == 2


def test_the_same_bytes_elsewhere_share_an_entry_and_name_their_own_file(
    tmp_path: Path, cache_home: Path, tiny: Path  # noqa: F811
) -> None:
    copy = tmp_path / "elsewhere"
    copy.mkdir()
    for name in ("platform.xml", "workload.json"):
        (copy / name).write_bytes((tiny / name).read_bytes())
    platform = load_platform(tiny / "platform.xml", energy=True)
    workload = load_workload(tiny / "workload.json", "w0")
    assert len(entries(cache_home)) == 2
    moved = load_platform(copy / "platform.xml", energy=True)
    moved_workload = load_workload(copy / "workload.json", "w0")
    assert len(entries(cache_home)) == 2
    assert moved.path == copy / "platform.xml" and moved._reader.path == moved.path
    assert moved.machines == platform.machines
    assert moved_workload.path == (copy / "workload.json").absolute()
    assert moved_workload.jobs == workload.jobs


def test_a_file_changed_while_parsed_is_not_stored(tmp_path: Path, cache_home: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")

    def parse_and_change(source: Path) -> list[str]:
        lines = source.read_text().splitlines()
        source.write_text("two\n")
        return lines

    assert cache.load(path, parse_and_change, version=1) == ["one"]
    assert entries(cache_home) == []


def test_bypassed_neither_reads_nor_writes(tmp_path: Path, cache_home: Path,
                                           counter: type[Counter]) -> None:  # fmt: skip
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    with cache.bypassed():
        cache.load(path, parse_lines, version=1)
    assert entries(cache_home) == [] and counter.calls == 1
    cache.load(path, parse_lines, version=1)
    [entry] = entries(cache_home)
    entry.write_bytes(b"garbage")
    with cache.bypassed(), warnings.catch_warnings():
        warnings.simplefilter("error")  # the damaged entry is not even read
        assert cache.load(path, parse_lines, version=1) == ["one"]
    assert entry.read_bytes() == b"garbage" and counter.calls == 3
    assert cache.NO_CACHE not in os.environ  # restored


def test_an_unwritable_cache_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          counter: type[Counter]) -> None:  # fmt: skip
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # a file, not a folder
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    with pytest.warns(cache.CacheWarning, match="cannot write cache entry"):
        assert cache.load(path, parse_lines, version=1) == ["one"]


def run_outputs(arguments: list[str]) -> dict[str, bytes]:
    """``hetsched run`` with ``arguments``: its Batsim outputs and task tables, but the
    files that hold the run's own timings."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(arguments) == 0
    outdir = Path(arguments[arguments.index("-o") + 1])
    return {p.name: p.read_bytes() for p in sorted(outdir.glob("out_*")) if p.name not in TIMED}


def test_run_outputs_are_identical_cold_warm_and_without_cache(
    tiny: Path, cache_home: Path  # noqa: F811
) -> None:
    run = ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o"]
    cold = run_outputs([*run, "cold"])
    stored = {entry: entry.read_bytes() for entry in entries(cache_home)}
    # the engine's platform and workload, read once for the preflight and the run (which
    # checks the hosts' power from that read), and the metrics' annotations and resources
    assert {entry.name.split("-")[0] for entry in stored} == {
        "platform", "workload", "annotations", "resources"
    }
    warm = run_outputs([*run, "warm"])
    assert {entry: entry.read_bytes() for entry in entries(cache_home)} == stored
    for entry in stored:  # --no-cache reads nothing: a damaged entry goes unnoticed
        entry.write_bytes(b"damaged")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bypassed = run_outputs([*run, "bypassed", "--no-cache"])
    assert all(entry.read_bytes() == b"damaged" for entry in stored)  # nor writes
    assert "out_jobs.csv" in cold and "out_consumed_energy.csv" in cold
    assert cold == warm == bypassed


def test_run_warns_on_one_line_about_a_damaged_entry(
    tiny: Path, cache_home: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    run = ["run", "max-vpr-ph", "-p", "platform.xml", "-w", "workload.json", "-o"]
    run_outputs([*run, "first"])
    damaged = entries(cache_home)
    for entry in damaged:
        entry.write_bytes(entry.read_bytes()[:-1])
    capsys.readouterr()
    new_process()
    run_outputs([*run, "second"])
    lines = [line for line in capsys.readouterr().err.splitlines()
             if not line.startswith("hetsched run: note: ")]  # out_schedule.csv's notes
    assert len(lines) == len(damaged)  # each once: the first read rewrites it
    assert all(line.startswith("hetsched run: warning: cache entry ") for line in lines)
