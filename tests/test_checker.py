"""The independent schedule checker: passes on a good run, fails loudly on each violation.

The good run is the hand-made case of ``test_metrics.py`` (two clusters a = {0, 1},
b = {2, 3}; twins w0.1 [0, 50) on 0-1 and w0.2 [20, 50) on 2-3, task 3 dropped,
task 4 run directly [50, 80) on 0). Each test below breaks one rule by editing one
row, and checks that the violation names the jobs, nodes and times involved.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_metrics import HEADER, JOBS_CSV, workload_json, write_run

from hetsched.metrics.checker import BATSIM_RULES, ScheduleViolation, check_run

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
