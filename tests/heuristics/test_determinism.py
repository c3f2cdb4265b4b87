"""Determinism: the same inputs, options and seeds give byte-identical files.

Two processes with different ``PYTHONHASHSEED`` (so that set and dict orders that depend on
string hashes differ) run the case of ``determinism_run.py``: platform generation, trace
conversion with value and utility functions, and every heuristic of the registry on the
embedded engine with the checker on. The first process runs it twice, in two folders.
Every file of the three folders must have the same bytes: platform XML, workload JSON, and
for each heuristic Batsim's output files, the mapping events, the scheduler log and the
summary metrics.

The only exceptions are wall-clock measurements, removed before comparing and named here:
``scheduling_time`` and ``simulation_time`` of ``out_schedule.csv`` (seconds the engine
spent), ``seconds`` of ``out_mapping_events.csv`` (the mapping-event latency), and
``wall_seconds`` and ``mapping_latency_p50/p95/max`` of ``summary.json``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.heuristics.registry import HEURISTICS

WALL_CLOCK_COLUMNS = {
    "out_schedule.csv": ("scheduling_time", "simulation_time"),
    "out_mapping_events.csv": ("seconds",),
}
WALL_CLOCK_KEYS = {
    "summary.json": ("wall_seconds", "mapping_latency_p50", "mapping_latency_p95",
                     "mapping_latency_max"),
}
pytestmark = pytest.mark.skipif(
    not (TRACE_DIR / "KTH-SP2-1996-2.1-cln.swf.gz").is_file(),
    reason=f"the KTH trace is not in {TRACE_DIR} (set HETSCHED_TRACE_DIR)",
)


def comparable(path: Path) -> bytes:
    """The file's bytes, wall-clock columns or keys removed (see the module docstring)."""
    data = path.read_bytes()
    if path.name in WALL_CLOCK_COLUMNS:
        rows = list(csv.reader(io.StringIO(data.decode())))
        drop = [rows[0].index(column) for column in WALL_CLOCK_COLUMNS[path.name]]
        kept = [[v for i, v in enumerate(row) if i not in drop] for row in rows]
        return "\n".join(",".join(row) for row in kept).encode()
    if path.name in WALL_CLOCK_KEYS:
        summary = json.loads(data)
        for key in WALL_CLOCK_KEYS[path.name]:
            assert key in summary, f"{path}: no {key!r}: update WALL_CLOCK_KEYS"
            summary.pop(key)
        return json.dumps(summary, sort_keys=True).encode()
    return data


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): comparable(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_same_inputs_same_bytes_across_runs_and_processes(tmp_path: Path) -> None:
    folders = {name: tmp_path / name for name in ("a1", "a2", "b")}
    for folder in folders.values():
        folder.mkdir()
    script = str(Path(__file__).resolve().parents[1] / "determinism_run.py")
    environment = {**os.environ, "HETSCHED_TRACE_DIR": str(TRACE_DIR)}
    processes = [
        subprocess.Popen([sys.executable, script, str(folders["a1"]), str(folders["a2"])],
                         env={**environment, "PYTHONHASHSEED": "0"}, stderr=subprocess.PIPE),
        subprocess.Popen([sys.executable, script, str(folders["b"])],
                         env={**environment, "PYTHONHASHSEED": "4242"}, stderr=subprocess.PIPE),
    ]
    for process in processes:
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err.decode()[-3000:]
    reference = files(folders["a1"])
    expected = {"platform.xml", "workload.json"} | {
        f"runs/{name}/{file}" for name in HEURISTICS
        for file in ("out_jobs.csv", "out_schedule.csv", "out_consumed_energy.csv",
                     "out_mapping_events.csv", "summary.json")
    }
    assert expected <= set(reference), sorted(expected - set(reference))
    for other in ("a2", "b"):
        found = files(folders[other])
        assert set(found) == set(reference)
        differ = [name for name in reference if found[name] != reference[name]]
        assert not differ, f"{other} differs from a1 in {differ}"
