"""Metrics from Batsim output files + workload annotations, on a case computed by hand.

The case: two clusters of two nodes each, in Batsim resource order (ascending host
name): a0=0, a1=1 (cluster ``a``), b0=2, b1=3 (cluster ``b``). Every node draws 100 W
idle and 200 W computing. Four tasks in workload ``w0``:

====  =======  ===============================  ===========================================
task  subtime  value function (start, final,    what happened (out_jobs.csv below)
               soft, hard) -- Khemka sec. 2
====  =======  ===============================  ===========================================
1     0        10, 2, 100, 200                  twin w0.1 ran [0, 50) on a0-a1
2     10       8, 4, 20, 60                     twin w0.2 registered at 20, ran [20, 50)
                                                on b0-b1
3     15       5, 1, 10, 20                     dropped: REJECTED, no twin
4     30       6, 3, 10, 20                     ran directly (stock style) [50, 80) on a0
====  =======  ===============================  ===========================================

Value earned (value at completion, from the original's arrival):
task 1: 50 - 0 = 50 <= soft 100 -> 10;
task 2: 50 - 10 = 40, between soft 20 and hard 60 -> 8 + (4 - 8) * (40 - 20) / 40 = 6;
task 3: dropped -> 0; task 4: 80 - 30 = 50 > hard 20 -> 0.
Earned 16; maximum value bound = 10 + 8 + 5 + 6 = 29 (Khemka sec. 5); 16/29 = 55.17 %.

Waiting (start - original submission): task 1: 0; task 2: 20 - 10 = 10 (not 0, the
twin's own submission is its registration at 20); task 4: 50 - 30 = 20; mean 10.
Makespan: last finish 80.

Platform energy (4 nodes, 100 W idle, 200 W computing):
[0, 20): a0, a1 compute: 2*200 + 2*100 = 600 W -> 12000 J at 20;
[20, 50): all four compute: 800 W -> 12000 + 24000 = 36000 J at 50;
[50, 80): a0 computes: 200 + 3*100 = 500 W -> 36000 + 15000 = 51000 J at 80.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from hetsched.metrics.annotations import read_workload_info
from hetsched.metrics.energy_trace import cumulative_energy, energy_between, total_energy
from hetsched.metrics.latency import latency_stats, read_mapping_events
from hetsched.metrics.outcomes import Outcome, account
from hetsched.metrics.output_files import parse_interval_set, read_consumed_energy, read_jobs
from hetsched.metrics.resources import resource_clusters
from hetsched.metrics.summary import summarize
from hetsched.metrics.value import value_metrics

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)
JOBS_CSV = HEADER + (
    '1,w0,p1,0.000000,2,-1.000000,0,REJECTED,,,,,,,,,""\n'
    "w0.1,hetsched,twin.w0.1,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,"
    '50.000000,50.000000,0.000000,50.000000,1.000000,0-1,20000.000000,""\n'
    '2,w0,p2,10.000000,2,-1.000000,0,REJECTED,,,,,,,,,""\n'
    "w0.2,hetsched,twin.w0.2,20.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,20.000000,"
    '30.000000,50.000000,0.000000,30.000000,1.000000,2-3,12000.000000,""\n'
    '3,w0,p3,15.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n'
    "4,w0,p4,30.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,50.000000,30.000000,"
    '80.000000,20.000000,50.000000,1.666667,0,6000.000000,""\n'
)
ENERGY_CSV = (
    "time,energy,event_type,wattmin,epower\n"
    "0.000000,0.000000,s,400.000000,NA\n"
    "20.000000,12000.000000,s,400.000000,600.000000\n"
    "50.000000,36000.000000,e,400.000000,800.000000\n"
    "50.000000,36000.000000,e,400.000000,NA\n"
    "50.000000,36000.000000,s,400.000000,NA\n"
    "80.000000,51000.000000,e,400.000000,500.000000\n"
)
MAPPING_EVENTS_CSV = (
    "time,nb_mappable,nb_decisions,seconds\n0,1,1,0.1\n10,1,1,0.2\n15,2,1,0.3\n50,1,1,0.4\n"
)
PLATFORM_XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"><prop id="role" value="master"/></host>
    <host id="b1" speed="1Gf"><prop id="cluster" value="b"/></host>
    <host id="a1" speed="1Gf"><prop id="cluster" value="a"/></host>
    <host id="b0" speed="1Gf"><prop id="cluster" value="b"/></host>
    <host id="a0" speed="1Gf"><prop id="cluster" value="a"/></host>
  </zone>
</platform>
"""


