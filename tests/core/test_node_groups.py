"""The run-length form of a cluster's idle time (core/node_groups.py) against the earliest
slot of Khemka et al. (MIC 2015, section 3.2) by its definition, node by node."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.decisions import Action
from hetsched.core.node_groups import NodeGroups
from hetsched.core.system import Cluster
from hetsched.core.timeline import Booking, ClusterTimeline

INF = math.inf


class PerNode:
    """The straightforward per-node reference: each node's free_from and finite gaps, read
    from ``tl``'s per-node tables (on a copy that holds every booking, those the groups hold
    alone entered), and the definitions of core/slots.py's docstring node by node."""

    def __init__(self, tl: ClusterTimeline) -> None:
        copy = tl.clone()
        copy._flush()
        self.rids = copy._rids
        self.free_from = copy._ff.tolist()
        self.gaps: list[list[tuple[float, float]]] = [[] for _ in self.free_from]
        gap_start, gap_end, gap_node = copy._gap_arrays()
        for start, end, node in zip(gap_start.tolist(), gap_end.tolist(), gap_node.tolist(),
                                    strict=True):
            if start < INF:  # a live row
                self.gaps[node].append((start, end))

    def idle(self, i: int, t: float, d: float) -> bool:
        """Node ``i`` idle over ``[t, t + d)`` (at the instant ``t`` when ``d`` is 0)."""
        if self.free_from[i] <= t:
            return True
        if d == 0.0:
            return any(start <= t < end for start, end in self.gaps[i])
        return any(start <= t and t + d <= end for start, end in self.gaps[i])

    def idle_count(self, t: float, d: float) -> int:
        return sum(self.idle(i, t, d) for i in range(len(self.free_from)))

    def earliest_start(self, k: int, d: float, t0: float) -> float:
        """The earliest ``t >= t0`` with ``k`` nodes idle over ``[t, t + d)``: some node
        becomes idle at it (``t0``, a gap's begin seen from ``t0``, a free_from)."""
        candidates = {t0, *(ff for ff in self.free_from if ff > t0)}
        candidates.update(max(start, t0) for gaps in self.gaps for start, _ in gaps)
        return next(t for t in sorted(candidates) if self.idle_count(t, d) >= k)

    def slot_nodes(self, k: int, d: float, start: float, t0: float) -> tuple[int, ...]:
        """The ``k`` nodes idle over ``[start, start + d)`` best by the rules: the change in
        the node's idle slots, the idle slot's size, the idle time left before, the index."""
        end = start + d
        keys = []
        for i, ff in enumerate(self.free_from):
            if ff <= start:
                slot = (max(ff, t0), INF)
            else:
                slot = next(((max(s, t0), e) for s, e in self.gaps[i] if s <= start
                             and end <= e), None)
                if slot is None:
                    continue
            begin, until = slot
            delta = 1 - (begin == start) - (until == end)
            keys.append((delta, until - begin, start - begin, i))
        return tuple(self.rids[[key[-1] for key in sorted(keys)[:k]]].tolist())


