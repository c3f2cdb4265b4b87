"""The independent schedule checker: passes on a good run, fails loudly on each violation.

The good run is the hand-made case of ``test_metrics.py`` (two clusters a = {0, 1},
b = {2, 3}; twins w0.1 [0, 50) on 0-1 and w0.2 [20, 50) on 2-3, task 3 dropped,
task 4 run directly [50, 80) on 0). Each test below breaks one rule by editing one
row, and checks that the violation names the jobs, nodes and times involved.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_metrics import HEADER, JOBS_CSV, workload_json, write_run

from hetsched.errors import OutputFileError
from hetsched.metrics.checker import (
    BATSIM_RULES,
    VIOLATION_KINDS,
    ScheduleViolation,
    _Allocations,
    _cluster_splits,
    _double_bookings,
    _resources,
    check_run,
)
from hetsched.metrics.output_files import JobRecord

TWIN_2 = (
    "w0.2,hetsched,twin.w0.2,20.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,20.000000,"
    '30.000000,50.000000,0.000000,30.000000,1.000000,2-3,12000.000000,""'
)
TASK_4 = (
    "4,w0,p4,30.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,50.000000,30.000000,"
    '80.000000,20.000000,50.000000,1.666667,0,6000.000000,""'
)


def violations(tmp_path: Path, jobs_csv: str, **workload_meta: object) -> list[str]:
    prefix, workload, platform = write_run(
        tmp_path, jobs_csv, workload=workload_json(**workload_meta)
    )
    with pytest.raises(ScheduleViolation) as info:
        check_run(prefix, workload, platform)
    assert "schedule checker:" in str(info.value)
    found = [str(v) for v in info.value.violations]
    for line in found:  # every violation is in the exception's message
        assert line in str(info.value)
    return found


def test_good_run_passes(tmp_path: Path) -> None:
    """Including back to back jobs: w0.1 ends at 50 on node 0, task 4 starts there at 50."""
    prefix, workload, platform = write_run(tmp_path)
    report = check_run(prefix, workload, platform)
    assert (report.tasks, report.executions, report.nodes_used) == (4, 3, 4)
    assert report.rules == (
        "accounting", "double-booking", "early-start", "unknown-resource", "cluster-split",
        "energy-budget",
    )  # fmt: skip


def test_double_booking(tmp_path: Path) -> None:
    """Task 4 starts at 40 on node 0 while w0.1 holds node 0 until 50."""
    moved = TASK_4.replace("50.000000,30.000000,80.000000", "40.000000,30.000000,70.000000")
    found = violations(tmp_path, JOBS_CSV.replace(TASK_4, moved))
    assert found == [
        "[double-booking] node 0: job w0!4 [40.0, 70.0) overlaps job hetsched!w0.1 [0.0, 50.0)"
    ]


def test_zero_length_job_inside_another_is_double_booked(tmp_path: Path) -> None:
    moved = TASK_4.replace("50.000000,30.000000,80.000000", "40.000000,0.000000,40.000000")
    found = violations(tmp_path, JOBS_CSV.replace(TASK_4, moved))
    assert found == [
        "[double-booking] node 0: job w0!4 [40.0, 40.0) overlaps job hetsched!w0.1 [0.0, 50.0)"
    ]


def test_early_start_uses_the_original_submission(tmp_path: Path) -> None:
    """Twin w0.2 registered and started at 5: fine by its own submission (5), but task 2
    was submitted at 10."""
    early = TWIN_2.replace("twin.w0.2,20.000000", "twin.w0.2,5.000000").replace(
        "COMPLETED_SUCCESSFULLY,20.000000,30.000000,50.000000",
        "COMPLETED_SUCCESSFULLY,5.000000,30.000000,35.000000",
    )
    found = violations(tmp_path, JOBS_CSV.replace(TWIN_2, early))
    assert found == [
        "[early-start] job hetsched!w0.2 (task w0!2) starts at 5.0, before its submission at 10.0"
    ]


def test_cluster_split(tmp_path: Path) -> None:
    """Task 4 on nodes 0 (cluster a) and 3 (cluster b)."""
    split = TASK_4.replace("1.666667,0,6000", "1.666667,0 3,6000").replace(
        "4,w0,p4,30.000000,1,", "4,w0,p4,30.000000,2,"
    )
    found = violations(tmp_path, JOBS_CSV.replace(TASK_4, split))
    assert found == [
        "[cluster-split] job w0!4 runs on several clusters: {'a': [0], 'b': [3]}"
    ]


def test_unknown_resource(tmp_path: Path) -> None:
    found = violations(tmp_path, JOBS_CSV.replace("1.666667,0,6000", "1.666667,9,6000"))
    assert found == [
        "[unknown-resource] job w0!4 runs on resources [9]: the platform has only 4 compute"
        " resources"
    ]


def test_energy_budget_over_the_whole_run(tmp_path: Path) -> None:
    """The platform consumed 51000 J (test_metrics); a 50000 J budget is broken by 1000 J."""
    found = violations(tmp_path, JOBS_CSV, energy_budget=50000)
    assert found == [
        "[energy-budget] the platform consumed 51000.0 J during the run, over the budget of"
        " 50000.0 J by 1000.0 J"
    ]
    prefix, workload, platform = write_run(
        tmp_path, workload=workload_json(energy_budget=51000)
    )
    check_run(prefix, workload, platform)


def test_energy_budget_over_the_measure_window(tmp_path: Path) -> None:
    """Window [10, 60): 35000 J consumed (test_metrics). 40000 J passes, 30000 J does not."""
    prefix, workload, platform = write_run(
        tmp_path, workload=workload_json(measure_window=[10, 60], energy_budget=40000)
    )
    check_run(prefix, workload, platform)
    found = violations(tmp_path, JOBS_CSV, measure_window=[10, 60], energy_budget=30000)
    assert len(found) == 1
    assert found[0].startswith("[energy-budget] the platform consumed 35000.0")
    assert "during the measure window [10.0, 60.0]" in found[0]


def test_energy_budget_without_energy_trace(tmp_path: Path) -> None:
    prefix, workload, platform = write_run(
        tmp_path, energy=False, workload=workload_json(energy_budget=1e9)
    )
    with pytest.raises(ScheduleViolation, match="run has no energy trace"):
        check_run(prefix, workload, platform)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            lambda csv: csv.replace('3,w0,p3,15.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n', ""),
            "[accounting] task w0!3 of the workload has no row in out_jobs.csv",
            id="task-missing",
        ),
        pytest.param(
            lambda csv: csv
            + "w0.9,hetsched,twin.w0.9,80.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,80.000000,"
            '10.000000,90.000000,0.000000,10.000000,1.000000,2-3,4000.000000,""\n',
            "[accounting] twin hetsched!w0.9 has no original: no task w0!9",
            id="twin-without-original",
        ),
        pytest.param(
            lambda csv: csv + '7,w1,p,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n',
            "[accounting] job w1!7 belongs to neither workload w0 nor the twin workload hetsched",
            id="unknown-workload",
        ),
        pytest.param(
            lambda csv: csv + '8,w0,p,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n',
            "[accounting] job w0!8 is in out_jobs.csv, not in the workload",
            id="job-not-in-workload",
        ),
        pytest.param(
            lambda csv: csv.replace(
                TWIN_2, 'w0.2,hetsched,twin.w0.2,20.000000,2,-1.000000,0,REJECTED,,,,,,,,,""'
            ),
            "[accounting] twin hetsched!w0.2 of w0!2 was REJECTED",
            id="twin-rejected",
        ),
        pytest.param(
            lambda csv: csv.replace(
                '1,w0,p1,0.000000,2,-1.000000,0,REJECTED,,,,,,,,,""',
                "1,w0,p1,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,80.000000,10.000000,"
                '90.000000,80.000000,90.000000,9.000000,2-3,4000.000000,""',
            ),
            "[accounting] task w0!1 ran twice: directly (COMPLETED_SUCCESSFULLY) and as twin"
            " hetsched!w0.1",
            id="ran-twice",
        ),
        pytest.param(
            lambda csv: csv.replace("3,w0,p3,15.000000", "3,w0,p3,16.000000"),
            "[accounting] task w0!3: submission_time 16.0 in out_jobs.csv differs from the"
            " workload's subtime 15.0",
            id="submission-differs",
        ),
    ],
)
def test_accounting_violations(tmp_path: Path, edit, expected: str) -> None:
    assert violations(tmp_path, edit(JOBS_CSV)) == [expected]


def test_illegal_final_state_fails_when_reading(tmp_path: Path) -> None:
    """A state Batsim never writes (e.g. RUNNING: Batsim refuses to end with a running
    job) is a malformed output file, reported with its line."""
    prefix, workload, platform = write_run(
        tmp_path, JOBS_CSV.replace("3,w0,p3,15.000000,1,-1.000000,0,REJECTED", "3,w0,p3,"
                                   "15.000000,1,-1.000000,0,SUBMITTED")
    )
    with pytest.raises(ValueError, match=r"out_jobs.csv:6: job w0!3: final_state 'SUBMITTED'"):
        check_run(prefix, workload, platform)


def test_every_violation_is_listed_at_once(tmp_path: Path) -> None:
    """Three broken rules in one file: all three are reported, not just the first."""
    overlap = TASK_4.replace("50.000000,30.000000,80.000000", "40.000000,30.000000,70.000000")
    jobs = HEADER + "".join(
        line + "\n"
        for line in JOBS_CSV.replace(TASK_4, overlap).splitlines()[1:]
        if not line.startswith("3,")
    )
    found = violations(tmp_path, jobs, energy_budget=100)
    kinds = sorted(line.split("]")[0][1:] for line in found)
    assert kinds == ["accounting", "double-booking", "energy-budget"]


def test_batsim_rules_only_for_stock_schedulers(tmp_path: Path) -> None:
    """A stock scheduler knows no cluster and no budget: with BATSIM_RULES, a split
    allocation and a broken budget pass, a double booking still fails."""
    split = TASK_4.replace("1.666667,0,6000", "1.666667,0 3,6000")
    prefix, workload, platform = write_run(
        tmp_path, JOBS_CSV.replace(TASK_4, split), workload=workload_json(energy_budget=100)
    )
    with pytest.raises(ScheduleViolation) as info:
        check_run(prefix, workload, platform)
    assert {v.kind for v in info.value.violations} == {"cluster-split", "energy-budget"}
    report = check_run(prefix, workload, platform, rules=BATSIM_RULES)
    assert report.rules == BATSIM_RULES
    overlap = split.replace("50.000000,30.000000,80.000000", "40.000000,30.000000,70.000000")
    prefix, workload, platform = write_run(tmp_path, JOBS_CSV.replace(TASK_4, overlap))
    with pytest.raises(ScheduleViolation, match="double-booking"):
        check_run(prefix, workload, platform, rules=BATSIM_RULES)


def test_unknown_rule_is_refused(tmp_path: Path) -> None:
    prefix, workload, platform = write_run(tmp_path)
    with pytest.raises(ValueError, match="rules must be among"):
        check_run(prefix, workload, platform, rules=("no-rule",))


# ---------------------------------------------------------------- every kind it claims

# Each kind of VIOLATION_KINDS, with one broken run built by hand from the good one:
# (edit of out_jobs.csv, workload meta, the violation expected).
KIND_CASES = {
    "accounting": (
        lambda csv: csv.replace('3,w0,p3,15.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n', ""),
        {}, "[accounting] task w0!3 of the workload has no row in out_jobs.csv",
    ),
    "double-booking": (
        lambda csv: csv.replace(TASK_4, TASK_4.replace("50.000000,30.000000,80.000000",
                                                       "45.000000,30.000000,75.000000")),
        {}, "[double-booking] node 0: job w0!4 [45.0, 75.0) overlaps job hetsched!w0.1"
            " [0.0, 50.0)",
    ),
    "early-start": (  # a direct (stock-style) execution: task 4 (submitted at 30) run
        # [5, 8) on node 2, which is free until w0.2 starts there at 20
        lambda csv: csv.replace(TASK_4, TASK_4.replace("50.000000,30.000000,80.000000",
                                                       "5.000000,3.000000,8.000000")
                                .replace("1.666667,0,", "1.666667,2,")),
        {}, "[early-start] job w0!4 (task w0!4) starts at 5.0, before its submission at 30.0",
    ),
    "unknown-resource": (  # an execution on no resource at all
        lambda csv: csv.replace("1.666667,0,6000", "1.666667,,6000"),
        {}, "[unknown-resource] job w0!4 ran on no resource",
    ),
    "cluster-split": (  # task 4 on nodes 0 (cluster a) and 3 (cluster b), both free
        lambda csv: csv.replace("1.666667,0,6000", "1.666667,0 3,6000"),
        {}, "[cluster-split] job w0!4 runs on several clusters: {'a': [0], 'b': [3]}",
    ),
    "energy-budget": (
        lambda csv: csv, {"energy_budget": 50999.0},
        "[energy-budget] the platform consumed 51000.0 J during the run, over the budget of"
        " 50999.0 J by 1.0 J",
    ),
}


def test_every_kind_the_checker_claims_has_a_broken_run() -> None:
    """A kind added to the checker without a broken run here fails this test."""
    assert set(KIND_CASES) == set(VIOLATION_KINDS)


@pytest.mark.parametrize("kind", sorted(KIND_CASES))
def test_each_kind_is_reported_alone(tmp_path: Path, kind: str) -> None:
    edit, meta, expected = KIND_CASES[kind]
    assert violations(tmp_path, edit(JOBS_CSV), **meta) == [expected]


def test_double_booking_with_a_job_in_between(tmp_path: Path) -> None:
    """Node 0: w0.1 [0, 50), then a job [10, 20) inside it and task 4 moved to [30, 60):
    task 4 overlaps w0.1, which is not the job just before it in start order."""
    inside = ("w0.3,hetsched,twin.w0.3,15.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,"
              '15.000000,5.000000,20.000000,0.000000,5.000000,1.000000,0,100.000000,""\n')
    moved = TASK_4.replace("50.000000,30.000000,80.000000", "30.000000,30.000000,60.000000")
    found = violations(tmp_path, JOBS_CSV.replace(TASK_4, moved) + inside)
    assert "[double-booking] node 0: job w0!4 [30.0, 60.0) overlaps job hetsched!w0.1 [0.0, 50.0)" \
        in found
    assert "[double-booking] node 0: job hetsched!w0.3 [15.0, 20.0) overlaps job hetsched!w0.1" \
        " [0.0, 50.0)" in found


@pytest.mark.parametrize(
    ("times", "message"),
    [
        ("50.000000,30.000000,40.000000", "finish_time 40.0 is before starting_time 50.0"),
        ("50.000000,30.000000,90.000000", "starting_time 50.0 + execution_time 30.0 !="
                                          " finish_time 90.0"),
    ],
)
def test_times_that_disagree_are_a_malformed_file(tmp_path: Path, times: str,
                                                  message: str) -> None:
    """A row that says it ran backwards, or longer than its own times, cannot be checked."""
    bad = JOBS_CSV.replace(TASK_4, TASK_4.replace("50.000000,30.000000,80.000000", times))
    prefix, workload, platform = write_run(tmp_path, bad)
    with pytest.raises(OutputFileError, match=r"out_jobs\.csv:7: job w0!4: " + re.escape(message)):
        check_run(prefix, workload, platform)


# A random correct schedule on the two clusters (a = nodes 0-1, b = nodes 2-3), then one
# fault of a chosen kind injected: the checker passes the first and reports the kind.
ROW = ("{job},{workload},p,{sub:f},{n},-1.000000,1,COMPLETED_SUCCESSFULLY,{start:f},"
       '{run:f},{end:f},0.000000,0.000000,1.000000,{nodes},0.000000,""\n')
REJECTED_ROW = '{job},w0,p,{sub:f},{n},-1.000000,0,REJECTED,,,,,,,,,""\n'


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[dict], list[dict]]:
    """Tasks (id, subtime) and executions (task, twin, nodes, start, end), node by node
    sequential, each execution inside one cluster and after its task's submission."""
    free = [0.0, 0.0, 0.0, 0.0]
    tasks, runs = [], []
    subtime = 0.0
    for task in range(1, draw(st.integers(1, 8)) + 1):
        subtime += draw(st.integers(0, 20))
        tasks.append({"id": task, "subtime": subtime})
        if draw(st.integers(0, 4)) == 0:
            continue  # dropped
        cluster = draw(st.sampled_from([(0, 1), (2, 3)]))
        nodes = cluster[: draw(st.integers(1, 2))]
        start = max([subtime, *(free[node] for node in nodes)]) + draw(st.integers(0, 5))
        end = start + draw(st.integers(1, 30))
        for node in nodes:
            free[node] = end
        runs.append({"task": task, "twin": draw(st.booleans()), "nodes": list(nodes),
                     "start": start, "end": end})
    return tasks, runs


