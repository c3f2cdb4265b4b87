"""FCFS, EASY, Conservative and Random (Khemka et al. sec. 3.3; Machovec et al. III.D)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import pytest

from hetsched.core.actual import ActualRunTime
from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.runner import ModelTimeRunner
from hetsched.core.schedule import SystemSchedule
from hetsched.core.state import TaskState
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.core.value import ValueFunction
from hetsched.heuristics.baselines.backfilling import ConservativeBackfilling, EasyBackfilling, Fcfs
from hetsched.heuristics.baselines.randomized import RandomMapping


def simulate(
    heuristic: Heuristic, clusters: Sequence[Cluster], tasks: Sequence[Task],
    actual: dict[str, float] | None = None,
) -> dict[str, Decision]:
    """Replay ``tasks`` through the mapping driver in model time (core/runner.py: a mapping
    event at every arrival and completion, reservations started when due). ``actual``
    gives some tasks an actual/planned run-time ratio (on every cluster). Returns each
    task's executed decision (its real start) or its DROP decision."""
    ratios = {
        task_id: ActualRunTime(task_id, {c.name: ratio for c in clusters})
        for task_id, ratio in (actual or {}).items()
    }
    outcome = {}
    for record in ModelTimeRunner(clusters, heuristic, tasks, actual=ratios).run():
        if record.state is TaskState.DROPPED:
            outcome[record.task.id] = Decision(Action.DROP, record.task.id)
        else:
            assert record.decision is not None and record.started is not None
            outcome[record.task.id] = replace(record.decision, start=record.started)
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


@pytest.mark.parametrize("textbook", [False, True])
def test_both_easy_variants_on_the_textbook_examples(textbook: bool) -> None:
    """With run times as planned the two EASY variants schedule these alike."""
    assert starts(simulate(EasyBackfilling(textbook=textbook), FOUR, EXAMPLE1)) == {
        "A": 0.0, "B": 10.0, "C": 33.0, "D": 3.0}
    assert starts(simulate(EasyBackfilling(textbook=textbook), FOUR, EXAMPLE2)) == {
        "A": 0.0, "B": 10.0, "C": 2.0, "D": 20.0}


# ------------------------------------------------- textbook EASY: shadow time, extra nodes
# Four nodes. At 0 A (2 nodes, 10 s) starts on n0, n1. At 1 arrive, in this order (Batsim's
# order at one date: by job id):
#   H (3 nodes, 10 s): the head; shadow time 10 (n0, n1 free then), 4 nodes idle at 10,
#       so 1 extra node;
#   L1 (1 node, 50 s): can start now, ends after the shadow time, 1 node <= 1 extra:
#       backfilled (no extra node left);
#   L2 (1 node, 50 s): can start now (1 node idle), ends after the shadow time and no
#       extra node is left: waits;
#   S (1 node, 5 s): ends at 6 <= 10: backfilled.
# At 6 (S ends) L2 ends after the shadow time, still no extra node: waits. At 10 A ends,
# H starts on the 3 idle nodes [10, 20); at 20 L2 starts. (Khemka's variant: H reserved
# at 10 on n0, n1 and n2; L1 fits now on n3 only, as the count says; L2 cannot start
# without overlapping H; S fits on n2 before H: the same starts.)
SHADOW = [job("A", 0, 2, 10), job("H", 1, 3, 10), job("L1", 1, 1, 50), job("L2", 1, 1, 50),
          job("S", 1, 1, 5)]


@pytest.mark.parametrize("textbook", [False, True])
def test_easy_shadow_time_and_extra_nodes(textbook: bool) -> None:
    outcome = simulate(EasyBackfilling(textbook=textbook), FOUR, SHADOW)
    assert starts(outcome) == {"A": 0.0, "H": 10.0, "L1": 1.0, "L2": 20.0, "S": 1.0}


# Where the two differ: a task that ends earlier than planned. Four nodes; at 0:
#   A (2 nodes, planned 10 s, actually 2 s) starts on n0, n1;
#   R (3 nodes, 10 s) cannot start: Khemka's EASY reserves it at 10 on n0, n1, n2 (the
#       nodes that touch A's end, then the lowest index);
#   B (1 node, 6 s) starts now on n2 (in the idle slot before R) in both variants.
# At 2 A ends early. Khemka's reservation keeps its nodes: n2 runs B until 6, so R cannot
# move up (it is not alone on free nodes); B ends on time at 6 and R starts at its
# reserved time, 10. The textbook recomputes the head at 2: n0, n1 and n3 are idle, R
# starts at 2.
EARLY = [job("A", 0, 2, 10), job("R", 0, 3, 10), job("B", 0, 1, 6)]


