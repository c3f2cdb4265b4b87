"""Maximum Value and Maximum VPR, reservations and place-holders (Khemka et al., sec. 3.3)."""

from __future__ import annotations

import pytest
from booked_schedules import book, existing_bookings
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.decisions import Action, Decision
from hetsched.core.mapping import MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster
from hetsched.core.tasks import Task
from hetsched.core.value import ValueFunction
from hetsched.heuristics.common import prepare
from hetsched.heuristics.value.maxvalue import MaxValue, MaxValuePh, MaxVpr, MaxVprPh


def flat(value: float) -> ValueFunction:
    """A value function that stays at ``value`` for the whole test."""
    return ValueFunction(start=value, final=value, soft_deadline=1e6, hard_deadline=1e6)


# Cluster a: two 4-core nodes (ids 0, 1); cluster b: one 8-core node (id 2).
AB = [Cluster("a", 4, (0, 1)), Cluster("b", 8, (2,))]
# t1: 4 cores, ETC a 10 / b 5, value 10 until 8 s, down to 2 at 20 s.
# t2: 8 cores, ETC a 4 / b 6, value 6.   t3: 2 cores, ETC a 3 / b 3, value 3.
T1 = Task("t1", 0.0, cores=4, etc={"a": 10.0, "b": 5.0},
          value=ValueFunction(start=10.0, final=2.0, soft_deadline=8.0, hard_deadline=20.0))
T2 = Task("t2", 0.0, cores=8, etc={"a": 4.0, "b": 6.0}, value=flat(6.0))
T3 = Task("t3", 0.0, cores=2, etc={"a": 3.0, "b": 3.0}, value=flat(3.0))


def event(heuristic_tasks: tuple[Task, ...], schedule: SystemSchedule | None = None,
          time: float = 0.0) -> MappingEvent:
    return MappingEvent(time, heuristic_tasks, schedule or SystemSchedule(AB))


def test_max_value_hand_computed() -> None:
    """Round 1 (empty system, now 0):
    t1 on a: 1 node, completes 10 > soft 8: 10 + (2 - 10) * 2/12 = 8.67; on b: completes 5: 10.
        best: b (10).
    t2 on a: 2 nodes, completes 4: 6; on b: completes 6: 6. Tie: earliest completion, a.
    t3 on a: completes 3: 3; on b: completes 3: 3. Full tie: cluster order, a.
    Overall best: t1 on b (value 10): start now on node 2, [0, 5).
    Round 2: t2 on a [0,4) value 6 beats t3 (3): start now on nodes 0, 1.
    Round 3: t3: a from 4 (completes 7), b from 5 (completes 8), both 3: a, reserved
    at 4; both nodes of a end at 4 (no new idle slot): the lower index, node 0.
    """
    decisions = MaxValue().map(event((T1, T2, T3)))
    assert decisions == [
        Decision(Action.START, "t1", "b", (2,), 0.0, 5.0),
        Decision(Action.START, "t2", "a", (0, 1), 0.0, 4.0),
        Decision(Action.RESERVE, "t3", "a", (0,), 4.0, 7.0),
    ]


def test_max_vpr_hand_computed() -> None:
    """VPR = value / (ETC x NC), NC = nodes x cores per node:
    t1: a 8.67 / (10 x 4) = 0.217, b 10 / (5 x 8) = 0.25 -> b, 0.25, completes 5.
    t2: a 6 / (4 x 8) = 0.1875, b 6 / (6 x 8) = 0.125 -> a.
    t3: a 3 / (3 x 4) = 0.25, b 3 / (3 x 8) = 0.125 -> a, 0.25, completes 3.
    Round 1: t1 and t3 tie at 0.25: earliest completion, t3 (3 < 5): now on node 0.
    Round 2: t1 still b (0.25) > t2 on a (0.1875, now from 3): t1 now on node 2.
    Round 3: t2 on a from 3 (completes 7, 0.1875) vs b from 5 (0.125): reserved on a at
    3; node 0 is free from 3 (adjacent, change 0), node 1 idle since 0 (+1): (0, 1).
    """
    decisions = MaxVpr().map(event((T1, T2, T3)))
    assert decisions == [
        Decision(Action.START, "t3", "a", (0,), 0.0, 3.0),
        Decision(Action.START, "t1", "b", (2,), 0.0, 5.0),
        Decision(Action.RESERVE, "t2", "a", (0, 1), 3.0, 7.0),
    ]


