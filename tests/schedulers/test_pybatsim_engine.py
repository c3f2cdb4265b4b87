"""Real pybatsim schedulers through the embedded Batsim engine, end to end.

The same scheduler runs in process, over a real ZeroMQ socket served by the
engine, and as a separate ``pybatsim schedulers/maxVpr.py`` process; every
run must write the same ``out_jobs.csv``: the originals REJECTED, the twins
(workload ``hetsched``) with the hand-computed times and energies.

Platform: cluster ``fast`` = resources 0-1 (4 cores per node; P-state 0:
2e9 flop/s per core, 90 W idle / 180 W full; P-state 1: 1e9, 60 / 100 W),
cluster ``slow`` = resources 2-4 (8 cores per node; 1e9 flop/s, 50 / 90 W).
The generator writes every host with one core, so a busy node draws its full
power (docs/platforms.md).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from batsim_peer import free_port

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.engine.simulation import simulate
from hetsched.heuristics import registry
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.platforms.spec import platform_from_dict
from hetsched.schedulers.adapter import HetschedScheduler
from hetsched.schedulers.serve_cli import scheduler_class

MaxVpr = scheduler_class("max-vpr")
"""pybatsim's class of ``schedulers/maxVpr.py``, as ``hetsched serve`` makes it."""

ROOT = Path(__file__).resolve().parents[2]
PYBATSIM = Path(sys.executable).parent / "pybatsim"
VALUE = {"final": 0.0, "soft_deadline": 100.0, "hard_deadline": 200.0}


def _platform(directory: Path) -> Path:
    spec = platform_from_dict({
        "name": "twins",
        "clusters": [
            {"name": "fast", "nb_nodes": 2, "cores_per_node": 4, "pstates": [
                {"speed": 2e9, "idle_watts": 90.0, "full_watts": 180.0},
                {"speed": 1e9, "idle_watts": 60.0, "full_watts": 100.0}]},
            {"name": "slow", "nb_nodes": 3, "cores_per_node": 8, "pstates": [
                {"speed": 1e9, "idle_watts": 50.0, "full_watts": 90.0}]},
        ],
    })
    return write_platform(spec, directory / "platform.xml")


def _workload(directory: Path, jobs: list[dict[str, Any]]) -> Path:
    path = directory / "workload.json"
    path.write_text(json.dumps({
        "nb_res": 5,
        "jobs": [{"walltime": 100.0, "res": 1, "profile": "d", **job} for job in jobs],
        "profiles": {"d": {"type": "delay", "delay": 10.0}},
    }))
    return path


MAX_VPR_JOBS = [
    {"id": 1, "subtime": 0.0, "cores": 8, "etc": {"fast": 10.0, "slow": 30.0},
     "value": {"start": 100.0, **VALUE}},
    {"id": 2, "subtime": 0.0, "res": 3, "cores": 24, "etc": {"fast": 20.0, "slow": 15.0},
     "value": {"start": 60.0, **VALUE}},
    {"id": 3, "subtime": 5.0, "cores": 4, "etc": {"fast": 10.0, "slow": 30.0},
     "value": {"start": 50.0, **VALUE}},
]


