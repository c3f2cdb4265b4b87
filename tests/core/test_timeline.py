"""The cluster timeline's internals that fast paths could get wrong (hetsched.core.timeline).

The timeline's answers are checked against brute force in tests/core/test_slots.py; here the
pieces that take a shortcut on common inputs are checked against their definition on random
ones, on both sides of the shortcut.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.decisions import Action
from hetsched.core.system import Cluster
from hetsched.core.timeline import _MEMO_SIZE, Booking, ClusterTimeline

INF = math.inf

def test_slot_nodes_are_booked_as_any_equal_tuple() -> None:
    """The tuples of recent slots are converted to local nodes from a memo (by identity): a
    slot booked that way, after the memo forgot it, or as an equal new tuple, in a copy of the
    timeline or in the original, gives the same node chains, also after releases."""
    cluster = Cluster("c", 1, tuple(range(20, 40)))
    timelines = [ClusterTimeline(cluster) for _ in range(3)]
    rng = np.random.default_rng(7)
    for number in range(3 * _MEMO_SIZE):
        start = float(rng.integers(0, 100))
        length = float(rng.integers(1, 20))
        k = int(rng.integers(1, 8))
        slots = [tl.earliest_slot(k, length, start) for tl in timelines]
        assert len({slot.nodes for slot in slots}) == 1
        nodes = slots[0].nodes
        copy = timelines[0].clone()  # shares the memo
        copy.book(Booking(f"t{number}", "c", nodes, slots[0].start, slots[0].end, Action.RESERVE))
        timelines[0] = copy
        kept = slots[1].nodes if number % 2 else tuple(rng.permutation(nodes).tolist())
        timelines[1].book(Booking(f"t{number}", "c", kept, slots[1].start, slots[1].end,
                                  Action.RESERVE))
        timelines[2].book(Booking(f"t{number}", "c", tuple(list(nodes)), slots[2].start,
                                  slots[2].end, Action.RESERVE))
        if number % 3 == 2:
            gone = f"t{rng.integers(number)}"
            for tl in timelines:
                if gone in tl:
                    tl.release(gone)
    for node in cluster.resource_ids:
        chains = [[(b.task_id, b.start, b.end) for b in tl.node_bookings(node)]
                  for tl in timelines]
        assert chains[0] == chains[1] == chains[2]
        assert chains[0]  # the random bookings cover every node


def _adjacencies(tl: ClusterTimeline) -> tuple[list[tuple[float, ...]], list[tuple[float, ...]]]:
    """The live rows of the gap and touching tables, as sorted (start, end, node, prev task,
    next task): independent of row order and booking ids (the bookings the node groups
    hold alone entered first)."""
    tl._flush()

    def task(bid: int) -> str:
        return "-" if bid < 0 else tl._records[bid][0].task_id

    tables = []
    for rows in (tl._gaps, tl._touching):
        live = np.flatnonzero(rows.prev[: rows.used] != -2).tolist()
        tables.append(sorted(
            (float(rows.start[i]), float(rows.end[i]), int(rows.node[i]), task(int(rows.prev[i])),
             task(int(rows.next[i])))
            for i in live
        ))
    return tables[0], tables[1]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_start_reserved_is_release_then_book_as_running(seed: int) -> None:
    """Starting a reservation in place leaves the timeline as the release and the booking of
    its running work did: the same node chains and kinds, adjacencies, free_from, booking
    order and slots (the driver starts every due reservation this way)."""
    cluster = Cluster("c", 1, tuple(range(10, 22)))
    rng = np.random.default_rng(seed)
    in_place, rebooked = ClusterTimeline(cluster), ClusterTimeline(cluster)
    reserved: list[str] = []
    for number in range(40):
        slot = in_place.earliest_slot(int(rng.integers(1, 6)), float(rng.integers(1, 20)),
                                      float(rng.integers(0, 60)))
        kind = (Action.RESERVE, Action.RESERVE, Action.PLACEHOLDER, Action.START)[number % 4]
        booking = Booking(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind)
        for tl in (in_place, rebooked):
            tl.book(booking)
        if kind is Action.RESERVE:
            reserved.append(booking.task_id)
        if rng.random() < 0.3 and reserved:
            started = reserved.pop(int(rng.integers(len(reserved))))
            in_place.start_reserved(started)
            old = rebooked.release(started)
            rebooked.book(Booking(started, "c", old.nodes, old.start, old.end, Action.START))
        if rng.random() < 0.2:
            gone = f"t{rng.integers(number + 1)}"
            if gone in in_place:
                in_place.release(gone)
                rebooked.release(gone)
                if gone in reserved:
                    reserved.remove(gone)
        assert _adjacencies(in_place) == _adjacencies(rebooked)
        assert list(in_place.bookings()) == list(rebooked.bookings())
        assert in_place.free_from() == rebooked.free_from()
        for node in cluster.resource_ids:
            assert in_place.node_bookings(node) == rebooked.node_bookings(node)
        for k, length, after in ((1, 5.0, 0.0), (3, 2.0, 10.0), (6, 8.0, 4.0)):
            assert in_place.earliest_slot(k, length, after) == rebooked.earliest_slot(
                k, length, after
            )


def test_start_reserved_of_no_booking_names_the_task() -> None:
    tl = ClusterTimeline(Cluster("c", 1, (0, 1)))
    try:
        tl.start_reserved("ghost")
    except ValueError as error:
        assert "ghost" in str(error) and "c" in str(error)
    else:
        raise AssertionError("no error")


class _GeneralRelease(ClusterTimeline):
    """A timeline that releases one-node bookings through the general, per-node-array path."""

    def _release_node(self, bid: int, nodes: np.ndarray) -> None:
        self._release_nodes(bid, nodes)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_one_node_release_is_the_general_release(seed: int) -> None:
    """Releasing a booking that holds one node on scalars leaves the timeline as the general
    release does: the same adjacencies (gaps before, between and after bookings; touching
    ones), node chains, free_from and slots, with one- and many-node bookings of every kind
    mixed and released in random order."""
    cluster = Cluster("c", 1, tuple(range(10, 18)))
    rng = np.random.default_rng(seed)
    scalar, general = ClusterTimeline(cluster), _GeneralRelease(cluster)
    booked: list[str] = []
    for number in range(50):
        nb_nodes = 1 if rng.random() < 0.6 else int(rng.integers(2, 5))
        start = float(rng.integers(0, 40))
        slot = scalar.earliest_slot(nb_nodes, float(rng.integers(1, 12)), start)
        kind = (Action.RESERVE, Action.START, Action.PLACEHOLDER)[number % 3]
        booking = Booking(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind)
        for tl in (scalar, general):
            tl.book(booking)
        booked.append(booking.task_id)
        while booked and rng.random() < 0.4:
            gone = booked.pop(int(rng.integers(len(booked))))
            assert scalar.release(gone) == general.release(gone)
        assert _adjacencies(scalar) == _adjacencies(general)
        assert scalar.free_from() == general.free_from()
        for node in cluster.resource_ids:
            assert scalar.node_bookings(node) == general.node_bookings(node)
        assert scalar.earliest_slot(2, 5.0, 3.0) == general.earliest_slot(2, 5.0, 3.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_book_slot_is_slot_at_then_book(seed: int) -> None:
    """Choosing and booking a slot in one step (the Min-Min loop's way) books the nodes
    slot_at chooses, and leaves the timeline as slot_at then book did: the same bookings,
    node chains, adjacencies and later slots, with running work, reservations and
    place-holders mixed, before and after the bookings the node groups hold are flushed."""
    cluster = Cluster("c", 1, tuple(range(30, 44)))
    rng = np.random.default_rng(seed)
    one_step, two_steps = ClusterTimeline(cluster), ClusterTimeline(cluster)
    for number in range(40):
        k, length = int(rng.integers(1, 7)), float(rng.integers(1, 20))
        after = float(rng.integers(0, 60))
        start = two_steps.earliest_start(k, length, after)
        assert one_step.earliest_start(k, length, after) == start
        kind = (Action.RESERVE, Action.PLACEHOLDER, Action.START)[number % 3]
        if kind is Action.START:
            after = start  # running work starts at its search's time
        slot = two_steps.slot_at(k, length, start, after)
        two_steps.book(Booking(f"t{number}", "c", slot.nodes, slot.start, slot.end, kind, 1))
        nodes = one_step.book_slot(f"t{number}", k, length, start, after, kind, 1)
        assert nodes == slot.nodes
        assert one_step.booking(f"t{number}") == two_steps.booking(f"t{number}")
        if number % 10 == 9:
            assert _adjacencies(one_step) == _adjacencies(two_steps)
            for node in cluster.resource_ids:
                assert one_step.node_bookings(node) == two_steps.node_bookings(node)
    assert list(one_step.bookings()) == list(two_steps.bookings())


def test_book_slot_refuses_a_task_booked_or_too_few_idle_nodes() -> None:
    tl = ClusterTimeline(Cluster("c", 1, (0, 1, 2)))
    assert tl.book_slot("a", 2, 10.0, 0.0, 0.0, Action.START) == (0, 1)
    for task, nodes, message in (("a", 1, "already booked"), ("b", 2, "only 1 node")):
        try:
            tl.book_slot(task, nodes, 5.0, 0.0, 0.0, Action.RESERVE)
        except ValueError as error:
            assert message in str(error)
        else:
            raise AssertionError(f"{task}: no error")