def workload_json(measure_window: list[float] | None = None, **meta: object) -> dict:
    """The four tasks of the module docstring; task 1 and 3 also carry utility functions."""
    values = {
        1: (0, [10, 2, 100, 200]),
        2: (10, [8, 4, 20, 60]),
        3: (15, [5, 1, 10, 20]),
        4: (30, [6, 3, 10, 20]),
    }
    jobs = []
    for job_id, (subtime, (start, final, soft, hard)) in values.items():
        job = {
            "id": job_id,
            "subtime": subtime,
            "res": 1,
            "profile": f"p{job_id}",
            "value": {"start": start, "final": final, "soft_deadline": soft, "hard_deadline": hard},
        }
        jobs.append(job)
    jobs[0]["etc"] = {"a": 50.0, "b": 25.0}
    jobs[0]["utility"] = {"priority": 8.0, "urgency": 36.0}  # per hour: 0.01 per second
    jobs[2]["utility"] = {"priority": 2.0, "urgency": 0.0}
    return {
        "nb_res": 4,
        "jobs": jobs,
        "profiles": {f"p{i}": {"type": "delay", "delay": 10.0} for i in range(1, 5)},
        "hetsched": {"schema_version": 1, "measure_window": measure_window, **meta},
    }


def write_run(
    tmp_path: Path,
    jobs_csv: str = JOBS_CSV,
    *,
    energy: bool = True,
    mapping_events: bool = True,
    workload: dict | None = None,
) -> tuple[Path, Path, Path]:
    """Write the run's files; return (prefix, workload path, platform path)."""
    (tmp_path / "out_jobs.csv").write_text(jobs_csv)
    if energy:
        (tmp_path / "out_consumed_energy.csv").write_text(ENERGY_CSV)
    if mapping_events:
        (tmp_path / "out_mapping_events.csv").write_text(MAPPING_EVENTS_CSV)
    workload_path = tmp_path / "workload.json"
    workload_path.write_text(json.dumps(workload or workload_json()))
    platform_path = tmp_path / "platform.xml"
    platform_path.write_text(PLATFORM_XML)
    return tmp_path / "out", workload_path, platform_path


# ------------------------------------------------------------------ readers


def test_read_jobs_parses_batsim_rows(tmp_path: Path) -> None:
    prefix, _, _ = write_run(tmp_path)
    records = read_jobs(f"{prefix}_jobs.csv")
    assert [r.batsim_id for r in records] == [
        "w0!1", "hetsched!w0.1", "w0!2", "hetsched!w0.2", "w0!3", "w0!4",
    ]
    twin = records[3]
    assert (twin.starting_time, twin.finish_time, twin.allocated_resources) == (20.0, 50.0, (2, 3))
    assert twin.consumed_energy == 12000.0 and twin.success
    rejected = records[4]
    assert rejected.starting_time is None and rejected.allocated_resources == ()
    assert not rejected.executed


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('3,w0,p3,x,1,-1,0,REJECTED,,,,,,,,,""', "column submission_time: 'x' is not a number"),
        ('3,w0,p3,15,1,-1,0,RUNNING,,,,,,,,,""', "final_state 'RUNNING' is not one of"),
        ('3,w0,p3,15,1,-1,0,REJECTED,1,,,,,,,,""', "a rejected job has no starting_time"),
        ('3,w0,p3,15,1,-1,1,REJECTED,,,,,,,,,""', "success=1 contradicts final_state REJECTED"),
        ('3,w0,p3,15,1,-1,0,REJECTED,,,,,,,2-1,,""', "interval 2-1 has its end before"),
        ("3,w0,p3,15,1,-1,0,REJECTED", "8 fields, expected 17"),
        ('1,w0,p1,0,2,-1,0,REJECTED,,,,,,,,,""', "job w0!1 already written at"),
    ],
)
def test_read_jobs_rejects_malformed_rows(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(JOBS_CSV + line + "\n")
    with pytest.raises(ValueError, match=message) as info:
        read_jobs(path)
    assert f"{path}:8" in str(info.value)


def test_read_jobs_rejects_a_foreign_header(tmp_path: Path) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text("job_id,workload_name\n")
    with pytest.raises(ValueError, match=r"out_jobs.csv:1: header .* is not Batsim's"):
        read_jobs(path)


def test_parse_interval_set() -> None:
    assert parse_interval_set("0-3 7") == (0, 1, 2, 3, 7)
    with pytest.raises(ValueError, match="'a-b-c' is not"):
        parse_interval_set("a-b-c")


def test_resource_clusters_follow_batsim_host_name_order(tmp_path: Path) -> None:
    """Hosts are written b1, a1, b0, a0; Batsim numbers them a0, a1, b0, b1."""
    _, _, platform = write_run(tmp_path)
    assert resource_clusters(platform) == ("a", "a", "b", "b")


def test_workload_reader_names_the_bad_field(tmp_path: Path) -> None:
    data = workload_json()
    data["jobs"][1]["value"]["final"] = 9  # final above start 8
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"w.json: job w0!2: field 'value': .*final value 9"):
        read_workload_info(path)
    data = workload_json(measure_window=[10, 5])
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"measure_window \[10.0, 5.0\] needs t0 < t1"):
        read_workload_info(path)