def _jobs_csv(tasks: list[dict], runs: list[dict]) -> str:
    by_task = {run["task"]: run for run in runs}
    rows = []
    for task in tasks:
        if task.get("omit"):
            continue
        run, sub = by_task.get(task["id"]), task["subtime"]
        if run is None or run["twin"]:
            rows.append(REJECTED_ROW.format(job=task["id"], sub=sub, n=1))
        if run is not None:
            job, workload = (f"w0.{task['id']}", "hetsched") if run["twin"] else (task["id"], "w0")
            rows.append(ROW.format(
                job=job, workload=workload, sub=run["start"] if run["twin"] else sub,
                n=len(run["nodes"]), start=run["start"], run=run["end"] - run["start"],
                end=run["end"], nodes=" ".join(map(str, run["nodes"])),
            ))
    return HEADER + "".join(rows)


def _energy_csv(runs: list[dict]) -> str:
    end = max((run["end"] for run in runs), default=0.0)
    return f"time,energy,event_type,wattmin,epower\n0.0,0.0,s,0.0,NA\n{end},{400 * end},e,0.0,NA\n"


def _inject(kind: str, tasks: list[dict], runs: list[dict], data: st.DataObject) -> dict:
    """Break the schedule for ``kind``; returns the workload meta to use."""
    run = data.draw(st.sampled_from(runs))
    length = run["end"] - run["start"]
    if kind == "accounting":
        data.draw(st.sampled_from(tasks))["omit"] = True  # no row in out_jobs.csv
    elif kind == "double-booking":
        other = data.draw(st.sampled_from([r for r in runs if r is not run]))
        run["nodes"] = [other["nodes"][0]]
        run["start"] = max(other["start"], next(t["subtime"] for t in tasks
                                                if t["id"] == run["task"]))
        run["end"] = run["start"] + length
        other_end = other["end"]
        assume(run["start"] < other_end)
    elif kind == "early-start":
        submitted = next(t["subtime"] for t in tasks if t["id"] == run["task"])
        assume(submitted >= 1)
        run["start"] = submitted - data.draw(st.integers(1, int(submitted)))
        run["end"] = run["start"] + length
    elif kind == "unknown-resource":
        run["nodes"] = [data.draw(st.integers(4, 50))]
    elif kind == "cluster-split":
        run["nodes"] = [0, 2]
    else:
        total = 400 * max(r["end"] for r in runs)
        return {"energy_budget": total * data.draw(st.floats(0.01, 0.99))}
    return {}


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(schedule=schedules(), kind=st.sampled_from(VIOLATION_KINDS), data=st.data())
def test_random_schedules_pass_and_each_injected_fault_is_caught(
    tmp_path_factory: pytest.TempPathFactory, schedule: tuple, kind: str, data: st.DataObject
) -> None:
    tasks, runs = copy.deepcopy(schedule)
    assume(len(runs) >= 2)
    folder = tmp_path_factory.mktemp("run")

    def run_files(meta: dict) -> tuple[Path, Path, Path]:
        workload = {"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 1.0}},
                    "jobs": [{"id": t["id"], "subtime": t["subtime"], "res": 1, "profile": "p"}
                             for t in tasks],
                    "hetsched": {"schema_version": 1, **meta}}
        prefix, workload_path, platform = write_run(folder, _jobs_csv(tasks, runs),
                                                    workload=workload)
        (folder / "out_consumed_energy.csv").write_text(_energy_csv(runs))
        return prefix, workload_path, platform

    budget = {"energy_budget": 400 * max(r["end"] for r in runs) + 1}
    check_run(*run_files(budget))  # the correct schedule passes, every rule on
    meta = _inject(kind, tasks, runs, data)
    with pytest.raises(ScheduleViolation) as info:
        check_run(*run_files(meta or budget))
    assert kind in {violation.kind for violation in info.value.violations}


