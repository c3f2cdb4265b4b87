"""The Min-Min loop shared by the value and utility heuristics (Khemka et al., MIC 2015, sec.
3.3; Machovec et al. 2017, sec. III.E): where its place-holder variant stops."""

from __future__ import annotations

import numpy as np
import pytest

from hetsched.core.decisions import Action
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.heuristics.minmin import MinMin, Options


class FixedScores:
    """An objective whose score of an option does not depend on its completion."""

    def __init__(self, values: list[float]) -> None:
        self.values = np.array(values, dtype=float)

    def scores(self, options: np.ndarray, completion: np.ndarray) -> np.ndarray:
        return self.values[options]

    def score(self, option: int, completion: float) -> float:
        return float(self.values[option])


@pytest.mark.parametrize(("long_task", "expected"), [
    # t2 on node 1 over [0, 200) would run into t1's place-holder at [100, 110): once t1 is
    # booked nothing can start now, so the loop stops before t3's place-holder.
    (200.0, [(Action.PLACEHOLDER, "t1", 100.0)]),
    # t2 over [0, 50) still fits before it: the loop goes on, t3 gets a place-holder after
    # t1's, then t2 starts now.
    (50.0, [(Action.PLACEHOLDER, "t1", 100.0), (Action.PLACEHOLDER, "t3", 110.0),
            (Action.START, "t2", 0.0)]),
])
def test_place_holders_stop_when_nothing_can_start_now(
    long_task: float, expected: list[tuple[Action, str, float]]
) -> None:
    """Two nodes, node 0 busy until 100 at the event (time 0). Scores t1 3 > t3 2 > t2 1; t1
    and t3 need both nodes for 10 s (earliest at 100), t2 one node (node 1 is idle now)."""
    cluster = Cluster("c", cores_per_node=1, resource_ids=(0, 1))
    schedule = SystemSchedule([cluster])
    schedule.book("busy", "c", [0], 0.0, 100.0, Action.START)
    tasks = [Task("t1", 0.0, cores=2, etc={"c": 10.0}),
             Task("t2", 0.0, cores=1, etc={"c": long_task}),
             Task("t3", 0.0, cores=2, etc={"c": 10.0})]
    options = Options.build([(0, 0, 0, 2, 10.0), (1, 0, 0, 1, long_task), (2, 0, 0, 2, 10.0)])
    loop = MinMin(schedule, 0.0, tasks, options, FixedScores([3.0, 1.0, 2.0]),
                  placeholders=True)
    assert [(d.action, d.task_id, d.start) for d in loop.run()] == expected


class RecountEveryBooking(MinMin):
    """The loop counting the idle nodes of every (k, d) waiting on the booked cluster after
    each booking, whenever it starts (the skip of bookings from ``now + d`` on turned off)."""

    def _forget(self, i: int, j: int, start: float) -> None:
        super()._forget(i, j, -np.inf)


def test_place_holder_loop_recounts_only_what_a_booking_can_change() -> None:
    """Random events on two clusters with running work: the START and PLACEHOLDER decisions
    (kind, task, nodes, start) are those of the loop that recounts every (k, d) after every
    booking."""
    clusters = [Cluster("a", cores_per_node=1, resource_ids=tuple(range(6))),
                Cluster("b", cores_per_node=1, resource_ids=tuple(range(6, 10)))]
    kinds = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        schedule = SystemSchedule(clusters)
        for cluster in clusters:
            for node in cluster.resource_ids:
                if rng.random() < 0.5:
                    schedule.book(f"run{node}", cluster.name, [node], 0.0,
                                  float(rng.integers(1, 40)), Action.START)
        tasks = [Task(f"t{i}", 0.0, cores=int(rng.integers(1, 4)),
                      etc={"a": float(rng.integers(1, 30)), "b": float(rng.integers(1, 30))})
                 for i in range(12)]
        rows = [(i, j, 0, task.cores, task.etc[cluster.name])
                for i, task in enumerate(tasks) for j, cluster in enumerate(clusters)]
        scores = FixedScores(rng.random(len(rows)).tolist())
        runs = []
        for loop_class in (MinMin, RecountEveryBooking):
            loop = loop_class(schedule.copy(), 0.0, tasks, Options.build(rows), scores,
                              placeholders=True)
            runs.append([(d.action, d.task_id, d.nodes, d.start) for d in loop.run()])
        assert runs[0] == runs[1], seed
        kinds.extend(action for action, *_ in runs[0])
    assert kinds.count(Action.START) > 100 and kinds.count(Action.PLACEHOLDER) > 100
