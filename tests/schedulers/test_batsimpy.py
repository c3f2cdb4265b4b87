"""hetsched heuristics inside batsim-py 1.0.5 loops, on ``hetsched batsim``
(hetsched/schedulers/batsimpy.py).

batsim-py starts ``batsim`` itself: a two-line ``batsim`` script on ``PATH`` runs ``hetsched
batsim`` (the embedded engine behind Batsim 4.2.1's command line). Batsim's outputs go to
``$TMPDIR/batsim_*.csv`` (batsim-py's fixed ``-e``): each test points ``tempfile`` at its own
folder.

Platform: one cluster ``c`` of 4 nodes (4 cores each; 1e9 flop/s, 100 W idle, 200 W busy), so
a job's static ``delay`` profile is its ETC and ``res`` its node count: what batsim-py can run
faithfully without execution twins. Times are not integers (batsim-py floors its clock).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

batsim_py = pytest.importorskip(
    "batsim_py", reason="batsim-py is not installed (make setup installs it: docs/batsim-py.md)"
)

from hetsched.core.decisions import Action, Decision  # noqa: E402
from hetsched.core.mapping import Heuristic, MappingEvent  # noqa: E402
from hetsched.engine.simulation import simulate  # noqa: E402
from hetsched.heuristics import registry  # noqa: E402
from hetsched.heuristics.common import commit  # noqa: E402
from hetsched.platforms.simgrid_xml import write_platform  # noqa: E402
from hetsched.platforms.spec import platform_from_dict  # noqa: E402
from hetsched.schedulers.adapter import HetschedScheduler  # noqa: E402
from hetsched.schedulers.batsimpy import (  # noqa: E402
    BatsimPyLimitation,
    BatsimPyMapper,
    run_loop,
    simulator_handler,
)

HETSCHED = Path(sys.executable).parent / "hetsched"
VALUE = {"final": 0.0, "soft_deadline": 30.0, "hard_deadline": 40.0}
# (id, subtime, res, delay, starting value). Hand schedule for FCFS (no backfilling) on 4
# nodes: 1 [0, 10) on 3 nodes, 2 [0, 4.5) on 1; at 4.5 one node is free but 3 needs 2, so 3
# waits for 1: [10, 13.25), and 4 (1 node), behind 3 in arrival order, [10, 16); 5 needs all
# 4 nodes: [16, 18).
JOBS = [
    ("1", 0.0, 3, 10.0, 90.0),
    ("2", 0.0, 1, 4.5, 10.0),
    ("3", 1.5, 2, 3.25, 40.0),
    ("4", 2.25, 1, 6.0, 30.0),
    ("5", 7.5, 4, 2.0, 50.0),
]


def _platform(directory: Path, *, cores_per_node: int = 4) -> Path:
    spec = platform_from_dict({"name": "one", "clusters": [
        {"name": "c", "nb_nodes": 4, "cores_per_node": cores_per_node,
         "pstates": [{"speed": 1e9, "idle_watts": 100.0, "full_watts": 200.0}]},
    ]})  # fmt: skip
    return write_platform(spec, directory / "platform.xml")


def _workload(directory: Path, jobs: list[dict[str, Any]], kind: str = "delay") -> Path:
    """``kind`` "delay" or "parallel_homogeneous" (``cpu`` = delay x 1e9 flop/s, ``com`` 0)."""
    path = directory / "workload.json"
    profiles = {
        f"d{job['delay']}": {"type": "delay", "delay": job["delay"]} if kind == "delay"
        else {"type": kind, "cpu": job["delay"] * 1e9, "com": 0.0}
        for job in jobs
    }
    records = [
        {"id": job["id"], "subtime": job["subtime"], "res": job["res"], "walltime": 100.0,
         "profile": f"d{job['delay']}", **job.get("annotations", {})}
        for job in jobs
    ]  # fmt: skip
    path.write_text(json.dumps({"nb_res": 4, "jobs": records, "profiles": profiles}))
    return path


def _annotated_jobs() -> list[dict[str, Any]]:
    return [
        {"id": job, "subtime": subtime, "res": res, "delay": delay, "annotations": {
            "cores": 4 * res, "etc": {"c": delay}, "value": {"start": value, **VALUE}}}
        for job, subtime, res, delay, value in JOBS
    ]  # fmt: skip


@pytest.fixture
def batsim_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``batsim`` on PATH is ``hetsched batsim``; Batsim's outputs go to ``tmp_path/batsim_*``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "batsim"
    wrapper.write_text(f'#!/bin/sh\nexec "{HETSCHED}" batsim "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _jobs_csv(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as stream:
        return {f"{row['workload_name']}!{row['job_id']}": row for row in csv.DictReader(stream)}


def _decisions(records: Any) -> dict[str, tuple[Any, ...]]:
    return {
        r.task.id: (r.state.value, r.decision and (r.decision.nodes, r.decision.start,
                                                   r.decision.end))
        for r in records
    }  # fmt: skip


# --------------------------------------------------------------------------- what works
def test_fcfs_schedule_computed_by_hand(batsim_on_path: Path) -> None:
    """FCFS on the module docstring's jobs: the hand schedule above, in Batsim's outputs."""
    directory = batsim_on_path
    platform, workload = _platform(directory), _workload(directory, _annotated_jobs())
    mapper = BatsimPyMapper(registry.create("fcfs"))
    simulator = simulator_handler()
    mapper.attach(simulator)  # as docs/batsim-py.md's loop does: run_loop may follow it
    records = run_loop(mapper, simulator, platform, workload)
    with pytest.raises(RuntimeError, match="already attached to another simulator"):
        mapper.attach(simulator_handler())
    rows = _jobs_csv(directory / "batsim_jobs.csv")
    expected = {"1": (0.0, 10.0), "2": (0.0, 4.5), "3": (10.0, 13.25), "4": (10.0, 16.0),
                "5": (16.0, 18.0)}  # fmt: skip
    for job, (start, finish) in expected.items():
        row = rows[f"w0!{job}"]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert float(row["starting_time"]) == pytest.approx(start, abs=1e-6)
        assert float(row["finish_time"]) == pytest.approx(finish, abs=1e-6)
    # A delay profile does not compute: SimGrid charges idle power (3 nodes x 10 s x 100 W).
    assert float(rows["w0!1"]["consumed_energy"]) == pytest.approx(3000.0)
    assert {r.task.id: (r.started, r.ended) for r in records} == pytest.approx(
        {f"w0!{job}": times for job, times in expected.items()}
    )


@pytest.mark.parametrize(
    ("name", "kind"),
    [("easy", "delay"), ("conservative", "parallel_homogeneous"),
     ("max-vpr-ph", "parallel_homogeneous")],
)  # fmt: skip
def test_same_schedule_as_the_pybatsim_adapter(batsim_on_path: Path, name: str, kind: str) -> None:
    """The heuristic decides the same in a batsim-py loop as behind pybatsim (execution twins,
    in process on the engine), and Batsim's originals run exactly as the twins did; with
    computing (``parallel_homogeneous``) static profiles, with the same energy too."""
    directory = batsim_on_path
    platform, workload = _platform(directory), _workload(directory, _annotated_jobs(), kind)
    in_loop = run_loop(BatsimPyMapper(registry.create(name)), simulator_handler(), platform,
                       workload)  # fmt: skip
    scheduler = HetschedScheduler({}, heuristic=registry.create(name))
    simulate(platform, [workload], scheduler, directory / "adapter" / "out", energy=True,
             dynamic_jobs=True)  # fmt: skip
    assert scheduler.driver is not None
    assert _decisions(in_loop) == _decisions(scheduler.driver.tasks)
    loop_rows = _jobs_csv(directory / "batsim_jobs.csv")
    twin_rows = _jobs_csv(directory / "adapter" / "out_jobs.csv")
    for record in in_loop:
        row = loop_rows[record.task.id]
        if record.decision is None:  # dropped
            assert row["final_state"] == "REJECTED"
            continue
        twin = twin_rows[f"hetsched!{record.task.id.replace('!', '.')}"]
        columns = ["starting_time", "finish_time", "allocated_resources"]
        if kind != "delay":
            columns.append("consumed_energy")
        for column in columns:
            assert row[column] == twin[column], (record.task.id, column)


def test_dropped_task_is_rejected(batsim_on_path: Path) -> None:
    """Max Value drops a task whose value is zero whenever it could start (hard deadline 40
    passed): Batsim's job is REJECTED through batsim-py's reject_job."""
    directory = batsim_on_path
    late = {"start": 5.0, "final": 0.0, "soft_deadline": 2.0, "hard_deadline": 3.0}
    jobs = [*_annotated_jobs()[:2], {"id": "9", "subtime": 1.0, "res": 4, "delay": 1.0,
            "annotations": {"cores": 16, "etc": {"c": 1.0}, "value": late}}]  # fmt: skip
    platform, workload = _platform(directory), _workload(directory, jobs)
    records = run_loop(BatsimPyMapper(registry.create("max-value")), simulator_handler(),
                       platform, workload)  # fmt: skip
    assert {r.task.id: r.state.value for r in records}["w0!9"] == "dropped"
    assert _jobs_csv(directory / "batsim_jobs.csv")["w0!9"]["final_state"] == "REJECTED"


def test_periodic_mapping_events_at_the_multiples_of_the_period(batsim_on_path: Path) -> None:
    """period=4: batsim-py adds 0.09 s to every callback; the mapper asks 0.09 s early, so
    the mapping events are at 0, 4, 8, 12, 16, 20 (Machovec III.A), none in between.

    FCFS by hand: 1 and 2 start at 0; at 4 and 8 nothing can (node 3 is busy until 4.5, then
    3 needs 2 nodes and blocks 4 and 5); at 12 (1 ended at 10) 3 [12, 15.25) and 4 [12, 18);
    at 16 5 needs the 4 nodes, 4 still runs; at 20 5 starts."""
    directory = batsim_on_path
    platform, workload = _platform(directory), _workload(directory, _annotated_jobs())
    mapper = BatsimPyMapper(registry.create("fcfs"), period=4)
    records = run_loop(mapper, simulator_handler(), platform, workload)
    assert mapper.driver is not None
    times = [record.time for record in mapper.driver.records]
    assert times == pytest.approx([0.0, 4.0, 8.0, 12.0, 16.0, 20.0])
    starts = {r.task.id: r.started for r in records}
    assert starts == pytest.approx(
        {"w0!1": 0.0, "w0!2": 0.0, "w0!3": 12.0, "w0!4": 12.0, "w0!5": 20.0}
    )
    rows = _jobs_csv(directory / "batsim_jobs.csv")
    assert float(rows["w0!5"]["starting_time"]) == pytest.approx(20.0, abs=1e-6)


def test_unannotated_stock_workload(batsim_on_path: Path) -> None:
    """A plain Batsim workload (no hetsched annotation): ETC from the delay profile."""
    directory = batsim_on_path
    jobs = [{"id": job, "subtime": subtime, "res": res, "delay": delay}
            for job, subtime, res, delay, _ in JOBS]  # fmt: skip
    platform, workload = _platform(directory), _workload(directory, jobs)
    records = run_loop(BatsimPyMapper(registry.create("easy", drop_zero_value=False)),
                       simulator_handler(), platform, workload)  # fmt: skip
    assert all(r.state.value == "done" for r in records)
    rows = _jobs_csv(directory / "batsim_jobs.csv")
    assert all(row["final_state"] == "COMPLETED_SUCCESSFULLY" for row in rows.values())


# --------------------------------------------------------------------------- what is refused
def test_heterogeneous_etc_is_refused_naming_the_task(batsim_on_path: Path) -> None:
    """ETC 20 s planned, but the job's static delay profile takes 10 s: no execution twin."""
    directory = batsim_on_path
    jobs = [{"id": "1", "subtime": 0.0, "res": 1, "delay": 10.0,
             "annotations": {"cores": 4, "etc": {"c": 20.0}}}]  # fmt: skip
    platform, workload = _platform(directory), _workload(directory, jobs)
    with pytest.raises(BatsimPyLimitation, match=r"task w0!1 \(fcfs, cluster c\): planned 20.0 s"
                       r".*static profile 'd10.0' \(delay\), 10.0 s there"):
        run_loop(BatsimPyMapper(registry.create("fcfs")), simulator_handler(), platform,
                 workload)  # fmt: skip


