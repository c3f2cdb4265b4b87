"""The task table (metrics/task_table.py): one row per task, twins resolved, loaded by evalys.

The case, computed by hand on test_run.py's tiny platform (``fast`` = resources 0-1,
``slow`` = 2-3), every job asking for 2 nodes:

===  =======  =================  ==========================
job  subtime  ETC fast / slow    value (start, final, soft, hard)
===  =======  =================  ==========================
1    0        100 / 200          10, 2, 150, 300
2    10       50 / 100           6, 1, 60, 160
3    20       40 / 80            8, 0, 100, 200
===  =======  =================  ==========================

``easy`` (execution twins): job 1 on ``fast`` [0, 100), job 2 on ``slow`` [10, 110) (ETC 100);
at 20 nothing is free, so job 3 waits until ``fast`` frees at 100: [100, 140), a wait of 80 s.
Values: 10 (done 100 s after arrival <= 150), 6 + (1 - 6) x (100 - 60) / 100 = 4, and
8 + (0 - 8) x (120 - 100) / 100 = 6.4 (done 120 s after arrival). Batsim's ``out_jobs.csv``
shows job 3's twin submitted at 100 and a wait of 0; the task table shows 80.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from procset import ProcSet
from test_run import PLATFORM_XML

from hetsched.errors import OutputFileError
from hetsched.metrics.outcomes import Outcome, TaskOutcome
from hetsched.metrics.output_files import JobRecord, PStateChange
from hetsched.metrics.task_table import (
    TASK_TABLE_COLUMNS,
    TaskRow,
    _pstates_at_starts,
    interval_set_text,
    read_task_table,
    task_table,
    task_table_path,
    write_task_table,
)
from hetsched.running.run import run_heuristic

JOBS = [
    (1, 0, {"fast": 100.0, "slow": 200.0}, [10, 2, 150, 300]),
    (2, 10, {"fast": 50.0, "slow": 100.0}, [6, 1, 60, 160]),
    (3, 20, {"fast": 40.0, "slow": 80.0}, [8, 0, 100, 200]),
]


def write_case(folder: Path) -> tuple[Path, Path]:
    platform, workload = folder / "platform.xml", folder / "workload.json"
    platform.write_text(PLATFORM_XML)
    workload.write_text(json.dumps({
        "nb_res": 4,
        "jobs": [
            {"id": job_id, "subtime": subtime, "walltime": 1000, "res": 2,
             "profile": f"p{job_id}", "cores": 8, "etc": etc,
             "value": dict(zip(("start", "final", "soft_deadline", "hard_deadline"), value,
                               strict=True))}
            for job_id, subtime, etc, value in JOBS
        ],
        "profiles": {f"p{job_id}": {"type": "delay", "delay": etc["fast"]}
                     for job_id, _, etc, _ in JOBS},
        "hetsched": {"schema_version": 1, "reference_cluster": "fast",
                     "clusters": {"fast": 4, "slow": 4}, "measure_window": None},
    }))  # fmt: skip
    return platform, workload


@pytest.fixture
def easy_run(tmp_path: Path) -> Path:
    platform, workload = write_case(tmp_path)
    run_heuristic("easy", platform, workload, tmp_path / "easy")
    return tmp_path / "easy"


def test_a_run_with_twins_gets_one_row_per_task_with_the_real_waits(easy_run: Path) -> None:
    rows = read_task_table(easy_run / "out_jobset.csv")
    assert [r.task_id for r in rows] == ["w0!1", "w0!2", "w0!3"]
    assert [(r.submission_time, r.starting_time, r.finish_time) for r in rows] == [
        (0.0, 0.0, 100.0), (10.0, 10.0, 110.0), (20.0, 100.0, 140.0),
    ]  # fmt: skip
    assert [r.waiting_time for r in rows] == [0.0, 0.0, 80.0]
    assert [r.cluster for r in rows] == ["fast", "slow", "fast"]
    assert [r.allocated_resources for r in rows] == [(0, 1), (2, 3), (0, 1)]
    assert [r.pstate for r in rows] == ["0", "0", "0"]
    assert [r.executed_by for r in rows] == ["hetsched!w0.1", "hetsched!w0.2", "hetsched!w0.3"]
    assert [r.final_state for r in rows] == ["COMPLETED_SUCCESSFULLY"] * 3
    assert [r.value for r in rows] == pytest.approx([10.0, 4.0, 6.4])
    assert [r.utility for r in rows] == [None] * 3
    assert all(r.consumed_energy is not None and r.consumed_energy > 0 for r in rows)
    header = (easy_run / "out_jobset.csv").read_text().splitlines()[0]
    assert tuple(header.split(",")) == TASK_TABLE_COLUMNS


def test_evalys_loads_the_table_with_the_tasks_waits_and_queue(easy_run: Path) -> None:
    """evalys' own JobSet reads the table: waits, queue and utilisation are the tasks'; read
    from out_jobs.csv the twin of job 3 seems to wait 0 s."""
    import evalys.jobset as jobset_module  # dev dependency (extra "evalys")
    jobset = jobset_module.JobSet.from_csv(str(easy_run / "out_jobset.csv"), resource_bounds=(0, 3))
    frame = jobset.df.set_index("jobID")
    assert list(frame.index) == ["1", "2", "3"]
    assert list(frame["waiting_time"]) == [0.0, 0.0, 80.0]
    assert str(frame.loc["3", "allocated_resources"]) == "0-1"
    assert list(frame["proc_alloc"]) == [2, 2, 2]
    queue = jobset.queue["load"]  # requested resources waiting
    assert (queue.loc[10.0], queue.loc[20.0], queue.loc[100.0]) == (0, 2, 0)
    load = jobset.utilisation["load"]  # resources computing
    assert list(load.items()) == [(0.0, 2), (10.0, 4), (100.0, 4), (110.0, 2), (140.0, 0)]

    raw = jobset_module.JobSet.from_csv(str(easy_run / "out_jobs.csv"), resource_bounds=(0, 3))
    twin = raw.df[raw.df["jobID"] == "w0.3"].iloc[0]
    assert (twin["submission_time"], twin["waiting_time"]) == (100.0, 0.0)


def test_a_stock_scheduler_runs_originals_directly(tmp_path: Path) -> None:
    """pybatsim's easyBackfill runs the delay profiles (the ETC on fast) wherever it likes:
    no twins; job 3 waits for two free nodes."""
    platform, workload = write_case(tmp_path)
    run_heuristic("pybatsim:easyBackfill", platform, workload, tmp_path / "stock")
    rows = read_task_table(tmp_path / "stock" / "out_jobset.csv")
    assert [r.executed_by for r in rows] == ["", "", ""]
    assert [(r.starting_time, r.finish_time) for r in rows] == [
        (0.0, 100.0), (10.0, 60.0), (60.0, 100.0),
    ]  # fmt: skip
    assert [r.cluster for r in rows] == ["fast", "slow", "slow"]


def test_a_dropped_task_keeps_a_rejected_row(tmp_path: Path) -> None:
    """max-vpr-ph drops what can earn nothing: with job 3's hard deadline passed by the time
    anything frees, it is never run and its row is Batsim's REJECTED one."""
    platform, workload = write_case(tmp_path)
    document = json.loads(workload.read_text())
    document["jobs"][2]["value"] = {"start": 8, "final": 0, "soft_deadline": 30,
                                    "hard_deadline": 60}
    workload.write_text(json.dumps(document))
    run_heuristic("max-vpr-ph", platform, workload, tmp_path / "run")
    rows = read_task_table(tmp_path / "run" / "out_jobset.csv")
    dropped = rows[2]
    assert (dropped.final_state, dropped.starting_time, dropped.allocated_resources) == (
        "REJECTED", None, (),
    )  # fmt: skip
    assert (dropped.value, dropped.cluster, dropped.executed_by) == (0.0, "", "")
    fields = dropped.to_csv()
    assert (fields["waiting_time"], fields["success"], fields["allocated_resources"]) == (
        "", "0", "",
    )  # fmt: skip