# ----------------------------------------------------------------- outcomes


def test_accounting_follows_twins_and_direct_executions(tmp_path: Path) -> None:
    prefix, workload_path, _ = write_run(tmp_path)
    accounting = account(read_jobs(f"{prefix}_jobs.csv"), read_workload_info(workload_path))
    assert accounting.problems == ()
    outcomes = accounting.outcomes
    assert [o.outcome for o in outcomes.values()] == [
        Outcome.COMPLETED, Outcome.COMPLETED, Outcome.DROPPED, Outcome.COMPLETED,
    ]
    assert outcomes["w0!1"].execution.batsim_id == "hetsched!w0.1"
    assert outcomes["w0!4"].execution.batsim_id == "w0!4"
    assert [o.waiting_time for o in outcomes.values()] == [0.0, 10.0, None, 20.0]


def test_killed_twin_is_a_failed_task_earning_nothing(tmp_path: Path) -> None:
    jobs = JOBS_CSV.replace(
        "1,COMPLETED_SUCCESSFULLY,20.000000", "0,COMPLETED_WALLTIME_REACHED,20.000000"
    )
    prefix, workload_path, platform = write_run(tmp_path, jobs)
    summary = summarize(prefix, workload_path, platform)
    assert (summary.tasks_completed, summary.tasks_failed, summary.tasks_dropped) == (2, 1, 1)
    assert summary.value_earned == pytest.approx(10.0)  # task 2's 6 is lost


# -------------------------------------------------------------------- value


def test_value_earned_and_bound_by_hand(tmp_path: Path) -> None:
    prefix, workload_path, _ = write_run(tmp_path)
    workload = read_workload_info(workload_path)
    value = value_metrics(account(read_jobs(f"{prefix}_jobs.csv"), workload).outcomes, workload)
    assert value.earned == pytest.approx(10 + 6 + 0 + 0)
    assert value.bound == pytest.approx(10 + 8 + 5 + 6)
    assert value.percent == pytest.approx(100 * 16 / 29)
    assert value.tasks == 4


# ------------------------------------------------------------------- energy


def test_energy_total_and_window_by_hand(tmp_path: Path) -> None:
    prefix, _, _ = write_run(tmp_path)
    trace = read_consumed_energy(f"{prefix}_consumed_energy.csv")
    assert total_energy(trace) == 51000.0
    assert trace[1].epower == 600.0 and trace[0].epower is None
    # 600 W from 0 to 20: E(10) = 6000; 800 W from 50... E(60) = 36000 + 10 * 500 = 41000.
    assert cumulative_energy(trace, 10.0) == pytest.approx(6000.0)
    assert energy_between(trace, 10.0, 60.0) == pytest.approx(41000.0 - 6000.0)


def test_energy_trace_tolerates_rounding_noise(tmp_path: Path) -> None:
    """A cumulative energy printed 1e-6 J lower than the previous row (seen on a 2e8 J run:
    204956409.099608 after 204956409.099609) is rounding noise, not a decrease."""
    path = tmp_path / "out_consumed_energy.csv"
    path.write_text(ENERGY_CSV + "80.000000,50999.999999,e,400.000000,NA\n")
    assert read_consumed_energy(path)[-1].energy == 50999.999999