def test_node_count_other_than_res_is_refused(batsim_on_path: Path) -> None:
    """8 cores on 2-core nodes is 4 nodes; the job's res says 1 (its reference node count)."""
    directory = batsim_on_path
    jobs = [{"id": "1", "subtime": 0.0, "res": 1, "delay": 10.0,
             "annotations": {"cores": 8, "etc": {"c": 10.0}}}]  # fmt: skip
    platform = _platform(directory, cores_per_node=2)
    workload = _workload(directory, jobs)
    with pytest.raises(BatsimPyLimitation, match=r"4 node\(s\) chosen.*res = 1"):
        run_loop(BatsimPyMapper(registry.create("fcfs")), simulator_handler(), platform,
                 workload)  # fmt: skip


class _SlowPState(Heuristic):
    """Starts every task now at P-state 1, on its own node count (a test double)."""

    name = "slow-pstate"
    paper = "test double"
    summary = "P-state 1"

    def map(self, event: MappingEvent) -> list[Decision]:
        decisions = []
        for task in event.mappable:
            cluster = next(iter(event.system.clusters.values()))
            nb_nodes, duration = cluster.nodes_for(task.cores), task.duration(cluster, 1)
            if event.schedule.fits(cluster.name, nb_nodes, event.time, duration):
                slot = event.schedule.slot_at(
                    cluster.name, nb_nodes, duration, event.time, event.time
                )
                decisions.append(commit(event.schedule, task, slot, Action.START, pstate=1))
        return decisions