_TIMES = st.sampled_from([0.0, 1.0, 1.0000005, 2.0, 2.5, 3.0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TIMES, _TIMES, st.lists(st.integers(0, 5), max_size=4)),
                max_size=8))
def test_the_flagged_nodes_and_executions_hold_every_violation(
    runs: list[tuple[float, float, list[int]]]
) -> None:
    """The array pass (:class:`_Allocations`) flags a superset of what the per-node sweep and
    the per-execution rules find over every node and every execution, so the checker's
    violations are theirs, in their order: zero-length jobs, touching and nearly touching
    intervals, nodes off the platform (4 and 5 of 4 resources), no node at all."""
    records = [
        JobRecord(str(index), "w0", "p", 0.0, max(len(nodes), 1), 10.0, True,
                  "COMPLETED_SUCCESSFULLY", min(a, b), abs(a - b), max(a, b),
                  tuple(dict.fromkeys(nodes)))
        for index, (a, b, nodes) in enumerate(runs)
    ]
    clusters = ("a", "a", "b", "b")
    allocations = _Allocations.of(records)
    every_node = sorted({n for r in records for n in r.allocated_resources})
    assert (_double_bookings(records, allocations.nodes_held_twice())
            == _double_bookings(records, every_node))  # fmt: skip
    outside = allocations.outside(clusters)
    assert _resources(outside, clusters) == _resources(records, clusters)
    assert _cluster_splits(outside, clusters) == _cluster_splits(records, clusters)
