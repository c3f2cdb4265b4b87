"""Tasks from Batsim jobs (workloads/tasks.py): typed models, validated by the schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hetsched.core.speedup import DowneySpeedup
from hetsched.core.system import Cluster, PState
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction
from hetsched.workloads.job_tasks import (
    NoRunTime,
    SharedAnnotations,
    actual_from_job,
    etc_from_profile,
    reference_cluster,
    task_from_job,
)

FAST = Cluster("fast", 4, (0, 1), pstates=(PState(2e9, 90.0, 180.0),))
SLOW = Cluster("slow", 8, (2, 3, 4), pstates=(PState(1e9, 50.0, 90.0),))
CLUSTERS = [SLOW, FAST]  # the reference cluster is fast: it holds resource 0


def job(**fields: Any) -> dict[str, Any]:
    return {"id": "w0!4", "subtime": 12.5, "walltime": 60.0, "res": 2, "profile": "p", **fields}


def test_annotated_job_becomes_a_task() -> None:
    """Schema v1 fields become typed Task models; other fields go to annotations."""
    value = {"start": 10.0, "final": 2.0, "soft_deadline": 100.0, "hard_deadline": 200.0}
    utility = {"priority": 8.0, "urgency": 0.6}
    task = task_from_job(
        job(cores=6, etc={"fast": 7.0, "slow": 21}, value=value, utility=utility,
            etc_pstate={"fast": [7.0, 9.0]}, power={"fast": [120.0, 80.0]},
            downey={"A": 4.0, "sigma": 0.5}, task_type="t3", user="u1", application="a",
            makespan_goal=99.0),
        None, CLUSTERS,
    )
    assert (task.id, task.arrival, task.cores) == ("w0!4", 12.5, 6)
    assert dict(task.etc) == {"fast": 7.0, "slow": 21.0}
    assert task.value == ValueFunction(10.0, 2.0, 100.0, 200.0)
    assert task.utility == UtilityFunction.from_json(utility)
    assert dict(task.etc_pstate) == {"fast": (7.0, 9.0)}
    assert dict(task.power) == {"fast": (120.0, 80.0)}
    assert task.speedup == DowneySpeedup(4.0, 0.5)
    assert (task.task_type, task.user, task.application) == ("t3", "u1", "a")
    assert dict(task.annotations) == {"makespan_goal": 99.0}


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


DVFS = Cluster("dvfs", 1, (0, 1, 2, 3),
               pstates=(PState(2e9, 90.0, 180.0), PState(1.6e9, 80.0, 140.0),
                        PState(0.5e9, 60.0, 90.0)))
"""A cluster of one-core nodes with three P-states: 2, 1.6 and 0.5 Gflop/s."""


def test_a_parallel_profile_without_communication_takes_its_slowest_node() -> None:
    """cpu [1e9, 6e9, 3e9] flops, com all 0 (3 x 3 matrix): the slowest host's part, 6e9
    flops: 3 s at 2 Gflop/s, 3.75 s at 1.6, 12 s at 0.5 (Task.duration's speed scaling)."""
    profile = {"type": "parallel", "cpu": [1e9, 6e9, 3e9], "com": [0] * 9}
    task = task_from_job(job(res=3), profile, [DVFS])
    assert dict(task.etc) == {"dvfs": 3.0}
    assert [task.duration(DVFS, p) for p in range(3)] == [3.0, 3.75, 12.0]


def test_flop_profiles_scale_with_the_p_state_and_a_delay_does_not() -> None:
    """parallel_homogeneous 4e9 flops per node: 2, 2.5 and 8 s at the three P-states;
    _total 12e9 over res = 3 nodes: the same 4e9 a node. A delay of 7.5 s computes nothing:
    7.5 s at every P-state (etc_pstate written)."""
    for profile in ({"type": "parallel_homogeneous", "cpu": 4e9, "com": 0},
                    {"type": "parallel_homogeneous_total", "cpu": 12e9, "com": 0}):
        task = task_from_job(job(res=3), profile, [DVFS])
        assert [task.duration(DVFS, p) for p in range(3)] == [2.0, 2.5, 8.0]
        assert dict(task.etc_pstate) == {}
    task = task_from_job(job(res=3), {"type": "delay", "delay": 7.5}, [DVFS])
    assert [task.duration(DVFS, p) for p in range(3)] == [7.5, 7.5, 7.5]
    assert etc_from_profile("w0!4", 3, {"type": "delay", "delay": 7.5}, [DVFS]) == (
        {"dvfs": 7.5}, {"dvfs": [7.5, 7.5, 7.5]})


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ({"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 5e6, 0, 0]},
         "job w0!4: no etc annotation, and its profile 'p' (parallel) communicates (com != 0),"
         " which SimGrid's network decides: no run time can be derived"),
        ({"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 1e6},
         "job w0!4: no etc annotation, and its profile 'p' (parallel_homogeneous_total)"
         " communicates (com != 0), which SimGrid's network decides: no run time can be"
         " derived"),
        ({"type": "composed", "repeat": 2, "seq": ["a"]},
         "job w0!4: no etc annotation, and its profile 'p' of type 'composed' gives no run"
         " time (only delay, and parallel_homogeneous, parallel_homogeneous_total and"
         " parallel without communication do)"),
    ],
)
def test_profiles_that_give_no_run_time_are_refused(profile: dict, message: str) -> None:
    with pytest.raises(NoRunTime) as error:
        task_from_job(job(), profile, CLUSTERS)
    assert str(error.value) == message


def test_a_flop_profile_on_hosts_of_unknown_speed_is_refused_and_a_delay_runs() -> None:
    """A cluster without P-states (the speed Batsim does not forward): no run time from
    flops; a delay needs no speed."""
    unknown = Cluster("batsim", 1, (0, 1))
    with pytest.raises(NoRunTime) as error:
        task_from_job(job(), {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, [unknown])
    assert str(error.value) == (
        "job w0!4: no etc annotation, and its profile 'p' (parallel_homogeneous) is in flops,"
        " but the speed of cluster batsim's hosts is unknown (Batsim forwards no host speed;"
        " hetsched's host property speed_per_pstate gives it)")
    task = task_from_job(job(), {"type": "delay", "delay": 3}, [unknown])
    assert dict(task.etc) == {"batsim": 3.0}


@pytest.mark.parametrize(
    ("fields", "profile", "message"),
    [
        ({}, None, "no etc annotation and no profile"),
        ({"etc": [1, 2]}, None, "field 'etc': must be a non-empty object"),
        ({"etc": {"fast": "7"}}, None, r"field 'etc'\['fast'\]: must be a number > 0"),
        ({"etc": {"fast": 0.0}}, None, r"field 'etc'\['fast'\]: must be a number > 0"),
        ({"cores": True, "etc": {"fast": 1.0}}, None, "field 'cores': must be an integer >= 1"),
        ({"cores": 0, "etc": {"fast": 1.0}}, None, "field 'cores': must be an integer >= 1"),
        ({"res": -1}, None, "field res must be an integer >= 0"),
        ({"subtime": "0"}, None, "field subtime must be a number"),
        ({"etc": {"fast": 1.0}, "value": {"start": 1.0}}, None,
         "field 'value': needs exactly the keys"),
        ({"etc": {"fast": 1.0},
          "value": {"start": 1.0, "final": 2.0, "soft_deadline": 1.0, "hard_deadline": 2.0}},
         None, "field 'value': value function: final value 2.0 must lie in"),
        ({"etc": {"fast": 1.0}, "downey": {"A": 0.5, "sigma": 1.0}}, None,
         "downey.A must be a finite number >= 1"),
        ({"etc": {"fast": 1.0}, "etc_pstate": {"slow": [2.0]}}, None,
         "etc_pstate names 'slow', etc does not"),
        ({"etc": {"fast": 1.0}, "actual": {"etc": {"fast": 2.0}, "serial_time": {}}}, None,
         "field 'actual': must be"),
    ],
)
def test_bad_jobs_are_named(fields: dict, profile: dict | None, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        task_from_job(job(**fields), profile, CLUSTERS)
    assert "w0!4" in str(error.value)


def test_job_without_id_is_named() -> None:
    with pytest.raises(ValueError, match=r"job \?: missing field id"):
        task_from_job({"subtime": 0.0, "res": 1}, None, CLUSTERS)


def test_actual_run_time_is_a_ratio_per_cluster_never_part_of_the_task() -> None:
    """actual etc 14 s on fast where the task plans 7 s: ratio 2. A moldable task (A=4,
    sigma=0) with 8 cores takes 2 fast nodes (S(2) = 2): actual serial time 60 s -> 30 s on
    its own count, planned 10 s -> ratio 3; on slow (1 node, S(1) = 1) 40 s / 20 s = 2."""
    fixed = job(cores=6, etc={"fast": 7.0, "slow": 21.0}, actual={"etc": {"fast": 14.0}})
    task = task_from_job(fixed, None, CLUSTERS)
    assert "actual" not in task.annotations
    assert actual_from_job(fixed, task, CLUSTERS).ratios == {"fast": 2.0}
    moldable = job(cores=8, etc={"fast": 10.0, "slow": 20.0}, downey={"A": 4.0, "sigma": 0.0},
                   actual={"serial_time": {"fast": 60.0, "slow": 40.0}})
    task = task_from_job(moldable, None, CLUSTERS)
    assert actual_from_job(moldable, task, CLUSTERS).ratios == {"fast": 3.0, "slow": 2.0}
    assert actual_from_job(job(etc={"fast": 1.0}), task, CLUSTERS) is None


def test_actual_serial_time_needs_a_speedup_model() -> None:
    moldable = job(cores=8, etc={"fast": 10.0}, actual={"serial_time": {"fast": 60.0}})
    task = task_from_job(moldable, None, CLUSTERS)
    with pytest.raises(ValueError, match="serial_time needs the task's speedup model"):
        actual_from_job(moldable, task, CLUSTERS)



def test_equal_annotations_of_many_tasks_are_held_once() -> None:
    """Tasks built with one SharedAnnotations hold each distinct annotation value once (Hwang
    et al.'s co-runner models, the same for every task of an application); a value that is
    equal only as Python compares numbers (1 == 1.0) or keys out of order stays its own."""
    shared = SharedAnnotations()
    etc = {"fast": 7.0, "slow": 21.0}
    model = {"pressure": {"fast": 0.25}, "pairs": [1, 2.5]}
    tasks = [
        task_from_job(job(id=f"w0!{i}", etc=etc, corunners=value), None, CLUSTERS, shared)
        for i, value in enumerate([
            model,
            {"pressure": {"fast": 0.25}, "pairs": [1, 2.5]},  # the same JSON value
            {"pressure": {"fast": 0.5}, "pairs": [1, 2.5]},  # another value
            {"pressure": {"fast": 0.25}, "pairs": [1.0, 2.5]},  # 1.0 is not 1
            {"pairs": [1, 2.5], "pressure": {"fast": 0.25}},  # keys in another order
        ])
    ]
    held = [task.annotations["corunners"] for task in tasks]
    assert held[0] is model and held[1] is model
    assert all(value is not model for value in held[2:])
    assert held[2]["pressure"] == {"fast": 0.5} and held[3]["pairs"] == [1.0, 2.5]
    unshared = task_from_job(job(etc=etc, corunners=dict(model)), None, CLUSTERS)
    assert unshared.annotations["corunners"] is not model


def test_names_of_jobs_decoded_apart_are_held_once() -> None:
    """Jobs decoded one by one (the protocol guard decodes each JOB_SUBMITTED event alone)
    repeat their strings as new objects: the tasks built with one SharedAnnotations, and their
    actual run times, hold each cluster name, annotation name, application and user once."""
    text = json.dumps(job(etc={"fast": 7.0, "slow": 21.0}, actual={"etc": {"fast": 8.0}},
                          corunners={"x": 1}, application="AutoDock", user="u1"))
    shared = SharedAnnotations()
    built = []
    for _ in range(2):
        decoded = json.loads(text)
        task = task_from_job(decoded, None, CLUSTERS, shared)
        built.append((task, actual_from_job(decoded, task, CLUSTERS)))
    (first, first_actual), (second, second_actual) = built
    assert [*first.etc, *first.annotations, *first_actual.ratios] == ["fast", "slow", "corunners",
                                                                      "fast"]
    for one, other in [(first.etc, second.etc), (first.annotations, second.annotations),
                       (first_actual.ratios, second_actual.ratios)]:
        assert all(a is b for a, b in zip(one, other, strict=True))
    assert first.application is second.application and first.user is second.user
    assert next(iter(first_actual.ratios)) is FAST.name