def test_pstate_change_is_refused(batsim_on_path: Path) -> None:
    directory = batsim_on_path
    spec = platform_from_dict({"name": "dvfs", "clusters": [
        {"name": "c", "nb_nodes": 2, "cores_per_node": 4, "pstates": [
            {"speed": 1e9, "idle_watts": 100.0, "full_watts": 200.0},
            {"speed": 5e8, "idle_watts": 60.0, "full_watts": 100.0}]}]})  # fmt: skip
    platform = write_platform(spec, directory / "platform.xml")
    jobs = [{"id": "1", "subtime": 0.0, "res": 1, "delay": 10.0,
             "annotations": {"cores": 4, "etc": {"c": 10.0}}}]  # fmt: skip
    workload = _workload(directory, jobs)
    with pytest.raises(BatsimPyLimitation, match=r"P-state 1 asked.*wattage_per_state"):
        run_loop(BatsimPyMapper(_SlowPState()), simulator_handler(), platform, workload)


def test_actual_run_time_is_refused(batsim_on_path: Path) -> None:
    directory = batsim_on_path
    jobs = [{"id": "1", "subtime": 0.0, "res": 1, "delay": 10.0, "annotations": {
        "cores": 4, "etc": {"c": 10.0}, "actual": {"etc": {"c": 12.0}}}}]  # fmt: skip
    platform, workload = _platform(directory), _workload(directory, jobs)
    with pytest.raises(BatsimPyLimitation, match="job w0!1 has an 'actual' run time"):
        run_loop(BatsimPyMapper(registry.create("fcfs")), simulator_handler(), platform,
                 workload)  # fmt: skip


