"""The run-length form of a cluster's idle time (core/node_groups.py) against the per-node
search of Khemka et al. (MIC 2015, section 3.2) in core/slots.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core import slots
from hetsched.core.decisions import Action
from hetsched.core.node_groups import NodeGroups
from hetsched.core.system import Cluster
from hetsched.core.timeline import Booking, ClusterTimeline

INF = math.inf


def _per_node(tl: ClusterTimeline) -> tuple[np.ndarray, ...]:
    """free_from, its sorted copy and the gap table of ``tl``'s per-node tables, on a copy
    that holds every booking (those the groups hold alone entered)."""
    copy = tl.clone()
    copy._flush()
    return (copy._ff.copy(), copy._sff.copy(), *(a.copy() for a in copy._gap_arrays()))


def _check_queries(tl: ClusterTimeline, rng: np.random.Generator, now: float) -> None:
    """Searches, counts and node choices of ``tl`` (through its groups) are those of the
    per-node functions on its per-node tables."""
    ff, sff, gap_start, gap_end, gap_node = _per_node(tl)
    n = tl.nb_nodes
    for _ in range(6):
        k = int(rng.integers(1, n + 1))
        d = float(rng.choice([0.5, 1.0, 3.0, 7.25, 20.0, 0.1 + 0.2]))
        t0 = float(rng.choice([now - 2.0, now, now + 0.3, now + 5.0]))
        start = slots.earliest_start(sff, gap_start, gap_end, k, d, t0)
        assert tl.earliest_start(k, d, t0) == start
        expected = slots.select_nodes(ff, sff, gap_start, gap_end, gap_node, k, d, start, t0)
        assert tl.slot_at(k, d, start, t0).nodes == tuple(tl._rids[expected].tolist())
        assert tl.idle_count(start, d) == slots.idle_count(sff, gap_start, gap_end, start, d)
        assert tl.idle_count(t0, 0.0) == slots.idle_count(sff, gap_start, gap_end, t0, 0.0)
    ks = rng.integers(1, n + 1, size=8)
    ds = rng.choice([0.5, 1.0, 3.0, 7.25, 20.0], size=8)
    assert tl.earliest_starts(ks, ds, now).tolist() == slots.earliest_starts(
        sff, gap_start, gap_end, ks, ds, now).tolist()
    assert tl.idle_counts(now, ds).tolist() == slots.idle_counts(
        sff, gap_start, gap_end, now, ds).tolist()
    rebuilt = NodeGroups.build(ff, gap_start, gap_end, gap_node)
    for k in (1, n // 2 + 1, n):
        assert rebuilt.earliest_start(k, 2.0, now) == slots.earliest_start(
            sff, gap_start, gap_end, k, 2.0, now)


@settings(max_examples=40, deadline=None)
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
            before = _per_node(original)
            tl = tl.clone()
            tl.book(Booking("x", "c", (100 + int(rng.integers(24)),), now + 500.0,
                            now + 501.0, Action.PLACEHOLDER))
            after = _per_node(original)
            assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
            tl.release("x")
            continue
        if action < 0.45:
            now += float(rng.choice([0.5, 1.0, 2.5]))
        k = int(rng.choice([1, 2, 3, 20, 21, 22, 23, 24]))
        d = float(rng.choice([1.0, 2.5, 4.0, 0.1 + 0.2, 10.0]))
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
