"""Conservative Multiple Queues (Khemka et al., MIC 2015, sec. 3.3)."""

from __future__ import annotations

import pytest

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.baselines.backfilling import ConservativeBackfilling
from hetsched.heuristics.baselines.multiqueue import ConservativeMultipleQueues, average_resources
from hetsched.heuristics.common import feasible_clusters

ONE_NODE = [Cluster("c", 1, (0,))]


def serial(name: str, seconds: float) -> Task:
    """A 1-core task: on one 1-core node R~ = ETC x 1 core = ``seconds``."""
    return Task(name, 0.0, cores=1, etc={"c": seconds})


def candidates(tasks: list[Task], schedule: SystemSchedule) -> list:
    return [(t, feasible_clusters(t, schedule)) for t in tasks]


def test_average_resources_over_clusters() -> None:
    # 12 cores: on a (8-core nodes) NC = 16, R = 10 x 16 = 160; on b (4-core
    # nodes) NC = 12, R = 30 x 12 = 360; R~ = (160 + 360) / 2 = 260.
    clusters = [Cluster("a", 8, (0, 1)), Cluster("b", 4, (2, 3, 4))]
    task = Task("t", 0.0, cores=12, etc={"a": 10.0, "b": 30.0})
    assert average_resources(task, clusters) == 260.0


def test_queues_thresholds_and_r_max_over_tasks_seen_so_far() -> None:
    schedule = SystemSchedule(ONE_NODE)
    cmq = ConservativeMultipleQueues()
    # First event: only a 10 s task; R_max = 10, it is large (10 > 0.6 x 10).
    small, medium, large = cmq.queues(candidates([serial("x", 10.0)], schedule))
    assert cmq.r_max_ == 10.0 and [t.id for t, _ in large] == ["x"]
    # Second event: R_max becomes 100: 30 <= 0.3 x 100 small; 31 and 60 medium;
    # 61 and 100 large.
    tasks = [serial(n, s) for n, s in (("s", 30.0), ("m1", 31.0), ("m2", 60.0),
                                       ("l1", 61.0), ("l2", 100.0))]
    small, medium, large = cmq.queues(candidates(tasks, schedule))
    assert cmq.r_max_ == 100.0
    assert [[t.id for t, _ in q] for q in (small, medium, large)] == [
        ["s"], ["m1", "m2"], ["l1", "l2"]
    ]
    # Third event: R_max never decreases (tasks seen earlier still count).
    small, _, _ = cmq.queues(candidates([serial("y", 30.0)], schedule))
    assert cmq.r_max_ == 100.0 and [t.id for t, _ in small] == ["y"]


def test_round_robin_order() -> None:
    # R~: s1..s4 = 1, m1, m2 = 50, L1, L2 = 100 (R_max 100: small <= 30, medium <= 60).
    # Arrival order s1 s2 s3 m1 m2 L1 L2 s4.
    schedule = SystemSchedule(ONE_NODE)
    sizes = {"s1": 1, "s2": 1, "s3": 1, "m1": 50, "m2": 50, "L1": 100, "L2": 100, "s4": 1}
    kept = candidates([serial(n, float(s)) for n, s in sizes.items()], schedule)
    # Quotas 1 large, 4 medium, 8 small per cycle: L1 | m1 m2 | s1 s2 s3 s4, then L2.
    order = ConservativeMultipleQueues().order(kept)
    assert [t.id for t, _ in order] == ["L1", "m1", "m2", "s1", "s2", "s3", "s4", "L2"]
    # Quotas 1 / 1 / 2: L1 m1 s1 s2 | L2 m2 s3 s4.
    order = ConservativeMultipleQueues(medium_quota=1, small_quota=2).order(kept)
    assert [t.id for t, _ in order] == ["L1", "m1", "s1", "s2", "L2", "m2", "s3", "s4"]


def test_mapping_follows_the_queues_conservative_style() -> None:
    """One 1-core node. R~ = ETC: s1 1, s2 2, m1 5, L1 10; R_max 10: small <= 3,
    medium <= 6. CMQ maps L1, m1, s1, s2 in that order, each at its earliest slot:
    L1 now [0,10), m1 reserved [10,15), s1 [15,16), s2 [16,18).
    Conservative Backfilling (arrival order): s1 [0,1), s2 [1,3), m1 [3,8), L1 [8,18)."""
    tasks = (serial("s1", 1.0), serial("s2", 2.0), serial("m1", 5.0), serial("L1", 10.0))
    cmq = ConservativeMultipleQueues().map(MappingEvent(0.0, tasks, SystemSchedule(ONE_NODE)))
    assert cmq == [
        Decision(Action.START, "L1", "c", (0,), 0.0, 10.0),
        Decision(Action.RESERVE, "m1", "c", (0,), 10.0, 15.0),
        Decision(Action.RESERVE, "s1", "c", (0,), 15.0, 16.0),
        Decision(Action.RESERVE, "s2", "c", (0,), 16.0, 18.0),
    ]
    conservative = ConservativeBackfilling().map(
        MappingEvent(0.0, tasks, SystemSchedule(ONE_NODE))
    )
    assert [(d.task_id, d.start) for d in conservative] == [
        ("s1", 0.0), ("s2", 1.0), ("m1", 3.0), ("L1", 8.0)
    ]


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="cmq: medium_quota must be >= 1, got 0"):
        ConservativeMultipleQueues(medium_quota=0)
    with pytest.raises(ValueError, match="need 0 <= small_threshold"):
        ConservativeMultipleQueues(small_threshold=-0.1)
    cmq = ConservativeMultipleQueues(small_threshold=0.2, large_threshold=0.9, large_quota=2)
    assert cmq.get_params() == {
        "small_threshold": 0.2, "large_threshold": 0.9, "large_quota": 2,
        "medium_quota": 4, "small_quota": 8, "drop_zero_value": True,
    }
