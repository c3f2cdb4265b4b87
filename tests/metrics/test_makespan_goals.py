"""Completion by the makespan goal from Batsim's output files (metrics/robustness.py), on a
run written by hand: a batch submitted at 10 s with Delta = 100 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.errors import OutputFileError, WorkloadError
from hetsched.metrics.makespan_goals import (
    GoalOutcome,
    read_goal_outcomes,
    robustness_metrics,
)
from hetsched.metrics.resources import resource_clusters
from hetsched.metrics.summary import summarize
from hetsched.running.run_cli import summary_table

PLATFORM_XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"><prop id="role" value="master"/></host>
    <host id="a0" speed="1Gf"><prop id="cluster" value="a"/></host>
    <host id="a1" speed="1Gf"><prop id="cluster" value="a"/></host>
    <host id="b0" speed="1Gf"><prop id="cluster" value="b"/></host>
  </zone>
</platform>
"""
HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)


def _twin(job: int, resources: str, finish: float, state: str = "COMPLETED_SUCCESSFULLY") -> str:
    """The original (rejected: the adapter runs a twin) and its twin, started at 10 s."""
    count = len(resources.split("-")) if "-" in resources else 1
    success = int(state == "COMPLETED_SUCCESSFULLY")
    return (
        f'{job},w0,p,10.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n'
        f"w0.{job},hetsched,twin.w0.{job},10.000000,{count},-1.000000,{success},{state},"
        f"10.000000,{finish - 10:.6f},{finish:.6f},0.000000,{finish - 10:.6f},1.000000,"
        f'{resources},0.000000,""\n'
    )


# job 1: 2 processors of a, finishes at 110.0000005 s (100.0000005 s after submission: met,
# within Batsim's 6-decimal tolerance); job 2: 1 of b, finishes at 110.5 s (missed); job 3:
# dropped (never ran); job 4: no makespan goal (not an application of the batch)
JOBS_CSV = (
    HEADER + _twin(1, "0-1", 110.0000005) + _twin(2, "2", 110.5)
    + '3,w0,p,10.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n' + _twin(4, "2", 500.0)
)  # fmt: skip


def _files(tmp_path: Path, jobs: list[dict]) -> tuple[Path, ...]:
    """The run's prefix, a workload of ``jobs`` (3 resources, one delay profile), the platform."""
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps({"nb_res": 3, "jobs": jobs,
                                    "profiles": {"p": {"type": "delay", "delay": 1.0}}}))
    platform = tmp_path / "platform.xml"
    platform.write_text(PLATFORM_XML)
    return tmp_path / "out", workload, platform


def _write(tmp_path: Path, jobs_csv: str = JOBS_CSV, goal: object = 100.0) -> tuple[Path, ...]:
    (tmp_path / "out_jobs.csv").write_text(jobs_csv)
    jobs = [{"id": str(n), "subtime": 10.0, "res": 1, "profile": "p",
             **({"makespan_goal": goal} if n < 4 and goal is not None else {})}
            for n in range(1, 5)]
    return _files(tmp_path, jobs)


def test_goals_met_missed_and_dropped(tmp_path: Path) -> None:
    prefix, workload, platform = _write(tmp_path)
    assert resource_clusters(platform) == ("a", "a", "b")
    goals = read_goal_outcomes(prefix, workload, platform)
    assert goals == {
        "w0!1": GoalOutcome("w0!1", 100.0, pytest.approx(100.0000005), "a", 2),
        "w0!2": GoalOutcome("w0!2", 100.0, 100.5, "b", 1),
        "w0!3": GoalOutcome("w0!3", 100.0, None, None, 0),
    }
    assert [g.met for g in goals.values()] == [True, False, False]
    metrics = robustness_metrics(goals)
    assert metrics is not None
    assert (metrics.applications, metrics.met, metrics.rate, metrics.batch_met) == (
        3, 1, pytest.approx(1 / 3), False
    )
    assert robustness_metrics({}) is None


def test_a_run_summary_counts_the_goals_met(tmp_path: Path) -> None:
    """``hetsched run`` prints how many applications met their goal: 1 of 3 here (job 4 has
    no goal); an application split over two clusters (a stock scheduler may do it) counts too."""
    summary = summarize(*_write(tmp_path))
    assert (summary.makespan_goals, summary.makespan_goals_met) == (3, 1)
    assert "met their makespan goal  " in summary_table(summary)
    assert summary_table(summary).split("met their makespan goal")[1].split("\n")[0].strip() == (
        "1 of 3"
    )
    split = summarize(*_write(tmp_path, JOBS_CSV.replace(",0-1,", ",1-2,")))
    assert (split.makespan_goals, split.makespan_goals_met) == (3, 1)
    no_goal = summarize(*_write(tmp_path, goal=None))
    assert (no_goal.makespan_goals, no_goal.makespan_goals_met) == (None, None)
    assert "makespan goal" not in summary_table(no_goal)