def test_easy_variants_differ_when_a_task_ends_early() -> None:
    khemka = simulate(EasyBackfilling(), FOUR, EARLY, actual={"A": 0.2})
    textbook = simulate(EasyBackfilling(textbook=True), FOUR, EARLY, actual={"A": 0.2})
    assert starts(khemka) == {"A": 0.0, "B": 0.0, "R": 10.0}
    assert (khemka["R"].nodes, khemka["B"].nodes) == ((0, 1, 2), (2,))
    assert starts(textbook) == {"A": 0.0, "B": 0.0, "R": 2.0}
    assert set(textbook["R"].nodes) == {0, 1, 3}


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


def test_random_draws_a_cluster_and_a_pstate_per_task_and_takes_its_earliest_slot() -> None:
    """Machovec III.D.1: a random cluster with a random P-state. Cluster x has 2 P-states
    (speeds 2 and 1 Gflop/s: P-state 1 doubles the ETC), y has 3 and the tasks give their
    ETC per P-state there (etc_pstate)."""
    x = Cluster("x", 1, (0, 1), (PState(2e9, 5.0, 10.0), PState(1e9, 2.0, 4.0)))
    y = Cluster("y", 2, (2, 3, 4), (PState(1e9, 5.0, 10.0),) * 3)
    clusters = [x, y]
    tasks = tuple(
        Task(f"t{i}", 0.0, cores=1 + i % 2, etc={"x": 3.0 + i, "y": 5.0},
             etc_pstate={"y": (5.0, 6.0, 8.0)})
        for i in range(30)
    )
    decisions = RandomMapping(seed=11).map(MappingEvent(0.0, tasks, SystemSchedule(clusters)))
    # Replaying the same draws (cluster, then P-state) and earliest slots by hand.
    rng = random.Random(11)
    replay = SystemSchedule(clusters)
    for task, decision in zip(tasks, decisions, strict=True):
        cluster = clusters[rng.randrange(2)]
        pstate = rng.randrange(len(cluster.pstates))
        seconds = ((3.0 + int(task.id[1:])) * (1, 2)[pstate] if cluster is x
                   else (5.0, 6.0, 8.0)[pstate])
        slot = replay.earliest_slot(cluster.name, cluster.nodes_for(task.cores), seconds, 0.0)
        kind = Action.START if slot.start == 0.0 else Action.RESERVE
        assert decision == Decision(kind, task.id, cluster.name, slot.nodes, slot.start,
                                    slot.end, pstate)
        replay.book(task.id, slot.cluster, slot.nodes, slot.start, slot.end, kind, pstate)
    assert {d.cluster for d in decisions} == {"x", "y"}
    assert {(d.cluster, d.pstate) for d in decisions} == {
        ("x", 0), ("x", 1), ("y", 0), ("y", 1), ("y", 2)
    }
    # Same seed, same decisions; the generator state carries across events.
    again = RandomMapping(seed=11).map(MappingEvent(0.0, tasks, SystemSchedule(clusters)))
    assert again == decisions
    heuristic = RandomMapping(seed=11)
    first = heuristic.map(MappingEvent(0.0, tasks[:1], SystemSchedule(clusters)))
    second = heuristic.map(MappingEvent(0.0, tasks[:1], SystemSchedule(clusters)))
    draws = random.Random(11)
    expected = []
    for _ in range(2):
        cluster = clusters[draws.randrange(2)]
        expected.append((cluster.name, draws.randrange(len(cluster.pstates))))
    assert [(d.cluster, d.pstate) for d in first + second] == expected


def test_random_on_a_platform_without_pstates_uses_pstate_0() -> None:
    clusters = [Cluster("x", 1, (0, 1)), Cluster("y", 2, (2, 3, 4))]
    tasks = tuple(Task(f"t{i}", 0.0, cores=1, etc={"x": 3.0, "y": 5.0}) for i in range(8))
    decisions = RandomMapping(seed=3).map(MappingEvent(0.0, tasks, SystemSchedule(clusters)))
    assert all(d.pstate == 0 for d in decisions) and {d.cluster for d in decisions} == {"x", "y"}
