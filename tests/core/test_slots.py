"""Earliest-slot search and its tie-breaking (Khemka et al., MIC 2015, section 3.2)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hetsched.core.decisions import Action
from hetsched.core.schedule import SystemSchedule
from hetsched.core.system import Cluster

INF = math.inf


def figure3() -> SystemSchedule:
    """Figure 3(a) of Khemka et al., rebuilt from the text of section 3.2.

    Ten nodes n1..n10 (Batsim resource ids 101..110), the mapping event at 0,
    task t needs three nodes for 10 s. Running work (S) and reservations (R):

        n1  S[0,50)
        n2  S[0,45)
        n3  S[0,15)            R[40,60)   idle slot [15,40): 25 s
        n4  S[0,12)            R[50,70)   idle slot [12,50): 38 s
        n5  S[0,20)                       idle from 20 to the end of the day
        n6  S[0,20)  R[30,60)             idle slot [20,30): exactly 10 s
        n7  S[0,35)
        n8  S[0,8)   R[16,40)             idle slot [8,16): 8 s, too short
        n9  S[0,25)
        n10 S[0,30)

    Before 20 at most two nodes (n3 from 15, n4 from 12) are idle for 10 s, so
    the earliest time three nodes are concurrently available is 20, when four
    nodes are: n3, n4, n5, n6. Putting t on [20, 30) changes the number of idle
    slots of n6 by -1 (it fills [20,30) exactly), of n5 by 0 (it starts right
    after n5's task), of n3 and n4 by +1 (it splits their slots); n3's idle slot
    (25 s) is shorter than n4's (38 s). So the choice is n6, n5, n3.
    """
    cluster = Cluster("fig3", cores_per_node=1, resource_ids=tuple(range(101, 111)))
    schedule = SystemSchedule([cluster])
    running = {1: 50, 2: 45, 3: 15, 4: 12, 5: 20, 6: 20, 7: 35, 8: 8, 9: 25, 10: 30}
    for n, end in running.items():
        schedule.book(f"run{n}", "fig3", [100 + n], 0.0, float(end), Action.START)
    for n, (start, end) in {3: (40, 60), 4: (50, 70), 6: (30, 60), 8: (16, 40)}.items():
        schedule.book(f"res{n}", "fig3", [100 + n], float(start), float(end), Action.RESERVE)
    return schedule


def test_figure3_earliest_time_and_tie_breaking() -> None:
    schedule = figure3()
    slot = schedule.earliest_slot("fig3", nb_nodes=3, duration=10.0, not_before=0.0)
    assert slot.start == 20.0
    assert slot.end == 30.0
    assert slot.nodes == (106, 105, 103)  # n6 (-1), n5 (0), n3 (+1, shorter idle slot)
    # Four nodes are available at 20, as the paper says; a fourth node would be n4.
    assert schedule.idle_count("fig3", 20.0, 10.0) == 4
    four = schedule.earliest_slot("fig3", nb_nodes=4, duration=10.0, not_before=0.0)
    assert four.start == 20.0 and four.nodes == (106, 105, 103, 104)


def test_figure3_booking_the_choice_changes_idle_slots_as_stated() -> None:
    schedule = figure3()
    before = {n: len(schedule.idle_slots("fig3", n, 0.0)) for n in (103, 104, 105, 106)}
    slot = schedule.earliest_slot("fig3", nb_nodes=3, duration=10.0, not_before=0.0)
    schedule.book("t", "fig3", slot.nodes, slot.start, slot.end, Action.RESERVE)
    after = {n: len(schedule.idle_slots("fig3", n, 0.0)) for n in (103, 104, 105, 106)}
    change = {n: after[n] - before[n] for n in before}
    assert change == {103: 1, 104: 0, 105: 0, 106: -1}  # n4 untouched
    assert schedule.idle_slots("fig3", 103, 0.0) == [(15.0, 20.0), (30.0, 40.0), (60.0, INF)]


def test_earliest_slot_backfills_a_gap_before_a_reservation() -> None:
    # Two nodes; node 0 reserved on [10, 20), node 1 idle. All slots start at 0.
    # - 5 s task: node 0's gap [0,10) -> change 0 (starts at the gap's start),
    #   size 10; node 1's slot [0,inf) -> change 0, size inf: node 0 (smaller).
    # - 10 s task: fills node 0's gap exactly, change -1: node 0.
    # - 5 s task from not_before=2: node 0's gap seen from 2 is [2,10): change 0,
    #   size 8; node 1 [2,inf): change 0, size inf: node 0.
    # - 2 nodes for 11 s: node 0's gap is too short, so both after the reservation.
    schedule = SystemSchedule([Cluster("c", 1, (0, 1))])
    schedule.book("r", "c", [0], 10.0, 20.0, Action.RESERVE)
    assert schedule.earliest_slot("c", 1, 5.0, 0.0).nodes == (0,)
    assert schedule.earliest_slot("c", 1, 10.0, 0.0).nodes == (0,)
    assert schedule.earliest_slot("c", 1, 5.0, 2.0).nodes == (0,)
    slot = schedule.earliest_slot("c", 2, 11.0, 0.0)
    assert (slot.start, slot.nodes) == (20.0, (0, 1))
    # Node 1 busy on [0, 3): a 4 s task now. Node 0: gap [0,10), change 0, size 10;
    # node 1 busy at 0, so node 0. A 4 s task from 3: node 0's gap seen from 3 is
    # [3,10), change 0, size 7; node 1's slot [3,inf) change 0, size inf: node 0.
    schedule.book("s", "c", [1], 0.0, 3.0, Action.START)
    assert schedule.earliest_slot("c", 1, 4.0, 0.0).nodes == (0,)
    assert schedule.earliest_slot("c", 1, 4.0, 3.0).nodes == (0,)
    # A 12 s task from 3: only node 1 (node 0's gap is 7 s long).
    assert schedule.earliest_slot("c", 1, 12.0, 3.0).nodes == (1,)


def test_half_open_intervals_touch_without_overlap() -> None:
    schedule = SystemSchedule([Cluster("c", 1, (0,))])
    schedule.book("a", "c", [0], 0.0, 10.0, Action.START)
    schedule.book("b", "c", [0], 10.0, 20.0, Action.RESERVE)
    schedule.book("z", "c", [0], 30.0, 40.0, Action.PLACEHOLDER)
    assert schedule.earliest_start("c", 1, 10.0, 0.0) == 20.0
    assert schedule.earliest_start("c", 1, 10.5, 0.0) == 40.0


def test_idle_slots_are_seen_from_not_before() -> None:
    # Node 0 runs until 5, node 1 is idle.
    schedule = SystemSchedule([Cluster("c", 1, (0, 1))])
    schedule.book("a", "c", [0], 0.0, 5.0, Action.START)
    # From 7 both nodes are idle up to the end of the day; seen from 7 their
    # idle slots are the same, [7, inf): change 0 for both, lowest index wins.
    assert schedule.earliest_slot("c", 1, 3.0, not_before=7.0).nodes == (0,)
    # From 3: one node now, node 1. Two nodes: at 5; node 0's slot [5,inf) is
    # adjacent (change 0), node 1's [3,inf) is split (+1): order (0, 1).
    assert schedule.earliest_slot("c", 1, 3.0, not_before=3.0).nodes == (1,)
    slot = schedule.earliest_slot("c", 2, 3.0, not_before=3.0)
    assert (slot.start, slot.nodes) == (5.0, (0, 1))
    # A 1-node task at 6 from 3 (slot_at): node 0's slot [5,inf) leaves 1 s
    # before the task, node 1's [3,inf) leaves 3 s: both +1, both infinite,
    # our third rule prefers the smaller idle time left before: node 0.
    assert schedule.slot_at("c", 1, 3.0, start=6.0, not_before=3.0).nodes == (0,)


def test_bad_requests_are_refused() -> None:
    schedule = SystemSchedule([Cluster("c", 1, (0, 1))])
    with pytest.raises(ValueError, match="cluster c has 2 node"):
        schedule.earliest_slot("c", 3, 1.0, 0.0)
    with pytest.raises(ValueError, match="duration must be > 0"):
        schedule.earliest_slot("c", 1, 0.0, 0.0)
    with pytest.raises(ValueError, match="unknown cluster 'x'"):
        schedule.earliest_slot("x", 1, 1.0, 0.0)
    schedule.book("a", "c", [0], 0.0, 5.0, Action.START)
    with pytest.raises(ValueError, match=r"only 1 node\(s\) idle"):
        schedule.slot_at("c", 2, 1.0, 0.0, 0.0)


# --------------------------------------------------------------------- brute force
def brute_force(
    timelines: list[list[tuple[float, float]]], k: int, d: float, t0: float
) -> tuple[float, list[int]]:
    """Khemka 3.2 by the definition: try every candidate time, rank idle nodes by
    (change in idle slots, idle slot size, idle time left before, index)."""

    def idle(node: int, t: float) -> bool:
        return all(e <= t or s >= t + d for s, e in timelines[node])

    candidates = sorted({t0} | {e for tl in timelines for _, e in tl if e > t0})
    start = next(t for t in candidates if sum(idle(i, t) for i in range(len(timelines))) >= k)
    keys = []
    for i, tl in enumerate(timelines):
        if not idle(i, start):
            continue
        begin = max([t0] + [e for _, e in tl if e <= start])
        end = min([INF] + [s for s, _ in tl if s >= start + d])
        delta = 1 - (begin == start) - (end == start + d)
        keys.append((delta, end - begin, start - begin, i))
    return start, [key[-1] for key in sorted(keys)[:k]]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[int, list[tuple[int, list[int], int, int, Action]]]:
    n = draw(st.integers(1, 7))
    ops = []
    for number in range(draw(st.integers(0, 14))):
        nodes = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        kind = draw(st.sampled_from([Action.START, Action.RESERVE, Action.PLACEHOLDER]))
        # Running work starts at or before the mapping events (time 0 here).
        start = draw(st.integers(-20, 0)) if kind is Action.START else draw(st.integers(0, 60))
        length = draw(st.integers(1, 30))
        ops.append((number, nodes, start, start + length, kind))
    return n, ops


@settings(max_examples=300, deadline=None)
@example(  # adding gap rows compacted the table under rows still to be read
    system=(5, [
        (0, [0], -2, -1, Action.START), (1, [0, 1, 2], 4, 5, Action.RESERVE),
        (2, [1, 2], 0, 1, Action.RESERVE), (3, [0], 0, 1, Action.START),
        (4, [0, 1, 2], 2, 3, Action.RESERVE), (5, [0], 0, 1, Action.START),
        (6, [0], 0, 1, Action.START), (7, [0], 0, 1, Action.START),
        (8, [0], 0, 1, Action.START), (9, [0, 1, 2, 3, 4], 1, 2, Action.RESERVE),
    ]),
    releases=[], k=1, d=1, t0=0,
)
@given(
    system=schedules(),
    releases=st.lists(st.integers(0, 13), max_size=6),
    k=st.integers(1, 7),
    d=st.integers(1, 40),
    t0=st.integers(0, 30),
)
def test_earliest_slot_matches_the_definition(
    system: tuple[int, list[tuple[int, list[int], int, int, Action]]],
    releases: list[int],
    k: int,
    d: int,
    t0: int,
) -> None:
    n, ops = system
    cluster = Cluster("c", 1, tuple(range(n)))
    schedule = SystemSchedule([cluster])
    timelines: list[dict[str, tuple[float, float]]] = [{} for _ in range(n)]
    for number, nodes, start, end, kind in ops:
        if any(s < end and start < e for node in nodes for s, e in timelines[node].values()):
            with pytest.raises(ValueError, match=f"task op{number}: node"):
                schedule.book(f"op{number}", "c", nodes, start, end, kind)
            continue
        schedule.book(f"op{number}", "c", nodes, start, end, kind)
        for node in nodes:
            timelines[node][f"op{number}"] = (float(start), float(end))
    for number in releases:
        if f"op{number}" in schedule:
            schedule.release(f"op{number}")
            for tl in timelines:
                tl.pop(f"op{number}", None)
    k = min(k, n)
    expected_start, expected_nodes = brute_force(
        [list(tl.values()) for tl in timelines], k, float(d), float(t0)
    )
    slot = schedule.earliest_slot("c", k, float(d), float(t0))
    assert slot.start == expected_start
    assert list(slot.nodes) == expected_nodes
    vector = schedule.earliest_starts("c", np.array([k, 1]), np.array([float(d), 1.0]), float(t0))
    assert vector[0] == expected_start
    assert vector[1] == brute_force([list(tl.values()) for tl in timelines], 1, 1.0, float(t0))[0]
    for node in range(n):  # the per-node chains hold exactly the node's bookings, sorted
        chain = [(b.start, b.end) for b in schedule.node_bookings("c", node)]
        assert chain == sorted(timelines[node].values())
    for at in (float(t0), expected_start):
        idle = [i for i in range(n) if all(e <= at or s > at for s, e in timelines[i].values())]
        assert list(schedule.idle_nodes("c", at)) == idle


def test_long_sequences_of_bookings_and_releases_stay_exact() -> None:
    """Hundreds of bookings and releases (the gap table compacts itself on the
    way) still give the brute-force answers."""
    rng = np.random.default_rng(4)
    n = 6
    schedule = SystemSchedule([Cluster("c", 1, tuple(range(n)))])
    timelines: list[dict[str, tuple[float, float]]] = [{} for _ in range(n)]
    booked: list[str] = []
    for number in range(600):
        if booked and rng.random() < 0.45:
            task = booked.pop(int(rng.integers(len(booked))))
            schedule.release(task)
            for tl in timelines:
                tl.pop(task, None)
        else:
            k = int(rng.integers(1, n + 1))
            d = float(rng.integers(1, 30))
            t0 = float(rng.integers(0, 50))
            expected = brute_force([list(tl.values()) for tl in timelines], k, d, t0)
            slot = schedule.earliest_slot("c", k, d, t0)
            assert (slot.start, list(slot.nodes)) == expected
            kind = Action.RESERVE if number % 2 else Action.PLACEHOLDER
            schedule.book(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind)
            booked.append(f"t{number}")
            for node in slot.nodes:
                timelines[node][f"t{number}"] = (slot.start, slot.end)
    for node in range(n):
        chain = [(b.start, b.end) for b in schedule.node_bookings("c", node)]
        assert chain == sorted(timelines[node].values())


def test_earliest_starts_is_earliest_start_for_each_request() -> None:
    """The search of many requests at once gives what earliest_start gives request by
    request."""
    rng = np.random.default_rng(11)
    n = 12
    schedule = _booked_at_random(
        rng, n, lambda: (float(rng.integers(0, 80)), float(rng.integers(1, 25)))
    )
    nb_nodes = rng.integers(1, n + 1, size=60)
    durations = rng.integers(1, 40, size=60).astype(float)
    for not_before in (0.0, 5.0, 30.0):
        vector = schedule.earliest_starts("c", nb_nodes, durations, not_before)
        one_by_one = [
            schedule.earliest_start("c", int(k), float(d), not_before)
            for k, d in zip(nb_nodes, durations, strict=True)
        ]
        assert vector.tolist() == one_by_one
    assert len(schedule.bookings(kind=Action.RESERVE)) > 5  # gaps to search


def test_rule_3_prefers_the_gap_that_starts_with_the_task() -> None:
    """Two finite idle slots of one length (8 s) and one change in idle slots (0: the task
    of 5 s at t = 10 starts one at its start, ends the other at its end): node 0 idle over
    [7, 15) would leave a new idle slot of 3 s before the task, node 1 idle over [10, 18)
    none. Rule 3 (the smallest new idle slot before the task) picks node 1, though rule 4
    (the lowest index) would pick node 0."""
    schedule = SystemSchedule([Cluster("c", 1, (0, 1))])
    for node, (gap_start, gap_end) in enumerate([(7.0, 15.0), (10.0, 18.0)]):
        schedule.book(f"before{node}", "c", [node], 0.0, gap_start, Action.RESERVE)
        schedule.book(f"after{node}", "c", [node], gap_end, 30.0, Action.RESERVE)
    assert schedule.slot_at("c", 1, 5.0, 10.0, 0.0).nodes == (1,)


def test_idle_counts_are_the_nodes_idle_over_each_interval() -> None:
    """``idle_counts(start, durations)``: for each duration ``d``, the nodes with no booking
    meeting ``[start, start + d)`` (the definition, node by node), as ``idle_count`` gives it
    one duration at a time; float times, some intervals ending exactly at a booking's start."""
    rng = np.random.default_rng(28)
    n = 10
    schedule = _booked_at_random(
        rng, n, lambda: (float(rng.uniform(0.0, 80.0)), float(rng.uniform(0.5, 25.0))),
        started_before=None,
    )
    bookings = [[(b.start, b.end) for b in schedule.node_bookings("c", node)]
                for node in range(n)]
    starts = [b.start for b in schedule.bookings()]
    for start in (0.0, 12.5, 40.0, *starts[:5]):
        durations = np.concatenate((rng.uniform(0.1, 60.0, size=30),
                                    [s - start for s in starts if s > start]))
        expected = [sum(all(e <= start or s >= start + d for s, e in chain) for chain in bookings)
                    for d in durations.tolist()]
        assert schedule.idle_counts("c", start, durations).tolist() == expected
        assert expected == [schedule.idle_count("c", start, d) for d in durations.tolist()]
    assert len({len(chain) for chain in bookings}) > 1  # nodes with gaps and without


def _booked_at_random(
    rng: np.random.Generator,
    n: int,
    draw: Callable[[], tuple[float, float]],
    started_before: float | None = 10.0,
) -> SystemSchedule:
    """One cluster of ``n`` nodes with up to 40 bookings of 1-3 nodes at random ``(start,
    length)`` from ``draw`` (those that fit), running (START) if they begin before
    ``started_before``, reservations otherwise."""
    schedule = SystemSchedule([Cluster("c", 1, tuple(range(n)))])
    for number in range(40):
        k = int(rng.integers(1, 4))
        start, length = draw()
        running = started_before is not None and start < started_before
        kind = Action.START if running else Action.RESERVE
        if schedule.fits("c", k, start, length):
            slot = schedule.slot_at("c", k, length, start, start)
            schedule.book(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind)
    return schedule