def test_energy_trace_must_not_decrease(tmp_path: Path) -> None:
    path = tmp_path / "out_consumed_energy.csv"
    path.write_text(ENERGY_CSV + "90.000000,50000.000000,e,400.000000,10.0\n")
    with pytest.raises(ValueError, match=r":8: cumulative energy 50000.0 decreases from 51000.0"):
        read_consumed_energy(path)


# ------------------------------------------------------------------ latency


def test_mapping_event_latency_by_hand(tmp_path: Path) -> None:
    """Latencies 0.1, 0.2, 0.3, 0.4 s. Linear percentiles on ranks 0..3:
    p50 at rank 1.5 -> 0.25; p95 at rank 2.85 -> 0.3 + 0.85 * 0.1 = 0.385; max 0.4."""
    prefix, _, _ = write_run(tmp_path)
    stats = latency_stats(read_mapping_events(f"{prefix}_mapping_events.csv"))
    assert stats.count == 4
    assert stats.p50 == pytest.approx(0.25)
    assert stats.p95 == pytest.approx(0.385)
    assert stats.max == pytest.approx(0.4)


def test_mapping_events_reader_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "out_mapping_events.csv"
    path.write_text(MAPPING_EVENTS_CSV + "60,1,x,0.1\n")
    with pytest.raises(ValueError, match=r"out_mapping_events.csv:6: .*'x'"):
        read_mapping_events(path)
    path.write_text("time,mappable,decisions,seconds\n")
    with pytest.raises(ValueError, match=r"out_mapping_events.csv:1: header .* is not the mapping"):
        read_mapping_events(path)


# ------------------------------------------------------------------ summary


def test_summary_of_the_whole_run(tmp_path: Path) -> None:
    """Utility (Machovec sec. II.C; hetsched.core.utility: without intervals, the plain
    exponential priority * exp(-urgency * t / 3600), urgency per hour):
    task 1: priority 8, urgency 36/h = 0.01/s, completes 50 s after arrival -> 8 exp(-0.5);
    its bound starts it at arrival on its fastest cluster (etc b = 25 s) -> 8 exp(-0.25).
    Task 3: priority 2, urgency 0, dropped -> earns 0; no ETC, bound = priority 2."""
    prefix, workload_path, platform = write_run(tmp_path)
    summary = summarize(prefix, workload_path, platform, heuristic="max-vpr", engine="embedded")
    data = summary.to_json()
    assert data["heuristic"] == "max-vpr" and data["engine"] == "embedded"
    assert data["outdir"] == str(tmp_path)
    assert (data["tasks_total"], data["tasks_completed"], data["tasks_dropped"]) == (4, 3, 1)
    assert data["tasks_failed"] == 0
    assert data["value_earned"] == pytest.approx(16.0)
    assert data["value_bound"] == pytest.approx(29.0)
    assert data["value_percent"] == pytest.approx(55.172413793)
    assert data["utility_earned"] == pytest.approx(8 * math.exp(-0.5))
    assert data["utility_bound"] == pytest.approx(8 * math.exp(-0.25) + 2)
    assert data["utility_percent"] == pytest.approx(
        100 * 8 * math.exp(-0.5) / (8 * math.exp(-0.25) + 2)
    )
    assert data["energy_joules"] == 51000.0
    assert data["energy_window_joules"] is None and data["energy_budget_joules"] is None
    assert data["makespan"] == 80.0
    assert data["mean_waiting_time"] == pytest.approx((0 + 10 + 20) / 3)
    assert data["mapping_events"] == 4
    assert data["mapping_latency_p50"] == pytest.approx(0.25)
    assert data["mapping_latency_p95"] == pytest.approx(0.385)
    assert data["mapping_latency_max"] == pytest.approx(0.4)
    assert json.loads(summary.dumps()) == data


def test_value_counted_by_the_end_of_the_window_or_at_any_time(tmp_path: Path) -> None:
    """Window [0, 40): tasks 1-4 (subtimes 0, 10, 15, 30) count, bound 29 as before. The
    paper's accounting counts what completes by t1 = 40: nothing (tasks 1 and 2 complete at
    50, task 4 at 80): earned 0. All completions: 10 + 6 + 0 + 0 = 16 (55.17 %)."""
    workload = workload_json(measure_window=[0, 40])
    prefix, workload_path, platform = write_run(tmp_path, workload=workload)
    summary = summarize(prefix, workload_path, platform)
    assert (summary.value_earned, summary.value_bound, summary.value_percent) == (0.0, 29.0, 0.0)
    assert summary.value_earned_total == pytest.approx(16.0)
    assert summary.value_percent_total == pytest.approx(100 * 16 / 29)
    info = read_workload_info(workload_path)
    outcomes = account(read_jobs(f"{prefix}_jobs.csv"), info).outcomes
    assert value_metrics(outcomes, info, until=50.0).earned == pytest.approx(16.0)  # both at 50