@pytest.mark.parametrize("kind", ["delay", "parallel_homogeneous"])
def test_energy_budget_needs_computing_profiles(batsim_on_path: Path, kind: str) -> None:
    """A delay draws idle power in SimGrid, busy power in the driver's meter: refused with an
    energy budget; a parallel_homogeneous job runs, and Batsim charges it what the meter says:
    job 1, 3 nodes x 10 s x 200 W = 6000 J (the meter also counts node 3 idle, 10 s x 100 W)."""
    directory = batsim_on_path
    platform = _platform(directory)
    workload = _workload(directory, _annotated_jobs()[:1], kind)
    mapper = BatsimPyMapper(registry.create("fcfs"), energy_budget=1e6)
    if kind == "delay":
        with pytest.raises(BatsimPyLimitation, match=r"delay, for which SimGrid charges idle"):
            run_loop(mapper, simulator_handler(), platform, workload)
        return
    run_loop(mapper, simulator_handler(), platform, workload)
    row = _jobs_csv(directory / "batsim_jobs.csv")["w0!1"]
    assert float(row["consumed_energy"]) == pytest.approx(6000.0)
    assert mapper.driver is not None
    assert mapper.driver.system.energy_consumed == pytest.approx(6000.0 + 100.0 * 10.0)


def test_mapper_needs_a_running_simulation() -> None:
    mapper = BatsimPyMapper(registry.create("fcfs"))
    with pytest.raises(RuntimeError, match="attach the mapper"):
        mapper.schedule()
    with pytest.raises(ValueError, match="period must be > 0"):
        BatsimPyMapper(registry.create("fcfs"), period=0)