def _jobs(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open(newline="") as stream:
        return {(row["workload_name"], row["job_id"]): row for row in csv.DictReader(stream)}


def _check_max_vpr_run(jobs_csv: Path, events_csv: Path) -> None:
    """Max VPR (Khemka 3.3), value / (ETC x NC) of each choice:

    t=0: job 1 (8 cores): fast 2 nodes 100/(10x8) = 1.25, slow 1 node 100/(30x8) = 0.42;
         job 2 (24 cores): slow 3 nodes only, 60/(15x24) = 0.17.
         -> job 1 on fast 0-1 [0, 10), job 2 on slow 2-4 [0, 15).
    t=5: job 3 (4 cores): fast from 10, 1 node, 50/(10x4) = 1.25; slow from 15,
         50/(30x8) = 0.21 -> reserved on fast [10, 20), node 0 (lowest index).
    t=10: the reservation starts. Energy (busy nodes draw their full power):
         twin 1 = 2 x 10 s x 180 W = 3600 J, twin 2 = 3 x 15 x 90 = 4050 J,
         twin 3 = 10 x 180 = 1800 J.
    """
    rows = _jobs(jobs_csv)
    for job in ("1", "2", "3"):
        original = rows[("w0", job)]
        assert original["final_state"] == "REJECTED"
    expected = {"w0.1": (0.0, 10.0, "0-1", 3600.0), "w0.2": (0.0, 15.0, "2-4", 4050.0),
                "w0.3": (10.0, 20.0, "0", 1800.0)}
    for twin, (begin, end, alloc, joules) in expected.items():
        row = rows[("hetsched", twin)]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert row["profile"] == f"twin.{twin}"
        assert float(row["starting_time"]) == pytest.approx(begin, abs=1e-6)
        assert float(row["finish_time"]) == pytest.approx(end, abs=1e-6)
        assert row["allocated_resources"] == alloc
        assert float(row["consumed_energy"]) == pytest.approx(joules, rel=1e-9)
    assert len(rows) == 6
    lines = events_csv.read_text().splitlines()
    assert lines[0] == "time,nb_mappable,nb_decisions,seconds"
    # Mapping events at 0 (jobs 1, 2) and 5 (job 3); the completions at 10 and 15
    # find no mappable task and call no heuristic.
    assert [line.rsplit(",", 1)[0] for line in lines[1:]] == ["0.0,2,2", "5.0,1,1"]


@pytest.mark.parametrize("transport", ["in-process", "socket"])
def test_max_vpr_through_the_engine(transport: str, tmp_path: Path) -> None:
    platform, workload = _platform(tmp_path), _workload(tmp_path, MAX_VPR_JOBS)
    scheduler = MaxVpr({"export_prefix": str(tmp_path / "out")})
    endpoint = f"tcp://127.0.0.1:{free_port()}" if transport == "socket" else None
    result = simulate(platform, [workload], scheduler, tmp_path / "out", energy=True,
                      dynamic_jobs=True, socket_endpoint=endpoint, socket_timeout=60.0)
    _check_max_vpr_run(result.jobs_csv, tmp_path / "out_mapping_events.csv")
    assert result.makespan == pytest.approx(20.0, abs=1e-6)
    # Whole system over [0, 20]: node 0 busy 20 s (3600 J); node 1 busy 10 s, idle 10 s
    # (1800 + 900 J); slow nodes busy 15 s, idle 5 s (3 x (1350 + 250) J); master 0 W.
    assert result.consumed_joules == pytest.approx(11100.0, rel=1e-9)


def test_pybatsim_launcher_process_through_the_engine(tmp_path: Path) -> None:
    """``pybatsim schedulers/maxVpr.py -s tcp://127.0.0.1:PORT -o ...`` against the engine."""
    platform, workload = _platform(tmp_path), _workload(tmp_path, MAX_VPR_JOBS)
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    options = json.dumps({"period": None, "export_prefix": str(tmp_path / "out")})
    process = subprocess.Popen(
        [str(PYBATSIM), "schedulers/maxVpr.py", "-s", endpoint, "-o", options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        result = simulate(platform, [workload], None, tmp_path / "out", energy=True,
                          dynamic_jobs=True, socket_endpoint=endpoint, socket_timeout=60.0)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "Scheduler: MaxVpr" in out
    _check_max_vpr_run(result.jobs_csv, tmp_path / "out_mapping_events.csv")


class OneSlowStart(Heuristic):
    """Starts every mappable task now on fast node 1 at P-state 1 for 10 s."""

    name = "one-slow-start"
    paper = "test"
    summary = "P-state 1 on node 1"

    def map(self, event: MappingEvent) -> list[Decision]:
        return [Decision(Action.START, t.id, "fast", (1,), event.time, event.time + 10.0, 1)
                for t in event.mappable]


def test_pstate_change_through_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task started at P-state 1 on node 1 for [0, 10): SET_RESOURCE_STATE then a twin of
    cpu 10 s x 1e9 = 1e10 flops, which lasts 10 s at 1e9 flop/s and draws node 1's full
    power at P-state 1: 10 s x 100 W = 1000 J. System over [0, 10]: node 0 idle at P-state 0
    (900 J), node 1 (1000 J), slow nodes idle (3 x 500 J) = 3400 J."""
    monkeypatch.setitem(registry.HEURISTICS, "one-slow-start", OneSlowStart)
    platform = _platform(tmp_path)
    workload = _workload(tmp_path, [{"id": 1, "subtime": 0.0, "cores": 4,
                                     "etc": {"fast": 5.0, "slow": 10.0}}])
    scheduler = HetschedScheduler({"heuristic": "one-slow-start"})
    result = simulate(platform, [workload], scheduler, tmp_path / "out", energy=True,
                      dynamic_jobs=True)
    twin = _jobs(result.jobs_csv)[("hetsched", "w0.1")]
    assert (float(twin["starting_time"]), float(twin["finish_time"])) == (0.0, 10.0)
    assert float(twin["consumed_energy"]) == pytest.approx(1000.0, rel=1e-9)
    assert result.consumed_joules == pytest.approx(3400.0, rel=1e-9)
    changes = result.output_files["pstate_changes"].read_text().splitlines()
    # Batsim's P-state trace: initial P-states, node 1 in transition (-1), node 1 at 1.
    assert changes[1:] == ["0,0-4,0", "0,1,-1", "0,1,1"]
    # The driver's system view: node 1 at P-state 1, and the energy its power model
    # integrated equals what the engine's SimGrid energy model charged.
    system = scheduler.driver.system
    assert (system.pstate(1), system.time) == (1, 10.0)
    assert system.energy_consumed == pytest.approx(3400.0, rel=1e-9)


def test_periodic_mapping_events_through_the_engine(tmp_path: Path) -> None:
    """FCFS with a 60 s period (Machovec III.A): job 1 (8 cores, submitted at 0) is mapped
    by the event at 0 and runs on fast 0-1 during [0, 10); job 2 (submitted at 5) waits for
    the event at 60 (CALL_ME_LATER) and runs on fast 0-1 during [60, 70)."""
    etc = {"fast": 10.0, "slow": 30.0}
    workload = _workload(tmp_path, [{"id": 1, "subtime": 0.0, "cores": 8, "etc": etc},
                                    {"id": 2, "subtime": 5.0, "cores": 8, "etc": etc}])
    scheduler = HetschedScheduler(
        {"heuristic": "fcfs", "period": 60, "export_prefix": str(tmp_path / "out")}
    )
    result = simulate(_platform(tmp_path), [workload], scheduler, tmp_path / "out",
                      dynamic_jobs=True)
    rows = _jobs(result.jobs_csv)
    for twin, begin in (("w0.1", 0.0), ("w0.2", 60.0)):
        row = rows[("hetsched", twin)]
        assert (float(row["starting_time"]), float(row["finish_time"])) == (begin, begin + 10)
        assert row["allocated_resources"] == "0-1"
    lines = (tmp_path / "out_mapping_events.csv").read_text().splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines[1:]] == ["0.0,1,1", "60.0,1,1"]