def test_pstates_at_the_start_count_a_switch_at_that_very_time() -> None:
    def executed(task: str, start: float, nodes: tuple[int, ...]) -> TaskOutcome:
        row = JobRecord(task.replace("!", "."), "hetsched", "t", start, len(nodes), -1.0, True,
                        "COMPLETED_SUCCESSFULLY", start, 5.0, start + 5.0, nodes)
        return TaskOutcome(task, 0.0, Outcome.COMPLETED, row)

    changes = [PStateChange(0.0, (0, 1, 2, 3), 0), PStateChange(10.0, (2, 3), 2),
               PStateChange(20.0, (3,), 1)]
    outcomes = [executed("w0!a", 10.0, (2, 3)), executed("w0!b", 5.0, (0, 1)),
                executed("w0!c", 30.0, (2, 3)), TaskOutcome("w0!d", 0.0, Outcome.DROPPED)]
    assert _pstates_at_starts(outcomes, changes) == {"w0!a": "2", "w0!b": "0", "w0!c": "1 2"}


def test_bad_tables_and_runs_are_named(tmp_path: Path, easy_run: Path) -> None:
    table = easy_run / "out_jobset.csv"
    lines = table.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], lines[1].replace(",0.0,", ",soon,", 1)]) + "\n")
    with pytest.raises(OutputFileError, match=r"bad\.csv:2: column submission_time: 'soon'"):
        read_task_table(bad)
    fields = read_task_table(table)[0].to_csv()
    for column, text, message in (("requested_number_of_resources", "2.5", "is not an int"),
                                  ("requested_time", "inf", "is not a finite number"),
                                  ("submission_time", "", "is empty")):
        with pytest.raises(OutputFileError, match=rf"^here: column {column}\b.*{message}"):
            TaskRow.from_csv({**fields, column: text}, "here")
    bad.write_text("job_id,final_state\n")
    with pytest.raises(OutputFileError, match=r"bad\.csv:1: header .* is not the task table's"):
        read_task_table(bad)
    bad.write_bytes(lines[0].encode() + b"\n\xff\xfe\n")
    with pytest.raises(OutputFileError, match=r"bad\.csv:\d+: not the task table's CSV"):
        read_task_table(bad)
    with pytest.raises(FileExistsError):
        write_task_table(table, read_task_table(table))
    (easy_run / "out_jobs.csv").write_text((easy_run / "out_jobs.csv").read_text()
                                           .replace("\n3,w0,", "\n4,w0,"))
    with pytest.raises(OutputFileError, match="does not account"):
        task_table(easy_run / "out", tmp_path / "workload.json", tmp_path / "platform.xml")
    assert task_table_path(easy_run / "out") == table
    with pytest.raises(ValueError, match="REJECTED but has a starting_time"):
        TaskRow("1", "w0", "p", 0.0, 1, 1.0, "REJECTED", starting_time=1.0)