def _check_queries(tl: ClusterTimeline, rng: np.random.Generator, now: float) -> None:
    """Searches, counts and node choices of ``tl`` (through its groups) are those of the
    per-node reference, and so are those of groups built anew from the per-node tables."""
    reference = PerNode(tl)
    n = tl.nb_nodes
    for _ in range(6):
        k = int(rng.integers(1, n + 1))
        d = float(rng.choice([0.5, 1.0, 3.0, 7.25, 20.0, 0.75]))
        t0 = float(rng.choice([now - 2.0, now, now + 0.25, now + 5.0]))
        start = reference.earliest_start(k, d, t0)
        assert tl.earliest_start(k, d, t0) == start
        assert tl.slot_at(k, d, start, t0).nodes == reference.slot_nodes(k, d, start, t0)
        assert tl.idle_count(start, d) == reference.idle_count(start, d)
        assert tl.idle_count(t0, 0.0) == reference.idle_count(t0, 0.0)
    ks = rng.integers(1, n + 1, size=8)
    ds = rng.choice([0.5, 1.0, 3.0, 7.25, 20.0], size=8)
    assert tl.earliest_starts(ks, ds, now).tolist() == [
        reference.earliest_start(int(k), float(d), now) for k, d in zip(ks, ds, strict=True)]
    assert tl.idle_counts(now, ds).tolist() == [reference.idle_count(now, float(d)) for d in ds]
    copy = tl.clone()
    copy._flush()
    rebuilt = NodeGroups.build(copy._ff, *copy._gap_arrays())
    for k in (1, n // 2 + 1, n):
        assert rebuilt.earliest_start(k, 2.0, now) == reference.earliest_start(k, 2.0, now)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_groups_answer_as_the_per_node_tables(seed: int) -> None:
    """Random bookings (most of a cluster at once, as Max Util-PH's place-holders take it),
    releases, starts of reservations and clones: after each, every search, count and node
    choice through the groups is the per-node one, and a clone's bookings leave the
    original's answers alone."""
    rng = np.random.default_rng(seed)
    cluster = Cluster("c", 1, tuple(range(100, 124)))
    tl = ClusterTimeline(cluster)
    now = 0.0
    reserved: list[str] = []
    booked: list[str] = []
    for number in range(45):
        _check_queries(tl, rng, now)
        action = rng.random()
        if action < 0.15 and booked:
            tl.release(booked.pop(int(rng.integers(len(booked)))))
            reserved = [t for t in reserved if t in tl]
            continue
        if action < 0.25 and reserved:
            started = reserved.pop(int(rng.integers(len(reserved))))
            booking = tl.booking(started)
            if booking is not None and booking.start <= now:
                tl.start_reserved(started)
            continue
        if action < 0.35:
            original = tl
            before = original.earliest_start(24, 3.0, now)
            tl = tl.clone()
            tl.book(Booking("x", "c", (100 + int(rng.integers(24)),), now + 500.0,
                            now + 501.0, Action.PLACEHOLDER))
            assert original.earliest_start(24, 3.0, now) == before
            assert "x" in tl and "x" not in original
            tl.release("x")
            continue
        if action < 0.45:
            now += float(rng.choice([0.5, 1.0, 2.5]))
        k = int(rng.choice([1, 2, 3, 20, 21, 22, 23, 24]))
        d = float(rng.choice([1.0, 2.5, 4.0, 0.75, 10.0]))
        slot = tl.earliest_slot(k, d, now)
        if slot.start == now:
            kind = Action.START
        else:
            kind = Action.RESERVE if rng.random() < 0.5 else Action.PLACEHOLDER
        if rng.random() < 0.3:  # booked with another tuple: the groups find the nodes
            slot = type(slot)(slot.cluster, slot.start, slot.end, tuple(sorted(slot.nodes)))
        tl.book(Booking(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind))
        booked.append(f"t{number}")
        if kind is Action.RESERVE:
            reserved.append(f"t{number}")
    _check_queries(tl, rng, now)


def test_groups_follow_the_per_node_tables_through_an_overlap() -> None:
    """A booking the groups cannot place (it overlaps) is refused with the per-node
    timeline's error and leaves every answer as it was."""
    tl = ClusterTimeline(Cluster("c", 1, (0, 1, 2)))
    tl.book(Booking("a", "c", (0, 1), 0.0, 10.0, Action.START))
    assert tl.earliest_start(3, 1.0, 0.0) == 10.0
    tl.book(Booking("b", "c", (0, 1, 2), 10.0, 20.0, Action.PLACEHOLDER))
    with pytest.raises(ValueError, match=r"node 1 of c is busy during \[0.0, 10.0\)"):
        tl.book(Booking("c", "c", (1, 2), 5.0, 12.0, Action.PLACEHOLDER))
    assert tl.earliest_start(1, 1.0, 0.0) == 0.0
    assert tl.earliest_start(3, 1.0, 0.0) == 20.0
    assert [b.task_id for b in tl.bookings()] == ["a", "b"]


def test_a_gap_too_short_by_a_rounding_is_never_a_start() -> None:
    """The search offers a gap's begin only when ``end - begin >= d`` (core/slots.py): the
    gap [1.3, 2.3) is a rounding error shorter than 1 s by that test though ``1.3 + 1.0 <=
    2.3``, so a task of 1 s waits for the node's end (the rule of the earlier per-node search,
    which the schedules of the replay tests were made with)."""
    assert 2.3 - 1.3 < 1.0 and 1.3 + 1.0 <= 2.3
    tl = ClusterTimeline(Cluster("c", 1, (0,)))
    tl.book(Booking("a", "c", (0,), 0.0, 1.3, Action.PLACEHOLDER))
    tl.book(Booking("b", "c", (0,), 2.3, 5.0, Action.PLACEHOLDER))
    assert tl.earliest_start(1, 1.0, 0.0) == 5.0
    assert tl.earliest_starts(np.array([1]), np.array([1.0]), 0.0).tolist() == [5.0]
    assert tl.earliest_start(1, 0.75, 0.0) == 1.3


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_an_earlier_answer_that_still_holds_is_the_answer(seed: int) -> None:
    """Bookings only, as in the Min-Min loop of a mapping event: each request's earliest
    start searched from its answer before the last bookings (``since``) is the one searched
    anew, on times of tenths: sums that round (1.3 + 1.0), where the search's rule for a gap
    too short by a rounding (the test above) must hold for ``since`` too."""
    rng = np.random.default_rng(seed)
    cluster = Cluster("c", 1, tuple(range(16)))
    tl = ClusterTimeline(cluster)
    now = 1.0
    requests = [(int(rng.integers(1, 17)), float(rng.choice([0.3, 0.7, 1.0, 2.1, 6.5])))
                for _ in range(8)]
    known = {request: tl.earliest_start(*request, now) for request in requests}
    for number in range(30):
        k = int(rng.integers(1, 17))
        d = float(rng.choice([0.1, 0.3, 1.0, 1.3, 4.2]))
        t0 = now + float(rng.integers(0, 40)) / 10.0
        slot = tl.earliest_slot(k, d, t0)
        kind = Action.START if slot.start == now else Action.PLACEHOLDER
        tl.book(Booking(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind))
        for request, since in known.items():
            fresh = tl.earliest_start(*request, now)
            assert tl.earliest_start(*request, now, since=since) == fresh
            known[request] = fresh


def test_a_full_row_of_gaps_is_widened_and_the_booking_made() -> None:
    """Groups built without gaps have room for 4 gaps per group; the fifth, sixth and
    seventh gap of a node widen every row (the booking reported -1 and is made again), and
    each gap still is a start, as the per-node reference says."""
    tl = ClusterTimeline(Cluster("c", 1, (0, 1)))
    assert tl.earliest_start(1, 1.0, 0.0) == 0.0  # the groups exist: room for 4 gaps
    room = tl._alike().gap_start.shape[1]
    for number in range(7):  # node 0 busy over [3i + 2, 3i + 3): a gap of 2 s before each
        start = 3.0 * number + 2.0
        tl.book(Booking(f"t{number}", "c", (0,), start, start + 1.0, Action.PLACEHOLDER))
    assert tl._alike().gap_start.shape[1] > room
    reference = PerNode(tl)
    for d in (0.5, 2.0, 2.5):
        assert tl.earliest_start(2, d, 0.0) == reference.earliest_start(2, d, 0.0)
        assert tl.earliest_start(1, d, 4.0) == reference.earliest_start(1, d, 4.0)
    assert tl.idle_count(12.0, 2.0) == reference.idle_count(12.0, 2.0) == 2