def test_place_holder_variant_of_the_same_event() -> None:
    # Same loop; after t1 and t2 start nothing else can start now (no idle node),
    # so the rest of the loop would only make place-holders, which the driver
    # discards: t3 gets no decision and stays mappable.
    assert MaxValuePh().map(event((T1, T2, T3))) == MaxValue().map(event((T1, T2, T3)))[:2]
    assert MaxVprPh().map(event((T1, T2, T3))) == MaxVpr().map(event((T1, T2, T3)))[:2]


def test_value_none_is_an_error_and_zero_value_tasks_are_dropped() -> None:
    with pytest.raises(ValueError, match="max-vpr: task anon has no value function"):
        MaxVpr().map(event((Task("anon", 0.0, cores=1, etc={"a": 1.0}),)))
    # Arrived at 0, hard deadline 5; now 2; fastest ETC 5 (b): completes 7 > 5.
    late = Task("late", 0.0, cores=1, etc={"a": 9.0, "b": 5.0},
                value=ValueFunction(start=4.0, final=1.0, soft_deadline=3.0, hard_deadline=5.0))
    decisions = MaxValue().map(event((late, T3), time=2.0))
    assert decisions[0] == Decision(Action.DROP, "late")
    assert decisions[1].task_id == "t3"
    # Without the drop, "late" can only earn 0 anywhere: it gets no decision (it stays
    # mappable) rather than a reservation that earns nothing.
    kept = MaxValue(drop_zero_value=False).map(event((late, T3), time=2.0))
    assert [d.task_id for d in kept] == ["t3"]


# One cluster of four 1-core nodes; R runs on nodes 0-2 until 10; node 3 is idle.
ONE = [Cluster("c", 1, (0, 1, 2, 3))]
A = Task("A", 0.0, cores=3, etc={"c": 10.0}, value=flat(5.0))
S = Task("S", 0.0, cores=1, etc={"c": 3.0}, value=flat(1.0))
B = Task("B", 5.0, cores=3, etc={"c": 10.0}, value=flat(8.0))
T = Task("T", 5.0, cores=1, etc={"c": 4.0}, value=flat(0.1))


def running(*bookings: tuple[str, tuple[int, ...], float, float, Action]) -> SystemSchedule:
    schedule = SystemSchedule(ONE)
    for task_id, nodes, start, end, kind in bookings:
        schedule.book(task_id, "c", nodes, start, end, kind)
    return schedule


def test_place_holder_is_released_and_a_later_higher_value_task_takes_its_slot() -> None:
    """Event 1 (t=0): A (value 5, 3 nodes) can only run at 10, on nodes 0-2 (adjacent to
    R): place-holder [10,20). S (value 1) starts now on node 3 [0,3).
    Event 2 (t=5, B and T arrive): A's place-holder is gone, A is mappable again.
    B (value 8) first: its earliest slot is A's old one, [10,20) on 0-2: place-holder.
    A: nodes 0-2 from 20 (adjacent to B) beat node 3 (+1): place-holder [20,30).
    T (0.1): node 3 is idle on [5, inf): starts now [5,9).
    Event 3 (t=10, R ends; T ended at 9): B (8) starts now on 0-2 (every node is idle
    from 10; lowest indices); A cannot start now: no decision.
    With reservations A keeps [10,20) and B is reserved at [20,30)."""
    ph = MaxValuePh()
    first = ph.map(MappingEvent(0.0, (A, S), running(("R", (0, 1, 2), 0, 10, Action.START))))
    assert first == [
        Decision(Action.PLACEHOLDER, "A", "c", (0, 1, 2), 10.0, 20.0),
        Decision(Action.START, "S", "c", (3,), 0.0, 3.0),
    ]
    second = ph.map(MappingEvent(5.0, (A, B, T), running(("R", (0, 1, 2), 0, 10, Action.START))))
    assert second == [
        Decision(Action.PLACEHOLDER, "B", "c", (0, 1, 2), 10.0, 20.0),
        Decision(Action.PLACEHOLDER, "A", "c", (0, 1, 2), 20.0, 30.0),
        Decision(Action.START, "T", "c", (3,), 5.0, 9.0),
    ]
    third = ph.map(MappingEvent(10.0, (A, B), running()))
    assert third == [Decision(Action.START, "B", "c", (0, 1, 2), 10.0, 20.0)]

    reserving = MaxValue()
    first = reserving.map(
        MappingEvent(0.0, (A, S), running(("R", (0, 1, 2), 0, 10, Action.START)))
    )
    assert first[0] == Decision(Action.RESERVE, "A", "c", (0, 1, 2), 10.0, 20.0)
    kept = running(("R", (0, 1, 2), 0, 10, Action.START), ("A", (0, 1, 2), 10, 20, Action.RESERVE))
    second = reserving.map(MappingEvent(5.0, (B, T), kept))
    assert second == [
        Decision(Action.RESERVE, "B", "c", (0, 1, 2), 20.0, 30.0),
        Decision(Action.START, "T", "c", (3,), 5.0, 9.0),
    ]