# --------------------------------------------------------------------------- batsim-py as is
STOCK_LOOP = """
import sys, batsim_py
sim = batsim_py.SimulatorHandler()
sim.start(platform=sys.argv[1], workload=sys.argv[2])
while sim.is_running:
    for job in sim.queue:
        idle = [h.id for h in sim.platform.hosts if h.is_idle]
        if job.res <= len(idle):
            sim.allocate(job.id, idle[:job.res])
    sim.proceed_time()
print("ended at", sim.current_time)
"""


def _stock_loop(directory: Path, platform: Path, workload: Path) -> tuple[int | None, str]:
    """batsim-py's README loop, in a subprocess (it hangs when batsim dies): exit code (None
    if it hung and was killed) and the engine's stderr."""
    script = directory / "loop.py"
    script.write_text(STOCK_LOOP)
    env = {"PATH": f"{directory / 'bin'}:/usr/bin:/bin", "TMPDIR": str(directory)}
    log = directory / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(script), str(platform), str(workload)],
            stdout=subprocess.PIPE, stderr=stderr, env=env, text=True,
        )
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            if "aborted" in log.read_text():
                break
            time.sleep(0.2)
        code = process.poll()
        if code is None:
            process.kill()
        process.communicate()
    return code, log.read_text()


def test_stock_batsim_py_loop_runs_integer_times(batsim_on_path: Path) -> None:
    """batsim-py's own handler, unchanged, runs on ``hetsched batsim`` while times are whole."""
    directory = batsim_on_path
    jobs = [{"id": job, "subtime": float(int(subtime)), "res": res, "delay": float(int(delay))}
            for job, subtime, res, delay, _ in JOBS]  # fmt: skip
    code, err = _stock_loop(directory, _platform(directory), _workload(directory, jobs))
    assert code == 0, err
    rows = _jobs_csv(directory / "batsim_jobs.csv")
    assert all(row["final_state"] == "COMPLETED_SUCCESSFULLY" for row in rows.values())


def test_stock_batsim_py_floors_its_clock(batsim_on_path: Path) -> None:
    """Job 2 arrives at 1.5 on a free node: batsim-py stamps its EXECUTE_JOB 1.0 (math.floor);
    as real Batsim 4.2.1 does (``batsim-pending/floor-timestamps``), the engine applies it at
    1.5 and runs to the end, neither aborting nor leaving batsim-py waiting."""
    directory = batsim_on_path
    jobs = [{"id": "1", "subtime": 0.0, "res": 1, "delay": 10.0},
            {"id": "2", "subtime": 1.5, "res": 1, "delay": 2.0}]  # fmt: skip
    code, err = _stock_loop(directory, _platform(directory), _workload(directory, jobs))
    assert code == 0, err
    row = _jobs_csv(directory / "batsim_jobs.csv")["w0!2"]
    assert (row["starting_time"], row["finish_time"]) == ("1.500000", "3.500000")
