"""The allocation heuristics of Hansen et al. as batch-mode heuristics
(heuristics/robust/robust_batch.py):
what is dropped, when the batch is allocated, on which nodes and for how long, on cases
computed by hand from the model of sec. II; and a generated Hansen batch whose plan is the
model's mean final time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.speedup import DowneySpeedup
from hetsched.core.state import SystemView, TaskState
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.engine.platform import load_platform
from hetsched.heuristics.robust.robust_batch import (
    PbRBatch,
    PbSBatch,
    RfDuplexBatch,
    RfMinMaxBatch,
    RfMinMinBatch,
    RobustBatch,
)
from hetsched.heuristics.robust.robustness import AllocationProblem, MoldableBatch
from hetsched.heuristics.robust.robustness_floor import RfDuplex
from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.properties import clusters_from_compute_resources
from hetsched.platforms.simgrid_xml import write_platform
from hetsched.workloads.generators import generate as generate_workload
from hetsched.workloads.job_tasks import task_from_job

ALL = (PbRBatch, PbSBatch, RfMinMinBatch, RfMinMaxBatch, RfDuplexBatch)
FLOOR = (RfMinMinBatch, RfMinMaxBatch, RfDuplexBatch)
"""The robustness floor heuristics (PB-R and PB-S take the groups in random order)."""
NEAR_ONE = {"alpha": 1000.0, "beta": 1.0}
"""Availability Beta(1000, 1): its lowest quantile midpoint (p = 1/128) is 0.99516, so the
slowdown of every discrete value lies in [1, 1.00487]: almost deterministic."""


def _cluster(name: str, first: int, nodes: int) -> Cluster:
    return Cluster(name, 1, tuple(range(first, first + nodes)), (PState(1e9, 10.0, 20.0),))


def _task(
    task_id: str,
    serial: dict[str, float],
    goal: float = 100.0,
    *,
    arrival: float = 0.0,
    a: float = 4.0,
    sigma: float = 0.0,
    slowdown: dict[str, dict[str, float]] | None = None,
) -> Task:
    """A one-node application with deterministic serial times (COV 0) ``serial``, Downey's
    A and sigma, ``etc`` = the serial time (slowdown ~ 1)."""
    return Task(
        task_id, arrival, 1, dict(serial), speedup=DowneySpeedup(a, sigma),
        annotations={
            "serial_time": {c: {"mean": s, "cov": 0.0} for c, s in serial.items()},
            "slowdown": slowdown or {c: NEAR_ONE for c in serial},
            "makespan_goal": goal,
        },
    )  # fmt: skip


def _event(
    tasks: list[Task], clusters: list[Cluster], *, more: bool = False,
    schedule: SystemSchedule | None = None, time: float = 0.0,
) -> MappingEvent:
    view = SystemView({c.name: c for c in clusters}, {}, {}, {}, {}, clock=lambda: time,
                      pstate=lambda _: 0, energy=lambda: None, more_tasks=lambda: more)
    return MappingEvent(time, tuple(tasks), schedule or SystemSchedule(clusters), view)


def _plan(decisions: list[Decision]) -> list[tuple]:
    return [(d.action.value, d.task_id, d.cluster, d.nodes, d.start, d.end) for d in decisions]


@pytest.mark.parametrize("cls", ALL)
def test_batch_waits_for_the_whole_workload(cls: type[RobustBatch]) -> None:
    """While tasks may still arrive, only the tasks without the model are dropped."""
    cpu = _cluster("cpu", 0, 4)
    bare = Task("w0!9", 0.0, 1, {"cpu": 10.0})
    heuristic = cls()
    decisions = heuristic.map(_event([_task("w0!1", {"cpu": 50.0}), bare], [cpu], more=True))
    assert _plan(decisions) == [("drop", "w0!9", None, (), 0.0, 0.0)]
    assert heuristic.allocation_ is None and heuristic.dropped_ == ["w0!9"]


@pytest.mark.parametrize("cls", ALL)
def test_more_applications_than_processors(cls: type[RobustBatch]) -> None:
    """3 processors, 5 applications: one processor each (forced) for the first three in
    natural id order, on the lowest ids; planned time = etc on one node (S(1) = 1); the
    other two and the task without model are dropped."""
    cpu = _cluster("cpu", 0, 3)
    tasks = [_task(f"w0!{n}", {"cpu": 10.0 * n}) for n in (2, 10, 1, 3, 20)]
    tasks.append(Task("w0!7", 0.0, 1, {"cpu": 10.0}))
    heuristic = cls()
    decisions = heuristic.map(_event(tasks, [cpu]))
    assert sorted(_plan(decisions)) == sorted([
        ("drop", "w0!7", None, (), 0.0, 0.0),
        ("drop", "w0!10", None, (), 0.0, 0.0),
        ("drop", "w0!20", None, (), 0.0, 0.0),
        ("start", "w0!1", "cpu", (0,), 0.0, 10.0),
        ("start", "w0!2", "cpu", (1,), 0.0, 20.0),
        ("start", "w0!3", "cpu", (2,), 0.0, 30.0),
    ])  # fmt: skip
    assert sorted(heuristic.dropped_) == ["w0!10", "w0!20", "w0!7"]
    assert heuristic.problem_ is not None
    assert heuristic.problem_.applications == ("w0!1", "w0!2", "w0!3")
    assert heuristic.allocation_ is not None and heuristic.allocation_.processors == (1, 1, 1)


@pytest.mark.parametrize("cls", FLOOR)
def test_the_type_that_makes_the_goal(cls: type[RobustBatch]) -> None:
    """One node of each type; the application needs 10 s (x slowdown <= 1.005) on ``a`` and
    1000 s on ``b``, goal 100 s: P(a, 1) = 1, P(b, 1) = 0, so it runs on ``a`` (resource 2)."""
    a, b = _cluster("b", 0, 1), _cluster("a", 2, 1)  # system order: b first
    heuristic = cls()
    decisions = heuristic.map(_event([_task("w0!1", {"a": 10.0, "b": 1000.0})], [a, b]))
    assert _plan(decisions) == [("start", "w0!1", "a", (2,), 0.0, 10.0)]
    assert heuristic.problem_ is not None and heuristic.problem_.processor_types == ("b", "a")
    assert heuristic.allocation_ is not None
    assert heuristic.allocation_.probabilities == (1.0,)


@pytest.mark.parametrize("cls", FLOOR)
def test_processors_rescale_the_plan_by_downeys_speedup(cls: type[RobustBatch]) -> None:
    """Serial 150 s, goal 100 s, A = 4, sigma = 0 (S(k) = k up to 4): P(1) = 0 (150 s), P(2)
    = 1 (75 s x <= 1.005); the floor search gives it 2 processors, and the planned time is
    etc x S(1) / S(2) = 160 / 2 = 80 s."""
    cpu = _cluster("cpu", 0, 4)
    task = _task("w0!1", {"cpu": 150.0})
    task = Task(task.id, 0.0, 1, {"cpu": 160.0}, speedup=task.speedup,
                annotations=dict(task.annotations))
    heuristic = cls()
    decisions = heuristic.map(_event([task], [cpu]))
    assert heuristic.allocation_ is not None and heuristic.allocation_.processors[0] >= 2
    k = heuristic.allocation_.processors[0]
    assert _plan(decisions) == [("start", "w0!1", "cpu", tuple(range(k)), 0.0, 160.0 / k)]
    assert heuristic.allocation_.probabilities == (1.0,)


@pytest.mark.parametrize("cls", ALL)
def test_only_free_nodes_of_common_types(cls: type[RobustBatch]) -> None:
    """cpu node 0 runs until 50 s and node 3 is booked from 200 s: only nodes 1 and 2 are
    free for good; gpu is not a type of the batch (w0!2 cannot run there); ``full`` has no
    free node. Two applications, two processors: one each."""
    cpu, gpu, full = _cluster("cpu", 0, 4), _cluster("gpu", 4, 2), _cluster("full", 6, 1)
    schedule = SystemSchedule([cpu, gpu, full])
    schedule.book("r", "cpu", (0,), 0.0, 50.0, Action.START)
    schedule.book("s", "cpu", (3,), 200.0, 300.0, Action.RESERVE)
    schedule.book("t", "full", (6,), 0.0, 1e6, Action.START)
    tasks = [_task("w0!1", {"cpu": 20.0, "gpu": 5.0, "full": 1.0}),
             _task("w0!2", {"cpu": 30.0, "full": 1.0})]
    heuristic = cls()
    decisions = heuristic.map(_event(tasks, [cpu, gpu, full], schedule=schedule))
    assert sorted(_plan(decisions)) == [
        ("start", "w0!1", "cpu", (1,), 0.0, 20.0), ("start", "w0!2", "cpu", (2,), 0.0, 30.0)
    ]
    assert heuristic.problem_ is not None and heuristic.problem_.processor_types == ("cpu",)


@pytest.mark.parametrize("cls", ALL)
def test_no_processor_type_drops_the_batch(cls: type[RobustBatch]) -> None:
    cpu, gpu = _cluster("cpu", 0, 2), _cluster("gpu", 2, 2)
    tasks = [_task("w0!1", {"cpu": 20.0}), _task("w0!2", {"gpu": 30.0})]
    heuristic = cls()
    assert _plan(heuristic.map(_event(tasks, [cpu, gpu]))) == [
        ("drop", "w0!1", None, (), 0.0, 0.0), ("drop", "w0!2", None, (), 0.0, 0.0)
    ]
    assert heuristic.allocation_ is None


def test_inconsistent_models_are_errors_naming_the_job() -> None:
    cpu = _cluster("cpu", 0, 2)
    with pytest.raises(ValueError, match="2 makespan goals"):
        RfDuplexBatch().map(_event([_task("w0!1", {"cpu": 1.0}),
                                    _task("w0!2", {"cpu": 1.0}, goal=50.0)], [cpu]))
    lacking = _task("w0!2", {"cpu": 1.0})
    lacking = Task(lacking.id, 0.0, 1, {"cpu": 1.0, "gpu": 1.0}, speedup=lacking.speedup,
                   annotations=dict(lacking.annotations))  # gpu: etc, no serial_time
    lacks = r"job w0!2: serial_time or slowdown lacks type\(s\) \['gpu'\]"
    with pytest.raises(ValueError, match=lacks):
        RfDuplexBatch().map(_event([_task("w0!1", {"cpu": 1.0, "gpu": 1.0}), lacking],
                                   [cpu, _cluster("gpu", 2, 1)]))
    other = {"cpu": {"alpha": 3.0, "beta": 2.0}}
    with pytest.raises(ValueError, match="job w0!2: its slowdown differs from job w0!1"):
        RfDuplexBatch().map(_event([_task("w0!1", {"cpu": 1.0}),
                                    _task("w0!2", {"cpu": 1.0}, slowdown=other)], [cpu]))


def test_bad_points_are_refused() -> None:
    with pytest.raises(ValueError, match="rf-duplex: points must be an integer >= 1, got 0"):
        RfDuplexBatch(points=0)
    with pytest.raises(ValueError, match="stopping"):
        RfMinMinBatch(stopping_residual=0.0)


def test_allocation_is_the_allocators_on_the_model_written_by_hand() -> None:
    """Three applications, two types (3 and 2 processors, system order ``x``, ``y``): the
    wrapper's problem is the MoldableBatch written here from the same numbers, and its
    allocation RF Duplex's on it."""
    x, y = _cluster("x", 0, 3), _cluster("y", 3, 2)
    slow = {"x": {"alpha": 3.0, "beta": 2.0}, "y": {"alpha": 6.0, "beta": 2.0}}
    serial = [{"x": 120.0, "y": 90.0}, {"x": 60.0, "y": 200.0}, {"x": 80.0, "y": 80.0}]
    tasks = [_task(f"w0!{i}", s, 100.0, a=2.0 + i, sigma=0.5, slowdown=slow)
             for i, s in enumerate(serial)]
    heuristic = RfDuplexBatch()
    heuristic.map(_event(tasks, [x, y]))
    batch = MoldableBatch(
        [[s["x"], s["y"]] for s in serial], [[0.0, 0.0]] * 3, [2.0, 3.0, 4.0], [0.5] * 3,
        [3.0, 6.0], [2.0, 2.0], [3, 2], 100.0, ("w0!0", "w0!1", "w0!2"), ("x", "y"),
    )
    problem = AllocationProblem.from_batch(batch)
    assert heuristic.problem_ is not None
    np.testing.assert_array_equal(heuristic.problem_.probability, problem.probability)
    assert heuristic.allocation_ == RfDuplex().allocate(problem)