def test_summary_restricted_to_the_measure_window(tmp_path: Path) -> None:
    """Window [10, 60): tasks 2 (subtime 10), 3 (15) and 4 (30) count, task 1 (0) not.
    Value: earned 6 + 0 + 0 = 6 (task 2 completes at 50, before t1 = 60), bound 8 + 5 + 6 =
    19. Waiting: (10 + 20) / 2 = 15.
    Utility (Machovec sec. II.D: the share of each execution inside the window): task 1 ran
    [0, 50), 40/50 of it in the window: earns 0.8 x 8 exp(-0.5); its bound runs [0, 25) on
    b, 15/25 inside: 0.6 x 8 exp(-0.25); task 3, dropped, earns 0, bound 2 (no ETC: an
    instant at 15, inside). Energy in the window:
    E(60) - E(10) = 41000 - 6000 = 35000 J; the run's total stays 51000 J; the
    makespan stays the run's (80)."""
    workload = workload_json(measure_window=[10, 60])
    prefix, workload_path, platform = write_run(tmp_path, workload=workload)
    summary = summarize(prefix, workload_path, platform)
    assert summary.measure_window == (10.0, 60.0)
    assert (summary.tasks_total, summary.tasks_completed, summary.tasks_dropped) == (3, 2, 1)
    assert summary.value_earned == pytest.approx(6.0)
    assert summary.value_bound == pytest.approx(19.0)
    assert summary.value_percent == pytest.approx(100 * 6 / 19)
    assert summary.mean_waiting_time == pytest.approx(15.0)
    assert summary.utility_earned == pytest.approx(0.8 * 8 * math.exp(-0.5))
    assert summary.utility_bound == pytest.approx(0.6 * 8 * math.exp(-0.25) + 2)
    assert summary.energy_window_joules == pytest.approx(35000.0)
    assert summary.energy_joules == 51000.0
    assert summary.makespan == 80.0
    assert summary.to_json()["measure_window"] == [10.0, 60.0]


def test_summary_of_a_stock_run_without_annotations(tmp_path: Path) -> None:
    """A stock scheduler (no twins, no mapping-event file) on a workload without value or
    utility annotations: those metrics are absent (None), the rest is computed.
    Both jobs run directly: job 1 [0, 50) waits 0, job 2 [50, 90) waits 50 - 10 = 40."""
    jobs_csv = HEADER + (
        "1,w0,p1,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,50.000000,"
        '50.000000,0.000000,50.000000,1.000000,0-1,20000.000000,""\n'
        "2,w0,p2,10.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,50.000000,40.000000,"
        '90.000000,40.000000,80.000000,2.000000,0-1,16000.000000,""\n'
    )
    workload = {
        "nb_res": 4,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 2, "profile": "p"},
            {"id": 2, "subtime": 10, "res": 2, "profile": "p"},
        ],
        "profiles": {"p": {"type": "delay", "delay": 50}},
    }
    prefix, workload_path, platform = write_run(
        tmp_path, jobs_csv, energy=False, mapping_events=False, workload=workload
    )
    summary = summarize(prefix, workload_path, platform)
    assert summary.value_earned is None and summary.value_percent is None
    assert summary.utility_earned is None
    assert summary.energy_joules is None
    assert summary.mapping_events is None and summary.mapping_latency_p95 is None
    assert (summary.tasks_total, summary.tasks_completed) == (2, 2)
    assert summary.makespan == 90.0
    assert summary.mean_waiting_time == pytest.approx(20.0)


def test_summary_refuses_files_that_do_not_account_for_the_workload(tmp_path: Path) -> None:
    jobs = "".join(line + "\n" for line in JOBS_CSV.splitlines() if not line.startswith("3,"))
    prefix, workload_path, platform = write_run(tmp_path, jobs)
    with pytest.raises(ValueError, match="task w0!3 of the workload has no row"):
        summarize(prefix, workload_path, platform)
