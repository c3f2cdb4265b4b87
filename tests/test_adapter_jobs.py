"""Tasks from Batsim jobs (schedulers/jobtasks.py) and twin names (schedulers/twins.py)."""

from __future__ import annotations

from typing import Any

import pytest

from hetsched.core.system import Cluster, PState
from hetsched.core.value import ValueFunction
from hetsched.schedulers.jobtasks import reference_cluster, task_from_job
from hetsched.schedulers.twins import (
    is_twin,
    original_job_id,
    twin_job_id,
    twin_profile_name,
)

FAST = Cluster("fast", 4, (0, 1), pstates=(PState(2e9, 90.0, 180.0),))
SLOW = Cluster("slow", 8, (2, 3, 4), pstates=(PState(1e9, 50.0, 90.0),))
CLUSTERS = [SLOW, FAST]  # the reference cluster is fast: it holds resource 0


def job(**fields: Any) -> dict[str, Any]:
    return {"id": "w0!4", "subtime": 12.5, "walltime": 60.0, "res": 2, "profile": "p", **fields}


def test_annotated_job_becomes_a_task() -> None:
    """Schema v1: cores, etc, value become Task fields; the rest goes to annotations."""
    value = {"start": 10.0, "final": 2.0, "soft_deadline": 100.0, "hard_deadline": 200.0}
    task = task_from_job(
        job(cores=6, etc={"fast": 7.0, "slow": 21}, value=value, task_type="t3", user="u1"),
        None, CLUSTERS,
    )
    assert (task.id, task.arrival, task.cores) == ("w0!4", 12.5, 6)
    assert dict(task.etc) == {"fast": 7.0, "slow": 21.0}
    assert task.value == ValueFunction(10.0, 2.0, 100.0, 200.0)
    assert dict(task.annotations) == {"task_type": "t3", "user": "u1"}


def test_plain_delay_job() -> None:
    """res 2 on the reference cluster fast (lowest resource id 0): cores = 2 x 4 = 8;
    delay 30 s on every cluster."""
    task = task_from_job(job(), {"type": "delay", "delay": 30}, CLUSTERS)
    assert reference_cluster(CLUSTERS) is FAST
    assert (task.cores, dict(task.etc)) == (8, {"slow": 30.0, "fast": 30.0})


def test_parallel_homogeneous_job_takes_its_flops_over_each_speed() -> None:
    """cpu 4e10 flops per node: fast 4e10 / 2e9 = 20 s, slow 4e10 / 1e9 = 40 s.
    The _total variant spreads 8e10 over res = 2 nodes: the same 4e10 per node."""
    for profile in (
        {"type": "parallel_homogeneous", "cpu": 4e10, "com": 0},
        {"type": "parallel_homogeneous_total", "cpu": 8e10, "com": 0},
    ):
        task = task_from_job(job(), profile, CLUSTERS)
        assert dict(task.etc) == {"slow": 40.0, "fast": 20.0}


@pytest.mark.parametrize(
    ("fields", "profile", "message"),
    [
        ({}, {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6},
         "job w0!4: no etc annotation, and its parallel_homogeneous profile communicates"),
        ({}, {"type": "composed", "seq": []}, "its profile type 'composed' gives no ETC"),
        ({}, None, "no etc annotation and no profile"),
        ({"etc": [1, 2]}, None, "field etc must map cluster names to seconds"),
        ({"etc": {"fast": "7"}}, None, r"field etc\['fast'\] must be a number"),
        ({"etc": {"fast": 0.0}}, None, r"etc\['fast'\] must be > 0"),
        ({"cores": True, "etc": {"fast": 1.0}}, None, "field cores must be an integer"),
        ({"cores": 0, "etc": {"fast": 1.0}}, None, "cores must be >= 1"),
        ({"res": -1}, None, "field res must be an integer >= 0"),
        ({"subtime": "0"}, None, "field subtime must be a number"),
        ({"etc": {"fast": 1.0}, "value": {"start": 1.0}}, None,
         "field value lacks final, hard_deadline, soft_deadline"),
        ({"etc": {"fast": 1.0},
          "value": {"start": 1.0, "final": 2.0, "soft_deadline": 1.0, "hard_deadline": 2.0}},
         None, "field value: value function: final value 2.0 must lie in"),
    ],
)
def test_bad_jobs_are_named(fields: dict, profile: dict | None, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        task_from_job(job(**fields), profile, CLUSTERS)
    assert "w0!4" in str(error.value)


def test_job_without_id_is_named() -> None:
    with pytest.raises(ValueError, match=r"job \?: missing field id"):
        task_from_job({"subtime": 0.0, "res": 1}, None, CLUSTERS)


def test_twin_names_round_trip() -> None:
    """Convention: w0!12 -> job hetsched!w0.12, profile twin.w0.12; out_jobs.csv job_id w0.12."""
    for original in ("w0!12", "w3!job.7", "w1!a-b_c"):
        twin = twin_job_id(original)
        assert is_twin(twin) and not is_twin(original)
        assert original_job_id(twin) == original
        assert original_job_id(twin.split("!", 1)[1]) == original
    assert twin_profile_name("w3!job.7") == "twin.w3.job.7"


@pytest.mark.parametrize(
    ("original", "message"),
    [
        ("w0", "is not of the form <workload>!<job>"),
        ("!3", "is not of the form <workload>!<job>"),
        ("w.0!3", "workload name 'w.0' contains '.'"),
    ],
)
def test_twin_of_bad_id_is_refused(original: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        twin_job_id(original)


def test_original_of_a_non_twin_is_refused() -> None:
    for job_id in ("w0!12", "hetsched!nodot", "other!w0.12"):
        with pytest.raises(ValueError, match="is not an execution twin"):
            original_job_id(job_id)