def test_a_generated_batch_runs_for_the_models_mean_final_time(tmp_path: Path) -> None:
    """A ``hansen`` batch (16 applications, 4 types, 128 processors) in model time: the batch
    is allocated once, at its arrival, every application starts then on its (j, k) with the
    planned time mu_ijk = E[S_j] E[T_ij] / S_i(k), up to the generator's rounding to the
    millisecond of etc (on the application's own node count) and of E[T_ij]: 0.5 ms x
    (S_i(own) + E[S_j]) / S_i(k)."""
    platform = generate_platform("hansen", 4, types=4, processors=128)
    workload = generate_workload("hansen", 4, platform.clusters, applications=16)
    jobs = workload["jobs"]
    assert isinstance(jobs, list)
    resources = load_platform(write_platform(platform, tmp_path / "p.xml")).compute_resources()
    clusters = clusters_from_compute_resources(resources)
    tasks = [task_from_job({**job, "id": f"w0!{job['id']}"}, None, clusters) for job in jobs]
    heuristic = RfDuplexBatch()
    records = ModelTimeRunner(clusters, heuristic, tasks).run()
    problem, allocation = heuristic.problem_, heuristic.allocation_
    assert problem is not None and allocation is not None
    assert problem.processor_types == tuple(c.name for c in clusters)
    assert problem.applications == tuple(f"w0!{n}" for n in range(16))
    assert sum(1 for r in records if r.state is TaskState.DONE) == 16
    batch = MoldableBatch.from_jobs([{**j, "id": f"w0!{j['id']}"} for j in jobs],
                                    {c.name: len(c.resource_ids) for c in clusters})
    by_id = {r.task.id: r for r in records}
    for i, name in enumerate(problem.applications):
        j, k = allocation.pairs[i]
        record = by_id[name]
        decision, speedup = record.decision, record.task.speedup
        assert decision is not None and decision.start == 0.0 and speedup is not None
        cluster = clusters[j]
        assert (decision.cluster, len(decision.nodes)) == (cluster.name, k)
        own = cluster.nodes_for(record.task.cores)
        mean = batch.mean_final_time(k)[i, j]
        slowdown = mean * speedup.speedup(k) / batch.serial_mean[i, j]  # E[S_j]
        rounding = 5e-4 * (speedup.speedup(own) + slowdown) / speedup.speedup(k)
        assert abs(decision.end - mean) <= rounding + 1e-9 * mean
