"""FCFS, EASY, Conservative and Random (Khemka et al. sec. 3.3; Machovec et al. III.D)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.value import ValueFunction
from hetsched.heuristics.backfilling import ConservativeBackfilling, EasyBackfilling, Fcfs
from hetsched.heuristics.randomized import RandomMapping


def simulate(
    heuristic: Heuristic, clusters: Sequence[Cluster], tasks: Sequence[Task]
) -> dict[str, Decision]:
    """Replay ``tasks`` as the mapping driver would (Khemka 3.1): a mapping event at
    every arrival and completion; START booked as running; RESERVE kept and started
    when due; PLACEHOLDER discarded; DROP recorded. Returns each task's start
    decision (with its real start) or its DROP decision."""
    schedule = SystemSchedule(clusters)
    pending = sorted(tasks, key=lambda t: t.arrival)
    waiting: list[Task] = []
    reserved: dict[str, Decision] = {}
    running: dict[str, Decision] = {}
    outcome: dict[str, Decision] = {}
    while pending or reserved or running:
        now = min(
            [t.arrival for t in pending[:1]]
            + [d.end for d in running.values()]
            + [d.start for d in reserved.values()]
        )
        completed = [tid for tid, d in running.items() if d.end <= now]
        for tid in completed:
            schedule.release(tid)
            del running[tid]
        for tid, d in sorted(reserved.items(), key=lambda item: item[1].start):
            if d.start <= now:
                schedule.release(tid)
                schedule.book(tid, d.cluster, d.nodes, d.start, d.end, Action.START)
                running[tid] = reserved.pop(tid)
                outcome[tid] = d
        arrived = False
        while pending and pending[0].arrival <= now:
            waiting.append(pending.pop(0))
            arrived = True
        if not (arrived or completed) or not waiting:
            continue
        decisions = heuristic.map(MappingEvent(now, tuple(waiting), schedule.copy()))
        for d in decisions:
            if d.action is Action.PLACEHOLDER:
                continue
            waiting = [t for t in waiting if t.id != d.task_id]
            if d.action is Action.DROP:
                outcome[d.task_id] = d
                continue
            schedule.book(d.task_id, d.cluster, d.nodes, d.start, d.end, d.action)
            if d.action is Action.START:
                assert d.start == now
                running[d.task_id] = d
                outcome[d.task_id] = d
            else:
                reserved[d.task_id] = d
    assert not waiting, f"tasks never mapped: {[t.id for t in waiting]}"
    return outcome


def job(name: str, arrival: float, nodes: int, runtime: float, **etc: float) -> Task:
    """A job of the textbook examples: 1-core nodes, ETC = walltime = run time."""
    return Task(name, arrival, cores=nodes, etc=etc or {"c": runtime})


FOUR = [Cluster("c", cores_per_node=1, resource_ids=(0, 1, 2, 3))]


def starts(outcome: dict[str, Decision]) -> dict[str, float]:
    return {tid: d.start for tid, d in sorted(outcome.items())}


# ----------------------------------------------------------- textbook example 1
# Four nodes; (arrival, nodes, run time) with walltime = run time:
#   A (0, 3, 10)  B (1, 3, 10)  C (2, 4, 10)  D (3, 1, 30)
# t=0: A starts on n0-n2, [0,10).
# t=1: B cannot start (one node idle): reserved at 10 on n0-n2 (adjacent to A).
# EASY:
#   t=2: C cannot start; B holds the reservation: C is skipped.
#   t=3: D fits now on n3 for [3,33), n3 is not in B's reservation: backfilled.
#   t=10: A ends, B starts; C cannot start, no reservation left: C reserved at
#         the earliest time four nodes are idle, 33 (D ends).  C starts at 33.
#   => A 0, B 10, C 33, D 3.
# Conservative:
#   t=2: C reserved at 20 (after B) on all four nodes.
#   t=3: D needs 30 s on one node: n3 is idle only on [3,20) (C at 20): D is
#        reserved after C, at 30.
#   => A 0, B 10, C 20, D 30.
# FCFS (no backfilling): B blocks the queue until 10, C until 20, D until 30.
#   => A 0, B 10, C 20, D 30.
EXAMPLE1 = [job("A", 0, 3, 10), job("B", 1, 3, 10), job("C", 2, 4, 10), job("D", 3, 1, 30)]


def test_example1_easy() -> None:
    outcome = simulate(EasyBackfilling(), FOUR, EXAMPLE1)
    assert starts(outcome) == {"A": 0.0, "B": 10.0, "C": 33.0, "D": 3.0}
    assert outcome["D"].nodes == (3,)
    assert outcome["B"].nodes == (0, 1, 2)


def test_example1_conservative() -> None:
    outcome = simulate(ConservativeBackfilling(), FOUR, EXAMPLE1)
    assert starts(outcome) == {"A": 0.0, "B": 10.0, "C": 20.0, "D": 30.0}


def test_example1_fcfs() -> None:
    outcome = simulate(Fcfs(), FOUR, EXAMPLE1)
    assert starts(outcome) == {"A": 0.0, "B": 10.0, "C": 20.0, "D": 30.0}


# ----------------------------------------------------------- textbook example 2
#   A (0, 2, 10)  B (1, 4, 10)  C (2, 2, 8)  D (4, 1, 5)
# t=0: A on n0, n1 [0,10). t=1: B reserved at 10 on all nodes [10,20).
# EASY and Conservative: t=2: C fits on n2, n3 for [2,10), exactly before B:
#   backfilled at 2. t=4: D has no idle node now; EASY skips it (B holds the
#   reservation) and reserves it at 10 when B starts, at 20; Conservative
#   reserves it at 20 at once.  => A 0, B 10, C 2, D 20.
# FCFS: B blocks until 10; at 20 C starts on n0, n1 [20,28) and D on n2 [20,25).
#   => A 0, B 10, C 20, D 20.
EXAMPLE2 = [job("A", 0, 2, 10), job("B", 1, 4, 10), job("C", 2, 2, 8), job("D", 4, 1, 5)]


@pytest.mark.parametrize("heuristic", [EasyBackfilling(), ConservativeBackfilling()])
def test_example2_backfilling(heuristic: Heuristic) -> None:
    outcome = simulate(heuristic, FOUR, EXAMPLE2)
    assert starts(outcome) == {"A": 0.0, "B": 10.0, "C": 2.0, "D": 20.0}
    assert outcome["C"].nodes == (2, 3)


def test_example2_fcfs() -> None:
    outcome = simulate(Fcfs(), FOUR, EXAMPLE2)
    assert starts(outcome) == {"A": 0.0, "B": 10.0, "C": 20.0, "D": 20.0}
    assert outcome["C"].nodes == (0, 1) and outcome["D"].nodes == (2,)


# ------------------------------------------------------------------ details
def test_easy_makes_no_second_reservation() -> None:
    # The driver keeps a reservation (R) across mapping events: a task that
    # cannot start now is skipped; one that can start now without touching R
    # is backfilled.
    schedule = SystemSchedule(FOUR)
    schedule.book("run", "c", [0, 1, 2], 0.0, 10.0, Action.START)
    schedule.book("R", "c", [0, 1, 2, 3], 10.0, 20.0, Action.RESERVE)
    big, short, long = job("big", 1, 2, 5), job("short", 2, 1, 9), job("long", 2, 1, 11)
    decisions = EasyBackfilling().map(MappingEvent(1.0, (big, long, short), schedule))
    assert decisions == [Decision(Action.START, "short", "c", (3,), 1.0, 10.0)]


def test_baselines_ignore_heterogeneity_earliest_start_then_cluster_order() -> None:
    # Cluster x is busy until 10; y is idle. The task runs 1 s on x, 100 s on y:
    # the baselines take the earliest start (y at 0), not the earliest completion.
    clusters = [Cluster("x", 1, (0, 1)), Cluster("y", 1, (2, 3))]
    schedule = SystemSchedule(clusters)
    schedule.book("run", "x", [0, 1], 0.0, 10.0, Action.START)
    task = Task("t", 0.0, cores=2, etc={"x": 1.0, "y": 100.0})
    for heuristic in (Fcfs(), EasyBackfilling(), ConservativeBackfilling()):
        decisions = heuristic.map(MappingEvent(0.0, (task,), schedule.copy()))
        assert decisions == [Decision(Action.START, "t", "y", (2, 3), 0.0, 100.0)]
    # Ties (both idle): the first cluster in the system's order, for its ETC.
    idle = SystemSchedule(clusters)
    decisions = ConservativeBackfilling().map(MappingEvent(0.0, (task,), idle))
    assert decisions == [Decision(Action.START, "t", "x", (0, 1), 0.0, 1.0)]
    # Reservation on a heterogeneous system: earliest start over clusters.
    schedule.book("run2", "y", [2, 3], 0.0, 50.0, Action.START)
    decisions = ConservativeBackfilling().map(MappingEvent(0.0, (task,), schedule.copy()))
    assert decisions == [Decision(Action.RESERVE, "t", "x", (0, 1), 10.0, 11.0)]


def test_zero_value_drop_defaults() -> None:
    # Hard deadline 5 s after arrival, fastest ETC 10 s: zero value even if it
    # starts now. Khemka's heuristics drop it (3.1); FCFS and Random do not
    # (Machovec III.C), unless asked to.
    late = Task("late", 0.0, cores=1, etc={"c": 10.0},
                value=ValueFunction(start=5.0, final=1.0, soft_deadline=2.0, hard_deadline=5.0))
    fine = Task("fine", 0.0, cores=1, etc={"c": 4.0}, value=late.value)
    novalue = Task("novalue", 0.0, cores=1, etc={"c": 10.0})

    def event() -> MappingEvent:
        return MappingEvent(0.0, (late, fine, novalue), SystemSchedule(FOUR))

    for heuristic in (EasyBackfilling(), ConservativeBackfilling(), Fcfs(drop_zero_value=True),
                      RandomMapping(drop_zero_value=True)):
        decisions = heuristic.map(event())
        assert decisions[0] == Decision(Action.DROP, "late")
        assert [d.action for d in decisions[1:]] == [Action.START, Action.START]
    for heuristic in (Fcfs(), RandomMapping()):
        assert [d.action for d in heuristic.map(event())] == [Action.START] * 3


def test_task_that_fits_nowhere_is_dropped_and_unknown_cluster_is_an_error() -> None:
    huge = Task("huge", 0.0, cores=5, etc={"c": 1.0})
    assert Fcfs().map(MappingEvent(0.0, (huge,), SystemSchedule(FOUR))) == [
        Decision(Action.DROP, "huge")
    ]
    stray = Task("stray", 0.0, cores=1, etc={"c": 1.0, "gpu": 1.0})
    with pytest.raises(ValueError, match=r"task stray: etc names cluster\(s\) gpu"):
        ConservativeBackfilling().map(MappingEvent(0.0, (stray,), SystemSchedule(FOUR)))


def test_random_draws_a_cluster_per_task_and_takes_its_earliest_slot() -> None:
    clusters = [Cluster("x", 1, (0, 1)), Cluster("y", 2, (2, 3, 4))]
    tasks = tuple(
        Task(f"t{i}", 0.0, cores=1 + i % 2, etc={"x": 3.0 + i, "y": 5.0}) for i in range(30)
    )
    decisions = RandomMapping(seed=11).map(MappingEvent(0.0, tasks, SystemSchedule(clusters)))
    # Replaying the same draws and earliest slots by hand gives the same decisions.
    rng = random.Random(11)
    replay = SystemSchedule(clusters)
    for task, decision in zip(tasks, decisions, strict=True):
        cluster = clusters[rng.randrange(2)]
        slot = replay.earliest_slot(cluster.name, cluster.nodes_for(task.cores),
                                    task.etc[cluster.name], 0.0)
        kind = Action.START if slot.start == 0.0 else Action.RESERVE
        assert decision == Decision(kind, task.id, cluster.name, slot.nodes, slot.start, slot.end)
        replay.book(task.id, slot.cluster, slot.nodes, slot.start, slot.end, kind)
    assert {d.cluster for d in decisions} == {"x", "y"}
    assert all(d.pstate == 0 for d in decisions)
    # Same seed, same decisions; the generator state carries across events.
    again = RandomMapping(seed=11).map(MappingEvent(0.0, tasks, SystemSchedule(clusters)))
    assert again == decisions
    heuristic = RandomMapping(seed=11)
    first = heuristic.map(MappingEvent(0.0, tasks[:1], SystemSchedule(clusters)))
    second = heuristic.map(MappingEvent(0.0, tasks[:1], SystemSchedule(clusters)))
    draws = random.Random(11)
    assert [first[0].cluster, second[0].cluster] == [
        clusters[draws.randrange(2)].name, clusters[draws.randrange(2)].name
    ]