def test_a_start_is_compared_with_its_submission_at_batsims_precision() -> None:
    """Batsim prints the start of a job submitted at 57.245384205516594 and started then as
    57.245384 (6 decimals): not before its submission; a microsecond earlier is."""
    fields = ("0", "w0", "p", 57.245384205516594, 8, 300.0, "COMPLETED_SUCCESSFULLY")
    row = TaskRow(*fields, starting_time=57.245384, finish_time=60.0)
    assert row.waiting_time == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match=r"task w0!0: starts at 57\.245383, before its"
                       r" submission 57\.245384205516594"):
        TaskRow(*fields, starting_time=57.245383, finish_time=60.0)


def test_interval_set_text_is_procsets_text() -> None:
    """The task table's ``allocated_resources`` (Batsim's interval-set form) is the text
    ProcSet gives, on sorted, unsorted and repeated ids, and on runs of every length."""
    rng = random.Random(7)
    cases = [(), (0,), (5, 4, 3), (1, 1, 2), (0, 2, 4), tuple(range(9369))]
    cases += [tuple(rng.sample(range(300), rng.randint(1, 299))) for _ in range(200)]
    cases += [tuple(sorted(set(ids))) for ids in cases]  # as out_jobs.csv's sets read
    for ids in cases:
        assert interval_set_text(ids) == str(ProcSet(*ids)), ids