def test_vpr_prefers_small_resource_use_over_raw_value() -> None:
    # One idle 1-core node for 10 s before a reservation. big: value 10, 10 s -> VPR 1;
    # small: value 6, 2 s -> VPR 3. Max Value starts big; Max VPR starts small.
    schedule = running(("R", (0, 1, 2, 3), 10, 20, Action.RESERVE))
    big = Task("big", 0.0, cores=4, etc={"c": 10.0}, value=flat(10.0))
    small = Task("small", 0.0, cores=1, etc={"c": 2.0}, value=flat(6.0))
    assert MaxValue().map(MappingEvent(0.0, (small, big), schedule.copy()))[0].task_id == "big"
    assert MaxVpr().map(MappingEvent(0.0, (small, big), schedule.copy()))[0].task_id == "small"


# ------------------------------------------------------------- reference loop
def reference(heuristic: MaxValue, event: MappingEvent) -> list[Decision]:
    """The loop of Khemka 3.3 written plainly: recompute every choice every round."""
    kept, decisions = prepare(event, heuristic.drop_zero_value)
    schedule, now = event.schedule, event.time
    order = list(schedule.clusters)
    remaining = list(enumerate(kept))
    while remaining:
        best = None
        for position, (index, (task, clusters)) in enumerate(remaining):
            for cluster in clusters:
                etc = task.etc[cluster.name]
                slot = schedule.earliest_slot(cluster.name, cluster.nodes_for(task.cores),
                                              etc, now)
                value = task.value.value(task.arrival, slot.end)
                score = heuristic.score(value, etc, cluster.allocated_cores(task.cores))
                key = (-score, slot.end, index, order.index(cluster.name))
                if best is None or key < best[0]:
                    best = (key, position, task, slot)
        (negative_score, *_), position, task, slot = best
        if negative_score >= 0:
            break  # the best choice left earns nothing: no decision for the rest
        kind = Action.START if slot.start == now else (
            Action.PLACEHOLDER if heuristic.placeholders else Action.RESERVE)
        schedule.book(task.id, slot.cluster, slot.nodes, slot.start, slot.end, kind)
        decisions.append(Decision(kind, task.id, slot.cluster, slot.nodes, slot.start, slot.end))
        remaining.pop(position)
    return decisions


@st.composite
def mapping_events(draw: st.DrawFn) -> tuple[list[Cluster], list, list[Task], float]:
    sizes = draw(st.lists(st.tuples(st.integers(1, 4), st.sampled_from([1, 2, 4])),
                          min_size=1, max_size=3))
    clusters, rid = [], 0
    for j, (nodes, cores) in enumerate(sizes):
        clusters.append(Cluster(f"c{j}", cores, tuple(range(rid, rid + nodes))))
        rid += nodes
    now = float(draw(st.integers(0, 20)))
    existing = existing_bookings(draw, clusters, now, most=5)
    tasks = []
    for i in range(draw(st.integers(1, 7))):
        etc = {c.name: float(draw(st.integers(1, 25))) for c in clusters
               if draw(st.booleans()) or c is clusters[0]}
        soft = float(draw(st.integers(0, 40)))
        start_value = float(draw(st.integers(1, 9)))
        value = ValueFunction(start=start_value, final=float(draw(st.integers(0, 1))),
                              soft_deadline=soft, hard_deadline=soft + draw(st.integers(0, 40)))
        tasks.append(Task(f"t{i}", now - draw(st.integers(0, 10)),
                          cores=draw(st.integers(1, 6)), etc=etc, value=value))
    return clusters, existing, tasks, now


@settings(max_examples=250, deadline=None)
@given(case=mapping_events(),
       cls=st.sampled_from([MaxValue, MaxVpr, MaxValuePh, MaxVprPh]))
def test_lazy_loop_matches_the_plain_loop(case: tuple, cls: type[MaxValue]) -> None:
    """Reservations: identical decisions. Place-holders: the heuristic's decisions
    are the plain loop's first ones, and the plain loop's others are all place-holders
    (the heuristic stops once nothing more can start now)."""
    clusters, existing, tasks, now = case
    schedule = SystemSchedule(clusters)
    book(schedule, existing)
    heuristic = cls()
    got = heuristic.map(MappingEvent(now, tuple(tasks), schedule.copy()))
    expected = reference(heuristic, MappingEvent(now, tuple(tasks), schedule.copy()))
    if heuristic.placeholders:
        assert got == expected[: len(got)]
        assert all(d.action is Action.PLACEHOLDER for d in expected[len(got):])
    else:
        assert got == expected