def test_every_application_met_is_the_batch_met() -> None:
    goals = {f"w0!{n}": GoalOutcome(f"w0!{n}", 50.0, 49.0 + n, "a", 1) for n in (0, 1)}
    metrics = robustness_metrics(goals)
    assert metrics is not None and metrics.batch_met and metrics.rate == 1.0
    late = {**goals, "w0!2": GoalOutcome("w0!2", 50.0, 50.000002, "a", 1)}
    assert robustness_metrics(late).batch_met is False  # type: ignore[union-attr]


def test_a_killed_application_misses_the_goal(tmp_path: Path) -> None:
    csv = HEADER + _twin(1, "0-1", 50.0, "COMPLETED_KILLED") + _twin(2, "2", 20.0) + (
        '3,w0,p,10.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n' + _twin(4, "2", 30.0)
    )
    goals = read_goal_outcomes(*_write(tmp_path, csv))
    assert (goals["w0!1"].met, goals["w0!1"].finish, goals["w0!1"].cluster) == (False, None, "a")
    assert goals["w0!2"].met


def test_an_application_on_two_types_is_an_error(tmp_path: Path) -> None:
    csv = JOBS_CSV.replace(",0-1,", ",1-2,")  # resources 1 (a) and 2 (b)
    with pytest.raises(OutputFileError, match="task w0!1 ran on resources of clusters"
                                              " \\['a', 'b'\\]"):
        read_goal_outcomes(*_write(tmp_path, csv))


def test_a_missing_job_is_an_error_naming_the_file(tmp_path: Path) -> None:
    csv = HEADER + _twin(1, "0-1", 20.0) + _twin(2, "2", 20.0) + _twin(4, "2", 30.0)
    with pytest.raises(OutputFileError, match=r"out_jobs\.csv does not account for the"):
        read_goal_outcomes(*_write(tmp_path, csv))


@pytest.mark.parametrize("goal", [0.0, -5.0, "soon"])
def test_a_bad_makespan_goal_names_the_job(tmp_path: Path, goal: object) -> None:
    with pytest.raises(WorkloadError, match=r"workload\.json.*makespan_goal"):
        read_goal_outcomes(*_write(tmp_path, goal=goal))


def _hansen_batch(tmp_path: Path, jobs_csv: str) -> tuple[Path, ...]:
    """Two applications with the model's annotations: serial time 50 s on a and b (COV 0),
    Downey A = 1 (S(k) = 1), availability Beta(1, 1) on both types, Delta = 100 s; job 3 is
    not an application (no goal). In the 64-point model P = P(A >= 50 / 100) = 0.5 exactly
    (32 of the availability's quantiles (m + 1/2) / 64 are >= 0.5)."""
    (tmp_path / "out_jobs.csv").write_text(jobs_csv)
    model = {
        "serial_time": {"a": {"mean": 50.0, "cov": 0.0}, "b": {"mean": 50.0, "cov": 0.0}},
        "downey": {"A": 1.0, "sigma": 0.0},
        "slowdown": {"a": {"alpha": 1.0, "beta": 1.0}, "b": {"alpha": 1.0, "beta": 1.0}},
        "makespan_goal": 100.0,
    }
    jobs = [{"id": str(n), "subtime": 10.0, "res": 1, "profile": "p", **(model if n < 3 else {})}
            for n in (1, 2, 3)]
    return _files(tmp_path, jobs)


def test_a_run_summary_predicts_psi_and_the_whole_batch(tmp_path: Path) -> None:
    """Application 1 on 2 processors of a, 2 on 1 of b: P = 0.5 each, so Psi = 0.5; the types
    have their own slowdowns, so P(batch meets Delta) = 0.25. Both end 50 s after submission:
    the batch met Delta, makespan 0.6 x Delta (60 s, the run's end)."""
    dropped = '3,w0,p,10.000000,1,-1.000000,0,REJECTED,,,,,,,,,""\n'
    summary = summarize(*_hansen_batch(tmp_path, HEADER + _twin(1, "0-1", 60.0)
                                       + _twin(2, "2", 60.0) + dropped))
    assert summary.robustness_predicted == 0.5
    assert summary.batch_probability_predicted == 0.25
    assert (summary.makespan_goal, summary.batch_met) == (100.0, True)
    table = summary_table(summary)
    assert "robustness Psi, predicted (min_i P_i)" in table and "0.2500" in table
    assert "yes (makespan 0.600 x Delta)" in table
    # Both on a (1 processor each): they share a's slowdown, P(batch) = P(A_a >= 0.5) = 0.5.
    shared = summarize(*_hansen_batch(tmp_path, HEADER + _twin(1, "0", 60.0)
                                      + _twin(2, "1", 120.0) + dropped))
    assert (shared.robustness_predicted, shared.batch_probability_predicted) == (0.5, 0.5)
    assert shared.batch_met is False and "no (makespan 1.200 x Delta)" in summary_table(shared)
    # Application 2 after 1 on the same 2 processors of a: no allocation of sec. II.A.
    reused = summarize(*_hansen_batch(tmp_path, HEADER + _twin(1, "0-1", 60.0)
                                      + _twin(2, "0-1", 60.0) + dropped))
    assert reused.robustness_predicted is None and reused.batch_met is True
