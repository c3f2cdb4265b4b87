"""The cases of Batsim 4.2.1's own test suite (``test/*.py`` of its repository) that need no
network model, run on the embedded engine with Batsim's own platforms and workloads.

Batsim's repository is read at test time, never copied: ``$HETSCHED_BATSIM_REPO``, else
``/work/batsim-v4.2.1`` (each test skips, saying why, when the folder is absent). Real Batsim
is not available to these tests, nor batsched (in no package registry reachable here): the
expected outputs are facts established from Batsim's source at v4.2.1 and SimGrid's at v3.32,
cited at each test, and pybatsim's schedulers stand in where Batsim's tests use batsched.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from schedulers.easyBackfill import EasyBackfill

from hetsched.engine import batsim_cli
from hetsched.engine.simulation import SimulationResult, simulate
from hetsched.metrics.outputs import JOBS_COLUMNS

BATSIM_REPO = Path(os.environ.get("HETSCHED_BATSIM_REPO") or "/work/batsim-v4.2.1")
"""Batsim's repository at tag v4.2.1 (its ``platforms/``, ``workloads/``, ``events/``)."""


def batsim_file(relative: str) -> Path:
    """A file of Batsim's repository; skips the test when it is not there."""
    path = BATSIM_REPO / relative
    if not path.is_file():
        pytest.skip(f"Batsim's repository is not at {BATSIM_REPO} (no {relative}); set "
                    "HETSCHED_BATSIM_REPO to a checkout of Batsim v4.2.1")
    return path


def jobs_by_id(result: SimulationResult) -> dict[int, dict[str, str]]:
    """``out_jobs.csv`` rows by job id."""
    with result.jobs_csv.open(newline="") as file:
        return {int(row["job_id"]): row for row in csv.DictReader(file)}


def schedule(result: SimulationResult) -> dict[str, str]:
    """``out_schedule.csv``'s one row."""
    with result.schedule_csv.open(newline="") as file:
        return next(csv.DictReader(file))


def test_walltime_workload_as_batsim_decides_it(tmp_path: Path) -> None:
    """``test_walltime.py`` (``cluster512.xml``, ``test_walltime.json``): 10 s jobs with
    walltimes 1..20 and none, as delays (jobs 1-22) and as 1e10 flops on 1 Gflop/s hosts
    (jobs 1001-1022), all started at once.

    A delay equal to its walltime is killed: ``do_delay_task`` sleeps the delay only when
    ``sleeptime < *remaining_time`` (job 10). A computation equal to its walltime completes:
    ``execute_parallel_task`` starts the task, then ``wait_for(walltime)``; the task and the
    timeout's sleep end in the same SimGrid step, the task's action was started first and
    is posted first, and answering the wait drops the only reference to the timeout's synchro,
    so its sleep is never posted (job 1010: COMPLETED_SUCCESSFULLY, as real Batsim writes it).
    So 19 jobs are killed, not 20."""
    result = simulate(
        batsim_file("platforms/cluster512.xml"),
        [batsim_file("workloads/test_walltime.json")],
        EasyBackfill({}),
        tmp_path / "out",
    )
    rows = jobs_by_id(result)
    killed = {*range(1, 11), *range(1001, 1010)}
    for job_id, row in rows.items():
        expected = "COMPLETED_WALLTIME_REACHED" if job_id in killed else "COMPLETED_SUCCESSFULLY"
        assert row["final_state"] == expected, (job_id, row)
        walltime = float(row["requested_time"])
        duration = min(10.0, walltime) if walltime > 0 else 10.0
        assert float(row["execution_time"]) == duration, (job_id, row)
    assert rows[10]["execution_time"] == rows[1010]["execution_time"] == "10.000000"
    assert len(rows) == 44
    assert schedule(result)["nb_jobs_killed"] == "19"
    assert schedule(result)["nb_jobs_success"] == "25"


PLATFORMS = {
    "small": "small_platform.xml",
    "smallusage": "small_platform_usage_replay.xml",
    "cluster512": "cluster512.xml",
    "cluster512_pfs": "cluster512_pfs.xml",
    "energy128notopo": "energy_platform_homogeneous_no_net_128.xml",
    "energy128cluster": "cluster_energy_128.xml",
    "properties_platform": "properties_example.xml",
}
"""Batsim's test platforms (``test/conftest.py``'s ``platforms_def``)."""
STORAGE_PLATFORMS = {"cluster512_pfs"}
"""Platforms with a storage host (``pfs0``): refused, storage needs SimGrid's network model."""


def run_batsim(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``hetsched batsim ARGUMENTS``: its exit code and what it printed on stderr."""
    code = batsim_cli.main(arguments)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_nosched_delays(platform: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``test_nosched.py`` on ``test_delays.json`` (10 jobs of 10 s on one machine each):
    ``--no-sched`` is Batsim's BATEXEC program type (``src/batsim.cpp``): no server, no
    socket; ``batexec_job_launcher_process`` starts every job at t=0 on machine 0, whatever
    its submission time, and no job is submitted or completed in Batsim's sense. So
    ``out_jobs.csv`` has only its header, ``out_schedule.csv`` counts no job (means ``-nan``,
    makespan 0), machine 0 computes 10 s, and each job's start and end write a line of
    ``out_machine_states.csv`` (``update_machines_on_job_run``/``_end``)."""
    prefix = tmp_path / "out"
    code, err = run_batsim(
        ["-p", str(batsim_file(f"platforms/{PLATFORMS[platform]}")),
         "-w", str(batsim_file("workloads/test_delays.json")), "-e", str(prefix), "--no-sched"],
        capsys,
    )
    if platform in STORAGE_PLATFORMS:
        assert code == batsim_cli.EXIT_UNSUPPORTED and "storage" in err, err
        return
    assert code == 0, err
    assert Path(f"{prefix}_jobs.csv").read_text().splitlines() == [",".join(JOBS_COLUMNS)]
    with Path(f"{prefix}_schedule.csv").open(newline="") as file:
        figures = next(csv.DictReader(file))
    nb_machines = int(figures["nb_computing_machines"])
    assert {key: figures[key] for key in ("nb_jobs", "success_rate", "mean_waiting_time",
                                          "makespan", "time_computing", "consumed_joules")} == {
        "nb_jobs": "0", "success_rate": "-nan", "mean_waiting_time": "-nan",
        "makespan": "0.000000", "time_computing": "10.000000", "consumed_joules": "0.000000",
    }
    states = Path(f"{prefix}_machine_states.csv").read_text().splitlines()[1:]
    computing = f"0,0,0,{nb_machines - 1},1"
    assert states == [f"0,{computing}"] * 10 + [f"10,{computing}"] * 9 + [
        f"10,0,0,0,{nb_machines},0"
    ]
